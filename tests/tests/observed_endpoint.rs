//! The observed endpoint with real rmcp clients over streamable HTTP, legacy
//! SSE and the stdio bridge, each holding the attempt's credential; and the
//! intruders that do not: no credential, another endpoint's, a superseded
//! attempt's.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use tether_core::history::AttachmentAttempt;
use tether_core::model::Evidence;
use tether_core::registry::{PluginSource, Registry};
use tether_core::vocab::{
    DisplayStatus, EvidenceKind, ReasonCode, ServerSource, Transport, Trigger,
};
use tether_core::{
    Decision, Delivery, DriveMode, Endpoint, PlanContext, PluginDescriptor, ServerSpec,
    TransportObserver,
};
use tether_hub::{AttemptHandle, AttemptRequest, Hub, HubConfig};
use tether_kandev_endpoint::{AttemptCredential, ObservedEndpoint, SENTINEL_TOOL};
use tether_mcp_client::sse as sse_client;

/// Delivers each server over the transport named by the agent kind.
struct Pick;

impl TransportObserver for Pick {
    fn descriptor(&self) -> PluginDescriptor {
        PluginDescriptor::new("pick", ["http", "sse", "stdio"], DriveMode::Acp, "0")
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

/// Begins an attempt that delivers the endpoint with a fresh credential;
/// returns its handle and the credential the agent was given.
fn begin(
    hub: &Hub,
    endpoint: &ObservedEndpoint,
    session: &str,
    transport: &str,
) -> (AttemptHandle, AttemptCredential) {
    let credential = AttemptCredential::generate();
    let spec = endpoint.server_spec(ServerSource::Sentinel, Some(bridge()), &credential);
    let req = AttemptRequest::new(
        tether_core::Owner {
            task: "task".into(),
            session: session.into(),
            execution: "exec".into(),
        },
        transport,
        DriveMode::Acp,
        Trigger::Probe,
        vec![spec],
    );
    let handle = hub.begin_attempt(req).expect("begin");
    endpoint.bind(handle.sink.clone(), credential.clone());
    for (server, _) in handle.plan.delivered() {
        handle
            .sink
            .publish(
                Evidence::new(EvidenceKind::Delivered, tether_hub::now()).server(&server.spec.name),
            )
            .expect("delivered");
    }
    (handle, credential)
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
    credential: &AttemptCredential,
) -> RunningService<RoleClient, ClientConfig> {
    try_connect(endpoint, transport, name, Some(credential))
        .await
        .unwrap_or_else(|e| panic!("{transport} client: {e}"))
}

/// A 2026-07-28 client over streamable HTTP: `server/discover`, then
/// self-contained requests, no session.
async fn stateless_client(
    endpoint: &ObservedEndpoint,
    credential: &AttemptCredential,
    name: &str,
) -> RunningService<RoleClient, ClientConfig> {
    client_named(name)
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(
                StreamableHttpClientTransportConfig::with_uri(endpoint.http_url())
                    .auth_header(credential.secret()),
            ),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("discover client")
}

/// Connects as an MCP client would, with `credential` (or none at all).
async fn try_connect(
    endpoint: &ObservedEndpoint,
    transport: &str,
    name: &str,
    credential: Option<&AttemptCredential>,
) -> Result<RunningService<RoleClient, ClientConfig>, String> {
    let client = client_named(name);
    match transport {
        "http" => {
            let mut config = StreamableHttpClientTransportConfig::with_uri(endpoint.http_url());
            if let Some(c) = credential {
                config = config.auth_header(c.secret());
            }
            client
                .serve(StreamableHttpClientTransport::from_config(config))
                .await
                .map_err(|e| e.to_string())
        }
        "sse" => {
            let headers: Vec<(String, String)> = credential
                .map(|c| vec![("Authorization".to_owned(), c.bearer())])
                .unwrap_or_default();
            let t = sse_client::connect(&endpoint.sse_url(), &headers, Duration::from_secs(5))
                .await
                .map_err(|e| e.to_string())?;
            client.serve(t).await.map_err(|e| e.to_string())
        }
        "stdio" => {
            let stale = AttemptCredential::generate();
            let Endpoint::Stdio {
                command, args, env, ..
            } = endpoint.bridge_endpoint(bridge(), credential.unwrap_or(&stale))
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
                .map_err(|e| e.to_string())
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
    let (handle, credential) = begin(&hub, &endpoint, "s", transport);
    let client = connect(&endpoint, transport, "agent-under-test", &credential).await;
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
    let (_handle, credential) = begin(&hub, &endpoint, "s", "http");
    let client = stateless_client(&endpoint, &credential, "discover-client").await;
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
    let (_ha, credential_a) = begin(&hub, &a, "session-a", "http");
    let (_hb, credential_b) = begin(&hub, &b, "session-b", "sse");
    let client = connect(&a, "http", "only-a", &credential_a).await;
    // B's credential opens nothing at A: each endpoint admits only its own agent.
    assert!(
        try_connect(&a, "http", "b-at-a", Some(&credential_b))
            .await
            .is_err()
    );
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
    let (_handle, credential) = begin(&hub, &endpoint, "s", "stdio");
    let first = connect(&endpoint, "stdio", "agent", &credential).await;
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

    let second = connect(&endpoint, "stdio", "agent", &credential).await;
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
    let (handle, credential) = begin(&hub, &endpoint, "s", "http");
    let mut tasks = Vec::new();
    for i in 0..24 {
        let endpoint = Arc::clone(&endpoint);
        let credential = credential.clone();
        tasks.push(tokio::spawn(async move {
            let transport = if i % 2 == 0 { "http" } else { "sse" };
            let client = connect(&endpoint, transport, &format!("flood-{i}"), &credential).await;
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
async fn given_a_wrong_bridge_token_then_the_connection_is_refused_and_never_counts_as_contact() {
    let hub = hub(4096);
    let endpoint = ObservedEndpoint::sentinel().await.expect("endpoint");
    let _attempt = begin(&hub, &endpoint, "s", "stdio");
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
    assert_eq!(attempt.servers[0].status, DisplayStatus::Delivered);
    let refused = refusals(&attempt);
    assert_eq!(refused.len(), 1, "{:#?}", attempt.evidence);
    assert_eq!(refused[0].reason_code, Some(ReasonCode::CredentialMissing));
    assert_eq!(endpoint.refused_count(), 1);
}

/// The refused contacts an attempt recorded.
fn refusals(attempt: &AttachmentAttempt) -> Vec<Evidence> {
    attempt
        .evidence
        .iter()
        .filter(|e| e.kind == EvidenceKind::UnauthenticatedContact)
        .cloned()
        .collect()
}

/// GIVEN an attempt that delivered the endpoint with a credential WHEN
/// another local process that only found the port posts initialize and
/// tools/list over each transport THEN every request is refused before any
/// handler runs, the row stays `delivered`, its client is never the
/// intruder's, and each refusal is recorded as an unauthenticated contact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_an_intruder_without_the_credential_then_it_is_refused_and_never_credited() {
    let hub = hub(4096);
    let endpoint = ObservedEndpoint::sentinel().await.expect("endpoint");
    let (_handle, _credential) = begin(&hub, &endpoint, "s", "http");
    for transport in ["http", "sse", "stdio"] {
        let intruder = tokio::time::timeout(
            Duration::from_secs(20),
            try_connect(&endpoint, transport, "intruder", None),
        )
        .await
        .expect("the refusal is prompt");
        assert!(intruder.is_err(), "{transport}: an intruder got a session");
    }
    // A raw POST, as the issue's intruder sent it.
    let status = raw_post_initialize(&endpoint.http_url(), None).await;
    assert_eq!(status, 401);
    hub.flush().await;
    let attempt = hub.snapshot("s").expect("h").current().expect("c").clone();
    let row = &attempt.servers[0];
    assert_eq!(row.status, DisplayStatus::Delivered, "{row:#?}");
    assert!(
        row.client.is_none() && row.connections.is_empty(),
        "{row:#?}"
    );
    let refused = refusals(&attempt);
    assert_eq!(refused.len(), 4, "{:#?}", attempt.evidence);
    assert!(
        refused
            .iter()
            .all(|e| e.connection_id.is_some() && e.client.is_none())
    );
    let text = serde_json::to_string(&attempt).expect("json");
    assert!(
        !text.contains("intruder"),
        "no client-supplied text: {text}"
    );
    assert!(endpoint.refused_count() >= 4);
}

/// GIVEN the observed endpoint WHEN requests arrive under a foreign `Host`,
/// with an `Origin`, or with the credential in a lowercase scheme THEN it
/// answers as the guard every listener shares decides: a rebinding name and a
/// browser are refused before the credential is looked at (and never become
/// evidence), over streamable HTTP and legacy SSE alike, and the scheme is
/// case-insensitive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_observed_endpoint_goes_through_the_listeners_guard() {
    let hub = hub(4096);
    let endpoint = ObservedEndpoint::sentinel().await.expect("endpoint");
    let (_handle, credential) = begin(&hub, &endpoint, "s", "http");
    let bearer = credential.bearer();
    let url = endpoint.http_url();
    let sse = url.replace("/mcp", "/sse");
    for target in [&url, &sse] {
        let rebound = raw_post(
            target,
            Some("rebound.example:80"),
            &[("Authorization", &bearer)],
        )
        .await;
        assert_eq!(rebound, 421, "{target}");
        let browser = raw_post(
            target,
            None,
            &[
                ("Authorization", &bearer),
                ("Origin", "http://evil.example"),
            ],
        )
        .await;
        assert_eq!(browser, 403, "{target}");
    }
    let lower = format!("bearer {}", credential.secret());
    assert_eq!(
        raw_post(&url, None, &[("Authorization", &lower)]).await,
        200
    );
    let port = url::Url::parse(&url).expect("url").port().expect("port");
    let localhost = format!("localhost:{port}");
    assert_eq!(
        raw_post(&url, Some(&localhost), &[("Authorization", &bearer)]).await,
        200
    );
    hub.flush().await;
    let attempt = hub.snapshot("s").expect("h").current().expect("c").clone();
    assert!(refusals(&attempt).is_empty(), "{:#?}", attempt.evidence);
}

/// GIVEN an agent that held attempt 1's credential WHEN attempt 2 supersedes
/// it THEN the old credential is refused over every transport (named stale),
/// and the new one is admitted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_a_superseded_attempt_then_its_credential_is_refused_as_stale() {
    let hub = hub(4096);
    let endpoint = ObservedEndpoint::sentinel().await.expect("endpoint");
    let (_first, old) = begin(&hub, &endpoint, "s", "http");
    let (_second, new) = begin(&hub, &endpoint, "s", "http");
    for transport in ["http", "sse", "stdio"] {
        assert!(
            try_connect(&endpoint, transport, "old-agent", Some(&old))
                .await
                .is_err(),
            "{transport}: a superseded credential was admitted"
        );
    }
    let client = connect(&endpoint, "http", "new-agent", &new).await;
    list_and_call(&client).await;
    let attempt = eventually(&hub, "s", "new agent active", |a| {
        a.servers[0].status == DisplayStatus::Active
    })
    .await;
    assert_eq!(
        attempt.servers[0].client.as_ref().map(|c| c.name.as_str()),
        Some("new-agent")
    );
    let refused = refusals(&attempt);
    assert!(
        !refused.is_empty()
            && refused
                .iter()
                .all(|e| e.reason_code == Some(ReasonCode::CredentialStale)),
        "{refused:#?}"
    );
}

/// GIVEN a host that opted out of the credential WHEN any client connects
/// THEN it is admitted, and its contact says it was unauthenticated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_a_host_that_opts_out_then_contact_is_admitted_and_marked_unauthenticated() {
    let hub = hub(4096);
    let endpoint = ObservedEndpoint::sentinel().await.expect("endpoint");
    let (handle, _credential) = begin(&hub, &endpoint, "s", "http");
    endpoint.bind_unauthenticated(handle.sink.clone());
    let client = try_connect(&endpoint, "http", "anyone", None)
        .await
        .expect("admitted");
    client.list_all_tools().await.expect("list");
    let attempt = eventually(&hub, "s", "active", |a| {
        a.servers[0].status == DisplayStatus::Active
    })
    .await;
    let contact = attempt
        .evidence
        .iter()
        .find(|e| e.kind == EvidenceKind::InitializeObserved)
        .expect("initialize observed");
    assert!(
        contact
            .summary
            .as_deref()
            .is_some_and(|s| s.starts_with("unauthenticated")),
        "{contact:#?}"
    );
}

/// POSTs an MCP initialize with plain HTTP; returns the status.
async fn raw_post_initialize(url: &str, authorization: Option<&str>) -> u16 {
    let auth: Vec<(&str, &str)> = authorization
        .map(|a| ("Authorization", a))
        .into_iter()
        .collect();
    raw_post(url, None, &auth).await
}

/// A raw initialize POST with the given `Host` (the URL's own by default)
/// and headers; the answer's status code.
async fn raw_post(url: &str, host: Option<&str>, headers: &[(&str, &str)]) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let parsed = url::Url::parse(url).expect("url");
    let addr = format!(
        "{}:{}",
        parsed.host_str().expect("host"),
        parsed.port().expect("port")
    );
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"intruder","version":"6.6"}}}"#;
    let extra: String = headers
        .iter()
        .map(|(k, v)| format!("{k}: {v}\r\n"))
        .collect();
    let request = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        parsed.path(),
        host.unwrap_or(&addr),
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut response = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut response)).await;
    let text = String::from_utf8_lossy(&response);
    text.split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0)
}

