//! The passthrough probe: materialize the sentinel for a CLI the host runs as
//! a plain process, start it in its own process group with a private HOME,
//! and reach the verdict from evidence (the sentinel's observations and the
//! CLI's own reports), never from the exit code. A CLI that exits at once
//! (Claude without credentials) and one that never exits (Codex offline) are
//! both normal; the group is killed at the end either way.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_core::TransportObserver;
use tether_core::history::AttachmentAttempt;
use tether_core::hub::{AttemptRequest, EvidenceSink, Hub};
use tether_core::model::{Evidence, Timestamp};
use tether_core::plan::DriveMode;
use tether_core::probe::{
    PROBE_SCHEMA_VERSION, ProbeAdvertised, ProbeAgent, ProbeReport, ProbeSentinel, ProbeSession,
    Verdict, sentinel_facts, verdict_of,
};
use tether_core::registry::Registry;
use tether_core::sanitize;
use tether_core::vocab::{EvidenceKind, ReasonCode, StageState, Trigger};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

use tether_kandev_endpoint::{AttemptCredential, ObservedEndpoint};
use tether_process::{ChildGroup, ChildSpec, WrittenFiles};

use crate::support::{
    ProbeDirs, ProbeOutcome, ProbeStep, ProbeTarget, agent_env, requested_transport,
    resolve_program, scrubbed_tail, sentinel_spec, write_sentinel_markers,
};

/// A stdout line longer than this is not read as a report.
const MAX_REPORT_LINE: u64 = 4 * 1024 * 1024;
/// After tools/list or the CLI's exit, how long reports may still arrive.
const SETTLE: Duration = Duration::from_millis(600);

/// What to probe, and how.
#[derive(Debug, Clone)]
pub struct PassthroughOptions {
    /// The agent kind (selects the plugin), for example `claude` or `codex`.
    pub kind: String,
    /// The CLI (its arguments go after the materialized ones), its
    /// environment, the sentinel's transport and the bounds.
    pub target: ProbeTarget,
}

fn report(
    verdict: Verdict,
    kind: &str,
    advertised: ProbeAdvertised,
    session: ProbeSession,
    sentinel: ProbeSentinel,
    attempt: Option<AttachmentAttempt>,
    elapsed_ms: u64,
) -> ProbeReport {
    ProbeReport {
        schema_version: PROBE_SCHEMA_VERSION,
        verdict,
        agent: ProbeAgent {
            name: Some(sanitize::name(kind)),
            version: None,
            protocol_version: None,
        },
        advertised,
        session,
        sentinel,
        report: attempt,
        elapsed_ms,
    }
}

fn publish(sink: &EvidenceSink, evidence: Evidence) {
    if let Err(err) = sink.publish(evidence) {
        tracing::debug!(%err, "passthrough probe evidence not queued");
    }
}

