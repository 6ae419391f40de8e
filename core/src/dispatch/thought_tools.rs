//! The thought family's table, and its write tools: bootstrap, append,
//! retrospective, forget. Its read tools (search, list chains, recent
//! context, Markdown export, summary candidates, get, genesis, traverse,
//! head) are in `thought_reads.rs`.

use crate::args::read_args;
use crate::args::Score;
use crate::args::ChainKey;
use super::locator::ThoughtLocator;
use super::replies::{
    AppendReply, BootstrapReply, ForgetReply, GenesisReply, GetThoughtReply, HeadReply, ListChainsReply, MarkdownReply, RecentContextReply,
    SearchReply, SummaryCandidatesReply, TraverseReply,
};
use super::thought_reads::{
    genesis, get_thought, head, ChainArgs, list_chains, memory_markdown, recent_context, search_tool, summary_candidates_tool, traverse_tool, GetThoughtArgs,
    RecentContextArgs, SearchArgs, SummaryCandidatesArgs, TraverseArgs,
};
use super::{parse_args, raw, tools, with_argument_warnings, Caller, NoArgs};
use crate::chain::{Appended, NewThought, RelationInput};
use crate::db::{NotQueued, Queued, ReplyLater};
use crate::db::MentisDb;
use crate::error::ToolError;
use crate::limits;
use crate::record::ChainFormat;
use crate::thought::{MemoryScope, RelationKind, ThoughtRole, ThoughtType};
use schemars::JsonSchema;
use crate::json_text::JsonText;
use serde_json::Value;

tools! {
    tool!("mentisdb_bootstrap", "Create the chain if needed and, only when it is empty, write one bootstrap memory.", BootstrapArgs => BootstrapReply, bootstrap),
    tool!("mentisdb_append", "Append a durable thought (typed, scored, tagged, optionally signed). Returns it with its index, id and hash.", AppendArgs => AppendReply, append),
    tool!("mentisdb_append_retrospective", "Append a lesson learned after a hard failure or non-obvious fix (Retrospective, LessonLearned); link the mistake with refs.", RetrospectiveArgs => AppendReply, append_retrospective),
    tool!(read "mentisdb_search", "Filter a chain (text, types, roles, tags, concepts, agents, scores, time; ANDed): the newest `limit` matches in append order.", SearchArgs => SearchReply, search_tool),
    tool!(read "mentisdb_list_chains", "The chains stored here, with thought and agent counts and storage location.", NoArgs => ListChainsReply, list_chains, caller).daemon_wide(),
    tool!(read "mentisdb_recent_context", "Render the latest thoughts (last_n, default 12) as a prompt snippet for resuming work.", RecentContextArgs => RecentContextReply, recent_context),
    tool!(read "mentisdb_memory_markdown", "Export the chain, or a filtered subset, as MEMORY.md-style Markdown.", SearchArgs => MarkdownReply, memory_markdown),
    tool!(read "mentisdb_summary_candidates", "Windows of thoughts to summarize (nothing is written), by session and/or agent, skipping summarized ones.", SummaryCandidatesArgs => SummaryCandidatesReply, summary_candidates_tool),
    tool!(read "mentisdb_get_thought", "One thought by exactly one of thought_id, thought_hash or thought_index.", GetThoughtArgs => GetThoughtReply, get_thought),
    tool!(read "mentisdb_get_genesis_thought", "The first thought of a chain, or null when it is empty.", ChainArgs => GenesisReply, genesis),
    tool!(read "mentisdb_traverse_thoughts", "Walk a chain in append order from an anchor (id, hash, index, genesis or head), either way, in filtered chunks.", TraverseArgs => TraverseReply, traverse_tool),
    tool!(admin "mentisdb_forget_thought", "Forget one thought for a reason: its content, tags, concepts and signature are erased for good; the chain still verifies.", ForgetArgs => ForgetReply, forget, caller),
    tool!(read "mentisdb_head", "The chain tip: thought count, head hash, latest thought and integrity.", ChainArgs => HeadReply, head, caller),
}

