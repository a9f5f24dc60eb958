//! Refused calls, run for real: Gemini CLI (the pin, which is npm's newest)
//! and Qwen Code (pinned and newest) against the fake model and a server
//! that counts the `tools/call` requests it receives (`tether-pinned-mcp`
//! with `TETHER_CALLS_LOG`). For each gate the harness has (no approval in a
//! `-p` run, a deny rule, a hook that blocks) the server's log shows no call,
//! the fake model's log shows the model made it, and the session's own
//! records, read as `tether sessions` reads them, give the tool row a
//! refusal with its reason, no call and never a use; a tool error reached
//! the server once and reads `tool_error`; an allowed call is a use. Each
//! skips loudly where its CLI (tests/peers, `npm ci`) is not installed.

use tether_core::vocab::ReasonCode;
use tether_tests::Release;
use tether_tests::refusal_run::{
    PLANTED, RefusalHome as Run, assert_reached_once, assert_refused, model_called,
};

/// The counting server's tools: `stamp` answers `ok`, `fail` `isError`.
const TOOLS: &str = r#"[{"name":"stamp","description":"t","inputSchema":{"type":"object","properties":{}}},
 {"name":"fail","description":"t","inputSchema":{"type":"object","properties":{}}}]"#;

/// The server's entry in a Gemini or Qwen `mcpServers`.
fn entry(run: &Run) -> serde_json::Value {
    let (var, log) = run.log_env();
    serde_json::json!({
        "command": run.server(),
        "args": run.server_args(),
        "env": {var: log}
    })
}

/// A hook command that blocks whatever it is asked about (exit 2, its
/// reason on stderr), in a home of its own.
fn blocking_hook(run: &Run) -> std::path::PathBuf {
    run.script(
        "block.sh",
        &format!("cat >/dev/null\necho {PLANTED} >&2\nexit 2"),
    )
}

// ---------------------------------------------------------------- Gemini CLI

/// Runs Gemini CLI 0.61 (`-p`) with `settings` merged into its settings, a
/// policy file where given, `args`, the fake model calling `count/TOOL`.
async fn gemini(
    tool: &str,
    settings: serde_json::Value,
    policy: Option<&str>,
    args: &[&str],
) -> Option<(Run, Vec<String>)> {
    let gemini = Release::Pinned
        .peer("node_modules/.bin/gemini")
        .or_else(|| {
            eprintln!("SKIP: Gemini CLI is not installed (run `npm ci` in tests/peers)");
            None
        })?;
    let run = Run::pinned(TOOLS, PLANTED)?;
    let (model, sent) = tether_tests::fake_model::start_model(&format!("count/{tool}")).await;
    let dir = run.home().join(".gemini");
    std::fs::create_dir_all(dir.join("policies")).expect("dir");
    let mut config = serde_json::json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "mcpServers": {"count": entry(&run)}
    });
    if let (Some(c), serde_json::Value::Object(extra)) = (config.as_object_mut(), settings) {
        c.extend(extra);
    }
    std::fs::write(dir.join("settings.json"), config.to_string()).expect("settings");
    if let Some(policy) = policy {
        std::fs::write(dir.join("policies/refusals.toml"), policy).expect("policy");
    }
    let mut cmd = std::process::Command::new(&gemini);
    cmd.args(["-m", "gemini-2.5-pro", "-p", "what time is it"])
        .args(args)
        .current_dir(run.home())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", run.home())
        .env("GEMINI_API_KEY", "dummy")
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .env("GOOGLE_GEMINI_BASE_URL", model.base());
    run.run_cli(&format!("gemini-{tool}"), cmd, 120);
    Some((run, model_called(&sent)))
}

const TRUST: [(&str, &str); 1] = [("GEMINI_CLI_TRUST_WORKSPACE", "true")];

/// A policy rule for `count`'s `stamp` (narrowed by `argsPattern`, so the
/// tool stays offered: a rule with none hides a denied tool from the model,
/// and no call is ever made).
fn policy(decision: &str) -> String {
    format!(
        "[[rule]]\nmcpName = \"count\"\ntoolName = \"stamp\"\nargsPattern = \"UTC\"\ndecision = \"{decision}\"\npriority = 500\n"
    )
}

