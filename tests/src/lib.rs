//! Cross-host conformance and real-client tests.

pub mod chain_files;
pub mod spec_walk;
