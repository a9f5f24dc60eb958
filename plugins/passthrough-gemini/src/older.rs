//! Older Qwen Code releases' chat records, where they differ from the
//! pinned release's (read from each release's shipped `cli.js`; a real
//! 0.5.2 run's chat is `tests/fixtures/records-releases/qwen-0.5.2-headless`).
//!
//! - Before 0.10 (0.5.0–0.8.2 cli.js `DiscoveredMCPTool`: `nameOverride ??
//!   generateValidName(serverToolName)`, 0.5.2 offset 5166418), an MCP tool
//!   is named bare (`TOOL`, or `SERVER__TOOL` where two servers share it):
//!   its `functionCall` does not say it is an MCP tool, let alone whose. The
//!   `ui_telemetry` record of the call (0.5.2 cli.js 3166517-3167502
//!   `ToolCallEvent`, 5613941 `logToolCall`, 6109010
//!   `recordUiTelemetryEvent`) does: `tool_type` `mcp` with
//!   `mcp_server_name`, and the call's `status` and `error_type`. It is
//!   read as the call where, and only where, its `function_name` is not
//!   `mcp__…` (0.10.1 on names it so and its `functionCall` is read
//!   instead): so a call counts once in every release.
//! - Before 0.15 (0.5.0–0.12.0 cli.js, 0.12.0 offset 7376308), "Qwen Code
//!   requires permission to use \"TOOL\", but that permission was
//!   declined." is a `-p` run's automatic no (it cannot ask:
//!   `approval_required`); 0.15 on gives that case its own words and uses
//!   these for a deny rule.

use std::borrow::Cow;

use serde::Deserialize;
use tether_core::model::{Evidence, Timestamp};
use tether_core::records::name;
use tether_core::vocab::ReasonCode;
use tether_sdk::records::{call, refused};

use crate::ended::{Ended, qwen_denied};

/// A `system` record's payload: a `ui_telemetry` record's event.
#[derive(Deserialize)]
pub(crate) struct QwenSystemPayload<'a> {
    #[serde(rename = "uiEvent", borrow, default)]
    event: Option<crate::shape::Obj<QwenUiEvent<'a>>>,
}

/// A `qwen-code.tool_call` UI event: its name, status and the server of an
/// MCP tool (`function_args` is payload, never read).
#[derive(Deserialize)]
struct QwenUiEvent<'a> {
    #[serde(rename = "event.name", borrow, default)]
    event: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    function_name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    status: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    error_type: Option<Cow<'a, str>>,
    /// The harness's words for how it ended: scanned for why a denied
    /// call was refused, never kept.
    #[serde(borrow, default)]
    error: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    tool_type: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    mcp_server_name: Option<Cow<'a, str>>,
}

/// Whether `version` (a record's `version`) is before 0.15, where a `-p`
/// run's automatic no had the words a deny rule has since.
fn before_0_15(version: Option<&str>) -> bool {
    let Some(version) = version else {
        return false;
    };
    let mut parts = version.split('.').map(|p| p.parse::<u64>().ok());
    matches!(
        (parts.next().flatten(), parts.next().flatten()),
        (Some(0), Some(minor)) if minor < 15
    )
}

/// Qwen Code's words for a call of `errorType` `execution_denied`, as the
/// release that wrote them meant them.
pub(crate) fn qwen_denied_in(
    words: Option<&str>,
    not_started: bool,
    version: Option<&str>,
) -> Ended {
    // An `excludeTools` entry (the tool's name unquoted), in every release.
    if words.is_some_and(|w| {
        w.starts_with("Qwen Code requires permission to use ")
            && !w.starts_with("Qwen Code requires permission to use \"")
            && w.ends_with(", but that permission was declined.")
    }) {
        return Ended::Refused(ReasonCode::PermissionDenied);
    }
    if before_0_15(version)
        && words.is_some_and(|w| {
            w.starts_with("Qwen Code requires permission to use \"")
                && w.ends_with("\", but that permission was declined.")
        })
    {
        return Ended::Refused(ReasonCode::ApprovalRequired);
    }
    qwen_denied(words, not_started)
}

