//! Issue 67 §4: a harness's own health check is not a session. `claude mcp
//! list` ("Checking MCP server health…") connects to every configured
//! server and writes Claude Code's per-server MCP log
//! (`~/.cache/claude-cli-nodejs/<cwd slug>/mcp-logs-<server>/<time>.jsonl`)
//! under a fresh `sessionId`, and no transcript; a `claude -p` run writes
//! the same log lines and its transcript (seen in real runs of 2.1.197 and
//! 2.1.332, even when the run then fails for want of a login).
//!
//! - Fast: records shaped as 2.1.332 wrote them (compact JSON, copied from
//!   a real run here): the session only the logs show is a health check,
//!   the one with a transcript is not.
//! - Live, on the pinned and the newest Claude Code with a real stdio
//!   server (`mcp-server-everything`): `claude -p`, then `claude mcp
//!   list` (the health check is the newer). `tether sessions list` leaves
//!   the health check out and counts it, `--health-checks` lists it marked
//!   (text and JSON), `tether mcp`'s `why_missing` speaks of the `-p`
//!   session as the newest, and `tether check ID`, `sessions show ID`
//!   and `tether mcp`'s `session` on the health check still answer and
//!   say what it is (a health check `claude mcp list` ran) and found.
//! - Import: a health check is stored marked (its trigger
//!   `health_check`), and stays so when its files grow; the store's
//!   readers leave it out of their lists.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use tether_core::registry::Registry;
use tether_records::{Filter, Home, Records};
use tether_tests::{Release, workspace_bin};

/// The health check's session (2.1.332's `claude mcp list`).
const CHECK: &str = "bb5375c3-37cc-4fc9-98b0-fcd59f546530";
/// The `claude -p` run's session.
const RUN: &str = "c434e009-47d8-431c-b5aa-aed0fe28aba5";

/// What `claude mcp list` (2.1.332) wrote to the server's log, whole.
const CHECK_LOG: &str = r#"{"debug":"Starting connection with timeout of 30000ms","timestamp":"2026-12-07T15:28:14.253Z","sessionId":"bb5375c3-37cc-4fc9-98b0-fcd59f546530","cwd":"/tmp/hcn.ubkt"}
{"error":"Server stderr: Starting default (STDIO) server...\n","timestamp":"2026-12-07T15:28:15.413Z","sessionId":"bb5375c3-37cc-4fc9-98b0-fcd59f546530","cwd":"/tmp/hcn.ubkt"}
{"debug":"Successfully connected (transport: stdio) in 1179ms","timestamp":"2026-12-07T15:28:15.413Z","sessionId":"bb5375c3-37cc-4fc9-98b0-fcd59f546530","cwd":"/tmp/hcn.ubkt"}
{"debug":"Connection established with capabilities: {\"hasTools\":true,\"hasPrompts\":true,\"hasResources\":true,\"hasResourceSubscribe\":true,\"serverVersion\":{\"name\":\"mcp-servers/everything\",\"title\":\"Everything Reference Server\",\"version\":\"2.0.0\"},\"protocolEra\":\"legacy\",\"negotiatedProtocolVersion\":\"2025-11-25\"}","timestamp":"2026-12-07T15:28:15.415Z","sessionId":"bb5375c3-37cc-4fc9-98b0-fcd59f546530","cwd":"/tmp/hcn.ubkt"}
{"debug":"Sending SIGINT to MCP server process","timestamp":"2026-12-07T15:28:15.511Z","sessionId":"bb5375c3-37cc-4fc9-98b0-fcd59f546530","cwd":"/tmp/hcn.ubkt"}
{"debug":"STDIO connection closed after 0s (cleanly)","timestamp":"2026-12-07T15:28:15.535Z","sessionId":"bb5375c3-37cc-4fc9-98b0-fcd59f546530","cwd":"/tmp/hcn.ubkt"}
{"debug":"Cleared connection cache for reconnection","timestamp":"2026-12-07T15:28:15.536Z","sessionId":"bb5375c3-37cc-4fc9-98b0-fcd59f546530","cwd":"/tmp/hcn.ubkt"}
{"debug":"MCP server process exited cleanly","timestamp":"2026-12-07T15:28:15.568Z","sessionId":"bb5375c3-37cc-4fc9-98b0-fcd59f546530","cwd":"/tmp/hcn.ubkt"}
"#;

