//! Ranked query latency on a 100k-thought chain, and indexing one thought
//! at the content limit.
//!
//! `cargo bench -p mentisdb-core --bench ranked` — criterion timings for the
//! core search and for the full dispatcher call (JSON in, JSON out), the
//! latter also in hybrid mode (hashed n-gram vectors for every thought and
//! word), then a plain p50/p90/p99 over 2,000 queries of each; and
//! `ranked_index/add_256k_distinct`: `RankedIndex::add` of one thought of
//! 256 KiB (`MAX_CONTENT_BYTES`) holding ~24k distinct words, which must
//! take time linear in its words. A filter (`-- ranked_index`) skips building
//! what the cases it leaves out need.

use criterion::{criterion_group, BatchSize, Criterion};
use mentisdb_core::limits::MAX_CONTENT_BYTES;
use mentisdb_core::query::{FilterArgs, ThoughtFilter};
use mentisdb_core::ranked::{ranked_search, GraphOptions, HashedNgramEmbedder, RankedIndex, RankedQuery};
use mentisdb_core::{Chain, ChainFormat, DbConfig, FixedClock, MemoryStorage, MentisDb, NewThought, Parallelism, Sequential, SequentialIds, ThoughtType};
use serde_json::json;
use std::cell::OnceCell;
use std::sync::Arc;
use std::time::Instant;

/// Thoughts in the bench chain; `MENTISDB_BENCH_THOUGHTS` sets another
/// count (e.g. 1000000 for the figures at a million; case names keep
/// saying 100k).
const THOUGHTS: usize = 100_000;
/// Under `cargo test --all-targets` (no `--bench` argument) the bench only
/// smoke-runs, on a small chain.
const SMOKE_THOUGHTS: usize = 2_000;

fn thoughts() -> usize {
    if std::env::args().any(|a| a == "--bench") {
        std::env::var("MENTISDB_BENCH_THOUGHTS").ok().and_then(|n| n.parse().ok()).unwrap_or(THOUGHTS)
    } else {
        SMOKE_THOUGHTS
    }
}
const VOCAB: usize = 20_000;

/// Scoped threads, one per CPU: what `mentisdbd` hands the engine
/// (`host-native/src/host_env.rs`, which the core cannot depend on).
#[derive(Debug)]
struct ScopedThreads;

impl Parallelism for ScopedThreads {
    fn width(&self) -> usize {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }

    fn run(&self, count: usize, job: &(dyn Fn(usize) + Sync)) {
        let next = std::sync::atomic::AtomicUsize::new(0);
        let work = || loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if i >= count {
                break;
            }
            job(i);
        };
        std::thread::scope(|s| {
            for _ in 1..self.width().min(count) {
                s.spawn(work);
            }
            work();
        });
    }
}

/// Deterministic xorshift generator (no randomness from the host).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// A word index with a Zipf-like (log-uniform) distribution.
    fn word(&mut self) -> usize {
        ((VOCAB as f64).powf(self.unit()) as usize).saturating_sub(1).min(VOCAB - 1)
    }
}

fn word(i: usize) -> String {
    const SYL: [&str; 16] = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ber", "dan", "fel", "gor", "hil", "jun", "mar", "pol"];
    let mut s = String::new();
    let mut n = i + 16;
    while n > 0 {
        s.push_str(SYL[n % 16]);
        n /= 16;
    }
    s
}

fn sentence(rng: &mut Rng) -> String {
    let len = 12 + (rng.next() % 19) as usize;
    (0..len).map(|_| word(rng.word())).collect::<Vec<_>>().join(" ")
}

