//! Event streams over chains (a host's `GET /v1/events`): where a reader
//! stands in each chain, and the thoughts it has not seen yet.
//!
//! A stream's position is an [`EventCursor`]: for each chain, the index of
//! the next thought to send. Its text form (the SSE `id:` of every event,
//! sent back as `Last-Event-ID`) is opaque to clients: base64url of a
//! compact JSON object `{"<chain_key>": <next_index>, ...}`, so it is plain
//! ASCII whatever the chain keys hold. Because the chains themselves are the
//! log, resuming from a cursor has no gap and needs no event store: the
//! thoughts from each chain's next index on are read back from the chain,
//! even after a daemon restart.

use crate::claims::{ClaimOp, ClaimRecord, Lease};
use crate::db::MentisDb;
use crate::error::ToolError;
use crate::facts::FactRecord;
use crate::presence::Presence;
use crate::reviews::ReviewRecord;
use crate::thought::Thought;
use crate::timestamp::format_rfc3339_millis;
use serde_json::{json, Value};
use ::base64::Engine as _;
use std::collections::BTreeMap;

/// Longest cursor text accepted, in bytes (a stream over many chains).
pub const MAX_CURSOR_BYTES: usize = 64 * 1024;

/// Where a reader of an event stream stands: per chain, the next index to send.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventCursor {
    next: BTreeMap<String, u64>,
}

/// A `Last-Event-ID` that is not a cursor this engine wrote.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Last-Event-ID is not an event cursor of this daemon ({0}); reconnect without it to start from now")]
pub struct CursorError(&'static str);

impl EventCursor {
    /// Parses the text form [`EventCursor::render`] wrote.
    pub fn parse(text: &str) -> Result<EventCursor, CursorError> {
        if text.len() > MAX_CURSOR_BYTES {
            return Err(CursorError("too long"));
        }
        let json = ::base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text.trim()).map_err(|_| CursorError("not base64url"))?;
        let next = serde_json::from_slice(&json).map_err(|_| CursorError("not a map of chain keys to indexes"))?;
        Ok(EventCursor { next })
    }

    /// The opaque ASCII text form, for an SSE `id:` line.
    pub fn render(&self) -> String {
        let json = serde_json::to_vec(&self.next).expect("a map of strings to integers serializes");
        ::base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
    }

    /// The next index to send of chain `key`, if the cursor has seen the chain.
    pub fn next_index(&self, key: &str) -> Option<u64> {
        self.next.get(key).copied()
    }

    /// Records that chain `key` was sent up to (not including) `next`.
    /// A cursor never moves back.
    pub fn advance(&mut self, key: &str, next: u64) {
        let at = self.next.entry(key.to_string()).or_insert(0);
        *at = (*at).max(next);
    }

    /// Forgets chain `key` (it was deleted; a chain made later under the
    /// same key starts from its first thought).
    pub fn remove(&mut self, key: &str) {
        self.next.remove(key);
    }

    /// Keeps only the chains `keep` accepts.
    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.next.retain(|k, _| keep(k));
    }

    /// The chains the cursor names, with their next index.
    pub fn chains(&self) -> impl Iterator<Item = (&str, u64)> {
        self.next.iter().map(|(k, n)| (k.as_str(), *n))
    }
}

impl MentisDb {
    /// The thoughts of chain `key` with index in `from..until` (clamped to
    /// the chain's length), at most `max` of them, in index order. An
    /// unknown chain has none.
    pub fn thoughts_in(&self, key: &str, from: u64, until: u64, max: usize) -> Result<Vec<Thought>, ToolError> {
        // Nothing past `from`: answered without loading a parked chain.
        if self.known_len(key).is_some_and(|len| len <= from) {
            return Ok(Vec::new());
        }
        self.with_chain(key, |chain| {
            let Some(chain) = chain else { return Vec::new() };
            let thoughts = chain.thoughts();
            let end = (until.min(thoughts.len() as u64)) as usize;
            let start = (from as usize).min(end);
            thoughts.range(start..end).take(max).cloned().collect()
        })
    }

    /// How many thoughts chain `key` holds (0 for an unknown chain): the
    /// next index a new reader of it starts from.
    pub fn thought_count(&self, key: &str) -> Result<u64, ToolError> {
        match self.known_len(key) {
            Some(len) => Ok(len),
            None => self.with_chain(key, |chain| chain.map_or(0, |c| c.len() as u64)),
        }
    }
}

/// A coordination event: its name and data (`chain_key` included).
#[derive(Debug, Clone, PartialEq)]
pub struct CoordinationEvent {
    /// `claim_acquired`, `claim_released`, `claim_expired`, `fact_recorded`,
    /// `fact_closed`, `review_requested`, `review_decided` or `presence_updated`.
    pub name: &'static str,
    /// What happened, as a JSON object.
    pub data: Value,
}

