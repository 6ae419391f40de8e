//! Query expansion by word meaning (hybrid mode only).
//!
//! With an embedding provider, every distinct word of a chain is embedded
//! once, when the index first meets it (the first form it was seen in:
//! "kids", "painted"), and every word of a query is embedded with the
//! query. A query word then also matches the chain's words whose vectors
//! are close to its own: "children" finds "kids", "instruments" finds
//! "guitar" and "violin", "hikes" finds "hiking" (which the stemmer leaves
//! apart from "hike"). How much such a match counts rises linearly from 0
//! at [`EXPANSION_MIN_SIMILARITY`] to [`EXPANSION_WEIGHT`] of an exact
//! match at similarity 1; see [`super::search`] for the `expansion` score
//! part. Without a provider nothing here runs.

/// Cosine below which a word is not taken as an expansion of a query word.
pub const EXPANSION_MIN_SIMILARITY: f32 = 0.6;
/// What an expansion at similarity 1 counts, relative to the query word itself.
pub const EXPANSION_WEIGHT: f32 = 1.0;
/// Most similar chain words taken per query word.
pub const EXPANSION_WORDS_PER_TERM: usize = 5;

/// Unit-length vectors of an index's terms, one row per term id, in one
/// flat buffer (scanned whole for every query word). A term without a
/// vector, or with one of another dimension, has a zero row and is never
/// similar to anything.
#[derive(Debug, Clone, Default)]
pub struct TermVectors {
    dim: usize,
    count: usize,
    rows: Vec<f32>,
}

impl TermVectors {
    /// Appends the next term's vector.
    pub fn push(&mut self, vector: Option<Vec<f32>>) {
        if let (0, Some(v)) = (self.dim, &vector) {
            self.dim = v.len();
            self.rows = vec![0.0; self.count * self.dim];
        }
        self.count += 1;
        match vector.filter(|v| v.len() == self.dim && self.dim > 0) {
            Some(mut v) => {
                super::embedding::normalize(&mut v);
                self.rows.extend(v);
            }
            None => self.rows.resize(self.count * self.dim, 0.0),
        }
    }

    /// Number of terms (rows).
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether no term has a row.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The unit vector of term `id` (`None` when it has none).
    pub fn row(&self, id: u32) -> Option<&[f32]> {
        let row = self.rows.get(id as usize * self.dim..(id as usize + 1) * self.dim)?;
        (self.dim > 0 && row.iter().any(|x| *x != 0.0)).then_some(row)
    }

    /// Terms whose cosine to `query` is at least `min`, with that cosine, in
    /// term order.
    pub fn similar(&self, query: &[f32], min: f32) -> Vec<(f32, u32)> {
        if self.dim == 0 || query.len() != self.dim {
            return Vec::new();
        }
        let mut q = query.to_vec();
        super::embedding::normalize(&mut q);
        self.rows
            .chunks_exact(self.dim)
            .enumerate()
            .filter_map(|(id, row)| {
                let sim = super::embedding::dot(row, &q);
                (sim >= min).then_some((sim, id as u32))
            })
            .collect()
    }
}

/// A chain word standing in for a query word.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Expansion {
    /// The chain's term id.
    pub term: u32,
    /// What a match counts, relative to an exact match of the query word.
    pub weight: f32,
}

/// Up to [`EXPANSION_WORDS_PER_TERM`] chain words similar in meaning to the
/// query word whose vector is `word_vector`, most similar first; words that
/// are themselves query terms (`query_ids`) are skipped. (How common a
/// word is counts when it is scored: its IDF is capped at the query
/// word's.)
pub fn expansions(vectors: &TermVectors, word_vector: &[f32], query_ids: &[u32]) -> Vec<Expansion> {
    let mut near: Vec<(f32, u32)> = vectors.similar(word_vector, EXPANSION_MIN_SIMILARITY).into_iter().filter(|(_, id)| !query_ids.contains(id)).collect();
    near.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    near.truncate(EXPANSION_WORDS_PER_TERM);
    near.into_iter()
        .map(|(sim, term)| Expansion { term, weight: EXPANSION_WEIGHT * (sim - EXPANSION_MIN_SIMILARITY) / (1.0 - EXPANSION_MIN_SIMILARITY) })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vectors(rows: &[Option<Vec<f32>>]) -> TermVectors {
        let mut v = TermVectors::default();
        rows.iter().cloned().for_each(|r| v.push(r));
        v
    }

    #[test]
    fn rows_are_unit_length_and_missing_ones_are_never_similar() {
        let v = vectors(&[None, Some(vec![3.0, 4.0]), Some(vec![1.0, 0.0, 0.0]), Some(vec![0.0, 2.0])]);
        assert_eq!(v.len(), 4);
        assert_eq!(v.row(0), None, "a term seen before the first vector has a zero row");
        assert_eq!(v.row(1), Some(&[0.6, 0.8][..]));
        assert_eq!(v.row(2), None, "another dimension is treated as no vector");
        let sims = v.similar(&[0.0, 1.0], 0.5);
        assert_eq!(sims.iter().map(|s| s.1).collect::<Vec<_>>(), vec![1, 3]);
        assert!((sims[0].0 - 0.8).abs() < 1e-6 && (sims[1].0 - 1.0).abs() < 1e-6);
        assert!(v.similar(&[1.0, 0.0, 0.0], 0.0).is_empty(), "a query of another dimension matches nothing");
    }

    #[test]
    fn expansions_take_the_closest_words_weighted_by_similarity() {
        // Term 0 is the query word itself, 1-7 are similar to it by falling amounts.
        let sims = [1.0f32, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.55];
        let v = vectors(&sims.iter().map(|s| Some(vec![*s, (1.0 - s * s).sqrt(), 0.0])).collect::<Vec<_>>());
        let got = expansions(&v, &[1.0, 0.0, 0.0], &[0]);
        assert_eq!(got.iter().map(|e| e.term).collect::<Vec<_>>(), vec![1, 2, 3, 4, 5], "the query term and the tail are left out");
        let expected = EXPANSION_WEIGHT * (0.95 - EXPANSION_MIN_SIMILARITY) / (1.0 - EXPANSION_MIN_SIMILARITY);
        assert!((got[0].weight - expected).abs() < 1e-5, "{got:?}");
        assert!(got.windows(2).all(|w| w[0].weight > w[1].weight));
        assert!(expansions(&v, &[0.0, 0.0, 1.0], &[]).is_empty(), "nothing is that close to an unrelated word");
    }
}
