//! SHA-256, the one digest of the chain hash, file names and skill hashes.
//!
//! Native builds use `ring`, whose hand-tuned assembly (AVX2/SHA-NI where the
//! CPU has them) hashes about 1.8x faster than the portable `sha2` crate on
//! CPUs without SHA-NI; verifying a chain at open is mostly hashing. wasm
//! builds use `sha2` (pure Rust, no C toolchain for the wasm targets). Both
//! compute the same standard function; the golden vectors in
//! [`crate::canonical`] and the cross-host tests (a WASI-written store opened
//! natively and back) hold them to it.

/// SHA-256 of the concatenation of `parts`.
#[cfg(not(target_family = "wasm"))]
pub(crate) fn digest(parts: &[&[u8]]) -> [u8; 32] {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    for p in parts {
        ctx.update(p);
    }
    ctx.finish().as_ref().try_into().expect("SHA-256 is 32 bytes")
}

/// SHA-256 of the concatenation of `parts`.
#[cfg(target_family = "wasm")]
pub(crate) fn digest(parts: &[&[u8]]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

/// A digest as lowercase hex.
pub(crate) fn to_hex<const N: usize>(bytes: &[u8; N]) -> String {
    let mut out = vec![0u8; 2 * N];
    hex::encode_to_slice(bytes, &mut out).expect("2N hex digits fit");
    String::from_utf8(out).expect("hex is ASCII")
}

#[cfg(test)]
mod tests {
    #[test]
    fn standard_test_vectors() {
        // FIPS 180-2 examples.
        assert_eq!(hex::encode(super::digest(&[b"abc"])), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(hex::encode(super::digest(&[b"a", b"bc"])), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(hex::encode(super::digest(&[])), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        let long = b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
        assert_eq!(super::to_hex(&super::digest(&[long])), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    }

    proptest::proptest! {
        #[test]
        fn agrees_with_the_portable_sha2_crate(a in proptest::collection::vec(proptest::num::u8::ANY, 0..300), b in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
            use sha2::{Digest, Sha256};
            let mut h = Sha256::new();
            h.update(&a);
            h.update(&b);
            let expected: [u8; 32] = h.finalize().into();
            proptest::prop_assert_eq!(super::digest(&[&a, &b]), expected);
        }
    }
}
