//! The thought model: what one memory is.

use crate::hex_bytes::{ContentSalt, ThoughtHash};
use crate::label::{Label, LabelList};
use crate::thought_id::ThoughtId;
use crate::named_enum::named_enum;
use crate::json_text::JsonOut;
use serde::{Deserialize, Serialize};

/// Schema version of new thoughts. Version 2 hashes a salted digest of the
/// erasable part (signature, content, tags, concepts) instead of that part
/// itself, so a thought can be forgotten without breaking the chain
/// (`canonical.rs`); version 1 thoughts stay readable and verifiable.
pub const THOUGHT_SCHEMA_VERSION: u8 = 2;

/// The first schema version: the chain hash covers the content directly.
pub const THOUGHT_SCHEMA_V1: u8 = 1;

/// Schema 2 plus an `entity_type` (MentisDB 0.10's optional label): used
/// only for a thought that has one, so every thought without one keeps its
/// schema-2 encoding and hash (`canonical.rs`).
pub const THOUGHT_SCHEMA_V3: u8 = 3;

/// The agent id of the engine's own claim records (`crate::claims`).
pub const COORDINATOR: &str = "mentisdb";
/// Tags that only the engine writes (claim records, fencing marks).
pub const RESERVED_TAG_PREFIX: &str = "mentisdb:";
/// The tag of every claim record.
pub const CLAIM_TAG: &str = "mentisdb:claim";

/// The schema version a new thought gets: 3 when it has an entity type, else 2.
pub fn schema_version_for(entity_type: Option<&str>) -> u8 {
    if entity_type.is_some() {
        THOUGHT_SCHEMA_V3
    } else {
        THOUGHT_SCHEMA_VERSION
    }
}

pub use crate::named_enum::UnknownName;

named_enum! {
    /// The semantic kind of a thought: the spec's 28 values, then the three
    /// MentisDB 0.10 added (`Reframe`, `Goal`, `LLMExtracted`). Parsed
    /// regardless of case and separators (`fact-learned`, `fact learned`,
    /// `fact_learned` are `FactLearned`); always written as the wire name.
    /// New values go at the end (stored chains hold the names, but the
    /// declaration order is what `code` numbers and filters use).
    pub enum ThoughtType("thought_type", Loose) {
        /// A user or agent preference was learned or changed.
        PreferenceUpdate = "PreferenceUpdate",
        /// A lasting trait of the user.
        UserTrait = "UserTrait",
        /// A change in how people, agents or things relate.
        RelationshipUpdate = "RelationshipUpdate",
        /// Something found out while working.
        Finding = "Finding",
        /// An understanding drawn from what is known.
        Insight = "Insight",
        /// A fact that was learned.
        FactLearned = "FactLearned",
        /// A recurring pattern noticed.
        PatternDetected = "PatternDetected",
        /// A guess still to be tested.
        Hypothesis = "Hypothesis",
        /// Something done wrong.
        Mistake = "Mistake",
        /// The fix of an earlier mistake or wrong belief.
        Correction = "Correction",
        /// An assumption that turned out false.
        AssumptionInvalidated = "AssumptionInvalidated",
        /// A limit the work must respect.
        Constraint = "Constraint",
        /// A plan of action.
        Plan = "Plan",
        /// One step of a larger goal.
        Subgoal = "Subgoal",
        /// A choice that was made.
        Decision = "Decision",
        /// A change of approach.
        StrategyShift = "StrategyShift",
        /// An open curiosity, not yet a question.
        Wonder = "Wonder",
        /// A question to be answered.
        Question = "Question",
        /// An idea worth keeping.
        Idea = "Idea",
        /// A trial run to test something.
        Experiment = "Experiment",
        /// An action that was carried out.
        ActionTaken = "ActionTaken",
        /// A task that was finished.
        TaskComplete = "TaskComplete",
        /// A point to resume from.
        Checkpoint = "Checkpoint",
        /// The state of the work at one moment.
        StateSnapshot = "StateSnapshot",
        /// Work passed on to another agent or session.
        Handoff = "Handoff",
        /// A summary of earlier thoughts.
        Summary = "Summary",
        /// Something that went against expectations.
        Surprise = "Surprise",
        /// A lesson to apply next time.
        LessonLearned = "LessonLearned",
        /// A prior thought seen in a more useful light, without denying it
        /// (MentisDB 0.10).
        Reframe = "Reframe",
        /// A high-level objective the work aims at: what, not how (MentisDB 0.10).
        Goal = "Goal",
        /// A memory produced by an LLM extraction pipeline (MentisDB 0.10).
        LLMExtracted = "LLMExtracted",
    }
}

named_enum! {
    /// The operational role of a thought (8 values), parsed regardless of
    /// case and separators (`working-memory` is `WorkingMemory`).
    pub enum ThoughtRole("role", Loose) {
        /// Long-term memory (the default role).
        Memory = "Memory",
        /// Short-lived scratch state of the current task.
        WorkingMemory = "WorkingMemory",
        /// Summarizes other thoughts.
        Summary = "Summary",
        /// A condensed form of several thoughts.
        Compression = "Compression",
        /// Marks a point to resume from.
        Checkpoint = "Checkpoint",
        /// Carries work over to another agent or session.
        Handoff = "Handoff",
        /// A record kept for review of what happened.
        Audit = "Audit",
        /// A look back at finished work.
        Retrospective = "Retrospective",
    }
}

