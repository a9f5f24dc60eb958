//! tether-passthrough-gemini: the plugins for the Gemini CLI (`gemini -p …`)
//! and its fork Qwen Code (`qwen -p …`), run as passthrough processes.
//!
//! - Decides: stdio (`command`), streamable HTTP (`httpUrl`) and SSE (`url`)
//!   all pass, with headers.
//! - Materializes `mcpServers` into the project settings file the CLI reads
//!   from its working directory (`.gemini/settings.json`,
//!   `.qwen/settings.json`;
//!   [`FilePlace::Project`](tether_core::passthrough::FilePlace)): neither
//!   CLI takes a settings file by flag that expands variables, and Gemini refuses a
//!   system settings file under a world-writable directory such as `/tmp`.
//!   The host never overwrites a settings file that is already there. Every
//!   secret-bearing value (the command, its arguments and cwd, env and header
//!   values, URLs with userinfo or a query) is a `$TETHER_MCP_n` reference
//!   that the CLI expands from the environment the host sets.
//! - Sets the workspace trusted for a Gemini run (`GEMINI_CLI_TRUST_WORKSPACE`),
//!   since an untrusted folder's settings are ignored, and in strict mode
//!   passes `--allowed-mcp-server-names` with the delivered names, so servers
//!   from the user's own settings stay out.
//! - Qwen Code prints a Claude-style `system/init` line with
//!   `--output-format stream-json`; its `mcp_servers` statuses and
//!   `mcp__<server>__` tools become `agent_reported` evidence. Gemini's
//!   stream-json `init` line names no servers, so Gemini reports nothing.
//!   Either's stream-json saved to a file is read by path as a session
//!   record (`stream_json`, the same init reading for Qwen).
//! - Scans both CLIs' configuration for `tether inventory` ([`config_scan`]).
//!
//! Its public modules, each pure (bytes or decoded records in, evidence out):
//! - [`census`]: every record, event, telemetry and configuration kind Gemini CLI and Qwen Code's
//!   shipped code writes or reads that bears on MCP, read or not read with why;
//! - [`records`]: Gemini CLI and Qwen Code's own session records, read as `tether sessions` reads them;
//! - [`telemetry`]: Gemini CLI and Qwen Code's own OpenTelemetry, read as evidence (`tether collect`).

pub mod census;
pub mod config_scan;
mod ended;
mod older;
mod policy;
pub mod records;
mod shape;
mod stream_json;
pub mod telemetry;

use std::path::Path;

use serde_json::{Map, Value, json};
use tether_core::model::{Evidence, Timestamp};
use tether_core::passthrough::{Materialized, MaterializedFile, PassthroughStrategy};
use tether_core::telemetry::{HeadersSent, TelemetrySetup, TelemetryTarget};
use tether_core::{
    AgentCapabilities, Decision, DriveMode, Endpoint, KeyValue, Plan, PlanContext,
    PluginDescriptor, ServerSpec, TransportObserver,
};
use tether_sdk::materialize::{
    EVERY_TRANSPORT, EnvRefs, RefStyle, deliver_first_endpoint, stream_json_init_reports,
};

/// One member of the Gemini CLI family, as a plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dialect {
    /// The registered plugin name.
    pub plugin: &'static str,
    /// The agent kinds it handles.
    pub kinds: &'static [&'static str],
    /// The project settings file it materializes.
    pub settings: &'static str,
    /// Environment that makes the CLI trust the working directory.
    pub trust_env: &'static [(&'static str, &'static str)],
    /// Whether it prints a Claude-style `system/init` line.
    pub reports_init: bool,
}

/// The Gemini CLI.
/// The harness's dialect: the entry shape its scanner reads and the
/// reference spelling its materializer writes (which the harness expands).
pub const DIALECT: tether_sdk::materialize::Dialect = tether_sdk::materialize::Dialect::new(
    tether_inventory::EntryDialect::McpJsonHttpUrl,
    RefStyle::Dollar,
);

/// Gemini CLI.
pub const GEMINI: Dialect = Dialect {
    plugin: "passthrough-gemini",
    kinds: &["gemini", "gemini-cli"],
    settings: ".gemini/settings.json",
    trust_env: &[("GEMINI_CLI_TRUST_WORKSPACE", "true")],
    reports_init: false,
};

