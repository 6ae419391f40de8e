//! Conversational context: the thoughts next to a direct match in append
//! order, in the same conversation (same session, close in time), share in
//! its score. In a conversation the answer to a question usually sits next
//! to the turns that share the question's words (the turn that asked it,
//! the turn that named the topic).

use super::candidates::{keep_best, Acc, Accumulators, Scope};
use super::index::RankedIndex;
use super::turns::MAX_RUN;
pub use super::turns::CONTEXT_MAX_GAP_MS;

/// Share of a direct match's score lent to its neighbours in append order.
pub const CONTEXT_WEIGHT: f32 = 0.5;
/// Neighbours on each side that receive context.
pub const CONTEXT_WINDOW: u32 = 2;
/// Share kept per extra step away from the match.
pub const CONTEXT_DECAY: f32 = 0.5;
/// A match that asks a question lends this many times more to the thoughts
/// after it: a question is answered by what follows it.
pub const CONTEXT_REPLY_BOOST: f32 = 1.5;
/// Best direct matches that lend context, at most (bounds the work per query).
pub const CONTEXT_SEEDS: usize = 256;
/// Share of a match's `vector` part that counts in what it lends: a turn
/// that only resembles the question in meaning is weaker evidence that its
/// neighbours answer it than one that shares the question's words.
pub const CONTEXT_VECTOR_SHARE: f32 = 0.5;
/// What a match's `vector` part may count in what it lends, at most: this
/// many times its words' part (`lexical + expansion`). Meaning confirms a
/// match by words; alone it lends nothing. Without the cap a long turn that
/// shares a word or two with the question and resembles it in meaning (an
/// assistant's reply restating the question) lent its neighbours more than
/// the short turn stating the fact scored itself (LongMemEval).
pub const CONTEXT_VECTOR_CAP: f32 = 2.0;
/// Share of the smaller of a thought's context and its own match taken
/// back from its context ([`overlap_with_own_match`]).
pub const CONTEXT_OVERLAP: f32 = 0.25;

/// What a direct match lends its neighbours (before the weight, the decay
/// and the reply boost): `words + CONTEXT_VECTOR_SHARE * min(vector,
/// CONTEXT_VECTOR_CAP * words)`, `words` its `lexical + expansion`.
pub(crate) fn lender_score(a: &Acc) -> f32 {
    let words = a.lexical + a.expansion;
    words + CONTEXT_VECTOR_SHARE * a.vector.unwrap_or(0.0).min(CONTEXT_VECTOR_CAP * words)
}

/// The thoughts within [`CONTEXT_WINDOW`] places of `doc` in append order
/// that share its conversation (same session, stamped at most
/// [`CONTEXT_MAX_GAP_MS`] apart), with their distance. Walking outwards
/// stops at the first thought that does not.
pub fn context_neighbours(index: &RankedIndex, doc: u32, n: u32) -> impl Iterator<Item = (u32, u32)> {
    neighbours_within(index, doc, n, CONTEXT_WINDOW)
}

/// The widest `window` [`neighbours_within`] takes (the stretch's).
const MAX_NEIGHBOUR_WINDOW: u32 = MAX_RUN;
const _: () = assert!(CONTEXT_WINDOW <= MAX_NEIGHBOUR_WINDOW && super::stretch::STRETCH_WINDOW <= MAX_NEIGHBOUR_WINDOW);

/// The thoughts within `window` places of `doc` (of `n`) that share its
/// conversation, with their distance: first those after it, nearest first,
/// then those before it. Walking outwards stops at the first thought that
/// does not share it. (Read off the thought's [`super::turns::Turn`], worked
/// out when it was indexed; a chain of lazy iterator adapters here was once
/// a fifth of a ranked query's time.)
pub(crate) fn neighbours_within(index: &RankedIndex, doc: u32, n: u32, window: u32) -> impl Iterator<Item = (u32, u32)> {
    assert!(window <= MAX_NEIGHBOUR_WINDOW, "a neighbour window of at most {MAX_NEIGHBOUR_WINDOW}");
    let mut found = [(0, 0); 2 * MAX_NEIGHBOUR_WINDOW as usize];
    let mut len = 0;
    if (doc as usize) < index.len() {
        let turn = index.turn(doc);
        for d in 1..=turn.after().min(window) {
            if doc + d >= n {
                break;
            }
            found[len] = (doc + d, d);
            len += 1;
        }
        for d in 1..=turn.before().min(window) {
            found[len] = (doc - d, d);
            len += 1;
        }
    }
    found.into_iter().take(len)
}

/// `CONTEXT_DECAY^(d-1)` for a neighbour `d` places away (`powi`, worked out once).
const DECAY_AT: [f32; CONTEXT_WINDOW as usize] = {
    let mut at = [1.0; CONTEXT_WINDOW as usize];
    let mut d = 1;
    while d < at.len() {
        at[d] = at[d - 1] * CONTEXT_DECAY;
        d += 1;
    }
    at
};

