//! The incremental ranked index of one chain: an inverted index over four
//! fields, field-length statistics, each thought's place in its
//! conversation (`turns.rs`; timestamps are the thoughts' own), each thought's
//! content as term ids, the graph of refs and typed relations in both
//! directions with the thoughts later thoughts retire (`edges.rs`), and
//! (when the host registered an embedding provider) one vector per thought
//! and per word (`embedded.rs`).
//!
//! Nothing here depends on the process: the term dictionary is hashed with
//! a `KeyedState` (the host's key, or the fixed default), sessions and
//! edges are kept in ordered maps, so iteration and results are the same
//! in every process.
//!
//! [`RankedIndex::add`] is called once per committed thought, in chain
//! order, by [`crate::Chain::commit`] — for appends and for every thought
//! verified when a chain is opened — so queries never rebuild anything.

use super::analyzer::{self, asks_question, is_stopword, label_whole, term_of};
use super::turns::{push_turn, Turn, MAX_RUN};
use super::edges::Edges;
pub use super::edges::{Edge, EdgeKind};
use super::embedded::{Embedded, TermVectors};
use super::embedding::EmbeddingProvider;
use super::postings::PostingList;
pub use super::postings::Posting;
use super::terms::{Terms, WordTerms};
use crate::keyed_hash::KeyedState;
use crate::label::Label;
use crate::thought::Thought;
use std::collections::VecDeque;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A searchable field of a thought.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    /// The thought's text.
    Content = 0,
    /// Its tags.
    Tags = 1,
    /// Its concepts.
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

/// The ranked index of one chain.
#[derive(Clone, Default)]
pub struct RankedIndex {
    /// Term -> id, with the word each term was first seen as (what a
    /// provider embeds for it), hashed with a [`KeyedState`] (see
    /// [`crate::keyed_hash`]): the host's key through
    /// [`RankedIndex::with_hasher`] (the words are the writers', so their
    /// hashes should not be predictable), else the fixed default key.
    terms: Terms,
    /// Words seen before and their term, keyed like `terms`.
    words: WordTerms,
    /// Each term's postings, by term id.
    postings: Vec<PostingList>,
    doc_freq: Vec<u32>,
    field_lens: Vec<[u16; FIELD_COUNT]>,
    field_len_sums: [u64; FIELD_COUNT],
    edges: Edges,
    /// The interned `session_id` ([`NO_SESSION`] when absent) and the
    /// timestamp of the last [`MAX_RUN`] thoughts, oldest first: all a new
    /// thought's turn is worked out from (the rest are read from the
    /// thoughts themselves, so the index keeps no copy).
    recent: VecDeque<(u32, i64)>,
    /// Each thought's place in its conversation ([`Turn`]).
    turns: Vec<Turn>,
    session_ids: BTreeMap<String, u32>,
    /// Interned `agent_id` of each thought (its author).
    authors: Vec<u32>,
    author_ids: BTreeMap<Label, u32>,
    /// Per author: content words summed (as `field_lens` counts them) and thoughts.
    author_content: Vec<(u64, u32)>,
    /// Every thought's content as term ids, in order (stopwords dropped),
    /// one after another, each in as few bytes as it needs (`varint.rs`);
    /// thought `doc`'s end at `content_ends[doc]`.
    content_terms: Vec<u8>,
    content_ends: Vec<u32>,
    /// With a provider, one vector per thought and per term.
    embedded: Embedded,
}

impl std::fmt::Debug for RankedIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RankedIndex")
            .field("docs", &self.len())
            .field("terms", &self.terms.len())
            .field("embedder", &self.embedder().map(|e| e.name().to_string()))
            .finish_non_exhaustive()
    }
}

/// Two term ids, one right after the other, as the index keeps a
/// thought's content ([`RankedIndex::adjacent_count`]).
#[derive(Debug, Clone, Copy)]
pub struct TermPair {
    bytes: [u8; 10],
    len: u8,
}

