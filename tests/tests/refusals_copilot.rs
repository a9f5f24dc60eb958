//! Refused calls, run for real: Copilot CLI 1.0.102 (the pin, which is
//! npm's newest) offline against the fake model and a server that counts
//! the `tools/call` requests it receives (`tether-pinned-mcp` with
//! `TETHER_CALLS_LOG`). For each gate it has (no `--allow-tool` in a `-p`
//! run, a `--deny-tool` rule, a preToolUse hook that denies) the server's
//! log shows no call,
//! the fake model's log shows the model made it, and the session's own
//! records, read as `tether sessions` reads them, give the tool row a
//! refusal with its reason, no call and never a use; a tool error reached
//! the server once and reads `tool_error`; an allowed call is a use. Each
//! skips loudly where its CLI (tests/peers, `npm ci`) is not installed.

use tether_core::vocab::ReasonCode;
use tether_tests::by_path;
use tether_tests::refusal_run::{
    PLANTED, RefusalHome as Run, STAMP_FAIL_ERR as TOOLS, assert_reached_once, assert_refused,
    model_called,
};

/// The server's entry in Copilot's `mcp-config.json`.
fn entry(run: &Run) -> serde_json::Value {
    let (var, log) = run.log_env();
    serde_json::json!({
        "type": "local",
        "command": run.server(),
        "args": run.server_args(),
        "env": {var: log},
        "tools": ["*"]
    })
}

/// A preToolUse hook command that denies whatever it is asked about, with
/// a planted reason.
fn denying_hook(run: &Run) -> std::path::PathBuf {
    run.script(
        "deny.sh",
        &format!(
            "cat >/dev/null\necho '{{\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"{PLANTED}\"}}'"
        ),
    )
}

/// Runs Copilot CLI offline (`-p`) with `args`, the fake model calling
/// `count/TOOL`, and `hook` (a preToolUse command) where given.
async fn copilot(tool: &str, args: &[&str], hook: bool) -> Option<(Run, Vec<String>)> {
    let copilot = by_path::pinned_copilot()?;
    let run = Run::pinned(TOOLS, PLANTED)?;
    let (model, sent) = tether_tests::fake_model::start_model(&format!("count/{tool}")).await;
    let dir = run.home().join(".copilot");
    let work = run.home().join("work");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::create_dir_all(&work).expect("work");
    std::fs::write(
        dir.join("mcp-config.json"),
        serde_json::json!({"mcpServers": {"count": entry(&run)}}).to_string(),
    )
    .expect("mcp config");
    let trusted =
        serde_json::json!({"trusted_folders": [work], "trustedFolders": [work]}).to_string();
    std::fs::write(dir.join("config.json"), &trusted).expect("config");
    std::fs::write(dir.join("settings.json"), &trusted).expect("settings");
    if hook {
        let hooks = work.join(".github/hooks");
        std::fs::create_dir_all(&hooks).expect("hooks");
        let command = denying_hook(&run);
        std::fs::write(
            hooks.join("deny.json"),
            serde_json::json!({"version": 1, "hooks": {"preToolUse": [
                {"type": "command", "bash": command, "timeoutSec": 10}]}})
            .to_string(),
        )
        .expect("hook config");
    }
    let cmd = by_path::copilot_offline(&copilot, run.home(), &work, &model.base(), args);
    run.run_cli(&format!("copilot-{tool}"), cmd, 120);
    Some((run, model_called(&sent)))
}

/// GIVEN Copilot CLI in a `-p` run with no `--allow-tool` WHEN the model
/// calls the MCP tool THEN no one can approve it: `approval_required`
/// (its `permission.completed` and its completion's words agree).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_headless_needs_approval() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let Some((run, called)) = copilot("stamp", &[], false).await else {
        return;
    };
    let row = run.row("copilot", &[], "stamp");
    assert_refused(
        "copilot headless",
        &run,
        &called,
        &row,
        ReasonCode::ApprovalRequired,
    );
}

/// GIVEN Copilot CLI with `--allow-all-tools --deny-tool 'count(stamp)'`
/// WHEN the model calls the tool THEN the rule refuses it:
/// `permission_denied`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_a_deny_tool_rule_refuses_the_call() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let args = ["--allow-all-tools", "--deny-tool", "count(stamp)"];
    let Some((run, called)) = copilot("stamp", &args, false).await else {
        return;
    };
    let row = run.row("copilot", &[], "stamp");
    assert_refused(
        "copilot deny",
        &run,
        &called,
        &row,
        ReasonCode::PermissionDenied,
    );
}

/// GIVEN Copilot CLI with a preToolUse hook that denies (a planted reason)
/// WHEN the model calls the tool THEN the hook refused it:
/// `blocked_by_hook`, and the hook's words reach nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_a_pre_tool_use_hook_denies_the_call() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let Some((run, called)) = copilot("stamp", &["--allow-all-tools"], true).await else {
        return;
    };
    let row = run.row("copilot", &[], "stamp");
    assert_refused(
        "copilot hook",
        &run,
        &called,
        &row,
        ReasonCode::BlockedByHook,
    );
}

/// GIVEN Copilot CLI with every tool allowed WHEN the model calls a tool
/// that answers `isError`, one that answers a JSON-RPC error, and one that
/// succeeds (three runs) THEN each reached the server once: `tool_error`,
/// `protocol_error`, and a use.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_tool_and_protocol_errors_and_an_allowed_call() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let all = ["--allow-all-tools"];
    let Some((run, _)) = copilot("fail", &all, false).await else {
        return;
    };
    let row = run.row("copilot", &[], "fail");
    assert_reached_once("copilot fail", &run, &row, true);
    assert_eq!(row.failures, [ReasonCode::ToolError], "{row:?}");
    let Some((run, _)) = copilot("err", &all, false).await else {
        return;
    };
    let row = run.row("copilot", &[], "err");
    assert_reached_once("copilot err", &run, &row, true);
    assert_eq!(row.failures, [ReasonCode::ProtocolError], "{row:?}");
    let Some((run, _)) = copilot("stamp", &all, false).await else {
        return;
    };
    assert_reached_once(
        "copilot allow",
        &run,
        &run.row("copilot", &[], "stamp"),
        false,
    );
}
