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

/// A skill: `DIR/SKILL.md` with front matter naming it `name`.
fn skill(dir: &Path, name: &str) {
    write(
        &dir.join("SKILL.md"),
        &format!("---\nname: {name}\ndescription: the {name} skill\n---\nDo it.\n"),
    );
}

/// Runs a pinned CLI as set up by `cmd` (its stdin closed); it must succeed.
fn succeeded(what: &str, cmd: &mut Command, args: &[&str]) -> std::process::Output {
    let out = cmd
        .args(args)
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{what} runs: {e}"));
    assert!(
        out.status.success(),
        "{what} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The pinned Codex with only `HOME` (and `CODEX_HOME` under it).
fn codex_cli(bin: &Path, home: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new(bin);
    cmd.env_clear()
        .env("HOME", home)
        .env("CODEX_HOME", home.join(".codex"));
    succeeded("codex", &mut cmd, args)
}

/// The pinned Copilot CLI, offline, in `work`, with only `HOME` and its
/// package cache at `pkg`.
fn copilot_cli(
    bin: &Path,
    home: &Path,
    work: &Path,
    pkg: &Path,
    args: &[&str],
) -> std::process::Output {
    let mut cmd = Command::new(bin);
    cmd.current_dir(work)
        .env_clear()
        .env("HOME", home)
        .env("COPILOT_OFFLINE", "true")
        .env("COPILOT_AUTO_UPDATE", "false")
        .env("COPILOT_PKG_CACHE_HOME", pkg);
    succeeded("copilot", &mut cmd, args)
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
    let pkg = tmp.path().join("pkg");
    let copilot = |args: &[&str]| copilot_cli(&bin, &home, &work, &pkg, args);
    copilot(&["plugin", "install", plugin.to_str().expect("utf-8")]);
    for disable in [false, true] {
        if disable {
            copilot(&["plugin", "disable", "demo"]);
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
    let codex = |args: &[&str]| codex_cli(&bin, &home, args);
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

/// What the pinned Codex's own app server (`codex app-server`, JSON-RPC
/// over stdio) answers to `method` for `cwd`: its `result.data[0]`. Bounded
/// by a deadline; the server is killed with its process group.
fn codex_app_server(bin: &Path, home: &Path, cwd: &Path, method: &str) -> Value {
    use std::io::{BufRead, Write};
    use std::os::unix::process::CommandExt;
    let mut child = Command::new(bin)
        .arg("app-server")
        .env_clear()
        .env("HOME", home)
        .env("CODEX_HOME", home.join(".codex"))
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .current_dir(cwd)
        .process_group(0)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("codex app-server");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    /// Kills the whole group this test started (helpers included) and reaps
    /// its leader, on every path out.
    struct Group(std::process::Child);
    impl Drop for Group {
        fn drop(&mut self) {
            tether_tests::kill_group(&mut self.0);
        }
    }
    let _group = Group(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let cwd = cwd.to_str().expect("utf-8");
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"clientInfo": {"name": "tether-tests", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": method, "params": {"cwds": [cwd]}}),
    ] {
        writeln!(stdin, "{message}").expect("write");
    }
    stdin.flush().expect("flush");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let line = rx
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("codex app-server gave no {method} answer"));
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if message["id"] == 2 {
            return message["result"]["data"][0].clone();
        }
    }
}

/// The row name Tether gives a hook `codex app-server` lists:
/// `[PLUGIN:]Event[:matcher]`.
fn codex_hook_name(hook: &Value) -> String {
    let event = hook["eventName"].as_str().expect("eventName");
    let mut name: String = event[..1].to_uppercase() + &event[1..];
    if let Some(matcher) = hook["matcher"].as_str().filter(|m| *m != "*") {
        name = format!("{name}:{matcher}");
    }
    if let Some(plugin) = hook["pluginId"].as_str() {
        name = format!("{}:{name}", plugin.split('@').next().expect("name"));
    }
    name
}

/// GIVEN Codex hooks of every kind it loads (user `hooks.json`, the
/// `[hooks]` table of `config.toml`, a trusted project's
/// `.codex/hooks.json`, an installed plugin's `hooks/hooks.json`), one
/// turned off in `[hooks.state]`, one trusted with the hash Codex itself
/// computed, broken commands of each shape, and skills of every place
/// (nested, named by front matter, turned off in `[[skills.config]]`, one
/// without front matter) WHEN the inventory runs THEN it has a hook row for
/// each hook and a skill row for each skill that `codex app-server` lists
/// (`hooks/list`, `skills/list`), enabled as Codex says, with the precise
/// reason for each broken one; and once the project is untrusted, Codex
/// stops listing the project's hook and its row says `untrusted_folder`.
#[test]
fn codex_hooks_and_skills_are_rows_as_its_app_server_lists_them() {
    let Some(bin) = tether_tests::peer("node_modules/.bin/codex") else {
        return;
    };
    let tmp = tempfile::Builder::new()
        .prefix("tether-codex-hooks-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("tmp");
    let home = tmp.path().join("home");
    let codex_home = home.join(".codex");
    let project = tmp.path().join("work");
    let mkt = tmp.path().join("mkt");
    std::fs::create_dir_all(&codex_home).expect("home");
    std::fs::create_dir_all(&project).expect("project");
    let project = std::fs::canonicalize(&project).expect("canonical");
    write(
        &mkt.join(".agents/plugins/marketplace.json"),
        &json!({"name": "localmkt", "plugins": [
            {"name": "hk", "source": {"source": "local", "path": "./plugins/hk"}}
        ]})
        .to_string(),
    );
    let plugin = mkt.join("plugins/hk");
    write(
        &plugin.join(".codex-plugin/plugin.json"),
        &json!({"name": "hk", "version": "1.0.0", "description": "hooks"}).to_string(),
    );
    write(
        &plugin.join("hooks/hooks.json"),
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "${PLUGIN_ROOT}/run.sh"},
            {"type": "command", "command": "./rel.sh"}
        ]}]}})
        .to_string(),
    );
    executable(&plugin.join("run.sh"));
    write(
        &plugin.join("skills/greet/SKILL.md"),
        "---\nname: greet\ndescription: Say hi\n---\nSay hi.\n",
    );
    let codex = |args: &[&str]| {
        codex_cli(&bin, &home, args);
    };
    codex(&["plugin", "marketplace", "add", mkt.to_str().expect("utf-8")]);
    codex(&["plugin", "add", "hk@localmkt"]);
    write(
        &codex_home.join("hooks.json"),
        &json!({"hooks": {
            "SessionStart": [{"hooks": [{"type": "command", "command": "true"}]}],
            "Stop": [{"hooks": [
                {"type": "command", "command": "./scripts/stop.sh"},
                {"type": "command", "command": "tether-no-such-hook-4e2"}
            ]}],
            "PostToolUse": [{"matcher": "*", "hooks": [
                {"type": "command", "command": "${TETHER_UNSET_HOOK_DIR}/post.sh"}
            ]}]
        }})
        .to_string(),
    );
    write(
        &project.join(".codex/hooks.json"),
        &json!({"hooks": {"UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": "true"}
        ]}]}})
        .to_string(),
    );
    skill(&codex_home.join("skills/mine"), "mine");
    skill(&codex_home.join("skills/nested/deep/inner"), "inner");
    skill(&codex_home.join("skills/folder"), "named-otherwise");
    skill(&codex_home.join("skills/offone"), "offone");
    write(&codex_home.join("skills/bad/SKILL.md"), "no front matter\n");
    skill(&home.join(".agents/skills/agentsuser"), "agentsuser");
    skill(&project.join(".codex/skills/projcodex"), "projcodex");
    skill(&project.join(".agents/skills/projagents"), "projagents");
    let config = codex_home.join("config.toml");
    let base = std::fs::read_to_string(&config).expect("config");
    let offone = codex_home.join("skills/offone/SKILL.md");
    let write_config = |trust: &str, state: &str| {
        std::fs::write(
            &config,
            format!(
                "{base}\n[projects.{:?}]\ntrust_level = {trust:?}\n\n[[skills.config]]\npath = {:?}\nenabled = false\n\n\
                 [[hooks.PreToolUse]]\nmatcher = \"Edit\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"true\"\n\n{state}",
                project.display().to_string(),
                offone.display().to_string(),
            ),
        )
        .expect("config");
    };
    write_config("trusted", "");
    // The first listing gives Codex's own hash of the SessionStart hook.
    let listed = codex_app_server(&bin, &home, &project, "hooks/list");
    let session_start = listed["hooks"]
        .as_array()
        .expect("hooks")
        .iter()
        .find(|h| h["eventName"] == "sessionStart")
        .expect("the SessionStart hook")
        .clone();
    let stop_key = format!("{}:stop:0:0", codex_home.join("hooks.json").display());
    let state = format!(
        "[hooks.state.{:?}]\ntrusted_hash = {:?}\n\n[hooks.state.{stop_key:?}]\nenabled = false\n",
        session_start["key"].as_str().expect("key"),
        session_start["currentHash"].as_str().expect("hash"),
    );
    write_config("trusted", &state);

    let listed = codex_app_server(&bin, &home, &project, "hooks/list");
    let hooks = listed["hooks"].as_array().expect("hooks");
    let project_arg = project.to_str().expect("utf-8");
    let doc = inventory(
        &["--harness", "codex", "--project", project_arg],
        &[("HOME", &home), ("CODEX_HOME", &codex_home)],
    );
    let rows = |kind: &str| -> Vec<&Value> {
        doc["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .filter(|r| r["kind"] == kind)
            .collect()
    };
    assert_eq!(hooks.len(), 8, "{listed:#}");
    assert_eq!(rows("hook").len(), hooks.len(), "{:#?}", rows("hook"));
    let mut named = std::collections::BTreeMap::<String, usize>::new();
    for hook in hooks {
        let base = codex_hook_name(hook);
        let seen = named.entry(base.clone()).or_default();
        *seen += 1;
        let name = if *seen == 1 {
            base
        } else {
            format!("{base}#{seen}")
        };
        let row = find(&doc, "hook", &name);
        assert_eq!(row["scope"], hook["source"], "{name}");
        let want = match (hook["enabled"] == true, hook["trustStatus"].as_str()) {
            (false, _) => ("no", Some("disabled_in_config")),
            (true, Some("untrusted")) => ("no", Some("not_approved")),
            (true, Some("trusted")) => ("unknown", None),
            other => panic!("{name}: {other:?}"),
        };
        assert_eq!(row["stages"]["enabled"]["state"], want.0, "{name}: {row:#}");
        if let Some(reason) = want.1 {
            assert_eq!(row["reason_code"], reason, "{name}: {row:#}");
        }
    }
    // Trusted, and its command resolves: nothing stops it that Tether sees.
    let trusted = find(&doc, "hook", "SessionStart");
    assert!(trusted["reason_code"].is_null(), "{trusted:#}");
    assert_eq!(trusted["diagnostics"]["command_resolves"], true);
    // The broken commands' own shapes, behind the missing trust.
    for (name, resolves, against, unresolved) in [
        ("Stop", false, "workspace_cwd", None),
        ("Stop#2", false, "path", None),
        (
            "PostToolUse",
            false,
            "workspace_cwd",
            Some("TETHER_UNSET_HOOK_DIR"),
        ),
        ("hk:PreToolUse:Bash", true, "absolute", None),
        ("hk:PreToolUse:Bash#2", false, "workspace_cwd", None),
    ] {
        let d = &find(&doc, "hook", name)["diagnostics"];
        assert_eq!(d["command_resolves"], resolves, "{name}: {d:#}");
        assert_eq!(d["resolves_against"], against, "{name}: {d:#}");
        if let Some(var) = unresolved {
            assert_eq!(d["unresolved"], json!([var]), "{name}: {d:#}");
        }
    }
    let plugin_row = find(&doc, "plugin", "hk@localmkt");
    for hook in ["hk:PreToolUse:Bash", "hk:PreToolUse:Bash#2"] {
        assert!(
            plugin_row["links"]
                .as_array()
                .expect("links")
                .iter()
                .any(|l| l["kind"] == "hook" && l["name"] == hook),
            "{plugin_row:#}"
        );
    }

    let skills = codex_app_server(&bin, &home, &project, "skills/list");
    let skills = skills["skills"].as_array().expect("skills");
    assert!(skills.len() >= 8, "{skills:#?}");
    for skill in skills {
        let name = skill["name"].as_str().expect("name");
        let row = find(&doc, "skill", name);
        let want = if skill["enabled"] == true {
            "yes"
        } else {
            "no"
        };
        assert_eq!(row["stages"]["enabled"]["state"], want, "{name}: {row:#}");
        let scope = match skill["scope"].as_str() {
            Some("repo") => "project",
            Some(other) if skill["pluginId"].is_null() => other,
            _ => "plugin",
        };
        assert_eq!(row["scope"], scope, "{name}");
    }
    assert_eq!(
        rows("skill").len(),
        skills.len() + 1,
        "every skill Codex lists, and the one it skips"
    );
    assert_eq!(
        find(&doc, "skill", "offone")["reason_code"],
        "disabled_in_config"
    );
    let bad = find(&doc, "skill", "bad");
    assert_eq!(bad["reason_code"], "invalid_config", "{bad:#}");
    assert!(!skills.iter().any(|s| s["name"] == "bad"));

    // An untrusted project: Codex drops its hooks, and the row says why.
    write_config("untrusted", &state);
    let listed = codex_app_server(&bin, &home, &project, "hooks/list");
    assert!(
        !listed["hooks"]
            .as_array()
            .expect("hooks")
            .iter()
            .any(|h| h["source"] == "project"),
        "{listed:#}"
    );
    let doc = inventory(
        &[
            "--harness",
            "codex",
            "--project",
            project_arg,
            "--kind",
            "hook",
        ],
        &[("HOME", &home), ("CODEX_HOME", &codex_home)],
    );
    let row = find(&doc, "hook", "UserPromptSubmit");
    assert_eq!(row["reason_code"], "untrusted_folder", "{row:#}");
    assert_eq!(row["stages"]["enabled"]["state"], "no");
}

