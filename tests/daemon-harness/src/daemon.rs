//! Starting, reading and stopping the `mentisdbd` child process.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Path of the program `name` (`mentisdbd`, or its MentisDB 0.10 name
/// `mentisdb`): `$MENTISDB_BIN` for `mentisdbd` when set, else the binary in
/// the test executable's profile directory.
pub fn binary(name: &str) -> PathBuf {
    if name == "mentisdbd" {
        if let Some(p) = std::env::var_os("MENTISDB_BIN") {
            return PathBuf::from(p);
        }
    }
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test> -> target/<profile>/<name>
    let profile_dir = exe.parent().and_then(Path::parent).expect("target/<profile>");
    let bin = profile_dir.join(name);
    assert!(bin.exists(), "{} is missing: run `cargo build -p mentisdb-native --bins` first (or set MENTISDB_BIN)", bin.display());
    bin
}

/// The program `name` over `dir` with no `MENTISDB_*` variable of the
/// caller's, free ports, quiet logs, then `extra_env` and `args`; stdout and
/// stderr piped, stdin closed.
pub fn command(name: &str, dir: &Path, extra_env: &[(&str, &str)], args: &[&str]) -> Command {
    let mut cmd = Command::new(binary(name));
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

/// A fresh data directory (`<tmp>/data`) inside a temp root, so a test can
/// check that nothing was written next to it.
pub fn data_dir() -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().expect("temp dir");
    let dir = root.path().join("data");
    (root, dir)
}

/// A running `mentisdbd` child, killed (SIGKILL) on drop.
pub struct Daemon {
    /// The process.
    pub child: Child,
    /// `http://127.0.0.1:<port>` of the REST server.
    pub rest: String,
    /// `http://127.0.0.1:<port>` of the MCP server.
    pub mcp: String,
    /// The startup line printed on stdout.
    pub startup_line: String,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Daemon {
    /// `mentisdbd` over `dir` (see [`command`]); waits for its startup line.
    pub fn start(dir: &Path, extra_env: &[(&str, &str)], args: &[&str]) -> Daemon {
        Daemon::spawn(command("mentisdbd", dir, extra_env, args))
    }

    /// [`Daemon::start`] under the file-creation mask `umask` (e.g. `"022"`),
    /// through `sh -c 'umask ...; exec mentisdbd ...'`.
    pub fn start_under_umask(umask: &str, dir: &Path, extra_env: &[(&str, &str)], args: &[&str]) -> Daemon {
        Daemon::start_wrapped(&["sh", "-c", &format!("umask {umask} && exec \"$0\" \"$@\"")], dir, extra_env, args)
    }

    /// [`Daemon::start`] run by `wrapper` (a program and its arguments,
    /// then `mentisdbd` and its own: e.g. `prlimit --nofile=400:400 --`),
    /// with the same environment.
    pub fn start_wrapped(wrapper: &[&str], dir: &Path, extra_env: &[(&str, &str)], args: &[&str]) -> Daemon {
        let plain = command("mentisdbd", dir, extra_env, args);
        let mut cmd = Command::new(wrapper[0]);
        cmd.args(&wrapper[1..]).arg(plain.get_program()).args(plain.get_args());
        for (k, v) in plain.get_envs() {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        Daemon::spawn(cmd)
    }

    /// Starts `cmd` (a `mentisdbd` command with stdout and stderr piped) and
    /// waits for its startup line; panics with its stderr if another line comes.
    pub fn spawn(mut cmd: Command) -> Daemon {
        let mut child = cmd.spawn().expect("spawn mentisdbd");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let err = child.stderr.take().expect("stderr piped");
        let sink = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                sink.lock().unwrap_or_else(|e| e.into_inner()).push(line);
            }
        });
        let mut out = BufReader::new(child.stdout.take().expect("stdout piped"));
        let mut line = String::new();
        out.read_line(&mut line).expect("startup line");
        if !line.starts_with("mentisdbd listening ") {
            let _ = child.kill();
            let _ = child.wait();
            std::thread::sleep(Duration::from_millis(100));
            panic!("unexpected startup line {line:?}; stderr: {}", stderr.lock().unwrap_or_else(|e| e.into_inner()).join("\n"));
        }
        let field = |name: &str| line.split_whitespace().find_map(|w| w.strip_prefix(name)).map(|a| format!("http://{a}")).expect("address in startup line");
        let (rest, mcp) = (field("rest="), field("mcp="));
        std::thread::spawn(move || {
            let mut rest = String::new();
            let _ = out.read_to_string(&mut rest);
        });
        Daemon { child, rest, mcp, startup_line: line.trim().to_string(), stderr }
    }

    /// Everything the daemon wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap_or_else(|e| e.into_inner()).join("\n")
    }

    /// [`Daemon::stderr`] after a short pause, for lines logged just now.
    pub fn logs(&self) -> String {
        std::thread::sleep(Duration::from_millis(100));
        self.stderr()
    }

    /// The OS process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Resident set size of the daemon in KiB (`VmRSS` of /proc/<pid>/status).
    pub fn rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).ok()?;
        status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }

    /// Number of chains refused at startup, from the startup line.
    pub fn refused_at_startup(&self) -> usize {
        self.startup_line.split_whitespace().find_map(|w| w.strip_prefix("refused=")).and_then(|n| n.parse().ok()).expect("refused=N in the startup line")
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
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
