//! Each format says the same outcomes (the outcomes themselves are
//! tether-requirements' tests).

use super::*;
use tether_core::vocab::{DisplayStatus, ReasonCode, StageState};
use tether_requirements::parse_server;

use tether_requirements::sample::{server, summary};

fn checked() -> CheckDocument {
    let mut broken = server(
        "broken",
        DisplayStatus::Failed,
        &[("initialized", StageState::No)],
    );
    broken.reason_code = Some(ReasonCode::CommandNotFound);
    broken.stopped = "failed <&> \"quoted\" 'x'\u{1}".into();
    let rows = vec![
        server(
            "time",
            DisplayStatus::Active,
            &[("model_visible", StageState::Yes)],
        ),
        broken,
        server("extra", DisplayStatus::Failed, &[]),
    ];
    let reqs = vec![
        parse_server("time").expect("parses"),
        parse_server("broken").expect("parses"),
    ];
    document(vec![check_session(&summary(), &rows, &reqs)])
}

#[test]
fn junit_is_one_suite_per_session_one_case_per_requirement_escaped() {
    let doc = checked();
    assert!(!doc.met);
    let xml = junit(&doc, &[]);
    assert_eq!(xml.matches("<testsuite ").count(), 1);
    assert_eq!(xml.matches("<testcase ").count(), 2);
    assert!(
        xml.contains("<testcase classname=\"tether.toy\" name=\"require time\"/>"),
        "{xml}"
    );
    assert_eq!(xml.matches("<failure ").count(), 1);
    assert!(xml.contains("type=\"command_not_found\""), "{xml}");
    assert!(
        xml.contains("&lt;&amp;&gt; &quot;quoted&quot; &apos;x&apos;"),
        "{xml}"
    );
    assert!(!xml.contains('\u{1}'), "a control character XML forbids");
    assert!(!xml.contains("<&>"));
    // The unrequired failure is said, never a testcase.
    assert!(xml.contains("<system-err>extra:"), "{xml}");
}

#[test]
fn github_annotates_unmet_as_errors_and_unrequired_failures_as_warnings() {
    let text = github(&checked(), &[]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with("::error title=tether%3A broken not met::broken:"),
        "{text}"
    );
    assert!(lines[0].contains("[command_not_found]"));
    assert!(
        lines[1].starts_with("::warning title=tether%3A extra failed::"),
        "{text}"
    );
    assert_eq!(gh_data("a%b\nc\r"), "a%25b%0Ac%0D");
    assert_eq!(gh_property("a:b,c"), "a%3Ab%2Cc");
}

#[test]
fn markdown_and_human_and_json_say_the_same_outcomes() {
    let doc = checked();
    let md = markdown(&doc, &[]);
    assert!(md.contains("| ✅ | time |"), "{md}");
    assert!(md.contains("| ❌ | broken |"), "{md}");
    assert!(md.contains("| ⚠️ | extra |"), "{md}");
    assert!(md.contains("\\<&\\>"), "markup in a cell is escaped: {md}");
    let human = human(&doc);
    assert!(human.contains("met     time:"), "{human}");
    assert!(human.contains("NOT MET broken:"), "{human}");
    let json: serde_json::Value =
        serde_json::from_str(&render(&doc, Format::Json, &[]).expect("renders")).expect("json");
    assert_eq!(json["met"], false);
    assert_eq!(
        json["sessions"][0]["requirements"][1]["reason_code"],
        "command_not_found"
    );
    assert_eq!(json["sessions"][0]["requirements"][0]["state"], "yes");
    assert_eq!(exit_code(&doc), ExitCode::from(4));
}

/// The session's own error, as `run_errors` says it.
const SAID: &str = "its records report an error: its model API could not be reached: a <b>|c [session_request_failed]";

#[test]
fn every_format_says_the_sessions_own_error_in_its_idiom() {
    let doc = checked();
    let errors = vec![Some(SAID.to_owned())];
    // JUnit: first in the suite's system-err, and after each failure's sentence.
    let xml = junit(&doc, &errors);
    let escaped = xml_escape(SAID);
    assert!(
        xml.contains(&format!("<system-err>{escaped}\nextra:")),
        "{xml}"
    );
    assert!(
        xml.contains(&format!("[command_not_found]\n{escaped}</failure>")),
        "{xml}"
    );
    assert_eq!(xml.matches(&escaped).count(), 2, "{xml}");
    // GitHub: an error where the session's check fails, first.
    let text = github(&doc, &errors);
    let first = text.lines().next().expect("a line");
    assert_eq!(
        first,
        format!(
            "::error title=tether%3A session toy%3As1::{}",
            gh_data(SAID)
        ),
        "{text}"
    );
    assert_eq!(text.lines().count(), 3, "{text}");
    // A warning where it passes.
    let mut met = doc.clone();
    met.sessions[0].met = true;
    assert!(github(&met, &errors).starts_with("::warning title=tether%3A session "));
    // Markdown: quoted under the session's heading.
    let md = markdown(&doc, &errors);
    let quote = md.lines().find(|l| l.starts_with("> ")).expect("a quote");
    assert_eq!(quote, format!("> {}", md_cell(SAID)), "{md}");
    let heading = md.find("### ").expect("heading");
    assert!(md.find(quote).expect("quoted") > heading);
    // The human lines, and none of it without an error.
    assert!(human_saying(&doc, &errors).contains(&format!("\n  {SAID}\n")));
    for format in [
        Format::Human,
        Format::Junit,
        Format::Github,
        Format::Markdown,
    ] {
        let plain = render(&doc, format, &[]).expect("renders");
        assert!(!plain.contains("its records report"), "{plain}");
        let said = render(&doc, format, &errors).expect("renders");
        assert!(said.contains("its records report"), "{format:?}: {said}");
    }
}
