//! Core benchmarks: reducer throughput on one thread, and sink publish latency
//! with 8 concurrent publishers. Figures go to docs/PERFORMANCE.md.

use std::hint::black_box;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tether_core::history::AttachmentHistory;
use tether_core::hub::{AttemptRequest, Hub, HubConfig};
use tether_core::model::{ClientInfo, Evidence, Timestamp};
use tether_core::reducer::{AttemptStart, HistoryEvent, PlannedRow, reduce};
use tether_core::registry::Registry;
use tether_core::vocab::{DecisionKind, EvidenceKind, ServerSource, Transport, Trigger};
use tether_core::{DriveMode, Endpoint, ServerSpec};

const SERVERS: [&str; 3] = ["kandev", "github", "files"];

fn begun() -> AttachmentHistory {
    let mut h = AttachmentHistory::new("task", "session");
    let start = AttemptStart {
        attempt_id: "a".into(),
        task_id: "task".into(),
        session_id: "session".into(),
        execution_id: "exec".into(),
        agent_kind: "claude-agent".into(),
        agent_id: None,
        agent_profile_id: None,
        trigger: Trigger::SessionNew,
        at: Timestamp(0),
        servers: SERVERS
            .iter()
            .map(|n| PlannedRow {
                name: (*n).into(),
                source: ServerSource::Profile,
                transport: Transport::Http,
                target: "http://127.0.0.1:1".into(),
                decision: DecisionKind::Deliver,
                reason_code: None,
                summary: None,
                note: None,
            })
            .collect(),
    };
    reduce(&mut h, &HistoryEvent::Begin(start)).expect("begin");
    h
}

/// A realistic mix: connections come and go, tools are listed and called.
fn events(n: usize) -> Vec<HistoryEvent> {
    (0..n)
        .map(|i| {
            let server = SERVERS[i % SERVERS.len()];
            let conn = format!("conn-{}", i / 50);
            let at = Timestamp(1 + i as u64);
            let ev = match i % 10 {
                0 => Evidence::new(EvidenceKind::InitializeObserved, at).client(ClientInfo {
                    name: "claude-code".into(),
                    version: Some("2.0.0".into()),
                    protocol_version: Some("2025-06-18".into()),
                }),
                1 => Evidence::new(EvidenceKind::ToolsListObserved, at).tools(12),
                9 => Evidence::new(EvidenceKind::ConnectionClosed, at),
                _ => Evidence::new(EvidenceKind::ToolCallObserved, at).tool_call("echo", true),
            };
            HistoryEvent::Observe {
                session_id: "session".into(),
                attempt_id: "a".into(),
                evidence: ev.server(server).connection(conn),
            }
        })
        .collect()
}

fn reducer_throughput(c: &mut Criterion) {
    const N: usize = 10_000;
    let base = begun();
    let evs = events(N);
    let mut group = c.benchmark_group("reducer");
    group.throughput(Throughput::Elements(N as u64));
    group.bench_function("reduce_10k_mixed_events", |b| {
        b.iter(|| {
            let mut h = base.clone();
            for ev in &evs {
                let _ = black_box(reduce(&mut h, ev));
            }
            h
        })
    });
    group.finish();
}

fn hub_with_attempt(capacity: usize) -> (Hub, tether_core::hub::EvidenceSink) {
    let hub = Hub::with_config(
        Registry::empty(),
        HubConfig {
            queue_capacity: capacity,
            batch_limit: 512,
            ..HubConfig::default()
        },
    );
    let spec = ServerSpec::new(
        "kandev",
        ServerSource::Host,
        Endpoint::Stdio {
            command: "tether-bridge".into(),
            args: vec![],
            env: vec![],
            cwd: None,
        },
    );
    let req = AttemptRequest::new(
        "t",
        "s",
        "e",
        "bench",
        DriveMode::Acp,
        Trigger::Probe,
        vec![spec],
    );
    let handle = hub.begin_attempt(req).expect("begin");
    (hub, handle.sink)
}

fn tool_call(i: u64) -> Evidence {
    Evidence::new(EvidenceKind::ToolCallObserved, Timestamp(i))
        .server("kandev")
        .connection("c")
        .tool_call("echo", true)
}

fn sink_publish_latency(c: &mut Criterion) {
    const PUBLISHERS: usize = 8;
    let (hub, sink) = hub_with_attempt(4096);
    let mut group = c.benchmark_group("sink");
    group.bench_function("publish_8_concurrent_publishers", |b| {
        b.iter_custom(|iters| {
            let barrier = Arc::new(Barrier::new(PUBLISHERS));
            let threads: Vec<_> = (0..PUBLISHERS)
                .map(|_| {
                    let sink = sink.clone();
                    let barrier = Arc::clone(&barrier);
                    std::thread::spawn(move || {
                        barrier.wait();
                        let start = Instant::now();
                        for i in 0..iters {
                            let _ = black_box(sink.publish(tool_call(i)));
                        }
                        start.elapsed()
                    })
                })
                .collect();
            let total: Duration = threads.into_iter().map(|t| t.join().expect("join")).sum();
            // Mean time one publisher spends per publish while 7 others publish too.
            total / PUBLISHERS as u32
        })
    });
    group.finish();
    hub.flush_blocking();
    percentiles(&sink, PUBLISHERS);
}

/// Prints p50/p99/max of single publish calls under 8-way contention, and how
/// many were dropped by a full queue (never blocked).
fn percentiles(sink: &tether_core::hub::EvidenceSink, publishers: usize) {
    const PER_THREAD: usize = 50_000;
    let before = sink.dropped();
    let barrier = Arc::new(Barrier::new(publishers));
    let threads: Vec<_> = (0..publishers)
        .map(|_| {
            let sink = sink.clone();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let mut samples = Vec::with_capacity(PER_THREAD);
                barrier.wait();
                for i in 0..PER_THREAD {
                    let ev = tool_call(i as u64);
                    let t = Instant::now();
                    let _ = black_box(sink.publish(ev));
                    samples.push(t.elapsed().as_nanos() as u64);
                }
                samples
            })
        })
        .collect();
    let mut all: Vec<u64> = threads
        .into_iter()
        .flat_map(|t| t.join().expect("join"))
        .collect();
    all.sort_unstable();
    let pick = |q: f64| all[((all.len() as f64 - 1.0) * q) as usize];
    println!(
        "sink/publish_8_concurrent_publishers single calls: n={} p50={}ns p99={}ns p99.9={}ns max={}ns dropped={}",
        all.len(),
        pick(0.50),
        pick(0.99),
        pick(0.999),
        all[all.len() - 1],
        sink.dropped() - before
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(5));
    targets = reducer_throughput, sink_publish_latency
}
criterion_main!(benches);
