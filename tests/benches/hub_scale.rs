//! How the hub and its stores behave at fleet scale (issue 18), printed as
//! tables for docs/PERFORMANCE.md:
//!
//! 1. resident memory per session, 10 → 10,000 live sessions of 3 attempts
//!    (3 servers each, realistic evidence, no tool catalogs);
//! 2. as live sessions grow, 10 → 10,000: `EvidenceSink::publish` latency,
//!    and a burst of events spread over every session, published and reduced;
//! 3. snapshot delivery from publish to 100 subscribers (p50, p99);
//! 4. cost per event as events per session grow, 10 → 10,000;
//! 5. write-through at 10,000 sessions: sustained writes per second with
//!    coalescing, the lag from a change to its row, and bytes per session,
//!    for SQLite and (with `TETHER_TEST_POSTGRES`) PostgreSQL.
//!
//! `cargo bench -p tether-tests --bench hub_scale` (add `-- quick` for a
//! smaller run). Not criterion: each figure is one careful measurement.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_core::model::{ClientInfo, Evidence, Timestamp};
use tether_core::registry::Registry;
use tether_core::store::Store;
use tether_core::vocab::{EvidenceKind, ServerSource, Trigger};
use tether_core::{DriveMode, Endpoint, ServerSpec};
use tether_hub::{AttemptRequest, Hub, HubConfig};

fn servers() -> Vec<ServerSpec> {
    ["kandev", "github", "files"]
        .iter()
        .map(|name| {
            ServerSpec::new(
                *name,
                ServerSource::Profile,
                Endpoint::Http {
                    url: format!("https://{name}.example:8443/mcp"),
                    headers: vec![tether_core::KeyValue::new(
                        "Authorization",
                        "Bearer sk-scale-secret",
                    )],
                },
            )
        })
        .collect()
}

fn request(session: &str) -> AttemptRequest {
    AttemptRequest::new(
        tether_core::Owner {
            task: "task".into(),
            session: session.into(),
            execution: "exec".into(),
        },
        "claude-agent",
        DriveMode::Acp,
        Trigger::SessionNew,
        servers(),
    )
}

/// A realistic attempt: delivered, initialize, tools/list, tool calls and a
/// close per server (`events` in all).
fn evidence(i: usize) -> Evidence {
    let server = ["kandev", "github", "files"][i % 3];
    let at = Timestamp(1_000 + i as u64);
    let conn = format!("conn_{:04x}", i / 30);
    let ev = match i % 10 {
        0 => Evidence::new(EvidenceKind::Delivered, at),
        1 => Evidence::new(EvidenceKind::InitializeObserved, at).client(ClientInfo {
            name: "claude-code".into(),
            version: Some("2.0.0".into()),
            protocol_version: Some("2025-06-18".into()),
        }),
        2 => Evidence::new(EvidenceKind::ToolsListObserved, at).tools(12),
        9 => Evidence::new(EvidenceKind::ConnectionClosed, at),
        _ => Evidence::new(EvidenceKind::ToolCallObserved, at).tool_call("echo", true),
    };
    ev.server(server).connection(conn)
}

fn populate(hub: &Hub, sessions: usize, events: usize) {
    for s in 0..sessions {
        let id = format!("session-{s:05}");
        for _ in 0..3 {
            let handle = hub.begin_attempt(request(&id)).expect("begin");
            for i in 0..events {
                // A full queue drops and counts; wait for room, as a steady stream would.
                while handle.sink.publish(evidence(i)) == Err(tether_hub::PublishError::Full) {
                    std::thread::sleep(Duration::from_micros(200));
                }
            }
        }
    }
    hub.flush_blocking();
}

fn percentile(v: &mut [u64], p: f64) -> u64 {
    v.sort_unstable();
    v[((v.len() as f64 - 1.0) * p) as usize]
}

fn memory(quick: bool) {
    println!("\n## 1. Resident memory per live session (3 attempts × 3 servers, 20 events each)\n");
    println!("| sessions | RSS growth | per session |");
    println!("|---|---|---|");
    let sizes: &[usize] = if quick {
        &[10, 100, 1000]
    } else {
        &[10, 100, 1000, 10_000]
    };
    for &n in sizes {
        let before = tether_tests::rss_kib("self");
        let hub = Hub::new(Registry::empty());
        populate(&hub, n, 20);
        let after = tether_tests::rss_kib("self");
        let growth = after.saturating_sub(before);
        println!(
            "| {n} | {growth} KiB | {:.1} KiB |",
            growth as f64 / n as f64
        );
        drop(hub);
    }
}

