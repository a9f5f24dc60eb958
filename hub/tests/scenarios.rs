//! Scenario tests named after the Kandev spec's scenarios, through the hub.

use std::sync::Arc;

use tether_core::model::{ClientInfo, Evidence, Timestamp};
use tether_core::registry::{PluginSource, Registry};
use tether_core::vocab::{
    DecisionKind, DisplayStatus, EvidenceKind, ReasonCode, ServerSource, StageState, Transport,
    Trigger,
};
use tether_core::{
    AgentCapabilities, Decision, Delivery, DriveMode, Endpoint, PlanContext, PluginDescriptor,
    ServerSpec, TransportObserver,
};
use tether_hub::{AttemptHandle, AttemptRequest, Hub, HubConfig, PublishError};
use tether_words::display::{copy_diagnostics, project_row};

/// An ACP-style plugin for the tests: stdio always, http and sse only when advertised.
struct TestAcp;

impl TransportObserver for TestAcp {
    fn descriptor(&self) -> PluginDescriptor {
        PluginDescriptor::new("test-acp", ["test-agent"], DriveMode::Acp, "0")
    }

    fn decide(&self, server: &ServerSpec, ctx: &PlanContext) -> Decision {
        for endpoint in &server.endpoints {
            let ok = match endpoint.transport() {
                Transport::Stdio => true,
                Transport::Http => ctx.capabilities.http == Some(true),
                Transport::Sse => ctx.capabilities.sse == Some(true),
                _ => false,
            };
            if ok {
                return Decision::Deliver {
                    transport: endpoint.transport(),
                    via: Delivery::AcpMcpServers,
                };
            }
        }
        Decision::filter(ReasonCode::HttpUnsupported)
    }
}

/// A plugin that forgets every server named "forgotten" and panics on "boom".
struct Forgetful;

impl TransportObserver for Forgetful {
    fn descriptor(&self) -> PluginDescriptor {
        PluginDescriptor::new(
            "forgetful",
            ["forgetful-agent"],
            DriveMode::Passthrough,
            "0",
        )
    }

    fn decide(&self, _: &ServerSpec, _: &PlanContext) -> Decision {
        Decision::Deliver {
            transport: Transport::Stdio,
            via: Delivery::ConfigFile,
        }
    }

    fn decide_all(&self, servers: &[ServerSpec], ctx: &PlanContext) -> Vec<(String, Decision)> {
        assert!(
            !servers.iter().any(|s| s.name == "boom"),
            "plugin bug: boom"
        );
        servers
            .iter()
            .filter(|s| s.name != "forgotten")
            .map(|s| (s.name.clone(), self.decide(s, ctx)))
            .collect()
    }
}

fn hub() -> Hub {
    let mut registry = Registry::empty();
    registry
        .add(Arc::new(TestAcp), PluginSource::Static)
        .expect("add");
    registry
        .add(Arc::new(Forgetful), PluginSource::Static)
        .expect("add");
    Hub::new(registry)
}

fn http(name: &str, source: ServerSource) -> ServerSpec {
    ServerSpec::new(
        name,
        source,
        Endpoint::Http {
            url: "http://127.0.0.1:4000/mcp".into(),
            headers: vec![],
        },
    )
}

fn stdio(name: &str) -> ServerSpec {
    ServerSpec::new(
        name,
        ServerSource::Profile,
        Endpoint::Stdio {
            command: "/usr/bin/mcp-server-time".into(),
            args: vec![],
            env: vec![],
            cwd: None,
        },
    )
}

fn request(session: &str, trigger: Trigger, servers: Vec<ServerSpec>) -> AttemptRequest {
    let mut req = AttemptRequest::new(
        tether_core::Owner {
            task: "task-1".into(),
            session: session.into(),
            execution: "exec-1".into(),
        },
        "test-agent",
        DriveMode::Acp,
        trigger,
        servers,
    );
    req.capabilities = AgentCapabilities::new(Some(true), Some(false), Some(true));
    req
}

