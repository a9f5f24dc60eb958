//! tether-passthrough-opencode: the plugin for OpenCode run as a passthrough
//! process (`opencode run …`; as an ACP agent, `opencode acp`, it is the ACP
//! plugin's).
//!
//! - Decides: stdio (`type: local`), streamable HTTP and SSE (`type: remote`;
//!   OpenCode tries streamable HTTP and falls back to SSE) all pass.
//! - Materializes an OpenCode config file in the host's private directory and
//!   points `OPENCODE_CONFIG` at it. OpenCode merges it over the user's own
//!   configuration, so there is no strict mode: the user's servers also load.
//! - Secret-bearing values (the command and its arguments, env and header
//!   values, URLs with userinfo or a query) are `{env:TETHER_MCP_n}`
//!   references. OpenCode substitutes them into the file's *text* before it
//!   parses it, so a value holding `"`, `\`, `{` or a control character would
//!   break the JSON or splice into it: such a server is
//!   `unavailable/materialization_failed`, saying why, rather than delivered.
//! - OpenCode prints no machine-readable MCP status in `run` mode, so it
//!   reports nothing; the observed endpoint and relay are the evidence.
//! - Scans OpenCode's own configuration for `tether inventory`
//!   ([`config_scan`]).
//!
//! Its public modules, each pure (bytes or decoded records in, evidence out):
//! - [`census`]: every record, event, telemetry and configuration kind OpenCode's
//!   shipped code writes or reads that bears on MCP, read or not read with why;
//! - [`plain`]: the plain path of its readers, each record taken whole (the oracle a test holds the fast path to);
//! - [`records`]: OpenCode's own session records, read as `tether sessions` reads them;
//! - [`telemetry`]: OpenCode's own OpenTelemetry, read as evidence (`tether collect`).

pub mod census;
pub mod config_scan;
mod parts;
pub mod plain;
mod policy;
pub mod records;
mod stream_json;
pub mod telemetry;

use std::path::Path;

use serde_json::{Map, Value, json};
use tether_core::passthrough::{Materialized, MaterializedFile, PassthroughStrategy};
use tether_core::telemetry::{HeadersSent, TelemetrySetup, TelemetryTarget};
use tether_core::vocab::ReasonCode;
use tether_core::{
    AgentCapabilities, Decision, DriveMode, Endpoint, KeyValue, Plan, PlanContext,
    PluginDescriptor, ServerSpec, TransportObserver,
};
use tether_sdk::materialize::{EVERY_TRANSPORT, EnvRefs, RefStyle, deliver_first_endpoint};

/// The harness's dialect: the entry shape its scanner reads and the
/// reference spelling its materializer writes (which the harness expands).
pub const DIALECT: tether_sdk::materialize::Dialect = tether_sdk::materialize::Dialect::new(
    tether_inventory::EntryDialect::TypedLocalRemote,
    RefStyle::EnvColon,
);

/// The plugin's registered name.
pub const PLUGIN_NAME: &str = "passthrough-opencode";
/// The agent kinds it handles.
pub const AGENT_KINDS: [&str; 1] = ["opencode"];
/// The file it materializes.
pub const CONFIG_FILE: &str = "opencode.json";
/// The variable that points OpenCode at it.
pub const CONFIG_ENV: &str = "OPENCODE_CONFIG";

/// Decides and materializes MCP servers for OpenCode.
#[derive(Debug, Default, Clone, Copy)]
pub struct PassthroughOpenCode;

/// Whether OpenCode's textual `{env:…}` substitution keeps `value` intact
/// inside a JSON string.
pub fn survives_substitution(value: &str) -> bool {
    !value
        .chars()
        .any(|c| c == '"' || c == '\\' || c == '{' || c == '}' || c.is_control())
}

