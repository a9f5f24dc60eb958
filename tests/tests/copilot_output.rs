//! What Copilot CLI prints with `-p … --output-format json`, saved to a
//! file and shown with `tether sessions show PATH --json` (issue 56 §4).
//!
//! Copilot 1.0.102 (`cli-main.js` of the pinned SEA, `zun`): in a `-p` run
//! with `--output-format json` every session event but a fixed list
//! (`Kro`: `session.idle`, `permission.*`, `hook.*`, `skill.invoked`, …)
//! is printed as `JSON.stringify(event)`, one per line: the same envelope
//! `events.jsonl` holds (`type`, `data`, `id`, `timestamp`, `parentId`),
//! with the transient (`ephemeral: true`) events `events.jsonl` never
//! holds; then one `{"type":"result","sessionId":…,"exitCode":…}` (`qun`).
//!
//! - GIVEN a real `-p --output-format json` run of the pinned Copilot
//!   (offline, against the fake model) with a counting server whose
//!   `stamp` the model calls (allowed), and `fail` excluded
//!   (`--excluded-tools`) WHEN its output is shown by path THEN it reads
//!   as Copilot's, as the session its `result` names, and `count/stamp`
//!   was used once. The same with `--deny-tool 'count(stamp)'`: refused,
//!   `permission_denied`, and the server received no call.
//! - GIVEN the neutralised shapes of a real 1.0.63 capture
//!   (`tests/fixtures/records-real/copilot-1.0.63-policy.output.jsonl`: the
//!   organisation's policy disables third-party MCP servers, and tools of
//!   the built-in `github-mcp-server` are disabled) WHEN shown by path
//!   THEN it reads as Copilot's: the configured third-party server is
//!   `denied_by_policy`, the disabled `github-mcp-server` tools are
//!   withheld, and no other server is made up from the prose.
//! - GIVEN a planted secret in every value WHEN shown (text and JSON) and
//!   imported THEN it reaches neither output nor the store.
//! - The committed runs (`tests/fixtures/records-by-path/copilot-1.0.102-*
//!   .output.jsonl`) read the same with no CLI installed;
//!   `record_the_fixtures` (ignored) runs the CLI again and rewrites them:
//!   `cargo test -p tether-tests --test copilot_output -- --ignored
//!   record_the_fixtures`.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tether_tests::by_path::{self, find_row as row};
use tether_tests::refusal_run::{RefusalHome as Run, STAMP_FAIL_ERR};

/// A word planted where a secret could be: it must reach nothing.
const PLANTED: &str = "planted-output-secret-6613";

fn by_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/records-by-path")
}

fn real() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/records-real")
}

/// Runs the pinned Copilot CLI offline (`-p … --output-format json`) with
/// `count`, the model calling `count/stamp`, with `args`; its stdout.
/// `None` with a loud SKIP where it is not installed.
async fn copilot_json(args: &[&str]) -> Option<(Run, String)> {
    let copilot = by_path::pinned_copilot()?;
    let run = Run::pinned(STAMP_FAIL_ERR, PLANTED)?;
    let (model, _sent) = tether_tests::fake_model::start_model("count/stamp").await;
    let (var, log) = run.log_env();
    let (_dir, work) = by_path::copilot_home(
        run.home(),
        serde_json::json!({
            "count": {"type": "local", "command": run.server(), "args": run.server_args(),
                      "env": {var: log}, "tools": ["*"]}
        }),
    );
    let args: Vec<&str> = ["--output-format", "json"]
        .iter()
        .chain(args)
        .copied()
        .collect();
    let cmd = by_path::copilot_offline(&copilot, run.home(), &work, &model.base(), &args);
    let out = run.run_cli("copilot-output", cmd, 120);
    Some((run, String::from_utf8_lossy(&out.stdout).into_owned()))
}

/// The allowed run's arguments: every tool allowed, `count`'s `fail`
/// excluded.
const ALLOWED: &[&str] = &["--allow-all-tools", "--excluded-tools", "count-fail"];
/// The refused run's: a `--deny-tool` rule for the tool the model calls.
const DENIED: &[&str] = &["--allow-all-tools", "--deny-tool", "count(stamp)"];

/// A home whose Copilot configuration (`~/.copilot/mcp-config.json`)
/// names `count` and `notes`, a planted secret in each one's command, args
/// and env: the servers a saved output's notices are read against.
fn configured_home(run: &Run) {
    let dir = run.home().join(".copilot");
    std::fs::create_dir_all(&dir).expect("dir");
    let entry = || {
        serde_json::json!({"type": "local", "command": format!("/opt/{PLANTED}/server"),
            "args": [format!("--token={PLANTED}")], "env": {"TOKEN": PLANTED}, "tools": ["*"]})
    };
    let servers = serde_json::json!({"mcpServers": {"count": entry(), "notes": entry()}});
    std::fs::write(dir.join("mcp-config.json"), servers.to_string()).expect("mcp config");
}