/// Qwen Code.
pub const QWEN: Dialect = Dialect {
    plugin: "passthrough-qwen",
    kinds: &["qwen", "qwen-code"],
    settings: ".qwen/settings.json",
    // Qwen Code has no such switch; its folder trust is off unless the
    // user turned it on (then an untrusted project's settings are ignored).
    trust_env: &[],
    reports_init: true,
};

/// Decides and materializes MCP servers for one Gemini-family CLI.
#[derive(Debug, Clone, Copy)]
pub struct PassthroughGemini(pub Dialect);

impl TransportObserver for PassthroughGemini {
    fn descriptor(&self) -> PluginDescriptor {
        PluginDescriptor::new(
            self.0.plugin,
            self.0.kinds.iter().copied(),
            DriveMode::Passthrough,
            env!("CARGO_PKG_VERSION"),
        )
    }

    fn decide(&self, server: &ServerSpec, _: &PlanContext) -> Decision {
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

/// One `mcpServers` entry in the Gemini settings shape; secret-bearing values
/// become `$VAR` references whose values go into `refs`.
pub fn settings_entry(endpoint: &Endpoint, refs: &mut EnvRefs) -> Value {
    match endpoint {
        Endpoint::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut entry = json!({
                "command": refs.hide(command),
                "args": args.iter().map(|a| refs.hide(a)).collect::<Vec<_>>(),
                "env": refs.map(env),
            });
            if let Some(cwd) = cwd {
                entry["cwd"] = Value::String(refs.hide(cwd));
            }
            entry
        }
        Endpoint::Http { url, headers } => {
            json!({"httpUrl": refs.url(url), "headers": refs.map(headers)})
        }
        Endpoint::Sse { url, headers } => {
            json!({"url": refs.url(url), "headers": refs.map(headers)})
        }
    }
}

/// The `{"mcpServers": …}` settings document for a plan's delivered servers,
/// and the environment its references need.
pub fn settings_document(plan: &Plan) -> Result<(String, Vec<KeyValue>), String> {
    let mut refs = DIALECT.env_refs();
    let servers: Map<String, Value> = plan
        .delivered()
        .map(|(p, endpoint)| (p.spec.name.clone(), settings_entry(endpoint, &mut refs)))
        .collect();
    let contents = serde_json::to_string_pretty(&json!({"mcpServers": servers}))
        .map_err(|e| format!("cannot encode the settings: {e}"))?;
    Ok((contents, refs.into_env()))
}

impl PassthroughStrategy for PassthroughGemini {
    fn capabilities(&self) -> AgentCapabilities {
        EVERY_TRANSPORT
    }

    fn materialize(
        &self,
        plan: &Plan,
        ctx: &PlanContext,
        _: &Path,
    ) -> Result<Materialized, String> {
        let (contents, mut env) = settings_document(plan)?;
        env.extend(self.0.trust_env.iter().map(|(k, v)| KeyValue::new(*k, *v)));
        let mut args = Vec::new();
        if ctx.strict {
            for (p, _) in plan.delivered() {
                args.push("--allowed-mcp-server-names".to_owned());
                args.push(p.spec.name.clone());
            }
        }
        Ok(Materialized::new(
            args,
            env,
            vec![MaterializedFile::project(self.0.settings, contents)],
        ))
    }

    fn reports_servers(&self) -> bool {
        self.0.reports_init
    }

    fn read_output(&self, line: &str, at: Timestamp) -> Vec<Evidence> {
        if self.0.reports_init {
            stream_json_init_reports(line, at)
        } else {
            Vec::new()
        }
    }
}

impl tether_core::records::RecordReader for PassthroughGemini {
    /// Both chat records show the skills the model invoked; Gemini CLI's
    /// telemetry shows each hook's run (`gemini_cli.hook_call`) and the
    /// extensions loaded (`gemini_cli.config`'s `extensions`), Qwen Code's
    /// each skill launch.
    fn records_show(&self) -> tether_core::harness::RunTimeShown {
        tether_core::harness::RunTimeShown::none().skills_invoked()
    }

