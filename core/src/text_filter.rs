//! The `text` filter of `search` and `traverse_thoughts`: a thought matches
//! when its content, agent id, tags or concepts, lower-cased and written one
//! per line, contain the lower-cased needle.
//!
//! No lower-cased copy of the chain is kept (it cost ~120 bytes a thought).
//! Each thought keeps a 16-byte signature instead: one bit (of 128, hashed)
//! per run of three word bytes (ASCII letters and digits, and any byte of a
//! non-ASCII character) inside one of its lower-cased fields. Every such
//! run of a needle found in a thought occurs in the thought, so a thought
//! whose signature lacks one of the needle's bits cannot match and is
//! passed over without reading its text; the others are lower-cased into
//! one buffer and searched. Signatures are contiguous, so a scan over
//! thoughts that do not match reads 16 bytes each.
//!
//! How many thoughts a signature passes over depends on the text: on
//! LoCoMo's 2,760 turns (~127 bytes; 39 of the 128 bits set on average), a
//! word of four letters or more from its questions reads 4.4% of the turns
//! (0.7% hold it); pairs of bytes instead of runs of three read 14%
//! (`scripts/text_signature_selectivity.py`). A thought of a kilobyte or
//! more sets most bits and is read for most needles, and a needle with no
//! run of three word bytes ("ai", "#1") reads every thought, as a scan
//! without signatures would.

use crate::thought::Thought;

/// The signatures of a chain's thoughts, in chain order (a `Derived` index,
/// see `derived.rs`).
#[derive(Debug, Default)]
pub(crate) struct TextSignatures(Vec<u128>);

impl TextSignatures {
    /// How many thoughts have a signature.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// The signature of thought `index`.
    #[inline]
    pub(crate) fn get(&self, index: usize) -> u128 {
        self.0[index]
    }

    /// Adds the next thought's signature.
    pub(crate) fn add(&mut self, t: &Thought) {
        let mut bits = 0;
        for field in text_fields(t) {
            if field.is_ascii() {
                add_runs(field.bytes().map(|b| b.to_ascii_lowercase()), &mut bits);
            } else {
                add_runs(field.to_lowercase().bytes(), &mut bits);
            }
        }
        crate::growth::push(&mut self.0, bits);
    }
}

/// Sets the bit of each run of three word bytes of `bytes`.
fn add_runs(bytes: impl Iterator<Item = u8>, bits: &mut u128) {
    // The last bytes read, and how many of them in a row are word bytes.
    let (mut last, mut run) = (0u32, 0);
    for b in bytes {
        if b.is_ascii_alphanumeric() || !b.is_ascii() {
            last = (last << 8 | u32::from(b)) & 0xff_ffff;
            run += 1;
            if run >= 3 {
                *bits |= 1 << run_bit(last);
            }
        } else {
            run = 0;
        }
    }
}

/// Which of the 128 bits three bytes (`run`'s low 24 bits) set (a
/// multiplicative hash).
fn run_bit(run: u32) -> u32 {
    run.wrapping_mul(0x9E37_79B1) >> 25
}

/// The fields the filter reads, in order.
fn text_fields(t: &Thought) -> impl Iterator<Item = &str> {
    [&*t.content, &*t.agent_id].into_iter().chain(t.tags.iter().chain(&t.concepts).map(|l| l.as_str()))
}

/// A needle, ready to test thoughts.
#[derive(Debug)]
pub(crate) struct TextNeedle<'a> {
    /// Lower-cased (`str::to_lowercase`).
    lowered: &'a str,
    /// The bits of the needle's runs of word bytes (a line break ends a
    /// run, as it ends a field).
    bits: u128,
    /// The text of the thought being tested, lower-cased (one buffer for a
    /// whole scan).
    text: String,
}

impl<'a> TextNeedle<'a> {
    /// The needle for `lowered`, a lower-cased text.
    pub(crate) fn new(lowered: &'a str) -> Self {
        let mut bits = 0;
        add_runs(lowered.bytes(), &mut bits);
        TextNeedle { lowered, bits, text: String::new() }
    }

    /// Whether a thought whose signature is `signature` may contain the
    /// needle (`false`: it does not; told without reading the thought).
    #[inline]
    pub(crate) fn may_be_in(&self, signature: u128) -> bool {
        signature & self.bits == self.bits
    }

    /// Whether thought `t`, whose signature is `signature`, contains the needle.
    pub(crate) fn is_in(&mut self, t: &Thought, signature: u128) -> bool {
        if !self.may_be_in(signature) {
            return false;
        }
        self.text.clear();
        for (i, field) in text_fields(t).enumerate() {
            if i > 0 {
                self.text.push('\n');
            }
            if field.is_ascii() {
                let from = self.text.len();
                self.text.push_str(field);
                self.text[from..].make_ascii_lowercase();
            } else {
                // Other text may change length, and `str::to_lowercase`
                // knows a word-final sigma, which `char::to_lowercase` does not.
                self.text.push_str(&field.to_lowercase());
            }
        }
        self.text.contains(self.lowered)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::tests::golden_thought;
    use proptest::prelude::*;

    fn thought(content: &str, tags: &[&str]) -> Thought {
        Thought { content: content.into(), tags: crate::label::labels(tags), concepts: Default::default(), ..golden_thought() }
    }

    /// What the filter answers for `needle` (any case) and a thought.
    fn found(needle: &str, t: &Thought) -> bool {
        let mut signatures = TextSignatures::default();
        signatures.add(t);
        TextNeedle::new(&needle.to_lowercase()).is_in(t, signatures.0[0])
    }

    /// The filter's meaning, spelled out: the lower-cased text, one field per line.
    fn meaning(needle: &str, t: &Thought) -> bool {
        let text: Vec<String> = text_fields(t).map(str::to_lowercase).collect();
        text.join("\n").contains(&needle.to_lowercase())
    }

    #[test]
    fn any_case_in_any_field_and_across_fields_by_line() {
        let t = thought("The Quick brown FOX; said Σοφία ΟΔΟΣ", &["Cache-Layer"]);
        assert_eq!(t.agent_id, "agent-42");
        for needle in ["quick", "QUICK BROWN fox", "fox;", "cache-layer", "σοφία", "οδος", "agent-42", "fox; said σοφία οδος\nagent-42\ncache"] {
            assert!(found(needle, &t), "{needle}");
        }
        for needle in ["foxes", "quick  brown", "οδοσ", "fox agent", "layer\nagent"] {
            assert!(!found(needle, &t), "{needle}");
        }
    }

    #[test]
    fn a_signature_lacking_a_run_skips_the_thought_unread() {
        let t = thought("alpha beta", &[]);
        let mut needle = TextNeedle::new("gamma");
        assert!(!needle.is_in(&t, 0) && needle.text.is_empty(), "rejected by the signature");
        assert!(!needle.is_in(&t, u128::MAX) && needle.text.starts_with("alpha beta\n"), "read, then not found");
    }

    proptest! {
        #[test]
        fn matches_the_lower_cased_text(content in "[a-cA-CσΣς \n@`]{0,60}", tag in "[a-cA-C]{0,4}", needle in "[a-cA-CσΣς \n@`]{1,6}") {
            let t = thought(&content, &[&tag]);
            prop_assert_eq!(found(&needle, &t), meaning(&needle, &t));
        }
    }
}
