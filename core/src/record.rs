//! On-disk chain formats: how a chain object's bytes are laid out.
//!
//! Both formats are append-only and self-describing; every host (native
//! files, browser IndexedDB export, WASI directory) writes exactly these bytes,
//! so a chain moves between hosts as one file.
//!
//! **binary** (`.mdb`): the 8-byte magic `MDBCHAIN`, then frames. A frame is
//! `u32 LE payload length | u32 LE CRC-32 (IEEE) of the payload | payload`.
//! The first frame is the header: `u8 kind=0 | u32 format version=1 | str chain_key`.
//! Every later frame is one thought: its canonical body ([`crate::canonical`])
//! followed by the 32 raw bytes of its hash.
//!
//! **jsonl** (`.jsonl`): the first line is the header
//! `{"mentisdb_chain":<chain_key>,"format":"jsonl","version":1}`, then one
//! thought per line as the tools return it, in serde_json's compact form
//! (decoding checks each line byte for byte against it), ended by `\n`.
//!
//! A torn tail (a crash in the middle of an append) shows up as an incomplete
//! or checksum-failing last frame, or a last line without `\n`. Decoding cuts
//! it off and reports its size; a damaged frame *followed by valid data* is
//! corruption, not a torn tail, and is an error.

use crate::canonical::{decode_thought_body, encode_thought_body, DecodeError, Encoder};
use crate::hex_bytes::ThoughtHash;
use crate::framing::{push_frame, read_frame, valid_frame_follows, Frame};
use crate::host::{run_collect, Parallelism, Sequential};
use crate::named_enum::named_enum;
pub use crate::framing::MAX_FRAME_LEN;
use crate::thought::Thought;
use crate::thought_list::ThoughtList;
use crate::keyed_hash::KeyedState;
use crate::label::LabelSet;

/// File magic of the binary format.
pub const BINARY_MAGIC: &[u8; 8] = b"MDBCHAIN";
const FORMAT_VERSION: u32 = 1;

named_enum! {
    /// A chain's storage format, chosen per chain at creation; named on the
    /// wire by `storage_adapter` (`binary` or `jsonl`, case-insensitive).
    pub enum ChainFormat("storage_adapter", IgnoreCase) {
        /// Length + CRC framed canonical records (default).
        Binary = "binary",
        /// One JSON thought per line.
        Jsonl = "jsonl",
    }
}

impl ChainFormat {
    /// The adapter name used on the wire (`storage_adapter`).
    pub fn adapter_name(self) -> &'static str {
        self.as_str()
    }

    /// File extension of the chain object.
    pub fn extension(self) -> &'static str {
        match self {
            ChainFormat::Binary => "mdb",
            ChainFormat::Jsonl => "jsonl",
        }
    }
}

/// Bytes that start a new chain object.
pub fn encode_header(format: ChainFormat, chain_key: &str) -> Vec<u8> {
    match format {
        ChainFormat::Binary => {
            let mut e = Encoder::default();
            e.u8(0);
            e.u32(FORMAT_VERSION);
            e.str(chain_key);
            let mut out = BINARY_MAGIC.to_vec();
            push_frame(&mut out, &e.buf);
            out
        }
        ChainFormat::Jsonl => {
            let mut line = serde_json::to_vec(&serde_json::json!({
                "mentisdb_chain": chain_key, "format": "jsonl", "version": FORMAT_VERSION
            }))
            .expect("header serializes");
            line.push(b'\n');
            line
        }
    }
}

/// Bytes that append one thought to a chain object.
pub fn encode_thought(format: ChainFormat, thought: &Thought) -> Vec<u8> {
    encode_thought_with_payload(format, thought, None)
}

/// Like [`encode_thought`], reusing the binary record payload (canonical
/// body + 32 hash bytes) when the caller already built it, so the append
/// path encodes and hashes once.
pub(crate) fn encode_thought_with_payload(format: ChainFormat, thought: &Thought, payload: Option<Vec<u8>>) -> Vec<u8> {
    match format {
        ChainFormat::Binary => {
            let payload = payload.unwrap_or_else(|| {
                let mut p = encode_thought_body(thought);
                p.extend_from_slice(thought.hash.as_bytes());
                p
            });
            let mut out = Vec::with_capacity(payload.len() + 8);
            push_frame(&mut out, &payload);
            out
        }
        ChainFormat::Jsonl => {
            let mut line = crate::jsonl_record::line(thought);
            line.push(b'\n');
            line
        }
    }
}

