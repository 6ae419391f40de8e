//! Ranked retrieval: find the right memory, not just a matching one.
//!
//! * [`analyzer`] — words, stopwords, Snowball stemming.
//! * [`bm25`] — BM25F as pure functions with named constants.
//! * [`index`] — the per-chain inverted index, graph and vectors, grown by
//!   [`crate::Chain::commit`] one thought at a time (never rebuilt per query).
//! * [`search`] — [`ranked_search`], which runs the stages below in order
//!   over one set of per-query accumulators (`candidates.rs`, with the one
//!   best-first order): terms and phrases (`lexical.rs`), [`expansion`] by
//!   meaning, vectors (`vectors.rs`), conversational context
//!   (`conversation.rs`, over each thought's place in its conversation,
//!   `turns.rs`), the [`graph`], the stretch (`stretch.rs`) and the
//!   assembled hits (`hits.rs`).
//! * [`graph`] — deterministic breadth-first walks over refs and relations,
//!   and the graph stage.
//! * [`rerank`] — optional Reciprocal Rank Fusion (`enable_reranking`).
//! * [`context`] — context bundles (seed + supporting thoughts).
//! * [`embedding`] — the provider trait the host implements, and a
//!   deterministic hashed n-gram provider for tests.
//! * [`expansion`] — with a provider, query words also match the chain's
//!   words of similar meaning.
//! * [`quantized`] — vectors as rows of integer codes with a scale (`i8`
//!   for words, `i16` for thoughts, as fine as `i32` sums allow; integer dot products).
//! * [`sketch`] — thought vectors with a sign sketch each, which shortlists
//!   the nearest thoughts of a large chain without reading every vector.

pub mod analyzer;
pub mod bm25;
mod candidates;
pub mod context;
mod conversation;
mod edges;
mod embedded;
pub mod embedding;
pub mod expansion;
mod corpus;
pub mod graph;
mod hits;
pub mod index;
mod lexical;
mod postings;
mod query;
pub mod quantized;
pub mod rerank;
pub mod search;
pub mod sketch;
mod stretch;
mod terms;
mod turns;
mod varint;
mod vectors;

pub use analyzer::Analyzer;
pub use context::{context_bundles, Bundle};
pub use embedding::{EmbeddingProvider, HashedNgramEmbedder};
pub use corpus::{Corpus, ThoughtMatch};
pub use graph::{walk, GraphOptions, Reached, Via, WalkDirection, WalkPaths};
pub use index::RankedIndex;
pub use hits::GraphHit;
pub use search::{ranked_search, RankedHit, RankedQuery, RankedResults, ScoreParts};
