//! What each MCP server costs the model: `tether endpoint-test` reports the
//! listed tools' o200k_base estimate, and it equals an independent count over
//! the same tools/list output made by a separate implementation of the
//! encoding (js-tiktoken, `tests/scripts/count-tool-tokens.mjs`, speaking MCP
//! itself), in total and tool by tool.

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use tether_tests::{independent_token_count as independent, peer, workspace_bin};

/// `tether endpoint-test --json --tools ARGS…` (a `-- COMMAND` or a `--url URL`).
fn endpoint_test<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Value {
    let out = Command::new(workspace_bin("tether"))
        .env("TETHER_DB", tether_tests::scratch_store())
        .args(["endpoint-test", "--json", "--tools"])
        .args(args)
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

fn agrees(server: &str, relative: &str, tools: u64) {
    let Some(command) = peer(relative) else {
        return;
    };
    let Some(theirs) = independent(&command) else {
        return;
    };
    let ours = endpoint_test(&[Path::new("--"), &command]);
    same_count(server, &ours, &theirs, tools);
}

/// Tether's endpoint-test document and the independent count agree: tool
/// count, the exact method, the total and every tool's estimate.
fn same_count(server: &str, ours: &Value, theirs: &Value, tools: u64) {
    assert_eq!(ours["tool_count"], tools, "{server}: {ours:#}");
    assert_eq!(theirs["tool_count"], tools, "{server}: {theirs:#}");
    assert_eq!(ours["token_method"], "o200k_base:mcp-tool-json-v1");
    assert_eq!(
        ours["tool_tokens"], theirs["total"],
        "{server}: tether says {}, js-tiktoken says {}",
        ours["tool_tokens"], theirs["total"]
    );
    let catalog = &ours["tools"];
    assert_eq!(catalog["method"], "o200k_base:mcp-tool-json-v1");
    assert_eq!(catalog["total_tokens"], theirs["total"]);
    let listed = catalog["tools"].as_array().expect("tools");
    assert_eq!(listed.len() as u64, tools);
    for tool in listed {
        let name = tool["name"].as_str().expect("name");
        assert_eq!(
            tool["token_estimate"], theirs["tools"][name],
            "{server}/{name}"
        );
    }
}

#[test]
fn server_everything_costs_what_an_independent_count_says() {
    agrees(
        "server-everything",
        "node_modules/.bin/mcp-server-everything",
        13,
    );
}

#[test]
fn server_memory_costs_what_an_independent_count_says() {
    agrees("server-memory", "node_modules/.bin/mcp-server-memory", 9);
}

#[test]
fn mcp_server_time_costs_what_an_independent_count_says() {
    agrees("mcp-server-time", ".venv/bin/mcp-server-time", 2);
}

#[test]
fn the_human_output_names_the_total_and_with_tools_each_tool() {
    let Some(command) = peer("node_modules/.bin/mcp-server-everything") else {
        return;
    };
    let out = Command::new(workspace_bin("tether"))
        .env("TETHER_DB", tether_tests::scratch_store())
        .args(["endpoint-test", "--tools", "--"])
        .arg(&command)
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("13 tools ≈ "), "{text}");
    assert!(text.contains(" tokens"), "{text}");
    assert!(text.contains("  echo\n"), "{text}");
    assert!(text.contains("total over 13 tools"), "{text}");
    let plain = Command::new(workspace_bin("tether"))
        .env("TETHER_DB", tether_tests::scratch_store())
        .args(["endpoint-test", "--json", "--"])
        .arg(&command)
        .output()
        .expect("run");
    let doc: Value = serde_json::from_slice(&plain.stdout).expect("json");
    assert!(doc.get("tools").is_none(), "the catalog only with --tools");
    assert!(doc["tool_tokens"].as_u64().is_some_and(|t| t > 1000));
}