/// What the `claude -p` run (2.1.332) wrote to the server's log (its first
/// lines).
const RUN_LOG: &str = r#"{"debug":"Starting connection with timeout of 30000ms","timestamp":"2026-12-07T15:28:16.846Z","sessionId":"c434e009-47d8-431c-b5aa-aed0fe28aba5","cwd":"/tmp/hcn.ubkt"}
{"debug":"Successfully connected (transport: stdio) in 1399ms","timestamp":"2026-12-07T15:28:17.933Z","sessionId":"c434e009-47d8-431c-b5aa-aed0fe28aba5","cwd":"/tmp/hcn.ubkt"}
"#;

/// The run's prompt in its transcript (2.1.332).
const RUN_TRANSCRIPT: &str = r#"{"parentUuid":null,"isSidechain":false,"promptId":"7c3b75db-122f-483b-a2b4-7f3508e40dcc","type":"user","message":{"role":"user","content":"hi"},"uuid":"895c300e-162e-4fd3-a130-d18d830f660b","timestamp":"2026-12-07T15:28:18.249Z","permissionMode":"default","promptSource":"sdk","sentAtMs":1796657296806,"rowSource":"local","turnOrigin":"sdk","turnPosition":{"promptIndex":0,"turnIndex":1},"userType":"external","entrypoint":"sdk-cli","cwd":"/tmp/hcn.ubkt","sessionId":"c434e009-47d8-431c-b5aa-aed0fe28aba5","version":"2.1.332","gitBranch":"HEAD"}
"#;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("folders");
    std::fs::write(path, text).expect("writing a record file");
}

/// Each session's id and whether its summary says health check.
fn health_checks(home: &Path) -> Vec<(String, bool)> {
    let registry = Registry::with_static().expect("registry");
    let mut records = Records::new(
        &registry,
        &Home::new(home, HashMap::new()),
        HashMap::new(),
        Filter {
            harnesses: vec!["claude".into()],
            ..Filter::default()
        },
    );
    records.read(true);
    let mut out: Vec<(String, bool)> = records
        .summaries()
        .into_iter()
        .map(|(s, _)| (s.harness_session, s.health_check))
        .collect();
    out.sort();
    out
}

/// GIVEN a health check's MCP log and a run's log and transcript, as
/// 2.1.332 wrote them WHEN the records are read THEN only the session the
/// logs alone show is a health check; without its transcript the run is
/// one too (the files decide, not the log's words).
#[test]
fn a_session_only_its_mcp_logs_show_is_a_health_check() {
    let home = tempfile::tempdir().expect("a home");
    let logs = home
        .path()
        .join(".cache/claude-cli-nodejs/-tmp-hcn-ubkt/mcp-logs-every");
    write(&logs.join("2026-12-07T15-28-14-252Z.jsonl"), CHECK_LOG);
    write(&logs.join("2026-12-07T15-28-16-844Z.jsonl"), RUN_LOG);
    assert_eq!(
        health_checks(home.path()),
        [(CHECK.to_owned(), true), (RUN.to_owned(), true)],
        "logs alone: both are health checks"
    );
    write(
        &home
            .path()
            .join(format!(".claude/projects/-tmp-hcn-ubkt/{RUN}.jsonl")),
        RUN_TRANSCRIPT,
    );
    assert_eq!(
        health_checks(home.path()),
        [(CHECK.to_owned(), true), (RUN.to_owned(), false)]
    );
}

/// `claude ARGS` of `release` in `home`, to its end (bounded).
fn claude(release: Release, exe: &Path, home: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = std::process::Command::new(exe);
    cmd.env_clear()
        .env("HOME", home)
        .env("PATH", release.path())
        .current_dir(home)
        .args(args);
    tether_tests::output_within(cmd, 120)
}

/// `tether ARGS` in `home`.
fn tether(home: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = std::process::Command::new(workspace_bin("tether"));
    cmd.env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .current_dir(home)
        .args(args);
    tether_tests::output_within(cmd, 120)
}

/// The session ids of Claude's MCP logs under `home`.
fn logged_sessions(home: &Path) -> Vec<String> {
    let mut ids = Vec::new();
    let cache = home.join(".cache/claude-cli-nodejs");
    for slug in std::fs::read_dir(&cache)
        .expect("Claude's MCP logs")
        .flatten()
    {
        for dir in std::fs::read_dir(slug.path()).expect("a folder").flatten() {
            for file in std::fs::read_dir(dir.path()).expect("logs").flatten() {
                let text = std::fs::read_to_string(file.path()).expect("a log");
                for line in text.lines() {
                    let v: Value = serde_json::from_str(line).expect("a JSON line");
                    if let Some(id) = v["sessionId"].as_str()
                        && !ids.iter().any(|i| i == id)
                    {
                        ids.push(id.to_owned());
                    }
                }
            }
        }
    }
    ids
}

