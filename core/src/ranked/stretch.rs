//! The stretch stage: how much of the query the stretch of conversation
//! around a candidate covers. A turn in an exchange that mentions
//! everything the question asks ranks above a turn whose only company is a
//! lone common word; a question whose words are spread over several turns
//! of one exchange finds that exchange.

use super::candidates::{best_first, Accumulators, Scope};
use super::conversation::neighbours_within;
use super::hits::{BOUND_SLACK, SMALL_SIGNALS_MAX};
use super::index::RankedIndex;

/// Places on each side of a thought that make up its stretch.
pub const STRETCH_WINDOW: u32 = 3;
/// Weight of a stretch covering the whole query, relative to the best lexical score.
pub const STRETCH_WEIGHT: f32 = 0.5;

/// The thoughts within [`STRETCH_WINDOW`] places of `doc` that share its
/// conversation, by the rule of [`super::conversation::context_neighbours`].
pub fn stretch_neighbours(index: &RankedIndex, doc: u32, n: u32) -> impl Iterator<Item = u32> + '_ {
    neighbours_within(index, doc, n, STRETCH_WINDOW).map(|(x, _)| x)
}

/// The most a stretch adds: a stretch covering the whole query.
pub(crate) fn max_stretch(best_lexical: f32) -> f32 {
    STRETCH_WEIGHT * best_lexical
}

