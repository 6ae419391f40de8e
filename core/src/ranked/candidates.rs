//! The candidates of one ranked query: which thoughts the query sees, a
//! score accumulator for every thought a stage touches (in the order the
//! stages first touched them), and the one best-first order every stage
//! ranks by.

use std::cmp::Ordering;

/// Candidates that go on from the matching stages (terms, phrases,
/// expansion) to the vector, context and graph stages: the best by what
/// they matched. A common word matches a good share of a large chain (a
/// tenth of a million thoughts), and a match that far down cannot reach the
/// first results by its neighbours' context; the thoughts nearest by
/// meaning join in the vector stage whatever they matched. Chains of up to
/// this many thoughts are never cut.
pub const MAX_MATCH_CANDIDATES: usize = 5_000;

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
    /// Whether the query's scope admits the thought ([`Scope::admits`]),
    /// asked once per candidate by [`Accumulators::settle_admission`];
    /// `None` until then.
    pub(crate) admission: Option<bool>,
}

impl Acc {
    /// What the thought scored by matching the query itself (lexical,
    /// expansion and vector): what it lends its neighbours and passes along
    /// the graph.
    pub(crate) fn direct(&self) -> f32 {
        self.lexical + self.expansion + self.vector.unwrap_or(0.0)
    }

    /// Whether the query's scope admits the thought. Read only after
    /// [`Accumulators::settle_admission`] ran since the thought was touched.
    pub(crate) fn admitted(&self) -> bool {
        self.admission.expect("admission is settled before a stage reads it")
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

    /// Room for `more` candidates beside those touched so far.
    pub(crate) fn reserve(&mut self, more: usize) {
        self.accs.reserve(more);
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

    /// Keeps only the `cap` candidates that matched best so far (by
    /// [`Acc::direct`], ties to the newer thought), in the order they were
    /// touched, and returns the thoughts it dropped (none when there are at
    /// most `cap`).
    pub(crate) fn keep_best_matches(&mut self, cap: usize) -> Vec<u32> {
        if self.accs.len() <= cap || cap == 0 {
            return Vec::new();
        }
        let mut ranked: Vec<(f32, u32)> = self.accs.iter().map(|a| (a.direct(), a.doc)).collect();
        keep_best(&mut ranked, cap);
        let mut kept = vec![false; self.slots.len()];
        ranked.iter().for_each(|(_, d)| kept[*d as usize] = true);
        let mut dropped = Vec::with_capacity(self.accs.len() - cap);
        self.accs.retain(|a| {
            kept[a.doc as usize] || {
                dropped.push(a.doc);
                false
            }
        });
        dropped.iter().for_each(|d| self.slots[*d as usize] = u32::MAX);
        for (slot, a) in self.accs.iter().enumerate() {
            self.slots[a.doc as usize] = slot as u32;
        }
        dropped
    }

    /// Asks `scope` once for every candidate touched since the last call
    /// whether it admits the thought ([`Acc::admitted`]): a query asks it of
    /// the same candidates in several stages (who lends context, who seeds
    /// the graph, who is scored, whose matches count in a stretch).
    pub(crate) fn settle_admission<E: Fn(u32) -> bool, A: Fn(u32) -> bool>(&mut self, scope: &Scope<E, A>) {
        for a in self.accs.iter_mut().filter(|a| a.admission.is_none()) {
            a.admission = Some(scope.admits(a.doc));
        }
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

    #[test]
    fn keeping_the_best_matches_drops_the_rest_and_keeps_the_order() {
        let mut acc = Accumulators::new(6);
        for (doc, score) in [(5, 1.0), (0, 3.0), (3, 1.0), (1, 0.5), (2, 2.0)] {
            acc.entry(doc).lexical = score;
        }
        acc.entry(1).expansion = 2.0;
        assert!(acc.keep_best_matches(5).is_empty(), "at most the cap: nothing dropped");
        let mut dropped = acc.keep_best_matches(3);
        dropped.sort();
        assert_eq!(dropped, vec![3, 5], "1.0 and 1.0 lose to 3.0, 2.5 (lexical + expansion) and 2.0");
        assert_eq!(acc.accs.iter().map(|a| a.doc).collect::<Vec<_>>(), vec![0, 1, 2], "first-touched order kept");
        assert!(acc.get(3).is_none() && acc.get(5).is_none());
        assert_eq!(acc.get(2).unwrap().lexical, 2.0);
        acc.entry(5).lexical = 9.0;
        assert_eq!(acc.accs.last().unwrap().doc, 5, "a dropped thought can be touched again");
        let mut tie = Accumulators::new(3);
        (0..3).for_each(|d| tie.entry(d).lexical = 1.0);
        assert_eq!(tie.keep_best_matches(1), vec![0, 1], "ties go to the newer thought");
    }
}
