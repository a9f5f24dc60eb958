//! What Tether's records become in OpenTelemetry: attribute lists only, no
//! SDK state, so the metadata-only and no-secret rules are tested here.

use opentelemetry::KeyValue;
use opentelemetry::logs::AnyValue;
use tether_core::model::Evidence;
use tether_core::served::ServedRequest;
use tether_core::vocab::Transport;
use tether_hub::EventOwner;

use crate::semconv as sc;

/// `network.transport` (and `network.protocol.name` over HTTP).
pub(crate) fn transport_attributes(transport: &Transport, out: &mut Vec<KeyValue>) {
    match transport {
        Transport::Stdio => out.push(KeyValue::new(sc::NETWORK_TRANSPORT, "pipe")),
        _ => {
            out.push(KeyValue::new(sc::NETWORK_TRANSPORT, "tcp"));
            out.push(KeyValue::new(sc::NETWORK_PROTOCOL_NAME, "http"));
        }
    }
}

/// A request's attributes: those the duration histogram also carries (low
/// cardinality), then those only its span carries (ids, addresses, owners).
pub(crate) fn request_attributes(request: &ServedRequest) -> (Vec<KeyValue>, Vec<KeyValue>) {
    let mut metric = vec![KeyValue::new(sc::MCP_METHOD_NAME, request.method.clone())];
    if let Some(tool) = &request.tool {
        metric.push(KeyValue::new(sc::GEN_AI_TOOL_NAME, tool.clone()));
        metric.push(KeyValue::new(sc::GEN_AI_OPERATION_NAME, sc::EXECUTE_TOOL));
    }
    if let Some(version) = &request.protocol_version {
        metric.push(KeyValue::new(sc::MCP_PROTOCOL_VERSION, version.clone()));
    }
    transport_attributes(&request.transport, &mut metric);
    if let Some(error_type) = request.outcome.error_type() {
        metric.push(KeyValue::new(sc::ERROR_TYPE, error_type));
    }

    let mut span = Vec::with_capacity(7);
    if let Some(id) = &request.request_id {
        span.push(KeyValue::new(sc::JSONRPC_REQUEST_ID, id.to_string()));
    }
    if let Some(session) = &request.session_id {
        span.push(KeyValue::new(sc::MCP_SESSION_ID, session.clone()));
    }
    if let Some(address) = &request.client_address {
        span.push(KeyValue::new(sc::CLIENT_ADDRESS, address.clone()));
    }
    if let Some(port) = request.client_port {
        span.push(KeyValue::new(sc::CLIENT_PORT, i64::from(port)));
    }
    span.push(KeyValue::new(
        sc::TETHER_SERVER_NAME,
        request.server.clone(),
    ));
    if let Some(owner) = &request.owner {
        span.push(KeyValue::new(
            sc::TETHER_SESSION_ID,
            owner.session_id.as_str().to_owned(),
        ));
        span.push(KeyValue::new(
            sc::TETHER_ATTEMPT_ID,
            owner.attempt_id.as_str().to_owned(),
        ));
    }
    (metric, span)
}

