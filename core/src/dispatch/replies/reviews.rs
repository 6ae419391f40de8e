//! Replies of the review tools ([`crate::reviews`]). Times are RFC 3339.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One review and its decision, if taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReviewReply {
    /// Its id: the id of the thought that asked for it.
    pub review_id: String,
    /// What to review.
    pub subject: String,
    /// The claim the work is done under, if named.
    #[serde(default)]
    pub claim_key: Option<String>,
    /// Who asked.
    pub requester: String,
    /// Who may decide (empty: anyone but the requester).
    pub reviewers: Vec<String>,
    /// When it was asked.
    pub requested_at: String,
    /// Until when a decision is taken.
    pub deadline: String,
    /// `open`, `expired` (past the deadline, undecided), `approved`, `rejected` or `needs_changes`.
    pub status: String,
    /// The decision, once taken.
    #[serde(default)]
    pub decision: Option<String>,
    /// Who decided.
    #[serde(default)]
    pub decided_by: Option<String>,
    /// When.
    #[serde(default)]
    pub decided_at: Option<String>,
    /// The reviewer's comment.
    #[serde(default)]
    pub comment: Option<String>,
    /// The index of the thought that asked for it.
    pub thought_index: u64,
}

/// `mentisdb_request_review`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReviewRequestedReply {
    /// The new review's id.
    pub review_id: String,
    /// The review.
    pub review: ReviewReply,
}

/// `mentisdb_decide_review`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReviewDecidedReply {
    /// Whether this call decided it.
    pub ok: bool,
    /// Why not, when `ok` is false: `already_decided`, `expired` or `not_a_reviewer`.
    #[serde(default)]
    pub reason: Option<String>,
    /// The review's decision, if it has one (this call's, or the one that came first).
    #[serde(default)]
    pub decision: Option<String>,
    /// The review as it now stands.
    pub review: ReviewReply,
}

/// `mentisdb_list_reviews`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReviewListReply {
    /// The chain listed.
    pub chain_key: String,
    /// The reviews, newest first.
    pub reviews: Vec<ReviewReply>,
}
