//! Replies of the ranked tools: ranked search, context bundles, resolve
//! context. Written only (never read back), so they borrow the chain's
//! thoughts and the ranker's results.
//!
//! Besides our own fields they carry every field the reference MentisDB's
//! Python client (`pymentisdb`) reads.

use crate::chain::Chain;
use crate::json_text::{JsonOut, JsonText};
use crate::ranked::{RankedHit, Reached, ScoreParts, Via, WalkPaths};
use crate::thought::Thought;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where a thought is, as the reference MentisDB's clients read it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Locator<'c> {
    /// The chain.
    pub chain_key: &'c str,
    /// The thought's id.
    pub thought_id: &'c crate::ThoughtId,
    /// The thought's index.
    pub thought_index: u64,
}

impl<'c> Locator<'c> {
    /// The locator of the thought at `index` of `chain`.
    pub fn of(chain: &'c Chain, index: u64) -> Self {
        Locator { chain_key: chain.key(), thought_id: &chain.thoughts()[index as usize].id, thought_index: index }
    }
}

/// A ranked result's score, part by part, as `f32` (what the ranker
/// computes, written in its shortest form, as the reference MentisDB writes
/// its scores). Parts we do not compute but the
/// reference's clients read are 0 (`seed_support`, `confidence`, `rrf`;
/// `vector` without an embedding provider); `session_cohesion` is our
/// `context + stretch` (the pull of matching turns nearby in the same session).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct ScoreReply {
    /// The `lexical` part (see `ranked/README.md`).
    pub lexical: f32,
    /// The `expansion` part (see `ranked/README.md`).
    pub expansion: f32,
    /// The `graph` part (see `ranked/README.md`).
    pub graph: f32,
    /// The `relation` part (see `ranked/README.md`).
    pub relation: f32,
    /// The `importance` part (see `ranked/README.md`).
    pub importance: f32,
    /// The `recency` part (see `ranked/README.md`).
    pub recency: f32,
    /// The `context` part (see `ranked/README.md`).
    pub context: f32,
    /// The `stretch` part (see `ranked/README.md`).
    pub stretch: f32,
    /// The `agent` part (see `ranked/README.md`).
    pub agent: f32,
    /// The `length` part: the thought's length against the chain's mean (see `ranked/README.md`).
    pub length: f32,
    /// The `vector` part; 0 without an embedding provider.
    pub vector: f32,
    /// The final score.
    pub total: f32,
    /// `context + stretch`.
    pub session_cohesion: f32,
    /// Always 0 (read by the reference's clients).
    pub seed_support: f32,
    /// Always 0 (read by the reference's clients).
    pub confidence: f32,
    /// Reciprocal Rank Fusion score when `enable_reranking` (its scaled value is in `total`), else 0.
    pub rrf: f32,
}

impl From<&ScoreParts> for ScoreReply {
    fn from(parts: &ScoreParts) -> Self {
        // Destructured without `..`: a new part must be placed here.
        let ScoreParts { lexical, expansion, graph, relation, importance, recency, context, stretch, agent, length, vector, rrf, total } = *parts;
        ScoreReply {
            lexical,
            expansion,
            graph,
            relation,
            importance,
            recency,
            context,
            stretch,
            agent,
            length,
            vector: vector.unwrap_or(0.0),
            total,
            session_cohesion: context + stretch,
            seed_support: 0.0,
            confidence: 0.0,
            rrf,
        }
    }
}

/// One result of `mentisdb_ranked_search`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RankedHitReply<'c> {
    /// The chain.
    pub chain_key: &'c str,
    /// The thought.
    pub thought: &'c Thought,
    /// The score, part by part.
    pub score: ScoreReply,
    /// Query terms (stems) that matched.
    pub matched_terms: &'c [String],
    /// Which signals found the thought, e.g. `lexical`, `graph`.
    pub match_sources: &'c [&'static str],
    /// Steps from the direct match whose graph expansion reached it best
    /// (MentisDB 0.10's field); null when no expansion reached it.
    pub graph_distance: Option<u64>,
    /// How many direct matches' expansions reached it.
    pub graph_seed_paths: u32,
    /// Edge kinds on those paths (`references` for a ref, else the relation kind in snake_case).
    pub graph_relation_kinds: &'c [&'static str],
    /// The path that reached it best; null when none did.
    pub graph_path: Option<GraphPathReply<'c>>,
}

