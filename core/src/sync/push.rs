//! Thoughts written offline, as `mentisdb_append_batch` items. Each keeps
//! its id (so a retried push is a replay, never a duplicate) and every
//! signed field; indices it names are mapped to where the daemon stored the
//! thoughts they pointed at.

use crate::thought::Thought;
use serde_json::{json, Value};

/// Where the daemon stored the pending thoughts pushed so far: local index ->
/// daemon index. Indices below `keep` are shared history and stay as they are.
#[derive(Debug, Default)]
pub(super) struct Moves {
    pub(super) keep: u64,
    /// `(local, daemon)` pairs sorted by local index (pushes go in local
    /// order, so each is appended; a sorted list rather than a map keeps a
    /// `BTreeMap<u64, u64>` out of the browser's module).
    moved: Vec<(u64, u64)>,
}

impl Moves {
    /// No pushes yet; indices below `keep` stay as they are.
    pub(super) fn keeping(keep: u64) -> Self {
        Moves { keep, moved: Vec::new() }
    }

    /// The daemon's index for local index `i`, or `None` when `i` was a
    /// pending thought that was not pushed (forgotten here).
    pub(super) fn map(&self, i: u64) -> Option<u64> {
        if i < self.keep {
            Some(i)
        } else {
            self.moved.binary_search_by_key(&i, |m| m.0).ok().map(|at| self.moved[at].1)
        }
    }

    /// Records that local thought `local` is the daemon's thought `daemon`.
    pub(super) fn record(&mut self, local: u64, daemon: u64) {
        match self.moved.binary_search_by_key(&local, |m| m.0) {
            Ok(at) => self.moved[at].1 = daemon,
            Err(at) => self.moved.insert(at, (local, daemon)),
        }
    }

    /// One past the highest daemon index a push was acknowledged at (0 when none was).
    pub(super) fn acknowledged(&self) -> u64 {
        self.moved.iter().map(|m| m.1).max().map_or(0, |i| i + 1)
    }

    /// Whether `t` names a pending thought whose daemon index is not known yet.
    pub(super) fn waits_for_unpushed(&self, t: &Thought, unpushed_from: u64) -> bool {
        let pending = |i: u64| i >= unpushed_from;
        t.refs().iter().any(|r| pending(*r)) || t.relations().iter().any(|r| r.chain_key.is_none() && r.target_index.is_some_and(pending))
    }
}

/// Whether `t` is not pushed: a claim record, or a signed thought fenced by
/// one (see [`super::SyncReport::skipped_claims`]).
pub(super) fn stays_local(t: &Thought) -> bool {
    let fenced = t.tags.iter().any(|tag| crate::claims::parse_fence_tag(tag).is_some());
    crate::claims::ClaimRecord::of(t).is_some() || (fenced && t.thought_signature().is_some())
}

/// `t` as one item of `mentisdb_append_batch`: every field its writer chose
/// ([`Thought::as_written`]) under its own id (`thought_id`), with its refs
/// and relations mapped to the daemon's indices (relations by target id
/// alone) and without a fence tag (the lease it names is the replica's).
pub(super) fn push_item(t: &Thought, moves: &Moves) -> Value {
    let tags: Vec<&crate::Label> = t.tags.iter().filter(|tag| crate::claims::parse_fence_tag(tag).is_none()).collect();
    let refs: Vec<u64> = t.refs().iter().filter_map(|r| moves.map(*r)).collect();
    let relations: Vec<Value> = t
        .relations()
        .iter()
        .filter(|r| r.chain_key.is_some() || r.target_index.is_none_or(|i| moves.map(i).is_some()))
        .map(|r| json!({"kind": r.kind, "target_id": r.target_id, "chain_key": r.chain_key}))
        .collect();
    let mut item = t.as_written();
    item.insert("thought_id".into(), json!(t.id));
    item.insert("tags".into(), json!(tags));
    item.insert("refs".into(), json!(refs));
    item.insert("relations".into(), json!(relations));
    Value::Object(item)
}
