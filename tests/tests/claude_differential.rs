//! Issue 68 §1 for Claude Code's transcript reader: its fast path (the
//! Blanker, its taken header, the borrowed lenient parse) against its
//! plain path (`records::plain`, the record parsed whole as a
//! `serde_json::Value`, the same meanings taken from it). The harness is
//! the shared one (`tether_tests::differential`: `write(&Value, Style)`,
//! `files_below`).
//!
//! - GIVEN every Claude transcript and headless run's output in the
//!   repository WHEN each line is read both ways THEN the same answer.
//! - GIVEN records of every kind the reader reads, their strings arbitrary
//!   (every escape, `\u` and surrogate pairs, control characters, long
//!   strings across 64-byte boundaries, planted secrets), keys in any
//!   order, compact and pretty WHEN read both ways THEN the same answer,
//!   and no planted secret in it; with `null` or a wrong type in place of
//!   any field: the same answer (the plain path applies the same rules).

use proptest::prelude::*;
use serde_json::{Value, json};
use tether_core::records::{RecordAnswer, RecordFile};
use tether_passthrough_claude::records::{TRANSCRIPT, plain, read};
use tether_tests::differential::{
    SECRET, Style, any_text, every_line_reads_the_same, files_below, write,
};

fn fast(record: &str) -> RecordAnswer {
    let segments = vec![
        "projects".to_owned(),
        "-tmp-w".to_owned(),
        "s.jsonl".to_owned(),
    ];
    let file = RecordFile {
        role: TRANSCRIPT,
        segments: &segments,
        session: None,
        configured: &[],
    };
    read(&file, record)
}

fn slow(record: &str) -> RecordAnswer {
    plain::transcript(record)
}

/// GIVEN every Claude transcript and stream-json output in the repository
/// WHEN each line is read by both paths THEN they agree, line by line.
#[test]
fn every_claude_record_in_the_repository_reads_the_same_both_ways() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let files = files_below(&root, &|p| {
        p.contains("claude") && !p.contains("mcp-logs") && !p.contains("/telemetry/")
    });
    assert!(files.len() >= 20, "Claude files found: {files:?}");
    let lines = every_line_reads_the_same(&files, fast, slow);
    assert!(lines > 150, "{lines} lines");
}

/// A name, or anything.
fn any_name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec!["time", "github", "get_time", "x-y.z", "Stop", "PreToolUse"]).prop_map(str::to_owned),
        1 => any_text(),
    ]
}

/// A hook's command: a program, then arguments that may hold anything.
fn any_command() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec![
            "/home/me/check.sh",
            "[ -n \"$X\" ] && notify-send",
            "cd /a && bun run x.ts",
            "C:\\hooks\\gate.sh",
            "café.sh",
            "",
        ]),
        any_text(),
    )
        .prop_map(|(p, a)| format!("{p} {a}"))
}

/// Claude Code's own words for a failed call, or anything.
fn any_words() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(
            "<tool_use_error>Error: No such tool available: mcp__time__gone</tool_use_error>"
                .to_owned()
        ),
        Just(
            "Claude requested permissions to use mcp__time__x, but you haven't granted it yet."
                .to_owned()
        ),
        Just("Permission to use mcp__time__x has been denied.".to_owned()),
        Just("PreToolUse:mcp__time__x hook error: blocked".to_owned()),
        Just("MCP error -32602: bad".to_owned()),
        Just("The user doesn't want to proceed with this tool use.".to_owned()),
        any_text(),
    ]
}

/// The header Claude Code's transcript writer puts on a record.
fn head(mut record: Value, session: String) -> Value {
    let map = record.as_object_mut().expect("an object");
    for (k, v) in [
        ("parentUuid", json!("0d5cf1f1-baf7-446f-b2dd-5419f902aeaa")),
        ("isSidechain", json!(false)),
        ("userType", json!("external")),
        ("cwd", json!("/tmp/w")),
        ("sessionId", json!(session)),
        ("version", json!("2.1.223")),
        ("timestamp", json!("2026-12-02T09:16:47.136Z")),
        ("uuid", json!("9a1e0f3c-1111-4c6d-8e7f-0a1b2c3d4e5f")),
    ] {
        map.insert(k.to_owned(), v);
    }
    record
}

