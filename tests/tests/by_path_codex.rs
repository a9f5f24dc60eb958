//! `tether sessions show PATH` and `tether sessions import PATH` of what
//! `codex exec --json` printed (issue 56 §4), told apart from a rollout by
//! its content: real runs of Codex 0.171.0 against the fake model (the
//! refusal cases under `tests/fixtures/refusals`, and a run with a server
//! whose command does not exist under `tests/fixtures/records-by-path`),
//! each kept as exec's stdout and as its rollout.
//!
//! - GIVEN each run's exec output WHEN shown by path THEN it reads as
//!   Codex's `exec_json`, the run's session, and each tool's row says what
//!   happened: approved = used; no approval = refused `approval_required`,
//!   never a use; an isError = failed `tool_error`; a JSON-RPC error =
//!   failed `protocol_error`.
//! - GIVEN the same run's rollout WHEN shown THEN it reads as a rollout,
//!   and its rows say what the exec output's say.
//! - GIVEN exec output WHEN imported twice THEN one session, then
//!   unchanged.
//! - GIVEN exec output whose arguments, result and Codex's words carry a
//!   planted secret (a made-up file, and every real run's planted) WHEN
//!   shown and imported THEN the secret is in no output and not the store,
//!   and a real run's row reads as before.
//! - GIVEN every real run's exec output WHEN the conformance kit reads it
//!   THEN it passes, with no line unknown.
//! - GIVEN a real run now (the pinned Codex, skipped loudly where it is
//!   not installed) WHEN its stdout is shown THEN it reads as its rollout.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tether_tests::by_path::{
    self, assert_shown_and_imported_clean, assert_store_clean, find_row, history_json,
    planted_lines, row, show_json,
};

fn fixture(folder: &str, case: &str, kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(folder)
        .join(format!("codex-0.171.0-{case}.{kind}.jsonl"))
}

/// Each run: (folder, case, the tool the model called).
const RUNS: &[(&str, &str, &str)] = &[
    ("refusals", "approve", "get_current_time"),
    ("refusals", "noapproval", "get_current_time"),
    ("refusals", "toolerror", "erroring_tool"),
    ("refusals", "protoerror", "rpc_error_tool"),
    ("records-by-path", "broken", "get_current_time"),
];

/// The history's entry for `time`'s `tool`.
fn history_tool<'a>(doc: &'a Value, tool: &str) -> &'a Value {
    doc["history"]["attempts"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|a| a["servers"].as_array().into_iter().flatten())
        .filter(|s| s["name"] == "time")
        .flat_map(|s| s["tools"].as_array().into_iter().flatten())
        .find(|t| t["name"] == tool)
        .unwrap_or_else(|| panic!("no tool {tool} in {doc:#}"))
}

fn count(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or(0)
}

/// What a row says, without the times (exec output carries none).
fn said(row: &Value) -> Value {
    let mut row = row.clone();
    if let Some(stages) = row["stages"].as_object_mut() {
        for stage in stages.values_mut() {
            if let Some(stage) = stage.as_object_mut() {
                stage.remove("at");
            }
        }
    }
    row
}