named_enum! {
    /// The kind of a typed relation from one thought to another (12
    /// values), parsed regardless of case and separators (`caused_by` is `CausedBy`).
    pub enum RelationKind("relation kind", Loose) {
        /// Mentions the target.
        References = "References",
        /// Summarizes the target.
        Summarizes = "Summarizes",
        /// Corrects the target.
        Corrects = "Corrects",
        /// Makes the target no longer hold.
        Invalidates = "Invalidates",
        /// Was caused by the target.
        CausedBy = "CausedBy",
        /// Is evidence for the target.
        Supports = "Supports",
        /// Is at odds with the target.
        Contradicts = "Contradicts",
        /// Was derived from the target.
        DerivedFrom = "DerivedFrom",
        /// Continues the target.
        ContinuesFrom = "ContinuesFrom",
        /// Branches off from the target.
        BranchesFrom = "BranchesFrom",
        /// Is related to the target in some other way.
        RelatedTo = "RelatedTo",
        /// Replaces the target.
        Supersedes = "Supersedes",
    }
}

named_enum! {
    /// Who a thought is meant for (MentisDB 0.10's memory scope). Stored as
    /// one of the tags `scope:user`, `scope:session`, `scope:agent` (no
    /// schema change), which the `scope` filter looks for. Parsed regardless
    /// of case; the tag form `scope:user` is accepted too.
    pub enum MemoryScope("scope", Loose) {
        /// Every agent serving the same user.
        User = "user" (also "scope:user"),
        /// Only the session that wrote it.
        Session = "session" (also "scope:session"),
        /// Only the agent that wrote it.
        Agent = "agent" (also "scope:agent"),
    }
}

impl MemoryScope {
    /// The tag that marks a thought with this scope (`scope:user`, ...).
    pub fn as_tag(self) -> &'static str {
        match self {
            MemoryScope::User => "scope:user",
            MemoryScope::Session => "scope:session",
            MemoryScope::Agent => "scope:agent",
        }
    }
}

/// The canonical encoding's numeric code of each thought enum: its position
/// in `ALL`, which is the spec's order and never changes.
macro_rules! canonical_code {
    ($($name:ident),+) => {$(
        impl $name {
            /// Stable numeric code used by the canonical encoding (position in `ALL`:
            /// the variants carry no explicit discriminants, so it is the
            /// declaration order, which `codes_round_trip` checks).
            pub fn code(self) -> u8 {
                self as u8
            }

            /// Inverse of [`Self::code`].
            pub fn from_code(code: u8) -> Option<Self> {
                Self::ALL.get(code as usize).copied()
            }
        }
    )+};
}
canonical_code!(ThoughtType, ThoughtRole, RelationKind);

impl RelationKind {
    /// Relations that retire their target from default ranked retrieval.
    pub fn retires_target(self) -> bool {
        matches!(self, RelationKind::Supersedes | RelationKind::Invalidates | RelationKind::Corrects)
    }
}

/// A typed edge from a thought to an earlier thought (or to a thought in
/// another chain when `chain_key` is set).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ThoughtRelation {
    /// What the relation means.
    #[schemars(with = "String")]
    pub kind: RelationKind,
    /// The target thought's id.
    pub target_id: String,
    /// The target's index when it lives in the same chain.
    #[serde(default)]
    pub target_index: Option<u64>,
    /// The target's chain when it is not this chain.
    #[serde(default)]
    pub chain_key: Option<String>,
    /// When the relation became valid: its thought's append time, as
    /// MentisDB 0.10 reports it. Derived from the thought's `timestamp`
    /// whenever a thought is made or read ([`Thought::stamp_relations`]);
    /// never stored on its own, not hashed, not signed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_at: Option<String>,
}

