//! REST calls against a running [`Daemon`].

use crate::Daemon;
use reqwest::blocking::Client;
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::time::Duration;

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
