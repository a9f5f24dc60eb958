//! OpenCode's database read while OpenCode still holds it (issue 56 §7).
//!
//! OpenCode 1.18.33 keeps `opencode.db` in WAL mode and leaves its
//! write-ahead log unmerged when `opencode run` exits (a real run here left
//! `opencode.db-wal` beside it): its latest calls may be only in the log.
//! Tether reads a private snapshot of both. These tests hold the database
//! the way OpenCode does (a writer's connection open, nothing
//! checkpointed; a write transaction not yet committed) while Tether reads.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use tether_core::history::AttachmentAttempt;
use tether_core::registry::Registry;
use tether_core::spec::{Endpoint, ServerSpec};
use tether_core::vocab::ServerSource;
use tether_records::{Filter, Home, Records};
// Linked for the plugins it registers (`Registry::with_static`).
use tether_tests as _;

const SESSION: &str = "ses_dcc9dba49ffe4Xua2LisksiYZu";

/// A home holding the recorded OpenCode session (a real run's log and
/// database), its database switched to WAL as OpenCode keeps it.
fn home() -> (tempfile::TempDir, PathBuf) {
    let home = tempfile::tempdir().expect("home");
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/records/opencode");
    copy_dir(&from, home.path());
    let db = home.path().join(".local/share/opencode/opencode.db");
    let conn = rusqlite::Connection::open(&db).expect("open the copy");
    let mode: String = conn
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .expect("wal");
    assert_eq!(mode, "wal");
    drop(conn);
    (home, db)
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("dir").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// A writer's connection as OpenCode holds one: WAL, never checkpointed
/// on its own.
fn writer(db: &Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(db).expect("writer");
    conn.execute_batch("PRAGMA wal_autocheckpoint=0;")
        .expect("no checkpoint");
    conn
}

/// A completed call of time's `convert_time`, as OpenCode stores a tool
/// part (the columns and keys the tools' query reads).
fn insert_call(conn: &rusqlite::Connection, call: &str) {
    let data = serde_json::json!({
        "type": "tool", "tool": "time_convert_time", "callID": call,
        "state": {"status": "completed"}
    });
    conn.execute(
        "INSERT INTO part (session_id, time_created, data) VALUES (?1, 1796158410500, ?2)",
        rusqlite::params![SESSION, data.to_string()],
    )
    .expect("insert");
}

fn read(home: &Path) -> Records {
    let stdio = |command: &str| Endpoint::Stdio {
        command: command.into(),
        args: vec![],
        env: vec![],
        cwd: None,
    };
    let configured = vec![
        ServerSpec::new("time", ServerSource::Profile, stdio("mcp-server-time")),
        ServerSpec::new("broken", ServerSource::Profile, stdio("/nonexistent/bin")),
    ];
    let registry = Registry::with_static().expect("registry");
    let vars = HashMap::from([(
        "XDG_DATA_HOME".to_owned(),
        home.join(".local/share").display().to_string(),
    )]);
    let mut records = Records::new(
        &registry,
        &Home::new(home, vars),
        HashMap::from([("opencode".to_owned(), configured)]),
        Filter {
            harnesses: vec!["opencode".into()],
            ..Filter::default()
        },
    );
    records.read(true);
    for file in records.files() {
        assert_eq!(file.error, None, "{file:?}");
    }
    records
}

fn only_session(records: &Records) -> AttachmentAttempt {
    assert_eq!(records.sessions().len(), 1, "{:?}", records.files());
    let facts = records.sessions().values().next().expect("one");
    let history = records.history(facts, None).expect("history");
    history.current().expect("attempt").clone()
}

/// (calls, failed) of `server`'s `tool`.
fn calls(attempt: &AttachmentAttempt, server: &str, tool: &str) -> (u32, u32) {
    attempt
        .server(server)
        .and_then(|r| r.tools.iter().find(|t| t.name == tool))
        .map(|t| (t.calls, t.failed_calls))
        .unwrap_or((0, 0))
}

/// The write-ahead log's length (0 where there is none).
fn wal_len(db: &Path) -> u64 {
    std::fs::metadata(format!("{}-wal", db.display())).map_or(0, |m| m.len())
}

/// Calls of `convert_time` in a copy of the database file alone, without
/// its write-ahead log.
fn calls_in_database_alone(db: &Path) -> u32 {
    let dir = tempfile::tempdir().expect("dir");
    let copy = dir.path().join("alone.db");
    std::fs::copy(db, &copy).expect("copy");
    let conn = rusqlite::Connection::open(&copy).expect("open");
    conn.query_row(
        "SELECT count(*) FROM part WHERE json_extract(data, '$.tool') = 'time_convert_time'",
        [],
        |r| r.get(0),
    )
    .expect("count")
}

/// The bytes of the database's files (the database, its log, its index).
fn files(db: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    ["", "-wal", "-shm"]
        .iter()
        .map(|suffix| {
            let path = format!("{}{suffix}", db.display());
            let bytes = std::fs::read(&path).ok();
            (path, bytes)
        })
        .collect()
}

/// GIVEN OpenCode's database with a call committed only to its
/// write-ahead log (the writer's connection still open, nothing
/// checkpointed, as `opencode run` leaves it) WHEN Tether reads it THEN
/// the call is read, and the database's files are as they were.
#[test]
fn a_call_only_in_the_write_ahead_log_is_read() {
    let (home, db) = home();
    let conn = writer(&db);
    insert_call(&conn, "call_in_wal");
    assert_eq!(
        calls_in_database_alone(&db),
        0,
        "the call is in the log alone: a reader of the database file misses it"
    );
    let before = files(&db);
    let attempt = only_session(&read(home.path()));
    assert_eq!(
        calls(&attempt, "time", "convert_time"),
        (1, 0),
        "{attempt:?}"
    );
    assert_eq!(calls(&attempt, "time", "get_current_time"), (1, 0));
    assert_eq!(files(&db), before, "OpenCode's files are only read");
    drop(conn);
}

/// GIVEN OpenCode in the middle of a write transaction (begun, a call
/// written, not committed) WHEN Tether reads THEN the read neither fails
/// nor waits on the writer's lock: the committed session is read, the
/// uncommitted call is not (yet), time is not called failed; once
/// committed, the next read has it.
#[test]
fn a_write_transaction_in_progress_is_read_as_committed() {
    let (home, db) = home();
    let conn = writer(&db);
    let committed = wal_len(&db);
    conn.execute_batch("BEGIN IMMEDIATE;").expect("begin");
    insert_call(&conn, "call_pending");
    // Spill the transaction's pages into the log (uncommitted frames).
    conn.execute_batch("PRAGMA cache_spill=1; PRAGMA cache_size=1;")
        .expect("spill");
    for n in 0..64 {
        insert_call(&conn, &format!("call_filler_{n}"));
    }
    conn.execute(
        "DELETE FROM part WHERE json_extract(data, '$.callID') LIKE 'call_filler_%'",
        [],
    )
    .expect("delete fillers");
    assert!(
        wal_len(&db) > committed,
        "uncommitted frames are in the log as Tether copies it"
    );
    let attempt = only_session(&read(home.path()));
    assert_eq!(calls(&attempt, "time", "convert_time"), (0, 0));
    assert_eq!(calls(&attempt, "time", "get_current_time"), (1, 0));
    let time = attempt.server("time").expect("time's row");
    assert_ne!(
        time.status,
        tether_core::vocab::DisplayStatus::Failed,
        "{time:?}"
    );
    conn.execute_batch("COMMIT;").expect("commit");
    let attempt = only_session(&read(home.path()));
    assert_eq!(
        calls(&attempt, "time", "convert_time"),
        (1, 0),
        "{attempt:?}"
    );
    drop(conn);
}
