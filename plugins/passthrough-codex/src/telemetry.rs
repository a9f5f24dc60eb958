//! Codex's own OpenTelemetry (its `[otel]` exporters), read as evidence
//! (`tether collect`).
//!
//! - `codex.conversation_starts` logs: `mcp_servers`, the servers the
//!   session took from the configuration.
//! - `codex.tool_result` logs: `mcp_server`, `tool_name`, `success` (the
//!   same record carries the call's arguments and output: never read).
//! - `list_tools_for_client_uncached` spans: `server_name`, a tool listing
//!   that ended without error. These carry no conversation id, so they
//!   reach a session only where the resource names the process.
//!
//! Codex's telemetry says nothing when a server fails to start or wants a
//! login: such servers stay as the configuration left them.

use tether_core::telemetry::{TelemetryAnswer, TelemetryRecord, TelemetrySignal};
use tether_sdk::telemetry as t;

/// Whether `service` is one of Codex's (`codex_exec`, `codex_cli_rs`, …).
pub fn is_codex(service: &str) -> bool {
    service.starts_with("codex")
}

/// Reads one record (see the module docs).
pub fn read(record: &TelemetryRecord) -> TelemetryAnswer {
    if !is_codex(record.service()) {
        return TelemetryAnswer::NotMine;
    }
    let session = t::text(record, "conversation.id");
    let mut reading = t::reading(session);
    let at = record.at;
    match (record.signal, record.name.as_str()) {
        (TelemetrySignal::Log, "codex.conversation_starts") => {
            let servers = record
                .attr("mcp_servers")
                .map(|v| v.names())
                .unwrap_or_default();
            for server in servers {
                t::name_server(&mut reading, &server, None);
                reading.evidence.push(t::taken(&server, at));
            }
        }
        (TelemetrySignal::Log, "codex.tool_result") => {
            let (Some(server), Some(tool)) =
                (t::text(record, "mcp_server"), t::text(record, "tool_name"))
            else {
                // A built-in tool.
                return TelemetryAnswer::Ignored;
            };
            t::name_server(&mut reading, &server, None);
            let ok = t::flag(record, "success");
            reading
                .evidence
                .push(t::tool_called(&server, &tool, ok, at));
        }
        (TelemetrySignal::Span, "list_tools_for_client_uncached") => {
            let Some(server) = t::text(record, "server_name") else {
                return TelemetryAnswer::Ignored;
            };
            if record.status.as_ref().is_some_and(|s| s.error) {
                return TelemetryAnswer::Ignored;
            }
            t::name_server(&mut reading, &server, None);
            reading.evidence.push(t::listed(&server, None, at));
        }
        _ => return TelemetryAnswer::Ignored,
    }
    TelemetryAnswer::Read(reading)
}
