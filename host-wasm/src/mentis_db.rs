//! The exported `MentisDb` class: one open IndexedDB-backed database.
//!
//! Every method runs the core synchronously on the in-memory image
//! ([`crate::image`]). Methods that can write return a `Promise` that
//! resolves only after the IndexedDB transaction persisting the change has
//! completed; read-only methods return their result directly.

use crate::clock::DateClock;
use crate::error::{self, tool_error, usage_error};
use crate::ids::{global_crypto, CryptoIds};
use crate::image::ImageStorage;
use crate::{idb, js_json};
use js_sys::{Promise, Uint8Array};
use mentisdb_core::dispatch::replies::{MarkdownReply, RecentContextReply};
use mentisdb_core::{DbConfig, MentisDb as Engine, OpenReport};
use mentisdb_embed_static::StaticEmbedder;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};
use web_sys::IdbDatabase;

/// Prefix of the IndexedDB database behind `MentisDb.open(name)`.
const IDB_PREFIX: &str = "mentisdb/";
/// Longest accepted database name.
const MAX_NAME_LEN: usize = 128;

pub(crate) struct Inner {
    name: String,
    image: Arc<ImageStorage>,
    config: DbConfig,
    /// `None` once closed.
    open: RefCell<Option<(Engine, IdbDatabase)>>,
    /// The newest commit; each commit waits for the one before it, so
    /// commits apply in order and writes made meanwhile share one commit.
    last_commit: RefCell<Option<Promise>>,
    report: Value,
}

/// A MentisDB database persisted in IndexedDB. Create one with
/// `await MentisDb.open(name)`.
#[wasm_bindgen(js_name = MentisDb)]
pub struct MentisDbHandle {
    inner: Rc<Inner>,
}

fn database_name(name: &str) -> Result<String, JsValue> {
    if name.trim().is_empty() || name.len() > MAX_NAME_LEN {
        return Err(usage_error(&format!("database name must be 1 to {MAX_NAME_LEN} bytes, got {} bytes", name.len())));
    }
    Ok(format!("{IDB_PREFIX}{name}"))
}

/// Takes `embeddingModel` (a `Uint8Array` holding a static word-embedding
/// model, `mentisdb-embed-static`'s format) out of the options before they
/// are read as JSON, and parses it.
fn split_embedding_model(options: Option<js_sys::Object>) -> Result<(JsValue, Option<StaticEmbedder>), JsValue> {
    let Some(options) = options else { return Ok((JsValue::UNDEFINED, None)) };
    let key = JsValue::from_str("embeddingModel");
    let value = js_sys::Reflect::get(&options, &key).unwrap_or(JsValue::UNDEFINED);
    if value.is_undefined() || value.is_null() {
        return Ok((options.into(), None));
    }
    let bytes = value.dyn_into::<Uint8Array>().map_err(|_| usage_error("options.embeddingModel must be a Uint8Array"))?.to_vec();
    let model = StaticEmbedder::from_bytes(&bytes).map_err(|e| usage_error(&format!("options.embeddingModel: {e}")))?;
    let rest = js_sys::Object::assign(&js_sys::Object::new(), &options);
    let _ = js_sys::Reflect::delete_property(&rest, &key);
    Ok((rest.into(), Some(model)))
}

fn open_engine(image: &Arc<ImageStorage>, config: &DbConfig) -> Result<(Engine, OpenReport), JsValue> {
    Engine::open(image.clone(), Arc::new(DateClock), Arc::new(CryptoIds), config.clone()).map_err(|e| error::storage_error(&e))
}

/// Waits for the previous commit (whatever its outcome), then commits
/// everything pending. Resolves once it is durable.
fn commit_pending(inner: &Rc<Inner>) -> Promise {
    let previous = inner.last_commit.borrow_mut().take();
    let image = inner.image.clone();
    let database = inner.open.borrow().as_ref().map(|(_, idb)| idb.clone());
    let promise = future_to_promise(async move {
        if let Some(previous) = previous {
            let _ = JsFuture::from(previous).await;
        }
        if !image.has_pending() {
            return Ok(JsValue::UNDEFINED);
        }
        let database = database.ok_or_else(|| usage_error("the database was closed before its changes were persisted"))?;
        let batch = image.take_pending();
        if let Err(e) = idb::commit(&database, &batch).await {
            image.commit_failed(&batch);
            return Err(e);
        }
        image.commit_done();
        Ok(JsValue::UNDEFINED)
    });
    *inner.last_commit.borrow_mut() = Some(promise.clone());
    promise
}

