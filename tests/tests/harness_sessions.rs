//! Real harness sessions, offline, pointed at Tether's receiver the way
//! `tether collect --print-env HARNESS` says: each pinned CLI runs one
//! session against the fake model (which asks for one MCP tool call) with
//! three servers — `time` works, `broken` is a command that does not exist,
//! `authy` answers 401 with OAuth metadata — and the collected session must
//! show what that harness's telemetry proves, never more.
//!
//! Each skips loudly where its CLI (tests/peers, `npm ci`) or
//! `mcp-server-time` (tests/peers/.venv) is not installed. Waits end on the
//! evidence, or a while after the CLI exits (its exporter flushes on exit),
//! or at the test's own bound.

use std::collections::HashMap;

use tether_core::history::{AttachmentAttempt, ServerAttachment};
use tether_core::registry::Registry;
use tether_core::spec::{Endpoint, ServerSpec};
use tether_core::telemetry::TelemetrySetup;
use tether_core::vocab::{DisplayStatus, ReasonCode, ServerSource, StageState};
use tether_tests::Release;
use tether_tests::collected::{collect_session, receiver_and_setup, setup_env};

struct Peers {
    time: String,
    model: tether_tests::fake_model::Running,
    /// What the model was sent: the ground truth of the last mile.
    sent: tether_tests::fake_model::ModelLog,
    auth: tether_tests::fake_model::Running,
}

async fn peers(cli: &str) -> Option<(Peers, std::path::PathBuf)> {
    peers_of(Release::Pinned, cli).await
}

async fn peers_of(release: Release, cli: &str) -> Option<(Peers, std::path::PathBuf)> {
    let Some(program) = release.peer(cli) else {
        eprintln!("SKIP: {cli} is not installed (run `npm ci` in tests/peers)");
        return None;
    };
    let Some(time) = tether_tests::peer(".venv/bin/mcp-server-time") else {
        eprintln!("SKIP: mcp-server-time is not installed (tests/peers/.venv)");
        return None;
    };
    let (model, sent) = tether_tests::fake_model::start_model("get_current_time").await;
    let (auth, _) = tether_tests::fake_model::start_auth().await;
    Some((
        Peers {
            time: time.display().to_string(),
            model,
            sent,
            auth,
        },
        program,
    ))
}

fn configured(peers: &Peers) -> Vec<ServerSpec> {
    let stdio = |command: &str| Endpoint::Stdio {
        command: command.into(),
        args: vec![],
        env: vec![],
        cwd: None,
    };
    vec![
        ServerSpec::new("time", ServerSource::Profile, stdio(&peers.time)),
        ServerSpec::new("broken", ServerSource::Profile, stdio("/nonexistent/bin")),
        ServerSpec::new(
            "authy",
            ServerSource::Profile,
            Endpoint::Http {
                url: format!("{}/mcp", peers.auth.base()),
                headers: vec![],
            },
        ),
    ]
}

/// `kind`'s one session on disk under `home` (`vars` its variables, as
/// the harness ran), read alone: every file read without an error or a
/// refusal.
fn on_disk(
    kind: &str,
    home: &std::path::Path,
    vars: &[(String, String)],
    configured: Vec<ServerSpec>,
) -> (tether_records::Records, AttachmentAttempt) {
    let registry = Registry::with_static().expect("registry");
    let home = tether_records::Home::new(home, vars.iter().cloned().collect());
    let filter = tether_records::Filter {
        harnesses: vec![kind.to_owned()],
        ..Default::default()
    };
    let mut records = tether_records::Records::new(
        &registry,
        &home,
        HashMap::from([(kind.to_owned(), configured)]),
        filter,
    );
    records.read(true);
    let files = records.files();
    eprintln!("{kind} records: {files:?}");
    assert_eq!(records.sessions().len(), 1, "{kind}: one session on disk");
    for file in &files {
        assert_eq!(file.error, None, "{kind}: {file:?}");
        assert_eq!(file.refused, 0, "{kind}: {file:?}");
    }
    let facts = records.sessions().values().next().expect("one session");
    let alone = records.history(facts, None).expect("a history");
    let alone = alone.current().expect("an attempt").clone();
    (records, alone)
}