/// A `ui_telemetry` record's MCP call of a release that named its MCP
/// tools bare (before 0.10): the call of `mcp_server_name`'s tool, with
/// its outcome. `None` for any other event, a built-in tool, or an
/// `mcp__…` name (whose `functionCall` is the call).
pub(crate) fn qwen_bare_call(
    payload: &QwenSystemPayload<'_>,
    version: Option<&str>,
    at: Timestamp,
) -> Option<Evidence> {
    let event = payload.event.as_ref()?;
    if event.event.as_deref() != Some("qwen-code.tool_call")
        || event.tool_type.as_deref() != Some("mcp")
    {
        return None;
    }
    let full = event.function_name.as_deref()?;
    if full.starts_with("mcp__") {
        return None;
    }
    let server = name(event.mcp_server_name.as_deref()?)?;
    // `SERVER__TOOL` where two servers share the tool's name.
    let tool = full
        .strip_prefix(server.as_str())
        .and_then(|t| t.strip_prefix("__"))
        .unwrap_or(full);
    let tool = name(tool)?;
    let ended = match (event.status.as_deref(), event.error_type.as_deref()) {
        (_, Some("execution_denied")) => qwen_denied_in(event.error.as_deref(), false, version),
        (Some("success"), _) => Ended::Succeeded,
        (Some("error"), Some("mcp_tool_error")) => Ended::Failed(Some(ReasonCode::ToolError)),
        (Some("error"), _) => Ended::Failed(None),
        _ => Ended::Unknown,
    };
    Some(match ended {
        Ended::Succeeded => call(&server, &tool, None, Some(true), at),
        Ended::Refused(reason) => refused(&server, &tool, None, reason, at),
        Ended::Failed(reason) => {
            let mut failed = call(&server, &tool, None, Some(false), at);
            failed.reason_code = reason;
            failed
        }
        Ended::Unknown => call(&server, &tool, None, None, at),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(event: &str) -> QwenSystemPayload<'_> {
        serde_json::from_str(event).expect("json")
    }

    /// GIVEN a 0.5.2 `ui_telemetry` tool_call event of an MCP tool named
    /// bare (shaped as the real run's, tests/fixtures/records-releases/
    /// qwen-0.5.2-headless) WHEN read THEN it is the server's call with its
    /// outcome; an `mcp__…` name or a built-in tool is no call here.
    #[test]
    fn a_bare_named_mcp_call_is_its_servers() {
        let at = Timestamp(1);
        let failed = payload(
            r#"{"uiEvent":{"event.name":"qwen-code.tool_call","function_name":"fail","function_args":{"timezone":"UTC"},"status":"error","success":false,"error":"MCP tool 'fail' reported tool error for function call: …","error_type":"mcp_tool_error","tool_type":"mcp","mcp_server_name":"count"}}"#,
        );
        let e = qwen_bare_call(&failed, Some("0.5.2"), at).expect("a call");
        assert_eq!(
            (e.server.as_deref(), e.tool.as_deref(), e.ok, e.reason_code),
            (
                Some("count"),
                Some("fail"),
                Some(false),
                Some(ReasonCode::ToolError)
            )
        );
        let shared = payload(
            r#"{"uiEvent":{"event.name":"qwen-code.tool_call","function_name":"count__stamp","status":"success","tool_type":"mcp","mcp_server_name":"count"}}"#,
        );
        let e = qwen_bare_call(&shared, Some("0.5.2"), at).expect("a call");
        assert_eq!((e.tool.as_deref(), e.ok), (Some("stamp"), Some(true)));
        for other in [
            r#"{"uiEvent":{"event.name":"qwen-code.tool_call","function_name":"mcp__count__stamp","status":"success","tool_type":"mcp","mcp_server_name":"count"}}"#,
            r#"{"uiEvent":{"event.name":"qwen-code.tool_call","function_name":"read_file","status":"success","tool_type":"native"}}"#,
            r#"{"uiEvent":{"event.name":"qwen-code.api_response","model":"gpt-4o"}}"#,
        ] {
            assert!(
                qwen_bare_call(&payload(other), Some("0.5.2"), at).is_none(),
                "{other}"
            );
        }
    }

    /// GIVEN the words of a denied call WHEN a release before 0.15 wrote
    /// them THEN the quoted form is a `-p` run's automatic no
    /// (approval_required), the unquoted one an excluded tool
    /// (permission_denied); 0.15 on the quoted form is a deny rule; a
    /// cancelled call is unknown, never a failure.
    #[test]
    fn denied_words_are_read_as_their_release_meant_them() {
        let quoted = Some(
            "Qwen Code requires permission to use \"stamp\", but that permission was declined.",
        );
        let unquoted =
            Some("Qwen Code requires permission to use stamp, but that permission was declined.");
        assert_eq!(
            qwen_denied_in(quoted, false, Some("0.12.0")),
            Ended::Refused(ReasonCode::ApprovalRequired)
        );
        assert_eq!(
            qwen_denied_in(unquoted, false, Some("0.5.2")),
            Ended::Refused(ReasonCode::PermissionDenied)
        );
        assert_eq!(
            qwen_denied_in(quoted, false, Some("0.15.10")),
            Ended::Refused(ReasonCode::PermissionDenied)
        );
        let cancelled = payload(
            r#"{"uiEvent":{"event.name":"qwen-code.tool_call","function_name":"stamp","status":"cancelled","tool_type":"mcp","mcp_server_name":"count"}}"#,
        );
        let e = qwen_bare_call(&cancelled, Some("0.5.2"), Timestamp(1)).expect("a call");
        assert_eq!((e.ok, e.reason_code), (None, None));
    }
}
