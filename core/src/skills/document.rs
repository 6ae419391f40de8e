//! Parsing skill content (Markdown with optional frontmatter, or a JSON skill
//! document) into a [`SkillDocument`], and rendering a document in either format.
//!
//! Markdown frontmatter is a small YAML subset between a first line `---` and
//! the next `---` (or `...`) line: `key: value` pairs where a value is plain
//! text, a `"double"` (JSON escapes) or `'single'` quoted string, a flow list
//! `[a, "b"]`, a block list of `- item` lines, or a `|` / `>` block scalar.
//! Known keys: `name`, `description`, `tags`, `triggers`, `warnings`,
//! `schema_version`; other keys are ignored. Without a `name`, the first
//! `# H1` outside fenced code blocks names the skill.

pub use super::document_error::DocumentError;
use super::model::{SkillDocument, SkillFormat, CURRENT_SCHEMA_VERSION};
use crate::limits::LimitError;
use crate::text::truncate_chars;
use serde::Deserialize;

/// Parses content in `format`. `fallback_name` (the caller's `skill_id`) names
/// a skill whose content names none.
pub fn parse(format: SkillFormat, content: &str, fallback_name: Option<&str>) -> Result<SkillDocument, DocumentError> {
    let mut doc = match format {
        SkillFormat::Markdown => parse_markdown(content)?,
        SkillFormat::Json => parse_json(content)?,
    };
    if doc.name.trim().is_empty() {
        match fallback_name {
            Some(n) => doc.name = n.to_string(),
            None => return Err(DocumentError::NoName),
        }
    }
    if doc.schema_version == 0 || doc.schema_version > CURRENT_SCHEMA_VERSION {
        return Err(DocumentError::UnsupportedSchemaVersion(doc.schema_version));
    }
    Ok(doc)
}

/// Renders a document in `format`. Parsing the result gives the same document.
pub fn render(format: SkillFormat, doc: &SkillDocument) -> String {
    match format {
        SkillFormat::Markdown => render_markdown(doc),
        SkillFormat::Json => render_json(doc),
    }
}

