//! The transcript reader's plain path: the record parsed whole as a
//! `serde_json::Value`, each field taken from it by the same rules as the
//! fast path's (a null is a field not given; another type is that field
//! unread, noted), then the same meanings ([`super::read_line`]); a
//! server's log record ([`mcp_log`]) and a headless run's own lines
//! ([`stream_json`]) the same way. Slow,
//! and the reference the fast path (the Blanker, its taken header, the
//! borrowed lenient parse) is held to: `tests/tests/claude_differential.rs`
//! proves both read every record the same.

use std::borrow::Cow;

use serde_json::Value;
use tether_core::records::{RecordAnswer, RecordFile};

use super::items::{Content, Item};
use super::progress::{Data, MaybeData};
use super::{Attachment, Blocking, Entry, FailedServer, HookInfo, Line, Message, Shape};

/// One transcript record (a `claude -p` run's `assistant` or `user` line
/// too), read the plain way.
pub fn transcript(record: &str) -> RecordAnswer {
    let value = match parse(record) {
        Ok(value) => value,
        Err(error) => return RecordAnswer::unparsed(&error, None),
    };
    let Value::Object(_) = value else {
        return RecordAnswer::Unknown;
    };
    let mut odd = false;
    let line = line(&value, &mut odd);
    // What the fast path's side readings read of the record as written
    // (a `Skill` call's skill, a failed result's words, the SDK's stamp,
    // 2.1.14's Stop hook feedback), each takes here from the value.
    super::read_line(&line, odd, super::Whole::Parsed(&value))
}

/// 2.1.14's Stop hook feedback ([`super::progress::stop_feedback`]) of a
/// record parsed whole: whether it is meta, its id, its content where
/// that is text (each field by the rules above).
pub(super) fn stop_feedback(v: &Value) -> Option<super::progress::Feedback<'_>> {
    let odd = &mut false;
    let words = object(v.get("message"), odd, |m, _| match m.get("content") {
        Some(Value::String(words)) => Some(Cow::Borrowed(words.as_str())),
        _ => None,
    })
    .flatten();
    Some(super::progress::Feedback {
        meta: flag(v.get("isMeta"), odd),
        uuid: text(v.get("uuid"), odd),
        words,
    })
}

/// The `non_execution_kind` of the first `tool_result_meta` stamp for the
/// call `id` ([`super::words::meta_said`]) of a record parsed whole: a
/// stamp that is no object, or a field of another type, is that stamp or
/// field unread.
pub(super) fn meta_kind<'v>(v: &'v Value, id: &str) -> Option<Cow<'v, str>> {
    let odd = &mut false;
    let stamps = objects(v.get("tool_result_meta"), odd, |m, odd| {
        (
            text(m.get("id"), odd),
            text(m.get("non_execution_kind"), odd),
        )
    });
    stamps
        .into_iter()
        .find(|(stamp, _)| stamp.as_deref() == Some(id))?
        .1
}

/// One record of a server's log
/// (`claude-cli-nodejs/<slug>/mcp-logs-<server>/<time>.jsonl`), read the
/// plain way: [`super::mcp_log::log_line`]'s meanings, each field taken by
/// the transcript's rules.
pub fn mcp_log(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    let Some(server) = super::mcp_log::server_of(file) else {
        return RecordAnswer::Unknown;
    };
    let value = match serde_json::from_str::<Value>(record) {
        Ok(value) => value,
        Err(error) => return RecordAnswer::unparsed(&error, None),
    };
    let Value::Object(_) = value else {
        return RecordAnswer::Unknown;
    };
    let mut odd = false;
    let line = super::mcp_log::LogLine {
        debug: text(value.get("debug"), &mut odd),
        error: text(value.get("error"), &mut odd),
        timestamp: text(value.get("timestamp"), &mut odd),
        session: text(value.get("sessionId"), &mut odd),
        cwd: text(value.get("cwd"), &mut odd),
    };
    super::mcp_log::log_line(&server, &line, odd)
}

