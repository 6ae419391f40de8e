//! Embedding speed and a fingerprint of the vectors.
//!
//! `cargo run --release -p mentisdb-embed-minilm --example speed -- MODEL_DIR CONV.json [N]`
//! embeds the first N dialogue turns of a LoCoMo conversation one at a time
//! and as one batch, prints texts per second for each, and the largest
//! difference between the two sets of vectors; then how long a ranked
//! query's embedding takes (each question with its words, one batch).

use mentisdb_core::ranked::EmbeddingProvider;
use mentisdb_embed_minilm::MiniLm;
use std::path::Path;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (dir, conv) = (args.first().expect("MODEL_DIR"), args.get(1).expect("CONV.json"));
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(64);
    let model = MiniLm::load(Path::new(dir)).expect("model");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(conv).expect("read")).expect("json");
    let c = v.get("conversation").unwrap_or(&v);
    let mut texts = Vec::new();
    for i in 1.. {
        let Some(list) = c.get(format!("session_{i}")).and_then(|s| s.as_array()) else { break };
        let date = c.get(format!("session_{i}_date_time")).and_then(|s| s.as_str()).unwrap_or("");
        for t in list {
            texts.push(format!("[{date}] {}: {}", t["speaker"].as_str().unwrap_or(""), t["text"].as_str().unwrap_or("")));
        }
    }
    texts.truncate(n);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let tokens: usize = refs.iter().map(|t| model.encode(t).len()).sum();
    let t0 = Instant::now();
    let one: Vec<Vec<f32>> = refs.iter().map(|t| model.embed(t).expect("vector")).collect();
    let single = t0.elapsed().as_secs_f64();
    let t0 = Instant::now();
    let batch: Vec<Vec<f32>> = model.embed_batch(&refs).into_iter().map(|v| v.expect("vector")).collect();
    let batched = t0.elapsed().as_secs_f64();
    let diff = one.iter().zip(&batch).flat_map(|(a, b)| a.iter().zip(b).map(|(x, y)| (x - y).abs())).fold(0.0f32, f32::max);
    println!("{} texts, {tokens} tokens: one at a time {:.1} texts/s, batched {:.1} texts/s; max |one - batch| {diff:e}", refs.len(), refs.len() as f64 / single, refs.len() as f64 / batched);
    println!("first vector starts {:?}", &one[0][..4]);
    // A ranked query embeds its question and each of its words, in one batch.
    let questions: Vec<&str> = v.get("qa").and_then(|q| q.as_array()).map(|qa| qa.iter().filter_map(|q| q["question"].as_str()).collect()).unwrap_or_default();
    let mut took: Vec<f64> = questions
        .iter()
        .map(|q| {
            let terms = mentisdb_core::ranked::search::query_terms(q);
            let mut texts = vec![*q];
            texts.extend(terms.iter().map(|(_, surface)| surface.as_str()));
            let t0 = Instant::now();
            std::hint::black_box(model.embed_batch(&texts));
            t0.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    took.sort_by(f64::total_cmp);
    if !took.is_empty() {
        let at = |p: f64| took[((took.len() - 1) as f64 * p).round() as usize];
        println!("{} questions, each with its words in one batch: p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms", took.len(), at(0.5), at(0.9), at(0.99));
    }
}