/// The `result` line's session: what the run printed last.
fn result_session(output: &Path) -> String {
    let text = std::fs::read_to_string(output).expect("output");
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["type"] == "result")
        .and_then(|e| e["sessionId"].as_str().map(str::to_owned))
        .expect("the result names its session")
}

/// The names of a shown document's rows.
fn row_names(doc: &Value) -> Vec<String> {
    doc["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["name"].as_str().map(str::to_owned))
        .collect()
}

/// What the allowed run's output shows: Copilot's, the result's session,
/// `count/stamp` used once, `count/fail` kept from the model (excluded).
fn allowed_reads(run: &Run, output: &Path, session: &str) {
    let doc = run.show(output);
    assert_eq!(doc["session"]["agent_kind"], "copilot", "{doc}");
    assert_eq!(
        doc["session"]["session_id"],
        format!("copilot:{session}"),
        "the session the result names: {doc}"
    );
    let stamp = row(&doc, "count/stamp").expect("count/stamp's row");
    assert_eq!(stamp["calls"], 1, "{stamp}");
    assert_eq!(stamp["status"], "active", "{stamp}");
    let fail = row(&doc, "count/fail").expect("count/fail's row");
    assert_eq!(fail["calls"], 0, "{fail}");
    assert_eq!(fail["reason_code"], "excluded", "withheld: {fail}");
}

/// What the refused run's output shows: the call refused by the rule,
/// `permission_denied`, never a use.
fn denied_reads(run: &Run, output: &Path, session: &str) {
    let doc = run.show(output);
    assert_eq!(doc["session"]["session_id"], format!("copilot:{session}"));
    let stamp = row(&doc, "count/stamp").expect("count/stamp's row");
    assert_eq!(stamp["calls"], 0, "refused, not used: {stamp}");
    assert!(
        stamp.to_string().contains("permission_denied"),
        "refused by the rule: {stamp}"
    );
}

/// GIVEN real `-p --output-format json` runs of the pinned Copilot (an
/// allowed call with a tool excluded; a call a `--deny-tool` rule refused)
/// WHEN their output is shown by path THEN each reads as the module docs
/// say, and the server received the allowed call only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_runs_output_reads_by_path() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    for (args, reads) in [
        (ALLOWED, allowed_reads as fn(&Run, &Path, &str)),
        (DENIED, denied_reads),
    ] {
        let Some((run, out)) = copilot_json(args).await else {
            return;
        };
        let received = run.received().len();
        assert_eq!(received, usize::from(args == ALLOWED), "{args:?}");
        let file = run.home().join("saved").join("copilot.output.jsonl");
        std::fs::create_dir_all(file.parent().expect("dir")).expect("saved");
        std::fs::write(&file, &out).expect("save the output");
        reads(&run, &file, &result_session(&file));
    }
}

/// GIVEN the committed runs WHEN shown by path THEN they read the same
/// (no CLI needed).
#[test]
fn the_committed_runs_read_by_path() {
    let run = Run::pinned(STAMP_FAIL_ERR, PLANTED).expect("tether-pinned-mcp is built");
    configured_home(&run);
    let allowed = by_path().join("copilot-1.0.102-allowed.output.jsonl");
    allowed_reads(&run, &allowed, &result_session(&allowed));
    let denied = by_path().join("copilot-1.0.102-denied.output.jsonl");
    denied_reads(&run, &denied, &result_session(&denied));
}

