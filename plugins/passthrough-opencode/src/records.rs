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
//!   reason, a protocol error: see `tools_query`). Only these columns
//!   are selected; the part's input, output and error words never leave
//!   the database.
//!
//! What `opencode run --format json` printed, saved to a file: read by
//! path only (`stream_json`, see the `stream_json` module), its tool parts
//! ended by the same words as the database's (the `parts` module, which
//! both use).

use tether_core::model::Timestamp;
use tether_core::records::{
    RecordAnswer, RecordFile, RecordReading, RecordSource, name, project_of, version_of,
};
use tether_core::vocab::ReasonCode;
use tether_sdk::records::{answer, plugin_failed, push};
use tether_sdk::telemetry::{failed, status};

use crate::parts::{
    DENIED_BY_RULE, FAILED_IN_PROTOCOL, PROTOCOL_ERROR, REFUSED_BY_RULE, REFUSED_BY_RUN, REJECTED,
    ToolPart, tool_part,
};

/// Log files.
pub const LOG: &str = "log";
/// The database's sessions.
pub const DB_SESSIONS: &str = "db_session";
/// The database's tool parts.
pub const DB_TOOLS: &str = "db_tool";
/// What `opencode run --format json` printed, saved to a file: read by
/// path only (the `stream_json` module).
pub const STREAM_JSON: &str = crate::stream_json::ROLE;

/// The tools' query: [`crate::parts::error_word`]'s words matched inside it, so they
/// never leave the database; its fifth column says how the call ended
/// (`completed`, `error`, `refused:REASON`, `error:protocol_error`). A
/// session `opencode run` made is one whose session row's `permission`
/// denies `question` (which `run` sets and an interactive session does
/// not). The one-row `fallback` gives `permission` as NULL where a session
/// row has no such column (an older database), so the query never fails on
/// it.
fn tools_query() -> String {
    format!(
        "SELECT part.session_id, part.time_created, \
     json_extract(part.data, '$.tool'), json_extract(part.data, '$.callID'), \
     CASE WHEN json_extract(part.data, '$.state.status') = 'error' THEN CASE \
       WHEN json_extract(part.data, '$.state.error') LIKE '{DENIED_BY_RULE}%' \
         THEN '{REFUSED_BY_RULE}' \
       WHEN json_extract(part.data, '$.state.error') = '{REJECTED}.' \
         AND EXISTS (SELECT 1 FROM json_each(COALESCE((SELECT CASE WHEN json_valid(permission) THEN permission END \
             FROM session WHERE session.id = part.session_id), '[]')) AS rule \
           WHERE json_extract(rule.value, '$.permission') = 'question' \
             AND json_extract(rule.value, '$.action') = 'deny') \
         THEN '{REFUSED_BY_RUN}' \
       WHEN json_extract(part.data, '$.state.error') LIKE '{REJECTED}%' \
         THEN '{REFUSED_BY_RULE}' \
       WHEN json_extract(part.data, '$.state.error') LIKE '{PROTOCOL_ERROR}%' THEN '{FAILED_IN_PROTOCOL}' \
       ELSE 'error' END \
     ELSE json_extract(part.data, '$.state.status') END, \
     CASE WHEN json_extract(part.data, '$.tool') = 'skill' \
     THEN json_extract(part.data, '$.state.input.name') END \
     FROM part, (SELECT NULL AS permission) AS fallback \
     WHERE json_extract(part.data, '$.type') = 'tool'"
    )
}

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
        data(DB_TOOLS, "opencode.db").sqlite(tools_query()),
        RecordSource::by_path(STREAM_JSON),
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
            let call = ToolPart {
                tool: &full,
                call_id: fourth.as_deref(),
                ended: fifth.as_deref(),
                skill: sixth.as_deref(),
            };
            tool_part(&mut reading, &call, file.configured, at);
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
    if file.role == STREAM_JSON {
        return crate::stream_json::read(file, record);
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
