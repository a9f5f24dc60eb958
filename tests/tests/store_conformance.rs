//! One conformance suite (`tether_store::conformance`) on every store: SQLite
//! always, PostgreSQL against a real server when `TETHER_TEST_POSTGRES` names
//! one (`.ci/run` starts a throwaway cluster and requires it). Plus what
//! needs processes or bytes at rest: two writer processes on one database,
//! `kill -9` mid-write, the live change feed across processes, and planted
//! secrets absent from the SQLite file and from `pg_dump`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tether_core::store::{Store, StoreError};
use tether_store::conformance::{self, RawRows};
use tether_store::{PostgresStore, SqliteStore};

/// A unique prefix per test run, so tests sharing one database never meet.
fn prefix(test: &str) -> String {
    format!(
        "{test}-{}-{}-",
        std::process::id(),
        Instant::now().elapsed().as_nanos() ^ u128::from(rand_u32())
    )
}

fn rand_u32() -> u32 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now()) as u32
}

/// The PostgreSQL server to test against, or a loud skip (a failure when
/// `TETHER_REQUIRE_POSTGRES=1`, as in CI).
fn postgres() -> Option<String> {
    match std::env::var("TETHER_TEST_POSTGRES") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var("TETHER_REQUIRE_POSTGRES").as_deref() != Ok("1"),
                "TETHER_REQUIRE_POSTGRES=1 but TETHER_TEST_POSTGRES names no server"
            );
            eprintln!(
                "SKIP: TETHER_TEST_POSTGRES is not set; PostgreSQL store tests did not run (.ci/run starts a server)"
            );
            None
        }
    }
}

// === SQLite ===

struct SqliteRaw(std::path::PathBuf);

impl RawRows for SqliteRaw {
    fn put_raw(&self, session_id: &str, schema_version: u32, document: &str) -> Result<(), String> {
        let conn = rusqlite::Connection::open(&self.0).map_err(|e| e.to_string())?;
        conn.execute(
            "INSERT OR REPLACE INTO attachment_history (session_id, task_id, schema_version, document, updated_at)
             VALUES (?1, 't', ?2, ?3, 0)",
            rusqlite::params![session_id, schema_version, document],
        )
        .map_err(|e| e.to_string())?;
        Ok(())
    }
}

#[test]
fn sqlite_passes_the_store_conformance_suite() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("conformance.db");
    let open = || SqliteStore::open(&path).map(|s| Box::new(s) as Box<dyn Store>);
    conformance::run_all(&open, Some(&SqliteRaw(path.clone())), &prefix("sqlite"))
        .unwrap_or_else(|e| panic!("SQLite: {e}"));
}

#[test]
fn an_older_sqlite_database_migrates_forward_and_a_newer_one_is_refused_for_writing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("old.db");
    {
        // A database as the first release wrote it: no revision column, user_version 0.
        let conn = rusqlite::Connection::open(&path).expect("open");
        conn.execute_batch(
            "CREATE TABLE attachment_history (
                 session_id TEXT PRIMARY KEY, task_id TEXT NOT NULL,
                 schema_version INTEGER NOT NULL, document TEXT NOT NULL,
                 updated_at INTEGER NOT NULL);",
        )
        .expect("old schema");
        let old = conformance::sample_history("old-session", 0, "sk-old");
        conn.execute(
            "INSERT INTO attachment_history VALUES ('old-session', 'task', 1, ?1, 0)",
            [serde_json::to_string(&old).expect("json")],
        )
        .expect("old row");
    }
    let store = SqliteStore::open(&path).expect("migrates");
    let loaded = store.load_all().expect("load");
    assert_eq!(loaded.histories.len(), 1);
    let mut next = loaded.histories[0].clone();
    next.revision = 1;
    store
        .save(&next)
        .expect("revision 1 beats the migrated row's 0");
    drop(store);
    let version: u32 = rusqlite::Connection::open(&path)
        .expect("open")
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .expect("user_version");
    assert_eq!(version, tether_store::sqlite::SQLITE_SCHEMA_VERSION);

    rusqlite::Connection::open(&path)
        .expect("open")
        .execute_batch("PRAGMA user_version = 99;")
        .expect("from the future");
    match SqliteStore::open(&path) {
        Err(StoreError::NewerSchema { found: 99, .. }) => {}
        other => panic!("a newer database must be refused for writing: {other:?}"),
    }
    assert!(SqliteStore::open_read_only(&path).is_ok(), "and still read");
}

