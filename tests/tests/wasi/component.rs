//! The WASI component inside wasmtime: the spec walk through `call`, the
//! typed exports, storage conformance inside the component, instances
//! sharing a directory, and chains moving between the component and the
//! core's verification in both directions.
//!
//! Needs the component built first (`scripts/stages/50-wasi.sh` does it):
//! `cargo build -p mentisdb-wasi --target wasm32-wasip2`.

use crate::wasi_loader;

use mentisdb_core::{DbConfig, FixedClock, MemoryStorage, MentisDb, SequentialIds, Storage};
use mentisdb_native::FsStorage;
use mentisdb_tests::spec_walk::{run, spec_walk, CallError};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;
use wasi_loader::{append_request, search_request, wit, PluginHost, PluginInstance};

fn instance(dir: &Path) -> PluginInstance {
    PluginHost::shared().instantiate(Some(dir)).expect("instantiate")
}

fn core_db(storage: Arc<dyn Storage>) -> (MentisDb, mentisdb_core::OpenReport) {
    MentisDb::open(storage, Arc::new(FixedClock::new(1_795_000_000_000, 7)), Arc::new(SequentialIds::default()), DbConfig::default()).expect("open")
}

fn core_call(db: &MentisDb, tool: &str, args: Value) -> Result<Value, CallError> {
    db.call(tool, args).map_err(|e| CallError { kind: e.kind().to_string(), message: e.to_string() })
}

#[test]
fn spec_walk_through_call_answers_like_the_core() {
    let (db, _) = core_db(Arc::new(MemoryStorage::new()));
    let core_vars = run(&spec_walk("walk"), |tool, args| core_call(&db, tool, args));

    let dir = tempfile::tempdir().unwrap();
    let mut plugin = instance(dir.path());
    let wasi_vars = run(&spec_walk("walk"), |tool, args| plugin.call_walk(tool, args));
    // Same captured names; hashes differ only because timestamps and ids do.
    assert_eq!(core_vars.keys().collect::<Vec<_>>(), wasi_vars.keys().collect::<Vec<_>>());
}

#[test]
fn error_messages_are_the_core_text_in_a_record() {
    let (db, _) = core_db(Arc::new(MemoryStorage::new()));
    let dir = tempfile::tempdir().unwrap();
    let mut plugin = instance(dir.path());
    let cases = [
        ("mentisdb_append", json!({"thought_type": "Insigth", "content": "x"})),
        ("mentisdb_append", json!({"thought_type": "Insight", "content": "x", "refs": [5]})),
        ("mentisdb_get_thought", json!({"thought_index": 3})),
        ("mentisdb_nope", json!({})),
        ("mentisdb_search", json!("not an object")),
    ];
    for (tool, args) in cases {
        let want = db.call(tool, args.clone()).expect_err("core refuses");
        let got = plugin.call(tool, &args).expect_err("component refuses");
        assert_eq!(got.message, want.to_string(), "{tool} {args}");
        assert_eq!(got.code, want.kind(), "{tool} {args}");
    }
    let e = plugin.call_raw("mentisdb_append", "{not json").unwrap_err();
    assert_eq!((e.kind, e.code.as_str()), (wit::ErrorKind::InvalidArguments, "invalid_arguments"));
    assert!(e.message.contains("malformed JSON"), "{}", e.message);
    let e = plugin.call("mentisdb_nope", &json!({})).unwrap_err();
    assert_eq!(e.kind, wit::ErrorKind::UnknownTool);
    let e = plugin.call("mentisdb_get_thought", &json!({"thought_index": 3})).unwrap_err();
    assert_eq!(e.kind, wit::ErrorKind::NotFound);
}

