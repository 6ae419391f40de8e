//! The `mentisdbd` command line: no subcommand serves (every [`Config`]
//! flag), subcommands manage what the daemon reads. A new subcommand is a
//! variant of [`Command`] and an arm of [`Command::run`].

use crate::config::Config;
use crate::tokens::{add_token, list_tokens, revoke_token};
use clap::{Parser, Subcommand};
use mentisdb_core::dispatch::Access;
use std::path::Path;
use std::process::ExitCode;

/// `mentisdbd [FLAGS]` serves; `mentisdbd <COMMAND>` runs a command.
#[derive(Debug, Parser)]
#[command(name = "mentisdbd", version, about = "MentisDB daemon: durable hash-chained agent memory over REST and MCP (streamable HTTP or stdio).")]
pub struct Cli {
    /// What to do instead of serving.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The daemon's configuration (also read by commands, e.g. --tokens-file).
    #[command(flatten)]
    pub config: Config,
}

/// Commands besides serving.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Manage the scoped tokens of MENTISDB_TOKENS_FILE (--tokens-file).
    #[command(subcommand)]
    Token(TokenCommand),
    /// Mint a self-signed certificate for the HTTPS listeners, valid for
    /// localhost, 127.0.0.1, ::1 and each NAME (host name or IP address),
    /// written to MENTISDB_TLS_CERT/MENTISDB_TLS_KEY, else <dir>/tls/cert.pem
    /// and key.pem. Restart the daemon to serve it.
    Cert {
        /// Extra host names or IP addresses the certificate is valid for.
        names: Vec<String>,
        /// Replace an existing certificate and key.
        #[arg(long)]
        force: bool,
    },
    /// Take in a reference MentisDB 0.9.x data directory (its binary and
    /// legacy JSONL chains, chain registry, agent registries and skill registry) into the
    /// data directory of MENTISDB_DIR / --dir (no daemon may hold it). The
    /// source is only read; chains already present are skipped, so it can
    /// be re-run. Thoughts whose stored reference hash does not match are
    /// reported (the import goes on).
    ImportReference {
        /// The reference data directory (its MENTISDB_DIR).
        source: std::path::PathBuf,
    },
}

/// `mentisdbd token ...`.
#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Add a token and print it once, alone on stdout (only its SHA-256 is stored).
    Add {
        /// Unique name, recorded as the caller of the token's calls.
        name: String,
        /// read, write or admin (admin ⊇ write ⊇ read).
        #[arg(long, value_parser = Access::parse)]
        scope: Access,
        /// Chain keys and `prefix*` patterns, comma-separated [default: all chains].
        #[arg(long, value_delimiter = ',')]
        chains: Vec<String>,
    },
    /// List the tokens: name, scope and chains (never digests).
    List,
    /// Remove a token; a running daemon refuses it within about a second.
    Revoke {
        /// The token's name.
        name: String,
    },
}

impl Command {
    /// Runs the command; failures are one line on stderr and a non-zero exit.
    pub fn run(self, config: &Config) -> ExitCode {
        let result = match self {
            Command::Token(t) => config
                .tokens_file
                .as_deref()
                .ok_or_else(|| "no token file: set MENTISDB_TOKENS_FILE=<path> or pass --tokens-file <path>".to_string())
                .and_then(|path| t.run(path)),
            Command::Cert { names, force } => mint_cert(config, &names, force),
            Command::ImportReference { source } => import_reference(config, &source),
        };
        match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("mentisdbd: {e}");
                ExitCode::from(1)
            }
        }
    }
}

/// `mentisdbd cert`: writes the pair and says where, for what names, and its SHA-256.
fn mint_cert(config: &Config, names: &[String], force: bool) -> Result<(), String> {
    let (cert, key) = config.tls_files().map_err(|e| e.to_string())?;
    let minted = crate::tls_cert::mint(&cert, &key, names, force)?;
    eprintln!("wrote {} and {} for {}; restart the daemon to serve it", cert.display(), key.display(), minted.names.join(", "));
    println!("sha256={}", minted.sha256);
    Ok(())
}

/// `mentisdbd import-reference DIR`: opens (and locks) our store, imports,
/// prints a progress bar on stderr and the report on stdout.
fn import_reference(config: &Config, source: &Path) -> Result<(), String> {
    use crate::reference_import::{import_reference_dir, ChainOutcome};
    if !source.is_dir() {
        return Err(format!("{} is not a directory", source.display()));
    }
    let store = crate::daemon::open_store(config).map_err(|e| e.to_string())?;
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_style(indicatif::ProgressStyle::with_template("{spinner} {pos} thoughts ({per_sec}) {msg}").map_err(|e| e.to_string())?);
    let started = std::time::Instant::now();
    let summary = import_reference_dir(&store.db, source, |key, n| {
        bar.inc(n);
        bar.set_message(format!("last chain: {key}"));
    })?;
    bar.finish_and_clear();
    for (key, outcome) in &summary.chains {
        match outcome {
            ChainOutcome::Imported { thoughts, agents } => println!("imported chain {key}: {thoughts} thoughts, {agents} agents"),
            ChainOutcome::AlreadyPresent => println!("skipped chain {key}: already present"),
        }
    }
    for (id, versions) in &summary.skills.imported {
        println!("imported skill {id}: {versions} versions");
    }
    for id in &summary.skills.skipped {
        println!("skipped skill {id}: already present");
    }
    for m in &summary.mismatches {
        println!("hash mismatch in {} at index {} (id {}): {}", m.chain_key, m.index, m.id, m.reason);
    }
    for w in &summary.warnings {
        println!("warning: {w}");
    }
    let secs = started.elapsed().as_secs_f64();
    eprintln!("{} thoughts added in {:.2}s ({:.0} thoughts/s); {} reference hash mismatches", summary.thoughts_added(), secs, summary.thoughts_added() as f64 / secs.max(1e-9), summary.mismatches.len());
    Ok(())
}

impl TokenCommand {
    fn run(self, path: &Path) -> Result<(), String> {
        match self {
            TokenCommand::Add { name, scope, chains } => {
                let token = add_token(path, &name, scope, &chains)?;
                eprintln!("added token '{}' ({scope} on {}) to {}; it is shown only now:", name.trim(), if chains.is_empty() { "*".to_string() } else { chains.join(",") }, path.display());
                println!("{token}");
            }
            TokenCommand::List => {
                for t in list_tokens(path)? {
                    println!("{}\t{}\t{}", t.name, t.scope, t.chains.join(","));
                }
            }
            TokenCommand::Revoke { name } => {
                revoke_token(path, &name)?;
                eprintln!("revoked token '{name}' in {}", path.display());
            }
        }
        Ok(())
    }
}
