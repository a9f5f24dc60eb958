//! The Gemini CLI scanner against fixture machines: the exclude list, folder
//! trust, extensions and their per-folder enablement; planted secrets throughout.

use std::path::Path;

use serde_json::json;
use tether_passthrough_gemini::config_scan::{GEMINI, GeminiConfigScanner, QWEN, qwen_entry_hash};
use tether_sdk::scan_fixture::{ON, ScanFixture, assert_scan, off, row, state};

/// Qwen's hash of an entry, as its approvals bind it.
fn hash(entry: serde_json::Value) -> String {
    qwen_entry_hash(entry.as_object().expect("an entry object"))
}

const SECRETS: [&str; 4] = [
    "sekret-oc-env-2291",
    "sekret-oc-hdr-77d1",
    "sekret-cursor-hdr-6c",
    "sekret-gem-hdr-90ab",
];

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
    let doc = f.scan(&GeminiConfigScanner(GEMINI));
    assert_scan(
        &doc,
        "gemini",
        &SECRETS,
        &[
            // Gemini 0.61.0: an untrusted folder disables every MCP server.
            ("user", "g-sse", off("untrusted_folder")),
            ("user", "g-http", off("untrusted_folder")),
            ("user", "g-excluded", off("untrusted_folder")),
            ("project", "g-proj", off("untrusted_folder")),
            ("plugin", "ext-srv", off("untrusted_folder")),
            ("plugin", "ext-quiet-srv", off("disabled_in_config")),
        ],
    );
    let why = row(&doc, "gemini", "user", "g-sse")
        .summary
        .clone()
        .unwrap_or_default();
    assert!(
        why.contains("folder trust is on in ~/.gemini/settings.json")
            && why.contains("does not trust the project")
            && why.contains("the user's too"),
        "{why}"
    );
    // Trusted by trustedFolders.json: each server as its settings say.
    f.home(
        ".gemini/trustedFolders.json",
        &json!({ f.project.display().to_string(): "TRUST_FOLDER" }).to_string(),
    );
    let doc = f.scan(&GeminiConfigScanner(GEMINI));
    assert_scan(
        &doc,
        "gemini",
        &SECRETS,
        &[
            ("user", "g-sse", ON),
            ("user", "g-http", ON),
            ("user", "g-excluded", off("excluded")),
            ("project", "g-proj", ON),
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
    let doc =
        tether_inventory::scan_all(&f.context_for(link), &[&GeminiConfigScanner(GEMINI)], &[]);
    assert_eq!(
        state(row(&doc, "gemini", "project", "g-proj")),
        ON,
        "trusted now"
    );
}

#[test]
fn given_qwen_settings_and_extensions_then_qwen_reads_its_own_directory() {
    let f = ScanFixture::new();
    f.home(
        ".qwen/settings.json",
        r#"{"mcpServers": {"q-user": {"httpUrl": "https://q.example.com/mcp",
                                      "headers": {"X-Key": "sekret-gem-hdr-90ab"}}},
            "mcp": {"excluded": ["q-proj-off"]}}"#,
    );
    f.project(
        ".qwen/settings.json",
        r#"{"mcpServers": {"q-proj": {"command": "fake-mcp"}, "q-proj-off": {"command": "fake-mcp"}}}"#,
    );
    // Gemini's own files are not Qwen's.
    f.home(
        ".gemini/settings.json",
        r#"{"mcpServers": {"g-only": {"command": "fake-mcp"}}}"#,
    );
    // Qwen 0.24: a project's server runs once approved for the folder.
    f.home(
        ".qwen/mcpApprovals.json",
        &json!({f.project.display().to_string(): {
            "q-proj": {"hash": hash(json!({"command": "fake-mcp"})), "status": "approved"},
            "q-proj-off": {"hash": hash(json!({"command": "fake-mcp"})), "status": "approved"}
        }})
        .to_string(),
    );
    // An extension with both manifests is read once, from qwen-extension.json.
    f.home(
        ".qwen/extensions/ext/qwen-extension.json",
        r#"{"name": "ext", "mcpServers": {"q-ext": {"command": "fake-mcp"}}}"#,
    );
    f.home(
        ".qwen/extensions/ext/gemini-extension.json",
        r#"{"name": "ext", "mcpServers": {"q-ext-old": {"command": "fake-mcp"}}}"#,
    );
    let doc = f.scan(&GeminiConfigScanner(QWEN));
    assert_scan(
        &doc,
        "qwen",
        &SECRETS,
        &[
            ("user", "q-user", ON),
            ("project", "q-proj", ON),
            ("project", "q-proj-off", off("excluded")),
            ("plugin", "q-ext", ON),
        ],
    );
    assert!(
        doc.rows
            .iter()
            .all(|r| r.name != "g-only" && r.name != "q-ext-old")
    );
}

