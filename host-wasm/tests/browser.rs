//! The JS API in headless Chromium (wasm-bindgen-test): the tool surface,
//! errors, persistence across re-open, durability of acknowledged writes,
//! export/import, and the daemon-written fixture. Each test uses its own
//! IndexedDB database and deletes it first.
#![cfg(target_arch = "wasm32")]

use js_sys::{Promise, Reflect, Uint8Array};
use mentisdb_core::{DbConfig, FixedClock, MemoryStorage, MentisDb as Engine, SequentialIds, ToolError};
use mentisdb_wasm::image::ImageStorage;
use mentisdb_wasm::MentisDbHandle as Db;
use serde_json::{json, Value};
use std::sync::Arc;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn js(v: Value) -> JsValue {
    js_sys::JSON::parse(&v.to_string()).unwrap()
}

fn rs(v: &JsValue) -> Value {
    if v.is_undefined() {
        return Value::Null;
    }
    serde_json::from_str(&String::from(js_sys::JSON::stringify(v).unwrap())).unwrap()
}

async fn ok(p: Promise) -> Value {
    match JsFuture::from(p).await {
        Ok(v) => rs(&v),
        Err(e) => panic!("promise rejected: {}", message(&e)),
    }
}

async fn rejected(p: Promise) -> JsValue {
    match JsFuture::from(p).await {
        Ok(v) => panic!("promise resolved with {:?} but should have rejected", rs(&v)),
        Err(e) => e,
    }
}

fn message(e: &JsValue) -> String {
    let err = e.dyn_ref::<js_sys::Error>().unwrap_or_else(|| panic!("not a JS Error: {e:?}"));
    String::from(err.message())
}

fn kind(e: &JsValue) -> String {
    Reflect::get(e, &"kind".into()).unwrap().as_string().unwrap_or_default()
}

/// A fresh, empty database.
/// `exportChain(key)`'s bytes.
async fn export(db: &Db, key: &str) -> Vec<u8> {
    let bytes = JsFuture::from(db.export_chain(Some(key.into()))).await.unwrap_or_else(|e| panic!("exportChain failed: {}", message(&e)));
    bytes.unchecked_into::<Uint8Array>().to_vec()
}

async fn fresh(name: &str) -> Db {
    Db::delete_database(name.to_string()).await.expect("delete database");
    Db::open(name.to_string(), None).await.unwrap_or_else(|e| panic!("open {name}: {}", message(&e)))
}

async fn reopen(db: Db) -> Db {
    let name = db.name();
    ok(db.close()).await;
    Db::open(name, None).await.unwrap_or_else(|e| panic!("reopen: {}", message(&e)))
}

/// What the core itself answers for the same call (the daemon's text).
fn core_error(tool: &str, args: Value) -> String {
    let (engine, _) = Engine::open(Arc::new(MemoryStorage::new()), Arc::new(FixedClock::new(0, 1)), Arc::new(SequentialIds::default()), DbConfig::default()).unwrap();
    engine.call(tool, args).expect_err("the core refuses this call").to_string()
}

#[wasm_bindgen_test]
fn image_storage_passes_conformance_in_the_browser() {
    mentisdb_core::storage::conformance::run_all(&ImageStorage::new("conformance"));
}