/// `endpoint` as OpenCode gives it where `unset` variables are not set:
/// each `{env:NAME}` of theirs (kept as written where it was read) is
/// nothing (1.18.33's `ConfigVariable.substitute`: `process.env[n] || ""`),
/// so a header `Bearer {env:TOKEN}` is sent as `Bearer` with no token. The
/// row says `unresolved_variable` (the plan's), naming the variable; its
/// braces are OpenCode's own syntax, not a value to splice.
fn unset_given_nothing(endpoint: &Endpoint, unset: &[String]) -> Endpoint {
    let mut endpoint = endpoint.clone();
    if unset.is_empty() {
        return endpoint;
    }
    let blank = |text: &mut String| {
        for name in unset {
            let reference = format!("{{env:{name}}}");
            if text.contains(&reference) {
                *text = text.replace(&reference, "");
            }
        }
    };
    match &mut endpoint {
        Endpoint::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            blank(command);
            args.iter_mut().for_each(blank);
            env.iter_mut().for_each(|kv| blank(&mut kv.value));
            if let Some(cwd) = cwd {
                blank(cwd);
            }
        }
        Endpoint::Http { url, headers } | Endpoint::Sse { url, headers } => {
            blank(url);
            headers.iter_mut().for_each(|kv| blank(&mut kv.value));
        }
    }
    endpoint
}

fn values(endpoint: &Endpoint) -> Vec<&str> {
    match endpoint {
        Endpoint::Stdio {
            command,
            args,
            env,
            cwd,
        } => std::iter::once(command.as_str())
            .chain(args.iter().map(String::as_str))
            .chain(env.iter().map(|kv| kv.value.as_str()))
            .chain(cwd.as_deref())
            .collect(),
        Endpoint::Http { url, headers } | Endpoint::Sse { url, headers } => {
            std::iter::once(url.as_str())
                .chain(headers.iter().map(|kv| kv.value.as_str()))
                .collect()
        }
    }
}

impl TransportObserver for PassthroughOpenCode {
    fn descriptor(&self) -> PluginDescriptor {
        PluginDescriptor::new(
            PLUGIN_NAME,
            AGENT_KINDS,
            DriveMode::Passthrough,
            env!("CARGO_PKG_VERSION"),
        )
    }

    fn decide(&self, server: &ServerSpec, _: &PlanContext) -> Decision {
        let unsafe_value = server
            .endpoints
            .first()
            .map(|e| unset_given_nothing(e, &server.unset_vars))
            .is_some_and(|e| !values(&e).into_iter().all(survives_substitution));
        if unsafe_value {
            return Decision::Unavailable {
                reason_code: ReasonCode::MaterializationFailed,
                summary: Some(
                    "a value holds a quote, backslash, brace or control character, which OpenCode's {env:…} substitution would splice into its JSON"
                        .into(),
                ),
            };
        }
        deliver_first_endpoint(server)
    }

    fn passthrough(&self) -> Option<&dyn PassthroughStrategy> {
        Some(self)
    }

    fn roles(&self) -> tether_core::harness::Roles<'_> {
        tether_core::harness::Roles::none()
            .records(self)
            .telemetry(self)
            .census(self)
            .last_mile(self)
            .setup(self)
            .model_tap(self)
    }
}

/// One `mcp` entry in OpenCode's shape.
pub fn opencode_entry(endpoint: &Endpoint, refs: &mut EnvRefs) -> Value {
    match endpoint {
        Endpoint::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let command: Vec<String> = std::iter::once(command)
                .chain(args)
                .map(|w| refs.hide(w))
                .collect();
            let mut entry = json!({"type": "local", "command": command, "environment": refs.map(env), "enabled": true});
            // Where it starts (1.18.33's McpLocalConfig `cwd`; a relative
            // one from the workspace directory, as OpenCode resolves it).
            if let Some(cwd) = cwd {
                entry["cwd"] = Value::String(refs.hide(cwd));
            }
            entry
        }
        Endpoint::Http { url, headers } | Endpoint::Sse { url, headers } => {
            json!({"type": "remote", "url": refs.url(url), "headers": refs.map(headers), "enabled": true})
        }
    }
}

