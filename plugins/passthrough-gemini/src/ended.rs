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
    if gemini_no_such_tool(words) {
        Ended::Refused(ReasonCode::ToolNotAvailable)
    } else if words.starts_with("Tool execution denied by policy.") {
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

/// Whether Gemini CLI's words say the model called a tool it does not
/// hold ("no such tool"): the call reached no server, and the tool was not
/// available to the harness then. Its shipped code's wordings, each with
/// the error type `tool_not_registered`:
/// - `Tool "NAME" not found in registry. Tools must use the exact names
///   that are registered.` and a suggestion: core 0.10.0 and 0.30.0
///   core/coreToolScheduler.js (`schedule`);
/// - `Tool "NAME" not found.` and ` Did you mean …?`: core 0.30.0
///   scheduler/scheduler.js, the 0.45.2 and 0.61.0 bundles
///   (`_createToolNotFoundErroredToolCall`, 0.61.0 chunk-5FZXKDXH.js
///   351338); seen in a real 0.61.0 run, chat and stream-json alike;
/// - `Tool "NAME" not found in registry.`: the ACP agent (0.10.0 and
///   0.30.0 zed-integration/zedIntegration.js, 0.61.0 bundle
///   gemini-3HFX2LNT.js 15596).
///
/// Qwen Code, its fork, words it the same (0.15.10 cli.js 222206, 0.24.4
/// chunk-DPEB6S2R.js 58320, `getToolNotFoundMessage`), and 0.24.4 adds
/// `Tool "NAME" not found: no MCP server providing it is currently
/// configured.` (58351) and `Tool "NAME" not found on MCP server "S".`
/// (58363).
pub(crate) fn gemini_no_such_tool(words: &str) -> bool {
    const ENDS: &[&str] = &[
        "\" not found.",
        "\" not found in registry.",
        "\" not found: no MCP server providing it",
        "\" not found on MCP server \"",
    ];
    words.starts_with("Tool \"") && ENDS.iter().any(|end| words.contains(end))
}

/// Why Gemini CLI's words say an MCP call failed after it was sent, where
/// they name the MCP SDK's error (`McpError`: `MCP error CODE: MESSAGE`,
/// 0.61.0 chunk-5FZXKDXH.js 304307): `-32001` its request timeout (the
/// server's `timeout` setting), `-32000` the connection closed, any other
/// code a JSON-RPC error the server answered. Where the words are:
/// - 0.30.0 on (core tools/mcp-client.js `McpCallableTool.callTool`, 0.61.0
///   chunk-5FZXKDXH.js 375621) the SDK's error is caught and handed back as
///   the response `{"error":{"message":…,"isError":true}}`, so the call
///   reads as the server's `isError` (`mcp_tool_error`, "MCP tool 'T'
///   reported tool error for function call: ARGS with response: PARTS"):
///   the message is read from PARTS; seen in real 0.61.0 runs (a server
///   that never answers with `timeout` 1500, one that exits on the call,
///   one that answers a JSON-RPC error);
/// - before (0.10.0 @google/genai `mcpToTool`) the error is thrown, and its
///   words are the call's own (`unhandled_exception`).
///
/// `None` for any other words, a server's own `isError` among them.
pub(crate) fn gemini_mcp_failure(words: &str) -> Option<ReasonCode> {
    if words.starts_with(MCP_ERROR) {
        return mcp_error_reason(words);
    }
    if !(words.starts_with("MCP tool '")
        && words.contains("' reported tool error for function call: "))
    {
        return None;
    }
    // The arguments before it are JSON too, so the parts begin where what
    // follows ` with response: ` is one JSON document to its end.
    let mut rest = words;
    while let Some((_, after)) = rest.split_once(WITH_RESPONSE) {
        if let Ok(parts) = serde_json::from_str::<serde_json::Value>(after) {
            let error = &parts[0]["functionResponse"]["response"]["error"];
            return match (error["message"].as_str(), error["isError"].as_bool()) {
                (Some(message), Some(true)) => mcp_error_reason(message),
                _ => None,
            };
        }
        rest = after;
    }
    None
}

/// How the MCP SDK's error begins (`MCP error ${code}: …`; codes are
/// negative).
const MCP_ERROR: &str = "MCP error -";

/// What divides an MCP tool error's arguments from its response parts.
const WITH_RESPONSE: &str = " with response: ";

/// The reason an `MCP error -CODE: …` names.
fn mcp_error_reason(message: &str) -> Option<ReasonCode> {
    let code = message.strip_prefix(MCP_ERROR)?.split(':').next()?;
    Some(match code {
        "32001" => ReasonCode::Timeout,
        "32000" => ReasonCode::ConnectionClosed,
        _ => ReasonCode::ProtocolError,
    })
}

/// How a Gemini CLI call that ended in `error` ended, by the words the UI
/// showed (`display`, read by [`gemini_ended`]) and the words sent back to
/// the model (`detail`): where either names the MCP SDK's error, the
/// failure it names ([`gemini_mcp_failure`]), not the server's `isError`.
pub(crate) fn gemini_failed_call(display: Option<&str>, detail: Option<&str>) -> Ended {
    match gemini_ended(display) {
        Ended::Failed(reason) => Ended::Failed(
            detail
                .and_then(gemini_mcp_failure)
                .or_else(|| display.and_then(gemini_mcp_failure))
                .or(reason),
        ),
        other => other,
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

/// Why a headless run's model API request failed, from Gemini CLI's own
/// words on its stream-json `result` line (`status: "error"`,
/// `error.message`): scanned, never kept (the API's body may be in them).
/// Tether's reason and its own sentence.
///
/// Gemini CLI 0.61.0 writes `[API Error: …]` (bundle chunk-5FZXKDXH.js
/// 394906 `parseAndFormatApiError`) around the error of its bundled
/// `@google/genai`:
/// - `exception TypeError: fetch failed sending request` (267928
///   `apiCall`): no HTTP answer came (a closed port and a host that does
///   not resolve read the same, real 0.61.0 runs): the prompt's request
///   failed (`session_request_failed`), no cause is claimed;
/// - an HTTP error: the body as JSON, `{"error":{"code":N,…}}`, `code`
///   the API's own or the HTTP status (268080-268092); or, on the string
///   path, `MSG (Status: S)`. 401 or 403 (`UNAUTHENTICATED`,
///   `PERMISSION_DENIED`): the credentials it sent were refused.
///
/// Any other error is left unsaid (the run's exit status still is).
pub(crate) fn gemini_model_api(words: &str) -> Option<(ReasonCode, &'static str)> {
    let error = words.strip_prefix("[API Error: ")?;
    if error.starts_with("exception TypeError: fetch failed sending request") {
        return Some((
            ReasonCode::SessionRequestFailed,
            "its model API could not be reached: its request got no HTTP answer",
        ));
    }
    let code = serde_json::from_str::<serde_json::Value>(error.strip_suffix(']')?)
        .ok()
        .and_then(|body| {
            body.pointer("/error/code")
                .and_then(serde_json::Value::as_u64)
        });
    let refused = matches!(code, Some(401 | 403))
        || ["(Status: UNAUTHENTICATED)]", "(Status: PERMISSION_DENIED)]"]
            .iter()
            .any(|s| error.ends_with(s));
    refused.then_some((
        ReasonCode::AuthRejected,
        "its model provider refused the credentials it sent",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GIVEN each release's words for a call of a tool the harness does not
    /// hold, and its words for an MCP call the SDK failed WHEN read THEN
    /// "no such tool" is a refusal (`tool_not_available`), never a failure;
    /// a timeout, a closed connection and a JSON-RPC error are the failures
    /// they name, and a server's own `isError` stays `tool_error`.
    #[test]
    fn each_release_s_words_read_as_what_they_name() {
        for words in [
            "Tool \"mcp_time_gone\" not found. Did you mean one of: \"write_file\"?",
            "Tool \"gone\" not found in registry. Tools must use the exact names that are registered.",
            "Tool \"gone\" not found in registry.",
            "Tool \"mcp__a__b\" not found: no MCP server providing it is currently configured.",
            "Tool \"mcp__a__b\" not found on MCP server \"a\". The server may be disconnected.",
        ] {
            assert_eq!(
                gemini_ended(Some(words)),
                Ended::Refused(ReasonCode::ToolNotAvailable),
                "{words}"
            );
        }
        let caught = |message: &str| {
            format!(
                "MCP tool 'stamp' reported tool error for function call: {{\"name\":\"stamp\",\"args\":{{\"q\":\" with response: [1]\"}}}} with response: [{{\"functionResponse\":{{\"name\":\"stamp\",\"response\":{{\"error\":{{\"message\":\"{message}\",\"isError\":true}}}}}}}}]"
            )
        };
        for (words, reason) in [
            (caught("MCP error -32001: Request timed out"), Some(ReasonCode::Timeout)),
            (caught("MCP error -32000: Connection closed"), Some(ReasonCode::ConnectionClosed)),
            (caught("MCP error -32602: bad"), Some(ReasonCode::ProtocolError)),
            (caught("fetch failed"), None),
            ("MCP error -32001: Request timed out".to_owned(), Some(ReasonCode::Timeout)),
            // A server's own isError (Qwen 0.24.4's record of one).
            (
                "MCP tool 'fail' reported tool error for function call: {} with response: [{\"functionResponse\":{\"name\":\"fail\",\"response\":{\"error\":{\"content\":[],\"isError\":true}}}}]".to_owned(),
                None,
            ),
        ] {
            assert_eq!(gemini_mcp_failure(&words), reason, "{words}");
        }
        assert_eq!(
            gemini_failed_call(
                Some("Error: MCP tool 'stamp' reported an error."),
                Some(&caught("MCP error -32001: Request timed out"))
            ),
            Ended::Failed(Some(ReasonCode::Timeout))
        );
        assert_eq!(
            gemini_failed_call(Some("Error: MCP tool 'stamp' reported an error."), None),
            Ended::Failed(Some(ReasonCode::ToolError))
        );
    }

    /// GIVEN Gemini CLI 0.61.0's `result` words for a model API that
    /// could not be reached and for refused credentials (real runs), and
    /// other errors WHEN read THEN unreachable is the prompt's request
    /// failed (no cause claimed), 401 and 403 are `auth_rejected`, anything
    /// else is left unsaid.
    #[test]
    fn the_model_api_s_failures_read_as_gemini_words_say() {
        let code = |w: &str| gemini_model_api(w).map(|(code, _)| code);
        assert_eq!(
            code("[API Error: exception TypeError: fetch failed sending request]"),
            Some(ReasonCode::SessionRequestFailed)
        );
        for refused in [
            r#"[API Error: {"error":{"code":401,"message":"sk-x","status":"UNAUTHENTICATED"}}]"#,
            r#"[API Error: {"error":{"code":403,"message":"no","status":"PERMISSION_DENIED"}}]"#,
            "[API Error: bad key (Status: UNAUTHENTICATED)]",
        ] {
            assert_eq!(code(refused), Some(ReasonCode::AuthRejected), "{refused}");
        }
        for other in [
            r#"[API Error: {"error":{"code":400,"message":"x","status":"INVALID_ARGUMENT"}}]"#,
            r#"[API Error: {"error":{"code":429,"message":"x"}}]"#,
            "[API Error: An unknown error occurred.]",
            "fetch failed sending request",
            r#"{"error":{"code":401}}"#,
        ] {
            assert_eq!(code(other), None, "{other}");
        }
    }
}
