//! [`MentisDb::import_chain`]: adding a whole chain object (exported by a
//! browser, copied from a daemon's `chains/` directory) to an open store.
//!
//! The bytes are decoded and verified exactly as opening a store verifies a
//! chain (a torn tail is cut and reported; anything else that does not
//! verify is refused), and a chain key the store already serves, refuses or
//! holds an object for is never overwritten. On any refusal nothing is
//! stored. Every host calls this one operation.

use crate::agents::AgentRegistry;
use crate::chain::Chain;
use crate::db::MentisDb;
use crate::error::ImportError;
use crate::naming;
use crate::record::{self, ChainFormat};

/// What an import added; as JSON (the browser's `importChain`), every
/// field but the format.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ImportReport {
    /// The imported chain's key (from the object's header).
    pub chain_key: String,
    /// The object's record format, kept as stored.
    #[serde(skip)]
    pub format: ChainFormat,
    /// Thoughts in the imported chain.
    pub thought_count: usize,
    /// Bytes of a torn tail cut from the end of the object before storing it.
    pub torn_tail_bytes: usize,
    /// Hash of the chain's last thought (`None` for a chain with no thoughts).
    pub head_hash: Option<String>,
    /// Where the chain is now stored ([`crate::Storage::location`]).
    pub storage_location: String,
}

impl MentisDb {
    /// Decodes, verifies and stores the chain object `bytes`, then serves it
    /// like a chain found at open. Refuses (storing nothing) bytes that do not
    /// decode or verify and a chain key that already exists in this store.
    pub fn import_chain(&self, bytes: &[u8]) -> Result<ImportReport, ImportError> {
        let parallelism = self.config().parallelism.clone();
        let decoded = record::decode_chain_with(bytes, parallelism.as_ref(), self.map_hasher()).map_err(ImportError::Decode)?;
        let chain_key = decoded.chain_key.clone();
        let torn_tail_bytes = decoded.torn_tail_bytes(bytes.len());
        let verified = &bytes[..decoded.valid_len];
        // A registry sidecar left for this key is honoured, as at open.
        let agents = match self.storage().read(&naming::agents_object(&chain_key))? {
            Some(sidecar) => AgentRegistry::from_sidecar(&sidecar).unwrap_or_default(),
            None => AgentRegistry::default(),
        };
        let chain = Chain::load_with(decoded, agents, self.map_hasher(), parallelism.as_ref())
            .map_err(|error| ImportError::Refused { chain_key: chain_key.clone(), error })?;
        let (format, thought_count, head_hash) = (chain.format(), chain.len(), chain.head().map(|t| t.hash.to_hex()));
        let storage_location = self.adopt_chain(chain, verified)?;
        Ok(ImportReport { chain_key, format, thought_count, torn_tail_bytes, head_hash, storage_location })
    }
}

