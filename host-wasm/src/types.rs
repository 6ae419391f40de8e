//! TypeScript declarations for the plain objects the API takes and returns
//! (field names exactly as in MENTISDB_MCP.md). Emitted into the generated
//! `mentisdb_wasm.d.ts`.
//!
//! Every interface that stands for a tool's arguments or reply lists every
//! field of that tool: `core/tests/integration/host_declarations.rs` compares them with
//! the core's tool schemas and reply types and fails on a missing field.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = r#"
export type ThoughtType = string;
export type ThoughtRole = string;
/** Memory scope, stored as the tag `scope:<scope>`. */
export type MemoryScope = "user" | "session" | "agent";

export interface ThoughtRelation { kind: string; target_id: string; target_index?: number | null; chain_key?: string | null; /** The thought's append time (MentisDB 0.10's `valid_at`). */ valid_at?: string }

export interface Thought {
  schema_version: number; id: string; index: number; timestamp: string;
  session_id?: string | null; agent_id: string; agent_name: string; agent_owner?: string | null;
  signing_key_id?: string | null; thought_signature?: number[] | null;
  thought_type: ThoughtType; role: ThoughtRole; content: string;
  confidence?: number | null; importance: number; tags: string[]; concepts: string[];
  refs: number[]; relations: ThoughtRelation[]; prev_hash: string; hash: string;
  content_salt?: string | null; forgotten?: Forgotten | null;
  /** Set on schema-3 thoughts only (null otherwise). */
  entity_type?: string | null;
  /** MentisDB 0.10's episode label: always null here (no API sets one). */
  source_episode: null;
}

/** What remains of a forgotten thought's content, and who forgot it. */
export interface Forgotten { content_digest: string; forgotten_at: string; forgotten_by: string; reason: string }

export interface OpenOptions {
  defaultChainKey?: string;
  /** A static word-embedding model (mentisdb-embed-static's file format, e.g. made by scripts/make-static-model.sh): ranked search becomes hybrid. */
  embeddingModel?: Uint8Array;
}

export interface OpenReport {
  chains: { chain_key: string; thought_count: number; torn_tail_bytes: number; storage_location: string }[];
  refused: { object: string; reason: string }[];
}

export interface FilterArgs {
  text?: string; thought_types?: ThoughtType[]; roles?: ThoughtRole[]; tags_any?: string[]; concepts_any?: string[];
  agent_ids?: string[]; agent_names?: string[]; agent_owners?: string[];
  min_importance?: number; min_confidence?: number; since?: string; until?: string;
  entity_type?: string; scope?: MemoryScope;
}

export interface BootstrapArgs {
  chain_key?: string; agent_id?: string; agent_name?: string; agent_owner?: string; content: string;
  importance?: number; tags?: string[]; concepts?: string[]; storage_adapter?: "binary" | "jsonl";
}
export interface BootstrapResult { bootstrapped: boolean; thought_count: number; head_hash: string | null; available_skills: any[] }

export interface RelationArg { kind: string; target_id?: string; target_index?: number; chain_key?: string }
/** The claim an append is fenced with (mentisdb_claim's key and fencing_token): stored only while it holds. */
export interface Fencing { key: string; token: number }

