//! `mentisdbd import-reference DIR` against real data directories written by
//! the reference MentisDB 0.9.7 daemon (`/work/shared/fixtures/reference-0.9.7`,
//! or `MENTISDB_REFERENCE_FIXTURES`): every thought and agent the reference
//! served afterwards is served by us, field by field (and every skill
//! version by its content hash); the source is never
//! changed; a second run adds nothing; a tampered thought is reported
//! without stopping the import.

use crate::common;
use common::{client, command, Daemon};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    std::env::var_os("MENTISDB_REFERENCE_FIXTURES").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/work/shared/fixtures/reference-0.9.7"))
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::write(to.join(e.file_name()), std::fs::read(e.path()).unwrap()).unwrap();
    }
}

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap()).map(|e| (e.file_name().to_string_lossy().to_string(), std::fs::read(e.path()).unwrap())).collect();
    files.sort();
    files
}

fn run_import(ours: &Path, source: &Path) -> (bool, String, String) {
    let out = command(ours, &[], &["import-reference", source.to_str().unwrap()]).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).to_string(), String::from_utf8_lossy(&out.stderr).to_string())
}

const TOKEN: &str = "import-admin-token";

fn post(d: &Daemon, path: &str, body: Value) -> Value {
    // Daemons of these tests either need no token or take this one.
    let r = client().post(format!("{}{path}", d.rest)).bearer_auth(TOKEN).json(&body).send().unwrap();
    assert!(r.status().is_success(), "{path}: {}", r.status());
    r.json().unwrap()
}

fn all_thoughts(d: &Daemon, key: &str) -> Vec<Value> {
    let r = post(d, "/v1/thoughts/traverse", json!({ "chain_key": key, "anchor_boundary": "genesis", "include_anchor": true, "direction": "forward", "limit": 1000, "chunk_size": 1000 }));
    r["thoughts"].as_array().unwrap().clone()
}

/// The fields a reference thought shares with ours, in our spelling.
fn comparable(t: &Value) -> Value {
    let relations: Vec<Value> = t["relations"].as_array().unwrap().iter().map(|r| json!({ "kind": r["kind"], "target_id": r["target_id"], "chain_key": r.get("chain_key").cloned().unwrap_or(Value::Null) })).collect();
    let f32ish = |v: &Value| v.as_f64().map(|x| (x * 1e6).round() / 1e6);
    json!({
        "id": t["id"], "index": t["index"], "timestamp": t["timestamp"], "session_id": t["session_id"], "agent_id": t["agent_id"],
        "agent_name": t["agent_name"], "agent_owner": t["agent_owner"], "signing_key_id": t["signing_key_id"], "thought_signature": t["thought_signature"],
        "thought_type": t["thought_type"], "role": t["role"], "content": t["content"], "confidence": f32ish(&t["confidence"]), "importance": f32ish(&t["importance"]),
        "tags": t["tags"], "concepts": t["concepts"], "refs": t["refs"], "relations": relations,
    })
}

#[test]
fn imports_every_thought_agent_and_skill_version_of_a_reference_097_directory_once_and_leaves_it_untouched() {
    let fixtures = fixtures();
    let tmp = tempfile::tempdir().unwrap();
    let source = tmp.path().join("reference");
    copy_dir(&fixtures.join("data"), &source);
    let before = snapshot(&source);
    let ours = tmp.path().join("ours");

    let (ok, stdout, stderr) = run_import(&ours, &source);
    assert!(ok, "import failed: {stderr}");
    assert!(stdout.contains("imported chain shared-project: 122 thoughts"), "{stdout}");
    assert!(stdout.contains("imported chain shared-ops-journal: 42 thoughts"), "{stdout}");
    assert!(stdout.contains("imported skill shared-deploy-checklist: 2 versions"), "{stdout}");
    assert!(stderr.contains("164 thoughts added") && stderr.contains("0 reference hash mismatches"), "{stderr}");
    assert_eq!(snapshot(&source), before, "the source directory was changed");

    let (ok, stdout, stderr) = run_import(&ours, &source);
    assert!(ok, "re-run failed: {stderr}");
    assert!(stdout.contains("skipped skill shared-deploy-checklist: already present"), "{stdout}");
    assert!(stdout.contains("skipped chain shared-project: already present") && stderr.contains("0 thoughts added"), "{stdout}{stderr}");

    let d = Daemon::start(&ours, &[], &[]);
    check_skills(&d);
    check_chains(&d);
}

