//! Reading a tool's arguments from their JSON object.
//!
//! An argument type lists the fields it reads with [`read_args!`], right
//! under its definition: `read_args!(ForgetArgs { chain_key, reason })`
//! reads each field from the key of the same name (so a field cannot be
//! read under another name, and the struct literal the macro builds fails
//! to compile when a field is left out). `flatten { fields }` reads a nested
//! argument type from the same object, as `#[serde(flatten)]` states it for
//! the schema.
//!
//! The rules every tool shares:
//! - a missing key, or `null`, is `None` for an `Option` and an error
//!   (`missing field `content``) for a required field; keys no field names
//!   are ignored;
//! - JSON has one number type: a float with no fractional part is the
//!   integer it names (`10.0` is `10`; above `u64`'s range it saturates and
//!   the tool clamps it), floats take integers;
//! - an enum ([`crate::named_enum`]) is read from any spelling it accepts;
//! - an error names the argument, nested ones with their path
//!   (`invalid `relations[0].target_index`: expected a non-negative
//!   integer, found a string`); an enum's unknown name says which enum
//!   and every accepted value (`unknown role 'Boss'; expected one of: ...`).
//!
//! Why not serde's derived `Deserialize`: each derived type compiles a
//! visitor of its own; here each field is one call to a reader shared by
//! every field of its type, which took 26 KB off the browser build's
//! gzipped `.wasm` (~50 argument types).

mod bounded;
mod chain_key;
mod instant;
mod unknown_fields;

pub(crate) use bounded::{Bounded, Score};
pub(crate) use chain_key::ChainKey;
pub(crate) use instant::Instant;
#[cfg(test)]
pub(crate) use instant::{EARLIEST_MS, LATEST_MS};

use serde_json::{Map, Value};


/// A tool's arguments, fields taken out as they are read, and the first
/// error met.
///
/// Reading does not stop at an error: the field gets a placeholder and
/// [`Args::finish`] returns the error. An argument type's `read` is then
/// one call per field with nothing to undo on the way out (returning early
/// from the middle of a struct literal compiles code to drop every field
/// already read, at every field: most of the code this module saves).
#[derive(Debug)]
pub(crate) struct Args {
    map: Map<String, Value>,
    error: Option<ArgError>,
    /// The fields read so far: the names the type knows.
    known: Vec<&'static str>,
}

impl Args {
    /// The arguments of one call (or of one nested object).
    pub(crate) fn new(map: Map<String, Value>) -> Self {
        Args { map, error: None, known: Vec::new() }
    }

    /// Takes the field `name` out and reads it as a `T`; on an error, keeps
    /// the first and gives a placeholder.
    pub(crate) fn field<T: FromArg>(&mut self, name: &'static str) -> T {
        self.known.push(name);
        let read = match self.map.remove(name) {
            Some(value) => T::from_arg(value),
            None => T::missing(),
        };
        read.unwrap_or_else(|e| {
            self.error.get_or_insert(e.within(name));
            T::placeholder()
        })
    }

    /// What was read, or the first error.
    pub(crate) fn finish<T>(self, read: T) -> Result<T, ArgError> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(read),
        }
    }

    /// Takes the fields left unread (the type does not know them): an
    /// error for the first one close to a known field (`did you mean`),
    /// else a warning naming each goes to `warnings` ([`crate::args::unknown_fields`]).
    /// Not generic, and it drains the map the way dropping it would: the
    /// browser's `.wasm` pays for it once.
    fn take_unknown(&mut self, warnings: &mut Vec<String>) -> Result<(), ArgError> {
        for (name, _) in std::mem::take(&mut self.map) {
            if let Some(meant) = unknown_fields::suggestion(&name, &self.known) {
                let shown = crate::text::truncate_chars(&name, 64);
                return Err(ArgError { path: String::new(), problem: Problem::Invalid(format!("unknown field `{shown}` (did you mean `{meant}`?)")) });
            }
            warnings.push(format!("unknown field `{}` ignored", crate::text::truncate_chars(&name, 64)));
        }
        Ok(())
    }
}

/// An argument type: reads its fields from [`Args`] (see [`read_args!`]).
pub(crate) trait ReadArgs: Sized {
    /// Reads every field this type has; errors stay in `args`.
    fn read(args: &mut Args) -> Self;
}

