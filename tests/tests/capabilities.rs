//! Plugins, skills and hooks as the pinned Claude Code installs them itself:
//! a local marketplace directory (offline), `claude plugin marketplace add`
//! and `claude plugin install` into a private HOME, one good plugin and one
//! broken one, then `tether inventory --json` against what `claude plugin
//! list --json` says.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

fn executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    write(path, "#!/bin/sh\nexit 0\n");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// `tether inventory --json ARGS` with only `env` (and `PATH`) set: its
/// one document.
fn inventory(args: &[&str], env: &[(&str, &Path)]) -> Value {
    let mut cmd = Command::new(tether_tests::workspace_bin("tether"));
    cmd.arg("inventory")
        .args(args)
        .arg("--json")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    for (name, value) in env {
        cmd.env(name, value);
    }
    let out = cmd.output().expect("tether inventory");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one document")
}

/// The row of `kind` named `name` in an inventory document.
fn find<'a>(doc: &'a Value, kind: &str, name: &str) -> &'a Value {
    let rows = doc["rows"].as_array().expect("rows");
    rows.iter()
        .find(|r| r["kind"] == kind && r["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name} in {rows:#?}"))
}

/// A marketplace with `good` (a hook whose script exists, a skill, a
/// server) and `broken` (a hook whose script is missing, a server whose
/// command does not exist).
fn marketplace(dir: &Path) {
    write(
        &dir.join(".claude-plugin/marketplace.json"),
        &json!({"name": "localmkt", "owner": {"name": "tests"}, "plugins": [
            {"name": "good", "source": "./plugins/good", "description": "works"},
            {"name": "broken", "source": "./plugins/broken", "description": "does not"}
        ]})
        .to_string(),
    );
    for (name, script, server) in [
        ("good", "check.sh", "sh"),
        ("broken", "missing.sh", "tether-no-such-server-7d1"),
    ] {
        let root = dir.join("plugins").join(name);
        write(
            &root.join(".claude-plugin/plugin.json"),
            &json!({"name": name, "version": "1.0.0"}).to_string(),
        );
        write(
            &root.join("hooks/hooks.json"),
            &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": format!("${{CLAUDE_PLUGIN_ROOT}}/scripts/{script}")}
            ]}]}})
            .to_string(),
        );
        if name == "good" {
            executable(&root.join("scripts/check.sh"));
            write(
                &root.join("skills/greet/SKILL.md"),
                "---\nname: greet\ndescription: Say hi\n---\nSay hi.\n",
            );
        }
        write(
            &root.join(".mcp.json"),
            &json!({"mcpServers": {format!("{name}-srv"): {"command": server}}}).to_string(),
        );
    }
}

fn claude(bin: &Path, home: &Path, args: &[&str]) -> std::process::Output {
    Command::new(bin)
        .args(args)
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("DISABLE_AUTOUPDATER", "1")
        .output()
        .expect("claude runs")
}

