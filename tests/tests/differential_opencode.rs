//! Issue 68 §1 for OpenCode's readers: each fast path against its plain
//! path (`tether_passthrough_opencode::plain`), and the database's query
//! against the printed lines' reader (the same words told apart twice, in
//! SQL and in Rust).
//!
//! - GIVEN every OpenCode record in the repository (its log, its database
//!   and the refusal databases as their queries give rows, what `opencode
//!   run --format json` printed) WHEN each is read both ways THEN both
//!   give the same answer.
//! - GIVEN tool parts of every kind the readers read (MCP calls ended every
//!   way, OpenCode's words for each, the `skill` and `invalid` tools),
//!   their strings arbitrary (every escape, `\u` and surrogate pairs,
//!   control characters, long strings, planted secrets) WHEN stored in a
//!   database and read through the tools' query, and printed as `run`
//!   prints them (keys in any order, compact and pretty) THEN the query's
//!   row and the printed line say the same, fast and plain alike.
//! - GIVEN database rows with `null` or a wrong type in any column, and
//!   log lines with arbitrary values (quoted, escaped) WHEN read both ways
//!   THEN the same answer, a wrong type named (its role), never an unknown
//!   kind; no planted secret in any answer.

use proptest::prelude::*;
use serde_json::{Value, json};
use tether_core::records::{RecordAnswer, RecordFile, Unparsed};
use tether_passthrough_opencode::plain;
use tether_passthrough_opencode::records::{
    DB_SESSIONS, DB_TOOLS, LOG, STREAM_JSON, read, sources,
};
use tether_tests::differential::{SECRET, Style, any_text, every_line_reads_the_same, write};

const CONFIGURED: &[&str] = &["time", "gone", "my_srv"];
const SESSION: &str = "ses_dc3475e75ffe6OGsx3YxTQUk44";
/// The rules `opencode run` gives the sessions it makes (a real 1.18.33
/// row, `tests/fixtures/refusals/opencode-1.18.33-allowed.sql`).
const RUN_RULES: &str = r#"[{"permission":"question","pattern":"*","action":"deny"}]"#;

fn configured() -> Vec<String> {
    CONFIGURED.iter().map(|s| (*s).to_owned()).collect()
}

fn by(role: &str, fast: bool, record: &str) -> RecordAnswer {
    let segments = vec!["x".to_owned()];
    let configured = configured();
    let file = RecordFile {
        role,
        segments: &segments,
        session: None,
        configured: &configured,
    };
    match fast {
        true => read(&file, record),
        false => plain::read(&file, record),
    }
}

fn fixtures() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// Each row `query` gives in `conn`, as the host hands a row to the
/// reader (`records/src/read.rs`: a JSON array of its columns).
fn rows(conn: &rusqlite::Connection, query: &str) -> Vec<String> {
    let mut statement = conn.prepare(query).expect("the query runs");
    let columns = statement.column_count();
    let mut rows = statement.query([]).expect("rows");
    let mut out = Vec::new();
    while let Some(row) = rows.next().expect("row") {
        use rusqlite::types::ValueRef;
        let values: Vec<Value> = (0..columns)
            .map(|i| match row.get_ref(i).expect("column") {
                ValueRef::Integer(v) => Value::from(v),
                ValueRef::Real(v) => Value::from(v),
                ValueRef::Text(t) => std::str::from_utf8(t).map_or(Value::Null, Value::from),
                _ => Value::Null,
            })
            .collect();
        out.push(Value::Array(values).to_string());
    }
    out
}

/// The sessions' and the tools' queries, as the reader gives them.
fn queries() -> Vec<(String, String)> {
    sources()
        .into_iter()
        .filter_map(|s| Some((s.role.clone(), s.query.clone()?)))
        .collect()
}

fn both_ways(role: &str, record: &str) -> (RecordAnswer, RecordAnswer) {
    (by(role, true, record), by(role, false, record))
}

