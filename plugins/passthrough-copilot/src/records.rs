//! Copilot CLI's own session records, read as `tether sessions` reads
//! them. Verified on Copilot CLI 1.0.102 (the pinned CLI).
//!
//! - Session events `~/.copilot/session-state/<session>/events.jsonl`:
//!   `session.start` (its `cwd`, Copilot's version); `tool.execution_start`
//!   (`toolCallId`, `mcpServerName`, `mcpToolName`) and
//!   `tool.execution_complete` (`toolCallId`, `success`); `hook.end`
//!   (one run of an event's hooks: `hookType`, `success`, and the exit
//!   status its error names); `skill.invoked` (the skill's `name` and
//!   `pluginName`). The server
//!   status events Copilot prints with `--output-format json` are not
//!   saved here.
//! - Process logs `~/.copilot/logs/process-*.log`: "Workspace initialized:
//!   <session>" names the session the lines after it belong to; "MCP
//!   server connection failed {"server_name":…}" (failed: a missing
//!   command, a server that exited with its code, one Copilot gave up
//!   waiting on, each said as such), "reporting the server as needing auth
//!   {"server":…}" (needs auth), the "HTTP 401 challenge (WWW-Authenticate:
//!   …)" beside it (which auth failure: `words::challenge`), and the
//!   `[ERROR]` line of a run with no login (`words::login`).
//! - What `copilot -p … --output-format json` printed, saved to a file and
//!   named by path (`output_json`): the same session events, one
//!   `JSON.stringify(event)` a line (1.0.102 `cli-main.js` `zun`; 1.0.63
//!   `app.js` `Adr`), read by the same code as `events.jsonl`, with the
//!   transient (`ephemeral`) ones `events.jsonl` never holds: the
//!   `session.mcp_*` statuses (as a live run's output is read, lib.rs
//!   `output_evidence`), the organisation's MCP policy warning and the
//!   "Disabled tools" notice. Its last line, `{"type":"result",
//!   "sessionId":…}` (`qun`; 1.0.63 `_dr`), names the session: what came
//!   before joins it. One cut before it (`output_json_cut`) is the session
//!   named after the file (output.rs).

use std::borrow::Cow;

use serde::Deserialize;
use tether_core::capability::{CapabilityEvent, outcome_of_exit};
use tether_core::model::Timestamp;
use tether_core::records::{
    RecordAnswer, RecordFile, RecordReading, RecordSource, Unparsed, name, project_of, version_of,
};
use tether_core::vocab::{ReasonCode, UseOutcome};
use tether_sdk::records::{
    answer, call, failed_with, hook_fired, outcome, push, refusal, refused, skill_invoked, slow,
    visible,
};

mod loose;
/// The plain path: each record parsed whole, for the same meanings.
pub mod plain;
mod words;

use tether_sdk::telemetry::{failed, split_against, status};
use words::{refused_by, refused_kind};

/// Session event files.
pub const EVENTS: &str = "events";
/// Process logs.
pub const PROCESS_LOG: &str = "process_log";
/// What a `-p --output-format json` run printed, read only by path.
pub const OUTPUT: &str = "output_json";

/// Where Copilot CLI writes its session records.
pub fn sources() -> Vec<RecordSource> {
    vec![
        RecordSource::lines(EVENTS, ".copilot", "session-state/*/events.jsonl"),
        RecordSource::lines(PROCESS_LOG, ".copilot", "logs/process-*.log"),
        // A cut output first: where both fit as well (no `result` among
        // the file's first and last records), it places what it holds.
        RecordSource::by_path(crate::output::CUT),
        RecordSource::by_path(OUTPUT),
    ]
}

/// Reads one record.
pub fn read(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    match file.role {
        EVENTS | OUTPUT | crate::output::CUT => event(file, record),
        PROCESS_LOG => process_log(record),
        _ => RecordAnswer::Unknown,
    }
}

/// One session event. Every field but `type` is read loosely
/// ([`loose`]): a field of another type is that field unread, never the
/// event lost.
#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    /// The event's own id: one skill invocation's identity.
    #[serde(borrow, default, deserialize_with = "loose::text")]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "loose::text")]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "loose::object")]
    data: Option<Data<'a>>,
    /// Transient: never written to `events.jsonl` (1.0.102 schema
    /// `ephemeral`: "not persisted to the session event log on disk").
    #[serde(default, deserialize_with = "loose::flag")]
    ephemeral: Option<bool>,
    /// A saved output's `result` line: the run's session.
    #[serde(
        rename = "sessionId",
        borrow,
        default,
        deserialize_with = "loose::text"
    )]
    session_id: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
