//! Cursor: `~/.cursor/mcp.json` (scope user) and `<project>/.cursor/mcp.json`
//! (scope project), `{"mcpServers": {…}}` entries with `command`/`args`/`env`
//! or `url`/`headers`. A `"disabled": true` entry is off. Cursor keeps the
//! on/off switches of its settings screen in its own database, not in these
//! files, so an entry without `disabled` reads as enabled *by the files*.

use serde_json::Value;
use tether_core::vocab::{ConfigScope, ReasonCode};
use tether_inventory::{ConfigScanner, Enablement, ScanContext, ScanOutput};

/// The harness name in inventory rows.
pub const HARNESS: &str = "cursor";

/// Scans Cursor's configuration.
#[derive(Debug, Default, Clone, Copy)]
pub struct CursorConfigScanner;

tether_inventory::register_scanner!(CursorConfigScanner);

impl ConfigScanner for CursorConfigScanner {
    fn harness(&self) -> &'static str {
        HARNESS
    }

    fn scan(&self, ctx: &ScanContext, out: &mut ScanOutput) {
        let mut roots = vec![(ctx.home_root(), ConfigScope::User)];
        if let Some(project) = ctx.project_root() {
            roots.push((project, ConfigScope::Project));
        }
        for (root, scope) in roots {
            let rel = ".cursor/mcp.json";
            let Some(doc) = out.read_json(HARNESS, &root, rel, true) else {
                continue;
            };
            let source = root.source(rel);
            out.add_servers(
                ctx,
                HARNESS,
                scope,
                &source,
                "mcpServers",
                doc.get("mcpServers"),
                crate::DIALECT.entry,
                |found, entry| {
                    if entry.get("disabled").and_then(Value::as_bool) == Some(true) {
                        found.enablement = Enablement::Off(
                            ReasonCode::DisabledInConfig,
                            format!("\"disabled\": true in {}", found.source),
                        );
                    }
                    if entry.contains_key("envFile") {
                        found.settings.push("envFile=set".into());
                    }
                },
            );
        }
    }
}
