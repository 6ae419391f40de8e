// Cargo resolves `[build-dependencies]` only for a package with a build
// script; this one does nothing (see Cargo.toml).
fn main() {}
