//! Older Gemini CLI and Qwen Code releases' session files, as users' disks
//! still hold them, read as `tether sessions` reads them.
//!
//! - GIVEN the chat documents real Gemini CLI 0.10.0 and 0.30.0 runs wrote
//!   (`~/.gemini/tmp/<hash>/chats/session-*.json`, one JSON document; its
//!   tools named without `mcp_`, its displayName `TOOL (SERVER MCP
//!   Server)`), against the fake model and a server that counts its calls
//!   WHEN it is read from a home and shown by path THEN the server is a row
//!   and each tool row says what happened: `stamp` a use, `fail` a call that
//!   failed.
//! - GIVEN the chat a real Qwen Code 0.5.2 run wrote (`~/.qwen/projects/
//!   <slug>/chats/<session>.jsonl`, its MCP tools named bare, so only its
//!   `ui_telemetry` records name their server) WHEN it is read THEN the
//!   calls are the server's, with their outcomes, and the session says it
//!   is 0.5.2, older than its reader was verified on.
//! - GIVEN what Qwen Code 0.5.2 printed as stream-json WHEN shown by path
//!   THEN its server is a row, no call failed, and it says it is older
//!   than its reader was verified on. (Gemini 0.30.0's stream-json,
//!   `stream-*.jsonl`, names its MCP tools bare with no version: kept as
//!   evidence of the shape; the census says it is not read.)
//! - `record_old_fixtures` (ignored) runs the old CLIs again, from
//!   `TETHER_OLD_GEMINI` (0.10.0), `TETHER_OLD_GEMINI30` (0.30.0) and
//!   `TETHER_OLD_QWEN` (0.5.2) (each an `npm install
//!   --prefix` directory, never tests/peers), and rewrites the fixtures:
//!   `cargo test -p tether-tests --test gemini_old_shapes -- --ignored`.

use std::path::{Path, PathBuf};

use serde_json::Value;

fn releases() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/records-releases")
}

// ------------------------------------------------------------ the recorder

/// The counting server's tools: `stamp` answers `ok`, `fail` `isError`.
const TOOLS: &str = r#"[{"name":"stamp","description":"t","inputSchema":{"type":"object","properties":{}}},
 {"name":"fail","description":"t","inputSchema":{"type":"object","properties":{}}}]"#;

/// Every file under `dir` whose path holds `/chats/`.
fn chat_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().contains("/chats/") {
                found.push(p);
            }
        }
    }
    found
}

