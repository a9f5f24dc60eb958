//! The MCP project's own conformance suite (`@modelcontextprotocol/conformance`,
//! pinned in `tests/peers/conformance`, run on Node 22) against Tether's
//! client: `tether endpoint-test --url` is the suite's client command. Each
//! client scenario either passes or is an expected failure written down
//! below with why (the suite fails a run whose expected failure passes, so
//! the list cannot go stale). The results table in `docs/CONFORMANCE.md` is
//! generated from the suite's own `checks.json`; `TETHER_UPDATE_CONFORMANCE=1`
//! rewrites it.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tether_tests::workspace_bin;

/// Client scenarios run against the endpoint check. The suite's auth
/// scenarios are left out: they drive an OAuth flow in a browser, which an
/// endpoint check never starts.
const CLIENT_SCENARIOS: &[&str] = &[
    "initialize",
    "request-metadata",
    "http-standard-headers",
    "json-schema-ref-no-deref",
    "sse-retry",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-2020-12-preservation",
    "sep-2322-client-request-state",
];

/// Client scenarios outside an endpoint check's job, with why. The check
/// is a bounded `initialize` (or `server/discover`) + `tools/list`, and
/// calls no tool by design: it must never run a user's tool to test a
/// connection.
const EXPECTED_CLIENT_FAILURES: &[(&str, &str)] = &[
    (
        "sse-retry",
        "its reconnection follows a tools/call whose stream the server closes; the check calls no tool, so its one GET (the standalone stream, opened after the legacy handshake) has no Last-Event-ID to send, a WARNING the suite counts as a failure",
    ),
    ("tools_call", "the check calls no tool"),
    (
        "elicitation-sep1034-client-defaults",
        "the elicitation comes from inside a tool call, and the check calls no tool",
    ),
    (
        "http-custom-headers",
        "its checks are emitted on tools/call requests (headers mirrored from a tool's arguments); the check calls no tool",
    ),
    (
        "http-invalid-tool-headers",
        "`keep valid tools while excluding invalid ones` is judged by the tools the client calls; the check lists them and calls none",
    ),
    (
        "json-schema-2020-12-preservation",
        "`client-echo-completed` needs a tools/call of its echo tool; the check calls no tool",
    ),
    (
        "sep-2322-client-request-state",
        "multi-round tool calls (MRTR); the check calls no tool",
    ),
];

fn peers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("peers")
}

/// `PATH` with Node 22 (from `tests/peers/newest`) first.
fn node22_path() -> String {
    tether_tests::Release::Newest.path()
}

/// One scenario's checks: id to the worst status the suite gave it.
fn checks(dir: &Path) -> BTreeMap<String, String> {
    let rank = |s: &str| match s {
        "FAILURE" => 4,
        "WARNING" => 3,
        "SUCCESS" => 2,
        "SKIPPED" => 1,
        _ => 0,
    };
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    let Some(file) = std::fs::read_dir(dir).ok().and_then(|entries| {
        entries
            .filter_map(Result::ok)
            .map(|e| e.path().join("checks.json"))
            .find(|p| p.is_file())
    }) else {
        return out;
    };
    let text = std::fs::read_to_string(file).expect("checks.json");
    let list: Vec<serde_json::Value> = serde_json::from_str(&text).expect("checks.json parses");
    for check in list {
        let (Some(id), Some(status)) = (check["id"].as_str(), check["status"].as_str()) else {
            continue;
        };
        // Traffic records (INFO) are not checks.
        if status == "INFO" {
            continue;
        }
        let entry = out.entry(id.to_owned()).or_default();
        if rank(status) > rank(entry) {
            *entry = status.to_owned();
        }
    }
    out
}

