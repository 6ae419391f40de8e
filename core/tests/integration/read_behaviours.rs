//! What reads answer in MentisDB 0.10.10's terms: a read of a chain that does
//! not exist is `not_found` (the default chain reads as empty); superseded,
//! corrected and invalidated thoughts are hidden from every read that ranks
//! or lists memory unless `include_invalidated` (alias `include_superseded`);
//! ranked search pages with `offset` and fuses rankings on `enable_reranking`.

use crate::common;
use common::*;
use mentisdb_core::{ErrorKind, MentisDb};
use serde_json::{json, Value};

#[test]
fn reads_of_a_missing_chain_are_not_found_but_the_default_chain_reads_empty() {
    let (db, _) = fresh();
    let reads: &[(&str, Value)] = &[
        ("mentisdb_search", json!({"text": "x"})),
        ("mentisdb_recent_context", json!({})),
        ("mentisdb_memory_markdown", json!({})),
        ("mentisdb_get_genesis_thought", json!({})),
        ("mentisdb_head", json!({})),
        ("mentisdb_traverse_thoughts", json!({})),
        ("mentisdb_list_agents", json!({})),
        ("mentisdb_list_agent_registry", json!({})),
        ("mentisdb_ranked_search", json!({"text": "x"})),
        ("mentisdb_context_bundles", json!({"text": "x"})),
        ("mentisdb_lexical_search", json!({"text": "x"})),
        ("mentisdb_summary_candidates", json!({})),
    ];
    for (tool, args) in reads {
        let mut missing = args.clone();
        missing["chain_key"] = json!("no-such-chain");
        let e = err(&db, tool, missing);
        assert_eq!(e.kind(), ErrorKind::NotFound, "{tool}: {e}");
        assert!(e.to_string().contains("chain 'no-such-chain' not found"), "{tool}: {e}");
        ok(&db, tool, args.clone());
    }
    assert_eq!(err(&db, "mentisdb_get_thought", json!({"chain_key": "no-such-chain", "thought_index": 0})).kind(), ErrorKind::NotFound);
    // A malformed key is bad input, not a missing chain.
    assert_eq!(err(&db, "mentisdb_head", json!({"chain_key": "x".repeat(10_000)})).kind(), ErrorKind::InvalidArguments);
    // Once written, the chain reads.
    ok(&db, "mentisdb_append", json!({"chain_key": "no-such-chain", "thought_type": "Finding", "content": "now it exists"}));
    assert_eq!(ok(&db, "mentisdb_head", json!({"chain_key": "no-such-chain"}))["thought_count"], 1);
}

fn append(db: &MentisDb, content: &str, relations: Value) -> u64 {
    ok(db, "mentisdb_append", json!({"chain_key": "m", "agent_id": "ada", "thought_type": "Decision", "content": content, "relations": relations}))["thought"]["index"].as_u64().unwrap()
}

/// Thoughts 0..=2 are retired by 3..=5 (Supersedes, Corrects, Invalidates); 6 is only supported by 7.
fn retiring_chain() -> MentisDb {
    let (db, _) = fresh();
    append(&db, "kiwi plan one", json!([]));
    append(&db, "kiwi fact two", json!([]));
    append(&db, "kiwi claim three", json!([]));
    append(&db, "kiwi plan one revised", json!([{"kind": "Supersedes", "target_index": 0}]));
    append(&db, "kiwi fact two corrected", json!([{"kind": "Corrects", "target_index": 1}]));
    append(&db, "kiwi claim three withdrawn", json!([{"kind": "Invalidates", "target_index": 2}]));
    append(&db, "kiwi note six", json!([]));
    append(&db, "kiwi note seven", json!([{"kind": "Supports", "target_index": 6}]));
    db
}

/// The contents of the retiring chain, by index.
const CONTENTS: [&str; 8] = ["kiwi plan one", "kiwi fact two", "kiwi claim three", "kiwi plan one revised", "kiwi fact two corrected", "kiwi claim three withdrawn", "kiwi note six", "kiwi note seven"];

const RETIRED: [&str; 3] = ["kiwi plan one", "kiwi fact two", "kiwi claim three"];

