//! The daemon's integration tests, one test binary for all of them (one link
//! of the daemon's dependencies, not one per file): each module is one
//! subject, most of them driving the real `mentisdbd` and `mentisdb`
//! programs as child processes on loopback ports. Run one subject with
//! `cargo test -p mentisdb-native --test integration security::`.

mod common;

mod backup_restore;
mod chain_transfer;
mod daemon;
mod events;
mod explorer;
mod import_reference;
mod postgres;
mod proofs;
mod rust_api;
mod security;
mod setup_command;
mod shell_commands;
mod storage_crash;
mod tls;
mod tokens;
mod tool_profiles;
mod ways_in;
mod webhooks;