/// Runs the suite's client scenario against `tether endpoint-test --url`,
/// bounded, in its own process group; the suite's servers bind 127.0.0.1
/// only (`conformance/localhost-only-sync.cjs`). Returns its exit success and checks.
fn run_client_scenario(
    suite: &Path,
    scenario: &str,
    baseline: &Path,
) -> (bool, String, BTreeMap<String, String>) {
    let out = tempfile::tempdir().expect("dir");
    let command = format!(
        "{} endpoint-test --timeout 20 --url",
        workspace_bin("tether").display()
    );
    let mut child = Command::new(suite)
        .args([
            "client",
            "--command",
            &command,
            "--scenario",
            scenario,
            "--timeout",
            "60000",
        ])
        .arg("--expected-failures")
        .arg(baseline)
        .arg("-o")
        .arg(out.path())
        .env("PATH", node22_path())
        .env(
            "NODE_OPTIONS",
            format!(
                "--require={}",
                peers()
                    .join("conformance/localhost-only-sync.cjs")
                    .display()
            ),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("the conformance suite starts");
    // Read its output on threads, so a full pipe never stalls it.
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let read_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut s);
        s
    });
    let read_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if started.elapsed() > Duration::from_secs(180) {
            tether_tests::kill_group(&mut child);
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let said = format!(
        "{}{}",
        read_out.join().unwrap_or_default(),
        read_err.join().unwrap_or_default()
    );
    let ok = status.is_some_and(|s| s.success());
    (ok, said, checks(out.path()))
}

fn table(results: &[(&str, BTreeMap<String, String>)]) -> String {
    let mut doc = String::from(
        "# MCP conformance\n\n\
         Generated by `tests/tests/conformance.rs` from the suite's own `checks.json`\n\
         (`TETHER_UPDATE_CONFORMANCE=1 cargo test -p tether-tests --test conformance`\n\
         rewrites it); do not edit by hand.\n\n\
         Suite: `@modelcontextprotocol/conformance` 0.2.0-alpha.12 (pinned in\n\
         `tests/peers/conformance`), on Node 22.\n\n\
         ## Client: `tether endpoint-test --url`\n\n\
         | scenario | checks | result | why, when expected to fail |\n\
         |---|---|---|---|\n",
    );
    for (scenario, checks) in results {
        let count = |status: &str| checks.values().filter(|s| *s == status).count();
        let why = EXPECTED_CLIENT_FAILURES
            .iter()
            .find(|(s, _)| s == scenario)
            .map(|(_, why)| *why);
        let failing: Vec<&str> = checks
            .iter()
            .filter(|(_, s)| *s == "FAILURE" || *s == "WARNING")
            .map(|(id, _)| id.as_str())
            .collect();
        let result = match (failing.is_empty(), why.is_some()) {
            (true, _) => "passes".to_owned(),
            (false, true) => format!("expected failure ({})", failing.join(", ")),
            (false, false) => format!("FAILS ({})", failing.join(", ")),
        };
        doc.push_str(&format!(
            "| `{scenario}` | {} passed, {} failed, {} warnings, {} skipped | {result} | {} |\n",
            count("SUCCESS"),
            count("FAILURE"),
            count("WARNING"),
            count("SKIPPED"),
            why.unwrap_or("")
        ));
    }
    doc.push_str(
        "\nNot run: the `auth/*` scenarios (an OAuth flow in a browser, which an\n\
         endpoint check never starts).\n",
    );
    doc
}

#[test]
fn the_official_suite_passes_the_endpoint_check_but_for_what_it_never_does() {
    let Some(suite) = tether_tests::peer("conformance/node_modules/.bin/conformance") else {
        return;
    };
    if tether_tests::Release::Newest
        .peer("node_modules/.bin/node")
        .is_none()
    {
        return;
    }
    let dir = tempfile::tempdir().expect("dir");
    let baseline = dir.path().join("expected-failures.yml");
    let mut yaml = String::from("client:\n");
    for (scenario, why) in EXPECTED_CLIENT_FAILURES {
        yaml.push_str(&format!("  # {why}\n  - {scenario}\n"));
    }
    std::fs::write(&baseline, yaml).expect("baseline");
    let mut failures = Vec::new();
    let mut results = Vec::new();
    for scenario in CLIENT_SCENARIOS {
        let (ok, said, checks) = run_client_scenario(&suite, scenario, &baseline);
        if !ok || checks.is_empty() {
            failures.push(format!("{scenario}:\n{said}"));
        }
        results.push((*scenario, checks));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
    let doc = table(&results);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/CONFORMANCE.md");
    if std::env::var_os("TETHER_UPDATE_CONFORMANCE").is_some() {
        std::fs::write(&path, &doc).expect("write docs/CONFORMANCE.md");
    } else {
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(
            on_disk, doc,
            "docs/CONFORMANCE.md is stale: rerun with TETHER_UPDATE_CONFORMANCE=1"
        );
    }
}
