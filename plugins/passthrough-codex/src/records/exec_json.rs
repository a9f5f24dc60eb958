//! What `codex exec --json` printed, one event a line, saved to a file and
//! named by path (`tether sessions show PATH`).
//!
//! The events are `ThreadEvent`s, tagged `type` (the 0.171.0 binary's
//! string table, one run at offset 4155176: `thread.started turn.started
//! turn.completed turn.failed item.started item.updated item.completed`,
//! then `todo_list error`; the same shapes as openai/codex
//! `codex-rs/exec/src/exec_events.rs`):
//! - `thread.started`: `{thread_id}`, the session's id (the rollout's
//!   `session_meta` id, the same thread);
//! - `item.started` / `item.updated` / `item.completed`: `{item: {id,
//!   type, …}}`; an item of `type` `mcp_tool_call` is a call of a server's
//!   tool, `{server, tool, arguments, result, error, status}` with `status`
//!   `in_progress`, `completed` or `failed`, `result` `{content,
//!   structured_content}` or null, `error` `{message}` or null. The item's
//!   `id` (`item_N`) is exec's own, the same across its start and its end.
//!   A result with status `failed` is the server's `isError` (the
//!   `toolerror` run: no `isError` field is printed); an `error.message` is
//!   Codex's words, read as a rollout's (`never_ran`, `protocol_error`);
//! - `turn.started`, `turn.completed`, `turn.failed` (`{error: {message}}`)
//!   and `error` (`{message}`): the turn and Codex's own failures (the
//!   model's stream), never an MCP server's.
//!
//! Lines carry no time, no version and no working directory. A server
//! that failed to start prints nothing (measured: a missing command; a
//! `required` one ends the run before `thread.started`, stdout empty).

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;
use tether_core::model::Timestamp;
use tether_core::records::{RecordAnswer, RecordReading, Unparsed, name};
use tether_sdk::records::answer;

use super::{ItemError, Obj, ended, item_end};

/// Event types `codex exec --json` 0.171.0 prints (its string table).
const EVENTS: &[&str] = &[
    "thread.started",
    "turn.started",
    "turn.completed",
    "turn.failed",
    "item.started",
    "item.updated",
    "item.completed",
    "error",
];

/// Item types 0.171.0 prints (`ThreadItemDetails`, snake_case).
const ITEMS: &[&str] = &[
    "agent_message",
    "reasoning",
    "command_execution",
    "file_change",
    "mcp_tool_call",
    "collab_tool_call",
    "web_search",
    "todo_list",
    "error",
];

#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    thread_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    item: Option<Obj<Item<'a>>>,
}

#[derive(Deserialize)]
struct Item<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    server: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    tool: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    status: Option<Cow<'a, str>>,
    /// The server's answer: present or null, never read.
    #[serde(default)]
    result: Option<IgnoredAny>,
    /// Codex's words for a failed call: compared, never kept.
    #[serde(borrow, default)]
    error: Option<Obj<ItemError<'a>>>,
}

/// A line that did not parse (issue 68 §2): cut short or not JSON, or an
/// event this reader knows with a field of the wrong type (`"server":7`),
/// named by its event; never a kind this Tether does not read. Valid JSON
/// of no event it knows stays unknown.
fn unreadable(record: &str, error: &serde_json::Error) -> RecordAnswer {
    let why = Unparsed::of(error);
    if why != Unparsed::WrongType {
        return RecordAnswer::Unparsed { why, kind: None };
    }
    // (Valid JSON: the error was of a field's type, so this parses.)
    let value = serde_json::from_str::<serde_json::Value>(record).ok();
    let kind = value.as_ref().and_then(|v| v.get("type")?.as_str());
    match kind.and_then(|k| EVENTS.iter().find(|e| **e == k)) {
        Some(event) => RecordAnswer::Unparsed {
            why,
            kind: Some((*event).to_owned()),
        },
        None => RecordAnswer::Unknown,
    }
}

/// Reads one line `codex exec --json` printed.
pub(super) fn read(record: &str) -> RecordAnswer {
    let event = match serde_json::from_str::<Obj<Event<'_>>>(record).map(Obj::into_inner) {
        Ok(event) => event,
        Err(error) => return unreadable(record, &error),
    };
    if !EVENTS.contains(&event.kind.as_ref()) {
        return RecordAnswer::Unknown;
    }
    let mut reading = RecordReading::default();
    match (event.kind.as_ref(), &event.item) {
        ("thread.started", _) => {
            reading.session = event.thread_id.as_deref().and_then(name);
        }
        ("item.started" | "item.updated" | "item.completed", Some(item)) => {
            match item.kind.as_deref() {
                Some("mcp_tool_call") => mcp_tool_call(&mut reading, item),
                Some(kind) if ITEMS.contains(&kind) => {}
                _ => return RecordAnswer::Unknown,
            }
        }
        ("item.started" | "item.updated" | "item.completed", None) => {
            return RecordAnswer::Unknown;
        }
        // The turn, and Codex's own failures (the model's stream).
        _ => {}
    }
    answer(reading)
}

/// An `mcp_tool_call` item: a call of a server's tool, and how it ended
/// where it has.
fn mcp_tool_call(reading: &mut RecordReading, item: &Item<'_>) {
    let (Some(server), Some(tool)) = (
        item.server.as_deref().and_then(name),
        item.tool.as_deref().and_then(name),
    ) else {
        return;
    };
    let status = item.status.as_deref();
    // exec prints no `isError`: a result whose call failed is one.
    let result = item.result.as_ref().map(|_| status == Some("failed"));
    let words = item.error.as_ref().and_then(|e| e.message.as_deref());
    // No time: the evidence is undated, as every line is.
    let at = Timestamp(0);
    // `in_progress` (an item's start): the call, its outcome unknown.
    let end = item_end(status, result, words);
    ended(reading, (&server, &tool, item.id.as_deref()), end, at);
}
