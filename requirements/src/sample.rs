//! Matrix rows and a session summary built in a line, for the tests of
//! this crate and of its hosts (`tether check`'s formats): the one builder
//! both use. Only with `cfg(test)` or the `test-support` feature.

use serde_json::json;
use tether_core::model::{ProvenanceCode, StageObservation};
use tether_core::records::{MatrixRow, SessionSummary};
use tether_core::vocab::{CapabilityKind, DisplayStatus, StageState};

/// A row of `kind` named `name`, at `status`, with `stages` shown by the
/// harness's records (a model-side source); its `stopped` is
/// `stopped-NAME`.
pub fn row(
    kind: CapabilityKind,
    name: &str,
    status: DisplayStatus,
    stages: &[(&str, StageState)],
) -> MatrixRow {
    let stages: serde_json::Map<String, serde_json::Value> = stages
        .iter()
        .map(|(key, state)| {
            let shown = StageObservation {
                state: *state,
                provenance: Some(ProvenanceCode::HarnessRecord),
                ..StageObservation::default()
            };
            let shown = serde_json::to_value(shown).expect("an observation");
            ((*key).to_owned(), shown)
        })
        .collect();
    serde_json::from_value(json!({
        "kind": kind.as_str(),
        "name": name,
        "status": status.as_str(),
        "stopped": format!("stopped-{name}"),
        "stages": stages,
    }))
    .expect("a row")
}

/// A server's row ([`row`] of `mcp_server`).
pub fn server(name: &str, status: DisplayStatus, stages: &[(&str, StageState)]) -> MatrixRow {
    row(CapabilityKind::McpServer, name, status, stages)
}

/// The summary of a session `toy:s1` (sample data names no real harness).
pub fn summary() -> SessionSummary {
    serde_json::from_value(json!({
        "session_id": "toy:s1", "agent_kind": "toy", "harness_session": "s1",
        "started_at": 1, "updated_at": 2, "counts": {}, "files": 1
    }))
    .expect("a summary")
}
