//! Chain tools: bootstrap, append, retrospective, search, list chains,
//! recent context, Markdown export, get, genesis, traverse, head.

use super::locator::ThoughtLocator;
use super::replies::{
    AppendReply, BootstrapReply, ChainInfo, ForgetReply, GenesisReply, GetThoughtReply, HeadReply, ListChainsReply, MarkdownReply,
    RecentContextReply, SearchReply, SummaryCandidateReply, SummaryCandidatesReply, SummaryGroupReply, TraverseReply,
};
use super::{raw, tools, Caller, NoArgs};
use crate::chain::{NewThought, RelationInput};
use crate::db::MentisDb;
use crate::error::ToolError;
use crate::limits;
use crate::query::{search, FilterArgs, ThoughtFilter, TimeWindow};
use crate::record::ChainFormat;
use crate::render;
use crate::thought::{MemoryScope, RelationKind, Thought, ThoughtRole, ThoughtType, THOUGHT_SCHEMA_VERSION};
use crate::traverse::{traverse, Anchor, AnchorBoundary, Direction};
use crate::summary::{summary_candidates, SummaryConfig};
use crate::visibility::Visibility;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::value::RawValue;

tools! {
    tool!("mentisdb_bootstrap", "Create the chain if needed and write one bootstrap memory (Summary/Checkpoint) only when the chain is empty. Nothing is overwritten.", BootstrapArgs => BootstrapReply, bootstrap),
    tool!("mentisdb_append", "Append a durable thought (typed, scored, tagged, optionally signed) to a chain. Returns the stored thought with its index, id and hash.", AppendArgs => AppendReply, append),
    tool!("mentisdb_append_retrospective", "Append a lesson learned after a hard failure or non-obvious fix: role Retrospective, thought_type defaults to LessonLearned. Link the triggering mistake with refs.", RetrospectiveArgs => AppendReply, append_retrospective),
    tool!(read "mentisdb_search", "Search a chain with ANDed filters (text, types, roles, tags, concepts, agents, scores, time). Returns the newest `limit` matches in append order.", SearchArgs => SearchReply, search_tool),
    tool!(read "mentisdb_list_chains", "List the chains this daemon stores, with thought and agent counts and storage location.", NoArgs => ListChainsReply, list_chains).daemon_wide(),
    tool!(read "mentisdb_recent_context", "Render the latest thoughts (last_n, default 12) as a prompt snippet for resuming work.", RecentContextArgs => RecentContextReply, recent_context),
    tool!(read "mentisdb_memory_markdown", "Export the chain, or a filtered subset, as MEMORY.md-style Markdown.", SearchArgs => MarkdownReply, memory_markdown),
    tool!(read "mentisdb_summary_candidates", "Windows of thoughts a caller may summarize (nothing is generated or written): the matching thoughts (the search filters; superseded, corrected and invalidated ones left out unless include_invalidated), grouped by session (config.by_session, default true) and/or agent (config.by_agent), cut into windows of config.window_size (default 50) sharing config.overlap thoughts; windows wholly covered by existing Summarizes relations are skipped. Pages with offset/limit (default 100).", SummaryCandidatesArgs => SummaryCandidatesReply, summary_candidates_tool),
    tool!(read "mentisdb_get_thought", "Return one thought by exactly one of thought_id, thought_hash or thought_index.", GetThoughtArgs => GetThoughtReply, get_thought),
    tool!(read "mentisdb_get_genesis_thought", "Return the first thought of a chain, or null when it is empty.", ChainArgs => GenesisReply, genesis),
    tool!(read "mentisdb_traverse_thoughts", "Walk the chain in append order from an anchor (id, hash, index, genesis or head), forward or backward, in filtered chunks with cursors.", TraverseArgs => TraverseReply, traverse_tool),
    tool!(admin "mentisdb_forget_thought", "Forget one thought (exactly one of thought_id, thought_hash or thought_index) for a reason: its content, tags, concepts and signature are erased from memory and storage for good, while its index, id, type, time and hash stay and the chain still verifies. Operators only (admin scope).", ForgetArgs => ForgetReply, forget, caller),
    tool!(read "mentisdb_head", "Return the chain tip: thought count, head hash, latest thought, integrity and storage location.", ChainArgs => HeadReply, head),
}

