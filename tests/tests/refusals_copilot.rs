//! Refused calls, run for real: Copilot CLI 1.0.102 (the pin, which is
//! npm's newest) offline against the fake model and a server that counts
//! the `tools/call` requests it receives (`tether-pinned-mcp` with
//! `TETHER_CALL_LOG`). For each gate it has (no `--allow-tool` in a `-p`
//! run, a `--deny-tool` rule, a preToolUse hook that denies) the server's
//! log shows no call,
//! the fake model's log shows the model made it, and the session's own
//! records, read as `tether sessions` reads them, give the tool row a
//! refusal with its reason, no call and never a use; a tool error reached
//! the server once and reads `tool_error`; an allowed call is a use. Each
//! skips loudly where its CLI (tests/peers, `npm ci`) is not installed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use tether_core::model::ToolRow;
use tether_core::registry::Registry;
use tether_core::spec::{Endpoint, ServerSpec};
use tether_core::vocab::{ReasonCode, ServerSource};
use tether_tests::Release;

/// The counting server's tools: `stamp` answers `ok`, `fail` `isError`.
const TOOLS: &str = r#"[{"name":"stamp","description":"t","inputSchema":{"type":"object","properties":{}}},
 {"name":"fail","description":"t","inputSchema":{"type":"object","properties":{}}},
 {"name":"err","description":"t","inputSchema":{"type":"object","properties":{}}}]"#;

/// A word a hook's reason carries: it must reach nothing Tether gives.
const PLANTED: &str = "planted-refusal-secret-5521";

/// One run's private home, its counting server and what it logged.
struct Run {
    home: tempfile::TempDir,
    server: PathBuf,
    tools: PathBuf,
    log: PathBuf,
}

impl Run {
    fn new() -> Option<Run> {
        let server = tether_tests::workspace_bin("tether-pinned-mcp");
        if !server.is_file() {
            eprintln!("SKIP: tether-pinned-mcp is not built (cargo build -p tether-tests)");
            return None;
        }
        let home = tempfile::tempdir().expect("home");
        let tools = home.path().join("tools.json");
        std::fs::write(&tools, TOOLS).expect("tools");
        let log = home.path().join("calls.log");
        Some(Run {
            home,
            server,
            tools,
            log,
        })
    }

    fn home(&self) -> &Path {
        self.home.path()
    }

    /// The server's entry in Copilot's `mcp-config.json`.
    fn entry(&self) -> serde_json::Value {
        serde_json::json!({
            "type": "local",
            "command": self.server,
            "args": ["--tools", self.tools],
            "env": {"TETHER_CALL_LOG": self.log},
            "tools": ["*"]
        })
    }

