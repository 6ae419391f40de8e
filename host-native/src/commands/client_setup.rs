//! `mentisdbd setup <client>...`: writes the MCP server entry `mentisdb` into
//! agent clients' configuration files.
//!
//! Contract: for each client, one file (its path from the home and config
//! directories, see [`Client::config_path`]) gets one entry, under the
//! client's section (`mcpServers`, `servers`, `mcp` or `[mcp_servers]`),
//! replaced whole; everything else in the file is kept as it was, comments
//! and formatting included (JSONC through a concrete syntax tree, TOML
//! through `toml_edit`). A file that already holds exactly this entry is not
//! touched (setup is idempotent). Before a file is changed, its old content
//! is copied next to it (`<file>.<UTC time>.bak`); the new content is written
//! to a temporary file, synced and renamed over it. A file that does not parse
//! is refused, unchanged. `--dry-run` prints the change as a unified diff and
//! writes nothing. The shapes are those MentisDB 0.10.10 writes
//! (`src/integrations/targets/`), which follow each client's documentation.

use jsonc_parser::cst::{CstInputValue, CstRootNode};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The name of the entry in every client's file.
pub const SERVER_NAME: &str = "mentisdb";

/// Why a client's file cannot be planned or written; one line each.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// `HOME` is not set.
    #[error("HOME is not set: setup needs the home directory")]
    NoHome,
    /// The client's file exists but cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    /// The client's file does not parse, or not as a client file should.
    #[error("{} is not valid {format}: {problem}; fix or move it, then run setup again", path.display())]
    Invalid { path: PathBuf, format: &'static str, problem: Box<SetupError> },
    /// Not JSON (nor JSONC).
    #[error("{0}")]
    Json(jsonc_parser::errors::ParseError),
    /// Not TOML (the parser's first line).
    #[error("{}", .0.to_string().lines().next().unwrap_or(""))]
    Toml(toml_edit::TomlError),
    /// The JSON file's top level is not an object.
    #[error("the top level is not an object")]
    TopLevelNotObject,
    /// The client's section of a JSON file is not an object.
    #[error("\"{0}\" is not an object")]
    SectionNotObject(String),
    /// The client's section of a TOML file is not a table.
    #[error("\"{0}\" is not a table")]
    SectionNotTable(String),
    /// The file's path has no directory part.
    #[error("{} has no parent directory", .0.display())]
    NoParent(PathBuf),
    /// The file's directory cannot be created.
    #[error("cannot create {}: {source}", dir.display())]
    CreateDir { dir: PathBuf, source: std::io::Error },
    /// The copy of the old file cannot be written.
    #[error("cannot write the backup {}: {source}", path.display())]
    WriteBackup { path: PathBuf, source: std::io::Error },
    /// No temporary file can be made beside the file.
    #[error("cannot write in {}: {source}", dir.display())]
    TempFile { dir: PathBuf, source: std::io::Error },
    /// The new text cannot be written.
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    /// The new file cannot be renamed over the old one.
    #[error("cannot replace {}: {source}", path.display())]
    Replace { path: PathBuf, source: std::io::Error },
}

/// An agent client whose MCP configuration `setup` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    /// Claude Code: `~/.claude.json`, `mcpServers`.
    ClaudeCode,
    /// Claude Desktop: `claude_desktop_config.json`, `mcpServers` (always stdio: it runs local commands).
    ClaudeDesktop,
    /// Cursor: `~/.cursor/mcp.json`, `mcpServers`.
    Cursor,
    /// VS Code (GitHub Copilot): `Code/User/mcp.json`, `servers`.
    Vscode,
    /// OpenAI Codex CLI: `~/.codex/config.toml`, `[mcp_servers]`.
    Codex,
    /// Gemini CLI: `~/.gemini/settings.json`, `mcpServers`.
    Gemini,
    /// GitHub Copilot CLI: `~/.copilot/mcp-config.json`, `mcpServers`.
    CopilotCli,
    /// OpenCode: `opencode/opencode.json`, `mcp`.
    Opencode,
    /// Qwen Code: `~/.qwen/settings.json`, `mcpServers`.
    Qwen,
    /// Grok CLI: `grok/config.toml`, `[mcp_servers]`.
    Grok,
}

/// Where the user's files live: the home directory and the configuration
/// root (`$XDG_CONFIG_HOME`, else `~/.config`; on macOS `~/Library/Application
/// Support` for the desktop apps).
#[derive(Debug, Clone)]
pub struct Dirs {
    pub home: PathBuf,
    pub xdg_config: Option<PathBuf>,
    pub macos: bool,
}