/// What the harness wrote to disk about the same session, read as `tether
/// sessions` reads it: exactly one session of `kind`, with the live
/// session's id; imported into a store holding the live session, it is
/// merged (one session, one attempt, no row weakened) and importing it
/// again changes nothing. Returns the session's attempt as its records
/// alone show it (today's configuration giving the rows).
fn recorded(
    kind: &str,
    home: &std::path::Path,
    vars: &[(String, String)],
    configured: Vec<ServerSpec>,
    live: &AttachmentAttempt,
) -> AttachmentAttempt {
    let home_dir = home;
    let (records, alone) = on_disk(kind, home, vars, configured);
    let ids: Vec<&String> = records.sessions().keys().collect();
    assert_eq!(
        ids,
        [&live.session_id],
        "{kind}: the session on disk is the one collected live"
    );

    // Merged into the store that holds the live session: one session.
    let dir = tempfile::tempdir().expect("dir");
    let store = tether_store::SqliteStore::open(&dir.path().join("t.db")).expect("store");
    let mut live_history = tether_core::history::AttachmentHistory::new(
        live.task_id.as_str(),
        live.session_id.as_str(),
    );
    live_history.revision = 1;
    live_history.current_attempt_id = Some(live.attempt_id.clone());
    live_history.attempts = vec![live.clone()];
    use tether_core::store::Store as _;
    store.save(&live_history).expect("save live");
    let first = records.import(&store, None).expect("import");
    assert_eq!((first.new, first.updated), (0, 1), "{kind}: {first:?}");
    let again = records.import(&store, None).expect("import again");
    assert_eq!(
        again.unchanged, 1,
        "{kind}: importing twice changes nothing"
    );
    let all = store.load_all().expect("load").histories;
    assert_eq!(all.len(), 1, "{kind}: one session, not two");
    let merged = all[0].current().expect("current");
    assert_eq!(
        merged.attempt_id, live.attempt_id,
        "{kind}: merged into the live attempt"
    );
    assert_eq!(all[0].attempts.len(), 1, "{kind}");
    for row in &live.servers {
        let after = merged.server(&row.name).expect("the live row stays");
        for stage in tether_core::vocab::Stage::ALL {
            if row.stages.get(stage).state == StageState::Yes {
                assert_eq!(
                    after.stages.get(stage).state,
                    StageState::Yes,
                    "{kind}/{}: {stage:?} shown live stays shown",
                    row.name
                );
            }
        }
        if row.status == DisplayStatus::Failed {
            assert_eq!(after.status, DisplayStatus::Failed, "{kind}/{}", row.name);
        }
    }
    for (source, attempt) in [("collected", live), ("records", &alone), ("merged", merged)] {
        stages_agree(kind, source, attempt);
    }
    inventory_sessions(kind, home_dir, vars);
    alone
}

/// The stages of a real session agree with each other, whatever the
/// source: the ladder is monotone (nothing `yes` above a stage on its path
/// that is not), and a server whose tool was called or shown to the model
/// is active.
fn stages_agree(kind: &str, source: &str, attempt: &AttachmentAttempt) {
    use tether_core::vocab::Stage;
    for row in &attempt.servers {
        let top = Stage::PATH
            .iter()
            .rposition(|s| row.stages.get(*s).state == StageState::Yes);
        for stage in &Stage::PATH[..top.map_or(0, |t| t)] {
            assert_eq!(
                row.stages.get(*stage).state,
                StageState::Yes,
                "{kind} ({source}) {}: {stage:?} below a later stage's yes: {:?}",
                row.name,
                row.stages
            );
        }
        if row
            .tools
            .iter()
            .any(|t| t.calls > 0 || t.model_visible.state == StageState::Yes)
        {
            assert_eq!(
                row.status,
                DisplayStatus::Active,
                "{kind} ({source}) {}: its tool was shown or called",
                row.name
            );
        }
    }
}

/// `tether inventory --sessions` over the same home: wherever the home's
/// configuration has `time` (every harness but Claude, whose test hands its
/// servers over with --mcp-config), its tool is a row the session showed to
/// the model, from the harness's own record.
fn inventory_sessions(kind: &str, home: &std::path::Path, vars: &[(String, String)]) {
    let out = std::process::Command::new(tether_tests::workspace_bin("tether"))
        .args([
            "inventory",
            "--sessions",
            "--json",
            "--harness",
            kind,
            "--project",
        ])
        .arg(home)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .envs(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .output()
        .expect("tether inventory");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one document");
    let rows = doc["rows"].as_array().expect("rows");
    let configured = rows
        .iter()
        .any(|r| r["kind"] == "mcp_server" && r["name"] == "time");
    // Claude's sessions get their servers from --mcp-config, not the home.
    assert_eq!(configured, kind != "claude", "{kind}: {rows:#?}");
    if configured {
        let tool = rows
            .iter()
            .find(|r| r["kind"] == "mcp_tool" && r["name"] == "time/get_current_time")
            .unwrap_or_else(|| panic!("{kind}: no tool row from the session: {rows:#?}"));
        assert_eq!(
            tool["stages"]["model_visible"]["state"], "yes",
            "{kind}: {tool:#}"
        );
        assert_eq!(
            tool["stages"]["model_visible"]["provenance"], "harness_record",
            "{kind}"
        );
        // The model saw its tool, so the tool was listed (implied, and said).
        assert_eq!(tool["stages"]["tools_listed"]["state"], "yes", "{kind}");
        let server = rows
            .iter()
            .find(|r| r["kind"] == "mcp_server" && r["name"] == "time")
            .expect("the server row");
        let listed = &server["stages"]["tools_listed"];
        assert_eq!(listed["state"], "yes", "{kind}: {server:#}");
        assert!(
            // A later stage that was shown: the model seeing the tool, a
            // call, or a call that succeeded (each proves the listing).
            ["model_visible", "called", "callable"]
                .contains(&listed["implied_by"].as_str().unwrap_or("")),
            "{kind}: says what implied it: {server:#}"
        );
    }
}

/// The session's records show `time`'s tool used (a call that succeeded).
fn used_on_disk(attempt: &AttachmentAttempt) -> bool {
    attempt.server("time").is_some_and(|r| {
        r.tools
            .iter()
            .any(|t| t.name == "get_current_time" && t.calls >= 1 && t.failed_calls == 0)
    })
}

fn row<'a>(attempt: &'a AttachmentAttempt, name: &str) -> &'a ServerAttachment {
    attempt
        .server(name)
        .unwrap_or_else(|| panic!("no row {name}"))
}

