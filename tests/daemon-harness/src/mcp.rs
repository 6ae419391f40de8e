//! MCP clients of a running daemon: streamable HTTP ([`McpSession`]) and
//! stdio ([`StdioServer`]). The real SDK clients (Python `mcp`) are tested
//! elsewhere; these speak just enough JSON-RPC to test the server.

use crate::client;
use crate::daemon::command;
use reqwest::blocking::{Client, RequestBuilder, Response};
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdout, Stdio};

/// The protocol version these clients speak.
const PROTOCOL_VERSION: &str = "2025-06-18";

/// The MCP `initialize` request of these tests.
pub fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": {"name": "daemon-test", "version": "1"}}})
}

/// The JSON-RPC message in a JSON or SSE body: the one with an `id`.
fn message_in(text: &str) -> Option<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return Some(v);
    }
    text.lines().filter_map(|l| l.strip_prefix("data:")).filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok()).find(|v| v.get("id").is_some())
}

/// The JSON-RPC response carried by an SSE (or plain JSON) body.
pub fn sse_result(r: Response) -> Value {
    let text = r.text().unwrap();
    message_in(&text).unwrap_or_else(|| panic!("no JSON-RPC response in {text:?}"))
}

/// One initialized streamable-HTTP MCP session.
pub struct McpSession {
    client: Client,
    url: String,
    session: Option<String>,
}

/// A raw HTTP answer of the MCP endpoint.
pub struct RawReply {
    /// The HTTP status.
    pub status: u16,
    /// The JSON-RPC message found in the body, if any.
    pub message: Option<Value>,
    /// The body.
    pub text: String,
}

impl McpSession {
    /// `initialize` + `notifications/initialized` against `url` (e.g.
    /// `http://127.0.0.1:port/mcp`); the session and the `initialize` reply.
    pub fn open(url: String) -> (McpSession, Value) {
        let mut s = McpSession { client: client(), url, session: None };
        let r = s.rpc(initialize());
        assert_eq!(r.status(), StatusCode::OK, "initialize");
        s.session = r.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_string());
        let init = sse_result(r);
        assert!(s.rpc(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).status().is_success());
        (s, init)
    }

    fn request(&self) -> RequestBuilder {
        let mut req = self
            .client
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", PROTOCOL_VERSION);
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        req
    }

    /// One JSON-RPC message in this session.
    pub fn rpc(&self, body: Value) -> Response {
        self.request().body(body.to_string()).send().expect("MCP request")
    }

    /// A request and its response.
    pub fn call(&self, id: u64, method: &str, params: Value) -> Value {
        sse_result(self.rpc(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})))
    }

    /// POSTs raw bytes as a JSON-RPC message of this session.
    pub fn raw(&self, body: impl Into<Vec<u8>>) -> RawReply {
        self.try_raw(body).expect("MCP request")
    }

    /// [`McpSession::raw`], with a transport failure as an error.
    pub fn try_raw(&self, body: impl Into<Vec<u8>>) -> Result<RawReply, reqwest::Error> {
        let r = self.request().body(body.into()).send()?;
        let status = r.status().as_u16();
        let text = r.text().unwrap_or_default();
        Ok(RawReply { status, message: message_in(&text), text })
    }

    /// `tools/call` with `arguments` (any JSON value); the raw answer.
    pub fn call_tool(&self, id: u64, name: &str, arguments: Value) -> RawReply {
        self.raw(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}}).to_string())
    }
}

/// `mentisdb --mode stdio` on a data directory: a child speaking MCP on its stdio.
pub struct StdioServer {
    /// The process.
    pub child: Child,
    out: BufReader<ChildStdout>,
}

impl StdioServer {
    /// `mentisdb --mode stdio` on `dir` with `extra_env` (e.g. a storage URL), initialized.
    pub fn start(dir: &Path, extra_env: &[(&str, &str)]) -> StdioServer {
        StdioServer::start_with_args(dir, extra_env, &[])
    }

    /// [`StdioServer::start`] with more arguments (e.g. `--tools core`).
    pub fn start_with_args(dir: &Path, extra_env: &[(&str, &str)], args: &[&str]) -> StdioServer {
        let args: Vec<&str> = ["--mode", "stdio"].iter().chain(args).copied().collect();
        let mut cmd = command("mentisdb", dir, extra_env, &args);
        let mut child = cmd.stdin(Stdio::piped()).stderr(Stdio::null()).spawn().expect("spawn mentisdb --mode stdio");
        let out = BufReader::new(child.stdout.take().unwrap());
        let mut s = StdioServer { child, out };
        let init = s.request(1, "initialize", json!({"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": {"name": "stdio-test", "version": "1"}}));
        assert_eq!(init["result"]["serverInfo"]["name"], "mentisdb", "{init}");
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    /// Writes one JSON-RPC message.
    pub fn send(&mut self, message: &Value) {
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

    /// `tools/call` that must succeed; its structured content.
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
