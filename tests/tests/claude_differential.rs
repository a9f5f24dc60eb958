//! Issue 68 §1 for Claude Code's three readers (its transcripts, a
//! server's MCP log, a headless run's stream-json): each fast path (the
//! Blanker, its taken header, the borrowed lenient parse) against its
//! plain path (`records::plain`, the record parsed whole as a
//! `serde_json::Value`, the same meanings taken from it). The harness is
//! the shared one (`tether_tests::differential`: `write(&Value, Style)`,
//! `files_below`).
//!
//! - GIVEN every Claude transcript, MCP log and headless run's output in
//!   the repository WHEN each line is read both ways, as the file it is
//!   THEN the same answer.
//! - The side readings of a transcript record (a `Skill` call's skill, a
//!   failed result's words, the SDK's `tool_result_meta` stamp, 2.1.14's
//!   Stop hook feedback) and of an init line (its reports, its tools) have
//!   their plain twins too (`records::Whole`): each is compared here.
//! - GIVEN records of every kind the reader reads, their strings arbitrary
//!   (every escape, `\u` and surrogate pairs, control characters, long
//!   strings across 64-byte boundaries, planted secrets), keys in any
//!   order, compact and pretty WHEN read both ways THEN the same answer,
//!   and no planted secret in it; with `null` or a wrong type in place of
//!   any field: the same answer (the plain path applies the same rules).

use proptest::prelude::*;
use serde_json::{Value, json};
use tether_core::records::{RecordAnswer, RecordFile};
use tether_passthrough_claude::records::{MCP_LOG, STREAM_JSON, TRANSCRIPT, plain, read_as};
use tether_tests::differential::{
    SECRET, Style, any_text, every_line_reads_the_same, files_below, write,
};

fn fast(record: &str) -> RecordAnswer {
    read_as(TRANSCRIPT, &["projects", "-tmp-w", "s.jsonl"], record)
}

fn slow(record: &str) -> RecordAnswer {
    plain::transcript(record)
}

/// Where a generated server log lies (below Claude Code's cache).
const LOG_AT: [&str; 3] = ["-tmp-w", "mcp-logs-time", "2026-12-01T20-53-19-575Z.jsonl"];

fn fast_log(record: &str) -> RecordAnswer {
    read_as(MCP_LOG, &LOG_AT, record)
}

fn slow_log(record: &str) -> RecordAnswer {
    let segments: Vec<String> = LOG_AT.iter().map(|s| (*s).to_owned()).collect();
    let file = RecordFile {
        role: MCP_LOG,
        segments: &segments,
        session: None,
        configured: &[],
    };
    plain::mcp_log(&file, record)
}

fn fast_stream(record: &str) -> RecordAnswer {
    read_as(STREAM_JSON, &["run.jsonl"], record)
}

fn slow_stream(record: &str) -> RecordAnswer {
    plain::stream_json(record)
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

/// GIVEN every Claude Code MCP log in the repository (real 2.1.197 and
/// 2.1.332 runs: connected, refused, a rejected token, an OAuth login
/// wanted, a command not found, a server that exits, calls) WHEN each
/// line is read both ways as its server's log THEN they agree.
#[test]
fn every_claude_mcp_log_in_the_repository_reads_the_same_both_ways() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let files = files_below(&root, &|p| p.contains("claude") && p.contains("mcp-logs"));
    assert!(files.len() >= 19, "Claude MCP logs found: {files:?}");
    let mut lines = 0;
    for path in &files {
        // The server is the log's folder (`mcp-logs-SERVER`), or the
        // fixture's own name where the real runs' logs were kept flat.
        let server = match path.parent().and_then(|d| d.file_name()) {
            Some(dir) if dir.to_string_lossy().starts_with("mcp-logs-") => {
                dir.to_string_lossy().into_owned()
            }
            _ => format!(
                "mcp-logs-{}",
                path.file_stem().expect("a name").to_string_lossy()
            ),
        };
        let segments = vec!["-tmp-w".to_owned(), server, "t.jsonl".to_owned()];
        let file = RecordFile {
            role: MCP_LOG,
            segments: &segments,
            session: None,
            configured: &[],
        };
        let fast = |line: &str| tether_passthrough_claude::records::read(&file, line);
        let slow = |line: &str| plain::mcp_log(&file, line);
        lines += every_line_reads_the_same(std::slice::from_ref(path), fast, slow);
    }
    assert!(lines > 200, "{lines} lines");
}

