//! `mentisdb`: MentisDB 0.10's name for the same program (`mentisdb --help`).

fn main() -> std::process::ExitCode {
    mentisdb_native::commands::run::main("mentisdb")
}
