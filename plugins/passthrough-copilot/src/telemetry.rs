//! Copilot CLI's own OpenTelemetry (traces and metrics; no logs), read as
//! evidence (`tether collect`). Copilot names servers and tools by their
//! SHA-256, so each hash is matched against the configured names; a hash no
//! configured name has is ignored, never guessed at.
//!
//! - `github.copilot.mcp.server.lifecycle` span events: `name_hash`,
//!   `state` (`discovered`: taken into the session; `initialized`:
//!   connected; `error`: failed — Copilot says `error` for a server that
//!   wants a login too, so no finer reason is claimed).
//! - `execute_tool` spans with `…mcp_server_name_hash`: a call of one of
//!   that server's tools, shown by the first characters of its hash (its
//!   name is not in the telemetry); the span's status says how it went.

use tether_core::telemetry::{TelemetryAnswer, TelemetryRecord, TelemetrySignal};
use tether_core::vocab::ReasonCode;
use tether_sdk::telemetry as t;

/// Copilot's `service.name`.
pub const SERVICE: &str = "github-copilot";

/// The configured server whose SHA-256 is `hash`.
fn unhash<'a>(hash: &str, configured: &'a [String]) -> Option<&'a str> {
    let hash = hash.trim().to_ascii_lowercase();
    configured
        .iter()
        .find(|name| t::sha256_hex(name) == hash)
        .map(String::as_str)
}

/// Reads one record (see the module docs).
pub fn read(record: &TelemetryRecord, configured: &[String]) -> TelemetryAnswer {
    if record.service() != SERVICE {
        return TelemetryAnswer::NotMine;
    }
    let session = t::text(record, "gen_ai.conversation.id");
    let mut reading = t::reading(session);
    let at = record.at;
    match (record.signal, record.name.as_str()) {
        (TelemetrySignal::SpanEvent, "github.copilot.mcp.server.lifecycle") => {
            let Some(server) = t::text(record, "github.copilot.mcp.server.name_hash")
                .and_then(|h| unhash(&h, configured))
            else {
                return TelemetryAnswer::Ignored;
            };
            t::name_server(&mut reading, server, None);
            match t::text(record, "github.copilot.mcp.server.state").as_deref() {
                Some("discovered") => reading.evidence.push(t::taken(server, at)),
                Some("initialized") => reading.evidence.push(t::status(server, "connected", at)),
                Some("error") => reading.evidence.push(t::failed(
                    server,
                    ReasonCode::AgentReportedFailed,
                    Some("Copilot reported the server in error".into()),
                    at,
                )),
                _ => return TelemetryAnswer::Ignored,
            }
        }
        (TelemetrySignal::Span, name) if name.starts_with("execute_tool") => {
            let Some(server) = t::text(
                record,
                "github.copilot.tool.parameters.mcp_server_name_hash",
            )
            .and_then(|h| unhash(&h, configured)) else {
                // A built-in tool, or a server no configured name hashes to.
                return TelemetryAnswer::Ignored;
            };
            let transport = t::text(record, "github.copilot.mcp.server.transport")
                .and_then(|w| t::transport_word(&w));
            t::name_server(&mut reading, server, transport);
            let tool_hash = t::text(record, "gen_ai.tool.name")
                .and_then(|n| n.split_once('/').map(|(_, tool)| tool.to_owned()))
                .unwrap_or_default();
            let tool = format!("sha256:{}", tool_hash.get(..12).unwrap_or("unknown"));
            let ok = record.status.as_ref().map(|s| !s.error);
            reading.evidence.push(t::tool_called(server, &tool, ok, at));
        }
        _ => return TelemetryAnswer::Ignored,
    }
    TelemetryAnswer::Read(reading)
}
