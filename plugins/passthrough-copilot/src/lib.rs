//! tether-passthrough-copilot: the plugin for the GitHub Copilot CLI
//! (`copilot -p …`) run as a passthrough process.
//!
//! - Decides: stdio (`type: local`), streamable HTTP (`http`) and SSE (`sse`)
//!   all pass, with headers.
//! - Materializes one `{"mcpServers": …}` file in the host's private
//!   directory and passes it with `--additional-mcp-config @FILE`, which adds
//!   to the user's `~/.copilot/mcp-config.json` for this run. Strict mode adds
//!   `--disable-builtin-mcps` (the bundled GitHub servers); the user's own
//!   servers cannot be switched off by flag without naming them.
//! - Secret-bearing values (the command, its arguments and cwd, env and
//!   header values, URLs with userinfo or a query) are `${TETHER_MCP_n}`
//!   references, which Copilot expands per value from the environment the
//!   host sets. Every tool is allowed (`tools: ["*"]`): filtering tools is the
//!   user's configuration, not the delivery's.
//! - With `--output-format json` Copilot prints JSONL events;
//!   `session.mcp_server_status_changed` and `session.mcp_servers_loaded`
//!   carry each server's status, and `session.mcp_server_tools_loaded` its
//!   tool count. They become `agent_reported` evidence.
//! - Scans Copilot's own configuration for `tether inventory`
//!   ([`config_scan`]).
//!
//! Its public modules, each pure (bytes or decoded records in, evidence out):
//! - [`census`]: every record, event, telemetry and configuration kind Copilot CLI's
//!   shipped code writes or reads that bears on MCP, read or not read with why;
//! - [`records`]: Copilot CLI's own session records, read as `tether sessions` reads them;
//! - [`telemetry`]: Copilot CLI's own OpenTelemetry, read as evidence (`tether collect`).

pub mod census;
pub mod config_scan;
mod output;
pub mod records;
pub mod telemetry;

use std::path::Path;

use serde_json::{Map, Value, json};
use tether_core::model::{Evidence, Timestamp};
use tether_core::passthrough::{Materialized, MaterializedFile, PassthroughStrategy};
use tether_core::telemetry::{HeadersSent, TelemetrySetup, TelemetryTarget};
use tether_core::vocab::EvidenceKind;
use tether_core::{AgentCapabilities, Endpoint, Plan, PlanContext};
use tether_sdk::materialize::{EVERY_TRANSPORT, EnvRefs, RefStyle};

/// The harness's dialect: the entry shape its scanner reads and the
/// reference spelling its materializer writes (which the harness expands).
pub const DIALECT: tether_sdk::materialize::Dialect = tether_sdk::materialize::Dialect::new(
    tether_inventory::EntryDialect::McpJson,
    RefStyle::Braces,
);

/// The plugin's registered name.
pub const PLUGIN_NAME: &str = "passthrough-copilot";
/// The agent kinds it handles.
pub const AGENT_KINDS: [&str; 2] = ["copilot", "copilot-cli"];
/// The file it materializes.
pub const CONFIG_FILE: &str = "copilot-mcp-config.json";

/// Decides and materializes MCP servers for the Copilot CLI.
#[derive(Debug, Default, Clone, Copy)]
pub struct PassthroughCopilot;

tether_sdk::passthrough_observer!(
    PassthroughCopilot,
    PLUGIN_NAME,
    AGENT_KINDS,
    roles: [records, telemetry, census, last_mile, setup, model_tap],
);

/// One `mcpServers` entry in Copilot's shape.
pub fn copilot_entry(endpoint: &Endpoint, refs: &mut EnvRefs) -> Value {
    match endpoint {
        Endpoint::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut entry = json!({
                "type": "local",
                "command": refs.hide(command),
                "args": args.iter().map(|a| refs.hide(a)).collect::<Vec<_>>(),
                "env": refs.map(env),
                "tools": ["*"],
            });
            if let Some(cwd) = cwd {
                entry["cwd"] = Value::String(refs.hide(cwd));
            }
            entry
        }
        Endpoint::Http { url, headers } => {
            json!({"type": "http", "url": refs.url(url), "headers": refs.map(headers), "tools": ["*"]})
        }
        Endpoint::Sse { url, headers } => {
            json!({"type": "sse", "url": refs.url(url), "headers": refs.map(headers), "tools": ["*"]})
        }
    }
}

