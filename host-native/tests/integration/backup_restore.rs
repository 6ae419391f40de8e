//! `mentisdbd backup` / `restore` and `GET /v1/admin/backup` as a user runs
//! them: a backup taken from a running daemon while a writer keeps
//! appending restores into a new directory that serves every chain, every
//! thought acknowledged before the backup started, the agent and skill
//! registries and the daemon's identity; damaged, cut-off or foreign
//! archives and targets that hold data are refused before anything is written.

use crate::common;

use common::{client, command, Daemon};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

const ADMIN: &str = "backup-admin-token";
const SKILL: &str = "---\nname: Deploy\ndescription: how we deploy\ntags: [ops]\n---\n# Deploy\nCanary first.\n";

fn run(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> (bool, String, String) {
    let out = command(dir, env, args).output().unwrap();
    (out.status.success(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

fn post(base: &str, path: &str, body: Value) -> Value {
    let r = client().post(format!("{base}{path}")).bearer_auth(ADMIN).json(&body).send().unwrap();
    let status = r.status();
    let v: Value = r.json().unwrap();
    assert!(status.is_success(), "{path}: {status} {v}");
    v
}

fn fails_with_one_line(result: (bool, String, String), needle: &str) {
    let (success, _, err) = result;
    assert!(!success, "expected a failure mentioning {needle:?}");
    assert!(err.contains(needle) && err.trim().lines().count() == 1, "{err}");
}

/// A daemon on `dir` with three chains, an agent with a display name and a skill.
fn populated(dir: &Path) -> Daemon {
    let d = Daemon::start(dir, &[("MENTISDB_API_TOKEN", ADMIN)], &[]);
    for chain in ["alpha", "beta", "busy"] {
        for i in 0..20 {
            post(&d.rest, "/v1/thoughts", json!({"chain_key": chain, "agent_id": "ada", "thought_type": "Finding", "content": format!("{chain} fact number {i}")}));
        }
    }
    post(&d.rest, "/v1/agents/upsert", json!({"chain_key": "alpha", "agent_id": "ada", "display_name": "Ada Lovelace", "agent_owner": "research"}));
    post(&d.rest, "/v1/skills/upload", json!({"chain_key": "alpha", "agent_id": "ada", "skill_id": "deploy", "content": SKILL}));
    d
}

fn head(base: &str, chain: &str) -> (u64, String) {
    let h = post(base, "/v1/head", json!({"chain_key": chain}));
    (h["thought_count"].as_u64().unwrap(), h["head_hash"].as_str().unwrap_or_default().to_string())
}

#[test]
fn a_backup_under_concurrent_writes_restores_every_acknowledged_thought() {
    let tmp = tempfile::tempdir().unwrap();
    let live_dir = tmp.path().join("live");
    let live = populated(&live_dir);

    // A writer appends to "busy" for the whole backup; each acknowledged append is recorded.
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(Mutex::new(Vec::<(u64, String)>::new()));
    let writer = {
        let (stop, acked, rest) = (stop.clone(), acked.clone(), live.rest.clone());
        std::thread::spawn(move || {
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                let t = post(&rest, "/v1/thoughts", json!({"chain_key": "busy", "thought_type": "Finding", "content": format!("written during the backup {i}")}));
                acked.lock().unwrap().push((t["thought"]["index"].as_u64().unwrap(), t["thought"]["hash"].as_str().unwrap().to_string()));
                i += 1;
            }
        })
    };
    while acked.lock().unwrap().len() < 5 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }

    // Through --url, and through the data directory's own daemon (found by its lock file).
    let by_url = tmp.path().join("by-url.tar.gz");
    let by_dir = tmp.path().join("by-dir.tar.gz");
    let elsewhere = tmp.path().join("elsewhere");
    let acked_before_url = acked.lock().unwrap().clone();
    let (ok, out, err) = run(&elsewhere, &[], &["backup", "--to", by_url.to_str().unwrap(), "--url", &live.rest, "--token", ADMIN]);
    assert!(ok, "{err}");
    assert!(out.starts_with("backed up 3 chains"), "{out}");
    assert!(!elsewhere.exists(), "--url touches no local directory");
    let acked_before_dir = acked.lock().unwrap().clone();
    let (ok, out, err) = run(&live_dir, &[("MENTISDB_API_TOKEN", ADMIN)], &["backup", "--to", by_dir.to_str().unwrap()]);
    assert!(ok && out.starts_with("backed up 3 chains"), "{out}{err}");
    let during = acked.lock().unwrap().len();
    assert!(during > acked_before_url.len(), "the daemon kept taking writes during the backups");
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();

    for (archive, acked_before) in [(&by_url, &acked_before_url), (&by_dir, &acked_before_dir)] {
        let restored_dir = tmp.path().join(format!("restored-{}", archive.file_stem().unwrap().to_str().unwrap()));
        let (ok, out, err) = run(&restored_dir, &[], &["restore", archive.to_str().unwrap(), "--to", restored_dir.to_str().unwrap()]);
        assert!(ok && out.starts_with("restored 3 chains"), "{out}{err}");
        let (ok, report, err) = run(&restored_dir, &[], &["verify"]);
        assert!(ok && report.contains("sound: 3 chains"), "{report}{err}");
        assert_eq!(std::fs::read(restored_dir.join("identity.ed25519")).unwrap(), std::fs::read(live_dir.join("identity.ed25519")).unwrap(), "the daemon's identity comes back");

        let restored = Daemon::start(&restored_dir, &[("MENTISDB_API_TOKEN", ADMIN)], &[]);
        for chain in ["alpha", "beta"] {
            assert_eq!(head(&restored.rest, chain), head(&live.rest, chain), "{chain} is whole");
        }
        // "busy" holds every thought acknowledged before the backup started, and is a prefix of the live chain.
        let (count, hash) = head(&restored.rest, "busy");
        let last_acked = acked_before.last().unwrap();
        assert!(count > last_acked.0, "restored {count} thoughts, but #{} was acknowledged before the backup", last_acked.0);
        let same = post(&live.rest, "/v1/thought", json!({"chain_key": "busy", "thought_index": count - 1}));
        assert_eq!(same["thought"]["hash"], hash, "the restored head is the live chain's thought #{}", count - 1);
        let agent = post(&restored.rest, "/v1/agent", json!({"chain_key": "alpha", "agent_id": "ada"}));
        assert_eq!((agent["agent"]["display_name"].as_str(), agent["agent"]["agent_owner"].as_str()), (Some("Ada Lovelace"), Some("research")));
        let skill = post(&restored.rest, "/v1/skills/read", json!({"skill_id": "deploy"}));
        assert!(skill.to_string().contains("Canary first."), "{skill}");
        // The restored daemon takes new writes on top of the restored chain.
        let next = post(&restored.rest, "/v1/thoughts", json!({"chain_key": "busy", "thought_type": "Finding", "content": "after the restore"}));
        assert_eq!(next["thought"]["prev_hash"], hash);
    }
}

/// Rewrites a `.tar.gz` entry by entry; `edit` may change an entry's bytes.
fn rewrite_archive(from: &Path, to: &Path, mut edit: impl FnMut(&str, &mut Vec<u8>)) {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(std::fs::File::open(from).unwrap()));
    let mut out = tar::Builder::new(flate2::write::GzEncoder::new(std::fs::File::create(to).unwrap(), flate2::Compression::fast()));
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().to_string_lossy().into_owned();
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).unwrap();
        edit(&path, &mut bytes);
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o600);
        out.append_data(&mut header, &path, bytes.as_slice()).unwrap();
    }
    out.into_inner().unwrap().finish().unwrap().flush().unwrap();
}

