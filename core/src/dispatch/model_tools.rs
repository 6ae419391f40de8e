//! Tools that need the host's language model: `mentisdb_extract_memories`
//! (`crate::extract` holds the prompt and the reply reading).

use crate::args::read_args;
use crate::args::ChainKey;
use super::tools;
use crate::db::MentisDb;
use crate::error::ToolError;
use crate::extract::Extraction;
use crate::limits;
use schemars::JsonSchema;

tools! {
    tool!("mentisdb_extract_memories", "Extract candidate thoughts from free text with the daemon's language model (OPENAI_API_KEY, LLM_BASE_URL, LLM_MODEL); appends nothing.", ExtractArgs => Extraction, extract),
}

/// Arguments of `mentisdb_extract_memories`.
#[derive(Debug, JsonSchema)]
pub(super) struct ExtractArgs {
    /// The text to extract memories from.
    pub text: String,
    /// The chain the memories are meant for.
    pub chain_key: Option<ChainKey>,
    /// Reserved (0.10 accepts it and does not use it).
    #[schemars(extend("deprecated" = true))]
    pub agent_id: Option<String>,
    /// A prompt with `{{types}}` and `{{text}}` to use instead of ours.
    pub prompt_template: Option<String>,
}
read_args!(ExtractArgs { text, chain_key, agent_id, prompt_template });

fn extract(db: &MentisDb, a: ExtractArgs) -> Result<Extraction, ToolError> {
    const TOOL: &str = "mentisdb_extract_memories";
    let key = db.resolve_key(a.chain_key.as_deref())?;
    if key != db.config().default_chain_key && !db.with_chain(&key, |c| c.is_some())? {
        return Err(ToolError::NotFound(format!("chain '{key}' does not exist")));
    }
    if a.text.len() > limits::MAX_CONTENT_BYTES {
        return Err(ToolError::invalid(TOOL, format!("text is {} bytes; the limit is {}", a.text.len(), limits::MAX_CONTENT_BYTES)));
    }
    let _ = a.agent_id;
    db.extract_memories(&a.text, a.prompt_template.as_deref())
}
