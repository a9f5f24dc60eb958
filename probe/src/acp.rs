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
    FrameLog, SessionRequestKind, answer_permission, deliver_session, stdio_lines,
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
    let started = Instant::now();
    crate::support::warm_token_encoder();
    let deadline = tokio::time::Instant::now() + opts.target.timeout;
    let elapsed = || u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let sentinel_transport = requested_transport(opts.target.transport);

    let failed =
        |reason: ReasonCode, summary: String, stderr: Vec<String>, cwd: Option<PathBuf>| {
            let agent = ProbeAgent::default();
            ProbeOutcome::agent_failed(agent, reason, &summary, elapsed(), stderr, cwd)
        };

    // === Working directory, HOME, output directory ===
    // The resolved path is what the agent runs in and what session/new carries.
    let dirs = match ProbeDirs::prepare(opts.target.cwd.as_deref(), opts.target.keep_home) {
        Ok(dirs) => dirs,
        Err(summary) => return failed(ReasonCode::ProcessStartFailed, summary, vec![], None),
    };
    let cwd = dirs.cwd.clone();
    let home = dirs.home.clone();
    // Third-party servers, relayed when asked (the channel lives to the end).
    let offered = match opts.target.offer_servers().await {
        Ok(offered) => offered,
        Err(summary) => return failed(ReasonCode::ProcessStartFailed, summary, vec![], None),
    };
    // The attempt's credential for the sentinel: only this agent gets it, and
    // the frame log never shows it.
    let credential = AttemptCredential::generate();
    let frames = match &opts.target.out_dir {
        Some(dir) => match std::fs::create_dir_all(dir).and_then(|()| {
            FrameLog::create(&dir.join("acp-frames.jsonl"))
                .map(|log| log.redacting(frame_secrets(&credential, &opts.target.extra_servers)))
        }) {
            Ok(log) => Some(log),
            Err(err) => {
                return failed(
                    ReasonCode::ProcessStartFailed,
                    format!("cannot write to --out {}: {err}", dir.display()),
                    vec![],
                    Some(cwd),
                );
            }
        },
        None => None,
    };

    // === The sentinel and the hub ===
    let endpoint = match ObservedEndpoint::sentinel().await {
        Ok(endpoint) => endpoint,
        Err(err) => {
            return failed(
                ReasonCode::ProcessStartFailed,
                format!("cannot start the sentinel endpoint: {err}"),
                vec![],
                Some(cwd),
            );
        }
    };
    let mut registry = Registry::empty();
    if let Err(err) = registry.add(
        Arc::new(tether_acp_structured::AcpStructured),
        PluginSource::Static,
    ) {
        return failed(
            ReasonCode::ProcessStartFailed,
            err.to_string(),
            vec![],
            Some(cwd),
        );
    }
    let hub = Hub::new(registry);
    opts.target.export.install(&endpoint, &hub);
    let bridge = opts.target.bridge();

    // === The agent ===
    progress(ProbeStep::Spawning);
    let command = ChildSpec {
        program: resolve_program(&opts.target.program),
        args: opts.target.args.clone(),
        env: agent_env(&opts.target.env, opts.target.inherit_env, home.as_deref()),
        inherit_env: opts.target.inherit_env,
        cwd: cwd.clone(),
    };
    let (process, stdin, stdout) = match ChildGroup::spawn(&command) {
        Ok(spawned) => spawned,
        Err(err) => {
            let reason = err.reason_code();
            endpoint.shutdown().await;
            return failed(reason, err.to_string(), vec![], Some(cwd));
        }
    };
    let spawned_at = Instant::now();
    let stderr = process.stderr_tail();
    // Shared with the wait, which watches for the agent's exit.
    let process = tokio::sync::Mutex::new(process);

    let transport = stdio_lines(stdin, stdout, frames.clone());
    let sentinel = Offer {
        endpoint: &endpoint,
        credential: &credential,
        bridge: &bridge,
        others: &offered,
    };
    let run = drive(&opts, &hub, sentinel, &cwd, deadline, &process, &progress);
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
    let driven = tokio::time::timeout_at(
        deadline + Duration::from_millis(200),
        client.connect_with(transport, async |cx: ConnectionTo<Agent>| Ok(run(cx).await)),
    )
    .await;

    crate::support::await_catalogs(&hub, "probe", crate::support::CATALOG_WAIT).await;
    if let Some(log) = &frames {
        log.flush();
    }
    let scrubber = sanitize::Scrubber::new()
        .with_secrets(frame_secrets(&credential, &opts.target.extra_servers));
    let stderr_tail = scrubbed_tail(&stderr.lock().unwrap_or_else(|p| p.into_inner()), &scrubber);
    // The agent's own exit, if it went while the probe waited. When the
    // connection ended before the session (its stdout closed: a crash, most
    // likely), the exit follows at once; it is waited for, briefly and
    // within the run's deadline, so the summary can say how it ended.
    let connection_ended = matches!(&driven, Ok(Ok(Driven::InitFailed(..))) | Ok(Err(_)));
    let own_exit = {
        let mut child = process.lock().await;
        let until = deadline.min(tokio::time::Instant::now() + EXIT_AFTER_CLOSE);
        let mut exit = child.exited();
        while exit.is_none() && connection_ended && tokio::time::Instant::now() < until {
            tokio::time::sleep(EXIT_POLL).await;
            exit = child.exited();
        }
        exit
    };

    // Everything below decides the outcome; the agent is stopped after it
    // is handed over.
    let outcome = match driven {
        Ok(Ok(Driven::Ran {
            attempt_id,
            init,
            session,
            exited,
            sink,
        })) => {
            let attempt = hub
                .snapshot("probe")
                .and_then(|h| h.attempt(&attempt_id).cloned());
            let agent_exit = exited.map(|status| {
                crate::support::record_agent_exit(
                    &sink,
                    status,
                    spawned_at.elapsed(),
                    attempt.as_ref(),
                    stderr_tail.clone(),
                )
            });
            let attempt = match &agent_exit {
                // Read again, with the exit's evidence in.
                Some(_) => {
                    hub.flush().await;
                    hub.snapshot("probe")
                        .and_then(|h| h.attempt(&attempt_id).cloned())
                }
                None => attempt,
            };
            Ok((attempt, *init, session, agent_exit))
        }
        Ok(Ok(Driven::InitFailed(reason, summary))) => Err(failed(
            reason,
            with_exit(summary, own_exit),
            stderr_tail.clone(),
            Some(cwd.clone()),
        )),
        Ok(Err(err)) => Err(failed(
            ReasonCode::ProtocolError,
            with_exit(format!("ACP connection failed: {}", err.message), own_exit),
            stderr_tail.clone(),
            Some(cwd.clone()),
        )),
        Err(_) => {
            // The whole run hit --timeout before the driver could report; read what the hub has.
            let attempt = hub.snapshot("probe").and_then(|h| h.current().cloned());
            if attempt.is_none() {
                Err(failed(
                    ReasonCode::Timeout,
                    format!(
                        "the agent did not answer initialize within {:?}",
                        opts.target.timeout
                    ),
                    stderr_tail.clone(),
                    Some(cwd.clone()),
                ))
            } else {
                Err(ProbeOutcome {
                    report: build_report(
                        attempt,
                        None,
                        Session {
                            accepted: false,
                            acp_session_id: None,
                            error: Some(ProbeError {
                                reason_code: ReasonCode::Timeout,
                                summary: Some(format!(
                                    "no answer to session/new within {:?}",
                                    opts.target.timeout
                                )),
                            }),
                        },
                        sentinel_transport.clone(),
                        elapsed(),
                        None,
                    ),
                    stderr_tail: stderr_tail.clone(),
                    cwd_sent: Some(cwd.clone()),
                })
            }
        }
    };
    let outcome = match outcome {
        Err(outcome) => outcome,
        Ok((attempt, init, mut session, agent_exit)) => {
            if let (Some(err), Some(status)) = (session.error.as_mut(), own_exit)
                && !status.success()
                && process_died_early(&err.summary)
            {
                err.summary = Some(sanitize::summary(&format!(
                    "{} (the agent exited: {status})",
                    err.summary.as_deref().unwrap_or("")
                )));
            }
            if let Some(dir) = &opts.target.out_dir
                && let Some(attempt) = &attempt
            {
                write_sentinel_markers(dir, attempt, endpoint_name());
            }
            let report = build_report(
                attempt,
                Some(init),
                session,
                sentinel_transport,
                elapsed(),
                agent_exit,
            );
            ProbeOutcome {
                report,
                stderr_tail,
                cwd_sent: Some(cwd),
            }
        }
    };
    progress(ProbeStep::Decided(Arc::new(outcome.clone())));
    progress(ProbeStep::Finishing);
    process.lock().await.kill_group().await;
    endpoint.shutdown().await;
    outcome
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