/// One record of every kind the transcript reader reads, its strings
/// arbitrary.
fn any_record() -> impl Strategy<Value = Value> {
    let (n, t, w, c) = (any_name, any_text, any_words, any_command);
    let hook_kinds = prop::sample::select(vec![
        "hook_success",
        "hook_non_blocking_error",
        "hook_blocking_error",
        "hook_error_during_execution",
        "hook_stopped_continuation",
        "hook_cancelled",
    ]);
    let body = prop_oneof![
        (n(), n(), t(), t(), n()).prop_map(|(s, tool, id, said, skill)| json!({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": said},
            {"type": "tool_use", "id": id, "name": format!("mcp__{s}__{tool}"), "input": {"q": SECRET}},
            {"type": "tool_use", "id": "toolu_2", "name": "Skill", "input": {"skill": skill, "args": SECRET}},
            {"type": "thinking", "thinking": SECRET, "signature": "x"}
        ]}})),
        (t(), w(), any::<bool>(), any::<bool>()).prop_map(|(id, words, error, items)| {
            let content = if items { json!([{"type": "text", "text": words}]) } else { json!(words) };
            json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": content, "is_error": error}]}, "toolUseResult": words})
        }),
        (t(), any::<bool>()).prop_map(|(words, meta)| json!({"type": "user", "isMeta": meta, "message": {"role": "user", "content": format!("Stop hook feedback:\n[{words}]: {SECRET}")}})),
        (prop::collection::vec(n(), 0..4), prop::collection::vec(n(), 0..3), prop::collection::vec(t(), 0..2)).prop_map(|(tools, failed, auth)| {
            let failed: Vec<Value> = failed.iter().map(|f| json!({"name": f, "errorCode": "ENOENT", "error": SECRET})).collect();
            let added: Vec<String> = tools.iter().map(|t| format!("mcp__time__{t}")).collect();
            json!({"type": "attachment", "attachment": {"type": "deferred_tools_delta", "addedNames": added, "failedMcpServers": failed, "needsAuthMcpServers": auth, "pendingMcpServers": []}})
        }),
        prop::collection::vec(n(), 0..4).prop_map(|tools| {
            let entries: Vec<Value> = tools.iter().map(|t| json!({"name": format!("mcp__github__{t}"), "description": SECRET, "input_schema": {"a": SECRET}})).collect();
            json!({"type": "attachment", "attachment": {"type": "deferred_tools_record", "entries": entries}})
        }),
        (n(), n(), t()).prop_map(|(tool, server, why)| json!({"type": "attachment", "attachment": {"type": "mcp_dropped_tools_delta", "addedEntries": [format!("\"{tool}\" (MCP server \"{server}\"): \"{why}\"")]}})),
        prop::collection::vec(n(), 0..4).prop_map(|names| json!({"type": "attachment", "attachment": {"type": "skill_listing", "names": names, "content": SECRET}})),
        (hook_kinds, n(), n(), c(), prop::option::of(-3i64..300), any::<bool>()).prop_map(|(kind, hook, event, command, exit, timed)| json!({"type": "attachment", "attachment": {"type": kind, "hookName": hook, "hookEvent": event, "command": command, "exitCode": exit, "timedOut": timed, "stdout": SECRET, "content": SECRET, "toolUseID": "0dd55f2f-075e"}})),
        (prop::collection::vec(c(), 0..3), prop::collection::vec(t(), 0..2), any::<bool>(), prop::option::of(n())).prop_map(|(commands, errors, prevented, label)| {
            let infos: Vec<Value> = commands.iter().map(|c| json!({"command": c, "durationMs": 12})).collect();
            json!({"type": "system", "subtype": "stop_hook_summary", "hookCount": infos.len(), "hookInfos": infos, "hookErrors": errors, "preventedContinuation": prevented, "stopReason": "", "hasOutput": false, "level": "suggestion", "toolUseID": "0dd55f2f-075e", "hookLabel": label})
        }),
        (n(), n(), c(), prop::sample::select(vec!["hook_progress", "mcp_progress", "bash_progress"]), prop::sample::select(vec!["started", "completed", "failed"])).prop_map(|(a, b, command, kind, status)| json!({"type": "progress", "data": {"type": kind, "hookEvent": a, "hookName": b, "command": command, "status": status, "serverName": a, "toolName": b, "output": SECRET}, "toolUseID": "toolu_9"})),
        prop::collection::vec(n(), 0..4).prop_map(|tools| {
            let tools: Vec<Value> = tools.iter().map(|t| json!({"name": format!("mcp__time__{t}"), "description": SECRET, "input_schema": {}})).collect();
            json!({"type": "api-request-shape", "shape": {"system": [{"type": "text", "text": SECRET}], "tools": tools}, "params": {"model": "m"}})
        }),
        prop::collection::vec(n(), 0..4).prop_map(|tools| json!({"type": "tools-used", "tools": tools.iter().map(|t| format!("mcp__time__{t}")).collect::<Vec<_>>()})),
        prop::sample::select(vec!["summary", "queue-operation", "file-history-snapshot", "custom-title", "last-prompt", "api-request", "cost-state", "no-such-kind"]).prop_map(|k| json!({"type": k, "content": SECRET})),
    ];
    (
        body,
        prop_oneof![
            Just("88b3e12c-a78e-4cfc-a6bf-0a90e7116bb5".to_owned()),
            any_text()
        ],
    )
        .prop_map(|(body, session)| head(body, session))
}

