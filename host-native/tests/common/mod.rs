//! The test harness shared by the daemon test files: the real `mentisdbd`
//! binary as a child process on free loopback ports.
#![allow(dead_code)]

use reqwest::blocking::Client;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A running `mentisdbd` child process, killed on drop.
pub struct Daemon {
    pub child: Child,
    pub rest: String,
    pub mcp: String,
    stderr: mpsc::Receiver<String>,
}

/// `mentisdbd` with no `MENTISDB_*` variable of ours, free ports and `dir`.
pub fn command(dir: &Path, extra_env: &[(&str, &str)], args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mentisdbd"));
    for (k, _) in std::env::vars() {
        if k.starts_with("MENTISDB_") {
            cmd.env_remove(k);
        }
    }
    cmd.env("MENTISDB_DIR", dir).env("MENTISDB_REST_PORT", "0").env("MENTISDB_MCP_PORT", "0").env("MENTISDB_VERBOSE", "false");
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    cmd.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd
}

impl Daemon {
    pub fn start(dir: &Path, extra_env: &[(&str, &str)], args: &[&str]) -> Daemon {
        let mut child = command(dir, extra_env, args).spawn().expect("spawn mentisdbd");
        let (tx, stderr) = mpsc::channel();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).expect("startup line");
        assert!(line.starts_with("mentisdbd listening "), "unexpected startup line {line:?}");
        let field = |name: &str| line.split_whitespace().find_map(|w| w.strip_prefix(name)).map(|a| format!("http://{a}")).expect("address in startup line");
        let (rest, mcp) = (field("rest="), field("mcp="));
        std::thread::spawn(move || {
            let mut sink = String::new();
            let _ = out.read_to_string(&mut sink);
        });
        Daemon { child, rest, mcp, stderr }
    }

    pub fn logs(&self) -> String {
        std::thread::sleep(Duration::from_millis(100));
        self.stderr.try_iter().collect::<Vec<_>>().join("\n")
    }

    /// Power loss as far as the daemon can tell: SIGKILL, no shutdown path.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn client() -> Client {
    Client::builder().timeout(Duration::from_secs(30)).build().unwrap()
}

