//! Webhooks (MentisDB 0.10's, made durable): registrations, each one's
//! delivery position in every chain, and the payload a host POSTs.
//!
//! Contract:
//! - A registration names a URL and optional filters (one chain, some
//!   thought types). It is stored with a secret (given, or 32 bytes from the
//!   host's id source, shown only in the registration reply) that the host
//!   signs every delivery with, and with a cursor per chain: the index of the
//!   next thought to deliver. A new registration starts at each chain's
//!   current length (only later appends are delivered); a chain created
//!   later starts at 0.
//! - The chains are the queue: what is pending for a webhook is every
//!   thought at or past its cursor. Only the cursor is written (after each
//!   successful delivery, with `write_atomic`), so no pending delivery is
//!   lost when the daemon stops; one may be delivered twice (at least once),
//!   and the delivery id ([`delivery_id`]) lets a receiver drop repeats.
//! - The core checks nothing on the network: the host that delivers
//!   installs a [`WebhookTargets`] that vets URLs (a host without one answers
//!   registration with `unavailable`).
//!
//! Everything lives in one storage object, [`crate::naming::WEBHOOKS_OBJECT`].

use crate::naming::WEBHOOKS_OBJECT;
use crate::storage::{Storage, StorageError};
use crate::thought::{Thought, ThoughtType};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

/// What a host that delivers webhooks supplies: the check of a target URL
/// at registration (scheme, and the addresses it may reach).
pub trait WebhookTargets: Send + Sync {
    /// `Err(why)` when webhooks may not be sent to `url`.
    fn check_url(&self, url: &str) -> Result<(), String>;
}

/// A webhook as clients see it (`mentisdb_list_webhooks`): 0.10.10's fields
/// plus its delivery state. The secret is never listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Webhook {
    /// Its id (a UUID).
    pub id: String,
    /// Where deliveries are POSTed.
    pub url: String,
    /// Only this chain's appends, when set.
    pub chain_key_filter: Option<String>,
    /// Only thoughts of these types, when set.
    pub thought_type_filter: Option<Vec<ThoughtType>>,
    /// When it was registered (RFC 3339).
    pub created_at: String,
    /// Always true (0.10.10's field; a webhook is deleted, not paused).
    pub active: bool,
    /// Deliveries acknowledged by the receiver (a 2xx answer).
    #[serde(default)]
    pub delivered: u64,
    /// When the latest delivery was acknowledged (RFC 3339).
    #[serde(default)]
    pub last_delivered_at: Option<String>,
    /// Why the latest attempt failed, until a delivery succeeds again.
    #[serde(default)]
    pub last_error: Option<String>,
}

impl Webhook {
    /// Whether an append of `thought` to `chain_key` is for this webhook.
    pub fn wants(&self, chain_key: &str, thought: &Thought) -> bool {
        self.wants_chain(chain_key) && self.thought_type_filter.as_ref().is_none_or(|types| types.contains(&thought.thought_type))
    }

    /// Whether appends to `chain_key` may be for this webhook.
    pub fn wants_chain(&self, chain_key: &str) -> bool {
        self.chain_key_filter.as_deref().is_none_or(|k| k == chain_key)
    }
}

/// A stored registration: what clients see, the secret and the cursors.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Stored {
    #[serde(flatten)]
    hook: Webhook,
    secret: String,
    /// Per chain, the next index to deliver.
    #[serde(default)]
    cursors: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct RegistryFile {
    version: u32,
    webhooks: Vec<Stored>,
}

const REGISTRY_VERSION: u32 = 1;

impl Default for RegistryFile {
    fn default() -> Self {
        RegistryFile { version: REGISTRY_VERSION, webhooks: Vec::new() }
    }
}

/// What a delivering host needs of one webhook.
#[derive(Debug, Clone)]
pub struct DeliveryTarget {
    /// The registration.
    pub webhook: Webhook,
    /// The HMAC-SHA256 key of its deliveries.
    pub secret: String,
    /// Per chain, the next index to deliver (absent: 0).
    pub cursors: BTreeMap<String, u64>,
}

/// The webhook registry of one engine.
#[derive(Default)]
pub struct WebhookStore {
    file: Mutex<RegistryFile>,
    targets: RwLock<Option<Arc<dyn WebhookTargets>>>,
}

