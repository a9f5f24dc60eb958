//! Back-pressure: `tools/call` round trips through the observed sentinel with
//! OpenTelemetry export off, against export on to a collector that accepts
//! connections and never answers. Same process, same run, alternating blocks.
//! Export must never slow the agent's MCP traffic: goal ≤ 1.05× at p50.

use std::hint::black_box;
use std::net::TcpListener;
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
use tether_otel::{OtelConfig, TetherOtel};
use tokio::runtime::Runtime;

type Client = RunningService<RoleClient, ClientConfig>;

/// A collector that takes every connection and never answers.
fn hanging_collector() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    format!("http://{addr}")
}

async fn observed(hub: &Hub, otel: Option<&TetherOtel>) -> Client {
    let observation = Observation::new(SENTINEL_SERVER);
    if let Some(otel) = otel {
        observation.on_served(otel.served_observer());
    }
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
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("bench", "1"),
    )
    .serve(client_io)
    .await
    .expect("client")
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

fn export_roundtrip(c: &mut Criterion) {
    let rt = Runtime::new().expect("runtime");
    let mut config = OtelConfig::new("bench").with_endpoint(hanging_collector());
    config.export_timeout = Duration::from_secs(2);
    config.metric_interval = Duration::from_secs(1);
    let otel = TetherOtel::start(config)
        .expect("start")
        .expect("export on");
    let hub_off = Arc::new(Hub::new(Registry::empty()));
    let hub_on = Arc::new(Hub::new(Registry::empty()));
    otel.watch_hub(&hub_on);
    let (off, on) = rt.block_on(async {
        (
            observed(&hub_off, None).await,
            observed(&hub_on, Some(&otel)).await,
        )
    });

    let mut group = c.benchmark_group("tools_call_roundtrip_export");
    group.bench_function("export_off", |b| b.to_async(&rt).iter(|| call(&off)));
    group.bench_function("export_on_hanging_collector", |b| {
        b.to_async(&rt).iter(|| call(&on))
    });
    group.finish();

    // Alternating blocks (ABBA order, so neither side always goes first);
    // the ratio is the median of per-pair block ratios, which machine drift
    // (this box has two cores) moves far less than pooled percentiles.
    let mut off_ns = Vec::new();
    let mut on_ns = Vec::new();
    let mut block_ratios = Vec::new();
    rt.block_on(async {
        for round in 0..200 {
            let mut medians = [0u64; 2];
            let order: [usize; 2] = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            for side in order {
                let client = if side == 0 { &off } else { &on };
                let mut block = Vec::with_capacity(100);
                for _ in 0..100 {
                    let t = Instant::now();
                    call(client).await;
                    block.push(t.elapsed().as_nanos() as u64);
                }
                let out = if side == 0 { &mut off_ns } else { &mut on_ns };
                out.extend_from_slice(&block);
                block.sort_unstable();
                medians[side] = block[block.len() / 2];
            }
            block_ratios.push(medians[1] as f64 / medians[0] as f64);
        }
    });
    block_ratios.sort_by(f64::total_cmp);
    let stats = |v: &mut Vec<u64>| {
        v.sort_unstable();
        let mean = v.iter().sum::<u64>() as f64 / v.len() as f64;
        (mean, v[v.len() / 2], v[v.len() * 99 / 100])
    };
    let (fm, f50, f99) = stats(&mut off_ns);
    let (nm, n50, n99) = stats(&mut on_ns);
    println!(
        "tools_call_roundtrip, {} calls each: export off mean {:.1}µs p50 {:.1}µs p99 {:.1}µs | export on (hanging collector) mean {:.1}µs p50 {:.1}µs p99 {:.1}µs | ratio p50 {:.3}, median of block ratios {:.3} | export queue drops {}",
        off_ns.len(),
        fm / 1e3,
        f50 as f64 / 1e3,
        f99 as f64 / 1e3,
        nm / 1e3,
        n50 as f64 / 1e3,
        n99 as f64 / 1e3,
        n50 as f64 / f50 as f64,
        block_ratios[block_ratios.len() / 2],
        otel.dropped(),
    );
    drop(off);
    drop(on);
    // Shutting down against a hanging collector is bounded by the timeout.
    let t = Instant::now();
    let problems = otel.shutdown();
    println!(
        "shutdown against the hanging collector: {:.1}s, {} signal(s) timed out",
        t.elapsed().as_secs_f64(),
        problems.len()
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(5));
    targets = export_roundtrip
}
criterion_main!(benches);
