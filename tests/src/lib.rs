//! Cross-host conformance and real-client tests.

pub mod spec_walk;
