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

/// GIVEN a plugin's word for a server's state that is none of the typed
/// states (a harness word it could not map, in any spelling), or
/// `unknown`, WHEN reduced THEN the row shows a reported `unknown` (the
/// stage says the agent reported it, and nothing fails) and the evidence
/// keeps the word; a pending report shows nothing; only the typed wire
/// forms, exactly, read as a state.
#[test]
fn a_plugin_s_unknown_word_is_a_visible_unknown_never_a_quiet_pending() {
    for word in [
        "needs_client_registration",
        "NEEDS_AUTH",
        "ready",
        "registration",
    ] {
        assert_eq!(
            ReportedStatus::from(word),
            ReportedStatus::Other(word.to_owned()),
            "{word}"
        );
    }
    for typed in [
        ReportedStatus::Connected,
        ReportedStatus::Failed,
        ReportedStatus::NeedsAuth,
        ReportedStatus::Disabled,
        ReportedStatus::Pending,
        ReportedStatus::Unknown,
    ] {
        assert_eq!(ReportedStatus::from(typed.as_str()), typed);
        let ev = Evidence::new(EvidenceKind::AgentReported, Timestamp(5)).reported(typed.clone());
        assert_eq!(ev.reported_state(), Some(typed));
    }
    let mut h = AttachmentHistory::new("t", "s");
    begin(&mut h, &start("a", 3)).expect("begin");
    let word = "needs_client_registration";
    let reports = [
        ("srv0", ReportedStatus::from(word)),
        ("srv1", ReportedStatus::Pending),
        ("srv2", ReportedStatus::Unknown),
    ];
    for (server, status) in reports {
        let ev = Evidence::new(EvidenceKind::AgentReported, Timestamp(5))
            .server(server)
            .reported(status);
        reduce(&mut h, &observe("s", "a", ev)).expect("ok");
    }
    let a = h.current().expect("current");
    for name in ["srv0", "srv2"] {
        let row = a.server(name).expect(name);
        assert_eq!(row.stages.initialized.state, StageState::Unknown, "{name}");
        assert_eq!(
            row.stages.initialized.provenance,
            Some(ProvenanceCode::AgentReport),
            "{name}: a state no plugin typed is shown as reported unknown"
        );
        assert!(!row.stages.initialized.is_unknown(), "{name}");
        assert_eq!(row.status, DisplayStatus::Unknown, "{name}: never failed");
        assert_eq!(row.failed_at, None, "{name}");
    }
    assert_eq!(
        reported_word_of(a, "srv0").as_deref(),
        Some(word),
        "the word is kept as metadata"
    );
    assert_eq!(reported_word_of(a, "srv2").as_deref(), Some("unknown"));
    let pending = a.server("srv1").expect("srv1");
    assert!(pending.stages.initialized.is_unknown(), "{pending:?}");
}

/// The state the attempt kept from `server`'s agent report.
fn reported_word_of(a: &AttachmentAttempt, server: &str) -> Option<String> {
    a.evidence
        .iter()
        .find(|e| e.kind == EvidenceKind::AgentReported && e.server.as_deref() == Some(server))
        .and_then(|e| e.reported_status.clone())
}

