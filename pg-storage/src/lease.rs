//! A lease one instance holds at a time: a session-level PostgreSQL
//! advisory lock on a connection and thread of its own.
//!
//! Several daemons on one database must not all do a job that only one
//! should do (delivering webhooks: each would send every thought). Each
//! asks for the lease; PostgreSQL grants the advisory lock to one session.
//! The holder keeps it while its connection lives; when the holder stops,
//! is killed or loses its connection, PostgreSQL releases the lock and
//! another instance takes it within [`RETRY`]. A holder that loses its
//! connection reports the lease lost at once, so two instances hold it at
//! the same time only for as long as the old one takes to notice (at most
//! [`RETRY`] plus a round trip).

use postgres::{Config, NoTls};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How often a waiting instance asks for the lease again, and how often the
/// holder checks that its connection (and so its lock) is still alive.
pub const RETRY: Duration = Duration::from_secs(1);

/// A lease asked for by [`crate::PgStorage::lease`]: [`Lease::held`] says
/// whether this instance holds it now. Dropping it gives it up (within
/// about [`RETRY`]).
#[derive(Debug)]
pub struct Lease {
    held: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
}

impl Lease {
    /// Whether this instance holds the lease now.
    pub fn held(&self) -> bool {
        self.held.load(Ordering::Relaxed)
    }

    /// A cheap handle answering [`Lease::held`] (for a task that outlives a borrow).
    pub fn watch(&self) -> impl Fn() -> bool + Send + Sync + 'static {
        let held = self.held.clone();
        move || held.load(Ordering::Relaxed)
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.held.store(false, Ordering::Relaxed);
    }
}

pub(crate) fn spawn(config: Config, key: i64, name: &str) -> std::io::Result<Lease> {
    let held = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let (h, s) = (held.clone(), stop.clone());
    let name = name.to_string();
    std::thread::Builder::new().name("mentisdb-pg-lease".into()).spawn(move || {
        while !s.load(Ordering::Relaxed) {
            if let Err(e) = hold(&config, key, &h, &s, &name) {
                if h.swap(false, Ordering::Relaxed) {
                    tracing::warn!(lease = %name, error = %e, "lost the lease with its PostgreSQL connection");
                }
            }
            std::thread::sleep(RETRY);
        }
    })?;
    Ok(Lease { held, stop })
}

/// Connects, then asks for the lock every [`RETRY`] until it is granted,
/// then keeps checking the connection until told to stop (`Ok`, lock
/// released with the session) or the connection fails (`Err`).
fn hold(config: &Config, key: i64, held: &AtomicBool, stop: &AtomicBool, name: &str) -> Result<(), postgres::Error> {
    let mut client = config.connect(NoTls)?;
    while !stop.load(Ordering::Relaxed) {
        if !held.load(Ordering::Relaxed) {
            let granted: bool = client.query_one("SELECT pg_try_advisory_lock($1)", &[&key])?.get(0);
            if granted {
                held.store(true, Ordering::Relaxed);
                tracing::info!(lease = %name, "holding the lease");
            }
        } else {
            client.simple_query("SELECT 1")?;
        }
        std::thread::sleep(RETRY);
    }
    Ok(())
}
