//! tether-passthrough-claude: the plugin for the Claude Code CLI run as a
//! passthrough process.
//!
//! Claude Code takes stdio, http and sse servers through `--mcp-config`, so
//! each server is delivered over its first endpoint by configuration file.
//! Materializing that file and reading Claude's `system/init` report come with
//! the passthrough issue.

use tether_core::observer::{
    Decision, Delivery, Harness, PlanContext, PluginDescriptor, ServerSpec, TransportObserver,
};
use tether_core::vocab::{ReasonCode, Transport};

/// The plugin's registered name.
pub const PLUGIN_NAME: &str = "passthrough-claude";
/// The agent kinds it handles.
pub const AGENT_KINDS: [&str; 2] = ["claude", "claude-code"];

/// Decides MCP server delivery for the Claude Code CLI.
#[derive(Debug, Default, Clone, Copy)]
pub struct PassthroughClaude;

impl TransportObserver for PassthroughClaude {
    fn descriptor(&self) -> PluginDescriptor {
        PluginDescriptor {
            name: PLUGIN_NAME.into(),
            agent_kinds: AGENT_KINDS.iter().map(|k| (*k).to_owned()).collect(),
            harness: Harness::Passthrough,
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }

    fn decide(&self, server: &ServerSpec, _: &PlanContext) -> Decision {
        let supported =
            |t: &Transport| matches!(t, Transport::Stdio | Transport::Http | Transport::Sse);
        match server
            .endpoints
            .iter()
            .map(|e| e.transport())
            .find(supported)
        {
            Some(transport) => Decision::Deliver {
                transport,
                via: Delivery::ConfigFile,
            },
            None => Decision::filter(ReasonCode::TransportUnsupported),
        }
    }
}

tether_core::register_plugin!(PLUGIN_NAME, || Box::new(PassthroughClaude));
