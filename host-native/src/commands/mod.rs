//! The command line: `mentisdbd` / `mentisdb` parse their arguments here,
//! then serve or run one command.
//!
//! - [`run`]: the program itself (logging, serving until a signal, the
//!   stdio modes); `src/main.rs` and `src/mentisdb.rs` only name it.
//! - [`cli`]: the flags and subcommands ([`cli::Cli`], [`cli::Command`]) and
//!   where each command runs.
//! - [`shell`]: `add`, `search`, `agents`, `claim`, `head`, `verify`... memory
//!   from the shell; [`backup`]: `backup` and `restore`; [`import`]:
//!   `import-reference` (the import itself is [`crate::reference`]).
//! - [`setup`]: `setup` and `wizard` as commands; [`client_setup`]: the agent
//!   clients' configuration files; [`wizard`]: the guided questions.
//! - [`stdio_proxy`]: `mentisdb --mode stdio`, MCP on stdio relayed to the
//!   directory's daemon.
//!
//! A command fails with one line on stderr and a non-zero exit: every
//! failure is a [`CommandError`], whose text is that line.

pub mod backup;
pub mod cli;
pub mod client_setup;
pub mod import;
pub mod run;
pub mod setup;
pub mod shell;
pub mod stdio_proxy;
pub mod wizard;

use crate::config::ConfigError;
use crate::daemon::DaemonError;
use crate::infra::tls_cert::CertError;
use crate::reference::ReferenceError;
use crate::target::TargetError;
use crate::tokens::TokenError;
use backup::BackupCommandError;
use client_setup::SetupError;
use std::path::PathBuf;
use wizard::WizardError;

/// Why a command failed. Its text is the one line the program prints
/// (after its name) before it exits with status 1.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommandError {
    /// A setting is missing or wrong (no data directory, say).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The store could not be opened here.
    #[error(transparent)]
    Open(#[from] DaemonError),
    /// A tool call did not get through, or was refused.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// The token file could not be read or changed.
    #[error(transparent)]
    Tokens(#[from] TokenError),
    /// The certificate could not be made.
    #[error(transparent)]
    Cert(#[from] CertError),
    /// A client's configuration file could not be planned or written.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// The wizard stopped.
    #[error(transparent)]
    Wizard(#[from] WizardError),
    /// The reference import stopped.
    #[error(transparent)]
    Reference(Box<ReferenceError>),
    /// `backup`, `restore` or `verify`'s snapshot failed.
    #[error(transparent)]
    Backup(Box<BackupCommandError>),
    /// `claim`: another holder has the key.
    #[error("{reason}: '{holder}' holds it until {until}")]
    HeldByAnother { reason: String, holder: String, until: String },
    /// `decide`: the review takes no decision from this agent.
    #[error("{reason}{}", decision.as_ref().map_or(String::new(), |d| format!(": the review is {d}")))]
    NotDecided { reason: String, decision: Option<String> },
    /// `release`: the holder has no lease on the key.
    #[error("{reason}: no lease of this holder on the key")]
    NotHolding { reason: String },
    /// `verify`: a daemon holds the directory but has not said where it listens.
    #[error("a daemon (pid {}) holds {} but has not said where it listens yet; retry in a moment", pid.map_or("?".into(), |p| p.to_string()), dir.display())]
    NotListening { pid: Option<u32>, dir: PathBuf },
    /// `verify` found a chain, object or the skill registry refused.
    #[error("verification failed: see the REFUSED lines above")]
    VerificationFailed,
    /// This program's own path is unknown (the stdio clients run it).
    #[error("cannot find this program's path for the stdio command: {0}")]
    NoExecutable(std::io::Error),
    /// `import-reference` of something that is neither a directory nor a file.
    #[error("{} is neither a data directory nor a .mentis backup", .0.display())]
    NotAReferenceSource(PathBuf),
    /// A progress bar's template does not parse.
    #[error("{0}")]
    ProgressTemplate(#[from] indicatif::style::TemplateError),
    /// MENTISDB_LOG_FILE cannot be opened for appending.
    #[error("cannot open MENTISDB_LOG_FILE {}: {source}", path.display())]
    LogFile { path: PathBuf, source: std::io::Error },
    /// The thread that writes log lines cannot be started.
    #[error("cannot start the log writer thread: {0}")]
    LogWriter(std::io::Error),
}

// Boxed: these two are large, and every command returns a CommandError.
impl From<ReferenceError> for CommandError {
    fn from(e: ReferenceError) -> Self {
        CommandError::Reference(Box::new(e))
    }
}

impl From<BackupCommandError> for CommandError {
    fn from(e: BackupCommandError) -> Self {
        CommandError::Backup(Box::new(e))
    }
}
