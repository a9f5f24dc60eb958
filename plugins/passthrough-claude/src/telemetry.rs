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

use tether_core::records::Unparsed;
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
            let (server, tool) = match tool_parameters(record) {
                Ok(Some(names)) => names,
                Ok(None) => return TelemetryAnswer::Ignored,
                // Its only server and tool names are in there (`tool_name`
                // is `mcp_tool`): said unparsed, never "not an MCP call".
                // The session its envelope names is kept: where it is counted.
                Err(why) => {
                    return TelemetryAnswer::unparsed("tool_result", "tool_parameters", why)
                        .in_session(reading.session.take());
                }
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
/// may hold tool input too: only these two keys are read). `Ok(None)`
/// where it is absent or names no MCP server (a built-in tool); `Err` where
/// it is not a JSON object (cut short by an attribute length limit, say)
/// or a name in it is not a string.
fn tool_parameters(record: &TelemetryRecord) -> Result<Option<(String, String)>, Unparsed> {
    let Some(raw) = record.text("tool_parameters") else {
        return Ok(None);
    };
    let value: serde_json::Value = serde_json::from_str(&raw).map_err(|e| Unparsed::of(&e))?;
    if !value.is_object() {
        return Err(Unparsed::WrongType);
    }
    let name = |key: &str| match value.get(key) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) => Ok(Some(s.trim())),
        Some(_) => Err(Unparsed::WrongType),
    };
    let (Some(server), Some(tool)) = (name("mcp_server_name")?, name("mcp_tool_name")?) else {
        return Ok(None);
    };
    Ok((!server.is_empty() && !tool.is_empty()).then(|| (server.to_owned(), tool.to_owned())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_core::telemetry::TelemetryValue as V;

    /// The `tool_result` log of Claude Code 2.1.197 with
    /// OTEL_LOG_TOOL_DETAILS=1, as recorded in tests/fixtures/telemetry.
    fn tool_result() -> TelemetryRecord {
        include_str!("../../../tests/fixtures/telemetry/claude.jsonl")
            .lines()
            .filter_map(|l| serde_json::from_str::<TelemetryRecord>(l).ok())
            .find(|r| r.name == "tool_result" && r.text("tool_parameters").is_some())
            .expect("the fixture holds an MCP tool_result")
    }

    /// GIVEN that record as recorded, then with `tool_parameters` (which
    /// carries tool input beside the names) cut short as an attribute
    /// length limit cuts it, made not JSON, and given a name of the wrong
    /// type, each around a planted secret WHEN read THEN the recorded one is
    /// a call of `time`'s tool, and each other is said unparsed with why,
    /// never `Ignored`, and the answer carries none of the attribute's text.
    #[test]
    fn a_cut_tool_parameters_is_said_unparsed_never_ignored() {
        let record = tool_result();
        let TelemetryAnswer::Read(reading) = read(&record) else {
            panic!("the recorded call reads");
        };
        assert_eq!(
            reading.evidence[0].tool.as_deref(),
            Some("get_current_time")
        );
        let whole = serde_json::json!({"mcp_server_name": "time",
            "mcp_tool_name": "get_current_time", "input": "sk-PLANTEDSECRET0123456789"})
        .to_string();
        let cut = whole[..whole.len() - 12].to_owned();
        let wrong = r#"{"mcp_server_name":7,"mcp_tool_name":"sk-PLANTEDSECRET0123456789"}"#;
        for (value, why) in [
            (cut, Unparsed::CutShort),
            ("sk-PLANTEDSECRET0123456789".to_owned(), Unparsed::NotJson),
            (wrong.to_owned(), Unparsed::WrongType),
            (
                "[\"sk-PLANTEDSECRET0123456789\"]".to_owned(),
                Unparsed::WrongType,
            ),
        ] {
            let answer = read(&record.clone().with_attr("tool_parameters", V::Text(value)));
            // The session its envelope names is kept, to count it on.
            assert_eq!(
                answer,
                TelemetryAnswer::unparsed("tool_result", "tool_parameters", why)
                    .in_session(record.text("session.id").map(|s| s.into_owned()))
            );
            let text = format!(
                "{answer:?} {}",
                serde_json::to_string(&answer).expect("json")
            );
            assert!(!text.contains("PLANTED"), "{text}");
        }
        // Names of no MCP server (a built-in tool's parameters): still not
        // an MCP call, as before.
        let builtin = record.with_attr(
            "tool_parameters",
            V::Text(r#"{"bash_command":"ls"}"#.into()),
        );
        assert_eq!(read(&builtin), TelemetryAnswer::Ignored);
    }
}
