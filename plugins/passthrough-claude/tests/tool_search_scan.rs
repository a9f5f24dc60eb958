//! The scanner reads the switches of Claude Code's tool search
//! (`ENABLE_TOOL_SEARCH`, the model URL, …) from the process's environment
//! and every settings file's `env` block, in Claude Code's order, into each
//! server's settings as their meaning only (`env:NAME=MEANING`); the last
//! mile's `Rules::for_entry` turns them into the prediction. Planted
//! secrets in the model URL never reach the document.

use serde_json::json;
use tether_core::inventory::InventoryDocument;
use tether_core::last_mile::LastMile;
use tether_passthrough_claude::PassthroughClaude;
use tether_passthrough_claude::config_scan::ClaudeConfigScanner;
use tether_sdk::scan_fixture::ScanFixture;

const SECRETS: [&str; 3] = ["sekret-url-7a1c", "sekret-q-90be", "sekret-set-4d2f"];

/// A user server `s` in `~/.claude.json` (with `extra` at its top level).
fn fixture(extra: serde_json::Value) -> ScanFixture {
    let f = ScanFixture::new();
    let mut state = json!({"mcpServers": {"s": {"command": "fake-mcp"}}});
    if let (Some(state), Some(extra)) = (state.as_object_mut(), extra.as_object()) {
        state.extend(extra.clone());
    }
    f.home(".claude.json", &state.to_string());
    f
}

fn settings(doc: &InventoryDocument) -> Vec<String> {
    tether_sdk::scan_fixture::row(doc, "claude", "user", "s")
        .diagnostics
        .settings
        .clone()
}

/// What the plugin's rules at `version` predict for the row's settings.
fn defers(doc: &InventoryDocument, version: Option<&str>) -> Option<bool> {
    PassthroughClaude
        .rules(version)
        .expect("rules")
        .for_entry(&settings(doc))
        .defers
}

#[test]
fn nothing_set_defers_on_both_releases_and_the_switch_is_written_unset() {
    let doc = fixture(json!({})).scan(&ClaudeConfigScanner);
    assert_eq!(settings(&doc), ["env:ENABLE_TOOL_SEARCH="]);
    assert_eq!(defers(&doc, None), Some(true));
    assert_eq!(defers(&doc, Some("2.1.332")), Some(true));
    assert_eq!(defers(&doc, Some("2.1.197")), Some(true));
    // A release between the two read is not known.
    assert_eq!(defers(&doc, Some("2.1.250")), None);
}

#[test]
fn a_proxy_url_turns_the_pinned_release_s_search_off_and_keeps_no_secret() {
    let mut f = fixture(json!({}));
    f.var(
        "ANTHROPIC_BASE_URL",
        "https://me:sekret-url-7a1c@proxy.example.com/v1?key=sekret-q-90be",
    );
    let doc = f.scan(&ClaudeConfigScanner);
    let text = serde_json::to_string(&doc).expect("json");
    ScanFixture::assert_no_secret("the claude inventory", &text, &SECRETS);
    assert!(
        settings(&doc).contains(&"env:ANTHROPIC_BASE_URL=other".to_owned()),
        "{:?}",
        settings(&doc)
    );
    assert_eq!(defers(&doc, Some("2.1.197")), Some(false));
    assert_eq!(defers(&doc, Some("2.1.332")), Some(true));
    // The switch set in user settings turns it on again for 2.1.197.
    f.home(
        ".claude/settings.json",
        &json!({"env": {"ENABLE_TOOL_SEARCH": "true"}}).to_string(),
    );
    let doc = f.scan(&ClaudeConfigScanner);
    assert_eq!(defers(&doc, Some("2.1.197")), Some(true));
}

#[test]
fn settings_files_win_over_the_process_in_claude_code_s_order() {
    let mut f = fixture(json!({"env": {"ENABLE_TOOL_SEARCH": "auto:30"}}));
    f.var("ENABLE_TOOL_SEARCH", "true");
    // `~/.claude.json`'s `env` over the process: auto, not known.
    let doc = f.scan(&ClaudeConfigScanner);
    assert!(settings(&doc).contains(&"env:ENABLE_TOOL_SEARCH=auto:30".to_owned()));
    assert_eq!(defers(&doc, None), None);
    let rules = PassthroughClaude
        .rules(None)
        .expect("rules")
        .for_entry(&settings(&doc));
    assert!(
        rules
            .deferral_rule
            .is_some_and(|r| r.contains("ENABLE_TOOL_SEARCH=auto")),
        "{:?}",
        rules.deferral_rule
    );
    // User settings over that: off.
    f.home(
        ".claude/settings.json",
        &json!({"env": {"ENABLE_TOOL_SEARCH": false}}).to_string(),
    );
    assert_eq!(defers(&f.scan(&ClaudeConfigScanner), None), Some(false));
    // Local project settings over user settings: on.
    f.project(
        ".claude/settings.local.json",
        &json!({"env": {"ENABLE_TOOL_SEARCH": "1"}}).to_string(),
    );
    assert_eq!(defers(&f.scan(&ClaudeConfigScanner), None), Some(true));
    // Managed settings last: the experimental betas off, so the search.
    f.system(
        "/etc/claude-code/managed-settings.json",
        &json!({"env": {"CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS": "true"}}).to_string(),
    );
    assert_eq!(defers(&f.scan(&ClaudeConfigScanner), None), Some(false));
    // A value that is no switch is never written as itself.
    f.project(
        ".claude/settings.json",
        &json!({"env": {"ENABLE_TOOL_SEARCH": "sekret-set-4d2f"}}).to_string(),
    );
    let doc = f.scan(&ClaudeConfigScanner);
    ScanFixture::assert_no_secret(
        "the claude inventory",
        &serde_json::to_string(&doc).expect("json"),
        &SECRETS,
    );
}

#[test]
fn an_always_load_entry_is_sent_up_front_whatever_the_switch() {
    let mut f = ScanFixture::new();
    f.home(
        ".claude.json",
        &json!({"mcpServers": {"s": {"command": "fake-mcp", "alwaysLoad": true}}}).to_string(),
    );
    f.var("ENABLE_TOOL_SEARCH", "auto");
    let doc = f.scan(&ClaudeConfigScanner);
    assert_eq!(defers(&doc, None), Some(false));
    assert_eq!(defers(&doc, Some("2.1.197")), Some(false));
}
