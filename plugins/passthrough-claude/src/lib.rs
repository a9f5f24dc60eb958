//! tether-passthrough-claude: the plugin for the Claude Code CLI run as a
//! passthrough process.
//!
//! - Decides: stdio, http and sse all pass (first endpoint Claude can take).
//! - Materializes a `--mcp-config` JSON file (the host writes it 0600 and
//!   removes it when the process ends), plus `--strict-mcp-config` when the
//!   host asks for strict. Secret-bearing values (env values, header values,
//!   the command and its arguments, URLs with userinfo or a query) are not in
//!   the file: each is a
//!   `${TETHER_MCP_n}` reference that Claude expands from the process
//!   environment the host sets. It also sets `MCP_CONNECTION_NONBLOCKING=false`
//!   so that in `-p` mode Claude connects its servers before the first turn
//!   instead of racing them.
//! - Reads Claude's `--output-format stream-json --verbose` `system/init`
//!   line: each server's reported status becomes `agent_reported` evidence,
//!   and `mcp__<server>__<tool>` names in `tools` become the count of the
//!   tools Claude holds in the session (provenance `agent_report`; the
//!   harness's list, so `current_thread`, never `model_visible`).
//! - Scans Claude Code's own configuration for `tether inventory`
//!   ([`config_scan`]).
//!
//! Its public modules, each pure (bytes or decoded records in, evidence out):
//! - [`census`]: every record, event, telemetry and configuration kind Claude Code's
//!   shipped code writes or reads that bears on MCP, read or not read with why;
//! - [`records`]: Claude Code's own session records, read as `tether sessions` reads them;
//! - [`telemetry`]: Claude Code's own OpenTelemetry, read as evidence (`tether collect`).

pub mod census;
pub mod config_scan;
mod policy;

use std::path::Path;

pub mod records;
pub mod telemetry;
mod tool_search;

use serde_json::{Map, Value, json};
use tether_core::model::{Evidence, Timestamp};
use tether_core::passthrough::{Materialized, MaterializedFile, PassthroughStrategy};
use tether_core::telemetry::{
    HeadersSent, TelemetryAnswer, TelemetryRecord, TelemetrySetup, TelemetryTarget,
};
use tether_core::{AgentCapabilities, Endpoint, KeyValue, Plan, PlanContext};
use tether_sdk::materialize::{EVERY_TRANSPORT, EnvRefs, RefStyle};

/// The harness's dialect: the entry shape its scanner reads and the
/// reference spelling its materializer writes (which the harness expands).
pub const DIALECT: tether_sdk::materialize::Dialect = tether_sdk::materialize::Dialect::new(
    tether_inventory::EntryDialect::McpJson,
    RefStyle::Braces,
);

/// The plugin's registered name.
pub const PLUGIN_NAME: &str = "passthrough-claude";
/// The agent kinds it handles.
pub const AGENT_KINDS: [&str; 2] = ["claude", "claude-code"];
/// Claude's switch for connecting MCP servers in the background in `-p` mode.
pub const BLOCKING_ENV: &str = "MCP_CONNECTION_NONBLOCKING";
/// The file it materializes.
pub const CONFIG_FILE: &str = "mcp-config.json";

/// Decides and materializes MCP servers for the Claude Code CLI.
#[derive(Debug, Default, Clone, Copy)]
pub struct PassthroughClaude;

// Its descriptor, its decision (the server's first endpoint: Claude takes
// stdio, http and sse, every transport there is) and itself as its
// passthrough strategy and reader.
tether_sdk::passthrough_observer!(
    PassthroughClaude,
    PLUGIN_NAME,
    AGENT_KINDS,
    roles: [records, telemetry, census, last_mile, setup, model_tap],
);

/// Claude's `mcpServers` entry for one endpoint; secret-bearing values are
/// `${VAR}` references whose values go into `indirect.env`.
fn claude_entry(endpoint: &Endpoint, indirect: &mut EnvRefs) -> Value {
    match endpoint {
        Endpoint::Stdio {
            command, args, env, ..
        } => {
            let args: Vec<String> = args.iter().map(|a| indirect.hide(a)).collect();
            // The command's path can name a user or a project: it moves out too.
            let command = indirect.hide(command);
            json!({"type": "stdio", "command": command, "args": args, "env": indirect.map(env)})
        }
        Endpoint::Http { url, headers } => {
            json!({"type": "http", "url": indirect.url(url), "headers": indirect.map(headers)})
        }
        Endpoint::Sse { url, headers } => {
            json!({"type": "sse", "url": indirect.url(url), "headers": indirect.map(headers)})
        }
    }
}

impl PassthroughStrategy for PassthroughClaude {
    fn capabilities(&self) -> AgentCapabilities {
        EVERY_TRANSPORT
    }

