//! Offline-first replicas of a daemon's chain, without I/O: the core decides
//! every request and checks every reply; the host only moves bytes.
//!
//! Contract. A [`SyncSession`] makes the local copy of one chain equal to the
//! daemon's, trusting nothing the daemon says that its pinned key does not
//! sign:
//!
//! 1. **Push.** Thoughts written here since the last sync (the local chain
//!    after the last accepted checkpoint) go to `mentisdb_append_batch`, in
//!    order, with their ids: a retried push replays instead of duplicating,
//!    and a signature stays valid (it binds the chain and the thought id,
//!    not the position). Indices they name are mapped to the daemon's.
//! 2. **Checkpoint.** A fresh `mentisdb_checkpoint`, verified with the pinned
//!    key and origin `<signer>/<chain key>`.
//! 3. **Consistency.** When this replica accepted a checkpoint before, the
//!    new one must extend it: same root at the same size, else an RFC 9162
//!    consistency proof that verifies. Anything else is a [`SyncError::Fork`]
//!    carrying both signed checkpoints.
//! 4. **Records.** `mentisdb_chain_records` from the last accepted size up to
//!    the checkpoint's, decoded and verified as opening a chain verifies it
//!    (index, `prev_hash`, hash, form), and the Merkle root of the whole
//!    result must be the checkpoint's root.
//! 5. **Apply.** The local chain becomes the accepted prefix plus those
//!    records (the offline thoughts now sit where the daemon put them, after
//!    the daemon's own), then the checkpoint is stored as accepted
//!    (`replica.rs`). A crash in between is healed by the next sync (the
//!    pushes replay).
//!
//! The host drives it: call [`SyncSession::step`] with `None`, send each
//! [`SyncRequest`] it returns (HTTP `POST <daemon><path>` with the JSON body
//! and the caller's bearer token, or the MCP tool `tool`) and pass the reply
//! to the next `step`, until it returns [`SyncStep::Done`].

mod error;
mod push;
pub mod replica;

pub use error::SyncError;
pub use replica::Accepted;

use crate::checkpoint;
use crate::db::MentisDb;
use crate::merkle::{self, Hash, MerkleTree};
use crate::record::{self, ChainFormat, DecodedChain};
use crate::thought::Thought;
use base64::Engine as _;
use push::Moves;
use serde::Serialize;
use serde_json::{json, Value};

/// Thoughts pushed in one `mentisdb_append_batch`.
const PUSH_BATCH: usize = 256;
/// Records asked for in one `mentisdb_chain_records` page.
const RECORDS_PAGE: u64 = 10_000;
/// Times a sync starts over when local appends race its apply.
const MAX_RESTARTS: u32 = 3;

/// One request for the host to send.
#[derive(Debug, Clone, PartialEq)]
pub struct SyncRequest {
    /// The tool it calls.
    pub tool: &'static str,
    /// Its REST route (always `POST`, relative to the daemon's base URL).
    pub path: &'static str,
    /// The JSON body (the tool's arguments).
    pub body: Value,
}

/// The daemon's answer to a [`SyncRequest`].
#[derive(Debug, Clone, Copy)]
pub struct SyncReply<'a> {
    /// HTTP status (200 for a tool result; an MCP host maps `isError` to 400).
    pub status: u16,
    /// The response body: the tool's JSON result, or `{"error": ...}`.
    pub body: &'a str,
}

/// What [`SyncSession::step`] wants next.
#[derive(Debug, Clone, PartialEq)]
pub enum SyncStep {
    /// Send this and pass the reply to the next `step`.
    Send(SyncRequest),
    /// The local chain now equals the daemon's at `report.tree_size`.
    Done(SyncReport),
}

/// What a finished sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SyncReport {
    /// The chain.
    pub chain_key: String,
    /// Offline thoughts the daemon stored now.
    pub pushed: u64,
    /// Offline thoughts the daemon had already (a retried push).
    pub replayed: u64,
    /// Offline thoughts not pushed because they were forgotten here.
    pub skipped_forgotten: u64,
    /// Offline claim records not pushed: a lease belongs to the store it
    /// was taken on (and a signed thought fenced by one, whose fence tag
    /// its signature covers). Unsigned fenced thoughts are pushed without
    /// their fence tag.
    pub skipped_claims: u64,
    /// Records taken from the daemon and stored here.
    pub pulled: u64,
    /// The accepted checkpoint's tree size (the local chain's length).
    pub tree_size: u64,
    /// Its RFC 9162 root, hex.
    pub root: String,
    /// The local head hash after the sync.
    pub head_hash: Option<String>,
    /// The checkpoint now accepted (signed by the daemon).
    pub checkpoint: String,
}

