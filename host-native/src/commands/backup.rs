//! `mentisdbd backup` and `mentisdbd restore`: the archive format and checks
//! are in [`crate::infra::backup`]; this file picks where the data is, shows
//! progress on stderr and writes files durably.
//!
//! Backup goes where the memory is, as the shell commands do
//! ([`crate::target::Target`]): `--url`'s daemon or the data directory's
//! running daemon (`GET /v1/admin/backup`, streamed to the file), else the
//! directory or database opened here. The archive is written to a temporary
//! file next to FILE, fsynced, checked against its manifest, and only then
//! renamed to FILE.

use crate::config::{Config, ConfigError};
use crate::infra::backup::{self, read_archive, restore_into, ArchiveError};
use crate::infra::dir_lock::DirLockError;
use crate::target::{Target, TargetError};
use indicatif::{ProgressBar, ProgressStyle};
use mentisdb_core::{Storage, StorageError};
use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Why `backup`, `restore` or `verify`'s snapshot failed; one line each.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BackupCommandError {
    /// FILE exists and `--force` was not given.
    #[error("{} exists; pass --force to replace it", .0.display())]
    Exists(PathBuf),
    /// No temporary file can be made next to FILE.
    #[error("cannot create a file in {}: {source}", dir.display())]
    CreateIn { dir: PathBuf, source: std::io::Error },
    /// No temporary file can be made for a snapshot.
    #[error("cannot create a temporary file: {0}")]
    TempFile(std::io::Error),
    /// The archive could not be written out.
    #[error("writing the backup: {0}")]
    WriteBackup(std::io::Error),
    /// FILE could not be written.
    #[error("writing {}: {source}", path.display())]
    WriteFile { path: PathBuf, source: std::io::Error },
    /// FILE could not be synced.
    #[error("syncing {}: {source}", path.display())]
    Sync { path: PathBuf, source: std::io::Error },
    /// The finished archive could not take FILE's name.
    #[error("cannot name the backup {}: {source}", path.display())]
    Name { path: PathBuf, source: std::io::Error },
    /// The archive just written does not match its manifest.
    #[error("the backup just written does not match its manifest: {0}")]
    NotAsWritten(mentisdb_core::backup::BackupError),
    /// A temporary snapshot could not be read back.
    #[error("{0}")]
    Rewind(std::io::Error),
    /// An archive file cannot be opened.
    #[error("cannot open {}: {source}", path.display())]
    Open { path: PathBuf, source: std::io::Error },
    /// `restore`'s archive does not exist.
    #[error("cannot open {}: no such file", .0.display())]
    NoArchive(PathBuf),
    /// An archive file is refused, said of its path.
    #[error("{}: {source}", path.display())]
    InArchive { path: PathBuf, source: ArchiveError },
    /// The snapshot of the running daemon is refused.
    #[error("the snapshot: {0}")]
    InSnapshot(ArchiveError),
    /// The archive, or the target of a restore, is refused.
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    /// `GET /v1/admin/backup` got no answer.
    #[error("{url}: {source}")]
    Request { url: String, source: ureq::Error },
    /// The daemon refused the backup: its status and message.
    #[error("HTTP {status}: {message}")]
    Refused { status: u16, message: String },
    /// The streamed backup broke off.
    #[error("{url}: the backup was cut off: {source}")]
    CutOff { url: String, source: std::io::Error },
    /// `verify` could not take a snapshot from the running daemon.
    #[error("cannot take a snapshot from the running daemon ({0}); verifying while it runs needs a token that is admin on every chain (MENTISDB_API_TOKEN) when tokens are on")]
    NoSnapshot(Box<BackupCommandError>),
    /// A daemon holds the directory a restore would write.
    #[error("a daemon (pid {}) holds {}: stop it before restoring into it", pid.map_or("?".into(), |p| p.to_string()), dir.display())]
    DaemonHolds { pid: Option<u32>, dir: PathBuf },
    /// The restore's target holds data and `--force` was not given.
    #[error("{target} already holds data ({count} objects, e.g. {example}); pass --force to replace it")]
    HoldsData { target: String, count: usize, example: String },
    /// The directory or database of a restore cannot be opened.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The directory of a restore cannot be locked.
    #[error(transparent)]
    Locked(#[from] DirLockError),
    /// No data directory is known.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The daemon or store to back up cannot be reached.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// A progress bar's template does not parse.
    #[error("{0}")]
    ProgressTemplate(#[from] indicatif::style::TemplateError),
}

/// `mentisdbd backup` arguments.
#[derive(Debug, clap::Args)]
pub struct BackupArgs {
    /// The archive to write (.tar.gz).
    #[arg(long = "to", short = 'o', visible_alias = "output", value_name = "FILE")]
    pub to: std::path::PathBuf,
    /// A daemon's REST base URL to back up [default: the data directory's
    /// daemon, else the directory (or --storage-url database) itself].
    #[arg(long, env = "MENTISDB_URL")]
    pub url: Option<String>,
    /// Bearer token (admin on all chains) for the daemon [default: MENTISDB_API_TOKEN].
    #[arg(long)]
    pub token: Option<String>,
    /// Replace FILE when it exists.
    #[arg(long)]
    pub force: bool,
}

/// `mentisdbd restore` arguments.
#[derive(Debug, clap::Args)]
pub struct RestoreArgs {
    /// The archive made by `mentisdbd backup` or `GET /v1/admin/backup`.
    pub archive: std::path::PathBuf,
    /// The data directory to restore into [default: MENTISDB_DIR / --dir, or
    /// the database of --storage-url]. No daemon may hold it.
    #[arg(long, value_name = "DIR")]
    pub to: Option<std::path::PathBuf>,
    /// Replace the memory the target already holds (its chains, sidecars,
    /// skill registry and identity; other files are left alone).
    #[arg(long, visible_alias = "overwrite")]
    pub force: bool,
}

fn bar(len: Option<u64>, template: &str) -> Result<ProgressBar, BackupCommandError> {
    let bar = len.map_or_else(ProgressBar::new_spinner, ProgressBar::new);
    bar.set_style(ProgressStyle::with_template(template)?);
    bar.enable_steady_tick(Duration::from_millis(200));
    Ok(bar)
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// `mentisdbd backup --to FILE`.
pub fn backup(config: &Config, args: &BackupArgs) -> Result<(), BackupCommandError> {
    let to = &args.to;
    if to.exists() && !args.force {
        return Err(BackupCommandError::Exists(to.clone()));
    }
    let parent = match to.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let mut temp = tempfile::Builder::new().prefix(".mentisdb-backup-").suffix(".partial").tempfile_in(&parent).map_err(|source| BackupCommandError::CreateIn { dir: parent.clone(), source })?;
    let started = Instant::now();
    let target = Target::resolve(config, args.url.as_deref(), args.token.as_deref())?;
    let source = match &target {
        Target::Rest { base, token, .. } => {
            download(base, token.as_deref(), temp.as_file_mut())?;
            base.clone()
        }
        Target::Local(store) => {
            let bar = bar(Some(0), "{spinner} {bar:30} {pos}/{len} chains and registries copied, {msg} [{elapsed}]")?;
            let mut out = BufWriter::new(temp.as_file_mut());
            let mut data = 0u64;
            let copying = Instant::now();
            backup::write_archive(&store.db, &mut out, |o| {
                data += o.bytes.len() as u64;
                bar.set_length(o.steps as u64);
                bar.set_position(o.step.min(o.steps) as u64);
                bar.set_message(format!("{} of data ({}/s)", mib(data), mib((data as f64 / copying.elapsed().as_secs_f64().max(1e-3)) as u64)));
            })
            .map_err(BackupCommandError::WriteBackup)?;
            out.flush().map_err(|source| BackupCommandError::WriteFile { path: to.clone(), source })?;
            drop(out);
            bar.finish_and_clear();
            store.store.clone()
        }
    };
    temp.as_file().sync_all().map_err(|source| BackupCommandError::Sync { path: to.clone(), source })?;
    // The archive is read back and every object checked against the manifest before it takes FILE's name.
    let archive = read_with_progress(temp.path(), "checking")?;
    mentisdb_core::backup::check_objects(&archive.manifest, &archive.objects).map_err(BackupCommandError::NotAsWritten)?;
    let size = temp.as_file().metadata().map(|m| m.len()).unwrap_or(0);
    temp.persist(to).map_err(|e| BackupCommandError::Name { path: to.clone(), source: e.error })?;
    if let Ok(dir) = File::open(&parent) {
        let _ = dir.sync_all();
    }
    let m = &archive.manifest;
    let data: u64 = m.objects.iter().map(|o| o.bytes).sum();
    let thoughts: u64 = m.chains.iter().map(|c| c.thought_count).sum();
    println!("backed up {} chains ({thoughts} thoughts), {} objects, {} of data from {source} to {} ({}) in {:.1}s", m.chains.len(), m.objects.len(), mib(data), to.display(), mib(size), started.elapsed().as_secs_f64());
    for r in &m.refused {
        println!("warning: {} was refused by the daemon and is copied as it is: {}", r.object, r.reason);
    }
    Ok(())
}

/// `mentisdbd verify` while a daemon holds the directory: a consistent
/// snapshot of it (`GET /v1/admin/backup`, as `backup` takes one) into a
/// temporary file, checked against its manifest, and every chain opened and
/// verified from it in memory (as `restore` checks a backup). Returns the
/// report lines and whether every chain verified.
pub fn verify_snapshot(base: &str, token: Option<&str>) -> Result<(Vec<String>, bool), BackupCommandError> {
    let mut temp = tempfile::tempfile().map_err(BackupCommandError::TempFile)?;
    download(base, token, &mut temp).map_err(|e| BackupCommandError::NoSnapshot(Box::new(e)))?;
    std::io::Seek::rewind(&mut temp).map_err(BackupCommandError::Rewind)?;
    let archive = read_archive(BufReader::new(temp)).map_err(BackupCommandError::InSnapshot)?;
    let spinner = bar(None, "{spinner} verifying every chain of the snapshot [{elapsed}]")?;
    let checked = backup::check(archive);
    spinner.finish_and_clear();
    let checked = checked?;
    let mut lines = vec![format!("ok      a snapshot of the running daemon at {base}: {} chains ({} thoughts) and the skill registry verified", checked.chains, checked.thoughts)];
    lines.extend(checked.refused.iter().map(|r| format!("REFUSED {}: {}", r.object, r.reason)));
    lines.extend(checked.warnings.iter().map(|w| format!("warning {w}")));
    Ok((lines, checked.refused.is_empty()))
}

/// Streams `GET /v1/admin/backup` of the daemon at `base` into `file`.
fn download(base: &str, token: Option<&str>, file: &mut File) -> Result<(), BackupCommandError> {
    let url = format!("{base}{}", crate::http::routes::BACKUP_PATH);
    // No overall timeout: a large backup takes as long as it takes.
    let agent: ureq::Agent = ureq::Agent::config_builder().timeout_connect(Some(Duration::from_secs(10))).timeout_recv_body(Some(Duration::from_secs(300))).http_status_as_error(false).build().into();
    let mut req = agent.get(&url);
    if let Some(t) = token {
        req = req.header("Authorization", &format!("Bearer {t}"));
    }
    let mut reply = req.call().map_err(|source| BackupCommandError::Request { url: url.clone(), source })?;
    let status = reply.status();
    if !status.is_success() {
        let text = reply.body_mut().read_to_string().unwrap_or_default();
        let msg = serde_json::from_str::<serde_json::Value>(&text).ok().and_then(|v| v["error"].as_str().map(str::to_string)).unwrap_or(text);
        return Err(BackupCommandError::Refused { status: status.as_u16(), message: msg });
    }
    let bar = bar(None, "{spinner} received {bytes} ({bytes_per_sec}) [{elapsed}]")?;
    let mut body = bar.wrap_read(reply.body_mut().as_reader());
    let mut out = BufWriter::new(file);
    std::io::copy(&mut body, &mut out).map_err(|source| BackupCommandError::CutOff { url: url.clone(), source })?;
    out.flush().map_err(BackupCommandError::WriteBackup)?;
    bar.finish_and_clear();
    Ok(())
}

/// Reads an archive with a progress bar over its compressed bytes.
fn read_with_progress(path: &Path, what: &str) -> Result<backup::ReadArchive, BackupCommandError> {
    let file = File::open(path).map_err(|source| BackupCommandError::Open { path: path.to_path_buf(), source })?;
    let len = file.metadata().map(|m| m.len()).ok();
    let bar = bar(len, &format!("{{spinner}} {what} {{bytes}}/{{total_bytes}} ({{bytes_per_sec}}) [{{elapsed}}]"))?;
    let read = read_archive(bar.wrap_read(BufReader::new(file)));
    bar.finish_and_clear();
    read.map_err(|source| BackupCommandError::InArchive { path: path.to_path_buf(), source })
}

/// `mentisdbd restore ARCHIVE [--to DIR] [--force]`.
pub fn restore(config: &Config, args: &RestoreArgs) -> Result<(), BackupCommandError> {
    let started = Instant::now();
    if !args.archive.is_file() {
        return Err(BackupCommandError::NoArchive(args.archive.clone()));
    }
    // The target first (locked, and refused when it holds data), so a long
    // check is not wasted; nothing is written until the backup passed it.
    let mut lock = None;
    let (storage, target): (Box<dyn Storage>, String) = match (&args.to, &config.storage_url) {
        (None, Some(url)) => {
            let pg = mentisdb_pg_storage::PgStorage::connect(url.secret())?;
            let at = pg.database().to_string();
            (Box::new(pg), at)
        }
        (to, _) => {
            let dir = match to {
                Some(d) => d.clone(),
                None => config.data_dir()?,
            };
            if let Ok(Some(holder)) = crate::infra::dir_lock::running_daemon(&dir) {
                return Err(BackupCommandError::DaemonHolds { pid: holder.pid, dir });
            }
            lock = Some(crate::infra::dir_lock::DirLock::acquire(&dir)?);
            let storage = mentisdb_fs_storage::FsStorage::open(&dir)?;
            (Box::new(storage), dir.display().to_string())
        }
    };
    let existing = backup::existing_objects(storage.as_ref())?;
    if !existing.is_empty() && !args.force {
        return Err(BackupCommandError::HoldsData { target, count: existing.len(), example: existing[0].clone() });
    }
    let archive = read_with_progress(&args.archive, "reading")?;
    let spinner = bar(None, "{spinner} verifying every chain in memory [{elapsed}]")?;
    let checked = backup::check(archive);
    spinner.finish_and_clear();
    let checked = checked?;
    let bar = bar(Some(checked.bytes()), "{spinner} writing {bytes}/{total_bytes} ({bytes_per_sec}) [{elapsed}]")?;
    let written = restore_into(storage.as_ref(), &checked, args.force, |n| bar.inc(n));
    bar.finish_and_clear();
    written?;
    drop(lock);
    println!("restored {} chains ({} thoughts), {} objects, {} into {target} in {:.1}s", checked.chains, checked.thoughts, checked.objects.len(), mib(checked.bytes()), started.elapsed().as_secs_f64());
    for r in &checked.refused {
        println!("warning: {} was already refused when the backup was made; restored as it is: {}", r.object, r.reason);
    }
    for w in &checked.warnings {
        println!("warning: {w}");
    }
    Ok(())
}