#[test]
fn claude_plugins_installed_by_the_cli_are_the_plugin_rows_and_broken_ones_say_why() {
    let Some(bin) = tether_tests::peer("node_modules/.bin/claude") else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path().join("home");
    let work = tmp.path().join("work");
    let mkt = tmp.path().join("mkt");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::create_dir_all(&work).expect("work");
    marketplace(&mkt);
    let added = claude(
        &bin,
        &home,
        &["plugin", "marketplace", "add", mkt.to_str().expect("utf-8")],
    );
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    for plugin in ["good@localmkt", "broken@localmkt"] {
        let installed = claude(&bin, &home, &["plugin", "install", plugin]);
        assert!(
            installed.status.success(),
            "{plugin}: {}",
            String::from_utf8_lossy(&installed.stderr)
        );
    }
    // A settings hook that uses the plugin's variable where Claude never expands it.
    let settings_path = home.join(".claude/settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings_path).expect("settings"))
            .expect("json");
    settings["hooks"] = json!({"Stop": [{"hooks": [
        {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/scripts/notify.sh"}]}]});
    std::fs::write(&settings_path, settings.to_string()).expect("write settings");

    let listed = claude(&bin, &home, &["plugin", "list", "--json"]);
    assert!(listed.status.success());
    let listed: Vec<Value> =
        serde_json::from_slice(&listed.stdout).expect("claude plugin list --json");

    let work_dir = work.to_str().expect("utf-8");
    let doc = inventory(
        &["--harness", "claude", "--project", work_dir],
        &[("HOME", &home)],
    );
    let find = |kind: &str, name: &str| find(&doc, kind, name);

    // Every plugin Claude lists is a plugin row, installed, enabled as Claude says.
    assert_eq!(listed.len(), 2, "{listed:#?}");
    for plugin in &listed {
        let id = plugin["id"].as_str().expect("id");
        let row = find("plugin", id);
        assert_eq!(row["stages"]["installed"]["state"], "yes", "{row:#?}");
        let enabled = if plugin["enabled"].as_bool() == Some(true) {
            "yes"
        } else {
            "no"
        };
        assert_eq!(row["stages"]["enabled"]["state"], enabled, "{id}");
        // Its servers, as Claude lists them, are linked and have rows.
        let short = id.split('@').next().expect("name");
        for server in plugin["mcpServers"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
        {
            let name = format!("plugin:{short}:{server}");
            find("mcp_server", &name);
            assert!(
                row["links"]
                    .as_array()
                    .expect("links")
                    .iter()
                    .any(|l| l["kind"] == "mcp_server" && l["name"] == name),
                "{row:#?}"
            );
        }
    }
    // The good plugin's hook resolves under its root; the broken one's does not.
    let good_hook = find("hook", "good:PreToolUse:Bash");
    assert!(good_hook["reason_code"].is_null(), "{good_hook:#?}");
    assert_eq!(good_hook["diagnostics"]["command_resolves"], true);
    let broken_hook = find("hook", "broken:PreToolUse:Bash");
    assert_eq!(broken_hook["reason_code"], "command_not_found");
    assert_eq!(broken_hook["diagnostics"]["command"], "missing.sh");
    let broken_server = find("mcp_server", "plugin:broken:broken-srv");
    assert_eq!(broken_server["reason_code"], "command_not_found");
    find("skill", "good:greet");
    // The settings hook names the variable nothing expands there.
    let stop = find("hook", "Stop");
    assert_eq!(stop["reason_code"], "unresolved_variable");
    assert_eq!(
        stop["diagnostics"]["unresolved"],
        json!(["CLAUDE_PLUGIN_ROOT"])
    );
}

/// Gemini CLI extensions installed and disabled by the pinned `gemini`
/// itself: each is a plugin row linked to its servers, enabled exactly as
/// `gemini extensions list` says for this workspace.
#[test]
fn gemini_extensions_installed_by_the_cli_are_plugin_rows_enabled_as_it_lists_them() {
    let Some(bin) = tether_tests::peer("node_modules/.bin/gemini") else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path().join("home");
    let work = tmp.path().join("work");
    let ext = tmp.path().join("ext/demo");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::create_dir_all(&work).expect("work");
    write(
        &ext.join("gemini-extension.json"),
        &json!({"name": "demo", "version": "1.2.0",
                "mcpServers": {"demo-srv": {"command": "sh", "args": ["-c", "true"]}}})
        .to_string(),
    );
    let gemini = |args: &[&str]| {
        use std::io::Write;
        let mut child = Command::new(&bin)
            .args(args)
            .current_dir(&work)
            .env_clear()
            .env("HOME", &home)
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("gemini runs");
        // Installing asks to trust the folder and to consent.
        let _ = child.stdin.take().expect("stdin").write_all(b"y\ny\n");
        child.wait_with_output().expect("gemini ends")
    };
    let inventory = || -> Value {
        inventory(
            &[
                "--harness",
                "gemini",
                "--project",
                work.to_str().expect("utf-8"),
            ],
            &[("HOME", &home)],
        )
    };
    let listed_enabled = || {
        let out = gemini(&["extensions", "list"]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        let line = text
            .lines()
            .find(|l| l.contains("Enabled (Workspace):"))
            .unwrap_or_else(|| panic!("gemini extensions list: {text}"))
            .to_owned();
        line.trim().ends_with("true")
    };
    let installed = gemini(&[
        "extensions",
        "install",
        ext.to_str().expect("utf-8"),
        "--consent",
    ]);
    assert!(
        installed.status.success(),
        "{}",
        String::from_utf8_lossy(&installed.stderr)
    );
    for disable in [false, true] {
        if disable {
            let off = gemini(&["extensions", "disable", "demo", "--scope", "workspace"]);
            assert!(
                off.status.success(),
                "{}",
                String::from_utf8_lossy(&off.stderr)
            );
        }
        let doc = inventory();
        let rows = doc["rows"].as_array().expect("rows");
        let plugin = rows
            .iter()
            .find(|r| r["kind"] == "plugin" && r["name"] == "demo")
            .unwrap_or_else(|| panic!("no extension row in {rows:#?}"));
        assert_eq!(plugin["stages"]["installed"]["state"], "yes");
        let want = if listed_enabled() { "yes" } else { "no" };
        assert_eq!(
            plugin["stages"]["enabled"]["state"], want,
            "disable={disable}: {plugin:#?}"
        );
        assert_eq!(want == "no", disable, "gemini itself says so");
        assert_eq!(
            plugin["links"],
            json!([{"kind": "mcp_server", "name": "demo-srv"}])
        );
        let server = rows
            .iter()
            .find(|r| r["kind"] == "mcp_server" && r["name"] == "demo-srv")
            .expect("the bundled server's row");
        assert_eq!(server["stages"]["enabled"]["state"], want);
    }
}

/// Copilot CLI hooks, run for real (offline, against the fake model): the
/// user's hook always, the workspace's `.github/hooks/*.json` hook only in
/// a trusted folder (as 1.0.102 records trust, `trustedFolders`). The rows
/// say exactly which of them run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_hooks_are_enabled_exactly_when_the_cli_runs_them() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let Some(copilot) = tether_tests::peer("node_modules/@github/copilot-linux-x64/copilot") else {
        return;
    };
    let (model, _) = tether_tests::fake_model::start_model("get_current_time").await;
    for trusted in [true, false] {
        let tmp = tempfile::tempdir().expect("tmp");
        let home = tmp.path().join("home");
        let work = tmp.path().join("work");
        let ran = tmp.path().join("ran.txt");
        let hook = tmp.path().join("hook.sh");
        write(
            &hook,
            &format!(
                "#!/bin/sh\necho \"$1\" >> {}\ncat > /dev/null\n",
                ran.display()
            ),
        );
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
        let hooks = |who: &str| {
            json!({"version": 1, "hooks": {"sessionStart": [
                {"type": "command", "bash": format!("{} {who}", hook.display()), "timeoutSec": 10}]}})
            .to_string()
        };
        write(&home.join(".copilot/settings.json"), &hooks("user"));
        write(&work.join(".github/hooks/obs.json"), &hooks("project"));
        if trusted {
            write(
                &home.join(".copilot/config.json"),
                &json!({"trustedFolders": [work.display().to_string()]}).to_string(),
            );
        }
        let status = tokio::process::Command::new(&copilot)
            .args(["-p", "hi"])
            .current_dir(&work)
            .env_clear()
            .env("HOME", &home)
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("COPILOT_OFFLINE", "true")
            .env("COPILOT_AUTO_UPDATE", "false")
            .env("COPILOT_PKG_CACHE_HOME", tmp.path().join("pkg"))
            .env("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", model.base()))
            .env("COPILOT_PROVIDER_API_KEY", "dummy")
            .env("COPILOT_MODEL", "gpt-4o")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .status();
        let status = tokio::time::timeout(std::time::Duration::from_secs(120), status)
            .await
            .expect("copilot ends within its bound")
            .expect("copilot runs");
        assert!(status.success(), "trusted={trusted}: {status:?}");
        let ran = std::fs::read_to_string(&ran).unwrap_or_default();
        let doc = inventory(
            &[
                "--harness",
                "copilot",
                "--kind",
                "hook",
                "--project",
                work.to_str().expect("utf-8"),
            ],
            &[("HOME", &home)],
        );
        for (scope, who) in [("user", "user"), ("project", "project")] {
            let row = doc["rows"]
                .as_array()
                .expect("rows")
                .iter()
                .find(|r| r["scope"] == scope && r["name"] == "sessionStart")
                .unwrap_or_else(|| panic!("no {scope} hook: {doc:#}"));
            let runs = ran.lines().any(|l| l == who);
            let enabled = row["stages"]["enabled"]["state"] == "yes";
            assert_eq!(
                enabled, runs,
                "trusted={trusted} {scope}: ran {ran:?}, row {row:#}"
            );
            if !runs {
                assert_eq!(row["reason_code"], "untrusted_folder");
            }
        }
    }
}

/// Copilot CLI plugins installed and disabled by the pinned `copilot`
/// itself (from a local path, offline): each installed one is a plugin row,
/// enabled exactly as `copilot plugin list --json` says, linked to the
/// server and skill its `plugin.json` bundles, which have rows of their own.
#[test]
fn copilot_plugins_installed_by_the_cli_are_plugin_rows_enabled_as_it_lists_them() {
    let Some(bin) = tether_tests::peer("node_modules/@github/copilot-linux-x64/copilot") else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path().join("home");
    let work = tmp.path().join("work");
    let plugin = tmp.path().join("src/demo");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::create_dir_all(&work).expect("work");
    write(
        &plugin.join("plugin.json"),
        &json!({"name": "demo", "version": "1.0.0", "skills": "skills/",
                "mcpServers": {"demo-srv": {"type": "local", "command": "sh", "args": ["-c", "true"], "tools": ["*"]}}})
        .to_string(),
    );
    write(
        &plugin.join("skills/greet/SKILL.md"),
        "---\nname: greet\ndescription: hi\n---\nhi\n",
    );
    let copilot = |args: &[&str]| {
        Command::new(&bin)
            .args(args)
            .current_dir(&work)
            .env_clear()
            .env("HOME", &home)
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("COPILOT_OFFLINE", "true")
            .env("COPILOT_AUTO_UPDATE", "false")
            .env("COPILOT_PKG_CACHE_HOME", tmp.path().join("pkg"))
            .stdin(std::process::Stdio::null())
            .output()
            .expect("copilot runs")
    };
    let installed = copilot(&["plugin", "install", plugin.to_str().expect("utf-8")]);
    assert!(
        installed.status.success(),
        "{}",
        String::from_utf8_lossy(&installed.stderr)
    );
    for disable in [false, true] {
        if disable {
            let off = copilot(&["plugin", "disable", "demo"]);
            assert!(
                off.status.success(),
                "{}",
                String::from_utf8_lossy(&off.stderr)
            );
        }
        let listed: Vec<Value> =
            serde_json::from_slice(&copilot(&["plugin", "list", "--json"]).stdout)
                .expect("copilot plugin list --json");
        let listed_enabled = listed
            .iter()
            .find(|p| p["name"] == "demo" && p["source"] == "installed")
            .map(|p| p["enabled"] == true)
            .expect("copilot lists demo");
        assert_eq!(listed_enabled, !disable, "copilot itself says so");
        let doc = inventory(
            &[
                "--harness",
                "copilot",
                "--project",
                work.to_str().expect("utf-8"),
            ],
            &[("HOME", &home)],
        );
        let find = |kind: &str, name: &str| find(&doc, kind, name);
        let want = if listed_enabled { "yes" } else { "no" };
        let row = find("plugin", "demo");
        assert_eq!(row["stages"]["installed"]["state"], "yes");
        assert_eq!(row["stages"]["enabled"]["state"], want, "disable={disable}");
        for (kind, name) in [
            ("mcp_server", "plugin:demo:demo-srv"),
            ("skill", "demo:greet"),
        ] {
            assert_eq!(
                find(kind, name)["stages"]["enabled"]["state"],
                want,
                "{name}"
            );
            assert!(
                row["links"]
                    .as_array()
                    .expect("links")
                    .iter()
                    .any(|l| l["kind"] == kind && l["name"] == name),
                "{row:#}"
            );
        }
    }
}

/// GIVEN plugins installed the way Codex does it itself (a local
/// marketplace, `codex plugin marketplace add`, `codex plugin add`), one
/// disabled as Codex's config does (`enabled = false`: Codex has no disable
/// command), and one the config names that was never installed WHEN the
/// inventory runs THEN its plugin rows are the ones `codex plugin list
/// --json` lists, enabled as it says, each linked to its servers and
/// skills; the never-installed one is `not_installed`, and the broken
/// plugin's server says `command_not_found`.
#[test]
fn codex_plugins_added_by_the_cli_are_plugin_rows_as_it_lists_them() {
    let Some(bin) = tether_tests::peer("node_modules/.bin/codex") else {
        return;
    };
    // Not under /tmp: Codex refuses to set itself up in a temporary dir's home.
    let tmp = tempfile::Builder::new()
        .prefix("tether-codex-plugins-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("tmp");
    let home = tmp.path().join("home");
    let codex_home = home.join(".codex");
    let mkt = tmp.path().join("mkt");
    std::fs::create_dir_all(&codex_home).expect("home");
    write(
        &mkt.join(".agents/plugins/marketplace.json"),
        &json!({"name": "localmkt", "plugins": [
            {"name": "good", "source": {"source": "local", "path": "./plugins/good"}},
            {"name": "broken", "source": {"source": "local", "path": "./plugins/broken"}},
            {"name": "off", "source": {"source": "local", "path": "./plugins/off"}}
        ]})
        .to_string(),
    );
    for (name, server) in [
        ("good", "sh"),
        ("broken", "tether-no-such-server-7d1"),
        ("off", "sh"),
    ] {
        let root = mkt.join("plugins").join(name);
        write(
            &root.join(".codex-plugin/plugin.json"),
            &json!({"name": name, "version": "1.0.0", "description": "a test plugin",
                    "mcpServers": "./.mcp.json", "skills": "./skills/"})
            .to_string(),
        );
        write(
            &root.join(".mcp.json"),
            &json!({"mcpServers": {format!("{name}-srv"): {"command": server}}}).to_string(),
        );
        write(
            &root.join("skills/greet/SKILL.md"),
            "---\nname: greet\ndescription: Say hi\n---\nSay hi.\n",
        );
    }
    let codex = |args: &[&str]| {
        let out = Command::new(&bin)
            .args(args)
            .env_clear()
            .env("HOME", &home)
            .env("CODEX_HOME", &codex_home)
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("codex runs");
        assert!(
            out.status.success(),
            "codex {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    };
    codex(&["plugin", "marketplace", "add", mkt.to_str().expect("utf-8")]);
    for plugin in ["good@localmkt", "broken@localmkt", "off@localmkt"] {
        codex(&["plugin", "add", plugin]);
    }
    let config = codex_home.join("config.toml");
    let text = std::fs::read_to_string(&config).expect("config");
    let text = text.replace(
        "[plugins.\"off@localmkt\"]\nenabled = true",
        "[plugins.\"off@localmkt\"]\nenabled = false",
    ) + "\n[plugins.\"ghost@localmkt\"]\nenabled = true\n";
    std::fs::write(&config, text).expect("config");
    let listed: Value = serde_json::from_slice(&codex(&["plugin", "list", "--json"]).stdout)
        .expect("codex plugin list --json");
    let listed: Vec<(String, bool)> = listed["installed"]
        .as_array()
        .expect("installed")
        .iter()
        .map(|p| {
            (
                p["pluginId"].as_str().expect("id").to_owned(),
                p["enabled"] == true,
            )
        })
        .collect();
    assert_eq!(listed.len(), 3, "{listed:?}");
    let doc = inventory(
        &["--harness", "codex"],
        &[("HOME", &home), ("CODEX_HOME", &codex_home)],
    );
    let find = |kind: &str, name: &str| find(&doc, kind, name);
    for (id, enabled) in &listed {
        let row = find("plugin", id);
        assert_eq!(row["stages"]["installed"]["state"], "yes", "{id}");
        let want = if *enabled { "yes" } else { "no" };
        assert_eq!(
            row["stages"]["enabled"]["state"], want,
            "{id}: as codex lists it"
        );
        let name = id.split('@').next().expect("name");
        for (kind, linked) in [
            ("mcp_server", format!("plugin:{name}:{name}-srv")),
            ("skill", format!("{name}:greet")),
        ] {
            assert_eq!(
                find(kind, &linked)["stages"]["enabled"]["state"],
                want,
                "{linked}"
            );
            assert!(
                row["links"]
                    .as_array()
                    .expect("links")
                    .iter()
                    .any(|l| l["kind"] == kind && l["name"] == linked),
                "{row:#}"
            );
        }
    }
    assert_eq!(
        find("plugin", "off@localmkt")["reason_code"],
        "disabled_in_config"
    );
    let ghost = find("plugin", "ghost@localmkt");
    assert_eq!(ghost["stages"]["installed"]["state"], "no");
    assert_eq!(ghost["reason_code"], "not_installed");
    assert_eq!(
        find("mcp_server", "plugin:broken:broken-srv")["reason_code"],
        "command_not_found"
    );
    assert!(find("mcp_server", "plugin:good:good-srv")["reason_code"].is_null());
}
