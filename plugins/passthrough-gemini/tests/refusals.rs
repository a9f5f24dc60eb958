//! Gemini CLI's and Qwen Code's refused calls, read from the records real
//! runs wrote (`tests/fixtures/refusals/{gemini,qwen}-VERSION-CASE.jsonl`,
//! recorded by `tests/tests/refusals_gemini.rs`'s runs and trimmed to
//! metadata: the harness's own words kept, a hook's and a tool's replaced
//! by `planted`).

use std::path::PathBuf;

use tether_core::model::Evidence;
use tether_core::records::{RecordAnswer, RecordFile};
use tether_core::vocab::{EvidenceKind, ReasonCode};
use tether_passthrough_gemini::records::{GEMINI_CHAT, QWEN_CHAT, read};
use tether_passthrough_gemini::telemetry::Flavor;

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/refusals")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every piece of evidence the fixture's lines give.
fn evidence(flavor: Flavor, name: &str) -> Vec<Evidence> {
    let segments: Vec<String> = match flavor {
        Flavor::Gemini => ["tmp", "proj", "chats", "session-1.jsonl"],
        Flavor::Qwen => ["projects", "proj", "chats", "s1.jsonl"],
    }
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let file = RecordFile {
        role: match flavor {
            Flavor::Gemini => GEMINI_CHAT,
            Flavor::Qwen => QWEN_CHAT,
        },
        segments: &segments,
        session: None,
        configured: &[],
    };
    let mut out = Vec::new();
    for line in fixture(name).lines() {
        let answer = read(flavor, &file, line);
        assert!(
            !format!("{answer:?}").contains("planted"),
            "{name}: {answer:?}"
        );
        if let RecordAnswer::Read(reading) = answer {
            out.extend(reading.evidence);
        }
    }
    out
}

type Seen = (EvidenceKind, Option<bool>, Option<ReasonCode>);

fn seen(e: &Evidence) -> Seen {
    (e.kind.clone(), e.ok, e.reason_code.clone())
}

/// GIVEN Gemini CLI 0.61's chats of a policy's deny rule, an ask rule in a
/// `-p` run, a BeforeTool hook's block, a tool error and an allowed call
/// WHEN they are read THEN each call of count's tool is what happened: a
/// refusal with its reason, a failure with `tool_error`, a success.
#[test]
fn gemini_chats_say_why_a_call_did_not_run() {
    use EvidenceKind::{ToolCallObserved as Observed, ToolCallRefused as Refused};
    for (case, want) in [
        (
            "policy-deny",
            (Refused, None, Some(ReasonCode::PermissionDenied)),
        ),
        (
            "headless-ask",
            (Refused, None, Some(ReasonCode::ApprovalRequired)),
        ),
        ("hook", (Refused, None, Some(ReasonCode::BlockedByHook))),
        (
            "tool-error",
            (Observed, Some(false), Some(ReasonCode::ToolError)),
        ),
        ("allowed", (Observed, Some(true), None)),
    ] {
        let name = format!("gemini-0.61.0-{case}.jsonl");
        let calls: Vec<Seen> = evidence(Flavor::Gemini, &name)
            .iter()
            .filter(|e| e.server.as_deref() == Some("count"))
            .map(seen)
            .collect();
        assert_eq!(calls, [want], "{name}");
    }
}

/// GIVEN Qwen Code 0.15's and 0.24's chats of a `-p` run with no approval,
/// a deny rule, a PreToolUse hook's block and (0.15) an allowed call WHEN
/// they are read THEN the MCP call's result is a refusal with its reason,
/// except 0.15's hook, whose record cannot tell a block from a stop after
/// the call ran: no outcome, never a failure.
#[test]
fn qwen_chats_say_why_a_call_did_not_run() {
    let refused = |r| Some((EvidenceKind::ToolCallRefused, None, Some(r)));
    for (version, case, want) in [
        ("0.15.10", "headless", refused(ReasonCode::ApprovalRequired)),
        ("0.24.4", "headless", refused(ReasonCode::ApprovalRequired)),
        ("0.15.10", "deny", refused(ReasonCode::PermissionDenied)),
        ("0.24.4", "deny", refused(ReasonCode::PermissionDenied)),
        ("0.24.4", "hook", refused(ReasonCode::BlockedByHook)),
        ("0.15.10", "hook", None),
        (
            "0.15.10",
            "allowed",
            Some((EvidenceKind::ToolCallObserved, Some(true), None)),
        ),
    ] {
        let name = format!("qwen-{version}-{case}.jsonl");
        let all = evidence(Flavor::Qwen, &name);
        // The fake model gives 0.15's tool search and the MCP call one id:
        // the call's result is the one written after it.
        let at = all
            .iter()
            .position(|e| e.server.as_deref() == Some("count"))
            .unwrap_or_else(|| panic!("{name}: no call of count: {all:?}"));
        let id = all[at].connection_id.clone().expect("the call's id");
        let got: Vec<Seen> = all[at..]
            .iter()
            .filter(|e| e.server.is_none() && e.connection_id.as_deref() == Some(&id))
            .map(seen)
            .collect();
        assert_eq!(got, want.into_iter().collect::<Vec<_>>(), "{name}");
    }
}
