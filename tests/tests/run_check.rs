//! `tether run` and `tether check`, verified against real Claude Code
//! (pinned and newest) headless against the fake model, with the servers
//! `time` (PyPI mcp-server-time) and `broken` (a command that does not
//! exist) configured:
//! - GIVEN `tether run --require time -- claude -p … --output-format
//!   stream-json --verbose` THEN its stdout is Claude Code's stream-json
//!   alone, its exit is 0, and stderr says `time` met;
//! - GIVEN `--require broken` THEN the exit is 4 (neither 1 nor 2) and
//!   stderr names `broken`;
//! - GIVEN `tether check` of the saved stream-json THEN `--format junit`
//!   is well-formed JUnit (parsed by Python's XML parser) with a passing
//!   testcase for `time` and a failing one for `broken`, and `--format
//!   github` gives an `::error` annotation naming `broken` and appends
//!   its summary to `$GITHUB_STEP_SUMMARY`.
//!
//! Also, with a stand-in harness (a script named `claude`): stdin, stdout
//! and stderr pass byte for byte, the exit code is kept, a signal is
//! forwarded; and a command no plugin knows runs anyway. And the book's
//! "In CI" workflow: its shell steps, extracted from the chapter, run
//! against the fake model.
//!
//! Each real run skips loudly where its CLI (tests/peers, `npm ci`) or
//! `mcp-server-time` (tests/peers/.venv) is not installed. Waits end at
//! the process's exit, bounded.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tether_tests::Release;

/// The home, the work folder and the servers' configuration of one run.
struct Setup {
    home: tempfile::TempDir,
    work: PathBuf,
    config: PathBuf,
    model: tether_tests::fake_model::Running,
    log: tether_tests::fake_model::ModelLog,
}

async fn setup() -> Option<Setup> {
    let time = tether_tests::peer(".venv/bin/mcp-server-time")?;
    let (model, log) = tether_tests::fake_model::start_model("get_current_time").await;
    let home = tempfile::tempdir().expect("home");
    let work = home.path().join("work");
    std::fs::create_dir_all(&work).expect("work");
    let config = home.path().join("mcp.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {
            "time": {"command": time},
            "broken": {"command": "/nonexistent/bin"}
        }})
        .to_string(),
    )
    .expect("config");
    Some(Setup {
        home,
        work,
        config,
        model,
        log,
    })
}

/// `tether run ARGS -- claude -p …` on the setup's home, from its work
/// folder, stdin closed: its output, bounded.
async fn tether_run(
    s: &Setup,
    release: Release,
    claude: &Path,
    tether_args: &[&str],
) -> std::process::Output {
    let mut cmd = Command::new(tether_tests::workspace_bin("tether"));
    cmd.arg("run")
        .args(tether_args)
        .arg("--db")
        .arg(s.home.path().join("tether.db"))
        .arg("--")
        .arg(claude)
        .args([
            "-p",
            "what time is it",
            "--mcp-config",
            &s.config.display().to_string(),
            "--strict-mcp-config",
            "--allowedTools",
            "mcp__time__get_current_time",
            "--output-format",
            "stream-json",
            "--verbose",
        ])
        .env_clear()
        .env("PATH", release.path())
        .env("HOME", s.home.path())
        .env("ANTHROPIC_API_KEY", "dummy")
        .env("ANTHROPIC_BASE_URL", s.model.base())
        .env("CLAUDE_CODE_MAX_RETRIES", "0")
        // Servers connected before the model's first request: `-p`
        // connects them in the background by default, and on a loaded
        // machine the turn can go out before `time` is there.
        .env("MCP_CONNECTION_NONBLOCKING", "false")
        .current_dir(&s.work)
        .stdin(Stdio::null());
    tokio::task::spawn_blocking(move || tether_tests::output_within(cmd, 240))
        .await
        .expect("the run")
}

/// Every line of `stdout` is one of Claude Code's stream-json objects:
/// nothing of Tether's is in it.
fn only_stream_json(label: &str, stdout: &str) {
    assert!(!stdout.is_empty(), "{label}: no stdout");
    for line in stdout.lines() {
        let v: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("{label}: not stream-json ({e}): {line}"));
        assert!(v["type"].is_string(), "{label}: {line}");
    }
    let first: serde_json::Value =
        serde_json::from_str(stdout.lines().next().expect("a line")).expect("json");
    assert_eq!(first["type"], "system", "{label}");
    assert_eq!(first["subtype"], "init", "{label}");
    assert!(
        !stdout.contains("tether"),
        "{label}: Tether wrote to stdout"
    );
}

