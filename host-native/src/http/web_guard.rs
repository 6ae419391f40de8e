//! The browser guard in front of every listener (REST, MCP, MentisDB 0.10's
//! `/tools/*`, the event stream, the explorer, and their HTTPS twins): no web
//! page the user opens can drive or read the daemon.
//!
//! Three rules, checked before the token check and before any handler:
//!
//! 1. **Host** (DNS rebinding, HTTP 421): a page on `evil.example` whose name
//!    is rebound to 127.0.0.1 reaches us with `Host: evil.example`. The Host
//!    must be an IP address (a browser sends one only when the page itself
//!    was loaded from that address), `localhost` or a `*.localhost` name, or
//!    a name listed in `MENTISDB_ALLOWED_HOSTS` (`*`: any). On a
//!    non-loopback bind (which needs a token, and a token is what guards
//!    there) any Host is accepted unless `MENTISDB_ALLOWED_HOSTS` is set.
//! 2. **Origin** (cross-site requests, HTTP 403): a request carrying an
//!    `Origin` must come from the daemon's own origin (the explorer,
//!    `http(s)://<the Host it asked for>`) or one listed in
//!    `MENTISDB_ALLOWED_ORIGINS`; `Origin: null` (sandboxed frames, files)
//!    is refused. Without an Origin, a browser's `Sec-Fetch-Site:
//!    cross-site` or `same-site` (an `<img>` or `<script>` of another page)
//!    is refused too, except a navigation (a link the user follows) to a
//!    page of the explorer: a link to an API path (a backup download, an
//!    export) is refused. Local clients (curl, SDKs, agents) send neither
//!    and are not affected.
//! 3. **Content type** (HTTP 415): a state-changing request (POST, PUT,
//!    PATCH, DELETE) may not carry a type a form or a `no-cors` fetch can
//!    send without a CORS preflight (`text/plain`,
//!    `application/x-www-form-urlencoded`, `multipart/form-data`). The
//!    routes then ask for their own type: JSON, or the chain import's
//!    `application/octet-stream`.
//!
//! Answers are `{"error": "..."}` like every other failure of the daemon.
//! Every answer, a refusal or one let through, carries
//! `X-Content-Type-Options: nosniff`.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::net::IpAddr;
use std::sync::Arc;

/// Which Host names the daemon answers to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum HostRule {
    /// Any (a network bind without a list, or `*` listed).
    Any,
    /// IP addresses, `localhost`, `*.localhost` and these names (lowercase, no port).
    Listed(Vec<String>),
}

/// The guard's settings, built once from the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebGuard {
    hosts: HostRule,
    /// Allowed origins, lowercase, without a trailing `/`.
    origins: Vec<String>,
}

/// Request content types a web page can send cross-origin without a
/// preflight (the Fetch standard's CORS-safelisted `Content-Type` values).
const PAGE_SENDABLE_TYPES: &[&str] = &["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"];

impl WebGuard {
    /// The guard for a daemon bound to `bind` (loopback or not), with the
    /// extra Host names of `MENTISDB_ALLOWED_HOSTS` and the extra origins
    /// of `MENTISDB_ALLOWED_ORIGINS`.
    pub fn new(bind_is_loopback: bool, allowed_hosts: &[String], allowed_origins: &[String]) -> WebGuard {
        let names: Vec<String> = allowed_hosts.iter().map(|h| host_name(h.trim())).filter(|h| !h.is_empty()).collect();
        let hosts = if names.iter().any(|h| h == "*") || (names.is_empty() && !bind_is_loopback) { HostRule::Any } else { HostRule::Listed(names) };
        let origins = allowed_origins.iter().map(|o| normalize_origin(o)).filter(|o| !o.is_empty()).collect();
        WebGuard { hosts, origins }
    }

