//! `tether probe --passthrough`: materialization without secrets in files or
//! arguments, a kind without a strategy, and the real Claude Code and Codex
//! CLIs reaching `active` through the sentinel with nothing left running.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tether_core::vocab::StageState;

use tether_core::probe::Verdict;
use tether_core::registry::Registry;
use tether_core::vocab::{EvidenceKind, ReasonCode, ServerSource};
use tether_core::{Endpoint, KeyValue, ServerSpec};
use tether_probe::support::{ProbeOutcome, ProbeTarget};
use tether_probe::{PassthroughOptions, run_passthrough_probe};
// Links the first-party plugins, so `Registry::with_static` has them.
use tether_tests as _;

fn options(kind: &str, program: &Path, args: &[&str]) -> PassthroughOptions {
    PassthroughOptions {
        kind: kind.into(),
        target: ProbeTarget {
            grace: Duration::from_secs(10),
            bridge_program: Some(PathBuf::from(env!("CARGO_BIN_EXE_tether-test-bridge"))),
            ..ProbeTarget::new(program.display().to_string(), args)
        },
    }
}

async fn probe(opts: PassthroughOptions) -> ProbeOutcome {
    run_passthrough_probe(Registry::with_static().expect("registry"), opts, |_| {}).await
}

/// Processes still running in (or under) the probe's working directory.
fn processes_in(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let pid = entry.file_name().to_string_lossy().to_string();
        if !pid.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        // A deleted directory reads back as "<path> (deleted)": compare as text.
        if let Ok(cwd) = std::fs::read_link(entry.path().join("cwd"))
            && cwd.to_string_lossy().starts_with(&*dir.to_string_lossy())
        {
            let cmd = std::fs::read_to_string(entry.path().join("cmdline")).unwrap_or_default();
            found.push(format!("{pid}: {}", cmd.replace('\0', " ")));
        }
    }
    found
}

