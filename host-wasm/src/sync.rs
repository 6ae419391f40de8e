//! `db.sync(url, chainKey, { verifierKey, token })`: this page's copy of a
//! chain follows a daemon's, offline-first. The core decides and verifies
//! everything (`mentisdb_core::sync`); this file only sends its requests
//! with `fetch` and persists the result like any write.

use crate::error::{self, usage_error};
use crate::js_json;
use crate::mentis_db::{durable_inner, MentisDbHandle};
use js_sys::Promise;
use mentisdb_core::sync::{SyncError, SyncReply, SyncStep, SyncSession};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

#[wasm_bindgen(js_class = MentisDb)]
impl MentisDbHandle {
    /// Makes the local chain `chainKey` equal to the daemon's at `url` (its
    /// REST base, e.g. `http://127.0.0.1:9472`): thoughts written here since
    /// the last sync are pushed (idempotent by id), then the daemon's
    /// records are pulled and stored once its checkpoint verifies with the
    /// pinned `options.verifierKey` (from the daemon's `GET /v1/identity`,
    /// pinned once), it is consistent with the checkpoint this database
    /// accepted before, and the records hash to its root. `options.token`
    /// is sent as the bearer token. Resolves with the report once durable;
    /// rejects with an `Error` whose `kind` names why (`fork` carries the
    /// two checkpoints proving it as `accepted` and `offered`; `unavailable`:
    /// the daemon could not be reached).
    #[wasm_bindgen(unchecked_return_type = "Promise<SyncReport>")]
    pub fn sync(&self, url: String, #[wasm_bindgen(js_name = chainKey)] chain_key: String, #[wasm_bindgen(unchecked_param_type = "SyncOptions")] options: JsValue) -> Promise {
        let inner = self.inner_rc();
        let run = async move {
            let options = js_json::from_js(&options, "options")?;
            let verifier = options["verifierKey"].as_str().ok_or_else(|| usage_error("options.verifierKey must be the daemon's verifier key (GET /v1/identity: verifier_key)"))?.to_string();
            let token = options["token"].as_str().map(str::to_string);
            let base = url.trim_end_matches('/').to_string();
            let mut session = MentisDbHandle::engine_of(&inner, |e| SyncSession::new(e, &chain_key, &verifier).map_err(|e| sync_error(&e)))?;
            let mut reply: Option<(u16, String)> = None;
            loop {
                let step = MentisDbHandle::engine_of(&inner, |e| session.step(e, reply.as_ref().map(|(status, body)| SyncReply { status: *status, body })).map_err(|e| sync_error(&e)))?;
                match step {
                    SyncStep::Done(report) => return Ok(js_json::to_js(&serde_json::to_value(report).expect("a report serializes"))),
                    SyncStep::Send(request) => reply = Some(post(&base, request.path, &request.body.to_string(), token.as_deref()).await?),
                }
            }
        };
        let inner = self.inner_rc();
        future_to_promise(async move {
            let outcome = run.await;
            JsFuture::from(durable_inner(&inner, outcome)).await
        })
    }
}

/// `POST base + path` with a JSON body; the status and body text.
async fn post(base: &str, path: &str, body: &str, token: Option<&str>) -> Result<(u16, String), JsValue> {
    let url = format!("{base}{path}");
    let unreachable = |e: JsValue| error::with_kind(&format!("cannot reach the daemon at {url}: {}", error::describe_js(&e)), mentisdb_core::ErrorKind::Unavailable);
    let headers = web_sys::Headers::new()?;
    headers.set("content-type", "application/json")?;
    if let Some(token) = token {
        headers.set("authorization", &format!("Bearer {token}"))?;
    }
    let init = web_sys::RequestInit::new();
    init.set_method("POST");
    init.set_headers(&headers);
    init.set_body(&JsValue::from_str(body));
    let request = web_sys::Request::new_with_str_and_init(&url, &init).map_err(unreachable)?;
    // `fetch` of whatever global this runs in (a window or a worker).
    let global = js_sys::global();
    let fetch: js_sys::Function = js_sys::Reflect::get(&global, &JsValue::from_str("fetch"))?.dyn_into().map_err(|_| usage_error("this global has no fetch()"))?;
    let pending: Promise = fetch.call1(&global, &request)?.dyn_into()?;
    let response: web_sys::Response = JsFuture::from(pending).await.map_err(unreachable)?.dyn_into()?;
    let text = JsFuture::from(response.text()?).await.map_err(unreachable)?.as_string().unwrap_or_default();
    Ok((response.status(), text))
}

/// A sync failure as a JS `Error`: `kind` is [`SyncError::code`]; a fork
/// also carries `accepted` and `offered` (the two signed checkpoints).
fn sync_error(e: &SyncError) -> JsValue {
    let err = js_sys::Error::new(&e.to_string());
    let set = |k: &str, v: &JsValue| {
        let _ = js_sys::Reflect::set(&err, &JsValue::from_str(k), v);
    };
    set("kind", &JsValue::from_str(e.code()));
    if let SyncError::Fork { accepted, offered, .. } = e {
        set("accepted", &JsValue::from_str(accepted));
        set("offered", &offered.as_deref().map_or(JsValue::NULL, JsValue::from_str));
    }
    err.into()
}