/// How `kind`'s plugin says the harness spells `server`'s `tool` to the
/// model: the rule the last-mile checks below verify against the fake
/// model's log.
fn model_name(kind: &str, server: &str, tool: &str) -> String {
    Registry::with_static()
        .expect("registry")
        .harness(kind)
        .and_then(|h| h.roles.last_mile?.model_tool_name(server, tool))
        .unwrap_or_else(|| panic!("{kind}: no spelling for {server}/{tool}"))
}

/// The last mile, for any harness: no claim Tether makes about the time
/// server's tools, from the harness's records or its telemetry, contradicts
/// what the fake model was sent (each tool spelled as `kind`'s plugin says
/// the harness sends it). Returns the comparison of the records, for the
/// harnesses whose records name every request's tools.
fn no_wrong_last_mile(
    kind: &str,
    disk: &AttachmentAttempt,
    live: &AttachmentAttempt,
    sent: &tether_tests::fake_model::ModelLog,
) -> tether_tests::last_mile::LastMile {
    let names = tether_tests::last_mile::sent(sent);
    eprintln!("{kind}: the model was sent {names:?}");
    let compare = |said| {
        tether_tests::last_mile::compare(said, sent, &["time"], |s, t| model_name(kind, s, t))
    };
    let live = compare(live);
    assert!(
        live.wrong.is_empty(),
        "{kind} (telemetry): {:#?}\nsent: {names:?}",
        live.wrong
    );
    let records = compare(disk);
    assert!(
        records.wrong.is_empty(),
        "{kind} (records): {:#?}\nsent: {names:?}",
        records.wrong
    );
    records
}

fn used(attempt: &AttachmentAttempt) -> bool {
    attempt
        .server("time")
        .and_then(|r| r.last_tool_call.as_ref())
        .is_some_and(|c| c.ok)
}

fn never_connected(attempt: &AttachmentAttempt, name: &str) {
    let r = row(attempt, name);
    assert_ne!(r.stages.initialized.state, StageState::Yes, "{name}: {r:?}");
    assert_ne!(r.status, DisplayStatus::Active, "{name}");
    assert_ne!(r.status, DisplayStatus::Connected, "{name}");
}

/// Claude Code with `OTEL_LOG_TOOL_DETAILS=1` (so its connection events
/// name servers): time connected and used, broken failed as a missing
/// command, authy (no event for needs-auth) never called connected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_session_collected() {
    claude_session(true, Release::Pinned).await;
}

/// The same on the newest Claude Code npm serves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_newest_session_collected() {
    claude_session(true, Release::Newest).await;
}

/// Claude Code exactly as `--print-env claude --format settings` sets it (no
/// tool details; the block in its own `~/.claude/settings.json`, nothing in
/// its environment): its beta tool spans show time's tool used; its
/// connection events name no server, so broken and authy are never called
/// connected, nor failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_session_collected_as_print_env_sets_it() {
    claude_session(false, Release::Pinned).await;
}

/// Writes the setup's settings block where it says (under `home`), and
/// gives the environment nothing of it.
fn write_settings(setup: &TelemetrySetup, home: &std::path::Path) {
    let settings = setup.settings.as_ref().expect("a settings block");
    let path = home.join(settings.file.trim_start_matches("~/"));
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
    std::fs::write(&path, &settings.text).expect("settings");
}

async fn claude_session(details: bool, release: Release) {
    claude_session_searching(details, release, None).await;
}

/// GIVEN Claude Code's newest release with its tool search turned off
/// (`ENABLE_TOOL_SEARCH=false`) WHEN it runs against the fake model THEN
/// every tool of the server was in each request, and its records say so:
/// both tools reached the model, neither is deferred.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_newest_without_tool_search() {
    claude_session_searching(true, Release::Newest, Some(false)).await;
}