/// Context: the best [`CONTEXT_SEEDS`] direct matches (a [`lender_score`]
/// above zero, admitted by `scope`) lend `CONTEXT_WEIGHT * CONTEXT_DECAY^(d-1)`
/// of that score to each neighbour `d` places away that exists, summed; a
/// match that asks a question lends [`CONTEXT_REPLY_BOOST`] times as much to
/// the thoughts after it. Neighbours become candidates.
pub(crate) fn lend_context<E: Fn(u32) -> bool, A: Fn(u32) -> bool>(index: &RankedIndex, scope: &Scope<E, A>, acc: &mut Accumulators) {
    let n = index.len() as u32;
    acc.settle_admission(scope);
    let mut lenders: Vec<(f32, u32)> = acc.accs.iter().filter(|a| a.admitted()).map(|a| (lender_score(a), a.doc)).filter(|s| s.0 > 0.0).collect();
    keep_best(&mut lenders, CONTEXT_SEEDS);
    // The neighbours of `neighbours_within`, in its order (after, then
    // before), read straight off each lender's turn: this loop runs about
    // four times per lender.
    let mut lend = |nb: u32, share: f32| {
        if scope.exists(nb) {
            acc.entry(nb).context += share;
        }
    };
    for (score, doc) in lenders {
        let turn = index.turn(doc);
        let forwards = if turn.asks() { CONTEXT_REPLY_BOOST } else { 1.0 };
        for d in 1..=turn.after().min(CONTEXT_WINDOW).min(n.saturating_sub(doc + 1)) {
            lend(doc + d, forwards * CONTEXT_WEIGHT * DECAY_AT[d as usize - 1] * score);
        }
        for d in 1..=turn.before().min(CONTEXT_WINDOW) {
            lend(doc - d, CONTEXT_WEIGHT * DECAY_AT[d as usize - 1] * score);
        }
    }
}

/// `graph`/`relation` and `context` both say "near a match": they do not
/// stack. A thought's context counts only beyond its graph and relation
/// shares, so near-ness adds at most the larger of the two and a neighbour
/// that also refs a match cannot outrank the match. Runs after the graph
/// stage.
pub(crate) fn yield_to_graph(acc: &mut Accumulators) {
    for a in acc.accs.iter_mut() {
        a.context = (a.context - a.graph - a.relation).max(0.0);
    }
}

