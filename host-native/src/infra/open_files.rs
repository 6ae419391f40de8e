//! How many files the daemon may hold open: raised at start to what the
//! system allows, so a budget of connections ([`crate::http::serve::Limits`])
//! fits beside the chain files.

/// Raises the soft limit on open file descriptors to the hard limit (at
/// most 1,048,576; else 10,240 where the system caps it there) and returns
/// the limit in force. Off Unix, or when the
/// limit cannot be read, returns 1,024 (a common default).
pub fn raise_limit() -> u64 {
    const CEILING: u64 = 1 << 20;
    #[cfg(unix)]
    {
        use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
        let now = getrlimit(Resource::Nofile);
        let soft = now.current.unwrap_or(CEILING).min(CEILING);
        let hard = now.maximum.unwrap_or(CEILING).min(CEILING);
        // macOS refuses a soft limit above its per-process ceiling (often
        // 10,240, `OPEN_MAX`) even under an unlimited hard one.
        for want in [hard, hard.min(10_240)] {
            if want > soft && setrlimit(Resource::Nofile, Rlimit { current: Some(want), maximum: now.maximum }).is_ok() {
                return want;
            }
        }
        soft
    }
    #[cfg(not(unix))]
    {
        1024
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn the_soft_limit_is_raised_to_the_hard_one() {
        let given = super::raise_limit();
        let now = rustix::process::getrlimit(rustix::process::Resource::Nofile);
        assert_eq!(now.current.unwrap_or(u64::MAX).min(1 << 20), given);
        assert!(given >= now.maximum.unwrap_or(u64::MAX).min(1 << 20));
    }
}
