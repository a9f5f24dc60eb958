//! The ACP adapter across session/new, session/load and a reset: each delivery
//! begins a new attempt first, the previous one is superseded at once, and the
//! observed endpoint attributes each connection to the attempt it came in.

use std::sync::Arc;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{InitializeRequest, SessionNotification};
use agent_client_protocol::{Agent, Client, schema::ProtocolVersion};
use tether_acp_structured::AcpStructured;
use tether_acp_structured::acp::{SessionRequestKind, deliver_session, stdio_lines};
use tether_core::DriveMode;
use tether_core::registry::{PluginSource, Registry};
use tether_core::vocab::{DisplayStatus, ServerSource, Trigger};
use tether_hub::{AttemptRequest, Hub};
use tether_kandev_endpoint::{AttemptCredential, ObservedEndpoint};
use tether_process::{ChildGroup, ChildSpec};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_new_then_load_then_reset_then_each_is_its_own_attempt_and_history_keeps_them() {
    let cwd = tempfile::tempdir().expect("cwd");
    let cwd = std::fs::canonicalize(cwd.path()).expect("canonical");
    let mut registry = Registry::empty();
    registry
        .add(Arc::new(AcpStructured), PluginSource::Static)
        .expect("plugin");
    let hub = Hub::new(registry);
    let endpoint = ObservedEndpoint::start("kandev", || tether_kandev_endpoint::Sentinel)
        .await
        .expect("endpoint");
    let command = ChildSpec {
        program: env!("CARGO_BIN_EXE_tether-fake-agent").into(),
        args: vec!["--mode".into(), "lists".into()],
        env: vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())],
        inherit_env: false,
        cwd: cwd.clone(),
    };
    let (mut process, stdin, stdout) = ChildGroup::spawn(&command).expect("spawn");

    let result = Client
        .v1()
        .on_receive_notification(
            async move |_n: SessionNotification, _cx| Ok(()),
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_with(
            stdio_lines(stdin, stdout, None),
            async |cx: ConnectionTo<Agent>| {
                let init = cx
                    .send_request(InitializeRequest::new(ProtocolVersion::V1))
                    .block_task()
                    .await?;
                let caps = tether_acp_structured::acp::capabilities_of(&init);
                let request = |credential: &AttemptCredential| {
                    let mut r = AttemptRequest::new(
                        tether_core::Owner {
                            task: "task".into(),
                            session: "session".into(),
                            execution: "exec".into(),
                        },
                        "tether-fake-agent",
                        DriveMode::Acp,
                        Trigger::SessionNew,
                        vec![endpoint.server_spec(ServerSource::Host, None, credential)],
                    );
                    r.capabilities = caps;
                    r
                };
                let mut ids = Vec::new();
                let mut acp_id = String::new();
                for kind in [
                    SessionRequestKind::New,
                    SessionRequestKind::Load {
                        acp_session_id: String::new(),
                    },
                    SessionRequestKind::Reset,
                ] {
                    let kind = match kind {
                        SessionRequestKind::Load { .. } => SessionRequestKind::Load {
                            acp_session_id: acp_id.clone(),
                        },
                        other => other,
                    };
                    let credential = AttemptCredential::generate();
                    let mut delivery =
                        deliver_session(&cx, &hub, request(&credential), kind, &cwd, |h| {
                            endpoint.bind(h.sink.clone(), credential.clone());
                        })
                        .expect("deliver");
                    let outcome = delivery.settle().await;
                    assert!(outcome.accepted, "{outcome:?}");
                    if let Some(id) = outcome.acp_session_id {
                        acp_id = id;
                    }
                    ids.push(delivery.handle.attempt_id.clone());
                    hub.flush().await;
                }
                Ok(ids)
            },
        )
        .await;
    process.kill_group().await;
    let ids = result.expect("acp run");

    let history = hub.snapshot("session").expect("history");
    assert_eq!(history.attempts.len(), 3);
    let triggers: Vec<_> = history.attempts.iter().map(|a| a.trigger.clone()).collect();
    assert_eq!(
        triggers,
        [
            Trigger::SessionNew,
            Trigger::SessionLoad,
            Trigger::SessionReset
        ]
    );
    assert_eq!(history.current_attempt_id.as_deref(), Some(ids[2].as_str()));
    for (i, attempt) in history.attempts.iter().enumerate() {
        assert_eq!(attempt.attempt_id, ids[i]);
        assert_eq!(attempt.is_superseded(), i < 2, "attempt {i}");
        let row = attempt.server("kandev").expect("row");
        // The agent reconnects on every delivery, and each connection lands in its own attempt.
        assert_eq!(row.status, DisplayStatus::Active, "attempt {i}");
        assert_eq!(
            row.connections.len(),
            1,
            "attempt {i}: {:?}",
            row.connections
        );
        assert!(attempt.accepted_at.is_some());
    }
    let conns: Vec<_> = history
        .attempts
        .iter()
        .map(|a| a.server("kandev").and_then(|r| r.connection_id.clone()))
        .collect();
    assert!(conns[0] != conns[1] && conns[1] != conns[2]);
    // The load kept the agent's own session id.
    assert_eq!(
        history.attempts[0].acp_session_id,
        history.attempts[1].acp_session_id
    );
    endpoint.shutdown().await;
}
