//! The ACP probe: does this agent really attach to an injected MCP server,
//! and how far does it get?
//!
//! The agent runs in a fresh temporary directory (the resolved path is the
//! `cwd` sent), with an explicit environment and a private HOME, in its own
//! process group. The sentinel is offered over the transport asked for. The
//! wait is event-driven: it ends once tools/list (or, with a prompt, the
//! sentinel call) is seen *and* `session/new` is answered or refused (rows
//! are settled only then); or when the agent's process exits (its exit is
//! evidence: before any contact the verdict is `agent_exited`); otherwise a
//! grace window after acceptance, then the verdict is `delivered_unverified`.
//! Everything is bounded by `--timeout`. Silence is never "failed". The
//! verdict is handed over (`ProbeStep::Decided`) before the group is killed;
//! the probe returns once every child is gone.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AuthenticateRequest, ClientCapabilities, ContentBlock, FileSystemCapabilities, Implementation,
    InitializeRequest, InitializeResponse, PromptRequest, RequestPermissionRequest,
    SessionNotification, TextContent,
};
use agent_client_protocol::{Agent, Client, schema::ProtocolVersion};
use tether_core::history::AttachmentAttempt;
use tether_core::plan::DriveMode;
use tether_core::probe::{
    PROBE_SCHEMA_VERSION, ProbeAdvertised, ProbeAgent, ProbeAgentExit, ProbeError, ProbeReport,
    ProbeSentinel, ProbeSession, Verdict, sentinel_facts, verdict_of, verdict_with_exit,
};
use tether_core::registry::{PluginSource, Registry};
use tether_core::sanitize;
use tether_core::vocab::{ReasonCode, Transport, Trigger};
use tether_hub::{AttemptRequest, Hub};
use tether_kandev_endpoint::{AttemptCredential, ObservedEndpoint, SENTINEL_TOOL};

use tether_acp_structured::acp::{
    FrameLog, SessionOutcome, SessionRequestKind, answer_permission, deliver_session, stdio_lines,
};
use tether_process::{ChildGroup, ChildSpec};

use crate::support::{
    ProbeDirs, ProbeOutcome, ProbeStep, ProbeTarget, agent_env, requested_transport,
    resolve_program, scrubbed_tail, sentinel_spec, with_exit, write_sentinel_markers,
};

/// How often the wait looks for the agent's exit.
const EXIT_POLL: Duration = Duration::from_millis(50);
/// How long, at most, the probe waits for an agent whose connection closed
/// before its session to be seen exiting (a crash's exit follows its
/// closed stdout at once; the wait ends on the exit, not on this bound).
const EXIT_AFTER_CLOSE: Duration = Duration::from_secs(5);

/// What to probe, and how.
#[derive(Debug, Clone)]
pub struct ProbeOptions {
    /// The agent, its environment, the sentinel's transport and the bounds.
    pub target: ProbeTarget,
    /// A prompt asking the agent to call the sentinel tool.
    pub prompt: Option<String>,
    /// An ACP `authenticate` method id to call first.
    pub authenticate: Option<String>,
}

struct Session {
    accepted: bool,
    acp_session_id: Option<String>,
    error: Option<ProbeError>,
}

