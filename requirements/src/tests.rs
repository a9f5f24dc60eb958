//! Requirements against rows: never met on silence, `model_visible` only
//! on a model-side signal, sentences that name the furthest stage and
//! what is missing; and how requirements are written.

use super::*;
use tether_core::model::ProvenanceCode;
use tether_core::records::MatrixRow;
use tether_core::vocab::{CapabilityKind, DisplayStatus, StageState};

use crate::sample::{row, server, summary};

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
        err.to_string()
            .contains("--require-tool time/get_current_time"),
        "{err}"
    );
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

/// A server row whose one stage `stage` is `yes`, shown by `provenance`.
fn shown_by(name: &str, stage: &str, provenance: ProvenanceCode) -> MatrixRow {
    let mut row = server(name, DisplayStatus::Active, &[(stage, StageState::Yes)]);
    if let Some(o) = row.stages.get_mut(stage) {
        o.provenance = Some(provenance);
    }
    row
}

#[test]
fn model_visible_is_met_only_on_a_model_side_signal() {
    // GIVEN model_visible shown by the harness's own init line, and by the tap
    let rows = vec![
        shown_by("listed", "model_visible", ProvenanceCode::AgentReport),
        shown_by("tapped", "model_visible", ProvenanceCode::ModelTap),
        shown_by("turn", "model_visible", ProvenanceCode::HarnessRecord),
        shown_by("config", "model_visible", ProvenanceCode::CurrentConfig),
    ];
    let eval = |r: &str| evaluate(&rows, &parse_server(r).expect("parses"));
    // THEN the harness's list alone is no model-side signal
    let listed = eval("listed:model_visible");
    assert!(!listed.met, "{listed:?}");
    assert_eq!(listed.state, StageState::Unknown);
    assert!(
        listed.sentence.contains("only the harness's own list"),
        "{}",
        listed.sentence
    );
    assert!(listed.sentence.contains("missing: a model-side signal"));
    assert!(!eval("config:model_visible").met);
    // AND the tap or a model turn is
    assert!(eval("tapped:model_visible").met);
    assert!(eval("turn:model_visible").met);
    // AND the harness's list still shows the tools reached the session
    assert!(eval("listed").met, "reached: the harness holds its tools");
}

#[test]
fn an_unmet_sentence_names_the_furthest_stage_and_what_is_missing() {
    // GIVEN a server that completed initialize and served tools/list, no more
    let rows = vec![server(
        "time",
        DisplayStatus::Connected,
        &[
            ("initialized", StageState::Yes),
            ("tools_listed", StageState::Yes),
        ],
    )];
    let o = evaluate(&rows, &parse_server("time").expect("parses"));
    // THEN it is not met, and the sentence says how far it got and what is missing
    assert!(!o.met);
    assert!(
        o.sentence
            .contains("the furthest stage shown: tools_listed (stopped-time)"),
        "{}",
        o.sentence
    );
    assert!(o.sentence.contains("missing: its tools in the session"));
    // AND never that the stage was reached and then that nothing shows it
    assert!(
        o.sentence.starts_with(
            "time: not met (required: its tools reached the session and it did not fail);"
        ),
        "{}",
        o.sentence
    );
    let quiet = evaluate(
        &[server("quiet", DisplayStatus::Delivered, &[])],
        &parse_server("quiet:callable").expect("parses"),
    );
    assert!(
        quiet.sentence.contains("no stage shown"),
        "{}",
        quiet.sentence
    );
}

#[test]
fn a_misspelt_stage_is_an_error_that_names_the_stage_meant() {
    // GIVEN stages with a slip of the keyboard
    for (given, meant) in [
        ("time:usedd", "used"),
        ("time:calable", "callable"),
        ("time:model_visibel", "model_visible"),
        ("time:reachd", "reached"),
    ] {
        let err = parse_server(given).expect_err(given);
        // THEN the error names the stage meant
        assert!(
            err.to_string().contains(&format!("did you mean {meant:?}")),
            "{given}: {err}"
        );
    }
    // AND a colon that is far from every stage stays part of the name
    for name in ["corp:search", "github:enterprise", "a:b"] {
        assert_eq!(parse_server(name).expect(name).server, name);
    }
    let err = parse_tool("time/now:usd").expect_err("a slip");
    assert!(err.to_string().contains("did you mean \"used\""), "{err}");
}