/// Parses Markdown with optional frontmatter.
pub fn parse_markdown(content: &str) -> Result<SkillDocument, DocumentError> {
    let (front, body) = split_frontmatter(content)?;
    let mut doc = SkillDocument {
        schema_version: CURRENT_SCHEMA_VERSION,
        name: String::new(),
        description: String::new(),
        tags: Vec::new(),
        triggers: Vec::new(),
        warnings: Vec::new(),
        body: body.to_string(),
    };
    for (key, value) in front {
        match key.as_str() {
            "name" => doc.name = value.into_scalar(&key)?,
            "description" => doc.description = value.into_scalar(&key)?,
            "tags" => doc.tags = value.into_list(),
            "triggers" => doc.triggers = value.into_list(),
            "warnings" => doc.warnings = value.into_list(),
            "schema_version" => {
                let v = value.into_scalar(&key)?;
                doc.schema_version = v.trim().parse().map_err(|_| DocumentError::SchemaVersionNotANumber(truncate_chars(&v, 32).to_string()))?;
            }
            _ => {}
        }
    }
    if doc.name.trim().is_empty() {
        if let Some(h1) = first_h1(body) {
            doc.name = h1;
        }
    }
    Ok(doc)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonDoc {
    schema_version: Option<u32>,
    name: Option<String>,
    description: Option<String>,
    tags: Option<Vec<String>>,
    triggers: Option<Vec<String>>,
    warnings: Option<Vec<String>>,
    body: Option<String>,
}

/// Parses a JSON skill document. `body` is Markdown; a body without a `name`
/// field is named by its first H1.
pub fn parse_json(content: &str) -> Result<SkillDocument, DocumentError> {
    let j: JsonDoc = serde_json::from_str(content).map_err(|e| DocumentError::NotAJsonDocument(e.to_string()))?;
    let body = j.body.unwrap_or_default();
    let name = match j.name.filter(|n| !n.trim().is_empty()) {
        Some(n) => n,
        None => first_h1(&body).unwrap_or_default(),
    };
    Ok(SkillDocument {
        schema_version: j.schema_version.unwrap_or(CURRENT_SCHEMA_VERSION),
        name,
        description: j.description.unwrap_or_default(),
        tags: j.tags.unwrap_or_default(),
        triggers: j.triggers.unwrap_or_default(),
        warnings: j.warnings.unwrap_or_default(),
        body,
    })
}

/// Renders Markdown: frontmatter with every field (strings as JSON-quoted
/// YAML scalars, lists as flow lists), a blank line, then the body.
pub fn render_markdown(doc: &SkillDocument) -> String {
    let q = |s: &str| serde_json::to_string(s).expect("string serializes");
    let l = |v: &[String]| serde_json::to_string(v).expect("list serializes");
    let mut out = String::with_capacity(doc.body.len() + 256);
    out.push_str("---\n");
    out.push_str(&format!("name: {}\n", q(&doc.name)));
    out.push_str(&format!("description: {}\n", q(&doc.description)));
    out.push_str(&format!("tags: {}\n", l(&doc.tags)));
    out.push_str(&format!("triggers: {}\n", l(&doc.triggers)));
    out.push_str(&format!("warnings: {}\n", l(&doc.warnings)));
    out.push_str(&format!("schema_version: {}\n", doc.schema_version));
    out.push_str("---\n");
    out.push_str(&doc.body);
    out
}

/// Renders the JSON skill document, pretty-printed.
pub fn render_json(doc: &SkillDocument) -> String {
    serde_json::to_string_pretty(doc).expect("document serializes")
}

/// Checks a parsed document's metadata against [`crate::limits`]; the error
/// names the field at fault.
pub fn check_limits(doc: &SkillDocument) -> Result<(), LimitError> {
    use crate::limits::{check_count, check_label, check_labels, MAX_DESCRIPTION_BYTES, MAX_LABEL_BYTES};
    check_label("name", &doc.name, MAX_LABEL_BYTES)?;
    check_label("description", &doc.description, MAX_DESCRIPTION_BYTES)?;
    check_labels("tags", &doc.tags)?;
    check_labels("triggers", &doc.triggers)?;
    check_count("warnings", doc.warnings.len())?;
    doc.warnings.iter().try_for_each(|w| check_label("warnings", w, MAX_DESCRIPTION_BYTES))
}

/// A raw frontmatter value.
enum FrontValue {
    Scalar(String),
    List(Vec<String>),
}

impl FrontValue {
    fn into_scalar(self, key: &str) -> Result<String, DocumentError> {
        match self {
            FrontValue::Scalar(s) => Ok(s),
            FrontValue::List(_) => Err(DocumentError::ListNotAllowed(key.to_string())),
        }
    }

    fn into_list(self) -> Vec<String> {
        match self {
            FrontValue::List(v) => v,
            FrontValue::Scalar(s) if s.trim().is_empty() => Vec::new(),
            // `tags: a, b` is accepted as a comma-separated list.
            FrontValue::Scalar(s) => s.split(',').map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect(),
        }
    }
}

/// Frontmatter keys this parser reads; others are ignored.
const KNOWN_KEYS: &[&str] = &["name", "description", "tags", "triggers", "warnings", "schema_version"];

/// Frontmatter `(key, value)` pairs and the body after it.
type Split<'a> = (Vec<(String, FrontValue)>, &'a str);

