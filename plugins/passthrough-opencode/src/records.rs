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
//!   of the line's run;
//! - ERROR "process" `error="Cannot connect to API: …"`: the turn ended
//!   with its model API not reached (refused, not resolved, dropped).
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

use tether_core::model::{Evidence, Timestamp};
use tether_core::records::{
    RecordAnswer, RecordFile, RecordReading, RecordSource, Unparsed, name, project_of, version_of,
};
use tether_core::vocab::{EvidenceKind, ReasonCode};
use tether_sdk::records::{answer, plugin_failed, push};
use tether_sdk::telemetry::{failed, status};

use crate::parts::{
    ERROR_WORDS, INVALID_TOOL, REFUSED_BY_RUN, REFUSED_UNAVAILABLE, REJECTED, SKILL_TOOL, ToolPart,
    UNAVAILABLE, tool_part,
};

/// Log files.
pub const LOG: &str = "log";
/// The database's sessions.
pub const DB_SESSIONS: &str = "db_session";
/// The database's tool parts.
pub const DB_TOOLS: &str = "db_tool";
/// The database's assistant messages that ended in an error (the turn's
/// own end, written before the run exits: the log can lose its last lines).
pub const DB_ERRORS: &str = "db_message_error";
/// What `opencode run --format json` printed, saved to a file: read by
/// path only (the `stream_json` module).
pub const STREAM_JSON: &str = crate::stream_json::ROLE;

/// The tools' query: [`crate::parts::error_word`]'s words matched inside
/// it (case and all, `instr`), so they never leave the database; its fifth
/// column says how the call ended (`completed`, `error`, `refused:REASON`,
/// `error:REASON`), its sixth the name its input gives for two tools (the
/// skill's, the tool asked for of `invalid`). A session `opencode run` made
/// is one whose session row's `permission` denies `question` (which `run`
/// sets and an interactive session does not). The one-row `fallback` gives
/// `permission` as NULL where a session row has no such column (an older
/// database), so the query never fails on it.
fn tools_query() -> String {
    let error = "json_extract(part.data, '$.state.error')";
    let input = |key: &str| format!("json_extract(part.data, '$.state.input.{key}')");
    let words: String = ERROR_WORDS
        .iter()
        .map(|(words, prefix, word)| match prefix {
            true => format!("WHEN instr({error}, '{words}') = 1 THEN '{word}' "),
            false => format!("WHEN {error} = '{words}' THEN '{word}' "),
        })
        .collect();
    format!(
        "SELECT part.session_id, part.time_created, \
     json_extract(part.data, '$.tool'), json_extract(part.data, '$.callID'), \
     CASE WHEN json_extract(part.data, '$.tool') = '{INVALID_TOOL}' \
         AND instr({unavailable}, '{UNAVAILABLE}') = 1 THEN '{REFUSED_UNAVAILABLE}' \
     WHEN json_extract(part.data, '$.state.status') = 'error' THEN CASE \
       WHEN {error} = '{REJECTED}.' \
         AND EXISTS (SELECT 1 FROM json_each(COALESCE((SELECT CASE WHEN json_valid(permission) THEN permission END \
             FROM session WHERE session.id = part.session_id), '[]')) AS rule \
           WHERE json_extract(rule.value, '$.permission') = 'question' \
             AND json_extract(rule.value, '$.action') = 'deny') \
         THEN '{REFUSED_BY_RUN}' \
       {words}ELSE 'error' END \
     ELSE json_extract(part.data, '$.state.status') END, \
     CASE json_extract(part.data, '$.tool') WHEN '{SKILL_TOOL}' THEN {skill} \
       WHEN '{INVALID_TOOL}' THEN {asked} END \
     FROM part, (SELECT NULL AS permission) AS fallback \
     WHERE json_extract(part.data, '$.type') = 'tool'",
        unavailable = input("error"),
        skill = input("name"),
        asked = input("tool"),
    )
}

