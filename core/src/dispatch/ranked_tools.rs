//! Ranked retrieval tools: ranked search, context bundles, and graph
//! context resolution from one thought.

use crate::args::read_args;
use crate::args::Bounded;
use crate::args::ChainKey;
use super::graph_mode::GraphMode;
use super::locator::ThoughtLocator;
use super::replies::{VectorMetadata, VectorStatus, VectorsRebuildReply, 
    BundleReply, ContextBundlesReply, LexicalHitReply, LexicalSearchReply, RankedHitReply, RankedSearchReply, ReachedReply, ResolveContextReply, SeedReply,
};
use super::{raw, tools};
use crate::limits;
use crate::chain::Chain;
use crate::db::MentisDb;
use crate::error::ToolError;
use crate::query::{FilterArgs, ThoughtFilter};
use crate::ranked::rerank::{fuse, signals, DEFAULT_RERANK_K, MAX_RERANK_K, RRF_SCORE_SCALE};
use crate::ranked::{EmbeddingProvider, RankedHit};
use std::sync::Arc;
use crate::chain::visibility::Visibility;
use crate::ranked::{context_bundles, ranked_search, walk, GraphOptions, RankedQuery, ThoughtMatch, WalkDirection};
use crate::timestamp::parse_rfc3339_millis;
use schemars::JsonSchema;
use crate::json_text::JsonText;
use super::replies::write_ranked_reply;

tools! {
    tool!(
        read "mentisdb_ranked_search",
        "Ask a chain a question (`text`): BM25, graph expansion over refs and relations, recency, importance, session context, vectors when the host embeds. Hits explain their scores.",
        RankedSearchArgs => RankedSearchReply<'static>,
        ranked_search_tool,
        caller
    ).blocking(),
    tool!(
        read "mentisdb_context_bundles",
        "Ranked seeds for `text`, each with the thoughts reached from it through refs and relations (graph.max_depth, default 2).",
        RankedSearchArgs => ContextBundlesReply<'static>,
        context_bundles_tool
    ).blocking(),
    tool!(
        read "mentisdb_lexical_search",
        "Rank a chain's thoughts by BM25F for `text` alone (no graph, context or vectors), with paging.",
        LexicalSearchArgs => LexicalSearchReply<'static>,
        lexical_search_tool
    ).blocking(),
    tool!(
        read "mentisdb_federated_search",
        "Ranked search over several chains (chain_keys), merged; each hit names its chain. Takes ranked search's arguments.",
        FederatedSearchArgs => RankedSearchReply<'static>,
        federated_search_tool
    ).many_chains().blocking(),
    tool!(
        read "mentisdb_resolve_context",
        "From one thought, follow refs and relations up to max_depth (default 2): each reached thought with its depth and path.",
        ResolveContextArgs => ResolveContextReply<'static>,
        resolve_context_tool
    ).blocking(),
    tool!(
        "mentisdb_rebuild_vectors",
        "Re-embed every thought of a chain with the daemon's embedding provider; report the vector index.",
        RebuildVectorsArgs => VectorsRebuildReply,
        rebuild_vectors_tool
    ),
}

/// Arguments of `mentisdb_rebuild_vectors`.
#[derive(Debug, JsonSchema)]
pub(super) struct RebuildVectorsArgs {
    /// Chain to use; the daemon's default chain when omitted.
    pub chain_key: Option<ChainKey>,
}
read_args!(RebuildVectorsArgs { chain_key });

fn rebuild_vectors_tool(db: &MentisDb, a: RebuildVectorsArgs) -> Result<VectorsRebuildReply, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let crate::db::RebuiltVectors { thoughts, indexed, model } = db.rebuild_vectors(&key)?;
    let generated_at = crate::timestamp::format_rfc3339_millis(db.now_millis());
    let name = model.as_ref().map(|(n, _)| n.clone());
    let status = VectorStatus {
        enabled: model.is_some(),
        backend_building: false,
        backend_kind: "Exact".into(),
        freshness: if model.is_some() { "Fresh" } else { "Disabled" }.into(),
        generated_at,
        indexed_thought_count: indexed as u64,
        thought_count: thoughts as u64,
        load_error: None,
        managed_in_memory: true,
        sidecar_exists: false,
        sidecar_path: None,
        provider_key: name.clone(),
        provider_kind: name,
        metadata: model.map(|(model_id, dimension)| VectorMetadata { model_id, dimension: dimension as u64, embedding_version: "v1".into() }),
    };
    Ok(VectorsRebuildReply { chain_key: key, status })
}

