//! MentisDB 0.10's thought model through the tools: the 31 thought types and
//! loose spellings, `entity_type` (schema 3: hashed, filtered, listed,
//! forgettable, reopened), memory scopes, and append-time dedup.

use crate::common;
use common::*;
use mentisdb_core::canonical::compute_thought_hash;
use mentisdb_core::{DbConfig, FixedClock, MemoryStorage, MentisDb, Storage, Thought, ThoughtRole, ThoughtType};
use serde_json::{json, Value};
use std::sync::Arc;

fn append(db: &MentisDb, args: Value) -> Value {
    ok(db, "mentisdb_append", args)["thought"].clone()
}

fn ids_of(v: &Value) -> Vec<u64> {
    v.as_array().expect("array").iter().map(|t| t["index"].as_u64().unwrap()).collect()
}

#[test]
fn types_roles_and_relation_kinds_parse_regardless_of_case_and_separators() {
    let (db, _) = fresh();
    for (given, stored) in [("fact-learned", "FactLearned"), ("lesson learned", "LessonLearned"), ("FactLearned", "FactLearned"), ("fact_learned", "FactLearned"), ("reframe", "Reframe"), ("GOAL", "Goal"), ("llm-extracted", "LLMExtracted")] {
        let t = append(&db, json!({"chain_key": "c", "thought_type": given, "role": "working-memory", "content": format!("a {given} thought")}));
        assert_eq!((t["thought_type"].as_str(), t["role"].as_str()), (Some(stored), Some("WorkingMemory")), "{given}");
    }
    let rel = append(&db, json!({"chain_key": "c", "thought_type": "Correction", "content": "fixes it", "relations": [{"kind": "caused_by", "target_index": 0}]}));
    assert_eq!(rel["relations"][0]["kind"], "CausedBy");
    // Filters take the same spellings.
    let found = ok(&db, "mentisdb_search", json!({"chain_key": "c", "thought_types": ["llm extracted", "goal"]}));
    assert_eq!(found["thoughts"].as_array().unwrap().len(), 2);

    // An unknown value's error lists every valid one.
    let e = err(&db, "mentisdb_append", json!({"chain_key": "c", "thought_type": "Musing", "content": "x"})).to_string();
    for t in ThoughtType::ALL {
        assert!(e.contains(t.as_str()), "{e} lacks {t}");
    }
    let e = err(&db, "mentisdb_append", json!({"chain_key": "c", "thought_type": "Idea", "role": "Boss", "content": "x"})).to_string();
    assert!(ThoughtRole::ALL.iter().all(|r| e.contains(r.as_str())), "{e}");
    let e = err(&db, "mentisdb_append", json!({"chain_key": "c", "thought_type": "Idea", "content": "x", "relations": [{"kind": "Likes", "target_index": 0}]})).to_string();
    assert!(e.contains("Supersedes") && e.contains("BranchesFrom"), "{e}");
    assert_eq!(ThoughtType::ALL.len(), 31);
}