/// GIVEN Gemini CLI and a policy rule that denies the call WHEN the model
/// calls it THEN it is refused, `permission_denied` (the policy engine's
/// record does not say the rule's tier, so never managed policy).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_a_deny_rule_refuses_the_call() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let Some((run, called)) = gemini(
        "stamp",
        serde_json::json!({}),
        Some(&policy("deny")),
        &["--approval-mode", "yolo"],
    )
    .await
    else {
        return;
    };
    let row = run.row("gemini", &TRUST, "stamp");
    assert_refused(
        "gemini deny",
        &run,
        &called,
        &row,
        ReasonCode::PermissionDenied,
    );
}

/// GIVEN Gemini CLI in a `-p` run with a rule that asks WHEN the model
/// calls the tool THEN no one can answer: refused, `approval_required`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_headless_ask_needs_approval() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let Some((run, called)) = gemini(
        "stamp",
        serde_json::json!({}),
        Some(&policy("ask_user")),
        &[],
    )
    .await
    else {
        return;
    };
    let row = run.row("gemini", &TRUST, "stamp");
    assert_refused(
        "gemini ask",
        &run,
        &called,
        &row,
        ReasonCode::ApprovalRequired,
    );
}

/// GIVEN Gemini CLI in a `-p` run and no rule at all WHEN the session runs
/// THEN the MCP tool is never offered (a `-p` run drops what would ask), so
/// the model never calls it and nothing is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_headless_without_rules_never_offers_the_tool() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let Some((run, called)) = gemini("stamp", serde_json::json!({}), None, &[]).await else {
        return;
    };
    assert!(called.iter().all(|c| !c.contains("stamp")), "{called:?}");
    assert_eq!(run.received(), Vec::<String>::new());
}

/// GIVEN Gemini CLI with a BeforeTool hook that blocks (exit 2, a planted
/// reason) WHEN the model calls the tool THEN it is refused,
/// `blocked_by_hook`, and the hook's words reach nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_a_before_tool_hook_blocks_the_call() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let Some(probe) = Run::pinned(TOOLS, PLANTED) else {
        return;
    };
    // The hook lives outside the run's home: written first, named by path.
    let hook = blocking_hook(&probe);
    let settings = serde_json::json!({"hooks": {"BeforeTool": [{"matcher": ".*",
        "hooks": [{"type": "command", "command": hook, "name": "blocker"}]}]}});
    let Some((run, called)) = gemini("stamp", settings, None, &["--approval-mode", "yolo"]).await
    else {
        return;
    };
    let row = run.row("gemini", &TRUST, "stamp");
    assert_refused(
        "gemini hook",
        &run,
        &called,
        &row,
        ReasonCode::BlockedByHook,
    );
}

/// GIVEN Gemini CLI WHEN the model calls a tool that answers `isError`, and
/// (another run) one that succeeds THEN the first reached the server once
/// and failed with `tool_error`; the second is a use.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_a_tool_error_and_an_allowed_call() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let yolo = ["--approval-mode", "yolo"];
    let Some((run, _)) = gemini("fail", serde_json::json!({}), None, &yolo).await else {
        return;
    };
    let row = run.row("gemini", &TRUST, "fail");
    assert_reached_once("gemini fail", &run, &row, true);
    assert_eq!(row.failures, [ReasonCode::ToolError], "{row:?}");
    let Some((run, _)) = gemini("stamp", serde_json::json!({}), None, &yolo).await else {
        return;
    };
    assert_reached_once(
        "gemini allow",
        &run,
        &run.row("gemini", &TRUST, "stamp"),
        false,
    );
}

// ---------------------------------------------------------------- Qwen Code

/// Runs Qwen Code `release` (`-p`) with `settings` merged in and `args`.
async fn qwen(
    release: Release,
    tool: &str,
    settings: serde_json::Value,
    args: &[&str],
) -> Option<(Run, Vec<String>)> {
    let qwen = release.peer("node_modules/.bin/qwen").or_else(|| {
        eprintln!("SKIP: Qwen Code ({}) is not installed", release.label());
        None
    })?;
    let run = Run::pinned(TOOLS, PLANTED)?;
    let (model, sent) = tether_tests::fake_model::start_model(&format!("count/{tool}")).await;
    let dir = run.home().join(".qwen");
    std::fs::create_dir_all(&dir).expect("dir");
    let mut config = serde_json::json!({
        "security": {"auth": {"selectedType": "openai"}},
        "model": {"name": "gpt-4o"},
        "mcpServers": {"count": entry(&run)}
    });
    if let (Some(c), serde_json::Value::Object(extra)) = (config.as_object_mut(), settings) {
        c.extend(extra);
    }
    std::fs::write(dir.join("settings.json"), config.to_string()).expect("settings");
    let mut cmd = std::process::Command::new(&qwen);
    cmd.args(["-p", "what time is it"])
        .args(args)
        .current_dir(run.home())
        .env_clear()
        .env("PATH", release.path())
        .env("HOME", run.home())
        .env("OPENAI_API_KEY", "dummy")
        .env("OPENAI_BASE_URL", format!("{}/v1", model.base()))
        .env("OPENAI_MODEL", "gpt-4o")
        .env("QWEN_CODE_TRUST_WORKSPACE", "true");
    run.run_cli(&format!("qwen-{}-{tool}", release.label()), cmd, 120);
    Some((run, model_called(&sent)))
}

