//! Issue 67 §1 on the real Copilot CLI (the pinned 1.0.102; the newest
//! npm serves is the same release, so `tests/peers/newest` holds none):
//! each everyday failure, Tether's row compared with Copilot's own words.
//!
//! One `copilot -p` run offline whose model provider is on a closed port.
//! Copilot retries ("Response was interrupted due to a server error.
//! Retrying..."), then says `Could not connect to local model provider at
//! URL.` on its terminal, exits 1 and writes the same words in its
//! session's `session.error` (type `query`). Tether reads that as why the
//! run ended (`session_request_failed`, in its own words: the words name
//! no cause), and never calls the configured server used. A server that
//! exits at once (code 3) is `server_exited` with its code, as Copilot's
//! process log says (`MCP server process exited before completing the MCP
//! initialize handshake (exit code 3)`).
//!
//! One run with a server of each everyday failure (a command missing, bare
//! and as a path; a `cwd` that does not exist; one that never answers; a
//! token refused; an OAuth login wanted; a 401 with no challenge to a
//! token; an unset token variable): each row's reason against the line
//! Copilot's process log writes for it. Where Copilot writes the same
//! words for two cases (`No such file or directory` for a missing command
//! and a missing cwd; an empty challenge for a token refused and a token
//! variable left unset), Tether tells them apart only by today's
//! configuration (`cwd_not_found`, `unresolved_variable`), and otherwise
//! claims no more than the words show (`auth_required`).
//!
//! One run with a user-file server left out by `--disable-mcp-server`
//! (Copilot has no strict mode) beside one given by
//! `--additional-mcp-config`: Copilot's log names only the flag's, and
//! Tether never claims the left-out one.
//!
//! One run not logged in (no offline provider, no token): Copilot says
//! `Error: No authentication information found.` and exits 1 before any
//! server starts; its process log's `[ERROR]` line is the session's own
//! error, `auth_required`, in Tether's words.
//!
//! The runs do not take [`tether_tests::one_real_cli_at_a_time`]: no run
//! here needs a server to connect or the model to answer in time (every
//! server is meant to fail, the model provider is closed or never asked),
//! and the silent server's wait is Copilot's own fixed 60 s (1.0.102 reads
//! no per-server key for it: a server's `timeout`, `copilot mcp add
//! --timeout`, leaves `MCP lifecycle negotiation did not complete within
//! 60000 ms` unchanged in a real run). So the runs share the test threads,
//! and the longest, a server of each failure, is named to start first.

use std::collections::HashMap;
use std::path::Path;

use tether_core::history::AttachmentAttempt;
use tether_core::model::ProvenanceCode;
use tether_core::registry::Registry;
use tether_core::spec::{Endpoint, ServerSpec};
use tether_core::vocab::{DisplayStatus, ReasonCode, ServerSource, StageState};
use tether_records::{Filter, Home, Records};
use tether_tests::auth_server::AuthServer;
use tether_tests::by_path;

