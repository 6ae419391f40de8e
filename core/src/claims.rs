//! Claims: a lease on a key of a chain that at most one holder has at any
//! instant, with a fencing token that grows with every new acquisition.
//!
//! Every change is a thought of the chain (a *claim record*), so the
//! history is hashed, signed by the chain, replayed on open, and travels in
//! backups, proofs and sync; the current holders are derived from those
//! thoughts ([`ClaimTable`], kept up like the other derived indices). The
//! rules live here, as pure functions of the table and a time:
//!
//! - a key is *held* at time `t` by the holder of its last acquisition or
//!   renewal when `t` is before that record's deadline (its timestamp plus
//!   its `ttl_ms`) and no release followed; past the deadline it is free,
//!   and nothing needs to be written for that;
//! - an acquisition of a free key takes the next fencing token (one more
//!   than the key's last); the holder asking again refreshes its deadline
//!   and keeps its token; another holder is refused;
//! - only the holder renews or releases;
//! - an append carrying `fencing: {key, token}` is stored only while that
//!   token's holder holds the key and is the agent writing (a paused holder
//!   whose lease ran out is refused, whatever it believes);
//! - the table applies only records that hold where they stand, and a
//!   claim record cannot be forgotten (its token would be handed out again).
//!
//! Time is the engine's: never running backwards (`MentisDb::now_millis`),
//! and a chain's timestamps never decrease (an append re-based after a later
//! one takes its time).
//!
//! A record is checked against the table at the time it is stamped with,
//! when it is first prepared and again whenever its append is re-based
//! onto other daemons' appends ([`check`]): on a shared store the one
//! append that wins decides, and a loser re-decides on the new state.
//!
//! The thought's form (so existing hashes never change): type
//! `ActionTaken`, role `Audit`, agent [`COORDINATOR`], the tag
//! [`CLAIM_TAG`], and content one JSON object `{"claim": op, "key",
//! "holder", "fencing_token", "ttl_ms", "metadata"}`. A fenced append
//! carries the tag `mentisdb:fence:<token>:<key>`. Tags under
//! [`RESERVED_TAG_PREFIX`] are written only by the engine itself.

use crate::derived::Derive;
use crate::thought::Thought;
use serde_json::{json, Value};
use std::collections::BTreeMap;

pub use crate::thought::{CLAIM_TAG, COORDINATOR, RESERVED_TAG_PREFIX};
/// The tag prefix of a fenced append: `mentisdb:fence:<token>:<key>`.
const FENCE_TAG_PREFIX: &str = "mentisdb:fence:";
/// Shortest lease.
pub const MIN_TTL_MS: u64 = 1_000;
/// Longest lease (a day).
pub const MAX_TTL_MS: u64 = 86_400_000;
/// Largest `metadata`, as JSON text.
pub const MAX_METADATA_BYTES: usize = 4_096;

/// What a claim record does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimOp {
    /// A free key taken, with the next token.
    Acquire,
    /// The holder's deadline moved (same token).
    Renew,
    /// The holder let go.
    Release,
}

impl ClaimOp {
    fn as_str(self) -> &'static str {
        match self {
            ClaimOp::Acquire => "acquire",
            ClaimOp::Renew => "renew",
            ClaimOp::Release => "release",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "acquire" => ClaimOp::Acquire,
            "renew" => ClaimOp::Renew,
            "release" => ClaimOp::Release,
            _ => return None,
        })
    }
}

/// One claim record: what a claim thought's content says.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimRecord {
    /// What it does.
    pub op: ClaimOp,
    /// The key.
    pub key: String,
    /// Who holds (or held) it.
    pub holder: String,
    /// The fencing token of the lease.
    pub fencing_token: u64,
    /// The lease from the record's timestamp (0 for a release).
    pub ttl_ms: u64,
    /// What the holder said about its claim, if anything.
    pub metadata: Option<Value>,
}

impl ClaimRecord {
    /// The record as a claim thought's content (one JSON object, keys in a fixed order).
    pub fn content(&self) -> String {
        json!({"claim": self.op.as_str(), "key": self.key, "holder": self.holder, "fencing_token": self.fencing_token, "ttl_ms": self.ttl_ms, "metadata": self.metadata}).to_string()
    }

