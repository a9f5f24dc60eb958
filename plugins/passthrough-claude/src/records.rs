//! Claude Code's own session records, read as `tether sessions` reads
//! them. Verified on Claude Code 2.1.197–2.1.332 (the pinned CLI and the
//! newest, `tests/peers/newest`).
//!
//! - **Transcripts** `~/.claude/projects/<cwd slug>/<session>.jsonl`
//!   (`$CLAUDE_CONFIG_DIR/projects/…`): an assistant record's `tool_use`
//!   items name the tools the model called (`mcp__SERVER__TOOL`, with the
//!   call's id); the next user record's `tool_result` items say, by that
//!   id, whether each failed (`is_error`), and, where Claude Code's own
//!   words say so, that it was refused before it reached the server
//!   (`approval_required`: a headless run could not ask;
//!   `blocked_by_hook`: a PreToolUse hook; `permission_denied`: a rule or
//!   the mode) or that the server answered with a JSON-RPC error
//!   (`protocol_error`, 2.1.197's words); a `deferred_tools_delta`
//!   attachment (tool search on) names the tools held behind the tool
//!   search (deferred: discoverable, their definitions not sent to the
//!   model) and the servers pending or needing auth (2.1.3xx: and those
//!   that failed, with an error code); a `deferred_tools_record`
//!   attachment (the definitions a search loaded), an `api-request-shape`
//!   record (2.1.3xx: the tools of one request to the model, of which only
//!   the names are read) and a `tools-used` record (2.1.3xx) name tools
//!   given to the model. A server offered only
//!   `authenticate`/`complete_authentication` needs a login.
//! - **Per-server logs**
//!   `~/.cache/claude-cli-nodejs/<cwd slug>/mcp-logs-<server>/<time>.jsonl`
//!   (`$XDG_CACHE_HOME/claude-cli-nodejs/…`): each record is `{debug |
//!   error, timestamp, sessionId, cwd}`; the directory names the server.
//!   "Successfully connected", "Connection established": connected;
//!   "Authentication required": needs an OAuth login; "Server rejected the
//!   configured Authorization header", "Connection failed …": failed, for
//!   the reason its words give (`mcp_log`); "Tool 'X' completed successfully" /
//!   "Tool 'X' failed": one call of X and how it went; `Skipping tool "X":
//!   its input schema …` (2.1.197 to 2.1.332): X dropped before the model
//!   saw it (`schema_unsupported`).
//!
//! - **A retried model request** (2.1.332): a `system/api_error` record
//!   is the session's error, its cause from its connection code or status
//!   (`model_api`), never its words; so is the run's end in an error of
//!   its model API (the `assistant` record with `isApiErrorMessage`).
//!
//! Only names, ids, times and outcomes are taken: a record's message,
//! tool input, tool result and error text are never kept (a failure's
//! reason is a code, never its words).

use std::borrow::Cow;

use serde::Deserialize;
use tether_core::capability::{CapabilityEvent, outcome_of_exit};
use tether_core::model::Timestamp;
use tether_core::records::{
    RecordAnswer, RecordFile, RecordReading, RecordSource, name, project_of, version_of,
};
use tether_core::vocab::ReasonCode;
use tether_core::vocab::UseOutcome;
use tether_sdk::records::{
    Blank, Blanker, answer, call, failed_with, failure, hook_fired, mcp_double, name_server,
    offered, offered_deferred, outcome, plugin_loaded, push, refusal, skill_invoked, skill_listed,
    skill_named, withheld,
};
use tether_sdk::telemetry::status;

pub mod builtin;
mod fields;
mod items;
mod lenient;
mod mcp_log;
mod model_api;
use items::{Content, Item};
use mcp_log::mcp_log;
mod names;
pub mod plain;
mod progress;
mod stream_json;
mod subagents;
mod words;

/// The role of transcript files.
pub const TRANSCRIPT: &str = "transcript";
/// The role of per-server log files.
pub const MCP_LOG: &str = "mcp_log";

/// The role of what `claude -p --output-format stream-json --verbose`
/// printed, saved to a file (read by path only).
pub const STREAM_JSON: &str = "stream_json";

/// Where Claude Code writes its session records.
pub fn sources() -> Vec<RecordSource> {
    vec![
        RecordSource::lines(TRANSCRIPT, ".claude", "projects/*/*.jsonl")
            .moved_by("CLAUDE_CONFIG_DIR", ""),
        // Sub-agents' transcripts, records of their parent's session.
        subagents::source(subagents::AGENT),
        subagents::source(subagents::AGENT_IN_DIR),
        subagents::source(subagents::AGENT_IN_RUN),
        // `claude mcp list` connects to every server and writes these, and
        // no transcript (2.1.197 and 2.1.332, seen in real runs): a session
        // only they show is a health check (`mcp_log`'s module doc).
        RecordSource::lines(MCP_LOG, ".cache/claude-cli-nodejs", "*/mcp-logs-*/*.jsonl")
            .moved_by("XDG_CACHE_HOME", "claude-cli-nodejs")
            .server_log_of("claude mcp list"),
        RecordSource::by_path(STREAM_JSON),
    ]
}

