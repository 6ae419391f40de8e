//! Reviews: one agent's work waiting on another's approval; the first
//! decision wins ([`crate::reviews`] holds the rules; the records are
//! ordinary thoughts of the requester and the reviewer).

use super::replies::{ReviewDecidedReply, ReviewListReply, ReviewReply, ReviewRequestedReply};
use super::tools;
use crate::args::{read_args, Bounded, ChainKey};
use crate::chain::{Chain, NewThought, RelationInput};
use crate::db::MentisDb;
use crate::error::ToolError;
use crate::reviews::{Review, ReviewRecord, Verdict, MAX_COMMENT_CHARS, MAX_DEADLINE_MS, MAX_REVIEWERS, MAX_SUBJECT_CHARS, MIN_DEADLINE_MS, REVIEW_TAG};
use crate::thought::RelationKind;
use crate::timestamp::format_rfc3339_millis;
use schemars::JsonSchema;

tools! {
    tool!("mentisdb_request_review", "Ask `reviewers` (default: anyone but you) to decide on `subject` within deadline_ms.", RequestReviewArgs => ReviewRequestedReply, request),
    tool!("mentisdb_decide_review", "Decide a review as agent_id; the first decision wins, later ones get ok: false.", DecideReviewArgs => ReviewDecidedReply, decide),
    tool!(read "mentisdb_list_reviews", "Undecided reviews (expired ones marked), by reviewer or requester.", ListReviewsArgs => ReviewListReply, list),
}

/// Time to decide: 1 min to 7 days.
type Deadline = Bounded<MIN_DEADLINE_MS, MAX_DEADLINE_MS>;
/// Time to decide when a request names none (a day).
const DEFAULT_DEADLINE_MS: u64 = 86_400_000;
/// The agent a review is asked by when the call names none.
const DEFAULT_REQUESTER: &str = "mentisdb";

/// Arguments of `mentisdb_request_review`.
#[derive(Debug, JsonSchema)]
pub(super) struct RequestReviewArgs {
    pub chain_key: Option<ChainKey>,
    /// At most 512 characters.
    pub subject: String,
    /// The claim the work is under.
    pub claim_key: Option<String>,
    /// Agent ids who may decide (at most 20).
    pub reviewers: Option<Vec<String>>,
    /// ms to decide (1 min to 7 days); default a day.
    pub deadline_ms: Option<Deadline>,
    /// Who asks; default `mentisdb`.
    pub agent_id: Option<String>,
}
read_args!(RequestReviewArgs { chain_key, subject, claim_key, reviewers, deadline_ms, agent_id });

/// Arguments of `mentisdb_decide_review`.
#[derive(Debug, JsonSchema)]
pub(super) struct DecideReviewArgs {
    pub chain_key: Option<ChainKey>,
    pub review_id: String,
    pub decision: Verdict,
    /// At most 8,192 characters.
    pub comment: Option<String>,
    /// The reviewer deciding.
    pub agent_id: String,
}
read_args!(DecideReviewArgs { chain_key, review_id, decision, comment, agent_id });

/// Arguments of `mentisdb_list_reviews`.
#[derive(Debug, JsonSchema)]
pub(super) struct ListReviewsArgs {
    pub chain_key: Option<ChainKey>,
    /// Reviews this agent may decide.
    pub reviewer: Option<String>,
    /// Reviews this agent asked for.
    pub requester: Option<String>,
    /// Decided ones too; default false.
    pub include_decided: Option<bool>,
}
read_args!(ListReviewsArgs { chain_key, reviewer, requester, include_decided });

fn review_reply(r: &Review, now_ms: i64) -> ReviewReply {
    let d = r.decided.as_ref();
    ReviewReply {
        review_id: r.review_id.clone(),
        subject: r.subject.clone(),
        claim_key: r.claim_key.clone(),
        requester: r.requester.clone(),
        reviewers: r.reviewers.clone(),
        requested_at: format_rfc3339_millis(r.requested_at_ms),
        deadline: format_rfc3339_millis(r.deadline_ms),
        status: r.status(now_ms).to_string(),
        decision: d.map(|d| d.verdict.as_str().to_string()),
        decided_by: d.map(|d| d.reviewer.clone()),
        decided_at: d.map(|d| format_rfc3339_millis(d.decided_at_ms)),
        comment: d.and_then(|d| d.comment.clone()),
        thought_index: r.index,
    }
}

