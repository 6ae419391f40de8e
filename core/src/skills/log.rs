//! The skill registry's append-only log object ([`crate::naming::SKILLS_LOG`]).
//!
//! Layout: the 8-byte magic `MDBSKILL`, then frames in the chain format's
//! framing (`u32 LE payload length | u32 LE CRC-32 of the payload | payload`),
//! one event per frame, with the primitives of [`crate::canonical`]:
//!
//! ```text
//! upload: u8 kind=1, u32 event version=1, str skill_id, str version_id,
//!         u64 uploaded_at_millis (i64 bits), str agent_id, str agent_name,
//!         opt<str> agent_owner, u8 source_format (1 markdown, 2 json), str content,
//!         opt<(str signing_key_id, bytes skill_signature)>
//!         [event version 2 only: str caller]
//! status: u8 kind=2, u32 event version=1, str skill_id,
//!         u8 status (1 active, 2 deprecated, 3 revoked), opt<str> reason,
//!         u64 changed_at_millis (i64 bits), str agent_id,
//!         opt<(str signing_key_id, bytes status_signature)>
//!         [event version 2: opt<str> agent_id and opt<str> caller in place
//!         of str agent_id]
//! ```
//! (an optional signature is one flag byte 0/1, then the key id and the
//! signature bytes). An upload made through an authenticated host (a token
//! name, [`crate::caller::Caller`]) is written as event version 2 with the
//! caller's name last; one without a caller is still written as version 1,
//! byte-identical to logs written before callers existed, and both decode.
//! A status change made by an agent without a caller is still version 1; one
//! made by the operator (no agent) or through a token is version 2.
//!
//! Uploads carry the full content bytes, so any version reads back
//! byte-identical and replay is linear in the log size. A torn tail (an
//! incomplete or checksum-failing last frame) is cut on open; a damaged frame
//! followed by valid frames is corruption.

use crate::framing::{push_frame, read_frame, valid_frame_follows, Frame};
use super::model::{SkillFormat, SkillStatus};
use crate::canonical::{DecodeError, Decoder, Encoder};

/// Magic at the start of the log object.
pub const LOG_MAGIC: &[u8; 8] = b"MDBSKILL";
const EVENT_VERSION: u32 = 1;
/// An upload that records its authenticated caller.
const UPLOAD_WITH_CALLER_VERSION: u32 = 2;
/// A status change whose agent is optional and that may record a caller.
const STATUS_WITH_CALLER_VERSION: u32 = 2;

/// One persisted registry event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillEvent {
    /// A new immutable version.
    Upload {
        /// The skill the version belongs to.
        skill_id: String,
        /// The new version's id.
        version_id: String,
        /// Upload time, epoch milliseconds.
        uploaded_at_millis: i64,
        /// The uploading agent's id.
        agent_id: String,
        /// The uploading agent's display name.
        agent_name: String,
        /// The uploading agent's owner, if any.
        agent_owner: Option<String>,
        /// The format the content was uploaded in.
        source_format: SkillFormat,
        /// The uploaded text, byte for byte.
        content: String,
        /// The key and Ed25519 signature over `content`, when the upload was signed.
        signature: Option<(String, Vec<u8>)>,
        /// The authenticated caller (a host's token name), when there was one.
        caller: Option<String>,
    },
    /// A lifecycle change.
    Status {
        /// The skill whose status changed.
        skill_id: String,
        /// The new status.
        status: SkillStatus,
        /// Why, if the agent said.
        reason: Option<String>,
        /// Time of the change, epoch milliseconds.
        changed_at_millis: i64,
        /// The agent that made the change; `None` when the operator made it
        /// without naming an agent (the call's access class was the check).
        agent_id: Option<String>,
        /// The key and Ed25519 signature over the status payload, when signed.
        signature: Option<(String, Vec<u8>)>,
        /// The authenticated caller (a host's token name), if any.
        caller: Option<String>,
    },
}

impl SkillEvent {
    /// The skill the event is about.
    pub fn skill_id(&self) -> &str {
        match self {
            SkillEvent::Upload { skill_id, .. } | SkillEvent::Status { skill_id, .. } => skill_id,
        }
    }

