//! Daemon configuration: every `MENTISDB_*` variable of the REST spec, each
//! with a command-line flag that overrides it (`mentisdbd --help`).

use clap::Parser;
use mentisdb_core::ChainFormat;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

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

/// A number in `0.0..=1.0` (a similarity threshold).
fn parse_unit_interval(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(format!("'{}' is not a number from 0.0 to 1.0", s.chars().take(32).collect::<String>())),
    }
}

/// A dedup scan window: 1 to 100000 thoughts.
fn parse_scan_window(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=100_000).contains(&n) => Ok(n),
        _ => Err(format!("'{}' is not a whole number from 1 to 100000", s.chars().take(32).collect::<String>())),
    }
}

/// A `postgres://` or `postgresql://` URL. It may hold a password, so its
/// `Debug` and `Display` show only the scheme, host, port and database.
#[derive(Clone, PartialEq, Eq)]
pub struct StorageUrl(String);

impl StorageUrl {
    /// Takes any value; [`Config::validate`] refuses what is not
    /// `postgres://...` or `postgresql://...` in one line that never repeats
    /// the value (a parser error of clap would, password included).
    pub fn from_arg(s: &str) -> Result<StorageUrl, std::convert::Infallible> {
        Ok(StorageUrl(s.trim().to_string()))
    }

    /// Whether the scheme is `postgres://` or `postgresql://`.
    pub fn is_postgres(&self) -> bool {
        self.0.starts_with("postgres://") || self.0.starts_with("postgresql://")
    }

    /// The URL as given, password included: for connecting, never for logs.
    pub fn secret(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for StorageUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Some((scheme, rest)) = self.0.split_once("://") else { return f.write_str("(not a URL)") };
        // Drop `user[:password]@` and anything after the database (`?options`).
        let host_and_db = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
        write!(f, "{scheme}://{}", host_and_db.split('?').next().unwrap_or(""))
    }
}

impl std::fmt::Debug for StorageUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StorageUrl({self})")
    }
}

/// The token file's name in the data directory when `--tokens-file` is not given.
pub const DEFAULT_TOKENS_FILE: &str = "tokens.toml";

/// MentisDB 0.10's names of our settings: `(0.10 name, our name)`. When
/// the 0.10 name is set it wins (0.10's own precedence); ours keep working.
pub const ENV_ALIASES: &[(&str, &str)] = &[("MENTISDB_DEFAULT_CHAIN_KEY", "MENTISDB_DEFAULT_KEY"), ("MENTISDB_STORAGE_ADAPTER", "MENTISDB_DEFAULT_STORAGE_ADAPTER")];

/// Reads the configuration files into the environment as MentisDB 0.10
/// does, before the command line is parsed: `./.env`, then `<dir>/.env`
/// where `<dir>` is `--dir` (from `args`), else `MENTISDB_DIR` (possibly
/// just set by `./.env`), else the default data directory. A variable
/// already set is never overridden (the real environment wins, then
/// `./.env`). Then [`ENV_ALIASES`] are applied. Missing files are fine; a
/// file that cannot be read or parsed is an error naming it and the line.
/// Returns the files read. Call it before any thread starts (it sets
/// environment variables).
pub fn load_environment(args: &[std::ffi::OsString]) -> Result<Vec<PathBuf>, String> {
    let mut loaded = Vec::new();
    let mut load = |path: PathBuf| -> Result<(), String> {
        if loaded.contains(&path) || !path.is_file() {
            return Ok(());
        }
        dotenvy::from_path(&path).map_err(|e| format!("cannot read {}: {}", path.display(), e.to_string().split_whitespace().collect::<Vec<_>>().join(" ")))?;
        loaded.push(path);
        Ok(())
    };
    load(PathBuf::from(".env"))?;
    let dir = dir_flag(args).or_else(|| std::env::var_os("MENTISDB_DIR").filter(|d| !d.is_empty()).map(PathBuf::from)).or_else(default_data_dir);
    if let Some(dir) = dir {
        load(dir.join(".env"))?;
    }
    for (theirs, ours) in ENV_ALIASES {
        if let Some(value) = std::env::var_os(theirs).filter(|v| !v.is_empty()) {
            std::env::set_var(ours, value);
        }
    }
    Ok(loaded)
}