/// Splits off frontmatter: its `(key, value)` pairs and the body after it.
fn split_frontmatter(content: &str) -> Result<Split<'_>, DocumentError> {
    let first_end = content.find('\n').map(|i| i + 1).unwrap_or(content.len());
    if content[..first_end].trim_end() != "---" {
        return Ok((Vec::new(), content));
    }
    // Collect lines until the closing fence.
    let mut lines: Vec<(usize, &str)> = Vec::new();
    let mut pos = first_end;
    let mut body_start = None;
    let mut line_no = 1;
    while pos < content.len() {
        let end = content[pos..].find('\n').map(|i| pos + i + 1).unwrap_or(content.len());
        let line = content[pos..end].trim_end_matches(['\n', '\r']);
        line_no += 1;
        if line == "---" || line == "..." {
            body_start = Some(end);
            break;
        }
        lines.push((line_no, line));
        pos = end;
    }
    let Some(body_start) = body_start else {
        return Err(DocumentError::UnclosedFrontmatter);
    };
    let mut pairs: Vec<(String, FrontValue)> = Vec::new();
    let mut i = 0;
    // Keys we do not read (`metadata:`, `allowed-tools:` ...) may hold nested
    // YAML; their indented lines are skipped.
    let mut in_ignored_key = false;
    while i < lines.len() {
        let (no, line) = lines[i];
        i += 1;
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            if in_ignored_key {
                continue;
            }
            return Err(DocumentError::UnexpectedIndent(no));
        }
        let Some((key, raw)) = line.split_once(':') else {
            return Err(DocumentError::NotKeyValue(no));
        };
        let key = key.trim().to_ascii_lowercase();
        let raw = raw.trim();
        in_ignored_key = !KNOWN_KEYS.contains(&key.as_str());
        if in_ignored_key {
            continue;
        }
        let value = if raw.is_empty() {
            // A block list follows, or the value is empty.
            let mut items = Vec::new();
            while i < lines.len() && (lines[i].1.trim_start().starts_with("- ") || lines[i].1.trim() == "-") {
                let item = lines[i].1.trim_start()[1..].trim();
                items.push(unquote(item, lines[i].0)?);
                i += 1;
            }
            if items.is_empty() {
                FrontValue::Scalar(String::new())
            } else {
                FrontValue::List(items)
            }
        } else if raw == "|" || raw == ">" || raw == "|-" || raw == ">-" {
            let mut parts = Vec::new();
            while i < lines.len() && (lines[i].1.starts_with([' ', '\t']) || lines[i].1.trim().is_empty()) {
                parts.push(lines[i].1.trim());
                i += 1;
            }
            let sep = if raw.starts_with('|') { "\n" } else { " " };
            FrontValue::Scalar(parts.join(sep).trim().to_string())
        } else if raw.starts_with('[') {
            FrontValue::List(parse_flow_list(raw, no)?)
        } else {
            FrontValue::Scalar(unquote(raw, no)?)
        };
        pairs.push((key, value));
    }
    Ok((pairs, &content[body_start..]))
}

/// A scalar: `"json-escaped"`, `'single ''quoted'''`, or plain text (an
/// unquoted ` #` starts a comment).
fn unquote(raw: &str, line: usize) -> Result<String, DocumentError> {
    let raw = raw.trim();
    if raw.starts_with('"') {
        return serde_json::from_str::<String>(raw).map_err(|e| DocumentError::BadDoubleQuoted { line, reason: e.to_string() });
    }
    if let Some(inner) = raw.strip_prefix('\'') {
        let inner = inner.strip_suffix('\'').ok_or(DocumentError::UnterminatedSingleQuoted(line))?;
        return Ok(inner.replace("''", "'"));
    }
    let plain = match raw.find(" #") {
        Some(i) => &raw[..i],
        None => raw,
    };
    Ok(plain.trim().to_string())
}

