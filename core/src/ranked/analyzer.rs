//! Text analysis for ranked retrieval: split into words, lower-case, drop
//! English stopwords, map irregular past forms to their base ("made" ->
//! "make"), stem with the Snowball English stemmer (`rust-stemmers`). The
//! same analyzer runs at index time and query time, so a query word matches
//! every inflection that stems alike ("painting", "paints", "painted" ->
//! "paint"; "made" -> "make").

use rust_stemmers::{Algorithm, Stemmer};

/// Words longer than this (in bytes) are ignored: they are ids or noise.
pub const MAX_TOKEN_BYTES: usize = 48;

/// The Snowball project's English stopword list (function words that carry
/// no topic), plus the contracted forms that survive tokenizing.
const STOPWORDS: &[&str] = &[
    "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "aren't", "as", "at", "be", "because", "been",
    "before", "being", "below", "between", "both", "but", "by", "can", "can't", "cannot", "could", "couldn't", "did", "didn't", "do", "does",
    "doesn't", "doing", "don't", "down", "during", "each", "few", "for", "from", "further", "had", "hadn't", "has", "hasn't", "have",
    "haven't", "having", "he", "he'd", "he'll", "he's", "her", "here", "here's", "hers", "herself", "him", "himself", "his", "how", "how's",
    "i", "i'd", "i'll", "i'm", "i've", "if", "in", "into", "is", "isn't", "it", "it's", "its", "itself", "let's", "me", "more", "most",
    "mustn't", "my", "myself", "no", "nor", "not", "of", "off", "on", "once", "only", "or", "other", "ought", "our", "ours", "ourselves",
    "out", "over", "own", "same", "shan't", "she", "she'd", "she'll", "she's", "should", "shouldn't", "so", "some", "such", "than", "that",
    "that's", "the", "their", "theirs", "them", "themselves", "then", "there", "there's", "these", "they", "they'd", "they'll", "they're",
    "they've", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "wasn't", "we", "we'd", "we'll", "we're",
    "we've", "were", "weren't", "what", "what's", "when", "when's", "where", "where's", "which", "while", "who", "who's", "whom", "why",
    "why's", "will", "with", "won't", "would", "wouldn't", "you", "you'd", "you'll", "you're", "you've", "your", "yours", "yourself",
    "yourselves",
];

