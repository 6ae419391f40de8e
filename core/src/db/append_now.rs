//! Appends written on a host's event loop and acknowledged once a drain
//! has synced them: no thread per append waits for its fsync.
//!
//! [`MentisDb::append_now`] writes a thought under the chain's write lock
//! when nothing would make it wait (the chain in memory, its lock free, a
//! backend whose appends are quick: [`Storage::quick_appends`]), renders
//! its reply and queues it on the chain's [`DurableQueue`], still under the
//! lock, so the queue holds the chain's order. Otherwise it is
//! [`NotQueued::Busy`] with nothing written: the host tries again or calls
//! [`Busy::wait`] where waiting is fine, which queues it the same way.
//!
//! The reply is not sent yet: the host runs a [`Drain`] on a thread that
//! may block. It takes every queued append, syncs the chain object once
//! for all of them (each was written before), then for each in order tells
//! the observers and hands the reply to the host's [`ReplyLater`]. One
//! fsync and one hand-off per batch, where `append_group.rs`'s path (every
//! other caller's: [`MentisDb::append`], a database backend) costs a thread
//! and two waits per append. An append is acknowledged only after its
//! sync, on either path.
//!
//! [`Storage::quick_appends`]: crate::storage::Storage::quick_appends

use super::append_group::Written;
use super::{write_lock, ChainSlot, ChainState, MentisDb};
use crate::chain::{Appended, NewThought};
use crate::redact::Redaction;
use crate::error::{AppendError, ToolError};
use crate::storage::StorageError;
use crate::json_text::JsonText;
use std::sync::{Arc, Mutex, MutexGuard, RwLockWriteGuard, TryLockError};

/// Where a host wants an append's reply once it is durable (a channel's
/// sender, typically): called once, on the drain's thread, for an append
/// that was queued ([`Queued`]). Dropped uncalled when the append was
/// refused or not written ([`NotQueued`], a [`Busy`] dropped), or when its
/// drain was dropped unrun or panicked: the host then answers "interrupted".
pub type ReplyLater = Box<dyn FnOnce(Result<JsonText, ToolError>) + Send>;

/// An append written and rendered, waiting for its chain's sync.
struct Waiting {
    key: String,
    appended: Appended,
    reply: JsonText,
    later: ReplyLater,
}

/// A chain's appends written by [`MentisDb::append_now`], not yet synced,
/// in the chain's order, and whether a [`Drain`] is running for them.
#[derive(Default)]
pub(super) struct DurableQueue {
    state: Mutex<QueueState>,
}

#[derive(Default)]
struct QueueState {
    waiting: Vec<Waiting>,
    draining: bool,
}

impl std::fmt::Debug for DurableQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.lock();
        f.debug_struct("DurableQueue").field("waiting", &s.waiting.len()).field("draining", &s.draining).finish()
    }
}

impl DurableQueue {
    fn lock(&self) -> MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `w`; `true` when no drain runs, so the caller must start one.
    fn push(&self, w: Waiting) -> bool {
        let mut s = self.lock();
        s.waiting.push(w);
        !std::mem::replace(&mut s.draining, true)
    }

    /// Everything queued, or `None` (and the drain ends) when nothing is.
    fn take(&self) -> Option<Vec<Waiting>> {
        let mut s = self.lock();
        if s.waiting.is_empty() {
            s.draining = false;
            return None;
        }
        Some(std::mem::take(&mut s.waiting))
    }
}

/// What [`MentisDb::append_tool_now`] did with a written append.
#[derive(Debug)]
#[must_use = "a drain to run, or the append is never acknowledged"]
pub enum Queued {
    /// Queued behind a drain that is running: its reply comes from that one.
    Joined,
    /// Queued with no drain running: run this one on a thread that may block.
    Drain(Drain),
}

/// The work that acknowledges a chain's queued appends: run it
/// ([`Drain::run`]) on a thread that may block (it fsyncs). Dropped unrun
/// (a host shutting down) or ended by a panic, it drops the queued appends'
/// [`ReplyLater`]s uncalled (their hosts answer "interrupted") and the
/// chain's next append starts a new drain.
#[must_use = "the queued appends are acknowledged only when it runs"]
pub struct Drain {
    slot: Arc<ChainSlot>,
    /// The queue was found empty: the drain ended as it should.
    ended: bool,
}

impl std::fmt::Debug for Drain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Drain").field("object", &self.slot.object).finish()
    }
}

impl Drop for Drain {
    fn drop(&mut self) {
        if !self.ended {
            let mut s = self.slot.durable.lock();
            s.waiting.clear();
            s.draining = false;
        }
    }
}

impl Drain {
    /// Syncs and acknowledges the chain's queued appends, batch after batch,
    /// until none is left: each batch costs one [`crate::Storage::sync`].
    pub fn run(mut self, db: &MentisDb) {
        while let Some(batch) = self.slot.durable.take() {
            let synced = db.storage.sync(&self.slot.object);
            for w in batch {
                let reply = match &synced {
                    Ok(()) => {
                        // A panicking observer must not cost a durable append its reply.
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| db.after_durable(&w.key, &w.appended.thought, w.appended.replay)));
                        Ok(w.reply)
                    }
                    Err(e) => Err(not_durable(w.appended.thought.index, e)),
                };
                (w.later)(reply);
            }
        }
        self.ended = true;
    }
}