struct Data<'a> {
    /// `session.start`'s session id (its directory's name where Copilot
    /// keeps it; the only name of it in a copy read by path).
    #[serde(
        rename = "sessionId",
        borrow,
        default,
        deserialize_with = "loose::text"
    )]
    session_id: Option<Cow<'a, str>>,
    /// `tool.execution_start`'s server transport (1.0.87 on: `stdio`,
    /// `http`, `sse` or `memory`; 1.0.102 schema).
    #[serde(
        rename = "mcpTransport",
        borrow,
        default,
        deserialize_with = "loose::text"
    )]
    transport: Option<Cow<'a, str>>,
    #[serde(
        rename = "copilotVersion",
        borrow,
        default,
        deserialize_with = "loose::text"
    )]
    version: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "loose::object")]
    context: Option<Context<'a>>,
    #[serde(
        rename = "toolCallId",
        borrow,
        default,
        deserialize_with = "loose::text"
    )]
    call: Option<Cow<'a, str>>,
    #[serde(
        rename = "mcpServerName",
        borrow,
        default,
        deserialize_with = "loose::text"
    )]
    server: Option<Cow<'a, str>>,
    /// 1.0.87 on: the server's configuration key, where `mcpServerName`
    /// is its display name.
    #[serde(
        rename = "mcpConfigServerName",
        borrow,
        default,
        deserialize_with = "loose::text"
    )]
    config_server: Option<Cow<'a, str>>,
    /// `session.warning`: its type (`mcp`, `policy`, …) and its words,
    /// read for a server's name and a reason, never kept.
    #[serde(
        rename = "warningType",
        borrow,
        default,
        deserialize_with = "loose::text"
    )]
    warning_type: Option<Cow<'a, str>>,
    #[serde(
        rename = "errorType",
        borrow,
        default,
        deserialize_with = "loose::text"
    )]
    error_type: Option<Cow<'a, str>>,
    #[serde(rename = "infoType", borrow, default, deserialize_with = "loose::text")]
    info_type: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "loose::text")]
    message: Option<Cow<'a, str>>,
    /// `user.message`: the prompt as the model got it, scanned for its
    /// `<tools_changed_notice>` only (nothing else of it is kept).
    #[serde(
        rename = "transformedContent",
        borrow,
        default,
        deserialize_with = "loose::text"
    )]
    transformed: Option<Cow<'a, str>>,
    #[serde(
        rename = "mcpToolName",
        borrow,
        default,
        deserialize_with = "loose::text"
    )]
    tool: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "loose::flag")]
    success: Option<bool>,
    /// `hook.end`: one run of an event's hooks.
    #[serde(
        rename = "hookInvocationId",
        borrow,
        default,
        deserialize_with = "loose::text"
    )]
    hook_run: Option<Cow<'a, str>>,
    #[serde(rename = "hookType", borrow, default, deserialize_with = "loose::text")]
    hook_type: Option<Cow<'a, str>>,
    /// `hook.end`: its error, whose message is read for its exit status
    /// only (`failed with code 127`), never kept. Not an object (a failed
    /// server status's words, 1.0.102 `cli-main.js`@6205473 `error:Zn`, a
    /// string): none, and the event still read.
    #[serde(borrow, default, deserialize_with = "loose::object")]
    error: Option<ErrorData<'a>>,
    /// `skill.invoked`: the skill's name and its plugin's (its content,
    /// description and path are never read).
    #[serde(borrow, default, deserialize_with = "loose::text")]
    name: Option<Cow<'a, str>>,
    #[serde(
        rename = "pluginName",
        borrow,
        default,
        deserialize_with = "loose::text"
    )]
    plugin: Option<Cow<'a, str>>,
    /// `permission.completed`: how the request ended (`result.kind`); a
    /// completed call's `result` (its content, never read: only a `kind`
    /// word is).
    #[serde(borrow, default, deserialize_with = "loose::object")]
    result: Option<PermissionResult<'a>>,
    /// `tool.execution_complete`: the failure's category and stage.
    #[serde(
        rename = "toolTelemetry",
        borrow,
        default,
        deserialize_with = "loose::object"
    )]
    telemetry: Option<ToolTelemetry<'a>>,
}

/// A `permission.completed` result's kind.
#[derive(Deserialize, Default)]
struct PermissionResult<'a> {
    #[serde(borrow, default, deserialize_with = "loose::text")]
    kind: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
struct ToolTelemetry<'a> {
    #[serde(borrow, default, deserialize_with = "loose::object")]
    properties: Option<ToolProperties<'a>>,
}

#[derive(Deserialize, Default)]
struct ToolProperties<'a> {
    #[serde(borrow, default, deserialize_with = "loose::text")]
    failure_category: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "loose::text")]
    failure_stage: Option<Cow<'a, str>>,
}

/// A `session.warning` of type `mcp` (1.0.10 to 1.0.88 write them to the
/// session's events, in an interactive session; later releases keep them
/// off disk), as evidence: a server slow to connect, one that failed (its
/// reason read from the words after its name, never kept), one that wants
/// a login, servers a policy blocked, or servers Copilot gave up waiting
/// for.
fn mcp_warning(message: &str, at: Timestamp) -> Vec<tether_core::model::Evidence> {
    let mut out = Vec::new();
    if let Some(rest) = message.strip_prefix("MCP server ") {
        if let Some((server, after)) = quoted(rest) {
            if after.starts_with(" is taking longer than expected to connect") {
                out.push(slow(&server, at));
            } else if after.starts_with(" requires authentication") {
                out.push(status(&server, "needs-auth", at));
            }
        }
    } else if let Some(rest) = message.strip_prefix("Failed to connect to MCP server ")
        && let Some((server, after)) = quoted(rest)
    {
        // `: <the server's first stderr line>` (1.0.42 on), then
        // `. Execute '/mcp show …'`.
        let words = after
            .strip_prefix(": ")
            .map(|w| w.split(". Execute ").next().unwrap_or_default())
            .unwrap_or_default();
        out.push(crate::output::server_failed(&server, words, at));
    } else if let Some((_, names)) = message.split_once("blocked by policy: ") {
        for server in names
            .split(", ")
            .filter_map(|n| quoted(n.trim()).map(|q| q.0))
        {
            out.push(failed(&server, ReasonCode::DeniedByPolicy, None, at));
        }
    } else if let Some(rest) = message.strip_prefix("Gave up waiting for MCP server")
        && let Some((_, names)) = rest.split_once(" to finish starting: ")
        && let Some(names) = names.split(". Startup continued").next()
    {
        for server in names.split(", ").filter_map(name) {
            out.push(slow(&server, at));
        }
    }
    out
}

