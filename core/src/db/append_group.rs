//! Group commit: concurrent appends to one chain share one storage write.
//!
//! An append queues its thought on the chain's slot ([`AppendQueue`]). When
//! no other append of the chain is leading, it leads: under the chain's
//! write lock it takes every queued thought, prepares each in queue order
//! (validation, signature, id), places each right after the one before
//! ([`Chain::place`]), writes all their records with one conditional
//! append, commits them to memory and leaves each its outcome, then wakes
//! the waiting appends: those of its group leave with their outcome, the
//! others (queued during its write) make the next group.
//!
//! On PostgreSQL one write is one transaction (one WAL flush), so a chain
//! takes as many appends per commit as arrive during the previous one, and
//! an append that lost the race to another daemon re-bases with its whole
//! group. Each append still syncs and is acknowledged on its own, after the
//! write that carried it. With one thread (browser, WASI) every group is
//! one thought and nothing ever waits.

use super::{write_lock, ChainSlot, ChainState, MentisDb};
use crate::chain::{Chain, NewThought, Prepared};
use crate::error::{AppendError, ToolError};
use crate::record;
use crate::storage::StorageError;
use crate::thought::Thought;
use crate::timestamp::format_rfc3339_millis;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// How many times one append group re-bases onto other writers' appends
/// before it gives up (each re-base means another engine won the race
/// meanwhile). Under a saturating load of one chain through several daemons
/// an engine that falls behind (its notifications lagging, its process
/// scheduled late) can lose dozens of races in a row: with 64, 14 of 73,000
/// appends of `scripts/pg-wrk-bench.sh`'s one-chain phase gave up. A
/// re-base costs a round trip, so this many are seconds at most; the few
/// that still give up answer "busy, retry" (HTTP 503), never an error of
/// the store.
pub(crate) const MAX_REBASES: usize = 1_000;

/// How the engine's appends reached storage since it opened
/// ([`MentisDb::write_counts`]): on a store shared by several engines
/// (PostgreSQL), how often they raced.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct WriteCounts {
    /// Conditional writes of append groups (one `Storage::append_at` each;
    /// on PostgreSQL the groups of several chains that arrive together
    /// share one transaction), retries included.
    pub group_writes: u64,
    /// Of those, the writes refused because another engine appended to the
    /// chain first: each lost race re-based its group and wrote it again.
    pub lost_races: u64,
}

/// The counters behind [`WriteCounts`].
#[derive(Debug, Default)]
pub(super) struct WriteCounters {
    group_writes: AtomicU64,
    lost_races: AtomicU64,
}

impl MentisDb {
    /// How this engine's appends reached storage since it opened.
    pub fn write_counts(&self) -> WriteCounts {
        WriteCounts { group_writes: self.write_counters.group_writes.load(Relaxed), lost_races: self.write_counters.lost_races.load(Relaxed) }
    }
}

/// What became of one queued append, or why it failed.
pub(super) type Outcome = Result<Written, ToolError>;

/// One append's write: the stored thought, whether it was a replay, and
/// the chain's head hash right after the write (its own hash, or that of a
/// later thought of its group), so the reply needs no second lock.
#[derive(Debug)]
pub(super) struct Written {
    pub(super) thought: Thought,
    pub(super) replay: bool,
    pub(super) head_hash: Option<String>,
}

