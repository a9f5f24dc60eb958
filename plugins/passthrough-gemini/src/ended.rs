//! How a call that did not succeed ended, in Gemini CLI's and Qwen Code's
//! own words (scanned, never kept): read by the chat records, the
//! stream-json and the telemetry, so it lives apart from each.

use std::borrow::Cow;

use serde::Deserialize;
use tether_core::vocab::ReasonCode;

/// Words, or anything else (a diff, parts, an object): only words are
/// scanned by the helpers here.
#[derive(Deserialize)]
#[serde(untagged)]
pub(crate) enum Words<'a> {
    Words(#[serde(borrow)] Cow<'a, str>),
    Other(serde::de::IgnoredAny),
}

impl Words<'_> {
    /// The words, where they are words.
    pub(crate) fn text(&self) -> Option<&str> {
        match self {
            Words::Words(w) => Some(w),
            Words::Other(_) => None,
        }
    }
}

/// How a call that did not succeed ended, as its record says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ended {
    /// It ran and succeeded.
    Succeeded,
    /// The harness refused it before it reached the server.
    Refused(ReasonCode),
    /// It reached the server and failed (`tool_error` where the words say
    /// the server answered `isError`).
    Failed(Option<ReasonCode>),
    /// Nothing says whether it ran or how it ended.
    Unknown,
}

/// Gemini CLI's own words for a call that ended in `error` (core 0.61:
/// scheduler/policy.js `getPolicyDenialError` and `checkPolicy`,
/// scheduler/hook-utils.js, tools/mcp-tool.js): scanned, never kept.
/// - "Tool execution denied by policy." is the policy engine's deny rule:
///   a rule of the user's, the workspace's, an extension's or the admin
///   tier, which the record does not tell apart, so `permission_denied`
///   (the harness's rules), never claimed as managed policy;
/// - "Tool execution blocked: …" is a BeforeTool hook's block;
/// - "Tool execution for \"…\" requires user confirmation, which is not
///   supported in non-interactive mode." is an ask rule in a `-p` run;
/// - "Agent execution stopped by hook: …" is a hook's stop, before the
///   call or after it ran (AfterTool): unknown, never a refusal;
/// - "Error: MCP tool '…' reported an error." (the record) or
///   "MCP tool '…' reported tool error" (telemetry) is the server's
///   `isError`.
pub(crate) fn gemini_ended(words: Option<&str>) -> Ended {
    let Some(words) = words else {
        return Ended::Failed(None);
    };
    if words.starts_with("Tool execution denied by policy.") {
        Ended::Refused(ReasonCode::PermissionDenied)
    } else if words.starts_with("Tool execution blocked:") {
        Ended::Refused(ReasonCode::BlockedByHook)
    } else if words.starts_with("Tool execution for \"")
        && words
            .contains("requires user confirmation, which is not supported in non-interactive mode")
    {
        Ended::Refused(ReasonCode::ApprovalRequired)
    } else if words.starts_with("Agent execution stopped by hook:") {
        Ended::Unknown
    } else if (words.starts_with("Error: MCP tool '") && words.ends_with("' reported an error."))
        || (words.starts_with("MCP tool '") && words.contains("' reported tool error"))
    {
        Ended::Failed(Some(ReasonCode::ToolError))
    } else {
        Ended::Failed(None)
    }
}

/// A cancelled call (core 0.61 scheduler/state-manager.js `toCancelled`):
/// "[Operation Cancelled] Reason: User denied execution." is the user's
/// no at the prompt (`permission_denied`); any other reason (the run
/// aborted, Ctrl-C) says nothing of whether it ran: unknown.
pub(crate) fn gemini_cancelled(result_error: Option<&str>) -> Ended {
    match result_error {
        Some("[Operation Cancelled] Reason: User denied execution.") => {
            Ended::Refused(ReasonCode::PermissionDenied)
        }
        _ => Ended::Unknown,
    }
}

/// Qwen Code's own words for a call of `errorType` `execution_denied`
/// (0.15.10 cli.js 222290-222560, 222849; 0.24.4 the same, with
/// `executionStatus`): scanned, never kept. A deny rule ("Qwen Code
/// requires permission to use \"…\", but that permission was declined.",
/// "Tool \"…\" is denied…") is `permission_denied`; the same words with
/// "(non-interactive mode cannot prompt for confirmation)", or a background
/// agent that "cannot prompt for confirmation", `approval_required`; a
/// PermissionRequest hook's "Permission denied by hook for \"…\"" or a
/// PreToolUse hook's "Tool execution blocked by hook" `blocked_by_hook`.
/// Any other words are a hook's own: a PreToolUse block where 0.24's
/// `executionStatus` says `not_started`, otherwise (0.15, which also
/// writes a PostToolUse hook's stop, after the call ran, this way)
/// unknown.
pub(crate) fn qwen_denied(words: Option<&str>, not_started: bool) -> Ended {
    let words = words.unwrap_or_default();
    if words.contains("cannot prompt for confirmation") {
        Ended::Refused(ReasonCode::ApprovalRequired)
    } else if words.starts_with("Qwen Code requires permission to use \"")
        || (words.starts_with("Tool \"") && words.contains("\" is denied"))
    {
        Ended::Refused(ReasonCode::PermissionDenied)
    } else if words.starts_with("Permission denied by hook for \"")
        || words == "Tool execution blocked by hook"
        || not_started
    {
        Ended::Refused(ReasonCode::BlockedByHook)
    } else {
        Ended::Unknown
    }
}