impl std::fmt::Debug for WebhookStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookStore").finish_non_exhaustive()
    }
}

/// Why a webhook change failed.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// This host does not deliver webhooks.
    #[error("this host does not deliver webhooks (only the mentisdbd daemon does)")]
    NoDelivery,
    /// The URL may not be a target.
    #[error("{0}")]
    BadUrl(String),
    /// The registry could not be read or written.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl WebhookStore {
    /// Loads [`WEBHOOKS_OBJECT`]; a missing object is an empty registry. A
    /// damaged one is reported and served as empty (registrations are lost,
    /// the chains are not), and rewritten on the next change.
    pub fn open(storage: &dyn Storage) -> Result<(WebhookStore, Option<String>), StorageError> {
        let (file, problem) = match storage.read(WEBHOOKS_OBJECT)? {
            None => (RegistryFile::default(), None),
            Some(bytes) => match serde_json::from_slice::<RegistryFile>(&bytes) {
                Ok(f) if f.version == REGISTRY_VERSION => (f, None),
                Ok(f) => (RegistryFile::default(), Some(format!("unknown webhook registry version {}; webhooks are off until it is replaced", f.version))),
                Err(e) => (RegistryFile::default(), Some(format!("unreadable webhook registry ({e}); webhooks are off until it is replaced"))),
            },
        };
        Ok((WebhookStore { file: Mutex::new(file), targets: RwLock::new(None) }, problem))
    }

    fn lock(&self) -> MutexGuard<'_, RegistryFile> {
        self.file.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reads the registry again (another daemon on a shared store changed
    /// it: it announces `replaced:webhooks.json`), so registrations,
    /// deletions and cursors are the stored ones.
    pub fn reload(&self, storage: &dyn Storage) -> Result<(), StorageError> {
        Self::refresh(storage, &mut self.lock())
    }

    /// Replaces `file` by the stored registry before a change, so a change
    /// made here keeps what other daemons on a shared store wrote (only a
    /// write by another daemon between this read and the following write
    /// can be lost). Failure notes of webhooks still registered are kept
    /// (they live in memory only). A missing or unreadable object leaves
    /// `file` as it is.
    fn refresh(storage: &dyn Storage, file: &mut RegistryFile) -> Result<(), StorageError> {
        let Some(bytes) = storage.read(WEBHOOKS_OBJECT)? else { return Ok(()) };
        let Ok(stored) = serde_json::from_slice::<RegistryFile>(&bytes) else { return Ok(()) };
        if stored.version != REGISTRY_VERSION {
            return Ok(());
        }
        let notes: BTreeMap<String, String> = file.webhooks.iter().filter_map(|s| Some((s.hook.id.clone(), s.hook.last_error.clone()?))).collect();
        *file = stored;
        for s in &mut file.webhooks {
            if s.hook.last_error.is_none() {
                s.hook.last_error = notes.get(&s.hook.id).cloned();
            }
        }
        Ok(())
    }

    fn save(storage: &dyn Storage, file: &RegistryFile) -> Result<(), StorageError> {
        storage.write_atomic(WEBHOOKS_OBJECT, &serde_json::to_vec_pretty(file).expect("the registry serializes"))
    }

    /// Installs (or with `None` removes) the host's URL check; registration
    /// needs one.
    pub fn set_targets(&self, targets: Option<Arc<dyn WebhookTargets>>) {
        *self.targets.write().unwrap_or_else(|e| e.into_inner()) = targets;
    }

    /// Registers `hook` (its id and time already set by the caller) with
    /// `secret`, starting at `heads` (each chain's current length).
    pub fn register(&self, storage: &dyn Storage, hook: Webhook, secret: String, heads: BTreeMap<String, u64>) -> Result<Webhook, WebhookError> {
        let targets = self.targets.read().unwrap_or_else(|e| e.into_inner()).clone().ok_or(WebhookError::NoDelivery)?;
        targets.check_url(&hook.url).map_err(WebhookError::BadUrl)?;
        let mut file = self.lock();
        Self::refresh(storage, &mut file)?;
        file.webhooks.push(Stored { hook: hook.clone(), secret, cursors: heads });
        if let Err(e) = Self::save(storage, &file) {
            file.webhooks.pop();
            return Err(e.into());
        }
        Ok(hook)
    }

    /// Every webhook, in registration order.
    pub fn list(&self) -> Vec<Webhook> {
        self.lock().webhooks.iter().map(|s| s.hook.clone()).collect()
    }

    /// Deletes webhook `id`; `false` when there is none.
    pub fn delete(&self, storage: &dyn Storage, id: &str) -> Result<bool, StorageError> {
        let mut file = self.lock();
        Self::refresh(storage, &mut file)?;
        let Some(at) = file.webhooks.iter().position(|s| s.hook.id == id) else { return Ok(false) };
        let removed = file.webhooks.remove(at);
        if let Err(e) = Self::save(storage, &file) {
            file.webhooks.insert(at, removed);
            return Err(e);
        }
        Ok(true)
    }

    /// What a delivering host works from: every webhook with its secret and cursors.
    pub fn targets(&self) -> Vec<DeliveryTarget> {
        self.lock().webhooks.iter().map(|s| DeliveryTarget { webhook: s.hook.clone(), secret: s.secret.clone(), cursors: s.cursors.clone() }).collect()
    }

    /// Records that webhook `id` is done with chain `chain_key` up to (not
    /// including) `next`: delivered (`delivered_at` set) or skipped by its
    /// filter. Durable when it returns. A deleted webhook is ignored.
    pub fn advance(&self, storage: &dyn Storage, id: &str, chain_key: &str, next: u64, delivered_at: Option<String>) -> Result<(), StorageError> {
        let mut file = self.lock();
        Self::refresh(storage, &mut file)?;
        let Some(s) = file.webhooks.iter_mut().find(|s| s.hook.id == id) else { return Ok(()) };
        let at = s.cursors.entry(chain_key.to_string()).or_insert(0);
        *at = (*at).max(next);
        if let Some(when) = delivered_at {
            s.hook.delivered += 1;
            s.hook.last_delivered_at = Some(when);
            s.hook.last_error = None;
        }
        Self::save(storage, &file)
    }

    /// Starts chain `chain_key` from 0 again for every webhook (it was deleted;
    /// a chain made under the key later is new).
    pub fn forget_chain(&self, storage: &dyn Storage, chain_key: &str) -> Result<(), StorageError> {
        let mut file = self.lock();
        Self::refresh(storage, &mut file)?;
        let mut changed = false;
        for s in &mut file.webhooks {
            changed |= s.cursors.remove(chain_key).is_some();
        }
        if changed {
            Self::save(storage, &file)?;
        }
        Ok(())
    }

    /// Notes why webhook `id`'s latest attempt failed (kept in memory only;
    /// shown by `mentisdb_list_webhooks` until a delivery succeeds).
    pub fn note_failure(&self, id: &str, error: String) {
        if let Some(s) = self.lock().webhooks.iter_mut().find(|s| s.hook.id == id) {
            s.hook.last_error = Some(error);
        }
    }
}

/// The id of the delivery of thought `index` of `chain_key` to webhook `id`:
/// the same on every retry and after a restart (a receiver drops repeats by it).
pub fn delivery_id(webhook_id: &str, chain_key: &str, index: u64) -> String {
    format!("{webhook_id}:{index}:{chain_key}")
}

/// The body POSTed for `thought` of `chain_key`: 0.10.10's payload
/// (`event`, `chain_key`, `thought` with its id, type, content, scores,
/// tags, concepts, agent, index and time, and the send `timestamp`), with
/// the thought's `hash` added.
pub fn payload(chain_key: &str, thought: &Thought, sent_at: &str) -> serde_json::Value {
    serde_json::json!({
        "event": "thought.appended",
        "chain_key": chain_key,
        "thought": {
            "id": thought.id,
            "thought_type": thought.thought_type,
            "content": thought.content,
            "importance": thought.importance,
            "confidence": thought.confidence(),
            "tags": thought.tags,
            "concepts": thought.concepts,
            "agent_id": thought.agent_id,
            "index": thought.index,
            "timestamp": &*thought.timestamp(),
            "hash": thought.hash,
        },
        "timestamp": sent_at,
    })
}
