//! Reviews: one agent's work waiting on another's approval, kept as
//! thoughts of the chain.
//!
//! A *review record* is a thought tagged [`REVIEW_TAG`] whose content is one
//! JSON object:
//! - a request, of type `Question`: `{"review": "request", "subject",
//!   "claim_key", "reviewers": [agent ids], "deadline_ms": time to decide}`
//!   (the deadline is the request's timestamp plus `deadline_ms`); its
//!   thought id is the review's id, its agent the requester;
//! - a decision, of type `Decision`: `{"review": "decision", "review_id",
//!   "decision": "approved" | "rejected" | "needs_changes", "comment"}`; its
//!   agent is the reviewer, and it carries a `References` relation to the
//!   request.
//!
//! The rules, as pure functions of the [`ReviewTable`] (derived from the
//! chain in order) and a time ([`ReviewTable::refusal`]):
//! - a request counts when it is well formed: a subject of 1 to
//!   [`MAX_SUBJECT_CHARS`] characters, at most [`MAX_REVIEWERS`] reviewers,
//!   a deadline [`MIN_DEADLINE_MS`] to [`MAX_DEADLINE_MS`] after it;
//! - the first decision wins: a review has at most one;
//! - a review past its deadline takes no decision (it is `expired`);
//! - when the request names reviewers, only they decide; when it names
//!   none, anyone but the requester does (nobody approves their own work).
//!
//! Records are stored as written; the table counts only those these rules
//! allow where they stand in the chain, on every engine that replays it.
//! `mentisdb_decide_review` writes a decision alone under the chain's write
//! lock and only while the review takes it, so two decisions through one
//! engine never both land; through two daemons on one database both may be
//! stored, the first in the chain counts, and the other caller is told
//! `already_decided` (its thought stays as history that does not count).
//!
//! Review records are ordinary thoughts: an agent with a key writes its
//! decision with `mentisdb_append` in this form, signed (it counts if the
//! review takes it where it lands), and records travel in exports, backups,
//! proofs and sync like any other. A decision cannot be forgotten (its
//! review would open again); a request can (its review is gone).

use crate::derived::Derive;
use crate::named_enum::named_enum;
use crate::thought::{Thought, ThoughtType};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The tag of a review record.
pub const REVIEW_TAG: &str = "review";
/// Shortest time to decide (a minute).
pub const MIN_DEADLINE_MS: u64 = 60_000;
/// Longest time to decide (a week).
pub const MAX_DEADLINE_MS: u64 = 7 * 86_400_000;
/// Longest `subject`, in characters.
pub const MAX_SUBJECT_CHARS: usize = 512;
/// Longest `comment`, in characters.
pub const MAX_COMMENT_CHARS: usize = 8_192;
/// Most reviewers one request names.
pub const MAX_REVIEWERS: usize = 20;

named_enum! {
    /// A reviewer's verdict.
    pub enum Verdict("decision", Exact) {
        /// The work may go ahead.
        Approved = "approved",
        /// It may not.
        Rejected = "rejected",
        /// Not as it is.
        NeedsChanges = "needs_changes",
    }
}

/// What a review record says.
#[derive(Debug, Clone, PartialEq)]
pub enum ReviewRecord {
    /// A review asked for.
    Request {
        /// What to review.
        subject: String,
        /// The claim the work is done under, if any.
        claim_key: Option<String>,
        /// Who may decide (empty: anyone but the requester).
        reviewers: Vec<String>,
        /// How long after the request a decision is taken (ms).
        deadline_ms: u64,
    },
    /// A review decided.
    Decision {
        /// The request's thought id.
        review_id: String,
        /// The verdict.
        verdict: Verdict,
        /// Why, if the reviewer said.
        comment: Option<String>,
    },
}

impl ReviewRecord {
    /// The record as a review thought's content (keys in a fixed order).
    pub fn content(&self) -> String {
        match self {
            ReviewRecord::Request { subject, claim_key, reviewers, deadline_ms } => {
                json!({"review": "request", "subject": subject, "claim_key": claim_key, "reviewers": reviewers, "deadline_ms": deadline_ms}).to_string()
            }
            ReviewRecord::Decision { review_id, verdict, comment } => json!({"review": "decision", "review_id": review_id, "decision": verdict.as_str(), "comment": comment}).to_string(),
        }
    }