/// GIVEN a SQLite database as schema 5 left it (the tables exactly as that
/// build made them: a history, a tool pin, a record file's ledger row and a
/// session summary in it) WHEN this build opens it THEN it migrates to
/// schema 6, every row written before is read back unchanged, and the new
/// telemetry counts are kept beside them.
#[test]
fn a_schema_5_sqlite_database_migrates_to_6_and_keeps_its_rows() {
    use tether_core::model::{Timestamp, Unparsed};
    use tether_core::store::{RecordFileRow, RecordSessionRow};
    use tether_core::telemetry::UnparsedTelemetry;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("five.db");
    let old = conformance::sample_history("claude:five", 3, "sk-five");
    {
        let conn = rusqlite::Connection::open(&path).expect("open");
        // Schema 5's tables, as store/src/sqlite.rs created them (54ddb95).
        conn.execute_batch(
            "CREATE TABLE attachment_history (
                 session_id TEXT PRIMARY KEY, task_id TEXT NOT NULL,
                 schema_version INTEGER NOT NULL, document TEXT NOT NULL,
                 updated_at INTEGER NOT NULL, revision INTEGER NOT NULL DEFAULT 0);
             CREATE TABLE inventory_snapshot (
                 id INTEGER PRIMARY KEY AUTOINCREMENT, taken_at INTEGER NOT NULL,
                 schema_version INTEGER NOT NULL, document TEXT NOT NULL);
             CREATE TABLE tool_pin (
                 server TEXT NOT NULL, tool TEXT NOT NULL, pinned TEXT, pinned_at INTEGER,
                 seen TEXT, seen_at INTEGER NOT NULL, PRIMARY KEY (server, tool));
             CREATE TABLE record_file (
                 path TEXT PRIMARY KEY, agent_kind TEXT NOT NULL, device INTEGER NOT NULL,
                 inode INTEGER NOT NULL, size INTEGER NOT NULL, modified_ns INTEGER NOT NULL,
                 read_to INTEGER NOT NULL, tail_hash INTEGER NOT NULL,
                 gone INTEGER NOT NULL DEFAULT 0, imported INTEGER NOT NULL DEFAULT 0,
                 generation TEXT NOT NULL, state BLOB NOT NULL,
                 head BLOB NOT NULL DEFAULT x'');
             CREATE TABLE record_session (
                 session_id TEXT PRIMARY KEY, generation TEXT NOT NULL,
                 stamp INTEGER NOT NULL, summary BLOB NOT NULL);
             INSERT INTO tool_pin VALUES ('time', 'now', NULL, NULL, NULL, 7);
             INSERT INTO record_file VALUES ('/h/a.jsonl', 'claude', 1, 2, 30, 4, 30, 5,
                 0, 1, 'g1', x'03', x'0102');
             INSERT INTO record_session VALUES ('claude:five', 'g1', 9, x'0405');
             PRAGMA user_version = 5;",
        )
        .expect("schema 5");
        conn.execute(
            "INSERT INTO attachment_history VALUES ('claude:five', 'claude', 1, ?1, 0, 3)",
            [serde_json::to_string(&old).expect("json")],
        )
        .expect("a history");
    }
    let store = SqliteStore::open(&path).expect("migrates");
    let version: u32 = rusqlite::Connection::open(&path)
        .expect("open")
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .expect("user_version");
    assert_eq!(
        (version, tether_store::sqlite::SQLITE_SCHEMA_VERSION),
        (6, 6)
    );
    assert_eq!(store.load("claude:five").expect("load"), Some(old.clone()));
    let pins = store.tool_pins(None).expect("pins");
    assert_eq!(
        (pins.len(), pins[0].server.as_str(), pins[0].seen_at),
        (1, "time", Timestamp(7))
    );
    let files = store.record_files().expect("ledger");
    assert_eq!(
        files,
        vec![RecordFileRow {
            path: "/h/a.jsonl".into(),
            agent_kind: "claude".into(),
            device: 1,
            inode: 2,
            size: 30,
            modified_ns: 4,
            offset: 30,
            tail_hash: 5,
            gone: false,
            imported: true,
            generation: "g1".into(),
            head: vec![1, 2],
            state: Vec::new(),
        }]
    );
    assert_eq!(
        store
            .record_file_states(&["/h/a.jsonl".into()])
            .expect("state"),
        vec![("/h/a.jsonl".to_owned(), vec![3])]
    );
    assert_eq!(
        store.record_sessions().expect("summaries"),
        vec![RecordSessionRow {
            session_id: "claude:five".into(),
            generation: "g1".into(),
            stamp: 9,
            summary: vec![4, 5],
        }]
    );
    let attempt = old.current_attempt_id.clone().expect("an attempt");
    let counted = UnparsedTelemetry::new(
        "claude:five",
        attempt,
        "tool_result",
        "tool_parameters",
        Unparsed::CutShort,
        2,
        Timestamp(11),
    );
    store
        .add_unparsed_telemetry(std::slice::from_ref(&counted))
        .expect("counted");
    drop(store);
    let reopened = SqliteStore::open_read_only(&path).expect("reopen");
    assert_eq!(
        reopened.unparsed_telemetry("claude:five").expect("read"),
        vec![counted]
    );
    assert_eq!(reopened.load("claude:five").expect("load"), Some(old));
}