/// GIVEN every OpenCode record in the repository WHEN each is read by
/// both paths THEN they agree.
#[test]
fn every_opencode_record_in_the_repository_reads_the_same_both_ways() {
    let root = fixtures();
    let log = root.join("records/opencode/.local/share/opencode/log/opencode.log");
    let logs = every_line_reads_the_same(
        std::slice::from_ref(&log),
        |l| by(LOG, true, l),
        |l| by(LOG, false, l),
    );
    assert!(logs >= 5, "{logs} log lines");
    let printed = tether_tests::differential::files_below(&root, &|p| {
        p.contains("opencode") && p.ends_with(".run.jsonl")
    });
    assert!(printed.len() >= 4, "{printed:?}");
    let lines = every_line_reads_the_same(
        &printed,
        |l| by(STREAM_JSON, true, l),
        |l| by(STREAM_JSON, false, l),
    );
    assert!(lines >= 20, "{lines} printed lines");
    let mut databases = vec![
        rusqlite::Connection::open(root.join("records/opencode/.local/share/opencode/opencode.db"))
            .expect("the recorded database"),
    ];
    for entry in std::fs::read_dir(root.join("refusals"))
        .expect("refusals")
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("opencode") && name.ends_with(".sql") {
            let conn = rusqlite::Connection::open_in_memory().expect("db");
            conn.execute_batch(&std::fs::read_to_string(entry.path()).expect("sql"))
                .expect("the fixture loads");
            databases.push(conn);
        }
    }
    let mut read_rows = 0;
    for conn in &databases {
        for (role, query) in queries() {
            for row in rows(conn, &query) {
                let (fast, plain) = both_ways(&role, &row);
                assert_eq!(fast, plain, "{role}: {row}");
                assert!(
                    matches!(fast, RecordAnswer::Read(_)),
                    "{role}: {row} → {fast:?}"
                );
                read_rows += 1;
            }
        }
    }
    assert!(read_rows >= 10, "{read_rows} rows");
}

/// A name, or anything.
fn any_name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec!["time_get_current_time", "gone_get_time", "my_srv_tool", "bash", "skill", "invalid", "elsewhere_x"]).prop_map(str::to_owned),
        1 => any_text(),
    ]
}

/// OpenCode's words for a call that ended in error (1.18.33 and the MCP
/// SDK it bundles), or anything.
fn any_error() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("The user rejected permission to use this specific tool call.".to_owned()),
        Just(format!(
            "The user rejected permission to use this specific tool call with the following feedback: {SECRET}"
        )),
        Just(format!(
            "The user has specified a rule which prevents you from using this specific tool call. {SECRET}"
        )),
        Just("MCP error -32001: Request timed out".to_owned()),
        Just("MCP error -32001: Maximum total timeout exceeded".to_owned()),
        Just("MCP error -32000: Connection closed".to_owned()),
        Just(format!("MCP error -32602: {SECRET}")),
        Just("mcp error -32602: lower case".to_owned()),
        any_text(),
    ]
}

/// The `invalid` tool's input: the AI SDK's words for a tool the model
/// asked for that OpenCode did not have, or a schema's, or anything.
fn any_invalid_input() -> impl Strategy<Value = Value> {
    (any_name(), prop_oneof![
        Just("Model tried to call unavailable tool 'gone_get_time'. Available tools: bash, read.".to_owned()),
        Just(format!("Invalid input for tool time_get_current_time: {SECRET}")),
        any_text(),
    ])
        .prop_map(|(tool, error)| json!({"tool": tool, "error": error}))
}

/// One tool part as OpenCode stores it (and prints it once it ended).
fn any_part() -> impl Strategy<Value = Value> {
    (
        any_name(),
        any_text(),
        prop::sample::select(vec!["completed", "error"]),
        any_error(),
        any_name(),
        any_invalid_input(),
    )
        .prop_map(|(tool, call, status, error, skill, invalid)| {
            let input = match tool.as_str() {
                "skill" => json!({"name": skill, "args": SECRET}),
                "invalid" => invalid,
                _ => json!({"planted": SECRET}),
            };
            let mut state = json!({"status": status, "input": input, "output": SECRET});
            if status == "error" {
                state["error"] = json!(error);
            }
            json!({"type": "tool", "tool": tool, "callID": call, "state": state})
        })
}