/// Just a chain.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub(super) struct ChainArgs {
    /// Chain to use; the daemon's default chain when omitted.
    pub chain_key: Option<String>,
}

/// Arguments of `mentisdb_bootstrap`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct BootstrapArgs {
    pub chain_key: Option<String>,
    /// Producer id; a system identity when omitted.
    pub agent_id: Option<String>,
    pub agent_name: Option<String>,
    pub agent_owner: Option<String>,
    /// What this memory is for.
    pub content: String,
    /// Clamped to 0.0..=1.0; default 1.0 for bootstrap.
    pub importance: Option<f64>,
    pub tags: Option<Vec<String>>,
    pub concepts: Option<Vec<String>>,
    /// `binary` (default) or `jsonl`; only used when the chain is created.
    pub storage_adapter: Option<ChainFormat>,
}

/// A typed relation on append: the target by `target_id` or `target_index`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RelationArg {
    /// What the relation means.
    pub kind: RelationKind,
    pub target_id: Option<String>,
    pub target_index: Option<u64>,
    /// Set when the target lives in another chain (then `target_id` is required).
    pub chain_key: Option<String>,
}

/// The fields every append tool takes, flattened into its arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct AppendFields {
    pub chain_key: Option<String>,
    /// Producer id; defaults to the chain key.
    pub agent_id: Option<String>,
    /// Display name; defaults to agent_id.
    pub agent_name: Option<String>,
    pub agent_owner: Option<String>,
    pub content: String,
    /// Clamped to 0.0..=1.0; default 0.5.
    pub importance: Option<f64>,
    /// Clamped to 0.0..=1.0.
    pub confidence: Option<f64>,
    pub tags: Option<Vec<String>>,
    pub concepts: Option<Vec<String>>,
    /// Indices of earlier thoughts in this chain.
    pub refs: Option<Vec<u64>>,
    /// Typed relations to earlier thoughts.
    pub relations: Option<Vec<RelationArg>>,
    /// Session this thought belongs to.
    pub session_id: Option<String>,
    /// Client-chosen unique id; required for signed appends (the signature binds it).
    /// Retrying with the same id and fields answers the stored thought
    /// (`replay: true`, nothing written); the same id with other fields is a `conflict` error.
    pub thought_id: Option<String>,
    /// Registered key that signed the thought.
    pub signing_key_id: Option<String>,
    /// Ed25519 signature bytes over the signable payload (see ARCHITECTURE.md).
    pub thought_signature: Option<Vec<u8>>,
    /// Optional entity type label for categorizing the thought (e.g. `person`,
    /// `service`); covered by the hash, listed by `mentisdb_list_entity_types`.
    pub entity_type: Option<String>,
    /// Memory scope: `user`, `session` or `agent`; stored as the tag `scope:<scope>`.
    pub scope: Option<MemoryScope>,
}

/// Arguments of `mentisdb_append`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct AppendArgs {
    /// One of the 31 thought types, e.g. Decision, Constraint, Mistake, LessonLearned, Goal (any case; `-`, `_` and spaces ignored).
    pub thought_type: ThoughtType,
    /// Operational role; default Memory.
    pub role: Option<ThoughtRole>,
    #[serde(flatten)]
    pub fields: AppendFields,
}

/// Arguments of `mentisdb_append_retrospective` (role Retrospective).
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct RetrospectiveArgs {
    /// Defaults to LessonLearned.
    pub thought_type: Option<ThoughtType>,
    #[serde(flatten)]
    pub fields: AppendFields,
}

/// Arguments of `mentisdb_search` and `mentisdb_memory_markdown`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct SearchArgs {
    pub chain_key: Option<String>,
    #[serde(flatten)]
    pub filter: FilterArgs,
    /// Keep the newest `limit` matches (clamped to 10000).
    pub limit: Option<u64>,
    /// Include thoughts superseded, corrected or invalidated by a later thought; default false.
    pub include_invalidated: Option<bool>,
    /// Alias of include_invalidated (either true includes them).
    pub include_superseded: Option<bool>,
}

