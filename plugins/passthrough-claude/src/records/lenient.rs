//! A transcript record's fields read whatever their values are: a field of
//! another type than the one read is that field unread, never the record
//! lost (a derived struct fails whole on one `"tools":"x"`, and the record
//! read as a kind this Tether does not know). `null` is a field not given.
//! A field of the wrong type is noted ([`take_odd`]): a record that then
//! gives nothing is a known kind in a shape its reader cannot read, and
//! says so. Each reads in the parse's one pass (nothing is buffered).

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

thread_local! {
    /// Whether a field of the wrong type was met since [`take_odd`].
    static ODD: Cell<bool> = const { Cell::new(false) };
}

/// Notes a field of the wrong type.
pub(super) fn mark() {
    ODD.set(true);
}

/// Whether a field of the wrong type was met since the last call.
pub(super) fn take_odd() -> bool {
    ODD.replace(false)
}

/// A field's value: null, a string (borrowed where it has no escapes), a
/// boolean, or something else (skipped).
pub(super) enum Scalar<'a> {
    Null,
    Text(Cow<'a, str>),
    Bool(bool),
    /// A whole number (within `i64`).
    Int(i64),
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
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Self::Value, E> {
        Ok(Scalar::Int(n))
    }
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Self::Value, E> {
        Ok(i64::try_from(n).map_or(Scalar::Other, Scalar::Int))
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

/// A string, or `None` (null, or another type: noted).
pub(super) fn text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Cow<'de, str>>, D::Error> {
    Ok(match Scalar::deserialize(d)? {
        Scalar::Text(text) => Some(text),
        Scalar::Null => None,
        _ => {
            mark();
            None
        }
    })
}

/// A boolean, or `None`.
pub(super) fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    Ok(match Scalar::deserialize(d)? {
        Scalar::Bool(b) => Some(b),
        Scalar::Null => None,
        _ => {
            mark();
            None
        }
    })
}

/// A whole number that fits an `i32`, or `None`.
pub(super) fn int<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i32>, D::Error> {
    Ok(match Scalar::deserialize(d)? {
        Scalar::Int(n) => match i32::try_from(n) {
            Ok(n) => Some(n),
            Err(_) => {
                mark();
                None
            }
        },
        Scalar::Null => None,
        _ => {
            mark();
            None
        }
    })
}

/// A list's strings (an element of another type noted and left out); a
/// value that is no list is none.
pub(super) fn texts<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Cow<'de, str>>, D::Error> {
    d.deserialize_any(ListVisitor(PhantomData::<Text<'de>>))
}

/// How many elements a list has (a value that is no list: none).
pub(super) fn count<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    Ok(d.deserialize_any(ListVisitor(PhantomData::<Any>))?.len())
}

/// An object read as `T`, or `None` (null, or another type: noted).
pub(super) fn object<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Object::<T>::deserialize(d)?.0)
}

/// A list's objects, each read as `T` (an element of another type noted
/// and left out); a value that is no list is none.
pub(super) fn objects<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    d.deserialize_any(ListVisitor(PhantomData::<Object<T>>))
}

/// One element of a list, or `None` where it is not of the type read.
trait Element<'de>: Deserialize<'de> {
    type Out;
    fn get(self) -> Option<Self::Out>;
}

struct Text<'a>(Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        text(d).map(Text)
    }
}

impl<'de> Element<'de> for Text<'de> {
    type Out = Cow<'de, str>;
    fn get(self) -> Option<Self::Out> {
        self.0
    }
}

struct Any;

impl<'de> Deserialize<'de> for Any {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(d).map(|_| Any)
    }
}

impl<'de> Element<'de> for Any {
    type Out = ();
    fn get(self) -> Option<()> {
        Some(())
    }
}

struct Object<T>(Option<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ObjectVisitor(PhantomData))
    }
}

impl<'de, T: Deserialize<'de>> Element<'de> for Object<T> {
    type Out = T;
    fn get(self) -> Option<T> {
        self.0
    }
}

/// Every kind of value but `$kind` is skipped and noted (null is not).
macro_rules! noted_scalars {
    ($value:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            mark();
            Ok($value)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            mark();
            Ok($value)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            mark();
            Ok($value)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            mark();
            Ok($value)
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            mark();
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

struct ObjectVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
    type Value = Object<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    noted_scalars!(Object(None));

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        mark();
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Object(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map)).map(|t| Object(Some(t)))
    }
}

struct ListVisitor<L>(PhantomData<L>);

impl<'de, L: Element<'de>> Visitor<'de> for ListVisitor<L> {
    type Value = Vec<L::Out>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list")
    }

    noted_scalars!(Vec::new());

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        mark();
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Vec::new())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(element) = seq.next_element::<L>()? {
            match element.get() {
                Some(element) => out.push(element),
                // (A text element's null is noted: a list of names holds none.)
                None => mark(),
            }
        }
        Ok(out)
    }
}