#[test]
fn exec_output_by_path_says_how_each_call_ended() {
    let home = tempfile::tempdir().expect("home");
    for (folder, case, tool) in RUNS {
        let path = fixture(folder, case, "exec");
        let doc = show_json(home.path(), &path);
        assert_eq!(doc["session"]["agent_kind"], "codex", "{case}");
        // The thread exec started is the session its rollout names.
        let first = std::fs::read_to_string(&path).expect("fixture");
        let started: Value =
            serde_json::from_str(first.lines().next().expect("a line")).expect("json");
        assert_eq!(started["type"], "thread.started");
        assert_eq!(
            doc["session"]["session_id"],
            format!("codex:{}", started["thread_id"].as_str().expect("id")),
            "{case}"
        );
        let file = &doc["files"][0];
        assert_eq!(file["role"], "exec_json", "{case}: {file:#}");
        assert_eq!(file["unknown"], 0, "{case}: {file:#}");

        let name = format!("time/{tool}");
        let r = row(&doc, &name);
        let h = history_tool(&doc, tool);
        match *case {
            "approve" | "broken" => {
                assert_eq!(
                    (count(r, "calls"), count(r, "failed_calls")),
                    (1, 0),
                    "{r:#}"
                );
                assert_eq!(r["stages"]["callable"]["state"], "yes", "{case}: {r:#}");
            }
            "noapproval" => {
                assert_eq!(
                    (count(r, "calls"), count(r, "refused_calls")),
                    (0, 1),
                    "{r:#}"
                );
                assert_eq!(r["reason_code"], "approval_required", "{r:#}");
                assert_eq!(r["stages"]["callable"]["state"], "no", "{r:#}");
                assert_eq!(h["refusals"][0]["reason_code"], "approval_required");
            }
            "toolerror" | "protoerror" => {
                let reason = if *case == "toolerror" {
                    "tool_error"
                } else {
                    "protocol_error"
                };
                assert_eq!(
                    (count(r, "calls"), count(r, "failed_calls")),
                    (1, 1),
                    "{r:#}"
                );
                assert_eq!(count(r, "refused_calls"), 0, "{r:#}");
                assert_eq!(h["failures"], serde_json::json!([reason]), "{case}: {h:#}");
            }
            _ => unreachable!(),
        }
        // The server that never started is nowhere: exec printed nothing.
        assert!(
            doc["rows"]
                .as_array()
                .expect("rows")
                .iter()
                .all(|r| !r["name"].as_str().unwrap_or("").starts_with("broken")),
            "{case}"
        );
        // No stage happened at time zero: the lines carry no time.
        assert!(
            !doc["rows"].to_string().contains("\"at\":0"),
            "{case}: {:#}",
            doc["rows"]
        );
    }
}

#[test]
fn the_rollout_reads_as_a_rollout_and_says_the_same() {
    let home = tempfile::tempdir().expect("home");
    for (folder, case, tool) in RUNS {
        let exec = show_json(home.path(), &fixture(folder, case, "exec"));
        let rollout = show_json(home.path(), &fixture(folder, case, "rollout"));
        assert_eq!(rollout["files"][0]["role"], "rollout", "{case}");
        assert_eq!(rollout["session"]["agent_version"], "0.171.0", "{case}");
        assert_eq!(
            exec["session"]["session_id"], rollout["session"]["session_id"],
            "{case}"
        );
        for name in ["time".to_owned(), format!("time/{tool}")] {
            assert_eq!(
                said(row(&exec, &name)),
                said(row(&rollout, &name)),
                "{case}: {name}"
            );
        }
        assert_eq!(
            exec["rows"].as_array().map(Vec::len),
            rollout["rows"].as_array().map(Vec::len),
            "{case}"
        );
    }
}

#[test]
fn exec_output_by_path_imports_into_a_store() {
    let home = tempfile::tempdir().expect("home");
    let db = home.path().join("t.db");
    let file = fixture("refusals", "noapproval", "exec");
    by_path::assert_imported_once(home.path(), &file, &db);
    let text = history_json(home.path(), &db);
    assert!(
        text.contains("codex:01a23cc3-1370-7752-80f6-3a4f8b736fc9"),
        "{text}"
    );
    assert!(text.contains("approval_required"), "{text}");
}