#[test]
fn a_history_is_checked_through_its_matrix_every_server_when_none_is_named() {
    use tether_core::history::AttachmentHistory;
    // GIVEN an empty history (no attempt)
    let history: AttachmentHistory = serde_json::from_value(serde_json::json!({
        "schema_version": 1, "task_id": "t", "session_id": "claude:s1", "current_attempt_id": null, "attempts": []
    }))
    .expect("a history");
    // THEN no requirement means none to meet, and a named one is unmet
    let none = check_history(&summary(), &history, &[]);
    assert!(none.met && none.requirements.is_empty());
    let one = check_history(&summary(), &history, &[Requirement::reached("time")]);
    assert!(!one.met);
    assert!(one.requirements[0].sentence.contains("never named"));
}

#[test]
fn a_stored_history_without_an_attempt_names_its_harness_from_its_id() {
    use tether_core::history::AttachmentHistory;
    // GIVEN a stored history of `claude:s1` with no attempt
    let history: AttachmentHistory = serde_json::from_value(serde_json::json!({
        "schema_version": 1, "task_id": "t", "session_id": "claude:s1", "current_attempt_id": null, "attempts": []
    }))
    .expect("a history");
    // THEN its summary takes the harness and its session id from the id
    let summary = summary_of(&history);
    assert_eq!(
        (
            summary.agent_kind.as_str(),
            summary.harness_session.as_str()
        ),
        ("claude", "s1")
    );
    // AND checked as stored, it is the session the id names
    let checked = check_stored(&history, &[Requirement::reached("time")]);
    assert_eq!(
        (checked.session_id.as_str(), checked.agent_kind.as_str()),
        ("claude:s1", "claude")
    );
    assert!(!checked.met);
}

#[test]
fn a_slip_of_a_server_or_tool_name_says_the_one_meant() {
    // GIVEN a session with `time` and its tool `time/get_current_time`
    let rows = vec![
        server(
            "time",
            DisplayStatus::Active,
            &[("tools_listed", StageState::Yes)],
        ),
        row(
            CapabilityKind::McpTool,
            "time/get_current_time",
            DisplayStatus::Active,
            &[("tools_listed", StageState::Yes)],
        ),
    ];
    // THEN a slip of either is unmet, and names the one meant
    let slip = evaluate(&rows, &Requirement::reached("tme"));
    assert!(!slip.met);
    assert!(
        slip.sentence
            .contains("never named this server (did you mean \"time\"?)"),
        "{}",
        slip.sentence
    );
    let tool = evaluate(&rows, &parse_tool("time/get_curent_time").expect("parses"));
    assert!(!tool.met);
    assert!(
        tool.sentence
            .contains("named no tool \"get_curent_time\" (did you mean \"get_current_time\"?)"),
        "{}",
        tool.sentence
    );
    // AND a name like none says no more than it did
    let other = evaluate(&rows, &Requirement::reached("github"));
    assert!(
        !other.sentence.contains("did you mean"),
        "{}",
        other.sentence
    );
}

#[test]
fn every_stage_a_requirement_asks_is_explained() {
    // GIVEN every stage a requirement can ask, and its other spellings
    for word in Need::ALL
        .iter()
        .map(|n| n.word())
        .chain(["offered", "called", "listed"])
    {
        let need = Need::parse(word).expect("a stage");
        // THEN `tether explain` knows the word Tether prints for it
        assert!(
            !tether_words::explain::lookup(need.word()).is_empty(),
            "tether explain {} knows nothing",
            need.word()
        );
    }
}

#[test]
fn without_requirements_a_server_only_today_s_files_name_is_not_required() {
    // GIVEN a session's server, and one only today's configuration names
    let rows = vec![
        shown_by("time", "initialized", ProvenanceCode::HarnessRecord),
        shown_by("userserver", "enabled", ProvenanceCode::CurrentConfig),
    ];
    // THEN only the session's own is required
    let reqs = every_server(&rows);
    assert_eq!(reqs, vec![Requirement::reached("time")]);
}
