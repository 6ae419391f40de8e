//! Ranked retrieval through the dispatcher: ranked search, relations on
//! append, retirement and `as_of`, graph expansion, context bundles,
//! context resolution, hybrid fusion, and an index rebuilt at open.

use mentisdb_core::ranked::{EmbeddingProvider, HashedNgramEmbedder};
use mentisdb_core::{tool_specs, DbConfig, FixedClock, MemoryStorage, MentisDb, SequentialIds, Storage};
use serde_json::{json, Value};
use std::sync::Arc;

/// Clock start: 2023-11-14T22:13:20Z; appends are two hours apart, so
/// each thought is its own conversation and conversational context (tested
/// on its own with a one-minute clock) stays out of the other assertions.
const T0: i64 = 1_700_000_000_000;
const STEP: i64 = 2 * 3_600_000;

fn open(storage: Arc<dyn Storage>) -> MentisDb {
    open_with_step(storage, STEP)
}

fn open_with_step(storage: Arc<dyn Storage>, step: i64) -> MentisDb {
    MentisDb::open(storage, Arc::new(FixedClock::new(T0, step)), Arc::new(SequentialIds::default()), DbConfig::default()).unwrap().0
}

fn db() -> MentisDb {
    open(Arc::new(MemoryStorage::new()))
}

fn append(db: &MentisDb, args: Value) -> Value {
    let mut args = args;
    args["chain_key"] = json!("r");
    if args.get("thought_type").is_none() {
        args["thought_type"] = json!("FactLearned");
    }
    db.call("mentisdb_append", args).unwrap()["thought"].clone()
}

fn ranked(db: &MentisDb, args: Value) -> Value {
    let mut args = args;
    args["chain_key"] = json!("r");
    db.call("mentisdb_ranked_search", args).unwrap()
}

fn indices(resp: &Value) -> Vec<u64> {
    resp["results"].as_array().unwrap().iter().map(|r| r["thought"]["index"].as_u64().unwrap()).collect()
}

/// A small memory: 0..=4.
fn seeded() -> MentisDb {
    let db = db();
    append(&db, json!({"agent_id": "ada", "content": "We painted a sunrise over the lake last summer."}));
    append(&db, json!({"agent_id": "bob", "content": "The build uses cargo workspaces and a pure core.", "tags": ["rust"], "concepts": ["architecture"]}));
    append(&db, json!({"agent_id": "ada", "content": "Researching adoption agencies for the family.", "importance": 0.9}));
    append(&db, json!({"agent_id": "bob", "content": "Lunch was pasta again.", "thought_type": "Summary"}));
    append(&db, json!({"agent_id": "ada", "content": "Paintings of sunsets sell well at the fair."}));
    db
}

#[test]
fn ranked_search_finds_stemmed_matches_and_explains_scores() {
    let db = seeded();
    let r = ranked(&db, json!({"text": "Who has been painting sunrises?"}));
    assert_eq!(r["backend"], "lexical");
    assert_eq!(indices(&r)[0], 0, "{r:#}");
    assert_eq!(r["total"], 2, "only the two painting thoughts match");
    let top = &r["results"][0];
    assert_eq!(top["matched_terms"], json!(["painting", "sunrises"]));
    assert_eq!(top["match_sources"], json!(["content"]));
    let s = &top["score"];
    for k in ["lexical", "expansion", "graph", "relation", "importance", "recency", "context", "stretch", "agent", "length", "total"] {
        assert!(s[k].is_number(), "score.{k} missing: {s}");
    }
    assert_eq!(s["vector"], 0.0, "no vector signal without a provider");
    // The hit fields the reference MentisDB's Python client reads.
    assert_eq!(top["chain_key"], "r");
    for k in ["seed_support", "confidence", "rrf"] {
        assert_eq!(s[k], 0.0, "score.{k}: a signal this engine does not compute");
    }
    let cohesion = s["context"].as_f64().unwrap() + s["stretch"].as_f64().unwrap();
    // Each part is an f32 written in its shortest form: equal within a few f32 steps.
    assert!((s["session_cohesion"].as_f64().unwrap() - cohesion).abs() <= 1e-6 * cohesion.abs().max(1.0), "{s}");
    let sum: f64 = ["lexical", "expansion", "graph", "relation", "importance", "recency", "context", "stretch", "agent", "length"].iter().map(|k| s[k].as_f64().unwrap()).sum();
    assert!((sum - s["total"].as_f64().unwrap()).abs() < 1e-4);
    assert_eq!(top["thought"]["content"], "We painted a sunrise over the lake last summer.");
}

