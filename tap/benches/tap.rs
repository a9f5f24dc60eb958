//! The tap's cost, paired against a direct connection to the same fake
//! model on 127.0.0.1: one small streamed answer (the added latency per
//! request, and the time to its first byte), and a long stream (throughput).
//! A third arm, `tap_attributed`, is a tap with the first-party plugins and
//! a hub, no server configured, sent Claude Code's headers: every request's
//! 40 `mcp__srv__…` tools are attributed by the naming alone, the session
//! begun, its row added and the evidence published, as `tether tap` does.
//! Memory with a stream's length is printed once, before the groups
//! (`VmHWM` after 16 MB and after 256 MB through the tap).

use std::time::Duration;

use axum::body::{Body, Bytes};
use criterion::{Criterion, criterion_group, criterion_main};
use futures::StreamExt;
use tether_core::registry::Registry;
use tether_tap::{Tap, TapConfig};

const EVENT: &[u8] = b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a token or two\"}}\n\n";

async fn fake_model() -> std::net::SocketAddr {
    let app = axum::Router::new().fallback(|uri: axum::http::Uri, _body: Bytes| async move {
        // `/long/N`: N MiB of events; anything else: six small events.
        let events = uri
            .path()
            .strip_prefix("/long/")
            .and_then(|n| n.parse::<usize>().ok())
            .map_or(6, |mib| mib * 1024 * 1024 / EVENT.len());
        let stream = futures::stream::iter(
            (0..events).map(|_| Ok::<_, std::io::Error>(Bytes::from_static(EVENT))),
        );
        axum::response::Response::builder()
            .header("content-type", "text/event-stream")
            .body(Body::from_stream(stream))
            .expect("response")
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    addr
}

fn request_body() -> String {
    let tools: Vec<_> = (0..40)
        .map(|i| serde_json::json!({"name": format!("mcp__srv__tool_{i}"), "description": "x".repeat(200),
            "input_schema": {"type": "object", "properties": {"a": {"type": "string"}}}}))
        .collect();
    serde_json::json!({"model": "claude-x", "stream": true, "tools": tools,
        "messages": [{"role": "user", "content": "y".repeat(20_000)}]})
    .to_string()
}

fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(str::to_owned)
        })
        .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    tether_first_party::link();
    let (direct, tapped, attributed, taps) = runtime.block_on(async {
        let addr = fake_model().await;
        let config = || TapConfig {
            upstream: Some(url::Url::parse(&format!("http://{addr}")).expect("url")),
            ..Default::default()
        };
        let tap = Tap::serve(
            config(),
            "127.0.0.1:0".parse().expect("addr"),
            Registry::empty(),
            None,
        )
        .await
        .expect("tap");
        let registry = Registry::with_static().expect("registry");
        let hub = std::sync::Arc::new(tether_hub::Hub::new(registry.clone()));
        let with = Tap::serve(
            config(),
            "127.0.0.1:0".parse().expect("addr"),
            registry,
            Some(hub),
        )
        .await
        .expect("tap");
        (
            format!("http://{addr}"),
            tap.base_url(),
            with.base_url(),
            (tap, with),
        )
    });
    let client = reqwest::Client::new();
    let body = request_body();
    let read_all = |base: String, path: &'static str| {
        let client = client.clone();
        let body = body.clone();
        async move {
            let r = client
                .post(format!("{base}{path}"))
                .header("user-agent", "claude-cli/2.1.197 (external, cli)")
                .header(
                    "x-claude-code-session-id",
                    "0f2ace92-9aec-4c38-8293-fa43595f3223",
                )
                .body(body)
                .send()
                .await
                .expect("send");
            let mut n = 0usize;
            let mut s = r.bytes_stream();
            while let Some(Ok(chunk)) = s.next().await {
                n += chunk.len();
            }
            n
        }
    };
    let first_byte = |base: String| {
        let client = client.clone();
        let body = body.clone();
        async move {
            let r = client
                .post(format!("{base}/v1/messages"))
                .header("user-agent", "claude-cli/2.1.197 (external, cli)")
                .header(
                    "x-claude-code-session-id",
                    "0f2ace92-9aec-4c38-8293-fa43595f3223",
                )
                .body(body)
                .send()
                .await
                .expect("send");
            let mut s = r.bytes_stream();
            s.next().await.map(|c| c.map(|b| b.len()).unwrap_or(0))
        }
    };

    let before = vm_hwm_kib();
    runtime.block_on(read_all(tapped.clone(), "/long/16"));
    let at_16 = vm_hwm_kib();
    runtime.block_on(read_all(tapped.clone(), "/long/256"));
    let at_256 = vm_hwm_kib();
    eprintln!(
        "memory (VmHWM, KiB): before {before}, after 16 MiB through the tap {at_16}, after 256 MiB {at_256}"
    );

    // Paired, interleaved: 2,000 requests each way, their percentiles.
    let bases = [direct.clone(), tapped.clone(), attributed.clone()];
    let mut times: [Vec<Duration>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for i in 0..6000 {
        let which = i % 3;
        let started = std::time::Instant::now();
        runtime.block_on(read_all(bases[which].clone(), "/v1/messages"));
        times[which].push(started.elapsed());
    }
    let pct = |v: &mut Vec<Duration>, p: f64| {
        v.sort();
        v[((v.len() as f64 - 1.0) * p) as usize]
    };
    let [mut d, mut t, mut a] = times;
    eprintln!(
        "latency per request (2,000 each, interleaved): direct p50 {:?} p99 {:?}; tap p50 {:?} p99 {:?}; tap with attribution p50 {:?} p99 {:?}",
        pct(&mut d, 0.5),
        pct(&mut d, 0.99),
        pct(&mut t, 0.5),
        pct(&mut t, 0.99),
        pct(&mut a, 0.5),
        pct(&mut a, 0.99)
    );

    // The attributed arm did attribute: evidence published, nothing dropped.
    let stats = runtime.block_on(async {
        taps.1.tap().settle().await;
        taps.1.tap().stats()
    });
    assert!(
        stats.evidence > 0 && stats.dropped == 0,
        "the attributed tap published nothing: {stats:?}"
    );
    eprintln!(
        "tap with attribution: {} requests recorded, {} evidence published, {} copies dropped",
        stats.observed, stats.evidence, stats.dropped
    );

    let mut group = c.benchmark_group("request");
    group.measurement_time(Duration::from_secs(8));
    for (name, base) in [
        ("direct", direct.clone()),
        ("tap", tapped.clone()),
        ("tap_attributed", attributed.clone()),
    ] {
        group.bench_function(name, |b| {
            b.to_async(&runtime)
                .iter(|| read_all(base.clone(), "/v1/messages"))
        });
    }
    group.finish();
    let mut group = c.benchmark_group("first_byte");
    group.measurement_time(Duration::from_secs(8));
    for (name, base) in [
        ("direct", direct.clone()),
        ("tap", tapped.clone()),
        ("tap_attributed", attributed),
    ] {
        group.bench_function(name, |b| {
            b.to_async(&runtime).iter(|| first_byte(base.clone()))
        });
    }
    group.finish();
    let mut group = c.benchmark_group("stream_32MiB");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.throughput(criterion::Throughput::Bytes(32 * 1024 * 1024));
    for (name, base) in [("direct", direct), ("tap", tapped)] {
        group.bench_function(name, |b| {
            b.to_async(&runtime)
                .iter(|| read_all(base.clone(), "/long/32"))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
