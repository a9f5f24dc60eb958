//! Each harness's telemetry mapping, checked against records recorded from
//! a real session of that harness (tests/fixtures/telemetry/, recorded with
//! `tether-harness-peers` against the fake model, with three servers: `time`
//! works, `broken` is a command that does not exist, `authy` answers 401
//! with OAuth metadata). Each fixture goes through the collector into a hub,
//! and the rows must show exactly what that harness's telemetry proves.

use std::collections::HashMap;
use std::sync::Arc;

use tether_collect::collector::Collector;
use tether_core::history::{AttachmentAttempt, ServerAttachment};
use tether_core::model::ProvenanceCode;
use tether_core::registry::Registry;
use tether_core::spec::{Endpoint, ServerSpec};
use tether_core::telemetry::TelemetryRecord;
use tether_core::vocab::{DisplayStatus, ReasonCode, ServerSource, StageState};
use tether_hub::{Hub, HubConfig};
// Links the first-party plugins, so the static registry holds them.
use tether_tests as _;

fn fixture(name: &str) -> Vec<TelemetryRecord> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/telemetry")
        .join(format!("{name}.jsonl"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a recorded record"))
        .collect()
}

/// The three servers of the recorded sessions, as today's configuration.
fn configured() -> Vec<ServerSpec> {
    vec![
        tether_tests::stdio_server("time", "mcp-server-time", &[], &[]),
        tether_tests::stdio_server("broken", "/nonexistent/bin", &[], &[]),
        ServerSpec::new(
            "authy",
            ServerSource::Profile,
            Endpoint::Http {
                url: "http://127.0.0.1:18090/mcp".into(),
                headers: vec![],
            },
        ),
    ]
}

/// Runs `fixture` for `kind` through a collector; the one session's attempt.
fn collected(
    kind: &str,
    fixture_name: &str,
) -> (AttachmentAttempt, tether_collect::collector::CollectorStats) {
    let registry = Registry::with_static().expect("the static plugins register");
    let hub = Arc::new(Hub::with_config(registry, HubConfig::default()));
    let mut collector = Collector::new(
        Arc::clone(&hub),
        HashMap::from([(kind.to_owned(), configured())]),
    );
    for record in fixture(fixture_name) {
        collector.take_record(&record);
    }
    hub.flush_blocking();
    let sessions = collector.sessions();
    assert_eq!(
        sessions.len(),
        1,
        "{kind}: one harness session: {sessions:?}"
    );
    let history = hub
        .snapshot(&sessions[0])
        .expect("the session is in the hub");
    (
        history.current().expect("a current attempt").clone(),
        collector.stats(),
    )
}

fn row<'a>(attempt: &'a AttachmentAttempt, name: &str) -> &'a ServerAttachment {
    attempt.server(name).unwrap_or_else(|| {
        panic!(
            "no row {name}: {:?}",
            attempt.servers.iter().map(|r| &r.name).collect::<Vec<_>>()
        )
    })
}

fn said_by_harness(state: &tether_core::model::StageObservation) -> bool {
    state.provenance == Some(ProvenanceCode::HarnessTelemetry)
}

/// The working server's tool was used, successfully, as the harness said.
fn assert_used(attempt: &AttachmentAttempt, ok_known: bool) {
    let time = row(attempt, "time");
    let call = time.last_tool_call.as_ref().expect("time's tool call");
    assert!(
        call.tool.contains("get_current_time") || call.tool.starts_with("sha256:"),
        "{call:?}"
    );
    assert_eq!(time.stages.model_visible.state, StageState::Yes);
    assert!(said_by_harness(&time.stages.model_visible));
    if ok_known {
        assert!(call.ok, "{call:?}");
        assert_eq!(time.stages.callable.state, StageState::Yes);
        assert!(
            matches!(
                time.status,
                DisplayStatus::Active | DisplayStatus::Connected
            ),
            "{:?}",
            time.status
        );
    }
}

