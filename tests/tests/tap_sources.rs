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
use std::sync::Arc;
use std::time::Duration;

use tether_core::registry::Registry;
use tether_tap::{Tap, TapConfig};

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
/// its one server from `source`. What the fake model was sent, the tap's
/// records, its hub and the run's output; `None` where the CLI is not
/// installed (a loud skip).
async fn run(
    source: Source,
    release: tether_tests::Release,
) -> Option<(
    tether_tests::fake_model::ModelLog,
    Vec<tether_tap::TapRecord>,
    Arc<tether_hub::Hub>,
    std::process::Output,
)> {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    tether_tests::tether_first_party::link();
    let server = source.server();
    let (model, log) = tether_tests::fake_model::start_model(&format!("{server}/echo")).await;
    let registry = Registry::with_static().expect("registry");
    let hub = Arc::new(tether_hub::Hub::new(registry.clone()));
    let config = TapConfig {
        upstream: Some(url::Url::parse(&model.base()).expect("url")),
        ..Default::default()
    };
    let tap = Tap::serve(
        config,
        "127.0.0.1:0".parse().expect("addr"),
        registry,
        Some(Arc::clone(&hub)),
    )
    .await
    .expect("the tap");
    let home = tempfile::tempdir().expect("home");
    let program = release.peer("node_modules/.bin/claude")?;
    let (args, cwd) = lay_out(source, home.path());
    let mut cmd = std::process::Command::new(program);
    cmd.args(["-p", "echo something"])
        .args(&args)
        .args(["--allowedTools", &format!("mcp__{server}__echo")])
        .env("ANTHROPIC_API_KEY", "dummy")
        .env("ANTHROPIC_BASE_URL", tap.base_url())
        .env("CLAUDE_CODE_MAX_RETRIES", "0")
        .env("PATH", release.path())
        .env("HOME", home.path())
        .current_dir(&cwd)
        .stdin(std::process::Stdio::null());
    // Only what is set here (no user's configuration leaks in).
    let envs: Vec<(std::ffi::OsString, std::ffi::OsString)> = cmd
        .get_envs()
        .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned())))
        .collect();
    cmd.env_clear().envs(envs);
    let out = tokio::task::spawn_blocking(move || tether_tests::output_within(cmd, 180))
        .await
        .expect("the run");
    let turns: Vec<_> = log
        .turns()
        .into_iter()
        .filter(|t| tether_tap::api::Api::of(&t.path).is_some())
        .collect();
    // Every request the model answered has its record once the observer
    // read it; bounded.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let records = loop {
        let records: Vec<_> = tap
            .tap()
            .recent()
            .into_iter()
            .filter(|r| r.api.is_some())
            .collect();
        if records.len() >= turns.len() || std::time::Instant::now() > deadline {
            break records;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    tap.tap().settle().await;
    hub.flush().await;
    tap.stop().await;
    Some((log, records, hub, out))
}

/// The MCP tools the fake model was sent are the ones the tap recorded,
/// all `source`'s server's by the naming, none unresolved; the session has
/// the server's row, model-visible by `model_tap`.
async fn recorded_as_sent(source: Source, release: tether_tests::Release) {
    let Some((log, records, hub, out)) = run(source, release).await else {
        return;
    };
    let label = format!("{source:?}, claude ({})", release.label());
    let server = source.server();
    let turns = log.turns();
    assert!(
        !turns.is_empty(),
        "{label} never asked the model (exit {:?}): {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    let shown = |n: &str| tether_core::sanitize::name(n);
    let prefix = format!("mcp__{server}__");
    // The fake model's own log: the server's tools as offered (by their
    // descriptions), as named behind a tool search, as called.
    let sent: std::collections::BTreeSet<String> = turns
        .iter()
        .flat_map(|t| {
            t.origins
                .iter()
                .map(|(n, _)| shown(n))
                .chain(
                    t.named
                        .iter()
                        .filter(|n| n.starts_with(&prefix) && n.len() > prefix.len())
                        .map(|n| shown(n)),
                )
                .chain(
                    t.called
                        .iter()
                        .filter(|c| c.starts_with("mcp__"))
                        .map(|c| shown(c)),
                )
        })
        .collect();
    assert!(
        !sent.is_empty(),
        "{label}: the model was sent no MCP tool; offered {:?}; stderr {}",
        turns.iter().map(|t| &t.tools).collect::<Vec<_>>(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        sent.iter().all(|n| n.starts_with(&prefix)),
        "{label}: {sent:?}"
    );
    let tools: Vec<&tether_tap::TapTool> = records
        .iter()
        .flat_map(|r| r.offered.iter().chain(&r.deferred).chain(&r.called))
        .collect();
    let recorded: std::collections::BTreeSet<String> = tools
        .iter()
        .filter(|t| t.server.is_some())
        .map(|t| t.name.clone())
        .collect();
    assert_eq!(recorded, sent, "{label}: the MCP tools, recorded and sent");
    for t in &tools {
        assert!(!t.unresolved, "{label}: {t:?}");
        if let Some(s) = &t.server {
            assert_eq!(s, server, "{label}: {t:?}");
            assert_eq!(t.by, Some("naming"), "{label}: {t:?}");
        }
    }
    let sessions: std::collections::BTreeSet<_> =
        records.iter().filter_map(|r| r.session.clone()).collect();
    assert_eq!(sessions.len(), 1, "{label}: {sessions:?}");
    let session = sessions.into_iter().next().expect("one");
    let history = hub.snapshot(&session).expect("the session");
    let row = history
        .current()
        .and_then(|a| a.server(server))
        .unwrap_or_else(|| panic!("{label}: no {server} row: {history:?}"));
    assert_eq!(
        row.stages.model_visible.state,
        tether_core::vocab::StageState::Yes,
        "{label}: {row:?}"
    );
    assert_eq!(
        row.stages.model_visible.provenance,
        Some(tether_core::model::ProvenanceCode::ModelTap),
        "{label}"
    );
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
