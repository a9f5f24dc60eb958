//! Third-party plugins loaded from shared libraries: listed as dynamic,
//! indistinguishable in behaviour from compiled-in ones, and refused cleanly
//! (the process stays up) when built for another ABI or when they panic.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use tether_core::observer::plan;
use tether_core::registry::{PluginSource, Registry};
use tether_core::vocab::{ReasonCode, Trigger};
use tether_core::{Decision, DriveMode, PlanContext, TransportObserver};
use tether_gemini_plugin::GeminiPlugin;
use tether_hub::{AttemptRequest, Hub};
use tether_sdk::dynamic::{ABI_VERSION, LoadError, load};
use tether_tests::{workspace_bin, workspace_lib};

fn gemini_lib() -> std::path::PathBuf {
    workspace_lib("tether-gemini-plugin")
}

fn decisions(registry: Registry) -> Vec<(String, Option<ReasonCode>)> {
    let hub = Hub::new(registry);
    hub.begin_attempt(AttemptRequest::new(
        tether_core::Owner {
            task: "t".into(),
            session: "s".into(),
            execution: "e".into(),
        },
        "gemini-system",
        DriveMode::Passthrough,
        Trigger::PassthroughStart,
        tether_sdk::conformance::servers(),
    ))
    .expect("begin");
    hub.snapshot("s")
        .expect("history")
        .current()
        .expect("current")
        .servers
        .iter()
        .map(|r| (r.decision.to_string(), r.reason_code.clone()))
        .collect()
}

#[test]
fn a_loaded_plugin_turns_no_strategy_into_real_decisions() {
    let before = decisions(Registry::empty());
    // The kit's servers include one duplicate name, which the core filters first.
    let not_duplicates = |rows: &[(String, Option<ReasonCode>)]| {
        rows.iter()
            .filter(|(_, r)| *r != Some(ReasonCode::DuplicateName))
            .cloned()
            .collect::<Vec<_>>()
    };
    assert!(
        not_duplicates(&before)
            .iter()
            .all(|(d, r)| d == "unavailable" && *r == Some(ReasonCode::NoStrategy)),
        "{before:?}"
    );

    let plugin = load(&gemini_lib()).expect("load the example plugin");
    let mut registry = Registry::empty();
    registry
        .add(
            plugin,
            PluginSource::Dynamic {
                path: "gemini".into(),
                abi_version: ABI_VERSION,
            },
        )
        .expect("add");
    // Its identity crosses the boundary: the registry lists it as a harness.
    let harnesses: Vec<String> = registry
        .harnesses()
        .into_iter()
        .map(|h| String::from(h.id))
        .collect();
    assert_eq!(harnesses, ["gemini-system"]);
    let after = decisions(registry);
    assert!(after.iter().any(|(d, _)| d == "deliver"), "{after:?}");
    assert!(
        after
            .iter()
            .all(|(_, r)| *r != Some(ReasonCode::NoStrategy))
    );
}

#[test]
fn a_loaded_plugin_behaves_exactly_like_the_compiled_in_one() {
    let dynamic = load(&gemini_lib()).expect("load");
    let compiled = GeminiPlugin;
    assert_eq!(dynamic.descriptor(), compiled.descriptor());
    let servers = tether_sdk::conformance::servers();
    let ctx = PlanContext {
        agent_kind: "gemini-system".into(),
        drive_mode: DriveMode::Passthrough,
        capabilities: Default::default(),
        strict: true,
    };
    let via_library = plan(
        Some(dynamic.as_ref() as &dyn TransportObserver),
        &servers,
        &ctx,
    );
    let in_process = plan(Some(&compiled as &dyn TransportObserver), &servers, &ctx);
    let d = |p: &tether_core::Plan| {
        serde_json::to_string(&p.servers.iter().map(|s| &s.decision).collect::<Vec<_>>())
            .expect("json")
    };
    assert_eq!(d(&via_library), d(&in_process));
    let dir = Path::new("/tmp/x");
    let a = dynamic
        .passthrough()
        .expect("passthrough")
        .materialize(&via_library, &ctx, dir)
        .expect("materialize");
    let b = compiled
        .passthrough()
        .expect("passthrough")
        .materialize(&in_process, &ctx, dir)
        .expect("materialize");
    // Same arguments and environment, and the same files (as JSON: key order
    // may differ when the library and the test link serde_json with different features).
    assert_eq!((&a.args, &a.env), (&b.args, &b.env));
    assert_eq!(a.files.len(), b.files.len());
    for (fa, fb) in a.files.iter().zip(&b.files) {
        assert_eq!(fa.name, fb.name);
        let va: serde_json::Value = serde_json::from_str(&fa.contents).expect("json");
        let vb: serde_json::Value = serde_json::from_str(&fb.contents).expect("json");
        assert_eq!(va, vb);
    }
    // And the loaded plugin passes the same conformance kit.
    tether_sdk::conformance::assert_conforms(dynamic.as_ref());
}

