//! tether-acp-structured: the plugin for agents spoken to over ACP.
//!
//! ACP is one protocol, so this plugin handles every ACP agent kind
//! ([`ANY_KIND`]). It decides per server from
//! what the agent advertised in `initialize`:
//! - stdio always passes (ACP requires every agent to support it);
//! - http needs `mcpCapabilities.http`; sse needs `mcpCapabilities.sse`;
//! - a server offering several endpoints (the host's own, for example) is
//!   delivered over the first one the agent can take.
//!
//! [`acp`] is the ACP host side: the line transport over the agent's stdio,
//! `mcpServers` from a plan, and safe answers to agent-initiated requests.

pub mod acp;

use tether_core::TransportObserver;
use tether_core::plan::{Decision, Delivery, DriveMode, PlanContext, PluginDescriptor};
use tether_core::registry::ANY_KIND;
use tether_core::spec::ServerSpec;
use tether_core::vocab::{ReasonCode, Transport};

/// The plugin's registered name.
pub const PLUGIN_NAME: &str = "acp-structured";

/// Decides MCP server delivery for ACP agents.
#[derive(Debug, Default, Clone, Copy)]
pub struct AcpStructured;

impl AcpStructured {
    /// Whether an agent with these capabilities can take a transport.
    pub fn accepts(transport: &Transport, ctx: &PlanContext) -> bool {
        match transport {
            Transport::Stdio => true,
            Transport::Http => ctx.capabilities.http == Some(true),
            Transport::Sse => ctx.capabilities.sse == Some(true),
            // Other, and any transport a later Tether adds.
            _ => false,
        }
    }
}

impl TransportObserver for AcpStructured {
    fn descriptor(&self) -> PluginDescriptor {
        PluginDescriptor::new(
            PLUGIN_NAME,
            [ANY_KIND],
            DriveMode::Acp,
            env!("CARGO_PKG_VERSION"),
        )
    }

    fn decide(&self, server: &ServerSpec, ctx: &PlanContext) -> Decision {
        if let Some(endpoint) = server
            .endpoints
            .iter()
            .find(|e| Self::accepts(&e.transport(), ctx))
        {
            return Decision::Deliver {
                transport: endpoint.transport(),
                via: Delivery::AcpMcpServers,
            };
        }
        // Nothing fits: the reason names the most preferred transport refused.
        let reason = match server.endpoints.first().map(|e| e.transport()) {
            Some(Transport::Http) => ReasonCode::HttpUnsupported,
            Some(Transport::Sse) => ReasonCode::SseUnsupported,
            _ => ReasonCode::TransportUnsupported,
        };
        Decision::filter(reason)
    }
}

tether_core::register_plugin!(PLUGIN_NAME, || Box::new(AcpStructured));

#[cfg(test)]
mod tests {
    use super::*;
    use tether_core::vocab::ServerSource;
    use tether_core::{AgentCapabilities, Endpoint};

    fn ctx(http: Option<bool>, sse: Option<bool>) -> PlanContext {
        PlanContext {
            agent_kind: "claude-agent".into(),
            drive_mode: DriveMode::Acp,
            capabilities: AgentCapabilities::new(http, sse, None),
            strict: false,
        }
    }

    fn host_endpoint() -> ServerSpec {
        let url = |path: &str| format!("http://127.0.0.1:7000{path}");
        ServerSpec::new(
            "kandev",
            ServerSource::Host,
            Endpoint::Http {
                url: url("/mcp"),
                headers: vec![],
            },
        )
        .or(Endpoint::Sse {
            url: url("/sse"),
            headers: vec![],
        })
        .or(Endpoint::Stdio {
            command: "tether-bridge".into(),
            args: vec![],
            env: vec![],
            cwd: None,
        })
    }

    #[test]
    fn host_endpoint_prefers_http_then_sse_then_the_stdio_bridge() {
        let pick = |http, sse| match AcpStructured.decide(&host_endpoint(), &ctx(http, sse)) {
            Decision::Deliver { transport, .. } => transport,
            other => panic!("expected delivery, got {other:?}"),
        };
        assert_eq!(pick(Some(true), Some(true)), Transport::Http);
        assert_eq!(pick(Some(false), Some(true)), Transport::Sse);
        assert_eq!(pick(None, None), Transport::Stdio);
    }

    #[test]
    fn unadvertised_transports_are_filtered_with_their_reason() {
        let http_only = ServerSpec::new(
            "remote",
            ServerSource::Profile,
            Endpoint::Http {
                url: "https://mcp.example.com/mcp".into(),
                headers: vec![],
            },
        );
        assert_eq!(
            AcpStructured.decide(&http_only, &ctx(None, Some(true))),
            Decision::filter(ReasonCode::HttpUnsupported)
        );
        let sse_only = ServerSpec::new(
            "legacy",
            ServerSource::Profile,
            Endpoint::Sse {
                url: "https://mcp.example.com/sse".into(),
                headers: vec![],
            },
        );
        assert_eq!(
            AcpStructured.decide(&sse_only, &ctx(Some(true), Some(false))),
            Decision::filter(ReasonCode::SseUnsupported)
        );
    }
}

#[cfg(test)]
mod conformance {
    #[test]
    fn the_plugin_passes_the_conformance_kit() {
        tether_sdk::conformance::assert_conforms(&crate::AcpStructured);
    }
}
