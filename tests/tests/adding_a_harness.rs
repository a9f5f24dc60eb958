//! ARCHITECTURE.md's "Adding a harness", proven: the toy harness
//! (`tests/fixtures/toy-harness`) is one crate, listed in the root manifest
//! and (as a test-only harness) in this crate's dev-dependencies, and nowhere
//! else. Linked in, it is a harness like the first-party ones: its plugin,
//! its scanner and its readers share one name; `tether inventory`'s scan
//! reads its configuration; `tether sessions`' reader reads its session
//! files; `tether collect`'s collector reads its telemetry; and what it
//! says to add a server, its scanner reads back.
//!
//! Also, for every harness linked here: the plugin's first agent kind, the
//! scanner's harness and the readers' sessions share one identity.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use tether_core::registry::Registry;
use tether_core::telemetry::{TelemetryRecord, TelemetrySignal, TelemetryValue};
use tether_core::vocab::{CapabilityKind, DisplayStatus};
use tether_core::{DriveMode, Endpoint, ServerSource, ServerSpec};
use tether_inventory::{ScanContext, scan_all, scanners};
use tether_records::{Filter, Home, Records};
use tether_tests as _;
use tether_toy_harness as _;

/// A private home holding the toy's configuration and one session file.
fn toy_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("home");
    std::fs::create_dir_all(home.path().join(".toy/sessions")).expect("dir");
    std::fs::write(
        home.path().join(".toy/servers.json"),
        r#"{"mcpServers": {"time": {"command": "/bin/true"}, "docs": {"url": "https://docs.example.invalid/mcp"}}}"#,
    )
    .expect("config");
    std::fs::write(
        home.path().join(".toy/sessions/s1.jsonl"),
        concat!(
            r#"{"session":"s1","at":1000,"server":"time","event":"connected"}"#,
            "\n",
            r#"{"session":"s1","at":2000,"server":"time","event":"tool_call","tool":"now","ok":true}"#,
            "\n",
        ),
    )
    .expect("session");
    home
}

fn configured() -> Vec<ServerSpec> {
    vec![
        tether_tests::stdio_server("time", "/bin/true", &[], &[]),
        ServerSpec::new(
            "docs",
            ServerSource::Profile,
            Endpoint::Http {
                url: "https://docs.example.invalid/mcp".into(),
                headers: vec![],
            },
        ),
    ]
}

#[test]
fn every_harness_s_plugin_scanner_and_readers_share_one_name() {
    let registry = Registry::with_static().expect("registry");
    let target = tether_core::telemetry::TelemetryTarget {
        endpoint: "http://127.0.0.1:4318".into(),
        authorization: String::new(),
    };
    let scanned: Vec<&str> = scanners().iter().map(|s| s.harness()).collect();
    assert!(scanned.contains(&"toy"), "{scanned:?}");
    // The registry lists harnesses by the same names the scanners use.
    let mut listed: Vec<String> = registry
        .harnesses()
        .into_iter()
        .map(|h| String::from(h.id))
        .collect();
    listed.sort();
    let mut expected: Vec<String> = scanned.iter().map(|s| (*s).to_owned()).collect();
    expected.sort();
    assert_eq!(listed, expected, "registry harnesses vs scanners");
    for harness in &scanned {
        // Each scanner's harness is the first agent kind of a passthrough
        // plugin that says how to add a server to it.
        let plugin = registry
            .plugins()
            .iter()
            .find(|p| p.descriptor.agent_kinds.first().map(String::as_str) == Some(*harness))
            .unwrap_or_else(|| panic!("no plugin's first agent kind is {harness:?}"));
        assert_eq!(plugin.descriptor.drive_mode, DriveMode::Passthrough);
        let roles = registry
            .observer_for(harness, DriveMode::Passthrough)
            .expect("a plugin")
            .roles();
        assert!(
            roles
                .setup
                .and_then(|s| s.server_setup("x", "/bin/x", &[]))
                .is_some(),
            "{harness}: says how to add a server"
        );
        // What reads its sessions or its telemetry answers to the same name.
        if let Some(setup) = roles.telemetry.and_then(|t| t.telemetry_setup(&target)) {
            assert_eq!(setup.agent_kind, *harness);
        }
    }
    // And every plugin that reads sessions has a scanner of its name.
    for plugin in registry.plugins() {
        let Some(kind) = plugin.descriptor.agent_kinds.first() else {
            continue;
        };
        let reads = registry
            .observer_for(kind, DriveMode::Passthrough)
            .and_then(|o| o.roles().records)
            .is_some_and(|p| !p.record_sources().is_empty());
        if reads {
            assert!(scanned.contains(&kind.as_str()), "{kind}: no scanner");
        }
    }
}

