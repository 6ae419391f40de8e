//! The chat model `mentisdb_extract_memories` uses: an OpenAI-compatible
//! chat-completions endpoint (`POST <LLM_BASE_URL>/chat/completions`,
//! bearer `OPENAI_API_KEY`, model `LLM_MODEL`), called with a blocking
//! HTTP client (tools run on the blocking pool, see `auth::call_as`).

use mentisdb_core::extract::ChatModel;
use serde_json::{json, Value};
use std::time::Duration;

/// How long one extraction may wait for the model.
const TIMEOUT: Duration = Duration::from_secs(120);
/// The largest reply read (a chat completion is a few KiB).
const MAX_REPLY_BYTES: u64 = 4 << 20;

/// An OpenAI-compatible chat-completions endpoint.
pub struct OpenAiChat {
    url: String,
    api_key: String,
    model: String,
    agent: ureq::Agent,
}

impl OpenAiChat {
    /// `base_url` without `/chat/completions` (a trailing `/` is fine).
    pub fn new(base_url: &str, api_key: &str, model: &str) -> Self {
        let agent = ureq::Agent::config_builder().timeout_global(Some(TIMEOUT)).http_status_as_error(false).build().into();
        OpenAiChat { url: format!("{}/chat/completions", base_url.trim_end_matches('/')), api_key: api_key.to_string(), model: model.to_string(), agent }
    }
}

impl ChatModel for OpenAiChat {
    fn model(&self) -> &str {
        &self.model
    }

    fn chat(&self, system: &str, user: &str, temperature: f32) -> Result<Value, String> {
        let body = json!({
            "model": self.model,
            "temperature": temperature,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        });
        let mut reply = self
            .agent
            .post(&self.url)
            .header("Authorization", &format!("Bearer {}", self.api_key))
            .send_json(&body)
            .map_err(|e| format!("{}: {e}", self.url))?;
        let status = reply.status();
        let text = reply.body_mut().with_config().limit(MAX_REPLY_BYTES).read_to_string().map_err(|e| format!("{}: reading the reply: {e}", self.url))?;
        if !status.is_success() {
            return Err(format!("{} answered HTTP {}: {}", self.url, status.as_u16(), text.chars().take(300).collect::<String>()));
        }
        serde_json::from_str(&text).map_err(|e| format!("{} answered something that is not JSON ({e})", self.url))
    }
}