/// GIVEN Copilot whose model provider is on a closed port, with a stdio
/// server configured WHEN `copilot -p` ends THEN Copilot says it could not
/// connect, and Tether reads its session as ended for that reason (in
/// Tether's words, not the provider's address), the server never used.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_provider_not_reached_reads_as_copilot_says() {
    let Some(copilot) = by_path::pinned_copilot() else {
        return;
    };
    let Some(time) = tether_tests::peer(".venv/bin/mcp-server-time") else {
        return;
    };
    // A port nothing listens on: bound, then let go.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a port");
    let home = tempfile::tempdir().expect("home");
    let time = time.display().to_string();
    let (_dir, work) = by_path::copilot_home(
        home.path(),
        serde_json::json!({
            "time": {"type": "local", "command": time, "args": [], "tools": ["*"]},
            "exits": {"type": "local", "command": "sh", "args": ["-c", "exit 3"], "tools": ["*"]}
        }),
    );
    let cmd = by_path::copilot_offline(
        &copilot,
        home.path(),
        &work,
        &format!("http://{closed}"),
        &["--allow-all-tools"],
    );
    // Bounded by the test's deadline; Copilot ends on its own retries.
    let out = tether_tests::output_within(cmd, 240);
    tether_tests::keep_home("copilot-no-model", home.path());
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("Could not connect to local model provider at"),
        "Copilot's own words: {said}"
    );
    let stdio = |command: &str, args: &[&str]| Endpoint::Stdio {
        command: command.into(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        env: vec![],
        cwd: None,
    };
    let configured = vec![
        ServerSpec::new("time", ServerSource::Profile, stdio(&time, &[])),
        ServerSpec::new(
            "exits",
            ServerSource::Profile,
            stdio("sh", &["-c", "exit 3"]),
        ),
    ];
    let registry = Registry::with_static().expect("registry");
    let mut records = Records::new(
        &registry,
        &Home::new(home.path(), HashMap::new()),
        HashMap::from([("copilot".to_owned(), configured)]),
        Filter {
            harnesses: vec!["copilot".into()],
            ..Filter::default()
        },
    );
    records.read(true);
    assert_eq!(records.sessions().len(), 1, "{:?}", records.files());
    let facts = records.sessions().values().next().expect("one").clone();
    let attempt = records
        .history(&facts, None)
        .expect("history")
        .current()
        .expect("attempt")
        .clone();
    let error = attempt.report_error.as_ref().expect("why the run ended");
    assert_eq!(
        error.reason_code,
        ReasonCode::SessionRequestFailed,
        "{error:?}"
    );
    let words = error.summary.as_deref().unwrap_or_default();
    assert!(words.contains("model provider"), "{words}");
    assert!(
        !words.contains(&closed.to_string()),
        "Tether's words: {words}"
    );
    // A server that exits at once: Copilot's process log says so with its
    // code, and so does its row.
    let logs = std::fs::read_dir(home.path().join(".copilot/logs"))
        .expect("Copilot's process logs")
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect::<String>();
    assert!(
        logs.contains("exited before completing the MCP initialize handshake (exit code 3)"),
        "Copilot's words for exits"
    );
    let exits = attempt.server("exits").expect("exits' row");
    assert_eq!(
        exits.reason_code,
        Some(ReasonCode::ServerExited),
        "{exits:?}"
    );
    assert_ne!(exits.stages.initialized.state, StageState::Yes, "{exits:?}");
    if let Some(row) = attempt.server("time") {
        assert!(row.tools.iter().all(|t| t.calls == 0), "{row:?}");
    }
}

/// A token planted in the refused servers' headers: no row may hold it.
const PLANTED: &str = "sk-live-PLANTED-copilot-401-token";
/// The variable the unset token references (never set).
const UNSET: &str = "TETHER_UNSET_COPILOT_TOKEN";

