//! Refused calls (issue 57), verified against the real Claude Code, pinned
//! (2.1.197) and newest (2.1.332): `claude -p --output-format stream-json
//! --verbose` against the fake model, with `tether-counting-mcp` as the
//! server `time`. The ground truth is the server's own log of the
//! `tools/call` requests it received and the fake model's log of the calls
//! it made; Tether's reading is `tether sessions show PATH --json` of the
//! run's stream-json and of its transcript.
//!
//! Cases: no permission in a headless run (`approval_required`: Claude
//! Code's `ask` decision, and no one to ask), a PreToolUse hook that
//! blocks (exit 2; a JSON deny on the newest: `blocked_by_hook`), a deny
//! rule (the tool never reaches the model), managed policy denying the
//! server (in a private mount namespace over `/etc`: Claude Code 2.1.197
//! and 2.1.332 read `/etc/claude-code/managed-settings.json` only, their
//! `CLAUDE_CODE_MANAGED_SETTINGS_PATH` honoured by neither in a real run),
//! a tool error and a JSON-RPC error (each reached the server once), and
//! the allowed call (the control).
//!
//! Each skips loudly where its CLI (tests/peers, `npm ci`) is not
//! installed; each run is bounded and killed by process group.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tether_tests::Release;
use tether_tests::by_path;
use tether_tests::refusal_run::{RefusalHome, count, model_called, model_offered, tool_in};

/// A word planted in the model's arguments and in a hook's output: it
/// must reach none of Tether's output.
const SECRET: &str = "PLANTED-SECRET-5c1e";

struct Run {
    /// What the server received: one tool name per `tools/call`.
    calls: Vec<String>,
    /// The tools the fake model called.
    called: Vec<String>,
    /// Every tool the fake model was offered, in any turn.
    offered: Vec<String>,
    stream: PathBuf,
    transcript: Option<PathBuf>,
    home: RefusalHome,
}

/// One case's setup: its settings, a managed-settings file, a hook.
#[derive(Default)]
struct Case {
    target: &'static str,
    settings: Option<Value>,
    /// `/etc/claude-code/managed-settings.json`, in a private mount
    /// namespace.
    policy: Option<Value>,
    allowed: bool,
}

