//! LoCoMo conversations as the benches ingest them (the fixed procedure of
//! `locomo-bench`): every dialogue turn, session by session, one thought
//! `"[<session date_time>] <speaker>: <text>"` by the speaker, and the
//! questions of categories 1-4 that name evidence turns.

use serde_json::Value;
use std::path::Path;

/// One conversation's turns and questions.
pub struct Conversation {
    /// The file's stem (`conv-26`).
    pub name: String,
    /// (content, agent_id, dia_id)
    pub turns: Vec<(String, String, String)>,
    /// (question, category, evidence)
    pub questions: Vec<(String, u64, Vec<String>)>,
}

/// Reads one `conv-*.json`.
pub fn load(path: &Path) -> Result<Conversation, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    // Files come flattened or with the turns under "conversation".
    let conv = v.get("conversation").unwrap_or(&v);
    let obj = conv.as_object().ok_or("conversation is not an object")?;
    let mut sessions: Vec<(u64, &Vec<Value>)> = obj
        .iter()
        .filter_map(|(k, val)| k.strip_prefix("session_").and_then(|n| n.parse::<u64>().ok()).zip(val.as_array()))
        .collect();
    sessions.sort_by_key(|(n, _)| *n);
    let mut turns = Vec::new();
    for (n, list) in sessions {
        let date = obj.get(&format!("session_{n}_date_time")).and_then(Value::as_str).unwrap_or("");
        for t in list {
            let speaker = t["speaker"].as_str().unwrap_or("");
            let text = t["text"].as_str().unwrap_or("");
            let dia = t["dia_id"].as_str().unwrap_or("");
            turns.push((format!("[{date}] {speaker}: {text}"), speaker.to_lowercase(), dia.to_string()));
        }
    }
    let mut questions = Vec::new();
    for q in v["qa"].as_array().ok_or("no qa list")? {
        let cat = q["category"].as_u64().unwrap_or(0);
        if !(1..=4).contains(&cat) {
            continue;
        }
        let mut ev: Vec<String> = Vec::new();
        for e in q["evidence"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
            for part in e.as_str().unwrap_or("").split(';').map(str::trim).filter(|p| !p.is_empty()) {
                if !ev.iter().any(|x| x == part) {
                    ev.push(part.to_string());
                }
            }
        }
        if ev.is_empty() {
            continue;
        }
        let question = match &q["question"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        questions.push((question, cat, ev));
    }
    let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("conv").to_string();
    Ok(Conversation { name, turns, questions })
}
