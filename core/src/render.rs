//! Rendering thoughts for people and prompts.
//!
//! **Recent context** (`mentisdb_recent_context`): a plain-text block meant to
//! be pasted at the top of a model prompt. One header line, then one entry per
//! thought, oldest first:
//!
//! ```text
//! MentisDB recent context for chain `project-alpha`: the last 2 of 9 thoughts, oldest first.
//!
//! [#7] 2026-11-22T09:30:00.000Z Plan/Memory by Planner (agent-42), importance 0.82
//! Use a staged deployment with a canary instance before global rollout.
//! tags: deployment, rollout | concepts: staged-rollout | refs: #3
//! ```
//!
//! **Memory Markdown** (`mentisdb_memory_markdown`): a `MEMORY.md`-style
//! document. A title and a one-line provenance note, then one `##` section per
//! thought type present (in the spec's type order), each listing its thoughts
//! in append order as bullets with their index, agent, time, scores and labels.

use crate::thought::{Thought, ThoughtType};
use std::fmt::Write;

fn labels(t: &Thought) -> String {
    let mut parts = Vec::new();
    if !t.tags.is_empty() {
        parts.push(format!("tags: {}", t.tags.join(", ")));
    }
    if !t.concepts.is_empty() {
        parts.push(format!("concepts: {}", t.concepts.join(", ")));
    }
    if !t.refs().is_empty() {
        parts.push(format!("refs: {}", t.refs().iter().map(|r| format!("#{r}")).collect::<Vec<_>>().join(", ")));
    }
    if !t.relations().is_empty() {
        let rels: Vec<String> = t
            .relations()
            .iter()
            .map(|r| match (r.target_index, &r.chain_key) {
                (Some(i), None) => format!("{} #{i}", r.kind),
                (_, Some(c)) => format!("{} {}@{c}", r.kind, r.target_id),
                (None, None) => format!("{} {}", r.kind, r.target_id),
            })
            .collect();
        parts.push(format!("relations: {}", rels.join(", ")));
    }
    parts.join(" | ")
}

fn producer(t: &Thought) -> String {
    if t.agent_name == t.agent_id {
        t.agent_id.to_string()
    } else {
        format!("{} ({})", t.agent_name, t.agent_id)
    }
}

/// A thought's content as rendered: a forgotten thought says so.
fn shown_content(t: &Thought) -> &str {
    if t.is_forgotten() {
        "(forgotten)"
    } else {
        &t.content
    }
}

/// Renders the newest thoughts as a prompt snippet (`thoughts` oldest first).
pub(crate) fn recent_context(chain_key: &str, total: usize, thoughts: &[&Thought]) -> String {
    let mut out = String::new();
    if thoughts.is_empty() {
        let _ = writeln!(out, "MentisDB recent context for chain `{chain_key}`: no thoughts recorded yet.");
        return out;
    }
    let _ = writeln!(out, "MentisDB recent context for chain `{chain_key}`: the last {} of {total} thoughts, oldest first.", thoughts.len());
    for t in thoughts {
        let _ = writeln!(out);
        let _ = write!(out, "[#{}] {} {}/{} by {}, importance {:.2}", t.index, t.timestamp(), t.thought_type, t.role, producer(t), t.importance);
        if let Some(c) = t.confidence() {
            let _ = write!(out, ", confidence {c:.2}");
        }
        let _ = writeln!(out);
        let _ = writeln!(out, "{}", shown_content(t).trim_end());
        let l = labels(t);
        if !l.is_empty() {
            let _ = writeln!(out, "{l}");
        }
    }
    out
}

