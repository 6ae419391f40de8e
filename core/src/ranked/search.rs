//! Ranked search over one chain: BM25F seeds, graph expansion over refs and
//! typed relations, small importance, recency and length signals, and (when the
//! host registered an embedding provider) a vector similarity fused in.
//!
//! Each result's total is the sum of its parts, all reported:
//!
//! * `lexical` — BM25F over content, tags, concepts and agent ([`super::bm25`]),
//!   plus phrases: two query words next to each other (stopwords aside)
//!   that stand next to each other, in that order, in a thought's content
//!   add `PHRASE_WEIGHT * BM25` of the pair as if it were one more term.
//! * `expansion` — hybrid only: a query word that a thought lacks also
//!   matches the thought's words of similar meaning ([`super::expansion`]):
//!   `weight * BM25F` of the chain word, with its IDF capped at the query
//!   word's, where `weight` rises from 0 at cosine
//!   [`super::expansion::EXPANSION_MIN_SIMILARITY`] to 1 at cosine 1; per
//!   query word the best such word of the thought counts. Expanded words
//!   count as covered for `stretch`, and a thought matched this way lends
//!   `context` like a direct match.
//! * `graph` / `relation` — a thought reached from a seed at depth `d`
//!   through a ref (`graph`) or a typed relation (`relation`) gets
//!   `seed score * GRAPH_DECAY^d * edge weight` (best seed wins).
//! * `importance` — `IMPORTANCE_WEIGHT * importance`.
//! * `recency` — `RECENCY_WEIGHT * 0.5^(age / RECENCY_HALF_LIFE_MS)`, age
//!   measured from `as_of` or the chain's newest thought (never a clock).
//! * `vector` — `VECTOR_WEIGHT * max(z, 0) * s`, with `z` the thought's
//!   cosine to the query standardized over the chain (`(cos - mean) / sd`,
//!   with one pseudo-thought at cosine 0) and `s` the best lexical score
//!   of the query (1 when nothing matched lexically), so the two signals
//!   stay on one scale and a thought only as similar as the chain's
//!   average gets nothing.
//! * `context` — conversational context: a thought gets
//!   `CONTEXT_WEIGHT * CONTEXT_DECAY^(d-1) * (words + CONTEXT_VECTOR_SHARE *
//!   min(vector, CONTEXT_VECTOR_CAP * words))`, `words` being `lexical +
//!   expansion`, of every direct match `d <= CONTEXT_WINDOW` places away from it in append order,
//!   summed, when the two are in the same session (equal `session_id`, or
//!   both without one) and stamped at most `CONTEXT_MAX_GAP_MS` apart; a
//!   match that asks a question (has a `?`) lends `CONTEXT_REPLY_BOOST`
//!   times as much to the thoughts after it. In a conversation the answer
//!   to a question usually sits next to the turns that share the
//!   question's words (the turn that asked it, the turn that named the
//!   topic); `context: false` in a query turns it off. Context and the
//!   graph shares both mean "near a match", so they do not stack: the
//!   reported `context` is only what exceeds `graph + relation`
//!   (`max(context - graph - relation, 0)`), and a thought's near-ness adds
//!   `max(graph + relation, context)` to its total. Nor does context stack
//!   fully with the thought's own match: `CONTEXT_OVERLAP` times the
//!   smaller of the two (own match: `lexical + expansion + vector`) is
//!   taken back from it, since both mostly show that the stretch is about
//!   the question's subject.
//! * `agent` — `AGENT_WEIGHT * s` (`s` the best lexical score) when a query
//!   term matches the thought's agent field (id, name, owner): a question
//!   that names someone is mostly answered by what that someone wrote
//!   ("What do Melanie's kids like?"), yet BM25 saturates a name that sits
//!   on half the thoughts of a two-person chat to almost nothing.
//! * `length` — `LENGTH_WEIGHT * s * ln(len / mean)`, the log clamped to
//!   ±1: a thought's content words against its author's mean (its
//!   `agent_id`'s thoughts, drawn toward the chain's mean by
//!   `AUTHOR_PRIOR_THOUGHTS` thoughts). Among
//!   thoughts that score alike, the one that says more is likelier to hold
//!   the answer (BM25 has already divided each word's frequency by length).
//! * `stretch` — how much of the query the stretch around a thought covers:
//!   `STRETCH_WEIGHT * s * covered / query`, with `query` the summed IDF of
//!   the query's terms, `covered` the summed IDF of those matched by some
//!   thought within `STRETCH_WINDOW` places of it (itself included; the
//!   same conversation rule as `context`) and `s` the best lexical score.
//!   A turn in a stretch that talks about everything the question asks
//!   ranks above one whose only match is a lone common word; a question
//!   whose words are spread over several turns of one exchange ("When did
//!   Melanie paint a sunrise?": the name in one turn, the painting in the
//!   next) finds that exchange. Given to every candidate.
//!
//! The stages, in the order they run, each in its own module: terms and
//! phrases (`lexical.rs`), expansion by meaning (`expansion.rs`), vectors
//! (`vectors.rs`), conversational context (`conversation.rs`), the graph
//! (`graph.rs`), then the partial scores and pruning (`hits.rs`), the
//! stretch (`stretch.rs`) and the assembled hits (`hits.rs`). They share
//! the per-query accumulators and the one best-first order of
//! `candidates.rs`.

