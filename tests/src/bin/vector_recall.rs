//! Recall of the vector stage's nearest thoughts against brute force, on
//! real sentence vectors at up to a million thoughts.
//!
//! The ranked bench's hashed n-gram vectors of random words have no
//! structure (their nearest neighbours are near-ties of a noisy
//! similarity), so recall there says little about a real model. Here the
//! thoughts are real English sentences: the comments and prose of the text
//! files on the machine (Cargo's registry sources, rustup's toolchains,
//! Python's library, `/usr/share`: `.rs`, `.py`, `.md`, `.txt`, `.rst`,
//! the comments of `.js`, `.ts`, `.c`, `.h`, `.cc`, `.cpp`, and `.html`
//! without its tags), split into
//! sentences and deduplicated, files in path order; every
//! `--every`-th sentence is held out as a query. The vectors come from the
//! static word-embedding model (`scripts/make-static-model.sh`). For each
//! query the exact 10 nearest by `f32` cosine are compared with what
//! `ranked::search::nearest_rows` returns (the quantized rows; past 50k
//! thoughts the sign-sketch shortlist), and both are timed.
//!
//! `cargo run --release -p mentisdb-tests --bin vector-recall -- --static target/static-minilm-128.bin`

use clap::Parser;
use mentisdb_core::ranked::embedding::{cosine, normalize};
use mentisdb_core::ranked::search::nearest_rows;
use mentisdb_core::ranked::sketch::SketchedRows;
use mentisdb_core::ranked::EmbeddingProvider;
use mentisdb_embed_static::StaticEmbedder;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Parser)]
#[command(about = "Recall of the vector stage's nearest thoughts against brute force, on real sentences")]
struct Args {
    /// The static model file (from scripts/make-static-model.sh).
    #[arg(long = "static")]
    model: PathBuf,
    /// Where to read text files for sentences (repeatable; default: Cargo's
    /// registry sources, rustup's toolchains, /usr/lib/python3, /usr/share).
    #[arg(long)]
    corpus: Vec<PathBuf>,
    /// Thoughts in the chain.
    #[arg(long, default_value_t = 1_000_000)]
    thoughts: usize,
    /// Queries (held-out sentences).
    #[arg(long, default_value_t = 200)]
    queries: usize,
}

fn main() {
    let args = Args::parse();
    if let Err(e) = run(&args) {
        eprintln!("vector-recall: {e}");
        std::process::exit(1);
    }
}