/// The value of `--dir <path>` or `--dir=<path>` in `args`, if given.
fn dir_flag(args: &[std::ffi::OsString]) -> Option<PathBuf> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let s = a.to_string_lossy();
        if s == "--dir" {
            return it.next().map(PathBuf::from);
        }
        if let Some(v) = s.strip_prefix("--dir=") {
            return Some(PathBuf::from(v));
        }
    }
    None
}

/// `$HOME/.mentisdb`, when `HOME` is set.
fn default_data_dir() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".mentisdb"))
}

/// Parses `1`, `0`, `true`, `false` (case-insensitive).
fn parse_flag(s: &str) -> Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        other => Err(format!("expected one of 1, 0, true, false; got '{other}'")),
    }
}

/// Parses MentisDB 0.10's switch values: `1`, `true`, `yes`, `on` and
/// `0`, `false`, `no`, `off` (case-insensitive). Anything else is an error,
/// not "off": a typo must not leave a daemon open.
fn parse_switch(s: &str) -> Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        other => Err(format!("expected true or false (1/0, yes/no, on/off); got '{}'", other.chars().take(32).collect::<String>())),
    }
}

/// MentisDB 0.10's settings this daemon does not have (its own features:
/// dashboard, sounds, update checks, HNSW and fsync tuning). Named apart
/// from unknown ones in the start-up warning.
pub const REFERENCE_ONLY_ENV: &[&str] = &[
    "MENTISDB_AUTO_EDGE_K",
    "MENTISDB_AUTO_EDGE_THRESHOLD",
    "MENTISDB_AUTO_FLUSH",
    "MENTISDB_DASHBOARD_ALLOWED_HOSTS",
    "MENTISDB_DASHBOARD_PIN",
    "MENTISDB_DASHBOARD_PORT",
    "MENTISDB_EMBEDDINGS",
    "MENTISDB_FSYNC",
    "MENTISDB_GROUP_COMMIT_MS",
    "MENTISDB_HNSW_BACKGROUND_BUILD",
    "MENTISDB_HNSW_EF_CONSTRUCTION",
    "MENTISDB_HNSW_EF_SEARCH",
    "MENTISDB_HNSW_THRESHOLD",
    "MENTISDB_MCP_BOOTSTRAP_INSTRUCTIONS",
    "MENTISDB_STARTUP_SOUND",
    "MENTISDB_THOUGHT_SOUNDS",
    "MENTISDB_UPDATE_CHECK",
    "MENTISDB_UPDATE_REPO",
];

/// The one start-up warning line naming every `MENTISDB_*` variable in
/// `set` that `command` (with its subcommands) does not read, or `None`.
pub fn unread_env_warning(command: &clap::Command, set: impl IntoIterator<Item = String>) -> Option<String> {
    fn read_by(cmd: &clap::Command, out: &mut Vec<String>) {
        out.extend(cmd.get_arguments().filter_map(|a| a.get_env()).map(|e| e.to_string_lossy().into_owned()));
        for sub in cmd.get_subcommands() {
            read_by(sub, out);
        }
    }
    let mut known = Vec::new();
    read_by(command, &mut known);
    known.extend(ENV_ALIASES.iter().map(|(theirs, _)| theirs.to_string()));
    let mut unread: Vec<String> = set.into_iter().filter(|k| k.starts_with("MENTISDB_") && !known.contains(k)).collect();
    if unread.is_empty() {
        return None;
    }
    unread.sort();
    let named: Vec<String> = unread.iter().map(|k| if REFERENCE_ONLY_ENV.contains(&k.as_str()) { format!("{k} (a MentisDB 0.10 setting this daemon does not have)") } else { format!("{k} (unknown: misspelled?)") }).collect();
    Some(format!("ignored environment variables: {}; `mentisdbd --help` lists the settings", named.join(", ")))
}

/// Parses `on`, `off` (and `1`, `0`, `true`, `false`), case-insensitive.
fn parse_on_off(s: &str) -> Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "on" => Ok(true),
        "off" => Ok(false),
        other => parse_flag(other).map_err(|_| format!("expected on or off; got '{other}'")),
    }
}