/// `[a, "b, c", 'd']`.
fn parse_flow_list(raw: &str, line: usize) -> Result<Vec<String>, DocumentError> {
    if let Ok(v) = serde_json::from_str::<Vec<String>>(raw) {
        return Ok(v);
    }
    let inner = raw
        .strip_prefix('[')
        .and_then(|r| r.trim_end().strip_suffix(']'))
        .ok_or(DocumentError::UnclosedList(line))?;
    let mut items = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in inner.chars() {
        match (quote, c) {
            (None, '"') | (None, '\'') => {
                quote = Some(c);
                cur.push(c);
            }
            (Some(q), c) if c == q => {
                quote = None;
                cur.push(c);
            }
            (None, ',') => {
                items.push(std::mem::take(&mut cur));
            }
            _ => cur.push(c),
        }
    }
    items.push(cur);
    items
        .into_iter()
        .filter(|s| !s.trim().is_empty())
        .map(|s| unquote(&s, line))
        .collect()
}

/// The text of the first `# H1` outside fenced code blocks.
pub fn first_h1(markdown: &str) -> Option<String> {
    let mut fence: Option<(char, usize)> = None;
    for line in markdown.lines() {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        if let Some(marker) = fence_marker(t) {
            match fence {
                None if indent < 4 => fence = Some(marker),
                Some((c, n)) if c == marker.0 && marker.1 >= n && t.trim_end().chars().all(|x| x == c) => fence = None,
                _ => {}
            }
            continue;
        }
        if fence.is_some() || indent >= 4 {
            continue;
        }
        if let Some(rest) = t.strip_prefix('#') {
            if rest.is_empty() || rest.starts_with([' ', '\t']) {
                let title = rest.trim().trim_end_matches('#').trim();
                if !title.is_empty() {
                    return Some(title.to_string());
                }
            }
        }
    }
    None
}

