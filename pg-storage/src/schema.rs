//! The tables, created on first start and versioned.
//!
//! ```sql
//! -- One row: the schema version this database holds.
//! CREATE TABLE mentisdb_schema (version integer NOT NULL);
//! -- Every object is the concatenation of its chunks in start_offset order.
//! -- An append adds one chunk; write_atomic replaces all of an object's
//! -- chunks by one. An empty object is one chunk [0, 0).
//! CREATE TABLE mentisdb_chunks (
//!     object       text COLLATE "C" NOT NULL,  -- the core's object name
//!     start_offset bigint NOT NULL,            -- where the chunk starts in the object
//!     end_offset   bigint NOT NULL,            -- start_offset + octet_length(bytes)
//!     bytes        bytea  NOT NULL,
//!     PRIMARY KEY (object, start_offset)
//! );
//! ```
//!
//! The primary key is what serializes appends of several instances: two
//! appends at the same length insert the same `(object, start_offset)` and
//! PostgreSQL lets exactly one commit.

use mentisdb_core::StorageError;
use postgres::Client;

/// The schema version this build writes and serves.
pub const SCHEMA_VERSION: i32 = 1;

/// Creates the tables when absent (in one transaction, serialized against
/// other instances starting at the same moment by a transaction-scoped
/// advisory lock), migrates an older schema, refuses a newer one.
pub(crate) fn ensure(client: &mut Client, location: &str) -> Result<(), StorageError> {
    let unavailable = |e: postgres::Error| StorageError::Unavailable(format!("cannot set up the MentisDB tables in {location}: {e}"));
    let mut tx = client.transaction().map_err(unavailable)?;
    // Any constant will do: it only keeps two first starts from racing on CREATE TABLE.
    tx.execute("SELECT pg_advisory_xact_lock(7349127340912)", &[]).map_err(unavailable)?;
    // No "already exists, skipping" notices on every start.
    tx.batch_execute("SET LOCAL client_min_messages = warning").map_err(unavailable)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS mentisdb_schema (version integer NOT NULL);
         CREATE TABLE IF NOT EXISTS mentisdb_chunks (
             object text COLLATE \"C\" NOT NULL,
             start_offset bigint NOT NULL,
             end_offset bigint NOT NULL,
             bytes bytea NOT NULL,
             PRIMARY KEY (object, start_offset)
         );",
    )
    .map_err(unavailable)?;
    let found: Option<i32> = tx.query_opt("SELECT max(version) FROM mentisdb_schema", &[]).map_err(unavailable)?.and_then(|r| r.get(0));
    match found {
        None => {
            tx.execute("INSERT INTO mentisdb_schema (version) VALUES ($1)", &[&SCHEMA_VERSION]).map_err(unavailable)?;
        }
        Some(v) if v == SCHEMA_VERSION => {}
        Some(v) if v > SCHEMA_VERSION => {
            return Err(StorageError::Unavailable(format!(
                "{location} holds MentisDB schema version {v}, newer than the version {SCHEMA_VERSION} this mentisdbd knows: upgrade mentisdbd (nothing was changed)"
            )));
        }
        Some(v) => migrate(&mut tx, v).map_err(unavailable)?,
    }
    tx.commit().map_err(unavailable)
}

/// Brings a schema of version `from` (older than [`SCHEMA_VERSION`]) up to
/// date, one step per version, inside the setup transaction. Version 1 is
/// the first, so there is no step yet; a step for version `n` goes here as
/// `if from < n { ... }`.
fn migrate(tx: &mut postgres::Transaction<'_>, from: i32) -> Result<(), postgres::Error> {
    let _ = from;
    tx.execute("UPDATE mentisdb_schema SET version = $1", &[&SCHEMA_VERSION])?;
    Ok(())
}