#[test]
fn typed_exports_match_call() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = instance(dir.path());
    let boot = wit::BootstrapRequest {
        chain_key: Some("typed".into()),
        agent_id: None,
        agent_name: None,
        agent_owner: None,
        content: "Typed exports walk.".into(),
        importance: None,
        tags: vec!["bootstrap".into()],
        concepts: vec![],
        storage_adapter: None,
    };
    let b = p.bootstrap(&boot).unwrap();
    assert!(b.bootstrapped);
    assert_eq!(b.thought_count, 1);
    let again = p.bootstrap(&boot).unwrap();
    assert_eq!((again.bootstrapped, again.thought_count, &again.head_hash), (false, 1, &b.head_hash));

    let mut req = append_request("typed", wit::ThoughtType::Decision, "Ship the component with a self-test export.");
    req.agent_id = Some("planner".into());
    req.agent_name = Some("Planner".into());
    req.role = Some(wit::ThoughtRole::WorkingMemory);
    req.importance = Some(0.9);
    req.confidence = Some(0.75);
    req.tags = vec!["wasi".into()];
    req.concepts = vec!["plugin".into()];
    let t1 = p.append(&req).unwrap();
    assert_eq!((t1.index, t1.thought_type, t1.role), (1, wit::ThoughtType::Decision, wit::ThoughtRole::WorkingMemory));
    assert_eq!(t1.prev_hash, b.head_hash);
    assert_eq!((t1.importance, t1.confidence), (0.9, Some(0.75)));
    assert_eq!(t1.agent_name, "Planner");

    let mut req = append_request("typed", wit::ThoughtType::Mistake, "Forgot the preopen.");
    req.refs = vec![1];
    req.session_id = Some("session-7".into());
    // Supports, not Corrects: a corrected thought is hidden from search (as in 0.10).
    req.relations = vec![wit::RelationRequest { kind: wit::RelationKind::Supports, target_id: None, target_index: Some(1), chain_key: None }];
    let t2 = p.append(&req).unwrap();
    assert_eq!((t2.refs.clone(), t2.prev_hash.as_deref()), (vec![1], Some(t1.hash.as_str())));
    // Typed relations and the session reach the stored thought.
    assert_eq!(t2.session_id.as_deref(), Some("session-7"));
    assert_eq!(t2.relations.len(), 1);
    let rel = &t2.relations[0];
    assert_eq!((rel.kind, rel.target_id.as_str(), rel.target_index, rel.chain_key.as_deref()), (wit::RelationKind::Supports, t1.id.as_str(), Some(1), None));

    // The typed thought is the call's thought, field for field.
    let via_call = p.call("mentisdb_get_thought", &json!({"chain_key": "typed", "thought_index": 2})).unwrap();
    assert_eq!(via_call["thought"]["hash"], json!(t2.hash));
    assert_eq!(via_call["thought"]["id"], json!(t2.id));
    assert_eq!(via_call["thought"]["timestamp"], json!(t2.timestamp));
    assert_eq!(via_call["thought"]["content"], json!(t2.content));
    assert_eq!(via_call["thought"]["session_id"], json!("session-7"));
    assert_eq!(via_call["thought"]["relations"][0]["target_index"], json!(1));

    let mut s = search_request("typed");
    s.thought_types = vec![wit::ThoughtType::Decision, wit::ThoughtType::Mistake];
    let found = p.search(&s).unwrap();
    assert_eq!(found.iter().map(|t| t.index).collect::<Vec<_>>(), vec![1, 2]);
    s.roles = vec![wit::ThoughtRole::WorkingMemory];
    s.text = Some("SELF-TEST".into());
    assert_eq!(p.search(&s).unwrap().iter().map(|t| t.index).collect::<Vec<_>>(), vec![1]);
    let mut s = search_request("typed");
    s.limit = Some(1);
    assert_eq!(p.search(&s).unwrap()[0].index, 2);
    let via_call = p.call("mentisdb_search", &json!({"chain_key": "typed"})).unwrap();
    assert_eq!(via_call["thoughts"].as_array().unwrap().len(), p.search(&search_request("typed")).unwrap().len());

    let head = p.head(Some("typed")).unwrap();
    assert_eq!((head.thought_count, head.head_hash.as_deref(), head.integrity_ok), (3, Some(t2.hash.as_str()), true));
    assert_eq!(head.latest_thought.as_ref().map(|t| t.index), Some(2));
    assert_eq!(head.chain_key, "typed");
    assert!(head.storage_location.starts_with("/data/chains/typed."), "{}", head.storage_location);
    let via_call = p.call("mentisdb_head", &json!({"chain_key": "typed"})).unwrap();
    assert_eq!(via_call["storage_location"], json!(head.storage_location));

    let empty = p.head(None).unwrap();
    assert_eq!((empty.chain_key.as_str(), empty.thought_count, empty.latest_thought.is_none()), ("borganism-brain", 0, true));

    let prompt = p.recent_context(Some("typed"), Some(1)).unwrap();
    assert!(prompt.contains("Forgot the preopen.") && !prompt.contains("Ship the component"), "{prompt}");
    let via_call = p.call("mentisdb_recent_context", &json!({"chain_key": "typed", "last_n": 1})).unwrap();
    assert_eq!(via_call["prompt"], json!(prompt));

    // Typed errors are records with the daemon's text.
    let mut bad = append_request("typed", wit::ThoughtType::Insight, "dangling");
    bad.refs = vec![42];
    let e = p.append(&bad).unwrap_err();
    assert_eq!((e.kind, e.code.as_str()), (wit::ErrorKind::AppendRejected, "append_rejected"));
    assert!(e.message.contains("42"), "{}", e.message);
    let mut s = search_request("typed");
    s.since = Some("yesterday".into());
    assert_eq!(p.search(&s).unwrap_err().kind, wit::ErrorKind::InvalidArguments);
}

