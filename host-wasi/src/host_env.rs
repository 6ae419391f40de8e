//! The clock and id adapters: WASI wall clock and WASI random.
//!
//! Inside the component, `SystemTime::now()` is `wasi:clocks/wall-clock.now`
//! and `getrandom` draws from `wasi:random/random.get-random-bytes`; built
//! natively (unit tests) the same code reads the OS clock and RNG.

use mentisdb_core::{Clock, IdSource, UnixMillis};
use std::time::{SystemTime, UNIX_EPOCH};

/// The host's wall clock, in epoch milliseconds.
#[derive(Debug, Default, Clone, Copy)]
pub struct WallClock;

impl Clock for WallClock {
    fn now_millis(&self) -> UnixMillis {
        match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_millis() as UnixMillis,
            // A host clock before 1970: report it as such, not as a panic.
            Err(e) => -(e.duration().as_millis() as UnixMillis),
        }
    }
}

/// Thought ids from the host's cryptographic RNG.
#[derive(Debug, Default, Clone, Copy)]
pub struct RandomIds;

impl IdSource for RandomIds {
    fn next_id_bytes(&self) -> [u8; 16] {
        let mut bytes = [0u8; 16];
        // wasi:random cannot fail by its interface; a host whose RNG is broken
        // must not get silently repeated ids, so this is a trap, not a fallback.
        getrandom::fill(&mut bytes).expect("the host's random source (wasi:random) failed");
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_is_after_2020_and_ids_differ() {
        assert!(WallClock.now_millis() > 1_577_836_800_000);
        assert_ne!(RandomIds.next_id_bytes(), RandomIds.next_id_bytes());
    }
}
