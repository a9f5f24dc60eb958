//! The public JSON contract: exact field names, round trips, and newer data.

use serde_json::{Value, json};
use tether_core::history::AttachmentHistory;
use tether_core::model::{ClientInfo, Evidence, Timestamp};
use tether_core::registry::Registry;
use tether_core::vocab::{DisplayStatus, EvidenceKind, ReasonCode, ServerSource, Trigger};
use tether_core::{AgentCapabilities, DriveMode, Endpoint, ServerSpec};
use tether_hub::{AttemptRequest, Hub};
use tether_tests::samples_dir;

fn keys(v: &Value) -> Vec<&str> {
    v.as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect()
}

/// A history that exercises every status, written for the schema check too.
async fn sample_history() -> AttachmentHistory {
    let hub = Hub::new(Registry::with_static().expect("registry"));
    let spec = |name: &str, endpoint| ServerSpec::new(name, ServerSource::Profile, endpoint);
    let http = |path: &str| Endpoint::Http {
        url: format!("http://127.0.0.1:9/{path}"),
        headers: vec![],
    };
    let servers = vec![
        spec("active", http("a")),
        spec("connected", http("c")),
        spec("delivered", http("d")),
        spec("failed", http("f")),
        spec(
            "filtered",
            Endpoint::Sse {
                url: "http://127.0.0.1:9/sse".into(),
                headers: vec![],
            },
        ),
    ];
    for trigger in [
        Trigger::SessionNew,
        Trigger::SessionLoad,
        Trigger::SessionReset,
        Trigger::SessionNew,
    ] {
        let mut req = AttemptRequest::new(
            tether_core::Owner {
                task: "task".into(),
                session: "session".into(),
                execution: "exec".into(),
            },
            "claude-agent",
            DriveMode::Acp,
            trigger,
            servers.clone(),
        );
        req.capabilities = AgentCapabilities::new(Some(true), Some(false), Some(true));
        let handle = hub.begin_attempt(req).expect("begin");
        let sink = &handle.sink;
        for (p, _) in handle.plan.delivered() {
            sink.publish(
                Evidence::new(EvidenceKind::Delivered, Timestamp(10)).server(&p.spec.name),
            )
            .expect("p");
        }
        sink.publish(
            Evidence::new(EvidenceKind::SessionAccepted, Timestamp(11)).acp_session("acp-1"),
        )
        .expect("p");
        let client = ClientInfo {
            name: "claude-code".into(),
            version: Some("2.0".into()),
            protocol_version: Some("2025-06-18".into()),
        };
        for name in ["active", "connected"] {
            sink.publish(
                Evidence::new(EvidenceKind::InitializeObserved, Timestamp(12))
                    .server(name)
                    .connection("c1")
                    .client(client.clone()),
            )
            .expect("p");
        }
        sink.publish(
            Evidence::new(EvidenceKind::ToolsListObserved, Timestamp(13))
                .server("active")
                .connection("c1")
                .tools(3),
        )
        .expect("p");
        sink.publish(
            Evidence::new(EvidenceKind::ToolCallObserved, Timestamp(14))
                .server("active")
                .connection("c1")
                .tool_call("echo", true),
        )
        .expect("p");
        sink.publish(
            Evidence::new(EvidenceKind::ExplicitError, Timestamp(15))
                .server("failed")
                .reason(ReasonCode::AuthRequired, Some("401 from server".into())),
        )
        .expect("p");
        hub.flush().await;
    }
    hub.snapshot("session").expect("history")
}

