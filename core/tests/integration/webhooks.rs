//! The webhook registry of the core: registration needs a host that
//! delivers (its URL check decides), a new webhook starts at each chain's
//! current length, cursors and registrations survive a reopen, and the
//! secret is shown once and never listed.

use crate::common;

use common::{err, fresh, ok, reopen};
use mentisdb_core::webhooks::WebhookTargets;
use mentisdb_core::ErrorKind;
use serde_json::json;
use std::sync::Arc;

struct HttpOnly;

impl WebhookTargets for HttpOnly {
    fn check_url(&self, url: &str) -> Result<(), String> {
        url.starts_with("http://").then_some(()).ok_or_else(|| format!("refused {url}"))
    }
}

#[test]
fn a_host_without_delivery_refuses_registration_as_unavailable() {
    let (db, _) = fresh();
    let e = err(&db, "mentisdb_register_webhook", json!({"url": "http://example.com/hook"}));
    assert_eq!(e.kind(), ErrorKind::Unavailable, "{e}");
}

#[test]
fn registrations_start_at_each_chains_length_and_survive_a_reopen() {
    let (db, storage) = fresh();
    db.webhooks().set_targets(Some(Arc::new(HttpOnly)));
    for n in 0..3 {
        ok(&db, "mentisdb_append", json!({"chain_key": "busy", "thought_type": "Idea", "content": format!("before {n}")}));
    }
    let e = err(&db, "mentisdb_register_webhook", json!({"url": "ftp://example.com/x"}));
    assert_eq!((e.kind(), e.to_string().contains("refused ftp://")), (ErrorKind::InvalidArguments, true), "{e}");
    assert_eq!(err(&db, "mentisdb_register_webhook", json!({"url": "http://e.com", "secret": "short"})).kind(), ErrorKind::InvalidArguments);

    let made = ok(&db, "mentisdb_register_webhook", json!({"url": "http://example.com/hook", "thought_type_filter": ["Decision"], "chain_key_filter": "busy"}));
    let secret = made["secret"].as_str().unwrap();
    assert_eq!(secret.len(), 64, "a generated secret: {made}");
    let id = made["webhook"]["id"].as_str().unwrap().to_string();
    assert_eq!(made["webhook"]["thought_type_filter"], json!(["Decision"]));
    let chosen = ok(&db, "mentisdb_register_webhook", json!({"url": "http://example.com/other", "secret": "a secret of my own choosing"}));
    assert_eq!(chosen["secret"], "a secret of my own choosing");

    let targets = db.webhooks().targets();
    assert_eq!(targets[0].cursors.get("busy"), Some(&3), "only later appends are delivered");
    assert_eq!(targets[0].secret, secret);

    db.webhooks().advance(db.storage(), &id, "busy", 5, Some("2026-11-25T12:00:00.000Z".into())).unwrap();
    let db = reopen(storage);
    let listed = ok(&db, "mentisdb_list_webhooks", json!({}));
    assert_eq!(listed["webhooks"].as_array().unwrap().len(), 2);
    assert_eq!(listed["webhooks"][0]["delivered"], 1);
    assert!(!listed.to_string().contains(secret) && !listed.to_string().contains("my own choosing"), "secrets are never listed: {listed}");
    assert_eq!(db.webhooks().targets()[0].cursors.get("busy"), Some(&5), "the cursor is durable");

    assert_eq!(ok(&db, "mentisdb_delete_webhook", json!({"id": id})), json!({"deleted": true}));
    assert_eq!(ok(&db, "mentisdb_delete_webhook", json!({"id": id})), json!({"deleted": false}));
    assert_eq!(ok(&db, "mentisdb_list_webhooks", json!({}))["webhooks"].as_array().unwrap().len(), 1);
}
