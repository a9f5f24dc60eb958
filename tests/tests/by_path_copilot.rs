//! Copilot CLI's own files named by path (issue 56 §4): a session's
//! `events.jsonl` and a `logs/process-*.log`, copied out of `~/.copilot`
//! and shown with `tether sessions show PATH --json`.
//!
//! - GIVEN a real run of Copilot CLI 1.0.102 (offline, `-p`, against the
//!   fake model) with a server that answers (`count`, whose `stamp` the
//!   model calls) and one whose command does not exist (`broken`) WHEN its
//!   `events.jsonl` is copied elsewhere under another name and shown by
//!   path THEN it reads as Copilot's, as the session `session.start`
//!   names (never the folder it was copied to), and `count/stamp` was used
//!   once, `count` over stdio (its call's `mcpTransport`); `broken` is not
//!   said to have failed (the events do not say).
//! - GIVEN the same run's process log, copied elsewhere WHEN shown by path
//!   THEN it is the same session, and `broken` failed while `count` did
//!   not.
//! - GIVEN a planted secret in the broken server's command, or in every
//!   value of the committed copies the readers do not take WHEN either
//!   file is shown (text and JSON) THEN the secret is in neither, and the
//!   rows read the same.
//! - GIVEN the committed events and log WHEN imported by path (the events
//!   twice) THEN one session, then unchanged, and the log joins the same
//!   session, which holds both servers.
//! - The committed copies of one such run
//!   (`tests/fixtures/records-by-path/copilot-1.0.102-broken.*`) read the
//!   same with no CLI installed; `record_the_fixtures` (ignored) runs the
//!   CLI again and rewrites them: `cargo test -p tether-tests --test
//!   by_path_copilot -- --ignored record_the_fixtures`.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tether_tests::by_path::{self, find_row as row};
use tether_tests::refusal_run::RefusalHome as Run;

/// The counting server's one tool.
const TOOLS: &str =
    r#"[{"name":"stamp","description":"t","inputSchema":{"type":"object","properties":{}}}]"#;

/// A word in the broken server's command: it must reach nothing shown.
const PLANTED: &str = "planted-bypath-secret-7731";

fn fixtures() -> PathBuf {
    by_path::fixtures().join("records-by-path")
}

/// The two files of one run: its events and its process log.
struct Files {
    events: PathBuf,
    log: PathBuf,
}

/// Runs Copilot CLI (pinned) offline with `count` and `broken`, the model
/// calling `count/stamp`; `None` with a loud SKIP where it is not
/// installed. The run's home is returned with its two files.
async fn copilot_run() -> Option<(Run, Files)> {
    let copilot = by_path::pinned_copilot()?;
    let run = Run::pinned(TOOLS, PLANTED)?;
    let (model, _sent) = tether_tests::fake_model::start_model("count/stamp").await;
    let (dir, work) =
        by_path::copilot_home(run.home(), by_path::copilot_count_and_broken(&run, PLANTED));
    let cmd = by_path::copilot_offline(
        &copilot,
        run.home(),
        &work,
        &model.base(),
        &["--allow-all-tools"],
    );
    run.run_cli("copilot-by-path", cmd, 120);
    let one = |pattern: &str| {
        let mut found: Vec<PathBuf> = glob_one_level(&dir, pattern);
        assert_eq!(found.len(), 1, "one {pattern} in {}", dir.display());
        found.remove(0)
    };
    let files = Files {
        events: one("session-state/*/events.jsonl"),
        log: one("logs/process-*.log"),
    };
    Some((run, files))
}

/// The files under `dir` that `pattern` (`a/*/b` or `a/prefix-*`) names.
fn glob_one_level(dir: &Path, pattern: &str) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    for segment in pattern.split('/') {
        let mut next = Vec::new();
        for d in out {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            next.extend(entries.flatten().map(|e| e.path()).filter(|p| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                match segment.split_once('*') {
                    Some((head, tail)) => {
                        !name.starts_with('.') && name.starts_with(head) && name.ends_with(tail)
                    }
                    None => name == segment,
                }
            }));
        }
        out = next;
    }
    out
}

