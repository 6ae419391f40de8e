//! MentisDB 0.10's webhook registrations (`mentisdb-webhooks.json`),
//! registered again through `mentisdb_register_webhook`.

use super::ReferenceError;
use crate::target::Target;
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::Path;

/// MentisDB 0.10's `mentisdb-webhooks.json`.
#[derive(Deserialize)]
struct RefWebhooks {
    webhooks: Vec<RefWebhook>,
}

#[derive(Deserialize)]
struct RefWebhook {
    id: String,
    url: String,
    chain_key_filter: Option<String>,
    thought_type_filter: Option<Vec<String>>,
    active: bool,
}

/// Registers MentisDB 0.10's webhooks of `dir` (if any) through
/// `mentisdb_register_webhook`: same URL and filters, a new id and a new
/// signing secret (0.10 does not sign), deliveries from now on (the imported
/// thoughts are not sent). Inactive ones, ones registered already (same URL
/// and filters) and ones the daemon's URL rule refuses are reported in
/// `warnings`. Returns `(0.10 id, new id)` of each one registered.
pub fn import_reference_webhooks(db: &Target, dir: &Path, warnings: &mut Vec<String>) -> Result<Vec<(String, String)>, ReferenceError> {
    let path = dir.join("mentisdb-webhooks.json");
    let Ok(bytes) = std::fs::read(&path) else { return Ok(Vec::new()) };
    let file: RefWebhooks = serde_json::from_slice(&bytes).map_err(|e| ReferenceError::Json(e).in_file(&path))?;
    let existing = db.call("mentisdb_list_webhooks", json!({})).ok().and_then(|v| v["webhooks"].as_array().cloned()).unwrap_or_default();
    let mut done = Vec::new();
    for hook in file.webhooks {
        if !hook.active {
            warnings.push(format!("webhook {} ({}) is inactive in the reference: not registered", hook.id, hook.url));
            continue;
        }
        let mut types = hook.thought_type_filter.clone();
        if let Some(t) = types.as_mut() {
            t.sort();
        }
        let same = |e: &Value| {
            let mut theirs: Option<Vec<String>> = e["thought_type_filter"].as_array().map(|a| a.iter().filter_map(|t| t.as_str().map(str::to_string)).collect());
            if let Some(t) = theirs.as_mut() {
                t.sort();
            }
            e["url"].as_str() == Some(&hook.url) && e["chain_key_filter"].as_str() == hook.chain_key_filter.as_deref() && theirs == types
        };
        if existing.iter().any(same) {
            warnings.push(format!("webhook {} ({}) is registered already: skipped", hook.id, hook.url));
            continue;
        }
        let args = json!({ "url": hook.url, "chain_key_filter": hook.chain_key_filter, "thought_type_filter": hook.thought_type_filter });
        match db.call("mentisdb_register_webhook", args) {
            Ok(v) => done.push((hook.id, v["webhook"]["id"].as_str().unwrap_or_default().to_string())),
            Err(e) => warnings.push(format!("webhook {} ({}) not registered: {e}", hook.id, hook.url)),
        }
    }
    Ok(done)
}
