//! # mentisdb-pg-storage: MentisDB objects in PostgreSQL
//!
//! [`PgStorage`] implements the core's [`mentisdb_core::Storage`] contract
//! in one PostgreSQL database, so any number of `mentisdbd` instances on
//! that database serve the same chains (`MENTISDB_STORAGE_URL`).
//!
//! - **Tables** ([`schema`]): `mentisdb_schema` (the version) and
//!   `mentisdb_chunks` (an object is its chunks in offset order). Created on
//!   first start; a newer version than this build knows is refused.
//! - **Conditional append** ([`mentisdb_core::Storage::append_at`]): one
//!   `INSERT ... SELECT ... WHERE <current length> = expected`. Two instances
//!   appending at one length insert the same primary key `(object,
//!   start_offset)`; PostgreSQL commits one and the other gets
//!   [`StorageError::Conflict`] (no lock service of ours).
//! - **Group commit** (`batch.rs`): conditional appends queued by many
//!   threads at once (many chains, each chain's own appends already grouped
//!   by the core) go into one statement, one transaction; each keeps its
//!   own condition (`ON CONFLICT DO NOTHING` on the primary key).
//! - **Durability**: every write is one committed transaction; with the
//!   default `synchronous_commit = on` a commit is on the server's disk when
//!   it returns, so [`Storage::sync`](mentisdb_core::Storage::sync) has
//!   nothing left to do.
//! - **Notifications**: every append runs `pg_notify('mentisdb_objects',
//!   <object>@<offset>:<base64 bytes>)` in its transaction (just `<object>`
//!   when the bytes do not fit PostgreSQL's 8000-byte payload), every
//!   `write_atomic` `pg_notify('mentisdb_objects', 'replaced:<object>')`;
//!   an instance takes the announced bytes in without reading them
//!   ([`Event::Appended`]);
//!   [`PgStorage::listen`] reports them, each distinct one once per batch
//!   of notifications received together (and "look at everything" after each
//!   (re)connection), so an instance takes in other instances' appends by
//!   reading only the new chunks ([`Storage::read_from`](mentisdb_core::Storage::read_from))
//!   and reads a replaced object again. [`Event::Told`] follows every
//!   batch (a host takes in what it put aside for busy chains).
//! - **Lost races** (`told.rs`): a refused append waits briefly until the
//!   listener has told the host of the winner's append, and reports that
//!   length, so the host re-bases on the announced bytes without a read.
//! - **Threads**: calls run on a few dedicated client threads ([`pool`]), so
//!   they are safe from inside an async runtime. Hot statements are
//!   prepared once per connection, and each connection asks for generic
//!   plans (`plan_cache_mode = force_generic_plan`): planned once, not on
//!   every run.
//! - **Leases** ([`PgStorage::lease`]): a job only one instance should do
//!   (delivering webhooks) waits for a session-level advisory lock.
//!
//! Object names are checked with [`validate_object_name`] before any SQL,
//! and every value is a bind parameter.

#![warn(missing_docs, unreachable_pub)]

mod batch;
pub mod lease;
mod listen;
mod pool;
pub mod schema;
pub mod testdb;
mod told;

pub use lease::Lease;
pub use listen::{Event, ListenerHandle};

use mentisdb_core::storage::validate_object_name;
use mentisdb_core::{Storage, StorageError};
use pool::Pool;
use postgres::error::SqlState;
use postgres::{Client, Config, GenericClient};
use std::sync::Arc;
use std::time::Duration;

/// The `LISTEN`/`NOTIFY` channel every write announces its object on.
pub const NOTIFY_CHANNEL: &str = "mentisdb_objects";

/// How many client threads (and connections) one [`PgStorage`] keeps.
const POOL_THREADS: usize = 4;

/// MentisDB objects in a PostgreSQL database (see the crate docs).
pub struct PgStorage {
    pool: Pool,
    /// Conditional appends waiting to share a transaction.
    batcher: Arc<batch::Batcher>,
    /// What the listener told the host (`told.rs`): a lost race's length.
    told: Arc<told::Told>,
    config: Config,
    /// `postgres://host:port/db`, never the user or password.
    described: String,
}

