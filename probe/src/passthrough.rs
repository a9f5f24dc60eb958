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

use tether_core::history::AttachmentAttempt;
use tether_core::model::Evidence;
use tether_core::passthrough::{Materialized, PassthroughStrategy};
use tether_core::plan::DriveMode;
use tether_core::probe::{
    PROBE_SCHEMA_VERSION, ProbeAdvertised, ProbeAgent, ProbeAgentExit, ProbeReport, ProbeSentinel,
    ProbeSession, Verdict, sentinel_facts, verdict_of, verdict_with_exit,
};
use tether_core::registry::Registry;
use tether_core::sanitize;
use tether_core::vocab::{EvidenceKind, ReasonCode, StageState, Transport, Trigger};
use tether_core::{AgentCapabilities, TransportObserver};
use tether_hub::{AttemptHandle, AttemptRequest, EvidenceSink, Hub};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::ChildStdout;

use tether_kandev_endpoint::{AttemptCredential, ObservedEndpoint};
use tether_process::{ChildGroup, ChildSpec, SpawnError, WrittenFiles};

use crate::support::{
    OfferedServers, ProbeDirs, ProbeOutcome, ProbeStep, ProbeTarget, agent_env,
    requested_transport, resolve_program, scrubbed_tail, sentinel_spec, write_sentinel_markers,
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
    let probe = Probe::new(&opts);
    crate::support::warm_token_encoder();
    let (attempt, endpoint) = match begin(&probe, registry).await {
        Ok(begun) => begun,
        Err(outcome) => return outcome,
    };

    // No strategy, or nothing the CLI can take: report it; start nothing.
    let strategy = attempt.observer.as_ref().and_then(|o| o.passthrough());
    let delivered: Vec<String> = attempt
        .handle
        .plan
        .delivered()
        .map(|(p, _)| p.spec.name.clone())
        .collect();
    let Some(strategy) = strategy.filter(|_| !delivered.is_empty()) else {
        return stop_before_the_cli(&probe, &attempt, endpoint).await;
    };
    // Project files stay until the CLI is gone (dropped at the end).
    let (materialized, _project_files, files_dir) =
        match materialize(&probe, &attempt, &endpoint, strategy, &delivered) {
            Ok(written) => written,
            Err(Unmaterialized::Failed(outcome)) => return *outcome,
            Err(Unmaterialized::Reported) => {
                return stop_before_the_cli(&probe, &attempt, endpoint).await;
            }
        };
    let (mut process, stdout) = match start_cli(&probe, &attempt, &materialized, &progress) {
        Ok(started) => started,
        Err(err) => return cli_did_not_start(&probe, &attempt, endpoint, err).await,
    };
    let spawned_at = Instant::now();
    let mut reader = read_reports(stdout, attempt.observer.clone(), attempt.sink.clone());
    let expected = ExpectedReports::of(&attempt, strategy.reports_servers(), &delivered);
    let exited = wait_on_evidence(
        &probe,
        &attempt,
        &expected,
        &mut process,
        &mut reader,
        &progress,
    )
    .await;

    // === Decide, print, then clean up ===
    let stderr = process.stderr_tail();
    let tail = scrubbed_tail(
        &stderr.lock().unwrap_or_else(|p| p.into_inner()),
        &attempt.handle.plan.scrubber(),
    );
    let agent_exit = exited.map(|status| {
        let current = attempt
            .hub
            .snapshot("probe")
            .and_then(|h| h.current().cloned());
        crate::support::record_agent_exit(
            &attempt.sink,
            status,
            spawned_at.elapsed(),
            current.as_ref(),
            tail.clone(),
        )
    });
    crate::support::await_catalogs(&attempt.hub, "probe", crate::support::CATALOG_WAIT).await;
    let session = ProbeSession {
        accepted: true,
        acp_session_id: None,
        error: None,
    };
    let outcome = finish(&probe, &attempt, session, tail, agent_exit);
    progress(ProbeStep::Decided(std::sync::Arc::new(outcome.clone())));
    progress(ProbeStep::Finishing);
    process.kill_group().await;
    reader.abort();
    endpoint.shutdown().await;
    drop(files_dir);
    outcome
}

/// One passthrough probe's fixed facts: what it was asked, and when it began.
struct Probe<'a> {
    opts: &'a PassthroughOptions,
    started: Instant,
    deadline: tokio::time::Instant,
    requested: Transport,
}

impl<'a> Probe<'a> {
    fn new(opts: &'a PassthroughOptions) -> Self {
        Probe {
            opts,
            started: Instant::now(),
            deadline: tokio::time::Instant::now() + opts.target.timeout,
            requested: requested_transport(opts.target.transport),
        }
    }

    fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The CLI as the report names it: its kind.
    fn agent(&self) -> ProbeAgent {
        ProbeAgent {
            name: Some(sanitize::name(&self.opts.kind)),
            version: None,
            protocol_version: None,
        }
    }

    /// The outcome of a probe that could not go on.
    fn failed(
        &self,
        reason: ReasonCode,
        summary: String,
        stderr: Vec<String>,
        cwd: Option<PathBuf>,
    ) -> ProbeOutcome {
        ProbeOutcome::agent_failed(
            self.agent(),
            reason,
            &summary,
            self.elapsed_ms(),
            stderr,
            cwd,
        )
    }
}

/// What the probe set up before the CLI (beside the sentinel itself): its
/// directories, the sentinel's credential, the plugin, the hub, the other servers and the attempt.
struct Attempt {
    dirs: ProbeDirs,
    credential: AttemptCredential,
    observer: Option<Arc<dyn TransportObserver>>,
    capabilities: AgentCapabilities,
    advertised: ProbeAdvertised,
    hub: Hub,
    offered: OfferedServers,
    handle: AttemptHandle,
    sink: EvidenceSink,
}

/// Prepares the directories, starts the sentinel, offers the other servers
/// and begins the attempt (relayed servers report into it from here on).
async fn begin(
    probe: &Probe<'_>,
    registry: Registry,
) -> Result<(Attempt, ObservedEndpoint), ProbeOutcome> {
    let opts = probe.opts;
    let dirs = ProbeDirs::prepare(opts.target.cwd.as_deref(), opts.target.keep_home)
        .map_err(|summary| probe.failed(ReasonCode::ProcessStartFailed, summary, vec![], None))?;
    let endpoint = match ObservedEndpoint::sentinel().await {
        Ok(endpoint) => endpoint,
        Err(err) => {
            return Err(probe.failed(
                ReasonCode::ProcessStartFailed,
                format!("cannot start the sentinel: {err}"),
                vec![],
                Some(dirs.cwd),
            ));
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
            return Err(probe.failed(
                ReasonCode::ProcessStartFailed,
                summary,
                vec![],
                Some(dirs.cwd),
            ));
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
            return Err(probe.failed(
                ReasonCode::ProcessStartFailed,
                err.to_string(),
                vec![],
                Some(dirs.cwd),
            ));
        }
    };
    let sink = handle.sink.clone();
    // Relayed servers report into this attempt, from before the CLI starts.
    offered.bind(&sink);
    let attempt = Attempt {
        dirs,
        credential,
        observer,
        capabilities,
        advertised,
        hub,
        offered,
        handle,
        sink,
    };
    Ok((attempt, endpoint))
}

/// The outcome, from the attempt as the hub holds it now; the sentinel's
/// markers go to `--out`.
fn finish(
    probe: &Probe<'_>,
    attempt: &Attempt,
    session: ProbeSession,
    stderr: Vec<String>,
    agent_exit: Option<ProbeAgentExit>,
) -> ProbeOutcome {
    let sentinel_name = tether_kandev_endpoint::SENTINEL_SERVER;
    let current = attempt
        .hub
        .snapshot("probe")
        .and_then(|h| h.current().cloned());
    let (verdict, sentinel) = match &current {
        Some(a) => (
            verdict_of(a, sentinel_name),
            sentinel_facts(a, sentinel_name, probe.requested.clone()),
        ),
        None => (
            Verdict::Unavailable,
            ProbeSentinel::unseen(sentinel_name, Some(probe.requested.clone())),
        ),
    };
    if let (Some(dir), Some(a)) = (&probe.opts.target.out_dir, &current) {
        let _ = std::fs::create_dir_all(dir);
        write_sentinel_markers(dir, a, sentinel_name);
    }
    ProbeOutcome {
        report: ProbeReport {
            schema_version: PROBE_SCHEMA_VERSION,
            verdict: verdict_with_exit(verdict, agent_exit.as_ref()),
            agent: probe.agent(),
            advertised: attempt.advertised,
            session,
            sentinel,
            report: current,
            elapsed_ms: probe.elapsed_ms(),
            agent_exit,
        },
        stderr_tail: stderr,
        cwd_sent: Some(attempt.dirs.cwd.clone()),
    }
}

