//! Cutting caller text to a bounded length for messages and derived names.

/// Longest part of a caller-supplied value (an id, a hash, a tool name) an
/// error message repeats.
pub(crate) const MAX_ECHO_CHARS: usize = 128;

/// The first `max` characters (not bytes) of `s`.
pub(crate) fn truncate_chars(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((end, _)) => &s[..end],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_at_characters_not_bytes() {
        assert_eq!(truncate_chars("héllo", 2), "hé");
        assert_eq!(truncate_chars("héllo", 5), "héllo");
        assert_eq!(truncate_chars("héllo", 50), "héllo");
        assert_eq!(truncate_chars("", 3), "");
        assert_eq!(truncate_chars("abc", 0), "");
    }
}
