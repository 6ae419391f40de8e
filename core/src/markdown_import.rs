//! Reading a `MEMORY.md` back into thoughts (`mentisdb_import_memory_markdown`).
//!
//! Two layouts are read, and any other line is skipped:
//!
//! - ours, as `mentisdb_memory_markdown` writes it (`render.rs`): a `## <Type>`
//!   section per thought type, each thought a bullet whose content may go on
//!   over lines indented by two spaces, closed by the line
//!   `  _(#<index> <Role>, <agent>, <timestamp>, importance <x>[, confidence <y>][; tags: …| concepts: …| refs: …| relations: …])_`
//!   where `<agent>` is `id` or `Name (id)`;
//! - MentisDB 0.10's: `- [#<index>] <Type>: <content> (agent <id>; role <Role>; importance <x>; confidence <y>; tags <a>, <b>)`.
//!
//! Thoughts are appended in the order of their `#index` (an export groups
//! them by type), so an export imported into an empty chain exports again
//! the same (times, hashes and the chain-local refs and relations aside:
//! those are not carried). Type, role and agent names are read as appends
//! read them. Thoughts the export shows as `(forgotten)` have no content
//! left and are skipped.

use crate::chain::NewThought;
use crate::thought::{ThoughtRole, ThoughtType};

/// The content our export shows for a forgotten thought.
const FORGOTTEN: &str = "(forgotten)";

/// One thought read from the Markdown, with the index it had when exported.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MarkdownThought {
    /// `#<index>` in the export (orders the import).
    pub exported_index: u64,
    /// What to append (`agent_id` empty when the line named none).
    pub thought: NewThought,
}

/// Every thought in `markdown`, ordered by exported index (stable).
pub(crate) fn parse_memory_markdown(markdown: &str) -> Vec<MarkdownThought> {
    let mut out = Vec::new();
    let mut section: Option<ThoughtType> = None;
    let mut open: Option<String> = None;
    for line in markdown.lines() {
        if let Some(content) = open.as_mut() {
            if let Some(meta) = line.strip_prefix("  _(").and_then(|m| m.strip_suffix(")_")) {
                let content = std::mem::take(content);
                open = None;
                if let Some(t) = section.and_then(|tt| ours(tt, &content, meta)) {
                    out.push(t);
                }
                continue;
            }
            if let Some(more) = line.strip_prefix("  ") {
                content.push('\n');
                content.push_str(more);
                continue;
            }
            open = None;
        }
        if let Some(title) = line.strip_prefix("## ") {
            section = ThoughtType::parse(title.trim()).ok();
        } else if let Some(t) = reference_line(line) {
            out.push(t);
        } else if let Some(first) = line.strip_prefix("- ") {
            if section.is_some() {
                open = Some(first.to_string());
            }
        }
    }
    crate::sorting::sort_by_key(&mut out, |t| t.exported_index);
    out
}

/// A bullet of our layout: its content and its closing metadata line.
fn ours(thought_type: ThoughtType, content: &str, meta: &str) -> Option<MarkdownThought> {
    let content = content.trim();
    if content.is_empty() || content == FORGOTTEN {
        return None;
    }
    let rest = meta.strip_prefix('#')?;
    let (index, rest) = rest.split_once(' ')?;
    let exported_index = index.parse().ok()?;
    let (role, rest) = rest.split_once(", ")?;
    // `<agent>, <timestamp>, importance`: the agent may hold commas, so the
    // timestamp is found from the first ", importance " preceded by one.
    let at = find_after_timestamp(rest)?;
    let (agent_and_time, scores_and_labels) = (&rest[..at], &rest[at + ", importance ".len()..]);
    let (agent, _time) = agent_and_time.rsplit_once(", ")?;
    let (scores, labels) = scores_and_labels.split_once("; ").unwrap_or((scores_and_labels, ""));
    let (importance, confidence) = match scores.split_once(", confidence ") {
        Some((i, c)) => (i, Some(c)),
        None => (scores, None),
    };
    let (agent_id, agent_name) = match agent.strip_suffix(')').and_then(|a| a.rsplit_once(" (")) {
        Some((name, id)) => (id.to_string(), Some(name.to_string())),
        None => (agent.to_string(), None),
    };
    let mut t = NewThought::new(&agent_id, thought_type, content);
    t.agent_name = agent_name;
    t.role = ThoughtRole::parse(role).ok()?;
    t.importance = score(importance);
    t.confidence = confidence.and_then(score);
    for part in labels.split(" | ") {
        if let Some(tags) = part.strip_prefix("tags: ") {
            t.tags = list(tags);
        } else if let Some(concepts) = part.strip_prefix("concepts: ") {
            t.concepts = list(concepts);
        }
    }
    Some(MarkdownThought { exported_index, thought: t })
}

/// An importance or confidence such as `0.80`. Read as a JSON number by
/// serde_json's parser, which every build has anyway: `str::parse` would
/// link the standard library's exact float tables (10 KB of them, 9 KB of
/// the browser's gzipped module) for these two numbers alone.
fn score(s: &str) -> Option<f64> {
    serde_json::from_str::<f64>(s.trim()).ok()
}

