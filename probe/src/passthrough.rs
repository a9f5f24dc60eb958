//! The passthrough probe: materialize the sentinel for a CLI the host runs as
//! a plain process, start it in its own process group with a private HOME,
//! and reach the verdict from evidence (the sentinel's observations and the
//! CLI's own reports), never from the exit code. A CLI that exits at once
//! (Claude without credentials) and one that never exits (Codex offline) are
//! both normal; the group is killed at the end either way.
//!
//! The wait ends on evidence, never on a tuned delay: when the sentinel's
//! tools/list is seen, relayed servers have their evidence, and (for a CLI
//! that reports its servers) its report covers every delivered server; or
//! when the CLI exits (its stdout read to the end); or at `--timeout`.
//! `--grace` applies only once everything else has settled and the sentinel
//! may still be contacted lazily (the CLI reported, or initialized without
//! listing).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_core::TransportObserver;
use tether_core::history::AttachmentAttempt;
use tether_core::model::Evidence;
use tether_core::plan::DriveMode;
use tether_core::probe::{
    PROBE_SCHEMA_VERSION, ProbeAdvertised, ProbeAgent, ProbeAgentExit, ProbeReport, ProbeSentinel,
    ProbeSession, Verdict, sentinel_facts, verdict_of, verdict_with_exit,
};
use tether_core::reducer::reported_state;
use tether_core::registry::Registry;
use tether_core::sanitize;
use tether_core::vocab::{EvidenceKind, ReasonCode, StageState, Trigger};
use tether_hub::{AttemptRequest, EvidenceSink, Hub};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

use tether_kandev_endpoint::{AttemptCredential, ObservedEndpoint};
use tether_process::{ChildGroup, ChildSpec, WrittenFiles};

use crate::support::{
    ProbeDirs, ProbeOutcome, ProbeStep, ProbeTarget, agent_env, requested_transport,
    resolve_program, scrubbed_tail, sentinel_spec, write_sentinel_markers,
};

/// A stdout line longer than this is not read as a report.
const MAX_REPORT_LINE: u64 = 4 * 1024 * 1024;
/// After the CLI exited, the most its stdout may take to reach its end
/// (a grandchild may hold it open).
const STDOUT_DRAIN: Duration = Duration::from_secs(2);

