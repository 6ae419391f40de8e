//! The `mentisdbd` command line: no subcommand serves (every [`Config`]
//! flag), subcommands manage what the daemon reads. A new subcommand is a
//! variant of [`Command`] and an arm of [`Command::run`].

use crate::commands::backup::{BackupArgs, RestoreArgs};
use crate::config::Config;
use crate::tokens::{add_token, list_tokens, revoke_token};
use clap::{Parser, Subcommand};
use mentisdb_core::dispatch::Access;
use serde_json::Value;
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
    /// Append a thought: through --url's daemon, the data directory's daemon,
    /// or the directory itself when no daemon holds it.
    Add {
        /// The thought's content.
        content: String,
        #[command(flatten)]
        at: ShellTarget,
        /// thought_type, e.g. Decision, Insight, FactLearned [default: FactLearned].
        #[arg(long = "type")]
        thought_type: Option<String>,
        /// The writing agent [default: the daemon's default agent].
        #[arg(long)]
        agent: Option<String>,
        /// Importance 0..1.
        #[arg(long)]
        importance: Option<f64>,
        /// Tags, comma-separated.
        #[arg(long, value_delimiter = ',')]
        tags: Vec<String>,
        /// Concepts, comma-separated.
        #[arg(long, value_delimiter = ',')]
        concepts: Vec<String>,
    },
    /// Ranked search for a question or keywords; one line per hit.
    Search {
        /// What to look for.
        text: String,
        #[command(flatten)]
        at: ShellTarget,
        /// Hits to show [default: 10].
        #[arg(long)]
        limit: Option<u64>,
    },
    /// The chain's agent registry: id, name, owner, status, thoughts.
    Agents {
        #[command(flatten)]
        at: ShellTarget,
    },
    /// Claim a key of the chain for a holder (a lease with a fencing
    /// token); prints the token and deadline, or who holds it (exit 1).
    Claim {
        /// The key, e.g. a task or file name.
        key: String,
        /// Who claims it (an agent id).
        #[arg(long)]
        holder: String,
        /// Lease length in ms [default: 60000].
        #[arg(long)]
        ttl_ms: Option<u64>,
        #[command(flatten)]
        at: ShellTarget,
    },
    /// Release a holder's lease on a key (exit 1 when it holds none).
    Release {
        /// The key.
        key: String,
        /// The holder letting go.
        #[arg(long)]
        holder: String,
        #[command(flatten)]
        at: ShellTarget,
    },
    /// The leases held now: key, holder, fencing token, deadline.
    Claims {
        #[command(flatten)]
        at: ShellTarget,
    },
    /// The chain's head: thought count, last index and hash, integrity.
    Head {
        #[command(flatten)]
        at: ShellTarget,
    },
    /// Open the data directory (or database) and check every chain, sidecar
    /// and the skill registry; prints a report, exits 1 unless all is sound.
    /// Refuses a directory a running daemon holds (it verified it on start).
    Verify,
    /// Add the `mentisdb` MCP server to agent clients' configuration files,
    /// keeping everything else in them (and a backup of each file it changes).
    /// Idempotent: a file that already has the entry is left alone.
    Setup {
        /// The clients to configure.
        #[arg(required = true, value_enum)]
        clients: Vec<crate::commands::client_setup::Client>,
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
    /// Set up the agent clients found here, asking as MentisDB 0.10's wizard
    /// does: which clients, the MCP URL, a bearer token; then the plan (each
    /// file and its diff, the token masked) and a yes before anything is written.
    Wizard {
        /// The daemon's MCP URL (no question) [default: asked; Enter takes http://127.0.0.1:<mcp port>/mcp].
        #[arg(long)]
        url: Option<String>,
        /// Bearer token the clients send (no question) [default: MENTISDB_API_TOKEN, else asked].
        #[arg(long)]
        token: Option<String>,
        /// Ask nothing: set up the clients found, with --url (or the default) and --token.
        #[arg(long)]
        yes: bool,
    },
    /// Take in a reference MentisDB 0.9.x or 0.10.x data directory (its
    /// binary and legacy JSONL chains, chain registry, agent registries,
    /// skill registry, webhook registrations and bearer-tokens.json), or a
    /// 0.10 `.mentis` backup archive (checked against its manifest first):
    /// through --url's daemon, the daemon that holds the data directory of
    /// MENTISDB_DIR / --dir, or that directory itself. The source is only
    /// read; chains, skills, webhooks and tokens already present are
    /// skipped, so it can be re-run. Thoughts whose stored reference hash
    /// does not match are reported (the import goes on). Bearer tokens go
    /// into MENTISDB_TOKENS_FILE / --tokens-file, by hash.
    ImportReference {
        /// The reference data directory (its MENTISDB_DIR), or a `.mentis` backup.
        source: std::path::PathBuf,
        /// A daemon's REST base URL to import into [default: the data
        /// directory's daemon, else the directory itself].
        #[arg(long, env = "MENTISDB_URL")]
        url: Option<String>,
        /// Bearer token for the daemon (admin on all chains) [default: MENTISDB_API_TOKEN].
        #[arg(long)]
        token: Option<String>,
    },
    /// Write a consistent backup of every chain (each at a committed, durable
    /// head), agent registry, the skill registry and the daemon's identity to
    /// one .tar.gz with a manifest of every object's SHA-256: through
    /// --url's daemon, the data directory's daemon (which keeps serving
    /// writes), or the directory itself. The archive is checked against its
    /// manifest after it is written.
    Backup(BackupArgs),
    /// Restore a backup into a data directory (or database): checks every
    /// object's SHA-256 and opens and verifies every chain in memory before
    /// writing anything; refuses a target that holds data unless --force.
    Restore(RestoreArgs),
}

