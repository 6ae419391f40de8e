//! The `plugin-sync` component (`cargo build -p mentisdb-wasi --target
//! wasm32-wasip2 --features sync`) inside wasmtime, with wasi:http granted,
//! syncing with the real `mentisdbd`: writes made while the daemon is down
//! land after the daemon's once it is back, both sides verify to the same
//! head, and a daemon whose chain file was rewritten is refused with the two
//! checkpoints that prove the fork.
//!
//! The component comes from `MENTISDB_WASI_SYNC_COMPONENT`, else
//! `target/wasm32-wasip2/debug/mentisdb_wasi_sync.wasm` (stage 50 copies the
//! feature build there).

use mentisdb_tests::daemon::{client, data_dir, head, ok, Daemon};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Config, Engine, OptLevel, Store};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

wasmtime::component::bindgen!({ world: "plugin-sync", path: "../host-wasi/wit" });

use exports::mentisdb::memory::sync::{SyncFailure, SyncReport};

const CHAIN: &str = "field-notes";

fn component_path() -> PathBuf {
    if let Some(p) = std::env::var_os("MENTISDB_WASI_SYNC_COMPONENT") {
        return PathBuf::from(p);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join("wasm32-wasip2/debug/mentisdb_wasi_sync.wasm")
}

struct State {
    ctx: WasiCtx,
    http: WasiHttpCtx,
    table: ResourceTable,
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.ctx, table: &mut self.table }
    }
}

impl WasiHttpView for State {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView { ctx: &mut self.http, table: &mut self.table, hooks: Default::default() }
    }
}

/// One instance of the sync component over the host directory `dir`.
struct Replica {
    store: Store<State>,
    plugin: PluginSync,
}

/// The sync component compiled once for the test binary (a debug-built
/// Cranelift takes most of a minute per compile), with its linker.
struct Compiled {
    engine: Engine,
    component: Component,
    linker: Linker<State>,
}

fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let path = component_path();
        assert!(path.exists(), "no sync component at {}: build it with `cargo build -p mentisdb-wasi --target wasm32-wasip2 --features sync` and copy it there", path.display());
        let mut config = Config::new();
        config.cranelift_opt_level(OptLevel::None);
        let engine = Engine::new(&config).unwrap();
        let component = Component::from_file(&engine, &path).unwrap();
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).unwrap();
        wasmtime_wasi_http::p2::add_only_http_to_linker_sync(&mut linker).unwrap();
        Compiled { engine, component, linker }
    })
}

impl Replica {
    /// A fresh instance (its own store and memory) of the compiled component.
    fn open(dir: &Path) -> Replica {
        let Compiled { engine, component, linker } = compiled();
        let mut wasi = WasiCtxBuilder::new();
        wasi.inherit_stderr();
        wasi.preopened_dir(dir, "/data", FsPerms::ReadWrite).unwrap();
        let mut store = Store::new(engine, State { ctx: wasi.build(), http: WasiHttpCtx::new(), table: ResourceTable::new() });
        let plugin = PluginSync::instantiate(&mut store, component, linker).unwrap();
        Replica { store, plugin }
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        let out = self.plugin.mentisdb_memory_memory().call_call(&mut self.store, tool, &args.to_string()).expect("no trap");
        serde_json::from_str(&out.unwrap_or_else(|e| panic!("{tool}: {e:?}"))).unwrap()
    }

    fn sync(&mut self, d: &Daemon, verifier: &str) -> Result<SyncReport, SyncFailure> {
        self.plugin.mentisdb_memory_sync().call_sync(&mut self.store, &d.rest, CHAIN, verifier, None).expect("no trap")
    }

    fn head(&mut self) -> (Value, Value) {
        let h = self.call("mentisdb_head", json!({"chain_key": CHAIN}));
        assert_eq!(h["integrity_ok"], true);
        (h["head_hash"].clone(), h["thought_count"].clone())
    }

