//! Webhooks on the real daemon against a real HTTP receiver on loopback:
//! signed deliveries in order, retried with backoff while the receiver
//! fails, filtered by type, and not lost when the daemon is killed with a
//! delivery pending; internal targets are refused unless allowed.

use crate::common;
use axum::http::StatusCode;
use common::receiver::{delivered_contents, start_receiver, wait_for, Receiver, Shared};
use common::{client, Daemon};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn post_json(d: &Daemon, path: &str, body: Value) -> (StatusCode, Value) {
    let r = client().post(format!("{}{path}", d.rest)).json(&body).send().unwrap();
    (StatusCode::from_u16(r.status().as_u16()).unwrap(), r.json().unwrap())
}

fn append(d: &Daemon, kind: &str, content: &str) {
    let (status, body) = post_json(d, "/v1/thoughts", json!({"chain_key": "team", "thought_type": kind, "content": content}));
    assert_eq!(status, StatusCode::OK, "{body}");
}

const SECRET: &str = "a receiver's shared secret";
const ENV: [(&str, &str); 3] = [("MENTISDB_WEBHOOK_ALLOWED_CIDRS", "127.0.0.1"), ("MENTISDB_WEBHOOK_RETRY_BASE_MS", "50"), ("MENTISDB_WEBHOOK_RETRY_MAX_SECS", "1")];

#[test]
fn deliveries_are_signed_ordered_retried_and_survive_a_killed_daemon() {
    let shared: Shared = Arc::new(Mutex::new(Receiver { failing: 2, ..Default::default() }));
    let url = start_receiver(shared.clone());
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::start(dir.path(), &ENV, &[]);
    append(&d, "Decision", "before the webhook: never delivered");

    let (status, made) = post_json(&d, "/v1/webhooks", json!({"url": url, "thought_type_filter": ["Decision"], "secret": SECRET}));
    assert_eq!(status, StatusCode::OK, "{made}");
    let id = made["webhook"]["id"].as_str().unwrap().to_string();
    append(&d, "Idea", "filtered out");
    append(&d, "Decision", "d1");
    append(&d, "Decision", "d2");

    // The first two attempts fail (500); the same delivery is retried, then both arrive in order.
    let got = wait_for(&shared, "two deliveries", |g| delivered_contents(g).len() == 2);
    assert_eq!(delivered_contents(&got), ["d1", "d2"]);
    assert_eq!(got.iter().map(|r| r.answered).collect::<Vec<_>>(), [500, 500, 200, 200]);
    assert!(got[..3].iter().all(|r| r.delivery == got[0].delivery), "a retry keeps its delivery id: {got:?}");
    assert_eq!(got[0].delivery, format!("{id}:2:team"));
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, SECRET.as_bytes());
    for r in &got {
        let hex_sig = r.signature.strip_prefix("sha256=").expect("sha256= prefix");
        ring::hmac::verify(&key, &r.body, &hex::decode(hex_sig).unwrap()).expect("the signature is HMAC-SHA256 of the body with the secret");
    }
    let body: Value = serde_json::from_slice(&got[3].body).unwrap();
    assert_eq!((body["event"].as_str(), body["chain_key"].as_str(), body["thought"]["index"].as_u64()), (Some("thought.appended"), Some("team"), Some(3)));

    let list = client().get(format!("{}/v1/webhooks", d.rest)).send().unwrap().json::<Value>().unwrap();
    assert_eq!(list["webhooks"][0]["delivered"], 2, "{list}");
    assert!(!list.to_string().contains(SECRET), "the secret is never listed");

    // The receiver goes down with d3 pending; the daemon is killed mid-retry.
    shared.lock().unwrap().down = true;
    append(&d, "Decision", "d3");
    wait_for(&shared, "a failed attempt at d3", |g| g.iter().any(|r| r.answered == 500 && r.body.windows(2).any(|w| w == b"d3")));
    d.kill();
    shared.lock().unwrap().down = false;
    let d = Daemon::start(dir.path(), &ENV, &[]);
    let got = wait_for(&shared, "d3 after the restart", |g| delivered_contents(g).len() == 3);
    assert_eq!(delivered_contents(&got), ["d1", "d2", "d3"], "d3 was not lost, d1 and d2 not sent again");

    // A review decision (a Decision thought) carries its coordination event.
    let (_, review) = post_json(&d, "/v1/reviews", json!({"chain_key": "team", "subject": "ship it", "agent_id": "ada"}));
    let (status, decided) = post_json(&d, "/v1/reviews/decide", json!({"chain_key": "team", "review_id": review["review_id"], "decision": "approved", "agent_id": "bob"}));
    assert_eq!(status, StatusCode::OK, "{decided}");
    let got = wait_for(&shared, "the review decision", |g| g.iter().filter(|r| r.answered == 200).count() == 4);
    let body: Value = serde_json::from_slice(&got.iter().rfind(|r| r.answered == 200).unwrap().body).unwrap();
    assert_eq!((body["event"].as_str(), body["coordination"]["event"].as_str(), body["coordination"]["data"]["decision"].as_str()), (Some("thought.appended"), Some("review_decided"), Some("approved")), "{body}");
    assert_eq!(body["coordination"]["data"]["review_id"], review["review_id"]);

    // Deleted: nothing more is sent.
    let r = client().delete(format!("{}/v1/webhooks/{id}", d.rest)).send().unwrap();
    assert_eq!(r.json::<Value>().unwrap(), json!({"deleted": true}));
    append(&d, "Decision", "after deletion");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(delivered_contents(&shared.lock().unwrap().got).len(), 4);
}

