//! # mentisdb-wasm: MentisDB inside a browser page
//!
//! A wasm-bindgen build of the core for browser agents. It exports one
//! class, `MentisDb` ([`mentis_db`]), over the core's one dispatcher
//! (`MentisDb::call`): no tool logic lives here. What this crate adds is
//! only what a browser has to supply:
//!
//! - storage: [`image::ImageStorage`], an in-memory image of the objects,
//!   persisted to IndexedDB ([`idb`]) at the core's durability points;
//! - time from `Date.now()` ([`clock::DateClock`]) and ids from
//!   `crypto.getRandomValues` ([`ids::CryptoIds`]);
//! - plain-object JSON glue ([`js_json`]), TypeScript declarations
//!   ([`types`]) and the one error mapping ([`error`]);
//! - the proof verifiers `verifyInclusion`, `verifyConsistency` and
//!   `verifyCheckpoint` ([`verify`]), to check a daemon's proofs;
//! - `db.sync(url, chainKey, { verifierKey, token })` ([`sync`]): `fetch`
//!   for the core's offline-first sync with a daemon.
//!
//! ```js
//! import init, { MentisDb } from "./pkg/mentisdb_wasm.js";
//! await init();
//! const db = await MentisDb.open("my-agent");
//! await db.append({ thought_type: "Decision", content: "Use Rust." });
//! db.search({ text: "rust" }).thoughts[0].content; // "Use Rust."
//! ```

// The storage image is plain Rust (unit-tested natively too); everything
// that talks to the browser exists only on wasm32.
pub mod image;
pub mod types;

#[cfg(target_arch = "wasm32")]
pub mod clock;
#[cfg(target_arch = "wasm32")]
mod error;
#[cfg(target_arch = "wasm32")]
mod idb;
#[cfg(target_arch = "wasm32")]
pub mod ids;
#[cfg(target_arch = "wasm32")]
mod js_json;
#[cfg(target_arch = "wasm32")]
pub mod mentis_db;
#[cfg(target_arch = "wasm32")]
mod sync;
#[cfg(target_arch = "wasm32")]
pub mod verify;

#[cfg(target_arch = "wasm32")]
pub use mentis_db::MentisDbHandle;
