//! Claude Code records shaped exactly like real ones other people's setups
//! wrote (issue 56: public repositories' transcripts and stream-json of
//! 2.1.14, 2.1.15, 2.1.29, 2.1.38, 2.1.39 and 2.1.276), each fixture the
//! real line's keys with neutral values (`tests/fixtures/records-real/`).
//!
//! - GIVEN a 2.1.276 `system/init` naming claude.ai connectors
//!   (`claude.ai Gmail`) and plugin servers (`plugin:ctx7:ctx7`) WHEN shown
//!   by path THEN nothing is refused, each server is one row named as its
//!   tools are (`claude_ai_Gmail`, `plugin_ctx7_ctx7`: the call of
//!   `mcp__plugin_ctx7_ctx7__…` is that row's), the name shown kept as a
//!   note.
//! - GIVEN 2.1.39 `progress` records WHEN shown THEN each `hook_progress`
//!   is a hook that fired (how it ended: unknown), named by what it runs
//!   (`cd … && bun …` is `bun`), and `mcp_progress` says how a call ended;
//!   a call the user rejected is a refusal, never a failed call.
//! - GIVEN 2.1.14's `Stop hook feedback` WHEN shown THEN a Stop hook fired
//!   and blocked, its command's shape from the brackets.
//! - GIVEN a sub-agent's transcript (2.1.38) WHEN shown by path THEN its
//!   calls read, an auto-denial (prompts unavailable) a refusal for
//!   approval; GIVEN it under its parent's session directory (and a
//!   workflow's agent) WHEN the session is shown THEN its calls count for
//!   the parent's session.
//! - GIVEN every fixture with a secret planted in each payload value WHEN
//!   shown THEN the rows read the same and the secret is in no output.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tether_tests::by_path::{self, row, show_json_at};

const SESSION: &str = "11111111-2222-4333-8444-555555555555";

fn fixtures() -> PathBuf {
    by_path::fixtures().join("records-real")
}

/// `tether sessions show PATH --json` in an empty home.
fn show_json(path: &Path) -> Value {
    let home = tempfile::tempdir().expect("home");
    show_json_at(home.path(), &path.display().to_string()).0
}

fn hook<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["kind"] == "hook" && r["name"] == name)
        .unwrap_or_else(|| panic!("no hook {name} in {doc:#}"))
}

fn outcomes(row: &Value) -> Vec<(String, u64)> {
    row["outcomes"]
        .as_array()
        .expect("outcomes")
        .iter()
        .map(|o| {
            (
                o["outcome"].as_str().unwrap_or_default().to_owned(),
                o["count"].as_u64().unwrap_or_default(),
            )
        })
        .collect()
}

