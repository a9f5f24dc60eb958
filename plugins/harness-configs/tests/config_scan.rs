//! The OpenCode, Cursor and Gemini CLI scanners against fixture machines in
//! the documented shapes: JSONC and layered OpenCode files (a later
//! `enabled: false` wins, the newer `mcp.servers` shape, its environment
//! variables), Cursor's `disabled`, Gemini's exclude list, folder trust,
//! extensions and their per-folder enablement; planted secrets throughout.

use std::path::Path;

use serde_json::json;
use tether_core::inventory::InventoryDocument;
use tether_harness_configs::cursor::CursorConfigScanner;
use tether_harness_configs::gemini::GeminiConfigScanner;
use tether_harness_configs::opencode::OpenCodeConfigScanner;
use tether_sdk::scan_fixture::{ON, RowState, ScanFixture, assert_states, off, row, state};

const SECRETS: [&str; 4] = [
    "sekret-oc-env-2291",
    "sekret-oc-hdr-77d1",
    "sekret-cursor-hdr-6c",
    "sekret-gem-hdr-90ab",
];

fn check(doc: &InventoryDocument, harness: &str, expect: &[(&str, &str, RowState)]) {
    assert!(doc.errors.is_empty(), "{:#?}", doc.errors);
    ScanFixture::assert_no_secret(
        "the inventory",
        &serde_json::to_string(doc).expect("json"),
        &SECRETS,
    );
    assert_states(doc, harness, expect);
}

fn opencode(f: &ScanFixture) {
    f.home(
        ".config/opencode/opencode.jsonc",
        r#"{
  // comments and trailing commas are allowed here
  "$schema": "https://opencode.ai/config.json",
  "mcp": {
    "o-local": {"type": "local", "command": ["fake-mcp", "--stdio"],
                "environment": {"OC_KEY": "sekret-oc-env-2291"}},
    "o-remote": {"type": "remote", "url": "https://oc.example.com/mcp",
                 "headers": {"Authorization": "Bearer sekret-oc-hdr-77d1"}},
    "o-off": {"type": "remote", "url": "https://off.example.com/mcp", "enabled": false},
  },
}"#,
    );
    f.project(
        "opencode.json",
        r#"{"mcp": {"o-local": {"enabled": false}}}"#,
    );
    f.project(
        ".opencode/opencode.json",
        r#"{"mcp": {"servers": {"o-new": {"type": "remote", "url": "https://new.example.com/mcp", "disabled": true},
                                "o-new-on": {"type": "local", "command": ["fake-mcp"]}}}}"#,
    );
}

#[test]
fn given_layered_opencode_files_then_a_later_enabled_false_wins_and_the_file_is_named() {
    let f = ScanFixture::new();
    opencode(&f);
    let doc = f.scan(&OpenCodeConfigScanner);
    check(
        &doc,
        "opencode",
        &[
            ("user", "o-local", off("disabled_in_config")),
            ("user", "o-remote", ON),
            ("user", "o-off", off("disabled_in_config")),
            ("project", "o-new", off("disabled_in_config")),
            ("project", "o-new-on", ON),
        ],
    );
    let o_local = row(&doc, "opencode", "user", "o-local");
    assert_eq!(o_local.transport.to_string(), "stdio");
    assert!(
        o_local
            .summary
            .as_deref()
            .is_some_and(|s| s.contains("$PROJECT/opencode.json")),
        "the override's file is named: {o_local:#?}"
    );
}

#[test]
fn given_opencode_config_variables_then_the_named_file_is_read_and_project_files_are_ignored() {
    let mut f = ScanFixture::new();
    opencode(&f);
    let file = f.root().join("elsewhere/custom.json");
    ScanFixture::write(
        &file,
        r#"{"mcp": {"o-custom": {"type": "remote", "url": "https://custom.example.com/mcp"}}}"#,
    );
    f.var("OPENCODE_CONFIG", file.as_os_str());
    f.var("OPENCODE_DISABLE_PROJECT_CONFIG", "1");
    let doc = f.scan(&OpenCodeConfigScanner);
    let custom = row(&doc, "opencode", "user", "o-custom");
    assert_eq!(state(custom), ON);
    assert_eq!(custom.source, "$OPENCODE_CONFIG");
    // Project files are ignored, so o-local's project override no longer applies.
    assert_eq!(
        state(row(&doc, "opencode", "project", "o-new-on")),
        off("disabled_in_config")
    );
    assert_eq!(state(row(&doc, "opencode", "user", "o-local")), ON);
}