fn deliver_all(handle: &AttemptHandle, at: u64) {
    for (server, _) in handle.plan.delivered() {
        handle
            .sink
            .publish(
                Evidence::new(EvidenceKind::Delivered, Timestamp(at)).server(&server.spec.name),
            )
            .expect("publish delivered");
    }
}

fn connect_and_list(handle: &AttemptHandle, server: &str, conn: &str, at: u64, tools: u32) {
    handle
        .sink
        .publish(
            Evidence::new(EvidenceKind::InitializeObserved, Timestamp(at))
                .server(server)
                .connection(conn)
                .client(ClientInfo {
                    name: "claude-code".into(),
                    version: Some("2.0.0".into()),
                    protocol_version: Some("2025-06-18".into()),
                }),
        )
        .expect("publish initialize");
    handle
        .sink
        .publish(
            Evidence::new(EvidenceKind::ToolsListObserved, Timestamp(at + 1))
                .server(server)
                .connection(conn)
                .tools(tools),
        )
        .expect("publish tools/list");
}

fn status(hub: &Hub, session: &str, server: &str) -> DisplayStatus {
    hub.snapshot(session)
        .and_then(|h| h.current().and_then(|a| a.server(server)).map(|r| r.status))
        .expect("row")
}

#[tokio::test]
async fn given_two_agents_in_one_task_when_one_connects_then_evidence_never_leaks_to_the_other() {
    let hub = hub();
    let a = hub
        .begin_attempt(request(
            "session-a",
            Trigger::SessionNew,
            vec![http("kandev", ServerSource::Host)],
        ))
        .expect("begin a");
    let b = hub
        .begin_attempt(request(
            "session-b",
            Trigger::SessionNew,
            vec![http("kandev", ServerSource::Host)],
        ))
        .expect("begin b");
    deliver_all(&a, 10);
    deliver_all(&b, 10);
    connect_and_list(&a, "kandev", "conn-a", 20, 3);
    hub.flush().await;

    assert_eq!(status(&hub, "session-a", "kandev"), DisplayStatus::Active);
    assert_eq!(
        status(&hub, "session-b", "kandev"),
        DisplayStatus::Delivered
    );
    let hb = hub.snapshot("session-b").expect("b");
    assert_eq!(hb.task_id, "task-1");
    assert!(
        hb.current()
            .expect("current")
            .server("kandev")
            .expect("row")
            .connection_id
            .is_none()
    );
    assert_ne!(a.attempt_id, b.attempt_id);
}

#[tokio::test]
async fn given_active_when_reset_then_new_attempt_is_delivered_and_old_is_history_only() {
    let hub = hub();
    let first = hub
        .begin_attempt(request(
            "s",
            Trigger::SessionNew,
            vec![http("kandev", ServerSource::Host)],
        ))
        .expect("begin");
    deliver_all(&first, 10);
    connect_and_list(&first, "kandev", "c1", 20, 4);
    hub.flush().await;
    assert_eq!(status(&hub, "s", "kandev"), DisplayStatus::Active);

    let reset = hub
        .begin_attempt(request(
            "s",
            Trigger::SessionReset,
            vec![http("kandev", ServerSource::Host)],
        ))
        .expect("reset");
    // The old attempt's sink is rejected at once, before anything is queued.
    assert!(!first.sink.is_current());
    assert_eq!(
        first.sink.publish(
            Evidence::new(EvidenceKind::ToolsListObserved, Timestamp(30)).server("kandev")
        ),
        Err(PublishError::Superseded)
    );
    // Right after the reset, the new attempt shows no Active status carried over.
    assert_eq!(status(&hub, "s", "kandev"), DisplayStatus::Unknown);
    deliver_all(&reset, 40);
    hub.flush().await;

    let history = hub.snapshot("s").expect("history");
    assert_eq!(history.attempts.len(), 2);
    assert_eq!(
        history.current_attempt_id.as_deref(),
        Some(reset.attempt_id.as_str())
    );
    let current = history.current().expect("current");
    let row = current.server("kandev").expect("row");
    assert_eq!(row.status, DisplayStatus::Delivered);
    assert_eq!(project_row(row).label, "Delivered · connection unverified");
    let old = history.attempt(&first.attempt_id).expect("old kept");
    assert!(old.is_superseded());
    assert_eq!(
        old.server("kandev").expect("row").status,
        DisplayStatus::Active
    );
    assert!(
        old.evidence
            .iter()
            .any(|e| e.kind == EvidenceKind::AttemptSuperseded)
    );
}