/// A server the telemetry proves nothing about beyond being configured
/// (or taken into the session): never connected, never failed.
fn assert_unproven(attempt: &AttachmentAttempt, name: &str) {
    let r = row(attempt, name);
    assert_ne!(r.stages.initialized.state, StageState::Yes, "{name}: {r:?}");
    assert_ne!(r.status, DisplayStatus::Failed, "{name}: {r:?}");
    assert_ne!(r.status, DisplayStatus::Active, "{name}: {r:?}");
}

fn assert_failed(attempt: &AttachmentAttempt, name: &str, reason: ReasonCode) {
    let r = row(attempt, name);
    assert_eq!(r.status, DisplayStatus::Failed, "{name}: {r:?}");
    assert_eq!(r.reason_code, Some(reason), "{name}");
    assert!(said_by_harness(&r.stages.initialized), "{name}: {r:?}");
}

#[test]
fn claude_with_tool_details_shows_connected_failed_and_used() {
    let (attempt, stats) = collected("claude", "claude");
    assert_eq!(attempt.trigger.as_str(), "harness_session");
    let time = row(&attempt, "time");
    assert_eq!(time.stages.initialized.state, StageState::Yes);
    assert!(said_by_harness(&time.stages.initialized));
    assert_used(&attempt, true);
    assert_failed(&attempt, "broken", ReasonCode::CommandNotFound);
    // Claude sends no event for a server that needs auth.
    assert_unproven(&attempt, "authy");
    assert!(stats.ignored > 0, "unread kinds are counted: {stats:?}");
}

/// GIVEN Claude's recorded session with every `tool_parameters` cut short
/// (as an OpenTelemetry attribute length limit cuts it) WHEN collected THEN
/// each such record is counted unparsed, neither as a kind no mapping
/// reads nor as read.
#[test]
fn claude_cut_tool_parameters_are_counted_unparsed() {
    use tether_core::telemetry::TelemetryValue;
    let registry = Registry::with_static().expect("static plugins");
    let hub = Arc::new(Hub::with_config(registry, HubConfig::default()));
    let mut collector = Collector::new(
        Arc::clone(&hub),
        HashMap::from([("claude".to_owned(), configured())]),
    );
    let mut cut = 0;
    for mut record in fixture("claude") {
        let result = record.name == "tool_result";
        if let Some(TelemetryValue::Text(raw)) = record
            .attributes
            .get_mut("tool_parameters")
            .filter(|_| result)
        {
            raw.truncate(raw.len() / 2);
            cut += 1;
        }
        collector.take_record(&record);
    }
    let without = collected("claude", "claude").1;
    let stats = collector.stats();
    assert!(cut > 0, "the fixture has tool_parameters");
    assert_eq!(stats.unparsed, cut, "{stats:?}");
    assert_eq!(stats.ignored, without.ignored, "{stats:?} vs {without:?}");
    assert_eq!(stats.read + cut, without.read, "{stats:?} vs {without:?}");
}

#[test]
fn claude_without_tool_details_names_servers_only_through_tool_spans() {
    let (attempt, _) = collected("claude", "claude-plain");
    // The connection events carry no name: nothing per server from them.
    assert_unproven(&attempt, "broken");
    assert_unproven(&attempt, "authy");
    // The beta tool span names the tool raw: the model used time's tool.
    assert_used(&attempt, false);
}

#[test]
fn codex_shows_servers_taken_and_the_tool_used() {
    let (attempt, _) = collected("codex", "codex");
    for name in ["time", "broken", "authy"] {
        let r = row(&attempt, name);
        assert_eq!(r.stages.delivered.state, StageState::Yes, "{name}");
        assert!(said_by_harness(&r.stages.delivered), "{name}");
    }
    assert_used(&attempt, true);
    // Codex's telemetry says nothing of a failed start or a wanted login.
    assert_unproven(&attempt, "broken");
    assert_unproven(&attempt, "authy");
}

#[test]
fn gemini_shows_servers_taken_and_the_tool_used() {
    let (attempt, _) = collected("gemini", "gemini");
    assert_eq!(
        row(&attempt, "broken").stages.delivered.state,
        StageState::Yes
    );
    assert_used(&attempt, true);
    assert_unproven(&attempt, "broken");
    assert_unproven(&attempt, "authy");
}

