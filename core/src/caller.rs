//! Who is calling, as a host with scoped tokens names the caller: what the
//! tools that care need to know of a token (skill ownership, which chains
//! a branch search may also read, how much of a storage path to show).
//! The tokens themselves are the host's (`mentisdbd`'s `tokens` module).

/// An authenticated caller, as a host with tokens names it.
#[derive(Debug, Clone, Copy)]
pub struct Caller<'a> {
    /// The token's name (recorded on skill versions it uploads).
    pub name: &'a str,
    /// Whether the token covers every chain (`*`). Only such a token may
    /// change a daemon-wide object that already exists: add a version to a
    /// skill (a token scoped to some chains may only create new skills).
    pub all_chains: bool,
    /// Whether the token has admin scope on every chain (lets it add
    /// versions to a skill first uploaded through another token).
    pub admin: bool,
    /// Which chains the caller may read beyond the one its call names (a
    /// ranked search of a branch also searches the chains it branched from,
    /// but only those the caller may read). `None`: every chain.
    pub reads: Option<&'a dyn ChainReads>,
}

/// A chain's `storage_location` as `caller` may see it: whole for an
/// unauthenticated host (stdio, browser, WASI: the user's own process) and
/// for an admin of every chain; for any other token only the object's file
/// name, so the data directory's path (a user name, a layout) is not shown.
pub(crate) fn shown_location(caller: Option<Caller<'_>>, location: String) -> String {
    match caller {
        Some(c) if !c.admin => location.rsplit(['/', '\\']).next().unwrap_or_default().to_string(),
        _ => location,
    }
}

/// Answers whether a caller may read a chain (a host's token rule).
pub trait ChainReads: std::fmt::Debug + Sync {
    /// Whether chain `chain_key` may be read.
    fn may_read(&self, chain_key: &str) -> bool;
}
