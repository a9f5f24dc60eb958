//! Codex's own session records, read as `tether sessions` reads them.
//! Verified on Codex 0.171.0 (the pinned CLI).
//!
//! Rollouts `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`
//! (`$CODEX_HOME/sessions/…`), one record per line, `{timestamp, type,
//! payload}`:
//! - `session_meta`: the session's id, its working directory, Codex's
//!   version (the first line; later lines name no session);
//! - `response_item` of type `function_call`: a tool the model called,
//!   `namespace` `mcp__SERVER`, `name` the tool, with its `call_id`;
//! - `event_msg` `item_completed` whose item is an `McpToolCall`: the same
//!   call (`id`), its `server`, `tool` and `status`, and whether its result
//!   was an error.
//!
//! Rollouts hold no start-up or tool-list records: a server that failed to
//! start, or wanted a login, is not in them (Codex's TUI writes those to
//! `logs_2.sqlite`, not read here).

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;
use tether_core::capability::CapabilityEvent;
use tether_core::model::Timestamp;
use tether_core::records::{
    RecordAnswer, RecordFile, RecordReading, RecordSource, name, project_of, version_of,
};
use tether_sdk::records::{answer, call, mcp_double, push, skill_listed};

/// The role of rollout files.
pub const ROLLOUT: &str = "rollout";

/// Where Codex writes its session records.
pub fn sources() -> Vec<RecordSource> {
    vec![
        RecordSource::lines(ROLLOUT, ".codex", "sessions/*/*/*/rollout-*.jsonl")
            .moved_by("CODEX_HOME", ""),
    ]
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    payload: Option<Payload<'a>>,
}

#[derive(Deserialize)]
struct Payload<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    cwd: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    cli_version: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    namespace: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    call_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    item: Option<Item<'a>>,
    /// `world_state`: only its skill listing's body is read, for the
    /// skills' names.
    #[serde(borrow, default)]
    state: Option<WorldState<'a>>,
}

#[derive(Deserialize)]
struct WorldState<'a> {
    #[serde(borrow, default)]
    host_skills: Option<HostSkills<'a>>,
}

#[derive(Deserialize)]
struct HostSkills<'a> {
    #[serde(borrow, default)]
    body: Option<Cow<'a, str>>,
}

/// Skills named per listing, at most.
const MAX_LISTED: usize = 4096;

/// The skills a listing offers the model: each `- NAME: …` line under its
/// `### Available skills` heading, by name (the descriptions are never
/// kept).
fn listed_skills(body: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut within = false;
    for line in body.lines() {
        if line.starts_with("### ") {
            within = line.trim() == "### Available skills";
            continue;
        }
        if !within || names.len() >= MAX_LISTED {
            continue;
        }
        if let Some(skill) = line
            .strip_prefix("- ")
            .and_then(|l| l.split_once(": ").map(|(n, _)| n))
            .and_then(name)
        {
            names.push(skill);
        }
    }
    names
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
    #[serde(default)]
    result: Option<ToolResult>,
}

#[derive(Deserialize)]
struct ToolResult {
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
    #[serde(rename = "Err", default)]
    err: Option<IgnoredAny>,
}

/// Top-level record types a rollout holds.
const KNOWN: &[&str] = &[
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "world_state",
    "token_usage_record",
    "compacted",
];

/// Reads one record of a rollout.
pub fn read(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    if file.role != ROLLOUT {
        return RecordAnswer::Unknown;
    }
    let Ok(line) = serde_json::from_str::<Line<'_>>(record) else {
        return RecordAnswer::Unknown;
    };
    if !KNOWN.contains(&line.kind.as_ref()) {
        return RecordAnswer::Unknown;
    }
    let at = line.timestamp.as_deref().and_then(Timestamp::parse_rfc3339);
    let mut reading = RecordReading::default();
    reading.at = at;
    let at = at.unwrap_or(Timestamp(0));
    let Some(payload) = line.payload else {
        return RecordAnswer::Ignored;
    };
    match (line.kind.as_ref(), payload.kind.as_deref()) {
        ("session_meta", _) => {
            reading.session = payload.id.as_deref().and_then(name);
            reading.project = payload.cwd.as_deref().and_then(project_of);
            reading.version = payload.cli_version.as_deref().and_then(version_of);
        }
        ("world_state", _) => {
            if let Some(body) = payload
                .state
                .as_ref()
                .and_then(|s| s.host_skills.as_ref())
                .and_then(|h| h.body.as_deref())
            {
                for skill in listed_skills(body) {
                    push(
                        &mut reading,
                        skill_listed(CapabilityEvent::skill(&skill), at),
                    );
                }
            }
        }
        ("response_item", Some("function_call")) => {
            let tool = payload.name.as_deref().unwrap_or_default();
            let named = match payload.namespace.as_deref() {
                Some(ns) => ns
                    .strip_prefix("mcp__")
                    .and_then(|server| Some((name(server)?, name(tool)?))),
                None => mcp_double(tool),
            };
            if let Some((server, tool)) = named {
                push(
                    &mut reading,
                    call(&server, &tool, payload.call_id.as_deref(), None, at),
                );
            }
        }
        ("event_msg", Some("item_completed")) => {
            if let Some(item) = payload.item
                && item.kind.as_deref() == Some("McpToolCall")
                && let (Some(server), Some(tool)) = (
                    item.server.as_deref().and_then(name),
                    item.tool.as_deref().and_then(name),
                )
            {
                let failed = item
                    .result
                    .as_ref()
                    .is_some_and(|r| r.is_error == Some(true) || r.err.is_some())
                    || item.status.as_deref().is_some_and(|s| s != "completed");
                push(
                    &mut reading,
                    call(&server, &tool, item.id.as_deref(), Some(!failed), at),
                );
            }
        }
        _ => {}
    }
    answer(reading)
}
