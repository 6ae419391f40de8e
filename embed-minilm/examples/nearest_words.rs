//! The words of a LoCoMo conversation nearest to given words, by
//! all-MiniLM-L6-v2 vectors of the words alone: what hybrid ranked search's
//! `expansion` part can use (it takes cosine >= 0.6).
//!
//! ```text
//! cargo run --release -p mentisdb-embed-minilm --example nearest_words -- DIR ../shared/bench/locomo/conv-26.json children instruments hikes
//! ```

use mentisdb_core::ranked::embedding::cosine;
use mentisdb_core::ranked::{Analyzer, EmbeddingProvider};
use mentisdb_embed_minilm::MiniLm;
use std::collections::BTreeSet;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, dir, file, words @ ..] = args.as_slice() else {
        eprintln!("usage: nearest_words MODEL_DIR CONVERSATION.json WORD...");
        std::process::exit(2);
    };
    let model = MiniLm::load(std::path::Path::new(dir)).unwrap_or_else(|e| panic!("{e}"));
    let conv: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(file).expect("conversation file")).expect("JSON");
    let conv = conv.get("conversation").unwrap_or(&conv);
    let mut vocab = BTreeSet::new();
    for session in conv.as_object().expect("object").iter().filter(|(k, _)| k.starts_with("session_")).filter_map(|(_, v)| v.as_array()) {
        for turn in session {
            vocab.extend(Analyzer.tokens(turn["text"].as_str().unwrap_or("")).into_iter().map(|t| t.surface));
        }
    }
    let vocab: Vec<&str> = vocab.iter().map(String::as_str).collect();
    let t0 = std::time::Instant::now();
    let vectors: Vec<Option<Vec<f32>>> = model.embed_batch(&vocab);
    eprintln!("{} words embedded in {:.1}s", vocab.len(), t0.elapsed().as_secs_f64());
    for word in words {
        let Some(q) = model.embed(word) else { continue };
        let mut near: Vec<(f32, &str)> = vocab.iter().zip(&vectors).filter_map(|(w, v)| v.as_ref().map(|v| (cosine(&q, v), *w))).collect();
        near.sort_by(|a, b| b.0.total_cmp(&a.0));
        println!("{word}: {}", near.iter().take(15).map(|(c, w)| format!("{w} {c:.2}")).collect::<Vec<_>>().join(", "));
    }
}