/// A graph expansion path (MentisDB 0.10's `graph_path`).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct GraphPathReply<'c> {
    /// The direct match the walk started from.
    pub seed: Locator<'c>,
    /// Every thought on the path, the seed first and the hit last.
    pub visited: Vec<Locator<'c>>,
    /// Steps from the seed.
    pub depth: u64,
}

impl<'c> RankedHitReply<'c> {
    /// The reply entry of `hit`, a result in `chain`.
    pub fn of(chain: &'c Chain, hit: &'c RankedHit) -> Self {
        let graph = hit.graph.as_ref();
        RankedHitReply {
            chain_key: chain.key(),
            thought: &chain.thoughts()[hit.index as usize],
            score: ScoreReply::from(&hit.score),
            matched_terms: &hit.matched_terms,
            match_sources: &hit.match_sources,
            graph_distance: graph.map(|g| g.path.len().saturating_sub(1) as u64),
            graph_seed_paths: graph.map_or(0, |g| g.seed_paths),
            graph_relation_kinds: graph.map_or(&[], |g| g.relation_kinds.as_slice()),
            graph_path: graph.filter(|g| !g.path.is_empty()).map(|g| GraphPathReply {
                seed: Locator::of(chain, g.path[0]),
                visited: g.path.iter().map(|i| Locator::of(chain, *i)).collect(),
                depth: g.path.len() as u64 - 1,
            }),
        }
    }
}

impl ScoreReply {
    /// Written as serde writes it (see [`RankedSearchReply::to_json`]).
    fn write_json(&self, out: &mut JsonOut) {
        // Destructured without `..`: a new part must be written here too.
        let ScoreReply { lexical, expansion, graph, relation, importance, recency, context, stretch, agent, length, vector, total, session_cohesion, seed_support, confidence, rrf } = *self;
        out.raw("{\"lexical\":").f32(lexical);
        out.raw(",\"expansion\":").f32(expansion);
        out.raw(",\"graph\":").f32(graph);
        out.raw(",\"relation\":").f32(relation);
        out.raw(",\"importance\":").f32(importance);
        out.raw(",\"recency\":").f32(recency);
        out.raw(",\"context\":").f32(context);
        out.raw(",\"stretch\":").f32(stretch);
        out.raw(",\"agent\":").f32(agent);
        out.raw(",\"length\":").f32(length);
        out.raw(",\"vector\":").f32(vector);
        out.raw(",\"total\":").f32(total);
        out.raw(",\"session_cohesion\":").f32(session_cohesion);
        out.raw(",\"seed_support\":").f32(seed_support);
        out.raw(",\"confidence\":").f32(confidence);
        out.raw(",\"rrf\":").f32(rrf).raw("}");
    }
}

impl RankedHitReply<'_> {
    /// Written as serde writes it (see [`RankedSearchReply::to_json`]).
    pub(crate) fn write_json(&self, out: &mut JsonOut) {
        let RankedHitReply { chain_key, thought, score, matched_terms, match_sources, graph_distance, graph_seed_paths, graph_relation_kinds, graph_path } = self;
        out.raw("{\"chain_key\":").str(chain_key);
        out.raw(",\"thought\":");
        thought.write_json(out);
        out.raw(",\"score\":");
        score.write_json(out);
        out.raw(",\"matched_terms\":").str_array(matched_terms.iter().map(String::as_str));
        out.raw(",\"match_sources\":").str_array(match_sources.iter().copied());
        out.raw(",\"graph_distance\":");
        match graph_distance {
            Some(d) => out.u64(*d),
            None => out.raw("null"),
        };
        out.raw(",\"graph_seed_paths\":").u64(u64::from(*graph_seed_paths));
        out.raw(",\"graph_relation_kinds\":").str_array(graph_relation_kinds.iter().copied());
        out.raw(",\"graph_path\":");
        match graph_path {
            Some(path) => out.serde(path),
            None => out.raw("null"),
        };
        out.raw("}");
    }
}

impl RankedSearchReply<'_> {
    /// The reply's JSON text, as serde writes it, faster (`json_text.rs`;
    /// `hand_written_replies_are_what_serde_writes` holds the two equal).
    pub fn to_json(&self) -> JsonText {
        let written: Result<JsonText, std::convert::Infallible> = write_ranked_reply(self.backend, self.total, self.results.len(), |hits| {
            self.results.iter().for_each(|hit| hits.write(|out| hit.write_json(out)));
            Ok(())
        });
        written.unwrap_or_else(|never| match never {})
    }
}

