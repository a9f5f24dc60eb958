//! What Copilot CLI printed with `-p … --output-format json`, saved to a
//! file cut short (a CI job killed, a timeout) or long, shown with
//! `tether sessions show PATH --json`.
//!
//! Copilot names a run's session only in its last line, `result` (1.0.102
//! `cli-main.js` `qun`); no event before it carries the session's id (the
//! real run's events, `tests/fixtures/records-by-path/copilot-1.0.102-
//! allowed.output.jsonl`: `id`, `parentId`, `interactionId`, `turnId` and
//! `messageId` name events, turns and messages).
//!
//! - GIVEN a real run's output (committed, and a fresh run of the pinned
//!   CLI offline against the fake model) cut after each of its lines and
//!   inside some WHEN shown by path THEN each part reads as Copilot's: with
//!   its `result`, as the session it names (`output_json`); without it, as
//!   one session named after the file and its first event's id,
//!   `copilot:file.NAME-ID8`
//!   (`output_json_cut`); `count/stamp` is used once exactly when the part
//!   holds its call's start, and a row is `failed` only where the part
//!   holds Copilot's report that it failed (the real run's `broken`, whose
//!   command does not exist: its status's `error` is words, 1.0.102; an
//!   outcome a cut left unknown is never a failure); every
//!   record is known, and a last line cut inside is said not read, "a line
//!   cut short" (never a kind the reader does not know).
//! - GIVEN an output whose first records are all ones `events.jsonl` holds
//!   too, its `result` after 200 records (a file read whole, and one past
//!   the bytes read from its start) WHEN shown THEN it is a run's output,
//!   the session `result` names (its last records tell it); cut before the
//!   `result`, the file's session; and a long `events.jsonl` is still one,
//!   the session `session.start` names.
//! - GIVEN two runs cut and saved under one name in two folders WHEN
//!   imported into one store THEN two sessions.
//! - GIVEN a run with 2,000 more calls before its `result` (and cut
//!   before it) WHEN shown THEN each call is counted, none refused.
//! - GIVEN a cut output with a secret planted in every value the reader
//!   does not take WHEN shown (text, JSON, `--tools`) and imported THEN the
//!   secret is in no output and not in the store.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;
use tether_tests::by_path::{self, find_row as row};
use tether_tests::refusal_run::{RefusalHome as Run, STAMP_FAIL_ERR};

/// A word planted where a secret could be: it must reach nothing.
const PLANTED: &str = "planted-cut-secret-4409";

fn fixture(name: &str) -> PathBuf {
    by_path::fixtures().join("records-by-path").join(name)
}

/// The real allowed run's output.
fn allowed() -> PathBuf {
    fixture("copilot-1.0.102-allowed.output.jsonl")
}

/// The lines of `path`.
fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The `result` line's session in `lines`, if one is there.
fn result_session(lines: &[String]) -> Option<String> {
    lines
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["type"] == "result")
        .and_then(|e| e["sessionId"].as_str().map(str::to_owned))
}

/// Whether `text` holds the start of a call of `count`'s `stamp`, whole.
fn holds_the_call(text: &str) -> bool {
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .any(|e| e["type"] == "tool.execution_start" && e["data"]["mcpToolName"] == "stamp")
}

/// The servers a whole line of `text` says failed, as Copilot reported
/// them (`session.mcp_server_status_changed`, `session.mcp_servers_loaded`).
fn failed_in(text: &str) -> BTreeSet<String> {
    let mut failed = BTreeSet::new();
    for event in text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
    {
        let data = &event["data"];
        let servers = match event["type"].as_str() {
            Some("session.mcp_server_status_changed") => vec![data.clone()],
            Some("session.mcp_servers_loaded") => {
                data["servers"].as_array().cloned().unwrap_or_default()
            }
            _ => Vec::new(),
        };
        for server in servers {
            let name = server["serverName"].as_str().or(server["name"].as_str());
            if let Some(name) = name {
                if server["status"] == "failed" {
                    failed.insert(name.to_owned());
                } else {
                    failed.remove(name);
                }
            }
        }
    }
    failed
}