// === PostgreSQL ===

struct PostgresRaw(String);

impl RawRows for PostgresRaw {
    fn put_raw(&self, session_id: &str, schema_version: u32, document: &str) -> Result<(), String> {
        let status = Command::new("psql")
            .args(["-X", "-q", "-v", "ON_ERROR_STOP=1"])
            .arg("-v")
            .arg(format!("sid={session_id}"))
            .arg("-v")
            .arg(format!("ver={schema_version}"))
            .arg("-v")
            .arg(format!("doc={document}"))
            .arg(&self.0)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| format!("psql: {e}"))?;
        // psql interpolates :'var' (quoted, escaped) only in what it reads, not in -c.
        let mut child = status;
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().ok_or("psql has no stdin")?;
            stdin
                .write_all(
                    b"INSERT INTO attachment_history (session_id, task_id, schema_version, document, updated_at)
                      VALUES (:'sid', 't', :'ver'::int, :'doc', 0)
                      ON CONFLICT (session_id) DO UPDATE SET document = EXCLUDED.document,
                          schema_version = EXCLUDED.schema_version;\n",
                )
                .map_err(|e| format!("psql stdin: {e}"))?;
        }
        let status = child.wait().map_err(|e| format!("psql: {e}"))?;
        status
            .success()
            .then_some(())
            .ok_or_else(|| "psql failed".into())
    }
}

#[test]
fn postgres_passes_the_store_conformance_suite() {
    let Some(url) = postgres() else { return };
    let open = || PostgresStore::connect(&url).map(|s| Box::new(s) as Box<dyn Store>);
    conformance::run_all(&open, Some(&PostgresRaw(url.clone())), &prefix("pg"))
        .unwrap_or_else(|e| panic!("PostgreSQL: {e}"));
}

fn writer(url: &str, prefix: &str) -> std::process::Child {
    Command::new(tether_tests::workspace_bin("tether-store-writer"))
        .arg(url)
        .arg(prefix)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the writer")
}