/// Default number of ranked results.
pub(super) const DEFAULT_RANKED_LIMIT: usize = 10;
/// Most ranked results per call.
pub(super) const MAX_RANKED_LIMIT: usize = 100;
/// Deepest graph walk.
pub(super) const MAX_GRAPH_DEPTH: u32 = 8;
/// Most thoughts one walk may reach.
pub(super) const MAX_GRAPH_VISITED: usize = 10_000;
/// Default page of lexical search.
pub(super) const DEFAULT_LEXICAL_LIMIT: usize = 50;
/// Most chains one federated search reads.
pub(super) const MAX_FEDERATED_CHAINS: usize = 64;
/// Largest `offset` of a ranked call.
pub(super) const MAX_RANKED_OFFSET: usize = 10_000;
/// Default depth of context bundles and context resolution.
pub(super) const DEFAULT_CONTEXT_DEPTH: u32 = 2;
/// Default reach of one context walk.
pub(super) const DEFAULT_CONTEXT_VISITED: usize = 256;

/// How many ranked results a call returns.
type RankedLimit = Bounded<1, { MAX_RANKED_LIMIT as u64 }>;
/// How many ranked results a call skips.
type RankedOffset = Bounded<0, { MAX_RANKED_OFFSET as u64 }>;
/// How many steps a graph walk takes.
type GraphDepth = Bounded<0, { MAX_GRAPH_DEPTH as u64 }>;
/// How many thoughts a graph walk reaches.
type GraphVisited = Bounded<1, { MAX_GRAPH_VISITED as u64 }>;
/// How many candidates per ranking reciprocal rank fusion takes.
type RerankK = Bounded<1, { MAX_RERANK_K as u64 }>;

/// Graph expansion settings.
#[derive(Debug, Default, JsonSchema)]
pub(super) struct GraphArgs {
    /// Steps from each seed; default 1 (bundles 2), at most 8.
    pub max_depth: Option<GraphDepth>,
    /// Thoughts reached per seed; default 64 (bundles 256).
    pub max_visited: Option<GraphVisited>,
    /// `both` (default), `outgoing`, `incoming`, or `off`.
    pub mode: Option<GraphMode>,
}
read_args!(GraphArgs { max_depth, max_visited, mode });

/// Arguments of `mentisdb_ranked_search` and `mentisdb_context_bundles`.
#[derive(Debug, JsonSchema)]
pub(super) struct RankedSearchArgs {
    pub chain_key: Option<ChainKey>,
    /// The search filters; `text` is the natural-language query.
    #[serde(flatten)]
    pub filter: FilterArgs,
    /// Results to return; default 10, at most 100.
    pub limit: Option<RankedLimit>,
    pub graph: Option<GraphArgs>,
    /// RFC 3339: answer as the chain stood then.
    pub as_of: Option<String>,
    /// Include superseded thoughts; default false.
    pub include_invalidated: Option<bool>,
    /// Alias of include_invalidated.
    pub include_superseded: Option<bool>,
    /// Results to skip, for paging; default 0.
    pub offset: Option<RankedOffset>,
    /// Fuse lexical, vector and graph rankings (RRF).
    pub enable_reranking: Option<bool>,
    /// Candidates per ranking fused; default 50.
    pub rerank_k: Option<RerankK>,
    /// Score session neighbours of matches; default true.
    pub context: Option<bool>,
}
read_args!(RankedSearchArgs { chain_key, limit, graph, as_of, include_invalidated, include_superseded, offset, enable_reranking, rerank_k, context } flatten { filter });

/// Arguments of `mentisdb_lexical_search`.
#[derive(Debug, JsonSchema)]
pub(super) struct LexicalSearchArgs {
    pub chain_key: Option<ChainKey>,
    /// The text to rank against.
    pub text: String,
    /// Results to return; default 50, at most 100.
    pub limit: Option<RankedLimit>,
    /// Results to skip first; default 0, at most 10000.
    pub offset: Option<RankedOffset>,
    /// Only thoughts by these agent ids.
    pub agent_ids: Option<Vec<String>>,
    /// Only thoughts of these types.
    pub thought_types: Option<Vec<crate::thought::ThoughtType>>,
    /// Include superseded thoughts; default false.
    pub include_invalidated: Option<bool>,
    /// Alias of include_invalidated.
    pub include_superseded: Option<bool>,
}
read_args!(LexicalSearchArgs { chain_key, text, limit, offset, agent_ids, thought_types, include_invalidated, include_superseded });