/// A decoded chain object.
#[derive(Debug, Clone)]
pub struct DecodedChain {
    /// Format found in the bytes.
    pub format: ChainFormat,
    /// Chain key from the header.
    pub chain_key: String,
    /// Thoughts in file order (not yet verified: see [`Chain`](crate::Chain)).
    pub thoughts: ThoughtList,
    /// Length of the valid prefix; bytes past it are a torn tail.
    pub valid_len: usize,
    /// For the binary format: per thought, `None` when its stored body
    /// hashes to its stored hash, else the hash the body does have, so
    /// verification need not re-encode the thought (`None` for JSONL).
    pub body_hash_mismatches: Option<Vec<Option<ThoughtHash>>>,
    /// The labels the decoder made, one set per decoding job, when it
    /// shared them (binary records): the thoughts' labels come from these,
    /// so a chain built from them takes them over instead of looking up
    /// every thought's labels again (empty: it does).
    pub(crate) label_sets: Vec<LabelSet>,
}

/// Equal when they decode the same chain (however the decoder's jobs
/// shared labels).
impl PartialEq for DecodedChain {
    fn eq(&self, other: &Self) -> bool {
        let DecodedChain { format, chain_key, thoughts, valid_len, body_hash_mismatches, label_sets: _ } = self;
        (format, chain_key, thoughts, valid_len, body_hash_mismatches) == (&other.format, &other.chain_key, &other.thoughts, &other.valid_len, &other.body_hash_mismatches)
    }
}

impl DecodedChain {
    /// Whether the object ended with a torn tail of `total - valid_len` bytes.
    pub fn torn_tail_bytes(&self, total: usize) -> usize {
        total - self.valid_len
    }
}

/// Why a chain object could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// Neither the binary magic nor a JSONL header.
    #[error("not a MentisDB chain object (unknown header)")]
    UnknownFormat,
    /// The header frame or line is damaged.
    #[error("damaged chain header: {0}")]
    BadHeader(String),
    /// A damaged record with valid records after it: corruption, not a torn tail.
    #[error("corrupt record at byte offset {offset}: {what}")]
    Corrupt {
        /// Byte offset of the damaged record.
        offset: usize,
        /// What is wrong with it.
        what: String,
    },
}

/// Decodes a whole chain object, cutting a torn tail.
pub fn decode_chain(bytes: &[u8]) -> Result<DecodedChain, RecordError> {
    decode_chain_with(bytes, &Sequential, KeyedState::default())
}

/// [`decode_chain`], decoding and hashing the binary format's records in
/// jobs the host may run at the same time (same result either way), the
/// labels they share keyed by `hasher` (the engine's).
pub(crate) fn decode_chain_with(bytes: &[u8], parallelism: &dyn Parallelism, hasher: KeyedState) -> Result<DecodedChain, RecordError> {
    if bytes.starts_with(BINARY_MAGIC) {
        decode_binary(bytes, parallelism, hasher)
    } else if bytes.first() == Some(&b'{') {
        decode_jsonl(bytes)
    } else {
        Err(RecordError::UnknownFormat)
    }
}

/// The chain key in an object's header, when the header is intact (used to
/// name a chain whose later records are damaged).
pub fn peek_chain_key(bytes: &[u8]) -> Option<String> {
    if bytes.starts_with(BINARY_MAGIC) {
        match read_frame(bytes, BINARY_MAGIC.len()) {
            Frame::Ok { payload, .. } => {
                let mut d = crate::canonical::Decoder::new(payload);
                d.u8().ok()?;
                d.u32().ok()?;
                d.str().ok()
            }
            Frame::Bad(_) => None,
        }
    } else {
        let end = bytes.iter().position(|b| *b == b'\n')?;
        let header: serde_json::Value = serde_json::from_slice(&bytes[..end]).ok()?;
        header.get("mentisdb_chain")?.as_str().map(str::to_string)
    }
}

fn decode_binary(bytes: &[u8], parallelism: &dyn Parallelism, hasher: KeyedState) -> Result<DecodedChain, RecordError> {
    let mut pos = BINARY_MAGIC.len();
    let chain_key = match read_frame(bytes, pos) {
        Frame::Ok { payload, end } => {
            let mut d = crate::canonical::Decoder::new(payload);
            let kind = d.u8().map_err(|e| RecordError::BadHeader(e.to_string()))?;
            let version = d.u32().map_err(|e| RecordError::BadHeader(e.to_string()))?;
            if kind != 0 || version != FORMAT_VERSION {
                return Err(RecordError::BadHeader(format!("unsupported kind {kind} / version {version}")));
            }
            let key = d.str().map_err(|e| RecordError::BadHeader(e.to_string()))?;
            pos = end;
            key
        }
        Frame::Bad(what) => return Err(RecordError::BadHeader(what)),
    };
    let records = binary_records_from(bytes, pos, parallelism, Some(hasher))?;
    Ok(DecodedChain { format: ChainFormat::Binary, chain_key, ..records })
}

