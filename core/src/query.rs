//! Thought filters shared by search, markdown export, traversal and ranked
//! retrieval. Every filter is ANDed; list filters match any of their entries.

use crate::args::read_args;
use crate::chain::Chain;
use crate::text_filter::{TextNeedle, TextSignatures};
use crate::limits::{self, LimitError};
use crate::named_enum::named_enum;
use crate::thought::{MemoryScope, Thought, ThoughtRole, ThoughtType};
use crate::timestamp::{parse_rfc3339_millis, TimestampError};
use schemars::JsonSchema;
use std::collections::BTreeSet;
use std::sync::RwLockReadGuard;

/// The filter fields as callers send them (spec names).
#[derive(Debug, Clone, Default, JsonSchema)]
pub struct FilterArgs {
    /// Substring of content, agent, tags or concepts.
    pub text: Option<String>,
    /// Any of these thought types.
    pub thought_types: Option<Vec<ThoughtType>>,
    /// Any of these roles.
    pub roles: Option<Vec<ThoughtRole>>,
    /// Any of these tags (case-insensitive).
    pub tags_any: Option<Vec<String>>,
    /// Any of these concepts (case-insensitive).
    pub concepts_any: Option<Vec<String>>,
    /// Any of these agent ids.
    pub agent_ids: Option<Vec<String>>,
    /// Any of these agent names or aliases.
    pub agent_names: Option<Vec<String>>,
    /// Any of these agent owners (case-insensitive).
    pub agent_owners: Option<Vec<String>>,
    /// Minimum importance (inclusive).
    pub min_importance: Option<f64>,
    /// Minimum confidence (inclusive).
    pub min_confidence: Option<f64>,
    /// RFC 3339 lower bound on the timestamp (inclusive).
    pub since: Option<String>,
    /// RFC 3339 upper bound on the timestamp (inclusive).
    pub until: Option<String>,
    /// Only thoughts of this entity type.
    pub entity_type: Option<String>,
    /// Only thoughts of this memory scope.
    pub scope: Option<MemoryScope>,
}
read_args!(FilterArgs { text, thought_types, roles, tags_any, concepts_any, agent_ids, agent_names, agent_owners, min_importance, min_confidence, since, until, entity_type, scope });

/// A timestamp window: `[start, start + delta]` in `unit`.
#[derive(Debug, Clone, JsonSchema)]
pub struct TimeWindow {
    /// Window start, in `unit` since the Unix epoch.
    pub start: i64,
    /// Window length in `unit` (non-negative).
    #[schemars(range(min = 0))]
    pub delta: i64,
    /// `seconds` (default) or `milliseconds`.
    pub unit: Option<TimeUnit>,
}
read_args!(TimeWindow { start, delta, unit });

named_enum! {
    /// The unit of a [`TimeWindow`] (`s`/`second`/`seconds` or
    /// `ms`/`millisecond`/`milliseconds`).
    pub enum TimeUnit("time_window.unit", Exact) {
        /// Seconds since the Unix epoch.
        Seconds = "seconds" (also "second" | "s"),
        /// Milliseconds since the Unix epoch.
        Milliseconds = "milliseconds" (also "millisecond" | "ms"),
    }
}

impl TimeUnit {
    /// Milliseconds per unit.
    pub fn millis(self) -> i64 {
        match self {
            TimeUnit::Seconds => 1000,
            TimeUnit::Milliseconds => 1,
        }
    }
}

