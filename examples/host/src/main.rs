//! `tether-example-host --db PATH|postgres://… [--agent PATH] [--session ID]`: a host that
//! embeds tether-core with the plugin it selects (acp-structured), runs its own
//! observed MCP server, and takes the reference ACP agent through several
//! attempts, printing live updates while the hub writes through to SQLite.
//!
//! On a fresh session it runs new → load → new. Run again on the same `--db`,
//! it first rehydrates and prints the stored state, then adds a reset and a
//! new, so the earlier run's latest attempt stays in the bounded history.
//!
//! `--inventory HARNESS` (claude, codex, opencode, cursor, gemini) scans that
//! harness's configuration once and attaches the snapshot to every attempt,
//! so `tether history` shows what was configured at the time.
//!
//! `--config FILE --server NAME` (repeatable) adds third-party servers from a
//! `{"mcpServers"}` JSON or Codex TOML file to every attempt, beside the
//! host's own; with `--observe-servers` they reach the agent through Tether's
//! relay (stdio through `tether-relay`, HTTP and SSE through a loopback
//! proxy), so their rows show what they really served.
//!
//! `--otlp URL` (or the standard `OTEL_EXPORTER_OTLP_ENDPOINT` environment)
//! exports what the host observes over OTLP/HTTP: its server's request spans
//! and durations, attachment metrics and evidence logs (see
//! docs/OPENTELEMETRY.md). `OTEL_SDK_DISABLED=true` turns it off.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    InitializeRequest, RequestPermissionRequest, SessionNotification,
};
use agent_client_protocol::{Agent, Client, schema::ProtocolVersion};
use anyhow::Context;
use tether_acp_structured::acp::{
    SessionRequestKind, answer_permission, deliver_session, stdio_lines,
};
use tether_core::DriveMode;
use tether_core::history::AttachmentHistory;
use tether_core::registry::Registry;
use tether_core::store::Store;
use tether_core::vocab::{DisplayStatus, ServerSource, Trigger};
use tether_diagnostics::api::Diagnostics;
use tether_hub::{AttemptRequest, Hub, HubConfig};
use tether_inventory::{ScanContext, scan_all, scanners};
use tether_kandev_endpoint::{AttemptCredential, ObservedEndpoint, Sentinel};
use tether_process::{ChildGroup, ChildSpec};
use tether_store::SqliteStore;
use tether_words::display::status_label;

const SERVER: &str = "kandev";

fn arg(args: &[String], flag: &str) -> Option<String> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

