//! The one table of secret-detection rules ([`RULES`]) and their matchers.
//!
//! Each matcher is a few lines over bytes: find a literal prefix (with
//! `str::match_indices`, or case-insensitively for header names), check the
//! character before it is not part of a word, then measure the run of
//! characters that may follow. No regular expressions (the browser build
//! must stay small). Every span starts and ends at an ASCII byte, so it is
//! a valid `str` range.

/// A byte range `start..end` of a secret in the scanned text.
pub(super) type Span = (usize, usize);

/// One detection rule.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// The kind named in the placeholder `[REDACTED:<kind>]` and the reply.
    pub kind: &'static str,
    /// What the rule matches, for people (README table).
    pub matches: &'static str,
    /// What part of a match is replaced.
    pub replaces: &'static str,
    pub(super) find: fn(&Text<'_>, &mut Vec<Span>),
}

/// A text being scanned, with the positions where a token may start (an
/// ASCII letter or digit not after a letter, digit or `_`), found in one
/// pass and shared by every rule.
pub(super) struct Text<'a> {
    s: &'a str,
    t: &'a [u8],
    starts: Vec<usize>,
}

impl<'a> Text<'a> {
    pub(super) fn new(s: &'a str) -> Self {
        let t = s.as_bytes();
        let starts = (0..t.len()).filter(|&i| t[i].is_ascii_alphanumeric() && starts_token(t, i)).collect();
        Text { s, t, starts }
    }

    /// Token starts where `lit` (exact case) begins.
    fn hits<'b>(&'b self, lit: &'b str) -> impl Iterator<Item = usize> + 'b {
        self.starts.iter().copied().filter(move |&i| self.t[i..].starts_with(lit.as_bytes()))
    }

    /// Token starts where the lower-case ASCII `lit` begins in any case.
    fn hits_any_case<'b>(&'b self, lit: &'b [u8]) -> impl Iterator<Item = usize> + 'b {
        self.starts.iter().copied().filter(move |&i| self.t.get(i..i + lit.len()).is_some_and(|w| w.eq_ignore_ascii_case(lit)))
    }
}

/// Every rule, in priority order: when two matches start at the same byte,
/// the earlier rule wins (so a JWT after `Bearer` is reported as `jwt`).
pub const RULES: &[Rule] = &[
    Rule { kind: "private_key", matches: "a PEM block from `-----BEGIN … PRIVATE KEY-----` through its `-----END … PRIVATE KEY-----` line (to the end of the text when the END line is missing)", replaces: "the whole block", find: private_key },
    Rule { kind: "jwt", matches: "a JSON Web Token: three base64url segments joined by `.`, the first starting `eyJ`, each at least 10 characters", replaces: "the token", find: jwt },
    Rule { kind: "aws_access_key_id", matches: "`AKIA` or `ASIA` followed by exactly 16 upper-case letters or digits", replaces: "the key id", find: aws_access_key_id },
    Rule { kind: "aws_secret_access_key", matches: "a 40-character `[A-Za-z0-9/+]` value assigned (`=` or `:`, quotes allowed) to `aws_secret_access_key`, `aws-secret-access-key`, `SecretAccessKey` or `aws_secret_key` (any case)", replaces: "the value", find: aws_secret_access_key },
    Rule { kind: "github_token", matches: "`ghp_`, `gho_`, `ghu_`, `ghs_` or `ghr_` followed by at least 36 letters or digits; `github_pat_` followed by at least 22 letters, digits or `_`", replaces: "the token", find: github_token },
    Rule { kind: "slack_token", matches: "`xoxa-`, `xoxb-`, `xoxo-`, `xoxp-`, `xoxr-` or `xoxs-` followed by at least 10 letters, digits or `-`", replaces: "the token", find: slack_token },
    Rule { kind: "stripe_key", matches: "`sk_live_`, `rk_live_`, `sk_test_` or `rk_test_` followed by at least 16 letters or digits", replaces: "the key", find: stripe_key },
    Rule { kind: "anthropic_api_key", matches: "`sk-ant-` followed by at least 20 base64url characters", replaces: "the key", find: anthropic_api_key },
    Rule { kind: "openai_api_key", matches: "`sk-` (including `sk-proj-`) followed by at least 20 base64url characters with at least one digit, not `sk-ant-`", replaces: "the key", find: openai_api_key },
    Rule { kind: "google_api_key", matches: "`AIza` followed by exactly 35 base64url characters", replaces: "the key", find: google_api_key },
    Rule { kind: "bearer_token", matches: "`Bearer` (any case) and spaces, then a token of at least 16 characters of `[A-Za-z0-9._~+/=-]` holding a digit or both cases", replaces: "the token (`Bearer ` stays)", find: bearer_token },
    Rule { kind: "authorization_header", matches: "`Authorization:` (any case) then a scheme word and a credential of at least 8 characters that is not all lower-case letters, or a lone credential of at least 16 characters that is not all letters", replaces: "the credential (the header name and scheme stay)", find: authorization_header },
    Rule { kind: "url_password", matches: "`scheme://user:password@host`: the password of a URL's user info", replaces: "the password (user and host stay)", find: url_password },
];

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
    from + t.get(from..).unwrap_or_default().iter().take_while(|b| ok(**b)).count()
}

