//! OpenTelemetry export, end to end: real MCP clients (legacy streamable
//! HTTP, 2026-07-28 stateless HTTP, legacy SSE, stdio through the bridge)
//! against the observed endpoint, a real hub, and `tether-otel` exporting
//! over OTLP/HTTP to an in-process receiver that decodes every request with
//! `opentelemetry-proto`. The raw captures are also written to
//! `target/tether-otel-capture/` for the independent Python decoder in CI.

use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path as AxPath, State};
use axum::http::StatusCode;
use axum::routing::post;
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::metric::Data;
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode as SpanStatus;
use prost::Message;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    ContentBlock, Implementation, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    RequestMetaObject, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{
    ClientLifecycleMode, ClientServiceExt, ErrorData as McpError, RoleClient, RoleServer,
    ServerHandler, ServiceExt,
};
use tether_core::model::Evidence;
use tether_core::registry::{PluginSource, Registry};
use tether_core::vocab::{EvidenceKind, ServerSource, Transport, Trigger};
use tether_core::{
    Decision, Delivery, DriveMode, Endpoint, KeyValue as SpecKv, PlanContext, PluginDescriptor,
    ServerSpec, TransportObserver,
};
use tether_hub::{AttemptRequest, Hub};
use tether_kandev_endpoint::{AttemptCredential, ObservedEndpoint};
use tether_otel::{OtelConfig, TetherOtel};

const SECRET_ARGUMENT: &str = "sk-otel-planted-argument-7f3a";
const SECRET_RESULT: &str = "sk-otel-planted-result-91bc";
const SECRET_HEADER: &str = "sk-otel-planted-header-c0de";
const SECRET_ENV: &str = "sk-otel-planted-env-5eed";
const SECRET_EXPORT_HEADER: &str = "sk-otel-planted-collector-key-a11";
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_SPAN: &str = "00f067aa0ba902b7";

/// A server with four behaviours: a result, a tool error, a server-side
/// failure and (for any other name) invalid params.
#[derive(Clone)]
struct Demo;

fn tool(name: &'static str) -> Tool {
    Tool::new(name, "demo", Arc::new(serde_json::Map::new()))
}

impl ServerHandler for Demo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("otel-demo", "1.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(vec![
            tool("ok"),
            tool("fails"),
            tool("explodes"),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        match request.name.as_ref() {
            "ok" => Ok(CallToolResponse::Complete(CallToolResult::success(vec![
                ContentBlock::text(format!("result {SECRET_RESULT}")),
            ]))),
            "fails" => Ok(CallToolResponse::Complete(CallToolResult::error(vec![
                ContentBlock::text(format!("failed {SECRET_RESULT}")),
            ]))),
            "explodes" => Err(McpError::internal_error("boom", None)),
            other => Err(McpError::invalid_params(
                format!("unknown tool {other}"),
                None,
            )),
        }
    }
}

struct Pick;

impl TransportObserver for Pick {
    fn descriptor(&self) -> PluginDescriptor {
        PluginDescriptor::new("pick", ["otel-agent"], DriveMode::Acp, "0")
    }

    fn decide(&self, server: &ServerSpec, _ctx: &PlanContext) -> Decision {
        match server.endpoint_for(&Transport::Http) {
            Some(_) => Decision::Deliver {
                transport: Transport::Http,
                via: Delivery::AcpMcpServers,
            },
            None => Decision::filter(tether_core::ReasonCode::TransportUnsupported),
        }
    }
}

// === The in-process OTLP/HTTP receiver ===

type Captured = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

#[derive(Clone, Default)]
struct Receiver {
    captured: Captured,
    /// The `x-collector-key` header of each request, as the collector got it.
    keys: Arc<Mutex<Vec<String>>>,
}

