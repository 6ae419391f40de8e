//! One chain in memory: its thoughts, lookup indices, agent registry, and the
//! verification rules (the append rules are in `append.rs`).
//!
//! The chain never touches storage itself; [`crate::db::MentisDb`] writes
//! the bytes [`Chain::prepare_append`] produces, then calls [`Chain::commit`].

use crate::agents::AgentRegistry;
use crate::canonical::{check_form, compute_thought_hash};
use crate::error::VerifyError;
use crate::record::{ChainFormat, DecodedChain};
use crate::thought::Thought;
use crate::thought_list::ThoughtList;
use crate::hex_bytes::ThoughtHash;
use crate::derived::Derived;
use crate::text_filter::TextSignatures;
use crate::host::{run_collect, Parallelism};
use crate::keyed_hash::KeyedState;
use crate::label::LabelSet;
use crate::lookup::ThoughtLookup;
use crate::ranked::RankedIndex;
use crate::retirements::Retirements;
use std::sync::RwLockReadGuard;

mod append;
mod context;
mod dedup;
mod replay;
mod shared;
mod coordination;
mod secrets;
pub(crate) mod visibility;
mod corpus;

pub use append::{Fencing, NewThought, RelationInput};
pub use replay::{Appended, Prepared};
pub(crate) use secrets::redact_new_thought;

/// An open, verified chain.
///
/// Committing a thought updates only what appends and lookups need (the
/// thoughts, id and hash lookups, agent activity). The query indices (the text
/// filter's signatures, ranked retrieval) are `Derived` (`derived.rs`): they catch up with new thoughts
/// on the first query that needs them.
#[derive(Debug)]
pub struct Chain {
    chain_key: String,
    format: ChainFormat,
    thoughts: ThoughtList,
    by_id: ThoughtLookup,
    by_hash: ThoughtLookup,
    agents: AgentRegistry,
    /// The agent ids and names, tags and concepts of the thoughts, one
    /// allocation per distinct text (`label.rs`).
    labels: LabelSet,
    text_signatures: Derived<TextSignatures>,
    ranked: Derived<RankedIndex>,
    retirements: Derived<Retirements>,
    claims: Derived<crate::claims::ClaimTable>,
    facts: Derived<crate::facts::FactTable>,
    reviews: Derived<crate::reviews::ReviewTable>,
    /// The RFC 9162 Merkle tree over the thoughts' chain hashes (`merkle.rs`).
    merkle: Derived<crate::merkle::MerkleTree>,
    /// How many thoughts are forgotten (so a search over a chain with none
    /// need not look at each thought to ask).
    forgotten: usize,
}

/// Checks `t` as the thought at `position`, after one whose hash is
/// `prev`; `hash_mismatch` is the hash its body really has when that
/// differs from `t.hash`.
fn verify_next(position: u64, prev: Option<&ThoughtHash>, t: &Thought, hash_mismatch: Option<ThoughtHash>) -> Result<(), VerifyError> {
    if t.index != position {
        return Err(VerifyError::IndexGap { position, found: t.index });
    }
    if t.prev_hash.as_ref() != prev {
        return Err(VerifyError::PrevHashMismatch { index: t.index, expected: prev.map(ThoughtHash::to_hex), found: t.prev_hash.map(|h| h.to_hex()) });
    }
    check_form(t).map_err(|reason| VerifyError::BadForm { index: t.index, reason })?;
    if let Some(recomputed) = hash_mismatch {
        return Err(VerifyError::HashMismatch { index: t.index, expected: recomputed.to_hex(), found: t.hash.to_hex() });
    }
    if let Some(bad) = t.refs().iter().find(|r| **r >= t.index) {
        return Err(VerifyError::BadRef { index: t.index, target: *bad });
    }
    match t.parsed_timestamp_ms() {
        Some(_) => Ok(()),
        None => Err(VerifyError::BadTimestamp { index: t.index, timestamp: t.timestamp().to_string() }),
    }
}

impl Chain {
    /// An empty chain whose lookup maps use the fixed default key (tests, tools).
    pub fn new(chain_key: &str, format: ChainFormat) -> Self {
        Self::with_hasher(chain_key, format, KeyedState::default())
    }

    /// An empty chain whose lookup maps are keyed by the host (see `keyed_hash.rs`).
    pub fn with_hasher(chain_key: &str, format: ChainFormat, hasher: KeyedState) -> Self {
        Chain {
            chain_key: chain_key.to_string(),
            format,
            thoughts: ThoughtList::new(),
            by_id: ThoughtLookup::new(hasher, |t| t.id.key()),
            by_hash: ThoughtLookup::new(hasher, |t| (0, t.hash.as_bytes())),
            agents: AgentRegistry::default(),
            labels: LabelSet::with_hasher(hasher),
            text_signatures: Derived::default(),
            ranked: Derived::new(RankedIndex::with_hasher(hasher)),
            retirements: Derived::default(),
            claims: Derived::default(),
            facts: Derived::default(),
            reviews: Derived::default(),
            merkle: Derived::default(),
            forgotten: 0,
        }
    }

