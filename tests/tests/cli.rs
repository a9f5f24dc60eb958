//! The `tether` command as a user runs it: exit codes, one JSON document, and
//! the human summary.

use std::process::Command;

use tether_tests::workspace_bin;

fn tether() -> Command {
    let mut cmd = Command::new(workspace_bin("tether"));
    // Never the caller's default store (an endpoint check pins there).
    cmd.env("TETHER_DB", tether_tests::scratch_store());
    cmd
}

/// The first screen: it says what Tether answers (not how its code is laid
/// out), lists the commands in the order a user meets them, and each
/// command's line there is the first line of that command's own `--help`.
#[test]
fn the_top_level_help_speaks_to_users_and_is_in_step_with_every_command() {
    let out = tether().arg("--help").output().expect("run");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).expect("utf8");
    assert!(
        text.starts_with("Which MCP servers did your AI coding agent really get"),
        "{text}"
    );
    for internal in ["crate", "argument parsing", "rendering"] {
        assert!(!text.contains(internal), "{internal}: {text}");
    }
    let listed: Vec<(String, String)> = text
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let l = l.trim_start();
            let (name, line) = l.split_once(char::is_whitespace)?;
            Some((name.to_owned(), line.trim().to_owned()))
        })
        .collect();
    let names: Vec<&str> = listed.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "inventory",
            "sessions",
            "run",
            "check",
            "collect",
            "tap",
            "probe",
            "endpoint-test",
            "pins",
            "serve",
            "service",
            "history",
            "mcp",
            "explain",
            "schema",
            "plugins",
            "help"
        ],
        "{text}"
    );
    for (name, line) in listed.iter().filter(|(n, _)| n != "help") {
        let own = tether()
            .args([name.as_str(), "--help"])
            .output()
            .expect("run");
        let own = String::from_utf8(own.stdout).expect("utf8");
        let first = own.lines().next().unwrap_or_default().trim_end_matches('.');
        assert_eq!(first, line.trim_end_matches('.'), "{name}: {own}");
    }
}

#[test]
fn probe_json_prints_exactly_one_document_and_exits_0_on_a_verdict() {
    let agent = workspace_bin("tether-reference-agent");
    let out = tether()
        .args(["probe", "--json", "--timeout", "30", "--"])
        .arg(&agent)
        .output()
        .expect("run tether");
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("utf8");
    let mut docs = serde_json::Deserializer::from_str(&text).into_iter::<serde_json::Value>();
    let doc = docs.next().expect("one document").expect("valid json");
    assert!(docs.next().is_none(), "exactly one document");
    assert_eq!(doc["schema_version"], 3);
    assert_eq!(doc["verdict"], "active");
    assert_eq!(doc["sentinel"]["client"]["name"], "tether-reference-agent");
    assert_eq!(doc["report"]["servers"][0]["status"], "active");
}

#[test]
fn probe_exits_3_with_json_when_the_agent_cannot_start() {
    let out = tether()
        .args(["probe", "--json", "--", "/nonexistent/agent-binary"])
        .output()
        .expect("run tether");
    assert_eq!(out.status.code(), Some(3));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json still printed");
    assert_eq!(doc["verdict"], "agent_failed");
    assert_eq!(doc["session"]["error"]["reason_code"], "command_not_found");
}

/// GIVEN an agent that accepts the session and exits before any contact
/// WHEN `tether probe --json` runs with a long grace THEN it exits 3 at once,
/// with verdict `agent_exited` and the exit in the one JSON document.
#[test]
fn probe_exits_3_with_json_when_the_agent_exits_before_contact() {
    let agent = workspace_bin("tether-fake-agent");
    let started = std::time::Instant::now();
    let out = tether()
        .args(["probe", "--json", "--grace", "30", "--timeout", "60", "--"])
        .arg(&agent)
        .args(["--mode", "ignore", "--mode", "exit-after-session-new"])
        .output()
        .expect("run tether");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(3));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one document");
    assert_eq!(doc["verdict"], "agent_exited");
    assert_eq!(doc["agent_exit"]["code"], 7);
    assert_eq!(doc["agent_exit"]["before_contact"], true);
}

