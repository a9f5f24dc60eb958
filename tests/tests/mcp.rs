//! `tether mcp`, as an agent meets it: an MCP server over stdio (driven here
//! by rmcp's own client), read-only, metadata-only and small. Its answers
//! come from the configuration and session records of a private `HOME`, with
//! secrets planted where users keep them.

use std::path::Path;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use tether_diagnostics::endpoint_check::{CheckLimits, check_endpoint_catalog};
use tether_tests::workspace_bin;
use tokio_util::sync::CancellationToken;

const PLANTED: [&str; 5] = [
    "hunter2-Pa55word-mcp",
    "ghp_0123456789abcdefMCPMCP",
    "sk-live-mcp-0123456789",
    "userinfo-mcp-9f8e7d",
    "query-mcp-5a4b3c",
];

/// A home with Claude's recorded session (servers `time` used, `authy`
/// needing auth, `broken` not starting; its prompts and payloads replaced by
/// a planted secret) and a `~/.claude.json` whose servers hold the planted
/// secrets: `github` needs an unset variable,
/// `off` is disabled, `remote` carries secrets in its URL and headers.
fn home(project: &Path) -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("home");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/records/claude"),
        home.path(),
    );
    // Prompts and tool payloads in the records (trimmed in the fixture)
    // become planted secrets.
    plant(home.path());
    let config = serde_json::json!({
        "mcpServers": {
            "time": {"command": "uvx", "args": ["mcp-server-time"]},
            "github": {
                "type": "http",
                "url": "https://api.example.invalid/mcp",
                "headers": {"Authorization": "Bearer ${TETHER_TEST_UNSET_GH_TOKEN}"}
            },
            "remote": {
                "type": "http",
                "url": format!("https://{}:{}@example.invalid/mcp?key={}", PLANTED[3], PLANTED[0], PLANTED[4]),
                "headers": {"Authorization": format!("Bearer {}", PLANTED[1])}
            },
            "local": {
                "command": "/nonexistent/bin/srv",
                "args": ["--token", PLANTED[2]],
                "env": {"PASSWORD": PLANTED[0]}
            }
        },
        "projects": {project.display().to_string(): {"disabledMcpServers": ["local"]}}
    });
    std::fs::write(
        home.path().join(".claude.json"),
        serde_json::to_vec_pretty(&config).expect("json"),
    )
    .expect("config");
    home
}

/// Every `[trimmed]` payload in the session records under `dir` becomes a
/// planted secret.
fn plant(dir: &Path) {
    for entry in std::fs::read_dir(dir).expect("dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            plant(&path);
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            let text = std::fs::read_to_string(&path).expect("record");
            std::fs::write(&path, text.replace("[trimmed]", PLANTED[1])).expect("planted");
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("dir").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).expect("dir");
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

fn command(home: &Path, project: &Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(workspace_bin("tether"));
    cmd.arg("mcp")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .current_dir(project)
        .stderr(std::process::Stdio::null());
    cmd
}

/// Each call's text answer, and whether it said isError.
async fn ask(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    tool: &str,
    arguments: serde_json::Value,
) -> (String, bool) {
    let serde_json::Value::Object(arguments) = arguments else {
        panic!("arguments are an object");
    };
    let result = tokio::time::timeout(
        Duration::from_secs(60),
        client.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments)),
    )
    .await
    .expect("answered in time")
    .expect("a result");
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n");
    (text, result.is_error == Some(true))
}

