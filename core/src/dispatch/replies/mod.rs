//! One typed reply per tool: the JSON every tool returns, as Rust types.
//!
//! Each tool's result is one of these structs, serialized once by its
//! handler. Hosts that read a result back (the WASI component's typed
//! exports, tests) deserialize it into the same type instead of reading
//! fields by name, and the drift test (`core/tests/integration/host_declarations.rs`)
//! compares their JSON Schemas ([`crate::output_schema`]) with the
//! TypeScript declarations and the WIT records.
//!
//! Replies that carry thoughts are generic over the thought: the engine
//! writes them with `&Thought` borrowed from the chain while its read lock
//! is held (no thought is cloned for a response), a host reads them back with
//! the default owned [`Thought`](crate::Thought). The ranked replies are
//! written only, so they borrow everything.
//!
//! Field order in each struct is the order the fields are written; JSON
//! readers must not depend on it.

mod agents;
mod chain;
mod claims;
mod facts;
mod presence;
mod proofs;
mod ranked;
mod reviews;
mod skills;
mod sync;
#[cfg(feature = "daemon-tools")]
mod webhooks;

pub use agents::{AgentListReply, AgentRegistryReply, AgentReply, AgentSummary, EntityTypeListReply, EntityTypeReply};
pub use chain::{
    AppendReply, BootstrapReply, BranchReply, CatchUpReply, ChainInfo, DeleteChainReply, ExportChainReply, ImportChainReply, ImportMarkdownReply, ForgetReply, GenesisReply, GetThoughtReply, HeadReply, ListChainsReply, MarkdownReply, MergeReply,
    RecentContextReply, SearchReply, TraverseReply,
};
pub use claims::{ClaimListReply, ClaimReply, LeaseReply};
pub use facts::{FactClosedReply, FactConflictReply, FactConflictsReply, FactListReply, FactRecordedReply, FactReply};
pub use reviews::{ReviewDecidedReply, ReviewListReply, ReviewReply, ReviewRequestedReply};
pub use presence::{PresenceListReply, PresenceReply};
pub use proofs::{CheckpointReply, ConsistencyProofReply, IdentityReply, InclusionProofReply};
pub use ranked::{
    BundleReply, ContextBundlesReply, GraphPathReply, LexicalHitReply, LexicalSearchReply, Locator, RankedHitReply, RankedSearchReply, ReachedReply,
    ResolveContextReply, ScoreReply, SeedReply, VectorMetadata, VectorStatus, VectorsRebuildReply, SummaryCandidateReply, SummaryCandidatesReply, SummaryGroupReply, ViaReply,
};
pub(crate) use ranked::write_ranked_reply;
pub use skills::{
    ReadSkillReply, SkillListReply, SkillManifest, SkillManifestReply, SkillReply, SkillSummary, SkillVersionEntry,
    SkillVersionsReply,
};
pub use sync::{AppendBatchReply, BatchItemReply, ChainRecordsReply};
#[cfg(feature = "daemon-tools")]
pub use webhooks::{WebhookDeletedReply, WebhookListReply, WebhookRegisteredReply};
