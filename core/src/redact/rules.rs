//! The one table of secret-detection rules ([`RULES`]) and their checks.
//!
//! Each rule declares the literals a match is found from (its `starts`:
//! `AKIA`, `sk-`, `://`, ...), whether they match in any case and whether
//! they must begin a token, and a check of a few lines over bytes that runs
//! where one of them occurs: measure the run of characters that may follow,
//! look for the `=` after a key name, and so on. No regular expressions
//! (the browser build must stay small). Every span starts and ends at an
//! ASCII byte, so it is a valid `str` range.
//!
//! [`FIRST`] and [`SECOND`] are derived from the same table at compile
//! time: for each byte, the rules one of whose starts has it as first
//! (second) byte. The scanner (`super::scan`) walks the text once and tries
//! a rule only at a position whose byte pair both tables name it for, so an
//! ordinary text costs two table loads per byte.

/// A byte range `start..end` of a secret in the scanned text.
pub(super) type Span = (usize, usize);

/// A rule's check, run where its start `start` was found at byte `at` of the
/// text. It may raise `resume` (where this rule may next start) when it
/// knows no match of its own can start before that byte.
type Check = fn(text: &str, at: usize, start: &str, resume: &mut usize) -> Option<Span>;

/// One detection rule.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// The kind named in the placeholder `[REDACTED:<kind>]` and the reply.
    pub kind: &'static str,
    /// What the rule matches, for people (the table of docs/security.md, "Secret redaction").
    pub matches: &'static str,
    /// What part of a match is replaced.
    pub replaces: &'static str,
    /// The literals (at least 2 bytes, lower case when `any_case`) where a match is found.
    starts: &'static [&'static str],
    /// Whether `starts` match in any ASCII case.
    any_case: bool,
    /// Whether a start must begin a token (not follow a letter, digit or `_`).
    token_start: bool,
    /// Whether a match hides this rule's own starts inside it (a `-----BEGIN` inside a PEM block).
    pub(super) skips_inside_match: bool,
    check: Check,
}

