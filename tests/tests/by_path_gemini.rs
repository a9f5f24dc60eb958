//! What Gemini CLI and Qwen Code print headless with `-p
//! --output-format stream-json`, read by path (`tether sessions show
//! PATH`), its harness told from its content.
//!
//! - GIVEN the stream-json of real runs (Gemini CLI 0.61.0, Qwen Code
//!   0.15.10 and 0.24.4, against the fake model and a server that counts
//!   the calls it receives; `tests/fixtures/records-by-path/`) WHEN each is
//!   shown by path THEN it reads as its own harness's, never Claude's, and
//!   the tool row says what happened: a call that succeeded is a use; one
//!   the harness refused (a policy's deny, a `-p` run that cannot ask) a
//!   refusal with its reason, never a call (a Gemini BeforeTool hook's
//!   block `blocked_by_hook`); one the server answered `isError` a call
//!   that failed with `tool_error`; one a Qwen PreToolUse hook blocked an
//!   unknown outcome (its line gives only the hook's words, as for a
//!   PostToolUse stop after the call ran), never a failure.
//! - GIVEN the same run's chat file WHEN it is shown by path THEN it agrees
//!   with the stream-json on each tool row.
//! - GIVEN those files with a secret planted in every value but the names,
//!   ids and kinds the readers read (and added to the harness's words)
//!   WHEN shown and imported THEN the rows read the same and the secret is
//!   in no output and not in the store.
//! - `record_the_fixtures` (ignored) runs the CLIs again and rewrites the
//!   fixtures: `cargo test -p tether-tests --test by_path_gemini --
//!   --ignored record_the_fixtures`.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tether_tests::Release;
use tether_tests::by_path::{
    self, assert_shown_and_imported_clean, assert_store_clean, planted_lines, row,
};

fn fixtures() -> PathBuf {
    by_path::fixtures().join("records-by-path")
}

// ------------------------------------------------------------ the recorder

/// The counting server's tools: `stamp` answers `ok`, `fail` `isError`.
const TOOLS: &str = r#"[{"name":"stamp","description":"t","inputSchema":{"type":"object","properties":{}}},
 {"name":"fail","description":"t","inputSchema":{"type":"object","properties":{}}}]"#;

/// One scenario: its fixture's name, the tool the model calls, the
/// settings merged in, a Gemini policy file, the CLI's arguments, and the
/// calls the server must have received.
struct Scenario {
    name: &'static str,
    tool: &'static str,
    settings: Value,
    policy: Option<&'static str>,
    /// The hook event of a hook that blocks every call (exit 2).
    hook: Option<&'static str>,
    args: &'static [&'static str],
    received: &'static [&'static str],
}

/// A blocking hook's reason: the harness's words carry it, nothing of
/// Tether's may.
const HOOK_WORDS: &str = "planted-hook-reason-4471";

/// A Gemini policy rule denying `count`'s `stamp` (narrowed by
/// `argsPattern`, so the tool stays offered).
const GEMINI_DENY: &str = "[[rule]]\nmcpName = \"count\"\ntoolName = \"stamp\"\nargsPattern = \"UTC\"\ndecision = \"deny\"\npriority = 500\n";
/// The same rule asking: a `-p` run cannot.
const GEMINI_ASK: &str = "[[rule]]\nmcpName = \"count\"\ntoolName = \"stamp\"\nargsPattern = \"UTC\"\ndecision = \"ask_user\"\npriority = 500\n";

/// A scenario with no settings, policy or hook.
fn plain(
    name: &'static str,
    tool: &'static str,
    args: &'static [&'static str],
    received: &'static [&'static str],
) -> Scenario {
    Scenario {
        name,
        tool,
        settings: serde_json::json!({}),
        policy: None,
        hook: None,
        args,
        received,
    }
}

fn gemini_scenarios() -> Vec<Scenario> {
    let yolo: &'static [&'static str] = &["--approval-mode", "yolo"];
    vec![
        plain("allow", "stamp", yolo, &["stamp"]),
        plain("fail", "fail", yolo, &["fail"]),
        Scenario {
            policy: Some(GEMINI_DENY),
            ..plain("deny", "stamp", yolo, &[])
        },
        Scenario {
            policy: Some(GEMINI_ASK),
            ..plain("ask", "stamp", &[], &[])
        },
        Scenario {
            hook: Some("BeforeTool"),
            ..plain("hook", "stamp", yolo, &[])
        },
    ]
}

