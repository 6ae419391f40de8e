//! The incremental ranked index of one chain: an inverted index over four
//! fields, field-length statistics, timestamps and sessions, the graph of refs and typed relations in
//! both directions, which thoughts later thoughts retire, and (when the host
//! registered an embedding provider) one vector per thought.
//!
//! [`RankedIndex::add`] is called once per committed thought, in chain
//! order, by [`crate::Chain::commit`] — for appends and for every thought
//! verified when a chain is opened — so queries never rebuild anything.

use super::analyzer::Analyzer;
use super::embedding::EmbeddingProvider;
use super::expansion::TermVectors;
use crate::thought::{RelationKind, Thought};
use std::collections::HashMap;
use std::sync::Arc;

/// A searchable field of a thought.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    Content = 0,
    Tags = 1,
    Concepts = 2,
    /// Agent id, display name and owner.
    Agent = 3,
}

/// Number of fields.
pub const FIELD_COUNT: usize = 4;

/// BM25F weight of each field, by [`Field`] position. Tags and concepts are
/// chosen by the writer to describe the thought, so a hit there counts more
/// than one word in the content; the producing agent counts less.
pub const FIELD_WEIGHTS: [f32; FIELD_COUNT] = [1.0, 1.5, 1.5, 0.5];

impl Field {
    /// Every field, in index order.
    pub const ALL: [Field; FIELD_COUNT] = [Field::Content, Field::Tags, Field::Concepts, Field::Agent];

    /// The name reported in `match_sources`.
    pub fn as_str(self) -> &'static str {
        match self {
            Field::Content => "content",
            Field::Tags => "tags",
            Field::Concepts => "concepts",
            Field::Agent => "agent",
        }
    }

    /// The BM25F weight.
    pub fn weight(self) -> f32 {
        FIELD_WEIGHTS[self as usize]
    }
}

/// One occurrence list entry: term frequency of a term in one field of one thought.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Posting {
    pub doc: u32,
    pub field: u8,
    pub tf: u16,
}

/// What an edge is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeKind {
    /// An entry of the source thought's `refs`.
    Ref,
    /// A typed relation of the source thought.
    Relation(RelationKind),
}

impl EdgeKind {
    /// `"ref"` or the relation kind's name.
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Ref => "ref",
            EdgeKind::Relation(k) => k.as_str(),
        }
    }
}

/// A directed edge from a newer thought to an earlier one in the same chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    pub from: u32,
    pub to: u32,
    pub kind: EdgeKind,
}

/// The ranked index of one chain.
#[derive(Clone, Default)]
pub struct RankedIndex {
    terms: HashMap<String, u32>,
    postings: Vec<Vec<Posting>>,
    doc_freq: Vec<u32>,
    field_lens: Vec<[u16; FIELD_COUNT]>,
    field_len_sums: [u64; FIELD_COUNT],
    timestamps: Vec<i64>,
    outgoing: HashMap<u32, Vec<Edge>>,
    incoming: HashMap<u32, Vec<Edge>>,
    retired_by: HashMap<u32, Vec<u32>>,
    /// Whether any thought retires thought `doc` (fast path for `is_retired`).
    retired: Vec<bool>,
    /// Interned `session_id` of each thought ([`NO_SESSION`] when absent).
    sessions: Vec<u32>,
    /// Whether each thought's content asks a question.
    asks: Vec<bool>,
    session_ids: HashMap<String, u32>,
    vectors: Vec<Option<Box<[f32]>>>,
    /// Every thought's content as term ids, in order (stopwords dropped),
    /// one after another; thought `doc` ends at `content_ends[doc]`.
    content_terms: Vec<u32>,
    content_ends: Vec<usize>,
    /// The word each term was first seen as (what a provider embeds for it).
    surfaces: Vec<Box<str>>,
    /// One vector per term when a provider is registered ([`super::expansion`]).
    term_vectors: TermVectors,
    embedder: Option<Arc<dyn EmbeddingProvider>>,
}

