//! Codex's older record shapes (issue 56: "older Codex … shapes. An
//! unknown outcome is never a failure."), shown by path with
//! `tether sessions show PATH`.
//!
//! The six rollouts under `tests/fixtures/records-real/codex-0.104.0-*`
//! are real Codex Desktop 0.104.0-alpha.1 rollouts of a third party
//! (github.com/madshn/localpush, `src-tauri/tests/fixtures/codex/…` @
//! 219b5397), neutralised: keys, ids, times and the names of tools and
//! servers kept, every text replaced, and cut to the first few lines of
//! each kind plus every MCP call and its output. The legacy lines below
//! are built from Codex's own code of its first Rust releases (the
//! rollout writer's unwrapped lines and `fully_qualified_tool_name`; see
//! `plugins/passthrough-codex/src/records.rs`), not from a run.
//!
//! - GIVEN each real 0.104.0-alpha.1 rollout WHEN shown THEN no line is
//!   unknown (its `reasoning` lines hold `"content": null`), no "does not
//!   read" note is printed, and the note says the reader is verified on
//!   0.118.0–0.171.0 and the file is 0.104.0-alpha.1; the two that called
//!   MCP tools show those servers and tools, each call's outcome unknown.
//! - GIVEN a legacy rollout WHEN shown with `time` configured THEN
//!   `time__OAI_CODEX_MCP__get_current_time` and `time__convert_time` are
//!   `time`'s calls, `other__tool` (no configured server) and `shell` are
//!   none; WHEN shown with nothing configured THEN only the first is.
//! - GIVEN a `function_call` with `namespace` `mcp__time__` WHEN shown
//!   THEN it is `time`'s, never a server `time__`.
//! - GIVEN a legacy rollout whose free text, arguments and output carry a
//!   planted secret WHEN shown THEN the secret is in no output.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tether_tests::by_path;

/// An MCP tool (`SERVER/TOOL`) and its calls.
type Calls = &'static [(&'static str, u64)];

/// The six real rollouts: (fixture, session id, MCP tools and calls).
const REAL: &[(&str, &str, Calls)] = &[
    ("019c8a4c-ed82", "019c8a4c-ed82-79a1-aa28-7738fc5ab61a", &[]),
    ("019c8a4d-8f45", "019c8a4d-8f45-7010-8b5d-7fad920aa6f9", &[]),
    ("019c8a53-a0dd", "019c8a53-a0dd-7130-bcd7-95445d84846a", &[]),
    (
        "019c8a59-e9dd",
        "019c8a59-e9dd-71f0-9ae3-4079fe9726a9",
        &[
            ("n8n-mcp/n8n_health_check", 1),
            ("associates-tools/List_Budgets", 1),
            ("supabase_right_aim_ops/execute_sql", 22),
            ("supabase_right_aim_ops/list_tables", 1),
        ],
    ),
    ("019c8a70-dda7", "019c8a70-dda7-7f33-98ea-f30553347322", &[]),
    (
        "019c8bfe-ec25",
        "019c8bfe-ec25-79e0-97d7-bda6a9c575ff",
        &[
            ("cloud-associates/execute_workflow", 3),
            ("cloud-associates/search_workflows", 1),
        ],
    ),
];

fn real(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/records-real")
        .join(format!("codex-0.104.0-alpha.1-{name}.jsonl"))
}

/// `tether sessions show PATH [--json]` in `home`: (stdout, stderr).
fn show(home: &Path, path: &Path, json: bool) -> (String, String) {
    let arg = path.display().to_string();
    let mut args = vec!["show", arg.as_str()];
    if json {
        args.push("--json");
    }
    let (code, stdout, stderr) = by_path::sessions(home, &args);
    assert_eq!(code, 0, "{}: {stdout}{stderr}", path.display());
    (stdout, stderr)
}

fn show_json(home: &Path, path: &Path) -> Value {
    serde_json::from_str(&show(home, path, true).0).expect("one document")
}