/// Why filter arguments were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// A text or list filter is outside the limits.
    #[error(transparent)]
    Limit(#[from] LimitError),
    /// A score bound is NaN or infinite.
    #[error("{field} must be a finite number")]
    NotFinite {
        /// The argument's name.
        field: &'static str,
    },
    /// `since` or `until` is not RFC 3339.
    #[error(transparent)]
    Timestamp(#[from] TimestampError),
    /// `time_window.delta` is negative.
    #[error("time_window.delta must not be negative")]
    NegativeDelta,
}

/// A compiled filter, ready to test thoughts of one chain.
#[derive(Debug, Clone, Default)]
pub struct ThoughtFilter {
    text: Option<String>,
    text_agents: BTreeSet<String>,
    types: Option<u32>,
    roles: Option<u8>,
    tags_any: Option<BTreeSet<String>>,
    concepts_any: Option<BTreeSet<String>>,
    agent_ids: Option<BTreeSet<String>>,
    agent_names: Option<BTreeSet<String>>,
    /// Agent ids whose registry display name or alias is one of `agent_names`.
    name_agents: BTreeSet<String>,
    agent_owners: Option<BTreeSet<String>>,
    min_importance: Option<f64>,
    min_confidence: Option<f64>,
    since_ms: Option<i64>,
    until_ms: Option<i64>,
    /// Inclusive bounds compared after dividing timestamps by `window_div`.
    window: Option<(i64, i64, i64)>,
    entity_type: Option<String>,
    scope_tag: Option<&'static str>,
}

fn lower_set(field: &'static str, v: &Option<Vec<String>>) -> Result<Option<BTreeSet<String>>, LimitError> {
    match v {
        None => Ok(None),
        Some(items) => {
            limits::check_labels(field, items)?;
            Ok(Some(crate::sorting::set_from(items.iter().map(|s| s.trim().to_lowercase()))))
        }
    }
}

/// Whether `set` (lower-cased texts) holds `text` lower-cased: without
/// making the lower-cased copy when `text` has nothing to lower (most tags
/// and names), as the filters test every thought they pass over.
fn contains_lowered(set: &BTreeSet<String>, text: &str) -> bool {
    if text.bytes().any(|b| b.is_ascii_uppercase() || !b.is_ascii()) {
        set.contains(&text.to_lowercase())
    } else {
        set.contains(text)
    }
}

impl ThoughtFilter {
    /// Compiles caller arguments against a chain (the chain's registry
    /// resolves `text` and `agent_names` against names and aliases).
    pub fn compile(args: &FilterArgs, time_window: Option<&TimeWindow>, chain: Option<&Chain>) -> Result<Self, QueryError> {
        let mut f = ThoughtFilter::default();
        if let Some(text) = args.text.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            limits::check_query_text(text)?;
            let needle = text.to_lowercase();
            if let Some(chain) = chain {
                f.text_agents = crate::sorting::set_from(chain.agents().records().filter(|r| r.search_text().contains(&needle)).map(|r| r.agent_id.clone()));
            }
            f.text = Some(needle);
        }
        if let Some(types) = &args.thought_types {
            limits::check_count("thought_types", types.len())?;
            f.types = Some(types.iter().fold(0u32, |mask, t| mask | 1 << t.code()));
        }
        if let Some(roles) = &args.roles {
            limits::check_count("roles", roles.len())?;
            f.roles = Some(roles.iter().fold(0u8, |mask, r| mask | 1 << r.code()));
        }
        f.tags_any = lower_set("tags_any", &args.tags_any)?;
        f.concepts_any = lower_set("concepts_any", &args.concepts_any)?;
        if let Some(ids) = &args.agent_ids {
            limits::check_labels("agent_ids", ids)?;
            f.agent_ids = Some(crate::sorting::set_from(ids.iter().cloned()));
        }
        if let Some(names) = lower_set("agent_names", &args.agent_names)? {
            // A name also matches every agent whose registry display name or alias is that name.
            let mut ids = BTreeSet::new();
            if let Some(chain) = chain {
                for r in chain.agents().records() {
                    if names.contains(&r.display_name.to_lowercase()) || r.aliases.iter().any(|a| names.contains(&a.to_lowercase())) {
                        ids.insert(r.agent_id.clone());
                    }
                }
            }
            f.agent_names = Some(names);
            f.name_agents = ids;
        }
        f.agent_owners = lower_set("agent_owners", &args.agent_owners)?;
        if let Some(e) = args.entity_type.as_deref().map(str::trim).filter(|e| !e.is_empty()) {
            limits::check_label("entity_type", e, limits::MAX_LABEL_BYTES)?;
            f.entity_type = Some(e.to_string());
        }
        f.scope_tag = args.scope.map(MemoryScope::as_tag);
        for (field, v) in [("min_importance", args.min_importance), ("min_confidence", args.min_confidence)] {
            if v.is_some_and(|x| !x.is_finite()) {
                return Err(QueryError::NotFinite { field });
            }
        }
        f.min_importance = args.min_importance;
        f.min_confidence = args.min_confidence;
        f.since_ms = args.since.as_deref().map(parse_rfc3339_millis).transpose()?;
        f.until_ms = args.until.as_deref().map(parse_rfc3339_millis).transpose()?;
        if let Some(w) = time_window {
            let div = w.unit.unwrap_or(TimeUnit::Seconds).millis();
            if w.delta < 0 {
                return Err(QueryError::NegativeDelta);
            }
            f.window = Some((w.start, w.start.saturating_add(w.delta), div));
        }
        Ok(f)
    }

    /// The filter ready to scan `chain` (holding the chain's text
    /// signatures when `text` is set).
    pub fn bind<'a>(&'a self, chain: &'a Chain) -> BoundFilter<'a> {
        BoundFilter { filter: self, chain, text: self.text.as_deref().map(|needle| (TextNeedle::new(needle), chain.text_signatures())) }
    }

    /// Every filter except `text` (for callers that score text themselves).
    pub fn matches_fields(&self, t: &Thought) -> bool {
        self.matches_fields_with(t, || t.timestamp_ms)
    }

    /// [`ThoughtFilter::matches_fields`] with the time bounds judged at
    /// `timestamp_ms` (the thought's own, [`Thought::timestamp_ms`], for
    /// every caller today).
    pub fn matches_fields_at(&self, t: &Thought, timestamp_ms: i64) -> bool {
        self.matches_fields_with(t, || timestamp_ms)
    }

    /// Every filter except `text`; `timestamp_ms` is asked for only when a
    /// time bound is set.
    fn matches_fields_with(&self, t: &Thought, timestamp_ms: impl FnOnce() -> i64) -> bool {
        if self.types.is_some_and(|m| m & (1 << t.thought_type.code()) == 0) {
            return false;
        }
        if self.roles.is_some_and(|m| m & (1 << t.role.code()) == 0) {
            return false;
        }
        if self.min_importance.is_some_and(|m| t.importance < m) {
            return false;
        }
        if let Some(m) = self.min_confidence {
            if t.confidence().is_none_or(|c| c < m) {
                return false;
            }
        }
        if let Some(ids) = &self.agent_ids {
            if !ids.contains(t.agent_id.as_str()) {
                return false;
            }
        }
        if let Some(names) = &self.agent_names {
            if !contains_lowered(names, &t.agent_name) && !self.name_agents.contains(t.agent_id.as_str()) {
                return false;
            }
        }
        if let Some(owners) = &self.agent_owners {
            if !t.agent_owner().is_some_and(|o| contains_lowered(owners, o)) {
                return false;
            }
        }
        if let Some(tags) = &self.tags_any {
            if !t.tags.iter().any(|x| contains_lowered(tags, x)) {
                return false;
            }
        }
        if let Some(e) = &self.entity_type {
            if t.entity_type() != Some(e.as_str()) {
                return false;
            }
        }
        if let Some(tag) = self.scope_tag {
            if !t.tags.iter().any(|x| x == tag) {
                return false;
            }
        }
        if let Some(concepts) = &self.concepts_any {
            if !t.concepts.iter().any(|x| contains_lowered(concepts, x)) {
                return false;
            }
        }
        if self.since_ms.is_some() || self.until_ms.is_some() || self.window.is_some() {
            let ts = timestamp_ms();
            if self.since_ms.is_some_and(|s| ts < s) || self.until_ms.is_some_and(|u| ts > u) {
                return false;
            }
            if let Some((lo, hi, div)) = self.window {
                let v = ts.div_euclid(div);
                if v < lo || v > hi {
                    return false;
                }
            }
        }
        true
    }

    /// Whether this filter constrains nothing (no `text` either).
    pub fn is_empty(&self) -> bool {
        self.text.is_none() && crate::ranked::ThoughtMatch::matches_every_thought(self)
    }
}