#[test]
fn given_cursor_user_and_project_files_then_disabled_servers_say_so() {
    let f = ScanFixture::new();
    f.home(
        ".cursor/mcp.json",
        r#"{"mcpServers": {"cur-user": {"url": "https://cursor.example.com/mcp",
                                          "headers": {"X-Api-Key": "sekret-cursor-hdr-6c"}}}}"#,
    );
    f.project(
        ".cursor/mcp.json",
        r#"{"mcpServers": {"cur-proj": {"command": "fake-mcp"},
                           "cur-off": {"command": "fake-mcp", "disabled": true}}}"#,
    );
    let doc = f.scan(&CursorConfigScanner);
    check(
        &doc,
        "cursor",
        &[
            ("user", "cur-user", ON),
            ("project", "cur-proj", ON),
            ("project", "cur-off", off("disabled_in_config")),
        ],
    );
    assert_eq!(
        row(&doc, "cursor", "user", "cur-user").diagnostics.headers,
        ["X-Api-Key"]
    );
}

fn gemini(f: &ScanFixture) {
    f.home(
        ".gemini/settings.json",
        r#"{
  "security": {"folderTrust": {"enabled": true}},
  "mcp": {"excluded": ["g-excluded"]},
  "mcpServers": {
    "g-sse": {"url": "https://gem.example.com/sse"},
    "g-http": {"httpUrl": "https://gem.example.com/mcp", "headers": {"Authorization": "Bearer sekret-gem-hdr-90ab"},
               "includeTools": ["lookup"], "excludeTools": ["drop"], "trust": true},
    "g-excluded": {"command": "fake-mcp"}
  }
}"#,
    );
    f.project(
        ".gemini/settings.json",
        r#"{"mcpServers": {"g-proj": {"command": "fake-mcp"}}}"#,
    );
    f.home(
        ".gemini/extensions/ext-tools/gemini-extension.json",
        r#"{"name": "ext-tools", "version": "1.0.0",
            "mcpServers": {"ext-srv": {"command": "${extensionPath}/run", "args": ["--stdio"]}}}"#,
    );
    ScanFixture::executable(&f.home.join(".gemini/extensions/ext-tools/run"));
    f.home(
        ".gemini/extensions/ext-quiet/gemini-extension.json",
        r#"{"name": "ext-quiet", "mcpServers": {"ext-quiet-srv": {"httpUrl": "https://quiet.example.com/mcp"}}}"#,
    );
    f.home(
        ".gemini/extensions/extension-enablement.json",
        &json!({"ext-quiet": {"overrides": [format!("!{}/*", f.project.display())]}}).to_string(),
    );
}

#[test]
fn given_gemini_settings_trust_and_extensions_then_each_server_has_its_precise_state() {
    let f = ScanFixture::new();
    gemini(&f);
    let doc = f.scan(&GeminiConfigScanner);
    check(
        &doc,
        "gemini",
        &[
            ("user", "g-sse", ON),
            ("user", "g-http", ON),
            ("user", "g-excluded", off("excluded")),
            ("project", "g-proj", off("untrusted_folder")),
            ("plugin", "ext-srv", ON),
            ("plugin", "ext-quiet-srv", off("disabled_in_config")),
        ],
    );
    assert_eq!(
        row(&doc, "gemini", "user", "g-sse").transport.to_string(),
        "sse"
    );
    assert_eq!(
        row(&doc, "gemini", "user", "g-http").transport.to_string(),
        "http"
    );
    // The extension placeholder is expanded, not taken for an environment reference.
    let ext = row(&doc, "gemini", "plugin", "ext-srv");
    assert_eq!(ext.diagnostics.command_resolves, Some(true), "{ext:#?}");
    assert!(ext.diagnostics.env.is_empty(), "{ext:#?}");
    assert_eq!(
        ext.source,
        "~/.gemini/extensions/ext-tools/gemini-extension.json"
    );
    let g_http = row(&doc, "gemini", "user", "g-http");
    assert!(
        g_http
            .diagnostics
            .settings
            .contains(&"trust=true".to_owned())
    );
    assert_eq!(
        g_http.diagnostics.include_tools.as_deref(),
        Some(&["lookup".to_owned()][..])
    );
}

#[test]
fn given_a_trusted_real_path_when_the_project_is_reached_through_a_symlink_then_gemini_trusts_it() {
    let f = ScanFixture::new();
    gemini(&f);
    let real = f.project.to_string_lossy().into_owned();
    f.home(
        ".gemini/trustedFolders.json",
        &json!({ real: "TRUST_FOLDER" }).to_string(),
    );
    let link: &Path = &f.root().join("link-to-proj");
    std::os::unix::fs::symlink(&f.project, link).expect("ln");
    let doc = tether_inventory::scan_all(&f.context_for(link), &[&GeminiConfigScanner], &[]);
    assert_eq!(
        state(row(&doc, "gemini", "project", "g-proj")),
        ON,
        "trusted now"
    );
}
