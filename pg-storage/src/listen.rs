//! `LISTEN mentisdb_objects` on a connection and thread of its own.

use crate::NOTIFY_CHANNEL;
use mentisdb_core::StorageError;
use postgres::fallible_iterator::FallibleIterator;
use postgres::{Config, NoTls};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What the listener reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// An object was appended to (through any instance).
    Object(String),
    /// `bytes` were appended at `offset` of `object` (through any instance):
    /// what the notification carried, so no read is needed.
    Appended {
        /// The object appended to.
        object: String,
        /// Where the bytes start in it.
        offset: u64,
        /// The bytes appended.
        bytes: Vec<u8>,
    },
    /// An object was replaced as a whole (a chain rewritten by a forget or
    /// a migration, an agent registry edited), through any instance.
    Replaced(String),
    /// The listener (re)connected: notifications sent while it was not
    /// listening are lost, so look at every object of interest.
    Resync,
    /// Every notification received so far has been told (sent after each
    /// batch of them): a host that put announcements aside (a chain busy
    /// when they came) takes them in now.
    Told,
    /// The listener lost its connection (a server restart, an outage); it
    /// reconnects by itself and then sends [`Event::Resync`].
    Disconnected,
}

/// Stops the listener thread when dropped (within about a second).
#[derive(Debug)]
pub struct ListenerHandle {
    stop: Arc<AtomicBool>,
}

impl Drop for ListenerHandle {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// How long the listener waits for a notification before it checks whether
/// it should stop, and how long after a failed connection before it retries.
const TICK: Duration = Duration::from_secs(1);

pub(crate) fn spawn(config: Config, described: String, mut on_event: impl FnMut(Event) -> bool + Send + 'static) -> Result<ListenerHandle, StorageError> {
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    std::thread::Builder::new()
        .name("mentisdb-pg-listen".into())
        .spawn(move || {
            let mut failures = 0u32;
            while !stopped.load(Ordering::Relaxed) {
                match listen_once(&config, &stopped, &mut on_event, &mut failures) {
                    Ok(()) => return,
                    Err(e) => {
                        if failures == 0 && !on_event(Event::Disconnected) {
                            return;
                        }
                        // Quiet while it keeps failing: one warning, then debug lines.
                        if failures == 0 {
                            tracing::warn!(database = %described, error = %e, "PostgreSQL notifications lost; reconnecting");
                        } else {
                            tracing::debug!(database = %described, error = %e, "PostgreSQL listener still reconnecting");
                        }
                        failures += 1;
                        std::thread::sleep(TICK);
                    }
                }
            }
        })
        .map_err(|e| StorageError::Unavailable(format!("cannot start the PostgreSQL listener thread: {e}")))?;
    Ok(ListenerHandle { stop })
}

/// Listens until told to stop (`Ok`) or the connection fails (`Err`).
/// `failures` (failed attempts in a row) is reset once listening works.
fn listen_once(config: &Config, stop: &AtomicBool, on_event: &mut impl FnMut(Event) -> bool, failures: &mut u32) -> Result<(), postgres::Error> {
    let mut client = config.connect(NoTls)?;
    client.batch_execute(&format!("LISTEN {NOTIFY_CHANNEL}"))?;
    *failures = 0;
    if !on_event(Event::Resync) {
        return Ok(());
    }
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        // Wait up to TICK for a notification, then take every one already received:
        // an object announced many times meanwhile is told once.
        let mut batch = Batch::default();
        {
            let mut notifications = client.notifications();
            let first = notifications.timeout_iter(TICK).next()?;
            if let Some(first) = first {
                batch.push(&first);
                let mut buffered = notifications.iter();
                while batch.len() < MAX_BATCH {
                    match buffered.next()? {
                        Some(n) => batch.push(&n),
                        None => break,
                    }
                }
            }
        }
        let told_some = !batch.events.is_empty();
        for event in batch.events {
            if !on_event(event) {
                return Ok(());
            }
        }
        if told_some && !on_event(Event::Told) {
            return Ok(());
        }
        if client.is_closed() {
            // Surface the failure as an error: a query on a closed client fails.
            client.batch_execute("SELECT 1")?;
        }
    }
}

/// Most notifications told in one batch.
const MAX_BATCH: usize = 10_000;

/// Notifications received together, each distinct one once, in order.
#[derive(Default)]
struct Batch {
    events: Vec<Event>,
    seen: std::collections::BTreeSet<String>,
}

impl Batch {
    fn push(&mut self, n: &postgres::Notification) {
        if n.channel() == NOTIFY_CHANNEL && self.seen.insert(n.payload().to_string()) {
            self.events.push(Event::from_payload(n.payload()));
        }
    }

    fn len(&self) -> usize {
        self.events.len()
    }
}

/// The payload prefix of an object replaced as a whole (`write_atomic`):
/// object names never hold a `:`.
pub(crate) const REPLACED: &str = "replaced:";

/// Largest payload an append announces its bytes in; PostgreSQL's limit
/// is 8000 bytes. A larger append announces only its object.
const MAX_PAYLOAD: usize = 7_900;

/// The notification payload of `bytes` appended at `offset` of `object`:
/// `<object>@<offset>:<base64 bytes>` when it fits, else `<object>` (object
/// names never hold `@` or `:`).
pub(crate) fn announcement(object: &str, offset: i64, bytes: &[u8]) -> String {
    if object.len() + 24 + bytes.len().div_ceil(3) * 4 > MAX_PAYLOAD {
        return object.to_string();
    }
    format!("{object}@{offset}:{}", mentisdb_core::base64::encode(bytes))
}

impl Event {
    /// The event a notification's payload names.
    fn from_payload(payload: &str) -> Event {
        if let Some(object) = payload.strip_prefix(REPLACED) {
            return Event::Replaced(object.to_string());
        }
        let carried = payload.split_once('@').and_then(|(object, rest)| {
            let (offset, data) = rest.split_once(':')?;
            Some(Event::Appended { object: object.to_string(), offset: offset.parse().ok()?, bytes: mentisdb_core::base64::decode(data)? })
        });
        // A payload that does not parse still names its object: read it.
        carried.unwrap_or_else(|| Event::Object(payload.split('@').next().unwrap_or(payload).to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_append_announces_its_bytes_when_they_fit() {
        let small = announcement("chains/a.mdb", 42, b"\x00record\xff");
        assert_eq!(Event::from_payload(&small), Event::Appended { object: "chains/a.mdb".into(), offset: 42, bytes: b"\x00record\xff".to_vec() });
        let big = announcement("chains/a.mdb", 42, &vec![7u8; 6_000]);
        assert!(big.len() <= MAX_PAYLOAD);
        assert_eq!(Event::from_payload(&big), Event::Object("chains/a.mdb".into()));
        let fits = announcement("chains/a.mdb", 42, &vec![7u8; 5_800]);
        assert!(fits.len() <= MAX_PAYLOAD && matches!(Event::from_payload(&fits), Event::Appended { .. }));
        assert_eq!(Event::from_payload("replaced:chains/a.mdb"), Event::Replaced("chains/a.mdb".into()));
        assert_eq!(Event::from_payload("chains/a.mdb@x:!!"), Event::Object("chains/a.mdb".into()));
    }
}
