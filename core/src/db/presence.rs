//! Presence's way in from the engine ([`crate::presence`] says what it is):
//! a beat replaces its agent session's storage object; a listing reads the
//! chain's entries.

use super::MentisDb;
use crate::error::ToolError;
use crate::naming;
use crate::presence::{Beat, Presence, MAX_SESSIONS, MAX_SINCE_MS};

impl MentisDb {
    /// Records a beat of `beat.agent_id` in chain `key` now; the chain must
    /// exist (a beat never brings a deleted chain back). Answers the
    /// entry. The first beat of a session also tidies the chain's entries:
    /// those older than [`MAX_SINCE_MS`] are removed, and past
    /// [`MAX_SESSIONS`] the least recently seen (so a beat is one read and
    /// one write, and the entries a listing reads stay bounded).
    pub fn heartbeat(&self, key: &str, beat: Beat) -> Result<Presence, ToolError> {
        // Presence belongs to an existing chain and goes when it is deleted:
        // the chain's lock is held (read) while the entry is written, so a
        // delete (which takes it to write) comes wholly before or after.
        let slot = self.slot_or_load(key)?.ok_or_else(|| ToolError::NotFound(format!("chain '{key}' does not exist; presence is kept for an existing chain (append to it or claim a key first)")))?;
        let state = super::read_lock(&slot.state);
        state.live()?;
        let now = self.now_millis();
        let object = naming::presence_object(key, &beat.agent_id, beat.session_id.as_deref().unwrap_or(""));
        let storage = self.storage();
        let known = storage.read(&object)?.and_then(|b| serde_json::from_slice::<Presence>(&b).ok()).filter(|p| p.chain_key == key && now - p.last_seen_ms < MAX_SINCE_MS as i64);
        let first_seen_ms = known.as_ref().map_or(now, |p| p.first_seen_ms);
        let presence = Presence { chain_key: key.to_string(), beat, first_seen_ms, last_seen_ms: now };
        storage.write_atomic(&object, &serde_json::to_vec(&presence).expect("presence serializes"))?;
        self.notify_presence(&presence);
        if known.is_none() {
            let mut entries = self.presence_entries(key)?;
            // Latest first: what is kept comes first.
            entries.sort_by(|a, b| b.1.last_seen_ms.cmp(&a.1.last_seen_ms).then_with(|| a.0.cmp(&b.0)));
            for (i, (name, p)) in entries.iter().enumerate() {
                if (i >= MAX_SESSIONS || now - p.last_seen_ms >= MAX_SINCE_MS as i64) && *name != object {
                    storage.remove(name)?;
                }
            }
        }
        drop(state);
        Ok(presence)
    }

    /// The agents of chain `key` seen within the last `since_ms`, the most
    /// recently seen first.
    pub fn presence(&self, key: &str, since_ms: u64) -> Result<Vec<Presence>, ToolError> {
        let from = self.now_millis().saturating_sub(since_ms.min(MAX_SINCE_MS) as i64);
        let mut seen: Vec<Presence> = self.presence_entries(key)?.into_iter().map(|(_, p)| p).filter(|p| p.last_seen_ms >= from).collect();
        seen.sort_by(|a, b| b.last_seen_ms.cmp(&a.last_seen_ms).then_with(|| a.beat.agent_id.cmp(&b.beat.agent_id)));
        Ok(seen)
    }

    /// Every presence entry stored for chain `key`, with its object name.
    /// An entry that does not read (cut short, another version's) is skipped.
    fn presence_entries(&self, key: &str) -> Result<Vec<(String, Presence)>, ToolError> {
        let storage = self.storage();
        let mut out = Vec::new();
        for name in storage.list(&naming::presence_prefix(key))? {
            let Some(bytes) = storage.read(&name)? else { continue };
            if let Ok(p) = serde_json::from_slice::<Presence>(&bytes) {
                if p.chain_key == key {
                    out.push((name, p));
                }
            }
        }
        Ok(out)
    }
}
