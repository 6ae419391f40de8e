//! Replies of the webhook tools (MentisDB 0.10.10's shapes).

use crate::webhooks::Webhook;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `mentisdb_list_webhooks`: every webhook, in registration order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WebhookListReply {
    /// The webhooks.
    pub webhooks: Vec<Webhook>,
}

/// `mentisdb_register_webhook`: the new webhook, and the secret its
/// deliveries are signed with (shown only here).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WebhookRegisteredReply {
    /// The new webhook.
    pub webhook: Webhook,
    /// The HMAC-SHA256 key of `X-MentisDB-Signature`.
    pub secret: String,
}

/// `mentisdb_delete_webhook`: whether a webhook had that id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WebhookDeletedReply {
    /// True when it existed and is gone.
    pub deleted: bool,
}