/// GIVEN Claude's project servers (server-everything, server-memory) and a
/// Codex entry for server-everything that keeps two tools WHEN `tether
/// inventory --test` runs THEN each row's TOKENS is the independent count
/// (with Codex's `enabled_tools` applied), and each harness's total is the
/// sum of its enabled servers.
#[test]
fn inventory_test_totals_each_harness_with_tool_filters_subtracted() {
    let (Some(everything), Some(memory)) = (
        peer("node_modules/.bin/mcp-server-everything"),
        peer("node_modules/.bin/mcp-server-memory"),
    ) else {
        return;
    };
    let (Some(every_count), Some(memory_count)) = (independent(&everything), independent(&memory))
    else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let project = dir.path().join("project");
    std::fs::create_dir_all(home.join(".codex")).expect("mkdir");
    std::fs::create_dir_all(&project).expect("mkdir");
    let project = std::fs::canonicalize(&project).expect("canonical");
    std::fs::write(
        project.join(".mcp.json"),
        serde_json::json!({"mcpServers": {
            "every": {"command": everything},
            "memory": {"command": memory},
        }})
        .to_string(),
    )
    .expect("write");
    std::fs::write(
        home.join(".claude.json"),
        serde_json::json!({"projects": {project.display().to_string(): {
            "hasTrustDialogAccepted": true,
            "enabledMcpjsonServers": ["every", "memory"]
        }}})
        .to_string(),
    )
    .expect("write");
    std::fs::write(
        home.join(".codex/config.toml"),
        format!(
            "[mcp_servers.every]\ncommand = {:?}\nenabled_tools = [\"echo\", \"get-sum\"]\n",
            everything.display().to_string()
        ),
    )
    .expect("write");
    let out = Command::new(workspace_bin("tether"))
        .env("TETHER_DB", tether_tests::scratch_store())
        .args([
            "inventory",
            "--test",
            "--json",
            "--harness",
            "claude",
            "--harness",
            "codex",
        ])
        .arg("--project")
        .arg(&project)
        .env_clear()
        .env("HOME", &home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let row = |harness: &str, name: &str| {
        doc["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .find(|r| r["harness"] == harness && r["name"] == name)
            .unwrap_or_else(|| panic!("{harness}/{name}: {doc:#}"))
            .clone()
    };
    let every_total = every_count["total"].as_u64().expect("total");
    let memory_total = memory_count["total"].as_u64().expect("total");
    let kept = every_count["tools"]["echo"].as_u64().expect("echo")
        + every_count["tools"]["get-sum"].as_u64().expect("get-sum");
    assert_eq!(row("claude", "every")["tool_tokens"], every_total);
    assert_eq!(row("claude", "memory")["tool_tokens"], memory_total);
    assert_eq!(row("codex", "every")["tool_tokens"], kept);
    // The endpoint test itself still says what the server lists in full.
    assert_eq!(
        row("codex", "every")["endpoint_test"]["tool_tokens"],
        every_total
    );
    let total = |harness: &str| {
        doc["token_totals"]
            .as_array()
            .expect("token_totals")
            .iter()
            .find(|t| t["harness"] == harness && t.get("scope").is_none())
            .unwrap_or_else(|| panic!("{harness}: {doc:#}"))
            .clone()
    };
    assert_eq!(total("claude")["tokens"], every_total + memory_total);
    assert_eq!(total("claude")["servers"], 2);
    assert_eq!(total("codex")["tokens"], kept);
    assert_eq!(total("codex")["unmeasured"], 0);
}

/// GIVEN server-everything over streamable HTTP (it answers POSTs with an
/// event stream) and over legacy SSE THEN the estimate is made from the
/// bytes it sent, read on their way to the typed client, and equals the
/// independent count: the method is the exact one, not `modelled-fields`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_and_sse_the_count_is_made_from_the_servers_own_bytes() {
    let Some(command) = peer("node_modules/.bin/mcp-server-everything") else {
        return;
    };
    let Some(theirs) = independent(&command) else {
        return;
    };
    for mode in ["streamableHttp", "sse"] {
        let Some((_server, url)) = tether_tests::everything_over_http(mode).await else {
            return;
        };
        let ours = endpoint_test(&["--url", &url]);
        same_count(mode, &ours, &theirs, 13);
    }
}