impl Written {
    fn replay(stored: Thought, chain: &Chain) -> Self {
        Written { thought: stored, replay: true, head_hash: chain.head().map(|t| t.hash.to_hex()) }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One append waiting for its group's write.
#[derive(Debug)]
pub(super) struct Queued {
    input: Mutex<Option<NewThought>>,
    outcome: Mutex<Option<Outcome>>,
}

impl Queued {
    fn new(input: NewThought) -> Arc<Self> {
        Arc::new(Queued { input: Mutex::new(Some(input)), outcome: Mutex::new(None) })
    }

    fn finish(&self, outcome: Outcome) {
        *lock(&self.outcome) = Some(outcome);
    }
}

/// The appends waiting on one chain, and whether one of them is leading.
#[derive(Debug, Default)]
pub(super) struct AppendQueue {
    waiting: Mutex<Waiting>,
    /// Signalled when a leader is done: its group has its outcomes.
    led: Condvar,
}

#[derive(Debug, Default)]
struct Waiting {
    queued: Vec<Arc<Queued>>,
    leading: bool,
}

/// The leader's turn: when it ends (even by a panic) the members of its
/// group left without an outcome are told so, and the waiting appends
/// are woken (one of them leads the next group).
struct Leading<'a> {
    queue: &'a AppendQueue,
    group: Vec<Arc<Queued>>,
}

impl Drop for Leading<'_> {
    fn drop(&mut self) {
        for q in &self.group {
            // Deferred members got their input back and wait for the next group.
            if lock(&q.input).is_none() && lock(&q.outcome).is_none() {
                q.finish(Err(ToolError::Unavailable("the append was interrupted; retry it (with the same thought_id it is idempotent)".into())));
            }
        }
        lock(&self.queue.waiting).leading = false;
        self.queue.led.notify_all();
    }
}

/// A thought of the group, placed and encoded, not yet written.
struct Placed {
    queued: Arc<Queued>,
    thought: Thought,
    payload: Vec<u8>,
}

impl MentisDb {
    /// Appends `input` (already redacted) to the chain of `slot`, sharing the
    /// storage write with the appends queued at the same time; returns once
    /// its write is done (not yet synced) with whether it was a replay.
    pub(super) fn append_in_group(&self, key: &str, slot: &ChainSlot, input: NewThought) -> Outcome {
        let me = Queued::new(input);
        let mut waiting = lock(&slot.queue.waiting);
        waiting.queued.push(me.clone());
        loop {
            if let Some(outcome) = lock(&me.outcome).take() {
                return outcome;
            }
            if waiting.leading {
                // Only with another thread leading: one thread alone (a browser, WASI) always leads.
                waiting = slot.queue.led.wait(waiting).unwrap_or_else(|e| e.into_inner());
                continue;
            }
            waiting.leading = true;
            drop(waiting);
            let mut lead = Leading { queue: &slot.queue, group: Vec::new() };
            {
                let mut state = write_lock(&slot.state);
                // Taken under the chain's lock: whatever queued while it was busy joins.
                lead.group = std::mem::take(&mut lock(&slot.queue.waiting).queued);
                self.write_group(key, slot, &mut state, &lead.group);
            }
            drop(lead);
            waiting = lock(&slot.queue.waiting);
        }
    }

    /// Writes `input` alone, under the chain's write lock the caller holds
    /// (a conditional append, which cannot wait in the queue): a group of one.
    pub(super) fn write_alone(&self, key: &str, slot: &ChainSlot, state: &mut ChainState, input: NewThought) -> Outcome {
        let me = Queued::new(input);
        self.write_group(key, slot, state, std::slice::from_ref(&me));
        let outcome = lock(&me.outcome).take();
        outcome.expect("a group of one always leaves its member an outcome")
    }

