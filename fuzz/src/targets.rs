// What each fuzz target does, as plain functions over bytes. Shared by the
// cargo-fuzz binaries (fuzz/fuzz_targets/*.rs) and by the ordinary test that
// replays fuzz/crashers/ and the seed corpora in CI
// (tests/tests/reliability/main.rs includes this file with #[path]).
// Each function panics only when it finds a bug.

use mentisdb_core::agents::AgentRegistry;
use mentisdb_core::skills::document;
use mentisdb_core::skills::SkillFormat;
use mentisdb_core::{naming, record, Chain, ChainFormat, DbConfig, FixedClock, MemoryStorage, MentisDb, SequentialIds, Storage};
use std::sync::Arc;

fn open(storage: Arc<MemoryStorage>) -> (MentisDb, mentisdb_core::OpenReport) {
    MentisDb::open(storage, Arc::new(FixedClock::new(1_795_000_000_000, 1)), Arc::new(SequentialIds::default()), DbConfig::default()).expect("memory storage never fails")
}

/// Chain object bytes in either format: decode, verify, and open as a store.
/// The first byte picks the framing: even = binary magic prepended, odd = raw
/// bytes (JSONL or anything). Whatever decodes must re-encode to the same
/// bytes, and a store holding it must open (refusing it is fine) and keep
/// serving appends.
pub fn record_decode(data: &[u8]) {
    let Some((&sel, rest)) = data.split_first() else { return };
    let bytes = if sel % 2 == 0 { [&record::BINARY_MAGIC[..], rest].concat() } else { rest.to_vec() };
    let decoded = record::decode_chain(&bytes);
    let _ = record::peek_chain_key(&bytes);
    let Ok(decoded) = decoded else { return };
    assert!(decoded.valid_len <= bytes.len());
    // The valid prefix decodes to the same thing with no torn tail.
    let again = record::decode_chain(&bytes[..decoded.valid_len]).expect("the valid prefix decodes");
    assert_eq!(again.thoughts, decoded.thoughts);
    assert_eq!(again.valid_len, decoded.valid_len);
    let format = decoded.format;
    let key = decoded.chain_key.clone();
    let verified = Chain::load(decoded.clone(), AgentRegistry::default());
    if verified.is_ok() && format == ChainFormat::Jsonl {
        // A verified JSONL chain re-encodes byte for byte (canonical lines).
        let mut out = record::encode_header(format, &key);
        for t in &decoded.thoughts {
            out.extend(record::encode_thought(format, t));
        }
        if out.len() == decoded.valid_len {
            assert_eq!(out, bytes[..decoded.valid_len], "verified JSONL re-encodes to the same bytes");
        }
    }
    // As a whole store: the object under its own derived name.
    if mentisdb_core::limits::check_key("chain_key", &key).is_err() {
        return;
    }
    let storage = Arc::new(MemoryStorage::new());
    let object = naming::chain_object(&key, format);
    storage.write_atomic(&object, &bytes).unwrap();
    let (db, report) = open(storage.clone());
    let served = report.chains.iter().any(|c| c.chain_key == key);
    assert_eq!(served, verified.is_ok(), "served iff it verifies: {:?}", report.refused);
    const PROBE: &str = "fuzz-probe-append";
    if decoded.thoughts.iter().any(|t| t.id == PROBE) {
        return;
    }
    let r = db.call("mentisdb_append", serde_json::json!({"chain_key": key, "thought_type": "Finding", "content": "after fuzz", "thought_id": PROBE}));
    if served {
        let t = r.expect("a served chain accepts appends");
        let (db2, report2) = open(storage);
        assert!(report2.refused.is_empty(), "reopen after an append: {:?}", report2.refused);
        let head = db2.call("mentisdb_head", serde_json::json!({"chain_key": key})).unwrap();
        assert_eq!(head["head_hash"], t["thought"]["hash"]);
    } else {
        assert!(r.is_err(), "a refused chain refuses appends");
    }
}