/// Copilot's process-log lines (a test home's, no user's data).
fn process_logs(home: &Path) -> Vec<String> {
    std::fs::read_dir(home.join(".copilot/logs"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .flat_map(|t| t.lines().map(str::to_owned).collect::<Vec<_>>())
        .collect()
}

/// The one session Tether reads under `home`, its servers matched against
/// `configured`.
fn one_attempt(home: &Path, configured: Vec<ServerSpec>) -> AttachmentAttempt {
    let registry = Registry::with_static().expect("registry");
    let mut records = Records::new(
        &registry,
        &Home::new(home, HashMap::new()),
        HashMap::from([("copilot".to_owned(), configured)]),
        Filter {
            harnesses: vec!["copilot".into()],
            ..Filter::default()
        },
    );
    records.read(true);
    assert_eq!(records.sessions().len(), 1, "{:?}", records.files());
    let facts = records.sessions().values().next().expect("one").clone();
    records
        .history(&facts, None)
        .expect("history")
        .current()
        .expect("attempt")
        .clone()
}

/// One failure: the server's entry, what Copilot's process log says of
/// it, and Tether's reason.
struct Case {
    name: &'static str,
    entry: serde_json::Value,
    /// Words of Copilot's process-log line for this server.
    copilot_says: String,
    tether: ReasonCode,
}

fn cases(addr: std::net::SocketAddr, missing_dir: &str) -> Vec<Case> {
    let local = |command: &str, args: &[&str]| serde_json::json!({"type": "local", "command": command, "args": args, "tools": ["*"]});
    let http = |path: &str, token: Option<String>| {
        let mut entry = serde_json::json!({"type": "http", "url": format!("http://{addr}{path}"), "tools": ["*"]});
        if let Some(token) = token {
            entry["headers"] = serde_json::json!({"Authorization": format!("Bearer {token}")});
        }
        entry
    };
    let spawn = "failed to spawn MCP server process: No such file or directory (os error 2)";
    let mut nocwd = local("sh", &["-c", "cat > /dev/null"]);
    nocwd["cwd"] = missing_dir.into();
    vec![
        Case {
            name: "bare",
            entry: local("tether-no-such-server-c0p1", &[]),
            copilot_says: spawn.into(),
            tether: ReasonCode::CommandNotFound,
        },
        Case {
            name: "absent",
            entry: local("/opt/tether-nope-c0p1/server", &[]),
            copilot_says: spawn.into(),
            tether: ReasonCode::CommandNotFound,
        },
        Case {
            // The same words as a missing command: the configuration
            // here (its cwd missing) says which.
            name: "nocwd",
            entry: nocwd,
            copilot_says: spawn.into(),
            tether: ReasonCode::CwdNotFound,
        },
        Case {
            // Reads its input and answers nothing: Copilot's own deadline
            // (60 s in 1.0.102, not set per server) ends the wait.
            name: "silent",
            entry: local("sh", &["-c", "cat > /dev/null"]),
            copilot_says: "MCP lifecycle negotiation did not complete within 60000 ms".into(),
            tether: ReasonCode::Timeout,
        },
        Case {
            name: "refused",
            entry: http("/mcp", Some(PLANTED.into())),
            copilot_says: "HTTP 401 challenge (WWW-Authenticate: ******\"invalid_token\")".into(),
            tether: ReasonCode::AuthRejected,
        },
        Case {
            name: "authy",
            entry: http("/mcp", None),
            copilot_says: format!(
                "HTTP 401 challenge (WWW-Authenticate: ******\"http://{addr}/.well-known/oauth-protected-resource/mcp\")"
            ),
            tether: ReasonCode::OauthRequired,
        },
        Case {
            // A token refused with no challenge: Copilot's words do not
            // say a token was sent, so neither does Tether.
            name: "plainref",
            entry: http("/plain/mcp", Some(PLANTED.into())),
            copilot_says: "HTTP 401 challenge (WWW-Authenticate: ) ".into(),
            tether: ReasonCode::AuthRequired,
        },
        Case {
            // Copilot sends `${VAR}` unexpanded where the variable is
            // unset, and its log reads as plainref's: the configuration
            // here (the variable unset) says which.
            name: "unsetvar",
            entry: http("/plain/mcp", Some(format!("${{{UNSET}}}"))),
            copilot_says: "HTTP 401 challenge (WWW-Authenticate: ) ".into(),
            tether: ReasonCode::UnresolvedVariable,
        },
    ]
}

/// GIVEN Copilot with a server of each everyday failure in its user
/// configuration, its model provider on a closed port WHEN `copilot -p`
/// ends (on its own: its 60 s wait for the silent server, then its
/// retries) THEN each server's row has the reason Copilot's process-log
/// line names, shown by the harness's record, never initialized; where
/// Copilot's words are one for two cases, today's configuration tells
/// them apart (`cwd_not_found`, `unresolved_variable`) and nothing else
/// does; no row holds the planted token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_of_each_everyday_failure_reads_as_copilot_s_log_says() {
    let Some(copilot) = by_path::pinned_copilot() else {
        return;
    };
    let auth = AuthServer::watching(&format!("${{{UNSET}}}")).await;
    let addr = auth.addr;
    let home = tempfile::tempdir().expect("home");
    let missing = home.path().join("no/such/dir").display().to_string();
    let cases = cases(addr, &missing);
    let servers: serde_json::Map<String, serde_json::Value> = cases
        .iter()
        .map(|c| (c.name.to_owned(), c.entry.clone()))
        .collect();
    let (_dir, work) = by_path::copilot_home(home.path(), servers.into());
    // A port held for the whole run, never listened on: each connection
    // to the model provider is refused, and the run ends on its own.
    let held = tokio::net::TcpSocket::new_v4().expect("a socket");
    held.bind("127.0.0.1:0".parse().expect("an address"))
        .expect("a port");
    let closed = held.local_addr().expect("its port");
    let mut cmd = by_path::copilot_offline(
        &copilot,
        home.path(),
        &work,
        &format!("http://{closed}"),
        &["--allow-all-tools", "--output-format", "json"],
    );
    cmd.stdin(std::process::Stdio::null());
    // Bounded by the test's deadline; Copilot ends on its own wait.
    let out = tokio::task::spawn_blocking(move || tether_tests::output_within(cmd, 300))
        .await
        .expect("join");
    drop(held);
    tether_tests::keep_home("copilot-everyday", home.path());
    let printed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        !out.status.success(),
        "Copilot's run ended as it should not"
    );
    let logs = process_logs(home.path());
    // Copilot sent the unset variable's reference as written.
    assert!(auth.saw(), "no literal ${{{UNSET}}} sent");

    // Today's configuration, as `tether sessions` reads it.
    let vars = [("PATH", std::env::var_os("PATH").unwrap_or_default())]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    let ctx = tether_inventory::ScanContext::new(
        home.path().to_path_buf(),
        Some(work.clone()),
        "/".into(),
        vars,
    );
    let configured = tether_inventory::configured_servers(&ctx)
        .remove("copilot")
        .unwrap_or_default();
    assert_eq!(configured.len(), cases.len(), "{configured:?}");
    let attempt = one_attempt(home.path(), configured);
    let shown = format!("{attempt:?}");
    assert!(!shown.contains("PLANTED"), "the token reached a row");
    for case in &cases {
        // Copilot's own line for this server, in its log.
        let server = [
            format!("\"server_name\":\"{}\"", case.name),
            format!("\"server\":\"{}\"", case.name),
        ];
        assert!(
            logs.iter()
                .any(|l| l.contains(&case.copilot_says)
                    && server.iter().any(|s| l.contains(s.as_str()))),
            "{}: Copilot's log does not say {:?}",
            case.name,
            case.copilot_says
        );
        // And its status, printed (`--output-format json`).
        let status = if case.copilot_says.starts_with("HTTP ") {
            "needs-auth"
        } else {
            "failed"
        };
        assert!(
            printed
                .lines()
                .any(|l| l.contains("session.mcp_server_status_changed")
                    && l.contains(&format!("\"serverName\":\"{}\"", case.name))
                    && l.contains(&format!("\"status\":\"{status}\""))),
            "{}: Copilot did not print {status}",
            case.name
        );
        let row = attempt
            .server(case.name)
            .unwrap_or_else(|| panic!("no row {}", case.name));
        assert_eq!(
            row.reason_code,
            Some(case.tether.clone()),
            "{}: {row:?}",
            case.name
        );
        assert_eq!(row.status, DisplayStatus::Failed, "{}: {row:?}", case.name);
        assert_ne!(row.stages.initialized.state, StageState::Yes, "{row:?}");
        // SHOWN BY: the stage Copilot's line stopped, shown by its record.
        let stopped = if status == "needs-auth" {
            &row.stages.authenticated
        } else {
            &row.stages.initialized
        };
        assert_eq!(stopped.state, StageState::No, "{}: {row:?}", case.name);
        assert_eq!(
            stopped.provenance,
            Some(ProvenanceCode::HarnessRecord),
            "{}: {row:?}",
            case.name
        );
        // A sentence that says what to do, in Tether's words.
        let summary = row.summary.as_deref().unwrap_or_default();
        assert!(!summary.is_empty(), "{}: no sentence", case.name);
        for internal in [
            "rmcp",
            "os error",
            "WWW-Authenticate",
            "******",
            "127.0.0.1",
        ] {
            assert!(
                !summary.contains(internal),
                "{}: {internal:?} in {summary}",
                case.name
            );
        }
    }
}

