//! `mentisdbd add | search | agents | head | verify` as a user runs them: on
//! a data directory no daemon holds, through the directory's running daemon,
//! through `--url` with a token, and `verify` on a damaged chain file.

use crate::common;

use common::{command, Daemon};
use serde_json::Value;
use std::path::Path;

fn run(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> (bool, String, String) {
    let out = command(dir, env, args).output().unwrap();
    (out.status.success(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let (success, out, err) = run(dir, &[], args);
    assert!(success, "{args:?}: {err}");
    out
}

#[test]
fn memory_from_the_shell_with_and_without_a_daemon() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let out = ok(&dir, &["add", "We deploy with a canary first", "--type", "Decision", "--agent", "planner", "--tags", "deploy,release", "--chain", "proj"]);
    assert!(out.starts_with("appended #0 "), "{out}");
    ok(&dir, &["add", "Rollback takes five minutes", "--agent", "ops", "--chain", "proj"]);
    let hits = ok(&dir, &["search", "how do we deploy", "--chain", "proj"]);
    assert!(hits.lines().next().unwrap().contains("Decision planner: We deploy with a canary first"), "{hits}");
    let agents = ok(&dir, &["agents", "--chain", "proj"]);
    assert!(agents.contains("planner\t") && agents.contains("ops\t"), "{agents}");
    let head: Value = serde_json::from_str(&ok(&dir, &["head", "--chain", "proj", "--json"])).unwrap();
    assert_eq!(head["thought_count"], 2);
    let report = ok(&dir, &["verify"]);
    assert!(report.contains("ok      proj (2 thoughts") && report.contains("sound: 1 chains"), "{report}");

    // A daemon now holds the directory: the same commands go through it.
    let daemon = Daemon::start(&dir, &[], &[]);
    let out = ok(&dir, &["add", "Added while the daemon runs", "--chain", "proj"]);
    assert!(out.starts_with("appended #2 "), "{out}");
    let r: Value = common::client().post(format!("{}/v1/head", daemon.rest)).json(&serde_json::json!({"chain_key": "proj"})).send().unwrap().json().unwrap();
    assert_eq!(r["thought_count"], 3, "the daemon served the shell's append");
    // verify while the daemon runs: a consistent snapshot it takes, verified.
    let report = ok(&dir, &["verify"]);
    assert!(report.contains("a snapshot of the running daemon") && report.contains("1 chains (3 thoughts)"), "{report}");
}

#[test]
fn url_and_token_and_failures() {
    let tmp = tempfile::tempdir().unwrap();
    let served = tmp.path().join("served");
    let daemon = Daemon::start(&served, &[("MENTISDB_API_TOKEN", "t0k")], &[]);
    let elsewhere = tmp.path().join("elsewhere");
    let (success, _, err) = run(&elsewhere, &[], &["head", "--url", &daemon.rest]);
    assert!(!success && err.starts_with("mentisdbd: HTTP 401"), "{err}");
    let (success, out, err) = run(&elsewhere, &[], &["add", "via url", "--url", &daemon.rest, "--token", "t0k"]);
    assert!(success && out.starts_with("appended #0"), "{err}");
    assert!(!elsewhere.join("chains").exists(), "--url writes nothing locally");
    // A value moved into range is said, on stderr.
    let (success, out, err) = run(&elsewhere, &[], &["add", "too important", "--url", &daemon.rest, "--token", "t0k", "--importance", "7"]);
    assert!(success && out.starts_with("appended #1") && err.contains("warning: `importance` 7 is outside 0..=1; 1 was stored"), "{out} {err}");
    let (success, _, err) = run(&elsewhere, &[], &["add", "x", "--url", &daemon.rest, "--token", "t0k", "--type", "Musing"]);
    assert!(!success && err.contains("HTTP 400") && err.contains("Musing") && err.trim().lines().count() == 1, "{err}");
    // Mistakes in --url get a hint, in one line.
    let (success, _, err) = run(&elsewhere, &[], &["head", "--url", "127.0.0.1:9472"]);
    assert!(!success && err.contains("needs a scheme") && err.trim().lines().count() == 1, "{err}");
    let (success, _, err) = run(&elsewhere, &[], &["head", "--url", &daemon.mcp, "--token", "t0k"]);
    assert!(!success && err.contains("is this the REST port?") && err.trim().lines().count() == 1, "{err}");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let (success, _, err) = run(&elsewhere, &[], &["head", "--url", &format!("http://{closed}")]);
    assert!(!success && err.contains("is mentisdbd running there?") && err.trim().lines().count() == 1, "{err}");
    // The 0.10 name's errors carry that name.
    let out = common::command_of_reference_name(&elsewhere, &[], &["head", "--url", "nope"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("mentisdb: "), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn verify_reports_a_damaged_chain_and_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    ok(&dir, &["add", "first", "--chain", "good"]);
    ok(&dir, &["add", "first", "--chain", "bad"]);
    ok(&dir, &["add", "second", "--chain", "bad"]);
    let bad = std::fs::read_dir(dir.join("chains")).unwrap().map(|e| e.unwrap().path()).find(|p| p.file_name().unwrap().to_string_lossy().starts_with("bad.")).unwrap();
    let mut bytes = std::fs::read(&bad).unwrap();
    let mid = bytes.len() / 3;
    bytes[mid] ^= 0x55;
    std::fs::write(&bad, bytes).unwrap();
    let (success, out, err) = run(&dir, &[], &["verify"]);
    assert!(!success, "{out}");
    assert!(out.contains("ok      good (1 thoughts") && out.contains("REFUSED"), "{out}");
    assert!(err.contains("verification failed"), "{err}");
}

/// Claims from the shell and over REST, through a running daemon: a second
/// holder is refused with who holds the key (exit 1), a fenced append with
/// a stale token is a 409 and writes nothing.
#[test]
fn claims_from_the_shell_and_over_rest() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let daemon = Daemon::start(&dir, &[], &[]);
    let out = ok(&dir, &["claim", "deploy", "--holder", "ada", "--ttl-ms", "60000", "--chain", "ops"]);
    assert!(out.starts_with("claimed\tdeploy\tada\ttoken 1\tuntil "), "{out}");
    let (success, _, err) = run(&dir, &[], &["claim", "deploy", "--holder", "bob", "--chain", "ops"]);
    assert!(!success && err.contains("held: 'ada' holds it until") && err.trim().lines().count() == 1, "{err}");
    assert!(ok(&dir, &["claims", "--chain", "ops"]).starts_with("deploy\tada\ttoken 1"));

    let client = common::client();
    let post = |path: &str, body: serde_json::Value| client.post(format!("{}{path}", daemon.rest)).json(&body).send().unwrap();
    let r: Value = post("/v1/claims/list", serde_json::json!({"chain_key": "ops"})).json().unwrap();
    assert_eq!(r["claims"][0]["fencing_token"], 1);
    let stale = post("/v1/thoughts", serde_json::json!({"chain_key": "ops", "agent_id": "bob", "thought_type": "ActionTaken", "content": "deployed", "fencing": {"key": "deploy", "token": 2}}));
    assert_eq!(stale.status(), reqwest::StatusCode::CONFLICT);
    let body: Value = stale.json().unwrap();
    assert!(body["error"].as_str().unwrap().contains("'ada' holds it with token 1"), "{body}");
    let fenced = post("/v1/thoughts", serde_json::json!({"chain_key": "ops", "agent_id": "ada", "thought_type": "ActionTaken", "content": "deployed", "fencing": {"key": "deploy", "token": 1}}));
    assert_eq!(fenced.status(), reqwest::StatusCode::OK);
    let (success, _, err) = run(&dir, &[], &["release", "deploy", "--holder", "bob", "--chain", "ops"]);
    assert!(!success && err.contains("wrong_holder"), "{err}");
    assert!(ok(&dir, &["release", "deploy", "--holder", "ada", "--chain", "ops"]).starts_with("released\tdeploy\tada\ttoken 1"));
    assert_eq!(ok(&dir, &["claims", "--chain", "ops"]), "");
}

/// Facts from the shell and over REST, through a running daemon: a new
/// value closes the old one, the REST query answers either time, and a
/// bad time is a 400.
#[test]
fn facts_from_the_shell_and_over_rest() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let daemon = Daemon::start(&dir, &[], &[]);
    let out = ok(&dir, &["fact", "API base URL", "is", "https://one.example", "--valid-from", "2026-11-23T00:00:00Z", "--chain", "ops"]);
    assert!(out.starts_with("recorded\tAPI base URL\tis\thttps://one.example\t2026-11-23T00:00:00.000Z .. now\t"), "{out}");
    let out = ok(&dir, &["fact", "API base URL", "is", "https://two.example", "--valid-from", "2026-11-25T00:00:00Z", "--chain", "ops"]);
    assert!(out.lines().nth(1).is_some_and(|l| l.starts_with("closed\tAPI base URL\tis\thttps://one.example\t2026-11-23T00:00:00.000Z .. 2026-11-25T00:00:00.000Z")), "{out}");
    assert!(ok(&dir, &["facts", "--chain", "ops"]).starts_with("API base URL\tis\thttps://two.example"));
    assert!(ok(&dir, &["facts", "api base url", "--at-time", "2026-11-24T00:00:00Z", "--chain", "ops"]).starts_with("API base URL\tis\thttps://one.example"));

    let client = common::client();
    let post = |path: &str, body: serde_json::Value| client.post(format!("{}{path}", daemon.rest)).json(&body).send().unwrap();
    let r: Value = post("/v1/facts/query", serde_json::json!({"chain_key": "ops", "point_in_time": 1_795_478_400_000i64})).json().unwrap();
    assert_eq!(r["facts"][0]["object"], "https://one.example", "{r}");
    let bad = post("/v1/facts", serde_json::json!({"chain_key": "ops", "subject": "s", "predicate": "p", "object": "o", "valid_from": "soon"}));
    assert_eq!(bad.status(), reqwest::StatusCode::BAD_REQUEST);
    let r: Value = post("/v1/facts/conflicts", serde_json::json!({"chain_key": "ops"})).json().unwrap();
    assert_eq!(r["conflicts"], serde_json::json!([]));
}

#[test]
fn reviews_and_presence_from_the_shell_and_over_rest() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let _daemon = Daemon::start(&dir, &[], &[]);
    let out = ok(&dir, &["review", "merge the auth refactor", "--reviewer", "bob", "--agent", "ada", "--chain", "team"]);
    assert!(out.starts_with("requested\t"), "{out}");
    let id = out.split('\t').nth(1).unwrap().to_string();
    assert!(ok(&dir, &["reviews", "--reviewer", "bob", "--chain", "team"]).starts_with(&format!("{id}\topen\tuntil ")));
    let (success, _, err) = run(&dir, &[], &["decide", &id, "approved", "--agent", "ada", "--chain", "team"]);
    assert!(!success && err.trim().ends_with("not_a_reviewer"), "the requester is not the reviewer: {err}");
    let out = ok(&dir, &["decide", &id, "needs_changes", "--agent", "bob", "--comment", "split it", "--chain", "team"]);
    assert!(out.starts_with(&format!("decided\t{id}\tneeds_changes by bob")), "{out}");
    let (success, _, err) = run(&dir, &[], &["decide", &id, "approved", "--agent", "bob", "--chain", "team"]);
    assert!(!success && err.contains("already_decided: the review is needs_changes") && err.trim().lines().count() == 1, "{err}");
    assert_eq!(ok(&dir, &["reviews", "--chain", "team"]), "", "decided: off the queue");
    let (success, _, err) = run(&dir, &[], &["decide", &id, "maybe", "--agent", "bob", "--chain", "team"]);
    assert!(!success && err.contains("approved, rejected, needs_changes"), "{err}");

    ok(&dir, &["heartbeat", "ada", "--action", "editing", "--file", "src/auth.rs", "--chain", "team"]);
    let present = ok(&dir, &["presence", "--chain", "team"]);
    assert!(present.starts_with("ada\tediting\tsrc/auth.rs\t"), "{present}");
    let head: Value = serde_json::from_str(&ok(&dir, &["head", "--chain", "team", "--json"])).unwrap();
    assert_eq!(head["thought_count"], 2, "the request and the decision; beats are not thoughts");
}
