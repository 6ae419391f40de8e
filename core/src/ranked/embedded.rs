//! What an embedding provider gave the ranked index (hybrid mode only):
//! one unit vector per thought, of its [`embedding_text`], and one per
//! distinct word, as the word was first seen, for [`super::expansion`].
//! Kept aligned with the index (one slot per thought and per word) however
//! the provider answers.

use super::embedding::{embedding_text, EmbeddingProvider};
use super::quantized::QuantizedRows;
use super::sketch::SketchedRows;
use std::sync::Arc;

/// The words' vectors: one quantized unit row per term id, scanned whole
/// for every query word ([`super::expansion`]).
pub type TermVectors = QuantizedRows;

/// The vectors of an index's thoughts and words, and the provider that
/// makes them.
#[derive(Clone, Default)]
pub(crate) struct Embedded {
    /// One per thought, unit length, with its sketch.
    thoughts: SketchedRows,
    /// One row per term id.
    words: TermVectors,
    embedder: Option<Arc<dyn EmbeddingProvider>>,
}

impl Embedded {
    /// Embeds the next thought (its `content`) and the words it brought to
    /// the index (`new_words`, as first seen), in one batch, when a provider
    /// is registered; without one, adds empty slots.
    pub(crate) fn add<'w>(&mut self, content: &'w str, new_words: impl ExactSizeIterator<Item = &'w str>) {
        match &self.embedder {
            Some(e) => {
                let mut texts: Vec<&str> = vec![embedding_text(content)];
                texts.extend(new_words);
                // One answer per text, whatever the provider returns.
                let mut out = e.embed_batch(&texts).into_iter();
                self.thoughts.push(out.next().flatten());
                for _ in 1..texts.len() {
                    self.words.push(out.next().flatten());
                }
            }
            None => {
                self.thoughts.push(None);
                new_words.for_each(|_| self.words.push(None));
            }
        }
    }

    /// Registers (or clears) the provider and embeds every thought of
    /// `thoughts` and every word of `words` (all the index holds, in order).
    pub(crate) fn set_embedder<'w>(&mut self, embedder: Option<Arc<dyn EmbeddingProvider>>, thoughts: crate::thought_list::Iter<'_>, words: impl ExactSizeIterator<Item = &'w str>) {
        self.thoughts = match &embedder {
            Some(e) => {
                let texts: Vec<&str> = thoughts.clone().map(|t| embedding_text(&t.content)).collect();
                // One answer per text, whatever the provider returns.
                let mut out = e.embed_batch(&texts).into_iter();
                thoughts.map(|_| out.next().flatten()).collect()
            }
            None => thoughts.map(|_| None).collect(),
        };
        self.words = TermVectors::default();
        match &embedder {
            Some(e) => {
                let words: Vec<&str> = words.collect();
                let mut out = e.embed_batch(&words).into_iter();
                for _ in 0..words.len() {
                    self.words.push(out.next().flatten());
                }
            }
            None => words.for_each(|_| self.words.push(None)),
        }
        self.embedder = embedder;
    }

    /// The registered provider.
    pub(crate) fn embedder(&self) -> Option<&Arc<dyn EmbeddingProvider>> {
        self.embedder.as_ref()
    }

    /// The thoughts' vectors, one row per thought.
    pub(crate) fn thoughts(&self) -> &SketchedRows {
        &self.thoughts
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
        assert!(idx.term_vectors().has(idx.term_id("blue").unwrap()));
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
        assert!(!idx.thought_vectors().rows().has(1) && idx.thought_vectors().rows().has(0), "the missing answer is the last thought's");
        assert!(idx.thought_vectors().rows().has(2));
        assert!(!idx.term_vectors().has(idx.term_id("epsilon").unwrap()) && idx.term_vectors().has(idx.term_id("delta").unwrap()));
    }
}
