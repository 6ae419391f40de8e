//! Backup archives: the core's consistent snapshot as one `.tar.gz` file, and
//! restore from one into a data directory or a database.
//!
//! **Layout.** A gzip-compressed tar whose entries are `objects/<name>`, one
//! per storage object (`objects/chains/<stem>.mdb`, `objects/skills/registry.log`,
//! `objects/identity.ed25519`, ...), then `manifest.json`: the core's
//! [`BackupManifest`] (format, created_at, created_by, every object's name,
//! size and SHA-256, every chain's thought count and head hash). The manifest
//! comes last so that a backup streams while it is made, without holding the
//! whole store twice. The archive includes the daemon's checkpoint signing
//! key (`identity.ed25519`), so a restored daemon signs as the old one did:
//! keep backups as secret as the data directory.
//!
//! **Restore** ([`read_archive`] then [`restore_into`]) reads every entry,
//! refuses anything that is not a regular file named `manifest.json` or
//! `objects/<valid object name>`, then has the core check the manifest and
//! open every chain in memory (`mentisdb_core::backup::check_backup`), all
//! before one byte is written. Only then are the objects written, each with
//! `write_atomic` (temp file, fsync, rename).

use mentisdb_core::backup::{check_backup, BackupError, BackupManifest, CheckedBackup, SnapshotObject};
use mentisdb_core::storage::validate_object_name;
use mentisdb_core::{DbConfig, MentisDb, Storage, StorageError};
use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::sync::Arc;

/// The manifest's entry name.
pub const MANIFEST_ENTRY: &str = "manifest.json";
/// The prefix of every object's entry name.
pub const OBJECTS_PREFIX: &str = "objects/";
/// Objects of the host (not the core) that a backup carries when they exist.
pub const HOST_OBJECTS: &[&str] = &[crate::infra::identity::KEY_FILE];

/// Why an archive cannot be read, is refused, or cannot be restored; one line each.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArchiveError {
    /// Not a gzip-compressed tar at all.
    #[error("not a backup archive (.tar.gz): {0}")]
    NotAnArchive(io::Error),
    /// The archive breaks off or is corrupt between entries.
    #[error("the archive is damaged: {0}")]
    Damaged(io::Error),
    /// The archive breaks off or is corrupt inside entry `entry`.
    #[error("the archive is damaged at '{entry}': {source}")]
    DamagedAt { entry: String, source: io::Error },
    /// An entry that is a link, a directory or another special file.
    #[error("the archive entry '{0}' is not a regular file")]
    NotRegular(String),
    /// An entry that is neither the manifest nor `objects/<valid name>`.
    #[error("the archive entry '{0}' is not a backup object")]
    NotAnObject(String),
    /// An entry twice.
    #[error("the archive holds '{0}' twice")]
    Twice(String),
    /// Two manifests.
    #[error("the archive holds two manifests")]
    TwoManifests,
    /// The manifest entry does not parse.
    #[error("the archive's manifest.json is not a backup manifest: {0}")]
    BadManifest(serde_json::Error),
    /// No manifest: the backup was never finished.
    #[error("the archive has no manifest.json (an unfinished or cut-off backup)")]
    NoManifest,
    /// The core's check of the manifest and the chains refused the backup.
    #[error("the backup is refused, nothing was written: {0}")]
    Refused(BackupError),
    /// The target's objects cannot be listed or read.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The target holds data and `replace` was not given.
    #[error("the target already holds data ({count} objects, e.g. {example}); pass --force to replace it")]
    HoldsData { count: usize, example: String },
    /// An object the backup does not have could not be removed.
    #[error("removing {name}: {source}")]
    Remove { name: String, source: StorageError },
    /// An object could not be written.
    #[error("writing {name}: {source}")]
    Write { name: String, source: StorageError },
}

/// What made a backup: this program and version.
pub fn created_by() -> String {
    format!("mentisdbd {}", env!("CARGO_PKG_VERSION"))
}

