//! `mentisdbd wizard`: MentisDB 0.10's guided client setup. It finds the
//! agent clients installed here (a client is found when its configuration
//! file or directory exists), asks which to set up, the MCP URL and an
//! optional bearer token (not echoed while typed in a terminal), shows the
//! plan (every file and its diff, the token masked), and writes only after a
//! yes. A wrong answer is explained and asked again. `--yes` takes the
//! clients found and the given URL and token without asking. The files are
//! written exactly as `mentisdbd setup` writes them (`client_setup.rs`); the
//! end says whether the daemon answers at the URL and what to do next.

use super::client_setup::{answer_note, apply, plan, Change, Client, Dirs, SetupError, Transport};
use clap::ValueEnum;
use std::io::{BufRead, Write};

/// Why the wizard stopped (nothing was written unless the message says
/// otherwise), or why one answer was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WizardError {
    /// Standard input ended before an answer.
    #[error("the wizard needs answers on standard input (or run it with --yes); nothing was written")]
    NoInput,
    /// An answer could not be read.
    #[error("cannot read the answer: {0}")]
    ReadAnswer(std::io::Error),
    /// The hidden token could not be read from the terminal.
    #[error("cannot read the token: {0}")]
    ReadToken(std::io::Error),
    /// The terminal could not be written to.
    #[error("{0}")]
    Write(std::io::Error),
    /// A client number outside the list.
    #[error("there is no client number {number} (1 to {count})")]
    NoSuchNumber { number: usize, count: usize },
    /// A word that names no client.
    #[error("'{0}' is not a client: answer with the numbers or names of the list")]
    NotAClient(String),
    /// A URL that is not http:// or https://.
    #[error("'{0}' is not an http:// or https:// URL")]
    NotHttpUrl(String),
    /// `--url` was refused before any question.
    #[error("{0}; nothing was written")]
    BadArgument(Box<WizardError>),
    /// The same question was answered wrongly [`TRIES`] times; `last` is the last refusal.
    #[error("{last} ({TRIES} answers refused); nothing was written")]
    TooManyWrongAnswers { last: Box<WizardError> },
    /// No client was found, and `--yes` asks nothing.
    #[error("no client to set up: none was found here; name them, e.g. `mentisdbd setup cursor`")]
    NoClient,
    /// A client's file could not be planned or written.
    #[error(transparent)]
    Setup(#[from] SetupError),
}

/// What the wizard was given on the command line.
#[derive(Debug, Clone)]
pub struct WizardArgs {
    /// The MCP URL every HTTP client gets.
    pub default_url: String,
    /// `--url`: no question about the URL.
    pub url: Option<String>,
    /// `--token` or `MENTISDB_API_TOKEN`: no question about the token.
    pub token: Option<String>,
    /// `--yes`: ask nothing.
    pub yes: bool,
    /// `<this program> --mode stdio`, for clients that only run commands.
    pub exe: String,
}

fn client_name(c: Client) -> String {
    c.to_possible_value().map(|v| v.get_name().to_string()).unwrap_or_else(|| format!("{c:?}"))
}

/// Whether `client` looks installed: its file, or the directory it lives in.
fn found(client: Client, dirs: &Dirs) -> bool {
    let path = client.config_path(dirs);
    path.exists() || path.parent().is_some_and(|p| p != dirs.home && p.is_dir())
}

/// `token` as shown on screen: its first and last 4 characters.
pub fn mask(token: &str) -> String {
    let chars: Vec<char> = token.chars().collect();
    if chars.len() <= 12 {
        return "****".to_string();
    }
    format!("{}…{}", chars[..4].iter().collect::<String>(), chars[chars.len() - 4..].iter().collect::<String>())
}

/// Reads a secret after `prompt`: in a terminal without echo, else a line of `input`.
pub type AskSecret<'a> = &'a mut dyn FnMut(&mut dyn Write, &mut dyn BufRead, &str) -> Result<String, WizardError>;

/// Answers a wrong answer may get before the wizard gives up.
pub const TRIES: usize = 5;