/// The results of a ranked reply being written (see [`write_ranked_reply`]).
pub(crate) struct HitsOut<'o> {
    out: &'o mut JsonOut,
    first: bool,
}

impl HitsOut<'_> {
    /// Writes one more result (`write` writes a [`RankedHitReply`]).
    pub(crate) fn write(&mut self, write: impl FnOnce(&mut JsonOut)) {
        if !std::mem::take(&mut self.first) {
            self.out.raw(",");
        }
        write(self.out);
    }
}

/// A [`RankedSearchReply`]'s text, its results written by `results` (as
/// the federated search does, each while its own chain is read); room is
/// set aside for `expected_hits` results.
pub(crate) fn write_ranked_reply<E>(backend: &str, total: u64, expected_hits: usize, results: impl FnOnce(&mut HitsOut<'_>) -> Result<(), E>) -> Result<JsonText, E> {
    let mut out = JsonOut::with_capacity(64 + (super::chain::THOUGHT_TEXT_GUESS + 512) * expected_hits);
    out.raw("{\"backend\":").str(backend);
    out.raw(",\"total\":").u64(total);
    out.raw(",\"results\":[");
    results(&mut HitsOut { out: &mut out, first: true })?;
    out.raw("]}");
    Ok(out.finish())
}

/// `mentisdb_ranked_search`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RankedSearchReply<'c> {
    /// `lexical`, or `hybrid` when vectors took part.
    pub backend: &'static str,
    /// Candidates that matched (before `limit`).
    pub total: u64,
    /// The best `limit` results, best first.
    pub results: Vec<RankedHitReply<'c>>,
}

/// The edge that reached a thought in a graph walk.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct ViaReply {
    /// Index of the already-reached thought the step started from.
    pub from_index: u64,
    /// `ref` or the relation kind, e.g. `Supports`.
    pub kind: &'static str,
    /// `outgoing` (followed the edge forward) or `incoming` (backward).
    pub direction: &'static str,
}

impl From<Via> for ViaReply {
    fn from(via: Via) -> Self {
        let Via { from_index, kind, direction, edge: _ } = via;
        ViaReply { from_index, kind, direction }
    }
}

/// One thought reached by a graph walk (bundle support, resolved context).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ReachedReply<'c> {
    /// The thought.
    pub thought: &'c Thought,
    /// Steps from the start.
    pub depth: u32,
    /// The edge that reached it.
    pub via: ViaReply,
    /// Where the thought is.
    pub locator: Locator<'c>,
    /// Always 1 (one walk per seed).
    pub seed_path_count: u32,
    /// The relation kinds walked from the start, each once, as MentisDB
    /// 0.10 labels them (`caused_by`); refs are not relations.
    pub relation_kinds: Vec<&'static str>,
    /// The way the walk took from its start to this thought.
    pub path: GraphPathReply<'c>,
}

impl<'c> ReachedReply<'c> {
    /// The reply entries of the thoughts of `chain` one walk reached, in its order.
    pub fn of_walk(chain: &'c Chain, reached: &[Reached]) -> Vec<Self> {
        let paths = WalkPaths::new(reached);
        reached
            .iter()
            .map(|r| {
                let (visited, relation_kinds) = paths.path(r);
                ReachedReply {
                    thought: &chain.thoughts()[r.doc as usize],
                    depth: r.depth,
                    via: r.via.into(),
                    locator: Locator::of(chain, u64::from(r.doc)),
                    seed_path_count: 1,
                    relation_kinds,
                    path: GraphPathReply {
                        seed: Locator::of(chain, visited[0]),
                        depth: visited.len() as u64 - 1,
                        visited: visited.iter().map(|i| Locator::of(chain, *i)).collect(),
                    },
                }
            })
            .collect()
    }
}

/// A bundle's seed: the ranked hit plus the reference's `locator` and `lexical_score`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SeedReply<'c> {
    /// The ranked hit.
    #[serde(flatten)]
    pub hit: RankedHitReply<'c>,
    /// Where the thought is.
    pub locator: Locator<'c>,
    /// The seed's lexical score.
    pub lexical_score: f32,
}

