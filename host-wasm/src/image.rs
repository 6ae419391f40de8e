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
//!
//! Once a chain object's bytes are committed, the image lets go of them
//! (they are the bulk of a page's memory, and the engine holds every
//! thought decoded anyway): the entry keeps only the bytes after the
//! committed length. Appends, `read_from` past that length and conditional
//! appends still work; a whole read of a released object (an export) fails
//! with [`StorageError::Unreachable`] and names the object in
//! [`ImageStorage::take_wanted`], so the JS method can load it back from
//! IndexedDB ([`ImageStorage::load_back`]) and run the call again.

use mentisdb_core::naming::is_chain_object;
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
    /// The object's bytes from `released` on.
    bytes: Vec<u8>,
    /// Leading bytes held only by IndexedDB (committed, then let go).
    /// Zero whenever `rewrite` is set.
    released: u64,
    /// Length already handed to a commit as segments.
    persisted: u64,
    /// The stored segments no longer describe a prefix of the object.
    rewrite: bool,
}

impl Entry {
    /// The object's whole length, released bytes included.
    fn len(&self) -> u64 {
        self.released + self.bytes.len() as u64
    }

    /// The bytes from `offset` on, when the image still holds them.
    fn from(&self, offset: u64) -> Option<&[u8]> {
        let start = offset.checked_sub(self.released)?;
        self.bytes.get(start.min(self.bytes.len() as u64) as usize..)
    }
}

#[derive(Debug, Default)]
struct Image {
    objects: BTreeMap<String, Entry>,
    /// Objects that reached a durability point since the last batch.
    dirty: BTreeSet<String>,
    /// Released objects a read asked for since the last `take_wanted`.
    wanted: BTreeSet<String>,
    /// Calls that changed an object (append, truncate, replace, remove).
    changes: u64,
}

impl Image {
    /// The "load it back first" refusal of a read of released bytes.
    fn released(&mut self, name: &str) -> StorageError {
        self.wanted.insert(name.to_string());
        StorageError::Unreachable(format!("'{name}' is kept in IndexedDB only; the page loads it back, then call again"))
    }
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
    /// commit (later batches extend from there). Then call
    /// [`ImageStorage::commit_done`] or, if the commit failed,
    /// [`ImageStorage::commit_failed`].
    pub fn take_pending(&self) -> PersistBatch {
        let mut image = self.image();
        let dirty = std::mem::take(&mut image.dirty);
        let mut ops = Vec::with_capacity(dirty.len());
        for name in dirty {
            match image.objects.get_mut(&name) {
                None => ops.push(PersistOp::Delete { name }),
                Some(entry) => {
                    let len = entry.len();
                    if entry.rewrite || entry.persisted > len {
                        debug_assert_eq!(entry.released, 0, "a rewrite needs the whole object");
                        ops.push(PersistOp::Rewrite { name, bytes: entry.bytes.clone() });
                    } else if let Some(tail) = entry.from(entry.persisted).filter(|t| !t.is_empty()) {
                        ops.push(PersistOp::Extend { name, offset: entry.persisted, bytes: tail.to_vec() });
                    }
                    entry.persisted = len;
                    entry.rewrite = false;
                }
            }
        }
        PersistBatch { ops }
    }

    /// After a batch committed: lets go of every chain object's committed
    /// bytes ([`ImageStorage::release_committed`]).
    pub fn commit_done(&self) {
        self.release_committed();
    }

    /// Marks the objects of a failed batch dirty again. An IndexedDB
    /// transaction is all or nothing, so each object is back where the
    /// batch found it: an extension is taken again from its offset, a
    /// rewrite or a deletion is done again.
    pub fn commit_failed(&self, batch: &PersistBatch) {
        let mut image = self.image();
        for op in &batch.ops {
            let name = match op {
                PersistOp::Rewrite { name, .. } | PersistOp::Delete { name } => {
                    if let Some(entry) = image.objects.get_mut(name) {
                        entry.rewrite = entry.released == 0;
                    }
                    name
                }
                PersistOp::Extend { name, offset, .. } => {
                    if let Some(entry) = image.objects.get_mut(name) {
                        entry.persisted = entry.persisted.min(*offset);
                    }
                    name
                }
            };
            image.dirty.insert(name.clone());
        }
    }

