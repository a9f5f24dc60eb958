//! Memory under a burst: 64 requests at once, then 64 one by one, each a gzip'd log batch that
//! decompresses to just under the 8 MiB cap (a million-odd attributes), at
//! a receiver whose consumer takes nothing. Prints the statuses and the
//! process's peak resident memory before and after (`VmHWM`); figures go to
//! docs/PERFORMANCE.md. (A plain `main`, not criterion.)

use std::io::Write;

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
use prost::Message;
use tether_collect::{Receiver, ReceiverConfig};

const BURST: usize = 64;

fn peak_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// A log batch that decodes to about `target` bytes of protobuf.
fn near_cap(target: usize) -> Vec<u8> {
    let attribute = KeyValue {
        key: "k".into(),
        value: Some(AnyValue {
            value: Some(any_value::Value::StringValue("v".into())),
        }),
        ..KeyValue::default()
    };
    let per = attribute.encoded_len() + 2;
    let request = ExportLogsServiceRequest {
        resource_logs: vec![ResourceLogs {
            scope_logs: vec![ScopeLogs {
                log_records: vec![LogRecord {
                    attributes: vec![attribute; target / per],
                    ..LogRecord::default()
                }],
                ..ScopeLogs::default()
            }],
            ..ResourceLogs::default()
        }],
    };
    let plain = request.encode_to_vec();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&plain).expect("gzip");
    let body = gz.finish().expect("gzip");
    println!(
        "payload: {} attributes, {} B decompressed, {} B sent",
        target / per,
        plain.len(),
        body.len()
    );
    body
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let config = ReceiverConfig::default();
    let body = near_cap(config.decompressed_cap - 64 * 1024);
    let before = peak_kib();
    runtime.block_on(async {
        // The consumer takes nothing: every accepted batch stays queued.
        let (receiver, _batches) = Receiver::new(config);
        let running = receiver
            .serve("127.0.0.1:0".parse().expect("addr"))
            .await
            .expect("serve");
        let url = format!("{}/v1/logs", running.endpoint());
        let bearer = receiver.token().bearer();
        let client = reqwest::Client::new();
        let mut sends = Vec::new();
        for _ in 0..BURST {
            let request = client
                .post(&url)
                .header("content-type", "application/x-protobuf")
                .header("content-encoding", "gzip")
                .header("authorization", &bearer)
                .body(body.clone());
            sends.push(tokio::spawn(async move {
                request.send().await.map(|r| r.status().as_u16()).unwrap_or(0)
            }));
        }
        let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
        for send in sends {
            *statuses.entry(send.await.expect("send")).or_default() += 1;
        }
        let stats = receiver.stats();
        println!(
            "collect/burst of {BURST} at once: statuses {statuses:?}; queued batches {}; peak RSS {} MiB before, {} MiB after",
            stats.batches,
            before / 1024,
            peak_kib() / 1024
        );
        // Then one after another, still with no consumer: the queue's byte
        // budget, not its batch count, is what stops them.
        let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
        for _ in 0..BURST {
            let status = client
                .post(&url)
                .header("content-type", "application/x-protobuf")
                .header("content-encoding", "gzip")
                .header("authorization", &bearer)
                .body(body.clone())
                .send()
                .await
                .map(|r| r.status().as_u16())
                .unwrap_or(0);
            *statuses.entry(status).or_default() += 1;
        }
        println!(
            "collect/burst of {BURST} one by one: statuses {statuses:?}; queued batches {}; peak RSS {} MiB",
            receiver.stats().batches,
            peak_kib() / 1024
        );
        running.shutdown().await;
    });
}