impl TermPair {
    /// Term `first` followed by term `second`.
    pub fn new(first: u32, second: u32) -> Self {
        let mut v = Vec::with_capacity(10);
        super::varint::push(&mut v, first);
        super::varint::push(&mut v, second);
        let mut bytes = [0; 10];
        bytes[..v.len()].copy_from_slice(&v);
        TermPair { bytes, len: v.len() as u8 }
    }

    fn bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

/// How many thoughts of the chain's mean length an author's mean content
/// length starts from ([`RankedIndex::author_mean_content_len`]).
pub const AUTHOR_PRIOR_THOUGHTS: f32 = 10.0;

/// The session of a thought without `session_id`.
pub const NO_SESSION: u32 = u32::MAX;

/// The labels of a label field of `t`, in order (agent: id, name when it
/// differs, owner).
fn field_labels(t: &Thought, field: Field) -> Vec<&str> {
    match field {
        Field::Content => Vec::new(),
        Field::Tags => t.tags.iter().map(Label::as_str).collect(),
        Field::Concepts => t.concepts.iter().map(Label::as_str).collect(),
        Field::Agent => {
            let mut v = vec![t.agent_id.as_str()];
            if !t.agent_name.eq_ignore_ascii_case(&t.agent_id) {
                v.push(&t.agent_name);
            }
            v.extend(t.agent_owner());
            v
        }
    }
}

impl RankedIndex {
    /// Number of indexed thoughts.
    pub fn len(&self) -> usize {
        self.turns.len()
    }

    /// Whether nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
    }

    /// An empty index whose term dictionary is keyed with `hasher` (the
    /// chain's, from the host; [`Default`] uses the fixed default key).
    pub fn with_hasher(hasher: KeyedState) -> Self {
        RankedIndex { terms: Terms::with_hasher(hasher), words: WordTerms::with_hasher(hasher), ..RankedIndex::default() }
    }

    /// Indexes the next thought of the chain (`t.index` must equal
    /// [`Self::len`]). Linear in the thought's words: each word is one
    /// dictionary lookup and one step on its term's postings.
    pub fn add(&mut self, t: &Thought) {
        // A claim record is the engine's bookkeeping: it takes its place
        // (documents are chain positions) but brings no words or vector.
        let blank;
        let t = if t.is_claim_record() {
            blank = Thought { content: Box::default(), tags: Default::default(), concepts: Default::default(), ..t.clone() };
            &blank
        } else {
            t
        };
        let doc = self.len() as u32;
        debug_assert_eq!(t.index, doc as u64, "thoughts are indexed in chain order");
        let mut lens = [0u16; FIELD_COUNT];
        let first_new_term = self.terms.len();
        for field in Field::ALL {
            // The terms of [`Analyzer::tokens`](super::Analyzer::tokens)
            // (content) and [`Analyzer::label_terms`](super::Analyzer::label_terms)
            // (each label), each word's term looked up in `words` before
            // it is stemmed.
            let mut words = 0;
            if field == Field::Content {
                for w in analyzer::words(&t.content).filter(|w| !is_stopword(w)) {
                    // A term is embedded as the word it was first seen as.
                    let id = self.term_of_word(&w, true);
                    self.count(id, doc, field);
                    super::varint::push(&mut self.content_terms, id);
                    words += 1;
                }
                crate::growth::push(&mut self.content_ends, u32::try_from(self.content_terms.len()).expect("a chain's content terms take fewer than 2^32 bytes"));
            }
            for label in field_labels(t, field) {
                let mut ids = Vec::new();
                for w in analyzer::words(label).filter(|w| !is_stopword(w)) {
                    // A label's terms are their own words.
                    ids.push(self.term_of_word(&w, false));
                }
                if let Some(whole) = label_whole(label) {
                    if self.terms.get(&whole).is_none_or(|id| !ids.contains(&id)) {
                        ids.push(self.terms.intern(&whole, &whole).0);
                    }
                }
                words += ids.len();
                for id in ids {
                    self.count(id, doc, field);
                }
            }
            lens[field as usize] = words.min(u16::MAX as usize) as u16;
            self.field_len_sums[field as usize] += words as u64;
        }
        crate::growth::push(&mut self.field_lens, lens);
        let session = match &t.session_id() {
            Some(sid) => {
                let next = self.session_ids.len() as u32;
                *self.session_ids.entry(sid.to_string()).or_insert(next)
            }
            None => NO_SESSION,
        };
        let (recent, this) = (&self.recent, (session, t.timestamp_millis()));
        push_turn(&mut self.turns, |d| recent[recent.len() - (doc - d) as usize], this, asks_question(&t.content));
        if self.recent.len() == MAX_RUN as usize {
            self.recent.pop_front();
        }
        self.recent.push_back(this);
        let next = self.author_ids.len() as u32;
        let author = *self.author_ids.entry(t.agent_id.clone()).or_insert(next);
        if author == next {
            self.author_content.push((0, 0));
        }
        let sums = &mut self.author_content[author as usize];
        *sums = (sums.0 + u64::from(lens[Field::Content as usize]), sums.1 + 1);
        crate::growth::push(&mut self.authors, author);
        self.edges.add(t);
        // The thought and the words it brought to the chain, in one batch.
        self.embedded.add(&t.content, self.terms.surfaces_from(first_new_term));
    }

