//! Issue 68: no record lost. Records shaped exactly as Claude Code writes
//! them (`JSON.stringify`: compact, `\"` and `\\` escapes, non-ASCII raw),
//! each read for what it proves, none lost to an escape, a null or an
//! odd item.

use tether_core::records::RecordAnswer;
use tether_core::vocab::EvidenceKind;
use tether_passthrough_claude::records::{TRANSCRIPT, read_as};

fn answer(record: &str) -> RecordAnswer {
    read_as(TRANSCRIPT, &["projects", "-tmp-w", "s.jsonl"], record)
}

/// What Claude Code's transcript writer puts around a record of its own
/// (`{parentUuid, isSidechain, ...record, userType, entrypoint, cwd,
/// sessionId, version, gitBranch, slug}`, the order a real 2.1.197 run
/// wrote, `tests/fixtures/records/claude`).
const PARENT: &str = r#""parentUuid":"0d5cf1f1-baf7-446f-b2dd-5419f902aeaa","isSidechain":false"#;
const TAIL: &str = r#""userType":"external","entrypoint":"cli","cwd":"/tmp/w","sessionId":"88b3e12c-a78e-4cfc-a6bf-0a90e7116bb5","version":"2.1.223","gitBranch":"main","slug":"a-slug""#;

fn hooks(record: &str) -> Vec<(String, Option<String>)> {
    let RecordAnswer::Read(reading) = answer(record) else {
        panic!("lost: {record}");
    };
    // The host's rule: a reading with one name that is not a name is
    // refused whole (the record lost).
    assert!(
        reading.names_are_names(&[]),
        "refused by the host: {reading:?}"
    );
    reading
        .evidence
        .iter()
        .filter(|e| e.kind == EvidenceKind::HookFired)
        .map(|e| {
            let c = e.capability.as_deref().expect("a hook");
            (c.name.clone(), c.command.clone())
        })
        .collect()
}

/// GIVEN a compact `stop_hook_summary` (2.1.223's shape, keys in its order)
/// whose hook command holds `\"`, `\\`, `\n` or `\u00e9` WHEN it is read
/// THEN its Stop hooks ran, as they do without the escape, and the reading
/// passes the host's name rule (a bracket, a backslash or an `é` in what
/// a hook runs made the host refuse the whole record: the record lost).
#[test]
fn a_compact_stop_hook_summary_with_an_escaped_command_is_read() {
    for command in [
        r#"[ -n \"$X\" ] && notify-send done || true"#,
        r#"C:\\hooks\\gate.sh"#,
        r#"gate.sh\nsecond"#,
        r#"caf\u00e9.sh"#,
        r#"x/y.sh"#,
    ] {
        let record = format!(
            r#"{{{PARENT},"type":"system","subtype":"stop_hook_summary","hookCount":2,"hookInfos":[{{"command":"{command}","durationMs":12}},{{"command":"notify-send done","durationMs":3}}],"hookErrors":[],"preventedContinuation":false,"stopReason":"","hasOutput":false,"level":"suggestion","timestamp":"2026-12-02T09:16:47.136Z","uuid":"9a1e0f3c-1111-4c6d-8e7f-0a1b2c3d4e5f","toolUseID":"0dd55f2f-075e-478b-a88a-710ee9d6da9a",{TAIL}}}"#
        );
        let got = hooks(&record);
        assert_eq!(got.len(), 2, "{command}: {got:?}");
        assert_eq!(got[1].1.as_deref(), Some("notify-send"), "{command}");
        let first = got[0].1.as_deref();
        match command {
            c if c.starts_with('[') => assert_eq!(first, Some("notify-send")),
            c if c.starts_with("gate") => assert_eq!(first, Some("gate.sh")),
            c if c.starts_with("x/") => assert_eq!(first, Some("y.sh")),
            // A program named by a backslash path or a letter outside
            // ASCII: the hook ran, what it ran is not a name.
            _ => assert_eq!(first, None, "{command}"),
        }
    }
}

const AROUND: &str = r#""userType":"external","entrypoint":"cli","cwd":"/tmp/w","sessionId":"88b3e12c-a78e-4cfc-a6bf-0a90e7116bb5","version":"2.1.332","gitBranch":"main""#;