/// Commits what is pending, then settles with `outcome`.
fn durable(inner: &Rc<Inner>, outcome: Result<JsValue, JsValue>) -> Promise {
    let commit = commit_pending(inner);
    future_to_promise(async move {
        JsFuture::from(commit).await?;
        outcome
    })
}

/// A call on the engine, run at once or, when it needed chain bytes the
/// image had left to IndexedDB, again once they are loaded back.
enum Ran<R> {
    Now(Result<R, JsValue>),
    AfterLoading(Pin<Box<dyn Future<Output = Result<R, JsValue>>>>),
}

/// Runs `run` now. If it failed reading objects whose committed bytes the
/// image released ([`ImageStorage::take_wanted`]) and changed no object,
/// the result is a future that loads them back from IndexedDB and runs
/// `run` again. (A call that changed an object before such a read would
/// apply its change twice if run again: it answers its error instead. No
/// tool does that: those that read a chain whole read before writing.)
/// The bytes loaded back are let go of after the next commit: releasing
/// them here could drop bytes a commit in flight has not yet stored.
fn run_loading<R: 'static>(inner: &Rc<Inner>, run: impl Fn(&Engine) -> Result<R, JsValue> + 'static) -> Ran<R> {
    inner.image.take_wanted();
    let changes = inner.image.changes();
    let first = MentisDbHandle::engine_of(inner, &run);
    let wanted = inner.image.take_wanted();
    if first.is_ok() || wanted.is_empty() || inner.image.changes() != changes {
        return Ran::Now(first);
    }
    let inner = inner.clone();
    Ran::AfterLoading(Box::pin(async move {
        load_back(&inner, &wanted).await?;
        MentisDbHandle::engine_of(&inner, &run)
    }))
}

/// [`durable`] for a call [`run_loading`] ran, now or once loaded.
fn durable_after(inner: &Rc<Inner>, ran: Ran<JsValue>) -> Promise {
    match ran {
        Ran::Now(outcome) => durable(inner, outcome),
        Ran::AfterLoading(later) => {
            let inner = inner.clone();
            future_to_promise(async move {
                let outcome = later.await;
                JsFuture::from(durable(&inner, outcome)).await
            })
        }
    }
}

/// Gives the image back the released bytes of `names`, read from IndexedDB.
async fn load_back(inner: &Rc<Inner>, names: &[String]) -> Result<(), JsValue> {
    let database = inner.open.borrow().as_ref().map(|(_, idb)| idb.clone()).ok_or_else(|| usage_error(&format!("database '{}' is closed", inner.name)))?;
    for name in names {
        // A commit landing during the read releases more: read again.
        let mut tries = 0;
        while !inner.image.load_back(name, &idb::load_object(&database, name).await?) {
            tries += 1;
            if tries == 3 {
                return Err(usage_error(&format!("'{name}' kept changing while it was read back from IndexedDB; call again")));
            }
        }
    }
    Ok(())
}

/// [`durable`] for code outside this file that holds the handle's state.
pub(crate) fn durable_inner(inner: &Rc<Inner>, outcome: Result<JsValue, JsValue>) -> Promise {
    durable(inner, outcome)
}

impl MentisDbHandle {
    /// The handle's shared state, for work that outlives one call (`sync`).
    pub(crate) fn inner_rc(&self) -> Rc<Inner> {
        self.inner.clone()
    }

    /// Runs `f` on the open engine of `inner`.
    pub(crate) fn engine_of<R>(inner: &Rc<Inner>, f: impl FnOnce(&Engine) -> Result<R, JsValue>) -> Result<R, JsValue> {
        match inner.open.borrow().as_ref() {
            Some((engine, _)) => f(engine),
            None => Err(usage_error(&format!("database '{}' is closed", inner.name))),
        }
    }

    fn with_engine<R>(&self, f: impl FnOnce(&Engine) -> Result<R, JsValue>) -> Result<R, JsValue> {
        Self::engine_of(&self.inner, f)
    }

