//! The webhook tools of MentisDB 0.10.10 (`crate::webhooks` holds the
//! registry; the daemon delivers). All three are admin on every chain: a
//! webhook sees appends and its URL and filters are daemon-wide state.

use crate::args::read_args;
use crate::args::ChainKey;
use super::replies::{WebhookDeletedReply, WebhookListReply, WebhookRegisteredReply};
use super::tools;
use crate::db::MentisDb;
use crate::error::ToolError;
use crate::limits;
use crate::thought::ThoughtType;
use crate::timestamp::format_rfc3339_millis;
use crate::webhooks::{Webhook, WebhookError};
use schemars::JsonSchema;
use std::collections::BTreeMap;

tools! {
    tool!(admin "mentisdb_register_webhook", "POST each new thought (of chain_key_filter, thought_type_filter) to url, at least once, HMAC-signed in X-MentisDB-Signature. Returns its secret once.", RegisterArgs => WebhookRegisteredReply, register).daemon_wide(),
    tool!(admin "mentisdb_list_webhooks", "Every webhook with its delivery state (delivered, last_delivered_at, last_error); never the secrets.", ListArgs => WebhookListReply, list).daemon_wide(),
    tool!(admin "mentisdb_delete_webhook", "Delete a webhook by id, with its pending deliveries.", DeleteArgs => WebhookDeletedReply, delete).daemon_wide(),
}

/// Longest webhook URL, in bytes.
const MAX_URL_BYTES: usize = 2048;
/// Shortest and longest secret a caller may choose, in bytes.
const SECRET_BYTES: std::ops::RangeInclusive<usize> = 16..=256;

/// Arguments of `mentisdb_register_webhook`.
#[derive(Debug, JsonSchema)]
pub(super) struct RegisterArgs {
    /// Unused (0.10.10 takes it); see chain_key_filter.
    #[schemars(extend("deprecated" = true))]
    pub chain_key: Option<ChainKey>,
    /// The http:// or https:// URL to POST to.
    pub url: String,
    /// Only appends to this chain.
    pub chain_key_filter: Option<ChainKey>,
    /// Only thoughts of these types.
    pub thought_type_filter: Option<Vec<ThoughtType>>,
    /// HMAC key (16 to 256 bytes); generated when omitted.
    pub secret: Option<String>,
}
read_args!(RegisterArgs { chain_key, url, chain_key_filter, thought_type_filter, secret });

/// Arguments of `mentisdb_list_webhooks`.
#[derive(Debug, Default, JsonSchema)]
pub(super) struct ListArgs {
    /// Accepted and unused (0.10.10 takes it).
    #[schemars(extend("deprecated" = true))]
    pub chain_key: Option<ChainKey>,
}
read_args!(ListArgs { chain_key });

/// Arguments of `mentisdb_delete_webhook`.
#[derive(Debug, JsonSchema)]
pub(super) struct DeleteArgs {
    /// Accepted and unused (0.10.10 takes it).
    #[schemars(extend("deprecated" = true))]
    pub chain_key: Option<ChainKey>,
    /// The webhook's id.
    pub id: String,
}
read_args!(DeleteArgs { chain_key, id });

fn register(db: &MentisDb, a: RegisterArgs) -> Result<WebhookRegisteredReply, ToolError> {
    const TOOL: &str = "mentisdb_register_webhook";
    let url = a.url.trim().to_string();
    if url.is_empty() || url.len() > MAX_URL_BYTES {
        return Err(ToolError::invalid(TOOL, format!("url must be 1 to {MAX_URL_BYTES} bytes")));
    }
    let filter = match a.chain_key_filter.as_deref().map(str::trim).filter(|k| !k.is_empty()) {
        Some(k) => {
            limits::check_key("chain_key_filter", k).map_err(|e| ToolError::invalid(TOOL, e.to_string()))?;
            Some(k.to_string())
        }
        None => None,
    };
    let secret = match a.secret {
        Some(s) if SECRET_BYTES.contains(&s.len()) && !s.chars().any(char::is_control) => s,
        Some(_) => return Err(ToolError::invalid(TOOL, format!("secret must be {} to {} bytes without control characters", SECRET_BYTES.start(), SECRET_BYTES.end()))),
        // 244 random bits from the host's id source, as 64 hex digits.
        None => format!("{}{}", db.fresh_id(), db.fresh_id()).replace('-', ""),
    };
    // Checked like every other chain_key (0.10.10 takes it and does not use it).
    db.resolve_key(a.chain_key.as_deref())?;
    let hook = Webhook {
        id: db.fresh_id(),
        url,
        chain_key_filter: filter,
        thought_type_filter: a.thought_type_filter,
        created_at: format_rfc3339_millis(db.now_millis()),
        active: true,
        delivered: 0,
        last_delivered_at: None,
        last_error: None,
    };
    // Only appends from now on: every chain starts at its current length.
    let mut heads = BTreeMap::new();
    for key in db.chain_keys().into_iter().filter(|k| hook.wants_chain(k)) {
        heads.insert(key.clone(), db.thought_count(&key)?);
    }
    let webhook = db.webhooks().register(db.storage(), hook, secret.clone(), heads).map_err(|e| match e {
        WebhookError::NoDelivery => ToolError::Unavailable(e.to_string()),
        WebhookError::BadUrl(why) => ToolError::invalid(TOOL, why),
        WebhookError::Storage(s) => s.into(),
    })?;
    Ok(WebhookRegisteredReply { webhook, secret })
}

fn list(db: &MentisDb, a: ListArgs) -> Result<WebhookListReply, ToolError> {
    db.resolve_key(a.chain_key.as_deref())?;
    Ok(WebhookListReply { webhooks: db.webhooks().list() })
}

fn delete(db: &MentisDb, a: DeleteArgs) -> Result<WebhookDeletedReply, ToolError> {
    db.resolve_key(a.chain_key.as_deref())?;
    Ok(WebhookDeletedReply { deleted: db.webhooks().delete(db.storage(), a.id.trim())? })
}
