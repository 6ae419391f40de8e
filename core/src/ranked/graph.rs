//! Breadth-first walks over the graph of `refs` and typed relations.
//!
//! Every edge points from a newer thought to an earlier one. Walking
//! *outgoing* follows a thought's own refs and relations (towards what it
//! builds on); *incoming* follows the thoughts that point at it (towards
//! what builds on it). The walk is deterministic: outgoing edges in the
//! order the thought lists them (refs, then relations), incoming edges
//! oldest source first, breadth first.
//!
//! `spread_graph` is the graph stage of ranked search: the best direct
//! matches pass a decaying share of their score along those walks.

use super::candidates::{best_first, keep_best, Accumulators, Scope};
use super::edges::{Edge, EdgeKind};
use super::index::RankedIndex;
use crate::thought::RelationKind;
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};

/// Score share passed one step along the graph.
pub const GRAPH_DECAY: f32 = 0.5;
/// Seeds the graph expansion starts from, at most (or the query's limit, if larger).
pub const MAX_GRAPH_SEEDS: usize = 32;

crate::named_enum::named_enum! {
    /// Which edges a walk follows (`outgoing`, `incoming` or `both`,
    /// case-insensitive; `out` and `in` are accepted too).
    pub enum WalkDirection("direction", IgnoreCase) {
        /// A thought's own refs and relations: what it builds on.
        Outgoing = "outgoing" (also "out"),
        /// The thoughts that point at it: what builds on it.
        Incoming = "incoming" (also "in"),
        /// Both.
        Both = "both",
    }
}

/// Graph expansion settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GraphOptions {
    /// Steps from a seed; 0 turns expansion off.
    pub max_depth: u32,
    /// Thoughts reached per seed, at most.
    pub max_visited: usize,
    /// Which way edges are walked.
    pub direction: WalkDirection,
}

impl Default for GraphOptions {
    fn default() -> Self {
        GraphOptions { max_depth: 1, max_visited: 64, direction: WalkDirection::Both }
    }
}

/// How a thought was reached: the edge walked and from which thought.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Via {
    /// Index of the already-reached thought the step started from.
    pub from_index: u64,
    /// `"ref"` or the relation kind, e.g. `"Supports"`.
    pub kind: &'static str,
    /// `"outgoing"` when the step followed the edge forward (from the
    /// pointing thought to its target), `"incoming"` when backward.
    pub direction: &'static str,
    #[serde(skip)]
    /// The edge walked.
    pub edge: EdgeKind,
}

/// One thought reached by a walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reached {
    /// The reached thought's document number in the index.
    pub doc: u32,
    /// Steps from the seed.
    pub depth: u32,
    /// The last step taken to reach it.
    pub via: Via,
}

/// Neighbours of `doc` in walk order: `(neighbour, edge, walked forward?)`.
pub fn neighbours(index: &RankedIndex, doc: u32, direction: WalkDirection) -> impl Iterator<Item = (u32, Edge, bool)> + '_ {
    let out: &[Edge] = if direction != WalkDirection::Incoming { index.outgoing(doc) } else { &[] };
    let inc: &[Edge] = if direction != WalkDirection::Outgoing { index.incoming(doc) } else { &[] };
    out.iter().map(|e| (e.to, *e, true)).chain(inc.iter().map(|e| (e.from, *e, false)))
}

/// Walks from `starts` up to `max_depth` steps, reaching at most
/// `max_visited` thoughts besides the starts. `passable(doc)` decides whether
/// a thought exists for this walk (e.g. `as_of`); edges from or to
/// impassable thoughts are ignored. Returns the reached thoughts in walk
/// order and whether the walk stopped at `max_visited`.
pub fn walk(index: &RankedIndex, starts: &[u32], direction: WalkDirection, max_depth: u32, max_visited: usize, passable: impl Fn(u32) -> bool) -> (Vec<Reached>, bool) {
    // Sorted: looked up by bisection, at most `max_visited` (10,000)
    // insertions; keeps a `BTreeSet<u32>` out of the browser's module.
    let mut seen: Vec<u32> = starts.to_vec();
    crate::sorting::sort(&mut seen);
    seen.dedup();
    let mut queue: VecDeque<(u32, u32)> = starts.iter().map(|s| (*s, 0)).collect();
    let mut out = Vec::new();
    while let Some((doc, depth)) = queue.pop_front() {
        if depth >= max_depth {
            continue;
        }
        for (next, edge, forward) in neighbours(index, doc, direction) {
            let Err(slot) = seen.binary_search(&next) else { continue };
            if !passable(next) || !passable(edge.from) {
                continue;
            }
            if out.len() >= max_visited {
                return (out, true);
            }
            seen.insert(slot, next);
            let via = Via { from_index: doc as u64, kind: edge.kind.as_str(), direction: if forward { "outgoing" } else { "incoming" }, edge: edge.kind };
            out.push(Reached { doc: next, depth: depth + 1, via });
            queue.push_back((next, depth + 1));
        }
    }
    (out, false)
}

