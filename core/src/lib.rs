//! # mentisdb-core: the pure MentisDB engine
//!
//! **Contract.** This crate performs no I/O of any kind: it opens no files
//! and no sockets, starts no threads, reads no environment variables, never
//! reads a clock and never draws randomness. Everything from the outside
//! world comes in through small traits the host implements: [`Storage`]
//! (named byte objects with an explicit durability point), [`Clock`],
//! [`IdSource`] and, optionally, [`Parallelism`] (a host with threads runs
//! independent jobs, such as decoding records at open; [`Sequential`] is the
//! default). That is what lets the same engine run inside
//! the native daemon, a browser tab and a WASI component, and what makes
//! every hash in the tests reproducible.
//!
//! It holds the chain logic (append-only, SHA-256 hash-chained thoughts),
//! the per-chain agent registry with Ed25519 keys, signature checks, filtered
//! search, ordered traversal, rendering, the daemon-wide skill registry, and
//! the one transport-neutral tool dispatcher that every host calls.
//!
//! ```
//! use std::sync::Arc;
//! use mentisdb_core::{MentisDb, DbConfig, MemoryStorage, FixedClock, SequentialIds};
//! use serde_json::json;
//!
//! let (db, _report) = MentisDb::open(
//!     Arc::new(MemoryStorage::new()),
//!     Arc::new(FixedClock::new(1_795_000_000_000, 1)),
//!     Arc::new(SequentialIds::default()),
//!     DbConfig::default(),
//! ).unwrap();
//! db.call("mentisdb_append", json!({
//!     "chain_key": "demo", "thought_type": "Decision", "content": "Use Rust."
//! })).unwrap();
//! let found = db.call("mentisdb_search", json!({"chain_key": "demo", "text": "rust"})).unwrap();
//! assert_eq!(found["thoughts"][0]["content"], "Use Rust.");
//! ```
//!
//! ## What is exported
//!
//! The crate root holds the engine ([`MentisDb`], [`DbConfig`], [`OpenReport`],
//! [`Chain`], [`NewThought`]), the thought model ([`Thought`], [`ThoughtType`], ...),
//! the errors ([`ToolError`] and the errors it wraps, [`ErrorKind`]) and the host
//! seams ([`Storage`], [`Clock`], [`IdSource`], [`Parallelism`] and their
//! in-memory or fixed implementations). The public modules are namespaces for
//! what hosts call by path: [`storage`] (with the `conformance` suite and `fault`
//! backends every storage backend can check itself with), [`dispatch`] (typed [`dispatch::replies`]),
//! [`ranked`] ([`ranked::EmbeddingProvider`] for embedding models), [`skills`],
//! [`agents`], [`thought`], [`thought_list`], [`hex_bytes`], [`record`], [`canonical`], [`signature`], [`naming`],
//! [`limits`], [`query`], [`redact`] (secret redaction on write), [`events`]
//! (event-stream cursors), [`backup`]
//! (consistent snapshots and the check before a restore), [`timestamp`] and,
//! with `daemon-tools`, `webhooks` (registrations, delivery cursors, payloads).
//! Everything else is private.
//!
//! Features: `daemon-tools` (default) adds the tool families only a daemon
//! can serve (memory extraction through a language model, the daemon's side
//! of sync, webhooks, and the webhook registry itself: an engine without the
//! feature neither reads nor serves `webhooks.json`); the browser build
//! turns it off. The storage test kits are always built: they are pure code,
//! the WASI component's `self-test` export runs them, and one build of the
//! core for tests and binaries alike keeps the test command's compiles few.

#![warn(missing_docs, unreachable_pub)]

pub mod agents;
mod args;
pub mod backup;
mod caller;
pub mod base64;
pub mod canonical;
pub mod checkpoint;
mod chain;
pub mod claims;
mod chain_ops;
mod chat_model;
mod db;
mod derived;
pub mod dispatch;
pub mod entity_types;
pub mod events;
mod error;
mod error_kind;
pub mod extract;
pub mod facts;
mod forget;
mod framing;
mod growth;
pub mod hex_bytes;
mod host;
mod import;
pub mod json_text;
mod jsonl_record;
mod keyed_hash;
mod label;
pub mod limits;
mod lookup;
mod markdown_import;
pub mod merkle;
mod named_enum;
pub mod naming;
pub mod presence;
mod proofs;
pub mod query;
pub mod ranked;
pub mod record;
pub mod redact;
mod render;
pub mod reviews;
mod sha256;
mod sorting;
pub mod signature;
pub mod skills;
pub mod storage;
pub mod sync;
mod text;
mod text_filter;
mod text_value;
pub mod thought;
mod thought_id;
pub mod thought_list;
pub mod timestamp;
#[cfg(feature = "daemon-tools")]
pub mod webhooks;
mod retirements;
mod summary;
mod traverse;

pub use chain::{Appended, Chain, Fencing, NewThought, Prepared, RelationInput};
pub use chain_ops::{Branched, Merged, BRANCH_AGENT_ID};
pub use checkpoint::LatestCheckpoint;
pub use proofs::{ConsistencyProof, InclusionProof};
pub use db::{Busy, ClaimOutcome, DbConfig, Drain, MentisDb, NotQueued, Queued, ReplyLater, OpenReport, OpenedChain, RebuiltVectors, ResidencyReport, WriteCounts, DEFAULT_DEDUP_SCAN_WINDOW};
pub use dispatch::{output_schema, tool_specs, ToolSpec};
#[cfg(feature = "daemon-tools")]
pub use dispatch::full_input_schemas;
pub use error::{AgentError, AppendError, ImportError, ToolError, VerifyError};
pub use error_kind::ErrorKind;
pub use named_enum::UnknownName;
pub use import::ImportReport;
pub use keyed_hash::KeyedState;
pub use label::{labels, Label, LabelList};
pub use thought_id::{IdText, ThoughtId};
pub use thought_list::ThoughtList;
pub use traverse::Cursor;
pub use host::{AppendObserver, Clock, FixedClock, IdSource, Parallelism, Sequential, SequentialIds, UnixMillis};
pub use record::ChainFormat;
pub use storage::{MemoryStorage, Storage, StorageError};
pub use thought::{Forgotten, RelationKind, Thought, ThoughtExtras, ThoughtRelation, ThoughtRole, ThoughtType, ThoughtWire};
pub use hex_bytes::{ContentSalt, HexBytes, ThoughtHash};
