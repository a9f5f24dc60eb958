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
/// needing auth, `broken` not starting) and a `~/.claude.json` whose
/// servers hold the planted secrets: `github` needs an unset variable,
/// `off` is disabled, `remote` carries secrets in its URL and headers.
fn home(project: &Path) -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("home");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/records/claude"),
        home.path(),
    );
    let config = serde_json::json!({
        "mcpServers": {
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

    for text in &answers {
        for secret in PLANTED {
            assert!(!text.contains(secret), "{secret} leaked:\n{text}");
        }
    }
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
}
