//! Safe by default, tried the way an attacker on the same machine would,
//! against the real `mentisdbd` binary on loopback:
//!
//! - a web page (foreign `Origin`, a body type a form or `no-cors` fetch can
//!   send) or a DNS-rebinding page (foreign `Host`) cannot change anything
//!   through any state-changing REST route, either MCP path or 0.10's
//!   `/tools/execute`, nor read the backup or the event stream;
//! - the daemon's own pages (same origin) and plain local clients still work;
//! - `/health` says only up or down without a token when tokens are on;
//! - every file the daemon writes is for its user alone, whatever the umask,
//!   and a directory others can read is named in one warning line.
//!
//! The browser side of the same attacks (real `fetch`, forms, in headless
//! Chromium) is `host-native/explorer/e2e/security.test.mjs`.

use crate::common;

use common::{client, Daemon};
use mentisdb_native::http::routes::ROUTES;
use reqwest::StatusCode;
use serde_json::{json, Value};

fn head(d: &Daemon, chain: &str) -> Value {
    let r = client().post(format!("{}/v1/head", d.rest)).json(&json!({"chain_key": chain})).send().unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    r.json().unwrap()
}

fn chain_keys(d: &Daemon) -> Value {
    client().get(format!("{}/v1/chains", d.rest)).send().unwrap().json::<Value>().unwrap()["chain_keys"].clone()
}

