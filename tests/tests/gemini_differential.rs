//! Issue 68 §1 for Gemini CLI's readers (its chats, `session-*.jsonl`
//! and, before 0.39, `session-*.json`, and its stream-json): the fast path
//! (borrowed structs) against the plain path (`records::plain`, the record
//! parsed whole as a `serde_json::Value`).
//!
//! - GIVEN every Gemini session file in the repository (fixtures of real
//!   runs of 0.10.0, 0.30.0, 0.31 and 0.61.0, refusals, call errors) WHEN
//!   each line (each document, for the old chats) is read both ways THEN
//!   both give the same answer.
//! - GIVEN records of every kind the readers read, generated with arbitrary
//!   strings (every escape, `\u` and surrogate pairs, control characters,
//!   long strings across 64-byte boundaries, planted secrets) and Gemini's
//!   own words, keys in any order, compact and pretty WHEN read both ways
//!   THEN the same answer, and no planted secret in it; with `null` in
//!   place of any field the same; with a field of the wrong type the fast
//!   path agrees or names the record's kind as unreadable (never "unknown
//!   kind").

use proptest::prelude::*;
use serde_json::{Value, json};
use tether_core::records::{RecordAnswer, RecordFile, Unparsed};
use tether_passthrough_gemini::records::{
    GEMINI_CHAT, GEMINI_LEGACY_CHAT, STREAM_JSON, plain, read,
};
use tether_passthrough_gemini::telemetry::Flavor;
use tether_tests::differential::{
    SECRET, any_style, any_text, every_line_reads_the_same, files_ending, no_secret, write,
    wrong_types,
};

const CONFIGURED: &[&str] = &["count", "time", "my_srv"];

fn configured() -> Vec<String> {
    CONFIGURED.iter().map(|s| (*s).to_owned()).collect()
}

/// Both readings of `record` in the file role `role`.
fn both(role: &'static str, record: &str) -> (RecordAnswer, RecordAnswer) {
    let segments: Vec<String> = ["tmp", "proj", "chats", "session-x.jsonl"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let configured = configured();
    let file = RecordFile {
        role,
        segments: &segments,
        session: None,
        configured: &configured,
    };
    let fast = read(Flavor::Gemini, &file, record);
    let slow =
        plain::read(Flavor::Gemini, &file, record).expect("Gemini's roles have a plain path");
    (fast, slow)
}

/// A file's role, by the name its fixture has.
fn role_of(path: &str) -> &'static str {
    let file = path.rsplit('/').next().unwrap_or(path);
    if file.contains(".stream.") || file.starts_with("stream-") {
        STREAM_JSON
    } else if file.ends_with(".json") {
        GEMINI_LEGACY_CHAT
    } else {
        GEMINI_CHAT
    }
}

/// GIVEN every Gemini session file in the repository WHEN each line (each
/// whole document, for a chat before 0.39) is read by both paths THEN they
/// agree.
#[test]
fn every_gemini_session_file_in_the_repository_reads_the_same_both_ways() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let gemini = |p: &str| p.contains("gemini") && !p.contains("/telemetry/");
    let lines_files = files_ending(&root, ".jsonl", &gemini);
    assert!(
        lines_files.len() >= 20,
        "Gemini files found: {lines_files:?}"
    );
    let mut lines = 0;
    for path in &lines_files {
        let role = role_of(&path.to_string_lossy());
        lines += every_line_reads_the_same(
            std::slice::from_ref(path),
            |l| both(role, l).0,
            |l| both(role, l).1,
        );
    }
    assert!(lines > 150, "{lines} lines");
    let documents = files_ending(&root, ".json", &gemini);
    assert!(documents.len() >= 5, "old chats found: {documents:?}");
    for path in documents {
        let text = std::fs::read_to_string(&path).expect("fixture");
        let (fast, slow) = both(GEMINI_LEGACY_CHAT, &text);
        assert_eq!(fast, slow, "{} reads differently", path.display());
        assert!(
            matches!(fast, RecordAnswer::Read(_)),
            "{}: {fast:?}",
            path.display()
        );
    }
}