/// `session.start`'s session id, read from the events themselves.
fn started_session(events: &Path) -> String {
    let text = std::fs::read_to_string(events).expect("events");
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["type"] == "session.start")
        .and_then(|e| e["data"]["sessionId"].as_str().map(str::to_owned))
        .expect("session.start names its session")
}

/// Copies `events` and `log` into a folder that is no session's, under
/// names Copilot never gives them, shows each by path, and checks what
/// the module docs say.
fn shown_by_path_says_the_same(run: &Run, events: &Path, log: &Path) {
    let session = started_session(events);
    let elsewhere = run.home().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("elsewhere");
    let events_copy = elsewhere.join("kept-run.jsonl");
    let log_copy = elsewhere.join("copilot.log");
    std::fs::copy(events, &events_copy).expect("copy the events");
    std::fs::copy(log, &log_copy).expect("copy the log");

    let doc = run.show(&events_copy);
    assert_eq!(doc["session"]["agent_kind"], "copilot", "{doc}");
    assert_eq!(
        doc["session"]["session_id"],
        format!("copilot:{session}"),
        "the session session.start names, not the folder: {doc}"
    );
    assert_eq!(doc["session"]["agent_version"], "1.0.102", "{doc}");
    let stamp = row(&doc, "count/stamp").expect("count/stamp's row");
    assert_eq!(stamp["calls"], 1, "{stamp}");
    assert_eq!(stamp["status"], "active", "{stamp}");
    let transport = doc["history"]["attempts"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|a| a["servers"].as_array().into_iter().flatten())
        .find(|s| s["name"] == "count")
        .map(|s| s["transport"].clone());
    assert_eq!(
        transport,
        Some(Value::from("stdio")),
        "the call's start names count's transport: {doc}"
    );
    if let Some(broken) = row(&doc, "broken") {
        assert_ne!(
            broken["status"], "failed",
            "the events say nothing of broken: {broken}"
        );
    }

    let doc = run.show(&log_copy);
    assert_eq!(doc["session"]["agent_kind"], "copilot", "{doc}");
    assert_eq!(
        doc["session"]["session_id"],
        format!("copilot:{session}"),
        "the log's session is the events': {doc}"
    );
    let broken = row(&doc, "broken").expect("broken's row");
    assert_eq!(broken["status"], "failed", "{broken}");
    if let Some(count) = row(&doc, "count") {
        assert_ne!(count["status"], "failed", "{count}");
    }
}

/// GIVEN a real run WHEN its events and process log are copied elsewhere
/// and shown by path THEN each reads as the module docs say.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_run_s_events_and_log_read_by_path() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let Some((run, files)) = copilot_run().await else {
        return;
    };
    shown_by_path_says_the_same(&run, &files.events, &files.log);
}

/// GIVEN the committed copies of one real run WHEN shown by path THEN
/// they read as the module docs say (no CLI needed).
#[test]
fn the_committed_run_reads_by_path() {
    let run = Run::pinned(TOOLS, PLANTED).expect("tether-pinned-mcp is built");
    shown_by_path_says_the_same(
        &run,
        &fixtures().join("copilot-1.0.102-broken.events.jsonl"),
        &fixtures().join("copilot-1.0.102-broken.process.log"),
    );
}

/// Keys whose values the readers take (names, ids, the version, the
/// working directory whose last component is the project) or that say
/// what a record is: kept real; every other string is planted.
const KEPT: &[&str] = &[
    "type",
    "timestamp",
    "sessionId",
    "toolCallId",
    "mcpServerName",
    "mcpConfigServerName",
    "mcpToolName",
    "copilotVersion",
    "cwd",
    "server_name",
];

/// Every string of `value` but under a [`KEPT`] key replaced by `PLANTED`.
fn plant(value: &mut Value, key: Option<&str>) {
    by_path::plant_strings(value, key, &mut |key, s| {
        if !key.is_some_and(|k| KEPT.contains(&k)) {
            *s = PLANTED.to_owned();
        }
    });
}

