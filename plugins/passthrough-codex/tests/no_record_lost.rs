//! Issue 68, Codex: records shaped exactly as Codex writes them
//! (`serde_json::to_string`: compact, `\"` and `\n` escapes, non-ASCII
//! raw), each read for what it proves: Codex's own resource tools are no
//! server, the servers their answers name answered, Codex's own failure
//! words name the failure, "no such tool" is never a use, and a record
//! that cannot be parsed says so, never "unknown kind".

use tether_core::model::Evidence;
use tether_core::records::{RecordAnswer, RecordFile, Unparsed};
use tether_core::vocab::{EvidenceKind, ReasonCode};
use tether_passthrough_codex::records::{ROLLOUT, read};

fn answer(record: &str) -> RecordAnswer {
    let segments = vec!["rollout-x.jsonl".to_owned()];
    let file = RecordFile {
        role: ROLLOUT,
        segments: &segments,
        session: None,
        configured: &[],
    };
    read(&file, record)
}

fn evidence(record: &str) -> Vec<Evidence> {
    match answer(record) {
        RecordAnswer::Read(r) => r.evidence,
        other => panic!("not read: {other:?}"),
    }
}

/// The result Codex writes for `list_mcp_resources` asked about every
/// server: its own JSON as the one text item (`ListResourcesPayload`).
const LISTING: &str = r#"{\"resources\":[{\"server\":\"figma\",\"uri\":\"file:///SECRET-URI\",\"name\":\"Design \\\"A\\\"\"},{\"server\":\"figma\",\"uri\":\"figma://b\",\"name\":\"B\"},{\"server\":\"linear\",\"uri\":\"linear://x\",\"name\":\"x\"}]}"#;

