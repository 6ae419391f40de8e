//! What the host supplies: the current time, fresh unique ids, (when it
//! has threads) a way to run independent work at the same time, and what it
//! wants to be told of appends ([`AppendObserver`]).
//!
//! The core never reads a clock, draws randomness or starts a thread itself.
//! A native host wraps `SystemTime`, the OS RNG and scoped threads, a browser
//! host `Date.now()` and `crypto.getRandomValues`, and tests use
//! [`FixedClock`] / [`SequentialIds`] so every hash is reproducible.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Milliseconds since the Unix epoch, UTC.
pub type UnixMillis = i64;

/// A source of the current wall-clock time.
pub trait Clock: Send + Sync {
    /// The current time in milliseconds since the Unix epoch (UTC).
    fn now_millis(&self) -> UnixMillis;
}

/// A source of fresh 128-bit ids (formatted by the core as UUID v4 strings).
pub trait IdSource: Send + Sync {
    /// Sixteen bytes that must not repeat; a host fills them from a CSPRNG.
    fn next_id_bytes(&self) -> [u8; 16];

    /// Sixteen secret bytes that key the engine's hash maps, drawn once when
    /// it opens (see `keyed_hash.rs`). Defaults to a fresh id.
    fn hash_key(&self) -> [u8; 16] {
        self.next_id_bytes()
    }
}

/// Any `Fn() -> i64` is a clock.
impl<F: Fn() -> UnixMillis + Send + Sync> Clock for F {
    fn now_millis(&self) -> UnixMillis {
        self()
    }
}

/// A clock for tests: starts at a fixed instant and advances by `step_ms` on every read.
#[derive(Debug)]
pub struct FixedClock {
    next: Mutex<UnixMillis>,
    step_ms: i64,
}

impl FixedClock {
    /// A clock that returns `start`, `start + step_ms`, `start + 2*step_ms`, ...
    pub fn new(start: UnixMillis, step_ms: i64) -> Self {
        Self { next: Mutex::new(start), step_ms }
    }
}

impl Clock for FixedClock {
    fn now_millis(&self) -> UnixMillis {
        let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
        let now = *next;
        *next += self.step_ms;
        now
    }
}

/// Deterministic ids for tests: a counter in the low bytes.
#[derive(Debug, Default)]
pub struct SequentialIds {
    counter: AtomicU64,
}

impl SequentialIds {
    /// Ids counting up from `start + 1` (use distinct starts when re-opening
    /// a store in tests, so new ids never collide with stored ones).
    pub fn starting_at(start: u64) -> Self {
        SequentialIds { counter: AtomicU64::new(start) }
    }
}

impl IdSource for SequentialIds {
    /// A fixed key, so opening an engine does not shift the id sequence.
    fn hash_key(&self) -> [u8; 16] {
        [0; 16]
    }

    fn next_id_bytes(&self) -> [u8; 16] {
        let n = self.counter.fetch_add(1, Ordering::Relaxed) + 1;
        let mut bytes = [0u8; 16];
        bytes[8..].copy_from_slice(&n.to_be_bytes());
        bytes
    }
}

/// Told of every thought once it is durable, by the engine it was
/// registered with ([`crate::MentisDb::add_observer`]): the basis of a host's
/// event stream and webhooks. For one chain, `appended` is called for each
/// new thought (written by this engine, or taken in from another engine on a
/// shared store), but not always in index order when appends race: a call
/// for index `i` means every thought up to `i` is durable, so an observer
/// reads the chain up to `i` rather than trusting the order of calls.
///
/// Calls may come while the engine holds the chain's lock: an observer must
/// return at once (send to a channel, wake a task) and never call back into
/// the engine from the call.
pub trait AppendObserver: Send + Sync {
    /// `thought` of chain `chain_key` is durable.
    fn appended(&self, chain_key: &str, thought: &crate::thought::Thought);

    /// Chain `chain_key` was deleted (its thoughts are gone). Does nothing by default.
    fn chain_deleted(&self, _chain_key: &str) {}

    /// An agent beat in a chain ([`crate::presence`]; not a thought). Does nothing by default.
    fn presence_updated(&self, _presence: &crate::presence::Presence) {}
}

/// Runs independent jobs, possibly at the same time. The core hands work
/// that splits cleanly (decoding and hashing the records of a chain when it
/// opens) to the host through this trait; results never depend on the order
/// or concurrency of the jobs.
pub trait Parallelism: Send + Sync + std::fmt::Debug {
    /// How many jobs can usefully run at once (at least 1).
    fn width(&self) -> usize;

    /// Calls `job(i)` exactly once for every `i` in `0..count`, in any order
    /// and possibly concurrently, and returns when every call has returned.
    fn run(&self, count: usize, job: &(dyn Fn(usize) + Sync));
}

/// Runs `job(0..count)` through `parallelism` and returns the results in job
/// order (whatever order the host ran them in).
pub(crate) fn run_collect<T: Send>(parallelism: &dyn Parallelism, count: usize, job: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let slots: Vec<Mutex<Option<T>>> = (0..count).map(|_| Mutex::new(None)).collect();
    parallelism.run(count, &|i| {
        let out = job(i);
        *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(out);
    });
    slots.into_iter().map(|slot| slot.into_inner().unwrap_or_else(|e| e.into_inner()).expect("the host ran every job")).collect()
}

/// Runs every job in turn on the calling thread (the default; browser and WASI hosts).
#[derive(Debug, Clone, Copy, Default)]
pub struct Sequential;

impl Parallelism for Sequential {
    fn width(&self) -> usize {
        1
    }

    fn run(&self, count: usize, job: &(dyn Fn(usize) + Sync)) {
        (0..count).for_each(job);
    }
}

/// Runs the jobs last to first (for tests that show a result does not
/// depend on the order a host's threads finish jobs in).
#[cfg(test)]
#[derive(Debug)]
pub(crate) struct Reversed;

#[cfg(test)]
impl Parallelism for Reversed {
    fn width(&self) -> usize {
        3
    }

    fn run(&self, count: usize, job: &(dyn Fn(usize) + Sync)) {
        (0..count).rev().for_each(job);
    }
}

/// Formats 16 bytes as a lowercase RFC 4122 version-4 UUID string.
pub(crate) fn format_uuid_v4(mut bytes: [u8; 16]) -> String {
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let mut out = [b'-'; 36];
    // Groups of 4, 2, 2, 2 and 6 bytes, separated by dashes.
    for (group, (from, to)) in [(0, 4), (4, 6), (6, 8), (8, 10), (10, 16)].into_iter().enumerate() {
        let at = from * 2 + group;
        hex::encode_to_slice(&bytes[from..to], &mut out[at..at + (to - from) * 2]).expect("fits");
    }
    String::from_utf8(out.to_vec()).expect("hex and dashes are ASCII")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_format_sets_version_and_variant() {
        let id = format_uuid_v4([0xff; 16]);
        assert_eq!(id, "ffffffff-ffff-4fff-bfff-ffffffffffff");
        assert_eq!(format_uuid_v4([0; 16]), "00000000-0000-4000-8000-000000000000");
        let counting: [u8; 16] = std::array::from_fn(|i| i as u8 * 17);
        assert_eq!(format_uuid_v4(counting), "00112233-4455-4677-8899-aabbccddeeff");
    }

    #[test]
    fn fixed_clock_advances() {
        let c = FixedClock::new(1000, 5);
        assert_eq!(c.now_millis(), 1000);
        assert_eq!(c.now_millis(), 1005);
    }
}