#[wasm_bindgen_test]
async fn tool_surface_through_the_js_api() {
    let db = fresh("surface").await;
    let boot = ok(db.bootstrap(js(json!({"chain_key": "proj", "content": "What this memory is for."})))).await;
    assert_eq!(boot["bootstrapped"], true);
    let again = ok(db.bootstrap(js(json!({"chain_key": "proj", "content": "ignored"})))).await;
    assert_eq!(again["bootstrapped"], false, "bootstrap never overwrites");
    let a = ok(db.append(js(json!({"chain_key": "proj", "agent_id": "a1", "thought_type": "Decision", "content": "Store chains in IndexedDB.", "tags": ["storage"]})))).await;
    assert_eq!(a["thought"]["index"], 1);
    assert_eq!(a["thought"]["prev_hash"], boot["head_hash"]);
    assert_eq!(a["thought"]["id"].as_str().unwrap().len(), 36, "uuid from crypto.getRandomValues");
    let ts = a["thought"]["timestamp"].as_str().unwrap();
    assert!(ts.starts_with("20") && ts.ends_with('Z'), "RFC 3339 timestamp from Date.now(): {ts}");
    ok(db.append(js(json!({"chain_key": "proj", "agent_id": "a1", "thought_type": "Insight", "content": "Appends extend one segment each.", "refs": [1]})))).await;
    let retro = ok(db.append_retrospective(js(json!({"chain_key": "proj", "content": "Await the commit before acknowledging."})))).await;
    assert_eq!(retro["thought"]["role"], "Retrospective");

    let found = rs(&db.search(js(json!({"chain_key": "proj", "text": "indexeddb"}))).unwrap());
    assert_eq!(found["thoughts"].as_array().unwrap().len(), 1);
    assert_eq!(found["thoughts"][0]["content"], "Store chains in IndexedDB.");
    let tagged = rs(&db.search(js(json!({"chain_key": "proj", "tags_any": ["storage"]}))).unwrap());
    assert_eq!(tagged["thoughts"][0]["index"], 1);

    let page = rs(&db.traverse(js(json!({"chain_key": "proj", "anchor_boundary": "genesis", "include_anchor": true, "chunk_size": 2}))).unwrap());
    assert_eq!(page["thoughts"].as_array().unwrap().len(), 2);
    assert_eq!(page["has_more"], true);
    assert_eq!(page["thoughts"][1]["index"], 1);

    let prompt = db.recent_context(js(json!({"chain_key": "proj", "last_n": 2}))).unwrap();
    assert!(prompt.contains("Await the commit"), "{prompt}");
    let md = db.memory_markdown(js(json!({"chain_key": "proj"}))).unwrap();
    assert!(md.contains("Store chains in IndexedDB."), "{md}");

    let head = rs(&db.head(Some("proj".into())).unwrap());
    assert_eq!(head["thought_count"], 4);
    assert_eq!(head["integrity_ok"], true);
    assert_eq!(head["head_hash"], retro["head_hash"]);
    assert!(head["storage_location"].as_str().unwrap().starts_with("indexeddb://mentisdb/surface/chains/proj."), "{head}");

    let t = rs(&db.get_thought(js(json!({"chain_key": "proj", "thought_index": 2}))).unwrap());
    assert_eq!(t["thought"]["content"], "Appends extend one segment each.");
    let chains = rs(&db.list_chains().unwrap());
    assert_eq!(chains["chain_keys"], json!(["proj"]));

    // The generic call reaches every tool, including the agent registry.
    let agents = ok(db.call("mentisdb_list_agents", js(json!({"chain_key": "proj"})))).await;
    assert!(agents.to_string().contains("a1"), "{agents}");
    let genesis = ok(db.call("mentisdb_get_genesis_thought", js(json!({"chain_key": "proj"})))).await;
    assert_eq!(genesis["thought"]["index"], 0);
    let names: Vec<String> = rs(&Db::tool_specs()).as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap().to_string()).collect();
    for tool in ["mentisdb_bootstrap", "mentisdb_append", "mentisdb_search", "mentisdb_traverse_thoughts", "mentisdb_head", "mentisdb_upsert_agent"] {
        assert!(names.iter().any(|n| n == tool), "toolSpecs lacks {tool}: {names:?}");
    }
    ok(db.close()).await;
}

#[wasm_bindgen_test]
async fn default_chain_key_option() {
    Db::delete_database("defaults".into()).await.unwrap();
    let opts: js_sys::Object = js(json!({"defaultChainKey": "browser-brain"})).unchecked_into();
    let db = Db::open("defaults".into(), Some(opts)).await.unwrap();
    assert_eq!(db.default_chain_key(), "browser-brain");
    let a = ok(db.append(js(json!({"thought_type": "Finding", "content": "no chain_key given"})))).await;
    assert_eq!(rs(&db.head(None).unwrap())["head_hash"], a["head_hash"]);
    assert_eq!(rs(&db.list_chains().unwrap())["chain_keys"], json!(["browser-brain"]));
    ok(db.close()).await;
}

