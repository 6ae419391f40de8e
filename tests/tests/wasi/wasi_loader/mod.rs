//! A host that embeds the MentisDB component with wasmtime: the loader of
//! the WASI tests and bench, and the README's "Load as a plugin" example.
//!
//! The component file comes from `MENTISDB_WASI_COMPONENT`, or else the
//! debug build in the target directory
//! (`cargo build -p mentisdb-wasi --target wasm32-wasip2`).

#![allow(dead_code)]

use mentisdb_tests::spec_walk::CallError;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Config, Engine, OptLevel, Store};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

wasmtime::component::bindgen!({ world: "plugin", path: "../host-wasi/wit" });

pub use exports::mentisdb::memory::types as wit;

/// Where the component is: `MENTISDB_WASI_COMPONENT`, else the debug build.
pub fn component_path() -> PathBuf {
    if let Some(p) = std::env::var_os("MENTISDB_WASI_COMPONENT") {
        return PathBuf::from(p);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join("wasm32-wasip2/debug/mentisdb_wasi.wasm")
}

/// Per-instance host state: the WASI context and its resource table.
pub struct State {
    ctx: WasiCtx,
    table: ResourceTable,
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.ctx, table: &mut self.table }
    }
}

/// A compiled component and a linker with WASI Preview 2: compile once,
/// instantiate many times.
pub struct PluginHost {
    engine: Engine,
    component: Component,
    linker: Linker<State>,
}

impl PluginHost {
    /// Compiles the component at `path` with Cranelift's default (`speed`).
    pub fn load(path: &Path) -> wasmtime::Result<PluginHost> {
        Self::load_with(path, OptLevel::Speed)
    }

    /// Compiles the component at `path` at `opt_level`.
    pub fn load_with(path: &Path, opt_level: OptLevel) -> wasmtime::Result<PluginHost> {
        let mut config = Config::new();
        config.cranelift_opt_level(opt_level);
        let engine = Engine::new(&config)?;
        let component = Component::from_file(&engine, path)?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
        Ok(PluginHost { engine, component, linker })
    }

    /// The process-wide host for [`component_path`], compiled on first use
    /// (without Cranelift optimisations: the tests check behaviour, not speed).
    pub fn shared() -> &'static PluginHost {
        static HOST: OnceLock<PluginHost> = OnceLock::new();
        HOST.get_or_init(|| {
            let path = component_path();
            assert!(
                path.exists(),
                "no component at {}: run `cargo build -p mentisdb-wasi --target wasm32-wasip2` or set MENTISDB_WASI_COMPONENT",
                path.display()
            );
            // Tests run a debug-built Cranelift: skip its optimisations.
            PluginHost::load_with(&path, OptLevel::None).unwrap_or_else(|e| panic!("loading {}: {e:?}", path.display()))
        })
    }

    /// Names of the component's imports and exports, as its type declares them.
    pub fn interface_names(&self) -> (Vec<String>, Vec<String>) {
        let ty = self.component.component_type();
        let imports = ty.imports(&self.engine).map(|(n, _)| n.to_string()).collect();
        let exports = ty.exports(&self.engine).map(|(n, _)| n.to_string()).collect();
        (imports, exports)
    }

    /// A fresh instance whose `/data` is the host directory `data_dir`
    /// (`None`: no preopen at all).
    pub fn instantiate(&self, data_dir: Option<&Path>) -> wasmtime::Result<PluginInstance> {
        let mut wasi = WasiCtxBuilder::new();
        wasi.inherit_stderr();
        if let Some(dir) = data_dir {
            wasi.preopened_dir(dir, "/data", FsPerms::ReadWrite)?;
        }
        let mut store = Store::new(&self.engine, State { ctx: wasi.build(), table: ResourceTable::new() });
        let plugin = Plugin::instantiate(&mut store, &self.component, &self.linker)?;
        Ok(PluginInstance { store, plugin })
    }
}

/// One instance of the component with its store.
pub struct PluginInstance {
    store: Store<State>,
    plugin: Plugin,
}

/// Traps are test failures: the component must return errors as records.
fn no_trap<T>(r: wasmtime::Result<T>) -> T {
    r.unwrap_or_else(|e| panic!("the component trapped: {e:?}"))
}

impl PluginInstance {
    /// `memory.call` with JSON in and out.
    pub fn call(&mut self, tool: &str, args: &Value) -> Result<Value, wit::Error> {
        let out = no_trap(self.plugin.mentisdb_memory_memory().call_call(&mut self.store, tool, &args.to_string()));
        out.map(|s| serde_json::from_str(&s).expect("call returns JSON"))
    }

    /// `memory.call` with the arguments as raw text.
    pub fn call_raw(&mut self, tool: &str, args: &str) -> Result<String, wit::Error> {
        no_trap(self.plugin.mentisdb_memory_memory().call_call(&mut self.store, tool, args))
    }

