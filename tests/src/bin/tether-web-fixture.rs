//! `tether-web-fixture [--db FILE] [--say LINE] [--secret VALUE]`: a host with
//! the live status service and two sessions run by real agents, for the web
//! tests (Rust API tests and the Playwright specs).
//!
//! - `alpha`: the reference agent. `kandev` (the host's observed server)
//!   reaches Active; `notes` (a third-party stdio server, with a planted
//!   secret in its env and arguments) stays Delivered · unverified.
//! - `beta`: the fake agent, connect-only, without HTTP or SSE, refusing
//!   session/new with a message naming `broken-db`. `kandev` (over the stdio
//!   bridge) reaches Connected, `remote-search` (HTTP) is Filtered and
//!   `broken-db` Failed.
//! - `gamma`: the fake agent, accepting the session and never connecting:
//!   `kandev` stays Delivered · connection unverified (an endpoint test of it
//!   must leave it so).
//!
//! Every row comes from evidence the agents produced. When both sessions
//! settle it prints one JSON line `{url, login_url, token, sessions}` and
//! then reads commands on stdin, one per line, answering `ok` or an error:
//! `renew SESSION` (a new attempt: a live change), `remove SESSION`,
//! `publish SESSION TOOL` (a `tool_call_observed` on the session's `kandev`
//! row; answers `ok EPOCH_MS`, the wall-clock time of the publish, for the
//! page-latency bench), `login` (prints a fresh one-time login URL), `quit`.
//! EOF quits too.
//! Agents and servers are killed by process group on the way out.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    InitializeRequest, RequestPermissionRequest, SessionNotification,
};
use agent_client_protocol::{Agent, Client, schema::ProtocolVersion};
use tether_acp_structured::acp::{
    SessionRequestKind, answer_permission, deliver_session, stdio_lines,
};
use tether_core::DriveMode;
use tether_core::registry::{PluginSource, Registry};
use tether_core::spec::{Endpoint, KeyValue, ServerSpec};
use tether_core::store::Store;
use tether_core::vocab::{ServerSource, Trigger};
use tether_diagnostics::api::Diagnostics;
use tether_hub::{AttemptRequest, Hub, HubConfig};
use tether_kandev_endpoint::{AttemptCredential, ObservedEndpoint, Sentinel};
use tether_process::{ChildGroup, ChildSpec};
use tether_web::StatusService;
use tokio::io::AsyncBufReadExt;
use tokio::sync::mpsc;

fn arg(args: &[String], flag: &str) -> Option<String> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

fn sibling(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    dir.join(name)
}

struct SessionPlan {
    id: &'static str,
    program: PathBuf,
    args: Vec<String>,
    extra: Vec<ServerSpec>,
    /// Whether the agent connects to `kandev` (the fixture then waits for it).
    connects: bool,
}

enum Command {
    Renew(tokio::sync::oneshot::Sender<Result<(), String>>),
}

fn third_party(secret: &str) -> Vec<ServerSpec> {
    vec![ServerSpec::new(
        "notes",
        ServerSource::Profile,
        Endpoint::Stdio {
            command: sibling("tether-modern-mcp").display().to_string(),
            args: vec![format!("--api-key={secret}")],
            env: vec![KeyValue::new("NOTES_TOKEN", secret)],
            cwd: None,
        },
    )]
}

fn beta_servers(secret: &str) -> Vec<ServerSpec> {
    vec![
        ServerSpec::new(
            "remote-search",
            ServerSource::Profile,
            Endpoint::Http {
                url: format!("https://user:{secret}@search.example.invalid/mcp?key={secret}"),
                headers: vec![KeyValue::new("Authorization", format!("Bearer {secret}"))],
            },
        ),
        ServerSpec::new(
            "broken-db",
            ServerSource::Profile,
            Endpoint::Stdio {
                command: "tether-missing-db-server".into(),
                args: vec![format!("--password={secret}")],
                env: vec![],
                cwd: None,
            },
        ),
    ]
}

/// Runs one agent for one session: a first attempt, then one more per
/// `renew`, until the command channel closes.
/// The current attempt's sink per session (for `publish`).
type Sinks = Arc<std::sync::Mutex<std::collections::BTreeMap<String, tether_hub::EvidenceSink>>>;

