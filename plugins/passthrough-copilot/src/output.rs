//! What only a run's printed output holds (`--output-format json`, read by
//! path as `output_json`): the run its records belong to, Copilot's
//! transient notices of an organisation's MCP policy and of the tools kept
//! from the model. Read by the session events' own reader (`records.rs`),
//! which calls these.
//!
//! A run names its session only in its last line, `result` (1.0.102
//! `cli-main.js` `qun`; 1.0.63 `app.js` `_dr`); no event before it
//! carries the session's id (a real 1.0.102 run's events:
//! tests/fixtures/records-by-path/copilot-1.0.102-allowed.output.jsonl;
//! their ids, `parentId`, `interactionId`, `turnId` and `messageId` name
//! events, turns and messages). An output cut before it (a CI job killed,
//! a timeout) is read as `output_json_cut`: each record joins one session
//! named after the file and its first event, `file.NAME-ID8`, said as
//! such, never as Copilot's.
//! Which of the two a file is, `tether-records`' by-path choice tells from
//! its last records: the kind that knows a `result` among them describes
//! it better.

use tether_core::model::{Evidence, Timestamp};
use tether_core::records::{RecordAnswer, RecordFile, RecordReading, Unparsed, name};
use tether_core::vocab::ReasonCode;
use tether_sdk::records::{answer, push, withheld};
use tether_sdk::telemetry::failed;

/// A saved output cut before its `result` line, read only by path.
pub const CUT: &str = "output_json_cut";
/// The one run a saved output holds: its records wait under this thread
/// for the `result` line that names its session.
const OUTPUT_RUN: &str = "output";
/// What marks a session named after the file, not by Copilot.
const FILE_NAMED: &str = "file.";

/// A saved output's record (`output_json` or `output_json_cut`), placed
/// in its run: `Some` with the answer where the record is the run's own
/// (`result`, the model calls' bookkeeping), `None` where the event is
/// read further as `events.jsonl`'s are.
///
/// In `output_json` every record is the run's (the thread
/// [`OUTPUT_RUN`]) and `result` names its session (what came before
/// joins it). In `output_json_cut` every record is the session named
/// after the file ([`file_session`]), and a `result` is not known: a file
/// that holds one is no cut output.
pub(crate) fn run(
    file: &RecordFile<'_>,
    kind: &str,
    session_id: Option<&str>,
    event_id: Option<&str>,
    reading: &mut RecordReading,
) -> Option<RecordAnswer> {
    if file.role == CUT {
        if kind == "result" {
            return Some(RecordAnswer::Unknown);
        }
        // The session the file's first record named joins the rest.
        reading.session = file
            .session
            .map(str::to_owned)
            .or_else(|| file_session(file, event_id));
    } else {
        reading.thread = Some(OUTPUT_RUN.to_owned());
        if kind == "result" {
            reading.session = session_id.and_then(name);
            return Some(answer(std::mem::take(reading)));
        }
    }
    // The model calls' own bookkeeping (`model.call_*`, transient): they
    // name no server or tool.
    kind.starts_with("model.")
        .then(|| answer(std::mem::take(reading)))
}

/// What a line whose JSON does not parse (`error`) is: one that ends
/// before its object does (the file ends inside it: a capture cut short,
/// a copy taken while Copilot wrote) is cut short, and one that is not
/// JSON is not JSON: lines that could not be parsed, counted with their
/// line numbers (issue 68), never a kind not read or an unknown kind.
/// JSON that is no event (its `type` not a string, an array) is not known.
pub(crate) fn unparsed(error: &serde_json::Error) -> RecordAnswer {
    match Unparsed::of(error) {
        Unparsed::WrongType => RecordAnswer::Unknown,
        why => RecordAnswer::Unparsed { why, kind: None },
    }
}