fn refused_total(doc: &Value) -> u64 {
    doc["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["refused"].as_u64().unwrap_or_default())
        .sum()
}

fn init_reads(doc: &Value) {
    assert_eq!(refused_total(doc), 0, "{doc:#}");
    assert_eq!(row(doc, "plugin_ctx7_ctx7")["calls"], 1, "{doc:#}");
    assert_eq!(row(doc, "plugin_ctx7_ctx7/query-docs")["calls"], 1);
    assert_eq!(row(doc, "plugin_tf_tf")["status"], "failed");
    assert_eq!(row(doc, "claude_ai_Google_Drive")["status"], "failed");
    let gmail = row(doc, "claude_ai_Gmail");
    assert!(
        gmail["stopped"]
            .as_str()
            .is_some_and(|s| s.contains("\u{201c}claude.ai Gmail\u{201d}")),
        "{gmail:#}"
    );
    let names: Vec<&str> = doc["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert!(
        !names.iter().any(|n| n.contains(':') || n.contains(' ')),
        "one row per server, named as its tools are: {names:?}"
    );
}

#[test]
fn an_init_with_claude_ai_connectors_reads_every_server_named_as_its_tools() {
    init_reads(&show_json(
        &fixtures().join("claude-2.1.276-init-connectors.stream.jsonl"),
    ));
}

fn progress_reads(doc: &Value) {
    // Rejected by the user: it never reached the server.
    let rejected = row(doc, "plugin_ctx7_ctx7/query-docs");
    assert_eq!(rejected["reason_code"], "permission_denied", "{rejected:#}");
    assert_eq!(rejected["refused_calls"], 1);
    assert_eq!(rejected["failed_calls"], 0);
    assert_eq!(rejected["calls"], 0);
    // mcp_progress: started, then failed.
    let search = row(doc, "ec/ec_search");
    assert_eq!(search["calls"], 1, "{search:#}");
    assert_eq!(search["failed_calls"], 1);
    let pre = hook(doc, "PreToolUse:mcp__plugin_ctx7_ctx7__query-docs");
    assert_eq!(pre["command"], "bun", "{pre:#}");
    assert_eq!(pre["event"], "PreToolUse");
    assert_eq!(outcomes(pre), [("unknown".to_owned(), 1)]);
    let start = hook(doc, "SessionStart:startup");
    assert_eq!(start["command"], "start.sh", "{start:#}");
    assert_eq!(outcomes(start), [("unknown".to_owned(), 1)]);
}

#[test]
fn progress_records_say_hooks_fired_and_calls_ended_and_a_rejection_is_a_refusal() {
    progress_reads(&show_json(
        &fixtures().join("claude-2.1.39-progress-rejection.jsonl"),
    ));
}

fn stop_reads(doc: &Value) {
    let stop = hook(doc, "Stop");
    assert_eq!(stop["command"], "stop.sh", "{stop:#}");
    assert_eq!(outcomes(stop), [("blocked".to_owned(), 1)]);
}

#[test]
fn a_2_1_14_stop_hook_feedback_is_a_stop_hook_that_blocked() {
    stop_reads(&show_json(
        &fixtures().join("claude-2.1.14-stop-feedback.jsonl"),
    ));
}

fn subagent_reads(doc: &Value) {
    assert_eq!(row(doc, "ec/ec_search")["calls"], 1, "{doc:#}");
    let denied = row(doc, "ec/ec_write");
    assert_eq!(denied["reason_code"], "approval_required", "{denied:#}");
    assert_eq!(denied["refused_calls"], 1);
    assert_eq!(denied["failed_calls"], 0);
}

#[test]
fn a_sub_agent_s_transcript_reads_by_path() {
    subagent_reads(&show_json(&fixtures().join("claude-2.1.38-subagent.jsonl")));
}

#[test]
fn sub_agents_transcripts_are_their_parent_session_s_records() {
    let home = tempfile::tempdir().expect("home");
    let project = home.path().join(".claude/projects/-tmp-ws");
    let parent = project.join(SESSION);
    let workflow = parent.join("subagents/workflows/wf_0123abcd-001-1");
    std::fs::create_dir_all(&workflow).expect("dirs");
    std::fs::copy(
        fixtures().join("claude-2.1.39-progress-rejection.jsonl"),
        project.join(format!("{SESSION}.jsonl")),
    )
    .expect("parent");
    let sub = std::fs::read_to_string(fixtures().join("claude-2.1.38-subagent.jsonl"))
        .expect("sub-agent");
    std::fs::write(parent.join("subagents/agent-a881341.jsonl"), &sub).expect("agent");
    // A workflow's agent: other calls (other ids) of the same tools.
    std::fs::write(
        workflow.join("agent-a0000000000000001.jsonl"),
        sub.replace("toolu_s", "toolu_w")
            .replace("a881341", "a0000000000000001"),
    )
    .expect("workflow agent");
    let (doc, _) = show_json_at(home.path(), SESSION);
    assert_eq!(doc["session"]["files"], 3, "{doc:#}");
    // The parent's call (failed) and one from each agent.
    let search = row(&doc, "ec/ec_search");
    assert_eq!(search["calls"], 3, "{search:#}");
    assert_eq!(search["failed_calls"], 1);
    assert_eq!(row(&doc, "ec/ec_write")["refused_calls"], 2);
    // Without the sub-agents, only the parent's.
    std::fs::remove_dir_all(parent.join("subagents")).expect("rm");
    let (doc, _) = show_json_at(home.path(), SESSION);
    assert_eq!(row(&doc, "ec/ec_search")["calls"], 1, "{doc:#}");
}

/// Plants `secret` in every payload value of a fixture line: tool inputs
/// and results, hook output and the arguments and directory of a hook's
/// command, paths the init line gives.
fn planted(line: &str, secret: &str) -> String {
    let mut v: Value = serde_json::from_str(line).expect("json");
    plant(&mut v, secret, None);
    v.to_string()
}

fn plant(v: &mut Value, secret: &str, key: Option<&str>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map.iter_mut() {
                plant(child, secret, Some(k.as_str()));
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| plant(i, secret, key)),
        Value::String(s) => match key {
            Some("q" | "toolUseResult" | "path" | "auto" | "messaging_socket_path") => {
                *s = format!("{s}/{secret}");
            }
            Some("text") => *s = format!("{s} {secret}"),
            Some("content") if s.starts_with("Stop hook feedback:\n[") => {
                *s = s
                    .replacen("/scripts/", &format!("/{secret}/scripts/"), 1)
                    .replacen("]: ", &format!(" {secret}]: {secret} "), 1);
            }
            Some("content") => *s = format!("{s} {secret}"),
            Some("command") => {
                *s = s
                    .replacen("cd ${CLAUDE_PLUGIN_ROOT}", &format!("cd /{secret}"), 1)
                    .replace(" clear", &format!(" --token={secret}"))
                    .replace(" pre.ts", &format!(" {secret}.ts"));
            }
            _ => {}
        },
        _ => {}
    }
}

/// What a fixture's rows must read.
type Check = fn(&Value);

#[test]
fn a_planted_secret_is_in_no_output_and_the_rows_read_the_same() {
    const SECRET: &str = "h9PLANTEDsecret0451";
    let checks: [(&str, Check); 4] = [
        ("claude-2.1.276-init-connectors.stream.jsonl", init_reads),
        ("claude-2.1.39-progress-rejection.jsonl", progress_reads),
        ("claude-2.1.14-stop-feedback.jsonl", stop_reads),
        ("claude-2.1.38-subagent.jsonl", subagent_reads),
    ];
    for (name, check) in checks {
        let text = std::fs::read_to_string(fixtures().join(name)).expect("fixture");
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join(name);
        let written: Vec<String> = text.lines().map(|l| planted(l, SECRET)).collect();
        assert!(
            written.iter().any(|l| l.contains(SECRET)),
            "{name}: no secret planted"
        );
        std::fs::write(&path, written.join("\n") + "\n").expect("write");
        let home = tempfile::tempdir().expect("home");
        let (doc, all) = show_json_at(home.path(), &path.display().to_string());
        check(&doc);
        assert!(!all.contains(SECRET), "{name}: the secret shows: {all}");
        let table = tether_tests::tether_at_home(home.path())
            .args(["sessions", "show", &path.display().to_string()])
            .output()
            .expect("tether runs");
        let table = String::from_utf8_lossy(&table.stdout).into_owned()
            + &String::from_utf8_lossy(&table.stderr);
        assert!(!table.contains(SECRET), "{name}: the secret shows: {table}");
    }
}