/// The error of an append written but not made durable.
pub(super) fn not_durable(index: u64, e: &StorageError) -> ToolError {
    AppendError::Storage(StorageError::Unavailable(format!("thought {index} was written but could not be made durable: {e}"))).into()
}

/// A reply rendered from an append under the chain's lock.
pub(crate) type Render = Box<dyn FnOnce(&Appended) -> JsonText + Send>;

/// Why [`MentisDb::append_tool_now`] queued nothing.
#[derive(Debug)]
pub enum NotQueued {
    /// Refused before anything was written (bad arguments, a conflicting
    /// `thought_id`, a bad signature, a deleted chain), or its write failed
    /// and was rolled back: the final reply.
    Refused(ToolError),
    /// It would have waited (the chain not in memory, its lock held):
    /// nothing was written; try again later or where waiting is fine.
    Busy(Busy),
}

/// An append that would have waited, ready to try again
/// ([`Busy::retry_now`]) or to wait ([`Busy::wait`]).
pub struct Busy(Box<Unwritten>);

/// An append not written yet, its input redacted.
struct Unwritten {
    key: String,
    input: NewThought,
    redactions: Vec<Redaction>,
    render: Render,
    later: ReplyLater,
    not_in_memory: bool,
}

impl std::fmt::Debug for Busy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Busy").field("key", &self.0.key).finish_non_exhaustive()
    }
}

impl Busy {
    /// Whether the chain was not in memory (not loaded, or not created
    /// yet): trying again now will not help, [`Busy::wait`] loads it.
    pub fn chain_not_in_memory(&self) -> bool {
        self.0.not_in_memory
    }

    /// Tries again, still without waiting.
    pub fn retry_now(self, db: &MentisDb) -> Result<Queued, NotQueued> {
        db.write_and_queue_now(self)
    }

    /// Writes it, waiting for the chain's lock (and loading or creating the
    /// chain): on a thread that may block.
    pub fn wait(self, db: &MentisDb) -> Result<Queued, ToolError> {
        let slot = db.slot_for_write(&self.0.key, None)?;
        let state = write_lock(&slot.state);
        db.write_and_queue(&slot, state, self)
    }
}

impl MentisDb {
    /// Whether appends may be queued for a drain ([`MentisDb::append_now`]):
    /// the backend's appends are quick and no `dedup_threshold` makes an
    /// append scan the chain.
    pub(crate) fn queues_appends_at_all(&self) -> bool {
        self.storage.quick_appends() && self.config.dedup_threshold.is_none()
    }

    /// Writes `input` (not yet redacted) to chain `key` now and queues its
    /// reply, `render`ed from the append under the chain's lock, until a
    /// drain has synced it; `later` then receives that reply. Nothing
    /// waits: a chain not in memory or whose lock is held is
    /// [`NotQueued::Busy`], with nothing written. Only where
    /// [`MentisDb::queues_appends_at_all`]: the caller asks first.
    pub(crate) fn append_now(&self, key: &str, mut input: NewThought, render: Render, later: ReplyLater) -> Result<Queued, NotQueued> {
        debug_assert!(self.queues_appends_at_all());
        let redactions = self.redact(&mut input).map_err(NotQueued::Refused)?;
        self.write_and_queue_now(Busy(Box::new(Unwritten { key: key.to_string(), input, redactions, render, later, not_in_memory: false })))
    }

    fn write_and_queue_now(&self, mut append: Busy) -> Result<Queued, NotQueued> {
        append.0.not_in_memory = false;
        let chains = match self.chains.try_read() {
            Ok(chains) => chains,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => return Err(NotQueued::Busy(append)),
        };
        let Some(slot) = chains.get(&append.0.key).cloned() else {
            append.0.not_in_memory = true;
            return Err(NotQueued::Busy(append));
        };
        drop(chains);
        let state = match slot.state.try_write() {
            Ok(state) => state,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => return Err(NotQueued::Busy(append)),
        };
        self.write_and_queue(&slot, state, append).map_err(NotQueued::Refused)
    }

    /// Writes `append` under the chain's write lock (`state`) and queues its
    /// reply before the lock is let go, so the queue keeps the chain's order.
    fn write_and_queue(&self, slot: &Arc<ChainSlot>, mut state: RwLockWriteGuard<'_, ChainState>, append: Busy) -> Result<Queued, ToolError> {
        state.live()?;
        self.touch(slot);
        let Unwritten { key, input, redactions, render, later, .. } = *append.0;
        let Written { thought, replay, head_hash } = self.write_alone(&key, slot, &mut state, input)?;
        let appended = Appended { thought, replay, redactions, head_hash };
        let reply = render(&appended);
        let start = slot.durable.push(Waiting { key, appended, reply, later });
        drop(state);
        Ok(if start { Queued::Drain(Drain { slot: slot.clone(), ended: false }) } else { Queued::Joined })
    }
}
