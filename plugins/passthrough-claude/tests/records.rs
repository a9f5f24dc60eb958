//! Claude Code 2.1.332's transcript records, in the shapes that release
//! writes (taken from a real session of it, payloads cut): each is read
//! for what it proves, and none is "of a kind this Tether does not read".

use tether_core::records::{RecordAnswer, RecordFile};
use tether_core::vocab::EvidenceKind;
use tether_passthrough_claude::records::{TRANSCRIPT, read};

fn answer(record: &str) -> RecordAnswer {
    let segments = vec![
        "projects".to_owned(),
        "-tmp-w".to_owned(),
        "s.jsonl".to_owned(),
    ];
    let configured = vec!["time".to_owned(), "github".to_owned()];
    let file = RecordFile {
        role: TRANSCRIPT,
        segments: &segments,
        session: None,
        configured: &configured,
    };
    read(&file, record)
}

fn evidence(record: &str) -> Vec<(EvidenceKind, String, Option<String>, Option<String>)> {
    match answer(record) {
        RecordAnswer::Read(reading) => reading
            .evidence
            .into_iter()
            .map(|e| {
                let code = e.reason_code.map(|c| c.to_string());
                (
                    e.kind,
                    e.server.unwrap_or_default(),
                    e.tool,
                    code.or(e.reported_status),
                )
            })
            .collect(),
        other => panic!("not read: {other:?}"),
    }
}

const HEAD: &str = r#""sessionId":"88b3e12c-a78e-4cfc-a6bf-0a90e7116bb5","timestamp":"2026-12-02T09:16:47.136Z","version":"2.1.332","cwd":"/tmp/w""#;

#[test]
fn the_new_record_kinds_are_known_and_say_nothing_of_their_payload() {
    for kind in [
        "api-request",
        "api-request-shape",
        "api-request-blob",
        "atis-latch",
        "cost-state",
    ] {
        let record = format!(
            r#"{{"type":"{kind}",{HEAD},"shape":{{"system":[{{"type":"text","text":"a prompt"}}]}},"params":{{"model":"m"}}}}"#
        );
        match answer(&record) {
            RecordAnswer::Read(reading) => assert!(reading.evidence.is_empty(), "{kind}"),
            other => panic!("{kind}: {other:?}"),
        }
    }
}

#[test]
fn deferred_tools_delta_names_failed_and_login_wanting_servers() {
    let record = format!(
        r#"{{"type":"attachment",{HEAD},"attachment":{{"type":"deferred_tools_delta","addedNames":["WebFetch","mcp__time__get_current_time","mcp__github__authenticate","mcp__github__complete_authentication"],"needsAuthMcpServers":[],"pendingMcpServers":[],"failedMcpServers":[{{"name":"broken","errorCode":"ENOENT","error":"ENOENT: no such file or directory, posix_spawn '/home/me/bin/x'"}}]}}}}"#
    );
    let got = evidence(&record);
    // Behind the tool search: discoverable, never said to reach the model.
    assert!(got.contains(&(
        EvidenceKind::ToolDeferred,
        "time".into(),
        Some("get_current_time".into()),
        None
    )));
    assert!(
        !got.iter().any(|e| e.0 == EvidenceKind::ToolVisible),
        "{got:?}"
    );
    // Offered only the login pseudo-tools: it needs auth, and has no tools.
    assert!(got.contains(&(
        EvidenceKind::AgentReported,
        "github".into(),
        None,
        Some("needs-auth".into())
    )));
    assert!(
        !got.iter().any(|e| e.1 == "github" && e.2.is_some()),
        "{got:?}"
    );
    let broken = got.iter().find(|e| e.1 == "broken").expect("broken");
    assert_eq!(broken.3.as_deref(), Some("command_not_found"), "{got:?}");
}

#[test]
fn deferred_tools_record_and_tools_used_name_tools_given_to_the_model() {
    let record = format!(
        r#"{{"type":"attachment",{HEAD},"attachment":{{"type":"deferred_tools_record","entries":[{{"name":"mcp__time__get_current_time","description":"Get the time","input_schema":{{"type":"object"}},"defer_loading":true}}]}}}}"#
    );
    assert_eq!(
        evidence(&record),
        [(
            EvidenceKind::ToolVisible,
            "time".into(),
            Some("get_current_time".into()),
            None
        )]
    );
    let record = format!(
        r#"{{"type":"tools-used",{HEAD},"tools":["ToolSearch","mcp__time__get_current_time"]}}"#
    );
    assert_eq!(
        evidence(&record),
        [(
            EvidenceKind::ToolVisible,
            "time".into(),
            Some("get_current_time".into()),
            None
        )]
    );
}

