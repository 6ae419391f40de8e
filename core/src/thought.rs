//! The thought model: what one memory is.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Current schema version of stored thoughts.
pub const THOUGHT_SCHEMA_VERSION: u32 = 1;

/// Error for an unknown enum name; the message lists what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} '{given}'; expected one of: {expected}")]
pub struct UnknownName {
    /// What was being parsed ("thought_type", "role", "relation kind").
    pub kind: &'static str,
    /// The rejected input.
    pub given: String,
    /// Comma-separated accepted values.
    pub expected: String,
}

macro_rules! named_enum {
    ($(#[$meta:meta])* $name:ident, $kind:literal, [$($variant:ident),+ $(,)?]) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum $name { $($variant),+ }

        impl $name {
            /// Every value, in the order of the spec.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The wire name, e.g. `"FactLearned"`.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => stringify!($variant)),+ }
            }

            /// Stable numeric code used by the canonical encoding (position in `ALL`).
            pub fn code(self) -> u8 {
                Self::ALL.iter().position(|v| *v == self).expect("listed") as u8
            }

            /// Inverse of [`Self::code`].
            pub fn from_code(code: u8) -> Option<Self> {
                Self::ALL.get(code as usize).copied()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.as_str()) }
        }

        impl FromStr for $name {
            type Err = UnknownName;
            fn from_str(s: &str) -> Result<Self, UnknownName> {
                Self::ALL.iter().copied().find(|v| v.as_str() == s).ok_or_else(|| UnknownName {
                    kind: $kind,
                    given: s.chars().take(64).collect(),
                    expected: Self::ALL.iter().map(|v| v.as_str()).collect::<Vec<_>>().join(", "),
                })
            }
        }
    };
}

named_enum!(
    /// The semantic kind of a thought (28 values, as the spec lists them).
    ThoughtType, "thought_type",
    [PreferenceUpdate, UserTrait, RelationshipUpdate, Finding, Insight, FactLearned,
     PatternDetected, Hypothesis, Mistake, Correction, AssumptionInvalidated, Constraint,
     Plan, Subgoal, Decision, StrategyShift, Wonder, Question, Idea, Experiment,
     ActionTaken, TaskComplete, Checkpoint, StateSnapshot, Handoff, Summary, Surprise,
     LessonLearned]
);

named_enum!(
    /// The operational role of a thought (8 values).
    ThoughtRole, "role",
    [Memory, WorkingMemory, Summary, Compression, Checkpoint, Handoff, Audit, Retrospective]
);

named_enum!(
    /// The kind of a typed relation from one thought to another.
    RelationKind, "relation kind",
    [References, Summarizes, Corrects, Invalidates, CausedBy, Supports, Contradicts,
     DerivedFrom, ContinuesFrom, BranchesFrom, RelatedTo, Supersedes]
);

impl RelationKind {
    /// Relations that retire their target from default ranked retrieval.
    pub fn retires_target(self) -> bool {
        matches!(self, RelationKind::Supersedes | RelationKind::Invalidates | RelationKind::Corrects)
    }
}

/// A typed edge from a thought to an earlier thought (or to a thought in
/// another chain when `chain_key` is set).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThoughtRelation {
    /// What the relation means.
    pub kind: RelationKind,
    /// The target thought's id.
    pub target_id: String,
    /// The target's index when it lives in the same chain.
    #[serde(default)]
    pub target_index: Option<u64>,
    /// The target's chain when it is not this chain.
    #[serde(default)]
    pub chain_key: Option<String>,
}

/// One committed thought: the unit of memory.
///
/// Serialized exactly as the tools return it (the "full stored thought object").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Thought {
    /// Schema version of this record ([`THOUGHT_SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// Stable UUID.
    pub id: String,
    /// Position in the chain, from 0.
    pub index: u64,
    /// RFC 3339 UTC timestamp with millisecond precision, assigned at append.
    pub timestamp: String,
    /// Optional session the thought belongs to.
    pub session_id: Option<String>,
    /// Producer id.
    pub agent_id: String,
    /// Producer display name at append time.
    pub agent_name: String,
    /// Producer owner / tenant label.
    pub agent_owner: Option<String>,
    /// Id of the registered key that signed this thought.
    pub signing_key_id: Option<String>,
    /// Detached Ed25519 signature over the signable payload.
    pub thought_signature: Option<Vec<u8>>,
    /// Semantic type.
    pub thought_type: ThoughtType,
    /// Operational role.
    pub role: ThoughtRole,
    /// The memory itself.
    pub content: String,
    /// Confidence in `0.0..=1.0`, when given.
    pub confidence: Option<f64>,
    /// Importance in `0.0..=1.0`.
    pub importance: f64,
    /// Free-form tags.
    pub tags: Vec<String>,
    /// Free-form concepts.
    pub concepts: Vec<String>,
    /// Indices of earlier thoughts in the same chain.
    pub refs: Vec<u64>,
    /// Typed relations.
    pub relations: Vec<ThoughtRelation>,
    /// Hash of the previous thought (`None` for genesis), lowercase hex.
    pub prev_hash: Option<String>,
    /// SHA-256 of the canonical encoding, lowercase hex.
    pub hash: String,
}

impl Thought {
    /// Milliseconds since the epoch of [`Thought::timestamp`], parsed on
    /// every call (0 if it does not parse, which no thought of a served chain
    /// does: it is checked at open and at append). A chain keeps them parsed
    /// once: [`crate::Chain::timestamps_millis`].
    pub fn timestamp_millis(&self) -> i64 {
        crate::timestamp::parse_rfc3339_millis(&self.timestamp).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_counts() {
        assert_eq!(ThoughtType::ALL.len(), 28);
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
    fn codes_round_trip() {
        for t in ThoughtType::ALL {
            assert_eq!(ThoughtType::from_code(t.code()), Some(*t));
            assert_eq!(t.as_str().parse::<ThoughtType>().unwrap(), *t);
        }
        for r in ThoughtRole::ALL {
            assert_eq!(ThoughtRole::from_code(r.code()), Some(*r));
        }
    }
}