/// A name, or anything.
fn any_name() -> BoxedStrategy<String> {
    prop_oneof![
        3 => prop::sample::select(vec!["count", "time", "my_srv", "stamp", "get_time", "x-y.z", "gone"]).prop_map(str::to_owned),
        1 => any_text(),
    ]
.boxed()
}

/// A tool's name as the model calls it: `mcp_SERVER_TOOL`, a skill's
/// activation, a built-in's, an older release's `SERVER__TOOL`, or
/// anything.
fn any_called() -> BoxedStrategy<String> {
    prop_oneof![
        (any_name(), any_name()).prop_map(|(s, t)| format!("mcp_{s}_{t}")),
        Just("activate_skill".to_owned()),
        Just("read_file".to_owned()),
        (any_name(), any_name()).prop_map(|(s, t)| format!("{s}__{t}")),
        any_text(),
    ]
    .boxed()
}

/// Gemini CLI's own words for how a call ended (each from its shipped
/// code, `ended.rs`), or anything.
fn any_words() -> BoxedStrategy<String> {
    let embedded = |m: &str| {
        format!(
            "MCP tool 'stamp' reported tool error for function call: {{\"name\":\"stamp\",\"args\":{{\"q\":\"{SECRET} with response: []\"}}}} with response: [{{\"functionResponse\":{{\"name\":\"stamp\",\"response\":{{\"error\":{{\"message\":\"{m}\",\"isError\":true}}}}}}}}]"
        )
    };
    prop_oneof![
        Just("Tool \"mcp_count_gone\" not found. Did you mean one of: \"write_file\", \"mcp_count_stamp\"?".to_owned()),
        Just("Tool \"mcp_count_gone\" not found in registry. Tools must use the exact names that are registered.".to_owned()),
        Just("Tool \"gone\" not found in registry.".to_owned()),
        Just(embedded("MCP error -32001: Request timed out")),
        Just(embedded("MCP error -32000: Connection closed")),
        Just(embedded("MCP error -32602: bad args")),
        Just("MCP error -32001: Request timed out".to_owned()),
        Just("Error: MCP tool 'stamp' reported an error.".to_owned()),
        Just("Tool execution denied by policy.".to_owned()),
        Just(format!("Tool execution blocked: {SECRET}")),
        Just("Tool execution for \"stamp (count MCP Server)\" requires user confirmation, which is not supported in non-interactive mode.".to_owned()),
        Just(format!("Agent execution stopped by hook: {SECRET}")),
        Just("[Operation Cancelled] Reason: User denied execution.".to_owned()),
        Just("[Operation Cancelled] Reason: aborted".to_owned()),
        Just(format!("Error during discovery for MCP server 'count': {SECRET}")),
        Just("MCP server 'count' requires authentication using: /mcp auth count".to_owned()),
        Just("MCP issues detected. Run /mcp list for status.".to_owned()),
        any_text(),
    ]
.boxed()
}

/// Gemini CLI 0.61.0's words for a failed model API request (`[API
/// Error: …]` around @google/genai's error: no HTTP answer, or the API's
/// body with its code, a planted secret in its message), or anything.
fn any_api_error() -> BoxedStrategy<String> {
    prop_oneof![
        Just("[API Error: exception TypeError: fetch failed sending request]".to_owned()),
        (prop::sample::select(vec![400_u16, 401, 403, 429, 500]), any_text()).prop_map(|(code, m)| {
            let body = json!({"error": {"code": code, "message": format!("{SECRET} {m}"), "status": "UNAUTHENTICATED"}});
            format!("[API Error: {body}]")
        }),
        Just(format!("[API Error: {SECRET} (Status: UNAUTHENTICATED)]")),
        any_text().prop_map(|t| format!("[API Error: {t}]")),
        any_text(),
    ]
    .boxed()
}

fn time() -> &'static str {
    "2026-12-03T19:07:56.951Z"
}

