//! `tether probe` against fake ACP agents, each proving a distinct verdict and
//! summary, plus the reference agent over every transport. Every run must end
//! with the agent's whole process group gone.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tether_core::probe::{ProbeReport, Verdict};
use tether_core::vocab::{ReasonCode, Transport};
use tether_kandev_endpoint::SENTINEL_SERVER;
use tether_probe::{ProbeOptions, ProbeOutcome, ProbeTarget, SentinelTransport, run_probe};

fn fake() -> &'static str {
    env!("CARGO_BIN_EXE_tether-fake-agent")
}

fn bridge() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tether-test-bridge"))
}

fn options(mode: &str, transport: SentinelTransport, record: &Path) -> ProbeOptions {
    ProbeOptions {
        prompt: None,
        authenticate: None,
        target: ProbeTarget {
            transport,
            grace: Duration::from_secs(1),
            timeout: Duration::from_secs(20),
            bridge_program: Some(bridge()),
            ..ProbeTarget::new(
                fake(),
                &["--mode", mode, "--record", &record.display().to_string()],
            )
        },
    }
}

/// Whether any process of the group led by `pid` is still alive.
fn group_alive(pid: u32) -> bool {
    std::process::Command::new("kill")
        .args(["-0", "--", &format!("-{pid}")])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

async fn assert_group_gone(record: &Path) {
    let Ok(text) = std::fs::read_to_string(record) else {
        return; // The agent died before session/new: nothing of it could remain.
    };
    let value: serde_json::Value = serde_json::from_str(&text).expect("record json");
    let pid = value["pid"].as_u64().expect("pid") as u32;
    for _ in 0..40 {
        if !group_alive(pid) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the agent's process group {pid} is still alive after the probe");
}

async fn probe(mode: &str, transport: SentinelTransport) -> (ProbeOutcome, serde_json::Value) {
    let dir = tempfile::tempdir().expect("tempdir");
    let record = dir.path().join("record.json");
    let outcome = run_probe(options(mode, transport, &record), |_| {}).await;
    assert_group_gone(&record).await;
    let recorded = std::fs::read_to_string(&record)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null);
    (outcome, recorded)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_an_agent_that_connects_and_lists_then_the_verdict_is_active() {
    let (outcome, recorded) = probe("lists", SentinelTransport::Auto).await;
    let r = &outcome.report;
    assert_eq!(r.verdict, Verdict::Active);
    assert!(r.session.accepted);
    assert_eq!(r.sentinel.tool_count, Some(1));
    assert_eq!(
        r.sentinel.client.as_ref().map(|c| c.name.as_str()),
        Some("tether-fake-agent")
    );
    assert_eq!(r.agent.name.as_deref(), Some("tether-fake-agent"));
    assert!(r.advertised.http && r.advertised.sse && r.advertised.load_session);
    assert!(r.sentinel.first_contact_ms.is_some());
    // The resolved temporary directory is both where the agent runs and the cwd sent.
    let sent = outcome.cwd_sent.as_ref().expect("cwd");
    assert_eq!(recorded["cwd_received"], sent.display().to_string());
    assert_eq!(recorded["cwd_actual"], sent.display().to_string());
    assert!(!sent.exists(), "the temporary cwd is removed afterwards");
    // HOME is private.
    let home = recorded["home"].as_str().expect("home");
    assert_ne!(Some(home.to_owned()), std::env::var("HOME").ok());
    assert!(home.contains("tether-probe-home-"), "{home}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_an_agent_that_only_initializes_then_the_verdict_is_connected() {
    let (outcome, _) = probe("connect-only", SentinelTransport::Auto).await;
    let r = &outcome.report;
    assert_eq!(r.verdict, Verdict::Connected);
    assert!(r.sentinel.initialize_observed && !r.sentinel.tools_list_observed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_an_agent_that_ignores_mcp_servers_then_it_is_delivered_unverified_not_failed() {
    let started = std::time::Instant::now();
    let (outcome, _) = probe("ignore", SentinelTransport::Auto).await;
    let r = &outcome.report;
    assert_eq!(r.verdict, Verdict::DeliveredUnverified);
    assert!(r.session.accepted);
    assert!(r.session.error.is_none());
    assert!(r.sentinel.delivered && !r.sentinel.initialize_observed);
    // It waited the grace window, not the whole timeout.
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_an_agent_that_connects_after_the_session_response_then_the_wait_catches_it() {
    let mut opts_grace = options("late", SentinelTransport::Auto, Path::new("/dev/null"));
    opts_grace.target.grace = Duration::from_secs(3);
    opts_grace.target.args.truncate(2);
    let outcome = run_probe(opts_grace, |_| {}).await;
    let r = &outcome.report;
    assert_eq!(r.verdict, Verdict::Active);
    assert!(r.session.accepted);
    let first = r.sentinel.first_contact_ms.expect("first contact");
    assert!(
        first >= 900,
        "the fake connects one second late, saw {first} ms"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_an_agent_that_refuses_session_new_then_the_verdict_is_session_refused_and_nothing_claims_delivery()
 {
    let (outcome, _) = probe("session-new-error", SentinelTransport::Auto).await;
    let r = &outcome.report;
    assert_eq!(r.verdict, Verdict::SessionRefused, "{r:#?}");
    assert!(!r.session.accepted);
    assert!(
        !r.sentinel.delivered,
        "offered to a session that never existed"
    );
    let err = r.session.error.as_ref().expect("session error");
    assert_eq!(err.reason_code, ReasonCode::SessionNewFailed);
    assert!(
        err.summary.as_deref().unwrap_or("").contains("quota"),
        "{err:?}"
    );
    let attempt = r.report.as_ref().expect("report");
    assert_eq!(
        attempt.report_error.as_ref().map(|e| &e.reason_code),
        Some(&ReasonCode::SessionNewFailed)
    );
    let row = attempt.server(SENTINEL_SERVER).expect("row");
    assert_eq!(
        row.status,
        tether_core::DisplayStatus::Unavailable,
        "{row:#?}"
    );
    assert_eq!(row.reason_code, Some(ReasonCode::SessionNewFailed));
    std::fs::write(
        tether_tests::samples_dir().join("probe-report-session-refused.json"),
        serde_json::to_string_pretty(r).expect("json"),
    )
    .expect("sample");
}

/// GIVEN an agent that refuses session/new with ACP's "authentication
/// required" (-32000) WHEN probed THEN the reason is `auth_required`, not
/// `session_new_failed`, and the summary lists the agent's authMethods.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_an_agent_that_requires_authentication_then_the_reason_is_auth_required_with_its_methods()
 {
    let (outcome, _) = probe("auth-required", SentinelTransport::Auto).await;
    let r = &outcome.report;
    assert_eq!(r.verdict, Verdict::SessionRefused, "{r:#?}");
    let err = r.session.error.as_ref().expect("session error");
    assert_eq!(err.reason_code, ReasonCode::AuthRequired);
    let summary = err.summary.as_deref().unwrap_or("");
    assert!(
        summary.contains("login (Log in)") && summary.contains("--authenticate"),
        "{summary}"
    );
}

/// GIVEN an agent that never answers `authenticate` WHEN probed with
/// `--authenticate` THEN the wait is bounded on its own, the failure is the
/// verdict's cause, and session/new is never sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_an_authenticate_that_never_answers_then_it_is_the_cause_and_nothing_follows() {
    let dir = tempfile::tempdir().expect("tempdir");
    let record = dir.path().join("record.json");
    let mut opts = options("auth-hangs", SentinelTransport::Auto, &record);
    opts.authenticate = Some("login".into());
    opts.target.timeout = Duration::from_secs(6);
    let started = std::time::Instant::now();
    let outcome = run_probe(opts, |_| {}).await;
    let r = &outcome.report;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(r.verdict, Verdict::AgentFailed, "{r:#?}");
    let err = r.session.error.as_ref().expect("error");
    assert_eq!(err.reason_code, ReasonCode::AuthRequired);
    assert!(
        err.summary
            .as_deref()
            .unwrap_or("")
            .contains("authenticate login did not answer"),
        "{err:?}"
    );
    assert!(
        !record.exists(),
        "session/new was sent after authenticate failed"
    );
    assert_eq!(r.sentinel.transport, None, "nothing was offered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_an_agent_that_connects_then_fails_session_new_then_the_verdict_follows_the_evidence()
{
    let (outcome, _) = probe("connect-then-error", SentinelTransport::Auto).await;
    let r = &outcome.report;
    assert_eq!(
        r.verdict,
        Verdict::Active,
        "the honesty rule: connection evidence stands"
    );
    assert!(!r.session.accepted);
    assert_eq!(
        r.session.error.as_ref().map(|e| &e.reason_code),
        Some(&ReasonCode::SessionNewFailed)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_an_agent_that_crashes_at_start_then_the_verdict_is_agent_failed() {
    let (outcome, _) = probe("crash-at-start", SentinelTransport::Auto).await;
    let r = &outcome.report;
    assert_eq!(r.verdict, Verdict::AgentFailed);
    assert!(r.report.is_none());
    assert_eq!(
        r.sentinel.transport, None,
        "nothing was advertised or offered"
    );
    let summary = r
        .session
        .error
        .as_ref()
        .and_then(|e| e.summary.clone())
        .unwrap_or_default();
    assert!(summary.contains("exit"), "{summary}");
    assert!(
        outcome
            .stderr_tail
            .iter()
            .any(|l| l.contains("crashing at start")),
        "{:?}",
        outcome.stderr_tail
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_an_agent_that_crashes_at_session_new_then_the_crash_is_reported_beside_the_verdict()
{
    let (outcome, _) = probe("crash-at-session-new", SentinelTransport::Auto).await;
    let r = &outcome.report;
    assert_eq!(r.verdict, Verdict::SessionRefused);
    assert!(!r.session.accepted);
    let err = r.session.error.as_ref().expect("error");
    assert_eq!(err.reason_code, ReasonCode::SessionNewFailed);
    assert!(
        err.summary.as_deref().unwrap_or("").contains("exited"),
        "{err:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_an_agent_without_http_or_sse_then_auto_falls_back_to_the_stdio_bridge() {
    let (outcome, _) = probe("no-http-sse", SentinelTransport::Auto).await;
    let r = &outcome.report;
    assert_eq!(r.verdict, Verdict::Active);
    assert_eq!(r.sentinel.transport, Some(Transport::Stdio));
    assert!(!r.advertised.http && !r.advertised.sse);
    // Through the bridge, the agent's own client name is what was observed.
    assert_eq!(
        r.sentinel.client.as_ref().map(|c| c.name.as_str()),
        Some("tether-fake-agent")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_an_agent_without_http_when_http_is_forced_then_the_verdict_is_filtered() {
    let (outcome, _) = probe("no-http-sse", SentinelTransport::Http).await;
    let r = &outcome.report;
    assert_eq!(r.verdict, Verdict::Filtered);
    let row = r
        .report
        .as_ref()
        .and_then(|a| a.server(&r.sentinel.name))
        .expect("row");
    assert_eq!(row.reason_code, Some(ReasonCode::HttpUnsupported));
    assert!(!r.sentinel.delivered);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_the_reference_agent_then_every_transport_reaches_active_and_a_prompt_calls_the_tool()
{
    for transport in [
        SentinelTransport::Http,
        SentinelTransport::Sse,
        SentinelTransport::Stdio,
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut opts = options("lists", transport, &dir.path().join("r.json"));
        opts.prompt = Some("Please call the sentinel_echo tool with any text.".into());
        opts.target.out_dir = Some(dir.path().join("out"));
        let outcome = run_probe(opts, |_| {}).await;
        let r = &outcome.report;
        assert_eq!(r.verdict, Verdict::Active, "{transport:?}");
        assert!(
            r.sentinel.tool_call_observed,
            "{transport:?}: the prompt made the agent call the tool"
        );
        assert!(r.session.accepted);
        let frames =
            std::fs::read_to_string(dir.path().join("out/acp-frames.jsonl")).expect("frames");
        assert!(
            frames.lines().any(|l| l.contains("session/new")),
            "raw frames written"
        );
        let markers =
            std::fs::read_to_string(dir.path().join("out/sentinel.jsonl")).expect("markers");
        assert!(markers.contains("tool_call_observed") && markers.contains("conn_"));
        assert_group_gone(&dir.path().join("r.json")).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_a_missing_command_then_the_verdict_is_agent_failed_with_command_not_found() {
    let mut opts = options("lists", SentinelTransport::Auto, Path::new("/dev/null"));
    opts.target.program = "definitely-not-an-agent-7f3a".into();
    opts.target.args.clear();
    let outcome = run_probe(opts, |_| {}).await;
    assert_eq!(outcome.report.verdict, Verdict::AgentFailed);
    assert_eq!(
        outcome
            .report
            .session
            .error
            .as_ref()
            .map(|e| &e.reason_code),
        Some(&ReasonCode::CommandNotFound)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_an_active_and_an_agent_failed_report_then_both_round_trip_and_are_written_as_samples()
 {
    let (outcome, _) = probe("lists", SentinelTransport::Auto).await;
    let (failed, _) = probe("crash-at-start", SentinelTransport::Auto).await;
    assert_eq!(outcome.report.verdict, Verdict::Active);
    assert_eq!(failed.report.verdict, Verdict::AgentFailed);
    let attempt = outcome
        .report
        .report
        .as_ref()
        .expect("an active probe carries its attempt");
    assert_eq!(
        attempt.server(SENTINEL_SERVER).map(|s| s.status),
        Some(tether_core::DisplayStatus::Active)
    );
    assert!(
        failed.report.session.error.is_some(),
        "the failure is named"
    );

    // Each document reads back as what was written, with the contract's version.
    for (name, report) in [
        ("probe-report.json", &outcome.report),
        ("probe-report-agent-failed.json", &failed.report),
    ] {
        let json = serde_json::to_string_pretty(report).expect("json");
        let value: serde_json::Value = serde_json::from_str(&json).expect("valid json");
        assert_eq!(
            value["schema_version"],
            tether_core::probe::PROBE_SCHEMA_VERSION,
            "{name}"
        );
        let back: ProbeReport = serde_json::from_str(&json).expect("round trip");
        assert_eq!(&back, report, "{name} round-trips");
        std::fs::write(tether_tests::samples_dir().join(name), &json).expect("write");
    }
    let json = serde_json::to_string_pretty(attempt).expect("json");
    std::fs::write(tether_tests::samples_dir().join("attempt-probe.json"), json).expect("write");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_an_agent_asking_for_writes_then_the_probe_denies_them_and_never_hangs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let record = dir.path().join("record.json");
    let mut opts = options("ask-client", SentinelTransport::Auto, &record);
    opts.prompt = Some("Please call sentinel_echo.".into());
    let started = std::time::Instant::now();
    let outcome = run_probe(opts, |_| {}).await;
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "agent requests were answered promptly"
    );
    assert_eq!(outcome.report.verdict, Verdict::Active);
    assert!(outcome.report.sentinel.tool_call_observed);
    let answers: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(record.with_extension("answers.json")).expect("answers recorded"),
    )
    .expect("json");
    // A write permission is rejected; the sentinel's harmless tool is allowed once.
    assert_eq!(
        answers["write_permission"]["Ok"]["optionId"], "reject",
        "{answers}"
    );
    assert_eq!(
        answers["sentinel_permission"]["Ok"]["optionId"], "allow",
        "{answers}"
    );
    // fs is not offered, so a write request is refused outright.
    assert!(answers["fs_write"]["Err"].is_string(), "{answers}");
    assert_group_gone(&record).await;
}

/// GIVEN an agent that drops the credential it was given (as any other local
/// process that only found the sentinel's port would connect) WHEN it posts
/// initialize and tools/list over each transport THEN the sentinel refuses
/// it, the verdict stays `delivered_unverified`, no client is credited, and
/// the report shows the refused contact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_a_client_without_the_credential_then_the_verdict_is_not_active_and_the_intrusion_is_visible()
 {
    for transport in [
        SentinelTransport::Http,
        SentinelTransport::Sse,
        SentinelTransport::Stdio,
    ] {
        let (outcome, _) = probe("intrude", transport).await;
        let r = &outcome.report;
        assert_eq!(
            r.verdict,
            Verdict::DeliveredUnverified,
            "{transport:?}: {r:#?}"
        );
        assert!(r.sentinel.client.is_none(), "{transport:?}: {r:#?}");
        assert!(!r.sentinel.initialize_observed);
        let attempt = r.report.as_ref().expect("attempt");
        let refused: Vec<_> = attempt
            .evidence
            .iter()
            .filter(|e| e.kind.as_str() == "unauthenticated_contact")
            .collect();
        if transport == SentinelTransport::Stdio {
            // Without its token the bridge does not even dial the endpoint.
            continue;
        }
        assert!(
            !refused.is_empty(),
            "{transport:?}: {:#?}",
            attempt.evidence
        );
        assert!(
            refused
                .iter()
                .all(|e| e.reason_code == Some(ReasonCode::CredentialMissing)),
            "{refused:#?}"
        );
    }
}

/// GIVEN a probe that writes raw ACP frames (`--out`) WHEN the sentinel is
/// offered over every transport THEN the credential the frames carried
/// (header and bridge token) is redacted, and no report or marker holds it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_raw_frames_then_the_credential_never_reaches_a_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let record = dir.path().join("record.json");
    let out = dir.path().join("out");
    let mut opts = options("lists", SentinelTransport::Auto, &record);
    opts.target.out_dir = Some(out.clone());
    let outcome = run_probe(opts, |_| {}).await;
    assert_eq!(
        outcome.report.verdict,
        Verdict::Active,
        "{:#?}",
        outcome.report
    );
    let frames = std::fs::read_to_string(out.join("acp-frames.jsonl")).expect("frames");
    assert!(
        frames.contains("mcpServers"),
        "the session/new frame is there"
    );
    assert!(
        frames.contains("Bearer [redacted]"),
        "the header is kept, its value redacted"
    );
    let report = serde_json::to_string(&outcome.report).expect("json");
    let markers = std::fs::read_to_string(out.join("sentinel.jsonl")).unwrap_or_default();
    for (what, text) in [
        ("frames", &frames),
        ("report", &report),
        ("markers", &markers),
    ] {
        // The credential is 64 hex digits; nothing of that shape may remain.
        let leaked = text
            .split(|c: char| !c.is_ascii_hexdigit())
            .any(|run| run.len() >= 64);
        assert!(!leaked, "{what} holds a credential-shaped secret: {text}");
    }
}

/// GIVEN an agent that starts an MCP server which daemonizes (a child in a
/// new session, as language servers and hub daemons do) WHEN the probe ends
/// THEN the daemon is gone with the agent, found by walking the process table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_an_agent_whose_mcp_server_daemonizes_then_the_daemon_does_not_outlive_the_probe() {
    let dir = tempfile::tempdir().expect("tempdir");
    let record = dir.path().join("record.json");
    let token = format!("{}7", 80_000 + std::process::id() % 9_000);
    let hostile = env!("CARGO_BIN_EXE_tether-hostile-mcp");
    let started = dir.path().join("daemon-started");
    // The agent initializes the sentinel without listing it, so it moves on
    // to the daemonizing server at once; the probe then waits out the grace.
    let mut opts = options("connect-only", SentinelTransport::Http, &record);
    opts.target.grace = Duration::from_secs(3);
    opts.target.extra_servers = vec![tether_core::ServerSpec::new(
        "daemonizing",
        tether_core::ServerSource::Profile,
        tether_core::Endpoint::Stdio {
            command: "sh".into(),
            args: vec![
                "-c".into(),
                format!(
                    "setsid sleep {token} & touch {}; exec {hostile} --mode huge",
                    started.display()
                ),
            ],
            env: vec![],
            cwd: None,
        },
    )];
    let outcome = run_probe(opts, |_| {}).await;
    assert_eq!(
        outcome.report.verdict,
        Verdict::Connected,
        "{:#?}",
        outcome.report
    );
    let left = tether_tests::leftovers(&token);
    assert!(left.is_empty(), "left behind {left:?}");
}

/// Probes the fake agent with several modes, a long grace (so only evidence
/// or an exit can end the wait early) and a record file.
async fn probe_modes(modes: &[&str]) -> (ProbeOutcome, Duration) {
    let dir = tempfile::tempdir().expect("tempdir");
    let record = dir.path().join("record.json");
    let mut args: Vec<String> = modes
        .iter()
        .flat_map(|m| ["--mode".to_owned(), (*m).to_owned()])
        .collect();
    args.extend(["--record".to_owned(), record.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let opts = ProbeOptions {
        prompt: None,
        authenticate: None,
        target: ProbeTarget {
            grace: Duration::from_secs(30),
            timeout: Duration::from_secs(60),
            bridge_program: Some(bridge()),
            ..ProbeTarget::new(fake(), &args)
        },
    };
    let started = std::time::Instant::now();
    let outcome = run_probe(opts, |_| {}).await;
    let took = started.elapsed();
    assert_group_gone(&record).await;
    (outcome, took)
}

/// GIVEN an ACP agent that accepts the session and then exits with a status,
/// never having connected WHEN it is probed with a long grace THEN its exit
/// ends the wait at once, the verdict is `agent_exited`, the report carries
/// the status, how long it ran and its last stderr lines, and the row says
/// it was delivered to a process that exited.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_an_agent_that_exits_after_the_session_before_contact_then_the_verdict_is_agent_exited()
 {
    let (outcome, took) = probe_modes(&["ignore", "exit-after-session-new"]).await;
    let r = &outcome.report;
    assert_eq!(r.verdict, Verdict::AgentExited, "{r:#?}");
    assert!(r.session.accepted);
    assert!(
        took < Duration::from_secs(15),
        "the exit ended the wait: {took:?}"
    );
    let exit = r.agent_exit.as_ref().expect("agent_exit");
    assert_eq!(exit.code, Some(7));
    assert_eq!(exit.signal, None);
    assert!(exit.before_contact);
    assert!(exit.ran_ms >= 300, "{exit:?}");
    assert!(
        exit.stderr_tail
            .iter()
            .any(|l| l.contains("exiting after session/new")),
        "{exit:?}"
    );
    let attempt = r.report.as_ref().expect("attempt");
    let row = attempt.server(&r.sentinel.name).expect("row");
    assert_eq!(row.status, tether_core::DisplayStatus::Delivered);
    let label = tether_words::display::status_label_in(attempt, row);
    assert!(
        label.contains("to a process that exited (exit status 7"),
        "{label}"
    );
    assert!(
        attempt
            .evidence
            .iter()
            .any(|e| e.kind == tether_core::vocab::EvidenceKind::AgentExited)
    );
    // The JSON contract carries it.
    let json = serde_json::to_value(r).expect("json");
    assert_eq!(json["verdict"], "agent_exited");
    assert_eq!(json["agent_exit"]["code"], 7);
    assert_eq!(json["schema_version"], 3);
}

/// GIVEN an ACP agent killed by a signal after the session WHEN probed THEN
/// the report names the signal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_an_agent_killed_by_a_signal_after_the_session_then_the_signal_is_reported() {
    let (outcome, took) = probe_modes(&["ignore", "killed-after-session-new"]).await;
    let r = &outcome.report;
    assert_eq!(r.verdict, Verdict::AgentExited, "{r:#?}");
    assert!(took < Duration::from_secs(15), "{took:?}");
    let exit = r.agent_exit.as_ref().expect("agent_exit");
    assert_eq!(exit.code, None);
    assert_eq!(exit.signal, Some(9));
}

/// GIVEN an ACP agent that connects (initialize only) and then exits WHEN
/// probed THEN the verdict follows the evidence (`connected`), and the exit
/// is reported beside it, after contact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_an_agent_that_exits_after_contact_then_the_verdict_follows_the_evidence() {
    let (outcome, took) = probe_modes(&["connect-only", "exit-after-session-new"]).await;
    let r = &outcome.report;
    assert_eq!(r.verdict, Verdict::Connected, "{r:#?}");
    assert!(took < Duration::from_secs(15), "{took:?}");
    let exit = r.agent_exit.as_ref().expect("agent_exit");
    assert_eq!(exit.code, Some(7));
    assert!(!exit.before_contact);
}
