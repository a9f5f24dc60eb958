//! Issue 68 §1 for Copilot CLI's record reader: its fast path (borrowed,
//! loose structs) against its plain path (`records::plain`, each record
//! parsed whole as a `serde_json::Value`).
//!
//! - GIVEN every Copilot session file in the repository (session events,
//!   saved `--output-format json` runs, process logs, refusals) WHEN each
//!   line is read both ways, in each role its file is read in, THEN both
//!   give the same answer.
//! - GIVEN records of every kind the reader reads, generated with
//!   arbitrary strings (every escape, `\u` and surrogate pairs, control
//!   characters, long strings across 64-byte boundaries, planted secrets),
//!   Copilot's own words, keys in any order, compact and pretty WHEN read
//!   both ways THEN the same answer, with no planted secret in it; with
//!   `null` or a value of the wrong type in place of any field (but the
//!   `type` that decides the kind) the same: a field of another type is
//!   that field unread, never the event lost.

use proptest::prelude::*;
use serde_json::{Value, json};
use tether_core::records::{RecordAnswer, RecordFile};
use tether_passthrough_copilot::records::{EVENTS, OUTPUT, PROCESS_LOG, plain, read};
use tether_tests::differential::{
    SECRET, any_style, any_text, every_line_reads_the_same, files_below, files_ending, no_secret,
    write, wrong_types,
};

/// The cut output's role (`output.rs`, `CUT`).
const CUT: &str = "output_json_cut";

const CONFIGURED: &[&str] = &["time", "count", "a-b"];

fn configured() -> Vec<String> {
    CONFIGURED.iter().map(|s| (*s).to_owned()).collect()
}

/// One record read in `role`, by the fast path or the plain one.
fn both(role: &'static str, record: &str) -> (RecordAnswer, RecordAnswer) {
    let segments: Vec<String> = ["session-state", "s1", "events.jsonl"]
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
    (read(&file, record), plain::read(&file, record))
}

/// GIVEN every Copilot session file in the repository WHEN each line is
/// read by both paths, in every role a file of its kind is read in, THEN
/// they agree, line by line.
#[test]
fn every_copilot_file_in_the_repository_reads_the_same_both_ways() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let copilot = |p: &str| p.contains("copilot") && !p.contains("/telemetry/");
    let jsonl = files_below(&root, &copilot);
    let logs = files_ending(&root, ".log", &copilot);
    assert!(jsonl.len() >= 10, "Copilot event files found: {jsonl:?}");
    assert!(!logs.is_empty(), "Copilot process logs found");
    let mut lines = 0;
    for role in [EVENTS, OUTPUT, CUT] {
        lines += every_line_reads_the_same(&jsonl, |l| both(role, l).0, |l| both(role, l).1);
    }
    lines += every_line_reads_the_same(
        &logs,
        |l| both(PROCESS_LOG, l).0,
        |l| both(PROCESS_LOG, l).1,
    );
    assert!(lines > 300, "{lines} lines");
}

/// A name, or anything.
fn any_name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec!["time", "count", "a-b", "stamp", "github-mcp-server", "x.y"]).prop_map(str::to_owned),
        1 => any_text(),
    ]
}

/// Copilot's own words (1.0.10 to 1.0.102), or anything.
fn any_words() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("Tool 'count-gone' does not exist. Available tools that can be called are bash, view.".to_owned()),
        Just(format!("Tool 'time-{SECRET}' does not exist. Available tools that can be called are view.")),
        Just("MCP server 'count': MCP tool not found on count: gone".to_owned()),
        Just("MCP server 'count': MCP transport closed before the tool responded".to_owned()),
        Just("MCP server 'count': Request timed out".to_owned()),
        Just("MCP server 'count': McpError: MCP error -32602: planted".to_owned()),
        Just("The user rejected this tool call.".to_owned()),
        Just("Permission denied because no interactive user response was available.".to_owned()),
        Just("Denied by preToolUse hook: x".to_owned()),
        Just("The pending permission request was cancelled before the tool could continue.".to_owned()),
        Just("Skill not found: demo:greet".to_owned()),
        Just("Error: Hook command failed with code 127\nStderr: x".to_owned()),
        Just("Failed to connect to MCP server \"count\": spawn /nope ENOENT. Execute '/mcp show count' to inspect or check the logs.".to_owned()),
        Just("MCP server 'time' is taking longer than expected to connect.".to_owned()),
        Just("MCP server 'time' requires authentication. Use /mcp auth time to connect.".to_owned()),
        Just("2 MCP servers were blocked by policy: 'time', 'count'".to_owned()),
        Just("Gave up waiting for MCP servers to finish starting: time, count. Startup continued without them; they may still connect.".to_owned()),
        Just("Third-party MCP servers are disabled by your organization's Copilot policy.".to_owned()),
        Just(format!("Could not connect to local model provider at http://{SECRET}@127.0.0.1:9/v1.\n  Check that the service is running and the port is correct.")),
        Just("Disabled tools: count-stamp, time-get_current_time, view".to_owned()),
        any_text(),
    ]
}

