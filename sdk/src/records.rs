//! Helpers for a passthrough plugin's session-record reader
//! ([`PassthroughStrategy::read_record`](tether_core::passthrough::PassthroughStrategy::read_record)):
//! the evidence a record shows, and the servers it names. Pure functions.
//! The host stamps every piece `harness_record`.

use tether_core::model::{Evidence, Timestamp};
use tether_core::records::{RecordReading, name};
use tether_core::telemetry::NamedServer;
use tether_core::vocab::EvidenceKind;

/// A call of `server`'s `tool` (its id where the record gives one, so a
/// call written twice counts once), with its outcome where said.
pub fn call(
    server: &str,
    tool: &str,
    id: Option<&str>,
    ok: Option<bool>,
    at: Timestamp,
) -> Evidence {
    let mut call = Evidence::new(EvidenceKind::ToolCallObserved, at).server(server);
    call.tool = Some(tool.to_owned());
    call.connection_id = id.and_then(name);
    call.ok = ok;
    call
}

/// The outcome of the call `id` (a record that names no tool: its call
/// named it).
pub fn outcome(id: &str, ok: bool, at: Timestamp) -> Option<Evidence> {
    let mut result = Evidence::new(EvidenceKind::ToolCallObserved, at);
    result.connection_id = Some(name(id)?);
    result.ok = Some(ok);
    Some(result)
}

/// `server`'s `tool` was offered to the model.
pub fn visible(server: &str, tool: &str, at: Timestamp) -> Evidence {
    let mut visible = Evidence::new(EvidenceKind::ToolVisible, at).server(server);
    visible.tool = Some(tool.to_owned());
    visible
}

/// `server` listed `tool`.
pub fn listed(server: &str, tool: &str, at: Timestamp) -> Evidence {
    let mut listed = Evidence::new(EvidenceKind::ToolsListObserved, at).server(server);
    listed.tool = Some(tool.to_owned());
    listed
}

/// `server` failed to start or connect, as the harness's words `text`
/// say: wanting a login is needs-auth, a missing command is
/// `command_not_found`, anything else the harness's own "failed". The
/// words are read for a reason, never kept.
pub fn failure(server: &str, text: &str, at: Timestamp) -> Evidence {
    use crate::telemetry::{failed, reason_for, status};
    use tether_core::vocab::ReasonCode;
    match reason_for(text) {
        Some(ReasonCode::AuthRequired) => status(server, "needs-auth", at),
        Some(reason) => failed(server, reason, None, at),
        None => failed(server, ReasonCode::AgentReportedFailed, None, at),
    }
}

/// Gives `server` a row (once).
pub fn name_server(reading: &mut RecordReading, server: &str) {
    if !reading.servers.iter().any(|s| s.name == server) {
        reading.servers.push(NamedServer {
            name: server.to_owned(),
            transport: None,
        });
    }
}

/// Adds `evidence` about its server, which gets a row.
pub fn push(reading: &mut RecordReading, evidence: Evidence) {
    if let Some(server) = evidence.server.clone() {
        name_server(reading, &server);
    }
    reading.evidence.push(evidence);
}

/// A reading with the record's time, or `Ignored` when it says nothing.
pub fn answer(reading: RecordReading) -> tether_core::records::RecordAnswer {
    use tether_core::records::RecordAnswer;
    if reading.evidence.is_empty() && reading.servers.is_empty() && reading.session.is_none() {
        RecordAnswer::Ignored
    } else {
        RecordAnswer::Read(reading)
    }
}