/// Asks `prompt` until `parse` accepts the answer, saying why it did not.
fn ask_until<T>(out: &mut dyn Write, input: &mut dyn BufRead, prompt: &str, parse: impl Fn(&str) -> Result<T, WizardError>) -> Result<T, WizardError> {
    let mut last = None;
    for _ in 0..TRIES {
        match parse(&ask(out, input, prompt)?) {
            Ok(v) => return Ok(v),
            Err(why) => {
                writeln!(out, "  {why}; try again").map_err(WizardError::Write)?;
                last = Some(why);
            }
        }
    }
    Err(WizardError::TooManyWrongAnswers { last: Box::new(last.expect("TRIES > 0")) })
}

fn ask(out: &mut dyn Write, input: &mut dyn BufRead, prompt: &str) -> Result<String, WizardError> {
    write!(out, "{prompt}").and_then(|_| out.flush()).map_err(WizardError::Write)?;
    let mut line = String::new();
    match input.read_line(&mut line) {
        Ok(0) => Err(WizardError::NoInput),
        Ok(_) => Ok(line.trim().to_string()),
        Err(e) => Err(WizardError::ReadAnswer(e)),
    }
}

/// Reads `answer` (numbers of the list or client names, separated by
/// commas or spaces; empty: the clients found).
fn selection(answer: &str, all: &[Client], detected: &[Client]) -> Result<Vec<Client>, WizardError> {
    if answer.is_empty() {
        return Ok(detected.to_vec());
    }
    let mut picked = Vec::new();
    for word in answer.split(|c: char| c == ',' || c.is_whitespace()).filter(|w| !w.is_empty()) {
        let client = match word.parse::<usize>() {
            Ok(n) if (1..=all.len()).contains(&n) => all[n - 1],
            Ok(number) => return Err(WizardError::NoSuchNumber { number, count: all.len() }),
            Err(_) => Client::from_str(word, true).map_err(|_| WizardError::NotAClient(word.to_string()))?,
        };
        if !picked.contains(&client) {
            picked.push(client);
        }
    }
    Ok(picked)
}

/// A secret read as a line of `input`, echoed (tests, pipes).
pub fn secret_from_input(out: &mut dyn Write, input: &mut dyn BufRead, prompt: &str) -> Result<String, WizardError> {
    ask(out, input, prompt)
}

/// Runs the wizard over `input` and `out` (the terminal), reading the token with `secret`.
pub fn run(args: &WizardArgs, dirs: &Dirs, input: &mut dyn BufRead, out: &mut dyn Write, secret: AskSecret<'_>) -> Result<(), WizardError> {
    let w = |out: &mut dyn Write, text: String| writeln!(out, "{text}").map_err(WizardError::Write);
    let all: Vec<Client> = Client::value_variants().to_vec();
    let detected: Vec<Client> = all.iter().copied().filter(|c| found(*c, dirs)).collect();
    w(out, "MentisDB setup wizard\n\nAgent clients:".into())?;
    for (n, c) in all.iter().enumerate() {
        let mark = if detected.contains(c) { "found" } else { "" };
        w(out, format!("  {:>2}. {:<15} {:<6} {}", n + 1, client_name(*c), mark, c.config_path(dirs).display()))?;
    }
    let clients = if args.yes {
        detected.clone()
    } else {
        let names: Vec<String> = detected.iter().map(|c| client_name(*c)).collect();
        let default = if names.is_empty() { "none found".to_string() } else { names.join(", ") };
        ask_until(out, input, &format!("\nClients to set up (numbers or names; Enter: {default}): "), |a| selection(a, &all, &detected))?
    };
    if clients.is_empty() {
        return Err(WizardError::NoClient);
    }
    let http_url = |u: &str| if u.starts_with("http://") || u.starts_with("https://") { Ok(u.to_string()) } else { Err(WizardError::NotHttpUrl(u.to_string())) };
    let url = match (&args.url, args.yes) {
        (Some(url), _) => http_url(url).map_err(|e| WizardError::BadArgument(Box::new(e)))?,
        (None, true) => args.default_url.clone(),
        (None, false) => ask_until(out, input, &format!("MCP URL (Enter: {}): ", args.default_url), |a| if a.is_empty() { Ok(args.default_url.clone()) } else { http_url(a) })?,
    };
    let token = match (&args.token, args.yes) {
        (Some(t), _) => Some(t.clone()),
        (None, true) => None,
        (None, false) => Some(secret(out, input, "Bearer token the clients send (not shown as you type; Enter: none): ")?).filter(|t| !t.is_empty()),
    };
    let http = Transport::Http { url: url.clone(), token: token.clone() };
    let local = Transport::Stdio { exe: args.exe.clone() };
    let changes: Vec<Change> = clients.iter().map(|&c| plan(c, dirs, if c.stdio_only() { &local } else { &http })).collect::<Result<_, _>>()?;
    w(out, "\nPlan:".into())?;
    for change in &changes {
        let what = if change.unchanged() { "already set up, unchanged" } else if change.old.is_some() { "update (the old file is kept as a backup)" } else { "create" };
        w(out, format!("  {:<15} {what}: {}", client_name(change.client), change.path.display()))?;
    }
    for change in changes.iter().filter(|c| !c.unchanged()) {
        let diff = change.diff();
        let shown = match &token {
            Some(t) => diff.replace(t.as_str(), &mask(t)),
            None => diff,
        };
        w(out, shown)?;
    }
    if changes.iter().all(Change::unchanged) {
        w(out, "Every selected client is set up already; nothing to write.".into())?;
        return Ok(());
    }
    if !args.yes {
        let answer = ask(out, input, "Write these files? [y/N]: ")?;
        if !matches!(answer.to_ascii_lowercase().as_str(), "y" | "yes") {
            w(out, "Nothing was written.".into())?;
            return Ok(());
        }
    }
    for change in changes.iter().filter(|c| !c.unchanged()) {
        match apply(change, std::time::SystemTime::now())? {
            Some(backup) => w(out, format!("updated {} (backup: {})", change.path.display(), backup.display()))?,
            None => w(out, format!("wrote {}", change.path.display()))?,
        }
    }
    if clients.iter().any(|c| !c.stdio_only()) {
        w(out, answer_note(&url))?;
    }
    w(out, "Done: restart the clients to load MentisDB; keep `mentisdbd` running while they use it.".into())
}


