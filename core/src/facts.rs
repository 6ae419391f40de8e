//! Temporal facts: `subject` `predicate` `object` statements that hold from
//! `valid_from` until a later fact with the same subject and predicate (or a
//! close) ends them, kept as thoughts of the chain.
//!
//! A *fact record* is a thought of type `FactLearned`, tagged [`FACT_TAG`],
//! whose content is one JSON object: `{"fact": "record", "subject",
//! "predicate", "object", "valid_from", "closes": [fact ids]}` or `{"fact":
//! "close", "fact_id", "valid_to"}`, times in epoch milliseconds (exact for
//! any time a caller can name; replies write RFC 3339). Its id is the fact's id, its agent the
//! one that recorded it, its `confidence` the fact's. A record also carries
//! a `Supersedes` relation to each fact it closes (a close, `Invalidates`),
//! so ranked search, which leaves retired thoughts out, answers a fact's
//! current version, not the ones it replaced.
//!
//! The rules, as pure functions of the [`FactTable`] (derived from the
//! chain in order, like the other indices):
//! - recording a fact closes the active facts with the same subject and
//!   predicate (compared without case) that started no later than it: their
//!   `valid_to` becomes its `valid_from`; a fact backdated before an active
//!   one of that subject and predicate is history: it ends where that one
//!   starts;
//! - a fact is *active* until closed; it *holds at* `t` when `valid_from <=
//!   t < valid_to`;
//! - two active facts with one subject and predicate and different objects
//!   are a *conflict* (two writers at once, each closing what it saw):
//!   [`FactTable::conflicts`] lists them, deterministically.
//!
//! Fact records are ordinary thoughts: any writer of the chain may record
//! one (by this tool or by an append of the same form), and they travel in
//! exports, backups, proofs and sync like any other.

use crate::derived::Derive;
use crate::thought::{Thought, ThoughtType};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The tag of a fact record.
pub const FACT_TAG: &str = "fact";
/// Longest `object`, in characters.
pub const MAX_OBJECT_CHARS: usize = 4_096;

/// One fact as the chain's records make it.
#[derive(Debug, Clone, PartialEq)]
pub struct Fact {
    /// The id of the thought that recorded it.
    pub fact_id: String,
    /// That thought's index.
    pub index: u64,
    /// What the fact is about.
    pub subject: String,
    /// The property stated.
    pub predicate: String,
    /// Its value.
    pub object: String,
    /// How sure the recorder was (0..=1), if it said.
    pub confidence: Option<f64>,
    /// From when it holds (epoch ms).
    pub valid_from_ms: i64,
    /// When it stopped holding (epoch ms); `None` while active.
    pub valid_to_ms: Option<i64>,
    /// The agent that recorded it.
    pub recorded_by: String,
}

impl Fact {
    /// Whether it holds at `at_ms`.
    pub fn holds_at(&self, at_ms: i64) -> bool {
        self.valid_from_ms <= at_ms && self.valid_to_ms.is_none_or(|end| at_ms < end)
    }

    fn is_about(&self, subject: Option<&str>, predicate: Option<&str>) -> bool {
        subject.is_none_or(|s| same(&self.subject, s)) && predicate.is_none_or(|p| same(&self.predicate, p))
    }
}

/// Subjects and predicates compare trimmed and without case.
fn same(a: &str, b: &str) -> bool {
    a.trim().to_lowercase() == b.trim().to_lowercase()
}

/// What a fact record says.
#[derive(Debug, Clone, PartialEq)]
pub enum FactRecord {
    /// A new fact, closing `closes`.
    Record {
        /// What it is about.
        subject: String,
        /// The property.
        predicate: String,
        /// The value.
        object: String,
        /// From when (epoch ms).
        valid_from_ms: i64,
        /// The active facts it ends.
        closes: Vec<String>,
    },
    /// The end of fact `fact_id` at `valid_to_ms`.
    Close {
        /// The fact closed.
        fact_id: String,
        /// When it stopped holding (epoch ms).
        valid_to_ms: i64,
    },
}

impl FactRecord {
    /// The record as a fact thought's content (keys in a fixed order).
    pub fn content(&self) -> String {
        match self {
            FactRecord::Record { subject, predicate, object, valid_from_ms, closes } => {
                json!({"fact": "record", "subject": subject, "predicate": predicate, "object": object, "valid_from": valid_from_ms, "closes": closes}).to_string()
            }
            FactRecord::Close { fact_id, valid_to_ms } => json!({"fact": "close", "fact_id": fact_id, "valid_to": valid_to_ms}).to_string(),
        }
    }

    /// The record a thought carries, if it is a fact record.
    pub fn of(t: &Thought) -> Option<FactRecord> {
        if !is_fact(t.thought_type, &t.tags) {
            return None;
        }
        FactRecord::parse(&t.content)
    }