#[test]
fn damaged_archives_and_occupied_targets_are_refused_before_anything_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    drop(populated(&src));
    // No daemon holds the directory now: the command opens it itself.
    let good = tmp.path().join("good.tar.gz");
    let (ok, out, err) = run(&src, &[], &["backup", "--to", good.to_str().unwrap()]);
    assert!(ok && out.starts_with("backed up 3 chains (60 thoughts)"), "{out}{err}");
    fails_with_one_line(run(&src, &[], &["backup", "--to", good.to_str().unwrap()]), "--force");

    let target = tmp.path().join("target");
    let restore = |archive: &Path, extra: &[&str]| {
        let mut args = vec!["restore", archive.to_str().unwrap(), "--to", target.to_str().unwrap()];
        args.extend_from_slice(extra);
        run(&target, &[], &args)
    };
    fails_with_one_line(restore(&tmp.path().join("missing.tar.gz"), &[]), "cannot open");

    let flipped = tmp.path().join("flipped.tar.gz");
    rewrite_archive(&good, &flipped, |path, bytes| {
        if path.starts_with("objects/chains/") && path.ends_with(".mdb") {
            let last = bytes.len() - 1;
            bytes[last] ^= 0x40;
        }
    });
    fails_with_one_line(restore(&flipped, &[]), "SHA-256");

    let stowaway = tmp.path().join("stowaway.tar.gz");
    rewrite_archive(&good, &stowaway, |path, bytes| {
        if path == "manifest.json" {
            let mut m: Value = serde_json::from_slice(bytes).unwrap();
            m["objects"].as_array_mut().unwrap().retain(|o| o["name"] != "skills/registry.log");
            *bytes = serde_json::to_vec(&m).unwrap();
        }
    });
    fails_with_one_line(restore(&stowaway, &[]), "not in the manifest");

    let cut = tmp.path().join("cut.tar.gz");
    let bytes = std::fs::read(&good).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let (ok, _, err) = restore(&cut, &[]);
    assert!(!ok && err.trim().lines().count() == 1, "{err}");
    assert!(!target.join("chains").exists(), "nothing was written by a refused restore");

    // A target with data is refused unless --force, which makes it the backup's copy.
    let other = Daemon::start(&target, &[("MENTISDB_API_TOKEN", ADMIN)], &[]);
    post(&other.rest, "/v1/thoughts", json!({"chain_key": "local-only", "thought_type": "Finding", "content": "not in the backup"}));
    fails_with_one_line(restore(&good, &[]), "holds");
    drop(other);
    fails_with_one_line(restore(&good, &[]), "--force");
    let (ok, out, err) = restore(&good, &["--force"]);
    assert!(ok && out.starts_with("restored 3 chains"), "{out}{err}");
    let (ok, report, _) = run(&target, &[], &["verify"]);
    assert!(ok && report.contains("sound: 3 chains") && !report.contains("local-only"), "{report}");
}