#[test]
fn usage_errors_exit_2() {
    let out = tether().args(["probe", "--json"]).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    let out = tether()
        .args(["probe", "--transport", "carrier-pigeon", "--", "x"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let out = tether()
        .args(["probe", "--grace", "forever", "--", "x"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn probe_prints_a_human_summary_by_default() {
    let agent = workspace_bin("tether-reference-agent");
    let out = tether()
        .args(["probe", "--transport", "sse", "--"])
        .arg(&agent)
        .output()
        .expect("run tether");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Verdict   active"), "{text}");
    assert!(text.contains("over sse"), "{text}");
    assert!(text.contains("client tether-reference-agent"), "{text}");
}

#[test]
fn schema_commands_print_draft_2020_12() {
    for doc in ["history", "attempt", "probe-report"] {
        let out = tether().args(["schema", doc]).output().expect("run");
        assert!(out.status.success());
        let schema: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
    }
}

// === tether endpoint-test ===

fn everything() -> Option<std::path::PathBuf> {
    tether_tests::peer("node_modules/.bin/mcp-server-everything")
}

#[test]
fn endpoint_test_passes_a_real_server_with_its_tool_count_and_exits_0() {
    let Some(server) = everything() else { return };
    let out = tether()
        .args(["endpoint-test", "--json", "--"])
        .arg(&server)
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one json document");
    assert_eq!(doc["succeeded"], true);
    assert_eq!(doc["tool_count"], 13);
    assert_eq!(doc["transport"], "stdio");
    assert_eq!(doc["target"], "mcp-server-everything");
    std::fs::write(
        tether_tests::samples_dir().join("endpoint-test.json"),
        &out.stdout,
    )
    .expect("sample");
}

/// GIVEN `--call` WHEN the tool answers THEN exit 0 and the call's shape in
/// one line and in `call`; WHEN the tool is not listed, or answers isError
/// THEN exit 1 and why; the arguments (a planted secret) are in neither.
#[test]
fn endpoint_test_calls_one_tool_only_when_asked_and_exits_by_its_outcome() {
    let Some(server) = everything() else { return };
    let planted = "hunter2-Pa55word-call";
    let run = |json: bool, tool: &str, arguments: &str| {
        let mut cmd = tether();
        cmd.arg("endpoint-test");
        if json {
            cmd.arg("--json");
        }
        let out = cmd
            .args(["--call", tool, "--arguments", arguments, "--"])
            .arg(&server)
            .output()
            .expect("run");
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(!text.contains(planted), "the arguments leaked: {text}");
        (out.status.code(), text)
    };
    let echo = format!("{{\"message\": \"{planted}\"}}");

    let (code, text) = run(false, "echo", &echo);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("called  echo: a result, 1 content block"),
        "{text}"
    );

    let (code, text) = run(true, "echo", &echo);
    assert_eq!(code, Some(0), "{text}");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("one json document");
    assert_eq!(doc["call"]["tool"], "echo");
    assert_eq!(doc["call"]["succeeded"], true);
    assert_eq!(doc["call"]["content_items"], 1);

    let (code, text) = run(false, "nope", "{}");
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("passed  stdio"),
        "the listing still passed: {text}"
    );
    assert!(
        text.contains("failed  call nope: tool_not_listed"),
        "{text}"
    );

    let (code, text) = run(true, "echo", "{}");
    assert_eq!(code, Some(1), "{text}");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("one json document");
    assert_eq!(
        (doc["succeeded"].clone(), doc["call"]["is_error"].clone()),
        (true.into(), true.into())
    );

    let (code, text) = run(false, "echo", "[1]");
    assert_eq!(code, Some(2), "not an object is a usage error: {text}");
}

#[test]
fn endpoint_test_times_out_fast_and_leaves_no_process() {
    let marker = format!("{}", 990_000 + std::process::id() % 9_000);
    // Find (and, on a fresh clone, build) the binary before the clock starts.
    let mut tether = tether();
    let started = std::time::Instant::now();
    let out = tether
        .args([
            "endpoint-test",
            "--json",
            "--timeout",
            "2",
            "--",
            "sleep",
            &marker,
        ])
        .output()
        .expect("run");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(doc["reason_code"], "timeout");
    std::fs::write(
        tether_tests::samples_dir().join("endpoint-test-timeout.json"),
        &out.stdout,
    )
    .expect("sample");
    let left = Command::new("pgrep")
        .args(["-f", &format!("sleep {marker}")])
        .output()
        .expect("pgrep");
    assert!(
        left.stdout.is_empty(),
        "left behind: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}

#[test]
fn endpoint_test_prints_no_planted_secret_from_a_url_or_a_config() {
    let secrets = [
        "Sup3rSecretPassw0rd",
        "ghp_abcdefghij0123456789",
        "tok-in-query-98765",
    ];
    let url = format!(
        "http://alice:{}@127.0.0.1:1/mcp?token={}",
        secrets[0], secrets[2]
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let json_config = dir.path().join("mcp.json");
    std::fs::write(
        &json_config,
        serde_json::json!({"mcpServers": {"leaky": {
            "command": "/nonexistent/dir/srv", "args": ["--key", secrets[1]],
            "env": {"PASSWORD": secrets[0]}}}})
        .to_string(),
    )
    .expect("write");
    let toml_config = dir.path().join("config.toml");
    std::fs::write(
        &toml_config,
        format!("[mcp_servers.leaky]\nurl = \"{url}\"\nhttp_headers = {{ Authorization = \"Bearer {}\" }}\n", secrets[1]),
    )
    .expect("write");
    let runs: Vec<Vec<String>> = vec![
        vec![
            "--url".into(),
            url.clone(),
            "--header".into(),
            format!("Authorization: Bearer {}", secrets[1]),
        ],
        vec![
            "--config".into(),
            json_config.display().to_string(),
            "--server".into(),
            "leaky".into(),
        ],
        vec![
            "--config".into(),
            toml_config.display().to_string(),
            "--server".into(),
            "leaky".into(),
        ],
    ];
    for args in runs {
        for json in [false, true] {
            let mut cmd = tether();
            cmd.arg("endpoint-test").args(["--timeout", "5"]);
            if json {
                cmd.arg("--json");
            }
            let out = cmd.args(&args).output().expect("run");
            assert_eq!(out.status.code(), Some(1), "{args:?}");
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            for s in secrets {
                assert!(!text.contains(s), "{s} leaked for {args:?}: {text}");
            }
            assert!(!text.contains("alice"), "{text}");
        }
    }
}

/// GIVEN a configured server whose header needs a variable that is not set
/// here WHEN `tether probe` offers it and `tether endpoint-test` tests it
/// THEN both name the variable as the cause (`unresolved_variable`), not the
/// connection error it leads to, and print no value from the entry.
#[test]
fn an_unset_variable_is_the_cause_in_the_probe_and_the_endpoint_test() {
    const UNSET: &str = "TETHER_TEST_UNSET_GH_TOKEN";
    const PLANTED: &str = "planted-Header-Secret-5521";
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("mcp.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"gh": {
            "type": "http",
            "url": "http://127.0.0.1:1/mcp",
            "headers": {"Authorization": format!("Bearer ${{{UNSET}}}"), "X-Key": PLANTED},
        }}})
        .to_string(),
    )
    .expect("write");
    let probe = |json: bool| {
        let mut cmd = tether();
        cmd.arg("probe");
        if json {
            cmd.arg("--json");
        }
        cmd.args(["--timeout", "30", "--config"])
            .arg(&config)
            .args(["--server", "gh", "--"])
            .arg(workspace_bin("tether-reference-agent"))
            .env_remove(UNSET)
            .output()
            .expect("run tether")
    };
    let out = probe(true);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains(PLANTED), "{text}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one document");
    let servers = doc["report"]["servers"].as_array().expect("servers");
    let gh = servers
        .iter()
        .find(|s| s["name"] == "gh")
        .unwrap_or_else(|| panic!("no gh row: {doc:#}"));
    assert_eq!(gh["reason_code"], "unresolved_variable", "{gh:#}");
    assert_eq!(gh["summary"], format!("not set here: {UNSET}"), "{gh:#}");
    assert_ne!(gh["status"], "active", "{gh:#}");
    let human = probe(false);
    let human = String::from_utf8_lossy(&human.stdout);
    assert!(human.contains(&format!("not set here: {UNSET}")), "{human}");
    assert!(!human.contains(PLANTED), "{human}");

    for json in [false, true] {
        let mut cmd = tether();
        cmd.args(["endpoint-test", "--timeout", "5", "--config"])
            .arg(&config)
            .args(["--server", "gh"])
            .env_remove(UNSET);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().expect("run");
        assert_eq!(out.status.code(), Some(1));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!text.contains(PLANTED), "{text}");
        assert!(text.contains("unresolved_variable"), "{text}");
        assert!(text.contains(UNSET), "{text}");
        assert!(!text.contains("connect_failed"), "{text}");
    }
}

