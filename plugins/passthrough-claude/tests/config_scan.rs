//! Claude Code's configuration scanner against fixture machines written in
//! the documented shapes: user, local, project (with approvals), managed
//! policy and plugin scopes, `/mcp` toggles, planted secrets, a project
//! reached through a symlink, and plugins from installs only.

use std::collections::BTreeMap;

use serde_json::json;
use tether_core::inventory::{InventoryDocument, InventoryRow};

fn row<'a>(doc: &'a InventoryDocument, scope: &str, name: &str) -> &'a InventoryRow {
    tether_sdk::scan_fixture::row(doc, "claude", scope, name)
}
use tether_passthrough_claude::config_scan::ClaudeConfigScanner;
use tether_sdk::scan_fixture::{ON, ScanFixture, assert_states, off, state};

const SECRETS: [&str; 5] = [
    "sekret-arg-0d9e4",
    "sekret-env-71b2c",
    "sekret-pw-5c6a1",
    "sekret-q-88f02",
    "sekret-hdr-13aa7",
];

/// Every Claude scope, with secrets planted wherever a value can be.
fn fixture() -> ScanFixture {
    let f = ScanFixture::new();
    let project_key = f.project.to_string_lossy().into_owned();
    f.home(
        ".claude.json",
        &serde_json::to_string_pretty(&json!({
            "numStartups": 3,
            "mcpServers": {
                "c-user": {"type": "stdio", "command": "fake-mcp",
                           "args": ["--token", "sekret-arg-0d9e4"],
                           "env": {"API_TOKEN": "sekret-env-71b2c", "LOG_LEVEL": "debug"}},
                "c-missing": {"command": "no-such-command-3f9", "args": []},
                "c-toggled": {"command": "fake-mcp"},
                "c-denied": {"command": "fake-mcp"}
            },
            "projects": {
                project_key: {
                    "hasTrustDialogAccepted": true,
                    "mcpServers": {
                        "c-local": {"type": "http",
                                    "url": "https://me:sekret-pw-5c6a1@mcp.example.com/mcp?key=sekret-q-88f02",
                                    "headers": {"Authorization": "Bearer sekret-hdr-13aa7"}}
                    },
                    "disabledMcpServers": ["c-toggled"],
                    "enabledMcpjsonServers": [],
                    "disabledMcpjsonServers": []
                }
            }
        }))
        .expect("json"),
    );
    f.project(
        ".mcp.json",
        r#"{"mcpServers": {
            "p-approved": {"command": "fake-mcp"},
            "p-pending": {"type": "sse", "url": "https://sse.example.com/sse"},
            "p-rejected": {"command": "fake-mcp"}
        }}"#,
    );
    f.project(
        ".claude/settings.local.json",
        r#"{"enabledMcpjsonServers": ["p-approved"], "disabledMcpjsonServers": ["p-rejected"]}"#,
    );
    f.system(
        "/etc/claude-code/managed-settings.json",
        r#"{"deniedMcpServers": [{"serverName": "c-denied"}]}"#,
    );
    let plugin_dir = f
        .home
        .join(".claude/plugins/cache/tools-mkt/helper-kit/1.2.0");
    ScanFixture::write(
        &plugin_dir.join(".claude-plugin/plugin.json"),
        r#"{"name": "helper-kit", "version": "1.2.0"}"#,
    );
    ScanFixture::write(
        &plugin_dir.join(".mcp.json"),
        r#"{"mcpServers": {"helper": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/helper"}}}"#,
    );
    ScanFixture::executable(&plugin_dir.join("bin/helper"));
    f.home(
        ".claude/settings.json",
        r#"{"enabledPlugins": {"helper-kit@tools-mkt": true}}"#,
    );
    f
}

#[test]
fn given_every_claude_scope_then_each_server_has_its_precise_state_and_no_secret_is_kept() {
    let f = fixture();
    let doc = f.scan(&ClaudeConfigScanner);
    assert!(doc.errors.is_empty(), "{:#?}", doc.errors);
    ScanFixture::assert_no_secret(
        "the claude inventory",
        &serde_json::to_string(&doc).expect("json"),
        &SECRETS,
    );
    let expect = [
        ("user", "c-user", ON),
        (
            "user",
            "c-missing",
            ("yes", Some("command_not_found".into())),
        ),
        ("user", "c-toggled", off("disabled_in_config")),
        ("user", "c-denied", off("denied_by_policy")),
        ("local", "c-local", ON),
        ("project", "p-approved", ON),
        ("project", "p-pending", off("not_approved")),
        ("project", "p-rejected", off("disabled_in_config")),
        ("plugin", "plugin:helper-kit:helper", ON),
    ];
    assert_states(&doc, "claude", &expect);

    let c_user = row(&doc, "user", "c-user");
    assert_eq!(c_user.source, "~/.claude.json");
    assert_eq!(c_user.target, "fake-mcp");
    assert_eq!(c_user.diagnostics.command_resolves, Some(true));
    assert_eq!(c_user.diagnostics.cwd.map(|c| c.as_str()), Some("unset"));
    let env: BTreeMap<_, _> = c_user
        .diagnostics
        .env
        .iter()
        .map(|e| (e.name.as_str(), e.class.as_str()))
        .collect();
    assert_eq!(
        env,
        BTreeMap::from([("API_TOKEN", "secret_like"), ("LOG_LEVEL", "plain")])
    );
    let c_local = row(&doc, "local", "c-local");
    assert_eq!(c_local.target, "https://mcp.example.com");
    assert_eq!(c_local.diagnostics.headers, ["Authorization"]);
    let pending = row(&doc, "project", "p-pending");
    assert_eq!(pending.source, "$PROJECT/.mcp.json");
    assert_eq!(pending.transport.to_string(), "sse");
    let rejected = row(&doc, "project", "p-rejected");
    assert!(
        rejected
            .summary
            .as_deref()
            .is_some_and(|s| s.contains("$PROJECT/.claude/settings.local.json")),
        "{rejected:#?}"
    );
    // The plugin root placeholder is expanded, not taken for an environment reference.
    let helper = row(&doc, "plugin", "plugin:helper-kit:helper");
    assert_eq!(
        helper.diagnostics.command_resolves,
        Some(true),
        "{helper:#?}"
    );
    assert!(helper.diagnostics.env.is_empty(), "{helper:#?}");
}

