//! The reducer's rows as people read them: reduced histories projected
//! by `tether-words` (the sentence a row's stop reads as, a tool's matrix
//! row, the copied diagnostics).

use tether_core::history::AttachmentHistory;
use tether_core::model::{Evidence, Timestamp};
use tether_core::owner::Owner;
use tether_core::reducer::{
    AttemptKey, AttemptStart, HistoryEvent, PlannedRow, begin_attempt, reduce,
};
use tether_core::vocab::{
    DecisionKind, DisplayStatus, EvidenceKind, ReasonCode, ServerSource, StageState, Transport,
    Trigger,
};

/// An attempt `attempt` of session `s` whose rows are `srv0`, `srv1`, ….
fn start(attempt: &str, servers: usize) -> AttemptStart {
    let row = |i: usize| PlannedRow {
        name: format!("srv{i}"),
        source: ServerSource::Profile,
        transport: Transport::Stdio,
        target: "x".into(),
        decision: DecisionKind::Deliver,
        reason_code: None,
        summary: None,
        note: None,
    };
    AttemptStart {
        attempt_id: attempt.into(),
        owner: Owner {
            task: "t".into(),
            session: "s".into(),
            execution: "e".into(),
        },
        agent_kind: "k".into(),
        agent_id: None,
        agent_profile_id: None,
        trigger: Trigger::SessionNew,
        at: Timestamp(1),
        servers: (0..servers).map(row).collect(),
    }
}

/// Begins `start` in `h`.
fn begin(h: &mut AttachmentHistory, start: &AttemptStart) -> Result<AttemptKey, String> {
    begin_attempt(h, start).map_err(|e| e.to_string())
}

fn observe(key: &AttemptKey, evidence: Evidence) -> HistoryEvent {
    HistoryEvent::Observe {
        key: key.clone(),
        evidence,
    }
}

#[test]
fn an_unset_variable_stays_the_cause_of_the_failure_it_leads_to() {
    let mut h = AttachmentHistory::new("t", "s");
    let mut planned = start("a", 3);
    for row in &mut planned.servers {
        row.reason_code = Some(ReasonCode::UnresolvedVariable);
        row.summary = Some("not set here: GH_TOKEN".into());
    }
    let key = begin(&mut h, &planned).expect("begin");
    let failed = |at: u64, status: &str| {
        Evidence::new(EvidenceKind::AgentReported, Timestamp(at))
            .server("srv0")
            .reported(status)
    };
    // Two failures, in either order: the earliest time, the unset cause.
    reduce(&mut h, &observe(&key, failed(9, "failed"))).expect("ok");
    reduce(&mut h, &observe(&key, failed(4, "needs-auth"))).expect("ok");
    reduce(
        &mut h,
        &observe(
            &key,
            Evidence::new(EvidenceKind::AgentReported, Timestamp(5))
                .server("srv1")
                .reported("connected")
                .tools(2),
        ),
    )
    .expect("ok");
    let a = h.current().expect("current");
    let r0 = a.server("srv0").expect("srv0");
    assert_eq!(r0.status, DisplayStatus::Failed);
    assert_eq!(r0.reason_code, Some(ReasonCode::UnresolvedVariable));
    assert_eq!(r0.failed_at, Some(Timestamp(4)));
    assert_eq!(
        tether_words::display::stopped(r0),
        "failed: not set here: GH_TOKEN"
    );
    // Working anyway: the row says what it did, not the variable.
    let r1 = a.server("srv1").expect("srv1");
    assert_eq!(r1.status, DisplayStatus::Active);
    assert!(!tether_words::display::stopped(r1).contains("GH_TOKEN"));
    // Nothing shown either way: the variable is the lead.
    let r2 = a.server("srv2").expect("srv2");
    assert_eq!(r2.status, DisplayStatus::Unknown);
    assert_eq!(
        tether_words::display::stopped(r2),
        "configured, but not set here: GH_TOKEN; nothing shows the session used it"
    );
}

/// The `convert` tool of srv0 in the current attempt, and its matrix row.
fn convert_tool(
    h: &AttachmentHistory,
) -> (tether_core::model::ToolRow, tether_core::records::MatrixRow) {
    let attempt = h.current().expect("attempt");
    let row = attempt.server("srv0").expect("row");
    let tool = row
        .tools
        .iter()
        .find(|t| t.name == "convert")
        .expect("tool")
        .clone();
    let shown = tether_words::display::matrix(attempt)
        .into_iter()
        .find(|r| r.name == "srv0/convert")
        .expect("tool row");
    (tool, shown)
}

#[test]
fn a_deferred_tool_is_discoverable_not_visible_until_loaded() {
    let mut h = AttachmentHistory::new("t", "s");
    let key = begin(&mut h, &start("a", 1)).expect("begin");
    let tool = |kind, at| {
        let mut ev = Evidence::new(kind, Timestamp(at)).server("srv0");
        ev.tool = Some("convert".into());
        ev.provenance = tether_core::vocab::Provenance::HarnessRecord;
        observe(&key, ev)
    };
    reduce(&mut h, &tool(EvidenceKind::ToolDeferred, 2)).expect("deferred");
    let (t, shown) = convert_tool(&h);
    assert!(t.is_deferred(), "{t:?}");
    assert_eq!(t.listed.state, StageState::Yes);
    assert_ne!(t.model_visible.state, StageState::Yes);
    let row = h.current().and_then(|a| a.server("srv0")).expect("row");
    assert_ne!(row.stages.model_visible.state, StageState::Yes);
    assert_eq!(shown.reason_code, Some(ReasonCode::DeferredUntilSearched));
    assert_eq!(shown.stopped, tether_words::display::DEFERRED_SENTENCE);
    assert_eq!(shown.status, tether_core::vocab::DisplayStatus::Delivered);
    // Loaded by a search: visible from then on, no longer deferred.
    reduce(&mut h, &tool(EvidenceKind::ToolVisible, 3)).expect("visible");
    let (t, shown) = convert_tool(&h);
    assert!(!t.is_deferred());
    assert_eq!(t.model_visible.state, StageState::Yes);
    assert_eq!(shown.reason_code, None);
    assert_eq!(shown.status, tether_core::vocab::DisplayStatus::Active);
}