/// A failed server's status in a saved output
/// (`session.mcp_server_status_changed`, `status` `failed`): its `error`
/// words (1.0.102 `cli-main.js`@6205892 `stderrDetail:Zn`; a real run's
/// "failed to spawn MCP server process: No such file or directory (os
/// error 2)") scanned for why (`failure`: a missing command, a login it
/// wants, …), never kept. Other statuses and events give nothing here.
pub(crate) fn failed_status(reading: &mut RecordReading, record: &str, at: Timestamp) {
    let Ok(event) = serde_json::from_str::<serde_json::Value>(record) else {
        return;
    };
    let data = &event["data"];
    if event["type"] != "session.mcp_server_status_changed" || data["status"] != "failed" {
        return;
    }
    if let (Some(server), Some(words)) = (
        data["serverName"].as_str().and_then(name),
        data["error"].as_str(),
    ) {
        push(reading, server_failed(&server, words, at));
    }
}

/// A server that failed to start or connect, as Copilot's words say: a
/// stdio server that ran, then exited before its handshake (1.0.102's
/// runtime.node: `MCP server process exited before completing the MCP
/// initialize handshake ({how})`, `how` as `exit code N` in a real run) is
/// `server_exited` with its exit code; any other words as every harness's
/// ([`tether_sdk::records::failure`]). The words are never kept.
pub(crate) fn server_failed(server: &str, words: &str, at: Timestamp) -> Evidence {
    if let Some(failure) = spawn_or_wait(server, words, at) {
        return failure;
    }
    let Some(how) = words
        .strip_prefix("MCP server process exited before completing the MCP initialize handshake")
    else {
        return tether_sdk::records::failure(server, words, at);
    };
    let code = how
        .strip_prefix(" (exit code ")
        .and_then(|c| c.split_once(')'))
        .and_then(|(c, _)| c.parse::<i64>().ok());
    tether_sdk::telemetry::failed(
        server,
        ReasonCode::ServerExited,
        code.map(|c| format!("exited with code {c}")),
        at,
    )
}

/// Copilot 1.0.102's words (runtime.node; real runs) for a stdio server
/// it could not spawn (`failed to spawn MCP server process: {io error}`)
/// and for one it gave up waiting on (`failed to initialize MCP client:
/// MCP lifecycle negotiation did not complete within {N} ms`, N 60000 in
/// a real run, per-server `timeout` not read): the first whose error is
/// `No such file or directory` is `command_not_found` (Copilot says the
/// same words, `os_not_found`, for a missing command, bare or a path, and
/// for a `cwd` that does not exist: a missing cwd is told apart only by
/// the configuration, `cwd_not_found` from the plan, which the row
/// keeps), the second `timeout`, with Copilot's wait. Other words: `None`.
fn spawn_or_wait(server: &str, words: &str, at: Timestamp) -> Option<Evidence> {
    use tether_sdk::telemetry::failed;
    if let Some(io) = words.strip_prefix("failed to spawn MCP server process: ") {
        return io.starts_with("No such file or directory").then(|| {
            failed(
                server,
                ReasonCode::CommandNotFound,
                Some(
                    "Copilot could not start it: no such file or directory (its command is not on PATH or not at the path given, or the cwd it starts in is missing); fix the entry's command or cwd"
                        .to_owned(),
                ),
                at,
            )
        });
    }
    let (_, after) = words.split_once("MCP lifecycle negotiation did not complete within ")?;
    let ms: u64 = after.split(' ').next()?.parse().ok()?;
    Some(failed(
        server,
        ReasonCode::Timeout,
        Some(format!(
            "Copilot gave up after {ms} ms: it started and never finished the MCP handshake; check that it is an MCP server that answers on stdio"
        )),
        at,
    ))
}

/// The session a cut output is read as, named by its first record (the
/// event `event_id`): `file.`, the file's name (each character outside
/// `[A-Za-z0-9._-]` a `-`, at most 80), `-` and the first 8 letters and
/// digits of the event's id (a random UUID, 1.0.102 `id`): two runs saved
/// under one name (a CI job's artifact, each run) are two sessions.
fn file_session(file: &RecordFile<'_>, event_id: Option<&str>) -> Option<String> {
    let own: String = file
        .from_end(0)?
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(80)
        .collect();
    let run: String = event_id
        .unwrap_or_default()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(8)
        .collect();
    let session = if run.is_empty() {
        format!("{FILE_NAMED}{own}")
    } else {
        format!("{FILE_NAMED}{own}-{run}")
    };
    name(&session)
}

