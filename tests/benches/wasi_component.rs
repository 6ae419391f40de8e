//! Figures for the WASI component (host-wasi/README.md), measured with the
//! same wasmtime loader the tests use:
//!
//! - compile: `Component::from_file` (Cranelift, once per process);
//! - cold instantiate: a new instance over an empty preopened directory,
//!   through its first answered call (`head`, which opens the engine);
//! - appends/s through the typed `append` export and through `call`, each
//!   append synced to the temp directory's file system before it returns.
//!
//! `cargo bench -p mentisdb-tests --bench wasi_component` with
//! `MENTISDB_WASI_COMPONENT` set to the component to measure. Without
//! `--bench` (e.g. `cargo test --all-targets`) it runs a few iterations as a
//! smoke test and prints no figures.

#[path = "../tests/wasi/wasi_loader/mod.rs"]
mod wasi_loader;

use serde_json::json;
use std::time::{Duration, Instant};
use wasi_loader::{append_request, component_path, wit, PluginHost};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let (instances, appends) = if bench { (30, 2_000) } else { (2, 20) };
    let path = component_path();
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));

    let t = Instant::now();
    let host = PluginHost::load(&path).expect("compile component");
    let compile = t.elapsed();

    let mut cold = Vec::new();
    for _ in 0..instances {
        let dir = tempfile::tempdir().unwrap();
        let t = Instant::now();
        let mut p = host.instantiate(Some(dir.path())).unwrap();
        let head = p.head(None).unwrap();
        cold.push(t.elapsed());
        assert_eq!(head.thought_count, 0);
    }

    let dir = tempfile::tempdir().unwrap();
    let mut p = host.instantiate(Some(dir.path())).unwrap();
    let mut req = append_request("bench", wit::ThoughtType::Finding, "");
    req.tags = vec!["bench".into(), "wasi".into()];
    req.importance = Some(0.6);
    let t = Instant::now();
    for i in 0..appends {
        req.content = format!("Benchmark finding {i}: appends go through the typed export and are synced before they return.");
        p.append(&req).unwrap();
    }
    let typed = t.elapsed();

    let t = Instant::now();
    for i in 0..appends {
        let args = json!({"chain_key": "bench-call", "thought_type": "Finding", "importance": 0.6, "tags": ["bench", "wasi"],
            "content": format!("Benchmark finding {i}: appends go through call with JSON arguments and are synced before they return.")});
        p.call("mentisdb_append", &args).unwrap();
    }
    let via_call = t.elapsed();
    assert_eq!(p.head(Some("bench")).unwrap().thought_count, appends as u64);

    if !bench {
        println!("wasi_component bench: smoke run ok (pass --bench for figures)");
        return;
    }
    println!("component: {} ({size} bytes)", path.display());
    println!("compile (Component::from_file): {:.1} ms", compile.as_secs_f64() * 1e3);
    println!("cold instantiate + first call, median of {instances}: {:.2} ms", median(cold).as_secs_f64() * 1e3);
    println!("typed append: {appends} appends in {:.2} s = {:.0} appends/s", typed.as_secs_f64(), appends as f64 / typed.as_secs_f64());
    println!("call(mentisdb_append): {appends} appends in {:.2} s = {:.0} appends/s", via_call.as_secs_f64(), appends as f64 / via_call.as_secs_f64());
}
