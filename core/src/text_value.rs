//! Types that are a plain string on the wire and compare with text
//! ([`crate::Label`], [`crate::ThoughtId`]): one macro gives each its
//! comparisons with `str`, `&str` and `String` (both ways), its
//! `Serialize` and `Deserialize` as a JSON string (read straight from the
//! borrowed text, no `String` first), and its JSON schema (`String`).

/// `text_value!(Type, |v| text)`: `text` is `v`'s text as something that
/// dereferences to `str`; `Type: From<&str>` reads one back.
macro_rules! text_value {
    ($ty:ty, |$v:ident| $text:expr) => {
        impl PartialEq<str> for $ty {
            fn eq(&self, other: &str) -> bool {
                let $v = self;
                *$text == *other
            }
        }

        impl PartialEq<&str> for $ty {
            fn eq(&self, other: &&str) -> bool {
                *self == **other
            }
        }

        impl PartialEq<String> for $ty {
            fn eq(&self, other: &String) -> bool {
                *self == **other
            }
        }

        impl PartialEq<$ty> for str {
            fn eq(&self, other: &$ty) -> bool {
                *other == *self
            }
        }

        impl PartialEq<$ty> for &str {
            fn eq(&self, other: &$ty) -> bool {
                *other == **self
            }
        }

        impl PartialEq<$ty> for String {
            fn eq(&self, other: &$ty) -> bool {
                *other == **self
            }
        }

        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let $v = self;
                s.serialize_str(&$text)
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct Text;
                impl serde::de::Visitor<'_> for Text {
                    type Value = $ty;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str("a string")
                    }
                    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<$ty, E> {
                        Ok(<$ty>::from(s))
                    }
                }
                d.deserialize_str(Text)
            }
        }

        impl schemars::JsonSchema for $ty {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                "String".into()
            }
            fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
                String::json_schema(generator)
            }
            fn inline_schema() -> bool {
                true
            }
        }
    };
}

pub(crate) use text_value;
