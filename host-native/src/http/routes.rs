//! The REST route table: every endpoint's method, path, the tool it calls
//! and how the tool's result becomes the reply. Read by the REST server
//! (`rest.rs`), the OpenAPI document (`openapi.rs`) and the commands' REST
//! calls (`crate::target`).

/// How a route's tool result becomes a response body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// The tool's JSON result as is.
    Json,
    /// The tool's Markdown document (`MarkdownReply`), as `text/markdown; charset=utf-8`.
    Markdown,
    /// `GET .../{chain_key}/export`: the chain object's bytes as stored, as
    /// `application/octet-stream` (allowed as the tool is; the engine's
    /// `export_chain` gives the bytes, with no base64 on the way).
    ChainBytes,
    /// `POST .../{chain_key}/import`: the request body is the chain object's
    /// bytes, sent as [`CHAIN_BYTES_TYPE`] (a type no web page can send
    /// unasked), handed to the engine's `import_chain_object` as they came
    /// (allowed as the tool is); the reply is the tool's JSON.
    FromChainBytes,
}

/// The content type of a chain object's bytes (export's reply, import's body).
pub const CHAIN_BYTES_TYPE: &str = "application/octet-stream";

/// One REST endpoint.
#[derive(Debug, Clone, Copy)]
pub struct Route {
    /// `GET` (arguments from the query string), `POST` (JSON body) or
    /// `DELETE` (arguments from the path's `{name}` segments).
    pub method: &'static str,
    pub path: &'static str,
    pub tool: &'static str,
    pub reply: Reply,
}

const fn post_tool(path: &'static str, tool: &'static str) -> Route {
    Route { method: "POST", path, tool, reply: Reply::Json }
}

const fn get_tool(path: &'static str, tool: &'static str, reply: Reply) -> Route {
    Route { method: "GET", path, tool, reply }
}

