//! Gemini CLI's and Qwen Code's own session records, read as `tether
//! sessions` reads them. Verified on Gemini CLI 0.61.0 and Qwen Code
//! 0.15.10 (the pinned CLIs).
//!
//! Gemini CLI, chats `~/.gemini/tmp/<project>/chats/session-*.jsonl`:
//! - the first record names the session (`sessionId`); the directory the
//!   project (Gemini's short name for it);
//! - a `gemini` message's `toolCalls[]` each give the call's `id`, its
//!   `status` (`success`, `error`, `cancelled`) and a `displayName` of
//!   `TOOL (SERVER MCP Server)` for an MCP tool: the split of server and
//!   tool the name alone (`mcp_SERVER_TOOL`) cannot give;
//! - a call that ended in `error` or `cancelled` says why in the harness's
//!   own words (`resultDisplay`, or a cancelled call's `[Operation
//!   Cancelled] Reason: …`), scanned by [`crate::ended::gemini_ended`] and never kept: a
//!   refusal (policy, hook, approval no one could give, the user's no), a
//!   tool error, or a failure of no named kind.
//!
//! Qwen Code:
//! - chats `~/.qwen/projects/<slug>/chats/<session>.jsonl`: every record
//!   names the session, its `cwd` and Qwen's `version`; a `functionCall`
//!   part (`mcp__SERVER__TOOL`, with its id) is a call, and a
//!   `tool_result` record's `toolCallResult` its outcome (the
//!   `ui_telemetry` copy of the call is the same call, not counted again);
//!   an `errorType` of `execution_denied` is a refusal whose reason its
//!   words give ([`qwen_denied_in`]);
//! - debug logs `~/.qwen/debug/<session>.txt`: "Error during discovery for
//!   server 'X': …" (failed; a missing command said as such), and the
//!   `ToolRegistry created: [...]` list (each MCP tool listed).
//!
//! Both: what a headless run printed (`-p --output-format stream-json`),
//! read by path only ([`crate::stream_json`]).

use crate::ended::{Ended, Words, gemini_mcp_failure, gemini_no_such_tool};
use crate::older::qwen_denied_in;
use crate::shape::{Obj, known_type, unreadable};
use std::borrow::Cow;

use serde::Deserialize;
use tether_core::capability::CapabilityEvent;
use tether_core::model::Timestamp;
use tether_core::records::{
    RecordAnswer, RecordFile, RecordReading, RecordSource, Unparsed, name, project_of, version_of,
};
use tether_core::vocab::ReasonCode;
use tether_sdk::records::{
    answer, call, failed_with, failure, listed, mcp_double, outcome, push, refusal, skill_invoked,
};

use crate::telemetry::Flavor;

mod gemini;
/// The plain path: each record parsed whole, for the same meanings.
pub mod plain;

/// Gemini's chat files.
pub const GEMINI_CHAT: &str = "chat";
/// Gemini's chat files before 0.39: one JSON document each, rewritten whole.
pub const GEMINI_LEGACY_CHAT: &str = "chat_json";
/// Qwen's chat files.
pub const QWEN_CHAT: &str = "chat";
/// Qwen's debug logs.
pub const QWEN_DEBUG: &str = "debug_log";
/// What `-p --output-format stream-json` printed (either CLI), saved to a
/// file: read by path only ([`crate::stream_json`]).
pub const STREAM_JSON: &str = crate::stream_json::ROLE;

/// Where each flavor writes its session records.
pub fn sources(flavor: Flavor) -> Vec<RecordSource> {
    match flavor {
        Flavor::Gemini => vec![
            RecordSource::lines(GEMINI_CHAT, ".gemini", "tmp/*/chats/session-*.jsonl"),
            RecordSource::lines(GEMINI_LEGACY_CHAT, ".gemini", "tmp/*/chats/session-*.json")
                .document(),
            RecordSource::by_path(STREAM_JSON),
        ],
        Flavor::Qwen => vec![
            RecordSource::lines(QWEN_CHAT, ".qwen", "projects/*/chats/*.jsonl"),
            RecordSource::lines(QWEN_DEBUG, ".qwen", "debug/*.txt"),
            RecordSource::by_path(STREAM_JSON),
        ],
    }
}

/// Reads one record.
pub fn read(flavor: Flavor, file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    match (flavor, file.role) {
        (Flavor::Gemini, GEMINI_CHAT) => gemini::chat(file, record),
        (Flavor::Gemini, GEMINI_LEGACY_CHAT) => gemini::legacy_chat(file, record),
        (Flavor::Qwen, QWEN_CHAT) => qwen_chat(record),
        (Flavor::Qwen, QWEN_DEBUG) => qwen_debug(file, record),
        (Flavor::Gemini, STREAM_JSON) => crate::stream_json::gemini(file, record),
        (Flavor::Qwen, STREAM_JSON) => crate::stream_json::qwen(record),
        _ => RecordAnswer::Unknown,
    }
}

