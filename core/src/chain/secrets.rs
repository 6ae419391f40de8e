//! Secrets in a new thought, before it is stored: redacted from its text
//! fields (content, tags, concepts), refused in its ids, names and labels
//! and in a signed thought ([`crate::redact`] finds them).

use super::NewThought;
use crate::error::AppendError;
use crate::redact::{refuse_secret, replace, scan, Redaction};

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
    // Ids, names and labels are not redacted (a placeholder would change
    // what they name): a secret in one is refused before anything is written.
    let labels = [("thought_id", &input.thought_id), ("agent_name", &input.agent_name), ("agent_owner", &input.agent_owner), ("session_id", &input.session_id), ("entity_type", &input.entity_type), ("signing_key_id", &input.signing_key_id)];
    refuse_secret("agent_id", &input.agent_id)?;
    for (field, value) in labels {
        if let Some(v) = value {
            refuse_secret(field, v)?;
        }
    }
    for (i, r) in input.relations.iter().enumerate() {
        for (name, value) in [("target_id", &r.target_id), ("chain_key", &r.chain_key)] {
            if let Some(v) = value {
                refuse_secret(&format!("relations[{i}].{name}"), v)?;
            }
        }
    }
    one(&|| "content".to_string(), &mut input.content)?;
    for (i, tag) in input.tags.iter_mut().enumerate() {
        one(&|| format!("tags[{i}]"), tag)?;
    }
    for (i, concept) in input.concepts.iter_mut().enumerate() {
        one(&|| format!("concepts[{i}]"), concept)?;
    }
    Ok(redactions)
}
