//! Presence: which agents are active in a chain and what each is doing
//! ([`crate::presence`]); live state beside the chain, not thoughts.

use super::replies::{PresenceListReply, PresenceReply};
use super::tools;
use crate::args::{read_args, Bounded, ChainKey};
use crate::db::MentisDb;
use crate::error::ToolError;
use crate::presence::{Beat, Presence, DEFAULT_SINCE_MS, MAX_SINCE_MS};
use crate::timestamp::format_rfc3339_millis;
use schemars::JsonSchema;

tools! {
    tool!("mentisdb_heartbeat", "Say agent_id is active here and what it does; call every ~30 s. Not a thought.", HeartbeatArgs => PresenceReply, heartbeat),
    tool!(read "mentisdb_list_presence", "Agents seen in the last since_ms (default 30 min), latest first.", ListPresenceArgs => PresenceListReply, list).blocking(),
}

/// How far back a listing looks: 1 s to 24 h.
type Since = Bounded<1_000, MAX_SINCE_MS>;

/// Arguments of `mentisdb_heartbeat`.
#[derive(Debug, JsonSchema)]
pub(super) struct HeartbeatArgs {
    pub chain_key: Option<ChainKey>,
    pub agent_id: String,
    pub session_id: Option<String>,
    pub display_name: Option<String>,
    /// e.g. `cursor`, `claude-code`.
    pub tool: Option<String>,
    pub current_file: Option<String>,
    /// e.g. editing, reading, idle.
    pub current_action: Option<String>,
}
read_args!(HeartbeatArgs { chain_key, agent_id, session_id, display_name, tool, current_file, current_action });

/// Arguments of `mentisdb_list_presence`.
#[derive(Debug, JsonSchema)]
pub(super) struct ListPresenceArgs {
    pub chain_key: Option<ChainKey>,
    /// 1 s to 24 h; default 30 min.
    pub since_ms: Option<Since>,
}
read_args!(ListPresenceArgs { chain_key, since_ms });

fn presence_reply(p: Presence, now_ms: i64) -> PresenceReply {
    PresenceReply {
        agent_id: p.beat.agent_id,
        session_id: p.beat.session_id,
        display_name: p.beat.display_name,
        tool: p.beat.tool,
        current_file: p.beat.current_file,
        current_action: p.beat.current_action,
        first_seen: format_rfc3339_millis(p.first_seen_ms),
        last_seen: format_rfc3339_millis(p.last_seen_ms),
        idle_ms: (now_ms - p.last_seen_ms).max(0) as u64,
    }
}

/// An optional label: trimmed, blank as none, at most 512 bytes, no
/// control characters but newline and tab, no secrets.
fn label(field: &'static str, value: Option<String>) -> Result<Option<String>, ToolError> {
    let Some(value) = value.map(|v| v.trim().to_string()).filter(|v| !v.is_empty()) else { return Ok(None) };
    crate::limits::check_label(field, &value, crate::limits::MAX_LABEL_BYTES).map_err(|m| ToolError::invalid("mentisdb_heartbeat", m))?;
    crate::redact::refuse_secret(field, &value)?;
    Ok(Some(value))
}

fn heartbeat(db: &MentisDb, a: HeartbeatArgs) -> Result<PresenceReply, ToolError> {
    let agent_id = a.agent_id.trim().to_string();
    crate::limits::check_key("agent_id", &agent_id).map_err(|m| ToolError::invalid("mentisdb_heartbeat", m))?;
    crate::redact::refuse_secret("agent_id", &agent_id)?;
    let beat = Beat {
        agent_id,
        session_id: label("session_id", a.session_id)?,
        display_name: label("display_name", a.display_name)?,
        tool: label("tool", a.tool)?,
        current_file: label("current_file", a.current_file)?,
        current_action: label("current_action", a.current_action)?,
    };
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let presence = db.heartbeat(&key, beat)?;
    Ok(presence_reply(presence, db.now_millis()))
}

fn list(db: &MentisDb, a: ListPresenceArgs) -> Result<PresenceListReply, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let since = a.since_ms.map_or(DEFAULT_SINCE_MS, |s| s.get() as u64);
    let now = db.now_millis();
    let agents = db.presence(&key, since)?.into_iter().map(|p| presence_reply(p, now)).collect();
    Ok(PresenceListReply { chain_key: key, agents })
}