    /// The thought type a record of this kind is written as.
    pub fn thought_type(&self) -> ThoughtType {
        match self {
            ReviewRecord::Request { .. } => ThoughtType::Question,
            ReviewRecord::Decision { .. } => ThoughtType::Decision,
        }
    }

    /// The record a thought of this type, tags and content states, if any.
    pub fn parse(thought_type: ThoughtType, tags: &[impl AsRef<str>], content: &str) -> Option<ReviewRecord> {
        if !tags.iter().any(|t| t.as_ref() == REVIEW_TAG) || !matches!(thought_type, ThoughtType::Question | ThoughtType::Decision) {
            return None;
        }
        let v: Value = serde_json::from_str(content).ok()?;
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let record = match v.get("review")?.as_str()? {
            "request" => ReviewRecord::Request {
                subject: text("subject")?,
                claim_key: text("claim_key"),
                reviewers: v.get("reviewers").and_then(Value::as_array).map(|r| r.iter().filter_map(Value::as_str).map(str::to_string).collect()).unwrap_or_default(),
                deadline_ms: v.get("deadline_ms")?.as_u64()?,
            },
            "decision" => ReviewRecord::Decision { review_id: text("review_id")?, verdict: Verdict::parse(v.get("decision")?.as_str()?).ok()?, comment: text("comment") },
            _ => return None,
        };
        (record.thought_type() == thought_type).then_some(record)
    }

    /// The record thought `t` carries, if it is a review record.
    pub fn of(t: &Thought) -> Option<ReviewRecord> {
        ReviewRecord::parse(t.thought_type, &t.tags, &t.content)
    }
}

/// Whether a thought of this type and these tags is a review record (when
/// its content states one).
pub fn is_review(thought_type: ThoughtType, tags: &[impl AsRef<str>]) -> bool {
    matches!(thought_type, ThoughtType::Question | ThoughtType::Decision) && tags.iter().any(|t| t.as_ref() == REVIEW_TAG)
}

/// A review's decision.
#[derive(Debug, Clone, PartialEq)]
pub struct Decided {
    /// The verdict.
    pub verdict: Verdict,
    /// Why, if the reviewer said.
    pub comment: Option<String>,
    /// Who decided.
    pub reviewer: String,
    /// When (epoch ms).
    pub decided_at_ms: i64,
    /// The decision thought's id.
    pub thought_id: String,
}

/// One review as the chain's records make it.
#[derive(Debug, Clone, PartialEq)]
pub struct Review {
    /// The request thought's id.
    pub review_id: String,
    /// That thought's index.
    pub index: u64,
    /// What to review.
    pub subject: String,
    /// The claim the work is done under, if any.
    pub claim_key: Option<String>,
    /// Who asked.
    pub requester: String,
    /// Who may decide (empty: anyone but the requester).
    pub reviewers: Vec<String>,
    /// When it was asked (epoch ms).
    pub requested_at_ms: i64,
    /// Until when a decision is taken (epoch ms).
    pub deadline_ms: i64,
    /// The decision, once taken.
    pub decided: Option<Decided>,
}

impl Review {
    /// `open`, `expired`, or the verdict, at `now_ms`.
    pub fn status(&self, now_ms: i64) -> &'static str {
        match &self.decided {
            Some(d) => d.verdict.as_str(),
            None if now_ms >= self.deadline_ms => "expired",
            None => "open",
        }
    }

    /// Whether `agent` may decide it (see the module docs).
    pub fn may_decide(&self, agent: &str) -> bool {
        if self.reviewers.is_empty() {
            agent != self.requester
        } else {
            self.reviewers.iter().any(|r| r == agent)
        }
    }
}

/// Why a decision is not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No review has that id.
    Unknown,
    /// Another decision came first.
    AlreadyDecided,
    /// Past the deadline.
    Expired,
    /// The agent is not one who may decide it.
    NotAReviewer,
}