/// How `mentisdb_summary_candidates` cuts windows.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub(super) struct SummaryConfigArgs {
    /// Thoughts per window; default 50, at most 10000 (0: no candidates).
    pub window_size: Option<u64>,
    /// Thoughts shared by consecutive windows; default 0.
    pub overlap: Option<u64>,
    /// Keep sessions apart; default true.
    pub by_session: Option<bool>,
    /// Keep agents apart; default false.
    pub by_agent: Option<bool>,
    /// Accepted for 0.10.10 clients; thoughts here carry no entity type, so it changes nothing.
    #[allow(dead_code)]
    pub by_entity_type: Option<bool>,
}

/// Arguments of `mentisdb_summary_candidates`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct SummaryCandidatesArgs {
    pub chain_key: Option<String>,
    pub config: Option<SummaryConfigArgs>,
    /// Only thoughts matching these filters are sources.
    #[serde(flatten)]
    pub filter: FilterArgs,
    /// Candidates to skip first; default 0.
    pub offset: Option<u64>,
    /// Candidates to return; default 100, clamped to 1..=1000.
    pub limit: Option<u64>,
    /// Include thoughts superseded, corrected or invalidated by a later thought; default false.
    pub include_invalidated: Option<bool>,
    /// Alias of include_invalidated.
    pub include_superseded: Option<bool>,
}

/// Arguments of `mentisdb_recent_context`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct RecentContextArgs {
    pub chain_key: Option<String>,
    /// How many of the newest thoughts; default 12, clamped to 1..=1000.
    pub last_n: Option<u64>,
    /// Include thoughts superseded, corrected or invalidated by a later thought; default false.
    pub include_invalidated: Option<bool>,
    /// Alias of include_invalidated (either true includes them).
    pub include_superseded: Option<bool>,
    /// Only this agent's thoughts (as MentisDB 0.10.10).
    pub agent_id: Option<String>,
}

/// Arguments of `mentisdb_get_thought`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = super::locator::exactly_one_schema)]
pub(super) struct GetThoughtArgs {
    pub chain_key: Option<String>,
    pub thought_id: Option<String>,
    pub thought_hash: Option<String>,
    pub thought_index: Option<u64>,
}

/// Arguments of `mentisdb_traverse_thoughts`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = super::locator::at_most_one_anchor_schema)]
pub(super) struct TraverseArgs {
    pub chain_key: Option<String>,
    pub anchor_id: Option<String>,
    pub anchor_hash: Option<String>,
    pub anchor_index: Option<u64>,
    /// `genesis` or `head`.
    pub anchor_boundary: Option<AnchorBoundary>,
    /// `forward` (default) or `backward`.
    pub direction: Option<Direction>,
    /// Include a concrete anchor thought itself; default false.
    pub include_anchor: Option<bool>,
    /// Matching thoughts per chunk; default 50, clamped to 1..=1000.
    pub chunk_size: Option<u64>,
    #[serde(flatten)]
    pub filter: FilterArgs,
    pub time_window: Option<TimeWindow>,
}

/// Arguments of `mentisdb_forget_thought`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = super::locator::exactly_one_schema)]
pub(super) struct ForgetArgs {
    pub chain_key: Option<String>,
    pub thought_id: Option<String>,
    pub thought_hash: Option<String>,
    pub thought_index: Option<u64>,
    /// Why it is forgotten (kept with the forgotten thought).
    #[schemars(pattern(super::arg_formats::NOT_BLANK))]
    pub reason: String,
    /// Who forgets it, when the daemon does not know the caller (no token).
    pub agent_id: Option<String>,
}

impl From<RelationArg> for RelationInput {
    fn from(r: RelationArg) -> Self {
        RelationInput { kind: r.kind, target_id: r.target_id, target_index: r.target_index, chain_key: r.chain_key }
    }
}

fn head_hash(db: &MentisDb, key: &str) -> Result<Option<String>, ToolError> {
    db.with_chain(key, |c| c.and_then(|c| c.head()).map(|t| t.hash.clone()))
}