/// GIVEN a stateless MCP 2026-07-28 client (server/discover, then plain POSTs
/// with no session) WHEN it lists tools and makes 100 tool calls THEN the row
/// stays Active under one client identity, the timeline holds the discover,
/// the list and the calls with nothing dropped to churn, and nothing is shown
/// as disconnected, because nothing disconnected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_a_stateless_client_making_100_calls_then_the_row_stays_active_with_one_identity() {
    let hub = hub(4096);
    let endpoint = ObservedEndpoint::sentinel().await.expect("endpoint");
    let (_handle, credential) = begin(&hub, &endpoint, "s", "http");
    let client = stateless_client(&endpoint, &credential, "stateless-client").await;
    client.list_all_tools().await.expect("tools/list");
    for i in 0..100 {
        let mut args = serde_json::Map::new();
        args.insert("text".into(), format!("call {i}").into());
        client
            .call_tool(CallToolRequestParams::new(SENTINEL_TOOL).with_arguments(args))
            .await
            .expect("call");
    }
    // Every call was answered; let the drain reduce what they published.
    hub.flush().await;
    let attempt = hub.snapshot("s").expect("h").current().expect("c").clone();
    let row = &attempt.servers[0];
    assert_eq!(row.status, DisplayStatus::Active, "{row:#?}");
    let kinds = |k: EvidenceKind| attempt.evidence.iter().filter(|e| e.kind == k).count();
    assert_eq!(
        kinds(EvidenceKind::ConnectionClosed),
        0,
        "nothing disconnected"
    );
    assert_eq!(kinds(EvidenceKind::InitializeObserved), 1, "one discover");
    assert!(kinds(EvidenceKind::ToolsListObserved) >= 1);
    // The 64-event timeline holds the calls that fit; churn took no room:
    // nothing but the start, the discover, the list and calls is on it.
    // (Calls made within one millisecond are one fact to the idempotent
    // reducer, so how many stay distinct depends on the machine's speed:
    // 42 of 100 in a release build here, more in a debug one.)
    let churn: Vec<&Evidence> = attempt
        .evidence
        .iter()
        .filter(|e| {
            !matches!(
                e.kind,
                EvidenceKind::Configured
                    | EvidenceKind::Delivered
                    | EvidenceKind::InitializeObserved
                    | EvidenceKind::ToolsListObserved
                    | EvidenceKind::ToolCallObserved
            )
        })
        .collect();
    assert!(churn.is_empty(), "{churn:#?}");
    assert!(kinds(EvidenceKind::ToolCallObserved) >= 1);
    assert!(row.last_tool_call.is_some(), "{row:#?}");
    assert!(
        row.connections.iter().all(|c| c.closed_at.is_none()),
        "{:#?}",
        row.connections
    );
    assert_eq!(
        row.connections.len(),
        1,
        "one client identity: {:#?}",
        row.connections
    );
    let ids: std::collections::BTreeSet<_> = attempt
        .evidence
        .iter()
        .filter_map(|e| e.connection_id.as_deref())
        .collect();
    assert_eq!(ids.len(), 1, "one identity across requests: {ids:?}");
    assert_eq!(
        row.client
            .as_ref()
            .and_then(|c| c.protocol_version.as_deref()),
        Some("2026-07-28")
    );
}

