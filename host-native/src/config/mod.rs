//! Daemon configuration: every `MENTISDB_*` variable of the REST spec, each
//! with a command-line flag that overrides it (`mentisdbd --help`).
//!
//! This file is the list of settings ([`Config`], read by clap). The rest:
//! `values.rs` reads single values (switch words, numbers in range,
//! [`StorageUrl`]); `environment.rs` loads `.env` files and 0.10's names
//! ([`load_environment`]) and names unread variables; `settings.rs` checks
//! the settings together ([`Config::validate`], [`ConfigError`]) and
//! derives paths and addresses from them.

mod environment;
mod settings;
mod values;

pub use environment::{load_environment, unread_env_warning, EnvError, ENV_ALIASES, REFERENCE_ONLY_ENV};
pub use settings::{ConfigError, DEFAULT_TOKENS_FILE};
pub use values::{StorageUrl, ValueError};

use clap::Parser;
use mentisdb_core::ChainFormat;
use std::net::IpAddr;
use std::path::PathBuf;
use values::{parse_flag, parse_on_off, parse_scan_window, parse_switch, parse_unit_interval};

/// Configuration of `mentisdbd`. Flags override environment variables.
#[derive(Debug, Clone, Parser)]
#[command(name = "mentisdbd", version, about = "MentisDB daemon: durable hash-chained agent memory over REST and MCP (streamable HTTP or stdio).")]
pub struct Config {
    /// Data directory holding chain files and the skill registry [default: $HOME/.mentisdb].
    #[arg(long, env = "MENTISDB_DIR", global = true)]
    pub dir: Option<PathBuf>,

    /// Store every object (chains, agent registries, skills) in PostgreSQL
    /// instead of MENTISDB_DIR: `postgres://user[:password]@host:port/db`
    /// (or `postgresql://`). Any number of daemons on one database serve the
    /// same chains. The tables are created on first start.
    #[arg(long, env = "MENTISDB_STORAGE_URL", hide_env_values = true, value_parser = StorageUrl::from_arg)]
    pub storage_url: Option<StorageUrl>,

    /// Chain used when a request omits `chain_key` (MentisDB 0.10's
    /// MENTISDB_DEFAULT_CHAIN_KEY is read too, and wins when set).
    #[arg(long, env = "MENTISDB_DEFAULT_KEY", default_value = "borganism-brain")]
    pub default_key: String,

    /// Storage format of newly created chains: binary or jsonl (MentisDB
    /// 0.10's MENTISDB_STORAGE_ADAPTER is read too, and wins when set).
    #[arg(long, env = "MENTISDB_DEFAULT_STORAGE_ADAPTER", default_value = "binary", value_parser = ChainFormat::parse)]
    pub default_storage_adapter: ChainFormat,

    /// Log every interaction to the console (1, 0, true, false) [default: true].
    #[arg(long, env = "MENTISDB_VERBOSE", value_parser = parse_flag, num_args = 0..=1, default_missing_value = "true")]
    pub verbose: Option<bool>,

    /// Replace credentials (cloud and API keys, tokens, private keys, URL
    /// passwords) in appended thoughts with `[REDACTED:<kind>]` before they
    /// are hashed (1, 0, true, false) [default: true].
    #[arg(long, env = "MENTISDB_REDACT_SECRETS", value_parser = parse_flag, num_args = 0..=1, default_missing_value = "true")]
    pub redact_secrets: Option<bool>,

    /// Append-time dedup (MentisDB 0.10): a new thought whose content has at
    /// least this Jaccard word similarity (0.0 to 1.0) to one of the last
    /// MENTISDB_DEDUP_SCAN_WINDOW thoughts gets a `Supersedes` relation to
    /// the most similar one. Unset: off.
    #[arg(long, env = "MENTISDB_DEDUP_THRESHOLD", value_parser = parse_unit_interval)]
    pub dedup_threshold: Option<f64>,

    /// How many of a chain's latest thoughts dedup compares a new thought with.
    #[arg(long, env = "MENTISDB_DEDUP_SCAN_WINDOW", default_value_t = mentisdb_core::DEFAULT_DEDUP_SCAN_WINDOW, value_parser = parse_scan_window)]
    pub dedup_scan_window: usize,

    /// Memory budget for chains in memory, in MiB (an estimate: about twice a
    /// chain's stored bytes plus 1 KiB a thought). Past it, the least recently
    /// used chains are dropped from memory and loaded again (verified) on
    /// their next use, so one daemon can serve more chains than fit in its
    /// memory. Unset: every chain stays in memory.
    #[arg(long, env = "MENTISDB_MAX_RESIDENT_MB", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_resident_mb: Option<u64>,
    /// Least seconds between two automatic signed checkpoints of one chain
    /// (made after an append; the latest is kept in memory). 0 turns
    /// automatic checkpoints off; `mentisdb_checkpoint` always signs one.
    #[arg(long, env = "MENTISDB_CHECKPOINT_INTERVAL_SECS", default_value_t = 60)]
    pub checkpoint_interval_secs: u64,

