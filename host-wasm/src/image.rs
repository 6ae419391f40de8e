//! [`ImageStorage`]: the browser's storage backend, an in-memory image of
//! every object, persisted to IndexedDB by the JS API after each call.
//!
//! IndexedDB is asynchronous and the core's [`Storage`] trait is
//! synchronous, so the core runs on this image and the image remembers which
//! objects reached a durability point (`sync`, `truncate`, `write_atomic`,
//! `remove`). [`ImageStorage::take_pending`] turns that dirty set into one
//! batch of IndexedDB operations; the JS method that caused them resolves
//! only after that batch's readwrite transaction completed. So the core's
//! durability point maps to the IndexedDB commit.
//!
//! On IndexedDB an object is a run of *segments* keyed `[name, offset]`: an
//! object that only grew since its last commit gets one new segment holding
//! the new bytes (an append costs its own size, not the chain's); a
//! truncate, an atomic replace or a first write rewrites the object as a
//! single segment. Loading concatenates the segments; an object with many
//! segments is compacted to one at open.

use mentisdb_core::storage::validate_object_name;
use mentisdb_core::{Storage, StorageError};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, MutexGuard};

/// Objects with more segments than this are rewritten as one at open.
pub const COMPACT_SEGMENTS: usize = 512;

/// One IndexedDB operation of a commit batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PersistOp {
    /// Delete every segment of `name`, then store `bytes` as its only segment.
    Rewrite { name: String, bytes: Vec<u8> },
    /// Store `bytes` as the segment of `name` starting at `offset`.
    Extend { name: String, offset: u64, bytes: Vec<u8> },
    /// Delete every segment of `name`.
    Delete { name: String },
}

/// The operations one commit must apply, and the objects they cover.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct PersistBatch {
    pub ops: Vec<PersistOp>,
}

impl PersistBatch {
    /// Whether there is nothing to commit.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Names of the objects the batch touches.
    pub fn names(&self) -> Vec<String> {
        self.ops
            .iter()
            .map(|op| match op {
                PersistOp::Rewrite { name, .. } | PersistOp::Extend { name, .. } | PersistOp::Delete { name } => name.clone(),
            })
            .collect()
    }
}

#[derive(Debug, Default)]
struct Entry {
    bytes: Vec<u8>,
    /// Length already handed to a commit as segments.
    persisted: u64,
    /// The stored segments no longer describe a prefix of `bytes`.
    rewrite: bool,
}

#[derive(Debug, Default)]
struct Image {
    objects: BTreeMap<String, Entry>,
    /// Objects that reached a durability point since the last batch.
    dirty: BTreeSet<String>,
}

/// The in-memory image of one IndexedDB database's objects.
#[derive(Debug)]
pub struct ImageStorage {
    database: String,
    image: Mutex<Image>,
}

/// Why the stored segments could not be assembled into objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError(pub String);

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl ImageStorage {
    /// An empty image for the IndexedDB database `database`.
    pub fn new(database: &str) -> Self {
        ImageStorage { database: database.to_string(), image: Mutex::new(Image::default()) }
    }

    /// Rebuilds the image from stored segments `(name, offset, bytes)` in key
    /// order. Objects with more than [`COMPACT_SEGMENTS`] segments are marked
    /// for a rewrite, so the next batch compacts them.
    pub fn from_segments(database: &str, segments: impl IntoIterator<Item = (String, u64, Vec<u8>)>) -> Result<Self, LoadError> {
        let mut objects: BTreeMap<String, (Entry, usize)> = BTreeMap::new();
        for (name, offset, bytes) in segments {
            validate_object_name(&name).map_err(|e| LoadError(format!("IndexedDB database '{database}' holds an object MentisDB did not write: {e}")))?;
            let (entry, count) = objects.entry(name.clone()).or_default();
            if offset != entry.bytes.len() as u64 {
                return Err(LoadError(format!(
                    "object '{name}' in IndexedDB database '{database}' has a segment at offset {offset} but its earlier segments end at {}",
                    entry.bytes.len()
                )));
            }
            entry.bytes.extend_from_slice(&bytes);
            entry.persisted = entry.bytes.len() as u64;
            *count += 1;
        }
        let mut image = Image::default();
        for (name, (mut entry, count)) in objects {
            if count > COMPACT_SEGMENTS {
                entry.rewrite = true;
                image.dirty.insert(name.clone());
            }
            image.objects.insert(name, entry);
        }
        Ok(ImageStorage { database: database.to_string(), image: Mutex::new(image) })
    }

    fn image(&self) -> MutexGuard<'_, Image> {
        self.image.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The IndexedDB database this image belongs to.
    pub fn database(&self) -> &str {
        &self.database
    }

    /// Whether some object reached a durability point that is not yet
    /// handed to a commit.
    pub fn has_pending(&self) -> bool {
        !self.image().dirty.is_empty()
    }

    /// Takes the dirty set as one batch of operations and assumes it will
    /// commit (later batches extend from there). If the commit fails, call
    /// [`ImageStorage::commit_failed`] so the next batch rewrites them.
    pub fn take_pending(&self) -> PersistBatch {
        let mut image = self.image();
        let dirty = std::mem::take(&mut image.dirty);
        let mut ops = Vec::with_capacity(dirty.len());
        for name in dirty {
            match image.objects.get_mut(&name) {
                None => ops.push(PersistOp::Delete { name }),
                Some(entry) => {
                    let len = entry.bytes.len() as u64;
                    if entry.rewrite || entry.persisted > len {
                        ops.push(PersistOp::Rewrite { name, bytes: entry.bytes.clone() });
                    } else if entry.persisted < len {
                        ops.push(PersistOp::Extend { name, offset: entry.persisted, bytes: entry.bytes[entry.persisted as usize..].to_vec() });
                    }
                    entry.persisted = len;
                    entry.rewrite = false;
                }
            }
        }
        PersistBatch { ops }
    }

    /// Marks the objects of a failed batch dirty again, as whole rewrites.
    pub fn commit_failed(&self, batch: &PersistBatch) {
        let mut image = self.image();
        for name in batch.names() {
            if let Some(entry) = image.objects.get_mut(&name) {
                entry.rewrite = true;
            }
            image.dirty.insert(name);
        }
    }
}