/// GIVEN skills in every place the pinned Copilot CLI reads them (the
/// project's `.github/skills`, `.agents/skills` and `.claude/skills`, the
/// user's `~/.copilot/skills` and `~/.agents/skills`, nested, named by front
/// matter), a directory added with `copilot skill add`, one skill turned off
/// with `copilot skill disable`, one without front matter, and a plugin's
/// WHEN the inventory runs THEN it has a skill row for each skill `copilot
/// skill list --json` lists (Copilot's own builtins aside), enabled as it
/// says, plus the one that fails to load, as `invalid_config`.
#[test]
fn copilot_skills_are_rows_as_copilot_skill_list_lists_them() {
    let Some(bin) = tether_tests::peer("node_modules/@github/copilot-linux-x64/copilot") else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path().join("home");
    let work = tmp.path().join("work");
    let extra = tmp.path().join("extra");
    let plugin = tmp.path().join("src/demo");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::create_dir_all(&work).expect("work");
    skill(&work.join(".github/skills/gh"), "gh");
    skill(&work.join(".agents/skills/agproj"), "agproj");
    skill(&work.join(".claude/skills/cl"), "cl");
    skill(&home.join(".copilot/skills/pers"), "pers");
    skill(&home.join(".copilot/skills/nested/deep/inner"), "inner");
    skill(&home.join(".copilot/skills/folder"), "named-otherwise");
    skill(&home.join(".agents/skills/agpers"), "agpers");
    skill(&extra.join("cust"), "cust");
    write(
        &home.join(".copilot/skills/bad/SKILL.md"),
        "no front matter\n",
    );
    write(
        &plugin.join("plugin.json"),
        &json!({"name": "demo", "version": "1.0.0", "skills": "skills/"}).to_string(),
    );
    skill(&plugin.join("skills/greet"), "greet");
    let pkg = tmp.path().join("pkg");
    let copilot = |args: &[&str]| copilot_cli(&bin, &home, &work, &pkg, args);
    copilot(&["skill", "add", extra.to_str().expect("utf-8")]);
    copilot(&["skill", "disable", "pers"]);
    copilot(&["plugin", "install", plugin.to_str().expect("utf-8")]);
    let listed: Vec<Value> = serde_json::from_slice(&copilot(&["skill", "list", "--json"]).stdout)
        .expect("copilot skill list --json");
    let listed: Vec<&Value> = listed.iter().filter(|s| s["source"] != "builtin").collect();
    assert_eq!(listed.len(), 9, "{listed:#?}");
    let doc = inventory(
        &[
            "--harness",
            "copilot",
            "--kind",
            "skill",
            "--project",
            work.to_str().expect("utf-8"),
        ],
        &[("HOME", &home)],
    );
    for skill in &listed {
        let name = skill["name"].as_str().expect("name");
        let (name, scope) = match skill["source"].as_str() {
            Some("plugin") => (format!("demo:{name}"), "plugin"),
            Some("project") => (name.to_owned(), "project"),
            _ => (name.to_owned(), "user"),
        };
        let row = find(&doc, "skill", &name);
        let want = if skill["enabled"] == true {
            "yes"
        } else {
            "no"
        };
        assert_eq!(row["stages"]["enabled"]["state"], want, "{name}: {row:#}");
        assert_eq!(row["scope"], scope, "{name}");
    }
    let rows = doc["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), listed.len() + 1, "{rows:#?}");
    assert_eq!(
        find(&doc, "skill", "pers")["reason_code"],
        "disabled_in_config"
    );
    let bad = find(&doc, "skill", "bad");
    assert_eq!(bad["reason_code"], "invalid_config", "{bad:#}");
    let custom = find(&doc, "skill", "cust");
    assert_eq!(
        custom["source"], "~/.copilot/settings.json:skillDirectories[0]/cust/SKILL.md",
        "a custom directory is shown by its place in the settings, never its path"
    );
}

/// GIVEN OpenCode's `plugin` array naming a plugin folder by absolute path,
/// one by a path relative to the config file, one path that does not
/// exist, and an npm package the registry does not have WHEN the inventory
/// runs before OpenCode ever starts THEN the folders are installed, the
/// missing path is `not_installed`, and the npm package is `unknown`
/// (OpenCode installs npm plugins when it starts); and once the pinned
/// OpenCode has run (and loaded both folders, as their own marks show),
/// the npm package is `not_installed`, its install having failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_plugin_entries_are_installed_as_opencode_leaves_them() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let Some(opencode) = tether_tests::peer("node_modules/.bin/opencode") else {
        return;
    };
    let (model, _) = tether_tests::fake_model::start_model("get_current_time").await;
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path().join("home");
    let work = tmp.path().join("work");
    let config_dir = home.join(".config/opencode");
    let marks = tmp.path().join("loaded.txt");
    let plugin = |dir: &Path, name: &str| {
        write(
            &dir.join("package.json"),
            &json!({"name": name, "version": "1.0.0", "main": "index.js", "type": "module"})
                .to_string(),
        );
        write(
            &dir.join("index.js"),
            &format!(
                "import fs from \"node:fs\";\nexport const P = async () => {{ fs.appendFileSync({:?}, \"{name}\\n\"); return {{}}; }};\n",
                marks.display().to_string()
            ),
        );
    };
    plugin(&tmp.path().join("plugins/abs-plugin"), "abs-plugin");
    plugin(&config_dir.join("rel-plugin"), "rel-plugin");
    std::fs::create_dir_all(&work).expect("work");
    write(
        &config_dir.join("opencode.json"),
        &tether_tests::opencode_config(
            &model.base(),
            json!({
                "plugin": [
                    tmp.path().join("plugins/abs-plugin").display().to_string(),
                    "./rel-plugin",
                    tmp.path().join("plugins/gone-plugin").display().to_string(),
                    "tether-absent-plugin@1.0.0"
                ]
            }),
        )
        .to_string(),
    );
    let xdg = [
        ("XDG_CONFIG_HOME", home.join(".config")),
        ("XDG_DATA_HOME", home.join(".local/share")),
        ("XDG_STATE_HOME", home.join(".local/state")),
        ("XDG_CACHE_HOME", home.join(".cache")),
    ];
    let scan = || {
        let mut env: Vec<(&str, &Path)> = vec![("HOME", &home)];
        env.extend(xdg.iter().map(|(k, v)| (*k, v.as_path())));
        inventory(
            &[
                "--harness",
                "opencode",
                "--kind",
                "plugin",
                "--project",
                work.to_str().expect("utf-8"),
            ],
            &env,
        )
    };
    let installed = |doc: &Value, name: &str| {
        let row = find(doc, "plugin", name);
        (
            row["stages"]["installed"]["state"]
                .as_str()
                .expect("state")
                .to_owned(),
            row["reason_code"].as_str().map(str::to_owned),
        )
    };
    let before = scan();
    for name in ["abs-plugin", "rel-plugin"] {
        assert_eq!(installed(&before, name), ("yes".into(), None), "{name}");
    }
    assert_eq!(
        installed(&before, "gone-plugin"),
        ("no".into(), Some("not_installed".into()))
    );
    assert_eq!(
        installed(&before, "tether-absent-plugin"),
        ("unknown".into(), None),
        "before OpenCode starts, nothing shows either way"
    );

    let mut cmd = tokio::process::Command::new(&opencode);
    cmd.args(["run", "hi"])
        .current_dir(&work)
        .env_clear()
        .env("HOME", &home)
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("OPENCODE_DISABLE_MODELS_FETCH", "true")
        .env("OPENCODE_DISABLE_AUTOUPDATE", "true")
        .envs(xdg.iter().map(|(k, v)| (*k, v.as_os_str())))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .kill_on_drop(true);
    let status = tokio::time::timeout(std::time::Duration::from_secs(180), cmd.status())
        .await
        .expect("opencode ends within its bound")
        .expect("opencode runs");
    assert!(status.success(), "{status:?}");
    let loaded = std::fs::read_to_string(&marks).unwrap_or_default();
    for name in ["abs-plugin", "rel-plugin"] {
        assert!(
            loaded.lines().any(|l| l == name),
            "OpenCode loaded {name}: {loaded:?}"
        );
    }
    let after = scan();
    assert_eq!(
        installed(&after, "tether-absent-plugin"),
        ("no".into(), Some("not_installed".into())),
        "{:#}",
        find(&after, "plugin", "tether-absent-plugin")
    );
    for name in ["abs-plugin", "rel-plugin"] {
        assert_eq!(installed(&after, name), ("yes".into(), None), "{name}");
    }
}