impl PassthroughStrategy for PassthroughCopilot {
    fn capabilities(&self) -> AgentCapabilities {
        EVERY_TRANSPORT
    }

    fn materialize(
        &self,
        plan: &Plan,
        ctx: &PlanContext,
        dir: &Path,
    ) -> Result<Materialized, String> {
        let mut refs = DIALECT.env_refs();
        let servers: Map<String, Value> = plan
            .delivered()
            .map(|(p, endpoint)| (p.spec.name.clone(), copilot_entry(endpoint, &mut refs)))
            .collect();
        let contents = serde_json::to_string_pretty(&json!({"mcpServers": servers}))
            .map_err(|e| format!("cannot encode the MCP configuration: {e}"))?;
        let mut args = vec![
            "--additional-mcp-config".to_owned(),
            format!("@{}", dir.join(CONFIG_FILE).display()),
        ];
        if ctx.strict {
            args.push("--disable-builtin-mcps".to_owned());
        }
        Ok(Materialized::new(
            args,
            refs.into_env(),
            vec![MaterializedFile::private(CONFIG_FILE, contents)],
        ))
    }

    fn reports_servers(&self) -> bool {
        true
    }

    fn read_output(&self, line: &str, at: Timestamp) -> Vec<Evidence> {
        output_evidence(line, at)
    }
}

