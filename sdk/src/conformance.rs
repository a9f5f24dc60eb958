//! The conformance kit: every plugin, first-party or third-party, runs it in
//! its own tests with one call, [`assert_conforms`].
//!
//! It checks that:
//! - every configured server gets a decision, and no reason code is unknown;
//! - planning is deterministic;
//! - no secret from a server's configuration appears in anything the plugin
//!   returns: decisions, materialized files and arguments (a passthrough
//!   plugin may carry secrets only in `Materialized::env`), or evidence;
//! - two servers whose env (or headers) share a name with different values
//!   each keep their own value: both values are carried in
//!   `Materialized::env`, under names that are not shared (one process
//!   environment holds one value per name, so a name forwarded for two
//!   servers hands one of them the other's secret);
//! - evidence can only reach a host through its sink: `read_output`
//!   returns values that carry no ownership, for any input, without panicking.
//!
//! A plugin that reads its harness's telemetry also runs
//! [`assert_reads_telemetry`] over records recorded from a real session.

use std::path::Path;

use tether_core::model::Timestamp;
use tether_core::observer::plan;
use tether_core::passthrough::Materialized;
use tether_core::vocab::{ReasonCode, ServerSource};
use tether_core::{
    AgentCapabilities, Decision, Endpoint, KeyValue, PlanContext, ServerSpec, TransportObserver,
};

/// Secret values planted in the kit's server configurations.
pub const PLANTED: [&str; 6] = [
    "conformance-env-SECRET-1a2b3c",
    "conformance-header-SECRET-4d5e6f",
    "conformance-arg-SECRET-7a8b9c",
    "conformance-userinfo-SECRET-0d1e2f",
    "conformance-query-SECRET-3a4b5c",
    "/home/conformance-user-SECRET/bin",
];

/// The servers the kit plans: every transport, odd names, several endpoints,
/// a duplicate, and secrets everywhere.
pub fn servers() -> Vec<ServerSpec> {
    let stdio = Endpoint::Stdio {
        command: format!("{}/server", PLANTED[5]),
        args: vec!["--token".into(), PLANTED[2].into()],
        env: vec![KeyValue::new("API_KEY", PLANTED[0])],
        cwd: None,
    };
    let http = |path: &str| Endpoint::Http {
        url: format!(
            "https://user:{}@mcp.example.com/{path}?key={}",
            PLANTED[3], PLANTED[4]
        ),
        headers: vec![KeyValue::new(
            "Authorization",
            format!("Bearer {}", PLANTED[1]),
        )],
    };
    let plain_http = Endpoint::Http {
        url: "http://127.0.0.1:9/mcp".into(),
        headers: vec![KeyValue::new("X-Api-Key", PLANTED[1])],
    };
    let sse = Endpoint::Sse {
        url: "http://127.0.0.1:9/sse".into(),
        headers: vec![KeyValue::new("Authorization", PLANTED[1])],
    };
    vec![
        ServerSpec::new("local", ServerSource::Profile, stdio.clone()),
        ServerSpec::new("remote", ServerSource::Profile, http("mcp")),
        ServerSpec::new("plain-remote", ServerSource::Profile, plain_http.clone()),
        ServerSpec::new("legacy", ServerSource::Profile, sse.clone()),
        ServerSpec::new("host", ServerSource::Host, plain_http)
            .or(sse)
            .or(stdio.clone()),
        ServerSpec::new(
            "name with spaces.and\"quotes",
            ServerSource::Profile,
            stdio.clone(),
        ),
        ServerSpec::new("local", ServerSource::Profile, stdio),
    ]
}

fn pairs(pairs: &[(&str, &str)]) -> Vec<KeyValue> {
    pairs.iter().map(|(k, v)| KeyValue::new(*k, *v)).collect()
}