/// Arguments of `mentisdb_federated_search`: ranked search's, over `chain_keys`.
#[derive(Debug, JsonSchema)]
pub(super) struct FederatedSearchArgs {
    /// The chains to search (at most 64).
    pub chain_keys: Vec<ChainKey>,
    #[serde(flatten)]
    pub ranked: RankedSearchArgs,
}
read_args!(FederatedSearchArgs { chain_keys } flatten { ranked });

/// Arguments of `mentisdb_resolve_context`.
#[derive(Debug, JsonSchema)]
#[schemars(transform = super::locator::exactly_one_schema)]
pub(super) struct ResolveContextArgs {
    pub chain_key: Option<ChainKey>,
    pub thought_id: Option<String>,
    pub thought_index: Option<u64>,
    pub thought_hash: Option<String>,
    /// Steps to follow; default 2, clamped to 8.
    pub max_depth: Option<GraphDepth>,
    /// Thoughts to reach at most; default 256.
    pub max_visited: Option<GraphVisited>,
    /// `outgoing`, `incoming` or `both` (default).
    pub direction: Option<WalkDirection>,
}
read_args!(ResolveContextArgs { chain_key, thought_id, thought_index, thought_hash, max_depth, max_visited, direction });

fn graph_options(g: Option<&GraphArgs>, default_depth: u32, default_visited: usize) -> GraphOptions {
    let mut o = GraphOptions { max_depth: default_depth, max_visited: default_visited, direction: WalkDirection::Both };
    let Some(g) = g else { return o };
    if let Some(d) = g.max_depth {
        o.max_depth = d.get() as u32;
    }
    if let Some(v) = g.max_visited {
        o.max_visited = v.get();
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
    /// The question.
    text: String,
    /// Score session neighbours of matches.
    context: bool,
    /// Results to skip, then to return.
    offset: usize,
    limit: usize,
    rerank_k: Option<usize>,
    graph: GraphOptions,
    as_of_ms: Option<i64>,
    include_superseded: bool,
    query_vector: Option<Vec<f32>>,
    word_vectors: crate::ranked::search::WordVectors,
}

/// The query of `a`, embedded by `provider` when there is one (the
/// registered [`MentisDb::embedding_provider`], read by the caller once).
fn prepare(db: &MentisDb, tool: &str, a: &RankedSearchArgs, default_depth: u32, default_visited: usize, provider: Option<Arc<dyn EmbeddingProvider>>) -> Result<Prepared, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let limit = a.limit.map_or(DEFAULT_RANKED_LIMIT, Bounded::get);
    let offset = a.offset.map_or(0, Bounded::get);
    let rerank_k = a.enable_reranking.unwrap_or(false).then(|| a.rerank_k.map_or(DEFAULT_RERANK_K, Bounded::get));
    let graph = graph_options(a.graph.as_ref(), default_depth, default_visited);
    let as_of_ms = a.as_of.as_deref().map(parse_rfc3339_millis).transpose().map_err(|m| ToolError::invalid(tool, format!("as_of: {m}")))?;
    let text = a.filter.text.as_deref().unwrap_or("").trim();
    let (query_vector, word_vectors) = match provider {
        Some(p) if !text.is_empty() => {
            // The chain's own words keep their vectors: only new words (and the question) are embedded, outside the chain's lock.
            let terms = crate::ranked::search::query_terms(text);
            let known = db.with_chain(&key, |c| c.map(|c| crate::ranked::search::known_word_vectors(&c.ranked_index(), &terms)))?;
            crate::ranked::search::embed_query(&*p, text, &known.unwrap_or_default())
        }
        _ => (None, Vec::new()),
    };
    let include_superseded = a.include_invalidated.unwrap_or(false) || a.include_superseded.unwrap_or(false);
    let (text, context) = (a.filter.text.clone().unwrap_or_default(), a.context.unwrap_or(true));
    Ok(Prepared { key, text, context, offset, limit, rerank_k, graph, as_of_ms, include_superseded, query_vector, word_vectors })
}

impl Prepared {
    /// The ranker's query for the first `limit` hits that pass `filter`.
    fn query<'a>(&'a self, db: &'a MentisDb, filter: &'a dyn ThoughtMatch, limit: usize) -> RankedQuery<'a> {
        RankedQuery {
            text: &self.text,
            filter,
            limit,
            graph: self.graph,
            as_of_ms: self.as_of_ms,
            include_superseded: self.include_superseded,
            query_vector: self.query_vector.clone(),
            context: self.context,
            word_vectors: self.word_vectors.clone(),
            rerank_k: self.rerank_k,
            parallelism: db.parallelism(),
        }
    }
}

