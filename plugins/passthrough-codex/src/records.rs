//! Codex's own session records, read as `tether sessions` reads them.
//! Verified on Codex 0.118.0, 0.142.5 and 0.171.0 (the pinned CLI), with
//! rollouts the released binaries wrote; older shapes read too: six
//! third-party Codex Desktop 0.104.0-alpha.1 rollouts (`reasoning` with
//! `content: null`, MCP calls named `mcp__SERVER__TOOL`, no end events),
//! and the legacy lines of Codex's first Rust releases ([`legacy`]), from
//! Codex's code of that time, whose MCP tools were named
//! `SERVER__OAI_CODEX_MCP__TOOL`, then `SERVER__TOOL` ([`qualified`]).
//!
//! Rollouts `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`
//! (`$CODEX_HOME/sessions/…`), one record per line, `{timestamp, type,
//! payload}`:
//! - `session_meta`: the session's id, its working directory, Codex's
//!   version (the first line; later lines name no session);
//! - `response_item` of type `function_call`: a tool the model called,
//!   `namespace` `mcp__SERVER`, `name` the tool (0.142 on), or one name
//!   `mcp__SERVER__TOOL` (0.118), with its `call_id`;
//! - `event_msg` `mcp_tool_call_end` (0.118's TUI, 0.142, and 0.171 in its
//!   legacy history mode): the same call, its `invocation`'s server and
//!   tool, and its `result`: `{"Ok": …}` (failed where `isError`:
//!   `tool_error`) or `{"Err": words}` (failed: `protocol_error` where the
//!   words say a JSON-RPC error; unless Codex's own words say it never
//!   reached the server: then it is refused, `approval_required` where it
//!   needed an approval no one could give, `permission_denied` where a
//!   person said no, `denied_by_policy` where the app's configuration
//!   blocks it);
//! - `event_msg` `item_completed` whose item is an `McpToolCall` (0.171's
//!   default): the same call (`id`), its `server`, `tool` and `status`,
//!   whether its result was an error, and its `error.message` read as an
//!   `Err`'s words;
//! - `response_item` `tool_search_output` (0.142 on): the deferred tools
//!   a search sent the model, per `mcp__SERVER` namespace;
//! - the skills offered to the model, each `- NAME: …` line under `###
//!   Available skills`: in a developer `message` (0.118, 0.142, 0.171) and
//!   in `world_state` (0.171), by name only.
//!
//! `codex exec` 0.118 writes no `mcp_tool_call_end`: its calls are counted,
//! their outcome unknown (never failed).
//!
//! What `codex exec --json` printed, saved and named by path (role
//! `exec_json`, `records/exec_json.rs`): its thread's id and its
//! `mcp_tool_call` items, whose ends are read by the same words
//! ([`never_ran`], [`protocol_error`], one `item_end`) as a rollout's.
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
    RecordAnswer, RecordFile, RecordReading, RecordSource, Unparsed, name, project_of, version_of,
};
use tether_core::vocab::ReasonCode;
use tether_sdk::records::{
    answer, call, deferred, failed_with, mcp_double, outcome, push, refusal, refused, skill_listed,
    visible,
};
use tether_sdk::telemetry::split_against;

mod exec_json;
mod obj;
/// The plain path: each record parsed whole, for the same meanings.
pub mod plain;
mod resources;
mod words;

use obj::Obj;
pub use resources::{CODEX_ITSELF, RESOURCE_TOOLS, is_resource_tool};
use words::OutputWords;
pub use words::{Said, never_ran, protocol_error, said};

/// The role of rollout files.
pub const ROLLOUT: &str = "rollout";

/// The role of what `codex exec --json` printed, saved to a file (read by
/// path only).
pub const EXEC_JSON: &str = "exec_json";

