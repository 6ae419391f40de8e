//! Scoped bearer tokens: the token file, the store the daemon reloads, and
//! the one access rule REST and MCP over HTTP check ([`authorize`]).
//!
//! A token file (`MENTISDB_TOKENS_FILE`, TOML, or JSON when its name ends in
//! `.json`) lists tokens by the SHA-256 of their text, never the text:
//!
//! ```toml
//! [[token]]
//! name = "ci-bot"
//! sha256 = "<64 hex digits: SHA-256 of the token string>"
//! scopes = ["write"]          # read, write, admin (admin ⊇ write ⊇ read)
//! chains = ["ci-*", "shared"] # exact keys, `prefix*` patterns, "*" = all (the default)
//! ```
//!
//! `MENTISDB_API_TOKEN` adds one admin token for all chains, named
//! [`API_TOKEN_NAME`]. MentisDB 0.10's switch `MENTISDB_BEARER_TOKEN_ACCESS=true`
//! adds the active tokens of 0.10's registry `<dir>/bearer-tokens.json`
//! ([`REFERENCE_REGISTRY`]: admin on their chains, as 0.10 lets them call
//! every tool there); the daemon refuses to start when that switch is on and
//! no token exists at all. Without any token source, every call is allowed.

use mentisdb_core::dispatch::{access_of, call_scope, Access, CallScope, Caller};
use mentisdb_core::MentisDb;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

/// The name `MENTISDB_API_TOKEN` is known by in logs and messages.
pub const API_TOKEN_NAME: &str = "api-token";

/// Prefix of the tokens `mentisdbd token add` makes.
pub const TOKEN_PREFIX: &str = "mdb_";

/// SHA-256 of a token string.
pub fn digest(token: &str) -> [u8; 32] {
    let d = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
    d.as_ref().try_into().expect("SHA-256 is 32 bytes")
}

/// A new random token: `mdb_` and 32 random bytes in hex.
pub fn generate() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(format!("{TOKEN_PREFIX}{}", hex::encode(bytes)))
}

/// Whether chain pattern `pattern` covers chain `key`: equal, or `prefix*`
/// with `key` starting with `prefix` (`*` covers every chain).
pub fn pattern_covers(pattern: &str, key: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => key.starts_with(prefix),
        None => pattern == key,
    }
}

/// MentisDB 0.10's token registry, in its data directory.
pub const REFERENCE_REGISTRY: &str = "bearer-tokens.json";

/// One record of MentisDB 0.10's `bearer-tokens.json` (tokens by the
/// SHA-256 of their text; a record without `scope` is global, as 0.10 reads it).
#[derive(Deserialize)]
struct ReferenceRecord {
    alias: String,
    token_hash: String,
    #[serde(default)]
    revoked_at: Option<String>,
    #[serde(default)]
    scope: ReferenceScope,
}

#[derive(Deserialize, Default)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ReferenceScope {
    #[default]
    Global,
    Chain { chain_key: String },
    Chains { chain_keys: Vec<String> },
}

/// A token of MentisDB 0.10's registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReferenceToken {
    /// Its alias (our token name).
    pub alias: String,
    /// Lowercase hex SHA-256 of the token's text.
    pub sha256_hex: String,
    /// The chains it covers; empty for a global token.
    pub chains: Vec<String>,
    /// Revoked in 0.10 (never accepted).
    pub revoked: bool,
}

/// The tokens of 0.10's registry at `path`, or `None` when it does not exist.
pub fn read_reference_tokens(path: &Path) -> Result<Option<Vec<ReferenceToken>>, String> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let records: Vec<ReferenceRecord> = serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Some(
        records
            .into_iter()
            .map(|r| ReferenceToken {
                alias: r.alias,
                sha256_hex: r.token_hash.trim().to_ascii_lowercase(),
                chains: match r.scope {
                    ReferenceScope::Global => Vec::new(),
                    ReferenceScope::Chain { chain_key } => vec![chain_key],
                    ReferenceScope::Chains { chain_keys } => chain_keys,
                },
                revoked: r.revoked_at.is_some(),
            })
            .collect(),
    ))
}