    /// The record a thought carries, if it is a claim record.
    pub fn of(t: &Thought) -> Option<ClaimRecord> {
        if !t.is_claim_record() {
            return None;
        }
        let v: Value = serde_json::from_str(&t.content).ok()?;
        Some(ClaimRecord {
            op: ClaimOp::parse(v.get("claim")?.as_str()?)?,
            key: v.get("key")?.as_str()?.to_string(),
            holder: v.get("holder")?.as_str()?.to_string(),
            fencing_token: v.get("fencing_token")?.as_u64()?,
            ttl_ms: v.get("ttl_ms")?.as_u64()?,
            metadata: v.get("metadata").filter(|m| !m.is_null()).cloned(),
        })
    }
}

/// A lease: who holds a key, with which token, until when.
#[derive(Debug, Clone, PartialEq)]
pub struct Lease {
    /// The key.
    pub key: String,
    /// Who holds it.
    pub holder: String,
    /// Its fencing token.
    pub fencing_token: u64,
    /// When this holder acquired it (epoch ms).
    pub acquired_at_ms: i64,
    /// When it ends unless renewed (epoch ms).
    pub expires_at_ms: i64,
    /// What the holder said about it.
    pub metadata: Option<Value>,
}

impl Lease {
    fn held_at(&self, at_ms: i64) -> bool {
        at_ms < self.expires_at_ms
    }
}

#[derive(Debug, Clone, Default)]
struct KeyState {
    last_token: u64,
    lease: Option<Lease>,
}

/// Every key's last fencing token and lease, derived from a chain's claim records.
#[derive(Debug, Default)]
pub struct ClaimTable {
    indexed: usize,
    keys: BTreeMap<String, KeyState>,
}

impl Derive for ClaimTable {
    fn indexed(&self) -> usize {
        self.indexed
    }

    fn add(&mut self, t: &Thought) {
        self.indexed += 1;
        let Some(r) = ClaimRecord::of(t) else { return };
        let Some(at) = t.parsed_timestamp_ms() else { return };
        // Only records whose decision held when they were written count:
        // the engine wrote every valid one; one that does not hold (an
        // imported chain's, a pre-claims thought that looks like one) is
        // text, here as on every other engine replaying the chain.
        if !check(self, &r, at) {
            return;
        }
        let state = self.keys.entry(r.key.clone()).or_default();
        match r.op {
            ClaimOp::Acquire => {
                state.last_token = state.last_token.max(r.fencing_token);
                state.lease = Some(Lease { key: r.key, holder: r.holder, fencing_token: r.fencing_token, acquired_at_ms: at, expires_at_ms: at.saturating_add(r.ttl_ms as i64), metadata: r.metadata });
            }
            ClaimOp::Renew => {
                if let Some(lease) = state.lease.as_mut() {
                    lease.expires_at_ms = at.saturating_add(r.ttl_ms as i64);
                    if r.metadata.is_some() {
                        lease.metadata = r.metadata;
                    }
                }
            }
            ClaimOp::Release => state.lease = None,
        }
    }
}

impl ClaimTable {
    /// Who holds `key` at `at_ms`, if anyone.
    pub fn holder(&self, key: &str, at_ms: i64) -> Option<&Lease> {
        self.keys.get(key)?.lease.as_ref().filter(|l| l.held_at(at_ms))
    }

    /// The leases held at `at_ms` whose key starts with `prefix`, by key.
    pub fn held(&self, prefix: &str, at_ms: i64) -> Vec<&Lease> {
        self.keys.range(prefix.to_string()..).take_while(|(k, _)| k.starts_with(prefix)).filter_map(|(_, s)| s.lease.as_ref().filter(|l| l.held_at(at_ms))).collect()
    }

    /// The leases whose deadline fell in `from_ms..to_ms` with no release
    /// or renewal past it: the keys that came free then, by key.
    pub fn expired_between(&self, from_ms: i64, to_ms: i64) -> Vec<&Lease> {
        self.keys.values().filter_map(|s| s.lease.as_ref().filter(|l| (from_ms..to_ms).contains(&l.expires_at_ms))).collect()
    }

    fn next_token(&self, key: &str) -> u64 {
        self.keys.get(key).map_or(0, |s| s.last_token).saturating_add(1)
    }

    fn last_token(&self, key: &str) -> u64 {
        self.keys.get(key).map_or(0, |s| s.last_token)
    }
}

