//! Starting the daemon: open the data directory, verify every chain, bind
//! the REST and MCP listeners on one shared [`MentisDb`].

use crate::auth::AuthState;
use crate::config::{Config, ConfigError};
use crate::host_env::{OsRandomIds, ScopedThreads, SystemClock};
use mentisdb_core::{DbConfig, MentisDb, OpenReport, StorageError};
use mentisdb_fs_storage::FsStorage;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Why the daemon could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DaemonError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("cannot open the data directory: {0}")]
    Storage(#[from] StorageError),
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
    /// The embedding model named by `--minilm-dir` cannot be used.
    #[error("embedding model: {0}")]
    Embedding(String),
}

/// The opened store, before any listener exists.
pub struct OpenedStore {
    pub db: Arc<MentisDb>,
    pub report: OpenReport,
    pub data_dir: PathBuf,
}

/// Opens the data directory and every chain in it, logging what was found.
pub fn open_store(config: &Config) -> Result<OpenedStore, DaemonError> {
    let dir = config.data_dir()?;
    let storage = FsStorage::open(&dir)?;
    let data_dir = storage.root().to_path_buf();
    let db_config = DbConfig { default_chain_key: config.default_key.clone(), default_format: config.default_storage_adapter, parallelism: Arc::new(ScopedThreads::per_cpu()), redact_secrets: config.redact_secrets() };
    let (db, report) = MentisDb::open(Arc::new(storage), Arc::new(SystemClock), Arc::new(OsRandomIds), db_config)?;
    log_report(&data_dir, &report);
    if let Some(model_dir) = &config.minilm_dir {
        register_minilm(&db, model_dir)?;
    }
    let db = Arc::new(db);
    // Build the query indices in the background so the first queries do not pay for them.
    let warm = db.clone();
    let spawned = std::thread::Builder::new().name("mentisdb-warm".into()).spawn(move || {
        let started = std::time::Instant::now();
        warm.warm_indexes();
        tracing::info!(ms = started.elapsed().as_millis() as u64, "query indices built");
    });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "could not start the index warm-up thread; indices are built on first query");
    }
    Ok(OpenedStore { db, report, data_dir })
}

/// Loads all-MiniLM-L6-v2 from `dir` and registers it: every thought of
/// every open chain is embedded now, new ones as they are indexed.
#[cfg(feature = "minilm")]
fn register_minilm(db: &MentisDb, dir: &std::path::Path) -> Result<(), DaemonError> {
    let started = std::time::Instant::now();
    let model = mentisdb_embed_minilm::MiniLm::load(dir).map_err(DaemonError::Embedding)?;
    db.set_embedding_provider(Some(Arc::new(model)));
    tracing::info!(dir = %dir.display(), model = "all-MiniLM-L6-v2", seconds = started.elapsed().as_secs_f64(), "embedding model loaded; ranked search is hybrid");
    Ok(())
}

#[cfg(not(feature = "minilm"))]
fn register_minilm(_db: &MentisDb, dir: &std::path::Path) -> Result<(), DaemonError> {
    Err(DaemonError::Embedding(format!("--minilm-dir / MENTISDB_MINILM_DIR ({}) needs a mentisdbd built with `--features minilm`", dir.display())))
}

fn log_report(dir: &std::path::Path, report: &OpenReport) {
    tracing::info!(dir = %dir.display(), chains = report.chains.len(), refused = report.refused.len(), "data directory opened");
    for c in &report.chains {
        tracing::info!(chain_key = %c.chain_key, thoughts = c.thought_count, location = %c.storage_location, "chain verified");
        if c.torn_tail_bytes > 0 {
            tracing::warn!(chain_key = %c.chain_key, bytes = c.torn_tail_bytes, "torn tail record cut off (an append interrupted by a crash was never acknowledged)");
        }
    }
    for (what, why) in &report.refused {
        tracing::error!(object = %what, reason = %why, "chain refused: not served until repaired; other chains keep serving");
    }
}

/// A running daemon: its bound addresses and the shared database.
pub struct RunningDaemon {
    pub rest_addr: SocketAddr,
    pub mcp_addr: SocketAddr,
    pub db: Arc<MentisDb>,
    pub report: OpenReport,
    shutdown: CancellationToken,
    tasks: Vec<JoinHandle<std::io::Result<()>>>,
}

async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener, DaemonError> {
    tokio::net::TcpListener::bind(addr).await.map_err(|source| DaemonError::Bind { addr, source })
}

/// Validates the configuration, opens the store and starts both HTTP servers.
pub async fn start(config: &Config) -> Result<RunningDaemon, DaemonError> {
    config.validate()?;
    let owned = config.clone();
    let opened = tokio::task::spawn_blocking(move || open_store(&owned)).await.expect("open_store task panicked")?;
    serve(config, opened).await
}