/// The active tokens of 0.10's registry at `path` as our tokens (admin on
/// their chains); none when the file does not exist.
fn reference_store_tokens(path: &Path) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    for t in read_reference_tokens(path)?.unwrap_or_default().into_iter().filter(|t| !t.revoked) {
        let mut sha256 = [0u8; 32];
        hex::decode_to_slice(&t.sha256_hex, &mut sha256).map_err(|_| format!("{}: token '{}': token_hash must be 64 hex digits", path.display(), t.alias))?;
        let chains = if t.chains.is_empty() { all_chains() } else { t.chains };
        out.push(Token { name: t.alias.into(), sha256, scope: Access::Admin, chains });
    }
    Ok(out)
}

/// One token as the token file lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenRecord {
    /// Unique name: recorded as the caller of the token's calls.
    pub name: String,
    /// Lowercase hex SHA-256 of the token string.
    pub sha256: String,
    /// `read`, `write` and/or `admin`; the highest one counts.
    pub scopes: Vec<String>,
    /// Chain keys and `prefix*` patterns; all chains (`*`) when omitted.
    #[serde(default = "all_chains")]
    pub chains: Vec<String>,
}

fn all_chains() -> Vec<String> {
    vec!["*".to_string()]
}

/// The token file as written: `[[token]]` tables (TOML) or `{"token": [...]}` (JSON).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenFile {
    /// The tokens, in file order.
    #[serde(default)]
    pub token: Vec<TokenRecord>,
}

/// The file format, chosen by the file name.
fn is_json(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"))
}

impl TokenFile {
    /// Parses a token file's text (JSON when `json`, else TOML) and checks it.
    pub fn parse(text: &str, json: bool) -> Result<TokenFile, String> {
        let file: TokenFile = if json { serde_json::from_str(text).map_err(|e| e.to_string())? } else { toml::from_str(text).map_err(|e| e.to_string())? };
        file.tokens()?;
        Ok(file)
    }

    /// Reads and parses the file at `path`.
    pub fn read(path: &Path) -> Result<TokenFile, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read token file {}: {e}", path.display()))?;
        TokenFile::parse(&text, is_json(path)).map_err(|e| format!("token file {}: {e}", path.display()))
    }

    /// The file's text in its format.
    pub fn render(&self, path: &Path) -> String {
        if is_json(path) {
            serde_json::to_string_pretty(self).expect("token files serialize") + "\n"
        } else {
            toml::to_string(self).expect("token files serialize")
        }
    }

    /// The checked tokens: unique names, 64-hex digests, known scopes, patterns.
    pub fn tokens(&self) -> Result<Vec<Token>, String> {
        let mut out: Vec<Token> = Vec::with_capacity(self.token.len());
        for r in &self.token {
            let name = r.name.trim();
            if name.is_empty() {
                return Err("a token has an empty name".into());
            }
            if out.iter().any(|t| &*t.name == name) || name == API_TOKEN_NAME {
                return Err(format!("token name '{name}' is used twice (or is reserved for MENTISDB_API_TOKEN)"));
            }
            let mut sha256 = [0u8; 32];
            hex::decode_to_slice(r.sha256.trim(), &mut sha256).map_err(|_| format!("token '{name}': sha256 must be 64 hex digits"))?;
            let scope = r.scopes.iter().map(|s| Access::parse(s).map_err(|e| format!("token '{name}': {e}"))).try_fold(None, |best: Option<Access>, s| s.map(|s| best.max(Some(s))))?;
            let scope = scope.ok_or_else(|| format!("token '{name}': scopes is empty; give read, write or admin"))?;
            if r.chains.is_empty() || r.chains.iter().any(|c| c.trim().is_empty() || c.strip_suffix('*').unwrap_or(c).contains('*')) {
                return Err(format!("token '{name}': chains must be non-empty keys or `prefix*` patterns ('*' alone for all chains)"));
            }
            out.push(Token { name: name.into(), sha256, scope, chains: r.chains.iter().map(|c| c.trim().to_string()).collect() });
        }
        Ok(out)
    }
}

