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

/// Checks a key-like string: non-empty after trimming, bounded, no control characters.
pub fn check_key(field: &'static str, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        return Err(format!("{field} must not be empty"));
    }
    if value.len() > MAX_KEY_BYTES {
        return Err(format!("{field} is {} bytes; the limit is {MAX_KEY_BYTES}", value.len()));
    }
    if value.chars().any(|c| c.is_control()) {
        return Err(format!("{field} must not contain control characters"));
    }
    Ok(())
}

/// Checks a label (name, owner, tag): bounded, no control characters.
pub fn check_label(field: &'static str, value: &str, max: usize) -> Result<(), String> {
    if value.len() > max {
        return Err(format!("{field} is {} bytes; the limit is {max}", value.len()));
    }
    if value.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return Err(format!("{field} must not contain control characters"));
    }
    Ok(())
}

/// Checks a list of labels.
pub fn check_labels(field: &'static str, values: &[String]) -> Result<(), String> {
    if values.len() > MAX_LIST_ITEMS {
        return Err(format!("{field} has {} entries; the limit is {MAX_LIST_ITEMS}", values.len()));
    }
    values.iter().try_for_each(|v| check_label(field, v, MAX_LABEL_BYTES))
}

/// Validates and clamps a score to `0.0..=1.0`; NaN is refused.
pub fn clamp_score(field: &'static str, value: f64) -> Result<f64, String> {
    if value.is_nan() {
        return Err(format!("{field} must be a number between 0.0 and 1.0, got NaN"));
    }
    Ok(value.clamp(0.0, 1.0))
}