/// Runs one probe. Never panics on agent behaviour; always cleans up.
pub async fn run_probe(
    opts: ProbeOptions,
    progress: impl Fn(ProbeStep) + Send + Sync,
) -> ProbeOutcome {
    let probe = Probe::new(&opts);
    crate::support::warm_token_encoder();
    let setup = match prepare(&probe).await {
        Ok(setup) => setup,
        Err(outcome) => return outcome,
    };

    // === The agent ===
    progress(ProbeStep::Spawning);
    let command = ChildSpec {
        program: resolve_program(&opts.target.program),
        args: opts.target.args.clone(),
        env: agent_env(
            &opts.target.env,
            opts.target.inherit_env,
            setup.dirs.home.as_deref(),
        ),
        inherit_env: opts.target.inherit_env,
        cwd: setup.dirs.cwd.clone(),
    };
    let (process, stdin, stdout) = match ChildGroup::spawn(&command) {
        Ok(spawned) => spawned,
        Err(err) => {
            let reason = err.reason_code();
            setup.endpoint.shutdown().await;
            return probe.failed(reason, err.to_string(), vec![], Some(setup.dirs.cwd));
        }
    };
    let spawned_at = Instant::now();
    let stderr = process.stderr_tail();
    // Shared with the wait, which watches for the agent's exit.
    let process = tokio::sync::Mutex::new(process);
    let driven = converse(&probe, &setup, stdin, stdout, &process, &progress).await;

    crate::support::await_catalogs(&setup.hub, "probe", crate::support::CATALOG_WAIT).await;
    if let Some(log) = &setup.frames {
        log.flush();
    }
    let scrubber = sanitize::Scrubber::new()
        .with_secrets(frame_secrets(&setup.credential, &opts.target.extra_servers));
    let stderr_tail = scrubbed_tail(&stderr.lock().unwrap_or_else(|p| p.into_inner()), &scrubber);
    // When the connection ended before the session (its stdout closed: a
    // crash, most likely), the exit follows at once.
    let connection_ended = matches!(&driven, Ok(Ok(Driven::InitFailed(..))) | Ok(Err(_)));
    let own_exit = own_exit(&process, probe.deadline, connection_ended).await;

    // Everything below decides the outcome; the agent is stopped after it
    // is handed over.
    let ended = Ended {
        own_exit,
        spawned_at,
        stderr_tail,
    };
    let outcome = decide(&probe, &setup, driven, ended).await;
    progress(ProbeStep::Decided(Arc::new(outcome.clone())));
    progress(ProbeStep::Finishing);
    process.lock().await.kill_group().await;
    setup.endpoint.shutdown().await;
    outcome
}

/// One ACP probe's fixed facts: what it was asked, and when it began.
struct Probe<'a> {
    opts: &'a ProbeOptions,
    started: Instant,
    deadline: tokio::time::Instant,
    requested: Transport,
}

