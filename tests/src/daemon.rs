//! The real `mentisdbd` process on free loopback ports.
//!
//! The binary is `$MENTISDB_BIN` when set, else `mentisdbd` next to the test
//! executable's profile directory (`target/debug/mentisdbd`). Cargo does not
//! build another package's binary for this crate's tests, so build it first:
//! `cargo build -p mentisdb-native --bin mentisdbd` (scripts/stages/70-reliability.sh does).

use reqwest::blocking::Client;
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Path of the `mentisdbd` binary under test.
pub fn binary() -> PathBuf {
    if let Some(p) = std::env::var_os("MENTISDB_BIN") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test> -> target/<profile>/mentisdbd
    let profile_dir = exe.parent().and_then(Path::parent).expect("target/<profile>");
    let bin = profile_dir.join("mentisdbd");
    assert!(bin.exists(), "{} is missing: run `cargo build -p mentisdb-native --bin mentisdbd` first (or set MENTISDB_BIN)", bin.display());
    bin
}

/// A running `mentisdbd` child, killed (SIGKILL) on drop.
pub struct Daemon {
    child: Child,
    /// `http://127.0.0.1:<port>` of the REST server.
    pub rest: String,
    /// `http://127.0.0.1:<port>` of the MCP server.
    pub mcp: String,
    /// The startup line printed on stdout.
    pub startup_line: String,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Daemon {
    /// Starts `mentisdbd` over `dir` with free ports and quiet logs; `args`
    /// are extra command-line flags. Waits for the startup line.
    pub fn start(dir: &Path, args: &[&str]) -> Daemon {
        let mut cmd = Command::new(binary());
        for (k, _) in std::env::vars() {
            if k.starts_with("MENTISDB_") {
                cmd.env_remove(k);
            }
        }
        cmd.env("MENTISDB_DIR", dir).env("MENTISDB_REST_PORT", "0").env("MENTISDB_MCP_PORT", "0").env("MENTISDB_VERBOSE", "false");
        cmd.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn mentisdbd");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let err = child.stderr.take().expect("stderr piped");
        let sink = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        let mut out = BufReader::new(child.stdout.take().expect("stdout piped"));
        let mut line = String::new();
        out.read_line(&mut line).expect("startup line");
        if !line.starts_with("mentisdbd listening ") {
            let _ = child.kill();
            let _ = child.wait();
            std::thread::sleep(Duration::from_millis(100));
            panic!("unexpected startup line {line:?}; stderr: {}", stderr.lock().unwrap().join("\n"));
        }
        let field = |name: &str| line.split_whitespace().find_map(|w| w.strip_prefix(name)).map(|a| format!("http://{a}")).expect("address in startup line");
        let (rest, mcp) = (field("rest="), field("mcp="));
        std::thread::spawn(move || {
            let mut rest = String::new();
            let _ = out.read_to_string(&mut rest);
        });
        Daemon { child, rest, mcp, startup_line: line.trim().to_string(), stderr }
    }

    /// The OS process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Resident set size of the daemon in KiB (`VmRSS` of /proc/<pid>/status).
    pub fn rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).ok()?;
        status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }

    /// Number of chains refused at startup, from the startup line.
    pub fn refused_at_startup(&self) -> usize {
        self.startup_line.split_whitespace().find_map(|w| w.strip_prefix("refused=")).and_then(|n| n.parse().ok()).expect("refused=N in the startup line")
    }

    /// Everything the daemon wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().join("\n")
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Power loss as far as the daemon can tell: SIGKILL, no shutdown path.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP client with a timeout.
pub fn client() -> Client {
    Client::builder().timeout(Duration::from_secs(60)).pool_max_idle_per_host(4).build().expect("HTTP client")
}

/// POSTs JSON to the REST server; returns the status and the JSON body (Null when not JSON).
pub fn post(c: &Client, d: &Daemon, path: &str, body: &Value) -> (StatusCode, Value) {
    let r = c.post(format!("{}{path}", d.rest)).json(body).send().expect("REST request");
    let status = r.status();
    (status, r.json().unwrap_or(Value::Null))
}

/// POSTs and asserts HTTP 200.
pub fn ok(c: &Client, d: &Daemon, path: &str, body: Value) -> Value {
    let (status, v) = post(c, d, path, &body);
    assert_eq!(status, StatusCode::OK, "{path} {body}: {v}");
    v
}

/// Every thought of a chain, in index order, read with forward traversal.
pub fn all_thoughts(c: &Client, d: &Daemon, chain: &str) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    loop {
        let args = match out.last() {
            None => json!({"chain_key": chain, "anchor_boundary": "genesis", "include_anchor": true, "chunk_size": 1000}),
            Some(t) => json!({"chain_key": chain, "anchor_index": t["index"], "include_anchor": false, "chunk_size": 1000}),
        };
        let page = ok(c, d, "/v1/thoughts/traverse", args);
        let thoughts = page["thoughts"].as_array().cloned().unwrap_or_default();
        let n = thoughts.len();
        out.extend(thoughts);
        if n == 0 || page["has_more"] != json!(true) {
            break;
        }
    }
    out
}

/// Head hash and thought count of a chain (what "stored data unchanged" compares).
pub fn head(c: &Client, d: &Daemon, chain: &str) -> (Value, Value) {
    let h = ok(c, d, "/v1/head", json!({"chain_key": chain}));
    assert_eq!(h["integrity_ok"], true, "{h}");
    (h["head_hash"].clone(), h["thought_count"].clone())
}

/// A fresh data directory (`<tmp>/data`) inside a temp root, so a test can
/// check that nothing was written next to it.
pub fn data_dir() -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().expect("temp dir");
    let dir = root.path().join("data");
    (root, dir)
}
