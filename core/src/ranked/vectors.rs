//! The vector stage (hybrid only): every candidate gets its similarity to
//! the query, standardized over the chain, and the query's nearest thoughts
//! join the candidates. A chain of up to [`EXACT_VECTORS_UP_TO`] thoughts
//! compares the query with every thought; a larger one estimates the
//! standardization from an even sample and looks for the nearest only
//! among the thoughts whose sketches are nearest the query's
//! (`sketch.rs`): only which thoughts are compared is approximate, every
//! similarity is computed from the thought's vector.

use std::ops::Range;

use super::candidates::{best_first, keep_best, Accumulators};
use super::index::RankedIndex;
use super::quantized::{QuantizedQuery, QuantizedRows};
use super::sketch::{shortlist_limit, SketchedRows, ThoughtCode, SKETCH_BITS};
use crate::host::{run_collect, Parallelism};

/// Weight of one standard deviation of vector similarity, relative to the best lexical score.
pub const VECTOR_WEIGHT: f32 = 0.25;
/// Vector-only candidates considered per query in hybrid mode.
pub const VECTOR_CANDIDATES: usize = 100;
/// Chains with at most this many thoughts compare the query with every
/// thought's vector; larger ones shortlist by sketch.
pub const EXACT_VECTORS_UP_TO: usize = 50_000;
/// On a larger chain, one thought in this many (those whose sketches are
/// nearest the query's) is compared exactly: 50,000 of a million (on real
/// sentence vectors at 370k thoughts that shortlist held 0.994 of the exact
/// top 10, what comparing every thought gives; `vector-recall` in the tests
/// crate).
pub const SKETCH_SHORTLIST: usize = 20;
/// On a larger chain, how many thoughts (spread evenly over it) estimate
/// the mean and spread of similarity to the query: the standard error of
/// either is under 2% of the spread.
pub const SIMILARITY_SAMPLE: usize = 4_096;
/// A large chain's sketches and shortlist are scanned in slices of this
/// many thoughts, which the host may run at once ([`Parallelism`]: the
/// native daemon on every core; one after the other in the browser).
const ROWS_PER_JOB: usize = 1 << 16;

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
pub(crate) fn score_vectors(index: &RankedIndex, query_vector: &[f32], scale: f32, admit: impl Fn(u32) -> bool + Sync, parallelism: &dyn Parallelism, acc: &mut Accumulators) {
    let rows = index.thought_vectors().rows();
    let Some(query) = rows.query(query_vector) else { return };
    let large = index.len() > EXACT_VECTORS_UP_TO;
    // Every thought's cosine (NaN: no vector) on a small chain; on a large one none, and a sample's moments.
    let (sims, moments) = if large { (Vec::new(), sampled_moments(rows, &query)) } else { all_cosines(rows, &query, index.len()) };
    let cosine = |doc: u32| if large { rows.cosine(&query, doc) } else { sims.get(doc as usize).copied().filter(|s| !s.is_nan()) };
    let (mean, sd) = moments.standardization();
    let part = |sim: f32| if sd > 0.0 { VECTOR_WEIGHT * scale * ((sim - mean) / sd).max(0.0) } else { 0.0 };
    let candidates: Vec<u32> = acc.accs.iter().map(|a| a.doc).collect();
    for doc in candidates {
        if let Some(sim) = cosine(doc) {
            acc.entry(doc).vector = Some(part(sim));
        }
    }
    if sd <= 0.0 {
        return;
    }
    let nearest = if large {
        nearest_in_large_chain(index.thought_vectors(), &query, mean, &admit, parallelism, ROWS_PER_JOB)
    } else {
        let all = sims.iter().enumerate().filter(|(_, s)| !s.is_nan()).map(|(doc, s)| (*s, doc as u32));
        select_nearest(all, mean, VECTOR_CANDIDATES, &admit)
    };
    for (sim, doc) in nearest {
        let a = acc.entry(doc);
        if a.vector.is_none() {
            a.vector = Some(part(sim));
        }
    }
}

/// Every thought's cosine to `query` (NaN: no vector) and their moments.
fn all_cosines(rows: &QuantizedRows<ThoughtCode>, query: &QuantizedQuery<ThoughtCode>, len: usize) -> (Vec<f32>, Moments) {
    let mut sims = vec![f32::NAN; len];
    let mut moments = Moments::default();
    for (sim, doc) in rows.cosines(query) {
        if let Some(slot) = sims.get_mut(doc as usize) {
            *slot = sim;
            moments.add(sim);
        }
    }
    (sims, moments)
}