impl<'a> Probe<'a> {
    fn new(opts: &'a ProbeOptions) -> Self {
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

    /// The outcome of a probe that could not go on.
    fn failed(
        &self,
        reason: ReasonCode,
        summary: String,
        stderr: Vec<String>,
        cwd: Option<PathBuf>,
    ) -> ProbeOutcome {
        let agent = ProbeAgent::default();
        ProbeOutcome::agent_failed(agent, reason, &summary, self.elapsed_ms(), stderr, cwd)
    }
}

/// What the probe sets up before the agent: its directories, the other
/// servers offered, the sentinel's credential, the frame log, the sentinel
/// and the hub.
struct Setup {
    dirs: ProbeDirs,
    /// Relayed when asked; the relay channel lives to the end.
    offered: crate::support::OfferedServers,
    credential: AttemptCredential,
    frames: Option<FrameLog>,
    endpoint: ObservedEndpoint,
    hub: Hub,
    bridge: PathBuf,
}

/// The working directory (the resolved path is what the agent runs in and
/// what session/new carries), HOME and output directory; the other
/// servers; the credential, which only this agent gets and the frame log
/// never shows; the sentinel and the hub.
async fn prepare(probe: &Probe<'_>) -> Result<Setup, ProbeOutcome> {
    let opts = probe.opts;
    let dirs = ProbeDirs::prepare(opts.target.cwd.as_deref(), opts.target.keep_home)
        .map_err(|summary| probe.failed(ReasonCode::ProcessStartFailed, summary, vec![], None))?;
    let offered =
        opts.target.offer_servers().await.map_err(|summary| {
            probe.failed(ReasonCode::ProcessStartFailed, summary, vec![], None)
        })?;
    let credential = AttemptCredential::generate();
    let start_failed = |summary: String| {
        probe.failed(
            ReasonCode::ProcessStartFailed,
            summary,
            vec![],
            Some(dirs.cwd.clone()),
        )
    };
    let frames = match &opts.target.out_dir {
        Some(dir) => Some(
            std::fs::create_dir_all(dir)
                .and_then(|()| {
                    FrameLog::create(&dir.join("acp-frames.jsonl")).map(|log| {
                        log.redacting(frame_secrets(&credential, &opts.target.extra_servers))
                    })
                })
                .map_err(|err| {
                    start_failed(format!("cannot write to --out {}: {err}", dir.display()))
                })?,
        ),
        None => None,
    };
    let endpoint = ObservedEndpoint::sentinel()
        .await
        .map_err(|err| start_failed(format!("cannot start the sentinel endpoint: {err}")))?;
    let mut registry = Registry::empty();
    registry
        .add(
            Arc::new(tether_acp_structured::AcpStructured),
            PluginSource::Static,
        )
        .map_err(|err| start_failed(err.to_string()))?;
    let hub = Hub::new(registry);
    opts.target.export.install(&endpoint, &hub);
    let bridge = opts.target.bridge();
    Ok(Setup {
        dirs,
        offered,
        credential,
        frames,
        endpoint,
        hub,
        bridge,
    })
}

/// How the ACP connection went: the driver's answer, the connection's
/// failure, or the whole run past `--timeout`.
type Conversation =
    Result<Result<Driven, agent_client_protocol::Error>, tokio::time::error::Elapsed>;

/// Talks ACP with the agent over its stdio (permission requests answered
/// for the sentinel's tool only), within the run's deadline.
async fn converse(
    probe: &Probe<'_>,
    setup: &Setup,
    stdin: tokio::process::ChildStdin,
    stdout: tokio::process::ChildStdout,
    process: &tokio::sync::Mutex<ChildGroup>,
    progress: &(impl Fn(ProbeStep) + Send + Sync),
) -> Conversation {
    let transport = stdio_lines(stdin, stdout, setup.frames.clone());
    let talk = Talk {
        opts: probe.opts,
        hub: &setup.hub,
        sentinel: Offer {
            endpoint: &setup.endpoint,
            credential: &setup.credential,
            bridge: &setup.bridge,
            others: &setup.offered,
        },
        cwd: &setup.dirs.cwd,
        deadline: probe.deadline,
        process,
        progress,
    };
    let run = drive(talk);
    let client = Client
        .v1()
        .name("tether-probe")
        .on_receive_request(
            async move |request: RequestPermissionRequest, responder, _cx| {
                responder.respond(answer_permission(&request, &[SENTINEL_TOOL]))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |_n: SessionNotification, _cx| Ok(()),
            agent_client_protocol::on_receive_notification!(),
        );
    tokio::time::timeout_at(
        probe.deadline + Duration::from_millis(200),
        client.connect_with(transport, async |cx: ConnectionTo<Agent>| Ok(run(cx).await)),
    )
    .await
}

/// The agent's own exit, if it went while the probe waited. When the
/// connection ended before the session, the exit is waited for, briefly
/// and within the run's deadline, so the summary can say how it ended.
async fn own_exit(
    process: &tokio::sync::Mutex<ChildGroup>,
    deadline: tokio::time::Instant,
    connection_ended: bool,
) -> Option<std::process::ExitStatus> {
    let mut child = process.lock().await;
    let until = deadline.min(tokio::time::Instant::now() + EXIT_AFTER_CLOSE);
    let mut exit = child.exited();
    while exit.is_none() && connection_ended && tokio::time::Instant::now() < until {
        tokio::time::sleep(EXIT_POLL).await;
        exit = child.exited();
    }
    exit
}

/// How the agent's side ended: its own exit, when it started, and its
/// stderr's scrubbed tail.
struct Ended {
    own_exit: Option<std::process::ExitStatus>,
    spawned_at: Instant,
    stderr_tail: Vec<String>,
}

/// The outcome of the conversation.
async fn decide(
    probe: &Probe<'_>,
    setup: &Setup,
    driven: Conversation,
    ended: Ended,
) -> ProbeOutcome {
    let cwd = &setup.dirs.cwd;
    let failed = |reason: ReasonCode, summary: String| {
        probe.failed(
            reason,
            with_exit(summary, ended.own_exit),
            ended.stderr_tail.clone(),
            Some(cwd.clone()),
        )
    };
    match driven {
        Ok(Ok(Driven::Ran {
            attempt_id,
            init,
            session,
            exited,
            sink,
        })) => {
            let (attempt, agent_exit) =
                attempt_with_exit(&setup.hub, &attempt_id, exited, &sink, &ended).await;
            ran(probe, setup, attempt, *init, session, agent_exit, ended)
        }
        Ok(Ok(Driven::InitFailed(reason, summary))) => failed(reason, summary),
        Ok(Err(err)) => failed(
            ReasonCode::ProtocolError,
            format!("ACP connection failed: {}", err.message),
        ),
        Err(_) => timed_out(probe, setup, ended.stderr_tail),
    }
}

/// The attempt as the hub holds it, with the agent's exit (where it went
/// while the probe waited) recorded in it.
async fn attempt_with_exit(
    hub: &Hub,
    attempt_id: &str,
    exited: Option<std::process::ExitStatus>,
    sink: &tether_hub::EvidenceSink,
    ended: &Ended,
) -> (Option<AttachmentAttempt>, Option<ProbeAgentExit>) {
    let attempt = hub
        .snapshot("probe")
        .and_then(|h| h.attempt(attempt_id).cloned());
    let agent_exit = exited.map(|status| {
        crate::support::record_agent_exit(
            sink,
            status,
            ended.spawned_at.elapsed(),
            attempt.as_ref(),
            ended.stderr_tail.clone(),
        )
    });
    let attempt = match &agent_exit {
        // Read again, with the exit's evidence in.
        Some(_) => {
            hub.flush().await;
            hub.snapshot("probe")
                .and_then(|h| h.attempt(attempt_id).cloned())
        }
        None => attempt,
    };
    (attempt, agent_exit)
}

/// The outcome of a conversation that ran: a session refused because the
/// agent's process died says how it exited; the sentinel's markers go to
/// `--out`.
fn ran(
    probe: &Probe<'_>,
    setup: &Setup,
    attempt: Option<AttachmentAttempt>,
    init: InitializeResponse,
    mut session: Session,
    agent_exit: Option<ProbeAgentExit>,
    ended: Ended,
) -> ProbeOutcome {
    if let (Some(err), Some(status)) = (session.error.as_mut(), ended.own_exit)
        && !status.success()
        && process_died_early(&err.summary)
    {
        err.summary = Some(sanitize::summary(&format!(
            "{} (the agent exited: {status})",
            err.summary.as_deref().unwrap_or("")
        )));
    }
    if let Some(dir) = &probe.opts.target.out_dir
        && let Some(attempt) = &attempt
    {
        write_sentinel_markers(dir, attempt, endpoint_name());
    }
    let report = build_report(
        attempt,
        Some(init),
        session,
        probe.requested.clone(),
        probe.elapsed_ms(),
        agent_exit,
    );
    ProbeOutcome {
        report,
        stderr_tail: ended.stderr_tail,
        cwd_sent: Some(setup.dirs.cwd.clone()),
    }
}

/// The whole run hit `--timeout` before the driver could report: what the
/// hub has, or that initialize went unanswered.
fn timed_out(probe: &Probe<'_>, setup: &Setup, stderr_tail: Vec<String>) -> ProbeOutcome {
    let timeout = probe.opts.target.timeout;
    let cwd = setup.dirs.cwd.clone();
    let attempt = setup
        .hub
        .snapshot("probe")
        .and_then(|h| h.current().cloned());
    if attempt.is_none() {
        return probe.failed(
            ReasonCode::Timeout,
            format!("the agent did not answer initialize within {timeout:?}"),
            stderr_tail,
            Some(cwd),
        );
    }
    let session = Session {
        accepted: false,
        acp_session_id: None,
        error: Some(ProbeError {
            reason_code: ReasonCode::Timeout,
            summary: Some(format!("no answer to session/new within {timeout:?}")),
        }),
    };
    ProbeOutcome {
        report: build_report(
            attempt,
            None,
            session,
            probe.requested.clone(),
            probe.elapsed_ms(),
            None,
        ),
        stderr_tail,
        cwd_sent: Some(cwd),
    }
}

/// How long `authenticate` may take before the probe gives up on it (at most
/// a third of `--timeout`, so the session still has time).
const AUTHENTICATE_WAIT: Duration = Duration::from_secs(20);

/// The agent's `authMethods`, for a user who must pick one for `--authenticate`.
fn auth_methods_hint(init: &InitializeResponse) -> String {
    if init.auth_methods.is_empty() {
        return String::new();
    }
    let methods: Vec<String> = init
        .auth_methods
        .iter()
        .map(|m| format!("{} ({})", m.id().0, m.name()))
        .collect();
    format!(
        "; the agent offers: {}; pass one with --authenticate",
        methods.join(", ")
    )
}

fn endpoint_name() -> &'static str {
    tether_kandev_endpoint::SENTINEL_SERVER
}

fn process_died_early(summary: &Option<String>) -> bool {
    summary
        .as_deref()
        .is_some_and(|s| s.contains("closed") || s.contains("terminated"))
}

fn build_report(
    attempt: Option<AttachmentAttempt>,
    init: Option<InitializeResponse>,
    session: Session,
    requested: Transport,
    elapsed_ms: u64,
    agent_exit: Option<ProbeAgentExit>,
) -> ProbeReport {
    let name = endpoint_name();
    let (verdict, sentinel) = match &attempt {
        Some(a) => (
            verdict_of(a, name),
            sentinel_facts(a, name, requested.clone()),
        ),
        None => (Verdict::AgentFailed, ProbeSentinel::unseen(name, None)),
    };
    let (agent, advertised) = match &init {
        Some(init) => (
            ProbeAgent {
                name: init.agent_info.as_ref().map(|i| sanitize::name(&i.name)),
                version: init.agent_info.as_ref().map(|i| sanitize::name(&i.version)),
                protocol_version: Some(
                    serde_json::to_value(init.protocol_version)
                        .map(|v| v.to_string())
                        .unwrap_or_default(),
                ),
            },
            ProbeAdvertised {
                http: init.agent_capabilities.mcp_capabilities.http,
                sse: init.agent_capabilities.mcp_capabilities.sse,
                load_session: init.agent_capabilities.load_session,
            },
        ),
        None => (ProbeAgent::default(), ProbeAdvertised::default()),
    };
    ProbeReport {
        schema_version: PROBE_SCHEMA_VERSION,
        verdict: verdict_with_exit(verdict, agent_exit.as_ref()),
        agent,
        advertised,
        session: ProbeSession {
            accepted: session.accepted,
            acp_session_id: session.acp_session_id,
            error: session.error,
        },
        sentinel,
        report: attempt,
        elapsed_ms,
        agent_exit,
    }
}

type PromptFuture = std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), String>> + Send>>;

