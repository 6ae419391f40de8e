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
//! the other instances' appends by `LISTEN`/`NOTIFY`). Modules: [`cli`]
//! (subcommands such as `mentisdbd token add`), [`config`]
//! (env vars and flags), [`rest`] (the route table), [`mcp`] (rmcp handler), [`legacy`] (MentisDB 0.10's CloudLLM
//! `/tools/list` and `/tools/execute`),
//! [`auth`] (the token middleware and the one call path), [`tokens`]
//! (token file, store, access rule), [`daemon`] (startup), [`explorer`] (the browser page at `/explorer`), [`dir_lock`] (one daemon per data directory), [`host_env`] (clock, ids).

pub mod api_error;
pub mod auth;
pub mod backup;
pub mod backup_cmd;
pub mod body_limit;
pub mod cli;
pub mod client_setup;
pub mod config;
pub mod daemon;
pub mod dir_lock;
pub mod events;
pub mod explorer;
pub mod host_env;
pub mod identity;
pub mod index_worker;
pub mod llm;
pub mod legacy;
pub mod mcp;
pub mod openapi;
pub mod reference_import;
pub mod rest;
pub mod routes;
pub mod shell;
pub mod run;
pub mod stdio_proxy;
pub mod tls_cert;
pub mod tokens;
pub mod web_guard;
pub mod webhooks;
pub mod wizard;

pub use config::{Config, ConfigError};
pub use daemon::{open_store, serve, start, DaemonError, OpenedStore, RunningDaemon};
pub use mentisdb_fs_storage::FsStorage;
