//! Chain-registry tools: agents (list, get, upsert, describe, alias, keys,
//! disable) and entity types (list, upsert; `entity_types.rs`).

use crate::args::read_args;
use crate::args::ChainKey;
use super::replies::{AgentListReply, AgentRegistryReply, AgentReply, AgentSummary, EntityTypeListReply, EntityTypeReply};
use super::{raw, tools};
use crate::agents::{AgentRecord, AgentStatus, AgentUpsert, KeyAlgorithm};
use crate::db::MentisDb;
use crate::dispatch::thought_reads::ChainArgs;
use crate::error::{AgentError, ToolError};
use crate::limits;
use schemars::JsonSchema;
use crate::json_text::JsonText;

tools! {
    tool!(read "mentisdb_list_agents", "The distinct agents that wrote to a chain (id, name, owner).", ChainArgs => AgentListReply, list_agents),
    tool!(read "mentisdb_get_agent", "One agent registry record: names, aliases, status, public keys and activity.", AgentIdArgs => AgentReply, get_agent),
    tool!(read "mentisdb_list_agent_registry", "The full per-chain agent registry.", ChainArgs => AgentRegistryReply, list_registry),
    tool!(admin "mentisdb_upsert_agent", "Create or update an agent record (display name, owner, description, status); creates the chain.", UpsertArgs => AgentReply, upsert_agent),
    tool!(admin "mentisdb_set_agent_description", "Set, or clear when omitted or empty, the description of a registered agent.", DescriptionArgs => AgentReply, set_description),
    tool!(admin "mentisdb_add_agent_alias", "Add an alias to a registered agent.", AliasArgs => AgentReply, add_alias),
    tool!(admin "mentisdb_add_agent_key", "Add or replace an agent's Ed25519 public key; an agent with an active key must sign its appends.", AddKeyArgs => AgentReply, add_key),
    tool!(admin "mentisdb_revoke_agent_key", "Revoke a public key of an agent; its history is kept.", KeyArgs => AgentReply, revoke_key),
    tool!(admin "mentisdb_disable_agent", "Mark an agent revoked: its thoughts stay, it can no longer append.", AgentIdArgs => AgentReply, disable_agent),
    tool!(read "mentisdb_list_entity_types", "A chain's entity types (declared or carried by thoughts) with thought counts and first/last index and time.", ChainArgs => EntityTypeListReply, list_entity_types),
    tool!("mentisdb_upsert_entity_type", "Create or update an entity type in the chain's registry; creates the chain.", EntityTypeArgs => EntityTypeReply, upsert_entity_type),
}

/// Arguments of `mentisdb_upsert_entity_type`.
#[derive(Debug, JsonSchema)]
pub(super) struct EntityTypeArgs {
    pub chain_key: Option<ChainKey>,
    /// The label to create or update.
    #[schemars(pattern(super::arg_formats::NOT_BLANK))]
    pub entity_type: String,
}
read_args!(EntityTypeArgs { chain_key, entity_type });

/// A chain and an agent.
#[derive(Debug, JsonSchema)]
pub(super) struct AgentIdArgs {
    pub chain_key: Option<ChainKey>,
    pub agent_id: String,
}
read_args!(AgentIdArgs { chain_key, agent_id });

/// Arguments of `mentisdb_upsert_agent`.
#[derive(Debug, JsonSchema)]
pub(super) struct UpsertArgs {
    pub chain_key: Option<ChainKey>,
    pub agent_id: String,
    pub display_name: Option<String>,
    pub agent_owner: Option<String>,
    pub description: Option<String>,
    /// `active` or `revoked`.
    pub status: Option<AgentStatus>,
}
read_args!(UpsertArgs { chain_key, agent_id, display_name, agent_owner, description, status });

/// Arguments of `mentisdb_set_agent_description`.
#[derive(Debug, JsonSchema)]
pub(super) struct DescriptionArgs {
    pub chain_key: Option<ChainKey>,
    pub agent_id: String,
    /// New description; empty or omitted clears it.
    pub description: Option<String>,
}
read_args!(DescriptionArgs { chain_key, agent_id, description });

