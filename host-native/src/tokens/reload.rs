//! The daemon's tokens in memory: `MENTISDB_API_TOKEN`, the token file and
//! (with `MENTISDB_BEARER_TOKEN_ACCESS`) MentisDB 0.10's registry, reloaded
//! on SIGHUP and when a file changes; a file that does not load keeps the
//! previous tokens. [`TokenStore::identify`] names the caller of a request.

use super::access::{all_chains, bearer, Identity, Token, Unauthorized};
use super::file::{digest, TokenFile};
use super::reference::reference_store_tokens;
use super::{TokenError, API_TOKEN_NAME};
use mentisdb_core::dispatch::Access;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

/// Equal slices, compared without an early exit.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The daemon's tokens: `MENTISDB_API_TOKEN` and the token file's, reloaded
/// by [`TokenStore::reload`] (SIGHUP, file changes).
#[derive(Debug)]
pub struct TokenStore {
    file: Option<PathBuf>,
    /// The token file is the data directory's default one: tokens are on
    /// only while it exists (created by `mentisdbd token add`).
    file_optional: bool,
    /// Whether the token file existed at the last load.
    file_present: std::sync::atomic::AtomicBool,
    /// MentisDB 0.10's registry, read when `MENTISDB_BEARER_TOKEN_ACCESS` is on.
    reference: Option<PathBuf>,
    api_token: Option<Arc<Token>>,
    tokens: RwLock<Arc<Vec<Arc<Token>>>>,
    stamp: RwLock<Stamps>,
}

/// The stamps of the token file and 0.10's registry when last loaded.
type Stamps = (Option<FileStamp>, Option<FileStamp>);

/// What tells a changed file: modification time, length and inode.
type FileStamp = (Option<std::time::SystemTime>, u64, u64);

fn stamp(path: &Path) -> Option<FileStamp> {
    let m = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let ino = std::os::unix::fs::MetadataExt::ino(&m);
    #[cfg(not(unix))]
    let ino = 0;
    Some((m.modified().ok(), m.len(), ino))
}

impl TokenStore {
    /// The store for `api_token`, the token file `file` and, when given,
    /// MentisDB 0.10's registry `reference` (`MENTISDB_BEARER_TOKEN_ACCESS`);
    /// reads the files now (a missing or malformed token file is an error at
    /// startup). With `reference` given, a store without a single token is
    /// an error too: 0.10's switch never leaves a daemon open, nor closed to all.
    pub fn new(api_token: Option<&str>, file: Option<&Path>, reference: Option<&Path>) -> Result<TokenStore, TokenError> {
        TokenStore::with_files(api_token, file.map(|f| (f, false)), reference)
    }

    /// [`TokenStore::new`] with the token file given as `(path, optional)`:
    /// an optional file (the data directory's default) turns tokens on only
    /// while it exists, and its absence is no error.
    pub fn with_files(api_token: Option<&str>, file: Option<(&Path, bool)>, reference: Option<&Path>) -> Result<TokenStore, TokenError> {
        let api_token = api_token.map(|t| Arc::new(Token { name: API_TOKEN_NAME.into(), sha256: digest(t), scope: Access::Admin, chains: all_chains() }));
        let store = TokenStore {
            file: file.map(|(f, _)| f.to_path_buf()),
            file_optional: file.is_some_and(|(_, optional)| optional),
            file_present: std::sync::atomic::AtomicBool::new(false),
            reference: reference.map(Path::to_path_buf),
            api_token,
            tokens: RwLock::new(Arc::new(Vec::new())),
            stamp: RwLock::new((None, None)),
        };
        let n = store.reload()?;
        if let Some(reference) = reference.filter(|_| n == 0 && store.api_token.is_none()) {
            return Err(TokenError::SwitchWithoutToken { registry: reference.to_path_buf(), file: store.file.clone() });
        }
        Ok(store)
    }

    /// A store with no tokens: every call allowed.
    pub fn open() -> TokenStore {
        TokenStore::with_files(None, None, None).expect("no files to read")
    }

    /// Whether any token is configured (else every call is allowed).
    pub fn enabled(&self) -> bool {
        let file = self.file.is_some() && (!self.file_optional || self.file_present.load(std::sync::atomic::Ordering::Acquire));
        self.api_token.is_some() || file || self.reference.is_some()
    }

    fn stamps(&self) -> Stamps {
        (self.file.as_deref().and_then(stamp), self.reference.as_deref().and_then(stamp))
    }

