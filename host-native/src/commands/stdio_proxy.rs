//! `mentisdb --mode stdio` (MentisDB 0.10's subprocess mode): MCP over
//! stdin/stdout, served by the one daemon of the data directory, so any
//! number of agents' stdio servers share one directory without opening it
//! twice.
//!
//! [`run`] finds the daemon that holds the directory's lock
//! ([`crate::infra::dir_lock::running_daemon`]); when none does it starts one
//! detached (this executable, same arguments and environment, `--mode http`,
//! its own process group so it outlives this process and the agent's
//! Ctrl-C), waits until it answers `GET /health`, then relays: each JSON-RPC
//! line from stdin is POSTed to the daemon's streamable-HTTP MCP endpoint
//! (`/mcp`, with the session id it assigned and `MENTISDB_API_TOKEN` as the
//! bearer token when set), and every JSON-RPC message of the answer (JSON or
//! SSE) is written to stdout as one line. A request the daemon cannot answer
//! gets a JSON-RPC error, never silence.

use crate::config::{Config, ConfigError};
use crate::infra::dir_lock::{running_daemon, Holder};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// How long a started daemon may take to open the directory and listen.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// Why the relay could not start or stopped; one line each. A request the
/// daemon does not answer is no error: it gets a JSON-RPC error on stdout.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    /// No data directory is known.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// MENTISDB_TLS_CERT cannot be read.
    #[error("cannot read MENTISDB_TLS_CERT {}: {source}", path.display())]
    ReadCertificate { path: PathBuf, source: std::io::Error },
    /// MENTISDB_TLS_CERT holds no usable certificate.
    #[error("MENTISDB_TLS_CERT {}: {source}", path.display())]
    Certificate { path: PathBuf, source: reqwest::Error },
    /// The HTTP client cannot be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(reqwest::Error),
    /// The directory's lock file cannot be read.
    #[error("cannot read the lock of {}: {source}", dir.display())]
    ReadLock { dir: PathBuf, source: std::io::Error },
    /// No daemon answered in time (one was started if none held the directory).
    #[error("no mentisdbd answered for {} within {}s; run `mentisdbd --dir {}` to see why", dir.display(), START_TIMEOUT.as_secs(), dir.display())]
    NoAnswer { dir: PathBuf },
    /// This program's path is unknown, so no daemon can be started.
    #[error("cannot find this executable to start the daemon: {0}")]
    NoExecutable(std::io::Error),
    /// The daemon could not be started.
    #[error("cannot start mentisdbd for {}: {source}", dir.display())]
    Spawn { dir: PathBuf, source: std::io::Error },
    /// Standard input broke.
    #[error("cannot read stdin: {0}")]
    Stdin(std::io::Error),
    /// Standard output broke.
    #[error("cannot write stdout: {0}")]
    Stdout(std::io::Error),
}

/// Serves MCP on stdio through the directory's daemon until stdin closes.
pub async fn run(config: &Config) -> Result<(), ProxyError> {
    let dir = config.data_dir()?;
    let client = http_client(config)?;
    let (base, started) = reach_daemon(&client, &dir).await?;
    if started {
        eprintln!("mentisdb: started mentisdbd for {} at {base}; proxying stdio MCP to it", dir.display());
    } else {
        eprintln!("mentisdb: proxying stdio MCP to the mentisdbd of {} at {base}", dir.display());
    }
    // A tool profile of this agent's own (`--tools`) rides on the URL; the daemon's default otherwise.
    let url = match config.tools.trim() {
        "" | "all" => format!("{base}/mcp"),
        profile => format!("{base}/mcp?{}", url::form_urlencoded::Serializer::new(String::new()).append_pair("tools", profile).finish()),
    };
    relay(&client, &url, config.api_token.as_deref()).await
}

fn http_client(config: &Config) -> Result<reqwest::Client, ProxyError> {
    let mut builder = reqwest::Client::builder().use_rustls_tls().timeout(Duration::from_secs(300)).connect_timeout(Duration::from_secs(5));
    if let Some(cert) = &config.tls_cert {
        let pem = std::fs::read(cert).map_err(|source| ProxyError::ReadCertificate { path: cert.clone(), source })?;
        for c in reqwest::Certificate::from_pem_bundle(&pem).map_err(|source| ProxyError::Certificate { path: cert.clone(), source })? {
            builder = builder.add_root_certificate(c);
        }
    }
    builder.build().map_err(ProxyError::Client)
}

