//! Endpoint tests against real MCP servers and hostile fakes; each hostile run
//! is followed by a check that no process it started is left. Plus the host's
//! diagnostics API: authorizer first, names only, results kept apart from
//! attachment status, recent output on demand, nothing secret copied.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tether_core::model::EndpointTestResult;
use tether_core::model::Evidence;
use tether_core::registry::Registry;
use tether_core::vocab::{DisplayStatus, EvidenceKind, ReasonCode, ServerSource, Trigger};
use tether_core::{DriveMode, Endpoint, KeyValue, ServerSpec};
use tether_diagnostics::api::{
    Action, Diagnostics, DiagnosticsError, EndpointTestRequest, RecentOutput, RecentOutputRequest,
};
use tether_diagnostics::endpoint_check::{
    CheckLimits, ToolCall, check_endpoint, check_endpoint_calling,
};
use tether_hub::{AttemptRequest, Hub};
use tether_process::OutputTail;
use tokio_util::sync::CancellationToken;
// Links the first-party plugins, so `Registry::with_static` has them.
use tether_tests as _;

/// A pinned real server, or a loud skip (a failure under TETHER_REQUIRE_PEERS).
fn peer(relative: &str) -> Option<PathBuf> {
    tether_tests::peer(relative)
}

fn stdio(command: &Path, args: &[&str]) -> Endpoint {
    Endpoint::Stdio {
        command: command.display().to_string(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        env: vec![],
        cwd: None,
    }
}

fn limits(seconds: u64) -> CheckLimits {
    CheckLimits {
        timeout: Duration::from_secs(seconds),
        ..CheckLimits::default()
    }
}

async fn run(endpoint: &Endpoint, seconds: u64) -> EndpointTestResult {
    check_endpoint(endpoint, limits(seconds), CancellationToken::new()).await
}

fn alive(pid: u32) -> bool {
    std::process::Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Every process the hostile server recorded is gone. A missing or empty pid
/// file fails: it would mean the claim was never checked.
async fn assert_none_left(pids_file: &Path) {
    let text = std::fs::read_to_string(pids_file).unwrap_or_else(|e| {
        panic!(
            "the hostile server's pid file {} is unreadable ({e}); cannot check cleanup",
            pids_file.display()
        )
    });
    let pids: Vec<u32> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
    assert!(
        !pids.is_empty(),
        "the pid file {} names no process; cannot check cleanup",
        pids_file.display()
    );
    for _ in 0..60 {
        if pids.iter().all(|&p| !alive(p)) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let left: Vec<_> = pids.iter().filter(|&&p| alive(p)).collect();
    panic!("processes left behind: {left:?}");
}

async fn hostile(mode: &str, seconds: u64) -> EndpointTestResult {
    let dir = tempfile::tempdir().expect("tempdir");
    let pids = dir.path().join("pids");
    let endpoint = stdio(
        Path::new(env!("CARGO_BIN_EXE_tether-hostile-mcp")),
        &["--mode", mode, "--pids", &pids.display().to_string()],
    );
    let report = run(&endpoint, seconds).await;
    assert_none_left(&pids).await;
    assert!(!report.succeeded);
    report
}

// === Real servers ===

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_stdio_servers_pass_with_their_real_tool_counts() {
    for (relative, args, tools) in [
        ("node_modules/.bin/mcp-server-everything", vec![], 13),
        ("node_modules/.bin/mcp-server-memory", vec![], 9),
        (".venv/bin/mcp-server-time", vec![], 2),
    ] {
        let Some(command) = peer(relative) else {
            continue;
        };
        let report = run(&stdio(&command, &args), 60).await;
        assert!(report.succeeded, "{relative}: {report:?}");
        assert_eq!(report.tool_count, Some(tools), "{relative}");
        assert!(report.server_name.is_some() && report.protocol_version.is_some());
        assert_eq!(report.transport.as_str(), "stdio");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_streamable_http_and_sse_servers_pass() {
    for (mode, transport) in [("streamableHttp", "http"), ("sse", "sse")] {
        let Some((mut child, url)) = tether_tests::everything_over_http(mode).await else {
            return;
        };
        let origin = url
            .rsplit_once('/')
            .map_or(url.clone(), |(o, _)| o.to_owned());
        let endpoint = if transport == "sse" {
            Endpoint::Sse {
                url,
                headers: vec![],
            }
        } else {
            Endpoint::Http {
                url,
                headers: vec![],
            }
        };
        let report = run(&endpoint, 30).await;
        if let Some(pid) = child.id() {
            let _ = std::process::Command::new("kill")
                .args(["-9", "--", &format!("-{pid}")])
                .status();
        }
        let _ = child.wait().await;
        assert!(report.succeeded, "{mode}: {report:?}");
        assert_eq!(report.tool_count, Some(13));
        assert_eq!(report.transport.as_str(), transport);
        assert_eq!(report.target, origin);
    }
}

// === Hostile fakes ===

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_times_out_within_the_bound() {
    let started = Instant::now();
    let report = hostile("never", 2).await;
    assert_eq!(report.reason_code, Some(ReasonCode::Timeout));
    assert!(started.elapsed() < Duration::from_secs(4));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_answers_garbage_is_a_clear_protocol_error() {
    let report = hostile("garbage", 20).await;
    assert_eq!(report.reason_code, Some(ReasonCode::ProtocolError));
    assert!(
        report
            .summary
            .as_deref()
            .unwrap_or("")
            .contains("not JSON-RPC"),
        "{report:?}"
    );
    assert!(
        report.elapsed_ms < 10_000,
        "gave up early, not at the timeout"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_100_mb_tools_list_is_refused_at_the_size_cap() {
    let report = hostile("huge", 30).await;
    assert_eq!(
        report.reason_code,
        Some(ReasonCode::ProtocolError),
        "{report:?}"
    );
    assert!(
        report
            .summary
            .as_deref()
            .unwrap_or("")
            .contains("larger than the limit"),
        "{report:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_spawns_grandchildren_and_hangs_leaves_none_behind() {
    let report = hostile("grandchildren", 2).await;
    assert_eq!(report.reason_code, Some(ReasonCode::Timeout));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_at_once_says_so() {
    let report = hostile("exit", 10).await;
    // It started, then exited 1: its own reason, with its status and why.
    assert_eq!(
        report.reason_code,
        Some(ReasonCode::ServerExited),
        "{report:?}"
    );
    let summary = report.summary.as_deref().unwrap_or("");
    assert!(summary.contains("exited with status 1"), "{report:?}");
    assert!(summary.contains("exiting at once"), "{report:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_needs_auth_is_auth_required() {
    use axum::http::StatusCode;
    let app = axum::Router::new().fallback(|| async {
        (
            StatusCode::UNAUTHORIZED,
            [("www-authenticate", "Bearer realm=\"mcp\"")],
            "unauthorized",
        )
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let report = run(
        &Endpoint::Http {
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: vec![],
        },
        10,
    )
    .await;
    server.abort();
    assert_eq!(
        report.reason_code,
        Some(ReasonCode::AuthRequired),
        "{report:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_stops_the_test_and_its_processes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pids = dir.path().join("pids");
    let endpoint = stdio(
        Path::new(env!("CARGO_BIN_EXE_tether-hostile-mcp")),
        &[
            "--mode",
            "grandchildren",
            "--pids",
            &pids.display().to_string(),
        ],
    );
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        trigger.cancel();
    });
    let report = check_endpoint(&endpoint, limits(60), cancel).await;
    assert_eq!(report.reason_code, Some(ReasonCode::Cancelled));
    assert!(report.elapsed_ms < 5_000);
    assert_none_left(&pids).await;
}

// === The host's diagnostics API ===

fn hub_with_attempt(servers: Vec<ServerSpec>) -> (Hub, tether_hub::AttemptHandle) {
    let hub = Hub::new(Registry::with_static().expect("registry"));
    let handle = hub
        .begin_attempt(AttemptRequest::new(
            tether_core::Owner {
                task: "t".into(),
                session: "s".into(),
                execution: "e".into(),
            },
            "codex",
            DriveMode::Passthrough,
            Trigger::PassthroughStart,
            servers,
        ))
        .expect("begin");
    (hub, handle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_authorizer_runs_before_anything_and_only_names_are_accepted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("ran");
    let server = ServerSpec::new(
        "marker",
        ServerSource::Profile,
        stdio(
            Path::new("sh"),
            &["-c", &format!("touch {}; sleep 5", marker.display())],
        ),
    );
    let (_hub, handle) = hub_with_attempt(vec![server]);
    let calls: Arc<Mutex<Vec<(String, String, Action)>>> = Arc::default();
    let seen = Arc::clone(&calls);
    let diagnostics = Diagnostics::new(Arc::new(move |who: &str, session: &str, action| {
        seen.lock()
            .expect("lock")
            .push((who.to_owned(), session.to_owned(), action));
        if who == "admin" {
            Ok(())
        } else {
            Err(format!("{who} may not run diagnostics"))
        }
    }));
    diagnostics.remember_attempt("s", &handle);

    let denied = diagnostics
        .check_endpoint(
            "guest",
            EndpointTestRequest {
                session_id: "s".into(),
                server_name: "marker".into(),
            },
            CancellationToken::new(),
        )
        .await;
    assert_eq!(
        denied,
        Err(DiagnosticsError::Denied(
            "guest may not run diagnostics".into()
        ))
    );
    assert!(!marker.exists(), "nothing ran for a denied caller");
    assert_eq!(calls.lock().expect("lock").len(), 1);

    // Caller-supplied targets are refused outright.
    for body in [
        r#"{"session_id":"s","server_name":"marker","url":"http://evil.example/mcp"}"#,
        r#"{"session_id":"s","server_name":"marker","command":"rm","args":["-rf","/"]}"#,
        r#"{"session_id":"s","server_name":"marker","headers":{"Authorization":"x"}}"#,
        r#"{"session_id":"s","server_name":"marker","env":{"K":"V"}}"#,
    ] {
        let result = diagnostics.check_endpoint_json("admin", body).await;
        assert!(
            matches!(result, Err(DiagnosticsError::InvalidRequest(_))),
            "{body}: {result:?}"
        );
    }
    assert!(!marker.exists());
    let unknown = diagnostics
        .check_endpoint(
            "admin",
            EndpointTestRequest {
                session_id: "s".into(),
                server_name: "nope".into(),
            },
            CancellationToken::new(),
        )
        .await;
    assert!(matches!(
        unknown,
        Err(DiagnosticsError::UnknownServer { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_test_fills_endpoint_test_and_never_promotes_status() {
    let Some(command) = peer("node_modules/.bin/mcp-server-memory") else {
        return;
    };
    let server = ServerSpec::new("memory", ServerSource::Profile, stdio(&command, &[]));
    let (hub, handle) = hub_with_attempt(vec![server]);
    handle
        .sink
        .publish(Evidence::new(EvidenceKind::Delivered, tether_hub::now()).server("memory"))
        .expect("delivered");
    let diagnostics = Diagnostics::new(tether_diagnostics::api::allow_all());
    diagnostics.remember_attempt("s", &handle);
    let report = diagnostics
        .check_endpoint_json("admin", r#"{"session_id":"s","server_name":"memory"}"#)
        .await
        .expect("test");
    assert!(report.succeeded, "{report:?}");
    hub.flush().await;
    let history = hub.snapshot("s").expect("history");
    let row = history
        .current()
        .expect("current")
        .server("memory")
        .expect("row")
        .clone();
    assert_eq!(
        row.status,
        DisplayStatus::Delivered,
        "reachability is not attachment"
    );
    assert_eq!(
        row.stages.initialized.state,
        tether_core::vocab::StageState::Unknown
    );
    let stored = row.endpoint_test.expect("stored");
    assert!(stored.succeeded);
    assert_eq!(stored.tool_count, Some(9));
}

#[test]
fn recent_output_is_live_only_bounded_and_never_copied() {
    let server = ServerSpec::new(
        "srv",
        ServerSource::Profile,
        Endpoint::Stdio {
            command: "srv".into(),
            args: vec![],
            env: vec![KeyValue::new("API_TOKEN", "tok-SECRET-123456789")],
            cwd: None,
        },
    );
    let (hub, handle) = hub_with_attempt(vec![server]);
    let diagnostics = Diagnostics::new(tether_diagnostics::api::allow_all());
    let request = || RecentOutputRequest {
        session_id: "s".into(),
    };
    // Before anything is live.
    diagnostics.remember_attempt("s", &handle);
    assert!(matches!(
        diagnostics.recent_output("admin", request()),
        Ok(RecentOutput::Unavailable { .. })
    ));
    let tail = Arc::new(Mutex::new(OutputTail::default()));
    for i in 0..200 {
        tail.lock()
            .expect("lock")
            .push(&format!("line {i} using tok-SECRET-123456789"));
    }
    diagnostics.attach_output("s", Arc::clone(&tail));
    let Ok(RecentOutput::Live { lines, dropped }) = diagnostics.recent_output("admin", request())
    else {
        panic!("live output expected");
    };
    assert_eq!(lines.len(), 50);
    assert_eq!(dropped, 150);
    assert!(lines.iter().all(|l| !l.contains("SECRET")), "{lines:?}");
    // Copied diagnostics never contain the output.
    let copied = tether_words::display::copy_diagnostics(&hub.snapshot("s").expect("history"));
    assert!(!copied.contains("line 199"));
    diagnostics.detach_output("s");
    let Ok(RecentOutput::Unavailable { reason }) = diagnostics.recent_output("admin", request())
    else {
        panic!("unavailable once the execution ended");
    };
    assert!(reason.contains("not live"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copied_diagnostics_carry_no_planted_secret() {
    let secrets = [
        "hunter2-Pa55word-xyz",
        "ghp_0123456789abcdefABCDEF",
        "sk-live-0123456789abcdef",
        "userinfo-9f8e7d6c",
    ];
    let servers = vec![
        ServerSpec::new(
            "remote",
            ServerSource::Profile,
            Endpoint::Http {
                url: format!(
                    "http://{}:{}@127.0.0.1:1/mcp?key={}",
                    secrets[3], secrets[0], secrets[2]
                ),
                headers: vec![KeyValue::new(
                    "Authorization",
                    format!("Bearer {}", secrets[1]),
                )],
            },
        ),
        ServerSpec::new(
            "local",
            ServerSource::Profile,
            Endpoint::Stdio {
                command: "/nonexistent/bin/srv".into(),
                args: vec!["--token".into(), secrets[1].into()],
                env: vec![KeyValue::new("PASSWORD", secrets[0])],
                cwd: None,
            },
        ),
    ];
    let (hub, handle) = hub_with_attempt(servers);
    let diagnostics = Diagnostics::new(tether_diagnostics::api::allow_all());
    diagnostics.remember_attempt("s", &handle);
    for name in ["remote", "local"] {
        let report = diagnostics
            .check_endpoint(
                "admin",
                EndpointTestRequest {
                    session_id: "s".into(),
                    server_name: name.into(),
                },
                CancellationToken::new(),
            )
            .await
            .expect("test ran");
        assert!(!report.succeeded);
        let json = serde_json::to_string(&report).expect("json");
        for s in secrets {
            assert!(!json.contains(s), "{s} leaked in {json}");
        }
    }
    handle
        .sink
        .publish(
            Evidence::new(EvidenceKind::ExplicitError, tether_hub::now())
                .server("local")
                .reason(
                    ReasonCode::ProcessStartFailed,
                    Some(format!("spawn failed with {} {}", secrets[0], secrets[1])),
                ),
        )
        .expect("publish");
    hub.flush().await;
    let history = hub.snapshot("s").expect("history");
    let copied = tether_words::display::copy_diagnostics(&history);
    let stored = serde_json::to_string(&history).expect("json");
    assert!(copied.contains("endpoint test"), "{copied}");
    for s in secrets {
        assert!(
            !copied.contains(s),
            "{s} leaked in copied diagnostics:\n{copied}"
        );
        assert!(!stored.contains(s), "{s} leaked in the stored history");
    }
}

// === Processes that leave their group ===

/// A token no other test uses, for `sleep TOKEN` children.
fn sleep_token(slot: u32) -> String {
    format!("{}{slot}", 80_000 + std::process::id() % 9_000)
}

/// Runs a check on `sh -c SCRIPT` (which ends by exec'ing a server that never
/// answers) and asserts that no process holding `token` survives it.
async fn assert_swept(what: &str, script: &str, token: &str) {
    let hostile = env!("CARGO_BIN_EXE_tether-hostile-mcp");
    let script = format!("{script}; exec {hostile} --mode never");
    let endpoint = stdio(Path::new("sh"), &["-c", &script]);
    let report = run(&endpoint, 2).await;
    assert!(!report.succeeded, "{what}: {report:?}");
    let left = tether_tests::leftovers(token);
    assert!(left.is_empty(), "{what}: left behind {left:?}");
}

/// GIVEN stdio servers whose children leave the process group (setsid, a
/// double fork, SIGTERM ignored, a fork loop) WHEN the check ends THEN not one
/// of them survives, found by walking the process table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_children_that_leave_the_group_then_none_survives_the_check() {
    // As `tether` itself does: orphans are handed to this process and reaped.
    tether_process::become_subreaper().expect("subreaper");
    let t = sleep_token(1);
    assert_swept("setsid", &format!("setsid sleep {t} &"), &t).await;
    let t = sleep_token(2);
    assert_swept("double fork", &format!("(setsid sleep {t} &)"), &t).await;
    let t = sleep_token(3);
    assert_swept(
        "SIGTERM ignored",
        &format!("(setsid sh -c 'trap \"\" TERM; exec sleep {t}' &)"),
        &t,
    )
    .await;
    let t = sleep_token(4);
    assert_swept(
        "fork loop (bounded)",
        &format!("(for i in $(seq 200); do setsid sleep {t} & done) &"),
        &t,
    )
    .await;
}

// === Both eras ===

/// GIVEN a server built on rmcp that speaks only MCP 2026-07-28 (it refuses
/// `initialize`) and one that speaks only the legacy handshake WHEN each is checked THEN
/// both pass, and the result says which era was negotiated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_a_modern_only_and_a_legacy_server_then_both_pass_with_their_era() {
    let modern = Path::new(env!("CARGO_BIN_EXE_tether-modern-mcp"));
    let modern = run(&stdio(modern, &[]), 10).await;
    assert!(modern.succeeded, "{modern:?}");
    assert_eq!(modern.protocol_version.as_deref(), Some("2026-07-28"));
    assert_eq!(modern.era.as_deref(), Some("2026-07-28"));
    assert_eq!(modern.tool_count, Some(1));
    let Some(legacy) = peer("node_modules/.bin/mcp-server-memory") else {
        return;
    };
    let started = Instant::now();
    let legacy = run(&stdio(&legacy, &[]), 30).await;
    assert!(legacy.succeeded, "{legacy:?}");
    assert_eq!(legacy.era.as_deref(), Some("legacy"));
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "a legacy server that refuses server/discover falls back at once"
    );
}

/// GIVEN the pinned Python `mcp-server-time`, which answers `server/discover`
/// WHEN checked THEN the modern era is negotiated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_the_pinned_python_server_then_the_2026_era_is_negotiated() {
    let Some(time) = peer(".venv/bin/mcp-server-time") else {
        return;
    };
    let report = run(&stdio(&time, &[]), 30).await;
    assert!(report.succeeded, "{report:?}");
    assert_eq!(report.era.as_deref(), Some("2026-07-28"));
}

// === Reasons a user can act on ===

/// One HTTP status per path, as a misconfigured or wrong server answers.
async fn status_server() -> std::net::SocketAddr {
    use axum::http::{StatusCode, header};
    use axum::response::IntoResponse;
    use axum::routing::any;
    let status = |code: StatusCode| any(move || async move { code.into_response() });
    let router = axum::Router::new()
        .route("/gone/mcp", status(StatusCode::NOT_FOUND))
        .route("/gone/sse", status(StatusCode::NOT_FOUND))
        .route("/static/mcp", status(StatusCode::METHOD_NOT_ALLOWED))
        .route("/static/sse", status(StatusCode::METHOD_NOT_ALLOWED))
        .route("/broken/mcp", status(StatusCode::BAD_GATEWAY))
        .route("/broken/sse", status(StatusCode::INTERNAL_SERVER_ERROR))
        .route(
            "/moved/mcp",
            any(|| async {
                (
                    StatusCode::FOUND,
                    [(header::LOCATION, "http://127.0.0.1:9/mcp")],
                )
                    .into_response()
            }),
        )
        .route(
            "/moved/sse",
            any(|| async {
                (
                    StatusCode::FOUND,
                    [(header::LOCATION, "http://127.0.0.1:9/sse")],
                )
                    .into_response()
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    addr
}

/// GIVEN real local servers that answer 404, 405, 5xx or a redirect, one
/// reached over https that speaks no TLS, a host name that does not resolve,
/// and a JSON-RPC peer that refuses both eras
/// WHEN each is checked THEN each gets its own stable reason and a sentence
/// that says what to check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_kind_of_wrong_server_gets_its_own_reason() {
    let addr = status_server().await;
    let http = |path: &str| Endpoint::Http {
        url: format!("http://{addr}{path}"),
        headers: vec![],
    };
    let sse = |path: &str| Endpoint::Sse {
        url: format!("http://{addr}{path}"),
        headers: vec![],
    };
    for (what, endpoint, reason, hint) in [
        (
            "404 http",
            http("/gone/mcp"),
            ReasonCode::EndpointNotFound,
            "/mcp",
        ),
        (
            "404 sse",
            sse("/gone/sse"),
            ReasonCode::EndpointNotFound,
            "/mcp",
        ),
        (
            "405 http",
            http("/static/mcp"),
            ReasonCode::MethodNotAllowed,
            "--sse",
        ),
        (
            "405 sse",
            sse("/static/sse"),
            ReasonCode::MethodNotAllowed,
            "--sse",
        ),
        (
            "502 http",
            http("/broken/mcp"),
            ReasonCode::ServerError,
            "logs",
        ),
        (
            "500 sse",
            sse("/broken/sse"),
            ReasonCode::ServerError,
            "logs",
        ),
        (
            "302 http",
            http("/moved/mcp"),
            ReasonCode::Redirected,
            "redirect",
        ),
        (
            "302 sse",
            sse("/moved/sse"),
            ReasonCode::Redirected,
            "redirect",
        ),
        (
            "https to a server without TLS (http)",
            Endpoint::Http {
                url: format!("https://{addr}/gone/mcp"),
                headers: vec![],
            },
            ReasonCode::TlsFailed,
            "https",
        ),
        (
            "https to a server without TLS (sse)",
            Endpoint::Sse {
                url: format!("https://{addr}/gone/sse"),
                headers: vec![],
            },
            ReasonCode::TlsFailed,
            "certificate",
        ),
        (
            "no such host",
            Endpoint::Http {
                url: "http://no-such-host.invalid/mcp".into(),
                headers: vec![],
            },
            ReasonCode::HostNotFound,
            "spelling",
        ),
        (
            "neither era",
            stdio(
                Path::new(env!("CARGO_BIN_EXE_tether-hostile-mcp")),
                &["--mode", "refuses-all"],
            ),
            ReasonCode::NoCommonProtocol,
            "neither",
        ),
    ] {
        let report = run(&endpoint, 10).await;
        assert!(!report.succeeded, "{what}");
        assert_eq!(
            report.reason_code.as_ref(),
            Some(&reason),
            "{what}: {report:?}"
        );
        let summary = report.summary.as_deref().unwrap_or("");
        assert!(summary.contains(hint), "{what}: {summary}");
    }
}

/// GIVEN a legacy server that answers `server/discover` (a method it does
/// not know) with `{}` instead of -32601 WHEN it is tested THEN the check
/// falls back to the legacy handshake, passes with its tool, says what it
/// did in the summary, and leaves neither the first process nor the second
/// behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_answers_discovery_with_an_empty_result_gets_the_legacy_handshake() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pids = dir.path().join("pids");
    let endpoint = stdio(
        Path::new(env!("CARGO_BIN_EXE_tether-hostile-mcp")),
        &[
            "--mode",
            "empty-unknown",
            "--pids",
            &pids.display().to_string(),
        ],
    );
    let report = run(&endpoint, 20).await;
    assert!(report.succeeded, "{report:?}");
    assert_eq!(report.tool_count, Some(1));
    assert_eq!(report.era.as_deref(), Some("legacy"));
    assert!(
        report
            .summary
            .as_deref()
            .unwrap_or("")
            .contains("fell back to initialize"),
        "{report:?}"
    );
    let started = std::fs::read_to_string(&pids).expect("pids");
    assert_eq!(started.lines().count(), 2, "started twice: {started}");
    assert_none_left(&pids).await;
}

// === One tool call, when asked (`--call`) ===

/// `tool` called with `arguments` after the listing, on the pinned
/// server-everything over stdio.
async fn call(
    everything: &Path,
    tool: &str,
    arguments: serde_json::Value,
    seconds: u64,
) -> EndpointTestResult {
    let serde_json::Value::Object(arguments) = arguments else {
        panic!("arguments are an object");
    };
    let call = ToolCall {
        tool: tool.to_owned(),
        arguments,
    };
    check_endpoint_calling(
        &stdio(everything, &["stdio"]),
        limits(seconds),
        Some(&call),
        CancellationToken::new(),
    )
    .await
    .0
}

/// GIVEN server-everything and a call asked for WHEN the tool answers, answers
/// isError, answers a JSON-RPC error, is not listed, or runs past the test's
/// bound THEN each is told apart, the listing stays whatever the call did, and
/// no argument or result text (planted secrets, echoed back by the server)
/// is in the result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_asked_for_is_reported_as_metadata_only() {
    let Some(everything) = peer("node_modules/.bin/mcp-server-everything") else {
        return;
    };
    let planted = ["hunter2-Pa55word-xyz", "ghp_0123456789abcdefABCDEF"];
    let leaks = |report: &EndpointTestResult| {
        let json = serde_json::to_string(report).expect("json");
        for s in planted {
            assert!(!json.contains(s), "{s} leaked in {json}");
        }
    };

    // A result: echo sends the message back; only its shape is kept.
    let report = call(
        &everything,
        "echo",
        serde_json::json!({"message": format!("{} {}", planted[0], planted[1])}),
        60,
    )
    .await;
    assert!(report.succeeded, "{report:?}");
    let done = report.call.clone().expect("the call's outcome");
    assert!(done.succeeded && done.reason_code.is_none(), "{done:?}");
    assert_eq!((done.tool.as_str(), done.content_items), ("echo", Some(1)));
    leaks(&report);

    // isError: echo without its message.
    let report = call(&everything, "echo", serde_json::json!({}), 60).await;
    let done = report.call.clone().expect("the call's outcome");
    assert!(report.succeeded && !done.succeeded, "{report:?}");
    assert_eq!(done.is_error, Some(true));

    // Arguments of the wrong type, secrets among them.
    let report = call(
        &everything,
        "get-sum",
        serde_json::json!({"a": planted[0], "b": [planted[1]]}),
        60,
    )
    .await;
    let done = report.call.clone().expect("the call's outcome");
    assert!(!done.succeeded, "{done:?}");
    leaks(&report);

    // Not listed: not called.
    let report = call(&everything, "no-such-tool", serde_json::json!({}), 60).await;
    let done = report.call.clone().expect("the call's outcome");
    assert_eq!(
        done.reason_code,
        Some(ReasonCode::ToolNotListed),
        "{done:?}"
    );
    assert_eq!(report.tool_count, Some(13));

    // Runs past the bound: the call's timeout, the listing kept.
    let report = call(
        &everything,
        "trigger-long-running-operation",
        serde_json::json!({"duration": 600, "steps": 2}),
        8,
    )
    .await;
    let done = report.call.clone().expect("the call's outcome");
    assert!(report.succeeded, "the listing stands: {report:?}");
    assert_eq!(done.reason_code, Some(ReasonCode::Timeout), "{done:?}");
    assert_eq!(report.tool_count, Some(13));
}