/// What to probe, and how.
#[derive(Debug, Clone)]
pub struct PassthroughOptions {
    /// The agent kind (selects the plugin), for example `claude` or `codex`.
    pub kind: String,
    /// The CLI (its arguments go after the materialized ones), its
    /// environment, the sentinel's transport and the bounds.
    pub target: ProbeTarget,
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
        tether_core::Owner {
            task: "probe".into(),
            session: "probe".into(),
            execution: "probe".into(),
        },
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
    let finish = |hub: &Hub,
                  session: ProbeSession,
                  stderr: Vec<String>,
                  agent_exit: Option<ProbeAgentExit>| {
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
            report: ProbeReport {
                schema_version: PROBE_SCHEMA_VERSION,
                verdict: verdict_with_exit(verdict, agent_exit.as_ref()),
                agent: ProbeAgent {
                    name: Some(sanitize::name(&opts.kind)),
                    version: None,
                    protocol_version: None,
                },
                advertised,
                session,
                sentinel,
                report: attempt,
                elapsed_ms: elapsed(),
                agent_exit,
            },
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
        return finish(&hub, ProbeSession::default(), vec![], None);
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
                    Evidence::new(EvidenceKind::ExplicitError, tether_hub::now())
                        .server(name.clone())
                        .reason(ReasonCode::MaterializationFailed, Some(summary.clone())),
                );
            }
            hub.flush().await;
            endpoint.shutdown().await;
            return finish(&hub, ProbeSession::default(), vec![], None);
        }
    };
    endpoint.bind(sink.clone(), credential.clone());
    for name in &delivered {
        publish(
            &sink,
            Evidence::new(EvidenceKind::Delivered, tether_hub::now()).server(name.clone()),
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
                Evidence::new(EvidenceKind::ExplicitError, tether_hub::now())
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
    let spawned_at = Instant::now();
    publish(
        &sink,
        Evidence::new(EvidenceKind::SessionAccepted, tether_hub::now()),
    );
    progress(ProbeStep::SessionAccepted);

    // The CLI's own reports, line by line, off the waiting path; the task
    // ends at the end of its stdout.
    let report_sink = sink.clone();
    let reader_observer = observer.clone();
    let mut reader = tokio::spawn(async move {
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
                    if let Some(strategy) = reader_observer.as_ref().and_then(|o| o.passthrough()) {
                        for ev in strategy.read_output(line.trim(), tether_hub::now()) {
                            publish(&report_sink, ev);
                        }
                    }
                }
            }
        }
    });

    // === Wait on evidence ===
    // Rows and evidence carry the rows' shown names: compare in that form.
    let rows = handle.plan.row_names();
    let shown = |name: &str| rows.resolve(name).unwrap_or(name).to_owned();
    let sentinel_row = shown(sentinel_name);
    // A CLI that reports its servers covers each one it was given; relayed
    // servers have evidence of their own instead.
    let reports = strategy.reports_servers();
    let expected_reports: Vec<String> = delivered
        .iter()
        .map(|name| shown(name))
        .filter(|name| name == &sentinel_row || !offered.relayed.contains(name))
        .collect();
    // A server's report is settled once it says what the model got (a tool
    // count, or its tools held behind the CLI's tool search) or that the
    // server will not be used (failed, needs auth, disabled); `pending` and
    // a bare `connected` may still be followed by more (Copilot sends the
    // tools after the status).
    let report_settled = |e: &tether_core::model::Evidence| {
        e.tool_count.is_some()
            || e.reported_status
                .as_deref()
                .is_some_and(|s| reported_state(s).is_final_failure())
    };
    let reports_complete = |attempt: &AttachmentAttempt| {
        !reports
            || expected_reports.iter().all(|name| {
                attempt.evidence.iter().any(|e| {
                    let named = e.server.as_deref() == Some(name);
                    (e.kind == EvidenceKind::AgentReported && named && report_settled(e))
                        || (e.kind == EvidenceKind::ToolDeferred && named)
                })
            })
    };
    let mut grace_end: Option<tokio::time::Instant> = None;
    let mut exited: Option<std::process::ExitStatus> = None;
    let mut rx = hub.subscribe("probe").ok();
    loop {
        if let Some(rx) = rx.as_mut() {
            let history = rx.borrow_and_update().clone();
            if let Some(attempt) = history.current()
                && let Some(row) = attempt.server(&sentinel_row)
            {
                progress(ProbeStep::Waiting(tether_core::display::status_label(row)));
                let settled = reports_complete(attempt) && offered.settled(Some(attempt));
                if settled && row.stages.tools_listed.state == StageState::Yes {
                    break;
                }
                // Everything else is in: only a lazy contact can still come.
                if settled
                    && grace_end.is_none()
                    && (reports || row.stages.initialized.state == StageState::Yes)
                {
                    grace_end = Some(tokio::time::Instant::now() + opts.target.grace);
                }
            }
        }
        if let Some(status) = process.exited() {
            // Nothing more can connect once the CLI is gone: read its stdout
            // to the end (its last reports), then decide.
            exited = Some(status);
            let _ = tokio::time::timeout(STDOUT_DRAIN, &mut reader).await;
            break;
        }
        let wait_until = grace_end.unwrap_or(deadline).min(deadline);
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
            // The exit is polled: the child is reaped by `exited`.
            _ = tokio::time::sleep(Duration::from_millis(50)) => {}
            alive = changed => if !alive { rx = None; },
        }
    }

    // === Decide, print, then clean up ===
    let stderr = process.stderr_tail();
    let tail = scrubbed_tail(
        &stderr.lock().unwrap_or_else(|p| p.into_inner()),
        &handle.plan.scrubber(),
    );
    let agent_exit = exited.map(|status| {
        let attempt = hub.snapshot("probe").and_then(|h| h.current().cloned());
        crate::support::record_agent_exit(
            &sink,
            status,
            spawned_at.elapsed(),
            attempt.as_ref(),
            tail.clone(),
        )
    });
    crate::support::await_catalogs(&hub, "probe", crate::support::CATALOG_WAIT).await;
    let outcome = finish(
        &hub,
        ProbeSession {
            accepted: true,
            acp_session_id: None,
            error: None,
        },
        tail,
        agent_exit,
    );
    progress(ProbeStep::Decided(std::sync::Arc::new(outcome.clone())));
    progress(ProbeStep::Finishing);
    process.kill_group().await;
    reader.abort();
    endpoint.shutdown().await;
    drop(files_dir);
    outcome
}
