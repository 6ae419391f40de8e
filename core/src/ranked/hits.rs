//! Assembling hits: the admitted candidates' partial scores, pruning those
//! that cannot reach the top `limit`, then the full score of the rest (with
//! the small signals: importance, recency) and the reported hits, best
//! first.

use super::candidates::{best_first, Acc, Accumulators};
use super::index::{Field, RankedIndex, FIELD_COUNT};
use crate::thought_list::ThoughtList;
use serde::Serialize;

/// Weight of importance (0..=1) in the total.
pub const IMPORTANCE_WEIGHT: f32 = 0.1;
/// Weight of recency (0..=1) in the total.
pub const RECENCY_WEIGHT: f32 = 0.1;
/// Recency halves every 30 days.
pub const RECENCY_HALF_LIFE_MS: f64 = 30.0 * 24.0 * 3600.0 * 1000.0;
/// Weight of a query naming a thought's agent, relative to the best lexical score.
pub const AGENT_WEIGHT: f32 = 0.5;
/// Weight of a thought's length, relative to the best lexical score (see [`length_part`]).
pub const LENGTH_WEIGHT: f32 = 0.1;

/// The most importance and recency add to a total: what a candidate's
/// partial score may still gain from them.
pub(crate) const SMALL_SIGNALS_MAX: f32 = IMPORTANCE_WEIGHT + RECENCY_WEIGHT;
/// Room for rounding when comparing a bound with a score.
pub(crate) const BOUND_SLACK: f32 = 1e-4;

/// The parts of a result's score.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct ScoreParts {
    /// BM25F score of the query's own words.
    pub lexical: f32,
    /// Score of words added by expansion (by meaning).
    pub expansion: f32,
    /// Best `seed score * 0.5^depth * edge weight` over the seeds, walking refs.
    pub graph: f32,
    /// The same as `graph`, walking typed relations.
    pub relation: f32,
    /// `0.1 * importance`.
    pub importance: f32,
    /// `0.1 * 0.5^(age / 30 days)`, age from `as_of` or the newest thought.
    pub recency: f32,
    /// Lent by direct matches a few places away in the same session (beyond `graph + relation`).
    pub context: f32,
    /// How much of the query the thoughts around this one cover.
    pub stretch: f32,
    /// Half the best lexical score when a query term matches the thought's agent.
    pub agent: f32,
    /// The thought's length against the chain's mean (see [`length_part`]).
    pub length: f32,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// Standardized cosine to the query's vector, weighted; hybrid only.
    pub vector: Option<f32>,
    /// Reciprocal Rank Fusion score when reranking was asked for (0 otherwise); `RRF_SCORE_SCALE` times it is in `total`.
    pub rrf: f32,
    /// The sum the results are ordered by.
    pub total: f32,
}

/// One ranked result.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedHit {
    /// The thought's index in the chain.
    pub index: u64,
    /// How the score was made up.
    pub score: ScoreParts,
    /// Query terms found in the thought.
    pub matched_terms: Vec<String>,
    /// The score parts the thought matched by (`lexical`, `expansion`, `context`, ...).
    pub match_sources: Vec<&'static str>,
    /// How graph expansion reached it, when it did.
    pub graph: Option<GraphHit>,
}

/// How graph expansion reached a hit (MentisDB 0.10's `graph_*` fields).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphHit {
    /// How many direct matches' walks reached it.
    pub seed_paths: u32,
    /// The edge kinds on those walks' paths (`references`, `supersedes`, ...), sorted.
    pub relation_kinds: Vec<&'static str>,
    /// The path that gave it its best share: chain indices, the seed first,
    /// the hit last (its length minus one is the distance).
    pub path: Vec<u64>,
}

/// A ranked answer.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedResults {
    /// `"lexical"`, or `"hybrid"` when vectors took part.
    pub backend: &'static str,
    /// Candidates that matched (before `limit`).
    pub total: usize,
    /// The results, best first, at most `limit`.
    pub hits: Vec<RankedHit>,
}

/// `agent`: `AGENT_WEIGHT * best_lexical` when a query term matched the
/// thought's agent field.
pub(crate) fn agent_part(a: &Acc, best_lexical: f32) -> f32 {
    if a.names_agent {
        AGENT_WEIGHT * best_lexical
    } else {
        0.0
    }
}