/// Why the configuration cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A non-loopback bind without a token would expose memory to the network.
    #[error("refusing to bind non-loopback address {host} without an API token: set MENTISDB_API_TOKEN=<secret> (or --api-token), or MENTISDB_TOKENS_FILE (or --tokens-file), or bind 127.0.0.1")]
    TokenRequired { host: IpAddr },
    /// Only one of the TLS certificate and key was given.
    #[error("TLS needs both MENTISDB_TLS_CERT (--tls-cert) and MENTISDB_TLS_KEY (--tls-key); only {given} is set")]
    TlsHalf { given: &'static str },
    /// No data directory was given and no home directory is known.
    #[error("no data directory: set MENTISDB_DIR (or --dir), or HOME so the default $HOME/.mentisdb can be used")]
    NoDataDir,
    /// MENTISDB_STORAGE_URL is not a PostgreSQL URL.
    #[error("MENTISDB_STORAGE_URL (--storage-url) must be a postgres:// or postgresql:// URL, e.g. postgres://mentisdb@127.0.0.1:5432/mentisdb")]
    StorageUrl,
    /// The API token is empty.
    #[error("MENTISDB_API_TOKEN is set but empty; set a non-empty secret or unset it")]
    EmptyToken,
    /// MENTISDB_TOOLS names no profile or an unknown tool.
    #[error("MENTISDB_TOOLS (--tools): {0}")]
    Tools(String),
}