/// The outcome of a probe that stops before starting the CLI (nothing to
/// deliver, or nothing could be materialized): what the attempt holds.
async fn stop_before_the_cli(
    probe: &Probe<'_>,
    attempt: &Attempt,
    endpoint: ObservedEndpoint,
) -> ProbeOutcome {
    attempt.hub.flush().await;
    endpoint.shutdown().await;
    finish(probe, attempt, ProbeSession::default(), vec![], None)
}

/// Materializes the delivered servers: a private directory (0700), files
/// 0600, removed at the end (the directory when it is dropped); the CLI's
/// project files, kept until it is gone. Every delivered server is
/// `delivered` once this succeeds, and the sentinel takes the credential.
fn materialize(
    probe: &Probe<'_>,
    attempt: &Attempt,
    endpoint: &ObservedEndpoint,
    strategy: &dyn PassthroughStrategy,
    delivered: &[String],
) -> Result<(Materialized, WrittenFiles, tempfile::TempDir), Unmaterialized> {
    let cwd = &attempt.dirs.cwd;
    let files_dir = match tempfile::Builder::new().prefix("tether-mcp-").tempdir() {
        Ok(dir) => dir,
        Err(err) => {
            return Err(Unmaterialized::Failed(Box::new(probe.failed(
                ReasonCode::MaterializationFailed,
                format!("cannot create a private directory: {err}"),
                vec![],
                Some(cwd.clone()),
            ))));
        }
    };
    let ctx = tether_core::plan::PlanContext {
        agent_kind: probe.opts.kind.clone(),
        drive_mode: DriveMode::Passthrough,
        capabilities: attempt.capabilities,
        strict: true,
    };
    let materialized = strategy
        .materialize(&attempt.handle.plan, &ctx, files_dir.path())
        .and_then(|m| {
            let written = WrittenFiles::write(&m.files, files_dir.path(), cwd)?;
            Ok((m, written))
        });
    let (materialized, project_files) = match materialized {
        Ok(m) => m,
        Err(summary) => {
            for name in delivered {
                publish(
                    &attempt.sink,
                    Evidence::new(EvidenceKind::ExplicitError, tether_hub::now())
                        .server(name.clone())
                        .reason(ReasonCode::MaterializationFailed, Some(summary.clone())),
                );
            }
            return Err(Unmaterialized::Reported);
        }
    };
    endpoint.bind(attempt.sink.clone(), attempt.credential.clone());
    for name in delivered {
        publish(
            &attempt.sink,
            Evidence::new(EvidenceKind::Delivered, tether_hub::now()).server(name.clone()),
        );
    }
    Ok((materialized, project_files, files_dir))
}

/// Why nothing was materialized.
enum Unmaterialized {
    /// No private directory: the probe failed before any server was touched.
    Failed(Box<ProbeOutcome>),
    /// The strategy failed: each delivered server has the failure as
    /// evidence, and the probe stops before the CLI.
    Reported,
}

/// Starts the CLI in its own process group with the materialized arguments
/// and environment (its stdin closed); the session is accepted once it runs.
fn start_cli(
    probe: &Probe<'_>,
    attempt: &Attempt,
    materialized: &Materialized,
    progress: &(impl Fn(ProbeStep) + Send + Sync),
) -> Result<(ChildGroup, ChildStdout), SpawnError> {
    let opts = probe.opts;
    progress(ProbeStep::Spawning);
    let mut env = agent_env(
        &opts.target.env,
        opts.target.inherit_env,
        attempt.dirs.home.as_deref(),
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
        cwd: attempt.dirs.cwd.clone(),
    };
    let (process, stdin, stdout) = ChildGroup::spawn(&command)?;
    drop(stdin);
    publish(
        &attempt.sink,
        Evidence::new(EvidenceKind::SessionAccepted, tether_hub::now()),
    );
    progress(ProbeStep::SessionAccepted);
    Ok((process, stdout))
}

/// The outcome of a CLI that did not start: the failure goes into the
/// attempt too (report-level).
async fn cli_did_not_start(
    probe: &Probe<'_>,
    attempt: &Attempt,
    endpoint: ObservedEndpoint,
    err: SpawnError,
) -> ProbeOutcome {
    let reason = err.reason_code();
    publish(
        &attempt.sink,
        Evidence::new(EvidenceKind::ExplicitError, tether_hub::now())
            .reason(reason.clone(), Some(err.to_string())),
    );
    attempt.hub.flush().await;
    endpoint.shutdown().await;
    let mut outcome = probe.failed(
        reason,
        err.to_string(),
        vec![],
        Some(attempt.dirs.cwd.clone()),
    );
    outcome.report.report = attempt
        .hub
        .snapshot("probe")
        .and_then(|h| h.current().cloned());
    outcome
}

