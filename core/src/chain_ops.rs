//! Operations over whole chains, as MentisDB 0.10 names them: branching a
//! new chain off a thought of another, and merging one chain into another.
//!
//! - [`MentisDb::branch_from`] creates chain `branch` whose first thought (a
//!   `StateSnapshot` by agent `mentisdb`, importance 0.5) records where it
//!   branched: content `Branch from chain '<source>' at thought <id>` and a
//!   `BranchesFrom` relation to that thought in the source chain. The source
//!   is not changed. The branch key must not be in use.
//! - [`MentisDb::merge_chains`] appends every thought of `source` to
//!   `target` (created when absent) in order, keeping id, type, role,
//!   content, importance, confidence, tags and concepts, then deletes
//!   `source`. Keeping ids keeps what records name by id (the facts a fact
//!   closes, the review a decision decides) and makes a retried merge answer
//!   what it already copied as replays (not counted as copied); a copy
//!   whose id the target holds as another thought gets a new id. Review
//!   decisions the source does not count are not copied; an undecided
//!   review's deadline starts again at the merge (copies are stamped then).
//!   Refs, relations, sessions and signatures are chain-local (or bind the
//!   source chain) and are not carried. Each source agent is written as
//!   the closest agent id the target already has (Jaccard similarity of
//!   their character sets; ties go to the target agent with more
//!   thoughts, then to the smaller id), or as itself when the target has
//!   none. Forgotten thoughts have no content left and are not copied. The
//!   source is deleted only after every append succeeded, and only when
//!   nothing was appended to it meanwhile (what was is copied first), so no
//!   acknowledged append is lost; an append racing the deletion fails with
//!   `not_found`.

use crate::chain::{Chain, NewThought, RelationInput};
use crate::db::MentisDb;
use crate::error::{AppendError, ToolError};
use crate::thought::{RelationKind, ThoughtType};
use std::collections::{BTreeMap, BTreeSet};

/// Most ancestor chains a branch's ranked search follows.
const MAX_ANCESTRY: usize = 16;

/// The agent id of the thought that starts a branch.
pub const BRANCH_AGENT_ID: &str = "mentisdb";

/// What [`MentisDb::branch_from`] created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Branched {
    /// The id of the branch chain's first thought.
    pub genesis_thought_id: String,
}

/// What [`MentisDb::merge_chains`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Merged {
    /// Thoughts appended to the target chain.
    pub thoughts_copied: usize,
    /// Source agents written under a different (target) agent id.
    pub agents_remapped: usize,
}

impl MentisDb {
    /// The chains chain `key` branched from, nearest first: a chain's
    /// genesis `BranchesFrom` relation names its parent (MentisDB 0.10's
    /// ancestry), followed up to [`MAX_ANCESTRY`] levels. A parent that
    /// does not exist or is refused ends the walk; a cycle stops it.
    pub fn ancestor_keys(&self, key: &str) -> Result<Vec<String>, ToolError> {
        let mut out: Vec<String> = Vec::new();
        let mut at = key.to_string();
        for _ in 0..MAX_ANCESTRY {
            let parent = self.with_chain(&at, |c| c.and_then(Chain::branched_from).map(str::to_string));
            match parent {
                Ok(Some(p)) if p != key && !out.contains(&p) => {
                    out.push(p.clone());
                    at = p;
                }
                _ => break,
            }
        }
        Ok(out)
    }

    /// Creates chain `branch` starting at thought `thought_id` of chain
    /// `source` (see the module docs).
    pub fn branch_from(&self, source: &str, thought_id: &str, branch: &str) -> Result<Branched, ToolError> {
        if source == branch {
            return Err(ToolError::invalid("mentisdb_branch_from", "branch_chain_key must differ from source_chain_key"));
        }
        let found = self.with_chain(source, |c| c.map(|c| c.by_id(thought_id).is_some()))?;
        match found {
            None => return Err(ToolError::NotFound(format!("chain '{source}' does not exist"))),
            Some(false) => return Err(ToolError::NotFound(format!("thought {thought_id} not found in chain '{source}'"))),
            Some(true) => {}
        }
        if self.with_chain(branch, |c| c.is_some())? {
            return Err(ToolError::Conflict(format!("chain '{branch}' already exists; choose an unused branch_chain_key")));
        }
        let mut first = NewThought::new(BRANCH_AGENT_ID, ThoughtType::StateSnapshot, &format!("Branch from chain '{source}' at thought {thought_id}"));
        first.importance = Some(0.5);
        first.relations = vec![RelationInput { kind: RelationKind::BranchesFrom, target_id: Some(thought_id.to_string()), target_index: None, chain_key: Some(source.to_string()) }];
        // Only into an empty chain: two branches racing for one key get one winner.
        let genesis = self.append_when(branch, None, first, |c| c.is_empty())?;
        let genesis = genesis.ok_or_else(|| ToolError::Conflict(format!("chain '{branch}' already exists; choose an unused branch_chain_key")))?;
        Ok(Branched { genesis_thought_id: genesis.id.to_string() })
    }