#[tokio::test]
async fn given_a_delivered_third_party_server_when_nothing_is_observed_then_it_stays_unverified() {
    let hub = hub();
    let handle = hub
        .begin_attempt(request(
            "s",
            Trigger::SessionNew,
            vec![http("github", ServerSource::Profile)],
        ))
        .expect("begin");
    deliver_all(&handle, 10);
    handle
        .sink
        .publish(Evidence::new(EvidenceKind::SessionAccepted, Timestamp(11)).acp_session("acp-123"))
        .expect("accepted");
    hub.flush().await;

    let history = hub.snapshot("s").expect("history");
    let attempt = history.current().expect("current");
    assert_eq!(attempt.accepted_at, Some(Timestamp(11)));
    assert_eq!(attempt.acp_session_id.as_deref(), Some("acp-123"));
    let row = attempt.server("github").expect("row");
    assert_eq!(row.status, DisplayStatus::Delivered);
    assert_eq!(row.stages.delivered.state, StageState::Yes);
    assert_eq!(row.stages.initialized.state, StageState::Unknown);
    assert_eq!(row.stages.tools_listed.state, StageState::Unknown);
    assert!(attempt.report_error.is_none());
}

#[tokio::test]
async fn given_two_servers_when_the_agent_refuses_one_by_name_then_only_that_row_fails() {
    let hub = hub();
    let handle = hub
        .begin_attempt(request(
            "s",
            Trigger::SessionNew,
            vec![http("good", ServerSource::Profile), stdio("bad")],
        ))
        .expect("begin");
    deliver_all(&handle, 10);
    handle
        .sink
        .publish(
            Evidence::new(EvidenceKind::ExplicitError, Timestamp(12))
                .server("bad")
                .reason(
                    ReasonCode::CommandNotFound,
                    Some("spawn mcp-server-time: not found".into()),
                ),
        )
        .expect("publish");
    hub.flush().await;

    let history = hub.snapshot("s").expect("history");
    let attempt = history.current().expect("current");
    assert_eq!(
        attempt.server("good").expect("good").status,
        DisplayStatus::Delivered
    );
    let bad = attempt.server("bad").expect("bad");
    assert_eq!(bad.status, DisplayStatus::Failed);
    assert_eq!(bad.reason_code, Some(ReasonCode::CommandNotFound));
    assert!(attempt.report_error.is_none());
}

#[tokio::test]
async fn given_an_unscoped_session_error_then_it_is_report_level_and_no_row_fails() {
    let hub = hub();
    let handle = hub
        .begin_attempt(request(
            "s",
            Trigger::SessionNew,
            vec![http("one", ServerSource::Profile), stdio("two")],
        ))
        .expect("begin");
    deliver_all(&handle, 10);
    handle
        .sink
        .publish(
            Evidence::new(EvidenceKind::ExplicitError, Timestamp(12)).reason(
                ReasonCode::SessionNewFailed,
                Some("Internal error: rate limited".into()),
            ),
        )
        .expect("publish");
    hub.flush().await;

    let history = hub.snapshot("s").expect("history");
    let attempt = history.current().expect("current");
    let err = attempt.report_error.as_ref().expect("report error");
    assert_eq!(err.reason_code, ReasonCode::SessionNewFailed);
    for row in &attempt.servers {
        assert_eq!(row.status, DisplayStatus::Delivered, "{}", row.name);
    }
    assert!(copy_diagnostics(&history).contains("report-level error: session_new_failed"));
}