fn any_status() -> BoxedStrategy<String> {
    prop_oneof![
        Just("success".to_owned()),
        Just("error".to_owned()),
        Just("cancelled".to_owned()),
        any_text(),
    ]
    .boxed()
}

/// One `toolCalls` item.
fn any_call() -> BoxedStrategy<Value> {
    (
        any_called(),
        any_status(),
        any_words(),
        any_words(),
        any::<bool>(),
        (any_name(), any_name(), any_text()),
    )
        .prop_map(|(called, status, shown, error, mcp_display, (s, t, id))| {
            let display = if mcp_display {
                format!("{t} ({s} MCP Server)")
            } else {
                called.clone()
            };
            json!({"id": id, "name": called, "args": {"name": s, "timezone": SECRET},
                "result": [{"functionResponse": {"id": id, "name": called, "response": {"error": error, "output": SECRET}}}],
                "status": status, "timestamp": time(), "resultDisplay": shown, "description": SECRET,
                "displayName": display, "renderOutputAsMarkdown": true})
        })
.boxed()
}

/// One chat line of every kind the chat reader reads (or counts unread).
fn any_chat_line() -> BoxedStrategy<Value> {
    prop_oneof![
        (any_text(), any_text()).prop_map(|(id, hash)| json!({"sessionId": id, "projectHash": hash, "startTime": time(), "lastUpdated": time(), "kind": "main"})),
        any_text().prop_map(|t| json!({"$set": {"lastUpdated": time(), "messages": [{"id": "m", "type": "user", "content": [{"text": t}]}]}})),
        any_text().prop_map(|id| json!({"$rewindTo": id})),
        any_text().prop_map(|t| json!({"id": "u", "timestamp": time(), "type": "user", "content": [{"text": t}]})),
        prop::collection::vec(any_call(), 0..4).prop_map(|calls| json!({"id": "g", "timestamp": time(), "type": "gemini", "content": SECRET, "thoughts": [], "model": "m", "toolCalls": calls})),
        (prop::sample::select(vec!["error", "warning", "info"]), any_words()).prop_map(|(k, w)| json!({"id": "i", "timestamp": time(), "type": k, "content": w})),
    ]
.boxed()
}

/// One stream-json line of every kind Gemini CLI 0.61.0 prints.
fn any_stream_line() -> BoxedStrategy<Value> {
    prop_oneof![
        any_text().prop_map(|id| json!({"type": "init", "timestamp": time(), "session_id": id, "model": "gemini-2.5-pro"})),
        any_text().prop_map(|t| json!({"type": "message", "timestamp": time(), "role": "assistant", "content": t, "delta": true})),
        (any_called(), any_text(), any_name()).prop_map(|(called, id, skill)| json!({"type": "tool_use", "timestamp": time(), "tool_name": called, "tool_id": id, "parameters": {"name": skill, "q": SECRET}})),
        (any_text(), any_status(), any_words(), any_words(), prop::sample::select(vec!["tool_not_registered", "mcp_tool_error", "policy_violation", "unhandled_exception", "stop_execution", "x"])).prop_map(|(id, status, output, message, kind)| json!({"type": "tool_result", "timestamp": time(), "tool_id": id, "status": status, "output": output, "error": {"type": kind, "message": message}})),
        any_words().prop_map(|w| json!({"type": "error", "timestamp": time(), "severity": "warning", "message": w})),
        Just(json!({"type": "result", "timestamp": time(), "status": "success", "stats": {"total_tokens": 30, "tool_calls": 1}})),
        (any_status(), any_api_error()).prop_map(|(status, message)| json!({"type": "result", "timestamp": time(), "status": status, "error": {"type": "unknown", "message": message}, "stats": {"total_tokens": 0, "tool_calls": 0}})),
    ]
.boxed()
}

