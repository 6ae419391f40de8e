//! Presence: which agents are active in a chain and what each is doing,
//! as live state beside the chain, not in it.
//!
//! An agent beats every ~30 s in an existing chain (`MentisDb::heartbeat`, `db/presence.rs`); each beat replaces
//! one small storage object per agent and session
//! ([`crate::naming::presence_object`]), so heartbeats never grow the chain
//! and every daemon of one database (PostgreSQL) sees every agent.
//! `MentisDb::presence` answers the agents seen within a window (default
//! 30 minutes, at most 24 hours). A session's first beat removes the
//! chain's entries older than 24 hours and, past [`MAX_SESSIONS`], the
//! least recently seen. Each entry keeps when its session was first seen.

use serde::{Deserialize, Serialize};

/// The longest window [`MentisDb::presence`] looks back, and the age past
/// which a beat removes an entry.
pub const MAX_SINCE_MS: u64 = 86_400_000;
/// The window when a caller names none (30 minutes).
pub const DEFAULT_SINCE_MS: u64 = 1_800_000;
/// Agent sessions kept per chain: past it, a new session's first beat
/// removes the least recently seen.
pub const MAX_SESSIONS: usize = 256;

/// What an agent says of itself in a beat.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Beat {
    /// The agent.
    pub agent_id: String,
    /// Its session (one agent may run several).
    pub session_id: Option<String>,
    /// A name to show.
    pub display_name: Option<String>,
    /// The tool it runs in (`cursor`, `claude-code`, ...).
    pub tool: Option<String>,
    /// The file it is working on.
    pub current_file: Option<String>,
    /// What it is doing: editing, reading, reviewing, idle ...
    pub current_action: Option<String>,
}

/// One agent session's presence, as stored and answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Presence {
    /// The chain it is present in.
    pub chain_key: String,
    /// What it said in its latest beat.
    #[serde(flatten)]
    pub beat: Beat,
    /// Its first beat of this session (epoch ms).
    pub first_seen_ms: i64,
    /// Its latest beat (epoch ms).
    pub last_seen_ms: i64,
}