impl PassthroughStrategy for PassthroughOpenCode {
    fn capabilities(&self) -> AgentCapabilities {
        EVERY_TRANSPORT
    }

    fn materialize(
        &self,
        plan: &Plan,
        _: &PlanContext,
        dir: &Path,
    ) -> Result<Materialized, String> {
        let mut refs = DIALECT.env_refs();
        let servers: Map<String, Value> = plan
            .delivered()
            .map(|(p, endpoint)| {
                let endpoint = unset_given_nothing(endpoint, &p.spec.unset_vars);
                (p.spec.name.clone(), opencode_entry(&endpoint, &mut refs))
            })
            .collect();
        let contents = serde_json::to_string_pretty(
            &json!({"$schema": "https://opencode.ai/config.json", "mcp": servers}),
        )
        .map_err(|e| format!("cannot encode the OpenCode configuration: {e}"))?;
        let mut env = refs.into_env();
        env.push(KeyValue::new(
            CONFIG_ENV,
            dir.join(CONFIG_FILE).display().to_string(),
        ));
        Ok(Materialized::new(
            vec![],
            env,
            vec![MaterializedFile::private(CONFIG_FILE, contents)],
        ))
    }
}

/// OpenCode's name for `server`'s `tool`: `SERVER_TOOL`, characters
/// outside `[a-zA-Z0-9_-]` replaced by `_`.
fn opencode_tool_name(server: &str, tool: &str) -> String {
    use tether_sdk::names::{replace_outside, word_or_dash};
    format!(
        "{}_{}",
        replace_outside(server, word_or_dash, '_'),
        replace_outside(tool, word_or_dash, '_')
    )
}

impl tether_core::records::RecordReader for PassthroughOpenCode {
    tether_sdk::forward_reader! {
        record_sources: records::sources,
        read_record: records::read,
        // The pinned release and the newest npm serves (`tests/peers`,
        // `tests/peers/newest`), each read in a real session by
        // `tests/tests/harness_sessions.rs`.
        verified_on: "1.18.33"..="1.18.33",
    }

    /// Its database shows each skill the model loaded (the `skill` tool,
    /// with its outcome) and its log each plugin that failed to load; a
    /// plugin that loads, a hook and a skill listing leave no record.
    fn records_show(&self) -> tether_core::harness::RunTimeShown {
        tether_core::harness::RunTimeShown::none().skills_invoked()
    }
}

impl tether_core::telemetry::TelemetryReader for PassthroughOpenCode {
    tether_sdk::forward_reader! {
        read_telemetry: telemetry::read,
    }

    /// OpenCode's own OpenTelemetry (`experimental.openTelemetry`): its
    /// `MCP.*` spans and the "server unavailable" log.
    fn telemetry_setup(&self, target: &TelemetryTarget) -> Option<TelemetrySetup> {
        Some(
            TelemetrySetup::new("opencode", HeadersSent::Verified)
                .var("OTEL_EXPORTER_OTLP_ENDPOINT", &target.endpoint)
                .otlp_headers(target)
                .note("OpenCode sends OpenTelemetry only with `\"experimental\": {\"openTelemetry\": true}` in its configuration.")
                .note("OpenCode's MCP spans carry no server name, so a failed or needs-auth server is not shown from its telemetry; a tool name (`server_tool`) is split only where exactly one configured server fits, since Tether does not guess."),
        )
    }
}

impl tether_core::harness::HarnessCensus for PassthroughOpenCode {
    tether_sdk::forward_reader! {
        census: census::census,
    }
}

