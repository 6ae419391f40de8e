//! The token file, the reloading store and the access rule, each on its own.

use super::*;
use mentisdb_core::dispatch::Access;
use mentisdb_core::MentisDb;
use serde_json::{json, Value};
use std::sync::Arc;

fn token(scope: Access, chains: &[&str]) -> Identity {
    Identity::Token(Arc::new(Token { name: "t".into(), sha256: [0; 32], scope, chains: chains.iter().map(|c| c.to_string()).collect() }))
}

#[test]
fn patterns_match_keys_and_prefixes() {
    assert!(pattern_covers("*", "anything") && pattern_covers("*", ""));
    assert!(pattern_covers("ci-*", "ci-") && pattern_covers("ci-*", "ci-42"));
    assert!(!pattern_covers("ci-*", "c") && !pattern_covers("ci-*", "prod-ci-1"));
    assert!(pattern_covers("proj-a", "proj-a") && !pattern_covers("proj-a", "proj-ab") && !pattern_covers("proj-a", "proj-"));
}

#[test]
fn token_files_parse_in_both_formats_and_bad_ones_are_refused() {
    let sha = hex::encode(digest("secret"));
    let toml_text = format!("[[token]]\nname = \"ci\"\nsha256 = \"{sha}\"\nscopes = [\"read\", \"write\"]\nchains = [\"ci-*\"]\n\n[[token]]\nname = \"all\"\nsha256 = \"{sha}\"\nscopes = [\"admin\"]\n");
    let tokens = TokenFile::parse(&toml_text, false).unwrap().tokens().unwrap();
    assert_eq!((tokens[0].scope, tokens[0].chains.clone()), (Access::Write, vec!["ci-*".to_string()]));
    assert!(tokens[1].covers_all());
    let json_text = json!({"token": [{"name": "ci", "sha256": sha, "scopes": ["read"]}]}).to_string();
    assert_eq!(TokenFile::parse(&json_text, true).unwrap().tokens().unwrap()[0].scope, Access::Read);
    for bad in [
        "[[token]]\nname = \"x\"\nsha256 = \"abc\"\nscopes = [\"read\"]\n".to_string(),
        format!("[[token]]\nname = \"x\"\nsha256 = \"{sha}\"\nscopes = [\"root\"]\n"),
        format!("[[token]]\nname = \"x\"\nsha256 = \"{sha}\"\nscopes = []\n"),
        format!("[[token]]\nname = \"x\"\nsha256 = \"{sha}\"\nscopes = [\"read\"]\nchains = [\"a*b\"]\n"),
        format!("[[token]]\nname = \"x\"\nsha256 = \"{sha}\"\nscopes = [\"read\"]\n[[token]]\nname = \"x\"\nsha256 = \"{sha}\"\nscopes = [\"read\"]\n"),
        "[[token]]\nname = \"x\"\n".to_string(),
        "not toml".to_string(),
    ] {
        assert!(TokenFile::parse(&bad, false).is_err(), "{bad}");
    }
}

#[test]
fn a_bad_file_keeps_the_previous_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.toml");
    let sha = hex::encode(digest("secret"));
    std::fs::write(&path, format!("[[token]]\nname = \"ci\"\nsha256 = \"{sha}\"\nscopes = [\"read\"]\n")).unwrap();
    let store = TokenStore::new(None, Some(&path), None).unwrap();
    assert!(store.identify(Some("Bearer secret")).is_ok());
    assert_eq!(store.identify(Some("Bearer other")).unwrap_err(), Unauthorized);
    assert_eq!(store.identify(None).unwrap_err(), Unauthorized);
    std::fs::write(&path, "[[token]]\nname = 3\n").unwrap();
    assert!(store.reload().is_err());
    assert!(store.reload_if_changed());
    assert!(store.identify(Some("Bearer secret")).is_ok(), "the previous tokens stay");
    std::fs::write(&path, "").unwrap();
    store.reload().unwrap();
    assert!(store.identify(Some("Bearer secret")).is_err(), "an empty file has no tokens");
    assert!(TokenStore::new(None, Some(&dir.path().join("missing.toml")), None).is_err());
}

#[test]
fn tokens_are_added_listed_and_revoked_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub-tokens.toml");
    let ci = add_token(&path, "ci", Access::Write, &["ci-*".into()]).unwrap();
    #[cfg(unix)]
    assert_eq!(std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&path).unwrap().permissions()) & 0o777, 0o600);
    assert!(!std::fs::read_to_string(&path).unwrap().contains(&ci), "only the digest is stored");
    add_token(&path, "ops", Access::Admin, &[]).unwrap();
    assert!(add_token(&path, "ci", Access::Read, &[]).unwrap_err().to_string().contains("already exists"));
    let listed = list_tokens(&path).unwrap();
    assert_eq!(listed.iter().map(|t| (&*t.name, t.scope, t.chains.join(","))).collect::<Vec<_>>(), [("ci", Access::Write, "ci-*".into()), ("ops", Access::Admin, "*".into())]);
    let store = TokenStore::new(None, Some(&path), None).unwrap();
    assert!(store.identify(Some(&format!("Bearer {ci}"))).is_ok());
    revoke_token(&path, "ci").unwrap();
    assert!(revoke_token(&path, "ci").unwrap_err().to_string().contains("no token named 'ci'"));
    assert!(store.reload_if_changed());
    assert!(store.identify(Some(&format!("Bearer {ci}"))).is_err());
    let json_path = dir.path().join("tokens.json");
    add_token(&json_path, "j", Access::Read, &[]).unwrap();
    assert!(std::fs::read_to_string(&json_path).unwrap().trim_start().starts_with('{'));
}

