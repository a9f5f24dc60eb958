//! Claude Code's call policy in the inventory: permission rules and modes
//! from every settings file (managed ones from the folder
//! `CLAUDE_CODE_MANAGED_SETTINGS_PATH` names, drop-ins included), hook
//! matchers that never match, and `claude mcp list`'s differing view, on
//! settings shaped as Claude Code writes them, with secrets planted in rules
//! and in the managed folder's path.

use tether_core::inventory::{CallVerdict, InventoryDocument, InventoryRow};
use tether_core::model::ProvenanceCode;
use tether_core::vocab::{CapabilityKind, ReasonCode};
use tether_passthrough_claude::config_scan::ClaudeConfigScanner;
use tether_sdk::scan_fixture::ScanFixture;

const SECRETS: [&str; 2] = [
    "sk-ant-api03-plantedSECRETvalue0000",
    "ghp_plantedPATHsecret1234567890abcd",
];

fn server<'a>(doc: &'a InventoryDocument, name: &str) -> &'a InventoryRow {
    tether_sdk::scan_fixture::row(doc, "claude", "user", name)
}

fn fixture() -> ScanFixture {
    let mut f = ScanFixture::new();
    f.home(
        ".claude.json",
        r#"{"mcpServers": {
            "github": {"type": "stdio", "command": "fake-mcp", "args": []},
            "db": {"command": "fake-mcp"},
            "web search": {"type": "http", "url": "https://search.example.com/mcp"},
            "blocked": {"command": "fake-mcp"},
            "plain": {"command": "fake-mcp"}
        }}"#,
    );
    f.home(
        ".claude/settings.json",
        r#"{
          "permissions": {
            "allow": ["mcp__github", "Bash(npm test)", "mcp__web_search__*"],
            "ask": ["mcp__github__create_pull_request"],
            "deny": ["mcp__github__delete_repo", "mcp__db__run(sk-ant-api03-plantedSECRETvalue0000)"]
          },
          "deniedMcpServers": [{"serverName": "blocked"}],
          "hooks": {
            "PreToolUse": [
              {"matcher": "mcp__github", "hooks": [{"type": "command", "command": "true"}]},
              {"matcher": "mcp__github__.*", "hooks": [{"type": "command", "command": "true"}]}
            ]
          }
        }"#,
    );
    // The managed folder, named by the variable, under a path holding a secret.
    let managed = f.root().join("ghp_plantedPATHsecret1234567890abcd/policy");
    ScanFixture::write(
        &managed.join("managed-settings.json"),
        r#"{"permissions": {"deny": ["mcp__db__*"]}}"#,
    );
    ScanFixture::write(
        &managed.join("managed-settings.d/10-mode.json"),
        r#"{"permissions": {"defaultMode": "dontAsk"}}"#,
    );
    f.var(
        "CLAUDE_CODE_MANAGED_SETTINGS_PATH",
        managed.into_os_string(),
    );
    f
}

#[test]
fn rules_modes_and_managed_settings_predict_each_server_and_tool() {
    let f = fixture();
    let doc = f.scan(&ClaudeConfigScanner);
    let json = serde_json::to_string(&doc).expect("json");
    ScanFixture::assert_no_secret("the claude call policies", &json, &SECRETS);

    // A server-wide allow rule, with a tool denied and a tool asked.
    let github = server(&doc, "github")
        .call_policy
        .clone()
        .expect("a policy");
    assert_eq!(github.verdict, CallVerdict::Allowed);
    assert_eq!(github.provenance, ProvenanceCode::CurrentConfig);
    assert_eq!(github.source.as_deref(), Some("~/.claude/settings.json"));
    assert_eq!(github.for_tool("delete_repo").verdict, CallVerdict::Denied);
    assert_eq!(
        github.for_tool("delete_repo").reason_code,
        Some(ReasonCode::PermissionDenied)
    );
    let pr = github.for_tool("create_pull_request");
    assert_eq!(
        (pr.verdict, pr.headless_refuses),
        (CallVerdict::NeedsApproval, Some(true))
    );

    // Managed policy denies db, and names the file (never the path's secret).
    let db = server(&doc, "db").call_policy.clone().expect("a policy");
    assert_eq!(db.verdict, CallVerdict::Denied);
    assert_eq!(db.reason_code, Some(ReasonCode::DeniedByPolicy));
    assert_eq!(
        db.source.as_deref(),
        Some("$CLAUDE_CODE_MANAGED_SETTINGS_PATH/managed-settings.json")
    );

    // A name with a space is `web_search` in tool names.
    let web = server(&doc, "web search")
        .call_policy
        .clone()
        .expect("a policy");
    assert_eq!(web.verdict, CallVerdict::Allowed);

    // No rule, and the drop-in's dontAsk mode: refused, not asked.
    let plain = server(&doc, "plain").call_policy.clone().expect("a policy");
    assert_eq!(plain.verdict, CallVerdict::Denied);
    assert_eq!(
        plain.source.as_deref(),
        Some("$CLAUDE_CODE_MANAGED_SETTINGS_PATH/managed-settings.d/10-mode.json")
    );

    // The user's own deniedMcpServers holds the server back, and the row
    // says claude mcp list shows it anyway.
    let blocked = server(&doc, "blocked");
    assert_eq!(blocked.reason_code, Some(ReasonCode::DeniedByPolicy));
    assert!(
        blocked
            .notes
            .iter()
            .any(|n| n.text.contains("anthropics/claude-code#95020")
                && n.provenance == ProvenanceCode::DocumentedRule),
        "{:?}",
        blocked.notes
    );
    assert!(server(&doc, "plain").notes.is_empty());
}

#[test]
fn a_bare_server_hook_matcher_gets_a_documented_rule_note() {
    let doc = fixture().scan(&ClaudeConfigScanner);
    let hooks: Vec<&InventoryRow> = doc
        .rows
        .iter()
        .filter(|r| r.kind == CapabilityKind::Hook)
        .collect();
    let bare = hooks
        .iter()
        .find(|r| r.name == "PreToolUse:mcp__github")
        .expect("the bare matcher's hook");
    assert_eq!(bare.notes.len(), 1, "{:?}", bare.notes);
    assert_eq!(bare.notes[0].provenance, ProvenanceCode::DocumentedRule);
    assert!(bare.notes[0].text.contains("mcp__github__.*"));
    let regex = hooks
        .iter()
        .find(|r| r.name == "PreToolUse:mcp__github__.*")
        .expect("the regex matcher's hook");
    assert!(regex.notes.is_empty());
}

#[test]
fn without_the_variable_managed_settings_come_from_etc() {
    let f = ScanFixture::new();
    f.home(
        ".claude.json",
        r#"{"mcpServers": {"db": {"command": "fake-mcp"}}}"#,
    );
    f.system(
        "/etc/claude-code/managed-settings.json",
        r#"{"allowManagedPermissionRulesOnly": true, "permissions": {"ask": ["mcp__db"]}}"#,
    );
    f.home(
        ".claude/settings.json",
        r#"{"permissions": {"allow": ["mcp__db"], "defaultMode": "bypassPermissions"}}"#,
    );
    let doc = f.scan(&ClaudeConfigScanner);
    let db = server(&doc, "db").call_policy.clone().expect("a policy");
    assert_eq!(db.verdict, CallVerdict::NeedsApproval);
    assert_eq!(
        db.source.as_deref(),
        Some("/etc/claude-code/managed-settings.json")
    );
}