#[wasm_bindgen_test]
async fn errors_are_js_errors_with_the_daemon_text() {
    let db = fresh("errors").await;
    let e = rejected(db.call("mentisdb_nope", JsValue::UNDEFINED)).await;
    assert_eq!(message(&e), ToolError::UnknownTool("mentisdb_nope".into()).to_string());
    assert_eq!(kind(&e), "unknown_tool");

    let bad = json!({"chain_key": "c", "thought_type": "Insigth", "content": "x"});
    let e = rejected(db.append(js(bad.clone()))).await;
    assert_eq!(message(&e), core_error("mentisdb_append", bad), "same text as the core/daemon");
    assert!(message(&e).contains("Insigth"));
    assert_eq!(kind(&e), "invalid_arguments");

    let missing = json!({"chain_key": "c", "thought_index": 7});
    let e = db.get_thought(js(missing.clone())).expect_err("no such thought");
    assert_eq!(message(&e), core_error("mentisdb_get_thought", missing));
    assert_eq!(kind(&e), "not_found");

    let e = rejected(db.export_chain(Some("never-written".into()))).await;
    assert!(message(&e).contains("never-written"), "{}", message(&e));

    // Arguments that are not JSON data are refused by the API itself.
    let cyclic = js_sys::Object::new();
    Reflect::set(&cyclic, &"self".into(), &cyclic).unwrap();
    let e = db.search(cyclic.into()).expect_err("cyclic object");
    assert!(message(&e).starts_with("arguments must be plain JSON data"), "{}", message(&e));

    ok(db.close()).await;
    let e = db.head(None).expect_err("closed");
    assert_eq!(message(&e), "database 'errors' is closed");
    let e = rejected(db.append(js(json!({"thought_type": "Finding", "content": "late"})))).await;
    assert_eq!(message(&e), "database 'errors' is closed");
}

#[wasm_bindgen_test]
async fn memory_survives_close_and_reopen() {
    let db = fresh("persist").await;
    let mut last = Value::Null;
    for i in 0..5 {
        last = ok(db.append(js(json!({"chain_key": "p", "thought_type": "Finding", "content": format!("persisted thought {i}"), "tags": [format!("t{i}")]})))).await;
    }
    ok(db.call("mentisdb_upsert_agent", js(json!({"chain_key": "p", "agent_id": "p", "display_name": "Persistence Tester"})))).await;
    let db = reopen(db).await;
    let report = rs(&db.open_report());
    assert_eq!(report["chains"][0]["thought_count"], 5, "{report}");
    assert_eq!(report["refused"], json!([]));
    let head = rs(&db.head(Some("p".into())).unwrap());
    assert_eq!(head["head_hash"], last["head_hash"]);
    assert_eq!(head["integrity_ok"], true);
    let found = rs(&db.search(js(json!({"chain_key": "p", "tags_any": ["t3"]}))).unwrap());
    assert_eq!(found["thoughts"][0]["content"], "persisted thought 3");
    let agent = ok(db.call("mentisdb_get_agent", js(json!({"chain_key": "p", "agent_id": "p"})))).await;
    assert!(agent.to_string().contains("Persistence Tester"), "registry sidecar persisted: {agent}");
    // The chain continues where it stopped.
    let next = ok(db.append(js(json!({"chain_key": "p", "thought_type": "Finding", "content": "after reopen"})))).await;
    assert_eq!(next["thought"]["index"], 5);
    assert_eq!(next["thought"]["prev_hash"], last["head_hash"]);
    let db = reopen(db).await;
    assert_eq!(rs(&db.head(Some("p".into())).unwrap())["thought_count"], 6);
    ok(db.close()).await;
}