    /// Calls `tool` and reads its reply as `R` (its type in `dispatch::replies`).
    fn call_typed<R: serde::de::DeserializeOwned>(&self, tool: &str, args: &JsValue) -> Result<R, JsValue> {
        let args = js_json::from_js(args, "arguments")?;
        self.with_engine(|engine| engine.call_as(tool, args).map_err(|e| tool_error(&e)))
    }

    /// Calls `tool` and hands its reply to the page as parsed from the JSON
    /// text the dispatcher wrote (no `serde_json::Value` in between: a big
    /// reply would hold several times its text in the module's memory,
    /// which never shrinks).
    fn call_read(&self, tool: &str, args: &JsValue) -> Result<JsValue, JsValue> {
        let args = js_json::from_js(args, "arguments")?;
        let outcome = self.with_engine(|engine| engine.call_raw(tool, args).map(|raw| js_json::raw_to_js(&raw)).map_err(|e| tool_error(&e)));
        // No read-only method reads a released chain object; if one ever
        // does, its bytes are loaded back for the next call.
        let wanted = self.inner.image.take_wanted();
        if !wanted.is_empty() {
            let inner = self.inner.clone();
            wasm_bindgen_futures::spawn_local(async move {
                let _ = load_back(&inner, &wanted).await;
            });
        }
        outcome
    }

    fn call_write(&self, tool: &str, args: &JsValue) -> Promise {
        let args = match js_json::from_js(args, "arguments") {
            Ok(args) => args,
            Err(e) => return Promise::reject(&e),
        };
        let tool = tool.to_string();
        let run = move |engine: &Engine| engine.call_raw(&tool, args.clone()).map(|raw| js_json::raw_to_js(&raw)).map_err(|e| tool_error(&e));
        durable_after(&self.inner, run_loading(&self.inner, run))
    }
}

#[wasm_bindgen(js_class = MentisDb)]
impl MentisDbHandle {
    /// Opens (creating when needed) the database `name`, stored in the
    /// IndexedDB database `mentisdb/<name>`; loads and verifies every chain.
    /// With `embeddingModel` (the bytes of a static word-embedding model),
    /// ranked search is hybrid: every thought is embedded in the page.
    #[wasm_bindgen(unchecked_return_type = "MentisDb")]
    pub async fn open(name: String, #[wasm_bindgen(unchecked_param_type = "OpenOptions | void")] options: Option<js_sys::Object>) -> Result<MentisDbHandle, JsValue> {
        let database = database_name(&name)?;
        let (options, model) = split_embedding_model(options)?;
        let options = js_json::from_js(&options, "options")?;
        let mut config = DbConfig::default();
        if let Some(key) = options.get("defaultChainKey") {
            let key = key.as_str().ok_or_else(|| usage_error("options.defaultChainKey must be a string"))?;
            mentisdb_core::limits::check_key("defaultChainKey", key).map_err(|e| usage_error(&e.to_string()))?;
            config.default_chain_key = key.to_string();
        }
        let crypto = global_crypto().map_err(|m| usage_error(&m))?;
        crypto.get_random_values_with_u8_array(&mut [0u8; 16]).map_err(|e| error::browser_error("crypto.getRandomValues failed", &e))?;

        let idb_database = idb::open(&database).await?;
        let segments = idb::load(&idb_database).await?;
        let image = Arc::new(ImageStorage::from_segments(&database, segments).map_err(|e| error::refused(&e.0, mentisdb_core::ErrorKind::Storage))?);
        let (engine, report) = open_engine(&image, &config)?;
        if let Some(model) = model {
            engine.set_embedding_provider(Some(Arc::new(model)));
        }
        let inner = Rc::new(Inner { name, image, config, open: RefCell::new(Some((engine, idb_database))), last_commit: RefCell::new(None), report: serde_json::to_value(&report).expect("an open report serializes") });
        // Torn tails cut and segments compacted at open are made durable first.
        JsFuture::from(commit_pending(&inner)).await?;
        // The engine holds every thought now; the chains' bytes stay in IndexedDB.
        inner.image.release_committed();
        Ok(MentisDbHandle { inner })
    }