/// `length`: `LENGTH_WEIGHT * best_lexical * ln(len / mean)`, the log
/// clamped to ±1 (a thought e times longer than its author's mean content
/// or more gains a tenth of the best lexical score, one e times shorter
/// loses as much): `len` is the thought's content in words as the index
/// counts them (stopwords aside), `mean` its author's
/// ([`RankedIndex::author_mean_content_len`]: the thoughts of its
/// `agent_id`, drawn toward the chain's mean). BM25 rightly divides a
/// word's frequency by the length, but among thoughts that score alike the
/// one that says more is likelier to hold the answer: in LoCoMo's top 10,
/// turns of 25 words or more are evidence 14.9% of the time, turns under 10
/// words 2.7%. Against its author's mean, not the chain's: where one writer
/// is always long (an assistant's replies beside a user's short
/// statements) the chain's mean would favour everything that writer wrote.
pub(crate) fn length_part(index: &RankedIndex, doc: u32, best_lexical: f32) -> f32 {
    let mean = index.author_mean_content_len(doc);
    let len = f32::from(index.field_lens(doc)[Field::Content as usize]);
    if mean <= 0.0 || best_lexical <= 0.0 {
        return 0.0;
    }
    let ratio = if len > 0.0 { (len / mean).ln() } else { f32::NEG_INFINITY };
    LENGTH_WEIGHT * best_lexical * ratio.clamp(-1.0, 1.0)
}

/// [`length_part`] for the many candidates of one query, as
/// `ln(len) - ln(mean)`: each author's `ln(mean)` worked out once, `ln(len)`
/// from a table for the usual lengths. Equal to `length_part` but for the
/// last bits of the float (the pruning bound allows for far more), so only
/// the partial scores use it; the reported part is `length_part`'s.
struct LengthScale<'i> {
    index: &'i RankedIndex,
    best_lexical: f32,
    /// Each author's `ln(mean)`, NaN until asked for.
    ln_means: Vec<f32>,
}

impl<'i> LengthScale<'i> {
    fn new(index: &'i RankedIndex, best_lexical: f32) -> Self {
        LengthScale { index, best_lexical, ln_means: vec![f32::NAN; index.author_count()] }
    }

    fn part(&mut self, doc: u32) -> f32 {
        let mean = self.index.author_mean_content_len(doc);
        let len = self.index.field_lens(doc)[Field::Content as usize];
        if mean <= 0.0 || self.best_lexical <= 0.0 {
            return 0.0;
        }
        let ln_mean = &mut self.ln_means[self.index.author(doc) as usize];
        if ln_mean.is_nan() {
            *ln_mean = mean.ln();
        }
        let ratio = if len > 0 { ln_words(len) - *ln_mean } else { f32::NEG_INFINITY };
        LENGTH_WEIGHT * self.best_lexical * ratio.clamp(-1.0, 1.0)
    }
}

/// `ln(n)`, from a table for the lengths most thoughts have.
fn ln_words(n: u16) -> f32 {
    const TABLE_LEN: usize = 512;
    static TABLE: std::sync::OnceLock<[f32; TABLE_LEN]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| std::array::from_fn(|i| (i as f32).ln()));
    table.get(usize::from(n)).copied().unwrap_or_else(|| f32::from(n).ln())
}

/// Every admitted candidate ([`Acc::admitted`]) with its score so far:
/// everything but the stretch and the small signals (importance, recency).
pub(crate) fn partial_scores(index: &RankedIndex, acc: &Accumulators, best_lexical: f32) -> Vec<(f32, u32)> {
    let mut length = LengthScale::new(index, best_lexical);
    acc.accs
        .iter()
        .filter(|a| a.admitted())
        .map(|a| (a.lexical + a.expansion + a.graph + a.relation + a.context + agent_part(a, best_lexical) + length.part(a.doc) + a.vector.unwrap_or(0.0), a.doc))
        .collect()
}

/// Drops the candidates that cannot make the top `limit` even if they
/// gained `headroom` more plus the most the small signals add (none when
/// `limit` is 0 or not below the number of candidates).
pub(crate) fn prune(partial: &mut Vec<(f32, u32)>, limit: usize, headroom: f32) {
    if limit > 0 && limit < partial.len() {
        partial.select_nth_unstable_by(limit - 1, best_first);
        let bound = partial[limit - 1].0 - headroom - SMALL_SIGNALS_MAX - BOUND_SLACK;
        partial.retain(|p| p.0 >= bound);
    }
}