    fn record_sources(&self) -> Vec<tether_core::records::RecordSource> {
        records::sources(self.flavor())
    }

    /// The pinned release and the newest npm serves (`tests/peers`,
    /// `tests/peers/newest`), each read in a real session by
    /// `tests/tests/harness_sessions.rs`.
    fn records_verified_on(&self) -> Option<tether_core::records::VerifiedRange> {
        use tether_core::records::VerifiedRange;
        Some(match self.flavor() {
            telemetry::Flavor::Gemini => VerifiedRange::new("0.61.0", "0.61.0"),
            telemetry::Flavor::Qwen => VerifiedRange::new("0.15.10", "0.24.4"),
        })
    }

    fn read_record(
        &self,
        file: &tether_core::records::RecordFile<'_>,
        record: &str,
    ) -> tether_core::records::RecordAnswer {
        records::read(self.flavor(), file, record)
    }
}

impl tether_core::telemetry::TelemetryReader for PassthroughGemini {
    fn telemetry_shows(&self) -> tether_core::harness::RunTimeShown {
        let shown = tether_core::harness::RunTimeShown::none();
        match self.flavor() {
            telemetry::Flavor::Gemini => shown.hooks_fired().plugins_loaded(),
            telemetry::Flavor::Qwen => shown.skills_invoked(),
        }
    }

    /// Gemini CLI's and Qwen Code's own OpenTelemetry: the `*.config` event
    /// (servers and tools) and `*.tool_call` (`mcp_server_name`).
    fn telemetry_setup(&self, target: &TelemetryTarget) -> Option<TelemetrySetup> {
        let (kind, prefix, headers) = match self.0.plugin {
            "passthrough-qwen" => ("qwen", "QWEN", HeadersSent::Verified),
            _ => ("gemini", "GEMINI", HeadersSent::Verified),
        };
        let var = |name: &str| format!("{prefix}_TELEMETRY_{name}");
        Some(
            TelemetrySetup::new(kind, headers)
                .var(var("ENABLED"), "true")
                .var(var("TARGET"), "local")
                .var(var("OTLP_ENDPOINT"), &target.endpoint)
                .var(var("OTLP_PROTOCOL"), "http")
                .var(var("LOG_PROMPTS"), "false")
                .otlp_headers(target)
                // Both load the user's `.env` of their own directory when the
                // project has none of its own.
                .settings_dotenv(format!("~/.{kind}/.env"))
                .note("LOG_PROMPTS=false keeps prompts out; `tool_call` events still carry tool arguments (`args`), which Tether drops."),
        )
    }