/// What the session waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Awaiting {
    Start,
    /// A batch of `pending[from..to]`.
    Push { from: usize, to: usize },
    Checkpoint,
    Consistency,
    Records,
    Finished,
}

/// One sync of one chain (see the module doc).
#[derive(Debug)]
pub struct SyncSession {
    chain_key: String,
    signer: String,
    public_key: [u8; 32],
    verifier_key: String,
    accepted: Option<Accepted>,
    /// Local thoughts below this index are the accepted, shared history.
    keep: usize,
    /// The local chain's length when the pending thoughts were taken.
    snapshot_len: usize,
    pending: Vec<Thought>,
    next_push: usize,
    moves: Moves,
    offered: Option<Accepted>,
    pulled: Vec<Thought>,
    /// Binary pages carry each record's recomputed hash when it differs.
    mismatches: Option<Vec<Option<crate::hex_bytes::ThoughtHash>>>,
    format: Option<ChainFormat>,
    awaiting: Awaiting,
    restarts: u32,
    report: SyncReport,
}

impl SyncSession {
    /// A sync of `chain_key` with the daemon whose checkpoint key is
    /// `verifier_key` (`<name>+<key id>+<base64>`, as `mentisdb_identity`
    /// and the daemon's startup line give it; pin it, do not fetch it).
    pub fn new(db: &MentisDb, chain_key: &str, verifier_key: &str) -> Result<SyncSession, SyncError> {
        crate::limits::check_key("chain_key", chain_key).map_err(|e| SyncError::Local(e.to_string()))?;
        let (signer, public_key) = checkpoint::parse_verifier_key(verifier_key.trim()).map_err(|e| SyncError::BadVerifierKey(e.to_string()))?;
        let accepted = replica::load(db.storage(), chain_key)?;
        let mut session = SyncSession {
            chain_key: chain_key.to_string(),
            signer,
            public_key,
            verifier_key: verifier_key.trim().to_string(),
            accepted,
            keep: 0,
            snapshot_len: 0,
            pending: Vec::new(),
            next_push: 0,
            moves: Moves::default(),
            offered: None,
            pulled: Vec::new(),
            mismatches: None,
            format: None,
            awaiting: Awaiting::Start,
            restarts: 0,
            report: SyncReport { chain_key: chain_key.to_string(), ..SyncReport::default() },
        };
        session.plan(db)?;
        Ok(session)
    }

    /// The checkpoint an earlier sync accepted, if any.
    pub fn accepted(&self) -> Option<&Accepted> {
        self.accepted.as_ref()
    }

    /// Advances the sync: `reply` answers the request the previous step
    /// returned (`None` on the first call).
    pub fn step(&mut self, db: &MentisDb, reply: Option<SyncReply<'_>>) -> Result<SyncStep, SyncError> {
        match (self.awaiting, reply) {
            (Awaiting::Start, None) => {}
            (Awaiting::Push { from, to }, Some(r)) => self.took_push(from, to, r)?,
            (Awaiting::Checkpoint, Some(r)) => {
                if let Some(request) = self.took_checkpoint(r)? {
                    return Ok(self.send(Awaiting::Consistency, request));
                }
            }
            (Awaiting::Consistency, Some(r)) => self.took_consistency(r)?,
            (Awaiting::Records, Some(r)) => self.took_records(r)?,
            (Awaiting::Finished, _) => return Err(SyncError::Misuse("the sync is finished")),
            (Awaiting::Start, Some(_)) => return Err(SyncError::Misuse("the first step takes no reply")),
            (_, None) => return Err(SyncError::Misuse("the step needs the reply to the last request")),
        }
        self.next(db)
    }