async fn receive(
    State(receiver): State<Receiver>,
    AxPath(signal): AxPath<String>,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> StatusCode {
    if let Some(key) = headers.get("x-collector-key").and_then(|v| v.to_str().ok()) {
        receiver
            .keys
            .lock()
            .expect("keys lock")
            .push(key.to_owned());
    }
    receiver
        .captured
        .lock()
        .expect("capture lock")
        .push((signal, body.to_vec()));
    StatusCode::OK
}

async fn receiver() -> (SocketAddr, Captured) {
    let (addr, receiver) = receiver_with_keys().await;
    (addr, receiver.captured)
}

async fn receiver_with_keys() -> (SocketAddr, Receiver) {
    let receiver = Receiver::default();
    let app = Router::new()
        .route("/v1/{signal}", post(receive))
        .with_state(receiver.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind receiver");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (addr, receiver)
}

// === Decoding helpers ===

fn text(value: &Option<AnyValue>) -> Option<String> {
    match value.as_ref()?.value.as_ref()? {
        any_value::Value::StringValue(s) => Some(s.clone()),
        any_value::Value::IntValue(i) => Some(i.to_string()),
        any_value::Value::BoolValue(b) => Some(b.to_string()),
        any_value::Value::DoubleValue(d) => Some(d.to_string()),
        _ => None,
    }
}

fn attrs(list: &[KeyValue]) -> HashMap<String, String> {
    list.iter()
        .filter_map(|kv| Some((kv.key.clone(), text(&kv.value)?)))
        .collect()
}

fn client(name: &str) -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new(name, "1.2.3"),
    )
}

async fn legacy_http(
    endpoint: &ObservedEndpoint,
    credential: &AttemptCredential,
) -> RunningService<RoleClient, ClientConfig> {
    client("legacy-http")
        .serve(StreamableHttpClientTransport::from_config(
            StreamableHttpClientTransportConfig::with_uri(endpoint.http_url())
                .auth_header(credential.secret()),
        ))
        .await
        .expect("legacy client")
}

fn call(name: &'static str) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(name);
    let mut args = serde_json::Map::new();
    args.insert("text".into(), SECRET_ARGUMENT.into());
    params.arguments = Some(args);
    params
}

/// A store that is down: every write fails.
struct DownStore;