/// The errors' query: each assistant message that ended in an error, its
/// session and time, the error's name, a word for its cause and the
/// message's provider id. The word, told apart inside the query so no
/// word of OpenCode's leaves the database: a [`MODEL_API`] reason's where
/// the error's message begins with one of their words, else
/// [`CREDENTIALS_REFUSED`] where its HTTP status (`APIError`'s
/// `statusCode`) is 401 or 403. A row whose `data` is not JSON is passed
/// over.
fn errors_query() -> String {
    let said = "json_extract(data, '$.error.data.message')";
    let words: String = MODEL_API
        .iter()
        .map(|(cause, reason, _)| {
            format!(
                "WHEN instr({said}, '{API}{}') = 1 THEN '{reason}' ",
                cause.replace('\'', "''")
            )
        })
        .collect();
    format!(
        "SELECT session_id, time_created, json_extract(data, '$.error.name'), \
     CASE {words}\
     WHEN json_extract(data, '$.error.data.statusCode') IN (401, 403) THEN '{CREDENTIALS_REFUSED}' END, \
     json_extract(data, '$.providerID') \
     FROM message WHERE json_valid(data) \
     AND json_extract(data, '$.role') = 'assistant' \
     AND json_type(data, '$.error') = 'object'"
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
        data(DB_ERRORS, "opencode.db").sqlite(errors_query()),
        RecordSource::by_path(STREAM_JSON),
    ]
}

/// A database row as the readers take it: session, time, then the query's
/// other columns (the sessions' query has four, the tools' six).
pub(crate) type Row = (
    Option<String>,
    Option<i64>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// The fast path's row: typed tuples, six columns, then five (the tools'
/// query before skills were read), then four (the sessions' query). A row
/// none fits is named, never an unknown kind: its why, its role.
fn row(record: &str) -> Result<Row, Unparsed> {
    serde_json::from_str::<Row>(record)
        .ok()
        .or_else(|| {
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
            serde_json::from_str::<(Option<String>, Option<i64>, Option<String>, Option<String>)>(
                record,
            )
            .ok()
            .map(|(a, b, c, d)| (a, b, c, d, None, None))
        })
        .ok_or_else(|| Unparsed::json(record).unwrap_or(Unparsed::WrongType))
}

fn database(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    match row(record) {
        Ok(row) => database_row(file, row),
        Err(why) => RecordAnswer::Unparsed {
            why,
            kind: Some(file.role.to_owned()),
        },
    }
}

/// What one database row says, however it was taken from its record
/// (the fast path's tuples, or `plain::row`).
pub(crate) fn database_row(file: &RecordFile<'_>, row: Row) -> RecordAnswer {
    let (session, created, third, fourth, fifth, sixth) = row;
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
                named: sixth.as_deref(),
            };
            tool_part(&mut reading, &call, file.configured, at);
        }
        DB_ERRORS => {
            if let Some((reason, words)) =
                turn_error(third.as_deref(), fourth.as_deref(), fifth.as_deref())
            {
                run_ended(&mut reading, at, reason, words);
            }
        }
        _ => return RecordAnswer::Unknown,
    }
    answer(reading)
}

/// One `key=value` (or `key="quoted value"`, a `\` before any character
/// inside the quotes taking it as it is: OpenCode 1.18.33 writes a `"` in
/// a value as `\"`) field of a log line: the first field of that key,
/// the line walked field by field so a key inside a quoted value is never
/// taken for one (`plain::log` splits the whole line instead).
fn field<'a>(line: &'a str, key: &str) -> Option<std::borrow::Cow<'a, str>> {
    let mut rest = line;
    loop {
        rest = rest.trim_start_matches(' ');
        if rest.is_empty() {
            return None;
        }
        let end = rest.find([' ', '=']).unwrap_or(rest.len());
        let (this, after) = rest.split_at(end);
        let Some(value) = after.strip_prefix('=') else {
            rest = after;
            continue;
        };
        let (value, next) = field_value(value);
        if this == key {
            return Some(value);
        }
        rest = next;
    }
}