#[test]
fn tags_concepts_and_agents_are_searchable_fields() {
    let db = seeded();
    let r = ranked(&db, json!({"text": "rust architecture"}));
    assert_eq!(indices(&r), vec![1]);
    assert_eq!(r["results"][0]["match_sources"], json!(["tags", "concepts"]));
    let r = ranked(&db, json!({"text": "bob"}));
    assert_eq!(indices(&r), vec![1, 3], "agent matches; of two that match alike, the one that says more first (the length part)");
    assert_eq!(r["results"][1]["match_sources"], json!(["agent"]));
    let length = |i: usize| r["results"][i]["score"]["length"].as_f64().unwrap();
    assert!(length(0) > 0.0 && length(1) < 0.0, "the longer one above the chain's mean content length, the shorter below");
}

#[test]
fn filters_and_limit_apply() {
    let db = seeded();
    let r = ranked(&db, json!({"text": "painting sunset", "agent_ids": ["bob"]}));
    assert_eq!(r["total"], 0);
    let r = ranked(&db, json!({"text": "painting sunset", "limit": 1}));
    assert_eq!(r["results"].as_array().unwrap().len(), 1);
    assert_eq!(r["total"], 2);
    let r = ranked(&db, json!({"text": "pasta", "thought_types": ["Summary"]}));
    assert_eq!(indices(&r), vec![3]);
    let err = db.call("mentisdb_ranked_search", json!({"text": "x", "thought_types": ["Nope"]})).unwrap_err().to_string();
    assert!(err.contains("unknown thought_type 'Nope'"), "{err}");
    // No query terms: every thought, by importance and recency.
    let r = ranked(&db, json!({"text": "the of and"}));
    assert_eq!(r["total"], 5);
    assert_eq!(indices(&r)[0], 2, "highest importance first");
    // Unknown chain: not found, as 0.10.10 answers (the default chain reads empty).
    let e = db.call("mentisdb_ranked_search", json!({"chain_key": "nowhere", "text": "x"})).unwrap_err();
    assert_eq!(e.kind(), mentisdb_core::ErrorKind::NotFound, "{e}");
}

#[test]
fn relations_and_session_id_are_accepted_on_append() {
    let db = seeded();
    let t = append(&db, json!({
        "content": "Follow-up on the adoption research.",
        "session_id": "s-42",
        "refs": [2],
        "relations": [{"kind": "Supports", "target_index": 2}, {"kind": "RelatedTo", "target_id": "00000000-0000-4000-8000-000000000001"}, {"kind": "References", "target_id": "remote-1", "chain_key": "other"}]
    }));
    assert_eq!(t["session_id"], "s-42");
    assert_eq!(t["refs"], json!([2]));
    let rels = t["relations"].as_array().unwrap();
    // Every relation is valid from its thought's append time (MentisDB 0.10's `valid_at`).
    assert_eq!(rels[0], json!({"kind": "Supports", "target_id": db.call("mentisdb_get_thought", json!({"chain_key": "r", "thought_index": 2})).unwrap()["thought"]["id"], "target_index": 2, "chain_key": null, "valid_at": t["timestamp"]}));
    assert_eq!(rels[1]["target_index"], 0, "sequential ids start at 1, for thought 0");
    assert_eq!(rels[2], json!({"kind": "References", "target_id": "remote-1", "target_index": null, "chain_key": "other", "valid_at": t["timestamp"]}));
    let err = db.call("mentisdb_append", json!({"chain_key": "r", "thought_type": "Finding", "content": "x", "relations": [{"kind": "Likes", "target_index": 0}]})).unwrap_err().to_string();
    assert!(err.contains("unknown relation kind 'Likes'"), "{err}");
    let err = db.call("mentisdb_append", json!({"chain_key": "r", "thought_type": "Finding", "content": "x", "relations": [{"kind": "Supports", "target_index": 99}]})).unwrap_err().to_string();
    assert!(err.contains("99"), "{err}");
}

