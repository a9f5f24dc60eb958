//! Persistence: the SQLite store, typed rehydration, write-through from the
//! hub, crash safety under `kill -9`, rotation stress, and no secret at rest.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tether_core::history::{AttachmentHistory, MAX_ATTEMPTS, MAX_EVIDENCE};
use tether_core::model::{Evidence, Timestamp};
use tether_core::registry::Registry;
use tether_core::store::{Loaded, Store, StoreError};
use tether_core::vocab::{DisplayStatus, EvidenceKind, ReasonCode, ServerSource, Trigger};
use tether_core::{DriveMode, Endpoint, KeyValue, ServerSpec};
use tether_hub::{AttemptRequest, Hub, HubConfig};
use tether_store::SqliteStore;

fn server() -> ServerSpec {
    ServerSpec::new(
        "srv",
        ServerSource::Profile,
        Endpoint::Stdio {
            command: "srv".into(),
            args: vec![],
            env: vec![],
            cwd: None,
        },
    )
}

fn request(session: &str, servers: Vec<ServerSpec>) -> AttemptRequest {
    AttemptRequest::new(
        tether_core::Owner {
            task: "task".into(),
            session: session.into(),
            execution: "exec".into(),
        },
        "k",
        DriveMode::Acp,
        Trigger::SessionNew,
        servers,
    )
}

fn quick() -> HubConfig {
    HubConfig {
        persist_interval: Duration::from_millis(20),
        ..HubConfig::default()
    }
}

#[test]
fn histories_survive_a_restart_and_removal_removes_the_row() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("tether.db");
    let expected: AttachmentHistory = {
        let hub = Hub::with_store(
            Registry::empty(),
            quick(),
            Arc::new(SqliteStore::open(&db).expect("open")),
        );
        for session in ["a", "b"] {
            let handle = hub
                .begin_attempt(request(session, vec![server()]))
                .expect("begin");
            handle
                .sink
                .publish(
                    Evidence::new(EvidenceKind::ToolsListObserved, Timestamp(5))
                        .server("srv")
                        .connection("c")
                        .tools(3),
                )
                .expect("publish");
        }
        hub.flush_blocking();
        hub.flush_store();
        hub.snapshot("a").expect("a")
    };
    // A new process: open, rehydrate, restore.
    let store = Arc::new(SqliteStore::open(&db).expect("reopen"));
    let Loaded { histories, skipped } = store.load_all().expect("load");
    assert!(skipped.is_empty());
    assert_eq!(histories.len(), 2);
    assert_eq!(histories[0], expected);
    let hub = Hub::with_store(Registry::empty(), quick(), store.clone());
    assert_eq!(hub.restore(histories), 2);
    assert_eq!(
        hub.snapshot("a")
            .expect("restored")
            .current()
            .expect("c")
            .servers[0]
            .status,
        DisplayStatus::Active
    );
    // A new attempt supersedes the restored one.
    hub.begin_attempt(request("a", vec![server()]))
        .expect("begin");
    hub.remove("b");
    hub.flush_store();
    let after = store.load_all().expect("load");
    assert_eq!(after.histories.len(), 1);
    assert_eq!(after.histories[0].attempts.len(), 2);
    assert!(after.histories[0].attempts[0].is_superseded());
}

#[test]
fn corrupt_older_and_newer_rows_load_conservatively() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("tether.db");
    drop(SqliteStore::open(&db).expect("create"));
    let conn = rusqlite::Connection::open(&db).expect("raw");
    let older = r#"{"task_id":"t","session_id":"old","current_attempt_id":null,"attempts":[]}"#;
    let newer = r#"{"schema_version":9,"task_id":"t","session_id":"new","current_attempt_id":"a","future":1,"attempts":[{"attempt_id":"a","task_id":"t","session_id":"new","execution_id":"e","agent_kind":"k","trigger":"session_teleport","started_at":1,"updated_at":1,"evidence":[{"kind":"quantum","at":1,"provenance":"oracle"}],"servers":[{"name":"x","source":"host","transport":"ws","target":"ws://h","decision":"deliver","status":"glowing","stages":{}}]}]}"#;
    for (session, version, doc) in [
        ("old", 0, older),
        ("new", 9, newer),
        ("bad", 1, "{not json"),
        ("wrong", 1, r#"{"attempts": 5}"#),
    ] {
        conn.execute(
            "INSERT INTO attachment_history (session_id, task_id, schema_version, document, updated_at) VALUES (?1, 't', ?2, ?3, 0)",
            rusqlite::params![session, version, doc],
        )
        .expect("insert");
    }
    let loaded = SqliteStore::open(&db)
        .expect("open")
        .load_all()
        .expect("load");
    let ids: Vec<_> = loaded
        .histories
        .iter()
        .map(|h| h.session_id.as_str())
        .collect();
    assert_eq!(ids, ["new", "old"]);
    let skipped: Vec<_> = loaded
        .skipped
        .iter()
        .map(|s| s.session_id.as_str())
        .collect();
    assert_eq!(skipped, ["bad", "wrong"]);
    assert!(
        loaded
            .histories
            .iter()
            .all(|h| h.schema_version == tether_core::SCHEMA_VERSION)
    );
    let newer = &loaded.histories[0];
    let row = &newer.attempts[0].servers[0];
    assert_eq!(row.status, DisplayStatus::Unknown);
    assert_eq!(row.transport.as_str(), "ws");
    assert_eq!(newer.attempts[0].evidence[0].kind.as_str(), "quantum");
}

