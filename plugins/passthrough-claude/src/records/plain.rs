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

use super::fields::{count, flag, int, object, objects, parse, text, texts};
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
        error_status: int(value.get("error_status"), odd),
        error: value.get("error").map(|e| match e {
            Value::String(words) => Said::Words(Cow::Borrowed(words)),
            _ => Said::Other(serde::de::IgnoredAny),
        }),
        no_response: match value.get("no_response") {
            None | Some(Value::Null) => None,
            Some(_) => Some(serde::de::IgnoredAny),
        },
    };
    // The init line's reports and tools are read from the value.
    let odd = *odd;
    super::stream_json::stream_line(&head, odd, super::Whole::Parsed(&value), record, transcript)
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