/// `prev_hash` as MentisDB sends it: `""` for the genesis thought.
mod prev_hash_wire {
    use crate::hex_bytes::ThoughtHash;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn serialize<S: Serializer>(v: &Option<ThoughtHash>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(h) => h.serialize(s),
            None => s.serialize_str(""),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ThoughtHash>, D::Error> {
        match Option::<String>::deserialize(d)?.filter(|h| !h.is_empty()) {
            Some(h) => ThoughtHash::parse(&h).map(Some).map_err(serde::de::Error::custom),
            None => Ok(None),
        }
    }
}

/// One committed thought: the unit of memory.
///
/// Serialized exactly as the tools return it (the "full stored thought
/// object": [`ThoughtWire`] names and documents every field). In memory the
/// fields most thoughts leave unset sit behind one pointer
/// ([`ThoughtExtras`], read through accessors such as [`Thought::refs`]):
/// a chain holds every thought, and inline they made each 136 bytes larger.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(from = "ThoughtWire")]
pub struct Thought {
    /// Schema version of this record ([`THOUGHT_SCHEMA_VERSION`]).
    pub schema_version: u8,
    /// How its timestamp text gives the fraction of a second when that is
    /// UTC with other than three digits (a chain written by MentisDB 0.9 or
    /// 0.10: nanoseconds); the default for the canonical form. Set it with
    /// the timestamp ([`Thought::set_timestamp`]).
    pub timestamp_fraction: crate::timestamp::TimestampFraction,
    /// Stable id (a UUID unless the writer chose another: `thought_id`).
    pub id: ThoughtId,
    /// Position in the chain, from 0.
    pub index: u64,
    /// When it was appended, in epoch milliseconds (UTC): its wire
    /// `timestamp` is [`Thought::timestamp`], made from this unless the
    /// chain stored another text ([`ThoughtExtras::timestamp_text`], which
    /// then wins). Set the two together with [`Thought::set_timestamp`] or
    /// [`Thought::set_timestamp_ms`].
    pub timestamp_ms: i64,
    /// Producer id.
    pub agent_id: Label,
    /// Producer display name at append time.
    pub agent_name: Label,
    /// Semantic type.
    pub thought_type: ThoughtType,
    /// Operational role.
    pub role: ThoughtRole,
    /// The memory itself.
    pub content: Box<str>,
    /// Importance in `0.0..=1.0`.
    pub importance: f64,
    /// Free-form tags.
    pub tags: LabelList,
    /// Free-form concepts.
    pub concepts: LabelList,
    /// The fields few thoughts set: `None` when all are unset (what
    /// [`ThoughtExtras::boxed`] makes; equality compares this too).
    pub extras: Option<Box<ThoughtExtras>>,
    /// MentisDB 0.10's `source_episode` (always `null` here: see [`NoEpisode`]).
    pub source_episode: NoEpisode,
    /// Hash of the previous thought (`None` for genesis).
    pub prev_hash: Option<ThoughtHash>,
    /// SHA-256 of the canonical encoding.
    pub hash: ThoughtHash,
    /// Schema 2: 16 random bytes mixed into the digest of the erasable part
    /// (see [`ThoughtWire::content_salt`]).
    pub content_salt: Option<ContentSalt>,
}

/// The fields of a [`Thought`] most thoughts leave unset ([`ThoughtWire`]
/// documents each as the wire carries it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThoughtExtras {
    /// Optional session the thought belongs to.
    pub session_id: Option<Box<str>>,
    /// Producer owner / tenant label.
    pub agent_owner: Option<Box<str>>,
    /// Id of the registered key that signed this thought.
    pub signing_key_id: Option<Box<str>>,
    /// Detached Ed25519 signature over the signable payload.
    pub thought_signature: Option<Box<[u8]>>,
    /// Confidence in `0.0..=1.0`, when given.
    pub confidence: Option<f64>,
    /// Indices of earlier thoughts in the same chain.
    pub refs: Vec<u64>,
    /// Typed relations.
    pub relations: Vec<ThoughtRelation>,
    /// What kind of entity the thought is about (schema 3 only).
    pub entity_type: Option<Box<str>>,
    /// The `timestamp` as stored, when it is not the text this engine
    /// writes for `timestamp_ms` (`2026-11-22T09:30:00.000Z`, see
    /// [`crate::timestamp::CanonicalText`]): chains imported from other
    /// writers, other offsets or precisions. A text that is no RFC 3339 at
    /// all is kept too (with `timestamp_ms` 0), for verification to refuse.
    pub timestamp_text: Option<Box<str>>,
    /// Set when the thought was forgotten (see [`ThoughtWire::forgotten`]).
    pub forgotten: Option<Box<Forgotten>>,
}

impl Thought {
    /// Makes each of the thought's labels (agent id and name, tags,
    /// concepts) the one `set` keeps for its text.
    pub(crate) fn share_labels(&mut self, set: &mut crate::label::LabelSet) {
        set.share(&mut self.agent_id);
        set.share(&mut self.agent_name);
        set.share_list(&mut self.tags);
        set.share_list(&mut self.concepts);
    }
}

impl ThoughtExtras {
    /// Boxed, or `None` when every field is unset.
    pub fn boxed(self) -> Option<Box<ThoughtExtras>> {
        (self != ThoughtExtras::default()).then(|| Box::new(self))
    }
}

/// A thought as the wire carries it: the JSON object every tool returns
/// and every JSONL record holds, field by field in this order. [`Thought`]
/// reads from it and writes through [`ThoughtWireRef`], its borrowed twin
/// (the two must list the same fields in the same order, which
/// `the_wire_form_round_trips` checks).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "Thought")]
pub struct ThoughtWire {
    /// Schema version of this record ([`THOUGHT_SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// Stable UUID.
    pub id: ThoughtId,
    /// Position in the chain, from 0.
    pub index: u64,
    /// RFC 3339 UTC timestamp with millisecond precision, assigned at append.
    pub timestamp: String,
    /// Optional session the thought belongs to.
    pub session_id: Option<Box<str>>,
    /// Producer id.
    pub agent_id: Label,
    /// Producer display name at append time.
    pub agent_name: Label,
    /// Producer owner / tenant label.
    pub agent_owner: Option<Box<str>>,
    /// Id of the registered key that signed this thought.
    pub signing_key_id: Option<Box<str>>,
    /// Detached Ed25519 signature over the signable payload.
    pub thought_signature: Option<Box<[u8]>>,
    /// Semantic type.
    #[schemars(with = "String")]
    pub thought_type: ThoughtType,
    /// Operational role.
    #[schemars(with = "String")]
    pub role: ThoughtRole,
    /// The memory itself.
    pub content: String,
    /// Confidence in `0.0..=1.0`, when given.
    pub confidence: Option<f64>,
    /// Importance in `0.0..=1.0`.
    pub importance: f64,
    /// Free-form tags.
    pub tags: LabelList,
    /// Free-form concepts.
    pub concepts: LabelList,
    /// Indices of earlier thoughts in the same chain.
    pub refs: Vec<u64>,
    /// Typed relations.
    pub relations: Vec<ThoughtRelation>,
    /// What kind of entity the thought is about (a free label such as
    /// `person` or `service`; MentisDB 0.10). Set only on schema 3, which
    /// covers it by the hash; `null` in the JSON when unset (as 0.10 sends it).
    #[serde(default)]
    pub entity_type: Option<Box<str>>,
    /// MentisDB 0.10's `source_episode` (always `null` here: see [`NoEpisode`]).
    #[serde(default)]
    pub source_episode: NoEpisode,
    /// Hash of the previous thought (`None` for genesis), lowercase hex on the wire.
    /// On the wire a genesis thought's is `""`, as MentisDB 0.9 and 0.10
    /// send it; `null` and `""` both read back as `None`.
    #[serde(with = "prev_hash_wire")]
    #[schemars(with = "String")]
    pub prev_hash: Option<ThoughtHash>,
    /// SHA-256 of the canonical encoding (lowercase hex on the wire).
    pub hash: ThoughtHash,
    /// Schema 2: 16 random bytes (lowercase hex on the wire) mixed into the digest of
    /// the erasable part, so a forgotten thought's digest confirms no guess
    /// of its content. Absent on schema 1 and on forgotten thoughts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_salt: Option<ContentSalt>,
    /// Set when the thought was forgotten: its signature, content, tags and
    /// concepts are gone (empty) and only their digest remains.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forgotten: Option<Box<Forgotten>>,
}