    fn read_telemetry(
        &self,
        record: &tether_core::telemetry::TelemetryRecord,
        configured: &[String],
    ) -> tether_core::telemetry::TelemetryAnswer {
        telemetry::read(self.flavor(), record, configured)
    }
}

impl tether_core::harness::HarnessCensus for PassthroughGemini {
    fn census(&self) -> Vec<tether_core::records::CensusEntry> {
        census::census(self.flavor())
    }
}

impl tether_core::last_mile::LastMile for PassthroughGemini {
    /// Gemini CLI's and Qwen Code's last mile, verified against the fake
    /// model's log of every request (`tests/tests/last_mile.rs`): Gemini CLI
    /// 0.61.0, and Qwen Code 0.15.10 and 0.24.4 (see [`names`]). Of two
    /// tools that share a name the last listed is kept (their registries
    /// overwrite); no schema is dropped. Qwen Code holds every MCP tool
    /// behind its `tool_search`.
    fn rules(&self, version: Option<&str>) -> Option<tether_core::last_mile::Rules> {
        use tether_core::last_mile::{Limit, OnCollision, Rules, Shape};
        Some(match self.flavor() {
            telemetry::Flavor::Gemini => Rules::new(
                names::gemini,
                OnCollision::LastWins,
                "Gemini CLI 0.61.0, verified",
            )
            .with_name_limit(Limit {
                max: 64,
                source: "Gemini API reference: a function declaration's name is at most 64 characters of a-z, A-Z, 0-9, _, ., : and -",
            })
            // `mcp_SERVER_TOOL`: both halves may hold `_`.
            .with_shape(Shape::Prefixed { prefix: "mcp_" }),
            telemetry::Flavor::Qwen => {
                let legacy = version.is_some_and(|v| !tether_core::records::version_at_least(v, "0.24"));
                Rules::new(
                    if legacy { names::qwen_legacy } else { names::qwen },
                    OnCollision::LastWins,
                    "Qwen Code 0.15.10 and 0.24.4, verified",
                )
                .with_deferral(Some(true))
                // 0.15 reads `mcp__SERVER__TOOL` back at the first `__`;
                // 0.24 may cut a long name and end it in a hash, so only
                // its prefix says MCP.
                .with_shape(if legacy {
                    Shape::Split {
                        prefix: "mcp__",
                        separator: "__",
                    }
                } else {
                    Shape::Prefixed { prefix: "mcp__" }
                })
            }
        })
    }
}

impl tether_core::harness::SetupGuide for PassthroughGemini {
    /// `gemini|qwen mcp add --scope user`, or an entry of the user's
    /// `settings.json`; an untrusted folder starts none.
    fn server_setup(
        &self,
        name: &str,
        command: &str,
        args: &[String],
    ) -> Option<tether_core::passthrough::ServerSetup> {
        let cli = self.0.kinds[0];
        let words = [cli, "mcp", "add", "--scope", "user", name, command];
        Some(
            tether_core::passthrough::ServerSetup::new(tether_sdk::materialize::server_block(
                &format!("~/{}", self.0.settings),
                "mcpServers",
                name,
                json!({"command": command, "args": args}),
            ))
            .with_command(tether_sdk::materialize::command_line(
                words.into_iter().chain(args.iter().map(String::as_str)),
            ))
            .note(format!(
                "{cli} starts no MCP server in a folder it does not trust (`tether inventory` says untrusted_folder)."
            )),
        )
    }
}

impl tether_core::model_tap::ModelTap for PassthroughGemini {
    /// Gemini CLI: `GOOGLE_GEMINI_BASE_URL`; Qwen Code: `OPENAI_BASE_URL`.
    fn model_setup(&self, base_url: &str) -> Option<tether_core::model_tap::ModelSetup> {
        use tether_core::model_tap::ModelSetup;
        Some(match self.flavor() {
            telemetry::Flavor::Gemini => ModelSetup::new("gemini", "generate_content")
                .var("GOOGLE_GEMINI_BASE_URL", base_url)
                .note("This covers a Gemini API key (GEMINI_API_KEY), passed on unchanged to https://generativelanguage.googleapis.com (or --upstream); a Google sign-in or Vertex AI goes elsewhere."),
            telemetry::Flavor::Qwen => ModelSetup::new("qwen", "openai_chat")
                .var("OPENAI_BASE_URL", format!("{base_url}/v1"))
                .note("This covers the OpenAI-compatible sign-in (`security.auth.selectedType: openai`, with OPENAI_API_KEY), passed on unchanged to https://api.openai.com (or --upstream, your provider's base URL); Qwen OAuth goes elsewhere."),
        }
        .note("It sends no session id with its requests: they join a tap session of their own."))
    }

    /// `GeminiCLI/VERSION` (`GeminiCLI-tui/…` in the terminal UI) or
    /// `QwenCode/VERSION`; neither sends a session id (0.61, 0.15 and 0.24).
    fn model_caller(
        &self,
        headers: &[(&str, &str)],
    ) -> Option<tether_core::model_tap::ModelCaller> {
        use tether_core::model_tap::{ModelCaller, header};
        use tether_sdk::names::product_version;
        let agent = header(headers, "user-agent")?;
        let products: &[&str] = match self.flavor() {
            telemetry::Flavor::Gemini => &["GeminiCLI-tui", "GeminiCLI"],
            telemetry::Flavor::Qwen => &["QwenCode"],
        };
        let version = products.iter().find_map(|p| product_version(agent, p))?;
        Some(ModelCaller::new(Some(version), None))
    }
}

impl PassthroughGemini {
    fn flavor(&self) -> telemetry::Flavor {
        match self.0.plugin {
            "passthrough-qwen" => telemetry::Flavor::Qwen,
            _ => telemetry::Flavor::Gemini,
        }
    }
}

/// How Gemini CLI and Qwen Code spell an MCP tool's name to the model.
mod names {
    use tether_sdk::names::{replace_outside, word_or_dash};

