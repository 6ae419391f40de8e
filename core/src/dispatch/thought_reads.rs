//! The read tools of the thought family (their table is in
//! `thought_tools.rs`): search, list chains, recent context, Markdown
//! export, summary candidates, get, genesis, traverse and head.

use crate::args::read_args;
use crate::args::Bounded;
use crate::args::ChainKey;
use super::locator::ThoughtLocator;
use super::replies::{
    ChainInfo, GenesisReply, GetThoughtReply, HeadReply, ListChainsReply, MarkdownReply, RecentContextReply, SearchReply, SummaryCandidateReply,
    SummaryCandidatesReply, SummaryGroupReply, TraverseReply,
};
use super::{raw, NoArgs};
use crate::db::MentisDb;
use crate::error::ToolError;
use crate::limits;
use crate::query::{search, FilterArgs, ThoughtFilter, TimeWindow};
use crate::record::ChainFormat;
use crate::render;
use crate::thought::{Thought, THOUGHT_SCHEMA_VERSION};
use crate::traverse::{traverse, Anchor, AnchorBoundary, Direction};
use crate::summary::{summary_candidates, SummaryConfig};
use crate::chain::visibility::Visibility;
use schemars::JsonSchema;
use crate::json_text::JsonText;

/// Just a chain.
#[derive(Debug, Default, JsonSchema)]
pub(super) struct ChainArgs {
    /// Chain to use; the daemon's default chain when omitted.
    pub chain_key: Option<ChainKey>,
}
read_args!(ChainArgs { chain_key });
/// Arguments of `mentisdb_search` and `mentisdb_memory_markdown`.
#[derive(Debug, JsonSchema)]
pub(super) struct SearchArgs {
    pub chain_key: Option<ChainKey>,
    #[serde(flatten)]
    pub filter: FilterArgs,
    /// Keep the newest `limit` matches (clamped to 10000).
    pub limit: Option<SearchLimit>,
    /// Include superseded thoughts; default false.
    pub include_invalidated: Option<bool>,
    /// Alias of include_invalidated.
    pub include_superseded: Option<bool>,
}
read_args!(SearchArgs { chain_key, limit, include_invalidated, include_superseded } flatten { filter });

/// How `mentisdb_summary_candidates` cuts windows.
#[derive(Debug, Default, JsonSchema)]
pub(super) struct SummaryConfigArgs {
    /// Thoughts per window; default 50.
    pub window_size: Option<WindowSize>,
    /// Thoughts two windows share; default 0.
    pub overlap: Option<WindowSize>,
    /// Keep sessions apart; default true.
    pub by_session: Option<bool>,
    /// Keep agents apart; default false.
    pub by_agent: Option<bool>,
    /// Accepted for 0.10.10 clients; changes nothing.
    #[allow(dead_code)]
    #[schemars(extend("deprecated" = true))]
    pub by_entity_type: Option<bool>,
}
read_args!(SummaryConfigArgs { window_size, overlap, by_session, by_agent, by_entity_type });

/// Arguments of `mentisdb_summary_candidates`.
#[derive(Debug, JsonSchema)]
pub(super) struct SummaryCandidatesArgs {
    pub chain_key: Option<ChainKey>,
    pub config: Option<SummaryConfigArgs>,
    /// Only thoughts matching these filters are sources.
    #[serde(flatten)]
    pub filter: FilterArgs,
    /// Candidates to skip first; default 0.
    pub offset: Option<u64>,
    /// Candidates to return; default 100.
    pub limit: Option<Bounded<1, 1000>>,
    /// Include superseded thoughts; default false.
    pub include_invalidated: Option<bool>,
    /// Alias of include_invalidated.
    pub include_superseded: Option<bool>,
}
read_args!(SummaryCandidatesArgs { chain_key, config, offset, limit, include_invalidated, include_superseded } flatten { filter });