/// GIVEN the pinned Claude Code with its tool search turned on
/// (`ENABLE_TOOL_SEARCH=true`: off by default there against a base URL of
/// one's own) WHEN it runs against the fake model THEN it lists `ToolSearch`
/// and holds the MCP tools behind it, as the newest release does: no claim
/// Tether makes contradicts what the model was sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_with_tool_search_forced_on() {
    claude_session_searching(true, Release::Pinned, Some(true)).await;
}

/// `tool_search`: the harness's default (`None`), or
/// `ENABLE_TOOL_SEARCH` set.
async fn claude_session_searching(details: bool, release: Release, tool_search: Option<bool>) {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let Some((peers, claude)) = peers_of(release, "node_modules/.bin/claude").await else {
        return;
    };
    let (receiver, batches, running, setup) = receiver_and_setup("claude").await;
    let home = tempfile::tempdir().expect("home");
    let config = home.path().join("mcp.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {
            "time": {"command": peers.time},
            "broken": {"command": "/nonexistent/bin"},
            "authy": {"type": "http", "url": format!("{}/mcp", peers.auth.base())}
        }})
        .to_string(),
    )
    .expect("config");
    // With tool details, the environment `--print-env` gives; without, the
    // settings block `--format settings` gives, and no variable of it.
    let mut env = if details {
        setup_env(&setup)
    } else {
        write_settings(&setup, home.path());
        Vec::new()
    };
    env.extend([
        ("PATH".into(), release.path()),
        ("ANTHROPIC_API_KEY".into(), "dummy".into()),
        ("ANTHROPIC_BASE_URL".into(), peers.model.base()),
        ("CLAUDE_CODE_MAX_RETRIES".into(), "0".into()),
        // Servers connected before the first model request (as Tether's
        // plugin sets it): by default `-p` connects them in the background
        // (2.1.197's `mFc`: `nonBlocking` unless this says false), and on a
        // loaded machine the model's one turn went out before `time` was
        // connected, so no call was made (CI, 2026-12-07).
        ("MCP_CONNECTION_NONBLOCKING".into(), "false".into()),
        ("OTEL_LOGS_EXPORT_INTERVAL".into(), "500".into()),
        ("OTEL_METRIC_EXPORT_INTERVAL".into(), "1000".into()),
        ("OTEL_TRACES_EXPORT_INTERVAL".into(), "500".into()),
    ]);
    if details {
        env.push(("OTEL_LOG_TOOL_DETAILS".into(), "1".into()));
    }
    if let Some(on) = tool_search {
        env.push(("ENABLE_TOOL_SEARCH".into(), on.to_string()));
    }
    let args = [
        "-p",
        "what time is it",
        "--mcp-config",
        &config.display().to_string(),
        "--strict-mcp-config",
        "--allowedTools",
        "mcp__time__get_current_time",
    ]
    .map(str::to_owned)
    .to_vec();
    let attempt = collect_session(
        "claude",
        &claude,
        args,
        env,
        home.path(),
        home.path(),
        configured(&peers),
        receiver,
        batches,
        |a| {
            used(a)
                && (!details
                    || a.server("broken")
                        .is_some_and(|r| r.status == DisplayStatus::Failed))
        },
    )
    .await
    .expect("a collected session");
    running.shutdown().await;
    tether_tests::keep_home(&format!("claude-{}", release.label()), home.path());
    let disk = recorded("claude", home.path(), &[], configured(&peers), &attempt);
    assert!(used_on_disk(&disk), "{disk:?}");
    // The last mile: what the records say reached the model is what the
    // model was sent (a tool held behind the tool search is not).
    // From 2.1.3xx Claude Code records the tools of each request
    // (`api-request-shape`), so every tool sent has a row saying so; the
    // pinned release records nothing of the kind, so there it is unknown,
    // never claimed.
    let records_requests = release == Release::Newest;
    let last_mile = no_wrong_last_mile("claude", &disk, &attempt, &peers.sent);
    if records_requests {
        assert!(
            last_mile.unseen.is_empty(),
            "claude {} (records): {:#?}\nsent: {:?}",
            release.label(),
            last_mile.unseen,
            tether_tests::last_mile::sent(&peers.sent)
        );
    }
    if records_requests {
        let convert = row(&disk, "time")
            .tools
            .iter()
            .find(|t| t.name == "convert_time")
            .unwrap_or_else(|| panic!("a convert_time row: {disk:?}"));
        if tool_search != Some(false) {
            // Never searched for: discoverable, never sent.
            assert!(convert.is_deferred(), "{convert:?}");
        } else {
            assert_eq!(convert.model_visible.state, StageState::Yes, "{convert:?}");
            assert!(!convert.is_deferred());
        }
    }
    assert_eq!(
        row(&disk, "broken").reason_code,
        Some(ReasonCode::CommandNotFound)
    );
    // `authy` wants an OAuth login (its 401 names protected-resource
    // metadata); Claude Code's own MCP log says "Authentication required",
    // which the row keeps as the login it is, not a bare auth_required.
    assert_eq!(
        row(&disk, "authy").reason_code,
        Some(ReasonCode::OauthRequired)
    );
    assert_eq!(row(&disk, "time").stages.initialized.state, StageState::Yes);
    assert!(used(&attempt), "{attempt:?}");
    assert_eq!(
        row(&attempt, "time").stages.initialized.state,
        StageState::Yes
    );
    let broken = row(&attempt, "broken");
    if details {
        assert_eq!(broken.status, DisplayStatus::Failed);
        assert_eq!(broken.reason_code, Some(ReasonCode::CommandNotFound));
    } else {
        // Nothing named it: configured, never connected, never failed.
        never_connected(&attempt, "broken");
        assert_ne!(broken.status, DisplayStatus::Failed);
    }
    never_connected(&attempt, "authy");
}