/// Writes `file` to `path` atomically: a temp file beside it (mode 0600),
/// fsync, rename over `path`, fsync of the directory.
fn write_atomically(path: &Path, file: &TokenFile) -> Result<(), String> {
    use std::io::Write;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let fail = |what: &str, e: std::io::Error| format!("cannot {what} token file {}: {e}", path.display());
    // The data directory's default file may come before the directory.
    mentisdb_fs_storage::private::create_private_dir(dir, true).map_err(|e| fail("create the directory of the", e))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| fail("create a temporary file for the", e))?;
    tmp.write_all(file.render(path).as_bytes()).map_err(|e| fail("write the", e))?;
    tmp.as_file().sync_all().map_err(|e| fail("fsync the", e))?;
    tmp.persist(path).map_err(|e| fail("replace the", e.error))?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// The token file at `path`, or an empty one when it does not exist.
fn read_or_empty(path: &Path) -> Result<TokenFile, String> {
    if path.exists() {
        TokenFile::read(path)
    } else {
        Ok(TokenFile::default())
    }
}

/// Adds a token named `name` to the file at `path` (created, mode 0600, when
/// missing) and returns the token's text, which is stored nowhere.
pub fn add_token(path: &Path, name: &str, scope: Access, chains: &[String]) -> Result<String, String> {
    let mut file = read_or_empty(path)?;
    let name = name.trim();
    if file.token.iter().any(|t| t.name == name) {
        return Err(format!("a token named '{name}' already exists in {}; revoke it first or choose another name", path.display()));
    }
    let token = generate().map_err(|e| format!("no randomness for a token: {e}"))?;
    let chains = if chains.is_empty() { all_chains() } else { chains.iter().map(|c| c.trim().to_string()).collect() };
    file.token.push(TokenRecord { name: name.to_string(), sha256: hex::encode(digest(&token)), scopes: vec![scope.as_str().to_string()], chains });
    file.tokens()?;
    write_atomically(path, &file)?;
    Ok(token)
}

/// Adds a token known only by the SHA-256 (hex) of its text, e.g. one taken
/// in from MentisDB 0.10's `bearer-tokens.json`: the same secret keeps
/// working. `Ok(false)` when a token of that name is there already.
pub fn import_token(path: &Path, name: &str, sha256_hex: &str, scope: Access, chains: &[String]) -> Result<bool, String> {
    let mut file = read_or_empty(path)?;
    let name = name.trim();
    if file.token.iter().any(|t| t.name == name) {
        return Ok(false);
    }
    let chains = if chains.is_empty() { all_chains() } else { chains.iter().map(|c| c.trim().to_string()).collect() };
    file.token.push(TokenRecord { name: name.to_string(), sha256: sha256_hex.trim().to_ascii_lowercase(), scopes: vec![scope.as_str().to_string()], chains });
    // Checks the record (hash form, scope, chains) before anything is written.
    file.tokens()?;
    write_atomically(path, &file)?;
    Ok(true)
}

/// Removes the token named `name` from the file at `path`.
pub fn revoke_token(path: &Path, name: &str) -> Result<(), String> {
    let mut file = TokenFile::read(path)?;
    let before = file.token.len();
    file.token.retain(|t| t.name != name);
    if file.token.len() == before {
        return Err(format!("no token named '{name}' in {}", path.display()));
    }
    write_atomically(path, &file)
}

/// The tokens of the file at `path` (none when it does not exist).
pub fn list_tokens(path: &Path) -> Result<Vec<Token>, String> {
    read_or_empty(path)?.tokens()
}

/// A ranked search of a branch also reads the chains it branched from,
/// those the token covers (every scope can read).
impl mentisdb_core::dispatch::ChainReads for Token {
    fn may_read(&self, chain_key: &str) -> bool {
        self.covers(chain_key)
    }
}

/// A known token: its name, digest, highest scope and chain patterns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The token's name.
    pub name: Arc<str>,
    sha256: [u8; 32],
    /// Its highest scope.
    pub scope: Access,
    /// Chain keys and `prefix*` patterns.
    pub chains: Vec<String>,
}

