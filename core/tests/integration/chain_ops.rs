//! Branching and merging chains (`mentisdb_branch_from`, `mentisdb_merge_chains`),
//! as MentisDB 0.10 does them, and deleting one (`mentisdb_delete_chain`).

use crate::common;

use common::{err, fresh, ok, reopen};
use mentisdb_core::{ErrorKind, Storage};
use serde_json::json;

fn append(db: &mentisdb_core::MentisDb, chain: &str, agent: &str, content: &str) -> serde_json::Value {
    ok(db, "mentisdb_append", json!({"chain_key": chain, "agent_id": agent, "thought_type": "Insight", "content": content, "tags": ["t"], "importance": 0.7}))
}

#[test]
fn a_branch_starts_with_a_snapshot_pointing_at_its_source_thought() {
    let (db, storage) = fresh();
    append(&db, "main", "planner", "first");
    let second = append(&db, "main", "planner", "second");
    let at = second["thought"]["id"].as_str().unwrap().to_string();

    let made = ok(&db, "mentisdb_branch_from", json!({"source_chain_key": "main", "branch_thought_id": at, "branch_chain_key": "experiment"}));
    assert_eq!(made["branch_chain_key"], "experiment");
    assert_eq!(made["source_chain_key"], "main");
    assert_eq!(made["branch_thought_id"], at.as_str());
    let genesis = ok(&db, "mentisdb_get_genesis_thought", json!({"chain_key": "experiment"}))["thought"].clone();
    assert_eq!(genesis["id"], made["genesis_thought_id"]);
    assert_eq!(genesis["thought_type"], "StateSnapshot");
    assert_eq!(genesis["agent_id"], "mentisdb");
    assert_eq!(genesis["content"], format!("Branch from chain 'main' at thought {at}"));
    assert_eq!(genesis["relations"][0]["kind"], "BranchesFrom");
    assert_eq!(genesis["relations"][0]["target_id"], at.as_str());
    assert_eq!(genesis["relations"][0]["chain_key"], "main");
    assert_eq!(ok(&db, "mentisdb_head", json!({"chain_key": "main"}))["thought_count"], 2, "the source is unchanged");

    // The branch is an ordinary chain: it takes appends and survives a restart.
    append(&db, "experiment", "planner", "on the branch");
    let db = reopen(storage);
    assert_eq!(ok(&db, "mentisdb_head", json!({"chain_key": "experiment"}))["thought_count"], 2);

    // A key in use, an unknown thought or chain, and a self-branch are refused.
    let again = err(&db, "mentisdb_branch_from", json!({"source_chain_key": "main", "branch_thought_id": at, "branch_chain_key": "experiment"}));
    assert_eq!(again.kind(), ErrorKind::Conflict, "{again}");
    let missing = err(&db, "mentisdb_branch_from", json!({"source_chain_key": "main", "branch_thought_id": "no-such-id", "branch_chain_key": "b2"}));
    assert_eq!(missing.kind(), ErrorKind::NotFound, "{missing}");
    assert_eq!(err(&db, "mentisdb_branch_from", json!({"source_chain_key": "nope", "branch_thought_id": at, "branch_chain_key": "b3"})).kind(), ErrorKind::NotFound);
    assert_eq!(err(&db, "mentisdb_branch_from", json!({"source_chain_key": "main", "branch_thought_id": at, "branch_chain_key": "main"})).kind(), ErrorKind::InvalidArguments);
    let chains = ok(&db, "mentisdb_list_chains", json!({}));
    assert!(!chains.to_string().contains("\"b2\"") && !chains.to_string().contains("\"b3\""), "failed branches create nothing: {chains}");
}