/// Irregular English past tenses and past participles with their base
/// form, sorted by form: the stemmer leaves "made" and "make" apart, and a
/// question ("what did she make?") is usually asked in the base form of
/// what an answer tells in the past ("I made a bowl"). Forms that are
/// common words in their own right ("bit", "wound", "bet") are left out.
const IRREGULAR: &[(&str, &str)] = &[
    ("arisen", "arise"), ("arose", "arise"), ("ate", "eat"), ("awoke", "awake"), ("awoken", "awake"), ("beaten", "beat"),
    ("became", "become"), ("began", "begin"), ("begun", "begin"), ("bent", "bend"), ("bitten", "bite"), ("bled", "bleed"),
    ("blew", "blow"), ("blown", "blow"), ("bought", "buy"), ("bred", "breed"), ("broke", "break"), ("broken", "break"),
    ("brought", "bring"), ("built", "build"), ("burnt", "burn"), ("came", "come"), ("caught", "catch"), ("chose", "choose"),
    ("chosen", "choose"), ("crept", "creep"), ("dealt", "deal"), ("done", "do"), ("drank", "drink"), ("drawn", "draw"), ("dreamt", "dream"),
    ("drew", "draw"), ("driven", "drive"), ("drove", "drive"), ("drunk", "drink"), ("dug", "dig"), ("eaten", "eat"), ("fallen", "fall"),
    ("fed", "feed"), ("fell", "fall"), ("felt", "feel"), ("fled", "flee"), ("flew", "fly"), ("flown", "fly"), ("forbade", "forbid"),
    ("forgave", "forgive"), ("forgiven", "forgive"), ("forgot", "forget"), ("forgotten", "forget"), ("fought", "fight"), ("found", "find"),
    ("froze", "freeze"), ("frozen", "freeze"), ("gave", "give"), ("given", "give"), ("gone", "go"), ("got", "get"), ("gotten", "get"),
    ("grew", "grow"), ("grown", "grow"), ("heard", "hear"), ("held", "hold"), ("hid", "hide"), ("hidden", "hide"), ("hung", "hang"),
    ("kept", "keep"), ("knelt", "kneel"), ("knew", "know"), ("known", "know"), ("leapt", "leap"), ("learnt", "learn"), ("led", "lead"),
    ("left", "leave"), ("lent", "lend"), ("lit", "light"), ("lost", "lose"), ("made", "make"), ("meant", "mean"), ("met", "meet"),
    ("paid", "pay"), ("ran", "run"), ("rang", "ring"), ("ridden", "ride"), ("risen", "rise"), ("rode", "ride"), ("rung", "ring"),
    ("said", "say"), ("sang", "sing"), ("sank", "sink"), ("sat", "sit"), ("saw", "see"), ("seen", "see"), ("sent", "send"),
    ("shaken", "shake"), ("shone", "shine"), ("shook", "shake"), ("shot", "shoot"), ("showed", "show"), ("shown", "show"),
    ("shrank", "shrink"), ("shrunk", "shrink"), ("slept", "sleep"), ("slid", "slide"), ("sold", "sell"), ("sought", "seek"),
    ("sped", "speed"), ("spent", "spend"), ("spoke", "speak"), ("spoken", "speak"), ("spun", "spin"), ("stole", "steal"),
    ("stolen", "steal"), ("stood", "stand"), ("strove", "strive"), ("struck", "strike"), ("stuck", "stick"), ("stung", "sting"),
    ("sung", "sing"), ("sunk", "sink"), ("swam", "swim"), ("swept", "sweep"), ("swore", "swear"), ("sworn", "swear"), ("swum", "swim"),
    ("swung", "swing"), ("taken", "take"), ("taught", "teach"), ("thought", "think"), ("threw", "throw"), ("thrown", "throw"),
    ("told", "tell"), ("took", "take"), ("tore", "tear"), ("torn", "tear"), ("understood", "understand"), ("went", "go"), ("wept", "weep"),
    ("withdrew", "withdraw"), ("woke", "wake"), ("woken", "wake"), ("won", "win"), ("wore", "wear"), ("worn", "wear"), ("wove", "weave"),
    ("woven", "weave"), ("written", "write"), ("wrote", "write"),
];

/// The base form of an irregular past tense or participle (`word` itself otherwise).
pub fn base_form(word: &str) -> &str {
    match IRREGULAR.binary_search_by(|(form, _)| form.cmp(&word)) {
        Ok(i) => IRREGULAR[i].1,
        _ => word,
    }
}

/// Whether `word` (lower-case, apostrophes normalized) is a stopword.
pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

/// The index term of `word` (one of [`words`]' words, not a stopword): its
/// base form, stemmed, without a trailing apostrophe; the word itself when
/// that leaves nothing.
pub fn term_of(word: &str) -> String {
    // The stemmer's rules are all about letters: a number is its own term
    // (a test holds the stemmer to it).
    if word.bytes().all(|b| b.is_ascii_digit()) {
        return word.to_string();
    }
    let stemmed = Stemmer::create(Algorithm::English).stem(base_form(word)).trim_end_matches('\'').to_string();
    if stemmed.is_empty() {
        word.to_string()
    } else {
        stemmed
    }
}

/// A label (tag, concept, agent id) lower-cased as a whole, when it is a
/// term besides its words ([`Analyzer::label_terms`]): it has several words
/// or punctuation, and is not too long.
pub fn label_whole(label: &str) -> Option<String> {
    let whole = label.trim().to_lowercase();
    (whole.len() <= MAX_TOKEN_BYTES && whole.contains(|c: char| !c.is_alphanumeric())).then_some(whole)
}

/// One analyzed word: the surface form (lower-cased) and its index term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The word as written, lower-cased.
    pub surface: String,
    /// The stemmed term the index stores.
    pub term: String,
}

/// Splits `text` into lower-cased words: runs of letters and digits, with
/// inner apostrophes kept (so "Caroline's" stems to "carolin" and "don't"
/// is recognised as a stopword).
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '\u{2019}'))
        .map(|w| w.trim_matches(|c| c == '\'' || c == '\u{2019}'))
        .filter(|w| !w.is_empty() && w.len() <= MAX_TOKEN_BYTES)
        .map(|w| w.replace('\u{2019}', "'").to_lowercase())
}