/// JUnit XML parsed by Python's own XML parser (well-formed, or it
/// fails): each testcase's name and whether it failed.
fn junit_cases(xml: &str) -> Vec<(String, bool)> {
    let python = tether_tests::peer(".venv/bin/python3").expect("the venv's python");
    let script = "import sys, json, xml.etree.ElementTree as ET\n\
root = ET.fromstring(sys.stdin.read())\n\
assert root.tag == 'testsuites', root.tag\n\
print(json.dumps([[c.get('name'), c.find('failure') is not None] for s in root.findall('testsuite') for c in s.findall('testcase')]))\n";
    let mut child = Command::new(python)
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python");
    use std::io::Write;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(xml.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("python ends");
    assert!(
        out.status.success(),
        "not well-formed JUnit: {}\n{xml}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the cases")
}

async fn claude_through_tether_run(release: Release) {
    let Some(claude) = release.peer("node_modules/.bin/claude") else {
        return;
    };
    let Some(s) = setup().await else { return };
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let label = format!("claude {}", release.label());

    // --require time: stdout untouched, exit 0.
    let out = tether_run(&s, release, &claude, &["--require", "time"]).await;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    tether_tests::keep_home(&format!("run-check-{}", release.label()), s.home.path());
    assert!(
        !s.log.turns().is_empty(),
        "{label}: never asked the model: {stderr}"
    );
    assert_eq!(out.status.code(), Some(0), "{label}: {stderr}");
    only_stream_json(&label, &stdout);
    assert!(
        stderr.contains("met     time: its tools reached the session"),
        "{label}: {stderr}"
    );
    assert!(
        stderr.contains("mcp_server  time"),
        "{label}: the matrix: {stderr}"
    );
    assert!(
        !stderr.contains("what time is it"),
        "{label}: the prompt must never be printed: {stderr}"
    );

    // --require broken: exit 4, naming broken.
    let out = tether_run(&s, release, &claude, &["--require", "broken"]).await;
    let stderr2 = String::from_utf8_lossy(&out.stderr).into_owned();
    let code = out.status.code().expect("an exit code");
    assert!(
        ![0, 1, 2].contains(&code),
        "{label}: exit {code}: {stderr2}"
    );
    assert_eq!(code, 4, "{label}: {stderr2}");
    assert!(stderr2.contains("NOT MET broken:"), "{label}: {stderr2}");
    only_stream_json(&label, &String::from_utf8_lossy(&out.stdout));

    // The session is in the store: `tether check` of it by id.
    let id = stdout
        .lines()
        .find_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            v["session_id"].as_str().map(|s| format!("claude:{s}"))
        })
        .expect("the stream-json names its session");
    let check = |args: &[&str]| {
        tether_tests::tether_at_home(s.home.path())
            .arg("check")
            .args(args)
            .arg("--db")
            .arg(s.home.path().join("tether.db"))
            .output()
            .expect("tether check")
    };
    let stored = check(&[&id, "--require", "time", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&stored.stdout)
        .unwrap_or_else(|e| panic!("{label}: {e}: {}", String::from_utf8_lossy(&stored.stderr)));
    assert_eq!(doc["met"], true, "{label}: the stored session: {doc:#}");
    assert_eq!(stored.status.code(), Some(0));

    // The saved stream-json, checked: JUnit and GitHub.
    let saved = s.home.path().join("session.jsonl");
    std::fs::write(&saved, &stdout).expect("save");
    let saved = saved.display().to_string();
    let junit = check(&[
        &saved,
        "--require",
        "time",
        "--require",
        "broken",
        "--format",
        "junit",
    ]);
    assert_eq!(junit.status.code(), Some(4), "{label}");
    let cases = junit_cases(&String::from_utf8_lossy(&junit.stdout));
    assert_eq!(
        cases,
        [
            ("require time".to_owned(), false),
            ("require broken".to_owned(), true)
        ],
        "{label}"
    );
    // Without --require: every server the session names.
    let all = check(&[&saved, "--format", "junit"]);
    let cases = junit_cases(&String::from_utf8_lossy(&all.stdout));
    assert!(
        cases.contains(&("require time".to_owned(), false)),
        "{label}: {cases:?}"
    );
    assert!(
        cases.contains(&("require broken".to_owned(), true)),
        "{label}: {cases:?}"
    );

    let summary = s.home.path().join("step-summary.md");
    std::fs::write(&summary, "before\n").expect("summary");
    let github = tether_tests::tether_at_home(s.home.path())
        .args([
            "check",
            &saved,
            "--require",
            "time",
            "--require",
            "broken",
            "--format",
            "github",
        ])
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .expect("tether check");
    let text = String::from_utf8_lossy(&github.stdout);
    assert_eq!(github.status.code(), Some(4), "{label}");
    let errors: Vec<&str> = text.lines().filter(|l| l.starts_with("::error ")).collect();
    assert_eq!(errors.len(), 1, "{label}: {text}");
    assert!(errors[0].contains("broken"), "{label}: {text}");
    let appended = std::fs::read_to_string(&summary).expect("summary");
    assert!(appended.starts_with("before\n"), "appended, never replaced");
    assert!(appended.contains("| ✅ | time |"), "{appended}");
    assert!(appended.contains("| ❌ | broken |"), "{appended}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pinned_claude_through_tether_run_and_check() {
    claude_through_tether_run(Release::Pinned).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn newest_claude_through_tether_run_and_check() {
    claude_through_tether_run(Release::Newest).await;
}

/// A stand-in harness named `claude` in `dir`: the shell script `body`.
fn stand_in(dir: &Path, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("claude");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

/// GIVEN a harness that copies stdin to stdout, adds bytes of every value,
/// writes to stderr and exits 3 WHEN run through `tether run` THEN stdout
/// is byte for byte its own, its stderr line is there, and the exit is 3.
#[test]
fn stdio_pass_byte_for_byte_and_the_exit_code_is_kept() {
    let home = tempfile::tempdir().expect("home");
    let script = stand_in(
        home.path(),
        "cat; printf '\\000\\377\\r\\n\\033[0m'; echo harness-stderr >&2; exit 3",
    );
    let input: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    let mut child = tether_tests::tether_at_home(home.path())
        .args(["run", "--require", "time", "--"])
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tether run");
    let mut stdin = child.stdin.take().expect("stdin");
    let feed = input.clone();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        stdin.write_all(&feed).expect("feed");
    });
    let out = child.wait_with_output().expect("ends");
    writer.join().expect("fed");
    let mut expected = input;
    expected.extend_from_slice(b"\x00\xff\r\n\x1b[0m");
    assert!(
        out.stdout == expected,
        "stdout differs ({} bytes)",
        out.stdout.len()
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("harness-stderr"), "{stderr}");
    assert_eq!(
        out.status.code(),
        Some(3),
        "the harness's own failure: {stderr}"
    );
}

/// GIVEN a harness that exits 0 and writes no session WHEN a server is
/// required THEN it is not met (silence never passes): exit 4.
#[test]
fn a_requirement_is_never_met_by_a_silent_run() {
    let home = tempfile::tempdir().expect("home");
    let script = stand_in(home.path(), "exit 0");
    let out = tether_tests::tether_at_home(home.path())
        .args(["run", "--require", "time", "--"])
        .arg(&script)
        .output()
        .expect("tether run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("NOT MET time:"), "{stderr}");
}

/// GIVEN the user's environment already sends telemetry elsewhere WHEN a
/// harness runs through `tether run` THEN the variable is kept as set, the
/// harness sees the user's value, and Tether says so by name, never the
/// value.
#[test]
fn the_user_s_own_telemetry_is_kept_and_said() {
    let home = tempfile::tempdir().expect("home");
    let script = stand_in(home.path(), "echo \"$OTEL_EXPORTER_OTLP_ENDPOINT\"");
    let out = tether_tests::tether_at_home(home.path())
        .args(["run", "--"])
        .arg(&script)
        .env(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "http://collector.example:4318",
        )
        .env(
            "OTEL_EXPORTER_OTLP_HEADERS",
            "Authorization=Bearer planted-secret-K9",
        )
        .output()
        .expect("tether run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.stdout, b"http://collector.example:4318\n", "{stderr}");
    assert!(
        stderr.contains("already sets OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS"),
        "{stderr}"
    );
    assert!(!stderr.contains("planted-secret-K9"), "{stderr}");
    assert!(!stderr.contains("collector.example"), "{stderr}");
}

/// GIVEN a harness that exits 42 on SIGTERM WHEN `tether run` is sent
/// SIGTERM THEN it forwards it and exits 42.
#[test]
fn a_signal_is_forwarded_and_its_exit_kept() {
    let home = tempfile::tempdir().expect("home");
    let ready = home.path().join("ready");
    let script = stand_in(
        home.path(),
        &format!(
            "trap 'exit 42' TERM; touch {}; while :; do sleep 0.1; done",
            ready.display()
        ),
    );
    let child = tether_tests::tether_at_home(home.path())
        .args(["run", "--"])
        .arg(&script)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tether run");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !ready.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the harness never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pid = child.id().to_string();
    let sent = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    assert!(sent.success());
    let out = child.wait_with_output().expect("ends");
    assert_eq!(
        out.status.code(),
        Some(42),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// GIVEN a command no plugin knows THEN it runs, Tether says so, and its
/// exit code is kept.
#[test]
fn a_command_no_plugin_knows_runs_anyway() {
    let home = tempfile::tempdir().expect("home");
    let out = tether_tests::tether_at_home(home.path())
        .args(["run", "--", "sh", "-c", "echo out; exit 5"])
        .output()
        .expect("tether run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.stdout, b"out\n");
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("no plugin knows \"sh\""), "{stderr}");
    // Required, and nothing seen: never met (the command succeeded).
    let unseen = tether_tests::tether_at_home(home.path())
        .args(["run", "--require", "time", "--", "sh", "-c", "exit 0"])
        .output()
        .expect("tether run");
    let stderr = String::from_utf8_lossy(&unseen.stderr);
    assert_eq!(unseen.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("no requirement is met: time"), "{stderr}");
    let missing = tether_tests::tether_at_home(home.path())
        .args(["run", "--", "/nonexistent/claude"])
        .output()
        .expect("tether run");
    assert_eq!(missing.status.code(), Some(127));
}

/// The `run:` blocks of the book chapter's GitHub Actions workflow, in
/// order, but the one that installs (`name: Install …`).
fn workflow_steps(chapter: &str) -> Vec<String> {
    let start = chapter
        .find("```yaml\nname:")
        .expect("the chapter's GitHub Actions workflow");
    let block = &chapter[start + 8..];
    let block = &block[..block.find("```").expect("its end")];
    let mut steps = Vec::new();
    let mut name = String::new();
    let mut lines = block.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if let Some(n) = trimmed.strip_prefix("- name: ") {
            name = n.to_owned();
        }
        if trimmed == "run: |" {
            let indent = line.len() - trimmed.len() + 2;
            let mut script = String::new();
            while let Some(next) = lines.peek() {
                if !next.trim().is_empty() && next.len() - next.trim_start().len() < indent {
                    break;
                }
                script.push_str(next.get(indent..).unwrap_or(""));
                script.push('\n');
                lines.next();
            }
            if !name.starts_with("Install") {
                steps.push(script);
            }
        }
    }
    steps
}

/// GIVEN the book's "In CI" workflow WHEN its shell steps run, in order,
/// against the fake model with `claude` and `tether` on PATH THEN the run
/// passes (time reached the model), its JUnit file is written, and with
/// `time` gone from the configuration the run step fails with exit 4.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_book_s_workflow_runs() {
    let chapter =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../book/src/in-ci.md"))
            .expect("book/src/in-ci.md");
    let steps = workflow_steps(&chapter);
    assert!(steps.len() >= 2, "{steps:?}");
    assert!(steps.iter().any(|s| s.contains("tether run")), "{steps:?}");
    let Some(claude) = Release::Newest.peer("node_modules/.bin/claude") else {
        return;
    };
    let Some(s) = setup().await else { return };
    let _one = tether_tests::one_real_cli_at_a_time().await;
    // The repository the workflow checks out: its MCP configuration.
    std::fs::create_dir_all(s.work.join(".github")).expect(".github");
    std::fs::copy(&s.config, s.work.join(".github/mcp.json")).expect("config");
    let bins = s.home.path().join("bin");
    std::fs::create_dir_all(&bins).expect("bin");
    std::os::unix::fs::symlink(&claude, bins.join("claude")).expect("claude");
    std::os::unix::fs::symlink(tether_tests::workspace_bin("tether"), bins.join("tether"))
        .expect("tether");
    let path = format!("{}:{}", bins.display(), Release::Newest.path());
    let run_steps = |steps: Vec<String>| {
        let mut codes = Vec::new();
        for script in steps {
            let mut cmd = Command::new("bash");
            cmd.args(["-e", "-o", "pipefail", "-c", &script])
                .env_clear()
                .env("PATH", &path)
                .env("HOME", s.home.path())
                .env("ANTHROPIC_API_KEY", "dummy")
                .env("ANTHROPIC_BASE_URL", s.model.base())
                .env("CLAUDE_CODE_MAX_RETRIES", "0")
                .env("TETHER_DB", s.home.path().join("tether.db"))
                .current_dir(&s.work)
                .stdin(Stdio::null());
            let out = tether_tests::output_within(cmd, 240);
            codes.push((
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
            ));
        }
        codes
    };
    let ran = tokio::task::block_in_place(|| run_steps(steps.clone()));
    for (code, stderr, _) in &ran {
        assert_eq!(*code, Some(0), "a step failed: {stderr}");
    }
    let junit = std::fs::read_to_string(s.work.join("tether-junit.xml")).expect("the JUnit file");
    let cases = junit_cases(&junit);
    assert!(
        cases.contains(&("require time".to_owned(), false)),
        "{cases:?}"
    );
    // Without `time`, the run step fails: exit 4.
    std::fs::write(
        s.work.join(".github/mcp.json"),
        serde_json::json!({"mcpServers": {"broken": {"command": "/nonexistent/bin"}}}).to_string(),
    )
    .expect("config");
    let run_step: Vec<String> = steps
        .iter()
        .filter(|s| s.contains("tether run"))
        .cloned()
        .collect();
    let ran = tokio::task::block_in_place(|| run_steps(run_step));
    assert_eq!(ran[0].0, Some(4), "{}", ran[0].1);
}

/// `tether check --format json` of a saved stream-json (a real Claude Code
/// run whose call of `time` was refused) is one document: its requirement
/// for `time` judged, written as the `check` document's sample for the
/// bindings' round trip (no npm peer needed).
#[test]
fn check_json_of_a_saved_stream_is_one_document() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/refusals/claude-2.1.332-noperm.stream.jsonl");
    let out = Command::new(tether_tests::workspace_bin("tether"))
        .env("TETHER_DB", tether_tests::scratch_store())
        .args(["check", "--require", "time", "--format", "json"])
        .arg(&file)
        .output()
        .expect("tether check");
    let code = out.status.code();
    assert!(
        matches!(code, Some(0 | 4)),
        "{code:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let text = doc.to_string();
    assert!(text.contains("\"time\""), "{text}");
    std::fs::write(tether_tests::samples_dir().join("check.json"), &out.stdout).expect("sample");
}

/// The requirements the one-verdict test asks, as `tether run` and
/// `tether check` take them: a server that starts (`time`), a command not
/// found (`broken`), a server whose token is refused (`badtoken`).
const ONE_VERDICT: [&str; 10] = [
    "--require",
    "time",
    "--require",
    "time:model_visible",
    "--require-tool",
    "time/get_current_time",
    "--require",
    "broken",
    "--require",
    "badtoken",
];

/// A token planted in the refused server's header: never printed.
const PLANTED_TOKEN: &str = "planted-token-67-one-verdict";

/// Each requirement's `met` in a CheckDocument, in order.
fn verdicts(doc: &serde_json::Value) -> Vec<(String, bool)> {
    doc["sessions"][0]["requirements"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            (
                o["requirement"].as_str().unwrap_or_default().to_owned(),
                o["met"] == true,
            )
        })
        .collect()
}

/// Each requirement's verdict as `tether run` printed it (`met` or `NOT
/// MET` lines), in order.
fn run_verdicts(stderr: &str) -> Vec<bool> {
    stderr
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            if l.starts_with("met     ") {
                Some(true)
            } else if l.starts_with("NOT MET ") {
                Some(false)
            } else {
                None
            }
        })
        .collect()
}