    /// Keeps `name`'s first `head` and last `tail` characters, joined by
    /// `mark`, when it is longer than `max` (all ASCII by then).
    fn shorten(name: String, max: usize, head: usize, mark: &str, tail: usize) -> String {
        if name.len() <= max {
            return name;
        }
        format!("{}{mark}{}", &name[..head], &name[name.len() - tail..])
    }

    /// Gemini CLI 0.61.0: `mcp_SERVER_TOOL`, characters outside
    /// `[a-zA-Z0-9_.:-]` replaced by `_`, longer than 63 kept as its first
    /// 30 and last 30 joined by `...`.
    pub fn gemini(server: &str, tool: &str) -> String {
        let name = format!("{server}_{tool}");
        let name = if name.starts_with("mcp_") {
            name
        } else {
            format!("mcp_{name}")
        };
        let name = replace_outside(&name, |c| word_or_dash(c) || c == '.' || c == ':', '_');
        shorten(name, 63, 30, "...", 30)
    }

    /// Qwen Code 0.15: `mcp__SERVER__TOOL`, characters outside
    /// `[a-zA-Z0-9_.-]` replaced by `_`, longer than 63 kept as its first
    /// 28 and last 32 joined by `___`.
    pub fn qwen_legacy(server: &str, tool: &str) -> String {
        let name = replace_outside(
            &format!("mcp__{server}__{tool}"),
            |c| word_or_dash(c) || c == '.',
            '_',
        );
        shorten(name, 63, 28, "___", 32)
    }

    /// Qwen Code 0.24: `mcp__SERVER__TOOL` as it is when it is at most 63
    /// characters of `[a-zA-Z0-9_-]` starting with a letter; otherwise
    /// those characters (others replaced by `_`), cut to leave room for `_`
    /// and the 7-character FNV-1a hash of the whole name.
    pub fn qwen(server: &str, tool: &str) -> String {
        let name = format!("mcp__{server}__{tool}");
        if name.len() <= 63 && name.chars().all(word_or_dash) {
            return name;
        }
        let clean = replace_outside(&name, word_or_dash, '_');
        let suffix = format!("_{}", fnv1a_base36(&name));
        let keep = 63 - suffix.len();
        format!("{}{suffix}", clean.get(..keep).unwrap_or(&clean))
    }

    /// The 32-bit FNV-1a hash of `text`'s UTF-16 code units (JavaScript's
    /// `charCodeAt` with `Math.imul`), in base 36, padded to 7 digits: Qwen
    /// Code 0.24's suffix for a name it cuts.
    fn fnv1a_base36(text: &str) -> String {
        let mut hash: u32 = 2_166_136_261;
        for unit in text.encode_utf16() {
            hash = (hash ^ u32::from(unit)).wrapping_mul(16_777_619);
        }
        let mut digits = Vec::new();
        let mut n = hash;
        loop {
            let d = (n % 36) as u8;
            digits.push(if d < 10 { b'0' + d } else { b'a' + d - 10 });
            n /= 36;
            if n == 0 {
                break;
            }
        }
        while digits.len() < 7 {
            digits.push(b'0');
        }
        digits.reverse();
        String::from_utf8(digits).unwrap_or_default()
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn the_hash_is_javascript_s() {
            // FNV-1a over UTF-16 code units, as `Math.imul` computes it
            // (reference values from Node: `(h >>> 0).toString(36)`).
            assert_eq!(super::fnv1a_base36(""), "0ztntfp");
            assert_eq!(super::fnv1a_base36("a"), "1r9wi7g");
            assert_eq!(super::fnv1a_base36("mcp__brk__dotted.name"), "0w9h6p9");
        }
    }
}

tether_core::register_plugin!(GEMINI.plugin, || Box::new(PassthroughGemini(GEMINI)));
tether_core::register_plugin!(QWEN.plugin, || Box::new(PassthroughGemini(QWEN)));

#[cfg(test)]
mod tests {
    use super::*;
    use tether_core::observer::plan;
    use tether_core::passthrough::FilePlace;
    use tether_core::vocab::ServerSource;

