//! What `gemini -p … --output-format stream-json` and `qwen -p …
//! --output-format stream-json` printed, saved to a file and read by path
//! (`tether sessions show PATH`). Lines carry names, ids and outcomes;
//! parameters, inputs, outputs and contents are payload, never kept (a
//! failed call's words are scanned by the helpers of [`crate::ended`] and
//! dropped).
//!
//! Gemini CLI 0.61.0 (bundle gemini-3HFX2LNT.js 11630 `init`, 11830-11860
//! `tool_use` and `tool_result`, 11906-11975 `error`): `init` names the
//! session (and the model, which a reading has no place for); `tool_use`
//! a call by the model's name for the tool (`mcp_SERVER_TOOL`) and its
//! `tool_id`; `tool_result` by that id its `status` (`success`, `error`)
//! and, for an error, the words the UI showed (`output`, the chat's
//! `resultDisplay`), read as the chat's are ([`gemini_ended`]).
//!
//! Qwen Code 0.15.10 (cli.js 502778-502806 `buildSystemMessage`,
//! 503545-503640 `emitToolResult`) and 0.24.4 (chunk-KYFJLESB.js 17559):
//! Claude-shaped lines. `system/init` names the session, the working
//! directory and Qwen's version (`qwen_code_version`, where Claude's has
//! `claude_code_version`), and its `mcp_servers` and `tools` are read as
//! the probe reads them ([`stream_json_init_reports`]); an `assistant`
//! line's `tool_use` items are calls (`mcp__SERVER__TOOL`, with the id); a
//! `user` line's `tool_result` items their outcome by id (`is_error`), a
//! refusal or a tool error told by Qwen's own words ([`qwen_denied`]).

use std::borrow::Cow;

use serde::Deserialize;
use tether_core::model::Timestamp;
use tether_core::records::{RecordAnswer, RecordFile, RecordReading, name, project_of, version_of};
use tether_core::vocab::ReasonCode;
use tether_sdk::materialize::stream_json_init_reports;
use tether_sdk::records::{answer, call, failed_with, mcp_double, outcome, push, refusal};
use tether_sdk::telemetry::split_against;

use crate::ended::{Ended, gemini_ended, qwen_denied};

/// Words, or anything else (parts, an object): only words are scanned.
#[derive(Deserialize)]
#[serde(untagged)]
enum Words<'a> {
    Words(#[serde(borrow)] Cow<'a, str>),
    Other(serde::de::IgnoredAny),
}

impl Words<'_> {
    fn text(&self) -> Option<&str> {
        match self {
            Words::Words(w) => Some(w),
            Words::Other(_) => None,
        }
    }
}

#[derive(Deserialize)]
struct GeminiLine<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    session_id: Option<Cow<'a, str>>,
    /// `tool_use`: the model's name for the tool.
    #[serde(borrow, default)]
    tool_name: Option<Cow<'a, str>>,
    /// `tool_use`, `tool_result`: the call's id.
    #[serde(borrow, default)]
    tool_id: Option<Cow<'a, str>>,
    /// `tool_result`: `success` or `error`.
    #[serde(borrow, default)]
    status: Option<Cow<'a, str>>,
    /// `tool_result`: what the UI showed; scanned for an error only, never
    /// kept.
    #[serde(borrow, default)]
    output: Option<Words<'a>>,
    /// `tool_result`: an error's type; `error`: not read.
    #[serde(borrow, default)]
    error: Option<GeminiError<'a>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum GeminiError<'a> {
    Typed {
        #[serde(rename = "type", borrow, default)]
        kind: Option<Cow<'a, str>>,
    },
    Other(serde::de::IgnoredAny),
}

/// The kinds of line Gemini CLI 0.61.0 prints (core output/types.d.ts,
/// `JsonStreamEventType`).
const GEMINI_KNOWN: &[&str] = &[
    "init",
    "message",
    "tool_use",
    "tool_result",
    "error",
    "result",
];