/// Arguments of `mentisdb_add_agent_alias`.
#[derive(Debug, JsonSchema)]
pub(super) struct AliasArgs {
    pub chain_key: Option<ChainKey>,
    pub agent_id: String,
    pub alias: String,
}
read_args!(AliasArgs { chain_key, agent_id, alias });

/// Arguments of `mentisdb_add_agent_key`.
#[derive(Debug, JsonSchema)]
pub(super) struct AddKeyArgs {
    pub chain_key: Option<ChainKey>,
    pub agent_id: String,
    pub key_id: String,
    /// Currently `ed25519`.
    pub algorithm: KeyAlgorithm,
    /// The 32 bytes of the Ed25519 public key.
    pub public_key_bytes: Vec<u8>,
}
read_args!(AddKeyArgs { chain_key, agent_id, key_id, algorithm, public_key_bytes });

/// Arguments of `mentisdb_revoke_agent_key`.
#[derive(Debug, JsonSchema)]
pub(super) struct KeyArgs {
    pub chain_key: Option<ChainKey>,
    pub agent_id: String,
    pub key_id: String,
}
read_args!(KeyArgs { chain_key, agent_id, key_id });

fn check(tool: &str, field: &'static str, v: &str) -> Result<(), ToolError> {
    limits::check_key(field, v).map_err(|m| ToolError::invalid(tool, m))
}

fn agent_reply(key: String, agent: AgentRecord) -> AgentReply {
    AgentReply { chain_key: key, agent }
}

fn list_agents(db: &MentisDb, a: ChainArgs) -> Result<AgentListReply, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let agents = db.read_chain(&key, |c| {
        c.map(|c| {
            c.agents()
                .records()
                .filter(|r| r.thought_count > 0)
                .map(|r| AgentSummary { agent_id: r.agent_id.clone(), agent_name: r.display_name.clone(), agent_owner: r.agent_owner.clone() })
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
    })?;
    Ok(AgentListReply { chain_key: key, agents })
}

fn list_registry(db: &MentisDb, a: ChainArgs) -> Result<JsonText, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    db.read_chain(&key, |c| {
        let agents: Vec<&AgentRecord> = c.map(|c| c.agents().records().collect()).unwrap_or_default();
        raw(AgentRegistryReply { chain_key: key.clone(), agents })
    })
}

fn get_agent(db: &MentisDb, a: AgentIdArgs) -> Result<AgentReply, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let rec = db.read_chain(&key, |c| c.and_then(|c| c.agents().get(&a.agent_id).cloned()))?;
    match rec {
        Some(r) => Ok(agent_reply(key, r)),
        None => Err(AgentError::NotFound { agent_id: a.agent_id, chain_key: key }.into()),
    }
}

/// Refuses the registry fields `fields` when one carries a secret (with
/// secret redaction on): a registry record is not redacted, and what it
/// holds is shown to every reader of the chain for good.
fn no_secrets(db: &MentisDb, tool: &'static str, fields: &[(&str, Option<&str>)]) -> Result<(), ToolError> {
    if !db.config().redact_secrets {
        return Ok(());
    }
    for (field, value) in fields {
        if let Some(v) = value {
            crate::redact::refuse_secret(field, v).map_err(|e| ToolError::invalid(tool, e.to_string()))?;
        }
    }
    Ok(())
}

fn upsert_agent(db: &MentisDb, a: UpsertArgs) -> Result<AgentReply, ToolError> {
    const TOOL: &str = "mentisdb_upsert_agent";
    check(TOOL, "agent_id", &a.agent_id)?;
    no_secrets(db, TOOL, &[("agent_id", Some(&a.agent_id)), ("display_name", a.display_name.as_deref()), ("agent_owner", a.agent_owner.as_deref()), ("description", a.description.as_deref())])?;
    for (field, v, max) in [("display_name", &a.display_name, limits::MAX_LABEL_BYTES), ("agent_owner", &a.agent_owner, limits::MAX_LABEL_BYTES), ("description", &a.description, limits::MAX_DESCRIPTION_BYTES)] {
        if let Some(v) = v {
            limits::check_label(field, v, max).map_err(|m| ToolError::invalid(TOOL, m))?;
        }
    }
    let status = a.status;
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let patch = AgentUpsert { display_name: a.display_name, agent_owner: a.agent_owner, description: a.description, status };
    let rec = db.edit_agents(&key, true, |reg, _| Ok(reg.upsert(&a.agent_id, patch).clone()))?;
    Ok(agent_reply(key, rec))
}