pub(crate) fn time(s: Option<&str>) -> Option<Timestamp> {
    s.and_then(Timestamp::parse_rfc3339)
}

#[derive(Deserialize)]
struct QwenLine<'a> {
    #[serde(rename = "sessionId", borrow, default)]
    session: Option<Cow<'a, str>>,
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    cwd: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    version: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    message: Option<Obj<QwenMessage<'a>>>,
    #[serde(rename = "toolCallResult", borrow, default)]
    result: Option<Obj<QwenResult<'a>>>,
    /// A `system` record's payload: before 0.10 its `ui_telemetry` event
    /// is the one record naming an MCP call's server ([`crate::older`]).
    #[serde(rename = "systemPayload", borrow, default)]
    payload: Option<Obj<crate::older::QwenSystemPayload<'a>>>,
}

#[derive(Deserialize)]
struct QwenMessage<'a> {
    #[serde(borrow, default)]
    parts: Option<Vec<Obj<QwenPart<'a>>>>,
}

#[derive(Deserialize)]
struct QwenPart<'a> {
    #[serde(rename = "functionCall", borrow, default)]
    call: Option<Obj<QwenCall<'a>>>,
}

#[derive(Deserialize)]
struct QwenCall<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    /// Read for the `skill` tool only: the skill's name, nothing else.
    #[serde(borrow, default)]
    args: Option<QwenSkillArgs<'a>>,
}

/// A call's arguments as far as Qwen Code's `skill` tool names its skill.
#[derive(Deserialize)]
#[serde(untagged)]
enum QwenSkillArgs<'a> {
    Named(#[serde(borrow)] Obj<QwenSkillName<'a>>),
    Other(serde::de::IgnoredAny),
}

#[derive(Deserialize)]
struct QwenSkillName<'a> {
    #[serde(borrow, default)]
    skill: Option<Cow<'a, str>>,
}

/// The tool Qwen Code's model calls to load a skill.
const QWEN_SKILL: &str = "skill";

#[derive(Deserialize)]
struct QwenResult<'a> {
    #[serde(rename = "callId", borrow, default)]
    call: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    status: Option<Cow<'a, str>>,
    /// Set where a rule, a hook or a missing approval refused the call
    /// (`execution_denied`), or the server answered `isError`
    /// (`mcp_tool_error`).
    #[serde(rename = "errorType", borrow, default)]
    error_type: Option<Cow<'a, str>>,
    /// The harness's words for how it ended: scanned for why a denied
    /// call was refused ([`qwen_denied_in`]), never kept.
    #[serde(rename = "resultDisplay", borrow, default)]
    display_words: Option<Words<'a>>,
    /// 0.24 on: `not_started` where the call never ran.
    #[serde(rename = "executionStatus", borrow, default)]
    execution: Option<Cow<'a, str>>,
}

const QWEN_KNOWN: &[&str] = &["user", "assistant", "system", "tool_result"];

