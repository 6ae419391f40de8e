//! Query indices kept up in the background: after opening, every resident
//! chain's indices are built; after appends (at once, or every few
//! milliseconds under a stream of them), the chain's new thoughts are
//! indexed and, with an embedding provider, embedded, so a ranked query
//! finds the work done and an append never waits for a model.
//!
//! With a provider the texts are embedded ahead ([`MentisDb::unindexed_texts`])
//! by this thread with no lock held, then [`MentisDb::warm_chain_from`] indexes
//! them under the chain's read lock while [`Prefetched`] answers the
//! provider's calls from what was computed (only a thought's new words, a
//! few tokens each, are embedded under the lock). A query that arrives
//! before the worker reached a thought indexes it itself (it waits only
//! when it must). [`Prefetched`] also remembers single words it embedded
//! (up to [`WORD_CACHE`]), so a question's words new to the chain are
//! embedded once, not per question.

use mentisdb_core::ranked::EmbeddingProvider;
use mentisdb_core::{AppendObserver, MentisDb, Thought};
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

/// Thoughts embedded ahead per step (one batch through the model, one lock hold).
const STEP: usize = 16;
/// Thoughts indexed per step without a provider (lexical indexing is ~10 us a thought).
const LEXICAL_STEP: usize = 4096;
/// Thoughts indexed per step with a provider that embeds inside the step.
const PROVIDER_STEP: usize = 256;

/// How long after a round of indexing the next one may start: appends that
/// arrive sooner (a stream of them) wait out the rest and are indexed
/// together in one hold of the chain's read lock, instead of one wake-up and
/// one hold each (which also kept appends from taking the chain's write lock
/// on the event loop). An append that comes after a quiet spell is indexed
/// at once; a query that comes during a rest indexes what is missing itself.
/// Measured with `scripts/loadbench/switches.sh append` (figures in
/// docs/performance.md): per append 107-110 us of daemon CPU and 2.5-3.2
/// context switches without a rest, 76-92 us and 1.5-2.1 with it (this rule
/// and a rest after every round measure the same, back to back).
const REST_AFTER_WORK: Duration = Duration::from_millis(2);

/// Single words whose vectors [`Prefetched`] keeps (about 1.5 KB each with
/// a 384-dimension model); past it the memory starts over.
const WORD_CACHE: usize = 8192;

/// An embedding provider answering from vectors computed ahead for the
/// texts it is about to be asked for, then from single words it embedded
/// before (questions reuse their words), and from `inner` for the rest.
#[derive(Debug)]
pub struct Prefetched {
    inner: Arc<dyn EmbeddingProvider>,
    ahead: Mutex<Vec<(String, Vec<f32>)>>,
    words: Mutex<HashMap<String, Vec<f32>>>,
}

impl Prefetched {
    /// Wraps `inner` (register the wrapper as the engine's provider).
    pub fn new(inner: Arc<dyn EmbeddingProvider>) -> Self {
        Prefetched { inner, ahead: Mutex::new(Vec::new()), words: Mutex::new(HashMap::new()) }
    }

    /// Embeds `texts` now, through `inner`, for the calls that follow; on
    /// every core (the model runs one text at a time per thread).
    fn fill(&self, texts: &[String]) {
        let threads = std::thread::available_parallelism().map_or(1, usize::from).min(texts.len()).max(1);
        let chunks: Vec<&[String]> = texts.chunks(texts.len().div_ceil(threads).max(1)).collect();
        let embed = |chunk: &[String]| self.inner.embed_batch(&chunk.iter().map(String::as_str).collect::<Vec<_>>());
        let vectors: Vec<Option<Vec<f32>>> = if chunks.len() <= 1 {
            embed(texts)
        } else {
            std::thread::scope(|s| {
                let handles: Vec<_> = chunks.iter().map(|c| s.spawn(move || embed(c))).collect();
                handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
            })
        };
        let mut ahead = self.ahead.lock().unwrap_or_else(|e| e.into_inner());
        ahead.extend(texts.iter().cloned().zip(vectors).filter_map(|(t, v)| v.map(|v| (t, v))));
    }

