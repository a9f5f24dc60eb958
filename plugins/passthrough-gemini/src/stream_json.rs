//! What `gemini -p … --output-format stream-json` and `qwen -p …
//! --output-format stream-json` printed, saved to a file and read by path
//! (`tether sessions show PATH`). Lines carry names, ids and outcomes;
//! parameters, inputs, outputs and contents are payload, never kept (a
//! failed call's words are scanned by the helpers of [`crate::ended`] and
//! dropped).
//!
//! Gemini CLI 0.61.0 (bundle gemini-3HFX2LNT.js 11630 `init`, 11830-11860
//! `tool_use` and `tool_result`, 11906-11975 `error`): `init` names the
//! session (and the model, which a reading has no place for); `tool_use`
//! a call by the model's name for the tool (`mcp_SERVER_TOOL`) and its
//! `tool_id`; `tool_result` by that id its `status` (`success`, `error`)
//! and, for an error, the words the UI showed (`output`, the chat's
//! `resultDisplay`), read as the chat's are ([`crate::ended::gemini_ended`]).
//!
//! Qwen Code 0.15.10 (cli.js 502778-502806 `buildSystemMessage`,
//! 503545-503640 `emitToolResult`) and 0.24.4 (chunk-KYFJLESB.js 17559):
//! Claude-shaped lines. `system/init` names the session, the working
//! directory and Qwen's version (`qwen_code_version`, where Claude's has
//! `claude_code_version`), and its `mcp_servers` and `tools` are read as
//! the probe reads them ([`stream_json_init_reports`]); an `assistant`
//! line's `tool_use` items are calls (`mcp__SERVER__TOOL`, with the id); a
//! `user` line's `tool_result` items their outcome by id (`is_error`), a
//! refusal or a tool error told by Qwen's own words ([`qwen_denied`]).

use std::borrow::Cow;

use serde::Deserialize;
use tether_core::capability::CapabilityEvent;
use tether_core::model::{Evidence, Timestamp};
use tether_core::records::{RecordAnswer, RecordFile, RecordReading, name, project_of, version_of};
use tether_core::vocab::{EvidenceKind, ReasonCode};
use tether_sdk::materialize::stream_json_init_reports;
use tether_sdk::records::{
    answer, call, failed_with, mcp_double, outcome, push, refusal, skill_invoked,
};
use tether_sdk::telemetry::split_against;

use crate::ended::{
    Ended, Words, gemini_cancelled, gemini_failed_call, gemini_mcp_failure, gemini_model_api,
    gemini_no_such_tool, qwen_denied,
};
use crate::shape::{Obj, known_type, unreadable};

/// The role of a saved stream-json file, read by path only (either CLI).
pub const ROLE: &str = "stream_json";

/// A call's arguments as far as a skill's activation names its skill
/// (`name`: Gemini's `activate_skill`; `skill`: Qwen's `skill`); anything
/// else in them is payload, never read.
#[derive(Deserialize)]
#[serde(untagged)]
enum SkillArgs<'a> {
    Named(#[serde(borrow)] Obj<SkillNames<'a>>),
    Other(serde::de::IgnoredAny),
}

#[derive(Deserialize)]
struct SkillNames<'a> {
    #[serde(borrow, default)]
    name: Option<Words<'a>>,
    #[serde(borrow, default)]
    skill: Option<Words<'a>>,
}

impl SkillArgs<'_> {
    /// The skill named by `key` (`name` or `skill`), as a name.
    fn skill(&self, key: &str) -> Option<String> {
        let SkillArgs::Named(args) = self else {
            return None;
        };
        match key {
            "name" => args.name.as_ref().and_then(Words::text).and_then(name),
            "skill" => args.skill.as_ref().and_then(Words::text).and_then(name),
            _ => None,
        }
    }
}

/// A skill invoked by the model, by the call's id (its outcome is the
/// call's result, which names no skill).
fn skill_call(reading: &mut RecordReading, skill: Option<String>, id: Option<&str>, at: Timestamp) {
    if let Some(skill) = skill {
        push(
            reading,
            skill_invoked(CapabilityEvent::skill(&skill), id, at),
        );
    }
}

