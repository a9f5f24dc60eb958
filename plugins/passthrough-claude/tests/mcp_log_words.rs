//! Issue 67: each everyday failure gets its own reason from Claude Code's
//! own MCP log. The logs are real: Claude Code 2.1.197 (pinned) and
//! 2.1.332 (newest), each run here with `--mcp-config` naming one server
//! of each kind (a token the server rejects, a server that wants an
//! OAuth login, a closed port, a missing absolute and bare command, a
//! server that exits at once printing a planted secret to stderr, one that
//! never answers, and `mcp-server-time`), kept as Claude wrote them in
//! `tests/fixtures/records-real/claude-<release>-mcp-logs/<server>.jsonl`.

use std::path::PathBuf;

use tether_core::records::{RecordAnswer, RecordFile};
use tether_core::vocab::ReasonCode;
use tether_passthrough_claude::records::{MCP_LOG, read};

fn fixtures(release: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/records-real")
        .join(format!("claude-{release}-mcp-logs"))
}

/// What the log of `server` says: the reported status and reason of each
/// line that said one, in order.
fn said(release: &str, server: &str) -> Vec<(String, Option<ReasonCode>)> {
    let text = std::fs::read_to_string(fixtures(release).join(format!("{server}.jsonl")))
        .expect("a real log");
    let segments = vec![
        "-tmp-w".to_owned(),
        format!("mcp-logs-{server}"),
        "2026-12-07T03-26-56-400Z.jsonl".to_owned(),
    ];
    let file = RecordFile {
        role: MCP_LOG,
        segments: &segments,
        session: None,
        configured: &[],
    };
    let mut out = Vec::new();
    for line in text.lines() {
        match read(&file, line) {
            RecordAnswer::Read(reading) => {
                assert!(reading.names_are_names(&[]), "{reading:?}");
                let shown = format!("{reading:?}");
                assert!(!shown.contains("planted"), "{shown}");
                assert!(!shown.contains("invalid_token"), "{shown}");
                for e in reading.evidence {
                    if let Some(status) = e.reported_status {
                        if let Some(summary) = &e.summary {
                            assert!(summary.starts_with("Claude Code's MCP log"), "{summary}");
                        }
                        out.push((status, e.reason_code));
                    }
                }
            }
            other => panic!("{release} {server}: {other:?} for {line}"),
        }
    }
    out
}

/// GIVEN each release's real log of each kind of server WHEN read THEN
/// each says its own reason: a rejected token is `auth_rejected`, a login
/// wanted `needs-auth` (`oauth_required`), a closed port
/// `connection_refused`, a missing command `command_not_found` (absolute
/// and bare), a server that exits `server_exited`, one that never answers
/// `timeout`, and the working one connected; no line reads another way.
#[test]
fn each_failure_reads_its_own_reason_from_claude_s_log() {
    use ReasonCode as R;
    let expected: [(&str, &str, Option<R>); 8] = [
        ("badtoken", "failed", Some(R::AuthRejected)),
        ("oauthy", "needs-auth", Some(R::OauthRequired)),
        ("refused", "failed", Some(R::ConnectionRefused)),
        ("absmissing", "failed", Some(R::CommandNotFound)),
        ("baremissing", "failed", Some(R::CommandNotFound)),
        ("exits", "failed", Some(R::ServerExited)),
        ("silent", "failed", Some(R::Timeout)),
        ("time", "connected", None),
    ];
    for release in ["2.1.197", "2.1.332"] {
        for (server, status, reason) in &expected {
            let got = said(release, server);
            assert!(!got.is_empty(), "{release} {server}: nothing said");
            // Every line that says something says the same.
            for (s, r) in &got {
                assert_eq!(
                    (s.as_str(), r),
                    (*status, reason),
                    "{release} {server}: {got:?}"
                );
            }
        }
    }
}