impl tether_core::last_mile::LastMile for PassthroughOpenCode {
    /// OpenCode's last mile, verified on 1.18.33 against the fake model's
    /// log of every request (`tests/tests/last_mile.rs`): `SERVER_TOOL`,
    /// every character outside `[a-zA-Z0-9_-]` an `_`; of two tools that
    /// then share a name the last listed is kept; no schema is dropped and
    /// no name cut. Its provider is the user's choice, so no provider's
    /// limit is claimed.
    fn rules(&self, version: Option<&str>) -> Option<tether_core::last_mile::Rules> {
        use tether_core::last_mile::{OnCollision, Rules};
        let _ = version;
        Some(Rules::new(
            opencode_tool_name,
            OnCollision::LastWins,
            "OpenCode 1.18.33, verified",
        ))
    }
}

impl tether_core::harness::SetupGuide for PassthroughOpenCode {
    /// An entry of `~/.config/opencode/opencode.json`'s `mcp`.
    fn server_setup(
        &self,
        name: &str,
        command: &str,
        args: &[String],
    ) -> Option<tether_core::passthrough::ServerSetup> {
        let mut line = vec![command.to_owned()];
        line.extend(args.iter().cloned());
        Some(tether_core::passthrough::ServerSetup::new(
            tether_sdk::materialize::server_block(
                "~/.config/opencode/opencode.json",
                "mcp",
                name,
                json!({"type": "local", "command": line, "enabled": true}),
            ),
        ))
    }
}

impl tether_core::model_tap::ModelTap for PassthroughOpenCode {
    /// A provider's `options.baseURL` in `opencode.json`, at the tap.
    fn model_setup(&self, base_url: &str) -> Option<tether_core::model_tap::ModelSetup> {
        let block =
            json!({"provider": {"openai": {"options": {"baseURL": format!("{base_url}/v1")}}}});
        Some(
            tether_core::model_tap::ModelSetup::new("opencode", "openai_chat")
                .snippet(
                    "~/.config/opencode/opencode.json",
                    serde_json::to_string_pretty(&block).ok()?,
                )
                .note("Shown for the `openai` provider; any provider that takes `options.baseURL` goes the same way, with --upstream its own base URL. Its key stays yours and passes through unchanged."),
        )
    }

    /// `opencode/VERSION`; its session (`ses_…`) in `x-session-id` (1.18
    /// sends it).
    fn model_caller(
        &self,
        headers: &[(&str, &str)],
    ) -> Option<tether_core::model_tap::ModelCaller> {
        use tether_core::model_tap::{ModelCaller, header};
        use tether_sdk::names::product_version;
        let version = product_version(header(headers, "user-agent")?, "opencode")?;
        Some(ModelCaller::new(
            Some(version),
            header(headers, "x-session-id"),
        ))
    }
}

tether_core::register_plugin!(PLUGIN_NAME, || Box::new(PassthroughOpenCode));

#[cfg(test)]
mod tests {
    use super::*;
    use tether_core::observer::plan;
    use tether_sdk::conformance::{sse_server, stdio_server};

    fn ctx() -> PlanContext {
        PlanContext {
            agent_kind: "opencode".into(),
            drive_mode: DriveMode::Passthrough,
            capabilities: PassthroughOpenCode.capabilities(),
            strict: true,
        }
    }

