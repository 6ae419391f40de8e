//! Chains loaded on first use and parked when unused, under a memory budget
//! ([`DbConfig::max_resident_bytes`](super::DbConfig)).
//!
//! Contract: every chain stays served whether it is resident or parked; a
//! parked chain is loaded (read, decoded and verified, as at open) by the
//! first call that needs its thoughts, and answers `mentisdb_list_chains`,
//! its length and its storage location from a small summary without
//! loading. When the estimated size of the resident chains passes the
//! budget (checked after a chain is loaded or created and every
//! [`CHECK_EVERY`] appends), the least recently used chains that no call is
//! using are parked until it fits; the chain just used never is. A chain in
//! use is never parked: eviction takes the chain table's write lock and
//! parks only slots nobody else holds, so a caller can never write through
//! a slot that is no longer the served one.
//!
//! The budget is an estimate, not a measurement: a resident chain counts
//! as twice its stored bytes (the decoded thoughts and their search
//! indices) plus 1 KiB a thought (lookups, Merkle nodes, per-thought
//! structures): about 1.8 KB a thought of ~390 stored bytes, against 1.2 KB
//! measured in `mentisdbd` (jemalloc) and 1.7 KB with glibc's allocator
//! (docs/performance.md, the memory row), so a budget errs on the side of
//! parking. One chain larger than the budget still loads.

use super::{read_lock, write_lock, ChainSlot, MentisDb};
use crate::record::ChainFormat;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// Appends between two budget checks.
const CHECK_EVERY: u64 = 64;

/// What a parked chain answers without being loaded.
#[derive(Debug, Clone)]
pub(super) struct Parked {
    pub(super) object: String,
    pub(super) format: ChainFormat,
    pub(super) thought_count: u64,
    pub(super) agent_count: u64,
}

/// The parked chains and the clock of uses.
#[derive(Debug, Default)]
pub(super) struct Residency {
    pub(super) parked: RwLock<BTreeMap<String, Parked>>,
    ticks: AtomicU64,
    appends: AtomicU64,
}

/// How many resident and parked chains there are, and the resident estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResidencyReport {
    /// Chains in memory.
    pub resident_chains: usize,
    /// Chains served from storage on their next use.
    pub parked_chains: usize,
    /// Estimated bytes of the resident chains (see `db/residency.rs`).
    pub resident_bytes: u64,
    /// The budget, when one is set.
    pub budget_bytes: Option<u64>,
}

/// Estimated resident bytes of a chain stored in `byte_len` bytes holding `thoughts` thoughts.
pub(super) fn estimate(byte_len: u64, thoughts: usize) -> u64 {
    2 * byte_len + 1024 * thoughts as u64
}

impl MentisDb {
    /// Marks `slot` as used now.
    pub(super) fn touch(&self, slot: &ChainSlot) {
        slot.last_used.store(self.residency.ticks.fetch_add(1, Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    /// After an append: checks the budget every [`CHECK_EVERY`] appends (chains grow).
    pub(super) fn appended_to(&self, key: &str) {
        if self.config.max_resident_bytes.is_some() && self.residency.appends.fetch_add(1, Ordering::Relaxed) % CHECK_EVERY == CHECK_EVERY - 1 {
            self.enforce_budget(key);
        }
    }

    /// Parks least recently used chains nobody is using until the resident
    /// estimate fits the budget; `keep` stays resident.
    pub(super) fn enforce_budget(&self, keep: &str) {
        let Some(budget) = self.config.max_resident_bytes else { return };
        let mut chains = write_lock(&self.chains);
        // A slot whose state is locked right now is in use: count it, skip it.
        let mut candidates: Vec<(u64, String, u64)> = Vec::with_capacity(chains.len());
        let mut total = 0u64;
        for (key, slot) in chains.iter() {
            let size = slot.state.try_read().map(|st| estimate(st.byte_len, st.chain.len())).unwrap_or(0);
            total += size;
            candidates.push((slot.last_used.load(Ordering::Relaxed), key.clone(), size));
        }
        if total <= budget {
            return;
        }
        crate::sorting::sort(&mut candidates);
        let mut parked = write_lock(&self.residency.parked);
        for (_, key, size) in candidates {
            if total <= budget {
                break;
            }
            let Some(slot) = chains.get(&key) else { continue };
            // Only this table holds it: nobody can be reading or writing through it.
            if key == keep || Arc::strong_count(slot) > 1 {
                continue;
            }
            let summary = {
                let st = read_lock(&slot.state);
                if st.deleted {
                    continue;
                }
                Parked { object: slot.object.clone(), format: st.chain.format(), thought_count: st.chain.len() as u64, agent_count: st.chain.agents().len() as u64 }
            };
            parked.insert(key.clone(), summary);
            chains.remove(&key);
            self.unloads.fetch_add(1, Ordering::SeqCst);
            total -= size;
        }
    }

    /// The summary of chain `key` when it is parked.
    pub(super) fn parked(&self, key: &str) -> Option<Parked> {
        read_lock(&self.residency.parked).get(key).cloned()
    }

    /// How many chains are resident and parked, and the resident estimate.
    pub fn residency(&self) -> ResidencyReport {
        let chains = read_lock(&self.chains);
        let resident_bytes = chains.values().map(|slot| slot.state.try_read().map(|st| estimate(st.byte_len, st.chain.len())).unwrap_or(0)).sum();
        ResidencyReport { resident_chains: chains.len(), parked_chains: read_lock(&self.residency.parked).len(), resident_bytes, budget_bytes: self.config.max_resident_bytes }
    }

    /// Whether chain `key` is in memory now (a parked or unknown chain is not).
    pub fn is_resident(&self, key: &str) -> bool {
        read_lock(&self.chains).contains_key(key)
    }

    /// Chain `key`'s length without loading it: `None` when it is not served.
    pub fn known_len(&self, key: &str) -> Option<u64> {
        // The chain table's lock is released before the chain's is taken.
        let slot = read_lock(&self.chains).get(key).cloned();
        match slot {
            Some(slot) => Some(read_lock(&slot.state).chain.len() as u64),
            None => self.parked(key).map(|p| p.thought_count),
        }
    }
}
