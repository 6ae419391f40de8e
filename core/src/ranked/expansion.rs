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
//! match at similarity 1; `score_expansions` is the `expansion` stage of
//! ranked search. Without a provider nothing here runs.

use super::bm25;
use super::candidates::Accumulators;
use super::index::{Field, RankedIndex, FIELD_COUNT};
use super::query::WordVectors;
pub use super::embedded::TermVectors;

/// Cosine below which a word is not taken as an expansion of a query word.
pub const EXPANSION_MIN_SIMILARITY: f32 = 0.6;
/// What an expansion at similarity 1 counts, relative to the query word itself.
pub const EXPANSION_WEIGHT: f32 = 1.0;
/// Most similar chain words taken per query word.
pub const EXPANSION_WORDS_PER_TERM: usize = 5;

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
    expansions_each(vectors, &[word_vector], query_ids).pop().unwrap_or_default()
}

/// [`expansions`] of each of `word_vectors`, in one pass over the chain's words.
fn expansions_each(vectors: &TermVectors, word_vectors: &[&[f32]], query_ids: &[u32]) -> Vec<Vec<Expansion>> {
    let each = vectors.similar_each(word_vectors, EXPANSION_MIN_SIMILARITY);
    each.into_iter()
        .map(|similar| {
            let mut near: Vec<(f32, u32)> = similar.into_iter().filter(|(_, id)| !query_ids.contains(id)).collect();
            near.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            near.truncate(EXPANSION_WORDS_PER_TERM);
            near.into_iter()
                .map(|(sim, term)| Expansion { term, weight: EXPANSION_WEIGHT * (sim - EXPANSION_MIN_SIMILARITY) / (1.0 - EXPANSION_MIN_SIMILARITY) })
                .collect()
        })
        .collect()
}

