//! The Copilot CLI scanner against fixture machines: the user file (under
//! `$COPILOT_HOME` when set), the workspace's `.mcp.json` and
//! `.github/mcp.json`, `disabledMcpServers`, and `tools` filters; planted
//! secrets throughout.

use tether_passthrough_copilot::config_scan::CopilotConfigScanner;
use tether_sdk::scan_fixture::{ON, ScanFixture, assert_scan, assert_states, off, row, state};

const SECRETS: [&str; 2] = ["sekret-cop-env-41aa", "sekret-cop-hdr-93bc"];

fn copilot(f: &ScanFixture, home: &str) {
    f.home(
        &format!("{home}/mcp-config.json"),
        r#"{"mcpServers": {
            "cop-local": {"type": "local", "command": "fake-mcp", "args": ["--stdio"],
                          "env": {"API_KEY": "sekret-cop-env-41aa"}, "tools": ["*"]},
            "cop-http": {"type": "http", "url": "https://cop.example.com/mcp",
                         "headers": {"Authorization": "Bearer sekret-cop-hdr-93bc"},
                         "tools": ["search", "fetch"]},
            "cop-off": {"type": "stdio", "command": "fake-mcp"}}}"#,
    );
    f.home(
        &format!("{home}/settings.json"),
        r#"{"disabledMcpServers": ["cop-off"]}"#,
    );
    f.project(
        ".mcp.json",
        r#"{"mcpServers": {"cop-ws": {"type": "sse", "url": "https://cop.example.com/sse"}}}"#,
    );
    f.project(
        ".github/mcp.json",
        r#"{"mcpServers": {"cop-gh": {"command": "fake-mcp"}}}"#,
    );
}

#[test]
fn given_user_and_workspace_files_then_each_server_has_its_state_and_filter() {
    let f = ScanFixture::new();
    copilot(&f, ".copilot");
    let untrusted = f.scan(&CopilotConfigScanner);
    assert_states(
        &untrusted,
        "copilot",
        &[
            ("user", "cop-local", ON),
            ("user", "cop-http", ON),
            ("user", "cop-off", off("disabled_in_config")),
            ("project", "cop-ws", off("untrusted_folder")),
            // Copilot reads `.github/mcp.json` only without a `.mcp.json`.
            ("project", "cop-gh", off("file_shadowed")),
        ],
    );
    // Trusting a folder above the project trusts the project.
    let above = f.root().display().to_string();
    f.home(
        ".copilot/config.json",
        &format!(r#"{{"trusted_folders": ["{above}"]}}"#),
    );
    let doc = f.scan(&CopilotConfigScanner);
    assert_scan(
        &doc,
        "copilot",
        &SECRETS,
        &[
            ("user", "cop-local", ON),
            ("user", "cop-http", ON),
            ("user", "cop-off", off("disabled_in_config")),
            ("project", "cop-ws", ON),
            ("project", "cop-gh", off("file_shadowed")),
        ],
    );
    // 1.0.102 rewrites the key as `trustedFolders`, in a file with comments.
    f.home(
        ".copilot/config.json",
        &format!("// managed automatically\n{{\"trustedFolders\": [\"{above}\"]}}"),
    );
    let rewritten = f.scan(&CopilotConfigScanner);
    assert_eq!(
        state(row(&rewritten, "copilot", "project", "cop-ws")),
        ON,
        "cop-ws"
    );
    // Without `.mcp.json`, `.github/mcp.json` is the workspace's file.
    std::fs::remove_file(f.project.join(".mcp.json")).expect("remove .mcp.json");
    let github_only = f.scan(&CopilotConfigScanner);
    assert_eq!(
        state(row(&github_only, "copilot", "project", "cop-gh")),
        ON,
        "cop-gh"
    );
    assert!(
        github_only.rows.iter().all(|r| r.name != "cop-ws"),
        "cop-ws left with its file"
    );
    let http = row(&doc, "copilot", "user", "cop-http");
    assert_eq!(http.diagnostics.headers, ["Authorization"]);
    assert_eq!(
        http.diagnostics.include_tools.as_deref(),
        Some(&["search".to_owned(), "fetch".to_owned()][..])
    );
    assert_eq!(
        row(&doc, "copilot", "user", "cop-local")
            .diagnostics
            .include_tools,
        None
    );
}

#[test]
fn given_copilot_home_then_the_user_file_is_read_there() {
    let mut f = ScanFixture::new();
    copilot(&f, "elsewhere/copilot");
    let home = f.root().join("home/elsewhere/copilot");
    f.var("COPILOT_HOME", home);
    let doc = f.scan(&CopilotConfigScanner);
    assert!(
        doc.rows
            .iter()
            .any(|r| r.name == "cop-local" && r.source.starts_with("$COPILOT_HOME")),
        "{:#?}",
        doc.rows
    );
}

/// GIVEN a `settings.json` that does not parse WHEN the scan runs THEN it is
/// one error (servers, hooks and skills all read it; it is read once), and
/// the user's servers still count.
#[test]
fn given_a_broken_settings_file_then_it_is_one_error() {
    let f = ScanFixture::new();
    copilot(&f, ".copilot");
    f.home(".copilot/settings.json", r#"{"disabledMcpServers": ["#);
    let doc = f.scan(&CopilotConfigScanner);
    let errors: Vec<_> = doc
        .errors
        .iter()
        .filter(|e| e.source.ends_with("settings.json"))
        .collect();
    assert_eq!(errors.len(), 1, "{:#?}", doc.errors);
    assert!(
        doc.rows.iter().any(|r| r.name == "cop-local"),
        "{:#?}",
        doc.rows
    );
}
