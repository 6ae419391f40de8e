//! Memory extraction through a language model (`mentisdb_extract_memories`),
//! as MentisDB 0.10 does it.
//!
//! The core builds the prompt and reads the reply; the host sends it. A
//! host that can reach an OpenAI-compatible chat-completions endpoint
//! registers a [`ChatModel`] (`MentisDb::set_chat_model`); `mentisdbd`
//! does when `OPENAI_API_KEY` is set (with `LLM_BASE_URL` and `LLM_MODEL`).
//! Without one the tool fails with a clear message.
//!
//! The model is asked for `{"thoughts": [{thought_type, content, importance,
//! confidence, tags, concepts}]}` (a Markdown code fence around it is
//! accepted). Each extracted thought is checked (a known type, content not
//! blank, scores clamped to 0..1, missing scores 0.5) and returned, not
//! appended: the agent reviews and appends what it keeps.

pub use crate::chat_model::ChatModel;
use crate::thought::ThoughtType;
use serde::Deserialize;
use serde_json::Value;

/// The system message sent with every extraction.
pub const SYSTEM_PROMPT: &str = "You are a helpful memory analyst.";
/// Sampling temperature of extractions.
pub const TEMPERATURE: f32 = 0.1;

const TYPES: &str = "PreferenceUpdate, UserTrait, RelationshipUpdate, Finding, Insight, FactLearned, PatternDetected, Hypothesis, Mistake, Correction, LessonLearned, AssumptionInvalidated, Constraint, Plan, Subgoal, Decision, StrategyShift, Wonder, Question, Idea, Experiment, ActionTaken, TaskComplete, Checkpoint, StateSnapshot, Handoff, Summary, Surprise, Reframe, Goal";

/// The default user prompt; the text to analyse follows it.
pub const EXTRACTION_PROMPT: &str = "You are a memory analyst. Your task is to extract structured memory records from the provided text.

For each distinct piece of information, emit a JSON object with these fields:
- thought_type: one of the valid ThoughtType names listed below
- content: a concise, factual memory statement (1-2 sentences max)
- importance: a float 0.0-1.0 indicating memory significance
- confidence: a float 0.0-1.0 indicating extraction certainty
- tags: array of lowercase string tags
- concepts: array of lowercase concept labels

Valid ThoughtType names:
{{types}}

Rules:
1. Each memory must be independently meaningful - no cross-refs within the batch
2. Be conservative: only extract what is explicitly stated or strongly implied
3. Use the most specific ThoughtType that applies
4. Tags should be lowercase and concise (noun form preferred)
5. Return a JSON object with a \"thoughts\" array containing all extracted memories
6. If no memories can be extracted, return {\"thoughts\": []}

Input text:";


/// One extracted thought, in 0.10's `ThoughtInput` shape.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct ExtractedThought {
    /// Always null (0.10's field).
    pub session_id: Option<String>,
    /// Always null (0.10's field).
    pub agent_name: Option<String>,
    /// Always null (0.10's field).
    pub agent_owner: Option<String>,
    /// Always null (0.10's field).
    pub signing_key_id: Option<String>,
    /// Always null (0.10's field).
    pub thought_signature: Option<Vec<u8>>,
    /// The type the model chose.
    #[schemars(with = "String")]
    pub thought_type: ThoughtType,
    /// Always `Memory`.
    pub role: String,
    /// The memory, trimmed.
    pub content: String,
    /// 0..1 (0.5 when the model gave none).
    pub confidence: Option<f64>,
    /// 0..1 (0.5 when the model gave none).
    pub importance: f64,
    /// Tags the model gave.
    pub tags: Vec<String>,
    /// Concepts the model gave.
    pub concepts: Vec<String>,
    /// Always empty.
    pub refs: Vec<u64>,
    /// Always empty.
    pub relations: Vec<Value>,
    /// Always null.
    pub entity_type: Option<String>,
    /// Always null.
    pub source_episode: Option<String>,
}

/// Token counts the endpoint reported (0 when it reported none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, Deserialize, schemars::JsonSchema)]
pub struct TokenUsage {
    /// Tokens of the prompt.
    #[serde(default)]
    pub prompt_tokens: u64,
    /// Tokens of the reply.
    #[serde(default)]
    pub completion_tokens: u64,
    /// Both.
    #[serde(default)]
    pub total_tokens: u64,
}

/// What an extraction returns.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Extraction {
    /// The memories found, to review and append.
    pub thoughts: Vec<ExtractedThought>,
    /// The model that answered.
    pub model: String,
    /// Token counts.
    pub usage: TokenUsage,
}

/// The user message: `template` with `{{types}}` and `{{text}}` filled in,
/// or the default prompt followed by the text.
pub fn user_prompt(text: &str, template: Option<&str>) -> String {
    match template {
        Some(t) => t.replace("{{types}}", TYPES).replace("{{text}}", text),
        None => format!("{}\n\n{text}", EXTRACTION_PROMPT.replace("{{types}}", TYPES)),
    }
}

