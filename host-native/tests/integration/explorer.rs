//! The explorer page over the real `mentisdbd`: served public with its CSP
//! and content types while the API keeps requiring the token; switched off,
//! its paths are 404 like any unknown path.

use crate::common;

use common::{client, Daemon};
use reqwest::StatusCode;

#[test]
fn explorer_is_served_public_with_a_strict_csp_while_the_api_needs_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::start(dir.path(), &[("MENTISDB_API_TOKEN", "s3cret")], &[]);
    for path in ["/explorer", "/explorer/", "/explorer/index.html"] {
        let r = client().get(format!("{}{path}", d.rest)).send().unwrap();
        assert_eq!(r.status(), StatusCode::OK, "{path}");
        assert_eq!(r.headers()["content-type"], "text/html; charset=utf-8", "{path}");
        let csp = r.headers()["content-security-policy"].to_str().unwrap().to_string();
        assert!(csp.contains("default-src 'self'") && csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"), "{csp}");
        assert_eq!(r.headers()["x-content-type-options"], "nosniff");
        let page = r.text().unwrap();
        assert!(page.contains(r#"<script type="module" src="/explorer/explorer.js"></script>"#), "{page}");
    }
    let js = client().get(format!("{}/explorer/explorer.js", d.rest)).send().unwrap();
    assert_eq!(js.headers()["content-type"], "text/javascript; charset=utf-8");
    assert!(js.headers().contains_key("content-security-policy"));
    let css = client().get(format!("{}/explorer/explorer.css", d.rest)).send().unwrap();
    assert_eq!(css.headers()["content-type"], "text/css; charset=utf-8");
    let missing = client().get(format!("{}/explorer/nope.js", d.rest)).send().unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    // The page's files are public; the data is not.
    assert_eq!(client().get(format!("{}/v1/chains", d.rest)).send().unwrap().status(), StatusCode::UNAUTHORIZED);
}

#[test]
fn explorer_off_is_404_and_the_variable_switches_it_on() {
    let dir = tempfile::tempdir().unwrap();
    let off = Daemon::start(dir.path(), &[], &["--explorer", "off"]);
    for path in ["/explorer", "/explorer/", "/explorer/explorer.js"] {
        assert_eq!(client().get(format!("{}{path}", off.rest)).send().unwrap().status(), StatusCode::NOT_FOUND, "{path}");
    }
    assert_eq!(client().get(format!("{}/health", off.rest)).send().unwrap().status(), StatusCode::OK);
    drop(off);
    // MENTISDB_EXPLORER=on wins over the default; the variable is read.
    let on = Daemon::start(dir.path(), &[("MENTISDB_EXPLORER", "on")], &[]);
    assert_eq!(client().get(format!("{}/explorer", on.rest)).send().unwrap().status(), StatusCode::OK);
}

/// A person who opens the REST port in a browser lands on the explorer; an
/// unknown path's error says where the endpoint list is.
#[test]
fn the_rest_root_leads_to_the_explorer_and_unknown_paths_to_the_endpoint_list() {
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::start(dir.path(), &[], &[]);
    let no_follow = reqwest::blocking::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let root = no_follow.get(format!("{}/", d.rest)).send().unwrap();
    assert!(root.status().is_redirection(), "{}", root.status());
    assert_eq!(root.headers()["location"], "/explorer/");
    let missing = client().get(format!("{}/v1/nope", d.rest)).send().unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    assert!(missing.text().unwrap().contains("/openapi.json"));
}