fn bootstrap(db: &MentisDb, a: BootstrapArgs) -> Result<BootstrapReply, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let format = a.storage_adapter;
    let agent_id = a.agent_id.filter(|s| !s.trim().is_empty()).unwrap_or_else(|| "system".to_string());
    let mut input = NewThought::new(&agent_id, ThoughtType::Summary, &a.content);
    input.role = ThoughtRole::Checkpoint;
    input.agent_name = a.agent_name.or_else(|| (agent_id == "system").then(|| "MentisDB System".to_string()));
    input.agent_owner = a.agent_owner;
    input.importance = Some(a.importance.unwrap_or(1.0));
    input.tags = a.tags.unwrap_or_default();
    input.concepts = a.concepts.unwrap_or_default();
    let written = db.append_when(&key, format, input, |c| c.is_empty())?;
    let (count, head) = db.with_chain(&key, |c| c.map(|c| (c.len(), c.head().map(|t| t.hash.clone()))).unwrap_or((0, None)))?;
    // As 0.10.10: the active skills, for the agent to read before it works.
    let available_skills = db.with_skills(|r| r.skills().filter(|s| s.status == crate::skills::SkillStatus::Active).map(super::replies::SkillSummary::from).collect());
    Ok(BootstrapReply { bootstrapped: written.is_some(), thought_count: count as u64, head_hash: head, available_skills })
}

fn append_common(db: &MentisDb, thought_type: ThoughtType, role: ThoughtRole, a: AppendFields) -> Result<Box<RawValue>, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let input = new_thought(&key, thought_type, role, a);
    let a = db.append_reporting(&key, None, input, |_| true)?.expect("unconditional append");
    let head = head_hash(db, &key)?;
    let leaf_hash = hex::encode(crate::merkle::thought_leaf_hash(&a.thought.hash));
    Ok(raw(AppendReply { thought: &a.thought, head_hash: head, leaf_hash, replay: a.replay, redactions: a.redactions }))
}

/// The thought an append tool's fields describe, for chain `key`.
pub(super) fn new_thought(key: &str, thought_type: ThoughtType, role: ThoughtRole, a: AppendFields) -> NewThought {
    let agent_id = a.agent_id.filter(|s| !s.trim().is_empty()).unwrap_or_else(|| key.to_string());
    let mut input = NewThought::new(&agent_id, thought_type, &a.content);
    input.role = role;
    input.agent_name = a.agent_name;
    input.agent_owner = a.agent_owner;
    input.importance = a.importance;
    input.confidence = a.confidence;
    input.tags = a.tags.unwrap_or_default();
    if let Some(scope) = a.scope {
        if !input.tags.iter().any(|t| t == scope.as_tag()) {
            input.tags.push(scope.as_tag().to_string());
        }
    }
    input.concepts = a.concepts.unwrap_or_default();
    input.refs = a.refs.unwrap_or_default();
    input.relations = a.relations.unwrap_or_default().into_iter().map(RelationInput::from).collect();
    input.session_id = a.session_id;
    input.thought_id = a.thought_id;
    input.signing_key_id = a.signing_key_id;
    input.thought_signature = a.thought_signature;
    input.entity_type = a.entity_type;
    input
}

fn append(db: &MentisDb, a: AppendArgs) -> Result<Box<RawValue>, ToolError> {
    append_common(db, a.thought_type, a.role.unwrap_or(ThoughtRole::Memory), a.fields)
}

fn append_retrospective(db: &MentisDb, a: RetrospectiveArgs) -> Result<Box<RawValue>, ToolError> {
    append_common(db, a.thought_type.unwrap_or(ThoughtType::LessonLearned), ThoughtRole::Retrospective, a.fields)
}

