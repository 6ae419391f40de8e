//! Scoped tokens end to end: every tool × {no token, read, write, admin,
//! another chain's token} over REST and MCP (HTTP), the chain list a token
//! sees, revocation without a restart, and `mentisdbd token add|list|revoke`.

use mentisdb_core::dispatch::{Access, Reach};
use mentisdb_core::tool_specs;
use mentisdb_native::http::routes::ROUTES;
use mentisdb_native::tokens::{add_token, revoke_token};
use mentisdb_native::{start, Config, RunningDaemon};
use reqwest::blocking::{Client, RequestBuilder};
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

/// The daemon in this process, on its own runtime.
struct Served {
    daemon: RunningDaemon,
    _rt: tokio::runtime::Runtime,
}

fn serve(config: Config) -> Served {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let daemon = rt.block_on(start(&config)).expect("daemon starts");
    Served { daemon, _rt: rt }
}

fn with_token(req: RequestBuilder, token: Option<&str>) -> RequestBuilder {
    match token {
        Some(t) => req.bearer_auth(t),
        None => req,
    }
}

/// The arguments every call names its chain with: `chain_key`, or for a
/// tool over several chains `chain_keys` (federated search) or the source,
/// target and branch keys (merge, branch).
fn chain_args(tool: &str) -> Value {
    match tool_specs().iter().find(|s| s.name == tool).map(|s| s.reach) {
        Some(Reach::Chains) => json!({"chain_keys": [CHAIN], "source_chain_key": CHAIN, "target_chain_key": CHAIN, "branch_chain_key": CHAIN}),
        _ => json!({"chain_key": CHAIN}),
    }
}

fn rest_call(client: &Client, base: &str, tool: &str, token: Option<&str>) -> (StatusCode, Value) {
    let route = ROUTES.iter().find(|r| r.tool == tool).expect("every tool has a route");
    let url = format!("{base}{}", route.path.replace("{chain_key}", CHAIN));
    let req = match route.method {
        "GET" => client.get(format!("{url}?chain_key={CHAIN}")),
        "DELETE" => client.delete(url.replace("{id}", "no-such-id")),
        _ if route.reply == mentisdb_native::http::routes::Reply::FromChainBytes => client.post(url).header("content-type", "application/octet-stream").body("not a chain object"),
        _ => client.post(url).json(&chain_args(tool)),
    };
    let r = with_token(req, token).send().unwrap();
    let status = r.status();
    let text = r.text().unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

/// A streamable-HTTP MCP session with one token.
struct Mcp<'a> {
    client: &'a Client,
    url: String,
    token: Option<&'a str>,
    session: Option<String>,
}

impl<'a> Mcp<'a> {
    fn post(&self, body: Value) -> reqwest::blocking::Response {
        let mut req = self.client.post(&self.url).header("accept", "application/json, text/event-stream").header("mcp-protocol-version", "2025-06-18").json(&body);
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        with_token(req, self.token).send().unwrap()
    }

    /// Opens a session, or returns the HTTP status that refused it.
    fn open(client: &'a Client, url: String, token: Option<&'a str>) -> Result<Mcp<'a>, StatusCode> {
        let mut s = Mcp { client, url, token, session: None };
        let r = s.post(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "tokens-test", "version": "1"}}}));
        if r.status() != StatusCode::OK {
            return Err(r.status());
        }
        s.session = r.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_string());
        let _ = r.text();
        assert!(s.post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).status().is_success());
        Ok(s)
    }

    fn call(&self, tool: &str) -> Value {
        let r = self.post(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": chain_args(tool)}}));
        assert_eq!(r.status(), StatusCode::OK, "{tool}");
        let text = r.text().unwrap();
        text.lines().filter_map(|l| l.strip_prefix("data:")).filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok()).find(|v| v.get("id").is_some()).unwrap_or_else(|| panic!("no response in {text:?}"))
    }
}

const CHAIN: &str = "proj-a";