/// Skill registry log bytes: decode, and open a store holding them.
pub fn skills_log_decode(data: &[u8]) {
    let decoded = mentisdb_core::skills::log::decode_log(data);
    assert!(decoded.valid_len <= data.len());
    if decoded.corruption.is_none() {
        let again = mentisdb_core::skills::log::decode_log(&data[..decoded.valid_len]);
        assert_eq!(again.events.len(), decoded.events.len(), "the valid prefix holds the same events");
    }
    let storage = Arc::new(MemoryStorage::new());
    storage.write_atomic(naming::SKILLS_LOG, data).unwrap();
    let (db, _) = open(storage);
    let _ = db.call("mentisdb_list_skills", serde_json::json!({})).expect("listing skills never fails");
    let _ = db.call("mentisdb_search_skill", serde_json::json!({"text": "a"}));
}

/// Skill documents: Markdown and JSON parsing; whatever parses renders and
/// parses back to the same document in both formats.
pub fn skill_document(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = document::first_h1(&text);
    for &format in SkillFormat::ALL {
        let Ok(doc) = document::parse(format, &text, Some("fallback")) else { continue };
        let _ = document::check_limits(&doc);
        for &out in SkillFormat::ALL {
            let rendered = document::render(out, &doc);
            let back = document::parse(out, &rendered, Some("fallback")).unwrap_or_else(|e| panic!("{format:?} -> {out:?} render does not parse back: {e}\n{rendered}"));
            assert_eq!(back, doc, "{format:?} -> {out:?} round trip\n{rendered}");
        }
    }
}

/// The dispatcher: byte 0 picks a tool, the rest is its argument JSON text.
/// The store holds a small chain, an agent and a skill. No call may panic,
/// and whatever a call wrote must reopen cleanly with the same heads.
pub fn dispatch_args(data: &[u8]) {
    use std::sync::OnceLock;
    static TOOLS: OnceLock<Vec<&'static str>> = OnceLock::new();
    static SEEDED: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    let Some((&sel, rest)) = data.split_first() else { return };
    let tools = TOOLS.get_or_init(|| mentisdb_core::tool_specs().into_iter().map(|s| s.name).collect());
    let tool = tools[sel as usize % tools.len()];
    // The seeded store is built once; each run starts from a copy of its objects.
    let seeded = SEEDED.get_or_init(|| {
        let storage = Arc::new(MemoryStorage::new());
        let (db, _) = open(storage.clone());
        for (i, t) in ["Decision", "Finding", "Question"].iter().enumerate() {
            db.call("mentisdb_append", serde_json::json!({"chain_key": "c", "thought_type": t, "content": format!("seed {i}"), "tags": ["t"], "refs": if i > 0 { vec![0] } else { vec![] }})).unwrap();
        }
        db.call("mentisdb_upsert_agent", serde_json::json!({"chain_key": "c", "agent_id": "a", "agent_owner": "o"})).unwrap();
        db.call("mentisdb_upload_skill", serde_json::json!({"chain_key": "c", "agent_id": "a", "content": "# Seed skill\n\nDo things.\n"})).unwrap();
        storage.list("").unwrap().into_iter().map(|n| { let b = storage.read(&n).unwrap().unwrap(); (n, b) }).collect()
    });
    let storage = Arc::new(MemoryStorage::new());
    for (name, bytes) in seeded {
        storage.write_atomic(name, bytes).unwrap();
    }
    let (db, _) = open(storage.clone());
    let _ = db.call_json(tool, &String::from_utf8_lossy(rest));
    let heads = |db: &MentisDb| -> Vec<serde_json::Value> {
        db.chain_keys().into_iter().map(|k| db.call("mentisdb_head", serde_json::json!({"chain_key": k})).unwrap()["head_hash"].clone()).collect()
    };
    let before = heads(&db);
    let skills = db.call("mentisdb_list_skills", serde_json::json!({})).unwrap();
    let (db2, report) = open(storage);
    assert!(report.refused.is_empty(), "{tool}: reopen refused {:?}", report.refused);
    assert_eq!(heads(&db2), before, "{tool}: heads survive a reopen");
    assert_eq!(db2.call("mentisdb_list_skills", serde_json::json!({})).unwrap(), skills, "{tool}: skills survive a reopen");
}