use super::candidates::{Accumulators, Scope};
pub use super::candidates::MAX_MATCH_CANDIDATES;
use super::conversation::{lend_context, overlap_with_own_match, yield_to_graph};
use super::expansion::score_expansions;
use super::graph::spread_graph;
use super::hits::{best_hits, full_scores, partial_scores, prune};
use super::index::RankedIndex;
use super::lexical::{score_phrases, score_terms};
use super::query::QueryWords;
use super::rerank::rerank;
use super::stretch::{add_stretch, max_stretch};
use super::vectors::score_vectors;
use super::corpus::Corpus;

pub use super::conversation::{context_neighbours, CONTEXT_DECAY, CONTEXT_MAX_GAP_MS, CONTEXT_OVERLAP, CONTEXT_REPLY_BOOST, CONTEXT_SEEDS, CONTEXT_VECTOR_CAP, CONTEXT_VECTOR_SHARE, CONTEXT_WEIGHT, CONTEXT_WINDOW};
pub use super::graph::{edge_weight, GraphOptions, GRAPH_DECAY, MAX_GRAPH_SEEDS};
pub use super::hits::{RankedHit, RankedResults, ScoreParts, AGENT_WEIGHT, IMPORTANCE_WEIGHT, LENGTH_WEIGHT, RECENCY_HALF_LIFE_MS, RECENCY_WEIGHT};
pub use super::lexical::PHRASE_WEIGHT;
pub use super::query::{embed_query, exists_as_of, known_word_vectors, query_terms, RankedQuery, WordVectors, MAX_QUERY_TERMS};
pub use super::stretch::{stretch_neighbours, STRETCH_WEIGHT, STRETCH_WINDOW};
pub use super::vectors::{nearest_rows, EXACT_VECTORS_UP_TO, SIMILARITY_SAMPLE, SKETCH_SHORTLIST, VECTOR_CANDIDATES, VECTOR_WEIGHT};

