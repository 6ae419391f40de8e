//! LoCoMo retrieval benchmark for ranked search.
//!
//! ```text
//! cargo run --release -p mentisdb-tests --bin locomo-bench -- ../shared/bench/locomo [--rest http://127.0.0.1:9472] [--hybrid-ngram | --minilm DIR | --static FILE] [--verbose] [--deep N]
//! ```
//!
//! Procedure (fixed): for every `conv-*.json`, one chain per conversation;
//! every dialogue turn, session by session, becomes one thought with content
//! `"[<session date_time>] <speaker>: <text>"`, `agent_id` the speaker
//! lower-cased, thought_type `FactLearned` and tag `dia:<dia_id>`. Each
//! question of categories 1-4 is asked through `mentisdb_ranked_search`
//! (or `POST /v1/ranked-search`) with `limit` 10; a question scores the
//! share of its gold `evidence` turns among the top k results. Questions
//! without evidence are skipped; an evidence entry like `"D8:6; D9:17"` is
//! split into its turns.
//!
//! In-process mode drives the same dispatcher the daemon serves, over an
//! in-memory store with a fixed clock; `--rest` drives a running daemon.
//! `--deep N` (a diagnostic, not the procedure) asks for `N` results instead
//! and adds R@N to every line: how deep the evidence sits. `--dump FILE`
//! (with `--deep`, to re-rank offline) writes a JSON line per question: its
//! conversation's position, category and evidence, and every hit's `dia`
//! tag, chain index and score parts.
//!
//! Protocol against overfitting (printed after `overall` whenever there are
//! at least three conversations): the conversations in sorted order, fold
//! `i` leaves out conversations `i` and `i + 1` (mod their number) and
//! tunes on the rest. Per fold, R@5 / R@10 of the left-out questions (and
//! per category) and of the tuning ones; then the mean over the folds of
//! the left-out figures, next to the all-conversations one. A scoring
//! change is kept only if it wins on the tuning conversations of a fold
//! and also on that fold's left-out ones, so that the mean left-out figure
//! rises. `--save FILE` writes every question's recall; `--against FILE`
//! (a saved earlier run over the same files) adds, per fold, the change in
//! the tuning and left-out R@10 and R@5, and how many folds win on each.

use mentisdb_core::{DbConfig, FixedClock, MemoryStorage, MentisDb, SequentialIds};
use mentisdb_tests::embedders::{self, core_texts, Choice, Ingested};
use mentisdb_tests::locomo::{load, Conversation};
use mentisdb_tests::tool_target::Target;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

const LIMIT: usize = 10;

/// One asked question's outcome: (conversation, category, R@5, R@10, R@deep).
type Outcome = (usize, u64, f64, f64, f64);

#[derive(Default, Clone, Copy)]
struct Tally {
    n: usize,
    r5: f64,
    r10: f64,
    deep: f64,
}

impl Tally {
    fn add(&mut self, r5: f64, r10: f64, deep: f64) {
        self.n += 1;
        self.r5 += r5;
        self.r10 += r10;
        self.deep += deep;
    }
    fn of<'a>(outcomes: impl Iterator<Item = &'a Outcome>) -> Tally {
        let mut t = Tally::default();
        outcomes.for_each(|o| t.add(o.2, o.3, o.4));
        t
    }
    /// (R@5, R@10) in percent.
    fn pct(&self) -> (f64, f64) {
        let d = self.n.max(1) as f64;
        (100.0 * self.r5 / d, 100.0 * self.r10 / d)
    }
    fn line(&self, label: &str, deep: Option<usize>) -> String {
        let d = self.n.max(1) as f64;
        let mut out = format!("{label:<10} n={:<5} R@5 {:>5.1}%  R@10 {:>5.1}%", self.n, 100.0 * self.r5 / d, 100.0 * self.r10 / d);
        if let Some(k) = deep {
            out += &format!("  R@{k} {:>5.1}%", 100.0 * self.deep / d);
        }
        out
    }
}