#[test]
fn a_library_built_for_another_abi_is_refused_and_the_process_stays_up() {
    let path = workspace_lib("tether-abi-mismatch-plugin");
    match load(&path) {
        Err(LoadError::AbiMismatch {
            found, expected, ..
        }) => {
            assert_eq!((found, expected), (999, ABI_VERSION));
        }
        other => panic!("expected an ABI mismatch, got {other:?}"),
    }
    // Still here; and the CLI says so clearly, exiting 1 instead of crashing.
    let out = Command::new(workspace_bin("tether"))
        .args(["plugins", "--load"])
        .arg(&path)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ABI 999") && err.contains("rebuild"), "{err}");
    assert!(matches!(
        load(Path::new("/nonexistent/plugin.so")),
        Err(LoadError::Library { .. })
    ));
    let not_a_plugin = workspace_bin("tether-hostile-mcp");
    assert!(load(&not_a_plugin).is_err());
}

#[test]
fn a_panicking_plugin_is_contained_at_the_boundary() {
    let plugin =
        load(&workspace_lib("tether-panicking-plugin")).expect("it loads; it only panics later");
    let mut registry = Registry::empty();
    registry
        .add(
            plugin,
            PluginSource::Dynamic {
                path: "panicky".into(),
                abi_version: ABI_VERSION,
            },
        )
        .expect("add");
    let hub = Hub::new(registry);
    let handle = hub
        .begin_attempt(AttemptRequest::new(
            tether_core::Owner {
                task: "t".into(),
                session: "s".into(),
                execution: "e".into(),
            },
            "panicky",
            DriveMode::Passthrough,
            Trigger::PassthroughStart,
            tether_sdk::conformance::servers(),
        ))
        .expect("begin");
    for planned in &handle.plan.servers {
        assert!(
            matches!(
                &planned.decision,
                Decision::Unavailable {
                    reason_code: ReasonCode::ObserverOmitted,
                    ..
                } | Decision::Filter {
                    reason_code: ReasonCode::DuplicateName,
                    ..
                }
            ),
            "{:?}",
            planned.decision
        );
    }
}

#[test]
fn tether_plugins_lists_the_loaded_library_as_dynamic() {
    let out = Command::new(workspace_bin("tether"))
        .args(["plugins", "--json", "--load"])
        .arg(gemini_lib())
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let plugins = doc["plugins"].as_array().expect("plugins");
    let gemini = plugins
        .iter()
        .find(|p| p["name"] == "gemini-system-settings")
        .expect("listed");
    assert_eq!(gemini["source"], "dynamic");
    assert_eq!(gemini["abi_version"], 4);
    assert_eq!(gemini["agent_kinds"][0], "gemini-system");
    assert!(
        plugins
            .iter()
            .any(|p| p["name"] == "passthrough-claude" && p["source"] == "static")
    );
    // The typed listing reads it back unchanged (`tether schema plugins`).
    let typed: tether_core::registry::PluginListing =
        serde_json::from_slice(&out.stdout).expect("a PluginListing");
    assert_eq!(serde_json::to_value(&typed).expect("json"), doc);
    std::fs::write(
        tether_tests::samples_dir().join("plugins.json"),
        serde_json::to_vec_pretty(&doc).expect("json"),
    )
    .expect("sample");
}