/// A code fence opener/closer: ``` or ~~~ (3 or more), as (char, count).
fn fence_marker(t: &str) -> Option<(char, usize)> {
    let c = t.chars().next()?;
    if c != '`' && c != '~' {
        return None;
    }
    let n = t.chars().take_while(|x| *x == c).count();
    (n >= 3).then_some((c, n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy;

    fn doc() -> SkillDocument {
        SkillDocument {
            schema_version: 1,
            name: "Deploy: \"safely\"".into(),
            description: "How to ship, with care # not a comment".into(),
            tags: vec!["ops".into(), "a, b".into()],
            triggers: vec!["deploy".into()],
            warnings: vec!["needs prod access".into()],
            body: "# Deploy\n\n```sh\n# not a heading\n```\nStep 1.\n".into(),
        }
    }

    #[test]
    fn frontmatter_is_parsed() {
        let md = "---\nname: Release checklist\ndescription: 'It''s how we ship'\ntags: [release, \"ci, cd\"]\ntriggers:\n  - ship it\n  - release\nwarnings: needs tokens, careful\nschema_version: 1\nlicense: MIT\n---\n# Other title\nbody\n";
        let d = parse_markdown(md).unwrap();
        assert_eq!(d.name, "Release checklist");
        assert_eq!(d.description, "It's how we ship");
        assert_eq!(d.tags, vec!["release", "ci, cd"]);
        assert_eq!(d.triggers, vec!["ship it", "release"]);
        assert_eq!(d.warnings, vec!["needs tokens", "careful"]);
        assert_eq!(d.body, "# Other title\nbody\n");
    }

    #[test]
    fn unknown_keys_may_nest() {
        let md = "---\nname: Nested\nmetadata:\n  author: someone\n  version: \"1.0\"\nallowed-tools: [Bash, Read]\ntags:\n  - x\n---\nbody\n";
        let d = parse_markdown(md).unwrap();
        assert_eq!(d.name, "Nested");
        assert_eq!(d.tags, vec!["x"]);
        assert!(parse_markdown("---\nname:\n  first: x\n---\n").unwrap_err().to_string().contains("line 3"));
    }

    #[test]
    fn block_scalars_and_comments() {
        let md = "---\n# comment\nname: X # trailing\ndescription: >\n  one\n  two\n---\n";
        let d = parse_markdown(md).unwrap();
        assert_eq!(d.name, "X");
        assert_eq!(d.description, "one two");
    }

    #[test]
    fn name_falls_back_to_first_h1_outside_fences() {
        let md = "intro\n```\n# not this\n```\n~~~~\n# nor this\n~~~\n~~~~\n    # indented code\n## H2\n# The Title #\n";
        assert_eq!(parse_markdown(md).unwrap().name, "The Title");
        assert_eq!(parse_markdown("```\n# only in code\n```\n").unwrap().name, "");
        assert!(parse(SkillFormat::Markdown, "no title", None).unwrap_err().to_string().contains("no name"));
        assert_eq!(parse(SkillFormat::Markdown, "no title", Some("given-id")).unwrap().name, "given-id");
    }

    #[test]
    fn no_frontmatter_keeps_whole_body() {
        let d = parse_markdown("# T\n---\nnot frontmatter\n").unwrap();
        assert_eq!(d.body, "# T\n---\nnot frontmatter\n");
        assert!(parse_markdown("---\nname: x\n").unwrap_err().to_string().contains("never closed"));
        assert!(parse_markdown("---\njust text\n---\n").unwrap_err().to_string().contains("line 2"));
    }

    #[test]
    fn bad_schema_version_is_refused() {
        assert!(parse(SkillFormat::Markdown, "---\nschema_version: 9\n---\n# T\n", None).unwrap_err().to_string().contains("unsupported schema_version 9"));
        assert!(parse(SkillFormat::Markdown, "---\nschema_version: one\n---\n# T\n", None).unwrap_err().to_string().contains("positive integer"));
        assert!(parse(SkillFormat::Json, "{\"name\":\"x\",\"schema_version\":0}", None).unwrap_err().to_string().contains("unsupported"));
    }

    #[test]
    fn json_documents_parse_and_reject_unknown_fields() {
        let d = parse_json("{\"body\":\"# From Body\\ntext\",\"tags\":[\"a\"]}").unwrap();
        assert_eq!(d.name, "From Body");
        assert_eq!(d.tags, vec!["a"]);
        assert!(parse_json("{\"nmae\":\"typo\"}").unwrap_err().to_string().contains("expected an object with fields"));
        assert!(parse_json("[1]").is_err());
    }

    proptest::proptest! {
        #[test]
        fn any_document_round_trips_through_both_formats(
            name in "[^\\x00-\\x1f]{1,40}".prop_filter("non-blank", |n| !n.trim().is_empty()),
            description in "\\PC{0,60}",
            tags in proptest::collection::vec("\\PC{0,12}", 0..4),
            triggers in proptest::collection::vec("[a-z #:'\"\\[\\],-]{0,12}", 0..4),
            warnings in proptest::collection::vec("\\PC{0,20}", 0..3),
            body in "(\\PC|\n|\r){0,200}",
        ) {
            let d = SkillDocument { schema_version: 1, name, description, tags, triggers, warnings, body };
            for &f in SkillFormat::ALL {
                let text = render(f, &d);
                proptest::prop_assert_eq!(&parse(f, &text, None).unwrap(), &d);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(64))]
        #[test]
        fn parsing_arbitrary_text_never_panics(text in "(---\n)?(\\PC|\n|\r){0,300}") {
            let _ = parse(SkillFormat::Markdown, &text, None);
            let _ = parse(SkillFormat::Json, &text, Some("x"));
            let _ = first_h1(&text);
        }
    }

    #[test]
    fn conversions_round_trip() {
        let d = doc();
        for &f in SkillFormat::ALL {
            let text = render(f, &d);
            assert_eq!(parse(f, &text, None).unwrap(), d, "{f:?}:\n{text}");
        }
        // markdown -> json -> markdown keeps the document
        let md = render_markdown(&d);
        let json = render_json(&parse_markdown(&md).unwrap());
        assert_eq!(parse_markdown(&render_markdown(&parse_json(&json).unwrap())).unwrap(), d);
    }
}
