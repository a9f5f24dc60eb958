//! tools/call round trips through the sentinel with observation on, against
//! the same rmcp server without observation, in one run. Both are served over
//! an in-memory duplex pipe, so the difference is observation alone.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use tether_core::registry::Registry;
use tether_core::vocab::{ServerSource, Trigger};
use tether_core::{DriveMode, Endpoint, ServerSpec};
use tether_hub::{AttemptRequest, Hub};
use tether_kandev_endpoint::report::{Observation, ReportingHandler};
use tether_kandev_endpoint::{SENTINEL_SERVER, SENTINEL_TOOL, Sentinel};
use tokio::runtime::Runtime;

type Client = RunningService<RoleClient, ClientConfig>;

fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("bench", "1"),
    )
}

async fn plain() -> Client {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = Sentinel.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    client_config()
        .serve(client_io)
        .await
        .expect("plain client")
}

async fn observed(hub: &Hub) -> Client {
    let observation = Observation::new(SENTINEL_SERVER);
    let spec = ServerSpec::new(
        SENTINEL_SERVER,
        ServerSource::Sentinel,
        Endpoint::Stdio {
            command: "x".into(),
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
    observation.bind(hub.begin_attempt(req).expect("begin").sink);
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let handler = ReportingHandler::new(Sentinel, observation.connection());
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    client_config()
        .serve(client_io)
        .await
        .expect("observed client")
}

async fn call(client: &Client) {
    let mut args = serde_json::Map::new();
    args.insert("text".into(), "ping".into());
    let r = client
        .call_tool(CallToolRequestParams::new(SENTINEL_TOOL).with_arguments(args))
        .await
        .expect("call");
    black_box(r);
}

fn roundtrip(c: &mut Criterion) {
    let rt = Runtime::new().expect("runtime");
    let hub = Arc::new(Hub::new(Registry::empty()));
    let (plain_client, observed_client) =
        rt.block_on(async { (plain().await, observed(&hub).await) });

    let mut group = c.benchmark_group("tools_call_roundtrip");
    group.bench_function("plain", |b| b.to_async(&rt).iter(|| call(&plain_client)));
    group.bench_function("observed", |b| {
        b.to_async(&rt).iter(|| call(&observed_client))
    });
    group.finish();

    // p50/p99 and the ratio, alternating blocks so drift hits both alike.
    let mut plain_ns = Vec::new();
    let mut observed_ns = Vec::new();
    rt.block_on(async {
        for _ in 0..40 {
            for (client, out) in [
                (&plain_client, &mut plain_ns),
                (&observed_client, &mut observed_ns),
            ] {
                for _ in 0..500 {
                    let t = Instant::now();
                    call(client).await;
                    out.push(t.elapsed().as_nanos() as u64);
                }
            }
        }
    });
    let stats = |v: &mut Vec<u64>| {
        v.sort_unstable();
        let mean = v.iter().sum::<u64>() as f64 / v.len() as f64;
        (mean, v[v.len() / 2], v[v.len() * 99 / 100])
    };
    let (pm, p50, p99) = stats(&mut plain_ns);
    let (om, o50, o99) = stats(&mut observed_ns);
    println!(
        "tools_call_roundtrip over duplex, {} calls each: plain mean {:.1}µs p50 {:.1}µs p99 {:.1}µs | observed mean {:.1}µs p50 {:.1}µs p99 {:.1}µs | ratio mean {:.3} p50 {:.3}",
        plain_ns.len(),
        pm / 1e3,
        p50 as f64 / 1e3,
        p99 as f64 / 1e3,
        om / 1e3,
        o50 as f64 / 1e3,
        o99 as f64 / 1e3,
        om / pm,
        o50 as f64 / p50 as f64,
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(5));
    targets = roundtrip
}
criterion_main!(benches);
