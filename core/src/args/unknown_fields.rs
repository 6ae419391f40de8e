//! Arguments a tool does not know.
//!
//! A misspelled field must not silently change what a call does: in
//! append-only memory, `{"chain": "project-alpha", ...}` appending for good
//! to the default chain cannot be undone. So an unknown field that is close
//! to one the tool knows (a common alias such as `chain` for `chain_key`, a
//! different spelling of the same words such as `chainKey`, or at most one
//! or two typing slips) refuses the call with `unknown field `chain` (did
//! you mean `chain_key`?)`. Other unknown fields are accepted, as MentisDB
//! 0.10 accepts them (its clients send extras), and named in the reply's
//! `warnings`.

/// Names callers use for a field whose tool name is the second one.
const ALIASES: &[(&str, &str)] = &[
    ("chain", "chain_key"),
    ("chain_id", "chain_key"),
    ("chain_name", "chain_key"),
    ("chains", "chain_keys"),
    ("agent", "agent_id"),
    ("query", "text"),
    ("q", "text"),
    ("search", "text"),
    ("type", "thought_type"),
    ("kind", "thought_type"),
    ("id", "thought_id"),
    ("tag", "tags"),
    ("concept", "concepts"),
    ("body", "content"),
    ("message", "content"),
    ("session", "session_id"),
    ("skill", "skill_id"),
];

/// The known field `unknown` was most likely meant to be, if any.
pub(crate) fn suggestion(unknown: &str, known: &[&'static str]) -> Option<&'static str> {
    let folded = fold(unknown);
    if let Some(k) = known.iter().find(|k| fold(k) == folded) {
        return Some(k);
    }
    let lower = unknown.to_ascii_lowercase();
    if let Some((_, target)) = ALIASES.iter().find(|(alias, target)| *alias == lower && known.contains(target)) {
        return known.iter().copied().find(|k| k == target);
    }
    // Typing slips: one for short names, two for longer ones.
    let slips = if folded.chars().count() <= 4 { 1 } else { 2 };
    known.iter().copied().map(|k| (distance(&folded, &fold(k)), k)).filter(|(d, _)| *d <= slips).min_by_key(|(d, _)| *d).map(|(_, k)| k)
}

/// A name without case, `_` or `-`: `chainKey`, `Chain-Key` and
/// `chain_key` fold alike.
fn fold(name: &str) -> String {
    // ASCII only: argument names are ASCII (and Unicode case tables would
    // cost the browser's .wasm kilobytes).
    name.chars().filter(|c| *c != '_' && *c != '-').map(|c| c.to_ascii_lowercase()).collect()
}

/// Edit distance with adjacent transpositions (optimal string alignment).
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const APPEND: &[&str] = &["chain_key", "agent_id", "thought_type", "content", "tags", "concepts", "importance", "session_id", "refs"];

    #[test]
    fn close_names_and_aliases_are_suggested() {
        for (given, meant) in [("chain", "chain_key"), ("agent", "agent_id"), ("type", "thought_type"), ("chainKey", "chain_key"), ("Chain-Key", "chain_key"), ("chian_key", "chain_key"), ("contnet", "content"), ("tag", "tags"), ("importnace", "importance"), ("ref", "refs")] {
            assert_eq!(suggestion(given, APPEND), Some(meant), "{given}");
        }
    }

    #[test]
    fn far_names_and_aliases_of_absent_fields_are_not() {
        for given in ["storage_adapter", "metadata", "query", "xyz", "timestamp", "signature"] {
            assert_eq!(suggestion(given, APPEND), None, "{given}");
        }
        assert_eq!(suggestion("query", &["chain_key", "text", "limit"]), Some("text"));
        assert_eq!(suggestion("limt", &["chain_key", "text", "limit"]), Some("limit"));
    }
}