#[tokio::test]
async fn given_an_agent_without_http_then_http_is_filtered_with_its_reason_and_stdio_passes() {
    let hub = hub();
    let mut req = request(
        "s",
        Trigger::SessionNew,
        vec![
            http("remote", ServerSource::Profile),
            stdio("local"),
            stdio("local"),
        ],
    );
    req.capabilities.http = Some(false);
    let handle = hub.begin_attempt(req).expect("begin");
    let decisions: Vec<_> = handle
        .plan
        .servers
        .iter()
        .map(|p| p.decision.kind())
        .collect();
    assert_eq!(
        decisions,
        [
            DecisionKind::Filter,
            DecisionKind::Deliver,
            DecisionKind::Filter
        ]
    );
    let history = hub.snapshot("s").expect("history");
    let attempt = history.current().expect("current");
    assert_eq!(attempt.servers.len(), 3);
    assert_eq!(
        attempt.servers[0].reason_code,
        Some(ReasonCode::HttpUnsupported)
    );
    assert_eq!(attempt.servers[0].status, DisplayStatus::Filtered);
    assert_eq!(
        attempt.servers[2].reason_code,
        Some(ReasonCode::DuplicateName)
    );
    // configured ×3, filtered ×2
    let kinds: Vec<_> = attempt.evidence.iter().map(|e| e.kind.clone()).collect();
    assert_eq!(
        kinds
            .iter()
            .filter(|k| **k == EvidenceKind::Configured)
            .count(),
        3
    );
    assert_eq!(
        kinds
            .iter()
            .filter(|k| **k == EvidenceKind::Filtered)
            .count(),
        2
    );
}

#[test]
fn given_no_plugin_for_a_kind_then_every_server_is_unavailable_with_no_observer_or_no_strategy() {
    let hub = hub();
    for (kind, harness, reason) in [
        ("mystery-acp", DriveMode::Acp, ReasonCode::NoObserver),
        ("gemini", DriveMode::Passthrough, ReasonCode::NoStrategy),
    ] {
        let session = format!("s-{kind}");
        let req = AttemptRequest::new(
            tether_core::Owner {
                task: "t".into(),
                session: (&session).into(),
                execution: "e".into(),
            },
            kind,
            harness,
            Trigger::PassthroughStart,
            vec![stdio("a"), http("b", ServerSource::Host)],
        );
        let handle = hub.begin_attempt(req).expect("begin");
        assert_eq!(handle.plan.delivered().count(), 0);
        let history = hub.snapshot(&session).expect("history");
        for row in &history.current().expect("current").servers {
            assert_eq!(row.status, DisplayStatus::Unavailable);
            assert_eq!(row.reason_code.as_ref(), Some(&reason));
        }
    }
}

#[test]
fn given_a_plugin_that_skips_or_panics_then_the_core_records_observer_omitted() {
    let hub = hub();
    let req = |servers| {
        AttemptRequest::new(
            tether_core::Owner {
                task: "t".into(),
                session: "s".into(),
                execution: "e".into(),
            },
            "forgetful-agent",
            DriveMode::Passthrough,
            Trigger::PassthroughStart,
            servers,
        )
    };
    let handle = hub
        .begin_attempt(req(vec![stdio("kept"), stdio("forgotten")]))
        .expect("begin");
    assert_eq!(
        handle.plan.servers[0].decision.kind(),
        DecisionKind::Deliver
    );
    assert!(matches!(
        &handle.plan.servers[1].decision,
        Decision::Unavailable {
            reason_code: ReasonCode::ObserverOmitted,
            ..
        }
    ));

    let handle = hub
        .begin_attempt(req(vec![stdio("boom"), stdio("other")]))
        .expect("begin");
    assert!(handle.plan.servers.iter().all(|p| matches!(
        &p.decision,
        Decision::Unavailable {
            reason_code: ReasonCode::ObserverOmitted,
            ..
        }
    )));
}