    fn materialize(
        &self,
        plan: &Plan,
        ctx: &PlanContext,
        dir: &Path,
    ) -> Result<Materialized, String> {
        let mut indirect = DIALECT.env_refs();
        let servers: Map<String, Value> = plan
            .delivered()
            .map(|(p, endpoint)| (p.spec.name.clone(), claude_entry(endpoint, &mut indirect)))
            .collect();
        let contents = serde_json::to_string_pretty(&json!({"mcpServers": servers}))
            .map_err(|e| format!("cannot encode the MCP configuration: {e}"))?;
        let mut args = vec![
            "--mcp-config".to_owned(),
            dir.join(CONFIG_FILE).display().to_string(),
        ];
        if ctx.strict {
            args.push("--strict-mcp-config".to_owned());
        }
        let mut env = indirect.into_env();
        // In -p mode Claude otherwise races its MCP connections against the
        // first turn; blocking makes the delivered servers really attach first.
        env.push(KeyValue::new(BLOCKING_ENV, "false"));
        Ok(Materialized::new(
            args,
            env,
            vec![MaterializedFile::private(CONFIG_FILE, contents)],
        ))
    }

    fn reports_servers(&self) -> bool {
        true
    }

    fn read_output(&self, line: &str, at: Timestamp) -> Vec<Evidence> {
        tether_sdk::materialize::stream_json_init_reports(line, at)
    }
}

/// Claude Code's name for `server`'s `tool`: `mcp__SERVER__TOOL`, each
/// part's characters outside `[a-zA-Z0-9_-]` replaced by `_`.
fn claude_tool_name(server: &str, tool: &str) -> String {
    use tether_sdk::names::{replace_outside, word_or_dash};
    format!(
        "mcp__{}__{}",
        replace_outside(server, word_or_dash, '_'),
        replace_outside(tool, word_or_dash, '_')
    )
}

impl tether_core::records::RecordReader for PassthroughClaude {
    tether_sdk::forward_reader! {
        record_sources: records::sources,
        read_record: records::read,
        // The pinned release and the newest npm serves (`tests/peers`,
        // `tests/peers/newest`), each read in a real session by
        // `tests/tests/harness_sessions.rs`.
        verified_on: "2.1.197"..="2.1.332",
    }

    /// Its records show skills offered and invoked, and a hook's run only
    /// where it failed, blocked, printed or was a Stop hook (see
    /// `records.rs`): a hook that succeeded in silence leaves no record.
    fn records_show(&self) -> tether_core::harness::RunTimeShown {
        tether_core::harness::RunTimeShown::none()
            .skills_listed()
            .skills_invoked()
            .hooks_fired_sometimes(records::HOOK_SILENCE)
    }
}