#[test]
fn every_thought_type_and_role_round_trips_through_typed_append() {
    use mentisdb_core::{ThoughtRole, ThoughtType};
    let dir = tempfile::tempdir().unwrap();
    let mut p = instance(dir.path());
    let types = [
        wit::ThoughtType::PreferenceUpdate, wit::ThoughtType::UserTrait, wit::ThoughtType::RelationshipUpdate,
        wit::ThoughtType::Finding, wit::ThoughtType::Insight, wit::ThoughtType::FactLearned,
        wit::ThoughtType::PatternDetected, wit::ThoughtType::Hypothesis, wit::ThoughtType::Mistake,
        wit::ThoughtType::Correction, wit::ThoughtType::AssumptionInvalidated, wit::ThoughtType::Constraint,
        wit::ThoughtType::Plan, wit::ThoughtType::Subgoal, wit::ThoughtType::Decision, wit::ThoughtType::StrategyShift,
        wit::ThoughtType::Wonder, wit::ThoughtType::Question, wit::ThoughtType::Idea, wit::ThoughtType::Experiment,
        wit::ThoughtType::ActionTaken, wit::ThoughtType::TaskComplete, wit::ThoughtType::Checkpoint,
        wit::ThoughtType::StateSnapshot, wit::ThoughtType::Handoff, wit::ThoughtType::Summary,
        wit::ThoughtType::Surprise, wit::ThoughtType::LessonLearned, wit::ThoughtType::Reframe, wit::ThoughtType::Goal,
        wit::ThoughtType::LlmExtracted,
    ];
    let roles = [
        wit::ThoughtRole::Memory, wit::ThoughtRole::WorkingMemory, wit::ThoughtRole::Summary, wit::ThoughtRole::Compression,
        wit::ThoughtRole::Checkpoint, wit::ThoughtRole::Handoff, wit::ThoughtRole::Audit, wit::ThoughtRole::Retrospective,
    ];
    assert_eq!((types.len(), roles.len()), (ThoughtType::ALL.len(), ThoughtRole::ALL.len()));
    for (i, tt) in types.iter().enumerate() {
        let mut req = append_request("enums", *tt, &format!("type {i}"));
        req.role = Some(roles[i % roles.len()]);
        let t = p.append(&req).unwrap();
        assert_eq!((t.thought_type, t.role), (*tt, roles[i % roles.len()]));
        // The JSON view names the same core value, in the spec's order.
        let j = p.call("mentisdb_get_thought", &json!({"chain_key": "enums", "thought_index": i})).unwrap();
        assert_eq!(j["thought"]["thought_type"], json!(ThoughtType::ALL[i].as_str()));
        assert_eq!(j["thought"]["role"], json!(ThoughtRole::ALL[i % roles.len()].as_str()));
    }
}

