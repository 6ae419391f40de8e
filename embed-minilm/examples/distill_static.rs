//! Distills all-MiniLM-L6-v2 into a static word-embedding model for
//! `mentisdb-embed-static` (model2vec-style): every vocabulary token is
//! embedded alone, as MiniLM sees it (`[CLS] token [SEP]`, mean-pooled),
//! and the table is written in the embed-static file format (int8 rows).
//!
//! ```text
//! cargo run --release -p mentisdb-embed-minilm --example distill_static -- MODEL_DIR OUT [--dim N] [--pca|--random] [--center] [--zipf]
//! ```
//!
//! * `[unused*]` tokens are dropped; `[PAD]`, `[UNK]`, `[CLS]`, `[SEP]`,
//!   `[MASK]` are kept with zero rows (they add nothing to a mean).
//! * `--center` subtracts the mean token vector (static vectors of one
//!   encoder share a large common direction).
//! * `--dim N` reduces to N dimensions by projecting on the N leading
//!   principal directions of the token vectors (`--pca`, the default) or
//!   on a fixed random ±1 projection seeded deterministically (`--random`).
//! * `--zipf` weights each token by `ln(2 + rank)`, rank being its position
//!   in the vocabulary (BERT's vocabulary is roughly frequency ordered), so
//!   frequent tokens weigh less in a text's mean.
//!
//! Measured on LoCoMo (`locomo-bench --static FILE`, R@5 / R@10 all five
//! conversations; lexical alone 72.1 / 78.7, MiniLM hybrid 74.1 / 82.0),
//! 2026-11-25. Differences under a point are within what one question
//! more or less moves; the default (`scripts/make-static-model.sh`) is
//! PCA 128 + Zipf: small and never worse than the full table.
//!
//! | options | size | R@5 / R@10 |
//! |---------|------|------------|
//! | (none: 384 dims) | 11.7 MB | 72.4 / 79.5 |
//! | `--center` | 11.7 MB | 72.3 / 78.8 |
//! | `--zipf` | 11.7 MB | 73.1 / 79.8 |
//! | `--center --zipf` | 11.7 MB | 72.5 / 79.6 |
//! | `--dim 256` (PCA) | 7.9 MB | 72.6 / 79.7 |
//! | `--dim 256 --zipf` | 7.9 MB | 72.9 / 79.9 |
//! | `--dim 256 --random` | 7.9 MB | 72.0 / 79.8 |
//! | `--dim 256 --random --zipf` | 7.9 MB | 73.1 / 80.1 |
//! | `--dim 128` (PCA) | 4.1 MB | 73.0 / 80.0 |
//! | **`--dim 128 --zipf`** (PCA) | 4.1 MB | **73.0 / 80.1** |
//! | `--dim 128 --random` | 4.1 MB | 72.2 / 80.6 |
//! | `--dim 128 --random --zipf` | 4.1 MB | 73.0 / 80.1 |
//! | `--dim 96 --zipf` | 3.2 MB | 72.5 / 80.0 |
//! | `--dim 64 --zipf` | 2.2 MB | 70.9 / 78.8 |
//!
//! The raw MiniLM vectors are cached in the temporary directory
//! (`mentisdb-static-distill-raw.f32`), so trying options is quick.

use mentisdb_embed_minilm::MiniLm;
use std::path::Path;
use std::time::Instant;