fn print_history(prefix: &str, history: &AttachmentHistory) {
    for attempt in &history.attempts {
        let current = history.current_attempt_id.as_deref() == Some(attempt.attempt_id.as_str());
        let rows: Vec<String> = attempt
            .servers
            .iter()
            .map(|r| format!("{}: {}", r.name, status_label(r)))
            .collect();
        println!(
            "{prefix} {} {} ({}) {}",
            attempt.attempt_id,
            attempt.trigger,
            if current { "current" } else { "history" },
            rows.join(", ")
        );
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    // Every first-party plugin and scanner, registered.
    tether_first_party::link();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let db = arg(&args, "--db").context(
        "usage: tether-example-host --db PATH|postgres://… [--agent PATH] [--session ID] [--serve [--addr IP:PORT]] [--config FILE --server NAME… [--observe-servers]]",
    )?;
    let session = arg(&args, "--session").unwrap_or_else(|| "example-session".into());
    let agent = arg(&args, "--agent").map(PathBuf::from).or_else(|| {
        let exe = std::env::current_exe().ok()?;
        Some(exe.parent()?.join("tether-reference-agent"))
    });
    let agent = agent.context("cannot find tether-reference-agent; pass --agent")?;
    let snapshot = arg(&args, "--inventory").map(|harness| {
        let ctx = ScanContext::from_env(std::env::current_dir().ok());
        scan_all(&ctx, &scanners(), std::slice::from_ref(&harness)).for_harness(&harness)
    });

    // === Rehydrate ===
    // A SQLite file, or a PostgreSQL database shared with other hosts.
    let store: Arc<dyn Store> = if tether_store::is_postgres_url(&db) {
        let store = tether_store::PostgresStore::connect(&db)?;
        println!("store: {}", store.describe());
        Arc::new(store)
    } else {
        Arc::new(
            SqliteStore::open(std::path::Path::new(&db))
                .with_context(|| format!("opening {db}"))?,
        )
    };
    // Only the session this host resumes: in a fleet's database the other
    // rows belong to other hosts (a keyed read; a corrupt row is reported).
    let resumed = match store.load(&session) {
        Ok(found) => found,
        Err(err) => {
            println!("skipped the stored row of session {session}: {err}");
            None
        }
    };
    let mut registry = Registry::empty();
    registry.add(
        Arc::new(tether_acp_structured::AcpStructured),
        tether_core::registry::PluginSource::Static,
    )?;
    let hub = Arc::new(Hub::with_store(
        registry,
        HubConfig::default(),
        Arc::clone(&store),
    ));
    let mut otel_config = tether_otel::OtelConfig::from_env("tether-example-host");
    if let Some(url) = arg(&args, "--otlp") {
        otel_config = otel_config.with_endpoint(url);
    }
    let otel = tether_otel::TetherOtel::start(otel_config)?;
    if let Some(otel) = &otel {
        otel.watch_hub(&hub);
        println!("exporting to OpenTelemetry (OTLP/HTTP)");
    }
    let restored = resumed.is_some();
    if let Some(history) = &resumed {
        print_history("restored", history);
    }
    hub.restore(resumed.into_iter().collect());

    // === The live status view, with its actions ===
    // The host decides who may run diagnostics; this example allows the
    // holder of the service's token (the only principal it admits).
    let diagnostics = Arc::new(Diagnostics::new(tether_diagnostics::api::allow_all()));
    let serving = if args.iter().any(|a| a == "--serve") {
        let addr: std::net::SocketAddr = arg(&args, "--addr")
            .unwrap_or_else(|| "127.0.0.1:0".into())
            .parse()
            .context("--addr takes IP:PORT")?;
        let running =
            tether_web::StatusService::for_hub(Arc::clone(&hub), Some(Arc::clone(&diagnostics)))
                .serve(addr)
                .await
                .with_context(|| format!("cannot listen on {addr}"))?;
        println!("status view:\n{}", running.banner());
        Some(running)
    } else {
        None
    };

    // === Third-party servers, opted into the relay per host choice ===
    let third_party: Vec<tether_core::ServerSpec> = match arg(&args, "--config") {
        Some(config) => args
            .iter()
            .enumerate()
            .filter(|(_, a)| *a == "--server")
            .filter_map(|(i, _)| args.get(i + 1))
            .map(|name| {
                Ok(tether_inventory::lookup::load_server_spec(
                    std::path::Path::new(&config),
                    name,
                )?)
            })
            .collect::<anyhow::Result<_>>()?,
        None => Vec::new(),
    };
    let observe = args.iter().any(|a| a == "--observe-servers");
    let relay = if observe && !third_party.is_empty() {
        let program = tether_relay::relay_next_to_current_exe()
            .context("cannot find tether-relay next to this program")?;
        let relay = tether_relay::RelayHost::start(program).await?;
        // Each listing a relayed server gives is compared with its pins.
        relay.pin_with(Arc::clone(&store));
        Some(relay)
    } else {
        None
    };
    // Each attempt's relay tickets (an HTTP server's proxy lives in its ticket).
    let mut offers: Vec<tether_relay::Offered> = Vec::new();

    // === The host's own MCP server, observed ===
    let endpoint = ObservedEndpoint::start(SERVER, || Sentinel).await?;
    endpoint.pin_with(Arc::clone(&store));
    if let Some(otel) = &otel {
        endpoint.on_served(otel.served_observer());
    }

    // === The agent ===
    let workdir = std::env::temp_dir().join(format!("tether-example-host-{}", std::process::id()));
    std::fs::create_dir_all(&workdir)?;
    let command = ChildSpec {
        program: agent.display().to_string(),
        args: vec![],
        env: vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())],
        inherit_env: false,
        cwd: workdir.clone(),
    };
    let (mut process, stdin, stdout) = ChildGroup::spawn(&command)?;
    let agent_output = process.stderr_tail();

    let plan: Vec<SessionRequestKind> = if restored {
        vec![SessionRequestKind::Reset, SessionRequestKind::New]
    } else {
        vec![
            SessionRequestKind::New,
            SessionRequestKind::Load {
                acp_session_id: String::new(),
            },
            SessionRequestKind::New,
        ]
    };
    let run_hub = Arc::clone(&hub);
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
                let mut acp_id = String::new();
                let mut printer = None;
                for (n, kind) in plan.into_iter().enumerate() {
                    let kind = match kind {
                        SessionRequestKind::Load { .. } => SessionRequestKind::Load {
                            acp_session_id: acp_id.clone(),
                        },
                        other => other,
                    };
                    // Each attempt gets its own credential: only this agent can
                    // reach the host's server, and a superseded attempt's is refused.
                    let credential = AttemptCredential::generate();
                    let spec = endpoint.server_spec(ServerSource::Host, None, &credential);
                    let offered = match &relay {
                        Some(relay) => relay.offer(&third_party, |_| true),
                        None => tether_relay::Offered::direct(&third_party),
                    };
                    for note in &offered.notes {
                        println!("relay: {note}");
                    }
                    let mut request = AttemptRequest::new(
                        tether_core::Owner {
                            task: "example-task".into(),
                            session: (&session).into(),
                            execution: format!("exec-{}", std::process::id()).into(),
                        },
                        "tether-reference-agent",
                        DriveMode::Acp,
                        Trigger::SessionNew,
                        std::iter::once(spec)
                            .chain(offered.specs.iter().cloned())
                            .collect(),
                    );
                    request.capabilities = caps;
                    let mut delivery =
                        deliver_session(&cx, &run_hub, request, kind, &workdir, |h| {
                            if let Some(snapshot) = &snapshot {
                                // Best effort, never blocking: the snapshot is history, not evidence.
                                let _ = h.sink.attach_config_snapshot(snapshot);
                            }
                            // The view's actions need the attempt's effective
                            // configuration (kept in memory only) and the live output.
                            diagnostics.remember_attempt(&session, h);
                            diagnostics.attach_output(&session, Arc::clone(&agent_output));
                            // Relayed rows report into this attempt from the start.
                            offered.bind(&h.sink);
                            endpoint.bind(h.sink.clone(), credential.clone())
                        })
                        .map_err(|e| {
                            agent_client_protocol::Error::internal_error().data(e.to_string())
                        })?;
                    if printer.is_none() {
                        // Live updates, without polling: print each change of the current attempt.
                        let mut rx = run_hub.subscribe(&session).map_err(|e| {
                            agent_client_protocol::Error::internal_error().data(e.to_string())
                        })?;
                        printer = Some(tokio::spawn(async move {
                            let mut last = String::new();
                            while rx.changed().await.is_ok() {
                                let history = rx.borrow_and_update().clone();
                                if let Some(a) = history.current() {
                                    let line = a
                                        .servers
                                        .iter()
                                        .map(|r| format!("{}: {}", r.name, status_label(r)))
                                        .collect::<Vec<_>>()
                                        .join(", ");
                                    let line =
                                        format!("live {} {}: {line}", a.attempt_id, a.trigger);
                                    if line != last {
                                        println!("{line}");
                                        last = line;
                                    }
                                }
                            }
                        }));
                    }
                    let outcome = delivery.settle().await;
                    if let Some(id) = outcome.acp_session_id {
                        acp_id = id;
                    }
                    // Wait (bounded) for the agent to reach the host's server,
                    // and every relayed row to settle, in this attempt.
                    for _ in 0..200 {
                        run_hub.flush().await;
                        let attempt = run_hub
                            .snapshot(&session)
                            .and_then(|h| h.attempt(&delivery.handle.attempt_id).cloned());
                        let active = attempt
                            .as_ref()
                            .and_then(|a| a.server(SERVER).map(|r| r.status));
                        if active == Some(DisplayStatus::Active)
                            && offered.settled(attempt.as_ref())
                        {
                            break;
                        }
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    offers.push(offered);
                    println!(
                        "attempt {} done: {:?}",
                        n + 1,
                        outcome.error.map(|(r, _)| r)
                    );
                }
                if serving.is_some() {
                    println!(
                        "serving the status view; the agent stays up for its actions. Ctrl-C stops."
                    );
                    let _ = tokio::signal::ctrl_c().await;
                }
                if let Some(p) = printer {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    p.abort();
                }
                Ok(())
            },
        )
        .await;
    diagnostics.detach_output(&session);
    process.kill_group().await;
    endpoint.shutdown().await;
    if let Some(running) = serving {
        running.shutdown().await;
    }
    let _ = std::fs::remove_dir_all(&workdir);
    result.map_err(|e| anyhow::anyhow!("ACP: {}", e.message))?;
    hub.flush().await;
    if let Some(history) = hub.snapshot(&session) {
        print_history("final", &history);
    }
    hub.flush_store();
    println!(
        "store: {} stale write(s) refused (another writer held a newer revision), {} failure(s)",
        hub.store_stale_refusals(),
        hub.store_failures()
    );
    if let Some(otel) = otel {
        // The export thread does the waiting; this runtime is never blocked on it.
        let problems = tokio::task::spawn_blocking(move || otel.shutdown()).await?;
        for problem in problems {
            eprintln!("OpenTelemetry export: {problem}");
        }
    }
    Ok(())
}