/// An agent id: a label without secrets.
fn agent(tool: &str, field: &'static str, value: &str) -> Result<String, ToolError> {
    let value = value.trim();
    crate::limits::check_key(field, value).map_err(|m| ToolError::invalid(tool, m))?;
    crate::redact::refuse_secret(field, value)?;
    Ok(value.to_string())
}

/// An optional agent id: blank is none.
fn optional_agent(tool: &str, field: &'static str, value: Option<String>) -> Result<Option<String>, ToolError> {
    value.filter(|v| !v.trim().is_empty()).map(|v| agent(tool, field, &v)).transpose()
}

/// Free text of 1 to `max` characters, not blank; control characters
/// only where `lines` allows newlines and tabs.
fn text(tool: &str, field: &str, value: &str, max: usize, lines: bool) -> Result<(), ToolError> {
    let chars = value.chars().count();
    if value.trim().is_empty() || chars > max {
        return Err(ToolError::invalid(tool, format!("{field} must be 1 to {max} characters and not blank, got {chars}")));
    }
    if value.chars().any(|c| c.is_control() && !(lines && (c == '\n' || c == '\t'))) {
        return Err(ToolError::invalid(tool, format!("{field} has control characters")));
    }
    Ok(())
}

/// A review thought for `record`, by `agent`. Its content must read back
/// as the same record and hold nothing redaction would rewrite.
fn review_thought(tool: &str, agent: &str, record: &ReviewRecord) -> Result<NewThought, ToolError> {
    let content = record.content();
    if let Some(found) = crate::redact::scan(&content).first() {
        return Err(ToolError::invalid(tool, format!("the review reads like a secret ({}) and is not stored; state it without the credential", found.kind)));
    }
    let tags = vec![REVIEW_TAG.to_string()];
    if ReviewRecord::parse(record.thought_type(), &tags, &content).as_ref() != Some(record) {
        return Err(ToolError::invalid(tool, "the review does not read back as written and is not stored"));
    }
    let mut input = NewThought::new(agent, record.thought_type(), &content);
    input.tags = tags;
    Ok(input)
}

/// The time reviews are judged at: chain time ([`Chain::time_at`]), the
/// time a decision written now is stamped with.
fn chain_now(db: &MentisDb, chain: Option<&Chain>) -> i64 {
    let now = db.now_millis();
    chain.map_or(now, |c| c.time_at(now))
}

/// The time reviews of chain `key` are judged at now ([`chain_now`]).
fn now_in(db: &MentisDb, key: &str) -> Result<i64, ToolError> {
    db.with_chain(key, |c| chain_now(db, c))
}

/// Review `id` of chain `key` as it now stands.
fn stored(db: &MentisDb, key: &str, id: &str) -> Result<Review, ToolError> {
    db.with_chain(key, |c| c.and_then(|c| c.reviews().get(id).cloned()))?.ok_or_else(|| ToolError::NotFound(format!("review '{id}' is not in chain '{key}'")))
}

