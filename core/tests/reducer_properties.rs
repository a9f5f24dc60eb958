//! Properties of the pure reducer: bounds, idempotence, supersession, and
//! order-independence of interleaved connections.

use proptest::prelude::*;
use tether_core::Owner;
use tether_core::history::{AttachmentHistory, MAX_ATTEMPTS, MAX_CONNECTIONS, MAX_EVIDENCE};
use tether_core::model::{ClientInfo, EndpointTestResult, Evidence, Timestamp};
use tether_core::reducer::{
    AttemptKey, AttemptStart, HistoryEvent, PlannedRow, Reduced, Rejection, begin_attempt, reduce,
};
use tether_core::sanitize::SUMMARY_MAX_BYTES;
use tether_core::vocab::{
    DecisionKind, DisplayStatus, EvidenceKind, Provenance, ReasonCode, ServerSource, Stage,
    StageState, Transport, Trigger,
};
use tether_words::display::{stopped, tool_status};

const SERVERS: [&str; 3] = ["kandev", "github", "files"];

fn start(attempt: &str, at: u64) -> AttemptStart {
    AttemptStart {
        attempt_id: attempt.into(),
        owner: Owner {
            task: "task".into(),
            session: "session".into(),
            execution: "exec".into(),
        },
        agent_kind: "claude-agent".into(),
        agent_id: None,
        agent_profile_id: None,
        trigger: Trigger::SessionNew,
        at: Timestamp(at),
        servers: SERVERS
            .iter()
            .enumerate()
            .map(|(i, name)| PlannedRow {
                name: (*name).to_owned(),
                source: ServerSource::Profile,
                transport: Transport::Http,
                target: "http://127.0.0.1:1".into(),
                decision: if i == 2 {
                    DecisionKind::Filter
                } else {
                    DecisionKind::Deliver
                },
                reason_code: (i == 2).then_some(ReasonCode::SseUnsupported),
                summary: None,
                note: None,
            })
            .collect(),
    }
}

fn observe(key: &AttemptKey, evidence: Evidence) -> HistoryEvent {
    HistoryEvent::Observe {
        key: key.clone(),
        evidence,
    }
}

/// A history with one begun attempt, and that attempt's key.
fn fresh(attempt: &str) -> (AttachmentHistory, AttemptKey) {
    let mut h = AttachmentHistory::new("task", "session");
    let key = begin_attempt(&mut h, &start(attempt, 0)).expect("begin");
    (h, key)
}

