//! Gemini CLI's and Qwen Code's own OpenTelemetry, read as evidence
//! (`tether collect`). The two share their telemetry code; only the
//! prefix (`gemini_cli.`, `qwen-code.`) and the tool naming differ.
//!
//! - `*.config` logs: `mcp_servers` (taken into the session) and, where
//!   discovery had finished (Qwen), `mcp_tools` (each server's listed
//!   tools, counted).
//! - `*.tool_call` logs of `tool_type` `mcp`: `mcp_server_name`,
//!   `function_name`, `success` (the record's `function_args` are never
//!   read); `error_type` and the error's words (scanned, never kept) tell
//!   a refusal (`tool_call_refused`: a policy's deny rule, a BeforeTool or
//!   PreToolUse hook's block, an approval no one could give in a `-p` run,
//!   a user's `decision: reject`) from a tool error (`mcp_tool_error`) and
//!   from a hook's stop, whose outcome is unknown.
//! - `llm_call` spans (Gemini): `gen_ai.tool.definitions`, the tools sent to
//!   the model, counted per configured server whose prefix fits uniquely.
//!
//! Neither says in its telemetry that a server failed or needs a login.

use tether_core::capability::CapabilityEvent;
use tether_core::records::Unparsed;
use tether_core::telemetry::{TelemetryAnswer, TelemetryReading, TelemetryRecord, TelemetrySignal};
use tether_core::vocab::{Provenance, ReasonCode, UseOutcome};
use tether_sdk::telemetry as t;

use crate::ended::{Ended, gemini_ended, gemini_mcp_failure, qwen_denied};

/// Which of the two harnesses a reader is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// Gemini CLI (`gemini-cli`).
    Gemini,
    /// Qwen Code (`qwen-code`).
    Qwen,
}

impl Flavor {
    fn service(self) -> &'static str {
        match self {
            Flavor::Gemini => "gemini-cli",
            Flavor::Qwen => "qwen-code",
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            Flavor::Gemini => "gemini_cli.",
            Flavor::Qwen => "qwen-code.",
        }
    }

    /// `(server, tool)` of a tool name as this harness spells it.
    fn split(self, name: &str, configured: &[String]) -> Option<(String, String)> {
        if let Some((server, tool)) = t::split_mcp_double(name) {
            return Some((server.to_owned(), tool.to_owned()));
        }
        t::split_against(name, "mcp_", "_", configured).map(|(s, tool)| (s, tool.to_owned()))
    }
}

/// Reads one record (see the module docs).
pub fn read(flavor: Flavor, record: &TelemetryRecord, configured: &[String]) -> TelemetryAnswer {
    if record.service() != flavor.service() {
        return TelemetryAnswer::NotMine;
    }
    let session =
        t::text(record, "session.id").or_else(|| t::text(record, "gen_ai.conversation.id"));
    let mut reading = t::reading(session);
    let event = record.name.strip_prefix(flavor.prefix());
    let read = match (record.signal, event) {
        (TelemetrySignal::Log, Some("config")) => {
            config(&mut reading, flavor, record);
            Some(())
        }
        (TelemetrySignal::Log, Some("tool_call")) => tool_call(&mut reading, flavor, record),
        (TelemetrySignal::Log, Some("hook_call")) => hook_call(&mut reading, record),
        (TelemetrySignal::Log, Some("skill_launch")) => skill_launch(&mut reading, record),
        (TelemetrySignal::Span, None) if record.name == "llm_call" => {
            match llm_call(&mut reading, flavor, record, configured) {
                Ok(read) => read,
                // A cut list is not "no tools offered": said unparsed.
                // The session its envelope names is kept: where it is counted.
                Err(why) => {
                    return TelemetryAnswer::unparsed("llm_call", TOOL_DEFINITIONS, why)
                        .in_session(reading.session.take());
                }
            }
        }
        _ => None,
    };
    match read {
        Some(()) => TelemetryAnswer::Read(reading),
        None => TelemetryAnswer::Ignored,
    }
}