fn kinds(record: &str) -> Vec<(EvidenceKind, Option<String>, Option<String>)> {
    match answer(record) {
        RecordAnswer::Read(reading) => reading
            .evidence
            .into_iter()
            .map(|e| {
                let named = e
                    .capability
                    .as_deref()
                    .map(|c| c.name.clone())
                    .or(e.tool.clone());
                (e.kind, e.server, named)
            })
            .collect(),
        other => panic!("not read: {other:?}: {record}"),
    }
}

/// GIVEN an assistant record (compact, as written) calling the `Skill`
/// tool with a skill name that holds an escape, beside an MCP call WHEN
/// it is read THEN the skill was invoked (a borrowed `&str` parse failed
/// on any escape and the loss was hidden).
#[test]
fn a_skill_call_with_an_escape_in_the_record_is_read() {
    let record = format!(
        r#"{{{PARENT},"message":{{"model":"m","id":"msg_1","type":"message","role":"assistant","content":[{{"type":"text","text":"I'll say \"hi\" \u00e9"}},{{"type":"tool_use","id":"toolu_1","name":"Skill","input":{{"skill":"pdf","args":"a \"quoted\" \\ arg"}}}},{{"type":"tool_use","id":"toolu_2","name":"mcp__time__now","input":{{}}}}]}},"type":"assistant","uuid":"u1","timestamp":"2026-12-02T09:16:47.136Z",{AROUND}}}"#
    );
    let got = kinds(&record);
    assert!(
        got.contains(&(EvidenceKind::SkillInvoked, None, Some("pdf".into()))),
        "{got:?}"
    );
    assert!(got.contains(&(
        EvidenceKind::ToolCallObserved,
        Some("time".into()),
        Some("now".into())
    )));
}

/// GIVEN a message whose content holds one odd item (an id of another
/// type, an item that is no object) beside two MCP calls WHEN it is read
/// THEN both calls are read (the content was read all or nothing).
#[test]
fn one_odd_item_hides_no_mcp_call() {
    let record = format!(
        r#"{{{PARENT},"message":{{"role":"assistant","content":[{{"type":"tool_use","id":7,"name":"mcp__time__a","input":{{}}}},"odd",{{"type":"tool_use","id":"toolu_2","name":"mcp__time__b","input":{{}}}}]}},"type":"assistant","uuid":"u1","timestamp":"2026-12-02T09:16:47.136Z",{AROUND}}}"#
    );
    let calls: Vec<_> = kinds(&record)
        .into_iter()
        .filter(|e| e.0 == EvidenceKind::ToolCallObserved)
        .map(|e| e.2)
        .collect();
    assert_eq!(calls, [Some("a".to_owned()), Some("b".to_owned())]);
}

