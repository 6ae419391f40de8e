//! Typed errors, one enum per operation family, and the umbrella [`ToolError`]
//! every host maps to its wire format (REST 400 `{"error"}`, MCP `isError`,
//! a JS `Error`, a WIT error record). Messages are written for humans: they
//! say what was wrong and what is accepted.

pub(crate) use crate::error_kind::ErrorKind;
use crate::record::RecordError;
use crate::storage::StorageError;
pub use crate::agents::AgentError;

/// Why a chain did not verify when it was opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The stored bytes could not be decoded.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// A thought's recomputed hash differs from the stored one.
    #[error("hash mismatch at index {index}: stored {found}, recomputed {expected}")]
    HashMismatch {
        /// Index of the thought.
        index: u64,
        /// The hash recomputed from the thought.
        expected: String,
        /// The hash stored with the thought.
        found: String,
    },
    /// A thought's `prev_hash` does not name the previous thought.
    #[error("broken link at index {index}: prev_hash is {found:?}, previous thought's hash is {expected:?}")]
    PrevHashMismatch {
        /// Index of the thought.
        index: u64,
        /// The previous thought's hash (`None` for the first thought).
        expected: Option<String>,
        /// The thought's stored `prev_hash`.
        found: Option<String>,
    },
    /// Indices are not 0, 1, 2, ...
    #[error("index gap: position {position} holds index {found}")]
    IndexGap {
        /// Position of the thought in the chain.
        position: u64,
        /// The index the thought holds.
        found: u64,
    },
    /// A ref points at a thought that is not earlier in the chain.
    #[error("thought {index} refers to {target}, which is not an earlier thought")]
    BadRef {
        /// Index of the thought holding the ref.
        index: u64,
        /// The index it refers to.
        target: u64,
    },
    /// A thought's stored timestamp is not an RFC 3339 timestamp.
    #[error("thought {index} has a malformed timestamp {timestamp:?} (expected RFC 3339, e.g. 2026-11-22T09:30:00.000Z)")]
    BadTimestamp {
        /// Index of the thought.
        index: u64,
        /// The stored timestamp, as found.
        timestamp: String,
    },
    /// A thought's fields are not a form its schema version allows (e.g. a
    /// schema 1 thought marked forgotten, or a schema 2 thought without salt).
    #[error("thought {index} is malformed: {reason}")]
    BadForm {
        /// Index of the thought.
        index: u64,
        /// What is wrong.
        reason: crate::canonical::FormError,
    },
    /// The object's header names another chain.
    #[error("object belongs to chain '{found}', expected '{expected}'")]
    ChainKeyMismatch {
        /// The chain the object was opened as.
        expected: String,
        /// The chain its header names.
        found: String,
    },
}

