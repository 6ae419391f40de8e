//! [`ChainKey`]: the type of every tool argument that names a chain.

use super::{ArgError, FromArg};
use serde_json::Value;

/// A tool argument that names a chain (`chain_key`, an entry of
/// `chain_keys`, `source_chain_key`...). Its type is what says a call
/// touches that chain: [`super::call_scope`] collects every `ChainKey` of
/// a call's parsed arguments, so a new tool cannot name a chain that token
/// scoping does not see. On the wire and in the schema it is a string.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChainKey {
    key: String,
    /// Stands in for a field that did not read (it names no chain).
    placeholder: bool,
}

impl ChainKey {
    /// The key as given (not yet trimmed or defaulted).
    pub fn as_str(&self) -> &str {
        &self.key
    }
}

impl std::ops::Deref for ChainKey {
    type Target = str;
    fn deref(&self) -> &str {
        &self.key
    }
}

impl From<ChainKey> for String {
    fn from(k: ChainKey) -> String {
        k.key
    }
}

impl schemars::JsonSchema for ChainKey {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        String::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }
}

impl FromArg for ChainKey {
    fn from_arg(value: Value) -> Result<Self, ArgError> {
        String::from_arg(value).map(|key| ChainKey { key, placeholder: false })
    }

    fn placeholder() -> Self {
        ChainKey { key: String::new(), placeholder: true }
    }

    fn chain_refs<'a>(&'a self, out: &mut Vec<Option<&'a str>>) {
        // A required key that is missing or not a string names nothing (the call fails on it).
        if !self.placeholder {
            out.push(Some(&self.key));
        }
    }

    fn absent_chain_refs(out: &mut Vec<Option<&str>>) {
        out.push(None);
    }
}
