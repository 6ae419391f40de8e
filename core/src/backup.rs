//! Backups: a consistent copy of every object the engine owns, and the
//! check that a copy is whole and sound before anything is restored from it.
//!
//! **What a snapshot holds.** [`MentisDb::snapshot`] visits every chain
//! object with its agent-registry sidecar, the skill log, chain objects the
//! engine refused at open (copied as they are, and named in the manifest),
//! and the extra objects the host names (the daemon's checkpoint identity).
//! It returns the [`BackupManifest`]: every object's name, size and SHA-256,
//! and every chain's thought count and head hash.
//!
//! **What "consistent" means.** Each chain is copied under its lock: its
//! object up to the last committed thought and its sidecar as of that
//! moment, then the copied bytes are synced before they are visited. So every
//! chain is at a head it really had, and every thought acknowledged to a
//! writer before the snapshot started is in it (a thought whose append was
//! still in flight may or may not be). Chains are copied one after another,
//! not at one instant: a thought appended to chain B after chain A was copied
//! may be in the backup while a later one of A is not. The skill log is
//! copied the same way, under the registry's lock. Writers are held up only
//! while their own chain is being read, never while the host compresses or
//! sends the bytes.
//!
//! **What a restore checks.** [`check_backup`] takes the manifest and the
//! objects read back from an archive and refuses (with [`BackupError`]) an
//! unknown format, an object the manifest does not list or lists but is
//! missing, any size or SHA-256 that differs, a name that could leave the
//! store, and a chain that does not open, verify and end at the manifest's
//! thought count and head hash. It does all that in memory
//! ([`MemoryStorage`]), so a host writes nothing until every check passed.

use crate::db::{DbConfig, MentisDb};
use crate::host::{Clock, IdSource};
use crate::naming;
use crate::storage::{validate_object_name, MemoryStorage, StorageError};
use crate::timestamp::format_rfc3339_millis;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The manifest format this engine writes and reads.
pub const BACKUP_FORMAT: u32 = 1;

/// What a backup holds; the first thing a restore reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackupManifest {
    /// [`BACKUP_FORMAT`] of the engine that wrote it.
    pub format: u32,
    /// When the snapshot started (host clock, RFC 3339).
    pub created_at: String,
    /// The program that made it, e.g. `mentisdbd 0.1.0`.
    pub created_by: String,
    /// Every object in the backup, sorted by name.
    pub objects: Vec<ManifestObject>,
    /// Every chain the engine served, sorted by key, as copied.
    pub chains: Vec<ManifestChain>,
    /// Chain objects the engine had refused (damaged); copied unchanged.
    #[serde(default)]
    pub refused: Vec<ManifestRefused>,
}

/// One object of a backup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestObject {
    /// The storage object name, e.g. `chains/notes.0123456789abcdef.mdb`.
    pub name: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// SHA-256 of its bytes, lowercase hex.
    pub sha256: String,
}

/// One chain of a backup, as it was copied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestChain {
    /// The chain key.
    pub chain_key: String,
    /// Its storage object.
    pub object: String,
    /// Thoughts it held.
    pub thought_count: u64,
    /// Hash of its last thought (`None` for an empty chain).
    pub head_hash: Option<String>,
}

/// A chain object the engine refused to serve, copied as it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestRefused {
    /// The storage object.
    pub object: String,
    /// Why it was refused.
    pub reason: String,
}

/// One object handed to a snapshot's visitor.
#[derive(Debug)]
pub struct SnapshotObject {
    /// The storage object name.
    pub name: String,
    /// Its bytes as copied.
    pub bytes: Vec<u8>,
    /// Chains (and the skill log, and the extras) copied so far, counting this object's.
    pub step: usize,
    /// How many there are in all, for a progress bar.
    pub steps: usize,
}

/// Why a snapshot stopped.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError<E> {
    /// Reading (or syncing) an object failed.
    #[error("{0}")]
    Storage(#[from] StorageError),
    /// The visitor failed (e.g. the archive could not be written).
    #[error("{0}")]
    Visit(E),
}

