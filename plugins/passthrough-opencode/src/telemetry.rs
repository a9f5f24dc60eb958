//! OpenCode's own OpenTelemetry, read as evidence (`tether collect`).
//!
//! - `Tool.execute` spans: `tool.name` (`SERVER_TOOL`), read against the
//!   configured server names; a name that no configured server fits, or
//!   that two fit, is ignored (the split is ambiguous, and Tether does not
//!   guess). The span's status says how the call went.
//!
//! OpenCode's `MCP.*` spans carry no server attribute (only an error
//! message), so they prove nothing about any one server.

use tether_core::telemetry::{TelemetryAnswer, TelemetryRecord, TelemetrySignal};
use tether_sdk::telemetry as t;

/// OpenCode's `service.name`.
pub const SERVICE: &str = "opencode";

/// Reads one record (see the module docs).
pub fn read(record: &TelemetryRecord, configured: &[String]) -> TelemetryAnswer {
    if record.service() != SERVICE {
        return TelemetryAnswer::NotMine;
    }
    let session = t::text(record, "session.id");
    let mut reading = t::reading(session);
    match (record.signal, record.name.as_str()) {
        (TelemetrySignal::Span, "Tool.execute") => {
            let Some(name) = t::text(record, "tool.name") else {
                return TelemetryAnswer::Ignored;
            };
            let Some((server, tool)) = t::split_against(&name, "", "_", configured) else {
                return TelemetryAnswer::Ignored;
            };
            t::name_server(&mut reading, &server, None);
            let ok = record.status.as_ref().map(|s| !s.error);
            reading
                .evidence
                .push(t::tool_called(&server, tool, ok, record.at));
        }
        _ => return TelemetryAnswer::Ignored,
    }
    TelemetryAnswer::Read(reading)
}
