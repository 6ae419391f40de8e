//! The ways into the real `mentisdbd` that MentisDB 0.10 users reach for:
//! the CloudLLM endpoints `POST /tools/list` and `POST /tools/execute` (with
//! tokens), the `thoughtchain_*` tool aliases and the MCP resource
//! `mentisdb://skill/core`.

use crate::common;
use common::{client, command, Daemon, McpSession, StdioServer};
use mentisdb_core::dispatch::Access;
use mentisdb_native::tokens::add_token;
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};


/// `POST {base}{path}` with an optional bearer token: status and JSON body.
fn post(base: &str, path: &str, token: Option<&str>, body: Value) -> (StatusCode, Value) {
    let mut req = client().post(format!("{base}{path}")).json(&body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let r = req.send().unwrap();
    let status = r.status();
    (status, r.json().unwrap_or(Value::Null))
}

#[test]
fn cloudllm_tools_list_and_execute_on_the_mcp_port() {
    let root = tempfile::tempdir().unwrap();
    let d = Daemon::start(&root.path().join("data"), &[], &[]);

    let (status, list) = post(&d.mcp, "/tools/list", None, json!({}));
    assert_eq!(status, StatusCode::OK);
    let tools = list["tools"].as_array().expect("{tools: [...]}");
    assert_eq!(tools.len(), mentisdb_core::tool_specs().len());
    let append = tools.iter().find(|t| t["name"] == "mentisdb_append").expect("append listed");
    assert!(append["description"].as_str().is_some_and(|d| !d.is_empty()));
    assert!(append["protocol_metadata"].is_object());
    let content = append["parameters"].as_array().unwrap().iter().find(|p| p["name"] == "content").expect("content parameter");
    assert_eq!((content["type"].as_str(), content["required"].as_bool()), (Some("string"), Some(true)), "{content}");

    // An append through the legacy name, visible over REST and through execute.
    let body = json!({"tool": "thoughtchain_append", "parameters": {"chain_key": "legacy", "agent_id": "cloudllm", "thought_type": "Decision", "content": "ship it over tools/execute"}});
    let (status, v) = post(&d.mcp, "/tools/execute", None, body);
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["result"]["success"], true, "{v}");
    assert_eq!(v["result"]["error"], Value::Null);
    assert!(v["result"]["output"].to_string().contains("ship it over tools/execute"), "{v}");
    let (status, head) = post(&d.rest, "/v1/head", None, json!({"chain_key": "legacy"}));
    assert_eq!(status, StatusCode::OK);
    assert_eq!(head["latest_thought"]["content"], "ship it over tools/execute");
    let (_, v) = post(&d.mcp, "/tools/execute", None, json!({"tool": "mentisdb_head", "parameters": {"chain_key": "legacy"}}));
    assert_eq!(v["result"]["output"]["thought_count"], 1, "{v}");
    // No parameters at all is an empty argument object.
    let (status, v) = post(&d.mcp, "/tools/execute", None, json!({"tool": "mentisdb_list_chains"}));
    assert_eq!(status, StatusCode::OK, "{v}");

    // Failures: {"result": {"success": false, "error": "..."}} with a status.
    for (body, want, needle) in [
        (json!({"tool": "mentisdb_append", "parameters": {"chain_key": "legacy", "thought_type": "Insigth", "content": "x"}}), StatusCode::BAD_REQUEST, "thought_type"),
        (json!({"tool": "mentisdb_nope", "parameters": {}}), StatusCode::NOT_FOUND, "mentisdb_nope"),
        (json!({"parameters": {}}), StatusCode::BAD_REQUEST, "tool"),
        (json!({"tool": "mentisdb_head", "parameters": [1]}), StatusCode::BAD_REQUEST, "parameters"),
    ] {
        let (status, v) = post(&d.mcp, "/tools/execute", None, body.clone());
        assert_eq!(status, want, "{body}: {v}");
        assert_eq!(v["result"]["success"], false, "{v}");
        assert_eq!(v["result"]["output"], Value::Null, "{v}");
        assert!(v["result"]["error"].as_str().unwrap().contains(needle), "{body}: {v}");
    }
    let r = client().post(format!("{}/tools/execute", d.mcp)).header("content-type", "application/json").body("{oops").send().unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert!(r.json::<Value>().unwrap()["result"]["error"].as_str().unwrap().contains("malformed JSON"));
    let health: Value = client().get(format!("{}/health", d.mcp)).send().unwrap().json().unwrap();
    assert_eq!(health["status"], "ok");
}