/// A [`ThoughtFilter`] bound to one chain for a scan.
pub struct BoundFilter<'a> {
    filter: &'a ThoughtFilter,
    chain: &'a Chain,
    text: Option<(TextNeedle<'a>, RwLockReadGuard<'a, TextSignatures>)>,
}

impl BoundFilter<'_> {
    /// Whether thought `idx` of the chain passes every filter.
    pub fn matches(&mut self, idx: usize) -> bool {
        let t = &self.chain.thoughts()[idx];
        let f = self.filter;
        f.matches_fields_with(t, || t.timestamp_ms)
            && match &mut self.text {
                Some((needle, signatures)) => f.text_agents.contains(t.agent_id.as_str()) || needle.is_in(t, signatures.get(idx)),
                None => true,
            }
    }

    /// `false` when thought `idx` surely fails the filter, told from its
    /// text signature (a dense list) without reading the thought, unless an
    /// agent's own record holds the text: a scan asks this first, as most
    /// thoughts lack a given text. `true` means [`BoundFilter::matches`]
    /// must tell.
    #[inline]
    pub fn may_match(&self, idx: usize) -> bool {
        match &self.text {
            Some((needle, signatures)) => {
                needle.may_be_in(signatures.get(idx))
                    // An agent whose own record holds the text matches whatever its thoughts say.
                    || (!self.filter.text_agents.is_empty() && self.filter.text_agents.contains(self.chain.thoughts()[idx].agent_id.as_str()))
            }
            None => true,
        }
    }
}