/// A field's value at the start of `text` (quoted or not) and what
/// follows it.
pub(crate) fn field_value(text: &str) -> (std::borrow::Cow<'_, str>, &str) {
    let Some(quoted) = text.strip_prefix('"') else {
        let end = text.find(' ').unwrap_or(text.len());
        return (std::borrow::Cow::Borrowed(&text[..end]), &text[end..]);
    };
    let mut out = String::new();
    let mut chars = quoted.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' if out.is_empty() => return (quoted[..i].into(), &quoted[i + 1..]),
            '"' => return (out.into(), &quoted[i + 1..]),
            '\\' => {
                if out.is_empty() {
                    out.push_str(&quoted[..i]);
                }
                if let Some((_, escaped)) = chars.next() {
                    out.push(escaped);
                }
            }
            c if !out.is_empty() => out.push(c),
            _ => {}
        }
    }
    // No closing quote: the rest of the line.
    match out.is_empty() {
        true => (quoted.into(), ""),
        false => (out.into(), ""),
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
    if file.role == DB_SESSIONS || file.role == DB_TOOLS || file.role == DB_ERRORS {
        return database(file, record);
    }
    if file.role == STREAM_JSON {
        return crate::stream_json::read(file, record);
    }
    if file.role != LOG {
        return RecordAnswer::Unknown;
    }
    log_line(&|key| field(record, key))
}

/// What one log line says, its fields looked up by `field` (the fast
/// path's scan, or `plain::log`'s whole-line split).
pub(crate) fn log_line<'r>(
    field: &dyn Fn(&str) -> Option<std::borrow::Cow<'r, str>>,
) -> RecordAnswer {
    let Some(at) = field("timestamp").and_then(|t| Timestamp::parse_rfc3339(&t)) else {
        return RecordAnswer::Unknown;
    };
    let mut reading = RecordReading::default();
    reading.at = Some(at);
    reading.thread = field("run").and_then(|r| name(&r));
    let message = field("message").unwrap_or_default();
    if message == "created" {
        reading.session = field("id")
            .and_then(|id| name(&id))
            .filter(|id| id.starts_with("ses_"));
        reading.project = field("directory").and_then(|d| project_of(&d));
        reading.version = field("version").and_then(|v| version_of(&v));
    } else if let Some(session) = field("session.id").and_then(|s| name(&s)) {
        reading.session = Some(session);
    }
    if message == "failed to load plugin"
        && let Some(plugin) = field("path").and_then(|p| plugin_name(&p))
        && let Some(failed) = plugin_failed(&plugin, &field("error").unwrap_or_default(), at)
    {
        push(&mut reading, failed);
    }
    if message == "server unavailable"
        && let Some(server) = field("key").and_then(|k| name(&k))
    {
        unavailable(&mut reading, &server, field("status").as_deref(), at);
    }
    if message == "process"
        && let Some((reason, words)) = field("error").as_deref().and_then(model_api)
    {
        run_ended(&mut reading, at, reason, words.into());
    }
    answer(reading)
}

/// How the run ended, as a log line's ERROR "process" or a database's
/// assistant message says it: a report-level error (no server's), in
/// Tether's words.
fn run_ended(reading: &mut RecordReading, at: Timestamp, reason: ReasonCode, words: String) {
    push(
        reading,
        Evidence::new(EvidenceKind::ExplicitError, at).reason(reason, Some(words)),
    );
}

/// How OpenCode's bundled AI SDK begins the words of a request that could
/// not connect (1.18.33: `Cannot connect to API: ${cause.message}`).
const API: &str = "Cannot connect to API: ";

