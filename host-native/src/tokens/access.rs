//! The access rule: which token may make which call. A [`Token`] has a
//! highest scope and chain patterns; [`authorize`] is the one rule REST, MCP
//! over HTTP and MentisDB 0.10's `/tools/execute` check before a call
//! ([`crate::http::auth::call_as`]), and [`filter_chain_list`] hides the
//! chains a token does not cover from `mentisdb_list_chains`.

use mentisdb_core::dispatch::{access_of, call_scope, Access, CallScope, Caller};
use mentisdb_core::MentisDb;
use serde_json::Value;
use std::sync::Arc;

/// Whether chain pattern `pattern` covers chain `key`: equal, or `prefix*`
/// with `key` starting with `prefix` (`*` covers every chain).
pub fn pattern_covers(pattern: &str, key: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => key.starts_with(prefix),
        None => pattern == key,
    }
}

/// Every chain: the patterns of a token that names none.
pub(super) fn all_chains() -> Vec<String> {
    vec!["*".to_string()]
}

/// A known token: its name, digest, highest scope and chain patterns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The token's name.
    pub name: Arc<str>,
    pub(super) sha256: [u8; 32],
    /// Its highest scope.
    pub scope: Access,
    /// Chain keys and `prefix*` patterns.
    pub chains: Vec<String>,
}

impl Token {
    /// Whether the token covers chain `key`.
    pub fn covers(&self, key: &str) -> bool {
        self.chains.iter().any(|p| pattern_covers(p, key))
    }

    /// Whether the token covers every chain (a `*` pattern).
    pub fn covers_all(&self) -> bool {
        self.chains.iter().any(|p| p == "*")
    }
}

/// A ranked search of a branch also reads the chains it branched from,
/// those the token covers (every scope can read).
impl mentisdb_core::dispatch::ChainReads for Token {
    fn may_read(&self, chain_key: &str) -> bool {
        self.covers(chain_key)
    }
}

/// Who is calling, once the bearer token was checked.
#[derive(Debug, Clone)]
pub enum Identity {
    /// No token is configured: everything is allowed.
    Open,
    /// A known token.
    Token(Arc<Token>),
}

/// The bearer token of an `Authorization` header value (the scheme name
/// is case-insensitive, RFC 9110 §11.1).
pub fn bearer(authorization: Option<&str>) -> Option<&str> {
    let value = authorization?.trim_start();
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

/// No token, or one the daemon does not know (HTTP 401).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("missing or unknown API token: send 'Authorization: Bearer <token>' (MENTISDB_API_TOKEN, or a token of MENTISDB_TOKENS_FILE)")]
pub struct Unauthorized;

/// A known token may not make this call (HTTP 403); the message names the
/// missing scope and chain.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Forbidden(pub String);

/// The one access rule. Returns the caller to pass to the dispatcher
/// (`None` when no token is configured), or why the call is refused.
///
/// - A chain tool needs the tool's scope on the chain it touches.
/// - Daemon-wide reads (`mentisdb_list_chains`, skill reads) need `read`.
/// - A skill upload needs `write` on its `chain_key`; a token not covering
///   `*` may create a new skill only (the registry refuses a new version of
///   an existing one, `Caller::all_chains`); other changes of the
///   daemon-wide skill registry (deprecate, revoke, delete) need `admin` on `*`.
/// - A tool over several chains (`mentisdb_federated_search`) needs its
///   scope on every chain of `chain_keys`; a call naming a chain the token
///   does not cover is refused (403), not answered from the others.
/// - An unknown tool is let through to fail as unknown.
pub fn authorize<'a>(db: &MentisDb, who: &'a Identity, tool: &str, args: &Value) -> Result<Option<Caller<'a>>, Forbidden> {
    let Identity::Token(token) = who else { return Ok(None) };
    let Some(needed) = access_of(tool) else {
        // An unknown tool: let through to fail as unknown.
        return Ok(Some(Caller { name: &token.name, all_chains: false, admin: false, reads: Some(token.as_ref()) }));
    };
    let Some(scope) = call_scope(db, tool, args) else {
        return Err(Forbidden(format!("{tool}: the chains this call touches cannot be told; refused")));
    };
    let (chain, covered) = match &scope {
        CallScope::DaemonWide if needed == Access::Read => (None, true),
        CallScope::Chain(k) => (Some(k.as_str()), token.covers(k)),
        CallScope::ChainAndSkills(k) if needed <= Access::Write => (Some(k.as_str()), token.covers(k)),
        CallScope::DaemonWide | CallScope::ChainAndSkills(_) => (Some("*"), token.covers_all()),
        // Several chains: refused unless the token covers every one (the
        // first it does not is named); nothing is silently left out.
        CallScope::Chains(keys) => match keys.iter().find(|k| !token.covers(k)) {
            Some(k) => (Some(k.as_str()), false),
            None => (None, true),
        },
    };
    if !(covered && token.scope.covers(needed)) {
        let on = match chain {
            Some("*") => "all chains ('*')".to_string(),
            Some(k) => format!("chain '{k}'"),
            None => "the daemon".to_string(),
        };
        return Err(Forbidden(format!("token '{}' lacks scope '{needed}' for {on} ({tool} needs {needed})", token.name)));
    }
    let all_chains = token.covers_all();
    let admin = all_chains && token.scope == Access::Admin;
    Ok(Some(Caller { name: &token.name, all_chains, admin, reads: Some(token.as_ref()) }))
}

/// `mentisdb_list_chains`' result as `who` may see it: only the chains
/// its token covers (the default chain key is kept).
pub fn filter_chain_list(who: &Identity, result: mentisdb_core::json_text::JsonText) -> mentisdb_core::json_text::JsonText {
    let Identity::Token(token) = who else { return result };
    if token.covers_all() {
        return result;
    }
    let Ok(mut v) = serde_json::from_str::<Value>(result.get()) else { return result };
    if let Some(keys) = v.get_mut("chain_keys").and_then(Value::as_array_mut) {
        keys.retain(|k| k.as_str().is_some_and(|k| token.covers(k)));
    }
    if let Some(chains) = v.get_mut("chains").and_then(Value::as_array_mut) {
        chains.retain(|c| c["chain_key"].as_str().is_some_and(|k| token.covers(k)));
    }
    mentisdb_core::json_text::JsonText::of(&v)
}
