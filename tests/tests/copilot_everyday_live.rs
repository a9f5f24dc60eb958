//! Issue 67 §1 on the real Copilot CLI (the pinned 1.0.102): the model API
//! unreachable.
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

use std::collections::HashMap;

use tether_core::registry::Registry;
use tether_core::spec::{Endpoint, ServerSpec};
use tether_core::vocab::{ReasonCode, ServerSource, StageState};
use tether_records::{Filter, Home, Records};
use tether_tests::by_path;

/// GIVEN Copilot whose model provider is on a closed port, with a stdio
/// server configured WHEN `copilot -p` ends THEN Copilot says it could not
/// connect, and Tether reads its session as ended for that reason (in
/// Tether's words, not the provider's address), the server never used.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_provider_not_reached_reads_as_copilot_says() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
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