#[test]
fn given_a_plugin_choosing_a_transport_the_server_lacks_then_it_is_observer_omitted() {
    // Forgetful always answers stdio; an http-only server cannot take it.
    let hub = hub();
    let req = AttemptRequest::new(
        tether_core::Owner {
            task: "t".into(),
            session: "s".into(),
            execution: "e".into(),
        },
        "forgetful-agent",
        DriveMode::Passthrough,
        Trigger::PassthroughStart,
        vec![http("remote", ServerSource::Profile)],
    );
    let handle = hub.begin_attempt(req).expect("begin");
    assert!(matches!(
        &handle.plan.servers[0].decision,
        Decision::Unavailable {
            reason_code: ReasonCode::ObserverOmitted,
            ..
        }
    ));
}

#[tokio::test]
async fn given_a_closed_connection_when_a_new_one_lists_then_current_evidence_is_restored() {
    let hub = hub();
    let handle = hub
        .begin_attempt(request(
            "s",
            Trigger::SessionNew,
            vec![http("kandev", ServerSource::Host)],
        ))
        .expect("begin");
    deliver_all(&handle, 10);
    connect_and_list(&handle, "kandev", "c1", 20, 2);
    // rmcp can report one close twice: the duplicate changes nothing.
    for _ in 0..2 {
        handle
            .sink
            .publish(
                Evidence::new(EvidenceKind::ConnectionClosed, Timestamp(30))
                    .server("kandev")
                    .connection("c1"),
            )
            .expect("close");
    }
    hub.flush().await;
    let closed = hub.snapshot("s").expect("h");
    let row = closed
        .current()
        .expect("c")
        .server("kandev")
        .expect("row")
        .clone();
    assert_eq!(row.connection_id.as_deref(), Some("c1"));
    assert_eq!(row.connections[0].closed_at, Some(Timestamp(30)));
    assert_eq!(
        closed
            .current()
            .expect("c")
            .evidence
            .iter()
            .filter(|e| e.kind == EvidenceKind::ConnectionClosed)
            .count(),
        1
    );

    connect_and_list(&handle, "kandev", "c2", 40, 5);
    hub.flush().await;
    let history = hub.snapshot("s").expect("h");
    let row = history.current().expect("c").server("kandev").expect("row");
    assert_eq!(row.connection_id.as_deref(), Some("c2"));
    assert_eq!(row.connections.last().expect("c2").closed_at, None);
    assert_eq!(row.tool_count, Some(5));
    assert_eq!(row.status, DisplayStatus::Active);
    assert_eq!(
        row.client.as_ref().map(|c| c.name.as_str()),
        Some("claude-code")
    );
}

#[tokio::test]
async fn given_a_full_queue_then_publishing_never_blocks_and_drops_are_counted_and_repaired() {
    let hub = {
        let mut registry = Registry::empty();
        registry
            .add(Arc::new(TestAcp), PluginSource::Static)
            .expect("add");
        Hub::with_config(
            registry,
            HubConfig {
                queue_capacity: 4,
                batch_limit: 4,
                ..HubConfig::default()
            },
        )
    };
    let handle = hub
        .begin_attempt(request(
            "s",
            Trigger::SessionNew,
            vec![http("kandev", ServerSource::Host)],
        ))
        .expect("begin");
    let mut full = 0u32;
    for i in 0..10_000u64 {
        match handle.sink.publish(
            Evidence::new(EvidenceKind::ToolCallObserved, Timestamp(100 + i))
                .server("kandev")
                .connection("c")
                .tool_call("echo", true),
        ) {
            Ok(()) => {}
            Err(PublishError::Full) => full += 1,
            Err(other) => panic!("unexpected {other}"),
        }
    }
    assert!(full > 0, "a 4-slot queue must overflow under 10k publishes");
    assert_eq!(handle.sink.dropped(), full);
    // A later event repairs the display, and the drop count lands in the attempt.
    hub.flush().await;
    connect_and_list(&handle, "kandev", "c", 50_000, 1);
    hub.flush().await;
    let history = hub.snapshot("s").expect("h");
    let attempt = history.current().expect("c");
    assert_eq!(attempt.dropped_in_transit, full);
    assert!(attempt.dropped_evidence >= full);
    assert_eq!(
        attempt.server("kandev").expect("row").status,
        DisplayStatus::Active
    );
}