impl<'c> SeedReply<'c> {
    /// The seed entry of `hit`, a result in `chain`.
    pub fn of(chain: &'c Chain, hit: &'c RankedHit) -> Self {
        SeedReply { hit: RankedHitReply::of(chain, hit), locator: Locator::of(chain, hit.index), lexical_score: hit.score.lexical }
    }
}

/// One bundle of `mentisdb_context_bundles`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct BundleReply<'c> {
    /// The ranked seed.
    pub seed: SeedReply<'c>,
    /// Thoughts reached from the seed, in walk order.
    pub support: Vec<ReachedReply<'c>>,
}

/// `mentisdb_context_bundles`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ContextBundlesReply<'c> {
    /// `lexical`, or `hybrid` when vectors took part.
    pub backend: &'static str,
    /// Number of bundles.
    pub total_bundles: u64,
    /// Every thought placed in a bundle, seeds included.
    pub consumed_hits: u64,
    /// The bundles, best seed first.
    pub bundles: Vec<BundleReply<'c>>,
}

/// `mentisdb_resolve_context`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ResolveContextReply<'c> {
    /// The chain.
    pub chain_key: &'c str,
    /// The thought the walk started from.
    pub origin: &'c Thought,
    /// Reached thoughts, in walk order.
    pub thoughts: Vec<ReachedReply<'c>>,
    /// Whether the walk stopped at `max_visited`.
    pub truncated: bool,
}

/// One result of `mentisdb_lexical_search`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LexicalHitReply<'c> {
    /// The thought.
    pub thought: &'c Thought,
    /// Its BM25F score (the query's own words, phrases included).
    pub score: f32,
    /// Query terms that matched.
    pub matched_terms: &'c [String],
    /// The fields that matched (`content`, `tags`, `concepts`, `agent`).
    pub match_sources: &'c [&'static str],
}

/// `mentisdb_lexical_search`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LexicalSearchReply<'c> {
    /// The page of results, best first (`offset`, `limit`).
    pub results: Vec<LexicalHitReply<'c>>,
    /// Thoughts that matched (before paging).
    pub total: u64,
}

/// The grouping a summary candidate's sources share.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SummaryGroupReply {
    /// The sources' session, when grouped by session.
    pub session_id: Option<String>,
    /// The sources' agent, when grouped by agent.
    pub agent_id: Option<String>,
    /// Always null: thoughts here carry no entity type.
    pub entity_type: Option<String>,
}

/// One window of thoughts a caller may summarize.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SummaryCandidateReply {
    /// The sources' indices, in append order.
    pub source_indices: Vec<u64>,
    /// The sources' ids, in the same order.
    pub source_ids: Vec<String>,
    /// What the sources share.
    pub group: SummaryGroupReply,
    /// First source index.
    pub start_index: u64,
    /// Last source index.
    pub end_index: u64,
}

/// `mentisdb_summary_candidates`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SummaryCandidatesReply {
    /// The chain.
    pub chain_key: String,
    /// Candidates before paging.
    pub total: u64,
    /// The page of candidates (`offset`, `limit`), by start index.
    pub candidates: Vec<SummaryCandidateReply>,
}

/// `mentisdb_rebuild_vectors`: the chain's vector index after the rebuild
/// (MentisDB 0.10's `POST /v1/vectors/rebuild` shape).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VectorsRebuildReply {
    /// The chain.
    pub chain_key: String,
    /// The index's state.
    pub status: VectorStatus,
}

/// A chain's vector index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VectorStatus {
    /// Whether the daemon has an embedding provider.
    pub enabled: bool,
    /// Always false: a rebuild finishes before the reply.
    pub backend_building: bool,
    /// `Exact`: every query compares with every vector.
    pub backend_kind: String,
    /// `Fresh` (every thought has its vector) or `Disabled` (no provider).
    pub freshness: String,
    /// When the rebuild finished (RFC 3339).
    pub generated_at: String,
    /// Thoughts with a vector.
    pub indexed_thought_count: u64,
    /// Thoughts in the chain.
    pub thought_count: u64,
    /// Always null: the vectors are computed, not loaded.
    pub load_error: Option<String>,
    /// Always true: the vectors live in the daemon's memory.
    pub managed_in_memory: bool,
    /// Always false: no vector file is kept (0.10 keeps a sidecar).
    pub sidecar_exists: bool,
    /// Always null (see `sidecar_exists`).
    pub sidecar_path: Option<String>,
    /// The provider's name, when there is one.
    pub provider_key: Option<String>,
    /// The provider's name, when there is one.
    pub provider_kind: Option<String>,
    /// The model, when there is a provider.
    pub metadata: Option<VectorMetadata>,
}