/// GIVEN a real 1.0.63 capture's shapes (the organisation's policy off for
/// third-party servers; the built-in GitHub server's tools disabled) and
/// `count` and `notes` configured WHEN shown by path THEN it reads as
/// Copilot's: each configured server `denied_by_policy`, the GitHub
/// server's five disabled tools withheld (`excluded`), its status as
/// Copilot reported it, and no other server (none is made up from prose;
/// built-in tools such as `bash` name none).
#[test]
fn copilot_1_0_63_policy_and_disabled_tools_read_by_path() {
    let run = Run::pinned(STAMP_FAIL_ERR, PLANTED).expect("tether-pinned-mcp is built");
    configured_home(&run);
    let file = real().join("copilot-1.0.63-policy.output.jsonl");
    let doc = run.show(&file);
    assert_eq!(doc["session"]["agent_kind"], "copilot", "{doc}");
    assert_eq!(
        doc["session"]["session_id"],
        format!("copilot:{}", result_session(&file))
    );
    for server in ["count", "notes"] {
        let r = row(&doc, server).expect("a configured server's row");
        assert_eq!(r["status"], "failed", "{r}");
        assert!(r.to_string().contains("denied_by_policy"), "{r}");
    }
    let github = row(&doc, "github-mcp-server").expect("the built-in server's row");
    assert_ne!(github["status"], "failed", "built in: {github}");
    let disabled = [
        "get_copilot_space",
        "get_file_contents",
        "list_copilot_spaces",
        "search_code",
        "search_users",
    ];
    for tool in disabled {
        let r = row(&doc, &format!("github-mcp-server/{tool}")).expect("a disabled tool's row");
        assert_eq!(r["reason_code"], "excluded", "{r}");
        assert_eq!(r["calls"], 0, "{r}");
    }
    let mut names = row_names(&doc);
    names.sort();
    let mut want: Vec<String> = ["count", "github-mcp-server", "notes"]
        .into_iter()
        .map(str::to_owned)
        .chain(disabled.iter().map(|t| format!("github-mcp-server/{t}")))
        .collect();
    want.sort();
    assert_eq!(names, want, "{doc}");
}

/// Keys whose values the readers take, or that say what a record is:
/// kept; every other string is planted ([`plant`]).
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
    "warningType",
    "infoType",
    "code",
    "kind",
];

/// Every string of `value` planted but under a [`KEPT`] key: a `message`
/// keeps Copilot's words and gets the secret after them (as one more name
/// in a "Disabled tools" list), any other value becomes the secret.
fn plant(value: &mut Value, key: Option<&str>) {
    by_path::plant_strings(value, key, &mut |key, s| {
        if key == Some("message") {
            let sep = if s.starts_with("Disabled tools: ") {
                ", "
            } else {
                " "
            };
            *s = format!("{s}{sep}{PLANTED}");
        } else if !key.is_some_and(|k| KEPT.contains(&k)) {
            *s = PLANTED.to_owned();
        }
    });
}

/// GIVEN each committed output with the secret planted in every value the
/// readers do not take (and after every message's words), in a home whose
/// configuration holds it too WHEN shown (text and JSON) and imported into
/// a store THEN the rows read as before and the secret is in no output and
/// nowhere in the store.
#[test]
fn a_planted_secret_reaches_no_output_and_no_store() {
    let run = Run::pinned(STAMP_FAIL_ERR, PLANTED).expect("tether-pinned-mcp is built");
    configured_home(&run);
    let planted_dir = run.home().join("planted");
    std::fs::create_dir_all(&planted_dir).expect("planted");
    let store = run.home().join("store");
    std::fs::create_dir_all(&store).expect("store");
    let db = store.join("t.db").display().to_string();
    for source in [
        by_path().join("copilot-1.0.102-allowed.output.jsonl"),
        by_path().join("copilot-1.0.102-denied.output.jsonl"),
        real().join("copilot-1.0.63-policy.output.jsonl"),
    ] {
        let planted = by_path::planted_lines(&source, |v| plant(v, None));
        assert!(planted.iter().any(|l| l.contains(PLANTED)), "planted");
        let file = planted_dir.join(source.file_name().expect("name"));
        std::fs::write(&file, planted.join("\n") + "\n").expect("write");
        let doc = run.show(&file);
        assert_eq!(doc["session"]["agent_kind"], "copilot", "{doc}");
        assert!(!row_names(&doc).is_empty(), "{doc}");
        let out = tether_tests::output_within(
            {
                let mut cmd = tether_tests::tether_at_home(run.home());
                cmd.args([
                    "sessions",
                    "import",
                    &file.display().to_string(),
                    "--db",
                    &db,
                ]);
                cmd
            },
            120,
        );
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{said}");
        assert!(!said.contains(PLANTED), "{said}");
    }
    let files: Vec<_> = std::fs::read_dir(&store)
        .expect("store")
        .flatten()
        .collect();
    assert!(!files.is_empty(), "the imports wrote a store");
    for entry in files {
        let bytes = std::fs::read(entry.path()).expect("a store file");
        assert!(
            !bytes
                .windows(PLANTED.len())
                .any(|w| w == PLANTED.as_bytes()),
            "the secret is in {}",
            entry.path().display()
        );
    }
}

/// Runs the CLI again and rewrites the committed output of both runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "runs Copilot CLI to rewrite the fixtures"]
async fn record_the_fixtures() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    for (name, args) in [("allowed", ALLOWED), ("denied", DENIED)] {
        let (_run, out) = copilot_json(args).await.expect("Copilot CLI is installed");
        std::fs::write(
            by_path().join(format!("copilot-1.0.102-{name}.output.jsonl")),
            out,
        )
        .expect("write the output");
    }
}