/// GIVEN Copilot with no login (no offline provider, no token) and a
/// server configured WHEN `copilot -p` runs THEN it says `Error: No
/// authentication information found.` and exits 1 before the server
/// starts, and Tether reads its process log's `[ERROR]` line as the
/// session's own error, `auth_required`, in Tether's words; the server is
/// never shown started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn not_logged_in_reads_as_copilot_says() {
    let Some(copilot) = by_path::pinned_copilot() else {
        return;
    };
    let home = tempfile::tempdir().expect("home");
    let exits = serde_json::json!({"type": "local", "command": "sh", "args": ["-c", "exit 3"], "tools": ["*"]});
    let (_dir, work) = by_path::copilot_home(home.path(), serde_json::json!({ "exits": exits }));
    let mut cmd = std::process::Command::new(&copilot);
    cmd.args(["-p", "what time is it", "--allow-all-tools"])
        .current_dir(&work)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("COPILOT_AUTO_UPDATE", "false")
        .env("COPILOT_PKG_CACHE_HOME", home.path().join("pkg"))
        .stdin(std::process::Stdio::null());
    let out = tokio::task::spawn_blocking(move || tether_tests::output_within(cmd, 120))
        .await
        .expect("join");
    tether_tests::keep_home("copilot-no-login", home.path());
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("Error: No authentication information found."),
        "Copilot's own words: {said}"
    );
    let logs = process_logs(home.path());
    assert!(
        logs.iter()
            .any(|l| l.ends_with("[ERROR] No authentication information found.")),
        "its log's line"
    );
    let configured = vec![ServerSpec::new(
        "exits",
        ServerSource::Profile,
        Endpoint::Stdio {
            command: "sh".into(),
            args: vec!["-c".into(), "exit 3".into()],
            env: vec![],
            cwd: None,
        },
    )];
    let attempt = one_attempt(home.path(), configured);
    let error = attempt.report_error.as_ref().expect("why the run ended");
    assert_eq!(error.reason_code, ReasonCode::AuthRequired, "{error:?}");
    let words = error.summary.as_deref().unwrap_or_default();
    assert!(words.contains("not logged in"), "{words}");
    assert!(words.contains("copilot login"), "{words}");
    let row = attempt.server("exits").expect("its row");
    assert_ne!(row.stages.initialized.state, StageState::No, "{row:?}");
    assert_ne!(row.stages.initialized.state, StageState::Yes, "{row:?}");
}

