//! Ranked retrieval tools: ranked search, context bundles, and graph
//! context resolution from one thought.

use super::graph_mode::GraphMode;
use super::locator::ThoughtLocator;
use super::replies::{BundleReply, ContextBundlesReply, RankedHitReply, RankedSearchReply, ReachedReply, ResolveContextReply, SeedReply};
use super::{raw, tools};
use crate::chain::Chain;
use crate::db::MentisDb;
use crate::error::ToolError;
use crate::query::{FilterArgs, ThoughtFilter};
use crate::ranked::{context_bundles, ranked_search, walk, GraphOptions, RankedQuery, WalkDirection};
use crate::timestamp::parse_rfc3339_millis;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::value::RawValue;

tools! {
    tool!(
        read "mentisdb_ranked_search",
        "Ask a chain a natural-language question: BM25 over content, tags, concepts and agent (stemmed, stopwords dropped) with adjacent query words scored as phrases, expanded over refs and typed relations, with small importance and recency signals, conversational context (thoughts next to a match in the same session; `context: false` turns it off) and, when the host has an embedding provider, vector similarity and query words matching the chain's words of similar meaning. Accepts the search filters; `text` is the query. Superseded, invalidated and corrected thoughts are left out unless include_superseded; as_of answers as the chain stood then. Each result explains its score.",
        RankedSearchArgs => RankedSearchReply<'static>,
        ranked_search_tool
    ),
    tool!(
        read "mentisdb_context_bundles",
        "Ranked seeds for `text`, each with the supporting thoughts reached from it through refs and typed relations (graph.max_depth, default 2), in deterministic order.",
        RankedSearchArgs => ContextBundlesReply<'static>,
        context_bundles_tool
    ),
    tool!(
        read "mentisdb_resolve_context",
        "From one thought (thought_id, thought_index or thought_hash) follow refs and typed relations up to max_depth (default 2) outgoing, incoming or both (default); returns each reached thought with its depth and the edge that reached it.",
        ResolveContextArgs => ResolveContextReply<'static>,
        resolve_context_tool
    ),
}

/// Default number of ranked results.
pub(super) const DEFAULT_RANKED_LIMIT: usize = 10;
/// Most ranked results per call.
pub(super) const MAX_RANKED_LIMIT: usize = 100;
/// Deepest graph walk.
pub(super) const MAX_GRAPH_DEPTH: u32 = 8;
/// Most thoughts one walk may reach.
pub(super) const MAX_GRAPH_VISITED: usize = 10_000;
/// Default depth of context bundles and context resolution.
pub(super) const DEFAULT_CONTEXT_DEPTH: u32 = 2;
/// Default reach of one context walk.
pub(super) const DEFAULT_CONTEXT_VISITED: usize = 256;

/// Graph expansion settings.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub(super) struct GraphArgs {
    /// Steps from each seed (0 = no expansion). Default 1 for ranked search, 2 for bundles; clamped to 8.
    pub max_depth: Option<u32>,
    /// Thoughts reached per seed, at most. Default 64 (ranked search) or 256 (bundles); clamped to 1..=10000.
    pub max_visited: Option<u64>,
    /// `both` (default), `outgoing`, `incoming`, or `off`.
    pub mode: Option<GraphMode>,
}

/// Arguments of `mentisdb_ranked_search` and `mentisdb_context_bundles`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct RankedSearchArgs {
    pub chain_key: Option<String>,
    /// The search filters; `text` is the natural-language query.
    #[serde(flatten)]
    pub filter: FilterArgs,
    /// Results (or bundles) to return; default 10, clamped to 1..=100.
    pub limit: Option<u64>,
    pub graph: Option<GraphArgs>,
    /// RFC 3339: answer as the chain stood then (only thoughts with timestamp <= as_of; only their relations retire targets).
    pub as_of: Option<String>,
    /// Include thoughts retired by Supersedes, Invalidates or Corrects; default false.
    pub include_superseded: Option<bool>,
    /// Score conversational context: a direct match lends half its score to the thoughts next to it in append order (up to two places away, halving per step; same session_id, at most an hour apart), so an answer next to the turn that asked the question ranks too. Default true.
    pub context: Option<bool>,
}

/// Arguments of `mentisdb_resolve_context`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct ResolveContextArgs {
    pub chain_key: Option<String>,
    pub thought_id: Option<String>,
    pub thought_index: Option<u64>,
    pub thought_hash: Option<String>,
    /// Steps to follow; default 2, clamped to 8.
    pub max_depth: Option<u32>,
    /// Thoughts to reach at most; default 256, clamped to 1..=10000.
    pub max_visited: Option<u64>,
    /// `outgoing` (what the thought builds on), `incoming` (what builds on it) or `both` (default).
    pub direction: Option<WalkDirection>,
}

fn graph_options(g: Option<&GraphArgs>, default_depth: u32, default_visited: usize) -> GraphOptions {
    let mut o = GraphOptions { max_depth: default_depth, max_visited: default_visited, direction: WalkDirection::Both };
    let Some(g) = g else { return o };
    if let Some(d) = g.max_depth {
        o.max_depth = d.min(MAX_GRAPH_DEPTH);
    }
    if let Some(v) = g.max_visited {
        o.max_visited = (v.min(MAX_GRAPH_VISITED as u64) as usize).max(1);
    }
    match g.mode.map(GraphMode::direction) {
        None => {}
        Some(None) => o.max_depth = 0,
        Some(Some(direction)) => o.direction = direction,
    }
    o
}

