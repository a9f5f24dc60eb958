//! Claude Code's hooks and an unstartable server, each compared with the
//! run's own stream-json (issue 56, Tests): the pinned (2.1.197) and
//! newest (2.1.332) CLIs run `claude -p --output-format stream-json
//! --verbose` headless against the fake model with a private HOME whose
//! `~/.claude/settings.json` holds a Stop hook that succeeds (or, in a
//! second run, one that fails: exit 1) and a SessionStart hook that prints
//! to stdout, and whose `--mcp-config` holds the counting server `time` and
//! `broken`, a server whose command does not exist.
//!
//! The ground truth is the stream-json itself: its `system/init` line's
//! `mcp_servers` statuses and its `system/hook_response` lines' outcomes.
//! Tether's readings are `tether sessions show PATH --json` of the saved
//! stream-json and of the run's transcript: the Stop hook shows fired with
//! the outcome the CLI gave it, the SessionStart hook never reads "never
//! fired", and `broken` is failed, with a reason, in both readings: never
//! used, never silently absent. The hooks' output holds a planted secret
//! that must reach no output.
//!
//! Each skips loudly where its CLI (tests/peers, `npm ci`) is not
//! installed; each run is bounded and killed by process group.

use std::path::PathBuf;

use serde_json::{Value, json};
use tether_tests::Release;
use tether_tests::by_path;
use tether_tests::refusal_run::RefusalHome;

/// Planted in every hook's output: it must reach none of Tether's output.
const SECRET: &str = "PLANTED-HOOK-SECRET-7d2a";

/// One run: its home, the saved stream-json and the transcript.
struct Run {
    home: RefusalHome,
    stream: PathBuf,
    transcript: PathBuf,
    /// The stream-json's lines, parsed.
    lines: Vec<Value>,
}

impl Run {
    /// What the stream-json's `system/init` says of `server`'s status.
    fn init_status(&self, server: &str) -> Option<String> {
        self.lines
            .iter()
            .filter(|l| l["type"] == "system" && l["subtype"] == "init")
            .flat_map(|l| l["mcp_servers"].as_array().cloned().unwrap_or_default())
            .find(|s| s["name"] == server)
            .and_then(|s| s["status"].as_str().map(str::to_owned))
    }

    /// The stream-json's `hook_response` lines for `event`: each one's
    /// outcome and exit code.
    fn hook_responses(&self, event: &str) -> Vec<(String, Option<i64>)> {
        self.lines
            .iter()
            .filter(|l| {
                l["type"] == "system" && l["subtype"] == "hook_response" && l["hook_event"] == event
            })
            .map(|l| {
                (
                    l["outcome"].as_str().unwrap_or("").to_owned(),
                    l["exit_code"].as_i64(),
                )
            })
            .collect()
    }
}

/// A run of `release` whose Stop hook exits `stop_exit`.
async fn run(release: Release, stop_exit: i32) -> Option<Run> {
    let claude = release.peer("node_modules/.bin/claude")?;
    let home = RefusalHome::counting(SECRET);
    let stop = home.script("stop.sh", &format!("echo '{SECRET}' >&2\nexit {stop_exit}"));
    let start = home.script("start.sh", &format!("echo 'session starts {SECRET}'"));
    let settings = json!({"hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": stop.display().to_string()}]}],
        "SessionStart": [{"hooks": [{"type": "command", "command": start.display().to_string()}]}],
    }});
    std::fs::create_dir_all(home.home().join(".claude")).expect("dir");
    std::fs::write(
        home.home().join(".claude/settings.json"),
        settings.to_string(),
    )
    .expect("settings");
    let (var, file) = home.log_env();
    let config = home.home().join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {
            "time": {"command": home.server(), "env": {var: file}},
            "broken": {"command": "/nonexistent/tether-no-such-server"},
        }})
        .to_string(),
    )
    .expect("config");
    let (model, _log) = tether_tests::fake_model::start_model("get_current_time").await;
    let mut cmd = std::process::Command::new(&claude);
    cmd.args(by_path::CLAUDE_STREAM_ARGS).args([
        "--mcp-config",
        &config.display().to_string(),
        "--strict-mcp-config",
        "--allowedTools",
        "mcp__time__get_current_time",
    ]);
    by_path::claude_env(
        &mut cmd,
        home.home(),
        home.home(),
        &release.path(),
        &model.base(),
    )
    .stdin(std::process::Stdio::null());
    let label = format!("claude-hooks-{}-stop{stop_exit}", release.label());
    let out = tokio::task::block_in_place(|| home.run_cli(&label, cmd, 180));
    let stream = home.home().join("stream.jsonl");
    std::fs::write(&stream, &out.stdout).expect("stream");
    // Kept again with the stream (`TETHER_KEEP_HOMES`).
    tether_tests::keep_home(&format!("refusals-{label}"), home.home());
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let transcript = by_path::claude_transcript(home.home()).expect("a transcript");
    Some(Run {
        home,
        stream,
        transcript,
        lines,
    })
}