/// Counts writes and can fail on demand.
struct Counting {
    inner: SqliteStore,
    saves: AtomicU64,
    fail: Mutex<bool>,
}

impl Store for Counting {
    fn save(&self, history: &AttachmentHistory) -> Result<(), StoreError> {
        if *self.fail.lock().expect("lock") {
            return Err(StoreError::Backend("disk full (simulated)".into()));
        }
        self.saves.fetch_add(1, Ordering::Relaxed);
        self.inner.save(history)
    }
    fn remove(&self, session_id: &str) -> Result<(), StoreError> {
        self.inner.remove(session_id)
    }
    fn load_all(&self) -> Result<Loaded, StoreError> {
        self.inner.load_all()
    }
}

#[test]
fn bursts_coalesce_the_latest_state_lands_and_failures_never_touch_live_state() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(Counting {
        inner: SqliteStore::open(&dir.path().join("t.db")).expect("open"),
        saves: AtomicU64::new(0),
        fail: Mutex::new(false),
    });
    let config = HubConfig {
        persist_interval: Duration::from_millis(100),
        ..HubConfig::default()
    };
    let hub = Hub::with_store(Registry::empty(), config, store.clone());
    let handle = hub
        .begin_attempt(request("s", vec![server()]))
        .expect("begin");
    for i in 0..1000u64 {
        let _ = handle.sink.publish(
            Evidence::new(EvidenceKind::ToolCallObserved, Timestamp(10 + i))
                .server("srv")
                .tool_call("echo", true),
        );
        if i % 100 == 0 {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    hub.flush_blocking();
    // The latest state lands within the bound, without an explicit flush.
    std::thread::sleep(Duration::from_millis(400));
    let saves = store.saves.load(Ordering::Relaxed);
    assert!(
        (1..50).contains(&saves),
        "1000 events coalesced into {saves} writes"
    );
    let stored = store.load_all().expect("load").histories.remove(0);
    assert_eq!(Some(stored), hub.snapshot("s"));

    // A failing store: evidence is still reduced and live state is right.
    *store.fail.lock().expect("lock") = true;
    handle
        .sink
        .publish(
            Evidence::new(EvidenceKind::ToolsListObserved, Timestamp(5000))
                .server("srv")
                .tools(2),
        )
        .expect("publish");
    hub.flush_blocking();
    hub.flush_store();
    assert!(hub.store_failures() >= 1);
    let live = hub.snapshot("s").expect("live");
    assert_eq!(
        live.current().expect("c").servers[0].status,
        DisplayStatus::Active
    );
    // Repaired by the next write once the store recovers.
    *store.fail.lock().expect("lock") = false;
    handle
        .sink
        .publish(
            Evidence::new(EvidenceKind::ToolsListObserved, Timestamp(6000))
                .server("srv")
                .tools(4),
        )
        .expect("publish");
    hub.flush_blocking();
    hub.flush_store();
    let stored = store.load_all().expect("load").histories.remove(0);
    assert_eq!(stored.current().expect("c").servers[0].tool_count, Some(4));
}

/// A hub writing through to a `Counting` store that is down, with one
/// change of `session` (its server listed 3 tools) reduced and handed to
/// the store's writer: the write that will fail.
fn a_change_while_the_store_is_down(
    dir: &tempfile::TempDir,
    session: &str,
    config: HubConfig,
) -> (Arc<Counting>, Hub, tether_hub::AttemptHandle) {
    let store = Arc::new(Counting {
        inner: SqliteStore::open(&dir.path().join("t.db")).expect("open"),
        saves: AtomicU64::new(0),
        fail: Mutex::new(true),
    });
    let hub = Hub::with_store(Registry::empty(), config, store.clone());
    let handle = hub
        .begin_attempt(request(session, vec![server()]))
        .expect("begin");
    handle
        .sink
        .publish(
            Evidence::new(EvidenceKind::ToolsListObserved, Timestamp(50))
                .server("srv")
                .tools(3),
        )
        .expect("publish");
    hub.flush_blocking();
    (store, hub, handle)
}

/// GIVEN a store that is down when a session's last change is written WHEN
/// no further change comes THEN the write is retried with backoff and lands
/// once the store is back; a flush meanwhile never waits on the down store.
#[test]
fn a_failed_write_is_retried_until_the_store_is_back_without_a_new_change() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (store, hub, _handle) = a_change_while_the_store_is_down(&dir, "s", quick());
    let started = std::time::Instant::now();
    hub.flush_store();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "a flush does not wait on a store that is down"
    );
    // Retries keep failing while it is down (backoff, not a busy loop).
    std::thread::sleep(Duration::from_millis(300));
    let failed_while_down = hub.store_failures();
    assert!(failed_while_down >= 2, "retried: {failed_while_down}");
    assert!(
        failed_while_down < 15,
        "with backoff, not every few ms: {failed_while_down}"
    );
    assert_eq!(hub.store_retries_pending(), 1);
    assert!(store.inner.load_all().expect("load").histories.is_empty());

    // Back up: the last change lands with no new evidence.
    *store.fail.lock().expect("lock") = false;
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(stored) = store.inner.load_all().expect("load").histories.pop() {
            assert_eq!(Some(stored), hub.snapshot("s"), "the latest state landed");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the failed write was never retried"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(hub.store_retries_pending(), 0);
}