impl tether_core::telemetry::TelemetryReader for PassthroughClaude {
    /// Claude Code's own OpenTelemetry: its `claude_code.mcp_server_connection`
    /// and `claude_code.tool_result` logs, its metrics, and (beta) its tool spans.
    fn telemetry_setup(&self, target: &TelemetryTarget) -> Option<TelemetrySetup> {
        Some(
            TelemetrySetup::new("claude", HeadersSent::Verified)
                .var("CLAUDE_CODE_ENABLE_TELEMETRY", "1")
                .var("OTEL_LOGS_EXPORTER", "otlp")
                .var("OTEL_METRICS_EXPORTER", "otlp")
                .var("OTEL_TRACES_EXPORTER", "otlp")
                .var("CLAUDE_CODE_ENHANCED_TELEMETRY_BETA", "1")
                .var("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
                .var("OTEL_EXPORTER_OTLP_ENDPOINT", &target.endpoint)
                .otlp_headers(target)
                .settings_env_json("~/.claude/settings.json")
                .note("The beta tool spans (CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1) name each MCP tool a session calls (`mcp__SERVER__TOOL`), so tools used show without payload capture.")
                .note("Connected and failed servers are named only with OTEL_LOG_TOOL_DETAILS=1, which also puts tool input in `tool_parameters`; Tether reads the two names there and drops the input. It is not set here: add it to see which server failed.")
                .note("Claude Code's telemetry says nothing when a server needs a login: such a server stays as its configuration left it."),
        )
    }

    fn read_telemetry(&self, record: &TelemetryRecord, _configured: &[String]) -> TelemetryAnswer {
        telemetry::read(record)
    }
}

impl tether_core::harness::HarnessCensus for PassthroughClaude {
    tether_sdk::forward_reader! {
        census: census::census,
    }
}

impl tether_core::last_mile::LastMile for PassthroughClaude {
    /// Claude Code's last mile, verified on 2.1.197 and 2.1.332 against the
    /// fake model's log of every request (`tests/tests/last_mile.rs`):
    /// `mcp__SERVER__TOOL`, every character outside `[a-zA-Z0-9_-]` an `_`;
    /// of two tools that then share a name the first listed is kept; a tool
    /// whose input schema has a top-level `oneOf`, `anyOf` or `allOf` is
    /// skipped (its MCP log says so); 2.1.332 holds every MCP tool behind
    /// its tool search unless `ENABLE_TOOL_SEARCH` turns it off, 2.1.197
    /// too but not for a model URL other than Anthropic's with the switch
    /// unset (`tool_search`: the rule read from each release's code, which
    /// `Rules::in_context` and `Rules::for_entry` apply to the environment
    /// the host knows; unknown until then); a server whose entry says
    /// `"alwaysLoad": true` has its tools sent up front on both
    /// (`config_scan::read_loading`; `tests/tests/always_load.rs`,
    /// `tests/tests/tool_search.rs`). Releases between the two are not
    /// read: their deferral is unknown.
    fn rules(&self, version: Option<&str>) -> Option<tether_core::last_mile::Rules> {
        use tether_core::last_mile::{Limit, OnCollision, Rules, Shape};
        let search: fn(&tether_core::last_mile::Context) -> _ = match version {
            None => tool_search::newest,
            Some(v) if tether_core::records::version_at_least(v, "2.1.332") => tool_search::newest,
            Some(v) if !tether_core::records::version_at_least(v, "2.1.198") => tool_search::pinned,
            Some(_) => tool_search::unread,
        };
        Some(
            Rules::new(
                claude_tool_name,
                OnCollision::FirstWins,
                "Claude Code 2.1.197–2.1.332, verified",
            )
            .with_dropped_roots(&["oneOf", "anyOf", "allOf"])
            .with_name_limit(Limit {
                max: 128,
                source: "Anthropic Messages API reference: a tool's name is 1 to 128 characters of a-z, A-Z, 0-9, _ and -",
            })
            .with_tool_search(search)
            .with_up_front("alwaysLoad=true")
            // Its own reading of a name (`mcpInfoFromString`): the server
            // is what lies between `mcp__` and the next `__`.
            .with_shape(Shape::Split {
                prefix: "mcp__",
                separator: "__",
            }),
        )
    }
}

impl tether_core::harness::SetupGuide for PassthroughClaude {
    /// `claude mcp add --scope user`, or an entry of `~/.claude.json`'s
    /// `mcpServers` (user scope: no project approval needed).
    fn server_setup(
        &self,
        name: &str,
        command: &str,
        args: &[String],
    ) -> Option<tether_core::passthrough::ServerSetup> {
        let words = [
            "claude", "mcp", "add", "--scope", "user", name, "--", command,
        ];
        Some(
            tether_core::passthrough::ServerSetup::new(tether_sdk::materialize::server_block(
                "~/.claude.json",
                "mcpServers",
                name,
                json!({"command": command, "args": args}),
            ))
            .with_command(tether_sdk::materialize::command_line(
                words.into_iter().chain(args.iter().map(String::as_str)),
            )),
        )
    }
}

impl tether_core::model_tap::ModelTap for PassthroughClaude {
    /// `ANTHROPIC_BASE_URL`: Claude Code sends every model request there
    /// with its own credentials.
    fn model_setup(&self, base_url: &str) -> Option<tether_core::model_tap::ModelSetup> {
        Some(
            tether_core::model_tap::ModelSetup::new("claude", "anthropic_messages")
                .var("ANTHROPIC_BASE_URL", base_url)
                .note("Claude Code sends its requests, with its own API key or token, to this URL; the tap passes them on unchanged (to https://api.anthropic.com unless --upstream says otherwise)."),
        )
    }

    /// `claude-cli/VERSION`; its session in `x-claude-code-session-id`
    /// (2.1.197 and 2.1.332 send it).
    fn model_caller(
        &self,
        headers: &[(&str, &str)],
    ) -> Option<tether_core::model_tap::ModelCaller> {
        use tether_core::model_tap::{ModelCaller, header};
        use tether_sdk::names::product_version;
        let version = product_version(header(headers, "user-agent")?, "claude-cli")?;
        Some(ModelCaller::new(
            Some(version),
            header(headers, "x-claude-code-session-id"),
        ))
    }
}

tether_core::register_plugin!(PLUGIN_NAME, || Box::new(PassthroughClaude));

#[cfg(test)]
mod tests {
    use super::*;
    use tether_core::observer::plan;
    use tether_core::vocab::{EvidenceKind, Provenance};
    use tether_core::{DriveMode, TransportObserver};
    use tether_sdk::conformance::{http_server, sse_server, stdio_server};

