//! MentisDB 0.10.10's storage-adapter names. The engine's storage is
//! `mentisdb-fs-storage`; these items exist so code naming them compiles,
//! and [`BinaryStorageAdapter`] reads a chain through the engine.

use crate::{MentisDb, Thought};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// 0.10.10's persistence-backend trait. Implementations here: [`BinaryStorageAdapter`].
pub trait StorageAdapter: Send + Sync {
    /// All persisted thoughts in append order.
    fn load_thoughts(&self) -> io::Result<Vec<Thought>>;
    /// Persists a finished thought. This engine hashes and links thoughts
    /// itself, so [`BinaryStorageAdapter`] answers `Unsupported`: append
    /// through [`MentisDb`].
    fn append_thought(&self, thought: &Thought) -> io::Result<()>;
    /// Flushes buffered writes (appends are already durable here).
    fn flush(&self) -> io::Result<()> {
        Ok(())
    }
    /// Whether appends flush immediately (always, here).
    fn set_auto_flush(&self, _auto_flush: bool) -> io::Result<()> {
        Ok(())
    }
    /// Where the data lives, for logs.
    fn storage_location(&self) -> String;
    /// The kind of storage.
    fn storage_kind(&self) -> StorageAdapterKind;
    /// The file path, for file-backed adapters.
    fn storage_path(&self) -> Option<&Path>;
}

/// Storage formats of 0.10.10; only `Binary` opens chains.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash, Default)]
pub enum StorageAdapterKind {
    /// The binary chain file (this engine's `.mdb`; 0.10.10's `.tcbin`).
    #[default]
    Binary,
    /// 0.10's legacy JSONL: not opened by this crate.
    Jsonl,
}

impl StorageAdapterKind {
    /// `"binary"` or `"jsonl"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Binary => "binary",
            Self::Jsonl => "jsonl",
        }
    }

    /// 0.10.10's file extension: `"tcbin"` or `"jsonl"`.
    pub fn file_extension(self) -> &'static str {
        match self {
            Self::Binary => "tcbin",
            Self::Jsonl => "jsonl",
        }
    }

    /// A boxed [`BinaryStorageAdapter`] for `chain_key` in `chain_dir`.
    pub fn for_chain_key<P: AsRef<Path>>(self, chain_dir: P, chain_key: &str) -> Box<dyn StorageAdapter> {
        Box::new(BinaryStorageAdapter::for_chain_key(chain_dir, chain_key))
    }
}

impl fmt::Display for StorageAdapterKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for StorageAdapterKind {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value.trim().to_ascii_lowercase().as_str() {
            "binary" => Ok(Self::Binary),
            "jsonl" => Ok(Self::Jsonl),
            other => Err(format!("Unsupported MentisDb storage adapter '{other}'. Expected 'binary'")),
        }
    }
}

/// A chain named by directory and key; loads it through [`MentisDb`].
#[derive(Debug, Clone)]
pub struct BinaryStorageAdapter {
    chain_dir: PathBuf,
    chain_key: Option<String>,
    file_path: PathBuf,
}

impl BinaryStorageAdapter {
    /// An adapter for a file path (0.10.10's form). It names no chain key,
    /// so [`load_thoughts`](StorageAdapter::load_thoughts) answers `Unsupported`.
    pub fn new(file_path: PathBuf) -> Self {
        let chain_dir = file_path.parent().map(Path::to_path_buf).unwrap_or_default();
        BinaryStorageAdapter { chain_dir, chain_key: None, file_path }
    }

    /// The chain `chain_key` in the data directory `chain_dir`.
    pub fn for_chain_key<P: AsRef<Path>>(chain_dir: P, chain_key: &str) -> Self {
        let chain_dir = chain_dir.as_ref().to_path_buf();
        let object = mentisdb_core::naming::chain_object(chain_key, mentisdb_core::ChainFormat::Binary);
        BinaryStorageAdapter { file_path: chain_dir.join(object), chain_dir, chain_key: Some(chain_key.to_string()) }
    }

    /// The chain file's path (`<dir>/chains/<stem>.mdb` for [`for_chain_key`](Self::for_chain_key)).
    pub fn file_path(&self) -> &PathBuf {
        &self.file_path
    }

    /// Always `true`: every append is fsynced before it returns.
    pub fn is_auto_flush(&self) -> bool {
        true
    }

    /// Nothing to flush.
    pub fn flush(&self) -> io::Result<()> {
        Ok(())
    }
}

impl StorageAdapter for BinaryStorageAdapter {
    fn load_thoughts(&self) -> io::Result<Vec<Thought>> {
        let key = self.chain_key.as_deref().ok_or_else(|| io::Error::new(io::ErrorKind::Unsupported, "a BinaryStorageAdapter made from a file path names no chain key: use for_chain_key"))?;
        Ok(MentisDb::open_with_key(&self.chain_dir, key)?.thoughts().to_vec())
    }

    fn append_thought(&self, _thought: &Thought) -> io::Result<()> {
        Err(io::Error::new(io::ErrorKind::Unsupported, "this engine hashes and links thoughts itself: append through MentisDb::append_thought"))
    }

    fn storage_location(&self) -> String {
        self.file_path.display().to_string()
    }

    fn storage_kind(&self) -> StorageAdapterKind {
        StorageAdapterKind::Binary
    }

    fn storage_path(&self) -> Option<&Path> {
        Some(&self.file_path)
    }
}
