//! JSON text: a tool's reply as the dispatcher wrote it ([`JsonText`]), and
//! the hand writer of the replies agents ask for most ([`JsonOut`]).
//!
//! The contract: [`JsonOut`] writes byte for byte what `serde_json`'s
//! compact serializer writes for the same values (strings escaped as it
//! escapes them, floats in its shortest form through the same `zmij`, a
//! non-finite float as `null`, integers through `itoa`). The property tests
//! below, and each hand-written reply's own test, hold it to that.
//!
//! Why by hand: a search or ranked reply is ~700 short strings (keys, ids,
//! hashes, timestamps, content). Through serde each is a call that checks
//! every byte for escapes, one at a time; that was a third of a ranked
//! query's time in the daemon. Here keys are written as the constants they
//! are, hex digits and timestamps without a scan, and free text is scanned
//! eight bytes at a time.

use serde::Serialize;

/// A tool's reply: JSON text the dispatcher wrote (serde_json or
/// [`JsonOut`]), valid by construction, handed to the host as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonText(String);

impl JsonText {
    /// `value` serialized by serde_json (compact).
    pub fn of<T: Serialize + ?Sized>(value: &T) -> JsonText {
        JsonText(serde_json::to_string(value).expect("tool replies serialize"))
    }

    /// Parses `text` (a host's own JSON, e.g. in tests); `Err` when it is not JSON.
    pub fn parse(text: impl Into<String>) -> Result<JsonText, serde_json::Error> {
        let text = text.into();
        serde_json::from_str::<serde::de::IgnoredAny>(&text)?;
        Ok(JsonText(text))
    }

    /// The text.
    pub fn get(&self) -> &str {
        &self.0
    }

    /// The text, owned (no copy).
    pub fn into_string(self) -> String {
        self.0
    }
}

impl std::fmt::Display for JsonText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A JSON text being written by hand (see the module's contract). Crate
/// private: only the engine's writers, held to serde_json's output by their
/// tests, may make a [`JsonText`] without serde or a parse.
#[derive(Debug, Default)]
pub(crate) struct JsonOut {
    text: String,
}

impl JsonOut {
    /// An empty text with room for `capacity` bytes.
    pub(crate) fn with_capacity(capacity: usize) -> JsonOut {
        JsonOut { text: String::with_capacity(capacity) }
    }

    /// The text written.
    pub(crate) fn finish(self) -> JsonText {
        JsonText(self.text)
    }

    /// JSON text written as it is: punctuation, a key with its quotes and
    /// colon (`"index":`), `null`. The caller vouches that it is JSON.
    pub(crate) fn raw(&mut self, json: &str) -> &mut Self {
        self.text.push_str(json);
        self
    }

    /// `s` as a JSON string: quoted, escaped as serde_json escapes.
    pub(crate) fn str(&mut self, s: &str) -> &mut Self {
        self.text.push('"');
        push_escaped(&mut self.text, s);
        self.text.push('"');
        self
    }

    /// `s` as a JSON string, or `null`.
    pub(crate) fn opt_str(&mut self, s: Option<&str>) -> &mut Self {
        match s {
            Some(s) => self.str(s),
            None => self.raw("null"),
        }
    }

    /// Text that needs no escape (hex digits, a canonical timestamp: the
    /// caller knows), quoted.
    pub(crate) fn plain_str(&mut self, s: &str) -> &mut Self {
        debug_assert!(!s.bytes().any(needs_escape), "{s:?} needs escapes");
        self.text.push('"');
        self.text.push_str(s);
        self.text.push('"');
        self
    }

    /// An unsigned integer.
    pub(crate) fn u64(&mut self, n: u64) -> &mut Self {
        self.text.push_str(itoa::Buffer::new().format(n));
        self
    }

    /// A float as serde_json writes an `f64`: shortest form, `null` when not finite.
    pub(crate) fn f64(&mut self, x: f64) -> &mut Self {
        self.float(x, x.is_finite())
    }

    /// A float as serde_json writes an `f32`: shortest form, `null` when not finite.
    pub(crate) fn f32(&mut self, x: f32) -> &mut Self {
        self.float(x, x.is_finite())
    }

    /// `x` in serde_json's float form (its `zmij`), or `null` when not `finite`.
    fn float(&mut self, x: impl zmij::Float, finite: bool) -> &mut Self {
        let mut buffer = zmij::Buffer::new();
        self.text.push_str(if finite { buffer.format_finite(x) } else { "null" });
        self
    }

    /// `items` as a JSON array of strings.
    pub(crate) fn str_array<'a>(&mut self, items: impl IntoIterator<Item = &'a str>) -> &mut Self {
        self.text.push('[');
        for (i, item) in items.into_iter().enumerate() {
            if i > 0 {
                self.text.push(',');
            }
            self.str(item);
        }
        self.text.push(']');
        self
    }

    /// A rare value written by serde_json itself (one allocation: keep it
    /// off the common path).
    pub(crate) fn serde<T: Serialize + ?Sized>(&mut self, value: &T) -> &mut Self {
        self.text.push_str(&serde_json::to_string(value).expect("reply parts serialize"));
        self
    }
}

