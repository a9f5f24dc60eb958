//! Requirements against rows (never met on silence), their parsing, and
//! each format.

use super::*;
use tether_core::model::StageObservation;
use tether_core::vocab::ReasonCode;

fn row(
    kind: CapabilityKind,
    name: &str,
    status: DisplayStatus,
    stages: &[(&str, StageState)],
) -> MatrixRow {
    serde_json::from_value(serde_json::json!({
        "kind": kind.as_str(),
        "name": name,
        "status": status.as_str(),
        "stopped": format!("stopped-{name}"),
        "stages": stages.iter().map(|(k, s)| ((*k).to_owned(), serde_json::to_value(StageObservation {
            state: *s,
            ..StageObservation::default()
        }).expect("an observation"))).collect::<serde_json::Map<_, _>>(),
    }))
    .expect("a row")
}

fn server(name: &str, status: DisplayStatus, stages: &[(&str, StageState)]) -> MatrixRow {
    row(CapabilityKind::McpServer, name, status, stages)
}

fn summary() -> tether_core::records::SessionSummary {
    serde_json::from_value(serde_json::json!({
        "session_id": "claude:s1", "agent_kind": "claude", "harness_session": "s1",
        "started_at": 1, "updated_at": 2, "counts": {}, "files": 1
    }))
    .expect("a summary")
}

#[test]
fn a_requirement_is_never_met_on_silence() {
    // GIVEN a server with no stage shown, and one the session never named
    let rows = vec![server("quiet", DisplayStatus::Delivered, &[])];
    for req in [
        "quiet",
        "quiet:model_visible",
        "quiet:callable",
        "quiet:used",
        "absent",
    ] {
        let o = evaluate(&rows, &parse_server(req).expect("parses"));
        // THEN neither is met, and the state says unknown
        assert!(!o.met, "{req}: {o:?}");
        assert_eq!(o.state, StageState::Unknown, "{req}");
    }
    let o = evaluate(&rows, &parse_tool("quiet/tick").expect("parses"));
    assert!(!o.met);
    assert!(o.sentence.contains("named no tool"), "{}", o.sentence);
}

#[test]
fn reached_needs_the_tools_in_the_session_and_no_failure() {
    let rows = vec![
        server(
            "time",
            DisplayStatus::Active,
            &[
                ("tools_listed", StageState::Yes),
                ("model_visible", StageState::Yes),
            ],
        ),
        server(
            "offered",
            DisplayStatus::Active,
            &[("current_thread", StageState::Yes)],
        ),
        server(
            "listed",
            DisplayStatus::Active,
            &[("tools_listed", StageState::Yes)],
        ),
        server(
            "broken",
            DisplayStatus::Failed,
            &[("initialized", StageState::No)],
        ),
        // Shown to the model, then failed: not met.
        server(
            "flaky",
            DisplayStatus::Failed,
            &[("model_visible", StageState::Yes)],
        ),
    ];
    let met = |name: &str| evaluate(&rows, &parse_server(name).expect("parses")).met;
    assert!(met("time"));
    assert!(met("offered"));
    assert!(!met("listed"), "listing alone is not reaching the session");
    assert!(!met("broken"));
    assert!(!met("flaky"));
    assert!(met("listed:tools_listed"));
    let broken = evaluate(&rows, &parse_server("broken").expect("parses"));
    assert_eq!(broken.state, StageState::No);
    assert!(
        broken.sentence.starts_with("broken:"),
        "{}",
        broken.sentence
    );
}

#[test]
fn a_tool_is_callable_only_after_a_call_that_succeeded() {
    let mut ok = row(
        CapabilityKind::McpTool,
        "time/now",
        DisplayStatus::Active,
        &[("called", StageState::Yes)],
    );
    ok.calls = 2;
    ok.failed_calls = 1;
    let mut failing = row(
        CapabilityKind::McpTool,
        "time/fail",
        DisplayStatus::Active,
        &[("called", StageState::Yes)],
    );
    failing.calls = 1;
    failing.failed_calls = 1;
    let mut unsure = row(
        CapabilityKind::McpTool,
        "time/unsure",
        DisplayStatus::Active,
        &[("called", StageState::Yes)],
    );
    unsure.calls = 1;
    unsure.unknown_calls = 1;
    let rows = vec![
        server("time", DisplayStatus::Active, &[]),
        ok,
        failing,
        unsure,
    ];
    let eval = |t: &str| evaluate(&rows, &parse_tool(t).expect("parses"));
    assert!(eval("time/now:callable").met);
    assert!(!eval("time/fail:callable").met);
    assert_eq!(eval("time/fail:callable").state, StageState::No);
    assert!(
        !eval("time/unsure:callable").met,
        "an unknown outcome is no success"
    );
    assert!(eval("time/fail:used").met);
    assert!(eval("time/unsure:called").met);
}

