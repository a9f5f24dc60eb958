//! A host with a fleet's worth of sessions, for the fleet page's benchmark:
//! `--sessions N` attempts on a real hub (planned by the ACP plugin, moved
//! by evidence through the reducer: active, connected, failed, needs-auth,
//! delivered), spread over the last week and six harness names, served by
//! the real status service on 127.0.0.1.
//!
//! Prints one JSON line `{url, login_url, token, sessions}`, then reads
//! commands: `new ID` begins a session now and answers `ok EPOCH_MS` (the
//! wall-clock time it was begun), `quit` ends.

use std::sync::Arc;

use tether_core::model::{Evidence, Timestamp};
use tether_core::registry::{PluginSource, Registry};
use tether_core::spec::{Endpoint, ServerSpec};
use tether_core::vocab::{EvidenceKind, ReasonCode, ServerSource, Trigger};
use tether_core::{DriveMode, Owner};
use tether_hub::{AttemptRequest, Hub, HubConfig};
use tether_web::StatusService;
use tokio::io::AsyncBufReadExt;

const HARNESSES: [&str; 6] = ["claude", "codex", "gemini", "qwen", "copilot", "opencode"];
const SERVERS: [&str; 8] = [
    "github", "time", "docs", "postgres", "search", "notes", "jira", "browser",
];

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn spec(name: &str) -> ServerSpec {
    ServerSpec::new(
        name,
        ServerSource::Profile,
        Endpoint::Http {
            url: format!("http://127.0.0.1:9/{name}"),
            headers: vec![],
        },
    )
}

/// Begins session `id` at `at` with a few servers, and moves them by
/// evidence: one active, one connected, one failed (every seventh needs
/// auth), the rest delivered.
fn begin(hub: &Hub, id: &str, n: usize, at: Timestamp) -> anyhow::Result<()> {
    let harness = HARNESSES[n % HARNESSES.len()];
    let count = 3 + n % 4;
    let names: Vec<&str> = (0..count)
        .map(|i| SERVERS[(n + i * 3) % SERVERS.len()])
        .collect();
    let mut request = AttemptRequest::new(
        Owner {
            task: "fleet".into(),
            session: id.into(),
            execution: format!("exec-{id}").into(),
        },
        harness,
        DriveMode::Acp,
        Trigger::SessionNew,
        names.iter().map(|n| spec(n)).collect(),
    );
    request.capabilities.http = Some(true);
    let handle = hub.begin_attempt_at(request, at)?;
    let sink = handle.sink;
    sink.publish(
        Evidence::new(EvidenceKind::SessionAccepted, at).acp_session(format!("acp-{id}")),
    )?;
    for (i, name) in names.iter().enumerate() {
        let evidence = match i {
            0 => Some(
                Evidence::new(EvidenceKind::ToolsListObserved, at)
                    .server(*name)
                    .tools(5),
            ),
            1 => Some(Evidence::new(EvidenceKind::InitializeObserved, at).server(*name)),
            2 if n.is_multiple_of(7) => Some(
                Evidence::new(EvidenceKind::ExplicitError, at)
                    .server(*name)
                    .reason(ReasonCode::AuthRequired, None),
            ),
            2 if n.is_multiple_of(3) => Some(
                Evidence::new(EvidenceKind::ExplicitError, at)
                    .server(*name)
                    .reason(ReasonCode::ConnectionRefused, None),
            ),
            _ => None,
        };
        if let Some(evidence) = evidence {
            sink.publish(evidence)?;
        }
    }
    Ok(())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sessions: usize = arg(&args, "--sessions")
        .map(|n| n.parse())
        .transpose()?
        .unwrap_or(10_000);
    let mut registry = Registry::empty();
    registry.add(
        Arc::new(tether_acp_structured::AcpStructured),
        PluginSource::Static,
    )?;
    let hub = Arc::new(Hub::with_config(registry, HubConfig::default()));
    let now = tether_hub::now();
    let week = 7 * 86_400_000u64;
    for n in 0..sessions {
        let at = Timestamp(
            now.0
                .saturating_sub(week * n as u64 / sessions.max(1) as u64),
        );
        begin(&hub, &format!("s{n:05}"), n, at)?;
    }
    hub.flush().await;
    let running = StatusService::for_hub(Arc::clone(&hub), None)
        .serve("127.0.0.1:0".parse()?)
        .await?;
    println!(
        "{}",
        serde_json::json!({
            "url": running.url(),
            "login_url": running.login_url(),
            "token": running.token().secret(),
            "sessions": hub.sessions().len(),
        })
    );
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut n = sessions;
    while let Ok(Some(line)) = lines.next_line().await {
        let mut words = line.split_whitespace();
        match (words.next(), words.next()) {
            (Some("new"), Some(id)) => {
                let wall = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default();
                n += 1;
                match begin(&hub, id, n, tether_hub::now()) {
                    Ok(()) => println!("ok {:.3}", wall.as_secs_f64() * 1000.0),
                    Err(e) => println!("error: {e}"),
                }
            }
            (Some("quit"), None) => break,
            _ => println!("error: unknown command {line:?}"),
        }
    }
    running.shutdown().await;
    Ok(())
}