/// `config`: the servers configured, the extensions loaded, and how many
/// tools each server lists.
fn config(reading: &mut TelemetryReading, flavor: Flavor, record: &TelemetryRecord) {
    let at = record.at;
    let servers = record
        .attr("mcp_servers")
        .map(|v| v.names())
        .unwrap_or_default();
    for server in &servers {
        t::name_server(reading, server, None);
        reading.evidence.push(t::taken(server, at));
    }
    // The extensions it loaded (one that failed to load is only
    // a warning on its stderr).
    for extension in record
        .attr("extensions")
        .map(|v| v.names())
        .unwrap_or_default()
    {
        if let Some(loaded) = tether_sdk::records::plugin_loaded(&extension, at) {
            reading.evidence.push(loaded);
        }
    }
    let tools = record
        .attr("mcp_tools")
        .map(|v| v.names())
        .unwrap_or_default();
    for server in &servers {
        let count = tools
            .iter()
            .filter_map(|tool| flavor.split(tool, &servers))
            .filter(|(s, _)| s == server)
            .count();
        if count > 0 {
            let count = u32::try_from(count).unwrap_or(u32::MAX);
            reading.evidence.push(t::listed(server, Some(count), at));
        }
    }
}

/// `tool_call`: a call of an MCP server's tool and how it ended; `None`
/// where no server is named.
fn tool_call(
    reading: &mut TelemetryReading,
    flavor: Flavor,
    record: &TelemetryRecord,
) -> Option<()> {
    let at = record.at;
    let function = t::text(record, "function_name").unwrap_or_default();
    // Qwen 0.15 logs a call its rules denied as `native`, without
    // its server: its `mcp__SERVER__TOOL` name still says both.
    let server = match t::text(record, "tool_type").as_deref() {
        Some("mcp") => t::text(record, "mcp_server_name"),
        _ if flavor == Flavor::Qwen => t::split_mcp_double(&function).map(|(s, _)| s.to_owned()),
        _ => None,
    }?;
    let tool = flavor
        .split(&function, std::slice::from_ref(&server))
        .map(|(_, tool)| tool)
        .unwrap_or(function);
    t::name_server(reading, &server, None);
    let evidence = match call_ended(flavor, record) {
        Ended::Refused(reason) => tether_sdk::records::refused(&server, &tool, None, reason, at)
            .provenance(Provenance::HarnessTelemetry),
        Ended::Failed(reason) => {
            let mut failed = t::tool_called(&server, &tool, Some(false), at);
            failed.reason_code = reason;
            failed
        }
        Ended::Succeeded => t::tool_called(&server, &tool, Some(true), at),
        Ended::Unknown => t::tool_called(&server, &tool, None, at),
    };
    reading.evidence.push(evidence);
    Some(())
}

/// How a `tool_call` ended, by its error type, the harness's words for the
/// error (scanned, never kept), the user's decision and its success.
fn call_ended(flavor: Flavor, record: &TelemetryRecord) -> Ended {
    let error_type = t::text(record, "error_type").or_else(|| t::text(record, "error.type"));
    // The harness's words for the error: scanned, never kept.
    let words = t::text(record, "error").or_else(|| t::text(record, "error.message"));
    match (error_type.as_deref(), flavor) {
        // A policy's deny rule or a BeforeTool hook's block
        // (Gemini), told apart by their words.
        (Some("policy_violation"), _) => gemini_ended(words.as_deref()),
        // A rule, a hook or a missing approval (Qwen).
        (Some("execution_denied"), _) => qwen_denied(
            words.as_deref(),
            t::text(record, "execution_status").as_deref() == Some("not_started"),
        ),
        // An ask rule in a `-p` run (Gemini).
        (Some("unhandled_exception"), Flavor::Gemini) => match gemini_ended(words.as_deref()) {
            refused @ Ended::Refused(_) => refused,
            _ => Ended::Failed(None),
        },
        // A hook's stop, before the call or after it ran.
        (Some("stop_execution"), _) => Ended::Unknown,
        // The server's `isError`, or (Gemini 0.30 on) the MCP SDK's error
        // handed back as one: a timeout, a closed connection, a JSON-RPC
        // error ([`gemini_mcp_failure`]).
        (Some("mcp_tool_error"), _) => Ended::Failed(Some(
            words
                .as_deref()
                .and_then(gemini_mcp_failure)
                .unwrap_or(ReasonCode::ToolError),
        )),
        // A tool Gemini does not hold: it reached no server.
        (Some("tool_not_registered"), Flavor::Gemini) => {
            Ended::Refused(ReasonCode::ToolNotAvailable)
        }
        _ if t::text(record, "decision").as_deref() == Some("reject") => {
            // The user said no at the prompt.
            Ended::Refused(ReasonCode::PermissionDenied)
        }
        _ => match t::flag(record, "success") {
            Some(true) => Ended::Succeeded,
            Some(false) => Ended::Failed(None),
            None => Ended::Unknown,
        },
    }
}