export interface AppendArgs {
  chain_key?: string; agent_id?: string; agent_name?: string; agent_owner?: string;
  thought_type: ThoughtType; content: string; role?: ThoughtRole; importance?: number; confidence?: number;
  tags?: string[]; concepts?: string[]; refs?: number[]; relations?: RelationArg[]; session_id?: string;
  thought_id?: string; signing_key_id?: string; thought_signature?: number[];
  entity_type?: string; scope?: MemoryScope; fencing?: Fencing;
}
export interface RetrospectiveArgs {
  chain_key?: string; agent_id?: string; agent_name?: string; agent_owner?: string;
  /** LessonLearned when omitted; the role is always Retrospective. */
  thought_type?: ThoughtType; content: string; importance?: number; confidence?: number;
  tags?: string[]; concepts?: string[]; refs?: number[]; relations?: RelationArg[]; session_id?: string;
  thought_id?: string; signing_key_id?: string; thought_signature?: number[];
  entity_type?: string; scope?: MemoryScope; fencing?: Fencing;
}
/** A secret replaced by `[REDACTED:<kind>]`; start/end are byte offsets of the placeholder in the stored value. */
export interface Redaction { field: string; kind: string; start: number; end: number }
/** `replay` is true when the thought_id was already stored with the same fields (nothing written). */
export interface AppendResult { thought: Thought; head_hash: string; leaf_hash: string; replay: boolean; redactions: Redaction[] }

/** What `verifyCheckpoint` returns: the signed tree head (root in hex). */
export interface CheckpointHead { origin: string; tree_size: number; root: string }

/** `db.sync`'s options: the daemon's pinned verifier key (`GET /v1/identity`: `verifier_key`) and its bearer token. */
export interface SyncOptions { verifierKey: string; token?: string }
/** What `db.sync` did; the local chain now equals the daemon's at `tree_size`. */
export interface SyncReport {
  chain_key: string; pushed: number; replayed: number; skipped_forgotten: number; skipped_claims: number; pulled: number;
  tree_size: number; root: string; head_hash: string | null; checkpoint: string;
}

/** Superseded, corrected and invalidated thoughts are left out unless `include_invalidated` (alias `include_superseded`). */
export interface SearchArgs extends FilterArgs { chain_key?: string; limit?: number; include_invalidated?: boolean; include_superseded?: boolean }
export interface SearchResult { thoughts: Thought[] }

export interface RecentContextArgs { chain_key?: string; last_n?: number; include_invalidated?: boolean; include_superseded?: boolean; agent_id?: string }

export interface TraverseArgs extends FilterArgs {
  chain_key?: string; anchor_id?: string; anchor_hash?: string; anchor_index?: number;
  anchor_boundary?: "genesis" | "head"; direction?: "forward" | "backward"; include_anchor?: boolean;
  chunk_size?: number; time_window?: TimeWindow;
}
/** Only thoughts with `start <= timestamp <= start + delta` (in `unit`, default "seconds", since the Unix epoch). */
export interface TimeWindow { start: number; delta: number; unit?: string }
/** A resumable position of a traversal. */
export interface Cursor { index: number; id: string; hash: string }
export interface TraverseResult {
  chain_key: string; direction: string; include_anchor: boolean; chunk_size: number;
  anchor: Thought | null; thoughts: Thought[]; has_more: boolean; next_cursor: Cursor | null; previous_cursor: Cursor | null;
}

export interface GetThoughtArgs { chain_key?: string; thought_id?: string; thought_hash?: string; thought_index?: number }
export interface GetThoughtResult { chain_key: string; thought: Thought }

export interface HeadResult {
  chain_key: string; thought_count: number; head_hash: string | null; latest_thought: Thought | null;
  integrity_ok: boolean; storage_location: string;
}

export interface ChainInfo {
  chain_key: string; version: number; storage_adapter: "binary" | "jsonl"; thought_count: number; agent_count: number;
  storage_location: string;
}
export interface ListChainsResult { default_chain_key: string; chain_keys: string[]; chains: ChainInfo[] }

export interface ImportResult {
  chain_key: string; thought_count: number; torn_tail_bytes: number; head_hash: string | null; storage_location: string;
}

export interface ToolSpec { name: string; description: string; input_schema: Record<string, unknown>; /** never writes or waits on storage */ read_only: boolean }

/** Errors thrown or rejected by MentisDb: `message` is the daemon's text. */
export interface MentisDbError extends Error {
  kind: "unknown_tool" | "invalid_arguments" | "not_found" | "storage" | "append_rejected" | "chain_refused" | string;
}
"#;