/// `tether run FLAGS --db HOME/tether.db -- claude -p "what time is it"
/// --mcp-config CONFIG --strict-mcp-config --output-format stream-json
/// --verbose`, in a cleared environment (this release's PATH, the setup's
/// HOME and folder, stdin closed) whose model API is a port nothing
/// listens on.
fn claude_run_with_no_model(
    s: &Setup,
    release: Release,
    claude: &std::path::Path,
    flags: &[&str],
) -> Command {
    // A port nothing listens on: bound, then let go.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a port");
    let mut cmd = Command::new(tether_tests::workspace_bin("tether"));
    cmd.arg("run")
        .args(flags)
        .arg("--db")
        .arg(s.home.path().join("tether.db"))
        .arg("--")
        .arg(claude)
        .args(["-p", "what time is it", "--mcp-config"])
        .arg(&s.config)
        .args([
            "--strict-mcp-config",
            "--output-format",
            "stream-json",
            "--verbose",
        ])
        .env_clear()
        .env("PATH", release.path())
        .env("HOME", s.home.path())
        .env("ANTHROPIC_API_KEY", "dummy")
        .env("ANTHROPIC_BASE_URL", format!("http://{closed}"))
        .current_dir(&s.work)
        .stdin(Stdio::null());
    cmd
}