/// Reads `T` from `value` whatever its errors: fields that do not read
/// hold placeholders. For finding what a call names before it runs (a
/// field that does not read makes the call itself fail).
pub(crate) fn read_leniently<T: ReadArgs>(value: Value) -> T {
    let map = match value {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    T::read(&mut Args::new(map))
}

/// Reads `T` from a whole object. An unknown field close to a known one
/// is an error; other unknown fields are named in `warnings`.
pub(crate) fn read_object<T: ReadArgs>(map: Map<String, Value>, warnings: &mut Vec<String>) -> Result<T, ArgError> {
    let mut args = Args::new(map);
    let read = T::read(&mut args);
    args.take_unknown(warnings)?;
    args.finish(read)
}

/// A type one argument's JSON value is read as.
pub(crate) trait FromArg: Sized {
    /// Reads `value`.
    fn from_arg(value: Value) -> Result<Self, ArgError>;

    /// What an absent field is: an error unless the type is optional.
    fn missing() -> Result<Self, ArgError> {
        Err(ArgError { path: String::new(), problem: Problem::Missing })
    }

    /// A value standing in for one that could not be read (never returned
    /// to a tool: [`Args::finish`] returns the error instead).
    fn placeholder() -> Self;

    /// The chains this value names (a [`ChainKey`] names one; `None` is
    /// the default chain), pushed to `out`. Only [`ChainKey`], the
    /// containers and argument structs override it: a field names a chain
    /// by its type, never by its name.
    fn chain_refs<'a>(&'a self, _out: &mut Vec<Option<&'a str>>) {}

    /// The chains an absent value of this type names: the default chain
    /// for an omitted [`ChainKey`], nothing for other types.
    fn absent_chain_refs(_out: &mut Vec<Option<&str>>) {}

    /// Warnings about this value, read as the argument at `field`: a number
    /// the tool uses moved into its range ([`super::bounded`]). Only the
    /// bounded types, the containers and argument structs override it.
    fn notes(&self, _field: &ArgPath<'_>, _out: &mut Vec<String>) {}
}

/// Why an argument could not be read, and where.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ArgError {
    /// `limit`, `relations[0].kind`; empty until the field is known.
    path: String,
    problem: Problem,
}

#[derive(Debug, Clone, PartialEq)]
enum Problem {
    Missing,
    Invalid(String),
    /// A message that names the argument itself (an enum's unknown name).
    Named(String),
}

impl ArgError {
    /// The value is not what the field takes.
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        ArgError { path: String::new(), problem: Problem::Invalid(message.into()) }
    }

    /// The value is not `expected` (`"a string"`): says what it is instead.
    fn expected(expected: &str, found: &Value) -> Self {
        Self::invalid(format!("expected {expected}, found {}", describe(found)))
    }

    /// The same error, one step further out: inside field `name`.
    fn within(mut self, name: &str) -> Self {
        self.path = match self.path.as_str() {
            "" => name.to_string(),
            p if p.starts_with('[') => format!("{name}{p}"),
            p => format!("{name}.{p}"),
        };
        self
    }
}

impl std::fmt::Display for ArgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.problem {
            Problem::Missing => write!(f, "missing field `{}`", self.path),
            Problem::Invalid(message) if self.path.is_empty() => f.write_str(message),
            Problem::Invalid(message) => write!(f, "invalid `{}`: {message}", self.path),
            Problem::Named(message) => f.write_str(message),
        }
    }
}

/// What a JSON value is, for error messages.
pub(crate) fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) if n.is_f64() => format!("the floating point number {n}"),
        Value::Number(n) => format!("the integer {n}"),
        Value::String(_) => "a string".into(),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// Reads an argument type from a nested JSON object (`graph: {...}`).
pub(crate) fn object_arg<T: ReadArgs>(value: Value) -> Result<T, ArgError> {
    match value {
        // Unknown fields of a nested object are ignored without a warning.
        Value::Object(map) => read_object(map, &mut Vec::new()),
        other => Err(ArgError::expected("an object", &other)),
    }
}

/// The placeholder of an argument type: what it reads from `{}`.
pub(crate) fn object_placeholder<T: ReadArgs>() -> T {
    T::read(&mut Args::new(Map::new()))
}

