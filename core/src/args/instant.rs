//! A point in time as callers send it: RFC 3339 text (`"2026-11-27T09:30:00Z"`)
//! or milliseconds since the Unix epoch (memoturn's form, `1795000000000`).
//! Replies always write RFC 3339.

use super::{ArgError, FromArg};
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde_json::Value;
use std::borrow::Cow;

/// Epoch milliseconds, read from either form, within the times an RFC 3339
/// text can name (years 0 to 9999, a day either side for its offsets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Instant(pub(crate) i64);

/// A day before 0000-01-01T00:00:00Z.
pub(crate) const EARLIEST_MS: i64 = -62_167_219_200_000 - 86_400_000;
/// A day after 9999-12-31T23:59:59.999Z.
pub(crate) const LATEST_MS: i64 = 253_402_300_799_999 + 86_400_000;
/// Fewer digits than this are a year or a date written without separators
/// (`2026`, `20261127`), not milliseconds (10 digits reach back to 1970-04-26).
const MIN_MS_DIGITS: usize = 10;

impl Instant {
    fn in_range(ms: i64) -> Result<Self, ArgError> {
        if (EARLIEST_MS..=LATEST_MS).contains(&ms) {
            Ok(Instant(ms))
        } else {
            Err(ArgError::invalid(format!("{ms} ms is outside years 0 to 9999")))
        }
    }
}

impl FromArg for Instant {
    fn from_arg(value: Value) -> Result<Self, ArgError> {
        const EXPECTED: &str = "expected an RFC 3339 time or integer milliseconds since 1970";
        match value {
            Value::String(s) => {
                let digits = s.trim().trim_start_matches('-');
                if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                    if digits.len() < MIN_MS_DIGITS {
                        return Err(ArgError::invalid(format!("'{}' is not a time: send RFC 3339 (2026-11-27T09:30:00Z) or milliseconds since 1970", s.trim())));
                    }
                    let ms = s.trim().parse::<i64>().map_err(|_| ArgError::invalid(format!("{EXPECTED}, found a number too large")))?;
                    return Instant::in_range(ms);
                }
                crate::timestamp::parse_rfc3339_millis(&s).map_err(|e| ArgError::invalid(e.to_string())).and_then(Instant::in_range)
            }
            Value::Number(n) => Instant::in_range(n.as_i64().ok_or_else(|| ArgError::invalid(format!("{EXPECTED}, found {n}")))?),
            other => Err(ArgError::invalid(format!("{EXPECTED}, found {}", super::describe(&other)))),
        }
    }

    fn placeholder() -> Self {
        Instant(0)
    }
}

impl JsonSchema for Instant {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "Instant".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        // Bounds and the text's pattern come from the field's name (`dispatch/arg_formats.rs`).
        json_schema!({"type": ["string", "integer"]})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn either_form_reads_as_the_same_instant() {
        let text = Instant::from_arg(json!("2026-11-27T09:30:00.000Z")).unwrap();
        let ms = Instant::from_arg(json!(text.0)).unwrap();
        assert_eq!(text, ms);
        assert_eq!(Instant::from_arg(json!(text.0.to_string())).unwrap(), text, "digits in a string are milliseconds");
        assert!(Instant::from_arg(json!("yesterday")).unwrap_err().to_string().contains("yesterday"));
        assert!(Instant::from_arg(json!(true)).is_err());
        assert!(Instant::from_arg(json!(1.5)).is_err());
        assert!(Instant::from_arg(json!("2026")).unwrap_err().to_string().contains("RFC 3339"), "a year is not milliseconds");
        assert!(Instant::from_arg(json!("20261127")).is_err());
        // Every RFC 3339 text names a time in range, offsets at the edges included.
        for edge in ["0000-01-01T00:00:00+23:59", "9999-12-31T23:59:59.999-23:59"] {
            assert!(Instant::from_arg(json!(edge)).is_ok(), "{edge}");
        }
        for out in [EARLIEST_MS - 1, LATEST_MS + 1, i64::MIN, i64::MAX] {
            assert!(Instant::from_arg(json!(out)).unwrap_err().to_string().contains("outside years 0 to 9999"), "{out}");
        }
    }
}
