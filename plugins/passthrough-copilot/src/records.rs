//! Copilot CLI's own session records, read as `tether sessions` reads
//! them. Verified on Copilot CLI 1.0.102 (the pinned CLI).
//!
//! - Session events `~/.copilot/session-state/<session>/events.jsonl`:
//!   `session.start` (its `cwd`, Copilot's version); `tool.execution_start`
//!   (`toolCallId`, `mcpServerName`, `mcpToolName`) and
//!   `tool.execution_complete` (`toolCallId`, `success`). The server
//!   status events Copilot prints with `--output-format json` are not
//!   saved here.
//! - Process logs `~/.copilot/logs/process-*.log`: "Workspace initialized:
//!   <session>" names the session the lines after it belong to; "MCP
//!   server connection failed {"server_name":…}" (failed; a missing
//!   command said as such) and "reporting the server as needing auth
//!   {"server":…}" (needs auth).

use std::borrow::Cow;

use serde::Deserialize;
use tether_core::model::Timestamp;
use tether_core::records::{
    RecordAnswer, RecordFile, RecordReading, RecordSource, name, project_of, version_of,
};
use tether_sdk::records::{answer, call, failure, outcome, push};
use tether_sdk::telemetry::status;

/// Session event files.
pub const EVENTS: &str = "events";
/// Process logs.
pub const PROCESS_LOG: &str = "process_log";

/// Where Copilot CLI writes its session records.
pub fn sources() -> Vec<RecordSource> {
    vec![
        RecordSource::lines(EVENTS, ".copilot", "session-state/*/events.jsonl"),
        RecordSource::lines(PROCESS_LOG, ".copilot", "logs/process-*.log"),
    ]
}

/// Reads one record.
pub fn read(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    match file.role {
        EVENTS => event(file, record),
        PROCESS_LOG => process_log(record),
        _ => RecordAnswer::Unknown,
    }
}

#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    data: Option<Data<'a>>,
}

#[derive(Deserialize)]
struct Data<'a> {
    #[serde(rename = "copilotVersion", borrow, default)]
    version: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    context: Option<Context<'a>>,
    #[serde(rename = "toolCallId", borrow, default)]
    call: Option<Cow<'a, str>>,
    #[serde(rename = "mcpServerName", borrow, default)]
    server: Option<Cow<'a, str>>,
    #[serde(rename = "mcpToolName", borrow, default)]
    tool: Option<Cow<'a, str>>,
    #[serde(default)]
    success: Option<bool>,
}

#[derive(Deserialize)]
struct Context<'a> {
    #[serde(borrow, default)]
    cwd: Option<Cow<'a, str>>,
}

/// Event families a session's events hold.
const FAMILIES: &[&str] = &[
    "session.",
    "user.",
    "assistant.",
    "system.",
    "tool.",
    "hook.",
    "subagent.",
    "skill.",
    "abort",
];

fn event(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    let Ok(event) = serde_json::from_str::<Event<'_>>(record) else {
        return RecordAnswer::Unknown;
    };
    if !FAMILIES.iter().any(|f| event.kind.starts_with(f)) {
        return RecordAnswer::Unknown;
    }
    let at = event
        .timestamp
        .as_deref()
        .and_then(Timestamp::parse_rfc3339);
    // The directory is the session.
    let mut reading = RecordReading::default();
    reading.session = file.from_end(1).and_then(name);
    reading.at = at;
    let at = at.unwrap_or(Timestamp(0));
    let Some(data) = event.data else {
        return answer(reading);
    };
    match event.kind.as_ref() {
        "session.start" => {
            reading.version = data.version.as_deref().and_then(version_of);
            reading.project = data
                .context
                .as_ref()
                .and_then(|c| c.cwd.as_deref())
                .and_then(project_of);
        }
        "tool.execution_start" => {
            if let (Some(server), Some(tool)) = (
                data.server.as_deref().and_then(name),
                data.tool.as_deref().and_then(name),
            ) {
                push(
                    &mut reading,
                    call(&server, &tool, data.call.as_deref(), None, at),
                );
            }
        }
        "tool.execution_complete" => {
            if let (Some(id), Some(ok)) = (data.call.as_deref(), data.success)
                && let Some(done) = outcome(id, ok, at)
            {
                reading.evidence.push(done);
            }
        }
        _ => {}
    }
    answer(reading)
}

#[derive(Deserialize)]
struct Fields<'a> {
    #[serde(borrow, default)]
    server_name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    server: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    raw_error: Option<Cow<'a, str>>,
}

fn process_log(record: &str) -> RecordAnswer {
    // `2026-12-01T20:53:23.309Z [LEVEL] [module] message {json}`
    let Some((stamp, rest)) = record.split_once(' ') else {
        return RecordAnswer::Ignored;
    };
    let Some(at) = Timestamp::parse_rfc3339(stamp) else {
        // A continuation line (a stack, a wrapped message).
        return RecordAnswer::Ignored;
    };
    let mut reading = RecordReading::default();
    reading.at = Some(at);
    if let Some(id) = rest.split_once("Workspace initialized: ").map(|x| x.1) {
        reading.session = id.split_whitespace().next().and_then(name);
        return answer(reading);
    }
    let fields = || {
        rest.find(" {")
            .and_then(|i| serde_json::from_str::<Fields<'_>>(&rest[i + 1..]).ok())
    };
    if rest.contains("MCP server connection failed")
        && let Some(f) = fields()
        && let Some(server) = f.server_name.as_deref().and_then(name)
    {
        push(
            &mut reading,
            failure(&server, f.raw_error.as_deref().unwrap_or_default(), at),
        );
    } else if rest.contains("reporting the server as needing auth")
        && let Some(f) = fields()
        && let Some(server) = f.server.as_deref().and_then(name)
    {
        push(&mut reading, status(&server, "needs-auth", at));
    }
    answer(reading)
}