impl Storage for ImageStorage {
    fn backend_name(&self) -> &'static str {
        "indexeddb"
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>, StorageError> {
        Ok(self.image().objects.keys().filter(|k| k.starts_with(prefix)).cloned().collect())
    }

    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, StorageError> {
        validate_object_name(name)?;
        Ok(self.image().objects.get(name).map(|e| e.bytes.clone()))
    }

    fn append(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        validate_object_name(name)?;
        let mut image = self.image();
        let entry = image.objects.entry(name.to_string()).or_insert_with(|| Entry { rewrite: true, ..Entry::default() });
        entry.bytes.extend_from_slice(bytes);
        Ok(())
    }

    fn append_at(&self, name: &str, expected_len: u64, bytes: &[u8]) -> Result<(), StorageError> {
        validate_object_name(name)?;
        let mut image = self.image();
        let actual = image.objects.get(name).map_or(0, |e| e.bytes.len() as u64);
        if actual != expected_len {
            return Err(StorageError::Conflict { object: name.to_string(), expected: expected_len, actual });
        }
        let entry = image.objects.entry(name.to_string()).or_insert_with(|| Entry { rewrite: true, ..Entry::default() });
        entry.bytes.extend_from_slice(bytes);
        Ok(())
    }

    fn truncate(&self, name: &str, len: u64) -> Result<(), StorageError> {
        validate_object_name(name)?;
        let mut image = self.image();
        if let Some(entry) = image.objects.get_mut(name) {
            if len < entry.bytes.len() as u64 {
                entry.bytes.truncate(len as usize);
                entry.rewrite = true;
                image.dirty.insert(name.to_string());
            }
        }
        Ok(())
    }

    fn sync(&self, name: &str) -> Result<(), StorageError> {
        validate_object_name(name)?;
        let mut image = self.image();
        if image.objects.contains_key(name) {
            image.dirty.insert(name.to_string());
        }
        Ok(())
    }

    fn write_atomic(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        validate_object_name(name)?;
        let mut image = self.image();
        image.objects.insert(name.to_string(), Entry { bytes: bytes.to_vec(), persisted: 0, rewrite: true });
        image.dirty.insert(name.to_string());
        Ok(())
    }

    fn remove(&self, name: &str) -> Result<(), StorageError> {
        validate_object_name(name)?;
        let mut image = self.image();
        if image.objects.remove(name).is_some() {
            image.dirty.insert(name.to_string());
        }
        Ok(())
    }