#[test]
fn the_backup_route_needs_admin_on_every_chain() {
    let tmp = tempfile::tempdir().unwrap();
    let tokens = tmp.path().join("tokens.toml");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mentisdbd")).env("MENTISDB_TOKENS_FILE", &tokens).args(["token", "add", "writer", "--scope", "write"]).output().unwrap();
    assert!(out.status.success());
    let writer = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mentisdbd")).env("MENTISDB_TOKENS_FILE", &tokens).args(["token", "add", "ops", "--scope", "admin", "--chains", "ops-*"]).output().unwrap();
    let narrow_admin = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let d = Daemon::start(&tmp.path().join("data"), &[("MENTISDB_API_TOKEN", ADMIN), ("MENTISDB_TOKENS_FILE", tokens.to_str().unwrap())], &[]);
    let get = |token: Option<&str>| {
        let mut req = client().get(format!("{}/v1/admin/backup", d.rest));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        req.send().unwrap()
    };
    assert_eq!(get(None).status(), 401);
    for token in [&writer, &narrow_admin] {
        let r = get(Some(token));
        assert_eq!(r.status(), 403);
        let body: Value = r.json().unwrap();
        assert!(body["error"].as_str().unwrap().contains("admin"), "{body}");
    }
    let r = get(Some(ADMIN));
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/gzip");
    let bytes = r.bytes().unwrap();
    assert_eq!(&bytes[..2], &[0x1f, 0x8b], "a gzip stream");
    let (ok, _, err) = run(&tmp.path().join("x"), &[], &["backup", "--to", tmp.path().join("w.tar.gz").to_str().unwrap(), "--url", &d.rest, "--token", &writer]);
    assert!(!ok && err.contains("HTTP 403") && err.trim().lines().count() == 1, "{err}");
    assert!(!tmp.path().join("w.tar.gz").exists(), "no file is left by a refused backup");
    for cmd in ["backup", "restore"] {
        let (ok, out, _) = run(tmp.path(), &[], &[cmd, "--help"]);
        assert!(ok && out.contains("Usage: mentisdbd"), "{out}");
    }
}