/// Where `, importance ` follows an RFC 3339 timestamp in `s`.
fn find_after_timestamp(s: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(p) = s[from..].find(", importance ") {
        let at = from + p;
        let before = &s[..at];
        let stamp = before.rsplit_once(", ").map_or(before, |(_, t)| t);
        if crate::timestamp::parse_rfc3339_millis(stamp).is_ok() {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// A line of MentisDB 0.10's layout.
fn reference_line(line: &str) -> Option<MarkdownThought> {
    let rest = line.trim().strip_prefix("- [#")?;
    let (index, rest) = rest.split_once(']')?;
    let exported_index = index.parse().ok()?;
    let (type_name, rest) = rest.trim_start().split_once(": ")?;
    let thought_type = ThoughtType::parse(type_name).ok()?;
    let (content, meta) = match reference_meta_start(rest) {
        Some(at) => (&rest[..at], &rest[at + 2..rest.len() - 1]),
        None => (rest, ""),
    };
    let content = content.trim();
    if content.is_empty() {
        return None;
    }
    let mut t = NewThought::new("", thought_type, content);
    for token in meta.split("; ") {
        let token = token.trim();
        if let Some(v) = token.strip_prefix("agent ") {
            t.agent_id = v.trim().to_string();
        } else if let Some(v) = token.strip_prefix("role ") {
            t.role = ThoughtRole::parse(v.trim()).unwrap_or(ThoughtRole::Memory);
        } else if let Some(v) = token.strip_prefix("importance ") {
            t.importance = score(v);
        } else if let Some(v) = token.strip_prefix("confidence ") {
            t.confidence = score(v);
        } else if let Some(v) = token.strip_prefix("tags ") {
            t.tags = list(v);
        }
    }
    Some(MarkdownThought { exported_index, thought: t })
}

/// The last ` (agent ` of a line ending in `)`: where 0.10's metadata starts.
fn reference_meta_start(s: &str) -> Option<usize> {
    if !s.ends_with(')') {
        return None;
    }
    s.match_indices(" (agent ").last().map(|(at, _)| at)
}

fn list(s: &str) -> Vec<String> {
    s.split(", ").map(str::trim).filter(|v| !v.is_empty()).map(str::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_layout_reads_back_with_multiline_content_and_labels() {
        let md = "# MEMORY: `k`\n\n_Exported from MentisDB: 2 of 2 thoughts._\n\n## Constraint\n\n\
                  - line one\n  line two, importance 3\n  _(#4 Memory, Planner, Inc (agent-42), 2026-11-22T09:30:00.000Z, importance 0.95, confidence 0.98; tags: security, ops | concepts: offline-mode | refs: #0)_\n\n\
                  ## Decision\n\n- use a canary\n  _(#1 Retrospective, alice, 2026-11-22T09:31:00.000Z, importance 0.50)_\n";
        let got = parse_memory_markdown(md);
        assert_eq!(got.iter().map(|t| t.exported_index).collect::<Vec<_>>(), [1, 4]);
        let c = &got[1].thought;
        assert_eq!(c.thought_type, ThoughtType::Constraint);
        assert_eq!(c.content, "line one\nline two, importance 3");
        assert_eq!((c.agent_id.as_str(), c.agent_name.as_deref()), ("agent-42", Some("Planner, Inc")));
        assert_eq!((c.importance, c.confidence), (Some(0.95), Some(0.98)));
        assert_eq!(c.tags, ["security", "ops"]);
        assert_eq!(c.concepts, ["offline-mode"]);
        let d = &got[0].thought;
        assert_eq!((d.role, d.agent_id.as_str(), d.confidence), (ThoughtRole::Retrospective, "alice", None));
    }

    #[test]
    fn the_reference_layout_reads_and_other_lines_are_skipped() {
        let md = "# MEMORY\n\nGenerated from `x` with 2 thought(s).\n\n## Knowledge\n\n\
                  - [#3] Insight: caches (like redis) help (agent bob; role Retrospective; importance 0.80; confidence 0.90; tags perf, cache)\n\
                  - [#0] FactLearned: no metadata here\n- [#9] NotAType: skipped\n- a stray bullet\nrandom text\n";
        let got = parse_memory_markdown(md);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].thought.content, "no metadata here");
        assert_eq!(got[0].thought.agent_id, "");
        let i = &got[1].thought;
        assert_eq!(i.content, "caches (like redis) help");
        assert_eq!((i.agent_id.as_str(), i.role, i.importance, i.confidence), ("bob", ThoughtRole::Retrospective, Some(0.8), Some(0.9)));
        assert_eq!(i.tags, ["perf", "cache"]);
    }

    #[test]
    fn forgotten_thoughts_are_not_imported() {
        let md = "## Idea\n\n- (forgotten)\n  _(#0 Memory, a, 2026-11-22T09:30:00.000Z, importance 0.50)_\n";
        assert!(parse_memory_markdown(md).is_empty());
    }
}