    fn location(&self, name: &str) -> String {
        format!("indexeddb://{}/{name}", self.database)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies a batch to a map of segments, as the IndexedDB commit does.
    fn apply(store: &mut BTreeMap<(String, u64), Vec<u8>>, batch: &PersistBatch) {
        for op in &batch.ops {
            match op {
                PersistOp::Rewrite { name, bytes } => {
                    store.retain(|(n, _), _| n != name);
                    store.insert((name.clone(), 0), bytes.clone());
                }
                PersistOp::Extend { name, offset, bytes } => {
                    store.insert((name.clone(), *offset), bytes.clone());
                }
                PersistOp::Delete { name } => store.retain(|(n, _), _| n != name),
            }
        }
    }

    fn reload(store: &BTreeMap<(String, u64), Vec<u8>>) -> ImageStorage {
        ImageStorage::from_segments("t", store.iter().map(|((n, o), b)| (n.clone(), *o, b.clone()))).unwrap()
    }

    #[test]
    fn passes_storage_conformance() {
        mentisdb_core::storage::conformance::run_all(&ImageStorage::new("conformance"));
        let threads = mentisdb_std_host::ScopedThreads::new(8);
        mentisdb_core::storage::conformance::run_concurrent(&ImageStorage::new("concurrent"), &|n, job| mentisdb_core::Parallelism::run(&threads, n, job));
    }

    #[test]
    fn only_durable_objects_are_persisted_and_appends_extend() {
        let s = ImageStorage::new("t");
        let mut store = BTreeMap::new();
        s.append("chains/a.mdb", b"head").unwrap();
        s.append("chains/b.mdb", b"never synced").unwrap();
        s.sync("chains/a.mdb").unwrap();
        let batch = s.take_pending();
        assert_eq!(batch.ops, vec![PersistOp::Rewrite { name: "chains/a.mdb".into(), bytes: b"head".to_vec() }]);
        apply(&mut store, &batch);
        s.append("chains/a.mdb", b"+one").unwrap();
        s.sync("chains/a.mdb").unwrap();
        let batch = s.take_pending();
        assert_eq!(batch.ops, vec![PersistOp::Extend { name: "chains/a.mdb".into(), offset: 4, bytes: b"+one".to_vec() }]);
        apply(&mut store, &batch);
        assert!(s.take_pending().is_empty(), "nothing new to commit");
        let back = reload(&store);
        assert_eq!(back.read("chains/a.mdb").unwrap().as_deref(), Some(&b"head+one"[..]));
        assert_eq!(back.read("chains/b.mdb").unwrap(), None, "an object never synced is not persisted");
    }

    #[test]
    fn truncate_atomic_replace_and_remove_rewrite() {
        let s = ImageStorage::new("t");
        let mut store = BTreeMap::new();
        s.append("o/x", b"0123456789").unwrap();
        s.sync("o/x").unwrap();
        s.write_atomic("o/y.json", b"{}").unwrap();
        apply(&mut store, &s.take_pending());
        s.truncate("o/x", 3).unwrap();
        s.append("o/x", b"ab").unwrap();
        s.sync("o/x").unwrap();
        s.write_atomic("o/y.json", b"{\"v\":2}").unwrap();
        s.append("o/z", b"gone").unwrap();
        s.sync("o/z").unwrap();
        s.remove("o/z").unwrap();
        apply(&mut store, &s.take_pending());
        let back = reload(&store);
        assert_eq!(back.read("o/x").unwrap().as_deref(), Some(&b"012ab"[..]));
        assert_eq!(back.read("o/y.json").unwrap().as_deref(), Some(&b"{\"v\":2}"[..]));
        assert_eq!(back.read("o/z").unwrap(), None);
        assert_eq!(store.len(), 2, "a rewrite leaves one segment per object: {store:?}");
    }

    #[test]
    fn failed_commit_is_retried_as_a_rewrite() {
        let s = ImageStorage::new("t");
        let mut store = BTreeMap::new();
        s.append("o/x", b"abc").unwrap();
        s.sync("o/x").unwrap();
        apply(&mut store, &s.take_pending());
        s.append("o/x", b"def").unwrap();
        s.sync("o/x").unwrap();
        let lost = s.take_pending();
        s.commit_failed(&lost);
        assert!(s.has_pending());
        s.append("o/x", b"ghi").unwrap();
        s.sync("o/x").unwrap();
        let retry = s.take_pending();
        assert_eq!(retry.ops, vec![PersistOp::Rewrite { name: "o/x".into(), bytes: b"abcdefghi".to_vec() }]);
        apply(&mut store, &retry);
        assert_eq!(reload(&store).read("o/x").unwrap().as_deref(), Some(&b"abcdefghi"[..]));
    }

    #[test]
    fn gaps_and_foreign_names_are_refused_on_load() {
        let gap = ImageStorage::from_segments("t", vec![("o/x".into(), 0, b"ab".to_vec()), ("o/x".into(), 5, b"cd".to_vec())]);
        assert!(gap.unwrap_err().0.contains("offset 5"));
        let foreign = ImageStorage::from_segments("t", vec![("../etc".into(), 0, b"x".to_vec())]);
        assert!(foreign.is_err());
    }

    #[test]
    fn many_segments_are_compacted() {
        let segs: Vec<(String, u64, Vec<u8>)> = (0..=COMPACT_SEGMENTS as u64).map(|i| ("o/x".to_string(), i, vec![b'a'])).collect();
        let s = ImageStorage::from_segments("t", segs).unwrap();
        let batch = s.take_pending();
        assert_eq!(batch.ops, vec![PersistOp::Rewrite { name: "o/x".into(), bytes: vec![b'a'; COMPACT_SEGMENTS + 1] }]);
    }
}
