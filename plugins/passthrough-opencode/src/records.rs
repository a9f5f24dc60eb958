//! OpenCode's own session records, read as `tether sessions` reads them.
//! Verified on OpenCode 1.18.33 (the pinned CLI).
//!
//! Logs `~/.local/share/opencode/log/*.log` (`$XDG_DATA_HOME/opencode/log`),
//! `key=value` lines, several runs (`run=…`) interleaved:
//! - "created id=ses_…": the session a run made (its `directory`, and
//!   OpenCode's `version`);
//! - any line with `session.id=…`: that run's session;
//! - WARN "server unavailable" `key=SERVER status=failed|needs_auth`: the
//!   server failed (with no reason given) or wants a login, in the session
//!   of the line's run.
//!
//!
//! Database `~/.local/share/opencode/opencode.db` (SQLite, read from a
//! private snapshot by the host):
//! - `session` rows: each session's id, directory and OpenCode's version;
//! - `part` rows of type `tool`: the session, the tool (`SERVER_TOOL`:
//!   split only where exactly one configured server fits, never guessed),
//!   the call's id and its state (`completed`, `error`, a refusal with its
//!   reason, a protocol error: see [`TOOLS_QUERY`]). Only these columns
//!   are selected; the part's input, output and error words never leave
//!   the database.

use tether_core::capability::{CapabilityEvent, outcome_of_ok};
use tether_core::model::Timestamp;
use tether_core::records::{
    RecordAnswer, RecordFile, RecordReading, RecordSource, name, project_of, version_of,
};
use tether_core::vocab::ReasonCode;
use tether_sdk::records::{answer, call, plugin_failed, push, refused, skill_invoked};
use tether_sdk::telemetry::{failed, split_against, status};

/// Log files.
pub const LOG: &str = "log";
/// The database's sessions.
pub const DB_SESSIONS: &str = "db_session";
/// The database's tool parts.
pub const DB_TOOLS: &str = "db_tool";

/// The tools' query. A call OpenCode's permissions refused is stored as an
/// error (1.18.33's `PermissionDeniedError`, `PermissionRejectedError`,
/// `PermissionCorrectedError`), its words matched here so they never leave
/// the database; the fifth column says `refused:REASON` for it:
/// - "The user has specified a rule which prevents you from using this
///   specific tool call…": a rule's `deny` (`permission_denied`);
/// - "The user rejected permission to use this specific tool call." in a
///   session `opencode run` made (its session row's `permission` denies
///   `question`, which `run` sets and an interactive session does not):
///   `run` rejects every `ask` itself, no one to answer it
///   (`approval_required`);
/// - the same words elsewhere, or with a person's feedback: a person said
///   no (`permission_denied`).
///
/// A JSON-RPC error's "MCP error -N: …" is `protocol_error`. The
/// one-row `fallback` gives `permission` as NULL where a session row has no
/// such column (an older database), so the query never fails on it.
const TOOLS_QUERY: &str = "SELECT part.session_id, part.time_created, \
     json_extract(part.data, '$.tool'), json_extract(part.data, '$.callID'), \
     CASE WHEN json_extract(part.data, '$.state.status') = 'error' THEN CASE \
       WHEN json_extract(part.data, '$.state.error') LIKE 'The user has specified a rule which prevents you from using this specific tool call%' \
         THEN 'refused:permission_denied' \
       WHEN json_extract(part.data, '$.state.error') = 'The user rejected permission to use this specific tool call.' \
         AND EXISTS (SELECT 1 FROM json_each(COALESCE((SELECT CASE WHEN json_valid(permission) THEN permission END \
             FROM session WHERE session.id = part.session_id), '[]')) AS rule \
           WHERE json_extract(rule.value, '$.permission') = 'question' \
             AND json_extract(rule.value, '$.action') = 'deny') \
         THEN 'refused:approval_required' \
       WHEN json_extract(part.data, '$.state.error') LIKE 'The user rejected permission to use this specific tool call%' \
         THEN 'refused:permission_denied' \
       WHEN json_extract(part.data, '$.state.error') LIKE 'MCP error -%' THEN 'error:protocol_error' \
       ELSE 'error' END \
     ELSE json_extract(part.data, '$.state.status') END, \
     CASE WHEN json_extract(part.data, '$.tool') = 'skill' \
     THEN json_extract(part.data, '$.state.input.name') END \
     FROM part, (SELECT NULL AS permission) AS fallback \
     WHERE json_extract(part.data, '$.type') = 'tool'";