/// A child in its own process group, killed with it when dropped (a
/// failing test leaves nothing behind).
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        tether_tests::kill_group(&mut self.0);
    }
}

/// The verdicts `tether serve` over the same store gives the session at
/// `GET /api/v1/sessions/{id}/check`, [`ONE_VERDICT`] as its `require`
/// and `require_tool` parameters.
async fn served_verdicts(db: &Path, id: &str) -> Vec<(String, bool)> {
    use std::io::BufRead;
    use std::os::unix::process::CommandExt;
    let mut serve = Command::new(tether_tests::workspace_bin("tether"));
    serve
        .args(["serve", "--json", "--db"])
        .arg(db)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0);
    let mut child = Killed(serve.spawn().expect("tether serve"));
    let stdout = child.0.stdout.take().expect("stdout");
    // Its banner is its first line: read it off the runtime's threads.
    let banner = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the banner");
        line
    })
    .await
    .expect("the banner");
    let banner: serde_json::Value = serde_json::from_str(&banner).expect("banner json");
    let query: Vec<String> = ONE_VERDICT
        .chunks(2)
        .map(|pair| match pair {
            ["--require", r] => format!("require={r}"),
            ["--require-tool", r] => format!("require_tool={r}"),
            other => panic!("not a requirement: {other:?}"),
        })
        .collect();
    let url = format!(
        "{}/api/v1/sessions/{id}/check?{}",
        banner["url"].as_str().expect("url"),
        query.join("&")
    );
    let answer = reqwest::Client::new()
        .get(&url)
        .bearer_auth(banner["token"].as_str().expect("token"))
        .send()
        .await
        .expect("the service answers");
    assert_eq!(answer.status(), 200, "{url}");
    let body = answer.text().await.expect("its body");
    let doc: serde_json::Value = serde_json::from_str(&body).expect("a CheckDocument");
    assert!(!doc.to_string().contains(PLANTED_TOKEN), "{doc}");
    verdicts(&doc)
}

