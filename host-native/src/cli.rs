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
    /// Add the `mentisdb` MCP server to agent clients' configuration files,
    /// keeping everything else in them (and a backup of each file it changes).
    /// Idempotent: a file that already has the entry is left alone.
    Setup {
        /// The clients to configure.
        #[arg(required = true, value_enum)]
        clients: Vec<crate::client_setup::Client>,
        /// The daemon's MCP URL [default: http://127.0.0.1:<mcp port>/mcp].
        #[arg(long)]
        url: Option<String>,
        /// Bearer token the clients send [default: MENTISDB_API_TOKEN, if set].
        #[arg(long)]
        token: Option<String>,
        /// Configure a local stdio server (`<this binary> --mode stdio`, which
        /// shares the data directory's daemon) instead of the HTTP URL.
        #[arg(long)]
        stdio: bool,
        /// Print each change as a unified diff and write nothing.
        #[arg(long)]
        dry_run: bool,
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
            Command::Setup { clients, url, token, stdio, dry_run } => setup_clients(config, &clients, url, token, stdio, dry_run),
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

/// `mentisdbd setup`: plans every client's change first (so a file that does
/// not parse stops the command before anything is written), then writes them.
fn setup_clients(config: &Config, clients: &[crate::client_setup::Client], url: Option<String>, token: Option<String>, stdio: bool, dry_run: bool) -> Result<(), String> {
    use crate::client_setup::{apply, plan, Dirs, Transport};
    let dirs = Dirs::from_env()?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program's path for the stdio command: {e}"))?.display().to_string();
    let host = if config.bind_host.is_unspecified() { "127.0.0.1".to_string() } else { config.bind_host.to_string() };
    let host = if host.contains(':') { format!("[{host}]") } else { host };
    let http = Transport::Http {
        url: url.unwrap_or_else(|| format!("http://{host}:{}/mcp", config.mcp_port)),
        token: token.or_else(|| config.api_token.clone()),
    };
    let local = Transport::Stdio { exe };
    let changes = clients
        .iter()
        .map(|&c| plan(c, &dirs, if stdio || c.stdio_only() { &local } else { &http }))
        .collect::<Result<Vec<_>, _>>()?;
    for change in &changes {
        let name = change.path.display();
        if change.unchanged() {
            eprintln!("{:?}: {name} already has the mentisdb entry; unchanged", change.client);
        } else if dry_run {
            print!("{}", change.diff());
        } else {
            match apply(change, std::time::SystemTime::now())? {
                Some(backup) => eprintln!("{:?}: updated {name} (backup: {})", change.client, backup.display()),
                None => eprintln!("{:?}: wrote {name}", change.client),
            }
        }
    }
    Ok(())
}

/// `mentisdbd cert`: writes the pair and says where, for what names, and its SHA-256.
fn mint_cert(config: &Config, names: &[String], force: bool) -> Result<(), String> {
    let (cert, key) = config.tls_files().map_err(|e| e.to_string())?;
    let minted = crate::tls_cert::mint(&cert, &key, names, force)?;
    eprintln!("wrote {} and {} for {}; restart the daemon to serve it", cert.display(), key.display(), minted.names.join(", "));
    println!("sha256={}", minted.sha256);
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
