//! tether-passthrough-codex: the plugin for the Codex CLI run as a passthrough
//! process.
//!
//! - Decides: stdio and streamable HTTP pass; Codex has no SSE, so SSE-only
//!   servers are `filtered/sse_unsupported`.
//! - Materializes repeated `-c mcp_servers.<name>.<key>=<TOML value>` flags:
//!   `command`, `args` and `env_vars` for stdio; `url` and `env_http_headers`
//!   for http. Names that are not TOML bare keys are quoted. No secret value
//!   appears in the flags (which `ps` shows): every value travels in the
//!   process environment under a name of its own (`TETHER_MCP_n`), forwarded
//!   by name. A stdio server is started by `sh -c 'set -- "$TETHER_MCP_1" …;
//!   export TOKEN="$TETHER_MCP_4"; unset …; exec "$@"'`, so it gets exactly
//!   its own values, even when another server names the same variable (a
//!   stdio env name that `sh` cannot set is `unavailable/materialization_failed`).
//!   Header values go through `env_http_headers`. An http URL with userinfo, a query or a fragment has no such
//!   indirection, so it is `filtered/policy_denied`.
//! - Never sets or relocates `CODEX_HOME`: the flags are the whole delivery.
//!   The flags carry secrets, so nothing here logs them (the host's process
//!   debug output shows only their number).
//!
//! Its public modules, each pure (bytes or decoded records in, evidence out):
//! - [`census`]: every record, event, telemetry and configuration kind Codex's
//!   shipped code writes or reads that bears on MCP, read or not read with why;
//! - [`records`]: Codex's own session records, read as `tether sessions` reads them;
//! - [`telemetry`]: Codex's own OpenTelemetry, read as evidence (`tether collect`);
//! - [`config_scan`]: its configuration, scanned for `tether inventory`.

pub mod census;
pub mod config_scan;
mod policy;
pub mod records;
pub mod telemetry;

use std::path::Path;

use tether_core::passthrough::{Materialized, PassthroughStrategy};
use tether_core::telemetry::{
    HeadersSent, SetupSnippet, TelemetryAnswer, TelemetryRecord, TelemetrySetup, TelemetryTarget,
};
use tether_core::vocab::{ReasonCode, Transport};
use tether_core::{
    AgentCapabilities, Decision, Delivery, DriveMode, Endpoint, KeyValue, Plan, PlanContext,
    PluginDescriptor, ServerSpec, TransportObserver,
};
use tether_sdk::materialize::{EnvRefs, RefStyle, url_carries_secrets};

/// The harness's dialect: the entry shape its scanner reads and the
/// reference spelling its materializer writes (which the harness expands).
pub const DIALECT: tether_sdk::materialize::Dialect = tether_sdk::materialize::Dialect::new(
    tether_inventory::EntryDialect::TomlTable,
    RefStyle::Name,
);

/// The plugin's registered name.
pub const PLUGIN_NAME: &str = "passthrough-codex";

/// Decides and materializes MCP servers for the Codex CLI.
#[derive(Debug, Default, Clone, Copy)]
pub struct PassthroughCodex;

impl TransportObserver for PassthroughCodex {
    fn descriptor(&self) -> PluginDescriptor {
        PluginDescriptor::new(
            PLUGIN_NAME,
            ["codex"],
            DriveMode::Passthrough,
            env!("CARGO_PKG_VERSION"),
        )
    }

