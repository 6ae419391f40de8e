//! The retrieval benches' embedding providers: lexical only, or hybrid with
//! all-MiniLM-L6-v2 (`--minilm DIR`), the static model distilled from it
//! (`--static FILE`) or the dependency-free hashed n-grams
//! (`--hybrid-ngram`).
//!
//! MiniLM's vectors are computed ahead, in parallel, for every text the
//! core will ask for ([`core_texts`]), and kept in a cache file in the
//! temporary directory (a deterministic model's vectors never change): the
//! core embeds one thought at a time under the chain's write lock, which
//! would make a bench of thousands of turns wait minutes.

use mentisdb_core::ranked::embedding::embedding_text;
use mentisdb_core::ranked::{Analyzer, EmbeddingProvider, HashedNgramEmbedder};
use mentisdb_embed_minilm::MiniLm;
use mentisdb_embed_static::StaticEmbedder;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Which provider a bench registers (none: lexical only).
#[derive(Debug, Default, Clone)]
pub enum Choice {
    /// Lexical only.
    #[default]
    Lexical,
    /// [`HashedNgramEmbedder`].
    HashedNgram,
    /// all-MiniLM-L6-v2 from a directory (`scripts/fetch-minilm.sh`).
    MiniLm(PathBuf),
    /// A static model file (`scripts/make-static-model.sh`).
    Static(PathBuf),
}

/// One thought as a bench appends it: content, agent id and tags.
pub struct Ingested<'a> {
    /// The thought's content.
    pub content: &'a str,
    /// Its `agent_id`.
    pub agent: &'a str,
    /// Its tags.
    pub tags: &'a [String],
}

/// What the core embeds for these thoughts and questions: each thought's
/// [`embedding_text`], each question, and every word of both (the index
/// embeds a term as the word it first saw; labels' terms as themselves).
pub fn core_texts<'a>(thoughts: impl Iterator<Item = Ingested<'a>> + Clone, questions: impl Iterator<Item = &'a str> + Clone) -> Vec<String> {
    let a = Analyzer;
    let mut texts: Vec<String> = thoughts.clone().map(|t| embedding_text(t.content).to_string()).chain(questions.clone().map(str::to_string)).collect();
    for t in thoughts {
        texts.extend(a.tokens(t.content).into_iter().map(|t| t.surface));
        texts.extend(t.tags.iter().flat_map(|tag| a.label_terms(tag)));
        texts.extend(a.label_terms(t.agent));
    }
    texts.extend(questions.flat_map(|q| a.tokens(q).into_iter().map(|t| t.surface)));
    texts
}

/// The provider of `choice` (`None` for lexical). `texts` (see
/// [`core_texts`]) are what MiniLM embeds ahead; `cache` names the cache
/// file in the temporary directory. Panics with the file's name when a
/// model cannot be read: a bench cannot run without the model it was asked
/// for.
pub fn provider(choice: &Choice, texts: impl FnOnce() -> Vec<String>, cache: &str) -> Option<Arc<dyn EmbeddingProvider>> {
    match choice {
        Choice::Lexical => None,
        Choice::HashedNgram => Some(Arc::new(HashedNgramEmbedder::default())),
        Choice::Static(file) => {
            let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            Some(Arc::new(StaticEmbedder::from_bytes(&bytes).unwrap_or_else(|e| panic!("{}: {e}", file.display()))))
        }
        Choice::MiniLm(dir) => {
            let model: Arc<dyn EmbeddingProvider> = Arc::new(MiniLm::load(dir).unwrap_or_else(|e| panic!("{e}")));
            Some(Arc::new(Precomputed::new(model, texts(), 2, &std::env::temp_dir().join(cache))))
        }
    }
}

/// A provider whose vectors were computed ahead, in parallel.
#[derive(Debug)]
pub struct Precomputed {
    name: String,
    vectors: HashMap<String, Vec<f32>>,
    inner: Arc<dyn EmbeddingProvider>,
}

impl Precomputed {
    /// Embeds `texts` not already in the cache file at `cache`, with
    /// `threads` threads, and writes the cache back.
    pub fn new(inner: Arc<dyn EmbeddingProvider>, texts: Vec<String>, threads: usize, cache: &Path) -> Self {
        let t0 = Instant::now();
        let mut vectors = read_cache(cache);
        let todo: Vec<String> = texts.into_iter().filter(|t| !vectors.contains_key(t)).collect::<BTreeSet<_>>().into_iter().collect();
        let cached = vectors.len();
        if !todo.is_empty() {
            let chunks: Vec<Vec<String>> = todo.chunks(todo.len().div_ceil(threads.max(1)).max(1)).map(|c| c.to_vec()).collect();
            let fresh: Vec<(String, Vec<f32>)> = std::thread::scope(|s| {
                let handles: Vec<_> = chunks
                    .into_iter()
                    .map(|chunk| {
                        let inner = inner.clone();
                        s.spawn(move || chunk.into_iter().filter_map(|t| inner.embed(&t).map(|v| (t, v))).collect::<Vec<_>>())
                    })
                    .collect();
                handles.into_iter().flat_map(|h| h.join().expect("embedding thread")).collect()
            });
            vectors.extend(fresh);
            write_cache(cache, &vectors);
        }
        eprintln!("embedded {} texts with {} in {:.1}s ({cached} from {})", todo.len(), inner.name(), t0.elapsed().as_secs_f64(), cache.display());
        Precomputed { name: inner.name().to_string(), vectors, inner }
    }
}

impl EmbeddingProvider for Precomputed {
    fn name(&self) -> &str {
        &self.name
    }
    fn embed(&self, text: &str) -> Option<Vec<f32>> {
        self.vectors.get(text).cloned().or_else(|| self.inner.embed(text))
    }
}

/// The cache file: records of (text length u32 LE, vector length u32 LE,
/// text bytes, f32 LE components); a truncated tail is ignored.
fn read_cache(path: &Path) -> HashMap<String, Vec<f32>> {
    let mut out = HashMap::new();
    let Ok(b) = std::fs::read(path) else { return out };
    let mut i = 0;
    let u32_at = |i: usize| b.get(i..i + 4).map(|x| u32::from_le_bytes([x[0], x[1], x[2], x[3]]) as usize);
    while let (Some(tl), Some(vl)) = (u32_at(i), u32_at(i + 4)) {
        let (ts, vs) = (i + 8, i + 8 + tl);
        let Some(text) = b.get(ts..vs).and_then(|t| std::str::from_utf8(t).ok()) else { break };
        let Some(raw) = b.get(vs..vs + 4 * vl) else { break };
        out.insert(text.to_string(), raw.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect());
        i = vs + 4 * vl;
    }
    out
}

fn write_cache(path: &Path, vectors: &HashMap<String, Vec<f32>>) {
    let mut b = Vec::new();
    for (t, v) in vectors {
        b.extend((t.len() as u32).to_le_bytes());
        b.extend((v.len() as u32).to_le_bytes());
        b.extend(t.as_bytes());
        v.iter().for_each(|x| b.extend(x.to_le_bytes()));
    }
    let _ = std::fs::write(path, b);
}