#[test]
fn given_a_project_reached_through_a_symlink_then_what_claude_wrote_for_the_real_path_still_matches()
 {
    let f = fixture();
    let link = f.root().join("link-to-proj");
    std::os::unix::fs::symlink(&f.project, &link).expect("ln");
    let doc = tether_inventory::scan_all(&f.context_for(&link), &[&ClaudeConfigScanner], &[]);
    assert_eq!(state(row(&doc, "local", "c-local")), ON);
    assert_eq!(state(row(&doc, "project", "p-approved")), ON);
}

#[test]
fn given_installed_and_catalog_plugins_then_only_installs_for_this_user_or_project_count() {
    let f = ScanFixture::new();
    let plugins = f.home.join(".claude/plugins");
    let plugin = |dir: &str, name: &str, server: &str| {
        ScanFixture::write(
            &plugins.join(dir).join(".claude-plugin/plugin.json"),
            &json!({"name": name}).to_string(),
        );
        ScanFixture::write(
            &plugins.join(dir).join(".mcp.json"),
            &json!({server: {"command": "fake-mcp"}}).to_string(),
        );
    };
    plugin(
        "marketplaces/mkt/plugins/catalog-only",
        "catalog-only",
        "never",
    );
    plugin("cache/mkt/user-kit/2.0.0", "user-kit", "srv");
    plugin("cache/mkt/proj-kit/1.0.0", "proj-kit", "psrv");
    plugin("cache/mkt/other-kit/1.0.0", "other-kit", "osrv");
    let at = |dir: &str| plugins.join(dir).to_string_lossy().into_owned();
    f.home(
        ".claude/plugins/installed_plugins.json",
        &json!({"version": 2, "plugins": {
            "user-kit@mkt": [{"scope": "user", "installPath": at("cache/mkt/user-kit/2.0.0"), "version": "2.0.0"}],
            "proj-kit@mkt": [{"scope": "project", "projectPath": f.project, "installPath": at("cache/mkt/proj-kit/1.0.0")}],
            "other-kit@mkt": [{"scope": "local", "projectPath": "/some/other/project", "installPath": at("cache/mkt/other-kit/1.0.0")}],
            "escaped@mkt": [{"scope": "user", "installPath": "/usr/lib"}]
        }})
        .to_string(),
    );
    f.home(
        ".claude/settings.json",
        r#"{"enabledPlugins": {"user-kit@mkt": true, "proj-kit@mkt": false}}"#,
    );
    let doc = f.scan(&ClaudeConfigScanner);
    // Row order follows the JSON map's iteration order, which serde_json's
    // `preserve_order` feature (unified in by other crates) changes: compare as a set.
    let mut names: Vec<&str> = doc
        .rows
        .iter()
        .filter(|r| r.kind == tether_core::vocab::CapabilityKind::McpServer)
        .map(|r| r.name.as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["plugin:proj-kit:psrv", "plugin:user-kit:srv"],
        "{:#?}",
        doc.rows
    );
    assert_eq!(state(row(&doc, "plugin", "plugin:user-kit:srv")), ON);
    assert_eq!(
        state(row(&doc, "plugin", "plugin:proj-kit:psrv")),
        off("disabled_in_config")
    );
    assert!(
        doc.errors
            .iter()
            .any(|e| e.reason_code.as_str() == "symlink_outside_root"
                && e.summary.contains("escaped@mkt")),
        "{:#?}",
        doc.errors
    );
}

/// GIVEN a project whose trust dialog was never accepted WHEN its
/// `.mcp.json` servers are read THEN even an approved one waits (as
/// `claude mcp list` says on 2.1.197 and 2.1.332: "Pending approval"),
/// and a rejected one stays rejected; user servers are not affected.
#[test]
fn an_untrusted_folder_holds_every_project_server_back() {
    let f = ScanFixture::new();
    f.home(
        ".claude.json",
        r#"{"mcpServers": {"u": {"command": "fake-mcp"}}}"#,
    );
    f.project(
        ".mcp.json",
        r#"{"mcpServers": {"p-approved": {"command": "fake-mcp"}, "p-rejected": {"command": "fake-mcp"}}}"#,
    );
    f.project(
        ".claude/settings.local.json",
        r#"{"enabledMcpjsonServers": ["p-approved"], "disabledMcpjsonServers": ["p-rejected"]}"#,
    );
    let doc = f.scan(&ClaudeConfigScanner);
    assert_eq!(state(row(&doc, "user", "u")), ON);
    assert_eq!(
        state(row(&doc, "project", "p-approved")),
        off("untrusted_folder")
    );
    assert_eq!(
        state(row(&doc, "project", "p-rejected")),
        off("disabled_in_config")
    );
}
