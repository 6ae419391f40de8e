//! The component's exports: `memory` (generic `call` plus the typed
//! everyday operations) and `self-test`. Every function goes through
//! [`mentisdb_core::MentisDb::call`]; errors leave through [`crate::error`].

use crate::bindings::exports::mentisdb::memory::{memory, self_test};
use crate::engine::{engine, DATA_DIR};
use crate::error::to_wit;
use crate::records;
use crate::wit::{AppendRequest, BootstrapRequest, BootstrapResult, Error, HeadInfo, SearchRequest, Thought};
use serde_json::Value;

/// The type the bindings export.
pub struct Component;

/// Runs one tool on the instance's engine.
fn dispatch(tool: &str, args: Value) -> Result<Value, Error> {
    engine().and_then(|db| db.call(tool, args)).map_err(|e| to_wit(&e))
}

fn thoughts(result: &Value, tool: &str, field: &str) -> Result<Vec<Thought>, Error> {
    let list: Vec<mentisdb_core::Thought> = records::field(result, tool, field)?;
    Ok(list.into_iter().map(records::thought).collect())
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
        let result = dispatch("mentisdb_bootstrap", records::bootstrap_args(request))?;
        records::bootstrap_result(&result)
    }

    fn append(request: AppendRequest) -> Result<Thought, Error> {
        const TOOL: &str = "mentisdb_append";
        let result = dispatch(TOOL, records::append_args(request))?;
        let t: mentisdb_core::Thought = records::field(&result, TOOL, "thought")?;
        Ok(records::thought(t))
    }

    fn search(request: SearchRequest) -> Result<Vec<Thought>, Error> {
        const TOOL: &str = "mentisdb_search";
        let result = dispatch(TOOL, records::search_args(request))?;
        thoughts(&result, TOOL, "thoughts")
    }

    fn head(chain_key: Option<String>) -> Result<HeadInfo, Error> {
        let result = dispatch("mentisdb_head", records::chain_args(chain_key, None))?;
        records::head_info(&result)
    }

    fn recent_context(chain_key: Option<String>, last_n: Option<u32>) -> Result<String, Error> {
        const TOOL: &str = "mentisdb_recent_context";
        let result = dispatch(TOOL, records::chain_args(chain_key, last_n))?;
        records::field(&result, TOOL, "prompt")
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
    crate::host_env::RandomIds.next_id_bytes()[..8].iter().map(|b| format!("{b:02x}")).collect()
}