/// Whether serde_json escapes byte `b`: `"`, `\` and the controls below 0x20.
fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// Whether any of the eight bytes of `word` may need an escape (no false
/// negatives: a byte below 0x20, a `"` or a `\` always sets a high bit;
/// a word that does is then read byte by byte).
fn word_may_need_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
    (below_space | has_zero(word ^ (ONES * u64::from(b'"'))) | has_zero(word ^ (ONES * u64::from(b'\\')))) != 0
}

/// `s`'s JSON escape into `out`, without the quotes.
fn push_escaped(out: &mut String, s: &str) {
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if let Some(word) = bytes.get(i..i + 8) {
            let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
            if !word_may_need_escape(word) {
                i += 8;
                continue;
            }
        }
        let b = bytes[i];
        if needs_escape(b) {
            // `b` is ASCII, so both ends are character boundaries.
            out.push_str(&s[start..i]);
            push_escape(out, b);
            start = i + 1;
        }
        i += 1;
    }
    out.push_str(&s[start..]);
}

/// The escape of one byte that needs one, as serde_json writes it.
fn push_escape(out: &mut String, b: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match b {
        b'"' => out.push_str("\\\""),
        b'\\' => out.push_str("\\\\"),
        0x08 => out.push_str("\\b"),
        0x09 => out.push_str("\\t"),
        0x0a => out.push_str("\\n"),
        0x0c => out.push_str("\\f"),
        0x0d => out.push_str("\\r"),
        _ => {
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn written(f: impl FnOnce(&mut JsonOut)) -> String {
        let mut out = JsonOut::default();
        f(&mut out);
        out.finish().into_string()
    }

    #[test]
    fn every_byte_is_escaped_as_serde_json_escapes_it() {
        // Each byte alone, then at each offset of a long run (the word scan's edges).
        for b in 0u8..0x80 {
            let s = char::from(b).to_string();
            assert_eq!(written(|o| { o.str(&s); }), serde_json::to_string(&s).unwrap(), "byte {b:#x}");
            for at in 0..20 {
                let mut long = "abcdefghijklmnopqrstuvwxyz".to_string();
                long.insert(at, char::from(b));
                assert_eq!(written(|o| { o.str(&long); }), serde_json::to_string(&long).unwrap(), "byte {b:#x} at {at}");
            }
        }
    }

    proptest! {
        #[test]
        fn strings_are_written_as_serde_json_writes_them(s in any::<String>(), t in "[\\x00-\\x7f]{0,40}") {
            prop_assert_eq!(written(|o| { o.str(&s); }), serde_json::to_string(&s).unwrap());
            prop_assert_eq!(written(|o| { o.str(&t); }), serde_json::to_string(&t).unwrap());
        }

        #[test]
        fn numbers_are_written_as_serde_json_writes_them(x in any::<f64>(), y in any::<f32>(), n in any::<u64>()) {
            prop_assert_eq!(written(|o| { o.f64(x); }), serde_json::to_string(&x).unwrap());
            prop_assert_eq!(written(|o| { o.f32(y); }), serde_json::to_string(&y).unwrap());
            prop_assert_eq!(written(|o| { o.u64(n); }), serde_json::to_string(&n).unwrap());
        }
    }

    #[test]
    fn non_finite_floats_and_special_values_match_serde_json() {
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, 1.0, 0.5, 1e-7, 1e21, f64::MAX, f64::MIN_POSITIVE] {
            assert_eq!(written(|o| { o.f64(x); }), serde_json::to_string(&x).unwrap(), "{x}");
            assert_eq!(written(|o| { o.f32(x as f32); }), serde_json::to_string(&(x as f32)).unwrap(), "{x}");
        }
        assert_eq!(written(|o| { o.opt_str(None).raw(",").str_array(["a\"", "b"]); }), r#"null,["a\"","b"]"#);
    }

    #[test]
    fn a_host_parses_its_own_text_and_refuses_what_is_not_json() {
        assert_eq!(JsonText::parse(r#"{"a":[1,"x"]}"#).unwrap().get(), r#"{"a":[1,"x"]}"#);
        assert!(JsonText::parse("{not json").is_err());
    }
}
