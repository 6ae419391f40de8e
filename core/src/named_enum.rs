//! Enums that travel as names: thought types, roles, relation kinds, chain
//! formats, directions, statuses, error kinds.
//!
//! [`named_enum!`] declares such an enum once, with each variant's wire name
//! and the other spellings it accepts, and gives it:
//! - `ALL` (every variant, in declaration order) and `NAMES` (every listed
//!   spelling: what error messages and JSON Schemas show),
//! - `as_str` / [`Display`](std::fmt::Display) (the wire name),
//! - [`FromStr`](std::str::FromStr) and `parse`, failing with [`UnknownName`],
//!   which lists every value in `NAMES`,
//! - serde `Serialize` (the wire name) and `Deserialize` (any accepted
//!   spelling, through `FromStr`), and the same reading as a tool argument
//!   ([`crate::args::FromArg`]),
//! - a `JsonSchema` that is a string with an `enum` of `NAMES`, so MCP
//!   clients see the allowed values.
//!
//! ```ignore
//! named_enum! {
//!     /// Which edges a walk follows.
//!     pub enum WalkDirection("direction", IgnoreCase) {
//!         /// Towards what a thought builds on.
//!         Outgoing = "outgoing" (also "out"),
//!         /// ...
//!         Both = "both",
//!     }
//! }
//! ```
//! `Variant = "name" | "alias"` accepts and lists the alias;
//! `Variant = "name" (also "alias")` accepts it without listing it.

/// Error for a name that is none of an enum's accepted spellings; the message
/// lists every accepted value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} '{given}'; expected one of: {}", .expected.join(", "))]
pub struct UnknownName {
    /// What was being parsed (`thought_type`, `role`, `relation kind`, ...).
    pub kind: &'static str,
    /// The rejected input, cut to [`UnknownName::MAX_ECHO_CHARS`] characters.
    pub given: String,
    /// The accepted values.
    pub expected: &'static [&'static str],
}

impl UnknownName {
    /// Longest part of the rejected input the message repeats.
    pub const MAX_ECHO_CHARS: usize = 64;

    /// The error for `given`, which is not one of `expected`.
    pub fn new(kind: &'static str, given: &str, expected: &'static [&'static str]) -> Self {
        UnknownName { kind, given: crate::text::truncate_chars(given, Self::MAX_ECHO_CHARS).to_string(), expected }
    }
}

/// How an input is compared with an enum's spellings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameMatch {
    /// Byte for byte.
    Exact,
    /// ASCII case-insensitive.
    IgnoreCase,
    /// ASCII case-insensitive after trimming surrounding whitespace.
    TrimIgnoreCase,
    /// ASCII case-insensitive, ignoring every character that is not an
    /// ASCII letter or digit (MentisDB 0.10's rule for thought types, roles
    /// and relation kinds: `fact-learned`, `fact learned`, `FACT_LEARNED`
    /// are all `FactLearned`).
    Loose,
}

impl NameMatch {
    /// Whether `input` is the spelling `name` under this rule.
    pub(crate) fn matches(self, name: &str, input: &str) -> bool {
        match self {
            NameMatch::Exact => name == input,
            NameMatch::IgnoreCase => name.eq_ignore_ascii_case(input),
            NameMatch::TrimIgnoreCase => name.eq_ignore_ascii_case(input.trim()),
            NameMatch::Loose => {
                // No allocation: this runs for every variant on every parse.
                fn significant(s: &str) -> impl Iterator<Item = u8> + '_ {
                    s.bytes().filter(u8::is_ascii_alphanumeric).map(|b| b.to_ascii_lowercase())
                }
                name == input || significant(name).eq(significant(input))
            }
        }
    }
}

/// Which variant `input` names, given every variant's spellings (its wire
/// name first): the variant whose wire name it is exactly (what almost every
/// caller sends), else the first with a spelling that `rule` matches. One
/// function for every named enum, reading their tables, rather than a chain
/// of comparisons compiled into each enum's `parse`.
pub(crate) fn spelling_index(input: &str, spellings: &[&[&str]], rule: NameMatch) -> Option<usize> {
    spellings.iter().position(|names| names[0] == input).or_else(|| spellings.iter().position(|names| names.iter().any(|n| rule.matches(n, input))))
}

/// A named enum's wire name, for code generic over named enums.
pub(crate) trait WireName: Copy {
    /// The name the value is written as.
    fn wire_name(self) -> &'static str;
}

/// The JSON Schema of a named enum: a string that is one of `names`.
pub(crate) fn names_schema(names: &[&str]) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "enum": names })
}