/// The row of `kind` named `name` in a `sessions show` document.
fn row<'a>(doc: &'a Value, kind: &str, name: &str) -> Option<&'a Value> {
    doc["rows"]
        .as_array()?
        .iter()
        .find(|r| r["kind"] == kind && r["name"] == name)
}

/// A hook row's outcomes: (outcome, exit code) per run.
fn outcomes(row: &Value) -> Vec<(String, Option<i64>)> {
    row["outcomes"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|o| {
            let n = o["count"].as_u64().unwrap_or(1);
            let one = (
                o["outcome"].as_str().unwrap_or("").to_owned(),
                o["exit_code"].as_i64(),
            );
            (0..n).map(move |_| one.clone())
        })
        .collect()
}

fn text(row: &Value) -> &str {
    row["stopped"].as_str().unwrap_or("")
}

/// `broken` in a reading: failed with a reason, never used; `label` says
/// which reading.
fn assert_broken_failed(label: &str, doc: &Value) {
    let broken = row(doc, "mcp_server", "broken")
        .unwrap_or_else(|| panic!("{label}: broken is silently absent: {doc:#}"));
    assert_eq!(broken["status"], "failed", "{label}: {broken:#}");
    assert!(
        broken["reason_code"]
            .as_str()
            .is_some_and(|r| !r.is_empty()),
        "{label}: failed with no reason: {broken:#}"
    );
    assert_eq!(broken["calls"], 0, "{label}: {broken:#}");
    assert!(!text(broken).starts_with("used"), "{label}: {broken:#}");
}