#[test]
fn no_argument_result_or_codex_s_words_reach_any_output() {
    const SECRET: &str = "PLANTED-SECRET-3x3c";
    let home = tempfile::tempdir().expect("home");
    let file = home.path().join("exec.jsonl");
    let item = |id: &str, tool: &str, end: &str| {
        format!(
            r#"{{"type":"item.completed","item":{{"id":"{id}","type":"mcp_tool_call","server":"time","tool":"{tool}","arguments":{{"timezone":"{SECRET}"}},{end}}}}}"#
        )
    };
    let lines = [
        r#"{"type":"thread.started","thread_id":"01a23cc3-0000-7000-8000-00000000beef"}"#
            .to_owned(),
        item(
            "item_1",
            "get_current_time",
            &format!(
                r#""result":null,"error":{{"message":"user rejected MCP tool call {SECRET}"}},"status":"failed""#
            ),
        ),
        item(
            "item_2",
            "erroring_tool",
            &format!(
                r#""result":{{"content":[{{"type":"text","text":"{SECRET}"}}],"structured_content":null}},"error":null,"status":"failed""#
            ),
        ),
        item(
            "item_3",
            "rpc_error_tool",
            &format!(
                r#""result":null,"error":{{"message":"tool call error: tool call failed for `time/rpc_error_tool`\n\nCaused by:\n    Mcp error: -32603: {SECRET}"}},"status":"failed""#
            ),
        ),
        format!(r#"{{"type":"error","message":"{SECRET}"}}"#),
        format!(r#"{{"type":"turn.failed","error":{{"message":"{SECRET}"}}}}"#),
    ];
    std::fs::write(&file, lines.join("\n") + "\n").expect("w");
    let db = home.path().join("t.db");
    assert_shown_and_imported_clean("exec", home.path(), &file, &db, SECRET);
    let text = history_json(home.path(), &db);
    assert!(text.contains("permission_denied"), "{text}");
    assert!(!text.contains(SECRET), "{text}");
    assert_store_clean("exec", &db, SECRET);
}

/// GIVEN every real run's exec output WHEN the conformance kit reads it
/// through the plugin (pure, no panic, provable evidence only, names that
/// are names, no planted value kept) THEN it passes, something of every
/// file is read and no line is unknown.
#[test]
fn every_exec_output_passes_the_conformance_kit() {
    use tether_core::plan::DriveMode;
    let registry = tether_core::registry::Registry::with_static().expect("registry");
    let observer = registry
        .observer_for("codex", DriveMode::Passthrough)
        .expect("plugin");
    let reader = observer.roles().records.expect("a record reader");
    for (folder, case, _) in RUNS {
        let path = fixture(folder, case, "exec");
        let records: Vec<String> = std::fs::read_to_string(&path)
            .expect("fixture")
            .lines()
            .map(str::to_owned)
            .collect();
        let seen = tether_sdk::conformance::assert_reads_records(
            reader,
            "exec_json",
            &[format!("codex-0.171.0-{case}.exec.jsonl")],
            &records,
            &["time".to_owned()],
        );
        assert!(seen.read > 0, "{case}: nothing read");
        assert_eq!(seen.unknown, 0, "{case}: a line not known");
        assert!(
            seen.unparsed.is_empty(),
            "{case}: lines not parsed: {:?}",
            seen.unparsed
        );
    }
}

const PLANTED: &str = "PLANTED-SECRET-c0x9";

/// Keys read as names, ids, kinds and outcomes: kept as they are.
const KEPT: &[&str] = &["type", "thread_id", "id", "server", "tool", "status"];
/// Codex's words for how a call ended: compared, so the secret is added
/// to them rather than put in their place.
const WORDS: &[&str] = &["message", "text"];

fn plant(value: &mut Value, key: Option<&str>) {
    by_path::plant_strings(value, key, &mut |key, s| {
        let key = key.unwrap_or_default();
        if KEPT.contains(&key) {
            return;
        }
        if WORDS.contains(&key) {
            s.push_str(&format!(" {PLANTED}"));
        } else {
            *s = PLANTED.to_owned();
        }
    });
}

/// GIVEN every real run's exec output with a secret planted in every
/// argument, result, message and word WHEN it is shown (text, JSON,
/// tools) and imported THEN its tool row reads as the real file's, and
/// the secret reaches no output and not the store.
#[test]
fn a_secret_planted_in_every_real_run_reaches_no_output() {
    for (folder, case, tool) in RUNS {
        let real = fixture(folder, case, "exec");
        let home = tempfile::tempdir().expect("home");
        let file = home.path().join(format!("codex-{case}.exec.jsonl"));
        let planted = planted_lines(&real, |value| {
            // Arguments are `{}` in most runs: give them a value.
            if let Some(item) = value.get_mut("item").and_then(Value::as_object_mut)
                && item.contains_key("arguments")
            {
                item.insert("arguments".into(), serde_json::json!({"k": "v"}));
            }
            plant(value, None);
        });
        assert!(planted.iter().any(|l| l.contains(PLANTED)), "{case}");
        std::fs::write(&file, planted.join("\n") + "\n").expect("w");
        let name = format!("time/{tool}");
        assert_eq!(
            said(row(&show_json(home.path(), &file), &name)),
            said(row(&show_json(home.path(), &real), &name)),
            "{case}: planted, the row reads otherwise"
        );
        let db = home.path().join("t.db");
        assert_shown_and_imported_clean(case, home.path(), &file, &db, PLANTED);
        assert_store_clean(case, &db, PLANTED);
    }
}

/// The rollout under `codex_home`, if Codex wrote one.
fn rollout_under(codex_home: &Path) -> Option<PathBuf> {
    by_path::codex_rollouts(codex_home).into_iter().next()
}

/// GIVEN a real `codex exec --json` run (the pinned Codex, the fake model)
/// given a working server and one whose command does not exist WHEN its
/// stdout is shown by path THEN it reads as exec output, the call as
/// used, as the run's rollout says, and the server that never started is
/// only what today's configuration says, unknown in both (exec prints
/// nothing of it, and silence is no failure). Skips loudly where Codex is
/// not installed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_run_s_exec_output_reads_as_its_rollout() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let Some(codex) = tether_tests::peer("node_modules/.bin/codex") else {
        return;
    };
    let (model, _log) = tether_tests::fake_model::start_model_calling(
        "get_current_time",
        serde_json::json!({"timezone": PLANTED}),
    )
    .await;
    let home = tether_tests::refusal_run::RefusalHome::counting(PLANTED);
    let (codex_home, work, mut config) = by_path::codex_time_config(&home, &model.base());
    config.push_str(&format!(
        "default_tools_approval_mode = \"approve\"\n[mcp_servers.broken]\ncommand = {}\n",
        by_path::toml_string(&home.home().join("no-such-command").display().to_string()),
    ));
    std::fs::write(codex_home.join("config.toml"), config).expect("config");
    let exec_out = home.home().join("exec.jsonl");
    let mut cmd = by_path::codex_exec(&codex, home.home(), &codex_home, &work);
    cmd.stdout(std::fs::File::create(&exec_out).expect("stdout file"));
    let mut child = cmd.spawn().expect("codex starts");
    // Until Codex exits, or a generous bound (offline it may retry for
    // ever): then its group is killed.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while child.try_wait().ok().flatten().is_none() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    tether_tests::kill_group(&mut child);
    tether_tests::keep_home("by-path-codex", home.home());
    assert_eq!(home.received(), ["get_current_time"], "the server's log");
    let rollout = rollout_under(&codex_home).expect("codex wrote its rollout");
    let exec = home.show(&exec_out);
    let kept = home.show(&rollout);
    assert_eq!(exec["files"][0]["role"], "exec_json", "{exec:#}");
    assert_eq!(kept["files"][0]["role"], "rollout", "{kept:#}");
    assert_eq!(exec["session"]["session_id"], kept["session"]["session_id"]);
    for name in ["time", "time/get_current_time"] {
        assert_eq!(said(row(&exec, name)), said(row(&kept, name)), "{name}");
    }
    let used = row(&exec, "time/get_current_time");
    assert_eq!(
        (count(used, "calls"), count(used, "failed_calls")),
        (1, 0),
        "{used:#}"
    );
    // The server that never started: today's configuration names it, and
    // nothing the run printed or wrote says more (unknown, never failed).
    for doc in [&exec, &kept] {
        let broken = row(doc, "broken");
        assert_eq!(broken["status"], "unknown", "{broken:#}");
        assert!(
            broken["stages"]
                .as_object()
                .expect("stages")
                .values()
                .all(|s| s["provenance"] == "current_config"),
            "{broken:#}"
        );
    }
}

