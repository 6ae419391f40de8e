//! Claims: leases on a chain's keys with fencing tokens, for agents that
//! share a chain and must not both pick up the same work
//! ([`crate::claims`] holds the rules; `db/claims.rs` writes the records).

use super::replies::{ClaimListReply, ClaimReply, LeaseReply};
use super::tools;
use crate::args::{read_args, Bounded, ChainKey};
use crate::claims::{self, Lease, MAX_METADATA_BYTES, MAX_TTL_MS, MIN_TTL_MS};
use crate::db::{ClaimOutcome, MentisDb};
use crate::error::ToolError;
use crate::timestamp::format_rfc3339_millis;
use schemars::JsonSchema;
use serde_json::Value;

tools! {
    tool!("mentisdb_claim", "Claim `key` for `holder` for ttl_ms: a free key gets a new, larger fencing_token; the holder again refreshes it; another gets ok: false, held_by.", ClaimArgs => ClaimReply, claim),
    tool!("mentisdb_renew_claim", "Extend the holder's lease to now + ttl_ms.", RenewArgs => ClaimReply, renew),
    tool!("mentisdb_release_claim", "Release the holder's lease.", ReleaseArgs => ClaimReply, release),
    tool!(read "mentisdb_list_claims", "List the leases held now (keys starting with `prefix`).", ListClaimsArgs => ClaimListReply, list),
}

/// How long a lease lasts: 1 s to 24 h.
type Ttl = Bounded<MIN_TTL_MS, MAX_TTL_MS>;
/// A lease's length when a claim names none.
const DEFAULT_TTL_MS: u64 = 60_000;

/// Arguments of `mentisdb_claim`.
#[derive(Debug, JsonSchema)]
pub(super) struct ClaimArgs {
    pub chain_key: Option<ChainKey>,
    /// The key, e.g. a task or file name.
    pub key: String,
    /// Who claims it: an agent id.
    pub holder: String,
    /// Lease in ms (1 s to 24 h); default 60000.
    pub ttl_ms: Option<Ttl>,
    /// Any JSON to record with the claim (at most 4 KiB).
    pub metadata: Option<Value>,
}
read_args!(ClaimArgs { chain_key, key, holder, ttl_ms, metadata });

/// Arguments of `mentisdb_renew_claim`.
#[derive(Debug, JsonSchema)]
pub(super) struct RenewArgs {
    pub chain_key: Option<ChainKey>,
    pub key: String,
    pub holder: String,
    pub ttl_ms: Option<Ttl>,
}
read_args!(RenewArgs { chain_key, key, holder, ttl_ms });

/// Arguments of `mentisdb_release_claim`.
#[derive(Debug, JsonSchema)]
pub(super) struct ReleaseArgs {
    pub chain_key: Option<ChainKey>,
    pub key: String,
    pub holder: String,
}
read_args!(ReleaseArgs { chain_key, key, holder });

/// Arguments of `mentisdb_list_claims`.
#[derive(Debug, JsonSchema)]
pub(super) struct ListClaimsArgs {
    pub chain_key: Option<ChainKey>,
    /// Only keys starting with this.
    pub prefix: Option<String>,
}
read_args!(ListClaimsArgs { chain_key, prefix });

/// Checks a claim's key and holder (and metadata): labels without secrets.
fn check_names(tool: &str, key: &str, holder: &str, metadata: Option<&Value>) -> Result<(), ToolError> {
    for (field, value) in [("key", key), ("holder", holder)] {
        // Not blank, no control characters, at most 256 bytes.
        crate::limits::check_key(field, value).map_err(|m| ToolError::invalid(tool, m))?;
        crate::redact::refuse_secret(field, value)?;
    }
    if let Some(m) = metadata {
        let text = m.to_string();
        if text.len() > MAX_METADATA_BYTES {
            return Err(ToolError::invalid(tool, format!("metadata is {} bytes of JSON; the limit is {MAX_METADATA_BYTES}", text.len())));
        }
        crate::redact::refuse_secret("metadata", &text)?;
    }
    Ok(())
}

fn lease_reply(l: &Lease) -> LeaseReply {
    LeaseReply {
        key: l.key.clone(),
        holder: l.holder.clone(),
        fencing_token: l.fencing_token,
        acquired_at: format_rfc3339_millis(l.acquired_at_ms),
        expires_at: format_rfc3339_millis(l.expires_at_ms),
        metadata: l.metadata.clone(),
    }
}

fn reply(outcome: ClaimOutcome, deduped: Option<bool>) -> ClaimReply {
    match outcome {
        ClaimOutcome::Written { record, lease, thought } => ClaimReply {
            ok: true,
            deduped: deduped.map(|_| record.op == claims::ClaimOp::Renew),
            claim: Some(lease_reply(&lease)),
            reason: None,
            held_by: None,
            expires_at: None,
            record_index: Some(thought.index),
        },
        ClaimOutcome::Refused { reason, lease } => ClaimReply {
            ok: false,
            claim: None,
            deduped: None,
            reason: Some(reason.to_string()),
            held_by: lease.as_ref().map(|l| l.holder.clone()),
            expires_at: lease.as_ref().map(|l| format_rfc3339_millis(l.expires_at_ms)),
            record_index: None,
        },
    }
}

fn claim(db: &MentisDb, a: ClaimArgs) -> Result<ClaimReply, ToolError> {
    check_names("mentisdb_claim", &a.key, &a.holder, a.metadata.as_ref())?;
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let ttl = a.ttl_ms.map_or(DEFAULT_TTL_MS, |t| t.get() as u64);
    let metadata = a.metadata.filter(|m| !m.is_null());
    let outcome = db.run_claim(&key, true, |table, now| claims::decide_acquire(table, &a.key, &a.holder, ttl, metadata.clone(), now))?;
    Ok(reply(outcome, Some(false)))
}

fn renew(db: &MentisDb, a: RenewArgs) -> Result<ClaimReply, ToolError> {
    check_names("mentisdb_renew_claim", &a.key, &a.holder, None)?;
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let ttl = a.ttl_ms.map_or(DEFAULT_TTL_MS, |t| t.get() as u64);
    let outcome = db.run_claim(&key, false, |table, now| claims::decide_holder_change(table, &a.key, &a.holder, Some(ttl), now))?;
    Ok(reply(outcome, None))
}

fn release(db: &MentisDb, a: ReleaseArgs) -> Result<ClaimReply, ToolError> {
    check_names("mentisdb_release_claim", &a.key, &a.holder, None)?;
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let outcome = db.run_claim(&key, false, |table, now| claims::decide_holder_change(table, &a.key, &a.holder, None, now))?;
    Ok(reply(outcome, None))
}

fn list(db: &MentisDb, a: ListClaimsArgs) -> Result<ClaimListReply, ToolError> {
    if a.prefix.as_deref().is_some_and(|p| p.chars().any(char::is_control)) {
        return Err(ToolError::invalid("mentisdb_list_claims", "prefix has control characters"));
    }
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let claims = db.held_claims(&key, a.prefix.as_deref().unwrap_or(""))?;
    Ok(ClaimListReply { chain_key: key, claims: claims.iter().map(lease_reply).collect() })
}