fn chain() -> Chain {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut c = Chain::new("bench", ChainFormat::Binary);
    for i in 0..thoughts() {
        let mut n = NewThought::new(["ada", "bob", "cy", "dee"][i % 4], ThoughtType::FactLearned, &sentence(&mut rng));
        n.tags = vec![word(rng.word())];
        if i > 0 && i % 10 == 0 {
            n.refs = vec![(rng.next() % i as u64)];
        }
        let ts = mentisdb_core::timestamp::format_rfc3339_millis(1_700_000_000_000 + i as i64 * 1000);
        let t = c.prepare_append(n, ts, format!("t{i}"), [0; 16]).expect("valid thought");
        c.commit(t);
    }
    c
}

/// Vocabulary ranks below this play the part of stopwords: in English the
/// 50 most frequent words are function words, which the analyzer drops from
/// queries; synthetic words are not on its list, so queries skip them here.
const STOPWORD_RANKS: usize = 50;

fn queries() -> Vec<String> {
    let mut rng = Rng(42);
    (0..64)
        .map(|_| {
            let mut words = Vec::new();
            while words.len() < 5 {
                let w = rng.word();
                if w >= STOPWORD_RANKS {
                    words.push(word(w));
                }
            }
            words.join(" ") + "?"
        })
        .collect()
}

