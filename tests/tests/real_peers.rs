//! `tether probe` against the real, pinned ACP agents in `tests/peers`
//! (`npm ci` there), over streamable HTTP, legacy SSE and the stdio bridge,
//! each holding the sentinel's per-attempt credential. Without them the tests skip loudly;
//! with `TETHER_REQUIRE_PEERS=1` (set by `.ci/run` where npm exists) a missing
//! peer is a failure, so CI can never skip silently.

use std::path::PathBuf;
use std::time::Duration;

use tether_core::probe::Verdict;
use tether_probe::{ProbeOptions, ProbeTarget, SentinelTransport, run_probe};
use tether_tests::Release;

fn peer(bin: &str) -> Option<PathBuf> {
    tether_tests::peer(&format!("node_modules/.bin/{bin}"))
}

async fn probe_peer(
    program: PathBuf,
    args: &[&str],
    transport: SentinelTransport,
    release: Release,
) -> tether_core::probe::ProbeReport {
    let opts = ProbeOptions {
        prompt: None,
        authenticate: None,
        target: ProbeTarget {
            transport,
            // The release's own Node (22, for the newest) first on PATH.
            env: vec![("PATH".into(), release.path())],
            grace: Duration::from_secs(10),
            timeout: Duration::from_secs(90),
            bridge_program: Some(PathBuf::from(env!("CARGO_BIN_EXE_tether-test-bridge"))),
            ..ProbeTarget::new(program.display().to_string(), args)
        },
    };
    run_probe(opts, |_| {}).await.report
}

async fn assert_active(bin: &str, args: &[&str], client: &str) {
    assert_active_on(Release::Pinned, bin, args, client).await;
}

async fn assert_active_on(release: Release, bin: &str, args: &[&str], client: &str) {
    let Some(program) = release.peer(&format!("node_modules/.bin/{bin}")) else {
        return;
    };
    for transport in [
        SentinelTransport::Http,
        SentinelTransport::Sse,
        SentinelTransport::Stdio,
    ] {
        let report = probe_peer(program.clone(), args, transport, release).await;
        assert_eq!(
            report.verdict,
            Verdict::Active,
            "{bin} over {transport:?}: {report:#?}"
        );
        assert!(report.sentinel.tool_count.unwrap_or(0) >= 1);
        assert_eq!(
            report.sentinel.client.as_ref().map(|c| c.name.as_str()),
            Some(client)
        );
        assert!(report.session.accepted, "{bin}: {:?}", report.session.error);
        // The agent used the credential it was given: nothing was refused.
        let attempt = report.report.as_ref().expect("attempt");
        assert!(
            !attempt
                .evidence
                .iter()
                .any(|e| e.kind.as_str() == "unauthenticated_contact"),
            "{bin} over {transport:?} was refused: {:#?}",
            attempt.evidence
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_agent_acp_reaches_active() {
    assert_active("claude-agent-acp", &[], "claude-code").await;
}

/// The newest claude-agent-acp npm serves (0.101.0, on Node 22).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_agent_acp_newest_reaches_active() {
    assert_active_on(Release::Newest, "claude-agent-acp", &[], "claude-code").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_acp_reaches_active() {
    assert_active("opencode", &["acp"], "opencode").await;
}

/// GIVEN the reference agent offered three real third-party stdio servers
/// (not relayed) beside the sentinel, one named like its own argument WHEN
/// the sentinel's tools/list comes before the `session/new` answer (the
/// agent starts every server first) THEN the probe waits for the answer:
/// the session is accepted and every row is delivered, none left unknown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_are_settled_only_after_the_session_answer() {
    let agent = tether_tests::workspace_bin("tether-reference-agent");
    let (Some(everything), Some(memory), Some(time)) = (
        peer("mcp-server-everything"),
        peer("mcp-server-memory"),
        tether_tests::peer(".venv/bin/mcp-server-time"),
    ) else {
        return;
    };
    let stdio = |name: &str, command: &PathBuf, args: &[&str]| {
        tether_tests::stdio_server(name, &command.display().to_string(), args, &[])
    };
    for _ in 0..2 {
        let opts = ProbeOptions {
            prompt: None,
            authenticate: None,
            target: ProbeTarget {
                grace: Duration::from_secs(10),
                timeout: Duration::from_secs(90),
                extra_servers: vec![
                    stdio("every", &everything, &[]),
                    stdio("notes", &memory, &["notes"]),
                    stdio("time", &time, &[]),
                ],
                ..ProbeTarget::new(agent.display().to_string(), &[])
            },
        };
        let report = run_probe(opts, |_| {}).await.report;
        assert_eq!(report.verdict, Verdict::Active, "{report:#?}");
        assert!(report.session.accepted, "{:?}", report.session.error);
        let attempt = report.report.as_ref().expect("attempt");
        for name in ["every", "notes", "time"] {
            let row = attempt.server(name).expect("row");
            assert_eq!(
                row.status,
                tether_core::DisplayStatus::Delivered,
                "{name}: {row:#?}"
            );
        }
    }
}