/// A profile's stdio server, for a plugin's own tests: `command` with
/// `args` and `env`, no working directory.
pub fn stdio_server(name: &str, command: &str, args: &[&str], env: &[(&str, &str)]) -> ServerSpec {
    let endpoint = Endpoint::Stdio {
        command: command.to_owned(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        env: pairs(env),
        cwd: None,
    };
    ServerSpec::new(name, ServerSource::Profile, endpoint)
}

/// A profile's streamable-HTTP server at `url` with `headers`, for a
/// plugin's own tests.
pub fn http_server(name: &str, url: &str, headers: &[(&str, &str)]) -> ServerSpec {
    let endpoint = Endpoint::Http {
        url: url.to_owned(),
        headers: pairs(headers),
    };
    ServerSpec::new(name, ServerSource::Profile, endpoint)
}

/// A profile's legacy-SSE server at `url` with `headers`, for a plugin's
/// own tests.
pub fn sse_server(name: &str, url: &str, headers: &[(&str, &str)]) -> ServerSpec {
    let endpoint = Endpoint::Sse {
        url: url.to_owned(),
        headers: pairs(headers),
    };
    ServerSpec::new(name, ServerSource::Profile, endpoint)
}

/// Values of a variable two servers share by name (`SHARED_TOKEN`, and a
/// header `X-Shared-Key`), one per server.
pub const SHARED_NAME_VALUES: [&str; 2] = [
    "conformance-alpha-SHARED-8f7e6d",
    "conformance-beta-SHARED-5c4b3a",
];

/// Two stdio servers and two http servers whose env and headers share one
/// name with different values.
pub fn shared_name_servers() -> Vec<ServerSpec> {
    let stdio = |value: &str| Endpoint::Stdio {
        command: "/usr/bin/server".into(),
        args: vec![],
        env: vec![KeyValue::new("SHARED_TOKEN", value)],
        cwd: None,
    };
    let http = |value: &str| Endpoint::Http {
        url: "http://127.0.0.1:9/mcp".into(),
        headers: vec![KeyValue::new("X-Shared-Key", value)],
    };
    let [a, b] = SHARED_NAME_VALUES;
    vec![
        ServerSpec::new("alpha", ServerSource::Profile, stdio(a)),
        ServerSpec::new("beta", ServerSource::Profile, stdio(b)),
        ServerSpec::new("alpha-remote", ServerSource::Profile, http(a)),
        ServerSpec::new("beta-remote", ServerSource::Profile, http(b)),
    ]
}

/// Each delivered server's env and header values are carried, and no
/// variable name is carried twice with different values.
fn shared_names_not_kept_apart(plan: &tether_core::Plan, m: &Materialized) -> Vec<String> {
    let mut failures = Vec::new();
    for (i, kv) in m.env.iter().enumerate() {
        if m.env[..i]
            .iter()
            .any(|earlier| earlier.name == kv.name && earlier.value != kv.value)
        {
            failures.push(format!(
                "Materialized::env sets {} twice with different values: one server would get another's value",
                kv.name
            ));
        }
    }
    for (planned, endpoint) in plan.delivered() {
        let pairs = match endpoint {
            Endpoint::Stdio { env, .. } => env,
            Endpoint::Http { headers, .. } | Endpoint::Sse { headers, .. } => headers,
        };
        for pair in pairs {
            if !m.env.iter().any(|e| e.value.contains(&pair.value)) {
                failures.push(format!(
                    "server {:?}: its own value of {} is not carried in Materialized::env (two servers share the name)",
                    planned.spec.name, pair.name
                ));
            }
        }
    }
    failures
}

fn contexts(plugin: &dyn TransportObserver) -> Vec<PlanContext> {
    let descriptor = plugin.descriptor();
    let kind = descriptor
        .agent_kinds
        .first()
        .cloned()
        .unwrap_or_else(|| "agent".into());
    let capabilities = [
        AgentCapabilities::default(),
        AgentCapabilities::new(Some(true), Some(true), Some(true)),
        AgentCapabilities::new(Some(false), Some(false), Some(false)),
    ];
    capabilities
        .into_iter()
        .flat_map(|caps| {
            [false, true].map(|strict| PlanContext {
                agent_kind: kind.clone(),
                drive_mode: descriptor.drive_mode,
                capabilities: caps,
                strict,
            })
        })
        .collect()
}

fn leaks(text: &str) -> Vec<&'static str> {
    PLANTED
        .iter()
        .copied()
        .filter(|s| text.contains(s))
        .collect()
}