fn time() -> &'static str {
    "2026-12-03T19:29:31.176Z"
}

/// An event of `kind` with `data`, as Copilot writes one.
fn event(kind: &str, data: Value) -> Value {
    json!({"type": kind, "data": data, "id": "e1", "timestamp": time(), "parentId": null})
}

/// One event of every kind the reader reads (and kinds it counts unread),
/// its strings arbitrary.
fn any_event() -> impl Strategy<Value = Value> {
    let (n, t, w) = (any_name, any_text, any_words);
    prop_oneof![
        (t(), t(), t()).prop_map(|(id, v, cwd)| event("session.start", json!({"sessionId": id, "copilotVersion": v, "context": {"cwd": cwd}}))),
        (n(), n(), t(), prop::sample::select(vec!["stdio", "http", "sse", "memory"])).prop_map(|(s, tool, id, transport)| event("tool.execution_start", json!({"toolCallId": id, "toolName": format!("{s}-{tool}"), "mcpServerName": s, "mcpConfigServerName": s, "mcpToolName": tool, "mcpTransport": transport, "arguments": {"q": SECRET}}))),
        (t(), prop::option::of(any::<bool>()), w(), prop::sample::select(vec!["denied", "failure"]), prop::option::of((prop::sample::select(vec!["server_error", "protocol_invalid_params", "permission_denied"]), prop::sample::select(vec!["invoke", "permission"])))).prop_map(|(id, success, message, code, category)| {
            let mut data = json!({"toolCallId": id, "success": success, "error": {"message": message, "code": code}, "result": {"content": SECRET}});
            if let Some((c, stage)) = category {
                data["toolTelemetry"] = json!({"properties": {"failure_category": c, "failure_stage": stage}});
            }
            event("tool.execution_complete", data)
        }),
        (n(), t(), any::<bool>(), w()).prop_map(|(kind, run, ok, message)| event("hook.end", json!({"hookInvocationId": run, "hookType": kind, "success": ok, "error": {"message": message}}))),
        (prop::sample::select(vec!["skill.invoked", "skill.invoked_ref"]), n(), n()).prop_map(|(k, skill, plugin)| event(k, json!({"name": skill, "pluginName": plugin, "content": SECRET, "path": "/p"}))),
        (prop::sample::select(vec!["mcp", "policy", "other"]), w()).prop_map(|(k, m)| event("session.warning", json!({"warningType": k, "message": m}))),
        (prop::sample::select(vec!["configuration", "mcp", "other"]), w()).prop_map(|(k, m)| event("session.info", json!({"infoType": k, "message": m}))),
        (prop::sample::select(vec!["mcp", "query"]), w()).prop_map(|(k, m)| event("session.error", json!({"errorType": k, "message": m}))),
        (prop::collection::vec(n(), 0..4), t()).prop_map(|(tools, prompt)| {
            let names: Vec<String> = tools.iter().map(|t| format!("time-{t}")).collect();
            let notice = format!("<tools_changed_notice>\nNew tools available: {}\n</tools_changed_notice>\n<prompt>{prompt}</prompt>", names.join(", "));
            event("user.message", json!({"content": SECRET, "transformedContent": notice}))
        }),
        (t(), prop::sample::select(vec!["approved", "denied-by-rules", "denied-interactively-by-user", "denied-no-approval-rule-and-could-not-request-from-user", "denied-by-permission-request-hook", "denied-by-content-exclusion-policy", "cancelled"])).prop_map(|(id, kind)| event("permission.completed", json!({"requestId": "r1", "toolCallId": id, "result": {"kind": kind, "message": SECRET}}))),
        prop::sample::select(vec!["permission.requested", "permission.carried_forward", "tool_search.activated", "assistant.message", "abort", "mcp.oauth_required"]).prop_map(|k| event(k, json!({"x": SECRET}))),
        (n(), prop::sample::select(vec!["pending", "connected", "failed", "needs-auth"]), w()).prop_map(|(s, status, error)| event("session.mcp_server_status_changed", json!({"serverName": s, "status": status, "error": error}))),
        prop::collection::vec((n(), prop::sample::select(vec!["connected", "failed"])), 0..4).prop_map(|servers| {
            let servers: Vec<Value> = servers.iter().map(|(n, s)| json!({"name": n, "status": s})).collect();
            event("session.mcp_servers_loaded", json!({"servers": servers}))
        }),
        (n(), 0u32..300).prop_map(|(s, count)| event("session.mcp_server_tools_loaded", json!({"serverName": s, "toolCount": count}))),
        t().prop_map(|id| json!({"type": "result", "timestamp": time(), "sessionId": id, "exitCode": 0})),
        any::<bool>().prop_map(|e| json!({"type": "model.call_start", "data": {}, "id": "e9", "timestamp": time(), "ephemeral": e})),
        (n(), t(), any::<bool>()).prop_map(|(s, words, auth)| {
            let line = if auth {
                json!({"server": s}).to_string()
            } else {
                json!({"server_name": s, "raw_error": words}).to_string()
            };
            json!({"process_log": line, "auth": auth})
        }),
    ]
}