/// Claims in the browser: the same rules as the daemon (one holder, fencing
/// tokens, a stale token refused), kept in IndexedDB across a reopen.
#[wasm_bindgen_test]
async fn claims_and_fenced_appends_in_the_browser() {
    let db = fresh("claims").await;
    let got = ok(db.call("mentisdb_claim", js(json!({"chain_key": "tasks", "key": "render", "holder": "tab-1", "ttl_ms": 600000})))).await;
    assert_eq!((got["ok"].clone(), got["claim"]["fencing_token"].clone()), (json!(true), json!(1)), "{got}");
    let other = ok(db.call("mentisdb_claim", js(json!({"chain_key": "tasks", "key": "render", "holder": "tab-2"})))).await;
    assert_eq!(other["held_by"], "tab-1");
    let fenced = ok(db.append(js(json!({"chain_key": "tasks", "agent_id": "tab-1", "thought_type": "ActionTaken", "content": "rendered", "fencing": {"key": "render", "token": 1}})))).await;
    assert_eq!(fenced["thought"]["tags"], json!(["mentisdb:fence:1:render"]));
    let e = rejected(db.append(js(json!({"chain_key": "tasks", "agent_id": "tab-1", "thought_type": "ActionTaken", "content": "stale", "fencing": {"key": "render", "token": 2}})))).await;
    assert_eq!(kind(&e), "conflict", "{}", message(&e));
    let db = reopen(db).await;
    let held = ok(db.call("mentisdb_list_claims", js(json!({"chain_key": "tasks"})))).await;
    assert_eq!(held["claims"][0]["holder"], "tab-1", "the lease is derived from the stored chain: {held}");
    ok(db.close()).await;
}

/// Reviews, facts and presence in the browser: the same tools as the
/// daemon; reviews and facts are derived from the stored chain after a
/// reopen, and a heartbeat is kept in IndexedDB beside the chain.
#[wasm_bindgen_test]
async fn reviews_facts_and_presence_in_the_browser() {
    let db = fresh("coordination").await;
    let review = ok(db.call("mentisdb_request_review", js(json!({"chain_key": "tabs", "subject": "publish the draft", "reviewers": ["tab-2"], "agent_id": "tab-1"})))).await;
    let id = review["review_id"].clone();
    let decided = ok(db.call("mentisdb_decide_review", js(json!({"chain_key": "tabs", "review_id": id, "decision": "approved", "agent_id": "tab-2"})))).await;
    assert_eq!(decided["ok"], true, "{decided}");
    let again = ok(db.call("mentisdb_decide_review", js(json!({"chain_key": "tabs", "review_id": id, "decision": "rejected", "agent_id": "tab-2"})))).await;
    assert_eq!((again["reason"].clone(), again["decision"].clone()), (json!("already_decided"), json!("approved")), "{again}");
    ok(db.call("mentisdb_record_fact", js(json!({"chain_key": "tabs", "subject": "theme", "predicate": "is", "object": "dark", "valid_from": "2026-01-01T00:00:00Z"})))).await;
    ok(db.call("mentisdb_record_fact", js(json!({"chain_key": "tabs", "subject": "theme", "predicate": "is", "object": "light", "valid_from": "2026-02-01T00:00:00Z"})))).await;
    ok(db.call("mentisdb_heartbeat", js(json!({"chain_key": "tabs", "agent_id": "tab-1", "current_action": "editing"})))).await;
    let db = reopen(db).await;
    let reviews = ok(db.call("mentisdb_list_reviews", js(json!({"chain_key": "tabs", "include_decided": true})))).await;
    assert_eq!(reviews["reviews"][0]["decided_by"], "tab-2", "{reviews}");
    let facts = ok(db.call("mentisdb_query_facts", js(json!({"chain_key": "tabs", "subject": "theme", "point_in_time": "2026-01-15T00:00:00Z"})))).await;
    assert_eq!(facts["facts"][0]["object"], "dark", "{facts}");
    let present = ok(db.call("mentisdb_list_presence", js(json!({"chain_key": "tabs"})))).await;
    assert_eq!(present["agents"][0]["current_action"], "editing", "{present}");
    ok(db.close()).await;
}

#[wasm_bindgen_test]
async fn an_acknowledged_append_is_already_committed() {
    let db = fresh("durable").await;
    let a = ok(db.append(js(json!({"chain_key": "d", "thought_type": "Finding", "content": "acknowledged"})))).await;
    // A second connection loads only what IndexedDB committed.
    let other = Db::open("durable".into(), None).await.unwrap();
    assert_eq!(rs(&other.head(Some("d".into())).unwrap())["head_hash"], a["head_hash"]);
    ok(other.close()).await;
    ok(db.close()).await;
}

