//! The entity types of a chain (MentisDB 0.10's entity-type registry): the
//! labels thoughts carry in `entity_type`, plus the labels declared ahead of
//! use with `mentisdb_upsert_entity_type`.
//!
//! Only the declarations are stored (in the chain's registry sidecar, next
//! to the agents: [`crate::agents::AgentRegistry::declare_entity_type`]).
//! Each label's activity (`thought_count`, first and last index and time) is
//! derived from the chain's thoughts when the list is asked for, so appends
//! pay nothing for it and it can never disagree with the chain. A declared
//! label no thought carries yet has `thought_count` 0 and no first/last
//! fields (MentisDB 0.10 reports such a label as seen once at index 0).

use crate::chain::Chain;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One entity type of a chain, with its activity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EntityTypeRecord {
    /// The label, as thoughts carry it.
    pub entity_type: String,
    /// Index of the first thought with this label.
    pub first_seen_index: Option<u64>,
    /// Index of the latest thought with this label.
    pub last_seen_index: Option<u64>,
    /// Timestamp (RFC 3339) of the first thought with this label.
    pub first_seen_at: Option<String>,
    /// Timestamp (RFC 3339) of the latest thought with this label.
    pub last_seen_at: Option<String>,
    /// How many thoughts carry this label.
    pub thought_count: u64,
}

impl EntityTypeRecord {
    fn unseen(label: &str) -> Self {
        EntityTypeRecord { entity_type: label.to_string(), first_seen_index: None, last_seen_index: None, first_seen_at: None, last_seen_at: None, thought_count: 0 }
    }
}

/// Every entity type of `chain` (declared or carried by a thought), ordered
/// by label.
pub fn entity_types(chain: &Chain) -> Vec<EntityTypeRecord> {
    let mut out: BTreeMap<&str, EntityTypeRecord> = crate::sorting::map_from(chain.agents().declared_entity_types().map(|l| (l, EntityTypeRecord::unseen(l))));
    for t in chain.thoughts() {
        let Some(label) = t.entity_type() else { continue };
        let rec = out.entry(label).or_insert_with(|| EntityTypeRecord::unseen(label));
        rec.thought_count += 1;
        if rec.first_seen_index.is_none() {
            rec.first_seen_index = Some(t.index);
            rec.first_seen_at = Some(t.timestamp().to_string());
        }
        rec.last_seen_index = Some(t.index);
        rec.last_seen_at = Some(t.timestamp().to_string());
    }
    out.into_values().collect()
}

/// The record of `label` in `chain` (unseen when the chain has no thought with it).
pub fn entity_type(chain: &Chain, label: &str) -> EntityTypeRecord {
    entity_types(chain).into_iter().find(|r| r.entity_type == label).unwrap_or_else(|| EntityTypeRecord::unseen(label))
}