/// The CLI's own reports, line by line, off the waiting path; the task
/// ends at the end of its stdout.
fn read_reports(
    stdout: ChildStdout,
    observer: Option<Arc<dyn TransportObserver>>,
    sink: EvidenceSink,
) -> tokio::task::JoinHandle<()> {
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
                    if let Some(strategy) = observer.as_ref().and_then(|o| o.passthrough()) {
                        for ev in strategy.read_output(line.trim(), tether_hub::now()) {
                            publish(&sink, ev);
                        }
                    }
                }
            }
        }
    })
}

/// The servers a CLI that reports its servers must cover before the wait
/// may end; relayed servers have evidence of their own instead. Names are
/// the rows' shown names (rows and evidence carry those).
struct ExpectedReports {
    reports: bool,
    sentinel_row: String,
    names: Vec<String>,
}

impl ExpectedReports {
    fn of(attempt: &Attempt, reports: bool, delivered: &[String]) -> Self {
        let rows = attempt.handle.plan.row_names();
        let shown = |name: &str| rows.resolve(name).unwrap_or(name).to_owned();
        let sentinel_row = shown(tether_kandev_endpoint::SENTINEL_SERVER);
        let names = delivered
            .iter()
            .map(|name| shown(name))
            .filter(|name| name == &sentinel_row || !attempt.offered.relayed.contains(name))
            .collect();
        ExpectedReports {
            reports,
            sentinel_row,
            names,
        }
    }

    /// Whether every expected server's report is in and settled: it says
    /// what the model got (a tool count, or its tools held behind the CLI's
    /// tool search) or that the server will not be used (failed, needs
    /// auth, disabled); `pending` and a bare `connected` may still be
    /// followed by more (Copilot sends the tools after the status).
    fn complete(&self, attempt: &AttachmentAttempt) -> bool {
        let settled = |e: &Evidence| {
            e.tool_count.is_some() || e.reported_state().is_some_and(|s| s.is_final_failure())
        };
        !self.reports
            || self.names.iter().all(|name| {
                attempt.evidence.iter().any(|e| {
                    let named = e.server.as_deref() == Some(name);
                    (e.kind == EvidenceKind::AgentReported && named && settled(e))
                        || (e.kind == EvidenceKind::ToolDeferred && named)
                })
            })
    }
}

/// Waits on evidence: until the sentinel's tools/list is seen with every
/// report and relayed server settled; or the CLI exits (its stdout read to
/// the end: its last reports); or the grace after everything else settled;
/// or `--timeout`. The CLI's exit, where it went.
async fn wait_on_evidence(
    probe: &Probe<'_>,
    attempt: &Attempt,
    expected: &ExpectedReports,
    process: &mut ChildGroup,
    reader: &mut tokio::task::JoinHandle<()>,
    progress: &(impl Fn(ProbeStep) + Send + Sync),
) -> Option<std::process::ExitStatus> {
    let deadline = probe.deadline;
    let mut grace_end: Option<tokio::time::Instant> = None;
    let mut rx = attempt.hub.subscribe("probe").ok();
    loop {
        if let Some(rx) = rx.as_mut() {
            let history = rx.borrow_and_update().clone();
            if let Some(current) = history.current()
                && let Some(row) = current.server(&expected.sentinel_row)
            {
                progress(ProbeStep::Waiting(tether_words::display::status_label(row)));
                let settled = expected.complete(current) && attempt.offered.settled(Some(current));
                if settled && row.stages.tools_listed.state == StageState::Yes {
                    return None;
                }
                // Everything else is in: only a lazy contact can still come.
                if settled
                    && grace_end.is_none()
                    && (expected.reports || row.stages.initialized.state == StageState::Yes)
                {
                    grace_end = Some(tokio::time::Instant::now() + probe.opts.target.grace);
                }
            }
        }
        if let Some(status) = process.exited() {
            // Nothing more can connect once the CLI is gone: read its stdout
            // to the end (its last reports), then decide.
            let _ = tokio::time::timeout(STDOUT_DRAIN, &mut *reader).await;
            return Some(status);
        }
        let wait_until = grace_end.unwrap_or(deadline).min(deadline);
        if tokio::time::Instant::now() >= wait_until {
            return None;
        }
        let changed = async {
            match rx.as_mut() {
                Some(rx) => rx.changed().await.is_ok(),
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = tokio::time::sleep_until(wait_until) => return None,
            // The exit is polled: the child is reaped by `exited`.
            _ = tokio::time::sleep(Duration::from_millis(50)) => {}
            alive = changed => if !alive { rx = None; },
        }
    }
}