    /// Takes the local state: what is shared history and what was written here since.
    fn plan(&mut self, db: &MentisDb) -> Result<(), SyncError> {
        let accepted_size = self.accepted.as_ref().map_or(0, |a| a.head.tree_size) as usize;
        let (keep, len, pending) = db.with_chain(&self.chain_key, |chain| match chain {
            None => (0, 0, Vec::new()),
            Some(c) => {
                // A local chain shorter than what was accepted was replaced
                // here: push all of it (replays where the daemon has it).
                let keep = if c.len() >= accepted_size { accepted_size } else { 0 };
                (keep, c.len(), c.thoughts().range(keep..).cloned().collect())
            }
        })?;
        self.keep = keep;
        self.snapshot_len = len;
        self.pending = pending;
        self.next_push = 0;
        self.moves = Moves::keeping(keep as u64);
        self.offered = None;
        self.pulled.clear();
        self.mismatches = None;
        self.format = None;
        Ok(())
    }

    fn send(&mut self, awaiting: Awaiting, request: SyncRequest) -> SyncStep {
        self.awaiting = awaiting;
        SyncStep::Send(request)
    }

    fn next(&mut self, db: &MentisDb) -> Result<SyncStep, SyncError> {
        if let Some((from, to, items)) = self.next_batch() {
            let body = json!({"chain_key": self.chain_key, "thoughts": items});
            return Ok(self.send(Awaiting::Push { from, to }, SyncRequest { tool: "mentisdb_append_batch", path: "/v1/thoughts/batch", body }));
        }
        let Some(offered) = &self.offered else {
            let body = json!({"chain_key": self.chain_key});
            return Ok(self.send(Awaiting::Checkpoint, SyncRequest { tool: "mentisdb_checkpoint", path: "/v1/checkpoint", body }));
        };
        let have = (self.keep + self.pulled.len()) as u64;
        if have < offered.head.tree_size {
            let body = json!({"chain_key": self.chain_key, "from": have, "to": offered.head.tree_size, "limit": RECORDS_PAGE});
            return Ok(self.send(Awaiting::Records, SyncRequest { tool: "mentisdb_chain_records", path: "/v1/chains/records", body }));
        }
        self.apply(db)
    }

    /// The next batch of pending thoughts to push: `pending[from..to]` as
    /// items. A batch ends before a thought naming a pending thought of the
    /// same batch (its daemon index is known only from the reply).
    fn next_batch(&mut self) -> Option<(usize, usize, Vec<Value>)> {
        let from = self.next_push;
        let mut items = Vec::new();
        let mut i = from;
        while i < self.pending.len() && items.len() < PUSH_BATCH {
            let t = &self.pending[i];
            if t.is_forgotten() {
                self.report.skipped_forgotten += 1;
                i += 1;
                continue;
            }
            if push::stays_local(t) {
                self.report.skipped_claims += 1;
                i += 1;
                continue;
            }
            let batch_starts_at = self.pending[from].index;
            if !items.is_empty() && self.moves.waits_for_unpushed(t, batch_starts_at) {
                break;
            }
            items.push(push::push_item(t, &self.moves));
            i += 1;
        }
        self.next_push = i;
        (!items.is_empty()).then_some((from, i, items))
    }

    fn took_push(&mut self, from: usize, to: usize, r: SyncReply<'_>) -> Result<(), SyncError> {
        const WHAT: &str = "mentisdb_append_batch";
        let v = ok_json(WHAT, r)?;
        let stored = v["thoughts"].as_array().ok_or_else(|| bad(WHAT, "no thoughts array"))?;
        let sent: Vec<&Thought> = self.pending[from..to].iter().filter(|t| !t.is_forgotten() && !push::stays_local(t)).collect();
        if stored.len() != sent.len() {
            return Err(bad(WHAT, format!("{} thoughts stored for {} sent", stored.len(), sent.len())));
        }
        for (t, s) in sent.into_iter().zip(stored) {
            let index = s["index"].as_u64().ok_or_else(|| bad(WHAT, "a thought without index"))?;
            if s["thought_id"].as_str() != Some(&*t.id.as_text()) {
                return Err(bad(WHAT, format!("thought '{}' came back as {}", t.id, s["thought_id"])));
            }
            self.moves.record(t.index, index);
            if s["replay"].as_bool() == Some(true) {
                self.report.replayed += 1;
            } else {
                self.report.pushed += 1;
            }
        }
        Ok(())
    }