fn forget(db: &MentisDb, caller: Option<Caller<'_>>, a: ForgetArgs) -> Result<Box<RawValue>, ToolError> {
    const TOOL: &str = "mentisdb_forget_thought";
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let locator = ThoughtLocator::exactly_one(TOOL, a.thought_id.as_deref(), a.thought_hash.as_deref(), a.thought_index)?;
    let reason = a.reason.trim().to_string();
    if reason.is_empty() {
        return Err(ToolError::invalid(TOOL, "reason must say why the thought is forgotten"));
    }
    limits::check_label("reason", &reason, limits::MAX_LABEL_BYTES).map_err(|m| ToolError::invalid(TOOL, m))?;
    // The authenticated caller (a token's name) when there is one, else the
    // agent the request names.
    let agent = a.agent_id.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    if let Some(agent) = &agent {
        limits::check_key("agent_id", agent).map_err(|m| ToolError::invalid(TOOL, m))?;
    }
    let by = match (caller, agent) {
        (Some(c), Some(agent)) => format!("{} (agent {agent})", c.name),
        (Some(c), None) => c.name.to_string(),
        (None, Some(agent)) => agent,
        (None, None) => "anonymous".to_string(),
    };
    let outcome = db.forget_thought(&key, |c| locator.find(c).map(|t| t.index as usize).ok_or_else(|| locator.not_found(&key, c.len())), by, reason)?;
    let position = outcome.position.expect("forgetting names a thought") as u64;
    db.with_chain(&key, |c| {
        let c = c.expect("the chain was just rewritten");
        let thought = c.by_index(position).expect("positions survive a rewrite");
        raw(ForgetReply { chain_key: key.clone(), thought, forgotten_now: outcome.forgotten_now, migrated_thoughts: outcome.migrated as u64, head_hash: c.head().map(|t| t.hash.clone()) })
    })
}

fn clamp_limit(limit: Option<u64>) -> usize {
    limit.map(|l| (l as usize).clamp(1, limits::MAX_SEARCH_LIMIT)).unwrap_or(limits::MAX_SEARCH_LIMIT)
}

fn filtered(db: &MentisDb, tool: &str, a: &SearchArgs) -> Result<(String, Vec<Thought>, usize, Option<String>), ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let limit = clamp_limit(a.limit);
    db.read_chain(&key, |c| {
        let filter = ThoughtFilter::compile(&a.filter, None, c).map_err(|m| ToolError::invalid(tool, m))?;
        Ok(match c {
            Some(c) => (search(c, &filter, Visibility::from_args(a.include_invalidated, a.include_superseded, None), limit).into_iter().cloned().collect(), c.len(), c.head().map(|t| t.hash.clone())),
            None => (Vec::new(), 0, None),
        })
    })?
    .map(|(thoughts, total, head)| (key, thoughts, total, head))
}

fn search_tool(db: &MentisDb, a: SearchArgs) -> Result<Box<RawValue>, ToolError> {
    const TOOL: &str = "mentisdb_search";
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let limit = clamp_limit(a.limit);
    db.read_chain(&key, |c| {
        let filter = ThoughtFilter::compile(&a.filter, None, c).map_err(|m| ToolError::invalid(TOOL, m))?;
        let thoughts = c.map(|c| search(c, &filter, Visibility::from_args(a.include_invalidated, a.include_superseded, None), limit)).unwrap_or_default();
        Ok(raw(SearchReply { thoughts }))
    })?
}

fn memory_markdown(db: &MentisDb, a: SearchArgs) -> Result<MarkdownReply, ToolError> {
    let (key, thoughts, total, head) = filtered(db, "mentisdb_memory_markdown", &a)?;
    let refs: Vec<&Thought> = thoughts.iter().collect();
    Ok(MarkdownReply { markdown: render::memory_markdown(&key, total, head.as_deref(), &refs) })
}

fn list_chains(db: &MentisDb, _a: NoArgs) -> Result<ListChainsReply, ToolError> {
    let mut chains = Vec::new();
    for key in db.chain_keys() {
        // Parked chains answer from their summary, without loading.
        let Some((format, location)) = db.chain_storage_info(&key) else { continue };
        let Some((thought_count, agent_count)) = db.chain_counts(&key) else { continue };
        chains.push(ChainInfo {
            chain_key: key,
            version: THOUGHT_SCHEMA_VERSION,
            storage_adapter: format.adapter_name().to_string(),
            thought_count,
            agent_count,
            storage_location: location,
        });
    }
    let chain_keys = chains.iter().map(|c| c.chain_key.clone()).collect();
    Ok(ListChainsReply { default_chain_key: db.config().default_chain_key.clone(), chain_keys, chains })
}