/// Reads an enum by name with its `parse` (see [`crate::named_enum`]).
pub(crate) fn name_arg<T, E: std::fmt::Display>(value: Value, parse: fn(&str) -> Result<T, E>) -> Result<T, ArgError> {
    match value {
        // "unknown thought_type 'Insigth'; expected one of: ...": the
        // message names the argument and every accepted value already.
        Value::String(s) => parse(&s).map_err(|e| ArgError { path: String::new(), problem: Problem::Named(e.to_string()) }),
        other => Err(ArgError::expected("a name (a string)", &other)),
    }
}

/// Any JSON value, as sent (a claim's `metadata`).
impl FromArg for Value {
    fn placeholder() -> Self {
        Value::Null
    }

    fn from_arg(value: Value) -> Result<Self, ArgError> {
        Ok(value)
    }
}

impl FromArg for String {
    fn placeholder() -> Self {
        String::new()
    }

    fn from_arg(value: Value) -> Result<Self, ArgError> {
        match value {
            Value::String(s) => Ok(s),
            other => Err(ArgError::expected("a string", &other)),
        }
    }
}

impl FromArg for bool {
    fn placeholder() -> Self {
        false
    }

    fn from_arg(value: Value) -> Result<Self, ArgError> {
        match value {
            Value::Bool(b) => Ok(b),
            // As a form or the MCP Inspector sends it.
            Value::String(s) if s.trim().eq_ignore_ascii_case("true") => Ok(true),
            Value::String(s) if s.trim().eq_ignore_ascii_case("false") => Ok(false),
            other => Err(ArgError::expected("true or false", &other)),
        }
    }
}

/// A number sent as a string (`"5"`, `" 0.5 "`, as the MCP Inspector and
/// forms send them) as the number it spells; other values as they are.
fn unquoted(value: Value) -> Value {
    match &value {
        Value::String(s) => s.trim().parse::<serde_json::Number>().map(Value::Number).unwrap_or(value),
        _ => value,
    }
}

/// A JSON float with no fractional part (`10.0`); `None` for integers and
/// every other float.
fn integral(n: &serde_json::Number) -> Option<f64> {
    n.as_f64().filter(|f| n.is_f64() && f.is_finite() && f.fract() == 0.0)
}

impl FromArg for u64 {
    fn placeholder() -> Self {
        0
    }

    fn from_arg(value: Value) -> Result<Self, ArgError> {
        let value = unquoted(value);
        let Value::Number(n) = &value else { return Err(ArgError::expected("a non-negative integer", &value)) };
        // Above u64's range a float saturates: a huge `limit` is then
        // clamped like any other large one.
        match (n.as_u64(), integral(n)) {
            (Some(u), _) => Ok(u),
            (None, Some(f)) if f >= 0.0 => Ok(f as u64),
            _ => Err(ArgError::expected("a non-negative integer", &value)),
        }
    }
}

impl FromArg for i64 {
    fn placeholder() -> Self {
        0
    }

    fn from_arg(value: Value) -> Result<Self, ArgError> {
        let value = unquoted(value);
        let Value::Number(n) = &value else { return Err(ArgError::expected("an integer", &value)) };
        match (n.as_i64(), integral(n)) {
            (Some(i), _) => Ok(i),
            // Below i64's range a float is refused rather than saturated.
            (None, Some(f)) if f > i64::MIN as f64 => Ok(f as i64),
            _ => Err(ArgError::expected("an integer in i64's range", &value)),
        }
    }
}

impl FromArg for u8 {
    fn placeholder() -> Self {
        0
    }

    fn from_arg(value: Value) -> Result<Self, ArgError> {
        let byte = u64::from_arg(value.clone()).ok().and_then(|u| u8::try_from(u).ok());
        byte.ok_or_else(|| ArgError::expected("a byte (an integer from 0 to 255)", &value))
    }
}

impl FromArg for f64 {
    fn placeholder() -> Self {
        0.0
    }

    fn from_arg(value: Value) -> Result<Self, ArgError> {
        let value = unquoted(value);
        match &value {
            Value::Number(n) => n.as_f64().ok_or_else(|| ArgError::expected("a number", &value)),
            other => Err(ArgError::expected("a number", other)),
        }
    }
}

impl FromArg for f32 {
    fn placeholder() -> Self {
        0.0
    }

    fn from_arg(value: Value) -> Result<Self, ArgError> {
        f64::from_arg(value).map(|f| f as f32)
    }
}

impl<T: FromArg> FromArg for Option<T> {
    fn from_arg(value: Value) -> Result<Self, ArgError> {
        match value {
            Value::Null => Ok(None),
            v => T::from_arg(v).map(Some),
        }
    }

