//! Issue 67 §1 on the real CLIs: Claude Code 2.1.197 (pinned) and 2.1.332
//! (newest), run headless with one server of each everyday failure, its
//! model API on a closed port (the run ends by itself, on its own exit).
//! Each server's row, read from Claude Code's own MCP log by the Claude
//! reader, is compared with what Claude itself said: its init line's
//! status for the server and the words of its log.
//!
//! - a token the server rejects (a literal `Authorization` header; the
//!   server answers 401): Claude `failed`, its log "Server rejected the
//!   configured Authorization header" → `auth_rejected`;
//! - a server that wants an OAuth login (401 naming its resource
//!   metadata): Claude `needs-auth` → needs-auth (`oauth_required`);
//! - a closed port → `connection_refused`; a missing absolute command →
//!   `command_not_found`; a server that exits at once → `server_exited`;
//! - a server that never answers: as Claude says (pending where the run
//!   ended first, and then nothing failed is read: silence is not
//!   failure; failed where it waited out its timeout: `timeout`).
//!
//! Planted secrets (the token, the server's stderr) reach no reading. With
//! an empty home, every skill its init line lists reads as built in.

use std::path::Path;

use serde_json::{Value, json};
use tether_core::records::{RecordAnswer, RecordFile};
use tether_core::vocab::ReasonCode;
use tether_passthrough_claude::records::{MCP_LOG, read};
use tether_tests::Release;

const TOKEN: &str = "planted-token-0123456789";
const STDERR: &str = "planted-stderr-words";

/// What the lines of one log said: (status, reason) of each that said one.
type Said = Vec<(String, Option<ReasonCode>)>;

