//! `mentisdbd`: see `mentisdbd --help` and README.md.

fn main() -> std::process::ExitCode {
    mentisdb_native::run::main("mentisdbd")
}