/// Polls (the daemon checks its token file every second) until `token`
/// gets `status` on `mentisdb_head`, or fails after a deadline.
fn wait_for(client: &Client, rest: &str, token: &str, status: StatusCode, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while rest_call(client, rest, "mentisdb_head", Some(token)).0 != status {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Who calls: a token's scope and chain patterns (`None`: no token).
struct Who {
    label: String,
    token: Option<String>,
    grant: Option<(Access, &'static str)>,
}

/// The rule, cell by cell, from a tool's access class and reach (docs/security.md's
/// access table, which core checks against the tool tables): `None` = 401,
/// `Some(false)` = 403, `Some(true)` = allowed. A chain tool needs its class
/// on the chain it names ([`CHAIN`]); daemon-wide reads need any token;
/// daemon-wide changes (skill lifecycle, skill deletion) need admin on `*`.
fn expected(who: &Who, access: Access, reach: Reach) -> Option<bool> {
    let (scope, pattern) = who.grant?;
    let covers_chain = pattern == "*" || pattern == CHAIN || CHAIN.starts_with(pattern.trim_end_matches('*')) && pattern.ends_with('*');
    let all = pattern == "*";
    Some(match reach {
        Reach::Chain | Reach::Chains => covers_chain && scope.covers(access),
        Reach::DaemonWide if access == Access::Read => true,
        Reach::ChainAndSkills if access <= Access::Write => covers_chain && scope.covers(access),
        Reach::DaemonWide | Reach::ChainAndSkills => all && scope == Access::Admin,
    })
}

/// Every scope × {every chain, the one chain, a prefix covering it}, one
/// token of another chain, and no token.
fn callers(tokens_file: &Path) -> Vec<Who> {
    let mut who = vec![Who { label: "no token".into(), token: None, grant: None }];
    for scope in [Access::Read, Access::Write, Access::Admin] {
        for pattern in ["*", CHAIN, "proj-*"] {
            let name = format!("{scope}-{}", pattern.replace('*', "all"));
            let token = add_token(tokens_file, &name, scope, &[pattern.to_string()]).unwrap();
            who.push(Who { label: format!("{scope} on {pattern}"), token: Some(token), grant: Some((scope, pattern)) });
        }
    }
    let other = add_token(tokens_file, "other", Access::Admin, &["other-*".to_string()]).unwrap();
    who.push(Who { label: "admin on other-*".into(), token: Some(other), grant: Some((Access::Admin, "other-*")) });
    who
}

fn daemon_with_tokens() -> (tempfile::TempDir, std::path::PathBuf, Served) {
    let root = tempfile::tempdir().unwrap();
    let tokens_file = root.path().join("tokens.toml");
    std::fs::write(&tokens_file, "").unwrap();
    let mut config = Config::for_dir(root.path().join("data"));
    config.tokens_file = Some(tokens_file.clone());
    let served = serve(config);
    (root, tokens_file, served)
}

#[test]
fn every_tool_answers_each_token_as_its_class_says_over_rest_and_mcp() {
    let (_root, tokens_file, served) = daemon_with_tokens();
    let who = callers(&tokens_file);
    for chain in ["other-1", CHAIN] {
        served.daemon.db.call("mentisdb_append", json!({"chain_key": chain, "agent_id": "a", "thought_type": "Finding", "content": "x"})).unwrap();
    }
    let client = Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
    let rest = format!("http://{}", served.daemon.rest_addr);
    let mcp_url = format!("http://{}/mcp", served.daemon.mcp_addr);
    let other = who.last().unwrap().token.clone().unwrap();
    let root = who.iter().find(|w| w.grant == Some((Access::Admin, "*"))).unwrap().token.clone().unwrap();
    wait_for(&client, &rest, &other, StatusCode::FORBIDDEN, "the token file was never loaded");
    let mut checked = 0;
    for w in &who {
        let mcp = Mcp::open(&client, mcp_url.clone(), w.token.as_deref());
        for spec in tool_specs() {
            let expected = expected(w, spec.access, spec.reach);
            let case = format!("{} by {}", spec.name, w.label);
            let (status, body) = rest_call(&client, &rest, spec.name, w.token.as_deref());
            match expected {
                None => assert_eq!(status, StatusCode::UNAUTHORIZED, "REST {case}: {body}"),
                Some(false) => {
                    assert_eq!(status, StatusCode::FORBIDDEN, "REST {case}: {body}");
                    let msg = body["error"].as_str().unwrap();
                    assert!(msg.contains(&format!("lacks scope '{}'", spec.access)) && msg.contains(spec.name), "REST {case}: {msg}");
                }
                Some(true) => assert!(status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN, "REST {case}: {status} {body}"),
            }
            match (&mcp, expected) {
                (Err(status), None) => assert_eq!(*status, StatusCode::UNAUTHORIZED, "MCP {case}"),
                (Ok(session), Some(allowed)) => {
                    let reply = session.call(spec.name);
                    let text = reply["result"]["content"][0]["text"].as_str().unwrap_or_default();
                    let refused = reply["result"]["isError"] == true && text.starts_with("403 forbidden: ");
                    assert_eq!(refused, !allowed, "MCP {case}: {reply}");
                }
                (other, _) => panic!("MCP {case}: session {:?}, expected {expected:?}", other.as_ref().err()),
            }
            checked += 1;
        }
    }
    assert_eq!(checked, who.len() * tool_specs().len());

    // The chain list shows a token only the chains it covers (the chain is
    // made again: the admin's mentisdb_delete_chain call above deleted it).
    served.daemon.db.call("mentisdb_append", json!({"chain_key": CHAIN, "agent_id": "a", "thought_type": "Finding", "content": "x"})).unwrap();
    let (_, body) = rest_call(&client, &rest, "mentisdb_list_chains", Some(&other));
    assert_eq!(body["chain_keys"], json!(["other-1"]), "{body}");
    let (_, body) = rest_call(&client, &rest, "mentisdb_list_chains", Some(&root));
    assert_eq!(body["chain_keys"], json!(["other-1", CHAIN]), "{body}");
}

#[test]
fn a_revoked_token_is_refused_without_a_restart() {
    let (_root, tokens_file, served) = daemon_with_tokens();
    // `mentisdb_head` of a chain that does not exist is 404: the chain is written first.
    served.daemon.db.call("mentisdb_append", json!({"chain_key": CHAIN, "agent_id": "a", "thought_type": "Finding", "content": "x"})).unwrap();
    let token = add_token(&tokens_file, "ci", Access::Write, &[]).unwrap();
    let client = Client::builder().timeout(Duration::from_secs(10)).build().unwrap();
    let rest = format!("http://{}", served.daemon.rest_addr);
    wait_for(&client, &rest, &token, StatusCode::OK, "a token added after startup was never accepted");
    revoke_token(&tokens_file, "ci").unwrap();
    wait_for(&client, &rest, &token, StatusCode::UNAUTHORIZED, "the revoked token still works");
    // A file that stops parsing keeps the tokens in force.
    let kept = add_token(&tokens_file, "kept", Access::Read, &[]).unwrap();
    wait_for(&client, &rest, &kept, StatusCode::OK, "the new token was never accepted");
    std::fs::write(&tokens_file, "[[token]]\nname = 3\n").unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(rest_call(&client, &rest, "mentisdb_head", Some(&kept)).0, StatusCode::OK);
}

fn cli(tokens_file: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_mentisdbd")).env("MENTISDB_TOKENS_FILE", tokens_file).env_remove("MENTISDB_API_TOKEN").args(args).output().unwrap()
}

#[test]
fn the_token_command_adds_lists_and_revokes() {
    let root = tempfile::tempdir().unwrap();
    let file = root.path().join("t.toml");
    let out = cli(&file, &["token", "add", "ci-bot", "--scope", "write", "--chains", "ci-*,shared"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let token = stdout.trim_end();
    assert!(token.starts_with("mdb_") && stdout.lines().count() == 1, "the token alone on one line: {stdout:?}");
    assert!(!std::fs::read_to_string(&file).unwrap().contains(token));
    let dup = cli(&file, &["token", "add", "ci-bot", "--scope", "read"]);
    assert!(!dup.status.success() && String::from_utf8_lossy(&dup.stderr).trim().lines().count() == 1);
    let list = String::from_utf8(cli(&file, &["token", "list"]).stdout).unwrap();
    assert_eq!(list, "ci-bot\twrite\tci-*,shared\n");
    assert!(cli(&file, &["token", "revoke", "ci-bot"]).status.success());
    let gone = cli(&file, &["token", "revoke", "ci-bot"]);
    assert!(!gone.status.success() && String::from_utf8_lossy(&gone.stderr).contains("no token named 'ci-bot'"));
    let bad = cli(&file, &["token", "add", "x", "--scope", "root"]);
    assert!(!bad.status.success());
    // Without MENTISDB_TOKENS_FILE, the data directory's tokens.toml.
    let data = file.parent().unwrap().join("data");
    let default = |args: &[&str]| std::process::Command::new(env!("CARGO_BIN_EXE_mentisdbd")).env_remove("MENTISDB_TOKENS_FILE").env("MENTISDB_DIR", &data).args(args).output().unwrap();
    assert!(default(&["token", "add", "d", "--scope", "read"]).status.success());
    assert!(data.join("tokens.toml").is_file());
    assert_eq!(String::from_utf8(default(&["token", "list"]).stdout).unwrap(), "d\tread\t*\n");
}

#[test]
fn a_federated_search_needs_read_on_every_chain_it_names() {
    let (_root, tokens_file, served) = daemon_with_tokens();
    for chain in ["proj-a", "proj-b", "secret-1"] {
        served.daemon.db.call("mentisdb_append", json!({"chain_key": chain, "agent_id": "a", "thought_type": "Finding", "content": format!("quarterly numbers of {chain}")})).unwrap();
    }
    let reader = add_token(&tokens_file, "proj-reader", Access::Read, &["proj-*".to_string()]).unwrap();
    let client = Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
    let rest = format!("http://{}", served.daemon.rest_addr);
    wait_for(&client, &rest, &reader, StatusCode::OK, "the token file was never loaded");
    let search = |chains: Value| {
        let r = client.post(format!("{rest}/v1/federated-search")).bearer_auth(&reader).json(&json!({"chain_keys": chains, "text": "quarterly numbers"})).send().unwrap();
        (r.status(), r.json::<Value>().unwrap())
    };
    let (status, body) = search(json!(["proj-a", "proj-b"]));
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["results"].as_array().unwrap().len(), 2);
    // One chain the token does not cover refuses the whole call; nothing leaks from it.
    let (status, body) = search(json!(["proj-a", "secret-1"]));
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let msg = body["error"].as_str().unwrap();
    assert!(msg.contains("chain 'secret-1'") && !msg.contains("quarterly"), "{msg}");
}

#[test]
fn a_flush_needs_admin_on_every_chain() {
    let (_root, tokens_file, served) = daemon_with_tokens();
    served.daemon.db.call("mentisdb_append", json!({"chain_key": CHAIN, "agent_id": "a", "thought_type": "Finding", "content": "x"})).unwrap();
    let chain_admin = add_token(&tokens_file, "chain-admin", Access::Admin, &[CHAIN.to_string()]).unwrap();
    let root = add_token(&tokens_file, "root", Access::Admin, &[]).unwrap();
    let client = Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
    let rest = format!("http://{}", served.daemon.rest_addr);
    wait_for(&client, &rest, &root, StatusCode::OK, "the token file was never loaded");
    let flush = |token: &str| {
        let r = client.post(format!("{rest}/v1/admin/flush")).bearer_auth(token).send().unwrap();
        (r.status(), r.json::<Value>().unwrap())
    };
    let (status, body) = flush(&chain_admin);
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(flush(&root), (StatusCode::OK, json!({"status": "flushed", "chains": 1})));
}

#[test]
fn a_branch_searched_with_a_token_reads_only_the_ancestor_chains_the_token_covers() {
    let (_root, tokens_file, served) = daemon_with_tokens();
    let db = &served.daemon.db;
    // The chain `wait_for` reads, so a loaded token gets 200.
    db.call("mentisdb_append", json!({"chain_key": CHAIN, "agent_id": "a", "thought_type": "Finding", "content": "x"})).unwrap();
    let at = db.call("mentisdb_append", json!({"chain_key": "main", "agent_id": "a", "thought_type": "Finding", "content": "the payroll export runs on Fridays"})).unwrap()["thought"]["id"].clone();
    db.call("mentisdb_branch_from", json!({"source_chain_key": "main", "branch_thought_id": at, "branch_chain_key": "exp-payroll"})).unwrap();
    db.call("mentisdb_append", json!({"chain_key": "exp-payroll", "agent_id": "a", "thought_type": "Idea", "content": "move the payroll export to Mondays"})).unwrap();
    let branch_only = add_token(&tokens_file, "branch-reader", Access::Read, &["exp-*".to_string()]).unwrap();
    let everything = add_token(&tokens_file, "reader", Access::Read, &[]).unwrap();
    let client = Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
    let rest = format!("http://{}", served.daemon.rest_addr);
    wait_for(&client, &rest, &everything, StatusCode::OK, "the token file was never loaded");
    let chains_seen = |token: &str| -> Vec<String> {
        let r = client.post(format!("{rest}/v1/ranked-search")).bearer_auth(token).json(&json!({"chain_key": "exp-payroll", "text": "payroll export"})).send().unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        let body: Value = r.json().unwrap();
        let mut chains: Vec<String> = body["results"].as_array().unwrap().iter().map(|h| h["chain_key"].as_str().unwrap().to_string()).collect();
        chains.sort();
        chains.dedup();
        chains
    };
    // The branch answers from main too (MentisDB 0.10), for a token that may read main.
    assert_eq!(chains_seen(&everything), ["exp-payroll", "main"]);
    // A token scoped to the branch gets the branch's answers only: nothing leaks from main.
    assert_eq!(chains_seen(&branch_only), ["exp-payroll"]);
}

/// MentisDB 0.10's switch: `MENTISDB_BEARER_TOKEN_ACCESS=true` turns token
/// checks on with 0.10's own registry (`<dir>/bearer-tokens.json`), and
/// with no token anywhere the daemon refuses to start in one line instead
/// of running open.
#[test]
fn the_reference_switch_turns_tokens_on_or_refuses_to_start() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let mut config = Config::for_dir(&data);
    config.bearer_token_access = Some(true);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let refused = rt.block_on(start(&config)).err().expect("no token: refused");
    let message = refused.to_string();
    assert!(message.contains("MENTISDB_BEARER_TOKEN_ACCESS is on but no token exists") && !message.contains('\n'), "{message}");
    drop(rt);

    let sha = |t: &str| mentisdb_native::tokens::digest(t).iter().map(|b| format!("{b:02x}")).collect::<String>();
    let registry = json!([
        {"alias": "ops", "token_hash": sha("ops-secret"), "created_at": "2026-01-01T00:00:00Z", "last_used_at": null, "revoked_at": null, "scope": {"type": "global"}},
        {"alias": "ci", "token_hash": sha("ci-secret"), "created_at": "2026-01-01T00:00:00Z", "last_used_at": null, "revoked_at": null, "scope": {"type": "chain", "chain_key": "ci"}},
        {"alias": "gone", "token_hash": sha("gone-secret"), "created_at": "2026-01-01T00:00:00Z", "last_used_at": null, "revoked_at": "2026-02-01T00:00:00Z", "scope": {"type": "global"}},
    ]);
    std::fs::write(data.join("bearer-tokens.json"), registry.to_string()).unwrap();
    let served = serve(config);
    for chain in ["ci", "prod"] {
        served.daemon.db.call("mentisdb_append", json!({"chain_key": chain, "agent_id": "a", "thought_type": "Finding", "content": "x"})).unwrap();
    }
    let client = Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
    let rest = format!("http://{}", served.daemon.rest_addr);
    let head = |chain: &str, token: Option<&str>| with_token(client.post(format!("{rest}/v1/head")).json(&json!({"chain_key": chain})), token).send().unwrap().status();
    assert_eq!(head("ci", None), StatusCode::UNAUTHORIZED, "the switch closes the daemon");
    assert_eq!(head("prod", Some("ops-secret")), StatusCode::OK, "a global 0.10 token works on every chain");
    assert_eq!(head("ci", Some("ci-secret")), StatusCode::OK);
    assert_eq!(head("prod", Some("ci-secret")), StatusCode::FORBIDDEN, "a chain-scoped 0.10 token only on its chain");
    assert_eq!(head("ci", Some("gone-secret")), StatusCode::UNAUTHORIZED, "revoked in 0.10");
}

/// The data directory's path is shown to admins of every chain only.
#[test]
fn only_a_daemon_admin_sees_where_the_data_directory_is() {
    let (_root, tokens_file, served) = daemon_with_tokens();
    let reader = add_token(&tokens_file, "reader", Access::Read, &[]).unwrap();
    let chain_admin = add_token(&tokens_file, "chain-admin", Access::Admin, &[CHAIN.to_string()]).unwrap();
    let root = add_token(&tokens_file, "root", Access::Admin, &[]).unwrap();
    served.daemon.db.call("mentisdb_append", json!({"chain_key": CHAIN, "agent_id": "a", "thought_type": "Finding", "content": "x"})).unwrap();
    let client = Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
    let rest = format!("http://{}", served.daemon.rest_addr);
    wait_for(&client, &rest, &root, StatusCode::OK, "the token file was never loaded");
    let location = |token: &str| {
        let head = rest_call(&client, &rest, "mentisdb_head", Some(token)).1;
        let listed = rest_call(&client, &rest, "mentisdb_list_chains", Some(token)).1;
        (head["storage_location"].as_str().unwrap().to_string(), listed["chains"][0]["storage_location"].as_str().unwrap().to_string())
    };
    let (full, listed_full) = location(&root);
    assert!(full.starts_with('/') && full.contains("data") && listed_full == full, "{full}");
    for token in [&reader, &chain_admin] {
        let (head, listed) = location(token);
        assert!(!head.contains('/') && full.ends_with(&head) && listed == head, "{head} / {listed}");
    }
}

/// An MCP session answers only to the token that opened it: another token
/// that learned its id can neither use nor end it.
#[test]
fn an_mcp_session_belongs_to_the_token_that_opened_it() {
    let (_root, tokens_file, served) = daemon_with_tokens();
    let alice = add_token(&tokens_file, "alice", Access::Admin, &[]).unwrap();
    let bob = add_token(&tokens_file, "bob", Access::Admin, &[]).unwrap();
    served.daemon.db.call("mentisdb_append", json!({"chain_key": CHAIN, "agent_id": "a", "thought_type": "Finding", "content": "x"})).unwrap();
    let client = Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
    let rest = format!("http://{}", served.daemon.rest_addr);
    wait_for(&client, &rest, &bob, StatusCode::OK, "the token file was never loaded");
    let url = format!("http://{}/mcp", served.daemon.mcp_addr);
    let session = Mcp::open(&client, url.clone(), Some(&alice)).unwrap();
    let id = session.session.clone().expect("a session id");
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    let hijack = Mcp { client: &client, url: url.clone(), token: Some(&bob), session: Some(id.clone()) };
    assert_eq!(hijack.post(list.clone()).status(), StatusCode::NOT_FOUND, "another token cannot use it");
    let end = |token: &str| with_token(client.delete(&url).header("mcp-session-id", &id), Some(token)).send().unwrap().status();
    assert_eq!(end(&bob), StatusCode::NOT_FOUND, "another token cannot end it");
    assert_eq!(session.call("mentisdb_head")["result"]["isError"], false, "the owner's session still works");
    assert!(end(&alice).is_success());
    assert_eq!(session.post(list).status(), StatusCode::NOT_FOUND, "ended");
}
