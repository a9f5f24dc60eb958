//! tether-passthrough-codex: the plugin for the Codex CLI run as a passthrough
//! process.
//!
//! Codex takes stdio and streamable HTTP servers through repeated
//! `-c mcp_servers.<name>.<key>=<value>` flags; it has no SSE, so SSE-only
//! servers are `filtered/sse_unsupported`. Materializing the flags comes with
//! the passthrough issue.

use tether_core::observer::{
    Decision, Delivery, Harness, PlanContext, PluginDescriptor, ServerSpec, TransportObserver,
};
use tether_core::vocab::{ReasonCode, Transport};

/// The plugin's registered name.
pub const PLUGIN_NAME: &str = "passthrough-codex";

/// Decides MCP server delivery for the Codex CLI.
#[derive(Debug, Default, Clone, Copy)]
pub struct PassthroughCodex;

impl TransportObserver for PassthroughCodex {
    fn descriptor(&self) -> PluginDescriptor {
        PluginDescriptor {
            name: PLUGIN_NAME.into(),
            agent_kinds: vec!["codex".into()],
            harness: Harness::Passthrough,
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }

    fn decide(&self, server: &ServerSpec, _: &PlanContext) -> Decision {
        let supported = |t: &Transport| matches!(t, Transport::Stdio | Transport::Http);
        match server
            .endpoints
            .iter()
            .map(|e| e.transport())
            .find(supported)
        {
            Some(transport) => Decision::Deliver {
                transport,
                via: Delivery::Arguments,
            },
            None => match server.endpoints.first().map(|e| e.transport()) {
                Some(Transport::Sse) => Decision::filter(ReasonCode::SseUnsupported),
                _ => Decision::filter(ReasonCode::TransportUnsupported),
            },
        }
    }
}

tether_core::register_plugin!(PLUGIN_NAME, || Box::new(PassthroughCodex));
