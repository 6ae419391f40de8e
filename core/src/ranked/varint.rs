//! Numbers in as few bytes as they need: LEB128, 7 bits a byte, the high
//! bit set on every byte but a number's last.
//!
//! The ranked index keeps every thought's content as term ids in order
//! (for phrase matching); the terms a chain uses most got the first, small
//! ids, so most take one byte instead of four.

/// Appends `n` to `out`: every byte but the last has its high bit set, so
/// a number starts at the start of `out` or after a byte below 0x80.
pub(crate) fn push(out: &mut Vec<u8>, mut n: u32) {
    while n >= 0x80 {
        crate::growth::push(out, n as u8 | 0x80);
        n >>= 7;
    }
    crate::growth::push(out, n as u8);
}

/// The numbers `bytes` holds (written by [`push`]), in order.
pub(crate) fn read(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        let mut n = 0u32;
        for shift in (0..32).step_by(7) {
            let b = *bytes.get(at)?;
            at += 1;
            n |= u32::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Some(n);
            }
        }
        None
    })
}

/// How many times the numbers whose bytes are `run` (written by [`push`],
/// at least one) occur one after another in `bytes`.
pub(crate) fn count_run(bytes: &[u8], run: &[u8]) -> u32 {
    // `run`'s bytes where a number starts (the start, or after a number's
    // last byte): that is those numbers and nothing else. Compared byte by
    // byte: a call to `memcmp` per place cost more than the search.
    let mut count = 0;
    let mut starts_number = true;
    for (at, &b) in bytes.iter().enumerate() {
        if starts_number && b == run[0] && bytes.len() - at >= run.len() && bytes[at + 1..].iter().zip(&run[1..]).all(|(a, b)| a == b) {
            count += 1;
        }
        starts_number = b < 0x80;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn small_numbers_take_one_byte() {
        let mut out = Vec::new();
        for n in [0, 1, 127] {
            push(&mut out, n);
        }
        assert_eq!(out, [0, 1, 127]);
        push(&mut out, 128);
        push(&mut out, u32::MAX);
        assert_eq!(out.len(), 3 + 2 + 5);
        assert_eq!(read(&out).collect::<Vec<_>>(), [0, 1, 127, 128, u32::MAX]);
    }

    #[test]
    fn a_run_starts_only_where_a_number_starts() {
        let bytes = |ns: &[u32]| {
            let mut out = Vec::new();
            ns.iter().for_each(|&n| push(&mut out, n));
            out
        };
        // 200 is [0xc8, 0x01]: its last byte is 1's byte.
        assert_eq!(count_run(&bytes(&[200, 5]), &bytes(&[1, 5])), 0);
        assert_eq!(count_run(&bytes(&[200, 5, 1, 5]), &bytes(&[1, 5])), 1);
        assert_eq!(count_run(&bytes(&[200, 5, 200, 5]), &bytes(&[200, 5])), 2);
        assert_eq!(count_run(&bytes(&[200]), &bytes(&[200, 5])), 0, "a run longer than what is left");
    }

    proptest! {
        #[test]
        fn a_run_is_counted_where_its_numbers_are(ns in proptest::collection::vec(0u32..300, 0..40), first in 0u32..300, second in 0u32..300) {
            let (mut bytes, mut run) = (Vec::new(), Vec::new());
            ns.iter().for_each(|&n| push(&mut bytes, n));
            push(&mut run, first);
            push(&mut run, second);
            let expected = ns.windows(2).filter(|w| w == &[first, second]).count() as u32;
            prop_assert_eq!(count_run(&bytes, &run), expected);
        }

        #[test]
        fn reads_back_what_was_written(ns in proptest::collection::vec(any::<u32>(), 0..50)) {
            let mut out = Vec::new();
            ns.iter().for_each(|&n| push(&mut out, n));
            prop_assert_eq!(read(&out).collect::<Vec<_>>(), ns);
        }
    }
}
