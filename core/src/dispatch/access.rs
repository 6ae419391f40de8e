//! Who may call a tool, and what a call touches: the classification every
//! host with scoped tokens checks (`mentisdbd`'s `tokens` module).
//!
//! Each tool's [`Access`] class and [`Reach`] are fields of its row in the
//! tool tables, so a new tool is classified where it is declared.
//! [`call_scope`] names what one call touches: the chain its `chain_key`
//! argument names (the default chain when omitted), the daemon only, or both.

use super::find;
use crate::db::MentisDb;
use crate::named_enum::named_enum;
use serde_json::Value;

named_enum! {
    /// The scope a tool needs. Scopes form a hierarchy: a token with
    /// `admin` may do what `write` may, and `write` what `read` may
    /// (the derived order: `Read < Write < Admin`).
    pub enum Access("scope", IgnoreCase) {
        /// Reads only (the `read_only` tools).
        Read = "read",
        /// Appends, bootstrap, retrospectives, skill uploads.
        Write = "write",
        /// Agent registry edits, key changes and skill lifecycle changes.
        Admin = "admin",
    }
}

impl Access {
    /// Whether a holder of `self` may do what `needed` requires.
    pub fn covers(self, needed: Access) -> bool {
        self >= needed
    }
}

/// What a tool touches, whatever its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reach {
    /// The chain its `chain_key` names (the default chain when omitted).
    Chain,
    /// No chain: daemon-wide (`mentisdb_list_chains`, skill reads).
    DaemonWide,
    /// Its chain (whose agent registry authenticates the agent) and the
    /// daemon-wide skill registry: skill uploads and lifecycle changes.
    ChainAndSkills,
    /// Every chain its arguments name (`mentisdb_federated_search`'s
    /// `chain_keys`, branch and merge's source and target).
    Chains,
}

/// What one call touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallScope {
    /// One chain.
    Chain(String),
    /// No chain: the daemon as a whole.
    DaemonWide,
    /// One chain and the daemon-wide skill registry.
    ChainAndSkills(String),
    /// Several chains (each trimmed, the default chain for an empty key);
    /// a caller needs the tool's scope on every one of them.
    Chains(Vec<String>),
}

impl CallScope {
    /// The chain the call touches, if it touches exactly one.
    pub fn chain(&self) -> Option<&str> {
        match self {
            CallScope::Chain(k) | CallScope::ChainAndSkills(k) => Some(k),
            CallScope::Chains(ks) if ks.len() == 1 => Some(&ks[0]),
            CallScope::DaemonWide | CallScope::Chains(_) => None,
        }
    }

    /// Every chain the call touches.
    pub fn chains(&self) -> Vec<&str> {
        match self {
            CallScope::Chain(k) | CallScope::ChainAndSkills(k) => vec![k.as_str()],
            CallScope::Chains(ks) => ks.iter().map(String::as_str).collect(),
            CallScope::DaemonWide => Vec::new(),
        }
    }

    /// Whether the call touches state shared by every chain.
    pub fn is_daemon_wide(&self) -> bool {
        matches!(self, CallScope::DaemonWide | CallScope::ChainAndSkills(_))
    }
}

/// The access class of `tool`, or `None` for an unknown tool.
pub fn access_of(tool: &str) -> Option<Access> {
    find(tool).map(|t| t.access)
}