#[test]
fn superseded_thoughts_are_left_out_unless_asked_and_as_of_rewinds() {
    let db = db();
    append(&db, json!({"content": "The deploy target is staging-eu."}));
    let old_time = append(&db, json!({"content": "Unrelated note about lunch."}))["timestamp"].as_str().unwrap().to_string();
    append(&db, json!({"content": "The deploy target is prod-us now.", "thought_type": "Correction", "relations": [{"kind": "Supersedes", "target_index": 0}]}));
    let r = ranked(&db, json!({"text": "deploy target"}));
    assert_eq!(indices(&r), vec![2]);
    let r = ranked(&db, json!({"text": "deploy target", "include_superseded": true}));
    assert_eq!(indices(&r).len(), 2);
    // As the chain stood before the correction: only the old thought exists and nothing retires it.
    let r = ranked(&db, json!({"text": "deploy target", "as_of": old_time}));
    assert_eq!(indices(&r), vec![0]);
    for kind in ["Invalidates", "Corrects"] {
        let db = self::db();
        append(&db, json!({"content": "alpha fact"}));
        append(&db, json!({"content": "alpha retraction", "relations": [{"kind": kind, "target_index": 0}]}));
        assert_eq!(indices(&ranked(&db, json!({"text": "alpha"}))), vec![1], "{kind}");
    }
    let err = db.call("mentisdb_ranked_search", json!({"text": "x", "as_of": "yesterday"})).unwrap_err().to_string();
    assert!(err.contains("as_of") && err.contains("RFC 3339"), "{err}");
}

#[test]
fn graph_expansion_reaches_related_thoughts() {
    let db = db();
    append(&db, json!({"content": "Kubernetes cluster runs on three nodes."}));
    append(&db, json!({"content": "Budget approved for next quarter."}));
    append(&db, json!({"content": "Decision recorded.", "refs": [0], "relations": [{"kind": "CausedBy", "target_index": 1}]}));
    let r = ranked(&db, json!({"text": "kubernetes nodes"}));
    assert_eq!(indices(&r), vec![0, 2], "the decision refs the hit");
    let reached = &r["results"][1];
    assert_eq!(reached["match_sources"], json!(["graph"]));
    assert!(reached["score"]["graph"].as_f64().unwrap() > 0.0);
    // MentisDB 0.10's graph fields: the direct hit has none, the reached one its path.
    assert_eq!((r["results"][0]["graph_distance"].clone(), r["results"][0]["graph_seed_paths"].clone(), r["results"][0]["graph_path"].clone()), (Value::Null, json!(0), Value::Null));
    assert_eq!((reached["graph_distance"].clone(), reached["graph_seed_paths"].clone(), reached["graph_relation_kinds"].clone()), (json!(1), json!(1), json!(["references"])));
    let visited: Vec<u64> = reached["graph_path"]["visited"].as_array().unwrap().iter().map(|l| l["thought_index"].as_u64().unwrap()).collect();
    assert_eq!((visited, reached["graph_path"]["seed"]["thought_index"].clone(), reached["graph_path"]["depth"].clone()), (vec![0, 2], json!(0), json!(1)));
    // Two steps reach the budget thought through the CausedBy relation.
    let r = ranked(&db, json!({"text": "kubernetes nodes", "graph": {"max_depth": 2}}));
    assert_eq!(indices(&r), vec![0, 2, 1]);
    assert_eq!(r["results"][2]["match_sources"], json!(["relation"]));
    let far = &r["results"][2];
    assert_eq!((far["graph_distance"].clone(), far["graph_relation_kinds"].clone()), (json!(2), json!(["caused_by", "references"])));
    let visited: Vec<u64> = far["graph_path"]["visited"].as_array().unwrap().iter().map(|l| l["thought_index"].as_u64().unwrap()).collect();
    assert_eq!(visited, vec![0, 2, 1], "seed, the decision, the budget");
    let r = ranked(&db, json!({"text": "kubernetes nodes", "graph": {"mode": "off"}}));
    assert_eq!(indices(&r), vec![0]);
    let r = ranked(&db, json!({"text": "kubernetes nodes", "graph": {"mode": "outgoing"}}));
    assert_eq!(indices(&r), vec![0], "the hit itself points nowhere");
    let err = db.call("mentisdb_ranked_search", json!({"text": "x", "graph": {"mode": "sideways"}})).unwrap_err().to_string();
    assert!(err.contains("graph.mode") && err.contains("outgoing"), "{err}");
}

