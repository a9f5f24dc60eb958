//! Copilot CLI's own session records, read as `tether sessions` reads
//! them. Verified on Copilot CLI 1.0.102 (the pinned CLI).
//!
//! - Session events `~/.copilot/session-state/<session>/events.jsonl`:
//!   `session.start` (its `cwd`, Copilot's version); `tool.execution_start`
//!   (`toolCallId`, `mcpServerName`, `mcpToolName`) and
//!   `tool.execution_complete` (`toolCallId`, `success`); `hook.end`
//!   (one run of an event's hooks: `hookType`, `success`, and the exit
//!   status its error names); `skill.invoked` (the skill's `name` and
//!   `pluginName`). The server
//!   status events Copilot prints with `--output-format json` are not
//!   saved here.
//! - Process logs `~/.copilot/logs/process-*.log`: "Workspace initialized:
//!   <session>" names the session the lines after it belong to; "MCP
//!   server connection failed {"server_name":…}" (failed; a missing
//!   command said as such) and "reporting the server as needing auth
//!   {"server":…}" (needs auth).

use std::borrow::Cow;

use serde::Deserialize;
use tether_core::capability::{CapabilityEvent, outcome_of_exit};
use tether_core::model::Timestamp;
use tether_core::records::{
    RecordAnswer, RecordFile, RecordReading, RecordSource, name, project_of, version_of,
};
use tether_core::vocab::UseOutcome;
use tether_sdk::records::{answer, call, failure, hook_fired, outcome, push, skill_invoked};
use tether_sdk::telemetry::status;

/// Session event files.
pub const EVENTS: &str = "events";
/// Process logs.
pub const PROCESS_LOG: &str = "process_log";

/// Where Copilot CLI writes its session records.
pub fn sources() -> Vec<RecordSource> {
    vec![
        RecordSource::lines(EVENTS, ".copilot", "session-state/*/events.jsonl"),
        RecordSource::lines(PROCESS_LOG, ".copilot", "logs/process-*.log"),
    ]
}

/// Reads one record.
pub fn read(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    match file.role {
        EVENTS => event(file, record),
        PROCESS_LOG => process_log(record),
        _ => RecordAnswer::Unknown,
    }
}

#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    /// The event's own id: one skill invocation's identity.
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    data: Option<Data<'a>>,
}

#[derive(Deserialize)]
struct Data<'a> {
    #[serde(rename = "copilotVersion", borrow, default)]
    version: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    context: Option<Context<'a>>,
    #[serde(rename = "toolCallId", borrow, default)]
    call: Option<Cow<'a, str>>,
    #[serde(rename = "mcpServerName", borrow, default)]
    server: Option<Cow<'a, str>>,
    #[serde(rename = "mcpToolName", borrow, default)]
    tool: Option<Cow<'a, str>>,
    #[serde(default)]
    success: Option<bool>,
    /// `hook.end`: one run of an event's hooks.
    #[serde(rename = "hookInvocationId", borrow, default)]
    hook_run: Option<Cow<'a, str>>,
    #[serde(rename = "hookType", borrow, default)]
    hook_type: Option<Cow<'a, str>>,
    /// `hook.end`: its error, whose message is read for its exit status
    /// only (`failed with code 127`), never kept.
    #[serde(borrow, default)]
    error: Option<ErrorData<'a>>,
    /// `skill.invoked`: the skill's name and its plugin's (its content,
    /// description and path are never read).
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(rename = "pluginName", borrow, default)]
    plugin: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct ErrorData<'a> {
    #[serde(borrow, default)]
    message: Option<Cow<'a, str>>,
}

/// The exit status a hook error's message gives (`… failed with code 3`).
fn exit_code_in(message: &str) -> Option<i32> {
    let (_, rest) = message.split_once("with code ")?;
    rest.split(|c: char| !c.is_ascii_digit() && c != '-')
        .next()?
        .parse()
        .ok()
}

#[derive(Deserialize)]
struct Context<'a> {
    #[serde(borrow, default)]
    cwd: Option<Cow<'a, str>>,
}

/// Event families a session's events hold.
const FAMILIES: &[&str] = &[
    "session.",
    "user.",
    "assistant.",
    "system.",
    "tool.",
    "hook.",
    "subagent.",
    "skill.",
    "abort",
];