    /// Append interaction logs to this file (in addition to the console when verbose).
    #[arg(long, env = "MENTISDB_LOG_FILE")]
    pub log_file: Option<PathBuf>,

    /// Bind host of both HTTP servers. A non-loopback host requires an API token.
    #[arg(long, env = "MENTISDB_BIND_HOST", default_value = "127.0.0.1")]
    pub bind_host: IpAddr,

    /// MCP (streamable HTTP) port; 0 picks a free port.
    #[arg(long, env = "MENTISDB_MCP_PORT", default_value_t = 9471)]
    pub mcp_port: u16,

    /// REST port; 0 picks a free port.
    #[arg(long, env = "MENTISDB_REST_PORT", default_value_t = 9472)]
    pub rest_port: u16,

    /// Bearer token required on REST and MCP requests (`Authorization: Bearer <token>`):
    /// one admin token for all chains, named `api-token`.
    /// A token (this or MENTISDB_TOKENS_FILE) is required when binding a non-loopback address.
    #[arg(long, env = "MENTISDB_API_TOKEN", hide_env_values = true)]
    pub api_token: Option<String>,

    /// MentisDB 0.10's switch (true, false, 1, 0, yes, no, on, off): require
    /// a bearer token, accepting the active tokens of 0.10's registry
    /// `<dir>/bearer-tokens.json` (admin on their chains) besides ours. The
    /// daemon refuses to start when it is on and no token exists at all.
    #[arg(long, env = "MENTISDB_BEARER_TOKEN_ACCESS", value_parser = parse_switch, num_args = 0..=1, default_missing_value = "true")]
    pub bearer_token_access: Option<bool>,

    /// Token file (TOML, or JSON when named *.json) of scoped tokens, stored
    /// by SHA-256; reloaded on SIGHUP and when it changes. `mentisdbd token
    /// add|list|revoke` edit it. Format: docs/security.md, "Tokens and TLS".
    /// [default: <dir>/tokens.toml, read when it exists: tokens turn on as
    /// soon as `mentisdbd token add` creates it]
    #[arg(long, env = "MENTISDB_TOKENS_FILE", global = true)]
    pub tokens_file: Option<PathBuf>,

    /// PEM certificate chain: serve REST and MCP over HTTPS (with --tls-key).
    /// With --https-mcp-port or --https-rest-port: the certificate of those
    /// HTTPS listeners (the HTTP ports stay plain) [default there: <dir>/tls/cert.pem].
    #[arg(long, env = "MENTISDB_TLS_CERT", global = true)]
    pub tls_cert: Option<PathBuf>,

    /// PEM private key of --tls-cert.
    #[arg(long, env = "MENTISDB_TLS_KEY", global = true)]
    pub tls_key: Option<PathBuf>,

    /// HTTPS MCP port beside the HTTP one (MentisDB 0.10 uses 9473); unset
    /// or 0: none. Its certificate is --tls-cert/--tls-key, else
    /// <dir>/tls/cert.pem and key.pem, made self-signed on first start.
    #[arg(long, env = "MENTISDB_HTTPS_MCP_PORT")]
    pub https_mcp_port: Option<u16>,

    /// HTTPS REST port beside the HTTP one (MentisDB 0.10 uses 9474); unset
    /// or 0: none. Certificate as for --https-mcp-port.
    #[arg(long, env = "MENTISDB_HTTPS_REST_PORT")]
    pub https_rest_port: Option<u16>,

    /// Networks webhooks may reach although they are internal (loopback,
    /// private, link-local, CGNAT...), comma- or space-separated CIDRs or
    /// addresses, each at most a /8 (MentisDB 0.10's variable). Unset: no
    /// internal target.
    #[arg(long, env = "MENTISDB_WEBHOOK_ALLOWED_CIDRS", default_value = "", value_parser = crate::infra::webhooks::UrlPolicy::parse)]
    pub webhook_allowed_cidrs: crate::infra::webhooks::UrlPolicy,

    /// Deliver webhooks from this daemon (on, off) [default: on]. With
    /// several daemons on one PostgreSQL database, turn it on in exactly one
    /// of them: each delivering daemon sends every thought. Off, registering
    /// a webhook here answers `unavailable`.
    #[arg(long, env = "MENTISDB_WEBHOOKS", value_parser = parse_on_off, default_value = "on")]
    pub webhooks: bool,

    /// First wait before a failed webhook delivery is tried again, in
    /// milliseconds; it doubles after each failure.
    #[arg(long, env = "MENTISDB_WEBHOOK_RETRY_BASE_MS", default_value_t = 1000)]
    pub webhook_retry_base_ms: u64,

    /// Longest wait between two attempts of one webhook delivery, in seconds
    /// (attempts go on until the receiver answers 2xx or the webhook is deleted).
    #[arg(long, env = "MENTISDB_WEBHOOK_RETRY_MAX_SECS", default_value_t = 300)]
    pub webhook_retry_max_secs: u64,