/// Runs `q` over `chain`: the stages in order, over one set of accumulators.
pub fn ranked_search(chain: &(impl Corpus + ?Sized), q: &RankedQuery) -> RankedResults {
    let index_guard = chain.ranked_index();
    let index: &RankedIndex = &index_guard;
    let thoughts = chain.thoughts();
    // A forgotten thought has nothing left to match or to lend.
    // (Asked of every candidate: a chain with no forgotten thought is not read per thought.)
    let any_forgotten = chain.has_forgotten();
    let exists = |doc: u32| exists_as_of(thoughts, doc, q.as_of_ms) && !(any_forgotten && thoughts[doc as usize].is_forgotten());
    let hides = chain.retired_filter(q.include_superseded, q.as_of_ms);
    let unfiltered = q.filter.matches_every_thought();
    let admit = |doc: u32| exists(doc) && !hides(doc as usize) && (unfiltered || q.filter.matches(&thoughts[doc as usize], thoughts[doc as usize].timestamp_ms));
    let scope = Scope { exists, admit };
    let words = QueryWords::in_index(q.text, index);
    let terms = &words.terms;
    let mut acc = Accumulators::new(index.len());
    acc.reserve(likely_candidates(index, terms));

    // Terms and phrases: every thought a query term matches is a candidate.
    let avg = index.avg_field_lens();
    let idfs = score_terms(index, terms, &avg, &mut acc);
    score_phrases(index, &words, &avg, &mut acc);
    let best_lexical = acc.best_lexical();
    // Expansion by meaning (hybrid only).
    if index.embedder().is_some() && !q.word_vectors.is_empty() {
        score_expansions(index, terms, &idfs, &q.word_vectors, &avg, &mut acc);
    }
    // On a large chain, common words match a good share of it: only the
    // best matches go on to the costlier stages (counted in `total`).
    let dropped = acc.keep_best_matches(MAX_MATCH_CANDIDATES);
    // Vectors (hybrid only): every candidate's similarity; the nearest thoughts join.
    let hybrid = q.query_vector.is_some() && index.embedder().is_some();
    if let (true, Some(qv)) = (hybrid, &q.query_vector) {
        let scale = if best_lexical > 0.0 { best_lexical } else { 1.0 };
        score_vectors(index, qv, scale, admit, q.parallelism, &mut acc);
    }
    // No usable query terms and no vectors: every thought is a candidate,
    // ranked by the small signals alone.
    let browse = terms.is_empty() && !hybrid;
    if browse {
        for doc in 0..index.len() as u32 {
            acc.entry(doc);
        }
    }
    // Conversational context, then the graph; the two do not stack.
    if q.context && !browse {
        lend_context(index, &scope, &mut acc);
    }
    if q.graph.max_depth > 0 && !browse {
        spread_graph(index, &q.graph, q.limit, &scope, &mut acc);
    }
    yield_to_graph(&mut acc);
    overlap_with_own_match(&mut acc);

    // Admitted candidates with everything but the stretch and the small
    // signals; those that cannot make the cut even with them are never
    // fully scored.
    acc.settle_admission(&scope);
    let mut partial = partial_scores(index, &acc, best_lexical);
    let total = partial.len() + dropped.iter().filter(|d| acc.get(**d).is_none() && admit(**d)).count();
    let query_idf: f32 = idfs.iter().sum();
    let stretch_on = q.context && !browse && query_idf > 0.0 && best_lexical > 0.0;
    // Reranking may lift any candidate by its fused score: nothing is pruned then.
    let prune_to = if q.rerank_k.is_some() { 0 } else { q.limit };
    prune(&mut partial, prune_to, if stretch_on { max_stretch(best_lexical) } else { 0.0 });
    if stretch_on {
        add_stretch(index, &idfs, best_lexical, prune_to, &scope, &mut acc, &mut partial);
        prune(&mut partial, prune_to, 0.0);
    }
    let mut scored = full_scores(index, thoughts, &acc, &partial, q.as_of_ms, hybrid, best_lexical);
    if let Some(k) = q.rerank_k {
        rerank(&mut scored, k);
    }
    let hits = best_hits(index, &acc, scored, terms, q.limit, total);
    RankedResults { backend: if hybrid { "hybrid" } else { "lexical" }, total, hits }
}

