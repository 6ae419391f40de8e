//! The `mentisdbd` / `mentisdb` program: parse the command line, run a
//! command, or serve (HTTP, stdio in-process with `--stdio`, stdio through
//! the directory's daemon with `--mode stdio`, or HTTP and stdio with
//! `--mode both`) until SIGINT/SIGTERM. `src/main.rs` and `src/mentisdb.rs`
//! only name the program.

use clap::{CommandFactory, FromArgMatches};
use crate::commands::cli::Cli;
use crate::config::Mode;
use crate::http::mcp;
use crate::commands::{stdio_proxy, CommandError};
use crate::{daemon, Config};
use std::process::ExitCode;
use crate::infra::log_writer::{batched, FlushGuard};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// Console logs go to stderr (stdout carries MCP in `--stdio` mode); with
/// `MENTISDB_LOG_FILE` the same events, interactions included, are appended
/// to that file. `MENTISDB_VERBOSE=0` silences per-request console lines.
///
/// Lines are buffered and written in batches by a background thread that
/// wakes every 50 ms (`infra/log_writer.rs`), so a per-request interaction
/// line costs no system call and no thread wake-up on the request path.
/// The returned guards write whatever is still buffered when `main` returns.
fn init_logging(config: &Config) -> Result<Vec<FlushGuard>, CommandError> {
    let (stderr, stderr_guard) = batched(std::io::stderr()).map_err(CommandError::LogWriter)?;
    let mut guards = vec![stderr_guard];
    let console_filter = match std::env::var("RUST_LOG") {
        Ok(f) => EnvFilter::new(f),
        Err(_) if config.verbose() => EnvFilter::new("info"),
        Err(_) => EnvFilter::new("info,mentisdb::interaction=off"),
    };
    let console = tracing_subscriber::fmt::layer().with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())).with_writer(stderr).with_filter(console_filter);
    let file = match &config.log_file {
        Some(path) => {
            let f = mentisdb_fs_storage::private::private_file(std::fs::OpenOptions::new().create(true).append(true)).open(path).map_err(|source| CommandError::LogFile { path: path.clone(), source })?;
            // A log file that was already there keeps its mode when opened:
            // one other users may read is made private (log lines name
            // chains, agents and tools), as a new one is created. One the
            // daemon does not own (a logrotate setup's) is left as it is,
            // with a warning.
            if let Err(e) = make_private_if_shared(&f) {
                eprintln!("warning: MENTISDB_LOG_FILE {} may be read by other users and cannot be made private ({e})", path.display());
            }
            let (file, file_guard) = batched(f).map_err(CommandError::LogWriter)?;
            guards.push(file_guard);
            Some(tracing_subscriber::fmt::layer().with_ansi(false).with_writer(file).with_filter(EnvFilter::new("info")))
        }
        None => None,
    };
    tracing_subscriber::registry().with(console).with(file).init();
    Ok(guards)
}

/// Takes group and other users' permissions off `file` when it is a
/// regular file that has them (not a terminal or a pipe named as the log).
fn make_private_if_shared(file: &std::fs::File) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = file.metadata()?;
        if meta.is_file() && meta.permissions().mode() & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(mentisdb_fs_storage::private::FILE_MODE))?;
        }
    }
    #[cfg(not(unix))]
    let _ = file;
    Ok(())
}

/// The whole program, under the name it was invoked as: `mentisdbd`, or
/// `mentisdb` (MentisDB 0.10's name; the same flags, commands and `--mode`).
/// Parse errors and every failure are one line on stderr and a non-zero exit.
pub fn main(name: &'static str) -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Err(e) = crate::config::load_environment(&args[1.min(args.len())..]) {
        eprintln!("{name}: {e}");
        return ExitCode::from(2);
    }
    let matches = match Cli::command().name(name).bin_name(name).try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) if !e.use_stderr() => e.exit(), // --help, --version
        Err(e) => {
            eprintln!("{name}: {}", one_line(&e.to_string()));
            return ExitCode::from(2);
        }
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("{name}: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    runtime.block_on(serve(cli, name))
}

/// A command-line error as one line: its text up to the usage block, lines joined.
fn one_line(message: &str) -> String {
    let head = message.split("\nUsage:").next().unwrap_or(message);
    let text: Vec<&str> = head.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("For more information")).collect();
    text.join(" ").trim_start_matches("error: ").to_string()
}