/// Every thought and agent of the fixtures' chains is served by `d` as the reference served it.
fn check_chains(d: &Daemon) {
    let fixtures = fixtures();
    for key in ["shared-project", "shared-ops-journal"] {
        let expected: Value = serde_json::from_slice(&std::fs::read(fixtures.join(format!("expected/chain-{key}.json"))).unwrap()).unwrap();
        let want = expected["thoughts"].as_array().unwrap();
        let got = all_thoughts(d, key);
        assert_eq!(got.len(), want.len(), "{key}: thought count");
        for (g, w) in got.iter().zip(want) {
            assert_eq!(comparable(g), comparable(w), "{key}: thought {}", w["index"]);
        }
        // Our own hash chain over the imported thoughts verifies (the daemon opened it) and links.
        for pair in got.windows(2) {
            assert_eq!(pair[1]["prev_hash"], pair[0]["hash"]);
        }
        let registry = post(d, "/v1/agent-registry", json!({ "chain_key": key }));
        let ours_by_id = |id: &str| registry["agents"].as_array().unwrap().iter().find(|a| a["agent_id"] == id).cloned().unwrap_or_else(|| panic!("{key}: agent {id} missing"));
        for w in expected["agent_registry"]["agents"].as_array().unwrap() {
            let g = ours_by_id(w["agent_id"].as_str().unwrap());
            assert_eq!(g["display_name"], w["display_name"], "{key} {}", w["agent_id"]);
            assert_eq!(g["agent_owner"], w["owner"], "{key} {}", w["agent_id"]);
            assert_eq!(g["description"], w["description"], "{key} {}", w["agent_id"]);
            assert_eq!(g["status"], w["status"], "{key} {}: spelled as the reference does", w["agent_id"]);
            // Former display names are aliases, the agent id (its first name) included, as in the
            // reference (the order may differ: our thoughts are replayed before the registry).
            let names = |v: &Value| v.as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_string()).collect::<std::collections::BTreeSet<_>>();
            assert_eq!(names(&g["aliases"]), names(&w["aliases"]), "{key} {}", w["agent_id"]);
        }
    }
}

fn get(d: &Daemon, path: &str) -> Value {
    client().get(format!("{}{path}", d.rest)).bearer_auth(TOKEN).send().unwrap().json().unwrap()
}

fn check_skills(d: &Daemon) {
    let expected: Value = serde_json::from_slice(&std::fs::read(fixtures().join("expected/skills.json")).unwrap()).unwrap();
    let listed = get(d, "/v1/skills");
    for skill in expected.as_array().unwrap() {
        let (summary, want) = (&skill["summary"], skill["versions"].as_array().unwrap());
        let id = summary["skill_id"].as_str().unwrap();
        let ours = listed["skills"].as_array().unwrap().iter().find(|s| s["skill_id"] == id).unwrap_or_else(|| panic!("skill {id} missing"));
        for field in ["name", "description", "status", "status_reason", "tags", "triggers", "version_count", "latest_uploaded_by_agent_id", "latest_uploaded_by_agent_name", "latest_uploaded_by_agent_owner"] {
            assert_eq!(ours[field], summary[field], "skill {id}: {field}");
        }
        let got = post(d, "/v1/skills/versions", json!({ "skill_id": id }));
        let got = got["versions"].as_array().unwrap();
        assert_eq!(got.len(), want.len(), "skill {id}: versions");
        for (g, w) in got.iter().zip(want) {
            // The reference's content_hash is the SHA-256 of the uploaded text: the same text is stored here.
            for field in ["content_hash", "source_format", "uploaded_by_agent_id", "uploaded_by_agent_name", "uploaded_by_agent_owner", "signing_key_id"] {
                assert_eq!(g[field], w[field], "skill {id} version {}: {field}", w["version_number"]);
            }
        }
    }
}