/// Settings hooks, as the pinned Gemini CLI runs them: on unless the
/// strongest settings file says `hooksConfig.enabled: false`; a relative
/// script resolves against the workspace; planted secrets never kept.
#[test]
fn settings_hooks_are_rows_on_unless_hooks_config_turns_them_off() {
    use tether_core::vocab::{CapabilityKind, ReasonCode, ResolvesAgainst, StageState};
    let mut f = ScanFixture::new();
    f.var("PATH", f.bin.display().to_string());
    let hooks = json!({"hooks": {
        "BeforeTool": [{"matcher": "run_shell_command", "hooks": [
            {"type": "command", "command": "fake-mcp --key sekret-gem-hook-31"},
            {"type": "command", "command": "scripts/check.sh"}]}]}});
    f.home(".gemini/settings.json", &hooks.to_string());
    let find = |doc: &tether_core::inventory::InventoryDocument, name: &str| {
        doc.rows
            .iter()
            .find(|r| r.kind == CapabilityKind::Hook && r.name == name)
            .cloned()
            .unwrap_or_else(|| panic!("no hook {name}: {:#?}", doc.rows))
    };
    let doc = f.scan(&GeminiConfigScanner(GEMINI));
    ScanFixture::assert_no_secret(
        "the inventory",
        &serde_json::to_string(&doc).expect("json"),
        &["sekret-gem-hook-31"],
    );
    let plain = find(&doc, "BeforeTool:run_shell_command");
    assert_eq!(plain.stages.enabled.state, StageState::Yes);
    assert_eq!(plain.reason_code, None, "{plain:#?}");
    let relative = find(&doc, "BeforeTool:run_shell_command#2");
    assert_eq!(relative.reason_code, Some(ReasonCode::RelativeCommand));
    assert_eq!(
        relative.diagnostics.resolves_against,
        Some(ResolvesAgainst::WorkspaceCwd)
    );

    let mut off = hooks.clone();
    off["hooksConfig"] = json!({"enabled": false});
    f.home(".gemini/settings.json", &off.to_string());
    let doc = f.scan(&GeminiConfigScanner(GEMINI));
    let plain = find(&doc, "BeforeTool:run_shell_command");
    assert_eq!(plain.stages.enabled.state, StageState::No);
    assert_eq!(plain.reason_code, Some(ReasonCode::DisabledInConfig));
    assert!(
        plain
            .summary
            .as_deref()
            .is_some_and(|s| s.contains("~/.gemini/settings.json"))
    );
}