impl std::fmt::Debug for PgStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStorage").field("database", &self.described).finish_non_exhaustive()
    }
}

/// `postgres://host:port/db` of a configuration: no user, no password.
pub fn describe(config: &Config) -> String {
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".to_string(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!("postgres://{host}:{port}/{}", config.get_dbname().unwrap_or("postgres"))
}

/// Parses a `postgres://` or `postgresql://` URL (or a key=value string);
/// the error never repeats the URL, which may hold a password.
pub fn parse_url(url: &str) -> Result<Config, StorageError> {
    let mut config: Config = url.parse().map_err(|e| StorageError::Unavailable(format!("the PostgreSQL URL does not parse: {e}")))?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(10));
    }
    if config.get_application_name().is_none() {
        config.application_name("mentisdbd");
    }
    Ok(config)
}

fn to_i64(object: &str, n: u64) -> Result<i64, StorageError> {
    i64::try_from(n).map_err(|_| StorageError::io(object, format!("offset {n} is beyond what PostgreSQL can store")))
}

/// A statement failed: a lost connection makes the store unreachable (the
/// next call reconnects; HTTP 503), anything else is an error on the object.
pub(crate) fn failed(object: &str, e: postgres::Error) -> StorageError {
    // Class 08 (connection exception) and 57P (server shutting down, connection terminated) end the connection.
    let connection_lost = e.code().is_some_and(|c| c.code().starts_with("08") || c.code().starts_with("57P"));
    if e.as_db_error().is_some() && !connection_lost {
        StorageError::io(object, format!("PostgreSQL: {e}"))
    } else {
        StorageError::Unreachable(format!("PostgreSQL connection failed during a call on '{object}' ({e}); the next call reconnects"))
    }
}

/// The chunks of an object from an offset on (prepared once per connection).
const READ_FROM_CHUNK: &str = "SELECT start_offset, end_offset, bytes FROM mentisdb_chunks WHERE object = $1 AND start_offset >= $2 ORDER BY start_offset";
/// The last chunk of an object starting before an offset.
const CHUNK_BEFORE: &str = "SELECT start_offset, end_offset, bytes FROM mentisdb_chunks WHERE object = $1 AND start_offset < $2 ORDER BY start_offset DESC LIMIT 1";

/// The object's length (0 when absent) and whether it exists.
fn length(client: &mut impl GenericClient, object: &str) -> Result<(u64, bool), StorageError> {
    let row = client
        .query_opt("SELECT end_offset FROM mentisdb_chunks WHERE object = $1 ORDER BY start_offset DESC LIMIT 1", &[&object])
        .map_err(|e| failed(object, e))?;
    Ok(match row {
        Some(r) => (r.get::<_, i64>(0) as u64, true),
        None => (0, false),
    })
}

/// Appends `bytes` at `expected` (the current length) in one statement
/// with its notification; `Ok(false)` when the object is not `expected`
/// long or another writer inserted at that offset first.
fn insert_at(client: &mut Client, object: &str, expected: i64, bytes: &[u8]) -> Result<bool, StorageError> {
    let end = expected + bytes.len() as i64;
    let statement = "WITH ins AS (
            INSERT INTO mentisdb_chunks (object, start_offset, end_offset, bytes)
            SELECT $1, $2, $3, $4
            WHERE coalesce((SELECT end_offset FROM mentisdb_chunks WHERE object = $1 ORDER BY start_offset DESC LIMIT 1), 0) = $2
            RETURNING object)
        SELECT pg_notify('mentisdb_objects', object) FROM ins";
    let outcome = if expected == 0 {
        // An empty object is one chunk [0, 0): replace it in the same transaction.
        let mut tx = client.transaction().map_err(|e| failed(object, e))?;
        let existing = length(&mut tx, object)?;
        if existing.0 != 0 {
            return Ok(false);
        }
        tx.execute("DELETE FROM mentisdb_chunks WHERE object = $1 AND start_offset = 0 AND end_offset = 0", &[&object]).map_err(|e| failed(object, e))?;
        match tx.query(statement, &[&object, &expected, &end, &bytes]) {
            Ok(rows) if rows.len() == 1 => tx.commit().map(|_| true),
            Ok(_) => Ok(false),
            Err(e) => Err(e),
        }
    } else {
        client.query(statement, &[&object, &expected, &end, &bytes]).map(|rows| rows.len() == 1)
    };
    match outcome {
        Ok(inserted) => Ok(inserted),
        Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => Ok(false),
        Err(e) => Err(failed(object, e)),
    }
}