/// The contents a read shows, whatever the shape of its reply.
fn shown(tool: &str, reply: &Value) -> Vec<String> {
    match tool {
        "mentisdb_search" => contents(&reply["thoughts"]),
        "mentisdb_ranked_search" | "mentisdb_lexical_search" | "mentisdb_federated_search" => reply["results"].as_array().unwrap().iter().map(|h| h["thought"]["content"].as_str().unwrap().to_string()).collect(),
        "mentisdb_context_bundles" => reply["bundles"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|b| std::iter::once(b["seed"]["thought"]["content"].clone()).chain(b["support"].as_array().unwrap().iter().map(|s| s["thought"]["content"].clone())))
            .map(|c| c.as_str().unwrap().to_string())
            .collect(),
        "mentisdb_summary_candidates" => reply["candidates"].as_array().unwrap().iter().flat_map(|c| c["source_indices"].as_array().unwrap().iter().map(|i| CONTENTS[i.as_u64().unwrap() as usize].to_string())).collect(),
        _ => {
            let text = reply.get("prompt").or_else(|| reply.get("markdown")).and_then(Value::as_str).unwrap();
            CONTENTS
                .iter()
                .filter(|c| text.lines().any(|l| l.trim_end().ends_with(*c)))
                .map(|c| c.to_string())
                .collect()
        }
    }
}

#[test]
fn every_read_path_hides_retired_thoughts_unless_asked() {
    let db = retiring_chain();
    let paths: &[(&str, Value)] = &[
        ("mentisdb_search", json!({"chain_key": "m", "text": "kiwi"})),
        ("mentisdb_ranked_search", json!({"chain_key": "m", "text": "kiwi", "limit": 20})),
        ("mentisdb_context_bundles", json!({"chain_key": "m", "text": "kiwi", "limit": 20})),
        ("mentisdb_recent_context", json!({"chain_key": "m"})),
        ("mentisdb_memory_markdown", json!({"chain_key": "m"})),
        ("mentisdb_lexical_search", json!({"chain_key": "m", "text": "kiwi", "limit": 20})),
        ("mentisdb_federated_search", json!({"chain_keys": ["m"], "text": "kiwi", "limit": 20})),
        ("mentisdb_summary_candidates", json!({"chain_key": "m"})),
    ];
    for (tool, args) in paths {
        let default = shown(tool, &ok(&db, tool, args.clone()));
        assert!(default.iter().any(|c| c == "kiwi note six"), "{tool} shows a merely supported thought: {default:?}");
        assert!(default.iter().any(|c| c == "kiwi plan one revised"), "{tool}: {default:?}");
        for retired in RETIRED {
            assert!(!default.iter().any(|c| c == retired), "{tool} hides {retired:?} by default: {default:?}");
        }
        for flag in ["include_invalidated", "include_superseded"] {
            let mut all = args.clone();
            all[flag] = json!(true);
            let all = shown(tool, &ok(&db, tool, all));
            for retired in RETIRED {
                assert!(all.iter().any(|c| c == retired), "{tool} with {flag} shows {retired:?}: {all:?}");
            }
        }
    }
}

#[test]
fn recent_context_takes_the_newest_shown_thoughts() {
    let db = retiring_chain();
    let prompt = ok(&db, "mentisdb_recent_context", json!({"chain_key": "m", "last_n": 5}))["prompt"].as_str().unwrap().to_string();
    for c in ["kiwi plan one revised", "kiwi fact two corrected", "kiwi claim three withdrawn", "kiwi note six", "kiwi note seven"] {
        assert!(prompt.contains(c), "{c} in {prompt}");
    }
}

#[test]
fn as_of_still_answers_as_the_chain_stood() {
    let db = retiring_chain();
    // Thought 3 (the supersession) was stamped after thought 2; as of thought 2 nothing was retired yet.
    let at = ok(&db, "mentisdb_get_thought", json!({"chain_key": "m", "thought_index": 2}))["thought"]["timestamp"].clone();
    let hits = shown("mentisdb_ranked_search", &ok(&db, "mentisdb_ranked_search", json!({"chain_key": "m", "text": "kiwi", "as_of": at})));
    assert_eq!(hits.len(), 3, "{hits:?}");
    assert!(RETIRED.iter().all(|r| hits.iter().any(|h| h == r)), "{hits:?}");
}

fn indices(reply: &Value) -> Vec<u64> {
    reply["results"].as_array().unwrap().iter().map(|h| h["thought"]["index"].as_u64().unwrap()).collect()
}