fn set_description(db: &MentisDb, a: DescriptionArgs) -> Result<AgentReply, ToolError> {
    const TOOL: &str = "mentisdb_set_agent_description";
    no_secrets(db, TOOL, &[("description", a.description.as_deref())])?;
    if let Some(d) = &a.description {
        limits::check_label("description", d, limits::MAX_DESCRIPTION_BYTES).map_err(|m| ToolError::invalid(TOOL, m))?;
    }
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let rec = db.edit_agents(&key, false, |reg, _| reg.set_description(&key, &a.agent_id, a.description).cloned())?;
    Ok(agent_reply(key, rec))
}

fn add_alias(db: &MentisDb, a: AliasArgs) -> Result<AgentReply, ToolError> {
    const TOOL: &str = "mentisdb_add_agent_alias";
    no_secrets(db, TOOL, &[("alias", Some(&a.alias))])?;
    limits::check_label("alias", &a.alias, limits::MAX_LABEL_BYTES).map_err(|m| ToolError::invalid(TOOL, m))?;
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let rec = db.edit_agents(&key, false, |reg, _| reg.add_alias(&key, &a.agent_id, &a.alias).cloned())?;
    Ok(agent_reply(key, rec))
}

fn add_key(db: &MentisDb, a: AddKeyArgs) -> Result<AgentReply, ToolError> {
    const TOOL: &str = "mentisdb_add_agent_key";
    check(TOOL, "key_id", &a.key_id)?;
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let rec = db.edit_agents(&key, false, |reg, now| reg.add_key(&key, &a.agent_id, &a.key_id, a.algorithm, a.public_key_bytes, now).cloned())?;
    Ok(agent_reply(key, rec))
}

fn revoke_key(db: &MentisDb, a: KeyArgs) -> Result<AgentReply, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let rec = db.edit_agents(&key, false, |reg, now| reg.revoke_key(&key, &a.agent_id, &a.key_id, now).cloned())?;
    Ok(agent_reply(key, rec))
}

fn disable_agent(db: &MentisDb, a: AgentIdArgs) -> Result<AgentReply, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let rec = db.edit_agents(&key, false, |reg, _| reg.disable(&key, &a.agent_id).cloned())?;
    Ok(agent_reply(key, rec))
}

fn list_entity_types(db: &MentisDb, a: ChainArgs) -> Result<EntityTypeListReply, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    // A chain that does not exist is 404, as MentisDB 0.10.10 answers (the default chain reads as empty).
    let entity_types = db.read_chain(&key, |c| c.map(crate::entity_types::entity_types).unwrap_or_default())?;
    Ok(EntityTypeListReply { chain_key: key, entity_types })
}

fn upsert_entity_type(db: &MentisDb, a: EntityTypeArgs) -> Result<EntityTypeReply, ToolError> {
    const TOOL: &str = "mentisdb_upsert_entity_type";
    let label = a.entity_type.trim();
    no_secrets(db, TOOL, &[("entity_type", Some(label))])?;
    if label.is_empty() {
        return Err(ToolError::invalid(TOOL, "entity_type must not be empty"));
    }
    limits::check_label("entity_type", label, limits::MAX_LABEL_BYTES).map_err(|m| ToolError::invalid(TOOL, m))?;
    let key = db.resolve_key(a.chain_key.as_deref())?;
    db.edit_agents(&key, true, |reg, _| Ok(reg.declare_entity_type(label)))?;
    let entity_type = db.with_chain(&key, |c| c.map(|c| crate::entity_types::entity_type(c, label)))?.expect("the chain was just created");
    Ok(EntityTypeReply { chain_key: key, entity_type })
}
