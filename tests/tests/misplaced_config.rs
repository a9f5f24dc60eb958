//! Mistakes the harness itself would catch, caught by `tether inventory`
//! the way the harness catches them, compared with the real pinned and
//! newest CLIs' own words: `mcpServers` in Claude Code's settings (which
//! `claude mcp list` never shows), an approval list's misspelt name, a
//! Gemini CLI or Qwen Code `settings.json` with a trailing comma (which the
//! CLI refuses), and a `cwd` that does not exist. Each run ends on the
//! CLI's exit, bounded; a planted token never reaches Tether's output.

use std::path::Path;

use serde_json::{Value, json};
use tether_tests::Release;

const PLANTED: &str = "sk-planted-misplaced-7d2e";

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// `tether inventory --json` on a private home and project: its document,
/// and the whole output checked for the planted token.
fn inventory(
    home: &Path,
    project: &Path,
    harness: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> Value {
    let mut cmd = tether_tests::tether_at_home(home);
    cmd.env("TETHER_DB", tether_tests::scratch_store())
        .args(["inventory", "--json", "--harness", harness, "--project"])
        .arg(project)
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = tether_tests::output_within(cmd, 120);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "tether inventory: {stdout}{stderr}"
    );
    assert!(!stdout.contains(PLANTED), "{stdout}");
    assert!(!stderr.contains(PLANTED), "{stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn row<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["rows"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["name"] == name))
        .unwrap_or_else(|| panic!("no row {name}: {doc}"))
}

fn errors_with<'a>(doc: &'a Value, reason: &str) -> Vec<&'a Value> {
    doc["errors"]
        .as_array()
        .map(|e| e.iter().filter(|e| e["reason_code"] == reason).collect())
        .unwrap_or_default()
}

