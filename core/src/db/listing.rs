//! What the engine serves, answered without loading parked chains:
//! keys, counts, storage locations and refused objects.

use super::{read_lock, MentisDb};
use crate::naming;
use crate::record::ChainFormat;

impl MentisDb {
    /// Keys of every served chain (resident or parked), sorted.
    pub fn chain_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = read_lock(&self.chains).keys().cloned().collect();
        keys.extend(read_lock(&self.residency.parked).keys().cloned());
        crate::sorting::sort(&mut keys);
        keys.dedup();
        keys
    }

    /// Storage location of a chain (or where it would be created).
    pub fn storage_location(&self, key: &str) -> String {
        match self.slot(key) {
            Some(slot) => self.storage.location(&slot.object),
            None => match self.parked(key) {
                Some(p) => self.storage.location(&p.object),
                None => self.storage.location(&naming::chain_object(key, self.config.default_format)),
            },
        }
    }

    /// Whether a served chain is stored in `object`.
    pub(crate) fn serves_object(&self, object: &str) -> bool {
        read_lock(&self.chains).values().any(|slot| slot.object == object) || read_lock(&self.residency.parked).values().any(|p| p.object == object)
    }

    /// Chain objects refused at open or load, with why, sorted by object.
    pub(crate) fn refused_objects(&self) -> Vec<(String, String)> {
        read_lock(&self.refused).iter().map(|(object, (_, e))| (object.clone(), e.to_string())).collect()
    }

    /// Storage location of the object backing `key`, when it exists.
    pub fn chain_storage_info(&self, key: &str) -> Option<(ChainFormat, String)> {
        match self.peek_slot(key) {
            Some(s) => Some((read_lock(&s.state).chain.format(), self.storage.location(&s.object))),
            None => self.parked(key).map(|p| (p.format, self.storage.location(&p.object))),
        }
    }

    /// Thought and agent counts of chain `key` without loading it when it is
    /// parked (`mentisdb_list_chains`); `None` when it is not served.
    pub fn chain_counts(&self, key: &str) -> Option<(u64, u64)> {
        match self.peek_slot(key) {
            Some(s) => {
                let st = read_lock(&s.state);
                Some((st.chain.len() as u64, st.chain.agents().len() as u64))
            }
            None => self.parked(key).map(|p| (p.thought_count, p.agent_count)),
        }
    }
}