/// What calling `tool` with `args` touches, or `None` for an unknown tool.
///
/// The chains come from the call's *types*, not its field names: the
/// arguments are read as the tool's argument type and every
/// [`crate::args::ChainKey`] in it is a chain the call names (trimmed; the
/// default chain when omitted or empty). A [`Reach::Chain`] tool touches
/// the chain it names (several, when it names several), a
/// [`Reach::ChainAndSkills`] tool its chain and the skill registry, a
/// [`Reach::Chains`] tool every chain it names; a [`Reach::DaemonWide`] tool
/// touches no chain. The arguments are read leniently (a call whose other
/// arguments are wrong still names its chain, so a token without rights on
/// it is told 403, not what else is wrong).
pub fn call_scope(db: &MentisDb, tool: &str, args: &Value) -> Option<CallScope> {
    let def = find(tool)?;
    if def.reach == Reach::DaemonWide {
        return Some(CallScope::DaemonWide);
    }
    let mut named = super::chains_named(def.name, args.clone())?;
    if def.reach == Reach::Chains {
        // A tool over the chains it lists: an omitted optional key (a
        // flattened `chain_key` it does not use) names none.
        named.retain(Option::is_some);
    }
    let default = &db.config().default_chain_key;
    let mut keys: Vec<String> = Vec::with_capacity(named.len());
    for key in named {
        let key = match key.as_deref().map(str::trim) {
            None | Some("") => default.clone(),
            Some(k) => k.to_string(),
        };
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    Some(match def.reach {
        Reach::Chains => CallScope::Chains(keys),
        // A skill change naming several chains needs daemon-wide rights.
        Reach::ChainAndSkills if keys.len() > 1 => CallScope::DaemonWide,
        _ if keys.len() > 1 => CallScope::Chains(keys),
        Reach::ChainAndSkills => CallScope::ChainAndSkills(keys.pop().unwrap_or_else(|| default.clone())),
        _ => CallScope::Chain(keys.pop().unwrap_or_else(|| default.clone())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::tool_specs;
    use serde_json::json;

    /// The access table of docs/security.md ("Tokens and TLS") is the contract:
    /// every tool has the class and reach it lists, and it lists every tool.
    #[test]
    fn every_tool_has_the_class_the_readme_lists() {
        let readme = include_str!("../../../docs/security.md");
        let mut listed = std::collections::BTreeMap::new();
        for line in readme.lines() {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            if cells.len() >= 4 && cells[1].starts_with("`mentisdb_") {
                listed.insert(cells[1].trim_matches('`').to_string(), (cells[2].to_string(), cells[3].to_string()));
            }
        }
        for spec in tool_specs() {
            let (access, reach) = listed.remove(spec.name).unwrap_or_else(|| panic!("docs/security.md's access table lacks {}", spec.name));
            assert_eq!(access, spec.access.as_str(), "{}", spec.name);
            let reach_name = match spec.reach {
                Reach::Chain => "chain",
                Reach::DaemonWide => "daemon",
                Reach::ChainAndSkills => "chain + skills",
                Reach::Chains => "chains",
            };
            assert_eq!(reach, reach_name, "{}", spec.name);
            assert_eq!(spec.read_only, spec.access == Access::Read, "{}", spec.name);
        }
        assert!(listed.is_empty(), "docs/security.md lists tools the dispatcher does not serve: {listed:?}");
    }

    /// A value a schema accepts: the first enum value, a timestamp for a
    /// date-time, an object of its required properties.
    fn sample(schema: &Value, defs: &Value) -> Value {
        if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            return sample(&defs[r.trim_start_matches("#/$defs/")], defs);
        }
        if let Some(first) = schema.get("enum").and_then(|e| e.get(0)) {
            return first.clone();
        }
        if let Some(options) = schema.get("anyOf").or_else(|| schema.get("oneOf")).and_then(Value::as_array) {
            return options.iter().find(|o| o["type"] != "null").map_or(Value::Null, |o| sample(o, defs));
        }
        let ty = match &schema["type"] {
            Value::Array(ts) => ts.iter().find(|t| *t != "null").cloned().unwrap_or(Value::Null),
            t => t.clone(),
        };
        match ty.as_str() {
            Some("string") if schema["format"] == "date-time" => json!("2026-01-01T00:00:00Z"),
            Some("string") => json!("x"),
            Some("integer") => json!(1),
            Some("number") => json!(0.5),
            Some("boolean") => json!(false),
            Some("array") => json!([]),
            _ => {
                let mut obj = serde_json::Map::new();
                for name in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
                    obj.insert(name.to_string(), sample(&schema["properties"][name], defs));
                }
                Value::Object(obj)
            }
        }
    }

    /// Whether an argument's name says it names a chain.
    fn names_a_chain(property: &str) -> bool {
        property.ends_with("chain_key") || property.ends_with("chain_keys") || property == "chain_key_filter"
    }

    /// Argument properties that hold a chain key as data, never touching
    /// that chain (so they are plain strings, not `ChainKey`s), with why.
    const RECORDED_ONLY: &[(&str, &str)] = &[("relations[].chain_key", "a cross-chain relation is recorded as data; the append never reads the target chain (reads that follow it check the caller's rights)")];

    /// The schema walk: for every tool, every argument whose name says it
    /// names a chain (at any depth) must be one the call's scope sees, so a
    /// new tool cannot name a chain that token scoping misses. Daemon-wide
    /// tools need daemon-wide rights whatever chain they name.
    #[test]
    fn every_argument_naming_a_chain_is_in_the_calls_scope() {
        let config = crate::DbConfig { default_chain_key: "dflt".into(), ..Default::default() };
        let clock = std::sync::Arc::new(crate::FixedClock::new(1_795_000_000_000, 1));
        let db = MentisDb::open(std::sync::Arc::new(crate::MemoryStorage::new()), clock, std::sync::Arc::new(crate::SequentialIds::starting_at(1)), config).unwrap().0;
        let mut checked = 0;
        for spec in tool_specs() {
            let schema = &spec.input_schema;
            let defs = schema.get("$defs").cloned().unwrap_or(Value::Null);
            let base = sample(schema, &defs);
            let scope = call_scope(&db, spec.name, &base).unwrap();
            if spec.reach == Reach::DaemonWide {
                assert_eq!(scope, CallScope::DaemonWide, "{}", spec.name);
                continue;
            }
            // (A tool over listed chains may be given an empty list: it touches none.)
            assert!(spec.reach == Reach::Chains || !scope.chains().is_empty(), "{} touches a chain but its arguments name none", spec.name);
            for (name, property) in schema["properties"].as_object().into_iter().flatten() {
                if names_a_chain(name) {
                    let is_list = property["type"] == "array" || property["type"].as_array().is_some_and(|t| t.contains(&json!("array")));
                    let mut args = base.clone();
                    args[name.as_str()] = if is_list { json!(["probe-chain"]) } else { json!("probe-chain") };
                    let scope = call_scope(&db, spec.name, &args).unwrap();
                    assert!(scope.chains().contains(&"probe-chain"), "{}: argument `{name}` names a chain its scope does not see ({scope:?})", spec.name);
                    checked += 1;
                }
            }
            // Nested arguments (items of an array of objects) that name a chain.
            for (name, property) in schema["properties"].as_object().into_iter().flatten() {
                let items = &property["items"];
                let item = items.get("$ref").and_then(Value::as_str).map_or(items.clone(), |r| defs[r.trim_start_matches("#/$defs/")].clone());
                for inner in item["properties"].as_object().into_iter().flatten().map(|(k, _)| k).filter(|k| names_a_chain(k)) {
                    let path = format!("{name}[].{inner}");
                    let mut one = sample(&item, &defs);
                    one[inner.as_str()] = json!("probe-chain");
                    let mut args = base.clone();
                    args[name.as_str()] = json!([one]);
                    let seen = call_scope(&db, spec.name, &args).unwrap().chains().contains(&"probe-chain");
                    let recorded = RECORDED_ONLY.iter().any(|(p, _)| *p == path);
                    assert!(seen != recorded, "{}: nested argument `{path}` names a chain: the scope must see it (a ChainKey), or it must be listed in RECORDED_ONLY with why (seen: {seen})", spec.name);
                    checked += 1;
                }
            }
        }
        assert!(checked >= 50, "only {checked} chain arguments checked");
    }

    #[test]
    fn scopes_form_a_hierarchy() {
        assert!(Access::Admin.covers(Access::Write) && Access::Write.covers(Access::Read) && Access::Admin.covers(Access::Read));
        assert!(!Access::Read.covers(Access::Write) && !Access::Write.covers(Access::Admin));
        assert_eq!(Access::parse("ADMIN"), Ok(Access::Admin));
        assert!(Access::parse("root").is_err());
    }

    #[test]
    fn a_call_names_its_chain_or_the_daemon() {
        let config = crate::DbConfig { default_chain_key: "dflt".into(), ..Default::default() };
        let clock = std::sync::Arc::new(crate::FixedClock::new(1_795_000_000_000, 1));
        let db = MentisDb::open(std::sync::Arc::new(crate::MemoryStorage::new()), clock, std::sync::Arc::new(crate::SequentialIds::starting_at(1)), config).unwrap().0;
        assert_eq!(call_scope(&db, "mentisdb_append", &json!({"chain_key": " proj-a "})), Some(CallScope::Chain("proj-a".into())));
        assert_eq!(call_scope(&db, "mentisdb_head", &Value::Null), Some(CallScope::Chain("dflt".into())));
        assert_eq!(call_scope(&db, "mentisdb_head", &json!({"chain_key": ""})), Some(CallScope::Chain("dflt".into())));
        assert_eq!(call_scope(&db, "mentisdb_list_chains", &json!({})), Some(CallScope::DaemonWide));
        assert_eq!(call_scope(&db, "mentisdb_read_skill", &json!({"chain_key": "x"})), Some(CallScope::DaemonWide));
        let upload = call_scope(&db, "mentisdb_upload_skill", &json!({"chain_key": "x"})).unwrap();
        assert_eq!(upload, CallScope::ChainAndSkills("x".into()));
        assert!(upload.is_daemon_wide() && upload.chain() == Some("x"));
        assert_eq!(call_scope(&db, "no_such_tool", &Value::Null), None);
        let federated = call_scope(&db, "mentisdb_federated_search", &json!({"chain_keys": [" a ", "", "b"]})).unwrap();
        assert_eq!(federated, CallScope::Chains(vec!["a".into(), "dflt".into(), "b".into()]));
        assert_eq!((federated.chain(), federated.chains(), federated.is_daemon_wide()), (None, vec!["a", "dflt", "b"], false));
        let merge = call_scope(&db, "mentisdb_merge_chains", &json!({"source_chain_key": "s", "target_chain_key": "t"})).unwrap();
        assert_eq!(merge.chains(), ["s", "t"]);
        assert_eq!(call_scope(&db, "mentisdb_federated_search", &json!({"chain_keys": "a"})), Some(CallScope::Chains(Vec::new())), "a chain_keys that does not read names none (the call fails on it)");
        assert_eq!(call_scope(&db, "mentisdb_append", &json!({"chain_key": 7})), Some(CallScope::Chain("dflt".into())), "nor does a chain_key that does not read (the call fails on it)");
        assert_eq!(access_of("mentisdb_federated_search"), Some(Access::Read));
        assert_eq!(access_of("mentisdb_add_agent_key"), Some(Access::Admin));
        assert_eq!(access_of("mentisdb_append"), Some(Access::Write));
        assert_eq!(access_of("mentisdb_search"), Some(Access::Read));
    }
}