    /// Lets go of the committed bytes of every chain object: the image
    /// keeps only what follows them. Other objects (agent sidecars, the
    /// skill registry, replica states) are small and read whole, so they
    /// stay.
    pub fn release_committed(&self) {
        let mut image = self.image();
        for (name, entry) in image.objects.iter_mut() {
            if entry.rewrite || entry.persisted <= entry.released || !is_chain_object(name) {
                continue;
            }
            let keep = entry.from(entry.persisted).unwrap_or_default().to_vec();
            entry.released = entry.persisted;
            entry.bytes = keep;
        }
    }

    /// The released objects reads asked for since the last call.
    pub fn take_wanted(&self) -> Vec<String> {
        std::mem::take(&mut self.image().wanted).into_iter().collect()
    }

    /// How many calls changed an object so far: a call that failed for
    /// want of released bytes can run again only if this did not move.
    pub fn changes(&self) -> u64 {
        self.image().changes
    }

    /// Gives `name` back the bytes it released, from `stored` (its bytes as
    /// IndexedDB holds them). `false` when `stored` does not reach them (a
    /// commit landed meanwhile: load again).
    pub fn load_back(&self, name: &str, stored: &[u8]) -> bool {
        let mut image = self.image();
        let Some(entry) = image.objects.get_mut(name) else { return true };
        let Some(prefix) = stored.get(..entry.released as usize) else { return false };
        let mut bytes = Vec::with_capacity(prefix.len() + entry.bytes.len());
        bytes.extend_from_slice(prefix);
        bytes.extend_from_slice(&entry.bytes);
        entry.bytes = bytes;
        entry.released = 0;
        true
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
        self.read_from(name, 0)
    }

    fn read_from(&self, name: &str, offset: u64) -> Result<Option<Vec<u8>>, StorageError> {
        validate_object_name(name)?;
        let mut image = self.image();
        let Some(entry) = image.objects.get(name) else { return Ok(None) };
        match entry.from(offset) {
            Some(bytes) => Ok(Some(bytes.to_vec())),
            None => Err(image.released(name)),
        }
    }

    fn append(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        validate_object_name(name)?;
        let mut image = self.image();
        image.changes += 1;
        let entry = image.objects.entry(name.to_string()).or_insert_with(|| Entry { rewrite: true, ..Entry::default() });
        entry.bytes.extend_from_slice(bytes);
        Ok(())
    }

    fn append_at(&self, name: &str, expected_len: u64, bytes: &[u8]) -> Result<(), StorageError> {
        validate_object_name(name)?;
        let mut image = self.image();
        let actual = image.objects.get(name).map_or(0, Entry::len);
        if actual != expected_len {
            return Err(StorageError::Conflict { object: name.to_string(), expected: expected_len, actual });
        }
        image.changes += 1;
        let entry = image.objects.entry(name.to_string()).or_insert_with(|| Entry { rewrite: true, ..Entry::default() });
        entry.bytes.extend_from_slice(bytes);
        Ok(())
    }

    fn truncate(&self, name: &str, len: u64) -> Result<(), StorageError> {
        validate_object_name(name)?;
        let mut image = self.image();
        let Some(entry) = image.objects.get_mut(name) else { return Ok(()) };
        if len >= entry.len() {
            return Ok(());
        }
        if len < entry.released || (len < entry.persisted && entry.released > 0) {
            // Cutting into committed bytes (never done past open) needs the whole object.
            return Err(image.released(name));
        }
        entry.bytes.truncate((len - entry.released) as usize);
        // Segments past the cut are stored only when it cuts committed bytes.
        if len < entry.persisted {
            entry.rewrite = true;
            image.dirty.insert(name.to_string());
        }
        image.changes += 1;
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
        image.changes += 1;
        image.objects.insert(name.to_string(), Entry { bytes: bytes.to_vec(), rewrite: true, ..Entry::default() });
        image.dirty.insert(name.to_string());
        Ok(())
    }