/// GIVEN records of known kinds with a field null or of another type
/// (`"tools": null`, `"tools": "x"`, `"hookInfos": 3`) WHEN read THEN a
/// null is a field not given, and a field of the wrong type that leaves
/// nothing to read says so (unparsed, wrong type, its kind named), never
/// "a kind this Tether does not read"; what else the record says is read.
#[test]
fn a_null_or_a_wrong_type_is_never_version_drift() {
    use tether_core::records::Unparsed;
    let at = "2026-12-02T09:16:47.136Z";
    let null_tools = format!(r#"{{"type":"tools-used","tools":null,"timestamp":"{at}",{AROUND}}}"#);
    assert!(
        matches!(
            answer(&null_tools),
            RecordAnswer::Read(_) | RecordAnswer::Dated { .. }
        ),
        "{:?}",
        answer(&null_tools)
    );
    let wrong_tools = format!(r#"{{"type":"tools-used","tools":"x","timestamp":"{at}",{AROUND}}}"#);
    match answer(&wrong_tools) {
        // The record names its session: read, with nothing from `tools`.
        RecordAnswer::Read(reading) => assert!(reading.evidence.is_empty()),
        other => panic!("{other:?}"),
    }
    let no_session = format!(r#"{{"type":"tools-used","tools":"x","timestamp":"{at}"}}"#);
    assert_eq!(
        answer(&no_session),
        RecordAnswer::Unparsed {
            why: Unparsed::WrongType,
            kind: Some("tools-used".into())
        }
    );
    // One field odd, another read: the MCP tool beside it is kept.
    let half = format!(
        r#"{{"type":"tools-used","tools":["mcp__time__now",5],"timestamp":"{at}",{AROUND}}}"#
    );
    assert!(
        kinds(&half).contains(&(
            EvidenceKind::ToolVisible,
            Some("time".into()),
            Some("now".into())
        )),
        "{:?}",
        kinds(&half)
    );
    let odd_hooks = format!(
        r#"{{{PARENT},"type":"system","subtype":"stop_hook_summary","hookCount":1,"hookInfos":3,"hookErrors":null,"timestamp":"{at}","uuid":"u1",{AROUND}}}"#
    );
    assert!(!matches!(answer(&odd_hooks), RecordAnswer::Unknown));
}

/// GIVEN the model's call of `mcp__happy__change_title` and Claude Code's
/// answer `<tool_use_error>Error: No such tool available: …` (2.1.71 in a
/// real session; the same words in 2.1.197's and 2.1.332's code), compact
/// as written WHEN both records are read THEN the answer is a refusal
/// for `tool_not_available` (no use, no failure of the server), never an
/// outcome of the call.
#[test]
fn no_such_tool_is_not_a_use() {
    let call = format!(
        r#"{{{PARENT},"message":{{"role":"assistant","content":[{{"type":"tool_use","id":"toolu_01","name":"mcp__happy__change_title","input":{{"title":"x"}}}}]}},"type":"assistant","uuid":"u1","timestamp":"2026-12-02T09:16:47.136Z",{AROUND}}}"#
    );
    let answer_record = format!(
        r#"{{{PARENT},"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","content":"<tool_use_error>Error: No such tool available: mcp__happy__change_title</tool_use_error>","is_error":true,"tool_use_id":"toolu_01"}}]}},"uuid":"u2","timestamp":"2026-12-02T09:16:48.136Z","toolUseResult":"Error: No such tool available: mcp__happy__change_title","sourceToolAssistantUUID":"u1",{AROUND}}}"#
    );
    assert!(
        kinds(&call)
            .iter()
            .any(|e| e.0 == EvidenceKind::ToolCallObserved)
    );
    let RecordAnswer::Read(reading) = answer(&answer_record) else {
        panic!("not read");
    };
    assert_eq!(reading.evidence.len(), 1, "{reading:?}");
    let said = &reading.evidence[0];
    assert_eq!(said.kind, EvidenceKind::ToolCallRefused);
    assert_eq!(
        said.reason_code,
        Some(tether_core::vocab::ReasonCode::ToolNotAvailable)
    );
    assert_eq!(said.connection_id.as_deref(), Some("toolu_01"));
}

/// GIVEN the `system/init` line of real headless runs (2.1.197 and
/// 2.1.332, `tests/fixtures/refusals/*-allowed.stream.jsonl`), which a
/// run whose model API never answered prints the same WHEN it is read
/// THEN its tools are the harness's list (listed, counted), never what
/// the model was sent: no evidence of it shows `model_visible`.
#[test]
fn an_init_line_is_the_harness_s_list_not_the_model_s() {
    use tether_passthrough_claude::records::STREAM_JSON;
    for release in ["2.1.197", "2.1.332"] {
        let path = format!(
            "{}/../../tests/fixtures/refusals/claude-{release}-allowed.stream.jsonl",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).expect("fixture");
        let init = text
            .lines()
            .find(|l| l.contains(r#""subtype":"init""#))
            .expect("an init line");
        let RecordAnswer::Read(reading) = read_as(STREAM_JSON, &["run.jsonl"], init) else {
            panic!("{release}: not read");
        };
        // No evidence says the model was sent a tool; the reports' counts
        // are the harness's list, which the reducer reads as
        // `current_thread`, never `model_visible` (core's
        // `agent_reports_move_stages_with_agent_provenance`).
        assert!(
            !reading
                .evidence
                .iter()
                .any(|e| e.kind == EvidenceKind::ToolVisible),
            "{release}: {reading:?}"
        );
        // What it does show: the harness listed the server's tools, by name
        // (unless its tool search holds them: then deferred, by name).
        let named: Vec<&str> = reading
            .evidence
            .iter()
            .filter(|e| {
                matches!(
                    e.kind,
                    EvidenceKind::ToolsListObserved | EvidenceKind::ToolDeferred
                )
            })
            .filter_map(|e| e.tool.as_deref())
            .collect();
        assert!(!named.is_empty(), "{release}: {reading:?}");
    }
}

/// GIVEN 2.1.14's blocking Stop hook (a meta user record, `Stop hook
/// feedback:\n[COMMAND]: OUTPUT`) written with a needless `\u` escape in
/// its words, or with a field it does not need of another type (`uuid`,
/// the message's `role`) WHEN read THEN the Stop hook fired and blocked,
/// as written plainly (it was lost to the parse's cheap rejection, and to
/// one odd field).
#[test]
fn a_stop_hook_s_feedback_is_read_whatever_its_escapes_and_odd_fields() {
    for (uuid, head) in [
        (
            r#""9a1e0f3c-1111-4c6d-8e7f-0a1b2c3d4e5f""#,
            "Stop hook feedback:",
        ),
        (
            r#""9a1e0f3c-1111-4c6d-8e7f-0a1b2c3d4e5f""#,
            r"Stop hook feedbac\u006b:",
        ),
        ("7", "Stop hook feedback:"),
        ("null", r"\u0053top hook feedback:"),
    ] {
        let record = format!(
            r#"{{{PARENT},"type":"user","message":{{"role":["user"],"content":"{head}\n[~/gate.sh]: blocked"}},"isMeta":true,"uuid":{uuid},"timestamp":"2026-12-02T09:16:47.136Z",{TAIL}}}"#
        );
        let got = hooks(&record);
        assert_eq!(
            got,
            vec![("Stop".to_owned(), Some("gate.sh".to_owned()))],
            "{record}"
        );
    }
}

/// GIVEN a headless run's line of a kind the reader reads (a hook's end,
/// the run's result) with a field it reads of another type, so that it
/// says nothing WHEN read THEN it is a known kind in a shape the reader
/// cannot read (wrong_type, its kind), never a line read as nothing; the
/// same line well typed reads.
#[test]
fn a_stream_json_line_of_a_read_kind_with_a_wrong_type_says_so() {
    use tether_core::records::Unparsed;
    use tether_passthrough_claude::records::STREAM_JSON;
    let session = r#""session_id":"09ca82f4-e8d9-4de2-bf5c-c2fbdd4cc325""#;
    for (line, kind) in [
        (
            format!(
                r#"{{"type":"system","subtype":"hook_response","hook_id":"39d4","hook_name":7,"hook_event":"SessionStart","exit_code":0,"outcome":"success",{session}}}"#
            ),
            "system/hook_response",
        ),
        (
            format!(
                r#"{{"type":"result","subtype":"error_during_execution","is_error":"true","result":"API Error: Unable to connect to API (ConnectionRefused)",{session}}}"#
            ),
            "result",
        ),
    ] {
        assert_eq!(
            read_as(STREAM_JSON, &["run.jsonl"], &line),
            RecordAnswer::Unparsed {
                why: Unparsed::WrongType,
                kind: Some(kind.to_owned())
            },
            "{line}"
        );
        let typed = line
            .replace(r#""hook_name":7"#, r#""hook_name":"SessionStart:startup""#)
            .replace(r#""is_error":"true""#, r#""is_error":true"#);
        let RecordAnswer::Read(reading) = read_as(STREAM_JSON, &["run.jsonl"], &typed) else {
            panic!("{typed}");
        };
        assert_eq!(reading.evidence.len(), 1, "{typed}: {reading:?}");
    }
}

/// GIVEN a transcript record of a kind the census names and the reader
/// does not read (an attachment telling the model servers' instructions)
/// WHEN read THEN it is counted as not read by that name, with its time,
/// never read as nothing; one that says something is still read.
#[test]
fn a_record_of_a_kind_not_read_is_counted_by_its_name() {
    let record = format!(
        r#"{{{PARENT},"attachment":{{"type":"mcp_instructions_delta","addedNames":["time"],"addedBlocks":["secret words"]}},"type":"attachment","uuid":"9a1e0f3c-1111-4c6d-8e7f-0a1b2c3d4e5f","timestamp":"2026-12-02T09:16:47.136Z",{TAIL}}}"#
    );
    match answer(&record) {
        RecordAnswer::NotRead { kind, at } => {
            assert_eq!(kind, "attachment/mcp_instructions_delta");
            assert!(at.is_some(), "its time counts");
        }
        other => panic!("{other:?}"),
    }
}