/// Expansion (hybrid only): a query word also matches the chain's words of
/// similar meaning ([`expansions`]) in thoughts that lack the word itself;
/// per query word, the best such word of a thought counts, with its IDF
/// capped at the query word's (never worth more than the word would be).
/// `idfs` are the query terms' IDFs from [`super::lexical::score_terms`].
pub(crate) fn score_expansions(index: &RankedIndex, terms: &[(String, String)], idfs: &[f32], word_vectors: &WordVectors, avg: &[f32; FIELD_COUNT], acc: &mut Accumulators) {
    let n = index.len() as u32;
    let query_ids: Vec<u32> = terms.iter().filter_map(|(t, _)| index.term_id(t)).collect();
    // The query words that have a vector, and their expansions, looked up together.
    let with_vectors: Vec<(usize, &[f32])> = terms.iter().enumerate().filter_map(|(bit, (term, _))| Some((bit, word_vectors.iter().find(|(t, _)| t == term)?.1.as_slice()))).collect();
    let each = expansions_each(index.term_vectors(), &with_vectors.iter().map(|(_, v)| *v).collect::<Vec<_>>(), &query_ids);
    for ((bit, _), expansions) in with_vectors.into_iter().zip(each) {
        let cap = if idfs[bit] > 0.0 { idfs[bit] } else { f32::MAX };
        // (thought, score, chain word), then the best per thought, in thought order.
        let mut found: Vec<(u32, f32, u32)> = Vec::new();
        for e in expansions {
            let idf = bm25::idf(index.doc_freq(e.term), n).min(cap);
            for p in index.postings(e.term) {
                if acc.get(p.doc()).is_some_and(|a| a.terms & (1 << bit) != 0) {
                    continue;
                }
                let lens = index.field_lens(p.doc());
                let field = p.field() as usize;
                let tf = Field::ALL[field].weight() * bm25::normalized_tf(f32::from(p.tf()), f32::from(lens[field]), avg[field]);
                found.push((p.doc(), e.weight * bm25::bm25f(idf, tf), e.term));
            }
        }
        found.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)).then(a.2.cmp(&b.2)));
        found.dedup_by_key(|f| f.0);
        for (doc, score, word) in found {
            let a = acc.entry(doc);
            if score > a.expansion_best {
                a.expansion_best = score;
                a.expansion_word = word;
            }
            a.expansion += score;
            a.expanded |= 1 << bit;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::{Chain, NewThought};
    use crate::ranked::lexical::score_terms;
    use crate::ranked::query::query_terms;
    use crate::ranked::EmbeddingProvider;
    use crate::record::ChainFormat;
    use crate::thought::ThoughtType;
    use std::sync::Arc;

    #[test]
    fn expansions_take_the_closest_words_weighted_by_similarity() {
        // Term 0 is the query word itself, 1-7 are similar to it by falling amounts.
        let sims = [1.0f32, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.55];
        let v: TermVectors = sims.iter().map(|s| Some(vec![*s, (1.0 - s * s).sqrt(), 0.0])).collect();
        let got = expansions(&v, &[1.0, 0.0, 0.0], &[0]);
        assert_eq!(got.iter().map(|e| e.term).collect::<Vec<_>>(), vec![1, 2, 3, 4, 5], "the query term and the tail are left out");
        let expected = EXPANSION_WEIGHT * (0.95 - EXPANSION_MIN_SIMILARITY) / (1.0 - EXPANSION_MIN_SIMILARITY);
        assert!((got[0].weight - expected).abs() < 1e-5, "{got:?}");
        assert!(got.windows(2).all(|w| w[0].weight > w[1].weight));
        assert!(expansions(&v, &[0.0, 0.0, 1.0], &[]).is_empty(), "nothing is that close to an unrelated word");
    }

    /// "kids" and "children" mean alike, "toddlers" a little less; anything else is unrelated.
    #[derive(Debug)]
    struct Meanings;

    impl EmbeddingProvider for Meanings {
        fn name(&self) -> &str {
            "meanings"
        }
        fn embed(&self, text: &str) -> Option<Vec<f32>> {
            Some(match text {
                "kids" | "children" => vec![1.0, 0.0, 0.0],
                "toddlers" => vec![0.8, 0.6, 0.0],
                _ => vec![0.0, 0.0, 1.0],
            })
        }
    }

    #[test]
    fn a_query_word_matches_words_of_like_meaning_where_it_is_missing() {
        let mut c = Chain::new("exp", ChainFormat::Binary);
        for (i, content) in ["kids at the park", "children and kids", "toddlers and kids playing", "toddlers nap", "the weather"].into_iter().enumerate() {
            let t = c.prepare_append(NewThought::new("ada", ThoughtType::FactLearned, content), format!("2026-01-01T00:00:0{i}.000Z"), format!("id-{i}"), [0; 16]).unwrap();
            c.commit(t);
        }
        c.set_embedding_provider(Some(Arc::new(Meanings)));
        let index = c.ranked_index();
        let terms = query_terms("children");
        let word_vectors = vec![("children".to_string(), Meanings.embed("children").unwrap())];
        let avg = index.avg_field_lens();
        let mut acc = Accumulators::new(index.len());
        let idfs = score_terms(&index, &terms, &avg, &mut acc);
        score_expansions(&index, &terms, &idfs, &word_vectors, &avg, &mut acc);
        let got = |d: u32| acc.get(d).map(|a| (a.expansion > 0.0, a.expanded, index.surface(a.expansion_word).to_string()));
        assert_eq!(got(1), Some((false, 0, index.surface(0).to_string())), "has the word itself: no stand-in");
        assert_eq!(got(0), Some((true, 1, "kids".to_string())));
        assert_eq!(got(2), Some((true, 1, "kids".to_string())), "the best stand-in of the thought is named");
        assert_eq!(got(3), Some((true, 1, "toddlers".to_string())));
        assert!(acc.get(4).is_none(), "nothing alike: not a candidate");
        let (kids, toddlers) = (acc.get(0).unwrap().expansion, acc.get(3).unwrap().expansion);
        assert!(kids <= idfs[0] * 2.0 && toddlers < kids, "capped at the query word's IDF, weighted by likeness: {kids} {toddlers}");
        // Without word vectors nothing is expanded.
        let mut plain = Accumulators::new(index.len());
        score_expansions(&index, &terms, &idfs, &Vec::new(), &avg, &mut plain);
        assert!(plain.accs.is_empty());
    }
}
