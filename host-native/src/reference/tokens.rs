//! MentisDB 0.10's bearer tokens (`bearer-tokens.json`), taken into our
//! token file by hash: the same secrets keep working.

use super::ReferenceError;
use std::path::Path;

/// What the token step did: names added, names already there, names skipped (revoked).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenOutcome {
    pub imported: Vec<String>,
    pub present: Vec<String>,
    pub revoked: Vec<String>,
}

/// Takes MentisDB 0.10's `bearer-tokens.json` of `dir` (if any) into the
/// token file `tokens_file`, by hash: the same secrets keep working, with
/// the same chains. A global token is admin on every chain; a chain-scoped
/// one is admin on its chains (0.10 lets it call every tool on them).
/// Revoked tokens are left out. Without a token file nothing is written and
/// a warning says how to import them.
pub fn import_reference_tokens(dir: &Path, tokens_file: Option<&Path>, warnings: &mut Vec<String>) -> Result<TokenOutcome, ReferenceError> {
    let path = dir.join(crate::tokens::REFERENCE_REGISTRY);
    let Some(tokens) = crate::tokens::read_reference_tokens(&path)? else { return Ok(TokenOutcome::default()) };
    let mut outcome = TokenOutcome::default();
    let Some(file) = tokens_file else {
        if !tokens.is_empty() {
            warnings.push(format!("{} lists {} bearer tokens: set MENTISDB_TOKENS_FILE (or --tokens-file) and run the import again to take them in", path.display(), tokens.len()));
        }
        return Ok(outcome);
    };
    for t in tokens {
        if t.revoked {
            outcome.revoked.push(t.alias);
            continue;
        }
        let chains = t.chains;
        if crate::tokens::import_token(file, &t.alias, &t.sha256_hex, mentisdb_core::dispatch::Access::Admin, &chains)? {
            outcome.imported.push(t.alias);
        } else {
            outcome.present.push(t.alias);
        }
    }
    Ok(outcome)
}