#[tokio::test]
async fn field_names_are_exactly_the_contract() {
    let history = sample_history().await;
    let v = serde_json::to_value(&history).expect("json");
    for key in [
        "schema_version",
        "revision",
        "current_attempt_id",
        "attempts",
    ] {
        assert!(keys(&v).contains(&key), "history lacks {key}");
    }
    let attempt = &v["attempts"][2];
    for key in [
        "attempt_id",
        "trigger",
        "evidence",
        "dropped_evidence",
        "servers",
        "report_error",
        "task_id",
        "session_id",
        "execution_id",
        "agent_kind",
        "agent_id",
        "agent_profile_id",
        "acp_session_id",
        "started_at",
        "updated_at",
        "superseded_at",
        "accepted_at",
    ] {
        assert!(keys(attempt).contains(&key), "attempt lacks {key}");
    }
    let row = &attempt["servers"][0];
    for key in [
        "name",
        "source",
        "transport",
        "target",
        "status",
        "reason_code",
        "summary",
        "connection_id",
        "tool_count",
        "stages",
        "endpoint_test",
    ] {
        assert!(keys(row).contains(&key), "server lacks {key}");
    }
    let stages = keys(&row["stages"]);
    assert_eq!(stages.len(), 10);
    for key in [
        "configured",
        "enabled",
        "delivered",
        "authenticated",
        "initialized",
        "tools_listed",
        "schema_accepted",
        "callable",
        "current_thread",
        "model_visible",
    ] {
        assert!(stages.contains(&key), "stages lack {key}");
    }
    assert_eq!(row["stages"]["tools_listed"]["state"], "yes");
    assert_eq!(row["stages"]["tools_listed"]["provenance"], "session_event");
    for ev in attempt["evidence"].as_array().expect("array") {
        for key in [
            "kind",
            "at",
            "server",
            "connection_id",
            "reason_code",
            "summary",
            "tool_count",
            "client",
            "provenance",
        ] {
            assert!(keys(ev).contains(&key), "evidence lacks {key}: {ev}");
        }
    }
    assert_eq!(v["attempts"].as_array().expect("attempts").len(), 3);
    let statuses: Vec<_> = attempt["servers"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| r["status"].as_str().expect("s").to_owned())
        .collect();
    assert_eq!(
        statuses,
        ["active", "connected", "delivered", "failed", "filtered"]
    );
    assert_eq!(attempt["trigger"], "session_new");
    assert_eq!(v["attempts"][0]["trigger"], "session_load");

    // Round trip: what is stored reads back identical.
    let text = serde_json::to_string_pretty(&history).expect("json");
    let back: AttachmentHistory = serde_json::from_str(&text).expect("parse");
    assert_eq!(back, history);
    std::fs::write(samples_dir().join("history.json"), &text).expect("write sample");
    let current = serde_json::to_string_pretty(history.current().expect("current")).expect("json");
    std::fs::write(samples_dir().join("attempt.json"), current).expect("write sample");
}

#[test]
fn newer_documents_load_conservatively_and_keep_what_they_do_not_know() {
    let doc = json!({
        "schema_version": 7,
        "task_id": "t", "session_id": "s", "current_attempt_id": "a1",
        "future_top_level": {"x": 1},
        "attempts": [{
            "attempt_id": "a1", "task_id": "t", "session_id": "s", "execution_id": "e",
            "agent_kind": "k", "trigger": "session_teleport",
            "started_at": 1, "updated_at": 2,
            "evidence": [{"kind": "quantum_observed", "at": 3, "provenance": "oracle",
                          "reason_code": "flux_capacitor_low"}],
            "dropped_evidence": 0,
            "servers": [{
                "name": "x", "source": "satellite", "transport": "websocket", "target": "ws://h",
                "decision": "teleport", "status": "hyperactive", "reason_code": "flux_capacitor_low",
                "stages": {"configured": {"state": "probably", "provenance": "oracle"}}
            }]
        }]
    });
    let history: AttachmentHistory = serde_json::from_value(doc).expect("loads conservatively");
    let attempt = history.current().expect("current");
    assert_eq!(attempt.trigger.as_str(), "session_teleport");
    assert_eq!(
        attempt.evidence[0].kind,
        EvidenceKind::Other("quantum_observed".into())
    );
    assert_eq!(
        attempt.evidence[0].reason_code,
        Some(ReasonCode::Other("flux_capacitor_low".into()))
    );
    let row = &attempt.servers[0];
    assert_eq!(row.status, DisplayStatus::Unknown);
    assert_eq!(row.transport.as_str(), "websocket");
    assert_eq!(
        row.stages.configured.state,
        tether_core::vocab::StageState::Unknown
    );
    // Unknown words survive a round trip verbatim.
    let again = serde_json::to_value(&history).expect("json");
    assert_eq!(
        again["attempts"][0]["evidence"][0]["kind"],
        "quantum_observed"
    );
    assert_eq!(
        again["attempts"][0]["servers"][0]["reason_code"],
        "flux_capacitor_low"
    );
}