enum Driven {
    Ran {
        attempt_id: String,
        init: Box<InitializeResponse>,
        session: Session,
        /// The agent's process exited on its own while the probe waited.
        exited: Option<std::process::ExitStatus>,
        /// The attempt's sink, for the exit's evidence.
        sink: tether_hub::EvidenceSink,
    },
    InitFailed(ReasonCode, String),
}

/// How the sentinel is offered: its endpoint, the attempt's credential, and
/// the bridge program for stdio.
#[derive(Clone, Copy)]
struct Offer<'a> {
    endpoint: &'a ObservedEndpoint,
    credential: &'a AttemptCredential,
    bridge: &'a Path,
    others: &'a crate::support::OfferedServers,
}

/// What the probe's conversation with the agent shares: the options, the
/// hub, the sentinel as offered, the working directory session/new
/// carries, the run's deadline, the agent's process (for its exit) and the
/// progress callback.
struct Talk<'a, P> {
    opts: &'a ProbeOptions,
    hub: &'a Hub,
    sentinel: Offer<'a>,
    cwd: &'a Path,
    deadline: tokio::time::Instant,
    process: &'a tokio::sync::Mutex<ChildGroup>,
    progress: &'a P,
}

/// Where the wait on evidence stands.
struct Waiting {
    session: Session,
    /// session/new is answered or refused.
    session_done: bool,
    grace_end: Option<tokio::time::Instant>,
    exited: Option<std::process::ExitStatus>,
    prompt: Option<PromptFuture>,
    prompt_done: bool,
    /// A prompt asks for the sentinel's call: the wait ends on it.
    wants_call: bool,
}