/// Where OpenCode writes its session records.
pub fn sources() -> Vec<RecordSource> {
    let data = |role: &str, pattern: &str| {
        RecordSource::lines(role, ".local/share/opencode", pattern)
            .moved_by("XDG_DATA_HOME", "opencode")
    };
    vec![
        data(LOG, "log/*.log"),
        data(DB_SESSIONS, "opencode.db")
            .sqlite("SELECT id, time_created, directory, version FROM session"),
        data(DB_TOOLS, "opencode.db").sqlite(TOOLS_QUERY),
    ]
}

type Row = (
    Option<String>,
    Option<i64>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

fn row(record: &str) -> Option<Row> {
    serde_json::from_str::<Row>(record)
        .ok()
        .or_else(|| {
            // Five columns (the tools' query before skills were read).
            serde_json::from_str::<(
                Option<String>,
                Option<i64>,
                Option<String>,
                Option<String>,
                Option<String>,
            )>(record)
            .ok()
            .map(|(a, b, c, d, e)| (a, b, c, d, e, None))
        })
        .or_else(|| {
            // Four columns (the sessions' query).
            serde_json::from_str::<(Option<String>, Option<i64>, Option<String>, Option<String>)>(
                record,
            )
            .ok()
            .map(|(a, b, c, d)| (a, b, c, d, None, None))
        })
}

/// The tool OpenCode's model calls to load a skill (its `name` the only
/// input the tools' query reads, for this tool alone).
const SKILL_TOOL: &str = "skill";

fn database(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    let Some((session, created, third, fourth, fifth, sixth)) = row(record) else {
        return RecordAnswer::Unknown;
    };
    let at = created.and_then(|ms| u64::try_from(ms).ok()).map(Timestamp);
    let mut reading = RecordReading::default();
    reading.session = session.as_deref().and_then(name);
    reading.at = at;
    let at = at.unwrap_or(Timestamp(0));
    match file.role {
        DB_SESSIONS => {
            reading.project = third.as_deref().and_then(project_of);
            reading.version = fourth.as_deref().and_then(version_of);
        }
        DB_TOOLS => {
            let Some(full) = third else {
                return RecordAnswer::Ignored;
            };
            // The call's outcome, where its part says (running: not yet);
            // a call its permissions refused never ran: a refusal.
            let (ok, reason, refused_for) = match fifth.as_deref() {
                Some("completed") => (Some(true), None, None),
                Some("error") => (Some(false), None, None),
                Some("error:protocol_error") => {
                    (Some(false), Some(ReasonCode::ProtocolError), None)
                }
                Some("refused:approval_required") => {
                    (None, None, Some(ReasonCode::ApprovalRequired))
                }
                // `refused:permission_denied`, and `refused` (the query
                // before reasons were told apart).
                Some(word) if word.starts_with("refused") => {
                    (None, None, Some(ReasonCode::PermissionDenied))
                }
                _ => (None, None, None),
            };
            if full == SKILL_TOOL {
                if let Some(skill) = sixth.as_deref().and_then(name) {
                    let mut skill = CapabilityEvent::skill(&skill);
                    if let Some(ok) = ok {
                        skill = skill.ended(outcome_of_ok(ok), None);
                    }
                    push(&mut reading, skill_invoked(skill, fourth.as_deref(), at));
                }
                return answer(reading);
            }
            // Native tools (`bash`, `read`) fit no configured server.
            let Some((server, tool)) = split_against(&full, "", "_", file.configured) else {
                return answer(reading);
            };
            let Some(tool) = name(tool) else {
                return answer(reading);
            };
            let id = fourth.as_deref();
            let evidence = match refused_for {
                Some(why) => refused(&server, &tool, id, why, at),
                None => {
                    let mut made = call(&server, &tool, id, ok, at);
                    made.reason_code = reason;
                    made
                }
            };
            push(&mut reading, evidence);
        }
        _ => return RecordAnswer::Unknown,
    }
    answer(reading)
}

/// One `key=value` (or `key="quoted value"`) field of a log line.
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let mut rest = line;
    loop {
        let i = rest.find(key)?;
        let before_ok = i == 0 || rest.as_bytes()[i - 1] == b' ';
        let after = &rest[i + key.len()..];
        if before_ok && let Some(value) = after.strip_prefix('=') {
            return Some(match value.strip_prefix('"') {
                Some(quoted) => quoted.split('"').next().unwrap_or_default(),
                None => value.split(' ').next().unwrap_or_default(),
            });
        }
        rest = after;
    }
}