    fn ctx(strict: bool) -> PlanContext {
        PlanContext {
            agent_kind: "claude".into(),
            drive_mode: DriveMode::Passthrough,
            capabilities: PassthroughClaude.capabilities(),
            strict,
        }
    }

    #[test]
    fn materializes_every_transport_into_one_config_file() {
        let servers = vec![
            stdio_server("local", "srv", &["-v"], &[("K", "V")]),
            http_server(
                "remote",
                "http://127.0.0.1:1/mcp",
                &[("Authorization", "Bearer t")],
            ),
            sse_server("legacy", "http://127.0.0.1:1/sse", &[]),
        ];
        let plugin: &dyn TransportObserver = &PassthroughClaude;
        let p = plan(Some(plugin), &servers, &ctx(true));
        let m = PassthroughClaude
            .materialize(&p, &ctx(true), Path::new("/private/dir"))
            .expect("materialize");
        assert_eq!(
            m.args,
            [
                "--mcp-config",
                "/private/dir/mcp-config.json",
                "--strict-mcp-config"
            ]
        );
        let doc: Value = serde_json::from_str(&m.files[0].contents).expect("json");
        let command = doc["mcpServers"]["local"]["command"]
            .as_str()
            .expect("command");
        assert!(command.starts_with("${TETHER_MCP_"), "{command}");
        // Values travel in the environment, not in the file.
        assert!(!m.files[0].contents.contains("Bearer t"));
        let env_ref = doc["mcpServers"]["local"]["env"]["K"]
            .as_str()
            .expect("ref");
        let var = env_ref.trim_start_matches("${").trim_end_matches('}');
        assert!(
            m.env.iter().any(|kv| kv.name == var && kv.value == "V"),
            "{env_ref}"
        );
        assert_eq!(doc["mcpServers"]["remote"]["url"], "http://127.0.0.1:1/mcp");
        assert_eq!(doc["mcpServers"]["remote"]["type"], "http");
        assert_eq!(doc["mcpServers"]["legacy"]["type"], "sse");
        let lax = PassthroughClaude
            .materialize(&p, &ctx(false), Path::new("/d"))
            .expect("materialize");
        assert!(!lax.args.contains(&"--strict-mcp-config".to_owned()));
    }

    #[test]
    fn reads_server_status_and_the_tools_claude_holds_from_system_init() {
        let line = r#"{"type":"system","subtype":"init","tools":["Bash","mcp__tether-sentinel__sentinel_echo","mcp__other__a","mcp__other__b"],"mcp_servers":[{"name":"tether-sentinel","status":"connected"},{"name":"other","status":"needs-auth"},{"name":"slow","status":"pending"}]}"#;
        let evidence = PassthroughClaude.read_output(line, Timestamp(7));
        assert_eq!(evidence.len(), 3);
        assert!(
            evidence
                .iter()
                .all(|e| e.kind == EvidenceKind::AgentReported
                    && e.provenance == Provenance::AgentReport)
        );
        assert_eq!(evidence[0].server.as_deref(), Some("tether-sentinel"));
        assert_eq!(evidence[0].reported_status.as_deref(), Some("connected"));
        assert_eq!(evidence[0].tool_count, Some(1));
        assert_eq!(evidence[1].tool_count, Some(2));
        assert_eq!(evidence[2].tool_count, None);
        // With the tool search listed, the MCP tools are held behind it:
        // deferred, and no count says they reached the model.
        let searching = r#"{"type":"system","subtype":"init","tools":["Bash","ToolSearch","mcp__time__convert_time","mcp__time__get_current_time"],"mcp_servers":[{"name":"time","status":"connected"}]}"#;
        let evidence = PassthroughClaude.read_output(searching, Timestamp(7));
        assert_eq!(evidence[0].kind, EvidenceKind::AgentReported);
        assert_eq!(evidence[0].tool_count, None);
        let deferred: Vec<(&str, Option<&str>)> = evidence[1..]
            .iter()
            .map(|e| {
                assert_eq!(e.kind, EvidenceKind::ToolDeferred);
                assert_eq!(e.provenance, Provenance::AgentReport);
                (e.server.as_deref().unwrap_or(""), e.tool.as_deref())
            })
            .collect();
        assert_eq!(
            deferred,
            [
                ("time", Some("convert_time")),
                ("time", Some("get_current_time"))
            ]
        );
        assert!(
            PassthroughClaude
                .read_output("not json", Timestamp(1))
                .is_empty()
        );
        assert!(
            PassthroughClaude
                .read_output(r#"{"type":"assistant"}"#, Timestamp(1))
                .is_empty()
        );
    }
}

#[cfg(test)]
mod conformance {
    #[test]
    fn the_plugin_passes_the_conformance_kit() {
        tether_sdk::conformance::assert_conforms(&super::PassthroughClaude);
    }
}