/// The binary records of `bytes` from `pos` (a frame boundary) on: found in
/// one pass (length + CRC), then decoded and hashed in jobs. A damaged last
/// frame is a torn tail (left out of `valid_len`); damage followed by valid
/// frames is corruption.
fn binary_records_from(bytes: &[u8], mut pos: usize, parallelism: &dyn Parallelism, hasher: Option<KeyedState>) -> Result<DecodedChain, RecordError> {
    let mut records: Vec<(usize, &[u8])> = Vec::new();
    while pos < bytes.len() {
        match read_frame(bytes, pos) {
            Frame::Ok { payload, end } => {
                records.push((pos, payload));
                pos = end;
            }
            Frame::Bad(what) => {
                if valid_frame_follows(bytes, pos) {
                    return Err(RecordError::Corrupt { offset: pos, what });
                }
                break;
            }
        }
    }
    let (thoughts, mismatches, label_sets) = decode_records(&records, parallelism, hasher)?;
    Ok(DecodedChain { format: ChainFormat::Binary, chain_key: String::new(), thoughts, valid_len: pos, body_hash_mismatches: Some(mismatches), label_sets })
}

/// Decodes the records `bytes` holds, `bytes` being what followed a known
/// record boundary of a `format` chain object (another writer's appends, read
/// with [`crate::Storage::read_from`]). `valid_len` is relative to `bytes`;
/// an incomplete last record is left for later. The chain key is empty.
pub fn decode_suffix(format: ChainFormat, bytes: &[u8]) -> Result<DecodedChain, RecordError> {
    match format {
        ChainFormat::Binary => binary_records_from(bytes, 0, &Sequential, None),
        ChainFormat::Jsonl => jsonl_lines_from(bytes, 0),
    }
}

/// One binary record: its thought, and the hash its body really has when
/// that differs from the stored one.
fn decode_record(offset: usize, payload: &[u8], labels: Option<&mut LabelSet>) -> Result<(Thought, Option<ThoughtHash>), RecordError> {
    if payload.len() < 32 {
        return Err(RecordError::Corrupt { offset, what: "record shorter than its hash".into() });
    }
    let (body, hash) = payload.split_at(payload.len() - 32);
    let hash: &[u8; 32] = hash.try_into().expect("32 bytes");
    let (thought, actual) = decode_thought_body(body, ThoughtHash::from(*hash), labels).map_err(|e: DecodeError| RecordError::Corrupt { offset, what: e.to_string() })?;
    Ok((thought, (actual != *hash).then_some(ThoughtHash::from(actual))))
}

/// A record's thought, and the hash its body has when not the stored one.
type DecodedRecord = (Thought, Option<ThoughtHash>);

/// Decoded records: the thoughts, per thought the hash its body has when not
/// the stored one, and the label sets the decoding jobs made.
type DecodedRecords = (ThoughtList, Vec<Option<ThoughtHash>>, Vec<LabelSet>);

/// Decodes `records` in order, in about four jobs per unit of the host's
/// width; the first damaged record (in file order) is the error. With
/// `hasher`, each job shares its thoughts' labels through a set of its own
/// (keyed by it), returned beside them; without, none are (records another
/// writer appended: [`crate::Chain::commit`] shares them).
fn decode_records(records: &[(usize, &[u8])], parallelism: &dyn Parallelism, hasher: Option<KeyedState>) -> Result<DecodedRecords, RecordError> {
    type Decoded = Result<(Vec<DecodedRecord>, Option<LabelSet>), RecordError>;
    const MIN_JOB: usize = 1024;
    let job = |chunk: &[(usize, &[u8])]| -> Decoded {
        let mut labels = hasher.map(LabelSet::with_hasher);
        let thoughts = chunk.iter().map(|(offset, payload)| decode_record(*offset, payload, labels.as_mut())).collect::<Result<_, _>>()?;
        Ok((thoughts, labels))
    };
    let jobs = (parallelism.width().max(1) * 4).min(records.len().div_ceil(MIN_JOB)).max(1);
    let per_job = records.len().div_ceil(jobs);
    let chunks = match jobs {
        1 => vec![job(records)],
        _ => run_collect(parallelism, jobs, |j| job(records.chunks(per_job).nth(j).unwrap_or_default())),
    };
    let mut thoughts = ThoughtList::new();
    let mut mismatches = Vec::with_capacity(records.len());
    let mut sets = Vec::with_capacity(jobs);
    for chunk in chunks {
        let (decoded, labels) = chunk?;
        for (t, mismatch) in decoded {
            thoughts.push(t);
            mismatches.push(mismatch);
        }
        sets.extend(labels);
    }
    Ok((thoughts, mismatches, sets))
}