    /// Verifies decoded thoughts (hashes, links, indices, refs) and builds the chain.
    pub fn load(decoded: DecodedChain, agents: AgentRegistry) -> Result<Chain, VerifyError> {
        Self::load_with_hasher(decoded, agents, KeyedState::default())
    }

    /// [`Chain::load`] with host-keyed lookup maps.
    pub fn load_with_hasher(decoded: DecodedChain, agents: AgentRegistry, hasher: KeyedState) -> Result<Chain, VerifyError> {
        Self::load_with(decoded, agents, hasher, &crate::host::Sequential)
    }

    /// [`Chain::load_with_hasher`], building the id and hash lookups and the
    /// agents' activity in jobs the host may run at the same time.
    pub fn load_with(decoded: DecodedChain, agents: AgentRegistry, hasher: KeyedState, parallelism: &dyn Parallelism) -> Result<Chain, VerifyError> {
        let mut chain = Chain::with_hasher(&decoded.chain_key, decoded.format, hasher);
        let mut thoughts = decoded.thoughts;
        if decoded.label_sets.is_empty() {
            thoughts.iter_mut().for_each(|t| t.share_labels(&mut chain.labels));
        } else {
            // The decoder shared them, one set per job: a label stays one
            // allocation per job that met it, and new thoughts take the first.
            decoded.label_sets.into_iter().for_each(|set| chain.labels.absorb(set));
        }
        let mut mismatches = decoded.body_hash_mismatches.map(Vec::into_iter);
        for (pos, t) in thoughts.iter().enumerate() {
            let mismatch = match mismatches.as_mut() {
                // Binary: the decoder already hashed the stored body.
                Some(m) => m.next().flatten(),
                None => Some(compute_thought_hash(t)).filter(|h| *h != t.hash),
            };
            let prev = pos.checked_sub(1).map(|p| &thoughts[p].hash);
            verify_next(pos as u64, prev, t, mismatch)?;
        }
        // Three independent structures over the verified thoughts.
        enum Built {
            Lookup(ThoughtLookup),
            Agents(AgentRegistry),
        }
        let lookup = |key_of: crate::lookup::KeyOf| {
            let mut l = ThoughtLookup::new(hasher, key_of);
            l.reserve(thoughts.len());
            (0..thoughts.len()).for_each(|pos| l.insert(&thoughts, pos));
            Built::Lookup(l)
        };
        let agents = std::sync::Mutex::new(Some(agents));
        let built = run_collect(parallelism, 3, |job| match job {
            0 => lookup(|t| t.id.key()),
            1 => lookup(|t| (0, t.hash.as_bytes())),
            _ => {
                let mut agents = agents.lock().unwrap_or_else(|e| e.into_inner()).take().expect("one agents job");
                thoughts.iter().for_each(|t| agents.observe(t));
                Built::Agents(agents)
            }
        });
        for (job, b) in built.into_iter().enumerate() {
            match (job, b) {
                (0, Built::Lookup(l)) => chain.by_id = l,
                (1, Built::Lookup(l)) => chain.by_hash = l,
                (_, Built::Agents(a)) => chain.agents = a,
                _ => unreachable!("job order is kept"),
            }
        }
        chain.forgotten = thoughts.iter().filter(|t| t.is_forgotten()).count();
        chain.thoughts = thoughts;
        Ok(chain)
    }

    /// Chain time at `now_ms` (the engine's clock): never before the newest
    /// thought, as chain time never runs backwards. A thought appended now
    /// is stamped with it; leases and review deadlines are judged at it.
    pub fn time_at(&self, now_ms: i64) -> i64 {
        now_ms.max(self.thoughts.last().map_or(i64::MIN, |t| t.timestamp_ms))
    }