/// Every hook row of a reading: never "never fired" (Claude Code does not
/// record every hook's run).
fn assert_no_never_fired(label: &str, doc: &Value) {
    for hook in doc["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["kind"] == "hook")
    {
        assert!(!text(hook).contains("never fired"), "{label}: {hook:#}");
    }
}

async fn compare(release: Release) {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    for stop_exit in [0, 1] {
        let Some(run) = run(release, stop_exit).await else {
            return;
        };
        let label = format!("{} stop exit {stop_exit}", release.label());
        // The stream-json's own account: the ground truth.
        assert_eq!(
            run.init_status("broken").as_deref(),
            Some("failed"),
            "{label}"
        );
        assert_eq!(
            run.init_status("time").as_deref(),
            Some("connected"),
            "{label}"
        );
        let said = run.hook_responses("SessionStart");
        assert_eq!(said, [("success".to_owned(), Some(0))], "{label}");
        // The same, in Tether's words for how a run ended.
        let started: Vec<(String, Option<i64>)> = said
            .into_iter()
            .map(|(o, code)| {
                let o = match o.as_str() {
                    "success" => "succeeded",
                    "error" => "failed",
                    other => other,
                };
                (o.to_owned(), code)
            })
            .collect();
        // A Stop hook prints no hook_response; one that erred prints the
        // `stop-hook-error` notification, one that succeeded nothing.
        assert!(run.hook_responses("Stop").is_empty(), "{label}");
        let erred = run
            .lines
            .iter()
            .filter(|l| l["subtype"] == "notification" && l["key"] == "stop-hook-error")
            .count();
        assert_eq!(erred, usize::from(stop_exit != 0), "{label}");

        // Tether's reading of the stream-json, by path.
        let stream = run.home.show(&run.stream);
        let label_s = format!("{label} (stream-json)");
        assert_broken_failed(&label_s, &stream);
        assert_no_never_fired(&label_s, &stream);
        let start = row(&stream, "hook", "SessionStart:startup")
            .unwrap_or_else(|| panic!("{label_s}: no SessionStart hook: {stream:#}"));
        assert_eq!(start["stages"]["fired"]["state"], "yes", "{label_s}");
        assert_eq!(outcomes(start), started, "{label_s}: {start:#}");
        let stop = row(&stream, "hook", "Stop")
            .unwrap_or_else(|| panic!("{label_s}: no Stop hook: {stream:#}"));
        if stop_exit == 0 {
            // Nothing in the stream says it ran: not a fact either way.
            assert_ne!(
                stop["stages"]["fired"]["state"], "yes",
                "{label_s}: {stop:#}"
            );
            assert!(
                text(stop).contains("no record shows whether it ran"),
                "{label_s}: {stop:#}"
            );
        } else {
            // It ran and erred; how (failed or blocked) the line does not say.
            assert_eq!(
                stop["stages"]["fired"]["state"], "yes",
                "{label_s}: {stop:#}"
            );
            assert_eq!(
                outcomes(stop),
                [("unknown".to_owned(), None)],
                "{label_s}: {stop:#}"
            );
        }

        // Tether's reading of the transcript, by path.
        let transcript = run.home.show(&run.transcript);
        let label_t = format!("{label} (transcript)");
        let written = std::fs::read_to_string(&run.transcript).expect("transcript");
        if release == Release::Newest {
            assert_broken_failed(&label_t, &transcript);
            assert!(written.contains("\"stop_hook_summary\""), "{label_t}");
        } else {
            // 2.1.197's transcript holds nothing of a server's connection
            // (measured: no line names `broken`): the server is absent from
            // this reading, never shown used.
            assert!(!written.contains("broken"), "{label_t}");
            if let Some(broken) = row(&transcript, "mcp_server", "broken") {
                assert_ne!(broken["status"], "active", "{label_t}: {broken:#}");
                assert_eq!(broken["calls"], 0, "{label_t}: {broken:#}");
            }
        }
        assert_no_never_fired(&label_t, &transcript);
        // The SessionStart hook printed: its attachment says it ran.
        let start = row(&transcript, "hook", "SessionStart:startup")
            .unwrap_or_else(|| panic!("{label_t}: no SessionStart hook: {transcript:#}"));
        assert_eq!(outcomes(start), started, "{label_t}: {start:#}");
        assert_eq!(start["command"], "start.sh", "{label_t}: {start:#}");
        // The Stop hook: fired, as it ended.
        let stop = row(&transcript, "hook", "Stop")
            .unwrap_or_else(|| panic!("{label_t}: no Stop hook: {transcript:#}"));
        let want = if stop_exit == 0 {
            ("succeeded".to_owned(), Some(0))
        } else {
            ("failed".to_owned(), Some(i64::from(stop_exit)))
        };
        assert_eq!(outcomes(stop), [want], "{label_t}: {stop:#}");
        assert_eq!(stop["command"], "stop.sh", "{label_t}: {stop:#}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_pinned_hooks_and_a_dead_server_agree_with_its_stream() {
    compare(Release::Pinned).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_newest_hooks_and_a_dead_server_agree_with_its_stream() {
    compare(Release::Newest).await;
}
