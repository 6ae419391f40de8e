//! Replays every checked-in fuzz crasher (`fuzz/crashers/<target>/*`) and
//! seed input (`fuzz/seeds/<target>/*`) through the same functions the
//! cargo-fuzz targets run (`fuzz/src/targets.rs`), so a crash once found
//! stays fixed in CI. Fuzzing itself is run by hand: see RELIABILITY.md.
//!
//! `cargo test -p mentisdb-tests --test reliability -- --ignored fuzz_replay::write_seed_corpus`
//! regenerates the seeds from the current core.

use crate::targets;

use std::path::{Path, PathBuf};

type Target = fn(&[u8]);
const TARGETS: [(&str, Target); 4] = [
    ("record_decode", targets::record_decode),
    ("skills_log_decode", targets::skills_log_decode),
    ("skill_document", targets::skill_document),
    ("dispatch_args", targets::dispatch_args),
];

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir).map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_file()).collect()).unwrap_or_default();
    out.sort();
    out
}

#[test]
fn every_crasher_and_seed_replays_without_panicking() {
    let mut replayed = 0;
    for (name, run) in TARGETS {
        for kind in ["crashers", "seeds"] {
            for file in files(&fuzz_dir().join(kind).join(name)) {
                let data = std::fs::read(&file).unwrap();
                if let Err(e) = std::panic::catch_unwind(|| run(&data)) {
                    let msg = e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
                    panic!("{name}: {} panics: {msg}", file.display());
                }
                replayed += 1;
            }
        }
    }
    assert!(replayed >= 20, "the seed corpus is checked in ({replayed} inputs found)");
}