async fn serve(Cli { command, config }: Cli, name: &'static str) -> ExitCode {
    if let Some(command) = command {
        return command.run(&config, name);
    }
    // On PostgreSQL any number of daemons share the store, so `--mode stdio`
    // serves from this process there; on files it goes through the directory's daemon.
    let in_process_stdio = config.stdio || (config.mode == Some(Mode::Stdio) && config.storage_url.is_some());
    if config.mode == Some(Mode::Stdio) && !in_process_stdio {
        // No logging setup: the daemon logs; this process only relays.
        if let Err(e) = config.validate() {
            eprintln!("{name}: {e}");
            return ExitCode::from(2);
        }
        return match stdio_proxy::run(&config).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{name}: {e}");
                ExitCode::from(1)
            }
        };
    }
    let _log_writers = match init_logging(&config) {
        Ok(guards) => guards,
        Err(e) => {
            eprintln!("{name}: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = config.validate() {
        // One line on stderr (the console log would repeat it).
        eprintln!("{name}: {e}");
        return ExitCode::from(2);
    }
    if let Some(warning) = crate::config::unread_env_warning(&Cli::command(), std::env::vars_os().filter_map(|(k, _)| k.into_string().ok())) {
        tracing::warn!("{warning}");
    }
    let opened = match tokio::task::block_in_place(|| daemon::open_store(&config)) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{name}: {e}");
            return ExitCode::from(1);
        }
    };
    let chains: Vec<&str> = opened.report.chains.iter().map(|c| c.chain_key.as_str()).collect();
    if in_process_stdio {
        eprintln!("mentisdbd serving MCP on stdio {} chains={:?} refused={}", opened.store, chains, opened.report.refused.len());
        return match mcp::serve_stdio(opened.db, config.tool_profile().unwrap_or_default()).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{name}: stdio MCP failed: {e}");
                ExitCode::from(1)
            }
        };
    }
    if let Some(signer) = opened.db.checkpoint_signer() {
        eprintln!("mentisdbd checkpoint key {}", mentisdb_core::checkpoint::verifier_key(signer.name(), &signer.public_key()));
    }
    let summary = format!("{} chains={:?} refused={}", opened.store, chains, opened.report.refused.len());
    let stdio_db = (config.mode == Some(Mode::Both)).then(|| (opened.db.clone(), config.tool_profile().unwrap_or_default()));
    // Before the startup line: a SIGTERM right after it is a shutdown, not the default kill.
    let signal = shutdown_signal();
    let running = match daemon::serve(&config, opened).await {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{name}: {e}");
            return ExitCode::from(1);
        }
    };
    if config.mode == Some(Mode::Both) {
        eprintln!("{} {summary}", running.listening_line()); // stdout carries MCP
    } else {
        println!("{} {summary}", running.listening_line());
    }
    let scheme = running.scheme;
    let explorer = if config.explorer() { format!("  explorer {scheme}://{}/explorer/", running.rest_addr) } else { String::new() };
    tracing::info!(rest = %running.rest_addr, mcp = %running.mcp_addr, "REST {scheme}://{}  MCP {scheme}://{}/mcp{explorer}; next: `mentisdbd wizard` connects an agent", running.rest_addr, running.mcp_addr);
    let token = running.shutdown_token();
    if let Some((db, listed)) = stdio_db {
        // `--mode both`: MCP on stdio too, from this process's store.
        tokio::spawn(async move {
            if let Err(e) = mcp::serve_stdio(db, listed).await {
                tracing::error!(error = %e, "stdio MCP failed");
            }
        });
    }
    tokio::spawn(async move {
        signal.await;
        tracing::info!("shutting down");
        token.cancel();
    });
    running.wait().await;
    ExitCode::SUCCESS
}

/// Registers the SIGINT and SIGTERM handlers now and returns what resolves
/// on the first of them (registering when first polled would leave a window
/// in which a signal still kills the process outright).
#[cfg(unix)]
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    let mut interrupt = signal(SignalKind::interrupt()).expect("SIGINT handler");
    async move {
        tokio::select! { _ = interrupt.recv() => {}, _ = term.recv() => {} }
    }
}

/// What resolves on Ctrl-C.
#[cfg(not(unix))]
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}
