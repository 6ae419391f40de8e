//! `mentisdbd`: see `mentisdbd --help` and README.md.

fn main() -> std::process::ExitCode {
    mentisdb_native::commands::run::main("mentisdbd")
}