/// The session a cut output named `name` holding `text` is: `file.`, its
/// name, `-` and the first 8 letters and digits of its first event's id.
fn cut_session(name: &str, text: &str) -> String {
    let first = text
        .lines()
        .find_map(|l| serde_json::from_str::<Value>(l).ok())
        .expect("a whole first event");
    let id: String = first["id"]
        .as_str()
        .expect("an event id")
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(8)
        .collect();
    format!("copilot:file.{name}-{id}")
}

/// The one file report's role in a shown document.
fn role(doc: &Value) -> &str {
    let files = doc["files"].as_array().expect("files");
    assert_eq!(files.len(), 1, "{doc}");
    files[0]["role"].as_str().expect("a role")
}

/// Writes `text` as `dir/name`, shows it in `home`, and checks what the
/// module docs say of a part: its session, its kind, the call, no failure.
fn part_reads(home: &Path, dir: &Path, name: &str, text: &str) -> Value {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write the part");
    let doc = by_path::show_json(home, &path);
    let label = format!("{name} ({} bytes)", text.len());
    assert_eq!(doc["session"]["agent_kind"], "copilot", "{label}: {doc}");
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let (session, kind) = match result_session(&lines) {
        Some(session) => (format!("copilot:{session}"), "output_json"),
        None => (cut_session(name, text), "output_json_cut"),
    };
    assert_eq!(doc["session"]["session_id"], session, "{label}: {doc}");
    assert_eq!(role(&doc), kind, "{label}: {doc}");
    let calls = row(&doc, "count/stamp").map_or(0, |r| r["calls"].as_u64().unwrap_or(0));
    assert_eq!(calls, u64::from(holds_the_call(text)), "{label}: {doc}");
    let failed: BTreeSet<String> = doc["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r["status"] == "failed")
        .filter_map(|r| r["name"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(failed, failed_in(text), "{label}: {doc}");
    assert!(!doc.to_string().contains(PLANTED), "{label}: {doc}");
    // Every record is known; a last line cut inside is said cut short, by
    // its line number, never as a kind not read.
    let report = &doc["files"][0];
    assert_eq!(report["unknown"], 0, "{label}: {report}");
    let cut_inside = serde_json::from_str::<Value>(lines.last().expect("a line")).is_err();
    let cut_at = report["unparsed_lines"].as_array().and_then(|u| {
        u.iter()
            .find(|l| l["why"] == "cut_short")
            .and_then(|l| l["line"].as_u64())
    });
    let last = u64::try_from(lines.len()).expect("lines");
    assert_eq!(cut_at, cut_inside.then_some(last), "{label}: {report}");
    assert!(
        !report["not_read_kinds"].as_array().is_some_and(|k| k
            .iter()
            .any(|k| k.as_str().is_some_and(|k| k.contains("cut")))),
        "{label}: {report}"
    );
    doc
}

/// Every part of `output` (its text): cut after each line, and inside the
/// first, a middle and the last line; each part checked by [`part_reads`].
fn every_part_reads(home: &Path, output: &str) {
    let dir = home.join("parts");
    std::fs::create_dir_all(&dir).expect("parts");
    let ends: Vec<usize> = output.match_indices('\n').map(|(i, _)| i + 1).collect();
    assert!(ends.len() > 3, "a run prints lines: {output}");
    for (n, end) in ends.iter().enumerate() {
        part_reads(home, &dir, &format!("cut-{}.jsonl", n + 1), &output[..*end]);
    }
    let middle = ends[ends.len() / 2];
    let last = ends[ends.len() - 2];
    for inside in [ends[0] / 2 + ends[0], middle + 20, last + 30] {
        let inside = (inside..output.len())
            .find(|i| output.is_char_boundary(*i))
            .unwrap_or(output.len());
        part_reads(
            home,
            &dir,
            &format!("inside-{inside}.jsonl"),
            &output[..inside],
        );
    }
}

/// GIVEN the committed real runs (the allowed run of
/// `copilot_output.rs`, and one with `broken`) WHEN cut at each line and
/// inside some THEN each part reads as the module docs say (no CLI
/// needed).
#[test]
fn the_committed_runs_cut_anywhere_read_what_they_hold() {
    for run in [allowed(), broken()] {
        let home = tempfile::tempdir().expect("home");
        let output = std::fs::read_to_string(&run).expect("the committed run");
        every_part_reads(home.path(), &output);
    }
    // Copilot's words for `broken` say why: its command is not there.
    let home = tempfile::tempdir().expect("home");
    let doc = by_path::show_json(home.path(), &broken());
    let broken = row(&doc, "broken").expect("broken's row");
    assert_eq!(broken["reason_code"], "command_not_found", "{broken}");
}

/// A fresh `-p --output-format json` run of the pinned Copilot CLI
/// (offline, the fake model calling `count/stamp`, allowed; `broken`'s
/// command does not exist): what it printed. `None` with a loud SKIP where
/// the CLI is not installed.
async fn real_output() -> Option<String> {
    let copilot = by_path::pinned_copilot()?;
    let run = Run::pinned(STAMP_FAIL_ERR, PLANTED)?;
    let (model, _sent) = tether_tests::fake_model::start_model("count/stamp").await;
    let (_dir, work) =
        by_path::copilot_home(run.home(), by_path::copilot_count_and_broken(&run, PLANTED));
    let args = ["--output-format", "json", "--allow-all-tools"];
    let cmd = by_path::copilot_offline(&copilot, run.home(), &work, &model.base(), &args);
    let out = run.run_cli("copilot-cut", cmd, 120);
    assert_eq!(run.received().len(), 1, "the model's call reached count");
    let output = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        output.trim_end().ends_with('}') && output.contains("\"type\":\"result\""),
        "a whole run ends with its result: {output}"
    );
    assert!(
        !output.contains(PLANTED),
        "no command in the output: {output}"
    );
    Some(output)
}

/// The committed run with `broken` (`real_output`'s, recorded by
/// `record_the_fixture`).
fn broken() -> PathBuf {
    fixture("copilot-1.0.102-broken.output.jsonl")
}

/// GIVEN a fresh run (`real_output`) WHEN its output is cut at each line
/// and inside some THEN each part reads as the module docs say.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_run_cut_anywhere_reads_what_it_holds() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let Some(output) = real_output().await else {
        return;
    };
    let home = tempfile::tempdir().expect("home");
    every_part_reads(home.path(), &output);
}