#[derive(Deserialize)]
struct GeminiLine<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    session_id: Option<Cow<'a, str>>,
    /// `tool_use`: the model's name for the tool.
    #[serde(borrow, default)]
    tool_name: Option<Cow<'a, str>>,
    /// `tool_use`, `tool_result`: the call's id.
    #[serde(borrow, default)]
    tool_id: Option<Cow<'a, str>>,
    /// `tool_use` of `activate_skill`: the skill's name only.
    #[serde(borrow, default)]
    parameters: Option<SkillArgs<'a>>,
    /// `tool_result`: `success` or `error`.
    #[serde(borrow, default)]
    status: Option<Cow<'a, str>>,
    /// `tool_result`: what the UI showed; scanned for an error only, never
    /// kept.
    #[serde(borrow, default)]
    output: Option<Words<'a>>,
    /// `tool_result`: an error's type; `error`: not read.
    #[serde(borrow, default)]
    error: Option<GeminiError<'a>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum GeminiError<'a> {
    Typed(#[serde(borrow)] Obj<TypedError<'a>>),
    Other(serde::de::IgnoredAny),
}

#[derive(Deserialize)]
struct TypedError<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Words<'a>>,
    /// The words sent back to the model: scanned for a cancelled call's
    /// reason or an MCP call's failure only, never kept.
    #[serde(borrow, default)]
    message: Option<Words<'a>>,
}

/// The tool Gemini CLI's model calls to activate a skill.
const GEMINI_SKILL: &str = "activate_skill";
/// The tool Qwen Code's model calls to load a skill.
const QWEN_SKILL: &str = "skill";

/// The kinds of line Gemini CLI 0.61.0 prints (core output/types.d.ts,
/// `JsonStreamEventType`).
const GEMINI_KNOWN: &[&str] = &[
    "init",
    "message",
    "tool_use",
    "tool_result",
    "error",
    "result",
];

/// `mcp_SERVER_TOOL` as its server and tool: split at a configured
/// server's name where exactly one fits, otherwise where the name has one
/// `_` after `mcp_` (both halves free to hold `_`, so nothing else is
/// certain). A name Gemini shortened (longer than 63 characters: its first
/// and last 30 joined by `...`, see `names::gemini`) names no whole tool.
pub(crate) fn gemini_split(full: &str, configured: &[String]) -> Option<(String, String)> {
    if full.contains("...") {
        return None;
    }
    let (server, tool) = match split_against(full, "mcp_", "_", configured) {
        Some((server, tool)) => (server, tool.to_owned()),
        None => {
            let rest = full.strip_prefix("mcp_")?;
            let (server, tool) = rest.split_once('_')?;
            if tool.contains('_') {
                return None;
            }
            (server.to_owned(), tool.to_owned())
        }
    };
    Some((name(&server)?, name(&tool)?))
}

/// The fields of one stream-json line the reader reads (never its
/// parameters, output or error message, but for the words scanned and
/// dropped).
#[derive(Debug, Default)]
pub(crate) struct StreamLine<'r> {
    /// `type`.
    pub kind: Option<&'r str>,
    /// `timestamp`.
    pub timestamp: Option<&'r str>,
    /// `init`: `session_id`.
    pub session_id: Option<&'r str>,
    /// `tool_use`: `tool_name`.
    pub tool_name: Option<&'r str>,
    /// `tool_use`, `tool_result`: `tool_id`.
    pub tool_id: Option<&'r str>,
    /// `tool_use` of `activate_skill`: `parameters.name`.
    pub skill: Option<&'r str>,
    /// `tool_result`: `status`.
    pub status: Option<&'r str>,
    /// `tool_result`: `output`, where it is words: scanned, never kept.
    pub output: Option<&'r str>,
    /// `tool_result`: `error.type`.
    pub error_type: Option<&'r str>,
    /// `tool_result`: `error.message`, where it is words: scanned, never
    /// kept.
    pub error_message: Option<&'r str>,
}

