//! Replies of the chain tools: bootstrap, append, search, list chains,
//! recent context, Markdown export, get, genesis, traverse, head.

use crate::json_text::{JsonOut, JsonText};
use crate::redact::Redaction;
use crate::thought::Thought;
use crate::traverse::Cursor;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `mentisdb_bootstrap`: whether this call wrote the bootstrap thought.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BootstrapReply {
    /// True when this call wrote the bootstrap thought (the chain was empty).
    pub bootstrapped: bool,
    /// Thoughts in the chain after the call.
    pub thought_count: u64,
    /// Hash of the chain's last thought; null when it is empty.
    pub head_hash: Option<String>,
    /// The registry's active skills (as MentisDB 0.10.10): read the trusted
    /// or relevant ones with `mentisdb_read_skill` before working.
    pub available_skills: Vec<super::SkillSummary>,
}

/// `mentisdb_append` and `mentisdb_append_retrospective`: the stored thought.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AppendReply<T = Thought> {
    /// The thought as stored, with its index, id and hash.
    pub thought: T,
    /// Hash of the chain's last thought after the append.
    pub head_hash: Option<String>,
    /// The thought's RFC 9162 leaf hash, hex (`SHA-256(0x00 || chain hash)`):
    /// with `thought.index`, what `mentisdb_inclusion_proof` proves.
    pub leaf_hash: String,
    /// True when the request repeated a thought already stored under its
    /// `thought_id` with the same fields: `thought` is that earlier thought
    /// and nothing was written. Always present; false for a new thought.
    pub replay: bool,
    /// Each secret replaced by `[REDACTED:<kind>]` before hashing (content,
    /// tags, concepts), with the placeholder's byte offsets in the stored
    /// value. Always present; empty when nothing was redacted or redaction is off.
    pub redactions: Vec<Redaction>,
}

/// `mentisdb_forget_thought`: the thought as it is now (forgotten).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ForgetReply<T = Thought> {
    /// The chain the thought belongs to.
    pub chain_key: String,
    /// The forgotten thought: index, id, type, time, hash and `forgotten` kept.
    pub thought: T,
    /// False when it had been forgotten before (nothing changed).
    pub forgotten_now: bool,
    /// Schema-1 thoughts migrated to schema 2 first (their hashes, and the
    /// hashes and links of every later thought, changed); 0 usually.
    pub migrated_thoughts: u64,
    /// Hash of the chain's last thought after the call.
    pub head_hash: Option<String>,
}

/// `mentisdb_search`: the newest `limit` matches, in append order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchReply<T = Thought> {
    /// The matching thoughts.
    pub thoughts: Vec<T>,
}

impl<T: std::borrow::Borrow<Thought>> SearchReply<T> {
    /// The reply's JSON text, as serde writes it, faster (`json_text.rs`;
    /// `replies::ranked::tests::hand_written_replies_are_what_serde_writes`
    /// holds the two equal).
    pub fn to_json(&self) -> JsonText {
        let mut out = JsonOut::with_capacity(16 + THOUGHT_TEXT_GUESS * self.thoughts.len());
        out.raw("{\"thoughts\":");
        write_thoughts(&mut out, &self.thoughts);
        out.raw("}");
        out.finish()
    }
}

/// `thoughts` as a JSON array, each by [`Thought::write_json`].
fn write_thoughts<T: std::borrow::Borrow<Thought>>(out: &mut JsonOut, thoughts: &[T]) {
    out.raw("[");
    for (i, t) in thoughts.iter().enumerate() {
        if i > 0 {
            out.raw(",");
        }
        t.borrow().write_json(out);
    }
    out.raw("]");
}

/// Room a reply sets aside for each thought it writes (a ~100-byte
/// thought's JSON is ~700 bytes): a 10-thought reply then grows no more.
pub(crate) const THOUGHT_TEXT_GUESS: usize = 1024;

/// `mentisdb_memory_markdown` and `mentisdb_skill_md`: a Markdown document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MarkdownReply {
    /// The document.
    pub markdown: String,
}

/// `mentisdb_recent_context`: the latest thoughts as a prompt snippet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RecentContextReply {
    /// The rendered prompt.
    pub prompt: String,
}

/// One chain of `mentisdb_list_chains`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChainInfo {
    /// The chain's key.
    pub chain_key: String,
    /// Thought schema version.
    pub version: u32,
    /// `binary` or `jsonl`.
    pub storage_adapter: String,
    /// Thoughts in the chain.
    pub thought_count: u64,
    /// Agents in the chain's registry.
    pub agent_count: u64,
    /// Where the chain is stored (host-specific; through a daemon with tokens, only the file name unless the caller is admin on every chain).
    pub storage_location: String,
}

/// `mentisdb_list_chains`: every stored chain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ListChainsReply {
    /// The chain used when a call names none.
    pub default_chain_key: String,
    /// The keys of `chains`, in the same order.
    pub chain_keys: Vec<String>,
    /// One entry per stored chain.
    pub chains: Vec<ChainInfo>,
}

/// `mentisdb_get_thought`: one thought.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GetThoughtReply<T = Thought> {
    /// The chain it was found in.
    pub chain_key: String,
    /// The thought.
    pub thought: T,
}

/// `mentisdb_get_genesis_thought`: the first thought, null for an empty chain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GenesisReply<T = Thought> {
    /// The chain asked about.
    pub chain_key: String,
    /// Its first thought; null when the chain is empty.
    pub thought: Option<T>,
}

