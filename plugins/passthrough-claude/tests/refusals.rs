//! Refused calls (issue 57), read from real runs of Claude Code 2.1.197
//! (pinned) and 2.1.332 (newest) against the fake model and
//! `tether-counting-mcp`, kept trimmed under `tests/fixtures/refusals`
//! (`claude-VERSION-CASE.{stream,transcript}.jsonl`): a call the harness
//! refused is a refusal with its reason, never a call's outcome; one that
//! reached the server and failed says how where Claude Code's words do.

use tether_core::records::{RecordAnswer, RecordFile};
use tether_core::vocab::{EvidenceKind, ReasonCode};
use tether_passthrough_claude::records::{
    ErrorWords, STREAM_JSON, TRANSCRIPT, denial_reason, error_said, read,
};

const CALL: &str = "toolu_fake_mcp__time__get_current_time";

fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/refusals")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every evidence each line of `text` gives, read as `role`.
fn read_all(role: &str, text: &str) -> Vec<tether_core::model::Evidence> {
    let segments = vec![
        "projects".to_owned(),
        "-tmp-work".to_owned(),
        "s.jsonl".to_owned(),
    ];
    let configured = vec!["time".to_owned()];
    let file = RecordFile {
        role,
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

/// Refusals read: (call id, reason).
type Refusals = Vec<(String, ReasonCode)>;
/// Failures read: (call id, reason where one is said).
type Failures = Vec<(String, Option<ReasonCode>)>;

/// The refusals and failures read.
fn outcomes(evidence: &[tether_core::model::Evidence]) -> (Refusals, Failures) {
    let refused = evidence
        .iter()
        .filter(|e| e.kind == EvidenceKind::ToolCallRefused)
        .map(|e| {
            (
                e.connection_id.clone().unwrap_or_default(),
                e.reason_code.clone().expect("a refusal says why"),
            )
        })
        .collect();
    let failed = evidence
        .iter()
        .filter(|e| e.kind == EvidenceKind::ToolCallObserved && e.ok == Some(false))
        .map(|e| {
            (
                e.connection_id.clone().unwrap_or_default(),
                e.reason_code.clone(),
            )
        })
        .collect();
    (refused, failed)
}

const VERSIONS: [&str; 2] = ["2.1.197", "2.1.332"];

/// GIVEN a headless run with no permission for the tool (pinned and
/// newest) WHEN its transcript and its stream-json are read THEN the call
/// is refused, `approval_required` (the `ask` decision's words: it could
/// not ask), and no failure is read for it.
#[test]
fn a_headless_run_that_could_not_ask_refuses_for_approval() {
    for v in VERSIONS {
        for (role, kind) in [(TRANSCRIPT, "transcript"), (STREAM_JSON, "stream")] {
            let got = read_all(role, &fixture(&format!("claude-{v}-noperm.{kind}.jsonl")));
            let (refused, failed) = outcomes(&got);
            assert!(!refused.is_empty(), "{v} {kind}: {got:?}");
            assert!(
                refused
                    .iter()
                    .all(|(id, r)| id == CALL && *r == ReasonCode::ApprovalRequired),
                "{v} {kind}: {refused:?}"
            );
            assert!(failed.is_empty(), "{v} {kind}: {failed:?}");
        }
    }
    // 2.1.332's stream-json also says so in its own line, with the tool.
    let got = read_all(STREAM_JSON, &fixture("claude-2.1.332-noperm.stream.jsonl"));
    assert!(got.iter().any(|e| e.kind == EvidenceKind::ToolCallRefused
        && e.server.as_deref() == Some("time")
        && e.tool.as_deref() == Some("get_current_time")));
}

/// GIVEN a PreToolUse hook that blocks (exit 2: both; a JSON deny:
/// 2.1.332) WHEN read THEN `blocked_by_hook`, never a failure; 2.1.197's
/// JSON deny is written as the hook's words alone, which say nothing:
/// a failure whose reason is unknown (documented in the census).
#[test]
fn a_blocking_pre_tool_use_hook_refuses_the_call() {
    for (v, case) in [
        ("2.1.197", "hookexit2"),
        ("2.1.332", "hookexit2"),
        ("2.1.332", "hookdeny"),
    ] {
        for (role, kind) in [(TRANSCRIPT, "transcript"), (STREAM_JSON, "stream")] {
            let got = read_all(role, &fixture(&format!("claude-{v}-{case}.{kind}.jsonl")));
            let (refused, failed) = outcomes(&got);
            assert_eq!(
                refused,
                [(CALL.to_owned(), ReasonCode::BlockedByHook)],
                "{v} {case} {kind}"
            );
            assert!(failed.is_empty(), "{v} {case} {kind}: {failed:?}");
        }
    }
    let got = read_all(
        TRANSCRIPT,
        &fixture("claude-2.1.197-hookdeny.transcript.jsonl"),
    );
    let (refused, failed) = outcomes(&got);
    assert!(refused.is_empty(), "{refused:?}");
    assert_eq!(failed, [(CALL.to_owned(), None)]);
}

/// GIVEN a tool error and a JSON-RPC error (both reached the server)
/// WHEN read THEN each is a failed call, never a refusal; 2.1.197's
/// words tell the protocol error apart (`MCP error -32603: …`), 2.1.332
/// passes the error's message alone (a failure, its reason unknown).
#[test]
fn failures_that_reached_the_server_are_never_refusals() {
    for v in VERSIONS {
        for (role, kind) in [(TRANSCRIPT, "transcript"), (STREAM_JSON, "stream")] {
            let tool = read_all(
                role,
                &fixture(&format!("claude-{v}-toolerror.{kind}.jsonl")),
            );
            let (refused, failed) = outcomes(&tool);
            assert!(refused.is_empty(), "{v} {kind}: {refused:?}");
            assert_eq!(
                failed,
                [("toolu_fake_mcp__time__erroring_tool".to_owned(), None)],
                "{v} {kind}"
            );
            let rpc = read_all(
                role,
                &fixture(&format!("claude-{v}-protoerror.{kind}.jsonl")),
            );
            let (refused, failed) = outcomes(&rpc);
            assert!(refused.is_empty(), "{v} {kind}: {refused:?}");
            let expected = (v == "2.1.197").then_some(ReasonCode::ProtocolError);
            assert_eq!(
                failed,
                [("toolu_fake_mcp__time__rpc_error_tool".to_owned(), expected)],
                "{v} {kind}"
            );
        }
    }
}

/// GIVEN the allowed call, a deny rule (the tool removed before the
/// model) and a server denied by managed policy (never connected) WHEN
/// read THEN no refusal and no failure.
#[test]
fn an_allowed_call_and_a_tool_never_offered_refuse_nothing() {
    for v in VERSIONS {
        for case in ["allowed", "denyrule", "policyserver"] {
            for (role, kind) in [(TRANSCRIPT, "transcript"), (STREAM_JSON, "stream")] {
                let got = read_all(role, &fixture(&format!("claude-{v}-{case}.{kind}.jsonl")));
                let (refused, failed) = outcomes(&got);
                assert!(
                    refused.is_empty() && failed.is_empty(),
                    "{v} {case} {kind}: {got:?}"
                );
            }
        }
    }
}

/// GIVEN Claude Code's own words (and words that only look like them)
/// WHEN compared THEN each says what its constant says, and nothing else.
#[test]
fn the_words_compared_are_claude_code_s_own() {
    let cases: [(&str, Option<ErrorWords>); 8] = [
        (
            "Claude requested permissions to use mcp__a__b, but you haven't granted it yet.",
            Some(ErrorWords::Refused(ReasonCode::ApprovalRequired)),
        ),
        (
            "PreToolUse:mcp__a__b hook error: [x]: no",
            Some(ErrorWords::Refused(ReasonCode::BlockedByHook)),
        ),
        (
            "Permission to use mcp__a__b has been denied.",
            Some(ErrorWords::Refused(ReasonCode::PermissionDenied)),
        ),
        (
            "MCP error -32603: boom",
            Some(ErrorWords::Failed(ReasonCode::ProtocolError)),
        ),
        ("MCP error -: boom", None),
        ("the tool failed", None),
        ("Claude requested permissions to use mcp__a__b", None),
        ("PreToolUse:mcp__a__b", None),
    ];
    for (words, expected) in cases {
        assert_eq!(error_said(words), expected, "{words}");
    }
    assert_eq!(denial_reason(Some("hook"), None), ReasonCode::BlockedByHook);
    assert_eq!(
        denial_reason(Some("asyncAgent"), None),
        ReasonCode::ApprovalRequired
    );
    assert_eq!(
        denial_reason(Some("rule"), None),
        ReasonCode::PermissionDenied
    );
    assert_eq!(
        denial_reason(None, Some("something else")),
        ReasonCode::PermissionDenied
    );
}

/// GIVEN a refusal whose words hold a secret (a hook's output) WHEN read
/// THEN the secret is in no evidence read.
#[test]
fn a_refusal_s_words_are_never_kept() {
    let secret = "SECRET-7f3a9c";
    let record = format!(
        r#"{{"type":"user","sessionId":"s1","timestamp":"2026-12-03T16:00:00Z","cwd":"/tmp/work","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{CALL}","content":"PreToolUse:mcp__time__get_current_time hook error: [/x]: {secret}","is_error":true}}]}}}}"#
    );
    let stream = format!(
        r#"{{"type":"system","subtype":"permission_denied","tool_name":"mcp__time__get_current_time","tool_use_id":"{CALL}","decision_reason_type":"hook","decision_reason":"{secret}","message":"{secret}","session_id":"s1"}}"#
    );
    for (role, line) in [(TRANSCRIPT, record), (STREAM_JSON, stream)] {
        let got = read_all(role, &line);
        assert!(!got.is_empty(), "{role}");
        let shown = format!("{got:?}");
        assert!(!shown.contains(secret), "{role}: {shown}");
        assert_eq!(
            outcomes(&got).0,
            [(CALL.to_owned(), ReasonCode::BlockedByHook)]
        );
    }
}

/// GIVEN the newest Claude Code's headless answer to a call no one could
/// approve, stamped by the SDK as `user-rejected` (a real 2.1.332 run
/// writes both: the words "you haven't granted it yet" and
/// `tool_result_meta[{non_execution_kind: "user-rejected"}]`) WHEN it is
/// read THEN the words, the more precise, decide: `approval_required`. A
/// stamp with no refusal in the words still says `permission_denied`.
#[test]
fn a_headless_refusal_s_words_win_over_the_sdk_stamp() {
    let run = fixture("claude-2.1.332-noperm.stream.jsonl");
    let asked = run
        .lines()
        .find(|l| l.contains("\"tool_result\"") && l.contains("haven't granted"))
        .expect("the refused call's result")
        .to_owned();
    let stamp = format!(
        r#","tool_result_meta":[{{"id":"{CALL}","non_execution_kind":"user-rejected"}}]}}"#
    );
    let stamped = format!("{}{stamp}", asked.trim_end().trim_end_matches('}'));
    assert!(stamped.contains("non_execution_kind"), "{stamped}");
    let refusals = |result: &str| {
        // The run without its permission_denied line: the result decides.
        let text: Vec<&str> = run
            .lines()
            .filter(|l| !l.contains("\"subtype\":\"permission_denied\""))
            .map(|l| if l == asked { result } else { l })
            .collect();
        outcomes(&read_all(STREAM_JSON, &text.join("\n"))).0
    };
    assert_eq!(
        refusals(&stamped),
        [(CALL.to_owned(), ReasonCode::ApprovalRequired)]
    );
    let plain = stamped.replace(
        "Claude requested permissions to use mcp__time__get_current_time, but you haven't granted it yet.",
        "Something else happened.",
    );
    assert_ne!(plain, stamped);
    assert_eq!(
        refusals(&plain),
        [(CALL.to_owned(), ReasonCode::PermissionDenied)]
    );
}