impl std::fmt::Debug for RankedIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RankedIndex")
            .field("docs", &self.timestamps.len())
            .field("terms", &self.terms.len())
            .field("embedder", &self.embedder.as_ref().map(|e| e.name().to_string()))
            .finish_non_exhaustive()
    }
}

/// The session of a thought without `session_id`.
pub const NO_SESSION: u32 = u32::MAX;

/// `v` scaled to unit length (queries then need only a dot product).
fn unit(mut v: Vec<f32>) -> Box<[f32]> {
    super::embedding::normalize(&mut v);
    v.into_boxed_slice()
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

impl RankedIndex {
    /// Number of indexed thoughts.
    pub fn len(&self) -> usize {
        self.timestamps.len()
    }

    /// Whether nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.timestamps.is_empty()
    }

    /// Indexes the next thought of the chain (`t.index` must equal [`Self::len`]).
    pub fn add(&mut self, t: &Thought) {
        let doc = self.timestamps.len() as u32;
        debug_assert_eq!(t.index, doc as u64, "thoughts are indexed in chain order");
        let analyzer = Analyzer;
        let mut lens = [0u16; FIELD_COUNT];
        let first_new_term = self.surfaces.len();
        let content_tokens = analyzer.tokens(&t.content);
        for field in Field::ALL {
            let terms: Vec<String> = match field {
                Field::Content => content_tokens.iter().map(|tok| tok.term.clone()).collect(),
                Field::Tags => t.tags.iter().flat_map(|l| analyzer.label_terms(l)).collect(),
                Field::Concepts => t.concepts.iter().flat_map(|l| analyzer.label_terms(l)).collect(),
                Field::Agent => {
                    let mut v = analyzer.label_terms(&t.agent_id);
                    if !t.agent_name.eq_ignore_ascii_case(&t.agent_id) {
                        v.extend(analyzer.label_terms(&t.agent_name));
                    }
                    if let Some(o) = &t.agent_owner {
                        v.extend(analyzer.label_terms(o));
                    }
                    v
                }
            };
            lens[field as usize] = terms.len().min(u16::MAX as usize) as u16;
            self.field_len_sums[field as usize] += terms.len() as u64;
            let mut counts: Vec<(String, u16)> = Vec::new();
            // Which entry of `counts` each word is, in order.
            let mut slots: Vec<usize> = Vec::with_capacity(terms.len());
            for term in terms {
                match counts.iter().position(|(t, _)| *t == term) {
                    Some(i) => {
                        counts[i].1 = counts[i].1.saturating_add(1);
                        slots.push(i);
                    }
                    None => {
                        slots.push(counts.len());
                        counts.push((term, 1));
                    }
                }
            }
            let mut ids: Vec<u32> = Vec::with_capacity(counts.len());
            for (term, tf) in counts {
                let id = match self.terms.get(&term) {
                    Some(id) => *id,
                    None => {
                        let id = self.postings.len() as u32;
                        // A term is embedded as the word it was first seen as
                        // (a label's terms are their own words).
                        let surface = content_tokens.iter().find(|tok| tok.term == term).map_or(term.as_str(), |tok| tok.surface.as_str());
                        self.surfaces.push(surface.into());
                        self.terms.insert(term, id);
                        self.postings.push(Vec::new());
                        self.doc_freq.push(0);
                        id
                    }
                };
                let list = &mut self.postings[id as usize];
                if list.last().is_none_or(|p| p.doc != doc) {
                    self.doc_freq[id as usize] += 1;
                }
                list.push(Posting { doc, field: field as u8, tf });
                ids.push(id);
            }
            if field == Field::Content {
                self.content_terms.extend(slots.iter().map(|s| ids[*s]));
                self.content_ends.push(self.content_terms.len());
            }
        }
        self.field_lens.push(lens);
        self.retired.push(false);
        self.timestamps.push(t.timestamp_millis());
        let session = match &t.session_id {
            Some(sid) => {
                let next = self.session_ids.len() as u32;
                *self.session_ids.entry(sid.clone()).or_insert(next)
            }
            None => NO_SESSION,
        };
        self.sessions.push(session);
        self.asks.push(super::search::asks_question(&t.content));
        let mut edges: Vec<Edge> = t.refs.iter().map(|r| Edge { from: doc, to: *r as u32, kind: EdgeKind::Ref }).collect();
        for rel in &t.relations {
            // Relations into other chains carry no index; they are not part of this chain's graph.
            if let Some(to) = rel.target_index.filter(|i| *i < doc as u64) {
                edges.push(Edge { from: doc, to: to as u32, kind: EdgeKind::Relation(rel.kind) });
                if rel.kind.retires_target() {
                    self.retired_by.entry(to as u32).or_default().push(doc);
                    self.retired[to as usize] = true;
                }
            }
        }
        for e in &edges {
            self.incoming.entry(e.to).or_default().push(*e);
        }
        if !edges.is_empty() {
            self.outgoing.insert(doc, edges);
        }
        match &self.embedder {
            // The thought and the words it brings to the chain, in one batch.
            Some(e) => {
                let mut texts: Vec<&str> = vec![embedding_text(&t.content)];
                texts.extend(self.surfaces[first_new_term..].iter().map(|s| &**s));
                // One answer per text, whatever the provider returns.
                let mut out = e.embed_batch(&texts).into_iter();
                self.vectors.push(out.next().flatten().map(unit));
                for _ in first_new_term..self.surfaces.len() {
                    self.term_vectors.push(out.next().flatten());
                }
            }
            None => {
                self.vectors.push(None);
                (first_new_term..self.surfaces.len()).for_each(|_| self.term_vectors.push(None));
            }
        }
    }

    /// Registers (or clears) the embedding provider and embeds every
    /// already-indexed thought of `thoughts` (the chain's thoughts, in order).
    pub fn set_embedder(&mut self, embedder: Option<Arc<dyn EmbeddingProvider>>, thoughts: &[Thought]) {
        self.vectors = match &embedder {
            Some(e) => {
                let texts: Vec<&str> = thoughts.iter().map(|t| embedding_text(&t.content)).collect();
                // One answer per text, whatever the provider returns.
                let mut out = e.embed_batch(&texts).into_iter();
                thoughts.iter().map(|_| out.next().flatten().map(unit)).collect()
            }
            None => vec![None; thoughts.len()],
        };
        self.term_vectors = TermVectors::default();
        match &embedder {
            Some(e) => {
                let words: Vec<&str> = self.surfaces.iter().map(|s| &**s).collect();
                let mut out = e.embed_batch(&words).into_iter();
                for _ in 0..words.len() {
                    self.term_vectors.push(out.next().flatten());
                }
            }
            None => self.surfaces.iter().for_each(|_| self.term_vectors.push(None)),
        }
        self.embedder = embedder;
    }

    /// The registered embedding provider.
    pub fn embedder(&self) -> Option<&Arc<dyn EmbeddingProvider>> {
        self.embedder.as_ref()
    }

    /// The stored vector of thought `doc`, scaled to unit length.
    pub fn vector(&self, doc: u32) -> Option<&[f32]> {
        self.vectors.get(doc as usize).and_then(|v| v.as_deref())
    }

    /// Number of distinct terms.
    pub fn surface_count(&self) -> usize {
        self.surfaces.len()
    }

    /// The word term `id` was first seen as.
    pub fn surface(&self, id: u32) -> &str {
        &self.surfaces[id as usize]
    }

    /// The terms' vectors (rows of zeros without a provider).
    pub fn term_vectors(&self) -> &TermVectors {
        &self.term_vectors
    }

    /// Thought `doc`'s content as term ids, in order (stopwords dropped).
    pub fn content_terms(&self, doc: u32) -> &[u32] {
        let start = if doc == 0 { 0 } else { self.content_ends[doc as usize - 1] };
        &self.content_terms[start..self.content_ends[doc as usize]]
    }

    /// How many times term `second` directly follows term `first` in
    /// thought `doc`'s content (stopwords aside: "went to the beach" has
    /// "go" next to "beach").
    pub fn adjacent_count(&self, doc: u32, first: u32, second: u32) -> u32 {
        self.content_terms(doc).windows(2).filter(|w| w[0] == first && w[1] == second).count() as u32
    }

    /// Id of an index term.
    pub fn term_id(&self, term: &str) -> Option<u32> {
        self.terms.get(term).copied()
    }

    /// Occurrences of term `id`, in chain order.
    pub fn postings(&self, id: u32) -> &[Posting] {
        &self.postings[id as usize]
    }

    /// How many thoughts contain term `id` in any field.
    pub fn doc_freq(&self, id: u32) -> u32 {
        self.doc_freq[id as usize]
    }

    /// Length (in terms) of each field of thought `doc`.
    pub fn field_lens(&self, doc: u32) -> [u16; FIELD_COUNT] {
        self.field_lens[doc as usize]
    }

    /// Average length of each field over all thoughts.
    pub fn avg_field_lens(&self) -> [f32; FIELD_COUNT] {
        let n = self.len().max(1) as f32;
        let mut out = [0.0; FIELD_COUNT];
        for (o, s) in out.iter_mut().zip(self.field_len_sums) {
            *o = s as f32 / n;
        }
        out
    }

    /// Timestamp (epoch ms) of thought `doc`.
    pub fn timestamp(&self, doc: u32) -> i64 {
        self.timestamps[doc as usize]
    }

    /// Interned `session_id` of thought `doc` ([`NO_SESSION`] when it has none):
    /// equal values mean the same session.
    pub fn session(&self, doc: u32) -> u32 {
        self.sessions[doc as usize]
    }

    /// Whether thought `doc`'s content asks a question ([`super::search::asks_question`]).
    pub fn asks_question(&self, doc: u32) -> bool {
        self.asks[doc as usize]
    }

    /// Edges leaving thought `doc` (its refs and same-chain relations).
    pub fn outgoing(&self, doc: u32) -> &[Edge] {
        self.outgoing.get(&doc).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Edges arriving at thought `doc`, oldest source first.
    pub fn incoming(&self, doc: u32) -> &[Edge] {
        self.incoming.get(&doc).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Whether thought `doc` is superseded, invalidated or corrected by a
    /// thought with timestamp `<= as_of_ms` (any such thought when `None`).
    pub fn is_retired(&self, doc: u32, as_of_ms: Option<i64>) -> bool {
        if !self.retired.get(doc as usize).copied().unwrap_or(false) {
            return false;
        }
        self.retired_by.get(&doc).is_some_and(|by| match as_of_ms {
            None => !by.is_empty(),
            Some(limit) => by.iter().any(|s| self.timestamps[*s as usize] <= limit),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::{Chain, NewThought, RelationInput};
    use crate::record::ChainFormat;
    use crate::thought::ThoughtType;

    fn chain_with(items: &[(&str, &[&str])]) -> Chain {
        let mut c = Chain::new("t", ChainFormat::Binary);
        for (i, (content, tags)) in items.iter().enumerate() {
            let mut n = NewThought::new("ada", ThoughtType::FactLearned, content);
            n.tags = tags.iter().map(|s| s.to_string()).collect();
            let t = c.prepare_append(n, format!("2026-01-01T00:00:0{i}.000Z"), format!("id-{i}")).unwrap();
            c.commit(t);
        }
        c
    }

    #[test]
    fn postings_and_statistics_grow_incrementally() {
        let c = chain_with(&[("Painting a sunset", &["art"]), ("painted the fence", &[]), ("sunset sunset", &[])]);
        let idx = c.ranked_index();
        assert_eq!(idx.len(), 3);
        let paint = idx.term_id("paint").unwrap();
        assert_eq!(idx.doc_freq(paint), 2);
        let sunset = idx.term_id("sunset").unwrap();
        assert_eq!(idx.postings(sunset), &[Posting { doc: 0, field: 0, tf: 1 }, Posting { doc: 2, field: 0, tf: 2 }]);
        let art = idx.term_id("art").unwrap();
        assert_eq!(idx.postings(art)[0].field, Field::Tags as u8);
        assert_eq!(idx.field_lens(2)[Field::Content as usize], 2);
        assert_eq!(idx.term_id("ada").map(|id| idx.doc_freq(id)), Some(3));
    }

    #[test]
    fn relations_build_the_graph_and_retire_targets() {
        let mut c = chain_with(&[("old fact", &[]), ("support", &[])]);
        let mut n = NewThought::new("ada", ThoughtType::Correction, "new fact");
        n.refs = vec![1];
        n.relations = vec![RelationInput { kind: RelationKind::Supersedes, target_id: None, target_index: Some(0), chain_key: None }];
        let t = c.prepare_append(n, "2026-01-01T00:00:09.000Z".into(), "id-9".into()).unwrap();
        c.commit(t);
        let idx = c.ranked_index();
        assert_eq!(idx.outgoing(2).len(), 2);
        assert_eq!(idx.incoming(0), &[Edge { from: 2, to: 0, kind: EdgeKind::Relation(RelationKind::Supersedes) }]);
        assert_eq!(idx.incoming(1)[0].kind, EdgeKind::Ref);
        assert!(idx.is_retired(0, None));
        assert!(!idx.is_retired(1, None));
        let before = crate::timestamp::parse_rfc3339_millis("2026-01-01T00:00:05Z").unwrap();
        assert!(!idx.is_retired(0, Some(before)));
    }

    #[test]
    fn content_is_kept_as_term_ids_in_order() {
        let c = chain_with(&[("We went to the beach", &["trip"]), ("beach beach day", &[])]);
        let idx = c.ranked_index();
        let id = |t: &str| idx.term_id(t).unwrap();
        assert_eq!(idx.content_terms(0), &[id("go"), id("beach")], "stopwords dropped, tags not part of it");
        assert_eq!(idx.content_terms(1), &[id("beach"), id("beach"), id("day")]);
        assert_eq!(idx.adjacent_count(0, id("go"), id("beach")), 1);
        assert_eq!(idx.adjacent_count(0, id("beach"), id("go")), 0, "in order");
        assert_eq!(idx.adjacent_count(1, id("beach"), id("beach")), 1);
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
        let mut c = chain_with(&[("[9 May] Painted fences", &[])]);
        drop(c.ranked_index()); // built: registering embeds what it holds
        let rec = Arc::new(Recorder::default());
        c.set_embedding_provider(Some(rec.clone()));
        let seen = |r: &Recorder| std::mem::take(&mut *r.0.lock().unwrap());
        let first = seen(&rec);
        assert!(first.contains(&"Painted fences".to_string()), "the thought, without its stamp: {first:?}");
        assert!(first.contains(&"painted".to_string()) && first.contains(&"fences".to_string()), "its words as first seen: {first:?}");
        assert!(first.contains(&"ada".to_string()), "label terms as themselves: {first:?}");
        let t = c.prepare_append(NewThought::new("ada", ThoughtType::FactLearned, "Painting the fence blue"), "2026-01-01T00:00:05.000Z".into(), "id-5".into()).unwrap();
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
        let mut c = chain_with(&[("alpha beta", &[]), ("gamma", &[])]);
        drop(c.ranked_index());
        c.set_embedding_provider(Some(Arc::new(OneShort)));
        let t = c.prepare_append(NewThought::new("ada", ThoughtType::FactLearned, "delta epsilon"), "2026-01-01T00:00:05.000Z".into(), "id-5".into()).unwrap();
        c.commit(t);
        let idx = c.ranked_index();
        assert_eq!(idx.len(), 3);
        assert_eq!(idx.term_vectors().len(), idx.surface_count(), "one row per term");
        assert!(idx.vector(1).is_none() && idx.vector(0).is_some(), "the missing answer is the last thought's");
        assert!(idx.vector(2).is_some());
        assert!(idx.term_vectors().row(idx.term_id("epsilon").unwrap()).is_none() && idx.term_vectors().row(idx.term_id("delta").unwrap()).is_some());
    }
}
