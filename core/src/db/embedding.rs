//! The host's embedding provider: registered once for every chain, and
//! chains re-embedded on request.

use super::{read_lock, write_lock, ChainSlot, MentisDb, RebuiltVectors};
use crate::error::ToolError;
use crate::ranked::embedding::embedding_text;
use crate::ranked::EmbeddingProvider;
use std::sync::Arc;

impl MentisDb {
    /// Registers (or with `None` clears) the host's embedding provider.
    /// Every thought of every open chain is embedded now, and every later
    /// thought when it is committed; ranked search then fuses vector
    /// similarity with the lexical score (`backend: "hybrid"`).
    pub fn set_embedding_provider(&self, provider: Option<Arc<dyn EmbeddingProvider>>) {
        *write_lock(&self.embedder) = provider.clone();
        let slots: Vec<Arc<ChainSlot>> = read_lock(&self.chains).values().cloned().collect();
        for slot in slots {
            write_lock(&slot.state).chain.set_embedding_provider(provider.clone());
        }
    }

    /// Embeds every thought of chain `key` again with the registered
    /// provider (the chain's ranked index is built first, whole) and says
    /// how many thoughts have a vector now; without a provider the vectors
    /// are dropped. Vectors are derived, in memory: nothing is written.
    pub fn rebuild_vectors(&self, key: &str) -> Result<RebuiltVectors, ToolError> {
        let slot = self.slot_or_load(key)?.ok_or_else(|| ToolError::NotFound(format!("chain '{key}' not found")))?;
        let provider = self.embedding_provider();
        let mut state = write_lock(&slot.state);
        state.live()?;
        while !state.chain.warm_indexes(usize::MAX) {}
        state.chain.set_embedding_provider(provider.clone());
        let index = state.chain.ranked_index();
        let vectors = index.thought_vectors().rows();
        let model = provider.map(|p| (p.name().to_string(), vectors.dim()));
        Ok(RebuiltVectors { thoughts: state.chain.len(), indexed: vectors.present(), model })
    }

    /// The registered embedding provider.
    pub fn embedding_provider(&self) -> Option<Arc<dyn EmbeddingProvider>> {
        read_lock(&self.embedder).clone()
    }

    /// [`MentisDb::embedding_provider`] without waiting: `None` while it is
    /// being replaced.
    pub(crate) fn embedding_provider_now(&self) -> Option<Option<Arc<dyn EmbeddingProvider>>> {
        self.embedder.try_read().ok().map(|p| p.clone())
    }

    /// What the embedding provider will be asked to embed for the next `max`
    /// thoughts of chain `key` its ranked index does not cover yet: the
    /// position of the first of them and each one's [`embedding_text`], in
    /// order (no texts when the index is caught up, or the chain is not
    /// resident). A host embeds these ahead, outside every lock, and answers
    /// the provider's calls from them during [`MentisDb::warm_chain_from`].
    pub fn unindexed_texts(&self, key: &str, max: usize) -> (usize, Vec<String>) {
        let Some(slot) = self.peek_slot(key) else { return (0, Vec::new()) };
        let state = read_lock(&slot.state);
        let thoughts = state.chain.thoughts();
        let from = state.chain.indexed_len().min(thoughts.len());
        (from, thoughts.range(from..).take(max).map(|t| embedding_text(&t.content).to_string()).collect())
    }

    /// [`MentisDb::warm_chain`] of `count` thoughts, only if the index still
    /// covers exactly `from` (what [`MentisDb::unindexed_texts`] answered);
    /// `false` when a query indexed them meanwhile, so the host's texts
    /// embedded ahead are never spent on other thoughts.
    pub fn warm_chain_from(&self, key: &str, from: usize, count: usize) -> bool {
        let Some(slot) = self.peek_slot(key) else { return false };
        let state = read_lock(&slot.state);
        !state.deleted && state.chain.indexed_len() == from && state.chain.warm_indexes(count)
    }
}