    /// Forgets what was not asked for (a thought indexed by a query meanwhile).
    fn clear(&self) {
        self.ahead.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    fn take(&self, text: &str) -> Option<Vec<f32>> {
        let mut ahead = self.ahead.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(at) = ahead.iter().position(|(t, _)| t == text) {
            return Some(ahead.swap_remove(at).1);
        }
        drop(ahead);
        self.words.lock().unwrap_or_else(|e| e.into_inner()).get(text).cloned()
    }

    /// Keeps the vector of a single word for later questions.
    fn remember(&self, text: &str, vector: &Option<Vec<f32>>) {
        let (false, Some(v)) = (text.contains(char::is_whitespace), vector) else { return };
        let mut words = self.words.lock().unwrap_or_else(|e| e.into_inner());
        if words.len() >= WORD_CACHE {
            words.clear();
        }
        words.insert(text.to_string(), v.clone());
    }
}

impl EmbeddingProvider for Prefetched {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn embed(&self, text: &str) -> Option<Vec<f32>> {
        self.take(text).or_else(|| {
            let v = self.inner.embed(text);
            self.remember(text, &v);
            v
        })
    }

    fn embed_batch(&self, texts: &[&str]) -> Vec<Option<Vec<f32>>> {
        let mut out: Vec<Option<Option<Vec<f32>>>> = texts.iter().map(|t| self.take(t).map(Some)).collect();
        let missing: Vec<usize> = (0..texts.len()).filter(|i| out[*i].is_none()).collect();
        if !missing.is_empty() {
            let fresh = self.inner.embed_batch(&missing.iter().map(|i| texts[*i]).collect::<Vec<_>>());
            for (i, v) in missing.into_iter().zip(fresh) {
                self.remember(texts[i], &v);
                out[i] = Some(v);
            }
        }
        out.into_iter().map(Option::flatten).collect()
    }
}

/// Chains with appends the worker has not indexed yet.
#[derive(Default)]
struct Pending {
    keys: Mutex<BTreeSet<String>>,
    wake: Condvar,
}

impl AppendObserver for Pending {
    fn appended(&self, chain_key: &str, _thought: &Thought) {
        let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        if keys.insert(chain_key.to_string()) {
            self.wake.notify_one();
        }
    }

