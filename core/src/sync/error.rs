//! Why a sync failed ([`SyncError`]).

/// Why [`crate::sync::SyncSession`] stopped. Nothing local was changed by
/// a failed sync, except thoughts already pushed (they are on the daemon,
/// and the next sync brings them back in the daemon's order).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyncError {
    /// The pinned key is not a signed-note verifier key (`<name>+<id>+<base64>`).
    #[error("the pinned verifier key is not usable: {0}")]
    BadVerifierKey(String),
    /// The daemon's checkpoint is malformed or not signed by the pinned key.
    #[error("the daemon's checkpoint does not verify with the pinned key: {0}")]
    BadCheckpoint(String),
    /// The checkpoint is signed by the pinned key but names another log.
    #[error("the daemon's checkpoint is for '{found}', not '{expected}'")]
    WrongOrigin {
        /// `<signer>/<chain key>` this sync expects.
        expected: String,
        /// The checkpoint's origin line.
        found: String,
    },
    /// The daemon's history is not an extension of the one this replica
    /// accepted earlier. `accepted` and `offered` are both signed by the
    /// daemon's key: together they prove the fork to anyone.
    #[error("the daemon rewrote the history of chain '{chain_key}': {reason}. The checkpoint this replica accepted earlier and the one the daemon offers now prove the fork")]
    Fork {
        /// The chain.
        chain_key: String,
        /// What does not fit.
        reason: String,
        /// The checkpoint this replica accepted earlier.
        accepted: String,
        /// The checkpoint the daemon offers now (absent when it no longer has the chain).
        offered: Option<String>,
    },
    /// The daemon's records do not verify or do not hash to its checkpoint.
    #[error("the daemon's records of chain '{chain_key}' do not verify: {reason}")]
    BadRecords {
        /// The chain.
        chain_key: String,
        /// What does not verify.
        reason: String,
    },
    /// This replica's first thoughts are not the daemon's (the local copy was
    /// changed outside sync, e.g. migrated).
    #[error("the local chain '{chain_key}' differs from the daemon's in its first {size} thoughts; export it, delete it here and sync again")]
    LocalDiverged {
        /// The chain.
        chain_key: String,
        /// The size of the prefix that should match.
        size: u64,
    },
    /// The daemon refused a request (HTTP status and its `{"error"}`).
    #[error("the daemon answered {what} with HTTP {status}: {message}")]
    Daemon {
        /// The request (e.g. `mentisdb_append_batch`).
        what: &'static str,
        /// Its HTTP status.
        status: u16,
        /// The daemon's error message.
        message: String,
    },
    /// A reply that is not what the request promises.
    #[error("the daemon's reply to {what} is malformed: {message}")]
    BadReply {
        /// The request.
        what: &'static str,
        /// What is wrong.
        message: String,
    },
    /// Reading or writing the local chain or the replica state failed.
    #[error("local: {0}")]
    Local(String),
    /// Local appends kept landing while the sync applied the daemon's records.
    #[error("local appends to chain '{0}' kept racing the sync; sync again")]
    Busy(String),
    /// [`crate::sync::SyncSession::step`] was given a reply it did not ask for
    /// (or none when it asked for one).
    #[error("sync session misuse: {0}")]
    Misuse(&'static str),
}

impl SyncError {
    /// A stable, machine-readable name for hosts (`fork`, `bad_checkpoint`, ...).
    pub fn code(&self) -> &'static str {
        match self {
            SyncError::BadVerifierKey(_) => "bad_verifier_key",
            SyncError::BadCheckpoint(_) => "bad_checkpoint",
            SyncError::WrongOrigin { .. } => "wrong_origin",
            SyncError::Fork { .. } => "fork",
            SyncError::BadRecords { .. } => "bad_records",
            SyncError::LocalDiverged { .. } => "local_diverged",
            SyncError::Daemon { .. } => "daemon",
            SyncError::BadReply { .. } => "bad_reply",
            SyncError::Local(_) => "local",
            SyncError::Busy(_) => "busy",
            SyncError::Misuse(_) => "misuse",
        }
    }
}

impl From<crate::error::ToolError> for SyncError {
    fn from(e: crate::error::ToolError) -> Self {
        SyncError::Local(e.to_string())
    }
}

impl From<crate::storage::StorageError> for SyncError {
    fn from(e: crate::storage::StorageError) -> Self {
        SyncError::Local(e.to_string())
    }
}