/// GIVEN `tether mcp` on a home with configuration and a recorded session
/// WHEN an agent asks each tool THEN `why_missing` walks configuration →
/// session → tool with the right reason codes and what to check, the other
/// tools answer as the CLI does, a bad question is an isError answer, and no
/// planted secret is in any answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_asks_why_and_gets_reasons_never_secrets() {
    let project = tempfile::tempdir().expect("project");
    let home = home(project.path());
    let transport = TokioChildProcess::new(command(home.path(), project.path())).expect("spawn");
    let client = ().serve(transport).await.expect("initialized");
    let tools = client.list_all_tools().await.expect("tools");
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["explain", "inventory", "session", "sessions", "why_missing"]
    );
    assert!(
        tools.iter().all(|t| !t.input_schema.contains_key("test")
            && !t.input_schema["properties"]
                .as_object()
                .is_some_and(|p| p.contains_key("test"))),
        "no test without --allow-test"
    );

    let mut answers = Vec::new();
    let (text, error) = ask(&client, "why_missing", serde_json::json!({"name": "authy"})).await;
    assert!(!error);
    assert!(
        text.contains("claude:2d8efbcf") && text.contains("auth_required"),
        "{text}"
    );
    assert!(text.contains("What to check:"), "{text}");
    answers.push(text);

    let (text, _) = ask(
        &client,
        "why_missing",
        serde_json::json!({"name": "github"}),
    )
    .await;
    assert!(
        text.contains("unresolved_variable") && text.contains("TETHER_TEST_UNSET_GH_TOKEN"),
        "{text}"
    );
    // Configured today, so the session's matrix has its row, unshown.
    assert!(text.contains("nothing shows the session used it"), "{text}");
    answers.push(text);

    let (text, _) = ask(&client, "why_missing", serde_json::json!({"name": "local"})).await;
    assert!(
        text.contains(": off") && text.contains("disabled_in_config"),
        "{text}"
    );
    answers.push(text);

    let (text, _) = ask(
        &client,
        "why_missing",
        serde_json::json!({"name": "mcp__time__get_current_time"}),
    )
    .await;
    assert!(
        text.contains("model_visible yes; 1 call(s), 0 failed"),
        "{text}"
    );
    answers.push(text);

    let (text, _) = ask(
        &client,
        "why_missing",
        serde_json::json!({"name": "nowhere"}),
    )
    .await;
    assert!(
        text.contains("No session Tether can read shows \"nowhere\"")
            && text.contains("so no agent started here is given it"),
        "{text}"
    );
    answers.push(text);

    let (text, _) = ask(
        &client,
        "inventory",
        serde_json::json!({"harness": "claude"}),
    )
    .await;
    for name in ["github", "remote", "local"] {
        assert!(text.contains(name), "{name}: {text}");
    }
    answers.push(text);

    // With the tools sessions listed: time's tool, from the recorded session.
    let (text, _) = ask(
        &client,
        "inventory",
        serde_json::json!({"harness": "claude", "sessions": "yes"}),
    )
    .await;
    assert!(text.contains("get_current_time"), "{text}");
    answers.push(text);

    let (text, _) = ask(&client, "sessions", serde_json::json!({})).await;
    assert!(text.contains("1 active, 2 failed"), "{text}");
    answers.push(text);

    let (text, _) = ask(&client, "session", serde_json::json!({"id": "2d8e"})).await;
    assert!(
        text.contains("mcp_server broken: failed to start: command not found [command_not_found]"),
        "{text}"
    );
    answers.push(text);

    let (text, _) = ask(
        &client,
        "explain",
        serde_json::json!({"code": "auth-required"}),
    )
    .await;
    assert!(text.starts_with("auth_required (reason code)"), "{text}");

    for (tool, args) in [
        ("why_missing", serde_json::json!({})),
        ("inventory", serde_json::json!({"harness": "aider"})),
        ("inventory", serde_json::json!({"test": true})),
        ("session", serde_json::json!({"id": "zzz"})),
        ("explain", serde_json::json!({"code": "no_such_code"})),
        ("sessions", serde_json::json!({"since": "yesterday-ish"})),
    ] {
        let (text, error) = ask(&client, tool, args.clone()).await;
        assert!(error, "{tool} {args}: {text}");
    }
    // A slip of a harness, a kind or a code: an error naming the one meant
    // (never "nothing is configured").
    for (tool, args, meant) in [
        (
            "inventory",
            serde_json::json!({"harness": "claud"}),
            "claude",
        ),
        (
            "sessions",
            serde_json::json!({"harness": "claud"}),
            "claude",
        ),
        (
            "inventory",
            serde_json::json!({"kind": "mcp_servr"}),
            "mcp_server",
        ),
        (
            "explain",
            serde_json::json!({"code": "auth_requird"}),
            "auth_required",
        ),
    ] {
        let (text, error) = ask(&client, tool, args.clone()).await;
        assert!(error, "{tool} {args}: {text}");
        assert!(
            text.contains(&format!("did you mean \"{meant}\"?")),
            "{tool} {args}: {text}"
        );
    }

    for text in &answers {
        for secret in PLANTED {
            assert!(!text.contains(secret), "{secret} leaked:\n{text}");
        }
    }
    client.cancel().await.expect("closed");
}

