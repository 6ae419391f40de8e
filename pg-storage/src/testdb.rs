//! Fresh databases for tests: the backend's own tests and the daemon's
//! tests on PostgreSQL each work in an empty database of their own.

use postgres::NoTls;
use std::sync::atomic::{AtomicU32, Ordering};

static CREATED: AtomicU32 = AtomicU32::new(0);

/// The admin URL tests use (`MENTISDB_TEST_PG_URL`, e.g.
/// `postgres://mentisdb@127.0.0.1:54329/postgres`), or `None` when unset.
pub fn admin_url() -> Option<String> {
    std::env::var("MENTISDB_TEST_PG_URL").ok().filter(|u| !u.trim().is_empty())
}

/// Creates an empty database named after `label`, this process and a
/// counter, and returns `admin_url` with its database replaced by the new one.
pub fn fresh_database(admin_url: &str, label: &str) -> Result<String, String> {
    let label: String = label.chars().filter(|c| c.is_ascii_alphanumeric()).take(20).collect::<String>().to_ascii_lowercase();
    let name = format!("mentisdb_t_{label}_{}_{}", std::process::id(), CREATED.fetch_add(1, Ordering::Relaxed));
    let mut admin = postgres::Client::connect(admin_url, NoTls).map_err(|e| format!("cannot connect to {}: {e}", redact(admin_url)))?;
    admin.batch_execute(&format!("CREATE DATABASE {name}")).map_err(|e| format!("CREATE DATABASE {name}: {e}"))?;
    Ok(with_database(admin_url, &name))
}

/// `url` with its database (the path after the authority) replaced by `db`.
pub fn with_database(url: &str, db: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("postgres", url));
    let (authority, tail) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, ""),
    };
    let query = tail.find('?').map(|i| &tail[i..]).unwrap_or("");
    format!("{scheme}://{authority}/{db}{query}")
}

/// `url` without its password, for messages.
pub fn redact(url: &str) -> String {
    match (url.split_once("://"), url.rfind('@')) {
        (Some((scheme, rest)), Some(_)) => {
            let (userinfo, host) = rest.rsplit_once('@').unwrap_or(("", rest));
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{scheme}://{user}@{host}")
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_rewritten_and_redacted() {
        assert_eq!(with_database("postgres://u@h:1/postgres", "x"), "postgres://u@h:1/x");
        assert_eq!(with_database("postgresql://u@h:1/postgres?sslmode=disable", "x"), "postgresql://u@h:1/x?sslmode=disable");
        assert_eq!(with_database("postgres://u@h:1", "x"), "postgres://u@h:1/x");
        assert_eq!(redact("postgres://u:secret@h:1/db"), "postgres://u@h:1/db");
        assert!(!redact("postgres://u:p%40ss@h/db").contains("p%40ss"));
    }
}