/// GIVEN every headless run's output (`claude -p --output-format
/// stream-json --verbose`) in the repository WHEN each line is read both
/// ways as stream-json THEN they agree.
#[test]
fn every_claude_stream_json_in_the_repository_reads_the_same_both_ways() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let files = files_below(&root, &|p| p.contains("claude") && p.contains("stream"));
    assert!(files.len() >= 18, "Claude stream-json found: {files:?}");
    let lines = every_line_reads_the_same(&files, fast_stream, slow_stream);
    assert!(lines > 90, "{lines} lines");
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

/// A skill as a `Skill` call or a `skill_listing` names it: one Claude
/// Code bundles, a plugin's (`PLUGIN:SKILL`), or anything.
fn any_skill() -> impl Strategy<Value = String> {
    prop_oneof![
        any_name(),
        prop::sample::select(vec!["simplify", "doctor", "my-plugin:review", "p:"])
            .prop_map(str::to_owned),
        (any_name(), any_name()).prop_map(|(p, s)| format!("{p}:{s}")),
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
        (n(), n(), t(), t(), any_skill(), t(), any_skill()).prop_map(|(s, tool, id, said, skill, skill_id, other)| json!({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": said},
            {"type": "tool_use", "id": id, "name": format!("mcp__{s}__{tool}"), "input": {"q": SECRET}},
            {"type": "tool_use", "id": skill_id, "name": "Skill", "input": {"skill": skill, "args": SECRET}},
            {"type": "thinking", "thinking": SECRET, "signature": "x"},
            {"type": "tool_use", "id": "toolu_3", "name": "Skill", "input": {"args": SECRET, "skill": other}}
        ]}})),
        (t(), w(), any::<bool>(), 0..3u8, prop::option::of(prop::sample::select(vec!["user-rejected", "permission-rule", "automode-blocked", "automode-unavailable", "automode-parsing-error", "interrupted", "cancelled"]))).prop_map(|(id, words, error, items, kind)| {
            let content = match items {
                0 => json!(words),
                1 => json!([{"type": "text", "text": words}]),
                // An image first: the words are not its first text.
                _ => json!([{"type": "image", "source": {"data": SECRET}}, {"type": "text", "text": words}]),
            };
            let mut record = json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": content, "is_error": error}]}, "toolUseResult": words});
            if let Some(kind) = kind {
                // 2.1.332's SDK stamp on a call that never ran.
                record["tool_result_meta"] = json!([{"id": "other"}, {"id": id, "non_execution_kind": kind}]);
            }
            record
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
        prop::collection::vec(any_skill(), 0..4).prop_map(|names| json!({"type": "attachment", "attachment": {"type": "skill_listing", "names": names, "content": SECRET}})),
        (hook_kinds, n(), n(), c(), prop::option::of(-3i64..300), any::<bool>()).prop_map(|(kind, hook, event, command, exit, timed)| json!({"type": "attachment", "attachment": {"type": kind, "hookName": hook, "hookEvent": event, "command": command, "exitCode": exit, "timedOut": timed, "stdout": SECRET, "content": SECRET, "toolUseID": "0dd55f2f-075e"}})),
        (prop::collection::vec(c(), 0..3), prop::collection::vec(t(), 0..2), any::<bool>(), prop::option::of(n())).prop_map(|(commands, errors, prevented, label)| {
            let infos: Vec<Value> = commands.iter().map(|c| json!({"command": c, "durationMs": 12})).collect();
            json!({"type": "system", "subtype": "stop_hook_summary", "hookCount": infos.len(), "hookInfos": infos, "hookErrors": errors, "preventedContinuation": prevented, "stopReason": "", "hasOutput": false, "level": "suggestion", "toolUseID": "0dd55f2f-075e", "hookLabel": label})
        }),
        // 2.1.332's record of a retried model request: its cause from the
        // connection's code or the status; its words never kept.
        (prop::option::of(prop::sample::select(vec![401, 529])), prop::option::of(prop::sample::select(vec!["ECONNREFUSED", "ENOTFOUND", "ETIMEDOUT", SECRET])), any::<bool>(), any::<bool>()).prop_map(|(status, code, tls, slow)| json!({"type": "system", "subtype": "api_error", "level": "error", "error": {"message": SECRET, "status": status, "formatted": SECRET, "connection": code.map(|c| json!({"code": c, "message": SECRET, "isSSLError": tls})), "isNetworkDown": true, "rateLimits": null, "noResponse": if slow { json!({"waitedMs": 1, "retryWaitMs": 2}) } else { Value::Null }}, "retryInMs": 502, "retryAttempt": 1, "maxRetries": 10, "source": "request_retry"})),
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

/// A session id as Claude Code mints one, or anything.
fn any_session() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("88b3e12c-a78e-4cfc-a6bf-0a90e7116bb5".to_owned()),
        any_text()
    ]
}