/// What a claim request comes to, decided on a table at a time.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Write this record.
    Write(ClaimRecord),
    /// Nothing to write: the key is someone else's (or not held, for a
    /// renewal or release): the lease in the way, if any.
    Refused {
        /// `held` (acquire), `not_held` or `wrong_holder` (renew, release).
        reason: &'static str,
        /// The lease in the way, if any.
        lease: Option<Lease>,
    },
}

/// `holder` asks for `key` for `ttl_ms` at `at_ms`: an acquisition of a
/// free key, a refresh of its own lease, or a refusal naming the holder.
pub fn decide_acquire(table: &ClaimTable, key: &str, holder: &str, ttl_ms: u64, metadata: Option<Value>, at_ms: i64) -> Decision {
    match table.holder(key, at_ms) {
        // Its holder asking again: a refresh, with what it says now (if anything).
        Some(l) if l.holder == holder => Decision::Write(ClaimRecord { op: ClaimOp::Renew, key: key.into(), holder: holder.into(), fencing_token: l.fencing_token, ttl_ms, metadata }),
        Some(l) => Decision::Refused { reason: "held", lease: Some(l.clone()) },
        None => Decision::Write(ClaimRecord { op: ClaimOp::Acquire, key: key.into(), holder: holder.into(), fencing_token: table.next_token(key), ttl_ms, metadata }),
    }
}

/// `holder` renews (`ttl_ms` > 0) or releases (`None`) its lease on `key` at `at_ms`.
pub fn decide_holder_change(table: &ClaimTable, key: &str, holder: &str, ttl_ms: Option<u64>, at_ms: i64) -> Decision {
    match table.holder(key, at_ms) {
        None => Decision::Refused { reason: "not_held", lease: None },
        Some(l) if l.holder != holder => Decision::Refused { reason: "wrong_holder", lease: Some(l.clone()) },
        Some(l) => Decision::Write(ClaimRecord {
            op: if ttl_ms.is_some() { ClaimOp::Renew } else { ClaimOp::Release },
            key: key.into(),
            holder: holder.into(),
            fencing_token: l.fencing_token,
            ttl_ms: ttl_ms.unwrap_or(0),
            metadata: None,
        }),
    }
}

/// Whether `record`, stamped `at_ms`, may be written on `table`: the
/// decision it came from still holds. Checked whenever the record is
/// prepared or re-based.
pub fn check(table: &ClaimTable, record: &ClaimRecord, at_ms: i64) -> bool {
    let lease = table.holder(&record.key, at_ms);
    match record.op {
        ClaimOp::Acquire => lease.is_none() && record.fencing_token == table.next_token(&record.key) && record.ttl_ms <= MAX_TTL_MS && table.last_token(&record.key) < u64::MAX,
        ClaimOp::Renew => record.ttl_ms <= MAX_TTL_MS && lease.is_some_and(|l| l.holder == record.holder && l.fencing_token == record.fencing_token),
        ClaimOp::Release => lease.is_some_and(|l| l.holder == record.holder && l.fencing_token == record.fencing_token),
    }
}

/// The tag a fenced append carries.
pub fn fence_tag(key: &str, token: u64) -> String {
    format!("{FENCE_TAG_PREFIX}{token}:{key}")
}

/// The `(key, token)` of a fence tag.
pub fn parse_fence_tag(tag: &str) -> Option<(&str, u64)> {
    let (token, key) = tag.strip_prefix(FENCE_TAG_PREFIX)?.split_once(':')?;
    Some((key, token.parse().ok()?))
}

/// Whether `agent_id`'s append fenced with `token` on `key` may be stored
/// at `at_ms`: that token's holder holds the key then, and is the agent
/// writing. The refusal says who holds it.
pub fn check_fence(table: &ClaimTable, key: &str, token: u64, agent_id: &str, at_ms: i64) -> Result<(), String> {
    match table.holder(key, at_ms) {
        Some(l) if l.fencing_token == token && l.holder == agent_id => Ok(()),
        Some(l) if l.fencing_token == token => Err(format!("fencing token {token} of '{key}' is '{}''s, not '{agent_id}''s: a fenced append is written by the holder", l.holder)),
        Some(l) => Err(format!("fencing token {token} of '{key}' is stale: '{}' holds it with token {}", l.holder, l.fencing_token)),
        None => Err(format!("fencing token {token} of '{key}' is stale: nobody holds the key now")),
    }
}

