//! The `mentisdbd` command line: no subcommand serves (every [`Config`]
//! flag), subcommands manage what the daemon reads. A new subcommand is a
//! variant of [`Command`] and an arm of [`Command::run`].

use super::backup::{BackupArgs, RestoreArgs};
use super::shell::{chain_args, fact_line, hit_lines, lease_line, presence_line, put, review_line};
use super::{import, setup, shell, CommandError};
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
    /// Record a fact (`subject` `predicate` `object`) from now (or
    /// `--valid-from`), closing the active one of that subject and predicate.
    Fact {
        subject: String,
        predicate: String,
        object: String,
        /// When it starts to hold: RFC 3339 or ms since 1970 [default: now].
        #[arg(long)]
        valid_from: Option<String>,
        #[command(flatten)]
        at: ShellTarget,
    },
    /// The active facts (of `subject`, when given), or those holding at `--at-time`.
    Facts {
        subject: Option<String>,
        /// A time (RFC 3339 or ms since 1970): the facts holding then.
        #[arg(long)]
        at_time: Option<String>,
        #[command(flatten)]
        at: ShellTarget,
    },
    /// Ask for a review of `subject`; prints its id and deadline.
    Review {
        subject: String,
        /// Who may decide (repeat it) [default: anyone but the requester].
        #[arg(long = "reviewer")]
        reviewers: Vec<String>,
        /// Time to decide in ms, 1 min to 7 days [default: a day].
        #[arg(long)]
        deadline_ms: Option<u64>,
        /// Who asks (an agent id) [default: mentisdb].
        #[arg(long)]
        agent: Option<String>,
        #[command(flatten)]
        at: ShellTarget,
    },
    /// Decide a review: approved, rejected or needs_changes (exit 1 when it
    /// takes no decision from this agent: decided already, expired, not theirs).
    Decide {
        review_id: String,
        decision: String,
        /// The reviewer deciding (an agent id).
        #[arg(long)]
        agent: String,
        #[arg(long)]
        comment: Option<String>,
        #[command(flatten)]
        at: ShellTarget,
    },
    /// Undecided reviews: id, status, deadline, requester, subject.
    Reviews {
        /// Only those this agent may decide.
        #[arg(long)]
        reviewer: Option<String>,
        /// Only those this agent asked for.
        #[arg(long)]
        requester: Option<String>,
        /// Decided ones too.
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        at: ShellTarget,
    },
    /// Say an agent is active in the chain and what it is doing (not stored in the chain).
    Heartbeat {
        agent_id: String,
        /// What it is doing: editing, reading, reviewing, idle ...
        #[arg(long)]
        action: Option<String>,
        /// The file it is working on.
        #[arg(long)]
        file: Option<String>,
        #[arg(long)]
        session: Option<String>,
        #[command(flatten)]
        at: ShellTarget,
    },
    /// The agents seen in the chain lately: agent, action, file, last seen.
    Presence {
        /// Look back this many ms, at most a day [default: 1800000].
        #[arg(long)]
        since_ms: Option<u64>,
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
        clients: Vec<super::client_setup::Client>,
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
    /// Runs the command; a failure is one line on stderr, prefixed with the
    /// name the program was run as (`mentisdbd` or `mentisdb`).
    pub fn run(self, config: &Config, program: &str) -> ExitCode {
        let result = match self {
            Command::Token(t) => config.token_file().map_err(CommandError::from).and_then(|(path, _)| t.run(&path)),
            Command::Cert { names, force } => mint_cert(config, &names, force),
            Command::Setup { clients, url, token, stdio, dry_run } => setup::setup(config, &clients, url, token, stdio, dry_run),
            Command::Wizard { url, token, yes } => setup::wizard(config, url, token, yes),
            Command::Add { content, at, thought_type, agent, importance, tags, concepts } => {
                let mut args = chain_args(at.chain.as_deref());
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
                shell::call(config, &at, "mentisdb_append", args, |v| {
                    let t = &v["thought"];
                    vec![format!("appended #{} {} (hash {})", t["index"], t["id"].as_str().unwrap_or(""), t["hash"].as_str().unwrap_or(""))]
                })
            }
            Command::Search { text, at, limit } => {
                let mut args = chain_args(at.chain.as_deref());
                args.insert("text".into(), text.into());
                args.insert("limit".into(), limit.unwrap_or(10).into());
                shell::call(config, &at, "mentisdb_ranked_search", args, hit_lines)
            }
            Command::Agents { at } => shell::call(config, &at, "mentisdb_list_agent_registry", chain_args(at.chain.as_deref()), |v| {
                v["agents"].as_array().into_iter().flatten().map(|a| format!("{}\t{}\t{}\t{}\t{} thoughts", a["agent_id"].as_str().unwrap_or(""), a["display_name"].as_str().unwrap_or(""), a["agent_owner"].as_str().unwrap_or("-"), a["status"].as_str().unwrap_or(""), a["thought_count"])).collect()
            }),
            Command::Claim { key, holder, ttl_ms, at } => {
                let mut args = chain_args(at.chain.as_deref());
                args.insert("key".into(), key.into());
                args.insert("holder".into(), holder.into());
                if let Some(ttl) = ttl_ms {
                    args.insert("ttl_ms".into(), ttl.into());
                }
                shell::claim(config, &at, "mentisdb_claim", args)
            }
            Command::Release { key, holder, at } => {
                let mut args = chain_args(at.chain.as_deref());
                args.insert("key".into(), key.into());
                args.insert("holder".into(), holder.into());
                shell::claim(config, &at, "mentisdb_release_claim", args)
            }
            Command::Claims { at } => shell::call(config, &at, "mentisdb_list_claims", chain_args(at.chain.as_deref()), |v| {
                v["claims"].as_array().into_iter().flatten().map(lease_line).collect()
            }),
            Command::Fact { subject, predicate, object, valid_from, at } => {
                let mut args = chain_args(at.chain.as_deref());
                args.insert("subject".into(), subject.into());
                args.insert("predicate".into(), predicate.into());
                args.insert("object".into(), object.into());
                if let Some(from) = valid_from {
                    args.insert("valid_from".into(), from.into());
                }
                shell::call(config, &at, "mentisdb_record_fact", args, |v| {
                    let closed = v["closed"].as_array().into_iter().flatten().map(|f| format!("closed\t{}", fact_line(f)));
                    std::iter::once(format!("recorded\t{}", fact_line(&v["fact"]))).chain(closed).collect()
                })
            }
            Command::Facts { subject, at_time, at } => {
                let mut args = chain_args(at.chain.as_deref());
                if let Some(subject) = subject {
                    args.insert("subject".into(), subject.into());
                }
                if let Some(time) = at_time {
                    args.insert("point_in_time".into(), time.into());
                }
                shell::call(config, &at, "mentisdb_query_facts", args, |v| v["facts"].as_array().into_iter().flatten().map(fact_line).collect())
            }
            Command::Review { subject, reviewers, deadline_ms, agent, at } => {
                let mut args = chain_args(at.chain.as_deref());
                args.insert("subject".into(), subject.into());
                args.insert("reviewers".into(), reviewers.into());
                put(&mut args, "deadline_ms", deadline_ms);
                put(&mut args, "agent_id", agent);
                shell::call(config, &at, "mentisdb_request_review", args, |v| vec![format!("requested\t{}", review_line(&v["review"]))])
            }
            Command::Decide { review_id, decision, agent, comment, at } => {
                let mut args = chain_args(at.chain.as_deref());
                args.insert("review_id".into(), review_id.into());
                args.insert("decision".into(), decision.into());
                args.insert("agent_id".into(), agent.into());
                put(&mut args, "comment", comment);
                shell::decide(config, &at, args)
            }
            Command::Reviews { reviewer, requester, all, at } => {
                let mut args = chain_args(at.chain.as_deref());
                put(&mut args, "reviewer", reviewer);
                put(&mut args, "requester", requester);
                args.insert("include_decided".into(), all.into());
                shell::call(config, &at, "mentisdb_list_reviews", args, |v| v["reviews"].as_array().into_iter().flatten().map(review_line).collect())
            }
            Command::Heartbeat { agent_id, action, file, session, at } => {
                let mut args = chain_args(at.chain.as_deref());
                args.insert("agent_id".into(), agent_id.into());
                put(&mut args, "current_action", action);
                put(&mut args, "current_file", file);
                put(&mut args, "session_id", session);
                args.insert("tool".into(), "mentisdbd".into());
                shell::call(config, &at, "mentisdb_heartbeat", args, |v| vec![presence_line(v)])
            }
            Command::Presence { since_ms, at } => {
                let mut args = chain_args(at.chain.as_deref());
                put(&mut args, "since_ms", since_ms);
                shell::call(config, &at, "mentisdb_list_presence", args, |v| v["agents"].as_array().into_iter().flatten().map(presence_line).collect())
            }
            Command::Head { at } => shell::call(config, &at, "mentisdb_head", chain_args(at.chain.as_deref()), |v| {
                vec![format!("{}: {} thoughts, head #{} {}, integrity {}", v["chain_key"].as_str().unwrap_or(""), v["thought_count"], v["latest_thought"]["index"], v["head_hash"].as_str().unwrap_or("-"), if v["integrity_ok"] == true { "ok" } else { "FAILED" })]
            }),
            Command::Verify => shell::verify(config),
            Command::ImportReference { source, url, token } => import::import_reference(config, &source, url.as_deref(), token.as_deref()),
            Command::Backup(args) => super::backup::backup(config, &args).map_err(CommandError::from),
            Command::Restore(args) => super::backup::restore(config, &args).map_err(CommandError::from),
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

/// `mentisdbd cert`: writes the pair and says where, for what names, and its SHA-256.
fn mint_cert(config: &Config, names: &[String], force: bool) -> Result<(), CommandError> {
    let (cert, key) = config.tls_files()?;
    let minted = crate::infra::tls_cert::mint(&cert, &key, names, force)?;
    eprintln!("wrote {} and {} for {}; to serve it, restart the daemon with an HTTPS port (--https-rest-port / --https-mcp-port) or with --tls-cert and --tls-key", cert.display(), key.display(), minted.names.join(", "));
    println!("sha256={}", minted.sha256);
    Ok(())
}

impl TokenCommand {
    fn run(self, path: &Path) -> Result<(), CommandError> {
        match self {
            TokenCommand::Add { name, scope, chains } => {
                let token = add_token(path, &name, scope, &chains)?;
                eprintln!("added token '{}' ({scope} on {}) to {}; a daemon reading that file requires tokens within a second; the token is shown only now:", name.trim(), if chains.is_empty() { "*".to_string() } else { chains.join(",") }, path.display());
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