/// Runs `cli` (an old release installed under `prefix`) once per tool in
/// one home, and copies the chat files it wrote into the fixture `name`,
/// a home of its own; with `stream`, what each run printed with
/// `--output-format stream-json` beside them, as `stream-TOOL.jsonl`.
async fn record(cli: &str, prefix: &Path, name: &str, stream: bool) {
    let bin = prefix.join(format!("node_modules/.bin/{cli}"));
    assert!(bin.exists(), "{}: not installed", bin.display());
    let server = tether_tests::workspace_bin("tether-pinned-mcp");
    let home = tempfile::tempdir().expect("home");
    let home = home.path();
    let tools = home.join("tools.json");
    std::fs::write(&tools, TOOLS).expect("tools");
    let log = home.join("calls.log");
    let dir = home.join(format!(".{cli}"));
    std::fs::create_dir_all(&dir).expect("dir");
    let mut config = if cli == "gemini" {
        serde_json::json!({"security": {"auth": {"selectedType": "gemini-api-key"}}})
    } else {
        serde_json::json!({"security": {"auth": {"selectedType": "openai"}}, "model": {"name": "gpt-4o"}})
    };
    config["mcpServers"] = serde_json::json!({"count": {
        "command": server, "args": ["--tools", tools], "env": {"TETHER_CALL_LOG": log}
    }});
    std::fs::write(dir.join("settings.json"), config.to_string()).expect("settings");
    let mut printed = Vec::new();
    for tool in ["stamp", "fail"] {
        let (model, _sent) = tether_tests::fake_model::start_model(&format!("count/{tool}")).await;
        let mut cmd = std::process::Command::new(&bin);
        cmd.current_dir(home)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", home);
        if cli == "gemini" {
            cmd.args(["-m", "gemini-2.5-pro"])
                .env("GEMINI_API_KEY", "dummy")
                .env("GOOGLE_GEMINI_BASE_URL", model.base());
        } else {
            cmd.env("OPENAI_API_KEY", "dummy")
                .env("OPENAI_BASE_URL", format!("{}/v1", model.base()))
                .env("OPENAI_MODEL", "gpt-4o");
        }
        cmd.args(["-p", "what time is it", "--approval-mode", "yolo"]);
        if stream {
            cmd.args(["--output-format", "stream-json"]);
        }
        let out = tether_tests::output_within(cmd, 180);
        assert!(
            out.status.success(),
            "{name} {tool}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        printed.push((tool, out.stdout));
    }
    let received = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(
        received.lines().collect::<Vec<_>>(),
        ["stamp", "fail"],
        "{name}: the server's calls"
    );
    let fixture = releases().join(name);
    let _ = std::fs::remove_dir_all(&fixture);
    for chat in chat_files(&dir) {
        let relative = chat.strip_prefix(home).expect("in the home");
        let to = fixture.join(relative);
        std::fs::create_dir_all(to.parent().expect("parent")).expect("dir");
        std::fs::copy(&chat, &to).expect("copy");
    }
    for (tool, out) in printed.iter().filter(|_| stream) {
        std::fs::write(fixture.join(format!("stream-{tool}.jsonl")), out).expect("write");
    }
}

/// Runs the old releases for real and rewrites their fixtures.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "runs old CLIs installed outside tests/peers and rewrites the fixtures"]
async fn record_old_fixtures() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    for (cli, var, name, stream) in [
        (
            "gemini",
            "TETHER_OLD_GEMINI",
            "gemini-0.10.0-headless",
            false,
        ),
        (
            "gemini",
            "TETHER_OLD_GEMINI30",
            "gemini-0.30.0-headless",
            true,
        ),
        ("qwen", "TETHER_OLD_QWEN", "qwen-0.5.2-headless", true),
    ] {
        match std::env::var_os(var) {
            Some(prefix) => record(cli, Path::new(&prefix), name, stream).await,
            None => eprintln!("SKIP: {var} names no old {cli} install"),
        }
    }
}

// ------------------------------------------------------------ the readings