fn wait_for_rows(store: &PostgresStore, prefix: &str, want: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        // The writer's sessions are PREFIXs0..s3: keyed reads, whatever else the database holds.
        let have = (0..4)
            .filter(|i| {
                store
                    .load(&format!("{prefix}s{i}"))
                    .ok()
                    .flatten()
                    .is_some()
            })
            .count();
        if have >= want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the writers wrote {have} of {want} sessions"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn two_writer_processes_killed_mid_burst_leave_sound_rows_and_the_change_feed_sees_them() {
    let Some(url) = postgres() else { return };
    let prefix = prefix("pg-two");
    let reader = PostgresStore::connect(&url).expect("connect");
    let feed = reader.listen().expect("LISTEN");
    let mut a = writer(&url, &prefix);
    let mut b = writer(&url, &prefix);
    wait_for_rows(&reader, &prefix, 4);

    // The change feed carries ids only, from the other processes.
    let mut seen = std::collections::BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while seen.len() < 4 && Instant::now() < deadline {
        if let Some(tether_store::Change::Session(id)) =
            feed.next(Duration::from_millis(200)).expect("feed")
        {
            assert!(
                !id.contains('{'),
                "a NOTIFY carries an id, never a document"
            );
            if id.starts_with(&prefix) {
                seen.insert(id);
            }
        }
    }
    assert_eq!(
        seen.len(),
        4,
        "every session's change was announced: {seen:?}"
    );

    // kill -9 both mid-burst.
    std::thread::sleep(Duration::from_millis(300));
    let before: Vec<_> = reader.load_all().expect("load").histories;
    let _ = a.kill();
    let _ = b.kill();
    let _ = a.wait();
    let _ = b.wait();
    let after = reader.load_all().expect("load after kill");
    tether_tests::assert_no_torn_row(&after, &prefix);
    for history in after
        .histories
        .iter()
        .filter(|h| h.session_id.starts_with(&prefix))
    {
        let earlier = before.iter().find(|h| h.session_id == history.session_id);
        if let Some(earlier) = earlier {
            assert!(
                history.revision >= earlier.revision,
                "{}: revision went back from {} to {}",
                history.session_id,
                earlier.revision,
                history.revision
            );
        }
    }
}

#[test]
fn no_planted_secret_is_at_rest_in_pg_dump() {
    let Some(url) = postgres() else { return };
    let prefix = prefix("pg-dump");
    let store = PostgresStore::connect(&url).expect("connect");
    let secret = format!("sk-pgdump-planted-{}", rand_u32());
    for i in 0..3 {
        let history = conformance::sample_history(&format!("{prefix}{i}"), 1, &secret);
        store.save(&history).expect("save");
    }
    let out = Command::new("pg_dump")
        .args(["--data-only", "--table=attachment_history"])
        .arg(&url)
        .output()
        .expect("run pg_dump");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dump = String::from_utf8_lossy(&out.stdout);
    assert!(dump.contains(&prefix), "the dump holds the rows");
    assert!(
        !dump.contains(&secret),
        "a planted secret reached the database"
    );
}

#[test]
fn postgres_errors_never_print_the_password() {
    let Some(url) = postgres() else { return };
    // A port nothing listens on, with a password in the string.
    let bad = "postgres://tether:sk-pg-never-printed@127.0.0.1:9/postgres?connect_timeout=2";
    let err = PostgresStore::connect(bad).expect_err("nothing listens on port 9");
    let text = format!("{err} {err:?}");
    assert!(!text.contains("sk-pg-never-printed"), "{text}");
    assert!(text.contains("127.0.0.1:9"), "says where: {text}");
    let store = PostgresStore::connect(&url).expect("connect");
    assert!(
        !format!("{store:?}").contains('@'),
        "Debug shows no userinfo"
    );
}

// === `tether history --db postgres://…` as a user runs it ===