/// A rule found at a token start, exact case.
const fn token(kind: &'static str, matches: &'static str, replaces: &'static str, starts: &'static [&'static str], check: Check) -> Rule {
    Rule { kind, matches, replaces, starts, any_case: false, token_start: true, skips_inside_match: false, check }
}

/// Every rule, in priority order: when two matches start at the same byte,
/// the earlier rule wins (so a JWT after `Bearer` is reported as `jwt`).
pub const RULES: &[Rule] = &[
    Rule {
        token_start: false,
        skips_inside_match: true,
        ..token("private_key", "a PEM block from `-----BEGIN … PRIVATE KEY-----` through its `-----END … PRIVATE KEY-----` line (to the end of the text when the END line is missing)", "the whole block", &["-----BEGIN "], private_key)
    },
    token("jwt", "a JSON Web Token: three base64url segments joined by `.`, the first starting `eyJ`, each at least 10 characters", "the token", &["eyJ"], jwt),
    token("aws_access_key_id", "`AKIA` or `ASIA` followed by exactly 16 upper-case letters or digits", "the key id", &["AKIA", "ASIA"], aws_access_key_id),
    Rule {
        // Anywhere, not only at token starts: `TF_VAR_aws_secret_access_key=...`.
        any_case: true,
        token_start: false,
        ..token(
            "aws_secret_access_key",
            "a 40-character `[A-Za-z0-9/+]` value assigned (`=` or `:`, quotes allowed) to `aws_secret_access_key`, `aws-secret-access-key`, `SecretAccessKey` or `aws_secret_key` (any case)",
            "the value",
            &["aws_secret_access_key", "aws-secret-access-key", "secretaccesskey", "aws_secret_key"],
            aws_secret_access_key,
        )
    },
    token("github_token", "`ghp_`, `gho_`, `ghu_`, `ghs_` or `ghr_` followed by at least 36 letters or digits; `github_pat_` followed by at least 22 letters, digits or `_`", "the token", &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"], github_token),
    token("slack_token", "`xoxa-`, `xoxb-`, `xoxo-`, `xoxp-`, `xoxr-` or `xoxs-` followed by at least 10 letters, digits or `-`", "the token", &["xoxa-", "xoxb-", "xoxo-", "xoxp-", "xoxr-", "xoxs-"], slack_token),
    token("stripe_key", "`sk_live_`, `rk_live_`, `sk_test_` or `rk_test_` followed by at least 16 letters or digits", "the key", &["sk_live_", "rk_live_", "sk_test_", "rk_test_"], stripe_key),
    token("anthropic_api_key", "`sk-ant-` followed by at least 20 base64url characters", "the key", &["sk-ant-"], anthropic_api_key),
    token("openai_api_key", "`sk-` (including `sk-proj-`) followed by at least 20 base64url characters with at least one digit, not `sk-ant-`", "the key", &["sk-"], openai_api_key),
    token("google_api_key", "`AIza` followed by exactly 35 base64url characters", "the key", &["AIza"], google_api_key),
    Rule { any_case: true, ..token("bearer_token", "`Bearer` (any case) and spaces, then a token of at least 16 characters of `[A-Za-z0-9._~+/=-]` holding a digit or both cases", "the token (`Bearer ` stays)", &["bearer"], bearer_token) },
    Rule {
        any_case: true,
        ..token(
            "authorization_header",
            "`Authorization:` (any case) then a scheme word and a credential of at least 8 characters that is not all lower-case letters, or a lone credential of at least 16 characters that is not all letters",
            "the credential (the header name and scheme stay)",
            &["authorization"],
            authorization_header,
        )
    },
    Rule { token_start: false, ..token("url_password", "`scheme://user:password@host`: the password of a URL's user info", "the password (user and host stay)", &["://"], url_password) },
];

/// For each byte, the rules (bit `r` for `RULES[r]`) with a start whose first byte it is.
pub(super) const FIRST: [u32; 256] = byte_table(0);
/// For each byte, the rules (bit `r` for `RULES[r]`) with a start whose second byte it is.
pub(super) const SECOND: [u32; 256] = byte_table(1);

/// The table of byte `k` of every rule's starts (both cases for `any_case` rules).
const fn byte_table(k: usize) -> [u32; 256] {
    assert!(RULES.len() <= 32, "a rule set is a u32");
    let mut table = [0u32; 256];
    let mut r = 0;
    while r < RULES.len() {
        let rule = &RULES[r];
        let mut s = 0;
        while s < rule.starts.len() {
            let start = rule.starts[s].as_bytes();
            assert!(start.len() >= 2, "a start is at least a byte pair");
            let b = start[k];
            if rule.any_case {
                assert!(!b.is_ascii_uppercase(), "an any-case start is written in lower case");
                table[b.to_ascii_uppercase() as usize] |= 1 << r;
            }
            table[b as usize] |= 1 << r;
            s += 1;
        }
        r += 1;
    }
    table
}

impl Rule {
    /// Runs the check for each of the rule's starts found at byte `at` of
    /// `text`, adding each match to `out`. `resume` is where this rule may
    /// next start (the end of its last match when `skips_inside_match`, so
    /// call with increasing `at` and one `resume` per rule and text).
    pub(super) fn find_at(&self, text: &str, at: usize, resume: &mut usize, out: &mut impl FnMut(Span)) {
        let t = text.as_bytes();
        if at < *resume || (self.token_start && !starts_token(t, at)) {
            return;
        }
        for start in self.starts {
            // Byte by byte, not `==`: a call to `memcmp` costs more than these few bytes.
            let same = |(i, &b): (usize, &u8)| t.get(at + i).is_some_and(|&c| c == b || (self.any_case && c.to_ascii_lowercase() == b));
            let found = start.as_bytes().iter().enumerate().all(same);
            if let Some(span) = found.then(|| (self.check)(text, at, start, resume)).flatten() {
                if self.skips_inside_match {
                    *resume = span.1;
                }
                out(span);
            }
        }
    }
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn is_b64url(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

fn is_upper_alnum(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit()
}

fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"._~+/=-".contains(&b)
}

/// The end of the run of bytes from `from` that satisfy `ok`.
fn run(t: &[u8], from: usize, ok: impl Fn(u8) -> bool) -> usize {
    run_at_most(t, from, usize::MAX, ok)
}

/// [`run`], looking at no more than `limit` bytes: a rule that accepts at
/// most `max` bytes needs to see `max + 1` to know a run is too long, and
/// must not read further (starts inside one long run, like `sk-sk-sk-…`,
/// would otherwise make the scan quadratic).
fn run_at_most(t: &[u8], from: usize, limit: usize, ok: impl Fn(u8) -> bool) -> usize {
    from + t.get(from..).unwrap_or_default().iter().take(limit).take_while(|b| ok(**b)).count()
}

/// The first position of `needle` in `hay`.
fn find_bytes(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Whether a token may start at `at`: the byte before it is not a letter, digit or `_`.
fn starts_token(t: &[u8], at: usize) -> bool {
    at == 0 || !is_word(t[at - 1])
}

/// The token from `at`: `start` then `min..=max` bytes satisfying `body`,
/// which `accept` approves.
/// With `resume` (rules whose starts all have one length and one `body`), a
/// run found too long also moves `resume` past every later start of the
/// rule inside it that would find it too long as well, so one long run full
/// of starts (`sk-sk-sk-…`) is read once, not once per start.
fn prefixed(text: &str, at: usize, start: &str, body: fn(u8) -> bool, (min, max): (usize, usize), accept: fn(&[u8]) -> bool, resume: Option<&mut usize>) -> Option<Span> {
    let t = text.as_bytes();
    let from = at + start.len();
    let end = match resume {
        Some(resume) => {
            let end = run(t, from, body);
            if end - from > max {
                // A later start at `a` has the body `a + start.len()..end`: too long while `a < end - max - start.len()`.
                *resume = (*resume).max(end - max - start.len());
            }
            end
        }
        None => run_at_most(t, from, max.saturating_add(1), body),
    };
    ((min..=max).contains(&(end - from)) && accept(&t[from..end])).then_some((at, end))
}

fn any(_: &[u8]) -> bool {
    true
}

fn has_digit(b: &[u8]) -> bool {
    b.iter().any(u8::is_ascii_digit)
}

/// The longest `-----BEGIN … PRIVATE KEY-----` header looked at (real labels
/// are under 40 bytes; the bound keeps many `-----BEGIN ` on one line linear).
const MAX_PEM_HEADER: usize = 64;

fn private_key(text: &str, i: usize, _: &str, _: &mut usize) -> Option<Span> {
    const LABEL_END: &[u8] = b"PRIVATE KEY-----";
    let t = text.as_bytes();
    let header_end = run_at_most(t, i, MAX_PEM_HEADER, |b| b != b'\n');
    find_bytes(&t[i..header_end], LABEL_END)?;
    let end = find_bytes(&t[header_end..], b"-----END ")
        .map(|j| header_end + j)
        .and_then(|e| find_bytes(&t[e..], LABEL_END).map(|k| e + k + LABEL_END.len()))
        .unwrap_or(t.len());
    Some((i, end))
}

fn jwt(text: &str, at: usize, _: &str, resume: &mut usize) -> Option<Span> {
    let t = text.as_bytes();
    let mut end = at;
    for seg in 0..3 {
        if seg > 0 {
            if t.get(end) != Some(&b'.') {
                return None;
            }
            end += 1;
        }
        let next = run(t, end, is_b64url);
        if seg == 0 {
            // A later `eyJ` inside this first segment shares its second and
            // third segments and has a shorter first one: it can only fail
            // as this one does, or match inside this match.
            *resume = next;
        }
        if next - end < 10 {
            return None;
        }
        end = next;
    }
    Some((at, end))
}

fn aws_access_key_id(text: &str, at: usize, start: &str, resume: &mut usize) -> Option<Span> {
    prefixed(text, at, start, is_upper_alnum, (16, 16), any, Some(resume))
}

fn aws_secret_access_key(text: &str, at: usize, name: &str, _: &mut usize) -> Option<Span> {
    let t = text.as_bytes();
    let mut i = run(t, at + name.len(), |b| b"\"' \t".contains(&b));
    if !matches!(t.get(i), Some(b'=' | b':')) {
        return None;
    }
    i = run(t, i + 1, |b| b"\"' \t=>".contains(&b));
    let end = run(t, i, |b| b.is_ascii_alphanumeric() || b == b'/' || b == b'+');
    (end - i == 40 && t.get(end) != Some(&b'=')).then_some((i, end))
}

fn github_token(text: &str, at: usize, start: &str, _: &mut usize) -> Option<Span> {
    if start == "github_pat_" {
        prefixed(text, at, start, is_word, (22, 255), any, None)
    } else {
        prefixed(text, at, start, |b| b.is_ascii_alphanumeric(), (36, 255), any, None)
    }
}

fn slack_token(text: &str, at: usize, start: &str, resume: &mut usize) -> Option<Span> {
    prefixed(text, at, start, |b| b.is_ascii_alphanumeric() || b == b'-', (10, 255), any, Some(resume))
}

fn stripe_key(text: &str, at: usize, start: &str, resume: &mut usize) -> Option<Span> {
    prefixed(text, at, start, |b| b.is_ascii_alphanumeric(), (16, 255), any, Some(resume))
}

fn anthropic_api_key(text: &str, at: usize, start: &str, resume: &mut usize) -> Option<Span> {
    prefixed(text, at, start, is_b64url, (20, 255), any, Some(resume))
}

fn openai_api_key(text: &str, at: usize, start: &str, resume: &mut usize) -> Option<Span> {
    prefixed(text, at, start, is_b64url, (20, 255), |b| has_digit(b) && !b.starts_with(b"ant-"), Some(resume))
}

fn google_api_key(text: &str, at: usize, start: &str, resume: &mut usize) -> Option<Span> {
    prefixed(text, at, start, is_b64url, (35, 35), any, Some(resume))
}

/// Whether `b` looks like a random credential rather than a word.
fn looks_random(b: &[u8]) -> bool {
    has_digit(b) || (b.iter().any(u8::is_ascii_uppercase) && b.iter().any(u8::is_ascii_lowercase))
}

fn bearer_token(text: &str, at: usize, word: &str, _: &mut usize) -> Option<Span> {
    let t = text.as_bytes();
    let after = at + word.len();
    let start = run(t, after, |b| b == b' ' || b == b'\t');
    let end = run(t, start, is_token);
    (start > after && end - start >= 16 && looks_random(&t[start..end])).then_some((start, end))
}

fn authorization_header(text: &str, at: usize, word: &str, _: &mut usize) -> Option<Span> {
    let t = text.as_bytes();
    let blank = |b: u8| b == b' ' || b == b'\t';
    let colon = run(t, at + word.len(), blank);
    if t.get(colon) != Some(&b':') {
        return None;
    }
    let first = run(t, colon + 1, blank);
    let first_end = run(t, first, is_token);
    let second = run(t, first_end, blank);
    let second_end = run(t, second, is_token);
    let scheme = first_end > first && t[first..first_end].iter().all(u8::is_ascii_alphabetic);
    if scheme && second > first_end && second_end - second >= 8 && !t[second..second_end].iter().all(u8::is_ascii_lowercase) {
        Some((second, second_end))
    } else if first_end - first >= 16 && !t[first..first_end].iter().all(u8::is_ascii_alphabetic) {
        Some((first, first_end))
    } else {
        None
    }
}

fn url_password(text: &str, at: usize, _: &str, _: &mut usize) -> Option<Span> {
    let t = text.as_bytes();
    let scheme = at - t[..at].iter().rev().take_while(|b| b.is_ascii_alphanumeric() || b"+.-".contains(b)).count();
    if scheme == at || !t[scheme].is_ascii_alphabetic() {
        return None;
    }
    let user_end = run(t, at + 3, |b| !b.is_ascii_whitespace() && !b"/?#@:".contains(&b));
    if t.get(user_end) != Some(&b':') {
        return None;
    }
    let end = run(t, user_end + 1, |b| !b.is_ascii_whitespace() && !b"/?#@".contains(&b));
    let host = t.get(end + 1).is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'[');
    let already = t[user_end + 1..end].starts_with(b"[REDACTED:");
    (end > user_end + 1 && t.get(end) == Some(&b'@') && host && !already).then_some((user_end + 1, end))
}