    /// The chain's RFC 9162 Merkle tree, caught up with every committed
    /// thought (built on the first call after opening: about two hashes a
    /// thought; then one leaf a commit). See [`crate::merkle`].
    pub fn merkle(&self) -> RwLockReadGuard<'_, crate::merkle::MerkleTree> {
        self.merkle.get(&self.thoughts)
    }

    /// The chain's key.
    pub fn key(&self) -> &str {
        &self.chain_key
    }

    /// The chain's storage format.
    pub fn format(&self) -> ChainFormat {
        self.format
    }

    /// All thoughts in append order.
    pub fn thoughts(&self) -> &ThoughtList {
        &self.thoughts
    }

    /// Number of thoughts.
    pub fn len(&self) -> usize {
        self.thoughts.len()
    }

    /// Whether the chain has no thoughts.
    pub fn is_empty(&self) -> bool {
        self.thoughts.is_empty()
    }

    /// The newest thought.
    pub fn head(&self) -> Option<&Thought> {
        self.thoughts.last()
    }

    /// The `text` filter's signatures (`text_filter.rs`), caught up with every thought.
    pub(crate) fn text_signatures(&self) -> RwLockReadGuard<'_, TextSignatures> {
        self.text_signatures.get(&self.thoughts)
    }

    /// Looks a thought up by id.
    pub fn by_id(&self, id: &str) -> Option<&Thought> {
        crate::ThoughtId::key_of_text(id, |key| self.by_id.get(&self.thoughts, key)).map(|i| &self.thoughts[i])
    }

    /// [`Chain::by_id`] for an id already parsed (no text made).
    pub(crate) fn by_thought_id(&self, id: &crate::ThoughtId) -> Option<&Thought> {
        self.by_id.get(&self.thoughts, id.key()).map(|i| &self.thoughts[i])
    }

    /// Looks a thought up by hash (lowercase hex; upper case accepted).
    pub fn by_hash(&self, hash: &str) -> Option<&Thought> {
        let hash = ThoughtHash::parse_any_case(hash)?;
        self.by_hash.get(&self.thoughts, (0, hash.as_bytes())).map(|i| &self.thoughts[i])
    }

    /// Looks a thought up by index.
    pub fn by_index(&self, index: u64) -> Option<&Thought> {
        usize::try_from(index).ok().and_then(|i| self.thoughts.get(i))
    }

    /// The ranked-retrieval index, caught up with every thought.
    pub fn ranked_index(&self) -> RwLockReadGuard<'_, RankedIndex> {
        self.ranked.get(&self.thoughts)
    }

    /// Which thoughts later thoughts retire, caught up with every thought
    /// (see [`crate::chain::visibility`]).
    pub(crate) fn retirements(&self) -> RwLockReadGuard<'_, Retirements> {
        self.retirements.get(&self.thoughts)
    }

    /// The chain this one branched from: its genesis thought's
    /// `BranchesFrom` relation names it (MentisDB 0.10's ancestry).
    pub fn branched_from(&self) -> Option<&str> {
        let genesis = self.thoughts.first()?;
        genesis.relations().iter().find(|r| r.kind == crate::thought::RelationKind::BranchesFrom).and_then(|r| r.chain_key.as_deref())
    }

    /// Whether a ranked query would find its indices (the ranked index and
    /// the retirements) caught up and free now, so it reads them without
    /// waiting (see [`crate::derived::Derived::ready_now`]).
    pub(crate) fn ranked_ready_now(&self) -> bool {
        self.ranked.ready_now(&self.thoughts) && self.retirements.ready_now(&self.thoughts)
    }

    /// Brings the query indices up to date by at most `max` thoughts each;
    /// returns whether they cover the whole chain.
    pub fn warm_indexes(&self, max: usize) -> bool {
        let text = self.text_signatures.catch_up_some(&self.thoughts, max);
        self.ranked.catch_up_some(&self.thoughts, max) && text
    }

    /// How many thoughts the ranked index (and with a provider, its
    /// vectors) covers now, without catching up.
    pub fn indexed_len(&self) -> usize {
        self.ranked.covered()
    }

    /// Registers (or clears) the embedding provider; thoughts are embedded
    /// as the ranked index catches up with them.
    pub fn set_embedding_provider(&mut self, provider: Option<std::sync::Arc<dyn crate::ranked::EmbeddingProvider>>) {
        let index = self.ranked.get_mut();
        let covered = index.len();
        index.set_embedder(provider, self.thoughts.range(..covered));
    }

    /// The agent registry.
    pub fn agents(&self) -> &AgentRegistry {
        &self.agents
    }

    /// The agent registry, for registry edits (the caller persists the sidecar).
    pub fn agents_mut(&mut self) -> &mut AgentRegistry {
        &mut self.agents
    }

    /// Whether any thought of the chain is forgotten.
    pub fn has_forgotten(&self) -> bool {
        self.forgotten > 0
    }

    /// Integrity of the tip without re-hashing the chain: the head's hash
    /// recomputes and links to its predecessor. The rest was verified at open
    /// and every later thought was built and hashed by [`Chain::prepare_append`].
    pub fn head_integrity_ok(&self) -> bool {
        match self.thoughts.last() {
            None => true,
            Some(head) => {
                let n = self.thoughts.len();
                let prev = if n >= 2 { Some(self.thoughts[n - 2].hash) } else { None };
                head.prev_hash == prev && compute_thought_hash(head) == head.hash
            }
        }
    }

    /// Adds a prepared (or verified) thought to the in-memory state: one
    /// [`Chain::prepare_append`] made, or verification accepted (its
    /// timestamp is RFC 3339).
    pub fn commit(&mut self, mut t: Thought) {
        debug_assert!(t.parsed_timestamp_ms().is_some(), "a committed thought has a verified RFC 3339 timestamp");
        t.share_labels(&mut self.labels);
        self.forgotten += usize::from(t.is_forgotten());
        self.agents.observe(&t);
        self.thoughts.push(t);
        let pos = self.thoughts.len() - 1;
        self.by_id.insert(&self.thoughts, pos);
        self.by_hash.insert(&self.thoughts, pos);
    }
}
