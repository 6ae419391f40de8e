//! # mentisdb-embed-static: a static word-embedding provider
//!
//! **Contract.** [`StaticEmbedder::from_bytes`] reads a model file the host
//! supplies (a page's `Uint8Array`, a WASI host's bytes, a native file) and
//! never fetches anything. The embedder implements
//! [`mentisdb_core::ranked::EmbeddingProvider`]: a text's vector is the mean
//! of the vectors of its WordPiece tokens (BERT uncased tokenization), unit
//! normalized; a text none of whose tokens has a non-zero vector has no
//! vector (`None`), and the core then ranks it lexically only. It is
//! deterministic, has no state besides the model, and builds for
//! `wasm32-unknown-unknown` (dependencies: `mentisdb-core`, `serde_json`).
//!
//! This is the model2vec idea: a sentence encoder's output for each
//! vocabulary token alone, stored as a table. `embed-minilm`'s
//! `distill_static` example builds such a table from all-MiniLM-L6-v2
//! (`scripts/make-static-model.sh`); per-token weights (e.g. a Zipf-like
//! down-weighting of frequent tokens) are baked into the rows' scales, so a
//! plain mean of the stored rows is the weighted mean.
//!
//! ## Model file format (version 1, all integers and floats little-endian)
//!
//! | bytes | field |
//! |-------|-------|
//! | 8 | magic `MDBSTEMB` |
//! | 4 | version, `u32` = 1 |
//! | 4 | `dim`, `u32`, 1..=4096 |
//! | 4 | `rows`, `u32`: number of tokens |
//! | 4 + n | name length `u32`, then the provider's name (UTF-8; empty: `static-<dim>`) |
//! | 4 + n | vocabulary length `u32`, then the vocabulary: `rows` tokens separated by `\n` (UTF-8), line `i` being token `i`; it must hold `[UNK]` |
//! | rows × (4 + dim) | per token: scale `f32`, then `dim` × `i8`; the token's vector is scale × values |
//!
//! Nothing may follow the last row. [`write_model`] writes this format
//! (quantizing each row to int8 with scale `max |x| / 127`).

mod tokenizer;

pub use tokenizer::WordPiece;

use mentisdb_core::ranked::EmbeddingProvider;
use std::fmt;

/// The file's first eight bytes.
pub const MAGIC: &[u8; 8] = b"MDBSTEMB";
/// The format version [`StaticEmbedder::from_bytes`] reads.
pub const VERSION: u32 = 1;
/// Largest dimension accepted.
pub const MAX_DIM: usize = 4096;

/// Why a model file was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "static embedding model: {}", self.0)
    }
}

impl std::error::Error for Error {}

fn err<T>(msg: impl Into<String>) -> Result<T, Error> {
    Err(Error(msg.into()))
}

/// A static word-embedding model: one int8 vector (with an f32 scale) per
/// WordPiece token.
#[derive(Clone)]
pub struct StaticEmbedder {
    name: String,
    dim: usize,
    tokenizer: WordPiece,
    scales: Vec<f32>,
    values: Vec<i8>,
}