/// `tether sessions show PATH --json` in an empty home.
fn show_json(path: &Path) -> Value {
    let home = tempfile::tempdir().expect("home");
    let out = tether_tests::tether_at_home(home.path())
        .args(["sessions", "show", &path.display().to_string(), "--json"])
        .output()
        .expect("tether runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&String::from_utf8_lossy(&out.stdout)).expect("one document")
}

/// `tether sessions ARGS` in `home`, its output.
fn sessions_at(home: &Path, args: &[&str]) -> String {
    let out = tether_tests::tether_at_home(home)
        .arg("sessions")
        .args(args)
        .output()
        .expect("tether runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("dir").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).expect("dir");
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// What a tool row says: (calls, failed, refused, where it stopped).
fn said(doc: &Value, name: &str) -> (u64, u64, u64, String) {
    let row = doc["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no row {name} in {doc:#}"));
    let n = |k: &str| row[k].as_u64().unwrap_or(0);
    (
        n("calls"),
        n("failed_calls"),
        n("refused_calls"),
        row["stopped"].as_str().unwrap_or_default().to_owned(),
    )
}

/// The fixtures of real runs of older releases.
const FIXTURES: [&str; 3] = [
    "gemini-0.10.0-headless",
    "gemini-0.30.0-headless",
    "qwen-0.5.2-headless",
];

/// Each chat file of a fixture, with the one tool its run called.
fn chats(fixture: &str) -> Vec<(PathBuf, &'static str)> {
    let mut out: Vec<(PathBuf, &'static str)> = chat_files(&releases().join(fixture))
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("chat");
            let tool = if text.contains("\"fail\"") {
                "fail"
            } else {
                "stamp"
            };
            (p, tool)
        })
        .collect();
    out.sort();
    assert_eq!(out.len(), 2, "{fixture}: one chat per tool");
    out
}

/// How each tool's row must read: `stamp` a use, `fail` a call that
/// failed with `tool_error`; neither refused.
fn assert_tool(label: &str, doc: &Value, tool: &str) {
    assert_eq!(
        doc["session"]["agent_kind"],
        label.split('-').next().unwrap_or_default()
    );
    let (calls, failed, refused, stopped) = said(doc, &format!("count/{tool}"));
    match tool {
        "stamp" => assert_eq!((calls, failed, refused), (1, 0, 0), "{label}: {doc:#}"),
        _ => {
            assert_eq!((calls, failed, refused), (1, 1, 0), "{label}: {doc:#}");
            assert!(stopped.contains("tool error"), "{label}: {doc:#}");
        }
    }
}

/// GIVEN each old release's real chat files WHEN shown by path THEN each is
/// its harness's session, with the server's tool row as the run went.
#[test]
fn old_chats_read_by_path() {
    for fixture in FIXTURES {
        for (chat, tool) in chats(fixture) {
            let doc = show_json(&chat);
            assert_tool(fixture, &doc, tool);
        }
    }
}

/// GIVEN a home holding an old release's chats WHEN `tether sessions` reads
/// it THEN both sessions are listed and each shows its tool's row; Qwen
/// 0.5.2's session says its version is older than its reader was verified
/// on, so what it does not show is never read as absent.
#[test]
fn old_chats_read_from_a_home() {
    for fixture in FIXTURES {
        let home = tempfile::tempdir().expect("home");
        copy_dir(&releases().join(fixture), home.path());
        for (chat, tool) in chats(fixture) {
            let text = std::fs::read_to_string(&chat).expect("chat");
            let session = text
                .split("\"sessionId\":")
                .nth(1)
                .and_then(|s| s.split('"').nth(1))
                .expect("a session id")
                .to_owned();
            let doc: Value =
                serde_json::from_str(&sessions_at(home.path(), &["show", &session, "--json"]))
                    .expect("one document");
            assert_tool(fixture, &doc, tool);
            let words = sessions_at(home.path(), &["show", &session]);
            if fixture.starts_with("qwen") {
                assert!(
                    words.contains("this file is 0.5.2, older"),
                    "{fixture}: {words}"
                );
            }
        }
    }
}

/// GIVEN what Qwen Code 0.5.2 printed with `--output-format stream-json`
/// (its MCP tools named bare in `init.tools` and `tool_use`) WHEN shown by
/// path THEN the server its init says connected is a row, no call is said
/// to have failed, and the session says it is 0.5.2, older than its reader
/// was verified on: the calls it cannot attribute are not read as none.
#[test]
fn an_old_qwen_stream_says_its_version() {
    for tool in ["stamp", "fail"] {
        let path = releases().join(format!("qwen-0.5.2-headless/stream-{tool}.jsonl"));
        let doc = show_json(&path);
        assert_eq!(doc["session"]["agent_kind"], "qwen", "{doc:#}");
        assert_eq!(doc["session"]["agent_version"], "0.5.2", "{doc:#}");
        let rows = doc["rows"].as_array().expect("rows");
        assert!(rows.iter().any(|r| r["name"] == "count"), "{doc:#}");
        assert!(
            rows.iter()
                .all(|r| r["failed_calls"].as_u64().unwrap_or(0) == 0),
            "{doc:#}"
        );
        let home = tempfile::tempdir().expect("home");
        let words = sessions_at(home.path(), &["show", &path.display().to_string()]);
        assert!(words.contains("this file is 0.5.2, older"), "{words}");
    }
}
