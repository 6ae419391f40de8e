//! Append-time near-duplicate detection (MentisDB 0.10's dedup; off unless
//! [`crate::DbConfig::dedup_threshold`] is set).
//!
//! A new thought's content is compared with the contents of the chain's
//! last `window` thoughts by Jaccard similarity of their word sets (words:
//! runs of letters and digits, lower-cased, Snowball-stemmed; an irregular
//! past form also counts as its base form, as 0.10's lemma expansion does).
//! When the most similar one (the earliest on a tie) reaches the threshold,
//! the new thought is still written, with a `Supersedes` relation to it, so
//! default ranked retrieval shows the newer wording only. Nothing else
//! changes: the reply is the stored thought, relation included.
//!
//! Not applied to signed appends (a relation added after signing would break
//! the signature) nor when the caller already relates the new thought to
//! that target as `Supersedes`. A retried append (`thought_id` already
//! stored) compares against the window that preceded the stored thought, so
//! it finds the same target and replays.

use super::{Chain, NewThought, RelationInput};
use crate::limits::MAX_REFS;
use crate::thought::RelationKind;
use crate::ranked::analyzer::base_form;
use rust_stemmers::{Algorithm, Stemmer};
use std::collections::BTreeSet;

/// The words of `text` as dedup compares them.
fn word_set(stemmer: &Stemmer, text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for w in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        let w = w.to_lowercase();
        let base = base_form(&w);
        if base != w {
            out.insert(stemmer.stem(base).into_owned());
        }
        out.insert(stemmer.stem(&w).into_owned());
    }
    out
}

/// Jaccard similarity of two word sets (0 when either is empty).
fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let shared = a.intersection(b).count();
    shared as f64 / (a.len() + b.len() - shared) as f64
}

impl Chain {
    /// The index of the thought `content` near-duplicates: the most similar
    /// of the `window` thoughts before position `end` (the chain's length
    /// for a new thought), if its similarity is positive and at least
    /// `threshold`.
    pub(crate) fn near_duplicate(&self, content: &str, end: usize, window: usize, threshold: f64) -> Option<u64> {
        let stemmer = Stemmer::create(Algorithm::English);
        let new = word_set(&stemmer, content);
        if new.is_empty() {
            return None;
        }
        let end = end.min(self.thoughts.len());
        let mut best: Option<(f64, u64)> = None;
        for prior in self.thoughts.range(end.saturating_sub(window.max(1))..end) {
            let s = jaccard(&new, &word_set(&stemmer, &prior.content));
            if s > 0.0 && best.is_none_or(|(b, _)| s > b) {
                best = Some((s, prior.index));
            }
        }
        best.filter(|(s, _)| *s >= threshold).map(|(_, i)| i)
    }

    /// Adds to `input` the `Supersedes` relation dedup calls for, if any
    /// (see the module docs for when it does not apply).
    pub(crate) fn add_dedup_relation(&self, input: &mut NewThought, threshold: f64, window: usize) {
        // A fact record retires exactly the facts it closes (`facts.rs`), never a look-alike; a review record retires nothing.
        if input.signing_key_id.is_some() || input.thought_signature.is_some() || input.relations.len() >= MAX_REFS || crate::facts::is_fact(input.thought_type, &input.tags) || crate::reviews::is_review(input.thought_type, &input.tags) {
            return;
        }
        let end = match input.thought_id.as_deref().and_then(|id| self.by_id(id)) {
            Some(stored) => stored.index as usize,
            None => self.thoughts.len(),
        };
        let Some(index) = self.near_duplicate(&input.content, end, window, threshold) else { return };
        let target_id = &self.thoughts[index as usize].id;
        let already = input.relations.iter().any(|r| {
            r.kind == RelationKind::Supersedes
                && r.chain_key.as_deref().is_none_or(|k| k == self.chain_key)
                && (r.target_index == Some(index) || r.target_id.as_deref().is_some_and(|t| *target_id == *t))
        });
        if !already {
            input.relations.push(RelationInput { kind: RelationKind::Supersedes, target_id: None, target_index: Some(index), chain_key: None });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similarity_is_jaccard_over_stemmed_words() {
        let s = Stemmer::create(Algorithm::English);
        let a = word_set(&s, "Deploys use a canary.");
        let b = word_set(&s, "deploy uses the canary");
        // {deploy, use, a, canari} vs {deploy, use, the, canari}: 3 shared of 5.
        assert!((jaccard(&a, &b) - 0.6).abs() < 1e-9, "{a:?} {b:?}");
        assert!(word_set(&s, "she ran").contains("run"), "irregular forms also count as their base");
        assert_eq!(jaccard(&a, &BTreeSet::new()), 0.0);
    }
}