    fn chain_deleted(&self, chain_key: &str) {
        self.keys.lock().unwrap_or_else(|e| e.into_inner()).remove(chain_key);
    }
}

/// Starts the worker thread for `db`; `prefetched` is the provider
/// registered on `db`, if any. The thread ends once `db` is dropped.
pub fn start(db: &Arc<MentisDb>, prefetched: Option<Arc<Prefetched>>) -> std::io::Result<()> {
    let pending = Arc::new(Pending::default());
    db.add_observer(pending.clone());
    let weak = Arc::downgrade(db);
    std::thread::Builder::new().name("mentisdb-index".into()).spawn(move || run(weak, pending, prefetched)).map(drop)
}

fn run(db: Weak<MentisDb>, pending: Arc<Pending>, prefetched: Option<Arc<Prefetched>>) {
    let started = Instant::now();
    let Some(first) = db.upgrade() else { return };
    for key in first.chain_keys() {
        catch_up(&first, &key, prefetched.as_deref());
    }
    drop(first);
    tracing::info!(ms = started.elapsed().as_millis() as u64, "query indices built");
    // When the last round ended: appends that wake the worker sooner than
    // `REST_AFTER_WORK` after it are a stream, indexed together.
    let mut last_round = started;
    loop {
        {
            let mut keys = pending.keys.lock().unwrap_or_else(|e| e.into_inner());
            while keys.is_empty() {
                // Wakes now and then to notice that the engine is gone.
                keys = pending.wake.wait_timeout(keys, Duration::from_secs(1)).unwrap_or_else(|e| e.into_inner()).0;
                if db.strong_count() == 0 {
                    return;
                }
            }
        }
        if let Some(rest) = REST_AFTER_WORK.checked_sub(last_round.elapsed()) {
            std::thread::sleep(rest);
        }
        let keys: Vec<String> = std::mem::take(&mut *pending.keys.lock().unwrap_or_else(|e| e.into_inner())).into_iter().collect();
        let Some(db) = db.upgrade() else { return };
        for key in keys {
            catch_up(&db, &key, prefetched.as_deref());
        }
        last_round = Instant::now();
    }
}

/// Indexes (and embeds) chain `key` until it is caught up.
fn catch_up(db: &MentisDb, key: &str, prefetched: Option<&Prefetched>) {
    match prefetched {
        None => {
            // A provider that runs inside the step (a static model, microseconds a text) takes shorter steps.
            let step = if db.embedding_provider().is_some() { PROVIDER_STEP } else { LEXICAL_STEP };
            while !db.warm_chain(key, step) {}
        }
        Some(p) => loop {
            let (from, texts) = db.unindexed_texts(key, STEP);
            if texts.is_empty() {
                // Caught up, or not resident: the text filter's index too.
                while !db.warm_chain(key, LEXICAL_STEP) {}
                return;
            }
            p.fill(&texts);
            // Skipped when a query indexed these meanwhile (then the next ones are fetched).
            db.warm_chain_from(key, from, texts.len());
            p.clear();
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mentisdb_core::{DbConfig, FixedClock, MemoryStorage, NewThought, SequentialIds, ThoughtType};

    /// Vectors from the text's length; counts calls by the texts' size.
    #[derive(Debug, Default)]
    struct Counting {
        texts: Mutex<Vec<String>>,
    }

    impl EmbeddingProvider for Counting {
        fn name(&self) -> &str {
            "counting"
        }
        fn embed(&self, text: &str) -> Option<Vec<f32>> {
            self.texts.lock().unwrap().push(text.to_string());
            Some(vec![text.len() as f32, 1.0])
        }
    }

    #[test]
    fn prefetched_answers_from_what_was_computed_ahead_then_from_the_model() {
        let inner = Arc::new(Counting::default());
        let p = Prefetched::new(inner.clone());
        p.fill(&["a long thought".to_string()]);
        assert_eq!(p.embed_batch(&["a long thought", "word"]), vec![Some(vec![14.0, 1.0]), Some(vec![4.0, 1.0])]);
        assert_eq!(*inner.texts.lock().unwrap(), vec!["a long thought".to_string(), "word".to_string()], "the thought was embedded once, ahead");
        assert_eq!(p.embed("a long thought"), Some(vec![14.0, 1.0]), "taken once, then asked of the model again");
        assert_eq!(inner.texts.lock().unwrap().len(), 3);
        assert_eq!(p.embed("word"), Some(vec![4.0, 1.0]), "a single word is remembered");
        assert_eq!(inner.texts.lock().unwrap().len(), 3);
    }

    #[test]
    fn appended_thoughts_are_embedded_in_the_background_before_any_query() {
        let (db, _) = MentisDb::open(Arc::new(MemoryStorage::default()), Arc::new(FixedClock::new(1_700_000_000_000, 1)), Arc::new(SequentialIds::default()), DbConfig::default()).unwrap();
        let db = Arc::new(db);
        let inner = Arc::new(Counting::default());
        let p = Arc::new(Prefetched::new(inner.clone()));
        db.set_embedding_provider(Some(p.clone()));
        start(&db, Some(p)).unwrap();
        for i in 0..40 {
            db.append("bg", NewThought::new("ada", ThoughtType::FactLearned, &format!("thought number {i} about the garden"))).unwrap();
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while db.read_chain("bg", |c| c.unwrap().indexed_len()).unwrap() < 40 {
            assert!(Instant::now() < deadline, "the worker never caught up");
            std::thread::sleep(Duration::from_millis(5));
        }
        let texts = inner.texts.lock().unwrap().clone();
        for i in 0..40 {
            let t = format!("thought number {i} about the garden");
            assert_eq!(texts.iter().filter(|x| **x == t).count(), 1, "{t} embedded exactly once");
        }
    }
}