#[test]
fn a_merge_moves_every_thought_maps_agents_and_deletes_the_source() {
    let (db, storage) = fresh();
    append(&db, "team", "planner", "team plan");
    append(&db, "team", "reviewer", "team review");
    append(&db, "scratch", "planner", "scratch idea one");
    append(&db, "scratch", "planer-bot", "scratch idea two");
    append(&db, "scratch", "zzz", "scratch idea three");
    let forgotten = append(&db, "scratch", "planner", "to be forgotten");
    ok(&db, "mentisdb_forget_thought", json!({"chain_key": "scratch", "thought_id": forgotten["thought"]["id"], "reason": "test", "agent_id": "ops"}));

    let merged = ok(&db, "mentisdb_merge_chains", json!({"source_chain_key": "scratch", "target_chain_key": "team"}));
    assert_eq!(merged, json!({"thoughts_copied": 3, "agents_remapped": 2, "source_deleted": true}));
    let check = |db: &mentisdb_core::MentisDb| {
        let found = ok(db, "mentisdb_search", json!({"chain_key": "team", "text": "scratch idea"}));
        let thoughts = found["thoughts"].as_array().unwrap();
        let mut by_content: Vec<(String, String)> = thoughts.iter().map(|t| (t["content"].as_str().unwrap().to_string(), t["agent_id"].as_str().unwrap().to_string())).collect();
        by_content.sort();
        assert_eq!(
            by_content,
            [
                ("scratch idea one".to_string(), "planner".to_string()),
                ("scratch idea three".to_string(), "planner".to_string()),
                ("scratch idea two".to_string(), "planner".to_string()),
            ]
        );
        assert!(thoughts.iter().all(|t| t["tags"] == json!(["t"]) && t["importance"] == json!(0.7) && t["thought_type"] == "Insight"));
        assert_eq!(ok(db, "mentisdb_head", json!({"chain_key": "team"}))["thought_count"], 5);
        assert!(ok(db, "mentisdb_head", json!({"chain_key": "team"}))["integrity_ok"].as_bool().unwrap());
        let chains = ok(db, "mentisdb_list_chains", json!({})).to_string();
        assert!(!chains.contains("scratch"), "the source chain is gone: {chains}");
    };
    check(&db);
    assert!(storage.list("chains/").unwrap().iter().all(|o| !o.contains("scratch")), "no object of the source stays: {:?}", storage.list("chains/"));
    let db = reopen(storage);
    check(&db);
    // The key is free again.
    append(&db, "scratch", "planner", "a new scratch chain");
    assert_eq!(ok(&db, "mentisdb_head", json!({"chain_key": "scratch"}))["thought_count"], 1);

    assert_eq!(err(&db, "mentisdb_merge_chains", json!({"source_chain_key": "gone", "target_chain_key": "team"})).kind(), ErrorKind::NotFound);
    assert_eq!(err(&db, "mentisdb_merge_chains", json!({"source_chain_key": "team", "target_chain_key": "team"})).kind(), ErrorKind::InvalidArguments);
}

#[test]
fn a_merge_into_a_new_chain_keeps_agent_ids_and_a_failed_merge_deletes_nothing() {
    let (db, _) = fresh();
    append(&db, "src", "alpha", "one");
    append(&db, "src", "beta", "two");
    let merged = ok(&db, "mentisdb_merge_chains", json!({"source_chain_key": "src", "target_chain_key": "fresh-target"}));
    assert_eq!(merged["thoughts_copied"], 2);
    assert_eq!(merged["agents_remapped"], 0);
    let agents = ok(&db, "mentisdb_list_agents", json!({"chain_key": "fresh-target"})).to_string();
    assert!(agents.contains("alpha") && agents.contains("beta"), "{agents}");

    // The target's only agent is disabled: appends fail, the source stays.
    append(&db, "src2", "gamma", "kept");
    ok(&db, "mentisdb_upsert_agent", json!({"chain_key": "locked", "agent_id": "gamma"}));
    ok(&db, "mentisdb_disable_agent", json!({"chain_key": "locked", "agent_id": "gamma"}));
    let e = err(&db, "mentisdb_merge_chains", json!({"source_chain_key": "src2", "target_chain_key": "locked"}));
    assert_eq!(e.kind(), ErrorKind::AppendRejected, "{e}");
    assert_eq!(ok(&db, "mentisdb_head", json!({"chain_key": "src2"}))["thought_count"], 1);
}

