//! Ranked search over one chain: BM25F seeds, graph expansion over refs and
//! typed relations, small importance and recency signals, and (when the
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
//!   `CONTEXT_WEIGHT * CONTEXT_DECAY^(d-1) * (lexical + expansion + vector)` of every
//!   direct match `d <= CONTEXT_WINDOW` places away from it in append order,
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
//!   `max(graph + relation, context)` to its total.
//! * `agent` — `AGENT_WEIGHT * s` (`s` the best lexical score) when a query
//!   term matches the thought's agent field (id, name, owner): a question
//!   that names someone is mostly answered by what that someone wrote
//!   ("What do Melanie's kids like?"), yet BM25 saturates a name that sits
//!   on half the thoughts of a two-person chat to almost nothing.
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

use super::analyzer::Analyzer;
use super::bm25;
use super::embedding::{dot, normalize};
use super::expansion::expansions;
use super::graph::{walk, WalkDirection};
use super::index::{EdgeKind, Field, RankedIndex, FIELD_COUNT};
use crate::chain::Chain;
use crate::query::ThoughtFilter;
use crate::thought::RelationKind;
use serde::Serialize;

/// Score share passed one step along the graph.
pub const GRAPH_DECAY: f32 = 0.5;
/// Weight of importance (0..=1) in the total.
pub const IMPORTANCE_WEIGHT: f32 = 0.1;
/// Weight of recency (0..=1) in the total.
pub const RECENCY_WEIGHT: f32 = 0.1;
/// Recency halves every 30 days.
pub const RECENCY_HALF_LIFE_MS: f64 = 30.0 * 24.0 * 3600.0 * 1000.0;
/// Weight of one standard deviation of vector similarity, relative to the best lexical score.
pub const VECTOR_WEIGHT: f32 = 0.25;
/// Vector-only candidates considered per query in hybrid mode.
pub const VECTOR_CANDIDATES: usize = 100;
/// What a pair of query words found next to each other counts, relative to one query term.
pub const PHRASE_WEIGHT: f32 = 0.5;
/// Most distinct query terms used (the rest are ignored).
pub const MAX_QUERY_TERMS: usize = 64;
/// Seeds the graph expansion starts from, at most.
pub const MAX_GRAPH_SEEDS: usize = 32;
/// Share of a direct match's score lent to its neighbours in append order.
pub const CONTEXT_WEIGHT: f32 = 0.5;
/// Neighbours on each side that receive context.
pub const CONTEXT_WINDOW: u32 = 2;
/// Share kept per extra step away from the match.
pub const CONTEXT_DECAY: f32 = 0.5;
/// Neighbours stamped further apart than this (one hour) are another conversation.
pub const CONTEXT_MAX_GAP_MS: i64 = 3_600_000;
/// A match that asks a question lends this many times more to the thoughts
/// after it: a question is answered by what follows it.
pub const CONTEXT_REPLY_BOOST: f32 = 1.5;
/// Best direct matches that lend context, at most (bounds the work per query).
pub const CONTEXT_SEEDS: usize = 256;
/// Weight of a query naming a thought's agent, relative to the best lexical score.
pub const AGENT_WEIGHT: f32 = 0.5;
/// Places on each side of a thought that make up its stretch.
pub const STRETCH_WINDOW: u32 = 3;
/// Weight of a stretch covering the whole query, relative to the best lexical score.
pub const STRETCH_WEIGHT: f32 = 0.5;

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

/// Graph expansion settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GraphOptions {
    /// Steps from a seed; 0 turns expansion off.
    pub max_depth: u32,
    /// Thoughts reached per seed, at most.
    pub max_visited: usize,
    pub direction: WalkDirection,
}

impl Default for GraphOptions {
    fn default() -> Self {
        GraphOptions { max_depth: 1, max_visited: 64, direction: WalkDirection::Both }
    }
}

/// One ranked query.
#[derive(Debug, Clone)]
pub struct RankedQuery<'a> {
    pub text: &'a str,
    pub filter: &'a ThoughtFilter,
    pub limit: usize,
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
}

/// Vectors of a query's words, keyed by their index term.
pub type WordVectors = Vec<(String, Vec<f32>)>;

