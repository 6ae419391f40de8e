//! Optional Reciprocal Rank Fusion (`enable_reranking`, `rerank_k`), as
//! MentisDB 0.10.10 does it: three rank lists over the scored candidates —
//! lexical (`lexical + expansion`), vector, and graph (`graph + relation +
//! context`) — each holding only the `rerank_k` best candidates with a
//! positive score for that signal (ties: lower key first); a candidate's
//! fused score is `sum 1 / (RRF_K + rank)` (rank from 1) over the lists it
//! is in, reported as `rrf`, and `RRF_SCORE_SCALE * rrf` is added to its
//! total, so fusion refines the default order where the signals agree
//! instead of replacing it.

use super::hits::ScoreParts;
use std::collections::BTreeMap;

/// The RRF constant (the standard 60).
pub const RRF_K: f32 = 60.0;
/// What the fused score is multiplied by before it joins the total.
pub const RRF_SCORE_SCALE: f32 = 50.0;
/// Candidates per rank list when `rerank_k` is not given.
pub const DEFAULT_RERANK_K: usize = 50;
/// Most candidates per rank list.
pub const MAX_RERANK_K: usize = 10_000;

/// The three signals RRF ranks on.
pub(crate) fn signals(s: &ScoreParts) -> [f32; 3] {
    [s.lexical + s.expansion, s.vector.unwrap_or(0.0), s.graph + s.relation + s.context]
}

/// Fused RRF score per key: each of the three signals ranks its `k` best
/// keys with a positive score (ties by key), and a key gets
/// `1 / (RRF_K + rank)` from every list it is in.
pub(crate) fn fuse<K: Ord + Clone>(items: &[(K, [f32; 3])], k: usize) -> BTreeMap<K, f32> {
    let mut fused: BTreeMap<K, f32> = BTreeMap::new();
    for signal in 0..3 {
        let mut list: Vec<(&K, f32)> = items.iter().map(|(key, s)| (key, s[signal])).filter(|(_, s)| *s > 0.0).collect();
        list.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        for (rank, (key, _)) in list.into_iter().take(k).enumerate() {
            *fused.entry(key.clone()).or_insert(0.0) += 1.0 / (RRF_K + rank as f32 + 1.0);
        }
    }
    fused
}

/// Reranks scored candidates `(total, doc, parts)` of one chain in place:
/// sets `rrf` and adds `RRF_SCORE_SCALE * rrf` to each total.
pub(crate) fn rerank(scored: &mut [(f32, u32, ScoreParts)], k: usize) {
    let items: Vec<(u32, [f32; 3])> = scored.iter().map(|(_, doc, s)| (*doc, signals(s))).collect();
    let fused = fuse(&items, k);
    for (total, doc, parts) in scored.iter_mut() {
        if let Some(rrf) = fused.get(doc) {
            parts.rrf = *rrf;
            parts.total += RRF_SCORE_SCALE * rrf;
            *total = parts.total;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_positive_signals_rank_and_agreement_wins() {
        // key 1 is first lexically and first on the graph; key 2 is second lexically only.
        let items = vec![(1u32, [3.0, 0.0, 1.0]), (2, [2.0, 0.0, 0.0]), (3, [0.0, 0.0, 0.0])];
        let fused = fuse(&items, 50);
        assert_eq!(fused.get(&1).copied(), Some(2.0 / 61.0));
        assert_eq!(fused.get(&2).copied(), Some(1.0 / 62.0));
        assert_eq!(fused.get(&3), None, "no positive signal, no rank");
        let top_one = fuse(&items, 1);
        assert_eq!(top_one.get(&2), None, "rerank_k bounds each list");
    }

    #[test]
    fn rerank_adds_the_scaled_fused_score() {
        let parts = |lexical: f32, graph: f32| ScoreParts { lexical, graph, total: lexical + graph, ..ScoreParts::default() };
        let mut scored = vec![(3.0, 0, parts(3.0, 0.0)), (2.9, 1, parts(2.0, 0.9))];
        rerank(&mut scored, 50);
        assert_eq!(scored[0].2.rrf, 1.0 / 61.0);
        assert_eq!(scored[1].2.rrf, 1.0 / 62.0 + 1.0 / 61.0);
        assert!((scored[1].0 - (2.9 + RRF_SCORE_SCALE * scored[1].2.rrf)).abs() < 1e-5);
        assert!(scored[1].0 > scored[0].0, "agreement of two signals lifts thought 1 above 0");
    }
}
