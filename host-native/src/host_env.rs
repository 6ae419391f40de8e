//! The clock, id source and threads handed to the core: `mentisdb-std-host`'s,
//! the same ones the WASI component and the in-process `mentisdb` API use.

pub use mentisdb_std_host::{OsRandomIds, ScopedThreads, SystemClock};