    fn contents(&mut self) -> Vec<String> {
        let found = self.call("mentisdb_search", json!({"chain_key": CHAIN}));
        found["thoughts"].as_array().unwrap().iter().map(|t| t["content"].as_str().unwrap().to_string()).collect()
    }
}

fn daemon_append(d: &Daemon, content: &str) {
    ok(&client(), d, "/v1/thoughts", json!({"chain_key": CHAIN, "agent_id": "daemon-agent", "thought_type": "Decision", "content": content}));
}

#[test]
fn the_component_writes_offline_syncs_after_a_restart_and_refuses_a_rewritten_daemon() {
    let (_root, dir) = data_dir();
    let replica_dir = tempfile::tempdir().unwrap();
    let c = client();
    let d = Daemon::start(&dir, &[], &[]);
    let verifier = c.get(format!("{}/v1/identity", d.rest)).send().unwrap().json::<Value>().unwrap()["verifier_key"].as_str().unwrap().to_string();
    for content in ["survey the north field", "soil samples taken"] {
        daemon_append(&d, content);
    }
    let mut r = Replica::open(replica_dir.path());
    let first = r.sync(&d, &verifier).unwrap();
    assert_eq!((first.pulled, first.tree_size), (2, 2));
    assert_eq!(r.head(), head(&c, &d, CHAIN));

    // The daemon goes down; the component keeps writing.
    let rest = d.rest.clone();
    d.kill();
    r.call("mentisdb_append", json!({"chain_key": CHAIN, "thought_type": "Finding", "content": "offline: drainage is blocked"}));
    let down = r.plugin.mentisdb_memory_sync().call_sync(&mut r.store, &rest, CHAIN, &verifier, None).expect("no trap").unwrap_err();
    assert_eq!(down.kind, "unavailable", "{down:?}");

    let d = Daemon::start(&dir, &[], &[]);
    daemon_append(&d, "daemon: order new pipes");
    let report = r.sync(&d, &verifier).unwrap();
    assert_eq!((report.pushed, report.pulled, report.tree_size), (1, 2, 4));
    assert_eq!(r.head(), head(&c, &d, CHAIN));
    assert_eq!(r.contents(), ["survey the north field", "soil samples taken", "daemon: order new pipes", "offline: drainage is blocked"]);
    // A fresh instance over the same directory reads the synced chain and its state.
    drop(r);
    let mut r = Replica::open(replica_dir.path());
    assert_eq!(r.sync(&d, &verifier).unwrap().pulled, 0);
    let synced = r.head();

    // Rewrite the daemon's history: cut its file after the second record,
    // then append others (a chain that opens and verifies on its own).
    let records = |from: Value| {
        use base64::Engine as _;
        let page = ok(&c, &d, "/v1/chains/records", json!({"chain_key": CHAIN, "to": from}));
        base64::engine::general_purpose::STANDARD.decode(page["records_base64"].as_str().unwrap()).unwrap().len() as u64
    };
    let (all, two) = (records(json!(4)), records(json!(2)));
    d.kill();
    let file = std::fs::read_dir(dir.join("chains")).unwrap().map(|e| e.unwrap().path()).find(|p| p.extension().is_some_and(|x| x == "mdb")).unwrap();
    let size = std::fs::metadata(&file).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&file).unwrap().set_len(size - all + two).unwrap();
    let d = Daemon::start(&dir, &[], &[]);
    for content in ["rewritten a", "rewritten b", "rewritten c"] {
        daemon_append(&d, content);
    }
    let fork = r.sync(&d, &verifier).unwrap_err();
    assert_eq!(fork.kind, "fork", "{fork:?}");
    let (accepted, offered) = (fork.accepted.unwrap(), fork.offered.unwrap());
    let heads: Vec<u64> = [&accepted, &offered].iter().map(|note| r.plugin.mentisdb_memory_proofs().call_verify_checkpoint(&mut r.store, note, &verifier).unwrap().unwrap().tree_size).collect();
    assert_eq!(heads, [4, 5], "both checkpoints verify with the daemon's key");
    assert_eq!(r.head(), synced, "nothing local changed");
}