/// Qwen Code, telemetry by the environment `--print-env qwen` gives: time's
/// tools listed (two) and used; broken and authy never called connected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qwen_code_session_collected() {
    qwen_session(Release::Pinned).await;
}

/// The same on the newest Qwen Code npm serves (on Node 22).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qwen_code_newest_session_collected() {
    qwen_session(Release::Newest).await;
}

async fn qwen_session(release: Release) {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let Some((peers, qwen)) = peers_of(release, "node_modules/.bin/qwen").await else {
        return;
    };
    let (receiver, batches, running, setup) = receiver_and_setup("qwen").await;
    let home = tempfile::tempdir().expect("home");
    std::fs::create_dir_all(home.path().join(".qwen")).expect("dir");
    std::fs::write(
        home.path().join(".qwen/settings.json"),
        serde_json::json!({
            "security": {"auth": {"selectedType": "openai"}},
            "model": {"name": "gpt-4o"},
            "mcpServers": {
                "time": {"command": peers.time, "args": []},
                "broken": {"command": "/nonexistent/bin", "args": []},
                "authy": {"httpUrl": format!("{}/mcp", peers.auth.base())}
            }
        })
        .to_string(),
    )
    .expect("settings");
    let mut env = setup_env(&setup);
    env.extend([
        ("PATH".into(), release.path()),
        ("OPENAI_API_KEY".into(), "dummy".into()),
        (
            "OPENAI_BASE_URL".into(),
            format!("{}/v1", peers.model.base()),
        ),
        ("OPENAI_MODEL".into(), "gpt-4o".into()),
        ("QWEN_CODE_TRUST_WORKSPACE".into(), "true".into()),
    ]);
    let mut args = vec!["-p".to_owned(), "what time is it".to_owned()];
    if release == Release::Newest {
        // 0.24 declines an MCP tool in non-interactive mode unless told
        // (the pin ran it); `--debug` writes the debug log 0.15 always wrote.
        args.extend(["--yolo".to_owned(), "--debug".to_owned()]);
    }
    let attempt = collect_session(
        "qwen",
        &qwen,
        args,
        env,
        home.path(),
        home.path(),
        configured(&peers),
        receiver,
        batches,
        used,
    )
    .await
    .expect("a collected session");
    running.shutdown().await;
    tether_tests::keep_home(&format!("qwen-{}", release.label()), home.path());
    let disk = recorded("qwen", home.path(), &[], configured(&peers), &attempt);
    no_wrong_last_mile("qwen", &disk, &attempt, &peers.sent);
    assert!(used_on_disk(&disk), "{disk:?}");
    assert_eq!(
        row(&disk, "broken").reason_code,
        Some(ReasonCode::CommandNotFound)
    );
    assert_eq!(
        row(&disk, "authy").reason_code,
        Some(ReasonCode::AuthRequired)
    );
    assert!(used(&attempt), "{attempt:?}");
    // 0.15's config event lists the MCP tools; 0.24 defers them to its
    // tool search and its config event names none, so nothing counts them.
    let count = match release {
        Release::Pinned => Some(2),
        Release::Newest => None,
    };
    assert_eq!(
        row(&attempt, "time").tool_count,
        count,
        "{}",
        release.label()
    );
    never_connected(&attempt, "broken");
    never_connected(&attempt, "authy");
}

