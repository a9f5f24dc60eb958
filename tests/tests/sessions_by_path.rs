//! `tether sessions show PATH` and `tether sessions import PATH`: any
//! session file, by path, its harness told from its content.
//!
//! - GIVEN what the newest Claude Code printed headless (a real run's
//!   stream-json, its payloads cut) WHEN it is shown by path THEN the time
//!   server was used, the broken one failed, and its SessionStart hook ran.
//! - GIVEN each harness's recorded session files WHEN each is shown by path
//!   THEN it reads as its own harness's, the same session as found at home.
//! - GIVEN paths that are no session (empty, binary, a directory, a FIFO,
//!   a sparse 2 GiB file, nothing at all) WHEN shown THEN each exits 2 with
//!   a sentence, at once.
//! - GIVEN a record several harnesses' files share WHEN shown THEN it exits
//!   2 naming the candidates, and `--harness` reads it.

use std::time::{Duration, Instant};

use serde_json::Value;

use tether_tests::by_path::{self, fixtures, history_json, row, sessions, show_json};

#[test]
fn a_headless_runs_stream_json_shows_what_the_session_got() {
    let home = tempfile::tempdir().expect("home");
    let doc = show_json(
        home.path(),
        &fixtures().join("records-by-path/claude-2.1.332-stream.jsonl"),
    );
    assert_eq!(doc["session"]["agent_kind"], "claude");
    assert_eq!(doc["session"]["agent_version"], "2.1.332");
    let time = row(&doc, "time/get_current_time");
    assert_eq!(time["calls"], 1, "{time:#}");
    assert_eq!(row(&doc, "time")["status"], "active");
    assert_eq!(row(&doc, "broken")["status"], "failed");
    // The hook that succeeded in silence, which the transcript never keeps.
    let hook = row(&doc, "SessionStart:startup");
    assert_eq!(hook["kind"], "hook");
    assert!(
        hook["stopped"]
            .as_str()
            .unwrap_or("")
            .contains("1 succeeded"),
        "{hook:#}"
    );
    // Its file is named by its folder and name, never its whole path.
    let file = &doc["files"][0];
    assert_eq!(
        file["path"], "./records-by-path/claude-2.1.332-stream.jsonl",
        "{file:#}"
    );
    assert_eq!(file["role"], "stream_json");
}

#[test]
fn each_harness_s_file_by_path_reads_as_its_own() {
    let home = tempfile::tempdir().expect("home");
    let records = fixtures().join("records");
    for (kind, file, session) in [
        (
            "claude",
            "claude/.claude/projects/-tmp--tmpf23dO3/2d8efbcf-e501-440d-89ec-66cb10f9d678.jsonl",
            "claude:2d8efbcf-e501-440d-89ec-66cb10f9d678",
        ),
        (
            "codex",
            "codex/.codex/sessions/2026/12/01/rollout-2026-12-01T20-53-20-01a23362-295f-7aa3-9d3e-760a6303e6f9.jsonl",
            "codex:01a23362-295f-7aa3-9d3e-760a6303e6f9",
        ),
        (
            "gemini",
            "gemini/.gemini/tmp/tmpghna9p/chats/session-2026-12-01T20-53-eb274e49.jsonl",
            "gemini:eb274e49-51db-47dc-869c-14dfc1d0198a",
        ),
        (
            "qwen",
            "qwen/.qwen/projects/-tmp--tmp7BE47Z/chats/74391d8c-0caf-49a2-8af0-7e2863992973.jsonl",
            "qwen:74391d8c-0caf-49a2-8af0-7e2863992973",
        ),
        (
            "copilot",
            "copilot/.copilot/session-state/f5255165-4914-4249-b144-ce1f9103d34d/events.jsonl",
            "copilot:f5255165-4914-4249-b144-ce1f9103d34d",
        ),
    ] {
        let doc = show_json(home.path(), &records.join(file));
        assert_eq!(doc["session"]["agent_kind"], kind, "{file}");
        assert_eq!(doc["session"]["session_id"], session, "{file}");
        assert_eq!(
            row(&doc, "time/get_current_time")["calls"],
            1,
            "{kind}: time's call"
        );
    }
}