/// GIVEN the committed run with `PLANTED` in every value the readers do
/// not take (arguments, results, prompts, the transport, a log line's
/// error and its words) WHEN shown by path THEN the rows read as before
/// but for the transport (planted, so none) and the secret is in no output
/// (`Run::show` asserts it, text and JSON).
#[test]
fn a_planted_secret_in_what_is_not_read_reaches_no_output() {
    let run = Run::pinned(TOOLS, PLANTED).expect("tether-pinned-mcp is built");
    let dir = run.home().join("planted");
    std::fs::create_dir_all(&dir).expect("planted");
    let planted = by_path::planted_lines(
        &fixtures().join("copilot-1.0.102-broken.events.jsonl"),
        |v| plant(v, None),
    );
    assert!(planted.iter().any(|l| l.contains(PLANTED)));
    let events = dir.join("events.jsonl");
    std::fs::write(&events, planted.join("\n") + "\n").expect("write");
    let log = std::fs::read_to_string(fixtures().join("copilot-1.0.102-broken.process.log"))
        .expect("log");
    let planted: Vec<String> = log
        .lines()
        .map(|l| match l.find(" {") {
            Some(i) if l.ends_with('}') => match serde_json::from_str::<Value>(&l[i + 1..]) {
                Ok(mut v) => {
                    plant(&mut v, None);
                    format!("{} {PLANTED} {v}", &l[..i])
                }
                Err(_) => l.to_owned(),
            },
            _ => l.to_owned(),
        })
        .collect();
    let log = dir.join("process.log");
    std::fs::write(&log, planted.join("\n") + "\n").expect("write");

    let doc = run.show(&events);
    let stamp = row(&doc, "count/stamp").expect("count/stamp's row");
    assert_eq!(stamp["calls"], 1, "{stamp}");
    let doc = run.show(&log);
    let broken = row(&doc, "broken").expect("broken's row");
    assert_eq!(broken["status"], "failed", "{broken}");
}

/// GIVEN the committed run's events and its process log WHEN each is
/// imported by path into a store, twice THEN one session, then unchanged;
/// both files land in the one session `session.start` names, which holds
/// the call and the failed server.
#[test]
fn the_committed_run_imports_by_path_into_one_session() {
    let home = tempfile::tempdir().expect("home");
    let db = home.path().join("t.db").display().to_string();
    let events = fixtures().join("copilot-1.0.102-broken.events.jsonl");
    let log = fixtures().join("copilot-1.0.102-broken.process.log");
    let session = started_session(&events);
    let import = |file: &Path| {
        let out = tether_tests::tether_at_home(home.path())
            .args([
                "sessions",
                "import",
                &file.display().to_string(),
                "--db",
                &db,
            ])
            .output()
            .expect("tether runs");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        stderr
    };
    let first = import(&events);
    assert!(first.contains("1 new"), "{first}");
    let again = import(&events);
    assert!(again.contains("1 unchanged"), "{again}");
    import(&log);
    let out = tether_tests::tether_at_home(home.path())
        .args(["history", "--db", &db, "--json"])
        .output()
        .expect("history");
    let text = String::from_utf8_lossy(&out.stdout);
    let doc: Value = serde_json::from_str(&text).expect("one document");
    let histories = doc.as_array().expect("the store's histories");
    assert_eq!(histories.len(), 1, "one session: {text}");
    assert_eq!(histories[0]["session_id"], format!("copilot:{session}"));
    let servers: Vec<&str> = histories[0]["attempts"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|a| a["servers"].as_array().into_iter().flatten())
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert!(
        servers.contains(&"count"),
        "the events' server: {servers:?}"
    );
    assert!(servers.contains(&"broken"), "the log's server: {servers:?}");
}

/// Runs the CLI again and rewrites the committed copies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "rewrites tests/fixtures/records-by-path/copilot-1.0.102-broken.*"]
async fn record_the_fixtures() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let (_run, files) = copilot_run().await.expect("Copilot CLI is installed");
    std::fs::copy(
        &files.events,
        fixtures().join("copilot-1.0.102-broken.events.jsonl"),
    )
    .expect("write the events");
    std::fs::copy(
        &files.log,
        fixtures().join("copilot-1.0.102-broken.process.log"),
    )
    .expect("write the log");
}