    fn remove(&self, name: &str) -> Result<(), StorageError> {
        validate_object_name(name)?;
        let mut image = self.image();
        if image.objects.remove(name).is_some() {
            image.changes += 1;
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
    fn failed_commit_is_taken_again_from_where_it_stood() {
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
        assert_eq!(retry.ops, vec![PersistOp::Extend { name: "o/x".into(), offset: 3, bytes: b"defghi".to_vec() }]);
        apply(&mut store, &retry);
        assert_eq!(reload(&store).read("o/x").unwrap().as_deref(), Some(&b"abcdefghi"[..]));

        s.write_atomic("o/y", b"new").unwrap();
        let lost = s.take_pending();
        s.commit_failed(&lost);
        assert_eq!(s.take_pending().ops, vec![PersistOp::Rewrite { name: "o/y".into(), bytes: b"new".to_vec() }], "a failed rewrite is done again");
    }

    #[test]
    fn committed_chain_bytes_are_released_and_loaded_back() {
        let chain = "chains/a.mdb";
        let s = ImageStorage::new("t");
        let mut store = BTreeMap::new();
        s.append(chain, b"head").unwrap();
        s.sync(chain).unwrap();
        s.write_atomic("agents/a.json", b"{}").unwrap();
        apply(&mut store, &s.take_pending());
        s.commit_done();
        assert_eq!(s.read("agents/a.json").unwrap().as_deref(), Some(&b"{}"[..]), "only chain objects are released");

        let changes = s.changes();
        assert!(matches!(s.read(chain), Err(StorageError::Unreachable(_))), "a whole read needs the bytes back");
        assert_eq!(s.take_wanted(), vec![chain.to_string()]);
        assert!(s.take_wanted().is_empty());
        assert_eq!(s.read_from(chain, 4).unwrap().as_deref(), Some(&b""[..]), "reading past the committed length works");
        assert_eq!(s.changes(), changes, "reads change nothing");

        s.append_at(chain, 4, b"+one").unwrap();
        assert!(s.changes() > changes);
        assert!(matches!(s.append_at(chain, 4, b"x"), Err(StorageError::Conflict { actual: 8, .. })), "lengths count released bytes");
        s.sync(chain).unwrap();
        let lost = s.take_pending();
        assert_eq!(lost.ops, vec![PersistOp::Extend { name: chain.into(), offset: 4, bytes: b"+one".to_vec() }]);
        s.commit_failed(&lost);
        s.append(chain, b"+two").unwrap();
        s.sync(chain).unwrap();
        let retry = s.take_pending();
        assert_eq!(retry.ops, vec![PersistOp::Extend { name: chain.into(), offset: 4, bytes: b"+one+two".to_vec() }], "a failed commit needs no released bytes");
        apply(&mut store, &retry);
        s.commit_done();

        s.append(chain, b"unsynced").unwrap();
        s.truncate(chain, 12).unwrap();
        assert_eq!(s.read_from(chain, 12).unwrap().as_deref(), Some(&b""[..]), "unsynced bytes can still be cut");
        assert!(matches!(s.truncate(chain, 2), Err(StorageError::Unreachable(_))), "cutting released bytes is refused");
        s.take_wanted();

        let stored = reload(&store).read(chain).unwrap().unwrap();
        assert!(!s.load_back(chain, b"he"), "stored bytes that stop short of the released ones");
        assert!(s.load_back(chain, &stored));
        assert_eq!(s.read(chain).unwrap().as_deref(), Some(&b"head+one+two"[..]));
        s.release_committed();
        assert!(s.read(chain).is_err(), "released again");
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