fn publish_latency(quick: bool) {
    println!(
        "\n## 2. Cost as live sessions grow: publish latency, and a burst reduced across all of them\n"
    );
    println!(
        "| sessions | publish p50 | publish p99 | dropped | burst of 100,000 events over every session, published and reduced |"
    );
    println!("|---|---|---|---|---|");
    let sizes: &[usize] = if quick {
        &[10, 100, 1000]
    } else {
        &[10, 100, 1000, 10_000]
    };
    for &n in sizes {
        let hub = Hub::new(Registry::empty());
        populate(&hub, n, 20);
        let handle = hub.begin_attempt(request("session-00000")).expect("begin");
        let mut samples = Vec::with_capacity(200_000);
        for round in 0..100 {
            for i in 0..2000 {
                let ev = evidence(round * 2000 + i);
                let t = Instant::now();
                let _ = handle.sink.publish(ev);
                samples.push(t.elapsed().as_nanos() as u64);
            }
            // Let the drain catch up so the queue is not simply full.
            std::thread::sleep(Duration::from_millis(5));
        }
        let p50 = percentile(&mut samples, 0.50);
        let p99 = percentile(&mut samples, 0.99);
        let dropped = handle.sink.dropped();

        // Every session's current attempt, then 100,000 events spread over them.
        let handles: Vec<_> = (0..n)
            .map(|s| {
                hub.begin_attempt(request(&format!("session-{s:05}")))
                    .expect("begin")
            })
            .collect();
        hub.flush_blocking();
        let burst = 100_000usize;
        let t = Instant::now();
        for i in 0..burst {
            let sink = &handles[i % n].sink;
            while sink.publish(evidence(i / n + 3)) == Err(tether_hub::PublishError::Full) {
                std::thread::yield_now();
            }
        }
        hub.flush_blocking();
        let took = t.elapsed();
        println!(
            "| {n} | {p50} ns | {p99} ns | {dropped} | {:.1} ms, {:.2} µs per event |",
            took.as_secs_f64() * 1e3,
            took.as_nanos() as f64 / burst as f64 / 1e3
        );
    }
}