/// Where Codex writes its session records, and what a headless run
/// prints (by path only).
pub fn sources() -> Vec<RecordSource> {
    vec![
        RecordSource::lines(ROLLOUT, ".codex", "sessions/*/*/*/rollout-*.jsonl")
            .moved_by("CODEX_HOME", ""),
        RecordSource::by_path(EXEC_JSON),
    ]
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    payload: Option<Obj<Payload<'a>>>,
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
    /// A legacy rollout's first line: when the session began.
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    /// A legacy rollout's state line (`{"record_type":"state"}`).
    #[serde(borrow, default)]
    record_type: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    namespace: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    call_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    item: Option<Obj<Item<'a>>>,
    /// `mcp_tool_call_end` (0.118 to 0.142, and 0.171's legacy history
    /// mode): which server's tool was called.
    #[serde(borrow, default)]
    invocation: Option<Obj<Invocation<'a>>>,
    /// `mcp_tool_call_end`: `{"Ok": CallToolResult}` or `{"Err": words}`.
    #[serde(borrow, default)]
    result: Option<Obj<EndResult<'a>>>,
    /// `function_call_output`: its text, kept only where it may be
    /// Codex's own words for how the call ended.
    #[serde(borrow, default)]
    output: Option<OutputWords<'a>>,
    /// `tool_search_output`: the namespaces a search gave the model.
    #[serde(default)]
    tools: Option<Vec<Obj<SearchNamespace>>>,
    /// A developer `message`'s content: its text is read for the skill
    /// listing only (0.118 and 0.142 list skills there), for names.
    #[serde(borrow, default)]
    role: Option<Cow<'a, str>>,
    /// A `message`'s content is a list; a `reasoning` item's is a list or
    /// `null` (Codex's own `ResponseItem::Reasoning { content:
    /// Option<Vec<ReasoningItemContent>> }`, openai/codex
    /// `codex-rs/protocol/src/models.rs`; 0.104.0-alpha.1 writes `null`).
    #[serde(borrow, default)]
    content: Option<Vec<Obj<ContentItem<'a>>>>,
    /// `world_state`: only its skill listing's body is read, for the
    /// skills' names.
    #[serde(borrow, default)]
    state: Option<Obj<WorldState<'a>>>,
}

#[derive(Deserialize)]
struct Invocation<'a> {
    #[serde(borrow, default)]
    server: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    tool: Option<Cow<'a, str>>,
}

/// How an `mcp_tool_call_end` ended: the server's answer (`Ok`, an error
/// where `isError`), or Codex's own words (`Err`), read for a refusal only.
#[derive(Deserialize)]
struct EndResult<'a> {
    #[serde(rename = "Ok", default)]
    ok: Option<Obj<ToolResult>>,
    #[serde(rename = "Err", borrow, default)]
    err: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct SearchNamespace {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    tools: Option<Vec<Obj<SearchTool>>>,
}

#[derive(Deserialize)]
struct SearchTool {
    #[serde(default)]
    name: Option<String>,
}

#[derive(Deserialize)]
struct ContentItem<'a> {
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct WorldState<'a> {
    #[serde(borrow, default)]
    host_skills: Option<Obj<HostSkills<'a>>>,
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
    result: Option<Obj<ToolResult>>,
    /// A failed call's error: its message is read for a refusal only.
    #[serde(borrow, default)]
    error: Option<Obj<ItemError<'a>>>,
}

#[derive(Deserialize)]
struct ItemError<'a> {
    #[serde(borrow, default)]
    message: Option<Cow<'a, str>>,
}

/// One call's end: refused before its server (with why), or its outcome
/// (`tool_error` where the server said `isError`, `protocol_error` where
/// it answered with a JSON-RPC error).
fn ended(
    reading: &mut RecordReading,
    (server, tool, id): (&str, &str, Option<&str>),
    end: End<'_>,
    at: Timestamp,
) {
    let evidence = match end {
        End::Error(words) => match said(words) {
            Some(Said::NeverRan(reason)) => refused(server, tool, id, reason, at),
            Some(Said::Failed(reason)) => {
                let mut failed = call(server, tool, id, Some(false), at);
                failed.reason_code = reason;
                failed
            }
            // Words that are not Codex's: failed, nothing more said.
            None => call(server, tool, id, Some(false), at),
        },
        End::Result { is_error: true } => {
            let mut failed = call(server, tool, id, Some(false), at);
            failed.reason_code = Some(ReasonCode::ToolError);
            failed
        }
        End::Result { is_error: false } => call(server, tool, id, Some(true), at),
        End::Failed => call(server, tool, id, Some(false), at),
        End::Unknown => call(server, tool, id, None, at),
    };
    push(reading, evidence);
}

/// How a call ended, as a record says.
enum End<'a> {
    /// Codex's words (an `Err`, an item's `error.message`).
    Error(&'a str),
    /// The server's result.
    Result { is_error: bool },
    /// Failed, nothing more said.
    Failed,
    /// No outcome (in progress, or a word this reader does not know).
    Unknown,
}

#[derive(Deserialize)]
struct ToolResult {
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
    #[serde(rename = "Err", default)]
    err: Option<IgnoredAny>,
    /// Its content's text items, read only where one is Codex's own
    /// resource listing (the servers it names; anything else unkept).
    #[serde(default)]
    content: Option<Vec<Obj<ResultItem>>>,
}

