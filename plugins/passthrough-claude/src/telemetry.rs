//! Claude Code's own OpenTelemetry, read as evidence (`tether collect`).
//!
//! - `claude_code.mcp_server_connection` logs: `status` (connected, failed),
//!   `transport_type`, `error_code`; the server's name only with
//!   `OTEL_LOG_TOOL_DETAILS=1` (`server_name`). Without a name a record
//!   proves nothing about any one server and is ignored.
//! - `claude_code.tool_result` logs: `success`; the server and tool only
//!   with that flag, inside `tool_parameters` (which may also carry tool
//!   input: only the two names are taken).
//! - `claude_code.tool` spans (`CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1`): the
//!   raw `tool_name` (`mcp__SERVER__TOOL`), its outcome from the span's
//!   status.
//!
//! Claude reports no event for a server that needs auth: such a server stays
//! as its configuration left it.

use tether_core::telemetry::{TelemetryAnswer, TelemetryRecord, TelemetrySignal};
use tether_core::vocab::ReasonCode;
use tether_sdk::telemetry as t;

/// Claude Code's `service.name`.
pub const SERVICE: &str = "claude-code";

/// Reads one record (see the module docs).
pub fn read(record: &TelemetryRecord) -> TelemetryAnswer {
    if record.service() != SERVICE {
        return TelemetryAnswer::NotMine;
    }
    let session = t::text(record, "session.id");
    let name = record
        .name
        .strip_prefix("claude_code.")
        .unwrap_or(&record.name);
    let mut reading = t::reading(session);
    let at = record.at;
    match (record.signal, name) {
        (TelemetrySignal::Log, "mcp_server_connection") => {
            let Some(server) = t::text(record, "server_name") else {
                return TelemetryAnswer::Ignored;
            };
            let transport = t::text(record, "transport_type").and_then(|w| t::transport_word(&w));
            t::name_server(&mut reading, &server, transport);
            match t::text(record, "status").as_deref() {
                Some("connected") => reading.evidence.push(t::status(&server, "connected", at)),
                Some("failed") => {
                    let code = t::text(record, "error_code").filter(|c| t::is_error_code(c));
                    let reason = code
                        .as_deref()
                        .and_then(t::reason_for)
                        .unwrap_or(ReasonCode::AgentReportedFailed);
                    let summary =
                        code.map(|c| format!("Claude Code reported the connection failed ({c})"));
                    reading
                        .evidence
                        .push(t::failed(&server, reason, summary, at));
                }
                // disconnected (at exit), or a word this build does not know.
                _ => {}
            }
        }
        (TelemetrySignal::Log, "tool_result") => {
            let Some((server, tool)) = tool_parameters(record) else {
                return TelemetryAnswer::Ignored;
            };
            t::name_server(&mut reading, &server, None);
            let ok = t::flag(record, "success");
            reading
                .evidence
                .push(t::tool_called(&server, &tool, ok, at));
        }
        (TelemetrySignal::Span, "tool") => {
            let Some(raw) = t::text(record, "tool_name") else {
                return TelemetryAnswer::Ignored;
            };
            let Some((server, tool)) = t::split_mcp_double(&raw) else {
                // A built-in tool: nothing about an MCP server.
                return TelemetryAnswer::Ignored;
            };
            t::name_server(&mut reading, server, None);
            // Its outcome: the span's `success` where set, else its status
            // (an error status is a failed call).
            let ok = t::flag(record, "success").or(record.status.as_ref().map(|s| !s.error));
            reading.evidence.push(t::tool_called(server, tool, ok, at));
        }
        _ => return TelemetryAnswer::Ignored,
    }
    TelemetryAnswer::Read(reading)
}

/// The server and tool names inside `tool_parameters` (a JSON object that
/// may hold tool input too: only these two keys are read).
fn tool_parameters(record: &TelemetryRecord) -> Option<(String, String)> {
    let raw = record.text("tool_parameters")?;
    let value: serde_json::Value = serde_json::from_str(&raw).ok()?;
    let server = value.get("mcp_server_name")?.as_str()?.trim();
    let tool = value.get("mcp_tool_name")?.as_str()?.trim();
    (!server.is_empty() && !tool.is_empty()).then(|| (server.to_owned(), tool.to_owned()))
}