fn qwen_scenarios() -> Vec<Scenario> {
    let yolo: &'static [&'static str] = &["--yolo"];
    vec![
        plain("allow", "stamp", yolo, &["stamp"]),
        plain("fail", "fail", yolo, &["fail"]),
        Scenario {
            settings: serde_json::json!({"permissions": {"deny": ["mcp__count__stamp"]}}),
            ..plain("deny", "stamp", yolo, &[])
        },
        plain("headless", "stamp", &[], &[]),
        Scenario {
            hook: Some("PreToolUse"),
            ..plain("hook", "stamp", yolo, &[])
        },
    ]
}

/// The one file under `dir` (recursively) whose name ends in `suffix`.
fn the_file(dir: &Path, suffix: &str) -> Option<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with(suffix)
                && p.to_string_lossy().contains("/chats/")
            {
                found.push(p);
            }
        }
    }
    (found.len() == 1).then(|| found.remove(0))
}

/// Runs one CLI (`gemini` or `qwen` of `release`) for `s`, and writes its
/// stream-json and its chat file as `PREFIX-NAME.stream.jsonl` and
/// `PREFIX-NAME.chat.jsonl`.
async fn record(cli: &str, release: Release, prefix: &str, s: &Scenario) {
    let server = tether_tests::workspace_bin("tether-pinned-mcp");
    let Some(bin) = release.peer(&format!("node_modules/.bin/{cli}")) else {
        eprintln!(
            "SKIP: {cli} ({}) is not installed (tests/peers)",
            release.label()
        );
        return;
    };
    let home = tempfile::tempdir().expect("home");
    let home = home.path();
    let tools = home.join("tools.json");
    std::fs::write(&tools, TOOLS).expect("tools");
    let log = home.join("calls.log");
    let (model, _sent) = tether_tests::fake_model::start_model(&format!("count/{}", s.tool)).await;
    let entry = serde_json::json!({
        "command": server, "args": ["--tools", tools], "env": {"TETHER_CALL_LOG": log}
    });
    let dir = home.join(format!(".{cli}"));
    std::fs::create_dir_all(dir.join("policies")).expect("dir");
    let mut config = if cli == "gemini" {
        serde_json::json!({"security": {"auth": {"selectedType": "gemini-api-key"}}})
    } else {
        serde_json::json!({"security": {"auth": {"selectedType": "openai"}}, "model": {"name": "gpt-4o"}})
    };
    config["mcpServers"] = serde_json::json!({"count": entry});
    if let (Some(c), Value::Object(extra)) = (config.as_object_mut(), s.settings.clone()) {
        c.extend(extra);
    }
    // A hook that blocks whatever it is asked about (exit 2, its reason,
    // planted, on stderr), outside the run's home.
    let hooks = tempfile::tempdir().expect("hooks");
    if let Some(event) = s.hook {
        use std::os::unix::fs::PermissionsExt as _;
        let hook = hooks.path().join("block.sh");
        std::fs::write(
            &hook,
            format!("#!/bin/sh\ncat >/dev/null\necho {HOOK_WORDS} >&2\nexit 2\n"),
        )
        .expect("hook");
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("mode");
        config["hooks"] = serde_json::json!({event: [{"matcher": ".*",
            "hooks": [{"type": "command", "command": hook, "name": "blocker"}]}]});
    }
    std::fs::write(dir.join("settings.json"), config.to_string()).expect("settings");
    if let Some(policy) = s.policy {
        std::fs::write(dir.join("policies/rules.toml"), policy).expect("policy");
    }
    let mut cmd = std::process::Command::new(&bin);
    cmd.current_dir(home)
        .env_clear()
        .env("PATH", release.path())
        .env("HOME", home);
    if cli == "gemini" {
        cmd.args(["-m", "gemini-2.5-pro"])
            .env("GEMINI_API_KEY", "dummy")
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .env("GOOGLE_GEMINI_BASE_URL", model.base());
    } else {
        cmd.env("OPENAI_API_KEY", "dummy")
            .env("OPENAI_BASE_URL", format!("{}/v1", model.base()))
            .env("OPENAI_MODEL", "gpt-4o")
            .env("QWEN_CODE_TRUST_WORKSPACE", "true");
    }
    cmd.args(["-p", "what time is it", "--output-format", "stream-json"])
        .args(s.args);
    let out = tether_tests::output_within(cmd, 180);
    let label = format!("{prefix}-{}", s.name);
    assert!(
        out.status.success(),
        "{label}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let received: Vec<String> = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(received, s.received, "{label}: the server's calls");
    std::fs::write(
        fixtures().join(format!("{label}.stream.jsonl")),
        &out.stdout,
    )
    .expect("write");
    let chat = if cli == "gemini" {
        the_file(&dir.join("tmp"), ".jsonl")
    } else {
        the_file(&dir.join("projects"), ".jsonl")
    };
    match chat {
        Some(chat) => {
            std::fs::copy(&chat, fixtures().join(format!("{label}.chat.jsonl"))).expect("copy");
        }
        None => eprintln!("{label}: no one chat file"),
    }
}

/// Runs every scenario for real and rewrites the fixtures.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "runs the real CLIs and rewrites the fixtures"]
async fn record_the_fixtures() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    for s in gemini_scenarios() {
        record("gemini", Release::Pinned, "gemini-0.61.0", &s).await;
    }
    for (release, prefix) in [
        (Release::Pinned, "qwen-0.15.10"),
        (Release::Newest, "qwen-0.24.4"),
    ] {
        for s in qwen_scenarios() {
            record("qwen", release, prefix, &s).await;
        }
    }
}