/// `mcp_SERVER_TOOL` as its server and tool: split at a configured
/// server's name where exactly one fits, otherwise where the name has one
/// `_` after `mcp_` (both halves free to hold `_`, so nothing else is
/// certain).
fn gemini_split(full: &str, configured: &[String]) -> Option<(String, String)> {
    let (server, tool) = match split_against(full, "mcp_", "_", configured) {
        Some((server, tool)) => (server, tool.to_owned()),
        None => {
            let rest = full.strip_prefix("mcp_")?;
            let (server, tool) = rest.split_once('_')?;
            if tool.contains('_') {
                return None;
            }
            (server.to_owned(), tool.to_owned())
        }
    };
    Some((name(&server)?, name(&tool)?))
}

/// One line of Gemini CLI's stream-json.
pub(crate) fn gemini(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    let Ok(line) = serde_json::from_str::<GeminiLine<'_>>(record) else {
        return RecordAnswer::Unknown;
    };
    let Some(kind) = line.kind.as_deref().filter(|k| GEMINI_KNOWN.contains(k)) else {
        return RecordAnswer::Unknown;
    };
    let at = line.timestamp.as_deref().and_then(Timestamp::parse_rfc3339);
    let mut reading = RecordReading::default();
    reading.at = at;
    let when = at.unwrap_or(Timestamp(0));
    let id = line.tool_id.as_deref();
    match kind {
        "init" => {
            // Every other line belongs to the session the init named.
            let Some(session) = line.session_id.as_deref().and_then(name) else {
                return RecordAnswer::Unknown;
            };
            reading.session = Some(session);
        }
        "tool_use" => {
            let Some(full) = line.tool_name.as_deref().filter(|n| n.starts_with("mcp_")) else {
                return answer(reading);
            };
            let Some((server, tool)) = gemini_split(full, file.configured) else {
                // A name whose server and tool cannot be told apart.
                return RecordAnswer::not_read("tool_use:mcp_name_unsplit", at);
            };
            push(&mut reading, call(&server, &tool, id, None, when));
        }
        "tool_result" => {
            let Some(id) = id else {
                return answer(reading);
            };
            let ended = match line.status.as_deref() {
                Some("success") => Ended::Succeeded,
                Some("error") => match &line.error {
                    Some(GeminiError::Typed { kind: Some(k) }) if k == "mcp_tool_error" => {
                        Ended::Failed(Some(ReasonCode::ToolError))
                    }
                    _ => gemini_ended(line.output.as_ref().and_then(Words::text)),
                },
                _ => Ended::Unknown,
            };
            reading.evidence.extend(match ended {
                Ended::Succeeded => outcome(id, true, when),
                Ended::Refused(reason) => refusal(id, reason, when),
                Ended::Failed(Some(reason)) => failed_with(id, reason, when),
                Ended::Failed(None) => outcome(id, false, when),
                Ended::Unknown => None,
            });
        }
        // Warnings and errors in words (a hook's block among them): the
        // census says why not read.
        "error" => return RecordAnswer::not_read("error", at),
        _ => {}
    }
    answer(reading)
}

#[derive(Deserialize)]
struct QwenLine<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    subtype: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    session_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    cwd: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    qwen_code_version: Option<Cow<'a, str>>,
    /// Claude Code's init: never Qwen's.
    #[serde(default)]
    claude_code_version: Option<serde::de::IgnoredAny>,
    #[serde(borrow, default)]
    message: Option<QwenMessage<'a>>,
}

#[derive(Deserialize)]
struct QwenMessage<'a> {
    #[serde(borrow, default)]
    content: Option<QwenContent<'a>>,
}

/// A message's content: items, or words (never read).
#[derive(Deserialize)]
#[serde(untagged)]
enum QwenContent<'a> {
    Items(#[serde(borrow)] Vec<QwenItem<'a>>),
    Other(serde::de::IgnoredAny),
}