/// Runs the CLI again and rewrites the committed run with `broken`:
/// `cargo test -p tether-tests --test by_path_copilot_cut -- --ignored
/// record_the_fixture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "runs Copilot CLI to rewrite the fixture"]
async fn record_the_fixture() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let output = real_output().await.expect("Copilot CLI is installed");
    std::fs::write(broken(), output).expect("write the fixture");
}

/// `n` pairs of `assistant.turn_start` and `assistant.turn_end` (1.0.102's
/// shape, from the committed run): records `events.jsonl` holds too.
fn turns(n: usize) -> Vec<String> {
    (0..n)
        .flat_map(|i| {
            [
                serde_json::json!({"type": "assistant.turn_start",
                    "data": {"turnId": i.to_string(), "interactionId": "i-1"},
                    "id": format!("s-{i}"), "timestamp": "2026-12-03T19:59:25.385Z",
                    "parentId": "p-1"}),
                serde_json::json!({"type": "assistant.turn_end",
                    "data": {"turnId": i.to_string()},
                    "id": format!("e-{i}"), "timestamp": "2026-12-03T19:59:25.386Z",
                    "parentId": "p-1"}),
            ]
        })
        .map(|v| v.to_string())
        .collect()
}

/// `padding` records of turns, then the committed run's records (with its
/// transient ones, or none `events.jsonl` would not hold), then its
/// `result` where `result`: the run's end far past the first 200 records.
fn long_output(padding: usize, transient: bool, result: bool) -> String {
    let lines = lines_of(&allowed());
    let (last, events): (Vec<String>, Vec<String>) = lines
        .into_iter()
        .partition(|l| l.contains("\"type\":\"result\""));
    let kept: Vec<String> = events
        .into_iter()
        .filter(|l| transient || !l.contains("\"ephemeral\":true"))
        .collect();
    assert!(holds_the_call(&kept.join("\n")), "the call is kept");
    let last = if result { last } else { Vec::new() };
    let all: Vec<String> = turns(padding / 2)
        .into_iter()
        .chain(kept)
        .chain(last)
        .collect();
    all.join("\n") + "\n"
}

