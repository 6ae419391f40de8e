//! The command line: `mentisdbd` / `mentisdb` parse their arguments here,
//! then serve or run one command.
//!
//! - [`run`]: the program itself (logging, serving until a signal, the
//!   stdio modes); `src/main.rs` and `src/mentisdb.rs` only name it.
//! - [`cli`]: the flags and subcommands ([`cli::Cli`], [`cli::Command`]) and
//!   where each command runs.
//! - [`shell`]: `add`, `search`, `agents`, `claim`, `head`, `verify`... memory
//!   from the shell; [`backup`]: `backup` and `restore`.
//! - [`client_setup`]: `setup`, the agent clients' configuration files;
//!   [`wizard`]: the guided `wizard` over them.
//! - [`stdio_proxy`]: `mentisdb --mode stdio`, MCP on stdio relayed to the
//!   directory's daemon.
//!
//! A command fails with one line on stderr and a non-zero exit.

pub mod backup;
pub mod cli;
pub mod client_setup;
pub mod run;
pub mod shell;
pub mod stdio_proxy;
pub mod wizard;
