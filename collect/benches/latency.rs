//! The receiver's answer latency under a steady load: 1 000 export requests
//! per second (a 16-record protobuf log batch each, over kept-alive
//! connections from four clients) for five seconds, with a consumer
//! draining the queue as a host would. Prints p50, p99 and max; figures go
//! to docs/PERFORMANCE.md. (A plain `main`: criterion measures throughput,
//! not a paced load.)

use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
use prost::Message;
use tether_collect::{Receiver, ReceiverConfig};

const RATE: u64 = 1_000;
const SECONDS: u64 = 5;
const CLIENTS: u64 = 4;

fn body() -> Vec<u8> {
    let attribute = |k: &str, v: &str| KeyValue {
        key: k.into(),
        value: Some(AnyValue {
            value: Some(any_value::Value::StringValue(v.into())),
        }),
        ..KeyValue::default()
    };
    ExportLogsServiceRequest {
        resource_logs: vec![ResourceLogs {
            scope_logs: vec![ScopeLogs {
                log_records: (0..16)
                    .map(|_| LogRecord {
                        attributes: vec![
                            attribute("event.name", "mcp_server_connection"),
                            attribute("status", "connected"),
                            attribute("transport_type", "stdio"),
                        ],
                        ..LogRecord::default()
                    })
                    .collect(),
                ..ScopeLogs::default()
            }],
            ..ResourceLogs::default()
        }],
    }
    .encode_to_vec()
}

fn main() {
    // `cargo bench` passes `--bench`; a plain run works too.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let (receiver, batches) = Receiver::new(ReceiverConfig::default());
        let running = receiver
            .serve("127.0.0.1:0".parse().expect("addr"))
            .await
            .expect("serve");
        let consumer = std::thread::spawn(move || {
            let mut items = 0u64;
            while let Some(batch) = batches.next(Duration::from_secs(2)) {
                items += batch.items();
            }
            items
        });
        let url = format!("{}/v1/logs", running.endpoint());
        let bearer = receiver.token().bearer();
        let body = body();
        let per_client = RATE * SECONDS / CLIENTS;
        let gap = Duration::from_micros(1_000_000 * CLIENTS / RATE);
        let mut tasks = Vec::new();
        for _ in 0..CLIENTS {
            let (url, bearer, body) = (url.clone(), bearer.clone(), body.clone());
            tasks.push(tokio::spawn(async move {
                let client = reqwest::Client::new();
                let start = Instant::now();
                let mut samples = Vec::with_capacity(per_client as usize);
                for i in 0..per_client {
                    // Paced: each request leaves at its slot, late or not.
                    let slot = start + gap * u32::try_from(i).expect("slot");
                    tokio::time::sleep_until(slot.into()).await;
                    let sent = Instant::now();
                    let status = client
                        .post(&url)
                        .header("content-type", "application/x-protobuf")
                        .header("authorization", &bearer)
                        .body(body.clone())
                        .send()
                        .await
                        .map(|r| r.status().as_u16())
                        .unwrap_or(0);
                    samples.push((sent.elapsed(), status));
                }
                samples
            }));
        }
        let mut all = Vec::new();
        for task in tasks {
            all.extend(task.await.expect("client"));
        }
        running.shutdown().await;
        let items = consumer.join().expect("consumer");
        let ok = all.iter().filter(|(_, s)| *s == 200).count();
        let mut times: Vec<Duration> = all.iter().map(|(t, _)| *t).collect();
        times.sort_unstable();
        let pick = |q: f64| times[((times.len() as f64 - 1.0) * q) as usize];
        println!(
            "collect/latency at {RATE} req/s for {SECONDS} s: n={} ok={ok} p50={:?} p99={:?} p99.9={:?} max={:?}; {items} records consumed",
            times.len(),
            pick(0.50),
            pick(0.99),
            pick(0.999),
            times[times.len() - 1],
        );
    });
}