fn ranked_search_tool(db: &MentisDb, caller: Option<super::Caller<'_>>, a: RankedSearchArgs) -> Result<JsonText, ToolError> {
    const TOOL: &str = "mentisdb_ranked_search";
    // A branch also answers from the chains it branched from (MentisDB
    // 0.10.10), merged as a federated search; only those the caller may read.
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let ancestors: Vec<String> = db.ancestor_keys(&key)?.into_iter().filter(|k| caller.and_then(|c| c.reads).is_none_or(|r| r.may_read(k))).collect();
    if !ancestors.is_empty() {
        let keys: Vec<String> = std::iter::once(key).chain(ancestors).collect();
        return federated(db, TOOL, keys, &a);
    }
    let usual = GraphOptions::default();
    let p = prepare(db, TOOL, &a, usual.max_depth, usual.max_visited, db.embedding_provider())?;
    db.read_chain(&p.key, |c| answer_ranked_search(db, &a, &p, c))?
}

/// The most thoughts a chain may hold for [`ranked_search_now`] to answer
/// (a lexical query over 10,000 LoCoMo-sized turns takes about a
/// millisecond here), the most bytes it may take in storage (the phrase and
/// filter stages read each candidate's words), the most agents it may have
/// registered (a `text` query scans their records) and the longest query
/// text (its word pairs are each looked for in every candidate).
const NOW_MAX_THOUGHTS: usize = 10_000;
const NOW_MAX_CHAIN_BYTES: u64 = 8 << 20;
const NOW_MAX_AGENTS: usize = 1_000;
const NOW_MAX_QUERY_BYTES: usize = 512;

/// [`ranked_search_tool`] where nothing may wait (a host's event loop; see
/// [`MentisDb::call_raw_now`]): `None`, with nothing done, unless no model
/// embeds queries, the chain is in memory, free, caught up and no branch,
/// and both chain and query are small (the limits above; at most
/// [`MAX_RANKED_LIMIT`] results with the offset; the default graph walk).
pub(super) fn ranked_search_now(db: &MentisDb, a: &RankedSearchArgs) -> Option<Result<JsonText, ToolError>> {
    const TOOL: &str = "mentisdb_ranked_search";
    // A model would embed the query: read once, without waiting.
    if db.embedding_provider_now()?.is_some() || a.filter.text.as_ref().is_some_and(|t| t.len() > NOW_MAX_QUERY_BYTES) {
        return None;
    }
    let usual = GraphOptions::default();
    let p = match prepare(db, TOOL, a, usual.max_depth, usual.max_visited, None) {
        Ok(p) => p,
        Err(e) => return Some(Err(e)),
    };
    if p.offset + p.limit > MAX_RANKED_LIMIT || p.graph.max_depth > usual.max_depth || p.graph.max_visited > usual.max_visited {
        return None;
    }
    db.read_chain_now(&p.key, |chain, bytes| {
        let small = chain.len() <= NOW_MAX_THOUGHTS && bytes <= NOW_MAX_CHAIN_BYTES && chain.agents().len() <= NOW_MAX_AGENTS;
        let quick = small && chain.branched_from().is_none() && chain.ranked_ready_now();
        quick.then(|| answer_ranked_search(db, a, &p, Some(chain)))
    })
    .flatten()
}

/// The ranked search reply for `p` over chain `c` (`None`: the default
/// chain before its first thought).
fn answer_ranked_search(db: &MentisDb, a: &RankedSearchArgs, p: &Prepared, c: Option<&Chain>) -> Result<JsonText, ToolError> {
    let filter = ThoughtFilter::compile(&a.filter, None, c).map_err(|m| ToolError::invalid("mentisdb_ranked_search", m))?;
    let Some(chain) = c else { return Ok(RankedSearchReply { backend: "lexical", total: 0, results: Vec::new() }.to_json()) };
    let q = p.query(db, &filter, p.offset + p.limit);
    let r = ranked_search(chain, &q);
    let results = r.hits.iter().skip(p.offset).map(|h| RankedHitReply::of(chain, h)).collect();
    Ok(RankedSearchReply { backend: r.backend, total: r.total as u64, results }.to_json())
}

