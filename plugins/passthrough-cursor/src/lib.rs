//! tether-passthrough-cursor: the plugin for Cursor's agent run as a
//! passthrough process in a project directory.
//!
//! - Decides: stdio, streamable HTTP and SSE all pass (Cursor tells the two
//!   HTTP transports apart by itself, so both are a `url`).
//! - Materializes the project file `.cursor/mcp.json`
//!   ([`FilePlace::Project`](tether_core::passthrough::FilePlace)) in the
//!   agent's working directory: Cursor takes MCP servers from no flag and no
//!   variable, only from `~/.cursor/mcp.json` and the project's. The host
//!   never overwrites a `.cursor/mcp.json` that is already there, and removes
//!   its own afterwards. Secret-bearing values (the command and its
//!   arguments, env and header values, URLs with userinfo or a query) are
//!   `${env:TETHER_MCP_n}` references, which Cursor interpolates from the
//!   environment the host sets.
//! - No Cursor CLI installs from a package registry, so this plugin is
//!   proven by the conformance kit and a file-level test, not against the
//!   real agent; it reports nothing from output.
//! - Scans Cursor's own configuration for `tether inventory`
//!   ([`config_scan`]).

pub mod config_scan;

use std::path::Path;

use serde_json::{Map, Value, json};
use tether_core::passthrough::{Materialized, MaterializedFile, PassthroughStrategy};
use tether_core::{AgentCapabilities, Endpoint, Plan, PlanContext};
use tether_sdk::materialize::{EVERY_TRANSPORT, EnvRefs, RefStyle};

/// The harness's dialect: the entry shape its scanner reads and the
/// reference spelling its materializer writes (which the harness expands).
pub const DIALECT: tether_sdk::materialize::Dialect = tether_sdk::materialize::Dialect::new(
    tether_inventory::EntryDialect::McpJson,
    RefStyle::DollarEnvColon,
);

/// The plugin's registered name.
pub const PLUGIN_NAME: &str = "passthrough-cursor";
/// The agent kinds it handles.
pub const AGENT_KINDS: [&str; 2] = ["cursor", "cursor-agent"];
/// The project file it materializes.
pub const PROJECT_FILE: &str = ".cursor/mcp.json";

/// Decides and materializes MCP servers for Cursor.
#[derive(Debug, Default, Clone, Copy)]
pub struct PassthroughCursor;

tether_sdk::passthrough_observer!(
    PassthroughCursor,
    PLUGIN_NAME,
    AGENT_KINDS,
    roles: [setup],
);

/// One `mcpServers` entry in Cursor's shape.
pub fn cursor_entry(endpoint: &Endpoint, refs: &mut EnvRefs) -> Value {
    match endpoint {
        Endpoint::Stdio {
            command, args, env, ..
        } => json!({
            "command": refs.hide(command),
            "args": args.iter().map(|a| refs.hide(a)).collect::<Vec<_>>(),
            "env": refs.map(env),
        }),
        Endpoint::Http { url, headers } | Endpoint::Sse { url, headers } => {
            json!({"url": refs.url(url), "headers": refs.map(headers)})
        }
    }
}

impl PassthroughStrategy for PassthroughCursor {
    fn capabilities(&self) -> AgentCapabilities {
        EVERY_TRANSPORT
    }

    fn materialize(&self, plan: &Plan, _: &PlanContext, _: &Path) -> Result<Materialized, String> {
        let mut refs = DIALECT.env_refs();
        let servers: Map<String, Value> = plan
            .delivered()
            .map(|(p, endpoint)| (p.spec.name.clone(), cursor_entry(endpoint, &mut refs)))
            .collect();
        let contents = serde_json::to_string_pretty(&json!({"mcpServers": servers}))
            .map_err(|e| format!("cannot encode the MCP configuration: {e}"))?;
        Ok(Materialized::new(
            vec![],
            refs.into_env(),
            vec![MaterializedFile::project(PROJECT_FILE, contents)],
        ))
    }
}

impl tether_core::harness::SetupGuide for PassthroughCursor {
    /// An entry of `~/.cursor/mcp.json` (Cursor has no command for it).
    fn server_setup(
        &self,
        name: &str,
        command: &str,
        args: &[String],
    ) -> Option<tether_core::passthrough::ServerSetup> {
        Some(tether_core::passthrough::ServerSetup::new(
            tether_sdk::materialize::server_block(
                "~/.cursor/mcp.json",
                "mcpServers",
                name,
                json!({"command": command, "args": args}),
            ),
        ))
    }
}

tether_core::register_plugin!(PLUGIN_NAME, || Box::new(PassthroughCursor));

#[cfg(test)]
mod tests {
    #[test]
    fn the_plugin_passes_the_conformance_kit() {
        tether_sdk::conformance::assert_conforms(&super::PassthroughCursor);
    }
}