/// Where a shell command's call goes, and its output form.
#[derive(Debug, clap::Args)]
pub struct ShellTarget {
    /// A daemon's REST base URL (e.g. http://127.0.0.1:9472) [default: the data
    /// directory's daemon, else the directory itself].
    #[arg(long, env = "MENTISDB_URL")]
    pub url: Option<String>,
    /// Bearer token for --url's daemon [default: MENTISDB_API_TOKEN].
    #[arg(long)]
    pub token: Option<String>,
    /// The chain [default: the daemon's default chain].
    #[arg(long)]
    pub chain: Option<String>,
    /// Print the tool's JSON result instead of lines.
    #[arg(long)]
    pub json: bool,
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
    /// Runs the command; a failure is one line on stderr, prefixed with the
    /// name the program was run as (`mentisdbd` or `mentisdb`).
    pub fn run(self, config: &Config, program: &str) -> ExitCode {
        let result = match self {
            Command::Token(t) => config.token_file().map_err(|e| e.to_string()).and_then(|(path, _)| t.run(&path)),
            Command::Cert { names, force } => mint_cert(config, &names, force),
            Command::Setup { clients, url, token, stdio, dry_run } => setup_clients(config, &clients, url, token, stdio, dry_run),
            Command::Wizard { url, token, yes } => wizard(config, url, token, yes),
            Command::Add { content, at, thought_type, agent, importance, tags, concepts } => {
                let mut args = crate::commands::shell::chain_args(at.chain.as_deref());
                args.insert("content".into(), content.into());
                args.insert("thought_type".into(), thought_type.unwrap_or_else(|| "FactLearned".into()).into());
                let optional = [("agent_id", agent.map(Value::from)), ("importance", importance.map(Value::from))];
                args.extend(optional.into_iter().filter_map(|(k, v)| Some((k.to_string(), v?))));
                if !tags.is_empty() {
                    args.insert("tags".into(), tags.into());
                }
                if !concepts.is_empty() {
                    args.insert("concepts".into(), concepts.into());
                }
                shell_call(config, &at, "mentisdb_append", args, |v| {
                    let t = &v["thought"];
                    vec![format!("appended #{} {} (hash {})", t["index"], t["id"].as_str().unwrap_or(""), t["hash"].as_str().unwrap_or(""))]
                })
            }
            Command::Search { text, at, limit } => {
                let mut args = crate::commands::shell::chain_args(at.chain.as_deref());
                args.insert("text".into(), text.into());
                args.insert("limit".into(), limit.unwrap_or(10).into());
                shell_call(config, &at, "mentisdb_ranked_search", args, crate::commands::shell::hit_lines)
            }
            Command::Agents { at } => shell_call(config, &at, "mentisdb_list_agent_registry", crate::commands::shell::chain_args(at.chain.as_deref()), |v| {
                v["agents"].as_array().into_iter().flatten().map(|a| format!("{}\t{}\t{}\t{}\t{} thoughts", a["agent_id"].as_str().unwrap_or(""), a["display_name"].as_str().unwrap_or(""), a["agent_owner"].as_str().unwrap_or("-"), a["status"].as_str().unwrap_or(""), a["thought_count"])).collect()
            }),
            Command::Claim { key, holder, ttl_ms, at } => {
                let mut args = crate::commands::shell::chain_args(at.chain.as_deref());
                args.insert("key".into(), key.into());
                args.insert("holder".into(), holder.into());
                if let Some(ttl) = ttl_ms {
                    args.insert("ttl_ms".into(), ttl.into());
                }
                shell_claim(config, &at, "mentisdb_claim", args)
            }
            Command::Release { key, holder, at } => {
                let mut args = crate::commands::shell::chain_args(at.chain.as_deref());
                args.insert("key".into(), key.into());
                args.insert("holder".into(), holder.into());
                shell_claim(config, &at, "mentisdb_release_claim", args)
            }
            Command::Claims { at } => shell_call(config, &at, "mentisdb_list_claims", crate::commands::shell::chain_args(at.chain.as_deref()), |v| {
                v["claims"].as_array().into_iter().flatten().map(lease_line).collect()
            }),
            Command::Head { at } => shell_call(config, &at, "mentisdb_head", crate::commands::shell::chain_args(at.chain.as_deref()), |v| {
                vec![format!("{}: {} thoughts, head #{} {}, integrity {}", v["chain_key"].as_str().unwrap_or(""), v["thought_count"], v["latest_thought"]["index"], v["head_hash"].as_str().unwrap_or("-"), if v["integrity_ok"] == true { "ok" } else { "FAILED" })]
            }),
            Command::Verify => verify(config),
            Command::ImportReference { source, url, token } => import_reference(config, &source, url.as_deref(), token.as_deref()),
            Command::Backup(args) => crate::commands::backup::backup(config, &args),
            Command::Restore(args) => crate::commands::backup::restore(config, &args),
        };
        match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{program}: {e}");
                ExitCode::from(1)
            }
        }
    }
}

