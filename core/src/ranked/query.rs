//! A ranked query and what is read off its text before any scoring: its
//! distinct terms, the pairs of them that stand next to each other, and (with
//! a provider) the vectors of the whole text and of its words.

use super::analyzer::Analyzer;
use super::embedding::EmbeddingProvider;
use super::graph::GraphOptions;
use super::index::RankedIndex;
use crate::host::Parallelism;
use crate::thought_list::ThoughtList;
use super::corpus::ThoughtMatch;

/// Most distinct query terms used (the rest are ignored).
pub const MAX_QUERY_TERMS: usize = 64;

/// One ranked query.
#[derive(Debug, Clone)]
pub struct RankedQuery<'a> {
    /// The query text.
    pub text: &'a str,
    /// Which thoughts may be returned.
    pub filter: &'a dyn ThoughtMatch,
    /// At most this many results.
    pub limit: usize,
    /// Expansion through refs and relations.
    pub graph: GraphOptions,
    /// Answer as the chain stood at this time (epoch ms).
    pub as_of_ms: Option<i64>,
    /// Keep thoughts retired by Supersedes / Invalidates / Corrects.
    pub include_superseded: bool,
    /// The query's vector, when the host has an embedding provider.
    pub query_vector: Option<Vec<f32>>,
    /// Score conversational context (neighbours in append order); default on.
    pub context: bool,
    /// The vectors of the query's words by index term, for expansion by
    /// meaning ([`embed_query`]; empty without a provider).
    pub word_vectors: WordVectors,
    /// Rerank with Reciprocal Rank Fusion over this many candidates per
    /// signal ([`super::rerank`]); `None` (the default) does not.
    pub rerank_k: Option<usize>,
    /// How the host runs the scan of a large chain's vectors (the
    /// engine's [`crate::DbConfig::parallelism`]; [`crate::Sequential`] runs it in turn).
    pub parallelism: &'a dyn Parallelism,
}

/// Vectors of a query's words, keyed by their index term.
pub type WordVectors = Vec<(String, Vec<f32>)>;

/// The query's vector and the vectors of its words by index term (for
/// [`RankedQuery::query_vector`] and [`RankedQuery::word_vectors`]), in
/// one batch through the provider. `known` holds, aligned with
/// [`query_terms`], the vectors the chain already has for some words
/// ([`known_word_vectors`]); only the others are embedded, so a question
/// made of the chain's own words costs the provider one text.
pub fn embed_query(provider: &dyn EmbeddingProvider, text: &str, known: &[Option<Vec<f32>>]) -> (Option<Vec<f32>>, WordVectors) {
    let terms = query_terms(text);
    let is_known = |i: usize| known.get(i).is_some_and(Option::is_some);
    let mut texts: Vec<&str> = vec![text];
    texts.extend(terms.iter().enumerate().filter(|(i, _)| !is_known(*i)).map(|(_, (_, s))| s.as_str()));
    let mut out = provider.embed_batch(&texts).into_iter();
    let whole = out.next().flatten();
    let words = terms
        .into_iter()
        .enumerate()
        .filter_map(|(i, (t, _))| if is_known(i) { known[i].clone() } else { out.next().flatten() }.map(|v| (t, v)))
        .collect();
    (whole, words)
}

/// The vectors `index` holds for the query's `terms` ([`query_terms`]),
/// aligned with them: a term the index first saw as the same word as the
/// query's was embedded from the same text, so its vector is reused (unit
/// length; expansion compares by cosine). `None` for the others.
pub fn known_word_vectors(index: &RankedIndex, terms: &[(String, String)]) -> Vec<Option<Vec<f32>>> {
    let vectors = index.term_vectors();
    terms
        .iter()
        .map(|(term, surface)| index.term_id(term).filter(|&id| index.surface(id) == surface).and_then(|id| vectors.row(id)))
        .collect()
}

/// The distinct query terms with the surface word each came from, at most
/// [`MAX_QUERY_TERMS`] (a term's position is its bit in the stages' masks).
pub fn query_terms(text: &str) -> Vec<(String, String)> {
    QueryWords::of(text).terms
}

/// A query's text analyzed once: its distinct terms ([`query_terms`]) and
/// the pairs of them (positions in `terms`) that stand next to each other
/// in the text, stopwords aside, in order and each pair once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QueryWords {
    pub(crate) terms: Vec<(String, String)>,
    pub(crate) pairs: Vec<(usize, usize)>,
}

impl QueryWords {
    /// `text`'s terms and pairs, from one pass of the analyzer.
    pub(crate) fn of(text: &str) -> Self {
        Self::of_tokens(Analyzer.tokens(text))
    }

    /// [`Self::of`], with the terms of words `index` has met taken from it
    /// rather than stemmed again (the same terms).
    pub(crate) fn in_index(text: &str, index: &super::RankedIndex) -> Self {
        Self::of_tokens(Analyzer.tokens_knowing(text, |w| index.known_term(w)))
    }