/// Each row's (kind, name, calls, unknown calls, failed calls).
fn rows(doc: &Value) -> Vec<(String, String, u64, u64, u64)> {
    let n = |r: &Value, k: &str| r[k].as_u64().unwrap_or(0);
    doc["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            (
                r["kind"].as_str().unwrap_or_default().to_owned(),
                r["name"].as_str().unwrap_or_default().to_owned(),
                n(r, "calls"),
                n(r, "unknown_calls"),
                n(r, "failed_calls"),
            )
        })
        .collect()
}

fn file_unknown(doc: &Value) -> u64 {
    doc["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["unknown"].as_u64().expect("unknown"))
        .sum()
}

#[test]
fn real_0_104_rollouts_read_known_and_say_their_version_is_older() {
    let home = tempfile::tempdir().expect("home");
    for (name, session, tools) in REAL {
        let path = real(name);
        let doc = show_json(home.path(), &path);
        assert_eq!(file_unknown(&doc), 0, "{name}: {doc:#}");
        assert_eq!(
            doc["session"]["harness_session"], *session,
            "{name}: {doc:#}"
        );
        assert_eq!(doc["session"]["agent_version"], "0.104.0-alpha.1");
        let rows = rows(&doc);
        let mcp_tools: Vec<_> = rows.iter().filter(|r| r.0 == "mcp_tool").collect();
        assert_eq!(mcp_tools.len(), tools.len(), "{name}: {rows:?}");
        for (tool, calls) in *tools {
            let row = mcp_tools
                .iter()
                .find(|r| r.1 == *tool)
                .unwrap_or_else(|| panic!("{name}: no {tool} in {rows:?}"));
            // No end events in 0.104's rollouts: counted, outcome unknown,
            // never a failure.
            assert_eq!((row.2, row.3, row.4), (*calls, *calls, 0), "{name}: {tool}");
        }
        let (text, _) = show(home.path(), &path, false);
        assert!(!text.contains("does not read"), "{name}: {text}");
        assert!(
            text.lines()
                .any(|l| l.starts_with("? codex 0.104.0-alpha.1: ")
                    && l.contains("verified on 0.118.0–0.171.0; this file is 0.104.0-alpha.1")),
            "{name}: {text}"
        );
    }
}

/// A reasoning line exactly as 0.104.0-alpha.1 wrote it (text neutral).
#[test]
fn a_reasoning_line_with_null_content_is_known() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("rollout-2026-02-23T12-19-38-x.jsonl");
    std::fs::write(
        &path,
        concat!(
            r#"{"timestamp":"2026-02-23T12:19:42.561Z","type":"session_meta","payload":{"id":"019c8a70-dda7-7f33-98ea-f30553347322","timestamp":"2026-02-23T12:19:38.535Z","cwd":"/home/user/project","originator":"Codex Desktop","cli_version":"0.104.0-alpha.1","source":"vscode","model_provider":"openai"}}"#,
            "\n",
            r#"{"timestamp":"2026-02-23T12:19:52.689Z","type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"neutral text"}],"content":null,"encrypted_content":"neutral text"}}"#,
            "\n",
        ),
    )
    .expect("write");
    let doc = show_json(dir.path(), &path);
    assert_eq!(file_unknown(&doc), 0, "{doc:#}");
    assert_eq!(doc["files"][0]["records"], 2, "{doc:#}");
}

const SECRET: &str = "sk-planted-0ld-c0dex-5ecret";