/// Reads one record of one of [`sources`]' files.
pub fn read(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    // A line that is no object (no release writes one) is read the plain
    // way, which says what it is; the fast paths read objects only.
    let object = record.trim_start().starts_with('{');
    let answer = match file.role {
        TRANSCRIPT => transcript(record),
        MCP_LOG if object => mcp_log(file, record),
        MCP_LOG => plain::mcp_log(file, record),
        STREAM_JSON if object => stream_json::stream_json(record),
        STREAM_JSON => plain::stream_json(record),
        _ => RecordAnswer::Unknown,
    };
    // A plugin's server, configured as `plugin:X:Y`, is `plugin_X_Y` here.
    names::as_configured(answer, file.configured)
}

/// Reads `record` as a line of a file of `role` at `segments` (below its
/// source's root: `["projects", SLUG, "ID.jsonl"]` for a transcript,
/// `[SLUG, "mcp-logs-SERVER", "TIME.jsonl"]` for a server's log), nothing
/// configured and no session known before it: one record held without its
/// file, as the tests and the differentials read one.
pub fn read_as(role: &str, segments: &[&str], record: &str) -> RecordAnswer {
    let segments: Vec<String> = segments.iter().map(|s| (*s).to_owned()).collect();
    let file = RecordFile {
        role,
        segments: &segments,
        session: None,
        configured: &[],
    };
    read(&file, record)
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default, deserialize_with = "lenient::text")]
    kind: Option<Cow<'a, str>>,
    /// `session_id` in what a headless run prints.
    #[serde(
        rename = "sessionId",
        alias = "session_id",
        borrow,
        default,
        deserialize_with = "lenient::text"
    )]
    session: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    cwd: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    version: Option<Cow<'a, str>>,
    /// The record's own id: one hook run's identity.
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    uuid: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::object")]
    message: Option<Message<'a>>,
    #[serde(borrow, default, deserialize_with = "lenient::object")]
    attachment: Option<Attachment<'a>>,
    /// `tools-used`: tool names.
    #[serde(borrow, default, deserialize_with = "lenient::texts")]
    tools: Vec<Cow<'a, str>>,
    /// `api-request-shape` (2.1.3xx): what one model request held; only
    /// its tools' names are read.
    #[serde(borrow, default, deserialize_with = "lenient::object")]
    shape: Option<Shape<'a>>,
    /// A `system` record's kind (`stop_hook_summary`, …).
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    subtype: Option<Cow<'a, str>>,
    /// `stop_hook_summary`: each Stop hook that ran (its command's shape
    /// only is kept), the blocking errors they gave (counted, never read),
    /// and whether one stopped the turn from ending.
    #[serde(
        rename = "hookInfos",
        borrow,
        default,
        deserialize_with = "lenient::objects"
    )]
    hook_infos: Vec<HookInfo<'a>>,
    #[serde(rename = "hookErrors", default, deserialize_with = "lenient::count")]
    hook_errors: usize,
    #[serde(
        rename = "preventedContinuation",
        default,
        deserialize_with = "lenient::flag"
    )]
    prevented: Option<bool>,
    /// `stop_hook_summary` of a subagent: `SubagentStop`.
    #[serde(
        rename = "hookLabel",
        borrow,
        default,
        deserialize_with = "lenient::text"
    )]
    hook_label: Option<Cow<'a, str>>,
    /// `stop_hook_summary`: the run of the Stop hooks it sums up, shared
    /// with each hook's own attachment where one was written; `progress`:
    /// the run of the event's hooks, or the call.
    #[serde(
        rename = "toolUseID",
        borrow,
        default,
        deserialize_with = "lenient::text"
    )]
    tool_use: Option<Cow<'a, str>>,
    /// A `progress` record's (`progress::Data`).
    #[serde(borrow, default)]
    data: Option<progress::MaybeData<'a>>,
}

#[derive(Deserialize)]
struct HookInfo<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    command: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Shape<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::objects")]
    tools: Vec<Entry<'a>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    /// Text (a prompt: skipped unread), or items ([`items`]: read in one
    /// pass, not buffered).
    #[serde(borrow, default)]
    content: Option<Content<'a>>,
}