/// The probe's conversation with the agent, inside the ACP connection.
fn drive<'a>(
    opts: &'a ProbeOptions,
    hub: &'a Hub,
    sentinel: Offer<'a>,
    cwd: &'a Path,
    deadline: tokio::time::Instant,
    process: &'a tokio::sync::Mutex<ChildGroup>,
    progress: &'a (impl Fn(ProbeStep) + Send + Sync),
) -> impl FnOnce(
    ConnectionTo<Agent>,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Driven> + Send + 'a>>
+ 'a {
    let Offer {
        endpoint,
        credential,
        bridge,
        others,
    } = sentinel;
    move |cx: ConnectionTo<Agent>| {
        Box::pin(async move {
            progress(ProbeStep::Initializing);
            let init_request = InitializeRequest::new(ProtocolVersion::V1)
                .client_capabilities(ClientCapabilities::new().fs(FileSystemCapabilities::new()))
                .client_info(Implementation::new(
                    "tether-probe",
                    env!("CARGO_PKG_VERSION"),
                ));
            let init =
                match tokio::time::timeout_at(deadline, cx.send_request(init_request).block_task())
                    .await
                {
                    Ok(Ok(init)) => init,
                    Ok(Err(err)) => {
                        return Driven::InitFailed(
                            ReasonCode::ProtocolError,
                            format!("initialize failed: {}", err.message),
                        );
                    }
                    Err(_) => {
                        return Driven::InitFailed(
                            ReasonCode::Timeout,
                            format!("no answer to initialize within {:?}", opts.target.timeout),
                        );
                    }
                };
            let capabilities = tether_acp_structured::acp::capabilities_of(&init);

            // `authenticate` gets its own bound: an agent that never answers it
            // must not use up the run, and nothing is sent after it fails.
            if let Some(method) = &opts.authenticate {
                let sent = cx
                    .send_request(AuthenticateRequest::new(method.clone()))
                    .block_task();
                let bound = AUTHENTICATE_WAIT
                    .min(opts.target.timeout / 3)
                    .min(deadline.saturating_duration_since(tokio::time::Instant::now()));
                let failure = match tokio::time::timeout(bound, sent).await {
                    Ok(Ok(_)) => None,
                    Ok(Err(err)) => Some(format!("authenticate {method} failed: {}", err.message)),
                    Err(_) => Some(format!(
                        "authenticate {method} did not answer within {} s",
                        bound.as_secs()
                    )),
                };
                if let Some(summary) = failure {
                    return Driven::InitFailed(
                        ReasonCode::AuthRequired,
                        format!("{summary}{}", auth_methods_hint(&init)),
                    );
                }
            }

            let spec = sentinel_spec(endpoint, opts.target.transport, bridge, credential);
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
            request.capabilities = capabilities;
            let mut delivery =
                match deliver_session(&cx, hub, request, SessionRequestKind::New, cwd, |handle| {
                    // Bound before session/new goes out: some agents connect before answering.
                    endpoint.bind(handle.sink.clone(), credential.clone());
                    others.bind(&handle.sink);
                }) {
                    Ok(delivery) => delivery,
                    Err(err) => {
                        return Driven::InitFailed(ReasonCode::ProcessStartFailed, err.to_string());
                    }
                };
            progress(ProbeStep::SessionRequested);
            let mut rx = match hub.subscribe("probe") {
                Ok(rx) => rx,
                Err(err) => {
                    return Driven::InitFailed(ReasonCode::ProcessStartFailed, err.to_string());
                }
            };
            let attempt_id = delivery.handle.attempt_id.clone();
            let sink = delivery.handle.sink.clone();
            let new_session = delivery.settle();
            tokio::pin!(new_session);

            let mut session = Session {
                accepted: false,
                acp_session_id: None,
                error: None,
            };
            let mut session_done = false;
            let mut grace_end: Option<tokio::time::Instant> = None;
            let mut exited: Option<std::process::ExitStatus> = None;
            let mut prompt: Option<PromptFuture> = None;
            let mut prompt_done = opts.prompt.is_none();
            let wants_call = opts.prompt.is_some();

            loop {
                let done = {
                    let history = rx.borrow_and_update().clone();
                    let row = history
                        .attempt(&attempt_id)
                        .and_then(|a| a.server(endpoint.server_name()).cloned());
                    if let Some(row) = &row {
                        progress(ProbeStep::Waiting(tether_core::display::status_label(row)));
                    }
                    let listed = row.as_ref().is_some_and(|r| {
                        r.stages.tools_listed.state == tether_core::vocab::StageState::Yes
                    });
                    let called = row.as_ref().is_some_and(|r| r.last_tool_call.is_some());
                    let sentinel_done = if wants_call {
                        called || (prompt_done && session_done && listed)
                    } else {
                        listed
                    };
                    sentinel_done && others.settled(history.attempt(&attempt_id))
                };
                // Rows are settled only once session/new is answered or
                // refused: evidence before the answer waits for it.
                if done && session_done {
                    break;
                }
                let grace_sleep = async {
                    match (grace_end, wants_call) {
                        (Some(end), false) => tokio::time::sleep_until(end).await,
                        _ => std::future::pending::<()>().await,
                    }
                };
                let prompt_future = async {
                    match prompt.as_mut() {
                        Some(p) => p.await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    _ = tokio::time::sleep_until(deadline) => break,
                    _ = grace_sleep => break,
                    // The agent's exit is evidence: nothing more can come.
                    _ = tokio::time::sleep(EXIT_POLL) => {
                        if let Some(status) = process.lock().await.exited() {
                            exited = Some(status);
                            hub.flush().await;
                            break;
                        }
                    }
                    changed = rx.changed() => {
                        if changed.is_err() { break; }
                    }
                    outcome = &mut new_session, if !session_done => {
                        session_done = true;
                        match (outcome.accepted, outcome.acp_session_id, outcome.error) {
                            (true, id, _) => {
                                progress(ProbeStep::SessionAccepted);
                                session.accepted = true;
                                session.acp_session_id = id.as_deref().map(sanitize::identifier);
                                grace_end = Some(tokio::time::Instant::now() + opts.target.grace);
                                if let (Some(text), Some(id)) = (&opts.prompt, id) {
                                    progress(ProbeStep::Prompting);
                                    let sent = cx.send_request(PromptRequest::new(
                                        id,
                                        vec![ContentBlock::Text(TextContent::new(text.clone()))],
                                    )).block_task();
                                    prompt = Some(Box::pin(async move { sent.await.map(|_| ()).map_err(|e| e.message) }));
                                }
                            }
                            (false, _, error) => {
                                let (reason, mut summary) = error.unwrap_or((ReasonCode::SessionNewFailed, "session/new failed".into()));
                                if reason == ReasonCode::AuthRequired {
                                    summary.push_str(&auth_methods_hint(&init));
                                }
                                session.error = Some(ProbeError {
                                    reason_code: reason,
                                    summary: Some(sanitize::summary(&summary)),
                                });
                                // Evidence already seen still counts; let it land, then stop.
                                hub.flush().await;
                                break;
                            }
                        }
                    }
                    result = prompt_future, if !prompt_done => {
                        prompt_done = true;
                        prompt = None;
                        if let Err(message) = result {
                            session.error.get_or_insert(ProbeError {
                                reason_code: ReasonCode::SessionRequestFailed,
                                summary: Some(sanitize::summary(&format!("session/prompt failed: {message}"))),
                            });
                        }
                        // The call (if any) was made during the turn; let its evidence land.
                        hub.flush().await;
                        grace_end = Some(tokio::time::Instant::now() + Duration::from_millis(300));
                        if wants_call {
                            let settle = grace_end.unwrap_or_else(tokio::time::Instant::now);
                            tokio::time::sleep_until(settle).await;
                            hub.flush().await;
                            break;
                        }
                    }
                }
            }
            // Only a run cut off by --timeout calls a missing answer a timeout; a run
            // that ended on evidence simply has no answer yet.
            if !session_done && tokio::time::Instant::now() >= deadline {
                session.error.get_or_insert(ProbeError {
                    reason_code: ReasonCode::Timeout,
                    summary: Some(format!(
                        "no answer to session/new within {:?}",
                        opts.target.timeout
                    )),
                });
            }
            hub.flush().await;
            Driven::Ran {
                attempt_id,
                init: Box::new(init),
                session,
                exited,
                sink,
            }
        })
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
