//! Build speed only: no code. See Cargo.toml for why this crate exists.