#[test]
fn storage_conformance_passes_inside_the_component() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = instance(dir.path());
    p.storage_conformance().expect("no broken storage contract (a trap names it)").expect("scratch directory");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "the scratch directory is removed");
}

#[test]
fn without_a_preopen_every_call_is_an_error_not_a_trap() {
    let mut p = PluginHost::shared().instantiate(None).unwrap();
    let e = p.call("mentisdb_head", &json!({})).unwrap_err();
    assert_eq!((e.kind, e.code.as_str()), (wit::ErrorKind::Storage, "storage"));
    assert!(e.message.contains("/data") && e.message.contains("preopen"), "{}", e.message);
    assert_eq!(p.head(None).unwrap_err().kind, wit::ErrorKind::Storage);
}

#[test]
fn the_component_imports_only_wasi_and_exports_the_world() {
    let (imports, mut exports) = PluginHost::shared().interface_names();
    assert!(imports.iter().all(|i| i.starts_with("wasi:")), "non-WASI import in {imports:?}");
    assert!(imports.iter().any(|i| i.starts_with("wasi:filesystem/preopens@0.2")), "{imports:?}");
    assert!(!imports.iter().any(|i| i.starts_with("wasi:sockets") || i.starts_with("wasi:http")), "{imports:?}");
    exports.sort();
    assert_eq!(exports, ["mentisdb:memory/memory@0.1.0", "mentisdb:memory/proofs@0.1.0", "mentisdb:memory/self-test@0.1.0", "mentisdb:memory/types@0.1.0"]);
}

#[test]
fn list_tools_is_the_core_table() {
    let dir = tempfile::tempdir().unwrap();
    let tools = instance(dir.path()).list_tools();
    let names: Vec<&str> = tools.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    let core: Vec<&str> = mentisdb_core::tool_specs().iter().map(|t| t.name).collect();
    assert_eq!(names, core);
    assert!(tools[0]["input_schema"].is_object());
}

#[test]
fn instances_sharing_a_directory_one_after_another_see_each_others_writes() {
    let dir = tempfile::tempdir().unwrap();
    let first = {
        let mut a = instance(dir.path());
        a.call("mentisdb_upsert_agent", &json!({"chain_key": "shared", "agent_id": "a", "description": "first instance"})).unwrap();
        a.append(&append_request("shared", wit::ThoughtType::Finding, "written by instance A")).unwrap()
    };
    let mut b = instance(dir.path());
    let head = b.head(Some("shared")).unwrap();
    assert_eq!((head.thought_count, head.head_hash.as_deref()), (1, Some(first.hash.as_str())));
    let agent = b.call("mentisdb_get_agent", &json!({"chain_key": "shared", "agent_id": "a"})).unwrap();
    assert_eq!(agent["agent"]["description"], json!("first instance"));
    let second = b.append(&append_request("shared", wit::ThoughtType::Finding, "written by instance B")).unwrap();
    assert_eq!(second.prev_hash.as_deref(), Some(first.hash.as_str()));
    drop(b);

    let mut c = instance(dir.path());
    let all = c.search(&search_request("shared")).unwrap();
    assert_eq!(all.iter().map(|t| t.content.as_str()).collect::<Vec<_>>(), ["written by instance A", "written by instance B"]);
    assert!(c.head(Some("shared")).unwrap().integrity_ok);
}

