//! How the engine's per-thought lists grow.
//!
//! A `Vec` doubles when full, so a list that holds much of a chain's memory
//! (the thoughts, the text filter's buffer) carries on average a quarter and
//! at worst half of its size unused. These lists grow by an eighth instead:
//! still geometric, so an append stays amortized O(1), with at most an eighth
//! unused. `cargo run --release -p mentisdb-core --example memory_breakdown`
//! measures what it saves.

/// What to `reserve_exact` on a list of `len` items and room for `capacity`
/// so that `additional` more fit: nothing while they fit, else an eighth
/// more (at least `additional`, at least 16).
pub(crate) fn an_eighth_more(len: usize, capacity: usize, additional: usize) -> usize {
    if capacity - len >= additional {
        0
    } else {
        (len / 8).max(additional).max(16)
    }
}

#[cfg(test)]
mod tests {
    use super::an_eighth_more;

    #[test]
    fn grows_by_an_eighth_only_when_full() {
        assert_eq!(an_eighth_more(10, 16, 6), 0);
        assert_eq!(an_eighth_more(16, 16, 1), 16);
        assert_eq!(an_eighth_more(80_000, 80_000, 1), 10_000);
        assert_eq!(an_eighth_more(80_000, 80_000, 20_000), 20_000);
    }
}