/// Runs every check; returns what failed (empty when the plugin conforms).
pub fn check(plugin: &dyn TransportObserver) -> Vec<String> {
    let mut failures = Vec::new();
    let descriptor = plugin.descriptor();
    if descriptor.name.trim().is_empty() {
        failures.push("the descriptor has no name".to_owned());
    }
    if descriptor.agent_kinds.is_empty() {
        failures.push("the descriptor names no agent kind".to_owned());
    }
    let servers = servers();
    let shared = shared_name_servers();
    let dir = Path::new("/tmp/tether-conformance");
    for ctx in contexts(plugin) {
        if let Some(strategy) = plugin.passthrough() {
            let planned = plan(Some(plugin), &shared, &ctx);
            if let Ok(materialized) = strategy.materialize(&planned, &ctx, dir) {
                failures.extend(shared_names_not_kept_apart(&planned, &materialized));
            }
        }
        let first = plan(Some(plugin), &servers, &ctx);
        let second = plan(Some(plugin), &servers, &ctx);
        if first.servers.len() != servers.len() {
            failures.push(format!(
                "{} decisions for {} servers",
                first.servers.len(),
                servers.len()
            ));
        }
        for planned in &first.servers {
            let name = &planned.spec.name;
            match &planned.decision {
                Decision::Unavailable {
                    reason_code: ReasonCode::ObserverOmitted,
                    summary,
                } => failures.push(format!(
                    "no usable decision for {name:?} ({})",
                    summary.as_deref().unwrap_or("")
                )),
                Decision::Filter {
                    reason_code,
                    summary,
                }
                | Decision::Unavailable {
                    reason_code,
                    summary,
                } => {
                    if !reason_code.is_known() {
                        failures.push(format!("unknown reason code {reason_code} for {name:?}"));
                    }
                    for s in leaks(summary.as_deref().unwrap_or("")) {
                        failures.push(format!(
                            "the decision summary for {name:?} holds a secret ({s})"
                        ));
                    }
                }
                Decision::Deliver { .. } => {}
                _ => failures.push(format!("a decision this kit does not know for {name:?}")),
            }
        }
        let decisions = |p: &tether_core::Plan| {
            serde_json::to_string(&p.servers.iter().map(|s| &s.decision).collect::<Vec<_>>())
                .unwrap_or_default()
        };
        if decisions(&first) != decisions(&second) {
            failures.push("planning the same servers twice gave different decisions".to_owned());
        }
        if let Some(strategy) = plugin.passthrough() {
            match strategy.materialize(&first, &ctx, dir) {
                Ok(materialized) => {
                    failures.extend(headers_not_carried(&first, &materialized));
                    for file in &materialized.files {
                        failures.extend(file.name_problem());
                        for s in leaks(&file.contents) {
                            failures.push(format!(
                                "materialized file {} holds a secret ({s})",
                                file.name
                            ));
                        }
                    }
                    for s in leaks(&materialized.args.join(" ")) {
                        failures.push(format!("materialized arguments hold a secret ({s}); secrets belong in Materialized::env"));
                    }
                    let m2 = strategy.materialize(&second, &ctx, dir);
                    if m2.as_ref().ok() != Some(&materialized) {
                        failures.push(
                            "materializing the same plan twice gave different results".to_owned(),
                        );
                    }
                }
                Err(message) => {
                    for s in leaks(&message) {
                        failures.push(format!("a materialization error holds a secret ({s})"));
                    }
                }
            }
            for line in [
                "",
                "not json",
                "{}",
                "{\"type\":\"system\",\"subtype\":\"init\"}",
                &"x".repeat(100_000),
            ] {
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    strategy.read_output(line, Timestamp(1))
                }));
                match outcome {
                    Ok(evidence) => {
                        let text = serde_json::to_string(&evidence).unwrap_or_default();
                        for s in leaks(&text) {
                            failures.push(format!("read_output evidence holds a secret ({s})"));
                        }
                    }
                    Err(_) => failures.push("read_output panicked on arbitrary input".to_owned()),
                }
            }
        }
    }
    failures.sort();
    failures.dedup();
    failures
}

/// Every header of a delivered http or sse endpoint must reach the CLI: its
/// name in the materialized files or arguments, its value in the environment
/// (the host's endpoint credential travels this way). A plugin whose CLI
/// cannot send headers over a transport must decide
/// `unavailable/headers_unsupported` instead of delivering an endpoint that
/// would refuse it, or one that would have to be left open.
fn headers_not_carried(plan: &tether_core::Plan, m: &Materialized) -> Vec<String> {
    let mut failures = Vec::new();
    for (planned, endpoint) in plan.delivered() {
        let (Endpoint::Http { headers, .. } | Endpoint::Sse { headers, .. }) = endpoint else {
            continue;
        };
        for header in headers {
            let named = m.files.iter().any(|f| f.contents.contains(&header.name))
                || m.args.iter().any(|a| a.contains(&header.name));
            let carried = m.env.iter().any(|e| e.value.contains(&header.value));
            if !(named && carried) {
                failures.push(format!(
                    "server {:?}: header {} is not carried to the CLI over {} (name in files or arguments, value in Materialized::env); decide unavailable/headers_unsupported if the CLI cannot send it",
                    planned.spec.name,
                    header.name,
                    endpoint.transport()
                ));
            }
        }
    }
    failures
}