    /// The frame bytes of this event.
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Encoder::default();
        match self {
            SkillEvent::Upload { skill_id, version_id, uploaded_at_millis, agent_id, agent_name, agent_owner, source_format, content, signature, caller } => {
                e.u8(1);
                e.u32(if caller.is_some() { UPLOAD_WITH_CALLER_VERSION } else { EVENT_VERSION });
                e.str(skill_id);
                e.str(version_id);
                e.u64(*uploaded_at_millis as u64);
                e.str(agent_id);
                e.str(agent_name);
                e.opt_str(agent_owner.as_deref());
                e.u8(source_format.code());
                e.str(content);
                encode_signature(&mut e, signature);
                if let Some(caller) = caller {
                    e.str(caller);
                }
            }
            SkillEvent::Status { skill_id, status, reason, changed_at_millis, agent_id, signature, caller } => {
                let v1_agent = agent_id.as_deref().filter(|_| caller.is_none());
                e.u8(2);
                e.u32(if v1_agent.is_some() { EVENT_VERSION } else { STATUS_WITH_CALLER_VERSION });
                e.str(skill_id);
                e.u8(status.code());
                e.opt_str(reason.as_deref());
                e.u64(*changed_at_millis as u64);
                match v1_agent {
                    Some(agent) => e.str(agent),
                    None => {
                        e.opt_str(agent_id.as_deref());
                        e.opt_str(caller.as_deref());
                    }
                }
                encode_signature(&mut e, signature);
            }
        }
        let mut out = Vec::with_capacity(e.buf.len() + 8);
        push_frame(&mut out, &e.buf);
        out
    }

    fn decode(payload: &[u8]) -> Result<Self, EventDecodeError> {
        let mut d = Decoder::new(payload);
        let kind = d.u8()?;
        let version = d.u32()?;
        if !(version == EVENT_VERSION || (kind == 1 && version == UPLOAD_WITH_CALLER_VERSION) || (kind == 2 && version == STATUS_WITH_CALLER_VERSION)) {
            return Err(EventDecodeError::Version(version));
        }
        let ev = match kind {
            1 => SkillEvent::Upload {
                skill_id: d.str()?,
                version_id: d.str()?,
                uploaded_at_millis: d.u64()? as i64,
                agent_id: d.str()?,
                agent_name: d.str()?,
                agent_owner: d.opt_str()?,
                source_format: SkillFormat::from_code(d.u8()?).ok_or(EventDecodeError::FormatCode)?,
                content: d.str()?,
                signature: decode_signature(&mut d)?,
                caller: if version == UPLOAD_WITH_CALLER_VERSION { Some(d.str()?) } else { None },
            },
            2 => {
                let skill_id = d.str()?;
                let status = SkillStatus::from_code(d.u8()?).ok_or(EventDecodeError::StatusCode)?;
                let reason = d.opt_str()?;
                let changed_at_millis = d.u64()? as i64;
                let (agent_id, caller) = if version == STATUS_WITH_CALLER_VERSION { (d.opt_str()?, d.opt_str()?) } else { (Some(d.str()?), None) };
                SkillEvent::Status { skill_id, status, reason, changed_at_millis, agent_id, signature: decode_signature(&mut d)?, caller }
            }
            k => return Err(EventDecodeError::Kind(k)),
        };
        if !d.rest().is_empty() {
            return Err(EventDecodeError::TrailingBytes);
        }
        Ok(ev)
    }
}

fn encode_signature(e: &mut Encoder, signature: &Option<(String, Vec<u8>)>) {
    match signature {
        Some((key_id, sig)) => {
            e.u8(1);
            e.str(key_id);
            e.bytes(sig);
        }
        None => e.u8(0),
    }
}

fn decode_signature(d: &mut Decoder<'_>) -> Result<Option<(String, Vec<u8>)>, EventDecodeError> {
    match d.u8()? {
        0 => Ok(None),
        1 => Ok(Some((d.str()?, d.bytes()?.to_vec()))),
        f => Err(EventDecodeError::SignatureFlag(f)),
    }
}

/// Why one framed skill event does not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventDecodeError {
    /// A field is cut short or malformed.
    #[error(transparent)]
    Malformed(#[from] DecodeError),
    /// The event was written by a newer registry version.
    #[error("unsupported skill event version {0}")]
    Version(u32),
    /// Neither an upload nor a status change.
    #[error("unknown skill event kind {0}")]
    Kind(u8),
    /// An upload's source format code is unknown.
    #[error("unknown source format code")]
    FormatCode,
    /// A status change's status code is unknown.
    #[error("unknown status code")]
    StatusCode,
    /// The signature presence flag is neither 0 nor 1.
    #[error("bad signature flag {0}")]
    SignatureFlag(u8),
    /// Bytes follow the event inside its frame.
    #[error("trailing bytes after a skill event")]
    TrailingBytes,
}