/// Why a backup is refused before anything is restored from it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BackupError {
    /// The manifest is from a newer (or unknown) format.
    #[error("backup format {found} is not supported (this engine reads format {BACKUP_FORMAT})")]
    UnsupportedFormat {
        /// The manifest's format.
        found: u32,
    },
    /// An object name is not one the engine makes (it could leave the store).
    #[error("the backup names an invalid object '{0}'")]
    InvalidName(String),
    /// The manifest lists an object twice.
    #[error("the manifest lists '{0}' twice")]
    Duplicate(String),
    /// The manifest lists an object the archive lacks.
    #[error("'{0}' is listed in the manifest but missing from the archive")]
    Missing(String),
    /// The archive holds an object the manifest does not list.
    #[error("'{0}' is in the archive but not in the manifest")]
    Unlisted(String),
    /// An object's size differs from the manifest's.
    #[error("'{name}' is {actual} bytes, the manifest says {expected}")]
    SizeMismatch {
        /// The object.
        name: String,
        /// The manifest's size.
        expected: u64,
        /// The archive's size.
        actual: u64,
    },
    /// An object's SHA-256 differs from the manifest's.
    #[error("'{name}' does not match its SHA-256 in the manifest (the archive is damaged or was changed)")]
    DigestMismatch {
        /// The object.
        name: String,
    },
    /// A chain does not open as the manifest says it was copied.
    #[error("chain '{chain_key}': {reason}")]
    Chain {
        /// The chain key (or object name, for an object no chain claims).
        chain_key: String,
        /// What differs.
        reason: String,
    },
    /// The in-memory store used for the check failed.
    #[error("{0}")]
    Storage(#[from] StorageError),
}

/// What [`check_backup`] found: the objects to write, checked.
#[derive(Debug)]
pub struct CheckedBackup {
    /// The objects, by name, exactly as listed in the manifest.
    pub objects: BTreeMap<String, Vec<u8>>,
    /// Chains that opened and verified.
    pub chains: usize,
    /// Thoughts in them.
    pub thoughts: u64,
    /// Chain objects that were already refused when the backup was made.
    pub refused: Vec<ManifestRefused>,
    /// Problems opening found in sidecars or the skill log, which the
    /// engine works around as it did where the backup was made.
    pub warnings: Vec<String>,
}

impl CheckedBackup {
    /// Total bytes of the objects.
    pub fn bytes(&self) -> u64 {
        self.objects.values().map(|b| b.len() as u64).sum()
    }
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    crate::sha256::to_hex(&crate::sha256::digest(&[bytes]))
}

impl MentisDb {
    /// Visits a consistent copy of every object this engine owns (see the
    /// module docs for what consistent means) plus the host's `extra_objects`
    /// that exist (each read as it is), and returns the manifest. Chains
    /// another engine created on a shared store are loaded first, so they are
    /// copied too. `created_by` names the host program in the manifest.
    pub fn snapshot<E>(&self, created_by: &str, extra_objects: &[&str], mut visit: impl FnMut(SnapshotObject) -> Result<(), E>) -> Result<BackupManifest, SnapshotError<E>> {
        let created_at = format_rfc3339_millis(crate::timestamp::renderable_millis(self.now_millis()));
        // Chains created by another engine since this one opened are served (or refused) from here on.
        for object in self.storage().list(naming::CHAINS_PREFIX)? {
            if naming::is_chain_object(&object) && !self.serves_object(&object) {
                if let Some(key) = self.storage().read(&object)?.and_then(|b| crate::record::peek_chain_key(&b)) {
                    let _ = self.chain_exists(&key);
                }
            }
        }
        let keys = self.chain_keys();
        let refused = self.refused_objects();
        let steps = keys.len() + refused.len() + 2 + extra_objects.len();
        let mut step = 0;
        let mut manifest = BackupManifest { format: BACKUP_FORMAT, created_at, created_by: created_by.to_string(), objects: Vec::new(), chains: Vec::new(), refused: Vec::new() };
        let mut emit = |manifest: &mut BackupManifest, name: String, bytes: Vec<u8>, step: usize| {
            manifest.objects.push(ManifestObject { name: name.clone(), bytes: bytes.len() as u64, sha256: sha256_hex(&bytes) });
            visit(SnapshotObject { name, bytes, step, steps }).map_err(SnapshotError::Visit)
        };
        for key in keys {
            step += 1;
            // A chain deleted since the list was taken is simply not in the backup.
            let Some(copy) = self.copy_chain(&key)? else { continue };
            self.storage().sync(&copy.object)?;
            manifest.chains.push(ManifestChain { chain_key: key, object: copy.object.clone(), thought_count: copy.thought_count, head_hash: copy.head_hash });
            emit(&mut manifest, copy.object, copy.bytes, step)?;
            if let Some((name, bytes)) = copy.agents {
                emit(&mut manifest, name, bytes, step)?;
            }
        }
        for (object, reason) in refused {
            step += 1;
            if let Some(bytes) = self.storage().read(&object)? {
                manifest.refused.push(ManifestRefused { object: object.clone(), reason });
                emit(&mut manifest, object, bytes, step)?;
            }
        }
        step += 1;
        if let Some(log) = self.skills.copy_log(self.storage())? {
            emit(&mut manifest, naming::SKILLS_LOG.to_string(), log, step)?;
        }
        for name in std::iter::once(&naming::WEBHOOKS_OBJECT).chain(extra_objects) {
            step += 1;
            if let Some(bytes) = self.storage().read(name)? {
                emit(&mut manifest, name.to_string(), bytes, step)?;
            }
        }
        crate::sorting::sort_by(&mut manifest.objects, |a, b| a.name.cmp(&b.name));
        Ok(manifest)
    }
}