/// Panics with every failure when the plugin does not conform.
pub fn assert_conforms(plugin: &dyn TransportObserver) {
    let failures = check(plugin);
    assert!(
        failures.is_empty(),
        "plugin {} does not conform:\n  - {}",
        plugin.descriptor().name,
        failures.join("\n  - ")
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_core::passthrough::{Materialized, PassthroughStrategy};
    use tether_core::{Delivery, DriveMode, PluginDescriptor};

    /// Skips servers, echoes secrets, and is not deterministic.
    struct Sloppy(std::sync::atomic::AtomicU32);

    impl TransportObserver for Sloppy {
        fn descriptor(&self) -> PluginDescriptor {
            PluginDescriptor::new("sloppy", ["sloppy"], DriveMode::Passthrough, "0")
        }
        fn decide(&self, server: &ServerSpec, _: &PlanContext) -> Decision {
            let n = self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if n.is_multiple_of(2) {
                Decision::Deliver {
                    transport: server.endpoints[0].transport(),
                    via: Delivery::Arguments,
                }
            } else {
                Decision::Filter {
                    reason_code: ReasonCode::Other("made_up".into()),
                    summary: Some(format!("{:?}", server.endpoints[0].secret_values())),
                }
            }
        }
        fn decide_all(&self, servers: &[ServerSpec], ctx: &PlanContext) -> Vec<(String, Decision)> {
            servers
                .iter()
                .skip(1)
                .map(|s| (s.name.clone(), self.decide(s, ctx)))
                .collect()
        }
        fn passthrough(&self) -> Option<&dyn PassthroughStrategy> {
            Some(self)
        }
    }

    impl PassthroughStrategy for Sloppy {
        fn capabilities(&self) -> AgentCapabilities {
            AgentCapabilities::default()
        }
        fn materialize(
            &self,
            plan: &tether_core::Plan,
            _: &PlanContext,
            _: &Path,
        ) -> Result<Materialized, String> {
            Ok(Materialized::new(
                plan.delivered()
                    .flat_map(|(_, e)| e.secret_values())
                    .collect(),
                vec![],
                vec![],
            ))
        }
        fn read_output(&self, line: &str, _: Timestamp) -> Vec<tether_core::model::Evidence> {
            assert!(line.len() < 1000, "boom");
            vec![]
        }
    }

    /// Forwards every server's env under its own name, as Codex once did.
    struct LastWins;

    impl TransportObserver for LastWins {
        fn descriptor(&self) -> PluginDescriptor {
            PluginDescriptor::new("last-wins", ["last-wins"], DriveMode::Passthrough, "0")
        }
        fn decide(&self, server: &ServerSpec, _: &PlanContext) -> Decision {
            Decision::Deliver {
                transport: server.endpoints[0].transport(),
                via: Delivery::Environment,
            }
        }
        fn passthrough(&self) -> Option<&dyn PassthroughStrategy> {
            Some(self)
        }
    }

    impl PassthroughStrategy for LastWins {
        fn capabilities(&self) -> AgentCapabilities {
            AgentCapabilities::default()
        }
        fn materialize(
            &self,
            plan: &tether_core::Plan,
            _: &PlanContext,
            _: &Path,
        ) -> Result<Materialized, String> {
            let mut env: Vec<KeyValue> = Vec::new();
            for (_, endpoint) in plan.delivered() {
                if let Endpoint::Stdio { env: vars, .. } = endpoint {
                    for kv in vars {
                        env.retain(|e| e.name != kv.name);
                        env.push(kv.clone());
                    }
                }
            }
            Ok(Materialized::new(vec![], env, vec![]))
        }
    }

    #[test]
    fn the_kit_catches_a_plugin_that_hands_one_server_anothers_value() {
        let all = check(&LastWins).join("\n");
        assert!(
            all.contains("\"alpha\": its own value of SHARED_TOKEN is not carried"),
            "{all}"
        );
    }

    #[test]
    fn the_kit_catches_a_sloppy_plugin() {
        let failures = check(&Sloppy(Default::default()));
        let all = failures.join("\n");
        for expected in [
            "no usable decision",
            "unknown reason code",
            "holds a secret",
            "different decisions",
            "panicked",
            "is not carried to the CLI",
            "its own value of SHARED_TOKEN is not carried",
        ] {
            assert!(all.contains(expected), "missing {expected:?} in:\n{all}");
        }
    }

    /// Reads only `tool_result`, whose attribute it finds cut short;
    /// ignores every other record of its service.
    struct CutAttribute;

    impl tether_core::telemetry::TelemetryReader for CutAttribute {
        fn telemetry_setup(
            &self,
            _: &tether_core::telemetry::TelemetryTarget,
        ) -> Option<tether_core::telemetry::TelemetrySetup> {
            None
        }
        fn read_telemetry(
            &self,
            record: &tether_core::telemetry::TelemetryRecord,
            _: &[String],
        ) -> tether_core::telemetry::TelemetryAnswer {
            use tether_core::telemetry::TelemetryAnswer;
            if record.service() != "cut-harness" {
                TelemetryAnswer::NotMine
            } else if record.name == "tool_result" {
                TelemetryAnswer::unparsed(
                    "tool_result",
                    "tool_parameters",
                    tether_core::records::Unparsed::CutShort,
                )
            } else {
                TelemetryAnswer::Ignored
            }
        }
    }

    #[test]
    fn an_unparsed_telemetry_record_is_counted_unparsed_never_ignored() {
        use tether_core::telemetry::{TelemetryRecord, TelemetrySignal, TelemetryValue};
        let record = |name: &str| {
            let mut r = TelemetryRecord::new(TelemetrySignal::Log, name, Timestamp(0));
            r.resource.insert(
                "service.name".into(),
                TelemetryValue::Text("cut-harness".into()),
            );
            r.attributes.insert(
                "tool_parameters".into(),
                TelemetryValue::Text("{\"cut".into()),
            );
            r
        };
        let records = [record("tool_result"), record("user_prompt")];
        let seen = assert_reads_telemetry(&CutAttribute, &records, &[]);
        assert_eq!(
            seen,
            TelemetryCheck {
                read: 0,
                ignored: 1,
                unparsed: 1,
                not_mine: 0,
            }
        );
    }

    /// Answers each record by its `type`: `mcp` read, `chat` known and
    /// silent, `hook_progress` known and not read, `later` unknown; a
    /// record that is not JSON, or a known kind of the wrong shape, is
    /// unparsed.
    struct EveryAnswer;

    impl tether_core::records::RecordReader for EveryAnswer {
        fn record_sources(&self) -> Vec<tether_core::records::RecordSource> {
            Vec::new()
        }
        fn read_record(
            &self,
            _: &tether_core::records::RecordFile<'_>,
            record: &str,
        ) -> tether_core::records::RecordAnswer {
            use tether_core::records::RecordAnswer;
            let value: serde_json::Value = match serde_json::from_str(record) {
                Ok(value) => value,
                Err(e) => return RecordAnswer::unparsed(&e, None),
            };
            match value.get("type").and_then(|t| t.as_str()) {
                Some("mcp") if !value["n"].is_number() => RecordAnswer::Unparsed {
                    why: tether_core::records::Unparsed::WrongType,
                    kind: Some("mcp".into()),
                },
                Some("mcp") => RecordAnswer::Read(tether_core::records::RecordReading::default()),
                Some("chat") => RecordAnswer::Ignored,
                Some("hook_progress") => RecordAnswer::not_read("hook_progress", None),
                _ => RecordAnswer::Unknown,
            }
        }
    }

    /// GIVEN one record of each answer, one cut short and one of a known
    /// kind with a field of the wrong type WHEN the records kit reads them
    /// THEN each is counted apart: read, silent, not read (by its kind),
    /// unknown, and unparsed by its line and why; an unparsed record is
    /// never counted unknown (issue 68).
    #[test]
    fn the_records_kit_counts_not_read_unknown_and_unparsed_apart() {
        use tether_core::records::{Unparsed, UnparsedLine};
        let records: Vec<String> = [
            r#"{"type":"mcp","n":1}"#,
            r#"{"type":"chat"}"#,
            r#"{"type":"hook_progress"}"#,
            r#"{"type":"hook_progress"}"#,
            r#"{"type":"later"}"#,
            r#"{"type":"mcp","n":"#,
            r#"{"type":"mcp","n":"one"}"#,
        ]
        .map(str::to_owned)
        .to_vec();
        let seen = assert_reads_records(&EveryAnswer, "log", &["a.jsonl".into()], &records, &[]);
        assert_eq!((seen.read, seen.ignored, seen.unknown), (1, 1, 1));
        assert_eq!(
            seen.not_read,
            [("hook_progress".to_owned(), 2)].into_iter().collect()
        );
        assert_eq!(seen.not_read_total(), 2);
        assert_eq!(
            seen.unparsed,
            vec![
                UnparsedLine {
                    line: 6,
                    why: Unparsed::CutShort,
                    kind: None
                },
                UnparsedLine {
                    line: 7,
                    why: Unparsed::WrongType,
                    kind: Some("mcp".into())
                },
            ]
        );
    }
}

// === Telemetry mappings ===

/// Text the telemetry check plants in records' attribute values.
pub const PLANTED_IN_TELEMETRY: [&str; 3] = [
    "telemetry-SECRET-9f8e7d6c",
    "PROMPT tell me the launch codes",
    "/home/victim/.ssh/id_ed25519",
];

/// Keys that say whose a record is: never planted.
const STRUCTURAL_KEYS: [&str; 6] = [
    "service.name",
    "event.name",
    "session.id",
    "conversation.id",
    "gen_ai.conversation.id",
    "service.instance.id",
];

/// What a mapping made of a set of records: read, of a kind it does not
/// read, unparsed (an attribute it reads cut short or not JSON), or another
/// service's, as records' lines are counted (read, known but not read,
/// unparsed): an unparsed record is never counted as one it passed over.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TelemetryCheck {
    /// Records it read.
    pub read: usize,
    /// Records of its harness it ignored (a kind it does not read).
    pub ignored: usize,
    /// Records of a kind it reads whose attribute could not be parsed
    /// ([`TelemetryAnswer::Unparsed`](tether_core::telemetry::TelemetryAnswer::Unparsed)).
    pub unparsed: usize,
    /// Records it said are not its harness's.
    pub not_mine: usize,
}

