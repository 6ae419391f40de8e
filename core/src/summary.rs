//! Summary candidates (`mentisdb_summary_candidates`, MentisDB 0.10.10):
//! windows of thoughts a caller may summarize and append later. Nothing is
//! generated or written here.
//!
//! The source thoughts (already filtered by the caller, in append order)
//! are split into groups — by session and/or agent as configured — and
//! each group into windows of `window_size` thoughts, consecutive windows
//! sharing `overlap` thoughts. A window whose every thought is already the
//! target of a same-chain `Summarizes` relation is left out. Candidates are
//! ordered by first index, then last index, then group.

use crate::chain::Chain;
use crate::thought::RelationKind;
use std::collections::{BTreeMap, BTreeSet};

/// How candidates are cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SummaryConfig {
    /// Thoughts per window (0: no candidates).
    pub(crate) window_size: usize,
    /// Thoughts shared by consecutive windows of a group.
    pub(crate) overlap: usize,
    /// Thoughts of different sessions never share a window.
    pub(crate) by_session: bool,
    /// Thoughts of different agents never share a window.
    pub(crate) by_agent: bool,
}

impl Default for SummaryConfig {
    /// 0.10.10's defaults: windows of 50, no overlap, grouped by session.
    fn default() -> Self {
        SummaryConfig { window_size: 50, overlap: 0, by_session: true, by_agent: false }
    }
}

/// What a window's thoughts share: `(session_id, agent_id)`, each `None`
/// when not grouped by it.
pub(crate) type Group = (Option<String>, Option<String>);

/// One window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Candidate {
    /// The sources' indices, ascending.
    pub(crate) indices: Vec<u64>,
    /// What the sources share.
    pub(crate) group: Group,
}

/// The candidates over `sources` (indices of `chain`, ascending).
pub(crate) fn summary_candidates(chain: &Chain, sources: &[u64], config: SummaryConfig) -> Vec<Candidate> {
    if sources.is_empty() || config.window_size == 0 {
        return Vec::new();
    }
    let covered: BTreeSet<u64> = crate::sorting::set_from(
        chain.thoughts().iter().flat_map(|t| t.relations().iter()).filter(|r| r.kind == RelationKind::Summarizes && r.chain_key.is_none()).filter_map(|r| r.target_index),
    );
    let mut groups: BTreeMap<Group, Vec<u64>> = BTreeMap::new();
    for &i in sources {
        let t = &chain.thoughts()[i as usize];
        let group = (t.session_id().filter(|_| config.by_session).map(str::to_string), config.by_agent.then(|| t.agent_id.to_string()));
        groups.entry(group).or_default().push(i);
    }
    let step = config.window_size.saturating_sub(config.overlap).max(1);
    let mut out = Vec::new();
    for (group, members) in groups {
        let mut start = 0;
        while start < members.len() {
            let end = (start + config.window_size).min(members.len());
            let window = &members[start..end];
            if !window.iter().all(|i| covered.contains(i)) {
                out.push(Candidate { indices: window.to_vec(), group: group.clone() });
            }
            if end == members.len() {
                break;
            }
            start += step;
        }
    }
    crate::sorting::sort_by(&mut out, |a, b| (a.indices[0], a.indices.last(), &a.group).cmp(&(b.indices[0], b.indices.last(), &b.group)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::{NewThought, RelationInput};
    use crate::record::ChainFormat;
    use crate::thought::ThoughtType;

    /// `(agent, session, summarizes)` per thought.
    fn chain(items: &[(&str, Option<&str>, &[u64])]) -> Chain {
        let mut c = Chain::new("s", ChainFormat::Binary);
        for (i, (agent, session, summarizes)) in items.iter().enumerate() {
            let mut n = NewThought::new(agent, ThoughtType::Finding, "x");
            n.session_id = session.map(str::to_string);
            n.relations = summarizes.iter().map(|&to| RelationInput { kind: RelationKind::Summarizes, target_id: None, target_index: Some(to), chain_key: None }).collect();
            let t = c.prepare_append(n, format!("2026-01-01T00:{i:02}:00.000Z"), format!("id-{i}"), [0; 16]).unwrap();
            c.commit(t);
        }
        c
    }

    fn windows(c: &[Candidate]) -> Vec<Vec<u64>> {
        c.iter().map(|c| c.indices.clone()).collect()
    }

    #[test]
    fn windows_overlap_and_split_by_session() {
        let c = chain(&[("a", Some("s1"), &[]), ("a", Some("s1"), &[]), ("b", Some("s2"), &[]), ("b", Some("s1"), &[]), ("a", Some("s1"), &[])]);
        let all: Vec<u64> = (0..5).collect();
        let by_session = summary_candidates(&c, &all, SummaryConfig { window_size: 2, overlap: 1, ..SummaryConfig::default() });
        assert_eq!(windows(&by_session), vec![vec![0, 1], vec![1, 3], vec![2], vec![3, 4]]);
        assert_eq!(by_session[2].group, (Some("s2".into()), None));
        let one_stream = summary_candidates(&c, &all, SummaryConfig { window_size: 3, overlap: 0, by_session: false, by_agent: false });
        assert_eq!(windows(&one_stream), vec![vec![0, 1, 2], vec![3, 4]]);
        let by_agent = summary_candidates(&c, &all, SummaryConfig { window_size: 10, overlap: 0, by_session: false, by_agent: true });
        assert_eq!(windows(&by_agent), vec![vec![0, 1, 4], vec![2, 3]]);
        assert!(summary_candidates(&c, &all, SummaryConfig { window_size: 0, ..SummaryConfig::default() }).is_empty());
    }

    #[test]
    fn windows_already_summarized_are_left_out() {
        let c = chain(&[("a", None, &[]), ("a", None, &[]), ("a", None, &[]), ("a", None, &[0, 1])]);
        let got = summary_candidates(&c, &[0, 1, 2], SummaryConfig { window_size: 2, ..SummaryConfig::default() });
        assert_eq!(windows(&got), vec![vec![2]], "0 and 1 are summarized by thought 3");
    }
}