/// Runs one tool call for a shell command and prints its result: JSON with
/// `--json`, else the lines `lines` makes of it, with the reply's
/// `warnings` (a value moved into range, say) on stderr.
fn shell_call(config: &Config, at: &ShellTarget, tool: &str, args: serde_json::Map<String, Value>, lines: impl Fn(&Value) -> Vec<String>) -> Result<(), String> {
    let target = crate::target::Target::resolve(config, at.url.as_deref(), at.token.as_deref()).map_err(|e| e.to_string())?;
    let reply = target.call(tool, Value::Object(args)).map_err(|e| e.to_string())?;
    if at.json {
        println!("{}", serde_json::to_string_pretty(&reply).unwrap_or_default());
    } else {
        for line in lines(&reply) {
            println!("{line}");
        }
        for warning in reply["warnings"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            eprintln!("warning: {warning}");
        }
    }
    Ok(())
}

/// One lease as a line: key, holder, token, deadline.
fn lease_line(l: &Value) -> String {
    format!("{}\t{}\ttoken {}\tuntil {}", l["key"].as_str().unwrap_or(""), l["holder"].as_str().unwrap_or(""), l["fencing_token"], l["expires_at"].as_str().unwrap_or(""))
}

/// A claim or release from the shell: the lease on success; a refusal
/// (the key held by another, not held) is a one-line error and exit 1.
fn shell_claim(config: &Config, at: &ShellTarget, tool: &str, args: serde_json::Map<String, Value>) -> Result<(), String> {
    let target = crate::target::Target::resolve(config, at.url.as_deref(), at.token.as_deref()).map_err(|e| e.to_string())?;
    let reply = target.call(tool, Value::Object(args)).map_err(|e| e.to_string())?;
    if at.json {
        println!("{}", serde_json::to_string_pretty(&reply).unwrap_or_default());
    }
    if reply["ok"] != true {
        let reason = reply["reason"].as_str().unwrap_or("refused");
        return Err(match reply["held_by"].as_str() {
            Some(who) => format!("{reason}: '{who}' holds it until {}", reply["expires_at"].as_str().unwrap_or("?")),
            None => format!("{reason}: no lease of this holder on the key"),
        });
    }
    if !at.json {
        let verb = if tool == "mentisdb_release_claim" { "released" } else { "claimed" };
        println!("{verb}\t{}", lease_line(&reply["claim"]));
    }
    Ok(())
}