#[derive(Deserialize)]
struct ResultItem {
    #[serde(default)]
    text: Option<resources::ListingText>,
}

impl ToolResult {
    /// The servers Codex's resource listing in it names, where it holds one.
    fn listing(&self) -> Option<&[(String, u32)]> {
        self.content
            .iter()
            .flatten()
            .find_map(|i| i.text.as_ref().and_then(|t| t.0.as_deref()))
    }
}

/// `event_msg` kinds that bear on MCP calls (approvals, hooks,
/// elicitations, dynamic tools) which no release persists by default: a
/// rollout that holds one counts it, unread.
const NOT_READ_EVENTS: &[&str] = &[
    "guardian_assessment",
    "exec_approval_request",
    "request_permissions",
    "elicitation_request",
    "elicitation_abandoned",
    "request_user_input",
    "hook_started",
    "hook_completed",
    "dynamic_tool_call_request",
    "dynamic_tool_call_response",
];

/// The reader's own name for `kind`, where it is one of [`NOT_READ_EVENTS`].
fn not_read_event(kind: &str) -> Option<&'static str> {
    NOT_READ_EVENTS.iter().find(|k| **k == kind).copied()
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
    "inter_agent_communication",
    "dynamic_tools_updated",
];

/// Reads one record of one of [`sources`]' files.
pub fn read(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    match file.role {
        ROLLOUT => rollout(record, file.configured),
        EXEC_JSON => exec_json::read(record),
        _ => RecordAnswer::Unknown,
    }
}

/// Reads one record of a rollout (`configured`: the server names today's
/// configuration gives Codex, to split an older release's tool names).
fn rollout(record: &str, configured: &[String]) -> RecordAnswer {
    let line = match serde_json::from_str::<Obj<Line<'_>>>(record).map(Obj::into_inner) {
        Ok(line) => line,
        Err(error) => {
            return match legacy(record, configured) {
                RecordAnswer::Unknown => unreadable(record, &error),
                read => read,
            };
        }
    };
    if !KNOWN.contains(&line.kind.as_ref()) {
        return legacy(record, configured);
    }
    let at = line.timestamp.as_deref().and_then(Timestamp::parse_rfc3339);
    let mut reading = RecordReading::default();
    reading.at = at;
    let at = at.unwrap_or(Timestamp(0));
    let Some(payload) = line.payload else {
        return RecordAnswer::Ignored;
    };
    match (line.kind.as_ref(), payload.kind.as_deref()) {
        ("session_meta", _) => session_meta(&mut reading, &payload),
        ("world_state", _) => world_state(&mut reading, &payload, at),
        ("response_item", Some("function_call")) => {
            function_call(&mut reading, &payload, configured, at);
        }
        ("event_msg", Some("mcp_tool_call_end")) => mcp_tool_call_end(&mut reading, &payload, at),
        ("response_item", Some("function_call_output")) => {
            function_call_output(&mut reading, &payload, at);
        }
        ("response_item", Some("tool_search_output")) => {
            tool_search_output(&mut reading, &payload, at)
        }
        ("response_item", Some("message")) if payload.role.as_deref() == Some("developer") => {
            developer_message(&mut reading, &payload, at);
        }
        // Approvals, hooks, elicitations and dynamic tools: these bear on
        // MCP calls, and no release persists them by default; a rollout
        // that holds them is counted, not read.
        ("event_msg", Some(kind)) if let Some(kind) = not_read_event(kind) => {
            return RecordAnswer::not_read(kind, reading.at);
        }
        ("event_msg", Some("item_completed")) => {
            if let Some(item) = &payload.item {
                item_completed(&mut reading, item, at);
            }
        }
        _ => {}
    }
    answer(reading)
}

/// Response items a legacy rollout holds, one per line, unwrapped (the
/// `rollout_writer` of `codex-rs/core/src/rollout.rs` before the
/// `{timestamp, type, payload}` lines: `Message`, `LocalShellCall`,
/// `FunctionCall`, `FunctionCallOutput`, `Reasoning`, later
/// `CustomToolCall(Output)`; find_string index file ids 1302893685,
/// 8844060819, 9100790400).
const LEGACY_ITEMS: &[&str] = &[
    "message",
    "reasoning",
    "local_shell_call",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
];