/// What one line Copilot prints with `--output-format json` says of its
/// servers: the `session.mcp_*` status and tool-count events, as the
/// harness's own reports. A run's live output and a saved one read by
/// path (`records.rs`, `output_json`) both read them here.
pub(crate) fn output_evidence(line: &str, at: Timestamp) -> Vec<Evidence> {
    if !line.contains("\"session.mcp_") {
        return Vec::new();
    }
    let Ok(doc) = serde_json::from_str::<Value>(line) else {
        return Vec::new();
    };
    let data = doc.get("data");
    let text = |v: Option<&Value>, key: &str| {
        v.and_then(|v| v.get(key))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let report = |name: String| Evidence::new(EvidenceKind::AgentReported, at).server(name);
    match doc.get("type").and_then(Value::as_str) {
        Some("session.mcp_server_status_changed") => {
            match (text(data, "serverName"), text(data, "status")) {
                (Some(name), Some(status)) => vec![report(name).reported(status)],
                _ => Vec::new(),
            }
        }
        Some("session.mcp_servers_loaded") => data
            .and_then(|d| d.get("servers"))
            .and_then(Value::as_array)
            .map(|servers| {
                servers
                    .iter()
                    .filter_map(|s| {
                        let name = text(Some(s), "name")?;
                        let status = text(Some(s), "status")?;
                        Some(report(name).reported(status))
                    })
                    .collect()
            })
            .unwrap_or_default(),
        Some("session.mcp_server_tools_loaded") => {
            let count = data
                .and_then(|d| d.get("toolCount"))
                .and_then(Value::as_u64)
                .map(|n| u32::try_from(n).unwrap_or(u32::MAX));
            match (text(data, "serverName"), count) {
                (Some(name), Some(count)) => vec![report(name).tools(count)],
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

/// Copilot CLI's name for `server`'s `tool`, before its cut to 64:
/// `SERVER-TOOL`, characters outside `[a-zA-Z0-9_-]` replaced by `-`.
fn copilot_tool_name(server: &str, tool: &str) -> String {
    use tether_sdk::names::{replace_outside, word_or_dash};
    format!(
        "{}-{}",
        replace_outside(server, word_or_dash, '-'),
        replace_outside(tool, word_or_dash, '-')
    )
}

impl tether_core::records::RecordReader for PassthroughCopilot {
    tether_sdk::forward_reader! {
        record_sources: records::sources,
        read_record: records::read,
        // The pinned release and the newest npm serves (`tests/peers`,
        // `tests/peers/newest`), each read in a real session by
        // `tests/tests/harness_sessions.rs`.
        verified_on: "1.0.102"..="1.0.102",
    }

    /// Its session events show each skill it loads for the model and each
    /// run of an event's hooks (see `records.rs`).
    fn records_show(&self) -> tether_core::harness::RunTimeShown {
        tether_core::harness::RunTimeShown::none()
            .skills_invoked()
            .hooks_fired()
    }
}

impl tether_core::telemetry::TelemetryReader for PassthroughCopilot {
    tether_sdk::forward_reader! {
        read_telemetry: telemetry::read,
    }

    /// The Copilot CLI's own OpenTelemetry (traces and metrics, no logs):
    /// `github.copilot.mcp.server.lifecycle` span events, `execute_tool`
    /// spans. Server and tool names are SHA-256 hashed there.
    fn telemetry_setup(&self, target: &TelemetryTarget) -> Option<TelemetrySetup> {
        Some(
            TelemetrySetup::new("copilot", HeadersSent::Verified)
                .var("OTEL_EXPORTER_OTLP_ENDPOINT", &target.endpoint)
                .var("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
                .otlp_headers(target)
                .note("Copilot hashes server and tool names (SHA-256); Tether matches them against the names configured for it."),
        )
    }
}

impl tether_core::harness::HarnessCensus for PassthroughCopilot {
    tether_sdk::forward_reader! {
        census: census::census,
    }
}

impl tether_core::last_mile::LastMile for PassthroughCopilot {
    /// Copilot CLI's last mile, verified on 1.0.102 against the fake
    /// model's log of every request (`tests/tests/last_mile.rs`):
    /// `SERVER-TOOL`, every character outside `[a-zA-Z0-9_-]` a `-`; of two
    /// tools that then share a name the first listed is kept; every name is
    /// cut to 64 characters, and a cut name that meets an earlier one ends
    /// in a counter instead (`…2`). It sends every tool (200 and more), so
    /// its provider's limit on a request's tools applies.
    fn rules(&self, version: Option<&str>) -> Option<tether_core::last_mile::Rules> {
        use tether_core::last_mile::{OnCollision, Rules};
        let _ = version;
        Some(
            Rules::new(
                copilot_tool_name,
                OnCollision::Numbered,
                "Copilot CLI 1.0.102, verified",
            )
            .with_cut(64)
            .with_tool_limit(tether_core::last_mile::Limit {
                max: 128,
                source: "OpenAI Chat Completions API reference: a request's tools hold at most 128 functions",
            }),
        )
    }
}

impl tether_core::harness::SetupGuide for PassthroughCopilot {
    /// An entry of `~/.copilot/mcp-config.json`, every tool allowed.
    fn server_setup(
        &self,
        name: &str,
        command: &str,
        args: &[String],
    ) -> Option<tether_core::passthrough::ServerSetup> {
        Some(tether_core::passthrough::ServerSetup::new(
            tether_sdk::materialize::server_block(
                "~/.copilot/mcp-config.json",
                "mcpServers",
                name,
                json!({"type": "local", "command": command, "args": args, "tools": ["*"]}),
            ),
        ))
    }
}

impl tether_core::model_tap::ModelTap for PassthroughCopilot {
    /// Its bring-your-own-key provider (`COPILOT_PROVIDER_BASE_URL`),
    /// speaking OpenAI chat completions.
    fn model_setup(&self, base_url: &str) -> Option<tether_core::model_tap::ModelSetup> {
        Some(
            tether_core::model_tap::ModelSetup::new("copilot", "openai_chat")
                .var("COPILOT_PROVIDER_BASE_URL", format!("{base_url}/v1"))
                .note("This is Copilot CLI's bring-your-own-key mode: COPILOT_PROVIDER_API_KEY and COPILOT_MODEL stay yours, and the tap passes them on to https://api.openai.com (or --upstream). GitHub's own models are not reached this way.")
                .note("Copilot CLI sends no session id with its requests: they join a tap session of their own."),
        )
    }

    /// Copilot CLI's provider client says only `OpenAI/JS …`, with its own
    /// `x-initiator` header (`user`, then `agent` for the turns after a
    /// tool call: 1.0.x); no version and no session.
    fn model_caller(
        &self,
        headers: &[(&str, &str)],
    ) -> Option<tether_core::model_tap::ModelCaller> {
        use tether_core::model_tap::{ModelCaller, header};
        header(headers, "user-agent")?
            .starts_with("OpenAI/JS ")
            .then_some(())?;
        matches!(header(headers, "x-initiator")?, "user" | "agent").then_some(())?;
        Some(ModelCaller::new(None, None))
    }
}

tether_core::register_plugin!(PLUGIN_NAME, || Box::new(PassthroughCopilot));

#[cfg(test)]
mod tests {
    use super::*;
    use tether_core::DriveMode;
    use tether_core::observer::plan;
    use tether_sdk::conformance::{http_server, stdio_server};

    #[test]
    fn servers_become_one_additional_config_with_references() {
        let ctx = PlanContext {
            agent_kind: "copilot".into(),
            drive_mode: DriveMode::Passthrough,
            capabilities: PassthroughCopilot.capabilities(),
            strict: true,
        };
        let servers = vec![
            stdio_server(
                "local",
                "/home/u/srv",
                &["--token=arg-secret"],
                &[("API_KEY", "env-\"secret")],
            ),
            http_server(
                "remote",
                "https://h.example/mcp",
                &[("Authorization", "Bearer hdr-secret")],
            ),
        ];
        let planned = plan(Some(&PassthroughCopilot), &servers, &ctx);
        let m = PassthroughCopilot
            .materialize(&planned, &ctx, Path::new("/p"))
            .expect("materialize");
        assert_eq!(
            m.args,
            [
                "--additional-mcp-config",
                "@/p/copilot-mcp-config.json",
                "--disable-builtin-mcps"
            ]
        );
        let doc: Value = serde_json::from_str(&m.files[0].contents).expect("json");
        assert_eq!(doc["mcpServers"]["local"]["command"], "${TETHER_MCP_1}");
        assert_eq!(doc["mcpServers"]["local"]["tools"], json!(["*"]));
        assert_eq!(doc["mcpServers"]["remote"]["type"], "http");
        for secret in ["arg-secret", "env-\"secret", "hdr-secret", "/home/u"] {
            assert!(!m.files[0].contents.contains(secret));
            assert!(m.env.iter().any(|kv| kv.value.contains(secret)));
        }
    }

    #[test]
    fn status_and_tool_events_become_agent_reports() {
        let p = PassthroughCopilot;
        let ev = p.read_output(
            r#"{"type":"session.mcp_server_status_changed","data":{"serverName":"ev","status":"connected"}}"#,
            Timestamp(1),
        );
        assert_eq!(ev[0].server.as_deref(), Some("ev"));
        assert_eq!(ev[0].reported_status.as_deref(), Some("connected"));
        let ev = p.read_output(
            r#"{"type":"session.mcp_server_tools_loaded","data":{"serverName":"ev","toolCount":16}}"#,
            Timestamp(2),
        );
        assert_eq!(ev[0].tool_count, Some(16));
        assert_eq!(ev[0].reported_status, None);
        let ev = p.read_output(
            r#"{"type":"session.mcp_servers_loaded","data":{"servers":[{"name":"a","status":"failed"},{"name":"b"}]}}"#,
            Timestamp(3),
        );
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].reported_status.as_deref(), Some("failed"));
        assert!(
            p.read_output(r#"{"type":"user.message"}"#, Timestamp(4))
                .is_empty()
        );
    }

    #[test]
    fn the_plugin_passes_the_conformance_kit() {
        tether_sdk::conformance::assert_conforms(&PassthroughCopilot);
    }
}