    fn decide(&self, server: &ServerSpec, _: &PlanContext) -> Decision {
        // A URL carrying credentials would sit on Codex's command line.
        let exposed = |e: &Endpoint| match e {
            Endpoint::Http { url, .. } => url_carries_secrets(url),
            _ => false,
        };
        let mut http = server
            .endpoints
            .iter()
            .filter(|e| e.transport() == Transport::Http)
            .peekable();
        let has_stdio = server
            .endpoints
            .iter()
            .any(|e| e.transport() == Transport::Stdio);
        if http.peek().is_some() && !has_stdio && http.all(exposed) {
            return Decision::Filter {
                reason_code: ReasonCode::PolicyDenied,
                summary: Some(
                    "a URL with credentials or a query would be exposed on Codex's command line"
                        .into(),
                ),
            };
        }
        let supported = |t: &Transport| matches!(t, Transport::Stdio | Transport::Http);
        match server
            .endpoints
            .iter()
            .map(|e| e.transport())
            .find(supported)
        {
            // The shell that starts the server sets its variables by name.
            Some(Transport::Stdio) if !stdio_env_names_are_identifiers(server) => {
                Decision::Unavailable {
                    reason_code: ReasonCode::MaterializationFailed,
                    summary: Some(
                        "an env name is not a shell identifier, so Codex cannot be given it".into(),
                    ),
                }
            }
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

/// Whether every env name of the server's stdio endpoint can be set by `sh`
/// (`[A-Za-z_][A-Za-z0-9_]*`).
fn stdio_env_names_are_identifiers(server: &ServerSpec) -> bool {
    let identifier = |name: &str| {
        let mut chars = name.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    server.endpoints.iter().all(|e| match e {
        Endpoint::Stdio { env, .. } => env.iter().all(|kv| identifier(&kv.name)),
        _ => true,
    })
}

/// A TOML key: bare when it may be, quoted otherwise.
pub fn toml_key(name: &str) -> String {
    let bare = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        name.to_owned()
    } else {
        toml::Value::String(name.to_owned()).to_string()
    }
}

fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

fn toml_array(items: &[String]) -> String {
    toml::Value::Array(items.iter().cloned().map(toml::Value::String).collect()).to_string()
}

fn toml_table(pairs: &[KeyValue]) -> String {
    let inner: Vec<String> = pairs
        .iter()
        .map(|kv| format!("{} = {}", toml_key(&kv.name), toml_string(&kv.value)))
        .collect();
    format!("{{ {} }}", inner.join(", "))
}

/// The `-c` flags for one server, and the environment that carries its
/// secret values: stdio env values are forwarded by name (`env_vars`), header
/// values through `env_http_headers`, so neither appears on the command line.
pub fn codex_flags(name: &str, endpoint: &Endpoint, env: &mut EnvRefs) -> Vec<String> {
    let key = format!("mcp_servers.{}", toml_key(name));
    let mut set = Vec::new();
    let mut flag = |field: &str, value: String| {
        set.push("-c".to_owned());
        set.push(format!("{key}.{field}={value}"));
    };
    match endpoint {
        Endpoint::Stdio {
            command,
            args,
            env: vars,
            ..
        } => {
            // Codex takes the command and its arguments only as flag values,
            // which `ps` shows, and forwards variables by name from one
            // process environment, where two servers' `SHARED_TOKEN` would
            // be one (the last wins). So every value this server needs
            // travels under a name of its own (`TETHER_MCP_n`), and a shell
            // sets the server's real names from them, drops the carriers and
            // starts it: each server gets exactly its own values.
            let start = env.env().len();
            let words: Vec<String> = std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .map(|w| format!("\"${}\"", env.var(w)))
                .collect();
            let mut steps = vec![format!("set -- {}", words.join(" "))];
            steps.extend(
                vars.iter()
                    .map(|kv| format!("export {}=\"${}\"", kv.name, env.var(&kv.value))),
            );
            let names: Vec<String> = env.env()[start..]
                .iter()
                .map(|kv| kv.name.clone())
                .collect();
            steps.push(format!("unset {}", names.join(" ")));
            steps.push("exec \"$@\"".to_owned());
            let script = steps.join("; ");
            flag("command", toml_string("sh"));
            flag("args", toml_array(&["-c".to_owned(), script]));
            flag("env_vars", toml_array(&names));
        }
        Endpoint::Http { url, headers } => {
            flag("url", toml_string(url));
            if !headers.is_empty() {
                let refs: Vec<KeyValue> = headers
                    .iter()
                    .map(|kv| KeyValue::new(kv.name.clone(), env.var(&kv.value)))
                    .collect();
                flag("env_http_headers", toml_table(&refs));
            }
        }
        // Filtered before materialization; nothing to say to Codex.
        Endpoint::Sse { .. } => {}
    }
    set
}

impl PassthroughStrategy for PassthroughCodex {
    fn capabilities(&self) -> AgentCapabilities {
        AgentCapabilities::new(Some(true), Some(false), Some(false))
    }

    fn materialize(&self, plan: &Plan, _: &PlanContext, _: &Path) -> Result<Materialized, String> {
        let mut env = DIALECT.env_refs();
        let args = plan
            .delivered()
            .flat_map(|(p, endpoint)| codex_flags(&p.spec.name, endpoint, &mut env))
            .collect();
        Ok(Materialized::new(args, env.into_env(), vec![]))
    }
}

/// Codex's name for `server`'s `tool`: `TOOL` in the namespace
/// `mcp__SERVER` (written `mcp__SERVER/TOOL`), characters outside
/// `[a-zA-Z0-9_]` (a `-` too) replaced by `_`.
fn codex_tool_name(server: &str, tool: &str) -> String {
    use tether_sdk::names::replace_outside;
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    format!(
        "mcp__{}/{}",
        replace_outside(server, word, '_'),
        replace_outside(tool, word, '_')
    )
}

impl tether_core::records::RecordReader for PassthroughCodex {
    tether_sdk::forward_reader! {
        record_sources: records::sources,
        read_record: records::read,
        // The pinned release and the newest npm serves (`tests/peers`,
        // `tests/peers/newest`), each read in a real session by
        // `tests/tests/harness_sessions.rs`.
        verified_on: "0.118.0"..="0.171.0",
    }

    /// Its rollouts show the skills listed for the model (`world_state`'s
    /// `host_skills`); a skill's use (the model reads its file) and a
    /// hook's run (its output only, injected as a message) leave no record
    /// of their own.
    fn records_show(&self) -> tether_core::harness::RunTimeShown {
        tether_core::harness::RunTimeShown::none().skills_listed()
    }
}

impl tether_core::telemetry::TelemetryReader for PassthroughCodex {
    /// Codex's own OpenTelemetry: `codex.conversation_starts` (its servers),
    /// `codex.tool_result`, the `codex.mcp.*` metrics and the MCP spans. Codex
    /// reads its exporters from `[otel]` in its configuration, one per signal.
    fn telemetry_setup(&self, target: &TelemetryTarget) -> Option<TelemetrySetup> {
        let exporter = |path: &str| {
            format!(
                "{{ otlp-http = {{ endpoint = {}, protocol = \"binary\", headers = {{ \"Authorization\" = {} }} }} }}",
                toml_string(&format!("{}{path}", target.endpoint)),
                toml_string(&target.authorization),
            )
        };
        let text = format!(
            "[otel]\nlog_user_prompt = false\nexporter = {}\ntrace_exporter = {}\nmetrics_exporter = {}\n",
            exporter("/v1/logs"),
            exporter("/v1/traces"),
            exporter("/v1/metrics"),
        );
        let mut setup = TelemetrySetup::new("codex", HeadersSent::Verified)
            .note("`log_user_prompt = false` keeps prompts out of Codex's own records; `codex.tool_result` still carries tool arguments, which Tether drops.");
        let block = SetupSnippet::new("~/.codex/config.toml", text);
        // Its configuration file is its settings: the same block either way.
        setup.settings = Some(block.clone());
        setup.snippet = Some(block);
        Some(setup)
    }

    fn read_telemetry(&self, record: &TelemetryRecord, _configured: &[String]) -> TelemetryAnswer {
        telemetry::read(record)
    }
}

impl tether_core::harness::HarnessCensus for PassthroughCodex {
    tether_sdk::forward_reader! {
        census: census::census,
    }
}

impl tether_core::last_mile::LastMile for PassthroughCodex {
    /// Codex's last mile, verified on 0.171.0 against the fake model's log
    /// of every request (`tests/tests/last_mile.rs`): the tool `TOOL` in the
    /// namespace `mcp__SERVER`, every character outside `[a-zA-Z0-9_]` an
    /// `_`; tools that then share a name each get a short hash appended, so
    /// all reach the model; no schema is dropped and no name cut.
    fn rules(&self, version: Option<&str>) -> Option<tether_core::last_mile::Rules> {
        use tether_core::last_mile::{Limit, OnCollision, Rules, Shape};
        let _ = version;
        Some(
            Rules::new(codex_tool_name, OnCollision::Suffixed, "Codex 0.171.0, verified")
                .with_name_limit(Limit {
                    max: 64,
                    source: "OpenAI API reference: a function's name is at most 64 characters of a-z, A-Z, 0-9, _ and -",
                })
                // The namespace `mcp__SERVER` is the server (a server's
                // name never holds `/` as Codex spells it).
                .with_shape(Shape::Split {
                    prefix: "mcp__",
                    separator: "/",
                }),
        )
    }
}

impl tether_core::harness::SetupGuide for PassthroughCodex {
    /// `codex mcp add`, or a `[mcp_servers.NAME]` table of
    /// `~/.codex/config.toml`.
    fn server_setup(
        &self,
        name: &str,
        command: &str,
        args: &[String],
    ) -> Option<tether_core::passthrough::ServerSetup> {
        let words = ["codex", "mcp", "add", name, "--", command];
        Some(
            tether_core::passthrough::ServerSetup::new(SetupSnippet::new(
                "~/.codex/config.toml",
                format!(
                    "[mcp_servers.{}]\ncommand = {}\nargs = {}\n",
                    toml_key(name),
                    toml_string(command),
                    toml_array(args)
                ),
            ))
            .with_command(tether_sdk::materialize::command_line(
                words.into_iter().chain(args.iter().map(String::as_str)),
            )),
        )
    }
}

impl tether_core::model_tap::ModelTap for PassthroughCodex {
    /// A model provider of its own in `config.toml`, at the tap, speaking
    /// the Responses API.
    fn model_setup(&self, base_url: &str) -> Option<tether_core::model_tap::ModelSetup> {
        let url = serde_json::to_string(&format!("{base_url}/v1")).ok()?;
        Some(
            tether_core::model_tap::ModelSetup::new("codex", "openai_responses")
                .snippet(
                    "~/.codex/config.toml",
                    format!(
                        "model_provider = \"tether-tap\"\n\n[model_providers.tether-tap]\nname = \"OpenAI through tether tap\"\nbase_url = {url}\nwire_api = \"responses\"\nenv_key = \"OPENAI_API_KEY\"\n"
                    ),
                )
                .note("The provider sends your OPENAI_API_KEY, unchanged, through the tap to https://api.openai.com (or --upstream). A ChatGPT sign-in talks to ChatGPT's own backend instead, which this provider does not cover."),
        )
    }

    /// `codex_exec/VERSION` (or `codex_cli_rs/…`); its session (the
    /// thread its rollout is named by) in `session-id` (0.171 sends it).
    fn model_caller(
        &self,
        headers: &[(&str, &str)],
    ) -> Option<tether_core::model_tap::ModelCaller> {
        use tether_core::model_tap::{ModelCaller, header};
        use tether_sdk::names::product_version;
        let agent = header(headers, "user-agent")?;
        let version = ["codex_exec", "codex_cli_rs", "codex_vscode"]
            .iter()
            .find_map(|p| product_version(agent, p))?;
        let session = ["session-id", "session_id", "thread-id"]
            .iter()
            .find_map(|h| header(headers, h));
        Some(ModelCaller::new(Some(version), session))
    }
}

tether_core::register_plugin!(PLUGIN_NAME, || Box::new(PassthroughCodex));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_are_not_bare_keys_are_quoted() {
        assert_eq!(toml_key("tether-sentinel"), "tether-sentinel");
        assert_eq!(toml_key("my server.v2"), "\"my server.v2\"");
        assert_eq!(toml_key("quote\"d"), "'quote\"d'");
    }

    #[test]
    fn stdio_and_http_become_toml_overrides_that_parse_and_hide_values() {
        let stdio = Endpoint::Stdio {
            command: "/bin/srv".into(),
            args: vec!["--flag".into(), "a \"quoted\" arg".into()],
            env: vec![KeyValue::new("TOKEN", "s3cr\\et")],
            cwd: None,
        };
        let mut refs = DIALECT.env_refs();
        let flags = codex_flags("local", &stdio, &mut refs);
        let env = refs.env().to_vec();
        assert_eq!(flags.iter().filter(|f| *f == "-c").count(), 3);
        for hidden in ["s3cr", "/bin/srv", "quoted"] {
            assert!(
                flags.iter().all(|f| !f.contains(hidden)),
                "{hidden} in {flags:?}"
            );
        }
        assert!(env.contains(&KeyValue::new("TETHER_MCP_1", "/bin/srv")));
        assert!(env.contains(&KeyValue::new("TETHER_MCP_4", "s3cr\\et")));
        assert!(
            env.iter().all(|kv| kv.name != "TOKEN"),
            "the server's own name is set by the shell, never shared"
        );
        for pair in flags.chunks(2) {
            let (key, value) = pair[1].split_once('=').expect("k=v");
            let doc: toml::Table =
                toml::from_str(&format!("v = {value}")).expect("valid TOML value");
            assert!(key.starts_with("mcp_servers.local."), "{key}");
            if key.ends_with(".args") {
                let script = doc["v"].as_array().expect("array")[1]
                    .as_str()
                    .expect("script");
                assert_eq!(
                    script,
                    "set -- \"$TETHER_MCP_1\" \"$TETHER_MCP_2\" \"$TETHER_MCP_3\"; \
                     export TOKEN=\"$TETHER_MCP_4\"; \
                     unset TETHER_MCP_1 TETHER_MCP_2 TETHER_MCP_3 TETHER_MCP_4; exec \"$@\""
                );
            }
            if key.ends_with(".env_vars") {
                let names: Vec<&str> = doc["v"]
                    .as_array()
                    .expect("array")
                    .iter()
                    .filter_map(|n| n.as_str())
                    .collect();
                assert_eq!(
                    names,
                    [
                        "TETHER_MCP_1",
                        "TETHER_MCP_2",
                        "TETHER_MCP_3",
                        "TETHER_MCP_4"
                    ]
                );
            }
        }
        let http = Endpoint::Http {
            url: "http://127.0.0.1:9/mcp".into(),
            headers: vec![KeyValue::new("X-Key", "k-secret")],
        };
        let flags = codex_flags("remote server", &http, &mut refs);
        let env = refs.env();
        assert_eq!(
            flags[1],
            "mcp_servers.\"remote server\".url=\"http://127.0.0.1:9/mcp\""
        );
        assert!(flags[3].starts_with("mcp_servers.\"remote server\".env_http_headers="));
        assert!(!flags[3].contains("k-secret"));
        assert!(
            env.iter()
                .any(|kv| kv.value == "k-secret" && flags[3].contains(&kv.name))
        );
    }
}

#[cfg(test)]
mod conformance {
    #[test]
    fn the_plugin_passes_the_conformance_kit() {
        tether_sdk::conformance::assert_conforms(&super::PassthroughCodex);
    }
}
