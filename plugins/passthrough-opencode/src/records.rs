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
//! Tool calls are in OpenCode's SQLite database (`part` rows), not read
//! here.

use tether_core::model::Timestamp;
use tether_core::records::{
    RecordAnswer, RecordFile, RecordReading, RecordSource, name, project_of, version_of,
};
use tether_core::vocab::ReasonCode;
use tether_sdk::records::{answer, push};
use tether_sdk::telemetry::{failed, status};

/// Log files.
pub const LOG: &str = "log";

/// Where OpenCode writes its session records.
pub fn sources() -> Vec<RecordSource> {
    vec![
        RecordSource::lines(LOG, ".local/share/opencode", "log/*.log")
            .moved_by("XDG_DATA_HOME", "opencode"),
    ]
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

/// Reads one record.
pub fn read(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    if file.role != LOG {
        return RecordAnswer::Unknown;
    }
    let Some(at) = field(record, "timestamp").and_then(Timestamp::parse_rfc3339) else {
        return RecordAnswer::Unknown;
    };
    let mut reading = RecordReading {
        at: Some(at),
        thread: field(record, "run").and_then(name),
        ..RecordReading::default()
    };
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