/// What Claude Code's MCP client logs of a server (2.1.197 and 2.1.332
/// wordings, from the real runs kept in `fixtures/records-real`), or
/// anything; a planted secret after some.
fn any_log_words() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("Successfully connected to stdio server in 120ms".to_owned()),
        Just("Connection established with capabilities: {\"hasTools\":true}".to_owned()),
        Just("Authentication required for HTTP server".to_owned()),
        Just("Connection failed (ENOENT): Executable not found in $PATH: \"stdio\"".to_owned()),
        Just("Connection failed (ECONNREFUSED): ECONNREFUSED: Unable to connect.".to_owned()),
        Just("Connection failed (CONNECTION_CLOSED): Connection closed".to_owned()),
        Just("Connection failed: MCP server \"x\" connection timed out after 4000ms".to_owned()),
        Just("Server rejected the configured Authorization header (HTTP 401). Check that the token is valid for this MCP endpoint.".to_owned()),
        Just("HTTP Connection failed after 5ms: Streamable HTTP error: (code: 401)".to_owned()),
        any_name().prop_map(|t| format!("Tool '{t}' completed successfully in 12ms")),
        any_name().prop_map(|t| format!("Tool '{t}' failed after 1s: MCP error -32602: {SECRET}")),
        any_name().prop_map(|t| format!("Skipping tool \"{t}\": its input schema has a top-level oneOf")),
        any_name().prop_map(|t| format!("Calling MCP tool: {t}")),
        any_text(),
    ]
    .prop_flat_map(|words| (Just(words), any::<bool>()))
    .prop_map(|(words, planted)| if planted { format!("{words} {SECRET}") } else { words })
}

/// One record of a server's MCP log, as Claude Code writes it: `debug`
/// or `error`, then its time, session and working directory.
fn any_log_record() -> impl Strategy<Value = Value> {
    (
        any_log_words(),
        any::<bool>(),
        prop_oneof![Just("2026-12-07T03:29:09.033Z".to_owned()), any_text()],
        any_session(),
        prop_oneof![Just("/tmp/h/runs/n1/work".to_owned()), any_text()],
    )
        .prop_map(|(words, error, at, session, cwd)| {
            let key = if error { "error" } else { "debug" };
            json!({key: words, "timestamp": at, "sessionId": session, "cwd": cwd})
        })
}