/// The embedding model of a vector index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VectorMetadata {
    /// The provider's name (e.g. `all-MiniLM-L6-v2`).
    pub model_id: String,
    /// The vectors' length.
    pub dimension: u64,
    /// `v1`.
    pub embedding_version: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::replies::{SearchReply, TraverseReply};

    fn thought(index: u64, content: &str) -> Thought {
        serde_json::from_value(serde_json::json!({
            "schema_version": 2, "id": format!("0b9c6a8e-1f2d-4c3b-9a8e-7f6d5c4b3a2{index}"), "index": index,
            "timestamp": "2026-11-28T10:00:00.000Z", "agent_id": "ada", "agent_name": "Ada", "thought_type": "Decision",
            "role": "Memory", "content": content, "importance": 0.7, "tags": ["dia:D1:3"], "concepts": [], "refs": [0], "relations": [],
            "session_id": null, "agent_owner": null, "signing_key_id": null, "thought_signature": null, "confidence": null,
            "prev_hash": "ab".repeat(32), "hash": "cd".repeat(32), "content_salt": "ef".repeat(16)
        }))
        .unwrap()
    }

    #[test]
    fn hand_written_replies_are_what_serde_writes() {
        let (a, b) = (thought(1, "Caroline went to the \"support group\"\non 7 May."), thought(2, "Melanie paints."));
        // Every part different, so a part written under another's key shows.
        #[rustfmt::skip]
        let score = ScoreReply { lexical: 3.144_173_1, expansion: 0.1, graph: 0.2, relation: 0.3, importance: 0.05, recency: f32::NAN, context: 0.4, stretch: 1.572_086_6,
            agent: -0.5, length: 0.063_094_34, vector: 0.6, total: 4.929_354, session_cohesion: 1.7, seed_support: 0.8, confidence: 0.9, rrf: 1e-7 };
        let terms = vec!["caroline".to_string(), "support".to_string()];
        let direct = RankedHitReply { chain_key: "c\"k", thought: &a, score, matched_terms: &terms, match_sources: &["content", "tags"], graph_distance: None, graph_seed_paths: 0, graph_relation_kinds: &[], graph_path: None };
        let reached = RankedHitReply {
            thought: &b,
            matched_terms: &[],
            match_sources: &["graph"],
            graph_distance: Some(1),
            graph_seed_paths: 2,
            graph_relation_kinds: &["references"],
            graph_path: Some(GraphPathReply {
                seed: Locator { chain_key: "c\"k", thought_id: &a.id, thought_index: 1 },
                visited: vec![Locator { chain_key: "c\"k", thought_id: &a.id, thought_index: 1 }, Locator { chain_key: "c\"k", thought_id: &b.id, thought_index: 2 }],
                depth: 1,
            }),
            ..direct.clone()
        };
        for reply in [RankedSearchReply { backend: "lexical", total: 7, results: vec![direct, reached] }, RankedSearchReply { backend: "hybrid", total: 0, results: Vec::new() }] {
            assert_eq!(reply.to_json().into_string(), serde_json::to_string(&reply).unwrap());
        }
        for reply in [SearchReply { thoughts: vec![a.clone(), b.clone()] }, SearchReply { thoughts: Vec::new() }] {
            assert_eq!(reply.to_json().into_string(), serde_json::to_string(&reply).unwrap());
        }
        let cursor = crate::traverse::Cursor { index: 2, id: "t-\"2".into(), hash: "cd".repeat(32) };
        let walked = TraverseReply { chain_key: "c".into(), direction: "backward".into(), include_anchor: true, chunk_size: 2, anchor: Some(&b), thoughts: vec![&b, &a], has_more: true, next_cursor: Some(cursor.clone()), previous_cursor: None };
        let empty = TraverseReply::<&Thought> { anchor: None, thoughts: Vec::new(), include_anchor: false, has_more: false, next_cursor: None, previous_cursor: Some(cursor), ..walked.clone() };
        for reply in [walked, empty] {
            assert_eq!(reply.to_json().into_string(), serde_json::to_string(&reply).unwrap());
        }
    }
}
