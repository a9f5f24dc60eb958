//! The live status service under load (issue 15), printed as a table for
//! docs/PERFORMANCE.md: the latency from `EvidenceSink::publish` to the
//! change arriving at a page's stream (a real HTTP client reading the SSE
//! bytes the page's script parses), p50 and p99, as the number of sessions
//! the service streams grows. Every session is busy: each gets a change
//! every 250 ms, and every stream is read to the end, as an open page does.
//!
//! `cargo bench -p tether-tests --bench web_latency` (add `-- quick` for a
//! smaller run). Not criterion: each row is one careful measurement.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tether_core::model::{Evidence, Timestamp};
use tether_core::vocab::{EvidenceKind, ServerSource, Trigger};
use tether_core::{DriveMode, Endpoint, ServerSpec};
use tether_hub::{AttemptRequest, EvidenceSink, Hub};
use tether_tests::acp_hub as hub;
use tether_web::StatusService;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

fn servers() -> Vec<ServerSpec> {
    ["kandev", "github", "files"]
        .iter()
        .map(|name| {
            ServerSpec::new(
                *name,
                ServerSource::Profile,
                Endpoint::Http {
                    url: format!("http://127.0.0.1:7000/{name}"),
                    headers: vec![],
                },
            )
        })
        .collect()
}

fn begin(hub: &Hub, session: &str) -> EvidenceSink {
    let mut request = AttemptRequest::new(
        tether_core::Owner {
            task: "bench".into(),
            session: session.into(),
            execution: "exec".into(),
        },
        "bench-agent",
        DriveMode::Acp,
        Trigger::SessionNew,
        servers(),
    );
    request.capabilities.http = Some(true);
    hub.begin_attempt(request).expect("attempt").sink
}

/// Opens a session's stream and reads it to the end; reports each time a
/// `needle` (sent on `probes`) appears in the bytes.
async fn reader(
    addr: std::net::SocketAddr,
    token: String,
    session: String,
    mut probes: Option<mpsc::UnboundedReceiver<(String, Instant)>>,
    seen: Option<mpsc::UnboundedSender<Duration>>,
    stop: Arc<AtomicBool>,
) {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let request = format!(
        "GET /api/v1/sessions/{session}/events HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut buf = vec![0u8; 256 * 1024];
    let mut window: Vec<u8> = Vec::new();
    let mut waiting: Option<(String, Instant)> = None;
    while !stop.load(Ordering::Relaxed) {
        let n = match tokio::time::timeout(Duration::from_millis(50), stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => n,
            Err(_) => continue,
        };
        // A probe is queued before its publish, so it is here before its bytes.
        if waiting.is_none()
            && let Some(p) = probes.as_mut()
            && let Ok(next) = p.try_recv()
        {
            waiting = Some(next);
        }
        if let Some((needle, at)) = &waiting {
            window.extend_from_slice(&buf[..n]);
            let found = window.windows(needle.len()).any(|w| w == needle.as_bytes());
            if found {
                if let Some(seen) = &seen {
                    let _ = seen.send(at.elapsed());
                }
                waiting = None;
                window.clear();
            } else if window.len() > needle.len() {
                window.drain(..window.len() - needle.len());
            }
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

async fn measure(sessions: usize, probes: usize) -> (Duration, Duration) {
    let hub = hub();
    let sinks: Vec<EvidenceSink> = (0..sessions)
        .map(|i| begin(&hub, &format!("s{i:05}")))
        .collect();
    let running = StatusService::for_hub(Arc::clone(&hub), None)
        .serve("127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("serve");
    let addr = running.addr();
    let token = running.token().secret().to_owned();
    let stop = Arc::new(AtomicBool::new(false));
    let (probe_tx, probe_rx) = mpsc::unbounded_channel();
    let (seen_tx, mut seen_rx) = mpsc::unbounded_channel();
    let mut tasks = Vec::new();
    let mut probe_rx = Some(probe_rx);
    for i in 0..sessions {
        let (probes, seen) = if i == 0 {
            (probe_rx.take(), Some(seen_tx.clone()))
        } else {
            (None, None)
        };
        tasks.push(tokio::spawn(reader(
            addr,
            token.clone(),
            format!("s{i:05}"),
            probes,
            seen,
            Arc::clone(&stop),
        )));
    }
    // Background: every other session changes every 250 ms (spread evenly).
    let churn = {
        let sinks = sinks.clone();
        let stop = Arc::clone(&stop);
        tokio::spawn(async move {
            let per_tick = (sinks.len().saturating_sub(1) / 25).max(1);
            let mut next = 1usize;
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                for _ in 0..per_tick {
                    if sinks.len() > 1 {
                        n += 1;
                        let _ = sinks[next].publish(
                            Evidence::new(EvidenceKind::ToolCallObserved, Timestamp(n))
                                .server("github")
                                .tool_call(format!("churn_{n}"), true),
                        );
                        next = if next + 1 >= sinks.len() { 1 } else { next + 1 };
                    }
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut latencies = Vec::with_capacity(probes);
    for i in 0..probes {
        let needle = format!("probe_tool_{i}_");
        let at = Instant::now();
        probe_tx.send((needle.clone(), at)).expect("probe");
        sinks[0]
            .publish(
                Evidence::new(
                    EvidenceKind::ToolCallObserved,
                    Timestamp(10_000_000 + i as u64),
                )
                .server("kandev")
                .tool_call(needle, true),
            )
            .expect("publish");
        match tokio::time::timeout(Duration::from_secs(10), seen_rx.recv()).await {
            Ok(Some(latency)) => latencies.push(latency),
            _ => panic!("probe {i} never reached the stream"),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.store(true, Ordering::Relaxed);
    churn.abort();
    for t in tasks {
        t.abort();
    }
    running.shutdown().await;
    latencies.sort();
    (percentile(&latencies, 0.5), percentile(&latencies, 0.99))
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let sizes: &[usize] = if quick {
        &[1, 10, 100]
    } else {
        &[1, 10, 100, 500, 1000, 2000, 4000]
    };
    let probes = if quick { 50 } else { 200 };
    println!(
        "publish → event at the page's stream (SSE over loopback), every session busy (1 change / 250 ms)"
    );
    println!("| streamed sessions | p50 | p99 | p50 vs 1 session |");
    println!("|---:|---:|---:|---:|");
    let mut base = None;
    for &n in sizes {
        let (p50, p99) = runtime.block_on(measure(n, probes));
        let base = *base.get_or_insert(p50);
        println!(
            "| {n} | {:.2} ms | {:.2} ms | {:.1}× |",
            p50.as_secs_f64() * 1000.0,
            p99.as_secs_f64() * 1000.0,
            p50.as_secs_f64() / base.as_secs_f64()
        );
    }
}