#[test]
fn qwen_shows_tools_listed_and_used() {
    let (attempt, _) = collected("qwen", "qwen");
    let time = row(&attempt, "time");
    assert_eq!(time.stages.tools_listed.state, StageState::Yes);
    assert_eq!(
        time.tool_count,
        Some(2),
        "convert_time and get_current_time"
    );
    assert_used(&attempt, true);
    assert_unproven(&attempt, "broken");
    assert_unproven(&attempt, "authy");
}

#[test]
fn copilot_hashed_names_match_configured_ones() {
    let (attempt, _) = collected("copilot", "copilot");
    let time = row(&attempt, "time");
    assert_eq!(time.stages.initialized.state, StageState::Yes);
    assert_used(&attempt, true);
    assert_failed(&attempt, "broken", ReasonCode::AgentReportedFailed);
    // Copilot says `error` for the 401 server too: failed, never connected.
    assert_failed(&attempt, "authy", ReasonCode::AgentReportedFailed);
}

#[test]
fn opencode_splits_tool_names_only_against_configured_servers() {
    let (attempt, _) = collected("opencode", "opencode");
    assert_used(&attempt, true);
    assert_unproven(&attempt, "broken");
    assert_unproven(&attempt, "authy");
}

#[test]
fn a_server_only_the_telemetry_names_gets_a_harness_row() {
    let registry = Registry::with_static().expect("static plugins");
    let hub = Arc::new(Hub::with_config(registry, HubConfig::default()));
    // Nothing configured today: every row comes from the telemetry.
    let mut collector = Collector::new(Arc::clone(&hub), HashMap::new());
    for record in fixture("claude") {
        collector.take_record(&record);
    }
    hub.flush_blocking();
    let history = hub.snapshot(&collector.sessions()[0]).expect("session");
    let attempt = history.current().expect("attempt");
    let time = row(attempt, "time");
    assert_eq!(time.source, ServerSource::Harness);
    assert!(said_by_harness(&time.stages.configured));
    assert_eq!(time.transport.as_str(), "stdio");
    assert_failed(attempt, "broken", ReasonCode::CommandNotFound);
    assert!(
        attempt.server("authy").is_none(),
        "the telemetry never named it"
    );
}

#[test]
fn records_of_other_services_and_of_tether_itself_are_never_read() {
    let registry = Registry::with_static().expect("static plugins");
    let hub = Arc::new(Hub::with_config(registry, HubConfig::default()));
    let mut collector = Collector::new(Arc::clone(&hub), HashMap::new());
    for mut record in fixture("claude") {
        record.resource.insert(
            "service.name".into(),
            tether_core::telemetry::TelemetryValue::Text("tether-probe".into()),
        );
        collector.take_record(&record);
    }
    let stats = collector.stats();
    assert_eq!(stats.read, 0);
    assert_eq!(stats.foreign, stats.records);
    assert!(collector.sessions().is_empty());
}

