//! Conditional appends from many threads, one transaction.
//!
//! Every [`crate::PgStorage::append_at`] (after an object's first bytes)
//! queues its chunk here and asks a pool thread to flush; one flush runs
//! at a time, taking every chunk queued by then and inserting them all
//! with one statement, so one commit (one WAL flush) carries the appends
//! of many chains; what queues while it runs goes in the next. Each chunk keeps its own condition: it is inserted only when
//! its object is exactly `expected` bytes long and no other writer
//! inserted at that offset first (`ON CONFLICT DO NOTHING` on the primary
//! key), else its append answers [`mentisdb_core::StorageError::Conflict`]
//! and nothing of it is stored. Rows are inserted in object order, so two
//! instances' flushes wait on each other's rows in one order and never
//! deadlock.

use crate::pool::Connection;
use crate::{failed, NOTIFY_CHANNEL};
use mentisdb_core::StorageError;
use postgres::error::SqlState;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex};

/// Inserts each requested chunk whose condition holds and announces it
/// (with its bytes when they fit a notification: `listen.rs`); answers
/// every requested chunk with the object's length the statement saw and
/// whether the chunk was inserted.
const INSERT_CHUNKS: &str = "WITH req AS (
        SELECT r.*, coalesce((SELECT c.end_offset FROM mentisdb_chunks c WHERE c.object = r.object ORDER BY c.start_offset DESC LIMIT 1), 0) AS current
        FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bytea[], $5::text[]) AS r(object, start_offset, end_offset, bytes, announce)
    ), ins AS (
        INSERT INTO mentisdb_chunks (object, start_offset, end_offset, bytes)
        SELECT object, start_offset, end_offset, bytes FROM req WHERE current = start_offset
        ORDER BY object, start_offset
        ON CONFLICT (object, start_offset) DO NOTHING
        RETURNING object, start_offset
    )
    SELECT req.object, req.start_offset, req.current, ins.object IS NOT NULL,
           CASE WHEN ins.object IS NOT NULL THEN pg_notify($6, req.announce) END
    FROM req LEFT JOIN ins ON ins.object = req.object AND ins.start_offset = req.start_offset";

/// What became of one queued chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    /// Stored (and announced).
    Inserted,
    /// Not stored: the object was `current` bytes long, or (when that is
    /// the length expected) another writer inserted at that offset at the
    /// same moment.
    Refused {
        /// The object's length the statement saw.
        current: u64,
    },
}

/// How many times a flush that PostgreSQL chose as a deadlock victim (or
/// that hit a serialization failure) runs again before its appends fail.
const RETRIES: usize = 8;

/// One queued chunk and where its answer goes.
pub(crate) struct Pending {
    pub(crate) object: String,
    pub(crate) expected: i64,
    pub(crate) bytes: Vec<u8>,
    pub(crate) reply: SyncSender<Result<Answer, StorageError>>,
}

/// The chunks waiting for a flush, and whether a flush is scheduled.
///
/// One flush at a time per instance: while it runs, the chunks queued
/// meanwhile wait and go in the next flush together (more appends per
/// commit under load; one flush in flight when appends arrive one at a
/// time). (Measured, `scripts/pg-bench.sh`: with one, 16 chains through 3
/// instances went 2,926 -> 4,171 appends/s; with two, 3,745; unlimited,
/// every pool thread flushing, was the 2,926.) Only the append that finds
/// no flush scheduled asks a pool thread for one; the others only queue
/// (asking for each woke a pool thread that found a flush running and
/// went back to sleep: a context switch per append for nothing).
/// Tried and not kept (2026-11-26): the appending thread that finds no
/// flush scheduled flushing on a connection of its own instead of waking a
/// pool thread: 7,923 against 7,619 appends/s for 16 chains through 3
/// instances (4 interleaved runs each), the same context switches per
/// append, within this machine's noise; and a caller inside an async
/// worker could not run the sync client at all.
#[derive(Default)]
pub(crate) struct Batcher {
    pending: Mutex<Vec<Pending>>,
    scheduled: AtomicBool,
}