    /// Why `method` on `path` with these headers (and, for HTTP/2, the
    /// URI's authority) is refused, or `None` to let it through.
    pub fn refusal(&self, method: &Method, path: &str, uri_authority: Option<&str>, headers: &HeaderMap) -> Option<(StatusCode, String)> {
        let host = match headers.get(header::HOST) {
            Some(v) => match v.to_str() {
                Ok(h) => Some(h.trim()),
                Err(_) => return Some((StatusCode::BAD_REQUEST, "the Host header is not text".to_string())),
            },
            None => uri_authority.map(str::trim),
        };
        if let Some(host) = host {
            if !self.host_allowed(host) {
                let shown: String = host.chars().take(100).collect();
                return Some((
                    StatusCode::MISDIRECTED_REQUEST,
                    format!("host '{shown}' is not a name this daemon answers to (a guard against DNS rebinding); use 127.0.0.1 or localhost, or list the name in MENTISDB_ALLOWED_HOSTS"),
                ));
            }
        }
        // A browser names where a request comes from even without an Origin
        // (an <img>, <script> or <iframe> of another site's page): refused
        // too, except a top-level navigation (a link the user follows, shown
        // as the page itself) to a page: a link to an API path would have the
        // browser fetch it all the same (a backup download lands in the
        // user's Downloads).
        let header_is = |name: &str, value: &str| headers.get(name).and_then(|v| v.to_str().ok()).is_some_and(|v| v.eq_ignore_ascii_case(value));
        let navigation = is_page(path) && header_is("sec-fetch-mode", "navigate") && (headers.get("sec-fetch-dest").is_none() || header_is("sec-fetch-dest", "document"));
        if headers.get(header::ORIGIN).is_none() && !navigation {
            if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
                if site.eq_ignore_ascii_case("cross-site") || site.eq_ignore_ascii_case("same-site") {
                    return Some((StatusCode::FORBIDDEN, format!("requests a web page of another site makes (Sec-Fetch-Site: {site}) are refused; list its origin in MENTISDB_ALLOWED_ORIGINS to allow it")));
                }
            }
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("(not text)");
            if !self.origin_allowed(origin, host) {
                let shown: String = origin.chars().take(100).collect();
                return Some((
                    StatusCode::FORBIDDEN,
                    format!("requests from web origin '{shown}' are refused (only the daemon's own pages may call it from a browser); list the origin in MENTISDB_ALLOWED_ORIGINS to allow it"),
                ));
            }
        }
        // (An empty body carries nothing, whatever its declared type: `curl -d ''` sends a form type.)
        let empty = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).is_some_and(|l| l.trim() == "0");
        if matches!(*method, Method::POST | Method::PUT | Method::PATCH | Method::DELETE) && !empty {
            let mime = mime_of(headers);
            if PAGE_SENDABLE_TYPES.contains(&mime.as_str()) {
                return Some((
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    format!("content type '{mime}' is refused on requests that change state (a web page can send it unasked); send application/json"),
                ));
            }
        }
        None
    }

    fn host_allowed(&self, host: &str) -> bool {
        let name = host_name(host);
        if name.parse::<IpAddr>().is_ok() || name == "localhost" || name.ends_with(".localhost") {
            return true;
        }
        match &self.hosts {
            HostRule::Any => true,
            HostRule::Listed(names) => names.contains(&name),
        }
    }

    /// Same origin as the Host asked for (either scheme: the Host passed
    /// the rule above, so the page came from this daemon), or listed.
    fn origin_allowed(&self, origin: &str, host: Option<&str>) -> bool {
        let origin = normalize_origin(origin);
        if self.origins.contains(&origin) {
            return true;
        }
        let Some(host) = host.map(str::to_ascii_lowercase) else { return false };
        origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://")) == Some(host.as_str())
    }
}

/// An origin as compared: trimmed, lowercase, without a trailing `/`.
fn normalize_origin(origin: &str) -> String {
    origin.trim().trim_end_matches('/').to_ascii_lowercase()
}

