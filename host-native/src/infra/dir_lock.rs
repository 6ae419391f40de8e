//! One daemon per data directory. A daemon holds an exclusive OS lock on
//! `<dir>/mentisdbd.lock` (`File::try_lock`: `flock` on Unix, `LockFileEx`
//! on Windows) from before it opens the directory until it exits, however
//! it exits (the OS drops the lock with the process). A second daemon on
//! the same directory is refused with [`DirLock::acquire`]'s one-line
//! reason before it touches a file (opening removes stale temp files, which
//! would be the first daemon's writes in flight).
//!
//! The file's text says who holds it, one `key=value` per line: `pid`,
//! then once the listeners are bound `rest`, `mcp` and `scheme`
//! ([`DirLock::announce`]). `mentisdb --mode stdio` reads it
//! ([`running_daemon`]) to reach the directory's daemon instead of opening
//! the directory a second time.

use mentisdb_fs_storage::private::{create_private_dir, private_file};
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// The lock file's name inside the data directory.
pub const LOCK_FILE: &str = mentisdb_fs_storage::DAEMON_LOCK_FILE;

/// The held lock; dropping it (or exiting) releases the directory.
#[derive(Debug)]
pub struct DirLock {
    file: File,
    path: PathBuf,
}

/// Why the data directory could not be locked: one line, naming the
/// daemon that holds it when another does.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DirLockError {
    /// The data directory does not exist and cannot be created.
    #[error("cannot create the data directory {}: {source}", dir.display())]
    CreateDir { dir: PathBuf, source: std::io::Error },
    /// The lock file cannot be opened.
    #[error("cannot open the lock file {}: {source}", path.display())]
    Open { path: PathBuf, source: std::io::Error },
    /// Another daemon holds the directory.
    #[error("data directory {} is in use by {}; stop it or use another MENTISDB_DIR (--dir)", dir.display(), holder.describe())]
    InUse { dir: PathBuf, holder: Holder },
    /// The lock cannot be taken for another reason.
    #[error("cannot lock the data directory {} ({}): {source}", dir.display(), path.display())]
    Lock { dir: PathBuf, path: PathBuf, source: std::io::Error },
    /// The lock is held but its file cannot say who holds it.
    #[error("cannot write the lock file {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
}

/// Who holds a directory's lock, as its file says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Holder {
    pub pid: Option<u32>,
    pub rest: Option<SocketAddr>,
    pub mcp: Option<SocketAddr>,
    pub scheme: Option<String>,
}

impl Holder {
    /// The base URL of the holder's REST listener as a local client reaches it.
    pub fn rest_base(&self) -> Option<String> {
        self.rest.map(|a| self.base(a))
    }

    /// The base URL of the holder's MCP listener as a local client reaches it.
    pub fn mcp_base(&self) -> Option<String> {
        self.mcp.map(|a| self.base(a))
    }

    /// The holder as a refusal names it: its pid, and where its REST API is when known.
    fn describe(&self) -> String {
        match (self.pid, self.rest) {
            (Some(pid), Some(rest)) => format!("mentisdbd pid {pid} (REST at {rest})"),
            (Some(pid), None) => format!("mentisdbd pid {pid}"),
            _ => "another mentisdbd".to_string(),
        }
    }

    /// `scheme://addr`, a wildcard bind reached on loopback.
    fn base(&self, mut addr: SocketAddr) -> String {
        if addr.ip().is_unspecified() {
            addr.set_ip(if addr.is_ipv4() { std::net::Ipv4Addr::LOCALHOST.into() } else { std::net::Ipv6Addr::LOCALHOST.into() });
        }
        format!("{}://{addr}", self.scheme.as_deref().unwrap_or("http"))
    }
}

fn parse(text: &str) -> Holder {
    let mut h = Holder::default();
    for line in text.lines() {
        match line.split_once('=') {
            Some(("pid", v)) => h.pid = v.trim().parse().ok(),
            Some(("rest", v)) => h.rest = v.trim().parse().ok(),
            Some(("mcp", v)) => h.mcp = v.trim().parse().ok(),
            Some(("scheme", v)) => h.scheme = Some(v.trim().to_string()),
            _ => {}
        }
    }
    h
}

fn open(dir: &Path) -> std::io::Result<File> {
    private_file(OpenOptions::new().read(true).write(true).create(true).truncate(false)).open(dir.join(LOCK_FILE))
}

impl DirLock {
    /// Creates `dir` if needed and locks it, or says in one line who holds it.
    pub fn acquire(dir: &Path) -> Result<DirLock, DirLockError> {
        create_private_dir(dir, true).map_err(|source| DirLockError::CreateDir { dir: dir.to_path_buf(), source })?;
        let path = dir.join(LOCK_FILE);
        let mut file = open(dir).map_err(|source| DirLockError::Open { path: path.clone(), source })?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                return Err(DirLockError::InUse { dir: dir.to_path_buf(), holder: parse(&text) });
            }
            Err(TryLockError::Error(source)) => return Err(DirLockError::Lock { dir: dir.to_path_buf(), path, source }),
        }
        let lock = DirLock { file, path };
        lock.write(&format!("pid={}\n", std::process::id())).map_err(|source| DirLockError::Write { path: lock.path.clone(), source })?;
        Ok(lock)
    }

    fn write(&self, text: &str) -> std::io::Result<()> {
        let mut f = &self.file;
        f.set_len(0)?;
        f.rewind()?;
        f.write_all(text.as_bytes())?;
        f.flush()
    }

    /// Records where the daemon listens, for `mentisdb --mode stdio`.
    pub fn announce(&self, rest: SocketAddr, mcp: SocketAddr, scheme: &str) -> std::io::Result<()> {
        self.write(&format!("pid={}\nrest={rest}\nmcp={mcp}\nscheme={scheme}\n", std::process::id()))
    }
}

/// The daemon serving `dir`, if one holds its lock. Probes with a shared
/// lock taken and released at once (a daemon starting in that instant is
/// refused and its starter retries).
pub fn running_daemon(dir: &Path) -> std::io::Result<Option<Holder>> {
    let mut file = match OpenOptions::new().read(true).open(dir.join(LOCK_FILE)) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    match file.try_lock_shared() {
        Ok(()) => Ok(None),
        Err(TryLockError::WouldBlock) => {
            let mut text = String::new();
            file.read_to_string(&mut text)?;
            Ok(Some(parse(&text)))
        }
        Err(TryLockError::Error(e)) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_one_directory_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(running_daemon(dir.path()).unwrap(), None);
        let first = DirLock::acquire(dir.path()).unwrap();
        first.announce("127.0.0.1:1".parse().unwrap(), "127.0.0.1:2".parse().unwrap(), "http").unwrap();
        let err = DirLock::acquire(dir.path()).unwrap_err().to_string();
        assert!(err.contains("in use by mentisdbd pid") && err.contains("127.0.0.1:1") && !err.contains('\n'), "{err}");
        let holder = running_daemon(dir.path()).unwrap().expect("held");
        assert_eq!(holder.mcp, Some("127.0.0.1:2".parse().unwrap()));
        assert_eq!(holder.pid, Some(std::process::id()));
        drop(first);
        assert_eq!(running_daemon(dir.path()).unwrap(), None);
        DirLock::acquire(dir.path()).expect("free again");
    }
}
