//! Planted secrets never reach a status document: whatever a server's
//! configuration holds (URL userinfo, path, query, header and env values,
//! arguments) and whatever error text names it, the list, the session
//! document, the copy-safe diagnostics and the check document the service
//! serves carry none of it.

use std::sync::Arc;

use proptest::prelude::*;
use tether_core::model::{Evidence, Timestamp};
use tether_core::registry::{PluginSource, Registry};
use tether_core::vocab::{EvidenceKind, ReasonCode, ServerSource, Trigger};
use tether_core::{DriveMode, Endpoint, KeyValue, ServerSpec};
use tether_hub::{AttemptRequest, Hub};
use tether_web::documents::{CopyDiagnostics, SessionStatus, SessionSummary};

fn secret() -> impl Strategy<Value = String> {
    "[A-Za-z0-9]{12,40}".prop_filter("mixed letters and digits", |s| {
        s.bytes().any(|b| b.is_ascii_digit()) && s.bytes().any(|b| b.is_ascii_alphabetic())
    })
}

fn hub() -> Hub {
    let mut registry = Registry::empty();
    registry
        .add(
            Arc::new(tether_acp_structured::AcpStructured),
            PluginSource::Static,
        )
        .expect("plugin");
    Hub::new(registry)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn no_planted_secret_reaches_a_status_document(
        url_secret in secret(),
        header_value in secret(),
        env_value in secret(),
        arg in secret(),
        shape in 0usize..4,
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("rt");
        let hub = hub();
        let servers = vec![
            ServerSpec::new(
                "remote",
                ServerSource::Profile,
                Endpoint::Http {
                    url: format!("https://me:{url_secret}@mcp.example.com/{url_secret}?key={url_secret}"),
                    headers: vec![KeyValue::new("X-Api-Key", header_value.clone())],
                },
            ),
            ServerSpec::new(
                "local",
                ServerSource::Profile,
                Endpoint::Stdio {
                    command: format!("/home/{arg}/bin/mcp-local"),
                    args: vec![format!("--token={arg}")],
                    env: vec![KeyValue::new("LOCAL_TOKEN", env_value.clone())],
                    cwd: None,
                },
            ),
        ];
        let mut request = AttemptRequest::new(tether_core::Owner { task: "t".into(), session: "s".into(), execution: "e".into() }, "agent", DriveMode::Acp, Trigger::SessionNew, servers);
        request.capabilities.http = Some(true);
        let handle = hub.begin_attempt(request).expect("attempt");
        // Error text that quotes the configuration, as a real agent's might.
        let summary = match shape {
            0 => format!("spawn failed: LOCAL_TOKEN={env_value} --token={arg}"),
            1 => format!("401 from https://me:{url_secret}@mcp.example.com with X-Api-Key: {header_value}"),
            2 => format!("bad header value {header_value} and arg {arg}"),
            _ => format!("{env_value} {url_secret}"),
        };
        let _ = handle.sink.publish(
            Evidence::new(EvidenceKind::ExplicitError, Timestamp(5))
                .server("local")
                .reason(ReasonCode::ProtocolError, Some(summary)),
        );
        let _ = handle.sink.publish(
            Evidence::new(EvidenceKind::InitializeObserved, Timestamp(6)).server("remote"),
        );
        runtime.block_on(hub.flush());
        let history = hub.snapshot("s").expect("history");
        let documents = [
            serde_json::to_string(&SessionStatus::of(history.clone(), true)).expect("json"),
            serde_json::to_string(&SessionSummary::of(&history)).expect("json"),
            serde_json::to_string(&CopyDiagnostics::of(&history)).expect("json"),
            // `/api/v1/sessions/{id}/check`'s document, every server required.
            serde_json::to_string(&tether_requirements::document(vec![
                tether_requirements::check_stored(&history, &[]),
            ]))
            .expect("json"),
        ];
        for doc in &documents {
            for planted in [&url_secret, &header_value, &env_value, &arg] {
                prop_assert!(!doc.contains(planted.as_str()), "{planted:?} leaked: {doc}");
            }
        }
        // The documents still say what happened.
        prop_assert!(documents[0].contains("\"failed\""));
        prop_assert!(documents[0].contains("mcp.example.com"));
    }
}