fn qwen_chat(record: &str) -> RecordAnswer {
    let line = match serde_json::from_str::<Obj<QwenLine<'_>>>(record) {
        Ok(line) => line,
        Err(e) => return unreadable(record, &e, |v| known_type(v, QWEN_KNOWN)),
    };
    if !line
        .kind
        .as_deref()
        .is_some_and(|k| QWEN_KNOWN.contains(&k))
    {
        return RecordAnswer::Unknown;
    }
    let mut reading = RecordReading::default();
    reading.session = line.session.as_deref().and_then(name);
    reading.at = time(line.timestamp.as_deref());
    reading.project = line.cwd.as_deref().and_then(project_of);
    reading.version = line.version.as_deref().and_then(version_of);
    let at = reading.at.unwrap_or(Timestamp(0));
    for part in line.message.iter().flat_map(|m| m.parts.iter().flatten()) {
        if let Some(c) = &part.call
            && c.name.as_deref() == Some(QWEN_SKILL)
        {
            // Its outcome is its call's result, by the call's id.
            if let Some(QwenSkillArgs::Named(args)) = &c.args
                && let Some(skill) = args.skill.as_deref().and_then(name)
            {
                push(
                    &mut reading,
                    skill_invoked(CapabilityEvent::skill(&skill), c.id.as_deref(), at),
                );
            }
            continue;
        }
        if let Some(c) = &part.call
            && let Some((server, tool)) = c.name.as_deref().and_then(mcp_double)
        {
            push(
                &mut reading,
                call(&server, &tool, c.id.as_deref(), None, at),
            );
        }
    }
    // `success` or `error`; a call a rule, a hook or a missing approval
    // refused (`execution_denied`) never ran: a refusal, for the reason
    // its words give, or (a hook's words where nothing says it never ran)
    // unknown; a call the user cancelled is unknown.
    if let Some(result) = &line.result
        && let Some(id) = result.call.as_deref()
    {
        let done = match (result.status.as_deref(), result.error_type.as_deref()) {
            (_, Some("execution_denied")) => match qwen_denied_in(
                result.display_words.as_ref().and_then(Words::text),
                result.execution.as_deref() == Some("not_started"),
                line.version.as_deref(),
            ) {
                Ended::Refused(reason) => refusal(id, reason, at),
                _ => None,
            },
            (Some("success"), _) => outcome(id, true, at),
            (Some("error"), kind) => qwen_failed(
                id,
                kind,
                result.display_words.as_ref().and_then(Words::text),
                at,
            ),
            _ => None,
        };
        reading.evidence.extend(done);
    }
    // A `ui_telemetry` record's tool_call event is the same call as its
    // functionCall, without the call's id: not counted again, unless the
    // release named its MCP tools bare (before 0.10), where it is the one
    // record of the call's server.
    if let Some(payload) = &line.payload
        && let Some(call) = crate::older::qwen_bare_call(payload, line.version.as_deref(), at)
    {
        push(&mut reading, call);
    }
    answer(reading)
}

/// How a Qwen Code call of status `error` ended: a tool Qwen does not
/// hold (`tool_not_registered`, or its words for it,
/// [`gemini_no_such_tool`]) never reached a server (`tool_not_available`);
/// the MCP SDK's error in its words (Qwen keeps Gemini CLI's "MCP tool 'T'
/// reported tool error for function call: … with response: …", 0.24.4
/// fixture `qwen-0.24.4-fail.chat.jsonl`) the failure it names
/// ([`gemini_mcp_failure`]); the server's `isError` (`mcp_tool_error`)
/// `tool_error`; any other a failure of no named kind.
fn qwen_failed(
    id: &str,
    kind: Option<&str>,
    words: Option<&str>,
    at: Timestamp,
) -> Option<tether_core::model::Evidence> {
    if kind == Some("tool_not_registered") || words.is_some_and(gemini_no_such_tool) {
        return refusal(id, ReasonCode::ToolNotAvailable, at);
    }
    match (words.and_then(gemini_mcp_failure), kind) {
        (Some(reason), _) => failed_with(id, reason, at),
        (None, Some("mcp_tool_error")) => failed_with(id, ReasonCode::ToolError, at),
        (None, _) => outcome(id, false, at),
    }
}

/// The tool names of `ToolRegistry created: [...] (N tools)`: a JSON
/// array, then (0.15 on) its count in words, which is not JSON. A name of
/// another type is that name unread, never the others lost; a list that
/// does not parse is said (issue 68 §2), never read as no tools.
fn registry_list(list: &str) -> Result<Vec<String>, Unparsed> {
    let mut array = serde_json::Deserializer::from_str(list).into_iter::<Vec<serde_json::Value>>();
    match array.next() {
        Some(Ok(items)) => Ok(items
            .into_iter()
            .filter_map(|v| match v {
                serde_json::Value::String(s) => Some(s),
                _ => None,
            })
            .collect()),
        Some(Err(error)) => Err(Unparsed::of(&error)),
        None => Err(Unparsed::CutShort),
    }
}