#[test]
fn a_chain_written_by_the_component_opens_and_verifies_in_the_daemon_storage() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = instance(dir.path());
    run(&spec_walk("cross"), |tool, args| p.call_walk(tool, args));
    p.call("mentisdb_bootstrap", &json!({"chain_key": "lines", "content": "jsonl chain", "storage_adapter": "jsonl"})).unwrap();
    p.call("mentisdb_append", &json!({"chain_key": "lines", "thought_type": "Idea", "content": "one per line"})).unwrap();
    let wasi_cross = p.call("mentisdb_search", &json!({"chain_key": "cross"})).unwrap();
    let wasi_lines = p.call("mentisdb_search", &json!({"chain_key": "lines"})).unwrap();
    let wasi_agents = p.call("mentisdb_list_agent_registry", &json!({"chain_key": "cross"})).unwrap();
    let wasi_skills = p.call("mentisdb_list_skills", &json!({})).unwrap();
    drop(p);

    // The daemon's own file backend over the directory the component wrote.
    let (db, report) = core_db(Arc::new(FsStorage::open(dir.path()).unwrap()));
    assert!(report.refused.is_empty(), "refused: {:?}", report.refused);
    let opened: Vec<(&str, usize, usize)> = report.chains.iter().map(|c| (c.chain_key.as_str(), c.thought_count, c.torn_tail_bytes)).collect();
    assert_eq!(opened.len(), 2);
    // The spec walk leaves 4 thoughts, 4 claim records and fenced appends, 2 facts and a review with its decision.
    assert!(opened.contains(&("cross", 12, 0)) && opened.contains(&("lines", 2, 0)), "{opened:?}");
    // Every thought, hash, id and timestamp comes back identical, and the registry too.
    assert_eq!(db.call("mentisdb_search", json!({"chain_key": "cross"})).unwrap(), wasi_cross);
    assert_eq!(db.call("mentisdb_search", json!({"chain_key": "lines"})).unwrap(), wasi_lines);
    assert_eq!(db.call("mentisdb_list_agent_registry", json!({"chain_key": "cross"})).unwrap(), wasi_agents);
    // The daemon-wide skill registry written through WASI reads back the same.
    assert_eq!(wasi_skills["skills"].as_array().map(Vec::len), Some(1));
    assert_eq!(db.call("mentisdb_list_skills", json!({})).unwrap(), wasi_skills);
    assert_eq!(db.call("mentisdb_head", json!({"chain_key": "cross"})).unwrap()["integrity_ok"], json!(true));
}

#[test]
fn a_chain_written_by_the_daemon_storage_opens_and_extends_in_the_component() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _) = core_db(Arc::new(FsStorage::open(dir.path()).unwrap()));
    run(&spec_walk("native"), |tool, args| core_call(&db, tool, args));
    let core_thoughts = db.call("mentisdb_search", json!({"chain_key": "native"})).unwrap();
    let core_head = db.call("mentisdb_head", json!({"chain_key": "native"})).unwrap();
    let core_skills = db.call("mentisdb_list_skills", json!({})).unwrap();
    drop(db);

    let mut p = instance(dir.path());
    assert_eq!(p.call("mentisdb_search", &json!({"chain_key": "native"})).unwrap(), core_thoughts);
    assert_eq!(p.call("mentisdb_list_skills", &json!({})).unwrap(), core_skills);
    let head = p.head(Some("native")).unwrap();
    assert_eq!(head.head_hash.as_ref(), core_head["head_hash"].as_str().map(str::to_string).as_ref());
    assert_eq!(head.thought_count, 12, "the spec walk's 4 thoughts, then its claims, facts and review");
    let next = p.append(&append_request("native", wit::ThoughtType::Insight, "appended by the component")).unwrap();
    assert_eq!((next.index, next.prev_hash.as_deref()), (12, core_head["head_hash"].as_str()));
    // The registry sidecar written by the core is honoured: the disabled agent stays disabled.
    let mut req = append_request("native", wit::ThoughtType::Insight, "from a revoked agent");
    req.agent_id = Some("reviewer".into());
    assert_eq!(p.append(&req).unwrap_err().kind, wit::ErrorKind::AppendRejected);
    drop(p);

    // And the extended chain still verifies in the core.
    let (db, report) = core_db(Arc::new(FsStorage::open(dir.path()).unwrap()));
    assert!(report.refused.is_empty(), "{:?}", report.refused);
    assert_eq!(db.call("mentisdb_head", json!({"chain_key": "native"})).unwrap()["head_hash"], json!(next.hash));
}