/// GIVEN Qwen Code (pinned, newest) in a `-p` run with no approval WHEN the
/// model calls the MCP tool THEN Qwen declines it: `approval_required`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qwen_headless_needs_approval() {
    for release in Release::BOTH {
        let _one = tether_tests::one_real_cli_at_a_time().await;
        let Some((run, called)) = qwen(release, "stamp", serde_json::json!({}), &[]).await else {
            continue;
        };
        let label = format!("qwen {} headless", release.label());
        let row = run.row("qwen", &[], "stamp");
        assert_refused(&label, &run, &called, &row, ReasonCode::ApprovalRequired);
    }
}

/// GIVEN Qwen Code (pinned, newest) with `permissions.deny` naming the tool,
/// in yolo WHEN the model calls it THEN it is refused, `permission_denied`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qwen_a_deny_rule_refuses_the_call() {
    for release in Release::BOTH {
        let _one = tether_tests::one_real_cli_at_a_time().await;
        let deny = serde_json::json!({"permissions": {"deny": ["mcp__count__stamp"]}});
        let Some((run, called)) = qwen(release, "stamp", deny, &["--yolo"]).await else {
            continue;
        };
        let label = format!("qwen {} deny", release.label());
        let row = run.row("qwen", &[], "stamp");
        assert_refused(&label, &run, &called, &row, ReasonCode::PermissionDenied);
    }
}

/// GIVEN Qwen Code with a PreToolUse hook that blocks (exit 2, a planted
/// reason), in yolo WHEN the model calls the tool THEN the server never
/// gets it; the newest (0.24, whose record says `not_started`) reads
/// `blocked_by_hook`; the pin (0.15, whose record cannot tell a PreToolUse
/// block from a PostToolUse stop after the call ran) a call whose outcome
/// is unknown, never a failure and never a use that succeeded. The hook's
/// words reach nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qwen_a_pre_tool_use_hook_blocks_the_call() {
    for release in Release::BOTH {
        let _one = tether_tests::one_real_cli_at_a_time().await;
        let Some(probe) = Run::pinned(TOOLS, PLANTED) else {
            return;
        };
        let hook = blocking_hook(&probe);
        let settings = serde_json::json!({"hooks": {"PreToolUse": [{"matcher": ".*",
            "hooks": [{"type": "command", "command": hook, "name": "blocker"}]}]}});
        let Some((run, called)) = qwen(release, "stamp", settings, &["--yolo"]).await else {
            continue;
        };
        let label = format!("qwen {} hook", release.label());
        let row = run.row("qwen", &[], "stamp");
        match release {
            Release::Newest => {
                assert_refused(&label, &run, &called, &row, ReasonCode::BlockedByHook)
            }
            Release::Pinned => {
                assert_eq!(run.received(), Vec::<String>::new(), "{label}");
                assert_eq!(row.failed_calls, 0, "{label}: {row:?}");
                assert_eq!(row.calls, row.unknown_calls, "{label}: {row:?}");
            }
        }
    }
}

/// GIVEN Qwen Code (pinned, newest) in yolo WHEN the model calls a tool
/// that answers `isError`, and (another run) one that succeeds THEN the
/// first reached the server once and failed; the second is a use.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qwen_a_tool_error_and_an_allowed_call() {
    for release in Release::BOTH {
        let _one = tether_tests::one_real_cli_at_a_time().await;
        let Some((run, _)) = qwen(release, "fail", serde_json::json!({}), &["--yolo"]).await else {
            continue;
        };
        let label = format!("qwen {} fail", release.label());
        assert_reached_once(&label, &run, &run.row("qwen", &[], "fail"), true);
        let Some((run, _)) = qwen(release, "stamp", serde_json::json!({}), &["--yolo"]).await
        else {
            continue;
        };
        let label = format!("qwen {} allow", release.label());
        assert_reached_once(&label, &run, &run.row("qwen", &[], "stamp"), false);
    }
}
