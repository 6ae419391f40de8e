//! Which thoughts a read shows: the one rule for superseded, corrected and
//! invalidated thoughts, used by every read path that hides them (search,
//! ranked search, context bundles, lexical and federated search, summary
//! candidates, recent context and the MEMORY.md export).
//!
//! A thought is *retired* when a later thought of the same chain names it
//! with a `Supersedes`, `Corrects` or `Invalidates` relation (as MentisDB
//! 0.10.10 decides "invalidated": those three relation kinds, whatever the
//! thought types). Reads hide retired thoughts unless the caller asks for
//! them (`include_invalidated: true`, alias `include_superseded`). With
//! `as_of`, only relations of thoughts stamped at or before it retire.

use super::Chain;
use crate::retirements::Retirements;

/// What one read shows of retired thoughts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Visibility {
    /// Show retired thoughts too (`include_invalidated` / `include_superseded`).
    pub(crate) include_invalidated: bool,
    /// Answer as of this time (epoch ms): only thoughts stamped at or
    /// before it retire others.
    pub(crate) as_of_ms: Option<i64>,
}

impl Visibility {
    /// From a tool's arguments: `include_invalidated`, or its alias
    /// `include_superseded` (either true shows retired thoughts).
    pub(crate) fn from_args(include_invalidated: Option<bool>, include_superseded: Option<bool>, as_of_ms: Option<i64>) -> Visibility {
        Visibility { include_invalidated: include_invalidated.unwrap_or(false) || include_superseded.unwrap_or(false), as_of_ms }
    }

    /// A view of `chain` that answers [`ChainView::hides`] per thought.
    pub(crate) fn over<'c>(self, chain: &'c Chain) -> ChainView<'c> {
        ChainView { visibility: self, chain, retirements: (!self.include_invalidated).then(|| chain.retirements()) }
    }
}

/// [`Visibility`] bound to one chain (holds its retirement index while alive).
pub(crate) struct ChainView<'c> {
    visibility: Visibility,
    chain: &'c Chain,
    retirements: Option<std::sync::RwLockReadGuard<'c, Retirements>>,
}

impl ChainView<'_> {
    /// Whether the read leaves thought `index` out: it is retired (as of
    /// `as_of`) and retired thoughts were not asked for.
    pub(crate) fn hides(&self, index: usize) -> bool {
        let Some(r) = &self.retirements else { return false };
        let by = r.retired_by(index as u32);
        match self.visibility.as_of_ms {
            None => !by.is_empty(),
            Some(limit) => by.iter().any(|s| self.chain.thoughts()[*s as usize].timestamp_ms <= limit),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::{NewThought, RelationInput};
    use crate::record::ChainFormat;
    use crate::thought::{RelationKind, ThoughtType};

    /// A chain whose thought `i` is stamped minute `i` and carries `rels`.
    pub(crate) fn chain_with(rels: &[&[(RelationKind, u64)]]) -> Chain {
        let mut c = Chain::new("v", ChainFormat::Binary);
        for (i, rs) in rels.iter().enumerate() {
            let mut n = NewThought::new("ada", ThoughtType::FactLearned, &format!("thought {i}"));
            n.relations = rs.iter().map(|&(kind, to)| RelationInput { kind, target_id: None, target_index: Some(to), chain_key: None }).collect();
            let t = c.prepare_append(n, format!("2026-01-01T00:{i:02}:00.000Z"), format!("id-{i}"), [0; 16]).unwrap();
            c.commit(t);
        }
        c
    }

    #[test]
    fn supersedes_corrects_and_invalidates_retire_other_relations_do_not() {
        let c = chain_with(&[&[], &[], &[], &[], &[(RelationKind::Supersedes, 0), (RelationKind::Supports, 1)], &[(RelationKind::Corrects, 2)], &[(RelationKind::Invalidates, 3)]]);
        let v = Visibility::default().over(&c);
        let hidden: Vec<usize> = (0..c.len()).filter(|i| v.hides(*i)).collect();
        assert_eq!(hidden, vec![0, 2, 3], "thought 1 is only supported");
        let all = Visibility::from_args(None, Some(true), None).over(&c);
        assert!((0..c.len()).all(|i| !all.hides(i)), "include_superseded is an alias of include_invalidated");
        let all = Visibility::from_args(Some(true), None, None).over(&c);
        assert!((0..c.len()).all(|i| !all.hides(i)));
    }

    #[test]
    fn as_of_counts_only_retirements_made_by_then() {
        let c = chain_with(&[&[], &[(RelationKind::Supersedes, 0)]]);
        let minute_one = crate::timestamp::parse_rfc3339_millis("2026-01-01T00:01:00.000Z").unwrap();
        assert!(Visibility { include_invalidated: false, as_of_ms: Some(minute_one) }.over(&c).hides(0));
        assert!(!Visibility { include_invalidated: false, as_of_ms: Some(minute_one - 1) }.over(&c).hides(0));
    }
}