#[wasm_bindgen_test]
async fn concurrent_appends_share_commits_and_stay_ordered() {
    let db = fresh("group").await;
    let pending: Vec<Promise> = (0..40).map(|i| db.append(js(json!({"chain_key": "g", "thought_type": "Finding", "content": format!("burst {i}")})))).collect();
    let all = ok(js_sys::Promise::all(&pending.into_iter().collect::<js_sys::Array>())).await;
    assert_eq!(all.as_array().unwrap().len(), 40);
    let db = reopen(db).await;
    let head = rs(&db.head(Some("g".into())).unwrap());
    assert_eq!(head["thought_count"], 40);
    assert_eq!(head["integrity_ok"], true);
    let page = rs(&db.traverse(js(json!({"chain_key": "g", "anchor_boundary": "genesis", "include_anchor": true, "chunk_size": 1000}))).unwrap());
    let contents: Vec<&str> = page["thoughts"].as_array().unwrap().iter().map(|t| t["content"].as_str().unwrap()).collect();
    assert_eq!(contents, (0..40).map(|i| format!("burst {i}")).collect::<Vec<_>>());
    ok(db.close()).await;
}

#[wasm_bindgen_test]
async fn committed_chain_bytes_are_read_back_from_indexeddb() {
    // Each awaited append commits, and the page then keeps the chain's
    // bytes in IndexedDB only: an export reads them back, a later append
    // still extends the object, and the tool's export (through `call`)
    // loads them back and runs again.
    let db = fresh("read-back").await;
    for text in ["first memory", "second memory"] {
        ok(db.append(js(json!({"chain_key": "kept", "thought_type": "Finding", "content": text})))).await;
    }
    let before = export(&db, "kept").await;
    ok(db.append(js(json!({"chain_key": "kept", "thought_type": "Finding", "content": "third memory"})))).await;
    let after = export(&db, "kept").await;
    assert!(after.len() > before.len() && after.starts_with(&before), "the chain only grew: {} then {} bytes", before.len(), after.len());
    ok(db.append(js(json!({"chain_key": "kept", "thought_type": "Finding", "content": "fourth memory"})))).await;
    let reply = ok(db.call("mentisdb_export_chain", js(json!({"chain_key": "kept"})))).await;
    let db = reopen(db).await;
    let reopened = export(&db, "kept").await;
    assert_eq!(reply["byte_count"].as_u64(), Some(reopened.len() as u64), "{reply}");
    assert!(reopened.starts_with(&after));
    assert_eq!(rs(&db.head(Some("kept".into())).unwrap())["thought_count"], 4);
    ok(db.close()).await;
}

#[wasm_bindgen_test]
async fn export_import_round_trip_and_refusals() {
    let src = fresh("export-src").await;
    for text in ["alpha memory", "beta memory", "gamma memory"] {
        ok(src.append(js(json!({"chain_key": "moving", "thought_type": "Finding", "content": text})))).await;
    }
    let head = rs(&src.head(Some("moving".into())).unwrap());
    let bytes = export(&src, "moving").await;
    assert!(bytes.starts_with(b"MDBCHAIN"), "native binary format");

    let dst = fresh("export-dst").await;
    let imported = ok(dst.import_chain(&bytes)).await;
    assert_eq!(imported["chain_key"], "moving");
    assert_eq!(imported["thought_count"], 3);
    assert_eq!(imported["head_hash"], head["head_hash"]);
    assert_eq!(export(&dst, "moving").await, bytes, "export(import(x)) == x");

    let e = rejected(dst.import_chain(&bytes)).await;
    assert_eq!(message(&e), "chain 'moving' already exists in database 'export-dst'; import refuses to overwrite it");
    let e = rejected(dst.import_chain(b"not a chain at all")).await;
    assert_eq!(message(&e), "cannot import: not a MentisDB chain object (unknown header)");

    // A flipped byte inside the first thought (valid records follow it):
    // corruption, refused. (A damaged *last* record reads as a torn tail.)
    let mut tampered = bytes.clone();
    let at = tampered.windows(5).position(|w| w == b"alpha").unwrap();
    tampered[at] = b'G';
    let other = fresh("export-tampered").await;
    let e = rejected(other.import_chain(&tampered)).await;
    assert!(message(&e).starts_with("cannot import: corrupt record at byte offset"), "{}", message(&e));
    assert!(rs(&other.list_chains().unwrap())["chain_keys"].as_array().unwrap().is_empty(), "nothing was added");

    // A torn tail (a half-written frame) is cut, as the daemon does.
    let mut torn = bytes.clone();
    torn.extend_from_slice(&[40, 0, 0, 0, 1, 2]);
    let t = ok(other.import_chain(&torn)).await;
    assert_eq!(t["torn_tail_bytes"], 6);
    assert_eq!(t["head_hash"], head["head_hash"]);

    // Imports are durable and the imported chain keeps growing.
    let dst = reopen(dst).await;
    let next = ok(dst.append(js(json!({"chain_key": "moving", "thought_type": "Finding", "content": "delta memory"})))).await;
    assert_eq!(next["thought"]["prev_hash"], head["head_hash"]);
    for db in [src, dst, other] {
        ok(db.close()).await;
    }
}

