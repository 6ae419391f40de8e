//! What this instance's listener has told its host, so a lost race can be
//! answered from the winner's announcement instead of another query.
//!
//! Two instances appending to one chain at one length: PostgreSQL stores
//! one, and the other's append is refused. The winner's commit also
//! announces its bytes (`listen.rs`), which reach this instance's listener
//! about when the refusal does. The refused [`crate::PgStorage::append_at`]
//! waits briefly ([`ANNOUNCEMENT_WAIT`]) until the listener has told the
//! host of an append past the refused offset (or up to the length the refusal saw), then reports the conflict
//! with that length: the host (the core) takes the winner's bytes in from
//! the announcement it kept and re-bases, with no read. Without a listener,
//! or when none comes in time, the length is read from the table as before.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Longest a refused append waits for the winner's announcement (a
/// notification arrives well within a millisecond on a quiet server).
const ANNOUNCEMENT_WAIT: Duration = Duration::from_millis(5);

/// The end of the latest append announced to the listener, per object.
#[derive(Debug, Default)]
pub(crate) struct Told {
    listening: AtomicBool,
    ends: Mutex<Ends>,
    changed: Condvar,
}

/// What [`Told`] guards with its lock.
#[derive(Debug, Default)]
struct Ends {
    by_object: HashMap<String, u64>,
    /// Refused appends waiting in [`Told::wait_for`]: the listener wakes
    /// them only when there are any (a wake-up is a system call).
    waiters: usize,
}

impl Told {
    /// A listener is running: refused appends may wait for announcements.
    pub(crate) fn listening(&self) {
        self.listening.store(true, Ordering::Relaxed);
    }

    /// The listener told its host that `object` was appended up to `end`.
    pub(crate) fn told(&self, object: &str, end: u64) {
        let mut ends = self.ends.lock().unwrap_or_else(|e| e.into_inner());
        match ends.by_object.get_mut(object) {
            Some(known) => *known = end.max(*known),
            None => {
                ends.by_object.insert(object.to_string(), end);
            }
        }
        let waiters = ends.waiters;
        drop(ends);
        if waiters > 0 {
            self.changed.notify_all();
        }
    }

    /// `object` was replaced as a whole (it may be shorter now), or, with
    /// `None`, notifications were missed: what was told of it no longer holds.
    pub(crate) fn forget(&self, object: Option<&str>) {
        let mut ends = self.ends.lock().unwrap_or_else(|e| e.into_inner());
        match object {
            Some(object) => {
                ends.by_object.remove(object);
            }
            None => ends.by_object.clear(),
        }
    }

    /// Waits (up to [`ANNOUNCEMENT_WAIT`]) until the listener has told of an
    /// append to `object` that ends at `at_least` or later; that end, if one came.
    pub(crate) fn wait_for(&self, object: &str, at_least: u64) -> Option<u64> {
        if !self.listening.load(Ordering::Relaxed) {
            return None;
        }
        let until = Instant::now() + ANNOUNCEMENT_WAIT;
        let mut ends = self.ends.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match ends.by_object.get(object) {
                Some(&end) if end >= at_least => break Some(end),
                _ => {}
            }
            let Some(left) = until.checked_duration_since(Instant::now()) else { break None };
            ends.waiters += 1;
            ends = self.changed.wait_timeout(ends, left).unwrap_or_else(|e| e.into_inner()).0;
            ends.waiters -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_refused_append_learns_the_length_from_what_the_listener_told() {
        let told = Arc::new(Told::default());
        assert_eq!(told.wait_for("chains/a.mdb", 11), None, "without a listener nothing waits");
        told.listening();
        told.told("chains/a.mdb", 10);
        assert_eq!(told.wait_for("chains/a.mdb", 11), None, "an end short of the length asked for is no answer");
        let teller = told.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(1));
            teller.told("chains/a.mdb", 25);
        });
        assert_eq!(told.wait_for("chains/a.mdb", 11), Some(25));
        t.join().unwrap();
        told.told("chains/a.mdb", 20);
        assert_eq!(told.wait_for("chains/a.mdb", 11), Some(25), "the furthest end told is kept");
        assert_eq!(told.wait_for("chains/b.mdb", 1), None, "another object's announcements are not its");
        told.forget(Some("chains/a.mdb"));
        assert_eq!(told.wait_for("chains/a.mdb", 11), None, "a replaced object starts over");
        told.told("chains/b.mdb", 3);
        told.forget(None);
        assert_eq!(told.wait_for("chains/b.mdb", 1), None, "after missed notifications nothing told holds");
    }
}