/// [`ThoughtWire`] borrowed from a [`Thought`]: how a thought is written.
#[derive(Serialize)]
struct ThoughtWireRef<'a> {
    schema_version: u32,
    id: &'a str,
    index: u64,
    timestamp: &'a str,
    session_id: Option<&'a str>,
    agent_id: &'a str,
    agent_name: &'a str,
    agent_owner: Option<&'a str>,
    signing_key_id: Option<&'a str>,
    thought_signature: Option<&'a [u8]>,
    thought_type: ThoughtType,
    role: ThoughtRole,
    content: &'a str,
    confidence: Option<f64>,
    importance: f64,
    tags: &'a [Label],
    concepts: &'a [Label],
    refs: &'a [u64],
    relations: &'a [ThoughtRelation],
    entity_type: Option<&'a str>,
    source_episode: NoEpisode,
    #[serde(serialize_with = "prev_hash_wire::serialize")]
    prev_hash: &'a Option<ThoughtHash>,
    hash: &'a ThoughtHash,
    #[serde(skip_serializing_if = "Option::is_none")]
    content_salt: Option<&'a ContentSalt>,
    #[serde(skip_serializing_if = "Option::is_none")]
    forgotten: Option<&'a Forgotten>,
}

impl Serialize for Thought {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ThoughtWireRef {
            schema_version: u32::from(self.schema_version),
            id: &self.id.as_text(),
            index: self.index,
            timestamp: &self.timestamp(),
            session_id: self.session_id(),
            agent_id: &self.agent_id,
            agent_name: &self.agent_name,
            agent_owner: self.agent_owner(),
            signing_key_id: self.signing_key_id(),
            thought_signature: self.thought_signature(),
            thought_type: self.thought_type,
            role: self.role,
            content: &self.content,
            confidence: self.confidence(),
            importance: self.importance,
            tags: &self.tags,
            concepts: &self.concepts,
            refs: self.refs(),
            relations: self.relations(),
            entity_type: self.entity_type(),
            source_episode: self.source_episode,
            prev_hash: &self.prev_hash,
            hash: &self.hash,
            content_salt: self.content_salt.as_ref(),
            forgotten: self.forgotten(),
        }
        .serialize(s)
    }
}

impl Thought {
    /// Writes the thought as its `Serialize` impl above does through
    /// serde_json, byte for byte, faster (`json_text.rs`; the two are held
    /// equal by `thought::tests::the_hand_writer_writes_what_serde_writes`).
    /// A new field goes in both, in [`ThoughtWireRef`]'s order.
    pub(crate) fn write_json(&self, out: &mut JsonOut) {
        // Destructured without `..`: a new field of `Thought` stops the build here.
        #[rustfmt::skip]
        let Thought { schema_version: _, timestamp_fraction: _, id: _, index: _, timestamp_ms: _, agent_id: _, agent_name: _, thought_type: _, role: _,
            content: _, importance: _, tags: _, concepts: _, extras: _, source_episode: _, prev_hash: _, hash: _, content_salt: _ } = self;
        out.raw("{\"schema_version\":").u64(u64::from(self.schema_version));
        out.raw(",\"id\":").str(&self.id.as_text());
        out.raw(",\"index\":").u64(self.index);
        out.raw(",\"timestamp\":").str(&self.timestamp());
        out.raw(",\"session_id\":").opt_str(self.session_id());
        out.raw(",\"agent_id\":").str(&self.agent_id);
        out.raw(",\"agent_name\":").str(&self.agent_name);
        out.raw(",\"agent_owner\":").opt_str(self.agent_owner());
        out.raw(",\"signing_key_id\":").opt_str(self.signing_key_id());
        out.raw(",\"thought_signature\":");
        match self.thought_signature() {
            Some(signature) => out.serde(signature),
            None => out.raw("null"),
        };
        out.raw(",\"thought_type\":").plain_str(self.thought_type.as_str());
        out.raw(",\"role\":").plain_str(self.role.as_str());
        out.raw(",\"content\":").str(&self.content);
        out.raw(",\"confidence\":");
        match self.confidence() {
            Some(c) => out.f64(c),
            None => out.raw("null"),
        };
        out.raw(",\"importance\":").f64(self.importance);
        out.raw(",\"tags\":").str_array(self.tags.iter().map(|l| l.as_str()));
        out.raw(",\"concepts\":").str_array(self.concepts.iter().map(|l| l.as_str()));
        out.raw(",\"refs\":[");
        for (i, r) in self.refs().iter().enumerate() {
            if i > 0 {
                out.raw(",");
            }
            out.u64(*r);
        }
        out.raw("],\"relations\":");
        match self.relations() {
            [] => out.raw("[]"),
            relations => out.serde(relations),
        };
        out.raw(",\"entity_type\":").opt_str(self.entity_type());
        out.raw(",\"source_episode\":null,\"prev_hash\":");
        let mut hex = [0u8; 64];
        match &self.prev_hash {
            Some(h) => out.plain_str(h.hex_in(&mut hex)),
            None => out.raw("\"\""),
        };
        out.raw(",\"hash\":").plain_str(self.hash.hex_in(&mut hex));
        if let Some(salt) = &self.content_salt {
            out.raw(",\"content_salt\":").plain_str(salt.hex_in(&mut hex));
        }
        if let Some(forgotten) = self.forgotten() {
            out.raw(",\"forgotten\":").serde(forgotten);
        }
        out.raw("}");
    }
}

