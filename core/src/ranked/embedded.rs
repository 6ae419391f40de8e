//! What an embedding provider gave the ranked index (hybrid mode only):
//! one unit vector per thought, of its [`embedding_text`], and one per
//! distinct word, as the word was first seen, for [`super::expansion`].
//! Kept aligned with the index (one slot per thought and per word) however
//! the provider answers.

use super::embedding::{dot, embedding_text, normalize, EmbeddingProvider};
use crate::thought::Thought;
use std::sync::Arc;

/// Unit-length vectors of an index's terms, one row per term id, in one
/// flat buffer (scanned whole for every query word). A term without a
/// vector, or with one of another dimension, has a zero row and is never
/// similar to anything.
#[derive(Debug, Clone, Default)]
pub struct TermVectors {
    dim: usize,
    count: usize,
    rows: Vec<f32>,
}

impl FromIterator<Option<Vec<f32>>> for TermVectors {
    /// Term vectors in order, as [`TermVectors::push`] appends them.
    fn from_iter<I: IntoIterator<Item = Option<Vec<f32>>>>(rows: I) -> Self {
        let mut v = TermVectors::default();
        rows.into_iter().for_each(|r| v.push(r));
        v
    }
}

impl TermVectors {
    /// Appends the next term's vector.
    pub fn push(&mut self, vector: Option<Vec<f32>>) {
        if let (0, Some(v)) = (self.dim, &vector) {
            self.dim = v.len();
            self.rows = vec![0.0; self.count * self.dim];
        }
        self.count += 1;
        match vector.filter(|v| v.len() == self.dim && self.dim > 0) {
            Some(mut v) => {
                normalize(&mut v);
                self.rows.extend(v);
            }
            None => self.rows.resize(self.count * self.dim, 0.0),
        }
    }

    /// Number of terms (rows).
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether no term has a row.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The unit vector of term `id` (`None` when it has none).
    pub fn row(&self, id: u32) -> Option<&[f32]> {
        let row = self.rows.get(id as usize * self.dim..(id as usize + 1) * self.dim)?;
        (self.dim > 0 && row.iter().any(|x| *x != 0.0)).then_some(row)
    }

    /// Terms whose cosine to `query` is at least `min`, with that cosine, in
    /// term order.
    pub fn similar(&self, query: &[f32], min: f32) -> Vec<(f32, u32)> {
        if self.dim == 0 || query.len() != self.dim {
            return Vec::new();
        }
        let mut q = query.to_vec();
        normalize(&mut q);
        self.rows
            .chunks_exact(self.dim)
            .enumerate()
            .filter_map(|(id, row)| {
                let sim = dot(row, &q);
                (sim >= min).then_some((sim, id as u32))
            })
            .collect()
    }
}

/// The vectors of an index's thoughts and words, and the provider that
/// makes them.
#[derive(Clone, Default)]
pub(crate) struct Embedded {
    /// One per thought, unit length.
    thoughts: Vec<Option<Box<[f32]>>>,
    /// One row per term id.
    words: TermVectors,
    embedder: Option<Arc<dyn EmbeddingProvider>>,
}

/// `v` scaled to unit length (queries then need only a dot product).
fn unit(mut v: Vec<f32>) -> Box<[f32]> {
    normalize(&mut v);
    v.into_boxed_slice()
}

impl Embedded {
    /// Embeds the next thought (its `content`) and the words it brought to
    /// the index (`new_words`, as first seen), in one batch, when a provider
    /// is registered; without one, adds empty slots.
    pub(crate) fn add(&mut self, content: &str, new_words: &[Box<str>]) {
        match &self.embedder {
            Some(e) => {
                let mut texts: Vec<&str> = vec![embedding_text(content)];
                texts.extend(new_words.iter().map(|s| &**s));
                // One answer per text, whatever the provider returns.
                let mut out = e.embed_batch(&texts).into_iter();
                self.thoughts.push(out.next().flatten().map(unit));
                for _ in new_words {
                    self.words.push(out.next().flatten());
                }
            }
            None => {
                self.thoughts.push(None);
                new_words.iter().for_each(|_| self.words.push(None));
            }
        }
    }

    /// Registers (or clears) the provider and embeds every thought of
    /// `thoughts` and every word of `words` (all the index holds, in order).
    pub(crate) fn set_embedder(&mut self, embedder: Option<Arc<dyn EmbeddingProvider>>, thoughts: &[Thought], words: &[Box<str>]) {
        self.thoughts = match &embedder {
            Some(e) => {
                let texts: Vec<&str> = thoughts.iter().map(|t| embedding_text(&t.content)).collect();
                // One answer per text, whatever the provider returns.
                let mut out = e.embed_batch(&texts).into_iter();
                thoughts.iter().map(|_| out.next().flatten().map(unit)).collect()
            }
            None => vec![None; thoughts.len()],
        };
        self.words = TermVectors::default();
        match &embedder {
            Some(e) => {
                let words: Vec<&str> = words.iter().map(|s| &**s).collect();
                let mut out = e.embed_batch(&words).into_iter();
                for _ in 0..words.len() {
                    self.words.push(out.next().flatten());
                }
            }
            None => words.iter().for_each(|_| self.words.push(None)),
        }
        self.embedder = embedder;
    }

    /// The registered provider.
    pub(crate) fn embedder(&self) -> Option<&Arc<dyn EmbeddingProvider>> {
        self.embedder.as_ref()
    }