/// A name in single quotes (1.0.10) or JSON's double quotes (1.0.42 on),
/// and what follows it.
fn quoted(s: &str) -> Option<(String, &str)> {
    let close = match s.chars().next()? {
        '\'' => '\'',
        '"' => '"',
        _ => return None,
    };
    let (inner, after) = s[1..].split_once(close)?;
    Some((name(inner)?, after))
}

/// The body of a prompt's `<tools_changed_notice>` (Copilot 1.0.10 to
/// 1.0.92 name there the tools that changed since the last turn).
fn tools_changed_notice(prompt: &str) -> Option<&str> {
    let (_, rest) = prompt.split_once("<tools_changed_notice>")?;
    Some(rest.split_once("</tools_changed_notice>")?.0)
}

/// The names after `New tools available: ` in a notice: the tools the model
/// was sent from this turn on, by their model-facing names.
fn new_tools(notice: &str) -> impl Iterator<Item = &str> {
    notice
        .lines()
        .filter_map(|l| l.trim().strip_prefix("New tools available: "))
        .flat_map(|l| l.split(", "))
        .map(str::trim)
        .take(4096)
}

#[derive(Deserialize, Default)]
struct ErrorData<'a> {
    #[serde(borrow, default, deserialize_with = "loose::text")]
    message: Option<Cow<'a, str>>,
    /// `tool.execution_complete`: `denied` for a refused call, `failure`
    /// for a failed one (1.0.102).
    #[serde(borrow, default, deserialize_with = "loose::text")]
    code: Option<Cow<'a, str>>,
}

/// The exit status a hook error's message gives (`… failed with code 3`).
fn exit_code_in(message: &str) -> Option<i32> {
    let (_, rest) = message.split_once("with code ")?;
    rest.split(|c: char| !c.is_ascii_digit() && c != '-')
        .next()?
        .parse()
        .ok()
}

#[derive(Deserialize, Default)]
struct Context<'a> {
    #[serde(borrow, default, deserialize_with = "loose::text")]
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
    "permission.",
    "tool_search.",
    "external_tool.",
    "mcp.",
];

/// One event, its fields taken out by the fast path (borrowed, loose).
fn event(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    match serde_json::from_str::<Event<'_>>(record) {
        Ok(event) => placed(file, record, event),
        Err(error) => crate::output::unparsed(&error),
    }
}

/// What one event says, however its fields were taken out (the fast
/// path's borrowed struct or the plain path's `Value`, [`plain`]).
fn placed(file: &RecordFile<'_>, record: &str, event: Event<'_>) -> RecordAnswer {
    let output = file.role == OUTPUT || file.role == crate::output::CUT;
    // A transient event is no line of `events.jsonl`: a file holding them
    // is a run's printed output (read as such, by path).
    if !output && event.ephemeral == Some(true) {
        return RecordAnswer::Unknown;
    }
    let at = event
        .timestamp
        .as_deref()
        .and_then(Timestamp::parse_rfc3339);
    let mut reading = RecordReading::default();
    reading.at = at;
    if output
        && let Some(done) = crate::output::run(
            file,
            &event.kind,
            event.session_id.as_deref(),
            event.id.as_deref(),
            &mut reading,
        )
    {
        return done;
    }
    if !FAMILIES.iter().any(|f| event.kind.starts_with(f)) {
        return RecordAnswer::Unknown;
    }
    // `session.start` names the session; a later record joins it. Where no
    // earlier record did, the directory is the session (Copilot names it
    // so: `session-state/<session>/events.jsonl`).
    if !output && file.session.is_none() {
        reading.session = file.from_end(1).and_then(name);
    }
    let at = at.unwrap_or(Timestamp(0));
    if output && event.kind.starts_with("session.mcp_") {
        for evidence in crate::output_evidence(record, at) {
            push(&mut reading, evidence);
        }
        crate::output::failed_status(&mut reading, record, at);
        return answer(reading);
    }
    let Some(data) = event.data else {
        return answer(reading);
    };
    match event.kind.as_ref() {
        "session.start" => session_start(&mut reading, &data),
        "tool.execution_start" => execution_start(&mut reading, &data, at),
        "hook.end" => hook_end(&mut reading, &data, at),
        "session.warning" if data.warning_type.as_deref() == Some("mcp") => {
            if let Some(message) = data.message.as_deref() {
                for evidence in mcp_warning(message, at) {
                    push(&mut reading, evidence);
                }
            }
            if reading.evidence.is_empty() {
                return RecordAnswer::not_read("session.warning:mcp", reading.at);
            }
        }
        "session.warning" if data.warning_type.as_deref() == Some("policy") => {
            crate::output::policy_warning(
                &mut reading,
                data.message.as_deref(),
                file.configured,
                at,
            );
            if reading.evidence.is_empty() {
                return RecordAnswer::not_read("session.warning:policy", reading.at);
            }
        }
        "session.info" if data.info_type.as_deref() == Some("configuration") => {
            crate::output::disabled_tools(
                &mut reading,
                data.message.as_deref(),
                file.configured,
                at,
            );
        }
        // The turn's end where its model provider could not be reached:
        // report-level (no server's), in Tether's words.
        "session.error" if data.error_type.as_deref() == Some("query") => {
            reading.evidence.extend(
                data.message
                    .as_deref()
                    .and_then(|m| words::model_api(m, at)),
            );
        }
        "session.error" | "session.info" => {
            return match data.error_type.as_deref().or(data.info_type.as_deref()) {
                Some("mcp") => RecordAnswer::not_read(&format!("{}:mcp", event.kind), reading.at),
                _ => answer(reading),
            };
        }
        "user.message" => user_message(&mut reading, &data, file.configured, at),
        "permission.completed" => permission_completed(&mut reading, &data, at),
        // The call asks: its answer is `permission.completed`'s.
        "permission.requested" => {}
        // Other approvals (1.0.42 on: carried forward, authorizations, …)
        // and tool search: they bear on MCP calls, and are not read yet.
        kind if kind.starts_with("permission.") || kind == "tool_search.activated" => {
            return RecordAnswer::not_read(kind, reading.at);
        }
        "skill.invoked" | "skill.invoked_ref" => {
            skill_invoked_event(&mut reading, &data, event.id.as_deref(), at);
        }
        "tool.execution_complete" => {
            execution_complete(&mut reading, &data, file.configured, at);
        }
        _ => {}
    }
    answer(reading)
}