impl tether_core::store::Store for DownStore {
    fn save(
        &self,
        _: &tether_core::history::AttachmentHistory,
    ) -> Result<(), tether_core::store::StoreError> {
        Err(tether_core::store::StoreError::Backend(
            "the database is down (simulated)".into(),
        ))
    }
    fn remove(&self, _: &str) -> Result<(), tether_core::store::StoreError> {
        Err(tether_core::store::StoreError::Backend(
            "the database is down (simulated)".into(),
        ))
    }
    fn load_all(&self) -> Result<tether_core::store::Loaded, tether_core::store::StoreError> {
        Ok(tether_core::store::Loaded::default())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_real_clients_then_the_export_follows_the_mcp_conventions_and_carries_no_secret() {
    let (addr, captured) = receiver().await;
    let otel = TetherOtel::start(
        OtelConfig::new("tether-otel-test")
            .with_endpoint(format!("http://{addr}"))
            .with_header("x-collector-key", SECRET_EXPORT_HEADER),
    )
    .expect("start export")
    .expect("export is on with an endpoint");

    let mut registry = Registry::empty();
    registry
        .add(Arc::new(Pick), PluginSource::Static)
        .expect("add");
    // The hub writes through to a store that is down: its counters are exported.
    let hub = Hub::with_store(
        registry,
        tether_hub::HubConfig {
            persist_interval: Duration::from_millis(20),
            ..tether_hub::HubConfig::default()
        },
        Arc::new(DownStore),
    );
    otel.watch_hub(&hub);

    let endpoint = ObservedEndpoint::start("otel-demo", || Demo)
        .await
        .expect("endpoint");
    endpoint.on_served(otel.served_observer());
    let credential = AttemptCredential::generate();
    let bridge = tether_tests::workspace_bin("tether-bridge");
    let own = endpoint.server_spec(ServerSource::Host, Some(&bridge), &credential);
    let third_party = ServerSpec {
        name: "third-party".into(),
        source: ServerSource::Profile,
        endpoints: vec![Endpoint::Stdio {
            command: "/usr/bin/some-mcp".into(),
            args: vec![format!("--token={SECRET_ENV}")],
            env: vec![SpecKv::new("API_KEY", SECRET_ENV)],
            cwd: None,
        }],
        relayed: None,
        note: None,
        check_endpoints: vec![],
        unset_vars: vec![],
        cwd_missing: false,
        command_missing: None,
    };
    let mut own_with_secret = own.clone();
    if let Some(Endpoint::Http { headers, .. }) = own_with_secret
        .endpoints
        .iter_mut()
        .find(|e| matches!(e, Endpoint::Http { .. }))
    {
        headers.push(SpecKv::new("X-Extra", SECRET_HEADER));
    }
    let request = AttemptRequest::new(
        tether_core::Owner {
            task: "task-otel".into(),
            session: "session-otel".into(),
            execution: "exec-otel".into(),
        },
        "otel-agent",
        DriveMode::Acp,
        Trigger::SessionNew,
        vec![own_with_secret, third_party],
    );
    let handle = hub.begin_attempt(request).expect("begin");
    endpoint.bind(handle.sink.clone(), credential.clone());
    handle
        .sink
        .publish(Evidence::new(EvidenceKind::Delivered, tether_hub::now()).server("otel-demo"))
        .expect("delivered");

    // Legacy streamable HTTP: initialize, tools/list, four calls, one with a trace context.
    let legacy = legacy_http(&endpoint, &credential).await;
    legacy.list_all_tools().await.expect("tools/list");
    let mut traced = call("ok");
    let mut meta = RequestMetaObject::new();
    meta.0
        .set_traceparent(format!("00-{TRACE_ID}-{PARENT_SPAN}-01"));
    meta.0.set_baggage(format!("tenant={SECRET_ARGUMENT}"));
    traced.meta = Some(meta);
    legacy.call_tool(traced).await.expect("ok");
    legacy
        .call_tool(call("fails"))
        .await
        .expect("tool error is a result");
    assert!(legacy.call_tool(call("explodes")).await.is_err());
    assert!(legacy.call_tool(call("missing")).await.is_err());
    legacy.cancel().await.expect("close legacy");

    // 2026-07-28: self-contained requests, no session.
    let modern = client("modern-http")
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
        .expect("modern client");
    modern.call_tool(call("ok")).await.expect("modern ok");
    modern.cancel().await.expect("close modern");

    // Legacy SSE, and stdio through the bridge.
    let sse = tether_mcp_client::sse::connect(
        &endpoint.sse_url(),
        &[("Authorization".to_owned(), credential.bearer())],
        Duration::from_secs(5),
    )
    .await
    .expect("sse transport");
    let sse = client("legacy-sse").serve(sse).await.expect("sse client");
    sse.call_tool(call("ok")).await.expect("sse ok");
    sse.cancel().await.expect("close sse");

    let Endpoint::Stdio {
        command, args, env, ..
    } = endpoint.bridge_endpoint(&bridge, &credential)
    else {
        unreachable!("bridge endpoint is stdio")
    };
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args);
    for kv in env {
        cmd.env(kv.name, kv.value);
    }
    let stdio = client("stdio-agent")
        .serve(TokioChildProcess::new(cmd).expect("spawn bridge"))
        .await
        .expect("stdio client");
    stdio.call_tool(call("ok")).await.expect("stdio ok");
    stdio.cancel().await.expect("close stdio");

    tokio::time::sleep(Duration::from_millis(300)).await;
    hub.flush().await;
    for _ in 0..100 {
        if hub.store_retries_pending() > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(hub.store_failures() > 0 && hub.store_retries_pending() > 0);
    otel.record_probe_verdict(tether_core::probe::Verdict::Active, "otel-agent");
    let dropped = otel.dropped();
    let problems = tokio::task::spawn_blocking(move || otel.shutdown())
        .await
        .expect("shutdown");
    assert!(problems.is_empty(), "export problems: {problems:?}");
    assert_eq!(dropped, 0, "nothing may be dropped in a quiet test");
    endpoint.shutdown().await;

    let captured = captured.lock().expect("lock").clone();
    let dir = tether_tests::samples_dir()
        .parent()
        .expect("target")
        .join("tether-otel-capture");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("capture dir");
    for (i, (signal, body)) in captured.iter().enumerate() {
        std::fs::write(dir.join(format!("{signal}-{i:03}.pb")), body).expect("write capture");
    }

    // === No planted secret, in any exported byte ===
    for (signal, body) in &captured {
        let lossy = String::from_utf8_lossy(body);
        for secret in [
            SECRET_ARGUMENT,
            SECRET_RESULT,
            SECRET_HEADER,
            SECRET_ENV,
            SECRET_EXPORT_HEADER,
            credential.secret(),
        ] {
            assert!(
                !lossy.contains(secret),
                "{signal} export carries a planted secret"
            );
        }
    }

    // === Spans ===
    let spans: Vec<Span> = captured
        .iter()
        .filter(|(s, _)| s == "traces")
        .flat_map(|(_, body)| {
            ExportTraceServiceRequest::decode(body.as_slice())
                .expect("decode traces")
                .resource_spans
        })
        .flat_map(|rs| rs.scope_spans)
        .flat_map(|ss| ss.spans)
        .collect();
    let names: BTreeSet<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    for expected in [
        "initialize",
        "tools/list",
        "tools/call ok",
        "tools/call fails",
        "tools/call explodes",
        "tools/call missing",
        "server/discover",
    ] {
        assert!(names.contains(expected), "no span {expected}: {names:?}");
    }
    for span in &spans {
        assert_eq!(span.kind, SpanKind::Server as i32, "{}", span.name);
        let a = attrs(&span.attributes);
        assert!(a.contains_key("mcp.method.name"), "{}: {a:?}", span.name);
        assert!(span.end_time_unix_nano >= span.start_time_unix_nano);
        for forbidden in ["gen_ai.tool.call.arguments", "gen_ai.tool.call.result"] {
            assert!(!a.contains_key(forbidden), "{}", span.name);
        }
        if a["mcp.method.name"] == "tools/call" {
            assert_eq!(a["gen_ai.operation.name"], "execute_tool");
            assert!(span.name.ends_with(&a["gen_ai.tool.name"]));
            assert!(a.contains_key("jsonrpc.request.id"), "{a:?}");
        }
    }
    let call_spans = |tool: &str| -> Vec<(&Span, HashMap<String, String>)> {
        spans
            .iter()
            .filter(|s| s.name == format!("tools/call {tool}"))
            .map(|s| (s, attrs(&s.attributes)))
            .collect()
    };

    // Trace context joins the client's trace.
    let ok_calls = call_spans("ok");
    assert_eq!(
        ok_calls.len(),
        4,
        "ok over legacy HTTP, modern HTTP, SSE and stdio"
    );
    let joined: Vec<_> = ok_calls
        .iter()
        .filter(|(s, _)| hex(&s.trace_id) == TRACE_ID)
        .collect();
    assert_eq!(joined.len(), 1, "exactly the traced call joins the trace");
    assert_eq!(hex(&joined[0].0.parent_span_id), PARENT_SPAN);
    for (span, _) in ok_calls
        .iter()
        .filter(|(s, _)| hex(&s.trace_id) != TRACE_ID)
    {
        assert!(span.parent_span_id.is_empty(), "untraced calls are roots");
    }

    // Transports, sessions and versions.
    let by_transport = |transport: &str, protocol: Option<&str>| {
        ok_calls
            .iter()
            .filter(|(_, a)| {
                a.get("network.transport").map(String::as_str) == Some(transport)
                    && a.get("network.protocol.name").map(String::as_str) == protocol
            })
            .count()
    };
    assert_eq!(by_transport("tcp", Some("http")), 3, "{ok_calls:?}");
    assert_eq!(by_transport("pipe", None), 1, "{ok_calls:?}");
    let modern_call = ok_calls
        .iter()
        .find(|(_, a)| a.get("mcp.protocol.version").map(String::as_str) == Some("2026-07-28"))
        .expect("the 2026-07-28 call");
    assert!(
        !modern_call.1.contains_key("mcp.session.id"),
        "no mcp.session.id for 2026-07-28: {:?}",
        modern_call.1
    );
    let legacy_sessions = ok_calls
        .iter()
        .filter(|(_, a)| a.get("network.transport").map(String::as_str) == Some("tcp"))
        .filter(|(_, a)| a.contains_key("mcp.session.id"))
        .count();
    assert_eq!(legacy_sessions, 2, "legacy HTTP and SSE carry a session id");
    for (_, a) in ok_calls
        .iter()
        .filter(|(_, a)| a.get("network.transport").map(String::as_str) == Some("tcp"))
    {
        assert_eq!(
            a.get("client.address").map(String::as_str),
            Some("127.0.0.1")
        );
        assert!(
            a.get("client.port")
                .is_some_and(|p| p.parse::<u16>().is_ok())
        );
    }

    // Error rules.
    let (ok_span, ok_attrs) = &ok_calls[0];
    assert!(!ok_attrs.contains_key("error.type"));
    assert_ne!(status(ok_span), SpanStatus::Error);
    let (fails, fails_attrs) = &call_spans("fails")[0];
    assert_eq!(fails_attrs["error.type"], "tool_error");
    assert_eq!(status(fails), SpanStatus::Error);
    let (explodes, explodes_attrs) = &call_spans("explodes")[0];
    assert_eq!(explodes_attrs["error.type"], "-32603");
    assert_eq!(status(explodes), SpanStatus::Error);
    let (missing, missing_attrs) = &call_spans("missing")[0];
    assert_eq!(missing_attrs["error.type"], "-32602");
    assert_ne!(
        status(missing),
        SpanStatus::Error,
        "invalid params is the client's"
    );

    // Ownership rides on spans.
    assert_eq!(ok_attrs["tether.session.id"], "session-otel");
    assert_eq!(ok_attrs["tether.server.name"], "otel-demo");

    // === Metrics ===
    let metrics: Vec<_> = captured
        .iter()
        .filter(|(s, _)| s == "metrics")
        .flat_map(|(_, body)| {
            ExportMetricsServiceRequest::decode(body.as_slice())
                .expect("decode metrics")
                .resource_metrics
        })
        .flat_map(|rm| rm.scope_metrics)
        .flat_map(|sm| sm.metrics)
        .collect();
    let buckets = vec![
        0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
    ];
    for name in [
        "mcp.server.operation.duration",
        "mcp.server.session.duration",
    ] {
        let metric = metrics
            .iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("no {name}"));
        assert_eq!(metric.unit, "s", "{name}");
        let Some(Data::Histogram(h)) = &metric.data else {
            panic!("{name} is not a histogram");
        };
        assert!(!h.data_points.is_empty());
        for point in &h.data_points {
            assert_eq!(point.explicit_bounds, buckets, "{name}");
        }
    }
    let ids = [
        "session-otel",
        "task-otel",
        "exec-otel",
        handle.attempt_id.as_str(),
    ];
    for metric in &metrics {
        let points: Vec<&[KeyValue]> = match &metric.data {
            Some(Data::Histogram(h)) => h
                .data_points
                .iter()
                .map(|p| p.attributes.as_slice())
                .collect(),
            Some(Data::Sum(s)) => s
                .data_points
                .iter()
                .map(|p| p.attributes.as_slice())
                .collect(),
            Some(Data::Gauge(g)) => g
                .data_points
                .iter()
                .map(|p| p.attributes.as_slice())
                .collect(),
            _ => Vec::new(),
        };
        for point in points {
            for (key, value) in attrs(point) {
                assert!(
                    !key.contains("session.id") && !key.contains("attempt.id"),
                    "{}: high-cardinality key {key}",
                    metric.name
                );
                assert!(
                    !ids.contains(&value.as_str()),
                    "{}: ownership id {value} as a metric attribute",
                    metric.name
                );
                assert!(!key.starts_with("client."), "{}: {key}", metric.name);
                assert_ne!(key, "jsonrpc.request.id", "{}", metric.name);
            }
        }
    }
    let sum_points = |name: &str| -> Vec<HashMap<String, String>> {
        metrics
            .iter()
            .filter(|m| m.name == name)
            .filter_map(|m| match &m.data {
                Some(Data::Sum(s)) => Some(s.data_points.iter().map(|p| attrs(&p.attributes))),
                _ => None,
            })
            .flatten()
            .collect()
    };
    assert!(
        sum_points("tether.attempts")
            .iter()
            .any(|a| a.get("tether.trigger").map(String::as_str) == Some("session_new"))
    );
    let statuses: BTreeSet<String> = sum_points("tether.server.status")
        .iter()
        .filter_map(|a| a.get("tether.display_status").cloned())
        .collect();
    assert!(statuses.contains("active"), "{statuses:?}");
    assert!(statuses.contains("filtered"), "{statuses:?}");
    assert!(
        sum_points("tether.probe.verdicts")
            .iter()
            .any(|a| a.get("tether.probe.verdict").map(String::as_str) == Some("active"))
    );
    let drop_sites: BTreeSet<String> = sum_points("tether.evidence.dropped")
        .iter()
        .filter_map(|a| a.get("tether.drop.site").cloned())
        .collect();
    assert_eq!(drop_sites, BTreeSet::from(["export".into(), "hub".into()]));
    // The store counters: failures and sessions behind while the store is down.
    let values = |name: &str| -> Vec<i64> {
        use opentelemetry_proto::tonic::metrics::v1::number_data_point::Value;
        metrics
            .iter()
            .filter(|m| m.name == name)
            .flat_map(|m| match &m.data {
                Some(Data::Sum(s)) => s.data_points.clone(),
                Some(Data::Gauge(g)) => g.data_points.clone(),
                _ => Vec::new(),
            })
            .filter_map(|p| match p.value {
                Some(Value::AsInt(n)) => Some(n),
                _ => None,
            })
            .collect()
    };
    assert!(
        values("tether.store.write.failures").iter().any(|n| *n > 0),
        "{:?}",
        values("tether.store.write.failures")
    );
    assert!(
        values("tether.store.sessions.behind")
            .iter()
            .any(|n| *n > 0)
    );
    assert!(!values("tether.store.write.stale").is_empty());

    // === Logs ===
    let logs: Vec<_> = captured
        .iter()
        .filter(|(s, _)| s == "logs")
        .flat_map(|(_, body)| {
            ExportLogsServiceRequest::decode(body.as_slice())
                .expect("decode logs")
                .resource_logs
        })
        .collect();
    let resource = attrs(&logs[0].resource.as_ref().expect("resource").attributes);
    assert_eq!(resource["service.name"], "tether-otel-test");
    let records: Vec<_> = logs
        .iter()
        .flat_map(|rl| &rl.scope_logs)
        .flat_map(|sl| &sl.log_records)
        .collect();
    assert!(records.iter().all(|r| r.event_name == "tether.evidence"));
    let kinds: BTreeSet<String> = records
        .iter()
        .filter_map(|r| attrs(&r.attributes).get("tether.evidence.kind").cloned())
        .collect();
    for kind in [
        "configured",
        "delivered",
        "initialize_observed",
        "tools_list_observed",
        "tool_call_observed",
    ] {
        assert!(kinds.contains(kind), "no {kind} log: {kinds:?}");
    }
    for record in &records {
        let a = attrs(&record.attributes);
        assert_eq!(a["tether.session.id"], "session-otel");
        assert_eq!(a["tether.attempt.id"], handle.attempt_id);
        assert_eq!(a["tether.task.id"], "task-otel");
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn status(span: &Span) -> SpanStatus {
    span.status
        .as_ref()
        .and_then(|s| SpanStatus::try_from(s.code).ok())
        .unwrap_or(SpanStatus::Unset)
}

// === `tether probe --otlp` as a user runs it ===

fn run_probe(envs: &[(&str, String)], extra: &[String]) -> std::process::Output {
    let mut cmd = std::process::Command::new(tether_tests::workspace_bin("tether"));
    cmd.args(["probe", "--json", "--timeout", "30"])
        .args(extra)
        .arg("--")
        .arg(tether_tests::workspace_bin("tether-reference-agent"))
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_HEADERS")
        .env_remove("OTEL_SERVICE_NAME")
        .env_remove("OTEL_RESOURCE_ATTRIBUTES")
        .env_remove("OTEL_SDK_DISABLED");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().expect("run tether probe")
}

fn verdict(out: &std::process::Output) -> String {
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "one JSON document ({e}); stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    doc["verdict"].as_str().unwrap_or_default().to_owned()
}

/// Every exported span: its name and attributes.
fn spans(captured: &Captured) -> Vec<(String, HashMap<String, String>)> {
    captured
        .lock()
        .expect("lock")
        .iter()
        .filter(|(s, _)| s == "traces")
        .flat_map(|(_, body)| {
            ExportTraceServiceRequest::decode(body.as_slice())
                .expect("decode")
                .resource_spans
        })
        .flat_map(|rs| rs.scope_spans)
        .flat_map(|ss| ss.spans)
        .map(|s| (s.name, attrs(&s.attributes)))
        .collect()
}

fn span_names(captured: &Captured) -> BTreeSet<String> {
    spans(captured).into_iter().map(|(name, _)| name).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_with_otlp_exports_the_sentinels_spans_and_the_verdict() {
    let (addr, captured) = receiver().await;
    let url = format!("http://{addr}");
    let out = tokio::task::spawn_blocking(move || run_probe(&[], &["--otlp".into(), url]))
        .await
        .expect("probe");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(verdict(&out), "active");
    let names = span_names(&captured);
    assert!(names.contains("initialize"), "{names:?}");
    assert!(names.contains("tools/list"), "{names:?}");
    let verdicts: Vec<String> = captured
        .lock()
        .expect("lock")
        .iter()
        .filter(|(s, _)| s == "metrics")
        .flat_map(|(_, body)| {
            ExportMetricsServiceRequest::decode(body.as_slice())
                .expect("decode")
                .resource_metrics
        })
        .flat_map(|rm| rm.scope_metrics)
        .flat_map(|sm| sm.metrics)
        .filter(|m| m.name == "tether.probe.verdicts")
        .filter_map(|m| match m.data {
            Some(Data::Sum(s)) => Some(s.data_points),
            _ => None,
        })
        .flatten()
        .filter_map(|p| attrs(&p.attributes).get("tether.probe.verdict").cloned())
        .collect();
    assert_eq!(verdicts, vec!["active".to_owned()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_honours_the_standard_environment_and_otel_sdk_disabled() {
    let (addr, captured) = receiver().await;
    let endpoint = format!("http://{addr}");
    let on = endpoint.clone();
    let out =
        tokio::task::spawn_blocking(move || run_probe(&[("OTEL_EXPORTER_OTLP_ENDPOINT", on)], &[]))
            .await
            .expect("probe");
    assert_eq!(verdict(&out), "active");
    assert!(
        span_names(&captured).contains("tools/list"),
        "OTEL_EXPORTER_OTLP_ENDPOINT alone turns export on"
    );

    captured.lock().expect("lock").clear();
    let out = tokio::task::spawn_blocking(move || {
        run_probe(
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint),
                ("OTEL_SDK_DISABLED", "true".into()),
            ],
            &[],
        )
    })
    .await
    .expect("probe");
    assert_eq!(verdict(&out), "active");
    assert!(
        captured.lock().expect("lock").is_empty(),
        "OTEL_SDK_DISABLED=true exports nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_against_a_hanging_collector_still_reports_and_never_prints_the_url_secret() {
    // Accepts connections and never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            open.push(socket);
        }
    });
    let url = format!("http://otel-user:sk-otlp-url-secret@{addr}/?key=sk-otlp-query-secret");
    let out = tokio::task::spawn_blocking(move || run_probe(&[], &["--otlp".into(), url]))
        .await
        .expect("probe");
    held.abort();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(verdict(&out), "active");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("OpenTelemetry export"), "{stderr}");
    for secret in ["sk-otlp-url-secret", "sk-otlp-query-secret"] {
        assert!(!stderr.contains(secret), "{stderr}");
        assert!(!String::from_utf8_lossy(&out.stdout).contains(secret));
    }
}

#[test]
fn probe_refuses_an_otlp_url_that_is_not_http_with_exit_2() {
    let out = run_probe(
        &[],
        &["--otlp".into(), "ftp://user:sk-bad-secret@host/".into()],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not an http"), "{stderr}");
    assert!(!stderr.contains("sk-bad-secret"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_host_exports_its_servers_spans_and_evidence_logs() {
    let (addr, captured) = receiver().await;
    let db = tempfile::tempdir().expect("tempdir");
    let db_path = db.path().join("host.db");
    let url = format!("http://{addr}");
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(tether_tests::workspace_bin("tether-example-host"))
            .arg("--db")
            .arg(&db_path)
            .arg("--agent")
            .arg(tether_tests::workspace_bin("tether-reference-agent"))
            .args(["--otlp", &url])
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .output()
            .expect("run the example host")
    })
    .await
    .expect("host");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let names = span_names(&captured);
    assert!(names.contains("initialize"), "{names:?}");
    assert!(names.contains("tools/list"), "{names:?}");
    let logs = captured
        .lock()
        .expect("lock")
        .iter()
        .filter(|(s, _)| s == "logs")
        .map(|(_, body)| ExportLogsServiceRequest::decode(body.as_slice()).expect("decode"))
        .flat_map(|r| r.resource_logs)
        .collect::<Vec<_>>();
    let service = attrs(&logs[0].resource.as_ref().expect("resource").attributes);
    assert_eq!(service["service.name"], "tether-example-host");
    let sessions: BTreeSet<String> = logs
        .iter()
        .flat_map(|rl| &rl.scope_logs)
        .flat_map(|sl| &sl.log_records)
        .filter_map(|r| attrs(&r.attributes).get("tether.session.id").cloned())
        .collect();
    assert_eq!(sessions, BTreeSet::from(["example-session".to_owned()]));
}

/// GIVEN `tether probe --otlp URL --observe-servers` with a real third-party
/// server THEN the relay's requests are exported as the sentinel's are: MCP
/// server spans named by method, credited to that server, over a pipe.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relayed_servers_are_exported_like_the_hosts_own() {
    let Some(everything) = tether_tests::peer("node_modules/.bin/mcp-server-everything") else {
        return;
    };
    tether_tests::workspace_bin("tether-relay");
    let (addr, captured) = receiver().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("mcp.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"everything": {"command": everything, "args": []}}})
            .to_string(),
    )
    .expect("config");
    let url = format!("http://{addr}");
    let extra: Vec<String> = vec![
        "--otlp".into(),
        url,
        "--config".into(),
        config.display().to_string(),
        "--server".into(),
        "everything".into(),
        "--observe-servers".into(),
    ];
    let out = tokio::task::spawn_blocking(move || run_probe(&[], &extra))
        .await
        .expect("probe");
    assert_eq!(verdict(&out), "active");
    let spans = spans(&captured);
    let relayed: Vec<&(String, HashMap<String, String>)> = spans
        .iter()
        .filter(|(_, a)| a.get("tether.server.name").map(String::as_str) == Some("everything"))
        .collect();
    let names: BTreeSet<&str> = relayed.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.contains("initialize"), "{names:?} of {spans:#?}");
    assert!(names.contains("tools/list"), "{names:?}");
    for (_, a) in &relayed {
        assert_eq!(
            a.get("network.transport").map(String::as_str),
            Some("pipe"),
            "{a:?}"
        );
    }
}