/// Everything a ranked call needs, parsed and validated.
struct Prepared {
    key: String,
    limit: usize,
    graph: GraphOptions,
    as_of_ms: Option<i64>,
    include_superseded: bool,
    query_vector: Option<Vec<f32>>,
    word_vectors: crate::ranked::search::WordVectors,
}

fn prepare(db: &MentisDb, tool: &str, a: &RankedSearchArgs, default_depth: u32, default_visited: usize) -> Result<Prepared, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let limit = a.limit.map(|l| (l.min(MAX_RANKED_LIMIT as u64) as usize).max(1)).unwrap_or(DEFAULT_RANKED_LIMIT);
    let graph = graph_options(a.graph.as_ref(), default_depth, default_visited);
    let as_of_ms = a.as_of.as_deref().map(parse_rfc3339_millis).transpose().map_err(|m| ToolError::invalid(tool, format!("as_of: {m}")))?;
    let text = a.filter.text.as_deref().unwrap_or("").trim();
    let (query_vector, word_vectors) = match db.embedding_provider() {
        Some(p) if !text.is_empty() => crate::ranked::search::embed_query(&*p, text),
        _ => (None, Vec::new()),
    };
    Ok(Prepared { key, limit, graph, as_of_ms, include_superseded: a.include_superseded.unwrap_or(false), query_vector, word_vectors })
}

fn ranked_search_tool(db: &MentisDb, a: RankedSearchArgs) -> Result<Box<RawValue>, ToolError> {
    const TOOL: &str = "mentisdb_ranked_search";
    let p = prepare(db, TOOL, &a, 1, 64)?;
    db.with_chain(&p.key, |c| {
        let filter = ThoughtFilter::compile(&a.filter, None, c).map_err(|m| ToolError::invalid(TOOL, m))?;
        let Some(chain) = c else { return Ok(raw(RankedSearchReply { backend: "lexical", total: 0, results: Vec::new() })) };
        let q = RankedQuery {
            text: a.filter.text.as_deref().unwrap_or(""),
            filter: &filter,
            limit: p.limit,
            graph: p.graph,
            as_of_ms: p.as_of_ms,
            include_superseded: p.include_superseded,
            query_vector: p.query_vector.clone(),
            context: a.context.unwrap_or(true),
            word_vectors: p.word_vectors.clone(),
        };
        let r = ranked_search(chain, &q);
        let results = r.hits.iter().map(|h| RankedHitReply::of(chain, h)).collect();
        Ok(raw(RankedSearchReply { backend: r.backend, total: r.total as u64, results }))
    })?
}

fn context_bundles_tool(db: &MentisDb, a: RankedSearchArgs) -> Result<Box<RawValue>, ToolError> {
    const TOOL: &str = "mentisdb_context_bundles";
    let p = prepare(db, TOOL, &a, DEFAULT_CONTEXT_DEPTH, DEFAULT_CONTEXT_VISITED)?;
    db.with_chain(&p.key, |c| {
        let filter = ThoughtFilter::compile(&a.filter, None, c).map_err(|m| ToolError::invalid(TOOL, m))?;
        let Some(chain) = c else { return Ok(raw(ContextBundlesReply { backend: "lexical", total_bundles: 0, consumed_hits: 0, bundles: Vec::new() })) };
        let q = RankedQuery {
            text: a.filter.text.as_deref().unwrap_or(""),
            filter: &filter,
            limit: p.limit,
            graph: p.graph,
            as_of_ms: p.as_of_ms,
            include_superseded: p.include_superseded,
            query_vector: p.query_vector.clone(),
            context: a.context.unwrap_or(true),
            word_vectors: p.word_vectors.clone(),
        };
        let (backend, bundles) = context_bundles(chain, &q, p.graph);
        // Every thought placed in a bundle, seeds included (the reference's `consumed_hits`).
        let consumed_hits: usize = bundles.iter().map(|b| 1 + b.support.len()).sum();
        let bundles: Vec<BundleReply> = bundles
            .iter()
            .map(|b| BundleReply { seed: SeedReply::of(chain, &b.seed), support: b.support.iter().map(|r| ReachedReply::of(chain, r)).collect() })
            .collect();
        Ok(raw(ContextBundlesReply { backend, total_bundles: bundles.len() as u64, consumed_hits: consumed_hits as u64, bundles }))
    })?
}

fn resolve_context_tool(db: &MentisDb, a: ResolveContextArgs) -> Result<Box<RawValue>, ToolError> {
    const TOOL: &str = "mentisdb_resolve_context";
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let locator = ThoughtLocator::exactly_one(TOOL, a.thought_id.as_deref(), a.thought_hash.as_deref(), a.thought_index)?;
    let direction = a.direction.unwrap_or(WalkDirection::Both);
    let max_depth = a.max_depth.unwrap_or(DEFAULT_CONTEXT_DEPTH).min(MAX_GRAPH_DEPTH);
    let max_visited = a.max_visited.map(|v| (v.min(MAX_GRAPH_VISITED as u64) as usize).max(1)).unwrap_or(DEFAULT_CONTEXT_VISITED);
    db.with_chain(&key, |c| {
        let origin = c.and_then(|c| locator.find(c));
        let (Some(chain), Some(origin)) = (c, origin) else {
            return Err(locator.not_found(&key, c.map_or(0, Chain::len)));
        };
        let (reached, truncated) = walk(&chain.ranked_index(), &[origin.index as u32], direction, max_depth, max_visited, |_| true);
        Ok(raw(ResolveContextReply {
            chain_key: &key,
            origin,
            thoughts: reached.iter().map(|r| ReachedReply::of(chain, r)).collect(),
            truncated,
        }))
    })?
}