    /// Deletes the IndexedDB database behind `name` and everything in it.
    /// Close every open handle on it first (the deletion waits for them).
    #[wasm_bindgen(js_name = deleteDatabase)]
    pub async fn delete_database(name: String) -> Result<(), JsValue> {
        idb::delete(&database_name(&name)?).await
    }

    /// Every tool with its description and JSON Schema (as MCP `tools/list`).
    #[wasm_bindgen(js_name = toolSpecs, unchecked_return_type = "ToolSpec[]")]
    pub fn tool_specs() -> JsValue {
        js_json::to_js(&serde_json::to_value(mentisdb_core::tool_specs()).expect("tool specs serialize"))
    }

    /// The name given to `open`.
    #[wasm_bindgen(getter)]
    pub fn name(&self) -> String {
        self.inner.name.clone()
    }

    /// The IndexedDB database holding this database's objects.
    #[wasm_bindgen(getter, js_name = storageName)]
    pub fn storage_name(&self) -> String {
        self.inner.image.database().to_string()
    }

    /// The chain used when a call omits `chain_key`.
    #[wasm_bindgen(getter, js_name = defaultChainKey)]
    pub fn default_chain_key(&self) -> String {
        self.inner.config.default_chain_key.clone()
    }

    /// What opening found: chains verified (with torn-tail bytes cut) and
    /// objects refused.
    #[wasm_bindgen(getter, js_name = openReport, unchecked_return_type = "OpenReport")]
    pub fn open_report(&self) -> JsValue {
        js_json::to_js(&self.inner.report)
    }

    /// Whether `close()` was called.
    #[wasm_bindgen(getter, js_name = isClosed)]
    pub fn is_closed(&self) -> bool {
        self.inner.open.borrow().is_none()
    }

    /// Waits for pending writes, then closes the IndexedDB connection.
    /// Every later call fails with "database '<name>' is closed".
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn close(&self) -> Promise {
        let inner = self.inner.clone();
        let commit = commit_pending(&inner);
        future_to_promise(async move {
            let committed = JsFuture::from(commit).await;
            if let Some((_, database)) = inner.open.borrow_mut().take() {
                database.close();
            }
            committed.map(|_| JsValue::UNDEFINED)
        })
    }

    /// Calls any tool of the MCP spec by name with plain-object arguments;
    /// resolves with the tool's result once any write it made is durable.
    #[wasm_bindgen(unchecked_return_type = "Promise<any>")]
    pub fn call(&self, tool: &str, #[wasm_bindgen(unchecked_param_type = "Record<string, unknown> | void")] args: JsValue) -> Promise {
        self.call_write(tool, &args)
    }

    /// `mentisdb_bootstrap`: writes one Summary/Checkpoint thought only into an empty chain.
    #[wasm_bindgen(unchecked_return_type = "Promise<BootstrapResult>")]
    pub fn bootstrap(&self, #[wasm_bindgen(unchecked_param_type = "BootstrapArgs")] args: JsValue) -> Promise {
        self.call_write("mentisdb_bootstrap", &args)
    }

    /// `mentisdb_append`: resolves with the stored thought once it is durable.
    #[wasm_bindgen(unchecked_return_type = "Promise<AppendResult>")]
    pub fn append(&self, #[wasm_bindgen(unchecked_param_type = "AppendArgs")] args: JsValue) -> Promise {
        self.call_write("mentisdb_append", &args)
    }

    /// `mentisdb_append_retrospective`: a lesson learned (role Retrospective).
    #[wasm_bindgen(js_name = appendRetrospective, unchecked_return_type = "Promise<AppendResult>")]
    pub fn append_retrospective(&self, #[wasm_bindgen(unchecked_param_type = "RetrospectiveArgs")] args: JsValue) -> Promise {
        self.call_write("mentisdb_append_retrospective", &args)
    }

    /// `mentisdb_search`: the newest `limit` matches of ANDed filters, in append order.
    #[wasm_bindgen(unchecked_return_type = "SearchResult")]
    pub fn search(&self, #[wasm_bindgen(unchecked_param_type = "SearchArgs | void")] args: JsValue) -> Result<JsValue, JsValue> {
        self.call_read("mentisdb_search", &args)
    }