/// GIVEN long outputs whose first 200 records `events.jsonl` holds too,
/// their `result` last (a file read whole, and one past the bytes read
/// from its start), and each cut before its `result` WHEN shown THEN each
/// reads as the module docs say; and the real `events.jsonl` made as long
/// (turns after its `session.start`) is still one.
///
/// An output cut before its `result` that holds no transient record
/// either is no different from a copy of `events.jsonl` missing its
/// `session.start`; every real run prints transient ones (its servers'
/// statuses, the model calls' bookkeeping), and the cut parts keep them.
#[test]
fn a_long_output_is_told_by_its_last_records() {
    let home = tempfile::tempdir().expect("home");
    let dir = home.path().join("long");
    std::fs::create_dir_all(&dir).expect("long");
    for padding in [300, 4000] {
        let whole = long_output(padding, false, true);
        assert!(
            (padding > 1000) == (whole.len() > 256 << 10),
            "{padding}: {} bytes",
            whole.len()
        );
        part_reads(home.path(), &dir, &format!("long-{padding}.jsonl"), &whole);
        let cut = long_output(padding, true, false);
        part_reads(
            home.path(),
            &dir,
            &format!("long-{padding}-cut.jsonl"),
            &cut,
        );
    }
    let events = lines_of(&fixture("copilot-1.0.102-broken.events.jsonl"));
    let started = serde_json::from_str::<Value>(&events[0]).expect("session.start");
    assert_eq!(started["type"], "session.start");
    let long: Vec<String> = events[..1]
        .iter()
        .cloned()
        .chain(turns(4000))
        .chain(events[1..].iter().cloned())
        .collect();
    let path = dir.join("events-long.jsonl");
    std::fs::write(&path, long.join("\n") + "\n").expect("write");
    let doc = by_path::show_json(home.path(), &path);
    assert_eq!(role(&doc), "events", "{doc}");
    assert_eq!(
        doc["session"]["session_id"],
        format!(
            "copilot:{}",
            started["data"]["sessionId"].as_str().expect("its id")
        ),
        "{doc}"
    );
    assert_eq!(row(&doc, "count/stamp").expect("the call")["calls"], 1);
}

/// The committed run with `n` more calls of `count/stamp` (its call's
/// start and completion again, each pair its own `toolCallId`) before its
/// `result`, and the text cut before the `result`.
fn many_calls(n: usize) -> (String, String) {
    let lines = lines_of(&allowed());
    let pick = |kind: &str| -> Value {
        let line = lines
            .iter()
            .find(|l| l.contains(&format!("\"type\":\"{kind}\"")))
            .expect("the call's record");
        serde_json::from_str(line).expect("JSON")
    };
    let (start, complete) = (
        pick("tool.execution_start"),
        pick("tool.execution_complete"),
    );
    let (last, run) = lines.split_last().expect("lines");
    let mut out: Vec<String> = run.to_vec();
    for i in 0..n {
        for (record, prefix) in [(&start, "s"), (&complete, "c")] {
            let mut record = record.clone();
            record["data"]["toolCallId"] = Value::from(format!("call-{i}"));
            record["id"] = Value::from(format!("{prefix}-{i}"));
            out.push(record.to_string());
        }
    }
    let cut = out.join("\n") + "\n";
    out.push(last.clone());
    (out.join("\n") + "\n", cut)
}