/// GIVEN `tether mcp` on a home of twelve recorded Claude sessions (the
/// recorded one, newest, and eleven older copies under other ids), its
/// debug log on, a store to keep the ledger in WHEN an agent asks
/// `why_missing`, `session` and `sessions` twice THEN each answer builds
/// only the histories it needs: the newest session's, the one the id names,
/// every one for the first listing (their summaries then kept), none for the
/// second (issue 70).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_answer_builds_only_the_histories_it_needs() {
    const ID: &str = "2d8efbcf-e501-440d-89ec-66cb10f9d678";
    let project = tempfile::tempdir().expect("project");
    let home = home(project.path());
    let dir = home.path().join(".claude/projects/-tmp--tmpf23dO3");
    let text = std::fs::read_to_string(dir.join(format!("{ID}.jsonl"))).expect("session");
    for i in 1..=11 {
        let id = format!("{i:08x}-0000-4000-8000-000000000000");
        let older = text
            .replace(ID, &id)
            .replace("2026-12-01T", &format!("2026-11-{i:02}T"));
        std::fs::write(dir.join(format!("{id}.jsonl")), older).expect("copy");
    }
    let logs = tempfile::tempdir().expect("logs");
    let log = logs.path().join("stderr");
    let mut cmd = command(home.path(), project.path());
    cmd.env("TETHER_LOG", "debug")
        .env("TETHER_DB", logs.path().join("tether.db"));
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(std::fs::File::create(&log).expect("log"))
        .spawn()
        .expect("spawn");
    let client = ().serve(transport).await.expect("initialized");
    let mut before = 0;
    let mut built = || {
        let all = std::fs::read_to_string(&log)
            .expect("log")
            .matches("a session's history built")
            .count();
        std::mem::replace(&mut before, all).abs_diff(all)
    };

    let (text, _) = ask(&client, "why_missing", serde_json::json!({"name": "time"})).await;
    assert!(
        text.contains(&format!("Newest claude session (claude:{ID}")),
        "{text}"
    );
    assert_eq!(built(), 1, "why_missing builds the newest session alone");
    let (text, _) = ask(&client, "why_missing", serde_json::json!({"name": "authy"})).await;
    assert!(text.contains("auth_required"), "{text}");
    assert_eq!(built(), 1, "the newest session shows authy");
    let (text, _) = ask(&client, "session", serde_json::json!({"id": "00000003"})).await;
    assert!(text.contains("claude:00000003"), "{text}");
    assert_eq!(built(), 1, "session builds the one its id names");
    let (first, _) = ask(&client, "sessions", serde_json::json!({})).await;
    assert!(first.contains("1 active, 2 failed"), "{first}");
    assert_eq!(
        built(),
        12,
        "the first listing builds each, and keeps its summary"
    );
    let (second, _) = ask(&client, "sessions", serde_json::json!({})).await;
    assert_eq!(second, first);
    assert_eq!(built(), 0, "the second lists kept summaries");
    client.cancel().await.expect("closed");
}

/// GIVEN `tether mcp` WHEN Tether's own endpoint check lists its tools THEN
/// it passes, and every tool definition together costs the model at most 600
/// tokens (o200k_base over each definition as sent).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn it_passes_the_endpoint_check_and_costs_at_most_600_tokens() {
    let home = tempfile::tempdir().expect("home");
    let endpoint = tether_core::Endpoint::Stdio {
        command: workspace_bin("tether").display().to_string(),
        args: vec!["mcp".into()],
        env: vec![tether_core::KeyValue::new(
            "HOME",
            home.path().display().to_string(),
        )],
        cwd: Some(home.path().display().to_string()),
    };
    let limits = CheckLimits {
        timeout: Duration::from_secs(30),
        ..CheckLimits::default()
    };
    let (report, catalog) =
        check_endpoint_catalog(&endpoint, limits, CancellationToken::new()).await;
    assert!(report.succeeded, "{report:?}");
    assert_eq!(report.tool_count, Some(5));
    let catalog = catalog.expect("catalog");
    assert_eq!(catalog.method, tether_core::model::CATALOG_METHOD);
    assert!(
        catalog.total_tokens <= 600,
        "{} tokens: {:?}",
        catalog.total_tokens,
        catalog
            .tools
            .iter()
            .map(|t| (&t.name, t.token_estimate))
            .collect::<Vec<_>>()
    );
}

