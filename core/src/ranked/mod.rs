//! Ranked retrieval: find the right memory, not just a matching one.
//!
//! * [`analyzer`] — words, stopwords, Snowball stemming.
//! * [`bm25`] — BM25F as pure functions with named constants.
//! * [`index`] — the per-chain inverted index, graph and vectors, grown by
//!   [`crate::Chain::commit`] one thought at a time (never rebuilt per query).
//! * [`graph`] — deterministic breadth-first walks over refs and relations.
//! * [`search`] — scoring and fusion: lexical, graph, relation, importance,
//!   recency and (with an [`EmbeddingProvider`]) vector similarity.
//! * [`context`] — context bundles (seed + supporting thoughts).
//! * [`embedding`] — the provider trait the host implements, and a
//!   deterministic hashed n-gram provider for tests.
//! * [`expansion`] — with a provider, query words also match the chain's
//!   words of similar meaning.

pub mod analyzer;
pub mod bm25;
pub mod context;
pub mod embedding;
pub mod expansion;
pub mod graph;
pub mod index;
pub mod search;

pub use analyzer::Analyzer;
pub use context::{context_bundles, Bundle};
pub use embedding::{EmbeddingProvider, HashedNgramEmbedder};
pub use graph::{walk, Reached, Via, WalkDirection};
pub use index::RankedIndex;
pub use search::{ranked_search, GraphOptions, RankedHit, RankedQuery, RankedResults, ScoreParts};
