//! Temporal facts: subject-predicate-object statements with validity
//! windows, where recording a new value closes the old one
//! ([`crate::facts`] holds the rules; the records are ordinary thoughts).

use super::replies::{FactClosedReply, FactConflictReply, FactConflictsReply, FactListReply, FactRecordedReply, FactReply};
use super::tools;
use crate::args::{read_args, ChainKey, Instant, Score};
use crate::chain::{NewThought, RelationInput};
use crate::db::MentisDb;
use crate::error::ToolError;
use crate::facts::{Fact, FactRecord, FACT_TAG, MAX_OBJECT_CHARS};
use crate::thought::{RelationKind, ThoughtType};
use crate::timestamp::format_rfc3339_millis;
use schemars::JsonSchema;

tools! {
    tool!("mentisdb_record_fact", "Record subject predicate object from valid_from (default now), closing the active fact of that subject and predicate.", RecordFactArgs => FactRecordedReply, record),
    tool!(read "mentisdb_query_facts", "Facts by subject and/or predicate: active, or holding at point_in_time.", QueryFactsArgs => FactListReply, query),
    tool!("mentisdb_close_fact", "End fact fact_id at valid_to (default now).", CloseFactArgs => FactClosedReply, close),
    tool!(read "mentisdb_fact_conflicts", "Active facts of one subject and predicate with different objects.", FactConflictsArgs => FactConflictsReply, conflicts),
}

/// The agent a fact is recorded as when the call names none.
const DEFAULT_RECORDER: &str = "mentisdb";

/// Arguments of `mentisdb_record_fact`.
#[derive(Debug, JsonSchema)]
pub(super) struct RecordFactArgs {
    pub chain_key: Option<ChainKey>,
    pub subject: String,
    pub predicate: String,
    pub object: String,
    /// 0..=1.
    pub confidence: Option<Score>,
    /// RFC 3339 or epoch ms; default now.
    pub valid_from: Option<Instant>,
    pub agent_id: Option<String>,
}
read_args!(RecordFactArgs { chain_key, subject, predicate, object, confidence, valid_from, agent_id });

/// Arguments of `mentisdb_query_facts`.
#[derive(Debug, JsonSchema)]
pub(super) struct QueryFactsArgs {
    pub chain_key: Option<ChainKey>,
    pub subject: Option<String>,
    pub predicate: Option<String>,
    pub point_in_time: Option<Instant>,
    /// Default true.
    pub active_only: Option<bool>,
}
read_args!(QueryFactsArgs { chain_key, subject, predicate, point_in_time, active_only });

/// Arguments of `mentisdb_close_fact`.
#[derive(Debug, JsonSchema)]
pub(super) struct CloseFactArgs {
    pub chain_key: Option<ChainKey>,
    pub fact_id: String,
    pub valid_to: Option<Instant>,
    pub agent_id: Option<String>,
}
read_args!(CloseFactArgs { chain_key, fact_id, valid_to, agent_id });

/// Arguments of `mentisdb_fact_conflicts`.
#[derive(Debug, JsonSchema)]
pub(super) struct FactConflictsArgs {
    pub chain_key: Option<ChainKey>,
    pub subject: Option<String>,
    pub predicate: Option<String>,
}
read_args!(FactConflictsArgs { chain_key, subject, predicate });

fn fact_reply(f: &Fact) -> FactReply {
    FactReply {
        fact_id: f.fact_id.clone(),
        subject: f.subject.clone(),
        predicate: f.predicate.clone(),
        object: f.object.clone(),
        confidence: f.confidence,
        valid_from: format_rfc3339_millis(f.valid_from_ms),
        valid_to: f.valid_to_ms.map(format_rfc3339_millis),
        recorded_by: f.recorded_by.clone(),
        thought_index: f.index,
    }
}

/// Subject and predicate: labels (not blank, no control characters, at
/// most 256 bytes, no secrets); the object: at most 4 KiB.
fn check_statement(tool: &str, subject: &str, predicate: &str, object: Option<&str>) -> Result<(), ToolError> {
    for (field, value) in [("subject", subject), ("predicate", predicate)] {
        crate::limits::check_key(field, value.trim()).map_err(|m| ToolError::invalid(tool, m))?;
        crate::redact::refuse_secret(field, value)?;
    }
    if let Some(object) = object {
        let chars = object.chars().count();
        if object.trim().is_empty() || chars > MAX_OBJECT_CHARS {
            return Err(ToolError::invalid(tool, format!("object must be 1 to {MAX_OBJECT_CHARS} characters and not blank, got {chars}")));
        }
        crate::redact::refuse_secret("object", object)?;
    }
    Ok(())
}

/// A fact thought for `record`, by `agent`. Its content must read back as
/// the same record and hold nothing redaction would rewrite (a secret-like
/// run across two fields, say): a record that did not would be stored as
/// text, retiring the facts it names without being one.
fn fact_thought(tool: &str, agent: &str, record: &FactRecord) -> Result<NewThought, ToolError> {
    let content = record.content();
    if let Some(found) = crate::redact::scan(&content).first() {
        return Err(ToolError::invalid(tool, format!("the fact reads like a secret ({}) and is not stored; state it without the credential", found.kind)));
    }
    if FactRecord::parse(&content).as_ref() != Some(record) {
        return Err(ToolError::invalid(tool, "the fact does not read back as written and is not stored"));
    }
    let mut input = NewThought::new(agent, ThoughtType::FactLearned, &content);
    input.tags = vec![FACT_TAG.to_string()];
    Ok(input)
}

