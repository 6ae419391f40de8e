//! The WASI component inside wasmtime, one test binary (one link of
//! wasmtime, not two): `component` runs the default build (spec walk,
//! typed exports, storage conformance inside it, instances sharing a
//! directory, chains moving to and from the core) and `sync` the
//! `plugin-sync` build against the real `mentisdbd` over wasi:http.
//! `scripts/stages/50-wasi.sh` builds both components and runs
//! `cargo test -p mentisdb-tests --test wasi`; one part alone:
//! `cargo test -p mentisdb-tests --test wasi sync::`.

mod component;
mod sync;
mod wasi_loader;
