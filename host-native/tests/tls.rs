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
