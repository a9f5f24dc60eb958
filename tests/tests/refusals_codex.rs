//! Refused calls (issue 57), verified against the real Codex: `codex exec
//! --json` 0.171.0 (the pin, and the newest release npm serves: there is
//! no `tests/peers/newest` Codex) against the fake model, with
//! `tether-counting-mcp` as the server `time`. The ground truth is the
//! server's own log of the `tools/call` requests it received and the fake
//! model's log of the calls it made; Tether's reading is `tether sessions
//! show PATH --json` of the run's rollout.
//!
//! Cases: a tool that needs approval, no one to give it (`codex exec`
//! answers "MCP tool call requires approval, but approval policy is
//! never": `approval_required`), the same approved through
//! `mcp_servers.time.default_tools_approval_mode = "approve"` (the
//! control), a tool error (`tool_error`) and a JSON-RPC error
//! (`protocol_error`), each with the approval.
//!
//! Skips loudly where Codex (tests/peers, `npm ci`) is not installed.
//! Offline Codex can retry for ever: each run is bounded, and its process
//! group killed, once its rollout holds the call's end.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tether_tests::by_path;
use tether_tests::refusal_run::{RefusalHome, count, model_called, tool_in};

/// Planted in the model's arguments: it must reach none of Tether's output.
const SECRET: &str = "PLANTED-SECRET-c0d3";

struct Run {
    calls: Vec<String>,
    called: Vec<String>,
    rollout: PathBuf,
    home: RefusalHome,
}

/// The rollout under `codex_home`, once it holds the end of a call of
/// `tool` (an `McpToolCall` item with a final status).
fn ended_rollout(codex_home: &Path, tool: &str) -> Option<PathBuf> {
    by_path::codex_rollouts(codex_home)
        .into_iter()
        .find(|path| {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            text.lines().any(|l| {
                let v: Value = serde_json::from_str(l).unwrap_or(Value::Null);
                let item = &v["payload"]["item"];
                item["type"] == "McpToolCall"
                    && item["tool"] == tool
                    && matches!(item["status"].as_str(), Some("completed" | "failed"))
            })
        })
}

async fn run(codex: &Path, target: &str, approve: bool) -> Run {
    let (model, log) =
        tether_tests::fake_model::start_model_calling(target, json!({"timezone": SECRET})).await;
    let home = RefusalHome::counting(SECRET);
    let (codex_home, work, mut config) = by_path::codex_time_config(&home, &model.base());
    if approve {
        config.push_str("default_tools_approval_mode = \"approve\"\n");
    }
    std::fs::write(codex_home.join("config.toml"), config).expect("config");
    let mut cmd = by_path::codex_exec(codex, home.home(), &codex_home, &work);
    cmd.stdout(std::process::Stdio::null());
    let mut child = cmd.spawn().expect("codex starts");
    // Until the rollout holds the call's end and Codex has exited, or the
    // bound: then its group is killed (offline, it may retry for ever).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let mut rollout = None;
    loop {
        rollout = rollout.or_else(|| ended_rollout(&codex_home, target));
        let exited = child.try_wait().ok().flatten().is_some();
        if (rollout.is_some() && exited) || std::time::Instant::now() > deadline {
            break;
        }
        if exited && rollout.is_none() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    tether_tests::kill_group(&mut child);
    let rollout = rollout
        .or_else(|| ended_rollout(&codex_home, target))
        .unwrap_or_else(|| panic!("codex {target}: no rollout with the call's end"));
    tether_tests::keep_home(&format!("refusals-codex-{target}"), home.home());
    Run {
        calls: home.received(),
        called: model_called(&log),
        rollout,
        home,
    }
}

/// The tool's row (`time/TOOL`) and its history entry (with `refusals`).
fn tool(doc: &Value, tool: &str) -> (Value, Value) {
    tool_in(doc, "time", tool)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_exec_refusals_are_no_uses() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let Some(codex) = tether_tests::peer("node_modules/.bin/codex") else {
        return;
    };
    // Needs approval, no one to give it: refused, never reached the server.
    let run_ = run(&codex, "get_current_time", false).await;
    assert!(
        run_.called.iter().any(|c| c.contains("get_current_time")),
        "the model never called it: {:?}",
        run_.called
    );
    assert!(
        run_.calls.is_empty(),
        "the server received {:?}",
        run_.calls
    );
    let doc = run_.home.show(&run_.rollout);
    let (row, history) = tool(&doc, "get_current_time");
    assert_eq!(count(&row, "refused_calls"), 1, "{row:#}");
    assert_eq!(count(&row, "calls"), 0, "{row:#}");
    assert_ne!(row["status"], "used", "{row:#}");
    assert_eq!(
        history["refusals"],
        json!([{"reason_code": "approval_required", "calls": 1}]),
        "{history:#}"
    );
    assert_eq!(history["callable"]["state"], "no");

    // Approved by `default_tools_approval_mode`, a tool error and a
    // JSON-RPC error: each reached the server once, never refused.
    for (target, failed, reason) in [
        ("get_current_time", false, None),
        ("erroring_tool", true, Some("tool_error")),
        ("rpc_error_tool", true, Some("protocol_error")),
    ] {
        let run_ = run(&codex, target, true).await;
        assert_eq!(run_.calls, [target], "{target}: the server's log");
        let doc = run_.home.show(&run_.rollout);
        let (row, history) = tool(&doc, target);
        assert_eq!(count(&row, "calls"), 1, "{target}: {row:#}");
        assert_eq!(count(&row, "refused_calls"), 0, "{target}: {row:#}");
        assert_eq!(
            count(&row, "failed_calls"),
            u64::from(failed),
            "{target}: {row:#}"
        );
        if let Some(reason) = reason {
            let said = history.to_string();
            assert!(said.contains(reason), "{target}: {history:#}");
        }
    }
}