/// Whether any file under `dir` holds `needle`.
fn stored_anywhere(dir: &Path, needle: &str) -> bool {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).any(|p| {
        if p.is_dir() {
            stored_anywhere(&p, needle)
        } else {
            std::fs::read(&p).unwrap().windows(needle.len()).any(|w| w == needle.as_bytes())
        }
    })
}

#[test]
fn forgotten_thoughts_read_and_verify_in_the_component_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _) = core_db(Arc::new(FsStorage::open(dir.path()).unwrap()));
    for content in ["kept one", "daemon secret alpha-7731", "kept two"] {
        db.call("mentisdb_append", json!({"chain_key": "f", "thought_type": "Finding", "content": content})).unwrap();
    }
    db.call("mentisdb_forget_thought", json!({"chain_key": "f", "thought_index": 1, "reason": "leak"})).unwrap();
    let core_head = db.call("mentisdb_head", json!({"chain_key": "f"})).unwrap();
    drop(db);

    // The component opens (verifies) the chain and reads the thought as forgotten.
    let mut p = instance(dir.path());
    let head = p.head(Some("f")).unwrap();
    assert!(head.integrity_ok);
    assert_eq!(head.head_hash.as_deref(), core_head["head_hash"].as_str());
    let t = p.call("mentisdb_get_thought", &json!({"chain_key": "f", "thought_index": 1})).unwrap()["thought"].clone();
    assert_eq!((t["content"].as_str(), t["forgotten"]["reason"].as_str()), (Some(""), Some("leak")));
    assert!(p.call("mentisdb_search", &json!({"chain_key": "f", "text": "alpha-7731"})).unwrap()["thoughts"].as_array().unwrap().is_empty());
    // The component forgets one too, and keeps appending.
    p.append(&append_request("f", wit::ThoughtType::Insight, "component secret beta-4402")).unwrap();
    let forgotten = p.call("mentisdb_forget_thought", &json!({"chain_key": "f", "thought_index": 3, "reason": "leak"})).unwrap();
    assert_eq!(forgotten["forgotten_now"], true);
    let next = p.append(&append_request("f", wit::ThoughtType::Insight, "after both")).unwrap();
    drop(p);

    let (db, report) = core_db(Arc::new(FsStorage::open(dir.path()).unwrap()));
    assert!(report.refused.is_empty(), "{:?}", report.refused);
    assert_eq!(db.call("mentisdb_head", json!({"chain_key": "f"})).unwrap()["head_hash"], json!(next.hash));
    let all = db.call("mentisdb_search", json!({"chain_key": "f"})).unwrap();
    let contents: Vec<&str> = all["thoughts"].as_array().unwrap().iter().map(|t| t["content"].as_str().unwrap()).collect();
    assert_eq!(contents, ["kept one", "", "kept two", "", "after both"]);
    assert!(!stored_anywhere(dir.path(), "alpha-7731") && !stored_anywhere(dir.path(), "beta-4402"));
}

fn only_chain_file(dir: &Path, ext: &str) -> std::path::PathBuf {
    let files: Vec<_> = std::fs::read_dir(dir.join("chains")).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == ext)).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

