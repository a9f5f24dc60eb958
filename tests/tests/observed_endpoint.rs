//! The observed endpoint with real rmcp clients over streamable HTTP, legacy
//! SSE and the stdio bridge.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use rmcp::service::RunningService;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use tether_core::history::AttachmentAttempt;
use tether_core::hub::{AttemptHandle, AttemptRequest, Hub, HubConfig};
use tether_core::model::{Evidence, Timestamp};
use tether_core::registry::{PluginSource, Registry};
use tether_core::vocab::{DisplayStatus, EvidenceKind, ServerSource, Transport, Trigger};
use tether_core::{
    Decision, Delivery, DriveMode, Endpoint, PlanContext, PluginDescriptor, ServerSpec,
    TransportObserver,
};
use tether_kandev_endpoint::{ObservedEndpoint, SENTINEL_TOOL};
use tether_mcp_client::sse as sse_client;

/// Delivers each server over the transport named by the agent kind.
struct Pick;

impl TransportObserver for Pick {
    fn descriptor(&self) -> PluginDescriptor {
        PluginDescriptor {
            name: "pick".into(),
            agent_kinds: vec!["http".into(), "sse".into(), "stdio".into()],
            drive_mode: DriveMode::Acp,
            version: "0".into(),
        }
    }

    fn decide(&self, server: &ServerSpec, ctx: &PlanContext) -> Decision {
        let want = Transport::parse(&ctx.agent_kind);
        match server.endpoint_for(&want) {
            Some(_) => Decision::Deliver {
                transport: want,
                via: Delivery::AcpMcpServers,
            },
            None => Decision::filter(tether_core::ReasonCode::TransportUnsupported),
        }
    }
}

fn hub(queue: usize) -> Hub {
    let mut registry = Registry::empty();
    registry
        .add(Arc::new(Pick), PluginSource::Static)
        .expect("add");
    Hub::with_config(
        registry,
        HubConfig {
            queue_capacity: queue,
            batch_limit: 256,
            ..HubConfig::default()
        },
    )
}

fn bridge() -> &'static Path {
    static BRIDGE: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    BRIDGE.get_or_init(|| tether_tests::workspace_bin("tether-bridge"))
}

fn begin(hub: &Hub, endpoint: &ObservedEndpoint, session: &str, transport: &str) -> AttemptHandle {
    let spec = endpoint.server_spec(ServerSource::Sentinel, Some(bridge()));
    let req = AttemptRequest::new(
        "task",
        session,
        "exec",
        transport,
        DriveMode::Acp,
        Trigger::Probe,
        vec![spec],
    );
    let handle = hub.begin_attempt(req).expect("begin");
    endpoint.bind(handle.sink.clone());
    for (server, _) in handle.plan.delivered() {
        handle
            .sink
            .publish(
                Evidence::new(EvidenceKind::Delivered, Timestamp::now()).server(&server.spec.name),
            )
            .expect("delivered");
    }
    handle
}

fn client_named(name: &str) -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new(name, "9.9.9"),
    )
}

async fn connect(
    endpoint: &ObservedEndpoint,
    transport: &str,
    name: &str,
) -> RunningService<RoleClient, ClientConfig> {
    let client = client_named(name);
    match transport {
        "http" => client
            .serve(StreamableHttpClientTransport::from_uri(endpoint.http_url()))
            .await
            .expect("http client"),
        "sse" => {
            let t = sse_client::connect(&endpoint.sse_url(), &[], Duration::from_secs(5))
                .await
                .expect("sse transport");
            client.serve(t).await.expect("sse client")
        }
        "stdio" => {
            let Endpoint::Stdio {
                command, args, env, ..
            } = endpoint.bridge_endpoint(bridge())
            else {
                unreachable!("bridge endpoint is stdio")
            };
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args);
            for kv in env {
                cmd.env(kv.name, kv.value);
            }
            client
                .serve(TokioChildProcess::new(cmd).expect("spawn bridge"))
                .await
                .expect("stdio client")
        }
        other => panic!("unknown transport {other}"),
    }
}

async fn list_and_call(client: &RunningService<RoleClient, ClientConfig>) {
    let tools = client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, SENTINEL_TOOL);
    let mut args = serde_json::Map::new();
    args.insert("text".into(), "hello".into());
    let result = client
        .call_tool(CallToolRequestParams::new(SENTINEL_TOOL).with_arguments(args))
        .await
        .expect("tools/call");
    assert_ne!(result.is_error, Some(true));
}

