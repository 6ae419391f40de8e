//! Where a command's tool calls go: a daemon's REST API, or the store
//! opened by this process.
//!
//! Contract ([`Target::resolve`]): with `--url` (or `MENTISDB_URL`) the calls
//! go to that daemon's REST API, with the token of `--token` /
//! `MENTISDB_API_TOKEN`. Otherwise the data directory (`--dir` /
//! `MENTISDB_DIR`, default `~/.mentisdb`) or the database of `--storage-url`
//! is used: when a daemon holds the directory (its lock file says where it
//! listens) the calls go through that daemon, so there is never a second
//! writer; when none does, the directory is opened here, locked for as long
//! as the target lives. The shell commands, `backup` and `import-reference`
//! all reach the memory this way.

use crate::config::{Config, ConfigError};
use crate::daemon::{open_store, DaemonError, OpenedStore};
use crate::http::routes::ROUTES;
use crate::infra::dir_lock::running_daemon;
use mentisdb_core::{ImportError, MentisDb, ToolError};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Why a tool call (or the target itself) failed: one line, saying what to
/// try when the daemon could not be reached.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TargetError {
    /// `--url` without `http://` or `https://` (shown cut to 100 characters).
    #[error("--url '{0}' needs a scheme: http://host:port (the daemon's REST address, e.g. http://127.0.0.1:9472)")]
    NoScheme(String),
    /// No data directory is known.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A daemon holds the directory but has not written its addresses yet.
    #[error("a daemon (pid {}) holds {} but has not said where it listens yet; retry in a moment or pass --url", pid.map_or("?".into(), |p| p.to_string()), dir.display())]
    NotListening { pid: Option<u32>, dir: PathBuf },
    /// The directory or database could not be opened here.
    #[error(transparent)]
    Open(#[from] DaemonError),
    /// The local store refused the call.
    #[error(transparent)]
    Tool(#[from] ToolError),
    /// The local store refused a chain object.
    #[error(transparent)]
    Import(#[from] ImportError),
    /// The tool has no REST route to call it by.
    #[error("{0} has no REST route")]
    NoRoute(String),
    /// The request got no answer.
    #[error("{url}: {source}; is mentisdbd running there? Start it with `mentisdbd`, or pass --url with the REST address its startup line names")]
    Unreachable { url: String, source: ureq::Error },
    /// The answer broke off.
    #[error("{url}: reading the reply: {source}")]
    Reply { url: String, source: ureq::Error },
    /// The answer is not the REST API's JSON (its text cut to 120 characters).
    #[error("{url} answered HTTP {status} without JSON ({text}); is this the REST port? The MCP port is another one: the REST address is in the daemon's startup line")]
    NotRest { url: String, status: u16, text: String },
    /// The daemon refused the call: its status and `error` message.
    #[error("HTTP {status}: {message}")]
    Refused { status: u16, message: String },
    /// A chain import's answer lacks its thought count.
    #[error("{url}: the reply has no thought_count: {text}")]
    NoThoughtCount { url: String, text: String },
}

/// Where a command's tool call goes.
pub enum Target {
    /// A daemon's REST API: base URL and bearer token.
    Rest { base: String, token: Option<String>, agent: ureq::Agent },
    /// The store opened by this process (and locked, for a directory).
    Local(OpenedStore),
}

impl Target {
    /// `--url`, else the directory's daemon, else the store itself.
    pub fn resolve(config: &Config, url: Option<&str>, token: Option<&str>) -> Result<Target, TargetError> {
        let token = token.map(str::to_string).or_else(|| config.api_token.clone());
        if let Some(url) = url {
            let url = url.trim();
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(TargetError::NoScheme(url.chars().take(100).collect()));
            }
            return Ok(Target::rest(url, token));
        }
        if config.storage_url.is_none() {
            let dir = config.data_dir()?;
            if let Ok(Some(holder)) = running_daemon(&dir) {
                let base = holder.rest_base().ok_or_else(|| TargetError::NotListening { pid: holder.pid, dir: dir.clone() })?;
                return Ok(Target::rest(&base, token));
            }
        }
        Ok(Target::Local(open_store(config)?))
    }

    /// An answer that is not the REST API's JSON, with what to try.
    fn not_rest(url: &str, status: u16, text: &str) -> TargetError {
        TargetError::NotRest { url: url.to_string(), status, text: text.chars().take(120).collect() }
    }

    fn rest(base: &str, token: Option<String>) -> Target {
        let agent = ureq::Agent::config_builder().timeout_global(Some(Duration::from_secs(60))).http_status_as_error(false).build().into();
        Target::Rest { base: base.trim_end_matches('/').to_string(), token, agent }
    }

    /// Calls `tool` with `args`; an error is one line.
    pub fn call(&self, tool: &str, args: Value) -> Result<Value, TargetError> {
        match self {
            Target::Local(store) => Ok(store.db.call(tool, args)?),
            Target::Rest { base, token, agent } => {
                // A tool's POST route takes the arguments as JSON; a read with only a GET route takes them as the query.
                let route = ROUTES.iter().find(|r| r.tool == tool && r.method == "POST").or_else(|| ROUTES.iter().find(|r| r.tool == tool && r.method == "GET" && !r.path.contains('{'))).ok_or_else(|| TargetError::NoRoute(tool.to_string()))?;
                let url = format!("{base}{}", route.path);
                let auth = token.as_ref().map(|t| format!("Bearer {t}"));
                let sent = if route.method == "POST" {
                    let mut req = agent.post(&url);
                    if let Some(a) = &auth {
                        req = req.header("Authorization", a);
                    }
                    req.send_json(&args)
                } else {
                    let mut req = agent.get(&url);
                    if let Some(a) = &auth {
                        req = req.header("Authorization", a);
                    }
                    for (k, v) in args.as_object().into_iter().flatten() {
                        req = req.query(k, v.as_str().map_or_else(|| v.to_string(), str::to_string));
                    }
                    req.call()
                };
                let mut reply = sent.map_err(|source| TargetError::Unreachable { url: url.clone(), source })?;
                let status = reply.status();
                let text = reply.body_mut().read_to_string().map_err(|source| TargetError::Reply { url: url.clone(), source })?;
                let v: Value = serde_json::from_str(&text).map_err(|_| Target::not_rest(&url, status.as_u16(), &text))?;
                if status.is_success() {
                    Ok(v)
                } else {
                    Err(TargetError::Refused { status: status.as_u16(), message: v.get("error").and_then(Value::as_str).unwrap_or(text.as_str()).to_string() })
                }
            }
        }
    }

    /// Whether chain `key` exists where the calls go.
    pub fn chain_exists(&self, key: &str) -> Result<bool, TargetError> {
        match self {
            Target::Local(store) => Ok(store.db.chain_exists(key)?),
            Target::Rest { .. } => {
                let listed = self.call("mentisdb_list_chains", json!({}))?;
                Ok(listed["chains"].as_array().into_iter().flatten().any(|c| c["chain_key"] == key))
            }
        }
    }

    /// Stores a whole chain object (verified first; an existing key is
    /// refused) and returns how many thoughts it holds: locally, or through
    /// `POST /v1/chains/{chain_key}/import` with the bytes as the body.
    pub fn import_chain(&self, chain_key: &str, bytes: &[u8]) -> Result<usize, TargetError> {
        match self {
            Target::Local(store) => Ok(store.db.import_chain(bytes)?.thought_count),
            Target::Rest { base, token, agent } => {
                let url = format!("{base}/v1/chains/{}/import", percent_encode_segment(chain_key));
                let mut req = agent.post(&url).header("Content-Type", "application/octet-stream");
                if let Some(t) = token {
                    req = req.header("Authorization", &format!("Bearer {t}"));
                }
                let mut reply = req.send(bytes).map_err(|source| TargetError::Unreachable { url: url.clone(), source })?;
                let status = reply.status();
                let text = reply.body_mut().read_to_string().map_err(|source| TargetError::Reply { url: url.clone(), source })?;
                let v: Value = serde_json::from_str(&text).map_err(|_| Target::not_rest(&url, status.as_u16(), &text))?;
                if !status.is_success() {
                    return Err(TargetError::Refused { status: status.as_u16(), message: v["error"].as_str().unwrap_or(text.as_str()).to_string() });
                }
                v["thought_count"].as_u64().map(|n| n as usize).ok_or_else(|| TargetError::NoThoughtCount { url, text })
            }
        }
    }

    /// The local database, when the store was opened here.
    pub fn local_db(&self) -> Option<&Arc<MentisDb>> {
        match self {
            Target::Local(store) => Some(&store.db),
            Target::Rest { .. } => None,
        }
    }
}

/// A chain key as one URL path segment: unreserved bytes as they are, every other byte `%XX`.
fn percent_encode_segment(key: &str) -> String {
    key.bytes().map(|b| if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') { (b as char).to_string() } else { format!("%{b:02X}") }).collect()
}