#[test]
fn an_exported_memory_markdown_imports_back_and_exports_the_same() {
    let (db, _) = fresh();
    let rows = [
        json!({"agent_id": "planner", "agent_name": "Planner, Inc", "thought_type": "Decision", "content": "Ship behind a flag.\nRoll out to 5% first.", "importance": 0.9, "confidence": 0.8, "tags": ["deploy", "risk"], "concepts": ["canary"]}),
        json!({"agent_id": "reviewer", "thought_type": "Insight", "role": "Retrospective", "content": "Flags (like this one) made rollback cheap", "importance": 0.6}),
        json!({"agent_id": "planner", "agent_name": "Planner, Inc", "thought_type": "Decision", "content": "Keep the old path for a week", "tags": ["deploy"]}),
        json!({"agent_id": "reviewer", "thought_type": "Question", "content": "Who owns the flag cleanup?"}),
    ];
    for r in &rows {
        let mut r = r.clone();
        r["chain_key"] = json!("original");
        ok(&db, "mentisdb_append", r);
    }
    let export = |chain: &str| {
        let md = ok(&db, "mentisdb_memory_markdown", json!({"chain_key": chain}))["markdown"].as_str().unwrap().to_string();
        // Times differ (the import appends now) and the title names the chain.
        md.lines().skip(3).map(|l| l.split(", 2026-").next().unwrap().to_string() + if l.contains(", importance") { l.split_once(", importance").unwrap().1 } else { "" }).collect::<Vec<_>>().join("\n")
    };
    let md = ok(&db, "mentisdb_memory_markdown", json!({"chain_key": "original"}))["markdown"].as_str().unwrap().to_string();
    let imported = ok(&db, "mentisdb_import_memory_markdown", json!({"chain_key": "copy", "markdown": md}));
    assert_eq!(imported, json!({"imported": [0, 1, 2, 3], "count": 4}));
    assert_eq!(export("copy"), export("original"));
    let first = ok(&db, "mentisdb_get_thought", json!({"chain_key": "copy", "thought_index": 0}))["thought"].clone();
    assert_eq!(first["agent_name"], "Planner, Inc");
    assert_eq!(first["content"], "Ship behind a flag.\nRoll out to 5% first.");
    assert_eq!(first["concepts"], json!(["canary"]));

    // MentisDB 0.10's layout, with the default agent for lines naming none.
    let reference = "# MEMORY\n\n## Knowledge\n\n- [#0] Insight: Use WAL mode (agent sqlite-expert; importance 0.80; tags db)\n- [#1] FactLearned: The API rate limit is 100/min\n";
    let got = ok(&db, "mentisdb_import_memory_markdown", json!({"chain_key": "from-ref", "markdown": reference, "default_agent_id": "importer"}));
    assert_eq!(got["count"], 2);
    let second = ok(&db, "mentisdb_get_thought", json!({"chain_key": "from-ref", "thought_index": 1}))["thought"].clone();
    assert_eq!((second["agent_id"].as_str(), second["thought_type"].as_str()), (Some("importer"), Some("FactLearned")));
    assert_eq!(ok(&db, "mentisdb_import_memory_markdown", json!({"chain_key": "none", "markdown": "nothing here"}))["count"], 0);
}

#[test]
fn no_acknowledged_append_to_the_source_is_lost_by_a_merge() {
    let (db, _) = fresh();
    let db = std::sync::Arc::new(db);
    for i in 0..50 {
        append(&db, "busy", "writer", &format!("before {i}"));
    }
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || {
            let mut acknowledged = Vec::new();
            for i in 0..2000 {
                let content = format!("during {i}");
                match db.call("mentisdb_append", json!({"chain_key": "busy", "agent_id": "writer", "thought_type": "Finding", "content": content})) {
                    Ok(_) => acknowledged.push(content),
                    Err(e) if e.kind() == ErrorKind::NotFound => break,
                    Err(e) => panic!("{e}"),
                }
            }
            acknowledged
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(5));
    let merged = ok(&db, "mentisdb_merge_chains", json!({"source_chain_key": "busy", "target_chain_key": "calm"}));
    let acknowledged = writer.join().unwrap();
    let mut stored: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for chain in ["calm", "busy"] {
        // "busy" exists again only if the writer appended after the merge.
        let Ok(found) = db.call("mentisdb_search", json!({"chain_key": chain, "limit": 100000})) else { continue };
        stored.extend(found["thoughts"].as_array().into_iter().flatten().map(|t| t["content"].as_str().unwrap().to_string()));
    }
    for content in &acknowledged {
        assert!(stored.contains(content), "acknowledged append {content:?} was lost (merged {merged})");
    }
}