impl From<ThoughtWire> for Thought {
    fn from(w: ThoughtWire) -> Thought {
        let extras = ThoughtExtras {
            session_id: w.session_id,
            agent_owner: w.agent_owner,
            signing_key_id: w.signing_key_id,
            thought_signature: w.thought_signature,
            confidence: w.confidence,
            refs: w.refs,
            relations: w.relations,
            entity_type: w.entity_type,
            timestamp_text: None,
            forgotten: w.forgotten,
        };
        let mut thought = Thought {
            // No version past 255 exists; verification refuses this one.
            schema_version: u8::try_from(w.schema_version).unwrap_or(u8::MAX),
            timestamp_fraction: Default::default(),
            id: w.id,
            index: w.index,
            timestamp_ms: 0,
            agent_id: w.agent_id,
            agent_name: w.agent_name,
            thought_type: w.thought_type,
            role: w.role,
            content: w.content.into(),
            importance: w.importance,
            tags: w.tags,
            concepts: w.concepts,
            extras: extras.boxed(),
            source_episode: w.source_episode,
            prev_hash: w.prev_hash,
            hash: w.hash,
            content_salt: w.content_salt,
        };
        thought.set_timestamp(&w.timestamp);
        thought
    }
}

impl schemars::JsonSchema for Thought {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        ThoughtWire::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        ThoughtWire::json_schema(generator)
    }
}

/// The fields of a [`Thought`] its chain assigns (position, time, hashes,
/// schema, salt) or derives when it is read, never its writer: what
/// [`Thought::as_written`] leaves out. A field added to `Thought` that the
/// chain sets belongs here; left out, a replay compares it and a sync push
/// sends it (one the chain sets anew each time makes every replay a
/// conflict, which `core/tests/integration/idempotent_writes.rs` catches).
pub(crate) const ASSIGNED_BY_CHAIN: [&str; 9] = ["schema_version", "id", "index", "timestamp", "prev_hash", "hash", "content_salt", "forgotten", "source_episode"];

/// MentisDB 0.10's `source_episode` label of a thought. This engine has no
/// way to set one, and neither have 0.10.10's REST and MCP (only its Rust
/// library does), so every thought carries it as `null`, as 0.10.10's
/// servers send it. A stored JSONL record that names an episode is refused
/// when read: the field is not covered by the hash, so a value could only
/// be an edit of the file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoEpisode;

impl Serialize for NoEpisode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_none()
    }
}

impl<'de> Deserialize<'de> for NoEpisode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Option::<String>::deserialize(d)? {
            None => Ok(NoEpisode),
            Some(_) => Err(serde::de::Error::custom("source_episode must be null: this engine stores no episodes")),
        }
    }
}

impl schemars::JsonSchema for NoEpisode {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NoEpisode".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "null", "description": "Always null (MentisDB 0.10's episode label; not stored here)." })
    }

    fn inline_schema() -> bool {
        true
    }
}

/// What is left of a forgotten thought's erasable part, and who forgot it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Forgotten {
    /// SHA-256 (lowercase hex) of the salted erasable part that was removed:
    /// what the chain hash covers in its place.
    pub content_digest: String,
    /// When it was forgotten (RFC 3339 UTC, milliseconds).
    pub forgotten_at: String,
    /// Who forgot it: the authenticated caller, else the `agent_id` the
    /// request named. Not covered by the chain hash (it is written after).
    pub forgotten_by: String,
    /// Why, as the request said.
    pub reason: String,
}

impl Thought {
    /// [`ThoughtWire::session_id`].
    pub fn session_id(&self) -> Option<&str> {
        self.extras.as_ref().and_then(|e| e.session_id.as_deref())
    }

    /// [`ThoughtWire::agent_owner`].
    pub fn agent_owner(&self) -> Option<&str> {
        self.extras.as_ref().and_then(|e| e.agent_owner.as_deref())
    }

    /// [`ThoughtWire::signing_key_id`].
    pub fn signing_key_id(&self) -> Option<&str> {
        self.extras.as_ref().and_then(|e| e.signing_key_id.as_deref())
    }

    /// [`ThoughtWire::thought_signature`].
    pub fn thought_signature(&self) -> Option<&[u8]> {
        self.extras.as_ref().and_then(|e| e.thought_signature.as_deref())
    }

    /// [`ThoughtWire::confidence`].
    pub fn confidence(&self) -> Option<f64> {
        self.extras.as_ref().and_then(|e| e.confidence)
    }

    /// [`ThoughtWire::refs`].
    pub fn refs(&self) -> &[u64] {
        self.extras.as_ref().map_or(&[], |e| &e.refs)
    }

    /// [`ThoughtWire::relations`].
    pub fn relations(&self) -> &[ThoughtRelation] {
        self.extras.as_ref().map_or(&[], |e| &e.relations)
    }

