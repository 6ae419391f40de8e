//! Where each thought stands in its conversation, worked out once as it is
//! indexed: whether it asks a question, and how many thoughts right after
//! and right before it belong to the same conversation (the same session,
//! stamped at most [`CONTEXT_MAX_GAP_MS`] apart). The context and stretch
//! stages ask this of hundreds of thoughts per query; one byte per thought
//! answers it without reading sessions and timestamps.

/// Neighbours stamped further apart than this (one hour) are another conversation.
pub const CONTEXT_MAX_GAP_MS: i64 = 3_600_000;

/// How far a run is counted on each side: the widest neighbour window a
/// stage asks for (the stretch's).
pub(crate) const MAX_RUN: u32 = 3;

/// Whether two thoughts (their interned session and timestamp) belong to
/// one conversation: the same session, or both without one, and stamped at
/// most [`CONTEXT_MAX_GAP_MS`] apart.
pub(crate) fn same_conversation(a: (u32, i64), b: (u32, i64)) -> bool {
    a.0 == b.0 && (a.1 - b.1).abs() <= CONTEXT_MAX_GAP_MS
}

/// One thought's place in its conversation, in a byte: bit 0 whether it
/// asks a question; bits 1-2 how many of the next thoughts (at most
/// [`MAX_RUN`]) share its conversation, walking outwards and stopping at
/// the first that does not; bits 3-4 the same backwards.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Turn(u8);

impl Turn {
    const ASKS: u8 = 1;
    const AFTER_SHIFT: u8 = 1;
    const BEFORE_SHIFT: u8 = 3;
    const RUN_MASK: u8 = 0b11;

    /// Whether the thought's content asks a question.
    pub(crate) fn asks(self) -> bool {
        self.0 & Self::ASKS != 0
    }

    /// Thoughts right after it in its conversation (at most [`MAX_RUN`]).
    pub(crate) fn after(self) -> u32 {
        u32::from((self.0 >> Self::AFTER_SHIFT) & Self::RUN_MASK)
    }

    /// Thoughts right before it in its conversation (at most [`MAX_RUN`]).
    pub(crate) fn before(self) -> u32 {
        u32::from((self.0 >> Self::BEFORE_SHIFT) & Self::RUN_MASK)
    }

    fn with_after(self, after: u32) -> Turn {
        Turn((self.0 & !(Self::RUN_MASK << Self::AFTER_SHIFT)) | ((after as u8) << Self::AFTER_SHIFT))
    }
}

/// Adds the next thought (its interned session, timestamp, and whether it
/// asks a question) to `turns`, given the sessions and timestamps of the
/// thoughts already there (`at(doc)`, asked only of the last [`MAX_RUN`]):
/// its run backwards, and the runs forwards of the [`MAX_RUN`] thoughts
/// before it that reached it.
pub(crate) fn push_turn(turns: &mut Vec<Turn>, at: impl Fn(u32) -> (u32, i64), this: (u32, i64), asks: bool) {
    let doc = turns.len() as u32;
    let mut before = 0;
    while before < MAX_RUN && before < doc && same_conversation(this, at(doc - before - 1)) {
        before += 1;
    }
    // Thought `doc - d`'s forward run grows by this one if it already reached
    // `doc - 1` (its run is `d - 1`) and this one shares its conversation
    // (each compared with `doc - d` itself: timestamps a gap apart are not
    // transitive, so "within `before`" would not do).
    for d in 1..=MAX_RUN.min(doc) {
        let earlier = turns[(doc - d) as usize];
        if earlier.after() == d - 1 && same_conversation(at(doc - d), this) {
            turns[(doc - d) as usize] = earlier.with_after(d);
        }
    }
    crate::growth::push(turns, Turn(u8::from(asks) | ((before as u8) << Turn::BEFORE_SHIFT)));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The runs by brute force: the rule as the stages used to walk it.
    fn walked(items: &[(u32, i64)], doc: usize) -> (u32, u32) {
        let same = |x: usize| same_conversation(items[doc], items[x]);
        let after = (1..=MAX_RUN as usize).take_while(|d| doc + d < items.len() && same(doc + d)).count() as u32;
        let before = (1..=MAX_RUN as usize).take_while(|d| *d <= doc && same(doc - d)).count() as u32;
        (after, before)
    }

    #[test]
    fn runs_match_walking_outwards_from_every_thought() {
        // Sessions 0/1, NO_SESSION-like 9, gaps of a minute and of two hours;
        // session 5 out of time order, where "within an hour" is not transitive.
        let minute = 60_000;
        let items: Vec<(u32, i64)> = vec![(0, 0), (0, minute), (0, 2 * minute), (1, 3 * minute), (0, 4 * minute), (0, 5 * minute), (0, 5 * minute + 2 * CONTEXT_MAX_GAP_MS), (9, 0), (9, 0), (9, CONTEXT_MAX_GAP_MS), (9, CONTEXT_MAX_GAP_MS + 1), (9, 2 * CONTEXT_MAX_GAP_MS + 1), (9, 2 * CONTEXT_MAX_GAP_MS + 1), (9, 2 * CONTEXT_MAX_GAP_MS + 2), (9, 2 * CONTEXT_MAX_GAP_MS + 3), (5, CONTEXT_MAX_GAP_MS), (5, 0), (5, 2 * CONTEXT_MAX_GAP_MS), (5, 0), (5, CONTEXT_MAX_GAP_MS)];
        let mut turns = Vec::new();
        for (i, item) in items.iter().enumerate() {
            push_turn(&mut turns, |d| items[d as usize], *item, i % 3 == 0);
            // After every push, every thought so far agrees with the walk.
            for (doc, turn) in turns.iter().enumerate() {
                assert_eq!((turn.after(), turn.before()), walked(&items[..=i], doc), "thought {doc} after {} pushed", i + 1);
                assert_eq!(turn.asks(), doc % 3 == 0);
            }
        }
    }
}
