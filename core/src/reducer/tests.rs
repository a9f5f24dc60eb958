use super::*;

fn start(attempt: &str, servers: usize) -> AttemptStart {
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
        servers: (0..servers)
            .map(|i| PlannedRow {
                name: format!("srv{i}"),
                source: ServerSource::Profile,
                transport: Transport::Stdio,
                target: "x".into(),
                decision: DecisionKind::Deliver,
                reason_code: None,
                summary: None,
                note: None,
            })
            .collect(),
    }
}

/// Test-only: a key made up here, to prove the reducer checks it.
fn observe(session: &str, attempt: &str, ev: Evidence) -> HistoryEvent {
    HistoryEvent::Observe {
        key: AttemptKey {
            session_id: session.into(),
            attempt_id: attempt.into(),
        },
        evidence: ev,
    }
}

#[test]
fn rejections_are_typed_and_leave_the_history_unchanged() {
    let mut h = AttachmentHistory::new("t", "s");
    assert_eq!(
        begin(&mut h, &start("a", MAX_SERVERS + 1)),
        Err(Rejection::BoundHit {
            what: "servers in one attempt",
            limit: MAX_SERVERS
        })
    );
    begin(&mut h, &start("a", 1)).expect("begin");
    let before = h.clone();
    let ev = Evidence::new(EvidenceKind::Delivered, Timestamp(2)).server("srv0");
    assert!(matches!(
        reduce(&mut h, &observe("other", "a", ev.clone())),
        Err(Rejection::UnknownSession { .. })
    ));
    assert!(matches!(
        reduce(&mut h, &observe("s", "nope", ev.clone())),
        Err(Rejection::UnknownAttempt { .. })
    ));
    assert!(matches!(
        reduce(
            &mut h,
            &observe(
                "s",
                "a",
                Evidence::new(EvidenceKind::Delivered, Timestamp(2)).server("ghost")
            )
        ),
        Ok(Reduced::Unattributed)
    ));
    // Counted, and nothing else changed.
    let mut counted = before.clone();
    counted.attempts[0].unattributed_evidence = 1;
    counted.attempts[0].updated_at = Timestamp(2).max(counted.attempts[0].updated_at);
    assert_eq!(h, counted);
    h = before.clone();
    assert_eq!(begin(&mut h, &start("a", 1)), Ok(Reduced::Duplicate));
    assert_eq!(
        reduce(&mut h, &observe("s", "a", ev.clone())),
        Ok(Reduced::Applied)
    );
    assert_eq!(
        reduce(&mut h, &observe("s", "a", ev)),
        Ok(Reduced::Duplicate)
    );
}

#[test]
fn a_full_timeline_counts_drops_but_rows_still_change() {
    let mut h = AttachmentHistory::new("t", "s");
    begin(&mut h, &start("a", 1)).expect("begin");
    for i in 0..MAX_EVIDENCE as u64 {
        let ev = Evidence::new(EvidenceKind::ToolCallObserved, Timestamp(10 + i))
            .server("srv0")
            .tool_call("echo", true);
        reduce(&mut h, &observe("s", "a", ev)).expect("observe");
    }
    let attempt = h.current().expect("current");
    assert_eq!(attempt.evidence.len(), MAX_EVIDENCE);
    let dropped = attempt.dropped_evidence;
    assert!(dropped > 0, "configured evidence plus 64 calls overflow");
    let late = Evidence::new(EvidenceKind::ToolsListObserved, Timestamp(999))
        .server("srv0")
        .tools(7);
    assert_eq!(
        reduce(&mut h, &observe("s", "a", late.clone())),
        Ok(Reduced::AppliedTimelineFull)
    );
    assert_eq!(
        reduce(&mut h, &observe("s", "a", late)),
        Ok(Reduced::Duplicate)
    );
    let attempt = h.current().expect("current");
    assert_eq!(attempt.dropped_evidence, dropped + 1);
    let row = attempt.server("srv0").expect("row");
    assert_eq!(row.status, DisplayStatus::Active);
    assert_eq!(row.tool_count, Some(7));
}