#[test]
fn internal_targets_are_refused_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::start(dir.path(), &[], &[]);
    for url in ["http://127.0.0.1:9/hook", "http://10.0.0.7/hook", "http://localhost:9/hook", "file:///etc/passwd"] {
        let (status, body) = post_json(&d, "/v1/webhooks", json!({"url": url}));
        assert_eq!(status, StatusCode::BAD_REQUEST, "{url}: {body}");
    }
    let (status, body) = post_json(&d, "/v1/webhooks", json!({"url": "https://hooks.example.com/in", "chain_key_filter": "team"}));
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["secret"].as_str().unwrap().len(), 64, "a generated secret");
    // A daemon that does not deliver (another one on the same database does) says so.
    let quiet_dir = tempfile::tempdir().unwrap();
    let quiet = Daemon::start(quiet_dir.path(), &[("MENTISDB_WEBHOOKS", "off")], &[]);
    let (status, body) = post_json(&quiet, "/v1/webhooks", json!({"url": "https://hooks.example.com/in"}));
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    let other = tempfile::tempdir().unwrap();
    let bad = common::command(other.path(), &[("MENTISDB_WEBHOOK_ALLOWED_CIDRS", "0.0.0.0/0")], &[]).output().unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("broader than /8"), "{}", String::from_utf8_lossy(&bad.stderr));
}

#[test]
fn heartbeats_and_expired_claims_are_posted_as_live_events() {
    let shared: Shared = Arc::new(Mutex::new(Receiver::default()));
    let url = start_receiver(shared.clone());
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::start(dir.path(), &ENV, &[]);
    let (status, made) = post_json(&d, "/v1/webhooks", json!({"url": url, "secret": SECRET}));
    assert_eq!(status, StatusCode::OK, "{made}");
    // A webhook that filters thought types gets no live events (they are not thoughts).
    let (status, _) = post_json(&d, "/v1/webhooks", json!({"url": format!("{url}?typed"), "thought_type_filter": ["Decision"]}));
    assert_eq!(status, StatusCode::OK);

    post_json(&d, "/v1/claims", json!({"chain_key": "team", "key": "deploy", "holder": "ada", "ttl_ms": 1_000}));
    let (status, beat) = post_json(&d, "/v1/presence", json!({"chain_key": "team", "agent_id": "ada", "current_action": "deploying"}));
    assert_eq!(status, StatusCode::OK, "{beat}");
    let got = wait_for(&shared, "presence_updated and claim_expired", |g| ["presence_updated", "claim_expired"].iter().all(|e| g.iter().any(|r| r.event == *e)));
    let body = |event: &str| -> Value { serde_json::from_slice(&got.iter().find(|r| r.event == event).unwrap().body).unwrap() };
    let beat = body("presence_updated");
    assert_eq!((beat["event"].as_str(), beat["chain_key"].as_str(), beat["coordination"]["data"]["current_action"].as_str()), (Some("presence_updated"), Some("team"), Some("deploying")), "{beat}");
    let expired = body("claim_expired");
    assert_eq!((expired["coordination"]["data"]["key"].as_str(), expired["coordination"]["data"]["holder"].as_str()), (Some("deploy"), Some("ada")), "{expired}");
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, SECRET.as_bytes());
    for r in got.iter().filter(|r| r.event != "thought.appended") {
        ring::hmac::verify(&key, &r.body, &hex::decode(r.signature.strip_prefix("sha256=").unwrap()).unwrap()).expect("live events are signed too");
        assert!(r.delivery.contains(&format!(":{}:", r.event)), "{}", r.delivery);
    }
    // The claim's own record is a thought: delivered with its cursor, carrying claim_acquired.
    let acquired = got.iter().filter(|r| r.event == "thought.appended").map(|r| serde_json::from_slice::<Value>(&r.body).unwrap()).find(|b| b["coordination"]["event"] == "claim_acquired");
    assert!(acquired.is_some(), "{got:?}");
    assert_eq!(got.iter().filter(|r| r.event == "presence_updated").count(), 1, "one heartbeat, one delivery, to the unfiltered webhook only");
}