#[test]
fn a_deleted_chain_is_gone_from_storage_and_listing_and_its_key_is_free() {
    let (db, storage) = fresh();
    append(&db, "doomed", "alpha", "one");
    append(&db, "doomed", "alpha", "two");
    append(&db, "kept", "alpha", "stays");
    let reply = ok(&db, "mentisdb_delete_chain", json!({"chain_key": "doomed"}));
    assert_eq!(reply, json!({"chain_key": "doomed", "deleted": true, "thought_count": 2}));
    assert!(!ok(&db, "mentisdb_list_chains", json!({})).to_string().contains("doomed"));
    assert!(storage.list("").unwrap().iter().all(|o| !o.contains("doomed")), "{:?}", storage.list(""));
    assert_eq!(err(&db, "mentisdb_head", json!({"chain_key": "doomed"})).kind(), ErrorKind::NotFound);
    assert_eq!(err(&db, "mentisdb_delete_chain", json!({"chain_key": "doomed"})).kind(), ErrorKind::NotFound);
    assert_eq!(err(&db, "mentisdb_delete_chain", json!({})).kind(), ErrorKind::InvalidArguments, "no default chain for a deletion");
    let db = reopen(storage);
    assert_eq!(ok(&db, "mentisdb_head", json!({"chain_key": "kept"}))["thought_count"], 1);
    append(&db, "doomed", "beta", "a new chain under the old key");
    assert_eq!(ok(&db, "mentisdb_head", json!({"chain_key": "doomed"}))["thought_count"], 1);
}

/// Reads only chains whose key starts with `exp` (a token scoped to the branches).
#[derive(Debug)]
struct BranchesOnly;

impl mentisdb_core::dispatch::ChainReads for BranchesOnly {
    fn may_read(&self, chain_key: &str) -> bool {
        chain_key.starts_with("exp")
    }
}

#[test]
fn a_ranked_search_of_a_branch_also_answers_from_the_chains_it_branched_from() {
    let (db, _) = fresh();
    let at = append(&db, "main", "ops", "the kubernetes cluster has three nodes")["thought"]["id"].as_str().unwrap().to_string();
    append(&db, "main", "ops", "lunch is at noon");
    ok(&db, "mentisdb_branch_from", json!({"source_chain_key": "main", "branch_thought_id": at, "branch_chain_key": "exp"}));
    let upgrade = append(&db, "exp", "ops", "the kubernetes upgrade is planned for May")["thought"]["id"].as_str().unwrap().to_string();
    ok(&db, "mentisdb_branch_from", json!({"source_chain_key": "exp", "branch_thought_id": upgrade, "branch_chain_key": "exp-deeper"}));
    let found = |chain: &str| -> Vec<(String, String)> {
        let r = ok(&db, "mentisdb_ranked_search", json!({"chain_key": chain, "text": "kubernetes", "limit": 10}));
        r["results"].as_array().unwrap().iter().map(|h| (h["chain_key"].as_str().unwrap().to_string(), h["thought"]["content"].as_str().unwrap().to_string())).collect()
    };
    // The branch answers from itself and from main, each hit naming its chain.
    let exp = found("exp");
    assert!(exp.contains(&("exp".into(), "the kubernetes upgrade is planned for May".into())), "{exp:?}");
    assert!(exp.contains(&("main".into(), "the kubernetes cluster has three nodes".into())), "{exp:?}");
    // A branch of a branch reaches its grandparent too; the root sees only itself.
    let deeper: Vec<String> = found("exp-deeper").into_iter().map(|(c, _)| c).collect();
    assert!(deeper.contains(&"main".to_string()) && deeper.contains(&"exp".to_string()), "{deeper:?}");
    assert!(found("main").iter().all(|(c, _)| c == "main"));
    // A caller that may not read main gets the branch's own answers only.
    let caller = mentisdb_core::dispatch::Caller { name: "branch-bot", all_chains: false, admin: false, reads: Some(&BranchesOnly) };
    let raw = db.call_raw_as(Some(caller), "mentisdb_ranked_search", json!({"chain_key": "exp", "text": "kubernetes"})).unwrap();
    let r: serde_json::Value = serde_json::from_str(raw.get()).unwrap();
    let chains: Vec<&str> = r["results"].as_array().unwrap().iter().map(|h| h["chain_key"].as_str().unwrap()).collect();
    assert!(!chains.is_empty() && chains.iter().all(|c| *c == "exp"), "{r}");
}