/// GIVEN secrets and text planted where a plugin's state word belongs
/// (through `Evidence::reported`, or set on evidence straight off the
/// wire, or a value only the host knows is a secret) WHEN kept or
/// sanitized THEN each is `unknown`: the row shows a reported unknown and
/// no byte of the plant reaches the attempt.
#[test]
fn a_secret_where_a_state_belongs_is_unknown_and_never_kept() {
    let planted = [
        "sk-live-PLANTED0123456789abcdefABCDEF",
        "ghp_PLANTED0123456789abcdef",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJQTEFOVEVEIn0.c2lnbmF0dXJl",
        "token=PLANTED",
        "Bearer PLANTED",
        "PLANTED words in a sentence",
        "a-very-long-word-that-is-PLANTED-past-the-cap",
    ];
    for plant in planted {
        let ev = Evidence::new(EvidenceKind::AgentReported, Timestamp(5)).reported(plant);
        assert_eq!(ev.reported_status.as_deref(), Some("unknown"), "{plant}");
    }
    let rows = RowNames::shown_as_is(["srv0"]);
    let scrubber = Scrubber::new().with_secrets(["hostPLANTED"]);
    for plant in planted.into_iter().chain(["hostPLANTED"]) {
        let mut ev = Evidence::new(EvidenceKind::AgentReported, Timestamp(5)).server("srv0");
        ev.reported_status = Some(plant.to_owned());
        let kept = sanitize_evidence(&ev, &scrubber, &rows).into_inner();
        assert_eq!(kept.reported_status.as_deref(), Some("unknown"), "{plant}");
    }
    let mut h = AttachmentHistory::new("t", "s");
    begin(&mut h, &start("a", 1)).expect("begin");
    let mut ev = Evidence::new(EvidenceKind::AgentReported, Timestamp(5)).server("srv0");
    ev.reported_status = Some(planted[0].to_owned());
    reduce(&mut h, &observe("s", "a", ev)).expect("ok");
    let a = h.current().expect("current");
    let row = a.server("srv0").expect("srv0");
    assert_eq!(
        row.stages.initialized.provenance,
        Some(ProvenanceCode::AgentReport)
    );
    let json = serde_json::to_string(a).expect("json");
    assert!(!json.contains("PLANTED"), "{json}");
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

/// GIVEN a harness's bare "needs auth" and, at the same instant, the
/// challenge that says which (a token refused), in either order, and a row
/// planned with a missing cwd that then fails to spawn WHEN reduced THEN
/// the row keeps the reason that says which, and the cwd as the cause.
#[test]
fn a_reason_that_says_which_beats_a_bare_one_at_one_instant() {
    for bare_first in [true, false] {
        let mut h = AttachmentHistory::new("t", "s");
        let mut s = start("a", 2);
        s.servers[1].reason_code = Some(ReasonCode::CwdNotFound);
        begin(&mut h, &s).expect("begin");
        let report = |server: &str, status: &str, reason: Option<ReasonCode>| {
            let mut ev = Evidence::new(EvidenceKind::AgentReported, Timestamp(5))
                .server(server)
                .reported(status);
            ev.reason_code = reason;
            ev
        };
        let bare = report("srv0", "needs-auth", None);
        let which = report("srv0", "needs-auth", Some(ReasonCode::AuthRejected));
        let (one, two) = if bare_first {
            (bare, which)
        } else {
            (which, bare)
        };
        for ev in [
            one,
            two,
            report("srv1", "failed", Some(ReasonCode::CommandNotFound)),
        ] {
            reduce(&mut h, &observe("s", "a", ev)).expect("ok");
        }
        let a = h.current().expect("current");
        let r0 = a.server("srv0").expect("srv0");
        assert_eq!(
            r0.reason_code,
            Some(ReasonCode::AuthRejected),
            "{bare_first}"
        );
        let r1 = a.server("srv1").expect("srv1");
        assert_eq!(r1.reason_code, Some(ReasonCode::CwdNotFound));
        assert_eq!(r1.status, DisplayStatus::Failed);
    }
}

/// GIVEN a harness's bare "failed" (a printed init line, stamped early) and
/// its server log's reason (command not found, seen later), in either order
/// WHEN reduced THEN the row keeps the reason that says which failure it
/// was: `tether run` (which merges both) and `sessions show` (which reads
/// the log) say the same. Two bare reports keep the earliest.
#[test]
fn a_reason_that_says_which_beats_an_earlier_bare_one() {
    for bare_first in [true, false] {
        let mut h = AttachmentHistory::new("t", "s");
        begin(&mut h, &start("a", 1)).expect("begin");
        let report = |at: u64, reason: Option<ReasonCode>| {
            let mut ev = Evidence::new(EvidenceKind::AgentReported, Timestamp(at))
                .server("srv0")
                .reported("failed");
            ev.reason_code = reason;
            ev
        };
        let bare = report(3, None);
        let which = report(9, Some(ReasonCode::CommandNotFound));
        let (one, two) = if bare_first {
            (bare, which)
        } else {
            (which, bare)
        };
        for ev in [one, two] {
            reduce(&mut h, &observe("s", "a", ev)).expect("ok");
        }
        let a = h.current().expect("current");
        let r0 = a.server("srv0").expect("srv0");
        assert_eq!(
            r0.reason_code,
            Some(ReasonCode::CommandNotFound),
            "{bare_first}"
        );
        assert_eq!(r0.failed_at, Some(Timestamp(9)), "{bare_first}");
        assert_eq!(r0.status, DisplayStatus::Failed);
    }
    let mut h = AttachmentHistory::new("t", "s");
    begin(&mut h, &start("a", 1)).expect("begin");
    for at in [7, 4] {
        let ev = Evidence::new(EvidenceKind::AgentReported, Timestamp(at))
            .server("srv0")
            .reported("failed");
        reduce(&mut h, &observe("s", "a", ev)).expect("ok");
    }
    let a = h.current().expect("current");
    let r0 = a.server("srv0").expect("srv0");
    assert_eq!(r0.reason_code, Some(ReasonCode::AgentReportedFailed));
    assert_eq!(r0.failed_at, Some(Timestamp(4)));
}

/// GIVEN Copilot 1.0.102's process log for a 401 with an empty challenge
/// (a real run's lines: `… reporting the server as needing auth
/// {"server":…}`, then `HTTP 401 challenge (WWW-Authenticate: ) {…}`, which
/// its reader words as `auth_required` with a sentence), the bare line a
/// millisecond before the worded one, in either order of arrival WHEN
/// reduced THEN the row's reason carries its sentence: one said with what
/// to do beats the same said bare, whenever each was seen.
#[test]
fn a_reason_said_with_its_sentence_beats_an_earlier_bare_one() {
    let sentence = "the server wants credentials (HTTP 401)";
    for bare_first in [true, false] {
        let mut h = AttachmentHistory::new("t", "s");
        begin(&mut h, &start("a", 1)).expect("begin");
        let report = |at: u64, summary: Option<&str>| {
            let mut ev = Evidence::new(EvidenceKind::AgentReported, Timestamp(at))
                .server("srv0")
                .reported("needs-auth");
            if let Some(summary) = summary {
                ev = ev.reason(ReasonCode::AuthRequired, Some(summary.into()));
            }
            ev
        };
        let bare = report(453, None);
        let said = report(454, Some(sentence));
        let (one, two) = if bare_first {
            (bare, said)
        } else {
            (said, bare)
        };
        for ev in [one, two] {
            reduce(&mut h, &observe("s", "a", ev)).expect("ok");
        }
        let a = h.current().expect("current");
        let r0 = a.server("srv0").expect("srv0");
        assert_eq!(
            r0.reason_code,
            Some(ReasonCode::AuthRequired),
            "{bare_first}"
        );
        assert_eq!(r0.summary.as_deref(), Some(sentence), "{bare_first}");
        assert_eq!(r0.status, DisplayStatus::Failed, "{bare_first}");
    }
}

/// GIVEN a row planned with a command that does not resolve here (the
/// inventory's sentence) WHEN the harness says only that the server failed
/// THEN the row fails with `command_not_found` and that sentence; WHEN the
/// harness says why itself THEN its reason is the row's.
#[test]
fn a_command_that_does_not_resolve_is_the_cause_of_a_bare_failure() {
    let sentence = "`srv-x` is on no folder of PATH here: install it";
    for (said, expected, summary) in [
        (None, ReasonCode::CommandNotFound, Some(sentence)),
        (
            Some(ReasonCode::AgentReportedFailed),
            ReasonCode::CommandNotFound,
            Some(sentence),
        ),
        (
            Some(ReasonCode::ServerExited),
            ReasonCode::ServerExited,
            None,
        ),
    ] {
        let mut h = AttachmentHistory::new("t", "s");
        let mut s = start("a", 1);
        s.servers[0].reason_code = Some(ReasonCode::CommandNotFound);
        s.servers[0].summary = Some(sentence.to_owned());
        begin(&mut h, &s).expect("begin");
        let mut ev = Evidence::new(EvidenceKind::AgentReported, Timestamp(5))
            .server("srv0")
            .reported("failed");
        ev.reason_code = said.clone();
        reduce(&mut h, &observe("s", "a", ev)).expect("ok");
        let a = h.current().expect("current");
        let row = a.server("srv0").expect("srv0");
        assert_eq!(row.reason_code, Some(expected), "{said:?}");
        assert_eq!(row.summary.as_deref(), summary, "{said:?}");
        assert_eq!(row.status, DisplayStatus::Failed, "{said:?}");
    }
}
