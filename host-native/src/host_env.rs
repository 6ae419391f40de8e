//! The native clock and id source handed to the core.

use mentisdb_core::{Clock, IdSource, UnixMillis};
use std::time::{SystemTime, UNIX_EPOCH};

/// Wall-clock time from `SystemTime`, in epoch milliseconds.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_millis(&self) -> UnixMillis {
        SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
    }
}

/// Thought ids from the operating system's CSPRNG.
#[derive(Debug, Default, Clone, Copy)]
pub struct OsRandomIds;

impl IdSource for OsRandomIds {
    fn next_id_bytes(&self) -> [u8; 16] {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).expect("the operating system's random source is unavailable");
        bytes
    }
}