#[test]
fn a_merge_keeps_ids_so_facts_and_reviews_carry_over() {
    let (db, _) = fresh();
    ok(&db, "mentisdb_record_fact", json!({"chain_key": "src", "subject": "db", "predicate": "is", "object": "pg15", "valid_from": "2026-01-01T00:00:00Z"}));
    ok(&db, "mentisdb_record_fact", json!({"chain_key": "src", "subject": "db", "predicate": "is", "object": "pg16", "valid_from": "2026-02-01T00:00:00Z"}));
    let review = ok(&db, "mentisdb_request_review", json!({"chain_key": "src", "subject": "upgrade", "agent_id": "ada"}));
    ok(&db, "mentisdb_decide_review", json!({"chain_key": "src", "review_id": review["review_id"], "decision": "approved", "agent_id": "bob"}));
    // The team knows both agents, so the merge writes them as themselves.
    for agent in ["ada", "bob"] {
        ok(&db, "mentisdb_append", json!({"chain_key": "team", "agent_id": agent, "thought_type": "Finding", "content": format!("{agent}'s own")}));
    }
    ok(&db, "mentisdb_merge_chains", json!({"source_chain_key": "src", "target_chain_key": "team"}));
    let facts = ok(&db, "mentisdb_query_facts", json!({"chain_key": "team", "subject": "db"}));
    assert_eq!(facts["facts"].as_array().unwrap().iter().map(|f| f["object"].as_str().unwrap()).collect::<Vec<_>>(), ["pg16"], "the second still closes the first: {facts}");
    let reviews = ok(&db, "mentisdb_list_reviews", json!({"chain_key": "team", "include_decided": true}));
    assert_eq!((reviews["reviews"][0]["review_id"].clone(), reviews["reviews"][0]["status"].as_str()), (review["review_id"].clone(), Some("approved")), "{reviews}");
}

#[test]
fn a_merge_gives_a_new_id_where_the_target_holds_the_id_and_leaves_uncounted_decisions_behind() {
    let (db, _) = fresh();
    // Two chains reuse a client's idempotency key for different thoughts.
    ok(&db, "mentisdb_append", json!({"chain_key": "a", "thought_id": "daily-summary", "thought_type": "Summary", "content": "a's summary"}));
    ok(&db, "mentisdb_append", json!({"chain_key": "b", "thought_id": "daily-summary", "thought_type": "Summary", "content": "b's summary"}));
    // A review in a, with a decision by someone who may not decide it (it does not count).
    let review = ok(&db, "mentisdb_request_review", json!({"chain_key": "a", "subject": "ship", "reviewers": ["bob"], "agent_id": "ada"}));
    let content = json!({"review": "decision", "review_id": review["review_id"], "decision": "approved", "comment": null}).to_string();
    ok(&db, "mentisdb_append", json!({"chain_key": "a", "agent_id": "dan", "thought_type": "Decision", "tags": ["review"], "content": content}));
    for agent in ["ada", "bob", "dan"] {
        ok(&db, "mentisdb_append", json!({"chain_key": "b", "agent_id": agent, "thought_type": "Finding", "content": format!("{agent} is here")}));
    }
    let merged = ok(&db, "mentisdb_merge_chains", json!({"source_chain_key": "a", "target_chain_key": "b"}));
    assert_eq!(merged["thoughts_copied"], 2, "the summary (under a new id) and the request: {merged}");
    let summaries = ok(&db, "mentisdb_search", json!({"chain_key": "b", "thought_types": ["Summary"]}));
    assert_eq!(common::contents(&summaries["thoughts"]), ["b's summary", "a's summary"]);
    let listed = ok(&db, "mentisdb_list_reviews", json!({"chain_key": "b"}));
    assert_eq!(listed["reviews"][0]["status"], "open", "dan's decision stayed behind: {listed}");
}