/// GIVEN `tether mcp --print-config HARNESS` WHEN its file block is put
/// where it says, in a private home THEN `tether inventory` reads a `tether`
/// server for that harness, enabled, running `tether mcp`; and `inventory
/// --test` tests it like any other server, and it passes.
#[test]
fn each_printed_config_is_read_back_by_the_inventory() {
    for harness in [
        "claude", "codex", "copilot", "cursor", "gemini", "opencode", "qwen",
    ] {
        let home = tempfile::tempdir().expect("home");
        let out = std::process::Command::new(workspace_bin("tether"))
            .args(["mcp", "--print-config", harness])
            .output()
            .expect("run");
        assert!(out.status.success(), "{harness}");
        let text = String::from_utf8(out.stdout).expect("utf8");
        let (head, block) = text.split_once(":\n").expect("a file block");
        let path = head
            .rsplit_once("merge into ~/")
            .map(|(_, p)| p)
            .expect("a file to merge into");
        let file = home.path().join(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("dir");
        std::fs::write(&file, block).expect("write");
        let out = std::process::Command::new(workspace_bin("tether"))
            .args(["inventory", "--json", "--harness", harness])
            .env("HOME", home.path())
            .env_remove("XDG_CONFIG_HOME")
            .current_dir(home.path())
            .output()
            .expect("inventory");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        let row = doc["rows"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| r["name"] == "tether" && r["kind"] == "mcp_server")
            .unwrap_or_else(|| panic!("{harness}: no tether row in {doc}\n{block}"));
        // Gemini and Qwen start no MCP server at all in a folder they do not
        // trust: that gate is the folder's, not the block's.
        assert!(
            row["stages"]["enabled"]["state"] == "yes" || row["reason_code"] == "untrusted_folder",
            "{harness}: {row}"
        );
        assert_eq!(row["target"], "tether", "{harness}: {row}");
        if harness == "claude" {
            // And `inventory --test` tests it like any other server.
            let out = std::process::Command::new(workspace_bin("tether"))
                .args(["inventory", "--json", "--test", "--harness", harness])
                .env("HOME", home.path())
                .current_dir(home.path())
                .output()
                .expect("inventory --test");
            let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
            let row = doc["rows"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|r| r["name"] == "tether" && r["kind"] == "mcp_server")
                .expect("the tether row");
            assert_eq!(row["endpoint_test"]["succeeded"], true, "{row}");
            assert_eq!(row["endpoint_test"]["tool_count"], 5, "{row}");
        }
    }
    let out = std::process::Command::new(workspace_bin("tether"))
        .args(["mcp", "--print-config", "aider"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let out = std::process::Command::new(workspace_bin("tether"))
        .args(["mcp", "--print-config", "claud"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("(did you mean \"claude\"?)"), "{said}");
}

// === A real agent asks ===

/// The last tool result the harness sent the fake model (what reached it).
/// Fails, with every turn and the harness's stderr, when none reached it.
fn answer_reaching_the_model(
    log: &tether_tests::fake_model::ModelLog,
    run: &std::process::Output,
) -> String {
    let turns = log.turns();
    turns
        .iter()
        .rev()
        .flat_map(|t| t.results.iter().rev())
        .find(|r| r.contains("broken"))
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "no answer reached the model: {:?}\n{}",
                turns
                    .iter()
                    .map(|t| (&t.called, &t.results))
                    .collect::<Vec<_>>(),
                String::from_utf8_lossy(&run.stderr)
            )
        })
}

/// What `tether inventory --json` and `tether sessions list --json` say on
/// the same home: the `broken` row's reason, and every session's rows.
fn cli_view(home: &Path, vars: &[(&str, String)]) -> (serde_json::Value, serde_json::Value) {
    let run = |args: &[&str]| {
        let mut cmd = tether_tests::tether_at_home(home);
        cmd.args(args);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let out = tether_tests::output_within(cmd, 120);
        serde_json::from_slice::<serde_json::Value>(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stderr)))
    };
    (
        run(&["inventory", "--json"]),
        run(&["sessions", "list", "--json"]),
    )
}