#[tokio::test]
async fn given_a_subscriber_then_it_sees_live_snapshots_and_removal_ends_them() {
    let hub = hub();
    let handle = hub
        .begin_attempt(request(
            "s",
            Trigger::SessionNew,
            vec![http("kandev", ServerSource::Host)],
        ))
        .expect("begin");
    let mut rx = hub.subscribe("s").expect("subscribe");
    assert!(hub.subscribe("nope").is_err());
    deliver_all(&handle, 10);
    connect_and_list(&handle, "kandev", "c", 20, 3);
    let deadline = std::time::Duration::from_secs(5);
    tokio::time::timeout(deadline, async {
        loop {
            rx.changed().await.expect("open");
            let latest = rx.borrow_and_update().clone();
            if latest
                .current()
                .and_then(|a| a.server("kandev"))
                .map(|r| r.status)
                == Some(DisplayStatus::Active)
            {
                break;
            }
        }
    })
    .await
    .expect("active arrives live");

    let removed = hub.remove("s").expect("removed");
    assert_eq!(removed.session_id, "s");
    assert!(hub.snapshot("s").is_none());
    assert_eq!(
        handle
            .sink
            .publish(Evidence::new(EvidenceKind::Delivered, Timestamp(1)).server("kandev")),
        Err(PublishError::Superseded)
    );
    tokio::time::timeout(deadline, async { while rx.changed().await.is_ok() {} })
        .await
        .expect("subscription ends");
}

#[tokio::test]
async fn given_evidence_naming_no_configured_server_then_it_is_counted_shown_and_no_row_changes() {
    let hub = hub();
    let handle = hub
        .begin_attempt(request("s", Trigger::SessionNew, vec![stdio("notes")]))
        .expect("begin");
    deliver_all(&handle, 2);
    // The agent reports a server of its own configuration, twice.
    for at in [3, 4] {
        handle
            .sink
            .publish(
                Evidence::new(EvidenceKind::AgentReported, Timestamp(at))
                    .server("from-the-users-own-config")
                    .reported("connected"),
            )
            .expect("publish");
    }
    hub.flush().await;
    let history = hub.snapshot("s").expect("history");
    let attempt = history.current().expect("current");
    assert_eq!(attempt.unattributed_evidence, 2);
    assert_eq!(hub.evidence_unattributed(), 2);
    assert_eq!(hub.evidence_unattributed_counter().get(), 2);
    assert_eq!(status(&hub, "s", "notes"), DisplayStatus::Delivered);
    assert!(
        attempt
            .evidence
            .iter()
            .all(|e| e.server.as_deref().is_none_or(|s| s == "notes")),
        "the timeline keeps only evidence about its rows"
    );
    assert!(
        copy_diagnostics(&history).contains("2 naming no row"),
        "{}",
        copy_diagnostics(&history)
    );
}

#[tokio::test]
async fn given_two_names_that_sanitize_alike_then_each_row_is_shown_apart_and_keeps_its_evidence() {
    let hub = hub();
    // Both names are token-shaped, so both are shown as `[redacted]`.
    let a = "ghp_aaaaaaaaaaaaaaaa1";
    let b = "ghp_bbbbbbbbbbbbbbbb2";
    let handle = hub
        .begin_attempt(request("s", Trigger::SessionNew, vec![stdio(a), stdio(b)]))
        .expect("begin");
    deliver_all(&handle, 2);
    connect_and_list(&handle, b, "c1", 3, 4);
    hub.flush().await;
    let history = hub.snapshot("s").expect("history");
    let attempt = history.current().expect("current");
    let names: Vec<&str> = attempt.servers.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["[redacted]", "[redacted]~2"]);
    assert_eq!(attempt.servers[0].status, DisplayStatus::Delivered);
    assert_eq!(attempt.servers[1].status, DisplayStatus::Active);
    assert_eq!(attempt.unattributed_evidence, 0);
    let json = serde_json::to_string(&history).expect("json");
    assert!(!json.contains("ghp_"), "{json}");
}

