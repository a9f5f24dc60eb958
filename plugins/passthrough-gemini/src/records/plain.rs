//! The plain path of Gemini CLI's readers (its chats, old and new, and its
//! stream-json): each record parsed whole into a `serde_json::Value`, its
//! fields taken from it (a string where a string is, anything else passed
//! over) and handed to the same meaning as the fast path's borrowed
//! structs ([`super::gemini::chat_line`], [`super::gemini::legacy`],
//! `stream_json::gemini_line`). Slow, and written apart so that a test
//! can hold the fast path to it (`tests/tests/gemini_differential.rs`): on
//! every record the two give the same answer, or the fast path names the
//! record's kind as one it could not read (a field of the wrong type),
//! never an unknown kind.

use serde_json::Value;
use tether_core::records::{RecordAnswer, RecordFile, Unparsed};

use super::gemini::{ChatCall, ChatLine, chat_line, legacy};
use super::{GEMINI_CHAT, GEMINI_LEGACY_CHAT, STREAM_JSON};
use crate::shape::text;
use crate::stream_json::{StreamLine, gemini_line};
use crate::telemetry::Flavor;

/// Reads one record the plain way, for a role that has a plain path
/// (Gemini CLI's); `None` for any other.
pub fn read(flavor: Flavor, file: &RecordFile<'_>, record: &str) -> Option<RecordAnswer> {
    let reader: fn(&RecordFile<'_>, &Value) -> RecordAnswer = match (flavor, file.role) {
        (Flavor::Gemini, GEMINI_CHAT) => |f, v| chat_line(f, &line(v)),
        (Flavor::Gemini, GEMINI_LEGACY_CHAT) => document,
        (Flavor::Gemini, STREAM_JSON) => |f, v| gemini_line(f, &stream(v)),
        _ => return None,
    };
    Some(match serde_json::from_str::<Value>(record) {
        // Only an object is a record; anything else is of no kind known.
        Ok(v) if v.is_object() => reader(file, &v),
        Ok(_) => RecordAnswer::Unknown,
        Err(e) => RecordAnswer::Unparsed {
            why: Unparsed::of(&e),
            kind: None,
        },
    })
}

/// `v`'s value at `key`, where it is there and not `null`.
fn present<'v>(v: &'v Value, key: &str) -> Option<&'v Value> {
    v.get(key).filter(|x| !x.is_null())
}

/// A chat line's fields.
fn line(v: &Value) -> ChatLine<'_> {
    ChatLine {
        session: text(v, "sessionId"),
        kind: text(v, "type"),
        timestamp: text(v, "timestamp"),
        start: text(v, "startTime"),
        set: present(v, "$set").map(|s| text(s, "lastUpdated")),
        rewind: present(v, "$rewindTo").is_some(),
        words: text(v, "content"),
        calls: v
            .get("toolCalls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(call)
            .collect(),
    }
}

/// A `toolCalls` item's fields.
fn call(c: &Value) -> ChatCall<'_> {
    ChatCall {
        id: text(c, "id"),
        status: text(c, "status"),
        display: text(c, "displayName"),
        timestamp: text(c, "timestamp"),
        name: text(c, "name"),
        skill: c.get("args").and_then(|a| text(a, "name")),
        display_words: text(c, "resultDisplay"),
        result_error: result_error(c.get("result")),
    }
}

/// The first `functionResponse.response.error` of a call's `result` parts
/// that is words. The parts are read as the fast path reads them: where
/// any part is not an object, or its `functionResponse` or that one's
/// `response` is neither an object nor `null`, the result is of another
/// shape and none is read.
fn result_error(result: Option<&Value>) -> Option<&str> {
    let parts = result?.as_array()?;
    let shaped = |x: Option<&Value>| x.is_none_or(|x| x.is_null() || x.is_object());
    let all_shaped = parts.iter().all(|p| {
        let response = p.get("functionResponse");
        p.is_object() && shaped(response) && shaped(response.and_then(|r| r.get("response")))
    });
    if !all_shaped {
        return None;
    }
    parts.iter().find_map(|p| {
        p.get("functionResponse")?
            .get("response")?
            .get("error")?
            .as_str()
    })
}

/// A chat document (before 0.39): its metadata, and each message.
fn document(file: &RecordFile<'_>, v: &Value) -> RecordAnswer {
    let head = ChatLine {
        session: text(v, "sessionId"),
        start: text(v, "startTime"),
        set: Some(text(v, "lastUpdated")),
        ..ChatLine::default()
    };
    let messages: Vec<ChatLine<'_>> = v
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(line)
        .collect();
    legacy(file, &head, &messages)
}

/// A stream-json line's fields.
fn stream(v: &Value) -> StreamLine<'_> {
    let error = v.get("error");
    StreamLine {
        kind: text(v, "type"),
        timestamp: text(v, "timestamp"),
        session_id: text(v, "session_id"),
        tool_name: text(v, "tool_name"),
        tool_id: text(v, "tool_id"),
        skill: v.get("parameters").and_then(|p| text(p, "name")),
        status: text(v, "status"),
        output: text(v, "output"),
        error_type: error.and_then(|e| text(e, "type")),
        error_message: error.and_then(|e| text(e, "message")),
    }
}