    /// Thought `doc`'s vector, unit length.
    pub(crate) fn thought(&self, doc: u32) -> Option<&[f32]> {
        self.thoughts.get(doc as usize).and_then(|v| v.as_deref())
    }

    /// The words' vectors.
    pub(crate) fn words(&self) -> &TermVectors {
        &self.words
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::{Chain, NewThought};
    use crate::record::ChainFormat;
    use crate::thought::ThoughtType;

    #[test]
    fn rows_are_unit_length_and_missing_ones_are_never_similar() {
        let v: TermVectors = [None, Some(vec![3.0, 4.0]), Some(vec![1.0, 0.0, 0.0]), Some(vec![0.0, 2.0])].into_iter().collect();
        assert_eq!(v.len(), 4);
        assert_eq!(v.row(0), None, "a term seen before the first vector has a zero row");
        assert_eq!(v.row(1), Some(&[0.6, 0.8][..]));
        assert_eq!(v.row(2), None, "another dimension is treated as no vector");
        let sims = v.similar(&[0.0, 1.0], 0.5);
        assert_eq!(sims.iter().map(|s| s.1).collect::<Vec<_>>(), vec![1, 3]);
        assert!((sims[0].0 - 0.8).abs() < 1e-6 && (sims[1].0 - 1.0).abs() < 1e-6);
        assert!(v.similar(&[1.0, 0.0, 0.0], 0.0).is_empty(), "a query of another dimension matches nothing");
    }

    fn chain_with(contents: &[&str]) -> Chain {
        let mut c = Chain::new("t", ChainFormat::Binary);
        for (i, content) in contents.iter().enumerate() {
            let t = c.prepare_append(NewThought::new("ada", ThoughtType::FactLearned, content), format!("2026-01-01T00:00:0{i}.000Z"), format!("id-{i}"), [0; 16]).unwrap();
            c.commit(t);
        }
        c
    }

    /// Records every text it is asked to embed.
    #[derive(Debug, Default)]
    struct Recorder(std::sync::Mutex<Vec<String>>);

    impl EmbeddingProvider for Recorder {
        fn name(&self) -> &str {
            "recorder"
        }
        fn embed(&self, text: &str) -> Option<Vec<f32>> {
            self.0.lock().unwrap().push(text.to_string());
            Some(vec![text.len() as f32, 1.0])
        }
    }

    #[test]
    fn a_provider_embeds_each_thought_and_each_new_word_once() {
        let mut c = chain_with(&["[9 May] Painted fences"]);
        drop(c.ranked_index()); // built: registering embeds what it holds
        let rec = Arc::new(Recorder::default());
        c.set_embedding_provider(Some(rec.clone()));
        let seen = |r: &Recorder| std::mem::take(&mut *r.0.lock().unwrap());
        let first = seen(&rec);
        assert!(first.contains(&"Painted fences".to_string()), "the thought, without its stamp: {first:?}");
        assert!(first.contains(&"painted".to_string()) && first.contains(&"fences".to_string()), "its words as first seen: {first:?}");
        assert!(first.contains(&"ada".to_string()), "label terms as themselves: {first:?}");
        let t = c.prepare_append(NewThought::new("ada", ThoughtType::FactLearned, "Painting the fence blue"), "2026-01-01T00:00:05.000Z".into(), "id-5".into(), [0; 16]).unwrap();
        c.commit(t);
        let idx = c.ranked_index();
        let second = seen(&rec);
        assert_eq!(second, vec!["Painting the fence blue".to_string(), "blue".to_string()], "only the word the chain had not seen");
        assert_eq!(idx.term_vectors().len(), idx.surface_count());
        assert_eq!(idx.surface(idx.term_id("paint").unwrap()), "painted");
        assert!(idx.term_vectors().row(idx.term_id("blue").unwrap()).is_some());
    }

    /// Answers every batch with one vector too few.
    #[derive(Debug)]
    struct OneShort;

    impl EmbeddingProvider for OneShort {
        fn name(&self) -> &str {
            "one-short"
        }
        fn embed(&self, _: &str) -> Option<Vec<f32>> {
            Some(vec![1.0, 0.0])
        }
        fn embed_batch(&self, texts: &[&str]) -> Vec<Option<Vec<f32>>> {
            texts.iter().skip(1).map(|t| self.embed(t)).collect()
        }
    }

    #[test]
    fn a_provider_answering_short_batches_leaves_the_index_aligned() {
        let mut c = chain_with(&["alpha beta", "gamma"]);
        drop(c.ranked_index());
        c.set_embedding_provider(Some(Arc::new(OneShort)));
        let t = c.prepare_append(NewThought::new("ada", ThoughtType::FactLearned, "delta epsilon"), "2026-01-01T00:00:05.000Z".into(), "id-5".into(), [0; 16]).unwrap();
        c.commit(t);
        let idx = c.ranked_index();
        assert_eq!(idx.len(), 3);
        assert_eq!(idx.term_vectors().len(), idx.surface_count(), "one row per term");
        assert!(idx.vector(1).is_none() && idx.vector(0).is_some(), "the missing answer is the last thought's");
        assert!(idx.vector(2).is_some());
        assert!(idx.term_vectors().row(idx.term_id("epsilon").unwrap()).is_none() && idx.term_vectors().row(idx.term_id("delta").unwrap()).is_some());
    }
}