/// Connection-level evidence: what an observed endpoint or an agent report produces.
fn connection_evidence() -> impl Strategy<Value = Evidence> {
    let kind = prop_oneof![
        Just(EvidenceKind::InitializeObserved),
        Just(EvidenceKind::ToolsListObserved),
        Just(EvidenceKind::ToolCallObserved),
        Just(EvidenceKind::ConnectionClosed),
        Just(EvidenceKind::ExplicitError),
        Just(EvidenceKind::AgentReported),
        Just(EvidenceKind::Delivered),
        Just(EvidenceKind::EndpointTested),
        Just(EvidenceKind::ToolVisible),
        Just(EvidenceKind::ToolDeferred),
        Just(EvidenceKind::ToolWithheld),
        Just(EvidenceKind::DefinitionChanged),
        Just(EvidenceKind::ToolsChanged),
        Just(EvidenceKind::Other("from_the_future".into())),
    ];
    (
        kind,
        0u64..500,
        0usize..SERVERS.len(),
        0u8..12,
        0u32..40,
        any::<bool>(),
        prop_oneof![
            Just("connected"),
            Just("failed"),
            Just("needs-auth"),
            Just("pending"),
            // A harness word no plugin typed (Copilot 1.0.102's `stopped`).
            Just("stopped")
        ],
        proptest::option::of("[a-z ]{0,20}"),
    )
        .prop_map(|(kind, at, server, conn, count, ok, status, summary)| {
            let mut ev = Evidence::new(kind.clone(), Timestamp(at))
                .server(SERVERS[server])
                .connection(format!("c{conn}"));
            ev.summary = summary;
            match kind {
                EvidenceKind::InitializeObserved => {
                    ev = ev.client(ClientInfo {
                        name: format!("client-{}", conn % 2),
                        version: Some("1.0".into()),
                        protocol_version: None,
                    })
                }
                EvidenceKind::ToolsListObserved => ev = ev.tools(count),
                EvidenceKind::ToolCallObserved => {
                    ev = ev.tool_call("echo", ok);
                    // A third of calls end in a way no record gives.
                    if conn % 3 == 0 {
                        ev.ok = None;
                    }
                    // Some come as a source's running totals.
                    if conn % 4 == 1 {
                        let calls = count % 7 + 1;
                        let failed = count % 3 % calls;
                        ev.calls = Some(calls);
                        ev.failed_calls = Some(failed);
                        ev.unknown_calls = Some((count / 3) % (calls - failed + 1));
                    }
                }
                EvidenceKind::ToolVisible | EvidenceKind::ToolDeferred => {
                    ev.tool = Some(if ok { "echo" } else { "other" }.into());
                }
                EvidenceKind::ToolWithheld => {
                    ev.tool = Some(if conn % 2 == 0 { "echo" } else { "other" }.into());
                    ev.reason_code = Some(if ok {
                        ReasonCode::NameCollision
                    } else {
                        ReasonCode::ToolLimitExceeded
                    });
                }
                EvidenceKind::DefinitionChanged => {
                    ev.tool = Some(if ok { "echo" } else { "other" }.into());
                    ev.reason_code = Some(match conn % 3 {
                        0 => ReasonCode::DescriptionChanged,
                        1 => ReasonCode::InputSchemaChanged,
                        _ => ReasonCode::AnnotationsChanged,
                    });
                }
                EvidenceKind::ToolsChanged => {
                    ev.tool = Some(if ok { "echo" } else { "gone" }.into());
                    ev.reason_code = Some(if conn % 2 == 0 {
                        ReasonCode::ToolAdded
                    } else {
                        ReasonCode::ToolRemoved
                    });
                }
                EvidenceKind::ExplicitError => ev.reason_code = Some(ReasonCode::ServerError),
                EvidenceKind::AgentReported => {
                    ev = ev.reported(status);
                    if ok {
                        ev = ev.tools(count);
                    }
                }
                EvidenceKind::EndpointTested => {
                    ev = ev.endpoint_test(EndpointTestResult {
                        at: Timestamp(at),
                        succeeded: ok,
                        reason_code: None,
                        summary: None,
                        transport: Transport::Http,
                        target: "http://127.0.0.1:1".into(),
                        server_name: None,
                        server_version: None,
                        protocol_version: None,
                        era: None,
                        tool_count: Some(count),
                        tool_tokens: None,
                        token_method: None,
                        call: None,
                        elapsed_ms: u64::from(count),
                    })
                }
                _ => {}
            }
            ev
        })
}

/// Any evidence, attempt-level ones included, with long summaries sometimes.
fn any_evidence() -> impl Strategy<Value = Evidence> {
    prop_oneof![
        4 => connection_evidence(),
        1 => (0u64..500, "\\PC{0,400}").prop_map(|(at, s)| {
            Evidence::new(EvidenceKind::ExplicitError, Timestamp(at))
                .reason(ReasonCode::SessionNewFailed, Some(s))
        }),
        1 => (0u64..500, "[a-z0-9]{1,8}").prop_map(|(at, id)| {
            Evidence::new(EvidenceKind::SessionAccepted, Timestamp(at)).acp_session(id)
        }),
    ]
}

#[derive(Debug, Clone)]
enum Step {
    Begin,
    Observe(Box<Evidence>),
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    proptest::collection::vec(
        prop_oneof![1 => Just(Step::Begin), 12 => any_evidence().prop_map(|e| Step::Observe(Box::new(e)))],
        0..300,
    )
}

