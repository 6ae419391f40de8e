//! The vector stage (hybrid only): every candidate gets its similarity to
//! the query, standardized over the chain, and the query's nearest thoughts
//! join the candidates.

use super::candidates::{best_first, keep_best, Accumulators};
use super::index::RankedIndex;

/// Weight of one standard deviation of vector similarity, relative to the best lexical score.
pub const VECTOR_WEIGHT: f32 = 0.25;
/// Vector-only candidates considered per query in hybrid mode.
pub const VECTOR_CANDIDATES: usize = 100;

/// Mean and standard deviation of `sims` with one more pseudo-thought at
/// cosine 0 (what an unrelated text would score under an ideal model),
/// which keeps tiny chains meaningful (what [`score_vectors`] computes as
/// it scans).
#[cfg(test)]
fn standardization(sims: &[(f32, u32)]) -> (f32, f32) {
    let mut moments = Moments::default();
    sims.iter().for_each(|s| moments.add(s.0));
    moments.standardization()
}

/// Count, sum and sum of squares of cosines, in `f64` (a million `f32`
/// additions would lose digits).
#[derive(Debug, Default, Clone, Copy)]
struct Moments {
    n: f64,
    sum: f64,
    squares: f64,
}

impl Moments {
    fn add(&mut self, x: f32) {
        let x = f64::from(x);
        self.n += 1.0;
        self.sum += x;
        self.squares += x * x;
    }

    /// [`standardization`]'s mean and standard deviation (with the pseudo-thought at 0).
    fn standardization(&self) -> (f32, f32) {
        if self.n == 0.0 {
            return (0.0, 0.0);
        }
        let m = self.n + 1.0;
        let mean = self.sum / m;
        // Σ(s - mean)² + (0 - mean)², expanded.
        let spread = (self.squares - 2.0 * mean * self.sum + m * mean * mean).max(0.0);
        (mean as f32, (spread / m).sqrt() as f32)
    }
}