#[derive(Deserialize)]
struct Attachment<'a> {
    #[serde(rename = "type", borrow, default, deserialize_with = "lenient::text")]
    kind: Option<Cow<'a, str>>,
    #[serde(
        rename = "addedNames",
        borrow,
        default,
        deserialize_with = "lenient::texts"
    )]
    added: Vec<Cow<'a, str>>,
    /// `mcp_dropped_tools_delta` (2.1.3xx): `"TOOL" (MCP server "SERVER"):
    /// "REASON"` per tool Claude Code dropped before the model saw it.
    #[serde(
        rename = "addedEntries",
        borrow,
        default,
        deserialize_with = "lenient::texts"
    )]
    added_entries: Vec<Cow<'a, str>>,
    /// `deferred_tools_record` (2.1.3xx): the tools whose schemas were
    /// loaded for the model.
    #[serde(borrow, default, deserialize_with = "lenient::objects")]
    entries: Vec<Entry<'a>>,
    /// 2.1.3xx: `[{name, errorCode, error}]`.
    #[serde(
        rename = "failedMcpServers",
        borrow,
        default,
        deserialize_with = "lenient::objects"
    )]
    failed: Vec<FailedServer<'a>>,
    #[serde(
        rename = "pendingMcpServers",
        borrow,
        default,
        deserialize_with = "lenient::texts"
    )]
    pending: Vec<Cow<'a, str>>,
    #[serde(
        rename = "needsAuthMcpServers",
        borrow,
        default,
        deserialize_with = "lenient::texts"
    )]
    needs_auth: Vec<Cow<'a, str>>,
    /// `skill_listing`: the skills offered to the model, by name (its
    /// `content`, their descriptions, is never read).
    #[serde(borrow, default, deserialize_with = "lenient::texts")]
    names: Vec<Cow<'a, str>>,
    /// `hook_*`: the hook (`SessionStart:startup`, `PreToolUse:Bash`,
    /// `Stop`), its event, its command line (only its shape is kept) and
    /// its exit status. Its output is never read.
    #[serde(
        rename = "hookName",
        borrow,
        default,
        deserialize_with = "lenient::text"
    )]
    hook_name: Option<Cow<'a, str>>,
    #[serde(
        rename = "hookEvent",
        borrow,
        default,
        deserialize_with = "lenient::text"
    )]
    hook_event: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    command: Option<Cow<'a, str>>,
    #[serde(rename = "exitCode", default, deserialize_with = "lenient::int")]
    exit_code: Option<i32>,
    #[serde(
        rename = "blockingError",
        borrow,
        default,
        deserialize_with = "lenient::object"
    )]
    blocking: Option<Blocking<'a>>,
    /// `hook_cancelled`: whether its time limit cut it.
    #[serde(rename = "timedOut", default, deserialize_with = "lenient::flag")]
    timed_out: Option<bool>,
    /// `hook_*`: the run of the event's hooks it belongs to (a Stop
    /// hook's is its `stop_hook_summary`'s too).
    #[serde(
        rename = "toolUseID",
        borrow,
        default,
        deserialize_with = "lenient::text"
    )]
    tool_use: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Blocking<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    command: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Entry<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    name: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct FailedServer<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    name: Option<Cow<'a, str>>,
    #[serde(
        rename = "errorCode",
        borrow,
        default,
        deserialize_with = "lenient::text"
    )]
    code: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    error: Option<Cow<'a, str>>,
}

/// Record types a transcript holds (`tools-used` names tools the model
/// used; the rest say nothing of MCP servers). 2.1.3xx added
/// `api-request`, `api-request-shape` (what was sent to the model: only
/// the shape's tool names are read), `api-request-blob`, `atis-latch`, `cost-state` and `tools-used`.
const KNOWN: &[&str] = &[
    "user",
    "assistant",
    "attachment",
    "system",
    "summary",
    "queue-operation",
    "file-history-snapshot",
    "custom-title",
    "progress",
    "result",
    "last-prompt",
    "tag",
    "agent-name",
    "api-request",
    "api-request-shape",
    "api-request-blob",
    "atis-latch",
    "tools-used",
    "cost-state",
];

fn header(line: &Line<'_>) -> RecordReading {
    let mut reading = RecordReading::default();
    reading.session = line.session.as_deref().and_then(name);
    reading.at = line.timestamp.as_deref().and_then(Timestamp::parse_rfc3339);
    reading.project = line.cwd.as_deref().and_then(project_of);
    reading.version = line.version.as_deref().and_then(version_of);
    reading
}

/// The values a transcript record's bulk is in, none of which the reader
/// reads: blanked before the record is parsed, so a tool result's body, a
/// prompt or a model's text is skipped at memory speed and never decoded.
const PAYLOAD: &[Blank<'static>] = &[
    Blank::Value("toolUseResult"),
    // `api-request-shape`'s `shape` keeps only its tools' names: the system
    // prompt's text, descriptions and schemas are blanked below.
    Blank::Value("params"),
    Blank::Value("input_schema"),
    Blank::String("description"),
    Blank::Value("input"),
    Blank::String("content"),
    Blank::String("text"),
    Blank::String("thinking"),
    // A thinking item's signature and the API's token counts: read by no
    // one, skipped at memory speed.
    Blank::String("signature"),
    Blank::Value("usage"),
];

/// The header every transcript record carries (Claude Code's transcript
/// writer adds it), taken by the blanker from the record's top level and
/// never parsed again: the first seven in this order are read (the record's
/// type, its session as a transcript and as a headless run name it, its
/// time, folder, version and id), the rest are read by no one.
const TAKEN: &[&str] = &[
    "type",
    "sessionId",
    "session_id",
    "timestamp",
    "cwd",
    "version",
    "uuid",
    "parentUuid",
    "logicalParentUuid",
    "userType",
    "entrypoint",
    "gitBranch",
    "slug",
    "requestId",
    "promptId",
];

static BLANKER: std::sync::LazyLock<Blanker> =
    std::sync::LazyLock::new(|| Blanker::new(PAYLOAD).taking(TAKEN));

fn transcript(record: &str) -> RecordAnswer {
    let original = record;
    if !record.trim_start().starts_with('{') {
        // No object (a list, a string: no release writes one): read the
        // plain way, which says what it is.
        return plain::transcript(record);
    }
    let mut taken = [None; TAKEN.len()];
    let record = BLANKER.blank_taking(record, &mut taken);
    lenient::take_odd();
    let parsed = serde_json::from_str::<Line<'_>>(&record);
    let odd = lenient::take_odd();
    let mut line = match parsed {
        Ok(line) => line,
        Err(error) => {
            // A lone surrogate escape (JSON.stringify writes one for a
            // string cut between a pair's halves) is refused by serde_json:
            // the record is read with it as U+FFFD, as the plain path reads
            // it (no release writes one in a field read here; rare).
            if let Some(fixed) = fields::lone_surrogates_replaced(original) {
                return transcript(&fixed);
            }
            let kind = taken[0].filter(|k| KNOWN.contains(k));
            return RecordAnswer::unparsed(&error, kind);
        }
    };
    // What the blanker took is read as the parse would have read it.
    let [kind, session, session_id, timestamp, cwd, version, uuid, ..] = taken;
    for (field, value) in [
        (&mut line.kind, kind),
        (&mut line.session, session.or(session_id)),
        (&mut line.timestamp, timestamp),
        (&mut line.cwd, cwd),
        (&mut line.version, version),
        (&mut line.uuid, uuid),
    ] {
        if let Some(value) = value {
            *field = Some(Cow::Borrowed(value));
        }
    }
    read_line(&line, odd, Whole::Written(original))
}