/// The full score of each candidate left in `partial`, with its parts:
/// recency is measured from `as_of_ms`, or the chain's newest thought;
/// `hybrid` reports a vector part (0 when none) on every one.
pub(crate) fn full_scores(index: &RankedIndex, thoughts: &ThoughtList, acc: &Accumulators, partial: &[(f32, u32)], as_of_ms: Option<i64>, hybrid: bool, best_lexical: f32) -> Vec<(f32, u32, ScoreParts)> {
    let n = index.len();
    let now = as_of_ms.unwrap_or_else(|| if n > 0 { thoughts[n - 1].timestamp_ms } else { 0 });
    partial
        .iter()
        .map(|&(_, doc)| {
            let a = acc.get(doc).expect("partial scores come from touched thoughts");
            let importance = IMPORTANCE_WEIGHT * thoughts[doc as usize].importance as f32;
            let age = (now - thoughts[doc as usize].timestamp_ms).max(0) as f64;
            // 0.5^(age / half-life) as 2^-(age / half-life) in f32: `f64::powf` links
            // libm's `pow` and its 4 KB table into the browser's module.
            let recency = RECENCY_WEIGHT * (-(age / RECENCY_HALF_LIFE_MS) as f32).exp2();
            let vector = if hybrid { Some(a.vector.unwrap_or(0.0)) } else { None };
            let agent = agent_part(a, best_lexical);
            let length = length_part(index, doc, best_lexical);
            let total = a.lexical + a.expansion + a.graph + a.relation + a.context + a.stretch + agent + length + importance + recency + vector.unwrap_or(0.0);
            (total, doc, ScoreParts { lexical: a.lexical, expansion: a.expansion, graph: a.graph, relation: a.relation, importance, recency, context: a.context, stretch: a.stretch, agent, length, vector, rrf: 0.0, total })
        })
        .collect()
}

/// The best `limit` of `scored` as hits, best first. `total` is the number
/// of admitted candidates before pruning; `terms` are the query terms
/// (named in `matched_terms` by their surface).
pub(crate) fn best_hits(index: &RankedIndex, acc: &Accumulators, mut scored: Vec<(f32, u32, ScoreParts)>, terms: &[(String, String)], limit: usize, total: usize) -> Vec<RankedHit> {
    let order = |a: &(f32, u32, ScoreParts), b: &(f32, u32, ScoreParts)| best_first(&(a.0, a.1), &(b.0, b.1));
    if limit > 0 && limit < total {
        scored.select_nth_unstable_by(limit - 1, order);
    }
    scored.truncate(limit);
    crate::sorting::sort_by(&mut scored, order);
    scored.into_iter().map(|(_, doc, score)| hit(index, acc.get(doc).expect("scored thoughts were touched"), acc.graph.get(&doc), terms, score)).collect()
}

