use super::*;
use crate::thought::ThoughtType;
use crate::chain::{redact_new_thought, NewThought};

/// `(kind, text with a secret, the text redacted, a near miss that must stay)`.
/// Secrets are assembled with `concat!` so scanners of this repository do not flag the file.
const CASES: &[(&str, &str, &str, &str)] = &[
    (
        "private_key",
        concat!("key:\n-----BEGIN RSA ", "PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\nafter"),
        "key:\n[REDACTED:private_key]\nafter",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBg\n-----END PUBLIC KEY----- and a BEGIN PRIVATE KEY mention",
    ),
    (
        "jwt",
        concat!("token eyJhbGciOiJIUzI1NiJ9", ".eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U ok"),
        "token [REDACTED:jwt] ok",
        "a header eyJhbGciOiJIUzI1NiJ9 alone, and eyJ.x.y",
    ),
    ("aws_access_key_id", concat!("id AKIA", "IOSFODNN7EXAMPLE, done"), "id [REDACTED:aws_access_key_id], done", "AKIA keys start with AKIA; AKIAIOSFODNN7EXAMPLEX is too long"),
    (
        "aws_secret_access_key",
        concat!("export AWS_SECRET_ACCESS_KEY=\"wJalrXUtnFEMI/K7MDENG", "/bPxRfiCYEXAMPLEKEY\""),
        "export AWS_SECRET_ACCESS_KEY=\"[REDACTED:aws_secret_access_key]\"",
        "aws_secret_access_key = <your secret here>, rotate the aws_secret_access_key monthly",
    ),
    ("github_token", concat!("push with gh", "p_1234567890abcdefghijklmnopqrstuvwxyz now"), "push with [REDACTED:github_token] now", "ghp_short and the gh_pages branch"),
    ("slack_token", concat!("xox", "b-1234567890-abcdefghij"), "[REDACTED:slack_token]", "the xoxb- prefix, xoxb-123"),
    ("stripe_key", concat!("STRIPE=sk_", "live_4eC39HqLyjWDarjtT1zdp7dc"), "STRIPE=[REDACTED:stripe_key]", "sk_live_ keys, sk_test_short"),
    ("anthropic_api_key", concat!("key sk-", "ant-api03-abcdefghijklmnopqrstuvwxyz012345"), "key [REDACTED:anthropic_api_key]", "sk-ant-short"),
    ("openai_api_key", concat!("OPENAI_API_KEY=sk-", "proj-abc123def456ghi789jkl012"), "OPENAI_API_KEY=[REDACTED:openai_api_key]", "sk-learn-is-a-python-library, risk-0123456789012345678901"),
    ("google_api_key", concat!("maps AIza", "SyD-abcdefghijklmnopqrstuvwxyz01234 key"), "maps [REDACTED:google_api_key] key", "AIza prefixes, AIzaShort"),
    ("bearer_token", "curl -H 'Authorization: Bearer abc123DEF456ghi789'", "curl -H 'Authorization: Bearer [REDACTED:bearer_token]'", "the bearer of bad news carried instructions"),
    ("authorization_header", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED:authorization_header]", "Authorization: required for administrators"),
    ("url_password", "postgres://admin:s3cr3t@db.internal:5432/app", "postgres://admin:[REDACTED:url_password]@db.internal:5432/app", "https://example.com:8443/path@v2 and git@github.com:org/repo"),
];

#[test]
fn every_rule_has_a_positive_and_a_negative_case() {
    let kinds: Vec<&str> = CASES.iter().map(|c| c.0).collect();
    assert_eq!(kinds, RULES.iter().map(|r| r.kind).collect::<Vec<_>>(), "one case per rule, in table order");
    for (kind, secret, redacted, near_miss) in CASES {
        let found = scan(secret);
        assert_eq!(found.iter().map(|f| f.kind).collect::<Vec<_>>(), [*kind], "{kind}: {secret:?}");
        let (text, placed) = replace(secret, &found);
        assert_eq!(text, *redacted, "{kind}");
        assert_eq!(&text[placed[0].start..placed[0].end], placeholder(kind), "{kind}: the placeholder's offsets");
        assert_eq!(scan(near_miss), [], "{kind}: the near miss {near_miss:?} must stay");
        assert_eq!(scan(&text), [], "{kind}: a placeholder matches no rule (redaction is idempotent)");
    }
}