/// Room for a query's candidates, made once rather than grown by doubling
/// stage by stage (a chat question's names match half the chain): every
/// thought a query term holds, and the neighbours the context stage's
/// lenders may add; at most the chain.
fn likely_candidates(index: &RankedIndex, terms: &[(String, String)]) -> usize {
    let matched: usize = terms.iter().filter_map(|(term, _)| index.term_id(term)).map(|id| index.doc_freq(id) as usize).sum();
    let neighbours = CONTEXT_SEEDS * 2 * CONTEXT_WINDOW as usize;
    (matched + neighbours).min(index.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::{Chain, NewThought};
    use crate::query::ThoughtFilter;
    use crate::ranked::bm25;
    use crate::ranked::index::Field;
    use crate::record::ChainFormat;
    use crate::thought::ThoughtType;

    /// `(agent, session, minute, content)` per thought.
    fn chain(items: &[(&str, Option<&str>, i64, &str)]) -> Chain {
        let mut c = Chain::new("ctx", ChainFormat::Binary);
        for (i, (agent, session, minute, content)) in items.iter().enumerate() {
            let mut n = NewThought::new(agent, ThoughtType::FactLearned, content);
            n.session_id = session.map(str::to_string);
            let ts = chrono::DateTime::from_timestamp_millis(1_700_000_000_000 + minute * 60_000).unwrap().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            let t = c.prepare_append(n, ts, format!("id-{i}"), [0; 16]).unwrap();
            c.commit(t);
        }
        c
    }

    fn search(c: &Chain, text: &str, context: bool) -> RankedResults {
        let filter = ThoughtFilter::default();
        ranked_search(c, &RankedQuery { text, filter: &filter, limit: 10, graph: GraphOptions::default(), as_of_ms: None, include_superseded: false, query_vector: None, context, word_vectors: Vec::new(), rerank_k: None, parallelism: &crate::Sequential })
    }

    fn order(r: &RankedResults) -> Vec<u64> {
        r.hits.iter().map(|h| h.index).collect()
    }

    #[test]
    fn the_reply_next_to_a_matching_question_ranks_with_context() {
        let c = chain(&[
            ("ada", None, 0, "Lunch was pasta again."),
            ("bob", None, 1, "Any plans for the summer holidays?"),
            ("ada", None, 2, "Researching adoption agencies, it has been a dream."),
            ("bob", None, 3, "That sounds wonderful."),
            ("ada", None, 4, "The weather turned cold."),
        ]);
        let r = search(&c, "What are the summer plans?", true);
        assert_eq!(order(&r)[..2], [1, 2], "the answer follows the question: {r:?}");
        let answer = &r.hits[1];
        assert!(answer.score.lexical == 0.0 && answer.score.context > 0.0, "{answer:?}");
        assert_eq!(answer.match_sources, vec!["context"]);
        let q = r.hits[0].score.lexical;
        let boost = CONTEXT_REPLY_BOOST;
        assert!((answer.score.context - boost * CONTEXT_WEIGHT * q).abs() < 1e-4, "the reply to a question, one step away");
        let two_away = r.hits.iter().find(|h| h.index == 3).expect("two places away");
        assert!((two_away.score.context - boost * CONTEXT_WEIGHT * CONTEXT_DECAY * q).abs() < 1e-4, "{two_away:?}");
        let before = r.hits.iter().find(|h| h.index == 0).expect("one place before");
        assert!((before.score.context - CONTEXT_WEIGHT * q).abs() < 1e-4, "a question lends the plain share backwards: {before:?}");
        assert!(!r.hits.iter().any(|h| h.index == 4), "three places away is out of the window");
        // Off on request: only direct matches.
        let r = search(&c, "What are the summer plans?", false);
        assert!(!order(&r).contains(&2), "{r:?}");
        assert!(r.hits.iter().all(|h| h.score.context == 0.0));
    }

    #[test]
    fn context_stays_within_a_session_and_a_time_gap() {
        let c = chain(&[
            ("ada", Some("s1"), 0, "Any plans for the summer?"),
            ("bob", Some("s2"), 1, "Kayaking in Norway."),
            ("ada", None, 2, "Any plans for the winter?"),
            ("bob", None, 2 + 61, "Skiing in the Alps."),
            ("ada", None, 200, "Any plans for the autumn?"),
            ("bob", None, 201, "Hiking in Wales."),
        ]);
        let got = |text: &str| order(&search(&c, text, true));
        assert_eq!(got("summer"), vec![0], "another session_id is another conversation");
        assert_eq!(got("winter"), vec![2], "an hour and more apart is another conversation");
        assert_eq!(got("autumn"), vec![4, 5], "close in time, both without a session");
        // A boundary stops the walk: thought 5 lends nothing past the gap to 3.
        let r = search(&c, "hiking wales", true);
        assert_eq!(order(&r), vec![5, 4]);
    }

    #[test]
    fn graph_and_context_do_not_stack() {
        // Thought 2 follows the match and refs it, with none of the query's
        // words: it is near the match twice over, yet must not outrank it.
        let mut c = Chain::new("ctx", ChainFormat::Binary);
        for (i, (content, refs)) in [("Lunch was pasta again.", vec![]), ("We went kayaking in Norway.", vec![]), ("Wow, sounds great.", vec![1u64])].into_iter().enumerate() {
            let mut n = NewThought::new("ada", ThoughtType::FactLearned, content);
            n.refs = refs;
            let ts = chrono::DateTime::from_timestamp_millis(1_700_000_000_000 + i as i64 * 60_000).unwrap().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            let t = c.prepare_append(n, ts, format!("id-{i}"), [0; 16]).unwrap();
            c.commit(t);
        }
        let r = search(&c, "kayaking", true);
        assert_eq!(order(&r)[0], 1, "the match itself ranks first: {r:?}");
        let follow = r.hits.iter().find(|h| h.index == 2).unwrap();
        let q = r.hits[0].score.lexical;
        assert!((follow.score.graph - GRAPH_DECAY * q).abs() < 1e-4, "{follow:?}");
        assert_eq!(follow.score.context, 0.0, "context within the graph share adds nothing: {follow:?}");
        assert!(!follow.match_sources.contains(&"context"), "{follow:?}");
        // The thought before the match has no ref: plain context.
        let before = r.hits.iter().find(|h| h.index == 0).unwrap();
        assert!((before.score.context - CONTEXT_WEIGHT * q).abs() < 1e-4, "{before:?}");
    }

    #[test]
    fn a_stretch_covering_more_of_the_query_ranks_its_turns_higher() {
        // The same turn in two conversations; only the first also mentions
        // the lake, three places back (beyond `context`, within the stretch).
        let c = chain(&[
            ("ada", Some("s1"), 0, "The lake was calm."),
            ("bob", Some("s1"), 1, "Yes."),
            ("ada", Some("s1"), 2, "Quiet morning."),
            ("bob", Some("s1"), 3, "Here is my sunrise painting."),
            ("ada", Some("s2"), 4, "Big football match."),
            ("bob", Some("s2"), 5, "Yes."),
            ("ada", Some("s2"), 6, "Loud crowd."),
            ("bob", Some("s2"), 7, "Here is my sunrise painting."),
        ]);
        let r = search(&c, "sunrise painting by the lake", true);
        assert_eq!(order(&r)[..2], [3, 7], "{r:?}");
        let hit = |i: u64| r.hits.iter().find(|h| h.index == i).unwrap().score;
        let best = hit(3).lexical.max(hit(0).lexical);
        assert!((hit(3).stretch - STRETCH_WEIGHT * best).abs() < 1e-4, "the whole query is covered: {:?}", hit(3));
        assert!(hit(7).stretch > 0.0 && hit(7).stretch < hit(3).stretch, "the lake is in the other session: {:?}", hit(7));
        assert_eq!(hit(3).context, 0.0, "three places apart: no context");
        // Without context signals the newer twin wins the tie.
        let r = search(&c, "sunrise painting by the lake", false);
        assert_eq!(order(&r)[..2], [7, 3], "{r:?}");
        assert!(r.hits.iter().all(|h| h.score.stretch == 0.0));
    }

    #[test]
    fn a_query_naming_an_agent_prefers_what_that_agent_wrote() {
        let c = chain(&[
            ("ada", Some("s1"), 0, "I painted the old fence blue."),
            ("bob", Some("s2"), 1, "I painted with Ada, Ada is great, Ada!"),
            ("cy", Some("s3"), 2, "Lunch was pasta."),
        ]);
        let r = search(&c, "What did ada paint?", false);
        assert_eq!(order(&r)[..2], [0, 1], "{r:?}");
        let (own, other) = (r.hits[0].score, r.hits[1].score);
        assert!(own.lexical < other.lexical, "the name in bob's words outweighs it in ada's agent field: {r:?}");
        assert!((own.agent - AGENT_WEIGHT * other.lexical).abs() < 1e-4 && other.agent == 0.0, "{r:?}");
        assert!(r.hits[0].match_sources.contains(&"agent"), "{r:?}");
    }

    #[test]
    fn query_words_next_to_each_other_count_more_where_the_thought_has_them_so() {
        // Same words, same lengths; only the older thought has "video game"
        // as a phrase (the newer would win a tie).
        let c = chain(&[("ada", Some("s1"), 0, "video game night"), ("bob", Some("s2"), 1, "game video night")]);
        let r = search(&c, "Which video game?", false);
        assert_eq!(order(&r), vec![0, 1], "{r:?}");
        let (phrase, words) = (r.hits[0].score.lexical, r.hits[1].score.lexical);
        let idf = bm25::idf(1, 2);
        let len = c.ranked_index().field_lens(0)[Field::Content as usize] as f32;
        let avg = c.ranked_index().avg_field_lens()[Field::Content as usize];
        assert!((phrase - words - PHRASE_WEIGHT * bm25::bm25f(idf, bm25::normalized_tf(1.0, len, avg))).abs() < 1e-5, "{r:?}");
        // Reversed in the query, the other thought holds the phrase.
        assert_eq!(order(&search(&c, "game video", false)), vec![1, 0]);
    }

    #[test]
    fn a_statement_lends_alike_both_ways() {
        let c = chain(&[("ada", None, 0, "Hello there."), ("bob", None, 1, "We went kayaking in Norway."), ("ada", None, 2, "Wow.")]);
        let r = search(&c, "kayaking", true);
        let ctx = |i: u64| r.hits.iter().find(|h| h.index == i).map(|h| h.score.context).unwrap();
        assert!(ctx(0) > 0.0 && (ctx(0) - ctx(2)).abs() < 1e-6, "{r:?}");
    }
}
