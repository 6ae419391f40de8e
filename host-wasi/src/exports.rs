//! The component's exports: `memory` (generic `call` plus the typed
//! everyday operations) and `self-test`. Every function goes through
//! [`mentisdb_core::MentisDb::call`]; errors leave through [`crate::error`].

use crate::bindings::exports::mentisdb::memory::{memory, self_test};
use crate::engine::{engine, DATA_DIR};
use crate::error::to_wit;
use crate::records;
use crate::wit::{AppendRequest, BootstrapRequest, BootstrapResult, Error, HeadInfo, SearchRequest, Thought};
use mentisdb_core::dispatch::replies::{AppendReply, BootstrapReply, HeadReply, RecentContextReply, SearchReply};
use mentisdb_core::ranked::EmbeddingProvider;
use mentisdb_core::ToolError;
use mentisdb_embed_static::StaticEmbedder;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;

/// The type the bindings export.
pub struct Component;

/// Runs one tool on the instance's engine and reads its typed reply `R`.
fn dispatch<R: DeserializeOwned>(tool: &str, args: Value) -> Result<R, Error> {
    engine().and_then(|db| db.call_as(tool, args)).map_err(|e| to_wit(&e))
}

impl memory::Guest for Component {
    fn call(tool: String, args: String) -> Result<String, Error> {
        let result = engine().and_then(|db| db.call_json(&tool, &args)).map_err(|e| to_wit(&e))?;
        Ok(result.to_string())
    }

    fn list_tools() -> String {
        serde_json::to_string(&mentisdb_core::tool_specs()).expect("tool specs serialize")
    }

    fn bootstrap(request: BootstrapRequest) -> Result<BootstrapResult, Error> {
        let reply: BootstrapReply = dispatch("mentisdb_bootstrap", records::bootstrap_args(request))?;
        Ok(records::bootstrap_result(reply))
    }

    fn append(request: AppendRequest) -> Result<Thought, Error> {
        let reply: AppendReply = dispatch("mentisdb_append", records::append_args(request))?;
        Ok(records::thought(reply.thought))
    }

    fn search(request: SearchRequest) -> Result<Vec<Thought>, Error> {
        let reply: SearchReply = dispatch("mentisdb_search", records::search_args(request))?;
        Ok(reply.thoughts.into_iter().map(records::thought).collect())
    }

    fn head(chain_key: Option<String>) -> Result<HeadInfo, Error> {
        let reply: HeadReply = dispatch("mentisdb_head", records::chain_args(chain_key, None))?;
        Ok(records::head_info(reply))
    }

    fn recent_context(chain_key: Option<String>, last_n: Option<u32>) -> Result<String, Error> {
        let reply: RecentContextReply = dispatch("mentisdb_recent_context", records::chain_args(chain_key, last_n))?;
        Ok(reply.prompt)
    }

    fn set_embedding_model(model: Vec<u8>) -> Result<String, Error> {
        let db = engine().map_err(|e| to_wit(&e))?;
        if model.is_empty() {
            db.set_embedding_provider(None);
            return Ok(String::new());
        }
        let embedder = StaticEmbedder::from_bytes(&model).map_err(|e| to_wit(&ToolError::InvalidArguments { tool: "set-embedding-model".into(), message: e.to_string() }))?;
        let name = embedder.name().to_string();
        db.set_embedding_provider(Some(Arc::new(embedder)));
        Ok(name)
    }
}

impl self_test::Guest for Component {
    fn storage_conformance() -> Result<(), String> {
        let scratch = format!("{DATA_DIR}/.mentisdb-selftest-{}", hex_id());
        std::fs::create_dir(&scratch).map_err(|e| format!("cannot create scratch directory {scratch}: {e}"))?;
        mentisdb_fs_storage::self_check::run_all(std::path::Path::new(&scratch));
        std::fs::remove_dir_all(&scratch).map_err(|e| format!("the checks passed but {scratch} could not be removed: {e}"))
    }
}

fn hex_id() -> String {
    use mentisdb_core::IdSource;
    mentisdb_std_host::OsRandomIds.next_id_bytes()[..8].iter().map(|b| format!("{b:02x}")).collect()
}