fn main() {
    let mut dir: Option<PathBuf> = None;
    let mut rest: Option<String> = None;
    let mut hybrid = false;
    let mut minilm: Option<PathBuf> = None;
    let mut static_model: Option<PathBuf> = None;
    let mut verbose = false;
    let mut deep: Option<usize> = None;
    let (mut save, mut against): (Option<PathBuf>, Option<PathBuf>) = (None, None);
    let mut dump_to: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--rest" => rest = args.next(),
            "--hybrid-ngram" => hybrid = true,
            "--minilm" => minilm = args.next().map(PathBuf::from),
            "--static" => static_model = args.next().map(PathBuf::from),
            "--verbose" | "-v" => verbose = true,
            "--save" => save = args.next().map(PathBuf::from),
            "--dump" => dump_to = args.next().map(PathBuf::from),
            "--against" => against = args.next().map(PathBuf::from),
            "--deep" => deep = args.next().and_then(|n| n.parse().ok()).filter(|n| *n > LIMIT),
            "-h" | "--help" => {
                println!("usage: locomo-bench <dir with conv-*.json, or one conv-*.json> [--rest http://127.0.0.1:PORT] [--hybrid-ngram | --minilm MODEL_DIR | --static MODEL_FILE] [--verbose] [--deep N] [--save FILE] [--against FILE] [--dump FILE]");
                return;
            }
            _ => dir = Some(PathBuf::from(a)),
        }
    }
    let dir = dir.unwrap_or_else(|| PathBuf::from("../shared/bench/locomo"));
    let fail = |message: String| -> ! {
        eprintln!("locomo-bench: {message}");
        std::process::exit(2);
    };
    // One conversation file, or every conv-*.json of a directory.
    let mut files: Vec<PathBuf> = if dir.is_file() {
        vec![dir.clone()]
    } else {
        std::fs::read_dir(&dir)
            .unwrap_or_else(|e| fail(format!("cannot read {}: {e}", dir.display())))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("conv-") && n.ends_with(".json")))
            .collect()
    };
    files.sort();
    if files.is_empty() {
        fail(format!("no conv-*.json in {}", dir.display()));
    }
    let convs: Vec<Conversation> = files.iter().map(|f| load(f).unwrap_or_else(|e| fail(e.to_string()))).collect();
    let mut dump = dump_to.map(|p| std::io::BufWriter::new(std::fs::File::create(&p).unwrap_or_else(|e| fail(format!("cannot write {}: {e}", p.display())))));
    let target = match &rest {
        Some(url) => {
            if !url.starts_with("http://") {
                fail(format!("--rest needs http://HOST:PORT, not {url}"));
            }
            Target::rest(url)
        }
        None => {
            let (db, _) = MentisDb::open(Arc::new(MemoryStorage::new()), Arc::new(FixedClock::new(1_700_000_000_000, 1)), Arc::new(SequentialIds::default()), DbConfig::default()).expect("open");
            let choice = match (&minilm, &static_model) {
                (Some(dir), _) => Choice::MiniLm(dir.clone()),
                (None, Some(file)) => Choice::Static(file.clone()),
                (None, None) if hybrid => Choice::HashedNgram,
                (None, None) => Choice::Lexical,
            };
            let texts = || {
                let tags: Vec<Vec<String>> = convs.iter().flat_map(|c| c.turns.iter().map(|t| vec![format!("dia:{}", t.2)])).collect();
                let turns = convs.iter().flat_map(|c| c.turns.iter()).zip(&tags).map(|(t, tags)| Ingested { content: &t.0, agent: &t.1, tags });
                core_texts(turns, convs.iter().flat_map(|c| c.questions.iter().map(|q| q.0.as_str())))
            };
            // v2: vectors of the matrix-product forward pass (they differ
            // from the first implementation's in the last float digits).
            db.set_embedding_provider(embedders::provider(&choice, texts, "mentisdb-locomo-minilm-v2.cache"));
            Target::InProcess(Box::new(db))
        }
    };
    // A fresh chain per run so a daemon's earlier runs do not mix in.
    let run = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    let mut per_cat: BTreeMap<u64, Tally> = BTreeMap::new();
    let mut overall = Tally::default();
    let (mut turns_total, mut ingest_time, mut queries, mut query_time) = (0usize, Duration::ZERO, 0usize, Duration::ZERO);
    let mut latencies: Vec<Duration> = Vec::new();
    let mut outcomes: Vec<Outcome> = Vec::new();
    let mut backend = String::new();
    for (ci, conv) in convs.iter().enumerate() {
        let chain_key = if rest.is_some() { format!("locomo-{}-{run}", conv.name) } else { format!("locomo-{}", conv.name) };
        let start = Instant::now();
        for (content, agent, dia) in &conv.turns {
            let args = json!({ "chain_key": chain_key, "agent_id": agent, "thought_type": "FactLearned", "content": content, "tags": [format!("dia:{dia}")] });
            target.call("mentisdb_append", "/v1/thoughts", args).unwrap_or_else(|e| panic!("append failed: {e}"));
        }
        ingest_time += start.elapsed();
        turns_total += conv.turns.len();
        let mut conv_tally = Tally::default();
        for (question, cat, evidence) in &conv.questions {
            let args = json!({ "chain_key": chain_key, "text": question, "limit": deep.unwrap_or(LIMIT) });
            let t0 = Instant::now();
            let resp = target.call("mentisdb_ranked_search", "/v1/ranked-search", args).unwrap_or_else(|e| panic!("ranked search failed: {e}"));
            let dt = t0.elapsed();
            query_time += dt;
            latencies.push(dt);
            queries += 1;
            backend = resp["backend"].as_str().unwrap_or("?").to_string();
            let found: Vec<String> = resp["results"]
                .as_array()
                .map(|rs| {
                    rs.iter()
                        .map(|r| r["thought"]["tags"].as_array().and_then(|t| t.iter().filter_map(Value::as_str).find_map(|t| t.strip_prefix("dia:"))).unwrap_or("").to_string())
                        .collect()
                })
                .unwrap_or_default();
            if let Some(out) = &mut dump {
                let hits: Vec<Value> = resp["results"].as_array().map(|rs| rs.iter().map(|r| json!({ "dia": r["thought"]["tags"][0], "index": r["thought"]["index"], "score": r["score"] })).collect()).unwrap_or_default();
                writeln!(out, "{}", json!({ "conv": ci, "cat": cat, "evidence": evidence, "hits": hits })).unwrap_or_else(|e| fail(format!("cannot write the dump: {e}")));
            }
            let share = |k: usize| evidence.iter().filter(|e| found.iter().take(k).any(|f| f == *e)).count() as f64 / evidence.len() as f64;
            let (r5, r10, r_deep) = (share(5), share(10), share(deep.unwrap_or(LIMIT)));
            if verbose && r10 < 1.0 {
                let ranks: Vec<Option<usize>> = evidence.iter().map(|e| found.iter().position(|f| f == e).map(|p| p + 1)).collect();
                println!("MISS cat{cat} R@10={r10:.2} {question:?} evidence={evidence:?} ranks={ranks:?} top={:?}", &found[..found.len().min(10)]);
            }
            per_cat.entry(*cat).or_default().add(r5, r10, r_deep);
            overall.add(r5, r10, r_deep);
            conv_tally.add(r5, r10, r_deep);
            outcomes.push((ci, *cat, r5, r10, r_deep));
        }
        println!("{}", conv_tally.line(&conv.name, deep));
    }
    println!("--- backend: {backend}, limit {}, {} conversations, mode: {}", deep.unwrap_or(LIMIT), files.len(), if rest.is_some() { "rest" } else { "in-process" });
    for (cat, t) in &per_cat {
        println!("{}", t.line(&format!("cat {cat}"), deep));
    }
    println!("{}", overall.line("overall", deep));
    let names: Vec<&str> = convs.iter().map(|c| c.name.as_str()).collect();
    let earlier = against.map(|p| read_outcomes(&p, &outcomes));
    rotation(&names, &outcomes, overall, earlier.as_deref());
    if let Some(mut out) = dump {
        out.flush().unwrap_or_else(|e| fail(format!("cannot write the dump: {e}")));
    }
    if let Some(p) = save {
        let text: String = outcomes.iter().map(|o| format!("{} {} {} {} {}\n", o.0, o.1, o.2, o.3, o.4)).collect();
        std::fs::write(&p, text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    }
    latencies.sort();
    // Nearest rank: the smallest latency at least a share `q` of the queries took at most.
    let at = |q: f64| latencies.get(((latencies.len() as f64 * q).ceil() as usize).saturating_sub(1)).copied().unwrap_or_default();
    println!(
        "ingest: {turns_total} turns in {:.3}s ({:.0} turns/s); queries: {queries} in {:.3}s ({:.0} queries/s, p50 {:.3} ms, p99 {:.3} ms)",
        ingest_time.as_secs_f64(),
        turns_total as f64 / ingest_time.as_secs_f64().max(1e-9),
        query_time.as_secs_f64(),
        queries as f64 / query_time.as_secs_f64().max(1e-9),
        at(0.50).as_secs_f64() * 1000.0,
        at(0.99).as_secs_f64() * 1000.0
    );
}