    /// Appends every thought of `source` to `target` and deletes `source`
    /// (see the module docs).
    pub fn merge_chains(&self, source: &str, target: &str) -> Result<Merged, ToolError> {
        if source == target {
            return Err(ToolError::invalid("mentisdb_merge_chains", "source and target chain must differ"));
        }
        let mut remap: BTreeMap<String, String> = BTreeMap::new();
        let mut merged = Merged { thoughts_copied: 0, agents_remapped: 0 };
        let mut copied_up_to = 0;
        // Copy, then delete the source only if nothing was appended to it
        // meanwhile; otherwise copy what came and try again.
        loop {
            let (copies, len) = self
                .with_chain(source, |c| c.map(|c| (c.thoughts().range(copied_up_to..).filter(|t| carried(c, t)).map(NewThought::copy_of).collect::<Vec<_>>(), c.len())))?
                .ok_or_else(|| ToolError::NotFound(format!("chain '{source}' does not exist")))?;
            let new_agents: BTreeSet<String> = crate::sorting::set_from(copies.iter().map(|t| t.agent_id.clone()).filter(|a| !remap.contains_key(a)));
            if !new_agents.is_empty() {
                let counts = self.agent_thought_counts(target)?;
                for agent in new_agents {
                    let to = closest_agent(&agent, &counts);
                    merged.agents_remapped += usize::from(to != agent);
                    remap.insert(agent, to);
                }
            }
            for mut copy in copies {
                if let Some(to) = remap.get(&copy.agent_id) {
                    copy.agent_id = to.clone();
                }
                // The source's id, unless the target holds that id as
                // another thought (a client's idempotency key reused, say):
                // then a new one. A copy already there is a replay.
                let written = match self.append_reporting(target, copy.clone()) {
                    Err(ToolError::Append(AppendError::Conflict { .. } | AppendError::Forgotten { .. })) => {
                        copy.thought_id = None;
                        self.append_reporting(target, copy)?
                    }
                    other => other?,
                };
                merged.thoughts_copied += usize::from(!written.replay);
            }
            copied_up_to = len;
            if self.delete_chain_when(source, |c| c.len() == len)?.is_some() {
                return Ok(merged);
            }
        }
    }

    /// Every agent id chain `key` knows (registered or seen), with its thought count.
    fn agent_thought_counts(&self, key: &str) -> Result<BTreeMap<String, usize>, ToolError> {
        self.with_chain(key, |c| {
            let mut counts = BTreeMap::new();
            if let Some(c) = c {
                for a in c.agents().records() {
                    counts.insert(a.agent_id.clone(), 0);
                }
                for t in c.thoughts() {
                    *counts.entry(t.agent_id.to_string()).or_insert(0) += 1;
                }
            }
            counts
        })
    }
}

impl MentisDb {
    /// Appends every thought of a `MEMORY.md` (ours or 0.10's layout, see
    /// `markdown_import.rs`) to chain `key`, in exported order; a thought
    /// whose line names no agent is written as `default_agent_id`. Returns
    /// the new thoughts' indices. Stops at the first append that fails,
    /// saying how many were imported before it. Claim records are the
    /// source chain's (its leases stay there) and are skipped; the engine's
    /// own tags (`mentisdb:*`) are dropped, as a merge drops them.
    pub fn import_memory_markdown(&self, key: &str, markdown: &str, default_agent_id: &str) -> Result<Vec<u64>, ToolError> {
        let mut imported = Vec::new();
        for item in crate::markdown_import::parse_memory_markdown(markdown) {
            let mut t = item.thought;
            if t.agent_id == crate::claims::COORDINATOR && t.tags.iter().any(|tag| tag == crate::claims::CLAIM_TAG) {
                continue;
            }
            t.tags.retain(|tag| !tag.starts_with(crate::claims::RESERVED_TAG_PREFIX));
            if t.agent_id.is_empty() {
                t.agent_id = default_agent_id.to_string();
            }
            match self.append(key, t) {
                Ok(stored) => imported.push(stored.index),
                Err(e) => {
                    return Err(ToolError::invalid(
                        "mentisdb_import_memory_markdown",
                        format!("thought #{} of the Markdown was refused after {} were imported: {e}", item.exported_index, imported.len()),
                    ))
                }
            }
        }
        Ok(imported)
    }
}