/// The first half of [`check_backup`], cheap enough to run after every
/// backup: the format, every name, and every object against the manifest
/// (each listed once, present, of its size and SHA-256, and nothing else).
pub fn check_objects(manifest: &BackupManifest, objects: &BTreeMap<String, Vec<u8>>) -> Result<(), BackupError> {
    if manifest.format != BACKUP_FORMAT {
        return Err(BackupError::UnsupportedFormat { found: manifest.format });
    }
    let mut listed = BTreeMap::new();
    for o in &manifest.objects {
        validate_object_name(&o.name).map_err(|_| BackupError::InvalidName(o.name.clone()))?;
        if listed.insert(o.name.as_str(), o).is_some() {
            return Err(BackupError::Duplicate(o.name.clone()));
        }
    }
    if let Some(extra) = objects.keys().find(|n| !listed.contains_key(n.as_str())) {
        return Err(BackupError::Unlisted(extra.clone()));
    }
    for (name, o) in &listed {
        let bytes = objects.get(*name).ok_or_else(|| BackupError::Missing(name.to_string()))?;
        if bytes.len() as u64 != o.bytes {
            return Err(BackupError::SizeMismatch { name: name.to_string(), expected: o.bytes, actual: bytes.len() as u64 });
        }
        if sha256_hex(bytes) != o.sha256 {
            return Err(BackupError::DigestMismatch { name: name.to_string() });
        }
    }
    Ok(())
}

/// Checks a backup read back from an archive (see the module docs) without
/// writing anything anywhere: names, the manifest against the objects, and
/// every chain opened and verified in memory with `config` (its
/// `parallelism` is used; the rest does not matter for opening).
pub fn check_backup(manifest: &BackupManifest, objects: BTreeMap<String, Vec<u8>>, clock: Arc<dyn Clock>, ids: Arc<dyn IdSource>, config: DbConfig) -> Result<CheckedBackup, BackupError> {
    check_objects(manifest, &objects)?;
    let storage = Arc::new(MemoryStorage::from_objects(objects)?);
    let (db, report) = MentisDb::open(storage.clone(), clock, ids, config)?;
    let chain_err = |chain_key: &str, reason: String| BackupError::Chain { chain_key: chain_key.to_string(), reason };
    // A chain refused when the backup was made is refused again (copied, not
    // served); any other chain that does not open means a bad backup.
    for (object, why) in db.refused_objects() {
        if !manifest.refused.iter().any(|r| r.object == object) {
            return Err(chain_err(&object, format!("does not open: {why}")));
        }
    }
    let warnings = report.refused.iter().filter(|(what, _)| what == naming::SKILLS_LOG || what == naming::WEBHOOKS_OBJECT || what.ends_with(".agents.json")).map(|(what, why)| format!("{what}: {why}")).collect();
    let mut thoughts = 0;
    for c in &manifest.chains {
        let opened = report.chains.iter().find(|o| o.chain_key == c.chain_key).ok_or_else(|| chain_err(&c.chain_key, "is in the manifest but did not open".into()))?;
        if opened.torn_tail_bytes > 0 {
            return Err(chain_err(&c.chain_key, format!("ends in {} bytes of a torn record", opened.torn_tail_bytes)));
        }
        let head = db.with_chain(&c.chain_key, |chain| chain.and_then(|ch| ch.thoughts().last().map(|t| t.hash.to_hex()))).map_err(|e| chain_err(&c.chain_key, e.to_string()))?;
        if opened.thought_count as u64 != c.thought_count || head != c.head_hash {
            return Err(chain_err(&c.chain_key, format!("opened with {} thoughts ending at {:?}, the manifest says {} ending at {:?}", opened.thought_count, head, c.thought_count, c.head_hash)));
        }
        thoughts += c.thought_count;
    }
    if let Some(extra) = report.chains.iter().find(|o| !manifest.chains.iter().any(|c| c.chain_key == o.chain_key)) {
        return Err(chain_err(&extra.chain_key, "opened but is not in the manifest's chain list".into()));
    }
    drop(db);
    let objects = Arc::try_unwrap(storage).map_err(|_| StorageError::Unavailable("the check's store is still in use".into()))?.into_objects();
    Ok(CheckedBackup { objects, chains: manifest.chains.len(), thoughts, refused: manifest.refused.clone(), warnings })
}
