//! The OpenCode scanner against fixture machines in the documented shapes:
//! JSONC and layered files (a later `enabled: false` wins, the newer
//! `mcp.servers` shape, its environment variables); planted secrets throughout.

use tether_passthrough_opencode::config_scan::OpenCodeConfigScanner;
use tether_sdk::scan_fixture::{ON, ScanFixture, assert_scan, off, row, state};

const SECRETS: [&str; 2] = ["sekret-oc-env-2291", "sekret-oc-hdr-77d1"];

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
    assert_scan(
        &doc,
        "opencode",
        &SECRETS,
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

/// Local plugin files are plugin rows: the global and the project's
/// `plugin/` and `plugins/` folders, as the pinned OpenCode loads them
/// (verified by files that record their loading); other files are not.
#[test]
fn local_plugin_files_are_plugin_rows() {
    use tether_core::vocab::{CapabilityKind, StageState};
    let f = ScanFixture::new();
    f.home(
        ".config/opencode/plugin/notify.js",
        "export const N = async () => ({})",
    );
    f.home(
        ".config/opencode/plugins/guard.ts",
        "export const G = async () => ({})",
    );
    f.home(".config/opencode/plugin/README.md", "not a plugin");
    f.project(
        ".opencode/plugin/team.js",
        "export const T = async () => ({})",
    );
    let doc = f.scan(&OpenCodeConfigScanner);
    let mut plugins: Vec<(String, String)> = doc
        .rows
        .iter()
        .filter(|r| r.kind == CapabilityKind::Plugin)
        .map(|r| {
            assert_eq!(r.stages.installed.state, StageState::Yes);
            assert_eq!(r.stages.enabled.state, StageState::Yes);
            (r.scope.to_string(), r.name.clone())
        })
        .collect();
    plugins.sort();
    assert_eq!(
        plugins,
        [
            ("project".to_owned(), "team".to_owned()),
            ("user".to_owned(), "guard".to_owned()),
            ("user".to_owned(), "notify".to_owned()),
        ]
    );
}

/// GIVEN local servers whose `cwd` (1.18.33's McpLocalConfig) is missing,
/// exists, or is relative (resolved from the workspace by OpenCode) WHEN
/// scanned THEN the missing one's row is `cwd_not_found`, as every other
/// harness's is, and the others say where it points.
#[test]
fn a_local_server_s_cwd_is_read() {
    use tether_core::vocab::{CwdClass, ReasonCode};
    let f = ScanFixture::new();
    let there = f.root().join("there");
    std::fs::create_dir_all(&there).expect("dir");
    f.home(
        ".config/opencode/opencode.json",
        &serde_json::json!({"mcp": {
            "gone": {"type": "local", "command": ["sh"], "cwd": f.root().join("no/such/dir")},
            "there": {"type": "local", "command": ["sh"], "cwd": there},
            "relative": {"type": "local", "command": ["sh"], "cwd": "sub"},
        }})
        .to_string(),
    );
    let doc = f.scan(&OpenCodeConfigScanner);
    let gone = row(&doc, "opencode", "user", "gone");
    assert_eq!(gone.diagnostics.cwd, Some(CwdClass::Missing), "{gone:#?}");
    assert_eq!(gone.reason_code, Some(ReasonCode::CwdNotFound), "{gone:#?}");
    let relative = row(&doc, "opencode", "user", "relative");
    assert_eq!(relative.diagnostics.cwd, Some(CwdClass::Relative));
    let there = row(&doc, "opencode", "user", "there");
    assert!(
        !matches!(
            there.diagnostics.cwd,
            None | Some(CwdClass::Missing | CwdClass::Unset)
        ),
        "{there:#?}"
    );
    for r in [relative, there] {
        assert_ne!(r.reason_code, Some(ReasonCode::CwdNotFound), "{r:#?}");
    }
}
