//! The `sync` export (world `plugin-sync`, `--features sync`): the core's
//! offline-first sync ([`mentisdb_core::sync`]) with its requests sent over
//! `wasi:http/outgoing-handler`. The core decides and verifies everything;
//! this file only moves bytes.

use crate::bindings::exports::mentisdb::memory::sync::{Guest, SyncFailure, SyncReport};
use crate::engine::engine;
use crate::exports::Component;
use mentisdb_core::sync::{SyncError, SyncReply, SyncSession, SyncStep};
use wasi::http::outgoing_handler;
use wasi::http::types::{Fields, Method, OutgoingBody, OutgoingRequest, Scheme};
use wasi::io::streams::StreamError;

/// Largest response body read (a records page is at most about 11 MiB of base64).
const MAX_RESPONSE_BYTES: usize = 64 << 20;

impl Guest for Component {
    fn sync(url: String, chain_key: String, verifier_key: String, token: Option<String>) -> Result<SyncReport, SyncFailure> {
        let db = engine().map_err(|e| failure("local", e.to_string()))?;
        let base = Base::parse(&url)?;
        let mut session = SyncSession::new(&db, &chain_key, &verifier_key).map_err(|e| from_sync(&e))?;
        let mut reply: Option<(u16, String)> = None;
        loop {
            match session.step(&db, reply.as_ref().map(|(status, body)| SyncReply { status: *status, body })).map_err(|e| from_sync(&e))? {
                SyncStep::Done(r) => {
                    return Ok(SyncReport {
                        chain_key: r.chain_key,
                        pushed: r.pushed,
                        replayed: r.replayed,
                        skipped_forgotten: r.skipped_forgotten,
                        skipped_claims: r.skipped_claims,
                        pulled: r.pulled,
                        tree_size: r.tree_size,
                        root: r.root,
                        head_hash: r.head_hash,
                        checkpoint: r.checkpoint,
                    })
                }
                SyncStep::Send(request) => reply = Some(base.post(request.path, request.body.to_string().as_bytes(), token.as_deref())?),
            }
        }
    }
}

fn failure(kind: &str, message: String) -> SyncFailure {
    SyncFailure { kind: kind.to_string(), message, accepted: None, offered: None }
}

fn from_sync(e: &SyncError) -> SyncFailure {
    let mut f = failure(&e.code().replace('_', "-"), e.to_string());
    if let SyncError::Fork { accepted, offered, .. } = e {
        f.accepted = Some(accepted.clone());
        f.offered = offered.clone();
    }
    f
}

/// The daemon's REST base: `http(s)://authority[/prefix]`.
struct Base {
    scheme: Scheme,
    authority: String,
    prefix: String,
}

impl Base {
    fn parse(url: &str) -> Result<Base, SyncFailure> {
        let bad = || failure("invalid-arguments", format!("url must be http://host:port or https://host:port, got '{url}'"));
        let (scheme, rest) = if let Some(rest) = url.strip_prefix("http://") {
            (Scheme::Http, rest)
        } else if let Some(rest) = url.strip_prefix("https://") {
            (Scheme::Https, rest)
        } else {
            return Err(bad());
        };
        let (authority, prefix) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
        if authority.is_empty() {
            return Err(bad());
        }
        let prefix = prefix.trim_end_matches('/');
        Ok(Base { scheme, authority: authority.to_string(), prefix: if prefix.is_empty() { String::new() } else { format!("/{prefix}") } })
    }

    /// `POST` a JSON body to `path`; the status and the body text.
    fn post(&self, path: &str, body: &[u8], token: Option<&str>) -> Result<(u16, String), SyncFailure> {
        let unreachable = |what: String| failure("unavailable", format!("cannot reach the daemon at {}: {what}", self.authority));
        let mut headers = vec![("content-type".to_string(), b"application/json".to_vec())];
        if let Some(token) = token {
            headers.push(("authorization".to_string(), format!("Bearer {token}").into_bytes()));
        }
        let fields = Fields::from_list(&headers).map_err(|e| failure("invalid-arguments", format!("a header is not allowed: {e:?}")))?;
        let request = OutgoingRequest::new(fields);
        let refused = |_| unreachable("the request was refused by the host".to_string());
        request.set_method(&Method::Post).map_err(refused)?;
        request.set_scheme(Some(&self.scheme)).map_err(refused)?;
        request.set_authority(Some(&self.authority)).map_err(refused)?;
        request.set_path_with_query(Some(&format!("{}{path}", self.prefix))).map_err(refused)?;
        let outgoing = request.body().map_err(refused)?;
        let response = outgoing_handler::handle(request, None).map_err(|e| unreachable(format!("{e:?}")))?;
        {
            let stream = outgoing.write().map_err(refused)?;
            // blocking_write_and_flush takes at most 4096 bytes at a time.
            for chunk in body.chunks(4096) {
                stream.blocking_write_and_flush(chunk).map_err(|e| unreachable(format!("{e:?}")))?;
            }
        }
        OutgoingBody::finish(outgoing, None).map_err(|e| unreachable(format!("{e:?}")))?;
        response.subscribe().block();
        let incoming = match response.get() {
            Some(Ok(Ok(r))) => r,
            Some(Ok(Err(e))) => return Err(unreachable(format!("{e:?}"))),
            _ => return Err(unreachable("no response".to_string())),
        };
        let status = incoming.status();
        let body = incoming.consume().map_err(refused)?;
        let stream = body.stream().map_err(refused)?;
        let mut text = Vec::new();
        loop {
            match stream.blocking_read(64 << 10) {
                Ok(chunk) => text.extend_from_slice(&chunk),
                Err(StreamError::Closed) => break,
                Err(e) => return Err(unreachable(format!("reading the response: {e:?}"))),
            }
            if text.len() > MAX_RESPONSE_BYTES {
                return Err(failure("bad-reply", format!("a response over {MAX_RESPONSE_BYTES} bytes")));
            }
        }
        drop(stream);
        Ok((status, String::from_utf8_lossy(&text).into_owned()))
    }
}
