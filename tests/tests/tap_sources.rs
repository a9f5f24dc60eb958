//! Servers no configuration file of the tap's user names, through
//! `tether tap`, with the real Claude Code CLIs (pinned and newest)
//! against the fake model:
//! - a plugin's server: a Claude Code plugin folder (`.claude-plugin/plugin.json`
//!   and its `.mcp.json`) given with `--plugin-dir`, as the shipped CLI
//!   loads a plugin for one session (its own help lists the flag, and
//!   `--plugin-dir-no-mcp` beside it to load one without its servers);
//! - a project's `.mcp.json` in another folder than the tap's, the
//!   project's servers enabled by the project's own settings
//!   (`enableAllProjectMcpServers`).
//!
//! The tap knows of no server in either. Every MCP tool the fake model was
//! sent (offered, named behind a tool search, called) is recorded as its
//! server's by Claude Code's naming alone (`mcp__SERVER__TOOL`, a plugin's
//! server spelled `plugin_PLUGIN_SERVER`), matching the fake model's log,
//! and nothing else is; the session gets the server's row.

use std::path::{Path, PathBuf};

use tether_tests::tap_run::{TappedRun, run_through_bare_tap, sent_mcp_tools};

/// Where the one server comes from in a run.
#[derive(Debug, Clone, Copy)]
enum Source {
    /// A plugin folder given with `--plugin-dir`.
    Plugin,
    /// A project folder's `.mcp.json`, the CLI run in that folder.
    Project,
}

impl Source {
    /// The server's name as Claude Code spells it to the model.
    fn server(self) -> &'static str {
        match self {
            Source::Plugin => "plugin_tplug_brk",
            Source::Project => "brk",
        }
    }
}

/// `{"mcpServers": {"brk": …}}` for `tether-breaking-mcp`.
fn brk_servers() -> serde_json::Value {
    let brk = tether_tests::workspace_bin("tether-breaking-mcp")
        .display()
        .to_string();
    serde_json::json!({"mcpServers": {"brk": {"command": brk, "args": []}}})
}

fn write(path: &Path, value: &serde_json::Value) {
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("mkdir");
    std::fs::write(path, value.to_string()).expect("write");
}

/// Lays out `source` under `home`: the arguments to give Claude Code and
/// the folder to run it in.
fn lay_out(source: Source, home: &Path) -> (Vec<String>, PathBuf) {
    match source {
        Source::Plugin => {
            let plugin = home.join("plugins-elsewhere/tplug");
            write(
                &plugin.join(".claude-plugin/plugin.json"),
                &serde_json::json!({"name": "tplug", "version": "0.1.0",
                    "description": "a test plugin with one MCP server"}),
            );
            write(&plugin.join(".mcp.json"), &brk_servers());
            let work = home.join("work");
            std::fs::create_dir_all(&work).expect("mkdir");
            (
                vec!["--plugin-dir".into(), plugin.display().to_string()],
                work,
            )
        }
        Source::Project => {
            let project = home.join("another/project");
            write(&project.join(".mcp.json"), &brk_servers());
            write(
                &project.join(".claude/settings.json"),
                &serde_json::json!({"enableAllProjectMcpServers": true}),
            );
            (Vec::new(), project)
        }
    }
}

/// One real Claude Code run at `release` through a tap told of no server,
/// its one server from `source`; `None` where the CLI is not installed (a
/// loud skip).
async fn run(source: Source, release: tether_tests::Release) -> Option<TappedRun> {
    let server = source.server();
    let home = tempfile::tempdir().expect("home");
    run_through_bare_tap(&format!("{server}/echo"), |tap| {
        let program = release.peer("node_modules/.bin/claude")?;
        let (args, cwd) = lay_out(source, home.path());
        let mut cmd = std::process::Command::new(program);
        cmd.args(["-p", "echo something"])
            .args(&args)
            .args(["--allowedTools", &format!("mcp__{server}__echo")])
            .env("ANTHROPIC_API_KEY", "dummy")
            .env("ANTHROPIC_BASE_URL", tap)
            .env("CLAUDE_CODE_MAX_RETRIES", "0")
            .env("PATH", release.path())
            .env("HOME", home.path())
            .current_dir(&cwd);
        Some(cmd)
    })
    .await
}

/// The MCP tools the fake model was sent are the ones the tap recorded,
/// all `source`'s server's by the naming, none unresolved; the session has
/// the server's row, model-visible by `model_tap`.
async fn recorded_as_sent(source: Source, release: tether_tests::Release) {
    let Some(run) = run(source, release).await else {
        return;
    };
    let label = format!("{source:?}, claude ({})", release.label());
    let server = source.server();
    let turns = run.log.turns();
    let stderr = String::from_utf8_lossy(&run.out.stderr);
    assert!(
        !turns.is_empty(),
        "{label} never asked the model (exit {:?}): {stderr}",
        run.out.status.code(),
    );
    let prefix = format!("mcp__{server}__");
    // The fake model's own log: the server's tools as offered (by their
    // descriptions), as named behind a tool search, as called.
    let sent = sent_mcp_tools(&turns, |n| n.starts_with(&prefix) && n.len() > prefix.len());
    assert!(
        !sent.is_empty(),
        "{label}: the model was sent no MCP tool; offered {:?}; stderr {stderr}",
        turns.iter().map(|t| &t.tools).collect::<Vec<_>>(),
    );
    assert!(
        sent.iter().all(|n| n.starts_with(&prefix)),
        "{label}: {sent:?}"
    );
    run.assert_recorded_as_sent(&label, &sent, server);
    run.model_visible_row(&label, server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_s_server_pinned() {
    recorded_as_sent(Source::Plugin, tether_tests::Release::Pinned).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_s_server_newest() {
    recorded_as_sent(Source::Plugin, tether_tests::Release::Newest).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_file_in_another_folder_pinned() {
    recorded_as_sent(Source::Project, tether_tests::Release::Pinned).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_file_in_another_folder_newest() {
    recorded_as_sent(Source::Project, tether_tests::Release::Newest).await;
}
