//! Log lines written in batches by a background thread that wakes on a
//! timer, never on a line: a request that logs (every call logs its
//! interaction line) only copies the line into a buffer, with no system
//! call and no thread to wake. On 2 cores, waking a writer thread for each
//! line (as `tracing-appender` does when its thread is idle) cost a ranked
//! query over REST about a tenth of its time.
//!
//! Lines reach the sink at most [`FLUSH_EVERY`] after they were logged;
//! warnings and errors (and anything logged while the guard is being
//! dropped) are written at once, after the lines before them, so a message
//! printed next (a fatal error on stderr) never comes before its warnings.
//! A buffer past [`MAX_BUFFERED`] is written by the logging thread itself:
//! a sink that cannot keep up (a paused terminal, a stalled pipe) slows
//! every thread that logs instead of growing memory without bound.
//! Dropping the [`FlushGuard`] writes whatever is left.

use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// How long a line may wait in the buffer.
pub const FLUSH_EVERY: Duration = Duration::from_millis(50);
/// Buffered bytes past which the logging thread writes them itself.
pub const MAX_BUFFERED: usize = 1 << 20;

/// A `tracing_subscriber` writer filling a shared buffer.
#[derive(Clone)]
pub struct BatchedWriter {
    shared: Arc<Shared>,
    /// Written at once (a warning or an error), not at the next batch.
    urgent: bool,
}

struct Shared {
    buffer: Mutex<Pending>,
    /// Wakes the flusher early: only to stop.
    stop: Condvar,
    sink: Mutex<Sink>,
}

/// Where the lines go, and the buffer last written (kept, emptied, to
/// take the next batch: no allocation per batch once warm).
struct Sink {
    out: Box<dyn Write + Send>,
    spare: Vec<u8>,
}

/// Capacity a buffer keeps between batches, at most.
const KEPT_CAPACITY: usize = 64 << 10;

#[derive(Default)]
struct Pending {
    bytes: Vec<u8>,
    stopping: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    /// Takes the buffered lines and writes them to the sink, in the order
    /// they were taken (the sink's lock is taken before the buffer is let
    /// go). A failing sink loses them: logging must never fail a request.
    fn write_out(&self, mut pending: MutexGuard<'_, Pending>) {
        if pending.bytes.is_empty() {
            return;
        }
        let mut sink = lock(&self.sink);
        let Sink { out, spare } = &mut *sink;
        std::mem::swap(&mut pending.bytes, spare);
        drop(pending);
        let _ = out.write_all(spare).and_then(|()| out.flush());
        spare.clear();
        spare.shrink_to(KEPT_CAPACITY);
    }
}

/// Writes the last lines when dropped (keep it alive while logging).
pub struct FlushGuard {
    shared: Arc<Shared>,
    flusher: Option<std::thread::JoinHandle<()>>,
}

impl Drop for FlushGuard {
    fn drop(&mut self) {
        lock(&self.shared.buffer).stopping = true;
        self.shared.stop.notify_all();
        if let Some(flusher) = self.flusher.take() {
            let _ = flusher.join();
        }
    }
}

/// A writer into `sink` and the guard that flushes it; the flusher thread
/// is named `mentisdb-log`.
pub fn batched(sink: impl Write + Send + 'static) -> std::io::Result<(BatchedWriter, FlushGuard)> {
    let shared = Arc::new(Shared { buffer: Mutex::new(Pending::default()), stop: Condvar::new(), sink: Mutex::new(Sink { out: Box::new(sink), spare: Vec::new() }) });
    let flusher = {
        let shared = shared.clone();
        std::thread::Builder::new().name("mentisdb-log".into()).spawn(move || loop {
            let mut pending = lock(&shared.buffer);
            if !pending.stopping {
                pending = shared.stop.wait_timeout(pending, FLUSH_EVERY).unwrap_or_else(|e| e.into_inner()).0;
            }
            let stopping = pending.stopping;
            shared.write_out(pending);
            if stopping {
                return;
            }
        })?
    };
    Ok((BatchedWriter { shared: shared.clone(), urgent: false }, FlushGuard { shared, flusher: Some(flusher) }))
}

impl Write for BatchedWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut pending = lock(&self.shared.buffer);
        pending.bytes.extend_from_slice(buf);
        if self.urgent || pending.stopping || pending.bytes.len() > MAX_BUFFERED {
            self.shared.write_out(pending);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for BatchedWriter {
    type Writer = BatchedWriter;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }

    fn make_writer_for(&'a self, meta: &tracing::Metadata<'_>) -> Self::Writer {
        BatchedWriter { urgent: matches!(*meta.level(), tracing::Level::WARN | tracing::Level::ERROR), ..self.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink the test can read while the writer owns it.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            lock(&self.0).extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    struct Callsite;
    impl tracing::callsite::Callsite for Callsite {
        fn set_interest(&self, _: tracing::subscriber::Interest) {}
        fn metadata(&self) -> &tracing::Metadata<'_> {
            unreachable!("not registered")
        }
    }
    static CALLSITE: Callsite = Callsite;

    #[test]
    fn lines_arrive_in_order_within_the_flush_interval_and_at_the_guards_drop() {
        let sink = Captured::default();
        let (writer, guard) = batched(sink.clone()).unwrap();
        let mut w = writer.clone();
        w.write_all(b"one\n").unwrap();
        assert!(lock(&sink.0).is_empty(), "a line is buffered, not written by the logging thread");
        let warning = tracing::Metadata::new("w", "t", tracing::Level::WARN, None, None, None, tracing::field::FieldSet::new(&[], tracing::callsite::Identifier(&CALLSITE)), tracing::metadata::Kind::EVENT);
        let mut urgent = tracing_subscriber::fmt::MakeWriter::make_writer_for(&writer, &warning);
        urgent.write_all(b"warn\n").unwrap();
        assert_eq!(*lock(&sink.0), b"one\nwarn\n", "a warning is written at once, after the lines before it");
        lock(&sink.0).clear();
        w.write_all(b"two\n").unwrap();
        let deadline = std::time::Instant::now() + 20 * FLUSH_EVERY;
        while lock(&sink.0).is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(FLUSH_EVERY / 5);
        }
        assert_eq!(*lock(&sink.0), b"two\n", "the flusher wrote it on its own");
        let big = vec![b'x'; MAX_BUFFERED];
        w.write_all(b"three\n").unwrap();
        w.write_all(&big).unwrap();
        assert!(lock(&sink.0).len() > MAX_BUFFERED, "past the cap the logging thread writes, in order");
        w.write_all(b"four\n").unwrap();
        drop(guard);
        let written = lock(&sink.0).clone();
        assert!(written.starts_with(b"two\nthree\nxxx") && written.ends_with(b"xfour\n"), "dropping the guard writes the rest, in order");
        assert_eq!(written.len(), 4 + 6 + MAX_BUFFERED + 5);
        w.write_all(b"late\n").unwrap();
        assert!(lock(&sink.0).ends_with(b"four\nlate\n"), "a line logged after the guard is gone is written at once");
    }
}
