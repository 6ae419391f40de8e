//! Secret redaction on write.
//!
//! Before a thought is hashed, the append path ([`crate::MentisDb::append`],
//! used by `mentisdb_append`, `mentisdb_append_retrospective` and
//! `mentisdb_bootstrap`) replaces every value in its content, tags and
//! concepts that one of the [`RULES`] recognises as a credential with
//! `[REDACTED:<kind>]`, and the append reply lists each replacement as a
//! [`Redaction`]. The daemon switch is [`crate::DbConfig::redact_secrets`]
//! (on by default). A signed append whose text would be redacted is refused
//! instead ([`crate::AppendError::SecretInSignedThought`]): redacting would
//! break its signature. Skills are not redacted (they are documents reviewed
//! by people, and `skills::safety` scans them).
//!
//! Matches never overlap: scanning collects every rule's matches, sorts
//! them by start (table order breaking ties) and keeps each one that starts
//! after the previous kept one ends. A placeholder never matches a rule, so
//! redacting is idempotent: a retried append redacts to the same text.

mod rules;

pub use rules::{Rule, RULES};

use crate::chain::NewThought;
use crate::error::AppendError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A secret found in a text: its kind and byte range `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finding {
    /// The [`Rule::kind`] that matched.
    pub kind: &'static str,
    /// Byte offset of the first byte.
    pub start: usize,
    /// Byte offset just past the last byte.
    pub end: usize,
}

/// Every secret in `text`, sorted by start, never overlapping.
pub fn scan(text: &str) -> Vec<Finding> {
    let text = rules::Text::new(text);
    let mut all = Vec::new();
    let mut spans = Vec::new();
    for (r, rule) in RULES.iter().enumerate() {
        spans.clear();
        (rule.find)(&text, &mut spans);
        all.extend(spans.iter().map(|&(s, e)| (s, r, e)));
    }
    all.sort_unstable();
    let mut kept: Vec<Finding> = Vec::new();
    for (start, r, end) in all {
        if end > start && kept.last().is_none_or(|k| start >= k.end) {
            kept.push(Finding { kind: RULES[r].kind, start, end });
        }
    }
    kept
}

/// The text that replaces a secret of `kind`.
pub fn placeholder(kind: &str) -> String {
    format!("[REDACTED:{kind}]")
}

/// `text` with each of `found` (as [`scan`] returns them) replaced by its
/// placeholder, and where each placeholder is in the new text.
pub fn replace(text: &str, found: &[Finding]) -> (String, Vec<Finding>) {
    let mut out = String::with_capacity(text.len());
    let mut placed = Vec::with_capacity(found.len());
    let mut from = 0;
    for f in found {
        out.push_str(&text[from..f.start]);
        let start = out.len();
        out.push_str(&placeholder(f.kind));
        placed.push(Finding { kind: f.kind, start, end: out.len() });
        from = f.end;
    }
    out.push_str(&text[from..]);
    (out, placed)
}

/// One secret the append replaced, as the append reply lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Redaction {
    /// Where: `content`, `tags[<i>]` or `concepts[<i>]` (`i` from 0, in the order sent).
    pub field: String,
    /// The rule that matched, e.g. `aws_access_key_id` (see the README's table).
    pub kind: String,
    /// Byte offset of the placeholder `[REDACTED:<kind>]` in the stored field value.
    pub start: u64,
    /// Byte offset just past the placeholder (`end - start` is its length).
    pub end: u64,
}

/// Redacts the content, tags and concepts of `input` in place and lists
/// what was replaced. A signed input (`thought_signature` or
/// `signing_key_id` given) that carries a secret is refused and left as is.
pub(crate) fn redact_new_thought(input: &mut NewThought) -> Result<Vec<Redaction>, AppendError> {
    let signed = input.thought_signature.is_some() || input.signing_key_id.is_some();
    let mut redactions = Vec::new();
    let mut one = |field: &dyn Fn() -> String, value: &mut String| -> Result<(), AppendError> {
        let found = scan(value);
        let Some(first) = found.first() else { return Ok(()) };
        if signed {
            return Err(AppendError::SecretInSignedThought { field: field(), kind: first.kind, offset: first.start });
        }
        let (text, placed) = replace(value, &found);
        *value = text;
        let field = field();
        redactions.extend(placed.iter().map(|p| Redaction { field: field.clone(), kind: p.kind.to_string(), start: p.start as u64, end: p.end as u64 }));
        Ok(())
    };
    one(&|| "content".to_string(), &mut input.content)?;
    for (i, tag) in input.tags.iter_mut().enumerate() {
        one(&|| format!("tags[{i}]"), tag)?;
    }
    for (i, concept) in input.concepts.iter_mut().enumerate() {
        one(&|| format!("concepts[{i}]"), concept)?;
    }
    Ok(redactions)
}

#[cfg(test)]
mod tests;