fn context_bundles_tool(db: &MentisDb, a: RankedSearchArgs) -> Result<JsonText, ToolError> {
    const TOOL: &str = "mentisdb_context_bundles";
    let p = prepare(db, TOOL, &a, DEFAULT_CONTEXT_DEPTH, DEFAULT_CONTEXT_VISITED, db.embedding_provider())?;
    db.read_chain(&p.key, |c| {
        let filter = ThoughtFilter::compile(&a.filter, None, c).map_err(|m| ToolError::invalid(TOOL, m))?;
        let Some(chain) = c else { return Ok(raw(ContextBundlesReply { backend: "lexical", total_bundles: 0, consumed_hits: 0, bundles: Vec::new() })) };
        let q = p.query(db, &filter, p.offset + p.limit);
        let (backend, bundles) = context_bundles(chain, &q, p.graph);
        // Every thought placed in a bundle, seeds included (the reference's `consumed_hits`).
        let consumed_hits: usize = bundles.iter().map(|b| 1 + b.support.len()).sum();
        let bundles: Vec<BundleReply> = bundles
            .iter()
            .skip(p.offset)
            .map(|b| BundleReply { seed: SeedReply::of(chain, &b.seed), support: ReachedReply::of_walk(chain, &b.support) })
            .collect();
        Ok(raw(ContextBundlesReply { backend, total_bundles: bundles.len() as u64, consumed_hits: consumed_hits as u64, bundles }))
    })?
}

fn resolve_context_tool(db: &MentisDb, a: ResolveContextArgs) -> Result<JsonText, ToolError> {
    const TOOL: &str = "mentisdb_resolve_context";
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let locator = ThoughtLocator::exactly_one(TOOL, a.thought_id.as_deref(), a.thought_hash.as_deref(), a.thought_index)?;
    let direction = a.direction.unwrap_or(WalkDirection::Both);
    let max_depth = a.max_depth.map_or(DEFAULT_CONTEXT_DEPTH, |d| d.get() as u32);
    let max_visited = a.max_visited.map_or(DEFAULT_CONTEXT_VISITED, Bounded::get);
    db.read_chain(&key, |c| {
        let origin = c.and_then(|c| locator.find(c));
        let (Some(chain), Some(origin)) = (c, origin) else {
            return Err(locator.not_found(&key, c.map_or(0, Chain::len)));
        };
        let (reached, truncated) = walk(&chain.ranked_index(), &[origin.index as u32], direction, max_depth, max_visited, |_| true);
        Ok(raw(ResolveContextReply {
            chain_key: &key,
            origin,
            thoughts: ReachedReply::of_walk(chain, &reached),
            truncated,
        }))
    })?
}

fn lexical_search_tool(db: &MentisDb, a: LexicalSearchArgs) -> Result<JsonText, ToolError> {
    const TOOL: &str = "mentisdb_lexical_search";
    let key = db.resolve_key(a.chain_key.as_deref())?;
    limits::check_query_text(&a.text).map_err(|m| ToolError::invalid(TOOL, m))?;
    let limit = a.limit.map_or(DEFAULT_LEXICAL_LIMIT, Bounded::get);
    let offset = a.offset.map_or(0, Bounded::get);
    let visibility = Visibility::from_args(a.include_invalidated, a.include_superseded, None);
    // Words only: no graph, no conversational context, no vectors.
    let p = Prepared {
        key: key.clone(),
        text: a.text.clone(),
        context: false,
        offset,
        limit,
        rerank_k: None,
        graph: GraphOptions { max_depth: 0, ..GraphOptions::default() },
        as_of_ms: None,
        include_superseded: visibility.include_invalidated,
        query_vector: None,
        word_vectors: Vec::new(),
    };
    let args = FilterArgs { agent_ids: a.agent_ids, thought_types: a.thought_types, ..FilterArgs::default() };
    db.read_chain(&key, |c| {
        let filter = ThoughtFilter::compile(&args, None, c).map_err(|m| ToolError::invalid(TOOL, m))?;
        let Some(chain) = c else { return Ok(raw(LexicalSearchReply { results: Vec::new(), total: 0 })) };
        let q = p.query(db, &filter, offset + limit);
        let r = ranked_search(chain, &q);
        let results = r
            .hits
            .iter()
            .skip(offset)
            .map(|h| LexicalHitReply { thought: &chain.thoughts()[h.index as usize], score: h.score.lexical, matched_terms: &h.matched_terms, match_sources: &h.match_sources })
            .collect();
        Ok(raw(LexicalSearchReply { results, total: r.total as u64 }))
    })?
}

