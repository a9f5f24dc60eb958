//! A run's own error, said alike by `tether run`, `tether sessions show`
//! and `tether check` (issue 67 §2): a session whose model API was not
//! reached reads so wherever it is looked at, in one sentence.
//!
//! The sessions are real Gemini CLI 0.61.0 runs (stream-json saved in
//! tests/fixtures/gemini-call-errors: its model API on a closed port, and a
//! key it refused), so nothing here needs the network or a model.
//!
//! - GIVEN a saved run whose model API was unreachable WHEN it is shown
//!   THEN the text view says its records report an error, with `tether
//!   run`'s words and code, and the JSON document carries that error.
//! - GIVEN the same file WHEN it is checked THEN the check says it too,
//!   under the session's line, and a requirement on it is still unmet.
//! - GIVEN the same file WHEN it is checked in each CI format THEN each
//!   says the same sentence in its idiom: Markdown quotes it under the
//!   session's heading (the GitHub step summary too), JUnit puts it in the
//!   suite's system-err and under each failure's sentence, GitHub annotates
//!   it (`::error` where the check fails, `::warning` where it passes).
//! - GIVEN a `gemini` on PATH that prints that same saved run and exits 1
//!   WHEN `tether run` runs it THEN the exit line holds the same words, said
//!   once (the matrix above it does not repeat them).
//! - GIVEN a saved run whose key was refused WHEN shown THEN it says so
//!   (another reason, the same sentence).

use std::path::{Path, PathBuf};

use tether_tests::by_path::{fixtures, sessions, show_json};

const UNREACHABLE: &str = "gemini-0.61.0-model-unreachable.stream.jsonl";
/// What the Gemini reader says of 0.61.0's `[API Error: …]` with no HTTP
/// answer (passthrough-gemini's ended.rs), and its code, as `tether run`
/// prints them after "gemini exited 1".
const UNREACHABLE_WHY: &str =
    ": its model API could not be reached: its request got no HTTP answer [session_request_failed]";

fn fixture(name: &str) -> PathBuf {
    fixtures().join("gemini-call-errors").join(name)
}

