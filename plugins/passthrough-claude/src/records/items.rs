//! A message's `content` read in one pass: its items when it is a list
//! of them, nothing otherwise (a prompt's text). What
//! `#[serde(untagged)] enum { Items(Vec<Item>), Other(IgnoredAny) }` read,
//! without serde buffering every item (and everything in it) before
//! choosing: the list is all or nothing, as the untagged enum's was (an
//! item that is not an object, a field of another type than the one read,
//! or a field given twice, and the content is read as no items, the rest
//! of the record still read).

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// One item of a message's content: only what the reader takes.
#[derive(Debug, Default)]
pub(crate) struct Item<'a> {
    pub kind: Option<Cow<'a, str>>,
    pub id: Option<Cow<'a, str>>,
    pub name: Option<Cow<'a, str>>,
    pub tool_use_id: Option<Cow<'a, str>>,
    pub is_error: Option<bool>,
}

/// A message's content: its items, or `None` (not a list, or one the
/// untagged enum would not have read).
pub(crate) struct Content<'a>(pub Option<Vec<Item<'a>>>);

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ContentVisitor)
    }
}

/// Every kind of value but a list is skipped.
macro_rules! skip_scalars {
    ($value:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($value)
        }
    };
}

pub(super) use skip_scalars;

struct ContentVisitor;

impl<'de> Visitor<'de> for ContentVisitor {
    type Value = Content<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a message's content")
    }

    skip_scalars!(Content(None));

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Content(None))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        let mut whole = true;
        while let Some(item) = seq.next_element::<Loose<'de>>()? {
            match item {
                Loose(Some(item)) if whole => items.push(item),
                _ => whole = false,
            }
        }
        Ok(Content(whole.then_some(items)))
    }
}

/// One element of the list: an item, or `None` where the derived struct
/// would have failed.
struct Loose<'a>(Option<Item<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for Loose<'a> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ItemVisitor)
    }
}

struct ItemVisitor;

impl<'de> Visitor<'de> for ItemVisitor {
    type Value = Loose<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a content item")
    }

    skip_scalars!(Loose(None));

    // (The derived struct also read a list as its fields in order: no
    // harness writes an item so.)
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Loose(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut item = Item::default();
        let mut whole = true;
        let mut seen = [false; 5];
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let field = match key.as_ref() {
                "type" => 0,
                "id" => 1,
                "name" => 2,
                "tool_use_id" => 3,
                "is_error" => 4,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            whole &= !std::mem::replace(&mut seen[field], true);
            if field == 4 {
                match map.next_value::<Scalar<'de>>()? {
                    Scalar::Null => item.is_error = None,
                    Scalar::Bool(b) => item.is_error = Some(b),
                    _ => whole = false,
                }
                continue;
            }
            let text = match map.next_value::<Scalar<'de>>()? {
                Scalar::Null => None,
                Scalar::Text(text) => Some(text),
                _ => {
                    whole = false;
                    None
                }
            };
            match field {
                0 => item.kind = text,
                1 => item.id = text,
                2 => item.name = text,
                _ => item.tool_use_id = text,
            }
        }
        Ok(Loose(whole.then_some(item)))
    }
}

/// A field's value: null, a string (borrowed where it has no escapes), a
/// boolean, or something else (skipped).
pub(super) enum Scalar<'a> {
    Null,
    Text(Cow<'a, str>),
    Bool(bool),
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for Scalar<'a> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value")
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Self::Value, E> {
        Ok(Scalar::Bool(b))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Scalar::Other)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Scalar::Other)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Scalar::Other)
    }
    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Scalar::Text(Cow::Borrowed(s)))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Scalar::Text(Cow::Owned(s.to_owned())))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the untagged enum read, to compare with.
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Untagged<'a> {
        #[serde(borrow)]
        Items(Vec<Derived<'a>>),
        #[allow(dead_code)]
        Other(IgnoredAny),
    }
    #[derive(Deserialize, Debug, PartialEq)]
    struct Derived<'a> {
        #[serde(rename = "type", borrow, default)]
        kind: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        id: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        name: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        tool_use_id: Option<Cow<'a, str>>,
        #[serde(default)]
        is_error: Option<bool>,
    }

    #[test]
    fn reads_what_the_untagged_enum_read() {
        let cases = [
            r#""a prompt""#,
            r#"{"a": [1]}"#,
            "null",
            "7",
            "[]",
            r#"[{"type": "text", "text": null}, {"type": "tool_use", "id": "t\"1", "name": "mcp__a__b", "input": {"x": [1, {"y": 2}]}}]"#,
            r#"[{"type": "tool_result", "tool_use_id": "t1", "is_error": true, "content": null}]"#,
            r#"[{"type": "tool_result", "tool_use_id": "t1", "is_error": "yes"}]"#,
            r#"[{"type": "tool_use", "id": 5}]"#,
            r#"[{"type": "tool_use", "id": "a", "id": "b"}]"#,
            r#"[{"type": "text"}, "words"]"#,
            r#"[{"type": "text"}, null]"#,
            r#"[{"type": null, "name": {"x": 1}}]"#,
            r#"[{"ty\u0070e": "tool_use", "name": "mcp__a\u005f_b"}]"#,
            r#"[[1, 2]]"#,
        ];
        for case in cases {
            let ours = serde_json::from_str::<Content<'_>>(case).expect(case).0;
            let theirs = match serde_json::from_str::<Untagged<'_>>(case).expect(case) {
                Untagged::Items(items) => Some(items),
                Untagged::Other(_) => None,
            };
            let ours = ours.map(|items| {
                items
                    .into_iter()
                    .map(|i| Derived {
                        kind: i.kind,
                        id: i.id,
                        name: i.name,
                        tool_use_id: i.tool_use_id,
                        is_error: i.is_error,
                    })
                    .collect::<Vec<_>>()
            });
            // A list as an item's fields in order: the derived struct read
            // it, no harness writes it, this reads no items.
            if case == "[[1, 2]]" {
                assert!(ours.is_none());
                continue;
            }
            assert_eq!(ours, theirs, "{case}");
        }
    }
}