#[test]
fn the_api_token_is_admin_on_every_chain_and_no_token_means_open() {
    assert!(matches!(TokenStore::open().identify(None), Ok(Identity::Open)));
    let store = TokenStore::new(Some("s3cret"), None, None).unwrap();
    let Ok(Identity::Token(t)) = store.identify(Some("Bearer s3cret")) else { panic!("known") };
    assert_eq!((&*t.name, t.scope, t.covers_all()), (API_TOKEN_NAME, Access::Admin, true));
    assert!(store.identify(Some("s3cret")).is_err(), "needs the Bearer scheme");
    for scheme in ["BEARER", "bearer", "BeArEr"] {
        assert!(store.identify(Some(&format!("{scheme} s3cret"))).is_ok(), "{scheme}: the scheme is case-insensitive");
    }
    assert!(store.identify(Some("Basic s3cret")).is_err() && store.identify(Some("Bearer ")).is_err());
    assert!(generate().unwrap().starts_with(TOKEN_PREFIX) && generate().unwrap().len() == 4 + 64);
}

#[test]
fn the_rule_checks_scope_chain_and_daemon_wide_changes() {
    let db = MentisDb::open(Arc::new(mentisdb_core::MemoryStorage::new()), Arc::new(mentisdb_core::FixedClock::new(0, 1)), Arc::new(mentisdb_core::SequentialIds::starting_at(1)), Default::default()).unwrap().0;
    let ci_write = token(Access::Write, &["ci-*"]);
    let ok = |who: &Identity, tool: &str, args: Value| authorize(&db, who, tool, &args).is_ok();
    assert!(ok(&ci_write, "mentisdb_append", json!({"chain_key": "ci-1"})));
    assert!(ok(&ci_write, "mentisdb_search", json!({"chain_key": "ci-1"})));
    let e = authorize(&db, &ci_write, "mentisdb_append", &json!({"chain_key": "prod"})).unwrap_err();
    assert_eq!(e.0, "token 't' lacks scope 'write' for chain 'prod' (mentisdb_append needs write)");
    assert!(!ok(&ci_write, "mentisdb_append", json!({})), "the default chain is not ci-*");
    assert!(!ok(&ci_write, "mentisdb_add_agent_key", json!({"chain_key": "ci-1"})));
    assert!(ok(&ci_write, "mentisdb_list_chains", json!({})) && ok(&ci_write, "mentisdb_read_skill", json!({})));
    assert!(ok(&ci_write, "mentisdb_upload_skill", json!({"chain_key": "ci-1"})));
    assert!(!ok(&ci_write, "mentisdb_upload_skill", json!({"chain_key": "prod"})));
    let ci_admin = token(Access::Admin, &["ci-*"]);
    assert!(ok(&ci_admin, "mentisdb_add_agent_key", json!({"chain_key": "ci-1"})));
    let e = authorize(&db, &ci_admin, "mentisdb_revoke_skill", &json!({"chain_key": "ci-1"})).unwrap_err();
    assert!(e.0.contains("lacks scope 'admin' for all chains ('*')"), "{}", e.0);
    assert!(ok(&token(Access::Admin, &["*"]), "mentisdb_revoke_skill", json!({"chain_key": "ci-1"})));
    assert!(!ok(&token(Access::Read, &["*"]), "mentisdb_append", json!({})));
    assert!(ok(&Identity::Open, "mentisdb_revoke_skill", json!({})));
    let caller = authorize(&db, &ci_admin, "mentisdb_head", &json!({"chain_key": "ci-1"})).unwrap().unwrap();
    assert_eq!((caller.name, caller.all_chains, caller.admin), ("t", false, false), "admin on some chains is not admin of the daemon");
    let root = token(Access::Admin, &["*"]);
    let caller = authorize(&db, &root, "mentisdb_head", &json!({})).unwrap().unwrap();
    assert_eq!((caller.all_chains, caller.admin), (true, true));
}

#[test]
fn the_chain_list_shows_only_covered_chains() {
    let raw = mentisdb_core::json_text::JsonText::of(&json!({"default_chain_key": "d", "chain_keys": ["ci-1", "prod"], "chains": [{"chain_key": "ci-1"}, {"chain_key": "prod"}]}));
    let v: Value = serde_json::from_str(filter_chain_list(&token(Access::Read, &["ci-*"]), raw).get()).unwrap();
    assert_eq!(v["chain_keys"], json!(["ci-1"]));
    assert_eq!(v["chains"], json!([{"chain_key": "ci-1"}]));
}
