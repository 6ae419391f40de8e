//! `mentisdbd add | search | agents | claim | release | claims | head |
//! verify`: memory from the shell.
//!
//! Contract: each command is one tool call, made where the memory is
//! ([`Target::resolve`]: `--url`'s daemon, else the daemon that holds the
//! data directory, else the directory or database opened and locked here
//! for the command's duration). `verify` needs the files to itself: while a
//! daemon holds the directory it verifies a snapshot the daemon takes.
//! Output is one line per result for people; `--json` prints the tool's
//! JSON result instead. A claim or release the store refuses is a one-line
//! error and exit 1.

use super::cli::ShellTarget;
use super::CommandError;
use crate::config::Config;
use crate::daemon::{open_store, OpenedStore};
use crate::target::Target;
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

/// Runs one tool call for a shell command and prints its result: JSON with
/// `--json`, else the lines `lines` makes of it, with the reply's
/// `warnings` (a value moved into range, say) on stderr.
pub fn call(config: &Config, at: &ShellTarget, tool: &str, args: Map<String, Value>, lines: impl Fn(&Value) -> Vec<String>) -> Result<(), CommandError> {
    let target = Target::resolve(config, at.url.as_deref(), at.token.as_deref())?;
    let reply = target.call(tool, Value::Object(args))?;
    if at.json {
        println!("{}", serde_json::to_string_pretty(&reply).unwrap_or_default());
    } else {
        for line in lines(&reply) {
            println!("{line}");
        }
        for warning in reply["warnings"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            eprintln!("warning: {warning}");
        }
    }
    Ok(())
}

/// One fact as a line: subject, predicate, object, window, id.
pub fn fact_line(f: &Value) -> String {
    let text = |k: &str| f[k].as_str().unwrap_or("").to_string();
    let until = f["valid_to"].as_str().map_or_else(|| "now".to_string(), str::to_string);
    format!("{}\t{}\t{}\t{} .. {}\t{}", text("subject"), text("predicate"), text("object"), text("valid_from"), until, text("fact_id"))
}

/// Sets `args[key]` when `value` is given.
pub fn put(args: &mut Map<String, Value>, key: &str, value: Option<impl Into<Value>>) {
    if let Some(v) = value {
        args.insert(key.into(), v.into());
    }
}

/// One review as a line: id, status, deadline, requester, subject.
pub fn review_line(r: &Value) -> String {
    let text = |k: &str| r[k].as_str().unwrap_or("").to_string();
    let by = r["decided_by"].as_str().map_or_else(String::new, |d| format!(" by {d}"));
    format!("{}\t{}{by}\tuntil {}\t{}\t{}", text("review_id"), text("status"), text("deadline"), text("requester"), text("subject"))
}

/// One agent's presence as a line: agent, action, file, last seen.
pub fn presence_line(p: &Value) -> String {
    let text = |k: &str| p[k].as_str().unwrap_or("-").to_string();
    format!("{}\t{}\t{}\t{}", text("agent_id"), text("current_action"), text("current_file"), text("last_seen"))
}

/// A review decision from the shell: the review on success; a decision the
/// review does not take is a one-line error and exit 1.
pub fn decide(config: &Config, at: &ShellTarget, args: Map<String, Value>) -> Result<(), CommandError> {
    let target = Target::resolve(config, at.url.as_deref(), at.token.as_deref())?;
    let reply = target.call("mentisdb_decide_review", Value::Object(args))?;
    if at.json {
        println!("{}", serde_json::to_string_pretty(&reply).unwrap_or_default());
    }
    if reply["ok"] != true {
        return Err(CommandError::NotDecided { reason: reply["reason"].as_str().unwrap_or("refused").to_string(), decision: reply["decision"].as_str().map(str::to_string) });
    }
    if !at.json {
        println!("decided\t{}", review_line(&reply["review"]));
    }
    Ok(())
}

/// One lease as a line: key, holder, token, deadline.
pub fn lease_line(l: &Value) -> String {
    format!("{}\t{}\ttoken {}\tuntil {}", l["key"].as_str().unwrap_or(""), l["holder"].as_str().unwrap_or(""), l["fencing_token"], l["expires_at"].as_str().unwrap_or(""))
}

/// A claim or release from the shell: the lease on success; a refusal
/// (the key held by another, not held) is a one-line error and exit 1.
pub fn claim(config: &Config, at: &ShellTarget, tool: &str, args: Map<String, Value>) -> Result<(), CommandError> {
    let target = Target::resolve(config, at.url.as_deref(), at.token.as_deref())?;
    let reply = target.call(tool, Value::Object(args))?;
    if at.json {
        println!("{}", serde_json::to_string_pretty(&reply).unwrap_or_default());
    }
    if reply["ok"] != true {
        let reason = reply["reason"].as_str().unwrap_or("refused");
        return Err(match reply["held_by"].as_str() {
            Some(holder) => CommandError::HeldByAnother { reason: reason.to_string(), holder: holder.to_string(), until: reply["expires_at"].as_str().unwrap_or("?").to_string() },
            None => CommandError::NotHolding { reason: reason.to_string() },
        });
    }
    if !at.json {
        let verb = if tool == "mentisdb_release_claim" { "released" } else { "claimed" };
        println!("{verb}\t{}", lease_line(&reply["claim"]));
    }
    Ok(())
}

/// `mentisdbd verify`: opens the store here (never through a daemon).
pub fn verify(config: &Config) -> Result<(), CommandError> {
    if config.storage_url.is_none() {
        let dir = config.data_dir()?;
        if let Ok(Some(holder)) = crate::infra::dir_lock::running_daemon(&dir) {
            // The daemon keeps the files: verify a consistent snapshot it takes.
            let base = holder.rest_base().ok_or_else(|| CommandError::NotListening { pid: holder.pid, dir: dir.clone() })?;
            let (lines, sound) = super::backup::verify_snapshot(&base, config.api_token.as_deref())?;
            for line in &lines {
                println!("{line}");
            }
            return if sound { Ok(()) } else { Err(CommandError::VerificationFailed) };
        }
    }
    let store = open_store(config)?;
    let (lines, sound) = verify_report(&store);
    for line in &lines {
        println!("{line}");
    }
    if sound {
        println!("sound: {} chains and the skill registry verified", store.report.chains.len());
        Ok(())
    } else {
        Err(CommandError::VerificationFailed)
    }
}