/// Each server's log under `home`, read: (server, what it said, Claude's
/// own words joined).
fn logs(home: &Path) -> Vec<(String, Said, String)> {
    let cache = home.join(".cache/claude-cli-nodejs");
    let mut out = Vec::new();
    for slug in std::fs::read_dir(&cache)
        .expect("Claude wrote its MCP logs")
        .flatten()
    {
        for dir in std::fs::read_dir(slug.path()).expect("a folder").flatten() {
            let folder = dir.file_name().to_string_lossy().into_owned();
            let Some(server) = folder.strip_prefix("mcp-logs-").map(str::to_owned) else {
                continue;
            };
            let mut said = Vec::new();
            let mut words = String::new();
            for file in std::fs::read_dir(dir.path()).expect("logs").flatten() {
                let text = std::fs::read_to_string(file.path()).expect("a log");
                let segments = vec![
                    slug.file_name().to_string_lossy().into_owned(),
                    folder.clone(),
                    file.file_name().to_string_lossy().into_owned(),
                ];
                let rf = RecordFile {
                    role: MCP_LOG,
                    segments: &segments,
                    session: None,
                    configured: &[],
                };
                for line in text.lines() {
                    words.push_str(line);
                    let RecordAnswer::Read(reading) = read(&rf, line) else {
                        panic!("{server}: a log line not read: {line}");
                    };
                    let shown = format!("{reading:?}");
                    assert!(!shown.contains("planted"), "{shown}");
                    for e in reading.evidence {
                        if let Some(status) = e.reported_status {
                            said.push((status, e.reason_code));
                        }
                    }
                }
            }
            out.push((server, said, words));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_everyday_failure_reads_as_claude_itself_says() {
    let (auth, _log) = tether_tests::fake_model::start_auth().await;
    // A port nothing listens on: bound, then let go.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("a port")
        .local_addr()
        .expect("its address")
        .port();
    for release in Release::BOTH {
        let Some(claude) = release.peer("node_modules/.bin/claude") else {
            continue;
        };
        let home = tempfile::tempdir().expect("a private home");
        let config = json!({"mcpServers": {
            "oauthy": {"type": "http", "url": format!("{}/mcp", auth.base())},
            "badtoken": {"type": "http", "url": format!("{}/mcp", auth.base()),
                "headers": {"Authorization": format!("Bearer {TOKEN}")}},
            "refused": {"type": "http", "url": format!("http://127.0.0.1:{closed}/mcp")},
            "absmissing": {"type": "stdio", "command": home.path().join("no/such/server").display().to_string(), "args": []},
            "exits": {"type": "stdio", "command": "sh", "args": ["-c", format!("echo {STDERR} >&2; exit 3")]},
            "silent": {"type": "stdio", "command": "sleep", "args": ["600"]},
        }});
        let file = home.path().join("mcp.json");
        std::fs::write(&file, config.to_string()).expect("writing the config");
        let mut cmd = std::process::Command::new(&claude);
        cmd.env_clear()
            .env("HOME", home.path())
            .env("PATH", release.path())
            .env("ANTHROPIC_API_KEY", "dummy-not-real")
            .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{closed}"))
            .env("CLAUDE_CODE_MAX_RETRIES", "0")
            // Claude Code's own connection timeout, shorter than its 30 s
            // default: `MCP_TIMEOUT` (ms; 2.1.197 `L6()`, `Oe.MCP_TIMEOUT`
            // else 30000; 2.1.332 `dp()`, the deadline of each server's
            // connection). Where Claude waits for the silent server, it
            // waits this long; every other server answers or fails at once.
            .env("MCP_TIMEOUT", "10000")
            .current_dir(home.path())
            .args(["--mcp-config"])
            .arg(&file)
            .args([
                "--strict-mcp-config",
                "-p",
                "hi",
                "--output-format",
                "stream-json",
                "--verbose",
            ]);
        // Ends on the CLI's own exit (its model API refuses at once).
        let out = tokio::task::spawn_blocking(move || tether_tests::output_within(cmd, 180))
            .await
            .expect("the run");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let init: Value = stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["subtype"] == "init")
            .unwrap_or_else(|| panic!("{}: no init line: {stdout}", release.label()));
        let claude_says = |server: &str| -> String {
            init["mcp_servers"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|s| s["name"] == server)
                .and_then(|s| s["status"].as_str())
                .unwrap_or("-")
                .to_owned()
        };
        // With an empty home, every skill the init line lists is Claude
        // Code's own: each reads as built in.
        let skills: Vec<&str> = init["skills"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        assert!(!skills.is_empty(), "{}: no skills listed", release.label());
        for skill in &skills {
            assert!(
                tether_passthrough_claude::records::builtin::is_builtin_skill(skill, None),
                "{}: {skill} is Claude Code's own, not read so",
                release.label()
            );
        }
        let read = logs(home.path());
        let row = |server: &str| {
            read.iter()
                .find(|(s, _, _)| s == server)
                .unwrap_or_else(|| panic!("{}: no log of {server}", release.label()))
        };
        use ReasonCode as R;
        for (server, status, reason, words) in [
            (
                "badtoken",
                "failed",
                R::AuthRejected,
                "Server rejected the configured Authorization header",
            ),
            (
                "oauthy",
                "needs-auth",
                R::OauthRequired,
                "Authentication required",
            ),
            (
                "refused",
                "failed",
                R::ConnectionRefused,
                "Unable to connect",
            ),
            ("absmissing", "failed", R::CommandNotFound, "ENOENT"),
            ("exits", "failed", R::ServerExited, "Connection closed"),
        ] {
            let (_, said, log) = row(server);
            let label = format!("{} {server}", release.label());
            assert_eq!(claude_says(server), status, "{label}: Claude's own status");
            assert!(
                log.contains(words),
                "{label}: Claude's words {words:?} not in its log"
            );
            assert!(
                said.contains(&(status.to_owned(), Some(reason.clone()))),
                "{label}: read {said:?}"
            );
            assert!(
                said.iter()
                    .all(|(s, r)| s == status && r.as_ref() == Some(&reason)),
                "{label}: another reading too: {said:?}"
            );
        }
        // Never answered: where the run ended first (2.1.197 prints its
        // init line before the wait is over), Claude says pending, its log
        // says nothing failed, and nothing failed is read; where Claude
        // waited out its connection timeout (2.1.332), it says failed, its
        // log says it timed out, and so does the row.
        let (_, said, log) = row("silent");
        let label = format!("{} silent", release.label());
        match claude_says("silent").as_str() {
            "pending" => assert!(said.is_empty(), "{label}: read {said:?}"),
            "failed" => {
                assert!(log.contains("timed out"), "{label}: Claude's words");
                assert!(!said.is_empty(), "{label}: nothing read");
                assert!(
                    said.iter()
                        .all(|(s, r)| s == "failed" && *r == Some(R::Timeout)),
                    "{label}: read {said:?}"
                );
            }
            other => panic!("{label}: Claude said {other}"),
        }
    }
}
