//! The Cursor scanner against fixture machines: user and project files,
//! `disabled`; planted secrets throughout.

use tether_passthrough_cursor::config_scan::CursorConfigScanner;
use tether_sdk::scan_fixture::{ON, ScanFixture, assert_scan, off, row};

const SECRETS: [&str; 1] = ["sekret-cursor-hdr-6c"];

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
    assert_scan(
        &doc,
        "cursor",
        &SECRETS,
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