fn event(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    let Ok(event) = serde_json::from_str::<Event<'_>>(record) else {
        return RecordAnswer::Unknown;
    };
    if !FAMILIES.iter().any(|f| event.kind.starts_with(f)) {
        return RecordAnswer::Unknown;
    }
    let at = event
        .timestamp
        .as_deref()
        .and_then(Timestamp::parse_rfc3339);
    // The directory is the session.
    let mut reading = RecordReading::default();
    reading.session = file.from_end(1).and_then(name);
    reading.at = at;
    let at = at.unwrap_or(Timestamp(0));
    let Some(data) = event.data else {
        return answer(reading);
    };
    match event.kind.as_ref() {
        "session.start" => {
            reading.version = data.version.as_deref().and_then(version_of);
            reading.project = data
                .context
                .as_ref()
                .and_then(|c| c.cwd.as_deref())
                .and_then(project_of);
        }
        "tool.execution_start" => {
            if let (Some(server), Some(tool)) = (
                data.server.as_deref().and_then(name),
                data.tool.as_deref().and_then(name),
            ) {
                push(
                    &mut reading,
                    call(&server, &tool, data.call.as_deref(), None, at),
                );
            }
        }
        "hook.end" => {
            // One run of all of an event's hooks: Copilot records the run,
            // not each command, and a failure's status is the one it names.
            if let Some(kind) = data.hook_type.as_deref().and_then(name) {
                let code = data
                    .error
                    .as_ref()
                    .and_then(|e| e.message.as_deref())
                    .and_then(exit_code_in);
                let ended = match (data.success, code) {
                    (Some(true), _) => UseOutcome::Succeeded,
                    (_, Some(code)) => outcome_of_exit(code, None),
                    _ => UseOutcome::Failed,
                };
                let hook = CapabilityEvent::hook(&kind, Some(&kind)).ended(ended, code);
                push(&mut reading, hook_fired(hook, data.hook_run.as_deref(), at));
            }
        }
        "skill.invoked" => {
            if let Some(skill) = data.name.as_deref().and_then(name) {
                let mut skill = CapabilityEvent::skill(&skill);
                if let Some(plugin) = data.plugin.as_deref().and_then(name) {
                    skill = skill.in_plugin(&plugin);
                }
                let skill = skill.ended(UseOutcome::Succeeded, None);
                push(&mut reading, skill_invoked(skill, event.id.as_deref(), at));
            }
        }
        "tool.execution_complete"
            if data.success == Some(false)
                && let Some(skill) = data
                    .error
                    .as_ref()
                    .and_then(|e| e.message.as_deref())
                    .and_then(|m| m.strip_prefix("Skill not found: "))
                    .and_then(|m| name(m.trim())) =>
        {
            // The model asked for a skill Copilot does not have: a failed
            // invocation, named by Copilot's own message (nothing else of
            // it kept). A loaded skill is `skill.invoked`'s.
            let skill = CapabilityEvent::skill(&skill).ended(UseOutcome::Failed, None);
            push(&mut reading, skill_invoked(skill, data.call.as_deref(), at));
        }
        "tool.execution_complete" => {
            if let (Some(id), Some(ok)) = (data.call.as_deref(), data.success)
                && let Some(done) = outcome(id, ok, at)
            {
                reading.evidence.push(done);
            }
        }
        _ => {}
    }
    answer(reading)
}

#[derive(Deserialize)]
struct Fields<'a> {
    #[serde(borrow, default)]
    server_name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    server: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    raw_error: Option<Cow<'a, str>>,
}

fn process_log(record: &str) -> RecordAnswer {
    // `2026-12-01T20:53:23.309Z [LEVEL] [module] message {json}`
    let Some((stamp, rest)) = record.split_once(' ') else {
        return RecordAnswer::Ignored;
    };
    let Some(at) = Timestamp::parse_rfc3339(stamp) else {
        // A continuation line (a stack, a wrapped message).
        return RecordAnswer::Ignored;
    };
    let mut reading = RecordReading::default();
    reading.at = Some(at);
    if let Some(id) = rest.split_once("Workspace initialized: ").map(|x| x.1) {
        reading.session = id.split_whitespace().next().and_then(name);
        return answer(reading);
    }
    let fields = || {
        rest.find(" {")
            .and_then(|i| serde_json::from_str::<Fields<'_>>(&rest[i + 1..]).ok())
    };
    if rest.contains("MCP server connection failed")
        && let Some(f) = fields()
        && let Some(server) = f.server_name.as_deref().and_then(name)
    {
        push(
            &mut reading,
            failure(&server, f.raw_error.as_deref().unwrap_or_default(), at),
        );
    } else if rest.contains("reporting the server as needing auth")
        && let Some(f) = fields()
        && let Some(server) = f.server.as_deref().and_then(name)
    {
        push(&mut reading, status(&server, "needs-auth", at));
    }
    answer(reading)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_one(record: &str) -> RecordReading {
        let segments = vec![
            "session-state".to_owned(),
            "s1".to_owned(),
            "events.jsonl".to_owned(),
        ];
        let file = RecordFile {
            role: EVENTS,
            segments: &segments,
            session: None,
            configured: &[],
        };
        match read(&file, record) {
            RecordAnswer::Read(reading) => reading,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn hook_runs_and_skills_read_names_and_exit_codes_only() {
        let hook = read_one(
            r#"{"type":"hook.end","timestamp":"2026-12-03T02:00:00.466Z","data":{"hookInvocationId":"h1","hookType":"sessionStart","success":false,"error":{"message":"Error: Hook command failed with code 127\nStderr: /home/me/secret-token-x: No such file","source":"global settings"}}}"#,
        );
        let cap = hook.evidence[0].capability.as_deref().expect("a hook");
        assert_eq!(cap.name, "sessionStart");
        assert_eq!(cap.outcome, Some(UseOutcome::CommandNotFound));
        assert_eq!(cap.exit_code, Some(127));
        assert!(!format!("{hook:?}").contains("secret-token"));
        let loaded = read_one(
            r#"{"type":"skill.invoked","id":"e1","timestamp":"2026-12-03T02:00:09.700Z","data":{"name":"greet","path":"/home/me/x/SKILL.md","content":"planted body","pluginName":"demo","description":"planted prose"}}"#,
        );
        let cap = loaded.evidence[0].capability.as_deref().expect("a skill");
        assert_eq!(
            (cap.name.as_str(), cap.plugin.as_deref()),
            ("greet", Some("demo"))
        );
        assert!(!format!("{loaded:?}").contains("planted"));
        let missing = read_one(
            r#"{"type":"tool.execution_complete","timestamp":"2026-12-03T02:00:09.700Z","data":{"toolCallId":"call_1","success":false,"error":{"message":"Skill not found: demo:greet","code":"failure"}}}"#,
        );
        let cap = missing.evidence[0].capability.as_deref().expect("a skill");
        assert_eq!(cap.name, "demo:greet");
        assert_eq!(cap.outcome, Some(UseOutcome::Failed));
    }
}