#[test]
fn entity_types_are_hashed_filtered_listed_and_survive_reopen_and_forget() {
    for format in ["binary", "jsonl"] {
        let (db, storage) = fresh();
        ok(&db, "mentisdb_bootstrap", json!({"chain_key": "c", "content": "start", "storage_adapter": format}));
        let plain = append(&db, json!({"chain_key": "c", "thought_type": "FactLearned", "content": "Ada prefers tea"}));
        let person = append(&db, json!({"chain_key": "c", "thought_type": "FactLearned", "content": "Ada lives in Lisbon", "entity_type": " person "}));
        let service = append(&db, json!({"chain_key": "c", "thought_type": "Decision", "content": "the billing service moves to Rust", "entity_type": "service"}));
        // A thought without one keeps schema 2, and its entity_type is null (as 0.10 sends it).
        assert_eq!(plain["schema_version"], 2);
        assert_eq!(plain.get("entity_type"), Some(&Value::Null), "{plain}");
        assert_eq!(plain.get("source_episode"), Some(&Value::Null), "{plain}");
        // A stored record may not name an episode (the hash does not cover one).
        let mut edited = plain.clone();
        edited["source_episode"] = json!("ep-1");
        assert!(serde_json::from_value::<Thought>(edited).is_err());
        assert_eq!((person["schema_version"].as_u64(), person["entity_type"].as_str()), (Some(3), Some("person")));
        // The hash covers the label: the same thought with another one hashes differently.
        let t: Thought = serde_json::from_value(person.clone()).unwrap();
        assert_eq!(compute_thought_hash(&t), t.hash);
        assert_ne!(compute_thought_hash(&t.clone().with_extras(|e| e.entity_type = Some("place".into()))), t.hash);

        // search and ranked search filter on it (exact label), alone and with other filters.
        let found = ok(&db, "mentisdb_search", json!({"chain_key": "c", "entity_type": "person"}));
        assert_eq!(ids_of(&found["thoughts"]), vec![2]);
        let found = ok(&db, "mentisdb_search", json!({"chain_key": "c", "entity_type": "person", "thought_types": ["Decision"]}));
        assert_eq!(ids_of(&found["thoughts"]), Vec::<u64>::new());
        let ranked = ok(&db, "mentisdb_ranked_search", json!({"chain_key": "c", "text": "Ada", "entity_type": "person"}));
        let hits: Vec<u64> = ranked["results"].as_array().unwrap().iter().map(|h| h["thought"]["index"].as_u64().unwrap()).collect();
        assert_eq!(hits, vec![2], "{ranked}");

        // The registry lists used and declared labels.
        let up = ok(&db, "mentisdb_upsert_entity_type", json!({"chain_key": "c", "entity_type": "  project "}));
        assert_eq!(up["entity_type"], json!({"entity_type": "project", "first_seen_index": null, "last_seen_index": null, "first_seen_at": null, "last_seen_at": null, "thought_count": 0}));
        let up = ok(&db, "mentisdb_upsert_entity_type", json!({"chain_key": "c", "entity_type": "service"}));
        assert_eq!((up["chain_key"].as_str(), up["entity_type"]["thought_count"].as_u64(), up["entity_type"]["first_seen_index"].as_u64()), (Some("c"), Some(1), Some(3)));
        assert!(err(&db, "mentisdb_upsert_entity_type", json!({"chain_key": "c", "entity_type": "  "})).to_string().contains("must not be empty"));
        let list = ok(&db, "mentisdb_list_entity_types", json!({"chain_key": "c"}));
        let labels: Vec<&str> = list["entity_types"].as_array().unwrap().iter().map(|r| r["entity_type"].as_str().unwrap()).collect();
        assert_eq!(labels, ["person", "project", "service"]);
        assert_eq!(list["entity_types"][0]["last_seen_at"], person["timestamp"]);

        // Forgetting keeps the label and the hash; the chain reopens and verifies.
        let f = ok(&db, "mentisdb_forget_thought", json!({"chain_key": "c", "thought_index": 2, "reason": "pii", "agent_id": "ops"}));
        assert_eq!((f["thought"]["hash"].clone(), f["thought"]["entity_type"].as_str()), (person["hash"].clone(), Some("person")));
        drop(db);
        let db = reopen(storage);
        let back = ok(&db, "mentisdb_get_thought", json!({"chain_key": "c", "thought_index": 3}))["thought"].clone();
        assert_eq!(back, service);
        assert_eq!(ok(&db, "mentisdb_head", json!({"chain_key": "c"}))["integrity_ok"], true);
        // Declarations persist in the chain's registry sidecar.
        let list = ok(&db, "mentisdb_list_entity_types", json!({"chain_key": "c"}));
        assert_eq!(list["entity_types"].as_array().unwrap().len(), 3, "{format}: {list}");
        // A retry with the same label replays; another label is a conflict.
        let a = json!({"chain_key": "c", "thought_type": "Idea", "content": "retry me", "thought_id": "t-1", "entity_type": "idea"});
        ok(&db, "mentisdb_append", a.clone());
        assert_eq!(ok(&db, "mentisdb_append", a.clone())["replay"], true);
        let e = err(&db, "mentisdb_append", json!({"chain_key": "c", "thought_type": "Idea", "content": "retry me", "thought_id": "t-1", "entity_type": "other"}));
        assert!(e.to_string().contains("entity_type"), "{e}");
    }
}

#[test]
fn listing_an_unknown_chain_is_not_found_and_creates_nothing() {
    let (db, storage) = fresh();
    let e = err(&db, "mentisdb_list_entity_types", json!({"chain_key": "nobody"}));
    assert_eq!((e.kind(), e.to_string()), (mentisdb_core::ErrorKind::NotFound, "chain 'nobody' not found".to_string()), "as MentisDB 0.10.10 answers");
    assert!(storage.list("").unwrap().is_empty());
    // The default chain reads as empty before its first write.
    assert_eq!(ok(&db, "mentisdb_list_entity_types", json!({}))["entity_types"], json!([]));
}

