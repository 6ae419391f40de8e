//! # mentisdb-native: the `mentisdbd` daemon
//!
//! **Contract.** The daemon serves MENTISDB_REST.md (every endpoint, HTTP 400
//! `{"error"}` on failures) and MENTISDB_MCP.md (every tool, over streamable
//! HTTP at `/` and `/mcp`, or over stdio) from one shared
//! [`mentisdb_core::MentisDb`]: a write through one transport is visible
//! through the others at once. No tool logic lives here: every request ends
//! in [`mentisdb_core::MentisDb::call`]. An append is acknowledged only after
//! its bytes were fsynced ([`FsStorage`], from `mentisdb-fs-storage`, shares
//! one fsync among concurrent appenders); startup verifies every chain, cuts torn tails and refuses
//! chains that do not verify while the others keep serving.
//!
//! ```no_run
//! # async fn run() -> Result<(), mentisdb_native::DaemonError> {
//! let config = mentisdb_native::Config::for_dir("/tmp/mentisdb-demo");
//! let daemon = mentisdb_native::start(&config).await?;
//! println!("{}", daemon.listening_line());
//! daemon.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! Storage is [`FsStorage`] (crate `mentisdb-fs-storage`, shared with the
//! WASI component: durable objects, group commit), or with `--storage-url`
//! `mentisdb_pg_storage::PgStorage`: every object in one PostgreSQL
//! database, several daemons serving the same chains (`daemon.rs` follows
//! the other instances' appends by `LISTEN`/`NOTIFY`).
//!
//! **Modules**, each using only those listed after it (ARCHITECTURE.md draws
//! the layers; `scripts/module_layers.py` checks them):
//!
//! - [`commands`]: the command line: the program ([`commands::run`]), its
//!   flags and subcommands ([`commands::cli`]), the shell commands, `backup`
//!   and `restore`, client setup and the wizard, the `--mode stdio` relay.
//! - [`reference`](mod@reference): `mentisdbd import-reference`, MentisDB 0.9/0.10 data taken in.
//! - [`target`]: where a command's tool calls go (a daemon's REST API, or the store opened here).
//! - [`daemon`]: startup: open and verify the store, bind the listeners.
//! - [`http`]: REST, MCP over HTTP, 0.10's `/tools/*`, the event stream, the
//!   explorer, and the guards in front of them.
//! - [`config`]: every setting (environment variables and flags).
//! - [`infra`]: the directory lock, the checkpoint identity, TLS
//!   certificates, backup archives, webhook delivery, the index worker and
//!   the chat model.
//! - [`tokens`]: bearer tokens: the token file, the store the daemon
//!   reloads, and the one access rule.

pub mod commands;
pub mod config;
pub mod daemon;
pub mod http;
pub mod infra;
pub mod reference;
pub mod target;
pub mod tokens;

/// jemalloc instead of the system allocator, for every program linking
/// this library (`mentisdbd`, `mentisdb`, the tests): the daemon holds many
/// small long-lived allocations (thoughts, index entries) between
/// short-lived request buffers, which fragment glibc's heap. Measured with
/// 137k-167k appended thoughts: 1,699 -> 1,195 resident bytes a thought,
/// about 30% less (docs/performance.md, the memory row). On Linux it runs
/// its background thread (`host-native/Cargo.toml`): pages freed by a burst
/// of work go back to the system about 10 s later even when no request
/// follows, not only as later allocations come. Not on MSVC, which jemalloc does not
/// support.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

pub use config::{Config, ConfigError};
pub use daemon::{open_store, serve, start, DaemonError, OpenedStore, RunningDaemon};
pub use mentisdb_fs_storage::FsStorage;