/// A line of a legacy rollout (Codex's first Rust releases, the ones that
/// named MCP tools `SERVER__OAI_CODEX_MCP__TOOL` and then `SERVER__TOOL`):
/// its first line the session (`SessionMetaWithGit`: `id`, `timestamp`,
/// `instructions`, `git`; later also `cwd`, `originator`, `cli_version`),
/// then response items as they are, and `{"record_type":"state"}` lines.
/// Its lines carry no times and no events: a call's outcome is unknown.
fn legacy(record: &str, configured: &[String]) -> RecordAnswer {
    let payload = match serde_json::from_str::<Obj<Payload<'_>>>(record).map(Obj::into_inner) {
        Ok(payload) => payload,
        Err(error) => return unreadable(record, &error),
    };
    let mut reading = RecordReading::default();
    match (payload.kind.as_deref(), payload.record_type.as_deref()) {
        (None, Some("state")) => return RecordAnswer::Ignored,
        (None, None) if payload.id.is_some() && payload.timestamp.is_some() => {
            reading.at = payload
                .timestamp
                .as_deref()
                .and_then(Timestamp::parse_rfc3339);
            session_meta(&mut reading, &payload);
        }
        (Some("function_call"), None) => {
            function_call(&mut reading, &payload, configured, Timestamp(0));
        }
        (Some(kind), None) if LEGACY_ITEMS.contains(&kind) => {}
        _ => return RecordAnswer::Unknown,
    }
    answer(reading)
}

/// `session_meta`: the session, its project and Codex's version.
fn session_meta(reading: &mut RecordReading, payload: &Payload<'_>) {
    reading.session = payload.id.as_deref().and_then(name);
    reading.project = payload.cwd.as_deref().and_then(project_of);
    reading.version = payload.cli_version.as_deref().and_then(version_of);
}

/// `world_state`: the skills its skill listing names.
fn world_state(reading: &mut RecordReading, payload: &Payload<'_>, at: Timestamp) {
    if let Some(body) = payload
        .state
        .as_ref()
        .and_then(|s| s.host_skills.as_ref())
        .and_then(|h| h.body.as_deref())
    {
        for skill in listed_skills(body) {
            push(reading, skill_listed(CapabilityEvent::skill(&skill), at));
        }
    }
}

/// A `function_call` item: a call of an MCP server's tool, if it names one.
fn function_call(
    reading: &mut RecordReading,
    payload: &Payload<'_>,
    configured: &[String],
    at: Timestamp,
) {
    let tool = payload.name.as_deref().unwrap_or_default();
    let named = match payload.namespace.as_deref() {
        Some(ns) => {
            namespace_server(ns, configured).and_then(|server| Some((name(server)?, name(tool)?)))
        }
        None => qualified(tool, configured),
    };
    if let Some((server, tool)) = named {
        push(
            reading,
            call(&server, &tool, payload.call_id.as_deref(), None, at),
        );
    }
}

/// The server a `function_call`'s `namespace` names: `mcp__SERVER` (0.142
/// on), or `mcp__SERVER__` with the delimiter left on (Codex's
/// `normalize_codex_apps_callable_namespace`,
/// `format!("mcp{MCP_TOOL_NAME_DELIMITER}{server_name}{MCP_TOOL_NAME_DELIMITER}")`,
/// read in the find_string index, file id 53227822629): never a server
/// named `SERVER__`. A namespace with no `mcp__` (Codex's
/// `NonPrefixedMcpToolNames` feature names it by the server alone) is a
/// server only where it is one of the configured names.
fn namespace_server<'n>(ns: &'n str, configured: &[String]) -> Option<&'n str> {
    let (server, prefixed) = match ns.strip_prefix("mcp__") {
        Some(server) => (server, true),
        None => (ns, false),
    };
    let server = server.strip_suffix("__").unwrap_or(server);
    let known = prefixed || configured.iter().any(|c| c == server);
    (known && !server.is_empty()).then_some(server)
}

/// Codex's delimiter before `mcp__`, in its first MCP releases
/// (`const MCP_TOOL_NAME_DELIMITER: &str = "__OAI_CODEX_MCP__"`,
/// `fully_qualified_tool_name` = `SERVER{DELIM}TOOL`, split by
/// `try_parse_fully_qualified_tool_name` with `split_once`, in
/// `codex-rs/core/src/mcp_connection_manager.rs` of that time: find_string
/// index file ids 1347457349, 9218841554).
const OAI_DELIMITER: &str = "__OAI_CODEX_MCP__";