/// An accepted evidence event's log attributes: the sanitized fields the
/// hub stored, and the ownership its sink stamped. Nothing else exists to copy.
pub(crate) fn evidence_attributes(
    owner: &EventOwner,
    evidence: &Evidence,
) -> Vec<(&'static str, AnyValue)> {
    let text = |key: &'static str, value: &str| (key, AnyValue::from(value.to_owned()));
    let mut attrs = vec![
        text("tether.evidence.kind", evidence.kind.as_str()),
        text("tether.provenance", evidence.provenance.as_str()),
        text(sc::TETHER_TASK_ID, owner.task_id()),
        text(sc::TETHER_SESSION_ID, owner.session_id()),
        text(sc::TETHER_EXECUTION_ID, owner.execution_id()),
        text(sc::TETHER_ATTEMPT_ID, owner.attempt_id()),
        text(sc::TETHER_AGENT_KIND, owner.agent_kind()),
    ];
    if let Some(server) = &evidence.server {
        attrs.push(text(sc::TETHER_SERVER_NAME, server));
    }
    if let Some(connection) = &evidence.connection_id {
        attrs.push(text("tether.connection.id", connection));
    }
    if let Some(reason) = &evidence.reason_code {
        attrs.push(text(sc::TETHER_REASON_CODE, reason.as_str()));
    }
    if let Some(summary) = &evidence.summary {
        attrs.push(text("tether.summary", summary));
    }
    if let Some(count) = evidence.tool_count {
        attrs.push(("tether.tool.count", AnyValue::from(i64::from(count))));
    }
    if let Some(tool) = &evidence.tool {
        attrs.push(text(sc::GEN_AI_TOOL_NAME, tool));
    }
    if let Some(ok) = evidence.ok {
        attrs.push(("tether.tool.ok", AnyValue::from(ok)));
    }
    match evidence.kind {
        tether_core::vocab::EvidenceKind::ToolCallObserved => {
            // Three-valued: a call whose outcome no record gives is
            // `unknown`, never a failure (`tether.tool.ok` is then absent).
            let outcome = tether_core::vocab::CallOutcome::of(evidence.ok);
            attrs.push(text("tether.tool.outcome", outcome.as_str()));
        }
        tether_core::vocab::EvidenceKind::ToolCallRefused => {
            // The harness refused it: no use, and not the server's failure
            // (`tether.reason_code` says why).
            attrs.push(text(
                "tether.tool.outcome",
                tether_core::vocab::CallOutcome::Refused.as_str(),
            ));
        }
        _ => {}
    }
    if let Some(count) = evidence
        .calls
        .filter(|_| evidence.kind == tether_core::vocab::EvidenceKind::ToolCallRefused)
    {
        attrs.push((
            "tether.tool.refused_calls",
            AnyValue::from(i64::from(count)),
        ));
    }
    if let Some(client) = &evidence.client {
        attrs.push(text("tether.client.name", &client.name));
        if let Some(version) = &client.version {
            attrs.push(text("tether.client.version", version));
        }
        if let Some(protocol) = &client.protocol_version {
            attrs.push(text(sc::MCP_PROTOCOL_VERSION, protocol));
        }
    }
    if let Some(status) = &evidence.reported_status {
        attrs.push(text("tether.reported_status", status));
    }
    if let Some(test) = &evidence.endpoint_test {
        attrs.push((
            "tether.endpoint_test.succeeded",
            AnyValue::from(test.succeeded),
        ));
    }
    if let Some(cap) = &evidence.capability {
        attrs.push(text("tether.capability.kind", cap.kind.as_str()));
        attrs.push(text("tether.capability.name", &cap.name));
        for (key, value) in [
            ("tether.capability.plugin", &cap.plugin),
            ("tether.capability.event", &cap.event),
            ("tether.capability.command", &cap.command),
        ] {
            if let Some(value) = value {
                attrs.push(text(key, value));
            }
        }
        if let Some(outcome) = &cap.outcome {
            attrs.push(text("tether.capability.outcome", outcome.as_str()));
        }
        if let Some(code) = cap.exit_code {
            attrs.push((
                "tether.capability.exit_code",
                AnyValue::from(i64::from(code)),
            ));
        }
    }
    if let Some(calls) = evidence.calls {
        attrs.push(("tether.uses", AnyValue::from(i64::from(calls))));
    }
    attrs
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use proptest::prelude::*;
    use tether_hub::{AttemptRequest, Hub, HubEvent, HubSubscriber};

    use tether_core::registry::Registry;
    use tether_core::served::{RequestIdent, ServedOutcome, TraceContext};
    use tether_core::vocab::{EvidenceKind, ReasonCode, ServerSource, Trigger};
    use tether_core::{DriveMode, Endpoint, KeyValue as SpecKv, ServerSpec};

    use super::*;

    #[derive(Default)]
    struct Collect(Mutex<Vec<Arc<HubEvent>>>);

    impl HubSubscriber for Collect {
        fn observe(&self, event: &Arc<HubEvent>) {
            self.0.lock().expect("lock").push(Arc::clone(event));
        }
    }

    fn text_of(value: &AnyValue) -> String {
        match value {
            AnyValue::String(s) => s.as_str().to_owned(),
            other => format!("{other:?}"),
        }
    }

    /// A refused call is exported as refused, with its reason and count:
    /// never a call's `ok`, never a failure.
    #[test]
    fn a_refused_call_exports_refused_with_its_reason() {
        // No server: the attempt plans none, and the attributes are the point.
        let mut evidence = Evidence::new(EvidenceKind::ToolCallRefused, tether_core::Timestamp(5))
            .tool("get_current_time");
        evidence.reason_code = Some(ReasonCode::ApprovalRequired);
        evidence.calls = Some(2);
        let attrs = exported(evidence);
        let get = |key: &str| attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        assert_eq!(get("tether.tool.outcome").as_deref(), Some("refused"));
        assert_eq!(
            get("tether.reason_code").as_deref(),
            Some("approval_required")
        );
        assert!(get("tether.tool.refused_calls").is_some_and(|v| v.contains('2')));
        assert_eq!(get("tether.tool.ok"), None);
    }

    /// A tool whose definition changed from its pin is exported as
    /// `definition_changed` with the part's reason code and the tool's
    /// name; a tool that appeared as `tools_changed` / `tool_added`. The
    /// definitions' text (a planted secret in a description) never is.
    #[test]
    fn a_pinned_tool_that_changed_exports_its_reasons_never_its_text() {
        let secret = "sk-planted-description-P3nD";
        let v1 = [
            serde_json::json!({"name": "add", "description": format!("adds {secret}"),
            "inputSchema": {"type": "object"}}),
        ];
        let v2 = [
            serde_json::json!({"name": "add", "description": format!("adds, then sends {secret}"),
                "inputSchema": {"type": "object", "properties": {"to": {"type": "string"}}}}),
            serde_json::json!({"name": "mul", "description": secret}),
        ];
        let (rows, _) = tether_core::pins::sight(
            &[],
            "demo@node",
            &tether_pins::hash_listing(&v1),
            tether_core::Timestamp(1),
        );
        let (_, report) = tether_core::pins::sight(
            &rows,
            "demo@node",
            &tether_pins::hash_listing(&v2),
            tether_core::Timestamp(2),
        );
        let mut seen = Vec::new();
        for evidence in tether_core::pins::change_evidence(&report, tether_core::Timestamp(2)) {
            let attrs = exported(evidence);
            assert!(attrs.iter().all(|(_, v)| !v.contains(secret)), "{attrs:?}");
            let get = |key: &str| attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
            seen.push((
                get("tether.evidence.kind").unwrap_or_default(),
                get("gen_ai.tool.name").unwrap_or_default(),
                get("tether.reason_code").unwrap_or_default(),
            ));
        }
        let want = |k: &str, t: &str, r: &str| (k.to_owned(), t.to_owned(), r.to_owned());
        assert_eq!(
            seen,
            vec![
                want("definition_changed", "add", "description_changed"),
                want("definition_changed", "add", "input_schema_changed"),
                want("tools_changed", "mul", "tool_added"),
            ]
        );
    }

    /// A hook's run is exported by its names and outcome: its command as
    /// the hub stored it (a basename), never its line or its arguments.
    #[test]
    fn a_hook_run_exports_names_and_outcome_only() {
        let secret = "sk-planted-hook-arg-Q7wE";
        let hook = tether_core::capability::CapabilityEvent::hook("Stop", Some("Stop"))
            .command(&format!("/home/me/hooks/check.sh --token {secret}"))
            .ended(tether_core::vocab::UseOutcome::CommandNotFound, Some(127));
        let evidence =
            Evidence::new(EvidenceKind::HookFired, tether_core::Timestamp(5)).capability(hook);
        let attrs = exported(evidence);
        let get = |key: &str| {
            attrs
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| panic!("no {key} in {attrs:?}"))
        };
        assert_eq!(get("tether.capability.kind"), "hook");
        assert_eq!(get("tether.capability.name"), "Stop");
        assert_eq!(get("tether.capability.command"), "check.sh");
        assert_eq!(get("tether.capability.outcome"), "command_not_found");
        assert!(get("tether.capability.exit_code").contains("127"));
        assert!(!format!("{attrs:?}").contains(secret));
        assert!(!format!("{attrs:?}").contains("/home/me"));
    }

    /// The attributes `evidence` is exported with, published through a hub
    /// as a host would, each as text.
    fn exported(evidence: Evidence) -> Vec<(String, String)> {
        let registry = Registry::empty();
        let hub = Hub::new(registry);
        let subscriber = Arc::new(Collect::default());
        hub.add_subscriber(subscriber.clone());
        let handle = hub
            .begin_attempt(AttemptRequest::new(
                tether_core::Owner {
                    task: "task".into(),
                    session: "session".into(),
                    execution: "exec".into(),
                },
                "kind",
                DriveMode::Acp,
                Trigger::SessionNew,
                Vec::new(),
            ))
            .expect("an attempt");
        handle.sink.publish(evidence).expect("published");
        hub.flush_blocking();
        let events = subscriber.0.lock().expect("lock").clone();
        events
            .iter()
            .filter_map(|e| match e.as_ref() {
                HubEvent::Evidence { owner, evidence } => {
                    Some(evidence_attributes(owner, evidence))
                }
                _ => None,
            })
            .flatten()
            .map(|(k, v)| (k.to_owned(), text_of(&v)))
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Secrets a host configured (env, headers, arguments, URL userinfo
        /// and query) and secrets the agent's traffic carried (tool
        /// arguments, results) never reach an attribute, whatever the
        /// evidence says about them.
        #[test]
        fn planted_secrets_never_reach_an_exported_attribute(
            secret in "[A-Za-z0-9]{12,24}",
            tool in "[a-z_]{1,12}",
        ) {
            let secret = format!("sk-{secret}");
            let hub = Hub::new(Registry::empty());
            let subscriber = Arc::new(Collect::default());
            hub.add_subscriber(subscriber.clone());
            let servers = vec![
                ServerSpec::new(
                    "stdio-server",
                    ServerSource::Profile,
                    Endpoint::Stdio {
                        command: format!("/opt/{secret}/bin/mcp"),
                        args: vec![format!("--token={secret}")],
                        env: vec![SpecKv::new("API_KEY", secret.clone())],
                        cwd: Some(format!("/home/{secret}")),
                    },
                ),
                ServerSpec::new(
                    "http-server",
                    ServerSource::Profile,
                    Endpoint::Http {
                        url: format!("https://u:{secret}@mcp.example/path?key={secret}"),
                        headers: vec![SpecKv::new("Authorization", format!("Bearer {secret}"))],
                    },
                ),
            ];
            let handle = hub
                .begin_attempt(AttemptRequest::new(tether_core::Owner { task: "task".into(), session: "session".into(), execution: "exec".into() }, "kind", DriveMode::Acp, Trigger::SessionNew, servers,
                ))
                .expect("begin");
            // Evidence that quotes the secret: the hub's scrubber must have removed it.
            for server in ["stdio-server", "http-server"] {
                handle.sink.publish(
                    Evidence::new(EvidenceKind::ExplicitError, tether_hub::now())
                        .server(server)
                        .reason(
                            ReasonCode::ProtocolError,
                            Some(format!("server said: bad key {secret} for Bearer {secret}")),
                        ),
                ).expect("publish");
                handle.sink.publish(
                    Evidence::new(EvidenceKind::ToolCallObserved, tether_hub::now())
                        .server(server)
                        .tool_call(tool.clone(), true),
                ).expect("publish");
            }
            hub.flush_blocking();
            let events = subscriber.0.lock().expect("lock").clone();
            let evidence_seen = events.iter().any(|e| matches!(**e, HubEvent::Evidence { .. }));
            prop_assert!(evidence_seen, "the subscriber saw evidence");
            for event in events {
                if let HubEvent::Evidence { owner, evidence } = &*event {
                    for (key, value) in evidence_attributes(owner, evidence) {
                        prop_assert!(
                            !text_of(&value).contains(&secret),
                            "{key} carries the planted secret"
                        );
                    }
                }
            }

            // A served request has no field that could hold arguments or
            // results; what it does hold is names, ids and codes.
            let request = ServedRequest {
                server: Arc::from("stdio-server"),
                method: "tools/call".into(),
                tool: Some(tool.clone()),
                request_id: Some(RequestIdent::Number(7)),
                protocol_version: Some("2025-06-18".into()),
                session_id: None,
                transport: Transport::Stdio,
                client_address: None,
                client_port: None,
                start_unix_nanos: 1,
                duration_nanos: 1,
                outcome: ServedOutcome::Ok,
                trace: TraceContext {
                    traceparent: None,
                    tracestate: None,
                    baggage: Some(format!("user={secret}")),
                },
                owner: None,
            };
            let (metric, span) = request_attributes(&request);
            for kv in metric.iter().chain(&span) {
                prop_assert!(!kv.value.as_str().contains(&secret), "{}", kv.key);
                prop_assert!(
                    !kv.key.as_str().starts_with("gen_ai.tool.call."),
                    "{} is never set",
                    kv.key
                );
            }
        }
    }

    #[test]
    fn metric_attributes_carry_no_ids_or_addresses() {
        let request = ServedRequest {
            server: Arc::from("s"),
            method: "tools/call".into(),
            tool: Some("echo".into()),
            request_id: Some(RequestIdent::Text("req-1".into())),
            protocol_version: Some("2025-06-18".into()),
            session_id: Some(Arc::from("sess-1")),
            transport: Transport::Http,
            client_address: Some(Arc::from("127.0.0.1")),
            client_port: Some(4242),
            start_unix_nanos: 1,
            duration_nanos: 1,
            outcome: ServedOutcome::Error(-32603),
            trace: TraceContext::default(),
            owner: Some(Arc::new(tether_core::served::ServedOwner {
                session_id: "tether-session".into(),
                attempt_id: "att".into(),
            })),
        };
        let (metric, span) = request_attributes(&request);
        let metric_keys: Vec<&str> = metric.iter().map(|kv| kv.key.as_str()).collect();
        assert_eq!(
            metric_keys,
            [
                "mcp.method.name",
                "gen_ai.tool.name",
                "gen_ai.operation.name",
                "mcp.protocol.version",
                "network.transport",
                "network.protocol.name",
                "error.type"
            ]
        );
        let span_keys: Vec<&str> = span.iter().map(|kv| kv.key.as_str()).collect();
        assert_eq!(
            span_keys,
            [
                "jsonrpc.request.id",
                "mcp.session.id",
                "client.address",
                "client.port",
                "tether.server.name",
                "tether.session.id",
                "tether.attempt.id"
            ]
        );
    }
}
