//! Naming one thought by id, hash or index: the rule every tool that takes
//! `thought_id` / `thought_hash` / `thought_index` (or the `anchor_` fields)
//! shares, and the one "not found" message.

use crate::chain::Chain;
use crate::error::ToolError;
use crate::text::{truncate_chars, MAX_ECHO_CHARS};
use crate::thought::Thought;

/// Schema rule of the argument types that name one thought: exactly one of
/// `thought_id`, `thought_hash` and `thought_index` is given (a `null` one
/// counts as not given), as [`ThoughtLocator::exactly_one`] checks.
pub(crate) fn exactly_one_schema(schema: &mut schemars::Schema) {
    let given = |field: &str, ty: &str| serde_json::json!({"required": [field], "properties": {field: {"type": ty}}});
    schema.insert("oneOf".into(), serde_json::json!([given("thought_id", "string"), given("thought_hash", "string"), given("thought_index", "integer")]));
}

/// Schema rule of `mentisdb_traverse_thoughts`: at most one of `anchor_id`,
/// `anchor_hash`, `anchor_index` and `anchor_boundary` (a `null` one counts
/// as not given).
pub(crate) fn at_most_one_anchor_schema(schema: &mut schemars::Schema) {
    let fields = ["anchor_id", "anchor_hash", "anchor_index", "anchor_boundary"];
    let not_null = serde_json::json!({"not": {"type": "null"}});
    let mut pairs = Vec::new();
    for (i, a) in fields.iter().enumerate() {
        for b in &fields[i + 1..] {
            pairs.push(serde_json::json!({"required": [a, b], "properties": {*a: not_null, *b: not_null}}));
        }
    }
    schema.insert("not".into(), serde_json::json!({"anyOf": pairs}));
}

/// One thought, named by exactly one of its id, hash or index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ThoughtLocator<'a> {
    /// By `thought_id`.
    Id(&'a str),
    /// By `thought_hash`.
    Hash(&'a str),
    /// By `thought_index`.
    Index(u64),
}

impl<'a> ThoughtLocator<'a> {
    /// How many of the three locator fields are set.
    pub(crate) fn count(id: Option<&str>, hash: Option<&str>, index: Option<u64>) -> u8 {
        id.is_some() as u8 + hash.is_some() as u8 + index.is_some() as u8
    }

    /// The first locator given (id, then hash, then index), if any.
    pub(crate) fn first(id: Option<&'a str>, hash: Option<&'a str>, index: Option<u64>) -> Option<Self> {
        id.map(ThoughtLocator::Id).or(hash.map(ThoughtLocator::Hash)).or(index.map(ThoughtLocator::Index))
    }

    /// The locator when exactly one of `thought_id`, `thought_hash` and
    /// `thought_index` is given; an invalid-arguments error of `tool` otherwise.
    pub(crate) fn exactly_one(tool: &str, id: Option<&'a str>, hash: Option<&'a str>, index: Option<u64>) -> Result<Self, ToolError> {
        match (Self::count(id, hash, index), Self::first(id, hash, index)) {
            (1, Some(locator)) => Ok(locator),
            (given, _) => Err(ToolError::invalid(tool, format!("give exactly one of thought_id, thought_hash or thought_index (got {given})"))),
        }
    }

    /// The thought in `chain` this names.
    pub(crate) fn find<'c>(&self, chain: &'c Chain) -> Option<&'c Thought> {
        match *self {
            ThoughtLocator::Id(id) => chain.by_id(id),
            ThoughtLocator::Hash(h) => chain.by_hash(h),
            ThoughtLocator::Index(i) => chain.by_index(i),
        }
    }

    /// The error for a locator that names no thought of chain `chain_key`
    /// (`len` thoughts long).
    pub(crate) fn not_found(&self, chain_key: &str, len: usize) -> ToolError {
        ToolError::NotFound(match *self {
            ThoughtLocator::Id(id) => format!("no thought with id '{}' in chain '{chain_key}'", truncate_chars(id, MAX_ECHO_CHARS)),
            ThoughtLocator::Hash(h) => format!("no thought with hash '{}' in chain '{chain_key}'", truncate_chars(h, MAX_ECHO_CHARS)),
            ThoughtLocator::Index(i) => format!("no thought with index {i} in chain '{chain_key}' ({len} thoughts)"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_one_locator_is_accepted() {
        assert_eq!(ThoughtLocator::exactly_one("t", Some("a"), None, None).unwrap(), ThoughtLocator::Id("a"));
        assert_eq!(ThoughtLocator::exactly_one("t", None, None, Some(3)).unwrap(), ThoughtLocator::Index(3));
        for (id, hash, index, got) in [(None, None, None, 0), (Some("a"), Some("b"), None, 2), (Some("a"), Some("b"), Some(1), 3)] {
            let e = ThoughtLocator::exactly_one("t", id, hash, index).unwrap_err().to_string();
            assert!(e.contains(&format!("exactly one of thought_id, thought_hash or thought_index (got {got})")), "{e}");
        }
    }

    #[test]
    fn not_found_names_the_locator_and_cuts_long_input() {
        let long = "x".repeat(1000);
        let e = ThoughtLocator::Id(&long).not_found("k", 0).to_string();
        assert_eq!(e, format!("no thought with id '{}' in chain 'k'", "x".repeat(MAX_ECHO_CHARS)));
        assert_eq!(ThoughtLocator::Index(9).not_found("k", 2).to_string(), "no thought with index 9 in chain 'k' (2 thoughts)");
    }
}