#[cfg(test)]
mod tests {
    use super::*;

    fn dirs(home: &std::path::Path) -> Dirs {
        Dirs { home: home.to_path_buf(), xdg_config: None, macos: false }
    }

    #[test]
    fn selection_reads_numbers_and_names_and_defaults_to_the_clients_found() {
        let all: Vec<Client> = Client::value_variants().to_vec();
        assert_eq!(selection("", &all, &[Client::Cursor]).unwrap(), [Client::Cursor]);
        assert_eq!(selection("1, cursor 1", &all, &[]).unwrap(), [all[0], Client::Cursor]);
        assert!(selection("99", &all, &[]).unwrap_err().to_string().contains("no client number 99"));
        assert!(selection("emacs", &all, &[]).unwrap_err().to_string().contains("'emacs' is not a client"));
    }

    #[test]
    fn tokens_are_masked_and_yes_takes_only_the_clients_found() {
        assert_eq!(mask("mdb_0123456789abcdef"), "mdb_…cdef");
        assert_eq!(mask("short"), "****");
        let home = tempfile::tempdir().unwrap();
        let args = WizardArgs { default_url: "http://127.0.0.1:9471/mcp".into(), url: None, token: Some("mdb_0123456789abcdef".into()), yes: true, exe: "mentisdbd".into() };
        let mut out = Vec::new();
        let err = run(&args, &dirs(home.path()), &mut std::io::empty(), &mut out, &mut secret_from_input).unwrap_err().to_string();
        assert!(err.contains("none was found here"), "{err}");
        std::fs::create_dir_all(home.path().join(".cursor")).unwrap();
        let mut out = Vec::new();
        run(&args, &dirs(home.path()), &mut std::io::empty(), &mut out, &mut secret_from_input).unwrap();
        let shown = String::from_utf8(out).unwrap();
        assert!(shown.contains("mdb_…cdef") && !shown.contains("mdb_0123456789abcdef"), "{shown}");
        let written = std::fs::read_to_string(home.path().join(".cursor/mcp.json")).unwrap();
        assert!(written.contains("Bearer mdb_0123456789abcdef"), "{written}");
        assert!(!home.path().join(".claude.json").exists(), "only the clients found");
    }
}