/// Stretch: each candidate of `partial` (score so far, thought) gets
/// `max_stretch * covered / query`, `query` the summed IDF of the query
/// terms (`idfs`), `covered` the summed IDF of those that the candidate or a
/// thought of its stretch (that exists) matched, directly or through an
/// expansion word, counting only admitted thoughts' matches. Computed best
/// candidate first; stops once the `limit`-th best total so far cannot be
/// reached by a remaining candidate even with a full stretch, and drops
/// those from `partial`. The rest get the stretch added, in `partial` and
/// in their accumulator. Needs a query IDF above zero.
pub(crate) fn add_stretch<E: Fn(u32) -> bool, A: Fn(u32) -> bool>(index: &RankedIndex, idfs: &[f32], best_lexical: f32, limit: usize, scope: &Scope<E, A>, acc: &mut Accumulators, partial: &mut Vec<(f32, u32)>) {
    let n = index.len() as u32;
    let query_idf: f32 = idfs.iter().sum();
    acc.settle_admission(scope);
    let matched = |doc: u32| acc.get(doc).filter(|a| a.admitted()).map_or(0, |a| a.terms | a.expanded);
    let max_stretch = max_stretch(best_lexical);
    partial.sort_unstable_by(best_first);
    let mut best: Vec<f32> = Vec::with_capacity(limit + 1);
    let mut stretch: Vec<f32> = Vec::new();
    for &(base, doc) in partial.iter() {
        if limit > 0 && best.len() == limit && base + max_stretch < best[limit - 1] - SMALL_SIGNALS_MAX - BOUND_SLACK {
            break;
        }
        let covered = stretch_neighbours(index, doc, n).filter(|nb| scope.exists(*nb)).fold(matched(doc), |u, nb| u | matched(nb));
        let covered: f32 = idfs.iter().enumerate().filter(|(bit, _)| covered & (1 << bit) != 0).map(|(_, idf)| idf).sum();
        let s = max_stretch * covered / query_idf;
        let at = best.partition_point(|x| *x >= base + s);
        if at < limit {
            best.insert(at, base + s);
            best.truncate(limit);
        }
        stretch.push(s);
    }
    partial.truncate(stretch.len());
    for (p, s) in partial.iter_mut().zip(stretch) {
        acc.entry(p.1).stretch = s;
        p.0 += s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::{Chain, NewThought};
    use crate::record::ChainFormat;
    use crate::thought::ThoughtType;

    /// `(session, minute)` per thought; contents do not matter here.
    fn chain(items: &[(Option<&str>, i64)]) -> Chain {
        let mut c = Chain::new("stretch", ChainFormat::Binary);
        for (i, (session, minute)) in items.iter().enumerate() {
            let mut n = NewThought::new("ada", ThoughtType::FactLearned, "x");
            n.session_id = session.map(str::to_string);
            let ts = chrono::DateTime::from_timestamp_millis(1_700_000_000_000 + minute * 60_000).unwrap().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            let t = c.prepare_append(n, ts, format!("id-{i}"), [0; 16]).unwrap();
            c.commit(t);
        }
        c
    }

    #[test]
    fn stretch_neighbours_reach_three_places_within_the_conversation() {
        let c = chain(&[(None, 0), (None, 1), (Some("s"), 2), (Some("s"), 3), (Some("s"), 4), (Some("s"), 5)]);
        let idx = c.ranked_index();
        assert_eq!(stretch_neighbours(&idx, 5, idx.len() as u32).collect::<Vec<_>>(), vec![4, 3, 2], "three places back, not across the session");
    }

    #[test]
    fn coverage_counts_the_stretch_by_idf_and_expanded_words() {
        // Thoughts 0-4 in one conversation, 5 in another.
        let c = chain(&[(None, 0), (None, 1), (None, 2), (None, 3), (None, 4), (Some("s"), 5)]);
        let idx = c.ranked_index();
        let matches = || {
            let mut acc = Accumulators::new(idx.len());
            acc.entry(0).terms = 0b001;
            acc.entry(4).expanded = 0b010;
            acc.entry(5).terms = 0b100;
            acc
        };
        let mut acc = matches();
        let idfs = [1.0, 2.0, 1.0];
        let mut partial = vec![(1.0, 0), (1.0, 4), (1.0, 5), (0.5, 2)];
        add_stretch(&idx, &idfs, 2.0, 0, &Scope { exists: |_| true, admit: |_| true }, &mut acc, &mut partial);
        let s = |acc: &Accumulators, d: u32| acc.get(d).unwrap().stretch;
        let full = max_stretch(2.0);
        assert_eq!(partial.iter().map(|p| p.1).collect::<Vec<_>>(), vec![5, 4, 0, 2], "best first, ties to the newer");
        assert_eq!(s(&acc, 0), full * 1.0 / 4.0, "4 is four places away");
        assert_eq!(s(&acc, 4), full * 2.0 / 4.0, "0 is four places away; 5 another session");
        assert_eq!(s(&acc, 2), full * 3.0 / 4.0, "0 and 4 are both within three places");
        assert_eq!(s(&acc, 5), full * 1.0 / 4.0);
        assert_eq!(partial[3].0, 0.5 + s(&acc, 2));
        // Matches that are not admitted cover nothing (a new query: the scope is asked anew).
        let mut partial = vec![(0.5, 2)];
        let mut acc = matches();
        add_stretch(&idx, &idfs, 2.0, 0, &Scope { exists: |_| true, admit: |d| d != 4 }, &mut acc, &mut partial);
        assert_eq!(s(&acc, 2), full * 1.0 / 4.0);
    }

    #[test]
    fn candidates_out_of_reach_of_the_limit_are_dropped() {
        let c = chain(&[(Some("a"), 0), (Some("b"), 1), (Some("c"), 2), (Some("d"), 3)]);
        let idx = c.ranked_index();
        let mut acc = Accumulators::new(idx.len());
        acc.entry(0).terms = 1;
        acc.entry(1).terms = 1;
        let mut partial = vec![(10.0, 0), (0.1, 2), (9.9, 1), (9.0, 3)];
        add_stretch(&idx, &[1.0], 2.0, 1, &Scope { exists: |_| true, admit: |_| true }, &mut acc, &mut partial);
        assert_eq!(partial.iter().map(|p| p.1).collect::<Vec<_>>(), vec![0, 1], "9.9 + a full stretch and the small signals may pass 11; 9 cannot");
        assert_eq!(partial[0].0, 11.0);
    }
}