impl MentisDb {
    /// The stored object of chain `chain_key` (the default chain when
    /// `None`): its key, format and bytes, exactly as stored (what
    /// [`MentisDb::import_chain`] takes back). A chain refused at open
    /// answers its refusal; an unknown chain is `NotFound`.
    pub fn export_chain(&self, chain_key: Option<&str>) -> Result<(String, ChainFormat, Vec<u8>), crate::error::ToolError> {
        use crate::error::ToolError;
        let key = self.resolve_key(chain_key)?;
        // Reading the chain also surfaces a refused chain's error.
        self.with_chain(&key, |_| ())?;
        let (format, _) = self.chain_storage_info(&key).ok_or_else(|| ToolError::NotFound(format!("chain '{key}' does not exist")))?;
        let bytes = self.storage().read(&naming::chain_object(&key, format))?.ok_or_else(|| ToolError::NotFound(format!("chain '{key}' has no stored object")))?;
        Ok((key, format, bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::VerifyError;
    use crate::record::RecordError;
    use crate::{DbConfig, FixedClock, MemoryStorage, SequentialIds, Storage};
    use serde_json::json;
    use std::sync::Arc;

    fn db_over(storage: Arc<MemoryStorage>, format: ChainFormat, ids_from: u64) -> MentisDb {
        let config = DbConfig { default_format: format, ..DbConfig::default() };
        MentisDb::open(storage, Arc::new(FixedClock::new(1_795_000_000_000, 1)), Arc::new(SequentialIds::starting_at(ids_from)), config).unwrap().0
    }

    /// A store holding chain "moving" with three thoughts, and its object's bytes.
    fn exported(format: ChainFormat) -> (MentisDb, Vec<u8>) {
        let db = db_over(Arc::new(MemoryStorage::new()), format, 0);
        for text in ["alpha memory", "beta memory", "gamma memory"] {
            db.call("mentisdb_append", json!({"chain_key": "moving", "thought_type": "Finding", "content": text})).unwrap();
        }
        let bytes = db.storage().read(&naming::chain_object("moving", format)).unwrap().unwrap();
        (db, bytes)
    }

    fn head_hash(db: &MentisDb, key: &str) -> serde_json::Value {
        db.call("mentisdb_head", json!({"chain_key": key})).unwrap()["head_hash"].clone()
    }

    #[test]
    fn a_valid_chain_imports_is_served_and_survives_reopen() {
        for format in [ChainFormat::Binary, ChainFormat::Jsonl] {
            let (src, bytes) = exported(format);
            let storage = Arc::new(MemoryStorage::new());
            let dst = db_over(storage.clone(), ChainFormat::Binary, 1_000);
            let report = dst.import_chain(&bytes).unwrap();
            assert_eq!((report.chain_key.as_str(), report.format, report.thought_count, report.torn_tail_bytes), ("moving", format, 3, 0));
            assert_eq!(json!(report.head_hash), head_hash(&src, "moving"));
            assert_eq!(report.storage_location, dst.storage_location("moving"));
            assert_eq!(storage.read(&naming::chain_object("moving", format)).unwrap().unwrap(), bytes, "stored exactly as exported");
            let found = dst.call("mentisdb_search", json!({"chain_key": "moving", "text": "beta"})).unwrap();
            assert_eq!(found["thoughts"][0]["content"], "beta memory");
            let next = dst.call("mentisdb_append", json!({"chain_key": "moving", "thought_type": "Finding", "content": "delta"})).unwrap();
            assert_eq!(next["thought"]["prev_hash"], head_hash(&src, "moving"), "the imported chain keeps growing");
            let reopened = db_over(storage, ChainFormat::Binary, 2_000);
            assert_eq!(reopened.with_chain("moving", |c| c.map(Chain::len)).unwrap(), Some(4));
        }
    }

    #[test]
    fn a_torn_tail_is_cut_and_reported() {
        let (src, mut bytes) = exported(ChainFormat::Binary);
        let clean = bytes.clone();
        bytes.extend_from_slice(&[40, 0, 0, 0, 1, 2]);
        let storage = Arc::new(MemoryStorage::new());
        let report = db_over(storage.clone(), ChainFormat::Binary, 1_000).import_chain(&bytes).unwrap();
        assert_eq!(report.torn_tail_bytes, 6);
        assert_eq!(json!(report.head_hash), head_hash(&src, "moving"));
        assert_eq!(storage.read(&naming::chain_object("moving", ChainFormat::Binary)).unwrap().unwrap(), clean);
    }

    /// Refusals leave the target store exactly as it was.
    fn assert_refused_storing_nothing(storage: &MemoryStorage, db: &MentisDb, bytes: &[u8]) -> ImportError {
        let before: Vec<(String, Option<Vec<u8>>)> = storage.list("").unwrap().into_iter().map(|n| (n.clone(), storage.read(&n).unwrap())).collect();
        let keys = db.chain_keys();
        let err = db.import_chain(bytes).unwrap_err();
        let after: Vec<(String, Option<Vec<u8>>)> = storage.list("").unwrap().into_iter().map(|n| (n.clone(), storage.read(&n).unwrap())).collect();
        assert_eq!(after, before, "{err}: nothing may be stored");
        assert_eq!(db.chain_keys(), keys, "{err}: no chain may be added");
        err
    }

    #[test]
    fn bytes_that_are_not_a_chain_are_refused() {
        let storage = Arc::new(MemoryStorage::new());
        let db = db_over(storage.clone(), ChainFormat::Binary, 0);
        let err = assert_refused_storing_nothing(&storage, &db, b"not a chain at all");
        assert_eq!(err, ImportError::Decode(RecordError::UnknownFormat));
        assert_eq!(err.to_string(), "cannot import: not a MentisDB chain object (unknown header)");
    }

    #[test]
    fn a_tampered_chain_is_refused() {
        // Binary: a flipped byte inside the first record, valid records after it.
        let (_, mut bytes) = exported(ChainFormat::Binary);
        let at = bytes.windows(5).position(|w| w == b"alpha").unwrap();
        bytes[at] = b'G';
        let storage = Arc::new(MemoryStorage::new());
        let db = db_over(storage.clone(), ChainFormat::Binary, 1_000);
        let err = assert_refused_storing_nothing(&storage, &db, &bytes);
        assert!(matches!(err, ImportError::Decode(RecordError::Corrupt { .. })), "{err:?}");
        assert!(err.to_string().starts_with("cannot import: corrupt record at byte offset"), "{err}");

        // JSONL: edited content still decodes, but its hash no longer matches.
        let (_, bytes) = exported(ChainFormat::Jsonl);
        let edited = String::from_utf8(bytes).unwrap().replace("alpha memory", "ALPHA memory");
        let err = assert_refused_storing_nothing(&storage, &db, edited.as_bytes());
        assert!(matches!(&err, ImportError::Refused { chain_key, error: VerifyError::HashMismatch { index: 0, .. } } if chain_key == "moving"), "{err:?}");
        assert!(err.to_string().starts_with("cannot import chain 'moving': hash mismatch at index 0"), "{err}");
    }

    #[test]
    fn an_existing_chain_is_never_overwritten() {
        let (_, bytes) = exported(ChainFormat::Binary);
        // Served after an import, served after an append, or stored in the other format.
        let storage = Arc::new(MemoryStorage::new());
        let db = db_over(storage.clone(), ChainFormat::Binary, 1_000);
        db.import_chain(&bytes).unwrap();
        let again = assert_refused_storing_nothing(&storage, &db, &bytes);
        assert_eq!(again, ImportError::ChainExists { chain_key: "moving".into() });
        assert_eq!(again.to_string(), "chain 'moving' already exists; import refuses to overwrite it");

        let storage = Arc::new(MemoryStorage::new());
        let db = db_over(storage.clone(), ChainFormat::Jsonl, 1_000);
        db.call("mentisdb_append", json!({"chain_key": "moving", "thought_type": "Idea", "content": "mine"})).unwrap();
        let err = assert_refused_storing_nothing(&storage, &db, &bytes);
        assert_eq!(err, ImportError::ChainExists { chain_key: "moving".into() });
        assert_eq!(db.call("mentisdb_head", json!({"chain_key": "moving"})).unwrap()["thought_count"], 1);
    }

    #[test]
    fn a_refused_chain_with_the_same_key_is_never_overwritten() {
        let (_, bytes) = exported(ChainFormat::Binary);
        let storage = Arc::new(MemoryStorage::new());
        let mut damaged = bytes.clone();
        let at = damaged.windows(5).position(|w| w == b"alpha").unwrap();
        damaged[at] = b'G';
        storage.write_atomic(&naming::chain_object("moving", ChainFormat::Binary), &damaged).unwrap();
        let db = db_over(storage.clone(), ChainFormat::Binary, 1_000);
        assert!(db.chain_keys().is_empty(), "the damaged chain is refused at open");
        let err = assert_refused_storing_nothing(&storage, &db, &bytes);
        assert_eq!(err, ImportError::ChainExists { chain_key: "moving".into() });
    }
}
