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
    /// Every chain its `chain_keys` argument names (`mentisdb_federated_search`).
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

/// An authenticated caller, as a host with tokens names it.
#[derive(Debug, Clone, Copy)]
pub struct Caller<'a> {
    /// The token's name (recorded on skill versions it uploads).
    pub name: &'a str,
    /// Whether the token has admin scope over the call (lets it add versions
    /// to a skill first uploaded by another caller).
    pub admin: bool,
    /// Which chains the caller may read beyond the one its call names (a
    /// ranked search of a branch also searches the chains it branched from,
    /// but only those the caller may read). `None`: every chain.
    pub reads: Option<&'a dyn ChainReads>,
}

/// Answers whether a caller may read a chain (a host's token rule).
pub trait ChainReads: std::fmt::Debug + Sync {
    /// Whether chain `chain_key` may be read.
    fn may_read(&self, chain_key: &str) -> bool;
}

/// The access class of `tool`, or `None` for an unknown tool.
pub fn access_of(tool: &str) -> Option<Access> {
    find(tool).map(|t| t.access)
}

/// What calling `tool` with `args` touches, or `None` for an unknown tool.
/// The chain is the `chain_key` argument as the tool resolves it (trimmed;
/// the default chain when omitted or empty); a `chain_key` that is not a
/// string is named by its JSON text (the call fails on it anyway). A
/// [`Reach::Chains`] tool touches each entry of its `chain_keys` array the
/// same way (a `chain_keys` that is not an array touches none; the call
/// fails on it), and each of the `source_chain_key`, `target_chain_key` and
/// `branch_chain_key` arguments it is given (branch and merge).
pub fn call_scope(db: &MentisDb, tool: &str, args: &Value) -> Option<CallScope> {
    let def = find(tool)?;
    let resolve = |v: Option<&Value>| match v {
        None | Some(Value::Null) => db.config().default_chain_key.clone(),
        Some(Value::String(k)) if k.trim().is_empty() => db.config().default_chain_key.clone(),
        Some(Value::String(k)) => k.trim().to_string(),
        Some(other) => other.to_string(),
    };
    let chain = || resolve(args.get("chain_key"));
    Some(match def.reach {
        Reach::Chain => CallScope::Chain(chain()),
        Reach::DaemonWide => CallScope::DaemonWide,
        Reach::ChainAndSkills => CallScope::ChainAndSkills(chain()),
        Reach::Chains => {
            let mut keys: Vec<String> = args.get("chain_keys").and_then(Value::as_array).map(|ks| ks.iter().map(|k| resolve(Some(k))).collect()).unwrap_or_default();
            keys.extend(["source_chain_key", "target_chain_key", "branch_chain_key"].into_iter().filter_map(|f| args.get(f)).map(|k| resolve(Some(k))));
            CallScope::Chains(keys)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::tool_specs;
    use serde_json::json;

    /// The access table of README.md ("Tokens and TLS") is the contract:
    /// every tool has the class and reach it lists, and it lists every tool.
    #[test]
    fn every_tool_has_the_class_the_readme_lists() {
        let readme = include_str!("../../../README.md");
        let mut listed = std::collections::BTreeMap::new();
        for line in readme.lines() {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            if cells.len() >= 4 && cells[1].starts_with("`mentisdb_") {
                listed.insert(cells[1].trim_matches('`').to_string(), (cells[2].to_string(), cells[3].to_string()));
            }
        }
        for spec in tool_specs() {
            let (access, reach) = listed.remove(spec.name).unwrap_or_else(|| panic!("README's access table lacks {}", spec.name));
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
        assert!(listed.is_empty(), "README lists tools the dispatcher does not serve: {listed:?}");
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
        assert_eq!(call_scope(&db, "mentisdb_federated_search", &json!({"chain_keys": "a"})), Some(CallScope::Chains(Vec::new())));
        assert_eq!(access_of("mentisdb_federated_search"), Some(Access::Read));
        assert_eq!(access_of("mentisdb_add_agent_key"), Some(Access::Admin));
        assert_eq!(access_of("mentisdb_append"), Some(Access::Write));
        assert_eq!(access_of("mentisdb_search"), Some(Access::Read));
    }
}