#[test]
fn several_secrets_get_offsets_in_the_redacted_text() {
    let text = concat!("a AKIA", "IOSFODNN7EXAMPLE b https://u:p4ss@h.example c");
    let (out, placed) = replace(text, &scan(text));
    assert_eq!(out, "a [REDACTED:aws_access_key_id] b https://u:[REDACTED:url_password]@h.example c");
    assert_eq!(placed.iter().map(|p| (p.kind, &out[p.start..p.end])).collect::<Vec<_>>(), [
        ("aws_access_key_id", "[REDACTED:aws_access_key_id]"),
        ("url_password", "[REDACTED:url_password]"),
    ]);
}

#[test]
fn non_ascii_text_around_a_secret_is_kept() {
    let text = concat!("clé → AKIA", "IOSFODNN7EXAMPLE ✓");
    assert_eq!(replace(text, &scan(text)).0, "clé → [REDACTED:aws_access_key_id] ✓");
    assert_eq!(scan("ünïcödé://ü:é@ñ and eyJ€"), []);
}

#[test]
fn a_thought_is_redacted_in_content_tags_and_concepts() {
    let mut input = NewThought::new("a", ThoughtType::Finding, concat!("see gh", "p_1234567890abcdefghijklmnopqrstuvwxyz"));
    input.tags = vec!["plain".into(), concat!("AKIA", "IOSFODNN7EXAMPLE").into()];
    input.concepts = vec!["https://u:pw@host".into()];
    let r = redact_new_thought(&mut input).unwrap();
    assert_eq!(input.content, "see [REDACTED:github_token]");
    assert_eq!(input.tags, ["plain", "[REDACTED:aws_access_key_id]"]);
    assert_eq!(input.concepts, ["https://u:[REDACTED:url_password]@host"]);
    let fields: Vec<(&str, &str, u64, u64)> = r.iter().map(|r| (r.field.as_str(), r.kind.as_str(), r.start, r.end)).collect();
    assert_eq!(fields, [("content", "github_token", 4, 27), ("tags[1]", "aws_access_key_id", 0, 28), ("concepts[0]", "url_password", 10, 33)]);
}

#[test]
fn a_signed_thought_with_a_secret_is_refused_unchanged() {
    let content = concat!("x AKIA", "IOSFODNN7EXAMPLE");
    let mut input = NewThought::new("a", ThoughtType::Finding, content);
    input.signing_key_id = Some("k1".into());
    input.thought_signature = Some(vec![0; 64]);
    let e = redact_new_thought(&mut input).unwrap_err();
    assert_eq!(e, AppendError::SecretInSignedThought { field: "content".into(), kind: "aws_access_key_id", offset: 2 });
    assert!(e.to_string().contains("before signing"), "{e}");
    assert_eq!(input.content, content);
    input.content = "no secrets here".into();
    assert_eq!(redact_new_thought(&mut input).unwrap(), []);
}

#[test]
fn a_secret_in_an_id_name_or_label_is_refused() {
    const SECRET: &str = concat!("AKIA", "IOSFODNN7EXAMPLE");
    type Set = Box<dyn Fn(&mut NewThought)>;
    let cases: Vec<(&str, Set)> = vec![
        ("agent_id", Box::new(|t| t.agent_id = format!("bot-{SECRET}"))),
        ("agent_name", Box::new(|t| t.agent_name = Some(SECRET.into()))),
        ("agent_owner", Box::new(|t| t.agent_owner = Some(SECRET.into()))),
        ("session_id", Box::new(|t| t.session_id = Some(format!("s {SECRET}")))),
        ("entity_type", Box::new(|t| t.entity_type = Some(SECRET.into()))),
        ("thought_id", Box::new(|t| t.thought_id = Some(SECRET.into()))),
        ("relations[0].target_id", Box::new(|t| t.relations = vec![crate::chain::RelationInput { kind: crate::thought::RelationKind::References, target_id: Some(SECRET.into()), target_index: None, chain_key: Some("other".into()) }])),
    ];
    for (field, set) in cases {
        let mut input = NewThought::new("a", ThoughtType::Finding, "plain");
        set(&mut input);
        let before = input.clone();
        let e = redact_new_thought(&mut input).unwrap_err();
        assert_eq!(e, AppendError::SecretInField { field: field.into(), kind: "aws_access_key_id" }, "{field}");
        assert!(e.to_string().contains("put it in content"), "{e}");
        assert_eq!(input, before, "{field}: nothing changed");
    }
}