fn decode_jsonl(bytes: &[u8]) -> Result<DecodedChain, RecordError> {
    let header_end = match bytes.iter().position(|b| *b == b'\n') {
        Some(p) => p,
        None => return Err(RecordError::BadHeader("header line has no newline".into())),
    };
    let header: serde_json::Value = serde_json::from_slice(&bytes[..header_end]).map_err(|e| RecordError::BadHeader(e.to_string()))?;
    let chain_key = header
        .get("mentisdb_chain")
        .and_then(|v| v.as_str())
        .ok_or_else(|| RecordError::BadHeader("missing mentisdb_chain".into()))?
        .to_string();
    // Like every thought line, the header must be exactly what the writer
    // produced (an unknown format or version is not silently accepted).
    if bytes[..=header_end] != encode_header(ChainFormat::Jsonl, &chain_key)[..] {
        return Err(RecordError::BadHeader("header line is not the canonical {\"mentisdb_chain\",\"format\":\"jsonl\",\"version\":1} line".into()));
    }
    let lines = jsonl_lines_from(bytes, header_end + 1)?;
    Ok(DecodedChain { chain_key, ..lines })
}

/// The JSONL thought lines of `bytes` from `pos` (a line start) on; a last
/// line without `\n`, or one that is not JSON at all, is a torn tail (left
/// out of `valid_len`). A whole JSON line that is not a valid thought is
/// corrupt wherever it is: a complete record is never dropped as torn.
fn jsonl_lines_from(bytes: &[u8], mut pos: usize) -> Result<DecodedChain, RecordError> {
    let mut thoughts = ThoughtList::new();
    while pos < bytes.len() {
        let Some(nl) = bytes[pos..].iter().position(|b| *b == b'\n') else {
            break; // last line without newline: torn tail
        };
        let line = &bytes[pos..pos + nl];
        match serde_json::from_slice::<Thought>(line) {
            // The line must be exactly what the writer produced: otherwise a
            // change that parses to the same thought (e.g. a renamed optional
            // key) would slip past the hash.
            Ok(mut t) if crate::jsonl_record::line(&t) == line => {
                t.stamp_relations();
                thoughts.push(t)
            }
            Ok(_) => return Err(RecordError::Corrupt { offset: pos, what: "line is not in canonical form (was it edited?)".into() }),
            Err(e) => {
                let after = pos + nl + 1;
                if after < bytes.len() || serde_json::from_slice::<serde::de::IgnoredAny>(line).is_ok() {
                    return Err(RecordError::Corrupt { offset: pos, what: e.to_string() });
                }
                break;
            }
        }
        pos += nl + 1;
    }
    Ok(DecodedChain { format: ChainFormat::Jsonl, chain_key: String::new(), thoughts, valid_len: pos, body_hash_mismatches: None, label_sets: Vec::new() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Reversed;
    use crate::canonical::{compute_thought_hash, tests::golden_thought};

    #[test]
    fn jsonl_header_with_unknown_format_or_version_is_refused() {
        // Found by the record_decode fuzz target (fuzz/crashers/record_decode/).
        let good = encode_header(ChainFormat::Jsonl, "k");
        assert!(decode_chain(&good).is_ok());
        for bad in [
            r#"{"format":"jsnnl","mentisdb_chain":"k","version":1}"#,
            r#"{"format":"jsonl","mentisdb_chain":"k","version":2}"#,
            r#"{"mentisdb_chain":"k"}"#,
        ] {
            let bytes = format!("{bad}\n");
            assert!(matches!(decode_chain(bytes.as_bytes()), Err(RecordError::BadHeader(_))), "{bad}");
        }
    }

    fn sample(format: ChainFormat) -> (Vec<u8>, Thought) {
        let mut t = golden_thought();
        t.hash = compute_thought_hash(&t);
        let mut bytes = encode_header(format, "chain/ä");
        bytes.extend(encode_thought(format, &t));
        (bytes, t)
    }

    #[test]
    fn both_formats_round_trip() {
        for f in [ChainFormat::Binary, ChainFormat::Jsonl] {
            let (bytes, t) = sample(f);
            let d = decode_chain(&bytes).unwrap();
            assert_eq!(d.format, f);
            if let Some(m) = &d.body_hash_mismatches {
                assert_eq!(m, &vec![None], "the stored body hashes to the stored hash");
            }
            assert_eq!(d.chain_key, "chain/ä");
            assert_eq!(d.thoughts.to_vec(), vec![t]);
            assert_eq!(d.valid_len, bytes.len());
        }
    }

    #[test]
    fn torn_tails_are_cut_at_every_length() {
        for f in [ChainFormat::Binary, ChainFormat::Jsonl] {
            let (mut bytes, t) = sample(f);
            let whole = bytes.len();
            bytes.extend(encode_thought(f, &t));
            for cut in whole..bytes.len() {
                let d = decode_chain(&bytes[..cut]).unwrap();
                assert_eq!(d.thoughts.len(), 1, "{f:?} cut at {cut}");
                assert_eq!(d.valid_len, whole);
            }
        }
    }

    #[test]
    fn a_whole_last_jsonl_line_that_is_no_thought_is_refused_not_cut() {
        let (mut bytes, t) = sample(ChainFormat::Jsonl);
        let whole = bytes.len();
        let line = String::from_utf8(encode_thought(ChainFormat::Jsonl, &t)).unwrap();
        let hex = t.hash.to_hex();
        // Edited by hand: upper-case hash digits, a hash cut short, a missing field.
        for edited in [line.replace(&hex, &hex.to_uppercase()), line.replace(&hex, &hex[..60]), line.replace("\"content\":", "\"contents\":")] {
            let mut damaged = bytes.clone();
            damaged.extend(edited.as_bytes());
            let err = decode_chain(&damaged).unwrap_err();
            assert!(matches!(&err, RecordError::Corrupt { offset, .. } if *offset == whole), "{err:?}");
        }
        // Not JSON at all (a torn write that left junk and a newline): a torn tail, cut.
        bytes.extend(b"{\"schema_version\":1,\"id\n");
        assert_eq!(decode_chain(&bytes).unwrap().valid_len, whole);
    }

    #[test]
    fn damage_before_valid_records_is_corruption() {
        let (mut bytes, t) = sample(ChainFormat::Binary);
        let first = bytes.len();
        bytes.extend(encode_thought(ChainFormat::Binary, &t));
        bytes[first - 40] ^= 0x55; // inside the first thought's payload
        assert!(matches!(decode_chain(&bytes), Err(RecordError::Corrupt { .. })));
    }

    #[test]
    fn jobs_in_any_order_decode_the_same_chain_and_first_error() {
        let mut t = golden_thought();
        let mut bytes = encode_header(ChainFormat::Binary, "k");
        let mut offsets = Vec::new();
        for i in 0..5000u64 {
            t.index = i;
            t.content = format!("thought {i}").into();
            t.hash = compute_thought_hash(&t);
            offsets.push(bytes.len());
            bytes.extend(encode_thought(ChainFormat::Binary, &t));
        }
        let sequential = decode_chain(&bytes).unwrap();
        assert_eq!(sequential.thoughts.len(), 5000);
        assert_eq!(decode_chain_with(&bytes, &Reversed, KeyedState::default()).unwrap(), sequential);
        // Two damaged bodies with valid checksums: the first in file order is reported.
        for at in [4000, 1200] {
            let frame = offsets[at];
            let body_type_len = frame + 8 + 4 + 8; // frame header, schema_version, index: now the id's length
            bytes[body_type_len..body_type_len + 4].copy_from_slice(&u32::MAX.to_le_bytes());
            let payload_len = u32::from_le_bytes(bytes[frame..frame + 4].try_into().unwrap()) as usize;
            let crc = crate::framing::crc32(&bytes[frame + 8..frame + 8 + payload_len]);
            bytes[frame + 4..frame + 8].copy_from_slice(&crc.to_le_bytes());
        }
        let err = decode_chain_with(&bytes, &Reversed, KeyedState::default()).unwrap_err();
        assert_eq!(err, decode_chain(&bytes).unwrap_err());
        assert!(matches!(err, RecordError::Corrupt { offset, .. } if offset == offsets[1200]), "{err:?}");
    }

    #[test]
    fn binary_golden_header() {
        let h = encode_header(ChainFormat::Binary, "k");
        assert_eq!(hex::encode(&h), "4d4442434841494e0a00000055edf1130001000000010000006b");
    }
}
