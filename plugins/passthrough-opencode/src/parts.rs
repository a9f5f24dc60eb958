//! One tool part of OpenCode's, as the database's tools' query gives it
//! (`records`) or a line `opencode run --format json` printed gives it
//! (`stream_json`): how its call ended, told by OpenCode's own words, and
//! what it says (a skill invoked, a call used, failed or refused). Both
//! readers use it; it uses neither.

use tether_core::capability::{CapabilityEvent, outcome_of_ok};
use tether_core::model::Timestamp;
use tether_core::records::{RecordReading, name};
use tether_core::vocab::ReasonCode;
use tether_sdk::records::{call, push, refused, skill_invoked};
use tether_sdk::telemetry::split_against;

/// The start of the words 1.18.33's `PermissionDeniedError` stores as a
/// refused call's error: a rule's `deny`.
pub(crate) const DENIED_BY_RULE: &str =
    "The user has specified a rule which prevents you from using this specific tool call";
/// The start of the words 1.18.33's `PermissionRejectedError` and
/// `PermissionCorrectedError` store: someone (or `opencode run` itself)
/// said no to an `ask`; followed by a person's feedback where one was given.
pub(crate) const REJECTED: &str = "The user rejected permission to use this specific tool call";
/// The start of a JSON-RPC error's words (the MCP SDK's `McpError`, whose
/// message is `MCP error ${code}: ${message}`; 1.18.33's bundle).
pub(crate) const PROTOCOL_ERROR: &str = "MCP error -";
/// The MCP SDK's words (bundled in 1.18.33) for a request that had no
/// answer within OpenCode's `timeout` for the server (its
/// `experimental.mcp_timeout`, else the SDK's 60 s): `RequestTimeout`
/// (-32001), "Request timed out".
pub(crate) const TIMED_OUT: &str = "MCP error -32001: Request timed out";
/// The same code's words when progress kept resetting the clock past its
/// total (`resetTimeoutOnProgress`, which OpenCode's `callTool` sets).
pub(crate) const TOTAL_TIMEOUT: &str = "MCP error -32001: Maximum total timeout exceeded";
/// The MCP SDK's words for every request still waiting when the
/// connection closed (the server exited, its stream ended):
/// `ConnectionClosed` (-32000). A server's own -32000 has other words.
pub(crate) const CLOSED: &str = "MCP error -32000: Connection closed";

/// How a call OpenCode stored as an error ended, in its words (the
/// database's tools' query says it in SQL, [`error_word`] in Rust, both
/// from [`ERROR_WORDS`]): a call OpenCode's permissions refused is stored
/// as an error (1.18.33's `PermissionDeniedError`,
/// `PermissionRejectedError`, `PermissionCorrectedError`):
/// - [`DENIED_BY_RULE`]…: a rule's `deny` (`permission_denied`);
/// - [`REJECTED`] with a full stop and nothing more, in a session `opencode
///   run` made: `run` rejects every `ask` itself, no one to answer it
///   (`approval_required`);
/// - the same words elsewhere, or with a person's feedback: a person said
///   no (`permission_denied`).
pub(crate) const REFUSED_BY_RULE: &str = "refused:permission_denied";
/// [`REJECTED`] alone, in a session `opencode run` made.
pub(crate) const REFUSED_BY_RUN: &str = "refused:approval_required";
/// A JSON-RPC error's [`PROTOCOL_ERROR`]…, other than the SDK's own below.
pub(crate) const FAILED_IN_PROTOCOL: &str = "error:protocol_error";
/// [`TIMED_OUT`] or [`TOTAL_TIMEOUT`].
pub(crate) const FAILED_IN_TIME: &str = "error:timeout";
/// [`CLOSED`].
pub(crate) const FAILED_CLOSED: &str = "error:connection_closed";
/// The model called a tool OpenCode did not have ([`INVALID_TOOL`]).
pub(crate) const REFUSED_UNAVAILABLE: &str = "refused:tool_not_available";

/// Words OpenCode stores as a failed call's error, matched as a prefix
/// (`true`) or whole, in the order they are tried (after the run-made
/// rejection), each with its word.
pub(crate) const ERROR_WORDS: &[(&str, bool, &str)] = &[
    (DENIED_BY_RULE, true, REFUSED_BY_RULE),
    (REJECTED, true, REFUSED_BY_RULE),
    (TIMED_OUT, false, FAILED_IN_TIME),
    (TOTAL_TIMEOUT, false, FAILED_IN_TIME),
    (CLOSED, false, FAILED_CLOSED),
    (PROTOCOL_ERROR, true, FAILED_IN_PROTOCOL),
];