/// The password-protected TCP side of the test server (CI: role `tether`
/// over 127.0.0.1 with scram-sha-256): (URL without password, password).
fn postgres_tcp() -> Option<(String, String)> {
    postgres()?;
    match (
        std::env::var("TETHER_TEST_POSTGRES_TCP"),
        std::env::var("TETHER_TEST_POSTGRES_PASSWORD"),
    ) {
        (Ok(url), Ok(password)) if !url.is_empty() && !password.is_empty() => Some((url, password)),
        _ => {
            assert!(
                std::env::var("TETHER_REQUIRE_POSTGRES").as_deref() != Ok("1"),
                "TETHER_REQUIRE_POSTGRES=1 but TETHER_TEST_POSTGRES_TCP/_PASSWORD are not set"
            );
            eprintln!("SKIP: no password-protected PostgreSQL (TETHER_TEST_POSTGRES_TCP)");
            None
        }
    }
}

fn history(args: &[&str], envs: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = Command::new(tether_tests::workspace_bin("tether"));
    cmd.arg("history")
        .args(args)
        .env_remove("PGPASSWORD")
        .env_remove("PGPASSFILE")
        .env("HOME", std::env::temp_dir().join("tether-no-home"));
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().expect("run tether history")
}

#[test]
fn history_reads_postgres_with_the_password_from_pgpassword_or_a_password_file_never_printing_it() {
    let Some((url, password)) = postgres_tcp() else {
        return;
    };
    let out = history(&["--db", &url, "--json"], &[("PGPASSWORD", &password)]);
    assert!(
        out.status.success(),
        "PGPASSWORD: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let docs: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert!(docs.is_array());

    let dir = tempfile::tempdir().expect("tempdir");
    let passfile = dir.path().join("pgpass");
    let target = tether_store::PgTarget::resolve(&url).expect("resolve");
    let shown = target.to_string();
    let host_port = shown
        .trim_start_matches("postgres://")
        .split('/')
        .next()
        .expect("host:port");
    let (host, port) = host_port.rsplit_once(':').expect("port");
    std::fs::write(&passfile, format!("{host}:{port}:*:*:{password}\n")).expect("pgpass");
    let out = history(
        &["--db", &url, "--json"],
        &[("PGPASSFILE", passfile.to_str().expect("utf8"))],
    );
    assert!(
        out.status.success(),
        "PGPASSFILE: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    let wrong = "sk-wrong-planted-password";
    let out = history(&["--db", &url], &[("PGPASSWORD", wrong)]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("password authentication failed"),
        "{stderr}"
    );
    for secret in [wrong, password.as_str()] {
        assert!(!stderr.contains(secret), "{stderr}");
        assert!(!String::from_utf8_lossy(&out.stdout).contains(secret));
    }
}

#[test]
fn history_follow_prints_a_session_again_when_another_process_writes_it() {
    let Some(url) = postgres() else { return };
    let prefix = prefix("pg-follow");
    let session = format!("{prefix}live");
    let store = PostgresStore::connect(&url).expect("connect");
    store
        .save(&conformance::sample_history(&session, 1, "sk-follow"))
        .expect("revision 1");
    let mut child = Command::new(tether_tests::workspace_bin("tether"))
        .args([
            "history",
            "--follow",
            "--json",
            "--session",
            &session,
            "--db",
            &url,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn tether history --follow");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let revision_of = |line: &str| -> u64 {
        let doc: serde_json::Value =
            serde_json::from_str(line).expect("one JSON document per line");
        assert_eq!(doc["session_id"], session.as_str());
        doc["revision"].as_u64().expect("revision")
    };
    let first = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the stored state first");
    assert_eq!(revision_of(&first), 1);
    // Another writer: the follower learns of it by NOTIFY, without polling.
    let mut next = conformance::sample_history(&session, 2, "sk-follow");
    next.revision = 2;
    store.save(&next).expect("revision 2");
    let second = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the change, live");
    assert_eq!(revision_of(&second), 2);
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn a_hub_whose_writes_are_stale_counts_and_logs_them_and_keeps_its_live_state() {
    use tether_core::registry::Registry;
    use tether_core::vocab::Trigger;
    use tether_hub::{AttemptRequest, Hub, HubConfig};

    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("stale.db");
    // Another host already wrote this session far ahead.
    let other = SqliteStore::open(&path).expect("open");
    let ahead = conformance::sample_history("shared", 100, "sk-stale-host");
    other.save(&ahead).expect("revision 100");

    let store = std::sync::Arc::new(SqliteStore::open(&path).expect("open"));
    let hub = Hub::with_store(
        Registry::empty(),
        HubConfig {
            persist_interval: Duration::from_millis(1),
            ..HubConfig::default()
        },
        store,
    );
    let handle = hub
        .begin_attempt(AttemptRequest::new(
            tether_core::Owner {
                task: "task".into(),
                session: "shared".into(),
                execution: "exec".into(),
            },
            "kind",
            tether_core::DriveMode::Acp,
            Trigger::SessionNew,
            vec![],
        ))
        .expect("begin");
    hub.flush_blocking();
    hub.flush_store();
    assert!(
        hub.store_stale_refusals() >= 1,
        "the stale write was counted"
    );
    assert_eq!(hub.store_failures(), 0, "a stale refusal is not a failure");
    let live = hub.snapshot("shared").expect("live");
    assert_eq!(
        live.current_attempt_id.as_deref(),
        Some(handle.attempt_id.as_str()),
        "live state is untouched by the refusal"
    );
    let stored = other.load_all().expect("load");
    assert_eq!(
        stored.histories[0], ahead,
        "the newer history was never replaced"
    );
}

/// GIVEN a change feed WHEN the server ends its connection (a restart, a
/// dropped network, an administrator) THEN the feed never errors: it
/// reconnects on its own, says `Resync` (notifications sent meanwhile were
/// missed), and hears new changes again on a new backend.
#[test]
fn the_change_feed_heals_when_the_server_ends_its_connection() {
    let Some(url) = postgres() else { return };
    let prefix = prefix("pg-heal");
    let store = PostgresStore::connect(&url).expect("connect");
    let feed = store.listen().expect("LISTEN");
    let first = feed.backend_pid().expect("a LISTEN backend");
    let out = Command::new("psql")
        .args(["-X", "-q", "-At", "-c"])
        .arg(format!("SELECT pg_terminate_backend({first})"))
        .arg(&url)
        .output()
        .expect("psql");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "t",
        "terminated: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A write while the feed is down; its NOTIFY may be missed.
    let missed = format!("{prefix}missed");
    store
        .save(&conformance::sample_history(&missed, 1, "sk-heal"))
        .expect("save while the feed is down");

    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        assert!(Instant::now() < deadline, "the feed never came back");
        let change = feed
            .next(Duration::from_millis(200))
            .expect("the feed never errors while it heals");
        if change == Some(tether_store::Change::Resync) {
            break;
        }
    }
    let second = feed.backend_pid().expect("LISTEN again");
    assert_ne!(first, second, "a new connection");

    let after = format!("{prefix}after");
    store
        .save(&conformance::sample_history(&after, 1, "sk-heal"))
        .expect("save");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        assert!(Instant::now() < deadline, "no NOTIFY after the feed healed");
        if feed.next(Duration::from_millis(200)).expect("feed")
            == Some(tether_store::Change::Session(after.clone()))
        {
            break;
        }
    }
    for id in [missed, after] {
        store.remove(&id).expect("remove");
    }
}

/// Runs SQL with psql against `url`; its output, trimmed.
fn psql(url: &str, sql: &str) -> String {
    let out = Command::new("psql")
        .args(["-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql])
        .arg(url)
        .output()
        .expect("psql");
    assert!(
        out.status.success(),
        "psql {sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// GIVEN a database at schema 1, as the first release left it, with a row
/// WHEN a host of this build connects THEN it migrates forward (recorded,
/// the row kept and readable, documents lz4-compressed where the server has
/// lz4), and a database newer than the build is refused for writing but
/// still read.
#[test]
fn an_older_postgres_database_migrates_forward_and_a_newer_one_is_refused_for_writing() {
    let Some(url) = postgres() else { return };
    let db = format!("tether_migrate_{}", std::process::id());
    psql(&url, &format!("DROP DATABASE IF EXISTS {db}"));
    psql(&url, &format!("CREATE DATABASE {db}"));
    let (base, _) = url.rsplit_once('/').expect("a database in the URL");
    let db_url = format!("{base}/{db}");

    // Schema 1 by hand, with one row at revision 3.
    psql(
        &db_url,
        "CREATE TABLE tether_schema_migrations (version INTEGER PRIMARY KEY,
             applied_at TIMESTAMPTZ NOT NULL DEFAULT now());
         INSERT INTO tether_schema_migrations (version) VALUES (1);
         CREATE TABLE attachment_history (session_id TEXT PRIMARY KEY, task_id TEXT NOT NULL,
             schema_version INTEGER NOT NULL, document TEXT NOT NULL,
             updated_at BIGINT NOT NULL, revision BIGINT NOT NULL DEFAULT 0);",
    );
    let old = conformance::sample_history("old", 3, "sk-migrate");
    PostgresRaw(db_url.clone())
        .put_raw(
            "old",
            old.schema_version,
            &serde_json::to_string(&old).expect("json"),
        )
        .expect("put the old row");
    psql(
        &db_url,
        "UPDATE attachment_history SET revision = 3 WHERE session_id = 'old'",
    );

    let store = PostgresStore::connect(&db_url).expect("migrates forward");
    assert_eq!(
        psql(
            &db_url,
            "SELECT string_agg(version::text, ',' ORDER BY version) FROM tether_schema_migrations"
        ),
        format!(
            "{}",
            (1..=tether_store::postgres::POSTGRES_SCHEMA_VERSION)
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(",")
        )
    );
    let has_lz4 = psql(
        &db_url,
        "SELECT count(*) FROM pg_settings WHERE name = 'default_toast_compression'
             AND 'lz4' = ANY(enumvals)",
    ) == "1";
    let compression = psql(
        &db_url,
        "SELECT attcompression FROM pg_attribute
             WHERE attrelid = 'attachment_history'::regclass AND attname = 'document'",
    );
    if has_lz4 {
        assert_eq!(compression, "l", "documents are lz4-compressed");
    }
    let loaded = store
        .load("old")
        .expect("load")
        .expect("the old row is kept");
    assert_eq!(loaded.revision, 3);
    let mut next = loaded.clone();
    next.revision = 4;
    store.save(&next).expect("written after the migration");
    // Schema 4's table: the old session's unparsed telemetry is counted.
    let counted = tether_core::telemetry::UnparsedTelemetry::new(
        "old",
        "att_1",
        "tool_result",
        "tool_parameters",
        tether_core::model::Unparsed::CutShort,
        2,
        tether_core::model::Timestamp(5),
    );
    store
        .add_unparsed_telemetry(std::slice::from_ref(&counted))
        .expect("counted after the migration");
    assert_eq!(
        store.unparsed_telemetry("old").expect("read"),
        vec![counted]
    );
    drop(store);

    psql(
        &db_url,
        "INSERT INTO tether_schema_migrations (version) VALUES (99)",
    );
    match PostgresStore::connect(&db_url) {
        Err(StoreError::NewerSchema { found: 99, .. }) => {}
        other => panic!("a newer database must be refused for writing: {other:?}"),
    }
    let reader = PostgresStore::connect_read_only(&db_url).expect("still read");
    assert_eq!(reader.load("old").expect("load").expect("row").revision, 4);
    drop(reader);
    psql(&url, &format!("DROP DATABASE {db} WITH (FORCE)"));
}