    fn of_tokens(tokens: Vec<super::analyzer::Token>) -> Self {
        let mut terms: Vec<(String, String)> = Vec::new();
        // Each word's position in `terms` (none past the first
        // `MAX_QUERY_TERMS` distinct terms).
        let mut positions: Vec<Option<usize>> = Vec::new();
        for tok in tokens {
            let position = match terms.iter().position(|(t, _)| *t == tok.term) {
                Some(p) => Some(p),
                None if terms.len() < MAX_QUERY_TERMS => {
                    terms.push((tok.term, tok.surface));
                    Some(terms.len() - 1)
                }
                None => None,
            };
            positions.push(position);
        }
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        for w in positions.windows(2) {
            if let [Some(a), Some(b)] = *w {
                if !pairs.contains(&(a, b)) {
                    pairs.push((a, b));
                }
            }
        }
        QueryWords { terms, pairs }
    }
}

/// Whether thought `doc` of `thoughts` exists for a query answered as of
/// `as_of_ms` (stamped at or before it; every thought when `None`).
pub fn exists_as_of(thoughts: &ThoughtList, doc: u32, as_of_ms: Option<i64>) -> bool {
    as_of_ms.is_none_or(|a| thoughts[doc as usize].timestamp_ms <= a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_distinct_and_keep_their_first_surface() {
        let t = query_terms("Painting, paints and the painted fence?");
        assert_eq!(t, vec![("paint".to_string(), "painting".to_string()), ("fenc".to_string(), "fence".to_string())]);
        let many: String = (0..100).map(|i| format!("w{i} ")).collect();
        assert_eq!(query_terms(&many).len(), MAX_QUERY_TERMS);
    }

    #[test]
    fn pairs_are_adjacent_terms_stopwords_aside_each_once() {
        let text = "the video, the game, video game";
        assert_eq!(QueryWords::of(text).pairs, vec![(0, 1), (1, 0)]);
        assert!(QueryWords::of("video").pairs.is_empty());
        // Past the most terms kept, a new word has no place and makes no pair.
        let many: String = (0..MAX_QUERY_TERMS).map(|i| format!("w{i} ")).collect::<String>() + "w0 w1 zebra w2 w0";
        let words = QueryWords::of(&many);
        assert_eq!(words.terms.len(), MAX_QUERY_TERMS);
        let last = MAX_QUERY_TERMS - 1;
        assert_eq!(words.pairs[last..], [(last, 0), (2, 0)], "w1 zebra and zebra w2 are no pairs; w0 w1 was one already");
    }

    /// Embeds every text as `[len, 1]`.
    #[derive(Debug)]
    struct ByLength;

    impl EmbeddingProvider for ByLength {
        fn name(&self) -> &str {
            "by-length"
        }
        fn embed(&self, text: &str) -> Option<Vec<f32>> {
            Some(vec![text.len() as f32, 1.0])
        }
    }

    #[test]
    fn embed_query_embeds_the_text_and_each_term_by_its_surface() {
        let (whole, words) = embed_query(&ByLength, "Kids hiking", &[]);
        assert_eq!(whole, Some(vec![11.0, 1.0]));
        assert_eq!(words, vec![("kid".to_string(), vec![4.0, 1.0]), ("hike".to_string(), vec![6.0, 1.0])]);
    }

    /// [`ByLength`], remembering every text it was asked for.
    #[derive(Debug, Default)]
    struct Recording(std::sync::Mutex<Vec<String>>);

    impl EmbeddingProvider for Recording {
        fn name(&self) -> &str {
            "recording"
        }
        fn embed(&self, text: &str) -> Option<Vec<f32>> {
            self.0.lock().unwrap().push(text.to_string());
            ByLength.embed(text)
        }
    }

    #[test]
    fn words_the_chain_saw_in_the_same_form_are_not_embedded_again() {
        use crate::chain::{Chain, NewThought};
        use crate::record::ChainFormat;
        use crate::thought::ThoughtType;
        let mut chain = Chain::new("words", ChainFormat::Binary);
        for (i, content) in ["kids play", "went hiking"].into_iter().enumerate() {
            let t = chain.prepare_append(NewThought::new("ada", ThoughtType::FactLearned, content), format!("2026-01-01T00:00:0{i}.000Z"), format!("id-{i}"), [0; 16]).unwrap();
            chain.commit(t);
        }
        chain.set_embedding_provider(Some(std::sync::Arc::new(ByLength)));
        let terms = query_terms("kids hike");
        let known = known_word_vectors(&chain.ranked_index(), &terms);
        // "kids" was seen as "kids"; "hike" only as "hiking", a different text.
        // Stored quantized (`quantized.rs`): the unit vector within rounding.
        let kids = known[0].clone().expect("kids is known");
        assert!(known[1].is_none());
        let unit = [4.0 / 17f32.sqrt(), 1.0 / 17f32.sqrt()];
        assert!(kids.iter().zip(unit).all(|(x, y)| (x - y).abs() < 0.005), "{kids:?}");
        let provider = Recording::default();
        let (whole, words) = embed_query(&provider, "kids hike", &known);
        assert_eq!(*provider.0.lock().unwrap(), vec!["kids hike".to_string(), "hike".to_string()]);
        assert_eq!(whole, Some(vec![9.0, 1.0]));
        assert_eq!(words, vec![("kid".to_string(), kids), ("hike".to_string(), vec![4.0, 1.0])]);
    }
}