fn run(steps: &[Step]) -> (AttachmentHistory, AttemptKey) {
    let (mut h, mut key) = fresh("a0");
    let mut n = 0;
    for step in steps {
        match step {
            Step::Begin => {
                n += 1;
                key = begin_attempt(&mut h, &start(&format!("a{n}"), 1000 + n)).expect("begin");
            }
            Step::Observe(ev) => {
                let _ = reduce(&mut h, &observe(&key, (**ev).clone()));
            }
        }
    }
    (h, key)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// GIVEN any sequence of attempts and evidence THEN no bound is ever exceeded.
    #[test]
    fn bounds_are_never_exceeded(steps in steps()) {
        let (h, key) = run(&steps);
        prop_assert_eq!(h.current_attempt_id.as_deref(), Some(key.attempt_id()));
        prop_assert!(h.attempts.len() <= MAX_ATTEMPTS);
        let current = h.current().expect("a current attempt");
        prop_assert_eq!(h.attempts.last().map(|a| &a.attempt_id), Some(&current.attempt_id));
        for attempt in &h.attempts {
            prop_assert!(attempt.evidence.len() <= MAX_EVIDENCE);
            if let Some(err) = &attempt.report_error {
                prop_assert!(err.summary.as_ref().is_none_or(|s| s.len() <= SUMMARY_MAX_BYTES));
            }
            for ev in &attempt.evidence {
                prop_assert!(ev.summary.as_ref().is_none_or(|s| s.len() <= SUMMARY_MAX_BYTES));
            }
            for row in &attempt.servers {
                prop_assert!(row.connections.len() <= MAX_CONNECTIONS);
                prop_assert!(row.summary.as_ref().is_none_or(|s| s.len() <= SUMMARY_MAX_BYTES));
            }
        }
        let observed = steps.iter().filter(|s| matches!(s, Step::Observe(_))).count();
        let kept: usize = h.attempts.iter().map(|a| a.evidence.len()).sum();
        prop_assert!(kept <= observed + h.attempts.len() * (2 * SERVERS.len() + 1));
    }

    /// GIVEN any history WHEN the same event is applied twice THEN the second changes nothing.
    #[test]
    fn duplicates_are_idempotent(steps in steps(), ev in any_evidence()) {
        let (mut h, key) = run(&steps);
        let event = observe(&key, ev);
        let _ = reduce(&mut h, &event);
        let once = h.clone();
        let _ = reduce(&mut h, &event);
        prop_assert_eq!(once, h);
    }

    /// GIVEN a superseded attempt WHEN its evidence arrives THEN it is rejected and nothing changes.
    #[test]
    fn superseded_evidence_never_changes_the_current_attempt(
        before in proptest::collection::vec(any_evidence(), 0..40),
        late in proptest::collection::vec(any_evidence(), 1..40),
    ) {
        let (mut h, old) = fresh("old");
        for ev in before {
            let _ = reduce(&mut h, &observe(&old, ev));
        }
        begin_attempt(&mut h, &start("new", 2000)).expect("begin new");
        let settled = h.clone();
        for ev in &late {
            let result = reduce(&mut h, &observe(&old, ev.clone()));
            prop_assert_eq!(result, Err(Rejection::StaleAttempt { attempt_id: "old".into() }));
        }
        prop_assert_eq!(&settled, &h);
        // A key of another history is refused too.
        let mut other = AttachmentHistory::new("task", "elsewhere");
        let mut elsewhere = start("new", 3000);
        elsewhere.owner.session = "elsewhere".into();
        let foreign = begin_attempt(&mut other, &elsewhere).expect("begin elsewhere");
        let result = reduce(&mut h, &observe(&foreign, late[0].clone()));
        prop_assert_eq!(result, Err(Rejection::UnknownSession { session_id: "elsewhere".into() }));
        prop_assert_eq!(settled, h);
    }

    /// GIVEN two connections' events WHEN they interleave in any order THEN every row ends the same.
    #[test]
    fn interleaving_connections_does_not_change_rows(
        mut a in proptest::collection::vec(connection_evidence(), 0..60),
        mut b in proptest::collection::vec(connection_evidence(), 0..60),
        picks in proptest::collection::vec(any::<bool>(), 120),
        shuffle_seed in any::<u64>(),
    ) {
        for ev in &mut a { ev.connection_id = Some("conn-a".into()); }
        for ev in &mut b { ev.connection_id = Some("conn-b".into()); }
        // Order one: all of a, then all of b.
        let (mut first, x) = fresh("x");
        for ev in a.iter().chain(b.iter()) {
            let _ = reduce(&mut first, &observe(&x, ev.clone()));
        }
        // Order two: an arbitrary interleaving.
        let (mut i, mut j) = (0, 0);
        let mut merged = Vec::new();
        for pick in picks.iter().chain(std::iter::repeat(&true)) {
            if i == a.len() && j == b.len() { break; }
            if (*pick && i < a.len()) || j == b.len() { merged.push(a[i].clone()); i += 1; }
            else { merged.push(b[j].clone()); j += 1; }
        }
        let (mut second, _) = fresh("x");
        for ev in &merged {
            let _ = reduce(&mut second, &observe(&x, ev.clone()));
        }
        // Order three: a full permutation (the reducer merges commutatively).
        let mut shuffled = merged.clone();
        let mut seed = shuffle_seed | 1;
        for k in (1..shuffled.len()).rev() {
            seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
            shuffled.swap(k, (seed % (k as u64 + 1)) as usize);
        }
        let (mut third, _) = fresh("x");
        for ev in &shuffled {
            let _ = reduce(&mut third, &observe(&x, ev.clone()));
        }
        let rows = |h: &AttachmentHistory| h.current().expect("current").servers.clone();
        prop_assert_eq!(rows(&first), rows(&second));
        prop_assert_eq!(rows(&first), rows(&third));
    }

    /// GIVEN a full timeline WHEN evidence arrives THEN the reducer calls it
    /// a duplicate exactly when no row changed: its own change tracking
    /// (no before-image of the row is taken) agrees with a full comparison.
    #[test]
    fn row_change_flag_matches_a_before_image(
        fill in proptest::collection::vec(connection_evidence(), 0..80),
        more in proptest::collection::vec(connection_evidence(), 1..200),
    ) {
        let (mut h, x) = fresh("x");
        let mut n = 0u64;
        // Fill the timeline with distinct attempt-level events first.
        while h.current().expect("current").evidence.len() < MAX_EVIDENCE {
            n += 1;
            let ev = Evidence::new(EvidenceKind::Other("filler".into()), Timestamp(n));
            reduce(&mut h, &observe(&x, ev)).expect("filler");
        }
        for ev in fill.into_iter().chain(more) {
            let before = h.clone();
            let result = reduce(&mut h, &observe(&x, ev));
            let rows = |h: &AttachmentHistory| h.current().expect("current").servers.clone();
            match result {
                Ok(Reduced::Duplicate) => prop_assert_eq!(&before, &h),
                Ok(Reduced::AppliedTimelineFull) => prop_assert_ne!(rows(&before), rows(&h)),
                Ok(Reduced::Applied) => prop_assert!(false, "the timeline was full"),
                Ok(Reduced::Unattributed) => {
                    prop_assert_eq!(rows(&before), rows(&h));
                    prop_assert_eq!(
                        h.current().map(|a| a.unattributed_evidence),
                        before.current().map(|a| a.unattributed_evidence + 1)
                    );
                }
                Err(_) => prop_assert_eq!(&before, &h),
            }
        }
    }
}