/// `session.start`: the session, Copilot's version and the session's
/// project.
fn session_start(reading: &mut RecordReading, data: &Data<'_>) {
    if let Some(session) = data.session_id.as_deref().and_then(name) {
        reading.session = Some(session);
    }
    reading.version = data.version.as_deref().and_then(version_of);
    reading.project = data
        .context
        .as_ref()
        .and_then(|c| c.cwd.as_deref())
        .and_then(project_of);
}

/// `tool.execution_start`: a call of an MCP server's tool, if it names one.
fn execution_start(reading: &mut RecordReading, data: &Data<'_>, at: Timestamp) {
    if let (Some(server), Some(tool)) = (
        data.config_server
            .as_deref()
            .or(data.server.as_deref())
            .and_then(name),
        data.tool.as_deref().and_then(name),
    ) {
        push(
            reading,
            call(&server, &tool, data.call.as_deref(), None, at),
        );
        // The server's transport, where Copilot names one Tether knows
        // (`memory`, an in-process server, is none of them).
        let transport = data
            .transport
            .as_deref()
            .and_then(tether_sdk::telemetry::transport_word);
        if let Some(named) = reading.servers.iter_mut().find(|s| s.name == server) {
            named.transport = named.transport.clone().or(transport);
        }
    }
}

/// `hook.end`: one run of all of an event's hooks: Copilot records the
/// run, not each command, and a failure's status is the one it names.
fn hook_end(reading: &mut RecordReading, data: &Data<'_>, at: Timestamp) {
    if let Some(kind) = data.hook_type.as_deref().and_then(name) {
        let code = data
            .error
            .as_ref()
            .and_then(|e| e.message.as_deref())
            .and_then(exit_code_in);
        let ended = match (data.success, code) {
            (Some(true), _) => UseOutcome::Succeeded,
            (_, Some(code)) => outcome_of_exit(code, None),
            _ => UseOutcome::Failed,
        };
        let hook = CapabilityEvent::hook(&kind, Some(&kind)).ended(ended, code);
        push(reading, hook_fired(hook, data.hook_run.as_deref(), at));
    }
}

/// `user.message`: the tools a "tools changed" notice says are new.
fn user_message(
    reading: &mut RecordReading,
    data: &Data<'_>,
    configured: &[String],
    at: Timestamp,
) {
    if let Some(notice) = data.transformed.as_deref().and_then(tools_changed_notice) {
        for full in new_tools(notice) {
            // `SERVER-TOOL`: split only where exactly one configured
            // server fits (a built-in tool fits none).
            if let Some((server, tool)) = split_against(full, "", "-", configured)
                && let Some(tool) = name(tool)
            {
                push(reading, visible(&server, &tool, at));
            }
        }
    }
}

/// `permission.completed`: a refusal of the call it names; an approval
/// says nothing its call's completion does not.
fn permission_completed(reading: &mut RecordReading, data: &Data<'_>, at: Timestamp) {
    if let (Some(id), Some(kind)) = (
        data.call.as_deref(),
        data.result.as_ref().and_then(|r| r.kind.as_deref()),
    ) && let Some(reason) = refused_kind(kind)
    {
        reading.evidence.extend(refusal(id, reason, at));
    }
}

/// `skill.invoked`: a skill loaded, in its plugin where it names one.
fn skill_invoked_event(
    reading: &mut RecordReading,
    data: &Data<'_>,
    id: Option<&str>,
    at: Timestamp,
) {
    if let Some(skill) = data.name.as_deref().and_then(name) {
        let mut skill = CapabilityEvent::skill(&skill);
        if let Some(plugin) = data.plugin.as_deref().and_then(name) {
            skill = skill.in_plugin(&plugin);
        }
        let skill = skill.ended(UseOutcome::Succeeded, None);
        push(reading, skill_invoked(skill, id, at));
    }
}

/// `tool.execution_complete`: a skill not found, or how a call ended.
fn execution_complete(
    reading: &mut RecordReading,
    data: &Data<'_>,
    configured: &[String],
    at: Timestamp,
) {
    if data.success == Some(false)
        && let Some(skill) = data
            .error
            .as_ref()
            .and_then(|e| e.message.as_deref())
            .and_then(|m| m.strip_prefix("Skill not found: "))
            .and_then(|m| name(m.trim()))
    {
        // The model asked for a skill Copilot does not have: a failed
        // invocation, named by Copilot's own message (nothing else of
        // it kept). A loaded skill is `skill.invoked`'s.
        let skill = CapabilityEvent::skill(&skill).ended(UseOutcome::Failed, None);
        push(reading, skill_invoked(skill, data.call.as_deref(), at));
    } else if let Some(missing) = data
        .error
        .as_ref()
        .and_then(|e| e.message.as_deref())
        .filter(|_| data.success == Some(false))
        .and_then(words::not_available)
    {
        not_available(reading, data.call.as_deref(), &missing, configured, at);
    } else {
        call_completed(reading, data, at);
    }
}