// ------------------------------------------------------------ the readings

/// `tether sessions show PATH --json` in an empty home.
fn show_json(path: &Path) -> Value {
    let home = tempfile::tempdir().expect("home");
    by_path::show_json(home.path(), path)
}

/// What a tool row says: (calls, failed, refused, its reason, stopped).
fn said(row: &Value) -> (u64, u64, u64, Value, String) {
    let n = |k: &str| row[k].as_u64().unwrap_or(0);
    (
        n("calls"),
        n("failed_calls"),
        n("refused_calls"),
        row["reason_code"].clone(),
        row["stopped"].as_str().unwrap_or_default().to_owned(),
    )
}

/// How each scenario's tool row must read.
fn assert_row(label: &str, scenario: &str, row: &Value) {
    let (calls, failed, refused, reason, stopped) = said(row);
    match scenario {
        "allow" => {
            assert_eq!((calls, failed, refused), (1, 0, 0), "{label}: {row:#}");
            assert_eq!(row["stages"]["called"]["state"], "yes", "{label}: {row:#}");
        }
        "fail" => {
            assert_eq!((calls, failed, refused), (1, 1, 0), "{label}: {row:#}");
            assert!(stopped.contains("tool error"), "{label}: {row:#}");
        }
        "deny" | "ask" | "headless" => {
            let want = if scenario == "deny" {
                "permission_denied"
            } else {
                "approval_required"
            };
            // Refused with its reason: never a call, never a use.
            assert_eq!((calls, failed, refused), (0, 0, 1), "{label}: {row:#}");
            assert_eq!(reason, want, "{label}: {row:#}");
            assert_eq!(row["stages"]["callable"]["state"], "no", "{label}: {row:#}");
            assert_ne!(row["stages"]["called"]["state"], "yes", "{label}: {row:#}");
        }
        // Gemini's words say a BeforeTool hook blocked it.
        "hook" if label.starts_with("gemini") => {
            assert_eq!((calls, failed, refused), (0, 0, 1), "{label}: {row:#}");
            assert_eq!(reason, "blocked_by_hook", "{label}: {row:#}");
        }
        // Qwen's stream-json gives only the hook's own words, as it does
        // for a PostToolUse hook's stop after the call ran (0.24.4
        // chunk-DPEB6S2R.js 60798-60810): unknown, never a failure, never
        // a use that succeeded.
        "hook" => {
            assert_eq!((calls, failed, refused), (1, 0, 0), "{label}: {row:#}");
            assert_eq!(row["unknown_calls"], 1, "{label}: {row:#}");
        }
        other => panic!("no scenario {other}"),
    }
}