/// Evidence as every source words it: the observed endpoint and the plugin
/// (session events), the relay, the harness's own telemetry (collect), its
/// records (sessions), the agent's own report and endpoint tests, plus the
/// plan's filter and unavailable decisions and tools shown to the model.
fn evidence_from_every_source() -> impl Strategy<Value = Evidence> {
    let source = prop_oneof![
        Just(Provenance::SessionEvent),
        Just(Provenance::Relay),
        Just(Provenance::HarnessTelemetry),
        Just(Provenance::HarnessRecord),
        Just(Provenance::AgentReport),
        Just(Provenance::EndpointTest),
    ];
    let extra =
        (0u64..500, 0usize..SERVERS.len(), 0u8..3, 0u8..4).prop_map(|(at, server, tool, kind)| {
            let kind = match kind {
                0 => EvidenceKind::ToolVisible,
                1 => EvidenceKind::Filtered,
                2 => EvidenceKind::Unavailable,
                _ => EvidenceKind::Configured,
            };
            let mut ev = Evidence::new(kind, Timestamp(at)).server(SERVERS[server]);
            ev.tool = Some(format!("tool{tool}"));
            ev.reason_code = Some(ReasonCode::SseUnsupported);
            ev
        });
    (prop_oneof![3 => connection_evidence(), 1 => extra], source)
        .prop_map(|(ev, source)| ev.provenance(source))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// GIVEN any evidence from any source, in any order, with attempts
    /// between THEN every row's ladder is monotone (no `yes` above a stage
    /// on its path that is not `yes`), a stage's `yes` that no evidence
    /// showed says what implied it, no status is weaker than the strongest
    /// stage, a tool's status is a tool's, and "where it stopped" never
    /// says nothing shows what a stage shows.
    #[test]
    fn the_ladder_is_monotone_and_the_status_follows_its_strongest_stage(
        steps in proptest::collection::vec(
            prop_oneof![
                1 => Just(None),
                12 => evidence_from_every_source().prop_map(Some),
            ],
            0..200,
        ),
    ) {
        let (mut h, mut key) = fresh("a0");
        let mut n = 0;
        for step in steps {
            match step {
                None => {
                    n += 1;
                    key = begin_attempt(&mut h, &start(&format!("a{n}"), 1000 + n)).expect("begin");
                }
                Some(ev) => {
                    let _ = reduce(&mut h, &observe(&key, ev));
                }
            }
        }
        for attempt in &h.attempts {
            for row in &attempt.servers {
                let ladder: Vec<_> = Stage::PATH.iter().map(|s| (*s, *row.stages.get(*s))).collect();
                if let Some(top) = ladder.iter().rposition(|(_, o)| o.is_yes()) {
                    for (stage, o) in &ladder[..top] {
                        prop_assert!(o.is_yes(), "{}: {stage} is {:?} below a yes", row.name, o.state);
                    }
                }
                for (stage, o) in &ladder {
                    if o.implied_by.is_some() {
                        prop_assert!(o.is_yes(), "{stage} implied but not yes");
                        // Its time is its implier's, or absent: never 0.
                        prop_assert!(o.provenance.is_some());
                        prop_assert_ne!(o.at, Some(Timestamp(0)));
                    }
                }
                let s = &row.stages;
                if s.tools_listed.is_yes() {
                    prop_assert_eq!(row.status, DisplayStatus::Active, "{}", row.name);
                } else if s.initialized.is_yes() {
                    prop_assert_eq!(row.status, DisplayStatus::Connected, "{}", row.name);
                } else if s.delivered.is_yes() {
                    prop_assert!(
                        matches!(row.status, DisplayStatus::Delivered | DisplayStatus::Failed),
                        "{}: {:?}", row.name, row.status
                    );
                }
                let said = stopped(row);
                if s.delivered.is_yes() {
                    prop_assert!(!said.contains("nothing shows the session used it"), "{said}");
                }
                if s.initialized.is_yes() {
                    prop_assert!(!said.contains("nothing shows it connected"), "{said}");
                }
                if s.model_visible.state == StageState::Yes {
                    prop_assert!(!said.contains("nothing shows whether the model"), "{said}");
                }
                for tool in &row.tools {
                    let ladder = [
                        tool.listed,
                        tool.schema_accepted,
                        tool.current_thread,
                        tool.model_visible,
                        tool.called,
                    ];
                    if let Some(top) = ladder.iter().rposition(|o| o.is_yes()) {
                        prop_assert!(ladder[..top].iter().all(|o| o.is_yes()), "{}", tool.name);
                        prop_assert!(s.tools_listed.is_yes(), "{} shown, its server not listed", tool.name);
                    }
                    let status = tool_status(row.status, tool);
                    // A tool is never "connected"; it is "delivered" only
                    // where the harness held it behind its tool search.
                    prop_assert!(status != DisplayStatus::Connected, "a tool is never connected");
                    prop_assert!(
                        status != DisplayStatus::Delivered || tool.is_deferred(),
                        "a tool is delivered only when deferred: {:?}", tool
                    );
                    // A tool a rule kept from the model is unavailable, with its reason.
                    let withheld = tool.is_withheld();
                    let held = tool.is_deferred() && !tool.called.is_yes();
                    prop_assert_eq!(
                        status == DisplayStatus::Active,
                        tool.is_shown() && !withheld && !held
                    );
                    if withheld {
                        prop_assert_eq!(status, DisplayStatus::Unavailable);
                    }
                }
            }
        }
    }
}