fn recorder(tool: &str, agent_id: Option<String>) -> Result<String, ToolError> {
    let agent = agent_id.map(|a| a.trim().to_string()).filter(|a| !a.is_empty()).unwrap_or_else(|| DEFAULT_RECORDER.to_string());
    crate::limits::check_key("agent_id", &agent).map_err(|m| ToolError::invalid(tool, m))?;
    Ok(agent)
}

/// The fact thought `id` recorded, as the chain now holds it.
fn stored(db: &MentisDb, key: &str, id: &str) -> Result<Fact, ToolError> {
    db.with_chain(key, |c| c.and_then(|c| c.facts().get(id).cloned()))?.ok_or_else(|| ToolError::NotFound(format!("fact '{id}' is not in chain '{key}'")))
}

fn record(db: &MentisDb, a: RecordFactArgs) -> Result<FactRecordedReply, ToolError> {
    const TOOL: &str = "mentisdb_record_fact";
    check_statement(TOOL, &a.subject, &a.predicate, Some(&a.object))?;
    let agent = recorder(TOOL, a.agent_id)?;
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let valid_from_ms = a.valid_from.map_or_else(|| db.now_millis(), |i| i.0);
    let (subject, predicate) = (a.subject.trim().to_string(), a.predicate.trim().to_string());
    let closing: Vec<Fact> = db.with_chain(&key, |c| c.map(|c| c.facts().to_close(&subject, &predicate, valid_from_ms).into_iter().cloned().collect()).unwrap_or_default())?;
    if closing.len() > crate::limits::MAX_REFS {
        return Err(ToolError::invalid(TOOL, format!("{} active facts of this subject and predicate; close some with mentisdb_close_fact first", closing.len())));
    }
    let record = FactRecord::Record { subject, predicate, object: a.object, valid_from_ms, closes: closing.iter().map(|f| f.fact_id.clone()).collect() };
    let mut input = fact_thought(TOOL, &agent, &record)?;
    input.confidence = a.confidence.map(|c| c.0);
    // Ranked search retires what the fact replaces, once it holds: a
    // fact from the future leaves the current one findable until then.
    if valid_from_ms <= db.now_millis() {
        input.relations = closing.iter().map(|f| RelationInput { kind: RelationKind::Supersedes, target_id: Some(f.fact_id.clone()), target_index: None, chain_key: None }).collect();
    }
    let thought = db.append(&key, input)?;
    let fact = stored(db, &key, &thought.id.as_text())?;
    let closed = closing.iter().map(|f| stored(db, &key, &f.fact_id).map(|f| fact_reply(&f))).collect::<Result<_, _>>()?;
    Ok(FactRecordedReply { fact: fact_reply(&fact), closed })
}

fn query(db: &MentisDb, a: QueryFactsArgs) -> Result<FactListReply, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let at = a.point_in_time.map(|i| i.0);
    let facts = db.with_chain(&key, |c| {
        c.map(|c| c.facts().query(a.subject.as_deref(), a.predicate.as_deref(), at, a.active_only.unwrap_or(true)).into_iter().map(fact_reply).collect()).unwrap_or_default()
    })?;
    Ok(FactListReply { facts })
}

fn close(db: &MentisDb, a: CloseFactArgs) -> Result<FactClosedReply, ToolError> {
    const TOOL: &str = "mentisdb_close_fact";
    let agent = recorder(TOOL, a.agent_id)?;
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let fact = stored(db, &key, a.fact_id.trim())?;
    if fact.valid_to_ms.is_some() {
        return Ok(FactClosedReply { ok: false, reason: Some("already_closed".into()), fact: fact_reply(&fact) });
    }
    let valid_to_ms = a.valid_to.map_or_else(|| db.now_millis(), |i| i.0);
    if valid_to_ms < fact.valid_from_ms {
        return Err(ToolError::invalid(TOOL, format!("valid_to is before the fact's valid_from ({})", format_rfc3339_millis(fact.valid_from_ms))));
    }
    let record = FactRecord::Close { fact_id: fact.fact_id.clone(), valid_to_ms };
    let mut input = fact_thought(TOOL, &agent, &record)?;
    input.relations = vec![RelationInput { kind: RelationKind::Invalidates, target_id: Some(fact.fact_id.clone()), target_index: None, chain_key: None }];
    db.append(&key, input)?;
    Ok(FactClosedReply { ok: true, reason: None, fact: fact_reply(&stored(db, &key, &fact.fact_id)?) })
}

fn conflicts(db: &MentisDb, a: FactConflictsArgs) -> Result<FactConflictsReply, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let conflicts = db.with_chain(&key, |c| {
        c.map(|c| {
            c.facts()
                .conflicts(a.subject.as_deref(), a.predicate.as_deref())
                .into_iter()
                .map(|group| FactConflictReply { subject: group[0].subject.clone(), predicate: group[0].predicate.clone(), facts: group.into_iter().map(fact_reply).collect() })
                .collect()
        })
        .unwrap_or_default()
    })?;
    Ok(FactConflictsReply { conflicts })
}
