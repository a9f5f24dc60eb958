//! GitHub Copilot CLI: `mcpServers` in `$COPILOT_HOME/mcp-config.json`
//! (default `~/.copilot`, scope user) and in the workspace's `.mcp.json` or
//! `.github/mcp.json` (scope project). Entries are `{"type": "local" |
//! "stdio", "command", "args", "env", "cwd"}` or `{"type": "http" | "sse",
//! "url", "headers"}`, each with a `tools` filter (`["*"]` is every tool;
//! a list names the tools kept; `[]` keeps none). `copilot mcp disable NAME`
//! records the name in `settings.json`'s `disabledMcpServers`. Workspace
//! servers load only in a trusted folder: one listed (or under one listed) in
//! `config.json`'s `trusted_folders`; otherwise they are `untrusted_folder`.

use serde_json::Value;
use tether_core::vocab::{ConfigScope, ReasonCode};
use tether_inventory::{
    ConfigScanner, Enablement, EntryDialect, ScanContext, ScanOutput, string_list,
};

/// The harness name in inventory rows.
pub const HARNESS: &str = "copilot";

/// Scans the Copilot CLI's configuration.
#[derive(Debug, Default, Clone, Copy)]
pub struct CopilotConfigScanner;

tether_inventory::register_scanner!(CopilotConfigScanner);

impl ConfigScanner for CopilotConfigScanner {
    fn harness(&self) -> &'static str {
        HARNESS
    }

    fn scan(&self, ctx: &ScanContext, out: &mut ScanOutput) {
        let home = ctx.env_dir("COPILOT_HOME", ".copilot");
        let disabled: Vec<String> = out
            .read_json(HARNESS, &home, "settings.json", true)
            .map(|doc| string_list(doc.get("disabledMcpServers")))
            .unwrap_or_default();
        let disabled_source = home.source("settings.json");
        let trusted = out
            .read_json(HARNESS, &home, "config.json", true)
            .map(|doc| string_list(doc.get("trusted_folders")))
            .unwrap_or_default()
            .iter()
            .any(|dir| {
                ctx.project
                    .as_ref()
                    .is_some_and(|p| p.starts_with(ctx.resolve_written_path(dir)))
            });
        let trust_source = home.source("config.json");
        let mut files = vec![(home, "mcp-config.json", ConfigScope::User)];
        if let Some(project) = ctx.project_root() {
            files.push((project.clone(), ".mcp.json", ConfigScope::Project));
            files.push((project, ".github/mcp.json", ConfigScope::Project));
        }
        for (root, rel, scope) in files {
            let Some(doc) = out.read_json(HARNESS, &root, rel, true) else {
                continue;
            };
            let scope_is_project = scope == ConfigScope::Project;
            out.add_servers(
                ctx,
                HARNESS,
                scope,
                &root.source(rel),
                "mcpServers",
                doc.get("mcpServers"),
                EntryDialect::McpJson,
                |found, entry| {
                    match entry.get("tools").and_then(Value::as_array) {
                        Some(tools) if !tools.iter().any(|t| t.as_str() == Some("*")) => {
                            found.include_tools = Some(string_list(entry.get("tools")));
                        }
                        _ => {}
                    }
                    if scope_is_project && !trusted {
                        found.enablement = Enablement::Off(
                            ReasonCode::UntrustedFolder,
                            format!(
                                "the project is not in trusted_folders in {trust_source}; Copilot loads workspace servers only in a trusted folder"
                            ),
                        );
                    } else if disabled.contains(&found.name) {
                        found.enablement = Enablement::Off(
                            ReasonCode::DisabledInConfig,
                            format!("listed in disabledMcpServers in {disabled_source}"),
                        );
                    }
                },
            );
        }
    }
}
