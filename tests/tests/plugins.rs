//! The first-party plugins, as a host sees them through the static registry.

use tether_core::registry::{PluginSource, Registry};
use tether_core::vocab::{
    DecisionKind, DisplayStatus, ReasonCode, ServerSource, Transport, Trigger,
};
use tether_core::{AgentCapabilities, DriveMode, Endpoint, ServerSpec};
use tether_hub::{AttemptRequest, Hub};
use tether_tests as _;

fn servers() -> Vec<ServerSpec> {
    vec![
        ServerSpec::new(
            "local",
            ServerSource::Profile,
            Endpoint::Stdio {
                command: "mcp-server-time".into(),
                args: vec![],
                env: vec![],
                cwd: None,
            },
        ),
        ServerSpec::new(
            "remote",
            ServerSource::Profile,
            Endpoint::Http {
                url: "https://mcp.example.com/mcp".into(),
                headers: vec![],
            },
        ),
        ServerSpec::new(
            "legacy",
            ServerSource::Profile,
            Endpoint::Sse {
                url: "https://mcp.example.com/sse".into(),
                headers: vec![],
            },
        ),
    ]
}

fn decisions(
    hub: &Hub,
    kind: &str,
    harness: DriveMode,
    caps: AgentCapabilities,
) -> Vec<(DecisionKind, Option<ReasonCode>)> {
    let mut req = AttemptRequest::new(
        tether_core::Owner {
            task: "t".into(),
            session: kind.into(),
            execution: "e".into(),
        },
        kind,
        harness,
        Trigger::Probe,
        servers(),
    );
    req.capabilities = caps;
    hub.begin_attempt(req).expect("begin");
    hub.snapshot(kind)
        .expect("history")
        .current()
        .expect("current")
        .servers
        .iter()
        .map(|r| (r.decision, r.reason_code.clone()))
        .collect()
}

#[test]
fn every_first_party_plugin_registers_through_inventory() {
    let registry = Registry::with_static().expect("static registry");
    let names: Vec<_> = registry
        .plugins()
        .iter()
        .map(|p| p.descriptor.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "acp-structured",
            "passthrough-claude",
            "passthrough-codex",
            "passthrough-copilot",
            "passthrough-cursor",
            "passthrough-gemini",
            "passthrough-opencode",
            "passthrough-qwen"
        ]
    );
    assert!(
        registry
            .plugins()
            .iter()
            .all(|p| p.source == PluginSource::Static)
    );
    assert!(Registry::select(&["passthrough-codex"]).is_ok());
    let err = Registry::select(&["nope"]).expect_err("unknown plugin");
    assert!(err.to_string().contains("acp-structured"), "{err}");
}

#[test]
fn given_each_agent_kind_then_decisions_follow_what_it_can_take() {
    let hub = Hub::new(Registry::with_static().expect("registry"));
    let deliver = (DecisionKind::Deliver, None);

    // Any ACP agent: stdio always; http and sse only when advertised.
    let acp = decisions(
        &hub,
        "opencode",
        DriveMode::Acp,
        AgentCapabilities::new(Some(true), None, None),
    );
    assert_eq!(
        acp,
        [
            deliver.clone(),
            deliver.clone(),
            (DecisionKind::Filter, Some(ReasonCode::SseUnsupported))
        ]
    );

    let claude = decisions(
        &hub,
        "claude",
        DriveMode::Passthrough,
        AgentCapabilities::default(),
    );
    assert_eq!(claude, [deliver.clone(), deliver.clone(), deliver.clone()]);

    let codex = decisions(
        &hub,
        "codex",
        DriveMode::Passthrough,
        AgentCapabilities::default(),
    );
    assert_eq!(
        codex,
        [
            deliver.clone(),
            deliver.clone(),
            (DecisionKind::Filter, Some(ReasonCode::SseUnsupported))
        ]
    );
}

#[test]
fn given_a_passthrough_kind_without_a_plugin_then_every_server_is_unavailable_no_strategy() {
    // The seed's nil-strategy scenario: a kind with no strategy must not silently get nothing.
    let hub = Hub::new(Registry::with_static().expect("registry"));
    let got = decisions(
        &hub,
        "aider",
        DriveMode::Passthrough,
        AgentCapabilities::default(),
    );
    assert_eq!(got.len(), 3);
    for (kind, reason) in got {
        assert_eq!(kind, DecisionKind::Unavailable);
        assert_eq!(reason, Some(ReasonCode::NoStrategy));
    }
    let history = hub.snapshot("aider").expect("history");
    for row in &history.current().expect("current").servers {
        assert_eq!(row.status, DisplayStatus::Unavailable);
        assert_ne!(row.transport, Transport::Other("none".into()));
    }
}