/// Whether `record` may hold `needle` once parsed, for a cheap rejection
/// before a parse: it is there as written, or the line escapes some
/// character with `\u` (Claude Code never escapes one it need not, but a
/// line rewritten by another tool may), which only the parse can undo.
/// A needle holds no character JSON must escape, nor `/`.
fn may_hold(record: &str, needle: &str) -> bool {
    record.contains(needle) || record.contains("\\u")
}

/// A transcript record whole, for what its side readings (a `Skill`
/// call's skill, a failed result's words, the SDK's `tool_result_meta`
/// stamp, 2.1.14's Stop hook feedback) read of it that its blanked parse
/// has no value for: as written (the fast path: each reads its part
/// itself, cheaply rejected where it cannot hold it), or parsed whole
/// (the plain path, [`plain`]: each takes its part from the value).
#[derive(Clone, Copy)]
pub(crate) enum Whole<'a> {
    Written(&'a str),
    Parsed(&'a serde_json::Value),
}

/// What one transcript record says, parsed (`line`; `odd`: a field of it
/// was of another type than the one read), `whole` as written or parsed
/// whole: the meanings the fast path and the plain one ([`plain`]) share.
fn read_line(line: &Line<'_>, odd: bool, whole: Whole<'_>) -> RecordAnswer {
    let Some(kind) = line.kind.as_deref() else {
        return RecordAnswer::Unknown;
    };
    if !KNOWN.contains(&kind) {
        return RecordAnswer::Unknown;
    }
    let answer = known_line(line, kind, whole);
    // A known kind in a shape its reader cannot read, which gave nothing:
    // it says so (never "a kind this Tether does not read").
    match answer {
        RecordAnswer::Read(_) | RecordAnswer::NotRead { .. } => answer,
        _ if odd => RecordAnswer::Unparsed {
            why: tether_core::records::Unparsed::WrongType,
            kind: Some(kind.to_owned()),
        },
        _ => answer,
    }
}

fn known_line(line: &Line<'_>, kind: &str, whole: Whole<'_>) -> RecordAnswer {
    let mut reading = header(line);
    let at = reading.at.unwrap_or(Timestamp(0));
    let items = match line.message.as_ref().and_then(|m| m.content.as_ref()) {
        Some(Content(Some(items))) => items.as_slice(),
        _ => &[],
    };
    message_items(&mut reading, items, whole, at);
    match kind {
        "progress" => {
            if let Some(data) = line.data.as_ref().and_then(|d| d.0.as_ref()) {
                progress::progress(
                    &mut reading,
                    data,
                    line.tool_use.as_deref(),
                    line.uuid.as_deref(),
                    at,
                );
            }
        }
        "user" => progress::stop_feedback(&mut reading, whole, at),
        _ => {}
    }
    if let Some(shape) = &line.shape
        && kind == "api-request-shape"
    {
        // The tools one request to the model held: each was sent.
        offered(
            &mut reading,
            shape
                .tools
                .iter()
                .filter_map(|e| e.name.as_deref().and_then(mcp_double)),
            at,
        );
    }
    if kind == "tools-used" {
        offered(
            &mut reading,
            line.tools.iter().filter_map(|t| mcp_double(t)),
            at,
        );
    }
    if let Some(attachment) = &line.attachment {
        attachment_record(&mut reading, attachment, line.uuid.as_deref(), at);
    }
    if kind == "system" && line.subtype.as_deref() == Some("stop_hook_summary") {
        stop_hooks(&mut reading, line, at);
    }
    // A request to the model API failed and is retried (2.1.332): the
    // session's error, report-level (no server's).
    // The run's end in an error of its model API, written in the model's
    // place: the session's error, report-level.
    if kind == "assistant"
        && let Some((reason, words)) = model_api::api_error_message(whole)
    {
        push(
            &mut reading,
            tether_core::model::Evidence::new(tether_core::vocab::EvidenceKind::ExplicitError, at)
                .reason(reason, Some(words.to_owned())),
        );
    }
    // One whose `error` is no object is in a shape this reader cannot
    // read, and says so.
    if kind == "system" && line.subtype.as_deref() == Some("api_error") {
        let Some((reason, words)) = model_api::api_error_record(whole) else {
            return RecordAnswer::Unparsed {
                why: tether_core::records::Unparsed::WrongType,
                kind: Some("system/api_error".to_owned()),
            };
        };
        push(
            &mut reading,
            tether_core::model::Evidence::new(tether_core::vocab::EvidenceKind::ExplicitError, at)
                .reason(reason, Some(words)),
        );
    }
    if reading.evidence.is_empty()
        && let Some(kind) = not_read(line, kind)
    {
        // Counted by the census's name, never read as nothing.
        return RecordAnswer::not_read(kind, reading.at);
    }
    answer(reading)
}

/// The records of a kind the census names and this reader does not read
/// (`census.rs`, source `transcript`), as `KIND/SUBKIND` (an attachment's
/// type, a system record's subtype, a progress record's data type).
pub(crate) const NOT_READ: &[&str] = &[
    "attachment/mcp_instructions_delta",
    "attachment/repl_mcp_needs_auth",
    "attachment/repl_mcp_servers",
    "attachment/linked_plugin_tools_note",
    "attachment/plugin_note",
    "attachment/mcp_resource",
    "attachment/tool_search_usage_reminder",
    "attachment/tool_hosts_notice",
    "attachment/tool_hosts_correction",
    "attachment/tool_host_result_lines",
    "attachment/tool_results_cut",
    "attachment/advisor_tool",
    "attachment/command_permissions",
    "attachment/invoked_skills",
    "attachment/dynamic_skill",
    "attachment/skill_mention",
    "attachment/hook_additional_context",
    "attachment/hook_system_message",
    "attachment/hook_permission_decision",
    "attachment/hook_deferred_tool",
    "attachment/async_hook_response",
    "attachment/async_hook_response_batch",
    "system/permission_retry",
    "progress/bash_progress",
    "progress/agent_progress",
    "progress/waiting_for_task",
    "progress/skill_progress",
    "progress/repl_tool_call",
    "progress/tool_heartbeat",
];

/// The census's name of `line` (of `kind`) where [`NOT_READ`] holds it (a
/// constant, never the record's own text).
fn not_read(line: &Line<'_>, kind: &str) -> Option<&'static str> {
    let sub = match kind {
        "attachment" => line.attachment.as_ref()?.kind.as_deref(),
        "system" => line.subtype.as_deref(),
        "progress" => line.data.as_ref()?.0.as_ref()?.kind.as_deref(),
        _ => None,
    }?;
    NOT_READ
        .iter()
        .find(|k| k.split_once('/') == Some((kind, sub)))
        .copied()
}

/// A message's items: its MCP calls and their results, then the skills
/// it invoked.
fn message_items(reading: &mut RecordReading, items: &[Item<'_>], whole: Whole<'_>, at: Timestamp) {
    for item in items {
        match item.kind.as_deref() {
            // Read below, once per record.
            Some("tool_use") if item.name.as_deref() == Some("Skill") => {}
            Some("tool_use") => {
                if let Some((server, tool)) = item.name.as_deref().and_then(mcp_double) {
                    push(reading, call(&server, &tool, item.id.as_deref(), None, at));
                }
            }
            Some("tool_result") => tool_result(reading, item, whole, at),
            _ => {}
        }
    }
    if items
        .iter()
        .any(|i| i.kind.as_deref() == Some("tool_use") && i.name.as_deref() == Some("Skill"))
    {
        // Its input was blanked; the skill's name is read from the record
        // as written (that one field, nothing else).
        for (id, skill) in skill_calls(whole) {
            if let Some(skill) = claude_skill(&skill) {
                push(reading, skill_invoked(skill, Some(&id), at));
            }
        }
    }
}

/// A skill as Claude Code names it (`PLUGIN:SKILL` for a plugin's), marked
/// built in where it is one Claude Code bundles ([`builtin`]).
fn claude_skill(full: &str) -> Option<CapabilityEvent> {
    let skill = skill_named(full, ':')?;
    Some(
        if builtin::is_builtin_skill(&skill.name, skill.plugin.as_deref()) {
            skill.bundled()
        } else {
            skill
        },
    )
}

/// A `tool_result`: whose call it was is known by its id only; an id no
/// MCP call had is dropped by the host. A failed one's words (blanked) are
/// compared with Claude Code's own, from the record as written: a refusal
/// never reached the server.
fn tool_result(reading: &mut RecordReading, item: &Item<'_>, whole: Whole<'_>, at: Timestamp) {
    let Some(id) = item.tool_use_id.as_deref() else {
        return;
    };
    // A refusal's own words are the more precise (2.1.332 stamps a
    // headless run's "you haven't granted it yet" `user-rejected`); the
    // SDK's stamp speaks where the words say no refusal.
    let said = if item.is_error == Some(true) {
        match error_words(whole, id) {
            refused @ Some(ErrorWords::Refused(_)) => refused,
            other => words::meta_said(whole, id).or(other),
        }
    } else {
        None
    };
    let done = match said {
        Some(ErrorWords::Refused(reason)) => refusal(id, reason, at),
        Some(ErrorWords::Failed(reason)) => failed_with(id, reason, at),
        None => outcome(id, item.is_error != Some(true), at),
    };
    if let Some(done) = done {
        reading.evidence.push(done);
    }
}

/// An attachment: the capabilities it names, and the tools it says were
/// sent, deferred or dropped.
fn attachment_record(
    reading: &mut RecordReading,
    attachment: &Attachment<'_>,
    uuid: Option<&str>,
    at: Timestamp,
) {
    capabilities(reading, attachment, uuid, at);
    match attachment.kind.as_deref() {
        Some("deferred_tools_record") => offered(
            reading,
            attachment
                .entries
                .iter()
                .filter_map(|e| e.name.as_deref().and_then(mcp_double)),
            at,
        ),
        Some("deferred_tools_delta") => deferred_tools_delta(reading, attachment, at),
        Some("mcp_dropped_tools_delta") => {
            for entry in &attachment.added_entries {
                if let Some((server, tool, reason)) = dropped_tool(entry) {
                    push(reading, withheld(&server, &tool, reason, at));
                }
            }
        }
        _ => {}
    }
}

/// `deferred_tools_delta`: the tools behind the tool search: discoverable,
/// their definitions not sent until a search loads them
/// (`deferred_tools_record`); and the servers that failed, need
/// authorization or are pending.
fn deferred_tools_delta(reading: &mut RecordReading, attachment: &Attachment<'_>, at: Timestamp) {
    offered_deferred(
        reading,
        attachment.added.iter().filter_map(|a| mcp_double(a)),
        at,
    );
    for failed in &attachment.failed {
        if let Some(server) = failed
            .name
            .as_deref()
            .and_then(|n| listed_server(reading, n, at))
        {
            // The reason from the words (ENOENT, …), never the words.
            let words = [failed.code.as_deref(), failed.error.as_deref()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(": ");
            push(reading, failure(&server, &words, at));
        }
    }
    for listed in &attachment.needs_auth {
        if let Some(server) = listed_server(reading, listed, at) {
            push(reading, status(&server, "needs-auth", at));
        }
    }
    for listed in &attachment.pending {
        if let Some(server) = listed_server(reading, listed, at) {
            name_server(reading, &server);
        }
    }
}

/// Claude Code's own rule for the name a server's tools carry
/// (`mcp__NAME__TOOL`): each character outside `[A-Za-z0-9_-]` becomes
/// `_`, and a claude.ai connector's name (`claude.ai Slack`) also has its
/// runs of `_` squeezed and its ends trimmed (`claude_ai_Slack`). Read in
/// 2.1.332's own code.
pub fn tool_name_of_server(server: &str) -> String {
    let replaced: String = server
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !server.starts_with("claude.ai ") {
        return replaced;
    }
    let mut squeezed = String::with_capacity(replaced.len());
    for c in replaced.chars() {
        if !(c == '_' && squeezed.ends_with('_')) {
            squeezed.push(c);
        }
    }
    squeezed.trim_matches('_').to_owned()
}

/// A server a `deferred_tools_delta` list names: by its name, or (a
/// claude.ai connector, 2.1.2xx on) by its display name, which becomes the
/// name its tools carry; the display name is kept for people as the row's
/// note, where it is a plain name.
fn listed_server(reading: &mut RecordReading, listed: &str, at: Timestamp) -> Option<String> {
    let listed = listed.trim();
    if let Some(server) = name(listed) {
        return Some(server);
    }
    let server = name(&tool_name_of_server(listed))?;
    let plain = listed.len() <= 64
        && listed
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, ' ' | '.' | '-' | '_' | '(' | ')'))
        && tether_core::sanitize::name(listed) == listed;
    if plain {
        let mut shown = status(&server, "pending", at);
        shown.summary = Some(format!("shown in Claude Code as \u{201c}{listed}\u{201d}"));
        push(reading, shown);
    }
    Some(server)
}

/// One entry of `mcp_dropped_tools_delta`: `"TOOL" (MCP server "SERVER"):
/// "REASON"`, as (server, tool, reason code). An entry that names no tool
/// (`MCP server "S": N tools excluded (…)`) gives nothing.
fn dropped_tool(entry: &str) -> Option<(String, String, tether_core::vocab::ReasonCode)> {
    let rest = entry.strip_prefix('"')?;
    let (tool, rest) = rest.split_once("\" (MCP server \"")?;
    let (server, why) = rest.split_once("\"): ")?;
    let reason = if why.contains("schema") {
        tether_core::vocab::ReasonCode::SchemaUnsupported
    } else {
        tether_core::vocab::ReasonCode::DroppedByHarness
    };
    Some((name(server)?, name(tool)?, reason))
}

/// `stop_hook_summary` (2.1.2xx on): the Stop hooks that ran at a turn's
/// end, the only trace of one that succeeded in silence. One run per hook
/// it lists, each named by its event (`Stop`, or its label:
/// `SubagentStop`), with its command's shape. A hook that also wrote an
/// attachment (it failed, or printed) is that attachment's run, counted
/// once (the same run and command). No error: each succeeded. One hook and
/// an error: it failed (blocked, where it stopped the turn). Several hooks
/// and errors: which hook gave which error is not recorded, so each says
/// unknown (its own attachment, where written, says better).
fn stop_hooks(reading: &mut RecordReading, line: &Line<'_>, at: Timestamp) {
    let event = line
        .hook_label
        .as_deref()
        .and_then(name)
        .unwrap_or_else(|| "Stop".to_owned());
    let errors = line.hook_errors > 0;
    let outcome = match (errors, line.prevented == Some(true), line.hook_infos.len()) {
        (_, true, 1) => UseOutcome::Blocked,
        (false, false, _) => UseOutcome::Succeeded,
        (true, false, 1) => UseOutcome::Failed,
        _ => UseOutcome::Unknown,
    };
    for (i, info) in line.hook_infos.iter().enumerate().take(64) {
        let command = info.command.as_deref().unwrap_or_default();
        let mut hook = CapabilityEvent::hook(&event, Some(&event));
        if !command.is_empty() {
            hook = words::with_command(hook, command);
        }
        let id = line
            .tool_use
            .as_deref()
            .and_then(|t| hook_run_id(t, &event, command))
            .or_else(|| line.uuid.as_deref().map(|u| format!("{u}:{i}")));
        push(
            reading,
            hook_fired(hook.ended(outcome.clone(), None), id.as_deref(), at),
        );
    }
}

/// What a configured hook with no record in a session reads: Claude Code
/// (2.1.332 seen, its own stream-json saying the hook ran) writes nothing
/// to the transcript for a hook that succeeded and printed nothing, so
/// silence is not absence.
pub const HOOK_SILENCE: &str = "no record shows whether it ran (a transcript keeps a hook's run only when it fails, blocks or prints, and a Stop hook's always; a headless run's stream-json prints a Stop hook only when it fails)";

/// The hook attachments and how each says its run ended.
const HOOK_ATTACHMENTS: &[&str] = &[
    "hook_success",
    "hook_non_blocking_error",
    "hook_blocking_error",
    "hook_error_during_execution",
    "hook_stopped_continuation",
    "hook_cancelled",
];

/// Skills offered (`skill_listing`: a plugin's skill is `PLUGIN:SKILL`, so
/// its plugin loaded) and hooks run (`hook_*`, one record per run).
fn capabilities(
    reading: &mut RecordReading,
    attachment: &Attachment<'_>,
    id: Option<&str>,
    at: Timestamp,
) {
    let Some(kind) = attachment.kind.as_deref() else {
        return;
    };
    if kind == "skill_listing" {
        let mut plugins: Vec<String> = Vec::new();
        for skill in attachment.names.iter().filter_map(|n| claude_skill(n)) {
            if let Some(plugin) = &skill.plugin
                && !plugins.contains(plugin)
            {
                plugins.push(plugin.clone());
            }
            push(reading, skill_listed(skill, at));
        }
        for plugin in plugins {
            if let Some(loaded) = plugin_loaded(&plugin, at) {
                push(reading, loaded);
            }
        }
        return;
    }
    if !HOOK_ATTACHMENTS.contains(&kind) {
        return;
    }
    let Some(hook) = attachment.hook_name.as_deref().and_then(name) else {
        return;
    };
    let event = attachment.hook_event.as_deref().and_then(name);
    let command = attachment.command.as_deref().or(attachment
        .blocking
        .as_ref()
        .and_then(|b| b.command.as_deref()));
    let outcome = match (kind, attachment.exit_code) {
        ("hook_blocking_error" | "hook_stopped_continuation", _) => UseOutcome::Blocked,
        ("hook_cancelled", _) if attachment.timed_out == Some(true) => UseOutcome::TimedOut,
        ("hook_cancelled", _) => UseOutcome::Cancelled,
        (_, Some(code)) => outcome_of_exit(code, Some(2)),
        ("hook_success", None) => UseOutcome::Succeeded,
        _ => UseOutcome::Failed,
    };
    let run = attachment
        .tool_use
        .as_deref()
        .and_then(|t| hook_run_id(t, &hook, command.unwrap_or_default()));
    let mut event = CapabilityEvent::hook(&hook, event.as_deref());
    if let Some(line) = command {
        event = words::with_command(event, line);
    }
    push(
        reading,
        hook_fired(
            event.ended(outcome, attachment.exit_code),
            run.as_deref().or(id),
            at,
        ),
    );
}

/// One hook's run, as both its own attachment and its event's
/// `stop_hook_summary` name it: the run of the event's hooks
/// (`toolUseID`), the hook, and its command line (hashed: the line itself
/// is never kept), so a Stop hook written twice counts once.
fn hook_run_id(run: &str, hook: &str, command: &str) -> Option<String> {
    // FNV-1a, 64 bits: stable across releases and machines.
    let hash = command.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    // `name` of `name(run):name(hook):HASH`, built once (no copy of each).
    let (run, hook) = (run.trim(), hook.trim());
    let name_like = tether_core::telemetry::is_name_like;
    if !name_like(run) || !name_like(hook) {
        return None;
    }
    let mut id = String::with_capacity(run.len() + hook.len() + 18);
    id.push_str(run);
    id.push(':');
    id.push_str(hook);
    // (Writing to a String does not fail.)
    let _ = std::fmt::Write::write_fmt(&mut id, format_args!(":{hash:016x}"));
    name_like(&id).then_some(id)
}

/// The `Skill` calls in an assistant record: (call id, skill).
fn skill_calls(whole: Whole<'_>) -> Vec<(String, String)> {
    let text = |v: &serde_json::Value, key: &str| v.get(key)?.as_str().map(str::to_owned);
    with_items(whole, |items| {
        items
            .iter()
            .filter(|i| i.get("type").and_then(|t| t.as_str()) == Some("tool_use"))
            .filter(|i| i.get("name").and_then(|t| t.as_str()) == Some("Skill"))
            .filter_map(|i| Some((text(i, "id")?, text(i.get("input")?, "skill")?)))
            .collect()
    })
}

/// `read` of the items of a record's message, each on its own (one odd
/// item hides none of the others): what [`skill_calls`] and
/// [`error_words`] read of the record whole, fields its blanked reading
/// had no value for. Parsed from the record as written only for a record
/// that has a `Skill` call or a failed result; the values are held while
/// read, never kept. (A record as written parses: its blanked form did.)
fn with_items<T>(whole: Whole<'_>, read: impl FnOnce(&[serde_json::Value]) -> T) -> T {
    fn items(v: &serde_json::Value) -> &[serde_json::Value] {
        match v.pointer("/message/content") {
            Some(serde_json::Value::Array(items)) => items.as_slice(),
            _ => &[],
        }
    }
    match whole {
        Whole::Parsed(value) => read(items(value)),
        // (A record as written parses, a lone surrogate read as U+FFFD:
        // its blanked form did. Were it not to, the plain path says it
        // unparsed and the differential finds the two differ.)
        Whole::Written(record) => match fields::parse(record) {
            Ok(value) => read(items(&value)),
            Err(_) => read(&[]),
        },
    }
}

/// What a failed call's words, Claude Code's own, say of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorWords {
    /// Refused before it reached the server, for this reason.
    Refused(ReasonCode),
    /// It reached the server, and failed for this reason.
    Failed(ReasonCode),
}

/// The words a headless run answers a call that needed a person's
/// approval with (the `ask` decision's message, 2.1.197 to 2.1.332:
/// `Claude requested permissions to use ${name}, but you haven't granted
/// it yet.`): it asked, and no one could answer.
const ASKED: (&str, &str) = (
    "Claude requested permissions to use ",
    ", but you haven't granted it yet.",
);
/// 2.1.332: `Permission for this tool use was denied: it requires
/// interactive approval`.
const NEEDS_APPROVAL: &str =
    "Permission for this tool use was denied: it requires interactive approval";
/// A deny rule's or the permission mode's words (`Permission to use
/// ${name} has been denied.`, `… has been denied because Claude Code is
/// running in don't ask mode.`).
const DENIED: (&str, &str) = ("Permission to use ", " has been denied");
/// A PreToolUse hook that blocked the call (`${event} hook error:
/// ${blockingError}`, the event `PreToolUse:${name}`): exit 2 in both
/// releases, a `permissionDecision: "deny"` in 2.1.332 (2.1.197 answers
/// that with the hook's own words alone, which say nothing of it).
const HOOK: (&str, &str) = ("PreToolUse:", " hook error: ");
/// The MCP SDK's error for a JSON-RPC error answer (`MCP error ${code}:
/// ${message}`), as 2.1.197 passes it on (2.1.332 keeps the message only).
const RPC_ERROR: &str = "MCP error -";

/// Claude Code's answer to a call of a tool it does not hold, in 2.1.197
/// and 2.1.332 alike (`content:\`<tool_use_error>Error: No such tool
/// available: ${name}${why}</tool_use_error>\`, is_error:!0`, its
/// `toolUseResult` the same words untagged; both releases' claude.exe):
/// the call reached no server, and the tool was not available then.
const NO_SUCH_TOOL: &str = "Error: No such tool available: ";

/// What Claude Code's words for a failed call say (compared with its own
/// constant words only; the words are never kept).
pub fn error_said(words: &str) -> Option<ErrorWords> {
    let words = words.trim_start();
    if words
        .strip_prefix("<tool_use_error>")
        .unwrap_or(words)
        .starts_with(NO_SUCH_TOOL)
    {
        return Some(ErrorWords::Refused(ReasonCode::ToolNotAvailable));
    }
    let between = |(head, tail): (&str, &str)| {
        words
            .strip_prefix(head)
            .is_some_and(|rest| rest.contains(tail))
    };
    if let Some(said) = words::said(words) {
        return Some(said);
    }
    if between(ASKED) || words.starts_with(NEEDS_APPROVAL) {
        return Some(ErrorWords::Refused(ReasonCode::ApprovalRequired));
    }
    if between(HOOK) {
        return Some(ErrorWords::Refused(ReasonCode::BlockedByHook));
    }
    if between(DENIED) {
        return Some(ErrorWords::Refused(ReasonCode::PermissionDenied));
    }
    let code = words.strip_prefix(RPC_ERROR)?;
    let digits = code.bytes().take_while(u8::is_ascii_digit).count();
    (digits > 0 && code[digits..].starts_with(':'))
        .then_some(ErrorWords::Failed(ReasonCode::ProtocolError))
}

/// Why a stream-json `permission_denied` says a call was refused: its
/// `decision_reason_type` (`hook`: a hook; `asyncAgent`: no one could be
/// asked, each of its reasons says so; a rule, the mode or a check: the
/// harness's rules), else its words (none in a headless run that could not
/// ask: the `ask` decision's words).
pub fn denial_reason(kind: Option<&str>, words: Option<&str>) -> ReasonCode {
    match kind {
        Some("hook") => ReasonCode::BlockedByHook,
        Some("asyncAgent") => ReasonCode::ApprovalRequired,
        Some(_) => ReasonCode::PermissionDenied,
        None => match words.and_then(error_said) {
            Some(ErrorWords::Refused(reason)) => reason,
            _ => ReasonCode::PermissionDenied,
        },
    }
}

/// What the words of the failed `tool_result` for `id` in a record say
/// (its content: a string, or its first text item).
fn error_words(whole: Whole<'_>, id: &str) -> Option<ErrorWords> {
    with_items(whole, |items| {
        let item = items
            .iter()
            .find(|i| i.get("tool_use_id").and_then(|t| t.as_str()) == Some(id))?;
        match item.get("content")? {
            serde_json::Value::String(words) => error_said(words),
            serde_json::Value::Array(texts) => error_said(texts.first()?.get("text")?.as_str()?),
            _ => None,
        }
    })
}
