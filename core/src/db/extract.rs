//! Memory extraction's way in from the engine: the host's chat model and
//! the call that asks it ([`crate::extract`] builds the prompt and reads
//! the reply).

use super::MentisDb;
use crate::error::ToolError;
use crate::extract::{read_reply, user_prompt, ChatModel, Extraction, SYSTEM_PROMPT, TEMPERATURE};
use std::sync::Arc;

impl MentisDb {
    /// Registers (or with `None` clears) the host's chat model for
    /// `mentisdb_extract_memories`.
    pub fn set_chat_model(&self, model: Option<Arc<dyn ChatModel>>) {
        *self.chat_model.write().unwrap_or_else(|e| e.into_inner()) = model;
    }

    /// Extracts memories from `text` through the registered chat model.
    pub fn extract_memories(&self, text: &str, template: Option<&str>) -> Result<Extraction, ToolError> {
        const TOOL: &str = "mentisdb_extract_memories";
        let model = self.chat_model.read().unwrap_or_else(|e| e.into_inner()).clone();
        let model = model.ok_or_else(|| {
            ToolError::Unavailable("memory extraction is not configured: start the daemon with OPENAI_API_KEY set (and LLM_BASE_URL for a non-OpenAI endpoint, LLM_MODEL for the model; default gpt-4o)".into())
        })?;
        if text.trim().is_empty() {
            return Err(ToolError::invalid(TOOL, "text must not be empty"));
        }
        let reply = model.chat(SYSTEM_PROMPT, &user_prompt(text, template), TEMPERATURE).map_err(|e| ToolError::Unavailable(format!("the language model call failed: {e}")))?;
        read_reply(&reply, model.model()).map_err(|e| ToolError::Unavailable(format!("the language model's reply could not be used: {e}")))
    }
}
