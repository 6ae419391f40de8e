//! A webhook receiver on loopback for the daemon tests: records every
//! request, answers 500 while told to fail.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    pub event: String,
    pub delivery: String,
    pub signature: String,
    pub body: Vec<u8>,
    pub answered: u16,
}

/// A webhook receiver: answers 500 while `failing` is above 0 (counting
/// down) or `down` is set, else 200; records every request.
#[derive(Default)]
pub struct Receiver {
    pub failing: u32,
    pub down: bool,
    pub got: Vec<Received>,
}

pub type Shared = Arc<Mutex<Receiver>>;

async fn receive(State(r): State<Shared>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let mut r = r.lock().unwrap();
    let fail = r.down || r.failing > 0;
    r.failing = r.failing.saturating_sub(1);
    let status = if fail { StatusCode::INTERNAL_SERVER_ERROR } else { StatusCode::OK };
    let header = |n: &str| headers.get(n).map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    r.got.push(Received { event: header("x-mentisdb-event"), delivery: header("x-mentisdb-delivery"), signature: header("x-mentisdb-signature"), body: body.to_vec(), answered: status.as_u16() });
    status
}

/// Starts the receiver on a free loopback port; returns its URL.
pub fn start_receiver(shared: Shared) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async move {
            let app = axum::Router::new().route("/hook", post(receive)).with_state(shared);
            axum::serve(tokio::net::TcpListener::from_std(listener).unwrap(), app).await.unwrap();
        });
    });
    url
}

/// Waits (up to 60 s) until `done` holds for what the receiver got.
pub fn wait_for(shared: &Shared, what: &str, done: impl Fn(&[Received]) -> bool) -> Vec<Received> {
    let started = Instant::now();
    loop {
        let got = shared.lock().unwrap().got.clone();
        if done(&got) {
            return got;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "waited 60 s for {what}; got {got:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn delivered_contents(got: &[Received]) -> Vec<String> {
    got.iter().filter(|r| r.answered == 200 && r.event == "thought.appended").map(|r| serde_json::from_slice::<Value>(&r.body).unwrap()["thought"]["content"].as_str().unwrap().to_string()).collect()
}