/// Weight of one edge for graph expansion.
pub fn edge_weight(kind: EdgeKind) -> f32 {
    match kind {
        EdgeKind::Ref => 1.0,
        EdgeKind::Relation(k) => match k {
            RelationKind::Supports | RelationKind::DerivedFrom | RelationKind::Summarizes | RelationKind::CausedBy | RelationKind::ContinuesFrom => 1.0,
            RelationKind::References | RelationKind::BranchesFrom | RelationKind::RelatedTo => 0.8,
            RelationKind::Corrects | RelationKind::Supersedes | RelationKind::Invalidates | RelationKind::Contradicts => 0.6,
        },
    }
}

/// Graph: from the best `max(MAX_GRAPH_SEEDS, limit)` direct matches (a
/// direct score above zero, admitted by `scope`), walks by `options` over
/// the thoughts that exist; a thought reached at depth `d` gets
/// `seed score * GRAPH_DECAY^d * edge weight` as its `graph` (through a ref)
/// or `relation` (through a typed relation) share, the best seed winning.
/// Reached thoughts become candidates.
pub(crate) fn spread_graph<E: Fn(u32) -> bool, A: Fn(u32) -> bool>(index: &RankedIndex, options: &GraphOptions, limit: usize, scope: &Scope<E, A>, acc: &mut Accumulators) {
    if !index.has_edges() {
        return;
    }
    acc.settle_admission(scope);
    let mut seeds: Vec<(f32, u32)> = acc.accs.iter().filter(|a| a.direct() > 0.0 && a.admitted()).map(|a| (a.direct(), a.doc)).collect();
    keep_best(&mut seeds, MAX_GRAPH_SEEDS.max(limit));
    seeds.sort_by(best_first);
    for (seed_score, seed) in seeds {
        let (reached, _) = walk(index, &[seed], options.direction, options.max_depth, options.max_visited, |d| scope.exists(d));
        // Each reached thought's step back towards the seed (a BFS tree).
        let back: BTreeMap<u32, (u32, EdgeKind)> = crate::sorting::map_from(reached.iter().map(|r| (r.doc, (r.via.from_index as u32, r.via.edge))));
        for r in &reached {
            let share = seed_score * GRAPH_DECAY.powi(r.depth as i32) * edge_weight(r.via.edge);
            let a = acc.entry(r.doc);
            match r.via.edge {
                EdgeKind::Ref => a.graph = a.graph.max(share),
                EdgeKind::Relation(_) => a.relation = a.relation.max(share),
            }
            let (path, kinds) = path_from_seed(&back, seed, r.doc);
            let trace = acc.graph.entry(r.doc).or_default();
            trace.seeds += 1;
            trace.kinds.extend(kinds);
            if share > trace.best_share || trace.path.is_empty() {
                trace.best_share = share;
                trace.path = path;
            }
        }
    }
}

/// The walk's path from `seed` to `doc` (both included) and the kinds of
/// its edges (`references` for a ref, a relation's kind in snake_case).
fn path_from_seed(back: &BTreeMap<u32, (u32, EdgeKind)>, seed: u32, doc: u32) -> (Vec<u32>, Vec<&'static str>) {
    let (mut path, mut kinds, mut at) = (vec![doc], Vec::new(), doc);
    while at != seed {
        let Some(&(from, edge)) = back.get(&at) else { break };
        kinds.push(kind_label(edge));
        path.push(from);
        at = from;
    }
    path.reverse();
    (path, kinds)
}

/// How a walk reached each of its thoughts: from each reached thought back
/// to the walk's start, through the thought every step came from.
pub struct WalkPaths<'r> {
    by_index: BTreeMap<u64, &'r Reached>,
}

impl<'r> WalkPaths<'r> {
    /// The paths of the thoughts of one walk.
    pub fn new(reached: &'r [Reached]) -> Self {
        WalkPaths { by_index: reached.iter().map(|r| (u64::from(r.doc), r)).collect() }
    }

    /// The thoughts from the walk's start to `r` (the start first, `r`
    /// last) and the relation kinds of the edges walked, first step first,
    /// each once, as MentisDB 0.10 labels them in a context bundle's
    /// `relation_kinds` (`caused_by`; refs are not relations).
    pub fn path(&self, r: &Reached) -> (Vec<u64>, Vec<&'static str>) {
        let (mut visited, mut edges) = (vec![u64::from(r.doc)], Vec::new());
        let mut step = r;
        loop {
            edges.push(step.via.edge);
            visited.push(step.via.from_index);
            match self.by_index.get(&step.via.from_index) {
                // Each step comes from a thought reached one step earlier.
                Some(earlier) if earlier.depth < step.depth => step = earlier,
                _ => break,
            }
        }
        visited.reverse();
        let mut kinds = Vec::new();
        for edge in edges.into_iter().rev().filter(|e| matches!(e, EdgeKind::Relation(_))) {
            let label = kind_label(edge);
            if !kinds.contains(&label) {
                kinds.push(label);
            }
        }
        (visited, kinds)
    }
}

