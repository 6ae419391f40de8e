//! The clients live on their own OS threads.
//!
//! The sync `postgres` client runs a small tokio runtime of its own and
//! panics when called inside another runtime's worker, which is where
//! `mentisdbd` calls storage from (quick reads in async handlers). So each
//! [`postgres::Client`] is owned by a dedicated thread; a storage call sends
//! a job over a channel and blocks on the reply. A job that finds its
//! connection closed (server restart, network cut) answers
//! `StorageError::Unreachable`, and the next job on that thread reconnects.

use mentisdb_core::StorageError;
use postgres::{Client, Config, NoTls, Statement};
use std::collections::HashMap;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub(crate) type Job = Box<dyn FnOnce(&mut Connection) + Send>;

/// A connection idle this long is checked with a round trip before it is
/// used again: one the server closed meanwhile (a restart, an outage) is
/// replaced instead of failing the first call after it.
const IDLE_CHECK: Duration = Duration::from_secs(1);
/// How long that check may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// One thread's connection: connected on first use and again after it broke.
pub(crate) struct Connection {
    config: Config,
    client: Option<Client>,
    /// Statements prepared on `client` (parsed and planned once per connection).
    statements: HashMap<&'static str, Statement>,
    last_used: Instant,
    /// The pool's suspicion count ([`Pool::suspect_connections`]) when this
    /// connection was last known good.
    trusted_at: u64,
    suspicion: Arc<AtomicU64>,
}

impl Connection {
    fn new(config: Config, suspicion: Arc<AtomicU64>) -> Self {
        Connection { config, client: None, statements: HashMap::new(), last_used: Instant::now(), trusted_at: 0, suspicion }
    }

    /// The connected client, connecting when there is none, it closed, or it
    /// was idle or under suspicion and no longer answers.
    pub(crate) fn client(&mut self) -> Result<&mut Client, StorageError> {
        let idle = std::mem::replace(&mut self.last_used, Instant::now()).elapsed() >= IDLE_CHECK;
        let suspicion = self.suspicion.load(Ordering::Relaxed);
        let doubt = idle || std::mem::replace(&mut self.trusted_at, suspicion) != suspicion;
        if self.client.as_mut().is_some_and(|c| c.is_closed() || (doubt && c.is_valid(CHECK_TIMEOUT).is_err())) {
            self.client = None;
        }
        if self.client.is_none() {
            self.statements.clear();
            let mut client = self.config.connect(NoTls).map_err(|e| StorageError::Unreachable(format!("cannot connect to PostgreSQL at {}: {e}", crate::describe(&self.config))))?;
            // Every hot statement is prepared once per connection; planning
            // it anew on each run (PostgreSQL's custom plans) was a large part
            // of the server's work (`./scripts/pg-bench.sh`: one generic plan,
            // 16 chains through 3 instances 6,510-6,812 -> 7,288-8,124
            // appends/s). Servers before PostgreSQL 12 lack the setting: ignored.
            let _ = client.batch_execute("SET plan_cache_mode = force_generic_plan");
            self.client = Some(client);
        }
        Ok(self.client.as_mut().expect("connected above"))
    }

    /// The connected client and `sql` prepared on it (once per connection).
    pub(crate) fn prepared(&mut self, sql: &'static str) -> Result<(&mut Client, Statement), StorageError> {
        self.client()?;
        let client = self.client.as_mut().expect("connected above");
        let statement = match self.statements.get(sql) {
            Some(s) => s.clone(),
            None => {
                let s = client.prepare(sql).map_err(|e| crate::failed("prepare", e))?;
                self.statements.insert(sql, s.clone());
                s
            }
        };
        Ok((client, statement))
    }

    /// Forgets a connection that failed so the next call reconnects, and
    /// makes the other threads check theirs (an outage closes them all).
    pub(crate) fn check(&mut self) {
        if self.client.as_ref().is_some_and(Client::is_closed) {
            self.client = None;
            self.suspicion.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A fixed set of threads, each owning one [`Connection`].
pub(crate) struct Pool {
    jobs: Mutex<Sender<Job>>,
    suspicion: Arc<AtomicU64>,
}

impl Pool {
    /// Starts `threads` workers; each connects on its first job.
    pub(crate) fn start(config: &Config, threads: usize) -> Result<Pool, StorageError> {
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        let suspicion = Arc::new(AtomicU64::new(0));
        for n in 0..threads.max(1) {
            let rx = rx.clone();
            let mut conn = Connection::new(config.clone(), suspicion.clone());
            std::thread::Builder::new()
                .name(format!("mentisdb-pg-{n}"))
                .spawn(move || worker(&rx, &mut conn))
                .map_err(|e| StorageError::Unavailable(format!("cannot start a PostgreSQL client thread: {e}")))?;
        }
        Ok(Pool { jobs: Mutex::new(tx), suspicion })
    }

    /// Makes every thread check its connection with a round trip before its
    /// next call (the listener lost its connection: the server may have
    /// closed them all), so the first calls after an outage do not fail.
    pub(crate) fn suspect_connections(&self) {
        self.suspicion.fetch_add(1, Ordering::Relaxed);
    }

    /// Runs `f` on a worker's client and waits for its answer.
    pub(crate) fn run<R: Send + 'static>(&self, f: impl FnOnce(&mut Client) -> Result<R, StorageError> + Send + 'static) -> Result<R, StorageError> {
        self.run_on_connection(move |conn| conn.client().and_then(f))
    }

    /// [`Pool::run`] for a call that uses prepared statements ([`Connection::prepared`]).
    pub(crate) fn run_on_connection<R: Send + 'static>(&self, f: impl FnOnce(&mut Connection) -> Result<R, StorageError> + Send + 'static) -> Result<R, StorageError> {
        let (reply_tx, reply_rx) = mpsc::sync_channel(1);
        let job: Job = Box::new(move |conn: &mut Connection| {
            let result = f(conn);
            conn.check();
            let _ = reply_tx.send(result);
        });
        self.submit(job)?;
        reply_rx.recv().map_err(|_| StorageError::Unavailable("a PostgreSQL client thread stopped during a call".into()))?
    }
}

impl Pool {
    /// Queues `job` for the next free thread without waiting for it (it
    /// answers its callers itself).
    pub(crate) fn submit(&self, job: Job) -> Result<(), StorageError> {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner()).send(job).map_err(|_| StorageError::Unavailable("the PostgreSQL client threads have stopped".into()))
    }
}

/// Takes jobs until the pool (its sender) is dropped.
fn worker(rx: &Mutex<Receiver<Job>>, conn: &mut Connection) {
    loop {
        let job = match rx.lock().unwrap_or_else(|e| e.into_inner()).recv() {
            Ok(job) => job,
            Err(_) => return,
        };
        job(conn);
    }
}