async fn run_session(
    sinks: Sinks,
    hub: Arc<Hub>,
    diagnostics: Arc<Diagnostics>,
    plan: SessionPlan,
    settled: tokio::sync::oneshot::Sender<()>,
    mut commands: mpsc::Receiver<Command>,
    workdir: PathBuf,
) -> anyhow::Result<()> {
    let endpoint = ObservedEndpoint::start("kandev", || Sentinel).await?;
    let bridge = sibling("tether-bridge");
    let command = ChildSpec {
        program: plan.program.display().to_string(),
        args: plan.args.clone(),
        env: vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())],
        inherit_env: false,
        cwd: workdir.clone(),
    };
    let (mut process, stdin, stdout) = ChildGroup::spawn(&command)?;
    let tail = process.stderr_tail();
    let session = plan.id;
    let mut settled = Some(settled);
    let result = Client
        .v1()
        .on_receive_request(
            async move |r: RequestPermissionRequest, responder, _cx| {
                responder.respond(answer_permission(&r, &[]))
            },
            agent_client_protocol::on_receive_request!(),
        )
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
                let mut reply: Option<tokio::sync::oneshot::Sender<Result<(), String>>> = None;
                loop {
                    let credential = AttemptCredential::generate();
                    let mut servers =
                        vec![endpoint.server_spec(ServerSource::Host, Some(&bridge), &credential)];
                    servers.extend(plan.extra.iter().cloned());
                    let mut request = AttemptRequest::new(
                        tether_core::Owner {
                            task: "web-fixture".into(),
                            session: session.into(),
                            execution: format!("exec-{session}-{}", std::process::id()).into(),
                        },
                        plan.program
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_default(),
                        DriveMode::Acp,
                        Trigger::SessionNew,
                        servers,
                    );
                    request.capabilities = caps;
                    let mut delivery = deliver_session(
                        &cx,
                        &hub,
                        request,
                        SessionRequestKind::New,
                        &workdir,
                        |h| {
                            diagnostics.remember_attempt(session, h);
                            sinks
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .insert(session.to_owned(), h.sink.clone());
                            endpoint.bind(h.sink.clone(), credential.clone());
                        },
                    )
                    .map_err(|e| {
                        agent_client_protocol::Error::internal_error().data(e.to_string())
                    })?;
                    // The execution is live: its stderr tail is the session's recent output.
                    diagnostics.attach_output(session, Arc::clone(&tail));
                    let _ = delivery.settle().await;
                    // Give the agent's MCP traffic a moment to land, bounded.
                    for _ in 0..if plan.connects { 40 } else { 0 } {
                        hub.flush().await;
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        let done = hub.snapshot(session).and_then(|h| {
                            h.attempt(&delivery.handle.attempt_id).map(|a| {
                                a.servers.iter().any(|r| {
                                    r.name == "kandev"
                                        && matches!(
                                            r.status,
                                            tether_core::vocab::DisplayStatus::Active
                                                | tether_core::vocab::DisplayStatus::Connected
                                        )
                                })
                            })
                        });
                        if done == Some(true) {
                            break;
                        }
                    }
                    if let Some(s) = settled.take() {
                        let _ = s.send(());
                    }
                    if let Some(r) = reply.take() {
                        let _ = r.send(Ok(()));
                    }
                    match commands.recv().await {
                        Some(Command::Renew(r)) => reply = Some(r),
                        None => break,
                    }
                }
                Ok(())
            },
        )
        .await;
    diagnostics.detach_output(session);
    process.kill_group().await;
    endpoint.shutdown().await;
    result.map_err(|e| anyhow::anyhow!("ACP ({session}): {}", e.message))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let secret = arg(&args, "--secret").unwrap_or_else(|| "sk-fixture-planted-0123456789".into());
    let say = arg(&args, "--say").unwrap_or_else(|| "fake agent output line".into());
    let mut registry = Registry::empty();
    registry.add(
        Arc::new(tether_acp_structured::AcpStructured),
        PluginSource::Static,
    )?;
    let hub = Arc::new(match arg(&args, "--db") {
        Some(db) => {
            let store: Arc<dyn Store> = Arc::new(tether_store::SqliteStore::open(Path::new(&db))?);
            Hub::with_store(registry, HubConfig::default(), store)
        }
        None => Hub::with_config(registry, HubConfig::default()),
    });
    let diagnostics = Arc::new(Diagnostics::new(tether_diagnostics::api::allow_all()));
    let workdir = std::env::temp_dir().join(format!("tether-web-fixture-{}", std::process::id()));
    std::fs::create_dir_all(&workdir)?;

    let plans = vec![
        SessionPlan {
            id: "alpha",
            program: sibling("tether-reference-agent"),
            args: vec![],
            extra: third_party(&secret),
            connects: true,
        },
        SessionPlan {
            id: "beta",
            program: sibling("tether-fake-agent"),
            args: vec![
                "--mode".into(),
                "connect-only".into(),
                "--mode".into(),
                "no-http-sse".into(),
                "--fail-session-new".into(),
                "MCP server broken-db failed to start: command not found".into(),
                "--say".into(),
                format!("{say} (token={secret})"),
            ],
            extra: beta_servers(&secret),
            connects: true,
        },
        SessionPlan {
            id: "gamma",
            program: sibling("tether-fake-agent"),
            args: vec!["--mode".into(), "ignore".into()],
            extra: vec![],
            connects: false,
        },
    ];
    let mut senders = std::collections::BTreeMap::new();
    let sinks: Sinks = Arc::default();
    let mut tasks = Vec::new();
    for plan in plans {
        let (settled_tx, settled_rx) = tokio::sync::oneshot::channel();
        let (cmd_tx, cmd_rx) = mpsc::channel(4);
        let id = plan.id;
        senders.insert(id.to_owned(), cmd_tx);
        let task = tokio::spawn(run_session(
            Arc::clone(&sinks),
            Arc::clone(&hub),
            Arc::clone(&diagnostics),
            plan,
            settled_tx,
            cmd_rx,
            workdir.clone(),
        ));
        tokio::time::timeout(Duration::from_secs(30), settled_rx)
            .await
            .map_err(|_| anyhow::anyhow!("session {id} did not settle in 30 s"))?
            .map_err(|_| anyhow::anyhow!("session {id} ended before it settled"))?;
        tasks.push(task);
    }

    let running = StatusService::for_hub(Arc::clone(&hub), Some(Arc::clone(&diagnostics)))
        .serve("127.0.0.1:0".parse()?)
        .await?;
    println!(
        "{}",
        serde_json::json!({
            "url": running.url(),
            "login_url": running.login_url(),
            "token": running.token().secret(),
            "sessions": hub.sessions(),
        })
    );

    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let mut words = line.split_whitespace();
        let answer = match (words.next(), words.next()) {
            (Some("renew"), Some(id)) => match senders.get(id) {
                Some(tx) => {
                    let (r_tx, r_rx) = tokio::sync::oneshot::channel();
                    if tx.send(Command::Renew(r_tx)).await.is_err() {
                        Err("that session's agent is gone".to_owned())
                    } else {
                        r_rx.await.unwrap_or_else(|_| Err("no answer".into()))
                    }
                }
                None => Err(format!("no session {id}")),
            },
            (Some("remove"), Some(id)) => {
                senders.remove(id);
                diagnostics.forget(id);
                hub.remove(id)
                    .map(|_| ())
                    .ok_or_else(|| format!("no session {id}"))
            }
            (Some("publish"), Some(id)) => {
                let sink = sinks
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get(id)
                    .cloned();
                match (sink, words.next()) {
                    (Some(sink), Some(tool)) => {
                        let at = std::time::SystemTime::now()
                            .duration_since(std::time::UNIX_EPOCH)
                            .unwrap_or_default();
                        let evidence = tether_core::model::Evidence::new(
                            tether_core::vocab::EvidenceKind::ToolCallObserved,
                            tether_hub::now(),
                        )
                        .server("kandev")
                        .tool_call(tool, true);
                        match sink.publish(evidence) {
                            Ok(()) => {
                                println!("ok {:.3}", at.as_secs_f64() * 1000.0);
                                continue;
                            }
                            Err(e) => Err(e.to_string()),
                        }
                    }
                    _ => Err("usage: publish SESSION TOOL".into()),
                }
            }
            (Some("login"), None) => {
                println!("{}", running.login_url());
                Ok(())
            }
            (Some("quit"), None) => break,
            _ => Err(format!("unknown command {line:?}")),
        };
        match answer {
            Ok(()) => println!("ok"),
            Err(e) => println!("error: {e}"),
        }
    }
    drop(senders);
    for task in tasks {
        let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
    }
    running.shutdown().await;
    hub.flush().await;
    hub.flush_store();
    let _ = std::fs::remove_dir_all(&workdir);
    Ok(())
}