/// The word for a call stored as an error with `error` as its words, in a
/// session `opencode run` made (`by_run`) or not: the same as the tools'
/// query's fifth column.
pub(crate) fn error_word(error: &str, by_run: bool) -> &'static str {
    if by_run && error.strip_prefix(REJECTED) == Some(".") {
        return REFUSED_BY_RUN;
    }
    ERROR_WORDS
        .iter()
        .find(|(words, prefix, _)| match prefix {
            true => error.starts_with(words),
            false => error == *words,
        })
        .map_or("error", |(_, _, word)| word)
}

/// OpenCode's own tool for a call the model made of a tool it does not
/// have (1.18.33: its `experimental_repairToolCall` renames such a call
/// `invalid`, its input `{tool, error}`: the name the model asked for and
/// the AI SDK's `NoSuchToolError` words, [`UNAVAILABLE`]…; the tool only
/// answers "The arguments provided to the tool are invalid: …"). Its
/// other use, input that failed the tool's schema, is no refusal.
pub(crate) const INVALID_TOOL: &str = "invalid";
/// The start of the AI SDK's `NoSuchToolError` words, as bundled in
/// 1.18.33: "Model tried to call unavailable tool '${toolName}'. …".
pub(crate) const UNAVAILABLE: &str = "Model tried to call unavailable tool ";

/// The word for an [`INVALID_TOOL`] part whose input's `error` is `error`.
pub(crate) fn invalid_word(error: &str) -> Option<&'static str> {
    error
        .starts_with(UNAVAILABLE)
        .then_some(REFUSED_UNAVAILABLE)
}

/// The tool OpenCode's model calls to load a skill (its `name` the only
/// input the tools' query reads, for this tool alone).
pub(crate) const SKILL_TOOL: &str = "skill";

/// One tool part, as the database's query or a printed line gives it.
pub(crate) struct ToolPart<'a> {
    /// OpenCode's name for the tool (`SERVER_TOOL` for an MCP tool).
    pub tool: &'a str,
    /// The model's id for the call.
    pub call_id: Option<&'a str>,
    /// How it ended: `completed`, `running`, or an error's word
    /// ([`error_word`]).
    pub ended: Option<&'a str>,
    /// The name its input gives, for two tools alone: the skill's for
    /// [`SKILL_TOOL`], the tool the model asked for for [`INVALID_TOOL`].
    pub named: Option<&'a str>,
}

/// What one tool part says: a skill invoked, or a call of a configured
/// server's tool (used, failed, refused).
pub(crate) fn tool_part(
    reading: &mut RecordReading,
    part: &ToolPart<'_>,
    configured: &[String],
    at: Timestamp,
) {
    // The call's outcome, where its part says (running: not yet); a call
    // its permissions refused never ran: a refusal.
    let (ok, reason, refused_for) = match part.ended {
        Some("completed") => (Some(true), None, None),
        Some("error") => (Some(false), None, None),
        Some(FAILED_IN_PROTOCOL) => (Some(false), Some(ReasonCode::ProtocolError), None),
        Some(FAILED_IN_TIME) => (Some(false), Some(ReasonCode::Timeout), None),
        Some(FAILED_CLOSED) => (Some(false), Some(ReasonCode::ConnectionClosed), None),
        Some(REFUSED_UNAVAILABLE) => (None, None, Some(ReasonCode::ToolNotAvailable)),
        Some(REFUSED_BY_RUN) => (None, None, Some(ReasonCode::ApprovalRequired)),
        // `refused:permission_denied`, and `refused` (the query before
        // reasons were told apart).
        Some(word) if word.starts_with("refused") => {
            (None, None, Some(ReasonCode::PermissionDenied))
        }
        _ => (None, None, None),
    };
    if part.tool == SKILL_TOOL {
        if let Some(skill) = part.named.and_then(name) {
            let mut skill = CapabilityEvent::skill(&skill);
            if let Some(ok) = ok {
                skill = skill.ended(outcome_of_ok(ok), None);
            }
            push(reading, skill_invoked(skill, part.call_id, at));
        }
        return;
    }
    // A call of a tool OpenCode did not have reached no server: where the
    // name asked for is a configured server's tool, that tool was not
    // available then; any other use of `invalid` says nothing of a server.
    let asked = match part.tool {
        INVALID_TOOL if part.ended == Some(REFUSED_UNAVAILABLE) => part.named,
        INVALID_TOOL => None,
        tool => Some(tool),
    };
    // Native tools (`bash`, `read`) fit no configured server.
    let Some((server, tool)) = asked.and_then(|t| split_against(t, "", "_", configured)) else {
        return;
    };
    let Some(tool) = name(tool) else {
        return;
    };
    let evidence = match refused_for {
        Some(why) => refused(&server, &tool, part.call_id, why, at),
        None => {
            let mut made = call(&server, &tool, part.call_id, ok, at);
            made.reason_code = reason;
            made
        }
    };
    push(reading, evidence);
}