/// Every way a web page could send a state-changing request: the path,
/// method, headers and what it gets back.
#[test]
fn no_web_page_can_change_or_read_the_daemon() {
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::start(dir.path(), &[], &[]);
    let port = |url: &str| url.rsplit(':').next().unwrap().to_string();
    let appended = client().post(format!("{}/v1/thoughts", d.rest)).json(&json!({"chain_key": "keep", "agent_id": "ada", "thought_type": "Decision", "content": "the one thought"})).send().unwrap();
    assert_eq!(appended.status(), StatusCode::OK);
    let before = (head(&d, "keep"), chain_keys(&d));

    let body = json!({"chain_key": "keep", "agent_id": "mallory", "thought_type": "Decision", "content": "planted", "tool": "mentisdb_delete_chain", "parameters": {"chain_key": "keep"}}).to_string();
    let mut targets: Vec<(String, reqwest::Method)> = ROUTES
        .iter()
        .filter(|r| r.method != "GET")
        .map(|r| (format!("{}{}", d.rest, r.path.replace("{chain_key}", "keep").replace("{id}", "w1")), r.method.parse().unwrap()))
        .collect();
    targets.push((format!("{}/v1/admin/flush", d.rest), reqwest::Method::POST));
    for path in ["/mcp", "/", "/tools/execute", "/tools/list"] {
        targets.push((format!("{}{path}", d.mcp), reqwest::Method::POST));
    }
    // (headers, the status each must get): a cross-site page's simple
    // requests, a form post, and a DNS-rebinding page (its own name as Host).
    let attacks: Vec<(Vec<(&str, String)>, StatusCode)> = vec![
        (vec![("origin", "http://evil.example".into()), ("content-type", "text/plain;charset=UTF-8".into())], StatusCode::FORBIDDEN),
        (vec![("origin", "http://evil.example".into()), ("content-type", "application/json".into())], StatusCode::FORBIDDEN),
        (vec![("origin", "null".into()), ("content-type", "application/x-www-form-urlencoded".into())], StatusCode::FORBIDDEN),
        (vec![("content-type", "text/plain".into())], StatusCode::UNSUPPORTED_MEDIA_TYPE),
        (vec![("content-type", "multipart/form-data; boundary=x".into())], StatusCode::UNSUPPORTED_MEDIA_TYPE),
        (vec![("host", "evil.example:REST".into()), ("content-type", "application/json".into())], StatusCode::MISDIRECTED_REQUEST),
    ];
    for (url, method) in &targets {
        for (headers, want) in &attacks {
            let mut req = client().request(method.clone(), url).body(body.clone());
            for (k, v) in headers {
                req = req.header(*k, v.replace("REST", &port(url)));
            }
            req = req.header("accept", "application/json, text/event-stream");
            let r = req.send().unwrap();
            let status = r.status();
            assert_eq!(r.headers().get("x-content-type-options").map(|v| v.as_bytes()), Some(&b"nosniff"[..]), "a refusal says nosniff too: {method} {url}");
            let text = r.text().unwrap();
            assert_eq!(status, *want, "{method} {url} with {headers:?}: {text}");
            let error: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{method} {url}: not JSON: {text}"));
            assert!(error["error"].as_str().is_some_and(|e| !e.is_empty() && !e.contains('\n')), "{text}");
        }
    }
    assert_eq!((head(&d, "keep"), chain_keys(&d)), before, "nothing changed");

    // Reads a rebinding page would want: the backup (signing key inside),
    // the event stream, any tool's result.
    for url in [format!("{}/v1/admin/backup", d.rest), format!("{}/v1/events?chain_key=keep", d.rest), format!("{}/v1/chains", d.rest), format!("{}/explorer/", d.rest)] {
        let r = client().get(&url).header("host", format!("evil.example:{}", port(&d.rest))).send().unwrap();
        assert_eq!(r.status(), StatusCode::MISDIRECTED_REQUEST, "{url}");
        let r = client().get(&url).header("origin", "http://evil.example").send().unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{url}");
    }

    // An <img src> of another site's page sends no Origin but Sec-Fetch-Site.
    let r = client().get(format!("{}/v1/admin/backup", d.rest)).header("sec-fetch-site", "cross-site").header("sec-fetch-mode", "no-cors").header("sec-fetch-dest", "image").send().unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN, "no backup taken for a cross-site <img>");
    // Nor for a link on another site (the browser would save the archive).
    let r = client().get(format!("{}/v1/admin/backup", d.rest)).header("sec-fetch-site", "cross-site").header("sec-fetch-mode", "navigate").header("sec-fetch-dest", "document").send().unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN, "no backup downloaded by a cross-site link");
    let r = client().get(format!("{}/explorer/", d.rest)).header("sec-fetch-site", "cross-site").header("sec-fetch-mode", "navigate").header("sec-fetch-dest", "document").send().unwrap();
    assert_eq!(r.status(), StatusCode::OK, "a link to the explorer opens it");
    let ok_reply = client().get(format!("{}/v1/chains", d.rest)).send().unwrap();
    assert_eq!(ok_reply.headers()["x-content-type-options"], "nosniff");

    // The chain import takes only its binary type, even from a local client.
    let export = client().get(format!("{}/v1/chains/keep/export", d.rest)).send().unwrap().bytes().unwrap();
    for t in [None, Some("text/plain"), Some("application/json")] {
        let mut req = client().post(format!("{}/v1/chains/planted/import", d.rest)).body(export.clone());
        if let Some(t) = t {
            req = req.header("content-type", t);
        }
        assert_eq!(req.send().unwrap().status(), StatusCode::UNSUPPORTED_MEDIA_TYPE, "{t:?}");
    }
    // 0.10's /tools/execute wants JSON from local clients too.
    let r = client().post(format!("{}/tools/execute", d.mcp)).body(json!({"tool": "mentisdb_head", "parameters": {}}).to_string()).send().unwrap();
    assert_eq!(r.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(chain_keys(&d), before.1);

    // What keeps working: the daemon's own pages (the explorer calls REST
    // from the REST origin), local clients without an Origin, localhost.
    let own = client().post(format!("{}/v1/head", d.rest)).header("origin", d.rest.as_str()).json(&json!({"chain_key": "keep"})).send().unwrap();
    assert_eq!(own.status(), StatusCode::OK);
    let localhost = d.rest.replace("127.0.0.1", "localhost");
    assert_eq!(client().post(format!("{localhost}/v1/head")).json(&json!({"chain_key": "keep"})).send().unwrap().status(), StatusCode::OK);
    // (Past the type check, the import reads the object: it is chain `keep`.
    // A whole import is chain_transfer.rs's.)
    let r = client().post(format!("{}/v1/chains/copy/import", d.rest)).header("content-type", "application/octet-stream").body(export).send().unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert!(r.text().unwrap().contains("the object is chain 'keep'"));
    let r = client().post(format!("{}/tools/execute", d.mcp)).json(&json!({"tool": "mentisdb_head", "parameters": {"chain_key": "keep"}})).send().unwrap();
    assert_eq!(r.status(), StatusCode::OK);
}

