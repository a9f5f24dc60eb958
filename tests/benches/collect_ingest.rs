//! The collector's whole ingest path on one thread: decode an OTLP/HTTP
//! logs body, flatten it into records, read each through the harness's
//! plugin mapping, and publish the evidence to a hub (whose drain reduces
//! it on its own thread, as in `tether collect`). Beside it, the decode-only
//! floor of the same bodies, so the ratio says what mapping and publishing
//! cost. The corpus is what Claude Code sends with tool details on: 512
//! records a batch, mixing `mcp_server_connection` (connected, failed),
//! `tool_result` and records no mapping reads, across 16 sessions of four
//! servers. Figures go to docs/PERFORMANCE.md.

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
use prost::Message;
use tether_collect::collector::Collector;
use tether_collect::decode::{Encoding, Signal, decode};
use tether_core::registry::Registry;
use tether_hub::{Hub, HubConfig};
use tether_tests as _;

const RECORDS: usize = 512;
const SERVERS: [&str; 4] = ["time", "github", "memory", "broken"];

fn text(key: &str, value: &str) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(AnyValue {
            value: Some(any_value::Value::StringValue(value.into())),
        }),
        ..KeyValue::default()
    }
}

fn record(i: usize) -> LogRecord {
    let session = format!("0b5c6f8e-9d3a-4a57-b8f2-{:012x}", i % 16);
    let server = SERVERS[i % SERVERS.len()];
    let mut attributes = vec![
        text("session.id", &session),
        text("event.timestamp", "2026-12-01T16:00:00.000Z"),
        text("duration_ms", "131"),
    ];
    match i % 4 {
        0 => attributes.extend([
            text("event.name", "mcp_server_connection"),
            text("server_name", server),
            text(
                "status",
                if server == "broken" {
                    "failed"
                } else {
                    "connected"
                },
            ),
            text("error_code", "ENOENT"),
            text("transport_type", "stdio"),
        ]),
        1 | 2 => attributes.extend([
            text("event.name", "tool_result"),
            text("tool_name", "mcp_tool"),
            text(
                "success",
                if i.is_multiple_of(7) { "false" } else { "true" },
            ),
            text(
                "tool_parameters",
                &format!(r#"{{"mcp_server_name":"{server}","mcp_tool_name":"get_current_time"}}"#),
            ),
            text("tool_input", r#"{"timezone":"UTC"}"#),
        ]),
        _ => attributes.extend([
            text("event.name", "api_request"),
            text("model", "claude-opus-4-8"),
            text("input_tokens", "10"),
        ]),
    }
    LogRecord {
        time_unix_nano: 1_796_000_000_000_000_000 + i as u64 * 1_000_000,
        attributes,
        ..LogRecord::default()
    }
}

fn body() -> Vec<u8> {
    ExportLogsServiceRequest {
        resource_logs: vec![ResourceLogs {
            resource: Some(opentelemetry_proto::tonic::resource::v1::Resource {
                attributes: vec![
                    text("service.name", "claude-code"),
                    text("service.version", "2.1.197"),
                ],
                ..Default::default()
            }),
            scope_logs: vec![ScopeLogs {
                log_records: (0..RECORDS).map(record).collect(),
                ..ScopeLogs::default()
            }],
            ..ResourceLogs::default()
        }],
    }
    .encode_to_vec()
}

fn ingest(c: &mut Criterion) {
    let bytes = body();
    let mut group = c.benchmark_group("collect_ingest");
    group.throughput(Throughput::Elements(RECORDS as u64));
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("decode_only_floor", |b| {
        b.iter(|| {
            black_box(decode(Signal::Logs, Encoding::Protobuf, black_box(&bytes)).expect("decodes"))
        })
    });
    let registry = Registry::with_static().expect("static plugins");
    let hub = Arc::new(Hub::with_config(
        registry,
        HubConfig {
            queue_capacity: 1 << 16,
            ..HubConfig::default()
        },
    ));
    let mut collector = Collector::new(Arc::clone(&hub), HashMap::new());
    group.bench_function("decode_map_publish", |b| {
        b.iter(|| {
            let batch =
                decode(Signal::Logs, Encoding::Protobuf, black_box(&bytes)).expect("decodes");
            collector.take(&batch);
        });
        // The drain keeps up outside the timed loop, so no queue fills.
        hub.flush_blocking();
    });
    group.finish();
    let stats = collector.stats();
    assert!(
        stats.read > 0 && stats.evidence > 0,
        "the mapping read nothing: {stats:?}"
    );
    eprintln!(
        "collector: {stats:?}; hub dropped {}",
        hub.evidence_dropped()
    );
}

criterion_group!(benches, ingest);
criterion_main!(benches);