/// Every recorded run: its prefix, kind, version and scenarios.
fn runs() -> Vec<(
    &'static str,
    &'static str,
    Option<&'static str>,
    Vec<Scenario>,
)> {
    vec![
        ("gemini-0.61.0", "gemini", None, gemini_scenarios()),
        ("qwen-0.15.10", "qwen", Some("0.15.10"), qwen_scenarios()),
        ("qwen-0.24.4", "qwen", Some("0.24.4"), qwen_scenarios()),
    ]
}

/// GIVEN each real run's stream-json WHEN it is shown by path THEN it reads
/// as its own harness's stream-json (Gemini's and Qwen's told apart, and
/// neither Claude's), with the session and (Qwen) the version, and the tool
/// row says what happened: used; refused with its reason and never a call;
/// failed with `tool_error`. The same run's chat file agrees.
#[test]
fn each_run_s_stream_json_reads_as_its_own_and_agrees_with_its_chat() {
    for (prefix, kind, version, scenarios) in runs() {
        for s in scenarios {
            let label = format!("{prefix}-{}", s.name);
            let stream = show_json(&fixtures().join(format!("{label}.stream.jsonl")));
            assert!(
                !stream.to_string().contains(HOOK_WORDS),
                "{label}: {stream:#}"
            );
            assert_eq!(stream["session"]["agent_kind"], kind, "{label}");
            assert_eq!(stream["files"][0]["role"], "stream_json", "{label}");
            assert_eq!(stream["files"][0]["unknown"], 0, "{label}: {stream:#}");
            match version {
                Some(v) => assert_eq!(stream["session"]["agent_version"], v, "{label}"),
                None => assert!(stream["session"]["agent_version"].is_null(), "{label}"),
            }
            let tool = row(&stream, &format!("count/{}", s.tool));
            assert_row(&label, s.name, tool);
            if kind == "qwen" {
                // Its init's `mcp_servers`: the server connected, said
                // outright (not implied by a call).
                let server = row(&stream, "count");
                let initialized = &server["stages"]["initialized"];
                assert_eq!(initialized["state"], "yes", "{label}: {server:#}");
                assert!(initialized["implied_by"].is_null(), "{label}: {server:#}");
            }

            let chat = show_json(&fixtures().join(format!("{label}.chat.jsonl")));
            assert_eq!(chat["files"][0]["role"], "chat", "{label}");
            assert_eq!(
                chat["session"]["session_id"], stream["session"]["session_id"],
                "{label}: the chat is the same run's"
            );
            let chat_row = row(&chat, &format!("count/{}", s.tool));
            if label == "qwen-0.24.4-hook" {
                // The chat says more (`executionStatus: not_started`): the
                // stream-json's unknown never contradicts it.
                assert_eq!(chat_row["reason_code"], "blocked_by_hook", "{label}");
                assert_eq!(chat_row["calls"].as_u64().unwrap_or(0), 0, "{label}");
            } else {
                assert_eq!(
                    said(chat_row),
                    said(tool),
                    "{label}: the chat and the stream-json disagree"
                );
            }
        }
    }
}

/// GIVEN Gemini's and Qwen's stream-json WHEN each is shown as the other
/// harness's (`--harness`) THEN neither's readers know the other's lines:
/// exit 2, nothing read. (By content each reads as its own, above; Claude's
/// reads as Claude's, `sessions_by_path.rs`.)
#[test]
fn gemini_s_and_qwen_s_stream_json_are_never_each_other_s() {
    for (file, other) in [
        ("qwen-0.24.4-allow.stream.jsonl", "gemini"),
        ("qwen-0.15.10-allow.stream.jsonl", "gemini"),
        ("gemini-0.61.0-allow.stream.jsonl", "qwen"),
        ("gemini-0.61.0-allow.stream.jsonl", "claude"),
    ] {
        let home = tempfile::tempdir().expect("home");
        let out = tether_tests::tether_at_home(home.path())
            .args([
                "sessions",
                "show",
                &fixtures().join(file).display().to_string(),
            ])
            .args(["--json", "--harness", other])
            .output()
            .expect("tether runs");
        assert_eq!(out.status.code(), Some(2), "{file} as {other}: {out:?}");
    }
}

