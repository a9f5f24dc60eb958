//! Issue 68 §1 for Codex's rollout reader: its fast path (borrowed
//! structs) against its plain path (`records::plain`, the record parsed
//! whole as a `serde_json::Value`).
//!
//! - GIVEN every Codex rollout in the repository (fixtures, real third-party
//!   rollouts, refusals) WHEN each line is read both ways THEN both give
//!   the same answer.
//! - GIVEN records of every kind the reader reads, generated with arbitrary
//!   strings (every escape, `\u` and surrogate pairs, control characters,
//!   long strings across 64-byte boundaries, planted secrets), keys in any
//!   order, compact and pretty WHEN read both ways THEN the same answer,
//!   and no planted secret in it; with `null` in place of any field the
//!   same; with a field of the wrong type the fast path either agrees or
//!   names the record's kind as unreadable (never "unknown kind").

use proptest::prelude::*;
use serde_json::{Value, json};
use tether_core::records::{RecordAnswer, RecordFile, Unparsed};
use tether_passthrough_codex::records::{ROLLOUT, plain, read};
use tether_tests::differential::{
    SECRET, any_style as style, any_text, every_line_reads_the_same, files_below, no_secret, write,
    wrong_types,
};

const CONFIGURED: &[&str] = &["time", "figma"];

fn fast(record: &str) -> RecordAnswer {
    let segments = vec!["rollout-x.jsonl".to_owned()];
    let configured: Vec<String> = CONFIGURED.iter().map(|s| (*s).to_owned()).collect();
    let file = RecordFile {
        role: ROLLOUT,
        segments: &segments,
        session: None,
        configured: &configured,
    };
    read(&file, record)
}

fn slow(record: &str) -> RecordAnswer {
    let configured: Vec<String> = CONFIGURED.iter().map(|s| (*s).to_owned()).collect();
    plain::rollout(record, &configured)
}

/// GIVEN every Codex rollout in the repository WHEN each line is read by
/// both paths THEN they agree, line by line.
#[test]
fn every_codex_rollout_in_the_repository_reads_the_same_both_ways() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let files = files_below(&root, &|p| {
        p.contains("codex") && !p.contains(".exec.") && !p.contains("/telemetry/")
    });
    assert!(files.len() >= 10, "Codex rollouts found: {files:?}");
    let lines = every_line_reads_the_same(&files, fast, slow);
    assert!(lines > 300, "{lines} lines");
}

/// A name, or anything.
fn any_name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec!["time", "figma", "linear", "codex", "get_time", "x-y.z"]).prop_map(str::to_owned),
        1 => any_text(),
    ]
}

/// Codex's own words, or anything.
fn any_words() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("tool call error: tool call failed for `time/get_time`\n\nCaused by:\n    timed out awaiting tools/call after 120s".to_owned()),
        Just("tool call error: tool call failed for `time/get_time`\n\nCaused by:\n    Transport closed".to_owned()),
        Just("tool call error: tool call failed for `time/get_time`\n\nCaused by:\n    Mcp error: -32602: bad".to_owned()),
        Just("tool call error: unknown MCP server 'gone'".to_owned()),
        Just("unsupported call: mcp__gone__tool".to_owned()),
        Just("user rejected MCP tool call".to_owned()),
        Just("MCP tool call requires approval, but approval policy is never".to_owned()),
        any_text(),
    ]
}

fn time() -> &'static str {
    "2026-12-03T13:54:57.123Z"
}