/// A generated record as the text its role reads: a process log's line
/// (`TIME [LEVEL] [module] message {json}`) or an event written any way.
fn text_of(record: &Value, style: tether_tests::differential::Style) -> (&'static str, String) {
    if let Some(line) = record.get("process_log").and_then(Value::as_str) {
        let message = if record["auth"] == true {
            "MCP OAuth: reporting the server as needing auth"
        } else {
            "MCP server connection failed"
        };
        let fields: Value = serde_json::from_str(line).unwrap_or(Value::Null);
        return (
            PROCESS_LOG,
            format!(
                "{} [ERROR] [mcp] {message} {}",
                time(),
                write(&fields, style)
            ),
        );
    }
    let role = [EVENTS, OUTPUT, CUT][(style.seed % 3) as usize];
    (role, write(record, style))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// GIVEN an event of a kind the reader reads, written any way WHEN read
    /// both ways THEN the same answer, with no planted secret in it.
    #[test]
    fn generated_records_read_the_same_both_ways(record in any_event(), style in any_style()) {
        let (role, text) = text_of(&record, style);
        let (f, s) = both(role, &text);
        prop_assert_eq!(&f, &s, "{}", text);
        no_secret(&f, &text, &configured());
    }

    /// GIVEN the same with `null`, or a value of another type, in place of
    /// any field but `type` (at any depth) WHEN read both ways THEN the
    /// same answer: never an event lost to the fast path alone; no planted
    /// secret.
    #[test]
    fn a_null_or_a_wrong_type_reads_the_same_both_ways(
        (record, _wrong) in wrong_types(any_event(), &["type", "process_log", "auth"]),
        style in any_style(),
    ) {
        let (role, text) = text_of(&record, style);
        let (f, s) = both(role, &text);
        prop_assert_eq!(&f, &s, "{}", text);
        no_secret(&f, &text, &configured());
    }
}

/// GIVEN a call of a tool Copilot did not have, its completion in Copilot
/// 1.0.102's words (`Tool 'NAME' does not exist. …`, runtime.node), and a
/// call that reached its server and failed in its words (the transport
/// closed, a deadline) WHEN read both ways THEN the first is a refusal
/// `tool_not_available` naming `count`'s `gone` (no outcome, no use), the
/// others failures with their reasons.
#[test]
fn no_such_tool_and_copilot_s_failure_words_read_as_what_they_name() {
    use tether_core::vocab::{EvidenceKind, ReasonCode};
    let complete = |message: &str| {
        event(
            "tool.execution_complete",
            json!({"toolCallId": "call_1", "success": false, "error": {"message": message, "code": "failure"}}),
        )
        .to_string()
    };
    let read = |text: String| {
        let (f, s) = both(EVENTS, &text);
        assert_eq!(f, s, "{text}");
        match f {
            RecordAnswer::Read(r) => r
                .evidence
                .iter()
                .map(|e| {
                    (
                        e.kind.clone(),
                        e.server.clone(),
                        e.tool.clone(),
                        e.ok,
                        e.reason_code.clone(),
                    )
                })
                .collect::<Vec<_>>(),
            other => panic!("{other:?}"),
        }
    };
    let refused = |server: &str, tool: &str| {
        vec![(
            EvidenceKind::ToolCallRefused,
            Some(server.to_owned()),
            Some(tool.to_owned()),
            None,
            Some(ReasonCode::ToolNotAvailable),
        )]
    };
    assert_eq!(
        read(complete(
            "Tool 'count-gone' does not exist. Available tools that can be called are bash, view."
        )),
        refused("count", "gone")
    );
    assert_eq!(
        read(complete(
            "MCP server 'count': MCP tool not found on count: gone"
        )),
        refused("count", "gone")
    );
    // A name no configured server fits: the call's refusal alone.
    assert_eq!(
        read(complete(
            "Tool 'bash2' does not exist. Available tools that can be called are bash."
        )),
        vec![(
            EvidenceKind::ToolCallRefused,
            None,
            None,
            None,
            Some(ReasonCode::ToolNotAvailable)
        )]
    );
    for (words, reason) in [
        (
            "MCP server 'count': MCP transport closed before the tool responded",
            ReasonCode::ConnectionClosed,
        ),
        ("MCP server 'count': Request timed out", ReasonCode::Timeout),
    ] {
        assert_eq!(
            read(complete(words)),
            vec![(
                EvidenceKind::ToolCallObserved,
                None,
                None,
                Some(false),
                Some(reason)
            )],
            "{words}"
        );
    }
}
