//! MentisDB 0.10's token registry, `<dir>/bearer-tokens.json`: read by
//! `import-reference` (which takes its tokens into our file) and, with
//! `MENTISDB_BEARER_TOKEN_ACCESS` on, by the daemon itself ([`super::TokenStore`]).

use super::access::{all_chains, Token};
use super::TokenError;
use mentisdb_core::dispatch::Access;
use serde::Deserialize;
use std::path::Path;

/// MentisDB 0.10's token registry, in its data directory.
pub const REFERENCE_REGISTRY: &str = "bearer-tokens.json";

/// One record of MentisDB 0.10's `bearer-tokens.json` (tokens by the
/// SHA-256 of their text; a record without `scope` is global, as 0.10 reads it).
#[derive(Deserialize)]
struct ReferenceRecord {
    alias: String,
    token_hash: String,
    #[serde(default)]
    revoked_at: Option<String>,
    #[serde(default)]
    scope: ReferenceScope,
}

#[derive(Deserialize, Default)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ReferenceScope {
    #[default]
    Global,
    Chain { chain_key: String },
    Chains { chain_keys: Vec<String> },
}

/// A token of MentisDB 0.10's registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReferenceToken {
    /// Its alias (our token name).
    pub alias: String,
    /// Lowercase hex SHA-256 of the token's text.
    pub sha256_hex: String,
    /// The chains it covers; empty for a global token.
    pub chains: Vec<String>,
    /// Revoked in 0.10 (never accepted).
    pub revoked: bool,
}

/// The tokens of 0.10's registry at `path`, or `None` when it does not exist.
pub fn read_reference_tokens(path: &Path) -> Result<Option<Vec<ReferenceToken>>, TokenError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(TokenError::ReadRegistry { path: path.to_path_buf(), source }),
    };
    let records: Vec<ReferenceRecord> = serde_json::from_slice(&bytes).map_err(|source| TokenError::RegistryJson { path: path.to_path_buf(), source })?;
    Ok(Some(
        records
            .into_iter()
            .map(|r| ReferenceToken {
                alias: r.alias,
                sha256_hex: r.token_hash.trim().to_ascii_lowercase(),
                chains: match r.scope {
                    ReferenceScope::Global => Vec::new(),
                    ReferenceScope::Chain { chain_key } => vec![chain_key],
                    ReferenceScope::Chains { chain_keys } => chain_keys,
                },
                revoked: r.revoked_at.is_some(),
            })
            .collect(),
    ))
}

/// The active tokens of 0.10's registry at `path` as our tokens (admin on
/// their chains); none when the file does not exist.
pub(super) fn reference_store_tokens(path: &Path) -> Result<Vec<Token>, TokenError> {
    let mut out = Vec::new();
    for t in read_reference_tokens(path)?.unwrap_or_default().into_iter().filter(|t| !t.revoked) {
        let mut sha256 = [0u8; 32];
        hex::decode_to_slice(&t.sha256_hex, &mut sha256).map_err(|_| TokenError::RegistryDigest { path: path.to_path_buf(), alias: t.alias.clone() })?;
        let chains = if t.chains.is_empty() { all_chains() } else { t.chains };
        out.push(Token { name: t.alias.into(), sha256, scope: Access::Admin, chains });
    }
    Ok(out)
}