fn request(db: &MentisDb, a: RequestReviewArgs) -> Result<ReviewRequestedReply, ToolError> {
    const TOOL: &str = "mentisdb_request_review";
    text(TOOL, "subject", &a.subject, MAX_SUBJECT_CHARS, false)?;
    let requester = optional_agent(TOOL, "agent_id", a.agent_id)?.unwrap_or_else(|| DEFAULT_REQUESTER.to_string());
    let claim_key = a.claim_key.map(|k| agent(TOOL, "claim_key", &k)).transpose()?;
    let given = a.reviewers.unwrap_or_default();
    if given.len() > MAX_REVIEWERS {
        return Err(ToolError::invalid(TOOL, format!("{} reviewers; at most {MAX_REVIEWERS}", given.len())));
    }
    let mut reviewers = Vec::new();
    for r in given {
        let r = agent(TOOL, "reviewers", &r)?;
        if !reviewers.contains(&r) {
            reviewers.push(r);
        }
    }
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let deadline_ms = a.deadline_ms.map_or(DEFAULT_DEADLINE_MS, |d| d.get() as u64);
    let record = ReviewRecord::Request { subject: a.subject, claim_key, reviewers, deadline_ms };
    let thought = db.append(&key, review_thought(TOOL, &requester, &record)?)?;
    let review = stored(db, &key, &thought.id.as_text())?;
    Ok(ReviewRequestedReply { review_id: review.review_id.clone(), review: review_reply(&review, now_in(db, &key)?) })
}

fn decide(db: &MentisDb, a: DecideReviewArgs) -> Result<ReviewDecidedReply, ToolError> {
    const TOOL: &str = "mentisdb_decide_review";
    let reviewer = agent(TOOL, "agent_id", &a.agent_id)?;
    // A blank comment is none.
    let comment = a.comment.filter(|c| !c.trim().is_empty());
    if let Some(c) = &comment {
        text(TOOL, "comment", c, MAX_COMMENT_CHARS, true)?;
    }
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let review_id = a.review_id.trim().to_string();
    let review = stored(db, &key, &review_id)?;
    let refused = |reason: &str| -> Result<ReviewDecidedReply, ToolError> {
        let review = stored(db, &key, &review_id)?;
        let decision = review.decided.as_ref().map(|d| d.verdict.as_str().to_string());
        Ok(ReviewDecidedReply { ok: false, reason: Some(reason.to_string()), decision, review: review_reply(&review, now_in(db, &key)?) })
    };
    let record = ReviewRecord::Decision { review_id: review.review_id.clone(), verdict: a.decision, comment };
    let mut input = review_thought(TOOL, &reviewer, &record)?;
    input.relations = vec![RelationInput { kind: RelationKind::References, target_id: Some(review.review_id.clone()), target_index: None, chain_key: None }];
    // Written alone, under the chain's write lock, only while the review
    // takes it: two decisions through this engine never both land.
    let takes_it = |c: &Chain| c.reviews().refusal(&review_id, &reviewer, chain_now(db, Some(c))).is_none();
    let Some(written) = db.append_when(&key, None, input, takes_it)? else {
        let refusal = db.with_chain(&key, |c| c.and_then(|c| c.reviews().refusal(&review_id, &reviewer, chain_now(db, Some(c)))))?;
        return refused(refusal.map_or("already_decided", |r| r.as_str()));
    };
    // Through another daemon on a shared store a decision may have landed
    // first (this one was re-based after it): the table counts the first.
    let review = stored(db, &key, &review_id)?;
    if review.decided.as_ref().is_some_and(|d| d.thought_id == written.id) {
        return Ok(ReviewDecidedReply { ok: true, reason: None, decision: Some(a.decision.as_str().to_string()), review: review_reply(&review, now_in(db, &key)?) });
    }
    let reason = if review.decided.is_some() { "already_decided" } else { "expired" };
    refused(reason)
}

fn list(db: &MentisDb, a: ListReviewsArgs) -> Result<ReviewListReply, ToolError> {
    const TOOL: &str = "mentisdb_list_reviews";
    let reviewer = optional_agent(TOOL, "reviewer", a.reviewer)?;
    let requester = optional_agent(TOOL, "requester", a.requester)?;
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let reviews = db.with_chain(&key, |c| {
        let now = chain_now(db, c);
        c.map(|c| c.reviews().list(reviewer.as_deref(), requester.as_deref(), a.include_decided.unwrap_or(false)).into_iter().map(|r| review_reply(r, now)).collect()).unwrap_or_default()
    })?;
    Ok(ReviewListReply { chain_key: key, reviews })
}