#[test]
fn a_withheld_tool_says_why_and_never_weakens_what_was_seen() {
    let mut h = AttachmentHistory::new("t", "s");
    let key = begin(&mut h, &start("a", 1)).expect("begin");
    let mut ev = Evidence::new(EvidenceKind::ToolWithheld, Timestamp(3))
        .server("srv0")
        .provenance(tether_core::vocab::Provenance::DocumentedRule);
    ev.tool = Some("convert".into());
    ev.reason_code = Some(ReasonCode::NameCollision);
    reduce(&mut h, &observe(&key, ev)).expect("withheld");
    let (t, shown) = convert_tool(&h);
    assert_eq!(t.current_thread.state, StageState::No);
    assert_eq!(t.schema_accepted.state, StageState::No);
    assert_eq!(
        t.current_thread.provenance,
        Some(tether_core::model::ProvenanceCode::DocumentedRule)
    );
    assert_eq!(shown.reason_code, Some(ReasonCode::NameCollision));
    assert!(shown.stopped.contains("predicted"), "{}", shown.stopped);
    // A prediction about one tool says nothing of its server's others.
    let row = h.current().and_then(|a| a.server("srv0")).expect("row");
    assert_eq!(row.stages.current_thread.state, StageState::Unknown);
    // The copied diagnostics say it, and that it is a prediction.
    assert!(
        tether_words::display::copy_diagnostics(&h)
            .contains("tool convert: name_collision (predicted by a documented rule)"),
        "{}",
        tether_words::display::copy_diagnostics(&h)
    );

    // The model seeing it after all beats the prediction.
    let mut seen = Evidence::new(EvidenceKind::ToolVisible, Timestamp(4)).server("srv0");
    seen.tool = Some("convert".into());
    seen.provenance = tether_core::vocab::Provenance::HarnessRecord;
    reduce(&mut h, &observe(&key, seen)).expect("visible");
    let (t, shown) = convert_tool(&h);
    assert_eq!(t.current_thread.state, StageState::Yes);
    assert_eq!(t.schema_accepted.state, StageState::Yes);
    assert_eq!(shown.reason_code, None);
    assert_eq!(
        tether_words::display::tool_path(&shown.stages),
        "listed ✓ → accepted ✓ → offered ✓ in context → called ?"
    );
}

#[test]
fn an_observed_deferral_beats_a_predicted_withholding() {
    let mut h = AttachmentHistory::new("t", "s");
    let key = begin(&mut h, &start("a", 1)).expect("begin");
    let mut ev = Evidence::new(EvidenceKind::ToolWithheld, Timestamp(2))
        .server("srv0")
        .provenance(tether_core::vocab::Provenance::DocumentedRule);
    ev.tool = Some("convert".into());
    ev.reason_code = Some(ReasonCode::NameCollision);
    reduce(&mut h, &observe(&key, ev)).expect("withheld");
    let mut seen = Evidence::new(EvidenceKind::ToolDeferred, Timestamp(3)).server("srv0");
    seen.tool = Some("convert".into());
    seen.provenance = tether_core::vocab::Provenance::HarnessRecord;
    reduce(&mut h, &observe(&key, seen)).expect("deferred");
    let (t, shown) = convert_tool(&h);
    assert!(!t.is_withheld(), "{t:?}");
    assert_eq!(t.current_thread.state, StageState::Yes);
    assert_eq!(shown.reason_code, Some(ReasonCode::DeferredUntilSearched));
    // Held behind the search, never sent: delivered, not active.
    assert_eq!(shown.status, tether_core::vocab::DisplayStatus::Delivered);
}

/// A refused call reads the same wherever a person looks: the row's
/// sentence, its tool's matrix line, and the copied diagnostics all name
/// the refusal, and none says the tool was used.
#[test]
fn a_refusal_reads_the_same_in_the_row_the_matrix_and_the_diagnostics() {
    let mut h = AttachmentHistory::new("t", "s");
    let key = begin(&mut h, &start("a", 1)).expect("begin");
    let mut refused = Evidence::new(EvidenceKind::ToolCallRefused, Timestamp(3)).server("srv0");
    refused.tool = Some("convert".into());
    refused.reason_code = Some(ReasonCode::ApprovalRequired);
    refused.provenance = tether_core::vocab::Provenance::HarnessRecord;
    reduce(&mut h, &observe(&key, refused)).expect("refused");
    let attempt = h.current().expect("attempt");
    let row = attempt.server("srv0").expect("row");
    let said = tether_words::display::stopped(row);
    assert!(
        said.contains("refused") && said.contains("approval"),
        "{said}"
    );
    assert!(!said.contains("used:"), "{said}");
    let (tool, shown) = convert_tool(&h);
    assert_eq!(tool.refused_calls, 1);
    assert_eq!(tool.calls, 0);
    assert_eq!(shown.reason_code, Some(ReasonCode::ApprovalRequired));
    assert_eq!(shown.refused_calls, 1);
    assert!(shown.stopped.contains("refused"), "{}", shown.stopped);
    let copied = tether_words::display::copy_diagnostics(&h);
    assert!(
        copied.contains("refused by the harness: 1 call of convert"),
        "{copied}"
    );
    assert!(!copied.contains("last tool call"), "{copied}");
}