fn run(args: &Args) -> Result<(), String> {
    let bytes = std::fs::read(&args.model).map_err(|e| format!("cannot read {}: {e}", args.model.display()))?;
    let model = StaticEmbedder::from_bytes(&bytes).map_err(|e| format!("{}: {e}", args.model.display()))?;
    let home = std::env::var("HOME").unwrap_or_default();
    let corpus = if args.corpus.is_empty() {
        vec![
            PathBuf::from(std::env::var("CARGO_HOME").unwrap_or_else(|_| format!("{home}/.cargo"))).join("registry/src"),
            PathBuf::from(std::env::var("RUSTUP_HOME").unwrap_or_else(|_| format!("{home}/.rustup"))).join("toolchains"),
            PathBuf::from("/usr/lib/python3"),
            PathBuf::from("/usr/share"),
        ]
    } else {
        args.corpus.clone()
    };
    let started = Instant::now();
    let mut files = Vec::new();
    for dir in &corpus {
        text_files(dir, &mut files);
    }
    files.sort();
    let mut seen = HashSet::new();
    let mut sentences = Vec::new();
    let wanted = args.thoughts + args.queries;
    for (i, f) in files.iter().enumerate() {
        if sentences.len() >= wanted {
            break;
        }
        if let Ok(mut text) = std::fs::read_to_string(f) {
            if f.extension().is_some_and(|x| x == "html") {
                text = without_tags(&text);
            }
            prose_sentences(&text).into_iter().filter(|s| seen.insert(s.clone())).for_each(|s| sentences.push(s));
        }
        if i % 2000 == 0 {
            eprint!("\rreading: {} files, {} sentences", i, sentences.len());
        }
    }
    eprintln!("\rread {} sentences from {} files in {:.1} s", sentences.len(), files.len(), started.elapsed().as_secs_f64());
    if sentences.len() < wanted {
        return Err(format!("only {} distinct sentences in {} files (asked for {} thoughts + {} queries)", sentences.len(), files.len(), args.thoughts, args.queries));
    }
    sentences.truncate(wanted);
    // Every `every`-th sentence is a query, the rest are thoughts.
    let every = wanted / args.queries;
    let (mut queries, mut thoughts) = (Vec::new(), Vec::new());
    for (i, s) in sentences.into_iter().enumerate() {
        if i % every == every - 1 && queries.len() < args.queries {
            queries.push(s);
        } else {
            thoughts.push(s);
        }
    }
    let started = Instant::now();
    let mut exact: Vec<Vec<f32>> = Vec::with_capacity(thoughts.len());
    let mut rows = SketchedRows::default();
    for (i, t) in thoughts.iter().enumerate() {
        let v = model.embed(t).map(|mut v| {
            normalize(&mut v);
            v
        });
        exact.push(v.clone().unwrap_or_default());
        rows.push(v);
        if i % 100_000 == 0 {
            eprint!("\rembedding: {i} of {}", thoughts.len());
        }
    }
    eprintln!("\rembedded {} thoughts in {:.1} s ({} dimensions)", thoughts.len(), started.elapsed().as_secs_f64(), model.dim());
    let (mut kept, mut total) = (0usize, 0usize);
    let (mut exact_ms, mut stage_ms) = (Vec::new(), Vec::new());
    for q in &queries {
        let Some(qv) = model.embed(q) else { continue };
        let t = Instant::now();
        let mut sims: Vec<(f32, u32)> = exact.iter().enumerate().map(|(d, v)| (cosine(&qv, v), d as u32)).collect();
        sims.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
        sims.truncate(10);
        exact_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        let got = nearest_rows(&rows, &qv, 10, &mentisdb_core::Sequential);
        stage_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        kept += sims.iter().filter(|(_, d)| got.iter().any(|(_, g)| g == d)).count();
        total += sims.len();
    }
    println!(
        "vector recall on {} real sentences ({} dims): {:.3} of the exact top 10 over {} queries; nearest_rows p50 {:.2} ms on one thread (brute force f32 p50 {:.2} ms); {} bytes of vector per thought",
        thoughts.len(),
        model.dim(),
        kept as f64 / total.max(1) as f64,
        queries.len(),
        median(&mut stage_ms),
        median(&mut exact_ms),
        rows.bytes() / thoughts.len()
    );
    Ok(())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Every `.rs`, `.py`, `.md`, `.txt` and `.html` file under `dir`.
fn text_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() && !p.is_symlink() {
            text_files(&p, out);
        } else if p.extension().is_some_and(|x| ["rs", "py", "md", "txt", "html", "js", "ts", "c", "h", "cc", "cpp", "rst"].iter().any(|k| x == *k)) {
            out.push(p);
        }
    }
}

/// `html` with every tag (`<...>`) replaced by a space, and `&amp;`-style
/// entities by a space too.
fn without_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let (mut in_tag, mut in_entity) = (false, false);
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            '&' if !in_tag => in_entity = true,
            c if in_entity && c.is_whitespace() => {
                in_entity = false;
                out.push(c);
            }
            ';' if in_entity => {
                in_entity = false;
                out.push(' ');
            }
            _ if in_tag || in_entity => {}
            _ => out.push(c),
        }
    }
    out
}

/// The prose sentences of `source`: lines with their comment markers
/// (`///`, `//!`, `//`, `#`, `*`) taken off, joined into paragraphs (a line
/// of code or a blank line ends one), split after `.`, `?` and `!`; kept
/// when a sentence starts with a capital letter, has 6 to 40 words and is
/// at least 90% letters and spaces (code and links left out).
fn prose_sentences(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut paragraph = String::new();
    let flush = |p: &mut String, out: &mut Vec<String>| {
        for s in p.split_inclusive(['.', '?', '!']) {
            let s = s.trim();
            let words = s.split_whitespace().count();
            let letters = s.chars().filter(|c| c.is_alphabetic() || *c == ' ').count();
            if s.starts_with(|c: char| c.is_uppercase()) && (6..=40).contains(&words) && letters * 10 >= s.chars().count() * 9 {
                out.push(s.to_string());
            }
        }
        p.clear();
    };
    for line in source.lines() {
        let t = line.trim_start();
        let text = ["///", "//!", "//", "#", "*"].iter().find_map(|m| t.strip_prefix(m)).unwrap_or(t).trim();
        let prose = !text.is_empty() && !text.starts_with("```") && !text.ends_with(['{', '}', ';', ')', ':', ',']);
        if !prose {
            flush(&mut paragraph, &mut out);
            continue;
        }
        paragraph.push(' ');
        paragraph.push_str(text);
    }
    flush(&mut paragraph, &mut out);
    out
}