/// Polls the hub until `check` holds for the current attempt, or panics after 10 s.
async fn eventually(
    hub: &Hub,
    session: &str,
    what: &str,
    check: impl Fn(&AttachmentAttempt) -> bool,
) -> AttachmentAttempt {
    for _ in 0..200 {
        hub.flush().await;
        if let Some(history) = hub.snapshot(session)
            && let Some(attempt) = history.current()
            && check(attempt)
        {
            return attempt.clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "timed out waiting for: {what}; last: {:#?}",
        hub.snapshot(session)
    );
}

async fn observed_over(transport: &str) {
    let hub = hub(4096);
    let endpoint = ObservedEndpoint::sentinel().await.expect("endpoint");
    let handle = begin(&hub, &endpoint, "s", transport);
    let client = connect(&endpoint, transport, "agent-under-test").await;
    list_and_call(&client).await;

    let attempt = eventually(&hub, "s", "active with a tool call", |a| {
        a.servers[0].last_tool_call.is_some()
    })
    .await;
    let row = &attempt.servers[0];
    assert_eq!(row.transport.as_str(), transport);
    assert_eq!(row.status, DisplayStatus::Active);
    assert_eq!(row.tool_count, Some(1));
    let client_info = row.client.as_ref().expect("client recorded");
    // The agent's own clientInfo, not the bridge's or the transport's.
    assert_eq!(client_info.name, "agent-under-test");
    assert_eq!(client_info.version.as_deref(), Some("9.9.9"));
    let call = row.last_tool_call.as_ref().expect("call");
    assert_eq!((call.tool.as_str(), call.ok), (SENTINEL_TOOL, true));
    let kinds: Vec<_> = attempt.evidence.iter().map(|e| e.kind.clone()).collect();
    for kind in [
        EvidenceKind::InitializeObserved,
        EvidenceKind::ToolsListObserved,
        EvidenceKind::ToolCallObserved,
    ] {
        assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
    }
    // No argument or result ever reaches the evidence.
    let json = serde_json::to_string(&attempt).expect("json");
    assert!(!json.contains("hello"), "tool arguments leaked: {json}");

    // The catalog of what tools/list served arrives off the request path.
    let attempt = eventually(&hub, "s", "tool catalog", |a| {
        a.servers[0].tool_catalog.is_some()
    })
    .await;
    let catalog = attempt.servers[0].tool_catalog.as_ref().expect("catalog");
    assert_eq!(catalog.method, "o200k_base:mcp-tool-json-v1");
    assert_eq!(catalog.tool_count, 1);
    assert_eq!(catalog.tools[0].name, SENTINEL_TOOL);
    assert!(catalog.tools[0].token_estimate > 10);
    assert!(catalog.tools[0].input_schema.is_some());

    client.cancel().await.expect("cancel");
    let attempt = eventually(&hub, "s", "connection closed", |a| {
        a.servers[0]
            .connections
            .iter()
            .any(|c| c.closed_at.is_some())
    })
    .await;
    let closes = attempt
        .evidence
        .iter()
        .filter(|e| e.kind == EvidenceKind::ConnectionClosed)
        .count();
    assert_eq!(closes, 1, "one close per connection");
    drop(handle);
    endpoint.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_a_streamable_http_client_then_the_endpoint_observes_it_to_active() {
    observed_over("http").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_a_legacy_sse_client_then_the_endpoint_observes_it_to_active() {
    observed_over("sse").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_a_stdio_client_through_the_bridge_then_its_own_client_info_is_observed() {
    observed_over("stdio").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_a_discover_mode_client_then_first_contact_is_observed() {
    let hub = hub(4096);
    let endpoint = ObservedEndpoint::sentinel().await.expect("endpoint");
    let _handle = begin(&hub, &endpoint, "s", "http");
    let client = client_named("discover-client")
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(endpoint.http_url()),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("discover client");
    let tools = client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 1);
    let attempt = eventually(&hub, "s", "discover observed and tools listed", |a| {
        a.servers[0].status == DisplayStatus::Active
            && a.evidence
                .iter()
                .any(|e| e.kind == EvidenceKind::InitializeObserved)
    })
    .await;
    let init = attempt
        .evidence
        .iter()
        .find(|e| e.kind == EvidenceKind::InitializeObserved)
        .expect("first contact");
    assert_eq!(
        init.client.as_ref().map(|c| c.name.as_str()),
        Some("discover-client")
    );
    assert_eq!(
        init.client
            .as_ref()
            .and_then(|c| c.protocol_version.as_deref()),
        Some("2026-07-28")
    );
    client.cancel().await.expect("cancel");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_two_sessions_with_separate_endpoints_then_evidence_never_mixes() {
    let hub = hub(4096);
    let a = ObservedEndpoint::sentinel().await.expect("a");
    let b = ObservedEndpoint::sentinel().await.expect("b");
    let _ha = begin(&hub, &a, "session-a", "http");
    let _hb = begin(&hub, &b, "session-b", "sse");
    let client = connect(&a, "http", "only-a").await;
    list_and_call(&client).await;
    eventually(&hub, "session-a", "a active", |x| {
        x.servers[0].last_tool_call.is_some()
    })
    .await;
    let other = hub
        .snapshot("session-b")
        .expect("b")
        .current()
        .expect("current")
        .clone();
    assert_eq!(other.servers[0].status, DisplayStatus::Delivered);
    assert!(other.servers[0].connections.is_empty());
    assert!(
        !other
            .evidence
            .iter()
            .any(|e| e.kind == EvidenceKind::InitializeObserved)
    );
    client.cancel().await.expect("cancel");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_a_closed_connection_when_the_agent_reconnects_then_current_evidence_is_restored() {
    let hub = hub(4096);
    let endpoint = ObservedEndpoint::sentinel().await.expect("endpoint");
    let _handle = begin(&hub, &endpoint, "s", "stdio");
    let first = connect(&endpoint, "stdio", "agent").await;
    first.list_all_tools().await.expect("list");
    first.cancel().await.expect("cancel");
    let closed = eventually(&hub, "s", "first closed", |a| {
        a.servers[0]
            .connections
            .first()
            .is_some_and(|c| c.closed_at.is_some())
    })
    .await;
    let first_id = closed.servers[0].connection_id.clone().expect("id");

    let second = connect(&endpoint, "stdio", "agent").await;
    second.list_all_tools().await.expect("list");
    let restored = eventually(&hub, "s", "second connection current", |a| {
        a.servers[0]
            .connection_id
            .as_ref()
            .is_some_and(|id| *id != first_id)
            && a.servers[0]
                .connections
                .last()
                .is_some_and(|c| c.closed_at.is_none())
    })
    .await;
    assert_eq!(restored.servers[0].status, DisplayStatus::Active);
    assert_eq!(restored.servers[0].connections.len(), 2);
    second.cancel().await.expect("cancel");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_a_full_sink_when_many_connections_flood_then_no_mcp_response_is_lost() {
    // A one-slot queue: nearly every observation is dropped, and none may block MCP.
    let hub = hub(1);
    let endpoint = Arc::new(ObservedEndpoint::sentinel().await.expect("endpoint"));
    let handle = begin(&hub, &endpoint, "s", "http");
    let mut tasks = Vec::new();
    for i in 0..24 {
        let endpoint = Arc::clone(&endpoint);
        tasks.push(tokio::spawn(async move {
            let transport = if i % 2 == 0 { "http" } else { "sse" };
            let client = connect(&endpoint, transport, &format!("flood-{i}")).await;
            for _ in 0..5 {
                list_and_call(&client).await;
            }
            client.cancel().await.expect("cancel");
        }));
    }
    for t in tasks {
        tokio::time::timeout(Duration::from_secs(60), t)
            .await
            .expect("flood finishes in time")
            .expect("every response arrived");
    }
    assert!(handle.sink.dropped() > 0, "the one-slot queue overflowed");
    hub.flush().await;
    let attempt = hub.snapshot("s").expect("h").current().expect("c").clone();
    assert!(attempt.dropped_evidence > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_a_wrong_bridge_token_then_the_connection_is_refused_and_nothing_is_recorded() {
    let hub = hub(4096);
    let endpoint = ObservedEndpoint::sentinel().await.expect("endpoint");
    let _handle = begin(&hub, &endpoint, "s", "stdio");
    let mut cmd = tokio::process::Command::new(bridge());
    cmd.args(["--connect", &endpoint.bridge_addr().to_string()])
        .env("TETHER_BRIDGE_TOKEN", "not-the-token");
    let result = tokio::time::timeout(
        Duration::from_secs(10),
        client_named("intruder").serve(TokioChildProcess::new(cmd).expect("spawn")),
    )
    .await
    .expect("refusal is prompt");
    assert!(result.is_err(), "a wrong token must not get an MCP session");
    hub.flush().await;
    let attempt = hub.snapshot("s").expect("h").current().expect("c").clone();
    assert!(attempt.servers[0].connections.is_empty());
}