/// GIVEN every real run's stream-json WHEN the conformance kit reads it
/// through the plugin (pure, no panic cut short or broken, provable
/// evidence only, names that are names, no planted value kept) THEN it
/// passes and its reader reads something of every file.
#[test]
fn every_stream_json_passes_the_conformance_kit() {
    use tether_core::plan::DriveMode;
    let registry = tether_core::registry::Registry::with_static().expect("registry");
    for (prefix, kind, _, scenarios) in runs() {
        let observer = registry
            .observer_for(kind, DriveMode::Passthrough)
            .expect("plugin");
        let reader = observer.roles().records.expect("a record reader");
        for s in scenarios {
            let label = format!("{prefix}-{}", s.name);
            let text = std::fs::read_to_string(fixtures().join(format!("{label}.stream.jsonl")))
                .expect("fixture");
            let records: Vec<String> = text.lines().map(str::to_owned).collect();
            let seen = tether_sdk::conformance::assert_reads_records(
                reader,
                "stream_json",
                &[format!("{label}.stream.jsonl")],
                &records,
                &["count".to_owned()],
            );
            assert!(seen.read > 0, "{label}: nothing read");
            assert_eq!(seen.unknown, 0, "{label}: a line not known");
            assert!(
                seen.unparsed.is_empty(),
                "{label}: lines not parsed: {:?}",
                seen.unparsed
            );
        }
    }
}

// ------------------------------------------------------------ secrets

const SECRET: &str = "PLANTED-SECRET-g3m7";

/// Keys read as names, ids, kinds and outcomes: kept as they are.
const KEPT: &[&str] = &[
    "type",
    "subtype",
    "session_id",
    "timestamp",
    "tool_name",
    "tool_id",
    "status",
    "id",
    "name",
    "tool_use_id",
    "qwen_code_version",
    "tools",
];
/// The harness's words for how a call ended: scanned, so the secret is
/// added to them rather than put in their place.
const WORDS: &[&str] = &["output", "content", "message"];

fn plant(value: &mut Value, key: Option<&str>) {
    by_path::plant_strings(value, key, &mut |key, s| {
        let key = key.unwrap_or_default();
        if KEPT.contains(&key) {
            return;
        }
        if WORDS.contains(&key) {
            s.push_str(&format!(" {SECRET}"));
        } else if key == "cwd" {
            // Its last component is the project, by design.
            *s = format!("/home/{SECRET}/project");
        } else {
            *s = SECRET.to_owned();
        }
    });
}

/// GIVEN every real run's stream-json with a secret planted in every
/// argument, result, content, model, cwd, error and word WHEN it is shown
/// (text, JSON, tools) and imported THEN its tool row reads as the real
/// file's, and the secret reaches no output and not the store.
#[test]
fn no_parameter_result_or_harness_words_reach_any_output() {
    for (prefix, _, _, scenarios) in runs() {
        for s in scenarios {
            let label = format!("{prefix}-{}", s.name);
            let real = fixtures().join(format!("{label}.stream.jsonl"));
            let home = tempfile::tempdir().expect("home");
            let file = home.path().join(format!("{label}.stream.jsonl"));
            let planted = planted_lines(&real, |value| plant(value, None));
            assert!(planted.iter().any(|l| l.contains(SECRET)), "{label}");
            std::fs::write(&file, planted.join("\n") + "\n").expect("w");
            let tool = format!("count/{}", s.tool);
            assert_eq!(
                said(row(&show_json(&file), &tool)),
                said(row(&show_json(&real), &tool)),
                "{label}: planted, the row reads otherwise"
            );
            let db = home.path().join("t.db");
            assert_shown_and_imported_clean(&label, home.path(), &file, &db, SECRET);
            assert_store_clean(&label, &db, SECRET);
        }
    }
}