impl Refusal {
    /// Its name on the wire (a reply's `reason`).
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::Unknown => "unknown_review",
            Refusal::AlreadyDecided => "already_decided",
            Refusal::Expired => "expired",
            Refusal::NotAReviewer => "not_a_reviewer",
        }
    }
}

/// Every review of a chain, from its review records.
#[derive(Debug, Default)]
pub struct ReviewTable {
    indexed: usize,
    reviews: Vec<Review>,
    by_id: BTreeMap<String, usize>,
}

impl Derive for ReviewTable {
    fn indexed(&self) -> usize {
        self.indexed
    }

    fn add(&mut self, t: &Thought) {
        self.indexed += 1;
        let Some(record) = ReviewRecord::of(t) else { return };
        let Some(at_ms) = t.parsed_timestamp_ms() else { return };
        match record {
            ReviewRecord::Request { subject, claim_key, reviewers, deadline_ms } => {
                let well_formed = !subject.trim().is_empty() && subject.chars().count() <= MAX_SUBJECT_CHARS && reviewers.len() <= MAX_REVIEWERS && (MIN_DEADLINE_MS..=MAX_DEADLINE_MS).contains(&deadline_ms);
                if !well_formed || self.by_id.contains_key(&*t.id.as_text()) {
                    return;
                }
                self.by_id.insert(t.id.to_string(), self.reviews.len());
                self.reviews.push(Review { review_id: t.id.to_string(), index: t.index, subject, claim_key, requester: t.agent_id.to_string(), reviewers, requested_at_ms: at_ms, deadline_ms: at_ms.saturating_add(deadline_ms as i64), decided: None });
            }
            ReviewRecord::Decision { review_id, verdict, comment } => {
                if self.refusal(&review_id, &t.agent_id, at_ms).is_none() {
                    let i = self.by_id[&review_id];
                    self.reviews[i].decided = Some(Decided { verdict, comment, reviewer: t.agent_id.to_string(), decided_at_ms: at_ms, thought_id: t.id.to_string() });
                }
            }
        }
    }
}

impl ReviewTable {
    /// The review asked for by thought `review_id`.
    pub fn get(&self, review_id: &str) -> Option<&Review> {
        self.by_id.get(review_id).map(|&i| &self.reviews[i])
    }

    /// Whether thought `id` is the decision a review counts.
    pub fn decided_by_thought(&self, id: &str) -> bool {
        self.reviews.iter().any(|r| r.decided.as_ref().is_some_and(|d| d.thought_id == id))
    }

    /// Why `reviewer` may not decide review `review_id` at `at_ms`, if it may not.
    pub fn refusal(&self, review_id: &str, reviewer: &str, at_ms: i64) -> Option<Refusal> {
        let Some(review) = self.get(review_id) else { return Some(Refusal::Unknown) };
        if review.decided.is_some() {
            Some(Refusal::AlreadyDecided)
        } else if at_ms >= review.deadline_ms {
            Some(Refusal::Expired)
        } else if !review.may_decide(reviewer) {
            Some(Refusal::NotAReviewer)
        } else {
            None
        }
    }

