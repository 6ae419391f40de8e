//! HTTPS: REST and MCP over TLS with a self-signed certificate the client
//! trusts; plain HTTP to the TLS port fails cleanly and the daemon keeps
//! serving; half a TLS configuration or a bad certificate is refused.

use mentisdb_native::{start, Config};
use reqwest::blocking::Client;
use serde_json::json;
use std::time::Duration;

fn self_signed(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf, String) {
    let rcgen::CertifiedKey { cert, key_pair } = rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
    let (cert_path, key_path) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert_path, cert.pem()).unwrap();
    std::fs::write(&key_path, key_pair.serialize_pem()).unwrap();
    (cert_path, key_path, cert.pem())
}

#[test]
fn rest_and_mcp_serve_https_and_plain_http_fails_cleanly() {
    let root = tempfile::tempdir().unwrap();
    let (cert, key, pem) = self_signed(root.path());
    let mut config = Config::for_dir(root.path().join("data"));
    config.tls_cert = Some(cert);
    config.tls_key = Some(key);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let daemon = rt.block_on(start(&config)).expect("daemon starts with TLS");
    assert!(daemon.listening_line().ends_with("scheme=https"), "{}", daemon.listening_line());

    let trusted = Client::builder().use_rustls_tls().add_root_certificate(reqwest::Certificate::from_pem(pem.as_bytes()).unwrap()).timeout(Duration::from_secs(10)).build().unwrap();
    let rest = format!("https://127.0.0.1:{}", daemon.rest_addr.port());
    let append = |content: &str| trusted.post(format!("{rest}/v1/thoughts")).json(&json!({"agent_id": "a", "thought_type": "Finding", "content": content})).send().unwrap();
    assert_eq!(append("over tls").status(), reqwest::StatusCode::OK);
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "tls-test", "version": "1"}}});
    let r = trusted.post(format!("https://127.0.0.1:{}/mcp", daemon.mcp_addr.port())).header("accept", "application/json, text/event-stream").json(&initialize).send().unwrap();
    assert_eq!(r.status(), reqwest::StatusCode::OK);
    assert!(r.text().unwrap().contains("mentisdb"));

    // Plain HTTP to the TLS port: an error or a refusal, not a hang.
    let plain = Client::builder().timeout(Duration::from_secs(5)).build().unwrap();
    match plain.post(format!("http://127.0.0.1:{}/v1/head", daemon.rest_addr.port())).json(&json!({})).send() {
        Err(e) => assert!(!e.is_timeout(), "plain HTTP hung: {e}"),
        Ok(r) => assert!(!r.status().is_success(), "plain HTTP was served: {}", r.status()),
    }
    // A client that does not trust the certificate is refused too.
    let untrusting = Client::builder().use_rustls_tls().timeout(Duration::from_secs(5)).build().unwrap();
    assert!(untrusting.post(format!("{rest}/v1/head")).json(&json!({})).send().is_err());
    // The daemon keeps serving.
    assert_eq!(append("still serving").status(), reqwest::StatusCode::OK);
    rt.block_on(daemon.shutdown());
}

#[test]
fn unusable_tls_files_are_refused_at_startup() {
    let root = tempfile::tempdir().unwrap();
    let (cert, _key, _) = self_signed(root.path());
    let mut config = Config::for_dir(root.path().join("data"));
    config.tls_cert = Some(cert.clone());
    config.tls_key = Some(cert);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let err = rt.block_on(start(&config)).err().expect("a certificate is not a key");
    assert!(err.to_string().contains("MENTISDB_TLS_KEY"), "{err}");
    config.tls_key = None;
    let err = rt.block_on(start(&config)).err().expect("half a TLS configuration");
    assert!(err.to_string().contains("both"), "{err}");
}

