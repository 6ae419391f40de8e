//! The one place a [`ToolError`] becomes the WIT `error` record.
//!
//! The record carries the dispatcher's stable code (`kind()`'s name), its WIT
//! enum counterpart, and the error's `Display` text, which is exactly the
//! message the daemon returns over MCP and REST. No tool error is a trap
//! (a typed export reading a reply as the wrong type would be a bug of this
//! crate's, and panics in `MentisDb::call_as`: the tests call every export).

use crate::wit::{Error, ErrorKind};
use mentisdb_core::{ErrorKind as CoreKind, ToolError};

/// Maps a dispatcher error to the WIT record.
pub fn to_wit(e: &ToolError) -> Error {
    let kind = e.kind();
    Error { kind: wit_kind(kind), code: kind.as_str().to_string(), message: e.to_string() }
}


/// The WIT enum for the core's kind. The match is exhaustive, so a kind
/// added to the core must be given its WIT case here (or `other`, with the
/// `code` field still carrying its name).
fn wit_kind(kind: CoreKind) -> ErrorKind {
    match kind {
        CoreKind::UnknownTool => ErrorKind::UnknownTool,
        CoreKind::InvalidArguments => ErrorKind::InvalidArguments,
        CoreKind::NotFound => ErrorKind::NotFound,
        CoreKind::AppendRejected => ErrorKind::AppendRejected,
        CoreKind::ChainRefused => ErrorKind::ChainRefused,
        CoreKind::Storage => ErrorKind::Storage,
        CoreKind::SkillRejected => ErrorKind::SkillRejected,
        CoreKind::Conflict => ErrorKind::Conflict,
        // No WIT case of its own (yet): `code` says "unavailable".
        CoreKind::Unavailable => ErrorKind::Other,
    }
}