fn recent_context(db: &MentisDb, a: RecentContextArgs) -> Result<RecentContextReply, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    if a.agent_id.as_deref().is_some_and(|id| id.chars().any(char::is_control)) {
        return Err(ToolError::invalid("mentisdb_recent_context", limits::LimitError::ControlCharacters { field: "agent_id" }));
    }
    let n = a.last_n.map(|n| (n as usize).clamp(1, limits::MAX_RECENT_LAST_N)).unwrap_or(limits::DEFAULT_RECENT_LAST_N);
    let prompt = db.read_chain(&key, |c| match c {
        Some(c) => {
            // The newest `n` thoughts the read shows, in append order.
            let view = Visibility::from_args(a.include_invalidated, a.include_superseded, None).over(c);
            let agent = a.agent_id.as_deref().map(str::trim).filter(|a| !a.is_empty());
            let mut recent: Vec<&Thought> = (0..c.len())
                .rev()
                .filter(|i| !view.hides(*i) && agent.is_none_or(|a| c.thoughts()[*i].agent_id == a))
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

fn get_thought(db: &MentisDb, a: GetThoughtArgs) -> Result<Box<RawValue>, ToolError> {
    const TOOL: &str = "mentisdb_get_thought";
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let locator = ThoughtLocator::exactly_one(TOOL, a.thought_id.as_deref(), a.thought_hash.as_deref(), a.thought_index)?;
    let (found, len) = db.read_chain(&key, |c| c.map(|c| (locator.find(c).cloned(), c.len())).unwrap_or((None, 0)))?;
    match found {
        Some(t) => Ok(raw(GetThoughtReply { chain_key: key, thought: &t })),
        None => Err(locator.not_found(&key, len)),
    }
}

fn genesis(db: &MentisDb, a: ChainArgs) -> Result<Box<RawValue>, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    db.read_chain(&key, |c| raw(GenesisReply { chain_key: key.clone(), thought: c.and_then(|c| c.thoughts().first()) }))
}

fn head(db: &MentisDb, a: ChainArgs) -> Result<Box<RawValue>, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let location = db.storage_location(&key);
    db.read_chain(&key, |c| {
        raw(match c {
            Some(c) => HeadReply {
                chain_key: key.clone(),
                thought_count: c.len() as u64,
                head_hash: c.head().map(|t| t.hash.clone()),
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

fn traverse_tool(db: &MentisDb, a: TraverseArgs) -> Result<Box<RawValue>, ToolError> {
    const TOOL: &str = "mentisdb_traverse_thoughts";
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let direction = a.direction.unwrap_or(Direction::Forward);
    let include_anchor = a.include_anchor.unwrap_or(false);
    let chunk_size = a.chunk_size.map(|n| (n as usize).clamp(1, limits::MAX_CHUNK_SIZE)).unwrap_or(limits::DEFAULT_CHUNK_SIZE);
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
        Ok(raw(TraverseReply {
            chain_key: key.clone(),
            direction: direction.as_str().to_string(),
            include_anchor,
            chunk_size: chunk_size as u64,
            anchor: page.anchor,
            thoughts: page.thoughts,
            has_more: page.has_more,
            next_cursor: page.next_cursor,
            previous_cursor: page.previous_cursor,
        }))
    })?
}

fn summary_candidates_tool(db: &MentisDb, a: SummaryCandidatesArgs) -> Result<SummaryCandidatesReply, ToolError> {
    const TOOL: &str = "mentisdb_summary_candidates";
    const MAX_WINDOW: u64 = 10_000;
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let c = a.config.unwrap_or_default();
    let defaults = SummaryConfig::default();
    let config = SummaryConfig {
        window_size: c.window_size.map_or(defaults.window_size, |w| w.min(MAX_WINDOW) as usize),
        overlap: c.overlap.map_or(defaults.overlap, |o| o.min(MAX_WINDOW) as usize),
        by_session: c.by_session.unwrap_or(defaults.by_session),
        by_agent: c.by_agent.unwrap_or(defaults.by_agent),
    };
    let offset = a.offset.unwrap_or(0) as usize;
    let limit = a.limit.map_or(100, |l| (l as usize).clamp(1, 1000));
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
                let source_ids = cand.indices.iter().map(|i| chain.thoughts()[*i as usize].id.clone()).collect();
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