/// Whether a merge carries thought `t` of chain `c`: not a forgotten
/// thought (no content left), not a claim record (a lease belongs to its
/// store), not a review decision the source does not count (a late or
/// refused one would count in the target, its copy stamped at merge time).
fn carried(c: &crate::Chain, t: &crate::Thought) -> bool {
    let uncounted_decision = matches!(crate::reviews::ReviewRecord::of(t), Some(crate::reviews::ReviewRecord::Decision { .. })) && !c.reviews().decided_by_thought(&t.id.as_text());
    !t.is_forgotten() && crate::claims::ClaimRecord::of(t).is_none() && !uncounted_decision
}

impl NewThought {
    /// The parts of `t` a merge carries into another chain.
    fn copy_of(t: &crate::Thought) -> NewThought {
        let mut n = NewThought::new(&t.agent_id, t.thought_type, &t.content);
        n.thought_id = Some(t.id.to_string());
        n.agent_name = Some(t.agent_name.to_string());
        n.agent_owner = t.agent_owner().map(str::to_string);
        n.role = t.role;
        n.importance = Some(t.importance);
        n.confidence = t.confidence();
        // The engine's own marks (claims, fences) belong to the source chain.
        n.tags = t.tags.iter().filter(|t| !t.starts_with(crate::claims::RESERVED_TAG_PREFIX)).map(|t| t.to_string()).collect();
        n.concepts = t.concepts.iter().map(|c| c.to_string()).collect();
        n
    }
}

/// The target agent `agent` is written as: itself when the target has it,
/// else the most similar target agent by character-set Jaccard similarity
/// (ties: more thoughts, then the smaller id), else itself.
fn closest_agent(agent: &str, target_counts: &BTreeMap<String, usize>) -> String {
    if target_counts.contains_key(agent) {
        return agent.to_string();
    }
    // Ids are short (`limits::MAX_KEY_BYTES`): a list searched linearly is
    // set enough, and the browser's module carries no `BTreeSet<char>` for it.
    fn distinct_chars(s: &str) -> Vec<char> {
        let mut chars = Vec::new();
        for c in s.chars() {
            if !chars.contains(&c) {
                chars.push(c);
            }
        }
        chars
    }
    let chars = distinct_chars(agent);
    let jaccard = |other: &str| {
        let o = distinct_chars(other);
        let shared = chars.iter().filter(|c| o.contains(c)).count();
        let union = chars.len() + o.len() - shared;
        if union == 0 {
            0.0
        } else {
            shared as f64 / union as f64
        }
    };
    target_counts
        .iter()
        .map(|(id, count)| (jaccard(id), *count, id))
        // BTreeMap order is by id, so max_by keeps the last of equals: compare ids reversed.
        .max_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(b.2.cmp(a.2)))
        .map_or_else(|| agent.to_string(), |(_, _, id)| id.clone())
}

#[cfg(test)]
mod tests {
    use super::closest_agent;
    use std::collections::BTreeMap;

    #[test]
    fn agents_map_to_the_most_similar_target_agent() {
        let counts: BTreeMap<String, usize> = [("planner".to_string(), 3), ("reviewer".to_string(), 1), ("rev".to_string(), 9)].into_iter().collect();
        assert_eq!(closest_agent("planner", &counts), "planner");
        assert_eq!(closest_agent("planner-2", &counts), "planner");
        assert_eq!(closest_agent("reviewr", &counts), "reviewer");
        assert_eq!(closest_agent("x", &BTreeMap::new()), "x");
        // Equal similarity: more thoughts wins.
        let tie: BTreeMap<String, usize> = [("ab".to_string(), 1), ("ba".to_string(), 5)].into_iter().collect();
        assert_eq!(closest_agent("abc", &tie), "ba");
    }
}