/// GIVEN a run with 2,000 more calls (4,000 records holding evidence)
/// before its `result`, and the same cut before it WHEN shown THEN every
/// call is counted, none refused or left out: what came before the
/// `result` is held for it however many records it is.
#[test]
fn every_call_before_the_result_counts() {
    let home = tempfile::tempdir().expect("home");
    let dir = home.path().join("many");
    std::fs::create_dir_all(&dir).expect("many");
    let (whole, cut) = many_calls(2000);
    for (name, text, session) in [
        (
            "many.jsonl",
            &whole,
            format!(
                "copilot:{}",
                result_session(&lines_of(&allowed())).expect("a result")
            ),
        ),
        ("many-cut.jsonl", &cut, cut_session("many-cut.jsonl", &cut)),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write");
        let doc = by_path::show_json(home.path(), &path);
        assert_eq!(doc["session"]["session_id"], session, "{name}");
        let stamp = row(&doc, "count/stamp").expect("the calls");
        assert_eq!(stamp["calls"], 2001, "{name}: {stamp}");
        assert_eq!(doc["files"][0]["refused"], 0, "{name}: {}", doc["files"][0]);
    }
}

/// GIVEN two runs (the committed ones) each cut before its `result` and
/// saved under one name in two folders (a CI job's artifact, two runs)
/// WHEN imported into one store THEN they are two sessions, each its own.
#[test]
fn two_runs_cut_under_one_name_are_two_sessions() {
    let home = tempfile::tempdir().expect("home");
    let mut paths = Vec::new();
    for (folder, run) in [("job-1", allowed()), ("job-2", broken())] {
        let dir = home.path().join(folder);
        std::fs::create_dir_all(&dir).expect("folder");
        let mut lines = lines_of(&run);
        lines.pop();
        let path = dir.join("copilot.jsonl");
        std::fs::write(&path, lines.join("\n") + "\n").expect("write");
        paths.push(path.display().to_string());
    }
    let db = home.path().join("store.db").display().to_string();
    let (code, stdout, stderr) =
        by_path::sessions(home.path(), &["import", &paths[0], &paths[1], "--db", &db]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        format!("{stdout}{stderr}").contains("imported: 2 new"),
        "{stdout}{stderr}"
    );
}

/// GIVEN each committed run (the allowed one, the one with `broken`, whose
/// error words are planted too) cut before its `result`, a secret planted
/// in every value but the names and words the reader takes, in a folder and
/// under a name of its own WHEN shown (text, JSON, `--tools`) and imported
/// THEN the secret is in no output and not in the store, and the calls
/// read as before.
#[test]
fn a_planted_secret_in_a_cut_output_reaches_no_output_and_no_store() {
    const KEPT: &[&str] = &[
        "type",
        "timestamp",
        "sessionId",
        "toolCallId",
        "mcpServerName",
        "mcpConfigServerName",
        "mcpToolName",
        "serverName",
        "name",
        "status",
        "infoType",
        "warningType",
        "id",
    ];
    for (run, failed) in [(allowed(), false), (broken(), true)] {
        let home = tempfile::tempdir().expect("home");
        let dir = home.path().join("saved");
        std::fs::create_dir_all(&dir).expect("saved");
        let mut lines = by_path::planted_lines(&run, |v| {
            by_path::plant_strings(v, None, &mut |key, s| {
                if !key.is_some_and(|k| KEPT.contains(&k)) {
                    *s = PLANTED.to_owned();
                }
            });
        });
        lines.pop();
        assert!(lines.iter().any(|l| l.contains(PLANTED)), "planted");
        let path = dir.join("run.jsonl");
        std::fs::write(&path, lines.join("\n")).expect("write");
        let doc = by_path::show_json(home.path(), &path);
        assert_eq!(
            doc["session"]["session_id"],
            cut_session("run.jsonl", &lines[0])
        );
        assert_eq!(row(&doc, "count/stamp").expect("the call")["calls"], 1);
        // `broken`'s error words are the secret now: still failed.
        let broken = row(&doc, "broken").map(|r| r["status"].clone());
        assert_eq!(broken, failed.then(|| Value::from("failed")), "{doc}");
        let db = home.path().join("store.db");
        by_path::assert_shown_and_imported_clean("cut", home.path(), &path, &db, PLANTED);
        by_path::assert_store_clean("cut", &db, PLANTED);
    }
}
