//! The OTLP/HTTP receiver (`tether-collect`) against a real OpenTelemetry
//! SDK exporter (the one `tether-otel` runs) and against hostile requests.

use std::io::Write;
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
use prost::Message;
use tether_collect::{Batch, Receiver, ReceiverConfig};
use tether_core::model::Evidence;
use tether_core::vocab::{EvidenceKind, ServerSource, Trigger};
use tether_core::{DriveMode, Endpoint, Registry, ServerSpec};
use tether_hub::{AttemptRequest, Hub};
use tether_otel::{OtelConfig, TetherOtel};

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(bytes).expect("gzip");
    e.finish().expect("gzip")
}

fn logs_with(attributes: usize) -> Vec<u8> {
    let attribute = |i: usize| KeyValue {
        key: format!("k{}", i % 10),
        value: Some(AnyValue {
            value: Some(any_value::Value::StringValue("v".into())),
        }),
        ..KeyValue::default()
    };
    ExportLogsServiceRequest {
        resource_logs: vec![ResourceLogs {
            scope_logs: vec![ScopeLogs {
                log_records: vec![LogRecord {
                    attributes: (0..attributes).map(attribute).collect(),
                    ..LogRecord::default()
                }],
                ..ScopeLogs::default()
            }],
            ..ResourceLogs::default()
        }],
    }
    .encode_to_vec()
}

/// GIVEN the receiver on loopback WHEN a real OTLP/HTTP exporter (the
/// OpenTelemetry SDK behind tether-otel) sends logs and metrics with the
/// receiver's token THEN they arrive decoded on the queue; the same exporter
/// with another token is refused and counted, and nothing of it arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_otlp_exporter_is_received_with_the_token_and_refused_without_it() {
    let (receiver, batches) = Receiver::new(ReceiverConfig::default());
    let running = receiver
        .serve("127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("serve");
    let export = |token: String| {
        let endpoint = running.endpoint();
        std::thread::spawn(move || {
            let otel = TetherOtel::start(
                OtelConfig::new("tether-collect-test")
                    .with_endpoint(endpoint)
                    .with_header("Authorization", token),
            )
            .expect("otel")
            .expect("on");
            let hub = Hub::new(Registry::empty());
            otel.watch_hub(&hub);
            let spec = ServerSpec::new(
                "srv",
                ServerSource::Profile,
                Endpoint::Http {
                    url: "http://127.0.0.1:1/mcp".into(),
                    headers: vec![],
                },
            );
            let handle = hub
                .begin_attempt(AttemptRequest::new(
                    tether_core::Owner {
                        task: "t".into(),
                        session: "s".into(),
                        execution: "e".into(),
                    },
                    "kind",
                    DriveMode::Acp,
                    Trigger::SessionNew,
                    vec![spec],
                ))
                .expect("begin");
            handle
                .sink
                .publish(Evidence::new(EvidenceKind::Delivered, tether_hub::now()).server("srv"))
                .expect("publish");
            hub.flush_blocking();
            otel.record_probe_verdict(tether_core::probe::Verdict::Active, "kind");
            otel.flush();
            otel.shutdown()
        })
    };
    let errors = export(receiver.token().bearer())
        .join()
        .expect("export thread");
    assert!(errors.is_empty(), "{errors:?}");
    let deadline = Instant::now() + Duration::from_secs(20);
    let (mut logs, mut metrics) = (0, 0);
    while Instant::now() < deadline && (logs == 0 || metrics == 0) {
        match batches.next(Duration::from_millis(200)) {
            Some(batch @ Batch::Logs(_)) => logs += batch.items(),
            Some(batch @ Batch::Metrics(_)) => metrics += batch.items(),
            Some(Batch::Traces(_)) | None => {}
        }
    }
    assert!(
        logs > 0 && metrics > 0,
        "logs {logs}, metrics {metrics}: {:?}",
        receiver.stats()
    );
    let before = receiver.stats();
    assert_eq!(before.refused, 0, "{before:?}");

    let _ = export("Bearer not-the-token".into()).join();
    let after = receiver.stats();
    assert!(after.refused > 0, "{after:?}");
    assert_eq!(after.batches, before.batches, "nothing refused was queued");
    while batches.try_next().is_some() {}
    running.shutdown().await;
}