/// The tools' query's row for `part`, stored in a session `run` made.
fn stored(part: &Value) -> String {
    let conn = rusqlite::Connection::open_in_memory().expect("db");
    conn.execute_batch(
        "CREATE TABLE session (id TEXT PRIMARY KEY, time_created INTEGER, directory TEXT, version TEXT, permission TEXT);
         CREATE TABLE part (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, data TEXT);",
    )
    .expect("schema");
    conn.execute(
        "INSERT INTO session VALUES (?1, 1, '/work', '1.18.33', ?2)",
        rusqlite::params![SESSION, RUN_RULES],
    )
    .expect("session");
    conn.execute(
        "INSERT INTO part VALUES ('prt_1', ?1, 1796315064457, ?2)",
        rusqlite::params![SESSION, part.to_string()],
    )
    .expect("part");
    let query = queries()
        .into_iter()
        .find(|(role, _)| role == DB_TOOLS)
        .expect("the tools' query")
        .1;
    let mut got = rows(&conn, &query);
    assert_eq!(got.len(), 1, "{part}");
    got.remove(0)
}

/// What an answer says, its time and session aside (the printed line and
/// the row carry them apart), with no call id (the host hashes it).
fn meaning(answer: &RecordAnswer) -> RecordAnswer {
    let mut answer = answer.clone();
    if let RecordAnswer::Read(reading) = &mut answer {
        reading.at = None;
        reading.session = None;
        for e in &mut reading.evidence {
            e.at = tether_core::model::Timestamp(0);
        }
    }
    answer
}

/// No planted secret in what a reader gives, but for a call's id (the
/// key a call and its end are paired by, hashed by the host before it is
/// kept: `records/src/facts.rs`) and names the host's sanitizer redacts.
fn no_secret(answer: &RecordAnswer, record: &str) {
    let mut answer = answer.clone();
    if let RecordAnswer::Read(reading) = &mut answer {
        if !reading.names_are_names(&configured()) {
            return;
        }
        use tether_core::sanitize;
        for e in &mut reading.evidence {
            e.connection_id = None;
            e.server = e.server.as_deref().map(sanitize::name);
            e.tool = e.tool.as_deref().map(sanitize::name);
            e.summary = e.summary.as_deref().map(sanitize::summary);
            if let Some(c) = e.capability.as_deref_mut() {
                c.name = sanitize::name(&c.name);
            }
        }
        for s in &mut reading.servers {
            s.name = sanitize::name(&s.name);
        }
        reading.session = None;
    }
    let shown = format!("{answer:?}");
    assert!(
        !shown.contains("PLANTED"),
        "a planted secret reached {shown} from {record}"
    );
}

fn style() -> impl Strategy<Value = Style> {
    (any::<u64>(), any::<bool>(), any::<bool>()).prop_map(|(seed, pretty, escape_more)| Style {
        seed,
        pretty,
        escape_more,
    })
}

/// Any JSON value a column may hold, right type or not.
fn any_column() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => any_text().prop_map(Value::from),
        1 => Just(Value::Null),
        1 => any::<i64>().prop_map(Value::from),
        1 => Just(json!(1.5)),
        1 => Just(json!([SECRET])),
        1 => Just(json!({"k": SECRET})),
        1 => Just(json!(true)),
    ]
}