/// An edge's kind as MentisDB 0.10 names it in `graph_relation_kinds`.
pub(crate) fn kind_label(edge: EdgeKind) -> &'static str {
    match edge {
        EdgeKind::Ref | EdgeKind::Relation(RelationKind::References) => "references",
        EdgeKind::Relation(RelationKind::Summarizes) => "summarizes",
        EdgeKind::Relation(RelationKind::Corrects) => "corrects",
        EdgeKind::Relation(RelationKind::Invalidates) => "invalidates",
        EdgeKind::Relation(RelationKind::CausedBy) => "caused_by",
        EdgeKind::Relation(RelationKind::Supports) => "supports",
        EdgeKind::Relation(RelationKind::Contradicts) => "contradicts",
        EdgeKind::Relation(RelationKind::DerivedFrom) => "derived_from",
        EdgeKind::Relation(RelationKind::ContinuesFrom) => "continues_from",
        EdgeKind::Relation(RelationKind::BranchesFrom) => "branches_from",
        EdgeKind::Relation(RelationKind::RelatedTo) => "related_to",
        EdgeKind::Relation(RelationKind::Supersedes) => "supersedes",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::{Chain, NewThought, RelationInput};
    use crate::record::ChainFormat;
    use crate::thought::ThoughtType;

    /// 0 <- 1 (ref), 1 <- 2 (Supports), 0 <- 3 (ref)
    fn chain() -> Chain {
        let mut c = Chain::new("g", ChainFormat::Binary);
        let specs: [(Vec<u64>, Vec<RelationInput>); 4] = [
            (vec![], vec![]),
            (vec![0], vec![]),
            (vec![], vec![RelationInput { kind: RelationKind::Supports, target_id: None, target_index: Some(1), chain_key: None }]),
            (vec![0], vec![]),
        ];
        for (i, (refs, rels)) in specs.into_iter().enumerate() {
            let mut n = NewThought::new("a", ThoughtType::Finding, &format!("thought {i}"));
            n.refs = refs;
            n.relations = rels;
            let t = c.prepare_append(n, format!("2026-01-01T00:00:0{i}.000Z"), format!("id{i}"), [0; 16]).unwrap();
            c.commit(t);
        }
        c
    }

    #[test]
    fn walks_both_directions_breadth_first() {
        let c = chain();
        let (r, truncated) = walk(&c.ranked_index(), &[1], WalkDirection::Both, 2, 100, |_| true);
        assert!(!truncated);
        let got: Vec<(u32, u32, &str, &str)> = r.iter().map(|x| (x.doc, x.depth, x.via.kind, x.via.direction)).collect();
        assert_eq!(got, vec![(0, 1, "ref", "outgoing"), (2, 1, "Supports", "incoming"), (3, 2, "ref", "incoming")]);
    }

    #[test]
    fn direction_depth_budget_and_passability() {
        let c = chain();
        let idx = c.ranked_index();
        let (r, _) = walk(&idx, &[1], WalkDirection::Outgoing, 5, 100, |_| true);
        assert_eq!(r.iter().map(|x| x.doc).collect::<Vec<_>>(), vec![0]);
        let (r, _) = walk(&idx, &[0], WalkDirection::Incoming, 1, 100, |_| true);
        assert_eq!(r.iter().map(|x| x.doc).collect::<Vec<_>>(), vec![1, 3]);
        let (r, truncated) = walk(&idx, &[0], WalkDirection::Incoming, 3, 1, |_| true);
        assert_eq!((r.len(), truncated), (1, true));
        let (r, _) = walk(&idx, &[0], WalkDirection::Both, 3, 100, |d| d != 1);
        assert_eq!(r.iter().map(|x| x.doc).collect::<Vec<_>>(), vec![3]);
    }

    #[test]
    fn seeds_pass_a_decaying_share_the_best_seed_winning() {
        let c = chain();
        let idx = c.ranked_index();
        let mut acc = Accumulators::new(idx.len());
        acc.entry(1).lexical = 2.0;
        acc.entry(3).lexical = 1.0;
        let options = GraphOptions { max_depth: 2, ..GraphOptions::default() };
        spread_graph(&idx, &options, 10, &Scope { exists: |_| true, admit: |_| true }, &mut acc);
        let parts = |d: u32| acc.get(d).map(|a| (a.graph, a.relation));
        assert_eq!(parts(0), Some((GRAPH_DECAY * 2.0, 0.0)), "from 1 by a ref; 3's share is smaller");
        assert_eq!(parts(2), Some((0.0, GRAPH_DECAY * 2.0 * edge_weight(EdgeKind::Relation(RelationKind::Supports)))));
        assert_eq!(parts(3), Some((GRAPH_DECAY * GRAPH_DECAY * 2.0, 0.0)), "two steps from 1, through 0");
        // Not admitted: no seed. Off depth: no walk.
        let mut acc = Accumulators::new(idx.len());
        acc.entry(1).lexical = 2.0;
        spread_graph(&idx, &options, 10, &Scope { exists: |_| true, admit: |d| d != 1 }, &mut acc);
        assert_eq!(acc.accs.len(), 1);
    }
}
