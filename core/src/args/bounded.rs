//! Numbers a tool uses within a range, whatever was sent: a count such as
//! `limit` (clamped to its tool's bounds) and a score (`importance`,
//! `confidence`: clamped to 0..=1 when stored). The type carries its range,
//! so the handler's value and the reply's warning come from one place: a
//! call whose number was moved into range answers as before, plus a
//! `warnings` entry naming the field, the value sent and the value used.
//! Their argument schemas are those of the plain number.

use super::{ArgError, ArgPath, FromArg};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::Value;
use std::borrow::Cow;

/// A non-negative count the tool uses within `MIN..=MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bounded<const MIN: u64, const MAX: u64> {
    sent: u64,
}

impl<const MIN: u64, const MAX: u64> Bounded<MIN, MAX> {
    /// The count the tool uses: the one sent, moved into `MIN..=MAX`.
    pub(crate) fn get(self) -> usize {
        used(self.sent, MIN, MAX) as usize
    }
}

impl<const MIN: u64, const MAX: u64> FromArg for Bounded<MIN, MAX> {
    fn from_arg(value: Value) -> Result<Self, ArgError> {
        u64::from_arg(value).map(|sent| Bounded { sent })
    }

    fn placeholder() -> Self {
        Bounded { sent: MIN }
    }

    fn notes(&self, field: &ArgPath<'_>, out: &mut Vec<String>) {
        range_note(field, self.sent, MIN, MAX, out);
    }
}

// The work of every `Bounded` is done once, here, whatever its range: the
// browser's module carries one copy, not one per range.

fn used(sent: u64, min: u64, max: u64) -> u64 {
    sent.clamp(min, max)
}

fn range_note(field: &ArgPath<'_>, sent: u64, min: u64, max: u64, out: &mut Vec<String>) {
    let used = used(sent, min, max);
    if used != sent {
        out.push(format!("`{field}` {sent} is outside {min}..={max}; {used} was used"));
    }
}

impl<const MIN: u64, const MAX: u64> JsonSchema for Bounded<MIN, MAX> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        u64::schema_name()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        u64::json_schema(generator)
    }
}

/// A score in 0..=1 (`importance`, `confidence`), as sent: the chain
/// stores it clamped ([`crate::limits`]); the reply says so when it was
/// outside.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Score(pub(crate) f64);

impl FromArg for Score {
    fn from_arg(value: Value) -> Result<Self, ArgError> {
        f64::from_arg(value).map(Score)
    }

    fn placeholder() -> Self {
        Score(0.0)
    }

    fn notes(&self, field: &ArgPath<'_>, out: &mut Vec<String>) {
        // NaN is refused when stored, with its own error.
        let used = self.0.clamp(0.0, 1.0);
        if !self.0.is_nan() && used != self.0 {
            out.push(format!("`{field}` {} is outside 0..=1; {used} was stored", self.0));
        }
    }
}

impl JsonSchema for Score {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        f64::schema_name()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        f64::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_count_outside_its_range_is_used_within_it_and_named() {
        let mut notes = Vec::new();
        let big = Bounded::<1, 100>::from_arg(json!(500)).unwrap();
        assert_eq!(big.get(), 100);
        big.notes(&ArgPath::Field(&ArgPath::Top, "limit"), &mut notes);
        assert_eq!(notes, ["`limit` 500 is outside 1..=100; 100 was used"]);
        let zero = Bounded::<1, 100>::from_arg(json!("0")).unwrap();
        assert_eq!(zero.get(), 1, "numbers in strings read too");
        let fine = Bounded::<1, 100>::from_arg(json!(7)).unwrap();
        fine.notes(&ArgPath::Field(&ArgPath::Top, "limit"), &mut notes);
        assert_eq!((fine.get(), notes.len()), (7, 1), "a value in range says nothing");
    }

    #[test]
    fn a_score_outside_zero_to_one_is_named() {
        let mut notes = Vec::new();
        let path = ArgPath::Item(&ArgPath::Field(&ArgPath::Top, "thoughts"), 2);
        let importance = ArgPath::Field(&path, "importance");
        Score(7.0).notes(&importance, &mut notes);
        Score(0.4).notes(&importance, &mut notes);
        Score(f64::NAN).notes(&importance, &mut notes);
        assert_eq!(notes, ["`thoughts[2].importance` 7 is outside 0..=1; 1 was stored"], "a nested argument is named by its path");
    }
}