    fn missing() -> Result<Self, ArgError> {
        Ok(None)
    }

    fn placeholder() -> Self {
        None
    }

    fn notes(&self, field: &ArgPath<'_>, out: &mut Vec<String>) {
        if let Some(v) = self {
            v.notes(field, out);
        }
    }

    fn chain_refs<'a>(&'a self, out: &mut Vec<Option<&'a str>>) {
        match self {
            Some(v) => v.chain_refs(out),
            None => T::absent_chain_refs(out),
        }
    }
}

impl<T: FromArg> FromArg for Vec<T> {
    fn from_arg(value: Value) -> Result<Self, ArgError> {
        match value {
            Value::Array(items) => items.into_iter().enumerate().map(|(i, v)| T::from_arg(v).map_err(|e| e.within(&format!("[{i}]")))).collect(),
            other => Err(ArgError::expected("an array", &other)),
        }
    }

    fn placeholder() -> Self {
        Vec::new()
    }

    fn notes(&self, field: &ArgPath<'_>, out: &mut Vec<String>) {
        self.iter().enumerate().for_each(|(i, v)| v.notes(&ArgPath::Item(field, i), out));
    }

    fn chain_refs<'a>(&'a self, out: &mut Vec<Option<&'a str>>) {
        self.iter().for_each(|v| v.chain_refs(out));
    }
}

/// Implements [`ReadArgs`] (and [`FromArg`], for a nested object) for an
/// argument struct: `read_args!(Type { field, ... })`, each field read from
/// the key of its own name; `read_args!(Type { field } flatten { nested })`
/// also reads `nested` (an argument type of its own) from the same object.
macro_rules! read_args {
    ($ty:ident { $($field:ident),* $(,)? } $(flatten { $($nested:ident),+ $(,)? })?) => {
        impl $crate::args::ReadArgs for $ty {
            fn read(_args: &mut $crate::args::Args) -> Self {
                $ty {
                    $($field: _args.field(stringify!($field)),)*
                    $($($nested: $crate::args::ReadArgs::read(_args),)+)?
                }
            }
        }

        impl $crate::args::FromArg for $ty {
            fn from_arg(value: ::serde_json::Value) -> ::core::result::Result<Self, $crate::args::ArgError> {
                $crate::args::object_arg(value)
            }

            fn placeholder() -> Self {
                $crate::args::object_placeholder()
            }

            fn chain_refs<'a>(&'a self, _out: &mut ::std::vec::Vec<::core::option::Option<&'a str>>) {
                $($crate::args::FromArg::chain_refs(&self.$field, _out);)*
                $($($crate::args::FromArg::chain_refs(&self.$nested, _out);)+)?
            }

            fn notes(&self, _within: &$crate::args::ArgPath<'_>, _out: &mut ::std::vec::Vec<::std::string::String>) {
                $($crate::args::FromArg::notes(&self.$field, &$crate::args::ArgPath::Field(_within, stringify!($field)), _out);)*
                $($($crate::args::FromArg::notes(&self.$nested, _within, _out);)+)?
            }
        }
    };
}
pub(crate) use read_args;

/// Where an argument sits (`thoughts[2].importance`): built as notes walk
/// the arguments, written out only when a note names it (most calls have
/// none, and make no string for their fields).
#[derive(Debug, Clone, Copy)]
pub(crate) enum ArgPath<'a> {
    /// The arguments object itself.
    Top,
    /// A field of the object at the path.
    Field(&'a ArgPath<'a>, &'a str),
    /// An item of the array at the path.
    Item(&'a ArgPath<'a>, usize),
}