/// GIVEN a server in Copilot's user file turned off for the run by flag
/// (`--disable-mcp-server`, Copilot's way to leave a user-file server out:
/// it has no strict mode) and another given by flag
/// (`--additional-mcp-config`) that exits at once WHEN `copilot -p` ends
/// THEN Copilot's log names only the flag's server, and Tether's rows
/// agree: the flag's `server_exited` with its code, the user file's
/// configured and nothing more (never started, failed or used).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_file_server_left_out_by_flag_is_never_claimed() {
    let Some(copilot) = by_path::pinned_copilot() else {
        return;
    };
    let home = tempfile::tempdir().expect("home");
    let local = |code: u8| serde_json::json!({"type": "local", "command": "sh", "args": ["-c", format!("exit {code}")], "tools": ["*"]});
    let (_dir, work) = by_path::copilot_home(home.path(), serde_json::json!({"userone": local(5)}));
    let flagged = serde_json::json!({"mcpServers": {"flagged": local(3)}}).to_string();
    let held = tokio::net::TcpSocket::new_v4().expect("a socket");
    held.bind("127.0.0.1:0".parse().expect("an address"))
        .expect("a port");
    let closed = held.local_addr().expect("its port");
    let mut cmd = by_path::copilot_offline(
        &copilot,
        home.path(),
        &work,
        &format!("http://{closed}"),
        &[
            "--allow-all-tools",
            "--disable-mcp-server",
            "userone",
            "--additional-mcp-config",
            &flagged,
        ],
    );
    cmd.stdin(std::process::Stdio::null());
    let out = tokio::task::spawn_blocking(move || tether_tests::output_within(cmd, 300))
        .await
        .expect("join");
    drop(held);
    tether_tests::keep_home("copilot-flag-only", home.path());
    assert!(!out.status.success(), "the model provider was reached");
    let logs = process_logs(home.path());
    assert!(
        logs.iter()
            .any(|l| l.contains("\"server_name\":\"flagged\"") && l.contains("(exit code 3)")),
        "Copilot's words for the flag's server"
    );
    assert!(
        !logs.iter().any(|l| l.contains("\"userone\"")),
        "Copilot's log names the server the run left out"
    );
    let vars = [("PATH", std::env::var_os("PATH").unwrap_or_default())]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    let ctx = tether_inventory::ScanContext::new(
        home.path().to_path_buf(),
        Some(work.clone()),
        "/".into(),
        vars,
    );
    let configured = tether_inventory::configured_servers(&ctx)
        .remove("copilot")
        .unwrap_or_default();
    let attempt = one_attempt(home.path(), configured);
    let row = attempt.server("flagged").expect("the flag's row");
    assert_eq!(row.reason_code, Some(ReasonCode::ServerExited), "{row:?}");
    let left_out = attempt.server("userone").expect("the user file's row");
    assert_ne!(left_out.status, DisplayStatus::Failed, "{left_out:?}");
    assert_eq!(left_out.reason_code, None, "{left_out:?}");
    assert_eq!(
        left_out.stages.initialized.state,
        StageState::Unknown,
        "{left_out:?}"
    );
    assert!(left_out.tools.iter().all(|t| t.calls == 0), "{left_out:?}");
}