/// The server and tool a `function_call`'s one `name` gives, where it is
/// certain: `mcp__SERVER__TOOL` (0.104 to 0.118; openai/codex
/// `qualify_tools`, `format!("mcp{}{}{}{}", MCP_TOOL_NAME_DELIMITER,
/// server, MCP_TOOL_NAME_DELIMITER, tool)` with `MCP_TOOL_NAME_DELIMITER =
/// "__"`, codex-rs/core/src/mcp_connection_manager.rs @ 00302de7),
/// `SERVER__OAI_CODEX_MCP__TOOL` (the first releases: Codex split it at
/// that delimiter itself), and `SERVER__TOOL` (the releases between, whose
/// `MCP_TOOL_NAME_DELIMITER` was `"__"` with no `mcp` prefix) only where
/// exactly one configured server fits: a built-in tool has no such name,
/// and Tether does not guess.
fn qualified(full: &str, configured: &[String]) -> Option<(String, String)> {
    if let Some(pair) = mcp_double(full) {
        return Some(pair);
    }
    if let Some((server, tool)) = full.split_once(OAI_DELIMITER) {
        return (!server.is_empty() && !tool.is_empty())
            .then(|| Some((name(server)?, name(tool)?)))
            .flatten();
    }
    let (server, tool) = split_against(full, "", "__", configured)?;
    Some((name(&server)?, name(tool)?))
}

/// `mcp_tool_call_end`: how a call of a server's tool ended (one of
/// Codex's own resource tools: what its answer shows of the servers).
fn mcp_tool_call_end(reading: &mut RecordReading, payload: &Payload<'_>, at: Timestamp) {
    if let Some(invocation) = &payload.invocation
        && let (Some(server), Some(tool)) = (
            invocation.server.as_deref().and_then(name),
            invocation.tool.as_deref().and_then(name),
        )
    {
        if is_resource_tool(&tool) {
            if let Some(r) = payload.result.as_deref().and_then(|r| r.ok.as_deref())
                && r.err.is_none()
                && r.is_error != Some(true)
            {
                resources::answered(reading, (&server, &tool), r.listing(), at);
            }
            return;
        }
        let end = match payload.result.as_deref() {
            Some(EndResult { ok: Some(r), .. }) if r.err.is_some() => End::Failed,
            Some(EndResult { ok: Some(r), .. }) => End::Result {
                is_error: r.is_error == Some(true),
            },
            Some(EndResult {
                err: Some(words), ..
            }) => End::Error(words),
            _ => End::Unknown,
        };
        ended(
            reading,
            (&server, &tool, payload.call_id.as_deref()),
            end,
            at,
        );
    }
}

/// `tool_search_output`: a search gave the model these deferred tools'
/// definitions: held behind the search, and now sent.
fn tool_search_output(reading: &mut RecordReading, payload: &Payload<'_>, at: Timestamp) {
    for ns in payload
        .tools
        .iter()
        .flatten()
        .filter(|n| n.kind.as_deref() == Some("namespace"))
    {
        let Some(server) = ns
            .name
            .as_deref()
            .and_then(|n| n.strip_prefix("mcp__"))
            .and_then(name)
        else {
            continue;
        };
        for tool in ns
            .tools
            .iter()
            .flatten()
            .filter_map(|t| t.name.as_deref().and_then(name))
        {
            push(reading, deferred(&server, &tool, at));
            push(reading, visible(&server, &tool, at));
        }
    }
}

/// A developer `message`: the skills its skill listing names.
fn developer_message(reading: &mut RecordReading, payload: &Payload<'_>, at: Timestamp) {
    for text in payload
        .content
        .iter()
        .flatten()
        .filter_map(|c| c.text.as_deref())
    {
        if text.contains("### Available skills") {
            for skill in listed_skills(text) {
                push(reading, skill_listed(CapabilityEvent::skill(&skill), at));
            }
        }
    }
}

/// `item_completed` of an `McpToolCall`: how a call of a server's tool
/// ended (one of Codex's own resource tools: what its answer shows of the
/// servers).
fn item_completed(reading: &mut RecordReading, item: &Item<'_>, at: Timestamp) {
    if item.kind.as_deref() == Some("McpToolCall")
        && let (Some(server), Some(tool)) = (
            item.server.as_deref().and_then(name),
            item.tool.as_deref().and_then(name),
        )
    {
        if is_resource_tool(&tool) {
            if let Some(r) = &item.result
                && r.err.is_none()
                && r.is_error != Some(true)
                && item.error.is_none()
            {
                resources::answered(reading, (&server, &tool), r.listing(), at);
            }
            return;
        }
        let result = item
            .result
            .as_ref()
            .map(|r| r.is_error == Some(true) || r.err.is_some());
        let words = item.error.as_ref().and_then(|e| e.message.as_deref());
        let end = item_end(item.status.as_deref(), result, words);
        ended(reading, (&server, &tool, item.id.as_deref()), end, at);
    }
}