/// Runs the host's endpoint test (the diagnostics API, as the page's "Test
/// endpoint" does) on the session's observed server and waits for its result
/// to reach the row.
async fn endpoint_test_of_own_server(
    hub: &Hub,
    diagnostics: &tether_diagnostics::api::Diagnostics,
    server: &str,
) -> AttachmentAttempt {
    let result = diagnostics
        .check_endpoint_json(
            "host",
            &format!(r#"{{"session_id":"s","server_name":"{server}"}}"#),
        )
        .await
        .expect("endpoint test");
    assert!(result.succeeded, "{result:#?}");
    let at = result.at;
    eventually(hub, "s", "the endpoint test's result on the row", |a| {
        a.server(server)
            .and_then(|r| r.endpoint_test.as_ref())
            .is_some_and(|t| t.at == at)
    })
    .await
}

/// GIVEN the host's own observed endpoint delivered to an agent that has
/// not connected WHEN the host tests that endpoint (over the same transport:
/// streamable HTTP in the 2026-07-28 era, legacy SSE with `initialize`, the
/// stdio bridge) THEN the row stays Delivered with no client and no
/// connection; and once the agent has connected, a test leaves the agent's
/// client and newest connection as they were. Tether's own contact is
/// reachability, never attachment.
async fn own_endpoint_test_is_never_agent_evidence(transport: &str) {
    let hub = hub(4096);
    let endpoint = ObservedEndpoint::sentinel().await.expect("endpoint");
    let (handle, credential) = begin(&hub, &endpoint, "s", transport);
    let diagnostics =
        tether_diagnostics::api::Diagnostics::new(tether_diagnostics::api::allow_all());
    diagnostics.remember_attempt("s", &handle);
    let name = endpoint.server_name().to_owned();

    let attempt = endpoint_test_of_own_server(&hub, &diagnostics, &name).await;
    let row = attempt.server(&name).expect("row");
    assert_eq!(
        row.status,
        DisplayStatus::Delivered,
        "{transport}: {row:#?}"
    );
    assert!(row.client.is_none(), "{transport}: {row:#?}");
    assert!(row.connections.is_empty(), "{transport}: {row:#?}");
    assert!(
        !attempt.evidence.iter().any(|e| matches!(
            e.kind,
            EvidenceKind::InitializeObserved | EvidenceKind::ToolsListObserved
        )),
        "{transport}: {:#?}",
        attempt.evidence
    );
    assert_eq!(endpoint.refused_count(), 0, "the check was admitted");

    // Now the agent connects; a second test changes nothing of its.
    let client = connect(&endpoint, transport, "agent-under-test", &credential).await;
    list_and_call(&client).await;
    let before = eventually(&hub, "s", "the agent's contact", |a| {
        a.server(&name)
            .is_some_and(|r| r.status == DisplayStatus::Active && r.last_tool_call.is_some())
    })
    .await;
    let before = before.server(&name).expect("row").clone();
    let after = endpoint_test_of_own_server(&hub, &diagnostics, &name).await;
    let after = after.server(&name).expect("row").clone();
    assert_eq!(after.client, before.client, "{transport}");
    assert_eq!(
        after.client.as_ref().map(|c| c.name.as_str()),
        Some("agent-under-test")
    );
    assert_eq!(after.connection_id, before.connection_id, "{transport}");
    assert_eq!(after.connections, before.connections, "{transport}");
    assert_eq!(after.tool_count, before.tool_count, "{transport}");
    client.cancel().await.ok();
    endpoint.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_test_of_the_hosts_own_http_endpoint_is_never_agent_evidence() {
    own_endpoint_test_is_never_agent_evidence("http").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_test_of_the_hosts_own_sse_endpoint_is_never_agent_evidence() {
    own_endpoint_test_is_never_agent_evidence("sse").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_test_of_the_hosts_own_stdio_bridge_is_never_agent_evidence() {
    own_endpoint_test_is_never_agent_evidence("stdio").await;
}
