//! Size limits on everything a caller can send. Exceeding one is a clear
//! `invalid arguments` error, never a truncation.

/// Longest `content` of a thought, in bytes.
pub const MAX_CONTENT_BYTES: usize = 256 * 1024;
/// Longest `chain_key`, `agent_id`, `key_id`, `skill_id` and similar keys, in bytes.
pub const MAX_KEY_BYTES: usize = 256;
/// Longest short text (names, owners, aliases, tags, concepts), in bytes.
pub const MAX_LABEL_BYTES: usize = 512;
/// Longest agent description, in bytes.
pub const MAX_DESCRIPTION_BYTES: usize = 8 * 1024;
/// Most tags, concepts, or filter-list entries.
pub const MAX_LIST_ITEMS: usize = 256;
/// Most refs or relations on one thought.
pub const MAX_REFS: usize = 1024;
/// Default and largest traversal chunk.
pub const DEFAULT_CHUNK_SIZE: usize = 50;
/// Largest traversal chunk; bigger requests are clamped.
pub const MAX_CHUNK_SIZE: usize = 1000;
/// Default `last_n` of recent context.
pub const DEFAULT_RECENT_LAST_N: usize = 12;
/// Largest `last_n`; bigger requests are clamped.
pub const MAX_RECENT_LAST_N: usize = 1000;
/// Largest search `limit`; bigger requests are clamped.
pub const MAX_SEARCH_LIMIT: usize = 10_000;

/// Why a value is outside the limits. The message names the field, what
/// was wrong and what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    /// A key that is empty (or only whitespace).
    #[error("{field} must not be empty")]
    Empty {
        /// The argument's name.
        field: &'static str,
    },
    /// A value longer than its limit.
    #[error("{field} is {len} bytes; the limit is {max}")]
    TooLong {
        /// The argument's name.
        field: &'static str,
        /// Its length in bytes.
        len: usize,
        /// The limit in bytes.
        max: usize,
    },
    /// A value with control characters.
    #[error("{field} must not contain control characters")]
    ControlCharacters {
        /// The argument's name.
        field: &'static str,
    },
    /// A list with more entries than its limit.
    #[error("{field} has {len} entries; the limit is {max}")]
    TooMany {
        /// The argument's name.
        field: &'static str,
        /// How many entries it has.
        len: usize,
        /// The limit on entries.
        max: usize,
    },
    /// A score that is NaN.
    #[error("{field} must be a number between 0.0 and 1.0, got NaN")]
    NotANumber {
        /// The argument's name.
        field: &'static str,
    },
}

impl LimitError {
    /// The argument the error is about.
    pub fn field(&self) -> &'static str {
        match self {
            LimitError::Empty { field }
            | LimitError::TooLong { field, .. }
            | LimitError::ControlCharacters { field }
            | LimitError::TooMany { field, .. }
            | LimitError::NotANumber { field } => field,
        }
    }
}

/// Checks a key-like string: non-empty after trimming, bounded, no control characters.
pub fn check_key(field: &'static str, value: &str) -> Result<(), LimitError> {
    if value.trim().is_empty() {
        return Err(LimitError::Empty { field });
    }
    if value.len() > MAX_KEY_BYTES {
        return Err(LimitError::TooLong { field, len: value.len(), max: MAX_KEY_BYTES });
    }
    if value.chars().any(|c| c.is_control()) {
        return Err(LimitError::ControlCharacters { field });
    }
    Ok(())
}

/// Checks a search's query text: bounded (8 labels), no control characters
/// but newline and tab.
pub(crate) fn check_query_text(text: &str) -> Result<(), LimitError> {
    check_label("text", text, MAX_LABEL_BYTES * 8)
}

/// Checks a label (name, owner, tag): bounded, no control characters.
pub(crate) fn check_label(field: &'static str, value: &str, max: usize) -> Result<(), LimitError> {
    if value.len() > max {
        return Err(LimitError::TooLong { field, len: value.len(), max });
    }
    if value.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return Err(LimitError::ControlCharacters { field });
    }
    Ok(())
}

/// Checks the length of a list argument.
pub(crate) fn check_count(field: &'static str, len: usize) -> Result<(), LimitError> {
    if len > MAX_LIST_ITEMS {
        return Err(LimitError::TooMany { field, len, max: MAX_LIST_ITEMS });
    }
    Ok(())
}

/// Checks a list of labels.
pub(crate) fn check_labels(field: &'static str, values: &[String]) -> Result<(), LimitError> {
    check_count(field, values.len())?;
    values.iter().try_for_each(|v| check_label(field, v, MAX_LABEL_BYTES))
}

/// Validates and clamps a score to `0.0..=1.0`; NaN is refused.
pub(crate) fn clamp_score(field: &'static str, value: f64) -> Result<f64, LimitError> {
    if value.is_nan() {
        return Err(LimitError::NotANumber { field });
    }
    Ok(value.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_field_and_the_limit() {
        assert_eq!(check_key("agent_id", " ").unwrap_err().to_string(), "agent_id must not be empty");
        let e = check_key("agent_id", &"a".repeat(MAX_KEY_BYTES + 1)).unwrap_err();
        assert_eq!(e.to_string(), format!("agent_id is {} bytes; the limit is {MAX_KEY_BYTES}", MAX_KEY_BYTES + 1));
        assert_eq!(e.field(), "agent_id");
        assert_eq!(check_label("tag", "a\u{7}b", 10).unwrap_err(), LimitError::ControlCharacters { field: "tag" });
        assert!(check_label("tag", "a\nb", 10).is_ok());
        let many = vec![String::new(); MAX_LIST_ITEMS + 1];
        assert_eq!(check_labels("tags", &many).unwrap_err().to_string(), format!("tags has {} entries; the limit is {MAX_LIST_ITEMS}", MAX_LIST_ITEMS + 1));
        assert_eq!(clamp_score("importance", 7.0).unwrap(), 1.0);
        assert!(clamp_score("importance", f64::NAN).unwrap_err().to_string().contains("got NaN"));
    }
}