/// Vectors: `VECTOR_WEIGHT * scale * max(z, 0)` for every thought with a
/// vector, `z` its cosine to `query_vector` standardized over the chain
/// (how far above the typical thought's similarity to this query it is:
/// cosines of unrelated texts are far from zero and vary by query). Every
/// candidate gets its part; then the [`VECTOR_CANDIDATES`] nearest thoughts
/// with a part above zero that `admit` lets in join the candidates, nearest
/// first (selected as the scan goes, so `admit` is asked only of thoughts
/// that could still make it). `scale` is the best lexical score (1 when
/// nothing matched lexically).
pub(crate) fn score_vectors(index: &RankedIndex, query_vector: &[f32], scale: f32, admit: impl Fn(u32) -> bool, acc: &mut Accumulators) {
    // Stored vectors are quantized unit rows: one integer dot product each.
    let rows = index.thought_vectors();
    let Some(query) = rows.query(query_vector) else { return };
    // One cosine per thought (NaN: no vector), and their moments.
    let mut sims = vec![f32::NAN; index.len()];
    let mut moments = Moments::default();
    for (sim, doc) in rows.cosines(&query) {
        if let Some(slot) = sims.get_mut(doc as usize) {
            *slot = sim;
            moments.add(sim);
        }
    }
    let (mean, sd) = moments.standardization();
    let part = |sim: f32| if sd > 0.0 { VECTOR_WEIGHT * scale * ((sim - mean) / sd).max(0.0) } else { 0.0 };
    let candidates: Vec<u32> = acc.accs.iter().map(|a| a.doc).collect();
    for doc in candidates {
        if let Some(sim) = sims.get(doc as usize).filter(|s| !s.is_nan()) {
            acc.entry(doc).vector = Some(part(*sim));
        }
    }
    if sd <= 0.0 {
        return;
    }
    // The best VECTOR_CANDIDATES above the mean (a part above zero), by
    // `best_first`: a buffer cut back to the best ones whenever it fills;
    // what cannot beat the worst kept one is skipped before `admit`.
    let mut nearest: Vec<(f32, u32)> = Vec::with_capacity(2 * VECTOR_CANDIDATES);
    let mut floor: Option<(f32, u32)> = None;
    for (doc, sim) in sims.iter().enumerate() {
        let hit = (*sim, doc as u32);
        // Below the worst kept one by cosine alone (the common case) needs no full comparison.
        let beaten = |f: (f32, u32)| *sim < f.0 || (*sim == f.0 && best_first(&hit, &f).is_ge());
        if sim.is_nan() || *sim <= mean || floor.is_some_and(beaten) || !admit(hit.1) {
            continue;
        }
        nearest.push(hit);
        if nearest.len() == 2 * VECTOR_CANDIDATES {
            keep_best(&mut nearest, VECTOR_CANDIDATES);
            floor = nearest.iter().copied().max_by(best_first);
        }
    }
    keep_best(&mut nearest, VECTOR_CANDIDATES);
    nearest.sort_by(best_first);
    for (sim, doc) in nearest {
        let a = acc.entry(doc);
        if a.vector.is_none() {
            a.vector = Some(part(sim));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::{Chain, NewThought};
    use crate::ranked::EmbeddingProvider;
    use crate::record::ChainFormat;
    use crate::thought::ThoughtType;
    use std::sync::Arc;

    /// A thought's content is its vector ("1 0" -> `[1, 0]`).
    #[derive(Debug)]
    struct Literal;

    impl EmbeddingProvider for Literal {
        fn name(&self) -> &str {
            "literal"
        }
        fn embed(&self, text: &str) -> Option<Vec<f32>> {
            text.split(' ').map(|x| x.parse().ok()).collect()
        }
    }

    fn chain(contents: &[&str]) -> Chain {
        let mut c = Chain::new("vec", ChainFormat::Binary);
        for (i, content) in contents.iter().enumerate() {
            let t = c.prepare_append(NewThought::new("ada", ThoughtType::FactLearned, content), format!("2026-01-01T00:00:0{i}.000Z"), format!("id-{i}"), [0; 16]).unwrap();
            c.commit(t);
        }
        c.set_embedding_provider(Some(Arc::new(Literal)));
        c
    }

    #[test]
    fn the_pseudo_thought_at_zero_takes_part_in_the_standardization() {
        let (mean, sd) = standardization(&[(1.0, 0)]);
        assert!((mean - 0.5).abs() < 1e-6 && (sd - 0.5).abs() < 1e-6);
        assert_eq!(standardization(&[]), (0.0, 0.0));
    }

    #[test]
    fn above_average_thoughts_join_and_candidates_get_their_part() {
        let c = chain(&["1 0", "0.8 0.6", "0 1", "-1 0"]);
        let index = c.ranked_index();
        let mut acc = Accumulators::new(index.len());
        acc.entry(2);
        score_vectors(&index, &[2.0, 0.0], 3.0, |_| true, &mut acc);
        let sims = [(1.0, 0), (0.8, 1), (0.0, 2), (-1.0, 3)];
        let (mean, sd) = standardization(&sims);
        let part = |s: f32| VECTOR_WEIGHT * 3.0 * ((s - mean) / sd).max(0.0);
        assert_eq!(acc.accs.iter().map(|a| a.doc).collect::<Vec<_>>(), vec![2, 0, 1], "the candidate first, then the nearest above average, nearest first");
        let vector = |acc: &Accumulators, d: u32| acc.get(d).unwrap().vector.unwrap();
        assert!((vector(&acc, 0) - part(1.0)).abs() < 1e-4 && (vector(&acc, 1) - part(0.8)).abs() < 1e-4);
        assert_eq!(vector(&acc, 2), 0.0, "a candidate gets its part, here none");
        assert!(acc.get(3).is_none());
        // `admit` keeps thoughts out of the candidates, not out of the statistics.
        let mut acc = Accumulators::new(index.len());
        score_vectors(&index, &[2.0, 0.0], 3.0, |d| d != 0, &mut acc);
        assert_eq!(acc.accs.iter().map(|a| a.doc).collect::<Vec<_>>(), vec![1]);
        assert!((vector(&acc, 1) - part(0.8)).abs() < 1e-4);
    }
}