/// Declares a named enum; see the [module docs](crate::named_enum).
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident ($kind:literal, $rule:ident) {
            $(
                $(#[$vmeta:meta])*
                $variant:ident = $wire:literal $(| $listed:literal)* $((also $($hidden:literal)|+))?
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// Every value, in declaration order.
            #[allow(dead_code, reason = "generated for every named enum; not every enum lists its values")]
            $vis const ALL: &'static [$name] = &[$($name::$variant),+];

            /// Every listed spelling, as error messages and schemas show them.
            $vis const NAMES: &'static [&'static str] = &[$($wire, $($listed,)*)+];

            /// The wire name.
            $vis fn as_str(self) -> &'static str {
                match self { $($name::$variant => $wire),+ }
            }

            /// Parses any accepted spelling.
            $vis fn parse(s: &str) -> Result<Self, $crate::named_enum::UnknownName> {
                // Every variant's spellings, its wire name first, in `ALL`'s order.
                const SPELLINGS: &[&[&str]] = &[$(&[$wire $(, $listed)* $($(, $hidden)+)?]),+];
                match $crate::named_enum::spelling_index(s, SPELLINGS, $crate::named_enum::NameMatch::$rule) {
                    Some(i) => Ok(Self::ALL[i]),
                    None => Err($crate::named_enum::UnknownName::new($kind, s, Self::NAMES)),
                }
            }
        }

        impl $crate::named_enum::WireName for $name {
            fn wire_name(self) -> &'static str {
                self.as_str()
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::named_enum::UnknownName;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::parse(s)
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct NameVisitor;
                impl ::serde::de::Visitor<'_> for NameVisitor {
                    type Value = $name;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        write!(f, "a {} name, one of: {}", $kind, $name::NAMES.join(", "))
                    }
                    fn visit_str<E: ::serde::de::Error>(self, s: &str) -> Result<$name, E> {
                        $name::parse(s).map_err(E::custom)
                    }
                }
                deserializer.deserialize_str(NameVisitor)
            }
        }

        impl $crate::args::FromArg for $name {
            fn from_arg(value: ::serde_json::Value) -> Result<Self, $crate::args::ArgError> {
                $crate::args::name_arg(value, $name::parse)
            }

            fn placeholder() -> Self {
                $name::ALL[0]
            }
        }

        impl ::schemars::JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut ::schemars::SchemaGenerator) -> ::schemars::Schema {
                $crate::named_enum::names_schema(Self::NAMES)
            }
        }
    };
}
pub(crate) use named_enum;

#[cfg(test)]
mod tests {
    use super::*;

    named_enum! {
        /// A test enum.
        enum Shade("shade", TrimIgnoreCase) {
            /// Light.
            Light = "light" | "pale",
            /// Dark.
            Dark = "dark" (also "dim" | "murky"),
        }
    }

    #[test]
    fn accepts_every_spelling_under_its_rule() {
        for (input, want) in [("light", Shade::Light), (" PALE ", Shade::Light), ("Dark", Shade::Dark), ("dim", Shade::Dark), ("murky", Shade::Dark)] {
            assert_eq!(input.parse::<Shade>().unwrap(), want, "{input}");
        }
        assert_eq!(Shade::NAMES, &["light", "pale", "dark"]);
        assert_eq!(Shade::ALL, &[Shade::Light, Shade::Dark]);
        assert!(NameMatch::Exact.matches("Insight", "Insight") && !NameMatch::Exact.matches("Insight", "insight"));
        assert!(NameMatch::IgnoreCase.matches("head", "HEAD") && !NameMatch::IgnoreCase.matches("head", " head"));
        for input in ["FactLearned", "fact-learned", "fact learned", "fact_learned", "FACTLEARNED", " Fact.Learned "] {
            assert!(NameMatch::Loose.matches("FactLearned", input), "{input}");
        }
        assert!(!NameMatch::Loose.matches("FactLearned", "fact") && !NameMatch::Loose.matches("FactLearned", "") && !NameMatch::Loose.matches("FactLearned", "factlearnedx"));
    }

    #[test]
    fn unknown_names_list_the_listed_spellings_and_cut_the_echo() {
        let e = "grey".parse::<Shade>().unwrap_err();
        assert_eq!(e.to_string(), "unknown shade 'grey'; expected one of: light, pale, dark");
        let long = "x".repeat(500);
        assert_eq!(Shade::parse(&long).unwrap_err().given.len(), UnknownName::MAX_ECHO_CHARS);
    }

    #[test]
    fn serde_and_schema_use_the_names() {
        assert_eq!(serde_json::to_value(Shade::Dark).unwrap(), "dark");
        assert_eq!(serde_json::from_value::<Shade>(serde_json::json!("PALE")).unwrap(), Shade::Light);
        let e = serde_json::from_value::<Shade>(serde_json::json!("grey")).unwrap_err().to_string();
        assert!(e.contains("expected one of: light, pale, dark"), "{e}");
        let schema = serde_json::to_value(schemars::schema_for!(Shade)).unwrap();
        assert_eq!(schema["enum"], serde_json::json!(["light", "pale", "dark"]));
        assert_eq!(Shade::Light.to_string(), "light");
    }
}
