//! Refused calls (issue 57), read from real `codex exec` runs of Codex
//! 0.171.0 (pinned, and the newest npm serves) against the fake model and
//! `tether-counting-mcp`, kept trimmed under `tests/fixtures/refusals`
//! (`codex-0.171.0-CASE.rollout.jsonl`): a call Codex refused is a
//! refusal with its reason, never a call's outcome; one that reached the
//! server and failed says whether the server said `isError` or answered
//! with a JSON-RPC error.

use tether_core::model::Evidence;
use tether_core::records::{RecordAnswer, RecordFile};
use tether_core::vocab::{EvidenceKind, ReasonCode};
use tether_passthrough_codex::records::{ROLLOUT, never_ran, protocol_error, read};

fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/refusals")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn read_all(text: &str) -> Vec<Evidence> {
    let segments = vec![
        "sessions".to_owned(),
        "2026".to_owned(),
        "12".to_owned(),
        "03".to_owned(),
        "rollout-x.jsonl".to_owned(),
    ];
    let configured = vec!["time".to_owned()];
    let file = RecordFile {
        role: ROLLOUT,
        segments: &segments,
        session: None,
        configured: &configured,
    };
    text.lines()
        .flat_map(|line| match read(&file, line) {
            RecordAnswer::Read(reading) => reading.evidence,
            _ => Vec::new(),
        })
        .collect()
}

/// (kind, tool, id, ok, reason) of one call or refusal read.
type Seen = (
    EvidenceKind,
    String,
    String,
    Option<bool>,
    Option<ReasonCode>,
);

/// Each call or refusal read.
fn calls(evidence: &[Evidence]) -> Vec<Seen> {
    evidence
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                EvidenceKind::ToolCallObserved | EvidenceKind::ToolCallRefused
            )
        })
        .map(|e| {
            (
                e.kind.clone(),
                e.tool.clone().unwrap_or_default(),
                e.connection_id.clone().unwrap_or_default(),
                e.ok,
                e.reason_code.clone(),
            )
        })
        .collect()
}

/// GIVEN `codex exec` with a tool that needs approval WHEN its rollout is
/// read THEN the model's call (no outcome) and Codex's refusal,
/// `approval_required`, by the same id: one refused call, never failed.
#[test]
fn exec_refuses_a_call_that_needs_approval() {
    let got = calls(&read_all(&fixture(
        "codex-0.171.0-noapproval.rollout.jsonl",
    )));
    assert_eq!(
        got,
        [
            (
                EvidenceKind::ToolCallObserved,
                "get_current_time".into(),
                "call_fake1".into(),
                None,
                None
            ),
            (
                EvidenceKind::ToolCallRefused,
                "get_current_time".into(),
                "call_fake1".into(),
                None,
                Some(ReasonCode::ApprovalRequired)
            ),
        ]
    );
}

/// GIVEN the control (`default_tools_approval_mode = "approve"`), a tool
/// error and a JSON-RPC error WHEN read THEN a call that succeeded, one
/// failed with `tool_error`, one failed with `protocol_error`: no refusal.
#[test]
fn calls_that_reached_the_server_say_how_they_ended() {
    for (case, ok, reason) in [
        ("approve", Some(true), None),
        ("toolerror", Some(false), Some(ReasonCode::ToolError)),
        ("protoerror", Some(false), Some(ReasonCode::ProtocolError)),
    ] {
        let got = calls(&read_all(&fixture(&format!(
            "codex-0.171.0-{case}.rollout.jsonl"
        ))));
        assert!(
            got.iter().all(|c| c.0 == EvidenceKind::ToolCallObserved),
            "{case}: {got:?}"
        );
        let end = got.last().expect("the call's end");
        assert_eq!((end.3, end.4.clone()), (ok, reason), "{case}: {got:?}");
    }
}

/// GIVEN Codex's own words (0.171.0's strings) and words that only look
/// like them WHEN compared THEN each says what it says.
#[test]
fn the_words_compared_are_codex_s_own() {
    for (words, reason) in [
        (
            "user cancelled MCP tool call",
            Some(ReasonCode::ApprovalRequired),
        ),
        (
            "user rejected MCP tool call",
            Some(ReasonCode::PermissionDenied),
        ),
        (
            "MCP tool call blocked by app configuration",
            Some(ReasonCode::DeniedByPolicy),
        ),
        (
            "MCP tool call requires approval, but approval policy is never",
            Some(ReasonCode::ApprovalRequired),
        ),
        (
            "MCP tool call cancelled: interactive approval is unavailable in exec mode",
            Some(ReasonCode::ApprovalRequired),
        ),
        ("the tool failed", None),
        ("tool call error: tool call failed for `a/b`", None),
    ] {
        assert_eq!(never_ran(words), reason, "{words}");
    }
    assert!(protocol_error(
        "tool call error: tool call failed for `a/b`\n\nCaused by:\n    Mcp error: -32603: x"
    ));
    assert!(!protocol_error("tool call error: timed out"));
    assert!(!protocol_error("Mcp error: -32603: x"));
}

/// GIVEN a legacy `mcp_tool_call_end` refused with a secret after Codex's
/// words WHEN read THEN a refusal, and the secret is in no evidence.
#[test]
fn a_refusal_s_words_are_never_kept() {
    let secret = "SECRET-91c2";
    let line = format!(
        r#"{{"timestamp":"2026-12-03T16:00:00Z","type":"event_msg","payload":{{"type":"mcp_tool_call_end","call_id":"c1","invocation":{{"server":"time","tool":"get_current_time","arguments":{{"k":"{secret}"}}}},"result":{{"Err":"user rejected MCP tool call {secret}"}}}}}}"#
    );
    let got = read_all(&line);
    assert!(!format!("{got:?}").contains(secret), "{got:?}");
    assert_eq!(
        calls(&got),
        [(
            EvidenceKind::ToolCallRefused,
            "get_current_time".into(),
            "c1".into(),
            None,
            Some(ReasonCode::PermissionDenied)
        )]
    );
}