#[test]
fn probe_load_makes_the_gemini_kind_materialize() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out_dir = dir.path().join("seen");
    std::fs::create_dir(&out_dir).expect("mkdir");
    let script = dir.path().join("fake-gemini");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncp \"$GEMINI_CLI_SYSTEM_SETTINGS_PATH\" {0}/settings.json\n",
            out_dir.display()
        ),
    )
    .expect("script");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = Command::new(workspace_bin("tether"))
        .args([
            "probe",
            "--json",
            "--grace",
            "0.5",
            "--passthrough",
            "gemini-system",
            "--load",
        ])
        .arg(gemini_lib())
        .arg("--")
        .arg(&script)
        .output()
        .expect("run");
    // A stand-in that exits at once without connecting: delivered to a
    // process that exited (exit code 3, the JSON still printed).
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(doc["verdict"], "agent_exited", "{doc:#}");
    assert_eq!(doc["agent_exit"]["code"], 0, "{doc:#}");
    let settings =
        std::fs::read_to_string(out_dir.join("settings.json")).expect("settings materialized");
    assert!(
        settings.contains("tether-sentinel") && settings.contains("httpUrl"),
        "{settings}"
    );
}

/// GIVEN a plugin library whose constructor (the `export_plugin!`
/// expression) panics WHEN the host loads it THEN the panic is caught inside
/// the library, the load fails with an error that says so, and the host
/// stays up (a second load fails the same way).
#[test]
fn a_plugin_whose_constructor_panics_is_refused_and_the_host_stays_up() {
    let path = workspace_lib("tether-panicking-constructor-plugin");
    for _ in 0..2 {
        match load(&path) {
            Err(LoadError::Describe { reason, .. }) => {
                assert!(reason.contains("panicked"), "{reason}")
            }
            Err(other) => panic!("expected a describe error, got {other}"),
            Ok(_) => panic!("a plugin that cannot be built loaded"),
        }
    }
}

/// GIVEN the example plugin loaded from its shared library WHEN it is asked
/// for its telemetry setup and given a recorded Gemini CLI session's records
/// THEN the answers that cross the ABI are exactly the compiled-in plugin's:
/// the same setup, and the same reading of every record.
#[test]
fn telemetry_crosses_the_plugin_boundary_as_data() {
    use tether_core::telemetry::{TelemetryRecord, TelemetryTarget};
    let dynamic = load(&gemini_lib()).expect("load");
    let compiled = GeminiPlugin;
    let (dynamic_p, compiled_p) = (
        dynamic.roles().telemetry.expect("a telemetry role"),
        compiled.roles().telemetry.expect("a telemetry role"),
    );
    let target = TelemetryTarget {
        endpoint: "http://127.0.0.1:4318".into(),
        authorization: "Bearer t0ken".into(),
    };
    let setup = dynamic_p.telemetry_setup(&target).expect("a setup");
    assert_eq!(Some(&setup), compiled_p.telemetry_setup(&target).as_ref());
    assert_eq!(setup.agent_kind, "gemini-system");
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/telemetry/gemini.jsonl");
    let configured = vec!["time".to_owned(), "broken".to_owned(), "authy".to_owned()];
    let mut read = 0;
    for line in std::fs::read_to_string(fixture).expect("fixture").lines() {
        if line.trim().is_empty() {
            continue;
        }
        let record: TelemetryRecord = serde_json::from_str(line).expect("record");
        let across = dynamic_p.read_telemetry(&record, &configured);
        assert_eq!(across, compiled_p.read_telemetry(&record, &configured));
        if matches!(across, tether_core::telemetry::TelemetryAnswer::Read(_)) {
            read += 1;
        }
    }
    assert!(
        read >= 2,
        "the config and the tool call are read across the boundary"
    );
}