/// A harness CLI run on the private home, to its exit (bounded): its exit
/// code and both streams.
fn harness(
    release: Release,
    bin: &str,
    home: &Path,
    cwd: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> Option<(Option<i32>, String)> {
    let program = release.peer(&format!("node_modules/.bin/{bin}"))?;
    let mut cmd = std::process::Command::new(program);
    cmd.env_clear()
        .env("HOME", home)
        .env("PATH", release.path())
        .current_dir(cwd)
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = tether_tests::output_within(cmd, 120);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some((out.status.code(), text))
}

/// `claude mcp list` on the private home, for each release installed: what
/// it printed, where it exited 0 (asserted).
fn claude_mcp_list(home: &Path, cwd: &Path) -> Vec<(Release, String)> {
    Release::BOTH
        .into_iter()
        .filter_map(|release| {
            let (code, said) = harness(release, "claude", home, cwd, &["mcp", "list"], &[])?;
            assert_eq!(code, Some(0), "{}: {said}", release.label());
            Some((release, said))
        })
        .collect()
}

/// GIVEN servers under `mcpServers` in `~/.claude/settings.json` and the
/// project's `.claude/settings.json`, beside one in `~/.claude.json` WHEN
/// the real Claude Code (pinned and newest) lists its servers THEN it shows
/// only `~/.claude.json`'s; AND `tether inventory` shows the others as
/// `misplaced_key` rows, not enabled, saying where Claude reads servers.
#[test]
fn claude_ignores_mcp_servers_in_its_settings_and_tether_says_where_they_go() {
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    let misplaced = json!({"mcpServers": {"misplaced": {
        "command": "/bin/true", "env": {"API_KEY": PLANTED}}}});
    write(
        &home.path().join(".claude/settings.json"),
        &misplaced.to_string(),
    );
    let project_settings = json!({"mcpServers": {"projmisplaced": {
        "type": "http", "url": "https://mcp.example.com/mcp",
        "headers": {"Authorization": format!("Bearer {PLANTED}")}}}});
    write(
        &project.path().join(".claude/settings.json"),
        &project_settings.to_string(),
    );
    write(
        &home.path().join(".claude.json"),
        &json!({"mcpServers": {"placed": {"command": "/bin/true"}}}).to_string(),
    );

    let doc = inventory(home.path(), project.path(), "claude", &[], &[]);
    for name in ["misplaced", "projmisplaced"] {
        let r = row(&doc, name);
        assert_eq!(r["reason_code"], "misplaced_key", "{r}");
        assert_eq!(r["stages"]["enabled"]["state"], "no", "{r}");
        let summary = r["summary"].as_str().unwrap_or("");
        assert!(summary.contains("~/.claude.json"), "{summary}");
        assert!(summary.contains(".mcp.json"), "{summary}");
    }
    assert_eq!(row(&doc, "placed")["reason_code"], Value::Null);

    for (release, said) in claude_mcp_list(home.path(), project.path()) {
        assert!(said.contains("placed:"), "{}: {said}", release.label());
        assert!(!said.contains("misplaced"), "{}: {said}", release.label());
    }
}

/// GIVEN a trusted project whose `.mcp.json` calls its server `everything`
/// and user settings that approve `everythin` WHEN Claude Code (pinned and
/// newest) lists its servers THEN it still waits for approval ("Pending
/// approval"); AND `tether inventory` says the name matches nothing, with
/// "did you mean", and keeps the server `not_approved`.
#[test]
fn a_misspelt_approval_gets_a_did_you_mean_as_claude_still_asks() {
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    let dir = std::fs::canonicalize(project.path()).expect("canonical");
    write(
        &project.path().join(".mcp.json"),
        &json!({"mcpServers": {"everything": {"command": "/bin/true"}}}).to_string(),
    );
    write(
        &home.path().join(".claude/settings.json"),
        &json!({"enabledMcpjsonServers": ["everythin"]}).to_string(),
    );
    let state = json!({"projects": {dir.display().to_string(): {"hasTrustDialogAccepted": true}}});
    write(&home.path().join(".claude.json"), &state.to_string());

    let doc = inventory(home.path(), &dir, "claude", &[], &[]);
    let unmatched = errors_with(&doc, "unmatched_name");
    assert_eq!(unmatched.len(), 1, "{doc}");
    let summary = unmatched[0]["summary"].as_str().unwrap_or("");
    assert!(summary.contains("\"everythin\""), "{summary}");
    assert!(summary.contains("did you mean \"everything\""), "{summary}");
    assert_eq!(unmatched[0]["source"], "~/.claude/settings.json");
    assert_eq!(row(&doc, "everything")["reason_code"], "not_approved");

    for release in Release::BOTH {
        let Some((_, said)) = harness(release, "claude", home.path(), &dir, &["mcp", "list"], &[])
        else {
            continue;
        };
        let line = said
            .lines()
            .find(|l| l.starts_with("everything:"))
            .unwrap_or_else(|| panic!("{}: {said}", release.label()));
        assert!(
            line.contains("Pending approval"),
            "{}: {line}",
            release.label()
        );
    }
}

/// GIVEN a user `settings.json` with a trailing comma (and a planted token)
/// and a valid project one WHEN Gemini CLI 0.61.0 runs THEN it refuses to
/// start ("Please fix the configuration file(s) and try again."); AND
/// `tether inventory` refuses the file too (`file_refused`, quoting those
/// words) and says the project's server does not start either.
#[test]
fn gemini_refuses_a_trailing_comma_and_so_does_tether() {
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    let user = format!(
        "{{\"security\":{{\"auth\":{{\"selectedType\":\"gemini-api-key\"}}}},\n // comments are fine\n \"mcpServers\":{{\"time\":{{\"command\":\"/bin/true\",\"env\":{{\"API_KEY\":\"{PLANTED}\"}}}},}}\n}}\n"
    );
    write(&home.path().join(".gemini/settings.json"), &user);
    write(
        &project.path().join(".gemini/settings.json"),
        &json!({"mcpServers": {"proj": {"command": "/bin/true"}}}).to_string(),
    );
    let trust = [("GEMINI_CLI_TRUST_WORKSPACE", "true")];

    let doc = inventory(home.path(), project.path(), "gemini", &[], &trust);
    let refused = errors_with(&doc, "file_refused");
    assert_eq!(refused.len(), 1, "{doc}");
    assert_eq!(refused[0]["source"], "~/.gemini/settings.json");
    let summary = refused[0]["summary"].as_str().unwrap_or("");
    assert!(
        summary.contains("Please fix the configuration file(s) and try again."),
        "{summary}"
    );
    assert!(summary.contains("trailing comma"), "{summary}");
    assert!(summary.contains("line 3"), "{summary}");
    let proj = row(&doc, "proj");
    assert_eq!(proj["reason_code"], "file_refused", "{proj}");
    assert_eq!(proj["stages"]["enabled"]["state"], "no", "{proj}");

    let env = [
        ("GEMINI_API_KEY", "dummy"),
        ("GEMINI_CLI_TRUST_WORKSPACE", "true"),
        ("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9"),
    ];
    if let Some((code, said)) = harness(
        Release::Pinned,
        "gemini",
        home.path(),
        project.path(),
        &["-p", "hi"],
        &env,
    ) {
        assert_ne!(code, Some(0), "{said}");
        assert!(said.contains("Error in "), "{said}");
        assert!(
            said.contains("Please fix the configuration file(s) and try again."),
            "{said}"
        );
    }
}

/// GIVEN a user `settings.json` Gemini refuses (a trailing comma) and an
/// extension in `~/.gemini/extensions` bundling a server and a hook WHEN
/// Gemini CLI 0.61.0 runs (`-p`, `extensions list`, `mcp list`) THEN it
/// exits 52 on the file before any extension loads; AND `tether inventory`
/// marks the extension, its server and its hook `file_refused`, not
/// enabled.
#[test]
fn gemini_extensions_do_not_load_when_its_settings_are_refused() {
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    write(
        &home.path().join(".gemini/settings.json"),
        &format!(
            "{{\"mcpServers\":{{\"time\":{{\"command\":\"/bin/true\",\"env\":{{\"K\":\"{PLANTED}\"}}}},}}}}\n"
        ),
    );
    let ext = home.path().join(".gemini/extensions/ext1");
    write(
        &ext.join("gemini-extension.json"),
        &json!({"name": "ext1", "version": "1.0.0",
            "mcpServers": {"extsrv": {"command": "/bin/true"}}})
        .to_string(),
    );
    write(
        &ext.join("hooks/hooks.json"),
        &json!({"hooks": {"BeforeTool": [{"matcher": ".*",
            "hooks": [{"type": "command", "command": "/bin/true", "name": "exthook"}]}]}})
        .to_string(),
    );
    let trust = [("GEMINI_CLI_TRUST_WORKSPACE", "true")];
    let kinds = ["--kind", "mcp_server", "--kind", "plugin", "--kind", "hook"];
    let doc = inventory(home.path(), project.path(), "gemini", &kinds, &trust);
    assert_eq!(errors_with(&doc, "file_refused").len(), 1, "{doc}");
    for name in ["ext1", "extsrv", "ext1:BeforeTool:.*"] {
        let r = row(&doc, name);
        assert_eq!(r["reason_code"], "file_refused", "{r}");
        assert_eq!(r["stages"]["enabled"]["state"], "no", "{r}");
    }
    let env = [
        ("GEMINI_API_KEY", "dummy"),
        ("GEMINI_CLI_TRUST_WORKSPACE", "true"),
        ("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9"),
    ];
    for args in [&["-p", "hi"][..], &["extensions", "list"], &["mcp", "list"]] {
        let Some((code, said)) = harness(
            Release::Pinned,
            "gemini",
            home.path(),
            project.path(),
            args,
            &env,
        ) else {
            return;
        };
        assert_eq!(code, Some(52), "{args:?}: {said}");
        assert!(
            said.contains("Please fix the configuration file(s) and try again."),
            "{said}"
        );
        assert!(!said.contains("extsrv") && !said.contains("ext1"), "{said}");
    }
}

/// GIVEN a Qwen Code user `settings.json` with a trailing comma WHEN
/// `tether inventory` reads it THEN it is `file_refused`, quoting Qwen's
/// words; AND the newest Qwen Code refuses to start on it ("Cannot read
/// operator sandbox policy from"), while the pinned one renames it aside
/// (`settings.json.corrupted.<time>`) and starts without it.
#[test]
fn qwen_refuses_or_sets_aside_a_trailing_comma_and_tether_says_so() {
    for release in Release::BOTH {
        let home = tempfile::tempdir().expect("home");
        let project = tempfile::tempdir().expect("project");
        let settings = home.path().join(".qwen/settings.json");
        write(
            &settings,
            &format!(
                "{{\"mcpServers\":{{\"time\":{{\"command\":\"/bin/true\",\"env\":{{\"K\":\"{PLANTED}\"}}}},}}}}\n"
            ),
        );
        let doc = inventory(home.path(), project.path(), "qwen", &[], &[]);
        let refused = errors_with(&doc, "file_refused");
        assert_eq!(refused.len(), 1, "{doc}");
        let summary = refused[0]["summary"].as_str().unwrap_or("");
        assert!(
            summary.contains("Cannot read operator sandbox policy from"),
            "{summary}"
        );
        assert!(summary.contains("settings.json.corrupted"), "{summary}");

        let env = [
            ("OPENAI_API_KEY", "dummy"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
            ("OPENAI_MODEL", "gpt-4o"),
        ];
        let Some((code, said)) = harness(
            release,
            "qwen",
            home.path(),
            project.path(),
            &["-p", "hi"],
            &env,
        ) else {
            continue;
        };
        assert_ne!(code, Some(0), "{}: {said}", release.label());
        match release {
            Release::Newest => assert!(
                said.contains("Cannot read operator sandbox policy from"),
                "{said}"
            ),
            Release::Pinned => {
                let aside = std::fs::read_dir(home.path().join(".qwen"))
                    .expect("dir")
                    .filter_map(Result::ok)
                    .any(|e| {
                        e.file_name()
                            .to_string_lossy()
                            .starts_with("settings.json.corrupted.")
                    });
                assert!(aside && !settings.exists(), "0.15.10 set it aside: {said}");
            }
        }
    }
}

/// GIVEN a Codex server whose `cwd` does not exist (a real command) WHEN
/// `tether inventory` reads it, without `--test` and with it, THEN the row
/// is `cwd_not_found` both times, never `command_not_found`, and the path
/// is not printed.
#[test]
fn a_codex_server_whose_cwd_is_missing_says_so_with_and_without_test() {
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    write(
        &home.path().join(".codex/config.toml"),
        &format!(
            "[mcp_servers.lost]\ncommand = \"/bin/cat\"\ncwd = \"/nonexistent-{PLANTED}/work\"\n"
        ),
    );
    for args in [&[][..], &["--test", "--timeout", "10"][..]] {
        let doc = inventory(home.path(), project.path(), "codex", args, &[]);
        let lost = row(&doc, "lost");
        assert_eq!(lost["reason_code"], "cwd_not_found", "{args:?}: {lost}");
        assert_eq!(lost["diagnostics"]["cwd"], "missing", "{lost}");
        let summary = lost["summary"].as_str().unwrap_or("");
        assert!(summary.contains("working directory"), "{summary}");
        assert!(!summary.contains("/nonexistent"), "{summary}");
    }
}

/// GIVEN a Claude Code server entry with a `cwd` that does not exist (a
/// real server) WHEN the real Claude Code (pinned and newest) lists its
/// servers THEN it connects it (its server schema has no `cwd`: the key is
/// dropped and the server starts where Claude runs); AND `tether
/// inventory` neither calls it `cwd_not_found` nor reports the folder
/// missing, and its row says `cwd` is a key Claude does not read.
#[test]
fn claude_does_not_read_a_cwd_and_tether_says_so() {
    let Some(server) = tether_tests::peer("node_modules/.bin/mcp-server-everything") else {
        return;
    };
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    let entry = json!({"mcpServers": {"elsewhere": {
        "command": server, "cwd": format!("/nonexistent-{PLANTED}/work")}}});
    write(&home.path().join(".claude.json"), &entry.to_string());

    let doc = inventory(home.path(), project.path(), "claude", &[], &[]);
    let r = row(&doc, "elsewhere");
    assert_eq!(r["reason_code"], Value::Null, "{r}");
    assert_eq!(r["diagnostics"]["cwd"], "unset", "{r}");
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("`cwd` in its entry is not a key Claude Code reads"),
        "{r}"
    );

    for (release, said) in claude_mcp_list(home.path(), project.path()) {
        let line = said
            .lines()
            .find(|l| l.starts_with("elsewhere:"))
            .unwrap_or_else(|| panic!("{}: {said}", release.label()));
        assert!(line.contains("Connected"), "{}: {line}", release.label());
    }
}