/// Every path to a field of `v` (objects, and objects in lists), for a
/// `null` or a wrong type put in its place.
fn paths(v: &Value, here: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                here.push(json!(k));
                out.push(here.clone());
                paths(child, here, out);
                here.pop();
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                here.push(json!(i));
                out.push(here.clone());
                paths(child, here, out);
                here.pop();
            }
        }
        _ => {}
    }
}

fn set(v: &mut Value, path: &[Value], to: Value) {
    let mut at = v;
    for step in path {
        at = match step {
            Value::String(k) => &mut at[k.as_str()],
            Value::Number(i) => &mut at[i.as_u64().unwrap_or(0) as usize],
            _ => return,
        };
    }
    *at = to;
}

fn style() -> impl Strategy<Value = Style> {
    (any::<u64>(), any::<bool>(), any::<bool>()).prop_map(|(seed, pretty, escape_more)| Style {
        seed,
        pretty,
        escape_more,
    })
}

/// No planted secret in what the reader gives, as the host keeps it:
/// a reading whose names are not names, or whose session id is not an id
/// (`is_session_id_like`: a secret planted there), is refused whole, every
/// name and summary passes the sanitizer, and a call's id pairs a call and
/// its end and is dropped before anything is kept.
fn no_secret(answer: &RecordAnswer, record: &str) {
    let mut answer = answer.clone();
    if let RecordAnswer::Read(reading) = &mut answer {
        if !reading.names_are_names(&[]) {
            return;
        }
        use tether_core::sanitize;
        for e in &mut reading.evidence {
            e.connection_id = None;
            e.server = e.server.as_deref().map(sanitize::name);
            e.tool = e.tool.as_deref().map(sanitize::name);
            e.summary = e.summary.as_deref().map(sanitize::summary);
            if let Some(c) = e.capability.as_deref_mut() {
                c.name = sanitize::name(&c.name);
                c.command = c.command.as_deref().map(sanitize::name);
                c.event = c.event.as_deref().map(sanitize::name);
                c.plugin = c.plugin.as_deref().map(sanitize::name);
            }
        }
        for s in &mut reading.servers {
            s.name = sanitize::name(&s.name);
        }
    }
    let shown = format!("{answer:?}");
    assert!(
        !shown.contains("PLANTED"),
        "a planted secret reached {shown} from {record}"
    );
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
        no_secret(&f, &text);
    }

    /// GIVEN the same with `null`, or a value of another type, in place of
    /// any field (in lists too) WHEN read both ways THEN the same answer:
    /// never a record lost to the fast path alone; no planted secret.
    #[test]
    fn a_null_or_a_wrong_type_reads_the_same_both_ways(
        record in any_record(),
        pick in any::<prop::sample::Index>(),
        wrong in prop_oneof![Just(Value::Null), Just(json!(7)), Just(json!(-1.5)), Just(json!([SECRET])), Just(json!({"k": SECRET})), Just(json!(true)), Just(json!("x"))],
        style in style(),
    ) {
        let mut all = Vec::new();
        paths(&record, &mut Vec::new(), &mut all);
        let mut record = record;
        if !all.is_empty() {
            let path = pick.get(&all).clone();
            set(&mut record, &path, wrong);
        }
        let text = write(&record, style);
        let (f, s) = (fast(&text), slow(&text));
        prop_assert_eq!(&f, &s, "{}", text);
        no_secret(&f, &text);
    }
}