#[test]
fn context_bundles_pair_seeds_with_support() {
    let db = db();
    append(&db, json!({"content": "Kubernetes cluster runs on three nodes."}));
    append(&db, json!({"content": "Budget approved for next quarter."}));
    append(&db, json!({"content": "Decision recorded.", "refs": [0], "relations": [{"kind": "CausedBy", "target_index": 1}]}));
    let r = db.call("mentisdb_context_bundles", json!({"chain_key": "r", "text": "kubernetes"})).unwrap();
    let bundles = r["bundles"].as_array().unwrap();
    assert_eq!(bundles.len(), 1, "only direct matches seed bundles: {r:#}");
    assert_eq!(bundles[0]["seed"]["thought"]["index"], 0);
    assert!(bundles[0]["seed"]["score"]["lexical"].as_f64().unwrap() > 0.0);
    let support: Vec<(u64, u64, String)> = bundles[0]["support"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["thought"]["index"].as_u64().unwrap(), s["depth"].as_u64().unwrap(), s["via"]["kind"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(support, vec![(2, 1, "ref".into()), (1, 2, "CausedBy".into())]);
    // The fields the reference MentisDB's Python client reads.
    assert_eq!((r["total_bundles"].as_u64(), r["consumed_hits"].as_u64()), (Some(1), Some(3)));
    let seed = &bundles[0]["seed"];
    assert_eq!(seed["locator"], json!({"chain_key": "r", "thought_id": seed["thought"]["id"], "thought_index": 0}));
    assert_eq!(seed["lexical_score"], seed["score"]["lexical"]);
    let caused_by = &bundles[0]["support"][1];
    assert_eq!((caused_by["locator"]["thought_index"].as_u64(), caused_by["relation_kinds"].clone()), (Some(1), json!(["caused_by"])));
    assert_eq!(r, db.call("mentisdb_context_bundles", json!({"chain_key": "r", "text": "kubernetes"})).unwrap(), "deterministic");
}

#[test]
fn resolve_context_walks_both_directions() {
    let db = db();
    append(&db, json!({"content": "root"}));
    append(&db, json!({"content": "child", "refs": [0]}));
    let child_hash = append(&db, json!({"content": "grandchild", "relations": [{"kind": "DerivedFrom", "target_index": 1}]}))["hash"].clone();
    let call = |args: Value| db.call("mentisdb_resolve_context", args);
    let r = call(json!({"chain_key": "r", "thought_index": 1})).unwrap();
    assert_eq!(r["origin"]["index"], 1);
    let got: Vec<(u64, u64, String, String)> = r["thoughts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["thought"]["index"].as_u64().unwrap(), t["depth"].as_u64().unwrap(), t["via"]["kind"].as_str().unwrap().into(), t["via"]["direction"].as_str().unwrap().into()))
        .collect();
    assert_eq!(got, vec![(0, 1, "ref".into(), "outgoing".into()), (2, 1, "DerivedFrom".into(), "incoming".into())]);
    assert_eq!(r["truncated"], false);
    let r = call(json!({"chain_key": "r", "thought_hash": child_hash, "direction": "outgoing"})).unwrap();
    assert_eq!(r["thoughts"].as_array().unwrap().iter().map(|t| t["thought"]["index"].as_u64().unwrap()).collect::<Vec<_>>(), vec![1, 0]);
    let r = call(json!({"chain_key": "r", "thought_index": 2, "direction": "outgoing", "max_depth": 1})).unwrap();
    assert_eq!(r["thoughts"].as_array().unwrap().len(), 1);
    let r = call(json!({"chain_key": "r", "thought_index": 0, "direction": "incoming", "max_visited": 1})).unwrap();
    assert_eq!((r["thoughts"].as_array().unwrap().len(), r["truncated"].as_bool()), (1, Some(true)));
    let id = r["origin"]["id"].clone();
    assert_eq!(call(json!({"chain_key": "r", "thought_id": id})).unwrap()["origin"]["index"], 0);
    assert!(call(json!({"chain_key": "r"})).unwrap_err().to_string().contains("exactly one"));
    assert!(call(json!({"chain_key": "r", "thought_index": 0, "thought_id": "x"})).unwrap_err().to_string().contains("exactly one"));
    assert!(call(json!({"chain_key": "r", "thought_index": 9})).unwrap_err().to_string().contains("no thought with index 9"));
    assert!(call(json!({"chain_key": "r", "thought_index": 0, "direction": "up"})).unwrap_err().to_string().contains("expected one of: outgoing, incoming, both"));
}

#[test]
fn index_is_rebuilt_for_chains_loaded_at_open() {
    let storage: Arc<dyn Storage> = Arc::new(MemoryStorage::new());
    let first = open(storage.clone());
    for (i, c) in ["alpha beta", "beta gamma", "gamma delta"].iter().enumerate() {
        let refs: Vec<u64> = if i > 0 { vec![i as u64 - 1] } else { vec![] };
        first.call("mentisdb_append", json!({"chain_key": "r", "thought_type": "Finding", "content": c, "refs": refs})).unwrap();
    }
    let before = first.call("mentisdb_ranked_search", json!({"chain_key": "r", "text": "gamma"})).unwrap();
    drop(first);
    let reopened = open(storage);
    let after = reopened.call("mentisdb_ranked_search", json!({"chain_key": "r", "text": "gamma"})).unwrap();
    assert_eq!(before, after);
    assert_eq!(indices(&after)[..2], [2, 1]);
    // Appends after open extend the loaded index.
    reopened.call("mentisdb_append", json!({"chain_key": "r", "thought_type": "Finding", "content": "gamma gamma epsilon", "thought_id": "after-open"})).unwrap();
    let r = reopened.call("mentisdb_ranked_search", json!({"chain_key": "r", "text": "epsilon"})).unwrap();
    assert_eq!(indices(&r)[0], 3, "the match first (its neighbour may follow by conversational context)");
}

#[test]
fn hybrid_fusion_with_a_registered_provider() {
    let db = seeded();
    db.set_embedding_provider(Some(Arc::new(HashedNgramEmbedder::default())));
    // A misspelling no stemmer repairs: only the vectors connect it.
    let r = ranked(&db, json!({"text": "adoptoin agenceis"}));
    assert_eq!(r["backend"], "hybrid");
    assert_eq!(indices(&r)[0], 2, "{r:#}");
    let top = &r["results"][0];
    assert_eq!(top["match_sources"], json!(["vector"]));
    assert!(top["score"]["vector"].as_f64().unwrap() > 0.0);
    // New thoughts are embedded at commit.
    append(&db, json!({"content": "Photography workshop on Saturday."}));
    let r = ranked(&db, json!({"text": "photgraphy"}));
    assert_eq!(indices(&r)[0], 5);
    // Lexical hits keep their lexical score and gain a vector part.
    let r = ranked(&db, json!({"text": "painting sunrise"}));
    assert_eq!(indices(&r)[0], 0);
    let s = &r["results"][0]["score"];
    assert!(s["lexical"].as_f64().unwrap() > 0.0 && s["vector"].as_f64().unwrap() > 0.0);
    // A chain created after registration embeds too.
    db.call("mentisdb_append", json!({"chain_key": "fresh", "thought_type": "Idea", "content": "Telescope mirrors"})).unwrap();
    let r = db.call("mentisdb_ranked_search", json!({"chain_key": "fresh", "text": "telescpoe"})).unwrap();
    assert_eq!(r["backend"], "hybrid");
    assert_eq!(r["results"].as_array().unwrap().len(), 1);
    db.set_embedding_provider(None);
    assert_eq!(ranked(&db, json!({"text": "painting"}))["backend"], "lexical");
}

/// A tiny honest "thesaurus" model: words of one meaning group share a
/// dimension, every other word gets its own (hashed) one; a text is the
/// normalized sum of its words. Meaning is what the groups say, nothing
/// else.
#[derive(Debug)]
struct Thesaurus;

impl EmbeddingProvider for Thesaurus {
    fn name(&self) -> &str {
        "thesaurus-test"
    }
    fn embed(&self, text: &str) -> Option<Vec<f32>> {
        const GROUPS: &[&[&str]] = &[&["children", "kids", "kid"], &["guitar", "violin", "instruments"]];
        let mut v = vec![0.0f32; 256];
        for w in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase) {
            let dim = GROUPS.iter().position(|g| g.contains(&w.as_str())).unwrap_or_else(|| 2 + w.bytes().fold(7usize, |h, b| h.wrapping_mul(31).wrapping_add(b as usize)) % 254);
            v[dim] += 1.0;
        }
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        (n > 0.0).then(|| v.into_iter().map(|x| x / n).collect())
    }
}

#[test]
fn query_words_match_chain_words_of_similar_meaning_with_a_provider() {
    let db = db();
    append(&db, json!({"content": "The zoo was closed."}));
    append(&db, json!({"content": "My kids loved the zoo and the penguins there."}));
    let q = json!({"text": "children zoo", "context": false});
    // Lexically both match only "zoo"; the shorter thought wins.
    let r = ranked(&db, q.clone());
    assert_eq!(indices(&r), vec![0, 1], "{r:#}");
    assert_eq!(r["results"][1]["score"]["expansion"], 0.0);

    // Words already in the chain are embedded when the provider is registered.
    db.set_embedding_provider(Some(Arc::new(Thesaurus)));
    // New words are embedded as thoughts bring them.
    append(&db, json!({"content": "A kid played the violin at the zoo gates, with penguins."}));
    append(&db, json!({"content": "The children fed the goats at the zoo, the penguins too."}));
    let r = ranked(&db, q);
    assert_eq!(r["backend"], "hybrid");
    let hit = |i: u64| r["results"].as_array().unwrap().iter().find(|h| h["thought"]["index"] == i).unwrap_or_else(|| panic!("{i} missing: {r:#}")).clone();
    let kids = hit(1);
    assert!(kids["score"]["expansion"].as_f64().unwrap() > 0.0, "{kids:#}");
    assert!(kids["match_sources"].as_array().unwrap().contains(&json!("expansion")), "{kids:#}");
    assert!(kids["matched_terms"].as_array().unwrap().contains(&json!("kids")), "the chain's word is named: {kids:#}");
    assert!(hit(2)["score"]["expansion"].as_f64().unwrap() > 0.0, "a word first seen after registration: {r:#}");
    assert_eq!(hit(3)["score"]["expansion"], 0.0, "the query word itself needs no stand-in");
    assert!(indices(&r)[..3].contains(&1) && indices(&r)[..3].contains(&2), "both stand-ins rank above the zoo alone: {r:#}");
    assert_eq!(indices(&r)[3], 0, "{r:#}");
    // An unrelated query word is not expanded.
    let r = ranked(&db, json!({"text": "goats", "context": false}));
    assert!(r["results"].as_array().unwrap().iter().all(|h| h["score"]["expansion"] == 0.0), "{r:#}");
}

#[test]
fn conversational_context_ranks_the_reply_to_a_matching_turn() {
    // A chat: turns one minute apart, two speakers.
    let db = open_with_step(Arc::new(MemoryStorage::new()), 60_000);
    for (agent, content) in [
        ("bob", "The build is green again."),
        ("ada", "Any fun plans for the summer?"),
        ("bob", "Researching adoption agencies, it has been a dream for years."),
        ("ada", "That is wonderful news."),
        ("bob", "Lunch was pasta."),
        ("ada", "The printer on floor two is jammed."),
        ("bob", "Deploys are frozen until Monday."),
    ] {
        append(&db, json!({"agent_id": agent, "content": content}));
    }
    let r = ranked(&db, json!({"text": "What are the summer plans?"}));
    assert_eq!(indices(&r)[..2], [1, 2], "{r:#}");
    let reply = &r["results"][1];
    assert_eq!(reply["match_sources"], json!(["context"]));
    let s = &reply["score"];
    assert!(s["lexical"].as_f64().unwrap() == 0.0 && s["context"].as_f64().unwrap() > 0.0, "{s}");
    assert!(!indices(&r).contains(&5), "unrelated and out of the window");
    assert_eq!(r["total"], 4, "the match and the three thoughts within two places of it");
    let r = ranked(&db, json!({"text": "What are the summer plans?", "context": false}));
    assert_eq!(indices(&r), vec![1]);
    assert_eq!(r["results"][0]["score"]["context"], 0.0);
}

#[test]
fn the_three_tools_are_listed_with_schemas() {
    let specs = tool_specs();
    for name in ["mentisdb_ranked_search", "mentisdb_context_bundles", "mentisdb_resolve_context"] {
        let spec = specs.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("{name} not listed"));
        assert_eq!(spec.input_schema["type"], "object");
        let props = spec.input_schema["properties"].as_object().unwrap();
        assert!(props.contains_key("chain_key"), "{name}");
    }
    let rs = specs.iter().find(|s| s.name == "mentisdb_ranked_search").unwrap();
    let props = rs.input_schema["properties"].as_object().unwrap();
    for k in ["text", "limit", "graph", "as_of", "include_superseded", "context", "agent_ids", "tags_any", "since"] {
        assert!(props.contains_key(k), "ranked search schema lacks {k}");
    }
}

#[test]
fn rebuilding_vectors_embeds_every_thought_and_reports_the_index() {
    let db = db();
    for c in ["The deploy runs nightly.", "Backups go to cold storage.", "Rollbacks take five minutes."] {
        append(&db, json!({"content": c}));
    }
    let off = db.call("mentisdb_rebuild_vectors", json!({"chain_key": "r"})).unwrap();
    assert_eq!((off["status"]["enabled"].clone(), off["status"]["freshness"].clone(), off["status"]["indexed_thought_count"].clone(), off["status"]["metadata"].clone()), (json!(false), json!("Disabled"), json!(0), Value::Null));
    db.set_embedding_provider(Some(Arc::new(HashedNgramEmbedder::default())));
    let on = db.call("mentisdb_rebuild_vectors", json!({"chain_key": "r"})).unwrap();
    let s = &on["status"];
    assert_eq!((s["enabled"].clone(), s["freshness"].clone(), s["indexed_thought_count"].clone(), s["thought_count"].clone()), (json!(true), json!("Fresh"), json!(3), json!(3)));
    assert!(s["metadata"]["dimension"].as_u64().unwrap() > 0, "{on}");
    assert_eq!(s["provider_key"], s["metadata"]["model_id"]);
    assert_eq!(db.call("mentisdb_rebuild_vectors", json!({"chain_key": "nope"})).unwrap_err().kind(), mentisdb_core::ErrorKind::NotFound);
}

#[test]
fn a_host_can_embed_unindexed_thoughts_ahead_and_index_exactly_those() {
    let db = db();
    db.set_embedding_provider(Some(Arc::new(HashedNgramEmbedder::default())));
    for content in ["[1 May 2023] Ada: first", "second thought", "third thought"] {
        db.call("mentisdb_append", json!({"chain_key": "ahead", "agent_id": "ada", "thought_type": "FactLearned", "content": content})).unwrap();
    }
    let (from, texts) = db.unindexed_texts("ahead", 2);
    assert_eq!((from, texts), (0, vec!["Ada: first".to_string(), "second thought".to_string()]), "the texts the provider will be asked for, stamp dropped");
    assert!(!db.warm_chain_from("ahead", 1, 2), "not where the texts were taken from: nothing is indexed");
    assert_eq!(db.unindexed_texts("ahead", 2).0, 0);
    assert!(!db.warm_chain_from("ahead", 0, 2), "two of three indexed");
    assert_eq!(db.unindexed_texts("ahead", 2), (2, vec!["third thought".to_string()]));
    assert!(db.warm_chain("ahead", 10));
    assert_eq!(db.unindexed_texts("ahead", 2), (3, Vec::new()));
    assert_eq!(db.unindexed_texts("no-such-chain", 2), (0, Vec::new()));
}

/// A host may answer a ranked read on its event loop only when core can
/// answer it at once (`MentisDb::call_raw_now`): no model to run for the
/// query, no index to catch up, no chain to load, no branch parents to
/// read, no long walk. Otherwise it says `None` and does nothing; when it
/// answers, the reply is the one the ordinary call gives.
#[test]
fn a_ranked_read_answers_now_only_when_nothing_would_wait() {
    let db = db();
    let now = |args: Value| db.call_raw_now("mentisdb_ranked_search", &args).map(|r| r.map(|raw| serde_json::from_str::<Value>(raw.get()).unwrap()));
    let args = json!({"chain_key": "r", "text": "alpha"});
    assert!(now(args.clone()).is_none(), "no such chain in memory: it would be looked for in storage");
    append(&db, json!({"content": "alpha beta", "tags": ["t"]}));
    append(&db, json!({"content": "gamma alpha"}));
    assert!(now(args.clone()).is_none(), "the new thoughts are not in the ranked index yet");
    let waited = ranked(&db, json!({"text": "alpha"}));
    assert_eq!(now(args.clone()).expect("index caught up, no model").unwrap(), waited, "the same reply either way");
    let with_unknown = now(json!({"chain_key": "r", "text": "alpha", "colour": "red"})).unwrap().unwrap();
    let ordinary = db.call("mentisdb_ranked_search", json!({"chain_key": "r", "text": "alpha", "colour": "red"})).unwrap();
    assert!(with_unknown["warnings"].is_array() && with_unknown == ordinary, "an unknown argument is warned of as in the ordinary call: {with_unknown}");
    let bad = now(json!({"chain_key": "r", "text": "alpha", "limit": "ten"})).expect("bad arguments are answered at once");
    assert!(bad.is_err());
    for slow in [json!({"chain_key": "r", "text": "alpha", "offset": 95, "limit": 10}), json!({"chain_key": "r", "text": "alpha", "graph": {"max_depth": 3}}), json!({"chain_key": "r", "text": "alpha", "graph": {"max_visited": 500}})] {
        assert!(now(slow.clone()).is_none(), "a long query goes where it may take its time: {slow}");
    }
    let long_question = format!("alpha {}", "beta gamma ".repeat(60));
    assert!(now(json!({"chain_key": "r", "text": long_question})).is_none(), "a long question has many word pairs to look for");
    assert!(db.call_raw_now("mentisdb_search", &args).is_none() && db.call_raw_now("mentisdb_append", &args).is_none(), "only ranked search can tell");
    let at = append(&db, json!({"content": "delta alpha"}))["id"].as_str().unwrap().to_string();
    ranked(&db, json!({"text": "alpha"}));
    db.call("mentisdb_branch_from", json!({"source_chain_key": "r", "branch_thought_id": at, "branch_chain_key": "b"})).unwrap();
    db.call("mentisdb_ranked_search", json!({"chain_key": "b", "text": "alpha"})).unwrap();
    assert!(now(json!({"chain_key": "b", "text": "alpha"})).is_none(), "a branch also reads its parents");
    assert!(now(args.clone()).is_some());
    db.set_embedding_provider(Some(Arc::new(HashedNgramEmbedder::default())));
    ranked(&db, json!({"text": "alpha"}));
    assert!(now(args.clone()).is_none(), "the query would be embedded by the model");
    db.set_embedding_provider(None);
    ranked(&db, json!({"text": "alpha"}));
    assert!(now(args.clone()).is_some());
    for i in 0..1_000 {
        db.call("mentisdb_upsert_agent", json!({"chain_key": "r", "agent_id": format!("agent-{i}")})).unwrap();
    }
    ranked(&db, json!({"text": "alpha"}));
    assert!(now(args).is_none(), "a text query scans every registered agent's record");
}
