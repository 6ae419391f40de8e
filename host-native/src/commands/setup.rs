//! `mentisdbd setup` and `mentisdbd wizard` as commands: the clients, the
//! MCP URL (by default the data directory's running daemon's) and the token
//! from the command line and the configuration. The file edits are
//! [`super::client_setup`]'s, the questions [`super::wizard`]'s.

use super::client_setup::{answer_note, apply, plan, Client, Dirs, Transport};
use super::wizard::{self, secret_from_input, WizardArgs, WizardError};
use super::CommandError;
use crate::config::Config;
use crate::infra::dir_lock::running_daemon;

/// This program's path, for the clients that run it (`--mode stdio`).
fn this_program() -> Result<String, CommandError> {
    Ok(std::env::current_exe().map_err(CommandError::NoExecutable)?.display().to_string())
}

/// `mentisdbd setup`: plans every client's change first (so a file that does
/// not parse stops the command before anything is written), then writes them.
pub fn setup(config: &Config, clients: &[Client], url: Option<String>, token: Option<String>, stdio: bool, dry_run: bool) -> Result<(), CommandError> {
    let dirs = Dirs::from_env()?;
    let exe = this_program()?;
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
pub fn wizard(config: &Config, url: Option<String>, token: Option<String>, yes: bool) -> Result<(), CommandError> {
    let exe = this_program()?;
    let args = WizardArgs { default_url: default_mcp_url(config), url, token: token.or_else(|| config.api_token.clone()), yes, exe };
    let dirs = Dirs::from_env()?;
    // In a terminal the token is read without echo; from a pipe, as a line.
    let mut secret = |out: &mut dyn std::io::Write, input: &mut dyn std::io::BufRead, prompt: &str| -> Result<String, WizardError> {
        if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            out.flush().map_err(WizardError::Write)?;
            rpassword::prompt_password(prompt).map(|t| t.trim().to_string()).map_err(WizardError::ReadToken)
        } else {
            secret_from_input(out, input, prompt)
        }
    };
    Ok(wizard::run(&args, &dirs, &mut std::io::stdin().lock(), &mut std::io::stdout(), &mut secret)?)
}

/// The MCP URL a local client reaches: the data directory's running
/// daemon's (its lock file names where it listens), else the configured port's.
fn default_mcp_url(config: &Config) -> String {
    if let Some(base) = config.data_dir().ok().and_then(|dir| running_daemon(&dir).ok().flatten()).and_then(|h| h.mcp_base()) {
        return format!("{base}/mcp");
    }
    let host = if config.bind_host.is_unspecified() { "127.0.0.1".to_string() } else { config.bind_host.to_string() };
    let host = if host.contains(':') { format!("[{host}]") } else { host };
    format!("http://{host}:{}/mcp", config.mcp_port)
}
