//! `GET /v1/events` on the real daemon: thoughts arrive live as Server-Sent
//! Events, a reconnect with `Last-Event-ID` resumes with no gap and no
//! repeat (also after a restart), and a token sees only the chains it may read.

use crate::common;
use common::{client, Daemon};
use mentisdb_core::dispatch::Access;
use mentisdb_native::tokens::add_token;
use reqwest::blocking::{Client, Response};
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::time::Duration;

/// One Server-Sent Event.
#[derive(Debug)]
struct Sse {
    event: String,
    id: String,
    data: Value,
}

/// Reads events off a response body.
struct Events(BufReader<Response>);

impl Events {
    fn open(d: &Daemon, query: &str, token: Option<&str>, last_id: Option<&str>) -> Result<Events, (StatusCode, Value)> {
        let c = Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
        let mut r = c.get(format!("{}/v1/events{query}", d.rest));
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        if let Some(id) = last_id {
            r = r.header("Last-Event-ID", id);
        }
        let r = r.send().unwrap();
        if r.status() != StatusCode::OK {
            let status = r.status();
            return Err((status, r.json().unwrap()));
        }
        assert_eq!(r.headers()["content-type"], "text/event-stream");
        Ok(Events(BufReader::new(r)))
    }

    /// The next event (keep-alive comments skipped).
    fn next(&mut self) -> Sse {
        let (mut event, mut id, mut data) = (String::new(), String::new(), String::new());
        loop {
            let mut line = String::new();
            assert!(self.0.read_line(&mut line).unwrap() > 0, "the stream ended");
            let line = line.trim_end_matches(['\r', '\n']);
            if line.is_empty() {
                if !event.is_empty() {
                    return Sse { event, id, data: serde_json::from_str(&data).unwrap() };
                }
            } else if let Some(v) = line.strip_prefix("event: ") {
                event = v.to_string();
            } else if let Some(v) = line.strip_prefix("id: ") {
                id = v.to_string();
            } else if let Some(v) = line.strip_prefix("data: ") {
                data.push_str(v);
            }
        }
    }

    /// The next event, which must be a thought of `chain`; its content.
    fn thought(&mut self, chain: &str) -> (String, Sse) {
        let e = self.next();
        assert_eq!(e.event, "thought", "{e:?}");
        assert_eq!(e.data["chain_key"], chain, "{e:?}");
        (e.data["thought"]["content"].as_str().unwrap().to_string(), e)
    }
}

fn append(d: &Daemon, token: Option<&str>, chain: &str, content: &str) {
    let mut r = client().post(format!("{}/v1/thoughts", d.rest)).json(&json!({"chain_key": chain, "thought_type": "Finding", "content": content}));
    if let Some(t) = token {
        r = r.bearer_auth(t);
    }
    let r = r.send().unwrap();
    assert!(r.status().is_success(), "{}", r.status());
}

#[test]
fn thoughts_arrive_live_and_a_reconnect_resumes_without_gap_or_repeat_even_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::start(dir.path(), &[], &[]);
    append(&d, None, "live", "t0");
    append(&d, None, "live", "t1");
    let mut events = Events::open(&d, "?chain_key=live", None, None).unwrap();
    let ready = events.next();
    assert_eq!((ready.event.as_str(), &ready.data), ("ready", &json!({"chains": {"live": 2}})), "starts after what is stored");
    for n in 2..5 {
        append(&d, None, "live", &format!("t{n}"));
        append(&d, None, "elsewhere", "not followed");
    }
    assert_eq!(events.thought("live").0, "t2");
    let (content, at_t3) = events.thought("live");
    assert_eq!(content, "t3");
    assert_eq!(at_t3.data["thought"]["index"], 3);
    drop(events);

    append(&d, None, "live", "t5");
    let mut events = Events::open(&d, "?chain_key=live", None, Some(&at_t3.id)).unwrap();
    assert_eq!(events.next().event, "ready");
    assert_eq!(events.thought("live").0, "t4", "resumes right after the last event seen");
    let (content, at_t5) = events.thought("live");
    assert_eq!(content, "t5");
    append(&d, None, "live", "t6");
    assert_eq!(events.thought("live").0, "t6", "then goes on live");
    drop(events);

    // The chains are the log: a restarted daemon resumes the same cursor.
    drop(d);
    let d = Daemon::start(dir.path(), &[], &[]);
    append(&d, None, "live", "t7");
    let mut events = Events::open(&d, "?chain_key=live", None, Some(&at_t5.id)).unwrap();
    assert_eq!(events.next().event, "ready");
    assert_eq!(events.thought("live").0, "t6");
    assert_eq!(events.thought("live").0, "t7");

    // A deleted chain is told; a cursor that is not ours is refused.
    let r = client().post(format!("{}/v1/chains/delete", d.rest)).json(&json!({"chain_key": "live"})).send().unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let deleted = events.next();
    assert_eq!((deleted.event.as_str(), &deleted.data), ("chain_deleted", &json!({"chain_key": "live"})));
    let (status, body) = Events::open(&d, "?chain_key=live", None, Some("garbage!")).err().unwrap();
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"].as_str().unwrap().contains("Last-Event-ID"), "{body}");
    let (status, _) = Events::open(&d, "?chain=live", None, None).err().unwrap();
    assert_eq!(status, StatusCode::BAD_REQUEST, "an unknown parameter is named, not ignored");
    let many: Vec<String> = (0..300).map(|i| format!("c{i}")).collect();
    let (status, body) = Events::open(&d, &format!("?chain_keys={}", many.join(",")), None, None).err().unwrap();
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