/// The host name of a `Host` value (or a listed name): lowercase, without
/// its port, brackets or trailing dot. `[::1]:9472` → `::1`.
fn host_name(host: &str) -> String {
    let host = host.trim().to_ascii_lowercase();
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else if host.matches(':').count() > 1 {
        // A bare IPv6 address (as MENTISDB_ALLOWED_HOSTS may list it).
        host.as_str()
    } else {
        host.split(':').next().unwrap_or("")
    };
    name.trim_end_matches('.').to_string()
}

/// The media type of the request (`application/json` of
/// `Application/JSON; charset=utf-8`), empty when none is given.
pub fn mime_of(headers: &HeaderMap) -> String {
    let value = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    value.split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}

/// Whether `path` is a page a link may open: the explorer's (`/` redirects
/// to it).
fn is_page(path: &str) -> bool {
    let explorer = super::explorer::PATH;
    path == "/" || path.strip_prefix(explorer).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Whether media type `mime` (as [`mime_of`] gives it) is JSON.
pub fn is_json(mime: &str) -> bool {
    mime == "application/json" || mime.ends_with("+json")
}

/// Middleware: the guard's answer, or the request goes on.
pub async fn guard(State(rule): State<Arc<WebGuard>>, request: Request, next: Next) -> Response {
    match rule.refusal(request.method(), request.uri().path(), request.uri().authority().map(|a| a.as_str()), request.headers()) {
        None => {
            let mut response = next.run(request).await;
            // No answer is read as another type than it says (a JSON body as script or HTML).
            response.headers_mut().insert(header::X_CONTENT_TYPE_OPTIONS, axum::http::HeaderValue::from_static("nosniff"));
            response
        }
        Some((status, message)) => {
            tracing::warn!(target: "mentisdb::security", status = status.as_u16(), method = %request.method(), path = %request.uri().path(), "{message}");
            let mut refused = (status, Json(serde_json::json!({ "error": message }))).into_response();
            refused.headers_mut().insert(header::X_CONTENT_TYPE_OPTIONS, axum::http::HeaderValue::from_static("nosniff"));
            refused
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(), v.parse().unwrap());
        }
        h
    }

    fn status(g: &WebGuard, method: Method, pairs: &[(&str, &str)]) -> Option<u16> {
        status_at(g, method, "/explorer/", pairs)
    }

    fn status_at(g: &WebGuard, method: Method, path: &str, pairs: &[(&str, &str)]) -> Option<u16> {
        g.refusal(&method, path, None, &headers(pairs)).map(|(s, _)| s.as_u16())
    }

    #[test]
    fn hosts_are_loopback_addresses_or_listed_names() {
        let g = WebGuard::new(true, &["mentis.lan".into()], &[]);
        for ok in ["127.0.0.1:9472", "localhost:9472", "LOCALHOST", "app.localhost:1", "[::1]:9471", "10.1.2.3:9472", "mentis.lan:9472", "mentis.lan.", "localhost."] {
            assert_eq!(status(&g, Method::GET, &[("host", ok)]), None, "{ok}");
        }
        for bad in ["evil.example:9472", "evil.example", "localhost.evil.example", "127.0.0.1.nip.io", "mentis.lan.evil.example"] {
            assert_eq!(status(&g, Method::GET, &[("host", bad)]), Some(421), "{bad}");
        }
        assert_eq!(status(&g, Method::GET, &[]), None, "no Host (HTTP/1.0): not a browser");
        assert_eq!(WebGuard::new(true, &["*".into()], &[]).refusal(&Method::GET, "/health", None, &headers(&[("host", "any.example")])), None);
        let network = WebGuard::new(false, &[], &[]);
        assert_eq!(status(&network, Method::GET, &[("host", "db.example.com")]), None, "a network bind with no list: tokens guard");
        let listed = WebGuard::new(false, &["db.example.com".into()], &[]);
        assert_eq!(status(&listed, Method::GET, &[("host", "other.example.com")]), Some(421));
    }

    #[test]
    fn origins_are_the_daemons_own_or_listed() {
        let g = WebGuard::new(true, &[], &["https://app.example.com/".into()]);
        let h = "127.0.0.1:9472";
        assert_eq!(status(&g, Method::POST, &[("host", h), ("origin", "http://127.0.0.1:9472"), ("content-type", "application/json")]), None);
        assert_eq!(status(&g, Method::POST, &[("host", h), ("origin", "https://app.example.com"), ("content-type", "application/json")]), None);
        for bad in ["http://evil.example", "http://127.0.0.1:8000", "http://localhost:9472", "null", "http://127.0.0.1:9472.evil.example"] {
            assert_eq!(status(&g, Method::POST, &[("host", h), ("origin", bad), ("content-type", "application/json")]), Some(403), "{bad}");
        }
        assert_eq!(status(&g, Method::GET, &[("host", h), ("origin", "http://evil.example")]), Some(403), "reads too (EventSource, rebinding)");
        // An <img src> or <script src> from another site sends no Origin, but says where it comes from.
        for site in ["cross-site", "same-site"] {
            assert_eq!(status(&g, Method::GET, &[("host", h), ("sec-fetch-site", site)]), Some(403), "{site}");
        }
        for site in ["same-origin", "none"] {
            assert_eq!(status(&g, Method::GET, &[("host", h), ("sec-fetch-site", site)]), None, "{site}: the daemon's own page, a typed URL");
        }
        assert_eq!(status(&g, Method::GET, &[("host", h), ("sec-fetch-site", "cross-site"), ("sec-fetch-mode", "navigate"), ("sec-fetch-dest", "document")]), None, "a link the user follows to the explorer");
        assert_eq!(status(&g, Method::GET, &[("host", h), ("sec-fetch-site", "cross-site"), ("sec-fetch-mode", "navigate"), ("sec-fetch-dest", "iframe")]), Some(403), "a hidden frame of another page");
        let link = [("host", h), ("sec-fetch-site", "cross-site"), ("sec-fetch-mode", "navigate"), ("sec-fetch-dest", "document")];
        for page in ["/", "/explorer", "/explorer/", "/explorer/app.js"] {
            assert_eq!(status_at(&g, Method::GET, page, &link), None, "a link to {page}");
        }
        for api in ["/v1/admin/backup", "/v1/chains", "/health", "/mcp", "/explorerx", "/explorer-backup"] {
            assert_eq!(status_at(&g, Method::GET, api, &link), Some(403), "a link to {api} has the browser fetch it (a download)");
        }
    }

    #[test]
    fn changes_refuse_the_types_a_page_can_send_unasked() {
        let g = WebGuard::new(true, &[], &[]);
        for t in ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "Multipart/Form-Data; boundary=x"] {
            for m in [Method::POST, Method::DELETE, Method::PUT] {
                assert_eq!(status(&g, m.clone(), &[("content-type", t)]), Some(415), "{m} {t}");
            }
            assert_eq!(status(&g, Method::GET, &[("content-type", t)]), None, "a read with {t}");
        }
        for t in ["application/json", "application/octet-stream"] {
            assert_eq!(status(&g, Method::POST, &[("content-type", t)]), None, "{t}");
        }
        assert_eq!(status(&g, Method::POST, &[]), None, "no body type: the route decides");
        assert_eq!(status(&g, Method::POST, &[("content-type", "application/x-www-form-urlencoded"), ("content-length", "0")]), None, "an empty body carries nothing");
        let mut odd = HeaderMap::new();
        odd.insert(header::HOST, axum::http::HeaderValue::from_bytes(b"\xffhost").unwrap());
        assert_eq!(g.refusal(&Method::GET, "/health", None, &odd).map(|(s, _)| s.as_u16()), Some(400), "a Host that is not text");
    }
}