    fn ctx(kind: &str, strict: bool) -> PlanContext {
        PlanContext {
            agent_kind: kind.into(),
            drive_mode: DriveMode::Passthrough,
            capabilities: PassthroughGemini(GEMINI).capabilities(),
            strict,
        }
    }

    #[test]
    fn every_transport_goes_into_the_project_settings_with_values_as_references() {
        let servers = vec![
            ServerSpec::new(
                "local",
                ServerSource::Profile,
                Endpoint::Stdio {
                    command: "/home/u/bin/srv".into(),
                    args: vec!["--key=arg-secret".into()],
                    env: vec![KeyValue::new("API_KEY", "env-secret")],
                    cwd: Some("/home/u/proj".into()),
                },
            ),
            ServerSpec::new(
                "remote",
                ServerSource::Profile,
                Endpoint::Http {
                    url: "https://h.example/mcp".into(),
                    headers: vec![KeyValue::new("Authorization", "Bearer hdr-secret")],
                },
            ),
            ServerSpec::new(
                "legacy",
                ServerSource::Profile,
                Endpoint::Sse {
                    url: "https://h.example/sse?token=q-secret".into(),
                    headers: vec![],
                },
            ),
        ];
        for (dialect, dir) in [(GEMINI, ".gemini"), (QWEN, ".qwen")] {
            let plugin = PassthroughGemini(dialect);
            let ctx = ctx(dialect.kinds[0], true);
            let planned = plan(Some(&plugin), &servers, &ctx);
            let m = plugin
                .materialize(&planned, &ctx, Path::new("/private"))
                .expect("materialize");
            assert_eq!(m.files.len(), 1);
            let file = &m.files[0];
            assert_eq!(file.place, FilePlace::Project);
            assert_eq!(file.name, format!("{dir}/settings.json"));
            for secret in [
                "arg-secret",
                "env-secret",
                "hdr-secret",
                "q-secret",
                "/home/u",
            ] {
                assert!(!file.contents.contains(secret), "{secret} in the file");
                assert!(!m.args.join(" ").contains(secret), "{secret} in the args");
                assert!(m.env.iter().any(|kv| kv.value.contains(secret)), "{secret}");
            }
            let doc: Value = serde_json::from_str(&file.contents).expect("json");
            let s = &doc["mcpServers"];
            assert_eq!(s["local"]["command"], "$TETHER_MCP_1");
            assert_eq!(s["local"]["env"]["API_KEY"], "$TETHER_MCP_3");
            assert_eq!(s["remote"]["httpUrl"], "https://h.example/mcp");
            assert!(s["remote"]["headers"]["Authorization"].is_string());
            assert!(s["legacy"]["url"].as_str().expect("url").starts_with('$'));
            assert_eq!(
                m.args,
                [
                    "--allowed-mcp-server-names",
                    "local",
                    "--allowed-mcp-server-names",
                    "remote",
                    "--allowed-mcp-server-names",
                    "legacy"
                ]
            );
            assert_eq!(
                m.env
                    .iter()
                    .any(|kv| kv.name == "GEMINI_CLI_TRUST_WORKSPACE" && kv.value == "true"),
                dialect == GEMINI
            );
        }
    }

    #[test]
    fn only_qwen_reads_the_init_line() {
        let line = r#"{"type":"system","subtype":"init","tools":["mcp__ev__echo"],"mcp_servers":[{"name":"ev","status":"connected"}]}"#;
        let qwen = PassthroughGemini(QWEN).read_output(line, Timestamp(1));
        assert_eq!(qwen.len(), 1);
        assert_eq!(qwen[0].tool_count, Some(1));
        assert!(
            PassthroughGemini(GEMINI)
                .read_output(line, Timestamp(1))
                .is_empty()
        );
    }

    #[test]
    fn both_plugins_pass_the_conformance_kit() {
        tether_sdk::conformance::assert_conforms(&PassthroughGemini(GEMINI));
        tether_sdk::conformance::assert_conforms(&PassthroughGemini(QWEN));
    }
}