#[test]
fn imports_through_a_running_daemon_by_url_or_through_the_directory_it_holds() {
    let tmp = tempfile::tempdir().unwrap();
    let source = tmp.path().join("reference");
    copy_dir(&fixtures().join("data"), &source);
    let served = tmp.path().join("served");
    let d = Daemon::start(&served, &[("MENTISDB_API_TOKEN", TOKEN)], &[]);
    let elsewhere = tmp.path().join("elsewhere");
    let import = |dir: &Path, extra: &[&str]| {
        let mut args = vec!["import-reference", source.to_str().unwrap()];
        args.extend_from_slice(extra);
        let out = command(dir, &[], &args).output().unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stdout).to_string(), String::from_utf8_lossy(&out.stderr).to_string())
    };
    let (ok, _, stderr) = import(&elsewhere, &["--url", &d.rest]);
    assert!(!ok && stderr.contains("HTTP 401") && stderr.trim().lines().count() == 1, "{stderr}");
    let (ok, stdout, stderr) = import(&elsewhere, &["--url", &d.rest, "--token", TOKEN]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("imported chain shared-project: 122 thoughts") && stdout.contains("imported skill shared-deploy-checklist: 2 versions"), "{stdout}");
    assert!(!elsewhere.exists(), "--url writes nothing locally");
    check_skills(&d);
    check_chains(&d);
    // The directory's own daemon is found by its lock file; a re-run adds nothing.
    let out = command(&served, &[("MENTISDB_API_TOKEN", TOKEN)], &["import-reference", source.to_str().unwrap()]).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && stdout.contains("skipped chain shared-project: already present") && stderr.contains("0 thoughts added"), "{stdout}{stderr}");
}

#[test]
fn a_tampered_reference_thought_is_reported_and_the_import_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let source = tmp.path().join("reference");
    copy_dir(&fixtures().join("data"), &source);
    let file = source.join("shared-ops-journal-ebba556427cc0ae4.tcbin");
    let mut bytes = std::fs::read(&file).unwrap();
    // Flip one byte of a content string in the file's second half (length prefixes and structure stay valid).
    let text = b"the";
    let at = bytes.windows(3).enumerate().skip(bytes.len() / 2).find(|(_, w)| *w == text).map(|(i, _)| i).expect("a content word");
    bytes[at] = b'T';
    std::fs::write(&file, bytes).unwrap();

    let (ok, stdout, stderr) = run_import(&tmp.path().join("ours"), &source);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("imported chain shared-ops-journal: 42 thoughts"), "{stdout}");
    assert!(stdout.contains("hash mismatch in shared-ops-journal at index"), "{stdout}");
    assert!(stderr.contains("1 reference hash mismatches"), "{stderr}");
}

#[test]
fn a_missing_source_is_one_line_and_a_failure() {
    let tmp = tempfile::tempdir().unwrap();
    let (ok, _, stderr) = run_import(&tmp.path().join("ours"), &tmp.path().join("no-such-dir"));
    assert!(!ok);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("is neither a data directory nor a .mentis backup"), "{stderr}");
}

#[test]
fn legacy_jsonl_and_binary_chains_without_a_registry_are_imported_by_file_name() {
    use mentisdb_native::reference::synthetic_reference_chain;
    let tmp = tempfile::tempdir().unwrap();
    let source = tmp.path().join("reference");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::write(source.join("old-notes-0123456789abcdef.jsonl"), synthetic_reference_chain(50, true)).unwrap();
    std::fs::write(source.join("new-notes-fedcba9876543210.tcbin"), synthetic_reference_chain(30, false)).unwrap();
    let ours = tmp.path().join("ours");
    let (ok, stdout, stderr) = run_import(&ours, &source);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("imported chain old-notes: 50 thoughts") && stdout.contains("imported chain new-notes: 30 thoughts"), "{stdout}");
    assert!(stderr.contains("0 reference hash mismatches"), "{stderr}");
    let d = Daemon::start(&ours, &[], &[]);
    let got = all_thoughts(&d, "old-notes");
    assert_eq!(got.len(), 50);
    assert_eq!(got[49]["content"], "Thought 49: the service on host-10 answered in 59 ms after the deploy.");
    assert_eq!(got[49]["relations"][0]["target_id"], got[48]["id"]);
    assert_eq!(got[49]["timestamp"], "2026-01-01T00:00:49.000000049Z");
}