/// One line of every kind a headless run prints that the reader reads
/// (`system/init`, `hook_response`, `permission_denied`,
/// `notification`, `result`, `assistant`, `user`) and some it does not,
/// their strings arbitrary; shapes from the real runs in
/// `fixtures/refusals` and `fixtures/records-by-path`.
fn any_stream_line() -> impl Strategy<Value = Value> {
    let (n, t, w, c) = (any_name, any_text, any_words, any_command);
    let statuses = prop::sample::select(vec![
        "connected",
        "failed",
        "needs-auth",
        "pending",
        "disabled",
    ]);
    let body = prop_oneof![
        (prop::collection::vec((n(), statuses), 0..3), prop::collection::vec(n(), 0..4), any::<bool>(), prop::collection::vec((n(), any::<bool>()), 0..2), prop::collection::vec((n(), t(), 0..3u8), 0..2), t()).prop_map(|(servers, tools, search, plugins, errors, cwd)| {
            let mut listed: Vec<String> = servers.iter().flat_map(|(s, _)| tools.iter().map(move |t| format!("mcp__{s}__{t}"))).collect();
            if search { listed.push("ToolSearch".to_owned()); }
            listed.push("Bash".to_owned());
            let servers: Vec<Value> = servers.iter().map(|(s, st)| json!({"name": s, "status": st, "source": "dynamic"})).collect();
            let plugins: Vec<Value> = plugins.iter().map(|(p, builtin)| json!({"name": p, "path": if *builtin { "builtin" } else { "/tmp/p" }, "source": "p@market"})).collect();
            // A plugin that failed to load, named by its path, its
            // message (`Plugin NAME has …`) or its `plugin` field.
            let errors: Vec<Value> = errors.iter().map(|(p, path, how)| match how {
                0 => json!({"type": "manifest-parse-error", "path": format!("/tmp/{path}"), "message": SECRET}),
                1 => json!({"type": "manifest-parse-error", "message": format!("Plugin {p} has a corrupt manifest: {SECRET}")}),
                _ => json!({"type": "plugin-not-found", "plugin": p, "message": SECRET}),
            }).collect();
            json!({"type": "system", "subtype": "init", "cwd": cwd, "claude_code_version": "2.1.332", "tools": listed, "mcp_servers": servers, "plugins": plugins, "plugin_errors": errors, "model": "m", "skills": ["debug"], "apiKeySource": SECRET})
        }).boxed(),
        (n(), n(), prop::option::of(-3i64..300), prop::sample::select(vec!["success", "error", "cancelled", "other"])).prop_map(|(hook, event, code, outcome)| json!({"type": "system", "subtype": "hook_response", "hook_id": "39d428ae-868c", "hook_name": hook, "hook_event": event, "output": SECRET, "stdout": SECRET, "stderr": SECRET, "exit_code": code, "outcome": outcome})).boxed(),
        (n(), n(), t(), prop::option::of(prop::sample::select(vec!["hook", "rule", "mode", "asyncAgent"])), w()).prop_map(|(s, tool, id, kind, words)| json!({"type": "system", "subtype": "permission_denied", "tool_name": format!("mcp__{s}__{tool}"), "tool_use_id": id, "decision_reason_type": kind, "decision_reason": SECRET, "message": words})).boxed(),
        prop::sample::select(vec!["stop-hook-error", "other"]).prop_map(|key| json!({"type": "system", "subtype": "notification", "key": key, "text": SECRET})).boxed(),
        (any::<bool>(), prop_oneof![
            Just("API Error: Unable to connect to API (ConnectionRefused)".to_owned()),
            Just("API Error: Connection refused \u{2014} a firewall or proxy may be blocking it (ECONNREFUSED)".to_owned()),
            Just("Not logged in \u{b7} Please run /login".to_owned()),
            Just("Invalid API key \u{b7} Fix external API key".to_owned()),
            Just("Request timed out. Check your internet connection and proxy settings".to_owned()),
            t(),
        ], prop::option::of(Just("connection_failed")), prop::option::of(prop::sample::select(vec![401, 403, 500]))).prop_map(|(error, result, api, status)| json!({"type": "result", "subtype": if error { "error_during_execution" } else { "success" }, "is_error": error, "result": result, "api_error": api, "api_error_status": status, "permission_denials": [{"tool_name": "mcp__time__x", "tool_use_id": "toolu_1", "tool_input": {"q": SECRET}}]})).boxed(),
        (n(), n(), t()).prop_map(|(s, tool, id)| json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": format!("mcp__{s}__{tool}"), "input": {"q": SECRET}}]}, "parent_tool_use_id": null})).boxed(),
        (t(), w(), any::<bool>(), prop::option::of(prop::sample::select(vec!["user-rejected", "permission-rule", "automode-unavailable", "interrupted"]))).prop_map(|(id, words, error, kind)| {
            let mut line = json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": words, "is_error": error}]}, "parent_tool_use_id": null});
            if let Some(kind) = kind {
                // 2.1.332's SDK stamp (`tool_result_meta`) on the line.
                line["tool_result_meta"] = json!([{"id": id, "non_execution_kind": kind, "call_ended": true}]);
            }
            line
        }).boxed(),
        (t(), any_skill()).prop_map(|(id, skill)| json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "Skill", "input": {"skill": skill, "args": SECRET}}]}, "parent_tool_use_id": null})).boxed(),
        (c(), any::<bool>()).prop_map(|(command, meta)| json!({"type": "user", "isMeta": meta, "message": {"role": "user", "content": format!("Stop hook feedback:\n[{command}]: {SECRET}")}})).boxed(),
        // A retry (2.1.197's fractional delay, 2.1.332's `no_response`); an
        // `error` that is no class of the shipped list is never shown.
        (prop::option::of(prop::sample::select(vec![401, 429, 500, 529])), prop::sample::select(vec!["unknown", "overloaded", "authentication_failed", SECRET]), any::<bool>()).prop_map(|(status, error, slow)| {
            let mut line = json!({"type": "system", "subtype": "api_retry", "attempt": 1, "max_retries": 10, "retry_delay_ms": 527.9221046400702, "error_status": status, "error": error});
            if slow {
                line["no_response"] = json!({"waited_ms": 30000, "retry_wait_ms": 30000});
            }
            line
        }).boxed(),
        prop::sample::select(vec!["hook_started", "status", "compact_boundary", "api_retry"]).prop_map(|sub| json!({"type": "system", "subtype": sub, "text": SECRET})).boxed(),
        prop::sample::select(vec!["stream_event", "tool_progress", "auth_status", "no-such-kind"]).prop_map(|k| json!({"type": k, "event": {"text": SECRET}})).boxed(),
    ];
    (body, any_session()).prop_map(|(mut body, session)| {
        if let Some(map) = body.as_object_mut() {
            map.insert("session_id".to_owned(), json!(session));
            map.insert(
                "uuid".to_owned(),
                json!("5f3ca506-525b-46cf-8e25-6e8f933cab1b"),
            );
        }
        body
    })
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

    /// GIVEN a server's MCP log record, written any way WHEN read both
    /// ways THEN the same answer, with no planted secret in it.
    #[test]
    fn generated_mcp_log_records_read_the_same_both_ways(record in any_log_record(), style in style()) {
        let text = write(&record, style);
        let (f, s) = (fast_log(&text), slow_log(&text));
        prop_assert_eq!(&f, &s, "{}", text);
        no_secret(&f, &text);
    }

    /// GIVEN a headless run's stream-json line of any kind, written any
    /// way WHEN read both ways THEN the same answer, with no planted
    /// secret in it.
    #[test]
    fn generated_stream_json_lines_read_the_same_both_ways(record in any_stream_line(), style in style()) {
        let text = write(&record, style);
        let (f, s) = (fast_stream(&text), slow_stream(&text));
        prop_assert_eq!(&f, &s, "{}", text);
        no_secret(&f, &text);
    }

    /// GIVEN either with `null`, or a value of another type, in place of
    /// any field WHEN read both ways THEN the same answer; no planted
    /// secret.
    #[test]
    fn a_log_or_stream_line_with_a_wrong_type_reads_the_same_both_ways(
        log in any::<bool>(),
        record in prop_oneof![any_log_record(), any_stream_line()],
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
        let (f, s) = if log {
            (fast_log(&text), slow_log(&text))
        } else {
            (fast_stream(&text), slow_stream(&text))
        };
        prop_assert_eq!(&f, &s, "{}", text);
        no_secret(&f, &text);
    }
}