/// Arguments of `mentisdb_recent_context`.
#[derive(Debug, JsonSchema)]
pub(super) struct RecentContextArgs {
    pub chain_key: Option<ChainKey>,
    /// How many of the newest thoughts; default 12.
    pub last_n: Option<Bounded<1, { limits::MAX_RECENT_LAST_N as u64 }>>,
    /// Include superseded thoughts; default false.
    pub include_invalidated: Option<bool>,
    /// Alias of include_invalidated.
    pub include_superseded: Option<bool>,
    /// Only this agent's thoughts (as MentisDB 0.10.10).
    pub agent_id: Option<String>,
}
read_args!(RecentContextArgs { chain_key, last_n, include_invalidated, include_superseded, agent_id });

/// Arguments of `mentisdb_get_thought`.
#[derive(Debug, JsonSchema)]
#[schemars(transform = super::locator::exactly_one_schema)]
pub(super) struct GetThoughtArgs {
    pub chain_key: Option<ChainKey>,
    pub thought_id: Option<String>,
    pub thought_hash: Option<String>,
    pub thought_index: Option<u64>,
}
read_args!(GetThoughtArgs { chain_key, thought_id, thought_hash, thought_index });

/// Arguments of `mentisdb_traverse_thoughts`.
#[derive(Debug, JsonSchema)]
#[schemars(transform = super::locator::at_most_one_anchor_schema)]
pub(super) struct TraverseArgs {
    pub chain_key: Option<ChainKey>,
    pub anchor_id: Option<String>,
    pub anchor_hash: Option<String>,
    pub anchor_index: Option<u64>,
    /// `genesis` or `head`.
    pub anchor_boundary: Option<AnchorBoundary>,
    /// `forward` (default) or `backward`.
    pub direction: Option<Direction>,
    /// Include the anchor itself; default false.
    pub include_anchor: Option<bool>,
    /// Matching thoughts per chunk; default 50.
    pub chunk_size: Option<Bounded<1, { limits::MAX_CHUNK_SIZE as u64 }>>,
    #[serde(flatten)]
    pub filter: FilterArgs,
    pub time_window: Option<TimeWindow>,
}
read_args!(TraverseArgs { chain_key, anchor_id, anchor_hash, anchor_index, anchor_boundary, direction, include_anchor, chunk_size, time_window } flatten { filter });

/// How many matches a filtered search keeps.
pub(super) type SearchLimit = Bounded<1, { limits::MAX_SEARCH_LIMIT as u64 }>;
/// Thoughts per summary window (and shared by two).
type WindowSize = Bounded<0, 10_000>;

pub(super) fn clamp_limit(limit: Option<SearchLimit>) -> usize {
    limit.map_or(limits::MAX_SEARCH_LIMIT, Bounded::get)
}

pub(super) fn filtered(db: &MentisDb, tool: &str, a: &SearchArgs) -> Result<(String, Vec<Thought>, usize, Option<String>), ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let limit = clamp_limit(a.limit);
    db.read_chain(&key, |c| {
        let filter = ThoughtFilter::compile(&a.filter, None, c).map_err(|m| ToolError::invalid(tool, m))?;
        Ok(match c {
            Some(c) => (search(c, &filter, Visibility::from_args(a.include_invalidated, a.include_superseded, None), limit).into_iter().cloned().collect(), c.len(), c.head().map(|t| t.hash.to_hex())),
            None => (Vec::new(), 0, None),
        })
    })?
    .map(|(thoughts, total, head)| (key, thoughts, total, head))
}

pub(super) fn search_tool(db: &MentisDb, a: SearchArgs) -> Result<JsonText, ToolError> {
    const TOOL: &str = "mentisdb_search";
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let limit = clamp_limit(a.limit);
    db.read_chain(&key, |c| {
        let filter = ThoughtFilter::compile(&a.filter, None, c).map_err(|m| ToolError::invalid(TOOL, m))?;
        let thoughts = c.map(|c| search(c, &filter, Visibility::from_args(a.include_invalidated, a.include_superseded, None), limit)).unwrap_or_default();
        Ok(SearchReply { thoughts }.to_json())
    })?
}

pub(super) fn memory_markdown(db: &MentisDb, a: SearchArgs) -> Result<MarkdownReply, ToolError> {
    let (key, thoughts, total, head) = filtered(db, "mentisdb_memory_markdown", &a)?;
    let refs: Vec<&Thought> = thoughts.iter().collect();
    Ok(MarkdownReply { markdown: render::memory_markdown(&key, total, head.as_deref(), &refs) })
}

