//! `mentisdbd`: see `mentisdbd --help` and README.md.

/// jemalloc instead of the system allocator: the daemon holds many small
/// long-lived allocations (thoughts, index entries) between short-lived
/// request buffers, which fragment glibc's heap; with jemalloc a chain of
/// 100k+ appended thoughts takes about a quarter less resident memory
/// (docs/performance.md, the memory row). Not on MSVC, which jemalloc
/// does not support.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    mentisdb_native::commands::run::main("mentisdbd")
}