/// `why_missing` of `name`, asked of `tether mcp` in `home`.
async fn why_missing(home: &Path, name: &str) -> String {
    mcp_call(home, None, "why_missing", json!({"name": name}))
        .await
        .0
}

/// `tool` called with `arguments` on `tether mcp` in `home` (its store
/// `db` where given): the answer's text, and whether it is an error.
async fn mcp_call(home: &Path, db: Option<&Path>, tool: &str, arguments: Value) -> (String, bool) {
    let mut cmd = tokio::process::Command::new(workspace_bin("tether"));
    cmd.arg("mcp")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .current_dir(home)
        .stderr(std::process::Stdio::null());
    if let Some(db) = db {
        cmd.env("TETHER_DB", db);
    }
    let client =
        ().serve(TokioChildProcess::new(cmd).expect("tether mcp starts"))
            .await
            .expect("initialized");
    let Value::Object(arguments) = arguments else {
        unreachable!("an object");
    };
    let result = tokio::time::timeout(
        Duration::from_secs(120),
        client.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments)),
    )
    .await
    .expect("answered in time")
    .expect("a result");
    let _ = client.cancel().await;
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n");
    (text, result.is_error == Some(true))
}

/// What every place that shows a health check by its id says first.
const SAID: &str = "a health check claude ran (`claude mcp list`), not an agent session";

/// The three files of the fast tests, as 2.1.332 wrote them, under `home`:
/// the health check's log, the run's log and its transcript.
fn write_both(home: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let logs = home.join(".cache/claude-cli-nodejs/-tmp-hcn-ubkt/mcp-logs-every");
    let (check, run) = (
        logs.join("2026-12-07T15-28-14-252Z.jsonl"),
        logs.join("2026-12-07T15-28-16-844Z.jsonl"),
    );
    write(&check, CHECK_LOG);
    write(&run, RUN_LOG);
    write(
        &home.join(format!(".claude/projects/-tmp-hcn-ubkt/{RUN}.jsonl")),
        RUN_TRANSCRIPT,
    );
    (check, run)
}

/// GIVEN a health check's records beside a run's, as 2.1.332 wrote them
/// WHEN the health check is asked for by its id (`sessions show`, `check`,
/// `tether mcp`'s `session`) THEN each answers, and says first that it is
/// a health check Claude Code ran (`claude mcp list`), not an agent
/// session, and what it found (`every` connected); `tether mcp`'s
/// `sessions` leaves it out and counts it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_health_check_asked_for_by_its_id_is_said_as_one_with_what_it_found() {
    let home = tempfile::tempdir().expect("a home");
    let home = home.path();
    write_both(home);
    let id = format!("claude:{CHECK}");
    let found = "it found: every connected";

    let out = tether(home, &["sessions", "show", &id]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "sessions show: {text}");
    let first = text.lines().next().unwrap_or_default();
    assert!(first.starts_with(&id) && first.contains(SAID), "{text}");
    assert!(first.contains(found), "{text}");
    let out = tether(home, &["sessions", "show", &format!("claude:{RUN}")]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text.contains("health check"),
        "the run is no health check: {text}"
    );

    let out = tether(home, &["check", &id]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(SAID) && text.contains(found), "check: {text}");

    let (text, error) = mcp_call(home, None, "session", json!({"id": &CHECK[..8]})).await;
    assert!(!error, "session: {text}");
    assert!(!text.contains("no session"), "{text}");
    assert!(text.contains(&id) && text.contains(SAID), "{text}");
    assert!(text.contains(found), "{text}");
    assert!(
        text.contains("mcp_server every: connected"),
        "its row: {text}"
    );

    let (text, error) = mcp_call(home, None, "sessions", json!({})).await;
    assert!(!error, "sessions: {text}");
    assert!(text.contains(RUN), "{text}");
    assert!(!text.contains(CHECK), "{text}");
    assert!(text.contains("1 health check not listed"), "{text}");
}

