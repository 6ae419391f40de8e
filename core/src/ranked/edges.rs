//! The graph part of the ranked index: every thought's refs and same-chain
//! relations as edges, looked up from either end. (Which thoughts later
//! thoughts retire is `crate::visibility`.)

use crate::thought::{RelationKind, Thought};
use std::collections::BTreeMap;

/// What an edge is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeKind {
    /// An entry of the source thought's `refs`.
    Ref,
    /// A typed relation of the source thought.
    Relation(RelationKind),
}

impl EdgeKind {
    /// `"ref"` or the relation kind's name.
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Ref => "ref",
            EdgeKind::Relation(k) => k.as_str(),
        }
    }
}

/// A directed edge from a newer thought to an earlier one in the same chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    /// The newer thought (the one holding the ref or relation).
    pub from: u32,
    /// The earlier thought it points at.
    pub to: u32,
    /// A ref or which relation.
    pub kind: EdgeKind,
}

/// The edges of the thoughts added so far, in chain order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Edges {
    /// Every thought's outgoing edges, one thought after another; thought
    /// `doc`'s end at `outgoing_ends[doc]`.
    outgoing: Vec<Edge>,
    /// Empty until the first thought with an edge (most chats have none:
    /// 8 bytes a thought for nothing), then one end per thought.
    outgoing_ends: Vec<usize>,
    /// Edges by target, oldest source first.
    incoming: BTreeMap<u32, Vec<Edge>>,
}

impl Edges {
    /// Adds the next thought's edges (`t.index` must be the number added so far).
    pub(crate) fn add(&mut self, t: &Thought) {
        let doc = t.index as u32;
        let first = self.outgoing.len();
        self.outgoing.extend(t.refs().iter().map(|r| Edge { from: doc, to: *r as u32, kind: EdgeKind::Ref }));
        for rel in t.relations() {
            // Relations into other chains carry no index; they are not part of this chain's graph.
            if let Some(to) = rel.target_index.filter(|i| *i < doc as u64) {
                self.outgoing.push(Edge { from: doc, to: to as u32, kind: EdgeKind::Relation(rel.kind) });
            }
        }
        for e in &self.outgoing[first..] {
            self.incoming.entry(e.to).or_default().push(*e);
        }
        if self.outgoing.is_empty() {
            return;
        }
        // The thoughts before the first edge all end at 0.
        self.outgoing_ends.resize(doc as usize, 0);
        crate::growth::push(&mut self.outgoing_ends, self.outgoing.len());
    }

    /// Whether no thought added so far has an edge.
    pub(crate) fn is_empty(&self) -> bool {
        self.outgoing.is_empty()
    }

    /// Edges leaving thought `doc` (its refs, then its same-chain relations).
    pub(crate) fn outgoing(&self, doc: u32) -> &[Edge] {
        let Some(&end) = self.outgoing_ends.get(doc as usize) else { return &[] };
        let start = if doc == 0 { 0 } else { self.outgoing_ends[doc as usize - 1] };
        &self.outgoing[start..end]
    }

    /// Edges arriving at thought `doc`, oldest source first.
    pub(crate) fn incoming(&self, doc: u32) -> &[Edge] {
        self.incoming.get(&doc).map(Vec::as_slice).unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::{Chain, NewThought, RelationInput};
    use crate::record::ChainFormat;
    use crate::thought::ThoughtType;

    #[test]
    fn edges_are_found_from_both_ends() {
        let mut c = Chain::new("e", ChainFormat::Binary);
        let mut edges = Edges::default();
        let mut add = |refs: &[u64], rels: &[(RelationKind, u64)]| {
            let i = c.len();
            let mut n = NewThought::new("ada", ThoughtType::FactLearned, "x");
            n.refs = refs.to_vec();
            n.relations = rels.iter().map(|&(kind, to)| RelationInput { kind, target_id: None, target_index: Some(to), chain_key: None }).collect();
            let t = c.prepare_append(n, format!("2026-01-01T00:00:0{i}.000Z"), format!("id-{i}"), [0; 16]).unwrap();
            edges.add(&t);
            c.commit(t);
        };
        add(&[], &[]);
        add(&[0], &[]);
        add(&[0, 1], &[(RelationKind::Supersedes, 0), (RelationKind::Supports, 1)]);
        add(&[], &[(RelationKind::Corrects, 0)]);
        assert!(edges.outgoing(0).is_empty() && edges.outgoing(3).len() == 1);
        let kinds: Vec<(u32, &str)> = edges.outgoing(2).iter().map(|e| (e.to, e.kind.as_str())).collect();
        assert_eq!(kinds, vec![(0, "ref"), (1, "ref"), (0, "Supersedes"), (1, "Supports")], "refs, then relations, as listed");
        let from: Vec<u32> = edges.incoming(0).iter().map(|e| e.from).collect();
        assert_eq!(from, vec![1, 2, 2, 3], "oldest source first");
    }

    #[test]
    fn nothing_is_kept_per_thought_before_the_first_edge() {
        let mut c = Chain::new("e", ChainFormat::Binary);
        let mut edges = Edges::default();
        for i in 0..3u64 {
            let mut n = NewThought::new("ada", ThoughtType::FactLearned, "x");
            if i == 2 {
                n.refs = vec![1];
            }
            let t = c.prepare_append(n, format!("2026-01-01T00:00:0{i}.000Z"), format!("id-{i}"), [0; 16]).unwrap();
            edges.add(&t);
            c.commit(t);
            if i < 2 {
                assert!(edges.outgoing_ends.is_empty(), "no offsets kept while no thought has an edge");
            }
        }
        assert_eq!(edges.outgoing_ends, vec![0, 0, 1]);
        assert!(edges.outgoing(0).is_empty() && edges.outgoing(1).is_empty());
        assert_eq!(edges.outgoing(2).iter().map(|e| (e.from, e.to)).collect::<Vec<_>>(), vec![(2, 1)]);
        assert!(edges.outgoing(3).is_empty(), "a thought not added yet has none");
    }
}
