//! Copilot CLI's refused calls, read from the events real runs of 1.0.102
//! wrote (`tests/fixtures/refusals/copilot-1.0.102-CASE.jsonl`, recorded by
//! `tests/tests/refusals_copilot.rs`'s runs and trimmed to metadata: the
//! harness's own words kept, a hook's and a tool's replaced by `planted`).

use std::path::PathBuf;

use tether_core::records::{RecordAnswer, RecordFile};
use tether_core::vocab::{EvidenceKind, ReasonCode};
use tether_passthrough_copilot::records::{EVENTS, read};

/// (kind, ok, reason) of every piece of call evidence the fixture gives.
fn calls(case: &str) -> Vec<(EvidenceKind, Option<bool>, Option<ReasonCode>)> {
    let name = format!("copilot-1.0.102-{case}.jsonl");
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/refusals")
        .join(&name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    let segments: Vec<String> = ["session-state", "s1", "events.jsonl"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let file = RecordFile {
        role: EVENTS,
        segments: &segments,
        session: None,
        configured: &[],
    };
    let mut out = Vec::new();
    for line in text.lines() {
        let answer = read(&file, line);
        assert!(
            !format!("{answer:?}").contains("planted"),
            "{name}: {answer:?}"
        );
        if let RecordAnswer::Read(reading) = answer {
            out.extend(
                reading
                    .evidence
                    .iter()
                    .filter(|e| {
                        matches!(
                            e.kind,
                            EvidenceKind::ToolCallObserved | EvidenceKind::ToolCallRefused
                        ) && e.server.is_none()
                    })
                    .map(|e| (e.kind.clone(), e.ok, e.reason_code.clone())),
            );
        }
    }
    out
}

/// GIVEN Copilot CLI 1.0.102's events of a `-p` run with no `--allow-tool`,
/// a `--deny-tool` rule, a denying preToolUse hook, a tool error, a
/// JSON-RPC error and an allowed call WHEN they are read THEN each call's
/// ending is what happened: a refusal with its reason (the headless one
/// said twice, by its approval and its completion, which the call's id
/// merges), a failure with `tool_error` or `protocol_error`, a success.
#[test]
fn copilot_events_say_why_a_call_did_not_run() {
    use EvidenceKind::{ToolCallObserved as Observed, ToolCallRefused as Refused};
    let refused = |r: ReasonCode| (Refused, None, Some(r));
    for (case, want) in [
        (
            "headless",
            vec![
                refused(ReasonCode::ApprovalRequired),
                refused(ReasonCode::ApprovalRequired),
            ],
        ),
        ("deny-tool", vec![refused(ReasonCode::PermissionDenied)]),
        ("hook", vec![refused(ReasonCode::BlockedByHook)]),
        (
            "tool-error",
            vec![(Observed, Some(false), Some(ReasonCode::ToolError))],
        ),
        (
            "protocol-error",
            vec![(Observed, Some(false), Some(ReasonCode::ProtocolError))],
        ),
        ("allowed", vec![(Observed, Some(true), None)]),
    ] {
        assert_eq!(calls(case), want, "{case}");
    }
}