#[test]
fn scope_is_stored_as_a_tag_and_filters_search_and_ranked_search() {
    let (db, _) = fresh();
    let user = append(&db, json!({"chain_key": "c", "thought_type": "PreferenceUpdate", "content": "Ada likes dark mode", "scope": "user"}));
    assert_eq!(user["tags"], json!(["scope:user"]));
    let session = append(&db, json!({"chain_key": "c", "thought_type": "Finding", "content": "Ada asked about dark mode today", "scope": "Session", "tags": ["ui", "scope:session"]}));
    assert_eq!(session["tags"], json!(["ui", "scope:session"]), "the tag is not repeated");
    append(&db, json!({"chain_key": "c", "thought_type": "Finding", "content": "dark mode shipped", "tags": ["ui"]}));

    let found = ok(&db, "mentisdb_search", json!({"chain_key": "c", "scope": "user"}));
    assert_eq!(ids_of(&found["thoughts"]), vec![0]);
    // ANDed with the other filters (tags_any included).
    let found = ok(&db, "mentisdb_search", json!({"chain_key": "c", "scope": "session", "tags_any": ["ui"]}));
    assert_eq!(ids_of(&found["thoughts"]), vec![1]);
    let ranked = ok(&db, "mentisdb_ranked_search", json!({"chain_key": "c", "text": "dark mode", "scope": "user"}));
    let hits: Vec<u64> = ranked["results"].as_array().unwrap().iter().map(|h| h["thought"]["index"].as_u64().unwrap()).collect();
    assert_eq!(hits, vec![0], "{ranked}");
    let e = err(&db, "mentisdb_append", json!({"chain_key": "c", "thought_type": "Idea", "content": "x", "scope": "team"})).to_string();
    assert!(e.contains("user") && e.contains("session") && e.contains("agent"), "{e}");
}

fn open_with_dedup(threshold: Option<f64>, window: usize) -> (MentisDb, Arc<MemoryStorage>) {
    let storage = Arc::new(MemoryStorage::new());
    let config = DbConfig { dedup_threshold: threshold, dedup_scan_window: window, ..DbConfig::default() };
    let (db, _) = MentisDb::open(storage.clone() as Arc<dyn Storage>, Arc::new(FixedClock::new(T0, 1000)), ids(), config).unwrap();
    (db, storage)
}

#[test]
fn dedup_relates_a_near_duplicate_to_what_it_supersedes() {
    let (db, _) = open_with_dedup(Some(0.6), 64);
    let canary = append(&db, json!({"chain_key": "c", "thought_type": "Decision", "content": "Deploys use a canary."}));
    append(&db, json!({"chain_key": "c", "thought_type": "Finding", "content": "the cache is cold after restarts"}));
    // {deploy, use, the, canari} against {deploy, use, a, canari}: 3 of 5 shared = 0.6.
    let dup = append(&db, json!({"chain_key": "c", "thought_type": "Decision", "content": "deploy uses the canary"}));
    assert_eq!(dup["relations"], json!([{"kind": "Supersedes", "target_id": canary["id"], "target_index": 0, "chain_key": null, "valid_at": dup["timestamp"]}]));
    // Below the threshold: nothing added.
    let other = append(&db, json!({"chain_key": "c", "thought_type": "Finding", "content": "the cache warms in a minute"}));
    assert_eq!(other["relations"], json!([]));
    // Default ranked retrieval now shows the newer wording only.
    let ranked = ok(&db, "mentisdb_ranked_search", json!({"chain_key": "c", "text": "canary deploy"}));
    let hits: Vec<u64> = ranked["results"].as_array().unwrap().iter().map(|h| h["thought"]["index"].as_u64().unwrap()).collect();
    assert_eq!(hits.first(), Some(&2), "{ranked}");
    assert!(!hits.contains(&0), "the superseded wording is hidden: {ranked}");
    // A retried append replays (the same target is found before the stored thought).
    let a = json!({"chain_key": "c", "thought_type": "Decision", "content": "the cache is cold after restarts!", "thought_id": "r-1"});
    let first = ok(&db, "mentisdb_append", a.clone());
    assert_eq!(first["thought"]["relations"][0]["target_index"], 1);
    let again = ok(&db, "mentisdb_append", a);
    assert_eq!((again["replay"].as_bool(), &again["thought"]), (Some(true), &first["thought"]));
}

#[test]
fn dedup_is_off_by_default_and_looks_only_at_the_scan_window() {
    let (db, _) = fresh();
    append(&db, json!({"chain_key": "c", "thought_type": "Decision", "content": "use a canary"}));
    assert_eq!(append(&db, json!({"chain_key": "c", "thought_type": "Decision", "content": "use a canary"}))["relations"], json!([]));

    let (db, _) = open_with_dedup(Some(0.9), 1);
    append(&db, json!({"chain_key": "c", "thought_type": "Decision", "content": "use a canary"}));
    append(&db, json!({"chain_key": "c", "thought_type": "Finding", "content": "something else entirely"}));
    assert_eq!(append(&db, json!({"chain_key": "c", "thought_type": "Decision", "content": "use a canary"}))["relations"], json!([]), "outside the window");
    let t = append(&db, json!({"chain_key": "c", "thought_type": "Decision", "content": "use a canary"}));
    assert_eq!(t["relations"][0]["target_index"], 2);
}

