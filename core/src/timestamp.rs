//! RFC 3339 timestamps: the core stores milliseconds and renders UTC strings.

use chrono::{DateTime, SecondsFormat, TimeZone, Utc};

/// The instant [`format_rfc3339_millis`] renders for `millis`: `millis`
/// itself, or 0 when it is outside the range a date can be made of.
pub(crate) fn renderable_millis(millis: i64) -> i64 {
    if Utc.timestamp_millis_opt(millis).single().is_some() {
        millis
    } else {
        0
    }
}

/// Renders epoch milliseconds as `2026-11-22T21:32:00.123Z`.
pub fn format_rfc3339_millis(millis: i64) -> String {
    if let Some(text) = CanonicalText::of(millis) {
        return text.as_str().to_string();
    }
    match Utc.timestamp_millis_opt(millis).single() {
        Some(dt) => dt.to_rfc3339_opts(SecondsFormat::Millis, true),
        None => "1970-01-01T00:00:00.000Z".to_string(),
    }
}

/// A timestamp that is not RFC 3339.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid RFC 3339 timestamp '{given}': {reason} (example: 2026-11-22T09:30:00Z)")]
pub struct TimestampError {
    /// The rejected input, cut to 64 characters.
    pub given: String,
    /// What the parser found wrong.
    pub reason: chrono::ParseError,
}

/// Parses any RFC 3339 timestamp (any offset) to epoch milliseconds (UTC).
pub fn parse_rfc3339_millis(s: &str) -> Result<i64, TimestampError> {
    DateTime::parse_from_rfc3339(s.trim())
        .map(|dt| dt.timestamp_millis())
        .map_err(|reason| TimestampError { given: crate::text::truncate_chars(s, 64).to_string(), reason })
}

/// Days from 1970-01-01 to the civil date `y-m-d` (proleptic Gregorian;
/// Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of `days` after 1970-01-01 (the inverse of [`days_from_civil`]).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// The form this engine writes a timestamp in, `2026-11-22T21:32:00.123Z`
/// (24 ASCII bytes, UTC, milliseconds): what [`format_rfc3339_millis`]
/// gives for years 0 to 9999. A thought keeps its time as milliseconds and
/// makes this text when it is read (see [`crate::Thought::timestamp`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct CanonicalText([u8; 24]);

impl std::fmt::Debug for CanonicalText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl CanonicalText {
    /// The canonical text of `millis`, when its year is 0 to 9999.
    pub fn of(millis: i64) -> Option<CanonicalText> {
        let (days, ms_of_day) = (millis.div_euclid(86_400_000), millis.rem_euclid(86_400_000));
        let (y, m, d) = civil_from_days(days);
        if !(0..=9999).contains(&y) {
            return None;
        }
        let mut b = *b"0000-00-00T00:00:00.000Z";
        let mut put = |at: usize, width: usize, mut v: u64| {
            for i in (at..at + width).rev() {
                b[i] = b'0' + (v % 10) as u8;
                v /= 10;
            }
        };
        let ms = ms_of_day as u64;
        put(0, 4, y as u64);
        put(5, 2, u64::from(m));
        put(8, 2, u64::from(d));
        put(11, 2, ms / 3_600_000);
        put(14, 2, ms / 60_000 % 60);
        put(17, 2, ms / 1000 % 60);
        put(20, 3, ms % 1000);
        Some(CanonicalText(b))
    }