/// Every attribute value of every recorded record (and its resource's),
/// replaced with planted secret and prompt text, through every mapping:
/// none of it reaches the hub's history (what the store, the view and the
/// export are all made from).
#[test]
fn planted_secrets_and_prompts_never_reach_a_history() {
    use tether_core::telemetry::TelemetryValue;
    const PLANTS: [&str; 3] = [
        "sk-PLANTEDSECRET0123456789abcdef",
        "PROMPT: tell me the launch codes",
        "/home/victim/.ssh/id_ed25519",
    ];
    // Keys that say which session and service a record is: always real.
    let structural = [
        "service.name",
        "event.name",
        "session.id",
        "conversation.id",
        "gen_ai.conversation.id",
        "service.instance.id",
    ];
    // Keys the mappings read names, words and outcomes from: real in pass
    // 1 (so the mappings still produce evidence, which is checked), planted
    // in pass 0.
    let names = [
        "server_name",
        "status",
        "transport_type",
        "tool_name",
        "mcp_server",
        "mcp_servers",
        "mcp_server_name",
        "mcp_tools",
        "function_name",
        "tool_type",
        "success",
        "tool.name",
        "gen_ai.tool.name",
        "github.copilot.mcp.server.name_hash",
        "github.copilot.mcp.server.state",
        "github.copilot.tool.parameters.mcp_server_name_hash",
    ];
    for pass in 0..2 {
        for (kind, name) in [
            ("claude", "claude"),
            ("claude", "claude-plain"),
            ("codex", "codex"),
            ("gemini", "gemini"),
            ("qwen", "qwen"),
            ("copilot", "copilot"),
            ("opencode", "opencode"),
        ] {
            let registry = Registry::with_static().expect("static plugins");
            let hub = Arc::new(Hub::with_config(registry, HubConfig::default()));
            let mut collector = Collector::new(
                Arc::clone(&hub),
                HashMap::from([(kind.to_owned(), configured())]),
            );
            for (i, mut record) in fixture(name).into_iter().enumerate() {
                let plant = PLANTS[i % PLANTS.len()];
                for map in [&mut record.attributes, &mut record.resource] {
                    for (key, value) in map.iter_mut() {
                        if structural.contains(&key.as_str())
                            || (pass == 1 && names.contains(&key.as_str()))
                        {
                            continue;
                        }
                        *value = match (key.as_str(), &*value) {
                            // Claude's names, beside tool input (as with
                            // OTEL_LOG_TOOL_DETAILS=1).
                            ("tool_parameters", _) if pass == 1 => TelemetryValue::Text(
                                serde_json::json!({"mcp_server_name": "time",
                                    "mcp_tool_name": "get_current_time", "input": plant})
                                .to_string(),
                            ),
                            (_, TelemetryValue::List(items)) => TelemetryValue::List(
                                items.iter().map(|_| plant.to_owned()).collect(),
                            ),
                            _ => TelemetryValue::Text(plant.to_owned()),
                        };
                    }
                }
                if let Some(status) = &mut record.status {
                    status.message = Some(plant.to_owned());
                }
                collector.take_record(&record);
            }
            hub.flush_blocking();
            if pass == 0 && name == "claude" {
                // Its `tool_parameters`, planted text, is no JSON: each MCP
                // call is said unparsed (counted), never read as no call.
                assert!(
                    collector.stats().unparsed > 0,
                    "{name}: {:?}",
                    collector.stats()
                );
            }
            if pass == 1 {
                assert!(
                    collector.stats().evidence > 0,
                    "{name}: with names real, the mapping still reads: {:?}",
                    collector.stats()
                );
            }
            for session in collector.sessions() {
                let history = hub.snapshot(&session).expect("session");
                let text = serde_json::to_string(&history).expect("serializes");
                for plant in PLANTS {
                    for piece in [plant, "PLANTEDSECRET", "launch codes", "id_ed25519"] {
                        assert!(
                            !text.contains(piece),
                            "{name} pass {pass}: {piece:?} reached the history: {text}"
                        );
                    }
                }
            }
        }
    }
}

