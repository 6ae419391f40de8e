//! The host's language model, as the engine holds it ([`ChatModel`]); what
//! is asked of it and how its reply is read live in [`crate::extract`].

use serde_json::Value;

/// A chat-completions endpoint the host can call (blocking; the host runs
/// tools off its async workers).
pub trait ChatModel: Send + Sync {
    /// The model name sent with each request.
    fn model(&self) -> &str;
    /// Sends one chat: a system and a user message at `temperature`, and
    /// returns the endpoint's JSON reply (`choices`, `model`, `usage`) or
    /// why it failed (unreachable, HTTP status and body, not JSON).
    fn chat(&self, system: &str, user: &str, temperature: f32) -> Result<Value, String>;
}