    /// The milliseconds `text` stands for, when it is exactly the canonical
    /// text of some instant (anything else: `None`, though it may still be
    /// RFC 3339: another offset, another precision, a leap second).
    pub fn parse(text: &str) -> Option<i64> {
        let b: &[u8; 24] = text.as_bytes().try_into().ok()?;
        let num = |from: usize, to: usize| b[from..to].iter().try_fold(0u32, |n, c| c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0')));
        let (y, m, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
        let (h, min, sec, ms) = (num(11, 13)?, num(14, 16)?, num(17, 19)?, num(20, 23)?);
        if !(1..=12).contains(&m) || d == 0 || h > 23 || min > 59 || sec > 59 {
            return None;
        }
        let days = days_from_civil(i64::from(y), m, d);
        let millis = days * 86_400_000 + i64::from(((h * 60 + min) * 60 + sec) * 1000 + ms);
        // Separators, and a day the month has (31 February does not come back).
        (CanonicalText::of(millis)? == CanonicalText(*b)).then_some(millis)
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("canonical text is ASCII digits and separators")
    }
}

/// How a timestamp in UTC (`Z`) with other than three fraction digits
/// gives its fraction of a second, so that a thought can keep it in 3 bytes
/// beside its milliseconds instead of keeping its text: the number of
/// digits (0 to 9) and the digits past the milliseconds. MentisDB 0.9 and
/// 0.10 wrote nanoseconds (`2026-03-01T12:34:56.123456789Z`), so every
/// thought of a chain they wrote has such a timestamp. The default stands
/// for the canonical three digits ([`CanonicalText`]).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct TimestampFraction([u8; 3]);

impl std::fmt::Debug for TimestampFraction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.digits() {
            None => f.write_str("TimestampFraction(canonical)"),
            Some(d) => write!(f, "TimestampFraction({d} digits, {} past the milliseconds)", self.past_millis()),
        }
    }
}

impl TimestampFraction {
    /// `digits` fraction digits (0 to 9, not 3), of which those past the
    /// milliseconds read `past_millis` (below 10^(digits - 3)).
    fn new(digits: u32, past_millis: u32) -> TimestampFraction {
        debug_assert!(digits <= 9 && digits != 3 && past_millis < 1_000_000);
        let packed = ((digits + 1) << 20) | past_millis;
        let [_, a, b, c] = packed.to_be_bytes();
        TimestampFraction([a, b, c])
    }

    fn packed(self) -> u32 {
        u32::from_be_bytes([0, self.0[0], self.0[1], self.0[2]])
    }

    /// The number of fraction digits; `None` for the canonical three.
    fn digits(self) -> Option<u32> {
        (self.packed() >> 20).checked_sub(1)
    }

    fn past_millis(self) -> u32 {
        self.packed() & 0xF_FFFF
    }

    /// The milliseconds and fraction of `text` when it is
    /// `YYYY-MM-DDTHH:MM:SS` + (`.` + 1 to 9 digits, but not 3) + `Z`, a
    /// date that exists; anything else is `None` (the canonical form too).
    pub fn parse(text: &str) -> Option<(i64, TimestampFraction)> {
        let b = text.as_bytes();
        let fraction = match b.get(19..)? {
            b"Z" => &b""[..],
            [b'.', digits @ .., b'Z'] if !digits.is_empty() && digits.len() <= 9 && digits.len() != 3 => digits,
            _ => return None,
        };
        let mut canonical = [0u8; 24];
        canonical[..19].copy_from_slice(&b[..19]);
        canonical[19..].copy_from_slice(b".000Z");
        let seconds = CanonicalText::parse(std::str::from_utf8(&canonical).ok()?)?;
        let nanos = fraction.iter().try_fold(0u32, |n, c| c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0')))? * 10u32.pow(9 - fraction.len() as u32);
        let digits = fraction.len() as u32;
        let past_millis = if digits > 3 { (nanos % 1_000_000) / 10u32.pow(9 - digits) } else { 0 };
        Some((seconds + i64::from(nanos / 1_000_000), TimestampFraction::new(digits, past_millis)))
    }

    /// The text of `millis` written with this fraction (`None` when the
    /// fraction is the canonical one, or `millis` has no canonical text or
    /// more milliseconds than its digits show).
    pub fn text(self, millis: i64) -> Option<FineText> {
        let digits = self.digits()? as usize;
        let canonical = CanonicalText::of(millis)?;
        let ms = millis.rem_euclid(1000) as u32;
        let nanos = ms * 1_000_000 + if digits > 3 { self.past_millis() * 10u32.pow(9 - digits as u32) } else { 0 };
        if !nanos.is_multiple_of(10u32.pow(9 - digits as u32)) {
            return None;
        }
        let mut text = FineText { bytes: [0; 30], len: 0 };
        text.bytes[..19].copy_from_slice(&canonical.0[..19]);
        let mut at = 19;
        if digits > 0 {
            text.bytes[at] = b'.';
            let mut nine = [b'0'; 9];
            let mut rest = nanos;
            for digit in nine.iter_mut().rev() {
                *digit = b'0' + (rest % 10) as u8;
                rest /= 10;
            }
            text.bytes[at + 1..at + 1 + digits].copy_from_slice(&nine[..digits]);
            at += 1 + digits;
        }
        text.bytes[at] = b'Z';
        text.len = at as u8 + 1;
        Some(text)
    }
}

/// A timestamp text made from milliseconds and a [`TimestampFraction`]
/// (at most 30 ASCII bytes).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct FineText {
    bytes: [u8; 30],
    len: u8,
}

