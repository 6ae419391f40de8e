//! Which thoughts later thoughts retire: the index behind
//! [`crate::chain::visibility`], kept by each chain and caught up on first use.

use crate::derived::Derive;
use crate::thought::Thought;
use std::collections::BTreeMap;

/// The thoughts that retire each thought, built from the chain in order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Retirements {
    /// Thoughts indexed so far.
    indexed: usize,
    /// Retired thought -> the thoughts retiring it, oldest first.
    retired_by: BTreeMap<u32, Vec<u32>>,
}

impl Derive for Retirements {
    fn indexed(&self) -> usize {
        self.indexed
    }

    fn add(&mut self, t: &Thought) {
        let doc = self.indexed as u32;
        for rel in t.relations() {
            // Relations into other chains carry no index and retire nothing here.
            let Some(to) = rel.target_index.filter(|i| rel.chain_key.is_none() && *i < doc as u64) else { continue };
            if rel.kind.retires_target() {
                let by = self.retired_by.entry(to as u32).or_default();
                if by.last() != Some(&doc) {
                    by.push(doc);
                }
            }
        }
        self.indexed += 1;
    }
}

impl Retirements {
    /// The thoughts that retire thought `doc`, oldest first (empty for most).
    pub(crate) fn retired_by(&self, doc: u32) -> &[u32] {
        self.retired_by.get(&doc).map(Vec::as_slice).unwrap_or(&[])
    }
}

