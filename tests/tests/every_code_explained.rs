//! Every code Tether prints is one `tether explain` knows: the codes are
//! collected from what the commands print (`tether sessions show FILE
//! --json`, `tether check FILE --format json` with every stage required)
//! on every saved session under tests/fixtures/records-by-path, and each
//! is looked up; then from a home holding a harness's own health check
//! (`claude mcp list`'s MCP log, as 2.1.332 wrote it) and a server whose
//! command is not found: `inventory --json`, `sessions list --json
//! --health-checks`, `sessions show ID --json`, `check ID --format json`,
//! and `history --json` after `sessions import` (its triggers). (The
//! vocabulary's own lists are checked where they live: words/src/explain.rs
//! and requirements/src/tests.rs.)

use std::collections::BTreeSet;
use std::path::Path;

/// Every value under a key that holds a code, and every stage key.
fn codes_in(value: &serde_json::Value, out: &mut BTreeSet<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, v) in map {
                match (key.as_str(), v) {
                    (
                        "status" | "reason_code" | "provenance" | "stage" | "verdict" | "trigger",
                        serde_json::Value::String(code),
                    ) => {
                        out.insert(code.clone());
                    }
                    ("stages", serde_json::Value::Object(stages)) => {
                        out.extend(stages.keys().cloned());
                    }
                    _ => {}
                }
                codes_in(v, out);
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| codes_in(v, out)),
        _ => {}
    }
}

const STAGES: [&str; 11] = [
    "reached",
    "configured",
    "delivered",
    "authenticated",
    "initialized",
    "tools_listed",
    "schema_accepted",
    "current_thread",
    "model_visible",
    "callable",
    "used",
];

#[test]
fn every_code_the_commands_print_is_explained() {
    let home = tempfile::tempdir().expect("home");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/records-by-path");
    let mut codes = BTreeSet::new();
    let mut read = 0;
    for file in std::fs::read_dir(&dir).expect("fixtures") {
        let path = file.expect("entry").path();
        let shown = tether_tests::tether_at_home(home.path())
            .args(["sessions", "show"])
            .arg(&path)
            .arg("--json")
            .output()
            .expect("tether runs");
        let Ok(doc) = serde_json::from_slice::<serde_json::Value>(&shown.stdout) else {
            continue;
        };
        read += 1;
        codes_in(&doc, &mut codes);
        let servers: Vec<String> = doc["rows"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["kind"] == "mcp_server")
            .filter_map(|r| r["name"].as_str().map(str::to_owned))
            .collect();
        let mut check = tether_tests::tether_at_home(home.path());
        check.arg("check").arg(&path).args(["--format", "json"]);
        for server in servers.iter().filter(|s| !s.contains(':')) {
            for stage in STAGES {
                check.args(["--require", &format!("{server}:{stage}")]);
            }
        }
        let checked = check.output().expect("tether runs");
        if let Ok(doc) = serde_json::from_slice::<serde_json::Value>(&checked.stdout) {
            codes_in(&doc, &mut codes);
        }
    }
    assert!(read >= 5, "only {read} fixtures read");
    let unknown: Vec<&String> = codes
        .iter()
        .filter(|c| tether_words::explain::lookup(c).is_empty())
        .collect();
    assert!(
        unknown.is_empty(),
        "printed, yet `tether explain` knows nothing of: {unknown:?} (of {codes:?})"
    );
}

/// What `claude mcp list` (2.1.332) wrote to a server's MCP log: a health
/// check, no agent session (tests/tests/claude_health_check_live.rs).
const HEALTH_CHECK_LOG: &str = r#"{"debug":"Starting connection with timeout of 30000ms","timestamp":"2026-12-07T15:28:14.253Z","sessionId":"bb5375c3-37cc-4fc9-98b0-fcd59f546530","cwd":"/tmp/hcn.ubkt"}
{"debug":"Successfully connected (transport: stdio) in 1179ms","timestamp":"2026-12-07T15:28:15.413Z","sessionId":"bb5375c3-37cc-4fc9-98b0-fcd59f546530","cwd":"/tmp/hcn.ubkt"}
"#;

#[test]
fn every_code_a_health_check_an_import_and_the_inventory_print_is_explained() {
    let home = tempfile::tempdir().expect("home");
    let home = home.path();
    let logs = home.join(".cache/claude-cli-nodejs/-tmp-hcn-ubkt/mcp-logs-every");
    std::fs::create_dir_all(&logs).expect("folders");
    std::fs::write(
        logs.join("2026-12-07T15-28-14-252Z.jsonl"),
        HEALTH_CHECK_LOG,
    )
    .expect("a log");
    std::fs::write(
        home.join(".claude.json"),
        r#"{"mcpServers":{"every":{"command":"tether-no-such-server-9q"}}}"#,
    )
    .expect("a config");
    let db = home.join("codes.db").display().to_string();
    let id = "claude:bb5375c3-37cc-4fc9-98b0-fcd59f546530";
    let mut codes = BTreeSet::new();
    let import = tether_tests::tether_at_home(home)
        .args(["sessions", "import", "--db", &db])
        .output()
        .expect("tether runs");
    assert!(
        import.status.success(),
        "{}",
        String::from_utf8_lossy(&import.stderr)
    );
    for args in [
        &["inventory", "--json"][..],
        &["sessions", "list", "--json", "--health-checks"],
        &["sessions", "show", id, "--json"],
        &["check", id, "--format", "json"],
        &["history", "--json", "--db", &db],
    ] {
        let out = tether_tests::tether_at_home(home)
            .args(args)
            .output()
            .expect("tether runs");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{args:?}: {}", String::from_utf8_lossy(&out.stdout)));
        codes_in(&doc, &mut codes);
    }
    for printed in ["health_check", "command_not_found"] {
        assert!(
            codes.contains(printed),
            "{printed} not collected: {codes:?}"
        );
    }
    let unknown: Vec<&String> = codes
        .iter()
        .filter(|c| tether_words::explain::lookup(c).is_empty())
        .collect();
    assert!(
        unknown.is_empty(),
        "printed, yet `tether explain` knows nothing of: {unknown:?} (of {codes:?})"
    );
}
