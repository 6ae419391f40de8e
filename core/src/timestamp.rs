//! RFC 3339 timestamps: the core stores milliseconds and renders UTC strings.

use chrono::{DateTime, SecondsFormat, TimeZone, Utc};

/// The instant [`format_rfc3339_millis`] renders for `millis`: `millis`
/// itself, or 0 when it is outside the range a date can be made of.
pub(crate) fn renderable_millis(millis: i64) -> i64 {
    if Utc.timestamp_millis_opt(millis).single().is_some() {
        millis
    } else {
        0
    }
}

/// Renders epoch milliseconds as `2026-11-22T21:32:00.123Z`.
pub fn format_rfc3339_millis(millis: i64) -> String {
    match Utc.timestamp_millis_opt(millis).single() {
        Some(dt) => dt.to_rfc3339_opts(SecondsFormat::Millis, true),
        None => "1970-01-01T00:00:00.000Z".to_string(),
    }
}

/// A timestamp that is not RFC 3339.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid RFC 3339 timestamp '{given}': {reason} (example: 2026-11-22T09:30:00Z)")]
pub struct TimestampError {
    /// The rejected input, cut to 64 characters.
    pub given: String,
    /// What the parser found wrong.
    pub reason: chrono::ParseError,
}

/// Parses any RFC 3339 timestamp (any offset) to epoch milliseconds (UTC).
pub fn parse_rfc3339_millis(s: &str) -> Result<i64, TimestampError> {
    DateTime::parse_from_rfc3339(s.trim())
        .map(|dt| dt.timestamp_millis())
        .map_err(|reason| TimestampError { given: crate::text::truncate_chars(s, 64).to_string(), reason })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let s = format_rfc3339_millis(1_795_000_000_123);
        assert_eq!(s, "2026-11-18T11:06:40.123Z");
        assert_eq!(parse_rfc3339_millis(&s).unwrap(), 1_795_000_000_123);
        assert_eq!(parse_rfc3339_millis("2026-11-18T12:06:40.123+01:00").unwrap(), 1_795_000_000_123);
        assert!(parse_rfc3339_millis("yesterday").unwrap_err().to_string().starts_with("invalid RFC 3339 timestamp 'yesterday': "));
    }
}
