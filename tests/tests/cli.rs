//! The `tether` command as a user runs it: exit codes, one JSON document, and
//! the human summary.

use std::process::Command;

use tether_tests::workspace_bin;

fn tether() -> Command {
    Command::new(workspace_bin("tether"))
}

#[test]
fn probe_json_prints_exactly_one_document_and_exits_0_on_a_verdict() {
    let agent = workspace_bin("tether-reference-agent");
    let out = tether()
        .args(["probe", "--json", "--timeout", "30", "--"])
        .arg(&agent)
        .output()
        .expect("run tether");
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("utf8");
    let mut docs = serde_json::Deserializer::from_str(&text).into_iter::<serde_json::Value>();
    let doc = docs.next().expect("one document").expect("valid json");
    assert!(docs.next().is_none(), "exactly one document");
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["verdict"], "active");
    assert_eq!(doc["sentinel"]["client"]["name"], "tether-reference-agent");
    assert_eq!(doc["report"]["servers"][0]["status"], "active");
}

#[test]
fn probe_exits_3_with_json_when_the_agent_cannot_start() {
    let out = tether()
        .args(["probe", "--json", "--", "/nonexistent/agent-binary"])
        .output()
        .expect("run tether");
    assert_eq!(out.status.code(), Some(3));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json still printed");
    assert_eq!(doc["verdict"], "agent_failed");
    assert_eq!(doc["session"]["error"]["reason_code"], "command_not_found");
}

#[test]
fn usage_errors_exit_2() {
    let out = tether().args(["probe", "--json"]).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    let out = tether()
        .args(["probe", "--transport", "carrier-pigeon", "--", "x"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let out = tether()
        .args(["probe", "--grace", "forever", "--", "x"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn probe_prints_a_human_summary_by_default() {
    let agent = workspace_bin("tether-reference-agent");
    let out = tether()
        .args(["probe", "--transport", "sse", "--"])
        .arg(&agent)
        .output()
        .expect("run tether");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Verdict   active"), "{text}");
    assert!(text.contains("over sse"), "{text}");
    assert!(text.contains("client tether-reference-agent"), "{text}");
}

#[test]
fn schema_commands_print_draft_2020_12() {
    for doc in ["history", "attempt", "probe-report"] {
        let out = tether().args(["schema", doc]).output().expect("run");
        assert!(out.status.success());
        let schema: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
    }
}