#[tokio::test]
async fn given_a_failure_then_the_row_says_who_vouched_for_it() {
    let hub = hub();
    let handle = hub
        .begin_attempt(request(
            "s",
            Trigger::SessionNew,
            vec![stdio("reported"), stdio("erred")],
        ))
        .expect("begin");
    deliver_all(&handle, 2);
    handle
        .sink
        .publish(
            Evidence::new(EvidenceKind::AgentReported, Timestamp(3))
                .server("reported")
                .reported("failed"),
        )
        .expect("publish");
    handle
        .sink
        .publish(
            Evidence::new(EvidenceKind::ExplicitError, Timestamp(3))
                .server("erred")
                .reason(ReasonCode::ProtocolError, None),
        )
        .expect("publish");
    hub.flush().await;
    let history = hub.snapshot("s").expect("history");
    let attempt = history.current().expect("current");
    let reported = attempt.server("reported").expect("row");
    let erred = attempt.server("erred").expect("row");
    assert_eq!(reported.status, DisplayStatus::Failed);
    assert_eq!(erred.status, DisplayStatus::Failed);
    assert_eq!(tether_words::display::vouched_by(reported), "agent report");
    assert_eq!(
        tether_words::display::vouched_by(erred),
        "an explicit error naming it"
    );
}

#[tokio::test]
async fn given_the_agent_exited_before_contact_then_delivered_rows_say_so_everywhere_they_are_shown()
 {
    let hub = hub();
    let handle = hub
        .begin_attempt(request(
            "s",
            Trigger::SessionNew,
            vec![stdio("notes"), stdio("time")],
        ))
        .expect("begin");
    deliver_all(&handle, 2);
    connect_and_list(&handle, "time", "c1", 3, 2);
    let mut exit = Evidence::new(EvidenceKind::AgentExited, Timestamp(9));
    exit.summary = Some("exit status 41 after 1.4 s".into());
    handle.sink.publish(exit).expect("publish");
    hub.flush().await;
    let history = hub.snapshot("s").expect("history");
    let attempt = history.current().expect("current");
    let notes = attempt.server("notes").expect("row");
    let time = attempt.server("time").expect("row");
    assert_eq!(
        notes.status,
        DisplayStatus::Delivered,
        "the exit changes no status"
    );
    assert_eq!(
        tether_words::display::project_row_in(attempt, notes).label,
        "Delivered · to a process that exited (exit status 41 after 1.4 s)"
    );
    // A row with contact keeps its own label.
    assert_eq!(
        tether_words::display::project_row_in(attempt, time).label,
        "Active · 2 tools"
    );
    assert!(copy_diagnostics(&history).contains("to a process that exited (exit status 41"));
}

/// GIVEN a live session WHEN the host releases it THEN it leaves the hub's
/// memory, its sinks stop (superseded), and releasing again is a no-op; and
/// a row the harness names arrives through its sink like any evidence.
#[tokio::test]
async fn given_a_released_session_then_it_leaves_memory_and_its_sinks_stop() {
    let hub = hub();
    let handle = hub
        .begin_attempt_at(
            request("s-release", Trigger::SessionNew, vec![stdio("a")]),
            Timestamp(1),
        )
        .expect("begin");
    handle
        .sink
        .add_row("named-by-harness", None, Timestamp(2))
        .expect("queued");
    hub.flush().await;
    let history = hub.snapshot("s-release").expect("live");
    let row = history
        .current()
        .and_then(|a| a.server("named-by-harness"))
        .expect("the harness's row");
    assert_eq!(row.source, ServerSource::Harness);
    assert!(hub.release("s-release"));
    assert!(hub.snapshot("s-release").is_none());
    assert!(!hub.release("s-release"));
    assert_eq!(
        handle
            .sink
            .publish(Evidence::new(EvidenceKind::Delivered, Timestamp(3)).server("a")),
        Err(PublishError::Superseded)
    );
}