/// Checks a harness plugin's telemetry mapping
/// ([`TelemetryReader::read_telemetry`](tether_core::telemetry::TelemetryReader::read_telemetry))
/// against `records` (recorded from a real session of its harness), with
/// `configured` as the configuration's server names. Returns the problems,
/// and what it read. It checks that, for every record, the mapping:
/// - never panics, and answers the same twice (it is pure);
/// - gives only evidence a harness's word can prove
///   ([`provable`](tether_core::telemetry::provable)), stamped
///   `harness_telemetry`, with names that are names
///   ([`TelemetryReading::names_are_names`](tether_core::telemetry::TelemetryReading::names_are_names));
/// - says `NotMine` for the same record from another service;
/// - carries none of the text planted in every other attribute value (a
///   mapping takes names, codes, counts and outcomes, never a value).
pub fn check_telemetry(
    reader: &dyn tether_core::telemetry::TelemetryReader,
    records: &[tether_core::telemetry::TelemetryRecord],
    configured: &[String],
) -> (Vec<String>, TelemetryCheck) {
    use tether_core::telemetry::{TelemetryAnswer, TelemetryValue, provable};
    use tether_core::vocab::Provenance;
    let mut problems = Vec::new();
    let mut seen = TelemetryCheck::default();
    let read = |record: &tether_core::telemetry::TelemetryRecord| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            reader.read_telemetry(record, configured)
        }))
    };
    for (i, record) in records.iter().enumerate() {
        let Ok(answer) = read(record) else {
            problems.push(format!(
                "record {i} ({}): the mapping panicked",
                record.name
            ));
            continue;
        };
        if read(record).ok().as_ref() != Some(&answer) {
            problems.push(format!("record {i} ({}): two readings differ", record.name));
        }
        match &answer {
            TelemetryAnswer::NotMine => seen.not_mine += 1,
            TelemetryAnswer::Ignored => seen.ignored += 1,
            TelemetryAnswer::Unparsed { .. } => seen.unparsed += 1,
            TelemetryAnswer::Read(reading) => {
                seen.read += 1;
                if !reading.names_are_names(configured) {
                    problems.push(format!(
                        "record {i} ({}): a name is not a name",
                        record.name
                    ));
                }
                for evidence in &reading.evidence {
                    if !provable(&evidence.kind) {
                        problems.push(format!(
                            "record {i} ({}): {} is not provable by telemetry",
                            record.name, evidence.kind
                        ));
                    }
                    if evidence.provenance != Provenance::HarnessTelemetry {
                        problems.push(format!(
                            "record {i} ({}): evidence stamped {}, not harness_telemetry",
                            record.name, evidence.provenance
                        ));
                    }
                }
            }
            // An answer a later Tether adds: this kit counts it ignored.
            _ => seen.ignored += 1,
        }
        let mut elsewhere = record.clone();
        elsewhere.resource.insert(
            "service.name".into(),
            TelemetryValue::Text("conformance-other-service".into()),
        );
        if !matches!(read(&elsewhere), Ok(TelemetryAnswer::NotMine)) {
            problems.push(format!(
                "record {i} ({}): read as this harness's from another service",
                record.name
            ));
        }
        // Plant in every value but the structural ones, and in every value
        // the mapping's answer does not already repeat (a name it reads).
        let answer_text = serde_json::to_string(&answer).unwrap_or_default();
        let mut planted = record.clone();
        let plant = PLANTED_IN_TELEMETRY[i % PLANTED_IN_TELEMETRY.len()];
        for map in [&mut planted.attributes, &mut planted.resource] {
            for (key, value) in map.iter_mut() {
                // A value the answer repeats, whole or as one of its names
                // (a list of servers, say), is one the mapping reads as a name.
                let quoted = |t: &str| !t.is_empty() && answer_text.contains(&format!("\"{t}\""));
                let used = value.text().is_some_and(|t| quoted(t.as_ref()))
                    || value.names().iter().any(|n| quoted(n));
                if STRUCTURAL_KEYS.contains(&key.as_str()) || used {
                    continue;
                }
                *value = match value {
                    TelemetryValue::List(items) => {
                        TelemetryValue::List(items.iter().map(|_| plant.to_owned()).collect())
                    }
                    _ => TelemetryValue::Text(plant.to_owned()),
                };
            }
        }
        if let Ok(answer) = read(&planted) {
            let text = serde_json::to_string(&answer).unwrap_or_default();
            for piece in ["SECRET-9f8e7d6c", "launch codes", "id_ed25519"] {
                if text.contains(piece) {
                    problems.push(format!(
                        "record {i} ({}): planted text {piece:?} reached the reading",
                        record.name
                    ));
                }
            }
        }
    }
    (problems, seen)
}