/// GIVEN real Claude Code whose model API is unreachable (a closed port:
/// its result says `API Error: Unable to connect to API`), with a server
/// that starts (`time`), a command not found (`broken`) and an HTTP
/// server that refuses the token it is sent (`badtoken`, 401) WHEN it runs
/// through `tether run` with requirements on each, and its session is
/// checked by id and by the stream-json `run` passed on THEN the three
/// give the same verdict for each requirement (`run` reads the stream it
/// passes on with the reader `check FILE` uses), and so does `tether
/// serve`'s check route on the store `run` wrote; `run` printed the
/// harness's exit status and why (the model API unreachable, in Tether's
/// words, `connection_refused`) before the requirements; the transcript
/// alone (less evidence) never meets more than `run`; `model_visible` is
/// not met, since no request reached a model (the harness's own list is no
/// model-side signal); and the planted token is printed nowhere.
async fn one_verdict_with_the_model_unreachable(release: Release) {
    let Some(claude) = release.peer("node_modules/.bin/claude") else {
        return;
    };
    let Some(s) = setup().await else { return };
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let label = format!("claude {}", release.label());
    let (auth, _auth_log) = tether_tests::fake_model::start_auth().await;
    let time = tether_tests::peer(".venv/bin/mcp-server-time").expect("time");
    std::fs::write(
        &s.config,
        serde_json::json!({"mcpServers": {
            "time": {"command": time},
            "broken": {"command": "/nonexistent/bin"},
            "badtoken": {"type": "http", "url": format!("{}/mcp", auth.base()),
                "headers": {"Authorization": format!("Bearer {PLANTED_TOKEN}")}},
        }})
        .to_string(),
    )
    .expect("config");
    let out = {
        let mut cmd = claude_run_with_no_model(&s, release, &claude, &ONE_VERDICT);
        cmd.env("CLAUDE_CODE_MAX_RETRIES", "0")
            // `time` connected before the init line is printed: `-p`
            // connects in the background by default, and `time` is then
            // reported pending (delivered, its tools not yet listed).
            .env("MCP_CONNECTION_NONBLOCKING", "false");
        tokio::task::spawn_blocking(move || tether_tests::output_within(cmd, 240))
            .await
            .expect("the run")
    };
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    tether_tests::keep_home(&format!("one-verdict-{}", release.label()), s.home.path());
    assert!(
        stdout.contains("API Error:"),
        "{label}: the harness's own words: {stdout}"
    );
    only_stream_json(&label, &stdout);
    assert!(!stderr.contains(PLANTED_TOKEN), "{label}: {stderr}");
    assert!(
        !stderr.contains("API Error"),
        "{label}: never its words: {stderr}"
    );
    let code = out.status.code().expect("an exit code");
    assert_ne!(code, 0, "{label}: the harness failed: {stderr}");
    // The harness's exit status and why, before the requirements.
    let status_at = stderr
        .find(&format!(
            "tether run: claude exited {code}: its model API could not be reached"
        ))
        .unwrap_or_else(|| panic!("{label}: no exit status and reason: {stderr}"));
    assert!(
        stderr[status_at..]
            .lines()
            .next()
            .is_some_and(|l| l.ends_with("[connection_refused]")),
        "{label}: {stderr}"
    );
    let first_requirement = stderr.find("time: ").unwrap_or(usize::MAX);
    assert!(status_at < first_requirement, "{label}: {stderr}");
    let ran = run_verdicts(&stderr);
    assert_eq!(ran.len(), 5, "{label}: {stderr}");

    let id = stdout
        .lines()
        .find_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            v["session_id"].as_str().map(str::to_owned)
        })
        .expect("the stream-json names its session");
    let check = |what: &str| {
        let out = tether_tests::tether_at_home(s.home.path())
            .arg("check")
            .arg(what)
            .args(ONE_VERDICT)
            .args(["--format", "json", "--db"])
            .arg(s.home.path().join("tether.db"))
            .output()
            .expect("tether check");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{label}: {what}: {e}: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        let expected = if doc["met"] == true { 0 } else { 4 };
        assert_eq!(out.status.code(), Some(expected), "{label}: {what}");
        assert!(!doc.to_string().contains(PLANTED_TOKEN), "{label}: {what}");
        verdicts(&doc)
    };
    let met = |v: &[(String, bool)]| v.iter().map(|(_, m)| *m).collect::<Vec<_>>();
    let by_id = check(&format!("claude:{id}"));
    assert_eq!(
        met(&by_id),
        ran,
        "{label}: check ID and run differ: {by_id:?}\n{stderr}"
    );
    // The status service over the same store: the same library decides.
    let served = served_verdicts(&s.home.path().join("tether.db"), &format!("claude:{id}")).await;
    assert_eq!(
        met(&served),
        ran,
        "{label}: the service and run differ: {served:?}\n{stderr}"
    );
    // The stream-json `run` passed on, saved: the same evidence.
    let saved = s.home.path().join("session.jsonl");
    std::fs::write(&saved, &stdout).expect("save");
    let by_stream = check(&saved.display().to_string());
    assert_eq!(
        met(&by_stream),
        ran,
        "{label}: check FILE and run differ: {by_stream:?}\n{stderr}"
    );
    // The transcript alone shows less: never a requirement `run` did not meet.
    let transcript = walk(&s.home.path().join(".claude/projects"))
        .into_iter()
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy() == format!("{id}.jsonl"))
        })
        .expect("the transcript the harness wrote");
    let by_transcript = check(&transcript.display().to_string());
    for ((req, alone), with_all) in by_transcript.iter().zip(&ran) {
        assert!(!alone || *with_all, "{label}: {req}: {by_transcript:?}");
    }
    // The server that starts reached the session; the two that failed did
    // not; nothing reached a model.
    let verdict = |name: &str| by_stream.iter().find(|(r, _)| r == name).map(|(_, m)| *m);
    assert_eq!(verdict("time"), Some(true), "{label}: {by_stream:?}");
    assert_eq!(verdict("time:model_visible"), Some(false), "{label}");
    assert_eq!(verdict("broken"), Some(false), "{label}");
    assert_eq!(verdict("badtoken"), Some(false), "{label}");
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pinned_claude_gives_one_verdict_with_the_model_unreachable() {
    one_verdict_with_the_model_unreachable(Release::Pinned).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn newest_claude_gives_one_verdict_with_the_model_unreachable() {
    one_verdict_with_the_model_unreachable(Release::Newest).await;
}

/// GIVEN a server in the user's `~/.claude.json` and a run given its
/// servers by flag with `--strict-mcp-config` WHEN it runs through `tether
/// run` (newest Claude Code, the model unreachable) THEN the user's server
/// is not shown for that run (the run never had it), the flag's is; and
/// `check` of the session without requirements does not require it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_strict_run_claims_no_server_of_the_user_s_files() {
    let release = Release::Newest;
    let Some(claude) = release.peer("node_modules/.bin/claude") else {
        return;
    };
    let Some(s) = setup().await else { return };
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let time = tether_tests::peer(".venv/bin/mcp-server-time").expect("time");
    std::fs::write(
        s.home.path().join(".claude.json"),
        serde_json::json!({"mcpServers": {"userserver": {"command": time}}}).to_string(),
    )
    .expect("the user's file");
    let mut cmd = claude_run_with_no_model(&s, release, &claude, &[]);
    cmd.env("CLAUDE_CODE_MAX_RETRIES", "0");
    let out = tokio::task::spawn_blocking(move || tether_tests::output_within(cmd, 240))
        .await
        .expect("the run");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(stderr.contains("mcp_server  time"), "{stderr}");
    assert!(
        !stderr.contains("userserver"),
        "the run never had it: {stderr}"
    );
    let id = String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            v["session_id"].as_str().map(str::to_owned)
        })
        .expect("the stream-json names its session");
    let checked = tether_tests::tether_at_home(s.home.path())
        .args(["check", &id, "--format", "json"])
        .output()
        .expect("tether check");
    let doc: serde_json::Value = serde_json::from_slice(&checked.stdout).expect("json");
    let required: Vec<&str> = doc["sessions"][0]["requirements"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| o["server"].as_str())
        .collect();
    assert!(!required.contains(&"userserver"), "{doc:#}");
    assert!(required.contains(&"time"), "{doc:#}");
}