/// Takes from a thought's `context` [`CONTEXT_OVERLAP`] times the smaller
/// of it and the thought's own match (`lexical + expansion + vector`): a
/// thought matched both by itself and by its neighbours mostly shows the
/// same thing twice (the stretch is about the question's subject), so the
/// smaller of the two counts three quarters. A thought with no match of its
/// own keeps all its context. Runs after [`yield_to_graph`].
pub(crate) fn overlap_with_own_match(acc: &mut Accumulators) {
    for a in acc.accs.iter_mut() {
        let own = a.lexical + a.expansion + a.vector.unwrap_or(0.0).max(0.0);
        a.context -= CONTEXT_OVERLAP * a.context.min(own);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::{Chain, NewThought};
    use crate::record::ChainFormat;
    use crate::thought::ThoughtType;

    /// `(session, minute, content)` per thought.
    fn chain(items: &[(Option<&str>, i64, &str)]) -> Chain {
        let mut c = Chain::new("conv", ChainFormat::Binary);
        for (i, (session, minute, content)) in items.iter().enumerate() {
            let mut n = NewThought::new("ada", ThoughtType::FactLearned, content);
            n.session_id = session.map(str::to_string);
            let ts = chrono::DateTime::from_timestamp_millis(1_700_000_000_000 + minute * 60_000).unwrap().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            let t = c.prepare_append(n, ts, format!("id-{i}"), [0; 16]).unwrap();
            c.commit(t);
        }
        c
    }

    #[test]
    fn context_neighbours_walk_outwards_and_stop_at_boundaries() {
        let c = chain(&[(None, 0, "x"), (None, 1, "x"), (Some("s"), 2, "x"), (Some("s"), 3, "x"), (Some("s"), 4, "x"), (Some("s"), 5, "x")]);
        let idx = c.ranked_index();
        let got: Vec<(u32, u32)> = context_neighbours(&idx, 3, idx.len() as u32).collect();
        assert_eq!(got, vec![(4, 1), (5, 2), (2, 1)], "thought 1 has no session: the walk back stops at 2");
        assert_eq!(context_neighbours(&idx, 0, idx.len() as u32).collect::<Vec<_>>(), vec![(1, 1)]);
        let far = chain(&[(None, 0, "x"), (None, 61, "x"), (None, 62, "x")]);
        let idx = far.ranked_index();
        assert_eq!(context_neighbours(&idx, 1, 3).collect::<Vec<_>>(), vec![(2, 1)], "an hour and more apart is another conversation");
    }

    #[test]
    fn a_question_lends_more_forwards_and_the_decay_halves_each_step() {
        let c = chain(&[(None, 0, "a"), (None, 1, "Plans?"), (None, 2, "b"), (None, 3, "c"), (None, 4, "d")]);
        let idx = c.ranked_index();
        let mut acc = Accumulators::new(idx.len());
        acc.entry(1).lexical = 2.0;
        lend_context(&idx, &Scope { exists: |_| true, admit: |_| true }, &mut acc);
        let ctx = |d: u32| acc.get(d).map(|a| a.context);
        assert_eq!(ctx(0), Some(CONTEXT_WEIGHT * 2.0), "backwards: the plain share");
        assert_eq!(ctx(2), Some(CONTEXT_REPLY_BOOST * CONTEXT_WEIGHT * 2.0));
        assert_eq!(ctx(3), Some(CONTEXT_REPLY_BOOST * CONTEXT_WEIGHT * CONTEXT_DECAY * 2.0));
        assert_eq!(ctx(4), None, "beyond the window");
        assert_eq!(ctx(1), Some(0.0), "a match lends nothing to itself");
        // A thought that does not exist (as of) receives nothing; one not admitted lends nothing.
        let mut acc = Accumulators::new(idx.len());
        acc.entry(1).lexical = 2.0;
        lend_context(&idx, &Scope { exists: |d| d != 0, admit: |_| true }, &mut acc);
        assert!(acc.get(0).is_none());
        let mut acc = Accumulators::new(idx.len());
        acc.entry(1).lexical = 2.0;
        lend_context(&idx, &Scope { exists: |_| true, admit: |d| d != 1 }, &mut acc);
        assert_eq!(acc.accs.len(), 1);
    }

    #[test]
    fn a_match_by_words_lends_a_share_of_its_vector_part_up_to_the_cap() {
        let c = chain(&[(None, 0, "a"), (None, 1, "b"), (None, 2, "c")]);
        let idx = c.ranked_index();
        let mut acc = Accumulators::new(idx.len());
        *acc.entry(0) = Acc { doc: 0, lexical: 1.0, expansion: 0.5, vector: Some(2.0), ..Acc::default() };
        acc.entry(2).vector = Some(2.0);
        assert_eq!(lender_score(acc.get(0).unwrap()), 1.5 + CONTEXT_VECTOR_SHARE * 2.0, "under the cap the whole share counts");
        assert_eq!(lender_score(acc.get(2).unwrap()), 0.0, "a match by meaning alone lends nothing");
        let capped = Acc { lexical: 0.5, vector: Some(10.0), ..Acc::default() };
        assert_eq!(lender_score(&capped), 0.5 + CONTEXT_VECTOR_SHARE * CONTEXT_VECTOR_CAP * 0.5, "meaning counts at most the cap times the words");
        lend_context(&idx, &Scope { exists: |_| true, admit: |_| true }, &mut acc);
        let ctx1 = acc.get(1).unwrap().context;
        let expected = CONTEXT_WEIGHT * (1.5 + CONTEXT_VECTOR_SHARE * 2.0);
        assert!((ctx1 - expected).abs() < 1e-6, "only the match by words lends: {ctx1} vs {expected}");
    }

    #[test]
    fn context_counts_the_smaller_of_itself_and_the_own_match_three_quarters() {
        let mut acc = Accumulators::new(3);
        *acc.entry(0) = Acc { doc: 0, context: 1.0, lexical: 1.5, expansion: 0.5, ..Acc::default() };
        *acc.entry(1) = Acc { doc: 1, context: 1.0, lexical: 0.25, vector: Some(0.25), ..Acc::default() };
        *acc.entry(2) = Acc { doc: 2, context: 1.0, vector: Some(-0.5), ..Acc::default() };
        overlap_with_own_match(&mut acc);
        let ctx = |d: u32| acc.get(d).unwrap().context;
        assert_eq!(ctx(0), 1.0 - CONTEXT_OVERLAP * 1.0, "own match 2 > context 1: the context counts 3/4");
        assert_eq!(ctx(1), 1.0 - CONTEXT_OVERLAP * 0.5, "own match 0.5 < context 1: that half counts 3/4");
        assert_eq!(ctx(2), 1.0, "no match of its own (a negative vector part is none): all its context");
    }

    #[test]
    fn context_counts_only_beyond_the_graph_shares() {
        let mut acc = Accumulators::new(3);
        *acc.entry(0) = crate::ranked::candidates::Acc { doc: 0, context: 1.0, graph: 0.25, relation: 0.25, ..Default::default() };
        *acc.entry(1) = crate::ranked::candidates::Acc { doc: 1, context: 0.5, graph: 0.75, ..Default::default() };
        yield_to_graph(&mut acc);
        assert_eq!((acc.get(0).unwrap().context, acc.get(1).unwrap().context), (0.5, 0.0));
    }
}