#[test]
fn api_request_shape_names_the_tools_one_request_held_and_nothing_else() {
    let record = format!(
        r#"{{"type":"api-request-shape",{HEAD},"shapeHash":"ab","shape":{{"system":[{{"type":"text","text":"SECRET prompt"}}],"tools":[{{"name":"Agent","description":"SECRET","input_schema":{{"type":"object"}}}},{{"name":"mcp__time__convert_time","description":"SECRET description","input_schema":{{"properties":{{"SECRET":{{}}}}}}}},{{"name":"mcp__time__get_current_time","defer_loading":true}}]}}}}"#
    );
    let got = evidence(&record);
    assert_eq!(
        got,
        [
            (
                EvidenceKind::ToolVisible,
                "time".into(),
                Some("convert_time".into()),
                None
            ),
            (
                EvidenceKind::ToolVisible,
                "time".into(),
                Some("get_current_time".into()),
                None
            ),
        ]
    );
    assert!(!format!("{got:?}").contains("SECRET"));
}

/// GIVEN a `deferred_tools_delta` that names claude.ai connectors by their
/// display names (an Agent SDK run, 2.1.259) WHEN it is read THEN each is
/// a row under the name its tools carry (Claude Code's own rule:
/// `claude.ai Slack` → `claude_ai_Slack`), needing a login, with its
/// display name kept for people as a note.
#[test]
fn connectors_named_by_display_name_need_a_login_under_their_tools_name() {
    use tether_passthrough_claude::records::tool_name_of_server;
    assert_eq!(tool_name_of_server("claude.ai Slack"), "claude_ai_Slack");
    assert_eq!(
        tool_name_of_server("claude.ai  Google Drive"),
        "claude_ai_Google_Drive"
    );
    assert_eq!(tool_name_of_server("my.server"), "my_server");
    assert_eq!(tool_name_of_server("time"), "time");
    let record = format!(
        r#"{{"type":"attachment",{HEAD},"attachment":{{"type":"deferred_tools_delta","addedNames":["mcp__claude_ai_Slack__authenticate"],"removedNames":[],"needsAuthMcpServers":["claude.ai Slack","claude.ai Notion"],"pendingMcpServers":["claude.ai Gmail"]}}}}"#
    );
    let RecordAnswer::Read(reading) = answer(&record) else {
        panic!("not read");
    };
    let auth: Vec<&str> = reading
        .evidence
        .iter()
        .filter(|e| e.reported_status.as_deref() == Some("needs-auth"))
        .filter_map(|e| e.server.as_deref())
        .collect();
    assert!(
        auth.contains(&"claude_ai_Slack") && auth.contains(&"claude_ai_Notion"),
        "{auth:?}"
    );
    let notes: Vec<(&str, &str)> = reading
        .evidence
        .iter()
        .filter_map(|e| Some((e.server.as_deref()?, e.summary.as_deref()?)))
        .collect();
    assert!(
        notes.contains(&(
            "claude_ai_Gmail",
            "shown in Claude Code as \u{201c}claude.ai Gmail\u{201d}"
        )),
        "{notes:?}"
    );
    let names: Vec<&str> = reading.servers.iter().map(|s| s.name.as_str()).collect();
    for server in ["claude_ai_Slack", "claude_ai_Notion", "claude_ai_Gmail"] {
        assert!(names.contains(&server), "{names:?}");
    }
}

