//! The causal context of a thought: everything it builds on, transitively.
//!
//! **Contract.** [`Chain::causal_context`] starts at one thought and follows
//! its `refs` and its relations to thoughts of the same chain (a relation
//! naming another chain is not followed), then theirs, until nothing new is
//! reached; the result is every reached thought once, the start included,
//! in index order. Unbounded (a chain is acyclic by construction: refs and
//! relations point backwards), it is MentisDB 0.10's library
//! `resolve_context`, which the `mentisdb` compatibility crate serves; the
//! bounded, scored walk of the `mentisdb_resolve_context` tool is
//! `ranked/graph.rs`'s. [`Chain::bootstrap_prompt`] renders that context
//! in 0.10's "RESTORED CONTEXT" layout.

use super::Chain;
use crate::thought::Thought;

impl Chain {
    /// The thought at `index` and every thought it reaches through refs and
    /// same-chain relations, transitively, in index order; empty when no
    /// thought has that index.
    pub fn causal_context(&self, index: u64) -> Vec<&Thought> {
        let thoughts = self.thoughts();
        if index as usize >= thoughts.len() {
            return Vec::new();
        }
        let mut reached = vec![false; thoughts.len()];
        let mut stack = vec![index as usize];
        while let Some(position) = stack.pop() {
            if std::mem::replace(&mut reached[position], true) {
                continue;
            }
            let t = &thoughts[position];
            let same_chain_targets = t.relations().iter().filter(|r| r.chain_key.is_none()).filter_map(|r| r.target_index.or_else(|| self.by_id(&r.target_id).map(|x| x.index)));
            for target in t.refs().iter().copied().chain(same_chain_targets) {
                if (target as usize) < thoughts.len() && !reached[target as usize] {
                    stack.push(target as usize);
                }
            }
        }
        thoughts.iter().zip(reached).filter_map(|(t, r)| r.then_some(t)).collect()
    }

    /// The causal context of the thought at `index` rendered as MentisDB
    /// 0.10's bootstrap prompt (`=== RESTORED CONTEXT (from MentisDb) ===`,
    /// one `[#index] Type / Role (agent)` block per thought); empty when no
    /// thought has that index.
    pub fn bootstrap_prompt(&self, index: u64) -> String {
        crate::render::bootstrap_prompt(&self.causal_context(index))
    }
}

#[cfg(test)]
mod tests {
    use crate::chain::{Chain, NewThought, RelationInput};
    use crate::record::ChainFormat;
    use crate::thought::{RelationKind, ThoughtType};

    fn chain_with(specs: &[(&[u64], &[u64])]) -> Chain {
        let mut chain = Chain::new("ctx", ChainFormat::Binary);
        for (i, (refs, related)) in specs.iter().enumerate() {
            let mut input = NewThought::new("a", ThoughtType::Finding, &format!("t{i}"));
            input.refs = refs.to_vec();
            input.relations = related.iter().map(|t| RelationInput { kind: RelationKind::Supports, target_id: None, target_index: Some(*t), chain_key: None }).collect();
            let t = chain.prepare_append(input, format!("2026-01-01T00:00:0{i}.000Z"), format!("00000000-0000-4000-8000-00000000000{i}"), [i as u8; 16]).unwrap();
            chain.commit(t);
        }
        chain
    }

    #[test]
    fn follows_refs_and_relations_transitively_in_index_order() {
        // 0, 1, 2 <- 0, 3 (rel 2), 4 refs 3 and 1
        let chain = chain_with(&[(&[], &[]), (&[], &[]), (&[0], &[]), (&[], &[2]), (&[3, 1], &[])]);
        let idx = |v: Vec<&crate::thought::Thought>| v.iter().map(|t| t.index).collect::<Vec<_>>();
        assert_eq!(idx(chain.causal_context(4)), vec![0, 1, 2, 3, 4]);
        assert_eq!(idx(chain.causal_context(3)), vec![0, 2, 3]);
        assert_eq!(idx(chain.causal_context(1)), vec![1]);
        assert!(chain.causal_context(5).is_empty());
        assert_eq!(chain.bootstrap_prompt(5), "");
    }

    #[test]
    fn bootstrap_prompt_has_the_0_10_layout() {
        let chain = chain_with(&[(&[], &[]), (&[0], &[])]);
        let p = chain.bootstrap_prompt(1);
        assert_eq!(p, "=== RESTORED CONTEXT (from MentisDb) ===\n\n[#0] Finding / Memory (a)\nt0\n  importance: 0.50\n[#1] Finding / Memory (a)\nt1\n  importance: 0.50\n  refs: [0]\n\n=== END RESTORED CONTEXT ===\n");
    }
}
