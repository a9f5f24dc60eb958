//! How a record's shape is taken, for every reader here:
//! - [`Obj`]: a JSON object, and only an object. serde's derived structs
//!   also take an array, field by field in order, so a record with an array
//!   where an object belongs would be read as something it is not; every
//!   struct a reader takes from a record is wrapped in it, and an array
//!   there is a field of the wrong type. (The same as the Codex reader's
//!   `records/obj.rs`; no plugin depends on another.)
//! - [`unreadable`]: a record that did not parse, said as such (cut short,
//!   not JSON, or a known kind with a field of the wrong type), never as a
//!   kind this Tether does not read.

use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use tether_core::records::{RecordAnswer, Unparsed};

/// `T`, taken only from a JSON object.
#[derive(Debug)]
pub(crate) struct Obj<T>(pub(crate) T);

impl<T> std::ops::Deref for Obj<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(ObjVisitor(PhantomData)).map(Obj)
    }
}

struct ObjVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map))
    }
}

/// A record that did not parse: cut short or not JSON; or valid JSON of a
/// kind the reader knows (`kind`, from the record as a plain value: one
/// of the reader's own constants) with a field of the wrong type; valid
/// JSON of no kind it knows is unknown.
pub(crate) fn unreadable(
    record: &str,
    error: &serde_json::Error,
    kind: impl Fn(&Value) -> Option<&'static str>,
) -> RecordAnswer {
    let why = Unparsed::of(error);
    if why != Unparsed::WrongType {
        return RecordAnswer::Unparsed { why, kind: None };
    }
    match serde_json::from_str::<Value>(record)
        .ok()
        .as_ref()
        .and_then(kind)
    {
        Some(kind) => RecordAnswer::Unparsed {
            why,
            kind: Some(kind.to_owned()),
        },
        None => RecordAnswer::Unknown,
    }
}

/// The string at `key` of `v`, where it is one.
pub(crate) fn text<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

/// The one of `known` that `v`'s `type` is.
pub(crate) fn known_type(v: &Value, known: &[&'static str]) -> Option<&'static str> {
    let kind = text(v, "type")?;
    known.iter().find(|k| **k == kind).copied()
}
