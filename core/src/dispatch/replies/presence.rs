//! Replies of the presence tools ([`crate::presence`]). Times are RFC 3339.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One agent session's presence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PresenceReply {
    /// The agent.
    pub agent_id: String,
    /// Its session, if it named one.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Its name to show.
    #[serde(default)]
    pub display_name: Option<String>,
    /// The tool it runs in.
    #[serde(default)]
    pub tool: Option<String>,
    /// The file it is working on.
    #[serde(default)]
    pub current_file: Option<String>,
    /// What it is doing.
    #[serde(default)]
    pub current_action: Option<String>,
    /// Its session's first beat.
    pub first_seen: String,
    /// Its latest beat.
    pub last_seen: String,
    /// Milliseconds since its latest beat.
    pub idle_ms: u64,
}

/// `mentisdb_list_presence`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PresenceListReply {
    /// The chain listed.
    pub chain_key: String,
    /// The agents seen in the window, the most recently seen first.
    pub agents: Vec<PresenceReply>,
}
