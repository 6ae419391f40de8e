//! The environment as MentisDB 0.10 reads it: `./.env` and `<dir>/.env`
//! loaded before the command line is parsed, 0.10's names of our settings,
//! and the start-up warning naming every `MENTISDB_*` variable nothing reads.

use std::path::PathBuf;

/// Why the environment files could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EnvError {
    /// A `.env` file cannot be read or parsed (the parser's message on one line).
    #[error("cannot read {}: {}", path.display(), source.to_string().split_whitespace().collect::<Vec<_>>().join(" "))]
    File { path: PathBuf, source: dotenvy::Error },
    /// A `.env` file another local user could have written: it could open
    /// the daemon to web pages (`MENTISDB_ALLOWED_ORIGINS`) or plant a token.
    #[error("refusing {}: {why}; a .env sets the daemon's security settings, so it must belong to you or root and no other user may write it (fix its owner or mode, or start from another directory)", path.display())]
    NotPrivate { path: PathBuf, why: String },
}

/// MentisDB 0.10's names of our settings: `(0.10 name, our name)`. When
/// the 0.10 name is set it wins (0.10's own precedence); ours keep working.
pub const ENV_ALIASES: &[(&str, &str)] = &[("MENTISDB_DEFAULT_CHAIN_KEY", "MENTISDB_DEFAULT_KEY"), ("MENTISDB_STORAGE_ADAPTER", "MENTISDB_DEFAULT_STORAGE_ADAPTER")];

/// Reads the configuration files into the environment as MentisDB 0.10
/// does, before the command line is parsed: `./.env`, then `<dir>/.env`
/// where `<dir>` is `--dir` (from `args`), else `MENTISDB_DIR` (possibly
/// just set by `./.env`), else the default data directory. A variable
/// already set is never overridden (the real environment wins, then
/// `./.env`). Then [`ENV_ALIASES`] are applied. Missing files are fine; a
/// file that cannot be read or parsed is an error naming it and the line,
/// and so is one owned by another user (root aside) or writable by others
/// (on Unix).
/// Returns the files read. Call it before any thread starts (it sets
/// environment variables).
pub fn load_environment(args: &[std::ffi::OsString]) -> Result<Vec<PathBuf>, EnvError> {
    let mut loaded = Vec::new();
    let mut load = |path: PathBuf| -> Result<(), EnvError> {
        if loaded.contains(&path) || !path.is_file() {
            return Ok(());
        }
        // Opened once: the file checked is the file read.
        let file = match std::fs::File::open(&path) {
            Ok(f) => f,
            Err(e) => return Err(EnvError::File { path, source: dotenvy::Error::Io(e) }),
        };
        if let Some(why) = not_private(&file) {
            return Err(EnvError::NotPrivate { path, why });
        }
        if let Err(source) = dotenvy::from_read(file) {
            return Err(EnvError::File { path, source });
        }
        loaded.push(path);
        Ok(())
    };
    load(PathBuf::from(".env"))?;
    let dir = dir_flag(args).or_else(|| std::env::var_os("MENTISDB_DIR").filter(|d| !d.is_empty()).map(PathBuf::from)).or_else(default_data_dir);
    if let Some(dir) = dir {
        load(dir.join(".env"))?;
    }
    for (theirs, ours) in ENV_ALIASES {
        if let Some(value) = std::env::var_os(theirs).filter(|v| !v.is_empty()) {
            std::env::set_var(ours, value);
        }
    }
    Ok(loaded)
}