    /// Verifies the offered checkpoint against the pinned key and the one
    /// accepted before; returns the consistency proof request when one is needed.
    fn took_checkpoint(&mut self, r: SyncReply<'_>) -> Result<Option<SyncRequest>, SyncError> {
        const WHAT: &str = "mentisdb_checkpoint";
        if r.status == 404 {
            // The daemon has no such chain (nothing was pushed).
            if let Some(accepted) = &self.accepted {
                return Err(self.fork(accepted, None, "the daemon no longer has the chain".to_string()));
            }
            let empty = Accepted { note: String::new(), head: checkpoint::TreeHead { origin: String::new(), tree_size: 0, root: merkle::empty_root() } };
            self.offered = Some(empty);
            return Ok(None);
        }
        let v = ok_json(WHAT, r)?;
        let note = v["checkpoint"].as_str().ok_or_else(|| bad(WHAT, "no checkpoint"))?.to_string();
        let head = checkpoint::verify_checkpoint(&note, &self.signer, &self.public_key).map_err(|e| SyncError::BadCheckpoint(e.to_string()))?;
        let expected = checkpoint::origin(&self.signer, &self.chain_key);
        if head.origin != expected {
            return Err(SyncError::WrongOrigin { expected, found: head.origin });
        }
        let offered = Accepted { note, head };
        let mut request = None;
        if let Some(accepted) = &self.accepted {
            let (m, n) = (accepted.head.tree_size, offered.head.tree_size);
            if n < m {
                return Err(self.fork(accepted, Some(&offered), format!("it now has {n} thoughts where it had {m}")));
            }
            if n == m && offered.head.root != accepted.head.root {
                return Err(self.fork(accepted, Some(&offered), format!("two different roots at size {n}")));
            }
            if n > m && m > 0 {
                let body = json!({"chain_key": self.chain_key, "first": m, "second": n});
                request = Some(SyncRequest { tool: "mentisdb_consistency_proof", path: "/v1/proofs/consistency", body });
            }
        }
        let acknowledged = self.moves.acknowledged();
        if offered.head.tree_size < acknowledged {
            return Err(bad(WHAT, format!("the checkpoint covers {} thoughts, fewer than the daemon just acknowledged", offered.head.tree_size)));
        }
        self.offered = Some(offered);
        Ok(request)
    }

    fn took_consistency(&mut self, r: SyncReply<'_>) -> Result<(), SyncError> {
        const WHAT: &str = "mentisdb_consistency_proof";
        let (Some(accepted), Some(offered)) = (&self.accepted, &self.offered) else { return Err(SyncError::Misuse("no checkpoints to prove")) };
        let v = ok_json(WHAT, r)?;
        let proof = v["hashes"].as_array().ok_or_else(|| bad(WHAT, "no hashes"))?.iter().map(|h| h.as_str().and_then(hash_of_hex)).collect::<Option<Vec<Hash>>>();
        let (m, n) = (accepted.head.tree_size, offered.head.tree_size);
        let proves = proof.is_some_and(|p| merkle::verify_consistency(m, n, &accepted.head.root, &offered.head.root, &p));
        if !proves {
            return Err(self.fork(accepted, Some(offered), format!("its consistency proof from size {m} to {n} does not verify")));
        }
        Ok(())
    }

