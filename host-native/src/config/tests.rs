//! The settings as flags and variables give them, and their checks.

use super::*;

#[test]
fn non_loopback_without_token_is_refused() {
    let c = Config::parse_from(["mentisdbd", "--bind-host", "0.0.0.0"]);
    let err = c.validate().unwrap_err();
    assert!(err.to_string().contains("MENTISDB_API_TOKEN"), "{err}");
    let c = Config::parse_from(["mentisdbd", "--bind-host", "0.0.0.0", "--api-token", "s3cret"]);
    assert_eq!(c.validate(), Ok(()));
    assert_eq!(Config::parse_from(["mentisdbd"]).validate(), Ok(()));
    let c = Config::parse_from(["mentisdbd", "--bind-host", "0.0.0.0", "--tokens-file", "t.toml"]);
    assert_eq!(c.validate(), Ok(()));
}

#[test]
fn the_reference_switch_reads_its_values_and_a_typo_is_an_error() {
    let on = |v: &str| Config::try_parse_from(["mentisdbd", "--bearer-token-access", v]).map(|c| c.bearer_token_access());
    for v in ["true", "1", "YES", "on"] {
        assert!(on(v).unwrap(), "{v}");
    }
    for v in ["false", "0", "no", "OFF"] {
        assert!(!on(v).unwrap(), "{v}");
    }
    assert!(on("ture").is_err(), "a typo never means off");
    assert!(!Config::parse_from(["mentisdbd"]).bearer_token_access());
    let c = Config::parse_from(["mentisdbd", "--bind-host", "0.0.0.0", "--bearer-token-access", "--dir", "/d"]);
    assert_eq!(c.validate(), Ok(()), "0.10's tokens guard a network bind");
    assert_eq!(c.reference_token_registry().unwrap(), Some(PathBuf::from("/d/bearer-tokens.json")));
}

#[test]
fn unread_variables_are_named_in_one_line() {
    let cmd = <Config as clap::CommandFactory>::command();
    let set = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(unread_env_warning(&cmd, set(&["MENTISDB_DIR", "MENTISDB_DEFAULT_CHAIN_KEY", "HOME", "MENTISDB_BEARER_TOKEN_ACCESS"])), None);
    let w = unread_env_warning(&cmd, set(&["MENTISDB_API_TOKN", "MENTISDB_DIR", "MENTISDB_FSYNC"])).unwrap();
    assert!(w.contains("MENTISDB_API_TOKN (unknown: misspelled?)") && w.contains("MENTISDB_FSYNC (a MentisDB 0.10 setting") && !w.contains("MENTISDB_DIR") && !w.contains('\n'), "{w}");
}

#[test]
fn a_network_bind_without_tls_warns() {
    let on = |args: &[&str]| Config::parse_from([&["mentisdbd"], args].concat()).cleartext_network_warning();
    assert!(on(&["--bind-host", "0.0.0.0", "--api-token", "s"]).is_some_and(|w| w.contains("MENTISDB_TLS_CERT")));
    assert_eq!(on(&["--bind-host", "0.0.0.0", "--api-token", "s", "--tls-cert", "c.pem", "--tls-key", "k.pem"]), None);
    assert_eq!(on(&[]), None);
}

#[test]
fn tls_needs_both_files() {
    let e = Config::parse_from(["mentisdbd", "--tls-cert", "c.pem"]).validate().unwrap_err();
    assert!(e.to_string().contains("MENTISDB_TLS_KEY"), "{e}");
    assert!(Config::parse_from(["mentisdbd", "--tls-key", "k.pem"]).validate().is_err());
    assert_eq!(Config::parse_from(["mentisdbd", "--tls-cert", "c.pem", "--tls-key", "k.pem"]).validate(), Ok(()));
}

#[test]
fn flags_parse() {
    let c = Config::parse_from(["mentisdbd", "--verbose", "0", "--default-storage-adapter", "jsonl", "--rest-port", "0"]);
    assert!(!c.verbose());
    assert_eq!(c.default_storage_adapter, ChainFormat::Jsonl);
    assert_eq!(c.rest_port, 0);
    assert!(Config::try_parse_from(["mentisdbd", "--verbose", "maybe"]).is_err());
    assert!(c.redact_secrets(), "redaction is on unless switched off");
    assert!(!Config::parse_from(["mentisdbd", "--redact-secrets", "false"]).redact_secrets());
    assert!(Config::parse_from(["mentisdbd", "--redact-secrets", "1"]).redact_secrets());
    assert!(Config::try_parse_from(["mentisdbd", "--redact-secrets", "maybe"]).is_err());
    assert!(Config::try_parse_from(["mentisdbd", "--default-storage-adapter", "sqlite"]).is_err());
    assert_eq!((c.dedup_threshold, c.dedup_scan_window), (None, 64), "dedup is off by default");
    let d = Config::parse_from(["mentisdbd", "--dedup-threshold", "0.85", "--dedup-scan-window", "16"]);
    assert_eq!((d.dedup_threshold, d.dedup_scan_window), (Some(0.85), 16));
    for bad in [["--dedup-threshold", "1.5"], ["--dedup-threshold", "NaN"], ["--dedup-scan-window", "0"]] {
        assert!(Config::try_parse_from([&["mentisdbd"], &bad[..]].concat()).is_err(), "{bad:?}");
    }
}

#[test]
fn the_explorer_is_on_by_default_only_on_loopback() {
    let explorer = |args: &[&str]| Config::parse_from([&["mentisdbd"], args].concat()).explorer();
    assert!(explorer(&[]));
    assert!(!explorer(&["--explorer", "off"]));
    assert!(!explorer(&["--bind-host", "0.0.0.0", "--api-token", "s"]));
    assert!(explorer(&["--bind-host", "0.0.0.0", "--api-token", "s", "--explorer", "ON"]));
    assert!(Config::try_parse_from(["mentisdbd", "--explorer", "maybe"]).is_err());
}

#[test]
fn storage_url_is_postgres_and_never_shown_with_its_password() {
    assert_eq!(Config::parse_from(["mentisdbd"]).storage_url, None, "file storage by default");
    let c = Config::parse_from(["mentisdbd", "--storage-url", "postgres://ada:hunter2@db.internal:5433/memory?sslmode=disable"]);
    let url = c.storage_url.clone().unwrap();
    assert_eq!(url.secret(), "postgres://ada:hunter2@db.internal:5433/memory?sslmode=disable");
    assert_eq!(url.to_string(), "postgres://db.internal:5433/memory");
    assert!(!format!("{c:?}").contains("hunter2"));
    assert_eq!(c.validate(), Ok(()));
    assert_eq!(Config::parse_from(["mentisdbd", "--storage-url", "postgresql://h/db"]).validate(), Ok(()));
    for bad in ["mysql://u:hunter2@h/db", "/var/lib/mentisdb", "sqlite:memory.db"] {
        let c = Config::parse_from(["mentisdbd", "--storage-url", bad]);
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("must be a postgres:// or postgresql:// URL") && !e.contains("hunter2") && !e.contains('\n'), "{e}");
        assert!(!format!("{c:?}").contains("hunter2"));
    }
}