    /// `mentisdb_traverse_thoughts`: a filtered chunk from an anchor, with cursors.
    #[wasm_bindgen(unchecked_return_type = "TraverseResult")]
    pub fn traverse(&self, #[wasm_bindgen(unchecked_param_type = "TraverseArgs | void")] args: JsValue) -> Result<JsValue, JsValue> {
        self.call_read("mentisdb_traverse_thoughts", &args)
    }

    /// `mentisdb_recent_context`: the prompt snippet (the tool's `prompt` field).
    #[wasm_bindgen(js_name = recentContext)]
    pub fn recent_context(&self, #[wasm_bindgen(unchecked_param_type = "RecentContextArgs | void")] args: JsValue) -> Result<String, JsValue> {
        let reply: RecentContextReply = self.call_typed("mentisdb_recent_context", &args)?;
        Ok(reply.prompt)
    }

    /// `mentisdb_memory_markdown`: the Markdown text (the tool's `markdown` field).
    #[wasm_bindgen(js_name = memoryMarkdown)]
    pub fn memory_markdown(&self, #[wasm_bindgen(unchecked_param_type = "SearchArgs | void")] args: JsValue) -> Result<String, JsValue> {
        let reply: MarkdownReply = self.call_typed("mentisdb_memory_markdown", &args)?;
        Ok(reply.markdown)
    }

    /// `mentisdb_head`: thought count, head hash, latest thought, integrity, location.
    #[wasm_bindgen(unchecked_return_type = "HeadResult")]
    pub fn head(&self, #[wasm_bindgen(js_name = chainKey)] chain_key: Option<String>) -> Result<JsValue, JsValue> {
        self.call_read("mentisdb_head", &js_json::to_js(&json!({ "chain_key": chain_key })))
    }

    /// `mentisdb_get_thought`: one thought by `thought_id`, `thought_hash` or `thought_index`.
    #[wasm_bindgen(js_name = getThought, unchecked_return_type = "GetThoughtResult")]
    pub fn get_thought(&self, #[wasm_bindgen(unchecked_param_type = "GetThoughtArgs")] args: JsValue) -> Result<JsValue, JsValue> {
        self.call_read("mentisdb_get_thought", &args)
    }

    /// `mentisdb_list_chains`: every chain with counts and storage location.
    #[wasm_bindgen(js_name = listChains, unchecked_return_type = "ListChainsResult")]
    pub fn list_chains(&self) -> Result<JsValue, JsValue> {
        self.call_read("mentisdb_list_chains", &JsValue::UNDEFINED)
    }

    /// The chain object's bytes, exactly the file the native daemon writes
    /// for it (`chains/<name>.mdb` or `.jsonl`). A promise: the page keeps
    /// a chain's committed bytes in IndexedDB only, and reads them back.
    #[wasm_bindgen(js_name = exportChain, unchecked_return_type = "Promise<Uint8Array>")]
    pub fn export_chain(&self, #[wasm_bindgen(js_name = chainKey)] chain_key: Option<String>) -> Promise {
        let run = move |engine: &Engine| engine.export_chain(chain_key.as_deref()).map(|(_, _, bytes)| bytes).map_err(|e| tool_error(&e));
        let ran = run_loading(&self.inner, run);
        future_to_promise(async move {
            let bytes = match ran {
                Ran::Now(outcome) => outcome?,
                Ran::AfterLoading(later) => later.await?,
            };
            Ok(Uint8Array::from(bytes.as_slice()).into())
        })
    }

    /// Adds a chain exported by `exportChain` or copied from a daemon's
    /// `chains/` directory. The bytes are decoded and verified exactly as the
    /// daemon verifies a chain at startup (a torn tail is cut); a chain key
    /// that already exists here is refused. Resolves once it is durable.
    #[wasm_bindgen(js_name = importChain, unchecked_return_type = "Promise<ImportResult>")]
    pub fn import_chain(&self, bytes: &[u8]) -> Promise {
        // Checking that the key is free may read a chain object the page
        // keeps in IndexedDB only (one open refused): `run_loading`.
        let (bytes, name) = (bytes.to_vec(), self.inner.name.clone());
        let run = move |engine: &Engine| {
            let report = engine.import_chain(&bytes).map_err(|e| error::import_error(&e, &name))?;
            Ok(js_json::to_js(&serde_json::to_value(&report).expect("an import report serializes")))
        };
        durable_after(&self.inner, run_loading(&self.inner, run))
    }
}
