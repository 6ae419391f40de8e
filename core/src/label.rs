//! Short texts many thoughts repeat (agent ids and names, tags, concepts),
//! and lists of them (a thought's tags, its concepts), held once per chain.
//!
//! A chain of 100,000 thoughts written by a handful of agents with a few
//! dozen tags carries the same few labels on every thought. As `String`s
//! each was an allocation of its own per thought; a [`Label`] is a shared,
//! immutable string, and a chain's [`LabelSet`] hands every thought that
//! carries the same text the same one: no allocation, 8 bytes a label (and
//! a set entry per distinct text). A thought's tags and concepts are
//! [`LabelList`]s, shared the same way: the thoughts carrying the same list
//! hold one allocation of it.
//! `cargo run --release -p mentisdb-core --example memory_breakdown`
//! measures what it saves.

use crate::keyed_hash::{KeyedSet, KeyedState};
use std::borrow::Borrow;
use std::hash::BuildHasher;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// An immutable, cheaply cloned string: a thought's agent id or name, one
/// of its tags or concepts. Reads as a `&str` (`Deref`), compares with
/// `str` and `String`, and is a plain JSON string on the wire.
///
/// 8 bytes (a thin pointer: a thought holds two, its agent id and name, and
/// lists hold one per entry); the empty text is no allocation. The text
/// sits behind a second pointer, one more load on reading it.
#[derive(Clone, Default)]
pub struct Label(Option<Arc<Box<str>>>);

impl Label {
    /// The text.
    pub fn as_str(&self) -> &str {
        self.0.as_deref().map_or("", |s| s)
    }

    /// Whether `self` and `other` share one allocation (a [`LabelSet`] made
    /// both), or are both empty.
    pub fn shares(&self, other: &Label) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        }
    }

    fn new(s: Box<str>) -> Label {
        Label(if s.is_empty() { None } else { Some(Arc::new(s)) })
    }
}

// Equality, order and hash are the text's (as `Borrow<str>` requires).
impl PartialEq for Label {
    fn eq(&self, other: &Label) -> bool {
        self.shares(other) || self.as_str() == other.as_str()
    }
}

impl Eq for Label {}