/// The moments of the cosines of [`SIMILARITY_SAMPLE`] thoughts spread evenly over the chain.
fn sampled_moments(rows: &QuantizedRows<ThoughtCode>, query: &QuantizedQuery<ThoughtCode>) -> Moments {
    let stride = rows.len().div_ceil(SIMILARITY_SAMPLE).max(1);
    let mut moments = Moments::default();
    (0..rows.len() as u32).step_by(stride).filter_map(|d| rows.cosine(query, d)).for_each(|s| moments.add(s));
    moments
}

/// [`VECTOR_CANDIDATES`] nearest thoughts above `mean` that `admit` lets in,
/// looked for among the one in [`SKETCH_SHORTLIST`] nearest by sketch; when
/// that shortlist holds too few of them (a narrow filter), among every
/// thought `admit` lets in. Both scans run in slices of `per_job` thoughts
/// ([`ROWS_PER_JOB`]) through `parallelism`; the result does not depend on how.
fn nearest_in_large_chain(vectors: &SketchedRows, query: &QuantizedQuery<ThoughtCode>, mean: f32, admit: &(impl Fn(u32) -> bool + Sync), parallelism: &dyn Parallelism, per_job: usize) -> Vec<(f32, u32)> {
    let nearest = shortlist_nearest(vectors, query, mean, VECTOR_CANDIDATES, admit, parallelism, per_job);
    if nearest.len() == VECTOR_CANDIDATES {
        return nearest;
    }
    let rows = vectors.rows();
    let slices = slices(rows.len(), per_job);
    let found = run_collect(parallelism, slices.len(), |j| {
        let admitted = slices[j].clone().filter(|d| admit(*d)).filter_map(|d| rows.cosine(query, d).map(|s| (s, d)));
        select_nearest(admitted, mean, VECTOR_CANDIDATES, &|_| true)
    });
    select_nearest(found.into_iter().flatten(), mean, VECTOR_CANDIDATES, &|_| true)
}

/// `0..len` in slices of `per_job`.
fn slices(len: usize, per_job: usize) -> Vec<Range<u32>> {
    (0..len).step_by(per_job).map(|start| start as u32..(start + per_job).min(len) as u32).collect()
}

/// The `count` nearest thoughts above `mean` that `admit` lets in among
/// the one in [`SKETCH_SHORTLIST`] nearest by sketch: every slice's
/// distances and their histogram, the distance that keeps the shortlist,
/// then every slice's nearest of its shortlisted thoughts, merged.
fn shortlist_nearest(vectors: &SketchedRows, query: &QuantizedQuery<ThoughtCode>, mean: f32, count: usize, admit: &(impl Fn(u32) -> bool + Sync), parallelism: &dyn Parallelism, per_job: usize) -> Vec<(f32, u32)> {
    let Some(sketch) = vectors.query_sketch(query) else { return Vec::new() };
    let rows = vectors.rows();
    let slices = slices(rows.len(), per_job);
    let distances = run_collect(parallelism, slices.len(), |j| vectors.distances_in(&sketch, slices[j].clone()));
    let mut histogram = vec![0usize; SKETCH_BITS + 1];
    for (_, h) in &distances {
        histogram.iter_mut().zip(h).for_each(|(total, n)| *total += n);
    }
    let limit = shortlist_limit(&histogram, rows.len() / SKETCH_SHORTLIST);
    let found = run_collect(parallelism, slices.len(), |j| {
        let start = slices[j].start;
        let shortlisted = distances[j].0.iter().enumerate().filter(|(_, d)| (**d as usize) <= limit).map(|(i, _)| start + i as u32);
        select_nearest(shortlisted.filter_map(|d| rows.cosine(query, d).map(|s| (s, d))), mean, count, admit)
    });
    select_nearest(found.into_iter().flatten(), mean, count, &|_| true)
}

/// The best `count` of `sims` above `mean` that `admit` lets in, nearest
/// first, by `best_first`: a buffer cut back to the best ones whenever it
/// fills; what cannot beat the worst kept one is skipped before `admit`.
fn select_nearest(sims: impl Iterator<Item = (f32, u32)>, mean: f32, count: usize, admit: &impl Fn(u32) -> bool) -> Vec<(f32, u32)> {
    let mut nearest: Vec<(f32, u32)> = Vec::with_capacity(2 * count);
    let mut floor: Option<(f32, u32)> = None;
    for hit in sims {
        let sim = hit.0;
        // Below the worst kept one by cosine alone (the common case) needs no full comparison.
        let beaten = |f: (f32, u32)| sim < f.0 || (sim == f.0 && best_first(&hit, &f).is_ge());
        if sim <= mean || floor.is_some_and(beaten) || !admit(hit.1) {
            continue;
        }
        nearest.push(hit);
        if nearest.len() == 2 * count {
            keep_best(&mut nearest, count);
            floor = nearest.iter().copied().max_by(best_first);
        }
    }
    keep_best(&mut nearest, count);
    nearest.sort_by(best_first);
    nearest
}