/// One hit of a federated search, before it is written.
struct FederatedHit {
    chain: usize,
    id: String,
    hit: RankedHit,
}

fn federated_search_tool(db: &MentisDb, a: FederatedSearchArgs) -> Result<JsonText, ToolError> {
    const TOOL: &str = "mentisdb_federated_search";
    if a.chain_keys.len() > MAX_FEDERATED_CHAINS {
        return Err(ToolError::invalid(TOOL, format!("chain_keys: at most {MAX_FEDERATED_CHAINS} chains")));
    }
    if a.ranked.chain_key.is_some() {
        return Err(ToolError::invalid(TOOL, "name the chains in chain_keys (chain_key is for one-chain tools)"));
    }
    let mut keys: Vec<String> = Vec::new();
    for k in &a.chain_keys {
        let k = db.resolve_key(Some(k))?;
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    federated(db, TOOL, keys, &a.ranked)
}

/// One ranked search over `keys`, merged: each thought id once (its better
/// score), RRF across chains when asked, then paged.
fn federated(db: &MentisDb, tool: &'static str, keys: Vec<String>, ranked: &RankedSearchArgs) -> Result<JsonText, ToolError> {
    let usual = GraphOptions::default();
    let p = prepare(db, tool, ranked, usual.max_depth, usual.max_visited, db.embedding_provider())?;
    // Each chain ranks enough that deduplication cannot shrink the page.
    let per_chain = (p.offset + p.limit).saturating_mul(keys.len().max(1)).min(MAX_RANKED_OFFSET + MAX_RANKED_LIMIT);
    let mut hits: Vec<FederatedHit> = Vec::new();
    let (mut total, mut hybrid) = (0u64, false);
    for (chain_no, key) in keys.iter().enumerate() {
        // Chains that do not exist are skipped, as 0.10.10 does.
        if !db.chain_exists(key)? {
            continue;
        }
        db.with_chain(key, |c| -> Result<(), ToolError> {
            let Some(chain) = c else { return Ok(()) };
            let filter = ThoughtFilter::compile(&ranked.filter, None, Some(chain)).map_err(|m| ToolError::invalid(tool, m))?;
            // Fusion runs once, across the chains' merged hits below.
            let q = RankedQuery { rerank_k: None, ..p.query(db, &filter, per_chain) };
            let r = ranked_search(chain, &q);
            total += r.total as u64;
            hybrid |= r.backend == "hybrid";
            hits.extend(r.hits.into_iter().map(|hit| FederatedHit { chain: chain_no, id: chain.thoughts()[hit.index as usize].id.to_string(), hit }));
            Ok(())
        })??;
    }
    // One entry per thought id: the better-scored occurrence.
    let mut best: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    let mut deduped: Vec<FederatedHit> = Vec::with_capacity(hits.len());
    for h in hits {
        match best.get(&h.id) {
            Some(&at) if deduped[at].hit.score.total >= h.hit.score.total => {}
            Some(&at) => deduped[at] = h,
            None => {
                best.insert(h.id.clone(), deduped.len());
                deduped.push(h);
            }
        }
    }
    // RRF across every chain's hits, keyed by (chain, thought id).
    if let Some(k) = p.rerank_k {
        let items: Vec<((usize, String), [f32; 3])> = deduped.iter().map(|h| ((h.chain, h.id.clone()), signals(&h.hit.score))).collect();
        let fused = fuse(&items, k);
        for h in &mut deduped {
            let rrf = fused.get(&(h.chain, h.id.clone())).copied().unwrap_or(0.0);
            h.hit.score.total += RRF_SCORE_SCALE * rrf;
            h.hit.score.rrf = rrf;
        }
    }
    crate::sorting::sort_by(&mut deduped, |x, y| {
        y.hit.score.total.total_cmp(&x.hit.score.total).then(x.hit.index.cmp(&y.hit.index)).then(keys[x.chain].cmp(&keys[y.chain])).then(x.id.cmp(&y.id))
    });
    // A ranked search reply, each hit written while its chain is read.
    let shown: Vec<_> = deduped.into_iter().skip(p.offset).take(p.limit).collect();
    write_ranked_reply(if hybrid { "hybrid" } else { "lexical" }, total, shown.len(), |hits| {
        for h in &shown {
            // Positions survive appends and forgetting, so the hit still names its thought.
            db.with_chain(&keys[h.chain], |c| {
                if let Some(chain) = c {
                    hits.write(|out| RankedHitReply::of(chain, &h.hit).write_json(out));
                }
            })?;
        }
        Ok(())
    })
}
