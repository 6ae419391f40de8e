//! What the settings mean together: the checks that involve several of
//! them ([`Config::validate`], failing with a [`ConfigError`]) and the values
//! derived from them (the data directory, the token file, the TLS files,
//! the listen addresses...).

use super::environment::default_data_dir;
use super::Config;
use clap::Parser;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

/// The token file's name in the data directory when `--tokens-file` is not given.
pub const DEFAULT_TOKENS_FILE: &str = "tokens.toml";

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