/// Bun's words for a fetch that failed, as the bundled AI SDK puts them
/// after [`API`] (1.18.33: for Bun's `ConnectionRefused`,
/// `FailedToOpenSocket` and `ConnectionClosed`; real runs with the model
/// API on a closed port, and on a host that does not resolve), each with
/// its reason and Tether's sentence. Other words are left unsaid (no
/// guess).
const MODEL_API: [(&str, ReasonCode, &str); 3] = [
    (
        "Unable to connect. Is the computer able to access the url?",
        ReasonCode::ConnectionRefused,
        "its model API could not be reached: nothing listened there (connection refused)",
    ),
    (
        "Was there a typo in the url or port?",
        ReasonCode::HostNotFound,
        "its model API could not be reached: its host did not resolve or could not be opened",
    ),
    (
        "The socket connection was closed unexpectedly",
        ReasonCode::ConnectionClosed,
        "its model API could not be reached: the connection dropped",
    ),
];

/// Why a turn ended where its model API could not be reached: the `error`
/// of ERROR "process" (the turn's end, after its retries), compared with
/// OpenCode's own words ([`MODEL_API`]), never kept.
fn model_api(error: &str) -> Option<(ReasonCode, &'static str)> {
    let cause = error.strip_prefix(API)?;
    MODEL_API
        .iter()
        .find(|(words, _, _)| cause.starts_with(words))
        .map(|(_, reason, said)| (reason.clone(), *said))
}

/// OpenCode's own provider (OpenCode Zen): with no credentials, 1.18.33
/// keeps its free models under the key `public`, so a run with no provider
/// logged in has it alone and picks its `big-pickle` (a real run).
const OWN_PROVIDER: &str = "opencode";

/// The errors' query's word for an `APIError` the model API answered
/// with 401 or 403 (a real 1.18.33 run: a provider whose key the model API
/// refused; `statusCode` 401).
const CREDENTIALS_REFUSED: &str = "credentials_refused";

// A model whose provider has no credentials (`"model":
// "anthropic/claude-sonnet-4-5"`, no key, no `auth.json`) is not read:
// nothing durable says why. 1.18.33's `Provider.getModel` fails with
// `ProviderModelNotFoundError` before any assistant message exists;
// `SessionPrompt.getModel` publishes it as a `session.error` on the bus
// only, and the server's defect handler logs it as ERROR "failed" (`ref`,
// `error`) and answers `UnknownError` "Unexpected server error" (`ref`
// only), which `run` prints and exits 1. In four real runs the log never
// held that ERROR line (it loses its last lines at exit) and the database
// held the session and its user message only: no assistant message, no
// error, no event naming one. So such a session reads as one that ended
// without a reply, never with a cause guessed.
/// Why a turn ended, from its assistant message's error (a database row:
/// the error's name, the query's word for its cause, the provider's id):
/// an `APIError` that could not connect, by the cause's word; one the
/// model API answered with 401 or 403, credentials refused. Other errors
/// are left unsaid (no guess).
fn turn_error(
    name: Option<&str>,
    cause: Option<&str>,
    provider: Option<&str>,
) -> Option<(ReasonCode, String)> {
    if name != Some("APIError") {
        return None;
    }
    let cause = cause?;
    let (reason, said) = match MODEL_API.iter().find(|(_, r, _)| r.as_str() == cause) {
        Some((_, reason, said)) => (reason.clone(), (*said).to_owned()),
        None if cause == CREDENTIALS_REFUSED => (
            ReasonCode::AuthRejected,
            "its model provider refused the credentials it sent".to_owned(),
        ),
        None => return None,
    };
    Some(match provider {
        Some(OWN_PROVIDER) => (
            reason,
            format!(
                "{said}; it was OpenCode's own provider (`{OWN_PROVIDER}`), the only one it has when no provider is logged in (`opencode auth login` logs one in)"
            ),
        ),
        _ => (reason, said),
    })
}

