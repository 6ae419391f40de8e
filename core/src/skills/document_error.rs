//! Why skill content does not parse as a skill document.

use super::model::CURRENT_SCHEMA_VERSION;

/// Why Markdown or JSON skill content is not a skill document. Messages say
/// where (frontmatter line) and what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DocumentError {
    /// Neither the content nor the caller names the skill.
    #[error("the skill has no name: add `name:` frontmatter or a `# Title` heading (Markdown), a \"name\" field (JSON), or pass skill_id")]
    NoName,
    /// `schema_version` is outside the supported range.
    #[error("unsupported schema_version {0}; supported: 1..={CURRENT_SCHEMA_VERSION}")]
    UnsupportedSchemaVersion(u32),
    /// Frontmatter `schema_version` is not a number.
    #[error("frontmatter schema_version must be a positive integer, got '{0}'")]
    SchemaVersionNotANumber(String),
    /// The JSON does not have the skill document's shape.
    #[error("not a JSON skill document ({0}); expected an object with fields schema_version, name, description, tags, triggers, warnings, body")]
    NotAJsonDocument(String),
    /// A frontmatter key that takes one value was given a list.
    #[error("frontmatter {0} must be a single value, not a list")]
    ListNotAllowed(String),
    /// The frontmatter has no closing line.
    #[error("frontmatter starts with `---` on line 1 but is never closed by a `---` line")]
    UnclosedFrontmatter,
    /// An indented frontmatter line under a key we read.
    #[error("frontmatter line {0}: unexpected indented line (expected `key: value`; name, description, tags, triggers, warnings and schema_version take a value or a list)")]
    UnexpectedIndent(usize),
    /// A frontmatter line without `:`.
    #[error("frontmatter line {0}: expected `key: value`")]
    NotKeyValue(usize),
    /// A `"double-quoted"` scalar that is not a valid JSON string.
    #[error("frontmatter line {line}: bad double-quoted string: {reason}")]
    BadDoubleQuoted {
        /// 1-based line in the frontmatter.
        line: usize,
        /// Why the string is invalid.
        reason: String,
    },
    /// A `'single-quoted'` scalar without its closing quote.
    #[error("frontmatter line {0}: unterminated single-quoted string")]
    UnterminatedSingleQuoted(usize),
    /// A flow list without its closing `]`.
    #[error("frontmatter line {0}: a list must end with `]` on the same line")]
    UnclosedList(usize),
}