/// `hook_call`: one run of one hook: its name (its configured `name`, else
/// its command's basename), event, exit status and success; `None` where
/// it has no name.
fn hook_call(reading: &mut TelemetryReading, record: &TelemetryRecord) -> Option<()> {
    let hook = t::text(record, "hook_name").and_then(|n| tether_core::records::name(&n))?;
    let event = t::text(record, "hook_event_name").and_then(|n| tether_core::records::name(&n));
    let code = record
        .attr("exit_code")
        .and_then(|v| v.text())
        .and_then(|v| v.parse::<i32>().ok());
    let ended = match (t::flag(record, "success"), code) {
        (_, Some(code)) => tether_core::capability::outcome_of_exit(code, Some(2)),
        (Some(true), None) => UseOutcome::Succeeded,
        _ => UseOutcome::Failed,
    };
    let hook = CapabilityEvent::hook(&hook, event.as_deref()).ended(ended, code);
    reading
        .evidence
        .push(tether_sdk::records::hook_fired(hook, None, record.at));
    Some(())
}

/// `skill_launch` (Qwen Code): the model loaded a skill, and whether it
/// worked; `None` where it has no name.
fn skill_launch(reading: &mut TelemetryReading, record: &TelemetryRecord) -> Option<()> {
    let skill = t::text(record, "skill_name").and_then(|n| tether_core::records::name(&n))?;
    let ended = tether_core::capability::outcome_of_ok(t::flag(record, "success") != Some(false));
    let skill = CapabilityEvent::skill(&skill).ended(ended, None);
    reading
        .evidence
        .push(tether_sdk::records::skill_invoked(skill, None, record.at));
    Some(())
}

/// The `llm_call` span's attribute naming the tools sent to the model
/// (Gemini CLI 0.61.0, bundle/chunk-JDPZ4CE3.js: `[GEN_AI_TOOL_DEFINITIONS]:
/// safeJsonStringify(req.config?.tools ?? [])`).
const TOOL_DEFINITIONS: &str = "gen_ai.tool.definitions";

/// An `llm_call` span: how many of each configured server's tools the
/// model was sent; `Ok(None)` where it names none, `Err` where its list
/// could not be parsed (an attribute length limit cuts it short).
fn llm_call(
    reading: &mut TelemetryReading,
    flavor: Flavor,
    record: &TelemetryRecord,
    configured: &[String],
) -> Result<Option<()>, Unparsed> {
    let Some(definitions) = record.text(TOOL_DEFINITIONS) else {
        return Ok(None);
    };
    let names = declared_names(&definitions)?;
    let mut any = false;
    for server in configured {
        let count = names
            .iter()
            .filter_map(|n| flavor.split(n, configured))
            .filter(|(s, _)| s == server)
            .count();
        if count > 0 {
            any = true;
            t::name_server(reading, server, None);
            let count = u32::try_from(count).unwrap_or(u32::MAX);
            reading
                .evidence
                .push(t::tools_visible(server, count, record.at));
        }
    }
    Ok(any.then_some(()))
}