impl Config {
    /// Checks rules that involve several settings.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.api_token.as_deref().is_some_and(|t| t.trim().is_empty()) {
            return Err(ConfigError::EmptyToken);
        }
        let default_tokens = self.tokens_file.is_none() && self.token_file().is_ok_and(|(p, _)| p.is_file());
        if !self.bind_host.is_loopback() && self.api_token.is_none() && self.tokens_file.is_none() && !default_tokens && !self.bearer_token_access() && !self.stdio {
            return Err(ConfigError::TokenRequired { host: self.bind_host });
        }
        if self.storage_url.as_ref().is_some_and(|u| !u.is_postgres()) {
            return Err(ConfigError::StorageUrl);
        }
        self.tool_profile()?;
        match (&self.tls_cert, &self.tls_key) {
            (Some(_), None) => return Err(ConfigError::TlsHalf { given: "the certificate" }),
            (None, Some(_)) => return Err(ConfigError::TlsHalf { given: "the key" }),
            _ => {}
        }
        Ok(())
    }

    /// The data directory: `--dir`/`MENTISDB_DIR`, else `$HOME/.mentisdb`.
    pub fn data_dir(&self) -> Result<PathBuf, ConfigError> {
        match &self.dir {
            Some(d) => Ok(d.clone()),
            None => default_data_dir().ok_or(ConfigError::NoDataDir),
        }
    }

    /// Whether interactions are logged to the console (unset means true).
    pub fn verbose(&self) -> bool {
        self.verbose.unwrap_or(true)
    }

    /// The tools listed to agents (`MENTISDB_TOOLS`).
    pub fn tool_profile(&self) -> Result<Vec<&'static str>, ConfigError> {
        mentisdb_core::dispatch::select_tools(&self.tools).map_err(ConfigError::Tools)
    }

    /// The token file and whether it is the default one (`<dir>/tokens.toml`,
    /// read only while it exists) rather than one named by `--tokens-file`
    /// (which must exist).
    pub fn token_file(&self) -> Result<(PathBuf, bool), ConfigError> {
        match &self.tokens_file {
            Some(path) => Ok((path.clone(), false)),
            None => Ok((self.data_dir()?.join(DEFAULT_TOKENS_FILE), true)),
        }
    }

    /// Whether MentisDB 0.10's `MENTISDB_BEARER_TOKEN_ACCESS` is on (unset means off).
    pub fn bearer_token_access(&self) -> bool {
        self.bearer_token_access.unwrap_or(false)
    }

    /// MentisDB 0.10's token registry, when its switch is on.
    pub fn reference_token_registry(&self) -> Result<Option<PathBuf>, ConfigError> {
        Ok(if self.bearer_token_access() { Some(self.data_dir()?.join(crate::tokens::REFERENCE_REGISTRY)) } else { None })
    }

    /// Whether appends redact secrets (unset means true).
    pub fn redact_secrets(&self) -> bool {
        self.redact_secrets.unwrap_or(true)
    }

    /// Whether `/explorer` is served: as `--explorer` says, else only when
    /// the bind host is loopback.
    pub fn explorer(&self) -> bool {
        self.explorer.unwrap_or(self.bind_host.is_loopback())
    }

    /// The startup warning for a network bind without TLS, if this is one.
    pub fn cleartext_network_warning(&self) -> Option<&'static str> {
        (!self.bind_host.is_loopback() && self.tls_cert.is_none() && !self.stdio)
            .then_some("binding a non-loopback address without TLS: tokens and memory cross the network in clear; set MENTISDB_TLS_CERT and MENTISDB_TLS_KEY")
    }

    /// Whether HTTPS listeners run beside the HTTP ones (an HTTPS port is set and not 0).
    pub fn https_beside(&self) -> bool {
        self.https_rest_port.is_some_and(|p| p > 0) || self.https_mcp_port.is_some_and(|p| p > 0)
    }

    /// The certificate and key of the HTTPS listeners: --tls-cert and
    /// --tls-key, else `<dir>/tls/cert.pem` and `key.pem`.
    pub fn tls_files(&self) -> Result<(PathBuf, PathBuf), ConfigError> {
        match (&self.tls_cert, &self.tls_key) {
            (Some(c), Some(k)) => Ok((c.clone(), k.clone())),
            _ => Ok(crate::infra::tls_cert::default_paths(&self.data_dir()?)),
        }
    }

    /// The REST listen address.
    pub fn rest_addr(&self) -> SocketAddr {
        SocketAddr::new(self.bind_host, self.rest_port)
    }

    /// The MCP listen address.
    pub fn mcp_addr(&self) -> SocketAddr {
        SocketAddr::new(self.bind_host, self.mcp_port)
    }

    /// A configuration for tests and embedding: loopback, free ports, `dir`.
    pub fn for_dir(dir: impl Into<PathBuf>) -> Config {
        let mut c = Config::parse_from(["mentisdbd", "--rest-port", "0", "--mcp-port", "0", "--verbose", "false"]);
        c.dir = Some(dir.into());
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_loopback_without_token_is_refused() {
        let c = Config::parse_from(["mentisdbd", "--bind-host", "0.0.0.0"]);
        let err = c.validate().unwrap_err();
        assert!(err.to_string().contains("MENTISDB_API_TOKEN"), "{err}");
        let c = Config::parse_from(["mentisdbd", "--bind-host", "0.0.0.0", "--api-token", "s3cret"]);
        assert_eq!(c.validate(), Ok(()));
        assert_eq!(Config::parse_from(["mentisdbd"]).validate(), Ok(()));
        let c = Config::parse_from(["mentisdbd", "--bind-host", "0.0.0.0", "--tokens-file", "t.toml"]);
        assert_eq!(c.validate(), Ok(()));
    }

    #[test]
    fn the_reference_switch_reads_its_values_and_a_typo_is_an_error() {
        let on = |v: &str| Config::try_parse_from(["mentisdbd", "--bearer-token-access", v]).map(|c| c.bearer_token_access());
        for v in ["true", "1", "YES", "on"] {
            assert!(on(v).unwrap(), "{v}");
        }
        for v in ["false", "0", "no", "OFF"] {
            assert!(!on(v).unwrap(), "{v}");
        }
        assert!(on("ture").is_err(), "a typo never means off");
        assert!(!Config::parse_from(["mentisdbd"]).bearer_token_access());
        let c = Config::parse_from(["mentisdbd", "--bind-host", "0.0.0.0", "--bearer-token-access", "--dir", "/d"]);
        assert_eq!(c.validate(), Ok(()), "0.10's tokens guard a network bind");
        assert_eq!(c.reference_token_registry().unwrap(), Some(PathBuf::from("/d/bearer-tokens.json")));
    }

    #[test]
    fn unread_variables_are_named_in_one_line() {
        let cmd = <Config as clap::CommandFactory>::command();
        let set = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(unread_env_warning(&cmd, set(&["MENTISDB_DIR", "MENTISDB_DEFAULT_CHAIN_KEY", "HOME", "MENTISDB_BEARER_TOKEN_ACCESS"])), None);
        let w = unread_env_warning(&cmd, set(&["MENTISDB_API_TOKN", "MENTISDB_DIR", "MENTISDB_FSYNC"])).unwrap();
        assert!(w.contains("MENTISDB_API_TOKN (unknown: misspelled?)") && w.contains("MENTISDB_FSYNC (a MentisDB 0.10 setting") && !w.contains("MENTISDB_DIR") && !w.contains('\n'), "{w}");
    }

    #[test]
    fn a_network_bind_without_tls_warns() {
        let on = |args: &[&str]| Config::parse_from([&["mentisdbd"], args].concat()).cleartext_network_warning();
        assert!(on(&["--bind-host", "0.0.0.0", "--api-token", "s"]).is_some_and(|w| w.contains("MENTISDB_TLS_CERT")));
        assert_eq!(on(&["--bind-host", "0.0.0.0", "--api-token", "s", "--tls-cert", "c.pem", "--tls-key", "k.pem"]), None);
        assert_eq!(on(&[]), None);
    }

    #[test]
    fn tls_needs_both_files() {
        let e = Config::parse_from(["mentisdbd", "--tls-cert", "c.pem"]).validate().unwrap_err();
        assert!(e.to_string().contains("MENTISDB_TLS_KEY"), "{e}");
        assert!(Config::parse_from(["mentisdbd", "--tls-key", "k.pem"]).validate().is_err());
        assert_eq!(Config::parse_from(["mentisdbd", "--tls-cert", "c.pem", "--tls-key", "k.pem"]).validate(), Ok(()));
    }

    #[test]
    fn flags_parse() {
        let c = Config::parse_from(["mentisdbd", "--verbose", "0", "--default-storage-adapter", "jsonl", "--rest-port", "0"]);
        assert!(!c.verbose());
        assert_eq!(c.default_storage_adapter, ChainFormat::Jsonl);
        assert_eq!(c.rest_port, 0);
        assert!(Config::try_parse_from(["mentisdbd", "--verbose", "maybe"]).is_err());
        assert!(c.redact_secrets(), "redaction is on unless switched off");
        assert!(!Config::parse_from(["mentisdbd", "--redact-secrets", "false"]).redact_secrets());
        assert!(Config::parse_from(["mentisdbd", "--redact-secrets", "1"]).redact_secrets());
        assert!(Config::try_parse_from(["mentisdbd", "--redact-secrets", "maybe"]).is_err());
        assert!(Config::try_parse_from(["mentisdbd", "--default-storage-adapter", "sqlite"]).is_err());
        assert_eq!((c.dedup_threshold, c.dedup_scan_window), (None, 64), "dedup is off by default");
        let d = Config::parse_from(["mentisdbd", "--dedup-threshold", "0.85", "--dedup-scan-window", "16"]);
        assert_eq!((d.dedup_threshold, d.dedup_scan_window), (Some(0.85), 16));
        for bad in [["--dedup-threshold", "1.5"], ["--dedup-threshold", "NaN"], ["--dedup-scan-window", "0"]] {
            assert!(Config::try_parse_from([&["mentisdbd"], &bad[..]].concat()).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_explorer_is_on_by_default_only_on_loopback() {
        let explorer = |args: &[&str]| Config::parse_from([&["mentisdbd"], args].concat()).explorer();
        assert!(explorer(&[]));
        assert!(!explorer(&["--explorer", "off"]));
        assert!(!explorer(&["--bind-host", "0.0.0.0", "--api-token", "s"]));
        assert!(explorer(&["--bind-host", "0.0.0.0", "--api-token", "s", "--explorer", "ON"]));
        assert!(Config::try_parse_from(["mentisdbd", "--explorer", "maybe"]).is_err());
    }

    #[test]
    fn storage_url_is_postgres_and_never_shown_with_its_password() {
        assert_eq!(Config::parse_from(["mentisdbd"]).storage_url, None, "file storage by default");
        let c = Config::parse_from(["mentisdbd", "--storage-url", "postgres://ada:hunter2@db.internal:5433/memory?sslmode=disable"]);
        let url = c.storage_url.clone().unwrap();
        assert_eq!(url.secret(), "postgres://ada:hunter2@db.internal:5433/memory?sslmode=disable");
        assert_eq!(url.to_string(), "postgres://db.internal:5433/memory");
        assert!(!format!("{c:?}").contains("hunter2"));
        assert_eq!(c.validate(), Ok(()));
        assert_eq!(Config::parse_from(["mentisdbd", "--storage-url", "postgresql://h/db"]).validate(), Ok(()));
        for bad in ["mysql://u:hunter2@h/db", "/var/lib/mentisdb", "sqlite:memory.db"] {
            let c = Config::parse_from(["mentisdbd", "--storage-url", bad]);
            let e = c.validate().unwrap_err().to_string();
            assert!(e.contains("must be a postgres:// or postgresql:// URL") && !e.contains("hunter2") && !e.contains('\n'), "{e}");
            assert!(!format!("{c:?}").contains("hunter2"));
        }
    }
}