/// The requirements the killed-mid-retry test asks: a server that starts,
/// the model's view of it, a command not found.
const MID_RETRY: [&str; 6] = [
    "--require",
    "time",
    "--require",
    "time:model_visible",
    "--require",
    "broken",
];

/// Why a run killed mid-retry ended, in Tether's words (its `api_retry`
/// line: no HTTP answer, no cause claimed).
const NO_ANSWER: &str = "its model API could not be reached: its request got no HTTP answer (it retried) [session_request_failed]";

/// GIVEN real Claude Code whose model API is unreachable (a closed port),
/// retrying as it does by default, run through `tether run` WHEN `tether
/// run` is stopped (SIGTERM, which it forwards) once the harness printed
/// its first `api_retry` line, so that no `result` line ever comes THEN
/// `run` prints the harness's exit status and why (its model API could not
/// be reached, `session_request_failed`) before the requirements; `check
/// ID` (the store `run` wrote) and `check FILE` (the stream it passed on,
/// saved) give the same verdict per requirement and say the same why, as
/// does `sessions show FILE`; none prints the harness's own error words.
async fn killed_mid_retry_says_why(release: Release) {
    use std::io::BufRead;
    use std::os::unix::process::CommandExt;
    use std::time::{Duration, Instant};
    let Some(claude) = release.peer("node_modules/.bin/claude") else {
        return;
    };
    let Some(s) = setup().await else { return };
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let label = format!("claude {}", release.label());
    let mut cmd = claude_run_with_no_model(&s, release, &claude, &MID_RETRY);
    cmd.env("MCP_CONNECTION_NONBLOCKING", "false")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut run = Killed(cmd.spawn().expect("tether run"));
    let stdout = run.0.stdout.take().expect("stdout");
    let mut stderr = run.0.stderr.take().expect("stderr");
    let (lines, printed) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let said = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        text
    });
    // Until the first retry is printed: the evidence, bounded.
    let deadline = Instant::now() + Duration::from_secs(180);
    let mut out = Vec::new();
    let is_retry = |l: &str| {
        serde_json::from_str::<serde_json::Value>(l)
            .is_ok_and(|v| v["type"] == "system" && v["subtype"] == "api_retry")
    };
    while !out.last().is_some_and(|l: &String| is_retry(l)) {
        let left = deadline.saturating_duration_since(Instant::now());
        match printed.recv_timeout(left) {
            Ok(line) => out.push(line),
            Err(_) => panic!("{label}: no api_retry line: {out:?}"),
        }
    }
    let sent = Command::new("kill")
        .args(["-TERM", &run.0.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success(), "{label}");
    // The rest of what it printed, until its stdout closes (bounded).
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match printed.recv_timeout(left) {
            Ok(line) => out.push(line),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Err(e) => panic!("{label}: stdout never closed ({e}): {out:?}"),
        }
    }
    let status = loop {
        if let Some(status) = run.0.try_wait().expect("wait") {
            break status;
        }
        assert!(Instant::now() < deadline, "{label}: tether run never ended");
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = said.join().expect("stderr");
    tether_tests::keep_home(&format!("mid-retry-{}", release.label()), s.home.path());
    assert!(
        !out.iter().any(|l| l.contains(r#""type":"result""#)),
        "{label}: killed before its end: {out:?}"
    );
    let code = status.code().expect("an exit code");
    assert_ne!(code, 0, "{label}: {stderr}");
    for theirs in ["API Error", "Connection error", "ECONNREFUSED"] {
        assert!(
            !stderr.contains(theirs),
            "{label}: never its words: {stderr}"
        );
    }
    // The exit status and why, before the requirements.
    let status_at = stderr
        .find(&format!("tether run: claude exited {code}: {NO_ANSWER}"))
        .unwrap_or_else(|| panic!("{label}: no exit status and reason: {stderr}"));
    let first_requirement = stderr.find("time: ").unwrap_or(usize::MAX);
    assert!(status_at < first_requirement, "{label}: {stderr}");
    let ran = run_verdicts(&stderr);
    assert_eq!(ran, [true, false, false], "{label}: {stderr}");

    let id = out
        .iter()
        .find_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            v["session_id"].as_str().map(str::to_owned)
        })
        .expect("the stream-json names its session");
    let saved = s.home.path().join("session.jsonl");
    std::fs::write(&saved, out.join("\n") + "\n").expect("save");
    let tether = |args: &[&str]| {
        let out = tether_tests::tether_at_home(s.home.path())
            .args(args)
            .arg("--db")
            .arg(s.home.path().join("tether.db"))
            .output()
            .expect("tether");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for what in [format!("claude:{id}"), saved.display().to_string()] {
        let mut json = vec!["check", what.as_str()];
        json.extend(MID_RETRY);
        json.extend(["--format", "json"]);
        let (exit, doc, err) = tether(&json);
        let doc: serde_json::Value =
            serde_json::from_str(&doc).unwrap_or_else(|e| panic!("{label}: {what}: {e}: {err}"));
        assert_eq!(exit, Some(4), "{label}: {what}");
        let met: Vec<bool> = verdicts(&doc).into_iter().map(|(_, m)| m).collect();
        assert_eq!(met, ran, "{label}: check {what} and run differ: {doc:#}");
        let text = json[..json.len() - 2].to_vec();
        let (_, said, err) = tether(&text);
        assert!(
            said.contains(&format!("its records report an error: {NO_ANSWER}")),
            "{label}: check {what} says why: {said}{err}"
        );
    }
    // The transcript alone (no store, no stream): 2.1.332 writes each
    // retry, its cause named, in the run's end's words; 2.1.197 writes
    // none, and nothing is claimed.
    let on_disk = tether_tests::tether_at_home(s.home.path())
        .args(["sessions", "show", &format!("claude:{id}")])
        .output()
        .expect("tether sessions show");
    let on_disk = String::from_utf8_lossy(&on_disk.stdout);
    match release {
        Release::Newest => assert!(
            on_disk.contains("its records report an error: its model API could not be reached: nothing listened there (connection refused) (it retried) [connection_refused]"),
            "{label}: sessions show ID says why: {on_disk}"
        ),
        Release::Pinned => assert!(
            !on_disk.contains("its records report an error"),
            "{label}: its transcript says no error: {on_disk}"
        ),
    }
    let shown = tether_tests::tether_at_home(s.home.path())
        .args(["sessions", "show"])
        .arg(&saved)
        .output()
        .expect("tether sessions show");
    let (shown, err) = (
        String::from_utf8_lossy(&shown.stdout),
        String::from_utf8_lossy(&shown.stderr),
    );
    assert!(
        shown.contains(&format!("its records report an error: {NO_ANSWER}")),
        "{label}: sessions show FILE says why: {shown}{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pinned_claude_killed_mid_retry_says_why() {
    killed_mid_retry_says_why(Release::Pinned).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn newest_claude_killed_mid_retry_says_why() {
    killed_mid_retry_says_why(Release::Newest).await;
}

/// The init line of a real 2.1.197 run (`claude -p hi --mcp-config F
/// --strict-mcp-config --output-format stream-json --verbose`, `slow` a
/// stdio server that never answers, the model API on a closed port), as
/// printed: `slow` is `pending`.
const PENDING_INIT: &str = r#"{"type":"system","subtype":"init","cwd":"/tmp/tmp.oSKT3mg2lB","session_id":"28ba48af-a896-4bff-8453-2ddaaf01c8e0","tools":["Task","Bash","CronCreate","CronDelete","CronList","DesignSync","Edit","EnterWorktree","ExitWorktree","NotebookEdit","Read","ReportFindings","ScheduleWakeup","SendMessage","Skill","TaskCreate","TaskGet","TaskList","TaskOutput","TaskStop","TaskUpdate","WaitForMcpServers","WebFetch","WebSearch","Workflow","Write"],"mcp_servers":[{"name":"slow","status":"pending"}],"model":"claude-opus-4-8[1m]","permissionMode":"default","slash_commands":["deep-research","design-sync","update-config","verify","debug","code-review","simplify","batch","fewer-permission-prompts","loop","claude-api","run","run-skill-generator","clear","compact","config","context","heapdump","init","reload-skills","review","security-review","usage","insights","goal","team-onboarding"],"apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.1.197","output_style":"default","agents":["claude","Explore","general-purpose","Plan","statusline-setup"],"skills":["deep-research","design-sync","update-config","verify","debug","code-review","simplify","batch","fewer-permission-prompts","loop","claude-api","run","run-skill-generator"],"plugins":[],"analytics_disabled":false,"product_feedback_disabled":false,"uuid":"fa5875cd-2138-4ad0-9d52-c4273d530e6f","memory_paths":{"auto":"/tmp/tmp.jbuQwLRNWC/.claude/projects/-tmp-tmp-oSKT3mg2lB/memory/"},"fast_mode_state":"off"}"#;

/// GIVEN a saved stream-json whose init line reports a server `pending`
/// (Claude Code had it and was still connecting) WHEN `tether check FILE
/// --require slow` THEN it is not met, and the furthest stage shown is
/// `delivered` with the harness's word `pending`, never `enabled`; `sessions
/// show FILE` shows the row delivered, in the same words.
#[test]
fn a_pending_server_s_furthest_stage_is_delivered() {
    let home = tempfile::tempdir().expect("home");
    let saved = home.path().join("run.jsonl");
    std::fs::write(&saved, format!("{PENDING_INIT}\n")).expect("save");
    let out = tether_tests::tether_at_home(home.path())
        .arg("check")
        .arg(&saved)
        .args(["--require", "slow"])
        .output()
        .expect("tether check");
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{said}");
    assert!(
        said.contains("the furthest stage shown: delivered (given to the agent; nothing shows it connected (Claude Code reported it pending"),
        "{said}"
    );
    assert!(
        !said.contains("the furthest stage shown: enabled"),
        "{said}"
    );
    let shown = tether_tests::tether_at_home(home.path())
        .args(["sessions", "show"])
        .arg(&saved)
        .output()
        .expect("tether sessions show");
    let shown = String::from_utf8_lossy(&shown.stdout);
    let row = shown
        .lines()
        .find(|l| l.starts_with("mcp_server  slow"))
        .unwrap_or_else(|| panic!("{shown}"));
    assert!(
        row.contains("delivered") && row.contains("pending"),
        "{row}"
    );
}
