//! A message's `content` read in one pass: its items when it is a list
//! of them, nothing otherwise (a prompt's text), without serde buffering
//! every item (and everything in it). Each item is read on its own: one
//! that is not an object is left out, a field of another type than the one
//! read is that field unread (each noted, [`super::lenient`]), and the
//! other items and fields are read: one odd item never empties the rest.
//! A field given twice is read as its last (as a parse into a
//! `serde_json::Value` reads it).

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

/// A message's content: its items, or `None` (not a list).
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

    // A prompt's text (blanked to null) is no items; a number or a
    // boolean is no content any release writes.
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        super::lenient::mark();
        Ok(Content(None))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        super::lenient::mark();
        Ok(Content(None))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        super::lenient::mark();
        Ok(Content(None))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        super::lenient::mark();
        Ok(Content(None))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Content(None))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Content(None))
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Content(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        super::lenient::mark();
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Content(None))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Loose<'de>>()? {
            match item {
                Loose(Some(item)) => items.push(item),
                Loose(None) => super::lenient::mark(),
            }
        }
        Ok(Content(Some(items)))
    }
}

/// One element of the list: an item, or `None` where it is no object.
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

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Loose(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut item = Item::default();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let field = match key.as_ref() {
                "type" => &mut item.kind,
                "id" => &mut item.id,
                "name" => &mut item.name,
                "tool_use_id" => &mut item.tool_use_id,
                "is_error" => {
                    item.is_error = map.next_value::<Flag>()?.0;
                    continue;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *field = map.next_value::<Text<'de>>()?.0;
        }
        Ok(Loose(Some(item)))
    }
}

/// A string field, read leniently ([`super::lenient::text`]).
struct Text<'a>(Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        super::lenient::text(d).map(Text)
    }
}

/// A boolean field, read leniently ([`super::lenient::flag`]).
struct Flag(Option<bool>);

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        super::lenient::flag(d).map(Flag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each item's (name, id, is_error).
    type Read = Vec<(Option<String>, Option<String>, Option<bool>)>;

    fn read(content: &str) -> (Option<Read>, bool) {
        super::super::lenient::take_odd();
        let items = serde_json::from_str::<Content<'_>>(content)
            .expect(content)
            .0
            .map(|items| {
                items
                    .into_iter()
                    .map(|i| {
                        (
                            i.name.map(|n| n.into_owned()),
                            i.id.map(|n| n.into_owned()),
                            i.is_error,
                        )
                    })
                    .collect()
            });
        (items, super::super::lenient::take_odd())
    }

    /// GIVEN a message's content with one odd item (a field of another
    /// type, an item that is no object) WHEN it is read THEN every other
    /// item and field is read, and the oddity is noted.
    #[test]
    fn one_odd_item_empties_nothing_else() {
        let (items, odd) = read(
            r#"[{"type":"tool_use","id":5,"name":"mcp__a__b"},"words",{"type":"tool_use","id":"t\"2","name":"mcp__a__c","input":{"x":[1]}}]"#,
        );
        assert!(odd);
        assert_eq!(
            items,
            Some(vec![
                (Some("mcp__a__b".into()), None, None),
                (Some("mcp__a__c".into()), Some("t\"2".into()), None),
            ])
        );
        let (items, odd) = read(r#"[{"type":"tool_result","tool_use_id":"t1","is_error":"yes"}]"#);
        assert!(odd);
        assert_eq!(items, Some(vec![(None, None, None)]));
        // A prompt's text, null, or no list: no items, nothing odd.
        for plain in [r#""a prompt""#, "null", "[]"] {
            let (items, odd) = read(plain);
            assert!(!odd, "{plain}");
            assert!(items.is_none_or(|i| i.is_empty()), "{plain}");
        }
        // A field given twice is its last, as a parsed value has it.
        let (items, _) = read(r#"[{"type":"tool_use","id":"a","id":"b"}]"#);
        assert_eq!(items, Some(vec![(None, Some("b".into()), None)]));
    }
}