/// What OpenCode says of a server whose line reads `status=failed`: that,
/// and no more. 1.18.33 logs no error words for it (`MCP.create` keeps
/// `status.error` for `opencode mcp list`, and reads no server's stderr),
/// so a missing command, a missing cwd, an exit, a timeout and a refused
/// token all read the same (real runs); no cause is guessed.
pub const NOT_RECORDED: &str =
    "OpenCode's log says only status=failed, not why: `opencode mcp list` prints its reason";

/// A "server unavailable" line's status (1.18.33's `MCP.create`, which
/// logs only `key`, `type` and `status`, never the error's words):
/// - `status=failed`: no reason given (its words are only in `opencode mcp
///   list`, never in a record);
/// - `status=needs_auth`: it wants a login (an OAuth flow began);
/// - `status=needs_client_registration`: it wants a login, with a client id given
///   first ("Server does not support dynamic client registration. Please
///   provide clientId in config.").
fn unavailable(reading: &mut RecordReading, server: &str, said: Option<&str>, at: Timestamp) {
    match said {
        Some("needs_auth") => push(reading, status(server, "needs-auth", at)),
        Some(word @ "needs_client_registration") => push(
            reading,
            status(server, word, at).reason(
                ReasonCode::OauthRequired,
                Some(
                    "OpenCode: the server registers no OAuth clients; give its `oauth.clientId`"
                        .into(),
                ),
            ),
        ),
        Some("failed") => push(
            reading,
            failed(
                server,
                ReasonCode::AgentReportedFailed,
                Some(NOT_RECORDED.into()),
                at,
            ),
        ),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::field;
    use tether_core::model::Evidence;
    use tether_core::records::{RecordAnswer, RecordFile};
    use tether_core::vocab::{EvidenceKind, ReasonCode};

    /// What one record of `role` (its file `file`) says of how the run
    /// ended: its session, and its report-level error (no server's), at
    /// most one.
    fn run_end(role: &str, file: &str, record: &str) -> (Option<String>, Option<Evidence>) {
        let segments = vec![file.to_owned()];
        let file = RecordFile {
            role,
            segments: &segments,
            session: None,
            configured: &[],
        };
        let RecordAnswer::Read(reading) = super::read(&file, record) else {
            panic!("{record}");
        };
        let mut errors = reading
            .evidence
            .into_iter()
            .filter(|e| e.kind == EvidenceKind::ExplicitError && e.server.is_none());
        let error = errors.next();
        assert!(errors.next().is_none(), "{error:?} and more");
        (reading.session, error)
    }

    /// GIVEN the ERROR "process" line of a turn whose model API was on a
    /// closed port (a real 1.18.33 run, its stack cut), and Bun's other
    /// words in 1.18.33's bundle WHEN read THEN a report-level error with
    /// the reason the words name; other errors are left unsaid.
    #[test]
    fn a_model_api_not_reached_is_said_why() {
        let reason = |error: &str| {
            let line = format!(
                "timestamp=2026-12-07T12:58:11.189Z level=ERROR run=1d105cc7 message=process session.id=ses_daf6bc39affe7QPNo4yDv4IA0v messageID=msg_2509 error={error:?} stack=\"AI_APICallError: {}\\n    at e (/$bunfs/root/chunk-jrdr7d31.js:2:6248)\"",
                error.replace('"', "")
            );
            let (session, error) = run_end(super::LOG, "opencode.log", &line);
            assert_eq!(session.as_deref(), Some("ses_daf6bc39affe7QPNo4yDv4IA0v"));
            error.and_then(|e| e.reason_code)
        };
        for (error, code) in [
            (
                "Cannot connect to API: Unable to connect. Is the computer able to access the url?",
                Some(ReasonCode::ConnectionRefused),
            ),
            (
                "Cannot connect to API: Was there a typo in the url or port?",
                Some(ReasonCode::HostNotFound),
            ),
            (
                "Cannot connect to API: The socket connection was closed unexpectedly. For more information, pass `verbose: true` in the second argument to fetch()",
                Some(ReasonCode::ConnectionClosed),
            ),
            ("Cannot connect to API: something else", None),
            ("Unauthorized", None),
        ] {
            assert_eq!(reason(error), code, "{error}");
        }
    }

    /// GIVEN assistant messages' error rows as the errors' query gives them
    /// (real 1.18.33 runs: no login at all, offline, on OpenCode's own
    /// provider; a key the model API refused with 401) WHEN read THEN the
    /// turn's end in Tether's words, OpenCode's own provider named; other
    /// errors left unsaid.
    #[test]
    fn a_turn_s_error_in_the_database_is_said_why() {
        let said = |row: &str| {
            let (session, error) = run_end(super::DB_ERRORS, "opencode.db", row);
            assert_eq!(session.as_deref(), Some("ses_daeeb6d65ffe2zeUFR7qnM4fPd"));
            error.map(|e| (e.reason_code, e.summary.unwrap_or_default()))
        };
        let row = |name: &str, cause: &str, provider: &str| {
            format!(r#"["ses_daeeb6d65ffe2zeUFR7qnM4fPd",1796656636806,{name},{cause},{provider}]"#)
        };
        let (code, words) = said(&row(
            r#""APIError""#,
            r#""host_not_found""#,
            r#""opencode""#,
        ))
        .expect("said");
        assert_eq!(code, Some(ReasonCode::HostNotFound));
        assert!(
            words.contains("model API") && words.contains("`opencode`"),
            "{words}"
        );
        let (code, words) = said(&row(
            r#""APIError""#,
            r#""connection_refused""#,
            r#""fake""#,
        ))
        .expect("said");
        assert_eq!(code, Some(ReasonCode::ConnectionRefused));
        assert!(!words.contains("opencode"), "{words}");
        let (code, _) = said(&row(
            r#""APIError""#,
            r#""credentials_refused""#,
            r#""fake""#,
        ))
        .expect("said");
        assert_eq!(code, Some(ReasonCode::AuthRejected));
        for unsaid in [
            row(r#""APIError""#, "null", r#""fake""#),
            row(r#""APIError""#, r#""no_such_word""#, r#""fake""#),
            row(r#""UnknownError""#, r#""connection_refused""#, r#""fake""#),
            row("null", "null", "null"),
        ] {
            assert_eq!(said(&unsaid), None, "{unsaid}");
        }
    }

    /// GIVEN the errors' query WHEN built THEN each of Bun's words is in it
    /// whole, as a literal (no quote of theirs ends it early).
    #[test]
    fn the_errors_query_holds_each_cause_s_words() {
        let query = super::errors_query();
        for (words, reason, _) in super::MODEL_API {
            assert!(
                query.contains(&format!("'{}{words}') = 1 THEN '{reason}'", super::API)),
                "{query}"
            );
        }
    }

    #[test]
    fn fields_are_read_by_whole_key() {
        let line = r#"timestamp=2026-12-01T20:53:29.043Z level=WARN run=f42 message="server unavailable" key=broken type=local status=failed"#;
        let field = |line, key| field(line, key).map(|v| v.into_owned());
        assert_eq!(
            field(line, "message").as_deref(),
            Some("server unavailable")
        );
        assert_eq!(field(line, "key").as_deref(), Some("broken"));
        assert_eq!(field(line, "status").as_deref(), Some("failed"));
        assert_eq!(field(line, "run").as_deref(), Some("f42"));
        assert_eq!(field("session.id=ses_1 id=x", "id").as_deref(), Some("x"));
        // A key inside a quoted value is no field; an escaped quote is
        // part of its value.
        let quoted = r#"title="a key=evil \"q\"" key=real"#;
        assert_eq!(field(quoted, "key").as_deref(), Some("real"));
        assert_eq!(field(quoted, "title").as_deref(), Some(r#"a key=evil "q""#));
    }
}