const SPECIAL: [&str; 5] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
const D: usize = 384;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, out, opts @ ..] = args.as_slice() else {
        eprintln!("usage: distill_static MODEL_DIR OUT [--dim N] [--pca|--random] [--center] [--zipf]");
        std::process::exit(2);
    };
    let flag = |f: &str| opts.iter().any(|o| o == f);
    let dim: usize = opts.iter().position(|o| o == "--dim").and_then(|i| opts.get(i + 1)).and_then(|n| n.parse().ok()).unwrap_or(D).clamp(1, D);
    let model = MiniLm::load(Path::new(dir)).unwrap_or_else(|e| panic!("{e}"));
    let wp = model.tokenizer();
    let kept: Vec<(u32, &str)> = wp.tokens_by_id().into_iter().enumerate().filter_map(|(id, t)| t.map(|t| (id as u32, t))).filter(|(_, t)| !t.starts_with("[unused")).collect();
    let cache = std::env::temp_dir().join("mentisdb-static-distill-raw.f32");
    let mut raw: Vec<f32> = std::fs::read(&cache).ok().filter(|b| b.len() == kept.len() * D * 4).map(|b| b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4"))).collect()).unwrap_or_default();
    if raw.is_empty() {
        let t0 = Instant::now();
        let seqs: Vec<[u32; 3]> = kept.iter().map(|(id, _)| [wp.cls, *id, wp.sep]).collect();
        for chunk in seqs.chunks(512) {
            let refs: Vec<&[u32]> = chunk.iter().map(|s| &s[..]).collect();
            raw.extend(model.bert().embed_batch_ids(&refs).into_iter().flatten());
            eprint!("\r{} / {} tokens", raw.len() / D, seqs.len());
        }
        eprintln!("\nembedded in {:.1}s", t0.elapsed().as_secs_f64());
        let _ = std::fs::write(&cache, raw.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>());
    }
    let special: Vec<bool> = kept.iter().map(|(_, t)| SPECIAL.contains(t)).collect();
    let mut rows: Vec<Vec<f32>> = raw.chunks_exact(D).map(<[f32]>::to_vec).collect();
    let mean: Vec<f32> = {
        let n = special.iter().filter(|s| !**s).count().max(1) as f32;
        let mut m = vec![0.0f32; D];
        rows.iter().zip(&special).filter(|(_, s)| !**s).for_each(|(r, _)| m.iter_mut().zip(r).for_each(|(a, x)| *a += x / n));
        m
    };
    if dim < D {
        let basis = if flag("--random") { random_basis(dim) } else { pca_basis(&rows, &special, &mean, dim) };
        if flag("--center") {
            rows.iter_mut().for_each(|r| r.iter_mut().zip(&mean).for_each(|(x, m)| *x -= m));
        }
        rows = rows.iter().map(|r| basis.iter().map(|b| b.iter().zip(r).map(|(x, y)| x * y).sum()).collect()).collect();
    } else if flag("--center") {
        rows.iter_mut().for_each(|r| r.iter_mut().zip(&mean).for_each(|(x, m)| *x -= m));
    }
    for (i, (r, s)) in rows.iter_mut().zip(&special).enumerate() {
        let n = r.iter().map(|x| x * x).sum::<f32>().sqrt();
        let w = if flag("--zipf") { (2.0 + i as f32).ln() } else { 1.0 };
        r.iter_mut().for_each(|x| *x = if *s || n == 0.0 { 0.0 } else { *x / n * w });
    }
    let tokens: Vec<&str> = kept.iter().map(|(_, t)| *t).collect();
    let bytes = mentisdb_embed_static::write_model(&format!("static-minilm-distilled-{dim}"), &tokens, &rows).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(out, &bytes).unwrap_or_else(|e| panic!("{out}: {e}"));
    eprintln!("{out}: {} tokens x {dim} dimensions, {} bytes", tokens.len(), bytes.len());
}

/// `dim` fixed pseudo-random ±1/sqrt(dim) directions (xorshift64, fixed seed).
fn random_basis(dim: usize) -> Vec<Vec<f32>> {
    let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
    let scale = 1.0 / (dim as f32).sqrt();
    (0..dim)
        .map(|_| {
            (0..D)
                .map(|_| {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    if s & 1 == 0 { scale } else { -scale }
                })
                .collect()
        })
        .collect()
}

/// The `dim` leading principal directions of the rows (centered on
/// `mean`): the covariance's eigenvectors by cyclic Jacobi rotations.
fn pca_basis(rows: &[Vec<f32>], special: &[bool], mean: &[f32], dim: usize) -> Vec<Vec<f32>> {
    let mut a = vec![0.0f64; D * D];
    for r in rows.iter().zip(special).filter(|(_, s)| !**s).map(|(r, _)| r.iter().zip(mean).map(|(x, m)| x - m).collect::<Vec<f32>>()) {
        for i in 0..D {
            let ri = r[i] as f64;
            for j in i..D {
                a[i * D + j] += ri * r[j] as f64;
            }
        }
    }
    for i in 0..D {
        for j in 0..i {
            a[i * D + j] = a[j * D + i];
        }
    }
    let mut v = vec![0.0f64; D * D];
    (0..D).for_each(|i| v[i * D + i] = 1.0);
    let total: f64 = a.iter().map(|x| x * x).sum();
    for _sweep in 0..30 {
        let off: f64 = (0..D).flat_map(|i| (0..D).filter(move |j| *j != i).map(move |j| (i, j))).map(|(i, j)| a[i * D + j] * a[i * D + j]).sum();
        if off < 1e-22 * total {
            break;
        }
        for p in 0..D {
            for q in p + 1..D {
                let apq = a[p * D + q];
                if apq.abs() < 1e-300 {
                    continue;
                }
                let theta = (a[q * D + q] - a[p * D + p]) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..D {
                    let (akp, akq) = (a[k * D + p], a[k * D + q]);
                    a[k * D + p] = c * akp - s * akq;
                    a[k * D + q] = s * akp + c * akq;
                }
                for k in 0..D {
                    let (apk, aqk) = (a[p * D + k], a[q * D + k]);
                    a[p * D + k] = c * apk - s * aqk;
                    a[q * D + k] = s * apk + c * aqk;
                }
                for k in 0..D {
                    let (vkp, vkq) = (v[k * D + p], v[k * D + q]);
                    v[k * D + p] = c * vkp - s * vkq;
                    v[k * D + q] = s * vkp + c * vkq;
                }
            }
        }
    }
    let mut order: Vec<usize> = (0..D).collect();
    order.sort_by(|x, y| a[y * D + y].total_cmp(&a[x * D + x]));
    let trace: f64 = (0..D).map(|i| a[i * D + i]).sum();
    let kept: f64 = order.iter().take(dim).map(|i| a[i * D + i]).sum();
    eprintln!("PCA: {dim} directions keep {:.1}% of the variance", 100.0 * kept / trace);
    order.into_iter().take(dim).map(|j| (0..D).map(|k| v[k * D + j] as f32).collect()).collect()
}