/// Copilot's built-in MCP servers (1.0.102 `--help`,
/// `--disable-builtin-mcps`: "currently: github-mcp-server, githubiq"):
/// never in a user's configuration, never third-party.
const BUILTIN: &[&str] = &["github-mcp-server", "githubiq"];
/// The policy warning's fixed words (1.0.102 `cli-main.js`@5297692 and
/// @6218328; 1.0.63 `app.js`): every server but the built-in ones is off.
const THIRD_PARTY_OFF: &str =
    "Third-party MCP servers are disabled by your organization's Copilot policy";
/// The configuration notice's words before the sorted, `, `-joined names
/// of the tools kept from the model (1.0.63 `app.js`@3477637
/// `validateToolFilters`; 1.0.102 `runtime.node` string table).
const DISABLED_TOOLS: &str = "Disabled tools: ";

/// `session.warning` of type `policy`: where its words are Copilot's
/// "Third-party MCP servers are disabled by your organization's Copilot
/// policy", every configured server but the built-in ones is
/// `denied_by_policy` (no server is named: the configured ones are those
/// the policy covers; github/copilot-cli#4512: a policy that could not be
/// fetched blocks local servers too). Other words name nothing read.
pub(crate) fn policy_warning(
    reading: &mut RecordReading,
    message: Option<&str>,
    configured: &[String],
    at: Timestamp,
) {
    if !message.is_some_and(|m| m.starts_with(THIRD_PARTY_OFF)) {
        return;
    }
    for server in configured.iter().filter(|s| !BUILTIN.contains(&s.as_str())) {
        push(
            reading,
            failed(server, ReasonCode::DeniedByPolicy, None, at),
        );
    }
}

/// `session.info` of type `configuration` "Disabled tools: a, b, …": each
/// name that is an MCP server's tool is withheld (`excluded`: a tool
/// filter, `--excluded-tools`/`--available-tools` or the GitHub server's
/// default subset, kept it from the model). Built-in tools name no server
/// and give nothing.
pub(crate) fn disabled_tools(
    reading: &mut RecordReading,
    message: Option<&str>,
    configured: &[String],
    at: Timestamp,
) {
    let Some(names) = message.and_then(|m| m.strip_prefix(DISABLED_TOOLS)) else {
        return;
    };
    for full in names.split(", ").map(str::trim).take(4096) {
        if let Some((server, tool)) = server_tool(full, configured) {
            push(reading, withheld(&server, tool, ReasonCode::Excluded, at));
        }
    }
}