    /// Prepares, places, writes and commits `group` (the leader's work),
    /// leaving every member an outcome except those deferred to the next
    /// group (a `thought_id` repeated within this one, so that the second
    /// is answered as a replay of the first once that is stored).
    fn write_group(&self, key: &str, slot: &ChainSlot, state: &mut ChainState, group: &[Arc<Queued>]) {
        if let Err(e) = state.live() {
            group.iter().for_each(|q| q.finish(Err(e.clone())));
            return;
        }
        // Another engine's appends announced while the chain was busy: the
        // group then starts from the true tip instead of losing a race. A
        // refusal is dropped here; the race it causes reads the store.
        let _ = self.take_in_kept(key, slot, state, false);
        // Parsed back from `timestamp` this is `now_ms`: the append path parses it once.
        // Chain time never runs backwards (a clock stepped back, another
        // daemon's later stamp): leases and deadlines are judged on it.
        let now_ms = state.chain.time_at(crate::timestamp::renderable_millis(self.now_millis()));
        let timestamp = format_rfc3339_millis(now_ms);
        let mut placed: Vec<Placed> = Vec::with_capacity(group.len());
        let mut deferred = Vec::new();
        for queued in group.iter().cloned() {
            let Some(mut input) = lock(&queued.input).take() else { continue };
            if input.thought_id.as_ref().is_some_and(|id| placed.iter().any(|p| &p.thought.id == id)) {
                *lock(&queued.input) = Some(input);
                deferred.push(queued);
                continue;
            }
            if let Some(threshold) = self.config.dedup_threshold {
                state.chain.add_dedup_relation(&mut input, threshold, self.config.dedup_scan_window);
            }
            match state.chain.prepare_append_with_payload(input, timestamp.clone(), self.fresh_id(), self.ids.next_id_bytes()) {
                Err(e) => queued.finish(Err(e.into())),
                Ok(Prepared::Replay(stored)) => queued.finish(Ok(Written::replay(stored, &state.chain))),
                // Prepared at the tip: right for the first of the group.
                Ok(Prepared::New { thought, payload }) if placed.is_empty() => placed.push(Placed { queued, thought, payload }),
                Ok(Prepared::New { thought, .. }) => place_after(&state.chain, &mut placed, queued, thought),
            }
        }
        if !deferred.is_empty() {
            lock(&slot.queue.waiting).queued.splice(0..0, deferred);
        }
        let mut rebases = 0;
        while !placed.is_empty() {
            let mut bytes = Vec::new();
            for p in &placed {
                bytes.extend(record::encode_thought_with_payload(state.chain.format(), &p.thought, Some(p.payload.clone())));
            }
            self.write_counters.group_writes.fetch_add(1, Relaxed);
            match self.storage.append_at(&slot.object, state.byte_len, &bytes) {
                Ok(()) => {
                    state.byte_len += bytes.len() as u64;
                    let head_hash = placed.last().map(|p| p.thought.hash.to_hex());
                    for p in placed {
                        state.chain.commit(p.thought.clone());
                        p.queued.finish(Ok(Written { thought: p.thought, replay: false, head_hash: head_hash.clone() }));
                    }
                    let _ = self.take_in_kept(key, slot, state, false);
                    return;
                }
                // Another engine on the shared store appended first: take
                // its records in (verified; from its announcement when that
                // came already, else read from the store) and re-base the
                // group onto the new tip.
                Err(StorageError::Conflict { actual, .. }) if rebases < MAX_REBASES => {
                    rebases += 1;
                    self.write_counters.lost_races.fetch_add(1, Relaxed);
                    let announced = self.take_in_kept(key, slot, state, false).is_ok() && state.byte_len >= actual;
                    let caught_up = if announced { Ok(0) } else { self.catch_up_locked(key, slot, state) };
                    if let Err(e) = caught_up {
                        placed.iter().for_each(|p| p.queued.finish(Err(e.clone())));
                        return;
                    }
                    let before = std::mem::take(&mut placed);
                    for p in before {
                        place_after(&state.chain, &mut placed, p.queued, p.thought);
                    }
                }
                Err(StorageError::Conflict { .. }) => {
                    let busy = ToolError::Unavailable(format!(
                        "chain '{key}' is busy: this append lost {rebases} races in a row to other writers on the shared store and was not stored; retry it (with the same thought_id a retry is idempotent)"
                    ));
                    placed.iter().for_each(|p| p.queued.finish(Err(busy.clone())));
                    return;
                }
                Err(e) => {
                    // Roll back a partial write so the object stays a valid chain.
                    let _ = self.storage.truncate(&slot.object, state.byte_len);
                    placed.iter().for_each(|p| p.queued.finish(Err(AppendError::Storage(e.clone()).into())));
                    return;
                }
            }
        }
    }
}

/// Places `thought` after the last of `placed` (or at the chain's tip) and
/// adds it; a thought whose id the chain now holds (stored by another
/// writer meanwhile) is answered as a replay or a conflict instead.
fn place_after(chain: &Chain, placed: &mut Vec<Placed>, queued: Arc<Queued>, thought: Thought) {
    match chain.place(thought, placed.last().map(|p| &p.thought)) {
        Ok(Prepared::New { thought, payload }) => placed.push(Placed { queued, thought, payload }),
        Ok(Prepared::Replay(stored)) => queued.finish(Ok(Written::replay(stored, chain))),
        Err(e) => queued.finish(Err(e.into())),
    }
}