/// Tool calls whose outcome is known to be a success or is unknown, never
/// a failure, as single calls or a source's running totals.
fn calls_that_never_failed() -> impl Strategy<Value = Evidence> {
    (
        0u64..500,
        0usize..SERVERS.len(),
        0u8..3,
        proptest::option::of(Just(true)),
        proptest::option::of((1u32..50, 0u32..50)),
        0u8..6,
    )
        .prop_map(|(at, server, tool, ok, totals, prov)| {
            let mut ev = Evidence::new(EvidenceKind::ToolCallObserved, Timestamp(at))
                .server(SERVERS[server])
                .tool_call(format!("tool{tool}"), true);
            ev.ok = ok;
            if let Some((calls, unknown)) = totals {
                ev.calls = Some(calls);
                ev.failed_calls = Some(0);
                ev.unknown_calls = Some(unknown.min(calls));
                ev.ok = (unknown < calls).then_some(true);
            }
            ev.provenance(match prov {
                0 => Provenance::HarnessRecord,
                1 => Provenance::HarnessTelemetry,
                2 => Provenance::Relay,
                _ => Provenance::SessionEvent,
            })
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// GIVEN tool calls that succeeded or whose outcome no record gives,
    /// from any source, in any order WHEN they are reduced THEN no call is
    /// counted failed: not in a tool's count, not in the newest call, not
    /// in the server's or the tool's sentence, not in the matrix; and a
    /// call whose outcome is unknown says so.
    #[test]
    fn an_unknown_outcome_never_counts_as_failed(
        calls in proptest::collection::vec(calls_that_never_failed(), 1..60),
        others in proptest::collection::vec(connection_evidence(), 0..20),
        seed in any::<u64>(),
    ) {
        // Other evidence never fails a call either: drop its calls.
        let mut all: Vec<Evidence> = others
            .into_iter()
            .filter(|e| e.kind != EvidenceKind::ToolCallObserved)
            .chain(calls.iter().cloned())
            .collect();
        let mut s = seed | 1;
        for k in (1..all.len()).rev() {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            all.swap(k, (s % (k as u64 + 1)) as usize);
        }
        let (mut h, key) = fresh("a0");
        for ev in &all {
            let _ = reduce(&mut h, &observe(&key, ev.clone()));
        }
        let attempt = h.current().expect("current");
        for row in &attempt.servers {
            for tool in &row.tools {
                prop_assert_eq!(tool.failed_calls, 0, "{}", tool.name);
                prop_assert!(tool.unknown_calls <= tool.calls);
                let said = tether_words::display::tool_stopped(tool);
                prop_assert!(!said.contains("failed"), "{said}");
                if tool.calls > 0 && tool.unknown_calls == tool.calls {
                    prop_assert!(said.contains("outcome not recorded"), "{said}");
                }
            }
            if let Some(last) = &row.last_tool_call {
                prop_assert_ne!(last.outcome(), tether_core::vocab::CallOutcome::Failed);
            }
            if tether_words::display::CallTally::of_row(row).calls > 0 {
                let said = stopped(row);
                prop_assert!(!said.contains("failed"), "{}: {said}", row.name);
            }
        }
        for m in tether_words::display::matrix(attempt) {
            prop_assert_eq!(m.failed_calls, 0, "{}", m.name);
        }
        // Every call that no source gives an outcome for is unknown.
        let only_unknown = calls.iter().all(|c| c.ok.is_none());
        if only_unknown {
            for row in attempt.servers.iter().filter(|r| r.last_tool_call.is_some()) {
                let last = row.last_tool_call.as_ref().expect("a call");
                prop_assert_eq!(last.outcome(), tether_core::vocab::CallOutcome::Unknown);
                prop_assert!(!last.ok);
            }
        }
    }
}

/// A refusal of one of the servers' tools, from any source, with any
/// reason, one at a time or as a source's running count.
fn refusals() -> impl Strategy<Value = Evidence> {
    (
        0u64..500,
        0usize..SERVERS.len(),
        0u8..3,
        0u8..4,
        proptest::option::of(1u32..20),
        0u8..3,
    )
        .prop_map(|(at, server, tool, reason, count, prov)| {
            use tether_core::vocab::ReasonCode as R;
            let mut ev = Evidence::new(EvidenceKind::ToolCallRefused, Timestamp(at))
                .server(SERVERS[server])
                .tool(format!("tool{tool}"));
            ev.reason_code = Some(match reason {
                0 => R::PermissionDenied,
                1 => R::ApprovalRequired,
                2 => R::BlockedByHook,
                _ => R::DeniedByPolicy,
            });
            ev.calls = count;
            ev.provenance(match prov {
                0 => Provenance::HarnessRecord,
                1 => Provenance::HarnessTelemetry,
                _ => Provenance::ModelTap,
            })
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// GIVEN refusals of tools, and evidence of every other kind but calls,
    /// in any order WHEN they are reduced THEN no refused call is a use:
    /// no tool is called, no call is counted, no row or matrix line says
    /// "used", the servers' `callable` is `no` and each refused tool's is
    /// too, and each refused tool's row names its refusal; and the result
    /// does not depend on the order.
    #[test]
    fn a_refused_call_is_never_a_use(
        refused in proptest::collection::vec(refusals(), 1..40),
        others in proptest::collection::vec(connection_evidence(), 0..20),
        seed in any::<u64>(),
    ) {
        let all: Vec<Evidence> = others
            .into_iter()
            .filter(|e| e.kind != EvidenceKind::ToolCallObserved)
            .chain(refused.iter().cloned())
            .collect();
        let reduce_in = |mut order: Vec<Evidence>, mut s: u64| {
            for k in (1..order.len()).rev() {
                s ^= s << 13; s ^= s >> 7; s ^= s << 17;
                order.swap(k, (s % (k as u64 + 1)) as usize);
            }
            let (mut h, key) = fresh("a0");
            for ev in &order {
                let _ = reduce(&mut h, &observe(&key, ev.clone()));
            }
            h.current().expect("current").clone()
        };
        let attempt = reduce_in(all.clone(), seed | 1);
        for row in &attempt.servers {
            prop_assert!(row.last_tool_call.is_none(), "{}", row.name);
            let tally = tether_words::display::CallTally::of_row(row);
            prop_assert_eq!(tally.calls, 0);
            let said = stopped(row);
            prop_assert!(!said.contains("used:"), "{}: {said}", row.name);
            if tally.refused > 0 {
                prop_assert_eq!(row.stages.callable.state, StageState::No);
                prop_assert!(said.contains("refused"), "{said}");
            }
            for tool in row.tools.iter().filter(|t| t.refused_calls > 0) {
                prop_assert_eq!(tool.calls, 0);
                prop_assert!(!tool.called.is_yes());
                prop_assert!(tool.model_visible.is_yes());
                prop_assert_eq!(tool.callable.state, StageState::No);
                prop_assert!(tether_words::display::tool_reason(tool).is_some());
                let said = tether_words::display::tool_stopped(tool);
                prop_assert!(said.contains("refused") && !said.contains("used:"), "{said}");
                let sum: u32 = tool.refusals.iter().map(|r| r.calls).sum();
                prop_assert_eq!(sum, tool.refused_calls);
            }
        }
        for m in tether_words::display::matrix(&attempt) {
            prop_assert_eq!(m.calls, 0, "{}", m.name);
            prop_assert!(!m.stopped.contains("used:"), "{}: {}", m.name, m.stopped);
        }
        let again = reduce_in(all, seed.rotate_left(17) | 1);
        prop_assert_eq!(&attempt.servers, &again.servers);
    }
}