/// Whether a token may start at `at`: the byte before it is not a letter, digit or `_`.
fn starts_token(t: &[u8], at: usize) -> bool {
    at == 0 || !is_word(t[at - 1])
}

/// Positions of the lower-case ASCII `lit` in any case, anywhere.
fn anywhere_any_case<'a>(t: &'a [u8], lit: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    (0..t.len().saturating_sub(lit.len() - 1)).filter(move |&i| t[i].to_ascii_lowercase() == lit[0] && t[i..i + lit.len()].eq_ignore_ascii_case(lit))
}

/// Tokens made of `prefix` then `min..=max` bytes satisfying `body`.
fn prefixed(text: &Text<'_>, prefixes: &[&str], body: fn(u8) -> bool, min: usize, max: usize, accept: fn(&[u8]) -> bool, out: &mut Vec<Span>) {
    let t = text.t;
    for p in prefixes {
        for at in text.hits(p) {
            let end = run(t, at + p.len(), body);
            let len = end - at - p.len();
            if (min..=max).contains(&len) && accept(&t[at + p.len()..end]) {
                out.push((at, end));
            }
        }
    }
}

fn any(_: &[u8]) -> bool {
    true
}

fn has_digit(b: &[u8]) -> bool {
    b.iter().any(u8::is_ascii_digit)
}

fn private_key(text: &Text<'_>, out: &mut Vec<Span>) {
    let text = text.s;
    let mut from = 0;
    while let Some(i) = text[from..].find("-----BEGIN ").map(|i| i + from) {
        let line_end = text[i..].find('\n').map_or(text.len(), |j| i + j);
        let header = &text[i..line_end];
        from = i + 1;
        if !header.contains("PRIVATE KEY-----") {
            continue;
        }
        let end = text[line_end..]
            .find("-----END ")
            .map(|j| line_end + j)
            .and_then(|e| text[e..].find("PRIVATE KEY-----").map(|k| e + k + "PRIVATE KEY-----".len()))
            .unwrap_or(text.len());
        out.push((i, end));
        from = end;
    }
}

fn jwt(text: &Text<'_>, out: &mut Vec<Span>) {
    let t = text.t;
    for at in text.hits("eyJ") {
        let mut end = at;
        let mut ok = true;
        for seg in 0..3 {
            if seg > 0 {
                ok &= t.get(end) == Some(&b'.');
                end += 1;
            }
            let next = run(t, end, is_b64url);
            ok &= next - end >= 10;
            if !ok {
                break;
            }
            end = next;
        }
        if ok {
            out.push((at, end));
        }
    }
}

fn aws_access_key_id(text: &Text<'_>, out: &mut Vec<Span>) {
    prefixed(text, &["AKIA", "ASIA"], is_upper_alnum, 16, 16, any, out);
}

fn aws_secret_access_key(text: &Text<'_>, out: &mut Vec<Span>) {
    let t = text.t;
    // Anywhere, not only at token starts: `TF_VAR_aws_secret_access_key=...`.
    for name in [&b"aws_secret_access_key"[..], b"aws-secret-access-key", b"secretaccesskey", b"aws_secret_key"] {
        for at in anywhere_any_case(t, name) {
            let mut i = run(t, at + name.len(), |b| b"\"' \t".contains(&b));
            if !matches!(t.get(i), Some(b'=' | b':')) {
                continue;
            }
            i = run(t, i + 1, |b| b"\"' \t=>".contains(&b));
            let end = run(t, i, |b| b.is_ascii_alphanumeric() || b == b'/' || b == b'+');
            if end - i == 40 && t.get(end) != Some(&b'=') {
                out.push((i, end));
            }
        }
    }
}