/// The import figure: a 100k-thought reference chain (binary format).
/// `cargo test -p mentisdb-native --release --test integration -- --ignored --nocapture import_reference::figure`
#[test]
#[ignore]
fn figure_import_of_a_100k_thought_reference_chain() {
    use mentisdb_native::reference::synthetic_reference_chain;
    let n: usize = std::env::var("MENTISDB_IMPORT_FIGURE_THOUGHTS").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let tmp = tempfile::tempdir().unwrap();
    let source = tmp.path().join("reference");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::write(source.join("big-0123456789abcdef.tcbin"), synthetic_reference_chain(n, false)).unwrap();
    let started = std::time::Instant::now();
    let (ok, stdout, stderr) = run_import(&tmp.path().join("ours"), &source);
    let secs = started.elapsed().as_secs_f64();
    assert!(ok && stdout.contains(&format!("imported chain big: {n} thoughts")), "{stdout}{stderr}");
    println!("FIGURE import-reference: {n} thoughts in {secs:.2}s = {:.0} thoughts/s (whole command, incl. start and fsync)", n as f64 / secs);
}

/// The MentisDB 0.10.10 fixture (`tests/compat/make_0_10_fixture.py` made it
/// with a real 0.10.10): its data directory, `.mentis` backup and what the
/// 0.10.10 daemon answered, with the raw bearer tokens its CLI printed.
fn fixture_0_10() -> (PathBuf, Value) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/compat/fixture-0.10.10");
    let expected = serde_json::from_slice(&std::fs::read(dir.join("expected.json")).unwrap()).unwrap();
    (dir, expected)
}

fn import_with(ours: &Path, source: &Path, env: &[(&str, &str)]) -> (bool, String, String) {
    let out = command(ours, env, &["import-reference", source.to_str().unwrap()]).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).to_string(), String::from_utf8_lossy(&out.stderr).to_string())
}

fn contents_and_types(d: &Daemon, token: &str, key: &str) -> (Vec<Value>, Vec<Value>) {
    let r = client().post(format!("{}/v1/search", d.rest)).bearer_auth(token).json(&json!({"chain_key": key, "include_invalidated": true})).send().unwrap();
    assert!(r.status().is_success(), "{key}: {}", r.status());
    let found: Value = r.json().unwrap();
    let thoughts = found["thoughts"].as_array().unwrap();
    (thoughts.iter().map(|t| t["content"].clone()).collect(), thoughts.iter().map(|t| t["entity_type"].clone()).collect())
}