impl<'a> GeminiLine<'a> {
    fn fields(&'a self) -> StreamLine<'a> {
        let error = match &self.error {
            Some(GeminiError::Typed(e)) => Some(e),
            _ => None,
        };
        StreamLine {
            kind: self.kind.as_deref(),
            timestamp: self.timestamp.as_deref(),
            session_id: self.session_id.as_deref(),
            tool_name: self.tool_name.as_deref(),
            tool_id: self.tool_id.as_deref(),
            skill: match &self.parameters {
                Some(SkillArgs::Named(args)) => args.name.as_ref().and_then(Words::text),
                _ => None,
            },
            status: self.status.as_deref(),
            output: self.output.as_ref().and_then(Words::text),
            error_type: error.and_then(|e| e.kind.as_ref()).and_then(Words::text),
            error_message: error.and_then(|e| e.message.as_ref()).and_then(Words::text),
        }
    }
}

/// How a `tool_result` of status `error` ended: a tool Gemini does not
/// hold (`tool_not_registered`, "no such tool"); the server's `isError` or
/// the MCP SDK's error handed back as one (`mcp_tool_error`, its message
/// naming which); a cancelled call (its words `[Operation Cancelled] …`,
/// core scheduler/state-manager.js `toCancelled`, bundle chunk-5FZXKDXH.js
/// 344561) the user's no or unknown, as the chat's ([`gemini_cancelled`]);
/// otherwise by the words the UI showed, as the chat's
/// ([`gemini_failed_call`]).
fn gemini_error(line: &StreamLine<'_>) -> Ended {
    let (message, output) = (line.error_message, line.output);
    match line.error_type {
        Some("tool_not_registered") => return Ended::Refused(ReasonCode::ToolNotAvailable),
        Some("mcp_tool_error") => {
            return Ended::Failed(Some(
                message
                    .and_then(gemini_mcp_failure)
                    .unwrap_or(ReasonCode::ToolError),
            ));
        }
        _ => {}
    }
    if let Some(cancelled) = [message, output]
        .into_iter()
        .flatten()
        .find(|w| w.starts_with("[Operation Cancelled]"))
    {
        return gemini_cancelled(Some(cancelled));
    }
    gemini_failed_call(output, message)
}

/// One line of Gemini CLI's stream-json, the fast way.
pub(crate) fn gemini(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    match serde_json::from_str::<Obj<GeminiLine<'_>>>(record) {
        Ok(line) => gemini_line(file, &line.fields()),
        Err(e) => unreadable(record, &e, |v| known_type(v, GEMINI_KNOWN)),
    }
}

/// What one line's fields mean.
pub(crate) fn gemini_line(file: &RecordFile<'_>, line: &StreamLine<'_>) -> RecordAnswer {
    let Some(kind) = line.kind.filter(|k| GEMINI_KNOWN.contains(k)) else {
        return RecordAnswer::Unknown;
    };
    let at = line.timestamp.and_then(Timestamp::parse_rfc3339);
    let mut reading = RecordReading::default();
    reading.at = at;
    let when = at.unwrap_or(Timestamp(0));
    let id = line.tool_id;
    match kind {
        "init" => {
            // Every other line belongs to the session the init named.
            let Some(session) = line.session_id.and_then(name) else {
                return RecordAnswer::Unknown;
            };
            reading.session = Some(session);
        }
        "tool_use" => return tool_use(file, line, reading, when),
        "tool_result" => {
            let Some(id) = id else {
                return answer(reading);
            };
            let ended = match line.status {
                Some("success") => Ended::Succeeded,
                Some("error") => gemini_error(line),
                _ => Ended::Unknown,
            };
            reading.evidence.extend(match ended {
                Ended::Succeeded => outcome(id, true, when),
                Ended::Refused(reason) => refusal(id, reason, when),
                Ended::Failed(Some(reason)) => failed_with(id, reason, when),
                Ended::Failed(None) => outcome(id, false, when),
                Ended::Unknown => None,
            });
        }
        // The run's end: where its model API failed, why (report-level:
        // no server's), in Tether's words ([`gemini_model_api`]).
        "result" if line.status == Some("error") => {
            if let Some((code, words)) = line.error_message.and_then(gemini_model_api) {
                let ended = Evidence::new(EvidenceKind::ExplicitError, when);
                push(&mut reading, ended.reason(code, Some(words.to_owned())));
            }
        }
        // Warnings and errors in words (a hook's block among them): the
        // census says why not read.
        "error" => return RecordAnswer::not_read("error", at),
        _ => {}
    }
    answer(reading)
}