/// `mentisdbd verify`: opens the store here (never through a daemon).
fn verify(config: &Config) -> Result<(), String> {
    if config.storage_url.is_none() {
        let dir = config.data_dir().map_err(|e| e.to_string())?;
        if let Ok(Some(holder)) = crate::infra::dir_lock::running_daemon(&dir) {
            // The daemon keeps the files: verify a consistent snapshot it takes.
            let base = holder.rest_base().ok_or_else(|| format!("a daemon (pid {}) holds {} but has not said where it listens yet; retry in a moment", holder.pid.map_or("?".into(), |p| p.to_string()), dir.display()))?;
            let (lines, sound) = crate::commands::backup::verify_snapshot(&base, config.api_token.as_deref())?;
            for line in &lines {
                println!("{line}");
            }
            return if sound { Ok(()) } else { Err("verification failed: see the REFUSED lines above".into()) };
        }
    }
    let store = crate::daemon::open_store(config).map_err(|e| e.to_string())?;
    let (lines, sound) = crate::commands::shell::verify_report(&store);
    for line in &lines {
        println!("{line}");
    }
    if sound {
        println!("sound: {} chains and the skill registry verified", store.report.chains.len());
        Ok(())
    } else {
        Err("verification failed: see the REFUSED lines above".into())
    }
}

/// `mentisdbd setup`: plans every client's change first (so a file that does
/// not parse stops the command before anything is written), then writes them.
fn setup_clients(config: &Config, clients: &[crate::commands::client_setup::Client], url: Option<String>, token: Option<String>, stdio: bool, dry_run: bool) -> Result<(), String> {
    use crate::commands::client_setup::{apply, plan, Dirs, Transport};
    let dirs = Dirs::from_env()?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program's path for the stdio command: {e}"))?.display().to_string();
    let url = url.unwrap_or_else(|| default_mcp_url(config));
    let http = Transport::Http { url: url.clone(), token: token.or_else(|| config.api_token.clone()) };
    let local = Transport::Stdio { exe };
    let changes = clients
        .iter()
        .map(|&c| plan(c, &dirs, if stdio || c.stdio_only() { &local } else { &http }))
        .collect::<Result<Vec<_>, _>>()?;
    if !stdio && clients.iter().any(|c| !c.stdio_only()) {
        eprintln!("{}", answer_note(&url));
    }
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
    if !dry_run && changes.iter().any(|c| !c.unchanged()) {
        eprintln!("next: restart those clients so they load the mentisdb server; keep `mentisdbd` running while they use it");
    }
    Ok(())
}

/// `mentisdbd wizard` on this terminal.
fn wizard(config: &Config, url: Option<String>, token: Option<String>, yes: bool) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program's path for the stdio command: {e}"))?.display().to_string();
    let args = crate::commands::wizard::WizardArgs { default_url: default_mcp_url(config), url, token: token.or_else(|| config.api_token.clone()), yes, exe };
    let dirs = crate::commands::client_setup::Dirs::from_env()?;
    // In a terminal the token is read without echo; from a pipe, as a line.
    let mut secret = |out: &mut dyn std::io::Write, input: &mut dyn std::io::BufRead, prompt: &str| -> Result<String, String> {
        if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            out.flush().map_err(|e| e.to_string())?;
            rpassword::prompt_password(prompt).map(|t| t.trim().to_string()).map_err(|e| format!("cannot read the token: {e}"))
        } else {
            crate::commands::wizard::secret_from_input(out, input, prompt)
        }
    };
    crate::commands::wizard::run(&args, &dirs, &mut std::io::stdin().lock(), &mut std::io::stdout(), &mut secret)
}

/// The MCP URL a local client reaches: the data directory's running
/// daemon's (its lock file names where it listens), else the configured port's.
fn default_mcp_url(config: &Config) -> String {
    if let Some(base) = config.data_dir().ok().and_then(|dir| crate::infra::dir_lock::running_daemon(&dir).ok().flatten()).and_then(|h| h.mcp_base()) {
        return format!("{base}/mcp");
    }
    let host = if config.bind_host.is_unspecified() { "127.0.0.1".to_string() } else { config.bind_host.to_string() };
    let host = if host.contains(':') { format!("[{host}]") } else { host };
    format!("http://{host}:{}/mcp", config.mcp_port)
}