impl PgStorage {
    /// Connects to the database of `url` (`postgres://user[:password]@host:port/db`),
    /// creating or checking the tables ([`schema::ensure`]).
    pub fn connect(url: &str) -> Result<PgStorage, StorageError> {
        Self::with_config(parse_url(url)?)
    }

    /// Like [`PgStorage::connect`], from a parsed configuration.
    pub fn with_config(config: Config) -> Result<PgStorage, StorageError> {
        let described = describe(&config);
        let pool = Pool::start(&config, POOL_THREADS)?;
        let location = described.clone();
        pool.run(move |client| schema::ensure(client, &location))?;
        Ok(PgStorage { pool, batcher: Default::default(), told: Default::default(), config, described })
    }

    /// `postgres://host:port/db` (no user, no password), for logs.
    pub fn database(&self) -> &str {
        &self.described
    }

    /// Starts a thread that `LISTEN`s on [`NOTIFY_CHANNEL`] over a
    /// connection of its own and calls `on_event` for every object written
    /// through any instance (this one too), and with [`Event::Resync`]
    /// after every (re)connection, when notifications may have been missed.
    /// `on_event` returns `false` to stop listening; so does dropping the handle.
    /// A lost listener connection (and each reconnection) also makes the
    /// pool check its connections: the server may have closed them all.
    pub fn listen(self: &Arc<Self>, mut on_event: impl FnMut(Event) -> bool + Send + 'static) -> Result<ListenerHandle, StorageError> {
        let store = Arc::downgrade(self);
        let told = self.told.clone();
        told.listening();
        listen::spawn(self.config.clone(), self.described.clone(), move |event| {
            if matches!(event, Event::Resync | Event::Disconnected) {
                if let Some(store) = store.upgrade() {
                    store.pool.suspect_connections();
                }
            }
            let appended = match &event {
                Event::Appended { object, offset, bytes } => Some((object.clone(), offset + bytes.len() as u64)),
                Event::Replaced(object) => {
                    told.forget(Some(object));
                    None
                }
                Event::Resync => {
                    told.forget(None);
                    None
                }
                _ => None,
            };
            let go_on = on_event(event);
            if let Some((object, end)) = appended {
                told.told(&object, end);
            }
            go_on
        })
    }

    /// Asks for the lease named by `key` (an advisory lock: one instance on
    /// the database holds it at a time; see [`lease`]). `name` is for logs.
    pub fn lease(&self, key: i64, name: &str) -> Result<Lease, StorageError> {
        lease::spawn(self.config.clone(), key, name).map_err(|e| StorageError::Unavailable(format!("cannot start the PostgreSQL lease thread: {e}")))
    }

    fn run<R: Send + 'static>(&self, f: impl FnOnce(&mut Client) -> Result<R, StorageError> + Send + 'static) -> Result<R, StorageError> {
        self.pool.run(f)
    }
}

impl Storage for PgStorage {
    fn backend_name(&self) -> &'static str {
        "postgres"
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>, StorageError> {
        let prefix = prefix.to_string();
        self.run(move |client| {
            // `object` is COLLATE "C": sorted by bytes, like the memory backend.
            let rows = client
                .query("SELECT DISTINCT object FROM mentisdb_chunks WHERE left(object, char_length($1)) = $1 ORDER BY object", &[&prefix])
                .map_err(|e| failed(&prefix, e))?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })
    }

    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, StorageError> {
        self.read_from(name, 0)
    }