    /// [`ThoughtWire::entity_type`].
    pub fn entity_type(&self) -> Option<&str> {
        self.extras.as_ref().and_then(|e| e.entity_type.as_deref())
    }

    /// The rarely set fields, for changing (made when there are none; use
    /// [`Thought::with_extras`] to drop them again when all end up unset).
    pub fn extras_mut(&mut self) -> &mut ThoughtExtras {
        self.extras.get_or_insert_with(Box::default)
    }

    /// This thought with its rarely set fields changed by `change` (kept
    /// only when one is set).
    pub fn with_extras(mut self, change: impl FnOnce(&mut ThoughtExtras)) -> Thought {
        let mut extras = self.extras.take().map(|e| *e).unwrap_or_default();
        change(&mut extras);
        self.extras = extras.boxed();
        self
    }

    /// Sets every relation's `valid_at` to this thought's timestamp (the
    /// derived field MentisDB 0.10 reports; see [`ThoughtRelation::valid_at`]).
    pub fn stamp_relations(&mut self) {
        if self.relations().is_empty() {
            return;
        }
        let timestamp = self.timestamp().to_string();
        if let Some(extras) = &mut self.extras {
            for r in &mut extras.relations {
                r.valid_at = Some(timestamp.clone());
            }
        }
    }

    /// Whether the thought is one of the engine's claim records (its
    /// agent is [`COORDINATOR`] and it carries [`CLAIM_TAG`]): bookkeeping
    /// of leases that ranked search and recent context leave out.
    pub fn is_claim_record(&self) -> bool {
        self.agent_id == COORDINATOR && self.tags.iter().any(|t| t == CLAIM_TAG)
    }

    /// Whether the thought's erasable part was forgotten.
    pub fn is_forgotten(&self) -> bool {
        self.forgotten().is_some()
    }

    /// [`ThoughtWire::forgotten`].
    pub fn forgotten(&self) -> Option<&Forgotten> {
        self.extras.as_ref().and_then(|e| e.forgotten.as_deref())
    }

    /// This thought marked forgotten with `forgotten` (its erasable part is
    /// the caller's to clear).
    pub fn with_forgotten(self, forgotten: Forgotten) -> Thought {
        self.with_extras(|e| e.forgotten = Some(Box::new(forgotten)))
    }

    /// The thought as its writer asked for it: its JSON object less the
    /// fields the chain assigns or derives ([`ASSIGNED_BY_CHAIN`], and each
    /// relation's `valid_at`). A replay compares this (`chain/replay.rs`)
    /// and a sync push sends it (`sync/push.rs`), so a field added to
    /// `Thought` is compared and sent with no change there.
    pub(crate) fn as_written(&self) -> serde_json::Map<String, serde_json::Value> {
        let serde_json::Value::Object(mut fields) = serde_json::to_value(self).expect("a thought serializes") else {
            unreachable!("a thought serializes as an object")
        };
        for name in ASSIGNED_BY_CHAIN {
            fields.remove(name);
        }
        if let Some(serde_json::Value::Array(relations)) = fields.get_mut("relations") {
            for r in relations.iter_mut().filter_map(serde_json::Value::as_object_mut) {
                r.remove("valid_at");
            }
        }
        fields
    }

    /// Milliseconds since the epoch of [`Thought::timestamp`]
    /// ([`Thought::timestamp_ms`]; 0 if its text is no RFC 3339, which no
    /// thought of a served chain has: it is checked at open and at append).
    pub fn timestamp_millis(&self) -> i64 {
        self.timestamp_ms
    }

    /// [`Thought::timestamp_ms`], unless the thought keeps a text that is
    /// no RFC 3339, or keeps none and its milliseconds have no canonical
    /// text (years 0 to 9999; only set by hand): `None`, and verification
    /// refuses such a thought.
    pub fn parsed_timestamp_ms(&self) -> Option<i64> {
        match self.extras.as_ref().and_then(|e| e.timestamp_text.as_deref()) {
            Some(text) => crate::timestamp::parse_rfc3339_millis(text).ok(),
            None if self.timestamp_fraction != Default::default() => self.timestamp_fraction.text(self.timestamp_ms).map(|_| self.timestamp_ms),
            None => crate::timestamp::CanonicalText::of(self.timestamp_ms).map(|_| self.timestamp_ms),
        }
    }