/// Why an append was refused. Nothing was stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AppendError {
    /// A claim record whose decision no longer holds: another writer
    /// changed the key's lease first (the claim is decided again).
    #[error("the claim on '{key}' changed meanwhile")]
    ClaimChanged {
        /// The key.
        key: String,
    },
    /// A fenced append whose token's holder no longer holds the key.
    #[error("{message}")]
    Fenced {
        /// Which token, and who holds the key now.
        message: String,
    },
    /// A field failed validation.
    #[error("invalid {field}: {message}")]
    InvalidField {
        /// The field that failed.
        field: &'static str,
        /// Why it failed.
        message: String,
    },
    /// A ref or relation target is not an existing earlier thought.
    #[error("{field} {target} does not point at an existing earlier thought (the chain has {len} thoughts, indices 0..{len})")]
    UnknownTarget {
        /// The field holding the target (`refs` or `relations`).
        field: &'static str,
        /// The target as given.
        target: String,
        /// How many thoughts the chain holds.
        len: u64,
    },
    /// The producing agent is disabled in the registry.
    #[error("agent '{agent_id}' is disabled (status revoked) in chain '{chain_key}' and cannot append; re-enable it with mentisdb_upsert_agent status=active")]
    AgentDisabled {
        /// The disabled agent.
        agent_id: String,
        /// The chain it is disabled in.
        chain_key: String,
    },
    /// The agent has an active key but the append carries no signature.
    #[error("agent '{agent_id}' has an active signing key, so appends must be signed: pass thought_id, signing_key_id and thought_signature (Ed25519 over the signable payload, see docs/architecture/signatures.md)")]
    SignatureRequired {
        /// The agent whose appends must be signed.
        agent_id: String,
    },
    /// The signature did not verify, or names an unknown or revoked key.
    #[error("signature rejected for agent '{agent_id}': {reason}")]
    SignatureInvalid {
        /// The agent the signature claims.
        agent_id: String,
        /// Why it was rejected.
        reason: String,
    },
    /// A thought with this id already exists: what [`crate::Chain::prepare_append`]
    /// answers for a replay (the tools answer the stored thought instead).
    #[error("a thought with id '{id}' already exists in this chain (ids are unique)")]
    DuplicateId {
        /// The id already in the chain.
        id: String,
    },
    /// The client's `thought_id` already names a thought whose fields differ
    /// from this request (a retry must repeat the original request exactly).
    #[error("thought_id '{id}' already names a different thought in this chain (its {field} differs); a retry must repeat the original request exactly, a new thought needs a new thought_id")]
    Conflict {
        /// The id already in the chain.
        id: String,
        /// A field that differs (the first by name).
        field: String,
    },
    /// The client's `thought_id` names a thought that was forgotten since:
    /// a retry cannot bring its content back.
    #[error("thought_id '{id}' names a thought of this chain that was forgotten; it cannot be written again (use a new thought_id)")]
    Forgotten {
        /// The id of the forgotten thought.
        id: String,
    },
    /// A signed append carries a value that secret redaction would replace.
    #[error("refusing a signed thought: its {field} carries a secret of kind {kind} at byte {offset}; the daemon redacts secrets before hashing, which would break the signature, so signed thoughts must be redacted by the client before signing (e.g. replace the value with [REDACTED:{kind}])")]
    SecretInSignedThought {
        /// `content`, `tags[<i>]` or `concepts[<i>]`.
        field: String,
        /// The redaction rule that matched.
        kind: &'static str,
        /// Byte offset of the secret in the field as sent.
        offset: usize,
    },
    /// A field that is not free text (an id, a name, a label) carries a
    /// secret: only content, tags and concepts are redacted, so it is refused.
    #[error("refusing a secret of kind {kind} in `{field}`: only content, tags and concepts are redacted, and a secret in an id, name or label would be stored for good; put it in content (it is redacted there) or leave it out")]
    SecretInField {
        /// `agent_id`, `session_id`, `relations[<i>].target_id`, ...
        field: String,
        /// The redaction rule that matched.
        kind: &'static str,
    },
    /// Writing failed; the chain is unchanged.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// Why an import was refused. Nothing was stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The bytes are not a chain object, or a record inside is damaged.
    #[error("cannot import: {0}")]
    Decode(RecordError),
    /// The chain decoded but failed verification (hashes, links, indices, refs).
    #[error("cannot import chain '{chain_key}': {error}")]
    Refused {
        /// The chain named by the object.
        chain_key: String,
        /// What verification found.
        error: VerifyError,
    },
    /// The store already serves, refuses or holds an object for this chain key.
    #[error("chain '{chain_key}' already exists; import refuses to overwrite it")]
    ChainExists {
        /// The chain that already exists.
        chain_key: String,
    },
    /// Writing the chain object failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl ImportError {
    /// The stable class of this refusal, as hosts put it on the wire.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ImportError::Decode(_) | ImportError::ChainExists { .. } => ErrorKind::InvalidArguments,
            ImportError::Refused { .. } => ErrorKind::ChainRefused,
            ImportError::Storage(_) => ErrorKind::Storage,
        }
    }
}