fn delivery(quick: bool) {
    let n = if quick { 1000 } else { 10_000 };
    let hub = Arc::new(Hub::new(Registry::empty()));
    populate(&hub, n, 20);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let subscribers = 100;
    let mut latencies = Vec::new();
    for round in 0..20 {
        let handles: Vec<_> = (0..subscribers)
            .map(|s| {
                let id = format!("session-{s:05}");
                hub.begin_attempt(request(&id)).expect("begin")
            })
            .collect();
        let receivers: Vec<_> = (0..subscribers)
            .map(|s| {
                hub.subscribe(&format!("session-{s:05}"))
                    .expect("subscribe")
            })
            .collect();
        let start = Instant::now();
        let waits: Vec<_> = receivers
            .into_iter()
            .map(|mut rx| {
                runtime.spawn(async move {
                    rx.borrow_and_update();
                    let _ = rx.changed().await;
                    start.elapsed().as_nanos() as u64
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(5));
        let published = Instant::now();
        for handle in &handles {
            let _ = handle.sink.publish(evidence(round * 7 + 1));
        }
        let offset = published.duration_since(start).as_nanos() as u64;
        for wait in waits {
            let seen = runtime.block_on(wait).expect("subscriber");
            latencies.push(seen.saturating_sub(offset));
        }
    }
    let p50 = percentile(&mut latencies, 0.50);
    let p99 = percentile(&mut latencies, 0.99);
    println!("\n## 3. Snapshot delivery, publish → {subscribers} subscribers, {n} sessions held\n");
    println!(
        "{} deliveries: p50 {:.2} ms, p99 {:.2} ms",
        latencies.len(),
        p50 as f64 / 1e6,
        p99 as f64 / 1e6
    );
}

fn growth() {
    println!(
        "\n## 4. Cost as events per session grow (one session, one attempt, through the hub)\n"
    );
    println!("| events | total (publish + reduce + flush) | per event | RSS growth |");
    println!("|---|---|---|---|");
    for events in [10usize, 100, 1000, 10_000] {
        let before = tether_tests::rss_kib("self");
        let hub = Hub::new(Registry::empty());
        let handle = hub.begin_attempt(request("grow")).expect("begin");
        let t = Instant::now();
        for i in 0..events {
            while handle.sink.publish(evidence(i)) == Err(tether_hub::PublishError::Full) {
                std::thread::sleep(Duration::from_micros(100));
            }
        }
        hub.flush_blocking();
        let total = t.elapsed();
        let per = total.as_nanos() as f64 / events as f64;
        let after = tether_tests::rss_kib("self");
        println!(
            "| {events} | {:.2} ms | {:.2} µs | {} KiB |",
            total.as_secs_f64() * 1e3,
            per / 1e3,
            after.saturating_sub(before)
        );
    }
}

/// Counts the rows a store actually wrote.
struct Counting {
    inner: Arc<dyn Store>,
    writes: std::sync::atomic::AtomicU64,
}

impl Store for Counting {
    fn save(
        &self,
        history: &tether_core::AttachmentHistory,
    ) -> Result<(), tether_core::store::StoreError> {
        let r = self.inner.save(history);
        if r.is_ok() {
            self.writes
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        r
    }

    fn remove(&self, session_id: &str) -> Result<(), tether_core::store::StoreError> {
        self.inner.remove(session_id)
    }

    fn load_all(&self) -> Result<tether_core::store::Loaded, tether_core::store::StoreError> {
        self.inner.load_all()
    }
}

fn write_through(name: &str, store: Arc<dyn Store>, quick: bool, size: impl Fn() -> u64) {
    let n = if quick { 1000 } else { 10_000 };
    let counting = Arc::new(Counting {
        inner: store,
        writes: std::sync::atomic::AtomicU64::new(0),
    });
    let store: Arc<dyn Store> = counting.clone();
    let interval = Duration::from_millis(250);
    let hub = Hub::with_store(
        Registry::empty(),
        HubConfig {
            persist_interval: interval,
            ..HubConfig::default()
        },
        Arc::clone(&store),
    );
    let t = Instant::now();
    populate(&hub, n, 20);
    hub.flush_store();
    let initial = t.elapsed();
    // Sustained: every session changes continuously for 5 s; writes coalesce.
    let handles: Vec<_> = (0..n)
        .map(|s| {
            hub.begin_attempt(request(&format!("session-{s:05}")))
                .expect("begin")
        })
        .collect();
    let t = Instant::now();
    let writes_before = counting.writes.load(std::sync::atomic::Ordering::Relaxed);
    let mut published = 0u64;
    let mut i = 0usize;
    while t.elapsed() < Duration::from_secs(5) {
        for handle in &handles {
            if handle.sink.publish(evidence(i)).is_ok() {
                published += 1;
            }
        }
        i += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    hub.flush_blocking();
    hub.flush_store();
    let elapsed = t.elapsed().as_secs_f64();
    let writes = counting.writes.load(std::sync::atomic::Ordering::Relaxed) - writes_before;
    // Lag: one change, then poll the store until its revision is there.
    let probe = "session-00000";
    let handle = hub.begin_attempt(request(probe)).expect("begin");
    hub.flush_blocking();
    let want = hub.snapshot(probe).expect("live").revision;
    let t = Instant::now();
    let _ = handle.sink.publish(evidence(1));
    let lag = loop {
        let stored = store
            .load_all()
            .ok()
            .and_then(|l| l.histories.into_iter().find(|h| h.session_id == probe))
            .map_or(0, |h| h.revision);
        if stored >= want {
            break t.elapsed();
        }
        if t.elapsed() > Duration::from_secs(30) {
            break t.elapsed();
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    println!(
        "| {name} | {n} | {:.1} s | {:.0} events/s in, {:.0} session rows written/s (coalesced, interval {} ms) | {} ms | {:.1} KiB | {} | {} |",
        initial.as_secs_f64(),
        published as f64 / elapsed,
        writes as f64 / elapsed,
        interval.as_millis(),
        lag.as_millis(),
        size() as f64 / 1024.0 / n as f64,
        hub.store_failures(),
        hub.store_stale_refusals(),
    );
}

fn main() {
    // `cargo bench` passes `--bench`; `-- quick` shrinks the run.
    let quick = std::env::args().any(|a| a == "quick");
    println!(
        "# Hub and store scale ({})",
        if quick { "quick" } else { "full" }
    );
    memory(quick);
    publish_latency(quick);
    delivery(quick);
    growth();

    println!("\n## 5. Write-through\n");
    println!(
        "| store | sessions | initial write of all | sustained | change → row lag | bytes per session | failures | stale |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("scale.db");
    let sqlite = Arc::new(tether_store::SqliteStore::open(&path).expect("sqlite"));
    let size_path = path.clone();
    write_through("SQLite", sqlite, quick, move || {
        let wal = size_path.with_extension("db-wal");
        std::fs::metadata(&size_path).map_or(0, |m| m.len())
            + std::fs::metadata(&wal).map_or(0, |m| m.len())
    });
    match std::env::var("TETHER_TEST_POSTGRES") {
        Ok(url) if !url.is_empty() => {
            let pg = Arc::new(tether_store::PostgresStore::connect(&url).expect("postgres"));
            // A clean table before (so the size is this run's) and after (so a
            // shared database is left as it was found).
            let clean = |url: &str| {
                let _ = std::process::Command::new("psql")
                    .args([
                        "-X",
                        "-q",
                        "-c",
                        "DELETE FROM attachment_history WHERE session_id LIKE 'session-%'",
                    ])
                    .arg(url)
                    .status();
            };
            clean(&url);
            let size_url = url.clone();
            write_through("PostgreSQL", pg, quick, move || {
                std::process::Command::new("psql")
                    .args([
                        "-X",
                        "-At",
                        "-c",
                        "SELECT pg_total_relation_size('attachment_history')",
                    ])
                    .arg(&size_url)
                    .output()
                    .ok()
                    .and_then(|o| String::from_utf8(o.stdout).ok())
                    .and_then(|s| s.trim().parse().ok())
                    .unwrap_or(0)
            });
            clean(&url);
        }
        _ => println!("| PostgreSQL | skipped: TETHER_TEST_POSTGRES is not set | | | | | | |"),
    }
}
