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

use crate::config::Config;
use crate::daemon::{open_store, OpenedStore};
use crate::http::routes::ROUTES;
use crate::infra::dir_lock::running_daemon;
use mentisdb_core::MentisDb;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// Where a command's tool call goes.
pub enum Target {
    /// A daemon's REST API: base URL and bearer token.
    Rest { base: String, token: Option<String>, agent: ureq::Agent },
    /// The store opened by this process (and locked, for a directory).
    Local(OpenedStore),
}

impl Target {
    /// `--url`, else the directory's daemon, else the store itself.
    pub fn resolve(config: &Config, url: Option<&str>, token: Option<&str>) -> Result<Target, String> {
        let token = token.map(str::to_string).or_else(|| config.api_token.clone());
        if let Some(url) = url {
            let url = url.trim();
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!("--url '{}' needs a scheme: http://host:port (the daemon's REST address, e.g. http://127.0.0.1:9472)", url.chars().take(100).collect::<String>()));
            }
            return Ok(Target::rest(url, token));
        }
        if config.storage_url.is_none() {
            let dir = config.data_dir().map_err(|e| e.to_string())?;
            if let Ok(Some(holder)) = running_daemon(&dir) {
                let base = holder.rest_base().ok_or_else(|| format!("a daemon (pid {}) holds {} but has not said where it listens yet; retry in a moment or pass --url", holder.pid.map_or("?".into(), |p| p.to_string()), dir.display()))?;
                return Ok(Target::rest(&base, token));
            }
        }
        open_store(config).map(Target::Local).map_err(|e| e.to_string())
    }

    /// A request that never got an answer, with what to try.
    fn unreachable(url: &str, e: impl std::fmt::Display) -> String {
        format!("{url}: {e}; is mentisdbd running there? Start it with `mentisdbd`, or pass --url with the REST address its startup line names")
    }

    /// An answer that is not the REST API's JSON, with what to try.
    fn not_rest(url: &str, status: u16, text: &str) -> String {
        format!("{url} answered HTTP {status} without JSON ({}); is this the REST port? The MCP port is another one: the REST address is in the daemon's startup line", text.chars().take(120).collect::<String>())
    }

    fn rest(base: &str, token: Option<String>) -> Target {
        let agent = ureq::Agent::config_builder().timeout_global(Some(Duration::from_secs(60))).http_status_as_error(false).build().into();
        Target::Rest { base: base.trim_end_matches('/').to_string(), token, agent }
    }

    /// Calls `tool` with `args`; an error is one line.
    pub fn call(&self, tool: &str, args: Value) -> Result<Value, String> {
        match self {
            Target::Local(store) => store.db.call(tool, args).map_err(|e| e.to_string()),
            Target::Rest { base, token, agent } => {
                // A tool's POST route takes the arguments as JSON; a read with only a GET route takes them as the query.
                let route = ROUTES.iter().find(|r| r.tool == tool && r.method == "POST").or_else(|| ROUTES.iter().find(|r| r.tool == tool && r.method == "GET" && !r.path.contains('{'))).ok_or_else(|| format!("{tool} has no REST route"))?;
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
                let mut reply = sent.map_err(|e| Target::unreachable(&url, e))?;
                let status = reply.status();
                let text = reply.body_mut().read_to_string().map_err(|e| format!("{url}: reading the reply: {e}"))?;
                let v: Value = serde_json::from_str(&text).map_err(|_| Target::not_rest(&url, status.as_u16(), &text))?;
                if status.is_success() {
                    Ok(v)
                } else {
                    Err(format!("HTTP {}: {}", status.as_u16(), v.get("error").and_then(Value::as_str).unwrap_or(text.as_str())))
                }
            }
        }
    }

    /// Whether chain `key` exists where the calls go.
    pub fn chain_exists(&self, key: &str) -> Result<bool, String> {
        match self {
            Target::Local(store) => store.db.chain_exists(key).map_err(|e| e.to_string()),
            Target::Rest { .. } => {
                let listed = self.call("mentisdb_list_chains", json!({}))?;
                Ok(listed["chains"].as_array().into_iter().flatten().any(|c| c["chain_key"] == key))
            }
        }
    }

    /// Stores a whole chain object (verified first; an existing key is
    /// refused) and returns how many thoughts it holds: locally, or through
    /// `POST /v1/chains/{chain_key}/import` with the bytes as the body.
    pub fn import_chain(&self, chain_key: &str, bytes: &[u8]) -> Result<usize, String> {
        match self {
            Target::Local(store) => store.db.import_chain(bytes).map(|r| r.thought_count).map_err(|e| e.to_string()),
            Target::Rest { base, token, agent } => {
                let url = format!("{base}/v1/chains/{}/import", percent_encode_segment(chain_key));
                let mut req = agent.post(&url).header("Content-Type", "application/octet-stream");
                if let Some(t) = token {
                    req = req.header("Authorization", &format!("Bearer {t}"));
                }
                let mut reply = req.send(bytes).map_err(|e| Target::unreachable(&url, e))?;
                let status = reply.status();
                let text = reply.body_mut().read_to_string().map_err(|e| format!("{url}: reading the reply: {e}"))?;
                let v: Value = serde_json::from_str(&text).map_err(|_| Target::not_rest(&url, status.as_u16(), &text))?;
                if !status.is_success() {
                    return Err(format!("HTTP {}: {}", status.as_u16(), v["error"].as_str().unwrap_or(text.as_str())));
                }
                v["thought_count"].as_u64().map(|n| n as usize).ok_or_else(|| format!("{url}: the reply has no thought_count: {text}"))
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