/// Every REST endpoint of MENTISDB_REST.md (plus the ranked-search and
/// context endpoints, and 0.10.10's lexical, federated and summary-candidate
/// endpoints), and the tool each one calls. `GET /health` and
/// `GET /openapi.json` (generated from this table) are the only endpoints
/// outside it.
pub const ROUTES: &[Route] = &[
    get_tool("/v1/chains", "mentisdb_list_chains", Reply::Json),
    post_tool("/v1/agents", "mentisdb_list_agents"),
    post_tool("/v1/agent", "mentisdb_get_agent"),
    post_tool("/v1/agent-registry", "mentisdb_list_agent_registry"),
    post_tool("/v1/agents/upsert", "mentisdb_upsert_agent"),
    post_tool("/v1/agents/description", "mentisdb_set_agent_description"),
    post_tool("/v1/agents/aliases", "mentisdb_add_agent_alias"),
    post_tool("/v1/agents/keys", "mentisdb_add_agent_key"),
    post_tool("/v1/agents/keys/revoke", "mentisdb_revoke_agent_key"),
    post_tool("/v1/agents/disable", "mentisdb_disable_agent"),
    post_tool("/v1/entity-types", "mentisdb_list_entity_types"),
    post_tool("/v1/entity-types/upsert", "mentisdb_upsert_entity_type"),
    get_tool("/mentisdb_skill_md", "mentisdb_skill_md", Reply::Markdown),
    get_tool("/v1/skills", "mentisdb_list_skills", Reply::Json),
    get_tool("/v1/skills/manifest", "mentisdb_skill_manifest", Reply::Json),
    post_tool("/v1/skills/upload", "mentisdb_upload_skill"),
    post_tool("/v1/skills/search", "mentisdb_search_skill"),
    post_tool("/v1/skills/read", "mentisdb_read_skill"),
    post_tool("/v1/skills/versions", "mentisdb_skill_versions"),
    post_tool("/v1/skills/deprecate", "mentisdb_deprecate_skill"),
    post_tool("/v1/skills/revoke", "mentisdb_revoke_skill"),
    post_tool("/v1/skills/delete", "mentisdb_delete_skill"),
    post_tool("/v1/bootstrap", "mentisdb_bootstrap"),
    post_tool("/v1/thoughts", "mentisdb_append"),
    post_tool("/v1/retrospectives", "mentisdb_append_retrospective"),
    post_tool("/v1/thought", "mentisdb_get_thought"),
    post_tool("/v1/thoughts/genesis", "mentisdb_get_genesis_thought"),
    post_tool("/v1/thoughts/forget", "mentisdb_forget_thought"),
    post_tool("/v1/thoughts/traverse", "mentisdb_traverse_thoughts"),
    post_tool("/v1/search", "mentisdb_search"),
    post_tool("/v1/ranked-search", "mentisdb_ranked_search"),
    post_tool("/v1/lexical-search", "mentisdb_lexical_search"),
    post_tool("/v1/federated-search", "mentisdb_federated_search"),
    post_tool("/v1/summary-candidates", "mentisdb_summary_candidates"),
    post_tool("/v1/context-bundles", "mentisdb_context_bundles"),
    post_tool("/v1/context", "mentisdb_resolve_context"),
    post_tool("/v1/recent-context", "mentisdb_recent_context"),
    post_tool("/v1/memory-markdown", "mentisdb_memory_markdown"),
    post_tool("/v1/head", "mentisdb_head"),
    post_tool("/v1/chains/branch", "mentisdb_branch_from"),
    post_tool("/v1/chains/merge", "mentisdb_merge_chains"),
    post_tool("/v1/chains/delete", "mentisdb_delete_chain"),
    post_tool("/v1/chains/catch-up", "mentisdb_catch_up"),
    get_tool("/v1/chains/{chain_key}/export", "mentisdb_export_chain", Reply::ChainBytes),
    Route { method: "POST", path: "/v1/chains/{chain_key}/import", tool: "mentisdb_import_chain", reply: Reply::FromChainBytes },
    post_tool("/v1/import-markdown", "mentisdb_import_memory_markdown"),
    post_tool("/v1/extract-memories", "mentisdb_extract_memories"),
    post_tool("/v1/checkpoint", "mentisdb_checkpoint"),
    post_tool("/v1/proofs/inclusion", "mentisdb_inclusion_proof"),
    post_tool("/v1/proofs/consistency", "mentisdb_consistency_proof"),
    post_tool("/v1/vectors/rebuild", "mentisdb_rebuild_vectors"),
    post_tool("/v1/chains/records", "mentisdb_chain_records"),
    post_tool("/v1/thoughts/batch", "mentisdb_append_batch"),
    post_tool("/v1/claims", "mentisdb_claim"),
    post_tool("/v1/claims/renew", "mentisdb_renew_claim"),
    post_tool("/v1/claims/release", "mentisdb_release_claim"),
    post_tool("/v1/claims/list", "mentisdb_list_claims"),
    post_tool("/v1/facts", "mentisdb_record_fact"),
    post_tool("/v1/facts/query", "mentisdb_query_facts"),
    post_tool("/v1/facts/close", "mentisdb_close_fact"),
    post_tool("/v1/facts/conflicts", "mentisdb_fact_conflicts"),
    post_tool("/v1/reviews", "mentisdb_request_review"),
    post_tool("/v1/reviews/decide", "mentisdb_decide_review"),
    post_tool("/v1/reviews/list", "mentisdb_list_reviews"),
    post_tool("/v1/presence", "mentisdb_heartbeat"),
    post_tool("/v1/presence/list", "mentisdb_list_presence"),
    get_tool("/v1/identity", "mentisdb_identity", Reply::Json),
    get_tool("/v1/webhooks", "mentisdb_list_webhooks", Reply::Json),
    post_tool("/v1/webhooks", "mentisdb_register_webhook"),
    Route { method: "DELETE", path: "/v1/webhooks/{id}", tool: "mentisdb_delete_webhook", reply: Reply::Json },
];


/// Where `POST` makes every chain durable now (MentisDB 0.10's route).
pub const FLUSH_PATH: &str = "/v1/admin/flush";

/// Where `GET` streams a backup archive of the whole store (admin only).
pub const BACKUP_PATH: &str = "/v1/admin/backup";