#[test]
fn cloudllm_endpoints_check_tokens_like_every_other_call() {
    let root = tempfile::tempdir().unwrap();
    let tokens = root.path().join("tokens.toml");
    let reader = add_token(&tokens, "reader", Access::Read, &[]).unwrap();
    let writer = add_token(&tokens, "writer", Access::Write, &["mine".to_string()]).unwrap();
    let d = Daemon::start(&root.path().join("data"), &[("MENTISDB_TOKENS_FILE", tokens.to_str().unwrap())], &[]);
    let append = |chain: &str| json!({"tool": "thoughtchain_append", "parameters": {"chain_key": chain, "agent_id": "a", "thought_type": "Finding", "content": "x"}});

    let (status, v) = post(&d.mcp, "/tools/list", None, json!({}));
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{v}");
    assert!(v["error"].as_str().unwrap().contains("token"), "{v}");
    assert_eq!(post(&d.mcp, "/tools/execute", None, append("mine")).0, StatusCode::UNAUTHORIZED);
    assert_eq!(post(&d.mcp, "/tools/execute", Some("wrong"), append("mine")).0, StatusCode::UNAUTHORIZED);
    assert_eq!(post(&d.mcp, "/tools/list", Some(&reader), json!({})).0, StatusCode::OK);

    let (status, v) = post(&d.mcp, "/tools/execute", Some(&reader), append("mine"));
    assert_eq!(status, StatusCode::FORBIDDEN, "a read token cannot append under the old name either: {v}");
    assert!(v["result"]["error"].as_str().unwrap().starts_with("403 forbidden:"), "{v}");
    let (status, v) = post(&d.mcp, "/tools/execute", Some(&writer), append("theirs"));
    assert_eq!(status, StatusCode::FORBIDDEN, "a token for one chain cannot write another: {v}");
    let (status, v) = post(&d.mcp, "/tools/execute", Some(&writer), append("mine"));
    assert_eq!((status, &v["result"]["success"]), (StatusCode::OK, &json!(true)), "{v}");
    let (status, v) = post(&d.mcp, "/tools/execute", Some(&reader), json!({"tool": "mentisdb_head", "parameters": {"chain_key": "mine"}}));
    assert_eq!((status, &v["result"]["output"]["thought_count"]), (StatusCode::OK, &json!(1)), "{v}");
}

#[test]
fn mcp_serves_the_core_skill_resource_and_thoughtchain_aliases() {
    let root = tempfile::tempdir().unwrap();
    let d = Daemon::start(&root.path().join("data"), &[], &[]);
    let (s, init) = McpSession::open(format!("{}/mcp", d.mcp));
    assert!(init["result"]["capabilities"]["resources"].is_object(), "{init}");
    assert!(init["result"]["instructions"].as_str().unwrap().contains("mentisdb://skill/core"), "{init}");

    let list = s.call(2, "resources/list", json!({}));
    let resources = list["result"]["resources"].as_array().unwrap_or_else(|| panic!("{list}"));
    assert_eq!(resources.len(), 1, "{list}");
    assert_eq!(resources[0]["uri"], "mentisdb://skill/core");
    assert_eq!(resources[0]["mimeType"], "text/markdown");

    let read = s.call(3, "resources/read", json!({"uri": "mentisdb://skill/core"}));
    let contents = &read["result"]["contents"][0];
    assert_eq!(contents["uri"], "mentisdb://skill/core", "{read}");
    let (_, skill) = {
        let r = client().get(format!("{}/mentisdb_skill_md", d.rest)).send().unwrap();
        (r.status(), r.text().unwrap())
    };
    assert_eq!(contents["text"].as_str(), Some(skill.as_str()), "the resource is the skill REST and mentisdb_skill_md serve");
    let missing = s.call(4, "resources/read", json!({"uri": "mentisdb://skill/nope"}));
    assert!(missing["error"]["message"].as_str().unwrap().contains("mentisdb://skill/nope"), "{missing}");

    let appended = s.call(5, "tools/call", json!({"name": "thoughtchain_append", "arguments": {"chain_key": "old", "agent_id": "a", "thought_type": "Finding", "content": "old name, same tool"}}));
    assert_eq!(appended["result"]["isError"], false, "{appended}");
    let head = s.call(6, "tools/call", json!({"name": "thoughtchain_head", "arguments": {"chain_key": "old"}}));
    assert_eq!(head["result"]["structuredContent"]["thought_count"], 1, "{head}");
    let unknown = s.call(7, "tools/call", json!({"name": "thoughtchain_nope", "arguments": {}}));
    assert!(unknown["error"]["code"].is_i64(), "{unknown}");
}