/// A call Copilot answered "no such tool": it reached no server and is no
/// use, no failure and no offer. Where its words name a server's tool (a
/// model-facing `SERVER-TOOL` that exactly one configured server fits, or
/// `… on SERVER: TOOL`), that tool was not available to Copilot then;
/// else the refusal is the call's alone.
fn not_available(
    reading: &mut RecordReading,
    id: Option<&str>,
    missing: &words::Missing<'_>,
    configured: &[String],
    at: Timestamp,
) {
    let named = match *missing {
        words::Missing::Named(full) => split_against(full, "", "-", configured),
        words::Missing::OnServer(server, tool) => name(server).map(|s| (s, tool)),
    };
    match named.and_then(|(server, tool)| Some((server, name(tool)?))) {
        Some((server, tool)) => push(
            reading,
            refused(&server, &tool, id, ReasonCode::ToolNotAvailable, at),
        ),
        None => reading
            .evidence
            .extend(id.and_then(|id| refusal(id, ReasonCode::ToolNotAvailable, at))),
    }
}

/// How a call ended: a call a person, a rule, a hook or a policy refused
/// never ran: a refusal, for the reason Copilot's words give (never
/// kept). A failure's category tells a tool error from a protocol error.
fn call_completed(reading: &mut RecordReading, data: &Data<'_>, at: Timestamp) {
    let message = data.error.as_ref().and_then(|e| e.message.as_deref());
    let code = data.error.as_ref().and_then(|e| e.code.as_deref());
    let properties = data.telemetry.as_ref().and_then(|t| t.properties.as_ref());
    let denied_stage = properties
        .and_then(|p| p.failure_stage.as_deref())
        .is_some_and(|s| s == "permission");
    if let Some(id) = data.call.as_deref() {
        let cancelled =
            message.is_some_and(|m| m.starts_with("The pending permission request was cancelled"));
        let done = match data.success {
            Some(false) if cancelled => None,
            Some(false) => match refused_by(message, code)
                .or_else(|| denied_stage.then_some(ReasonCode::PermissionDenied))
            {
                Some(reason) => refusal(id, reason, at),
                None => match properties.and_then(|p| p.failure_category.as_deref()) {
                    // Copilot's own words for a transport that closed or a
                    // deadline, before the category (`words::cause`).
                    _ if let Some(reason) = message.and_then(words::cause) => {
                        failed_with(id, reason, at)
                    }
                    Some("server_error") => failed_with(id, ReasonCode::ToolError, at),
                    Some(c) if c.starts_with("protocol_") => {
                        failed_with(id, ReasonCode::ProtocolError, at)
                    }
                    _ => outcome(id, false, at),
                },
            },
            Some(true) => outcome(id, true, at),
            None => None,
        };
        reading.evidence.extend(done);
    }
}

#[derive(Deserialize)]
struct Fields<'a> {
    #[serde(borrow, default, deserialize_with = "loose::text")]
    server_name: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "loose::text")]
    server: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "loose::text")]
    raw_error: Option<Cow<'a, str>>,
}

/// A process log's line, its fields (the JSON after the message) taken
/// out by the fast path.
fn process_log(record: &str) -> RecordAnswer {
    logged(record, |tail| {
        serde_json::from_str::<Fields<'_>>(tail).map_err(|e| Unparsed::of(&e))
    })
}

/// The process log's messages this reader reads, each by its fields: one
/// whose fields do not parse is said unparsed under its message, never
/// passed over as a line that says nothing (issue 68 §2).
const FIELDED: &[&str] = &[
    "MCP server connection failed",
    "reporting the server as needing auth",
    CHALLENGE,
];

/// A server's 401 or 403 challenge, as Copilot's process log writes it
/// (`words::challenge`).
const CHALLENGE: &str = " challenge (WWW-Authenticate: ";