fn qwen_debug(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    // `2026-12-01T20:53:32.920Z [LEVEL] message`
    let Some((stamp, rest)) = record.split_once(' ') else {
        return RecordAnswer::Ignored;
    };
    let Some(at) = Timestamp::parse_rfc3339(stamp) else {
        // A continuation line (a stack, a wrapped message).
        return RecordAnswer::Ignored;
    };
    let mut reading = RecordReading::default();
    reading.session = file
        .from_end(0)
        .and_then(|f| f.strip_suffix(".txt"))
        .and_then(name);
    reading.at = Some(at);
    if let Some(after) = rest
        .split_once("Error during discovery for server '")
        .or_else(|| rest.split_once("Error during incremental discovery for server '"))
        .or_else(|| rest.split_once("Error connecting to MCP server '"))
        .map(|x| x.1)
        && let Some((server, why)) = after.split_once("': ")
        && let Some(server) = name(server)
    {
        push(&mut reading, failure(&server, why, at));
    } else if let Some(list) = rest.split_once("ToolRegistry created: ").map(|x| x.1) {
        let tools = match registry_list(list) {
            Ok(tools) => tools,
            Err(why) => {
                let kind = Some("ToolRegistry created".to_owned());
                return RecordAnswer::Unparsed { why, kind };
            }
        };
        for (server, tool) in tools.iter().filter_map(|t| mcp_double(t)) {
            push(&mut reading, listed(&server, &tool, at));
        }
    }
    RecordAnswer::Read(reading)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(segments: &[&str]) -> Vec<String> {
        segments.iter().map(|s| (*s).to_owned()).collect()
    }

    /// GIVEN a chat's `$set` line WHEN it is read THEN its `lastUpdated`
    /// dates the session (its last record time), and nothing else of it is
    /// taken.
    #[test]
    fn a_set_line_dates_the_chat() {
        let segments = owned(&["tmp", "proj", "chats", "session-1.jsonl"]);
        let f = RecordFile {
            role: GEMINI_CHAT,
            segments: &segments,
            session: Some("s1"),
            configured: &[],
        };
        let answer = read(
            Flavor::Gemini,
            &f,
            r#"{"$set":{"lastUpdated":"2026-12-01T20:53:29.000Z","messages":[{"type":"user","content":[{"text":"planted prompt"}]}]}}"#,
        );
        assert_eq!(
            answer,
            RecordAnswer::Dated {
                at: Timestamp::parse_rfc3339("2026-12-01T20:53:29.000Z").expect("time")
            }
        );
        assert_eq!(
            read(Flavor::Gemini, &f, r#"{"$set":{"kind":"main"}}"#),
            RecordAnswer::Ignored
        );
    }

    /// GIVEN Qwen Code's debug line listing its tools, with (0.15 on) or
    /// without its count in words WHEN it is read THEN each MCP tool is
    /// listed under its server.
    #[test]
    fn the_tool_registry_is_read_with_or_without_its_count() {
        for line in [
            r#"2026-12-01T20:53:32.920Z [DEBUG] ToolRegistry created: ["mcp__time__get_current_time","read_file","mcp__time__convert_time"] (3 tools)"#,
            r#"2026-12-01T20:53:32.920Z [DEBUG] ToolRegistry created: ["mcp__time__get_current_time","read_file","mcp__time__convert_time"]"#,
        ] {
            let segments = owned(&["debug", "s1.txt"]);
            let f = RecordFile {
                role: QWEN_DEBUG,
                segments: &segments,
                session: None,
                configured: &[],
            };
            let RecordAnswer::Read(reading) = read(Flavor::Qwen, &f, line) else {
                panic!("not read: {line}");
            };
            let tools: Vec<_> = reading
                .evidence
                .iter()
                .filter_map(|e| Some((e.server.as_deref()?, e.tool.as_deref()?)))
                .collect();
            assert_eq!(
                tools,
                [("time", "get_current_time"), ("time", "convert_time")]
            );
        }
    }
    /// GIVEN Qwen Code's registry line (0.15.10 and 0.24.4 write it as
    /// `JSON.stringify(registry.getAllToolNames())`, then the count) cut
    /// short, or with a name of another type WHEN read THEN the cut line
    /// is said unparsed under its message, never read as no tools, and an
    /// odd name is that name unread, the others kept (issue 68 §2).
    #[test]
    fn a_tool_registry_that_does_not_parse_is_said() {
        let segments = owned(&["debug", "s1.txt"]);
        let f = RecordFile {
            role: QWEN_DEBUG,
            segments: &segments,
            session: None,
            configured: &[],
        };
        let head = "2026-12-01T20:53:32.920Z [DEBUG] ToolRegistry created: ";
        let cut = format!(r#"{head}["mcp__time__get_current_time","read_fi"#);
        assert_eq!(
            read(Flavor::Qwen, &f, &cut),
            RecordAnswer::Unparsed {
                why: Unparsed::CutShort,
                kind: Some("ToolRegistry created".to_owned())
            }
        );
        let odd = format!(r#"{head}[7,"mcp__time__get_current_time"] (2 tools)"#);
        let RecordAnswer::Read(reading) = read(Flavor::Qwen, &f, &odd) else {
            panic!("not read: {odd}");
        };
        let tools: Vec<_> = reading
            .evidence
            .iter()
            .filter_map(|e| Some((e.server.as_deref()?, e.tool.as_deref()?)))
            .collect();
        assert_eq!(tools, [("time", "get_current_time")]);
    }
}