/// [`check_telemetry`], panicking with every problem; returns what it read.
pub fn assert_reads_telemetry(
    reader: &dyn tether_core::telemetry::TelemetryReader,
    records: &[tether_core::telemetry::TelemetryRecord],
    configured: &[String],
) -> TelemetryCheck {
    let (problems, seen) = check_telemetry(reader, records, configured);
    assert!(
        problems.is_empty(),
        "the telemetry mapping does not conform:\n{}",
        problems.join("\n")
    );
    seen
}

/// Text [`check_records`] plants in every string a reader does not read.
const PLANTED_IN_RECORDS: [&str; 3] = [
    "sk-SECRET-4a5b6c7d8e9f00112233",
    "PROMPT: recite the launch codes",
    "/home/victim/.ssh/id_ed25519",
];

/// What [`check_records`] saw a reader do, every record accounted for as
/// `tether sessions` accounts for a file's lines (issue 68): read, of a
/// known kind that says nothing, of a known kind not read (named), of an
/// unknown kind, or not parsed (where and why). A record that failed to
/// parse is never counted as a kind, known or not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecordsCheck {
    /// Records it read.
    pub read: usize,
    /// Records of a kind it knows that say nothing about MCP servers or
    /// tools (`Ignored`, `Dated`).
    pub ignored: usize,
    /// Records of a kind it knows that bears on MCP servers, tools,
    /// skills, hooks, permissions or auth, which it does not read
    /// (`NotRead`): how many of each kind, by the reader's name for it
    /// (its census's entry).
    pub not_read: std::collections::BTreeMap<String, usize>,
    /// Records of a kind it does not know (version drift), and answers a
    /// later Tether adds.
    pub unknown: usize,
    /// Records that could not be parsed (`Unparsed`): each one's place in
    /// `records` (from 1), why, and its kind where the reader knew it;
    /// never its content.
    pub unparsed: Vec<tether_core::records::UnparsedLine>,
}