/// Whether a private mount namespace can put a file under `/etc` here (a
/// loud skip where not).
fn can_mount_over_etc() -> bool {
    let ok = std::process::Command::new("unshare")
        .args(["-rm", "sh", "-c", "mount -t tmpfs tmpfs /mnt"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIP: no private mount namespace (unshare -rm) for managed policy");
    }
    ok
}

async fn run(release: Release, case: &Case) -> Option<Run> {
    let claude = release.peer("node_modules/.bin/claude")?;
    let (model, log) =
        tether_tests::fake_model::start_model_calling(case.target, json!({"timezone": SECRET}))
            .await;
    let run = RefusalHome::counting(SECRET);
    let home = run.home();
    let work = home.join("work");
    std::fs::create_dir_all(home.join(".claude")).expect("dir");
    std::fs::create_dir_all(&work).expect("dir");
    let config = home.join("mcp.json");
    let (var, calls_log) = run.log_env();
    std::fs::write(
        &config,
        json!({"mcpServers": {"time": {"command": run.server(), "env": {var: calls_log}}}})
            .to_string(),
    )
    .expect("config");
    if let Some(settings) = &case.settings {
        std::fs::write(home.join(".claude/settings.json"), settings.to_string()).expect("settings");
    }
    let stream = home.join("stream.jsonl");
    let mut args: Vec<String> = by_path::CLAUDE_STREAM_ARGS
        .iter()
        .copied()
        .chain([
            "--mcp-config",
            &config.display().to_string(),
            "--strict-mcp-config",
        ])
        .map(str::to_owned)
        .collect();
    if case.allowed {
        args.extend([
            "--allowedTools".to_owned(),
            format!("mcp__time__{}", case.target),
        ]);
    }
    let mut cmd = match &case.policy {
        None => std::process::Command::new(&claude),
        Some(policy) => {
            // `/etc` as it is, with `claude-code/managed-settings.json`
            // added on top, in this process's own mount namespace only.
            let upper = home.join("etc-upper");
            let scratch = home.join("etc-work");
            std::fs::create_dir_all(upper.join("claude-code")).expect("dir");
            std::fs::create_dir_all(&scratch).expect("dir");
            std::fs::write(
                upper.join("claude-code/managed-settings.json"),
                policy.to_string(),
            )
            .expect("policy");
            let mut cmd = std::process::Command::new("unshare");
            cmd.args(["-rm", "sh", "-c"])
                .arg(format!(
                    "mount -t overlay overlay -o lowerdir=/etc,upperdir={},workdir={} /etc && exec \"$0\" \"$@\"",
                    upper.display(),
                    scratch.display()
                ))
                .arg(&claude);
            cmd
        }
    };
    cmd.args(&args);
    by_path::claude_env(&mut cmd, &work, home, &release.path(), &model.base());
    let label = format!("claude-{}-{}", release.label(), case.target);
    let out = run.run_cli(&label, cmd, 180);
    std::fs::write(&stream, &out.stdout).expect("stream");
    let transcript = by_path::claude_transcript(home);
    Some(Run {
        calls: run.received(),
        called: model_called(&log),
        offered: model_offered(&log),
        stream,
        transcript,
        home: run,
    })
}

/// The tool's row (`time/TOOL`) and its history entry (with `refusals`).
fn tool(doc: &Value, tool: &str) -> (Value, Value) {
    tool_in(doc, "time", tool)
}

/// Each of the run's files, read by path.
fn readings(run: &Run) -> Vec<(String, Value)> {
    let mut files = vec![run.stream.clone()];
    files.extend(run.transcript.clone());
    files
        .iter()
        .map(|f| (f.display().to_string(), run.home.show(f)))
        .collect()
}

/// A refused call: the model called it, the server never received it,
/// and each reading has the tool's row refused for `reason`, no call,
/// and never "used".
fn assert_refused(label: &str, run: &Run, tool_name: &str, reason: &str) {
    let full = format!("mcp__time__{tool_name}");
    assert!(
        run.called.contains(&full),
        "{label}: the model never called it: {:?}",
        run.called
    );
    assert!(
        run.calls.is_empty(),
        "{label}: the server received {:?}",
        run.calls
    );
    for (file, doc) in readings(run) {
        let (row, history) = tool(&doc, tool_name);
        assert!(count(&row, "refused_calls") >= 1, "{label} {file}: {row:#}");
        assert_eq!(count(&row, "calls"), 0, "{label} {file}: {row:#}");
        assert_ne!(row["status"], "used", "{label} {file}: {row:#}");
        let reasons: Vec<&str> = history["refusals"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["reason_code"].as_str())
            .collect();
        assert_eq!(reasons, [reason], "{label} {file}: {history:#}");
        assert_eq!(history["callable"]["state"], "no", "{label} {file}");
    }
}

/// A call that reached the server: one `tools/call`, and each reading has
/// it as a call (failed where `failed`), never refused.
fn assert_reached(label: &str, run: &Run, tool_name: &str, failed: bool) {
    assert_eq!(run.calls, [tool_name], "{label}: the server's log");
    for (file, doc) in readings(run) {
        let (row, _) = tool(&doc, tool_name);
        assert_eq!(count(&row, "calls"), 1, "{label} {file}: {row:#}");
        assert_eq!(count(&row, "refused_calls"), 0, "{label} {file}: {row:#}");
        assert_eq!(
            count(&row, "failed_calls"),
            u64::from(failed),
            "{label} {file}: {row:#}"
        );
    }
}

fn hook(home: &Path, body: &str) -> Value {
    let script = home.join("hook.sh");
    tether_tests::refusal_run::write_script(&script, body);
    json!({"hooks": {"PreToolUse": [{"matcher": "mcp__time__get_current_time",
        "hooks": [{"type": "command", "command": script.display().to_string()}]}]}})
}

async fn refusals(release: Release) {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let label = release.label();
    if release.peer("node_modules/.bin/claude").is_none() {
        return;
    }
    // No permission, headless: refused for approval (Claude Code's own
    // `ask` words: it could not ask).
    let case = Case {
        target: "get_current_time",
        ..Case::default()
    };
    let Some(run_) = run(release, &case).await else {
        return;
    };
    assert_refused(
        &format!("{label} no permission"),
        &run_,
        "get_current_time",
        "approval_required",
    );

    // A PreToolUse hook that exits 2 (its output holds the secret).
    let hooks = tempfile::tempdir().expect("hooks");
    let exit2 = hook(hooks.path(), &format!("echo '{SECRET}' >&2\nexit 2"));
    let case = Case {
        target: "get_current_time",
        settings: Some(exit2),
        allowed: true,
        ..Case::default()
    };
    let run_ = run(release, &case).await.expect("installed");
    assert_refused(
        &format!("{label} hook exit 2"),
        &run_,
        "get_current_time",
        "blocked_by_hook",
    );

    // A PreToolUse hook's JSON deny: 2.1.332 writes it as a hook's block;
    // 2.1.197 writes the hook's own words alone (no reading can tell it
    // from a failure: the ground truth holds, Tether's row is not checked).
    let deny = hook(
        hooks.path(),
        &format!(
            "echo '{{\"hookSpecificOutput\":{{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"{SECRET}\"}}}}'"
        ),
    );
    let case = Case {
        target: "get_current_time",
        settings: Some(deny),
        allowed: true,
        ..Case::default()
    };
    let run_ = run(release, &case).await.expect("installed");
    if release == Release::Newest {
        assert_refused(
            &format!("{label} hook deny"),
            &run_,
            "get_current_time",
            "blocked_by_hook",
        );
    } else {
        assert!(run_.calls.is_empty(), "{label} hook deny: {:?}", run_.calls);
        assert!(
            run_.called
                .contains(&"mcp__time__get_current_time".to_owned())
        );
        // Read all the same: the hook's words (the secret) reach nothing.
        readings(&run_);
    }

    // A deny rule: the tool is removed before the model; nothing called.
    let rule = json!({"permissions": {"deny": ["mcp__time__get_current_time"]}});
    let case = Case {
        target: "get_current_time",
        settings: Some(rule),
        allowed: true,
        ..Case::default()
    };
    let run_ = run(release, &case).await.expect("installed");
    assert!(run_.calls.is_empty(), "{label} deny rule: {:?}", run_.calls);
    assert!(
        !run_.offered.iter().any(|t| t.ends_with("get_current_time")),
        "{label} deny rule: offered {:?}",
        run_.offered
    );
    for (file, doc) in readings(&run_) {
        let (row, _) = tool(&doc, "get_current_time");
        assert_eq!(
            count(&row, "calls") + count(&row, "refused_calls"),
            0,
            "{label} {file}: {row:#}"
        );
    }

    // Managed policy denying the server: never connected, nothing called.
    if can_mount_over_etc() {
        let case = Case {
            target: "get_current_time",
            policy: Some(json!({"deniedMcpServers": [{"serverName": "time"}]})),
            allowed: true,
            ..Case::default()
        };
        let run_ = run(release, &case).await.expect("installed");
        assert!(run_.calls.is_empty(), "{label} policy: {:?}", run_.calls);
        assert!(
            run_.called.iter().all(|c| !c.starts_with("mcp__time__")),
            "{label} policy: {:?}",
            run_.called
        );
        for (file, doc) in readings(&run_) {
            let (row, _) = tool(&doc, "get_current_time");
            assert_eq!(count(&row, "calls"), 0, "{label} {file}: {row:#}");
        }
    }

    // The control, a tool error and a JSON-RPC error: each reached the
    // server once; never a refusal.
    for (target, failed) in [
        ("get_current_time", false),
        ("erroring_tool", true),
        ("rpc_error_tool", true),
    ] {
        let case = Case {
            target,
            allowed: true,
            ..Case::default()
        };
        let run_ = run(release, &case).await.expect("installed");
        assert_reached(&format!("{label} {target}"), &run_, target, failed);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_pinned_refusals_are_no_uses() {
    refusals(Release::Pinned).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_newest_refusals_are_no_uses() {
    refusals(Release::Newest).await;
}
