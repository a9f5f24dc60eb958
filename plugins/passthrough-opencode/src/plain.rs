//! The plain path of OpenCode's readers: each record taken whole, then read
//! for the same meanings as [`crate::records::read`]'s fast path. Slow, and
//! written apart so a test holds the fast path to it
//! (`tests/tests/differential_opencode.rs`): on every record both give the
//! same answer.
//!
//! - A database row: parsed as a `serde_json::Value` array, each column
//!   checked for its type (the fast path's typed tuples); a row with a
//!   column of the wrong type is named (`Unparsed`, its role), never an
//!   unknown kind.
//! - A log line: split whole into its `key=value` fields (the fast path
//!   scans for one key at a time).
//! - What `opencode run --format json` printed: its reader is a `Value`
//!   path already, so it is its own plain path.

use std::borrow::Cow;

use serde_json::Value;
use tether_core::records::{RecordAnswer, RecordFile, Unparsed};

use crate::records::{
    DB_ERRORS, DB_SESSIONS, DB_TOOLS, LOG, Row, STREAM_JSON, database_row, field_value, log_line,
};

/// Reads one record the plain way.
pub fn read(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    match file.role {
        DB_SESSIONS | DB_TOOLS | DB_ERRORS => row(file, record),
        LOG => log(record),
        STREAM_JSON => crate::stream_json::read(file, record),
        _ => RecordAnswer::Unknown,
    }
}

/// A database row, its columns checked one by one.
fn row(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    let unparsed = |why| RecordAnswer::Unparsed {
        why,
        kind: Some(file.role.to_owned()),
    };
    let columns = match serde_json::from_str::<Value>(record) {
        Ok(Value::Array(columns)) if (4..=6).contains(&columns.len()) => columns,
        Ok(_) => return unparsed(Unparsed::WrongType),
        Err(e) => return unparsed(Unparsed::of(&e)),
    };
    let text = |i: usize| match columns.get(i) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(Unparsed::WrongType),
    };
    let time = match &columns[1] {
        Value::Null => Ok(None),
        v => v.as_i64().map(Some).ok_or(Unparsed::WrongType),
    };
    let taken: Result<Row, Unparsed> =
        (|| Ok((text(0)?, time?, text(2)?, text(3)?, text(4)?, text(5)?)))();
    match taken {
        Ok(row) => database_row(file, row),
        Err(why) => unparsed(why),
    }
}

/// A log line, split whole into its fields; the first of a key is its
/// value.
fn log(record: &str) -> RecordAnswer {
    let mut fields: Vec<(&str, Cow<'_, str>)> = Vec::new();
    let mut rest = record;
    while !rest.trim_start_matches(' ').is_empty() {
        rest = rest.trim_start_matches(' ');
        let end = rest.find([' ', '=']).unwrap_or(rest.len());
        let (key, after) = rest.split_at(end);
        match after.strip_prefix('=') {
            Some(value) => {
                let (value, next) = field_value(value);
                fields.push((key, value));
                rest = next;
            }
            None => rest = after,
        }
    }
    log_line(&|key| {
        fields
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.clone())
    })
}
