//! Core benchmark: reducer throughput on one thread (the hub's sink publish
//! latency is `hub/benches/sink.rs`). Figures go to docs/PERFORMANCE.md.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tether_core::history::AttachmentHistory;
use tether_core::model::{ClientInfo, Evidence, Timestamp};
use tether_core::reducer::{
    AttemptKey, AttemptStart, HistoryEvent, PlannedRow, begin_attempt, reduce,
};
use tether_core::vocab::{DecisionKind, EvidenceKind, ServerSource, Transport, Trigger};

const SERVERS: [&str; 3] = ["kandev", "github", "files"];

fn begun() -> (AttachmentHistory, AttemptKey) {
    let mut h = AttachmentHistory::new("task", "session");
    let start = AttemptStart {
        attempt_id: "a".into(),
        owner: tether_core::Owner {
            task: "task".into(),
            session: "session".into(),
            execution: "exec".into(),
        },
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
    let key = begin_attempt(&mut h, &start).expect("begin");
    (h, key)
}

/// A realistic mix: connections come and go, tools are listed and called.
fn events(key: &AttemptKey, n: usize) -> Vec<HistoryEvent> {
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
                key: key.clone(),
                evidence: ev.server(server).connection(conn),
            }
        })
        .collect()
}

fn reducer_throughput(c: &mut Criterion) {
    const N: usize = 10_000;
    let (base, key) = begun();
    let evs = events(&key, N);
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

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(5));
    targets = reducer_throughput
}
criterion_main!(benches);
