//! Replies of the fact tools ([`crate::facts`]). Times are RFC 3339.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One fact with its validity window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FactReply {
    /// The id of the thought that recorded it.
    pub fact_id: String,
    /// What it is about.
    pub subject: String,
    /// The property stated.
    pub predicate: String,
    /// Its value.
    pub object: String,
    /// How sure the recorder was (0..=1), if it said.
    #[serde(default)]
    pub confidence: Option<f64>,
    /// From when it holds.
    pub valid_from: String,
    /// When it stopped holding; null while active.
    #[serde(default)]
    pub valid_to: Option<String>,
    /// The agent that recorded it.
    pub recorded_by: String,
    /// The index of the thought that recorded it.
    pub thought_index: u64,
}

/// `mentisdb_record_fact`: the new fact and the facts it closed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FactRecordedReply {
    /// The fact recorded.
    pub fact: FactReply,
    /// The active facts with the same subject and predicate it ended.
    pub closed: Vec<FactReply>,
}

/// `mentisdb_close_fact`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FactClosedReply {
    /// Whether this call closed it; `false` with `reason: "already_closed"`.
    pub ok: bool,
    /// Why not, when `ok` is false.
    #[serde(default)]
    pub reason: Option<String>,
    /// The fact as it now stands.
    pub fact: FactReply,
}

/// `mentisdb_query_facts`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FactListReply {
    /// The facts found, the latest `valid_from` first.
    pub facts: Vec<FactReply>,
}

/// One subject and predicate with active facts of different objects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FactConflictReply {
    /// The subject (as the first fact spells it).
    pub subject: String,
    /// The predicate (as the first fact spells it).
    pub predicate: String,
    /// The active facts that disagree, in record order.
    pub facts: Vec<FactReply>,
}

/// `mentisdb_fact_conflicts`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FactConflictsReply {
    /// Each disagreement, by subject then predicate.
    pub conflicts: Vec<FactConflictReply>,
}
