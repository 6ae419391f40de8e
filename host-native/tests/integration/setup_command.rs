//! `mentisdbd setup` as a user runs it: against a temporary HOME, a dry run
//! prints the diff and writes nothing, a run writes each client's file and
//! keeps the rest of it, a second run changes nothing, and a file that does
//! not parse stops the command with a one-line reason before anything is written.

use crate::common;

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
    assert_eq!(std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&claude).unwrap().permissions()) & 0o077, 0, "a config holding a token is not left readable by others");
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

/// `mentisdbd wizard` in a real terminal (tmux), answered key by key as a
/// person types: it lists the clients it found, asks, shows the plan with
/// the token masked, and writes only after "y".
struct Tmux {
    socket: String,
    session: &'static str,
}

impl Tmux {
    fn start(command: &str) -> Tmux {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let socket = format!("mentisdb-wizard-{}-{}", std::process::id(), NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        let t = Tmux { socket, session: "wizard" };
        let ok = std::process::Command::new("tmux").args(["-L", &t.socket, "new-session", "-d", "-x", "220", "-y", "60", "-s", t.session, command]).status().unwrap();
        assert!(ok.success(), "tmux could not start (install it: apt-get install tmux)");
        t
    }

    fn screen(&self) -> String {
        let out = std::process::Command::new("tmux").args(["-L", &self.socket, "capture-pane", "-p", "-J", "-S", "-", "-t", self.session]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    fn wait_for(&self, text: &str) -> String {
        for _ in 0..300 {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("the terminal never showed {text:?}:\n{}", self.screen());
    }

    fn type_line(&self, keys: &str) {
        if !keys.is_empty() {
            assert!(std::process::Command::new("tmux").args(["-L", &self.socket, "send-keys", "-t", self.session, "-l", keys]).status().unwrap().success());
        }
        assert!(std::process::Command::new("tmux").args(["-L", &self.socket, "send-keys", "-t", self.session, "Enter"]).status().unwrap().success());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux").args(["-L", &self.socket, "kill-server"]).status();
    }
}

fn wizard_command(home: &Path) -> String {
    format!(
        "env -u XDG_CONFIG_HOME HOME={home} MENTISDB_DIR={home}/data MENTISDB_MCP_PORT=9471 {bin} wizard; echo WIZARD-EXIT=$?; sleep 60",
        home = home.display(),
        bin = env!("CARGO_BIN_EXE_mentisdbd")
    )
}

#[test]
fn the_wizard_in_a_terminal_asks_shows_a_masked_plan_and_writes_after_yes() {
    let home = tempfile::tempdir().unwrap();
    // Two clients are installed here: Cursor and OpenCode.
    std::fs::create_dir_all(home.path().join(".cursor")).unwrap();
    std::fs::create_dir_all(home.path().join(".config/opencode")).unwrap();
    let token = "mdb_0123456789abcdef0123456789abcdef";
    let t = Tmux::start(&wizard_command(home.path()));
    let listed = t.wait_for("Clients to set up");
    assert!(listed.contains("cursor") && listed.contains("Enter: cursor, opencode"), "{listed}");
    t.type_line("");
    t.wait_for("MCP URL (Enter: http://127.0.0.1:9471/mcp)");
    t.type_line("");
    t.wait_for("Bearer token");
    t.type_line(token);
    let plan = t.wait_for("Write these files? [y/N]");
    assert!(!plan.contains(token), "the token is not echoed as it is typed, nor shown whole:\n{plan}");
    assert!(plan.contains("create:") && plan.contains(".cursor/mcp.json") && plan.contains("opencode/opencode.json"), "{plan}");
    assert!(plan.contains("Bearer mdb_…cdef"), "the plan shows the token masked:\n{plan}");
    assert!(!plan.contains(&format!("Bearer {token}")), "the plan never shows the whole token");
    assert!(!home.path().join(".cursor/mcp.json").exists(), "nothing before the yes");
    t.type_line("y");
    let done = t.wait_for("WIZARD-EXIT=");
    assert!(done.contains("WIZARD-EXIT=0") && done.contains("Done: restart the clients"), "{done}");
    assert!(done.contains("no mentisdbd answers at http://127.0.0.1:9471/mcp"), "the end says the daemon must run:\n{done}");
    let cursor: Value = serde_json::from_str(&std::fs::read_to_string(home.path().join(".cursor/mcp.json")).unwrap()).unwrap();
    assert_eq!(cursor["mcpServers"]["mentisdb"]["url"], "http://127.0.0.1:9471/mcp");
    assert_eq!(cursor["mcpServers"]["mentisdb"]["headers"]["Authorization"], format!("Bearer {token}"));
    let opencode: Value = serde_json::from_str(&std::fs::read_to_string(home.path().join(".config/opencode/opencode.json")).unwrap()).unwrap();
    assert_eq!(opencode["mcp"]["mentisdb"]["type"], "remote");
    assert!(!home.path().join(".claude.json").exists(), "clients not chosen are left alone");
}

#[test]
fn the_wizard_writes_nothing_without_a_yes_and_asks_again_after_a_wrong_answer() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".codex")).unwrap();
    let t = Tmux::start(&wizard_command(home.path()));
    t.wait_for("Clients to set up");
    t.type_line("codex, gemini");
    t.wait_for("MCP URL");
    t.type_line("http://10.0.0.5:9471/mcp");
    t.wait_for("Bearer token");
    t.type_line("");
    let plan = t.wait_for("Write these files? [y/N]");
    assert!(plan.contains("config.toml") && plan.contains(".gemini/settings.json") && plan.contains("http://10.0.0.5:9471/mcp"), "{plan}");
    t.type_line("n");
    let done = t.wait_for("WIZARD-EXIT=");
    assert!(done.contains("Nothing was written.") && done.contains("WIZARD-EXIT=0"), "{done}");
    assert!(!home.path().join(".codex/config.toml").exists() && !home.path().join(".gemini").exists());
    drop(t);

    // A wrong answer is explained and asked again; a typo is not the end.
    let t = Tmux::start(&wizard_command(home.path()));
    t.wait_for("Clients to set up");
    t.type_line("emacs");
    let again = t.wait_for("try again");
    assert!(again.contains("'emacs' is not a client") && again.matches("Clients to set up").count() == 2, "{again}");
    t.type_line("codex");
    t.wait_for("MCP URL");
    t.type_line("127.0.0.1:9471/mcp");
    t.wait_for("is not an http:// or https:// URL; try again");
    t.type_line("");
    t.wait_for("Bearer token");
    t.type_line("");
    t.wait_for("Write these files? [y/N]");
    t.type_line("n");
    let done = t.wait_for("WIZARD-EXIT=");
    assert!(done.contains("Nothing was written.") && done.contains("WIZARD-EXIT=0"), "{done}");
}

/// Without `--url`, setup points the client at the data directory's running
/// daemon (its lock file names the MCP port) and says whether it answers.
#[test]
fn setup_takes_the_url_of_the_running_daemon_and_says_whether_it_answers() {
    let home = tempfile::tempdir().unwrap();
    let (ok, _, err) = setup(home.path(), &["cursor", "--dry-run"]);
    assert!(ok && err.contains("no mentisdbd answers at http://127.0.0.1:"), "{err}");
    let daemon = common::Daemon::start(&home.path().join("data"), &[], &[]);
    let (ok, diff, err) = setup(home.path(), &["cursor", "--dry-run"]);
    let url = format!("{}/mcp", daemon.mcp);
    assert!(ok && diff.contains(&url), "{diff}");
    assert!(err.contains(&format!("a mentisdbd answers at {url}")), "{err}");
}