pub(super) fn list_chains(db: &MentisDb, caller: Option<super::Caller<'_>>, _a: NoArgs) -> Result<ListChainsReply, ToolError> {
    let mut chains = Vec::new();
    for key in db.chain_keys() {
        // Parked chains answer from their summary, without loading.
        let Some((format, location)) = db.chain_storage_info(&key) else { continue };
        let Some((thought_count, agent_count)) = db.chain_counts(&key) else { continue };
        chains.push(ChainInfo {
            chain_key: key,
            version: u32::from(THOUGHT_SCHEMA_VERSION),
            storage_adapter: format.adapter_name().to_string(),
            thought_count,
            agent_count,
            storage_location: crate::caller::shown_location(caller, location),
        });
    }
    let chain_keys = chains.iter().map(|c| c.chain_key.clone()).collect();
    Ok(ListChainsReply { default_chain_key: db.config().default_chain_key.clone(), chain_keys, chains })
}

pub(super) fn recent_context(db: &MentisDb, a: RecentContextArgs) -> Result<RecentContextReply, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    if a.agent_id.as_deref().is_some_and(|id| id.chars().any(char::is_control)) {
        return Err(ToolError::invalid("mentisdb_recent_context", limits::LimitError::ControlCharacters { field: "agent_id" }));
    }
    let n = a.last_n.map_or(limits::DEFAULT_RECENT_LAST_N, Bounded::get);
    let prompt = db.read_chain(&key, |c| match c {
        Some(c) => {
            // The newest `n` thoughts the read shows, in append order
            // (claim records are lease bookkeeping, not memory to resume from).
            let view = Visibility::from_args(a.include_invalidated, a.include_superseded, None).over(c);
            let agent = a.agent_id.as_deref().map(str::trim).filter(|a| !a.is_empty());
            let mut recent: Vec<&Thought> = (0..c.len())
                .rev()
                .filter(|i| !view.hides(*i) && !c.thoughts()[*i].is_claim_record() && agent.is_none_or(|a| c.thoughts()[*i].agent_id == a))
                .take(n)
                .map(|i| &c.thoughts()[i])
                .collect();
            recent.reverse();
            render::recent_context(&key, c.len(), &recent)
        }
        None => render::recent_context(&key, 0, &[]),
    })?;
    Ok(RecentContextReply { prompt })
}

pub(super) fn get_thought(db: &MentisDb, a: GetThoughtArgs) -> Result<JsonText, ToolError> {
    const TOOL: &str = "mentisdb_get_thought";
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let locator = ThoughtLocator::exactly_one(TOOL, a.thought_id.as_deref(), a.thought_hash.as_deref(), a.thought_index)?;
    let (found, len) = db.read_chain(&key, |c| c.map(|c| (locator.find(c).cloned(), c.len())).unwrap_or((None, 0)))?;
    match found {
        Some(t) => Ok(raw(GetThoughtReply { chain_key: key, thought: &t })),
        None => Err(locator.not_found(&key, len)),
    }
}

pub(super) fn genesis(db: &MentisDb, a: ChainArgs) -> Result<JsonText, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    db.read_chain(&key, |c| raw(GenesisReply { chain_key: key.clone(), thought: c.and_then(|c| c.thoughts().first()) }))
}

pub(super) fn head(db: &MentisDb, caller: Option<super::Caller<'_>>, a: ChainArgs) -> Result<JsonText, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let location = crate::caller::shown_location(caller, db.storage_location(&key));
    db.read_chain(&key, |c| {
        raw(match c {
            Some(c) => HeadReply {
                chain_key: key.clone(),
                thought_count: c.len() as u64,
                head_hash: c.head().map(|t| t.hash.to_hex()),
                latest_thought: c.head(),
                integrity_ok: c.head_integrity_ok(),
                storage_location: location,
            },
            None => HeadReply::<&Thought> {
                chain_key: key.clone(),
                thought_count: 0,
                head_hash: None,
                latest_thought: None,
                integrity_ok: true,
                storage_location: location,
            },
        })
    })
}