#[test]
fn ranked_search_pages_with_offset() {
    let (db, _) = fresh();
    for i in 0..12 {
        ok(&db, "mentisdb_append", json!({"chain_key": "p", "thought_type": "Finding", "content": format!("mango report {i} {}", "mango ".repeat(i % 4))}));
    }
    let all = ok(&db, "mentisdb_ranked_search", json!({"chain_key": "p", "text": "mango", "limit": 12}));
    let page = ok(&db, "mentisdb_ranked_search", json!({"chain_key": "p", "text": "mango", "limit": 3, "offset": 4}));
    assert_eq!(indices(&page), indices(&all)[4..7].to_vec());
    assert_eq!(page["total"], all["total"], "total counts every match, not the page");
    let past = ok(&db, "mentisdb_ranked_search", json!({"chain_key": "p", "text": "mango", "offset": 50}));
    assert!(past["results"].as_array().unwrap().is_empty());
    let bundles = ok(&db, "mentisdb_context_bundles", json!({"chain_key": "p", "text": "mango", "limit": 2, "offset": 1}));
    let all_bundles = ok(&db, "mentisdb_context_bundles", json!({"chain_key": "p", "text": "mango", "limit": 3}));
    assert_eq!(bundles["bundles"][0]["seed"]["thought"]["index"], all_bundles["bundles"][1]["seed"]["thought"]["index"]);
}

#[test]
fn reranking_fuses_rankings_only_when_asked() {
    let (db, _) = fresh();
    ok(&db, "mentisdb_append", json!({"chain_key": "r", "thought_type": "Finding", "content": "papaya harvest plan"}));
    for i in 0..4 {
        ok(&db, "mentisdb_append", json!({"chain_key": "r", "thought_type": "Finding", "content": format!("papaya note {i}"), "refs": [0]}));
    }
    let plain = ok(&db, "mentisdb_ranked_search", json!({"chain_key": "r", "text": "papaya harvest"}));
    assert!(plain["results"].as_array().unwrap().iter().all(|h| h["score"]["rrf"] == 0.0), "{plain}");
    let fused = ok(&db, "mentisdb_ranked_search", json!({"chain_key": "r", "text": "papaya harvest", "enable_reranking": true}));
    let top = &fused["results"][0];
    assert_eq!(top["thought"]["index"], 0);
    let rrf = top["score"]["rrf"].as_f64().unwrap();
    assert!(rrf > 0.0, "{fused}");
    let plain_top = plain["results"].as_array().unwrap().iter().find(|h| h["thought"]["index"] == 0).unwrap();
    let gained = top["score"]["total"].as_f64().unwrap() - plain_top["score"]["total"].as_f64().unwrap();
    assert!((gained - 50.0 * rrf).abs() < 1e-3, "the total gains RRF_SCORE_SCALE * rrf: {gained} vs {rrf}");
    // rerank_k: 1 keeps one candidate per ranking.
    let narrow = ok(&db, "mentisdb_ranked_search", json!({"chain_key": "r", "text": "papaya harvest", "enable_reranking": true, "rerank_k": 1}));
    let fused_count = narrow["results"].as_array().unwrap().iter().filter(|h| h["score"]["rrf"].as_f64().unwrap() > 0.0).count();
    assert!(fused_count <= 3, "at most one per ranking: {narrow}");
    assert!(fused_count < fused["results"].as_array().unwrap().iter().filter(|h| h["score"]["rrf"].as_f64().unwrap() > 0.0).count());
}

#[test]
fn a_text_filter_matches_thoughts_of_an_agent_whose_registry_record_holds_the_text() {
    let (db, _) = fresh();
    ok(&db, "mentisdb_upsert_agent", json!({"chain_key": "r", "agent_id": "ada", "display_name": "Ada", "description": "keeps the quokka ledger"}));
    for (agent, content) in [("ada", "Rotated the keys."), ("bob", "Rotated the logs."), ("bob", "Fed the quokka.")] {
        ok(&db, "mentisdb_append", json!({"chain_key": "r", "agent_id": agent, "thought_type": "Finding", "content": content}));
    }
    let contents = |reply: &Value| reply["thoughts"].as_array().unwrap().iter().map(|t| t["content"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    // Ada's thought holds no "quokka", but her record does; Bob's first thought holds neither.
    let found = ok(&db, "mentisdb_search", json!({"chain_key": "r", "text": "quokka"}));
    assert_eq!(contents(&found), ["Rotated the keys.", "Fed the quokka."]);
    let walked = ok(&db, "mentisdb_traverse_thoughts", json!({"chain_key": "r", "text": "quokka", "anchor_boundary": "genesis", "direction": "forward"}));
    assert_eq!(contents(&walked), ["Rotated the keys.", "Fed the quokka."]);
}
