//! What `opencode run --format json` printed, saved to a file and read by
//! path (`tether sessions show PATH`). Verified on OpenCode 1.18.33.
//!
//! Cli.run (the pinned binary `opencode-linux-x64/bin/opencode`, its
//! bundled JavaScript at byte 96194330): each line is
//! `{type, timestamp (ms), sessionID, …}`, printed for the run's session
//! only: `tool_use` `{part}` once a tool part's `state.status` is
//! `completed` or `error` (never while it runs), `step_start`,
//! `step_finish`, `text` and `reasoning` `{part}`, and `error` `{error}`
//! for a `session.error` (or a prompt the server refused). The `part` is
//! the database's: `type: "tool"`, `tool`, `callID`, `state{status, input,
//! output | error}`.
//!
//! Read: the session's id from every line; of a `tool_use`, the tool, the
//! call's id and how it ended, its error's words told apart by the words
//! the database's query matches ([`crate::parts::error_word`]; every
//! session `run` printed is one `run` made), then read as a database row
//! is ([`crate::parts::tool_part`]); the skill's name of the `skill`
//! tool. Inputs, outputs, texts and errors' words are payload: scanned
//! where said, never kept. OpenCode's version is printed nowhere.

use serde_json::Value;
use tether_core::model::Timestamp;
use tether_core::records::{RecordAnswer, RecordFile, RecordReading, Unparsed, name};
use tether_sdk::records::answer;

use crate::parts::{INVALID_TOOL, SKILL_TOOL, ToolPart, error_word, invalid_word, tool_part};

/// The role of a file of printed lines (`records::STREAM_JSON`).
pub(crate) const ROLE: &str = "stream_json";

/// The kinds of line Cli.run prints (`Z("tool_use", …)` and its siblings).
const KNOWN: &[&str] = &[
    "tool_use",
    "step_start",
    "step_finish",
    "text",
    "reasoning",
    "error",
];