/// `tether ARGS` in `home` (HOME and working folder), with `path` first on
/// PATH: (exit code, stdout, stderr).
fn tether(home: &Path, path: Option<&Path>, args: &[&str]) -> (i32, String, String) {
    let mut cmd = tether_tests::tether_at_home(home);
    if let Some(dir) = path {
        let rest = std::env::var("PATH").unwrap_or_default();
        cmd.env("PATH", format!("{}:{rest}", dir.display()));
    }
    cmd.args(args);
    let out = tether_tests::output_within(cmd, 120);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn sessions_show_says_the_runs_own_error_as_run_does() {
    let home = tempfile::tempdir().expect("home");
    let file = fixture(UNREACHABLE);
    let (code, text, err) = sessions(home.path(), &["show", &file.display().to_string()]);
    assert_eq!(code, 0, "{err}");
    let said = format!("its records report an error{UNREACHABLE_WHY}");
    let line = text
        .lines()
        .find(|l| l.contains("its records report an error"))
        .unwrap_or_else(|| panic!("no error said: {text}"));
    assert_eq!(line, said, "{text}");
    // Said once, under the session's times, before the matrix's header.
    assert_eq!(text.matches("its records report an error").count(), 1);
    let header = text.find("KIND ").expect("the matrix header");
    assert!(text.find(&said).expect("said") < header, "{text}");

    // The JSON document carries it already: the current attempt's error.
    let doc = show_json(home.path(), &file);
    let current = doc["history"]["current_attempt_id"].clone();
    let attempt = doc["history"]["attempts"]
        .as_array()
        .expect("attempts")
        .iter()
        .find(|a| a["attempt_id"] == current)
        .expect("the current attempt");
    let error = &attempt["report_error"];
    assert_eq!(error["reason_code"], "session_request_failed", "{error:#}");
    assert_eq!(
        error["summary"], "its model API could not be reached: its request got no HTTP answer",
        "{error:#}"
    );
}

#[test]
fn check_says_the_runs_own_error_under_its_session() {
    let home = tempfile::tempdir().expect("home");
    let file = fixture(UNREACHABLE).display().to_string();
    let said = format!("  its records report an error{UNREACHABLE_WHY}");
    let (code, out, err) = tether(home.path(), None, &["check", &file]);
    assert_eq!(code, 0, "no requirement: {out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.get(1).copied(), Some(said.as_str()), "{out}");

    // A requirement on it: unmet (exit 4), the cause said above it.
    let (code, out, err) = tether(home.path(), None, &["check", &file, "--require", "time"]);
    assert_eq!(code, 4, "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.get(1).copied(), Some(said.as_str()), "{out}");
    assert!(
        lines.get(2).is_some_and(|l| l.contains("NOT MET time")),
        "{out}"
    );

    // The JSON document carries it as its own field, the same words (a
    // CI job reading JSON sees why its requirement is unmet).
    for args in [&[][..], &["--require", "time"][..]] {
        let mut all = vec!["check", file.as_str(), "--format", "json"];
        all.extend_from_slice(args);
        let (_, json, _) = tether(home.path(), None, &all);
        let doc: serde_json::Value = serde_json::from_str(&json).expect("one document");
        let error = &doc["sessions"][0]["session_error"];
        assert_eq!(error["reason_code"], "session_request_failed", "{doc:#}");
        assert_eq!(
            error["sentence"],
            format!("its records report an error{UNREACHABLE_WHY}"),
            "{doc:#}"
        );
    }
}

#[test]
fn run_says_the_same_words_once_on_its_exit_line() {
    let home = tempfile::tempdir().expect("home");
    let bin = tempfile::tempdir().expect("bin");
    // A `gemini` that prints what the real 0.61.0 printed, and its exit.
    let gemini = bin.path().join("gemini");
    std::fs::write(
        &gemini,
        format!(
            "#!/bin/sh\ncat '{}'\nexit 1\n",
            fixture(UNREACHABLE).display()
        ),
    )
    .expect("the replay");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&gemini, std::fs::Permissions::from_mode(0o755)).expect("mode");
    let (code, _, err) = tether(
        home.path(),
        Some(bin.path()),
        &["run", "--", "gemini", "-p", "hi", "-o", "stream-json"],
    );
    assert_eq!(code, 1, "the harness's exit: {err}");
    assert!(
        err.lines()
            .any(|l| l == format!("tether run: gemini exited 1{UNREACHABLE_WHY}")),
        "{err}"
    );
    assert_eq!(
        err.matches("its model API could not be reached").count(),
        1,
        "{err}"
    );
}

#[test]
fn a_refused_key_is_said_the_same_way() {
    let home = tempfile::tempdir().expect("home");
    let file = fixture("gemini-0.61.0-model-401.stream.jsonl");
    let (code, text, err) = sessions(home.path(), &["show", &file.display().to_string()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        text.lines().any(|l| l
            == "its records report an error: its model provider refused the credentials it sent [auth_rejected]"),
        "{text}"
    );
}

/// `said` as the Markdown format escapes it (a backslash before markup).
fn md_unescaped(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

#[test]
fn every_check_format_says_the_runs_own_error_in_its_idiom() {
    let home = tempfile::tempdir().expect("home");
    let file = fixture(UNREACHABLE).display().to_string();
    let said = format!("its records report an error{UNREACHABLE_WHY}");
    let check = |args: &[&str]| {
        let mut all = vec!["check", file.as_str()];
        all.extend_from_slice(args);
        tether(home.path(), None, &all)
    };

    // Markdown: quoted under the session's heading, above its table.
    let (code, md, err) = check(&["--format", "markdown"]);
    assert_eq!(code, 0, "{md}{err}");
    let lines: Vec<&str> = md.lines().collect();
    let heading = lines
        .iter()
        .position(|l| l.starts_with("### "))
        .expect("a heading");
    assert_eq!(lines.get(heading + 1), Some(&""), "{md}");
    let quote = lines.get(heading + 2).copied().unwrap_or_default();
    assert_eq!(md_unescaped(quote), format!("> {said}"), "{md}");
    assert_eq!(md.matches("its records report an error").count(), 1, "{md}");

    // JUnit: the suite's system-err; with a requirement unmet, under its
    // failure's sentence too (what CI viewers show of a failed case).
    let (code, xml, err) = check(&["--format", "junit"]);
    assert_eq!(code, 0, "{xml}{err}");
    assert!(
        xml.contains(&format!("<system-err>{said}</system-err>")),
        "{xml}"
    );
    let (code, xml, err) = check(&["--format", "junit", "--require", "time"]);
    assert_eq!(code, 4, "{xml}{err}");
    assert!(xml.contains(&format!("\n{said}</failure>")), "{xml}");
    assert!(
        xml.contains(&format!("<system-err>{said}</system-err>")),
        "{xml}"
    );

    // GitHub: a warning where the check passes, an error (first) where a
    // requirement is unmet; and the step summary quotes it.
    let (code, text, err) = check(&["--format", "github"]);
    assert_eq!(code, 0, "{text}{err}");
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("::warning title=tether%3A session gemini%3A"),
        "{text}"
    );
    assert!(first.ends_with(&format!("::{said}")), "{text}");
    let summary = home.path().join("step-summary.md");
    std::fs::write(&summary, "").expect("the summary file");
    let mut cmd = tether_tests::tether_at_home(home.path());
    cmd.env("GITHUB_STEP_SUMMARY", &summary).args([
        "check",
        &file,
        "--format",
        "github",
        "--require",
        "time",
    ]);
    let out = tether_tests::output_within(cmd, 120);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{text}");
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("::error title=tether%3A session gemini%3A"),
        "{text}"
    );
    assert!(first.ends_with(&format!("::{said}")), "{text}");
    assert!(
        text.lines()
            .nth(1)
            .is_some_and(|l| l.contains("time not met")),
        "{text}"
    );
    let md = std::fs::read_to_string(&summary).expect("the summary");
    assert!(
        md.lines().any(|l| md_unescaped(l) == format!("> {said}")),
        "{md}"
    );
}