/// MENTISDB_ALLOWED_HOSTS and MENTISDB_ALLOWED_ORIGINS widen the guard.
#[test]
fn listed_hosts_and_origins_are_let_in() {
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::start(dir.path(), &[("MENTISDB_ALLOWED_HOSTS", "mentis.lan"), ("MENTISDB_ALLOWED_ORIGINS", "http://localhost:6274")], &[]);
    let port = d.rest.rsplit(':').next().unwrap().to_string();
    let post = |headers: &[(&str, String)]| {
        let mut req = client().post(format!("{}/v1/head", d.rest)).json(&json!({}));
        for (k, v) in headers {
            req = req.header(*k, v);
        }
        req.send().unwrap().status()
    };
    assert_eq!(post(&[("host", format!("mentis.lan:{port}"))]), StatusCode::OK);
    assert_eq!(post(&[("host", format!("other.lan:{port}"))]), StatusCode::MISDIRECTED_REQUEST);
    assert_eq!(post(&[("origin", "http://localhost:6274".into())]), StatusCode::OK, "the MCP Inspector's page, listed");
    assert_eq!(post(&[("origin", "http://localhost:6275".into())]), StatusCode::FORBIDDEN);
}

/// With tokens on, `/health` without a token says only up or down.
#[test]
fn health_without_a_token_says_only_up_or_down() {
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::start(dir.path(), &[("MENTISDB_API_TOKEN", "s3cret")], &[]);
    let anonymous: Value = client().get(format!("{}/health", d.rest)).send().unwrap().json().unwrap();
    assert_eq!(anonymous, json!({"status": "ok", "service": "mentisdb"}));
    let wrong: Value = client().get(format!("{}/health", d.rest)).bearer_auth("nope").send().unwrap().json().unwrap();
    assert_eq!(wrong, anonymous);
    let known: Value = client().get(format!("{}/health", d.rest)).header("authorization", "BEARER s3cret").send().unwrap().json().unwrap();
    assert_eq!(known["storage"]["backend"], "file", "{known}");
    assert!(known["storage"]["group_writes"].is_u64());
}

fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Under umask 022 (files 0644 by default) every directory the daemon
/// makes is 0700 and every file 0600.
#[test]
fn files_are_private_whatever_the_umask() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    // A log file that was there before, readable by all, is made private too.
    let log = root.path().join("old.log");
    std::fs::write(&log, "a line from before\n").unwrap();
    std::fs::set_permissions(&log, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let d = Daemon::start_under_umask("022", &data, &[("MENTISDB_LOG_FILE", log.to_str().unwrap())], &[]);
    assert_eq!(mode(&log), 0o600, "the log file named by MENTISDB_LOG_FILE");
    let post = |path: &str, body: Value| {
        let r = client().post(format!("{}{path}", d.rest)).json(&body).send().unwrap();
        assert_eq!(r.status(), StatusCode::OK, "{path}: {}", r.text().unwrap());
    };
    post("/v1/agents/upsert", json!({"chain_key": "jsonl-chain", "agent_id": "ada", "display_name": "Ada"}));
    post("/v1/thoughts", json!({"chain_key": "private", "agent_id": "ada", "thought_type": "Decision", "content": "secret plans"}));
    post("/v1/thoughts", json!({"chain_key": "jsonl-chain", "agent_id": "ada", "thought_type": "Decision", "content": "more plans"}));
    post("/v1/skills/upload", json!({"chain_key": "private", "agent_id": "ada", "content": "# Deploy\n\nSteps.\n"}));
    drop(d);
    let mut seen = 0;
    let mut stack = vec![data.clone()];
    assert_eq!(mode(&data), 0o700, "the data directory");
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                assert_eq!(mode(&path), 0o700, "{}", path.display());
                stack.push(path);
            } else {
                assert_eq!(mode(&path), 0o600, "{}", path.display());
                seen += 1;
            }
        }
    }
    assert!(seen >= 5, "chains, registry, skills, identity, lock: {seen} files");
}