/// A plugin's name from the path OpenCode logs for it: a file's stem
/// (`file:///…/plugin/bad.js` → `bad`, as the inventory names it), or an
/// npm package's name without its version.
fn plugin_name(path: &str) -> Option<String> {
    let last = path.trim_end_matches('/').rsplit('/').next()?;
    let stem = match path.starts_with("file:") {
        true => last.rsplit_once('.').map_or(last, |(stem, _)| stem),
        false => last.split('@').find(|p| !p.is_empty()).unwrap_or(last),
    };
    name(stem)
}

/// Reads one record.
pub fn read(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    if file.role == DB_SESSIONS || file.role == DB_TOOLS {
        return database(file, record);
    }
    if file.role != LOG {
        return RecordAnswer::Unknown;
    }
    let Some(at) = field(record, "timestamp").and_then(Timestamp::parse_rfc3339) else {
        return RecordAnswer::Unknown;
    };
    let mut reading = RecordReading::default();
    reading.at = Some(at);
    reading.thread = field(record, "run").and_then(name);
    let message = field(record, "message").unwrap_or_default();
    if message == "created" {
        reading.session = field(record, "id")
            .and_then(name)
            .filter(|id| id.starts_with("ses_"));
        reading.project = field(record, "directory").and_then(project_of);
        reading.version = field(record, "version").and_then(version_of);
    } else if let Some(session) = field(record, "session.id").and_then(name) {
        reading.session = Some(session);
    }
    if message == "failed to load plugin"
        && let Some(plugin) = field(record, "path").and_then(plugin_name)
        && let Some(failed) = plugin_failed(&plugin, field(record, "error").unwrap_or(""), at)
    {
        push(&mut reading, failed);
    }
    if message == "server unavailable"
        && let Some(server) = field(record, "key").and_then(name)
    {
        match field(record, "status") {
            Some("needs_auth") => push(&mut reading, status(&server, "needs-auth", at)),
            Some("failed") => push(
                &mut reading,
                failed(&server, ReasonCode::AgentReportedFailed, None, at),
            ),
            _ => {}
        }
    }
    answer(reading)
}

#[cfg(test)]
mod tests {
    use super::field;

    #[test]
    fn fields_are_read_by_whole_key() {
        let line = r#"timestamp=2026-12-01T20:53:29.043Z level=WARN run=f42 message="server unavailable" key=broken type=local status=failed"#;
        assert_eq!(field(line, "message"), Some("server unavailable"));
        assert_eq!(field(line, "key"), Some("broken"));
        assert_eq!(field(line, "status"), Some("failed"));
        assert_eq!(field(line, "run"), Some("f42"));
        assert_eq!(field("session.id=ses_1 id=x", "id"), Some("x"));
    }
}