    /// Largest accepted request body in bytes (larger bodies get HTTP 413).
    #[arg(long, env = "MENTISDB_MAX_BODY_BYTES", default_value_t = 1 << 20)]
    pub max_body_bytes: usize,

    /// Largest chain object `POST /v1/chains/{chain_key}/import` accepts in
    /// bytes (admin only; how `import-reference --url` moves chains in).
    #[arg(long, env = "MENTISDB_MAX_IMPORT_BYTES", default_value_t = 256 << 20)]
    pub max_import_bytes: usize,

    /// Serve the explorer page at `/explorer` on the REST port (on, off)
    /// [default: on when the bind host is loopback, off otherwise]. The
    /// page's files are public; every API call it makes carries the token.
    #[arg(long, env = "MENTISDB_EXPLORER", value_parser = parse_on_off)]
    pub explorer: Option<bool>,

    /// Browser origins allowed to call the daemon besides its own pages
    /// (comma-separated, exactly as browsers send `Origin`, e.g.
    /// `https://app.example.com` or `http://localhost:6274`); the REST port
    /// answers CORS requests from these only. Every other web page is refused.
    #[arg(long, env = "MENTISDB_ALLOWED_ORIGINS", value_delimiter = ',')]
    pub allowed_origins: Vec<String>,

    /// Host names the daemon answers to besides IP addresses and
    /// `localhost` (comma-separated; `*`: any). Requests naming another
    /// host are refused (HTTP 421), which stops DNS-rebinding pages. On a
    /// non-loopback bind any name is accepted unless this is set.
    #[arg(long, env = "MENTISDB_ALLOWED_HOSTS", value_delimiter = ',')]
    pub allowed_hosts: Vec<String>,

    /// The tools MCP lists to agents (and 0.10's `/tools/list`): `all`,
    /// `core` (remember and recall: 9 tools, a fifth of the context), or tool
    /// names separated by commas. Every tool still answers calls; REST is
    /// unaffected. An MCP client may ask for another profile with
    /// `/mcp?tools=core`; `mentisdb --mode stdio --tools core` does.
    #[arg(long, env = "MENTISDB_TOOLS", default_value = "all", global = true)]
    pub tools: String,

    /// Serve MCP over stdin/stdout instead of HTTP (logs go to stderr), from
    /// this process: it opens (and locks) the data directory itself. See
    /// --mode stdio to share the directory's daemon instead.
    #[arg(long)]
    pub stdio: bool,

    /// How MCP clients reach this process (MentisDB 0.10's `--mode`):
    /// `http` serves REST and MCP over HTTP (the default); `stdio` serves MCP
    /// on stdin/stdout through the data directory's daemon, starting one
    /// (detached) when none runs, so several agents' stdio servers share one
    /// directory; `both` serves HTTP and MCP on stdio from this process.
    #[arg(long, value_enum, conflicts_with = "stdio")]
    pub mode: Option<Mode>,

    /// Directory holding all-MiniLM-L6-v2's `model.safetensors` and
    /// `tokenizer.json` (scripts/fetch-minilm.sh puts them there): ranked
    /// search becomes hybrid (BM25 + vectors). Needs a daemon built with
    /// `--features minilm`; the model is never downloaded.
    #[arg(long, env = "MENTISDB_MINILM_DIR")]
    pub minilm_dir: Option<PathBuf>,

    /// A static word-embedding model file (`scripts/make-static-model.sh`
    /// distils all-MiniLM-L6-v2 into one, 4.1 MB): ranked search becomes
    /// hybrid in any build, lighter than `--minilm-dir` and a little less
    /// precise (LoCoMo R@10 80.7% vs 82.4%; lexical 78.9%). The model the
    /// browser and WASI hosts take.
    #[arg(long, env = "MENTISDB_STATIC_MODEL", conflicts_with = "minilm_dir")]
    pub static_model: Option<PathBuf>,

    /// API key of the OpenAI-compatible chat-completions endpoint that
    /// `mentisdb_extract_memories` calls; extraction is off without it.
    #[arg(long, env = "OPENAI_API_KEY", hide_env_values = true)]
    pub openai_api_key: Option<String>,

    /// Base URL of that endpoint (`<url>/chat/completions` is called).
    #[arg(long, env = "LLM_BASE_URL", default_value = "https://api.openai.com/v1")]
    pub llm_base_url: String,

    /// The model asked.
    #[arg(long, env = "LLM_MODEL", default_value = "gpt-4o")]
    pub llm_model: String,
}

/// `--mode`: how MCP clients reach the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// MCP on stdio, relayed to the data directory's daemon.
    Stdio,
    /// REST and MCP over HTTP(S).
    Http,
    /// HTTP, and MCP on stdio from this process.
    Both,
}

#[cfg(test)]
mod tests;