impl PartialOrd for Label {
    fn partial_cmp(&self, other: &Label) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Label {
    fn cmp(&self, other: &Label) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl std::hash::Hash for Label {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl Deref for Label {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Label {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Label {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl From<&str> for Label {
    fn from(s: &str) -> Label {
        Label::new(s.into())
    }
}

impl From<String> for Label {
    fn from(s: String) -> Label {
        Label::new(s.into_boxed_str())
    }
}

impl From<&String> for Label {
    fn from(s: &String) -> Label {
        Label::new(s.as_str().into())
    }
}

impl From<Label> for String {
    fn from(l: Label) -> String {
        l.as_str().to_string()
    }
}

crate::text_value::text_value!(Label, |l| l.as_str());

/// Labels from `texts`, in order (a list of tags or concepts).
pub fn labels<S: AsRef<str>>(texts: impl IntoIterator<Item = S>) -> LabelList {
    texts.into_iter().map(|s| Label::from(s.as_ref())).collect()
}

/// A thought's tags or its concepts: an immutable list of [`Label`]s that
/// every thought of a chain carrying the same list shares ([`LabelSet`]).
/// Reads as a `&[Label]` (`Deref`) and is a JSON array of strings on the
/// wire; 8 bytes (a thin pointer, the labels behind a second one), and an
/// empty list allocates nothing.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct LabelList(Option<Arc<Box<[Label]>>>);

impl LabelList {
    /// Whether `self` and `other` share one allocation (a [`LabelSet`] made
    /// both), or are both empty.
    pub fn shares(&self, other: &LabelList) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        }
    }
}

impl Deref for LabelList {
    type Target = [Label];
    fn deref(&self) -> &[Label] {
        self.0.as_deref().map_or(&[], |l| l)
    }
}

impl<'a> IntoIterator for &'a LabelList {
    type Item = &'a Label;
    type IntoIter = std::slice::Iter<'a, Label>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl fmt::Debug for LabelList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl From<Vec<Label>> for LabelList {
    fn from(v: Vec<Label>) -> LabelList {
        LabelList((!v.is_empty()).then(|| Arc::new(v.into_boxed_slice())))
    }
}

impl FromIterator<Label> for LabelList {
    fn from_iter<I: IntoIterator<Item = Label>>(iter: I) -> LabelList {
        LabelList::from(iter.into_iter().collect::<Vec<_>>())
    }
}

impl<const N: usize> PartialEq<[&str; N]> for LabelList {
    fn eq(&self, other: &[&str; N]) -> bool {
        self.len() == N && self.iter().zip(other).all(|(l, s)| l == s)
    }
}

impl serde::Serialize for LabelList {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for LabelList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<Label>::deserialize(d).map(LabelList::from)
    }
}

impl schemars::JsonSchema for LabelList {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        Vec::<String>::schema_name()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Vec::<String>::json_schema(generator)
    }
    fn inline_schema() -> bool {
        true
    }
}

/// One chain's distinct labels and label lists: [`LabelSet::share`] makes
/// every label of the same text one allocation, [`LabelSet::share_list`]
/// every list of the same labels. Keyed by the host (`keyed_hash.rs`), as
/// callers choose the texts. It keeps every label and list it was given (a
/// pointer, 8 bytes, each; the text is the thoughts'), also after the
/// thoughts carrying it are forgotten.
#[derive(Debug, Clone, Default)]
pub(crate) struct LabelSet {
    labels: KeyedSet<Label>,
    /// Lists by the hash of their labels' texts, which is the hash of a
    /// `[String]` or `[&str]` of the same texts (a `String`, a `str` and a
    /// `Label` hash alike): looked up by texts without making labels.
    lists: hashbrown::HashTable<LabelList>,
}

impl LabelSet {
    /// An empty set keyed by `hasher`.
    pub(crate) fn with_hasher(hasher: KeyedState) -> Self {
        LabelSet { labels: KeyedSet::with_hasher(hasher), lists: hashbrown::HashTable::new() }
    }

    /// The set's label for `text` (shared, no allocation), or a new one
    /// (not added: [`LabelSet::share`] adds it when the thought is kept).
    pub(crate) fn get(&self, text: &str) -> Label {
        self.labels.get(text).cloned().unwrap_or_else(|| Label::from(text))
    }

    /// The set's list of `texts` (shared, no allocation), or a new one of
    /// the set's labels (not added: [`LabelSet::share_list`] adds it when the
    /// thought is kept).
    pub(crate) fn get_list(&self, texts: &[String]) -> LabelList {
        match self.find_list(texts) {
            Some(kept) => kept.clone(),
            None => texts.iter().map(|t| self.get(t)).collect(),
        }
    }

    /// The set's list of `labels`, added when new (for a decoder that
    /// interned each label already).
    pub(crate) fn intern_list(&mut self, labels: Vec<Label>) -> LabelList {
        if let Some(kept) = self.find_list(&labels) {
            return kept.clone();
        }
        let list = LabelList::from(labels);
        if !list.is_empty() {
            self.insert_list(list.clone());
        }
        list
    }

    /// The kept list of the texts `texts`.
    fn find_list<S: AsRef<str> + std::hash::Hash>(&self, texts: &[S]) -> Option<&LabelList> {
        let hash = self.labels.hasher().hash_one(texts);
        self.lists.find(hash, |l| l.len() == texts.len() && l.iter().zip(texts).all(|(l, t)| l.as_str() == t.as_ref()))
    }

    /// Keeps `list` (which the set has not).
    fn insert_list(&mut self, list: LabelList) {
        let hasher = *self.labels.hasher();
        let hash = hasher.hash_one(&*list);
        self.lists.insert_unique(hash, list, |l| hasher.hash_one(&**l));
    }

    /// Makes `list` the set's list of its labels, adding it (of the set's
    /// labels) when the set has none.
    pub(crate) fn share_list(&mut self, list: &mut LabelList) {
        if list.is_empty() {
            return;
        }
        match self.find_list(list) {
            Some(kept) if kept.shares(list) => {}
            Some(kept) => *list = kept.clone(),
            None => {
                if !list.iter().all(|l| self.labels.get(l.as_str()).is_some_and(|kept| kept.shares(l))) {
                    // The set's labels where it has them; the list's own where not.
                    *list = list
                        .iter()
                        .map(|l| {
                            let mut l = l.clone();
                            self.share(&mut l);
                            l
                        })
                        .collect();
                }
                self.insert_list(list.clone());
            }
        }
    }

    /// The set's label for `text`, added when new (no allocation when the
    /// set has it).
    pub(crate) fn intern(&mut self, text: &str) -> Label {
        if let Some(kept) = self.labels.get(text) {
            return kept.clone();
        }
        let label = Label::from(text);
        self.labels.insert(label.clone());
        label
    }

    /// Makes `label` the set's label of its text, adding it when the set
    /// has none.
    pub(crate) fn share(&mut self, label: &mut Label) {
        match self.labels.get(label.as_str()) {
            Some(kept) if kept.shares(label) => {}
            Some(kept) => *label = kept.clone(),
            None => {
                self.labels.insert(label.clone());
            }
        }
    }

    /// Adds the labels and lists of `other` this set has none for.
    pub(crate) fn absorb(&mut self, other: LabelSet) {
        if self.labels.is_empty() && self.lists.is_empty() && self.labels.hasher() == other.labels.hasher() {
            *self = other;
            return;
        }
        for label in other.labels {
            if !self.labels.contains(label.as_str()) {
                self.labels.insert(label);
            }
        }
        for mut list in other.lists {
            self.share_list(&mut list);
        }
    }

    /// How many distinct labels the set holds.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.labels.len()
    }

    /// How many distinct lists the set holds.
    #[cfg(test)]
    pub(crate) fn lists(&self) -> usize {
        self.lists.len()
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
        assert_eq!(std::mem::size_of::<Label>(), 8, "a thin pointer");
        let empty = Label::from(String::new());
        assert!(empty.is_empty() && empty == Label::default() && empty.shares(&Label::default()), "the empty text allocates nothing");
        let hash = |v: &dyn Fn(&mut std::collections::hash_map::DefaultHasher)| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            v(&mut h);
            std::hash::Hasher::finish(&h)
        };
        use std::hash::Hash;
        assert_eq!(hash(&|h| l.hash(h)), hash(&|h| "ops".hash(h)), "hashes as its text (Borrow<str>)");
        assert_eq!(hash(&|h| empty.hash(h)), hash(&|h| "".hash(h)));
        let (a, b) = (Label::from("a"), Label::from("b"));
        assert!(empty < l && a < b && b.cmp(&a).is_gt(), "ordered as its text");
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

    #[test]
    fn a_set_shares_one_allocation_per_list_of_its_labels() {
        assert_eq!(std::mem::size_of::<LabelList>(), 8, "a thin pointer");
        let mut set = LabelSet::default();
        let texts = ["ops".to_string(), "db".to_string()];
        let mut a = set.get_list(&texts);
        assert_eq!(a, ["ops", "db"]);
        assert_eq!(set.lists(), 0, "get_list adds nothing");
        set.share_list(&mut a);
        assert!(a[0].shares(&set.get("ops")) && a[1].shares(&set.get("db")), "the labels are the set's");
        let mut fresh = labels(["new", "ops"]);
        let new = fresh[0].clone();
        set.share_list(&mut fresh);
        assert!(fresh[0].shares(&new) && fresh[1].shares(&a[0]), "a label the set lacked is adopted, not copied");
        let mut b = labels(["ops", "db"]);
        assert!(!b.shares(&a));
        set.share_list(&mut b);
        assert!(b.shares(&a), "the second is replaced by the first");
        assert!(set.get_list(&texts).shares(&a), "looked up by its texts");
        assert!(!set.get_list(&["db".to_string(), "ops".to_string()]).shares(&a), "order counts");
        assert!(set.intern_list(vec![set.get("ops"), set.get("db")]).shares(&a));
        let mut empty = set.get_list(&[]);
        set.share_list(&mut empty);
        assert!(empty.is_empty() && set.lists() == 2, "an empty list is nothing to keep");
        assert_eq!(serde_json::to_string(&a).unwrap(), r#"["ops","db"]"#);
        assert_eq!(serde_json::from_str::<LabelList>(r#"["ops","db"]"#).unwrap(), a);
        assert_eq!(format!("{a:?}"), r#"["ops", "db"]"#);
    }
}