/// Reads a chat-completions reply into an [`Extraction`].
pub fn read_reply(reply: &Value, requested_model: &str) -> Result<Extraction, String> {
    let content = reply
        .pointer("/choices/0/message/content")
        .and_then(Value::as_str)
        .ok_or("the model's reply has no choices[0].message.content")?;
    let thoughts = parse_thoughts(content)?;
    let model = reply.get("model").and_then(Value::as_str).unwrap_or(requested_model).to_string();
    let usage = reply.get("usage").cloned().and_then(|u| serde_json::from_value(u).ok()).unwrap_or_default();
    Ok(Extraction { thoughts, model, usage })
}

#[derive(Deserialize)]
struct RawThoughts {
    thoughts: Vec<RawThought>,
}

#[derive(Deserialize)]
struct RawThought {
    thought_type: String,
    content: String,
    importance: Option<f64>,
    confidence: Option<f64>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    concepts: Vec<String>,
}

/// The thoughts of the model's message text (JSON, maybe in a code fence).
fn parse_thoughts(message: &str) -> Result<Vec<ExtractedThought>, String> {
    let json = strip_code_fence(message);
    let raw: RawThoughts = serde_json::from_str(json).map_err(|e| format!("the model's output is not the expected JSON ({e}): {}", crate::text::truncate_chars(message, 300)))?;
    raw.thoughts
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            let thought_type = ThoughtType::parse(t.thought_type.trim()).map_err(|e| format!("thought {i}: {e}"))?;
            let content = t.content.trim();
            if content.is_empty() {
                return Err(format!("thought {i}: empty content"));
            }
            Ok(ExtractedThought {
                session_id: None,
                agent_name: None,
                agent_owner: None,
                signing_key_id: None,
                thought_signature: None,
                thought_type,
                role: "Memory".into(),
                content: content.to_string(),
                confidence: Some(t.confidence.unwrap_or(0.5).clamp(0.0, 1.0)),
                importance: t.importance.unwrap_or(0.5).clamp(0.0, 1.0),
                tags: t.tags,
                concepts: t.concepts,
                refs: Vec::new(),
                relations: Vec::new(),
                entity_type: None,
                source_episode: None,
            })
        })
        .collect()
}

/// `raw` without a surrounding Markdown code fence (```json ... ```).
fn strip_code_fence(raw: &str) -> &str {
    let trimmed = raw.trim();
    let Some(body) = trimmed.strip_prefix("```").and_then(|r| r.strip_suffix("```")) else { return trimmed };
    match body.split_once('\n') {
        Some((_lang, inner)) => inner.trim(),
        None => body.trim(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reply(content: &str) -> Value {
        json!({"model": "m-1", "choices": [{"message": {"role": "assistant", "content": content}}], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
    }

    #[test]
    fn a_fenced_reply_reads_with_clamped_scores_and_usage() {
        let got = read_reply(&reply("```json\n{\"thoughts\": [{\"thought_type\": \"PreferenceUpdate\", \"content\": \" Likes tea \", \"importance\": 1.5, \"tags\": [\"drinks\"]}]}\n```"), "asked").unwrap();
        assert_eq!(got.model, "m-1");
        assert_eq!(got.usage.total_tokens, 15);
        let t = &got.thoughts[0];
        assert_eq!((t.thought_type, t.content.as_str(), t.importance, t.confidence), (ThoughtType::PreferenceUpdate, "Likes tea", 1.0, Some(0.5)));
        assert_eq!(t.tags, ["drinks"]);
    }

    #[test]
    fn bad_replies_say_what_is_wrong() {
        assert!(read_reply(&reply("not json"), "m").unwrap_err().contains("not the expected JSON"));
        assert!(read_reply(&reply("{\"thoughts\": [{\"thought_type\": \"Nope\", \"content\": \"x\"}]}"), "m").unwrap_err().contains("thought 0"));
        assert!(read_reply(&reply("{\"thoughts\": [{\"thought_type\": \"Idea\", \"content\": \"  \"}]}"), "m").unwrap_err().contains("empty content"));
        assert!(read_reply(&json!({"choices": []}), "m").is_err());
        assert_eq!(read_reply(&reply("{\"thoughts\": []}"), "m").unwrap().thoughts.len(), 0);
    }

    #[test]
    fn templates_get_the_types_and_the_text() {
        assert_eq!(user_prompt("hi", Some("T={{types}}|X={{text}}")), format!("T={TYPES}|X=hi"));
        let default = user_prompt("the text", None);
        assert!(default.contains("Valid ThoughtType names:\nPreferenceUpdate,") && default.ends_with("Input text:\n\nthe text"));
    }
}