impl Batcher {
    /// Queues `p`; true when the caller must ask a pool thread to run
    /// [`Batcher::flush`] (no flush was scheduled that will take `p`).
    pub(crate) fn push(&self, p: Pending) -> bool {
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).push(p);
        !self.scheduled.swap(true, SeqCst)
    }

    /// No flush could be asked for (the pool has stopped): the next push asks again.
    pub(crate) fn unschedule(&self) {
        self.scheduled.store(false, SeqCst);
    }

    /// Flushes until nothing is queued, then leaves the next push to
    /// schedule a flush.
    pub(crate) fn flush(self: &Arc<Self>, conn: &mut Connection) {
        loop {
            while self.flush_queued(conn) {}
            self.scheduled.store(false, SeqCst);
            // A chunk queued between the last (empty) take and the store saw
            // a flush scheduled and asked for none: this flush takes it,
            // unless a push since has scheduled another.
            if self.pending.lock().unwrap_or_else(|e| e.into_inner()).is_empty() || self.scheduled.swap(true, SeqCst) {
                return;
            }
        }
    }

    /// Takes every queued chunk and inserts them in one statement,
    /// answering each; whether there was any.
    fn flush_queued(self: &Arc<Self>, conn: &mut Connection) -> bool {
        let mut batch = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()));
        if batch.is_empty() {
            return false;
        }
        batch.sort_by(|a, b| (&a.object, a.expected).cmp(&(&b.object, b.expected)));
        // Two appends at one offset of one object: one statement would store
        // the first and answer both by that row. The later ones wait for the
        // next statement, which refuses them with the length the first left.
        let mut later = Vec::new();
        let mut i = 1;
        while i < batch.len() {
            if batch[i].object == batch[i - 1].object && batch[i].expected == batch[i - 1].expected {
                later.push(batch.remove(i));
            } else {
                i += 1;
            }
        }
        if !later.is_empty() {
            let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            later.append(&mut pending);
            *pending = later;
        }
        let outcome = insert(conn, &batch);
        for p in batch {
            let answer = match &outcome {
                Ok(rows) => rows.iter().find(|(object, start, _)| *object == p.object && *start == p.expected).map(|(_, _, a)| *a).ok_or_else(|| StorageError::io(&p.object, "PostgreSQL did not answer for this append")),
                Err(e) => Err(e.clone()),
            };
            let _ = p.reply.send(answer);
        }
        true
    }
}

/// Runs [`INSERT_CHUNKS`] for `batch`: each chunk's `(object, start_offset)` and answer.
fn insert(conn: &mut Connection, batch: &[Pending]) -> Result<Vec<(String, i64, Answer)>, StorageError> {
    let objects: Vec<&str> = batch.iter().map(|p| p.object.as_str()).collect();
    let starts: Vec<i64> = batch.iter().map(|p| p.expected).collect();
    let ends: Vec<i64> = batch.iter().map(|p| p.expected + p.bytes.len() as i64).collect();
    let bytes: Vec<&[u8]> = batch.iter().map(|p| p.bytes.as_slice()).collect();
    let announce: Vec<String> = batch.iter().map(|p| crate::listen::announcement(&p.object, p.expected, &p.bytes)).collect();
    let first = batch.first().map_or("", |p| p.object.as_str());
    let mut tries = 0;
    loop {
        let (client, statement) = conn.prepared(INSERT_CHUNKS)?;
        match client.query(&statement, &[&objects, &starts, &ends, &bytes, &announce, &NOTIFY_CHANNEL]) {
            Ok(rows) => {
                let answer = |inserted: bool, current: i64| if inserted { Answer::Inserted } else { Answer::Refused { current: current as u64 } };
                return Ok(rows.iter().map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1), answer(r.get(3), r.get(2)))).collect());
            }
            Err(e) if tries < RETRIES && matches!(e.code(), Some(c) if *c == SqlState::T_R_DEADLOCK_DETECTED || *c == SqlState::T_R_SERIALIZATION_FAILURE) => tries += 1,
            Err(e) => return Err(failed(first, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(object: &str) -> Pending {
        Pending { object: object.into(), expected: 1, bytes: vec![1], reply: std::sync::mpsc::sync_channel(1).0 }
    }

    #[test]
    fn only_the_push_that_finds_no_flush_scheduled_asks_for_one() {
        let batcher = Batcher::default();
        assert!(batcher.push(pending("chains/a.mdb")), "the first push schedules a flush");
        assert!(!batcher.push(pending("chains/b.mdb")), "the scheduled flush will take the second");
        assert_eq!(batcher.pending.lock().unwrap().len(), 2, "both wait for it");
        batcher.unschedule();
        assert!(batcher.push(pending("chains/c.mdb")), "a flush that could not be asked for is asked for again");
    }
}