/// Agent ids and names, tags and concepts are one allocation per text in a
/// chain, and a list of tags or concepts one per list (`label.rs`): for
/// thoughts appended, for thoughts read back at open (binary and JSONL
/// chains), and for thoughts appended after it.
#[test]
fn labels_are_shared_across_a_chains_thoughts_appended_and_reopened() {
    let (db, storage) = fresh();
    for (chain, format) in [("bin", "binary"), ("lines", "jsonl")] {
        ok(&db, "mentisdb_bootstrap", json!({"chain_key": chain, "storage_adapter": format, "agent_id": "ada", "content": "finding 0", "tags": ["ops", "db"], "concepts": ["latency"]}));
        for i in 1..3 {
            ok(&db, "mentisdb_append", json!({"chain_key": chain, "agent_id": "ada", "thought_type": "Finding", "content": format!("finding {i}"), "tags": ["ops", "db"], "concepts": ["latency"]}));
        }
        ok(&db, "mentisdb_append", json!({"chain_key": chain, "agent_id": "ada", "thought_type": "Finding", "content": "other tags", "tags": ["ops"], "concepts": ["latency"]}));
        let format_of = db.with_chain(chain, |c| c.unwrap().format()).unwrap();
        assert_eq!(format_of.adapter_name(), format);
    }
    let shared = |db: &MentisDb, chain: &str, n: usize| {
        db.with_chain(chain, |c| {
            let t = c.expect("the chain exists").thoughts();
            assert_eq!(t.len(), n);
            let first = &t[0];
            for other in t.range(1..).filter(|o| &*o.content != "other tags") {
                assert!(other.agent_id.shares(&first.agent_id) && other.agent_name.shares(&first.agent_name), "{chain}: agent");
                assert!(other.tags.iter().zip(first.tags.iter()).all(|(a, b)| a.shares(b)), "{chain}: tags");
                assert!(other.concepts[0].shares(&first.concepts[0]), "{chain}: concepts");
                assert!(other.tags.shares(&first.tags) && other.concepts.shares(&first.concepts), "{chain}: lists");
            }
            assert!(!first.tags[0].shares(&first.tags[1]));
            assert!(t.iter().any(|t| &*t.content == "other tags" && t.tags[0].shares(&first.tags[0]) && !t.tags.shares(&first.tags)), "{chain}: another list of the same labels");
        })
        .unwrap();
    };
    for chain in ["bin", "lines"] {
        shared(&db, chain, 4);
    }
    drop(db);
    let db = reopen(storage);
    for chain in ["bin", "lines"] {
        ok(&db, "mentisdb_append", json!({"chain_key": chain, "agent_id": "ada", "thought_type": "Finding", "content": "after reopening", "tags": ["ops", "db"], "concepts": ["latency"]}));
        shared(&db, chain, 5);
    }
}

/// A chain large enough for several decoding jobs at open (1,024 records
/// or more each) keeps a label as one allocation per job, and a thought
/// appended after opening takes one of those.
#[test]
fn labels_read_in_several_jobs_stay_one_allocation_per_job() {
    let (db, storage) = fresh();
    for i in 0..3000 {
        let mut t = mentisdb_core::NewThought::new("ada", ThoughtType::Finding, &format!("finding {i}"));
        t.tags = vec!["ops".into()];
        db.append("big", t).unwrap();
    }
    drop(db);
    let db = reopen(storage);
    ok(&db, "mentisdb_append", json!({"chain_key": "big", "agent_id": "ada", "thought_type": "Finding", "content": "after reopening", "tags": ["ops"]}));
    db.with_chain("big", |c| {
        let thoughts = c.expect("the chain exists").thoughts();
        let distinct = |label: fn(&Thought) -> &mentisdb_core::Label| thoughts.iter().map(|t| label(t).as_ptr() as usize).collect::<std::collections::BTreeSet<_>>().len();
        assert!((2..=4).contains(&distinct(|t| &t.agent_id)), "one agent id per decoding job: {}", distinct(|t| &t.agent_id));
        assert_eq!(distinct(|t| &t.agent_id), distinct(|t| &t.tags[0]));
        let last = thoughts.last().unwrap();
        assert!(thoughts.range(..3000).any(|t| t.agent_id.shares(&last.agent_id) && t.tags[0].shares(&last.tags[0])), "the new thought shares the kept labels");
    })
    .unwrap();
}