#[test]
fn requirements_parse_with_their_stages() {
    let r = parse_server("time").expect("parses");
    assert_eq!((r.server.as_str(), r.need), ("time", Need::Reached));
    let r = parse_server("time:offered").expect("parses");
    assert_eq!(r.need, Need::CurrentThread);
    // A colon that names no stage is part of the name.
    let r = parse_server("corp:search").expect("parses");
    assert_eq!((r.server.as_str(), r.need), ("corp:search", Need::Reached));
    assert!(
        parse_server("time:model_visibel").is_err(),
        "a misspelt stage"
    );
    let t = parse_tool("time/get_current_time:model_visible").expect("parses");
    assert_eq!(t.tool.as_deref(), Some("get_current_time"));
    assert_eq!(t.spelled(), "time/get_current_time:model_visible");
    assert!(parse_tool("time").is_err());
    assert!(
        parse_tool("time/x:initialized").is_err(),
        "a server's stage"
    );
    assert!(parse_server(":callable").is_err());
    // A tool given as a server is told where it belongs.
    let err = parse_server("time/get_current_time").expect_err("a tool");
    assert!(
        err.contains("--require-tool time/get_current_time"),
        "{err}"
    );
}

fn checked() -> CheckDocument {
    let mut broken = server(
        "broken",
        DisplayStatus::Failed,
        &[("initialized", StageState::No)],
    );
    broken.reason_code = Some(ReasonCode::CommandNotFound);
    broken.stopped = "failed <&> \"quoted\" 'x'\u{1}".into();
    let rows = vec![
        server(
            "time",
            DisplayStatus::Active,
            &[("model_visible", StageState::Yes)],
        ),
        broken,
        server("extra", DisplayStatus::Failed, &[]),
    ];
    let reqs = vec![
        parse_server("time").expect("parses"),
        parse_server("broken").expect("parses"),
    ];
    document(vec![check_session(&summary(), &rows, &reqs)])
}

#[test]
fn junit_is_one_suite_per_session_one_case_per_requirement_escaped() {
    let doc = checked();
    assert!(!doc.met);
    let xml = junit(&doc);
    assert_eq!(xml.matches("<testsuite ").count(), 1);
    assert_eq!(xml.matches("<testcase ").count(), 2);
    assert!(
        xml.contains("<testcase classname=\"tether.claude\" name=\"require time\"/>"),
        "{xml}"
    );
    assert_eq!(xml.matches("<failure ").count(), 1);
    assert!(xml.contains("type=\"command_not_found\""), "{xml}");
    assert!(
        xml.contains("&lt;&amp;&gt; &quot;quoted&quot; &apos;x&apos;"),
        "{xml}"
    );
    assert!(!xml.contains('\u{1}'), "a control character XML forbids");
    assert!(!xml.contains("<&>"));
    // The unrequired failure is said, never a testcase.
    assert!(xml.contains("<system-err>extra:"), "{xml}");
}

#[test]
fn github_annotates_unmet_as_errors_and_unrequired_failures_as_warnings() {
    let text = github(&checked());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with("::error title=tether%3A broken not met::broken:"),
        "{text}"
    );
    assert!(lines[0].contains("[command_not_found]"));
    assert!(
        lines[1].starts_with("::warning title=tether%3A extra failed::"),
        "{text}"
    );
    assert_eq!(gh_data("a%b\nc\r"), "a%25b%0Ac%0D");
    assert_eq!(gh_property("a:b,c"), "a%3Ab%2Cc");
}

#[test]
fn markdown_and_human_and_json_say_the_same_outcomes() {
    let doc = checked();
    let md = markdown(&doc);
    assert!(md.contains("| ✅ | time |"), "{md}");
    assert!(md.contains("| ❌ | broken |"), "{md}");
    assert!(md.contains("| ⚠️ | extra |"), "{md}");
    assert!(md.contains("\\<&\\>"), "markup in a cell is escaped: {md}");
    let human = human(&doc);
    assert!(human.contains("met     time:"), "{human}");
    assert!(human.contains("NOT MET broken:"), "{human}");
    let json: serde_json::Value =
        serde_json::from_str(&render(&doc, Format::Json).expect("renders")).expect("json");
    assert_eq!(json["met"], false);
    assert_eq!(
        json["sessions"][0]["requirements"][1]["reason_code"],
        "command_not_found"
    );
    assert_eq!(json["sessions"][0]["requirements"][0]["state"], "yes");
    assert_eq!(exit_code(&doc), ExitCode::from(EXIT_UNMET));
}

#[test]
fn without_requirements_every_server_the_session_names_is_required() {
    let rows = vec![
        server(
            "time",
            DisplayStatus::Active,
            &[("model_visible", StageState::Yes)],
        ),
        row(
            CapabilityKind::McpTool,
            "time/now",
            DisplayStatus::Active,
            &[],
        ),
    ];
    let reqs = every_server(&rows);
    assert_eq!(reqs.len(), 1);
    assert!(check_session(&summary(), &rows, &reqs).met);
}