#[test]
#[ignore = "regenerates fuzz/seeds from the current core"]
fn write_seed_corpus() {
    use mentisdb_core::{naming, ChainFormat, DbConfig, FixedClock, MemoryStorage, MentisDb, SequentialIds, Storage};
    use serde_json::json;
    use std::sync::Arc;
    let storage = Arc::new(MemoryStorage::new());
    let (db, _) = MentisDb::open(storage.clone(), Arc::new(FixedClock::new(1_795_000_000_000, 1)), Arc::new(SequentialIds::default()), DbConfig::default()).unwrap();
    for (key, format) in [("seed-bin", "binary"), ("seed-jsonl", "jsonl")] {
        db.call("mentisdb_bootstrap", json!({"chain_key": key, "content": "purpose", "storage_adapter": format})).unwrap();
        db.call("mentisdb_append", json!({"chain_key": key, "thought_type": "Decision", "content": "Use Rust.", "tags": ["a", "b"], "concepts": ["c"], "refs": [0], "importance": 0.7, "confidence": 0.4, "role": "Memory", "session_id": "s"})).unwrap();
        db.call("mentisdb_append", json!({"chain_key": key, "thought_type": "Finding", "content": "ünïcode ✓", "relations": [{"kind": "Supports", "target_index": 1}]})).unwrap();
    }
    db.call("mentisdb_upsert_agent", json!({"chain_key": "seed-bin", "agent_id": "a", "agent_owner": "o"})).unwrap();
    db.call("mentisdb_upload_skill", json!({"chain_key": "seed-bin", "agent_id": "a", "content": "---\nname: Seed\ntags: [x]\n---\n# Seed\n\nBody.\n"})).unwrap();
    db.call("mentisdb_upload_skill", json!({"chain_key": "seed-bin", "agent_id": "a", "content": "{\"name\":\"J\",\"description\":\"d\",\"body\":\"i\"}"})).unwrap();
    db.call("mentisdb_deprecate_skill", json!({"chain_key": "seed-bin", "agent_id": "a", "skill_id": "seed"})).ok();
    let write = |target: &str, name: &str, bytes: &[u8]| {
        let dir = fuzz_dir().join("seeds").join(target);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), bytes).unwrap();
    };
    for (key, format) in [("seed-bin", ChainFormat::Binary), ("seed-jsonl", ChainFormat::Jsonl)] {
        let bytes = storage.read(&naming::chain_object(key, format)).unwrap().unwrap();
        let framed = match format {
            ChainFormat::Binary => [&[0u8][..], &bytes[8..]].concat(),
            ChainFormat::Jsonl => [&[1u8][..], &bytes[..]].concat(),
        };
        write("record_decode", key, &framed);
        write("record_decode", &format!("{key}-torn"), &framed[..framed.len() - 7]);
    }
    write("skills_log_decode", "registry", &storage.read(naming::SKILLS_LOG).unwrap().unwrap());
    let log = storage.read(naming::SKILLS_LOG).unwrap().unwrap();
    write("skills_log_decode", "registry-torn", &log[..log.len() - 5]);
    for (i, doc) in [
        "---\nname: Seed\ndescription: A seed\ntags: [x, y]\ntriggers: [on start]\n---\n# Seed\n\nBody with `code`.\n\n```\n# not a title\n```\n",
        "# Title only\n\nText.\n",
        "{\"name\":\"J\",\"description\":\"d\",\"tags\":[\"t\"],\"triggers\":[\"go\"],\"body\":\"do it\",\"warnings\":[\"w\"],\"schema_version\":1}",
        "---\nname: \"quoted: name\"\n---\nno heading\n",
    ]
    .iter()
    .enumerate()
    {
        write("skill_document", &format!("doc{i}"), doc.as_bytes());
    }
    let specs = mentisdb_core::tool_specs();
    let args = |tool: &str| -> serde_json::Value {
        match tool {
            "mentisdb_append" | "mentisdb_append_retrospective" => json!({"chain_key": "c", "thought_type": "Decision", "content": "x", "refs": [1], "relations": [{"kind": "Supports", "target_index": 0}], "importance": 0.5, "tags": ["t"]}),
            "mentisdb_bootstrap" => json!({"chain_key": "new", "content": "x", "storage_adapter": "jsonl"}),
            "mentisdb_search" | "mentisdb_ranked_search" | "mentisdb_context_bundles" => json!({"chain_key": "c", "text": "seed", "thought_types": ["Decision"], "tags_any": ["t"], "limit": 5, "since": "2026-01-01T00:00:00Z"}),
            "mentisdb_traverse_thoughts" => json!({"chain_key": "c", "anchor_boundary": "genesis", "direction": "forward", "chunk_size": 2, "include_anchor": true}),
            "mentisdb_get_thought" => json!({"chain_key": "c", "thought_index": 1}),
            "mentisdb_recent_context" | "mentisdb_memory_markdown" | "mentisdb_resolve_context" => json!({"chain_key": "c", "last_n": 2}),
            "mentisdb_upsert_agent" | "mentisdb_get_agent" | "mentisdb_set_agent_description" => json!({"chain_key": "c", "agent_id": "a", "display_name": "A", "description": "d"}),
            "mentisdb_add_agent_alias" => json!({"chain_key": "c", "agent_id": "a", "alias": "al"}),
            "mentisdb_add_agent_key" => json!({"chain_key": "c", "agent_id": "a", "key_id": "k", "algorithm": "ed25519", "public_key_bytes": vec![7u8; 32]}),
            "mentisdb_revoke_agent_key" | "mentisdb_disable_agent" => json!({"chain_key": "c", "agent_id": "a", "key_id": "k"}),
            "mentisdb_upload_skill" => json!({"chain_key": "c", "agent_id": "a", "content": "# Other\n\nBody.\n"}),
            "mentisdb_read_skill" | "mentisdb_skill_versions" => json!({"skill_id": "seed-skill", "format": "json"}),
            "mentisdb_deprecate_skill" | "mentisdb_revoke_skill" => json!({"chain_key": "c", "agent_id": "a", "skill_id": "seed-skill", "reason": "r"}),
            "mentisdb_search_skill" => json!({"text": "seed", "statuses": ["active"], "limit": 3}),
            _ => json!({"chain_key": "c"}),
        }
    };
    for (i, spec) in specs.iter().enumerate() {
        let mut bytes = vec![i as u8];
        bytes.extend(args(spec.name).to_string().into_bytes());
        write("dispatch_args", spec.name, &bytes);
    }
}