/// The `k` rows of `vectors` nearest `query_vector` as the vector stage
/// finds them (past [`EXACT_VECTORS_UP_TO`] rows: among the sketch
/// shortlist, scanned through `parallelism`), nearest first, with no
/// filter: for benches that measure recall against brute force.
pub fn nearest_rows(vectors: &SketchedRows, query_vector: &[f32], k: usize, parallelism: &dyn Parallelism) -> Vec<(f32, u32)> {
    let rows = vectors.rows();
    let Some(query) = rows.query(query_vector) else { return Vec::new() };
    if rows.len() > EXACT_VECTORS_UP_TO {
        shortlist_nearest(vectors, &query, f32::NEG_INFINITY, k, &|_| true, parallelism, ROWS_PER_JOB)
    } else {
        select_nearest(rows.cosines(&query), f32::NEG_INFINITY, k, &|_| true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::{Chain, NewThought};
    use crate::host::{Reversed, Sequential};
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
            let t = c.prepare_append(NewThought::new("ada", ThoughtType::FactLearned, content), crate::timestamp::format_rfc3339_millis(1_700_000_000_000 + i as i64 * 1000), format!("id-{i}"), [0; 16]).unwrap();
            c.commit(t);
        }
        c.set_embedding_provider(Some(Arc::new(Literal)));
        c
    }

    /// A deterministic `dim`-value vector of low intrinsic dimension, as
    /// sentence embeddings are: 16 coordinates of thought `i` through one
    /// fixed mixing matrix; written as `Literal` content.
    fn clustered(i: u64, dim: usize) -> String {
        let unit = |mut x: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f32 / (1u64 << 53) as f32 - 0.5
        };
        let z: Vec<f32> = (0..16u64).map(|k| unit((i * 16 + k + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15))).collect();
        (0..dim as u64)
            .map(|j| {
                let v: f32 = z.iter().enumerate().map(|(k, zk)| zk * unit((j * 16 + k as u64 + 7).wrapping_mul(0xD1B5_4A32_D192_ED03))).sum();
                format!("{v:.4}")
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// A chain of `n` [`clustered`] thoughts, their vectors, and `queries` more vectors like them.
    fn clustered_chain(n: u64, queries: u64) -> (Chain, Vec<Vec<f32>>, Vec<Vec<f32>>) {
        clustered_chain_sharing(n, queries, 0.0)
    }

    /// [`clustered_chain`] with `shift` added to every component of every
    /// vector: one direction they all share, as a sentence model's do.
    fn clustered_chain_sharing(n: u64, queries: u64, shift: f32) -> (Chain, Vec<Vec<f32>>, Vec<Vec<f32>>) {
        let shifted = |i: u64| clustered(i, 256).split(' ').map(|x| format!("{:.4}", x.parse::<f32>().unwrap() + shift)).collect::<Vec<_>>().join(" ");
        let contents: Vec<String> = (0..n).map(shifted).collect();
        let c = chain(&contents.iter().map(|s| s.as_str()).collect::<Vec<_>>());
        let vectors = contents.iter().map(|t| Literal.embed(t).unwrap()).collect();
        let qs = (n..n + queries).map(|q| Literal.embed(&shifted(q)).unwrap()).collect();
        (c, vectors, qs)
    }

    /// The exact `k` nearest of `vectors` by `f32` cosine.
    fn exact_nearest(vectors: &[Vec<f32>], query: &[f32], k: usize) -> Vec<u32> {
        let mut sims: Vec<(f32, u32)> = vectors.iter().enumerate().map(|(d, v)| (crate::ranked::embedding::cosine(query, v), d as u32)).collect();
        keep_best(&mut sims, k);
        sims.into_iter().map(|(_, d)| d).collect()
    }

    /// Share of the exact top 10 of each query held by a sketch shortlist
    /// of one thought in `one_in`.
    fn shortlist_recall(c: &Chain, vectors: &[Vec<f32>], queries: &[Vec<f32>], one_in: usize) -> f64 {
        let index = c.ranked_index();
        let rows = index.thought_vectors().rows();
        let (mut found, mut total) = (0, 0);
        for qv in queries {
            let q = rows.query(qv).unwrap();
            let (distances, histogram) = index.thought_vectors().distances(&q);
            let shortlist = crate::ranked::sketch::nearest_by_sketch(&distances, &histogram, index.len() / one_in);
            let exact = exact_nearest(vectors, qv, 10);
            found += exact.iter().filter(|d| shortlist.contains(d)).count();
            total += exact.len();
        }
        found as f64 / total as f64
    }

    #[test]
    fn the_sketch_shortlist_holds_the_exact_nearest_thoughts() {
        let (c, vectors, queries) = clustered_chain(3_000, 40);
        let recall = shortlist_recall(&c, &vectors, &queries, SKETCH_SHORTLIST);
        assert!(recall >= 0.98, "recall of the exact top 10 in a shortlist of one in {SKETCH_SHORTLIST}: {recall}");
    }

    #[test]
    fn the_shortlist_holds_the_nearest_of_vectors_sharing_one_direction() {
        // Every vector about 0.9 along one direction (its cosine to the
        // shared shift), as a sentence model's are. Sketched as they are,
        // most planes leave them all on one side: a shortlist of one in 50
        // (stricter than the stage's, to see the difference) held 0.965 of
        // the exact top 10; sketched less the chain's centre, 0.99.
        let (c, vectors, queries) = clustered_chain_sharing(3_000, 40, 0.66);
        let along_shift = vectors.iter().map(|v| v.iter().sum::<f32>() / (v.iter().map(|x| x * x).sum::<f32>() * 256.0).sqrt()).sum::<f32>() / vectors.len() as f32;
        assert!(along_shift > 0.85, "{along_shift}");
        let recall = shortlist_recall(&c, &vectors, &queries, 50);
        assert!(recall >= 0.98, "recall of the exact top 10 in a shortlist of one in 50: {recall}");
    }

    #[test]
    fn a_narrow_filter_on_a_large_chain_still_gets_its_nearest_thoughts() {
        let (c, _, queries) = clustered_chain(1_000, 5);
        let index = c.ranked_index();
        let rows = index.thought_vectors().rows();
        // One thought in 97: far fewer than VECTOR_CANDIDATES in any shortlist.
        let admit = |d: u32| d.is_multiple_of(97);
        for qv in &queries {
            let q = rows.query(qv).unwrap();
            let (mean, _) = sampled_moments(rows, &q).standardization();
            let got: Vec<u32> = nearest_in_large_chain(index.thought_vectors(), &q, mean, &admit, &Sequential, ROWS_PER_JOB).into_iter().map(|(_, d)| d).collect();
            let want: Vec<u32> = select_nearest(rows.cosines(&q), mean, VECTOR_CANDIDATES, &admit).into_iter().map(|(_, d)| d).collect();
            assert!(!want.is_empty());
            assert_eq!(got, want, "every admitted thought above the mean, as an exact scan finds them");
        }
    }

    #[test]
    fn the_nearest_do_not_depend_on_how_the_scan_is_sliced_or_run() {
        let (c, _, queries) = clustered_chain(2_000, 6);
        let index = c.ranked_index();
        let vectors = index.thought_vectors();
        let rows = vectors.rows();
        let (most, narrow) = (|d: u32| !d.is_multiple_of(3), |d: u32| d.is_multiple_of(97));
        for qv in &queries {
            let q = rows.query(qv).unwrap();
            let (mean, _) = sampled_moments(rows, &q).standardization();
            let whole = nearest_in_large_chain(vectors, &q, mean, &most, &Sequential, ROWS_PER_JOB);
            assert!(!whole.is_empty());
            assert_eq!(nearest_in_large_chain(vectors, &q, mean, &most, &Reversed, 97), whole, "21 slices, run last to first");
            let whole = nearest_in_large_chain(vectors, &q, mean, &narrow, &Sequential, ROWS_PER_JOB);
            assert_eq!(nearest_in_large_chain(vectors, &q, mean, &narrow, &Reversed, 97), whole, "the narrow-filter fallback too");
            let shortlist = shortlist_nearest(vectors, &q, f32::NEG_INFINITY, 10, &|_| true, &Sequential, ROWS_PER_JOB);
            assert_eq!(shortlist_nearest(vectors, &q, f32::NEG_INFINITY, 10, &|_| true, &Reversed, 150), shortlist);
        }
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
        score_vectors(&index, &[2.0, 0.0], 3.0, |_| true, &Sequential, &mut acc);
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
        score_vectors(&index, &[2.0, 0.0], 3.0, |d| d != 0, &Sequential, &mut acc);
        assert_eq!(acc.accs.iter().map(|a| a.doc).collect::<Vec<_>>(), vec![1]);
        assert!((vector(&acc, 1) - part(0.8)).abs() < 1e-4);
    }
}