/// A `tool_use` line: a skill activated, an MCP call (`mcp_SERVER_TOOL`,
/// or an older release's `SERVER__TOOL`), or a built-in's call.
fn tool_use(
    file: &RecordFile<'_>,
    line: &StreamLine<'_>,
    mut reading: RecordReading,
    when: Timestamp,
) -> RecordAnswer {
    let id = line.tool_id;
    if line.tool_name == Some(GEMINI_SKILL) {
        skill_call(&mut reading, line.skill.and_then(name), id, when);
        return answer(reading);
    }
    let Some(full) = line.tool_name.filter(|n| n.starts_with("mcp_")) else {
        // 0.11-0.32 named an MCP tool bare, or `SERVER__TOOL` where two
        // servers shared it (core 0.31.0 tools/mcp-tool.js 175,
        // `asFullyQualifiedTool`): the latter read where a configured
        // server fits; a bare name is not told from a built-in's (the
        // census says so).
        if let Some((server, tool)) = line
            .tool_name
            .and_then(|n| split_against(n, "", "__", file.configured))
            && let (Some(server), Some(tool)) = (name(&server), name(tool))
        {
            push(&mut reading, call(&server, &tool, id, None, when));
        }
        return answer(reading);
    };
    let Some((server, tool)) = gemini_split(full, file.configured) else {
        // A name whose server and tool cannot be told apart.
        return RecordAnswer::not_read("tool_use:mcp_name_unsplit", reading.at);
    };
    push(&mut reading, call(&server, &tool, id, None, when));
    answer(reading)
}

#[derive(Deserialize)]
struct QwenLine<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    subtype: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    session_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    cwd: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    qwen_code_version: Option<Cow<'a, str>>,
    /// Claude Code's init: never Qwen's.
    #[serde(default)]
    claude_code_version: Option<serde::de::IgnoredAny>,
    #[serde(borrow, default)]
    message: Option<Obj<QwenMessage<'a>>>,
}

#[derive(Deserialize)]
struct QwenMessage<'a> {
    #[serde(borrow, default)]
    content: Option<QwenContent<'a>>,
}

/// A message's content: items, or words (never read).
#[derive(Deserialize)]
#[serde(untagged)]
enum QwenContent<'a> {
    Items(#[serde(borrow)] Vec<Obj<QwenItem<'a>>>),
    Other(serde::de::IgnoredAny),
}

#[derive(Deserialize)]
struct QwenItem<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    /// `tool_use`: the call's id and name (its `input` is payload).
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    /// `tool_use` of `skill`: the skill's name only.
    #[serde(borrow, default)]
    input: Option<SkillArgs<'a>>,
    /// `tool_result`: the call's id, whether it failed, and (scanned where
    /// it failed, never kept) Qwen's words for it.
    #[serde(borrow, default)]
    tool_use_id: Option<Cow<'a, str>>,
    #[serde(default)]
    is_error: Option<bool>,
    #[serde(borrow, default)]
    content: Option<Words<'a>>,
}

/// The kinds of line Qwen Code 0.15.10 and 0.24.4 print.
const QWEN_KNOWN: &[&str] = &["system", "assistant", "user", "result", "stream_event"];

/// How a call Qwen says failed (`is_error`) ended, by its words: the
/// server's `isError` ("MCP tool 'X' reported tool error …", 0.15.10 and
/// 0.24.4), a refusal ([`qwen_denied`]), or, in any other words (a hook's
/// own, which may have stopped the call after it ran, or an error of no
/// named kind the line does not tell apart), unknown.
fn qwen_failed(words: Option<&str>) -> Ended {
    let words = words.unwrap_or_default();
    // A tool Qwen does not hold: it reached no server.
    if gemini_no_such_tool(words) {
        return Ended::Refused(ReasonCode::ToolNotAvailable);
    }
    if words.starts_with("MCP tool '") && words.contains("' reported tool error") {
        return Ended::Failed(Some(ReasonCode::ToolError));
    }
    match qwen_denied(Some(words), false) {
        Ended::Refused(reason) => Ended::Refused(reason),
        _ => Ended::Unknown,
    }
}

/// One line of Qwen Code's stream-json.
pub(crate) fn qwen(record: &str) -> RecordAnswer {
    let line = match serde_json::from_str::<Obj<QwenLine<'_>>>(record) {
        Ok(line) => line,
        Err(e) => return unreadable(record, &e, |v| known_type(v, QWEN_KNOWN)),
    };
    let Some(kind) = line.kind.as_deref().filter(|k| QWEN_KNOWN.contains(k)) else {
        return RecordAnswer::Unknown;
    };
    let mut reading = RecordReading::of(line.session_id.as_deref().and_then(name));
    // Lines carry no time.
    let at = Timestamp(0);
    match (kind, line.subtype.as_deref()) {
        ("system", Some("init")) => {
            if line.claude_code_version.is_some() || line.qwen_code_version.is_none() {
                return RecordAnswer::Unknown;
            }
            reading.project = line.cwd.as_deref().and_then(project_of);
            reading.version = line.qwen_code_version.as_deref().and_then(version_of);
            for evidence in stream_json_init_reports(record, at) {
                push(&mut reading, evidence);
            }
        }
        ("assistant" | "user", _) => {
            let items = match line.message.as_ref().and_then(|m| m.content.as_ref()) {
                Some(QwenContent::Items(items)) => items.as_slice(),
                _ => &[],
            };
            for item in items {
                qwen_item(&mut reading, item, at);
            }
        }
        _ => {}
    }
    answer(reading)
}

