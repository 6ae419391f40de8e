//! A minimal MCP client over streamable HTTP: JSON-RPC requests POSTed to
//! the MCP endpoint, responses read from a JSON or SSE body.

use crate::daemon::client;
use reqwest::blocking::Client;
use serde_json::{json, Value};

/// One initialized MCP session.
pub struct McpSession {
    client: Client,
    url: String,
    session: Option<String>,
}

/// A raw HTTP answer of the MCP endpoint.
pub struct RawReply {
    pub status: u16,
    /// The JSON-RPC message found in the body, if any.
    pub message: Option<Value>,
    pub text: String,
}

fn message_in(text: &str) -> Option<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return Some(v);
    }
    text.lines().filter_map(|l| l.strip_prefix("data:")).filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok()).find(|v| v.get("id").is_some())
}

impl McpSession {
    /// `initialize` + `notifications/initialized` against `url` (e.g. `http://127.0.0.1:port/mcp`).
    pub fn open(url: String) -> McpSession {
        let mut s = McpSession { client: client(), url, session: None };
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "reliability", "version": "1"}}});
        let r = s.request().body(init.to_string()).send().expect("MCP initialize");
        assert_eq!(r.status().as_u16(), 200, "initialize");
        s.session = r.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_string());
        let text = r.text().unwrap();
        let m = message_in(&text).expect("initialize result");
        assert_eq!(m["result"]["serverInfo"]["name"], "mentisdb", "{m}");
        let r = s.request().body(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string()).send().unwrap();
        assert!(r.status().is_success());
        s
    }

    fn request(&self) -> reqwest::blocking::RequestBuilder {
        let mut req = self
            .client
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-06-18");
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        req
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

    /// `tools/call` with `arguments` (any JSON value); returns the JSON-RPC response.
    pub fn call_tool(&self, id: u64, name: &str, arguments: Value) -> RawReply {
        self.raw(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}}).to_string())
    }
}