/// The function names in `gen_ai.tool.definitions` (Gemini's
/// `[{functionDeclarations: [{name, …}]}]`, or a flat `[{name, …}]`); only
/// the names are read. `Err` where it is not JSON, or not a list.
fn declared_names(definitions: &str) -> Result<Vec<String>, Unparsed> {
    let value = serde_json::from_str(definitions).map_err(|e| Unparsed::of(&e))?;
    let serde_json::Value::Array(items) = value else {
        return Err(Unparsed::WrongType);
    };
    let mut names = Vec::new();
    for item in &items {
        if let Some(decls) = item.get("functionDeclarations").and_then(|d| d.as_array()) {
            names.extend(
                decls
                    .iter()
                    .filter_map(|d| d.get("name")?.as_str().map(str::to_owned)),
            );
        } else if let Some(name) = item.get("name").and_then(|n| n.as_str()) {
            names.push(name.to_owned());
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_core::telemetry::TelemetryValue as V;

    /// An `llm_call` span of Gemini CLI 0.61.0, as recorded in
    /// tests/fixtures/telemetry (that run's span carried no tool list).
    fn llm_call_span() -> TelemetryRecord {
        include_str!("../../../tests/fixtures/telemetry/gemini.jsonl")
            .lines()
            .filter_map(|l| serde_json::from_str::<TelemetryRecord>(l).ok())
            .find(|r| r.name == "llm_call")
            .expect("the fixture holds an llm_call span")
    }

    /// GIVEN that span with `gen_ai.tool.definitions` as 0.61.0 writes it
    /// (`safeJsonStringify(req.config?.tools ?? [])`: one
    /// `functionDeclarations` list, a planted secret in a description) and
    /// then the same text cut short as an attribute length limit cuts it,
    /// and not JSON WHEN read THEN the whole one counts `time`'s two tools,
    /// and the cut and the text are said unparsed with why (never "no tools
    /// offered"), the answer carrying none of the attribute's text.
    #[test]
    fn a_cut_tool_list_is_said_unparsed_never_no_tools() {
        use tether_core::vocab::EvidenceKind;
        let configured = ["time".to_owned()];
        let whole = serde_json::json!([{"functionDeclarations": [
            {"name": "mcp_time_get_current_time",
             "description": "sk-PLANTEDSECRET0123456789", "parameters": {}},
            {"name": "mcp_time_convert_time", "parameters": {}},
            {"name": "read_file", "parameters": {}}]}])
        .to_string();
        let with = |v: &str| llm_call_span().with_attr(TOOL_DEFINITIONS, V::Text(v.to_owned()));
        let TelemetryAnswer::Read(reading) = read(Flavor::Gemini, &with(&whole), &configured)
        else {
            panic!("the whole list reads");
        };
        let listed = reading
            .evidence
            .iter()
            .find(|e| e.kind == EvidenceKind::AgentReported)
            .expect("tools visible");
        assert_eq!(listed.server.as_deref(), Some("time"));
        assert_eq!(listed.tool_count, Some(2));
        assert!(!format!("{reading:?}").contains("PLANTED"), "{reading:?}");
        let cut = &whole[..whole.len() / 2];
        for (value, why) in [
            (cut, Unparsed::CutShort),
            ("sk-PLANTEDSECRET0123456789", Unparsed::NotJson),
            (
                r#"{"name":"sk-PLANTEDSECRET0123456789"}"#,
                Unparsed::WrongType,
            ),
        ] {
            let answer = read(Flavor::Gemini, &with(value), &configured);
            // The session its envelope names is kept, to count it on.
            assert_eq!(
                answer,
                TelemetryAnswer::unparsed("llm_call", TOOL_DEFINITIONS, why)
                    .in_session(reading.session.clone())
            );
            let text = format!(
                "{answer:?} {}",
                serde_json::to_string(&answer).expect("json")
            );
            assert!(!text.contains("PLANTED"), "{text}");
        }
        // No tool list at all stays what it was: nothing to read.
        assert_eq!(
            read(Flavor::Gemini, &llm_call_span(), &configured),
            TelemetryAnswer::Ignored
        );
    }

    /// (kind, ok, reason) of the one call a `tool_call` event gives.
    fn tool_call(
        flavor: Flavor,
        extra: &[(&str, V)],
    ) -> (
        tether_core::vocab::EvidenceKind,
        Option<bool>,
        Option<ReasonCode>,
    ) {
        let mut record = TelemetryRecord::new(
            TelemetrySignal::Log,
            format!("{}tool_call", flavor.prefix()),
            tether_core::model::Timestamp(1),
        )
        .with_resource("service.name", V::Text(flavor.service().into()))
        .with_attr("tool_type", V::Text("mcp".into()))
        .with_attr("mcp_server_name", V::Text("time".into()))
        .with_attr("function_name", V::Text("get_current_time".into()));
        for (k, v) in extra {
            record = record.with_attr(*k, v.clone());
        }
        match read(flavor, &record, &[]) {
            TelemetryAnswer::Read(reading) => {
                let call = reading
                    .evidence
                    .iter()
                    .find(|e| e.tool.is_some())
                    .expect("a call");
                assert!(!format!("{reading:?}").contains("planted"), "{reading:?}");
                (call.kind.clone(), call.ok, call.reason_code.clone())
            }
            other => panic!("{other:?}"),
        }
    }

    /// GIVEN `tool_call` events as Gemini CLI 0.61 and Qwen Code 0.15 and
    /// 0.24 wrote them in real runs (a success, a tool error, a policy's
    /// deny, a BeforeTool or PreToolUse hook's block with a planted reason,
    /// an ask rule in a `-p` run, a user's reject, a hook's stop) WHEN each
    /// is read THEN a refusal is `tool_call_refused` with its reason, a tool
    /// error a failure with `tool_error`, a hook's stop unknown, and no
    /// words of the error reach the reading.
    #[test]
    fn refusals_failures_and_stops_read_apart() {
        use tether_core::vocab::EvidenceKind::{
            ToolCallObserved as Observed, ToolCallRefused as Refused,
        };
        let text = |s: &str| V::Text(s.into());
        let no = ("success", V::Bool(false));
        let cases: Vec<(Flavor, Vec<(&str, V)>, _)> = vec![
            (
                Flavor::Gemini,
                vec![("success", V::Bool(true))],
                (Observed, Some(true), None),
            ),
            (
                Flavor::Gemini,
                vec![
                    no.clone(),
                    ("error_type", text("mcp_tool_error")),
                    ("error", text("MCP tool 'x' reported tool error planted")),
                ],
                (Observed, Some(false), Some(ReasonCode::ToolError)),
            ),
            (
                Flavor::Gemini,
                vec![
                    no.clone(),
                    ("error_type", text("policy_violation")),
                    ("error", text("Tool execution denied by policy. planted")),
                ],
                (Refused, None, Some(ReasonCode::PermissionDenied)),
            ),
            (
                Flavor::Gemini,
                vec![
                    no.clone(),
                    ("error_type", text("policy_violation")),
                    ("error", text("Tool execution blocked: planted")),
                ],
                (Refused, None, Some(ReasonCode::BlockedByHook)),
            ),
            (
                Flavor::Gemini,
                vec![
                    no.clone(),
                    ("error_type", text("unhandled_exception")),
                    (
                        "error",
                        text(
                            "Tool execution for \"stamp (count MCP Server)\" requires user confirmation, which is not supported in non-interactive mode.",
                        ),
                    ),
                ],
                (Refused, None, Some(ReasonCode::ApprovalRequired)),
            ),
            (
                Flavor::Gemini,
                vec![
                    no.clone(),
                    ("error_type", text("stop_execution")),
                    ("error", text("planted")),
                ],
                (Observed, None, None),
            ),
            (
                Flavor::Gemini,
                vec![no.clone(), ("decision", text("reject"))],
                (Refused, None, Some(ReasonCode::PermissionDenied)),
            ),
            (
                Flavor::Qwen,
                vec![
                    no.clone(),
                    ("error_type", text("execution_denied")),
                    (
                        "error",
                        text(
                            "Qwen Code requires permission to use \"mcp__time__get_current_time\", but that permission was declined (non-interactive mode cannot prompt for confirmation).",
                        ),
                    ),
                ],
                (Refused, None, Some(ReasonCode::ApprovalRequired)),
            ),
            (
                Flavor::Qwen,
                vec![
                    no.clone(),
                    ("error_type", text("execution_denied")),
                    (
                        "error",
                        text(
                            "Qwen Code requires permission to use \"mcp__time__get_current_time\", but that permission was declined. Matching deny rule: \"planted\".",
                        ),
                    ),
                ],
                (Refused, None, Some(ReasonCode::PermissionDenied)),
            ),
            (
                Flavor::Qwen,
                vec![
                    no.clone(),
                    ("error_type", text("execution_denied")),
                    ("error", text("planted")),
                    ("execution_status", text("not_started")),
                ],
                (Refused, None, Some(ReasonCode::BlockedByHook)),
            ),
            (
                Flavor::Qwen,
                vec![
                    no.clone(),
                    ("error_type", text("execution_denied")),
                    ("error", text("planted")),
                ],
                (Observed, None, None),
            ),
        ];
        for (flavor, extra, want) in cases {
            assert_eq!(tool_call(flavor, &extra), want, "{flavor:?} {extra:?}");
        }
    }

    /// GIVEN Qwen Code 0.15's `tool_call` of a call its rules denied, as
    /// it logs it (`tool_type` native, no server) WHEN it is read THEN the
    /// refusal is its server's and tool's, named by `mcp__SERVER__TOOL`.
    #[test]
    fn qwen_names_a_denied_call_by_its_name() {
        let record = TelemetryRecord::new(
            TelemetrySignal::Log,
            "qwen-code.tool_call".to_owned(),
            tether_core::model::Timestamp(1),
        )
        .with_resource("service.name", V::Text("qwen-code".into()))
        .with_attr("tool_type", V::Text("native".into()))
        .with_attr("function_name", V::Text("mcp__count__stamp".into()))
        .with_attr("error_type", V::Text("execution_denied".into()))
        .with_attr("error", V::Text("Qwen Code requires permission to use \"mcp__count__stamp\", but that permission was declined.".into()));
        let TelemetryAnswer::Read(reading) = read(Flavor::Qwen, &record, &[]) else {
            panic!("not read");
        };
        let refused = &reading.evidence[0];
        assert_eq!(
            (
                refused.server.as_deref(),
                refused.tool.as_deref(),
                refused.reason_code.clone()
            ),
            (
                Some("count"),
                Some("stamp"),
                Some(ReasonCode::PermissionDenied)
            )
        );
    }
}
