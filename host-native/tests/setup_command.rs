//! `mentisdbd setup` as a user runs it: against a temporary HOME, a dry run
//! prints the diff and writes nothing, a run writes each client's file and
//! keeps the rest of it, a second run changes nothing, and a file that does
//! not parse stops the command with a one-line reason before anything is written.

mod common;

use serde_json::Value;
use std::path::Path;

fn setup(home: &Path, args: &[&str]) -> (bool, String, String) {
    let data = home.join("data");
    let mut full = vec!["setup"];
    full.extend_from_slice(args);
    let out = common::command(&data, &[("HOME", home.to_str().unwrap()), ("XDG_CONFIG_HOME", "")], &full).output().unwrap();
    (out.status.success(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn setup_writes_keeps_and_is_idempotent() {
    let home = tempfile::tempdir().unwrap();
    let claude = home.path().join(".claude.json");
    std::fs::write(&claude, "{\n  \"numStartups\": 7,\n  \"mcpServers\": {\n    \"other\": { \"type\": \"stdio\", \"command\": \"x\" }\n  }\n}\n").unwrap();

    let (ok, diff, _) = setup(home.path(), &["claude-code", "codex", "--dry-run", "--url", "http://127.0.0.1:9999/mcp", "--token", "t0k"]);
    assert!(ok);
    assert!(diff.contains("+    \"mentisdb\": {") && diff.contains("+++ ") && diff.contains("config.toml"), "{diff}");
    assert!(!home.path().join(".codex").exists(), "a dry run writes nothing");

    let (ok, _, err) = setup(home.path(), &["claude-code", "codex", "--url", "http://127.0.0.1:9999/mcp", "--token", "t0k"]);
    assert!(ok, "{err}");
    assert!(err.contains("ClaudeCode: updated") && err.contains("(backup: ") && err.contains("Codex: wrote"), "{err}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&claude).unwrap()).unwrap();
    assert_eq!(v["numStartups"], 7);
    assert_eq!(v["mcpServers"]["other"]["command"], "x");
    assert_eq!(v["mcpServers"]["mentisdb"]["url"], "http://127.0.0.1:9999/mcp");
    assert_eq!(v["mcpServers"]["mentisdb"]["headers"]["Authorization"], "Bearer t0k");
    let codex: toml::Table = toml::from_str(&std::fs::read_to_string(home.path().join(".codex/config.toml")).unwrap()).unwrap();
    assert_eq!(codex["mcp_servers"]["mentisdb"]["url"].as_str(), Some("http://127.0.0.1:9999/mcp"));

    let backups = || std::fs::read_dir(home.path()).unwrap().filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".bak")).count();
    assert_eq!(backups(), 1);
    let (ok, out, err) = setup(home.path(), &["claude-code", "codex", "--url", "http://127.0.0.1:9999/mcp", "--token", "t0k"]);
    assert!(ok && out.is_empty() && err.matches("unchanged").count() == 2, "{err}");
    assert_eq!(backups(), 1, "an unchanged file is not backed up again");
}

#[test]
fn a_broken_file_stops_setup_before_anything_is_written() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".gemini")).unwrap();
    std::fs::write(home.path().join(".gemini/settings.json"), "{ broken").unwrap();
    let (ok, _, err) = setup(home.path(), &["cursor", "gemini"]);
    assert!(!ok);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.starts_with("mentisdbd: ") && err.contains("settings.json is not valid JSON"), "{err}");
    assert!(!home.path().join(".cursor").exists(), "nothing written when one file is refused");
    let (ok, _, err) = setup(home.path(), &["notepad"]);
    assert!(!ok && err.contains("invalid value 'notepad'"), "{err}");
}
