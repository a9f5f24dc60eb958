//! Hub benchmark: sink publish latency with 8 concurrent publishers (a
//! publish is an atomic load and a `try_send`). Figures go to
//! docs/PERFORMANCE.md.

use std::hint::black_box;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use tether_core::model::{Evidence, Timestamp};
use tether_core::registry::Registry;
use tether_core::vocab::{EvidenceKind, ServerSource, Trigger};
use tether_core::{DriveMode, Endpoint, ServerSpec};
use tether_hub::{AttemptRequest, EvidenceSink, Hub, HubConfig};

fn hub_with_attempt(capacity: usize) -> (Hub, EvidenceSink) {
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
        tether_core::Owner {
            task: "t".into(),
            session: "s".into(),
            execution: "e".into(),
        },
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
fn percentiles(sink: &EvidenceSink, publishers: usize) {
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
    targets = sink_publish_latency
}
criterion_main!(benches);
