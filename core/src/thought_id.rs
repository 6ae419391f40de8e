//! A thought's id, kept as 16 bytes when it is a UUID.
//!
//! The engine gives every thought a random UUID (`0b6f9c1e-...`, lowercase,
//! hyphenated). As a `String` that was 36 bytes on the heap and an
//! allocation per thought; a [`ThoughtId`] keeps such an id as its 16
//! bytes and makes the text when it is read. Any other id a caller chose
//! (`thought_id` on append, ids of imported chains) is kept as written:
//! the hash covers the text, so an id is never rewritten.

use std::fmt;

/// A thought's id: a canonical UUID as its bytes, any other text as given.
/// Reads as text through [`ThoughtId::as_text`] (or `Display`), compares
/// with `str`, and is a plain JSON string on the wire.
#[derive(Clone, PartialEq, Eq)]
pub struct ThoughtId(Repr);

#[derive(Clone, PartialEq, Eq)]
enum Repr {
    /// The 16 bytes of an id written as a lowercase, hyphenated UUID.
    Uuid([u8; 16]),
    /// Any other id, as written.
    Text(Box<str>),
}

/// Where the hyphens of a canonical UUID are.
const HYPHENS: [usize; 4] = [8, 13, 18, 23];

/// The 16 bytes of `text` when it is a UUID in canonical form (36 bytes,
/// lowercase hex, hyphens at 8, 13, 18 and 23).
fn parse_uuid(text: &str) -> Option<[u8; 16]> {
    let b = text.as_bytes();
    if b.len() != 36 || HYPHENS.iter().any(|&h| b[h] != b'-') {
        return None;
    }
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 16];
    let mut digits = b.iter().copied().filter(|&c| c != b'-');
    for byte in &mut out {
        *byte = nibble(digits.next()?)? << 4 | nibble(digits.next()?)?;
    }
    Some(out)
}

/// The canonical text of UUID bytes.
fn format_uuid(bytes: &[u8; 16]) -> [u8; 36] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = [b'-'; 36];
    let mut at = 0;
    for byte in bytes {
        if HYPHENS.contains(&at) {
            at += 1;
        }
        out[at] = HEX[usize::from(byte >> 4)];
        out[at + 1] = HEX[usize::from(byte & 15)];
        at += 2;
    }
    out
}

impl ThoughtId {
    /// The id `text`: its bytes when it is a canonical UUID, else the text.
    pub fn new(text: &str) -> ThoughtId {
        match parse_uuid(text) {
            Some(bytes) => ThoughtId(Repr::Uuid(bytes)),
            None => ThoughtId(Repr::Text(text.into())),
        }
    }

    /// The id as text.
    pub fn as_text(&self) -> IdText<'_> {
        match &self.0 {
            Repr::Uuid(bytes) => IdText::Made(format_uuid(bytes)),
            Repr::Text(text) => IdText::Written(text),
        }
    }

    /// What the id lookup hashes and compares: a kind byte and the bytes
    /// kept (a UUID's 16, another id's text), so no text is made for it.
    pub(crate) fn key(&self) -> (u8, &[u8]) {
        match &self.0 {
            Repr::Uuid(bytes) => (0, bytes),
            Repr::Text(text) => (1, text.as_bytes()),
        }
    }

    /// [`ThoughtId::key`] of the id `text` (UUID bytes land on the stack).
    pub(crate) fn key_of_text(text: &str, with: impl FnOnce((u8, &[u8])) -> Option<usize>) -> Option<usize> {
        match parse_uuid(text) {
            Some(bytes) => with((0, &bytes)),
            None => with((1, text.as_bytes())),
        }
    }
}

/// A [`ThoughtId`] as text: made from a UUID's bytes, or the text kept.
pub enum IdText<'a> {
    /// Made from the bytes.
    Made([u8; 36]),
    /// As written.
    Written(&'a str),
}

impl std::ops::Deref for IdText<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            IdText::Made(text) => std::str::from_utf8(text).expect("hex digits and hyphens"),
            IdText::Written(text) => text,
        }
    }
}

impl From<&str> for ThoughtId {
    fn from(text: &str) -> ThoughtId {
        ThoughtId::new(text)
    }
}

impl From<String> for ThoughtId {
    /// [`ThoughtId::new`], keeping `text`'s own buffer when it is no UUID.
    fn from(text: String) -> ThoughtId {
        match parse_uuid(&text) {
            Some(bytes) => ThoughtId(Repr::Uuid(bytes)),
            None => ThoughtId(Repr::Text(text.into_boxed_str())),
        }
    }
}

impl From<&String> for ThoughtId {
    fn from(text: &String) -> ThoughtId {
        ThoughtId::new(text)
    }
}

impl From<&ThoughtId> for String {
    fn from(id: &ThoughtId) -> String {
        id.as_text().to_string()
    }
}

impl fmt::Display for ThoughtId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.as_text())
    }
}

impl fmt::Debug for ThoughtId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.as_text(), f)
    }
}

crate::text_value::text_value!(ThoughtId, |id| id.as_text());

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_canonical_uuid_is_kept_as_bytes_and_any_other_id_as_written() {
        let uuid = "0b6f9c1e-4d2a-4c3b-9e8f-00112233aabb";
        let id = ThoughtId::new(uuid);
        assert!(matches!(id.0, Repr::Uuid(_)));
        assert_eq!((&*id.as_text(), id.to_string()), (uuid, uuid.to_string()));
        assert_eq!(id, uuid);
        assert_eq!(serde_json::to_string(&id).unwrap(), format!("\"{uuid}\""));
        assert_eq!(serde_json::from_str::<ThoughtId>(&format!("\"{uuid}\"")).unwrap(), id);
        assert_eq!(ThoughtId::from(uuid.to_string()), id);
        assert!(matches!(ThoughtId::from("t-1".to_string()).0, Repr::Text(ref t) if &**t == "t-1"));
        for other in ["0B6F9C1E-4D2A-4C3B-9E8F-00112233AABB", "0b6f9c1e4d2a4c3b9e8f00112233aabb", "0b6f9c1e-4d2a-4c3b-9e8f-00112233aabg", "t-1", "", "0b6f9c1e-4d2a-4c3b-9e8f_00112233aabb"] {
            let id = ThoughtId::new(other);
            assert!(matches!(id.0, Repr::Text(_)), "{other}");
            assert_eq!(&*id.as_text(), other);
            assert_eq!(id, other);
            assert_ne!(id, ThoughtId::new(uuid));
        }
        assert_ne!(ThoughtId::new("0B6F9C1E-4D2A-4C3B-9E8F-00112233AABB"), uuid, "an upper-case id is another id (the hash covers its text)");
        let mut state = 7u64;
        for _ in 0..1000 {
            let mut bytes = [0u8; 16];
            for b in &mut bytes {
                state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                *b = (state >> 56) as u8;
            }
            let text = format_uuid(&bytes);
            assert_eq!(parse_uuid(std::str::from_utf8(&text).unwrap()), Some(bytes));
        }
    }
}