/// A session id in a credential's form, planted in every other record of
/// each recorded session (the rest keep their real id, so the runs of one id
/// the collector checks once are broken again and again): every reading
/// naming it is refused whole, and no session, history or count shows it;
/// the real id's readings still read (issue 68's rule, checked once per run
/// of readings on the telemetry path since issue 70).
#[test]
fn a_planted_session_id_is_refused_between_real_ones() {
    use tether_core::telemetry::TelemetryValue;
    const PLANTED: &str = "sk-ant-api03-PLANTEDSESSIONSECRET0123456789";
    assert!(
        tether_core::telemetry::is_name_like(PLANTED),
        "only the credential check refuses it"
    );
    let ids = ["session.id", "conversation.id", "gen_ai.conversation.id"];
    for (kind, name) in [
        ("claude", "claude"),
        ("codex", "codex"),
        ("gemini", "gemini"),
        ("qwen", "qwen"),
        ("copilot", "copilot"),
        ("opencode", "opencode"),
    ] {
        // Odd records planted, then even ones: each reading is refused in
        // one run and read in the other.
        let (mut read, mut refused) = (0, 0);
        for parity in 0..2 {
            let registry = Registry::with_static().expect("static plugins");
            let hub = Arc::new(Hub::with_config(registry, HubConfig::default()));
            let mut collector = Collector::new(
                Arc::clone(&hub),
                HashMap::from([(kind.to_owned(), configured())]),
            );
            let mut planted = 0;
            for (i, mut record) in fixture(name).into_iter().enumerate() {
                if i % 2 == parity {
                    for map in [&mut record.attributes, &mut record.resource] {
                        for (key, value) in map.iter_mut() {
                            if ids.contains(&key.as_str()) {
                                *value = TelemetryValue::Text(PLANTED.to_owned());
                                planted += 1;
                            }
                        }
                    }
                }
                collector.take_record(&record);
            }
            hub.flush_blocking();
            let stats = collector.stats();
            read += stats.read;
            refused += stats.refused;
            assert!(planted > 0, "{name}: a record names its session");
            for session in collector.sessions() {
                assert!(
                    !session.contains("PLANTED"),
                    "{name}: a session of the planted id: {session}"
                );
                let history = hub.snapshot(&session).expect("session");
                let text = serde_json::to_string(&history).expect("serializes");
                assert!(
                    !text.contains("PLANTED"),
                    "{name}: the planted id reached the history: {text}"
                );
            }
        }
        assert!(read > 0, "{name}: the real id's readings read");
        assert!(refused > 0, "{name}: the planted id's are refused");
    }
}

/// Every first-party mapping passes the conformance kit's telemetry check
/// against its harness's recorded session, and reads something there.
#[test]
fn every_mapping_conforms_on_its_recorded_session() {
    let registry = Registry::with_static().expect("static plugins");
    let configured = vec!["time".to_owned(), "broken".to_owned(), "authy".to_owned()];
    for (kind, name) in [
        ("claude", "claude"),
        ("claude", "claude-plain"),
        ("codex", "codex"),
        ("gemini", "gemini"),
        ("qwen", "qwen"),
        ("copilot", "copilot"),
        ("opencode", "opencode"),
    ] {
        let reader = registry
            .observer_for(kind, tether_core::plan::DriveMode::Passthrough)
            .and_then(|o| o.roles().telemetry)
            .unwrap_or_else(|| panic!("{kind}: a passthrough plugin"));
        let seen =
            tether_sdk::conformance::assert_reads_telemetry(reader, &fixture(name), &configured);
        assert!(seen.read > 0, "{name}: the mapping read nothing: {seen:?}");
        assert_eq!(
            seen.not_mine, 0,
            "{name}: its own records are its own: {seen:?}"
        );
    }
}

/// GIVEN a sender that invents a new harness session for every record WHEN
/// more arrive than the collector keeps live THEN memory stays bounded: at
/// most `MAX_LIVE_SESSIONS` sessions stay live in the hub, the oldest are
/// let go (counted), and every record was still read.
#[test]
fn a_flood_of_sessions_keeps_memory_bounded() {
    use tether_collect::collector::MAX_LIVE_SESSIONS;
    let registry = Registry::with_static().expect("static plugins");
    let hub = Arc::new(Hub::with_config(registry, HubConfig::default()));
    let mut collector = Collector::new(Arc::clone(&hub), HashMap::new());
    let template = fixture("claude")
        .into_iter()
        .find(|r| r.name == "mcp_server_connection")
        .expect("a connection record");
    let extra = 64;
    for i in 0..MAX_LIVE_SESSIONS + extra {
        let mut record = template.clone();
        record.attributes.insert(
            "session.id".into(),
            tether_core::telemetry::TelemetryValue::Text(format!("flood-{i}")),
        );
        collector.take_record(&record);
    }
    hub.flush_blocking();
    let stats = collector.stats();
    assert_eq!(stats.read as usize, MAX_LIVE_SESSIONS + extra);
    assert_eq!(stats.evicted as usize, extra, "{stats:?}");
    assert_eq!(collector.sessions().len(), MAX_LIVE_SESSIONS);
    assert!(
        hub.sessions().len() <= MAX_LIVE_SESSIONS,
        "{}",
        hub.sessions().len()
    );
    assert!(
        hub.snapshot("claude:flood-0").is_none(),
        "the oldest was let go"
    );
    assert!(
        hub.snapshot(&format!("claude:flood-{}", MAX_LIVE_SESSIONS + extra - 1))
            .is_some()
    );
}