/// GIVEN one session's write failed and another session keeps changing
/// (so writes are always pending) WHEN the store is back THEN the quiet
/// session's retry still lands: due retries join the next batch, they do
/// not wait for the writer to fall idle.
#[test]
fn a_retry_is_not_starved_by_another_session_that_keeps_changing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (store, hub, _quiet) = a_change_while_the_store_is_down(&dir, "quiet", quick());
    hub.flush_store();
    assert!(hub.store_failures() >= 1);
    *store.fail.lock().expect("lock") = false;

    let busy = hub
        .begin_attempt(request("busy", vec![server()]))
        .expect("begin");
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    let mut n = 0u64;
    loop {
        // A change every 5 ms: the writer always has something pending.
        n += 1;
        let _ = busy.sink.publish(
            Evidence::new(EvidenceKind::ToolCallObserved, Timestamp(100 + n))
                .server("srv")
                .tool_call("echo", true),
        );
        std::thread::sleep(Duration::from_millis(5));
        if n.is_multiple_of(20)
            && store
                .inner
                .load_all()
                .expect("load")
                .histories
                .iter()
                .any(|h| h.session_id == "quiet")
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the quiet session's retry never landed while another kept changing"
        );
    }
    assert_eq!(hub.store_retries_pending(), 0);
}

/// GIVEN a write that failed and waits out a long backoff WHEN the hub is
/// dropped THEN the failed write gets one last try on the way out (the store
/// is back by then), instead of being left behind.
#[test]
fn a_failed_write_gets_a_last_try_when_the_hub_stops() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A 2 s interval: the first retry is not due before the hub is dropped.
    let config = HubConfig {
        persist_interval: Duration::from_secs(2),
        ..HubConfig::default()
    };
    let (store, hub, handle) = a_change_while_the_store_is_down(&dir, "s", config);
    hub.flush_store();
    assert_eq!(hub.store_retries_pending(), 1);
    let live = hub.snapshot("s").expect("live");
    *store.fail.lock().expect("lock") = false;
    let started = std::time::Instant::now();
    drop(handle);
    drop(hub);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the last try did not wait out the backoff"
    );
    let stored = store.inner.load_all().expect("load").histories.pop();
    assert_eq!(
        stored.map(|h| h.current().map(|c| c.servers[0].tool_count)),
        Some(live.current().map(|c| c.servers[0].tool_count)),
        "the failed write landed on the way out"
    );
}

#[test]
fn kill_9_during_writes_leaves_the_last_committed_history_and_a_sound_database() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("crash.db");
    for round in 0..3 {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tether-store-writer"))
            .arg(&db)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("spawn writer");
        std::thread::sleep(Duration::from_millis(400 + round * 150));
        let _ = std::process::Command::new("kill")
            .args(["-9", &child.id().to_string()])
            .status();
        let _ = child.wait();
        let conn = rusqlite::Connection::open(&db).expect("reopen raw");
        let check: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .expect("check");
        assert_eq!(check, "ok", "round {round}");
        drop(conn);
        let loaded = SqliteStore::open(&db)
            .expect("reopen")
            .load_all()
            .expect("load");
        assert!(
            loaded.skipped.is_empty(),
            "round {round}: {:?}",
            loaded.skipped
        );
        assert!(
            !loaded.histories.is_empty(),
            "round {round}: something committed"
        );
        for h in &loaded.histories {
            assert!(h.attempts.len() <= MAX_ATTEMPTS);
            assert!(h.current().is_some());
        }
    }
}

