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
//!   tool the name alone (`mcp_SERVER_TOOL`) cannot give.
//!
//! Qwen Code:
//! - chats `~/.qwen/projects/<slug>/chats/<session>.jsonl`: every record
//!   names the session, its `cwd` and Qwen's `version`; a `functionCall`
//!   part (`mcp__SERVER__TOOL`, with its id) is a call, and a
//!   `tool_result` record's `toolCallResult` its outcome (the
//!   `ui_telemetry` copy of the call is the same call, not counted again);
//! - debug logs `~/.qwen/debug/<session>.txt`: "Error during discovery for
//!   server 'X': …" (failed; a missing command said as such), and the
//!   `ToolRegistry created: [...]` list (each MCP tool listed).

use std::borrow::Cow;

use serde::Deserialize;
use tether_core::capability::{CapabilityEvent, outcome_of_ok};
use tether_core::model::Timestamp;
use tether_core::records::{
    RecordAnswer, RecordFile, RecordReading, RecordSource, name, project_of, version_of,
};
use tether_sdk::records::{
    answer, call, failure, listed, mcp_double, outcome, push, skill_invoked,
};

use crate::telemetry::Flavor;

/// Gemini's chat files.
pub const GEMINI_CHAT: &str = "chat";
/// Qwen's chat files.
pub const QWEN_CHAT: &str = "chat";
/// Qwen's debug logs.
pub const QWEN_DEBUG: &str = "debug_log";

/// Where each flavor writes its session records.
pub fn sources(flavor: Flavor) -> Vec<RecordSource> {
    match flavor {
        Flavor::Gemini => vec![RecordSource::lines(
            GEMINI_CHAT,
            ".gemini",
            "tmp/*/chats/session-*.jsonl",
        )],
        Flavor::Qwen => vec![
            RecordSource::lines(QWEN_CHAT, ".qwen", "projects/*/chats/*.jsonl"),
            RecordSource::lines(QWEN_DEBUG, ".qwen", "debug/*.txt"),
        ],
    }
}

/// Reads one record.
pub fn read(flavor: Flavor, file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    match (flavor, file.role) {
        (Flavor::Gemini, GEMINI_CHAT) => gemini_chat(file, record),
        (Flavor::Qwen, QWEN_CHAT) => qwen_chat(record),
        (Flavor::Qwen, QWEN_DEBUG) => qwen_debug(file, record),
        _ => RecordAnswer::Unknown,
    }
}

fn time(s: Option<&str>) -> Option<Timestamp> {
    s.and_then(Timestamp::parse_rfc3339)
}

#[derive(Deserialize)]
struct GeminiLine<'a> {
    #[serde(rename = "sessionId", borrow, default)]
    session: Option<Cow<'a, str>>,
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(rename = "$set", borrow, default)]
    set: Option<GeminiSet<'a>>,
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "startTime", borrow, default)]
    start: Option<Cow<'a, str>>,
    #[serde(rename = "toolCalls", borrow, default)]
    tool_calls: Vec<GeminiCall<'a>>,
}

/// A `$set` line: an update of the chat's metadata, read for its time.
#[derive(Deserialize)]
struct GeminiSet<'a> {
    #[serde(rename = "lastUpdated", borrow, default)]
    last_updated: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct GeminiCall<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    status: Option<Cow<'a, str>>,
    #[serde(rename = "displayName", borrow, default)]
    display: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    /// Read for `activate_skill` only: the skill's name, nothing else.
    #[serde(borrow, default)]
    args: Option<SkillArgs<'a>>,
}

/// A call's arguments as far as a skill's activation names its skill.
#[derive(Deserialize)]
#[serde(untagged)]
enum SkillArgs<'a> {
    Named {
        #[serde(borrow, default)]
        name: Option<Cow<'a, str>>,
    },
    Other(serde::de::IgnoredAny),
}

/// The tool Gemini CLI's model calls to activate a skill.
const ACTIVATE_SKILL: &str = "activate_skill";

