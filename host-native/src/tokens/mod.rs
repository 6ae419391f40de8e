//! Scoped bearer tokens: the token file, the store the daemon reloads, and
//! the one access rule REST and MCP over HTTP check ([`authorize`]).
//!
//! A token file (`MENTISDB_TOKENS_FILE`, TOML, or JSON when its name ends in
//! `.json`) lists tokens by the SHA-256 of their text, never the text:
//!
//! ```toml
//! [[token]]
//! name = "ci-bot"
//! sha256 = "<64 hex digits: SHA-256 of the token string>"
//! scopes = ["write"]          # read, write, admin (admin ⊇ write ⊇ read)
//! chains = ["ci-*", "shared"] # exact keys, `prefix*` patterns, "*" = all (the default)
//! ```
//!
//! `MENTISDB_API_TOKEN` adds one admin token for all chains, named
//! [`API_TOKEN_NAME`]. MentisDB 0.10's switch `MENTISDB_BEARER_TOKEN_ACCESS=true`
//! adds the active tokens of 0.10's registry `<dir>/bearer-tokens.json`
//! ([`REFERENCE_REGISTRY`]: admin on their chains, as 0.10 lets them call
//! every tool there); the daemon refuses to start when that switch is on and
//! no token exists at all. Without any token source, every call is allowed.
//!
//! The parts: `file.rs`, the token file's format and its edits
//! ([`TokenFile`], [`add_token`]); `reference.rs`, 0.10's registry
//! ([`read_reference_tokens`]); `reload.rs`, the store the daemon reloads
//! ([`TokenStore`]); `access.rs`, the access rule ([`authorize`]). Every
//! failure is a [`TokenError`].

mod access;
mod file;
mod reference;
mod reload;

pub use access::{authorize, bearer, filter_chain_list, pattern_covers, Forbidden, Identity, Token, Unauthorized};
pub use file::{add_token, digest, generate, import_token, list_tokens, revoke_token, TokenFile, TokenRecord, TOKEN_PREFIX};
pub use reference::{read_reference_tokens, ReferenceToken, REFERENCE_REGISTRY};
pub use reload::TokenStore;

use std::path::PathBuf;

/// The name `MENTISDB_API_TOKEN` is known by in logs and messages.
pub const API_TOKEN_NAME: &str = "api-token";

/// Why a token file, MentisDB 0.10's registry or a token edit failed; the
/// text names the file and the token concerned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The token file exists but cannot be read.
    #[error("cannot read token file {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    /// What is wrong in the token file at `path`.
    #[error("token file {}: {problem}", path.display())]
    InFile { path: PathBuf, problem: Box<TokenError> },
    /// The token file is not TOML of the expected shape.
    #[error("{0}")]
    Toml(#[from] toml::de::Error),
    /// The token file (`*.json`) is not JSON of the expected shape.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// A record's name is empty.
    #[error("a token has an empty name")]
    EmptyName,
    /// Two records share a name, or one takes `MENTISDB_API_TOKEN`'s.
    #[error("token name '{name}' is used twice (or is reserved for MENTISDB_API_TOKEN)")]
    NameTwice { name: String },
    /// A record's `sha256` is not 64 hex digits.
    #[error("token '{name}': sha256 must be 64 hex digits")]
    BadDigest { name: String },
    /// A record names a scope other than read, write or admin.
    #[error("token '{name}': {source}")]
    BadScope { name: String, source: mentisdb_core::UnknownName },
    /// A record has no scope.
    #[error("token '{name}': scopes is empty; give read, write or admin")]
    NoScope { name: String },
    /// A record's chain patterns are empty or malformed.
    #[error("token '{name}': chains must be non-empty keys or `prefix*` patterns ('*' alone for all chains)")]
    BadChains { name: String },
    /// Writing the token file failed at step `step` ("write the", "fsync the", ...).
    #[error("cannot {step} token file {}: {source}", path.display())]
    Write { step: &'static str, path: PathBuf, source: std::io::Error },
    /// `token add` with a name the file already has.
    #[error("a token named '{name}' already exists in {}; revoke it first or choose another name", path.display())]
    NameTaken { name: String, path: PathBuf },
    /// `token revoke` of a name the file does not have.
    #[error("no token named '{name}' in {}", path.display())]
    NoSuchToken { name: String, path: PathBuf },
    /// The operating system gave no random bytes for a new token.
    #[error("no randomness for a token: {0}")]
    NoRandomness(getrandom::Error),
    /// MentisDB 0.10's registry exists but cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    ReadRegistry { path: PathBuf, source: std::io::Error },
    /// MentisDB 0.10's registry is not the JSON 0.10 writes.
    #[error("{}: {source}", path.display())]
    RegistryJson { path: PathBuf, source: serde_json::Error },
    /// A token of MentisDB 0.10's registry has a malformed hash.
    #[error("{}: token '{alias}': token_hash must be 64 hex digits", path.display())]
    RegistryDigest { path: PathBuf, alias: String },
    /// A name of MentisDB 0.10's registry is also in the token file (or is the API token's).
    #[error("token name '{name}' is used twice in {} and the token file (or is reserved for MENTISDB_API_TOKEN); rename one", registry.display())]
    RegistryNameTwice { name: String, registry: PathBuf },
    /// `MENTISDB_BEARER_TOKEN_ACCESS` is on and no token exists anywhere.
    #[error("MENTISDB_BEARER_TOKEN_ACCESS is on but no token exists ({} holds no active token{}): add one with `mentisdbd token add <name>`, or set MENTISDB_API_TOKEN", registry.display(), file.as_deref().map(|f| format!(", nor does {}", f.display())).unwrap_or_default())]
    SwitchWithoutToken { registry: PathBuf, file: Option<PathBuf> },
}

impl TokenError {
    /// This problem, said of the token file at `path`.
    pub(crate) fn in_file(self, path: &std::path::Path) -> TokenError {
        TokenError::InFile { path: path.to_path_buf(), problem: Box::new(self) }
    }
}

#[cfg(test)]
mod tests;