/// GIVEN a hub on a SQLite store and Claude Code's recorded `tool_result`
/// log (2.1.197, tests/fixtures/telemetry) from one process
/// (`service.instance.id`) WHEN the collector takes a readable one naming
/// its session, then unparsed ones: one naming no session from the same
/// process, one naming a secret where the session id belongs, one naming
/// no session from another process THEN only the first unparsed one is
/// counted, on that session's attempt (joined by its process); the others
/// have no session to join and are counted unsessioned, never guessed onto
/// it, and the planted text reaches neither the store nor the stats.
#[test]
fn an_unparsed_answer_joins_its_process_s_session_or_none() {
    use tether_core::model::Unparsed;
    use tether_core::store::Store as _;
    use tether_core::telemetry::TelemetryValue as V;
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("t.db");
    let store = Arc::new(tether_store::SqliteStore::open(&path).expect("store"));
    let registry = Registry::with_static().expect("the static plugins register");
    let hub = Arc::new(Hub::with_store(
        registry,
        HubConfig::default(),
        Arc::clone(&store) as Arc<dyn tether_core::store::Store>,
    ));
    let mut collector = Collector::new(Arc::clone(&hub), HashMap::new());
    let recorded = fixture("claude")
        .into_iter()
        .find(|r| r.name == "tool_result" && r.text("tool_parameters").is_some())
        .expect("an MCP tool_result");
    let session = recorded.text("session.id").expect("a session").into_owned();
    let from = |process: &str, session: Option<&str>, parameters: &str| {
        let mut r = recorded
            .clone()
            .with_resource("service.instance.id", V::Text(process.into()))
            .with_attr("tool_parameters", V::Text(parameters.into()));
        match session {
            Some(s) => r.attributes.insert("session.id".into(), V::Text(s.into())),
            None => r.attributes.remove("session.id"),
        };
        r
    };
    let good = recorded
        .text("tool_parameters")
        .expect("names")
        .into_owned();
    collector.take_record(&from("proc-1", Some(&session), &good));
    collector.take_record(&from("proc-1", None, "{\"mcp_server_name\":\"ti"));
    collector.take_record(&from(
        "proc-2",
        Some("sk-live-PLANTED0123456789abcdefABCDEF"),
        "PLANTED",
    ));
    collector.take_record(&from("proc-3", None, "PLANTED"));
    collector.flush_unparsed();
    let stats = collector.stats();
    assert_eq!(
        (
            stats.read,
            stats.unparsed,
            stats.unparsed_sessioned,
            stats.unsessioned
        ),
        (1, 3, 1, 2),
        "{stats:?}"
    );
    assert_eq!(stats.unparsed_unstored, 0, "{stats:?}");
    hub.flush_store();
    let tether_session = format!("claude:{session}");
    let attempt = store
        .load(&tether_session)
        .expect("load")
        .and_then(|h| h.current_attempt_id.clone())
        .expect("the session's attempt");
    let counted = store.unparsed_telemetry(&tether_session).expect("counts");
    let got: Vec<_> = counted
        .iter()
        .map(|c| (c.attempt_id.as_str(), c.kind.as_str(), c.why, c.count))
        .collect();
    assert_eq!(
        got,
        vec![(attempt.as_str(), "tool_result", Unparsed::CutShort, 1)]
    );
    drop(collector);
    drop(hub);
    let bytes = std::fs::read(&path).expect("the store's file");
    assert!(
        !bytes.windows(7).any(|w| w == b"PLANTED"),
        "planted text reached the store"
    );
}