/// The query's vector and the vectors of its words by index term (for
/// [`RankedQuery::query_vector`] and [`RankedQuery::word_vectors`]), in
/// one batch through the provider.
pub fn embed_query(provider: &dyn super::EmbeddingProvider, text: &str) -> (Option<Vec<f32>>, WordVectors) {
    let terms = query_terms(text);
    let mut texts: Vec<&str> = vec![text];
    texts.extend(terms.iter().map(|(_, s)| s.as_str()));
    let mut out = provider.embed_batch(&texts).into_iter();
    let whole = out.next().flatten();
    let words = terms.into_iter().zip(out).filter_map(|((t, _), v)| v.map(|v| (t, v))).collect();
    (whole, words)
}

/// The parts of a result's score.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct ScoreParts {
    pub lexical: f32,
    pub expansion: f32,
    pub graph: f32,
    pub relation: f32,
    pub importance: f32,
    pub recency: f32,
    pub context: f32,
    pub stretch: f32,
    pub agent: f32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector: Option<f32>,
    pub total: f32,
}

/// One ranked result.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedHit {
    pub index: u64,
    pub score: ScoreParts,
    pub matched_terms: Vec<String>,
    pub match_sources: Vec<&'static str>,
}

/// A ranked answer.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedResults {
    /// `"lexical"`, or `"hybrid"` when vectors took part.
    pub backend: &'static str,
    /// Candidates that matched (before `limit`).
    pub total: usize,
    pub hits: Vec<RankedHit>,
}

/// Per-query accumulators, only for the thoughts a query touches.
struct Accumulators {
    /// Thought -> position in `accs` (`u32::MAX`: untouched).
    slots: Vec<u32>,
    accs: Vec<Acc>,
    docs: Vec<u32>,
}

impl Accumulators {
    fn new(n: usize) -> Self {
        Accumulators { slots: vec![u32::MAX; n], accs: Vec::new(), docs: Vec::new() }
    }

    fn get(&self, doc: u32) -> Option<&Acc> {
        let s = self.slots[doc as usize];
        (s != u32::MAX).then(|| &self.accs[s as usize])
    }