/// One line a headless run printed (`claude -p --output-format
/// stream-json --verbose`), read the plain way:
/// [`super::stream_json::stream_line`]'s meanings, an `assistant` or
/// `user` line read as a transcript's plain record.
pub fn stream_json(record: &str) -> RecordAnswer {
    use super::stream_json::{Head, Said};
    let value = match parse(record) {
        Ok(value) => value,
        Err(error) => return RecordAnswer::unparsed(&error, None),
    };
    let Value::Object(_) = value else {
        return RecordAnswer::Unknown;
    };
    // (A field of the wrong type is that field unread, noted.)
    let odd = &mut false;
    let t = |key: &str, odd: &mut bool| text(value.get(key), odd);
    let head = Head {
        kind: t("type", odd),
        subtype: t("subtype", odd),
        session_id: t("session_id", odd),
        cwd: t("cwd", odd),
        claude_code_version: t("claude_code_version", odd),
        hook_id: t("hook_id", odd),
        hook_name: t("hook_name", odd),
        hook_event: t("hook_event", odd),
        exit_code: int(value.get("exit_code"), odd),
        outcome: t("outcome", odd),
        tool_name: t("tool_name", odd),
        tool_use_id: t("tool_use_id", odd),
        decision_reason_type: t("decision_reason_type", odd),
        message: value.get("message").map(|m| match m {
            Value::String(words) => Said::Words(Cow::Borrowed(words)),
            _ => Said::Other(serde::de::IgnoredAny),
        }),
        key: t("key", odd),
        is_error: flag(value.get("is_error"), odd),
        result: t("result", odd),
        api_error: t("api_error", odd),
        api_error_status: int(value.get("api_error_status"), odd),
    };
    // The init line's reports and tools are read from the value.
    let odd = *odd;
    super::stream_json::stream_line(&head, odd, super::Whole::Parsed(&value), record, transcript)
}

/// The MCP tools an init line lists (`tools`: `mcp__SERVER__TOOL`), as
/// (server, tool), each a name: a tool of another type is that tool
/// unread.
pub(super) fn init_tools(v: &Value) -> Vec<(String, String)> {
    texts(v.get("tools"), &mut false)
        .iter()
        .filter_map(|t| tether_sdk::records::mcp_double(t))
        .collect()
}

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

fn line<'v>(v: &'v Value, odd: &mut bool) -> Line<'v> {
    let session = match v.get("sessionId") {
        Some(Value::Null) | None => v.get("session_id"),
        given => given,
    };
    Line {
        kind: text(v.get("type"), odd),
        session: text(session, odd),
        timestamp: text(v.get("timestamp"), odd),
        cwd: text(v.get("cwd"), odd),
        version: text(v.get("version"), odd),
        uuid: text(v.get("uuid"), odd),
        message: object(v.get("message"), odd, |m, odd| Message {
            content: content(m.get("content"), odd),
        }),
        attachment: object(v.get("attachment"), odd, attachment),
        tools: texts(v.get("tools"), odd),
        shape: object(v.get("shape"), odd, |s, odd| Shape {
            tools: objects(s.get("tools"), odd, entry),
        }),
        subtype: text(v.get("subtype"), odd),
        hook_infos: objects(v.get("hookInfos"), odd, |h, odd| HookInfo {
            command: text(h.get("command"), odd),
        }),
        hook_errors: count(v.get("hookErrors"), odd),
        prevented: flag(v.get("preventedContinuation"), odd),
        hook_label: text(v.get("hookLabel"), odd),
        tool_use: text(v.get("toolUseID"), odd),
        data: v.get("data").map(|d| MaybeData(data(d, odd))),
    }
}

