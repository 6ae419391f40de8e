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
///
/// One pass over the bytes: a rule is tried only at a position whose byte
/// and the next one are the first two bytes of one of its starts (the
/// tables `rules::FIRST` and `rules::SECOND`, derived from [`RULES`]).
pub fn scan(text: &str) -> Vec<Finding> {
    let mut all = Vec::new();
    let mut resume = [0; RULES.len()];
    let mut from = 0;
    // The end of the last finding `keep` will keep, followed as the scan goes.
    let mut kept_end = 0;
    while let Some((at, mut rules)) = next_candidate(text.as_bytes(), from) {
        let found = all.len();
        while rules != 0 {
            let r = rules.trailing_zeros() as usize;
            rules &= rules - 1;
            RULES[r].find_at(text, at, &mut resume[r], &mut |(start, end)| all.push((start, r, end)));
        }
        // In `keep`'s order. A match that `keep` will drop (it overlaps an
        // earlier finding) must not keep its rule from looking inside it past
        // that finding: a JWT whose first segment swallowed the start of
        // another one is dropped, and the inner one is the secret to redact.
        all[found..].sort_unstable();
        for &(start, r, end) in &all[found..] {
            if start >= kept_end {
                if end > start {
                    kept_end = end;
                }
            } else if !RULES[r].skips_inside_match {
                resume[r] = resume[r].min(kept_end);
            }
        }
        from = at + 1;
    }
    keep(all)
}

/// The first position from `at` where some rule may start, and those rules
/// (bit `r` for `RULES[r]`). Eight positions are tested at a time, with no
/// branch until one of them may start a rule.
fn next_candidate(t: &[u8], mut at: usize) -> Option<(usize, u32)> {
    let rules_at = |i: usize, pair: &[u8]| rules::FIRST[usize::from(pair[i])] & rules::SECOND[usize::from(pair[i + 1])];
    while let Some(block) = t.get(at..at + 9) {
        if (0..8).fold(0, |any, i| any | rules_at(i, block)) != 0 {
            break;
        }
        at += 8;
    }
    while let Some(pair) = t.get(at..at + 2) {
        let rules = rules_at(0, pair);
        if rules != 0 {
            return Some((at, rules));
        }
        at += 1;
    }
    None
}

/// The findings among `all` (`(start, rule, end)` in any order): sorted by
/// start (table order breaking ties), each kept if it starts after the
/// previous kept one ends.
fn keep(mut all: Vec<(usize, usize, usize)>) -> Vec<Finding> {
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

/// Refuses `value` of the id, name or label `field` when it carries a
/// secret ([`AppendError::SecretInField`]); such fields are never redacted.
pub fn refuse_secret(field: &str, value: &str) -> Result<(), AppendError> {
    match scan(value).first() {
        Some(found) => Err(AppendError::SecretInField { field: field.to_string(), kind: found.kind }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests;