#[test]
fn a_mentisdb_0_10_directory_moves_in_with_its_tokens_webhooks_and_skills() {
    let (fixture, expected) = fixture_0_10();
    let root = tempfile::tempdir().unwrap();
    let (ours, tokens) = (root.path().join("ours"), root.path().join("tokens.toml"));
    let source = root.path().join("source");
    copy_dir(&fixture.join("data"), &source);
    let before = snapshot(&source);
    let env = [("MENTISDB_TOKENS_FILE", tokens.to_str().unwrap()), ("MENTISDB_WEBHOOK_ALLOWED_CIDRS", "127.0.0.0/8")];
    let (ok, out, err) = import_with(&ours, &source, &env);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("imported chain team-notes: 3 thoughts") && out.contains("imported skill release-checklist: 1 versions"), "{out}");
    assert!(out.contains("imported bearer token ops-admin (same secret)") && out.contains("skipped bearer token retired: revoked"), "{out}");
    assert!(err.contains("0 reference hash mismatches"), "{err}");
    assert_eq!(snapshot(&source), before, "the source is only read");

    // The daemon now asks for the tokens 0.10.10 printed, with their scopes.
    let d = Daemon::start(&ours, &[("MENTISDB_TOKENS_FILE", tokens.to_str().unwrap())], &[]);
    let admin = expected["tokens"]["ops-admin"].as_str().unwrap();
    let research_bot = expected["tokens"]["research-bot"].as_str().unwrap();
    for (key, chain) in expected["chains"].as_object().unwrap() {
        let (contents, types) = contents_and_types(&d, admin, key);
        assert_eq!(Value::from(contents), chain["contents"], "{key}");
        assert_eq!(Value::from(types), chain["entity_types"], "{key}: entity types carried over");
    }
    let head = |token: &str, key: &str| client().post(format!("{}/v1/head", d.rest)).bearer_auth(token).json(&json!({"chain_key": key})).send().unwrap().status().as_u16();
    assert_eq!((head(research_bot, "research"), head(research_bot, "team-notes"), head("not-a-token", "research")), (200, 403, 401));
    let skills: Value = client().get(format!("{}/v1/skills", d.rest)).bearer_auth(admin).send().unwrap().json().unwrap();
    assert!(skills["skills"].as_array().unwrap().iter().any(|s| s["skill_id"] == "release-checklist"), "{skills}");
    let hooks: Value = client().get(format!("{}/v1/webhooks", d.rest)).bearer_auth(admin).send().unwrap().json().unwrap();
    let hook = &hooks["webhooks"][0];
    assert_eq!((hook["url"].clone(), hook["chain_key_filter"].clone(), hook["thought_type_filter"].clone()), (expected["webhook"]["webhook"]["url"].clone(), json!("team-notes"), json!(["Decision"])), "{hooks}");
    drop(d);

    // A second run takes in nothing twice.
    let (ok, out, _) = import_with(&ours, &source, &env);
    assert!(ok && out.contains("skipped chain team-notes: already present") && out.contains("skipped bearer token ops-admin"), "{out}");
    assert!(out.contains("is registered already"), "{out}");
}

#[test]
fn a_mentisdb_0_10_backup_archive_moves_in_and_a_tampered_one_is_refused() {
    let (fixture, expected) = fixture_0_10();
    let root = tempfile::tempdir().unwrap();
    let ours = root.path().join("ours");
    let (ok, out, err) = import_with(&ours, &fixture.join("backup.mentis"), &[]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("imported chain research: 1 thoughts") && out.contains("imported chain team-notes: 3 thoughts"), "{out}");
    let d = Daemon::start(&ours, &[("MENTISDB_API_TOKEN", TOKEN)], &[]);
    for (key, chain) in expected["chains"].as_object().unwrap() {
        assert_eq!(Value::from(contents_and_types(&d, TOKEN, key).0), chain["contents"], "{key}");
    }
    drop(d);

    // One byte of one file changed (the zip rewritten around it, so only the
    // manifest's SHA-256 can tell): refused before anything is imported.
    let tampered = root.path().join("tampered.mentis");
    let status = std::process::Command::new("python3")
        .args(["-c", "import sys, zipfile\nsrc, dst = sys.argv[1], sys.argv[2]\nwith zipfile.ZipFile(src) as a, zipfile.ZipFile(dst, 'w', zipfile.ZIP_DEFLATED) as b:\n    for i in a.infolist():\n        data = a.read(i.filename)\n        if i.filename.startswith('team-notes') and i.filename.endswith('.tcbin'):\n            data = data[:-1] + bytes([data[-1] ^ 1])\n        b.writestr(i.filename, data)\n"])
        .arg(fixture.join("backup.mentis"))
        .arg(&tampered)
        .status()
        .unwrap();
    assert!(status.success());
    let other = root.path().join("other");
    let (ok, out, err) = import_with(&other, &tampered, &[]);
    assert!(!ok, "{out}");
    assert!(err.contains("does not match the manifest") && err.contains("nothing was imported"), "{err}");
    assert!(!other.join("chains").exists() || std::fs::read_dir(other.join("chains")).unwrap().next().is_none(), "no chain was written");
}