    /// The `tools/call` requests the server received, by tool.
    fn received(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// A preToolUse hook command that denies whatever it is asked about,
    /// with a planted reason.
    fn denying_hook(&self) -> PathBuf {
        use std::os::unix::fs::PermissionsExt as _;
        let hook = self.home().join("deny.sh");
        std::fs::write(
            &hook,
            format!(
                "#!/bin/sh\ncat >/dev/null\necho '{{\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"{PLANTED}\"}}'\n"
            ),
        )
        .expect("hook");
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("mode");
        hook
    }

    /// The tool row `tool` of the server `count` in the one session the
    /// records of `kind` under this home show.
    fn row(&self, kind: &str, vars: &[(&str, &str)], tool: &str) -> ToolRow {
        let registry = Registry::with_static().expect("registry");
        let configured = vec![ServerSpec::new(
            "count",
            ServerSource::Profile,
            Endpoint::Stdio {
                command: self.server.display().to_string(),
                args: vec![],
                env: vec![],
                cwd: None,
            },
        )];
        let vars = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let mut records = tether_records::Records::new(
            &registry,
            &tether_records::Home::new(self.home(), vars),
            HashMap::from([(kind.to_owned(), configured)]),
            tether_records::Filter {
                harnesses: vec![kind.to_owned()],
                ..Default::default()
            },
        );
        records.read(true);
        assert_eq!(records.sessions().len(), 1, "{kind}: {:?}", records.files());
        let facts = records.sessions().values().next().expect("one");
        let history = records.history(facts, None).expect("history");
        let attempt = history.current().expect("attempt").clone();
        let shown = format!("{attempt:?}");
        assert!(!shown.contains(PLANTED), "{kind}: the hook's words leaked");
        attempt
            .server("count")
            .and_then(|s| s.tools.iter().find(|t| t.name == tool))
            .cloned()
            .unwrap_or_else(|| panic!("{kind}: no row count/{tool}: {attempt:?}"))
    }
}

/// What the fake model called, over every turn.
fn model_called(sent: &tether_tests::fake_model::ModelLog) -> Vec<String> {
    sent.turns().into_iter().filter_map(|t| t.called).collect()
}

/// A refusal for `reason`: the model called it, the server never got it,
/// and the row has the refusal, no call and no use.
fn assert_refused(label: &str, run: &Run, called: &[String], row: &ToolRow, reason: ReasonCode) {
    assert!(
        called.iter().any(|c| c.contains("stamp")),
        "{label}: the model never called stamp: {called:?}"
    );
    assert_eq!(
        run.received(),
        Vec::<String>::new(),
        "{label}: reached the server"
    );
    assert_eq!(row.calls, 0, "{label}: {row:?}");
    assert!(row.refused_calls >= 1, "{label}: {row:?}");
    assert_eq!(row.refusal(), Some(&reason), "{label}: {row:?}");
    assert!(row.is_refused(), "{label}: {row:?}");
    assert_eq!(
        row.callable.state,
        tether_core::vocab::StageState::No,
        "{label}: {row:?}"
    );
}

/// A tool error: one call reached the server, and it failed with
/// `tool_error`.
fn assert_tool_error(label: &str, run: &Run, row: &ToolRow) {
    assert_eq!(run.received(), ["fail"], "{label}");
    assert_eq!(
        (row.calls, row.failed_calls, row.refused_calls),
        (1, 1, 0),
        "{label}: {row:?}"
    );
    assert_eq!(row.failures, [ReasonCode::ToolError], "{label}: {row:?}");
}

/// An allowed call: one use, nothing refused.
fn assert_used(label: &str, run: &Run, row: &ToolRow) {
    assert_eq!(run.received(), ["stamp"], "{label}");
    assert_eq!(
        (row.calls, row.failed_calls, row.refused_calls),
        (1, 0, 0),
        "{label}: {row:?}"
    );
}

/// Runs Copilot CLI offline (`-p`) with `args`, the fake model calling
/// `count/TOOL`, and `hook` (a preToolUse command) where given.
async fn copilot(tool: &str, args: &[&str], hook: bool) -> Option<(Run, Vec<String>)> {
    let copilot = Release::Pinned
        .peer("node_modules/@github/copilot-linux-x64/copilot")
        .or_else(|| {
            eprintln!("SKIP: Copilot CLI is not installed (run `npm ci` in tests/peers)");
            None
        })?;
    let run = Run::new()?;
    let (model, sent) = tether_tests::fake_model::start_model(&format!("count/{tool}")).await;
    let dir = run.home().join(".copilot");
    let work = run.home().join("work");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::create_dir_all(&work).expect("work");
    std::fs::write(
        dir.join("mcp-config.json"),
        serde_json::json!({"mcpServers": {"count": run.entry()}}).to_string(),
    )
    .expect("mcp config");
    let trusted =
        serde_json::json!({"trusted_folders": [work], "trustedFolders": [work]}).to_string();
    std::fs::write(dir.join("config.json"), &trusted).expect("config");
    std::fs::write(dir.join("settings.json"), &trusted).expect("settings");
    if hook {
        let hooks = work.join(".github/hooks");
        std::fs::create_dir_all(&hooks).expect("hooks");
        let command = run.denying_hook();
        std::fs::write(
            hooks.join("deny.json"),
            serde_json::json!({"version": 1, "hooks": {"preToolUse": [
                {"type": "command", "bash": command, "timeoutSec": 10}]}})
            .to_string(),
        )
        .expect("hook config");
    }
    let mut cmd = std::process::Command::new(&copilot);
    cmd.args(["-p", "what time is it"])
        .args(args)
        .current_dir(&work)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", run.home())
        .env("COPILOT_OFFLINE", "true")
        .env("COPILOT_AUTO_UPDATE", "false")
        .env("COPILOT_PKG_CACHE_HOME", run.home().join("pkg"))
        .env("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", model.base()))
        .env("COPILOT_PROVIDER_API_KEY", "dummy")
        .env("COPILOT_MODEL", "gpt-4o");
    let out = tether_tests::output_within(cmd, 120);
    assert!(
        out.status.success(),
        "copilot: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let called = model_called(&sent);
    tether_tests::keep_home(&format!("refusals-copilot-{tool}"), run.home());
    Some((run, called))
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
    assert_tool_error("copilot fail", &run, &run.row("copilot", &[], "fail"));
    let Some((run, _)) = copilot("err", &all, false).await else {
        return;
    };
    let row = run.row("copilot", &[], "err");
    assert_eq!(run.received(), ["err"]);
    assert_eq!(
        (row.calls, row.failed_calls, row.refused_calls),
        (1, 1, 0),
        "{row:?}"
    );
    assert_eq!(row.failures, [ReasonCode::ProtocolError], "{row:?}");
    let Some((run, _)) = copilot("stamp", &all, false).await else {
        return;
    };
    assert_used("copilot allow", &run, &run.row("copilot", &[], "stamp"));
}