/// Arguments of `mentisdb_bootstrap`.
#[derive(Debug, JsonSchema)]
pub(super) struct BootstrapArgs {
    pub chain_key: Option<ChainKey>,
    /// Producer id; a system identity when omitted.
    pub agent_id: Option<String>,
    pub agent_name: Option<String>,
    pub agent_owner: Option<String>,
    /// What this memory is for.
    pub content: String,
    /// Clamped to 0.0..=1.0; default 1.0 for bootstrap.
    pub importance: Option<Score>,
    pub tags: Option<Vec<String>>,
    pub concepts: Option<Vec<String>>,
    /// `binary` (default) or `jsonl`, for a new chain.
    pub storage_adapter: Option<ChainFormat>,
}
read_args!(BootstrapArgs { chain_key, agent_id, agent_name, agent_owner, content, importance, tags, concepts, storage_adapter });

/// A typed relation to `target_id` or `target_index`.
#[derive(Debug, JsonSchema)]
pub struct RelationArg {
    /// What the relation means.
    pub kind: RelationKind,
    pub target_id: Option<String>,
    pub target_index: Option<u64>,
    // Recorded as data: the append never reads that chain, so a plain
    // string, not a `ChainKey` the call touches (see `access.rs`
    // RECORDED_ONLY); later reads that follow it (a branch's ancestry in
    // ranked search) check the caller's read rights themselves.
    /// The target's chain, when another.
    pub chain_key: Option<String>,
}
read_args!(RelationArg { kind, target_id, target_index, chain_key });

/// The fields every append tool takes, flattened into its arguments.
#[derive(Debug, JsonSchema)]
pub(super) struct AppendFields {
    pub chain_key: Option<ChainKey>,
    /// Producer id; defaults to the chain key.
    pub agent_id: Option<String>,
    /// Display name; defaults to agent_id.
    pub agent_name: Option<String>,
    pub agent_owner: Option<String>,
    pub content: String,
    /// Clamped to 0.0..=1.0; default 0.5.
    pub importance: Option<Score>,
    /// Clamped to 0.0..=1.0.
    pub confidence: Option<Score>,
    pub tags: Option<Vec<String>>,
    pub concepts: Option<Vec<String>>,
    /// Indices of earlier thoughts in this chain.
    pub refs: Option<Vec<u64>>,
    /// Typed relations to earlier thoughts.
    pub relations: Option<Vec<RelationArg>>,
    /// Session this thought belongs to.
    pub session_id: Option<String>,
    /// Your unique id (required when signed); a retry answers `replay: true`.
    pub thought_id: Option<String>,
    /// Registered key that signed the thought.
    pub signing_key_id: Option<String>,
    /// Ed25519 signature of the thought (docs/spec).
    pub thought_signature: Option<Vec<u8>>,
    /// A label such as `person` or `service`.
    pub entity_type: Option<String>,
    /// Memory scope, stored as the tag `scope:<scope>`.
    pub scope: Option<MemoryScope>,
    /// Store only while this claim holds.
    pub fencing: Option<FencingArg>,
}
read_args!(AppendFields { chain_key, agent_id, agent_name, agent_owner, content, importance, confidence, tags, concepts, refs, relations, session_id, thought_id, signing_key_id, thought_signature, entity_type, scope, fencing });

/// A claim's key and fencing_token.
#[derive(Debug, JsonSchema)]
pub(super) struct FencingArg {
    pub key: String,
    pub token: u64,
}
read_args!(FencingArg { key, token });

/// Arguments of `mentisdb_append`.
#[derive(Debug, JsonSchema)]
pub(super) struct AppendArgs {
    /// What kind of thought (any case).
    pub thought_type: ThoughtType,
    /// Operational role; default Memory.
    pub role: Option<ThoughtRole>,
    #[serde(flatten)]
    pub fields: AppendFields,
}
read_args!(AppendArgs { thought_type, role } flatten { fields });

