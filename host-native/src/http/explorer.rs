//! The explorer page: a dependency-free browser view of the daemon's memory.
//!
//! **Contract.** When switched on (`--explorer`, [`crate::Config::explorer`]),
//! `GET /explorer`, `/explorer/` and `/explorer/<file>` serve the page's
//! files, embedded in the binary (no CDN, no download: it works offline),
//! with their content type and a strict `Content-Security-Policy` (only this
//! origin's scripts, styles and API; no inline script, no frames). The files
//! are public, as `/health` is; the page itself calls only the REST API,
//! sending the token the user pasted, so it can see and do exactly what that
//! token may. Switched off, these paths answer 404 like any unknown path.

use crate::http::api_error::ApiError;
use axum::extract::Path;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

/// The policy sent with every file: scripts, styles, images and API calls
/// from this origin only (images may also be `data:`/`blob:` URLs the page
/// makes), no plugins, no `<base>`, never framed.
pub const CONTENT_SECURITY_POLICY: &str =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Where the page is served.
pub const PATH: &str = "/explorer";

/// One embedded file: its name under [`PATH`], content type and text.
struct File {
    name: &'static str,
    content_type: &'static str,
    text: &'static str,
}

const JS: &str = "text/javascript; charset=utf-8";

/// Every file of the page (`host-native/explorer/`).
const FILES: &[File] = &[
    File { name: "index.html", content_type: "text/html; charset=utf-8", text: include_str!("../../explorer/index.html") },
    File { name: "explorer.css", content_type: "text/css; charset=utf-8", text: include_str!("../../explorer/explorer.css") },
    File { name: "types.css", content_type: "text/css; charset=utf-8", text: include_str!("../../explorer/types.css") },
    File { name: "explorer.js", content_type: JS, text: include_str!("../../explorer/explorer.js") },
    File { name: "api.js", content_type: JS, text: include_str!("../../explorer/api.js") },
    File { name: "dom.js", content_type: JS, text: include_str!("../../explorer/dom.js") },
    File { name: "sse.js", content_type: JS, text: include_str!("../../explorer/sse.js") },
    File { name: "markdown.js", content_type: JS, text: include_str!("../../explorer/markdown.js") },
    File { name: "diff.js", content_type: JS, text: include_str!("../../explorer/diff.js") },
    File { name: "exports.js", content_type: JS, text: include_str!("../../explorer/exports.js") },
    File { name: "graph.js", content_type: JS, text: include_str!("../../explorer/graph.js") },
    File { name: "chain-graph.js", content_type: JS, text: include_str!("../../explorer/chain-graph.js") },
    File { name: "chart.js", content_type: JS, text: include_str!("../../explorer/chart.js") },
    File { name: "fact-timeline.js", content_type: JS, text: include_str!("../../explorer/fact-timeline.js") },
    File { name: "types.js", content_type: JS, text: include_str!("../../explorer/types.js") },
    File { name: "thought-edit.js", content_type: JS, text: include_str!("../../explorer/thought-edit.js") },
    File { name: "views-overview.js", content_type: JS, text: include_str!("../../explorer/views-overview.js") },
    File { name: "views-chains.js", content_type: JS, text: include_str!("../../explorer/views-chains.js") },
    File { name: "views-graph.js", content_type: JS, text: include_str!("../../explorer/views-graph.js") },
    File { name: "views-coordination.js", content_type: JS, text: include_str!("../../explorer/views-coordination.js") },
    File { name: "views-admin.js", content_type: JS, text: include_str!("../../explorer/views-admin.js") },
    File { name: "views-timeline.js", content_type: JS, text: include_str!("../../explorer/views-timeline.js") },
    File { name: "views-thought.js", content_type: JS, text: include_str!("../../explorer/views-thought.js") },
    File { name: "views-agents.js", content_type: JS, text: include_str!("../../explorer/views-agents.js") },
    File { name: "views-skills.js", content_type: JS, text: include_str!("../../explorer/views-skills.js") },
    File { name: "views-webhooks.js", content_type: JS, text: include_str!("../../explorer/views-webhooks.js") },
];

/// The file named `name` with its headers, or 404.
fn serve(name: &str) -> Response {
    let Some(file) = FILES.iter().find(|f| f.name == name) else {
        return ApiError::new(StatusCode::NOT_FOUND, format!("no explorer file '{name}'")).into_response();
    };
    let mut response = file.text.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(file.content_type));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    // The files change with the binary; revalidating is cheap on loopback.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// The routes of the page: public (no token), to be merged beside the API.
/// `GET /` sends a person who opened the REST port in a browser to the page.
pub fn router() -> Router {
    Router::new()
        .route("/", get(|| async { axum::response::Redirect::to("/explorer/") }))
        .route(PATH, get(|| async { serve("index.html") }))
        .route("/explorer/", get(|| async { serve("index.html") }))
        .route("/explorer/{file}", get(|Path(file): Path<String>| async move { serve(&file) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_is_named_once_and_the_page_loads_only_embedded_scripts() {
        let mut names = std::collections::BTreeSet::new();
        for f in FILES {
            assert!(names.insert(f.name), "{} twice", f.name);
        }
        let all = FILES.iter().map(|f| f.text).collect::<String>();
        // Every module the page imports or links is embedded.
        for reference in all.split(['"', '\'']).filter(|s| s.starts_with("./") || s.starts_with("/explorer/")) {
            let name = reference.trim_start_matches("./").trim_start_matches("/explorer/");
            assert!(name.is_empty() || names.contains(name), "{reference} is referenced but not embedded");
        }
        let index = FILES[0].text;
        assert!(!index.contains("<script>") && !index.contains(" style="), "no inline script or style in index.html");
    }

    /// A page file added to `host-native/explorer/` but not to [`FILES`]
    /// would be a 404 in the browser: every one is embedded.
    #[test]
    fn every_page_file_of_the_directory_is_embedded() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("explorer");
        for entry in std::fs::read_dir(&dir).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            if [".js", ".css", ".html"].iter().any(|ext| name.ends_with(ext)) {
                assert!(FILES.iter().any(|f| f.name == name), "{name} is in host-native/explorer/ but not in FILES");
            }
        }
    }
}
