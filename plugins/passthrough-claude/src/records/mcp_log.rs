//! Claude Code's own log of each MCP server,
//! `~/.cache/claude-cli-nodejs/<cwd slug>/mcp-logs-<server>/<time>.jsonl`:
//! each record `{debug | error, timestamp, sessionId, cwd}`, the folder
//! naming the server. A connection's failure is read from Claude Code's
//! own words, in every release's wording (each seen in real runs of
//! 2.1.197 and 2.1.332 here, against a server of each kind, and in their
//! claude.exe): the reason as a code and a sentence of Tether's, never
//! the words (they hold paths, URLs and what the server answered).
//!
//! Claude Code's own health check writes these logs too: `claude mcp list`
//! ("Checking MCP server health…") connects to every configured server and
//! writes one log per server (`Starting connection …`, `Successfully
//! connected …`, `Connection established …`; 2.1.332 adds `Sending SIGINT
//! …` and `MCP server process exited cleanly`), each record naming a fresh
//! `sessionId`, and no transcript (seen in real runs of 2.1.197 and
//! 2.1.332 against `mcp-server-everything`). A `claude -p` run writes the
//! same log lines and its transcript under that session's id, even when it
//! then fails for want of a login. So the source is a
//! [`server_log`](tether_core::records::RecordSource::server_log) one: a
//! session only these logs show is a health check, never "the newest
//! session".

use std::borrow::Cow;

use serde::Deserialize;
use tether_core::model::Timestamp;
use tether_core::records::{RecordAnswer, RecordFile, RecordReading, name, project_of};
use tether_core::vocab::ReasonCode;
use tether_sdk::records::{call, name_server, visible, withheld};
use tether_sdk::telemetry::{failed, status};

use super::{ErrorWords, error_said};

/// What a row's summary says a reason came from.
fn said_by_log(why: &str) -> String {
    format!("Claude Code's MCP log for this server: {why}")
}

const OAUTH: &str = "it wants an OAuth login (run /mcp in Claude Code to log in)";

/// What Claude Code's words for a connection that failed say, as a reason
/// and a sentence; `None` for words that are not a failure, or that a
/// later line of the same log says better.
///
/// - `Server rejected the configured Authorization header (HTTP N)`
///   (2.1.197's `kMa`, 2.1.332's `AUTH_HEADER_REJECTED`; `… minted by the
///   configured headersHelper`, `… the session credential`, 2.1.332): the
///   token sent was refused.
/// - `Connection failed after Nms: WHY` (debug), `Connection failed: WHY`
///   (error, 2.1.197), `Connection failed (CODE): WHY` (2.1.332), where
///   WHY is `ENOENT: no such file or directory, posix_spawn '…'` or
///   `Executable not found in $PATH: "…"` (no command), `Unable to
///   connect. Is the computer able to access the url?` (2.1.197) or
///   `ECONNREFUSED: …` (2.1.332) (refused), `MCP server "S" connection
///   timed out after Nms` (`CONNECT_TIMEOUT`), `MCP error -32000:
///   Connection closed` (2.1.197) or `Connection closed`
///   (`CONNECTION_CLOSED`, 2.1.332): the process ended before it answered.
/// - `HTTP Connection failed after Nms: WHY (code: C, errno: E)` and the
///   same for SSE: left to the line after it (the rejected header,
///   `Authentication required`, or `Connection failed …`), which says
///   whether a token was sent.
pub(super) fn connect_failure(text: &str) -> Option<(ReasonCode, &'static str)> {
    const REJECTED: &str =
        "it refused the token sent (HTTP 401 or 403): check the token in the server's headers";
    if text.starts_with("Server rejected the ") {
        return Some((ReasonCode::AuthRejected, REJECTED));
    }
    // `HTTP Connection failed …` and `SSE …`: the line after it says why
    // in Claude Code's own terms (the rejected header, `Authentication
    // required`, or `Connection failed …` with the same words).
    if text.starts_with("HTTP ") || text.starts_with("SSE ") {
        return None;
    }
    let why = text.strip_prefix("Connection failed")?;
    let lower = why.to_ascii_lowercase();
    let has = |w: &str| lower.contains(w);
    if has("enoent") || has("executable not found") || has("no such file") {
        return Some((
            ReasonCode::CommandNotFound,
            "its command was not found (not on PATH, or no such file)",
        ));
    }
    if has("connectionrefused") || has("econnrefused") || has("unable to connect") {
        return Some((
            ReasonCode::ConnectionRefused,
            "nothing answered at its address (connection refused)",
        ));
    }
    if has("connect_timeout") || has("timed out") {
        return Some((
            ReasonCode::Timeout,
            "it did not answer before the harness's connection timeout (MCP_TIMEOUT)",
        ));
    }
    if has("connection closed") {
        return Some((
            ReasonCode::ServerExited,
            "it closed its connection before it answered (the server's process ended; its stderr is in the log)",
        ));
    }
    Some((ReasonCode::AgentReportedFailed, "its connection failed"))
}