/// A legacy rollout: Codex's first Rust releases wrote the session line
/// (`SessionMetaWithGit`) and then each response item on its own line.
fn legacy_rollout(secret: &str) -> String {
    [
        format!(
            r#"{{"id":"5973b6c0-94b8-487b-a530-2aeb6098ae0e","timestamp":"2025-05-07T17:24:21.123Z","instructions":"{secret}","git":{{"commit_hash":"0000000000000000000000000000000000000000","branch":"{secret}"}}}}"#
        ),
        format!(
            r#"{{"type":"message","role":"user","content":[{{"type":"input_text","text":"{secret}"}}]}}"#
        ),
        r#"{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":null}"#.to_owned(),
        format!(
            r#"{{"type":"function_call","name":"time__OAI_CODEX_MCP__get_current_time","arguments":"{{\"tz\":\"{secret}\"}}","call_id":"call_1"}}"#
        ),
        format!(r#"{{"type":"function_call_output","call_id":"call_1","output":"{secret}"}}"#),
        r#"{"type":"function_call","name":"time__convert_time","arguments":"{}","call_id":"call_2"}"#
            .to_owned(),
        r#"{"type":"function_call","name":"other__tool","arguments":"{}","call_id":"call_3"}"#
            .to_owned(),
        r#"{"type":"function_call","name":"shell","arguments":"{}","call_id":"call_4"}"#.to_owned(),
        r#"{"record_type":"state"}"#.to_owned(),
    ]
    .join("\n")
        + "\n"
}

fn configure_time(home: &Path) {
    let codex = home.join(".codex");
    std::fs::create_dir_all(&codex).expect("mkdir");
    std::fs::write(
        codex.join("config.toml"),
        "[mcp_servers.time]\ncommand = \"uvx\"\nargs = [\"mcp-server-time\"]\n",
    )
    .expect("config");
}

fn tool_calls(doc: &Value) -> Vec<(String, u64)> {
    let mut got: Vec<_> = rows(doc)
        .into_iter()
        .filter(|r| r.0 == "mcp_tool")
        .map(|r| (r.1, r.2))
        .collect();
    got.sort();
    got
}

#[test]
fn legacy_tool_names_split_only_where_certain() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("rollout-2025-05-07T17-24-21-legacy.jsonl");
    std::fs::write(&path, legacy_rollout("neutral text")).expect("write");

    let configured = tempfile::tempdir().expect("home");
    configure_time(configured.path());
    let doc = show_json(configured.path(), &path);
    assert_eq!(file_unknown(&doc), 0, "{doc:#}");
    assert_eq!(
        doc["session"]["harness_session"],
        "5973b6c0-94b8-487b-a530-2aeb6098ae0e"
    );
    assert_eq!(
        tool_calls(&doc),
        vec![
            ("time/convert_time".to_owned(), 1),
            ("time/get_current_time".to_owned(), 1)
        ],
        "{doc:#}"
    );
    assert!(
        rows(&doc).iter().all(|r| r.1 != "other" && r.1 != "shell"),
        "{doc:#}"
    );

    // Nothing configured: `time__convert_time` could be any split, so it
    // is not read; Codex's own first delimiter is certain.
    let bare = tempfile::tempdir().expect("home");
    let doc = show_json(bare.path(), &path);
    assert_eq!(
        tool_calls(&doc),
        vec![("time/get_current_time".to_owned(), 1)],
        "{doc:#}"
    );
}

#[test]
fn a_namespace_with_the_delimiter_left_on_is_its_server() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("rollout-2026-02-23T12-19-38-ns.jsonl");
    std::fs::write(
        &path,
        concat!(
            r#"{"timestamp":"2026-02-23T12:19:42.561Z","type":"session_meta","payload":{"id":"019c8a70-0000-7f33-98ea-f30553347322","cwd":"/home/user/project","cli_version":"0.142.5"}}"#,
            "\n",
            r#"{"timestamp":"2026-02-23T12:19:43.000Z","type":"response_item","payload":{"type":"function_call","namespace":"mcp__time__","name":"get_current_time","arguments":"{}","call_id":"call_1"}}"#,
            "\n",
        ),
    )
    .expect("write");
    let doc = show_json(dir.path(), &path);
    assert_eq!(
        tool_calls(&doc),
        vec![("time/get_current_time".to_owned(), 1)],
        "{doc:#}"
    );
    assert!(
        rows(&doc).iter().all(|r| !r.1.contains("time__")),
        "{doc:#}"
    );
}

#[test]
fn a_planted_secret_in_a_legacy_rollout_is_in_no_output() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("rollout-2025-05-07T17-24-21-planted.jsonl");
    std::fs::write(&path, legacy_rollout(SECRET)).expect("write");
    let home = tempfile::tempdir().expect("home");
    configure_time(home.path());
    for json in [false, true] {
        let (stdout, stderr) = show(home.path(), &path, json);
        assert!(
            !stdout.contains(SECRET) && !stderr.contains(SECRET),
            "{stdout}{stderr}"
        );
        assert!(stdout.contains("get_current_time"), "{stdout}");
    }
}