    fn read_from(&self, name: &str, offset: u64) -> Result<Option<Vec<u8>>, StorageError> {
        validate_object_name(name)?;
        let object = name.to_string();
        let from = to_i64(name, offset)?;
        self.pool.run_on_connection(move |conn| {
            // The chunks from `offset` on: a catch-up reads from a chunk
            // boundary, so this one statement (its bound a plain parameter,
            // which the planner can estimate: an index range scan) is the
            // whole read. A bound computed inside the statement made the
            // planner expect a third of the object and scan the table once
            // the object was large (appends fell from ~1,400/s to ~120/s).
            let (client, from_chunk) = conn.prepared(READ_FROM_CHUNK)?;
            let mut rows = client.query(&from_chunk, &[&object, &from]).map_err(|e| failed(&object, e))?;
            if rows.first().is_none_or(|r| r.get::<_, i64>(0) != from) {
                // `offset` falls inside a chunk, at the end, or past it: the chunk holding (or ending at) it comes first.
                let (client, before) = conn.prepared(CHUNK_BEFORE)?;
                let before = client.query_opt(&before, &[&object, &from]).map_err(|e| failed(&object, e))?;
                rows.splice(0..0, before);
            }
            if rows.is_empty() {
                return Ok(None);
            }
            let mut out = Vec::new();
            let mut at: Option<i64> = None;
            for row in &rows {
                let (start, end, bytes): (i64, i64, &[u8]) = (row.get(0), row.get(1), row.get(2));
                if at.is_some_and(|a| a != start) || end - start != bytes.len() as i64 {
                    return Err(StorageError::io(&object, format!("stored chunks are not contiguous at offset {start}: the table was edited by hand")));
                }
                at = Some(end);
                let skip = (from - start).clamp(0, bytes.len() as i64) as usize;
                out.extend_from_slice(&bytes[skip..]);
            }
            Ok(Some(out))
        })
    }

    fn append(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        validate_object_name(name)?;
        let object = name.to_string();
        let bytes = bytes.to_vec();
        self.run(move |client| {
            // At the current length; another writer between the two statements means try again.
            for _ in 0..1000 {
                let (len, _) = length(client, &object)?;
                if bytes.is_empty() {
                    return if len == 0 { write_chunk(client, &object, &[], false) } else { Ok(()) };
                }
                if insert_at(client, &object, len as i64, &bytes)? {
                    return Ok(());
                }
            }
            Err(StorageError::io(&object, "gave up after 1000 appends by other writers in between"))
        })
    }

    fn append_at(&self, name: &str, expected_len: u64, bytes: &[u8]) -> Result<(), StorageError> {
        validate_object_name(name)?;
        let object = name.to_string();
        let expected = to_i64(name, expected_len)?;
        let bytes = bytes.to_vec();
        if !bytes.is_empty() && expected > 0 {
            // Shares a transaction with the appends queued meanwhile (`batch.rs`).
            let (reply, answer) = std::sync::mpsc::sync_channel(1);
            if self.batcher.push(batch::Pending { object: object.clone(), expected, bytes, reply }) {
                let batcher = self.batcher.clone();
                let asked = self.pool.submit(Box::new(move |conn| {
                    batcher.flush(conn);
                    conn.check();
                }));
                if let Err(e) = asked {
                    self.batcher.unschedule();
                    return Err(e);
                }
            }
            match answer.recv().map_err(|_| StorageError::Unavailable("a PostgreSQL client thread stopped during a call".into()))?? {
                batch::Answer::Inserted => return Ok(()),
                // Shorter than expected (cut by another writer): nothing to wait for.
                batch::Answer::Refused { current } if current < expected_len => return Err(StorageError::Conflict { object, expected: expected_len, actual: current }),
                batch::Answer::Refused { current } => {
                    // Lost a race. Once the listener told the host of the
                    // winner's bytes, the host re-bases on them with no read.
                    let seen = (current != expected_len).then_some(current);
                    if let Some(end) = self.told.wait_for(&object, seen.unwrap_or(expected_len + 1)) {
                        return Err(StorageError::Conflict { object, expected: expected_len, actual: end });
                    }
                    if let Some(current) = seen {
                        return Err(StorageError::Conflict { object, expected: expected_len, actual: current });
                    }
                    // Another writer inserted at this offset at the same moment: read the length it made.
                }
            }
        } else {
            // The object's first bytes (or none): replaces its empty chunk, alone.
            let object = object.clone();
            let done = self.run(move |client| {
                if bytes.is_empty() {
                    let (len, exists) = length(client, &object)?;
                    if len == expected_len && !exists {
                        write_chunk(client, &object, &[], false)?;
                    }
                    Ok(len == expected_len)
                } else {
                    insert_at(client, &object, expected, &bytes)
                }
            })?;
            if done {
                return Ok(());
            }
        }
        let actual = self.run({
            let object = object.clone();
            move |client| length(client, &object).map(|(len, _)| len)
        })?;
        Err(StorageError::Conflict { object, expected: expected_len, actual })
    }