async fn assert_nothing_left(dir: &Path) {
    for _ in 0..40 {
        if processes_in(dir).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("left running: {:?}", processes_in(dir));
}

fn peer(bin: &str) -> Option<PathBuf> {
    tether_tests::peer(&format!("node_modules/.bin/{bin}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_materialization_keeps_secrets_out_of_the_file_and_the_arguments() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("seen");
    std::fs::create_dir(&out).expect("mkdir");
    // A stand-in `claude` that records what it was given, then exits.
    let script = dir.path().join("fake-claude");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > {out}/args\ncp \"$2\" {out}/config.json\nstat -c %a \"$2\" > {out}/mode\nenv | grep -c '^TETHER_MCP_' > {out}/env-count\necho \"$2\" > {out}/path\n",
            out = out.display()
        ),
    )
    .expect("script");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let secrets = [
        "Env-Secret-0a1b2c3d4e",
        "Header-Secret-9z8y7x6w",
        "arg-secret-5566778899",
    ];
    let mut opts = options("claude", &script, &["-p", "hi"]);
    opts.target.grace = Duration::from_millis(500);
    opts.target.extra_servers = vec![
        ServerSpec::new(
            "local",
            ServerSource::Profile,
            Endpoint::Stdio {
                command: "mcp-server-x".into(),
                args: vec!["--token".into(), secrets[2].into()],
                env: vec![KeyValue::new("API_KEY", secrets[0])],
                cwd: None,
            },
        ),
        ServerSpec::new(
            "remote",
            ServerSource::Profile,
            Endpoint::Http {
                url: "https://mcp.example.com/mcp".into(),
                headers: vec![KeyValue::new(
                    "Authorization",
                    format!("Bearer {}", secrets[1]),
                )],
            },
        ),
    ];
    let outcome = probe(opts).await;
    let read = |name: &str| std::fs::read_to_string(out.join(name)).expect(name);
    let config = read("config.json");
    let args = read("args");
    for s in secrets {
        assert!(
            !config.contains(s),
            "{s} in the materialized file:\n{config}"
        );
        assert!(!args.contains(s), "{s} in the arguments:\n{args}");
        let printed = serde_json::to_string(&outcome.report).expect("json");
        assert!(!printed.contains(s), "{s} in the report");
    }
    assert!(config.contains("${TETHER_MCP_"), "{config}");
    assert_eq!(read("mode").trim(), "600");
    assert!(read("env-count").trim().parse::<u32>().expect("count") >= 3);
    assert!(
        args.starts_with("--mcp-config\n") && args.contains("--strict-mcp-config"),
        "{args}"
    );
    let path = read("path");
    assert!(
        !Path::new(path.trim()).exists(),
        "the materialized file is removed afterwards"
    );
    // A stand-in that exits without connecting: delivered to a process
    // that exited, not failed.
    assert_eq!(outcome.report.verdict, Verdict::AgentExited);
    assert_eq!(
        outcome.report.agent_exit.as_ref().and_then(|e| e.code),
        Some(0)
    );
    assert!(outcome.report.session.accepted);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kind_without_a_strategy_is_unavailable_no_strategy_and_nothing_starts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("started");
    let script = dir.path().join("fake-aider");
    std::fs::write(&script, format!("#!/bin/sh\ntouch {}\n", marker.display())).expect("script");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let outcome = probe(options("aider", &script, &[])).await;
    assert_eq!(outcome.report.verdict, Verdict::Unavailable);
    let row = &outcome.report.report.as_ref().expect("report").servers[0];
    assert_eq!(row.reason_code, Some(ReasonCode::NoStrategy));
    assert!(
        !marker.exists(),
        "nothing to deliver, so nothing is started"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_claude_cli_reaches_active_and_reports_its_servers() {
    let Some(claude) = peer("claude") else { return };
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let outcome = probe(options(
        "claude",
        &claude,
        &["-p", "hi", "--output-format", "stream-json", "--verbose"],
    ))
    .await;
    let r = &outcome.report;
    assert_eq!(r.verdict, Verdict::Active, "{r:#?}");
    assert_eq!(
        r.sentinel.client.as_ref().map(|c| c.name.as_str()),
        Some("claude-code")
    );
    let attempt = r.report.as_ref().expect("report");
    let reported = attempt
        .evidence
        .iter()
        .find(|e| {
            e.kind == EvidenceKind::AgentReported
                && e.server.as_deref() == Some(r.sentinel.name.as_str())
        })
        .expect("Claude's own system/init report is recorded");
    // With MCP_CONNECTION_NONBLOCKING=false, Claude reports the sentinel
    // connected, and its tool: visible, or (its tool search on, as it is
    // against Anthropic's own API) held behind the search.
    assert_eq!(reported.reported_status.as_deref(), Some("connected"));
    let row = attempt.server(&r.sentinel.name).expect("row");
    assert_reported_tools(attempt, &r.sentinel.name, 1);
    assert_eq!(
        row.tools.iter().any(|t| t.is_deferred()),
        reported.tool_count.is_none()
    );
    assert_nothing_left(outcome.cwd_sent.as_deref().expect("cwd")).await;
}

/// GIVEN Claude Code's newest release, whose tool search is on by default
/// WHEN it is probed THEN its init line lists the sentinel's tool beside
/// `ToolSearch`: the report settles on that (no wait for a count that never
/// comes), the sentinel is active by its own tools/list, and its tool is
/// held behind the search: deferred, never said to reach the model (the
/// model is sent no MCP tool until it searches, as the sessions test shows
/// against the fake model's log).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_newest_claude_holds_the_sentinel_s_tool_behind_its_tool_search() {
    let release = tether_tests::Release::Newest;
    let Some(claude) = release.peer("node_modules/.bin/claude") else {
        return;
    };
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let mut opts = options(
        "claude",
        &claude,
        &["-p", "hi", "--output-format", "stream-json", "--verbose"],
    );
    opts.target.env = vec![("PATH".into(), release.path())];
    let outcome = probe(opts).await;
    let r = &outcome.report;
    assert_eq!(r.verdict, Verdict::Active, "{r:#?}");
    let attempt = r.report.as_ref().expect("report");
    let row = attempt.server(&r.sentinel.name).expect("row");
    assert_eq!(row.stages.tools_listed.state, StageState::Yes, "{row:#?}");
    assert_ne!(row.stages.model_visible.state, StageState::Yes, "{row:#?}");
    assert!(!row.tools.is_empty(), "{row:#?}");
    for tool in &row.tools {
        assert!(tool.is_deferred(), "{tool:#?}");
    }
    assert_nothing_left(outcome.cwd_sent.as_deref().expect("cwd")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_codex_cli_reaches_active_though_it_never_exits() {
    let Some(codex) = peer("codex") else { return };
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let mut opts = options("codex", &codex, &["exec", "--skip-git-repo-check", "hi"]);
    opts.target.timeout = Duration::from_secs(20);
    let started = std::time::Instant::now();
    let outcome = probe(opts).await;
    let r = &outcome.report;
    assert_eq!(r.verdict, Verdict::Active, "{r:#?}");
    assert_eq!(
        r.sentinel.client.as_ref().map(|c| c.name.as_str()),
        Some("codex-mcp-client")
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_nothing_left(outcome.cwd_sent.as_deref().expect("cwd")).await;
}

/// GIVEN the real Claude CLI offered three real third-party stdio servers beside
/// the sentinel WHEN the sentinel's tools/list comes before Claude's
/// `system/init` THEN the probe still waits (within the grace window) for
/// Claude's own report, the only evidence there is for third-party servers,
/// and every row carries it (one whose name is also one of its arguments too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_claude_cli_reports_third_party_servers_before_the_probe_ends() {
    let Some(claude) = peer("claude") else { return };
    let Some(everything) = tether_tests::peer("node_modules/.bin/mcp-server-everything") else {
        return;
    };
    let Some(time) = tether_tests::peer(".venv/bin/mcp-server-time") else {
        return;
    };
    let Some(memory) = tether_tests::peer("node_modules/.bin/mcp-server-memory") else {
        return;
    };
    let stdio = |name: &str, command: &Path, args: &[&str]| {
        tether_tests::stdio_server(name, &command.display().to_string(), args, &[])
    };
    let mut opts = options(
        "claude",
        &claude,
        &["-p", "hi", "--output-format", "stream-json", "--verbose"],
    );
    opts.target.grace = Duration::from_secs(20);
    opts.target.timeout = Duration::from_secs(60);
    // `notes` is also one of its own arguments (`… notes start`), a value the
    // scrubber redacts: its row must keep its evidence all the same.
    opts.target.extra_servers = vec![
        stdio("every", &everything, &[]),
        stdio("time", &time, &[]),
        stdio("notes", &memory, &["notes", "start"]),
    ];
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let outcome = probe(opts).await;
    let r = &outcome.report;
    assert_eq!(r.verdict, Verdict::Active, "{r:#?}");
    let attempt = r.report.as_ref().expect("report");
    assert_eq!(attempt.unattributed_evidence, 0, "{attempt:#?}");
    for name in ["every", "time", "notes"] {
        let reported = attempt
            .evidence
            .iter()
            .find(|e| e.kind == EvidenceKind::AgentReported && e.server.as_deref() == Some(name))
            .unwrap_or_else(|| {
                panic!(
                    "no report from Claude about {name}: {:#?}",
                    attempt.evidence
                )
            });
        assert_eq!(reported.reported_status.as_deref(), Some("connected"));
        assert_reported_tools(attempt, name, 1);
        let row = attempt.server(name).expect("row");
        assert_eq!(row.status, tether_core::DisplayStatus::Active, "{row:#?}");
    }
}

/// Claude's init line named at least `least` tools of `server`, either way
/// it can: counted as listed (the harness's own list: never said to reach
/// the model, issue 67), or each held behind its tool search (deferred:
/// none is said to reach the model).
fn assert_reported_tools(
    attempt: &tether_core::history::AttachmentAttempt,
    server: &str,
    least: usize,
) {
    let count = attempt
        .evidence
        .iter()
        // (Claude's own count, not the sentinel's listing.)
        .filter(|e| {
            e.kind == EvidenceKind::ToolsListObserved
                && e.provenance == tether_core::vocab::Provenance::AgentReport
                && e.server.as_deref() == Some(server)
        })
        .find_map(|e| e.tool_count);
    let deferred = attempt
        .evidence
        .iter()
        .filter(|e| e.kind == EvidenceKind::ToolDeferred && e.server.as_deref() == Some(server))
        .count();
    let row = attempt.server(server).expect("row");
    match count {
        Some(n) => {
            assert!(
                n as usize >= least && deferred == 0,
                "{server}: {n} listed, {deferred} deferred"
            );
            assert_ne!(row.stages.model_visible.state, StageState::Yes, "{row:#?}");
            assert_eq!(row.stages.tools_listed.state, StageState::Yes, "{row:#?}");
        }
        None => {
            assert!(
                deferred >= least,
                "{server}: no count and {deferred} deferred"
            );
            assert_ne!(row.stages.model_visible.state, StageState::Yes, "{row:#?}");
            assert_eq!(row.stages.tools_listed.state, StageState::Yes, "{row:#?}");
        }
    }
}

/// One real passthrough CLI, probed as a new user would: `active` through
/// the sentinel, the CLI's own MCP client named, and nothing left running.
async fn real_cli_is_active(
    kind: &str,
    bin: &str,
    args: &[&str],
    env: &[(&str, &str)],
    client: &str,
) -> Option<ProbeOutcome> {
    let program = peer(bin)?;
    let mut opts = options(kind, &program, args);
    opts.target.env = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    opts.target.timeout = Duration::from_secs(60);
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let outcome = probe(opts).await;
    let r = &outcome.report;
    assert_eq!(r.verdict, Verdict::Active, "{kind}: {r:#?}");
    let seen = r.sentinel.client.as_ref().map(|c| c.name.as_str());
    assert!(
        seen.is_some_and(|name| name.starts_with(client)),
        "{kind}: client {seen:?}"
    );
    assert_nothing_left(outcome.cwd_sent.as_deref().expect("cwd")).await;
    Some(outcome)
}

/// The sentinel's `agent_reported` evidence: (status, tool count) in order.
fn sentinel_reports(outcome: &ProbeOutcome) -> Vec<(Option<String>, Option<u32>)> {
    let r = &outcome.report;
    r.report
        .as_ref()
        .expect("report")
        .evidence
        .iter()
        .filter(|e| {
            e.kind == EvidenceKind::AgentReported
                && e.server.as_deref() == Some(r.sentinel.name.as_str())
        })
        .map(|e| (e.reported_status.clone(), e.tool_count))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_gemini_cli_reaches_active_from_its_project_settings() {
    let Some(outcome) = real_cli_is_active(
        "gemini",
        "gemini",
        &["-p", "hi", "--output-format", "stream-json"],
        &[("GEMINI_API_KEY", "dummy-not-a-key")],
        "gemini-cli-mcp-client",
    )
    .await
    else {
        return;
    };
    // Gemini's stream-json names no servers: nothing is made up from it.
    assert!(sentinel_reports(&outcome).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_qwen_cli_reaches_active_and_reports_the_sentinel_connected() {
    let Some(outcome) = real_cli_is_active(
        "qwen",
        "qwen",
        &[
            "-p",
            "hi",
            "--auth-type",
            "openai",
            "--output-format",
            "stream-json",
        ],
        &[
            ("OPENAI_API_KEY", "dummy-not-a-key"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
            ("OPENAI_MODEL", "gpt-4o"),
        ],
        "qwen-cli-mcp-client",
    )
    .await
    else {
        return;
    };
    assert!(
        sentinel_reports(&outcome).contains(&(Some("connected".into()), Some(1))),
        "{:?}",
        sentinel_reports(&outcome)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_copilot_cli_reaches_active_and_its_events_become_reports() {
    let Some(outcome) = real_cli_is_active(
        "copilot",
        "copilot",
        &["-p", "hi", "--allow-all-tools", "--output-format", "json"],
        &[
            ("COPILOT_OFFLINE", "true"),
            ("COPILOT_PROVIDER_BASE_URL", "http://127.0.0.1:9/v1"),
            ("COPILOT_PROVIDER_API_KEY", "dummy-not-a-key"),
            ("COPILOT_MODEL", "gpt-4o"),
        ],
        "copilot-cli",
    )
    .await
    else {
        return;
    };
    let reports = sentinel_reports(&outcome);
    assert!(
        reports.contains(&(Some("connected".into()), None)) && reports.contains(&(None, Some(1))),
        "{reports:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_opencode_run_reaches_active_from_opencode_config() {
    real_cli_is_active("opencode", "opencode", &["run", "hi"], &[], "opencode").await;
}

/// GIVEN a working directory that already has `.gemini/settings.json` WHEN
/// the Gemini plugin would materialize there THEN the user's file stays as
/// it was and every delivered server says `materialization_failed`; in a
/// clean directory the settings file is written and removed again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_settings_file_is_never_overwritten_and_ours_is_removed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join(".gemini")).expect("mkdir");
    std::fs::write(project.join(".gemini/settings.json"), "{\"mine\":true}").expect("write");
    let script = dir.path().join("fake-gemini");
    let seen = dir.path().join("seen.json");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ncp .gemini/settings.json {}\n", seen.display()),
    )
    .expect("script");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");

    let mut opts = options("gemini", &script, &[]);
    opts.target.cwd = Some(project.clone());
    opts.target.grace = Duration::from_millis(300);
    let outcome = probe(opts).await;
    let row = &outcome.report.report.as_ref().expect("report").servers[0];
    assert_eq!(row.reason_code, Some(ReasonCode::MaterializationFailed));
    assert!(
        row.summary
            .as_deref()
            .unwrap_or("")
            .contains("never overwrites"),
        "{row:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(project.join(".gemini/settings.json")).expect("read"),
        "{\"mine\":true}"
    );
    assert!(!seen.exists(), "nothing started");

    let clean = dir.path().join("clean");
    std::fs::create_dir(&clean).expect("mkdir");
    let mut opts = options("gemini", &script, &[]);
    opts.target.cwd = Some(clean.clone());
    opts.target.grace = Duration::from_millis(300);
    let outcome = probe(opts).await;
    // The stand-in exits at once without connecting.
    assert_eq!(outcome.report.verdict, Verdict::AgentExited);
    let written = std::fs::read_to_string(&seen).expect("the CLI read its settings");
    assert!(written.contains("tether-sentinel") && written.contains("httpUrl"));
    assert!(!clean.join(".gemini").exists(), "our settings are removed");
}

/// GIVEN the Cursor plugin (no Cursor CLI installs from a registry, so a
/// stand-in reads what Cursor would) WHEN it is probed with a stdio server
/// carrying secrets THEN `.cursor/mcp.json` appears in the working directory
/// for the run with `${env:…}` references only, the values reach the process
/// environment, and the file and its directory are gone afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cursor_project_file_holds_references_only_and_is_removed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let project = dir.path().join("project");
    std::fs::create_dir(&project).expect("mkdir");
    let seen = dir.path().join("seen");
    std::fs::create_dir(&seen).expect("mkdir");
    let script = dir.path().join("fake-cursor-agent");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncp .cursor/mcp.json {0}/mcp.json\nstat -c %a .cursor/mcp.json > {0}/mode\nenv | grep -c '^TETHER_MCP_' > {0}/env-count\n",
            seen.display()
        ),
    )
    .expect("script");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let secret = "cursor-env-secret-77aa";
    let mut opts = options("cursor", &script, &[]);
    opts.target.cwd = Some(project.clone());
    opts.target.grace = Duration::from_millis(300);
    opts.target.extra_servers = vec![ServerSpec::new(
        "local",
        ServerSource::Profile,
        Endpoint::Stdio {
            command: "/home/someone/bin/mcp-x".into(),
            args: vec!["--stdio".into()],
            env: vec![KeyValue::new("API_KEY", secret)],
            cwd: None,
        },
    )];
    let outcome = probe(opts).await;
    // The stand-in exits at once without connecting.
    assert_eq!(outcome.report.verdict, Verdict::AgentExited);
    let file = std::fs::read_to_string(seen.join("mcp.json")).expect("Cursor's file was there");
    assert!(
        !file.contains(secret) && !file.contains("/home/someone"),
        "{file}"
    );
    let doc: serde_json::Value = serde_json::from_str(&file).expect("json");
    let reference = doc["mcpServers"]["local"]["env"]["API_KEY"]
        .as_str()
        .expect("a reference");
    assert!(
        reference.starts_with("${env:TETHER_MCP_") && reference.ends_with('}'),
        "{reference}"
    );
    assert!(
        doc["mcpServers"]["tether-sentinel"]["url"].is_string(),
        "{file}"
    );
    assert_eq!(
        std::fs::read_to_string(seen.join("mode"))
            .expect("mode")
            .trim(),
        "600"
    );
    assert!(
        std::fs::read_to_string(seen.join("env-count"))
            .expect("count")
            .trim()
            .parse::<u32>()
            .expect("n")
            >= 3
    );
    assert!(
        !project.join(".cursor").exists(),
        "removed with its directory"
    );
    let printed = serde_json::to_string(&outcome.report).expect("json");
    assert!(!printed.contains(secret));
}

/// The sha256 of `value`, as `sha256sum` prints it (hex, then "  -").
fn sha256_line(value: &str) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("sha256sum");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(value.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("sha256sum output");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// GIVEN two real stdio servers whose env both name `SHARED_TOKEN` (and
/// `RECORD_TO`), with different values WHEN a real CLI starts them THEN each
/// records the hash of its own value, never the other's.
async fn each_server_gets_its_own_env(kind: &str, bin: &str, args: &[&str]) {
    let Some(cli) = peer(bin) else { return };
    let Some(memory) = tether_tests::peer("node_modules/.bin/mcp-server-memory") else {
        return;
    };
    let records = tempfile::tempdir().expect("tempdir");
    let token = |name: &str| format!("{name}-token-{}", std::process::id());
    let recording = |name: &str| {
        // Records only a hash of what it got, then is the memory server.
        let script = format!(
            "printf %s \"$SHARED_TOKEN\" | sha256sum > \"$RECORD_TO\"; exec {}",
            memory.display()
        );
        let token = token(name);
        let record_to = records.path().join(name).display().to_string();
        let memory_file = records
            .path()
            .join(format!("{name}.json"))
            .display()
            .to_string();
        tether_tests::stdio_server(
            name,
            "/bin/sh",
            &["-c", &script],
            &[
                ("SHARED_TOKEN", &token),
                ("RECORD_TO", &record_to),
                ("MEMORY_FILE_PATH", &memory_file),
            ],
        )
    };
    let mut opts = options(kind, &cli, args);
    opts.target.timeout = Duration::from_secs(60);
    opts.target.extra_servers = vec![recording("alpha"), recording("beta")];
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let outcome = probe(opts).await;
    assert_eq!(
        outcome.report.verdict,
        Verdict::Active,
        "{kind}: {:#?}",
        outcome.report
    );
    for name in ["alpha", "beta"] {
        let got = std::fs::read_to_string(records.path().join(name))
            .unwrap_or_else(|e| panic!("{kind}: {name} never started: {e}"));
        assert_eq!(
            got.trim(),
            sha256_line(&token(name)),
            "{kind}: {name} did not get its own SHARED_TOKEN"
        );
    }
    assert_nothing_left(outcome.cwd_sent.as_deref().expect("cwd")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_the_real_codex_each_server_gets_its_own_env_values() {
    each_server_gets_its_own_env("codex", "codex", &["exec", "--skip-git-repo-check", "hi"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_the_real_claude_each_server_gets_its_own_env_values() {
    each_server_gets_its_own_env(
        "claude",
        "claude",
        &["-p", "hi", "--output-format", "stream-json", "--verbose"],
    )
    .await;
}

/// A real CLI in a failure mode: it exits before any contact, the probe
/// ends on that exit (not on `--grace` or `--timeout`), the verdict is
/// `agent_exited`, and the report carries the status and the CLI's own words.
async fn real_cli_exits_before_contact(
    kind: &str,
    bin: &str,
    args: &[&str],
    env: &[(&str, &str)],
    says: &str,
) {
    let Some(program) = peer(bin) else { return };
    let mut opts = options(kind, &program, args);
    opts.target.env = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    opts.target.grace = Duration::from_secs(30);
    opts.target.timeout = Duration::from_secs(90);
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let started = std::time::Instant::now();
    let outcome = probe(opts).await;
    let took = started.elapsed();
    let r = &outcome.report;
    assert_eq!(r.verdict, Verdict::AgentExited, "{kind}: {r:#?}");
    assert!(
        took < Duration::from_secs(30),
        "{kind}: the exit ended the wait, yet it took {took:?}"
    );
    let exit = r.agent_exit.as_ref().expect("agent_exit");
    assert!(exit.before_contact, "{kind}: {exit:?}");
    assert!(exit.code.is_some_and(|c| c != 0), "{kind}: {exit:?}");
    assert!(
        exit.stderr_tail.iter().any(|l| l.contains(says)),
        "{kind}: {:?}",
        exit.stderr_tail
    );
    assert!(
        exit.stderr_tail
            .iter()
            .all(|l| !l.contains('\u{1b}') && !l.contains("[91m")),
        "{kind}: terminal escapes in {:?}",
        exit.stderr_tail
    );
    let attempt = r.report.as_ref().expect("attempt");
    let row = attempt.server(&r.sentinel.name).expect("row");
    assert!(
        tether_words::display::status_label_in(attempt, row).contains("to a process that exited"),
        "{kind}"
    );
    assert_nothing_left(outcome.cwd_sent.as_deref().expect("cwd")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_gemini_cli_without_a_key_exits_and_says_so() {
    real_cli_exits_before_contact("gemini", "gemini", &["-p", "hi"], &[], "Auth method").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_copilot_cli_without_a_login_exits_and_says_so() {
    real_cli_exits_before_contact("copilot", "copilot", &["-p", "hi"], &[], "authenticate").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_opencode_run_without_a_provider_exits_and_says_so() {
    real_cli_exits_before_contact(
        "opencode",
        "opencode",
        &["run", "hi"],
        &[("OPENCODE_CONFIG_CONTENT", r#"{"model":"nope/none"}"#)],
        "Error",
    )
    .await;
}