/// The backup figure: 1M thoughts in 16 chains, backed up from a directory
/// and restored into a new one by the real commands (`MENTISDB_BACKUP_FIGURE_THOUGHTS`
/// sets another count).
/// `cargo test -p mentisdb-native --release --test integration -- --ignored --nocapture backup_restore::`
#[test]
#[ignore]
fn figure_backup_and_restore_of_a_million_thoughts_in_16_chains() {
    use mentisdb_core::{DbConfig, FixedClock, MemoryStorage, MentisDb, SequentialIds, Storage};
    let n: usize = std::env::var("MENTISDB_BACKUP_FIGURE_THOUGHTS").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000);
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    // Built in memory (an fsync per append would take the whole figure's time), then written as files.
    let memory = Arc::new(MemoryStorage::new());
    let (db, _) = MentisDb::open(memory.clone(), Arc::new(FixedClock::new(1_795_000_000_000, 7)), Arc::new(SequentialIds::default()), DbConfig::default()).unwrap();
    let words = ["deploy", "canary", "rollback", "schema", "latency", "budget", "review", "incident", "cache", "index", "release", "customer", "migration", "alert", "owner", "retry"];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut word = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        words[(seed % words.len() as u64) as usize]
    };
    for i in 0..n {
        let content = format!("note {i}: the {} {} needs a {} before the {} {} ({} {})", word(), word(), word(), word(), word(), word(), word());
        db.call("mentisdb_append", json!({"chain_key": format!("chain-{:02}", i % 16), "agent_id": format!("agent-{}", i % 5), "thought_type": "Finding", "content": content, "tags": [word()]})).unwrap();
    }
    drop(db);
    let files = mentisdb_fs_storage::FsStorage::open(&src).unwrap();
    let mut data = 0u64;
    for name in memory.list("").unwrap() {
        let bytes = memory.read(&name).unwrap().unwrap();
        data += bytes.len() as u64;
        files.write_atomic(&name, &bytes).unwrap();
    }
    let archive = tmp.path().join("figure.tar.gz");
    let started = std::time::Instant::now();
    let (ok, out, err) = run(&src, &[], &["backup", "--to", archive.to_str().unwrap()]);
    let backup_secs = started.elapsed().as_secs_f64();
    assert!(ok, "{err}");
    print!("{out}");
    let dst = tmp.path().join("dst");
    let started = std::time::Instant::now();
    let (ok, out, err) = run(&dst, &[], &["restore", archive.to_str().unwrap(), "--to", dst.to_str().unwrap()]);
    let restore_secs = started.elapsed().as_secs_f64();
    assert!(ok && out.contains(&format!("({n} thoughts)")), "{out}{err}");
    print!("{out}");
    let size = std::fs::metadata(&archive).unwrap().len();
    println!("FIGURE backup: {n} thoughts in 16 chains, {:.1} MiB of data: backup {backup_secs:.2}s, restore {restore_secs:.2}s (whole commands), archive {:.1} MiB = {:.1}% of the data", data as f64 / 1048576.0, size as f64 / 1048576.0, 100.0 * size as f64 / data as f64);
}
