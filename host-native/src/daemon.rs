//! Starting the daemon: open the data directory, verify every chain, bind
//! the REST and MCP listeners on one shared [`MentisDb`].

use crate::infra::dir_lock::{DirLock, DirLockError};
use crate::infra::identity::IdentityError;
use crate::infra::tls_cert::CertError;
use crate::infra::webhooks::WebhookError;
use crate::tokens::TokenStore;
use crate::config::{Config, ConfigError};
use mentisdb_std_host::{OsRandomIds, ScopedThreads, SystemClock};
use mentisdb_core::{DbConfig, MentisDb, OpenReport, Storage, StorageError};
use mentisdb_fs_storage::FsStorage;
use mentisdb_pg_storage::{Event, ListenerHandle, PgStorage};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Weak};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Why the daemon could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DaemonError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("cannot open the store: {0}")]
    Storage(#[from] StorageError),
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
    /// The self-signed certificate of the HTTPS listeners cannot be made.
    #[error("TLS: {0}")]
    Certificate(#[from] CertError),
    /// The certificate chain (MENTISDB_TLS_CERT) cannot be read.
    #[error("TLS: cannot read the certificate chain {} (MENTISDB_TLS_CERT): {source}", path.display())]
    TlsCertificates { path: PathBuf, source: rustls::pki_types::pem::Error },
    /// The certificate file holds no certificate.
    #[error("TLS: {} (MENTISDB_TLS_CERT) holds no PEM certificate", .0.display())]
    TlsNoCertificate(PathBuf),
    /// The private key (MENTISDB_TLS_KEY) cannot be read.
    #[error("TLS: cannot read the private key {} (MENTISDB_TLS_KEY): {source}", path.display())]
    TlsKey { path: PathBuf, source: rustls::pki_types::pem::Error },
    /// rustls has no protocol version to offer.
    #[error("TLS: {0}")]
    TlsProtocols(rustls::Error),
    /// The certificate and the key do not belong together.
    #[error("TLS: the certificate and key do not make a usable pair: {0}")]
    TlsPair(rustls::Error),
    /// The token file (or MentisDB 0.10's registry) cannot be read or parsed.
    #[error(transparent)]
    Tokens(#[from] crate::tokens::TokenError),
    /// Webhook delivery could not start.
    #[error(transparent)]
    Webhooks(#[from] WebhookError),
    /// Another daemon holds the data directory ([`crate::infra::dir_lock`]).
    #[error(transparent)]
    Locked(#[from] DirLockError),
    /// The checkpoint signing key cannot be read or created.
    #[error("identity key: {0}")]
    Identity(#[from] IdentityError),
    /// The static embedding model (`--static-model`) cannot be read.
    #[error("embedding model: --static-model {}: {source}", path.display())]
    StaticModelFile { path: PathBuf, source: std::io::Error },
    /// The static embedding model's file is not one.
    #[error("embedding model: --static-model {}: {source}", path.display())]
    StaticModel { path: PathBuf, source: mentisdb_embed_static::Error },
    /// `--minilm-dir` names no usable model (the loader's own message).
    #[error("embedding model: {0}")]
    Minilm(String),
    /// `--minilm-dir` given to a daemon built without the `minilm` feature.
    #[error("embedding model: --minilm-dir / MENTISDB_MINILM_DIR ({}) needs a mentisdbd built with `--features minilm`", .0.display())]
    NoMinilm(PathBuf),
}

/// The opened store, before any listener exists.
pub struct OpenedStore {
    pub db: Arc<MentisDb>,
    pub report: OpenReport,
    /// Where the objects are, for the startup line: `dir=<path>` (files)
    /// or `storage=postgres://host:port/db` (never a user or password).
    pub store: String,
    /// The PostgreSQL notification listener (stops when dropped); `None` on files.
    pub listener: Option<Arc<ListenerHandle>>,
    /// The data directory's exclusive lock, held while this store lives; `None` on PostgreSQL.
    pub lock: Option<Arc<DirLock>>,
    /// On PostgreSQL with webhooks on: the lease of webhook delivery (one
    /// daemon on the database delivers at a time); `None` on files.
    pub delivery_lease: Option<Arc<mentisdb_pg_storage::Lease>>,
}

/// Opens the store (the data directory, or the PostgreSQL database of
/// `--storage-url`) and every chain in it, logging what was found. A data
/// directory is locked first: a second daemon on it is refused
/// ([`DaemonError::Locked`]) before any file is touched.
pub fn open_store(config: &Config) -> Result<OpenedStore, DaemonError> {
    let db_config = DbConfig { default_chain_key: config.default_key.clone(), default_format: config.default_storage_adapter, parallelism: Arc::new(ScopedThreads::per_cpu()), redact_secrets: config.redact_secrets(), dedup_threshold: config.dedup_threshold, dedup_scan_window: config.dedup_scan_window, max_resident_bytes: config.max_resident_mb.map(|mb| mb.saturating_mul(1 << 20)) };
    let mut lock = None;
    let (storage, store, pg): (Arc<dyn Storage>, String, Option<Arc<PgStorage>>) = match &config.storage_url {
        Some(url) => {
            let pg = Arc::new(PgStorage::connect(url.secret())?);
            (pg.clone(), format!("storage={}", pg.database()), Some(pg))
        }
        None => {
            let dir = config.data_dir()?;
            lock = Some(Arc::new(DirLock::acquire(&dir)?));
            warn_if_shared(&dir);
            let storage = FsStorage::open(&dir)?;
            let store = format!("dir={}", storage.root().display());
            (Arc::new(storage), store, None)
        }
    };
    let (db, report) = MentisDb::open(storage, Arc::new(SystemClock), Arc::new(OsRandomIds), db_config)?;
    log_report(store.split_once('=').map_or(store.as_str(), |(_, at)| at), &report);
    if let Some(budget) = config.max_resident_mb {
        let r = db.residency();
        tracing::info!(resident = r.resident_chains, parked = r.parked_chains, estimate_mib = r.resident_bytes >> 20, budget_mib = budget, "chains in memory under MENTISDB_MAX_RESIDENT_MB");
        eprintln!("mentisdbd memory budget {budget} MiB: {} chains in memory, {} parked (loaded on first use)", r.resident_chains, r.parked_chains);
    }
    let signer = match &pg {
        Some(pg) => crate::infra::identity::load_or_create_in(pg.as_ref()),
        None => crate::infra::identity::load_or_create(&config.data_dir()?),
    }?;
    // (The daemon prints the verifier key at start, `commands/run.rs`; CLI commands that open the files do not.)
    tracing::debug!(name = signer.name(), public_key = %hex::encode(signer.public_key()), "checkpoint signing identity");
    let interval = (config.checkpoint_interval_secs > 0).then(|| (config.checkpoint_interval_secs.min(i64::MAX as u64 / 1000) * 1000) as i64);
    db.set_checkpoint_signer(Some(signer), interval);
    let prefetched = match (&config.minilm_dir, &config.static_model) {
        (Some(model_dir), _) => Some(register_minilm(&db, model_dir)?),
        (None, Some(file)) => {
            register_static_model(&db, file)?;
            None
        }
        (None, None) => None,
    };
    if let Some(key) = config.openai_api_key.as_deref().filter(|k| !k.trim().is_empty()) {
        db.set_chat_model(Some(Arc::new(crate::infra::llm::OpenAiChat::new(&config.llm_base_url, key, &config.llm_model))));
        tracing::info!(base_url = %config.llm_base_url, model = %config.llm_model, "memory extraction enabled");
    }
    let db = Arc::new(db);
    let listener = match &pg {
        Some(pg) => Some(Arc::new(follow_other_instances(pg, &db)?)),
        None => None,
    };
    let delivery_lease = match &pg {
        Some(pg) if config.webhooks => Some(Arc::new(pg.lease(WEBHOOK_DELIVERY_LEASE, "webhook delivery")?)),
        _ => None,
    };
    // Build the query indices in the background so the first queries do not
    // pay for them, and index (embed) every append there too.
    if let Err(e) = crate::infra::index_worker::start(&db, prefetched) {
        tracing::warn!(error = %e, "could not start the index worker; indices are built by queries");
    }
    Ok(OpenedStore { db, report, store, listener, lock, delivery_lease })
}

/// One warning line when the data directory lets other local users in
/// (made by an older version, or by hand): what it holds bypasses every
/// token. New directories and files are created `0700`/`0600`
/// (`mentisdb_fs_storage::private`).
fn warn_if_shared(dir: &std::path::Path) {
    if let Ok(Some(bits)) = mentisdb_fs_storage::private::shared_bits(dir) {
        if bits != 0 {
            let warning = format!("data directory {} is open to other local users (mode {:o}); they can read every chain past the tokens: run `chmod -R go-rwx {}`", dir.display(), bits | 0o700, dir.display());
            tracing::warn!(target: "mentisdb::security", "{warning}");
        }
    }
}

/// The advisory-lock key of webhook delivery on PostgreSQL (any constant
/// will do; it names the job among the database's advisory locks).
const WEBHOOK_DELIVERY_LEASE: i64 = 7_349_127_340_913;

/// Takes in what other daemons on the same database append, as PostgreSQL
/// announces it: a notification naming a served chain's object catches that
/// chain up (reading only the new records, verified before they are served);
/// after every (re)connection of the listener every served chain is caught
/// up, since notifications sent meanwhile are lost. Chains not loaded here
/// need nothing (they load on first use). Stops with the database.
fn follow_other_instances(pg: &Arc<PgStorage>, db: &Arc<MentisDb>) -> Result<ListenerHandle, DaemonError> {
    let take_in_kept = take_in_kept_announcements(db)?;
    let db: Weak<MentisDb> = Arc::downgrade(db);
    Ok(pg.listen(move |event| {
        let Some(db) = db.upgrade() else { return false };
        match event {
            Event::Object(object) => match db.catch_up_object(&object) {
                Ok(0) => {}
                Ok(n) => tracing::debug!(%object, thoughts = n, "took in thoughts appended through another instance"),
                Err(e) => tracing::error!(%object, error = %e, "appends made through another instance were refused"),
            },
            Event::Appended { object, offset, bytes } => match db.take_in_appended(&object, offset, &bytes) {
                Ok(0) => {}
                Ok(n) => tracing::debug!(%object, thoughts = n, "took in thoughts appended through another instance"),
                Err(e) => tracing::error!(%object, error = %e, "appends made through another instance were refused"),
            },
            Event::Replaced(object) => {
                if let Err(e) = db.reload_object(&object) {
                    tracing::error!(%object, error = %e, "a chain or registry replaced through another instance was refused");
                }
            }
            // Announcements put aside while their chain was busy.
            Event::Told => {
                let _ = take_in_kept.try_send(());
            }
            // The pool checks its connections; Resync follows the reconnection.
            Event::Disconnected => {}
            Event::Resync => {
                // A registration made through another daemon before this
                // listener was listening would otherwise stay unseen.
                if let Err(e) = db.reload_daemon_wide_objects() {
                    tracing::error!(error = %e, "the skill log or webhook registry could not be read again after (re)connecting to PostgreSQL notifications");
                }
                for key in db.chain_keys() {
                    match db.catch_up(&key) {
                        Ok(n) => tracing::debug!(chain_key = %key, thoughts = n, "caught up after (re)connecting to PostgreSQL notifications"),
                        Err(e) => tracing::error!(chain_key = %key, error = %e, "appends made through another instance were refused"),
                    }
                }
            }
        }
        true
    })?)
}

/// A thread that takes in the announcements put aside on busy chains
/// (`MentisDb::take_in_announced`) each time it is nudged: it waits for
/// those chains, so the listener never does (an append that lost a race
/// waits for the listener to tell it the winner's bytes). Nudges while it
/// works make one more round; it stops with the listener or the engine.
fn take_in_kept_announcements(db: &Arc<MentisDb>) -> Result<std::sync::mpsc::SyncSender<()>, DaemonError> {
    let (nudge, nudged) = std::sync::mpsc::sync_channel::<()>(1);
    let db: Weak<MentisDb> = Arc::downgrade(db);
    std::thread::Builder::new()
        .name("mentisdb-take-in".into())
        .spawn(move || {
            while nudged.recv().is_ok() {
                let Some(db) = db.upgrade() else { return };
                match db.take_in_announced() {
                    Ok(0) => {}
                    Ok(n) => tracing::debug!(thoughts = n, "took in thoughts appended through another instance"),
                    Err(e) => tracing::error!(error = %e, "appends made through another instance were refused"),
                }
            }
        })
        .map_err(|e| DaemonError::Storage(mentisdb_core::StorageError::Unavailable(format!("cannot start the take-in thread: {e}"))))?;
    Ok(nudge)
}

/// Loads all-MiniLM-L6-v2 from `dir` and registers it: every thought of
/// every open chain is embedded now, new ones as they are indexed.
#[cfg(feature = "minilm")]
fn register_minilm(db: &MentisDb, dir: &std::path::Path) -> Result<Arc<crate::infra::index_worker::Prefetched>, DaemonError> {
    let started = std::time::Instant::now();
    let model = mentisdb_embed_minilm::MiniLm::load(dir).map_err(DaemonError::Minilm)?;
    let provider = Arc::new(crate::infra::index_worker::Prefetched::new(Arc::new(model)));
    db.set_embedding_provider(Some(provider.clone()));
    tracing::info!(dir = %dir.display(), model = "all-MiniLM-L6-v2", seconds = started.elapsed().as_secs_f64(), "embedding model loaded; ranked search is hybrid");
    Ok(provider)
}

/// Reads a static word-embedding model file and makes ranked search hybrid with it.
fn register_static_model(db: &MentisDb, file: &std::path::Path) -> Result<(), DaemonError> {
    let bytes = std::fs::read(file).map_err(|source| DaemonError::StaticModelFile { path: file.to_path_buf(), source })?;
    let model = mentisdb_embed_static::StaticEmbedder::from_bytes(&bytes).map_err(|source| DaemonError::StaticModel { path: file.to_path_buf(), source })?;
    tracing::info!(file = %file.display(), model = %mentisdb_core::ranked::EmbeddingProvider::name(&model), dimensions = model.dim(), "static embedding model loaded; ranked search is hybrid");
    db.set_embedding_provider(Some(Arc::new(model)));
    Ok(())
}

#[cfg(not(feature = "minilm"))]
fn register_minilm(_db: &MentisDb, dir: &std::path::Path) -> Result<Arc<crate::infra::index_worker::Prefetched>, DaemonError> {
    Err(DaemonError::NoMinilm(dir.to_path_buf()))
}

fn log_report(store: &str, report: &OpenReport) {
    tracing::info!(%store, chains = report.chains.len(), refused = report.refused.len(), "store opened");
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
    /// The HTTPS REST listener beside the HTTP one (`--https-rest-port`).
    pub https_rest_addr: Option<SocketAddr>,
    /// The HTTPS MCP listener beside the HTTP one (`--https-mcp-port`).
    pub https_mcp_addr: Option<SocketAddr>,
    /// `https` when serving TLS (MENTISDB_TLS_CERT/KEY), else `http`.
    pub scheme: &'static str,
    pub db: Arc<MentisDb>,
    pub report: OpenReport,
    shutdown: CancellationToken,
    tasks: Vec<JoinHandle<std::io::Result<()>>>,
    /// Keeps following other instances' appends while the daemon runs.
    _listener: Option<Arc<ListenerHandle>>,
    /// Keeps the data directory locked while the daemon runs.
    _lock: Option<Arc<DirLock>>,
    /// Keeps asking for (or holding) the webhook delivery lease.
    _delivery_lease: Option<Arc<mentisdb_pg_storage::Lease>>,
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
    let reference_tokens = config.reference_token_registry()?;
    let (tokens_file, optional) = config.token_file()?;
    let auth = Arc::new(TokenStore::with_files(config.api_token.as_deref(), Some((&tokens_file, optional)), reference_tokens.as_deref())?);
    let shutdown = CancellationToken::new();
    auth.spawn_watcher(std::time::Duration::from_secs(1), shutdown.child_token());
    if let Some(warning) = config.cleartext_network_warning() {
        tracing::warn!(host = %config.bind_host, "{warning}");
    }
    let rest_listener = bind(config.rest_addr()).await?;
    let mcp_listener = bind(config.mcp_addr()).await?;
    let rest_addr = rest_listener.local_addr().map_err(|source| DaemonError::Bind { addr: config.rest_addr(), source })?;
    let mcp_addr = mcp_listener.local_addr().map_err(|source| DaemonError::Bind { addr: config.mcp_addr(), source })?;
    let backoff = crate::infra::webhooks::Backoff { base: std::time::Duration::from_millis(config.webhook_retry_base_ms.max(1)), max: std::time::Duration::from_secs(config.webhook_retry_max_secs.max(1)) };
    if config.webhooks {
        let may_deliver: crate::infra::webhooks::MayDeliver = match &opened.delivery_lease {
            Some(lease) => Arc::new(lease.watch()),
            None => Arc::new(|| true),
        };
        crate::infra::webhooks::start(opened.db.clone(), config.webhook_allowed_cidrs.clone(), backoff, may_deliver, shutdown.child_token())?;
    }
    let rest = crate::http::rest::router(opened.db.clone(), auth.clone(), config.max_body_bytes, config.max_import_bytes, config.explorer(), &config.allowed_origins, shutdown.child_token());
    let mcp = crate::http::mcp::router(opened.db.clone(), auth, config.max_body_bytes, config.tool_profile()?, shutdown.child_token());
    let guard = Arc::new(crate::http::web_guard::WebGuard::new(config.bind_host.is_loopback(), &config.allowed_hosts, &config.allowed_origins));
    // HTTPS beside HTTP (MentisDB 0.10's way), or HTTPS instead of HTTP on
    // the two ports when only a certificate is given.
    let mut tasks = Vec::new();
    let listeners = 2 + [config.https_rest_port, config.https_mcp_port].iter().filter(|p| config.https_beside() && p.is_some_and(|p| p > 0)).count();
    let limits = crate::http::serve::Limits::for_daemon(listeners, crate::infra::open_files::raise_limit());
    let (mut https_rest_addr, mut https_mcp_addr) = (None, None);
    let tls = if config.https_beside() {
        let (cert, key) = config.tls_files()?;
        if let Some(minted) = crate::infra::tls_cert::ensure(&cert, &key)? {
            tracing::info!(cert = %cert.display(), names = ?minted.names, sha256 = %minted.sha256, "created a self-signed certificate for the HTTPS listeners");
        }
        let https = tls_config(&cert, &key)?;
        for (port, app, addr_out) in [(config.https_rest_port, &rest, &mut https_rest_addr), (config.https_mcp_port, &mcp, &mut https_mcp_addr)] {
            let Some(port) = port.filter(|p| *p > 0) else { continue };
            let addr = SocketAddr::new(config.bind_host, port);
            let listener = bind(addr).await?;
            *addr_out = Some(listener.local_addr().map_err(|source| DaemonError::Bind { addr, source })?);
            tasks.push(tokio::spawn(serve_http(listener, app.clone(), guard.clone(), Some(https.clone()), limits, shutdown.clone())));
        }
        None
    } else {
        match (&config.tls_cert, &config.tls_key) {
            (Some(cert), Some(key)) => Some(tls_config(cert, key)?),
            _ => None,
        }
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    for (listener, app) in [(rest_listener, rest), (mcp_listener, mcp)] {
        tasks.push(tokio::spawn(serve_http(listener, app, guard.clone(), tls.clone(), limits, shutdown.clone())));
    }
    if let Some(lock) = &opened.lock {
        if let Err(e) = lock.announce(rest_addr, mcp_addr, scheme) {
            tracing::warn!(error = %e, "cannot record the listen addresses in the lock file; `mentisdb --mode stdio` will not find this daemon");
        }
    }
    Ok(RunningDaemon { rest_addr, mcp_addr, https_rest_addr, https_mcp_addr, scheme, db: opened.db, report: opened.report, shutdown, tasks, _listener: opened.listener, _lock: opened.lock, _delivery_lease: opened.delivery_lease })
}

/// Serves `app` on `listener` behind the browser guard (`http/web_guard.rs`),
/// over TLS when `tls` is given, until `stop` (`http/serve.rs`).
async fn serve_http(listener: tokio::net::TcpListener, app: axum::Router, guard: Arc<crate::http::web_guard::WebGuard>, tls: Option<crate::http::serve::TlsConfig>, limits: crate::http::serve::Limits, stop: CancellationToken) -> std::io::Result<()> {
    let app = app.layer(axum::middleware::from_fn_with_state(guard, crate::http::web_guard::guard)).layer(axum::middleware::from_fn(crate::http::body_limit::read_rest_after_reply));
    crate::http::serve::serve(listener, app, tls, limits, stop).await
}

/// The rustls server configuration (ring provider) of a PEM certificate
/// chain and private key.
pub(crate) fn tls_config(cert: &std::path::Path, key: &std::path::Path) -> Result<crate::http::serve::TlsConfig, DaemonError> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|source| DaemonError::TlsCertificates { path: cert.to_path_buf(), source })?;
    if certs.is_empty() {
        return Err(DaemonError::TlsNoCertificate(cert.to_path_buf()));
    }
    let private = PrivateKeyDer::from_pem_file(key).map_err(|source| DaemonError::TlsKey { path: key.to_path_buf(), source })?;
    let mut server = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(DaemonError::TlsProtocols)?
        .with_no_client_auth()
        .with_single_cert(certs, private)
        .map_err(DaemonError::TlsPair)?;
    server.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(server))
}

impl RunningDaemon {
    /// The machine-readable startup line tests and scripts look for.
    pub fn listening_line(&self) -> String {
        let mut line = format!("mentisdbd listening rest={} mcp={} scheme={}", self.rest_addr, self.mcp_addr, self.scheme);
        if let Some(a) = self.https_rest_addr {
            line.push_str(&format!(" https_rest={a}"));
        }
        if let Some(a) = self.https_mcp_addr {
            line.push_str(&format!(" https_mcp={a}"));
        }
        line
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