pub(super) fn traverse_tool(db: &MentisDb, a: TraverseArgs) -> Result<JsonText, ToolError> {
    const TOOL: &str = "mentisdb_traverse_thoughts";
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let direction = a.direction.unwrap_or(Direction::Forward);
    let include_anchor = a.include_anchor.unwrap_or(false);
    let chunk_size = a.chunk_size.map_or(limits::DEFAULT_CHUNK_SIZE, Bounded::get);
    let locators = ThoughtLocator::count(a.anchor_id.as_deref(), a.anchor_hash.as_deref(), a.anchor_index) + a.anchor_boundary.is_some() as u8;
    if locators > 1 {
        return Err(ToolError::invalid(TOOL, "give at most one of anchor_id, anchor_hash, anchor_index or anchor_boundary"));
    }
    db.read_chain(&key, |c| {
        let filter = ThoughtFilter::compile(&a.filter, a.time_window.as_ref(), c).map_err(|m| ToolError::invalid(TOOL, m))?;
        let empty = crate::chain::Chain::new(&key, ChainFormat::Binary);
        let chain = c.unwrap_or(&empty);
        let anchor = match (a.anchor_boundary, ThoughtLocator::first(a.anchor_id.as_deref(), a.anchor_hash.as_deref(), a.anchor_index)) {
            (Some(boundary), _) => Some(Anchor::from(boundary)),
            (None, Some(locator)) => Some(Anchor::Thought(locator.find(chain).ok_or_else(|| locator.not_found(&key, chain.len()))?.index)),
            (None, None) => None,
        };
        let page = traverse(chain, anchor, direction, include_anchor, chunk_size, &filter);
        Ok(TraverseReply {
            chain_key: key.clone(),
            direction: direction.as_str().to_string(),
            include_anchor,
            chunk_size: chunk_size as u64,
            anchor: page.anchor,
            thoughts: page.thoughts,
            has_more: page.has_more,
            next_cursor: page.next_cursor,
            previous_cursor: page.previous_cursor,
        }
        .to_json())
    })?
}

pub(super) fn summary_candidates_tool(db: &MentisDb, a: SummaryCandidatesArgs) -> Result<SummaryCandidatesReply, ToolError> {
    const TOOL: &str = "mentisdb_summary_candidates";
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let c = a.config.unwrap_or_default();
    let defaults = SummaryConfig::default();
    let config = SummaryConfig {
        window_size: c.window_size.map_or(defaults.window_size, Bounded::get),
        overlap: c.overlap.map_or(defaults.overlap, Bounded::get),
        by_session: c.by_session.unwrap_or(defaults.by_session),
        by_agent: c.by_agent.unwrap_or(defaults.by_agent),
    };
    let offset = a.offset.unwrap_or(0) as usize;
    let limit = a.limit.map_or(100, Bounded::get);
    let visibility = Visibility::from_args(a.include_invalidated, a.include_superseded, None);
    db.read_chain(&key, |c| {
        let filter = ThoughtFilter::compile(&a.filter, None, c).map_err(|m| ToolError::invalid(TOOL, m))?;
        let Some(chain) = c else { return Ok(SummaryCandidatesReply { chain_key: key.clone(), total: 0, candidates: Vec::new() }) };
        let sources: Vec<u64> = search(chain, &filter, visibility, usize::MAX).into_iter().map(|t| t.index).collect();
        let all = summary_candidates(chain, &sources, config);
        let total = all.len() as u64;
        let candidates = all
            .into_iter()
            .skip(offset)
            .take(limit)
            .map(|cand| {
                let source_ids = cand.indices.iter().map(|i| chain.thoughts()[*i as usize].id.to_string()).collect();
                SummaryCandidateReply {
                    start_index: cand.indices[0],
                    end_index: *cand.indices.last().expect("windows are never empty"),
                    source_indices: cand.indices,
                    source_ids,
                    group: SummaryGroupReply { session_id: cand.group.0, agent_id: cand.group.1, entity_type: None },
                }
            })
            .collect();
        Ok(SummaryCandidatesReply { chain_key: key.clone(), total, candidates })
    })?
}
