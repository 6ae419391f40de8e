//! The token file (`MENTISDB_TOKENS_FILE`, by default `<dir>/tokens.toml`):
//! its TOML and JSON forms, the checks of its records, and the edits of
//! `mentisdbd token add | list | revoke`, each written atomically.

use super::access::{all_chains, Token};
use super::{TokenError, API_TOKEN_NAME};
use mentisdb_core::dispatch::Access;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Prefix of the tokens `mentisdbd token add` makes.
pub const TOKEN_PREFIX: &str = "mdb_";

/// SHA-256 of a token string.
pub fn digest(token: &str) -> [u8; 32] {
    let d = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
    d.as_ref().try_into().expect("SHA-256 is 32 bytes")
}

/// A new random token: `mdb_` and 32 random bytes in hex.
pub fn generate() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(format!("{TOKEN_PREFIX}{}", hex::encode(bytes)))
}

/// One token as the token file lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenRecord {
    /// Unique name: recorded as the caller of the token's calls.
    pub name: String,
    /// Lowercase hex SHA-256 of the token string.
    pub sha256: String,
    /// `read`, `write` and/or `admin`; the highest one counts.
    pub scopes: Vec<String>,
    /// Chain keys and `prefix*` patterns; all chains (`*`) when omitted.
    #[serde(default = "all_chains")]
    pub chains: Vec<String>,
}

/// The token file as written: `[[token]]` tables (TOML) or `{"token": [...]}` (JSON).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenFile {
    /// The tokens, in file order.
    #[serde(default)]
    pub token: Vec<TokenRecord>,
}

/// The file format, chosen by the file name.
fn is_json(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"))
}

impl TokenFile {
    /// Parses a token file's text (JSON when `json`, else TOML) and checks it.
    pub fn parse(text: &str, json: bool) -> Result<TokenFile, TokenError> {
        let file: TokenFile = if json { serde_json::from_str(text)? } else { toml::from_str(text)? };
        file.tokens()?;
        Ok(file)
    }

    /// Reads and parses the file at `path`.
    pub fn read(path: &Path) -> Result<TokenFile, TokenError> {
        let text = std::fs::read_to_string(path).map_err(|source| TokenError::Read { path: path.to_path_buf(), source })?;
        TokenFile::parse(&text, is_json(path)).map_err(|e| e.in_file(path))
    }

    /// The file's text in its format.
    pub fn render(&self, path: &Path) -> String {
        if is_json(path) {
            serde_json::to_string_pretty(self).expect("token files serialize") + "\n"
        } else {
            toml::to_string(self).expect("token files serialize")
        }
    }

    /// The checked tokens: unique names, 64-hex digests, known scopes, patterns.
    pub fn tokens(&self) -> Result<Vec<Token>, TokenError> {
        let mut out: Vec<Token> = Vec::with_capacity(self.token.len());
        for r in &self.token {
            let name = r.name.trim();
            if name.is_empty() {
                return Err(TokenError::EmptyName);
            }
            if out.iter().any(|t| &*t.name == name) || name == API_TOKEN_NAME {
                return Err(TokenError::NameTwice { name: name.to_string() });
            }
            let mut sha256 = [0u8; 32];
            hex::decode_to_slice(r.sha256.trim(), &mut sha256).map_err(|_| TokenError::BadDigest { name: name.to_string() })?;
            let scope = r.scopes.iter().map(|s| Access::parse(s).map_err(|source| TokenError::BadScope { name: name.to_string(), source })).try_fold(None, |best: Option<Access>, s| s.map(|s| best.max(Some(s))))?;
            let scope = scope.ok_or_else(|| TokenError::NoScope { name: name.to_string() })?;
            if r.chains.is_empty() || r.chains.iter().any(|c| c.trim().is_empty() || c.strip_suffix('*').unwrap_or(c).contains('*')) {
                return Err(TokenError::BadChains { name: name.to_string() });
            }
            out.push(Token { name: name.into(), sha256, scope, chains: r.chains.iter().map(|c| c.trim().to_string()).collect() });
        }
        Ok(out)
    }
}

/// Writes `file` to `path` atomically: a temp file beside it (mode 0600),
/// fsync, rename over `path`, fsync of the directory.
fn write_atomically(path: &Path, file: &TokenFile) -> Result<(), TokenError> {
    use std::io::Write;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let fail = |step: &'static str, source: std::io::Error| TokenError::Write { step, path: path.to_path_buf(), source };
    // The data directory's default file may come before the directory.
    mentisdb_fs_storage::private::create_private_dir(dir, true).map_err(|e| fail("create the directory of the", e))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| fail("create a temporary file for the", e))?;
    tmp.write_all(file.render(path).as_bytes()).map_err(|e| fail("write the", e))?;
    tmp.as_file().sync_all().map_err(|e| fail("fsync the", e))?;
    tmp.persist(path).map_err(|e| fail("replace the", e.error))?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// The token file at `path`, or an empty one when it does not exist.
fn read_or_empty(path: &Path) -> Result<TokenFile, TokenError> {
    if path.exists() {
        TokenFile::read(path)
    } else {
        Ok(TokenFile::default())
    }
}

/// Adds a token named `name` to the file at `path` (created, mode 0600, when
/// missing) and returns the token's text, which is stored nowhere.
pub fn add_token(path: &Path, name: &str, scope: Access, chains: &[String]) -> Result<String, TokenError> {
    let mut file = read_or_empty(path)?;
    let name = name.trim();
    if file.token.iter().any(|t| t.name == name) {
        return Err(TokenError::NameTaken { name: name.to_string(), path: path.to_path_buf() });
    }
    let token = generate().map_err(TokenError::NoRandomness)?;
    let chains = if chains.is_empty() { all_chains() } else { chains.iter().map(|c| c.trim().to_string()).collect() };
    file.token.push(TokenRecord { name: name.to_string(), sha256: hex::encode(digest(&token)), scopes: vec![scope.as_str().to_string()], chains });
    file.tokens()?;
    write_atomically(path, &file)?;
    Ok(token)
}

/// Adds a token known only by the SHA-256 (hex) of its text, e.g. one taken
/// in from MentisDB 0.10's `bearer-tokens.json`: the same secret keeps
/// working. `Ok(false)` when a token of that name is there already.
pub fn import_token(path: &Path, name: &str, sha256_hex: &str, scope: Access, chains: &[String]) -> Result<bool, TokenError> {
    let mut file = read_or_empty(path)?;
    let name = name.trim();
    if file.token.iter().any(|t| t.name == name) {
        return Ok(false);
    }
    let chains = if chains.is_empty() { all_chains() } else { chains.iter().map(|c| c.trim().to_string()).collect() };
    file.token.push(TokenRecord { name: name.to_string(), sha256: sha256_hex.trim().to_ascii_lowercase(), scopes: vec![scope.as_str().to_string()], chains });
    // Checks the record (hash form, scope, chains) before anything is written.
    file.tokens()?;
    write_atomically(path, &file)?;
    Ok(true)
}

/// Removes the token named `name` from the file at `path`.
pub fn revoke_token(path: &Path, name: &str) -> Result<(), TokenError> {
    let mut file = TokenFile::read(path)?;
    let before = file.token.len();
    file.token.retain(|t| t.name != name);
    if file.token.len() == before {
        return Err(TokenError::NoSuchToken { name: name.to_string(), path: path.to_path_buf() });
    }
    write_atomically(path, &file)
}

/// The tokens of the file at `path` (none when it does not exist).
pub fn list_tokens(path: &Path) -> Result<Vec<Token>, TokenError> {
    read_or_empty(path)?.tokens()
}