    fn took_records(&mut self, r: SyncReply<'_>) -> Result<(), SyncError> {
        const WHAT: &str = "mentisdb_chain_records";
        let v = ok_json(WHAT, r)?;
        let have = (self.keep + self.pulled.len()) as u64;
        if v["from"].as_u64() != Some(have) {
            return Err(bad(WHAT, format!("records from {} where {have} was asked", v["from"])));
        }
        let format = match v["storage_adapter"].as_str() {
            Some("binary") => ChainFormat::Binary,
            Some("jsonl") => ChainFormat::Jsonl,
            other => return Err(bad(WHAT, format!("unknown storage_adapter {other:?}"))),
        };
        let bytes = v["records_base64"].as_str().and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok()).ok_or_else(|| bad(WHAT, "records_base64 is not base64"))?;
        let page = record::decode_suffix(format, &bytes).map_err(|e| self.bad_records(e.to_string()))?;
        if page.valid_len != bytes.len() || page.thoughts.len() as u64 != v["count"].as_u64().unwrap_or(u64::MAX) || page.thoughts.is_empty() {
            return Err(bad(WHAT, format!("{} bytes, {} whole records, count {}", bytes.len(), page.thoughts.len(), v["count"])));
        }
        self.format = Some(format);
        self.mismatches = match (self.pulled.is_empty(), self.mismatches.take(), page.body_hash_mismatches) {
            (true, _, m) => m,
            (false, Some(mut all), Some(m)) => {
                all.extend(m);
                Some(all)
            }
            _ => None,
        };
        self.pulled.extend(page.thoughts);
        Ok(())
    }

    /// Checks the pulled records against the checkpoint's root, stores them
    /// and accepts the checkpoint; starts over when local appends raced.
    fn apply(&mut self, db: &MentisDb) -> Result<SyncStep, SyncError> {
        let offered = self.offered.clone().expect("apply runs after the checkpoint");
        let key = self.chain_key.clone();
        let tree = db.with_chain(&key, |c| c.filter(|c| c.len() >= self.keep).map(|c| c.merkle().truncated(self.keep as u64)))?;
        let Some(mut tree) = tree.or_else(|| (self.keep == 0).then(MerkleTree::new)) else { return self.restart(db) };
        if let Some(accepted) = &self.accepted {
            if self.keep as u64 == accepted.head.tree_size && tree.root(self.keep as u64).ok() != Some(accepted.head.root) {
                return Err(SyncError::LocalDiverged { chain_key: key, size: self.keep as u64 });
            }
        }
        self.pulled.iter().for_each(|t| tree.push_leaf_hash(merkle::thought_leaf_hash(&t.hash)));
        if tree.root(offered.head.tree_size).ok() != Some(offered.head.root) {
            return Err(self.bad_records(format!("they do not hash to the checkpoint's root at size {}", offered.head.tree_size)));
        }
        let pulled = std::mem::take(&mut self.pulled);
        let count = pulled.len() as u64;
        if offered.head.tree_size > 0 {
            let format = self.format.unwrap_or(ChainFormat::Binary);
            let tail = DecodedChain { format, chain_key: key.clone(), thoughts: pulled.into(), valid_len: 0, body_hash_mismatches: self.mismatches.take(), label_sets: Vec::new() };
            let applied = db.replace_tail(&key, format, self.keep, self.snapshot_len, tail).map_err(|e| match e {
                crate::error::ToolError::ChainRefused { error, .. } => self.bad_records(error.to_string()),
                other => other.into(),
            })?;
            if !applied {
                return self.restart(db);
            }
            replica::save(db.storage(), &key, &self.verifier_key, &offered)?;
        }
        self.awaiting = Awaiting::Finished;
        self.report.pulled = count;
        self.report.tree_size = offered.head.tree_size;
        self.report.root = hex::encode(offered.head.root);
        self.report.head_hash = db.with_chain(&key, |c| c.and_then(|c| c.head().map(|t| t.hash.to_hex())))?;
        self.report.checkpoint = offered.note.clone();
        self.accepted = (offered.head.tree_size > 0).then_some(offered).or(self.accepted.take());
        Ok(SyncStep::Done(self.report.clone()))
    }

    /// Local appends landed meanwhile: push them too and pull again.
    fn restart(&mut self, db: &MentisDb) -> Result<SyncStep, SyncError> {
        self.restarts += 1;
        if self.restarts > MAX_RESTARTS {
            return Err(SyncError::Busy(self.chain_key.clone()));
        }
        self.plan(db)?;
        self.next(db)
    }

    fn fork(&self, accepted: &Accepted, offered: Option<&Accepted>, reason: String) -> SyncError {
        SyncError::Fork { chain_key: self.chain_key.clone(), reason, accepted: accepted.note.clone(), offered: offered.map(|o| o.note.clone()) }
    }

    fn bad_records(&self, reason: String) -> SyncError {
        SyncError::BadRecords { chain_key: self.chain_key.clone(), reason }
    }
}

fn bad(what: &'static str, message: impl Into<String>) -> SyncError {
    SyncError::BadReply { what, message: message.into() }
}

/// The reply's JSON, or the daemon's error.
fn ok_json(what: &'static str, r: SyncReply<'_>) -> Result<Value, SyncError> {
    let v: Option<Value> = serde_json::from_str(r.body).ok();
    if !(200..300).contains(&r.status) {
        let message = v.as_ref().and_then(|v| v["error"].as_str()).map_or_else(|| crate::text::truncate_chars(r.body, 300).to_string(), str::to_string);
        return Err(SyncError::Daemon { what, status: r.status, message });
    }
    v.ok_or_else(|| bad(what, "not JSON"))
}

fn hash_of_hex(h: &str) -> Option<Hash> {
    hex::decode(h).ok()?.try_into().ok()
}
