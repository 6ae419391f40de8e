//! What the daemon runs on besides its HTTP face: the data directory's
//! lock, the checkpoint identity, TLS certificates, backup archives,
//! webhook delivery, the background index worker, the chat model of
//! memory extraction and the log writer.
//!
//! - [`dir_lock`]: one daemon per data directory, and where it listens.
//! - [`identity`]: the Ed25519 key that signs checkpoints.
//! - [`tls_cert`]: self-signed certificates for the HTTPS listeners.
//! - [`backup`]: the `.tar.gz` backup archive, its checks and restore.
//! - [`webhooks`]: delivery of appended thoughts, and the URL rule.
//! - [`index_worker`]: query indices (and embeddings) built in the background.
//! - [`llm`]: the OpenAI-compatible chat model `mentisdb_extract_memories` calls.
//! - [`log_writer`]: log lines written in timed batches, off the request path.
//! - [`open_files`]: the open-file limit, raised at start.
//!
//! None of these knows the HTTP servers or the command line.

pub mod backup;
pub mod dir_lock;
pub mod identity;
pub mod index_worker;
pub mod llm;
pub mod log_writer;
pub mod open_files;
pub mod tls_cert;
pub mod webhooks;
