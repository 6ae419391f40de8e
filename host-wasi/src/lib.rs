//! # mentisdb-wasi: MentisDB as a WASI Preview 2 component
//!
//! Build it with `cargo build -p mentisdb-wasi --target wasm32-wasip2`; the
//! target links a component directly (no cargo-component). The component
//! exports the WIT world `mentisdb:memory/plugin` (`wit/mentisdb.wit`):
//!
//! - `memory.call(tool, args-json) -> result<json, error>`: every tool of the
//!   MCP spec by name, straight into [`mentisdb_core::MentisDb::call`];
//! - typed `bootstrap`, `append`, `search`, `head`, `recent-context` with WIT
//!   records and enums, each a thin wrapper over the same `call`;
//! - `self-test.storage-conformance`: the core's storage conformance suite
//!   and the file-backend crash checks (`mentisdb_fs_storage::self_check`)
//!   run against the component's storage, inside the component;
//! - with `--features sync` (world `plugin-sync`), `sync.sync(url, chain-key,
//!   verifier-key, token)`: the core's offline-first sync
//!   ([`mentisdb_core::sync`]) over `wasi:http` ([`sync`]). The default
//!   build imports no network at all.
//!
//! **No tool logic lives here.** This crate holds only the WIT glue
//! ([`exports`], [`records`]), the engine's lifetime ([`engine`], with the
//! clock and ids of `mentisdb-std-host`) and the one error mapping ([`error`]).
//!
//! **Storage.** The host preopens a directory at the guest path
//! [`engine::DATA_DIR`] (`/data`); chains live there as files in the native
//! daemon's record format, so a data directory moves between `mentisdbd` and
//! the component unchanged: both use the same backend,
//! [`mentisdb_fs_storage::FsStorage`], which `std::fs` compiles onto the WASI
//! filesystem here. Every append is synced before it is acknowledged.

pub mod engine;

// The WIT glue exists only in the component: built natively, the generated
// import shims would not link. Its behaviour is tested through wasmtime
// (`tests/tests/wasi/component.rs`); storage and host adapters also natively.
#[cfg(target_arch = "wasm32")]
pub mod error;
#[cfg(target_arch = "wasm32")]
pub mod exports;
#[cfg(target_arch = "wasm32")]
pub mod proofs;
#[cfg(target_arch = "wasm32")]
pub mod records;

#[cfg(all(target_arch = "wasm32", feature = "sync"))]
pub mod sync;

#[cfg(all(target_arch = "wasm32", not(feature = "sync")))]
/// Bindings generated from `wit/` (the only code here that uses `unsafe`).
#[allow(unsafe_code, clippy::all, missing_docs)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "plugin",
        path: "wit",
    });
    use crate::exports::Component;
    export!(Component with_types_in crate::bindings);
}

#[cfg(all(target_arch = "wasm32", feature = "sync"))]
/// Bindings of the `plugin-sync` world (the plugin plus `sync`).
#[allow(unsafe_code, clippy::all, missing_docs)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "plugin-sync",
        path: "wit",
    });
    use crate::exports::Component;
    export!(Component with_types_in crate::bindings);
}

/// The WIT types, re-exported under short names for the glue modules.
#[cfg(target_arch = "wasm32")]
pub(crate) use bindings::exports::mentisdb::memory::types as wit;