/// A log line's value: plain, or quoted with its `"` and `\` escaped as
/// OpenCode writes a quote (`\"`).
fn logged(value: &str) -> String {
    if value.is_empty() || value.contains([' ', '"', '=', '\\']) {
        format!("\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        value.to_owned()
    }
}

/// One log line of a kind the reader reads, its values arbitrary (no line
/// breaks: a log line is one line).
fn any_log_line() -> impl Strategy<Value = String> {
    let value = || any_text().prop_map(|s| s.replace(['\n', '\r'], " "));
    (
        prop::sample::select(vec![
            "created",
            "server unavailable",
            "failed to load plugin",
            "process",
            "loop",
        ]),
        value(),
        value(),
        prop::sample::select(vec![
            "failed",
            "needs_auth",
            "needs_client_registration",
            "disabled",
        ]),
        value(),
        any::<bool>(),
    )
        .prop_map(|(message, a, b, status, title, title_first)| {
            let head = format!(
                "timestamp=2026-12-01T20:53:29.043Z level=WARN run=f42ca02b message={}",
                logged(message)
            );
            let title = format!(
                "title={}",
                logged(&format!("x key={a} id=ses_evil {title}"))
            );
            let body = match message {
                "created" => format!(
                    "id=ses_{} version={} directory={}",
                    a.len(),
                    logged(&b),
                    logged(&a)
                ),
                "server unavailable" => format!("key={} type=local status={status}", logged(&a)),
                "failed to load plugin" => format!("path={} error={}", logged(&a), logged(&b)),
                // OpenCode's words for a model API not reached (1.18.33's
                // bundle), or anything.
                "process" => {
                    let cause = [
                        "Unable to connect. Is the computer able to access the url?",
                        "Was there a typo in the url or port?",
                        "The socket connection was closed unexpectedly.",
                        &b,
                    ][a.len() % 4];
                    let error = format!("Cannot connect to API: {cause}");
                    format!(
                        "session.id=ses_1 error={} stack={}",
                        logged(&error),
                        logged(&b)
                    )
                }
                _ => format!("session.id={}", logged(&a)),
            };
            match title_first {
                true => format!("{head} {title} {body}"),
                false => format!("{head} {body} {title}"),
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// GIVEN a tool part of any kind, stored and printed WHEN its row and
    /// its printed line are read, each both ways THEN all four say the
    /// same, and no planted secret is in any.
    #[test]
    fn a_tool_part_reads_the_same_from_the_database_and_from_run(part in any_part(), style in style()) {
        let row = stored(&part);
        let (fast_row, plain_row) = both_ways(DB_TOOLS, &row);
        prop_assert_eq!(&fast_row, &plain_row, "{}", row);
        let line = json!({"type": "tool_use", "timestamp": 1796315064457u64, "sessionID": SESSION, "part": part});
        let text = write(&line, style);
        let (fast_line, plain_line) = both_ways(STREAM_JSON, &text);
        prop_assert_eq!(&fast_line, &plain_line, "{}", text);
        prop_assert_eq!(meaning(&fast_row), meaning(&fast_line), "row {} / line {}", row, text);
        no_secret(&fast_row, &row);
        no_secret(&fast_line, &text);
    }

    /// GIVEN a database row of either query with any value in any column
    /// WHEN read both ways THEN the same answer: a wrong type named with
    /// its role, never an unknown kind.
    #[test]
    fn a_row_of_any_shape_reads_the_same_both_ways(
        columns in prop::collection::vec(any_column(), 3..8),
        session in any::<bool>(),
    ) {
        let role = if session { DB_SESSIONS } else { DB_TOOLS };
        let row = Value::Array(columns).to_string();
        let (fast, plain) = both_ways(role, &row);
        prop_assert_eq!(&fast, &plain, "{}", row);
        prop_assert!(!matches!(fast, RecordAnswer::Unknown), "{}", row);
        if let RecordAnswer::Unparsed { why, kind } = &fast {
            prop_assert_eq!((why, kind.as_deref()), (&Unparsed::WrongType, Some(role)));
        }
        no_secret(&fast, &row);
    }

    /// GIVEN a log line of any kind the reader reads, its values arbitrary
    /// (a quoted title holding other keys before or after the fields)
    /// WHEN read both ways THEN the same answer, and no planted secret.
    #[test]
    fn a_log_line_reads_the_same_both_ways(line in any_log_line()) {
        let (fast, plain) = both_ways(LOG, &line);
        prop_assert_eq!(&fast, &plain, "{}", line);
        no_secret(&fast, &line);
    }
}
