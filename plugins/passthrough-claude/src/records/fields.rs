//! A record parsed whole, read field by field by the plain rules: a
//! `null` is a field not given, another type is that field unread (noted
//! in `odd`); and the parse itself, a lone surrogate escape read as
//! U+FFFD. A leaf: the plain path ([`super::plain`]) and the fast path's
//! readings of a value it already parsed share it.

use std::borrow::Cow;

use serde_json::Value;

/// `record` parsed as a value, a lone surrogate escape in it read as
/// U+FFFD ([`lone_surrogates_replaced`]).
pub(super) fn parse(record: &str) -> Result<Value, serde_json::Error> {
    serde_json::from_str::<Value>(record).or_else(|error| match lone_surrogates_replaced(record) {
        Some(fixed) => serde_json::from_str::<Value>(&fixed),
        None => Err(error),
    })
}

/// `record` with each `\u` escape of a lone surrogate (U+D800 to U+DFFF,
/// not a high one followed by a low one) written as `\ufffd`, where it has
/// one: JSON.stringify writes one so (a string Claude Code cut between
/// the two halves of a pair: `"\ud83d"`), which the JSON grammar allows
/// and serde_json refuses. `None` where there is none.
pub(super) fn lone_surrogates_replaced(record: &str) -> Option<String> {
    let bytes = record.as_bytes();
    let hex = |at: usize| -> Option<u16> {
        let digits = record.get(at..at + 4)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u16::from_str_radix(digits, 16).ok()
    };
    let escape = |at: usize| -> Option<u16> {
        (bytes.get(at) == Some(&b'\\') && bytes.get(at + 1) == Some(&b'u'))
            .then(|| hex(at + 2))
            .flatten()
    };
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        let Some(unit) = escape(i) else {
            // Another escape (`\\`, `\"`, …): skipped whole.
            i += 2;
            continue;
        };
        let high = (0xD800..0xDC00).contains(&unit);
        let low = (0xDC00..0xE000).contains(&unit);
        if high && escape(i + 6).is_some_and(|next| (0xDC00..0xE000).contains(&next)) {
            i += 12;
            continue;
        }
        if high || low {
            let out = out.get_or_insert_with(|| String::with_capacity(record.len()));
            out.push_str(&record[copied..i]);
            out.push_str("\\ufffd");
            copied = i + 6;
        }
        i += 6;
    }
    let mut out = out?;
    out.push_str(&record[copied..]);
    Some(out)
}

pub(super) fn text<'v>(v: Option<&'v Value>, odd: &mut bool) -> Option<Cow<'v, str>> {
    match v? {
        Value::String(s) => Some(Cow::Borrowed(s)),
        Value::Null => None,
        _ => {
            *odd = true;
            None
        }
    }
}

pub(super) fn flag(v: Option<&Value>, odd: &mut bool) -> Option<bool> {
    match v? {
        Value::Bool(b) => Some(*b),
        Value::Null => None,
        _ => {
            *odd = true;
            None
        }
    }
}

pub(super) fn int(v: Option<&Value>, odd: &mut bool) -> Option<i32> {
    match v? {
        Value::Null => None,
        n => {
            let read = n.as_i64().and_then(|n| i32::try_from(n).ok());
            *odd |= read.is_none();
            read
        }
    }
}

pub(super) fn texts<'v>(v: Option<&'v Value>, odd: &mut bool) -> Vec<Cow<'v, str>> {
    match v {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| {
                let read = i.as_str().map(Cow::Borrowed);
                *odd |= read.is_none();
                read
            })
            .collect(),
        Some(Value::Null) | None => Vec::new(),
        Some(_) => {
            *odd = true;
            Vec::new()
        }
    }
}

pub(super) fn count(v: Option<&Value>, odd: &mut bool) -> usize {
    match v {
        Some(Value::Array(items)) => items.len(),
        Some(Value::Null) | None => 0,
        Some(_) => {
            *odd = true;
            0
        }
    }
}

pub(super) fn object<'v, T>(
    v: Option<&'v Value>,
    odd: &mut bool,
    read: impl Fn(&'v Value, &mut bool) -> T,
) -> Option<T> {
    match v? {
        o @ Value::Object(_) => Some(read(o, odd)),
        Value::Null => None,
        _ => {
            *odd = true;
            None
        }
    }
}

pub(super) fn objects<'v, T>(
    v: Option<&'v Value>,
    odd: &mut bool,
    read: impl Fn(&'v Value, &mut bool) -> T,
) -> Vec<T> {
    match v {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| match i {
                Value::Object(_) => Some(read(i, odd)),
                _ => {
                    *odd = true;
                    None
                }
            })
            .collect(),
        Some(Value::Null) | None => Vec::new(),
        Some(_) => {
            *odd = true;
            Vec::new()
        }
    }
}