/// The probe's conversation with the agent, inside the ACP connection.
fn drive<'a, P: Fn(ProbeStep) + Send + Sync>(
    talk: Talk<'a, P>,
) -> impl FnOnce(
    ConnectionTo<Agent>,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Driven> + Send + 'a>>
+ 'a {
    move |cx: ConnectionTo<Agent>| {
        Box::pin(async move {
            let init = match talk.initialize(&cx).await {
                Ok(init) => init,
                Err(failed) => return failed,
            };
            let Offer {
                endpoint,
                credential,
                others,
                ..
            } = talk.sentinel;
            let request = talk.attempt_request(&init);
            let mut delivery = match deliver_session(
                &cx,
                talk.hub,
                request,
                SessionRequestKind::New,
                talk.cwd,
                |handle| {
                    // Bound before session/new goes out: some agents connect before answering.
                    endpoint.bind(handle.sink.clone(), credential.clone());
                    others.bind(&handle.sink);
                },
            ) {
                Ok(delivery) => delivery,
                Err(err) => {
                    return Driven::InitFailed(ReasonCode::ProcessStartFailed, err.to_string());
                }
            };
            (talk.progress)(ProbeStep::SessionRequested);
            let rx = match talk.hub.subscribe("probe") {
                Ok(rx) => rx,
                Err(err) => {
                    return Driven::InitFailed(ReasonCode::ProcessStartFailed, err.to_string());
                }
            };
            let attempt_id = delivery.handle.attempt_id.clone();
            let sink = delivery.handle.sink.clone();
            let waited = talk
                .wait(&cx, &init, &attempt_id, rx, delivery.settle())
                .await;
            let mut session = waited.session;
            // Only a run cut off by --timeout calls a missing answer a timeout; a run
            // that ended on evidence simply has no answer yet.
            if !waited.session_done && tokio::time::Instant::now() >= talk.deadline {
                session.error.get_or_insert(ProbeError {
                    reason_code: ReasonCode::Timeout,
                    summary: Some(format!(
                        "no answer to session/new within {:?}",
                        talk.opts.target.timeout
                    )),
                });
            }
            talk.hub.flush().await;
            Driven::Ran {
                attempt_id,
                init: Box::new(init),
                session,
                exited: waited.exited,
                sink,
            }
        })
    }
}