/// GIVEN each harness's session file given by a symbolic link of another
/// name, in another folder WHEN shown by path THEN it reads as the file it
/// points to (issue 68: it said "the file names no session its harness's
/// reader can place").
#[test]
fn a_session_file_given_by_a_symbolic_link_reads_as_the_file_it_points_to() {
    let home = tempfile::tempdir().expect("home");
    let links = tempfile::tempdir().expect("links");
    let records = fixtures().join("records");
    for (file, session) in [
        (
            "claude/.claude/projects/-tmp--tmpf23dO3/2d8efbcf-e501-440d-89ec-66cb10f9d678.jsonl",
            "claude:2d8efbcf-e501-440d-89ec-66cb10f9d678",
        ),
        (
            "codex/.codex/sessions/2026/12/01/rollout-2026-12-01T20-53-20-01a23362-295f-7aa3-9d3e-760a6303e6f9.jsonl",
            "codex:01a23362-295f-7aa3-9d3e-760a6303e6f9",
        ),
        (
            "gemini/.gemini/tmp/tmpghna9p/chats/session-2026-12-01T20-53-eb274e49.jsonl",
            "gemini:eb274e49-51db-47dc-869c-14dfc1d0198a",
        ),
        (
            "copilot/.copilot/session-state/f5255165-4914-4249-b144-ce1f9103d34d/events.jsonl",
            "copilot:f5255165-4914-4249-b144-ce1f9103d34d",
        ),
    ] {
        let link = links
            .path()
            .join(format!("{}.jsonl", session.replace(':', "-")));
        std::os::unix::fs::symlink(records.join(file), &link).expect("link");
        let doc = show_json(home.path(), &link);
        assert_eq!(doc["session"]["session_id"], session, "{file}");
        assert_eq!(
            row(&doc, "time/get_current_time")["calls"],
            1,
            "{session}: time's call, by the link"
        );
    }
}

