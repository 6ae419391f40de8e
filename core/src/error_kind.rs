//! The stable, machine-readable class of a tool error.

use crate::named_enum::named_enum;

named_enum! {
    /// The stable class of a [`crate::ToolError`]: hosts put it on the wire
    /// (the WIT error record's `code`, the JS `Error`'s `kind`) as its
    /// snake_case name, which never changes.
    pub enum ErrorKind("error kind", Exact) {
        /// The tool name is not one the dispatcher serves.
        UnknownTool = "unknown_tool",
        /// The arguments do not match the tool's schema or fail validation.
        InvalidArguments = "invalid_arguments",
        /// A chain object, thought, agent, key or skill does not exist.
        NotFound = "not_found",
        /// The storage backend failed, or the skill registry is read-only.
        Storage = "storage",
        /// An append was refused; nothing was stored.
        AppendRejected = "append_rejected",
        /// The chain failed verification when opened and is not served.
        ChainRefused = "chain_refused",
        /// A skill change was refused (permission, signature or lifecycle).
        SkillRejected = "skill_rejected",
        /// A client-chosen id (an append's `thought_id`) already names
        /// something different; nothing was stored.
        Conflict = "conflict",
        /// A service the tool needs is not configured or cannot be reached
        /// now (the language model of `mentisdb_extract_memories`, a
        /// database server that is down); retrying later may succeed.
        Unavailable = "unavailable",
    }
}

impl PartialEq<str> for ErrorKind {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ErrorKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<ErrorKind> for str {
    fn eq(&self, other: &ErrorKind) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<ErrorKind> for &str {
    fn eq(&self, other: &ErrorKind) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<ErrorKind> for String {
    fn eq(&self, other: &ErrorKind) -> bool {
        self == other.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_stable_snake_case_codes() {
        let names: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(names, ["unknown_tool", "invalid_arguments", "not_found", "storage", "append_rejected", "chain_refused", "skill_rejected", "conflict", "unavailable"]);
        assert_eq!(serde_json::to_value(ErrorKind::ChainRefused).unwrap(), "chain_refused");
        assert_eq!(serde_json::from_value::<ErrorKind>("not_found".into()).unwrap(), ErrorKind::NotFound);
        let wire_code = String::from("storage");
        assert!(ErrorKind::NotFound == "not_found" && wire_code == ErrorKind::Storage && ErrorKind::Storage != "not_found");
    }
}