/// The questions left out by fold `fold` of `n`: those of conversations
/// `fold` and `fold + 1` (mod `n`).
fn left_out(fold: usize, n: usize, conv: usize) -> bool {
    conv == fold || conv == (fold + 1) % n
}

/// The rotation report (see the module docs); with `earlier` outcomes of
/// the same questions, the change per fold.
fn rotation(names: &[&str], outcomes: &[Outcome], overall: Tally, earlier: Option<&[Outcome]>) {
    let n = names.len();
    if n < 3 {
        return;
    }
    println!("--- rotation: fold i leaves out conversations i and i+1 (mod {n}), tunes on the other {}", n - 2);
    let (mut mean, mut mean_cat) = ((0.0, 0.0), BTreeMap::<u64, (f64, f64)>::new());
    let (mut wins_tune, mut wins_out, mut delta_out) = (0, 0, (0.0, 0.0));
    for fold in 0..n {
        let out = Tally::of(outcomes.iter().filter(|o| left_out(fold, n, o.0)));
        let tune = Tally::of(outcomes.iter().filter(|o| !left_out(fold, n, o.0)));
        let (o5, o10) = out.pct();
        let (t5, t10) = tune.pct();
        mean = (mean.0 + o5 / n as f64, mean.1 + o10 / n as f64);
        let mut cats = String::new();
        for cat in 1..=4u64 {
            let c = Tally::of(outcomes.iter().filter(|o| left_out(fold, n, o.0) && o.1 == cat));
            let (c5, c10) = c.pct();
            let m = mean_cat.entry(cat).or_default();
            *m = (m.0 + c5 / n as f64, m.1 + c10 / n as f64);
            cats += &format!("  cat{cat} {c5:>5.1}/{c10:>5.1}");
        }
        let label = format!("{}+{}", names[fold], names[(fold + 1) % n]);
        println!("fold {} out {label:<17} n={:<4} R@5 {o5:>5.1}%  R@10 {o10:>5.1}% | tune n={:<4} R@5 {t5:>5.1}%  R@10 {t10:>5.1}% |{cats}", fold + 1, out.n, tune.n);
        if let Some(e) = earlier {
            let (eo5, eo10) = Tally::of(e.iter().filter(|o| left_out(fold, n, o.0))).pct();
            let (et5, et10) = Tally::of(e.iter().filter(|o| !left_out(fold, n, o.0))).pct();
            let (dt, dout) = ((t5 - et5, t10 - et10), (o5 - eo5, o10 - eo10));
            // A fold wins when R@10 rises, or holds while R@5 rises.
            let wins = |d: (f64, f64)| d.1 > 1e-9 || (d.1.abs() <= 1e-9 && d.0 > 1e-9);
            wins_tune += usize::from(wins(dt));
            wins_out += usize::from(wins(dout));
            delta_out = (delta_out.0 + dout.0 / n as f64, delta_out.1 + dout.1 / n as f64);
            println!("  change: tune R@5 {:+.1} R@10 {:+.1} | left out R@5 {:+.1} R@10 {:+.1}", dt.0, dt.1, dout.0, dout.1);
        }
    }
    let (a5, a10) = overall.pct();
    println!("mean-left-out R@5 {:>5.1}%  R@10 {:>5.1}%   (all {n}: R@5 {a5:>5.1}%  R@10 {a10:>5.1}%)", mean.0, mean.1);
    for (cat, (m5, m10)) in &mean_cat {
        println!("mean-left-out cat {cat} R@5 {m5:>5.1}%  R@10 {m10:>5.1}%");
    }
    if earlier.is_some() {
        println!("against the earlier run: wins on tune in {wins_tune}/{n} folds, on left out in {wins_out}/{n}; mean left-out change R@5 {:+.2} R@10 {:+.2}", delta_out.0, delta_out.1);
    }
}

/// Outcomes saved by `--save`; they must be of the same questions as `now`.
fn read_outcomes(path: &Path, now: &[Outcome]) -> Vec<Outcome> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let parse = |l: &str| -> Option<Outcome> {
        let f: Vec<&str> = l.split_whitespace().collect();
        Some((f.first()?.parse().ok()?, f.get(1)?.parse().ok()?, f.get(2)?.parse().ok()?, f.get(3)?.parse().ok()?, f.get(4)?.parse().ok()?))
    };
    let out: Vec<Outcome> = text.lines().filter_map(parse).collect();
    let same = out.len() == now.len() && out.iter().zip(now).all(|(a, b)| a.0 == b.0 && a.1 == b.1);
    assert!(same, "{}: not the same questions as this run", path.display());
    out
}
