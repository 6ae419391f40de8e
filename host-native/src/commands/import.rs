//! `mentisdbd import-reference SOURCE`: the command around
//! [`crate::reference`]. A `.mentis` archive is checked and unpacked first;
//! the import goes where the memory is ([`Target`]), with progress on
//! stderr and the report on stdout: one line per chain, skill, webhook and
//! bearer token, then every hash mismatch and warning.

use super::CommandError;
use crate::config::Config;
use crate::reference::{import_reference_dir, import_reference_tokens, unpack_mentis_archive, ChainOutcome};
use crate::target::Target;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::Path;

/// `mentisdbd import-reference DIR`: imports where the memory is (a daemon,
/// or our store opened and locked here), with a progress bar on stderr and
/// the report on stdout.
pub fn import_reference(config: &Config, source: &Path, url: Option<&str>, token: Option<&str>) -> Result<(), CommandError> {
    let unpacked = if source.is_file() {
        let bar = ProgressBar::new_spinner();
        bar.set_style(ProgressStyle::with_template("{spinner} checking and unpacking {pos} files: {msg}")?);
        let dir = unpack_mentis_archive(source, |name| {
            bar.inc(1);
            bar.set_message(name.to_string());
        })?;
        bar.finish_and_clear();
        Some(dir)
    } else if source.is_dir() {
        None
    } else {
        return Err(CommandError::NotAReferenceSource(source.to_path_buf()));
    };
    let source = unpacked.as_ref().map_or(source, |d| d.path());
    let target = Target::resolve(config, url, token)?;
    if let Target::Local(store) = &target {
        // Webhooks registered here follow the daemon's URL rule.
        store.db.webhooks().set_targets(Some(std::sync::Arc::new(config.webhook_allowed_cidrs.clone())));
    }
    let bar = ProgressBar::new_spinner();
    bar.set_style(ProgressStyle::with_template("{spinner} {pos} thoughts ({per_sec}) {msg}")?);
    let started = std::time::Instant::now();
    let summary = import_reference_dir(&target, source, |key, n| {
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
    for (old, new) in &summary.webhooks {
        println!("registered webhook {new} (was {old} in the reference)");
    }
    let mut warnings = summary.warnings.clone();
    let (tokens_file, _) = config.token_file()?;
    let tokens = import_reference_tokens(source, Some(&tokens_file), &mut warnings)?;
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
