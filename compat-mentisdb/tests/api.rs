//! What cloudllm 0.16 relies on from MentisDB 0.10.10's Rust API, on this
//! engine: indices, persistence across reopen, refs and the causal context,
//! the bootstrap prompt's layout, 0.10.10's file names, integrity checks
//! that catch a damaged file, and chains shared with the engine's own tools.

use mentisdb::{chain_filename, chain_storage_filename, MentisDb, StorageAdapterKind, ThoughtInput, ThoughtRole, ThoughtType};
use mentisdb_core::{DbConfig, FixedClock, SequentialIds};
use mentisdb_fs_storage::FsStorage;
use serde_json::json;
use std::io::ErrorKind;
use std::sync::Arc;

#[test]
fn appends_persist_with_indices_and_verify_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut chain = MentisDb::open_with_key(dir.path(), "agent1").unwrap();
        assert!(chain.thoughts().is_empty());
        assert!(chain.verify_integrity());
        let t = chain.append("agent1", ThoughtType::Finding, "Found pattern A").unwrap();
        assert_eq!((t.index, t.prev_hash.as_str()), (0, ""));
        chain.append("agent1", ThoughtType::Decision, "Will use approach B").unwrap();
        let input = ThoughtInput::new(ThoughtType::StateSnapshot, "KV k\nv").with_tags(["kv", "kv:k"]).with_role(ThoughtRole::Compression).with_importance(0.9).with_confidence(2.0);
        let t = chain.append_thought("writer", input).unwrap();
        assert_eq!((t.index, t.role, t.importance, t.confidence), (2, ThoughtRole::Compression, 0.9, Some(1.0)));
    }
    let chain = MentisDb::open_with_key(dir.path(), "agent1").unwrap();
    let t = chain.thoughts();
    assert_eq!(t.iter().map(|t| t.index).collect::<Vec<_>>(), vec![0, 1, 2]);
    assert_eq!(t[0].content, "Found pattern A");
    assert_eq!(t[1].thought_type, ThoughtType::Decision);
    assert_eq!(t[2].tags, vec!["kv", "kv:k"]);
    assert_eq!(t[1].prev_hash, t[0].hash);
    assert!(chain.verify_integrity());
    assert_eq!(chain.get_thought_by_id(t[1].id).unwrap().index, 1);
}

#[test]
fn resolve_context_follows_refs_and_bootstrap_prompt_has_0_10_layout() {
    let dir = tempfile::tempdir().unwrap();
    let mut chain = MentisDb::open_with_key(dir.path(), "agent1").unwrap();
    chain.append("agent1", ThoughtType::Finding, "Base finding").unwrap();
    chain.append("agent1", ThoughtType::Decision, "Unrelated decision").unwrap();
    chain.append("agent1", ThoughtType::Finding, "Important discovery").unwrap();
    chain.append("agent1", ThoughtType::Decision, "Another decision").unwrap();
    let s = chain.append_with_refs("agent1", ThoughtType::Summary, "Summary of findings", vec![0, 2]).unwrap();
    assert_eq!(s.refs, vec![0, 2]);
    assert_eq!(s.relations.len(), 2, "each ref is also a References relation, as in 0.10.10");
    let indices: Vec<u64> = chain.resolve_context(4).iter().map(|t| t.index).collect();
    assert_eq!(indices, vec![0, 2, 4]);
    assert!(chain.resolve_context(99).is_empty());
    assert_eq!(chain.to_bootstrap_prompt(99), "");
    let prompt = chain.to_bootstrap_prompt(4);
    assert_eq!(
        prompt,
        "=== RESTORED CONTEXT (from MentisDb) ===\n\n\
         [#0] Finding / Memory (agent1)\nBase finding\n  importance: 0.50\n\
         [#2] Finding / Memory (agent1)\nImportant discovery\n  importance: 0.50\n\
         [#4] Summary / Memory (agent1)\nSummary of findings\n  importance: 0.50\n  refs: [0, 2]\n\
         \n=== END RESTORED CONTEXT ===\n"
    );
}

#[test]
fn bad_refs_and_bad_keys_are_input_errors() {
    let dir = tempfile::tempdir().unwrap();
    let mut chain = MentisDb::open_with_key(dir.path(), "agent1").unwrap();
    let err = chain.append_with_refs("agent1", ThoughtType::Summary, "refs nothing", vec![0]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(chain.thoughts().is_empty());
    let err = MentisDb::open_with_key(dir.path(), &"k".repeat(300)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    let err = MentisDb::open_with_key_and_storage_kind(dir.path(), "agent1", StorageAdapterKind::Jsonl).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
}

#[test]
fn chain_filename_is_0_10_10s() {
    assert_eq!(chain_filename("id1", "Name", Some("exp"), Some("pers")), "id1-f3436f50b2f7f161.tcbin");
    assert_eq!(chain_filename("id1", "Other", None, None), chain_filename("id1", "Name", Some("exp"), Some("pers")));
    assert_ne!(chain_filename("id2", "Name", None, None), chain_filename("id1", "Name", None, None));
    assert_eq!(chain_storage_filename("agent one/x", StorageAdapterKind::Binary), "agent_one_x-369cfdd5a75c2797.tcbin");
}

#[test]
fn a_damaged_chain_file_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let mut chain = MentisDb::open_with_key(dir.path(), "agent1").unwrap();
    chain.append("agent1", ThoughtType::Finding, "Entry one, long enough to find").unwrap();
    chain.append("agent1", ThoughtType::Finding, "Entry two").unwrap();
    let file = std::path::PathBuf::from(chain.storage_location());
    assert!(file.starts_with(std::fs::canonicalize(dir.path()).unwrap()), "{}", file.display());
    let mut bytes = std::fs::read(&file).unwrap();
    let at = bytes.windows(9).position(|w| w == b"Entry one").unwrap();
    bytes[at] = b'X';
    std::fs::write(&file, &bytes).unwrap();
    assert!(!chain.verify_integrity(), "the open handle re-reads the file");
    drop(chain);
    let err = MentisDb::open_with_key(dir.path(), "agent1").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidData, "{err}");
}

#[test]
fn chains_are_the_engines_own_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut chain = MentisDb::open_with_key(dir.path(), "shared").unwrap();
        chain.append("a", ThoughtType::Finding, "written through the 0.10 API").unwrap();
    }
    let open_engine = || mentisdb_core::MentisDb::open(Arc::new(FsStorage::open(dir.path()).unwrap()), Arc::new(FixedClock::new(1_795_000_000_000, 1)), Arc::new(SequentialIds::default()), DbConfig::default()).unwrap();
    {
        let (engine, report) = open_engine();
        assert!(report.refused.is_empty(), "{report:?}");
        let head = engine.call("mentisdb_head", json!({"chain_key": "shared"})).unwrap();
        assert_eq!(head["thought_count"], json!(1), "{head}");
        engine.call("mentisdb_append", json!({"chain_key": "shared", "thought_type": "Decision", "content": "written by the tools", "refs": [0]})).unwrap();
    }
    let chain = MentisDb::open_with_key(dir.path(), "shared").unwrap();
    assert_eq!(chain.thoughts().len(), 2);
    assert_eq!(chain.thoughts()[1].content, "written by the tools");
    assert_eq!(chain.resolve_context(1).len(), 2);
    assert!(chain.verify_integrity());
}