/// The coordination event a thought of chain `chain_key` is, if it is a
/// claim, fact or review record (a renewal is none: the key changed no
/// hands). Hosts send it beside the thought's own event, so it has the
/// thought's place in the log: a reader resuming from a cursor gets it again
/// exactly when it gets the thought again.
pub fn coordination_event(chain_key: &str, thought: &Thought) -> Option<CoordinationEvent> {
    let (name, mut data) = if let Some(c) = ClaimRecord::of(thought) {
        let name = match c.op {
            ClaimOp::Acquire => "claim_acquired",
            ClaimOp::Release => "claim_released",
            ClaimOp::Renew => return None,
        };
        let mut data = json!({"key": c.key, "holder": c.holder, "fencing_token": c.fencing_token});
        if c.op == ClaimOp::Acquire {
            let at = thought.parsed_timestamp_ms()?;
            data["expires_at"] = json!(format_rfc3339_millis(at.saturating_add(c.ttl_ms as i64)));
        }
        (name, data)
    } else if let Some(f) = FactRecord::of(thought) {
        match f {
            FactRecord::Record { subject, predicate, object, valid_from_ms, closes } => {
                ("fact_recorded", json!({"fact_id": thought.id, "subject": subject, "predicate": predicate, "object": object, "valid_from": format_rfc3339_millis(valid_from_ms), "closes": closes, "recorded_by": thought.agent_id}))
            }
            FactRecord::Close { fact_id, valid_to_ms } => ("fact_closed", json!({"fact_id": fact_id, "valid_to": format_rfc3339_millis(valid_to_ms), "closed_by": thought.agent_id})),
        }
    } else if let Some(r) = ReviewRecord::of(thought) {
        match r {
            ReviewRecord::Request { subject, claim_key, reviewers, deadline_ms } => {
                let at = thought.parsed_timestamp_ms()?;
                let deadline = format_rfc3339_millis(at.saturating_add(deadline_ms as i64));
                ("review_requested", json!({"review_id": thought.id, "subject": subject, "claim_key": claim_key, "reviewers": reviewers, "requester": thought.agent_id, "deadline": deadline}))
            }
            ReviewRecord::Decision { review_id, verdict, comment } => ("review_decided", json!({"review_id": review_id, "decision": verdict.as_str(), "comment": comment, "reviewer": thought.agent_id})),
        }
    } else {
        return None;
    };
    data["chain_key"] = json!(chain_key);
    data["thought_index"] = json!(thought.index);
    Some(CoordinationEvent { name, data })
}

/// What a webhook delivery of `thought` POSTs: 0.10's payload
/// ([`crate::webhooks::payload`]) and, for a claim, fact or review record,
/// `coordination: {event, data}` ([`coordination_event`]).
#[cfg(feature = "daemon-tools")]
pub fn webhook_payload(chain_key: &str, thought: &Thought, sent_at: &str) -> Value {
    let mut body = crate::webhooks::payload(chain_key, thought, sent_at);
    if let Some(e) = coordination_event(chain_key, thought) {
        body["coordination"] = json!({"event": e.name, "data": e.data});
    }
    body
}

/// The `claim_expired` event of a lease of chain `chain_key` that ran out.
pub fn claim_expired(chain_key: &str, lease: &Lease) -> CoordinationEvent {
    CoordinationEvent { name: "claim_expired", data: json!({"chain_key": chain_key, "key": lease.key, "holder": lease.holder, "fencing_token": lease.fencing_token, "expired_at": format_rfc3339_millis(lease.expires_at_ms)}) }
}

/// The `presence_updated` event of a beat.
pub fn presence_updated(p: &Presence) -> CoordinationEvent {
    let b = &p.beat;
    CoordinationEvent {
        name: "presence_updated",
        data: json!({"chain_key": p.chain_key, "agent_id": b.agent_id, "session_id": b.session_id, "display_name": b.display_name, "tool": b.tool, "current_file": b.current_file, "current_action": b.current_action, "last_seen": format_rfc3339_millis(p.last_seen_ms)}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_round_trips_through_its_ascii_text_whatever_the_keys_hold() {
        let mut c = EventCursor::default();
        c.advance("plain", 3);
        c.advance("naïve key, with \"quotes\"\nand a newline", 7);
        c.advance("plain", 2);
        let text = c.render();
        assert!(text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'), "{text}");
        let back = EventCursor::parse(&text).unwrap();
        assert_eq!(back, c);
        assert_eq!(back.next_index("plain"), Some(3), "a cursor never moves back");
    }

    #[test]
    fn foreign_text_is_refused_with_a_reason() {
        assert!(EventCursor::parse("not a cursor!").unwrap_err().to_string().contains("not base64url"));
        let e = EventCursor::parse(&::base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("[1,2]")).unwrap_err();
        assert!(e.to_string().contains("Last-Event-ID"));
        assert!(EventCursor::parse(&"A".repeat(MAX_CURSOR_BYTES + 1)).is_err());
    }
}
