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