    /// The RFC 3339 timestamp, as the wire carries it: made from
    /// `timestamp_ms`, or the text it was stored with when that was not
    /// the canonical form ([`ThoughtExtras::timestamp_text`]).
    pub fn timestamp(&self) -> crate::timestamp::Rfc3339<'_> {
        crate::timestamp::format_rfc3339_text(self.timestamp_ms, self.timestamp_fraction, self.extras.as_ref().and_then(|e| e.timestamp_text.as_deref()))
    }

    /// Sets the timestamp from its RFC 3339 text: as milliseconds alone
    /// when the text is the canonical form, else the text is kept too (a
    /// text that does not parse leaves `timestamp_ms` 0).
    pub fn set_timestamp(&mut self, text: &str) {
        let (millis, fraction, kept) = crate::timestamp::timestamp_parts(text);
        self.timestamp_ms = millis;
        self.timestamp_fraction = fraction;
        self.keep_timestamp_text(kept);
    }

    /// Sets the timestamp to `millis` (its text then made from them).
    pub fn set_timestamp_ms(&mut self, millis: i64) {
        self.timestamp_ms = millis;
        self.timestamp_fraction = Default::default();
        // Years past 9999 have no canonical text: keep what chrono writes.
        let text = crate::timestamp::CanonicalText::of(millis).is_none().then(|| crate::timestamp::format_rfc3339_millis(millis).into_boxed_str());
        self.keep_timestamp_text(text);
    }

    fn keep_timestamp_text(&mut self, text: Option<Box<str>>) {
        if text.is_some() || self.extras.as_ref().is_some_and(|e| e.timestamp_text.is_some()) {
            let mut extras = self.extras.take().map(|e| *e).unwrap_or_default();
            extras.timestamp_text = text;
            self.extras = extras.boxed();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_counts() {
        assert_eq!(ThoughtType::ALL.len(), 31);
        assert_eq!(ThoughtRole::ALL.len(), 8);
        assert_eq!(RelationKind::ALL.len(), 12);
    }

    #[test]
    fn unknown_names_list_accepted_values() {
        let err = "Insigth".parse::<ThoughtType>().unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("unknown thought_type 'Insigth'; expected one of: PreferenceUpdate, UserTrait"), "{msg}");
        assert!(msg.contains("LessonLearned"));
        let err = "Boss".parse::<ThoughtRole>().unwrap_err().to_string();
        assert!(err.contains("Retrospective"), "{err}");
    }

    #[test]
    fn names_parse_regardless_of_case_and_separators() {
        for input in ["FactLearned", "fact-learned", "fact learned", "fact_learned", "FACTLEARNED"] {
            assert_eq!(input.parse::<ThoughtType>().unwrap(), ThoughtType::FactLearned, "{input}");
        }
        assert_eq!("llm-extracted".parse::<ThoughtType>().unwrap(), ThoughtType::LLMExtracted);
        assert_eq!("goal".parse::<ThoughtType>().unwrap(), ThoughtType::Goal);
        assert_eq!("working_memory".parse::<ThoughtRole>().unwrap(), ThoughtRole::WorkingMemory);
        assert_eq!("caused by".parse::<RelationKind>().unwrap(), RelationKind::CausedBy);
        // Serialized names stay the wire names.
        assert_eq!(serde_json::to_value(ThoughtType::LLMExtracted).unwrap(), "LLMExtracted");
        assert_eq!(serde_json::from_value::<ThoughtType>(serde_json::json!("lesson learned")).unwrap(), ThoughtType::LessonLearned);
        let every = "nonsense".parse::<ThoughtType>().unwrap_err().to_string();
        for t in ThoughtType::ALL {
            assert!(every.contains(t.as_str()), "{every} lacks {t}");
        }
        let every = "nonsense".parse::<RelationKind>().unwrap_err().to_string();
        assert!(RelationKind::ALL.iter().all(|k| every.contains(k.as_str())), "{every}");
    }

    /// A thought with every field set, and one with none of the rare ones.
    fn full_and_plain() -> (Thought, Thought) {
        let json = serde_json::json!({
            "schema_version": 3, "id": "t-1", "index": 4, "timestamp": "2026-11-28T10:00:00.000Z",
            "session_id": "s", "agent_id": "ada", "agent_name": "Ada", "agent_owner": "ops",
            "signing_key_id": "k", "thought_signature": [1, 2, 255], "thought_type": "Decision", "role": "Memory",
            "content": "c", "confidence": 0.25, "importance": 0.5, "tags": ["t"], "concepts": ["x"], "refs": [1, 3],
            "relations": [{"kind": "Supports", "target_id": "t-0", "target_index": 0, "chain_key": null, "valid_at": "2026-11-28T10:00:00.000Z"}],
            "entity_type": "service", "source_episode": null, "prev_hash": "ab".repeat(32), "hash": "cd".repeat(32),
            "content_salt": "ef".repeat(16),
            "forgotten": {"content_digest": "d", "forgotten_at": "2026-11-28T11:00:00.000Z", "forgotten_by": "ops", "reason": "r"}
        });
        let full: Thought = serde_json::from_value(json).unwrap();
        let plain = Thought { extras: None, schema_version: 2, ..full.clone() };
        (full, plain)
    }

    #[test]
    fn the_wire_form_round_trips() {
        let (full, plain) = full_and_plain();
        // Forgotten, with no other rare field set: the marker alone keeps the extras.
        let forgotten_only = plain.clone().with_forgotten(full.forgotten().unwrap().clone());
        assert!(forgotten_only.is_forgotten() && forgotten_only.refs().is_empty());
        for t in [full, plain, forgotten_only] {
            let written = serde_json::to_string(&t).unwrap();
            // The borrowed twin writes what the wire struct writes, field for field.
            let wire: ThoughtWire = serde_json::from_str(&written).unwrap();
            assert_eq!(serde_json::to_string(&wire).unwrap(), written);
            assert_eq!(serde_json::from_str::<Thought>(&written).unwrap(), t);
        }
    }

    #[test]
    fn the_hand_writer_writes_what_serde_writes() {
        let (full, plain) = full_and_plain();
        let forgotten_only = plain.clone().with_forgotten(full.forgotten().unwrap().clone());
        let mut odd = plain.clone();
        odd.content = "line 1\nline \"2\"\t\\ \u{1} é 日本 \u{7f}".into();
        odd.id = ThoughtId::new("0b9c6a8e-1f2d-4c3b-9a8e-7f6d5c4b3a21");
        odd.set_timestamp("2026-03-01T12:34:56.123456789Z");
        odd.tags = vec![Label::from("a\"b"), Label::from("")].into();
        odd.importance = 0.1 + 0.2;
        let mut genesis = plain.clone();
        genesis.prev_hash = None;
        genesis.content_salt = None;
        genesis.set_timestamp("2026-11-28T10:00:00+02:00");
        for t in [full, plain, forgotten_only, odd, genesis] {
            let mut out = JsonOut::default();
            t.write_json(&mut out);
            assert_eq!(out.finish().into_string(), serde_json::to_string(&t).unwrap());
        }
    }

    proptest::proptest! {
        /// Any text in any field, any number: the hand writer still writes serde's bytes.
        #[test]
        fn the_hand_writer_writes_what_serde_writes_for_any_thought(
            content in proptest::prelude::any::<String>(),
            agent in "\\PC{0,12}",
            tags in proptest::collection::vec(proptest::prelude::any::<String>(), 0..4),
            session in proptest::option::of("[ -~]{0,10}"),
            id in proptest::prop_oneof!["[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", "\\PC{0,20}"],
            importance in proptest::prelude::any::<f64>(),
            confidence in proptest::option::of(proptest::prelude::any::<f64>()),
            refs in proptest::collection::vec(proptest::prelude::any::<u64>(), 0..3),
            plain in proptest::prelude::any::<bool>(),
        ) {
            let (full, bare) = full_and_plain();
            let mut t = if plain { bare } else { full };
            t.content = content.into();
            t.agent_id = Label::from(agent.as_str());
            t.tags = tags.iter().map(|s| Label::from(s.as_str())).collect();
            t.id = ThoughtId::new(&id);
            t.importance = importance;
            if !plain {
                t = t.with_extras(|e| {
                    e.session_id = session.map(Into::into);
                    e.confidence = confidence;
                    e.refs = refs;
                });
            }
            let mut out = JsonOut::default();
            t.write_json(&mut out);
            proptest::prop_assert_eq!(out.finish().into_string(), serde_json::to_string(&t).unwrap());
        }
    }

    #[test]
    fn only_a_thought_with_a_rare_field_set_holds_them() {
        let (full, plain) = full_and_plain();
        assert_eq!((full.refs(), full.session_id(), full.confidence(), full.thought_signature()), (&[1, 3][..], Some("s"), Some(0.25), Some(&[1u8, 2, 255][..])));
        let read: Thought = serde_json::from_str(&serde_json::to_string(&plain).unwrap()).unwrap();
        assert!(read.extras.is_none(), "unset rare fields made an allocation");
        assert_eq!(plain.clone().with_extras(|e| e.refs.push(0)).refs(), &[0]);
        assert!(full.with_extras(|e| *e = ThoughtExtras::default()).extras.is_none());
    }

    #[test]
    fn nanosecond_timestamps_are_kept_inline_and_the_struct_stays_192_bytes() {
        // MentisDB 0.9/0.10 wrote nanoseconds: kept as a fraction beside
        // the milliseconds, with no `ThoughtExtras` allocated for them.
        let (_, mut t) = full_and_plain();
        t.set_timestamp("2026-03-01T12:34:56.123456789Z");
        assert!(t.extras.is_none(), "no extras for a nanosecond text");
        assert_eq!((&*t.timestamp(), t.parsed_timestamp_ms()), ("2026-03-01T12:34:56.123456789Z", crate::timestamp::parse_rfc3339_millis("2026-03-01T12:34:56.123Z").ok()));
        t.set_timestamp_ms(1_795_860_000_001);
        assert_eq!(&*t.timestamp(), "2026-11-28T10:00:00.001Z", "setting milliseconds drops the fraction");
        #[cfg(target_pointer_width = "64")]
        assert_eq!(std::mem::size_of::<Thought>(), 192, "a chain holds every thought: mind its size");
    }

    #[test]
    fn a_canonical_timestamp_is_kept_as_millis_and_any_other_as_written() {
        let (mut full, plain) = full_and_plain();
        assert_eq!((plain.timestamp_ms, plain.timestamp().to_string()), (1_795_860_000_000, "2026-11-28T10:00:00.000Z".to_string()));
        assert!(plain.extras.is_none(), "the canonical text needs nothing beside the millis");
        // Another precision or offset (MentisDB 0.9 wrote nanoseconds) is
        // written back as stored: the hash covers the text.
        for other in ["2026-11-28T10:00:00.000000123Z", "2026-11-28T11:00:00.000+01:00", "2026-11-28T10:00:00Z"] {
            full.set_timestamp(other);
            assert_eq!((full.timestamp_ms, &*full.timestamp()), (1_795_860_000_000, other));
            let again: Thought = serde_json::from_str(&serde_json::to_string(&full).unwrap()).unwrap();
            assert_eq!(again, full);
        }
        full.set_timestamp("yesterday");
        assert_eq!((full.timestamp_ms, full.parsed_timestamp_ms(), &*full.timestamp()), (0, None, "yesterday"));
        full.set_timestamp_ms(1_795_860_000_001);
        assert_eq!((full.parsed_timestamp_ms(), &*full.timestamp()), (Some(1_795_860_000_001), "2026-11-28T10:00:00.001Z"));
        assert!(full.extras.as_ref().is_some_and(|e| e.timestamp_text.is_none()));
    }

    #[test]
    fn codes_round_trip() {
        for t in ThoughtType::ALL {
            assert_eq!(ThoughtType::from_code(t.code()), Some(*t));
            assert_eq!(t.as_str().parse::<ThoughtType>().unwrap(), *t);
        }
        for r in ThoughtRole::ALL {
            assert_eq!(ThoughtRole::from_code(r.code()), Some(*r));
        }
        for k in RelationKind::ALL {
            assert_eq!(RelationKind::from_code(k.code()), Some(*k));
        }
    }
}
