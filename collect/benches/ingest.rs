//! Receiver ingest on one core: how many log records per second the decode
//! step takes (protobuf, gzip'd protobuf, JSON), the floor every mapping
//! adds to. A corpus shaped like a harness's batches: 512 records of ten
//! attributes each, the size an OpenTelemetry SDK batch processor sends.
//! Figures go to docs/PERFORMANCE.md.

use std::hint::black_box;
use std::io::Write;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
use prost::Message;
use tether_collect::decode::{Encoding, Signal, decode, decompress};

const RECORDS: usize = 512;

fn text(key: &str, value: &str) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(AnyValue {
            value: Some(any_value::Value::StringValue(value.into())),
        }),
        ..KeyValue::default()
    }
}

fn corpus() -> ExportLogsServiceRequest {
    let record = |i: usize| LogRecord {
        time_unix_nano: 1_796_000_000_000_000_000 + i as u64,
        body: Some(AnyValue {
            value: Some(any_value::Value::StringValue(
                "claude_code.tool_result".into(),
            )),
        }),
        attributes: vec![
            text("event.name", "tool_result"),
            text("session.id", "0b5c6f8e-9d3a-4a57-b8f2-2f6d1f4b9c10"),
            text("tool_name", "mcp_tool"),
            text(
                "success",
                if i.is_multiple_of(7) { "false" } else { "true" },
            ),
            text("duration_ms", "131"),
            text("mcp_server_scope", "project"),
            text("status", "connected"),
            text("transport_type", "stdio"),
            text("server_scope", "user"),
            text("event.timestamp", "2026-12-01T16:00:00.000Z"),
        ],
        ..LogRecord::default()
    };
    ExportLogsServiceRequest {
        resource_logs: vec![ResourceLogs {
            resource: Some(opentelemetry_proto::tonic::resource::v1::Resource {
                attributes: vec![text("service.name", "claude-code")],
                ..Default::default()
            }),
            scope_logs: vec![ScopeLogs {
                log_records: (0..RECORDS).map(record).collect(),
                ..ScopeLogs::default()
            }],
            ..ResourceLogs::default()
        }],
    }
}

fn ingest(c: &mut Criterion) {
    let request = corpus();
    let proto = request.encode_to_vec();
    let json = serde_json::to_vec(&request).expect("json");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&proto).expect("gzip");
    let gzipped = gz.finish().expect("gzip");
    println!(
        "corpus: {RECORDS} records; protobuf {} B, gzip {} B, JSON {} B",
        proto.len(),
        gzipped.len(),
        json.len()
    );
    let cap = 8 * 1024 * 1024;
    let mut group = c.benchmark_group("ingest");
    group.throughput(Throughput::Elements(RECORDS as u64));
    group.bench_function("decode_protobuf", |b| {
        b.iter(|| black_box(decode(Signal::Logs, Encoding::Protobuf, black_box(&proto))))
    });
    group.bench_function("decode_gzip_protobuf", |b| {
        b.iter(|| {
            let plain = decompress(Some("gzip"), black_box(&gzipped), cap).expect("gzip");
            black_box(decode(Signal::Logs, Encoding::Protobuf, &plain))
        })
    });
    group.bench_function("decode_json", |b| {
        b.iter(|| black_box(decode(Signal::Logs, Encoding::Json, black_box(&json))))
    });
    // What the receiver adds before every decode: the estimate of what the
    // body decodes into (tether_collect::budget).
    let decoded_cap = 24 * 1024 * 1024;
    group.bench_function("estimate_protobuf", |b| {
        b.iter(|| {
            black_box(tether_collect::budget::estimate(
                Signal::Logs,
                Encoding::Protobuf,
                black_box(&proto),
                decoded_cap,
            ))
        })
    });
    group.bench_function("estimate_json", |b| {
        b.iter(|| {
            black_box(tether_collect::budget::estimate(
                Signal::Logs,
                Encoding::Json,
                black_box(&json),
                decoded_cap,
            ))
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(4));
    targets = ingest
}
criterion_main!(benches);