/// GIVEN records as Claude Code writes them (compact) with a lone
/// surrogate escape (JSON.stringify writes `"\ud83d"` for a string cut
/// between a pair's halves; serde_json refuses it) in a tool's text, in a
/// Stop hook's feedback, in a refused call's words, and in a field read
/// WHEN read both ways THEN each reads, the same both ways, with what it
/// says: never said unparsed, never its hook or refusal lost.
#[test]
fn a_lone_surrogate_as_json_stringify_writes_it_reads_the_same_both_ways() {
    let head = r#""sessionId":"88b3e12c-a78e-4cfc-a6bf-0a90e7116bb5","timestamp":"2026-12-02T09:16:47.136Z""#;
    for cut in ["\\ud83d", "\\ude00 then", "\\ud83d\\ud83d", "a\\\\ud83d"] {
        let records = [
            (
                format!(
                    r#"{{"type":"assistant","message":{{"content":[{{"type":"text","text":"cut {cut}"}},{{"type":"tool_use","id":"t1","name":"mcp__time__now","input":{{}}}}]}},{head}}}"#
                ),
                "now",
            ),
            (
                format!(
                    r#"{{"type":"user","isMeta":true,"message":{{"role":"user","content":"Stop hook feedback:\n[/bin/x]: cut {cut}"}},"uuid":"u1",{head}}}"#
                ),
                "Stop",
            ),
            (
                format!(
                    r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t1","content":"Permission to use mcp__time__now has been denied. {cut}","is_error":true}}]}},"toolUseResult":"x {cut}",{head}}}"#
                ),
                "t1",
            ),
            (
                format!(
                    r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t1","content":"x","is_error":true}}]}},"tool_result_meta":[{{"id":"t1","non_execution_kind":"user-rejected","note":"{cut}"}}],{head}}}"#
                ),
                "t1",
            ),
            (
                format!(
                    r#"{{"type":"system","subtype":"stop_hook_summary","hookInfos":[{{"command":"/bin/x {cut}"}}],"hookErrors":[],"preventedContinuation":false,"toolUseID":"r1","uuid":"u2",{head}}}"#
                ),
                "Stop",
            ),
        ];
        for (record, says) in records {
            let (f, s) = (fast(&record), slow(&record));
            assert_eq!(f, s, "{record}");
            let RecordAnswer::Read(reading) = &f else {
                panic!("{record} reads: {f:?}");
            };
            let shown = format!("{reading:?}");
            assert!(shown.contains(says), "{record}: {shown}");
            if record.contains("denied") || record.contains("user-rejected") {
                assert!(shown.contains("PermissionDenied"), "{record}: {shown}");
            }
        }
    }
}