    /// The token file, if one is configured.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// Re-reads the token file (and 0.10's registry when it is read). On
    /// failure the previous tokens stay. Returns how many tokens were loaded.
    pub fn reload(&self) -> Result<usize, TokenError> {
        if self.file.is_none() && self.reference.is_none() {
            return Ok(0);
        }
        let before = self.stamps();
        // Anything but "not found" (a dangling link, an unreadable directory) counts as present.
        let present = self.file.as_deref().is_some_and(|p| !matches!(std::fs::symlink_metadata(p), Err(e) if e.kind() == std::io::ErrorKind::NotFound));
        if present {
            // Once the default file was seen, tokens stay on until the daemon
            // restarts: deleting or breaking the file never opens it.
            self.file_present.store(true, std::sync::atomic::Ordering::Release);
        }
        // A file that does not load keeps the previous tokens: none, when the
        // default file just appeared broken, so every call is refused (closed, never open).
        let tokens = self.load(present)?;
        let n = tokens.len();
        *self.tokens.write().expect("token lock") = Arc::new(tokens.into_iter().map(Arc::new).collect());
        *self.stamp.write().expect("token lock") = before;
        Ok(n)
    }

    /// The tokens of the token file (none while an optional one is absent)
    /// and of 0.10's registry; names must be unique and not the API token's.
    fn load(&self, present: bool) -> Result<Vec<Token>, TokenError> {
        let mut tokens = match &self.file {
            Some(_) if self.file_optional && !present => Vec::new(),
            Some(path) => TokenFile::read(path)?.tokens().map_err(|e| e.in_file(path))?,
            None => Vec::new(),
        };
        if let Some(reference) = &self.reference {
            for t in reference_store_tokens(reference)? {
                if &*t.name == API_TOKEN_NAME || tokens.iter().any(|o| o.name == t.name) {
                    return Err(TokenError::RegistryNameTwice { name: t.name.to_string(), registry: reference.clone() });
                }
                tokens.push(t);
            }
        }
        Ok(tokens)
    }

    /// Reloads when the file's time, length or inode changed since the last
    /// load; logs the outcome. Returns whether it reloaded.
    pub fn reload_if_changed(&self) -> bool {
        if self.file.is_none() && self.reference.is_none() {
            return false;
        }
        let now = self.stamps();
        if now == *self.stamp.read().expect("token lock") {
            return false;
        }
        self.reload_logged("changed");
        // A failed load remembers the bad file's stamp: it is not re-read until it changes again.
        *self.stamp.write().expect("token lock") = now;
        true
    }

    /// [`TokenStore::reload`], logging the outcome (`why`: what triggered it).
    pub fn reload_logged(&self, why: &str) {
        match self.reload() {
            Ok(n) => tracing::info!(tokens = n, trigger = why, "token file reloaded"),
            Err(e) => tracing::error!(error = %e, trigger = why, "token file not reloaded; the previous tokens stay in force"),
        }
    }

    /// Who an `Authorization` header value names: `Ok(Identity::Open)`
    /// without tokens, the token when known, else `Err` (HTTP 401).
    pub fn identify(&self, authorization: Option<&str>) -> Result<Identity, Unauthorized> {
        if !self.enabled() {
            return Ok(Identity::Open);
        }
        let given = bearer(authorization).ok_or(Unauthorized)?;
        let d = digest(given);
        let tokens = self.tokens.read().expect("token lock").clone();
        // Compare with every token, so the time taken does not tell which matched.
        let mut found = None;
        for t in self.api_token.iter().chain(tokens.iter()) {
            if constant_time_eq(&t.sha256, &d) && found.is_none() {
                found = Some(t.clone());
            }
        }
        found.map(Identity::Token).ok_or(Unauthorized)
    }

    /// Watches for SIGHUP and file changes (checked every `every`) until
    /// `shutdown` is cancelled.
    pub fn spawn_watcher(self: &Arc<Self>, every: std::time::Duration, shutdown: tokio_util::sync::CancellationToken) {
        if self.file.is_none() && self.reference.is_none() {
            return;
        }
        let store = self.clone();
        tokio::spawn(async move {
            #[cfg(unix)]
            let mut hup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
            let mut tick = tokio::time::interval(every);
            loop {
                #[cfg(unix)]
                let hangup = async {
                    match hup.as_mut() {
                        Some(h) => h.recv().await,
                        None => std::future::pending().await,
                    }
                };
                #[cfg(not(unix))]
                let hangup = std::future::pending::<Option<()>>();
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tick.tick() => { store.reload_if_changed(); }
                    _ = hangup => store.reload_logged("SIGHUP"),
                }
            }
        });
    }
}