#[test]
fn endpoint_test_usage_errors_exit_2() {
    for args in [
        vec!["endpoint-test"],
        vec!["endpoint-test", "--config", "x.json"],
        vec![
            "endpoint-test",
            "--url",
            "http://127.0.0.1:1/mcp",
            "--header",
            "no-colon",
        ],
    ] {
        let out = tether().args(&args).output().expect("run");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("mcp.json");
    std::fs::write(&config, r#"{"mcpServers": {"a": {"command": "x"}}}"#).expect("write");
    let out = tether()
        .args(["endpoint-test", "--config"])
        .arg(&config)
        .args(["--server", "missing"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no MCP server named"));
}

// === tether probe --passthrough ===

#[test]
fn passthrough_probe_of_a_kind_without_strategy_is_unavailable_no_strategy() {
    let out = tether()
        .args([
            "probe",
            "--passthrough",
            "aider",
            "--json",
            "--",
            "aider",
            "-p",
            "hi",
        ])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(doc["verdict"], "unavailable");
    assert_eq!(doc["report"]["servers"][0]["reason_code"], "no_strategy");
    assert_eq!(doc["report"]["trigger"], "passthrough_start");
}

#[test]
fn passthrough_probe_of_real_codex_is_active_as_one_json_document() {
    let Some(codex) = tether_tests::peer("node_modules/.bin/codex") else {
        return;
    };
    let out = tether()
        .args([
            "probe",
            "--passthrough",
            "codex",
            "--timeout",
            "20",
            "--json",
            "--",
        ])
        .arg(&codex)
        .args(["exec", "--skip-git-repo-check", "hi"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one json document");
    assert_eq!(doc["verdict"], "active", "{doc:#}");
    assert_eq!(doc["advertised"]["sse"], false);
    std::fs::write(
        tether_tests::samples_dir().join("probe-report-passthrough.json"),
        &out.stdout,
    )
    .expect("sample");
}

// === examples/host and tether history ===

/// GIVEN the example host offering two real third-party stdio servers beside
/// its own WHEN it runs without and then with `--observe-servers` THEN the
/// same servers read "Delivered · connection unverified" directly (the
/// reference agent reports nothing) and "Active" with their real tool counts
/// through the relay: the opt-in is the host's, per run.
#[test]
fn the_example_host_opts_third_party_servers_into_the_relay() {
    let (Some(everything), Some(memory)) = (
        tether_tests::peer("node_modules/.bin/mcp-server-everything"),
        tether_tests::peer("node_modules/.bin/mcp-server-memory"),
    ) else {
        return;
    };
    workspace_bin("tether-relay");
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("mcp.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {
            "every": {"command": everything},
            "memory": {"command": memory, "env": {"MEMORY_FILE_PATH": dir.path().join("m.json")}},
        }})
        .to_string(),
    )
    .expect("write");
    let run = |observe: bool, db: &str| {
        let mut cmd = Command::new(workspace_bin("tether-example-host"));
        cmd.arg("--db")
            .arg(dir.path().join(db))
            .arg("--agent")
            .arg(workspace_bin("tether-reference-agent"))
            .arg("--config")
            .arg(&config)
            .args(["--server", "every", "--server", "memory"]);
        if observe {
            cmd.arg("--observe-servers");
        }
        let out = cmd.output().expect("run host");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).expect("utf8");
        text.lines()
            .find(|l| l.starts_with("final ") && l.contains("(current)"))
            .unwrap_or_else(|| panic!("no final line:\n{text}"))
            .to_owned()
    };
    let direct = run(false, "direct.db");
    assert!(
        direct.contains("every: Delivered · connection unverified")
            && direct.contains("memory: Delivered · connection unverified"),
        "{direct}"
    );
    let relayed = run(true, "relayed.db");
    assert!(
        relayed.contains("every: Active · 13 tools")
            && relayed.contains("memory: Active · 9 tools"),
        "{relayed}"
    );
    assert!(relayed.contains("kandev: Active · 1 tool"), "{relayed}");
}

#[test]
fn the_example_host_twice_then_history_keeps_bounded_attempts_across_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("host.db");
    let host = workspace_bin("tether-example-host");
    let agent = workspace_bin("tether-reference-agent");
    // The second run attaches what Cursor had configured (a private HOME).
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".cursor")).expect("mkdir");
    std::fs::write(
        home.join(".cursor/mcp.json"),
        r#"{"mcpServers": {"docs": {"url": "https://docs.example.com/mcp", "headers": {"Authorization": "Bearer sekret-host-4411"}}}}"#,
    )
    .expect("write");
    let runs = std::cell::Cell::new(0);
    let run = || {
        runs.set(runs.get() + 1);
        let mut cmd = Command::new(&host);
        cmd.arg("--db").arg(&db).arg("--agent").arg(&agent);
        if runs.get() == 2 {
            cmd.args(["--inventory", "cursor"]).env("HOME", &home);
        }
        let out = cmd.output().expect("run host");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf8")
    };
    let first = run();
    assert!(
        first.contains("live ") && first.contains("Active · 1 tool"),
        "{first}"
    );
    let second = run();
    assert!(
        second.starts_with("restored "),
        "rehydrated state printed first:\n{second}"
    );

    let out = tether()
        .args(["history", "--json", "--db"])
        .arg(&db)
        .output()
        .expect("history");
    assert!(out.status.success());
    let docs: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json array");
    let docs = docs.as_array().expect("array");
    assert_eq!(docs.len(), 1);
    let attempts = docs[0]["attempts"].as_array().expect("attempts");
    assert!(attempts.len() <= 3);
    let triggers: Vec<&str> = attempts
        .iter()
        .map(|a| a["trigger"].as_str().expect("trigger"))
        .collect();
    assert_eq!(
        triggers,
        ["session_new", "session_reset", "session_new"],
        "the first run's last attempt is kept"
    );
    let first_run_attempt = attempts[0]["attempt_id"].as_str().expect("id");
    assert!(
        first.contains(first_run_attempt),
        "{first_run_attempt} came from the first run"
    );
    for a in attempts {
        assert_eq!(a["servers"][0]["status"], "active");
    }
    // Only the second run's attempts carry the configuration snapshot.
    assert!(attempts[0].get("config_snapshot").is_none());
    for a in &attempts[1..] {
        let rows = a["config_snapshot"]["rows"]
            .as_array()
            .expect("snapshot rows");
        assert_eq!(rows.len(), 1, "{a:#}");
        assert_eq!(rows[0]["harness"], "cursor");
        assert_eq!(rows[0]["name"], "docs");
        assert_eq!(rows[0]["stages"]["enabled"]["provenance"], "current_config");
    }
    assert!(!String::from_utf8_lossy(&out.stdout).contains("sekret-host-4411"));
    std::fs::write(
        tether_tests::samples_dir().join("history-from-host.json"),
        serde_json::to_vec_pretty(&docs[0]).expect("json"),
    )
    .expect("sample");

    let human = tether()
        .args(["history", "--db"])
        .arg(&db)
        .output()
        .expect("history");
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.contains("session example-session") && text.contains("Tools listed ✓"),
        "{text}"
    );
}

