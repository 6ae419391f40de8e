//! Fixed-size bytes that are written as lowercase hex.
//!
//! A thought's `hash` and `prev_hash` ([`ThoughtHash`], 32 bytes) and its
//! `content_salt` ([`ContentSalt`], 16 bytes) are hex strings on the wire, in
//! the canonical encoding and in every reply, but in memory they are their
//! bytes: 32 bytes inline instead of a 24-byte `String` pointing at 64 more
//! on the heap. [`HexBytes`] reads only the exact lowercase hex form the
//! engine writes, so the text a thought was read from is the text it is
//! written back as, byte for byte (what the chain's hashes cover).

use std::fmt;

/// `N` bytes, read and written as exactly `2 * N` lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HexBytes<const N: usize>(pub [u8; N]);

/// A SHA-256 digest: a thought's `hash` and `prev_hash`.
pub type ThoughtHash = HexBytes<32>;

/// A schema-2 thought's 16-byte `content_salt`.
pub type ContentSalt = HexBytes<16>;

/// Why a string is not a [`HexBytes`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected {digits} lowercase hex digits, found {found:?} ({chars} characters)")]
pub struct NotHex {
    /// How many digits were expected (`2 * N`).
    pub digits: usize,
    /// The start of what was found (at most 16 characters).
    pub found: String,
    /// How many characters were found.
    pub chars: usize,
}

impl NotHex {
    fn new(digits: usize, found: &str) -> Self {
        NotHex { digits, found: found.chars().take(16).collect(), chars: found.chars().count() }
    }
}

impl<const N: usize> HexBytes<N> {
    /// Parses exactly `2 * N` lowercase hex digits.
    pub fn parse(hex: &str) -> Result<Self, NotHex> {
        let digits = 2 * N;
        let lower = hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if hex.len() != digits || !lower {
            return Err(NotHex::new(digits, hex));
        }
        let mut out = [0u8; N];
        hex::decode_to_slice(hex, &mut out).map_err(|_| NotHex::new(digits, hex))?;
        Ok(HexBytes(out))
    }

    /// Parses `2 * N` hex digits in either case (what a lookup by hash
    /// accepts from a caller); `None` when `hex` is not that.
    pub fn parse_any_case(hex: &str) -> Option<Self> {
        let mut out = [0u8; N];
        (hex.len() == 2 * N && hex::decode_to_slice(hex, &mut out).is_ok()).then_some(HexBytes(out))
    }

    /// The bytes.
    pub const fn as_bytes(&self) -> &[u8; N] {
        &self.0
    }

    /// The hex digits, written into `buf` (no allocation).
    pub fn hex_in<'b>(&self, buf: &'b mut [u8; 64]) -> &'b str {
        const { assert!(N <= 32, "HexBytes writes at most 32 bytes") };
        let out = &mut buf[..2 * N];
        hex::encode_to_slice(self.0, out).expect("2N digits fit 2N bytes");
        std::str::from_utf8(out).expect("hex digits are ASCII")
    }

    /// The hex digits as a `String`.
    pub fn to_hex(&self) -> String {
        self.hex_in(&mut [0u8; 64]).to_string()
    }
}

impl<const N: usize> fmt::Display for HexBytes<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.hex_in(&mut [0u8; 64]))
    }
}

/// Debug-printed as the quoted hex string it stands for, as a `String` was.
impl<const N: usize> fmt::Debug for HexBytes<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.hex_in(&mut [0u8; 64]), f)
    }
}

impl<const N: usize> std::str::FromStr for HexBytes<N> {
    type Err = NotHex;
    fn from_str(s: &str) -> Result<Self, NotHex> {
        HexBytes::parse(s)
    }
}

/// All zeros: a placeholder until a thought is hashed.
impl<const N: usize> Default for HexBytes<N> {
    fn default() -> Self {
        HexBytes([0; N])
    }
}

impl<const N: usize> From<[u8; N]> for HexBytes<N> {
    fn from(bytes: [u8; N]) -> Self {
        HexBytes(bytes)
    }
}

/// Compares with hex text the way the `String` it replaced compared: equal
/// only to its exact lowercase digits.
impl<const N: usize> PartialEq<str> for HexBytes<N> {
    fn eq(&self, other: &str) -> bool {
        self.hex_in(&mut [0u8; 64]) == other
    }
}

impl<const N: usize> PartialEq<&str> for HexBytes<N> {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

impl<const N: usize> PartialEq<String> for HexBytes<N> {
    fn eq(&self, other: &String) -> bool {
        *self == *other.as_str()
    }
}

impl<const N: usize> PartialEq<HexBytes<N>> for String {
    fn eq(&self, other: &HexBytes<N>) -> bool {
        *other == *self.as_str()
    }
}

impl<const N: usize> PartialEq<HexBytes<N>> for &str {
    fn eq(&self, other: &HexBytes<N>) -> bool {
        *other == **self
    }
}

impl<const N: usize> serde::Serialize for HexBytes<N> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.hex_in(&mut [0u8; 64]))
    }
}

impl<'de, const N: usize> serde::Deserialize<'de> for HexBytes<N> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Digits<const N: usize>;
        impl<const N: usize> serde::de::Visitor<'_> for Digits<N> {
            type Value = HexBytes<N>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{} lowercase hex digits", 2 * N)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<HexBytes<N>, E> {
                HexBytes::parse(v).map_err(E::custom)
            }
        }
        d.deserialize_str(Digits::<N>)
    }
}

impl<const N: usize> schemars::JsonSchema for HexBytes<N> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "String".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }
    fn inline_schema() -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_only_the_exact_lowercase_form_and_writes_it_back() {
        let hex = "00ff10ab".repeat(8);
        let h = ThoughtHash::parse(&hex).unwrap();
        assert_eq!((h.to_hex(), h.to_string(), format!("{h:?}")), (hex.clone(), hex.clone(), format!("{hex:?}")));
        assert_eq!(serde_json::to_string(&h).unwrap(), format!("\"{hex}\""));
        assert_eq!(serde_json::from_str::<ThoughtHash>(&format!("\"{hex}\"")).unwrap(), h);
        assert_eq!(h, hex);
        assert_eq!(hex, h);
        assert_eq!(h, hex.as_str());
        for bad in [hex.to_uppercase(), hex[..62].to_string(), format!("{hex}00"), format!("{}zz", &hex[..62]), String::new()] {
            assert_eq!(ThoughtHash::parse(&bad).unwrap_err().digits, 64, "{bad}");
            assert!(serde_json::from_str::<ThoughtHash>(&format!("\"{bad}\"")).is_err(), "{bad}");
        }
        assert_eq!(ThoughtHash::parse_any_case(&hex.to_uppercase()), Some(h));
        assert_eq!(ThoughtHash::parse("ABC").unwrap_err().to_string(), "expected 64 lowercase hex digits, found \"ABC\" (3 characters)");
        assert_eq!(ContentSalt::parse(&"ab".repeat(16)).unwrap().to_hex(), "ab".repeat(16));
        assert!(ContentSalt::parse(&"ab".repeat(32)).is_err());
    }

    #[test]
    fn a_hash_is_its_bytes_in_memory() {
        assert_eq!(std::mem::size_of::<ThoughtHash>(), 32);
        assert_eq!(std::mem::size_of::<Option<ThoughtHash>>(), 33);
        assert_eq!(std::mem::size_of::<Option<ContentSalt>>(), 17);
    }
}