fn findings(dir: &Path, chain: &str, adapter: &str) {
    let mut p = instance(dir);
    p.call("mentisdb_bootstrap", &json!({"chain_key": chain, "content": "findings", "storage_adapter": adapter})).unwrap();
    for i in 0..3 {
        p.append(&append_request(chain, wit::ThoughtType::Finding, &format!("finding number {i}"))).unwrap();
    }
}

fn flip_content_byte(file: &Path) -> Vec<u8> {
    let mut bytes = std::fs::read(file).unwrap();
    let at = bytes.windows(16).position(|w| w == b"finding number 1").unwrap();
    bytes[at] = b'F';
    std::fs::write(file, &bytes).unwrap();
    bytes
}

#[test]
fn a_torn_tail_is_cut_when_the_component_opens() {
    let dir = tempfile::tempdir().unwrap();
    findings(dir.path(), "t", "binary");
    let file = only_chain_file(dir.path(), "mdb");
    let good = std::fs::read(&file).unwrap();
    let mut torn = good.clone();
    torn.extend_from_slice(&[200, 0, 0, 0, 1, 2]);
    std::fs::write(&file, &torn).unwrap();
    let mut p = instance(dir.path());
    assert_eq!(p.head(Some("t")).unwrap().thought_count, 4);
    assert_eq!(std::fs::read(&file).unwrap(), good, "the torn tail was truncated");
    p.append(&append_request("t", wit::ThoughtType::Finding, "after the cut")).unwrap();
    assert_eq!(p.head(Some("t")).unwrap().thought_count, 5);
}

#[test]
fn a_chain_whose_hashes_do_not_verify_is_refused() {
    // jsonl: the edited line still parses, so the recomputed hash is what catches it.
    let dir = tempfile::tempdir().unwrap();
    findings(dir.path(), "j", "jsonl");
    flip_content_byte(&only_chain_file(dir.path(), "jsonl"));
    let mut p = instance(dir.path());
    let e = p.head(Some("j")).unwrap_err();
    assert_eq!((e.kind, e.code.as_str()), (wit::ErrorKind::ChainRefused, "chain_refused"));
    assert!(e.message.contains("'j'") && e.message.contains("hash mismatch at index 2"), "{}", e.message);
    let e = p.append(&append_request("j", wit::ThoughtType::Finding, "more")).unwrap_err();
    assert_eq!(e.kind, wit::ErrorKind::ChainRefused);
}

#[test]
fn a_damaged_binary_chain_is_refused_and_never_overwritten() {
    // binary: the frame checksum fails in the middle of the file (corruption,
    // not a torn tail): the chain is refused, reads and writes alike.
    let dir = tempfile::tempdir().unwrap();
    findings(dir.path(), "b", "binary");
    let file = only_chain_file(dir.path(), "mdb");
    let damaged = flip_content_byte(&file);
    let mut p = instance(dir.path());
    let e = p.head(Some("b")).unwrap_err();
    assert_eq!((e.kind, e.code.as_str()), (wit::ErrorKind::ChainRefused, "chain_refused"));
    assert!(e.message.contains("checksum"), "{}", e.message);
    let e = p.append(&append_request("b", wit::ThoughtType::Finding, "more")).unwrap_err();
    assert_eq!(e.kind, wit::ErrorKind::ChainRefused);
    assert_eq!(std::fs::read(&file).unwrap(), damaged, "the damaged file is left as it was");
}