#[wasm_bindgen_test]
async fn a_daemon_written_chain_imports() {
    let bytes = include_bytes!("fixtures/daemon-chain.mdb");
    let head_hash = include_str!("fixtures/daemon-chain.head");
    let db = fresh("daemon-import").await;
    let imported = ok(db.import_chain(bytes)).await;
    assert_eq!(imported["chain_key"], "daemon-notes");
    assert_eq!(imported["thought_count"], 4);
    assert_eq!(imported["head_hash"], head_hash);
    let found = rs(&db.search(js(json!({"chain_key": "daemon-notes", "text": "move between hosts"}))).unwrap());
    assert_eq!(found["thoughts"][0]["agent_id"], "daemon-agent");
    // The daemon forgot its last thought: the browser verifies the chain and reads it as forgotten.
    let forgotten = ok(db.call("mentisdb_get_thought", js(json!({"chain_key": "daemon-notes", "thought_index": 3})))).await;
    assert_eq!(forgotten["thought"]["content"], "");
    assert_eq!(forgotten["thought"]["forgotten"]["reason"], "fixture: a forgotten thought");
    assert_eq!(forgotten["thought"]["hash"], head_hash);
    let none = rs(&db.search(js(json!({"chain_key": "daemon-notes", "text": "zeta-5150"}))).unwrap());
    assert_eq!(none["thoughts"], json!([]));
    let db = reopen(db).await;
    assert_eq!(rs(&db.head(Some("daemon-notes".into())).unwrap())["head_hash"], head_hash);
    assert_eq!(Uint8Array::from(&bytes[..]).to_vec(), export(&db, "daemon-notes").await);
    ok(db.close()).await;
}

#[wasm_bindgen_test]
async fn a_schema_1_chain_reads_extends_and_forgets_in_the_browser() {
    let bytes = include_bytes!("fixtures/daemon-chain-schema1.mdb");
    let head_hash = include_str!("fixtures/daemon-chain-schema1.head");
    let db = fresh("schema1").await;
    let imported = ok(db.import_chain(bytes)).await;
    assert_eq!((imported["thought_count"].as_u64(), imported["head_hash"].as_str()), (Some(3), Some(head_hash)));
    let next = ok(db.call("mentisdb_append", js(json!({"chain_key": "daemon-notes", "thought_type": "Finding", "content": "written in the browser"})))).await;
    assert_eq!((next["thought"]["schema_version"].as_u64(), next["thought"]["prev_hash"].as_str()), (Some(2), Some(head_hash)));
    let reply = ok(db.call("mentisdb_forget_thought", js(json!({"chain_key": "daemon-notes", "thought_index": 1, "reason": "browser test"})))).await;
    assert_eq!(reply["migrated_thoughts"], 3);
    assert_eq!(reply["thought"]["content"], "");
    let db = reopen(db).await;
    let head = rs(&db.head(Some("daemon-notes".into())).unwrap());
    assert_eq!((head["thought_count"].as_u64(), head["integrity_ok"].as_bool()), (Some(4), Some(true)));
    assert_eq!(head["head_hash"], reply["head_hash"]);
    let exported = export(&db, "daemon-notes").await;
    assert!(!exported.windows(23).any(|w| w == b"Chains move between hos"), "the forgotten content left the export");
    ok(db.close()).await;
}

