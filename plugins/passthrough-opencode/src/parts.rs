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
/// The start of a JSON-RPC error's words (the MCP SDK's `McpError`).
pub(crate) const PROTOCOL_ERROR: &str = "MCP error -";

/// How a call OpenCode stored as an error ended, in its words (the
/// database's tools' query says it in SQL, [`error_word`] in Rust, from the
/// same words): a call OpenCode's permissions refused is stored as an error
/// (1.18.33's `PermissionDeniedError`, `PermissionRejectedError`,
/// `PermissionCorrectedError`):
/// - [`DENIED_BY_RULE`]…: a rule's `deny` (`permission_denied`);
/// - [`REJECTED`] with a full stop and nothing more, in a session `opencode
///   run` made: `run` rejects every `ask` itself, no one to answer it
///   (`approval_required`);
/// - the same words elsewhere, or with a person's feedback: a person said
///   no (`permission_denied`).
///
/// A JSON-RPC error's [`PROTOCOL_ERROR`]… is `protocol_error`.
pub(crate) const REFUSED_BY_RULE: &str = "refused:permission_denied";
pub(crate) const REFUSED_BY_RUN: &str = "refused:approval_required";
pub(crate) const FAILED_IN_PROTOCOL: &str = "error:protocol_error";

/// The word for a call stored as an error with `error` as its words, in a
/// session `opencode run` made (`by_run`) or not: the same as the tools'
/// query's fifth column.
pub(crate) fn error_word(error: &str, by_run: bool) -> &'static str {
    if error.starts_with(DENIED_BY_RULE) {
        REFUSED_BY_RULE
    } else if by_run && error.strip_prefix(REJECTED) == Some(".") {
        REFUSED_BY_RUN
    } else if error.starts_with(REJECTED) {
        REFUSED_BY_RULE
    } else if error.starts_with(PROTOCOL_ERROR) {
        FAILED_IN_PROTOCOL
    } else {
        "error"
    }
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
    /// The skill's name, for the `skill` tool alone.
    pub skill: Option<&'a str>,
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
        Some(REFUSED_BY_RUN) => (None, None, Some(ReasonCode::ApprovalRequired)),
        // `refused:permission_denied`, and `refused` (the query before
        // reasons were told apart).
        Some(word) if word.starts_with("refused") => {
            (None, None, Some(ReasonCode::PermissionDenied))
        }
        _ => (None, None, None),
    };
    if part.tool == SKILL_TOOL {
        if let Some(skill) = part.skill.and_then(name) {
            let mut skill = CapabilityEvent::skill(&skill);
            if let Some(ok) = ok {
                skill = skill.ended(outcome_of_ok(ok), None);
            }
            push(reading, skill_invoked(skill, part.call_id, at));
        }
        return;
    }
    // Native tools (`bash`, `read`) fit no configured server.
    let Some((server, tool)) = split_against(part.tool, "", "_", configured) else {
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