/// Arguments of `mentisdb_append_retrospective` (role Retrospective).
#[derive(Debug, JsonSchema)]
pub(super) struct RetrospectiveArgs {
    /// Defaults to LessonLearned.
    pub thought_type: Option<ThoughtType>,
    #[serde(flatten)]
    pub fields: AppendFields,
}
read_args!(RetrospectiveArgs { thought_type } flatten { fields });

/// Arguments of `mentisdb_forget_thought`.
#[derive(Debug, JsonSchema)]
#[schemars(transform = super::locator::exactly_one_schema)]
pub(super) struct ForgetArgs {
    pub chain_key: Option<ChainKey>,
    pub thought_id: Option<String>,
    pub thought_hash: Option<String>,
    pub thought_index: Option<u64>,
    /// Why it is forgotten (kept).
    #[schemars(pattern(super::arg_formats::NOT_BLANK))]
    pub reason: String,
    /// Who forgets it, when there is no token.
    pub agent_id: Option<String>,
}
read_args!(ForgetArgs { chain_key, thought_id, thought_hash, thought_index, reason, agent_id });

impl From<RelationArg> for RelationInput {
    fn from(r: RelationArg) -> Self {
        RelationInput { kind: r.kind, target_id: r.target_id, target_index: r.target_index, chain_key: r.chain_key }
    }
}

fn bootstrap(db: &MentisDb, a: BootstrapArgs) -> Result<BootstrapReply, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let format = a.storage_adapter;
    let agent_id = a.agent_id.filter(|s| !s.trim().is_empty()).unwrap_or_else(|| "system".to_string());
    let mut input = NewThought::new(&agent_id, ThoughtType::Summary, &a.content);
    input.role = ThoughtRole::Checkpoint;
    input.agent_name = a.agent_name.or_else(|| (agent_id == "system").then(|| "MentisDB System".to_string()));
    input.agent_owner = a.agent_owner;
    input.importance = Some(a.importance.map_or(1.0, |s| s.0));
    input.tags = a.tags.unwrap_or_default();
    input.concepts = a.concepts.unwrap_or_default();
    // Checked whether or not the chain is empty: a bad argument is an error either way.
    let bad = |m: crate::limits::LimitError| ToolError::invalid("mentisdb_bootstrap", m);
    if input.content.trim().is_empty() {
        return Err(ToolError::invalid("mentisdb_bootstrap", "content must not be empty"));
    }
    crate::limits::check_key("agent_id", &input.agent_id).map_err(bad)?;
    for (field, value) in [("agent_name", &input.agent_name), ("agent_owner", &input.agent_owner)] {
        if let Some(v) = value {
            crate::limits::check_label(field, v, crate::limits::MAX_LABEL_BYTES).map_err(bad)?;
        }
    }
    crate::limits::check_labels("tags", &input.tags).map_err(bad)?;
    crate::limits::check_labels("concepts", &input.concepts).map_err(bad)?;
    let written = db.append_when(&key, format, input, |c| c.is_empty())?;
    let (count, head) = db.with_chain(&key, |c| c.map(|c| (c.len(), c.head().map(|t| t.hash.to_hex()))).unwrap_or((0, None)))?;
    // As 0.10.10: the active skills, for the agent to read before it works.
    let available_skills = db.with_skills(|r| r.skills().filter(|s| s.status == crate::skills::SkillStatus::Active).map(super::replies::SkillSummary::from).collect());
    Ok(BootstrapReply { bootstrapped: written.is_some(), thought_count: count as u64, head_hash: head, available_skills })
}

fn append_common(db: &MentisDb, thought_type: ThoughtType, role: ThoughtRole, a: AppendFields) -> Result<JsonText, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let input = new_thought(&key, thought_type, role, a);
    Ok(append_reply(&db.append_reporting(&key, input)?))
}