/// The server and tool a model-facing tool name is, by Copilot's own rule
/// (1.0.63 `app.js`@381157 `jie`: `${ek(server)}-${ek(tool)}`, `ek`
/// replacing `@` and every character outside `[a-zA-Z0-9-_]` with `-`
/// after punycode, the whole cut to 64 characters; 1.0.102
/// `cli-main.js`@296813 names an IDE server's tools so, and a real 1.0.102
/// call's `toolName` `count-stamp` is `mcpServerName` `count`'s
/// `mcpToolName` `stamp`): where exactly one configured or built-in
/// server's name fits. A name of 64 characters or more may be cut, and a
/// server named outside ASCII is punycoded: neither is split.
fn server_tool<'a>(full: &'a str, configured: &[String]) -> Option<(String, &'a str)> {
    use tether_sdk::names::{replace_outside, word_or_dash};
    if full.len() >= 64 {
        return None;
    }
    let mut fits: Vec<(String, &str)> = Vec::new();
    let servers = configured
        .iter()
        .map(String::as_str)
        .chain(BUILTIN.iter().copied());
    for server in servers.filter(|s| s.is_ascii()) {
        let prefix = replace_outside(server, word_or_dash, '-');
        if let Some(tool) = full
            .strip_prefix(prefix.as_str())
            .and_then(|rest| rest.strip_prefix('-'))
            .filter(|tool| !tool.is_empty())
            && !fits.iter().any(|(s, _)| s == server)
        {
            fits.push((server.to_owned(), tool));
        }
    }
    match fits.len() {
        1 => fits.pop(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GIVEN a real 1.0.102 run's words for a server that exited with 3
    /// before its handshake, and for a command not found WHEN read THEN
    /// the first is `server_exited` with its code, the second as before.
    #[test]
    fn a_server_that_exits_is_said_exited_with_its_code() {
        let exited = server_failed(
            "exits",
            "MCP server process exited before completing the MCP initialize handshake (exit code 3) (underlying transport failure: failed to initialize MCP client: transport failure during send initialize request: the server closed its input stream (broken pipe))",
            Timestamp(1),
        );
        assert_eq!(exited.reason_code, Some(ReasonCode::ServerExited));
        assert_eq!(exited.summary.as_deref(), Some("exited with code 3"));
        let spawn = server_failed(
            "absent",
            "failed to spawn MCP server process: No such file or directory (os error 2)",
            Timestamp(1),
        );
        assert_eq!(spawn.reason_code, Some(ReasonCode::CommandNotFound));
        assert!(
            spawn.summary.as_deref().is_some_and(|s| s.contains("cwd")),
            "{spawn:?}"
        );
        let waited = server_failed(
            "silent",
            "failed to initialize MCP client: MCP lifecycle negotiation did not complete within 60000 ms",
            Timestamp(1),
        );
        assert_eq!(waited.reason_code, Some(ReasonCode::Timeout));
        assert!(
            waited
                .summary
                .as_deref()
                .is_some_and(|s| s.contains("60000 ms")),
            "{waited:?}"
        );
    }

    use tether_core::vocab::EvidenceKind;

    fn configured(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    /// (kind, server, tool, reason) of each piece of evidence.
    fn said(
        reading: &RecordReading,
    ) -> Vec<(EvidenceKind, String, Option<String>, Option<ReasonCode>)> {
        reading
            .evidence
            .iter()
            .map(|e| {
                (
                    e.kind.clone(),
                    e.server.clone().unwrap_or_default(),
                    e.tool.clone(),
                    e.reason_code.clone(),
                )
            })
            .collect()
    }

    /// GIVEN Copilot's policy warning (1.0.63 and 1.0.102 words) WHEN read
    /// with servers configured THEN each but a built-in one is denied by
    /// policy; other words, or nothing configured, give nothing.
    #[test]
    fn the_policy_warning_denies_every_configured_third_party_server() {
        let words = "Third-party MCP servers are disabled by your organization's Copilot policy. Only built-in servers are available.";
        let at = Timestamp(1);
        let mut reading = RecordReading::default();
        policy_warning(
            &mut reading,
            Some(words),
            &configured(&["notes", "github-mcp-server"]),
            at,
        );
        let got = said(&reading);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].1, "notes");
        assert_eq!(got[0].3, Some(ReasonCode::DeniedByPolicy));
        for (message, names) in [
            (Some("Some other policy words"), vec!["notes"]),
            (None, vec!["notes"]),
            (Some(words), vec![]),
        ] {
            let mut reading = RecordReading::default();
            policy_warning(&mut reading, message, &configured(&names), at);
            assert!(reading.evidence.is_empty(), "{message:?}: {reading:?}");
        }
    }

    /// GIVEN "Disabled tools: …" (the real 1.0.63 list and a 1.0.102 run's
    /// `count-fail`) WHEN read THEN each name that fits exactly one
    /// configured or built-in server is its tool, withheld (`excluded`);
    /// built-in tools, an ambiguous name and a name that may have been cut
    /// give nothing.
    #[test]
    fn disabled_tools_are_withheld_where_one_server_fits() {
        let at = Timestamp(1);
        let read = |message: &str, names: &[&str]| {
            let mut reading = RecordReading::default();
            disabled_tools(&mut reading, Some(message), &configured(names), at);
            said(&reading)
                .into_iter()
                .map(|(kind, server, tool, reason)| {
                    assert_eq!(kind, EvidenceKind::ToolWithheld);
                    assert_eq!(reason, Some(ReasonCode::Excluded));
                    format!("{server}/{}", tool.unwrap_or_default())
                })
                .collect::<Vec<_>>()
        };
        // Shape: /tmp/realfiles/copilot/bench_1.0.63_session.jsonl line 6.
        let real = "Disabled tools: bash, fetch_copilot_cli_documentation, github-mcp-server-get_copilot_space, github-mcp-server-get_file_contents, glob, task";
        assert_eq!(
            read(real, &[]),
            [
                "github-mcp-server/get_copilot_space",
                "github-mcp-server/get_file_contents"
            ]
        );
        assert_eq!(
            read("Disabled tools: count-fail", &["count"]),
            ["count/fail"]
        );
        // `my.server`'s tools are named `my-server-…` by Copilot.
        assert_eq!(
            read("Disabled tools: my-server-t", &["my.server"]),
            ["my.server/t"]
        );
        // `a` and `a-b` both fit `a-b-c`.
        assert!(read("Disabled tools: a-b-c", &["a", "a-b"]).is_empty());
        let long = format!("Disabled tools: count-{}", "x".repeat(60));
        assert!(read(&long, &["count"]).is_empty());
        assert!(read("Available tools: count-fail", &["count"]).is_empty());
    }

    /// GIVEN a transient event (the real 1.0.63 policy warning) and a
    /// `result` line WHEN read as `events.jsonl` THEN neither is known (no
    /// events file holds them); WHEN read as a saved output THEN the
    /// warning denies the configured server under the run's thread, and
    /// the result names the session for that thread.
    #[test]
    fn a_saved_output_is_told_from_events_and_its_result_names_the_session() {
        use crate::records::{EVENTS, OUTPUT, read};
        use tether_core::records::{RecordAnswer, RecordFile};
        // Shape: /tmp/realfiles/copilot/bench_1.0.63_session.jsonl line 1
        // (ids neutral); the result as 1.0.63 app.js `_dr` writes it.
        let warning = r#"{"type":"session.warning","data":{"warningType":"policy","message":"Third-party MCP servers are disabled by your organization's Copilot policy. Only built-in servers are available."},"id":"e1","timestamp":"2026-06-18T19:22:09.911Z","parentId":"e0","ephemeral":true}"#;
        let result = r#"{"type":"result","timestamp":"2026-06-18T19:22:20.000Z","sessionId":"s-1","exitCode":0,"usage":{"premiumRequests":0}}"#;
        let segments = vec!["saved".to_owned(), "run.jsonl".to_owned()];
        let names = configured(&["notes"]);
        let file = |role| RecordFile {
            role,
            segments: &segments,
            session: None,
            configured: &names,
        };
        assert_eq!(read(&file(EVENTS), warning), RecordAnswer::Unknown);
        assert_eq!(read(&file(EVENTS), result), RecordAnswer::Unknown);
        let RecordAnswer::Read(reading) = read(&file(OUTPUT), warning) else {
            panic!("the warning reads");
        };
        assert_eq!(reading.session, None, "never the folder");
        assert_eq!(reading.thread.as_deref(), Some("output"));
        assert_eq!(said(&reading)[0].3, Some(ReasonCode::DeniedByPolicy));
        let RecordAnswer::Read(reading) = read(&file(OUTPUT), result) else {
            panic!("the result reads");
        };
        assert_eq!(reading.session.as_deref(), Some("s-1"));
        assert_eq!(reading.thread.as_deref(), Some("output"));
    }

    /// GIVEN the same warning and result, and a file whose name is no
    /// name WHEN read as a cut output THEN the warning, the file's first
    /// record, is the session named after the file and itself (`file.`,
    /// the name, odd characters `-`, and its event id), with no thread; a
    /// later record joins it; the result is not known (a file holding one
    /// is no cut output).
    #[test]
    fn a_cut_output_is_the_session_named_after_its_file() {
        use crate::records::read;
        use tether_core::records::{RecordAnswer, RecordFile};
        // Shape: /tmp/realfiles/copilot/bench_1.0.63_session.jsonl line 1.
        let warning = r#"{"type":"session.warning","data":{"warningType":"policy","message":"Third-party MCP servers are disabled by your organization's Copilot policy."},"id":"e1","timestamp":"2026-06-18T19:22:09.911Z","ephemeral":true}"#;
        let result = r#"{"type":"result","timestamp":"2026-06-18T19:22:20.000Z","sessionId":"s-1","exitCode":0}"#;
        let names = configured(&["notes"]);
        for (file_name, want) in [
            ("run.jsonl", "file.run.jsonl-e1"),
            ("ci run (2).jsonl", "file.ci-run--2-.jsonl-e1"),
        ] {
            let segments = vec!["saved".to_owned(), file_name.to_owned()];
            let file = RecordFile {
                role: CUT,
                segments: &segments,
                session: None,
                configured: &names,
            };
            let RecordAnswer::Read(reading) = read(&file, warning) else {
                panic!("the warning reads");
            };
            assert_eq!(reading.session.as_deref(), Some(want));
            assert_eq!(reading.thread, None);
            assert_eq!(said(&reading)[0].3, Some(ReasonCode::DeniedByPolicy));
            assert_eq!(read(&file, result), RecordAnswer::Unknown);
            // A later record joins the session the first one named.
            let later = RecordFile {
                session: Some(want),
                ..file
            };
            let other = warning.replace(r#""id":"e1""#, r#""id":"e9""#);
            let RecordAnswer::Read(reading) = read(&later, &other) else {
                panic!("a later warning reads");
            };
            assert_eq!(reading.session.as_deref(), Some(want));
        }
    }

    /// GIVEN a real 1.0.102 failed server status (a server whose command
    /// does not exist: `error` is words, not an object) WHEN read as each
    /// kind of saved output THEN it is read, the server failed as Copilot
    /// reported it, `command_not_found` by its words (never kept); as
    /// `events.jsonl` it is not (transient).
    #[test]
    fn a_failed_status_whose_error_is_words_is_read() {
        use crate::records::{EVENTS, OUTPUT, read};
        use tether_core::records::{RecordAnswer, RecordFile};
        // Shape: a real `-p --output-format json` run of 1.0.102 with
        // `broken` (tests/tests/by_path_copilot_cut.rs, the real run), ids
        // neutral.
        let failed = r#"{"type":"session.mcp_server_status_changed","data":{"serverName":"broken","status":"failed","error":"failed to spawn MCP server process: No such file or directory (os error 2)","errorClassification":"os_not_found","configSource":"user"},"ephemeral":true,"id":"e3","timestamp":"2026-12-03T22:25:30.079Z","parentId":"e0"}"#;
        let segments = vec!["saved".to_owned(), "run.jsonl".to_owned()];
        let file = |role| RecordFile {
            role,
            segments: &segments,
            session: None,
            configured: &[],
        };
        for role in [OUTPUT, CUT] {
            let RecordAnswer::Read(reading) = read(&file(role), failed) else {
                panic!("{role}: the status reads");
            };
            let got: Vec<_> = reading
                .evidence
                .iter()
                .map(|e| (e.server.clone(), e.reported_status.clone()))
                .collect();
            assert_eq!(
                got[0],
                (Some("broken".to_owned()), Some("failed".to_owned())),
                "{role}"
            );
            // Its words say why: the command is not there.
            let reasons: Vec<_> = reading
                .evidence
                .iter()
                .map(|e| e.reason_code.clone())
                .collect();
            assert!(
                reasons.contains(&Some(ReasonCode::CommandNotFound)),
                "{role}: {reasons:?}"
            );
            assert!(
                !format!("{reading:?}").contains("spawn"),
                "words never kept"
            );
        }
        assert_eq!(read(&file(EVENTS), failed), RecordAnswer::Unknown);
    }

    /// GIVEN an event cut inside its object, a line that is no JSON, and
    /// JSON whose `type` is no string WHEN read as each kind of Copilot
    /// file THEN the first two could not be parsed (cut short, not JSON:
    /// never a kind not read); the last is not known.
    #[test]
    fn a_line_cut_inside_its_object_is_said_cut_short() {
        use crate::records::{EVENTS, OUTPUT, read};
        use tether_core::records::{RecordAnswer, RecordFile};
        let segments = vec!["saved".to_owned(), "run.jsonl".to_owned()];
        for role in [EVENTS, OUTPUT, CUT] {
            let file = RecordFile {
                role,
                segments: &segments,
                session: None,
                configured: &[],
            };
            let cut = r#"{"type":"tool.execution_start","data":{"toolCallId":"call_1","mcpSer"#;
            let unparsed = |why| RecordAnswer::Unparsed { why, kind: None };
            assert_eq!(read(&file, cut), unparsed(Unparsed::CutShort), "{role}");
            assert_eq!(
                read(&file, "Error: not JSON"),
                unparsed(Unparsed::NotJson),
                "{role}"
            );
            assert_eq!(read(&file, r#"{"type":1}}"#), RecordAnswer::Unknown);
        }
    }
}
