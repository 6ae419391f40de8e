//! Short texts many thoughts repeat (agent ids and names, tags, concepts),
//! held once per chain.
//!
//! A chain of 100,000 thoughts written by a handful of agents with a few
//! dozen tags carries the same few labels on every thought. As `String`s
//! each was an allocation of its own per thought; a [`Label`] is a shared,
//! immutable string, and a chain's [`LabelSet`] hands every thought that
//! carries the same text the same one: no allocation, 16 bytes a label (and
//! a set entry per distinct text).
//! `cargo run --release -p mentisdb-core --example memory_breakdown`
//! measures what it saves.

use crate::keyed_hash::{KeyedSet, KeyedState};
use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// An immutable, cheaply cloned string: a thought's agent id or name, one
/// of its tags or concepts. Reads as a `&str` (`Deref`), compares with
/// `str` and `String`, and is a plain JSON string on the wire.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Label(Arc<str>);

impl Label {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `self` and `other` share one allocation (a [`LabelSet`] made both).
    pub fn shares(&self, other: &Label) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Deref for Label {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Label {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Label {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl From<&str> for Label {
    fn from(s: &str) -> Label {
        Label(Arc::from(s))
    }
}

impl From<String> for Label {
    fn from(s: String) -> Label {
        Label(Arc::from(s))
    }
}

impl From<&String> for Label {
    fn from(s: &String) -> Label {
        Label(Arc::from(s.as_str()))
    }
}

impl From<Label> for String {
    fn from(l: Label) -> String {
        l.0.to_string()
    }
}

crate::text_value::text_value!(Label, |l| l.as_str());

/// Labels from `texts`, in order (a list of tags or concepts).
pub fn labels<S: AsRef<str>>(texts: impl IntoIterator<Item = S>) -> Box<[Label]> {
    texts.into_iter().map(|s| Label::from(s.as_ref())).collect()
}

/// One chain's distinct labels: [`LabelSet::share`] makes every label of
/// the same text one allocation. Keyed by the host (`keyed_hash.rs`), as
/// callers choose the texts. It keeps every label it was given (a
/// pointer, 16 bytes, each; the text is the thoughts'), also after the
/// thoughts carrying it are forgotten.
#[derive(Debug, Clone, Default)]
pub(crate) struct LabelSet(KeyedSet<Label>);

impl LabelSet {
    /// An empty set keyed by `hasher`.
    pub(crate) fn with_hasher(hasher: KeyedState) -> Self {
        LabelSet(KeyedSet::with_hasher(hasher))
    }

    /// The set's label for `text` (shared, no allocation), or a new one
    /// (not added: [`LabelSet::share`] adds it when the thought is kept).
    pub(crate) fn get(&self, text: &str) -> Label {
        self.0.get(text).cloned().unwrap_or_else(|| Label::from(text))
    }

    /// The set's label for `text`, added when new (no allocation when the
    /// set has it).
    pub(crate) fn intern(&mut self, text: &str) -> Label {
        if let Some(kept) = self.0.get(text) {
            return kept.clone();
        }
        let label = Label::from(text);
        self.0.insert(label.clone());
        label
    }

    /// Makes `label` the set's label of its text, adding it when the set
    /// has none.
    pub(crate) fn share(&mut self, label: &mut Label) {
        match self.0.get(label.as_str()) {
            Some(kept) if kept.shares(label) => {}
            Some(kept) => *label = kept.clone(),
            None => {
                self.0.insert(label.clone());
            }
        }
    }

    /// Adds the labels of `other` this set has no label for.
    pub(crate) fn absorb(&mut self, other: LabelSet) {
        if self.0.is_empty() && self.0.hasher() == other.0.hasher() {
            *self = other;
            return;
        }
        for label in other.0 {
            if !self.0.contains(label.as_str()) {
                self.0.insert(label);
            }
        }
    }

    /// How many distinct labels the set holds.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_is_its_text_on_the_wire_and_in_comparisons() {
        let l = Label::from("ops");
        assert_eq!(serde_json::to_string(&l).unwrap(), "\"ops\"");
        assert_eq!(serde_json::from_str::<Label>("\"ops\"").unwrap(), l);
        assert!(serde_json::from_str::<Label>("3").is_err());
        assert_eq!(l, "ops");
        assert_eq!("ops", l);
        assert_eq!(l, String::from("ops"));
        assert_eq!(&*l, "ops");
        assert_eq!(format!("{l} {l:?}"), "ops \"ops\"");
    }

    #[test]
    fn a_set_shares_one_allocation_per_text() {
        let mut set = LabelSet::default();
        let mut a = Label::from("ops");
        let mut b = Label::from("ops");
        assert!(!a.shares(&b));
        set.share(&mut a);
        set.share(&mut b);
        assert!(a.shares(&b), "the second is replaced by the first");
        let c = set.get("ops");
        assert!(c.shares(&a), "get hands out the kept one");
        let mut d = set.get("new");
        assert_eq!(set.len(), 1, "get adds nothing");
        set.share(&mut d);
        assert_eq!(set.len(), 2);
        assert!(set.get("new").shares(&d));
    }
}
