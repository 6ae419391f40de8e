//! WASI component host (see issue 6).