    fn entry(&mut self, doc: u32) -> &mut Acc {
        let s = self.slots[doc as usize];
        if s != u32::MAX {
            return &mut self.accs[s as usize];
        }
        self.slots[doc as usize] = self.accs.len() as u32;
        self.docs.push(doc);
        self.accs.push(Acc { doc, ..Acc::default() });
        self.accs.last_mut().expect("just pushed")
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Acc {
    doc: u32,
    lexical: f32,
    graph: f32,
    relation: f32,
    context: f32,
    stretch: f32,
    expansion: f32,
    vector: Option<f32>,
    terms: u64,
    /// Query terms matched through a word of similar meaning.
    expanded: u64,
    /// The expansion word that scored most here, and its score.
    expansion_word: u32,
    expansion_best: f32,
    fields: u8,
    /// A query term matched the agent field.
    names_agent: bool,
}

/// The distinct query terms with the surface word each came from.
fn query_terms(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for tok in Analyzer.tokens(text) {
        if out.len() >= MAX_QUERY_TERMS {
            break;
        }
        if !out.iter().any(|(t, _)| *t == tok.term) {
            out.push((tok.term, tok.surface));
        }
    }
    out
}

/// The pairs of query terms (positions in `terms`) that stand next to each
/// other in `text`, stopwords aside, in order and each pair once.
fn query_pairs(text: &str, terms: &[(String, String)]) -> Vec<(usize, usize)> {
    let position = |term: &str| terms.iter().position(|(t, _)| t == term);
    let mut out: Vec<(usize, usize)> = Vec::new();
    for w in Analyzer.tokens(text).windows(2) {
        if let (Some(a), Some(b)) = (position(&w[0].term), position(&w[1].term)) {
            if !out.contains(&(a, b)) {
                out.push((a, b));
            }
        }
    }
    out
}

/// Lexical: BM25F of every query term in every thought holding it. Returns
/// each term's IDF (0 for a term the chain lacks).
fn score_terms(index: &RankedIndex, terms: &[(String, String)], avg: &[f32; FIELD_COUNT], acc: &mut Accumulators) -> Vec<f32> {
    let n = index.len() as u32;
    let mut idfs = vec![0.0f32; terms.len()];
    for (bit, (term, _)) in terms.iter().enumerate() {
        let Some(id) = index.term_id(term) else { continue };
        let idf = bm25::idf(index.doc_freq(id), n);
        idfs[bit] = idf;
        let postings = index.postings(id);
        let mut i = 0;
        while i < postings.len() {
            let doc = postings[i].doc;
            let lens = index.field_lens(doc);
            let mut tf = 0.0f32;
            let mut fields = 0u8;
            while i < postings.len() && postings[i].doc == doc {
                let p = postings[i];
                tf += Field::ALL[p.field as usize].weight() * bm25::normalized_tf(p.tf as f32, lens[p.field as usize] as f32, avg[p.field as usize]);
                fields |= 1 << p.field;
                i += 1;
            }
            let a = acc.entry(doc);
            a.lexical += bm25::bm25f(idf, tf);
            a.terms |= 1 << bit;
            a.fields |= fields;
            a.names_agent |= fields & (1 << Field::Agent as u8) != 0;
        }
    }
    idfs
}

/// Phrases: two query words next to each other ("video game", "grand
/// opening") that also stand next to each other in a thought's content add
/// `PHRASE_WEIGHT` times BM25 of the pair, as if the pair were one more
/// query term: its IDF from the thoughts holding it, its frequency
/// normalized by the content's length. Only thoughts matching both words
/// can hold the pair, and [`score_terms`] touched every one of them.
fn score_phrases(index: &RankedIndex, text: &str, terms: &[(String, String)], avg: &[f32; FIELD_COUNT], acc: &mut Accumulators) {
    let content = Field::Content as usize;
    for (first, second) in query_pairs(text, terms) {
        let (Some(a_id), Some(b_id)) = (index.term_id(&terms[first].0), index.term_id(&terms[second].0)) else { continue };
        let both = (1u64 << first) | (1u64 << second);
        let held: Vec<(usize, u32)> = acc.accs.iter().enumerate().filter(|(_, a)| a.terms & both == both).map(|(slot, a)| (slot, index.adjacent_count(a.doc, a_id, b_id))).filter(|(_, tf)| *tf > 0).collect();
        let idf = bm25::idf(held.len() as u32, index.len() as u32);
        for (slot, tf) in held {
            let a = &mut acc.accs[slot];
            let len = index.field_lens(a.doc)[content] as f32;
            a.lexical += PHRASE_WEIGHT * bm25::bm25f(idf, bm25::normalized_tf(tf as f32, len, avg[content]));
        }
    }
}

/// Expansion (hybrid only): a query word also matches the chain's words of
/// similar meaning ([`expansions`]) in thoughts that lack the word itself;
/// per query word, the best such word of a thought counts, with its IDF
/// capped at the query word's (never worth more than the word would be).
fn score_expansions(index: &RankedIndex, terms: &[(String, String)], idfs: &[f32], word_vectors: &WordVectors, avg: &[f32; FIELD_COUNT], acc: &mut Accumulators) {
    let n = index.len() as u32;
    let query_ids: Vec<u32> = terms.iter().filter_map(|(t, _)| index.term_id(t)).collect();
    for (bit, (term, _)) in terms.iter().enumerate() {
        let Some((_, word_vector)) = word_vectors.iter().find(|(t, _)| t == term) else { continue };
        let cap = if idfs[bit] > 0.0 { idfs[bit] } else { f32::MAX };
        // (thought, score, chain word), then the best per thought, in thought order.
        let mut found: Vec<(u32, f32, u32)> = Vec::new();
        for e in expansions(index.term_vectors(), word_vector, &query_ids) {
            let idf = bm25::idf(index.doc_freq(e.term), n).min(cap);
            for p in index.postings(e.term) {
                if acc.get(p.doc).is_some_and(|a| a.terms & (1 << bit) != 0) {
                    continue;
                }
                let lens = index.field_lens(p.doc);
                let tf = Field::ALL[p.field as usize].weight() * bm25::normalized_tf(p.tf as f32, lens[p.field as usize] as f32, avg[p.field as usize]);
                found.push((p.doc, e.weight * bm25::bm25f(idf, tf), e.term));
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

/// Runs `q` over `chain`.
pub fn ranked_search(chain: &Chain, q: &RankedQuery) -> RankedResults {
    let index_guard = chain.ranked_index();
    let index: &crate::ranked::RankedIndex = &index_guard;
    let thoughts = chain.thoughts();
    let n = index.len();
    let exists = |doc: u32| exists_as_of(index, doc, q.as_of_ms);
    let admit = |doc: u32| -> bool { exists(doc) && (q.include_superseded || !index.is_retired(doc, q.as_of_ms)) && q.filter.matches_fields(&thoughts[doc as usize]) };
    let terms = query_terms(q.text);
    let mut acc = Accumulators::new(n);

    let avg = index.avg_field_lens();
    let idfs = score_terms(index, &terms, &avg, &mut acc);
    score_phrases(index, q.text, &terms, &avg, &mut acc);
    let best_lexical = acc.accs.iter().map(|a| a.lexical).fold(0.0f32, f32::max);
    if index.embedder().is_some() && !q.word_vectors.is_empty() {
        score_expansions(index, &terms, &idfs, &q.word_vectors, &avg, &mut acc);
    }

    // Vectors: every lexical candidate gets its similarity, and the query's
    // nearest thoughts join the candidates.
    let hybrid = q.query_vector.is_some() && index.embedder().is_some();
    if let (true, Some(qv)) = (hybrid, &q.query_vector) {
        let scale = if best_lexical > 0.0 { best_lexical } else { 1.0 };
        // Stored vectors are unit length: the cosine is a dot product with the unit query.
        let mut unit_query = qv.clone();
        normalize(&mut unit_query);
        let dim_ok = |v: &[f32]| v.len() == unit_query.len();
        let sims: Vec<(f32, u32)> = (0..n as u32).filter_map(|d| index.vector(d).map(|v| (if dim_ok(v) { dot(&unit_query, v) } else { 0.0 }, d))).collect();
        // Standardize over the chain: how far above the typical thought's
        // similarity to this query a thought is (cosines of unrelated texts
        // are far from zero and vary by query). One pseudo-thought at
        // cosine 0 (what an unrelated text would score under an ideal
        // model) keeps tiny chains meaningful.
        let m = sims.len() as f32 + 1.0;
        let mean = sims.iter().map(|s| s.0).sum::<f32>() / m;
        let sd = ((sims.iter().map(|s| (s.0 - mean) * (s.0 - mean)).sum::<f32>() + mean * mean) / m).sqrt();
        let part = |sim: f32| if sd > 0.0 { VECTOR_WEIGHT * scale * ((sim - mean) / sd).max(0.0) } else { 0.0 };
        for (sim, doc) in &sims {
            if acc.get(*doc).is_some() {
                acc.entry(*doc).vector = Some(part(*sim));
            }
        }
        // The nearest admitted thoughts above the chain's average join the
        // candidates, nearest first (selected, not sorted in full).
        let mut nearest: Vec<(f32, u32)> = sims.into_iter().filter(|(s, d)| part(*s) > 0.0 && admit(*d)).collect();
        let by_sim = |a: &(f32, u32), b: &(f32, u32)| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1));
        if nearest.len() > VECTOR_CANDIDATES {
            nearest.select_nth_unstable_by(VECTOR_CANDIDATES - 1, by_sim);
            nearest.truncate(VECTOR_CANDIDATES);
        }
        nearest.sort_by(by_sim);
        for (sim, doc) in nearest {
            let a = acc.entry(doc);
            if a.vector.is_none() {
                a.vector = Some(part(sim));
            }
        }
    }

    // No usable query terms and no vectors: every thought is a candidate,
    // ranked by the small signals alone.
    let browse = terms.is_empty() && !hybrid;
    if browse {
        for doc in 0..n as u32 {
            acc.entry(doc);
        }
    }

    // Context: direct matches lend a share of their score to their
    // neighbours in append order (same session, close in time).
    if q.context && !browse {
        let mut lenders: Vec<(f32, u32)> = acc.accs.iter().map(|a| (a.lexical + a.expansion + a.vector.unwrap_or(0.0), a.doc)).filter(|s| s.0 > 0.0 && admit(s.1)).collect();
        if lenders.len() > CONTEXT_SEEDS {
            lenders.select_nth_unstable_by(CONTEXT_SEEDS - 1, |a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
            lenders.truncate(CONTEXT_SEEDS);
        }
        for (score, doc) in lenders {
            let asks = index.asks_question(doc);
            for (nb, dist) in context_neighbours(index, doc, n as u32) {
                if exists(nb) {
                    let reply = if asks && nb > doc { CONTEXT_REPLY_BOOST } else { 1.0 };
                    acc.entry(nb).context += reply * CONTEXT_WEIGHT * CONTEXT_DECAY.powi(dist as i32 - 1) * score;
                }
            }
        }
    }

    // Graph: expand from the best admitted seeds.
    if q.graph.max_depth > 0 && !browse {
        let mut seeds: Vec<(f32, u32)> = acc.accs.iter().filter(|a| admit(a.doc)).map(|a| (a.lexical + a.expansion + a.vector.unwrap_or(0.0), a.doc)).filter(|s| s.0 > 0.0).collect();
        seeds.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
        seeds.truncate(MAX_GRAPH_SEEDS.max(q.limit));
        for (seed_score, seed) in seeds {
            let (reached, _) = walk(index, &[seed], q.graph.direction, q.graph.max_depth, q.graph.max_visited, exists);
            for r in reached {
                let share = seed_score * GRAPH_DECAY.powi(r.depth as i32) * edge_weight(r.via.edge);
                let a = acc.entry(r.doc);
                match r.via.edge {
                    EdgeKind::Ref => a.graph = a.graph.max(share),
                    EdgeKind::Relation(_) => a.relation = a.relation.max(share),
                }
            }
        }
    }

    // `graph`/`relation` and `context` both say "near a match": they do
    // not stack. A thought's context counts only beyond its graph and
    // relation shares, so near-ness adds at most the larger of the two
    // and a neighbour that also refs a match cannot outrank the match.
    for a in acc.accs.iter_mut() {
        a.context = (a.context - a.graph - a.relation).max(0.0);
    }

    let now = q.as_of_ms.unwrap_or_else(|| if n > 0 { index.timestamp(n as u32 - 1) } else { 0 });
    // Admitted candidates with everything but the stretch and the small
    // signals, which add at most `STRETCH_WEIGHT * best_lexical` and
    // IMPORTANCE_WEIGHT + RECENCY_WEIGHT: a candidate that far below the
    // limit-th best cannot make the cut, so it is never fully scored.
    let agent_part = |a: &Acc| if a.names_agent { AGENT_WEIGHT * best_lexical } else { 0.0 };
    let mut partial: Vec<(f32, u32)> = acc.accs.iter().filter(|a| admit(a.doc)).map(|a| (a.lexical + a.expansion + a.graph + a.relation + a.context + agent_part(a) + a.vector.unwrap_or(0.0), a.doc)).collect();
    let total = partial.len();
    let query_idf: f32 = idfs.iter().sum();
    let stretch_on = q.context && !browse && query_idf > 0.0 && best_lexical > 0.0;
    let prune = |partial: &mut Vec<(f32, u32)>, headroom: f32| {
        if q.limit > 0 && q.limit < partial.len() {
            partial.select_nth_unstable_by(q.limit - 1, |a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
            let bound = partial[q.limit - 1].0 - headroom - (IMPORTANCE_WEIGHT + RECENCY_WEIGHT) - 1e-4;
            partial.retain(|p| p.0 >= bound);
        }
    };
    prune(&mut partial, if stretch_on { STRETCH_WEIGHT * best_lexical } else { 0.0 });

    // Stretch: the share of the query (by IDF) that the thoughts around
    // each remaining candidate match between them.
    if stretch_on {
        let matched = |doc: u32| acc.get(doc).filter(|_| admit(doc)).map_or(0, |a| a.terms | a.expanded);
        let max_stretch = STRETCH_WEIGHT * best_lexical;
        // Best first; stop once the limit-th best total so far cannot be
        // reached by a candidate even with a full stretch.
        partial.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
        let mut best: Vec<f32> = Vec::with_capacity(q.limit + 1);
        let mut stretch: Vec<f32> = Vec::new();
        for &(base, doc) in &partial {
            if q.limit > 0 && best.len() == q.limit && base + max_stretch < best[q.limit - 1] - (IMPORTANCE_WEIGHT + RECENCY_WEIGHT) - 1e-4 {
                break;
            }
            let covered = stretch_neighbours(index, doc, n as u32).filter(|nb| exists(*nb)).fold(matched(doc), |u, nb| u | matched(nb));
            let covered: f32 = idfs.iter().enumerate().filter(|(bit, _)| covered & (1 << bit) != 0).map(|(_, idf)| idf).sum();
            let s = max_stretch * covered / query_idf;
            let at = best.partition_point(|x| *x >= base + s);
            if at < q.limit {
                best.insert(at, base + s);
                best.truncate(q.limit);
            }
            stretch.push(s);
        }
        partial.truncate(stretch.len());
        for (p, s) in partial.iter_mut().zip(stretch) {
            acc.entry(p.1).stretch = s;
            p.0 += s;
        }
        prune(&mut partial, 0.0);
    }
    let mut scored: Vec<(f32, u32, ScoreParts)> = partial
        .iter()
        .map(|&(_, doc)| {
            let a = acc.get(doc).expect("partial scores come from touched thoughts");
            let importance = IMPORTANCE_WEIGHT * thoughts[doc as usize].importance as f32;
            let age = (now - index.timestamp(doc)).max(0) as f64;
            let recency = RECENCY_WEIGHT * 0.5f64.powf(age / RECENCY_HALF_LIFE_MS) as f32;
            let vector = if hybrid { Some(a.vector.unwrap_or(0.0)) } else { None };
            let agent = agent_part(a);
            let total = a.lexical + a.expansion + a.graph + a.relation + a.context + a.stretch + agent + importance + recency + vector.unwrap_or(0.0);
            (total, doc, ScoreParts { lexical: a.lexical, expansion: a.expansion, graph: a.graph, relation: a.relation, importance, recency, context: a.context, stretch: a.stretch, agent, vector, total })
        })
        .collect();
    let order = |a: &(f32, u32, ScoreParts), b: &(f32, u32, ScoreParts)| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1));
    if q.limit > 0 && q.limit < total {
        scored.select_nth_unstable_by(q.limit - 1, order);
    }
    scored.truncate(q.limit);
    scored.sort_by(order);
    let hits = scored
        .into_iter()
        .map(|(_, doc, score)| {
            let a = *acc.get(doc).expect("scored thoughts were touched");
            let mut matched_terms: Vec<String> = terms.iter().enumerate().filter(|(bit, _)| a.terms & (1 << bit) != 0).map(|(_, (_, surface))| surface.clone()).collect();
            if a.expansion > 0.0 {
                matched_terms.push(index.surface(a.expansion_word).to_string());
            }
            let mut match_sources: Vec<&'static str> = (0..FIELD_COUNT).filter(|f| a.fields & (1 << f) != 0).map(|f| Field::ALL[f].as_str()).collect();
            if a.expansion > 0.0 {
                match_sources.push("expansion");
            }
            if a.graph > 0.0 {
                match_sources.push("graph");
            }
            if a.relation > 0.0 {
                match_sources.push("relation");
            }
            if a.vector.is_some_and(|v| v > 0.0) {
                match_sources.push("vector");
            }
            if a.context > 0.0 {
                match_sources.push("context");
            }
            RankedHit { index: doc as u64, score, matched_terms, match_sources }
        })
        .collect();
    RankedResults { backend: if hybrid { "hybrid" } else { "lexical" }, total, hits }
}

/// Whether `content` asks something (has a question mark, ASCII or full-width).
pub fn asks_question(content: &str) -> bool {
    content.contains(['?', '\u{ff1f}'])
}

/// The thoughts within [`CONTEXT_WINDOW`] places of `doc` in append order
/// that share its conversation (same session, stamped at most
/// [`CONTEXT_MAX_GAP_MS`] apart), with their distance. Walking outwards
/// stops at the first thought that does not.
pub fn context_neighbours(index: &RankedIndex, doc: u32, n: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
    neighbours_within(index, doc, n, CONTEXT_WINDOW)
}

/// The thoughts within [`STRETCH_WINDOW`] places of `doc` that share its
/// conversation, by the rule of [`context_neighbours`].
pub fn stretch_neighbours(index: &RankedIndex, doc: u32, n: u32) -> impl Iterator<Item = u32> + '_ {
    neighbours_within(index, doc, n, STRETCH_WINDOW).map(|(x, _)| x)
}

fn neighbours_within(index: &RankedIndex, doc: u32, n: u32, window: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
    let same = move |other: u32| index.session(other) == index.session(doc) && (index.timestamp(other) - index.timestamp(doc)).abs() <= CONTEXT_MAX_GAP_MS;
    let after = (1..=window).map(move |d| (doc.checked_add(d).filter(|x| *x < n), d)).take_while(move |(x, _)| x.is_some_and(same));
    let before = (1..=window).map(move |d| (doc.checked_sub(d), d)).take_while(move |(x, _)| x.is_some_and(same));
    after.chain(before).filter_map(|(x, d)| x.map(|x| (x, d)))
}

/// Index of a thought the graph walks may see (as of `as_of_ms`).
pub fn exists_as_of(index: &RankedIndex, doc: u32, as_of_ms: Option<i64>) -> bool {
    as_of_ms.is_none_or(|a| index.timestamp(doc) <= a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::NewThought;
    use crate::record::ChainFormat;
    use crate::thought::ThoughtType;

    /// `(agent, session, minute, content)` per thought.
    fn chain(items: &[(&str, Option<&str>, i64, &str)]) -> Chain {
        let mut c = Chain::new("ctx", ChainFormat::Binary);
        for (i, (agent, session, minute, content)) in items.iter().enumerate() {
            let mut n = NewThought::new(agent, ThoughtType::FactLearned, content);
            n.session_id = session.map(str::to_string);
            let ts = chrono::DateTime::from_timestamp_millis(1_700_000_000_000 + minute * 60_000).unwrap().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            let t = c.prepare_append(n, ts, format!("id-{i}")).unwrap();
            c.commit(t);
        }
        c
    }

    fn search(c: &Chain, text: &str, context: bool) -> RankedResults {
        let filter = ThoughtFilter::default();
        ranked_search(c, &RankedQuery { text, filter: &filter, limit: 10, graph: GraphOptions::default(), as_of_ms: None, include_superseded: false, query_vector: None, context, word_vectors: Vec::new() })
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
            let t = c.prepare_append(n, ts, format!("id-{i}")).unwrap();
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
        assert_eq!(query_pairs("the video, the game, video game", &query_terms("the video, the game, video game")), vec![(0, 1), (1, 0)], "stopwords aside, each pair once");
    }

    #[test]
    fn a_statement_lends_alike_both_ways() {
        let c = chain(&[("ada", None, 0, "Hello there."), ("bob", None, 1, "We went kayaking in Norway."), ("ada", None, 2, "Wow.")]);
        let r = search(&c, "kayaking", true);
        let ctx = |i: u64| r.hits.iter().find(|h| h.index == i).map(|h| h.score.context).unwrap();
        assert!(ctx(0) > 0.0 && (ctx(0) - ctx(2)).abs() < 1e-6, "{r:?}");
        assert!(asks_question("Any plans?") && asks_question("予定は？") && !asks_question("No plans."));
    }

    #[test]
    fn context_neighbours_walk_outwards_and_stop_at_boundaries() {
        let c = chain(&[("a", None, 0, "x"), ("a", None, 1, "x"), ("a", Some("s"), 2, "x"), ("a", Some("s"), 3, "x"), ("a", Some("s"), 4, "x"), ("a", Some("s"), 5, "x")]);
        let guard = c.ranked_index();
        let idx = &*guard;
        let got: Vec<(u32, u32)> = context_neighbours(idx, 3, idx.len() as u32).collect();
        assert_eq!(got, vec![(4, 1), (5, 2), (2, 1)], "thought 1 has no session: the walk back stops at 2");
        assert_eq!(context_neighbours(idx, 0, idx.len() as u32).collect::<Vec<_>>(), vec![(1, 1)]);
        assert_eq!(stretch_neighbours(idx, 5, idx.len() as u32).collect::<Vec<_>>(), vec![4, 3, 2], "three places back, not across the session");
    }
}
