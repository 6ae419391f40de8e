//! Embedding providers: the host supplies vectors, the core stores and
//! compares them. The core never loads a model or calls a network; a host
//! registers a provider with [`crate::MentisDb::set_embedding_provider`] and
//! every thought is embedded when it is committed.

use std::fmt::Debug;

/// Turns text into a dense vector. Implementations must be deterministic
/// (the same text gives the same vector) and return vectors of one fixed
/// dimension; `None` means "no vector for this text" and the thought is
/// then ranked lexically only.
pub trait EmbeddingProvider: Send + Sync + Debug {
    /// A short stable name, reported in results ("hashed-ngram-256", "all-MiniLM-L6-v2").
    fn name(&self) -> &str;

    /// The vector of one text.
    fn embed(&self, text: &str) -> Option<Vec<f32>>;

    /// Vectors of many texts; override when the model batches.
    fn embed_batch(&self, texts: &[&str]) -> Vec<Option<Vec<f32>>> {
        texts.iter().map(|t| self.embed(t)).collect()
    }
}

/// Cosine similarity; 0 when either vector is zero or the dimensions differ.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let (na, nb) = (dot(a, a), dot(b, b));
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot(a, b) / (na.sqrt() * nb.sqrt())
    }
}

/// Dot product of two equally long vectors (extra elements of the longer
/// are ignored). Eight running sums, so the compiler can use SIMD lanes
/// (one running sum forces strict left-to-right float addition).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 8;
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut sums = [0.0f32; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ca.zip(cb) {
        // Fixed-size arrays: no bounds checks in the loop, so it vectorizes.
        let (x, y): (&[f32; LANES], &[f32; LANES]) = (x.try_into().expect("exact chunk"), y.try_into().expect("exact chunk"));
        for i in 0..LANES {
            sums[i] += x[i] * y[i];
        }
    }
    sums.iter().sum::<f32>() + tail
}

/// Scales `v` to unit length in place (a zero vector stays zero).
pub fn normalize(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

/// Longest leading stamp [`embedding_text`] drops, in bytes.
pub const MAX_STAMP_BYTES: usize = 64;

/// The text a provider embeds for a thought: its content without a leading
/// time stamp in brackets (`"[1:56 pm on 8 May, 2023] Ada: ..."`,
/// `"[2024-05-08 13:56] ..."`: up to [`MAX_STAMP_BYTES`], with a digit in
/// it). The thought's timestamp already says when; a sentence embedder
/// reads a stamp as words, and on a short text they pull everything
/// written the same day toward each other. Tags and concepts are matched
/// lexically, with their own field weights.
pub fn embedding_text(content: &str) -> &str {
    let stamp = content.strip_prefix('[').and_then(|rest| rest.find(']').filter(|end| *end < MAX_STAMP_BYTES).map(|end| &rest[..end]));
    match stamp {
        Some(inner) if inner.contains(|c: char| c.is_ascii_digit()) => {
            let rest = content[inner.len() + 2..].trim_start();
            if rest.is_empty() {
                content
            } else {
                rest
            }
        }
        _ => content,
    }
}

/// An honest, dependency-free provider for tests and demos: character
/// trigrams of each lower-cased word (with boundary marks) hashed (FNV-1a)
/// into `dim` buckets with a sign bit, then unit-normalized. It captures
/// spelling overlap ("adopt" ~ "adoption"), not meaning.
#[derive(Debug, Clone, Copy)]
pub struct HashedNgramEmbedder {
    /// Number of buckets (the vector's dimension).
    pub dim: usize,
}

impl Default for HashedNgramEmbedder {
    fn default() -> Self {
        HashedNgramEmbedder { dim: 256 }
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl EmbeddingProvider for HashedNgramEmbedder {
    fn name(&self) -> &str {
        "hashed-ngram"
    }

    fn embed(&self, text: &str) -> Option<Vec<f32>> {
        if self.dim == 0 {
            return None;
        }
        let mut v = vec![0.0f32; self.dim];
        let mut any = false;
        for word in super::analyzer::words(text) {
            let marked: Vec<char> = std::iter::once('^').chain(word.chars()).chain(std::iter::once('$')).collect();
            for gram in marked.windows(3) {
                let s: String = gram.iter().collect();
                let h = fnv1a(s.as_bytes());
                let sign = if h >> 63 == 0 { 1.0 } else { -1.0 };
                v[(h % self.dim as u64) as usize] += sign;
                any = true;
            }
        }
        if !any {
            return None;
        }
        normalize(&mut v);
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_matches_the_plain_sum_whatever_the_length() {
        for len in [0usize, 1, 7, 8, 9, 19, 384] {
            let a: Vec<f32> = (0..len).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..len).map(|i| (i as f32 * 0.11).cos()).collect();
            let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - plain).abs() < 1e-4, "length {len}");
        }
        assert_eq!(dot(&[1.0, 2.0, 3.0], &[1.0, 1.0]), 3.0, "extra elements of the longer are ignored");
    }

    #[test]
    fn cosine_basics() {
        assert!((cosine(&[1.0, 0.0], &[1.0, 0.0]) - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 1.0]), 0.0);
        assert_eq!(cosine(&[1.0], &[1.0, 2.0]), 0.0);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 2.0]), 0.0);
    }

    #[test]
    fn embedding_text_drops_a_leading_time_stamp_only() {
        assert_eq!(embedding_text("[1:56 pm on 8 May, 2023] Ada: I paint."), "Ada: I paint.");
        assert_eq!(embedding_text("[2024-05-08 13:56]   deploy done"), "deploy done");
        assert_eq!(embedding_text("[IMPORTANT] read me"), "[IMPORTANT] read me", "a label without a digit is words");
        assert_eq!(embedding_text("[2024-05-08]"), "[2024-05-08]", "nothing but a stamp is kept whole");
        assert_eq!(embedding_text("Met on [8 May] at noon"), "Met on [8 May] at noon", "only a leading stamp");
        let long = format!("[{}] x", "1".repeat(MAX_STAMP_BYTES));
        assert_eq!(embedding_text(&long), long, "too long to be a stamp");
        assert_eq!(embedding_text("[é 1] ü"), "ü");
        assert_eq!(embedding_text("[unclosed 1 stamp"), "[unclosed 1 stamp");
    }

    #[test]
    fn hashed_ngrams_are_deterministic_and_reflect_spelling() {
        let e = HashedNgramEmbedder::default();
        let a = e.embed("adoption agencies").unwrap();
        assert_eq!(a, e.embed("adoption agencies").unwrap());
        assert_eq!(a.len(), 256);
        let near = cosine(&a, &e.embed("adopting an agency").unwrap());
        let far = cosine(&a, &e.embed("volcano sunset").unwrap());
        assert!(near > far, "near {near} far {far}");
        assert!(e.embed("  ,, ").is_none());
    }
}