/// One content item: an MCP call, or a call's result.
fn qwen_item(reading: &mut RecordReading, item: &QwenItem<'_>, at: Timestamp) {
    match item.kind.as_deref() {
        Some("tool_use") if item.name.as_deref() == Some(QWEN_SKILL) => {
            let skill = item.input.as_ref().and_then(|a| a.skill("skill"));
            skill_call(reading, skill, item.id.as_deref(), at);
        }
        Some("tool_use") => {
            if let Some((server, tool)) = item.name.as_deref().and_then(mcp_double) {
                push(reading, call(&server, &tool, item.id.as_deref(), None, at));
            }
        }
        Some("tool_result") => {
            let Some(id) = item.tool_use_id.as_deref() else {
                return;
            };
            let ended = match item.is_error {
                Some(false) => Ended::Succeeded,
                Some(true) => qwen_failed(item.content.as_ref().and_then(Words::text)),
                None => Ended::Unknown,
            };
            reading.evidence.extend(match ended {
                Ended::Succeeded => outcome(id, true, at),
                Ended::Refused(reason) => refusal(id, reason, at),
                Ended::Failed(Some(reason)) => failed_with(id, reason, at),
                Ended::Failed(None) => outcome(id, false, at),
                Ended::Unknown => None,
            });
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tether_core::model::Evidence;
    use tether_core::vocab::EvidenceKind;

    const PLANTED: &str = "planted-stream-secret-77";

    fn file(configured: &[String]) -> RecordFile<'_> {
        RecordFile {
            role: ROLE,
            segments: &[],
            session: None,
            configured,
        }
    }

    fn evidence(answer: RecordAnswer) -> Vec<Evidence> {
        match answer {
            RecordAnswer::Read(reading) => {
                assert!(!format!("{reading:?}").contains(PLANTED), "{reading:?}");
                reading.evidence
            }
            _ => Vec::new(),
        }
    }

    /// (kind, server, tool, id, ok, reason) of each piece.
    type Said = (
        EvidenceKind,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<bool>,
        Option<ReasonCode>,
    );

    fn said(answer: RecordAnswer) -> Vec<Said> {
        evidence(answer)
            .into_iter()
            .map(|e| {
                (
                    e.kind,
                    e.server,
                    e.tool,
                    e.connection_id,
                    e.ok,
                    e.reason_code,
                )
            })
            .collect()
    }

    fn ended(id: &str, kind: EvidenceKind, ok: Option<bool>, reason: Option<ReasonCode>) -> Said {
        (kind, None, None, Some(id.to_owned()), ok, reason)
    }

    /// A Gemini CLI 0.61.0 `tool_result` line, as
    /// tests/fixtures/records-by-path/gemini-0.61.0-*.stream.jsonl hold them.
    fn gemini_result(status: &str, output: &str, error_type: Option<&str>) -> String {
        let error = error_type.map_or(String::new(), |t| {
            format!(r#","error":{{"type":"{t}","message":"{output} {PLANTED}"}}"#)
        });
        format!(
            r#"{{"type":"tool_result","timestamp":"2026-12-03T19:07:56.951Z","tool_id":"t1","status":"{status}","output":"{output} {PLANTED}"{error}}}"#
        )
    }

    /// GIVEN Gemini CLI 0.61.0's `result` lines of real runs whose model
    /// API failed (a closed port; a 401 for the key, its body holding a
    /// planted secret) and a successful one WHEN read THEN each failure is
    /// one report-level error (no server) with Tether's reason and words,
    /// none of Gemini's or the API's; success says nothing.
    #[test]
    fn a_result_line_says_why_the_model_api_failed() {
        let f = file(&[]);
        let result = |status: &str, message: &str| {
            let error = json!({"type": "unknown", "message": message});
            json!({"type": "result", "timestamp": "2026-12-07T12:51:31.792Z", "status": status,
                "error": error, "stats": {"total_tokens": 0, "tool_calls": 0}})
            .to_string()
        };
        let body = json!({"error": {"code": 401, "message": PLANTED, "status": "UNAUTHENTICATED"}});
        for (line, want) in [
            (
                result(
                    "error",
                    "[API Error: exception TypeError: fetch failed sending request]",
                ),
                Some(ReasonCode::SessionRequestFailed),
            ),
            (
                result("error", &format!("[API Error: {body}]")),
                Some(ReasonCode::AuthRejected),
            ),
            (
                result("error", "[API Error: An unknown error occurred.]"),
                None,
            ),
            (
                result(
                    "success",
                    "[API Error: exception TypeError: fetch failed sending request]",
                ),
                None,
            ),
        ] {
            let answer = gemini(&f, &line);
            let shown = format!("{answer:?}");
            assert!(
                !shown.contains(PLANTED) && !shown.contains("API Error"),
                "{shown}"
            );
            let evidence = match &answer {
                RecordAnswer::Read(reading) => reading.evidence.clone(),
                _ => Vec::new(),
            };
            let errors: Vec<_> = evidence
                .iter()
                .map(|e| (e.kind.clone(), e.server.clone(), e.reason_code.clone()))
                .collect();
            match want {
                Some(code) => assert_eq!(
                    errors,
                    [(EvidenceKind::ExplicitError, None, Some(code))],
                    "{line}"
                ),
                None => assert!(errors.is_empty(), "{line}: {errors:?}"),
            }
        }
    }

    /// GIVEN Gemini CLI's lines WHEN read THEN the init names the session;
    /// a `tool_use` of `mcp_SERVER_TOOL` is a call with its id; each
    /// `tool_result` by that id is a success, a refusal for the reason its
    /// words give, a tool error, or (a hook's stop) unknown; an `error`
    /// line is known and not read. No parameter, output or word is kept.
    #[test]
    fn gemini_lines_read_as_calls_refusals_and_failures() {
        let f = file(&[]);
        let RecordAnswer::Read(init) = gemini(
            &f,
            r#"{"type":"init","timestamp":"2026-12-03T19:07:50.387Z","session_id":"e25455f2-fead-44fd-b33e-c402bccca1ea","model":"gemini-2.5-pro"}"#,
        ) else {
            panic!("init not read");
        };
        assert_eq!(
            init.session.as_deref(),
            Some("e25455f2-fead-44fd-b33e-c402bccca1ea")
        );
        assert_eq!(
            said(gemini(
                &f,
                &format!(
                    r#"{{"type":"tool_use","timestamp":"2026-12-03T19:07:50.527Z","tool_name":"mcp_count_stamp","tool_id":"t1","parameters":{{"timezone":"{PLANTED}"}}}}"#
                )
            )),
            [(
                EvidenceKind::ToolCallObserved,
                Some("count".to_owned()),
                Some("stamp".to_owned()),
                Some("t1".to_owned()),
                None,
                None
            )]
        );
        let observed = || EvidenceKind::ToolCallObserved;
        let refused = || EvidenceKind::ToolCallRefused;
        for (line, want) in [
            (
                gemini_result("success", "ok", None),
                vec![ended("t1", observed(), Some(true), None)],
            ),
            (
                gemini_result(
                    "error",
                    "Tool execution denied by policy.",
                    Some("policy_violation"),
                ),
                vec![ended(
                    "t1",
                    refused(),
                    None,
                    Some(ReasonCode::PermissionDenied),
                )],
            ),
            (
                gemini_result(
                    "error",
                    r#"Tool execution for \"stamp (count MCP Server)\" requires user confirmation, which is not supported in non-interactive mode."#,
                    Some("unhandled_exception"),
                ),
                vec![ended(
                    "t1",
                    refused(),
                    None,
                    Some(ReasonCode::ApprovalRequired),
                )],
            ),
            (
                gemini_result(
                    "error",
                    "Tool execution blocked: no",
                    Some("policy_violation"),
                ),
                vec![ended(
                    "t1",
                    refused(),
                    None,
                    Some(ReasonCode::BlockedByHook),
                )],
            ),
            (
                gemini_result(
                    "error",
                    "Error: MCP tool 'fail' reported an error.",
                    Some("mcp_tool_error"),
                ),
                vec![ended(
                    "t1",
                    observed(),
                    Some(false),
                    Some(ReasonCode::ToolError),
                )],
            ),
            (
                format!(
                    r#"{{"type":"tool_result","tool_id":"t1","status":"error","output":"{PLANTED}","error":{{"type":"TOOL_EXECUTION_ERROR","message":"[Operation Cancelled] Reason: User denied execution."}}}}"#
                ),
                vec![ended(
                    "t1",
                    refused(),
                    None,
                    Some(ReasonCode::PermissionDenied),
                )],
            ),
            (
                gemini_result("error", "[Operation Cancelled] Reason: aborted", None),
                vec![],
            ),
            (
                gemini_result(
                    "error",
                    "Agent execution stopped by hook: no",
                    Some("stop_execution"),
                ),
                vec![],
            ),
        ] {
            assert_eq!(said(gemini(&f, &line)), want, "{line}");
        }
        assert_eq!(
            gemini(
                &f,
                &format!(
                    r#"{{"type":"error","timestamp":"2026-12-03T19:07:56.951Z","severity":"warning","message":"Agent execution blocked: {PLANTED}"}}"#
                )
            ),
            RecordAnswer::not_read(
                "error",
                Timestamp::parse_rfc3339("2026-12-03T19:07:56.951Z")
            )
        );
        // Claude's and Qwen's lines are not Gemini's.
        assert_eq!(
            gemini(
                &f,
                r#"{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2.1.332"}"#
            ),
            RecordAnswer::Unknown
        );
    }

    /// GIVEN `mcp_SERVER_TOOL` names WHEN split THEN a configured server
    /// that alone fits decides; unconfigured, a name with one `_` after
    /// `mcp_` splits there, and one that could split two ways is not read
    /// (said as such), never guessed.
    #[test]
    fn gemini_names_split_only_where_certain() {
        let configured = vec!["my_srv".to_owned()];
        assert_eq!(
            gemini_split("mcp_my_srv_get_time", &configured),
            Some(("my_srv".to_owned(), "get_time".to_owned()))
        );
        assert_eq!(
            gemini_split("mcp_count_stamp", &[]),
            Some(("count".to_owned(), "stamp".to_owned()))
        );
        assert_eq!(gemini_split("mcp_my_srv_get_time", &[]), None);
        let shortened = "mcp_count_aaaaaaaaaaaaaaaaaaaaaaaa...aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        assert_eq!(gemini_split(shortened, &["count".to_owned()]), None);
        assert_eq!(
            gemini(
                &file(&[]),
                r#"{"type":"tool_use","tool_name":"mcp_my_srv_get_time","tool_id":"t2"}"#
            ),
            RecordAnswer::not_read("tool_use:mcp_name_unsplit", None)
        );
        // A skill activated: its name only.
        let skills: Vec<_> = evidence(gemini(
            &file(&[]),
            &format!(
                r#"{{"type":"tool_use","tool_name":"activate_skill","tool_id":"t4","parameters":{{"name":"pdf","why":"{PLANTED}"}}}}"#
            ),
        ))
        .into_iter()
        .map(|e| (e.kind, e.connection_id))
        .collect();
        assert_eq!(
            skills,
            [(EvidenceKind::SkillInvoked, Some("t4".to_owned()))]
        );
        // A built-in tool: no MCP call.
        assert!(
            said(gemini(
                &file(&[]),
                r#"{"type":"tool_use","tool_name":"read_file","tool_id":"t3"}"#
            ))
            .is_empty()
        );
        // 0.11-0.32: `SERVER__TOOL` (two servers sharing a tool) is the
        // configured server's call; a bare name is told from no built-in.
        let configured = ["count".to_owned()];
        let old = evidence(gemini(
            &file(&configured),
            r#"{"type":"tool_use","tool_name":"count__stamp","tool_id":"t5"}"#,
        ));
        assert_eq!(
            old.iter()
                .map(|e| (e.server.as_deref(), e.tool.as_deref()))
                .collect::<Vec<_>>(),
            [(Some("count"), Some("stamp"))]
        );
        assert!(
            said(gemini(
                &file(&[]),
                r#"{"type":"tool_use","tool_name":"count__stamp","tool_id":"t6"}"#
            ))
            .is_empty()
        );
    }

    /// A Qwen Code `user` line with one `tool_result`, as
    /// tests/fixtures/records-by-path/qwen-*.stream.jsonl hold them.
    fn qwen_result(is_error: bool, words: &str) -> String {
        format!(
            r#"{{"type":"user","uuid":"u","session_id":"s1","parent_tool_use_id":null,"message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"call_1","is_error":{is_error},"content":"{words} {PLANTED}"}}]}}}}"#
        )
    }

    /// GIVEN Qwen Code's lines (0.15.10 and 0.24.4 shapes) WHEN read THEN
    /// its init gives the version, the project and each server's status as
    /// the probe reads them; Claude's init is not Qwen's; a `tool_use` of
    /// `mcp__SERVER__TOOL` is a call; a `tool_result` by its id a success,
    /// a refusal for the reason Qwen's words give, a tool error, or (any
    /// other words) unknown.
    #[test]
    fn qwen_lines_read_as_the_probe_and_the_chat_read_them() {
        let init = format!(
            r#"{{"type":"system","subtype":"init","uuid":"s1","session_id":"s1","cwd":"/home/{PLANTED}/proj","tools":["mcp__count__stamp","tool_search"],"mcp_servers":[{{"name":"count","status":"connected"}}],"model":"{PLANTED}","permission_mode":"default","qwen_code_version":"0.15.10"}}"#
        );
        let RecordAnswer::Read(reading) = qwen(&init) else {
            panic!("init not read");
        };
        assert_eq!(reading.version.as_deref(), Some("0.15.10"));
        assert_eq!(reading.project.as_deref(), Some("proj"));
        assert_eq!(reading.session.as_deref(), Some("s1"));
        assert!(!format!("{reading:?}").contains(PLANTED));
        assert_eq!(
            reading.evidence,
            stream_json_init_reports(&init, Timestamp(0)),
            "the probe's reading"
        );
        assert!(
            reading
                .evidence
                .iter()
                .any(|e| e.kind == EvidenceKind::AgentReported
                    && e.server.as_deref() == Some("count"))
        );
        let claude = init.replace("qwen_code_version", "claude_code_version");
        assert_eq!(qwen(&claude), RecordAnswer::Unknown);
        assert_eq!(
            said(qwen(&format!(
                r#"{{"type":"assistant","session_id":"s1","message":{{"content":[{{"type":"tool_use","id":"call_1","name":"mcp__count__stamp","input":{{"timezone":"{PLANTED}"}}}},{{"type":"tool_use","id":"call_0","name":"tool_search","input":{{}}}}]}}}}"#
            ))),
            [(
                EvidenceKind::ToolCallObserved,
                Some("count".to_owned()),
                Some("stamp".to_owned()),
                Some("call_1".to_owned()),
                None,
                None
            )]
        );
        let skills: Vec<_> = evidence(qwen(&format!(
            r#"{{"type":"assistant","session_id":"s1","message":{{"content":[{{"type":"tool_use","id":"call_2","name":"skill","input":{{"skill":"pdf","args":"{PLANTED}"}}}}]}}}}"#
        )))
        .into_iter()
        .map(|e| (e.kind, e.connection_id))
        .collect();
        assert_eq!(
            skills,
            [(EvidenceKind::SkillInvoked, Some("call_2".to_owned()))]
        );
        let observed = || EvidenceKind::ToolCallObserved;
        let refused = || EvidenceKind::ToolCallRefused;
        for (line, want) in [
            (
                qwen_result(false, "ok"),
                vec![ended("call_1", observed(), Some(true), None)],
            ),
            (
                qwen_result(
                    true,
                    r#"Qwen Code requires permission to use \"mcp__count__stamp\", but that permission was declined (non-interactive mode cannot prompt for confirmation)."#,
                ),
                vec![ended(
                    "call_1",
                    refused(),
                    None,
                    Some(ReasonCode::ApprovalRequired),
                )],
            ),
            (
                qwen_result(
                    true,
                    r#"Qwen Code requires permission to use \"mcp__count__stamp\", but that permission was declined. Matching deny rule: \"mcp__count__stamp\"."#,
                ),
                vec![ended(
                    "call_1",
                    refused(),
                    None,
                    Some(ReasonCode::PermissionDenied),
                )],
            ),
            (
                qwen_result(
                    true,
                    "MCP tool 'fail' reported tool error for function call: {}",
                ),
                vec![ended(
                    "call_1",
                    observed(),
                    Some(false),
                    Some(ReasonCode::ToolError),
                )],
            ),
            (qwen_result(true, "a hook's own words"), vec![]),
        ] {
            assert_eq!(said(qwen(&line)), want, "{line}");
        }
        // Gemini's lines are not Qwen's.
        assert_eq!(
            qwen(r#"{"type":"init","session_id":"s","model":"m"}"#),
            RecordAnswer::Unknown
        );
    }
}
