//! Claude Code's plugins, skills and hooks as inventory rows, against a
//! fixture machine in the shapes the pinned CLI writes (verified by
//! installing a plugin from a local marketplace with `claude plugin
//! install`): `plugins/installed_plugins.json`, the plugin's cache directory
//! with `.claude-plugin/plugin.json`, `hooks/hooks.json`, `skills/*/SKILL.md`
//! and `.mcp.json`, and `enabledPlugins` in the user's settings.

use serde_json::json;
use tether_core::inventory::{CapabilityLink, InventoryDocument, InventoryRow};
use tether_core::vocab::{CapabilityKind, ReasonCode, ResolvesAgainst, StageState};
use tether_passthrough_claude::config_scan::ClaudeConfigScanner;
use tether_sdk::scan_fixture::ScanFixture;

const SECRETS: [&str; 2] = ["sekret-hook-arg-6b1f", "sekret-hook-env-0c2e"];

fn find<'a>(doc: &'a InventoryDocument, kind: CapabilityKind, name: &str) -> &'a InventoryRow {
    doc.rows
        .iter()
        .find(|r| r.kind == kind && r.name == name)
        .unwrap_or_else(|| {
            panic!(
                "no {kind} {name} in {:#?}",
                doc.rows
                    .iter()
                    .map(|r| (&r.kind, &r.name))
                    .collect::<Vec<_>>()
            )
        })
}