impl std::fmt::Debug for FineText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl FineText {
    /// The text.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).expect("timestamp text is ASCII")
    }
}

/// How a thought keeps the timestamp `text`: its milliseconds, the
/// fraction when the text is UTC with other than three fraction digits, and
/// the text itself when it is neither that nor the canonical form
/// (milliseconds 0 when the text is no RFC 3339).
pub fn timestamp_parts(text: &str) -> (i64, TimestampFraction, Option<Box<str>>) {
    if let Some(ms) = CanonicalText::parse(text) {
        return (ms, TimestampFraction::default(), None);
    }
    match TimestampFraction::parse(text) {
        Some((ms, fraction)) => (ms, fraction, None),
        None => (parse_rfc3339_millis(text).unwrap_or(0), TimestampFraction::default(), Some(Box::from(text))),
    }
}

/// The text of a timestamp kept as `millis` and `fraction` and, when it
/// was neither, the `written` text (see [`crate::Thought::timestamp`]).
pub fn format_rfc3339_text(millis: i64, fraction: TimestampFraction, written: Option<&str>) -> Rfc3339<'_> {
    if let Some(text) = written {
        return Rfc3339::Written(text);
    }
    if let Some(fine) = fraction.text(millis) {
        return Rfc3339::Fine(fine);
    }
    // Out of the years the canonical form covers: only a thought built by
    // hand has such milliseconds and no text.
    Rfc3339::Canonical(CanonicalText::of(millis).unwrap_or_else(|| CanonicalText::of(renderable_millis(millis).clamp(0, 253_402_300_799_999)).expect("in range")))
}

/// A thought's timestamp as RFC 3339 text: made from its milliseconds, or
/// the text it was stored with when that was not canonical. Reads as a
/// `&str`.
#[derive(Clone, Copy)]
pub enum Rfc3339<'a> {
    /// Made from the milliseconds.
    Canonical(CanonicalText),
    /// Made from the milliseconds and a [`TimestampFraction`].
    Fine(FineText),
    /// As stored.
    Written(&'a str),
}

impl std::ops::Deref for Rfc3339<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            Rfc3339::Canonical(c) => c.as_str(),
            Rfc3339::Fine(f) => f.as_str(),
            Rfc3339::Written(s) => s,
        }
    }
}

impl std::fmt::Display for Rfc3339<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self)
    }
}