/// Copilot CLI (offline, its own provider settings): the hashed names match
/// the configured ones — time connected and used, broken and authy in error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_session_collected() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let Some((peers, copilot)) = peers("node_modules/@github/copilot-linux-x64/copilot").await
    else {
        return;
    };
    let (receiver, batches, running, setup) = receiver_and_setup("copilot").await;
    let home = tempfile::tempdir().expect("home");
    let work = home.path().join("work");
    std::fs::create_dir_all(home.path().join(".copilot")).expect("dir");
    std::fs::create_dir_all(&work).expect("work");
    std::fs::write(
        home.path().join(".copilot/mcp-config.json"),
        serde_json::json!({"mcpServers": {
            "time": {"type": "local", "command": peers.time, "args": [], "tools": ["*"]},
            "broken": {"type": "local", "command": "/nonexistent/bin", "args": [], "tools": ["*"]},
            "authy": {"type": "http", "url": format!("{}/mcp", peers.auth.base()), "tools": ["*"]}
        }})
        .to_string(),
    )
    .expect("mcp config");
    let trusted =
        serde_json::json!({"trusted_folders": [work], "trustedFolders": [work]}).to_string();
    std::fs::write(home.path().join(".copilot/config.json"), &trusted).expect("config");
    std::fs::write(home.path().join(".copilot/settings.json"), &trusted).expect("settings");
    let mut env = setup_env(&setup);
    env.extend([
        ("COPILOT_OFFLINE".into(), "true".into()),
        ("COPILOT_AUTO_UPDATE".into(), "false".into()),
        (
            "COPILOT_PKG_CACHE_HOME".into(),
            home.path().join("pkg").display().to_string(),
        ),
        (
            "COPILOT_PROVIDER_BASE_URL".into(),
            format!("{}/v1", peers.model.base()),
        ),
        ("COPILOT_PROVIDER_API_KEY".into(), "dummy".into()),
        ("COPILOT_MODEL".into(), "gpt-4o".into()),
    ]);
    let args = ["-p", "what time is it", "--allow-all-tools"]
        .map(str::to_owned)
        .to_vec();
    let attempt = collect_session(
        "copilot",
        &copilot,
        args,
        env,
        home.path(),
        &work,
        configured(&peers),
        receiver,
        batches,
        |a| {
            used(a)
                && a.server("broken")
                    .is_some_and(|r| r.status == DisplayStatus::Failed)
        },
    )
    .await
    .expect("a collected session");
    running.shutdown().await;
    tether_tests::keep_home("copilot", home.path());
    // Copilot's process log says "Browser-based OAuth required" for authy,
    // and the 401 challenge names its oauth-protected-resource (e64aa16).
    let disk = recorded("copilot", home.path(), &[], configured(&peers), &attempt);
    no_wrong_last_mile("copilot", &disk, &attempt, &peers.sent);
    assert!(used_on_disk(&disk), "{disk:?}");
    assert_eq!(
        row(&disk, "broken").reason_code,
        Some(ReasonCode::CommandNotFound)
    );
    assert_eq!(
        row(&disk, "authy").reason_code,
        Some(ReasonCode::OauthRequired)
    );
    assert!(used(&attempt), "{attempt:?}");
    assert_eq!(row(&attempt, "broken").status, DisplayStatus::Failed);
    never_connected(&attempt, "authy");
}

/// Gemini CLI (yolo, so MCP tools reach the model in `-p` mode), telemetry
/// by the `~/.gemini/.env` `--print-env gemini --format settings` gives
/// (nothing of it in the environment): time's tool used; broken and authy
/// never called connected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_cli_session_collected() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let Some((peers, gemini)) = peers("node_modules/.bin/gemini").await else {
        return;
    };
    let (receiver, batches, running, setup) = receiver_and_setup("gemini").await;
    let home = tempfile::tempdir().expect("home");
    std::fs::create_dir_all(home.path().join(".gemini")).expect("dir");
    std::fs::write(
        home.path().join(".gemini/settings.json"),
        serde_json::json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "mcpServers": {
                "time": {"command": peers.time, "args": []},
                "broken": {"command": "/nonexistent/bin", "args": []},
                "authy": {"httpUrl": format!("{}/mcp", peers.auth.base())}
            }
        })
        .to_string(),
    )
    .expect("settings");
    write_settings(&setup, home.path());
    let mut env: Vec<(String, String)> = Vec::new();
    env.extend([
        ("GEMINI_API_KEY".into(), "dummy".into()),
        ("GEMINI_CLI_TRUST_WORKSPACE".into(), "true".into()),
        ("GOOGLE_GEMINI_BASE_URL".into(), peers.model.base()),
    ]);
    let args = [
        "-m",
        "gemini-2.5-pro",
        "--approval-mode",
        "yolo",
        "-p",
        "what time is it",
    ]
    .map(str::to_owned)
    .to_vec();
    let attempt = collect_session(
        "gemini",
        &gemini,
        args,
        env,
        home.path(),
        home.path(),
        configured(&peers),
        receiver,
        batches,
        used,
    )
    .await
    .expect("a collected session");
    running.shutdown().await;
    tether_tests::keep_home("gemini", home.path());
    // The session ran with the folder trusted by its environment; the
    // inventory of the same home reads the same environment.
    let trust = [("GEMINI_CLI_TRUST_WORKSPACE".to_owned(), "true".to_owned())];
    let disk = recorded("gemini", home.path(), &trust, configured(&peers), &attempt);
    no_wrong_last_mile("gemini", &disk, &attempt, &peers.sent);
    assert!(used_on_disk(&disk), "{disk:?}");
    // Its chats say nothing of a server that failed or wanted a login.
    never_connected(&disk, "broken");
    never_connected(&disk, "authy");
    assert!(used(&attempt), "{attempt:?}");
    never_connected(&attempt, "broken");
    never_connected(&attempt, "authy");
}