/// Why an opened `.env` file may not be trusted: it belongs to another
/// user than this one or root (a shared or world-writable start directory,
/// a checkout someone else made), or other users may write it. Writable by
/// its group is fine for a user's private group (gid = uid, where a umask
/// of 002 is usual), not for a group others share (`staff`, `users`).
/// `None` when it is private, and on platforms without Unix owners.
fn not_private(file: &std::fs::File) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = match file.metadata() {
            Ok(m) => m,
            Err(e) => return Some(format!("cannot read its owner ({e})")),
        };
        let me = rustix::process::geteuid().as_raw();
        if meta.uid() != me && meta.uid() != 0 {
            return Some(format!("it belongs to uid {}, not to this user (uid {me}) or root", meta.uid()));
        }
        let group_may_write = meta.mode() & 0o020 != 0 && meta.gid() != me;
        if meta.mode() & 0o002 != 0 || group_may_write {
            return Some(format!("other users may write it (mode {:o})", meta.mode() & 0o777));
        }
    }
    #[cfg(not(unix))]
    let _ = file;
    None
}

/// The value of `--dir <path>` or `--dir=<path>` in `args`, if given.
fn dir_flag(args: &[std::ffi::OsString]) -> Option<PathBuf> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let s = a.to_string_lossy();
        if s == "--dir" {
            return it.next().map(PathBuf::from);
        }
        if let Some(v) = s.strip_prefix("--dir=") {
            return Some(PathBuf::from(v));
        }
    }
    None
}

/// `$HOME/.mentisdb`, when `HOME` is set.
pub(super) fn default_data_dir() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".mentisdb"))
}

/// MentisDB 0.10's settings this daemon does not have (its own features:
/// dashboard, sounds, update checks, HNSW and fsync tuning). Named apart
/// from unknown ones in the start-up warning.
pub const REFERENCE_ONLY_ENV: &[&str] = &[
    "MENTISDB_AUTO_EDGE_K",
    "MENTISDB_AUTO_EDGE_THRESHOLD",
    "MENTISDB_AUTO_FLUSH",
    "MENTISDB_DASHBOARD_ALLOWED_HOSTS",
    "MENTISDB_DASHBOARD_PIN",
    "MENTISDB_DASHBOARD_PORT",
    "MENTISDB_EMBEDDINGS",
    "MENTISDB_FSYNC",
    "MENTISDB_GROUP_COMMIT_MS",
    "MENTISDB_HNSW_BACKGROUND_BUILD",
    "MENTISDB_HNSW_EF_CONSTRUCTION",
    "MENTISDB_HNSW_EF_SEARCH",
    "MENTISDB_HNSW_THRESHOLD",
    "MENTISDB_MCP_BOOTSTRAP_INSTRUCTIONS",
    "MENTISDB_STARTUP_SOUND",
    "MENTISDB_THOUGHT_SOUNDS",
    "MENTISDB_UPDATE_CHECK",
    "MENTISDB_UPDATE_REPO",
];

/// The one start-up warning line naming every `MENTISDB_*` variable in
/// `set` that `command` (with its subcommands) does not read, or `None`.
pub fn unread_env_warning(command: &clap::Command, set: impl IntoIterator<Item = String>) -> Option<String> {
    fn read_by(cmd: &clap::Command, out: &mut Vec<String>) {
        out.extend(cmd.get_arguments().filter_map(|a| a.get_env()).map(|e| e.to_string_lossy().into_owned()));
        for sub in cmd.get_subcommands() {
            read_by(sub, out);
        }
    }
    let mut known = Vec::new();
    read_by(command, &mut known);
    known.extend(ENV_ALIASES.iter().map(|(theirs, _)| theirs.to_string()));
    let mut unread: Vec<String> = set.into_iter().filter(|k| k.starts_with("MENTISDB_") && !known.contains(k)).collect();
    if unread.is_empty() {
        return None;
    }
    unread.sort();
    let named: Vec<String> = unread.iter().map(|k| if REFERENCE_ONLY_ENV.contains(&k.as_str()) { format!("{k} (a MentisDB 0.10 setting this daemon does not have)") } else { format!("{k} (unknown: misspelled?)") }).collect();
    Some(format!("ignored environment variables: {}; `mentisdbd --help` lists the settings", named.join(", ")))
}