    /// The term of `word` (a word of [`analyzer::words`], not a stopword)
    /// when the index has met the word before: what stemming it would give.
    pub(crate) fn known_term(&self, word: &str) -> Option<&str> {
        self.words.get(word).map(|id| self.terms.text(id))
    }

    /// The term id of `word` (a word of [`analyzer::words`], not a
    /// stopword), its term interned if new (first seen as `word` when
    /// `as_surface`, else as itself).
    fn term_of_word(&mut self, word: &str, as_surface: bool) -> u32 {
        if let Some(id) = self.words.get(word) {
            return id;
        }
        let term = term_of(word);
        let id = self.terms.intern(&term, if as_surface { word } else { &term }).0;
        self.words.remember(word, id);
        id
    }

    /// Counts one occurrence of term `id` in `field` of thought `doc` (the
    /// one being added): adds one to the thought's posting for that field,
    /// which is the last of the term's postings once started (a term just
    /// interned gets its first).
    fn count(&mut self, id: u32, doc: u32, field: Field) {
        let posting = Posting::new(doc, field as u8, 1);
        if id as usize == self.postings.len() {
            crate::growth::push(&mut self.postings, PostingList::One(posting));
            crate::growth::push(&mut self.doc_freq, 1);
            return;
        }
        let list = &mut self.postings[id as usize];
        let last = list.last_mut();
        if last.doc() == doc && last.field() == field as u8 {
            last.count_one();
        } else {
            if last.doc() != doc {
                self.doc_freq[id as usize] += 1;
            }
            list.push(posting);
        }
    }

    /// Registers (or clears) the embedding provider and embeds every
    /// already-indexed thought of `thoughts` (the chain's thoughts, in order).
    pub fn set_embedder(&mut self, embedder: Option<Arc<dyn EmbeddingProvider>>, thoughts: crate::thought_list::Iter<'_>) {
        self.embedded.set_embedder(embedder, thoughts, self.terms.surfaces_from(0));
    }

    /// The registered embedding provider.
    pub fn embedder(&self) -> Option<&Arc<dyn EmbeddingProvider>> {
        self.embedded.embedder()
    }

    /// The thoughts' vectors, one quantized unit row per thought with its
    /// sign sketch (`sketch.rs`; rows of zeros without a provider).
    pub fn thought_vectors(&self) -> &super::sketch::SketchedRows {
        self.embedded.thoughts()
    }

    /// Number of distinct terms.
    pub fn surface_count(&self) -> usize {
        self.terms.len()
    }

    /// The word term `id` was first seen as.
    pub fn surface(&self, id: u32) -> &str {
        self.terms.surface(id)
    }

    /// The terms' vectors (rows of zeros without a provider).
    pub fn term_vectors(&self) -> &TermVectors {
        self.embedded.words()
    }