/// One record of a server's log. Each field is read whatever its value
/// (`lenient`): another type is that field unread, noted, never the
/// record lost; the plain path (`plain::mcp_log`) builds the same from a
/// `serde_json::Value`.
#[derive(Deserialize)]
pub(super) struct LogLine<'a> {
    #[serde(borrow, default, deserialize_with = "super::lenient::text")]
    pub(super) debug: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "super::lenient::text")]
    pub(super) error: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "super::lenient::text")]
    pub(super) timestamp: Option<Cow<'a, str>>,
    #[serde(
        rename = "sessionId",
        borrow,
        default,
        deserialize_with = "super::lenient::text"
    )]
    pub(super) session: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "super::lenient::text")]
    pub(super) cwd: Option<Cow<'a, str>>,
}

/// The kind an unreadable log record is said as (the census's).
pub(super) const LOG_KIND: &str = "mcp_log";

/// The server whose log `file` is (its folder, `mcp-logs-SERVER`).
pub(super) fn server_of(file: &RecordFile<'_>) -> Option<String> {
    file.from_end(1)
        .and_then(|dir| dir.strip_prefix("mcp-logs-"))
        .and_then(name)
}

/// One record, the fast way: an object's (`read` sends any other line
/// the plain way, which says what it is).
pub(super) fn mcp_log(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    let Some(server) = server_of(file) else {
        return RecordAnswer::Unknown;
    };
    super::lenient::take_odd();
    let parsed = serde_json::from_str::<LogLine<'_>>(record);
    let odd = super::lenient::take_odd();
    match parsed {
        Ok(line) => log_line(&server, &line, odd),
        Err(error) => RecordAnswer::unparsed(&error, None),
    }
}

/// What one log record says (`odd`: a field of it was of another type):
/// the meanings the fast path and the plain one share.
pub(super) fn log_line(server: &str, line: &LogLine<'_>, odd: bool) -> RecordAnswer {
    let Some(text) = line.debug.as_deref().or(line.error.as_deref()) else {
        return if odd {
            RecordAnswer::Unparsed {
                why: tether_core::records::Unparsed::WrongType,
                kind: Some(LOG_KIND.to_owned()),
            }
        } else {
            RecordAnswer::Unknown
        };
    };
    let server = server.to_owned();
    let at = line
        .timestamp
        .as_deref()
        .and_then(Timestamp::parse_rfc3339)
        .unwrap_or(Timestamp(0));
    let mut reading = RecordReading::default();
    reading.session = line.session.as_deref().and_then(name);
    reading.at = (at.0 > 0).then_some(at);
    reading.project = line.cwd.as_deref().and_then(project_of);
    name_server(&mut reading, &server);
    if text.starts_with("Successfully connected") || text.starts_with("Connection established") {
        reading.evidence.push(status(&server, "connected", at));
    } else if text.starts_with("Authentication required") {
        // (2.1.197, 2.1.332: `Authentication required for HTTP server`,
        // after the OAuth discovery found a login to ask for.)
        let mut wanted = status(&server, "needs-auth", at);
        wanted.reason_code = Some(ReasonCode::OauthRequired);
        wanted.summary = Some(said_by_log(OAUTH));
        reading.evidence.push(wanted);
    } else if let Some((reason, why)) = connect_failure(text) {
        // The reason from the words, never the words (they hold paths,
        // URLs and what the server answered).
        reading
            .evidence
            .push(failed(&server, reason, Some(said_by_log(why)), at));
    } else if let Some(rest) = text.strip_prefix("Tool '") {
        let Some((tool, outcome)) = rest.split_once("' ") else {
            return RecordAnswer::Read(reading);
        };
        let ok = if outcome.starts_with("completed successfully") {
            true
        } else if outcome.starts_with("failed") {
            false
        } else {
            return RecordAnswer::Read(reading);
        };
        if let Some(tool) = name(tool) {
            let mut done = call(&server, &tool, None, Some(ok), at);
            // `failed after Ns: MCP error -N: …` (2.1.197): the server
            // answered with a JSON-RPC error.
            if !ok
                && outcome
                    .split_once(": ")
                    .and_then(|(_, words)| error_said(words))
                    == Some(ErrorWords::Failed(ReasonCode::ProtocolError))
            {
                done.reason_code = Some(ReasonCode::ProtocolError);
            }
            reading.evidence.push(done);
        }
    } else if let Some(tool) = text
        .strip_prefix("Skipping tool \"")
        .and_then(|rest| rest.split_once('"'))
        .filter(|(_, why)| why.contains("input schema"))
        .and_then(|(tool, _)| name(tool))
    {
        // Dropped for its input schema (a top-level oneOf, anyOf or
        // allOf); the words are not kept.
        reading.evidence.push(withheld(
            &server,
            &tool,
            tether_core::vocab::ReasonCode::SchemaUnsupported,
            at,
        ));
    } else if let Some(tool) = text.strip_prefix("Calling MCP tool: ").and_then(name) {
        // The model picked it: it was offered. The call is counted when
        // its outcome is written.
        reading.evidence.push(visible(&server, &tool, at));
    }
    // Anything else (an error's stack, a debug line) proves nothing more.
    RecordAnswer::Read(reading)
}