#[test]
fn a_thousand_rotations_with_concurrent_evidence_never_land_stale_events() {
    let hub = Arc::new(Hub::new(Registry::empty()));
    let mut current = hub
        .begin_attempt(request("s", vec![server()]))
        .expect("begin");
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sinks: Arc<Mutex<tether_hub::EvidenceSink>> = Arc::new(Mutex::new(current.sink.clone()));
    let mut publishers = Vec::new();
    for t in 0..4u64 {
        let (sinks, stop) = (Arc::clone(&sinks), Arc::clone(&stop));
        publishers.push(std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let sink = sinks.lock().expect("lock").clone();
                // Each event names the attempt it was published for.
                let _ = sink.publish(
                    Evidence::new(EvidenceKind::ToolCallObserved, Timestamp(t * 1_000_000 + i))
                        .server("srv")
                        .tool_call(sink.attempt_id().to_owned(), true),
                );
                i += 1;
            }
        }));
    }
    for _ in 0..1000 {
        current = hub
            .begin_attempt(request("s", vec![server()]))
            .expect("rotate");
        *sinks.lock().expect("lock") = current.sink.clone();
    }
    std::thread::sleep(Duration::from_millis(50));
    stop.store(true, Ordering::Relaxed);
    for p in publishers {
        p.join().expect("publisher");
    }
    hub.flush_blocking();
    let history = hub.snapshot("s").expect("history");
    assert_eq!(history.attempts.len(), MAX_ATTEMPTS);
    for attempt in &history.attempts {
        assert!(attempt.evidence.len() <= MAX_EVIDENCE);
        for ev in attempt
            .evidence
            .iter()
            .filter(|e| e.kind == EvidenceKind::ToolCallObserved)
        {
            assert_eq!(
                ev.tool.as_deref(),
                Some(attempt.attempt_id.as_str()),
                "a stale event landed"
            );
        }
    }
    assert_eq!(
        history.current_attempt_id.as_deref(),
        Some(current.attempt_id.as_str())
    );
    let landed = history
        .current()
        .expect("current")
        .evidence
        .iter()
        .filter(|e| e.kind == EvidenceKind::ToolCallObserved)
        .count();
    assert!(
        landed > 0,
        "the current attempt did receive concurrent evidence"
    );
}

#[test]
fn no_planted_secret_is_ever_at_rest_in_the_database_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("secrets.db");
    let secrets = [
        "userinfo-Secret-1a2b3c",
        "query-Secret-4d5e6f7a",
        "header-Secret-8b9c0d1e",
        "env-Secret-2f3a4b5c",
        "arg-Secret-6d7e8f9a",
    ];
    let servers = vec![
        ServerSpec::new(
            "remote",
            ServerSource::Profile,
            Endpoint::Http {
                url: format!(
                    "https://bob:{}@mcp.example.com/x?key={}",
                    secrets[0], secrets[1]
                ),
                headers: vec![KeyValue::new(
                    "Authorization",
                    format!("Bearer {}", secrets[2]),
                )],
            },
        ),
        ServerSpec::new(
            "local",
            ServerSource::Profile,
            Endpoint::Stdio {
                command: "/opt/tools/srv".into(),
                args: vec!["--key".into(), secrets[4].into()],
                env: vec![KeyValue::new("TOKEN", secrets[3])],
                cwd: None,
            },
        ),
    ];
    {
        let hub = Hub::with_store(
            Registry::empty(),
            quick(),
            Arc::new(SqliteStore::open(&db).expect("open")),
        );
        for _ in 0..3 {
            let handle = hub
                .begin_attempt(request("s", servers.clone()))
                .expect("begin");
            for (name, s) in [
                ("remote", secrets[0]),
                ("local", secrets[3]),
                ("remote", secrets[2]),
            ] {
                handle
                    .sink
                    .publish(
                        Evidence::new(EvidenceKind::ExplicitError, tether_hub::now())
                            .server(name)
                            .reason(
                                ReasonCode::ServerError,
                                Some(format!("failed with {s} and {}", secrets[4])),
                            ),
                    )
                    .expect("publish");
            }
        }
        hub.flush_blocking();
        hub.flush_store();
    }
    let mut bytes = Vec::new();
    for entry in std::fs::read_dir(dir.path()).expect("dir").flatten() {
        bytes.extend(std::fs::read(entry.path()).expect("read"));
    }
    assert!(bytes.len() > 1000, "the database was written");
    for s in secrets {
        assert!(
            !bytes.windows(s.len()).any(|w| w == s.as_bytes()),
            "{s} is at rest in the database"
        );
    }
    let _ = Path::new(&db);
}