/// A port nothing listens on right now (MENTISDB_HTTPS_*_PORT=0 means "none", as in 0.10).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn https_listeners_beside_http_with_a_certificate_made_on_first_start() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let mut config = Config::for_dir(&data);
    config.https_rest_port = Some(free_port());
    config.https_mcp_port = Some(free_port());
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let daemon = rt.block_on(start(&config)).expect("daemon starts with HTTPS beside HTTP");
    let line = daemon.listening_line();
    assert!(line.contains("scheme=http ") && line.contains("https_rest=") && line.contains("https_mcp="), "{line}");
    let pem = std::fs::read_to_string(data.join("tls/cert.pem")).expect("a self-signed certificate under <dir>/tls");
    assert!(data.join("tls/key.pem").is_file());

    let trusted = Client::builder().use_rustls_tls().add_root_certificate(reqwest::Certificate::from_pem(pem.as_bytes()).unwrap()).timeout(Duration::from_secs(10)).build().unwrap();
    let https_rest = format!("https://localhost:{}", daemon.https_rest_addr.unwrap().port());
    let r = trusted.post(format!("{https_rest}/v1/thoughts")).json(&json!({"agent_id": "a", "thought_type": "Finding", "content": "over https"})).send().unwrap();
    assert_eq!(r.status(), reqwest::StatusCode::OK);
    // The plain HTTP port serves the same store.
    let plain = Client::builder().timeout(Duration::from_secs(10)).build().unwrap();
    let head: serde_json::Value = plain.post(format!("http://127.0.0.1:{}/v1/head", daemon.rest_addr.port())).json(&json!({})).send().unwrap().json().unwrap();
    assert_eq!(head["latest_thought"]["content"], "over https", "{head}");
    // HTTPS MCP: streamable HTTP and the CloudLLM endpoints.
    let https_mcp = format!("https://127.0.0.1:{}", daemon.https_mcp_addr.unwrap().port());
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "tls-test", "version": "1"}}});
    let r = trusted.post(format!("{https_mcp}/mcp")).header("accept", "application/json, text/event-stream").json(&initialize).send().unwrap();
    assert_eq!(r.status(), reqwest::StatusCode::OK);
    let r: serde_json::Value = trusted.post(format!("{https_mcp}/tools/execute")).json(&json!({"tool": "mentisdb_head", "parameters": {}})).send().unwrap().json().unwrap();
    assert_eq!(r["result"]["output"]["thought_count"], 1, "{r}");
    // A client that does not trust the certificate is refused.
    let untrusting = Client::builder().use_rustls_tls().timeout(Duration::from_secs(5)).build().unwrap();
    assert!(untrusting.get(format!("{https_rest}/health")).send().is_err());
    rt.block_on(daemon.shutdown());

    // The next start keeps the certificate.
    let daemon = rt.block_on(start(&config)).expect("restarts");
    assert_eq!(std::fs::read_to_string(data.join("tls/cert.pem")).unwrap(), pem);
    rt.block_on(daemon.shutdown());
}

#[test]
fn the_cert_command_mints_for_given_names_and_refuses_to_overwrite_without_force() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let cert = |args: &[&str]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_mentisdbd"));
        for (k, _) in std::env::vars() {
            if k.starts_with("MENTISDB_") {
                cmd.env_remove(k);
            }
        }
        cmd.arg("cert").args(args).arg("--dir").arg(&data).output().unwrap()
    };
    let out = cert(&["db.example.test", "192.0.2.10"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("sha256="));
    let pem = std::fs::read_to_string(data.join("tls/cert.pem")).unwrap();
    let again = cert(&["other.example.test"]);
    assert!(!again.status.success());
    let err = String::from_utf8_lossy(&again.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--force"), "{err}");
    assert_eq!(std::fs::read_to_string(data.join("tls/cert.pem")).unwrap(), pem, "nothing replaced");

    // The minted certificate is valid for the given name: a client that
    // resolves db.example.test to the daemon and trusts the cert connects.
    let mut config = Config::for_dir(&data);
    config.https_rest_port = Some(free_port());
    // A name other than localhost must be listed (the DNS-rebinding guard).
    config.allowed_hosts = vec!["db.example.test".into()];
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let daemon = rt.block_on(start(&config)).unwrap();
    let addr = daemon.https_rest_addr.unwrap();
    let trusted = Client::builder()
        .use_rustls_tls()
        .add_root_certificate(reqwest::Certificate::from_pem(pem.as_bytes()).unwrap())
        .resolve("db.example.test", addr)
        .resolve("other.example.test", addr)
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    assert_eq!(trusted.get(format!("https://db.example.test:{}/health", addr.port())).send().unwrap().status(), reqwest::StatusCode::OK);
    let wrong_name = trusted.get(format!("https://other.example.test:{}/health", addr.port())).send().expect_err("not valid for a name it was not minted for");
    assert!(format!("{wrong_name:?}").contains("NotValidForName"), "{wrong_name:?}");
    rt.block_on(daemon.shutdown());
    assert!(cert(&["--force", "other.example.test"]).status.success());
    assert_ne!(std::fs::read_to_string(data.join("tls/cert.pem")).unwrap(), pem);
}