#[wasm_bindgen_test]
async fn skill_registry_through_call_and_across_reopen() {
    let db = fresh("skills").await;
    ok(db.call("mentisdb_upsert_agent", js(json!({"chain_key": "s", "agent_id": "author", "display_name": "Skill Author"})))).await;
    let md = "---\nname: Deploy Service\ndescription: Ship the service safely\ntags: [ops]\ntriggers: [ship it]\n---\n# Deploy Service\n\nRun `make deploy`.\n";
    let up = ok(db.call("mentisdb_upload_skill", js(json!({"chain_key": "s", "agent_id": "author", "content": md})))).await;
    let skill_id = up["skill"]["skill_id"].as_str().unwrap().to_string();
    let db = reopen(db).await;
    let found = ok(db.call("mentisdb_search_skill", js(json!({"chain_key": "s", "tags_any": ["ops"]})))).await;
    assert_eq!(found["skills"][0]["skill_id"], skill_id.as_str(), "{found}");
    let read = ok(db.call("mentisdb_read_skill", js(json!({"chain_key": "s", "skill_id": skill_id})))).await;
    assert_eq!(read["content"], md, "the skill text round-trips byte for byte through IndexedDB");
    let e = rejected(db.call("mentisdb_upload_skill", js(json!({"chain_key": "s", "agent_id": "nobody", "content": md})))).await;
    assert!(message(&e).contains("nobody"), "{}", message(&e));
    ok(db.close()).await;
}

/// The exported verifiers accept the core's proofs and checkpoints and
/// refuse a proof or note with one bit changed.
#[wasm_bindgen_test]
fn proofs_and_checkpoints_verify_in_the_browser() {
    use mentisdb_core::checkpoint::{origin, verifier_key, CheckpointSigner, TreeHead};
    use mentisdb_core::merkle::{leaf_hash, MerkleTree};
    use mentisdb_wasm::verify::{verify_checkpoint, verify_consistency, verify_inclusion};
    let mut tree = MerkleTree::new();
    for i in 0..13u8 {
        tree.push_leaf_hash(leaf_hash(&[i; 32]));
    }
    let hex = |h: &[u8; 32]| h.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let root = hex(&tree.root(13).unwrap());
    let proof: Vec<String> = tree.inclusion_proof(5, 13).unwrap().iter().map(hex).collect();
    let leaf = hex(&tree.leaf(5).unwrap());
    assert!(verify_inclusion(&leaf, 5.0, 13.0, proof.clone(), &root).unwrap());
    assert!(!verify_inclusion(&leaf, 6.0, 13.0, proof.clone(), &root).unwrap());
    let mut bent = proof.clone();
    let flipped = if bent[0].starts_with('0') { "1" } else { "0" };
    bent[0].replace_range(0..1, flipped);
    assert!(!verify_inclusion(&leaf, 5.0, 13.0, bent, &root).unwrap());
    assert!(verify_inclusion("zz", 5.0, 13.0, proof, &root).is_err(), "bad hex throws");

    let consistency: Vec<String> = tree.consistency_proof(7, 13).unwrap().iter().map(hex).collect();
    let first_root = hex(&tree.root(7).unwrap());
    assert!(verify_consistency(7.0, 13.0, consistency.clone(), &first_root, &root).unwrap());
    assert!(!verify_consistency(7.0, 13.0, consistency, &root, &root).unwrap());

    let signer = CheckpointSigner::new("mentisdb-browser", &[9; 32]).unwrap();
    let note = signer.sign(&TreeHead { origin: origin(signer.name(), "c"), tree_size: 13, root: tree.root(13).unwrap() });
    let key = verifier_key(signer.name(), &signer.public_key());
    let head = rs(&verify_checkpoint(&note, &key).unwrap());
    assert_eq!(head, json!({"origin": "mentisdb-browser/c", "tree_size": 13, "root": root}));
    assert!(verify_checkpoint(&note.replace("\n13\n", "\n14\n"), &key).is_err(), "a changed size breaks the signature");
    let other = CheckpointSigner::new("mentisdb-browser", &[8; 32]).unwrap();
    assert!(verify_checkpoint(&note, &verifier_key(other.name(), &other.public_key())).is_err(), "another key did not sign it");
}