/// The trigger of each session `tether history --json` shows in `db`.
fn stored_triggers(home: &Path, db: &Path) -> Vec<(String, String)> {
    let out = tether(
        home,
        &["history", "--json", "--db", &db.display().to_string()],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let histories: Value = serde_json::from_slice(&out.stdout).expect("a JSON array");
    let mut triggers: Vec<(String, String)> = histories
        .as_array()
        .expect("histories")
        .iter()
        .map(|h| {
            let current = h["current_attempt_id"].as_str().unwrap_or_default();
            let attempt = h["attempts"]
                .as_array()
                .and_then(|a| a.iter().find(|a| a["attempt_id"] == current))
                .cloned()
                .unwrap_or_default();
            (
                h["session_id"].as_str().unwrap_or_default().to_owned(),
                attempt["trigger"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    triggers.sort();
    triggers
}

/// GIVEN a health check's records beside a run's WHEN `tether sessions
/// import` stores them, and again after both logs grew THEN the health
/// check is stored marked (its trigger `health_check`), the run not, both
/// times; a session whose log came first is marked until its transcript
/// appears, then is a session; and with the records gone, the store's
/// readers (`tether mcp`'s `sessions`, `check ID`) still leave it out or
/// say what it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_imported_health_check_is_stored_marked_and_stays_so() {
    let home = tempfile::tempdir().expect("a home");
    let home = home.path();
    let (check_log, run_log) = write_both(home);
    let db = home.join("imported.db");
    let import = |home: &Path| {
        let out = tether(
            home,
            &["sessions", "import", "--db", &db.display().to_string()],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let (check, run) = (format!("claude:{CHECK}"), format!("claude:{RUN}"));
    let marked = vec![
        (check.clone(), "health_check".to_owned()),
        (run.clone(), "harness_session".to_owned()),
    ];
    import(home);
    assert_eq!(stored_triggers(home, &db), marked, "first import");
    // Both logs grow (the run's is written on after its transcript): an
    // incremental import reads on, and the marks stay.
    let append = |path: &Path, id: &str, at: &str| {
        let line = format!(
            "{{\"debug\":\"STDIO connection closed after 0s (cleanly)\",\"timestamp\":\"{at}\",\"sessionId\":\"{id}\",\"cwd\":\"/tmp/hcn.ubkt\"}}\n"
        );
        let mut text = std::fs::read_to_string(path).expect("a log");
        text.push_str(&line);
        std::fs::write(path, text).expect("a log grown");
    };
    append(&check_log, CHECK, "2026-12-07T15:28:15.600Z");
    append(&run_log, RUN, "2026-12-07T15:28:20.000Z");
    import(home);
    assert_eq!(stored_triggers(home, &db), marked, "second import");

    // A run whose log is read before its transcript is written: marked,
    // then a session once the transcript is there.
    const LATE: &str = "0f0e0d0c-1111-4222-8333-944445555666";
    let late_log = home.join(
        ".cache/claude-cli-nodejs/-tmp-hcn-ubkt/mcp-logs-every/2026-12-07T15-30-00-000Z.jsonl",
    );
    write(
        &late_log,
        &RUN_LOG.replace(RUN, LATE).replace("15:28:1", "15:30:0"),
    );
    import(home);
    let late = format!("claude:{LATE}");
    assert!(
        stored_triggers(home, &db).contains(&(late.clone(), "health_check".to_owned())),
        "{:?}",
        stored_triggers(home, &db)
    );
    write(
        &home.join(format!(".claude/projects/-tmp-hcn-ubkt/{LATE}.jsonl")),
        &RUN_TRANSCRIPT
            .replace(RUN, LATE)
            .replace("15:28:18", "15:30:08"),
    );
    import(home);
    assert!(
        stored_triggers(home, &db).contains(&(late, "harness_session".to_owned())),
        "{:?}",
        stored_triggers(home, &db)
    );

    // The store alone: no records on disk.
    let bare = tempfile::tempdir().expect("a home without records");
    let bare = bare.path();
    let (text, _) = mcp_call(bare, Some(&db), "sessions", json!({})).await;
    assert!(text.contains(RUN) && !text.contains(CHECK), "{text}");
    assert!(text.contains("1 health check not listed"), "{text}");
    let (text, error) = mcp_call(bare, Some(&db), "session", json!({"id": &check})).await;
    assert!(!error && text.contains(SAID), "{text}");
    let out = tether(bare, &["check", &check, "--db", &db.display().to_string()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(SAID), "check ID in the store: {text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_mcp_list_is_a_health_check_and_never_the_newest_session() {
    let Some(server) = Release::Pinned.peer("node_modules/.bin/mcp-server-everything") else {
        return;
    };
    for release in Release::BOTH {
        let Some(exe) = release.peer("node_modules/.bin/claude") else {
            continue;
        };
        let label = release.label();
        let home = tempfile::tempdir().expect("a private home");
        let home = home.path();
        let config = json!({"mcpServers": {
            "every": {"type": "stdio", "command": server.display().to_string(), "args": []}
        }});
        std::fs::write(home.join(".claude.json"), config.to_string()).expect("the config");
        // A headless run: it connects, then fails for want of a login (on
        // its own exit). Its session id is its init line's.
        let run = claude(
            release,
            &exe,
            home,
            &["-p", "hi", "--output-format", "stream-json", "--verbose"],
        );
        let stdout = String::from_utf8_lossy(&run.stdout);
        let run_id = stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["subtype"] == "init")
            .and_then(|v| v["session_id"].as_str().map(str::to_owned))
            .unwrap_or_else(|| panic!("{label}: no init line: {stdout}"));
        // Then the health check, newer than the run.
        let check = claude(release, &exe, home, &["mcp", "list"]);
        let said = String::from_utf8_lossy(&check.stdout);
        assert!(
            check.status.success() && said.contains("every"),
            "{label}: claude mcp list: {said}"
        );
        let check_id = logged_sessions(home)
            .into_iter()
            .find(|id| *id != run_id)
            .unwrap_or_else(|| panic!("{label}: the health check wrote no MCP log"));
        let (run_id, check_id) = (format!("claude:{run_id}"), format!("claude:{check_id}"));

        // Listed: the run; the health check counted, not listed.
        let out = tether(home, &["sessions", "list"]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{label}: {text}");
        assert!(text.contains(&run_id), "{label}: {text}");
        assert!(!text.contains(&check_id), "{label}: {text}");
        assert!(
            text.contains("1 health check not listed"),
            "{label}: {text}"
        );
        let out = tether(home, &["sessions", "list", "--json"]);
        let doc: Value = serde_json::from_slice(&out.stdout).expect("a SessionsDocument");
        let ids: Vec<&str> = doc["sessions"]
            .as_array()
            .expect("sessions")
            .iter()
            .filter_map(|s| s["session_id"].as_str())
            .collect();
        assert_eq!(ids, [run_id.as_str()], "{label}: {doc}");
        // With --health-checks: both, the health check marked.
        let out = tether(home, &["sessions", "list", "--health-checks"]);
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .find(|l| l.starts_with(&check_id))
            .unwrap_or_else(|| panic!("{label}: {text}"));
        assert!(line.contains("health check"), "{label}: {line}");
        let run_line = text.lines().find(|l| l.starts_with(&run_id));
        assert!(
            run_line.is_some_and(|l| !l.contains("health check")),
            "{label}: {text}"
        );
        let out = tether(home, &["sessions", "list", "--health-checks", "--json"]);
        let doc: Value = serde_json::from_slice(&out.stdout).expect("a SessionsDocument");
        let sessions = doc["sessions"].as_array().expect("sessions");
        let flag = |id: &str| {
            sessions
                .iter()
                .find(|s| s["session_id"] == id)
                .map(|s| s["health_check"].as_bool().unwrap_or(false))
        };
        assert_eq!(flag(&check_id), Some(true), "{label}: {doc}");
        assert_eq!(flag(&run_id), Some(false), "{label}: {doc}");
        // Newest first: the health check is the newer, and still not "the
        // newest session".
        assert_eq!(sessions[0]["session_id"], check_id.as_str(), "{label}");

        // `tether mcp`: the newest claude session is the run.
        let answer = why_missing(home, "every").await;
        assert!(
            answer.contains(&format!("Newest claude session ({run_id}")),
            "{label}: {answer}"
        );
        assert!(!answer.contains(&check_id), "{label}: {answer}");

        // `check ID` on the health check answers, and says what it is.
        let out = tether(home, &["check", &check_id]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(&check_id), "{label}: {text}");
        assert!(text.contains(SAID), "{label}: {text}");
        assert!(
            text.contains("it found: every connected"),
            "{label}: {text}"
        );
        // So do `sessions show ID` and `tether mcp`'s `session`.
        let out = tether(home, &["sessions", "show", &check_id]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(SAID), "{label}: {text}");
        let (text, error) = mcp_call(home, None, "session", json!({"id": &check_id})).await;
        assert!(!error && text.contains(SAID), "{label}: {text}");
    }
}