/// One record of every kind the rollout reader reads (and the kinds it
/// counts unread), its strings arbitrary.
fn any_record() -> impl Strategy<Value = Value> {
    let (n, t, w) = (any_name, any_text, any_words);
    prop_oneof![
        (t(), t(), t()).prop_map(|(id, cwd, v)| json!({"timestamp": time(), "type": "session_meta", "payload": {"id": id, "cwd": cwd, "cli_version": v, "originator": "codex_cli_rs"}})),
        (n(), n(), t()).prop_map(|(s, tool, id)| json!({"timestamp": time(), "type": "response_item", "payload": {"type": "function_call", "namespace": format!("mcp__{s}"), "name": tool, "arguments": "{}", "call_id": id}})),
        (n(), n(), t()).prop_map(|(s, tool, id)| json!({"timestamp": time(), "type": "response_item", "payload": {"type": "function_call", "name": format!("mcp__{s}__{tool}"), "arguments": "{\"a\":1}", "call_id": id}})),
        (w(), t(), any::<bool>()).prop_map(|(words, id, items)| {
            let output = if items { json!([{"type": "input_text", "text": words}]) } else { json!(words) };
            json!({"timestamp": time(), "type": "response_item", "payload": {"type": "function_call_output", "call_id": id, "output": output}})
        }),
        (n(), n(), t(), w(), 0u8..4).prop_map(|(s, tool, id, words, how)| {
            let result = match how {
                0 => json!({"Ok": {"content": [{"type": "text", "text": words}], "isError": false}}),
                1 => json!({"Ok": {"content": [], "isError": true}}),
                2 => json!({"Err": words}),
                _ => json!({"Ok": {"content": [{"type": "text", "text": words}]}, "Err": null}),
            };
            json!({"timestamp": time(), "type": "event_msg", "payload": {"type": "mcp_tool_call_end", "call_id": id, "invocation": {"server": s, "tool": tool, "arguments": {"q": words}}, "duration": {"secs": 0, "nanos": 5}, "result": result}})
        }),
        (prop::sample::select(vec!["codex", "figma"]), prop::sample::select(vec!["list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"]), prop::collection::vec((n(), t()), 0..5)).prop_map(|(s, tool, resources)| {
            let listed: Vec<Value> = resources.iter().map(|(server, uri)| json!({"server": server, "uri": uri, "name": uri})).collect();
            let text = serde_json::to_string(&json!({"resources": listed})).expect("json");
            json!({"timestamp": time(), "type": "event_msg", "payload": {"type": "mcp_tool_call_end", "call_id": "c1", "invocation": {"server": s, "tool": tool}, "result": {"Ok": {"content": [{"type": "text", "text": text}], "isError": false}}}})
        }),
        (n(), n(), t(), prop::sample::select(vec!["completed", "failed", "inProgress"]), prop::option::of(w()), any::<bool>()).prop_map(|(s, tool, id, status, words, has_result)| {
            let error = words.map(|m| json!({"message": m}));
            let result = has_result.then(|| json!({"content": [{"type": "text", "text": "x"}], "structuredContent": null}));
            json!({"timestamp": time(), "type": "event_msg", "payload": {"type": "item_completed", "thread_id": "t", "turn_id": "u", "item": {"type": "McpToolCall", "id": id, "server": s, "tool": tool, "status": status, "arguments": {}, "result": result, "error": error}}})
        }),
        (n(), prop::collection::vec(n(), 0..4)).prop_map(|(s, tools)| {
            let tools: Vec<Value> = tools.iter().map(|t| json!({"type": "function", "name": t, "description": SECRET})).collect();
            json!({"timestamp": time(), "type": "response_item", "payload": {"type": "tool_search_output", "call_id": "c", "status": "completed", "execution": "client", "tools": [{"type": "namespace", "name": format!("mcp__{s}"), "description": "", "tools": tools}]}})
        }),
        prop::collection::vec(n(), 0..4).prop_map(|skills| {
            let body = format!("### Available skills\n{}", skills.iter().map(|s| format!("- {s}: {SECRET}\n")).collect::<String>());
            json!({"timestamp": time(), "type": "response_item", "payload": {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": body}]}})
        }),
        prop::collection::vec(n(), 0..4).prop_map(|skills| {
            let body = format!("### Available skills\n{}", skills.iter().map(|s| format!("- {s}: x\n")).collect::<String>());
            json!({"timestamp": time(), "type": "world_state", "payload": {"state": {"host_skills": {"body": body}}}})
        }),
        prop::sample::select(vec!["hook_started", "exec_approval_request", "elicitation_request", "token_count"]).prop_map(|k| json!({"timestamp": time(), "type": "event_msg", "payload": {"type": k, "x": SECRET}})),
        t().prop_map(|text| json!({"timestamp": time(), "type": "response_item", "payload": {"type": "reasoning", "summary": [{"type": "summary_text", "text": text}], "content": null}})),
        (n(), n()).prop_map(|(s, tool)| json!({"type": "function_call", "name": format!("{s}__OAI_CODEX_MCP__{tool}"), "arguments": "{}", "call_id": "c"})),
    ]
}

fn configured() -> Vec<String> {
    CONFIGURED.iter().map(|s| (*s).to_owned()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// GIVEN a record of a kind the reader reads, written any way WHEN read
    /// both ways THEN the same answer, with no planted secret in it.
    #[test]
    fn generated_records_read_the_same_both_ways(record in any_record(), style in style()) {
        let text = write(&record, style);
        let (f, s) = (fast(&text), slow(&text));
        prop_assert_eq!(&f, &s, "{}", text);
        no_secret(&f, &text, &configured());
    }

    /// GIVEN the same with `null`, or a value of the wrong type, in place
    /// of one field WHEN read both ways THEN `null` reads the same; a wrong
    /// type reads the same or is named unreadable (its kind said), never
    /// an unknown kind; no planted secret either way.
    #[test]
    fn a_null_or_a_wrong_type_is_never_lost_in_silence(
        (record, wrong) in wrong_types(any_record(), &["type"]),
        style in style(),
    ) {
        // `type` decides the kind: a record with another type is another
        // kind (the plain path's and the fast path's alike), so it is spared.
        let text = write(&record, style);
        let (f, s) = (fast(&text), slow(&text));
        no_secret(&f, &text, &configured());
        if f != s {
            prop_assert!(wrong != Value::Null, "null read differently: {} → {:?} vs {:?}", text, f, s);
            let named = matches!(&f, RecordAnswer::Unparsed { why: Unparsed::WrongType, kind: Some(_) });
            prop_assert!(named, "{} → fast {:?}, plain {:?}", text, f, s);
        }
    }
}