/// Codex `exec`, its `[otel]` block exactly as `--print-env codex` gives it:
/// every server taken into the session, time's tool used; Codex's telemetry
/// says nothing of broken's failed start or authy's login, so neither is
/// ever called connected (or failed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_session_collected() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let Some((peers, codex)) = peers("node_modules/.bin/codex").await else {
        return;
    };
    let (receiver, batches, running, setup) = receiver_and_setup("codex").await;
    let home = tempfile::tempdir().expect("home");
    let codex_home = home.path().join(".codex");
    std::fs::create_dir_all(&codex_home).expect("dir");
    let snippet = setup.snippet.as_ref().expect("codex's [otel] block");
    let toml = |s: &str| serde_json::to_string(s).expect("a TOML basic string is a JSON string");
    let config = format!(
        "model = \"gpt-5.1\"\nmodel_provider = \"fake\"\napproval_policy = \"never\"\n\
         [model_providers.fake]\nname = \"fake\"\nbase_url = {}\nwire_api = \"responses\"\nenv_key = \"FAKE_KEY\"\n\
         [mcp_servers.time]\ncommand = {}\nrequired = true\n\
         [mcp_servers.broken]\ncommand = \"/nonexistent/bin\"\n\
         [mcp_servers.authy]\nurl = {}\n\n{}",
        toml(&format!("{}/v1", peers.model.base())),
        toml(&peers.time),
        toml(&format!("{}/mcp", peers.auth.base())),
        snippet.text,
    );
    std::fs::write(codex_home.join("config.toml"), config).expect("config");
    let mut env = setup_env(&setup);
    env.extend([
        ("CODEX_HOME".into(), codex_home.display().to_string()),
        ("FAKE_KEY".into(), "dummy".into()),
    ]);
    let args = ["exec", "--skip-git-repo-check", "--json", "what time is it"]
        .map(str::to_owned)
        .to_vec();
    let taken = |a: &AttachmentAttempt| {
        ["broken", "authy"].iter().all(|n| {
            a.server(n)
                .is_some_and(|r| r.stages.delivered.state == StageState::Yes)
        })
    };
    let attempt = collect_session(
        "codex",
        &codex,
        args,
        env,
        home.path(),
        home.path(),
        configured(&peers),
        receiver,
        batches,
        |a| used(a) && taken(a),
    )
    .await
    .expect("a collected session");
    running.shutdown().await;
    tether_tests::keep_home("codex", home.path());
    let vars = [("CODEX_HOME".to_owned(), codex_home.display().to_string())];
    let disk = recorded("codex", home.path(), &vars, configured(&peers), &attempt);
    no_wrong_last_mile("codex", &disk, &attempt, &peers.sent);
    assert!(used_on_disk(&disk), "{disk:?}");
    // Its rollouts hold no start-up records.
    for name in ["broken", "authy"] {
        never_connected(&disk, name);
        assert_ne!(row(&disk, name).status, DisplayStatus::Failed, "{name}");
    }
    assert!(used(&attempt), "{attempt:?}");
    assert!(taken(&attempt), "{attempt:?}");
    for name in ["broken", "authy"] {
        never_connected(&attempt, name);
        assert_ne!(
            row(&attempt, name).status,
            DisplayStatus::Failed,
            "{name}: Codex never said so"
        );
    }
}