/// One printed line. A line that is not JSON (cut short, or not JSON at
/// all) is unparsed, with why, never a kind this Tether does not know; so
/// is a `tool_use` line whose part is not a tool part with a tool's name
/// (a known kind in a shape it cannot be read in).
pub(crate) fn read(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    let line = match serde_json::from_str::<Value>(record) {
        Ok(line) => line,
        Err(error) => return RecordAnswer::unparsed(&error, None),
    };
    let Some(kind) = line["type"].as_str().filter(|k| KNOWN.contains(k)) else {
        return RecordAnswer::Unknown;
    };
    // Every line names the run's session: a line that names none is no
    // line of Cli.run's.
    let Some(session) = line["sessionID"]
        .as_str()
        .filter(|s| s.starts_with("ses_"))
        .and_then(name)
    else {
        return RecordAnswer::Unknown;
    };
    let at = line["timestamp"].as_u64().map(Timestamp);
    let mut reading = RecordReading::default();
    reading.session = Some(session);
    reading.at = at;
    if kind == "tool_use" {
        let part = &line["part"];
        let Some(tool) = part["tool"].as_str().filter(|_| part["type"] == "tool") else {
            return RecordAnswer::Unparsed {
                why: Unparsed::WrongType,
                kind: Some(kind.to_owned()),
            };
        };
        let state = &part["state"];
        let input = &state["input"];
        let unavailable = (tool == INVALID_TOOL)
            .then(|| input["error"].as_str().and_then(invalid_word))
            .flatten();
        let ended = match state["status"].as_str() {
            _ if unavailable.is_some() => unavailable,
            Some("error") => Some(error_word(state["error"].as_str().unwrap_or(""), true)),
            other => other,
        };
        let named = match tool {
            SKILL_TOOL => input["name"].as_str(),
            INVALID_TOOL => input["tool"].as_str(),
            _ => None,
        };
        let call = ToolPart {
            tool,
            call_id: part["callID"].as_str(),
            ended,
            named,
        };
        tool_part(
            &mut reading,
            &call,
            file.configured,
            at.unwrap_or(Timestamp(0)),
        );
    }
    answer(reading)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_core::vocab::EvidenceKind;

    fn read_as(record: &str, configured: &[String]) -> RecordAnswer {
        let segments = vec!["run.jsonl".to_owned()];
        let file = RecordFile {
            role: ROLE,
            segments: &segments,
            session: None,
            configured,
        };
        read(&file, record)
    }

    fn line(status: &str, error: &str) -> String {
        serde_json::json!({"type": "tool_use", "timestamp": 1796325197035u64,
            "sessionID": "ses_dc2accbd2ffeJK8FUbY2gzTmWB",
            "part": {"type": "tool", "tool": "count_stamp", "callID": "call_fake1",
                "state": {"status": status, "input": {"planted": "input-secret-771"},
                    "error": error, "output": "output-secret-772"}}})
        .to_string()
    }

    /// GIVEN printed tool parts WHEN read THEN each call ends as the
    /// database's row for the same words would, and no payload is kept.
    #[test]
    fn tool_parts_end_as_the_database_says() {
        let count = vec!["count".to_owned()];
        for (status, error, kind, reason) in [
            ("completed", "", EvidenceKind::ToolCallObserved, None),
            (
                "error",
                "failed as asked",
                EvidenceKind::ToolCallObserved,
                None,
            ),
            (
                "error",
                "MCP error -32602: err answers an error",
                EvidenceKind::ToolCallObserved,
                Some("protocol_error"),
            ),
            (
                "error",
                "MCP error -32001: Request timed out",
                EvidenceKind::ToolCallObserved,
                Some("timeout"),
            ),
            (
                "error",
                "MCP error -32001: Maximum total timeout exceeded",
                EvidenceKind::ToolCallObserved,
                Some("timeout"),
            ),
            (
                "error",
                "MCP error -32000: Connection closed",
                EvidenceKind::ToolCallObserved,
                Some("connection_closed"),
            ),
            (
                "error",
                "MCP error -32000: a server's own words",
                EvidenceKind::ToolCallObserved,
                Some("protocol_error"),
            ),
            (
                "error",
                "The user rejected permission to use this specific tool call.",
                EvidenceKind::ToolCallRefused,
                Some("approval_required"),
            ),
            (
                "error",
                "The user rejected permission to use this specific tool call with the following feedback: feedback-secret-773",
                EvidenceKind::ToolCallRefused,
                Some("permission_denied"),
            ),
            (
                "error",
                "The user has specified a rule which prevents you from using this specific tool call. rule-secret-774",
                EvidenceKind::ToolCallRefused,
                Some("permission_denied"),
            ),
        ] {
            let RecordAnswer::Read(r) = read_as(&line(status, error), &count) else {
                panic!("{status} {error}: not read");
            };
            assert_eq!(r.session.as_deref(), Some("ses_dc2accbd2ffeJK8FUbY2gzTmWB"));
            assert_eq!(r.evidence.len(), 1, "{error}");
            let e = &r.evidence[0];
            assert_eq!(e.kind, kind, "{error}");
            assert_eq!(
                e.reason_code.as_ref().map(|c| c.as_str().to_owned()),
                reason.map(str::to_owned),
                "{error}"
            );
            let shown = format!("{r:?}");
            for secret in [
                "input-secret",
                "output-secret",
                "feedback-secret",
                "rule-secret",
            ] {
                assert!(!shown.contains(secret), "{secret} kept: {shown}");
            }
        }
    }

    /// GIVEN a tool name no configured server fits, a line of another
    /// shape, and a session error WHEN read THEN no call, unknown, and the
    /// session only.
    #[test]
    fn other_lines() {
        let RecordAnswer::Read(r) = read_as(&line("completed", ""), &[]) else {
            panic!("not read");
        };
        assert!(r.evidence.is_empty());
        assert!(matches!(
            read_as(r#"{"type":"tool_use","part":{}}"#, &[]),
            RecordAnswer::Unknown
        ));
        assert!(matches!(
            read_as(r#"{"type":"system","sessionID":"ses_1"}"#, &[]),
            RecordAnswer::Unknown
        ));
        let error = r#"{"type":"error","timestamp":1,"sessionID":"ses_1","error":{"name":"APIError","data":{"message":"secret-775"}}}"#;
        let RecordAnswer::Read(r) = read_as(error, &[]) else {
            panic!("not read");
        };
        assert_eq!(r.session.as_deref(), Some("ses_1"));
        assert!(!format!("{r:?}").contains("secret-775"));
    }

    /// GIVEN a printed `tool_use` line as 1.18.33 prints it (a real run's,
    /// `opencode-1.18.33-allowed.run.jsonl`) cut short at every byte, a line
    /// that is not JSON, and a `tool_use` line whose part is no tool part
    /// WHEN read THEN each is unparsed with why (cut short, not JSON, a
    /// field of the wrong type: the kind named), never a kind this Tether
    /// does not know; the whole line reads.
    #[test]
    fn a_line_that_does_not_parse_is_unparsed_never_unknown() {
        use tether_core::records::Unparsed;
        let whole = r#"{"type":"tool_use","timestamp":1796325164082,"sessionID":"ses_dc2ad54a5ffeXfqOb3g6j83cBE","part":{"type":"tool","tool":"count_stamp","callID":"call_fake1","state":{"status":"completed","input":{"timezone":"UTC"},"output":"ok","metadata":{"truncated":false},"title":"","time":{"start":1796325163988,"end":1796325164006}},"id":"prt_23d52c3c8001qlP7qKpFQjvHnH","sessionID":"ses_dc2ad54a5ffeXfqOb3g6j83cBE","messageID":"msg_23d52b5df001bXip5md18wfoqZ"}}"#;
        let count = vec!["count".to_owned()];
        assert!(matches!(read_as(whole, &count), RecordAnswer::Read(_)));
        for end in 1..whole.len() {
            assert_eq!(
                read_as(&whole[..end], &count),
                RecordAnswer::Unparsed {
                    why: Unparsed::CutShort,
                    kind: None
                },
                "cut at {end}"
            );
        }
        assert_eq!(
            read_as("opencode: not a line of JSON", &count),
            RecordAnswer::Unparsed {
                why: Unparsed::NotJson,
                kind: None
            }
        );
        for part in [r#"{"type":"text"}"#, r#"{"type":"tool","tool":7}"#, "null"] {
            let line = format!(r#"{{"type":"tool_use","sessionID":"ses_1","part":{part}}}"#);
            assert_eq!(
                read_as(&line, &count),
                RecordAnswer::Unparsed {
                    why: Unparsed::WrongType,
                    kind: Some("tool_use".to_owned())
                },
                "{line}"
            );
        }
    }

    /// GIVEN OpenCode's `invalid` tool, as its repair writes a call of a
    /// tool it did not have (1.18.33: input `{tool, error}`, the AI SDK's
    /// `NoSuchToolError` words) WHEN read THEN a refusal of that tool,
    /// `tool_not_available`, never a call; a call whose input failed the
    /// tool's schema, or a name no configured server fits, is nothing.
    #[test]
    fn a_tool_opencode_did_not_have_is_not_available() {
        let invalid = |asked: &str, words: &str| {
            serde_json::json!({"type": "tool_use", "timestamp": 1u64, "sessionID": "ses_1",
                "part": {"type": "tool", "tool": "invalid", "callID": "c1",
                    "state": {"status": "completed", "input": {"tool": asked, "error": words},
                        "output": "The arguments provided to the tool are invalid: secret-778"}}})
            .to_string()
        };
        let gone = vec!["gone".to_owned()];
        let words =
            "Model tried to call unavailable tool 'gone_get_time'. Available tools: bash, read.";
        let RecordAnswer::Read(r) = read_as(&invalid("gone_get_time", words), &gone) else {
            panic!("not read");
        };
        assert_eq!(r.evidence.len(), 1, "{r:?}");
        let e = &r.evidence[0];
        assert_eq!(e.kind, EvidenceKind::ToolCallRefused);
        assert_eq!(
            (e.server.as_deref(), e.tool.as_deref()),
            (Some("gone"), Some("get_time"))
        );
        assert_eq!(
            e.reason_code.as_ref().map(|c| c.as_str()),
            Some("tool_not_available")
        );
        assert!(!format!("{r:?}").contains("secret-778"));
        for (asked, words, configured) in [
            (
                "gone_get_time",
                "Invalid input for tool gone_get_time: secret-779",
                &gone,
            ),
            ("elsewhere_tool", words, &gone),
        ] {
            let RecordAnswer::Read(r) = read_as(&invalid(asked, words), configured) else {
                panic!("not read");
            };
            assert!(r.evidence.is_empty(), "{r:?}");
        }
    }

    /// GIVEN the `skill` tool's printed part WHEN read THEN the skill named
    /// in its input is invoked, and nothing else of its input is kept.
    #[test]
    fn the_skill_tool_invokes_its_skill() {
        let record = serde_json::json!({"type": "tool_use", "timestamp": 1u64,
            "sessionID": "ses_1", "part": {"type": "tool", "tool": "skill", "callID": "c1",
                "state": {"status": "completed", "input": {"name": "demo", "args": "secret-776"},
                    "output": "secret-777"}}})
        .to_string();
        let RecordAnswer::Read(r) = read_as(&record, &[]) else {
            panic!("not read");
        };
        assert_eq!(r.evidence.len(), 1);
        assert_eq!(r.evidence[0].kind, EvidenceKind::SkillInvoked);
        let shown = format!("{r:?}");
        assert!(
            shown.contains("demo") && !shown.contains("secret-77"),
            "{shown}"
        );
    }
}