impl std::fmt::Debug for Rfc3339<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl PartialEq<&str> for Rfc3339<'_> {
    fn eq(&self, other: &&str) -> bool {
        **self == **other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_text_is_chronos_for_every_year_it_covers() {
        let chrono_text = |ms: i64| Utc.timestamp_millis_opt(ms).single().unwrap().to_rfc3339_opts(SecondsFormat::Millis, true);
        let first = -62_167_219_200_000; // 0000-01-01T00:00:00.000Z
        let last = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z
        let mut ms = first;
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        while ms <= last {
            let text = CanonicalText::of(ms).expect("years 0 to 9999");
            assert_eq!(text.as_str(), chrono_text(ms), "{ms}");
            assert_eq!(CanonicalText::parse(text.as_str()), Some(ms));
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            ms += 1 + (state >> 20) as i64 % 300_000_000_000;
        }
        for edge in [first, last, 0, -1, 951_782_400_000 /* 2000-02-29 */, 1_795_339_800_000] {
            assert_eq!(CanonicalText::of(edge).unwrap().as_str(), chrono_text(edge));
        }
        assert_eq!(CanonicalText::of(first - 1), None);
        assert_eq!(CanonicalText::of(last + 1), None);
    }

    #[test]
    fn only_the_exact_canonical_form_parses_as_canonical() {
        assert_eq!(CanonicalText::parse("2026-11-22T09:30:00.000Z"), Some(1_795_339_800_000));
        for other in ["2026-11-22T09:30:00Z", "2026-11-22T09:30:00.000+00:00", "2026-11-22t09:30:00.000Z", "2026-02-29T09:30:00.000Z", "2026-11-31T09:30:00.000Z", "2026-11-22T24:00:00.000Z", "2026-11-22T23:59:60.000Z", "2026-13-01T00:00:00.000Z", "+2026-11-22T09:30:00.000Z", "2026-11-22T09:30:00.0000", "yesterday"] {
            assert_eq!(CanonicalText::parse(other), None, "{other}");
        }
        assert_eq!(CanonicalText::parse("2024-02-29T00:00:00.000Z"), parse_rfc3339_millis("2024-02-29T00:00:00.000Z").ok());
    }

    #[test]
    fn utc_texts_with_other_fraction_digits_are_kept_as_a_fraction() {
        for text in ["2026-03-01T12:34:56.123456789Z", "2026-03-01T12:34:56.123456Z", "2026-03-01T12:34:56.000000001Z", "2026-03-01T12:34:56.999999999Z", "2026-03-01T12:34:56Z", "2026-03-01T12:34:56.5Z", "2026-03-01T12:34:56.05Z", "2026-03-01T12:34:56.1234Z", "0000-01-01T00:00:00.000000000Z", "9999-12-31T23:59:59.999999999Z", "2024-02-29T00:00:00.1Z"] {
            let (ms, fraction) = TimestampFraction::parse(text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(ms, parse_rfc3339_millis(text).unwrap(), "{text}");
            assert_eq!(fraction.text(ms).map(|t| t.as_str().to_string()).as_deref(), Some(text), "{fraction:?}");
            assert_eq!(timestamp_parts(text), (ms, fraction, None));
            assert_eq!(&*format_rfc3339_text(ms, fraction, None), text);
        }
        for other in ["2026-03-01T12:34:56.123Z", "2026-03-01T12:34:56.1234567890Z", "2026-03-01T12:34:56.Z", "2026-03-01T12:34:56.123456+00:00", "2026-03-01T12:34:56,123456Z", "2026-02-30T12:34:56.123456Z", "2026-03-01T12:34:56.12a456Z", "2026-03-01t12:34:56.123456Z", "2026-03-01T12:34:56.123456z"] {
            assert_eq!(TimestampFraction::parse(other), None, "{other}");
        }
        let (ms, fraction, kept) = timestamp_parts("2026-03-01T13:34:56.123456+01:00");
        assert_eq!((ms, fraction, kept.as_deref()), (parse_rfc3339_millis("2026-03-01T12:34:56.123Z").unwrap(), TimestampFraction::default(), Some("2026-03-01T13:34:56.123456+01:00")), "other offsets are kept as written");
        let (ms, fraction) = TimestampFraction::parse("2026-03-01T12:34:56.5Z").unwrap();
        assert_eq!(fraction.text(ms + 1), None, "milliseconds the digits cannot show");
        assert_eq!(TimestampFraction::default().text(ms), None);
    }

    #[test]
    fn round_trip() {
        let s = format_rfc3339_millis(1_795_000_000_123);
        assert_eq!(s, "2026-11-18T11:06:40.123Z");
        assert_eq!(parse_rfc3339_millis(&s).unwrap(), 1_795_000_000_123);
        assert_eq!(parse_rfc3339_millis("2026-11-18T12:06:40.123+01:00").unwrap(), 1_795_000_000_123);
        assert!(parse_rfc3339_millis("yesterday").unwrap_err().to_string().starts_with("invalid RFC 3339 timestamp 'yesterday': "));
    }
}