fn gemini_chat(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    let Ok(line) = serde_json::from_str::<GeminiLine<'_>>(record) else {
        return RecordAnswer::Unknown;
    };
    let mut reading = RecordReading::default();
    reading.session = line.session.as_deref().and_then(name);
    reading.at = time(line.timestamp.as_deref().or(line.start.as_deref()));
    // `tmp/<project>/chats/…`: Gemini's short name for the project.
    reading.project = file.from_end(2).and_then(project_of);
    if let Some(set) = &line.set {
        // When the chat was last updated: its session's last record time.
        return match time(set.last_updated.as_deref()) {
            Some(at) => RecordAnswer::Dated { at },
            None => RecordAnswer::Ignored,
        };
    }
    if reading.session.is_none() && line.kind.is_none() {
        return RecordAnswer::Unknown;
    }
    for c in &line.tool_calls {
        if c.name.as_deref() == Some(ACTIVATE_SKILL) {
            let skill = match &c.args {
                Some(SkillArgs::Named { name: Some(skill) }) => name(skill),
                _ => None,
            };
            if let Some(skill) = skill {
                let at = time(c.timestamp.as_deref())
                    .or(reading.at)
                    .unwrap_or(Timestamp(0));
                let mut skill = CapabilityEvent::skill(&skill);
                if let Some(status) = c.status.as_deref() {
                    skill = skill.ended(outcome_of_ok(status == "success"), None);
                }
                push(&mut reading, skill_invoked(skill, c.id.as_deref(), at));
            }
            continue;
        }
        // `TOOL (SERVER MCP Server)`.
        let Some((tool, server)) = c
            .display
            .as_deref()
            .and_then(|d| d.strip_suffix(" MCP Server)"))
            .and_then(|d| d.rsplit_once(" ("))
        else {
            continue;
        };
        let (Some(server), Some(tool)) = (name(server), name(tool)) else {
            continue;
        };
        let at = time(c.timestamp.as_deref())
            .or(reading.at)
            .unwrap_or(Timestamp(0));
        let ok = c.status.as_deref().map(|s| s == "success");
        push(&mut reading, call(&server, &tool, c.id.as_deref(), ok, at));
    }
    answer(reading)
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
    message: Option<QwenMessage<'a>>,
    #[serde(rename = "toolCallResult", borrow, default)]
    result: Option<QwenResult<'a>>,
}

#[derive(Deserialize)]
struct QwenMessage<'a> {
    #[serde(borrow, default)]
    parts: Vec<QwenPart<'a>>,
}

#[derive(Deserialize)]
struct QwenPart<'a> {
    #[serde(rename = "functionCall", borrow, default)]
    call: Option<QwenCall<'a>>,
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
    Named {
        #[serde(borrow, default)]
        skill: Option<Cow<'a, str>>,
    },
    Other(serde::de::IgnoredAny),
}

/// The tool Qwen Code's model calls to load a skill.
const QWEN_SKILL: &str = "skill";

#[derive(Deserialize)]
struct QwenResult<'a> {
    #[serde(rename = "callId", borrow, default)]
    call: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    status: Option<Cow<'a, str>>,
}

const QWEN_KNOWN: &[&str] = &["user", "assistant", "system", "tool_result"];

fn qwen_chat(record: &str) -> RecordAnswer {
    let Ok(line) = serde_json::from_str::<QwenLine<'_>>(record) else {
        return RecordAnswer::Unknown;
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
    for part in line.message.iter().flat_map(|m| &m.parts) {
        if let Some(c) = &part.call
            && c.name.as_deref() == Some(QWEN_SKILL)
        {
            // Its outcome is its call's result, by the call's id.
            if let Some(QwenSkillArgs::Named { skill: Some(skill) }) = &c.args
                && let Some(skill) = name(skill)
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
    if let Some(result) = &line.result
        && let (Some(id), Some(status)) = (result.call.as_deref(), result.status.as_deref())
        && let Some(done) = outcome(id, status == "success", at)
    {
        reading.evidence.push(done);
    }
    // A `ui_telemetry` record's tool_call event is the same call as its
    // functionCall, without the call's id: not counted again.
    answer(reading)
}

/// The tool names of `ToolRegistry created: [...] (N tools)`: a JSON
/// array, then (0.15 on) its count in words, which is not JSON.
fn registry_list(list: &str) -> Option<Vec<String>> {
    let mut array = serde_json::Deserializer::from_str(list).into_iter::<Vec<String>>();
    array.next()?.ok()
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
        .map(|x| x.1)
        && let Some((server, why)) = after.split_once("': ")
        && let Some(server) = name(server)
    {
        push(&mut reading, failure(&server, why, at));
    } else if let Some(list) = rest.split_once("ToolRegistry created: ").map(|x| x.1)
        && let Some(tools) = registry_list(list)
    {
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
}