/// `mentisdb_head`: the chain tip.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HeadReply<T = Thought> {
    /// The chain asked about.
    pub chain_key: String,
    /// Thoughts in the chain (0 for an unknown chain).
    pub thought_count: u64,
    /// Hash of the last thought; null when the chain is empty.
    pub head_hash: Option<String>,
    /// The last thought; null when the chain is empty.
    pub latest_thought: Option<T>,
    /// Whether the head re-hashes to its hash and links to its predecessor.
    pub integrity_ok: bool,
    /// Where the chain is (or would be) stored.
    pub storage_location: String,
}

/// `mentisdb_traverse_thoughts`: one chunk of an ordered walk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TraverseReply<T = Thought> {
    /// The chain walked.
    pub chain_key: String,
    /// `forward` or `backward`.
    pub direction: String,
    /// Whether a concrete anchor was included.
    pub include_anchor: bool,
    /// Matching thoughts per chunk, after clamping.
    pub chunk_size: u64,
    /// The anchor thought; null for genesis/head boundaries and no anchor.
    pub anchor: Option<T>,
    /// The matching thoughts of this chunk, in walk order.
    pub thoughts: Vec<T>,
    /// Whether more matching thoughts follow in this direction.
    pub has_more: bool,
    /// The last thought of this chunk when `has_more` (continue from here); null otherwise.
    pub next_cursor: Option<Cursor>,
    /// The first thought of this chunk when thoughts lie before it in this
    /// direction (walk back from here); null otherwise.
    pub previous_cursor: Option<Cursor>,
}

impl<T: std::borrow::Borrow<Thought>> TraverseReply<T> {
    /// The reply's JSON text, as serde writes it, faster (see
    /// [`SearchReply::to_json`]; the same test holds the two equal).
    pub fn to_json(&self) -> JsonText {
        // Destructured without `..`: a new field stops the build here.
        let TraverseReply { chain_key, direction, include_anchor, chunk_size, anchor, thoughts, has_more, next_cursor, previous_cursor } = self;
        let mut out = JsonOut::with_capacity(256 + THOUGHT_TEXT_GUESS * (thoughts.len() + usize::from(anchor.is_some())));
        out.raw("{\"chain_key\":").str(chain_key);
        out.raw(",\"direction\":").str(direction);
        out.raw(if *include_anchor { ",\"include_anchor\":true" } else { ",\"include_anchor\":false" });
        out.raw(",\"chunk_size\":").u64(*chunk_size);
        out.raw(",\"anchor\":");
        match anchor {
            Some(t) => t.borrow().write_json(&mut out),
            None => {
                out.raw("null");
            }
        }
        out.raw(",\"thoughts\":");
        write_thoughts(&mut out, thoughts);
        out.raw(if *has_more { ",\"has_more\":true" } else { ",\"has_more\":false" });
        out.raw(",\"next_cursor\":").serde(next_cursor);
        out.raw(",\"previous_cursor\":").serde(previous_cursor);
        out.raw("}");
        out.finish()
    }
}

/// `mentisdb_branch_from`: the new branch chain and where it starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BranchReply {
    /// The chain created.
    pub branch_chain_key: String,
    /// Id of the branch chain's first thought (a `StateSnapshot` with a `BranchesFrom` relation).
    pub genesis_thought_id: String,
    /// The chain branched from.
    pub source_chain_key: String,
    /// The source thought the branch starts at.
    pub branch_thought_id: String,
}

/// `mentisdb_merge_chains`: what was moved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MergeReply {
    /// Thoughts appended to the target chain.
    pub thoughts_copied: usize,
    /// Source agents written under a different target agent id.
    pub agents_remapped: usize,
    /// Always true on success: the source chain is deleted.
    pub source_deleted: bool,
}

/// `mentisdb_catch_up`: the chain as this daemon serves it after catching up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CatchUpReply {
    /// The chain.
    pub chain_key: String,
    /// Thoughts other daemons appended that were taken in now.
    pub taken_in: usize,
    /// Thoughts in the chain.
    pub thought_count: u64,
    /// Hash of the last thought; null when the chain is empty.
    pub head_hash: Option<String>,
    /// Whether the thought at `min_index` is served here (true without `min_index`).
    pub reached: bool,
}

/// `mentisdb_delete_chain`: what was deleted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DeleteChainReply {
    /// The deleted chain.
    pub chain_key: String,
    /// Always true on success.
    pub deleted: bool,
    /// How many thoughts it held.
    pub thought_count: usize,
}

/// `mentisdb_import_memory_markdown`: the thoughts appended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImportMarkdownReply {
    /// Indices of the new thoughts, in append order.
    pub imported: Vec<u64>,
    /// `imported.len()`.
    pub count: usize,
}

/// `mentisdb_export_chain`: a chain's stored object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExportChainReply {
    /// The chain exported.
    pub chain_key: String,
    /// Its record format: `binary` or `jsonl`.
    pub storage_adapter: String,
    /// Length of the object in bytes.
    pub byte_count: usize,
    /// SHA-256 of the object, lowercase hex.
    pub sha256: String,
    /// The object, standard base64.
    pub chain_base64: String,
}

/// `mentisdb_import_chain`: the chain added.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImportChainReply {
    /// The chain created (the key the object names).
    pub chain_key: String,
    /// Its record format, kept as stored: `binary` or `jsonl`.
    pub storage_adapter: String,
    /// Thoughts in the chain.
    pub thought_count: usize,
    /// Bytes of a torn tail cut from the end of the object before storing it.
    pub torn_tail_bytes: usize,
    /// Hash of the chain's last thought (null for a chain with no thoughts).
    pub head_hash: Option<String>,
    /// Where the chain is now stored.
    pub storage_location: String,
}
