//! The core's integration tests, one test binary for all of them (one link,
//! not one per file): each module is one subject, through the public API
//! and the tool dispatcher. Run one subject with
//! `cargo test -p mentisdb-core --test integration ranked::`.

#[macro_use]
mod common;

mod append_now;
mod backup;
mod chain_ops;
mod claims;
mod events;
mod facts;
mod forget;
mod group_commit;
mod host_declarations;
mod idempotent_writes;
mod integrity;
mod legacy_names;
mod presence;
mod proofs;
mod ranked;
mod read_behaviours;
mod reference_parity;
mod reply_schemas;
mod residency;
mod reviews;
mod secrets_outside_content;
mod shared_store;
mod signatures;
mod skills;
mod spec_walk;
mod sync;
mod thought_model;
mod tool_arguments;
mod tool_schemas;
mod unknown_arguments;
mod webhooks;