/// The newest `limit` matching thoughts that `visibility` shows, returned in append order.
pub(crate) fn search<'c>(chain: &'c Chain, filter: &ThoughtFilter, visibility: crate::chain::visibility::Visibility, limit: usize) -> Vec<&'c Thought> {
    let mut out: Vec<&Thought> = Vec::new();
    let mut filter = filter.bind(chain);
    let view = visibility.over(chain);
    for idx in (0..chain.len()).rev() {
        if out.len() >= limit {
            break;
        }
        if filter.may_match(idx) && !view.hides(idx) && filter.matches(idx) {
            out.push(&chain.thoughts()[idx]);
        }
    }
    out.reverse();
    out
}

impl crate::ranked::ThoughtMatch for ThoughtFilter {
    fn matches(&self, t: &Thought, timestamp_ms: i64) -> bool {
        self.matches_fields_at(t, timestamp_ms)
    }

    fn matches_every_thought(&self) -> bool {
        // Every field named: a field added to the filter is a compile error here until it is.
        let ThoughtFilter { text: _, text_agents: _, types, roles, tags_any, concepts_any, agent_ids, agent_names, name_agents: _, agent_owners, min_importance, min_confidence, since_ms, until_ms, window, entity_type, scope_tag } = self;
        types.is_none()
            && roles.is_none()
            && tags_any.is_none()
            && concepts_any.is_none()
            && agent_ids.is_none()
            && agent_names.is_none()
            && agent_owners.is_none()
            && min_importance.is_none()
            && min_confidence.is_none()
            && since_ms.is_none()
            && until_ms.is_none()
            && window.is_none()
            && entity_type.is_none()
            && scope_tag.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::tests::golden_thought;

    fn compile(args: FilterArgs) -> ThoughtFilter {
        ThoughtFilter::compile(&args, None, None).unwrap()
    }

    #[test]
    fn a_text_rules_thoughts_out_by_signature_unless_their_agents_record_holds_it() {
        let mut c = Chain::new("t", crate::record::ChainFormat::Binary);
        for (i, (agent, content)) in [("ada", "Rotated the keys."), ("bob", "Rotated the logs."), ("bob", "Fed the quokka.")].into_iter().enumerate() {
            let t = c.prepare_append(crate::NewThought::new(agent, ThoughtType::Finding, content), format!("2026-01-01T00:00:0{i}.000Z"), format!("id-{i}"), [0; 16]).unwrap();
            c.commit(t);
        }
        let text = FilterArgs { text: Some("quokka".into()), ..Default::default() };
        let plain = ThoughtFilter::compile(&text, None, Some(&c)).unwrap();
        let bound = plain.bind(&c);
        assert_eq!((0..3).map(|i| bound.may_match(i)).collect::<Vec<_>>(), [false, false, true], "told from the signatures alone");
        // Ada's record holds the text: her thought may match, Bob's first still may not.
        let mut with_agent = plain.clone();
        with_agent.text_agents.insert("ada".into());
        let mut bound = with_agent.bind(&c);
        assert_eq!((0..3).map(|i| bound.may_match(i)).collect::<Vec<_>>(), [true, false, true]);
        assert_eq!((0..3).map(|i| bound.matches(i)).collect::<Vec<_>>(), [true, false, true]);
    }

    #[test]
    fn list_filters_are_any_of_and_case_insensitive() {
        let t = golden_thought();
        assert!(compile(FilterArgs { tags_any: Some(vec!["OPS".into(), "x".into()]), ..Default::default() }).matches_fields(&t));
        assert!(!compile(FilterArgs { tags_any: Some(vec!["x".into()]), ..Default::default() }).matches_fields(&t));
        assert!(compile(FilterArgs { agent_owners: Some(vec!["Ops-Team".into()]), ..Default::default() }).matches_fields(&t));
        assert!(compile(FilterArgs { thought_types: Some(vec![ThoughtType::Idea, ThoughtType::Constraint]), ..Default::default() }).matches_fields(&t));
        let mut upper = t.clone();
        upper.tags = crate::labels(["Ops", "ÉTÉ"]);
        for (wanted, matches) in [("ops", true), ("OPS", true), ("été", true), ("Été", true), ("ete", false), ("op", false)] {
            assert_eq!(compile(FilterArgs { tags_any: Some(vec![wanted.into()]), ..Default::default() }).matches_fields(&upper), matches, "{wanted}");
        }
    }

    #[test]
    fn scores_and_time_bounds_are_inclusive() {
        let t = golden_thought(); // importance 0.95, confidence 0.98, 2026-11-22T09:30:00Z
        assert!(compile(FilterArgs { min_importance: Some(0.95), ..Default::default() }).matches_fields(&t));
        assert!(!compile(FilterArgs { min_importance: Some(0.96), ..Default::default() }).matches_fields(&t));
        assert!(compile(FilterArgs { since: Some("2026-11-22T09:30:00Z".into()), until: Some("2026-11-22T09:30:00Z".into()), ..Default::default() }).matches_fields(&t));
        let mut none = t.clone();
        none.extras_mut().confidence = None;
        assert!(!compile(FilterArgs { min_confidence: Some(0.0), ..Default::default() }).matches_fields(&none));
    }

    #[test]
    fn bad_filters_are_explained() {
        let e = ThoughtFilter::compile(&FilterArgs { min_importance: Some(f64::NAN), ..Default::default() }, None, None).unwrap_err();
        assert!(e.to_string().contains("finite"), "{e}");
        let w = TimeWindow { start: 0, delta: -1, unit: None };
        assert!(ThoughtFilter::compile(&FilterArgs::default(), Some(&w), None).unwrap_err().to_string().contains("negative"));
        use crate::args::FromArg;
        let e = TimeWindow::from_arg(serde_json::json!({"start": 0, "delta": 1, "unit": "hours"})).unwrap_err();
        assert!(e.to_string().contains("expected one of: seconds, milliseconds"), "{e}");
        let w = TimeWindow::from_arg(serde_json::json!({"start": 0, "delta": 1, "unit": "ms"})).unwrap();
        assert_eq!(w.unit, Some(TimeUnit::Milliseconds));
    }
}