fn broken_reason(inventory: &serde_json::Value) -> String {
    inventory["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["name"] == "broken" && r["kind"] == "mcp_server")
        .map(|r| r["reason_code"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default()
}

/// GIVEN a real Claude Code session with `tether mcp` configured beside a
/// server whose command does not exist, and the fake model asking
/// `why_missing` about it WHEN the session runs THEN the answer that
/// reaches the model names `command_not_found`, as `tether inventory` does
/// on the same home, and `tether sessions` shows tether's own row in that
/// session like any other server's: its tool used.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_claude_code_session_asks_why_and_the_model_gets_the_reason() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let Some(claude) = tether_tests::peer("node_modules/.bin/claude") else {
        return;
    };
    let (model, log) = tether_tests::fake_model::start_model_calling(
        "why_missing",
        serde_json::json!({"name": "broken"}),
    )
    .await;
    let home = tempfile::tempdir().expect("home");
    std::fs::write(
        home.path().join(".claude.json"),
        serde_json::json!({"mcpServers": {
            "tether": {"command": workspace_bin("tether").display().to_string(), "args": ["mcp"]},
            "broken": {"command": "/nonexistent/bin/broken-srv"}
        }})
        .to_string(),
    )
    .expect("config");
    let mut cmd = std::process::Command::new(&claude);
    cmd.args([
        "-p",
        "why is my broken server missing",
        "--allowedTools",
        "mcp__tether__why_missing",
    ])
    .env_clear()
    .env("HOME", home.path())
    .env("PATH", tether_tests::Release::Pinned.path())
    .env("ANTHROPIC_API_KEY", "dummy")
    .env("ANTHROPIC_BASE_URL", model.base())
    .env("CLAUDE_CODE_MAX_RETRIES", "0")
    .env("ENABLE_TOOL_SEARCH", "false")
    .current_dir(home.path())
    .stdin(std::process::Stdio::null());
    let out = tether_tests::output_within(cmd, 180);
    let answer = answer_reaching_the_model(&log, &out);
    assert!(answer.contains("command_not_found"), "{answer}");
    let (inventory, sessions) = cli_view(home.path(), &[]);
    assert_eq!(broken_reason(&inventory), "command_not_found");
    let session = sessions["sessions"]
        .as_array()
        .and_then(|s| s.first())
        .unwrap_or_else(|| panic!("a session: {sessions}"));
    let id = session["session_id"].as_str().expect("id").to_owned();
    let mut cmd = tether_tests::tether_at_home(home.path());
    cmd.args(["sessions", "show", &id, "--json"]);
    let shown: serde_json::Value =
        serde_json::from_slice(&tether_tests::output_within(cmd, 60).stdout).expect("json");
    let rows = shown["rows"].as_array().expect("rows");
    let tool = rows
        .iter()
        .find(|r| r["name"] == "tether/why_missing")
        .unwrap_or_else(|| panic!("tether's own tool row: {rows:?}"));
    assert_eq!(tool["calls"], 1, "{tool}");
    let broken = rows
        .iter()
        .find(|r| r["name"] == "broken")
        .expect("broken's row");
    assert_eq!(broken["reason_code"], "command_not_found", "{broken}");
}

/// The same with a real Codex `exec` session (its `config.toml` naming
/// `tether mcp` and the broken server): the answer reaching the model
/// names the reason `tether inventory` gives on the same home.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_codex_session_asks_why_and_the_model_gets_the_reason() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let Some(codex) = tether_tests::peer("node_modules/.bin/codex") else {
        return;
    };
    let (model, log) = tether_tests::fake_model::start_model_calling(
        "why_missing",
        serde_json::json!({"name": "broken"}),
    )
    .await;
    let home = tempfile::tempdir().expect("home");
    let codex_home = home.path().join(".codex");
    std::fs::create_dir_all(&codex_home).expect("dir");
    let toml = |s: &str| serde_json::to_string(s).expect("a TOML basic string is a JSON string");
    std::fs::write(
        codex_home.join("config.toml"),
        format!(
            "model = \"gpt-5.1\"\nmodel_provider = \"fake\"\napproval_policy = \"never\"\n\
             [model_providers.fake]\nname = \"fake\"\nbase_url = {}\nwire_api = \"responses\"\nenv_key = \"FAKE_KEY\"\n\
             [mcp_servers.tether]\ncommand = {}\nargs = [\"mcp\"]\n\
             [mcp_servers.broken]\ncommand = \"/nonexistent/bin/broken-srv\"\n",
            toml(&format!("{}/v1", model.base())),
            toml(&workspace_bin("tether").display().to_string()),
        ),
    )
    .expect("config");
    let mut cmd = std::process::Command::new(&codex);
    cmd.args([
        "exec",
        "--skip-git-repo-check",
        "--json",
        "why is my broken server missing",
    ])
    .env_clear()
    .env("HOME", home.path())
    .env("PATH", std::env::var("PATH").unwrap_or_default())
    .env("CODEX_HOME", &codex_home)
    .env("FAKE_KEY", "dummy")
    .current_dir(home.path())
    .stdin(std::process::Stdio::null());
    let out = tether_tests::output_within(cmd, 180);
    let answer = answer_reaching_the_model(&log, &out);
    let (inventory, _) = cli_view(
        home.path(),
        &[("CODEX_HOME", codex_home.display().to_string())],
    );
    let reason = broken_reason(&inventory);
    assert_eq!(reason, "command_not_found");
    assert!(answer.contains(&reason), "{answer}");
}
