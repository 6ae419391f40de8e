//! `graph.mode` of the ranked tools: which edges the graph expansion
//! follows, or none.

use crate::named_enum::named_enum;
use crate::ranked::WalkDirection;

named_enum! {
    /// Which edges ranked retrieval's graph expansion follows (`both`,
    /// `outgoing`, `incoming`), or `off` (trimmed, case-insensitive; `out`,
    /// `in` and `none` are accepted too).
    pub enum GraphMode("graph.mode", TrimIgnoreCase) {
        /// Refs and relations in both directions (the default).
        Both = "both",
        /// What a seed builds on.
        Outgoing = "outgoing" (also "out"),
        /// What builds on a seed.
        Incoming = "incoming" (also "in"),
        /// No expansion (depth 0).
        Off = "off" (also "none"),
    }
}

impl GraphMode {
    /// The walk direction, or `None` for [`GraphMode::Off`].
    pub fn direction(self) -> Option<WalkDirection> {
        match self {
            GraphMode::Both => Some(WalkDirection::Both),
            GraphMode::Outgoing => Some(WalkDirection::Outgoing),
            GraphMode::Incoming => Some(WalkDirection::Incoming),
            GraphMode::Off => None,
        }
    }
}
