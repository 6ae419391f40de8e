//! `mentisdbd add | search | agents | head | verify`: memory from the shell.
//!
//! Contract: each command is one tool call, made where the memory is. With
//! `--url` (or `MENTISDB_URL`) it goes to that daemon's REST API, with the
//! token of `--token` / `MENTISDB_API_TOKEN`. Otherwise the data directory
//! (`--dir` / `MENTISDB_DIR`, default `~/.mentisdb`) or the database of
//! `--storage-url` is used: when a daemon holds the directory (its lock file
//! says where it listens) the call goes through that daemon, so there is
//! never a second writer; when none does, the command opens the directory
//! itself, locked for the command's duration. `verify` needs the files to
//! itself and refuses a directory a daemon holds. Output is one line per
//! result for people; `--json` prints the tool's JSON result instead.

use crate::daemon::OpenedStore;
use serde_json::{json, Map, Value};

/// Arguments every command shares, as JSON: `chain_key` when given.
pub fn chain_args(chain: Option<&str>) -> Map<String, Value> {
    let mut m = Map::new();
    if let Some(c) = chain {
        m.insert("chain_key".into(), json!(c));
    }
    m
}

/// One line per ranked hit: index, score, type, agent and the content's first line.
pub fn hit_lines(reply: &Value) -> Vec<String> {
    reply["results"]
        .as_array()
        .map(|hits| {
            hits.iter()
                .map(|h| {
                    let t = &h["thought"];
                    let content = t["content"].as_str().unwrap_or("");
                    format!(
                        "#{} {:.3} {} {}: {}",
                        t["index"],
                        h["score"]["total"].as_f64().or_else(|| h["score"].as_f64()).unwrap_or(0.0),
                        t["thought_type"].as_str().unwrap_or("?"),
                        t["agent_id"].as_str().unwrap_or("?"),
                        content.lines().next().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// What `verify` found in an opened store: one line per chain and one per
/// refused object, and whether all is sound.
pub fn verify_report(store: &OpenedStore) -> (Vec<String>, bool) {
    let mut lines = Vec::new();
    let mut sound = true;
    for c in &store.report.chains {
        // A torn tail is an append a crash interrupted before it was
        // acknowledged: cut on open, as the daemon does; nothing is lost.
        let torn = if c.torn_tail_bytes > 0 { format!(", a torn tail of {} bytes cut: an unacknowledged append", c.torn_tail_bytes) } else { String::new() };
        lines.push(format!("ok      {} ({} thoughts, {}{torn})", c.chain_key, c.thought_count, c.storage_location));
    }
    for (what, why) in &store.report.refused {
        sound = false;
        lines.push(format!("REFUSED {what}: {why}"));
    }
    match store.db.call("mentisdb_list_skills", json!({})) {
        Ok(v) => lines.push(format!("ok      skill registry ({} skills)", v["skills"].as_array().map_or(0, Vec::len))),
        Err(e) => {
            sound = false;
            lines.push(format!("REFUSED skill registry: {e}"));
        }
    }
    (lines, sound)
}