/// One record of any of the three roles, with its role.
fn any_record() -> impl Strategy<Value = (&'static str, Value)> {
    prop_oneof![
        any_chat_line().prop_map(|v| (GEMINI_CHAT, v)),
        prop::collection::vec(any_chat_line(), 0..4).prop_map(|messages| (
            GEMINI_LEGACY_CHAT,
            json!({"sessionId": "s1", "projectHash": "h", "startTime": time(), "lastUpdated": time(), "messages": messages})
        )),
        any_stream_line().prop_map(|v| (STREAM_JSON, v)),
    ]
}

/// The fields whose wrong type makes another kind of record, not a
/// record of a kind with a field of the wrong type.
const KIND_KEYS: &[&str] = &["type", "$set", "$rewindTo", "sessionId"];

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// GIVEN a record of a kind a reader reads, written any way WHEN read
    /// both ways THEN the same answer, with no planted secret in it.
    #[test]
    fn generated_records_read_the_same_both_ways((role, record) in any_record(), style in any_style()) {
        let text = write(&record, style);
        let (fast, slow) = both(role, &text);
        prop_assert_eq!(&fast, &slow, "{}", text);
        no_secret(&fast, &text, &configured());
    }

    /// GIVEN the same with `null`, or a value of the wrong type, in place
    /// of one field WHEN read both ways THEN `null` reads the same; a wrong
    /// type reads the same or is named unreadable (its kind said), never
    /// an unknown kind; no planted secret either way.
    #[test]
    fn a_null_or_a_wrong_type_is_never_lost_in_silence(
        role in prop::sample::select(vec![GEMINI_CHAT, GEMINI_LEGACY_CHAT, STREAM_JSON]),
        (chat, wrong) in wrong_types(any_chat_line(), KIND_KEYS),
        (stream, wrong_in_stream) in wrong_types(any_stream_line(), KIND_KEYS),
        style in any_style(),
    ) {
        let (record, wrong) = match role {
            r if r == STREAM_JSON => (stream, wrong_in_stream),
            r if r == GEMINI_CHAT => (chat, wrong),
            _ => (json!({"sessionId": "s1", "startTime": time(), "messages": [chat]}), wrong),
        };
        let text = write(&record, style);
        let (fast, slow) = both(role, &text);
        no_secret(&fast, &text, &configured());
        if fast != slow {
            prop_assert!(wrong != Value::Null, "null read differently: {} → {:?} vs {:?}", text, fast, slow);
            let named = matches!(&fast, RecordAnswer::Unparsed { why: Unparsed::WrongType, kind: Some(_) });
            prop_assert!(named, "{} → fast {:?}, plain {:?}", text, fast, slow);
        }
    }
}

/// GIVEN a line cut short, a line that is not JSON, and JSON that is not
/// an object WHEN either path reads it THEN the first two are unparsed
/// (cut short, not JSON), never a kind not read; the last of no kind.
#[test]
fn a_line_that_does_not_parse_is_said_so_both_ways() {
    for role in [GEMINI_CHAT, GEMINI_LEGACY_CHAT, STREAM_JSON] {
        for (line, want) in [
            (
                r#"{"type":"tool_use","tool_name":"mcp_count_stamp""#,
                RecordAnswer::Unparsed {
                    why: Unparsed::CutShort,
                    kind: None,
                },
            ),
            (
                "Loaded cached credentials.",
                RecordAnswer::Unparsed {
                    why: Unparsed::NotJson,
                    kind: None,
                },
            ),
            (r#"["init","s1"]"#, RecordAnswer::Unknown),
        ] {
            let (fast, slow) = both(role, line);
            assert_eq!(fast, want, "{role}: {line}");
            assert_eq!(slow, want, "{role}: {line}");
        }
    }
    // A known kind with a field of the wrong type: named, not unknown.
    let (fast, _) = both(
        STREAM_JSON,
        r#"{"type":"tool_result","tool_id":7,"status":"success"}"#,
    );
    assert_eq!(
        fast,
        RecordAnswer::Unparsed {
            why: Unparsed::WrongType,
            kind: Some("tool_result".to_owned())
        }
    );
}