/// GIVEN the most verbose logs (`TETHER_LOG=trace`) WHEN the reference agent
/// is probed over every transport THEN it reaches Active with the sentinel's
/// credential, and neither the output nor the logs hold anything shaped like
/// it (64 hex digits).
#[test]
fn the_endpoint_credential_never_reaches_output_or_logs() {
    let agent = workspace_bin("tether-reference-agent");
    for transport in ["http", "sse", "stdio"] {
        let out = tether()
            .args(["probe", "--json", "--transport", transport, "--"])
            .arg(&agent)
            .env("TETHER_LOG", "trace")
            .output()
            .expect("run tether");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let doc: serde_json::Value = serde_json::from_str(&stdout).expect("one document");
        assert_eq!(doc["verdict"], "active", "{transport}: {stderr}");
        assert!(!stderr.is_empty(), "trace logs were written");
        for (what, text) in [("stdout", &stdout), ("logs", &stderr)] {
            let leaked = text
                .split(|c: char| !c.is_ascii_hexdigit())
                .find(|run| run.len() >= 64);
            assert!(leaked.is_none(), "{transport}: {what} hold {leaked:?}");
        }
    }
}

/// GIVEN a stdio server that starts a daemon in a new session (the issue's
/// `setsid sleep 777 & exec server`) WHEN `tether endpoint-test` passes or
/// times out THEN the daemon is gone too, found by walking the process table.
#[test]
fn endpoint_test_leaves_no_daemon_behind() {
    let server = workspace_bin("tether-hostile-mcp");
    for (slot, mode, timeout) in [(5, "never", "2"), (6, "exit", "3")] {
        let token = format!("{}{slot}", 80_000 + std::process::id() % 9_000);
        let script = format!(
            "setsid sleep {token} & sleep 0.2; exec {} --mode {mode}",
            server.display()
        );
        let out = tether()
            .args([
                "endpoint-test",
                "--json",
                "--timeout",
                timeout,
                "--",
                "sh",
                "-c",
                &script,
            ])
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(1), "{mode}");
        let left = tether_tests::leftovers(&token);
        assert!(left.is_empty(), "{mode}: left behind {left:?}");
    }
}