#[test]
fn superseded_attempts_keep_the_tool_count_and_drop_the_catalog() {
    let mut h = AttachmentHistory::new("t", "s");
    begin(&mut h, &start("a", 1)).expect("begin");
    let listed = Evidence::new(EvidenceKind::ToolsListObserved, Timestamp(2))
        .server("srv0")
        .tools(3);
    reduce(&mut h, &observe("s", "a", listed)).expect("listed");
    let catalog = ToolCatalog {
        method: crate::model::CATALOG_METHOD.into(),
        at: Timestamp(3),
        tool_count: 3,
        tools: vec![],
        truncated: false,
        total_tokens: 42,
    };
    let event = HistoryEvent::Catalog {
        key: AttemptKey {
            session_id: "s".into(),
            attempt_id: "a".into(),
        },
        server: "srv0".into(),
        catalog: Box::new(catalog),
    };
    assert_eq!(reduce(&mut h, &event), Ok(Reduced::Applied));
    assert_eq!(reduce(&mut h, &event), Ok(Reduced::Duplicate));
    assert!(h.current().expect("a").servers[0].tool_catalog.is_some());

    begin(&mut h, &start("b", 1)).expect("begin b");
    let old = h.attempt("a").expect("kept as history");
    assert!(old.servers[0].tool_catalog.is_none());
    assert_eq!(old.servers[0].tool_count, Some(3));
    assert!(matches!(
        reduce(&mut h, &event),
        Err(Rejection::StaleAttempt { .. })
    ));
}

#[test]
fn every_harness_s_word_for_a_wanted_login_is_needs_auth() {
    for word in [
        "needs-auth",
        "needs_auth",
        "NEEDS_AUTH",
        "unauthorized",
        "auth-required",
        "unauthenticated",
        "login_required",
        "needs_client_registration",
    ] {
        assert_eq!(reported_state(word), ReportedState::NeedsAuth, "{word}");
    }
    assert_eq!(reported_state("connected"), ReportedState::Up);
    assert_eq!(reported_state("registration"), ReportedState::Pending);
}

#[test]
fn agent_reports_move_stages_with_agent_provenance() {
    let mut h = AttachmentHistory::new("t", "s");
    begin(&mut h, &start("a", 4)).expect("begin");
    let report = |server: &str, status: &str| {
        Evidence::new(EvidenceKind::AgentReported, Timestamp(5))
            .server(server)
            .reported(status)
    };
    reduce(
        &mut h,
        &observe("s", "a", report("srv0", "connected").tools(4)),
    )
    .expect("ok");
    reduce(&mut h, &observe("s", "a", report("srv1", "needs-auth"))).expect("ok");
    let mut login = report("srv3", "needs-auth");
    login.reason_code = Some(ReasonCode::OauthRequired);
    reduce(&mut h, &observe("s", "a", login)).expect("ok");
    reduce(&mut h, &observe("s", "a", report("srv2", "pending"))).expect("ok");
    let a = h.current().expect("current");
    let r0 = a.server("srv0").expect("srv0");
    assert_eq!(r0.status, DisplayStatus::Active);
    // The harness's own list of the tools it holds: current_thread, never
    // what the model was sent.
    assert_eq!(r0.stages.current_thread.state, StageState::Yes);
    assert_eq!(
        r0.stages.current_thread.provenance,
        Some(ProvenanceCode::AgentReport)
    );
    assert_eq!(r0.stages.model_visible.state, StageState::Unknown);
    let r1 = a.server("srv1").expect("srv1");
    assert_eq!(r1.status, DisplayStatus::Failed);
    assert_eq!(r1.reason_code, Some(ReasonCode::AuthRequired));
    assert_eq!(r1.stages.authenticated.state, StageState::No);
    // A reader that knew which auth failure it was keeps its reason.
    let r3 = a.server("srv3").expect("srv3");
    assert_eq!(r3.status, DisplayStatus::Failed);
    assert_eq!(r3.reason_code, Some(ReasonCode::OauthRequired));
    assert_eq!(
        a.server("srv2").expect("srv2").status,
        DisplayStatus::Unknown
    );
}