impl<P: Fn(ProbeStep) + Send + Sync> Talk<'_, P> {
    /// `initialize`, then `authenticate` where asked. `authenticate` gets
    /// its own bound: an agent that never answers it must not use up the
    /// run, and nothing is sent after it fails.
    async fn initialize(&self, cx: &ConnectionTo<Agent>) -> Result<InitializeResponse, Driven> {
        (self.progress)(ProbeStep::Initializing);
        let init_request = InitializeRequest::new(ProtocolVersion::V1)
            .client_capabilities(ClientCapabilities::new().fs(FileSystemCapabilities::new()))
            .client_info(Implementation::new(
                "tether-probe",
                env!("CARGO_PKG_VERSION"),
            ));
        let sent = cx.send_request(init_request).block_task();
        let init = match tokio::time::timeout_at(self.deadline, sent).await {
            Ok(Ok(init)) => init,
            Ok(Err(err)) => {
                return Err(Driven::InitFailed(
                    ReasonCode::ProtocolError,
                    format!("initialize failed: {}", err.message),
                ));
            }
            Err(_) => {
                return Err(Driven::InitFailed(
                    ReasonCode::Timeout,
                    format!(
                        "no answer to initialize within {:?}",
                        self.opts.target.timeout
                    ),
                ));
            }
        };
        let Some(method) = &self.opts.authenticate else {
            return Ok(init);
        };
        let sent = cx
            .send_request(AuthenticateRequest::new(method.clone()))
            .block_task();
        let bound = AUTHENTICATE_WAIT.min(self.opts.target.timeout / 3).min(
            self.deadline
                .saturating_duration_since(tokio::time::Instant::now()),
        );
        let failure = match tokio::time::timeout(bound, sent).await {
            Ok(Ok(_)) => None,
            Ok(Err(err)) => Some(format!("authenticate {method} failed: {}", err.message)),
            Err(_) => Some(format!(
                "authenticate {method} did not answer within {} s",
                bound.as_secs()
            )),
        };
        match failure {
            Some(summary) => Err(Driven::InitFailed(
                ReasonCode::AuthRequired,
                format!("{summary}{}", auth_methods_hint(&init)),
            )),
            None => Ok(init),
        }
    }

    /// The attempt the sentinel (and the other servers offered) go into,
    /// under the agent's own name.
    fn attempt_request(&self, init: &InitializeResponse) -> AttemptRequest {
        let Offer {
            endpoint,
            credential,
            bridge,
            others,
        } = self.sentinel;
        let spec = sentinel_spec(endpoint, self.opts.target.transport, bridge, credential);
        let mut request = AttemptRequest::new(
            tether_core::Owner {
                task: "probe".into(),
                session: "probe".into(),
                execution: "probe".into(),
            },
            init.agent_info
                .as_ref()
                .map_or("acp-agent".to_owned(), |i| sanitize::name(&i.name)),
            DriveMode::Acp,
            Trigger::Probe,
            std::iter::once(spec)
                .chain(others.specs.iter().cloned())
                .collect(),
        );
        request.capabilities = tether_acp_structured::acp::capabilities_of(init);
        request
    }

    /// Waits on evidence: until tools/list (or, with a prompt, the
    /// sentinel's call) is seen and session/new is answered or refused; or
    /// the agent exits; or the grace after acceptance; or `--timeout`.
    async fn wait(
        &self,
        cx: &ConnectionTo<Agent>,
        init: &InitializeResponse,
        attempt_id: &str,
        mut rx: tokio::sync::watch::Receiver<Arc<tether_core::history::AttachmentHistory>>,
        new_session: impl std::future::Future<Output = SessionOutcome>,
    ) -> Waiting {
        tokio::pin!(new_session);
        let mut w = Waiting {
            session: Session {
                accepted: false,
                acp_session_id: None,
                error: None,
            },
            session_done: false,
            grace_end: None,
            exited: None,
            prompt: None,
            prompt_done: self.opts.prompt.is_none(),
            wants_call: self.opts.prompt.is_some(),
        };
        loop {
            // Rows are settled only once session/new is answered or
            // refused: evidence before the answer waits for it.
            if self.sentinel_done(&w, &mut rx, attempt_id) && w.session_done {
                break;
            }
            let (grace_end, wants_call) = (w.grace_end, w.wants_call);
            let grace_sleep = async move {
                match (grace_end, wants_call) {
                    (Some(end), false) => tokio::time::sleep_until(end).await,
                    _ => std::future::pending::<()>().await,
                }
            };
            let prompt_future = async {
                match w.prompt.as_mut() {
                    Some(p) => p.await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = tokio::time::sleep_until(self.deadline) => break,
                _ = grace_sleep => break,
                // The agent's exit is evidence: nothing more can come.
                _ = tokio::time::sleep(EXIT_POLL) => {
                    if let Some(status) = self.process.lock().await.exited() {
                        w.exited = Some(status);
                        self.hub.flush().await;
                        break;
                    }
                }
                changed = rx.changed() => {
                    if changed.is_err() { break; }
                }
                outcome = &mut new_session, if !w.session_done => {
                    if !self.session_answered(&mut w, cx, init, outcome) {
                        // Evidence already seen still counts; let it land, then stop.
                        self.hub.flush().await;
                        break;
                    }
                }
                result = prompt_future, if !w.prompt_done => {
                    if self.prompt_answered(&mut w, result).await {
                        break;
                    }
                }
            }
        }
        w
    }

    /// Whether the sentinel got as far as the run asks (listed; called,
    /// where a prompt asks for the call) and every other server offered
    /// settled. Shows the sentinel's row as progress.
    fn sentinel_done(
        &self,
        w: &Waiting,
        rx: &mut tokio::sync::watch::Receiver<Arc<tether_core::history::AttachmentHistory>>,
        attempt_id: &str,
    ) -> bool {
        let history = rx.borrow_and_update().clone();
        let row = history
            .attempt(attempt_id)
            .and_then(|a| a.server(self.sentinel.endpoint.server_name()).cloned());
        if let Some(row) = &row {
            (self.progress)(ProbeStep::Waiting(tether_words::display::status_label(row)));
        }
        let listed = row
            .as_ref()
            .is_some_and(|r| r.stages.tools_listed.state == tether_core::vocab::StageState::Yes);
        let called = row.as_ref().is_some_and(|r| r.last_tool_call.is_some());
        let sentinel_done = if w.wants_call {
            called || (w.prompt_done && w.session_done && listed)
        } else {
            listed
        };
        sentinel_done && self.sentinel.others.settled(history.attempt(attempt_id))
    }

    /// session/new answered: accepted (the grace begins, and the prompt
    /// goes out where there is one), or refused (why, with the agent's
    /// sign-in methods where it asks for one). Whether the wait goes on.
    fn session_answered(
        &self,
        w: &mut Waiting,
        cx: &ConnectionTo<Agent>,
        init: &InitializeResponse,
        outcome: SessionOutcome,
    ) -> bool {
        w.session_done = true;
        match (outcome.accepted, outcome.acp_session_id, outcome.error) {
            (true, id, _) => {
                (self.progress)(ProbeStep::SessionAccepted);
                w.session.accepted = true;
                w.session.acp_session_id = id.as_deref().map(sanitize::identifier);
                w.grace_end = Some(tokio::time::Instant::now() + self.opts.target.grace);
                if let (Some(text), Some(id)) = (&self.opts.prompt, id) {
                    (self.progress)(ProbeStep::Prompting);
                    let sent = cx
                        .send_request(PromptRequest::new(
                            id,
                            vec![ContentBlock::Text(TextContent::new(text.clone()))],
                        ))
                        .block_task();
                    w.prompt = Some(Box::pin(async move {
                        sent.await.map(|_| ()).map_err(|e| e.message)
                    }));
                }
                true
            }
            (false, _, error) => {
                let (reason, mut summary) =
                    error.unwrap_or((ReasonCode::SessionNewFailed, "session/new failed".into()));
                if reason == ReasonCode::AuthRequired {
                    summary.push_str(&auth_methods_hint(init));
                }
                w.session.error = Some(ProbeError {
                    reason_code: reason,
                    summary: Some(sanitize::summary(&summary)),
                });
                false
            }
        }
    }

    /// The prompt's turn ended: the call (if any) was made during it, so
    /// its evidence is let land. Whether the wait ends (it does where the
    /// run asked for the call).
    async fn prompt_answered(&self, w: &mut Waiting, result: Result<(), String>) -> bool {
        w.prompt_done = true;
        w.prompt = None;
        if let Err(message) = result {
            w.session.error.get_or_insert(ProbeError {
                reason_code: ReasonCode::SessionRequestFailed,
                summary: Some(sanitize::summary(&format!(
                    "session/prompt failed: {message}"
                ))),
            });
        }
        self.hub.flush().await;
        w.grace_end = Some(tokio::time::Instant::now() + Duration::from_millis(300));
        if w.wants_call {
            let settle = w.grace_end.unwrap_or_else(tokio::time::Instant::now);
            tokio::time::sleep_until(settle).await;
            self.hub.flush().await;
            return true;
        }
        false
    }
}

/// What the raw frame log must never show: the credential, and the header and
/// env values of the other servers offered.
fn frame_secrets(
    credential: &AttemptCredential,
    extra: &[tether_core::spec::ServerSpec],
) -> Vec<String> {
    let mut secrets = vec![credential.secret().to_owned()];
    for endpoint in extra.iter().flat_map(|s| &s.endpoints) {
        let pairs = match endpoint {
            tether_core::spec::Endpoint::Stdio { env, .. } => env,
            tether_core::spec::Endpoint::Http { headers, .. }
            | tether_core::spec::Endpoint::Sse { headers, .. } => headers,
        };
        secrets.extend(pairs.iter().map(|kv| kv.value.clone()));
    }
    secrets
}