    /// `memory.call` for [`mentisdb_tests::spec_walk::run`].
    pub fn call_walk(&mut self, tool: &str, args: Value) -> Result<Value, CallError> {
        self.call(tool, &args).map_err(|e| CallError { kind: e.code, message: e.message })
    }

    pub fn list_tools(&mut self) -> Value {
        let s = no_trap(self.plugin.mentisdb_memory_memory().call_list_tools(&mut self.store));
        serde_json::from_str(&s).expect("list-tools returns JSON")
    }

    pub fn bootstrap(&mut self, r: &wit::BootstrapRequest) -> Result<wit::BootstrapResult, wit::Error> {
        no_trap(self.plugin.mentisdb_memory_memory().call_bootstrap(&mut self.store, r))
    }

    pub fn append(&mut self, r: &wit::AppendRequest) -> Result<wit::Thought, wit::Error> {
        no_trap(self.plugin.mentisdb_memory_memory().call_append(&mut self.store, r))
    }

    pub fn search(&mut self, r: &wit::SearchRequest) -> Result<Vec<wit::Thought>, wit::Error> {
        no_trap(self.plugin.mentisdb_memory_memory().call_search(&mut self.store, r))
    }

    pub fn head(&mut self, chain_key: Option<&str>) -> Result<wit::HeadInfo, wit::Error> {
        no_trap(self.plugin.mentisdb_memory_memory().call_head(&mut self.store, chain_key))
    }

    pub fn recent_context(&mut self, chain_key: Option<&str>, last_n: Option<u32>) -> Result<String, wit::Error> {
        no_trap(self.plugin.mentisdb_memory_memory().call_recent_context(&mut self.store, chain_key, last_n))
    }

    /// `memory.set-embedding-model`.
    pub fn set_embedding_model(&mut self, model: &[u8]) -> Result<String, wit::Error> {
        no_trap(self.plugin.mentisdb_memory_memory().call_set_embedding_model(&mut self.store, model))
    }

    /// `proofs.verify-inclusion`.
    pub fn verify_inclusion(&mut self, leaf: &str, index: u64, size: u64, hashes: &[String], root: &str) -> Result<bool, String> {
        no_trap(self.plugin.mentisdb_memory_proofs().call_verify_inclusion(&mut self.store, leaf, index, size, hashes, root))
    }

    /// `proofs.verify-consistency`.
    pub fn verify_consistency(&mut self, first: u64, second: u64, hashes: &[String], first_root: &str, second_root: &str) -> Result<bool, String> {
        no_trap(self.plugin.mentisdb_memory_proofs().call_verify_consistency(&mut self.store, first, second, hashes, first_root, second_root))
    }

    /// `proofs.verify-checkpoint`: `(origin, tree size, root hex)`.
    pub fn verify_checkpoint(&mut self, note: &str, verifier_key: &str) -> Result<(String, u64, String), String> {
        no_trap(self.plugin.mentisdb_memory_proofs().call_verify_checkpoint(&mut self.store, note, verifier_key)).map(|h| (h.origin, h.tree_size, h.root))
    }

    /// `self-test.storage-conformance` (a broken contract traps: `Err`).
    pub fn storage_conformance(&mut self) -> wasmtime::Result<Result<(), String>> {
        self.plugin.mentisdb_memory_self_test().call_storage_conformance(&mut self.store)
    }
}

/// An append request with only the required fields set.
pub fn append_request(chain_key: &str, thought_type: wit::ThoughtType, content: &str) -> wit::AppendRequest {
    wit::AppendRequest {
        chain_key: Some(chain_key.to_string()),
        agent_id: None,
        agent_name: None,
        agent_owner: None,
        thought_type,
        role: None,
        content: content.to_string(),
        importance: None,
        confidence: None,
        tags: Vec::new(),
        concepts: Vec::new(),
        refs: Vec::new(),
        relations: Vec::new(),
        session_id: None,
        thought_id: None,
        signing_key_id: None,
        thought_signature: None,
        entity_type: None,
        scope: None,
        fencing: None,
    }
}

/// A search request with no filters.
pub fn search_request(chain_key: &str) -> wit::SearchRequest {
    wit::SearchRequest {
        chain_key: Some(chain_key.to_string()),
        text: None,
        thought_types: Vec::new(),
        roles: Vec::new(),
        tags_any: Vec::new(),
        concepts_any: Vec::new(),
        agent_ids: Vec::new(),
        agent_names: Vec::new(),
        agent_owners: Vec::new(),
        min_importance: None,
        min_confidence: None,
        since: None,
        until: None,
        limit: None,
        entity_type: None,
        scope: None,
    }
}