/// One line saying whether a daemon answers at MCP URL `url` (its `/health`).
pub fn answer_note(url: &str) -> String {
    let base = url.trim_end_matches('/').trim_end_matches("/mcp");
    let agent: ureq::Agent = ureq::Agent::config_builder().timeout_global(Some(std::time::Duration::from_secs(2))).build().into();
    match agent.get(format!("{base}/health")).call() {
        Ok(r) if r.status().is_success() => format!("a mentisdbd answers at {url}"),
        _ => format!("no mentisdbd answers at {url} yet: start it with `mentisdbd` (same data directory and ports) before the agent connects"),
    }
}

/// `mentisdbd cert`: writes the pair and says where, for what names, and its SHA-256.
fn mint_cert(config: &Config, names: &[String], force: bool) -> Result<(), String> {
    let (cert, key) = config.tls_files().map_err(|e| e.to_string())?;
    let minted = crate::infra::tls_cert::mint(&cert, &key, names, force)?;
    eprintln!("wrote {} and {} for {}; to serve it, restart the daemon with an HTTPS port (--https-rest-port / --https-mcp-port) or with --tls-cert and --tls-key", cert.display(), key.display(), minted.names.join(", "));
    println!("sha256={}", minted.sha256);
    Ok(())
}

/// `mentisdbd import-reference DIR`: imports where the memory is (a daemon,
/// or our store opened and locked here), with a progress bar on stderr and
/// the report on stdout.
fn import_reference(config: &Config, source: &Path, url: Option<&str>, token: Option<&str>) -> Result<(), String> {
    use crate::reference::{import_reference_dir, import_reference_tokens, unpack_mentis_archive, ChainOutcome};
    let unpacked = if source.is_file() {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_style(indicatif::ProgressStyle::with_template("{spinner} checking and unpacking {pos} files: {msg}").map_err(|e| e.to_string())?);
        let dir = unpack_mentis_archive(source, |name| {
            bar.inc(1);
            bar.set_message(name.to_string());
        }).map_err(|e| e.to_string())?;
        bar.finish_and_clear();
        Some(dir)
    } else if source.is_dir() {
        None
    } else {
        return Err(format!("{} is neither a data directory nor a .mentis backup", source.display()));
    };
    let source = unpacked.as_ref().map_or(source, |d| d.path());
    let target = crate::target::Target::resolve(config, url, token).map_err(|e| e.to_string())?;
    if let crate::target::Target::Local(store) = &target {
        // Webhooks registered here follow the daemon's URL rule.
        store.db.webhooks().set_targets(Some(std::sync::Arc::new(config.webhook_allowed_cidrs.clone())));
    }
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_style(indicatif::ProgressStyle::with_template("{spinner} {pos} thoughts ({per_sec}) {msg}").map_err(|e| e.to_string())?);
    let started = std::time::Instant::now();
    let summary = import_reference_dir(&target, source, |key, n| {
        bar.inc(n);
        bar.set_message(format!("last chain: {key}"));
    }).map_err(|e| e.to_string())?;
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
    for (old, new) in &summary.webhooks {
        println!("registered webhook {new} (was {old} in the reference)");
    }
    let mut warnings = summary.warnings.clone();
    let (tokens_file, _) = config.token_file().map_err(|e| e.to_string())?;
    let tokens = import_reference_tokens(source, Some(&tokens_file), &mut warnings).map_err(|e| e.to_string())?;
    for name in &tokens.imported {
        println!("imported bearer token {name} (same secret)");
    }
    for name in &tokens.present {
        println!("skipped bearer token {name}: a token of that name is in the token file");
    }
    for name in &tokens.revoked {
        println!("skipped bearer token {name}: revoked in the reference");
    }
    for m in &summary.mismatches {
        println!("hash mismatch in {} at index {} (id {}): {}", m.chain_key, m.index, m.id, m.reason);
    }
    for w in &warnings {
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
                let token = add_token(path, &name, scope, &chains).map_err(|e| e.to_string())?;
                eprintln!("added token '{}' ({scope} on {}) to {}; a daemon reading that file requires tokens within a second; the token is shown only now:", name.trim(), if chains.is_empty() { "*".to_string() } else { chains.join(",") }, path.display());
                println!("{token}");
            }
            TokenCommand::List => {
                for t in list_tokens(path).map_err(|e| e.to_string())? {
                    println!("{}\t{}\t{}", t.name, t.scope, t.chains.join(","));
                }
            }
            TokenCommand::Revoke { name } => {
                revoke_token(path, &name).map_err(|e| e.to_string())?;
                eprintln!("revoked token '{name}' in {}", path.display());
            }
        }
        Ok(())
    }
}