    /// The record a fact thought's content states, if it states one.
    pub fn parse(content: &str) -> Option<FactRecord> {
        let v: Value = serde_json::from_str(content).ok()?;
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        // Epoch ms, as the tools write them; RFC 3339 text from a hand-written record.
        let time = |k: &str| v.get(k).and_then(|t| t.as_i64().or_else(|| t.as_str().and_then(|s| crate::timestamp::parse_rfc3339_millis(s).ok())));
        match v.get("fact")?.as_str()? {
            "record" => Some(FactRecord::Record {
                subject: text("subject")?,
                predicate: text("predicate")?,
                object: text("object")?,
                valid_from_ms: time("valid_from")?,
                closes: v.get("closes").and_then(Value::as_array).map(|ids| ids.iter().filter_map(Value::as_str).map(str::to_string).collect()).unwrap_or_default(),
            }),
            "close" => Some(FactRecord::Close { fact_id: text("fact_id")?, valid_to_ms: time("valid_to")? }),
            _ => None,
        }
    }
}

/// Whether a thought of this type and these tags is a fact record (when
/// its content states one).
pub fn is_fact(thought_type: ThoughtType, tags: &[impl AsRef<str>]) -> bool {
    thought_type == ThoughtType::FactLearned && tags.iter().any(|tag| tag.as_ref() == FACT_TAG)
}

/// Every fact of a chain with its validity window, from its fact records.
#[derive(Debug, Default)]
pub struct FactTable {
    indexed: usize,
    facts: Vec<Fact>,
    by_id: BTreeMap<String, usize>,
}

impl Derive for FactTable {
    fn indexed(&self) -> usize {
        self.indexed
    }

    fn add(&mut self, t: &Thought) {
        self.indexed += 1;
        match FactRecord::of(t) {
            Some(FactRecord::Record { subject, predicate, object, valid_from_ms, closes }) => {
                for id in &closes {
                    if let Some(&i) = self.by_id.get(id) {
                        let old = &mut self.facts[i];
                        if old.valid_to_ms.is_none() && same(&old.subject, &subject) && same(&old.predicate, &predicate) {
                            old.valid_to_ms = Some(valid_from_ms.max(old.valid_from_ms));
                        }
                    }
                }
                // Backdated before an active fact of its subject and predicate: it ends where that one starts.
                let valid_to_ms = self.to_close_after(&subject, &predicate, valid_from_ms);
                self.by_id.insert(t.id.to_string(), self.facts.len());
                self.facts.push(Fact { fact_id: t.id.to_string(), index: t.index, subject, predicate, object, confidence: t.confidence(), valid_from_ms, valid_to_ms, recorded_by: t.agent_id.to_string() });
            }
            Some(FactRecord::Close { fact_id, valid_to_ms }) => {
                if let Some(&i) = self.by_id.get(&fact_id) {
                    let old = &mut self.facts[i];
                    if old.valid_to_ms.is_none() {
                        old.valid_to_ms = Some(valid_to_ms.max(old.valid_from_ms));
                    }
                }
            }
            None => {}
        }
    }
}

impl FactTable {
    /// The fact recorded by thought `fact_id`.
    pub fn get(&self, fact_id: &str) -> Option<&Fact> {
        self.by_id.get(fact_id).map(|&i| &self.facts[i])
    }

    /// The active facts about `subject` and `predicate` that started no later
    /// than `at_ms`: what a new fact from `at_ms` closes.
    pub fn to_close(&self, subject: &str, predicate: &str, at_ms: i64) -> Vec<&Fact> {
        self.facts.iter().filter(|f| f.valid_to_ms.is_none() && f.is_about(Some(subject), Some(predicate)) && f.valid_from_ms <= at_ms).collect()
    }

    /// The earliest start of an active fact about `subject` and `predicate`
    /// later than `at_ms`: where a fact backdated to `at_ms` ends.
    fn to_close_after(&self, subject: &str, predicate: &str, at_ms: i64) -> Option<i64> {
        self.facts.iter().filter(|f| f.valid_to_ms.is_none() && f.is_about(Some(subject), Some(predicate)) && f.valid_from_ms > at_ms).map(|f| f.valid_from_ms).min()
    }

    /// The facts about `subject` and `predicate` (each optional): those
    /// holding at `at_ms` when given, else the active ones (or, with
    /// `active_only` false, all); the latest `valid_from` first.
    pub fn query(&self, subject: Option<&str>, predicate: Option<&str>, at_ms: Option<i64>, active_only: bool) -> Vec<&Fact> {
        let mut found: Vec<&Fact> = self
            .facts
            .iter()
            .filter(|f| f.is_about(subject, predicate))
            .filter(|f| match at_ms {
                Some(t) => f.holds_at(t),
                None => !active_only || f.valid_to_ms.is_none(),
            })
            .collect();
        found.sort_by(|a, b| b.valid_from_ms.cmp(&a.valid_from_ms).then(b.index.cmp(&a.index)));
        found
    }