/// GIVEN a `stop_hook_summary` (the shape 2.1.332's code writes: `hookCount`,
/// `hookInfos[{command, durationMs}]`, `hookErrors`,
/// `preventedContinuation`) WHEN it is read THEN each Stop hook ran once
/// with its command's basename and how it ended; a planted secret in a
/// command's path or arguments is never kept.
#[test]
fn stop_hook_summaries_are_the_stop_hooks_that_ran() {
    let ran = |record: &str| -> Vec<(String, Option<String>, Option<String>)> {
        let RecordAnswer::Read(reading) = answer(record) else {
            panic!("not read: {record}");
        };
        assert!(!format!("{reading:?}").contains("planted"), "{reading:?}");
        reading
            .evidence
            .iter()
            .filter(|e| e.kind == EvidenceKind::HookFired)
            .map(|e| {
                let c = e.capability.as_deref().expect("a hook");
                (
                    c.name.clone(),
                    c.command.clone(),
                    c.outcome.as_ref().map(|o| o.to_string()),
                )
            })
            .collect()
    };
    let two = format!(
        r#"{{"type":"system","subtype":"stop_hook_summary",{HEAD},"uuid":"u1","hookCount":2,"hookInfos":[{{"command":"/home/me/planted-secret/check.sh --token planted-abc","durationMs":12}},{{"command":"notify-send done","durationMs":3}}],"hookErrors":[],"preventedContinuation":false,"stopReason":"","hasOutput":false,"level":"suggestion"}}"#
    );
    assert_eq!(
        ran(&two),
        [
            (
                "Stop".to_owned(),
                Some("check.sh".to_owned()),
                Some("succeeded".to_owned())
            ),
            (
                "Stop".to_owned(),
                Some("notify-send".to_owned()),
                Some("succeeded".to_owned())
            ),
        ]
    );
    let blocked = format!(
        r#"{{"type":"system","subtype":"stop_hook_summary",{HEAD},"uuid":"u2","hookCount":1,"hookInfos":[{{"command":"gate.sh"}}],"hookErrors":["planted blocking words"],"preventedContinuation":false,"level":"suggestion"}}"#
    );
    assert_eq!(
        ran(&blocked),
        [(
            "Stop".to_owned(),
            Some("gate.sh".to_owned()),
            Some("failed".to_owned())
        )]
    );
    let stopped_turn = blocked.replace(
        r#""preventedContinuation":false"#,
        r#""preventedContinuation":true"#,
    );
    assert_eq!(ran(&stopped_turn)[0].2.as_deref(), Some("blocked"));
    let unclear = format!(
        r#"{{"type":"system","subtype":"stop_hook_summary",{HEAD},"uuid":"u3","hookCount":2,"hookInfos":[{{"command":"a.sh"}},{{"command":"b.sh"}}],"hookErrors":["planted words"],"preventedContinuation":false}}"#
    );
    assert!(
        ran(&unclear)
            .iter()
            .all(|(_, _, o)| o.as_deref() == Some("unknown"))
    );
}

/// GIVEN an `mcp_dropped_tools_delta` (2.1.3xx) WHEN it is read THEN each
/// tool it names was withheld by the harness, for its schema where the
/// words say so; an entry naming no tool gives nothing.
#[test]
fn dropped_tools_are_withheld_by_the_harness() {
    let record = format!(
        r#"{{"type":"attachment",{HEAD},"attachment":{{"type":"mcp_dropped_tools_delta","addedEntries":["\"bad_tool\" (MCP server \"time\"): \"invalid input schema: planted\"","\"odd\" (MCP server \"time\"): \"planted other reason\"","MCP server \"big\": 40 tools excluded (invalid input schema)"]}}}}"#
    );
    assert_eq!(
        evidence(&record),
        [
            (
                EvidenceKind::ToolWithheld,
                "time".to_owned(),
                Some("bad_tool".to_owned()),
                Some("schema_unsupported".to_owned())
            ),
            (
                EvidenceKind::ToolWithheld,
                "time".to_owned(),
                Some("odd".to_owned()),
                Some("dropped_by_harness".to_owned())
            ),
        ]
    );
}

/// GIVEN a Stop hook that printed, written twice by 2.1.332 (its own
/// `hook_success` attachment and its line in the turn's
/// `stop_hook_summary`, both under the run's `toolUseID`, as a real run
/// here wrote them) WHEN both are read THEN they name one run (the same
/// id), so the host counts it once.
#[test]
fn a_stop_hook_written_twice_is_one_run() {
    let ids = |record: &str| -> Vec<String> {
        let RecordAnswer::Read(reading) = answer(record) else {
            panic!("not read: {record}");
        };
        reading
            .evidence
            .iter()
            .filter(|e| e.kind == EvidenceKind::HookFired)
            .filter_map(|e| e.connection_id.clone())
            .collect()
    };
    let attachment = format!(
        r#"{{"type":"attachment",{HEAD},"uuid":"a1","attachment":{{"type":"hook_success","hookName":"Stop","toolUseID":"0dd55f2f-075e-478b-a88a-710ee9d6da9a","hookEvent":"Stop","content":"planted out","stdout":"planted out","stderr":"","exitCode":0,"command":"/tmp/h/ok.sh Stop-ok planted-arg","durationMs":15}}}}"#
    );
    let summary = format!(
        r#"{{"type":"system","subtype":"stop_hook_summary",{HEAD},"uuid":"s1","hookCount":2,"hookInfos":[{{"command":"/tmp/h/ok.sh Stop-ok planted-arg","durationMs":15}},{{"command":"/tmp/h/quiet.sh","durationMs":2}}],"hookErrors":[],"failedHookErrorIndexes":[],"preventedContinuation":false,"toolUseID":"0dd55f2f-075e-478b-a88a-710ee9d6da9a"}}"#
    );
    let once = ids(&attachment);
    let both = ids(&summary);
    assert_eq!(once.len(), 1);
    assert_eq!(both.len(), 2);
    assert_eq!(both[0], once[0], "the same run");
    assert_ne!(both[1], once[0], "another hook of the run");
    assert!(once.iter().chain(&both).all(|id| !id.contains("planted")));
}