/// A data directory other users can read (an older version's, or made by
/// hand) is named in one warning line at start.
#[test]
fn a_directory_others_can_read_is_named_in_one_warning() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    let d = Daemon::start(&data, &[], &[]);
    let logs = d.logs();
    let warnings: Vec<&str> = logs.lines().filter(|l| l.contains("open to other local users")).collect();
    assert_eq!(warnings.len(), 1, "{logs}");
    assert!(warnings[0].contains("chmod -R go-rwx"), "{}", warnings[0]);
    drop(d);
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o700)).unwrap();
    let d = Daemon::start(&data, &[], &[]);
    assert!(!d.logs().contains("open to other local users"));
}

/// Without `MENTISDB_TOKENS_FILE`, `mentisdbd token add` writes the data
/// directory's `tokens.toml` (0600), and the running daemon requires tokens
/// within a second, without a restart.
#[test]
fn a_token_added_to_the_default_file_closes_the_running_daemon() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let d = Daemon::start(&data, &[], &[]);
    let head = |token: Option<&str>| {
        let mut req = client().post(format!("{}/v1/head", d.rest)).json(&json!({}));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        req.send().unwrap().status()
    };
    assert_eq!(head(None), StatusCode::OK, "no token file: open, as before");
    let out = common::command(&data, &[], &["token", "add", "ci", "--scope", "read"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let token = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert_eq!(mode(&data.join("tokens.toml")), 0o600);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while head(None) != StatusCode::UNAUTHORIZED {
        assert!(std::time::Instant::now() < deadline, "the daemon never required a token");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(head(Some(&token)), StatusCode::OK);
    // Deleting the file never opens the daemon again (until a restart).
    std::fs::remove_file(data.join("tokens.toml")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    assert_eq!(head(None), StatusCode::UNAUTHORIZED, "a deleted token file leaves the daemon closed");
}

/// A default token file that appears broken closes the daemon (no token
/// matches) rather than leaving it open while the user believes it closed.
#[test]
fn a_broken_default_token_file_closes_the_daemon() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let d = Daemon::start(&data, &[], &[]);
    let head = || client().post(format!("{}/v1/head", d.rest)).json(&json!({})).send().unwrap().status();
    assert_eq!(head(), StatusCode::OK);
    std::fs::write(data.join("tokens.toml"), "[[token]]\nname = \"ci\"\nsha256 = \"not hex\"\n").unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while head() != StatusCode::UNAUTHORIZED {
        assert!(std::time::Instant::now() < deadline, "a broken token file left the daemon open");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// Without tokens, the loopback port answers the daemon's own user only: a
/// call from another local user's socket is refused (HTTP 403 naming the
/// way in, a token), and with a token file that user gets in with a token.
/// The other user is `mentisdbd head --url` run as uid 65534, which needs
/// this test to run as root; as any other user, or where the kernel's
/// socket table cannot be asked (netlink denied), it checks only that the
/// daemon's own user gets in, and says so.
#[test]
fn other_local_users_need_a_token() {
    use std::os::unix::process::CommandExt;
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let d = Daemon::start(&data, &[], &[]);
    let first = json!({"chain_key": "mine", "agent_id": "ada", "thought_type": "Decision", "content": "private plans"});
    assert_eq!(client().post(format!("{}/v1/thoughts", d.rest)).json(&first).send().unwrap().status(), StatusCode::OK, "the daemon's own user");
    let as_root = std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0).unwrap_or(false);
    let lookups_work = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let _accepted = listener.accept().unwrap();
        !matches!(mentisdb_native::http::peer_user::owner_of(client.local_addr().unwrap(), listener.local_addr().unwrap()), mentisdb_native::http::peer_user::PeerUser::NotLooked)
    };
    if !(as_root && lookups_work) {
        eprintln!("other_local_users_need_a_token: not root ({as_root}) or no socket lookups ({lookups_work}): checked the daemon's own user only");
        return;
    }
    // `mentisdbd head` as uid 65534 (nobody): exit status and stderr, or
    // None when this binary cannot be run as that user here.
    let head_as_nobody = |rest: &str, token: Option<&str>| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_mentisdbd"));
        cmd.uid(65534).gid(65534).current_dir("/").env("HOME", "/tmp").env_remove("MENTISDB_DIR").env_remove("MENTISDB_API_TOKEN").env_remove("MENTISDB_TOKENS_FILE");
        cmd.args(["head", "--url", rest, "--chain", "mine"]);
        if let Some(t) = token {
            cmd.args(["--token", t]);
        }
        match cmd.output() {
            Ok(out) => Some((out.status.success(), String::from_utf8_lossy(&out.stderr).to_string())),
            Err(e) => {
                eprintln!("other_local_users_need_a_token: cannot run mentisdbd as uid 65534 ({e})");
                None
            }
        }
    };
    let Some((ok, err)) = head_as_nobody(&d.rest, None) else { return };
    assert!(!ok && err.contains("another local user (uid 65534)") && err.contains("mentisdbd token add"), "{err}");
    drop(d);
    // With tokens, a token is what lets a caller in, whoever it is.
    let add = std::process::Command::new(env!("CARGO_BIN_EXE_mentisdbd")).env("MENTISDB_DIR", &data).env_remove("MENTISDB_TOKENS_FILE").args(["token", "add", "shared", "--scope", "read"]).output().unwrap();
    assert!(add.status.success(), "{}", String::from_utf8_lossy(&add.stderr));
    let token = String::from_utf8(add.stdout).unwrap().trim().to_string();
    let d = Daemon::start(&data, &[], &[]);
    let (ok, err) = head_as_nobody(&d.rest, Some(&token)).unwrap();
    assert!(ok, "with a token: {err}");
    let (ok, err) = head_as_nobody(&d.rest, None).unwrap();
    assert!(!ok && !err.contains("another local user"), "no token: the token check answers: {err}");
}

/// Sends one HTTP/1.1 request on `stream`, reads its whole reply (the
/// body by its `content-length`) and returns the status line; `""` when
/// the connection closes first.
fn status_line(stream: &mut std::net::TcpStream, request: &str) -> String {
    use std::io::{BufRead, Read, Write};
    stream.write_all(request.as_bytes()).unwrap();
    let mut reader = std::io::BufReader::new(stream);
    let (mut status, mut length, mut line) = (String::new(), 0, String::new());
    reader.read_line(&mut status).unwrap();
    while reader.read_line(&mut line).unwrap() > 0 && line != "\r\n" {
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
        line.clear();
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    assert!(reader.buffer().is_empty(), "bytes after the reply");
    status.trim().to_string()
}

/// A local program holding hundreds of idle connections (more than the
/// daemon's open-file limit), some with a request's first byte sent,
/// cannot stop it from writing: it takes at most its share of connections,
/// keeps descriptors for its files, serves a caller already connected, and
/// a new caller displaces an idle connection.
#[cfg(target_os = "linux")]
#[test]
fn idle_connections_cannot_exhaust_the_daemons_files() {
    // This test's own 600 sockets, beside the other tests'.
    mentisdb_native::infra::open_files::raise_limit();
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::start_wrapped(&["prlimit", "--nofile=400:400", "--"], dir.path(), &[], &[]);
    let addr = d.rest.trim_start_matches("http://").to_string();
    let mut kept = std::net::TcpStream::connect(&addr).unwrap();
    assert!(status_line(&mut kept, "GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n").contains(" 200 "));

    let flood: Vec<std::net::TcpStream> = (0..600)
        .map(|i| {
            let mut s = std::net::TcpStream::connect(&addr).unwrap();
            if i % 2 == 0 {
                std::io::Write::write_all(&mut s, b"G").unwrap();
            }
            s
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let body = json!({"chain_key": "after-the-flood", "agent_id": "ada", "thought_type": "Decision", "content": "still writing"}).to_string();
    let append = format!("POST /v1/thoughts HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}", body.len());
    let got = status_line(&mut kept, &append);
    assert!(got.contains(" 200 "), "{got:?}: a new chain's file could not be opened under the flood; stderr: {}", d.stderr());
    assert_eq!(head(&d, "after-the-flood")["thought_count"], 1, "a new caller is served beside the flood");
    drop(flood);
    assert!(!d.stderr().contains("Too many open files"), "the daemon ran out of descriptors: {}", d.stderr());
}