    /// Active facts that disagree: for each subject and predicate (each
    /// optional filter) with active facts of more than one object, those
    /// facts in record order; groups ordered by subject, then predicate.
    pub fn conflicts(&self, subject: Option<&str>, predicate: Option<&str>) -> Vec<Vec<&Fact>> {
        let mut groups: BTreeMap<(String, String), Vec<&Fact>> = BTreeMap::new();
        for f in self.facts.iter().filter(|f| f.valid_to_ms.is_none() && f.is_about(subject, predicate)) {
            groups.entry((f.subject.trim().to_lowercase(), f.predicate.trim().to_lowercase())).or_default().push(f);
        }
        groups.into_values().filter(|g| g.iter().any(|f| f.object != g[0].object)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thought::ThoughtRole;

    fn record(id: &str, index: u64, r: &FactRecord) -> Thought {
        let mut t = crate::canonical::tests::golden_thought();
        (t.id, t.index, t.thought_type, t.role, t.content, t.tags) = (id.into(), index, ThoughtType::FactLearned, ThoughtRole::Memory, r.content().into(), crate::labels([FACT_TAG]));
        t
    }

    fn fact(subject: &str, object: &str, from: i64, closes: &[&str]) -> FactRecord {
        FactRecord::Record { subject: subject.into(), predicate: "is".into(), object: object.into(), valid_from_ms: from, closes: closes.iter().map(|s| s.to_string()).collect() }
    }

    #[test]
    fn a_later_fact_closes_the_one_it_names_and_windows_answer_points_in_time() {
        let mut table = FactTable::default();
        table.add(&record("a", 0, &fact("API base URL", "https://one", 1_000, &[])));
        table.add(&record("b", 1, &fact("api base url", "https://two", 5_000, &["a"])));
        assert_eq!(table.get("a").unwrap().valid_to_ms, Some(5_000), "subjects compare without case");
        let now: Vec<_> = table.query(Some("API BASE URL"), Some("is"), None, true).iter().map(|f| f.object.clone()).collect();
        assert_eq!(now, ["https://two"]);
        assert_eq!(table.query(Some("api base url"), None, Some(4_999), true)[0].object, "https://one");
        assert_eq!(table.query(Some("api base url"), None, Some(5_000), true)[0].object, "https://two");
        assert!(table.query(Some("api base url"), None, Some(999), true).is_empty());
        assert_eq!(table.query(None, None, None, false).len(), 2);
        table.add(&record("c", 2, &FactRecord::Close { fact_id: "b".into(), valid_to_ms: 9_000 }));
        assert!(table.query(Some("api base url"), None, None, true).is_empty());
        assert_eq!(table.get("b").unwrap().valid_to_ms, Some(9_000));
    }

    #[test]
    fn two_writers_closing_the_same_fact_leave_a_conflict() {
        let mut table = FactTable::default();
        table.add(&record("a", 0, &fact("owner", "ana", 1_000, &[])));
        table.add(&record("b", 1, &fact("owner", "bo", 2_000, &["a"])));
        table.add(&record("c", 2, &fact("owner", "cy", 2_000, &["a"])));
        let conflicts = table.conflicts(None, None);
        assert_eq!(conflicts.len(), 1);
        assert_eq!(conflicts[0].iter().map(|f| f.fact_id.as_str()).collect::<Vec<_>>(), ["b", "c"]);
        table.add(&record("d", 3, &fact("owner", "cy", 3_000, &["b", "c"])));
        assert!(table.conflicts(None, None).is_empty(), "a fact closing both ends the conflict");
    }

    #[test]
    fn a_backdated_fact_is_history_that_ends_where_the_active_one_starts() {
        let mut table = FactTable::default();
        table.add(&record("a", 0, &fact("owner", "ana", 5_000, &[])));
        table.add(&record("b", 1, &fact("owner", "bo", 1_000, &[])));
        assert_eq!(table.get("b").unwrap().valid_to_ms, Some(5_000));
        assert_eq!(table.get("a").unwrap().valid_to_ms, None);
        assert!(table.conflicts(None, None).is_empty());
        assert_eq!(table.query(Some("owner"), None, Some(2_000), true)[0].object, "bo");
        assert_eq!(table.query(Some("owner"), None, Some(6_000), true).iter().map(|f| f.object.as_str()).collect::<Vec<_>>(), ["ana"]);
    }

    #[test]
    fn other_thoughts_and_malformed_records_are_not_facts() {
        let mut t = record("x", 0, &fact("s", "o", 1, &[]));
        t.tags = Default::default();
        assert_eq!(FactRecord::of(&t), None, "untagged");
        let mut t = record("x", 0, &fact("s", "o", 1, &[]));
        t.content = "{\"fact\": \"record\", \"subject\": \"s\"}".into();
        assert_eq!(FactRecord::of(&t), None, "incomplete");
    }
}