/// GIVEN Codex's `list_mcp_resources` filed under `codex` (0.117/0.121
/// shape), its answer naming `figma` twice and `linear` once WHEN read
/// THEN no call and no `codex` row, and figma and linear answered
/// (connected), with what showed it and how many; no URI or name is kept.
#[test]
fn codex_s_own_resource_tool_is_no_server_and_its_answer_shows_who_answered() {
    let record = format!(
        r#"{{"timestamp":"2026-03-30T10:00:01.000Z","type":"event_msg","payload":{{"type":"mcp_tool_call_end","call_id":"call_r1","invocation":{{"server":"codex","tool":"list_mcp_resources","arguments":{{}}}},"duration":{{"secs":0,"nanos":2000000}},"result":{{"Ok":{{"content":[{{"type":"text","text":"{LISTING}"}}],"isError":false}}}}}}}}"#
    );
    let ev = evidence(&record);
    assert!(
        ev.iter().all(|e| e.kind != EvidenceKind::ToolCallObserved),
        "{ev:?}"
    );
    assert!(ev.iter().all(|e| e.server.as_deref() != Some("codex")));
    let up: Vec<(&str, &str)> = ev
        .iter()
        .filter(|e| e.reported_status.as_deref() == Some("connected"))
        .map(|e| {
            (
                e.server.as_deref().unwrap_or(""),
                e.summary.as_deref().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        up,
        [
            (
                "figma",
                "Codex's list_mcp_resources named 2 of its resource(s)"
            ),
            (
                "linear",
                "Codex's list_mcp_resources named 1 of its resource(s)"
            ),
        ]
    );
    assert!(!format!("{ev:?}").contains("SECRET-URI"));
}

/// GIVEN `read_mcp_resource` filed under the server it read (0.171.0's
/// `McpToolCall` item) WHEN read THEN that server answered; no call.
#[test]
fn a_resource_read_shows_its_server_answered_and_is_no_call() {
    let record = r#"{"timestamp":"2026-12-03T13:54:57.000Z","type":"event_msg","payload":{"type":"item_completed","thread_id":"t","turn_id":"u","item":{"type":"McpToolCall","id":"call_r2","server":"figma","tool":"read_mcp_resource","status":"completed","arguments":{"server":"figma","uri":"figma://b"},"result":{"content":[{"type":"text","text":"{\"server\":\"figma\",\"uri\":\"figma://b\",\"contents\":[]}"}],"structuredContent":null},"error":null,"durationMs":3}}}"#;
    let ev = evidence(record);
    assert!(ev.iter().all(|e| e.kind != EvidenceKind::ToolCallObserved));
    assert_eq!(
        ev.iter()
            .filter(|e| e.reported_status.as_deref() == Some("connected"))
            .map(|e| e.server.as_deref())
            .collect::<Vec<_>>(),
        [Some("figma")]
    );
}

/// A Codex Desktop 0.118.0-alpha `function_call` of `mcp__S__T`.
fn desktop_call(id: &str) -> String {
    format!(
        r#"{{"timestamp":"2026-03-31T09:00:00.000Z","type":"response_item","payload":{{"type":"function_call","name":"mcp__monad__project_read","arguments":"{{\"around\":\"x\"}}","call_id":"{id}"}}}}"#
    )
}

/// Its `function_call_output`, `output` Codex's text as written.
fn desktop_output(id: &str, output: &str) -> String {
    format!(
        r#"{{"timestamp":"2026-03-31T09:02:00.000Z","type":"response_item","payload":{{"type":"function_call_output","call_id":"{id}","output":"{output}"}}}}"#
    )
}

fn end_of(record: &str) -> (EvidenceKind, Option<bool>, Option<ReasonCode>) {
    let ev = evidence(record);
    assert_eq!(ev.len(), 1, "{ev:?}");
    (ev[0].kind.clone(), ev[0].ok, ev[0].reason_code.clone())
}

/// GIVEN Codex Desktop 0.118.0-alpha's rollout (no `mcp_tool_call_*`
/// event) whose call's output is Codex's own failure text WHEN read THEN
/// the call is counted, and its end is the failure the words name: a
/// timeout, a closed connection, a JSON-RPC error; Codex's "no such tool"
/// is a refusal `tool_not_available`; a tool's own output says nothing.
#[test]
fn codex_desktop_s_failure_words_read_as_the_failure_they_name() {
    let ev = evidence(&desktop_call("call_d1"));
    assert_eq!(ev[0].kind, EvidenceKind::ToolCallObserved);
    assert_eq!(ev[0].server.as_deref(), Some("monad"));
    let timed_out = r"tool call error: tool call failed for `monad/project_read`\n\nCaused by:\n    timed out awaiting tools/call after 120s";
    assert_eq!(
        end_of(&desktop_output("call_d1", timed_out)),
        (
            EvidenceKind::ToolCallObserved,
            Some(false),
            Some(ReasonCode::Timeout)
        )
    );
    let closed = r"tool call error: tool call failed for `monad/project_read`\n\nCaused by:\n    Transport closed";
    assert_eq!(
        end_of(&desktop_output("call_d1", closed)).2,
        Some(ReasonCode::ConnectionClosed)
    );
    let rpc = r#"tool call error: tool call failed for `monad/project_read`\n\nCaused by:\n    Mcp error: -32602: invalid \"around\""#;
    assert_eq!(
        end_of(&desktop_output("call_d1", rpc)).2,
        Some(ReasonCode::ProtocolError)
    );
    assert_eq!(
        end_of(&desktop_output(
            "call_d1",
            "unsupported call: mcp__monad__project_read"
        )),
        (
            EvidenceKind::ToolCallRefused,
            None,
            Some(ReasonCode::ToolNotAvailable)
        )
    );
    assert_eq!(
        end_of(&desktop_output(
            "call_d1",
            r"tool call error: unknown MCP server 'monad'"
        ))
        .2,
        Some(ReasonCode::ToolNotAvailable)
    );
    // The tool's own output: no outcome read (never failed).
    let plain = desktop_output("call_d1", r#"{\"rows\":[\"tool call error: no\"]}"#);
    assert!(!matches!(answer(&plain), RecordAnswer::Read(_)));
    // The same words as a list of content items (newer releases).
    let items = format!(
        r#"{{"timestamp":"2026-03-31T09:02:00.000Z","type":"response_item","payload":{{"type":"function_call_output","call_id":"call_d1","output":[{{"type":"input_text","text":"{timed_out}"}}]}}}}"#
    );
    assert_eq!(end_of(&items).2, Some(ReasonCode::Timeout));
}

/// GIVEN a record cut short, a line that is not JSON, and a known kind
/// with a field of the wrong type WHEN read THEN each is unparsed, with
/// why (and the kind where known), never an unknown kind.
#[test]
fn a_record_that_cannot_be_parsed_says_why_never_unknown_kind() {
    let call = desktop_call("call_d2");
    let cut = &call[..call.len() / 2];
    assert_eq!(
        answer(cut),
        RecordAnswer::Unparsed {
            why: Unparsed::CutShort,
            kind: None
        }
    );
    assert_eq!(
        answer("{not json"),
        RecordAnswer::Unparsed {
            why: Unparsed::NotJson,
            kind: None
        }
    );
    let wrong = r#"{"timestamp":"2026-03-31T09:00:00.000Z","type":"event_msg","payload":{"type":"mcp_tool_call_end","call_id":"c","invocation":{"server":"time","tool":5}}}"#;
    assert_eq!(
        answer(wrong),
        RecordAnswer::Unparsed {
            why: Unparsed::WrongType,
            kind: Some("event_msg/mcp_tool_call_end".to_owned())
        }
    );
    // Valid JSON of a kind no release writes: unknown, as before.
    assert_eq!(
        answer(r#"{"timestamp":"2026-03-31T09:00:00.000Z","type":"brand_new","payload":{}}"#),
        RecordAnswer::Unknown
    );
}