/// The directory's running daemon, starting one when none holds it.
/// Returns its base URL and whether this call started it.
async fn reach_daemon(client: &reqwest::Client, dir: &Path) -> Result<(String, bool), ProxyError> {
    let deadline = Instant::now() + START_TIMEOUT;
    let mut child: Option<std::process::Child> = None;
    loop {
        let holder = running_daemon(dir).map_err(|source| ProxyError::ReadLock { dir: dir.to_path_buf(), source })?;
        match holder.as_ref().and_then(Holder::mcp_base) {
            Some(base) if healthy(client, &base).await => return Ok((base, child.is_some())),
            Some(_) => {}
            None if holder.is_some() => {} // a daemon is starting: wait for its addresses
            None => {
                // Nobody holds the directory: start a daemon unless ours is still starting.
                let ours_alive = match child.as_mut().map(std::process::Child::try_wait) {
                    Some(Ok(None)) => true,
                    Some(Ok(Some(_))) | Some(Err(_)) | None => false,
                };
                if !ours_alive {
                    child = Some(spawn_daemon(dir)?);
                }
            }
        }
        if Instant::now() > deadline {
            return Err(ProxyError::NoAnswer { dir: dir.to_path_buf() });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn healthy(client: &reqwest::Client, base: &str) -> bool {
    matches!(client.get(format!("{base}/health")).timeout(Duration::from_secs(2)).send().await, Ok(r) if r.status().is_success())
}

/// Starts this executable as the directory's daemon, detached.
fn spawn_daemon(dir: &Path) -> Result<std::process::Child, ProxyError> {
    let exe = std::env::current_exe().map_err(ProxyError::NoExecutable)?;
    let mut args: Vec<std::ffi::OsString> = Vec::new();
    let mut given = std::env::args_os().skip(1);
    while let Some(a) = given.next() {
        let s = a.to_string_lossy();
        // The daemon serves every agent: this agent's mode and tool profile stay here.
        if s == "--mode" || s == "--tools" {
            given.next();
        } else if !(s.starts_with("--mode=") || s.starts_with("--tools=") || s == "--stdio") {
            args.push(a);
        }
    }
    let mut cmd = std::process::Command::new(exe);
    cmd.args(args).args(["--mode", "http"]).env("MENTISDB_DIR", dir);
    cmd.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    cmd.spawn().map_err(|source| ProxyError::Spawn { dir: dir.to_path_buf(), source })
}

/// Relays JSON-RPC between stdin/stdout and the daemon's MCP endpoint.
async fn relay(client: &reqwest::Client, url: &str, token: Option<&str>) -> Result<(), ProxyError> {
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut stdout = tokio::io::stdout();
    let mut session: Option<String> = None;
    let mut protocol: Option<String> = None;
    while let Some(line) = lines.next_line().await.map_err(ProxyError::Stdin)? {
        if line.trim().is_empty() {
            continue;
        }
        let message: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                write_line(&mut stdout, &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": format!("parse error: {e}")}})).await?;
                continue;
            }
        };
        let id = message.get("id").cloned();
        for reply in forward(client, url, token, &mut session, &mut protocol, &line, id.as_ref()).await {
            if reply.get("id").is_some() && reply["result"]["protocolVersion"].is_string() {
                protocol = reply["result"]["protocolVersion"].as_str().map(str::to_string);
            }
            write_line(&mut stdout, &reply).await?;
        }
    }
    Ok(())
}

async fn write_line(stdout: &mut tokio::io::Stdout, v: &Value) -> Result<(), ProxyError> {
    let mut text = v.to_string();
    text.push('\n');
    stdout.write_all(text.as_bytes()).await.map_err(ProxyError::Stdout)?;
    stdout.flush().await.map_err(ProxyError::Stdout)
}

/// POSTs one message; the JSON-RPC messages of the answer.
async fn forward(client: &reqwest::Client, url: &str, token: Option<&str>, session: &mut Option<String>, protocol: &mut Option<String>, body: &str, id: Option<&Value>) -> Vec<Value> {
    let failed = |why: String| match id {
        Some(id) => vec![json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": why}})],
        None => Vec::new(),
    };
    let mut req = client.post(url).header("accept", "application/json, text/event-stream").header("content-type", "application/json").body(body.to_string());
    if let Some(s) = session.as_deref() {
        req = req.header("mcp-session-id", s);
    }
    if let Some(p) = protocol.as_deref() {
        req = req.header("mcp-protocol-version", p);
    }
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let response = match req.send().await {
        Ok(r) => r,
        Err(e) => return failed(format!("the mentisdbd daemon did not answer: {e}")),
    };
    if let Some(s) = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) {
        *session = Some(s.to_string());
    }
    let status = response.status();
    let text = match response.text().await {
        Ok(t) => t,
        Err(e) => return failed(format!("the mentisdbd daemon's answer broke off: {e}")),
    };
    let messages: Vec<Value> = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Array(batch)) => batch,
        Ok(v) => vec![v],
        Err(_) => text.lines().filter_map(|l| l.strip_prefix("data:")).filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok()).collect(),
    };
    let messages: Vec<Value> = messages.into_iter().filter(|m| m.get("jsonrpc").is_some()).collect();
    if messages.is_empty() && !status.is_success() {
        let shown: String = text.chars().take(300).collect();
        return failed(format!("the mentisdbd daemon answered HTTP {status}: {shown}"));
    }
    messages
}