    /// Thought `doc`'s content as term ids, in order (stopwords dropped).
    pub fn content_terms(&self, doc: u32) -> impl Iterator<Item = u32> + '_ {
        super::varint::read(self.content_bytes(doc))
    }

    fn content_bytes(&self, doc: u32) -> &[u8] {
        let start = if doc == 0 { 0 } else { self.content_ends[doc as usize - 1] as usize };
        &self.content_terms[start..self.content_ends[doc as usize] as usize]
    }

    /// How many times term `second` directly follows term `first` in
    /// thought `doc`'s content (stopwords aside: "went to the beach" has
    /// "go" next to "beach").
    pub fn adjacent_count(&self, doc: u32, pair: &TermPair) -> u32 {
        super::varint::count_run(self.content_bytes(doc), pair.bytes())
    }

    /// Id of an index term.
    pub fn term_id(&self, term: &str) -> Option<u32> {
        self.terms.get(term)
    }

    /// Occurrences of term `id`, in chain order.
    pub fn postings(&self, id: u32) -> &[Posting] {
        self.postings[id as usize].as_slice()
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

    /// The mean content length (in words, as [`Self::field_lens`] counts
    /// them) of the thoughts by `doc`'s author (its `agent_id`), drawn
    /// toward the chain's mean by [`AUTHOR_PRIOR_THOUGHTS`] thoughts of the
    /// chain's mean length: an author with few thoughts is measured mostly
    /// against the chain.
    pub fn author_mean_content_len(&self, doc: u32) -> f32 {
        let (sum, count) = self.author_content[self.author(doc) as usize];
        let chain = self.field_len_sums[Field::Content as usize] as f32 / self.len().max(1) as f32;
        (sum as f32 + AUTHOR_PRIOR_THOUGHTS * chain) / (count as f32 + AUTHOR_PRIOR_THOUGHTS)
    }

    /// Thought `doc`'s author (its `agent_id`) as a number below
    /// [`Self::author_count`].
    pub(crate) fn author(&self, doc: u32) -> u32 {
        self.authors[doc as usize]
    }

    /// How many distinct authors the indexed thoughts have.
    pub(crate) fn author_count(&self) -> usize {
        self.author_content.len()
    }

    /// Whether thought `doc`'s content asks a question ([`asks_question`]).
    pub fn asks_question(&self, doc: u32) -> bool {
        self.turns[doc as usize].asks()
    }

    /// Thought `doc`'s place in its conversation: whether it asks, and how
    /// many thoughts right after and before it share its conversation.
    pub(crate) fn turn(&self, doc: u32) -> Turn {
        self.turns[doc as usize]
    }

    /// Whether any thought has a ref or a same-chain relation (the graph
    /// stage has nothing to walk otherwise).
    pub fn has_edges(&self) -> bool {
        !self.edges.is_empty()
    }

    /// Edges leaving thought `doc` (its refs and same-chain relations).
    pub fn outgoing(&self, doc: u32) -> &[Edge] {
        self.edges.outgoing(doc)
    }

    /// Edges arriving at thought `doc`, oldest source first.
    pub fn incoming(&self, doc: u32) -> &[Edge] {
        self.edges.incoming(doc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::{Chain, NewThought, RelationInput};
    use crate::record::ChainFormat;
    use crate::thought::{RelationKind, ThoughtType};

    fn chain_with(items: &[(&str, &[&str])]) -> Chain {
        let mut c = Chain::new("t", ChainFormat::Binary);
        for (i, (content, tags)) in items.iter().enumerate() {
            let mut n = NewThought::new("ada", ThoughtType::FactLearned, content);
            n.tags = tags.iter().map(|s| s.to_string()).collect();
            let t = c.prepare_append(n, format!("2026-01-01T00:00:0{i}.000Z"), format!("id-{i}"), [0; 16]).unwrap();
            c.commit(t);
        }
        c
    }

    proptest::proptest! {
        /// Remembering each word's term changes nothing: every thought's
        /// postings, field lengths, content terms and each term's first
        /// surface are what the analyzer gives word by word.
        #[test]
        fn the_index_holds_the_analyzers_terms_for_every_field(
            items in proptest::collection::vec((
                proptest::collection::vec(proptest::sample::select(WORDS), 1..12),
                proptest::collection::vec(proptest::sample::select(WORDS), 0..3),
                proptest::sample::select(&["ada", "Ada", "bob-2", "made me"][..]),
            ), 1..25)
        ) {
            let mut c = Chain::new("t", ChainFormat::Binary);
            for (i, (content, tags, agent)) in items.iter().enumerate() {
                let mut n = NewThought::new(agent, ThoughtType::FactLearned, &content.join(" "));
                n.tags = tags.iter().map(|s| s.to_string()).collect();
                n.concepts = content.iter().take(2).map(|s| format!("{s}, {s}")).collect();
                n.agent_name = Some(agent.to_uppercase());
                let t = c.prepare_append(n, format!("2026-01-01T00:00:{:02}.000Z", i % 60), format!("id-{i}"), [0; 16]).unwrap();
                c.commit(t);
            }
            let idx = c.ranked_index();
            let a = super::super::Analyzer;
            let mut first_surface: BTreeMap<String, String> = BTreeMap::new();
            for (doc, t) in c.thoughts().iter().enumerate() {
                let doc = doc as u32;
                for field in Field::ALL {
                    let terms: Vec<String> = if field == Field::Content {
                        let tokens = a.tokens(&t.content);
                        for tok in &tokens {
                            first_surface.entry(tok.term.clone()).or_insert(tok.surface.clone());
                        }
                        let ids: Vec<u32> = tokens.iter().map(|tok| idx.term_id(&tok.term).unwrap()).collect();
                        proptest::prop_assert_eq!(idx.content_terms(doc).collect::<Vec<_>>(), ids);
                        tokens.into_iter().map(|tok| tok.term).collect()
                    } else {
                        let terms: Vec<String> = field_labels(t, field).iter().flat_map(|l| a.label_terms(l)).collect();
                        for term in &terms {
                            first_surface.entry(term.clone()).or_insert(term.clone());
                        }
                        terms
                    };
                    proptest::prop_assert_eq!(usize::from(idx.field_lens(doc)[field as usize]), terms.len());
                    let mut counts: BTreeMap<&str, u16> = BTreeMap::new();
                    for term in &terms {
                        *counts.entry(term).or_default() += 1;
                    }
                    for (term, tf) in counts {
                        let id = idx.term_id(term).unwrap();
                        proptest::prop_assert!(idx.postings(id).contains(&Posting::new(doc, field as u8, tf)), "{term} in {field:?} of {doc}");
                    }
                }
            }
            for (term, surface) in &first_surface {
                proptest::prop_assert_eq!(idx.surface(idx.term_id(term).unwrap()), surface.as_str());
            }
            // A question's terms taken from the index's known words are the stemmer's.
            for (words, _, _) in &items {
                let question = format!("{} zebras grazing?", words.join(" "));
                proptest::prop_assert_eq!(super::super::query::QueryWords::in_index(&question, &idx), super::super::query::QueryWords::of(&question));
            }
        }
    }

    /// Words the property test above draws from: inflections that stem
    /// alike, irregular pasts, stopwords, numbers, apostrophes, non-ASCII.
    const WORDS: &[&str] = &["Painting", "paints", "painted", "paint", "made", "make", "the", "about", "42", "x9", "Caroline's", "don't", "café", "Zürich", "ran", "running", "ART", "a-b", "dia:D1:3"];

    /// The index keeps only the last three thoughts' sessions and
    /// timestamps: every thought's turn is still the one worked out from all
    /// of them (sessions coming back, gaps of two hours, time going back).
    #[test]
    fn turns_from_the_recent_ring_are_the_turns_from_every_thought() {
        let minute = 60_000;
        let mut c = Chain::new("t", ChainFormat::Binary);
        let mut all = Vec::new();
        let mut sessions: BTreeMap<&str, u32> = BTreeMap::new();
        let mut ts = 1_795_339_800_000;
        for i in 0..60 {
            ts += if i % 9 == 3 {
                2 * super::super::turns::CONTEXT_MAX_GAP_MS
            } else if i % 7 == 5 {
                -3 * minute
            } else {
                minute
            };
            let session = if i % 11 == 0 { Some("b") } else { [None, Some("a"), Some("b")][(i / 6) % 3] };
            let mut n = NewThought::new("ada", ThoughtType::FactLearned, if i % 4 == 0 { "why?" } else { "so." });
            n.session_id = session.map(String::from);
            let t = c.prepare_append(n, crate::timestamp::format_rfc3339_text(ts, Default::default(), None).to_string(), format!("id-{i}"), [0; 16]).unwrap();
            c.commit(t);
            let next = sessions.len() as u32;
            all.push((session.map_or(NO_SESSION, |s| *sessions.entry(s).or_insert(next)), ts));
        }
        let mut expected = Vec::new();
        for (i, &item) in all.iter().enumerate() {
            push_turn(&mut expected, |d| all[d as usize], item, i % 4 == 0);
        }
        let idx = c.ranked_index();
        for (doc, turn) in expected.iter().enumerate() {
            let got = idx.turn(doc as u32);
            assert_eq!((got.after(), got.before(), got.asks()), (turn.after(), turn.before(), turn.asks()), "thought {doc}");
        }
        assert!(expected.iter().any(|t| t.after() == 3) && expected.iter().any(|t| t.before() == 0 && t.after() == 0), "the sequence has long runs and lone thoughts");
    }

    #[test]
    fn postings_and_statistics_grow_incrementally() {
        let c = chain_with(&[("Painting a sunset", &["art"]), ("painted the fence", &[]), ("sunset sunset", &[])]);
        let idx = c.ranked_index();
        assert_eq!(idx.len(), 3);
        let paint = idx.term_id("paint").unwrap();
        assert_eq!(idx.doc_freq(paint), 2);
        let sunset = idx.term_id("sunset").unwrap();
        assert_eq!(idx.postings(sunset), &[Posting::new(0, 0, 1), Posting::new(2, 0, 2)]);
        let art = idx.term_id("art").unwrap();
        assert_eq!(idx.postings(art)[0].field(), Field::Tags as u8);
        assert_eq!(idx.field_lens(2)[Field::Content as usize], 2);
        assert_eq!(idx.term_id("ada").map(|id| idx.doc_freq(id)), Some(3));
    }

    #[test]
    fn relations_build_the_graph() {
        let mut c = chain_with(&[("old fact", &[]), ("support", &[])]);
        let mut n = NewThought::new("ada", ThoughtType::Correction, "new fact");
        n.refs = vec![1];
        n.relations = vec![RelationInput { kind: RelationKind::Supersedes, target_id: None, target_index: Some(0), chain_key: None }];
        let t = c.prepare_append(n, "2026-01-01T00:00:09.000Z".into(), "id-9".into(), [0; 16]).unwrap();
        c.commit(t);
        let idx = c.ranked_index();
        assert_eq!(idx.outgoing(2).len(), 2);
        assert_eq!(idx.incoming(0), &[Edge { from: 2, to: 0, kind: EdgeKind::Relation(RelationKind::Supersedes) }]);
        assert_eq!(idx.incoming(1)[0].kind, EdgeKind::Ref);
    }

    #[test]
    fn content_is_kept_as_term_ids_in_order() {
        let c = chain_with(&[("We went to the beach", &["trip"]), ("beach beach day", &[])]);
        let idx = c.ranked_index();
        let id = |t: &str| idx.term_id(t).unwrap();
        assert_eq!(idx.content_terms(0).collect::<Vec<_>>(), [id("go"), id("beach")], "stopwords dropped, tags not part of it");
        assert_eq!(idx.content_terms(1).collect::<Vec<_>>(), [id("beach"), id("beach"), id("day")]);
        let pair = |a: &str, b: &str| TermPair::new(id(a), id(b));
        assert_eq!(idx.adjacent_count(0, &pair("go", "beach")), 1);
        assert_eq!(idx.adjacent_count(0, &pair("beach", "go")), 0, "in order");
        assert_eq!(idx.adjacent_count(1, &pair("beach", "beach")), 1);
    }
}
