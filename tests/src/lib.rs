//! Cross-host conformance and real-client tests.