    fn truncate(&self, name: &str, len: u64) -> Result<(), StorageError> {
        validate_object_name(name)?;
        let object = name.to_string();
        let len = to_i64(name, len)?;
        self.run(move |client| {
            let mut tx = client.transaction().map_err(|e| failed(&object, e))?;
            let (current, exists) = length(&mut tx, &object)?;
            if !exists || current <= len as u64 {
                return Ok(());
            }
            let step = |tx: &mut postgres::Transaction<'_>| -> Result<(), postgres::Error> {
                tx.execute("DELETE FROM mentisdb_chunks WHERE object = $1 AND start_offset >= $2", &[&object, &len])?;
                tx.execute(
                    "UPDATE mentisdb_chunks SET bytes = substring(bytes FROM 1 FOR ($2 - start_offset)::integer), end_offset = $2
                     WHERE object = $1 AND start_offset < $2 AND end_offset > $2",
                    &[&object, &len],
                )?;
                if len == 0 {
                    tx.execute("INSERT INTO mentisdb_chunks (object, start_offset, end_offset, bytes) VALUES ($1, 0, 0, '')", &[&object])?;
                }
                Ok(())
            };
            step(&mut tx).and_then(|_| tx.commit()).map_err(|e| failed(&object, e))
        })
    }

    /// Nothing to do: every write was one committed transaction, durable
    /// when it returned (with PostgreSQL's default `synchronous_commit = on`).
    fn sync(&self, name: &str) -> Result<(), StorageError> {
        validate_object_name(name)
    }

    fn write_atomic(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        validate_object_name(name)?;
        let object = name.to_string();
        let bytes = bytes.to_vec();
        self.run(move |client| write_chunk(client, &object, &bytes, true))
    }

    fn remove(&self, name: &str) -> Result<(), StorageError> {
        validate_object_name(name)?;
        let object = name.to_string();
        self.run(move |client| client.execute("DELETE FROM mentisdb_chunks WHERE object = $1", &[&object]).map(|_| ()).map_err(|e| failed(&object, e)))
    }

    fn location(&self, name: &str) -> String {
        format!("{}#{name}", self.described)
    }

    /// One round trip (`SELECT 1`) on a pooled connection.
    fn probe(&self) -> Result<(), StorageError> {
        self.run(|client| client.simple_query("SELECT 1").map(drop).map_err(|e| failed("probe", e)))
    }
}

/// Replaces the object's chunks by one at 0 (one transaction, announced
/// when `notify`).
fn write_chunk(client: &mut Client, object: &str, bytes: &[u8], notify: bool) -> Result<(), StorageError> {
    let end = bytes.len() as i64;
    let mut step = || -> Result<(), postgres::Error> {
        let mut tx = client.transaction()?;
        tx.execute("DELETE FROM mentisdb_chunks WHERE object = $1", &[&object])?;
        tx.execute("INSERT INTO mentisdb_chunks (object, start_offset, end_offset, bytes) VALUES ($1, 0, $2, $3)", &[&object, &end, &bytes])?;
        if notify {
            let payload = format!("{}{object}", listen::REPLACED);
            tx.execute("SELECT pg_notify('mentisdb_objects', $1)", &[&payload])?;
        }
        tx.commit()
    };
    step().map_err(|e| failed(object, e))
}