#[derive(Deserialize)]
struct QwenItem<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    /// `tool_use`: the call's id and name (its `input` is payload).
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    /// `tool_result`: the call's id, whether it failed, and (scanned where
    /// it failed, never kept) Qwen's words for it.
    #[serde(borrow, default)]
    tool_use_id: Option<Cow<'a, str>>,
    #[serde(default)]
    is_error: Option<bool>,
    #[serde(borrow, default)]
    content: Option<Words<'a>>,
}

/// The kinds of line Qwen Code 0.15.10 and 0.24.4 print.
const QWEN_KNOWN: &[&str] = &["system", "assistant", "user", "result", "stream_event"];

/// How a call Qwen says failed (`is_error`) ended, by its words: the
/// server's `isError` ("MCP tool 'X' reported tool error …", 0.15.10 and
/// 0.24.4), a refusal ([`qwen_denied`]), or, in any other words (a hook's
/// own, which may have stopped the call after it ran, or an error of no
/// named kind the line does not tell apart), unknown.
fn qwen_failed(words: Option<&str>) -> Ended {
    let words = words.unwrap_or_default();
    if words.starts_with("MCP tool '") && words.contains("' reported tool error") {
        return Ended::Failed(Some(ReasonCode::ToolError));
    }
    match qwen_denied(Some(words), false) {
        Ended::Refused(reason) => Ended::Refused(reason),
        _ => Ended::Unknown,
    }
}

/// One line of Qwen Code's stream-json.
pub(crate) fn qwen(record: &str) -> RecordAnswer {
    let Ok(line) = serde_json::from_str::<QwenLine<'_>>(record) else {
        return RecordAnswer::Unknown;
    };
    let Some(kind) = line.kind.as_deref().filter(|k| QWEN_KNOWN.contains(k)) else {
        return RecordAnswer::Unknown;
    };
    let mut reading = RecordReading::of(line.session_id.as_deref().and_then(name));
    // Lines carry no time.
    let at = Timestamp(0);
    match (kind, line.subtype.as_deref()) {
        ("system", Some("init")) => {
            if line.claude_code_version.is_some() || line.qwen_code_version.is_none() {
                return RecordAnswer::Unknown;
            }
            reading.project = line.cwd.as_deref().and_then(project_of);
            reading.version = line.qwen_code_version.as_deref().and_then(version_of);
            for evidence in stream_json_init_reports(record, at) {
                push(&mut reading, evidence);
            }
        }
        ("assistant" | "user", _) => {
            let items = match line.message.as_ref().and_then(|m| m.content.as_ref()) {
                Some(QwenContent::Items(items)) => items.as_slice(),
                _ => &[],
            };
            for item in items {
                qwen_item(&mut reading, item, at);
            }
        }
        _ => {}
    }
    answer(reading)
}

/// One content item: an MCP call, or a call's result.
fn qwen_item(reading: &mut RecordReading, item: &QwenItem<'_>, at: Timestamp) {
    match item.kind.as_deref() {
        Some("tool_use") => {
            if let Some((server, tool)) = item.name.as_deref().and_then(mcp_double) {
                push(reading, call(&server, &tool, item.id.as_deref(), None, at));
            }
        }
        Some("tool_result") => {
            let Some(id) = item.tool_use_id.as_deref() else {
                return;
            };
            let ended = match item.is_error {
                Some(false) => Ended::Succeeded,
                Some(true) => qwen_failed(item.content.as_ref().and_then(Words::text)),
                None => Ended::Unknown,
            };
            reading.evidence.extend(match ended {
                Ended::Succeeded => outcome(id, true, at),
                Ended::Refused(reason) => refusal(id, reason, at),
                Ended::Failed(Some(reason)) => failed_with(id, reason, at),
                Ended::Failed(None) => outcome(id, false, at),
                Ended::Unknown => None,
            });
        }
        _ => {}
    }
}
