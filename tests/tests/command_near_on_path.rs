//! Issue 67 §3: a configured command that is on no folder of PATH gets a
//! "did you mean" for the executable on PATH a slip away from it, in the
//! one sentence every place says it: `tether inventory`, an endpoint test
//! (`tether endpoint-test`, what `run` and `inventory --test` use) and
//! `tether sessions show` (and `run`, which prints the same matrix).
//!
//! The session is Claude Code 2.1.197's own records of a `claude -p` run
//! here whose `time` server's command was `mcp-server-tiem`: its MCP log
//! (`Connection failed after 155ms: Executable not found in $PATH:
//! "mcp-server-tiem"`) and its transcript's prompt line.

use std::path::Path;

use serde_json::Value;

/// The run's session id.
const SESSION: &str = "777477a1-1890-4796-9560-f6264b79a203";

/// What Claude Code 2.1.197 wrote to the `time` server's MCP log.
const LOG: &str = r#"{"debug":"Starting connection with timeout of 30000ms","timestamp":"2026-12-07T19:02:51.463Z","sessionId":"777477a1-1890-4796-9560-f6264b79a203","cwd":"/tmp/near.path"}
{"debug":"Connection failed after 155ms: Executable not found in $PATH: \"mcp-server-tiem\"","timestamp":"2026-12-07T19:02:51.609Z","sessionId":"777477a1-1890-4796-9560-f6264b79a203","cwd":"/tmp/near.path"}
{"error":"Connection failed: Executable not found in $PATH: \"mcp-server-tiem\"","timestamp":"2026-12-07T19:02:51.610Z","sessionId":"777477a1-1890-4796-9560-f6264b79a203","cwd":"/tmp/near.path"}
"#;

/// The run's prompt line in its transcript (2.1.197).
const TRANSCRIPT: &str = r#"{"parentUuid":null,"isSidechain":false,"promptId":"c89b6180-055f-4ce8-9cab-dfc03b48b725","type":"user","message":{"role":"user","content":"hi"},"uuid":"e0a29d82-0687-407e-ada0-8cc8537a4e23","timestamp":"2026-12-07T19:02:51.837Z","permissionMode":"default","promptSource":"sdk","userType":"external","entrypoint":"sdk-cli","cwd":"/tmp/near.path","sessionId":"777477a1-1890-4796-9560-f6264b79a203","version":"2.1.197","gitBranch":"HEAD"}
"#;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("folders");
    std::fs::write(path, text).expect("a file");
}

/// A home whose `~/.claude.json` gives `time` the command
/// `mcp-server-tiem`, with the run's records, and a PATH folder holding
/// `names` (executables).
fn home_with(names: &[&str]) -> (tempfile::TempDir, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().expect("a home");
    let bin = home.path().join("bin");
    std::fs::create_dir(&bin).expect("a PATH folder");
    for name in names {
        let path = bin.join(name);
        std::fs::write(&path, "#!/bin/sh\nexit 0\n").expect("an executable");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("mode");
    }
    let config =
        r#"{"mcpServers":{"time":{"type":"stdio","command":"mcp-server-tiem","args":[]}}}"#;
    write(&home.path().join(".claude.json"), config);
    write(
        &home.path().join(
            ".cache/claude-cli-nodejs/-tmp-near-path/mcp-logs-time/2026-12-07T19-02-51-052Z.jsonl",
        ),
        LOG,
    );
    write(
        &home
            .path()
            .join(format!(".claude/projects/-tmp-near-path/{SESSION}.jsonl")),
        TRANSCRIPT,
    );
    (home, bin)
}

/// `tether ARGS` in `home`, with `bin` (and the system's folders) as PATH.
fn tether(home: &Path, bin: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = tether_tests::tether_at_home(home);
    cmd.env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .args(args);
    tether_tests::output_within(cmd, 120)
}

/// The inventory's `time` row's summary.
fn inventory_summary(home: &Path, bin: &Path) -> String {
    let out = tether(home, bin, &["inventory", "--json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("an InventoryDocument");
    let row = doc["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["name"] == "time" && r["kind"] == "mcp_server")
        .cloned()
        .unwrap_or_else(|| panic!("no time row: {doc}"));
    assert_eq!(row["reason_code"], "command_not_found", "{row}");
    row["summary"].as_str().expect("a summary").to_owned()
}

/// GIVEN `mcp-server-tiem` configured and `mcp-server-time` on PATH (or
/// nothing near) WHEN `inventory`, `endpoint-test` and `sessions show` say
/// why it does not start THEN each says the same sentence: with the near
/// name asked about where there is one, and no "did you mean" where not.
#[test]
fn a_command_a_slip_away_from_one_on_path_is_asked_about_everywhere_alike() {
    for (near, names) in [
        (true, &["mcp-server-time", "unrelated"][..]),
        (false, &["unrelated"][..]),
    ] {
        let (home, bin) = home_with(names);
        let home = home.path();
        let said = inventory_summary(home, &bin);
        assert!(
            said.contains("`mcp-server-tiem` is on no folder of PATH here"),
            "{said}"
        );
        assert_eq!(
            said.contains("`mcp-server-time` is: did you mean it?"),
            near,
            "{said}"
        );
        assert_eq!(said.contains("did you mean"), near, "{said}");

        // The text table says the same.
        let out = tether(home, &bin, &["inventory"]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(&said), "inventory: {text}");

        // An endpoint test of the same command, on the same PATH.
        let out = tether(home, &bin, &["endpoint-test", "--", "mcp-server-tiem"]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("command_not_found"), "endpoint-test: {text}");
        assert!(text.contains(&said), "endpoint-test: {text}");

        // The session that ran with it: its row says why in those words.
        let out = tether(
            home,
            &bin,
            &["sessions", "show", &format!("claude:{SESSION}")],
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let row = text
            .lines()
            .find(|l| l.starts_with("mcp_server") && l.contains("time"))
            .unwrap_or_else(|| panic!("no time row: {text}"));
        assert!(row.contains(&format!("failed to start: {said}")), "{row}");
    }
}
