//! # mentisdb-std-host: the clock, ids and threads of a host with `std`
//!
//! **Contract.** The core reads no clock and draws no random number: a host
//! hands it a [`Clock`], an [`IdSource`] and a [`Parallelism`]. Every host
//! with a standard library (the `mentisdbd` daemon, the WASI component and
//! the in-process `mentisdb` API) uses these three, so time, ids and threads
//! behave alike wherever the engine runs:
//!
//! - [`SystemClock`]: `SystemTime::now()` in epoch milliseconds; a clock set
//!   before 1970 reads negative, never zero or a panic. Inside a WASI
//!   component this is `wasi:clocks/wall-clock`.
//! - [`OsRandomIds`]: 16 bytes from the system's CSPRNG per id (`getrandom`;
//!   `wasi:random` inside a component), read 1 KiB at a time per thread (an
//!   append takes two: its id and its content salt; one system call each
//!   was ~1% of the daemon's CPU under appends), read anew in a forked
//!   child. A broken random source panics: silently repeated ids would be
//!   worse.
//! - [`ScopedThreads`]: one scoped thread per CPU for the core's parallel work
//!   (decoding and hashing records at startup). Native hosts only.

use mentisdb_core::{Clock, IdSource, Parallelism, UnixMillis};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Wall-clock time from `SystemTime`, in epoch milliseconds.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_millis(&self) -> UnixMillis {
        match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_millis() as UnixMillis,
            // A clock before 1970: report it as such, not as 1970 or a panic.
            Err(e) => -(e.duration().as_millis() as UnixMillis),
        }
    }
}

/// Thought ids and content salts from the system's CSPRNG.
#[derive(Debug, Default, Clone, Copy)]
pub struct OsRandomIds;

impl IdSource for OsRandomIds {
    fn next_id_bytes(&self) -> [u8; 16] {
        RANDOM.with(|r| {
            let mut r = r.borrow_mut();
            // A forked child must not hand out the ids its parent will (WASI
            // has no fork, nor a process id to ask for).
            #[cfg(unix)]
            let pid = std::process::id();
            #[cfg(not(unix))]
            let pid = 0;
            if r.used == RANDOM_BYTES || r.pid != pid {
                r.pid = pid;
                getrandom::fill(&mut r.bytes).expect("the system's random source is unavailable");
                r.used = 0;
            }
            let at = r.used;
            r.used += 16;
            let mut id = [0u8; 16];
            id.copy_from_slice(&r.bytes[at..at + 16]);
            // Handed out once: no copy of an id stays behind.
            r.bytes[at..at + 16].fill(0);
            id
        })
    }
}

/// Random bytes read from the system at once, per thread.
const RANDOM_BYTES: usize = 1024;

/// A thread's unread random bytes, `bytes[used..]`, read by process `pid`.
struct RandomBuffer {
    bytes: [u8; RANDOM_BYTES],
    used: usize,
    pid: u32,
}

thread_local! {
    static RANDOM: std::cell::RefCell<RandomBuffer> = const { std::cell::RefCell::new(RandomBuffer { bytes: [0; RANDOM_BYTES], used: RANDOM_BYTES, pid: 0 }) };
}

/// Scoped OS threads, one per available CPU, for the core's parallel work.
#[derive(Debug, Clone, Copy)]
pub struct ScopedThreads {
    threads: usize,
}

impl ScopedThreads {
    /// `threads` threads (at least one), whatever the machine has.
    pub fn new(threads: usize) -> Self {
        ScopedThreads { threads: threads.max(1) }
    }

    /// As many threads as the machine reports CPUs.
    pub fn per_cpu() -> Self {
        ScopedThreads { threads: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) }
    }
}

impl Parallelism for ScopedThreads {
    fn width(&self) -> usize {
        self.threads
    }

    fn run(&self, count: usize, job: &(dyn Fn(usize) + Sync)) {
        // Workers take the next job number until none is left; the calling
        // thread is one of them.
        let next = AtomicUsize::new(0);
        let work = || loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= count {
                break;
            }
            job(i);
        };
        std::thread::scope(|s| {
            for _ in 1..self.threads.min(count) {
                s.spawn(work);
            }
            work();
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn every_job_runs_exactly_once() {
        let seen = Mutex::new(vec![0u32; 100]);
        ScopedThreads { threads: 4 }.run(100, &|i| seen.lock().unwrap()[i] += 1);
        assert!(seen.into_inner().unwrap().iter().all(|n| *n == 1));
        ScopedThreads::per_cpu().run(0, &|_| panic!("no jobs"));
    }

    #[test]
    fn the_clock_reads_now_and_ids_differ() {
        assert!(SystemClock.now_millis() > 1_577_836_800_000, "after 2020");
        assert_ne!(OsRandomIds.next_id_bytes(), OsRandomIds.next_id_bytes());
    }

    #[test]
    fn ids_stay_distinct_across_buffer_refills_and_threads() {
        let draw = || (0..3 * RANDOM_BYTES / 16).map(|_| OsRandomIds.next_id_bytes()).collect::<Vec<_>>();
        let mut all = draw();
        all.extend(std::thread::spawn(draw).join().unwrap());
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n, "no id repeats, within a thread or across two");
        assert!(all.iter().all(|id| *id != [0; 16]));
    }
}