/// What a process log's line says, its JSON fields taken out by `fields`
/// (the fast path's or the plain one's, [`plain`]).
fn logged<'r>(
    record: &'r str,
    fields: impl Fn(&'r str) -> Result<Fields<'r>, Unparsed>,
) -> RecordAnswer {
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
    // The run ended before its session began: no login (report-level).
    if let Some(said) = rest.strip_prefix("[ERROR] ")
        && let Some(error) = words::login(said, at)
    {
        reading.evidence.push(error);
        return answer(reading);
    }
    let tail = rest.find(" {").map(|i| &rest[i + 1..]);
    let message = rest.find(" {").map_or(rest, |i| &rest[..i]);
    if let Some(kind) = FIELDED.iter().find(|k| rest.contains(**k))
        && let Some(Err(why)) = tail.map(&fields)
    {
        let kind = Some((*kind).to_owned());
        return RecordAnswer::Unparsed { why, kind };
    }
    let fields = || tail.and_then(|t| fields(t).ok());
    if rest.contains("MCP server connection failed")
        && let Some(f) = fields()
        && let Some(server) = f.server_name.as_deref().and_then(name)
    {
        push(
            &mut reading,
            crate::output::server_failed(&server, f.raw_error.as_deref().unwrap_or_default(), at),
        );
    } else if rest.contains("reporting the server as needing auth")
        && let Some(f) = fields()
        && let Some(server) = f.server.as_deref().and_then(name)
    {
        push(&mut reading, status(&server, "needs-auth", at));
    } else if message.contains(CHALLENGE)
        && let Some((reason, words)) = words::challenge(message)
        && let Some(f) = fields()
        && let Some(server) = f.server.as_deref().and_then(name)
    {
        // The same refusal as the "needing auth" line beside it, and
        // which one it was: the row keeps the reason that says which.
        push(
            &mut reading,
            status(&server, "needs-auth", at).reason(reason, Some(words)),
        );
    }
    answer(reading)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_one(record: &str) -> RecordReading {
        let segments = vec![
            "session-state".to_owned(),
            "s1".to_owned(),
            "events.jsonl".to_owned(),
        ];
        let file = RecordFile {
            role: EVENTS,
            segments: &segments,
            session: None,
            configured: &[],
        };
        match read(&file, record) {
            RecordAnswer::Read(reading) => reading,
            other => panic!("{other:?}"),
        }
    }

    fn answer_to(record: &str, configured: &[String]) -> RecordAnswer {
        let segments = vec![
            "session-state".to_owned(),
            "s1".to_owned(),
            "events.jsonl".to_owned(),
        ];
        let file = RecordFile {
            role: EVENTS,
            segments: &segments,
            session: None,
            configured,
        };
        read(&file, record)
    }

    /// GIVEN events copied out of `session-state/<id>/` (by path, into a
    /// folder that is no session's) WHEN read THEN `session.start`'s
    /// `sessionId` is the session, and a later record names none of its
    /// own (it joins the one the file named); with no earlier name, the
    /// folder is the session, as Copilot lays it out.
    #[test]
    fn session_start_names_the_session_a_copy_belongs_to() {
        // Shape: a real 1.0.102 run's first line
        // (tests/fixtures/records-by-path/copilot-1.0.102-broken.events.jsonl).
        let start = r#"{"type":"session.start","data":{"sessionId":"dc3a2f52-55fb-4d07-9526-99d8f4807a7f","copilotVersion":"1.0.102","context":{"cwd":"/tmp/w/work"}},"id":"e0","timestamp":"2026-12-03T19:29:31.176Z","parentId":null}"#;
        let call = r#"{"type":"tool.execution_start","data":{"toolCallId":"c1","toolName":"count-stamp","mcpServerName":"count","mcpConfigServerName":"count","mcpToolName":"stamp"},"id":"e1","timestamp":"2026-12-03T19:29:31.300Z","parentId":"e0"}"#;
        let segments = vec!["elsewhere".to_owned(), "kept-run.jsonl".to_owned()];
        let file = |session| RecordFile {
            role: EVENTS,
            segments: &segments,
            session,
            configured: &[],
        };
        let session = |answer| match answer {
            RecordAnswer::Read(reading) => reading.session,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            session(read(&file(None), start)).as_deref(),
            Some("dc3a2f52-55fb-4d07-9526-99d8f4807a7f")
        );
        let named = Some("dc3a2f52-55fb-4d07-9526-99d8f4807a7f");
        assert_eq!(session(read(&file(named), call)), None);
        assert_eq!(
            session(read(&file(None), call)).as_deref(),
            Some("elsewhere")
        );
    }

    /// GIVEN a real 1.0.102 call's start (its `mcpTransport`) WHEN read
    /// THEN the server's row gets its transport; `memory` (in-process) or
    /// none gives it none.
    #[test]
    fn a_call_s_start_names_its_server_s_transport() {
        // Shape: tests/fixtures/records-by-path/copilot-1.0.102-broken.events.jsonl,
        // line 7 (arguments and title left out).
        let start = |transport: Option<&str>| {
            let mut data = serde_json::json!({"toolCallId": "call_fake1", "toolName": "count-stamp",
                "mcpServerName": "count", "mcpConfigServerName": "count",
                "mcpConfigSource": "user", "mcpToolName": "stamp"});
            if let Some(t) = transport {
                data["mcpTransport"] = t.into();
            }
            serde_json::json!({"type": "tool.execution_start", "data": data, "id": "e1",
                "timestamp": "2026-12-03T19:29:31.300Z", "parentId": null})
            .to_string()
        };
        let transport = |record: String| {
            let reading = read_one(&record);
            assert_eq!(reading.servers.len(), 1, "{reading:?}");
            reading.servers[0].transport.clone()
        };
        use tether_core::vocab::Transport;
        assert_eq!(transport(start(Some("stdio"))), Some(Transport::Stdio));
        assert_eq!(transport(start(Some("http"))), Some(Transport::Http));
        assert_eq!(transport(start(Some("sse"))), Some(Transport::Sse));
        assert_eq!(transport(start(Some("memory"))), None);
        assert_eq!(transport(start(None)), None);
    }

    fn warning(message: &str) -> String {
        serde_json::json!({
            "type": "session.warning",
            "data": {"warningType": "mcp", "message": message},
            "id": "e1",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "parentId": null
        })
        .to_string()
    }

    /// (server, reported status, reason, note) of each piece of evidence.
    fn said(reading: &RecordReading) -> Vec<(String, String, Option<String>, Option<String>)> {
        reading
            .evidence
            .iter()
            .map(|e| {
                (
                    e.server.clone().unwrap_or_default(),
                    e.reported_status.clone().unwrap_or_default(),
                    e.reason_code.as_ref().map(|r| r.as_str().to_owned()),
                    e.summary.clone(),
                )
            })
            .collect()
    }

    /// GIVEN the MCP warnings Copilot CLI 1.0.10 to 1.0.88 write to an
    /// interactive session's events (single-quoted names in 1.0.10,
    /// JSON-quoted with the server's first stderr line from 1.0.42) WHEN
    /// they are read THEN each names its server: failed with a reason read
    /// from the words (never the words), wanting a login, blocked by
    /// policy, or slow (a note, not a failure).
    #[test]
    fn mcp_warnings_name_failed_slow_and_blocked_servers() {
        let cases = [
            (
                "Failed to connect to MCP server 'github'. Execute '/mcp show github' to inspect or check the logs.",
                vec![("github", "failed", Some("agent_reported_failed"), None)],
            ),
            (
                "Failed to connect to MCP server \"broken\": spawn /home/me/planted-secret-xyz ENOENT. Execute '/mcp show broken' to inspect or check the logs.",
                vec![("broken", "failed", Some("command_not_found"), None)],
            ),
            (
                "Failed to connect to MCP server \"db\": MCP error -32000: Connection closed. Execute '/mcp show db' to inspect or check the logs.",
                vec![("db", "failed", Some("connection_closed"), None)],
            ),
            (
                "MCP server 'agent-intercom' is taking longer than expected to connect.",
                vec![("agent-intercom", "pending", None, Some(SLOW))],
            ),
            (
                "MCP server 'authy' requires authentication. Use /mcp auth authy to connect.",
                vec![("authy", "needs-auth", None, None)],
            ),
            (
                "2 MCP servers were blocked by policy: 'a', 'b'",
                vec![
                    ("a", "failed", Some("denied_by_policy"), None),
                    ("b", "failed", Some("denied_by_policy"), None),
                ],
            ),
            (
                "Gave up waiting for MCP servers to finish starting: slow1, slow2. Startup continued without them; they may still connect.",
                vec![
                    ("slow1", "pending", None, Some(SLOW)),
                    ("slow2", "pending", None, Some(SLOW)),
                ],
            ),
        ];
        for (message, want) in cases {
            let RecordAnswer::Read(reading) = answer_to(&warning(message), &[]) else {
                panic!("not read: {message}");
            };
            let want: Vec<_> = want
                .into_iter()
                .map(|(s, st, r, n)| {
                    (
                        s.to_owned(),
                        st.to_owned(),
                        r.map(str::to_owned),
                        n.map(str::to_owned),
                    )
                })
                .collect();
            assert_eq!(said(&reading), want, "{message}");
            assert!(!format!("{reading:?}").contains("planted"), "{reading:?}");
        }
        // A warning about MCP that names no server is counted, not read.
        assert_eq!(
            answer_to(&warning("MCP Servers reloaded: 2 servers connected"), &[]),
            RecordAnswer::not_read(
                "session.warning:mcp",
                Timestamp::parse_rfc3339("2026-01-01T00:00:00.000Z")
            )
        );
    }

    const SLOW: &str = tether_sdk::records::SLOW_TO_CONNECT;

    /// GIVEN a prompt whose `<tools_changed_notice>` (Copilot 1.0.10 to
    /// 1.0.92) names new tools by their model-facing names WHEN it is read
    /// with `time` configured THEN time's tools reached the model; a
    /// built-in tool, and a name no single configured server fits, give
    /// nothing; no word of the prompt is kept.
    #[test]
    fn a_tools_changed_notice_shows_the_tools_the_model_was_sent() {
        let record = serde_json::json!({
            "type": "user.message",
            "data": {
                "content": "planted prompt",
                "transformedContent": "<current_datetime>x</current_datetime>\n\n<tools_changed_notice>\nNew tools available: time-get_current_time, time-convert_time, view, a-b-tool\n\nTools no longer available: time-old\n</tools_changed_notice>\n\n<prompt>planted prompt</prompt>",
            },
            "id": "e2",
            "timestamp": "2026-01-01T00:00:01.000Z",
            "parentId": "e1"
        })
        .to_string();
        let configured = ["time".to_owned(), "a".to_owned(), "a-b".to_owned()];
        let RecordAnswer::Read(reading) = answer_to(&record, &configured) else {
            panic!("not read");
        };
        let visible: Vec<_> = reading
            .evidence
            .iter()
            .map(|e| {
                assert_eq!(e.kind, tether_core::vocab::EvidenceKind::ToolVisible);
                (
                    e.server.clone().unwrap_or_default(),
                    e.tool.clone().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            visible,
            [
                ("time".to_owned(), "get_current_time".to_owned()),
                ("time".to_owned(), "convert_time".to_owned())
            ]
        );
        assert!(!format!("{reading:?}").contains("planted"));
    }

    /// GIVEN the approvals Copilot CLI 1.0.102 writes (as in the real
    /// runs: a `-p` run with no one to ask, a `--deny-tool` rule, a
    /// preToolUse hook's deny, a person's no, enterprise policy) and the
    /// completions of calls that failed (`isError`, a JSON-RPC error) WHEN
    /// they are read THEN each refusal is one, with its reason and never an
    /// outcome; a tool error and a protocol error are failures with their
    /// reasons; a cancelled request and other approval kinds give no
    /// refusal; no planted word reaches the reading; tool search is counted
    /// not read; a repeated skill (`skill.invoked_ref`, 1.0.87 on) is a
    /// skill invoked.
    #[test]
    fn approvals_refusals_and_failures_read_apart() {
        use tether_core::vocab::EvidenceKind;
        let at = Timestamp::parse_rfc3339("2026-01-01T00:00:02.000Z");
        assert_eq!(
            answer_to(
                r#"{"type":"tool_search.activated","data":{"requestId":"r1"},"id":"e3","timestamp":"2026-01-01T00:00:02.000Z","parentId":null}"#,
                &[]
            ),
            RecordAnswer::not_read("tool_search.activated", at)
        );
        let one = |record: String| -> Vec<(EvidenceKind, Option<bool>, Option<ReasonCode>)> {
            match answer_to(&record, &[]) {
                RecordAnswer::Read(r) => {
                    assert!(!format!("{r:?}").contains("planted"), "{r:?}");
                    r.evidence
                        .iter()
                        .map(|e| (e.kind.clone(), e.ok, e.reason_code.clone()))
                        .collect()
                }
                _ => Vec::new(),
            }
        };
        for (kind, want) in [
            (
                "denied-no-approval-rule-and-could-not-request-from-user",
                Some(ReasonCode::ApprovalRequired),
            ),
            ("denied-by-rules", Some(ReasonCode::PermissionDenied)),
            (
                "denied-interactively-by-user",
                Some(ReasonCode::PermissionDenied),
            ),
            (
                "denied-by-permission-request-hook",
                Some(ReasonCode::BlockedByHook),
            ),
            (
                "denied-by-content-exclusion-policy",
                Some(ReasonCode::DeniedByPolicy),
            ),
            ("approved", None),
            ("cancelled", None),
        ] {
            let record = serde_json::json!({
                "type": "permission.completed",
                "data": {"requestId": "r1", "toolCallId": "call_9", "result": {"kind": kind, "message": "planted"}, "decisionSource": "unattended_fallback"},
                "id": "e4", "timestamp": "2026-01-01T00:00:03.000Z", "parentId": null
            });
            let got = one(record.to_string());
            let want: Vec<_> = want
                .into_iter()
                .map(|r| (EvidenceKind::ToolCallRefused, None, Some(r)))
                .collect();
            assert_eq!(got, want, "{kind}");
        }
        let requested = serde_json::json!({
            "type": "permission.requested",
            "data": {"requestId": "r1", "permissionRequest": {"kind": "mcp", "toolCallId": "call_9", "args": {"planted": 1}}},
            "id": "e4", "timestamp": "2026-01-01T00:00:03.000Z", "parentId": null
        });
        assert!(one(requested.to_string()).is_empty());
        let refused = |r| vec![(EvidenceKind::ToolCallRefused, None, Some(r))];
        let failed = |r: Option<ReasonCode>| vec![(EvidenceKind::ToolCallObserved, Some(false), r)];
        for (message, code, category, want) in [
            (
                "The user rejected this tool call.",
                "denied",
                None,
                refused(ReasonCode::PermissionDenied),
            ),
            (
                "Permission to run this tool was denied due to the following rules: `planted(x)`",
                "denied",
                Some(("permission_denied", "permission")),
                refused(ReasonCode::PermissionDenied),
            ),
            (
                "Permission denied because no interactive user response was available. planted",
                "denied",
                Some(("permission_denied", "permission")),
                refused(ReasonCode::ApprovalRequired),
            ),
            (
                "Denied by preToolUse hook: planted",
                "denied",
                None,
                refused(ReasonCode::BlockedByHook),
            ),
            (
                "Blocked by enterprise MCP policy",
                "denied",
                None,
                refused(ReasonCode::DeniedByPolicy),
            ),
            (
                "planted words of a refusal",
                "denied",
                None,
                refused(ReasonCode::PermissionDenied),
            ),
            (
                "The pending permission request was cancelled before the tool could continue.",
                "denied",
                None,
                Vec::new(),
            ),
            (
                "MCP server 'count': planted",
                "failure",
                Some(("server_error", "invoke")),
                failed(Some(ReasonCode::ToolError)),
            ),
            (
                "MCP server 'count': McpError: MCP error -32602: planted",
                "failure",
                Some(("protocol_invalid_params", "invoke")),
                failed(Some(ReasonCode::ProtocolError)),
            ),
            ("planted server error", "failure", None, failed(None)),
        ] {
            let mut data = serde_json::json!({"toolCallId": "call_9", "success": false, "error": {"message": message, "code": code}});
            if let Some((category, stage)) = category {
                data["toolTelemetry"] = serde_json::json!({"properties": {"failure_category": category, "failure_stage": stage}});
            }
            let record = serde_json::json!({
                "type": "tool.execution_complete", "data": data,
                "id": "e5", "timestamp": "2026-01-01T00:00:04.000Z", "parentId": null
            });
            assert_eq!(one(record.to_string()), want, "{message}");
        }
        let skill = read_one(
            r#"{"type":"skill.invoked_ref","id":"e4","timestamp":"2026-01-01T00:00:03.000Z","data":{"name":"greet","path":"/p","contentId":"sha256:00","contentLength":3}}"#,
        );
        let cap = skill.evidence[0].capability.as_deref().expect("a skill");
        assert_eq!(cap.name, "greet");
    }

    #[test]
    fn hook_runs_and_skills_read_names_and_exit_codes_only() {
        let hook = read_one(
            r#"{"type":"hook.end","timestamp":"2026-12-03T02:00:00.466Z","data":{"hookInvocationId":"h1","hookType":"sessionStart","success":false,"error":{"message":"Error: Hook command failed with code 127\nStderr: /home/me/secret-token-x: No such file","source":"global settings"}}}"#,
        );
        let cap = hook.evidence[0].capability.as_deref().expect("a hook");
        assert_eq!(cap.name, "sessionStart");
        assert_eq!(cap.outcome, Some(UseOutcome::CommandNotFound));
        assert_eq!(cap.exit_code, Some(127));
        assert!(!format!("{hook:?}").contains("secret-token"));
        let loaded = read_one(
            r#"{"type":"skill.invoked","id":"e1","timestamp":"2026-12-03T02:00:09.700Z","data":{"name":"greet","path":"/home/me/x/SKILL.md","content":"planted body","pluginName":"demo","description":"planted prose"}}"#,
        );
        let cap = loaded.evidence[0].capability.as_deref().expect("a skill");
        assert_eq!(
            (cap.name.as_str(), cap.plugin.as_deref()),
            ("greet", Some("demo"))
        );
        assert!(!format!("{loaded:?}").contains("planted"));
        let missing = read_one(
            r#"{"type":"tool.execution_complete","timestamp":"2026-12-03T02:00:09.700Z","data":{"toolCallId":"call_1","success":false,"error":{"message":"Skill not found: demo:greet","code":"failure"}}}"#,
        );
        let cap = missing.evidence[0].capability.as_deref().expect("a skill");
        assert_eq!(cap.name, "demo:greet");
        assert_eq!(cap.outcome, Some(UseOutcome::Failed));
    }
}