/// OpenCode (`run`, its OpenTelemetry on as its configuration says, the
/// environment `--print-env opencode` gives): time's tool used, read from
/// a tool name split against the configured servers; OpenCode's telemetry
/// names no server when one fails or wants a login, so broken and authy
/// are never called connected (or failed).
///
/// OpenCode 1.18.33 sends its spans in batches of 512, or when its span
/// processor's 5 s timer fires while it still runs, and never flushes
/// them when it exits (its tracer lives in a runtime nobody disposes): a
/// run that ends with fewer than 512 spans waiting loses them, its
/// `Tool.execute` span among them, about one run in two here. What it
/// sent is watched through the receiver's forward (a second receiver):
/// where it sent the span, the collector read it; where it did not, the
/// call is in its database all the same, and the live session shows
/// nothing it was not told.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_session_collected() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let Some((peers, opencode)) = peers("node_modules/.bin/opencode").await else {
        return;
    };
    let (receiver, batches, running, setup) = receiver_and_setup("opencode").await;
    let (witness, witnessed, witness_running, _) = receiver_and_setup("opencode").await;
    let mut target = tether_collect::forward::ForwardTarget::new(witness_running.endpoint());
    target.headers = vec![("Authorization".into(), witness.token().bearer())];
    let forward = tether_collect::forward::Forwarder::start(target, Some(running.addr()))
        .expect("a forward to the witness");
    assert!(receiver.set_forward(forward));
    let home = tempfile::tempdir().expect("home");
    let config_dir = home.path().join(".config/opencode");
    let work = home.path().join("work");
    std::fs::create_dir_all(&config_dir).expect("dir");
    std::fs::create_dir_all(&work).expect("work");
    std::fs::write(
        config_dir.join("opencode.json"),
        tether_tests::opencode_config(
            &peers.model.base(),
            serde_json::json!({
                "mcp": {
                    "time": {"type": "local", "command": [peers.time], "enabled": true},
                    "broken": {"type": "local", "command": ["/nonexistent/bin"], "enabled": true},
                    "authy": {"type": "remote", "url": format!("{}/mcp", peers.auth.base()), "enabled": true}
                },
                "experimental": {"openTelemetry": true}
            }),
        )
        .to_string(),
    )
    .expect("config");
    let dir = |rel: &str| home.path().join(rel).display().to_string();
    let mut env = setup_env(&setup);
    env.extend(tether_tests::opencode_env(home.path()));
    let args = ["run", "what time is it"].map(str::to_owned).to_vec();
    let attempt = collect_session(
        "opencode",
        &opencode,
        args,
        env,
        home.path(),
        &work,
        configured(&peers),
        receiver.clone(),
        batches,
        used,
    )
    .await;
    let sent_call = sent_tool_execute(&receiver, &witnessed, "time_get_current_time").await;
    running.shutdown().await;
    witness_running.shutdown().await;
    tether_tests::keep_home("opencode", home.path());
    // What the fake model was offered and called, each turn.
    let turns: Vec<(usize, Option<String>)> = peers
        .sent
        .turns()
        .iter()
        .map(|t| {
            (
                t.tools.iter().filter(|n| n.contains("time")).count(),
                t.called.clone(),
            )
        })
        .collect();
    assert!(
        turns
            .iter()
            .any(|(_, c)| c.as_deref() == Some("time_get_current_time")),
        "OpenCode called time's tool: {turns:?}"
    );
    let vars = [("XDG_DATA_HOME".to_owned(), dir(".local/share"))];
    // Its log says which servers failed or want a login; its database (read
    // from a private snapshot, its write-ahead log with it) holds the call,
    // whatever its telemetry lost.
    let disk = match &attempt {
        Some(live) => recorded("opencode", home.path(), &vars, configured(&peers), live),
        None => {
            eprintln!("opencode: no live session (no record Tether reads arrived)");
            inventory_sessions("opencode", home.path(), &vars);
            on_disk("opencode", home.path(), &vars, configured(&peers)).1
        }
    };
    assert!(
        used_on_disk(&disk),
        "{disk:?}\nturns (time's tools offered, call): {turns:?}"
    );
    assert_eq!(row(&disk, "broken").status, DisplayStatus::Failed);
    assert_eq!(
        row(&disk, "authy").reason_code,
        Some(ReasonCode::AuthRequired)
    );
    if sent_call {
        let attempt = attempt.as_ref().expect("a collected session");
        assert!(
            used(attempt),
            "OpenCode sent its Tool.execute span: {attempt:?}"
        );
    } else {
        eprintln!("opencode: its Tool.execute span never left it (unflushed at exit)");
    }
    if let Some(attempt) = &attempt {
        no_wrong_last_mile("opencode", &disk, attempt, &peers.sent);
        for name in ["broken", "authy"] {
            never_connected(attempt, name);
            assert_ne!(row(attempt, name).status, DisplayStatus::Failed, "{name}");
        }
    }
}

/// Whether the harness sent a `Tool.execute` span naming `tool`, as the
/// receiver's forward passed it on to `witnessed`: waits until the forward
/// has handled every request the receiver admitted (or a bound).
async fn sent_tool_execute(
    receiver: &tether_collect::Receiver,
    witnessed: &tether_collect::Batches,
    tool: &str,
) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let received = receiver.stats();
        let forward = receiver.forward_stats().expect("a forward");
        let handled = forward.forwarded + forward.failed + forward.dropped;
        if handled >= received.requests - received.refused {
            assert_eq!(
                (forward.failed, forward.dropped),
                (0, 0),
                "every request reached the witness"
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the forward handled {handled} of {received:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let mut sent = false;
    while let Some(batch) = witnessed.try_next() {
        tether_collect::telemetry_records::for_each_record(&batch, |r| {
            sent |= r.name == "Tool.execute"
                && r.attributes
                    .get("tool.name")
                    .and_then(|v| v.text())
                    .is_some_and(|n| n == tool);
        });
    }
    sent
}
