//! Gemini CLI's and Qwen Code's own OpenTelemetry, read as evidence
//! (`tether collect`). The two share their telemetry code; only the
//! prefix (`gemini_cli.`, `qwen-code.`) and the tool naming differ.
//!
//! - `*.config` logs: `mcp_servers` (taken into the session) and, where
//!   discovery had finished (Qwen), `mcp_tools` (each server's listed
//!   tools, counted).
//! - `*.tool_call` logs of `tool_type` `mcp`: `mcp_server_name`,
//!   `function_name`, `success` (the record's `function_args` are never
//!   read).
//! - `llm_call` spans (Gemini): `gen_ai.tool.definitions`, the tools sent to
//!   the model, counted per configured server whose prefix fits uniquely.
//!
//! Neither says in its telemetry that a server failed or needs a login.

use tether_core::capability::CapabilityEvent;
use tether_core::telemetry::{TelemetryAnswer, TelemetryRecord, TelemetrySignal};
use tether_core::vocab::UseOutcome;
use tether_sdk::telemetry as t;

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
    let at = record.at;
    let event = record.name.strip_prefix(flavor.prefix());
    match (record.signal, event) {
        (TelemetrySignal::Log, Some("config")) => {
            let servers = record
                .attr("mcp_servers")
                .map(|v| v.names())
                .unwrap_or_default();
            for server in &servers {
                t::name_server(&mut reading, server, None);
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
        (TelemetrySignal::Log, Some("tool_call")) => {
            if t::text(record, "tool_type").as_deref() != Some("mcp") {
                return TelemetryAnswer::Ignored;
            }
            let Some(server) = t::text(record, "mcp_server_name") else {
                return TelemetryAnswer::Ignored;
            };
            let function = t::text(record, "function_name").unwrap_or_default();
            let tool = flavor
                .split(&function, std::slice::from_ref(&server))
                .map(|(_, tool)| tool)
                .unwrap_or(function);
            t::name_server(&mut reading, &server, None);
            // A call a policy denied or a hook blocked (Gemini's
            // `policy_violation`, `stop_execution`; Qwen's
            // `execution_denied`) never ran: no failure, its outcome
            // unknown here. A user's rejection is `decision: reject`.
            let refused = matches!(
                t::text(record, "error_type")
                    .or_else(|| t::text(record, "error.type"))
                    .as_deref(),
                Some("policy_violation" | "stop_execution" | "execution_denied")
            ) || t::text(record, "decision").as_deref() == Some("reject");
            let ok = t::flag(record, "success").filter(|_| !refused);
            reading
                .evidence
                .push(t::tool_called(&server, &tool, ok, at));
        }
        (TelemetrySignal::Log, Some("hook_call")) => {
            // One run of one hook: its name (its configured `name`, else
            // its command's basename), event, exit status and success.
            let Some(hook) =
                t::text(record, "hook_name").and_then(|n| tether_core::records::name(&n))
            else {
                return TelemetryAnswer::Ignored;
            };
            let event =
                t::text(record, "hook_event_name").and_then(|n| tether_core::records::name(&n));
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
                .push(tether_sdk::records::hook_fired(hook, None, at));
        }
        (TelemetrySignal::Log, Some("skill_launch")) => {
            // Qwen Code: the model loaded a skill, and whether it worked.
            let Some(skill) =
                t::text(record, "skill_name").and_then(|n| tether_core::records::name(&n))
            else {
                return TelemetryAnswer::Ignored;
            };
            let ended =
                tether_core::capability::outcome_of_ok(t::flag(record, "success") != Some(false));
            let skill = CapabilityEvent::skill(&skill).ended(ended, None);
            reading
                .evidence
                .push(tether_sdk::records::skill_invoked(skill, None, at));
        }
        (TelemetrySignal::Span, None) if record.name == "llm_call" => {
            let Some(definitions) = record.text("gen_ai.tool.definitions") else {
                return TelemetryAnswer::Ignored;
            };
            let names = declared_names(&definitions);
            let mut any = false;
            for server in configured {
                let count = names
                    .iter()
                    .filter_map(|n| flavor.split(n, configured))
                    .filter(|(s, _)| s == server)
                    .count();
                if count > 0 {
                    any = true;
                    t::name_server(&mut reading, server, None);
                    let count = u32::try_from(count).unwrap_or(u32::MAX);
                    reading.evidence.push(t::tools_visible(server, count, at));
                }
            }
            if !any {
                return TelemetryAnswer::Ignored;
            }
        }
        _ => return TelemetryAnswer::Ignored,
    }
    TelemetryAnswer::Read(reading)
}

/// The function names in `gen_ai.tool.definitions` (Gemini's
/// `[{functionDeclarations: [{name, …}]}]`, or a flat `[{name, …}]`); only
/// the names are read.
fn declared_names(definitions: &str) -> Vec<String> {
    let Ok(serde_json::Value::Array(items)) = serde_json::from_str(definitions) else {
        return Vec::new();
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
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_core::telemetry::TelemetryValue as V;

    fn tool_call(flavor: Flavor, extra: &[(&str, V)]) -> Option<bool> {
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
                reading
                    .evidence
                    .iter()
                    .find(|e| e.tool.is_some())
                    .expect("a call")
                    .ok
            }
            other => panic!("{other:?}"),
        }
    }

    /// GIVEN a `tool_call` event of a call that failed, of one a policy
    /// denied or a hook blocked (Gemini's `policy_violation`,
    /// `stop_execution`; Qwen's `execution_denied`) and of one the user
    /// rejected WHEN it is read THEN only the first is a failure; a refused
    /// call never ran, and its outcome is left unknown.
    #[test]
    fn a_refused_call_is_never_a_failure() {
        let failed = [("success", V::Bool(false))];
        assert_eq!(tool_call(Flavor::Gemini, &failed), Some(false));
        assert_eq!(
            tool_call(Flavor::Gemini, &[("success", V::Bool(true))]),
            Some(true)
        );
        for (flavor, error) in [
            (Flavor::Gemini, "policy_violation"),
            (Flavor::Gemini, "stop_execution"),
            (Flavor::Qwen, "execution_denied"),
        ] {
            let refused = [
                ("success", V::Bool(false)),
                ("error_type", V::Text(error.into())),
            ];
            assert_eq!(tool_call(flavor, &refused), None, "{error}");
        }
        let rejected = [
            ("success", V::Bool(false)),
            ("decision", V::Text("reject".into())),
        ];
        assert_eq!(tool_call(Flavor::Gemini, &rejected), None);
    }
}
