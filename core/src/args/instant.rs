//! A point in time as callers send it: RFC 3339 text (`"2026-11-27T09:30:00Z"`)
//! or milliseconds since the Unix epoch (memoturn's form, `1795000000000`).
//! Replies always write RFC 3339.

use super::{ArgError, FromArg};
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde_json::Value;
use std::borrow::Cow;

/// Epoch milliseconds, read from either form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Instant(pub(crate) i64);

impl FromArg for Instant {
    fn from_arg(value: Value) -> Result<Self, ArgError> {
        match value {
            Value::String(s) => match s.trim().parse::<i64>() {
                Ok(ms) => Ok(Instant(ms)),
                Err(_) => crate::timestamp::parse_rfc3339_millis(&s).map(Instant).map_err(|e| ArgError::invalid(e.to_string())),
            },
            Value::Number(n) => n.as_i64().map(Instant).ok_or_else(|| ArgError::invalid(format!("expected an RFC 3339 time or integer milliseconds since 1970, found {n}"))),
            other => Err(ArgError::invalid(format!("expected an RFC 3339 time or integer milliseconds since 1970, found {}", super::describe(&other)))),
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
        json_schema!({"type": ["string", "integer"], "description": "RFC 3339 or epoch ms"})
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
    }
}
