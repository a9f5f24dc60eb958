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
//!   name is not in the telemetry); the span's status says how it went,
//!   and an `error.type` of `denied` that the harness refused it
//!   (`tool_call_refused`, `permission_denied`: the span gives no finer
//!   reason).

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
            // `error.type` `denied` (1.0.102, measured): the harness refused
            // the call before it reached the server. The span gives no
            // words, so no finer reason than its rules' (the session's
            // events say which).
            if t::text(record, "error.type").as_deref() == Some("denied") {
                reading.evidence.push(
                    tether_sdk::records::refused(
                        server,
                        &tool,
                        None,
                        ReasonCode::PermissionDenied,
                        at,
                    )
                    .provenance(tether_core::vocab::Provenance::HarnessTelemetry),
                );
                return TelemetryAnswer::Read(reading);
            }
            let ok = record.status.as_ref().map(|s| !s.error);
            reading.evidence.push(t::tool_called(server, &tool, ok, at));
        }
        _ => return TelemetryAnswer::Ignored,
    }
    TelemetryAnswer::Read(reading)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_core::telemetry::TelemetryValue as V;
    use tether_core::vocab::EvidenceKind;

    /// GIVEN an `execute_tool` span of a call Copilot CLI 1.0.102 refused
    /// (as a real `--deny-tool` run sent it: `error.type` `denied`, status
    /// error) and one that failed WHEN each is read THEN the first is a
    /// refusal, never a failed call; the second a failed call.
    #[test]
    fn a_denied_span_is_a_refusal() {
        let hash = t::sha256_hex("count");
        let span = |error: &str| {
            let mut record = TelemetryRecord::new(
                TelemetrySignal::Span,
                format!("execute_tool {hash}/x"),
                tether_core::model::Timestamp(1),
            )
            .with_resource("service.name", V::Text(SERVICE.into()))
            .with_attr(
                "github.copilot.tool.parameters.mcp_server_name_hash",
                V::Text(hash.clone()),
            )
            .with_attr(
                "gen_ai.tool.name",
                V::Text(format!("{hash}/abcdef0123456789")),
            )
            .with_attr("error.type", V::Text(error.into()));
            record.status = Some(tether_core::telemetry::TelemetryStatus {
                error: true,
                message: Some("Tool failed".into()),
            });
            match read(&record, &["count".to_owned()]) {
                TelemetryAnswer::Read(r) => {
                    let e = r.evidence.last().expect("a call").clone();
                    (e.kind, e.ok, e.reason_code)
                }
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(
            span("denied"),
            (
                EvidenceKind::ToolCallRefused,
                None,
                Some(ReasonCode::PermissionDenied)
            )
        );
        assert_eq!(span("failure").0, EvidenceKind::ToolCallObserved);
        assert_eq!(span("failure").1, Some(false));
    }
}
