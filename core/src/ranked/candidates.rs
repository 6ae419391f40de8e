//! The candidates of one ranked query: which thoughts the query sees, a
//! score accumulator for every thought a stage touches (in the order the
//! stages first touched them), and the one best-first order every stage
//! ranks by.

use std::cmp::Ordering;

/// Best first: the higher score first, and on a tie the newer thought (the
/// higher index). Every ranking of `(score, thought)` pairs in ranked
/// retrieval uses this order, so ties break alike everywhere.
pub(crate) fn best_first(a: &(f32, u32), b: &(f32, u32)) -> Ordering {
    b.0.total_cmp(&a.0).then(b.1.cmp(&a.1))
}

/// Keeps the `k` best of `v` by [`best_first`] (in no particular order)
/// when it holds more; `k` must be at least 1.
pub(crate) fn keep_best(v: &mut Vec<(f32, u32)>, k: usize) {
    if v.len() > k {
        v.select_nth_unstable_by(k - 1, best_first);
        v.truncate(k);
    }
}

/// Which thoughts one query sees, as two tests on a thought.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scope<E, A> {
    /// Whether the thought exists for the query (`as_of`): only such
    /// thoughts receive context, are walked through, or lend a stretch.
    pub(crate) exists: E,
    /// Whether the thought may be a result and lend its score: it exists,
    /// is not retired (unless asked for) and passes the query's filter.
    pub(crate) admit: A,
}

impl<E: Fn(u32) -> bool, A: Fn(u32) -> bool> Scope<E, A> {
    /// See [`Scope::exists`](field@Scope::exists).
    pub(crate) fn exists(&self, doc: u32) -> bool {
        (self.exists)(doc)
    }

    /// See [`Scope::admit`](field@Scope::admit).
    pub(crate) fn admits(&self, doc: u32) -> bool {
        (self.admit)(doc)
    }
}

/// What the stages found for one thought.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Acc {
    pub(crate) doc: u32,
    pub(crate) lexical: f32,
    pub(crate) graph: f32,
    pub(crate) relation: f32,
    pub(crate) context: f32,
    pub(crate) stretch: f32,
    pub(crate) expansion: f32,
    pub(crate) vector: Option<f32>,
    /// Query terms matched (bit `i`: the `i`-th query term).
    pub(crate) terms: u64,
    /// Query terms matched through a word of similar meaning.
    pub(crate) expanded: u64,
    /// The expansion word that scored most here, and its score.
    pub(crate) expansion_word: u32,
    pub(crate) expansion_best: f32,
    /// Fields a query term matched (bit `f`: [`super::index::Field`] `f`).
    pub(crate) fields: u8,
    /// A query term matched the agent field.
    pub(crate) names_agent: bool,
}

impl Acc {
    /// What the thought scored by matching the query itself (lexical,
    /// expansion and vector): what it lends its neighbours and passes along
    /// the graph.
    pub(crate) fn direct(&self) -> f32 {
        self.lexical + self.expansion + self.vector.unwrap_or(0.0)
    }
}

/// Per-query accumulators, only for the thoughts a query touches.
pub(crate) struct Accumulators {
    /// Thought -> position in `accs` (`u32::MAX`: untouched).
    slots: Vec<u32>,
    /// In the order the thoughts were first touched.
    pub(crate) accs: Vec<Acc>,
    /// How graph expansion reached thoughts (`graph.rs`), by thought.
    pub(crate) graph: std::collections::BTreeMap<u32, GraphTrace>,
}

/// How graph expansion reached one thought: the seeds (direct matches)
/// whose walks reached it, the edge kinds on those walks' paths to it, and
/// the path of the walk that gave it its best share (seed first, the
/// thought last). What MentisDB 0.10 reports as a hit's `graph_*` fields.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct GraphTrace {
    pub(crate) best_share: f32,
    pub(crate) path: Vec<u32>,
    pub(crate) seeds: u32,
    pub(crate) kinds: std::collections::BTreeSet<&'static str>,
}

impl Accumulators {
    /// Accumulators for a chain of `n` thoughts, none touched.
    pub(crate) fn new(n: usize) -> Self {
        Accumulators { slots: vec![u32::MAX; n], accs: Vec::new(), graph: Default::default() }
    }

    /// Thought `doc`'s accumulator, if a stage touched it.
    pub(crate) fn get(&self, doc: u32) -> Option<&Acc> {
        let s = self.slots[doc as usize];
        (s != u32::MAX).then(|| &self.accs[s as usize])
    }

    /// Thought `doc`'s accumulator, touching it (a candidate from now on).
    pub(crate) fn entry(&mut self, doc: u32) -> &mut Acc {
        let s = self.slots[doc as usize];
        if s != u32::MAX {
            return &mut self.accs[s as usize];
        }
        self.slots[doc as usize] = self.accs.len() as u32;
        self.accs.push(Acc { doc, ..Acc::default() });
        self.accs.last_mut().expect("just pushed")
    }

    /// The best lexical score of any candidate (0 when none matched).
    pub(crate) fn best_lexical(&self) -> f32 {
        self.accs.iter().map(|a| a.lexical).fold(0.0f32, f32::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_first_ranks_by_score_then_newer() {
        let mut v = vec![(1.0, 3), (2.0, 1), (1.0, 7), (f32::NEG_INFINITY, 9), (2.0, 0)];
        v.sort_by(best_first);
        assert_eq!(v, vec![(2.0, 1), (2.0, 0), (1.0, 7), (1.0, 3), (f32::NEG_INFINITY, 9)]);
    }

    #[test]
    fn keep_best_keeps_the_k_best() {
        let mut v: Vec<(f32, u32)> = (0..10).map(|d| ((d % 4) as f32, d)).collect();
        keep_best(&mut v, 3);
        v.sort_by(best_first);
        assert_eq!(v, vec![(3.0, 7), (3.0, 3), (2.0, 6)]);
        let mut short = vec![(1.0, 0)];
        keep_best(&mut short, 3);
        assert_eq!(short, vec![(1.0, 0)]);
    }

    #[test]
    fn accumulators_touch_each_thought_once_in_order() {
        let mut acc = Accumulators::new(5);
        assert!(acc.get(2).is_none());
        acc.entry(4).lexical += 1.0;
        acc.entry(2).lexical += 2.0;
        acc.entry(4).lexical += 0.5;
        assert_eq!(acc.accs.iter().map(|a| (a.doc, a.lexical)).collect::<Vec<_>>(), vec![(4, 1.5), (2, 2.0)]);
        assert_eq!(acc.best_lexical(), 2.0);
        assert_eq!(Accumulators::new(3).best_lexical(), 0.0);
    }
}