/// An extension's own hooks (`hooks/hooks.json`): rows linked to the
/// extension, resolving against its directory with `${extensionPath}`
/// expanded as Gemini does; a script that is not there is
/// `command_not_found`; off with the extension, and with
/// `hooksConfig.enabled: false`.
#[test]
fn extension_hooks_are_rows_of_their_extension() {
    use tether_core::vocab::{CapabilityKind, ReasonCode, ResolvesAgainst, StageState};
    let mut f = ScanFixture::new();
    f.var("PATH", f.bin.display().to_string());
    f.home(
        ".gemini/extensions/guard/gemini-extension.json",
        r#"{"name": "guard", "version": "1.0.0"}"#,
    );
    f.home(
        ".gemini/extensions/guard/hooks/hooks.json",
        &json!({"hooks": {"BeforeTool": [{"matcher": "*", "hooks": [
            {"type": "command", "command": "${extensionPath}/scripts/check.sh --token sekret-gem-exthook-5"},
            {"type": "command", "command": "${extensionPath}/scripts/missing.sh"}]}]}})
        .to_string(),
    );
    ScanFixture::executable(&f.home.join(".gemini/extensions/guard/scripts/check.sh"));
    let doc = f.scan(&GeminiConfigScanner(GEMINI));
    ScanFixture::assert_no_secret(
        "the inventory",
        &serde_json::to_string(&doc).expect("json"),
        &["sekret-gem-exthook-5"],
    );
    let find = |doc: &tether_core::inventory::InventoryDocument, kind, name: &str| {
        doc.rows
            .iter()
            .find(|r| r.kind == kind && r.name == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {name}: {:#?}", doc.rows))
    };
    let good = find(&doc, CapabilityKind::Hook, "guard:BeforeTool");
    assert_eq!(good.stages.enabled.state, StageState::Yes);
    assert_eq!(good.reason_code, None, "{good:#?}");
    // `${extensionPath}` expanded: an absolute path into the extension.
    assert_eq!(
        good.diagnostics.resolves_against,
        Some(ResolvesAgainst::Absolute)
    );
    let missing = find(&doc, CapabilityKind::Hook, "guard:BeforeTool#2");
    assert_eq!(
        missing.reason_code,
        Some(ReasonCode::CommandNotFound),
        "{missing:#?}"
    );
    let ext = find(&doc, CapabilityKind::Plugin, "guard");
    assert!(
        ext.links
            .iter()
            .any(|l| l.kind == CapabilityKind::Hook && l.name == "guard:BeforeTool"),
        "{ext:#?}"
    );
    // Hooks off in the settings: the extension's too.
    f.home(
        ".gemini/settings.json",
        r#"{"hooksConfig": {"enabled": false}}"#,
    );
    let doc = f.scan(&GeminiConfigScanner(GEMINI));
    let good = find(&doc, CapabilityKind::Hook, "guard:BeforeTool");
    assert_eq!(good.stages.enabled.state, StageState::No);
    assert_eq!(good.reason_code, Some(ReasonCode::DisabledInConfig));
}

/// Gemini CLI 0.61.0 decides trust as its own code does: the environment
/// first (`GEMINI_CLI_TRUST_WORKSPACE`, `GEMINI_RESTRICTED_MODE`), then
/// folder trust (on by default), then `trustedFolders.json` (a folder no
/// rule names is untrusted); each row says which decided. Qwen Code's
/// folder trust is off by default and drops only the project's settings.
#[test]
fn gemini_folder_trust_is_read_the_way_gemini_reads_it() {
    let settings = r#"{"mcpServers": {"u": {"command": "fake-mcp"}}}"#;
    let summary = |f: &ScanFixture| {
        let doc = f.scan(&GeminiConfigScanner(GEMINI));
        let r = row(&doc, "gemini", "user", "u");
        (state(r), r.summary.clone().unwrap_or_default())
    };
    // No setting at all: trust is on by default, and nothing trusts the folder.
    let mut f = ScanFixture::new();
    f.home(".gemini/settings.json", settings);
    let (st, why) = summary(&f);
    assert_eq!(st, off("untrusted_folder"));
    assert!(why.contains("folder trust is on by default"), "{why}");
    // The environment trusts it, over every file.
    f.var("GEMINI_CLI_TRUST_WORKSPACE", "true");
    assert_eq!(summary(&f).0, ON);
    // ...or distrusts it, even where a rule trusts it.
    f.home(
        ".gemini/trustedFolders.json",
        &json!({ f.project.display().to_string(): "TRUST_FOLDER" }).to_string(),
    );
    f.var("GEMINI_CLI_TRUST_WORKSPACE", "false");
    let (st, why) = summary(&f);
    assert_eq!(st, off("untrusted_folder"));
    assert!(why.starts_with("GEMINI_CLI_TRUST_WORKSPACE=false"), "{why}");
    f.var("GEMINI_CLI_TRUST_WORKSPACE", "");
    assert_eq!(summary(&f).0, ON, "the rule trusts it");
    f.var("GEMINI_RESTRICTED_MODE", "true");
    assert!(summary(&f).1.starts_with("GEMINI_RESTRICTED_MODE=true"));
    // Folder trust switched off in the user's settings: everything is trusted.
    let f = ScanFixture::new();
    f.home(
        ".gemini/settings.json",
        r#"{"security": {"folderTrust": {"enabled": false}}, "mcpServers": {"u": {"command": "fake-mcp"}}}"#,
    );
    assert_eq!(summary(&f).0, ON);
    // Qwen: off by default; on, it drops the project's settings only.
    let f = ScanFixture::new();
    f.home(
        ".qwen/settings.json",
        r#"{"mcpServers": {"q": {"command": "fake-mcp"}}}"#,
    );
    f.project(
        ".qwen/settings.json",
        r#"{"mcpServers": {"p": {"command": "fake-mcp"}}}"#,
    );
    let doc = f.scan(&GeminiConfigScanner(QWEN));
    assert_eq!(state(row(&doc, "qwen", "user", "q")), ON);
    // 0.24: the project's server waits for an approval...
    assert_eq!(
        state(row(&doc, "qwen", "project", "p")),
        off("not_approved")
    );
    let approvals = |status: &str| {
        json!({f.project.display().to_string(): {"p": {"hash": hash(json!({"command": "fake-mcp"})), "status": status}}}).to_string()
    };
    f.home(".qwen/mcpApprovals.json", &approvals("rejected"));
    let doc = f.scan(&GeminiConfigScanner(QWEN));
    assert_eq!(
        state(row(&doc, "qwen", "project", "p")),
        off("disabled_in_config")
    );
    // ...and runs once approved.
    f.home(".qwen/mcpApprovals.json", &approvals("approved"));
    let doc = f.scan(&GeminiConfigScanner(QWEN));
    assert_eq!(state(row(&doc, "qwen", "project", "p")), ON);
    f.home(
        ".qwen/settings.json",
        r#"{"security": {"folderTrust": {"enabled": true}}, "mcpServers": {"q": {"command": "fake-mcp"}}}"#,
    );
    let doc = f.scan(&GeminiConfigScanner(QWEN));
    assert_eq!(state(row(&doc, "qwen", "user", "q")), ON);
    assert_eq!(
        state(row(&doc, "qwen", "project", "p")),
        off("untrusted_folder")
    );
}

/// Qwen Code 0.24's `hashMcpServerConfig`, against hashes its own algorithm
/// made (node 22: `JSON.stringify` with sorted keys, then SHA-256).
#[test]
fn the_approval_hash_is_qwen_s_own() {
    assert_eq!(
        hash(json!({"command": "/bin/true"})),
        "9bb4d8507dc4e5a0523c6fa8d9e88d3bd45694660d4ad1b9e5b3b7f0e47e9cbc"
    );
    let entry: serde_json::Value = serde_json::from_str(
        r#"{"command":"npx","args":["-y","srv","ünï \"q\"\n\u0001"],"env":{"Z":"1","A":"2","a":"3"},"timeout":30000,"ratio":2.0,"trust":false,"description":"cosmetic","scope":"workspace","includeTools":[{"b":1,"a":2.5}]}"#,
    )
    .expect("entry");
    assert_eq!(
        hash(entry),
        "d3febb998af663521a22eccb7fd024064b45310b4f051b0d2d2504ac5d03deb5"
    );
}

/// GIVEN Qwen 0.24's project `.mcp.json` and approvals bound to each
/// entry's hash WHEN the entry changes after its approval THEN it waits
/// again; `.mcp.json` is read in an untrusted folder too (only approvals
/// gate it), and `QWEN_CODE_MCP_APPROVALS_PATH` names another file.
#[test]
fn qwen_reads_the_project_mcp_json_and_binds_approvals_to_the_entry() {
    let mut f = ScanFixture::new();
    f.home(
        ".qwen/settings.json",
        r#"{"security": {"folderTrust": {"enabled": true}}, "mcpServers": {"m-srv": {"command": "/bin/false"}}}"#,
    );
    f.project(
        ".mcp.json",
        r#"{"mcpServers": {"m-srv": {"command": "/bin/true"},
                           "m-http": {"type": "http", "url": "http://127.0.0.1:1/mcp"},
                           "m-new": {"command": "/bin/true"}}}"#,
    );
    let project = f.project.display().to_string();
    let approved = json!({&project: {
        // Approved as it was: `type` dropped, an http `url` held as httpUrl.
        "m-http": {"hash": hash(json!({"httpUrl": "http://127.0.0.1:1/mcp"})), "status": "approved"},
        // Approved before its `args` were added.
        "m-srv": {"hash": hash(json!({"command": "/bin/true", "args": ["old"]})), "status": "approved"}
    }})
    .to_string();
    f.home(".qwen/mcpApprovals.json", &approved);
    let doc = f.scan(&GeminiConfigScanner(QWEN));
    assert_eq!(state(row(&doc, "qwen", "project", "m-http")), ON);
    let srv = row(&doc, "qwen", "project", "m-srv");
    assert_eq!(state(srv), off("not_approved"));
    assert!(
        srv.summary
            .as_deref()
            .unwrap_or("")
            .contains("changed since"),
        "{:?}",
        srv.summary
    );
    assert!(
        row(&doc, "qwen", "project", "m-new")
            .summary
            .as_deref()
            .unwrap_or("")
            .contains("no decision"),
    );
    // The user's server of the same name is still a row of its own.
    assert_eq!(state(row(&doc, "qwen", "user", "m-srv")), ON);
    // Another approvals file, named by the variable.
    let elsewhere = f.root().join("approvals.json");
    std::fs::write(&elsewhere, "{}").expect("write");
    f.var(
        "QWEN_CODE_MCP_APPROVALS_PATH",
        elsewhere.display().to_string(),
    );
    let doc = f.scan(&GeminiConfigScanner(QWEN));
    assert_eq!(
        state(row(&doc, "qwen", "project", "m-http")),
        off("not_approved")
    );
    // Gemini has no such file.
    let doc = f.scan(&GeminiConfigScanner(GEMINI));
    assert!(doc.rows.iter().all(|r| !r.name.starts_with("m-")));
}