fn percentiles(label: &str, mut f: impl FnMut(usize)) {
    let mut times: Vec<f64> = (0..2000)
        .map(|i| {
            let t = Instant::now();
            f(i);
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    println!("{label}: p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms", times[1000], times[1800], times[1980]);
}

fn bench(c: &mut Criterion) {
    let full = thoughts() >= THOUGHTS;
    let qs = queries();
    // Built on first use, so a filter that leaves a case out skips its setup.
    let core: OnceCell<(Chain, ThoughtFilter)> = OnceCell::new();
    let core = || {
        core.get_or_init(|| {
            let chain = chain();
            let filter = ThoughtFilter::compile(&FilterArgs::default(), None, Some(&chain)).expect("empty filter");
            (chain, filter)
        })
    };
    let run = |i: usize| {
        let (chain, filter) = core();
        let q = RankedQuery { text: &qs[i % qs.len()], filter, limit: 10, graph: GraphOptions::default(), as_of_ms: None, include_superseded: false, query_vector: None, context: true, word_vectors: Vec::new(), rerank_k: None, parallelism: &Sequential };
        ranked_search(chain, &q)
    };
    measure(c, "ranked_search/core_100k", full, run);

    let db: OnceCell<MentisDb> = OnceCell::new();
    let db = || {
        db.get_or_init(|| {
            // On the daemon's threads, as `mentisdbd` runs it (the vector scan of a large chain uses them).
            let config = DbConfig { parallelism: Arc::new(ScopedThreads), ..DbConfig::default() };
            let (db, _) = MentisDb::open(Arc::new(MemoryStorage::new()), Arc::new(FixedClock::new(1_700_000_000_000, 1000)), Arc::new(SequentialIds::default()), config).expect("open");
            let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
            for i in 0..thoughts() {
                let agent = ["ada", "bob", "cy", "dee"][i % 4];
                db.call("mentisdb_append", json!({"chain_key": "bench", "agent_id": agent, "thought_type": "FactLearned", "content": sentence(&mut rng), "tags": [word(rng.word())]})).expect("append");
            }
            db
        })
    };
    let call = |i: usize| db().call("mentisdb_ranked_search", json!({"chain_key": "bench", "text": qs[i % qs.len()], "limit": 10})).expect("ranked");
    measure(c, "ranked_search/dispatch_100k", full, call);

    // Hybrid: with a provider every thought and every word of the chain has
    // a vector; a query scans both (and expands its words). The hashed
    // n-gram provider is cheap, so this measures the search, not a model.
    let hybrid: OnceCell<()> = OnceCell::new();
    let hybrid_call = |i: usize| {
        hybrid.get_or_init(|| {
            db().set_embedding_provider(Some(Arc::new(HashedNgramEmbedder::default())));
            call(0);
        });
        call(i)
    };
    measure(c, "ranked_search/hybrid_dispatch_100k", full, hybrid_call);
    if full && hybrid.get().is_some() {
        vector_recall(db(), &qs);
    }
}

/// How many of the exact 10 nearest thoughts (f32 cosines of the
/// provider's vectors, recomputed here) the vector stage's nearest 10 also
/// holds (quantized rows, `ranked/quantized.rs`, and past 50k thoughts the
/// sketch shortlist, `ranked/sketch.rs`), over the bench queries; and the
/// vector memory per thought.
fn vector_recall(db: &MentisDb, queries: &[String]) {
    use mentisdb_core::ranked::embedding::{cosine, embedding_text};
    use mentisdb_core::ranked::search::nearest_rows;
    use mentisdb_core::ranked::EmbeddingProvider;
    let e = HashedNgramEmbedder::default();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let exact: Vec<Vec<f32>> = (0..thoughts())
        .map(|_| {
            let content = sentence(&mut rng);
            rng.word(); // the tag
            e.embed(embedding_text(&content)).expect("a vector")
        })
        .collect();
    let top10 = |mut sims: Vec<(f32, u32)>| {
        sims.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        sims.truncate(10);
        sims.into_iter().map(|s| s.1).collect::<Vec<u32>>()
    };
    let (kept, bytes) = db
        .with_chain("bench", |c| {
            let index = c.expect("the bench chain").ranked_index();
            let kept: usize = queries
                .iter()
                .map(|q| {
                    let qv = e.embed(q).expect("a query vector");
                    let want = top10(exact.iter().enumerate().map(|(d, v)| (cosine(&qv, v), d as u32)).collect());
                    let got: Vec<u32> = nearest_rows(index.thought_vectors(), &qv, 10, &Sequential).into_iter().map(|(_, d)| d).collect();
                    want.iter().filter(|d| got.contains(d)).count()
                })
                .sum();
            (kept, index.thought_vectors().bytes())
        })
        .expect("chain");
    println!(
        "hybrid vectors: recall of the exact top 10 nearest {:.3} over {} queries; {} bytes of vector per thought (i16 codes, scale, 512-bit sketch; f32 would be {})",
        kept as f64 / (10 * queries.len()) as f64,
        queries.len(),
        bytes / thoughts(),
        exact[0].len() * 4
    );
}

/// One thought of `MAX_CONTENT_BYTES` of distinct words (the synthetic
/// vocabulary past the chain's), then `RankedIndex::add` of it into an
/// empty index: linear in its words, not quadratic in the distinct ones.
fn bench_index(c: &mut Criterion) {
    let mut content = String::with_capacity(MAX_CONTENT_BYTES);
    for i in VOCAB.. {
        let w = word(i);
        if content.len() + w.len() + 1 > MAX_CONTENT_BYTES {
            break;
        }
        content.push_str(&w);
        content.push(' ');
    }
    let chain = Chain::new("bench", ChainFormat::Binary);
    let ts = mentisdb_core::timestamp::format_rfc3339_millis(1_700_000_000_000);
    let thought = chain.prepare_append(NewThought::new("ada", ThoughtType::FactLearned, &content), ts, "big".into(), [0; 16]).expect("a thought at the content limit");
    let mut group = c.benchmark_group("ranked_index");
    group.sample_size(10);
    group.bench_function("add_256k_distinct", |b| {
        b.iter_batched(
            RankedIndex::default,
            |mut index| {
                index.add(&thought);
                index
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

/// Criterion's timing of `f` (query `i` on its `i`-th call), then, on the
/// full chain and unless a filter left the case out, its p50/p90/p99.
fn measure<R>(c: &mut Criterion, label: &str, full: bool, f: impl Fn(usize) -> R) {
    let mut i = 0;
    let mut ran = false;
    c.bench_function(label, |b| {
        ran = true;
        b.iter(|| {
            i += 1;
            f(i)
        })
    });
    if full && ran {
        percentiles(label, |i| {
            std::hint::black_box(f(i));
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = bench, bench_index
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