/// The `proofs` export checks what a daemon (here: the core, with the
/// daemon's code) proves and signs, and refuses a changed proof or note.
#[test]
fn proofs_verify_inside_the_component() {
    use mentisdb_core::checkpoint::{origin, verifier_key, CheckpointSigner, TreeHead};
    use mentisdb_core::merkle::{leaf_hash, MerkleTree};
    let mut tree = MerkleTree::new();
    for i in 0..21u8 {
        tree.push_leaf_hash(leaf_hash(&[i; 32]));
    }
    let hex = |h: &[u8; 32]| h.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let root = hex(&tree.root(21).unwrap());
    let mut plugin = PluginHost::shared().instantiate(None).expect("instantiate");
    let proof: Vec<String> = tree.inclusion_proof(9, 21).unwrap().iter().map(hex).collect();
    let leaf = hex(&tree.leaf(9).unwrap());
    assert_eq!(plugin.verify_inclusion(&leaf, 9, 21, &proof, &root), Ok(true));
    assert_eq!(plugin.verify_inclusion(&leaf, 10, 21, &proof, &root), Ok(false));
    assert!(plugin.verify_inclusion("xyz", 9, 21, &proof, &root).unwrap_err().contains("leaf-hash"));
    let consistency: Vec<String> = tree.consistency_proof(6, 21).unwrap().iter().map(hex).collect();
    assert_eq!(plugin.verify_consistency(6, 21, &consistency, &hex(&tree.root(6).unwrap()), &root), Ok(true));
    assert_eq!(plugin.verify_consistency(6, 21, &consistency, &root, &root), Ok(false));

    let signer = CheckpointSigner::new("mentisdb-wasi", &[3; 32]).unwrap();
    let note = signer.sign(&TreeHead { origin: origin(signer.name(), "c"), tree_size: 21, root: tree.root(21).unwrap() });
    let key = verifier_key(signer.name(), &signer.public_key());
    assert_eq!(plugin.verify_checkpoint(&note, &key), Ok(("mentisdb-wasi/c".to_string(), 21, root)));
    assert!(plugin.verify_checkpoint(&note.replace("\n21\n", "\n22\n"), &key).is_err());
}

#[test]
fn a_static_embedding_model_makes_ranked_search_hybrid_inside_the_component() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = instance(dir.path());
    for content in ["I bought a new automobile", "I ate a banana"] {
        p.append(&append_request("meaning", wit::ThoughtType::Finding, content)).unwrap();
    }
    let ranked = |p: &mut PluginInstance, text: &str| {
        let r = p.call("mentisdb_ranked_search", &json!({"chain_key": "meaning", "text": text, "limit": 5})).unwrap();
        let top: Vec<String> = r["results"].as_array().unwrap().iter().map(|h| h["thought"]["content"].as_str().unwrap().to_string()).collect();
        (r["backend"].as_str().unwrap().to_string(), top)
    };
    let (backend, top) = ranked(&mut p, "car");
    assert_eq!(backend, "lexical");
    assert!(top.is_empty(), "{top:?}");
    let tokens = ["[PAD]", "[UNK]", "car", "automobile", "banana", "fruit", "i", "a", "new", "bought", "ate"];
    let v = |x: f32, y: f32| vec![x, y, 0.0, 0.0];
    let rows = vec![v(0.0, 0.0), v(0.0, 0.0), v(1.0, 0.1), v(0.95, 0.15), v(0.0, 1.0), v(0.1, 0.9), v(0.0, 0.0), v(0.0, 0.0), v(0.0, 0.0), v(0.2, 0.0), v(0.0, 0.2)];
    let model = mentisdb_embed_static::write_model("tiny-static-4", &tokens, &rows).unwrap();
    assert_eq!(p.set_embedding_model(&model).unwrap(), "tiny-static-4");
    let (backend, top) = ranked(&mut p, "car");
    assert_eq!((backend.as_str(), top.first().map(String::as_str)), ("hybrid", Some("I bought a new automobile")));
    let (_, top) = ranked(&mut p, "fruit");
    assert_eq!(top.first().map(String::as_str), Some("I ate a banana"));
    let e = p.set_embedding_model(b"not a model").unwrap_err();
    assert_eq!(e.kind, wit::ErrorKind::InvalidArguments);
    assert!(e.message.contains("static embedding model"), "{}", e.message);
    assert_eq!(p.set_embedding_model(&[]).unwrap(), "");
    assert_eq!(ranked(&mut p, "car").0, "lexical");
}