/// Starts both HTTP servers over an opened store.
pub async fn serve(config: &Config, opened: OpenedStore) -> Result<RunningDaemon, DaemonError> {
    config.validate()?;
    let auth = AuthState::new(config.api_token.as_deref());
    let shutdown = CancellationToken::new();
    let rest_listener = bind(config.rest_addr()).await?;
    let mcp_listener = bind(config.mcp_addr()).await?;
    let rest_addr = rest_listener.local_addr().map_err(|source| DaemonError::Bind { addr: config.rest_addr(), source })?;
    let mcp_addr = mcp_listener.local_addr().map_err(|source| DaemonError::Bind { addr: config.mcp_addr(), source })?;
    let rest = crate::rest::router(opened.db.clone(), auth.clone(), config.max_body_bytes);
    let mcp = crate::mcp::router(opened.db.clone(), auth, config.bind_host.is_loopback(), &config.allowed_origins, config.max_body_bytes, shutdown.child_token());
    let mut tasks = Vec::new();
    for (listener, app) in [(rest_listener, rest), (mcp_listener, mcp)] {
        let token = shutdown.clone();
        tasks.push(tokio::spawn(async move { axum::serve(listener, app).with_graceful_shutdown(async move { token.cancelled().await }).await }));
    }
    Ok(RunningDaemon { rest_addr, mcp_addr, db: opened.db, report: opened.report, shutdown, tasks })
}

impl RunningDaemon {
    /// The machine-readable startup line tests and scripts look for.
    pub fn listening_line(&self) -> String {
        format!("mentisdbd listening rest={} mcp={}", self.rest_addr, self.mcp_addr)
    }

    /// A handle that stops the servers when cancelled.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Stops accepting requests and waits for both servers to finish.
    pub async fn shutdown(self) {
        self.shutdown.cancel();
        self.wait().await;
    }

    /// Waits until both servers stop (after the shutdown token is cancelled).
    pub async fn wait(self) {
        for t in self.tasks {
            match t.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::error!(error = %e, "server stopped with an error"),
                Err(e) => tracing::error!(error = %e, "server task failed"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config_with_model(data: &std::path::Path, model: &std::path::Path) -> Config {
        let mut c = Config::for_dir(data);
        c.minilm_dir = Some(model.to_path_buf());
        c
    }

    #[cfg(not(feature = "minilm"))]
    #[test]
    fn a_model_directory_needs_the_minilm_feature() {
        let data = tempfile::tempdir().unwrap();
        let err = open_store(&config_with_model(data.path(), data.path())).err().expect("refused");
        assert!(err.to_string().contains("--features minilm"), "{err}");
    }

    #[cfg(feature = "minilm")]
    #[test]
    fn a_model_directory_without_model_files_is_refused() {
        let data = tempfile::tempdir().unwrap();
        let empty = tempfile::tempdir().unwrap();
        let err = open_store(&config_with_model(data.path(), empty.path())).err().expect("refused");
        assert!(err.to_string().contains("tokenizer.json"), "{err}");
    }

    /// With the real model files (MENTISDB_TEST_MINILM_DIR, e.g. after
    /// `scripts/fetch-minilm.sh`): ranked search turns hybrid, for thoughts
    /// present at open and appended later. Skipped without the files.
    #[cfg(feature = "minilm")]
    #[test]
    fn the_local_model_makes_ranked_search_hybrid() {
        let Some(model) = std::env::var_os("MENTISDB_TEST_MINILM_DIR") else {
            eprintln!("skipped: set MENTISDB_TEST_MINILM_DIR to a directory with all-MiniLM-L6-v2");
            return;
        };
        let data = tempfile::tempdir().unwrap();
        let append = |db: &MentisDb, content: &str| {
            db.call("mentisdb_append", serde_json::json!({"chain_key": "m", "agent_id": "ada", "thought_type": "FactLearned", "content": content})).unwrap();
        };
        append(&open_store(&Config::for_dir(data.path())).unwrap().db, "We adopted a puppy last week.");
        let opened = open_store(&config_with_model(data.path(), std::path::Path::new(&model))).unwrap();
        append(&opened.db, "The quarterly budget was approved.");
        let ask = |text: &str| opened.db.call("mentisdb_ranked_search", serde_json::json!({"chain_key": "m", "text": text, "context": false})).unwrap();
        let r = ask("new dog at home");
        assert_eq!(r["backend"], "hybrid");
        assert_eq!(r["results"][0]["thought"]["index"], 0, "{r:#}");
        assert_eq!(ask("company finances")["results"][0]["thought"]["index"], 1);
        // Query words also match the chain's words of similar meaning.
        append(&opened.db, "My kids loved the zoo.");
        let r = ask("children");
        let top = &r["results"][0];
        assert_eq!(top["thought"]["index"], 2, "{r:#}");
        assert!(top["score"]["expansion"].as_f64().unwrap() > 0.0 && top["matched_terms"] == serde_json::json!(["kids"]), "{top:#}");
    }
}
