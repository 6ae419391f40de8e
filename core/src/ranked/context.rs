//! Context bundles: each ranked seed with the thoughts that support it
//! through the graph, in a deterministic order (seeds by rank, support in
//! walk order: depth, then edge order).

use super::graph::{walk, GraphOptions, Reached};
use super::hits::RankedHit;
use super::query::{exists_as_of, RankedQuery};
use super::search::ranked_search;
use super::corpus::Corpus;

/// A seed and its support.
#[derive(Debug, Clone, PartialEq)]
pub struct Bundle {
    /// The ranked hit the bundle starts from.
    pub seed: RankedHit,
    /// Thoughts reached from the seed through the graph.
    pub support: Vec<Reached>,
}

/// Ranks seeds with `q` (without graph scoring: seeds are direct matches)
/// and walks from each with `support`. Support honours `as_of` and, unless
/// `q.include_superseded`, leaves retired thoughts out.
pub fn context_bundles(chain: &(impl Corpus + ?Sized), q: &RankedQuery, support: GraphOptions) -> (&'static str, Vec<Bundle>) {
    let index_guard = chain.ranked_index();
    let index: &crate::ranked::RankedIndex = &index_guard;
    let seeds = ranked_search(chain, &RankedQuery { graph: GraphOptions { max_depth: 0, ..q.graph }, ..q.clone() });
    let hides = chain.retired_filter(q.include_superseded, q.as_of_ms);
    let thoughts = chain.thoughts();
    let bundles = seeds
        .hits
        .into_iter()
        .map(|seed| {
            let (reached, _) = walk(index, &[seed.index as u32], support.direction, support.max_depth, support.max_visited, |d| exists_as_of(thoughts, d, q.as_of_ms));
            let support = reached.into_iter().filter(|r| !hides(r.doc as usize)).collect();
            Bundle { seed, support }
        })
        .collect();
    (seeds.backend, bundles)
}
