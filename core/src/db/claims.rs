//! Claims' way in from the engine ([`crate::claims`] holds the rules): a
//! claim request is decided on the chain's lease table under its write
//! lock and written as a claim record; when the record's append has to be
//! re-based onto other daemons' appends and the decision no longer holds,
//! the request is decided again on the new state (it may find the key
//! taken).

use super::append_group::MAX_REBASES;
use super::{write_lock, MentisDb};
use crate::chain::NewThought;
use crate::claims::{ClaimRecord, ClaimTable, Decision, Lease, COORDINATOR};
use crate::error::{AppendError, ToolError};
use crate::thought::{Thought, ThoughtRole, ThoughtType};

/// What became of a claim request.
#[derive(Debug, Clone, PartialEq)]
pub enum ClaimOutcome {
    /// The record was written: the lease as it now stands (for a release,
    /// as it stood), and the claim thought.
    Written {
        /// The record.
        record: ClaimRecord,
        /// The lease it produced or ended.
        lease: Lease,
        /// The thought that records it.
        thought: Box<Thought>,
    },
    /// Nothing was written.
    Refused {
        /// `held`, `not_held` or `wrong_holder`.
        reason: &'static str,
        /// The lease in the way, if any.
        lease: Option<Lease>,
    },
}

impl MentisDb {
    /// Decides a claim request on chain `key` with `decide` (the table and
    /// the time now) and writes its record, again until the decision holds
    /// when written. An acquisition creates the chain; a renewal or release
    /// (`create` false) of a chain that does not exist is `not_held`.
    pub fn run_claim(&self, key: &str, create: bool, decide: impl Fn(&ClaimTable, i64) -> Decision) -> Result<ClaimOutcome, ToolError> {
        for _ in 0..MAX_REBASES {
            let slot = if create {
                self.slot_for_write(key, None)?
            } else {
                match self.slot_or_load(key)? {
                    Some(slot) => slot,
                    None => return Ok(ClaimOutcome::Refused { reason: "not_held", lease: None }),
                }
            };
            let mut state = write_lock(&slot.state);
            state.live()?;
            let now = crate::timestamp::renderable_millis(self.now_millis());
            let decision = decide(&state.chain.claims(), now);
            let record = match decision {
                Decision::Refused { reason, lease } => return Ok(ClaimOutcome::Refused { reason, lease }),
                Decision::Write(record) => record,
            };
            let before = state.chain.claims().holder(&record.key, now).cloned();
            let mut input = NewThought::new(COORDINATOR, ThoughtType::ActionTaken, &record.content());
            input.role = ThoughtRole::Audit;
            input.agent_name = Some("MentisDB coordination".into());
            input.claim = Some(record.clone());
            match self.write_alone(key, &slot, &mut state, input) {
                Err(ToolError::Append(AppendError::ClaimChanged { .. })) => continue,
                Err(e) => return Err(e),
                Ok(written) => {
                    let at = written.thought.parsed_timestamp_ms().unwrap_or(now);
                    let lease = state.chain.claims().holder(&record.key, at).cloned().or(before).expect("a written claim record names a lease");
                    drop(state);
                    let appended = self.acknowledge(key, &slot, written, Vec::new())?;
                    return Ok(ClaimOutcome::Written { record, lease, thought: Box::new(appended.thought) });
                }
            }
        }
        Err(ToolError::Unavailable(format!("the claims of chain '{key}' are busy: other writers changed them {MAX_REBASES} times in a row; retry")))
    }

    /// The leases of the chains in memory that ran out in `from_ms..to_ms`
    /// (a host's timer announces them as `claim_expired`), by chain. A
    /// chain not in memory is not loaded for it.
    pub fn leases_expired_between(&self, from_ms: i64, to_ms: i64) -> Vec<(String, Lease)> {
        let resident: Vec<String> = super::read_lock(&self.chains).keys().cloned().collect();
        let mut out = Vec::new();
        for key in resident {
            let Some(slot) = self.peek_slot(&key) else { continue };
            let state = super::read_lock(&slot.state);
            out.extend(state.chain.claims().expired_between(from_ms, to_ms).into_iter().map(|l| (key.clone(), l.clone())));
        }
        out
    }

    /// The leases of chain `key` held now whose key starts with `prefix`.
    pub fn held_claims(&self, key: &str, prefix: &str) -> Result<Vec<Lease>, ToolError> {
        let now = self.now_millis();
        self.with_chain(key, |c| c.map(|c| c.claims().held(prefix, now).into_iter().cloned().collect()).unwrap_or_default())
    }
}