/// GIVEN no `--db` and no `TETHER_DB` WHEN `tether sessions import` reads
/// the example home's sessions THEN they go to the default store
/// (`$XDG_DATA_HOME/tether/tether.db`, its directory 0700), which `tether
/// history` and `tether inventory --sessions` then read with no flag; each
/// says first which store it uses; `TETHER_DB` names another.
#[test]
fn one_default_store_serves_import_history_and_inventory() {
    use std::os::unix::fs::PermissionsExt;
    let home = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../book/example/home");
    let data = tempfile::tempdir().expect("data");
    let run = |args: &[&str], extra: &[(&str, &std::path::Path)]| {
        let out = tether()
            .args(args)
            .env_clear()
            .env("HOME", &home)
            .env("XDG_DATA_HOME", data.path())
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(extra.iter().copied())
            .current_dir(data.path())
            .output()
            .expect("run tether");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let store = data.path().join("tether/tether.db");
    let said = format!("store {} (the default store", store.display());
    let (code, _, err) = run(&["sessions", "import"], &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.lines().next().unwrap_or("").contains(&said), "{err}");
    assert!(store.is_file(), "the default store is made on first use");
    let mode = std::fs::metadata(store.parent().expect("dir"))
        .expect("meta")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    let (code, out, err) = run(&["history", "--json"], &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.lines().next().unwrap_or("").contains(&said), "{err}");
    assert!(
        out.contains("2d8efbcf-e501-440d-89ec-66cb10f9d678"),
        "{out}"
    );
    let (code, _, err) = run(&["inventory", "--sessions", "--json"], &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.lines().next().unwrap_or("").contains(&said), "{err}");
    let other = data.path().join("other.db");
    let (code, _, err) = run(&["sessions", "import"], &[("TETHER_DB", &other)]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("(TETHER_DB)"), "{err}");
    assert!(other.is_file());
}

/// GIVEN a fresh machine (no store yet) WHEN `tether serve` starts THEN it
/// serves an empty view (its address printed, the session list empty) and
/// exits 0 on Ctrl-C, never 1.
#[test]
fn serve_with_no_store_shows_an_empty_view() {
    use std::io::BufRead;
    let home = tempfile::tempdir().expect("home");
    let mut child = tether_tests::tether_at_home(home.path())
        .args(["serve", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("tether serve");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("its first line");
    let doc: serde_json::Value = serde_json::from_str(&line).unwrap_or_else(|e| {
        let _ = child.kill();
        panic!("not one JSON document ({e}): {line:?}")
    });
    let url = doc["url"].as_str().expect("a url").trim_end_matches('/');
    let token = doc["token"].as_str().expect("a token");
    let answer = Command::new("curl")
        .args(["-sf", "-H", &format!("Authorization: Bearer {token}")])
        .arg(format!("{url}/api/v1/sessions"))
        .output();
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success());
    let out = child.wait_with_output().expect("ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("serving an empty view"), "{stderr}");
    if let Ok(answer) = answer
        && answer.status.success()
    {
        let list: serde_json::Value = serde_json::from_slice(&answer.stdout).expect("json");
        assert_eq!(list["sessions"].as_array().map(Vec::len), Some(0), "{list}");
    }
}

/// GIVEN a harness's own CLI given to `tether probe` without
/// `--passthrough` (a stand-in named `claude` that, like the real one,
/// sits silent on a piped stdin) WHEN probed THEN it ends at once, exit 2,
/// naming the passthrough kind, and never repeats the command's words (a
/// prompt); given its ACP mode (`… acp`) it is probed over ACP as before.
#[test]
fn probing_a_harness_cli_over_acp_names_its_passthrough_kind_at_once() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().expect("home");
    let claude = home.path().join("claude");
    std::fs::write(&claude, "#!/bin/sh\nexec sleep 60\n").expect("script");
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let started = std::time::Instant::now();
    let out = tether_tests::tether_at_home(home.path())
        .args(["probe", "--timeout", "60", "--"])
        .arg(&claude)
        .args(["-p", "planted-prompt-words"])
        .output()
        .expect("tether probe");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--passthrough claude"), "{stderr}");
    assert!(!stderr.contains("planted-prompt-words"), "{stderr}");
    // Its ACP mode: probed over ACP (the stand-in never answers; bounded).
    let acp = tether_tests::tether_at_home(home.path())
        .args(["probe", "--timeout", "2", "--"])
        .arg(&claude)
        .arg("acp")
        .output()
        .expect("tether probe");
    assert_eq!(acp.status.code(), Some(3));
}

/// GIVEN a home with one recorded Claude Code session (its project
/// `.tmpf23dO3`) WHEN `tether sessions list` filters it all away (a slip of
/// the project's name, another project, another harness) THEN it says that
/// no session matches the filters and how many there are without them,
/// names the project meant (or the projects there are), and never says
/// that no session is on disk; without filters an empty home still says so.
#[test]
fn a_listing_its_filters_empty_says_so_and_names_the_project_meant() {
    let home = tempfile::tempdir().expect("home");
    let status = Command::new("cp")
        .arg("-r")
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/records/claude/."))
        .arg(home.path())
        .status()
        .expect("cp");
    assert!(status.success());
    let list = |args: &[&str]| {
        let out = tether_tests::tether_at_home(home.path())
            .args(["sessions", "list"])
            .args(args)
            .output()
            .expect("tether sessions list");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(list(&[]).contains(".tmpf23dO3"), "the fixture is read");
    for (args, says) in [
        (
            &["--project", ".tmpf23dO"][..],
            "No session on disk matches --project \".tmpf23dO\"; without it, 1 session. Did you mean --project \".tmpf23dO3\"?",
        ),
        (
            &["--project", "elsewhere"][..],
            "No session on disk matches --project \"elsewhere\"; without it, 1 session. Their projects: .tmpf23dO3.",
        ),
        (
            &["--harness", "codex"][..],
            "No session on disk matches --harness codex; without it, 1 session.",
        ),
    ] {
        let text = list(args);
        assert!(text.starts_with(says), "{args:?}: {text}");
        assert!(!text.contains("No harness sessions found"), "{text}");
    }
    let empty = tempfile::tempdir().expect("an empty home");
    let out = tether_tests::tether_at_home(empty.path())
        .args(["sessions", "list", "--project", "x"])
        .output()
        .expect("tether sessions list");
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .starts_with("No session on disk matches --project \"x\"; without it, 0 sessions."),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