#[test]
fn a_second_daemon_on_one_data_directory_is_refused_in_one_line() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("data");
    let first = Daemon::start(&dir, &[], &[]);
    let (status, _) = post(&first.rest, "/v1/thoughts", None, json!({"chain_key": "c", "thought_type": "Finding", "content": "first daemon's"}));
    assert_eq!(status, StatusCode::OK);
    let out = command(&dir, &[], &[]).output().unwrap();
    assert!(!out.status.success(), "a second daemon on the same directory must not serve");
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("in use")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains(&format!("pid {}", first.child.id())) && lines[0].contains("MENTISDB_DIR"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).is_empty(), "it never announced listening");
    // The first daemon is untouched, and once it is gone the directory is free.
    let (_, head) = post(&first.rest, "/v1/head", None, json!({"chain_key": "c"}));
    assert_eq!(head["thought_count"], 1, "{head}");
    drop(first);
    let second = Daemon::start(&dir, &[], &[]);
    let (_, head) = post(&second.rest, "/v1/head", None, json!({"chain_key": "c"}));
    assert_eq!(head["thought_count"], 1, "{head}");
}

/// The pid of the daemon holding `dir`, from its lock file.
fn daemon_pid(dir: &Path) -> Option<u32> {
    std::fs::read_to_string(dir.join("mentisdbd.lock")).ok()?.lines().find_map(|l| l.strip_prefix("pid=")).and_then(|p| p.trim().parse().ok())
}

/// Stops (SIGTERM) the daemon a stdio server started, by its pid.
struct StartedDaemon(Option<u32>);

impl Drop for StartedDaemon {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
    }
}

#[test]
fn two_stdio_servers_on_one_directory_share_its_daemon() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("data");
    let mut a = StdioServer::start(&dir, &[]);
    let started = StartedDaemon(daemon_pid(&dir));
    let pid = started.0.expect("the stdio server started a daemon that holds the directory");
    assert_ne!(pid, a.child.id(), "the daemon is its own process");
    let mut b = StdioServer::start(&dir, &[]);
    assert_eq!(daemon_pid(&dir), Some(pid), "the second stdio server uses the same daemon");

    a.tool(2, "mentisdb_append", json!({"chain_key": "shared", "agent_id": "a", "thought_type": "Finding", "content": "written by agent a"}));
    b.tool(2, "mentisdb_append", json!({"chain_key": "shared", "agent_id": "b", "thought_type": "Finding", "content": "written by agent b"}));
    for s in [&mut a, &mut b] {
        let found = s.tool(3, "mentisdb_search", json!({"chain_key": "shared"}));
        let contents: Vec<&str> = found["thoughts"].as_array().unwrap().iter().map(|t| t["content"].as_str().unwrap()).collect();
        assert_eq!(contents, vec!["written by agent a", "written by agent b"], "{found}");
    }
    let read = a.request(4, "resources/read", json!({"uri": "mentisdb://skill/core"}));
    assert!(read["result"]["contents"][0]["text"].as_str().is_some_and(|t| !t.is_empty()), "{read}");
    let unknown = b.request(5, "tools/call", json!({"name": "mentisdb_nope", "arguments": {}}));
    assert!(unknown["error"]["code"].is_i64(), "{unknown}");

    // An agent's stdio server going away leaves the daemon serving the other.
    drop(a);
    let head = b.tool(6, "mentisdb_head", json!({"chain_key": "shared"}));
    assert_eq!(head["thought_count"], 2, "{head}");
    // A plain daemon on the directory is refused: the shared one holds it.
    let out = command(&dir, &[], &[]).output().unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("in use"));
}

#[test]
fn both_programs_answer_help_and_refuse_bad_modes_in_one_line() {
    for exe in [env!("CARGO_BIN_EXE_mentisdb"), env!("CARGO_BIN_EXE_mentisdbd")] {
        let out = Command::new(exe).arg("--help").output().unwrap();
        assert!(out.status.success());
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(help.contains("--mode") && help.contains("stdio"), "{help}");
        for bad in [&["--mode", "carrier-pigeon"][..], &["--mode", "stdio", "--stdio"], &["cert", "--nope"], &["--rest-port", "http"]] {
            let out = Command::new(exe).args(bad).output().unwrap();
            assert!(!out.status.success(), "{bad:?}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(err.trim().lines().count(), 1, "{bad:?}: {err}");
            assert!(err.contains(bad[bad.len() - 1].trim_start_matches("--")), "{bad:?}: {err}");
        }
        for command in ["cert", "token"] {
            let out = Command::new(exe).args([command, "--help"]).output().unwrap();
            assert!(out.status.success() && !out.stdout.is_empty(), "{command} --help");
        }
    }
    let help = Command::new(env!("CARGO_BIN_EXE_mentisdb")).arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("Usage: mentisdb "), "the program answers to its own name");
}