/// Runs one passthrough probe with the plugins in `registry`.
pub async fn run_passthrough_probe(
    registry: Registry,
    opts: PassthroughOptions,
    progress: impl Fn(ProbeStep) + Send + Sync,
) -> ProbeOutcome {
    let started = Instant::now();
    crate::support::warm_token_encoder();
    let deadline = tokio::time::Instant::now() + opts.target.timeout;
    let elapsed = || u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let requested = requested_transport(opts.target.transport);
    let sentinel_name = tether_kandev_endpoint::SENTINEL_SERVER;
    let agent_failed =
        |reason: ReasonCode, summary: String, stderr: Vec<String>, cwd: Option<PathBuf>| {
            let agent = ProbeAgent {
                name: Some(sanitize::name(&opts.kind)),
                version: None,
                protocol_version: None,
            };
            ProbeOutcome::agent_failed(agent, reason, &summary, elapsed(), stderr, cwd)
        };

    let dirs = match ProbeDirs::prepare(opts.target.cwd.as_deref(), opts.target.keep_home) {
        Ok(dirs) => dirs,
        Err(summary) => return agent_failed(ReasonCode::ProcessStartFailed, summary, vec![], None),
    };
    let endpoint = match ObservedEndpoint::sentinel().await {
        Ok(endpoint) => endpoint,
        Err(err) => {
            return agent_failed(
                ReasonCode::ProcessStartFailed,
                format!("cannot start the sentinel: {err}"),
                vec![],
                Some(dirs.cwd),
            );
        }
    };
    let observer: Option<Arc<dyn TransportObserver>> = registry
        .observer_for(&opts.kind, DriveMode::Passthrough)
        .cloned();
    let capabilities = observer
        .as_ref()
        .and_then(|o| o.passthrough().map(|s| s.capabilities()))
        .unwrap_or_default();
    let advertised = ProbeAdvertised {
        http: capabilities.http == Some(true),
        sse: capabilities.sse == Some(true),
        load_session: capabilities.load_session == Some(true),
    };
    let hub = Hub::new(registry);
    opts.target.export.install(&endpoint, &hub);
    let bridge = opts.target.bridge();
    // The attempt's credential for the sentinel; the strategy materializes it
    // the way its CLI carries secrets (by environment reference).
    let credential = AttemptCredential::generate();
    let offered = match opts.target.offer_servers().await {
        Ok(offered) => offered,
        Err(summary) => {
            return agent_failed(
                ReasonCode::ProcessStartFailed,
                summary,
                vec![],
                Some(dirs.cwd),
            );
        }
    };
    let mut request = AttemptRequest::new(
        "probe",
        "probe",
        "probe",
        opts.kind.clone(),
        DriveMode::Passthrough,
        Trigger::PassthroughStart,
        std::iter::once(sentinel_spec(
            &endpoint,
            opts.target.transport,
            &bridge,
            &credential,
        ))
        .chain(offered.specs.iter().cloned())
        .collect(),
    );
    request.capabilities = capabilities;
    request.strict = true;
    let handle = match hub.begin_attempt(request) {
        Ok(handle) => handle,
        Err(err) => {
            return agent_failed(
                ReasonCode::ProcessStartFailed,
                err.to_string(),
                vec![],
                Some(dirs.cwd),
            );
        }
    };
    let sink = handle.sink.clone();
    // Relayed servers report into this attempt, from before the CLI starts.
    offered.bind(&sink);
    let finish = |hub: &Hub, session: ProbeSession, stderr: Vec<String>| {
        let attempt = hub.snapshot("probe").and_then(|h| h.current().cloned());
        let (verdict, sentinel) = match &attempt {
            Some(a) => (
                verdict_of(a, sentinel_name),
                sentinel_facts(a, sentinel_name, requested.clone()),
            ),
            None => (
                Verdict::Unavailable,
                ProbeSentinel::unseen(sentinel_name, Some(requested.clone())),
            ),
        };
        if let (Some(dir), Some(a)) = (&opts.target.out_dir, &attempt) {
            let _ = std::fs::create_dir_all(dir);
            write_sentinel_markers(dir, a, sentinel_name);
        }
        ProbeOutcome {
            report: report(
                verdict,
                &opts.kind,
                advertised,
                session,
                sentinel,
                attempt,
                elapsed(),
            ),
            stderr_tail: stderr,
            cwd_sent: Some(dirs.cwd.clone()),
        }
    };

    // No strategy, or nothing the CLI can take: report it; start nothing.
    let strategy = observer.as_ref().and_then(|o| o.passthrough());
    let delivered: Vec<String> = handle
        .plan
        .delivered()
        .map(|(p, _)| p.spec.name.clone())
        .collect();
    let Some(strategy) = strategy.filter(|_| !delivered.is_empty()) else {
        hub.flush().await;
        endpoint.shutdown().await;
        return finish(&hub, ProbeSession::default(), vec![]);
    };

    // === Materialize: private directory (0700), files 0600, removed at the end ===
    let files_dir = match tempfile::Builder::new().prefix("tether-mcp-").tempdir() {
        Ok(dir) => dir,
        Err(err) => {
            return agent_failed(
                ReasonCode::MaterializationFailed,
                format!("cannot create a private directory: {err}"),
                vec![],
                Some(dirs.cwd.clone()),
            );
        }
    };
    let ctx = tether_core::plan::PlanContext {
        agent_kind: opts.kind.clone(),
        drive_mode: DriveMode::Passthrough,
        capabilities,
        strict: true,
    };
    let materialized = strategy
        .materialize(&handle.plan, &ctx, files_dir.path())
        .and_then(|m| {
            let written = WrittenFiles::write(&m.files, files_dir.path(), &dirs.cwd)?;
            Ok((m, written))
        });
    // Project files stay until the CLI is gone (dropped at the end).
    let (materialized, _project_files) = match materialized {
        Ok(m) => m,
        Err(summary) => {
            for name in &delivered {
                publish(
                    &sink,
                    Evidence::new(EvidenceKind::ExplicitError, Timestamp::now())
                        .server(name.clone())
                        .reason(ReasonCode::MaterializationFailed, Some(summary.clone())),
                );
            }
            hub.flush().await;
            endpoint.shutdown().await;
            return finish(&hub, ProbeSession::default(), vec![]);
        }
    };
    endpoint.bind(sink.clone(), credential.clone());
    for name in &delivered {
        publish(
            &sink,
            Evidence::new(EvidenceKind::Delivered, Timestamp::now()).server(name.clone()),
        );
    }

    // === Start the CLI ===
    progress(ProbeStep::Spawning);
    let mut env = agent_env(
        &opts.target.env,
        opts.target.inherit_env,
        dirs.home.as_deref(),
    );
    env.extend(
        materialized
            .env
            .iter()
            .map(|kv| (kv.name.clone(), kv.value.clone())),
    );
    let command = ChildSpec {
        program: resolve_program(&opts.target.program),
        args: materialized
            .args
            .iter()
            .chain(&opts.target.args)
            .cloned()
            .collect(),
        env,
        inherit_env: opts.target.inherit_env,
        cwd: dirs.cwd.clone(),
    };
    let (mut process, stdin, stdout) = match ChildGroup::spawn(&command) {
        Ok(spawned) => spawned,
        Err(err) => {
            let reason = err.reason_code();
            // The explicit failure goes into the attempt too (report-level).
            publish(
                &sink,
                Evidence::new(EvidenceKind::ExplicitError, Timestamp::now())
                    .reason(reason.clone(), Some(err.to_string())),
            );
            hub.flush().await;
            endpoint.shutdown().await;
            let mut outcome = agent_failed(reason, err.to_string(), vec![], Some(dirs.cwd.clone()));
            outcome.report.report = hub.snapshot("probe").and_then(|h| h.current().cloned());
            return outcome;
        }
    };
    drop(stdin);
    publish(
        &sink,
        Evidence::new(EvidenceKind::SessionAccepted, Timestamp::now()),
    );
    progress(ProbeStep::SessionAccepted);

    // The CLI's own reports, line by line, off the waiting path.
    if let Some(observer) = observer.clone() {
        let report_sink = sink.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match (&mut reader)
                    .take(MAX_REPORT_LINE)
                    .read_until(b'\n', &mut buf)
                    .await
                {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&buf);
                        if let Some(strategy) = observer.passthrough() {
                            for ev in strategy.observe_output(line.trim(), Timestamp::now()) {
                                publish(&report_sink, ev);
                            }
                        }
                    }
                }
            }
        });
    }

    // === Wait on evidence ===
    // For third-party servers the CLI's own report is the only evidence, and
    // it may come after the sentinel's tools/list: wait for it (within the
    // grace window) before settling.
    // Rows and evidence carry sanitized names: compare in the same form.
    // Relayed servers have evidence of their own: wait for it instead.
    let third_party: Vec<String> = delivered
        .iter()
        .filter(|name| name.as_str() != sentinel_name)
        .map(|name| sanitize::name(name))
        .filter(|name| !offered.relayed.contains(name))
        .collect();
    let reports_pending = |attempt: &AttachmentAttempt| {
        third_party.iter().any(|name| {
            !attempt
                .evidence
                .iter()
                .any(|e| e.kind == EvidenceKind::AgentReported && e.server.as_deref() == Some(name))
        })
    };
    let grace_end = tokio::time::Instant::now() + opts.target.grace;
    let mut settle_end: Option<tokio::time::Instant> = None;
    let mut rx = hub.subscribe("probe").ok();
    loop {
        if let Some(rx) = rx.as_mut() {
            let history = rx.borrow_and_update().clone();
            if let Some(attempt) = history.current()
                && let Some(row) = attempt.server(sentinel_name)
            {
                progress(ProbeStep::Waiting(tether_core::display::status_label(row)));
                if row.stages.tools_listed.state == StageState::Yes
                    && settle_end.is_none()
                    && !reports_pending(attempt)
                    && offered.settled(Some(attempt))
                {
                    settle_end = Some(tokio::time::Instant::now() + SETTLE);
                }
            }
        }
        if settle_end.is_none() && process.exited().is_some() {
            // Nothing more can connect once the CLI is gone; let reports land.
            settle_end = Some(tokio::time::Instant::now() + SETTLE);
        }
        let wait_until = settle_end.unwrap_or(grace_end).min(deadline);
        if tokio::time::Instant::now() >= wait_until {
            break;
        }
        let changed = async {
            match rx.as_mut() {
                Some(rx) => rx.changed().await.is_ok(),
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = tokio::time::sleep_until(wait_until) => break,
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
            alive = changed => if !alive { rx = None; },
        }
    }

    progress(ProbeStep::Finishing);
    let stderr = process.stderr_tail();
    process.kill_group().await;
    crate::support::await_catalogs(&hub, "probe", crate::support::CATALOG_WAIT).await;
    endpoint.shutdown().await;
    drop(files_dir);
    let tail = scrubbed_tail(&stderr.lock().unwrap_or_else(|p| p.into_inner()));
    finish(
        &hub,
        ProbeSession {
            accepted: true,
            acp_session_id: None,
            error: None,
        },
        tail,
    )
}
