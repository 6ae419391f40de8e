//! Tool profiles: what an agent is offered (and pays for in context) over
//! MCP (HTTP and stdio) and 0.10's `/tools/list`: every tool by default,
//! `MENTISDB_TOOLS=core` daemon-wide, `?tools=` per client, `--tools` on
//! `mentisdb --mode stdio`. Every tool still answers calls.

use crate::common;

use common::{client, command, initialize, Daemon, McpSession, StdioServer};
use mentisdb_core::dispatch::CORE_TOOLS;
use mentisdb_core::tool_specs;
use reqwest::StatusCode;
use serde_json::{json, Value};

fn listed(reply: &Value) -> Vec<String> {
    reply["result"]["tools"].as_array().unwrap_or_else(|| panic!("{reply}")).iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
}

#[test]
fn mcp_lists_the_configured_profile_and_a_client_may_ask_for_another() {
    let dir = tempfile::tempdir().unwrap();
    let all = Daemon::start(&dir.path().join("a"), &[], &[]);
    let (s, _) = McpSession::open(format!("{}/mcp", all.mcp));
    assert_eq!(listed(&s.call(2, "tools/list", json!({}))).len(), tool_specs().len(), "every tool by default");
    let (s, _) = McpSession::open(format!("{}/mcp?tools=core", all.mcp));
    let core = listed(&s.call(2, "tools/list", json!({})));
    let expected: Vec<String> = tool_specs().iter().map(|s| s.name).filter(|n| CORE_TOOLS.contains(n)).map(String::from).collect();
    assert_eq!(core, expected);
    assert_eq!(core.len(), CORE_TOOLS.len());
    let (s, _) = McpSession::open(format!("{}/mcp?tools=thoughtchain_append,mentisdb_head", all.mcp));
    assert_eq!(listed(&s.call(2, "tools/list", json!({}))), ["mentisdb_append", "mentisdb_head"]);
    let (s, _) = McpSession::open(format!("{}/mcp?tools=mentisdb_nope", all.mcp));
    let bad = s.call(2, "tools/list", json!({}));
    assert!(bad["error"]["message"].as_str().unwrap().contains("unknown tool 'mentisdb_nope'"), "{bad}");
    drop(all);

    let core_daemon = Daemon::start(&dir.path().join("c"), &[("MENTISDB_TOOLS", "core")], &[]);
    let (s, _) = McpSession::open(format!("{}/mcp", core_daemon.mcp));
    assert_eq!(listed(&s.call(2, "tools/list", json!({}))).len(), CORE_TOOLS.len());
    // Listed or not, every tool answers.
    let merged = s.call(3, "tools/call", json!({"name": "mentisdb_upsert_agent", "arguments": {"chain_key": "c", "agent_id": "ada"}}));
    assert_eq!(merged["result"]["isError"], false, "{merged}");
    let legacy: Value = client().post(format!("{}/tools/list", core_daemon.mcp)).json(&json!({})).send().unwrap().json().unwrap();
    assert_eq!(legacy["tools"].as_array().unwrap().len(), CORE_TOOLS.len(), "0.10's /tools/list too");
    let legacy: Value = client().post(format!("{}/tools/list?tools=all", core_daemon.mcp)).json(&json!({})).send().unwrap().json().unwrap();
    assert_eq!(legacy["tools"].as_array().unwrap().len(), tool_specs().len());
    let r = client().post(format!("{}/mcp", core_daemon.mcp)).header("accept", "application/json, text/event-stream").json(&initialize()).send().unwrap();
    assert_eq!(r.status(), StatusCode::OK);
}

#[test]
fn stdio_agents_choose_their_own_profile_and_a_bad_one_stops_the_daemon_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let _daemon = Daemon::start(&data, &[], &[]);
    let mut stdio = StdioServer::start_with_args(&data, &[], &["--tools", "core"]);
    let r = stdio.request(2, "tools/list", json!({}));
    assert_eq!(listed(&r).len(), CORE_TOOLS.len(), "{r}");
    let out = command(&dir.path().join("other"), &[("MENTISDB_TOOLS", "mentisdb_append,mentisdb_nope")], &[]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("MENTISDB_TOOLS") && err.contains("mentisdb_nope") && err.trim().lines().count() == 1, "{err}");
}

/// What every listed tool costs an agent's context: the `tools/list`
/// result as compact JSON. The budget is MentisDB 0.10.10's listing (44
/// tools in 43,070 bytes, measured for issue 42); ours lists 57 in no more.
/// A new tool or a longer description must fit in it (docs/agents.md has
/// the figures; `listing_schema.rs` and `listed_tools` say what is left out).
#[test]
fn every_tool_costs_no_more_context_than_the_reference_listing() {
    const REFERENCE_0_10_10_BYTES: usize = 43_070;
    let dir = tempfile::tempdir().unwrap();
    let daemon = Daemon::start(dir.path(), &[], &[]);
    let size = |profile: &str| {
        let (s, _) = McpSession::open(format!("{}/mcp?tools={profile}", daemon.mcp));
        let reply = s.call(2, "tools/list", json!({}));
        (listed(&reply).len(), serde_json::to_string(&reply["result"]).unwrap().len())
    };
    let (all, all_bytes) = size("all");
    assert_eq!(all, tool_specs().len());
    assert!(all_bytes <= REFERENCE_0_10_10_BYTES, "tools/list with every tool is {all_bytes} bytes, over the {REFERENCE_0_10_10_BYTES}-byte budget");
    let (core, core_bytes) = size("core");
    assert_eq!(core, CORE_TOOLS.len());
    assert!(core_bytes * 3 < all_bytes, "the core profile ({core_bytes} B) is a small part of the whole ({all_bytes} B)");
    eprintln!("tools/list: all {all} tools {all_bytes} B, core {core} tools {core_bytes} B");
}