impl RecordsCheck {
    /// Records of a known kind not read, of every kind.
    pub fn not_read_total(&self) -> usize {
        self.not_read.values().sum()
    }
}

/// Checks a passthrough plugin's session-record reader
/// ([`RecordReader::read_record`](tether_core::records::RecordReader::read_record))
/// against the `records` of one file of role `role` at `segments` below its
/// root (recorded from a real session of its harness), with `configured`
/// as the configuration's server names. Returns the problems, and what it
/// read. For every record, the reader:
/// - never panics, and answers the same twice (it is pure); nor on the
///   record cut short, or with bytes that make it no record at all;
/// - gives only evidence a harness's records can prove
///   ([`provable`](tether_core::records::provable)), with names that are
///   names ([`RecordReading::names_are_names`](tether_core::records::RecordReading::names_are_names));
/// - carries none of the text planted in every JSON string it does not
///   repeat as a name (a reader takes names, codes, counts and outcomes,
///   never a value).
pub fn check_records(
    reader: &dyn tether_core::records::RecordReader,
    role: &str,
    segments: &[String],
    records: &[String],
    configured: &[String],
) -> (Vec<String>, RecordsCheck) {
    use tether_core::records::{RecordAnswer, RecordFile, provable};
    let mut problems = Vec::new();
    let mut seen = RecordsCheck::default();
    let file = RecordFile {
        role,
        segments,
        session: None,
        configured,
    };
    let read = |record: &str| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            reader.read_record(&file, record)
        }))
    };
    for (i, record) in records.iter().enumerate() {
        let Ok(answer) = read(record) else {
            problems.push(format!("record {i}: the reader panicked"));
            continue;
        };
        if read(record).ok().as_ref() != Some(&answer) {
            problems.push(format!("record {i}: two readings differ"));
        }
        match &answer {
            RecordAnswer::Unknown => seen.unknown += 1,
            RecordAnswer::Ignored | RecordAnswer::Dated { .. } => seen.ignored += 1,
            RecordAnswer::NotRead { kind, .. } => {
                *seen.not_read.entry(kind.clone()).or_default() += 1;
            }
            RecordAnswer::Unparsed { why, kind } => {
                seen.unparsed.push(tether_core::records::UnparsedLine {
                    line: i as u64 + 1,
                    why: *why,
                    kind: kind.clone(),
                });
            }
            RecordAnswer::Read(reading) => {
                seen.read += 1;
                if !reading.names_are_names(configured) {
                    problems.push(format!("record {i}: a name is not a name"));
                }
                for evidence in &reading.evidence {
                    if !provable(&evidence.kind) {
                        problems.push(format!(
                            "record {i}: {} is not provable by records",
                            evidence.kind
                        ));
                    }
                }
            }
            // An answer a later Tether adds: this kit counts it unknown.
            _ => seen.unknown += 1,
        }
        // Cut short, and broken: never a panic.
        for cut in [
            record.len() / 3,
            record.len() / 2,
            record.len().saturating_sub(1),
        ] {
            let mut at = cut.min(record.len());
            while !record.is_char_boundary(at) {
                at -= 1;
            }
            if read(&record[..at]).is_err() {
                problems.push(format!("record {i}: the reader panicked on it cut at {at}"));
            }
        }
        if read(&format!("\u{0}{record}\u{fffd}")).is_err() {
            problems.push(format!(
                "record {i}: the reader panicked on a broken record"
            ));
        }
        // Planted in every string the answer does not repeat.
        let Ok(mut value) = serde_json::from_str::<serde_json::Value>(record) else {
            continue;
        };
        // Only what the reading holds as a name (a session, a server, a
        // tool, a call id, a project, a version) is kept.
        let mut names: Vec<String> = Vec::new();
        if let RecordAnswer::Read(r) = &answer {
            names.extend(
                r.session
                    .iter()
                    .chain(&r.thread)
                    .chain(&r.project)
                    .chain(&r.version)
                    .cloned(),
            );
            names.extend(r.servers.iter().map(|s| s.name.clone()));
            for e in &r.evidence {
                names.extend(
                    e.server
                        .iter()
                        .chain(&e.tool)
                        .chain(&e.connection_id)
                        .cloned(),
                );
            }
        }
        let answer_text = serde_json::to_string(&names).unwrap_or_default();
        let plant = PLANTED_IN_RECORDS[i % PLANTED_IN_RECORDS.len()];
        plant_strings(&mut value, &answer_text, plant);
        if let Ok(answer) = read(&value.to_string()) {
            let text = serde_json::to_string(&answer).unwrap_or_default();
            for piece in ["SECRET-4a5b", "launch codes", "id_ed25519"] {
                if text.contains(piece) {
                    problems.push(format!(
                        "record {i}: planted text {piece:?} reached the reading"
                    ));
                }
            }
        }
    }
    (problems, seen)
}