#[test]
fn a_token_streams_only_the_chains_it_may_read() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.toml");
    std::fs::write(&tokens, "").unwrap();
    let admin = add_token(&tokens, "root", Access::Admin, &[]).unwrap();
    let reader = add_token(&tokens, "reader", Access::Read, &["proj-*".to_string()]).unwrap();
    let d = Daemon::start(&dir.path().join("data"), &[("MENTISDB_TOKENS_FILE", tokens.to_str().unwrap())], &[]);

    let (status, _) = Events::open(&d, "", None, None).err().unwrap();
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, body) = Events::open(&d, "?chain_key=secret", Some(&reader), None).err().unwrap();
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");

    // No chain named: every chain the token covers, including ones made later.
    let mut events = Events::open(&d, "", Some(&reader), None).unwrap();
    assert_eq!(events.next().event, "ready");
    append(&d, Some(&admin), "secret", "hidden");
    append(&d, Some(&admin), "proj-new", "visible");
    assert_eq!(events.thought("proj-new").0, "visible");
    append(&d, Some(&admin), "secret", "hidden again");
    append(&d, Some(&admin), "proj-other", "also visible");
    assert_eq!(events.thought("proj-other").0, "also visible", "nothing of 'secret' came in between");
}

#[test]
fn an_open_stream_does_not_hold_up_a_shutdown() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = Daemon::start(dir.path(), &[], &[]);
    let mut events = Events::open(&d, "", None, None).unwrap();
    assert_eq!(events.next().event, "ready");
    let term = std::process::Command::new("kill").args(["-TERM", &d.child.id().to_string()]).status().unwrap();
    assert!(term.success());
    let asked = std::time::Instant::now();
    let exited = loop {
        if let Some(status) = d.child.try_wait().unwrap() {
            break status;
        }
        assert!(asked.elapsed() < Duration::from_secs(20), "mentisdbd still runs 20 s after SIGTERM with an event stream open");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(exited.success(), "{exited:?}");
    drop(events);
}

/// The next event that is not a `thought`.
fn next_coordination(events: &mut Events) -> Sse {
    loop {
        let e = events.next();
        if e.event != "thought" {
            return e;
        }
    }
}

#[test]
fn claims_facts_reviews_and_presence_are_announced_as_coordination_events() {
    let tmp = tempfile::tempdir().unwrap();
    let d = Daemon::start(tmp.path(), &[], &[]);
    let mut events = Events::open(&d, "?chain_key=team", None, None).unwrap();
    assert_eq!(events.next().event, "ready");
    let call = |path: &str, body: Value| -> Value { client().post(format!("{}{path}", d.rest)).json(&body).send().unwrap().json().unwrap() };

    call("/v1/claims", json!({"chain_key": "team", "key": "task-1", "holder": "ada", "ttl_ms": 1_000}));
    // The coordination event comes just before its thought, without a cursor of its own.
    let acquired = events.next();
    assert_eq!((acquired.event.as_str(), acquired.id.as_str()), ("claim_acquired", ""), "{acquired:?}");
    assert_eq!((acquired.data["key"].as_str(), acquired.data["holder"].as_str(), acquired.data["fencing_token"].as_u64()), (Some("task-1"), Some("ada"), Some(1)));
    let (_, thought) = events.thought("team");
    assert_eq!(thought.data["thought"]["index"], 0);
    // Nobody renews: a second later the lease runs out and the timer says so.
    let expired = next_coordination(&mut events);
    assert_eq!((expired.event.as_str(), expired.data["key"].as_str()), ("claim_expired", Some("task-1")), "{expired:?}");

    let review = call("/v1/reviews", json!({"chain_key": "team", "subject": "ship it", "reviewers": ["bob"], "agent_id": "ada"}));
    let requested = next_coordination(&mut events);
    assert_eq!((requested.event.as_str(), &requested.data["review_id"]), ("review_requested", &review["review_id"]));
    call("/v1/reviews/decide", json!({"chain_key": "team", "review_id": review["review_id"], "decision": "approved", "agent_id": "bob"}));
    let decided = next_coordination(&mut events);
    assert_eq!((decided.event.as_str(), decided.data["decision"].as_str(), decided.data["reviewer"].as_str()), ("review_decided", Some("approved"), Some("bob")));
    call("/v1/facts", json!({"chain_key": "team", "subject": "db", "predicate": "is", "object": "pg16"}));
    assert_eq!(next_coordination(&mut events).event, "fact_recorded");
    call("/v1/presence", json!({"chain_key": "team", "agent_id": "cy", "current_action": "reviewing"}));
    let beat = next_coordination(&mut events);
    assert_eq!((beat.event.as_str(), beat.data["agent_id"].as_str(), beat.data["current_action"].as_str()), ("presence_updated", Some("cy"), Some("reviewing")));
    // Another chain's beat is not this stream's.
    call("/v1/claims", json!({"chain_key": "other", "key": "k", "holder": "dan", "ttl_ms": 60_000}));
    call("/v1/presence", json!({"chain_key": "other", "agent_id": "dan"}));
    call("/v1/claims", json!({"chain_key": "team", "key": "task-2", "holder": "ada", "ttl_ms": 60_000}));
    assert_eq!(next_coordination(&mut events).event, "claim_acquired");

    // Resuming from a thought's cursor sends the coordination events after it again, with their thoughts.
    let mut resumed = Events::open(&d, "?chain_key=team", None, Some(&thought.id)).unwrap();
    assert_eq!(resumed.next().event, "ready");
    assert_eq!(resumed.next().event, "review_requested");
    assert_eq!(resumed.thought("team").1.data["thought"]["index"], 1);
}