/// The straightforward scan the fast one must agree with: every rule tried
/// at every byte, skipping only inside a rule's own match where the rule says
/// so (`skips_inside_match`), never where a check raised `resume` to save work.
fn reference_scan(text: &str) -> Vec<Finding> {
    let mut all = Vec::new();
    for (r, rule) in RULES.iter().enumerate() {
        let mut resume = 0;
        for at in 0..text.len() {
            if !rule.skips_inside_match {
                resume = 0;
            }
            rule.find_at(text, at, &mut resume, &mut |(start, end)| all.push((start, r, end)));
        }
    }
    keep(all)
}

/// Pieces of secrets, near misses and separators, in both cases where a rule ignores case.
const FRAGMENTS: &[&str] = &[
    "-----BEGIN ", "RSA PRIVATE KEY-----", "-----END ", "PRIVATE KEY-----", "\n", "eyJ", "eyJhbGciOiJIUzI1NiJ9", "AKIA", "ASIA", "AIza",
    "aws_secret_access_key", "AWS-SECRET-ACCESS-KEY", "SecretAccessKey", "aws_secret_key", "=", ":", "\"", "'", "=>", "ghp_", "ghs_", "github_pat_",
    "xoxb-", "xoxs-", "sk_live_", "rk_test_", "sk-ant-", "sk-", "sk-proj-", "risk-", "Bearer", "bEaReR ", "Authorization", "AUTHORIZATION :", "Basic ",
    "://", "https://u:p@h", "@", "[REDACTED:url_password]", ".", "/", "+", " ", "\t", "_", "-", "é", "€",
];

fn fragment() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    prop_oneof![
        3 => proptest::sample::select(FRAGMENTS).prop_map(str::to_string),
        2 => "[A-Za-z0-9]{1,45}",
        1 => "[A-Z0-9]{16}",
        1 => "[A-Za-z0-9/+]{40}",
        1 => "[a-z0-9 ._-]{1,12}",
        1 => "\\PC{1,6}",
        1 => "eyJ[A-Za-z0-9_-]{6,9}\\.[A-Za-z0-9_-]{9,11}\\.[A-Za-z0-9_-]{9,11}",
        1 => "AIza[A-Za-z0-9_-]{34,36}",
        1 => "(aws_secret_access_key|SecretAccessKey|AWS_SECRET_KEY)[\"' ]{0,2}[=:][\"' =>]{0,2}[A-Za-z0-9/+]{39,41}",
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(2000))]
    #[test]
    fn the_one_pass_scan_finds_what_every_rule_at_every_byte_finds(parts in proptest::collection::vec(fragment(), 0..40)) {
        let text = parts.concat();
        proptest::prop_assert_eq!(scan(&text), reference_scan(&text), "{:?}", text);
    }
}

#[test]
fn the_reference_scan_agrees_on_the_cases() {
    for (_, secret, redacted, near_miss) in CASES {
        for text in [*secret, *redacted, *near_miss] {
            assert_eq!(scan(text), reference_scan(text), "{text:?}");
        }
    }
}

#[test]
fn a_jwt_inside_a_dropped_jwt_is_still_found() {
    // Found by the property test above: the JWT starting at 5 swallows the
    // one at 46 in its first segment and is dropped (it overlaps the Slack
    // token); the one at 46 must still be redacted.
    let text = "xoxb-eyJAIza-AA0AAaaa_0a-a--_aAAaa-aA-AAa0a-a-eyJ-0_A-aA.-a00-a-a0_.A0A0A-aa0a";
    assert_eq!(scan(text), reference_scan(text));
    assert!(scan(text).iter().any(|f| f.kind == "jwt" && f.start == 46), "{:?}", scan(text));
}