fn github_token(text: &Text<'_>, out: &mut Vec<Span>) {
    prefixed(text, &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"], |b| b.is_ascii_alphanumeric(), 36, 255, any, out);
    prefixed(text, &["github_pat_"], |b| b.is_ascii_alphanumeric() || b == b'_', 22, 255, any, out);
}

fn slack_token(text: &Text<'_>, out: &mut Vec<Span>) {
    prefixed(text, &["xoxa-", "xoxb-", "xoxo-", "xoxp-", "xoxr-", "xoxs-"], |b| b.is_ascii_alphanumeric() || b == b'-', 10, 255, any, out);
}

fn stripe_key(text: &Text<'_>, out: &mut Vec<Span>) {
    prefixed(text, &["sk_live_", "rk_live_", "sk_test_", "rk_test_"], |b| b.is_ascii_alphanumeric(), 16, 255, any, out);
}

fn anthropic_api_key(text: &Text<'_>, out: &mut Vec<Span>) {
    prefixed(text, &["sk-ant-"], is_b64url, 20, 255, any, out);
}

fn openai_api_key(text: &Text<'_>, out: &mut Vec<Span>) {
    prefixed(text, &["sk-"], is_b64url, 20, 255, |b| has_digit(b) && !b.starts_with(b"ant-"), out);
}

fn google_api_key(text: &Text<'_>, out: &mut Vec<Span>) {
    prefixed(text, &["AIza"], is_b64url, 35, 35, any, out);
}

/// Whether `b` looks like a random credential rather than a word.
fn looks_random(b: &[u8]) -> bool {
    has_digit(b) || (b.iter().any(u8::is_ascii_uppercase) && b.iter().any(u8::is_ascii_lowercase))
}

fn bearer_token(text: &Text<'_>, out: &mut Vec<Span>) {
    let t = text.t;
    for at in text.hits_any_case(b"bearer") {
        let start = run(t, at + 6, |b| b == b' ' || b == b'\t');
        let end = run(t, start, is_token);
        if start > at + 6 && end - start >= 16 && looks_random(&t[start..end]) {
            out.push((start, end));
        }
    }
}

fn authorization_header(text: &Text<'_>, out: &mut Vec<Span>) {
    let t = text.t;
    let blank = |b: u8| b == b' ' || b == b'\t';
    for at in text.hits_any_case(b"authorization") {
        let colon = run(t, at + 13, blank);
        if t.get(colon) != Some(&b':') {
            continue;
        }
        let first = run(t, colon + 1, blank);
        let first_end = run(t, first, is_token);
        let second = run(t, first_end, blank);
        let second_end = run(t, second, is_token);
        let scheme = first_end > first && t[first..first_end].iter().all(u8::is_ascii_alphabetic);
        if scheme && second > first_end && second_end - second >= 8 && !t[second..second_end].iter().all(u8::is_ascii_lowercase) {
            out.push((second, second_end));
        } else if first_end - first >= 16 && !t[first..first_end].iter().all(u8::is_ascii_alphabetic) {
            out.push((first, first_end));
        }
    }
}

fn url_password(text: &Text<'_>, out: &mut Vec<Span>) {
    let t = text.t;
    for (at, _) in text.s.match_indices("://") {
        let scheme = at - t[..at].iter().rev().take_while(|b| b.is_ascii_alphanumeric() || b"+.-".contains(b)).count();
        if scheme == at || !t[scheme].is_ascii_alphabetic() {
            continue;
        }
        let user_end = run(t, at + 3, |b| !b.is_ascii_whitespace() && !b"/?#@:".contains(&b));
        if t.get(user_end) != Some(&b':') {
            continue;
        }
        let end = run(t, user_end + 1, |b| !b.is_ascii_whitespace() && !b"/?#@".contains(&b));
        let host = t.get(end + 1).is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'[');
        let already = t[user_end + 1..end].starts_with(b"[REDACTED:");
        if end > user_end + 1 && t.get(end) == Some(&b'@') && host && !already {
            out.push((user_end + 1, end));
        }
    }
}