/// GIVEN a real run whose model answered 400 (exec printed the thread, a
/// warning, an `error` and `turn.failed`) WHEN shown by path THEN it is
/// Codex's session, every line known, and no server or tool is said to
/// have failed: the model's failure is no server's.
#[test]
fn a_failed_turn_is_no_server_s_failure() {
    let home = tempfile::tempdir().expect("home");
    let doc = show_json(
        home.path(),
        &fixture("records-by-path", "turnfailed", "exec"),
    );
    assert_eq!(doc["session"]["agent_kind"], "codex", "{doc:#}");
    assert_eq!(doc["files"][0]["role"], "exec_json", "{doc:#}");
    assert_eq!(doc["files"][0]["unknown"], 0, "{doc:#}");
    assert_eq!(doc["rows"], serde_json::json!([]), "{doc:#}");
}

/// GIVEN a Codex Desktop 0.118.0-alpha rollout (no `mcp_tool_call_*`
/// event; written compact, as Codex writes it) whose calls end only in
/// Codex's own words, and a 0.121-shaped `list_mcp_resources` filed under
/// `codex` WHEN shown by path THEN the timed-out call is failed for
/// `timeout` (never "outcome not recorded"), the call Codex had no tool
/// for is refused `tool_not_available` (no use, not offered), `codex` has
/// no row, and `figma`, which the listing named, answered: connected, with
/// what showed it.
#[test]
fn codex_desktop_s_own_words_and_its_own_resource_tools_read_as_they_are() {
    let home = tempfile::tempdir().expect("home");
    let dir = tempfile::tempdir().expect("dir");
    let lines = [
        r#"{"timestamp":"2026-03-31T09:00:00.000Z","type":"session_meta","payload":{"id":"019d1111-2222-7333-8444-555566667777","timestamp":"2026-03-31T09:00:00.000Z","cwd":"/home/user/app","originator":"Codex Desktop","cli_version":"0.118.0-alpha.3","source":"vscode"}}"#,
        r#"{"timestamp":"2026-03-31T09:00:01.000Z","type":"response_item","payload":{"type":"function_call","name":"mcp__monad__project_read","arguments":"{\"around\":\"x\"}","call_id":"call_a"}}"#,
        r#"{"timestamp":"2026-03-31T09:02:01.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_a","output":"tool call error: tool call failed for `monad/project_read`\n\nCaused by:\n    timed out awaiting tools/call after 120s"}}"#,
        r#"{"timestamp":"2026-03-31T09:03:00.000Z","type":"response_item","payload":{"type":"function_call","name":"mcp__gone__lookup","arguments":"{}","call_id":"call_b"}}"#,
        r#"{"timestamp":"2026-03-31T09:03:00.100Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_b","output":"unsupported call: mcp__gone__lookup"}}"#,
        r#"{"timestamp":"2026-03-31T09:04:00.000Z","type":"event_msg","payload":{"type":"mcp_tool_call_end","call_id":"call_c","invocation":{"server":"codex","tool":"list_mcp_resources","arguments":{}},"duration":{"secs":0,"nanos":3000000},"result":{"Ok":{"content":[{"type":"text","text":"{\"resources\":[{\"server\":\"figma\",\"uri\":\"figma://file/1\",\"name\":\"Design\"}]}"}],"isError":false}}}}"#,
    ];
    let file = dir
        .path()
        .join("rollout-2026-03-31T09-00-00-019d1111-2222-7333-8444-555566667777.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").expect("write");
    let doc = show_json(home.path(), &file);
    let timed_out = row(&doc, "monad/project_read");
    assert_eq!(timed_out["calls"], 1, "{timed_out:#}");
    assert_eq!(timed_out["failed_calls"], 1, "{timed_out:#}");
    assert!(
        timed_out.get("unknown_calls").is_none_or(|u| u == 0),
        "{timed_out:#}"
    );
    assert!(timed_out.to_string().contains("timeout"), "{timed_out:#}");
    let gone = row(&doc, "gone/lookup");
    assert_eq!(gone["calls"], 0, "{gone:#}");
    assert_eq!(gone["refused_calls"], 1, "{gone:#}");
    assert!(gone.to_string().contains("tool_not_available"), "{gone:#}");
    for stage in ["listed", "tools_listed", "model_visible", "called"] {
        assert_ne!(gone["stages"][stage]["state"], "yes", "{stage}: {gone:#}");
    }
    assert!(find_row(&doc, "codex").is_none(), "{doc:#}");
    assert!(find_row(&doc, "codex/list_mcp_resources").is_none());
    let figma = row(&doc, "figma");
    assert_eq!(figma["status"], "connected", "{figma:#}");
    assert!(!doc.to_string().contains("figma://file/1"));
}