/// A scored candidate as a hit: which query terms it matched (their
/// surface words, then its best expansion word) and from where.
fn hit(index: &RankedIndex, a: &Acc, trace: Option<&super::candidates::GraphTrace>, terms: &[(String, String)], score: ScoreParts) -> RankedHit {
    let mut matched_terms: Vec<String> = terms.iter().enumerate().filter(|(bit, _)| a.terms & (1 << bit) != 0).map(|(_, (_, surface))| surface.clone()).collect();
    if a.expansion > 0.0 {
        matched_terms.push(index.surface(a.expansion_word).to_string());
    }
    let mut match_sources: Vec<&'static str> = (0..FIELD_COUNT).filter(|f| a.fields & (1 << f) != 0).map(|f| Field::ALL[f].as_str()).collect();
    for (source, on) in [("expansion", a.expansion > 0.0), ("graph", a.graph > 0.0), ("relation", a.relation > 0.0), ("vector", a.vector.is_some_and(|v| v > 0.0)), ("context", a.context > 0.0)] {
        if on {
            match_sources.push(source);
        }
    }
    let graph = trace.map(|t| GraphHit { seed_paths: t.seeds, relation_kinds: t.kinds.iter().copied().collect(), path: t.path.iter().map(|d| *d as u64).collect() });
    RankedHit { index: a.doc as u64, score, matched_terms, match_sources, graph }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prune_keeps_whatever_could_still_reach_the_limit() {
        let mut partial = vec![(5.0, 0), (4.0, 1), (3.0, 2), (1.0, 3), (3.85, 4)];
        prune(&mut partial, 2, 0.0);
        partial.sort_by(best_first);
        assert_eq!(partial, vec![(5.0, 0), (4.0, 1), (3.85, 4)], "3.85 + the small signals may still pass 4.0");
        let mut partial = vec![(5.0, 0), (4.0, 1), (3.0, 2), (1.0, 3)];
        prune(&mut partial, 2, 1.0);
        assert_eq!(partial.len(), 3, "headroom keeps 3.0 in reach");
        let mut all = vec![(1.0, 0), (0.0, 1)];
        prune(&mut all, 0, 0.0);
        prune(&mut all, 2, 0.0);
        assert_eq!(all.len(), 2, "no limit, or no more than it: nothing pruned");
    }

    #[test]
    fn the_length_part_weighs_a_thought_against_the_chain_mean_within_a_tenth_of_the_best_score() {
        let mut c = crate::chain::Chain::new("len", crate::record::ChainFormat::Binary);
        for (i, content) in ["paint", "paint fences", "paint fences blue summer morning light violet", "the and of"].iter().enumerate() {
            let mut t = crate::chain::NewThought::new("ada", crate::thought::ThoughtType::FactLearned, content);
            t.tags = vec!["x".into()];
            let t = c.prepare_append(t, crate::timestamp::format_rfc3339_millis(1_700_000_000_000 + i as i64), format!("id-{i}"), [0; 16]).unwrap();
            c.commit(t);
        }
        let index = c.ranked_index();
        let words: Vec<u16> = (0..4).map(|d| index.field_lens(d)[Field::Content as usize]).collect();
        assert_eq!(words, vec![1, 2, 7, 0], "content words, stopwords aside");
        let mean = index.author_mean_content_len(0);
        assert!((mean - 10.0 / 4.0).abs() < 1e-6, "one author: the chain's mean over every thought: {mean}");
        let part = |doc| length_part(&index, doc, 2.0);
        assert!((part(1) - LENGTH_WEIGHT * 2.0 * (2.0f32 / 2.5).ln()).abs() < 1e-6, "ln(len / mean) times a tenth of the best: {}", part(1));
        assert_eq!(part(2), LENGTH_WEIGHT * 2.0, "e times the mean or more: at most a tenth of the best lexical score");
        assert_eq!(part(3), -LENGTH_WEIGHT * 2.0, "no content words: at least minus a tenth");
        assert!(part(0) < part(1) && part(1) < part(2));
        assert_eq!(length_part(&index, 2, 0.0), 0.0, "no lexical match, no length part");
        let mut empty = crate::chain::Chain::new("empty", crate::record::ChainFormat::Binary);
        let t = empty.prepare_append(crate::chain::NewThought::new("ada", crate::thought::ThoughtType::FactLearned, "the"), crate::timestamp::format_rfc3339_millis(1_700_000_000_000), "id".into(), [0; 16]).unwrap();
        empty.commit(t);
        assert_eq!(length_part(&empty.ranked_index(), 0, 2.0), 0.0, "a chain without content words");
    }

    #[test]
    fn the_length_part_measures_a_thought_against_its_own_authors_mean() {
        let mut c = crate::chain::Chain::new("two", crate::record::ChainFormat::Binary);
        let long = "paint fences blue summer morning light violet river stones";
        let mut items: Vec<(&str, &str)> = Vec::new();
        for _ in 0..40 {
            items.push(("user", "paint fences"));
            items.push(("assistant", long));
        }
        items.push(("user", "paint fences blue summer"));
        items.push(("newcomer", long));
        for (i, (agent, content)) in items.iter().enumerate() {
            let t = crate::chain::NewThought::new(agent, crate::thought::ThoughtType::FactLearned, content);
            let t = c.prepare_append(t, crate::timestamp::format_rfc3339_millis(1_700_000_000_000 + i as i64), format!("id-{i}"), [0; 16]).unwrap();
            c.commit(t);
        }
        let index = c.ranked_index();
        let chain_mean = index.avg_field_lens()[Field::Content as usize];
        let user = index.author_mean_content_len(0);
        let assistant = index.author_mean_content_len(1);
        assert!(user < 3.0 && assistant > 8.0 && (3.0..8.0).contains(&chain_mean), "user {user}, assistant {assistant}, chain {chain_mean}");
        let part = |doc| length_part(&index, doc, 1.0);
        assert!(part(1).abs() < 0.01, "an assistant reply as long as its others gains about nothing: {}", part(1));
        assert!(part(80) > 0.03, "a user turn twice the user's usual length gains: {}", part(80));
        assert!(4.0 < chain_mean, "against the chain's mean it would have lost");
        let against_chain = LENGTH_WEIGHT * (9.0 / chain_mean).ln();
        assert!(part(81) > 0.8 * against_chain && part(81) < against_chain, "an author with one thought is measured mostly against the chain: {} vs {against_chain}", part(81));
        // The partial scores' shortcut agrees to far within the pruning slack.
        let mut scale = LengthScale::new(&index, 1.0);
        for doc in 0..index.len() as u32 {
            assert!((scale.part(doc) - part(doc)).abs() < 1e-6, "thought {doc}: {} vs {}", scale.part(doc), part(doc));
        }
        assert_eq!(ln_words(700), 700f32.ln(), "beyond the table");
        assert_eq!(ln_words(100), 100f32.ln());
    }

    #[test]
    fn the_agent_part_needs_the_name_matched() {
        let named = Acc { names_agent: true, ..Acc::default() };
        assert_eq!((agent_part(&named, 2.0), agent_part(&Acc::default(), 2.0)), (AGENT_WEIGHT * 2.0, 0.0));
    }
}
