//! MentisDB 0.10 accepts the pre-rename `thoughtchain_*` tool names; so do
//! we: an alias calls the same tool, has the same access class and reach,
//! and is classified by its canonical name. Nothing else becomes a name.

use crate::common;
use common::*;
use mentisdb_core::dispatch::{access_of, canonical_tool_name, is_quick_read, Access};
use mentisdb_core::tool_specs;
use serde_json::json;

#[test]
fn every_tool_answers_to_its_thoughtchain_alias() {
    for spec in tool_specs() {
        let alias = spec.name.replacen("mentisdb_", "thoughtchain_", 1);
        assert_eq!(canonical_tool_name(&alias), Some(spec.name), "{alias}");
        assert_eq!(canonical_tool_name(spec.name), Some(spec.name));
        assert_eq!(access_of(&alias), Some(spec.access), "{alias}");
    }
    for not_a_tool in ["thoughtchain_", "thoughtchain_nope", "mentisdb_thoughtchain_append", "THOUGHTCHAIN_append", "append", "thoughtchain_mentisdb_append"] {
        assert_eq!(canonical_tool_name(not_a_tool), None, "{not_a_tool}");
    }
    assert_eq!(access_of("thoughtchain_forget_thought"), Some(Access::Admin));
    assert!(is_quick_read("thoughtchain_search"));
    assert!(!is_quick_read("thoughtchain_ranked_search"), "ranked reads may embed: never quick, whatever the name");
    assert!(!is_quick_read("thoughtchain_append"));
}

#[test]
fn an_alias_call_is_the_same_call() {
    let (db, _) = fresh();
    let appended = ok(&db, "thoughtchain_append", json!({"agent_id": "ada", "thought_type": "Finding", "content": "written under the old name"}));
    let found = ok(&db, "mentisdb_search", json!({"text": "old name"}));
    assert_eq!(contents(&found["thoughts"]), vec!["written under the old name".to_string()]);
    let head = ok(&db, "thoughtchain_head", json!({}));
    assert_eq!(head["thought_count"], 1, "{head}");
    assert!(appended.to_string().contains("written under the old name"), "{appended}");
    let e = err(&db, "thoughtchain_nope", json!({}));
    assert!(e.to_string().contains("thoughtchain_nope"), "{e}");
}