/// GIVEN the toy harness linked in (one crate) WHEN its configuration, its
/// session file, a telemetry record and its server setup meet the same
/// machinery as every first-party harness THEN each reads as theirs do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_harness_added_as_one_crate_is_read_everywhere() {
    let home = toy_home();
    // The inventory.
    let ctx = ScanContext::new(
        home.path().to_path_buf(),
        None,
        "/".into(),
        BTreeMap::from([("HOME".to_owned(), home.path().as_os_str().to_owned())]),
    );
    let document = scan_all(&ctx, &scanners(), &["toy".to_owned()]);
    let mut names: Vec<&str> = document
        .rows
        .iter()
        .filter(|r| r.kind == CapabilityKind::McpServer && r.harness == "toy")
        .map(|r| r.name.as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["docs", "time"], "{document:?}");

    // The session records.
    let registry = Registry::with_static().expect("registry");
    let mut records = Records::new(
        &registry,
        &Home::new(home.path(), HashMap::new()),
        HashMap::from([("toy".to_owned(), configured())]),
        Filter {
            harnesses: vec!["toy".into()],
            ..Filter::default()
        },
    );
    records.read(true);
    let facts = records
        .sessions()
        .get("toy:s1")
        .unwrap_or_else(|| panic!("{:?}", records.sessions().keys().collect::<Vec<_>>()));
    let history = records.history(facts, None).expect("history");
    let attempt = history.current().expect("attempt");
    let time = attempt.server("time").expect("time's row");
    assert_eq!(time.status, DisplayStatus::Active, "{time:?}");
    assert_eq!(time.tools.first().map(|t| t.calls), Some(1));
    assert_ne!(
        attempt.server("docs").map(|r| r.status),
        Some(DisplayStatus::Active),
        "nothing showed docs"
    );

    // Its telemetry, as `tether collect` reads it.
    let hub = Arc::new(tether_hub::Hub::new(
        Registry::with_static().expect("registry"),
    ));
    let mut collector = tether_collect::collector::Collector::new(
        Arc::clone(&hub),
        HashMap::from([("toy".to_owned(), configured())]),
    );
    let mut record = TelemetryRecord::new(
        TelemetrySignal::Log,
        "toy.tool_call",
        tether_core::model::Timestamp(3000),
    );
    for (k, v) in [("session.id", "t1"), ("server", "time"), ("tool", "now")] {
        record
            .attributes
            .insert(k.to_owned(), TelemetryValue::Text(v.to_owned()));
    }
    collector.take_record(&record);
    hub.flush().await;
    let session = hub
        .sessions()
        .into_iter()
        .find(|s| s.starts_with("toy:"))
        .unwrap_or_else(|| panic!("{:?}", hub.sessions()));
    let attempt = hub
        .snapshot(&session)
        .and_then(|h| h.current().cloned())
        .expect("attempt");
    let time = attempt.server("time").expect("time's row");
    assert_eq!(time.tools.first().map(|t| t.calls), Some(1), "{time:?}");

    // What it says to add a server, its scanner reads back.
    let setup = registry
        .observer_for("toy", DriveMode::Passthrough)
        .and_then(|o| o.roles().setup)
        .expect("toy")
        .server_setup("tether", "/usr/bin/tether", &["mcp".into()])
        .expect("setup");
    let other = tempfile::tempdir().expect("home");
    let file = other.path().join(setup.file.file.trim_start_matches("~/"));
    std::fs::create_dir_all(file.parent().expect("dir")).expect("dir");
    std::fs::write(&file, &setup.file.text).expect("block");
    let ctx = ScanContext::new(
        other.path().to_path_buf(),
        None,
        "/".into(),
        BTreeMap::from([("HOME".to_owned(), other.path().as_os_str().to_owned())]),
    );
    let document = scan_all(&ctx, &scanners(), &["toy".to_owned()]);
    assert!(
        document
            .rows
            .iter()
            .any(|r| r.name == "tether" && r.harness == "toy" && r.is_enabled()),
        "{document:?}"
    );
}

/// GIVEN each harness's dialect, declared once by its plugin WHEN a value is
/// written in its reference spelling THEN its entry shape's own expansion
/// reads the value back: what the materializer writes, the scanner's model
/// of the harness expands.
#[test]
fn every_harness_s_dialect_reads_back_what_it_writes() {
    use tether_sdk::materialize::{Dialect, RefStyle};
    for (harness, dialect) in [
        ("claude", tether_passthrough_claude::DIALECT),
        ("codex", tether_passthrough_codex::DIALECT),
        ("copilot", tether_passthrough_copilot::DIALECT),
        ("cursor", tether_passthrough_cursor::DIALECT),
        ("gemini", tether_passthrough_gemini::DIALECT),
        ("opencode", tether_passthrough_opencode::DIALECT),
        ("toy", tether_toy_harness::DIALECT),
    ] {
        assert!(dialect.round_trips(), "{harness}: {dialect:?}");
    }
    // A spelling the entry shape does not expand is caught.
    let mismatched = Dialect::new(
        tether_inventory::EntryDialect::TypedLocalRemote,
        RefStyle::Braces,
    );
    assert!(!mismatched.round_trips());
    let by_name = Dialect::new(tether_inventory::EntryDialect::McpJson, RefStyle::Name);
    assert!(!by_name.round_trips());
}