/// A decoded log.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DecodedLog {
    /// The events of the valid prefix, in log order.
    pub events: Vec<SkillEvent>,
    /// Length of the valid prefix; bytes past it are a torn tail (when
    /// `corruption` is `None`) or unreadable.
    pub valid_len: usize,
    /// Set when damaged bytes are followed by valid frames, or the magic is wrong.
    pub corruption: Option<String>,
}

/// Decodes the whole log. Never fails: damage is reported in the result.
pub fn decode_log(bytes: &[u8]) -> DecodedLog {
    if bytes.len() < LOG_MAGIC.len() {
        // Empty, or a torn first write (a prefix of the magic).
        if LOG_MAGIC.starts_with(bytes) {
            return DecodedLog::default();
        }
        return DecodedLog { corruption: Some("not a skill registry log (bad magic)".into()), ..Default::default() };
    }
    if !bytes.starts_with(LOG_MAGIC) {
        return DecodedLog { corruption: Some("not a skill registry log (bad magic)".into()), ..Default::default() };
    }
    let mut pos = LOG_MAGIC.len();
    let mut events = Vec::new();
    while pos < bytes.len() {
        match read_frame(bytes, pos) {
            Frame::Ok { payload, end } => match SkillEvent::decode(payload) {
                Ok(ev) => {
                    events.push(ev);
                    pos = end;
                }
                Err(what) => {
                    return DecodedLog { events, valid_len: pos, corruption: Some(format!("undecodable skill event at byte offset {pos}: {what}")) };
                }
            },
            Frame::Bad(what) => {
                let follows = valid_frame_follows(bytes, pos);
                let corruption = follows.then(|| format!("corrupt skill event at byte offset {pos}: {what}"));
                return DecodedLog { events, valid_len: pos, corruption };
            }
        }
    }
    DecodedLog { events, valid_len: pos, corruption: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events() -> Vec<SkillEvent> {
        vec![
            SkillEvent::Upload {
                skill_id: "s".into(),
                version_id: "v1".into(),
                uploaded_at_millis: 1_795_000_000_000,
                agent_id: "a".into(),
                agent_name: "A".into(),
                agent_owner: Some("o".into()),
                source_format: SkillFormat::Json,
                content: "{\"name\":\"ü\"}\r\n".into(),
                signature: Some(("k1".into(), vec![7; 64])),
                caller: None,
            },
            SkillEvent::Upload {
                skill_id: "s".into(),
                version_id: "v2".into(),
                uploaded_at_millis: 1_795_000_000_001,
                agent_id: "b".into(),
                agent_name: "B".into(),
                agent_owner: None,
                source_format: SkillFormat::Markdown,
                content: String::new(),
                signature: None,
                caller: Some("ci-bot".into()),
            },
            SkillEvent::Status { skill_id: "s".into(), status: SkillStatus::Revoked, reason: None, changed_at_millis: -5, agent_id: Some("a".into()), signature: None, caller: None },
            SkillEvent::Status { skill_id: "s".into(), status: SkillStatus::Deprecated, reason: Some("r".into()), changed_at_millis: 9, agent_id: Some("a".into()), signature: Some(("k".into(), vec![1; 64])), caller: None },
            SkillEvent::Status { skill_id: "s".into(), status: SkillStatus::Deprecated, reason: None, changed_at_millis: 10, agent_id: None, signature: None, caller: None },
            SkillEvent::Status { skill_id: "s".into(), status: SkillStatus::Revoked, reason: None, changed_at_millis: 11, agent_id: None, signature: None, caller: Some("ops".into()) },
            SkillEvent::Status { skill_id: "s".into(), status: SkillStatus::Revoked, reason: None, changed_at_millis: 12, agent_id: Some("a".into()), signature: Some(("k".into(), vec![2; 64])), caller: Some("ops".into()) },
        ]
    }

    fn log_bytes() -> Vec<u8> {
        let mut b = LOG_MAGIC.to_vec();
        for e in events() {
            b.extend(e.encode());
        }
        b
    }

    #[test]
    fn events_round_trip() {
        let b = log_bytes();
        let d = decode_log(&b);
        assert_eq!(d.events, events());
        assert_eq!(d.valid_len, b.len());
        assert_eq!(d.corruption, None);
    }

    /// A log written before uploads recorded their caller (event version 1,
    /// built here field by field) still decodes, and an upload without a
    /// caller is still written byte for byte as it was.
    #[test]
    fn old_format_uploads_still_decode() {
        let mut e = Encoder::default();
        e.u8(1);
        e.u32(1);
        for field in ["s", "v1"] {
            e.str(field);
        }
        e.u64(42);
        e.str("a");
        e.str("A");
        e.opt_str(None);
        e.u8(SkillFormat::Markdown.code());
        e.str("# S");
        e.u8(0);
        let mut old = LOG_MAGIC.to_vec();
        push_frame(&mut old, &e.buf);
        let d = decode_log(&old);
        assert_eq!(d.corruption, None);
        let ev = SkillEvent::Upload {
            skill_id: "s".into(),
            version_id: "v1".into(),
            uploaded_at_millis: 42,
            agent_id: "a".into(),
            agent_name: "A".into(),
            agent_owner: None,
            source_format: SkillFormat::Markdown,
            content: "# S".into(),
            signature: None,
            caller: None,
        };
        assert_eq!(d.events, vec![ev.clone()]);
        assert_eq!(ev.encode(), old[LOG_MAGIC.len()..]);
        let SkillEvent::Upload { caller, .. } = &decode_log(&log_bytes()).events[1] else { panic!("an upload") };
        assert_eq!(caller.as_deref(), Some("ci-bot"), "version 2 carries the caller");
    }

    /// A status change by an agent without a caller is still written as
    /// event version 1, byte for byte as before optional agents existed.
    #[test]
    fn agent_status_changes_keep_the_old_format() {
        let mut e = Encoder::default();
        e.u8(2);
        e.u32(1);
        e.str("s");
        e.u8(SkillStatus::Deprecated.code());
        e.opt_str(Some("old"));
        e.u64(7);
        e.str("a");
        e.u8(0);
        let ev = SkillEvent::Status { skill_id: "s".into(), status: SkillStatus::Deprecated, reason: Some("old".into()), changed_at_millis: 7, agent_id: Some("a".into()), signature: None, caller: None };
        let mut old = LOG_MAGIC.to_vec();
        push_frame(&mut old, &e.buf);
        assert_eq!(decode_log(&old).events, vec![ev.clone()]);
        assert_eq!(ev.encode(), old[LOG_MAGIC.len()..]);
    }

    #[test]
    fn torn_tails_are_cut_at_every_length() {
        let b = log_bytes();
        // Frame boundaries: a cut anywhere keeps exactly the whole frames before it.
        let mut ends = vec![LOG_MAGIC.len()];
        for e in events() {
            ends.push(ends.last().unwrap() + e.encode().len());
        }
        for cut in 0..b.len() {
            let d = decode_log(&b[..cut]);
            assert_eq!(d.corruption, None, "cut {cut}");
            let expect = ends.iter().copied().filter(|e| *e <= cut).max().unwrap_or(0);
            assert_eq!(d.valid_len, expect, "cut {cut}");
            assert_eq!(d.events.len(), ends.iter().filter(|e| **e <= cut).count().saturating_sub(1), "cut {cut}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(64))]
        #[test]
        fn decoding_arbitrary_bytes_never_panics(tail in proptest::collection::vec(proptest::num::u8::ANY, 0..300), flip in 0usize..400) {
            let mut b = log_bytes();
            b.extend(tail);
            let i = flip % b.len();
            b[i] ^= 0x5a;
            let d = decode_log(&b);
            proptest::prop_assert!(d.valid_len <= b.len());
        }
    }

    #[test]
    fn damage_before_valid_frames_is_corruption() {
        let mut b = log_bytes();
        b[LOG_MAGIC.len() + 12] ^= 0x40;
        let d = decode_log(&b);
        assert!(d.corruption.unwrap().contains("corrupt skill event at byte offset 8"));
        assert!(d.events.is_empty());
        assert!(decode_log(b"NOTALOGATALL").corruption.unwrap().contains("bad magic"));
    }
}
