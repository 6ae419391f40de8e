//! IndexedDB I/O: open a database, load every segment (or one object's),
//! commit a batch.
//!
//! One object store, `segments`, keyed by `[object name, byte offset]`
//! with `Uint8Array` values (see [`crate::image`]). Every commit is one
//! readwrite transaction opened with `durability: "strict"`, and it counts
//! as done only on the transaction's `complete` event.

use crate::error::browser_error;
use crate::image::{PersistBatch, PersistOp};
use js_sys::{Array, Function, Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{IdbDatabase, IdbFactory, IdbKeyRange, IdbOpenDbRequest, IdbRequest, IdbTransaction, IdbTransactionMode};

/// The object store holding every segment.
const STORE: &str = "segments";
/// Schema version of the IndexedDB database.
const VERSION: u32 = 1;

#[wasm_bindgen]
extern "C" {
    /// An `IDBDatabase` seen through the options-taking `transaction`
    /// overload, which web-sys only exposes behind an unstable cfg.
    #[wasm_bindgen(extends = IdbDatabase, js_name = IDBDatabase)]
    type DurableDatabase;

    /// `IDBDatabase.transaction(store, mode, { durability })`.
    #[wasm_bindgen(catch, method, js_class = "IDBDatabase", js_name = transaction)]
    fn transaction_with_options(this: &DurableDatabase, store: &str, mode: IdbTransactionMode, options: &Object) -> Result<IdbTransaction, JsValue>;
}

fn factory() -> Result<IdbFactory, JsValue> {
    let value = Reflect::get(&js_sys::global(), &JsValue::from_str("indexedDB")).map_err(|e| browser_error("cannot reach indexedDB", &e))?;
    value.dyn_into::<IdbFactory>().map_err(|_| crate::error::usage_error("this JavaScript environment has no IndexedDB (globalThis.indexedDB)"))
}

/// A promise with its two settle functions.
fn deferred() -> (Promise, Function, Function) {
    let mut settle = None;
    let promise = Promise::new(&mut |resolve, reject| settle = Some((resolve, reject)));
    let (resolve, reject) = settle.expect("the Promise executor runs synchronously");
    (promise, resolve, reject)
}

/// Waits for `success` or `error` on a request. The handlers live only
/// while this future runs and are detached before they are dropped.
async fn request_done(request: &IdbRequest) -> Result<JsValue, JsValue> {
    let (promise, resolve, reject) = deferred();
    let ok_req = request.clone();
    let on_success = Closure::<dyn FnMut()>::new(move || {
        let _ = resolve.call1(&JsValue::UNDEFINED, &ok_req.result().unwrap_or(JsValue::UNDEFINED));
    });
    let err_req = request.clone();
    let on_error = Closure::<dyn FnMut()>::new(move || {
        let cause = err_req.error().ok().flatten().map(JsValue::from).unwrap_or_else(|| JsValue::from_str("request failed"));
        let _ = reject.call1(&JsValue::UNDEFINED, &cause);
    });
    request.set_onsuccess(Some(on_success.as_ref().unchecked_ref()));
    request.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    let out = JsFuture::from(promise).await;
    request.set_onsuccess(None);
    request.set_onerror(None);
    out
}

/// Waits for a transaction's `complete` event; `error` or `abort` fail it.
async fn transaction_done(tx: &IdbTransaction) -> Result<(), JsValue> {
    let (promise, resolve, reject) = deferred();
    let on_complete = Closure::<dyn FnMut()>::new(move || {
        let _ = resolve.call0(&JsValue::UNDEFINED);
    });
    let err_tx = tx.clone();
    let on_fail = Closure::<dyn FnMut()>::new(move || {
        let cause = err_tx.error().map(JsValue::from).unwrap_or_else(|| JsValue::from_str("transaction aborted"));
        let _ = reject.call1(&JsValue::UNDEFINED, &cause);
    });
    tx.set_oncomplete(Some(on_complete.as_ref().unchecked_ref()));
    tx.set_onerror(Some(on_fail.as_ref().unchecked_ref()));
    tx.set_onabort(Some(on_fail.as_ref().unchecked_ref()));
    let out = JsFuture::from(promise).await;
    tx.set_oncomplete(None);
    tx.set_onerror(None);
    tx.set_onabort(None);
    out.map(|_| ())
}

/// Opens (creating when needed) the IndexedDB database `name`.
pub(crate) async fn open(name: &str) -> Result<IdbDatabase, JsValue> {
    let what = format!("cannot open IndexedDB database '{name}'");
    let request: IdbOpenDbRequest = factory()?.open_with_u32(name, VERSION).map_err(|e| browser_error(&what, &e))?;
    let upgrade_req = request.clone();
    let on_upgrade = Closure::<dyn FnMut()>::new(move || {
        if let Ok(db) = upgrade_req.result() {
            let db: IdbDatabase = db.unchecked_into();
            if !db.object_store_names().contains(STORE) {
                // A failure here aborts the upgrade, which fails the open request.
                let _ = db.create_object_store(STORE);
            }
        }
    });
    request.set_onupgradeneeded(Some(on_upgrade.as_ref().unchecked_ref()));
    let out = request_done(&request).await;
    request.set_onupgradeneeded(None);
    let db: IdbDatabase = out.map_err(|e| browser_error(&what, &e))?.unchecked_into();
    Ok(db)
}

/// Deletes the IndexedDB database `name` (waits until no connection is open).
pub(crate) async fn delete(name: &str) -> Result<(), JsValue> {
    let what = format!("cannot delete IndexedDB database '{name}'");
    let request = factory()?.delete_database(name).map_err(|e| browser_error(&what, &e))?;
    request_done(&request).await.map_err(|e| browser_error(&what, &e)).map(|_| ())
}

/// Every segment `(name, offset, bytes)` in key order.
pub(crate) async fn load(db: &IdbDatabase) -> Result<Vec<(String, u64, Vec<u8>)>, JsValue> {
    let what = format!("cannot read IndexedDB database '{}'", db.name());
    let tx = db.transaction_with_str(STORE).map_err(|e| browser_error(&what, &e))?;
    let store = tx.object_store(STORE).map_err(|e| browser_error(&what, &e))?;
    let keys = store.get_all_keys().map_err(|e| browser_error(&what, &e))?;
    let values = store.get_all().map_err(|e| browser_error(&what, &e))?;
    transaction_done(&tx).await.map_err(|e| browser_error(&what, &e))?;
    let keys: Array = keys.result().map_err(|e| browser_error(&what, &e))?.unchecked_into();
    let values: Array = values.result().map_err(|e| browser_error(&what, &e))?.unchecked_into();
    let mut out = Vec::with_capacity(keys.length() as usize);
    for (key, value) in keys.iter().zip(values.iter()) {
        let described = format!("{key:?}");
        let bad = || crate::error::usage_error(&format!("IndexedDB database '{}' holds a record MentisDB did not write (key {described})", db.name()));
        let key: Array = key.dyn_into().map_err(|_| bad())?;
        let name = key.get(0).as_string().ok_or_else(bad)?;
        let offset = key.get(1).as_f64().filter(|o| *o >= 0.0 && o.fract() == 0.0).ok_or_else(bad)? as u64;
        let bytes = value.dyn_into::<Uint8Array>().map_err(|_| bad())?.to_vec();
        out.push((name, offset, bytes));
    }
    Ok(out)
}

/// The bytes of object `name` as stored (its segments joined in order).
pub(crate) async fn load_object(db: &IdbDatabase, name: &str) -> Result<Vec<u8>, JsValue> {
    let what = format!("cannot read '{name}' from IndexedDB database '{}'", db.name());
    let tx = db.transaction_with_str(STORE).map_err(|e| browser_error(&what, &e))?;
    let store = tx.object_store(STORE).map_err(|e| browser_error(&what, &e))?;
    let values = store.get_all_with_key(all_segments(name)?.as_ref()).map_err(|e| browser_error(&what, &e))?;
    transaction_done(&tx).await.map_err(|e| browser_error(&what, &e))?;
    let values: Array = values.result().map_err(|e| browser_error(&what, &e))?.unchecked_into();
    let mut bytes = Vec::new();
    for value in values.iter() {
        let segment = value.dyn_into::<Uint8Array>().map_err(|_| crate::error::usage_error(&format!("{what}: a segment is not bytes")))?;
        let start = bytes.len();
        bytes.resize(start + segment.length() as usize, 0);
        segment.copy_to(&mut bytes[start..]);
    }
    Ok(bytes)
}

fn segment_key(name: &str, offset: u64) -> JsValue {
    Array::of2(&JsValue::from_str(name), &JsValue::from_f64(offset as f64)).into()
}

fn all_segments(name: &str) -> Result<IdbKeyRange, JsValue> {
    IdbKeyRange::bound(&segment_key(name, 0), &Array::of2(&JsValue::from_str(name), &JsValue::from_f64(f64::INFINITY)))
}

/// Applies `batch` in one strict-durability readwrite transaction and
/// returns once it has committed.
pub(crate) async fn commit(db: &IdbDatabase, batch: &PersistBatch) -> Result<(), JsValue> {
    let what = format!("IndexedDB commit to '{}' failed; the change is in memory but not durable", db.name());
    let options = Object::new();
    Reflect::set(&options, &JsValue::from_str("durability"), &JsValue::from_str("strict")).map_err(|e| browser_error(&what, &e))?;
    let tx = db.unchecked_ref::<DurableDatabase>().transaction_with_options(STORE, IdbTransactionMode::Readwrite, &options).map_err(|e| browser_error(&what, &e))?;
    let store = tx.object_store(STORE).map_err(|e| browser_error(&what, &e))?;
    let queued: Result<(), JsValue> = (|| {
        for op in &batch.ops {
            match op {
                PersistOp::Rewrite { name, bytes } => {
                    store.delete(all_segments(name)?.as_ref())?;
                    store.put_with_key(&Uint8Array::from(bytes.as_slice()), &segment_key(name, 0))?;
                }
                PersistOp::Extend { name, offset, bytes } => {
                    store.put_with_key(&Uint8Array::from(bytes.as_slice()), &segment_key(name, *offset))?;
                }
                PersistOp::Delete { name } => {
                    store.delete(all_segments(name)?.as_ref())?;
                }
            }
        }
        Ok(())
    })();
    if let Err(e) = queued {
        let _ = tx.abort();
        return Err(browser_error(&what, &e));
    }
    transaction_done(&tx).await.map_err(|e| browser_error(&what, &e))
}