impl Token {
    /// Whether the token covers chain `key`.
    pub fn covers(&self, key: &str) -> bool {
        self.chains.iter().any(|p| pattern_covers(p, key))
    }

    /// Whether the token covers every chain (a `*` pattern).
    pub fn covers_all(&self) -> bool {
        self.chains.iter().any(|p| p == "*")
    }
}

/// Who is calling, once the bearer token was checked.
#[derive(Debug, Clone)]
pub enum Identity {
    /// No token is configured: everything is allowed.
    Open,
    /// A known token.
    Token(Arc<Token>),
}

/// Equal slices, compared without an early exit.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The bearer token of an `Authorization` header value (the scheme name
/// is case-insensitive, RFC 9110 §11.1).
pub fn bearer(authorization: Option<&str>) -> Option<&str> {
    let value = authorization?.trim_start();
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
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
    pub fn new(api_token: Option<&str>, file: Option<&Path>, reference: Option<&Path>) -> Result<TokenStore, String> {
        TokenStore::with_files(api_token, file.map(|f| (f, false)), reference)
    }

    /// [`TokenStore::new`] with the token file given as `(path, optional)`:
    /// an optional file (the data directory's default) turns tokens on only
    /// while it exists, and its absence is no error.
    pub fn with_files(api_token: Option<&str>, file: Option<(&Path, bool)>, reference: Option<&Path>) -> Result<TokenStore, String> {
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
            return Err(format!(
                "MENTISDB_BEARER_TOKEN_ACCESS is on but no token exists ({} holds no active token{}): add one with `mentisdbd token add <name>`, or set MENTISDB_API_TOKEN",
                reference.display(),
                store.file.as_deref().map(|f| format!(", nor does {}", f.display())).unwrap_or_default()
            ));
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
    pub fn reload(&self) -> Result<usize, String> {
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
    fn load(&self, present: bool) -> Result<Vec<Token>, String> {
        let mut tokens = match &self.file {
            Some(_) if self.file_optional && !present => Vec::new(),
            Some(path) => TokenFile::read(path)?.tokens().map_err(|e| format!("token file {}: {e}", path.display()))?,
            None => Vec::new(),
        };
        if let Some(reference) = &self.reference {
            for t in reference_store_tokens(reference)? {
                if &*t.name == API_TOKEN_NAME || tokens.iter().any(|o| o.name == t.name) {
                    return Err(format!("token name '{}' is used twice in {} and the token file (or is reserved for MENTISDB_API_TOKEN); rename one", t.name, reference.display()));
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

/// No token, or one the daemon does not know (HTTP 401).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("missing or unknown API token: send 'Authorization: Bearer <token>' (MENTISDB_API_TOKEN, or a token of MENTISDB_TOKENS_FILE)")]
pub struct Unauthorized;

/// A known token may not make this call (HTTP 403); the message names the
/// missing scope and chain.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Forbidden(pub String);

/// The one access rule. Returns the caller to pass to the dispatcher
/// (`None` when no token is configured), or why the call is refused.
///
/// - A chain tool needs the tool's scope on the chain it touches.
/// - Daemon-wide reads (`mentisdb_list_chains`, skill reads) need `read`.
/// - A skill upload needs `write` on its `chain_key`; a token not covering
///   `*` may create a new skill only (the registry refuses a new version of
///   an existing one, `Caller::all_chains`); other changes of the
///   daemon-wide skill registry (deprecate, revoke, delete) need `admin` on `*`.
/// - A tool over several chains (`mentisdb_federated_search`) needs its
///   scope on every chain of `chain_keys`; a call naming a chain the token
///   does not cover is refused (403), not answered from the others.
/// - An unknown tool is let through to fail as unknown.
pub fn authorize<'a>(db: &MentisDb, who: &'a Identity, tool: &str, args: &Value) -> Result<Option<Caller<'a>>, Forbidden> {
    let Identity::Token(token) = who else { return Ok(None) };
    let Some(needed) = access_of(tool) else {
        // An unknown tool: let through to fail as unknown.
        return Ok(Some(Caller { name: &token.name, all_chains: false, admin: false, reads: Some(token.as_ref()) }));
    };
    let Some(scope) = call_scope(db, tool, args) else {
        return Err(Forbidden(format!("{tool}: the chains this call touches cannot be told; refused")));
    };
    let (chain, covered) = match &scope {
        CallScope::DaemonWide if needed == Access::Read => (None, true),
        CallScope::Chain(k) => (Some(k.as_str()), token.covers(k)),
        CallScope::ChainAndSkills(k) if needed <= Access::Write => (Some(k.as_str()), token.covers(k)),
        CallScope::DaemonWide | CallScope::ChainAndSkills(_) => (Some("*"), token.covers_all()),
        // Several chains: refused unless the token covers every one (the
        // first it does not is named); nothing is silently left out.
        CallScope::Chains(keys) => match keys.iter().find(|k| !token.covers(k)) {
            Some(k) => (Some(k.as_str()), false),
            None => (None, true),
        },
    };
    if !(covered && token.scope.covers(needed)) {
        let on = match chain {
            Some("*") => "all chains ('*')".to_string(),
            Some(k) => format!("chain '{k}'"),
            None => "the daemon".to_string(),
        };
        return Err(Forbidden(format!("token '{}' lacks scope '{needed}' for {on} ({tool} needs {needed})", token.name)));
    }
    let all_chains = token.covers_all();
    let admin = all_chains && token.scope == Access::Admin;
    Ok(Some(Caller { name: &token.name, all_chains, admin, reads: Some(token.as_ref()) }))
}

/// `mentisdb_list_chains`' result as `who` may see it: only the chains
/// its token covers (the default chain key is kept).
pub fn filter_chain_list(who: &Identity, result: Box<serde_json::value::RawValue>) -> Box<serde_json::value::RawValue> {
    let Identity::Token(token) = who else { return result };
    if token.covers_all() {
        return result;
    }
    let Ok(mut v) = serde_json::from_str::<Value>(result.get()) else { return result };
    if let Some(keys) = v.get_mut("chain_keys").and_then(Value::as_array_mut) {
        keys.retain(|k| k.as_str().is_some_and(|k| token.covers(k)));
    }
    if let Some(chains) = v.get_mut("chains").and_then(Value::as_array_mut) {
        chains.retain(|c| c["chain_key"].as_str().is_some_and(|k| token.covers(k)));
    }
    serde_json::value::to_raw_value(&v).unwrap_or(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn token(scope: Access, chains: &[&str]) -> Identity {
        Identity::Token(Arc::new(Token { name: "t".into(), sha256: [0; 32], scope, chains: chains.iter().map(|c| c.to_string()).collect() }))
    }

    #[test]
    fn patterns_match_keys_and_prefixes() {
        assert!(pattern_covers("*", "anything") && pattern_covers("*", ""));
        assert!(pattern_covers("ci-*", "ci-") && pattern_covers("ci-*", "ci-42"));
        assert!(!pattern_covers("ci-*", "c") && !pattern_covers("ci-*", "prod-ci-1"));
        assert!(pattern_covers("proj-a", "proj-a") && !pattern_covers("proj-a", "proj-ab") && !pattern_covers("proj-a", "proj-"));
    }

    #[test]
    fn token_files_parse_in_both_formats_and_bad_ones_are_refused() {
        let sha = hex::encode(digest("secret"));
        let toml_text = format!("[[token]]\nname = \"ci\"\nsha256 = \"{sha}\"\nscopes = [\"read\", \"write\"]\nchains = [\"ci-*\"]\n\n[[token]]\nname = \"all\"\nsha256 = \"{sha}\"\nscopes = [\"admin\"]\n");
        let tokens = TokenFile::parse(&toml_text, false).unwrap().tokens().unwrap();
        assert_eq!((tokens[0].scope, tokens[0].chains.clone()), (Access::Write, vec!["ci-*".to_string()]));
        assert!(tokens[1].covers_all());
        let json_text = json!({"token": [{"name": "ci", "sha256": sha, "scopes": ["read"]}]}).to_string();
        assert_eq!(TokenFile::parse(&json_text, true).unwrap().tokens().unwrap()[0].scope, Access::Read);
        for bad in [
            "[[token]]\nname = \"x\"\nsha256 = \"abc\"\nscopes = [\"read\"]\n".to_string(),
            format!("[[token]]\nname = \"x\"\nsha256 = \"{sha}\"\nscopes = [\"root\"]\n"),
            format!("[[token]]\nname = \"x\"\nsha256 = \"{sha}\"\nscopes = []\n"),
            format!("[[token]]\nname = \"x\"\nsha256 = \"{sha}\"\nscopes = [\"read\"]\nchains = [\"a*b\"]\n"),
            format!("[[token]]\nname = \"x\"\nsha256 = \"{sha}\"\nscopes = [\"read\"]\n[[token]]\nname = \"x\"\nsha256 = \"{sha}\"\nscopes = [\"read\"]\n"),
            "[[token]]\nname = \"x\"\n".to_string(),
            "not toml".to_string(),
        ] {
            assert!(TokenFile::parse(&bad, false).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_bad_file_keeps_the_previous_tokens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens.toml");
        let sha = hex::encode(digest("secret"));
        std::fs::write(&path, format!("[[token]]\nname = \"ci\"\nsha256 = \"{sha}\"\nscopes = [\"read\"]\n")).unwrap();
        let store = TokenStore::new(None, Some(&path), None).unwrap();
        assert!(store.identify(Some("Bearer secret")).is_ok());
        assert_eq!(store.identify(Some("Bearer other")).unwrap_err(), Unauthorized);
        assert_eq!(store.identify(None).unwrap_err(), Unauthorized);
        std::fs::write(&path, "[[token]]\nname = 3\n").unwrap();
        assert!(store.reload().is_err());
        assert!(store.reload_if_changed());
        assert!(store.identify(Some("Bearer secret")).is_ok(), "the previous tokens stay");
        std::fs::write(&path, "").unwrap();
        store.reload().unwrap();
        assert!(store.identify(Some("Bearer secret")).is_err(), "an empty file has no tokens");
        assert!(TokenStore::new(None, Some(&dir.path().join("missing.toml")), None).is_err());
    }

    #[test]
    fn tokens_are_added_listed_and_revoked_in_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub-tokens.toml");
        let ci = add_token(&path, "ci", Access::Write, &["ci-*".into()]).unwrap();
        #[cfg(unix)]
        assert_eq!(std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&path).unwrap().permissions()) & 0o777, 0o600);
        assert!(!std::fs::read_to_string(&path).unwrap().contains(&ci), "only the digest is stored");
        add_token(&path, "ops", Access::Admin, &[]).unwrap();
        assert!(add_token(&path, "ci", Access::Read, &[]).unwrap_err().contains("already exists"));
        let listed = list_tokens(&path).unwrap();
        assert_eq!(listed.iter().map(|t| (&*t.name, t.scope, t.chains.join(","))).collect::<Vec<_>>(), [("ci", Access::Write, "ci-*".into()), ("ops", Access::Admin, "*".into())]);
        let store = TokenStore::new(None, Some(&path), None).unwrap();
        assert!(store.identify(Some(&format!("Bearer {ci}"))).is_ok());
        revoke_token(&path, "ci").unwrap();
        assert!(revoke_token(&path, "ci").unwrap_err().contains("no token named 'ci'"));
        assert!(store.reload_if_changed());
        assert!(store.identify(Some(&format!("Bearer {ci}"))).is_err());
        let json_path = dir.path().join("tokens.json");
        add_token(&json_path, "j", Access::Read, &[]).unwrap();
        assert!(std::fs::read_to_string(&json_path).unwrap().trim_start().starts_with('{'));
    }

    #[test]
    fn the_api_token_is_admin_on_every_chain_and_no_token_means_open() {
        assert!(matches!(TokenStore::open().identify(None), Ok(Identity::Open)));
        let store = TokenStore::new(Some("s3cret"), None, None).unwrap();
        let Ok(Identity::Token(t)) = store.identify(Some("Bearer s3cret")) else { panic!("known") };
        assert_eq!((&*t.name, t.scope, t.covers_all()), (API_TOKEN_NAME, Access::Admin, true));
        assert!(store.identify(Some("s3cret")).is_err(), "needs the Bearer scheme");
        for scheme in ["BEARER", "bearer", "BeArEr"] {
            assert!(store.identify(Some(&format!("{scheme} s3cret"))).is_ok(), "{scheme}: the scheme is case-insensitive");
        }
        assert!(store.identify(Some("Basic s3cret")).is_err() && store.identify(Some("Bearer ")).is_err());
        assert!(generate().unwrap().starts_with(TOKEN_PREFIX) && generate().unwrap().len() == 4 + 64);
    }

    #[test]
    fn the_rule_checks_scope_chain_and_daemon_wide_changes() {
        let db = MentisDb::open(Arc::new(mentisdb_core::MemoryStorage::new()), Arc::new(mentisdb_core::FixedClock::new(0, 1)), Arc::new(mentisdb_core::SequentialIds::starting_at(1)), Default::default()).unwrap().0;
        let ci_write = token(Access::Write, &["ci-*"]);
        let ok = |who: &Identity, tool: &str, args: Value| authorize(&db, who, tool, &args).is_ok();
        assert!(ok(&ci_write, "mentisdb_append", json!({"chain_key": "ci-1"})));
        assert!(ok(&ci_write, "mentisdb_search", json!({"chain_key": "ci-1"})));
        let e = authorize(&db, &ci_write, "mentisdb_append", &json!({"chain_key": "prod"})).unwrap_err();
        assert_eq!(e.0, "token 't' lacks scope 'write' for chain 'prod' (mentisdb_append needs write)");
        assert!(!ok(&ci_write, "mentisdb_append", json!({})), "the default chain is not ci-*");
        assert!(!ok(&ci_write, "mentisdb_add_agent_key", json!({"chain_key": "ci-1"})));
        assert!(ok(&ci_write, "mentisdb_list_chains", json!({})) && ok(&ci_write, "mentisdb_read_skill", json!({})));
        assert!(ok(&ci_write, "mentisdb_upload_skill", json!({"chain_key": "ci-1"})));
        assert!(!ok(&ci_write, "mentisdb_upload_skill", json!({"chain_key": "prod"})));
        let ci_admin = token(Access::Admin, &["ci-*"]);
        assert!(ok(&ci_admin, "mentisdb_add_agent_key", json!({"chain_key": "ci-1"})));
        let e = authorize(&db, &ci_admin, "mentisdb_revoke_skill", &json!({"chain_key": "ci-1"})).unwrap_err();
        assert!(e.0.contains("lacks scope 'admin' for all chains ('*')"), "{}", e.0);
        assert!(ok(&token(Access::Admin, &["*"]), "mentisdb_revoke_skill", json!({"chain_key": "ci-1"})));
        assert!(!ok(&token(Access::Read, &["*"]), "mentisdb_append", json!({})));
        assert!(ok(&Identity::Open, "mentisdb_revoke_skill", json!({})));
        let caller = authorize(&db, &ci_admin, "mentisdb_head", &json!({"chain_key": "ci-1"})).unwrap().unwrap();
        assert_eq!((caller.name, caller.all_chains, caller.admin), ("t", false, false), "admin on some chains is not admin of the daemon");
        let root = token(Access::Admin, &["*"]);
        let caller = authorize(&db, &root, "mentisdb_head", &json!({})).unwrap().unwrap();
        assert_eq!((caller.all_chains, caller.admin), (true, true));
    }

    #[test]
    fn the_chain_list_shows_only_covered_chains() {
        let raw = serde_json::value::to_raw_value(&json!({"default_chain_key": "d", "chain_keys": ["ci-1", "prod"], "chains": [{"chain_key": "ci-1"}, {"chain_key": "prod"}]})).unwrap();
        let v: Value = serde_json::from_str(filter_chain_list(&token(Access::Read, &["ci-*"]), raw).get()).unwrap();
        assert_eq!(v["chain_keys"], json!(["ci-1"]));
        assert_eq!(v["chains"], json!([{"chain_key": "ci-1"}]));
    }
}