/// The append tools' reply.
fn append_reply(a: &Appended) -> JsonText {
    let leaf_hash = hex::encode(crate::merkle::thought_leaf_hash(&a.thought.hash));
    raw(AppendReply { thought: &a.thought, head_hash: a.head_hash.clone(), leaf_hash, replay: a.replay, redactions: a.redactions.clone() })
}

/// Whether `tool` is one of the append tools [`append_tool_now`] writes.
pub(super) fn is_append_tool(tool: &str) -> bool {
    matches!(tool, "mentisdb_append" | "mentisdb_append_retrospective")
}

/// Append tool `tool` written now and its reply queued until the chain is
/// synced ([`MentisDb::append_now`]).
pub(super) fn append_tool_now(db: &MentisDb, tool: &str, args: Value, later: ReplyLater) -> Result<Queued, NotQueued> {
    let mut warnings = Vec::new();
    let parsed = match tool {
        "mentisdb_append" => parse_args::<AppendArgs>(tool, args, &mut warnings).map(AppendArgs::described),
        "mentisdb_append_retrospective" => parse_args::<RetrospectiveArgs>(tool, args, &mut warnings).map(RetrospectiveArgs::described),
        _ => Err(ToolError::invalid(tool, "not an append tool")),
    };
    let (thought_type, role, fields) = parsed.map_err(NotQueued::Refused)?;
    let key = db.resolve_key(fields.chain_key.as_deref()).map_err(NotQueued::Refused)?;
    let input = new_thought(&key, thought_type, role, fields);
    db.append_now(&key, input, Box::new(move |a| with_argument_warnings(append_reply(a), warnings)), later)
}

/// The thought an append tool's fields describe, for chain `key`.
pub(super) fn new_thought(key: &str, thought_type: ThoughtType, role: ThoughtRole, a: AppendFields) -> NewThought {
    let agent_id = a.agent_id.filter(|s| !s.trim().is_empty()).unwrap_or_else(|| key.to_string());
    let mut input = NewThought::new(&agent_id, thought_type, &a.content);
    input.role = role;
    input.agent_name = a.agent_name;
    input.agent_owner = a.agent_owner;
    input.importance = a.importance.map(|s| s.0);
    input.confidence = a.confidence.map(|s| s.0);
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
    input.fencing = a.fencing.map(|f| crate::chain::Fencing { key: f.key, token: f.token });
    input
}

impl AppendArgs {
    /// The thought's type and role (a memory unless said) and its fields.
    fn described(self) -> (ThoughtType, ThoughtRole, AppendFields) {
        (self.thought_type, self.role.unwrap_or(ThoughtRole::Memory), self.fields)
    }
}

impl RetrospectiveArgs {
    /// The thought's type (a lesson learned unless said), its role (a retrospective) and its fields.
    fn described(self) -> (ThoughtType, ThoughtRole, AppendFields) {
        (self.thought_type.unwrap_or(ThoughtType::LessonLearned), ThoughtRole::Retrospective, self.fields)
    }
}

fn append(db: &MentisDb, a: AppendArgs) -> Result<JsonText, ToolError> {
    let (thought_type, role, fields) = a.described();
    append_common(db, thought_type, role, fields)
}

fn append_retrospective(db: &MentisDb, a: RetrospectiveArgs) -> Result<JsonText, ToolError> {
    let (thought_type, role, fields) = a.described();
    append_common(db, thought_type, role, fields)
}

fn forget(db: &MentisDb, caller: Option<Caller<'_>>, a: ForgetArgs) -> Result<JsonText, ToolError> {
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
        raw(ForgetReply { chain_key: key.clone(), thought, forgotten_now: outcome.forgotten_now, migrated_thoughts: outcome.migrated as u64, head_hash: c.head().map(|t| t.hash.to_hex()) })
    })
}