/// GIVEN the receiver WHEN it is sent no token, a foreign Host, an Origin,
/// another content type or encoding, a gzip bomb, malformed protobuf, a
/// million attributes, and more than its queue holds THEN each gets its
/// OTLP answer at once, each is counted, and only the well-formed requests
/// reach the queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_requests_are_answered_at_once_and_never_reach_the_queue() {
    let (receiver, batches) = Receiver::new(ReceiverConfig {
        queue: 2,
        ..ReceiverConfig::default()
    });
    let running = receiver
        .serve("127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("serve");
    let url = format!("{}/v1/logs", running.endpoint());
    let bearer = receiver.token().bearer();
    let client = reqwest::Client::new();
    let send = |headers: Vec<(&'static str, String)>, body: Vec<u8>| {
        let mut request = client.post(&url).body(body);
        for (k, v) in headers {
            request = request.header(k, v);
        }
        async move {
            let started = Instant::now();
            let response = request.send().await.expect("send");
            let status = response.status().as_u16();
            let retry = response.headers().get("retry-after").is_some();
            let body = response.bytes().await.expect("body");
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "answered at once"
            );
            (status, retry, body)
        }
    };
    let proto = || ("content-type", "application/x-protobuf".to_owned());
    let auth = || ("authorization", bearer.clone());
    let valid = logs_with(3);

    assert_eq!(send(vec![proto()], valid.clone()).await.0, 401, "no token");
    let wrong = ("authorization", "Bearer 00".to_owned());
    assert_eq!(send(vec![proto(), wrong], valid.clone()).await.0, 401);
    let rebound = ("host", "rebound.example:4318".to_owned());
    assert_eq!(
        send(vec![proto(), auth(), rebound], valid.clone()).await.0,
        421
    );
    let origin = ("origin", "http://evil.example".to_owned());
    assert_eq!(
        send(vec![proto(), auth(), origin], valid.clone()).await.0,
        403
    );
    let text = ("content-type", "text/plain".to_owned());
    assert_eq!(send(vec![text, auth()], valid.clone()).await.0, 415);
    let brotli = ("content-encoding", "br".to_owned());
    assert_eq!(
        send(vec![proto(), auth(), brotli], valid.clone()).await.0,
        415
    );
    let gz = || ("content-encoding", "gzip".to_owned());
    let bomb = gzip(&vec![0u8; 256 * 1024 * 1024]);
    assert!(bomb.len() < 1024 * 1024, "{}", bomb.len());
    assert_eq!(
        send(vec![proto(), auth(), gz()], bomb).await.0,
        413,
        "gzip bomb"
    );
    let (status, _, body) = send(
        vec![proto(), auth()],
        b"\x0a\xff\xff\xff\xff\x0fplanted".to_vec(),
    )
    .await;
    assert_eq!(status, 400, "malformed protobuf");
    assert!(!String::from_utf8_lossy(&body).contains("planted"));
    let million = logs_with(1_000_000);
    assert!(million.len() > 4 * 1024 * 1024, "{}", million.len());
    assert_eq!(
        send(vec![proto(), auth()], million.clone()).await.0,
        413,
        "a million attributes"
    );
    assert_eq!(
        send(vec![proto(), auth(), gz()], gzip(&million)).await.0,
        413,
        "… gzipped"
    );
    let json = ("content-type", "application/json".to_owned());
    assert_eq!(
        send(vec![json.clone(), auth()], b"{\"resourceLogs\":7}".to_vec())
            .await
            .0,
        400
    );

    // Well-formed: protobuf, gzip'd protobuf, then JSON past the queue of 2.
    let (status, _, body) = send(vec![proto(), auth()], valid.clone()).await;
    assert_eq!(status, 200);
    assert!(
        opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceResponse::decode(
            &body[..]
        )
        .is_ok()
    );
    assert_eq!(send(vec![proto(), auth(), gz()], gzip(&valid)).await.0, 200);
    let (status, retry, _) = send(vec![json, auth()], br#"{"resourceLogs":[]}"#.to_vec()).await;
    assert_eq!(
        (status, retry),
        (503, true),
        "the queue of 2 is full: retry later"
    );

    let stats = receiver.stats();
    assert_eq!(stats.batches, 2, "{stats:?}");
    assert_eq!(stats.items, 2, "one log record each: {stats:?}");
    assert_eq!(stats.refused, 4, "{stats:?}");
    assert_eq!(stats.unsupported, 2, "{stats:?}");
    assert_eq!(stats.too_large, 3, "{stats:?}");
    assert_eq!(stats.malformed, 2, "{stats:?}");
    assert_eq!(stats.busy, 1, "{stats:?}");
    let mut queued = 0;
    while let Some(batch) = batches.try_next() {
        assert_eq!(batch.items(), 1);
        queued += 1;
    }
    assert_eq!(queued, 2);
    running.shutdown().await;
}