    /// The reviews `reviewer` may decide or `requester` asked for (each
    /// filter when given), undecided ones only unless `include_decided`;
    /// newest first.
    pub fn list(&self, reviewer: Option<&str>, requester: Option<&str>, include_decided: bool) -> Vec<&Review> {
        self.reviews
            .iter()
            .rev()
            .filter(|r| include_decided || r.decided.is_none())
            .filter(|r| reviewer.is_none_or(|a| r.may_decide(a)))
            .filter(|r| requester.is_none_or(|a| r.requester == a))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thought(id: &str, index: u64, agent: &str, at_ms: i64, r: &ReviewRecord) -> Thought {
        let mut t = crate::canonical::tests::golden_thought();
        (t.id, t.index, t.agent_id, t.thought_type, t.content, t.tags) = (id.into(), index, agent.into(), r.thought_type(), r.content().into(), crate::labels([REVIEW_TAG]));
        t.set_timestamp_ms(at_ms);
        t
    }

    /// A request at 1,000 ms whose deadline is `deadline_ms` (epoch ms).
    fn request(reviewers: &[&str], deadline_ms: i64) -> ReviewRecord {
        let deadline_ms = (deadline_ms - 1_000).max(0) as u64;
        ReviewRecord::Request { subject: "ship it".into(), claim_key: Some("task-1".into()), reviewers: reviewers.iter().map(|s| s.to_string()).collect(), deadline_ms }
    }

    fn decision(verdict: Verdict) -> ReviewRecord {
        ReviewRecord::Decision { review_id: "r1".into(), verdict, comment: None }
    }

    #[test]
    fn the_first_allowed_decision_wins_and_later_ones_change_nothing() {
        let mut table = ReviewTable::default();
        table.add(&thought("r1", 0, "ada", 1_000, &request(&["bob", "cy"], 100_000)));
        assert_eq!(table.refusal("r1", "ada", 2_000), Some(Refusal::NotAReviewer), "the requester is not a named reviewer");
        table.add(&thought("d0", 1, "ada", 2_000, &decision(Verdict::Approved)));
        assert_eq!(table.get("r1").unwrap().status(2_000), "open", "a decision the rules refuse is not applied");
        table.add(&thought("d1", 2, "bob", 3_000, &decision(Verdict::NeedsChanges)));
        table.add(&thought("d2", 3, "cy", 4_000, &decision(Verdict::Approved)));
        let r = table.get("r1").unwrap();
        assert_eq!((r.status(5_000), r.decided.as_ref().unwrap().reviewer.as_str()), ("needs_changes", "bob"));
        assert_eq!(table.refusal("r1", "cy", 5_000), Some(Refusal::AlreadyDecided));
        assert!(table.list(Some("cy"), None, false).is_empty());
        assert_eq!(table.list(None, Some("ada"), true).len(), 1);
    }

    #[test]
    fn a_review_expires_at_its_deadline_and_without_reviewers_anyone_but_the_requester_decides() {
        let mut table = ReviewTable::default();
        table.add(&thought("r1", 0, "ada", 1_000, &request(&[], 61_000)));
        let r = table.get("r1").unwrap();
        assert_eq!((r.status(60_999), r.status(61_000)), ("open", "expired"));
        assert_eq!(table.refusal("r1", "ada", 2_000), Some(Refusal::NotAReviewer));
        assert_eq!(table.refusal("r1", "bob", 2_000), None);
        assert_eq!(table.refusal("r1", "bob", 61_000), Some(Refusal::Expired));
        table.add(&thought("d1", 1, "bob", 61_000, &decision(Verdict::Approved)));
        assert!(table.get("r1").unwrap().decided.is_none(), "a decision at the deadline is too late");
        assert_eq!(table.refusal("nope", "bob", 0), Some(Refusal::Unknown));
        // A request written by hand with a deadline under a minute (or over a week) is no review.
        table.add(&thought("r2", 2, "ada", 1_000, &request(&[], 30_000)));
        table.add(&thought("r3", 3, "ada", 1_000, &request(&[], 1_000 + 8 * 86_400_000)));
        assert!(table.get("r2").is_none() && table.get("r3").is_none());
    }

    #[test]
    fn records_read_back_and_other_thoughts_are_not_reviews() {
        for r in [request(&["bob"], 5), decision(Verdict::Rejected)] {
            assert_eq!(ReviewRecord::parse(r.thought_type(), &[REVIEW_TAG], &r.content()), Some(r.clone()));
            assert_eq!(ReviewRecord::parse(r.thought_type(), &[] as &[&str], &r.content()), None, "untagged");
        }
        let r = request(&[], 5);
        assert_eq!(ReviewRecord::parse(ThoughtType::Decision, &[REVIEW_TAG], &r.content()), None, "a request must be a Question");
        assert_eq!(ReviewRecord::parse(ThoughtType::Question, &[REVIEW_TAG], "{\"review\": \"request\"}"), None);
    }
}