/// Renders thoughts (append order) as `MEMORY.md`-style Markdown.
pub(crate) fn memory_markdown(chain_key: &str, total: usize, head_hash: Option<&str>, thoughts: &[&Thought]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# MEMORY: `{chain_key}`");
    let _ = writeln!(out);
    let head = head_hash.map(|h| format!(", head `{}`", &h[..h.len().min(16)])).unwrap_or_default();
    let _ = writeln!(out, "_Exported from MentisDB: {} of {total} thoughts{head}._", thoughts.len());
    for tt in ThoughtType::ALL {
        let group: Vec<&&Thought> = thoughts.iter().filter(|t| t.thought_type == *tt).collect();
        if group.is_empty() {
            continue;
        }
        let _ = writeln!(out);
        let _ = writeln!(out, "## {tt}");
        let _ = writeln!(out);
        for t in group {
            let content = shown_content(t).trim().replace('\n', "\n  ");
            let mut meta = format!("#{} {}, {}, {}, importance {:.2}", t.index, t.role, producer(t), t.timestamp(), t.importance);
            if let Some(c) = t.confidence() {
                let _ = write!(meta, ", confidence {c:.2}");
            }
            let l = labels(t);
            if !l.is_empty() {
                let _ = write!(meta, "; {l}");
            }
            let _ = writeln!(out, "- {content}\n  _({meta})_");
        }
    }
    out
}

/// Renders a thought's causal context (index order) in MentisDB 0.10's
/// bootstrap layout: a `RESTORED CONTEXT` banner, then per thought
/// `[#index] Type / Role (agent)`, its content, and indented confidence,
/// importance, tags, concepts and refs; empty for no thoughts.
pub(crate) fn bootstrap_prompt(thoughts: &[&Thought]) -> String {
    if thoughts.is_empty() {
        return String::new();
    }
    let mut out = String::from("=== RESTORED CONTEXT (from MentisDb) ===\n\n");
    for t in thoughts {
        let mut agent = if t.agent_name.trim().is_empty() || t.agent_name == t.agent_id { t.agent_id.to_string() } else { format!("{} [{}]", t.agent_name, t.agent_id) };
        if let Some(owner) = t.agent_owner().filter(|o| !o.trim().is_empty()) {
            let _ = write!(agent, " owned by {owner}");
        }
        let _ = writeln!(out, "[#{}] {} / {} ({agent})\n{}", t.index, t.thought_type, t.role, shown_content(t));
        if let Some(c) = t.confidence() {
            let _ = writeln!(out, "  confidence: {c:.2}");
        }
        let _ = writeln!(out, "  importance: {:.2}", t.importance);
        if !t.tags.is_empty() {
            let _ = writeln!(out, "  tags: {}", t.tags.join(", "));
        }
        if !t.concepts.is_empty() {
            let _ = writeln!(out, "  concepts: {}", t.concepts.join(", "));
        }
        if !t.refs().is_empty() {
            let _ = writeln!(out, "  refs: {:?}", t.refs());
        }
    }
    out.push_str("\n=== END RESTORED CONTEXT ===\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::tests::golden_thought;

    #[test]
    fn recent_context_lists_labels_and_scores() {
        let t = golden_thought();
        let p = recent_context("k", 9, &[&t]);
        assert!(p.starts_with("MentisDB recent context for chain `k`: the last 1 of 9 thoughts, oldest first."));
        assert!(p.contains("[#1] 2026-11-22T09:30:00.000Z Constraint/Memory by Planner (agent-42), importance 0.95, confidence 0.98"), "{p}");
        assert!(p.contains("tags: security, ops | concepts: offline-mode | refs: #0 | relations: Supports #0"), "{p}");
        assert!(recent_context("k", 0, &[]).contains("no thoughts recorded yet"));
    }

    #[test]
    fn markdown_groups_by_type_and_indents_multiline_content() {
        let mut t = golden_thought();
        t.content = "line one\nline two".into();
        let md = memory_markdown("k", 1, Some("abcdef0123456789ffff"), &[&t]);
        assert!(md.contains("_Exported from MentisDB: 1 of 1 thoughts, head `abcdef0123456789`._"), "{md}");
        assert!(md.contains("## Constraint\n\n- line one\n  line two\n  _(#1 Memory, Planner (agent-42)"), "{md}");
    }
}
