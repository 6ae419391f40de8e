//! Standard base64 (RFC 4648 §4, with `=` padding), as signed notes and
//! checkpoints write hashes and signatures, through the `base64` crate.
//! Decoding is strict: the alphabet, padding only at the end, and no
//! non-zero padding bits, so each byte string has one encoding.

use ::base64::Engine as _;

/// `bytes` in padded standard base64.
pub fn encode(bytes: &[u8]) -> String {
    ::base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Decodes padded standard base64; `None` for anything else.
pub fn decode(text: &str) -> Option<Vec<u8>> {
    ::base64::engine::general_purpose::STANDARD.decode(text).ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn rfc_4648_vectors_round_trip() {
        for (raw, enc) in [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy")] {
            assert_eq!(super::encode(raw.as_bytes()), enc);
            assert_eq!(super::decode(enc).unwrap(), raw.as_bytes());
        }
        assert_eq!(super::decode("Zh=="), None, "non-zero padding bits");
        assert_eq!(super::decode("Zg="), None);
        assert_eq!(super::decode("Z!=="), None);
        assert_eq!(super::decode("Zg==Zg=="), None);
    }
}