/// Replaces every string of `value` the reading `answer` does not repeat
/// (a name it reads, an id, a time: kept) and that says what a record is
/// (`type`), with `plant`.
fn plant_strings(value: &mut serde_json::Value, answer: &str, plant: &str) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if key == "type" || key == "timestamp" {
                    continue;
                }
                plant_strings(v, answer, plant);
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| plant_strings(v, answer, plant)),
        Value::String(s) => {
            let kept = !s.is_empty()
                && (answer.contains(&format!("\"{s}\""))
                    || tether_core::model::Timestamp::parse_rfc3339(s).is_some()
                    || answer_repeats_a_part(answer, s));
            if !kept {
                *s = plant.to_owned();
            }
        }
        _ => {}
    }
}

/// Whether the answer repeats a name that is part of `s` (a tool name
/// `mcp__SERVER__TOOL`, a display name `TOOL (SERVER MCP Server)`, a
/// working directory whose last component is the project).
fn answer_repeats_a_part(answer: &str, s: &str) -> bool {
    s.split(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .flat_map(|part| part.split("__"))
        .filter(|part| part.len() > 2)
        .any(|part| answer.contains(&format!("\"{part}\"")))
}

/// [`check_records`], panicking with every problem; returns what it read.
pub fn assert_reads_records(
    reader: &dyn tether_core::records::RecordReader,
    role: &str,
    segments: &[String],
    records: &[String],
    configured: &[String],
) -> RecordsCheck {
    let (problems, seen) = check_records(reader, role, segments, records, configured);
    assert!(
        problems.is_empty(),
        "the session-record reader fails the conformance kit:\n  {}",
        problems.join("\n  ")
    );
    seen
}