/// Whether `content` asks something (has a question mark, ASCII or
/// full-width): such a thought lends more conversational context to the
/// thoughts after it (it is answered by what follows).
pub fn asks_question(content: &str) -> bool {
    content.contains(['?', '\u{ff1f}'])
}

/// Analyzes text into index terms. Stateless; cheap to create.
#[derive(Debug, Clone, Copy, Default)]
pub struct Analyzer;

impl Analyzer {
    /// Every non-stopword of `text` with its stemmed term, in order.
    pub fn tokens(&self, text: &str) -> Vec<Token> {
        self.tokens_knowing(text, |_| None)
    }

    /// [`Self::tokens`], taking a word's term from `known` when it has it
    /// (an index's words seen before) instead of stemming it again.
    pub fn tokens_knowing<'k>(&self, text: &str, known: impl Fn(&str) -> Option<&'k str>) -> Vec<Token> {
        words(text)
            .filter(|w| !is_stopword(w))
            .map(|w| Token { term: known(&w).map_or_else(|| term_of(&w), str::to_string), surface: w })
            .collect()
    }

    /// Just the terms of `text`.
    pub fn terms(&self, text: &str) -> Vec<String> {
        self.tokens(text).into_iter().map(|t| t.term).collect()
    }

    /// A label (tag, concept, agent id) as terms: its words, plus the whole
    /// label lower-cased when it has several words or punctuation, so an
    /// exact label in a query also matches (`dia:d1:3`, `rust-lang`).
    pub fn label_terms(&self, label: &str) -> Vec<String> {
        let mut out = self.terms(label);
        if let Some(whole) = label_whole(label).filter(|w| !out.contains(w)) {
            out.push(whole);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stemmer_leaves_numbers_as_they_are() {
        let stemmer = Stemmer::create(Algorithm::English);
        for n in (0..20_000u64).chain([u64::MAX, 1_000_000_007]) {
            for w in [n.to_string(), format!("{n:08}")] {
                assert_eq!(stemmer.stem(&w), w.as_str());
                assert_eq!(term_of(&w), w);
            }
        }
    }

    #[test]
    fn stopword_list_is_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]), "STOPWORDS must stay sorted and unique");
    }

    #[test]
    fn stems_inflections_alike() {
        let a = Analyzer;
        assert_eq!(a.terms("painting paints painted"), vec!["paint", "paint", "paint"]);
        assert_eq!(a.terms("Caroline's adoption"), a.terms("caroline adopt"));
    }

    #[test]
    fn irregular_past_forms_meet_their_base() {
        assert!(IRREGULAR.windows(2).all(|w| w[0].0 < w[1].0), "IRREGULAR must stay sorted and unique");
        let a = Analyzer;
        assert_eq!(a.terms("What did she make?"), a.terms("she made"));
        assert_eq!(a.terms("felt bought went"), a.terms("feel buy go"));
        assert_eq!(a.terms("a bit"), vec!["bit"], "common words that are also past forms stay");
        assert_eq!(base_form("painted"), "painted", "regular forms are the stemmer's job");
    }

    #[test]
    fn drops_stopwords_and_punctuation() {
        let a = Analyzer;
        assert_eq!(a.terms("What did she do, when it's raining?"), vec!["rain"]);
        assert_eq!(a.terms("Don’t stop"), vec!["stop"]);
    }

    #[test]
    fn keeps_numbers_and_unicode_words() {
        let a = Analyzer;
        assert_eq!(a.terms("[1:56 pm on 8 May, 2023]"), vec!["1", "56", "pm", "8", "may", "2023"]);
        assert_eq!(a.terms("Zürich café"), vec!["zürich", "café"]);
    }

    #[test]
    fn questions_are_told_by_their_mark() {
        assert!(asks_question("Any plans?") && asks_question("予定は？") && !asks_question("No plans."));
    }

    #[test]
    fn labels_keep_their_whole_form() {
        let a = Analyzer;
        assert_eq!(a.label_terms("rust"), vec!["rust"]);
        let t = a.label_terms("dia:D1:3");
        assert!(t.contains(&"dia:d1:3".to_string()), "{t:?}");
        let t = a.label_terms("machine learning");
        assert!(t.contains(&"machin".to_string()) && t.contains(&"machine learning".to_string()), "{t:?}");
    }
}
