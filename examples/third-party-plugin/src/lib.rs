//! An example third-party plugin: the Gemini CLI run as a passthrough agent.
//! It is written against `tether-sdk` only, passes the conformance kit, and
//! builds as a shared library that `tether plugins --load` (or
//! `tether probe --load … --passthrough gemini`) loads at run time.
//!
//! Gemini reads MCP servers from `settings.json`'s `mcpServers`
//! (`command`/`args`/`env` for stdio, `httpUrl` for streamable HTTP, `url` for
//! SSE, `headers`); the plugin materializes one such file and points Gemini at
//! it with `GEMINI_CLI_SYSTEM_SETTINGS_PATH`. Secret values are `$VAR`
//! references Gemini resolves from the environment the host sets.

use std::path::Path;

use serde_json::{Map, Value, json};
use tether_sdk::*;

/// The plugin's name.
pub const PLUGIN_NAME: &str = "gemini-passthrough";
/// The settings file it materializes.
pub const SETTINGS_FILE: &str = "gemini-settings.json";
/// The variable that points Gemini at it.
pub const SETTINGS_ENV: &str = "GEMINI_CLI_SYSTEM_SETTINGS_PATH";

/// The Gemini CLI plugin.
#[derive(Debug, Default, Clone, Copy)]
pub struct GeminiPlugin;

impl TransportObserver for GeminiPlugin {
    fn descriptor(&self) -> PluginDescriptor {
        PluginDescriptor {
            name: PLUGIN_NAME.into(),
            agent_kinds: vec!["gemini".into()],
            drive_mode: DriveMode::Passthrough,
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }

    fn decide(&self, server: &ServerSpec, _: &PlanContext) -> Decision {
        match server.endpoints.first().map(Endpoint::transport) {
            Some(transport @ (Transport::Stdio | Transport::Http | Transport::Sse)) => {
                Decision::Deliver {
                    transport,
                    via: Delivery::ConfigFile,
                }
            }
            _ => Decision::filter(ReasonCode::TransportUnsupported),
        }
    }

    fn passthrough(&self) -> Option<&dyn PassthroughStrategy> {
        Some(self)
    }
}

impl PassthroughStrategy for GeminiPlugin {
    fn capabilities(&self) -> AgentCapabilities {
        AgentCapabilities {
            http: Some(true),
            sse: Some(true),
            load_session: Some(false),
        }
    }

    fn materialize(
        &self,
        plan: &Plan,
        _: &PlanContext,
        dir: &Path,
    ) -> Result<Materialized, String> {
        let mut env: Vec<KeyValue> = Vec::new();
        let mut hide = |value: &str| {
            let name = format!("TETHER_MCP_{}", env.len() + 1);
            env.push(KeyValue::new(name.clone(), value));
            format!("${name}")
        };
        let mut servers = Map::new();
        for (planned, endpoint) in plan.delivered() {
            let entry = match endpoint {
                Endpoint::Stdio {
                    command,
                    args,
                    env: vars,
                    ..
                } => {
                    let vars: Map<String, Value> = vars
                        .iter()
                        .map(|kv| (kv.name.clone(), Value::String(hide(&kv.value))))
                        .collect();
                    json!({"command": hide(command), "args": args.iter().map(|a| hide(a)).collect::<Vec<_>>(), "env": vars})
                }
                Endpoint::Http { url, headers } | Endpoint::Sse { url, headers } => {
                    let headers: Map<String, Value> = headers
                        .iter()
                        .map(|kv| (kv.name.clone(), Value::String(hide(&kv.value))))
                        .collect();
                    let key = if endpoint.transport() == Transport::Http {
                        "httpUrl"
                    } else {
                        "url"
                    };
                    json!({key: hide(url), "headers": headers})
                }
            };
            servers.insert(planned.spec.name.clone(), entry);
        }
        let contents = serde_json::to_string_pretty(&json!({"mcpServers": servers}))
            .map_err(|e| format!("cannot encode Gemini settings: {e}"))?;
        env.push(KeyValue::new(
            SETTINGS_ENV,
            dir.join(SETTINGS_FILE).display().to_string(),
        ));
        Ok(Materialized {
            args: vec![],
            env,
            files: vec![MaterializedFile {
                name: SETTINGS_FILE.into(),
                contents,
            }],
        })
    }
}

tether_sdk::export_plugin!(GeminiPlugin);

#[cfg(test)]
mod tests {
    #[test]
    fn the_plugin_passes_the_conformance_kit() {
        tether_sdk::conformance::assert_conforms(&super::GeminiPlugin);
    }
}
