//! The one place a [`ToolError`] becomes the WIT `error` record.
//!
//! The record carries the dispatcher's stable code (`kind()`), its WIT enum
//! counterpart, and the error's `Display` text, which is exactly the message
//! the daemon returns over MCP and REST. Nothing is ever turned into a trap.

use crate::wit::{Error, ErrorKind};
use mentisdb_core::ToolError;

/// Code of [`internal`] errors: a tool result that did not have the shape a
/// typed export expects (a bug in this crate, reported instead of trapping).
pub const INTERNAL: &str = "internal";

/// Maps a dispatcher error to the WIT record.
pub fn to_wit(e: &ToolError) -> Error {
    let code = e.kind();
    Error { kind: kind_of(code), code: code.to_string(), message: e.to_string() }
}

/// An error raised by this crate's glue rather than the engine.
pub fn internal(message: impl Into<String>) -> Error {
    Error { kind: ErrorKind::Internal, code: INTERNAL.to_string(), message: message.into() }
}

/// The WIT enum for a stable code; codes added to the core later map to
/// `other` (the `code` field still carries them).
fn kind_of(code: &str) -> ErrorKind {
    match code {
        "unknown_tool" => ErrorKind::UnknownTool,
        "invalid_arguments" => ErrorKind::InvalidArguments,
        "not_found" => ErrorKind::NotFound,
        "append_rejected" => ErrorKind::AppendRejected,
        "chain_refused" => ErrorKind::ChainRefused,
        "storage" => ErrorKind::Storage,
        "skill_rejected" => ErrorKind::SkillRejected,
        INTERNAL => ErrorKind::Internal,
        _ => ErrorKind::Other,
    }
}
