//! Length + checksum framing shared by every append-only object the core
//! writes (chain files in the binary format, the skill registry log).
//!
//! A frame is `u32 LE payload length | u32 LE CRC-32 (IEEE) of the payload |
//! payload`. A frame that is incomplete or fails its checksum is either a torn
//! tail (nothing valid follows it) or corruption (a valid frame follows it).

/// Largest frame payload accepted when decoding (guards against garbage lengths).
pub const MAX_FRAME_LEN: u32 = 64 * 1024 * 1024;

/// The CRC-32 (IEEE, as zlib) of `bytes`: `crc32fast` (SIMD) on native
/// targets, where opening a large chain checks every frame.
#[cfg(not(target_family = "wasm"))]
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// The CRC-32 (IEEE, as zlib) of `bytes` on wasm: one 1 KiB table, where
/// `crc32fast`'s 16 KiB of tables (random-looking, so they do not
/// compress) were 16 KB of the browser's gzipped `.wasm`.
#[cfg(target_family = "wasm")]
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    crc32_small(bytes)
}

#[cfg(any(target_family = "wasm", test))]
fn crc32_small(bytes: &[u8]) -> u32 {
    const IEEE: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);
    IEEE.checksum(bytes)
}

/// Appends one frame holding `payload` to `out`.
pub(crate) fn push_frame(out: &mut Vec<u8>, payload: &[u8]) {
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32(payload).to_le_bytes());
    out.extend_from_slice(payload);
}

/// Result of reading one frame at an offset.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Frame<'a> {
    /// A whole frame whose checksum verifies; `end` is the offset after it.
    Ok { payload: &'a [u8], end: usize },
    /// Incomplete or checksum-failing, with the reason.
    Bad(String),
}

/// Reads the frame starting at byte `at` of `bytes`.
pub(crate) fn read_frame(bytes: &[u8], at: usize) -> Frame<'_> {
    let rest = &bytes[at..];
    if rest.len() < 8 {
        return Frame::Bad("incomplete frame header".into());
    }
    let len = u32::from_le_bytes(rest[0..4].try_into().expect("4 bytes")) as usize;
    let crc = u32::from_le_bytes(rest[4..8].try_into().expect("4 bytes"));
    if len as u64 > MAX_FRAME_LEN as u64 {
        return Frame::Bad(format!("frame length {len} exceeds the maximum"));
    }
    if rest.len() - 8 < len {
        return Frame::Bad("incomplete frame payload".into());
    }
    let payload = &rest[8..8 + len];
    if crc32(payload) != crc {
        return Frame::Bad("frame checksum mismatch".into());
    }
    Frame::Ok { payload, end: at + 8 + len }
}

/// After a bad frame at `at`: does any valid, non-empty frame start later in
/// the bytes? (Then the damage is corruption, not a torn tail.)
pub(crate) fn valid_frame_follows(bytes: &[u8], at: usize) -> bool {
    (at + 1..bytes.len().saturating_sub(8)).any(|p| matches!(read_frame(bytes, p), Frame::Ok { payload, .. } if !payload.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Frames written by the browser or WASI build verify on the daemon and back.
        #[test]
        fn the_wasm_crc32_is_the_native_one(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
            prop_assert_eq!(crc32_small(&bytes), crc32(&bytes));
        }
    }

    #[test]
    fn crc32_is_the_ieee_one() {
        // The check value of CRC-32/ISO-HDLC (zlib's crc32).
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32_small(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn frames_round_trip_and_every_cut_is_bad() {
        let mut bytes = Vec::new();
        push_frame(&mut bytes, b"hello");
        assert_eq!(read_frame(&bytes, 0), Frame::Ok { payload: b"hello", end: 13 });
        for cut in 0..bytes.len() {
            assert!(matches!(read_frame(&bytes[..cut], 0), Frame::Bad(_)), "cut at {cut}");
        }
        bytes[10] ^= 1;
        assert_eq!(read_frame(&bytes, 0), Frame::Bad("frame checksum mismatch".into()));
    }

    #[test]
    fn damage_followed_by_a_valid_frame_is_detected() {
        let mut bytes = Vec::new();
        push_frame(&mut bytes, b"first");
        push_frame(&mut bytes, b"second");
        bytes[9] ^= 1;
        assert!(valid_frame_follows(&bytes, 0));
        assert!(!valid_frame_follows(&bytes, 13));
    }
}