/// How an MCP call item ended (a rollout's `McpToolCall`, `exec --json`'s
/// `mcp_tool_call`): its `status`, whether it holds a result (and whether
/// that result is an error), and its `error.message`, Codex's words.
fn item_end<'w>(status: Option<&str>, result: Option<bool>, words: Option<&'w str>) -> End<'w> {
    let is_error = result == Some(true);
    match (status, words) {
        (_, Some(words)) if never_ran(words).is_some() => End::Error(words),
        (Some("completed"), _) if result.is_some() || words.is_none() => End::Result { is_error },
        (Some("completed" | "failed"), Some(words)) => End::Error(words),
        (Some("failed"), None) if is_error => End::Result { is_error: true },
        (Some("failed"), None) => End::Failed,
        // In progress, or a word this reader does not know: no outcome,
        // never a failure (unless the result says so).
        _ if is_error => End::Result { is_error: true },
        _ => End::Unknown,
    }
}

/// `function_call_output`: where its text is Codex's own words for how
/// the call `call_id` ended (Codex Desktop's rollouts write nothing else
/// of an MCP call's end), that end, by the call's id: refused (or "no such
/// tool"), or failed with the reason the words name. Any other output says
/// nothing (a tool's output is never read).
fn function_call_output(reading: &mut RecordReading, payload: &Payload<'_>, at: Timestamp) {
    let (Some(id), Some(words)) = (
        payload.call_id.as_deref(),
        payload.output.as_ref().and_then(|o| o.0.as_deref()),
    ) else {
        return;
    };
    let evidence = match said(words) {
        Some(Said::NeverRan(reason)) => refusal(id, reason, at),
        Some(Said::Failed(Some(reason))) => failed_with(id, reason, at),
        Some(Said::Failed(None)) => outcome(id, false, at),
        None => None,
    };
    if let Some(evidence) = evidence {
        push(reading, evidence);
    }
}

/// Record types (and `response_item`/`event_msg` payload types) this
/// reader reads: a record of one in a shape it cannot read is named so.
const READ_KINDS: &[(&str, &str)] = &[
    ("session_meta", ""),
    ("world_state", ""),
    ("response_item", "function_call"),
    ("response_item", "function_call_output"),
    ("response_item", "tool_search_output"),
    ("response_item", "message"),
    ("event_msg", "mcp_tool_call_end"),
    ("event_msg", "item_completed"),
];

/// A record that did not parse: cut short or not JSON, or (valid JSON) a
/// kind this reader knows with a field of the wrong type, named by the
/// reader's own constant; valid JSON of no kind it knows is unknown.
fn unreadable(record: &str, error: &serde_json::Error) -> RecordAnswer {
    let why = Unparsed::of(error);
    if why != Unparsed::WrongType {
        return RecordAnswer::Unparsed { why, kind: None };
    }
    #[derive(Deserialize)]
    struct Kinds {
        #[serde(rename = "type")]
        kind: Option<serde_json::Value>,
        payload: Option<serde_json::Value>,
    }
    let Ok(kinds) = serde_json::from_str::<Kinds>(record) else {
        return RecordAnswer::Unparsed { why, kind: None };
    };
    let top = kinds.kind.as_ref().and_then(|k| k.as_str()).unwrap_or("");
    let inner = kinds
        .payload
        .as_ref()
        .and_then(|p| p.get("type"))
        .and_then(|k| k.as_str())
        .unwrap_or("");
    let known = READ_KINDS
        .iter()
        .find(|(t, p)| *t == top && (p.is_empty() || *p == inner))
        .map(|(t, p)| {
            if p.is_empty() {
                (*t).to_owned()
            } else {
                format!("{t}/{p}")
            }
        })
        .or_else(|| KNOWN.iter().find(|k| **k == top).map(|k| (*k).to_owned()))
        .or_else(|| {
            LEGACY_ITEMS
                .iter()
                .find(|k| **k == top)
                .map(|k| format!("legacy/{k}"))
        });
    match known {
        Some(kind) => RecordAnswer::Unparsed {
            why,
            kind: Some(kind),
        },
        None => RecordAnswer::Unknown,
    }
}