/// Writes a consistent backup of `db` to `out` as a `.tar.gz` (see the
/// module docs); `progress` sees each object after it was written.
pub fn write_archive<W: Write>(db: &MentisDb, out: &mut W, mut progress: impl FnMut(&SnapshotObject)) -> io::Result<BackupManifest> {
    let gz = flate2::write::GzEncoder::new(out, flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    let mtime = (db.now_millis() / 1000).max(0) as u64;
    let manifest = db
        .snapshot(&created_by(), HOST_OBJECTS, |object| {
            append_entry(&mut tar, &format!("{OBJECTS_PREFIX}{}", object.name), &object.bytes, mtime)?;
            progress(&object);
            Ok::<(), io::Error>(())
        })
        .map_err(|e| match e {
            mentisdb_core::backup::SnapshotError::Visit(e) => e,
            mentisdb_core::backup::SnapshotError::Storage(e) => io::Error::other(e.to_string()),
        })?;
    let json = serde_json::to_vec_pretty(&manifest).map_err(io::Error::other)?;
    append_entry(&mut tar, MANIFEST_ENTRY, &json, mtime)?;
    tar.into_inner()?.finish()?.flush()?;
    Ok(manifest)
}

fn append_entry<W: Write>(tar: &mut tar::Builder<W>, path: &str, bytes: &[u8], mtime: u64) -> io::Result<()> {
    let mut header = tar::Header::new_gnu();
    header.set_size(bytes.len() as u64);
    header.set_mode(0o600);
    header.set_mtime(mtime);
    header.set_entry_type(tar::EntryType::Regular);
    tar.append_data(&mut header, path, bytes)
}

/// A backup read back from an archive, not yet checked.
#[derive(Debug)]
pub struct ReadArchive {
    /// The archive's manifest.
    pub manifest: BackupManifest,
    /// Every object entry, by object name.
    pub objects: BTreeMap<String, Vec<u8>>,
}

/// Reads a `.tar.gz` backup: every entry must be a regular file named
/// `manifest.json` (exactly once) or `objects/<valid object name>` (each
/// once). Errors are one line.
pub fn read_archive<R: Read>(input: R) -> Result<ReadArchive, ArchiveError> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(input));
    let mut manifest = None;
    let mut objects = BTreeMap::new();
    let entries = archive.entries().map_err(ArchiveError::NotAnArchive)?;
    for entry in entries {
        let mut entry = entry.map_err(ArchiveError::Damaged)?;
        let path = entry.path().map_err(ArchiveError::Damaged)?.to_string_lossy().into_owned();
        if entry.header().entry_type() != tar::EntryType::Regular {
            return Err(ArchiveError::NotRegular(path));
        }
        let mut bytes = Vec::with_capacity(entry.size().min(1 << 30) as usize);
        entry.read_to_end(&mut bytes).map_err(|source| ArchiveError::DamagedAt { entry: path.clone(), source })?;
        if path == MANIFEST_ENTRY {
            if manifest.is_some() {
                return Err(ArchiveError::TwoManifests);
            }
            manifest = Some(serde_json::from_slice::<BackupManifest>(&bytes).map_err(ArchiveError::BadManifest)?);
        } else {
            let name = path.strip_prefix(OBJECTS_PREFIX).filter(|n| validate_object_name(n).is_ok()).ok_or_else(|| ArchiveError::NotAnObject(path.clone()))?;
            if objects.insert(name.to_string(), bytes).is_some() {
                return Err(ArchiveError::Twice(path));
            }
        }
    }
    let manifest = manifest.ok_or(ArchiveError::NoManifest)?;
    Ok(ReadArchive { manifest, objects })
}

/// Checks a read archive with the core: the manifest against the objects,
/// then every chain opened and verified in memory. Nothing is written.
pub fn check(archive: ReadArchive) -> Result<CheckedBackup, ArchiveError> {
    let config = DbConfig { parallelism: Arc::new(mentisdb_std_host::ScopedThreads::per_cpu()), ..DbConfig::default() };
    check_backup(&archive.manifest, archive.objects, Arc::new(mentisdb_std_host::SystemClock), Arc::new(mentisdb_std_host::OsRandomIds), config).map_err(ArchiveError::Refused)
}

/// The objects in `storage` a restore would replace: the core's and the host's.
pub fn existing_objects(storage: &dyn Storage) -> Result<Vec<String>, ArchiveError> {
    let mut found = storage.list(mentisdb_core::naming::CHAINS_PREFIX)?;
    found.extend(storage.list("skills/")?);
    for name in HOST_OBJECTS {
        if storage.read(name)?.is_some() {
            found.push(name.to_string());
        }
    }
    Ok(found)
}

/// Writes a checked backup into `storage`, which must hold none of the
/// objects a backup owns unless `replace` (then those not in the backup are
/// removed first). `progress` gets each object's size after it was written.
pub fn restore_into(storage: &dyn Storage, backup: &CheckedBackup, replace: bool, mut progress: impl FnMut(u64)) -> Result<(), ArchiveError> {
    let existing = existing_objects(storage)?;
    if !existing.is_empty() {
        if !replace {
            return Err(ArchiveError::HoldsData { count: existing.len(), example: existing[0].clone() });
        }
        for name in existing.iter().filter(|n| !backup.objects.contains_key(*n)) {
            storage.remove(name).map_err(|source| ArchiveError::Remove { name: name.clone(), source })?;
        }
    }
    for (name, bytes) in &backup.objects {
        storage.write_atomic(name, bytes).map_err(|source| ArchiveError::Write { name: name.clone(), source })?;
        progress(bytes.len() as u64);
    }
    Ok(())
}

/// A `Write` that hands the archive to an HTTP response body in chunks; a
/// send fails (and so the snapshot stops) when the client went away.
pub struct ChunkSender {
    tx: tokio::sync::mpsc::Sender<Result<axum::body::Bytes, io::Error>>,
    buf: Vec<u8>,
}

/// Bytes per chunk of a streamed backup.
const CHUNK: usize = 256 * 1024;

impl ChunkSender {
    /// A writer feeding `tx`.
    pub fn new(tx: tokio::sync::mpsc::Sender<Result<axum::body::Bytes, io::Error>>) -> Self {
        ChunkSender { tx, buf: Vec::with_capacity(CHUNK) }
    }

    fn send(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = axum::body::Bytes::from(std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK)));
        self.tx.blocking_send(Ok(chunk)).map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the client stopped reading the backup"))
    }

    /// Ends the body with an error, so the client sees a cut-off archive.
    pub fn fail(self, error: io::Error) {
        let _ = self.tx.blocking_send(Err(error));
    }
}

impl Write for ChunkSender {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= CHUNK {
            self.send()?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send()
    }
}