    #[test]
    fn servers_become_mcp_entries_with_env_references() {
        let servers = vec![
            stdio_server(
                "local",
                "/home/u/srv",
                &["--token=arg-secret"],
                &[("API_KEY", "env-secret")],
            ),
            sse_server(
                "remote",
                "https://h.example/sse",
                &[("X-Key", "hdr-secret")],
            ),
            stdio_server("quoted", "srv", &["say \"hi\""], &[]),
        ];
        let planned = plan(Some(&PassthroughOpenCode), &servers, &ctx());
        let quoted = &planned.servers[2];
        assert!(matches!(
            &quoted.decision,
            Decision::Unavailable { reason_code: ReasonCode::MaterializationFailed, summary: Some(s) } if !s.contains("say")
        ));
        let m = PassthroughOpenCode
            .materialize(&planned, &ctx(), Path::new("/private/dir"))
            .expect("materialize");
        let file = &m.files[0].contents;
        for secret in ["arg-secret", "env-secret", "hdr-secret", "/home/u"] {
            assert!(!file.contains(secret), "{secret} in {file}");
        }
        let doc: Value = serde_json::from_str(file).expect("json");
        assert_eq!(
            doc["mcp"]["local"]["command"],
            json!(["{env:TETHER_MCP_1}", "{env:TETHER_MCP_2}"])
        );
        assert_eq!(
            doc["mcp"]["local"]["environment"]["API_KEY"],
            "{env:TETHER_MCP_3}"
        );
        assert_eq!(doc["mcp"]["remote"]["type"], "remote");
        assert_eq!(doc["mcp"]["remote"]["url"], "https://h.example/sse");
        assert!(doc["mcp"].get("quoted").is_none());
        assert!(
            m.env
                .iter()
                .any(|kv| kv.name == CONFIG_ENV && kv.value == "/private/dir/opencode.json")
        );
    }

    /// GIVEN a remote server whose header references a variable that is
    /// not set (`Bearer {env:TOKEN}`, kept as written) WHEN planned and
    /// materialized THEN it is delivered with its row's
    /// `unresolved_variable`, and its header is given as OpenCode gives it
    /// (the reference is nothing), never refused for its braces.
    #[test]
    fn an_unset_reference_is_given_nothing_as_opencode_gives_it() {
        let server = sse_server(
            "remote",
            "https://h.example/mcp",
            &[("Authorization", "Bearer {env:TOKEN}")],
        )
        .with_unset_vars(vec!["TOKEN".into()]);
        let planned = plan(Some(&PassthroughOpenCode), &[server], &ctx());
        let only = &planned.servers[0];
        assert!(
            matches!(only.decision, Decision::Deliver { .. }),
            "{:?}",
            only.decision
        );
        assert_eq!(only.row().reason_code, Some(ReasonCode::UnresolvedVariable));
        let m = PassthroughOpenCode
            .materialize(&planned, &ctx(), Path::new("/private/dir"))
            .expect("materialize");
        let file = &m.files[0].contents;
        assert!(!file.contains("{env:TOKEN}"), "{file}");
        assert!(
            m.env.iter().all(|kv| !kv.value.contains("{env:TOKEN}")),
            "{:?}",
            m.env
        );
    }

    /// GIVEN a local server with a working directory WHEN materialized
    /// THEN its entry has OpenCode's `cwd` (1.18.33's McpLocalConfig), as a
    /// reference the environment fills, never the path itself.
    #[test]
    fn a_working_directory_is_given_as_opencode_s_cwd() {
        let server = ServerSpec::new(
            "local",
            tether_core::vocab::ServerSource::Profile,
            Endpoint::Stdio {
                command: "srv".into(),
                args: vec![],
                env: vec![],
                cwd: Some("/home/u/secret-dir".into()),
            },
        );
        let planned = plan(Some(&PassthroughOpenCode), &[server], &ctx());
        let m = PassthroughOpenCode
            .materialize(&planned, &ctx(), Path::new("/private/dir"))
            .expect("materialize");
        let file = &m.files[0].contents;
        assert!(!file.contains("secret-dir"), "{file}");
        let doc: Value = serde_json::from_str(file).expect("json");
        let cwd = doc["mcp"]["local"]["cwd"].as_str().expect("a cwd");
        let name = cwd
            .strip_prefix("{env:")
            .and_then(|c| c.strip_suffix('}'))
            .expect("a reference");
        assert!(
            m.env
                .iter()
                .any(|kv| kv.name == name && kv.value == "/home/u/secret-dir"),
            "{:?}",
            m.env
        );
    }

    #[test]
    fn the_plugin_passes_the_conformance_kit() {
        tether_sdk::conformance::assert_conforms(&PassthroughOpenCode);
    }
}