impl std::fmt::Display for ArgPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArgPath::Top => Ok(()),
            ArgPath::Field(ArgPath::Top, field) => f.write_str(field),
            ArgPath::Field(within, field) => write!(f, "{within}.{field}"),
            ArgPath::Item(within, i) => write!(f, "{within}[{i}]"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, PartialEq)]
    struct Inner {
        kind: String,
        weight: Option<f64>,
    }
    read_args!(Inner { kind, weight });

    #[derive(Debug, PartialEq)]
    struct Outer {
        name: String,
        limit: Option<u64>,
        offset: Option<i64>,
        score: f32,
        bytes: Option<Vec<u8>>,
        inner: Option<Vec<Inner>>,
        on: Option<bool>,
    }
    read_args!(Outer { name, limit, offset, score, bytes, inner, on });

    #[derive(Debug, PartialEq)]
    struct Flat {
        tag: Option<String>,
        outer: Outer,
    }
    read_args!(Flat { tag } flatten { outer });

    fn read<T: ReadArgs>(v: Value) -> Result<T, String> {
        let Value::Object(map) = v else { panic!("an object") };
        read_object(map, &mut Vec::new()).map_err(|e| e.to_string())
    }

    #[test]
    fn fields_are_read_by_name_and_missing_or_null_options_are_none() {
        let o: Outer = read(json!({"name": "n", "score": 1, "limit": null, "extra": [1, 2]})).unwrap();
        assert_eq!(o, Outer { name: "n".into(), limit: None, offset: None, score: 1.0, bytes: None, inner: None, on: None });
        let o: Outer = read(json!({"name": "n", "score": 0.5, "offset": -4, "bytes": [0, 255], "inner": [{"kind": "k", "weight": 2}], "on": true})).unwrap();
        assert_eq!((o.offset, o.bytes, o.on), (Some(-4), Some(vec![0, 255]), Some(true)));
        assert_eq!(o.inner, Some(vec![Inner { kind: "k".into(), weight: Some(2.0) }]));
    }

    #[test]
    fn a_flattened_type_reads_the_same_object() {
        let f: Flat = read(json!({"tag": "t", "name": "n", "score": 2})).unwrap();
        assert_eq!((f.tag.as_deref(), f.outer.name.as_str()), (Some("t"), "n"));
    }

    #[test]
    fn errors_name_the_argument_and_its_path() {
        assert_eq!(read::<Outer>(json!({"score": 1})).unwrap_err(), "missing field `name`");
        assert_eq!(read::<Outer>(json!({"name": null, "score": 1})).unwrap_err(), "invalid `name`: expected a string, found null");
        assert_eq!(read::<Outer>(json!({"name": "n", "score": 1, "limit": "ten"})).unwrap_err(), "invalid `limit`: expected a non-negative integer, found a string");
        // Numbers sent as strings (the MCP Inspector sends `limit: "5"`) read as what they spell.
        assert_eq!(read::<Outer>(json!({"name": "n", "score": "1.5", "limit": "10"})).map(|o| (o.limit, o.score)), Ok((Some(10), 1.5)));
        assert_eq!(read::<Outer>(json!({"name": "n", "score": 1, "limit": -1})).unwrap_err(), "invalid `limit`: expected a non-negative integer, found the integer -1");
        assert_eq!(read::<Outer>(json!({"name": "n", "score": 1, "bytes": [1, 256]})).unwrap_err(), "invalid `bytes[1]`: expected a byte (an integer from 0 to 255), found the integer 256");
        assert_eq!(read::<Outer>(json!({"name": "n", "score": 1, "inner": [{"kind": 3}]})).unwrap_err(), "invalid `inner[0].kind`: expected a string, found the integer 3");
        assert_eq!(read::<Outer>(json!({"name": "n", "score": 1, "inner": [{}]})).unwrap_err(), "missing field `inner[0].kind`");
        assert_eq!(read::<Outer>(json!({"name": "n", "score": 1, "on": 1})).unwrap_err(), "invalid `on`: expected true or false, found the integer 1");
        let first = read::<Flat>(json!({"tag": 1, "score": "x"})).unwrap_err();
        assert_eq!(first, "invalid `tag`: expected a string, found the integer 1", "the first error is the one reported");
    }

    #[test]
    fn integral_floats_are_integers() {
        let o: Outer = read(json!({"name": "n", "limit": 10.0, "score": 1.0, "offset": -3.0, "bytes": [7.0]})).unwrap();
        assert_eq!((o.limit, o.score, o.offset, o.bytes), (Some(10), 1.0, Some(-3), Some(vec![7])));
        let o: Outer = read(json!({"name": "n", "limit": 1e30, "score": 0.5})).unwrap();
        assert_eq!(o.limit, Some(u64::MAX), "saturates; the tool clamps it");
        let e = read::<Outer>(json!({"name": "n", "limit": 2.5, "score": 0})).unwrap_err();
        assert!(e.contains("floating point"), "{e}");
        assert!(read::<Outer>(json!({"name": "n", "offset": -1e30, "score": 0})).is_err(), "below i64's range");
    }
}