impl fmt::Debug for StaticEmbedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticEmbedder").field("name", &self.name).field("dim", &self.dim).field("tokens", &self.scales.len()).finish()
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], Error> {
        if self.0.len() < n {
            return err(format!("truncated ({what})"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn u32(&mut self, what: &str) -> Result<u32, Error> {
        Ok(u32::from_le_bytes(self.take(4, what)?.try_into().expect("four bytes")))
    }
    fn str(&mut self, what: &str) -> Result<&'a str, Error> {
        let n = self.u32(what)? as usize;
        std::str::from_utf8(self.take(n, what)?).map_err(|_| Error(format!("{what} is not UTF-8")))
    }
}

impl StaticEmbedder {
    /// Reads a model file (format in the crate docs).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let mut r = Reader(bytes);
        if r.take(8, "magic")? != MAGIC {
            return err("not a model file (bad magic)");
        }
        let version = r.u32("version")?;
        if version != VERSION {
            return err(format!("unsupported version {version}"));
        }
        let dim = r.u32("dim")? as usize;
        if dim == 0 || dim > MAX_DIM {
            return err(format!("dimension {dim} out of range"));
        }
        let rows = r.u32("rows")? as usize;
        let name = r.str("name")?;
        let name = if name.is_empty() { format!("static-{dim}") } else { name.to_string() };
        let vocab = r.str("vocabulary")?;
        if vocab.split('\n').count() != rows {
            return err(format!("vocabulary has {} tokens, rows say {rows}", vocab.split('\n').count()));
        }
        let tokenizer = WordPiece::from_vocab_list(vocab).map_err(Error)?;
        if r.0.len() != rows * (4 + dim) {
            return err(format!("{} bytes of rows, expected {}", r.0.len(), rows * (4 + dim)));
        }
        let mut scales = Vec::with_capacity(rows);
        let mut values = Vec::with_capacity(rows * dim);
        for row in r.0.chunks_exact(4 + dim) {
            let scale = f32::from_le_bytes(row[..4].try_into().expect("four bytes"));
            scales.push(if scale.is_finite() { scale } else { 0.0 });
            values.extend(row[4..].iter().map(|b| *b as i8));
        }
        Ok(StaticEmbedder { name, dim, tokenizer, scales, values })
    }

    /// The vectors' dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The tokenizer (the model's vocabulary).
    pub fn tokenizer(&self) -> &WordPiece {
        &self.tokenizer
    }
}

impl EmbeddingProvider for StaticEmbedder {
    fn name(&self) -> &str {
        &self.name
    }

    fn embed(&self, text: &str) -> Option<Vec<f32>> {
        let mut sum = vec![0.0f32; self.dim];
        for id in self.tokenizer.pieces(text) {
            let id = id as usize;
            let scale = self.scales[id];
            if scale == 0.0 {
                continue;
            }
            let row = &self.values[id * self.dim..(id + 1) * self.dim];
            sum.iter_mut().zip(row).for_each(|(s, v)| *s += scale * *v as f32);
        }
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm == 0.0 || !norm.is_finite() {
            return None;
        }
        sum.iter_mut().for_each(|x| *x /= norm);
        Some(sum)
    }
}

/// Writes a model file: `tokens[i]` (no `\n` in it) gets vector `rows[i]`,
/// quantized to int8 with a per-row scale. All rows must have one length.
pub fn write_model(name: &str, tokens: &[&str], rows: &[Vec<f32>]) -> Result<Vec<u8>, Error> {
    let dim = rows.first().map_or(0, Vec::len);
    if tokens.len() != rows.len() || dim == 0 || dim > MAX_DIM || rows.iter().any(|r| r.len() != dim) {
        return err("tokens and rows differ in number, or rows in length");
    }
    if tokens.iter().any(|t| t.contains('\n')) {
        return err("a token holds a newline");
    }
    let vocab = tokens.join("\n");
    let mut out = Vec::with_capacity(32 + name.len() + vocab.len() + rows.len() * (4 + dim));
    out.extend_from_slice(MAGIC);
    for n in [VERSION, dim as u32, rows.len() as u32, name.len() as u32] {
        out.extend_from_slice(&n.to_le_bytes());
    }
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(&(vocab.len() as u32).to_le_bytes());
    out.extend_from_slice(vocab.as_bytes());
    for row in rows {
        let max = row.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        let scale = if max.is_finite() && max > 0.0 { max / 127.0 } else { 0.0 };
        out.extend_from_slice(&scale.to_le_bytes());
        out.extend(row.iter().map(|x| if scale == 0.0 { 0 } else { (x / scale).round().clamp(-127.0, 127.0) as i8 as u8 }));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mentisdb_core::ranked::embedding::cosine;

    fn tiny() -> Vec<u8> {
        let tokens = ["[PAD]", "[UNK]", "car", "automobile", "banana", "auto", "##mobile", "the"];
        let rows = vec![
            vec![0.0, 0.0, 0.0],
            vec![0.0, 0.0, 0.0],
            vec![1.0, 0.1, 0.0],
            vec![0.9, 0.2, 0.0],
            vec![0.0, 0.0, 1.0],
            vec![0.5, 0.5, 0.0],
            vec![0.5, -0.5, 0.0],
            vec![0.0, 0.3, 0.0],
        ];
        write_model("tiny", &tokens, &rows).unwrap()
    }

    #[test]
    fn a_written_model_reads_back() {
        let m = StaticEmbedder::from_bytes(&tiny()).unwrap();
        assert_eq!((m.name(), m.dim(), m.tokenizer().len()), ("tiny", 3, 8));
        let car = m.embed("Car").unwrap();
        assert!((car.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5);
        assert!(cosine(&car, &[1.0, 0.1, 0.0]) > 0.999);
    }

    #[test]
    fn meaning_not_spelling_decides() {
        let m = StaticEmbedder::from_bytes(&tiny()).unwrap();
        let (car, auto, banana) = (m.embed("car").unwrap(), m.embed("the automobile").unwrap(), m.embed("banana").unwrap());
        assert!(cosine(&car, &auto) > 0.9);
        assert!(cosine(&car, &banana) < 0.1);
        // A whole word is one token; unknown marks add nothing.
        assert!(cosine(&m.embed("automobile!").unwrap(), &[0.9, 0.2, 0.0]) > 0.999);
        assert!(cosine(&m.embed("auto-mobile").unwrap(), &[0.5, 0.5, 0.0]) > 0.99);
    }

    #[test]
    fn texts_without_known_tokens_have_no_vector() {
        let m = StaticEmbedder::from_bytes(&tiny()).unwrap();
        assert_eq!(m.embed(""), None);
        assert_eq!(m.embed("zzz qqq"), None);
        assert_eq!(m.embed_batch(&["car", "xyz"]).iter().map(Option::is_some).collect::<Vec<_>>(), vec![true, false]);
    }

    #[test]
    fn bad_files_are_refused() {
        let good = tiny();
        assert!(StaticEmbedder::from_bytes(&good[..good.len() - 1]).is_err());
        assert!(StaticEmbedder::from_bytes(b"MDBSTEMX").is_err());
        let mut bad_version = good.clone();
        bad_version[8] = 2;
        assert!(StaticEmbedder::from_bytes(&bad_version).unwrap_err().0.contains("version"));
        let mut extra = good.clone();
        extra.push(0);
        assert!(StaticEmbedder::from_bytes(&extra).is_err());
        assert!(StaticEmbedder::from_bytes(&[]).is_err());
        assert!(write_model("x", &["a"], &[vec![1.0], vec![2.0]]).is_err());
        let no_unk = write_model("", &["a"], &[vec![1.0]]).unwrap();
        assert!(StaticEmbedder::from_bytes(&no_unk).is_err());
    }

    #[test]
    fn an_empty_name_names_the_dimension() {
        let m = StaticEmbedder::from_bytes(&write_model("", &["[UNK]", "a"], &[vec![0.0; 4], vec![1.0, 0.0, 0.0, 0.0]]).unwrap()).unwrap();
        assert_eq!(m.name(), "static-4");
    }
}