/// The umbrella error of the tool dispatcher.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The tool name is not one the dispatcher serves.
    #[error("unknown tool '{0}'; call tools/list (or see MENTISDB_MCP.md) for the tool names")]
    UnknownTool(String),
    /// The arguments do not match the tool's schema or fail validation.
    #[error("invalid arguments for {tool}: {message}")]
    InvalidArguments {
        /// The tool called.
        tool: String,
        /// What is wrong with the arguments.
        message: String,
    },
    /// A thought, chain or other object was not found.
    #[error("{0}")]
    NotFound(String),
    /// The request collides with what is stored (e.g. a chain key in use).
    #[error("{0}")]
    Conflict(String),
    /// A service the tool needs besides storage is not configured or failed,
    /// or a chain is too busy now (an append that lost every race to other
    /// writers on a shared store): retry later (HTTP 503).
    #[error("{0}")]
    Unavailable(String),
    /// An append was refused.
    #[error(transparent)]
    Append(#[from] AppendError),
    /// An agent-registry operation failed.
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// A skill-registry operation failed.
    #[error(transparent)]
    Skill(#[from] crate::skills::SkillError),
    /// The chain failed verification when it was opened and is not served.
    #[error("chain '{chain_key}' failed verification and is not served: {error}")]
    ChainRefused {
        /// The refused chain.
        chain_key: String,
        /// What verification found at open.
        error: VerifyError,
    },
    /// The storage backend failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// One item of a batch (`mentisdb_append_batch`) failed; the items
    /// before it were applied. Its kind is the item's.
    #[error("thoughts[{position}]: {error}")]
    BatchItem {
        /// The failed item's position in the batch.
        position: usize,
        /// Why it failed.
        error: Box<ToolError>,
    },
}

impl ToolError {
    /// A stable, machine-readable kind for hosts that want more than a
    /// message; [`ErrorKind::as_str`] gives its wire name.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ToolError::UnknownTool(_) => ErrorKind::UnknownTool,
            ToolError::InvalidArguments { .. } => ErrorKind::InvalidArguments,
            ToolError::NotFound(_) => ErrorKind::NotFound,
            ToolError::Conflict(_) => ErrorKind::Conflict,
            ToolError::Unavailable(_) => ErrorKind::Unavailable,
            // A backend that cannot be reached now: retry later (HTTP 503).
            ToolError::Append(AppendError::Storage(StorageError::Unreachable(_))) | ToolError::Agent(AgentError::Storage(StorageError::Unreachable(_))) | ToolError::Storage(StorageError::Unreachable(_)) => ErrorKind::Unavailable,
            ToolError::Append(AppendError::Storage(_)) | ToolError::Agent(AgentError::Storage(_)) | ToolError::Storage(_) => ErrorKind::Storage,
            ToolError::Append(AppendError::Conflict { .. } | AppendError::Forgotten { .. } | AppendError::Fenced { .. } | AppendError::ClaimChanged { .. }) => ErrorKind::Conflict,
            ToolError::Append(_) => ErrorKind::AppendRejected,
            ToolError::Agent(AgentError::NotFound { .. }) | ToolError::Agent(AgentError::KeyNotFound { .. }) => ErrorKind::NotFound,
            ToolError::Agent(_) => ErrorKind::InvalidArguments,
            ToolError::Skill(e) => e.kind(),
            ToolError::ChainRefused { .. } => ErrorKind::ChainRefused,
            ToolError::BatchItem { error, .. } => error.kind(),
        }
    }

    /// This error as the failure of item `position` of a batch.
    pub fn at_item(self, position: usize) -> Self {
        ToolError::BatchItem { position, error: Box::new(self) }
    }

    /// Shorthand for [`ToolError::InvalidArguments`].
    pub fn invalid(tool: &str, message: impl std::fmt::Display) -> Self {
        ToolError::InvalidArguments { tool: tool.to_string(), message: message.to_string() }
    }
}