impl Dirs {
    /// From `HOME` and `XDG_CONFIG_HOME`.
    pub fn from_env() -> Result<Self, SetupError> {
        let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).ok_or(SetupError::NoHome)?;
        let xdg_config = std::env::var_os("XDG_CONFIG_HOME").filter(|x| !x.is_empty()).map(PathBuf::from);
        Ok(Dirs { home: PathBuf::from(home), xdg_config, macos: cfg!(target_os = "macos") })
    }

    fn config_root(&self) -> PathBuf {
        self.xdg_config.clone().unwrap_or_else(|| self.home.join(".config"))
    }

    /// Where desktop apps keep their settings.
    fn app_support(&self) -> PathBuf {
        if self.macos {
            self.home.join("Library").join("Application Support")
        } else {
            self.config_root()
        }
    }
}

/// How the client reaches the daemon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// Streamable HTTP at this URL, with an optional bearer token.
    Http { url: String, token: Option<String> },
    /// A local command speaking MCP on stdio: `<exe> --mode stdio`, which
    /// relays to the data directory's daemon (starting one when none runs).
    Stdio { exe: String },
}

enum Format {
    /// A JSON (or JSONC) file; the entry goes at `section.mentisdb`.
    Json(&'static str),
    /// A TOML file; the entry is the table `[section.mentisdb]`.
    Toml(&'static str),
}

impl Client {
    /// The file this client reads its MCP servers from.
    pub fn config_path(self, dirs: &Dirs) -> PathBuf {
        let home = &dirs.home;
        match self {
            Client::ClaudeCode => home.join(".claude.json"),
            Client::ClaudeDesktop => dirs.app_support().join("Claude").join("claude_desktop_config.json"),
            Client::Cursor => home.join(".cursor").join("mcp.json"),
            Client::Vscode => dirs.app_support().join("Code").join("User").join("mcp.json"),
            Client::Codex => home.join(".codex").join("config.toml"),
            Client::Gemini => home.join(".gemini").join("settings.json"),
            Client::CopilotCli => dirs.xdg_config.as_ref().map_or_else(|| home.join(".copilot"), |x| x.join("copilot")).join("mcp-config.json"),
            Client::Opencode => dirs.config_root().join("opencode").join("opencode.json"),
            Client::Qwen => home.join(".qwen").join("settings.json"),
            Client::Grok => dirs.config_root().join("grok").join("config.toml"),
        }
    }

    fn format(self) -> Format {
        match self {
            Client::Vscode => Format::Json("servers"),
            Client::Opencode => Format::Json("mcp"),
            Client::Codex | Client::Grok => Format::Toml("mcp_servers"),
            _ => Format::Json("mcpServers"),
        }
    }

    /// Whether the client only runs local commands (so always gets stdio).
    pub fn stdio_only(self) -> bool {
        self == Client::ClaudeDesktop
    }

    /// The `mentisdb` entry for this client.
    pub fn entry(self, transport: &Transport) -> Value {
        let mut e = match transport {
            Transport::Http { url, .. } => match self {
                Client::ClaudeCode | Client::Vscode => json!({"type": "http", "url": url}),
                Client::Cursor | Client::Codex => json!({"url": url}),
                Client::Gemini | Client::Qwen => json!({"httpUrl": url}),
                Client::CopilotCli => json!({"type": "http", "url": url, "tools": ["*"], "headers": {}}),
                Client::Opencode => json!({"type": "remote", "url": url, "enabled": true}),
                Client::Grok => json!({"url": url, "enabled": true}),
                Client::ClaudeDesktop => unreachable!("Claude Desktop is stdio-only"),
            },
            Transport::Stdio { exe } => {
                let args = json!(["--mode", "stdio"]);
                match self {
                    Client::ClaudeCode | Client::Vscode => json!({"type": "stdio", "command": exe, "args": args}),
                    Client::CopilotCli => json!({"type": "local", "command": exe, "args": args, "tools": ["*"]}),
                    Client::Opencode => json!({"type": "local", "command": [exe, "--mode", "stdio"], "enabled": true}),
                    Client::Grok => json!({"command": exe, "args": args, "enabled": true}),
                    _ => json!({"command": exe, "args": args}),
                }
            }
        };
        if let Transport::Http { token: Some(token), .. } = transport {
            let headers = if self == Client::Codex { "http_headers" } else { "headers" };
            e[headers] = json!({"Authorization": format!("Bearer {token}")});
        }
        e
    }
}

/// One file's planned change.
#[derive(Debug, Clone)]
pub struct Change {
    pub client: Client,
    pub path: PathBuf,
    /// The file's text now (`None`: it does not exist).
    pub old: Option<String>,
    /// The text setup writes.
    pub new: String,
}

impl Change {
    /// Whether the file already holds the entry exactly.
    pub fn unchanged(&self) -> bool {
        self.old.as_deref() == Some(self.new.as_str())
    }

    /// The change as a unified diff (empty when unchanged).
    pub fn diff(&self) -> String {
        if self.unchanged() {
            return String::new();
        }
        let old = self.old.as_deref().unwrap_or("");
        let path = self.path.display().to_string();
        let old_name = if self.old.is_some() { path.clone() } else { "/dev/null".to_string() };
        similar::TextDiff::from_lines(old, &self.new).unified_diff().header(&old_name, &path).to_string()
    }
}

/// Plans the change to `client`'s file: reads it and computes the new text.
pub fn plan(client: Client, dirs: &Dirs, transport: &Transport) -> Result<Change, SetupError> {
    let path = client.config_path(dirs);
    let old = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => return Err(SetupError::Read { path, source }),
    };
    let entry = client.entry(transport);
    let new = match client.format() {
        Format::Json(section) => with_json_entry(old.as_deref(), section, &entry),
        Format::Toml(section) => with_toml_entry(old.as_deref(), section, &entry),
    }
    .map_err(|e| SetupError::Invalid { path: path.clone(), format: if matches!(client.format(), Format::Toml(_)) { "TOML" } else { "JSON" }, problem: Box::new(e) })?;
    Ok(Change { client, path, old, new })
}

/// Writes a planned change: a backup of the old file, then the new text
/// (temporary file, fsync, rename). Returns the backup's path, if one was made.
pub fn apply(change: &Change, now: std::time::SystemTime) -> Result<Option<PathBuf>, SetupError> {
    if change.unchanged() {
        return Ok(None);
    }
    let dir = change.path.parent().ok_or_else(|| SetupError::NoParent(change.path.clone()))?;
    std::fs::create_dir_all(dir).map_err(|source| SetupError::CreateDir { dir: dir.to_path_buf(), source })?;
    let backup = match &change.old {
        Some(old) => {
            let backup = backup_path(&change.path, now);
            mentisdb_fs_storage::private::private_file(std::fs::OpenOptions::new().write(true).create(true).truncate(true)).open(&backup).and_then(|mut f| std::io::Write::write_all(&mut f, old.as_bytes())).map_err(|source| SetupError::WriteBackup { path: backup.clone(), source })?;
            Some(backup)
        }
        None => None,
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|source| SetupError::TempFile { dir: dir.to_path_buf(), source })?;
    use std::io::Write;
    tmp.write_all(change.new.as_bytes()).and_then(|_| tmp.as_file().sync_all()).map_err(|source| SetupError::Write { path: change.path.clone(), source })?;
    if let Ok(meta) = std::fs::metadata(&change.path) {
        // Keep the file's permissions (a config holding a token may be 0600),
        // but never leave a bearer token readable by other users.
        #[cfg(unix)]
        let perms = {
            use std::os::unix::fs::PermissionsExt;
            let mode = meta.permissions().mode();
            std::fs::Permissions::from_mode(if change.new.contains("Bearer ") { mode & 0o700 } else { mode })
        };
        #[cfg(not(unix))]
        let perms = meta.permissions();
        let _ = std::fs::set_permissions(tmp.path(), perms);
    }
    tmp.persist(&change.path).map_err(|e| SetupError::Replace { path: change.path.clone(), source: e.error })?;
    Ok(backup)
}

fn backup_path(path: &Path, now: std::time::SystemTime) -> PathBuf {
    let secs = now.duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0) as i64;
    let stamp = mentisdb_core::timestamp::format_rfc3339_millis(secs * 1000).replace([':', '-'], "").replace(".000", "");
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{stamp}.bak"));
    path.with_file_name(name)
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

/// `text` (or `{}`) with `section.mentisdb` set to `entry`, all else kept.
fn with_json_entry(text: Option<&str>, section: &str, entry: &Value) -> Result<String, SetupError> {
    let text = text.filter(|t| !t.trim().is_empty()).unwrap_or("{}\n");
    let root = CstRootNode::parse(text, &Default::default()).map_err(SetupError::Json)?;
    if root.value().is_some() && root.object_value().is_none() {
        return Err(SetupError::TopLevelNotObject);
    }
    let obj = root.object_value_or_set();
    let servers = match obj.get(section) {
        Some(prop) => prop.object_value().ok_or_else(|| SetupError::SectionNotObject(section.to_string()))?,
        None => obj.object_value_or_set(section),
    };
    match servers.get(SERVER_NAME) {
        Some(prop) => prop.set_value(cst_value(entry)),
        None => {
            servers.append(SERVER_NAME, cst_value(entry));
        }
    }
    let mut out = root.to_string();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

fn cst_value(v: &Value) -> CstInputValue {
    match v {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(a) => CstInputValue::Array(a.iter().map(cst_value).collect()),
        Value::Object(m) => CstInputValue::Object(m.iter().map(|(k, v)| (k.clone(), cst_value(v))).collect()),
    }
}

/// `text` with the table `[section.mentisdb]` set to `entry`, all else kept.
fn with_toml_entry(text: Option<&str>, section: &str, entry: &Value) -> Result<String, SetupError> {
    let mut doc: toml_edit::DocumentMut = text.unwrap_or("").parse().map_err(SetupError::Toml)?;
    let servers = doc.entry(section).or_insert_with(|| {
        let mut t = toml_edit::Table::new();
        t.set_implicit(true);
        toml_edit::Item::Table(t)
    });
    let servers = servers.as_table_like_mut().ok_or_else(|| SetupError::SectionNotTable(section.to_string()))?;
    servers.insert(SERVER_NAME, toml_edit::Item::Table(toml_table(entry)));
    Ok(doc.to_string())
}

fn toml_table(v: &Value) -> toml_edit::Table {
    let mut t = toml_edit::Table::new();
    if let Value::Object(m) = v {
        for (k, v) in m {
            let item = match v {
                Value::Object(_) => {
                    // Small maps (headers) read best inline.
                    let mut inline = toml_edit::InlineTable::new();
                    if let Value::Object(inner) = v {
                        for (ik, iv) in inner {
                            if let Some(x) = toml_value(iv) {
                                inline.insert(ik, x);
                            }
                        }
                    }
                    toml_edit::Item::Value(toml_edit::Value::InlineTable(inline))
                }
                other => match toml_value(other) {
                    Some(x) => toml_edit::Item::Value(x),
                    None => continue,
                },
            };
            t.insert(k, item);
        }
    }
    t
}

fn toml_value(v: &Value) -> Option<toml_edit::Value> {
    Some(match v {
        Value::Bool(b) => (*b).into(),
        Value::String(s) => s.as_str().into(),
        Value::Number(n) => n.as_i64().map(toml_edit::Value::from).or_else(|| n.as_f64().map(toml_edit::Value::from))?,
        Value::Array(a) => toml_edit::Value::Array(a.iter().filter_map(toml_value).collect()),
        Value::Null | Value::Object(_) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs(home: &Path) -> Dirs {
        Dirs { home: home.to_path_buf(), xdg_config: None, macos: false }
    }

    fn http(token: Option<&str>) -> Transport {
        Transport::Http { url: "http://127.0.0.1:9471/mcp".into(), token: token.map(Into::into) }
    }

    fn read_entry(client: Client, text: &str) -> Value {
        match client.format() {
            Format::Json(section) => {
                let v: Value = jsonc_parser::parse_to_serde_value(text, &Default::default()).unwrap();
                v[section][SERVER_NAME].clone()
            }
            Format::Toml(section) => {
                let v: toml::Table = toml::from_str(text).unwrap();
                serde_json::to_value(&v[section][SERVER_NAME]).unwrap()
            }
        }
    }

    const ALL: [Client; 10] = [
        Client::ClaudeCode,
        Client::ClaudeDesktop,
        Client::Cursor,
        Client::Vscode,
        Client::Codex,
        Client::Gemini,
        Client::CopilotCli,
        Client::Opencode,
        Client::Qwen,
        Client::Grok,
    ];

    #[test]
    fn every_client_gets_its_entry_and_a_second_run_changes_nothing() {
        let home = tempfile::tempdir().unwrap();
        let d = dirs(home.path());
        for client in ALL {
            let t = if client.stdio_only() { Transport::Stdio { exe: "/usr/bin/mentisdb".into() } } else { http(Some("s3cret")) };
            let change = plan(client, &d, &t).unwrap();
            assert!(change.old.is_none() && change.diff().starts_with("--- /dev/null"), "{client:?}");
            assert_eq!(apply(&change, std::time::SystemTime::now()).unwrap(), None, "a new file has no backup");
            let written = std::fs::read_to_string(client.config_path(&d)).unwrap();
            assert_eq!(read_entry(client, &written), client.entry(&t), "{client:?}: {written}");
            let again = plan(client, &d, &t).unwrap();
            assert!(again.unchanged() && again.diff().is_empty(), "{client:?} is idempotent");
        }
        let codex = std::fs::read_to_string(Client::Codex.config_path(&d)).unwrap();
        assert!(codex.contains("[mcp_servers.mentisdb]") && codex.contains("http_headers = { Authorization = \"Bearer s3cret\" }"), "{codex}");
        let desktop = read_entry(Client::ClaudeDesktop, &std::fs::read_to_string(Client::ClaudeDesktop.config_path(&d)).unwrap());
        assert_eq!(desktop, json!({"command": "/usr/bin/mentisdb", "args": ["--mode", "stdio"]}));
    }

    #[test]
    fn other_entries_comments_and_layout_are_kept_and_the_old_file_backed_up() {
        let home = tempfile::tempdir().unwrap();
        let d = dirs(home.path());
        let path = Client::Vscode.config_path(&d);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let before = "{\n  // my servers\n  \"servers\": {\n    \"github\": { \"type\": \"http\", \"url\": \"https://api.githubcopilot.com/mcp/\" },\n    \"mentisdb\": { \"type\": \"http\", \"url\": \"http://old:1\" }\n  },\n  \"inputs\": []\n}\n";
        std::fs::write(&path, before).unwrap();
        let change = plan(Client::Vscode, &d, &http(None)).unwrap();
        let diff = change.diff();
        assert!(diff.contains("-    \"mentisdb\": { \"type\": \"http\", \"url\": \"http://old:1\" }") && diff.contains("http://127.0.0.1:9471/mcp"), "{diff}");
        let backup = apply(&change, std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_795_000_000)).unwrap().unwrap();
        assert_eq!(backup.file_name().unwrap(), "mcp.json.20261118T110640Z.bak");
        assert_eq!(std::fs::read_to_string(&backup).unwrap(), before);
        let after = std::fs::read_to_string(&path).unwrap();
        assert!(after.contains("// my servers") && after.contains("\"github\": { \"type\": \"http\", \"url\": \"https://api.githubcopilot.com/mcp/\" }") && after.contains("\"inputs\": []"), "{after}");
        assert_eq!(read_entry(Client::Vscode, &after), json!({"type": "http", "url": "http://127.0.0.1:9471/mcp"}));

        let codex = Client::Codex.config_path(&d);
        std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
        std::fs::write(&codex, "# my model\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n").unwrap();
        apply(&plan(Client::Codex, &d, &http(None)).unwrap(), std::time::SystemTime::now()).unwrap();
        let after = std::fs::read_to_string(&codex).unwrap();
        assert!(after.starts_with("# my model\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n"), "{after}");
        assert!(after.contains("[mcp_servers.mentisdb]\nurl = \"http://127.0.0.1:9471/mcp\""), "{after}");
    }

    #[test]
    fn a_file_that_does_not_parse_is_refused_unchanged() {
        let home = tempfile::tempdir().unwrap();
        let d = dirs(home.path());
        let path = Client::Cursor.config_path(&d);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "{ \"mcpServers\": ").unwrap();
        let e = plan(Client::Cursor, &d, &http(None)).unwrap_err().to_string();
        assert!(e.contains("mcp.json is not valid JSON") && !e.contains('\n'), "{e}");
        std::fs::write(&path, "{ \"mcpServers\": [] }").unwrap();
        assert!(plan(Client::Cursor, &d, &http(None)).unwrap_err().to_string().contains("\"mcpServers\" is not an object"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ \"mcpServers\": [] }");
    }

    #[test]
    fn stdio_entries_run_the_relay() {
        let t = Transport::Stdio { exe: "/opt/mentisdb".into() };
        assert_eq!(Client::ClaudeCode.entry(&t), json!({"type": "stdio", "command": "/opt/mentisdb", "args": ["--mode", "stdio"]}));
        assert_eq!(Client::Opencode.entry(&t), json!({"type": "local", "command": ["/opt/mentisdb", "--mode", "stdio"], "enabled": true}));
        let d = Dirs { home: "/h".into(), xdg_config: Some("/x".into()), macos: false };
        assert_eq!(Client::CopilotCli.config_path(&d), Path::new("/x/copilot/mcp-config.json"));
        assert_eq!(Client::Opencode.config_path(&d), Path::new("/x/opencode/opencode.json"));
        let mac = Dirs { home: "/Users/a".into(), xdg_config: None, macos: true };
        assert_eq!(Client::ClaudeDesktop.config_path(&mac), Path::new("/Users/a/Library/Application Support/Claude/claude_desktop_config.json"));
    }
}