#[test]
fn configuration_is_read_from_dot_env_files_and_0_10_names() {
    let root = tempfile::tempdir().unwrap();
    let (cwd, dir) = (root.path().join("project"), root.path().join("data"));
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    // ./.env names the directory (so its own .env is found) and 0.10's adapter name;
    // <dir>/.env sets what ./.env did not, and never overrides it.
    std::fs::write(cwd.join(".env"), format!("MENTISDB_DIR={}\nMENTISDB_STORAGE_ADAPTER=jsonl\n", dir.display())).unwrap();
    std::fs::write(dir.join(".env"), "MENTISDB_DEFAULT_CHAIN_KEY=from-dir-env\nMENTISDB_STORAGE_ADAPTER=binary\nMENTISDB_REST_PORT=1\n").unwrap();
    let mut cmd = command(&dir, &[], &[]);
    cmd.env_remove("MENTISDB_DIR").current_dir(&cwd);
    let mut child = cmd.spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let rest = line.split_whitespace().find_map(|w| w.strip_prefix("rest=")).map(|a| format!("http://{a}")).unwrap_or_else(|| panic!("{line:?}"));
    assert!(line.contains(&format!("dir={}", dir.canonicalize().unwrap().display())), "{line}");
    let (status, _) = post(&rest, "/v1/thoughts", None, json!({"thought_type": "Finding", "content": "no chain_key given"}));
    assert_eq!(status, StatusCode::OK);
    let chains: Value = client().get(format!("{rest}/v1/chains")).send().unwrap().json().unwrap();
    assert_eq!(chains["default_chain_key"], "from-dir-env", "{chains}");
    assert_eq!(chains["chains"][0]["chain_key"], "from-dir-env");
    assert_eq!(chains["chains"][0]["storage_adapter"], "jsonl", "./.env wins over <dir>/.env: {chains}");
    let _ = child.kill();
    let _ = child.wait();

    // The real environment wins over both files; our own names keep working.
    let mut cmd = command(&dir, &[("MENTISDB_DEFAULT_KEY", "ours")], &[]);
    cmd.env_remove("MENTISDB_DIR").current_dir(&cwd);
    std::fs::write(dir.join(".env"), "MENTISDB_REST_PORT=1\n").unwrap();
    let mut child = cmd.spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let rest = line.split_whitespace().find_map(|w| w.strip_prefix("rest=")).map(|a| format!("http://{a}")).unwrap_or_else(|| panic!("{line:?}"));
    let chains: Value = client().get(format!("{rest}/v1/chains")).send().unwrap().json().unwrap();
    assert_eq!(chains["default_chain_key"], "ours", "{chains}");
    let _ = child.kill();
    let _ = child.wait();

    // A start from `cwd` that fails: its one line of stderr.
    let start_refused = || {
        let out = command(&dir, &[], &[]).current_dir(&cwd).output().unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        err
    };

    // A .env other users may write (a shared directory's) is refused in one
    // line: it could open the daemon to web pages or plant a token.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(cwd.join(".env"), "MENTISDB_ALLOWED_ORIGINS=https://evil.example\n").unwrap();
        std::fs::set_permissions(cwd.join(".env"), std::fs::Permissions::from_mode(0o666)).unwrap();
        let err = start_refused();
        assert!(err.contains("refusing") && err.contains(".env") && err.contains("mode 666"), "{err}");
        std::fs::set_permissions(cwd.join(".env"), std::fs::Permissions::from_mode(0o600)).unwrap();
    }

    // A .env that cannot be parsed is refused in one line naming it.
    std::fs::write(cwd.join(".env"), "MENTISDB_DIR='unterminated\n").unwrap();
    let err = start_refused();
    assert!(err.contains(".env"), "{err}");
}

#[test]
fn mode_both_serves_http_and_stdio_from_one_process() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("data");
    let mut cmd = command(&dir, &[], &["--mode", "both"]);
    cmd.stdin(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    // stdout carries MCP, so the listening line goes to stderr.
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let rest = loop {
        let mut line = String::new();
        assert!(err.read_line(&mut line).unwrap() > 0, "no listening line on stderr");
        if let Some(a) = line.split_whitespace().find_map(|w| w.strip_prefix("rest=")) {
            break format!("http://{a}");
        }
    };
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut stdin = child.stdin.take().unwrap();
    let mut rpc = |message: Value| -> Option<Value> {
        use std::io::Write;
        writeln!(stdin, "{message}").unwrap();
        message.get("id")?;
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}")))
    };
    let init = rpc(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "both", "version": "1"}}})).unwrap();
    assert_eq!(init["result"]["serverInfo"]["name"], "mentisdb", "{init}");
    rpc(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let r = rpc(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "mentisdb_append", "arguments": {"chain_key": "b", "agent_id": "a", "thought_type": "Finding", "content": "over stdio"}}})).unwrap();
    assert_eq!(r["result"]["isError"], false, "{r}");
    let (_, head) = post(&rest, "/v1/head", None, json!({"chain_key": "b"}));
    assert_eq!(head["latest_thought"]["content"], "over stdio", "{head}");
    let _ = child.kill();
    let _ = child.wait();
}