/// GIVEN a Codex rollout with a line cut short, a line that is not JSON
/// and a known kind with a field of the wrong type WHEN shown by path THEN
/// the file says each line's number and why, never its content, and none
/// is counted as a kind this Tether does not read (version drift).
#[test]
fn every_line_is_accounted_for_and_an_unparsed_one_says_where_and_why() {
    let home = tempfile::tempdir().expect("home");
    let dir = tempfile::tempdir().expect("dir");
    let real = fixtures().join(
        "records/codex/.codex/sessions/2026/12/01/rollout-2026-12-01T20-53-20-01a23362-295f-7aa3-9d3e-760a6303e6f9.jsonl",
    );
    let mut text = std::fs::read_to_string(&real).expect("fixture");
    let lines = text.lines().count() as u64;
    text.push_str("{\"timestamp\":\"2026-12-01T20:53:30.000Z\",\"type\":\"event_msg\",\"payload\":{\"type\":\"mcp_tool_call_end\",\"call_id\":\"c9\",\"invocation\":{\"server\":\"time\",\"tool\":5}}}\n");
    text.push_str("SECRET-NOT-JSON sk-live-0123456789abcdef\n");
    text.push_str("{\"timestamp\":\"2026-12-01T20:53:31.000Z\",\"type\":\"response_item\",\"payload\":{\"type\":\"function_call\",\"name\":\"mcp__time__get");
    let file = dir.path().join("rollout-cut.jsonl");
    std::fs::write(&file, &text).expect("write");
    let doc = show_json(home.path(), &file);
    let f = &doc["files"][0];
    assert_eq!(f["unparsed"], 3, "{f:#}");
    let said: Vec<(u64, &str, Option<&str>)> = f["unparsed_lines"]
        .as_array()
        .expect("lines")
        .iter()
        .map(|u| {
            (
                u["line"].as_u64().unwrap_or(0),
                u["why"].as_str().unwrap_or(""),
                u["kind"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        said,
        [
            (lines + 1, "wrong_type", Some("event_msg/mcp_tool_call_end")),
            (lines + 2, "not_json", None),
            (lines + 3, "cut_short", None),
        ]
    );
    assert_eq!(f["unknown"], 0, "{f:#}");
    assert!(!f.to_string().contains("SECRET-NOT-JSON"));
    // The text view says where and why, and never "a kind this Tether does
    // not read" for them.
    let (code, out, _) = sessions(home.path(), &["show", file.to_str().expect("utf-8")]);
    assert_eq!(code, 0);
    assert!(out.contains("3 line(s) could not be parsed"), "{out}");
    assert!(
        out.contains("a field of the wrong type (event_msg/mcp_tool_call_end)"),
        "{out}"
    );
    assert!(!out.contains("does not read"), "{out}");
    assert!(!out.contains("SECRET-NOT-JSON"), "{out}");
}

#[test]
fn paths_that_are_no_session_exit_2_at_once() {
    let home = tempfile::tempdir().expect("home");
    let dir = tempfile::tempdir().expect("dir");
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").expect("w");
    let binary = dir.path().join("image.png");
    std::fs::write(&binary, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0planted").expect("w");
    let prose = dir.path().join("notes.txt");
    std::fs::write(&prose, "just some notes\nnothing a harness wrote\n").expect("w");
    let huge = dir.path().join("huge.jsonl");
    std::fs::File::create(&huge)
        .expect("huge")
        .set_len(2 << 30)
        .expect("sparse");
    let fifo = dir.path().join("fifo.jsonl");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    let mut cases = vec![
        (empty, "empty"),
        (binary, "binary"),
        (prose, "no harness's reader knows"),
        (huge, "larger than"),
        (dir.path().to_path_buf(), "a directory"),
        (dir.path().join("gone.jsonl"), "cannot read it"),
    ];
    if made {
        cases.push((fifo, "FIFO"));
    }
    for (path, says) in cases {
        let started = Instant::now();
        let (code, stdout, stderr) = sessions(home.path(), &["show", &path.display().to_string()]);
        assert_eq!(code, 2, "{}: {stderr}", path.display());
        assert!(stdout.is_empty(), "{stdout}");
        assert!(stderr.contains(says), "{}: {stderr}", path.display());
        assert!(!stderr.contains("planted"), "{stderr}");
        // Bounded: nothing is waited on (a FIFO is never opened).
        assert!(started.elapsed() < Duration::from_secs(30));
    }
}

#[test]
fn a_file_several_harnesses_could_have_written_names_them_and_harness_reads_it() {
    let home = tempfile::tempdir().expect("home");
    let dir = tempfile::tempdir().expect("dir");
    // A line Claude Code's, Gemini CLI's and Qwen Code's records share.
    let shared = dir.path().join("shared.jsonl");
    std::fs::write(
        &shared,
        "{\"type\":\"user\",\"sessionId\":\"0b7e6d2c-1111-4222-8333-944455556666\",\"timestamp\":\"2026-12-01T10:00:00Z\"}\n",
    )
    .expect("w");
    let path = shared.display().to_string();
    let (code, _, stderr) = sessions(home.path(), &["show", &path]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--harness") && stderr.contains("claude"),
        "{stderr}"
    );
    let (code, stdout, stderr) = sessions(
        home.path(),
        &["show", &path, "--harness", "claude", "--json"],
    );
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).expect("a document");
    assert_eq!(doc["session"]["agent_kind"], "claude");
    let (code, _, stderr) = sessions(home.path(), &["show", &path, "--harness", "nosuch"]);
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn a_file_by_path_imports_into_a_store() {
    let home = tempfile::tempdir().expect("home");
    let db = home.path().join("t.db");
    let file = fixtures().join("records-by-path/claude-2.1.332-stream.jsonl");
    by_path::assert_imported_once(home.path(), &file, &db);
    let text = history_json(home.path(), &db);
    assert!(
        text.contains("09ca82f4-e8d9-4de2-bf5c-c2fbdd4cc325"),
        "{text}"
    );
}

/// GIVEN a Claude Code 2.1.332 session whose `big` server's 29 tools all
/// stand behind the tool search, and whose `time` server has 2 WHEN it is
/// shown THEN big's tools are one line ("29 tools: all deferred…"), each
/// deferred tool is delivered (never active), its server says none was
/// loaded; `--tools` lists all 29.
#[test]
fn many_tools_at_one_state_read_at_a_glance() {
    let home = tempfile::tempdir().expect("home");
    let head = r#""sessionId":"5e0d1c2b-3a49-4f58-8e67-9d0c1b2a3f4e","timestamp":"2026-12-02T09:00:00.000Z","version":"2.1.332","cwd":"/tmp/w""#;
    let big: Vec<String> = (0..29).map(|i| format!("\"mcp__big__t{i:02}\"")).collect();
    let file = home.path().join("s.jsonl");
    std::fs::write(
        &file,
        format!(
            "{{\"type\":\"attachment\",{head},\"attachment\":{{\"type\":\"deferred_tools_delta\",\"addedNames\":[{}],\"removedNames\":[]}}}}\n\
             {{\"type\":\"attachment\",{head},\"attachment\":{{\"type\":\"deferred_tools_delta\",\"addedNames\":[\"mcp__time__get_current_time\",\"mcp__time__convert_time\"],\"removedNames\":[]}}}}\n",
            big.join(",")
        ),
    )
    .expect("w");
    let path = file.display().to_string();
    let (code, text, stderr) = sessions(home.path(), &["show", &path]);
    assert_eq!(code, 0, "{stderr}");
    let line = |needle: &str| {
        text.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no {needle:?} in {text}"))
            .to_owned()
    };
    assert!(line("big/*").contains("29 tools: all deferred"), "{text}");
    assert!(line("big/*").contains("delivered"), "{text}");
    assert!(!text.contains("big/t07"), "{text}");
    assert!(
        line("mcp_server  big").contains("held behind the tool search; none loaded"),
        "{text}"
    );
    // Two tools are said each.
    assert!(text.contains("time/convert_time") && text.contains("time/get_current_time"));
    let (code, each, _) = sessions(home.path(), &["show", &path, "--tools"]);
    assert_eq!(code, 0);
    assert_eq!(
        each.lines().filter(|l| l.contains("big/t")).count(),
        29,
        "{each}"
    );
    let doc = show_json(home.path(), &file);
    for row in doc["rows"].as_array().expect("rows") {
        if row["kind"] == "mcp_tool" {
            assert_eq!(row["status"], "delivered", "{row:#}");
        }
    }
}

/// GIVEN a saved stream-json, whose lines carry no time WHEN it is shown
/// as JSON THEN no stage says it happened at 0: a stage's time is its
/// evidence's, or absent.
#[test]
fn no_stage_happened_at_time_zero() {
    let home = tempfile::tempdir().expect("home");
    let doc = show_json(
        home.path(),
        &fixtures().join("records-by-path/claude-2.1.332-stream.jsonl"),
    );
    // Every stage observation (an object with a `state`), wherever it is.
    fn stages_at_zero(v: &Value, found: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                if map.contains_key("state") && map.get("at") == Some(&Value::from(0)) {
                    found.push(v.to_string());
                }
                map.values().for_each(|x| stages_at_zero(x, found));
            }
            Value::Array(items) => items.iter().for_each(|x| stages_at_zero(x, found)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    stages_at_zero(&doc, &mut found);
    assert!(found.is_empty(), "{found:#?}");
}

/// GIVEN a session file holding a record of a kind that bears on MCP
/// calls and is not read (a Codex rollout's `exec_approval_request`) WHEN
/// it is shown
/// THEN the record is said, by its kind, as `tether sessions list` says it:
/// counted, never dropped in silence.
#[test]
fn a_record_not_read_is_said_by_show_too() {
    let home = tempfile::tempdir().expect("home");
    // (Claude Code's stream-json has no kind left unread since its
    // `permission_denied` is read: a Codex rollout's approval request is.)
    let mut text =
        std::fs::read_to_string(fixtures().join("refusals/codex-0.171.0-noapproval.rollout.jsonl"))
            .expect("fixture");
    text.push_str(
        "{\"timestamp\":\"2026-12-03T16:35:47.400Z\",\"type\":\"event_msg\",\"payload\":{\"type\":\"exec_approval_request\",\"call_id\":\"c9\"}}\n",
    );
    let file = home.path().join("rollout-x.jsonl");
    std::fs::write(&file, text).expect("w");
    let (code, stdout, stderr) = sessions(home.path(), &["show", &file.display().to_string()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("of a kind this Tether does not read")
            && stdout.contains("exec_approval_request"),
        "{stdout}"
    );
}
