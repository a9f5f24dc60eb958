//! What `codex exec --json` printed (issue 56 §4), read as the rollout
//! the same run wrote is: real runs of Codex 0.171.0 against the fake
//! model, each kept twice (`*.exec.jsonl`, stdout; `*.rollout.jsonl`, the
//! rollout, trimmed): the four refusal cases (`tests/fixtures/refusals`)
//! and a run with a server whose command does not exist
//! (`tests/fixtures/records-by-path/codex-0.171.0-broken.*`).

use std::collections::BTreeMap;

use tether_core::model::Evidence;
use tether_core::records::{RecordAnswer, RecordFile};
use tether_core::vocab::{EvidenceKind, ReasonCode};
use tether_passthrough_codex::records::{EXEC_JSON, ROLLOUT, read};

/// Each pair: (folder under tests/fixtures, case).
const PAIRS: &[(&str, &str)] = &[
    ("refusals", "approve"),
    ("refusals", "noapproval"),
    ("refusals", "toolerror"),
    ("refusals", "protoerror"),
    ("records-by-path", "broken"),
];

fn fixture(folder: &str, name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(folder)
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every line's answer, read as a file of `role`.
fn answers(role: &str, text: &str) -> Vec<RecordAnswer> {
    let segments = vec!["by-path".to_owned(), "x.jsonl".to_owned()];
    let configured = vec!["time".to_owned()];
    let file = RecordFile {
        role,
        segments: &segments,
        session: None,
        configured: &configured,
    };
    text.lines().map(|line| read(&file, line)).collect()
}

/// One call as it ended: (kind, server, tool, outcome, reason).
type Ended = (
    EvidenceKind,
    String,
    String,
    Option<bool>,
    Option<ReasonCode>,
);

/// What a file says of its session: its id, the servers named, and each
/// call as it ended (kind, server, tool, outcome, reason), its evidence
/// folded by the call's id (a call and its end are one).
#[derive(Debug, PartialEq)]
struct Said {
    session: Option<String>,
    servers: Vec<String>,
    calls: Vec<Ended>,
}

fn said(role: &str, text: &str) -> Said {
    let mut session = None;
    let mut servers = Vec::new();
    let mut by_id: BTreeMap<String, Evidence> = BTreeMap::new();
    for answer in answers(role, text) {
        let RecordAnswer::Read(reading) = answer else {
            continue;
        };
        session = session.or(reading.session);
        servers.extend(reading.servers.into_iter().map(|s| s.name));
        for e in reading.evidence {
            let id = e.connection_id.clone().expect("each call has its id");
            by_id.insert(id, e);
        }
    }
    servers.sort();
    servers.dedup();
    let mut calls: Vec<_> = by_id
        .into_values()
        .map(|e| {
            (
                e.kind,
                e.server.unwrap_or_default(),
                e.tool.unwrap_or_default(),
                e.ok,
                e.reason_code,
            )
        })
        .collect();
    calls.sort_by_key(|c| format!("{c:?}"));
    Said {
        session,
        servers,
        calls,
    }
}

/// GIVEN each run's `exec --json` output and its rollout WHEN each is
/// read as its own kind of file THEN both say the same session, servers,
/// calls and refusals, and each case what it is.
#[test]
fn exec_output_and_rollout_agree() {
    for (folder, case) in PAIRS {
        let exec = said(
            EXEC_JSON,
            &fixture(folder, &format!("codex-0.171.0-{case}.exec.jsonl")),
        );
        let rollout = said(
            ROLLOUT,
            &fixture(folder, &format!("codex-0.171.0-{case}.rollout.jsonl")),
        );
        assert_eq!(exec, rollout, "{case}");
        assert!(exec.session.is_some(), "{case}: {exec:?}");
        let want = match *case {
            "approve" | "broken" => (EvidenceKind::ToolCallObserved, Some(true), None),
            "noapproval" => (
                EvidenceKind::ToolCallRefused,
                None,
                Some(ReasonCode::ApprovalRequired),
            ),
            "toolerror" => (
                EvidenceKind::ToolCallObserved,
                Some(false),
                Some(ReasonCode::ToolError),
            ),
            _ => (
                EvidenceKind::ToolCallObserved,
                Some(false),
                Some(ReasonCode::ProtocolError),
            ),
        };
        let got: Vec<_> = exec
            .calls
            .iter()
            .map(|c| (c.0.clone(), c.3, c.4.clone()))
            .collect();
        assert_eq!(got, [want], "{case}: {exec:?}");
        // A server that never started is named by neither.
        assert_eq!(exec.servers, ["time"], "{case}");
    }
}

/// GIVEN each kind of file WHEN read as the other THEN no line is known:
/// neither is taken for the other.
#[test]
fn neither_is_read_as_the_other() {
    for (folder, case) in PAIRS {
        for (role, other) in [(ROLLOUT, "exec"), (EXEC_JSON, "rollout")] {
            let text = fixture(folder, &format!("codex-0.171.0-{case}.{other}.jsonl"));
            for answer in answers(role, &text) {
                assert_eq!(answer, RecordAnswer::Unknown, "{case}: {other} as {role}");
            }
        }
    }
}

/// GIVEN exec's other events (a warning item, the model's reconnects, a
/// failed turn: shapes from a real 0.171.0 run and exec_events.rs) and
/// an item type no release prints WHEN read THEN the known ones are known
/// and say nothing; the unknown one is counted as unknown.
#[test]
fn codex_s_own_failures_are_known_and_say_nothing() {
    for line in [
        r#"{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `gpt-5.1` not found."}}"#,
        r#"{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}"#,
        r#"{"type":"turn.failed","error":{"message":"stream disconnected before completion"}}"#,
        r#"{"type":"turn.completed","usage":{"input_tokens":20,"cached_input_tokens":0,"output_tokens":10}}"#,
        r#"{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"done"}}"#,
    ] {
        assert_eq!(answers(EXEC_JSON, line), [RecordAnswer::Ignored], "{line}");
    }
    // A real run whose model answered 400: the thread, a warning, the
    // error and the failed turn, every line known, no evidence.
    let failed = answers(
        EXEC_JSON,
        &fixture("records-by-path", "codex-0.171.0-turnfailed.exec.jsonl"),
    );
    assert_eq!(failed.len(), 5);
    for answer in &failed[1..] {
        assert_eq!(answer, &RecordAnswer::Ignored, "{failed:?}");
    }
    let RecordAnswer::Read(thread) = &failed[0] else {
        panic!("{failed:?}");
    };
    assert!(thread.session.is_some() && thread.evidence.is_empty());
    let unknown = r#"{"type":"item.completed","item":{"id":"item_3","type":"hologram"}}"#;
    assert_eq!(answers(EXEC_JSON, unknown), [RecordAnswer::Unknown]);
}

/// GIVEN a call whose arguments, result and Codex's words carry a planted
/// secret WHEN read THEN the call and its refusal or failure, and the
/// secret in no evidence.
#[test]
fn no_argument_result_or_words_are_kept() {
    let secret = "SECRET-e7c1";
    for (end, kind, reason) in [
        (
            format!(
                r#""result":null,"error":{{"message":"user rejected MCP tool call {secret}"}},"status":"failed""#
            ),
            EvidenceKind::ToolCallRefused,
            Some(ReasonCode::PermissionDenied),
        ),
        (
            format!(
                r#""result":{{"content":[{{"type":"text","text":"{secret}"}}],"structured_content":null}},"error":null,"status":"failed""#
            ),
            EvidenceKind::ToolCallObserved,
            Some(ReasonCode::ToolError),
        ),
        (
            format!(
                r#""result":null,"error":{{"message":"tool call error: {secret}\n\nCaused by:\n    Mcp error: -32603: {secret}"}},"status":"failed""#
            ),
            EvidenceKind::ToolCallObserved,
            Some(ReasonCode::ProtocolError),
        ),
    ] {
        let line = format!(
            r#"{{"type":"item.completed","item":{{"id":"item_1","type":"mcp_tool_call","server":"time","tool":"get_current_time","arguments":{{"k":"{secret}"}},{end}}}}}"#
        );
        let got = answers(EXEC_JSON, &line);
        assert!(!format!("{got:?}").contains(secret), "{got:?}");
        let [RecordAnswer::Read(reading)] = &got[..] else {
            panic!("{got:?}");
        };
        let e = &reading.evidence[0];
        assert_eq!((&e.kind, &e.reason_code), (&kind, &reason), "{line}");
    }
}
