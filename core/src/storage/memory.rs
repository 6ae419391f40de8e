//! An in-memory [`Storage`] backend: for tests, benches and ephemeral use.

use super::{validate_object_name, Storage, StorageError};
use std::collections::BTreeMap;
use std::sync::RwLock;

/// Objects kept in a `BTreeMap` behind a lock. `sync` is a no-op: nothing
/// survives the process, and nothing is expected to.
#[derive(Debug, Default)]
pub struct MemoryStorage {
    objects: RwLock<BTreeMap<String, Vec<u8>>>,
}

impl MemoryStorage {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// A store holding `objects`; every name is checked as the backends check it.
    pub fn from_objects(objects: BTreeMap<String, Vec<u8>>) -> Result<Self, StorageError> {
        objects.keys().try_for_each(|name| validate_object_name(name))?;
        Ok(MemoryStorage { objects: RwLock::new(objects) })
    }

    /// Every object, by name.
    pub fn into_objects(self) -> BTreeMap<String, Vec<u8>> {
        self.objects.into_inner().unwrap_or_else(|e| e.into_inner())
    }

    fn objects_mut(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, Vec<u8>>> {
        self.objects.write().unwrap_or_else(|e| e.into_inner())
    }

    fn objects(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Vec<u8>>> {
        self.objects.read().unwrap_or_else(|e| e.into_inner())
    }
}

impl Storage for MemoryStorage {
    fn backend_name(&self) -> &'static str {
        "memory"
    }

    fn quick_appends(&self) -> bool {
        true
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>, StorageError> {
        Ok(self.objects().keys().filter(|k| k.starts_with(prefix)).cloned().collect())
    }

    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, StorageError> {
        validate_object_name(name)?;
        Ok(self.objects().get(name).cloned())
    }

    fn append(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        validate_object_name(name)?;
        let mut objects = self.objects_mut();
        match objects.get_mut(name) {
            Some(object) => object.extend_from_slice(bytes),
            None => {
                objects.insert(name.to_string(), bytes.to_vec());
            }
        }
        Ok(())
    }

    fn truncate(&self, name: &str, len: u64) -> Result<(), StorageError> {
        validate_object_name(name)?;
        if let Some(obj) = self.objects_mut().get_mut(name) {
            obj.truncate(len as usize);
        }
        Ok(())
    }

    fn sync(&self, name: &str) -> Result<(), StorageError> {
        validate_object_name(name)
    }

    fn write_atomic(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        validate_object_name(name)?;
        self.objects_mut().insert(name.to_string(), bytes.to_vec());
        Ok(())
    }

    fn remove(&self, name: &str) -> Result<(), StorageError> {
        validate_object_name(name)?;
        self.objects_mut().remove(name);
        Ok(())
    }

    /// Several engines over one `MemoryStorage` are how the core tests many
    /// daemons on one shared store.
    fn append_at(&self, name: &str, expected_len: u64, bytes: &[u8]) -> Result<(), StorageError> {
        validate_object_name(name)?;
        let mut objects = self.objects_mut();
        let actual = objects.get(name).map_or(0, |o| o.len() as u64);
        if actual != expected_len {
            return Err(StorageError::Conflict { object: name.to_string(), expected: expected_len, actual });
        }
        match objects.get_mut(name) {
            Some(object) => object.extend_from_slice(bytes),
            None => {
                objects.insert(name.to_string(), bytes.to_vec());
            }
        }
        Ok(())
    }

    fn read_from(&self, name: &str, offset: u64) -> Result<Option<Vec<u8>>, StorageError> {
        validate_object_name(name)?;
        Ok(self.objects().get(name).map(|o| o[(offset as usize).min(o.len())..].to_vec()))
    }

    fn location(&self, name: &str) -> String {
        format!("memory:{name}")
    }
}