fn attachment<'v>(a: &'v Value, odd: &mut bool) -> Attachment<'v> {
    Attachment {
        kind: text(a.get("type"), odd),
        added: texts(a.get("addedNames"), odd),
        added_entries: texts(a.get("addedEntries"), odd),
        entries: objects(a.get("entries"), odd, entry),
        failed: objects(a.get("failedMcpServers"), odd, |f, odd| FailedServer {
            name: text(f.get("name"), odd),
            code: text(f.get("errorCode"), odd),
            error: text(f.get("error"), odd),
        }),
        pending: texts(a.get("pendingMcpServers"), odd),
        needs_auth: texts(a.get("needsAuthMcpServers"), odd),
        names: texts(a.get("names"), odd),
        hook_name: text(a.get("hookName"), odd),
        hook_event: text(a.get("hookEvent"), odd),
        command: text(a.get("command"), odd),
        exit_code: int(a.get("exitCode"), odd),
        blocking: object(a.get("blockingError"), odd, |b, odd| Blocking {
            command: text(b.get("command"), odd),
        }),
        timed_out: flag(a.get("timedOut"), odd),
        tool_use: text(a.get("toolUseID"), odd),
    }
}

fn entry<'v>(e: &'v Value, odd: &mut bool) -> Entry<'v> {
    Entry {
        name: text(e.get("name"), odd),
    }
}

/// A message's content: items where it is a list (each object an item,
/// anything else noted), none for a prompt's text or null.
fn content<'v>(v: Option<&'v Value>, odd: &mut bool) -> Option<Content<'v>> {
    match v? {
        Value::Array(items) => {
            let mut read = Vec::new();
            for item in items {
                match item {
                    Value::Object(_) => read.push(Item {
                        kind: text(item.get("type"), odd),
                        id: text(item.get("id"), odd),
                        name: text(item.get("name"), odd),
                        tool_use_id: text(item.get("tool_use_id"), odd),
                        is_error: flag(item.get("is_error"), odd),
                    }),
                    _ => *odd = true,
                }
            }
            Some(Content(Some(read)))
        }
        Value::String(_) | Value::Null => Some(Content(None)),
        _ => {
            *odd = true;
            Some(Content(None))
        }
    }
}

/// A progress record's `data`: an object's fields (each a string, or
/// noted), nothing for anything else.
fn data<'v>(v: &'v Value, odd: &mut bool) -> Option<Data<'v>> {
    let Value::Object(_) = v else {
        return None;
    };
    Some(Data {
        kind: text(v.get("type"), odd),
        hook_event: text(v.get("hookEvent"), odd),
        hook_name: text(v.get("hookName"), odd),
        command: text(v.get("command"), odd),
        status: text(v.get("status"), odd),
        server_name: text(v.get("serverName"), odd),
        tool_name: text(v.get("toolName"), odd),
    })
}

fn text<'v>(v: Option<&'v Value>, odd: &mut bool) -> Option<Cow<'v, str>> {
    match v? {
        Value::String(s) => Some(Cow::Borrowed(s)),
        Value::Null => None,
        _ => {
            *odd = true;
            None
        }
    }
}

fn flag(v: Option<&Value>, odd: &mut bool) -> Option<bool> {
    match v? {
        Value::Bool(b) => Some(*b),
        Value::Null => None,
        _ => {
            *odd = true;
            None
        }
    }
}

fn int(v: Option<&Value>, odd: &mut bool) -> Option<i32> {
    match v? {
        Value::Null => None,
        n => {
            let read = n.as_i64().and_then(|n| i32::try_from(n).ok());
            *odd |= read.is_none();
            read
        }
    }
}

fn texts<'v>(v: Option<&'v Value>, odd: &mut bool) -> Vec<Cow<'v, str>> {
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

fn count(v: Option<&Value>, odd: &mut bool) -> usize {
    match v {
        Some(Value::Array(items)) => items.len(),
        Some(Value::Null) | None => 0,
        Some(_) => {
            *odd = true;
            0
        }
    }
}

fn object<'v, T>(
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

fn objects<'v, T>(
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