/// The session-record half crosses too (ABI 3): a loaded plugin's sources,
/// its reader and (ABI 4) the versions it was verified on answer exactly as
/// the same plugin compiled in.
#[test]
fn session_records_cross_the_plugin_boundary_as_data() {
    let dynamic = load(&gemini_lib()).expect("load");
    let compiled = GeminiPlugin;
    let (dynamic_p, compiled_p) = (
        dynamic.roles().records.expect("a records role"),
        compiled.roles().records.expect("a records role"),
    );
    let sources = dynamic_p.record_sources();
    assert!(!sources.is_empty());
    assert_eq!(sources, compiled_p.record_sources());
    let verified = dynamic_p.records_verified_on();
    assert!(verified.is_some());
    assert_eq!(verified, compiled_p.records_verified_on());
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/records/gemini/.gemini/tmp/tmpghna9p/chats");
    let configured = vec!["time".to_owned(), "broken".to_owned(), "authy".to_owned()];
    let mut read = 0;
    for entry in std::fs::read_dir(&dir).expect("chats").flatten() {
        let segments: Vec<String> = ["tmp", "tmpghna9p", "chats"]
            .iter()
            .map(|s| (*s).to_owned())
            .chain([entry.file_name().to_string_lossy().into_owned()])
            .collect();
        let file = tether_core::records::RecordFile {
            role: &sources[0].role,
            segments: &segments,
            session: None,
            configured: &configured,
        };
        for line in std::fs::read_to_string(entry.path()).expect("chat").lines() {
            let across = dynamic_p.read_record(&file, line);
            assert_eq!(across, compiled_p.read_record(&file, line));
            if let tether_core::records::RecordAnswer::Read(reading) = across
                && !reading.evidence.is_empty()
            {
                read += 1;
            }
        }
    }
    assert!(read >= 1, "the tool call is read across the boundary");
}

/// GIVEN the example plugin loaded from its shared library WHEN it is asked
/// how a user adds a server to its harness (ABI 4) THEN the answer that
/// crosses is exactly the compiled-in plugin's, arguments and all.
#[test]
fn server_setup_crosses_the_plugin_boundary_as_data() {
    let dynamic = load(&gemini_lib()).expect("load");
    let compiled = GeminiPlugin;
    let args = vec!["mcp".to_owned(), "--flag=it's".to_owned()];
    let across = dynamic
        .roles()
        .setup
        .expect("a set-up role")
        .server_setup("tether", "/usr/bin/tether", &args)
        .expect("a setup");
    assert_eq!(
        Some(&across),
        compiled
            .roles()
            .setup
            .expect("a set-up role")
            .server_setup("tether", "/usr/bin/tether", &args)
            .as_ref()
    );
    assert!(
        across.file.text.contains("--flag=it's"),
        "{}",
        across.file.text
    );
}

/// GIVEN a plugin library named with `--load` WHEN `tether collect` and
/// `tether tap` start (each builds its registry, and a hub on the store
/// that reads with the same plugins) THEN the library is loaded once per
/// command, not once for the flags and again for the hub.
#[test]
fn a_loaded_library_is_loaded_once_per_command() {
    for command in ["collect", "tap"] {
        let home = tempfile::tempdir().expect("home");
        let stderr = home.path().join("stderr");
        let mut child = tether_tests::tether_at_home(home.path())
            .args([command, "--addr", "127.0.0.1:0", "--json", "--db"])
            .arg(home.path().join("tether.db"))
            .arg("--load")
            .arg(gemini_lib())
            .env("TETHER_LOG", "debug")
            .stdout(std::process::Stdio::piped())
            .stderr(std::fs::File::create(&stderr).expect("stderr"))
            .spawn()
            .expect("tether");
        // Its document is printed once the registry and the hub are built.
        let (doc, _) = tether_tests::first_json_line(&mut child);
        assert!(doc["schema_version"].is_number(), "{doc}");
        let _ = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let code = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break status.code();
            }
            if std::time::Instant::now() > deadline {
                tether_tests::kill_group(&mut child);
                panic!("tether {command} did not stop on Ctrl-C");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        let log = std::fs::read_to_string(&stderr).expect("stderr");
        assert_eq!(code, Some(0), "{log}");
        let loads = log.matches("loading a plugin library").count();
        assert_eq!(
            loads, 1,
            "tether {command} loaded the library {loads} times:\n{log}"
        );
    }
}
