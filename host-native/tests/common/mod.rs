//! The test harness shared by the daemon test files: the real `mentisdbd`
//! binary as a child process on free loopback ports.
#![allow(dead_code)]

pub mod receiver;

use reqwest::blocking::Client;
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A running `mentisdbd` child process, killed on drop.
pub struct Daemon {
    pub child: Child,
    pub rest: String,
    pub mcp: String,
    stderr: mpsc::Receiver<String>,
}

/// `mentisdbd` with no `MENTISDB_*` variable of ours, free ports and `dir`.
pub fn command(dir: &Path, extra_env: &[(&str, &str)], args: &[&str]) -> Command {
    command_of(env!("CARGO_BIN_EXE_mentisdbd"), dir, extra_env, args)
}

/// [`command`] for the program's MentisDB 0.10 name, `mentisdb`.
pub fn command_of_reference_name(dir: &Path, extra_env: &[(&str, &str)], args: &[&str]) -> Command {
    command_of(env!("CARGO_BIN_EXE_mentisdb"), dir, extra_env, args)
}

/// [`command`] for the program `bin` (`mentisdbd`, or its 0.10 name `mentisdb`).
fn command_of(bin: &str, dir: &Path, extra_env: &[(&str, &str)], args: &[&str]) -> Command {
    let mut cmd = Command::new(bin);
    for (k, _) in std::env::vars() {
        if k.starts_with("MENTISDB_") {
            cmd.env_remove(k);
        }
    }
    cmd.env("MENTISDB_DIR", dir).env("MENTISDB_REST_PORT", "0").env("MENTISDB_MCP_PORT", "0").env("MENTISDB_VERBOSE", "false");
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    cmd.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd
}

impl Daemon {
    pub fn start(dir: &Path, extra_env: &[(&str, &str)], args: &[&str]) -> Daemon {
        Daemon::spawn(command(dir, extra_env, args))
    }

    /// [`Daemon::start`] under the file-creation mask `umask` (e.g. `"022"`),
    /// through `sh -c 'umask ...; exec mentisdbd ...'`.
    pub fn start_under_umask(umask: &str, dir: &Path, extra_env: &[(&str, &str)], args: &[&str]) -> Daemon {
        let plain = command(dir, extra_env, args);
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(format!("umask {umask} && exec \"$0\" \"$@\"")).arg(plain.get_program()).args(plain.get_args());
        for (k, v) in plain.get_envs() {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        Daemon::spawn(cmd)
    }

    /// Starts `cmd` (a `mentisdbd` command) and waits for its startup line.
    pub fn spawn(mut cmd: Command) -> Daemon {
        let mut child = cmd.spawn().expect("spawn mentisdbd");
        let (tx, stderr) = mpsc::channel();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).expect("startup line");
        assert!(line.starts_with("mentisdbd listening "), "unexpected startup line {line:?}");
        let field = |name: &str| line.split_whitespace().find_map(|w| w.strip_prefix(name)).map(|a| format!("http://{a}")).expect("address in startup line");
        let (rest, mcp) = (field("rest="), field("mcp="));
        std::thread::spawn(move || {
            let mut sink = String::new();
            let _ = out.read_to_string(&mut sink);
        });
        Daemon { child, rest, mcp, stderr }
    }

    pub fn logs(&self) -> String {
        std::thread::sleep(Duration::from_millis(100));
        self.stderr.try_iter().collect::<Vec<_>>().join("\n")
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

pub fn client() -> Client {
    Client::builder().timeout(Duration::from_secs(30)).build().unwrap()
}


/// The MCP `initialize` request of these tests.
pub fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "daemon-test", "version": "1"}}})
}

/// A minimal streamable-HTTP MCP session (the Python SDK tests the real client).
pub struct McpSession {
    url: String,
    session: Option<String>,
}

impl McpSession {
    /// One JSON-RPC message in this session.
    pub fn rpc(&self, body: Value) -> reqwest::blocking::Response {
        let mut req = client().post(&self.url).header("accept", "application/json, text/event-stream").header("mcp-protocol-version", "2025-06-18").json(&body);
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        req.send().unwrap()
    }

    /// Initializes a session at `url`; returns it and the `initialize` reply.
    pub fn open(url: String) -> (McpSession, Value) {
        let mut s = McpSession { url, session: None };
        let r = s.rpc(initialize());
        assert_eq!(r.status(), StatusCode::OK);
        s.session = r.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_string());
        let init = sse_result(r);
        assert!(s.rpc(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).status().is_success());
        (s, init)
    }

    /// A request and its response.
    pub fn call(&self, id: u64, method: &str, params: Value) -> Value {
        sse_result(self.rpc(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})))
    }
}

/// The JSON-RPC response carried by an SSE (or plain JSON) body.
pub fn sse_result(r: reqwest::blocking::Response) -> Value {
    let text = r.text().unwrap();
    if let Ok(v) = serde_json::from_str::<Value>(&text) {
        return v;
    }
    text.lines().filter_map(|l| l.strip_prefix("data:")).filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok()).find(|v| v.get("id").is_some()).unwrap_or_else(|| panic!("no JSON-RPC response in {text:?}"))
}

/// `mentisdb --mode stdio` on `dir`: a child speaking MCP on its stdio.
pub struct StdioServer {
    pub child: Child,
    out: BufReader<std::process::ChildStdout>,
}

impl StdioServer {
    /// `mentisdb --mode stdio` on `dir` with `extra_env` (e.g. a storage URL), initialized.
    pub fn start(dir: &Path, extra_env: &[(&str, &str)]) -> StdioServer {
        StdioServer::start_with_args(dir, extra_env, &[])
    }

    /// [`StdioServer::start`] with more arguments (e.g. `--tools core`).
    pub fn start_with_args(dir: &Path, extra_env: &[(&str, &str)], args: &[&str]) -> StdioServer {
        let args: Vec<&str> = ["--mode", "stdio"].iter().chain(args).copied().collect();
        let mut cmd = command_of(env!("CARGO_BIN_EXE_mentisdb"), dir, extra_env, &args);
        let mut child = cmd.stdin(Stdio::piped()).stderr(Stdio::null()).spawn().expect("spawn mentisdb --mode stdio");
        let out = BufReader::new(child.stdout.take().unwrap());
        let mut s = StdioServer { child, out };
        let init = s.request(1, "initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "stdio-test", "version": "1"}}));
        assert_eq!(init["result"]["serverInfo"]["name"], "mentisdb", "{init}");
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    pub fn send(&mut self, message: &Value) {
        use std::io::Write;
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and returns the response with its id.
    pub fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(self.out.read_line(&mut line).unwrap() > 0, "stdio server closed its output before answering {method}");
            let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON-RPC on stdout: {line:?}: {e}"));
            if v["id"] == json!(id) {
                return v;
            }
        }
    }

    pub fn tool(&mut self, id: u64, name: &str, arguments: Value) -> Value {
        let r = self.request(id, "tools/call", json!({"name": name, "arguments": arguments}));
        assert_eq!(r["result"]["isError"], false, "{name}: {r}");
        r["result"]["structuredContent"].clone()
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