fn machine() -> ScanFixture {
    let mut f = ScanFixture::new();
    f.var("PATH", f.bin.display().to_string());
    f.var("HOME", f.home.display().to_string());
    let plugin = f.home.join(".claude/plugins/cache/localmkt/demo/1.0.0");
    ScanFixture::write(
        &plugin.join(".claude-plugin/plugin.json"),
        r#"{"name": "demo", "version": "1.0.0"}"#,
    );
    ScanFixture::write(
        &plugin.join("hooks/hooks.json"),
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/scripts/check.sh"},
            {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/scripts/missing.sh"}]}]}}"#,
    );
    ScanFixture::executable(&plugin.join("scripts/check.sh"));
    ScanFixture::write(
        &plugin.join("skills/greet/SKILL.md"),
        "---\nname: greet\ndescription: Say hi\n---\nSay hi.\n",
    );
    ScanFixture::write(
        &plugin.join(".mcp.json"),
        r#"{"mcpServers": {"demo-time": {"command": "fake-mcp"}}}"#,
    );
    f.home(
        ".claude/plugins/installed_plugins.json",
        &json!({"version": 2, "plugins": {"demo@localmkt": [{
            "scope": "user", "installPath": plugin.display().to_string(), "version": "1.0.0"}]}})
        .to_string(),
    );
    f.home(
        ".claude/settings.json",
        &json!({
            "enabledPlugins": {"demo@localmkt": true, "gone@localmkt": true},
            "hooks": {
                "PostToolUse": [{"matcher": "*", "hooks": [
                    {"type": "command", "command": "fake-mcp --token sekret-hook-arg-6b1f"},
                    {"type": "command", "command": "./hooks/lint.sh"},
                    {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/x.sh"},
                    {"type": "command", "command": "SECRET=sekret-hook-env-0c2e $HOME/bin/notify"}
                ]}]
            }
        })
        .to_string(),
    );
    f.home(
        ".claude/skills/review/SKILL.md",
        "---\nname: review\n---\nReview.\n",
    );
    f
}

#[test]
fn plugins_skills_and_hooks_each_get_a_row_with_their_precise_reason() {
    let f = machine();
    let doc = f.scan(&ClaudeConfigScanner);
    ScanFixture::assert_no_secret(
        "the inventory",
        &serde_json::to_string(&doc).expect("json"),
        &SECRETS,
    );

    // The installed, enabled plugin links what it bundles.
    let plugin = find(&doc, CapabilityKind::Plugin, "demo@localmkt");
    assert_eq!(plugin.stages.installed.state, StageState::Yes);
    assert_eq!(plugin.stages.enabled.state, StageState::Yes);
    assert_eq!(plugin.stages.initialized.state, StageState::NotApplicable);
    assert_eq!(plugin.stages.model_visible.state, StageState::NotApplicable);
    assert_eq!(plugin.reason_code, None);
    for link in [
        (CapabilityKind::McpServer, "plugin:demo:demo-time"),
        (CapabilityKind::Skill, "demo:greet"),
        (CapabilityKind::Hook, "demo:PreToolUse:Bash"),
        (CapabilityKind::Hook, "demo:PreToolUse:Bash#2"),
    ] {
        assert!(
            plugin.links.contains(&CapabilityLink {
                kind: link.0.clone(),
                name: link.1.into()
            }),
            "{link:?} in {:?}",
            plugin.links
        );
    }
    // Its bundled server row exists, as Claude shows it.
    find(&doc, CapabilityKind::McpServer, "plugin:demo:demo-time");

    // Enabled in settings, never installed.
    let gone = find(&doc, CapabilityKind::Plugin, "gone@localmkt");
    assert_eq!(gone.stages.installed.state, StageState::No);
    assert_eq!(gone.reason_code, Some(ReasonCode::NotInstalled));
    assert!(gone.summary.is_some());

    // The plugin's own hooks resolve against its root, where CLAUDE_PLUGIN_ROOT expands.
    let ok = find(&doc, CapabilityKind::Hook, "demo:PreToolUse:Bash");
    assert_eq!(
        ok.diagnostics.resolves_against,
        Some(ResolvesAgainst::Absolute)
    );
    assert_eq!(ok.diagnostics.command_resolves, Some(true));
    assert_eq!(ok.reason_code, None, "{ok:#?}");
    let missing = find(&doc, CapabilityKind::Hook, "demo:PreToolUse:Bash#2");
    assert_eq!(missing.reason_code, Some(ReasonCode::CommandNotFound));
    assert_eq!(missing.diagnostics.command.as_deref(), Some("missing.sh"));

    // Settings hooks: a working one, a relative one, one using the plugin's
    // variable where Claude never expands it, one using $HOME (set here).
    let plain = find(&doc, CapabilityKind::Hook, "PostToolUse");
    assert_eq!(plain.reason_code, None, "{plain:#?}");
    assert_eq!(plain.diagnostics.command.as_deref(), Some("fake-mcp"));
    assert_eq!(
        plain.diagnostics.resolves_against,
        Some(ResolvesAgainst::Path)
    );
    let relative = find(&doc, CapabilityKind::Hook, "PostToolUse#2");
    assert_eq!(relative.reason_code, Some(ReasonCode::RelativeCommand));
    assert_eq!(
        relative.diagnostics.resolves_against,
        Some(ResolvesAgainst::WorkspaceCwd)
    );
    let unresolved = find(&doc, CapabilityKind::Hook, "PostToolUse#3");
    assert_eq!(unresolved.reason_code, Some(ReasonCode::UnresolvedVariable));
    assert_eq!(
        unresolved.diagnostics.unresolved,
        vec!["CLAUDE_PLUGIN_ROOT".to_owned()]
    );
    let with_env = find(&doc, CapabilityKind::Hook, "PostToolUse#4");
    assert!(with_env.diagnostics.unresolved.is_empty(), "{with_env:#?}");
    // The assignment before it is not the command; $HOME expands, and
    // $HOME/bin/notify does not exist on this machine.
    assert_eq!(with_env.diagnostics.command.as_deref(), Some("notify"));
    assert_eq!(with_env.reason_code, Some(ReasonCode::CommandNotFound));
    assert_eq!(
        with_env.stages.model_visible.state,
        StageState::NotApplicable
    );

    // Skills: the user's own, and the plugin's.
    let skill = find(&doc, CapabilityKind::Skill, "review");
    assert_eq!(skill.stages.enabled.state, StageState::Yes);
    assert_eq!(skill.stages.model_visible.state, StageState::Unknown);
    find(&doc, CapabilityKind::Skill, "demo:greet");
}

#[test]
fn disable_all_hooks_turns_every_settings_hook_off() {
    let f = machine();
    f.home(".claude/settings.local.json", "{}");
    f.home(
        ".claude/settings.json",
        r#"{"disableAllHooks": true, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "fake-mcp"}]}]}}"#,
    );
    let doc = f.scan(&ClaudeConfigScanner);
    let stop = find(&doc, CapabilityKind::Hook, "Stop");
    assert_eq!(stop.stages.enabled.state, StageState::No);
    assert_eq!(stop.reason_code, Some(ReasonCode::DisabledInConfig));
}
