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
use tether_passthrough_claude as _;

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
    // A client per request: a refusal may close its connection mid-body,
    // and that connection must not be reused. Such a close is status 0 here
    // (only the oversized body may see one; the counters say why).
    let send = |headers: Vec<(&'static str, String)>, body: Vec<u8>| {
        let mut request = reqwest::Client::new().post(&url).body(body);
        for (k, v) in headers {
            request = request.header(k, v);
        }
        async move {
            let started = Instant::now();
            let Ok(response) = request.send().await else {
                return (0, false, Default::default());
            };
            let status = response.status().as_u16();
            let retry = response.headers().get("retry-after").is_some();
            let body = response.bytes().await.unwrap_or_default();
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
    let (status, _, _) = send(vec![proto(), auth()], million.clone()).await;
    assert!(matches!(status, 413 | 0), "a million attributes: {status}");
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

/// The string attribute `key` of a log record, if it has one.
fn attribute<'r>(record: &'r LogRecord, key: &str) -> Option<&'r str> {
    record
        .attributes
        .iter()
        .find(|a| a.key == key)
        .and_then(|a| a.value.as_ref())
        .and_then(|v| match &v.value {
            Some(any_value::Value::StringValue(s)) => Some(s.as_str()),
            _ => None,
        })
}

/// GIVEN `tether collect`'s setup for Claude Code (from the Claude plugin,
/// through the registry, as `--print-env claude` prints it) WHEN the real
/// pinned `claude` runs with a working stdio server and a command that does
/// not exist, offline THEN its own `mcp_server_connection` records reach the
/// receiver with the token: one connected, one failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_claude_cli_sends_its_mcp_telemetry_to_the_receiver() {
    let Some(claude) = tether_tests::peer("node_modules/.bin/claude") else {
        return;
    };
    let Some(time) = tether_tests::peer(".venv/bin/mcp-server-time") else {
        return;
    };
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let (receiver, batches) = Receiver::new(ReceiverConfig::default());
    let running = receiver
        .serve("127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("serve");
    let target = tether_core::telemetry::TelemetryTarget {
        endpoint: running.endpoint(),
        authorization: receiver.token().bearer(),
    };
    let registry = Registry::with_static().expect("registry");
    let setup = registry
        .observer_for("claude", DriveMode::Passthrough)
        .and_then(|o| o.roles().telemetry?.telemetry_setup(&target))
        .expect("the Claude plugin gives a telemetry setup");

    let home = tempfile::tempdir().expect("home");
    let config = home.path().join("mcp.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {
            "time": {"command": time},
            "broken": {"command": "/nonexistent/bin/tether-missing-server"}
        }})
        .to_string(),
    )
    .expect("config");
    let mut env: Vec<(String, String)> = vec![
        ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
        ("HOME".into(), home.path().display().to_string()),
        // Offline: a model that is not there, asked once.
        ("ANTHROPIC_API_KEY".into(), "dummy".into()),
        ("ANTHROPIC_BASE_URL".into(), "http://127.0.0.1:9".into()),
        ("CLAUDE_CODE_MAX_RETRIES".into(), "0".into()),
        ("MCP_CONNECTION_NONBLOCKING".into(), "false".into()),
        // Export soon rather than after the default five seconds.
        ("OTEL_LOGS_EXPORT_INTERVAL".into(), "500".into()),
        ("OTEL_METRIC_EXPORT_INTERVAL".into(), "1000".into()),
    ];
    env.extend(setup.env.iter().map(|v| (v.name.clone(), v.value.clone())));
    let spec = tether_process::ChildSpec {
        program: claude.display().to_string(),
        args: vec![
            "-p".into(),
            "hi".into(),
            "--strict-mcp-config".into(),
            "--mcp-config".into(),
            config.display().to_string(),
        ],
        env,
        inherit_env: false,
        cwd: home.path().to_path_buf(),
    };
    // Its own process group, killed with everything under it on every path.
    let (mut child, _stdin, mut stdout) =
        tether_process::ChildGroup::spawn(&spec).expect("claude starts");
    let drain = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut stdout, &mut tokio::io::sink()).await;
    });
    let deadline = Instant::now() + Duration::from_secs(90);
    let (mut connected, mut failed) = (0, 0);
    // The loop ends on the records, or a while after the CLI is gone (its
    // exporter flushes on exit), or at the test's own bound.
    let mut exited_at: Option<Instant> = None;
    while Instant::now() < deadline && (connected == 0 || failed == 0) {
        if exited_at.is_none() && child.exited().is_some() {
            exited_at = Some(Instant::now());
        }
        if exited_at.is_some_and(|at| at.elapsed() > Duration::from_secs(15)) {
            break;
        }
        // Off the runtime's workers: the receiver answers on them.
        let Some(Batch::Logs(logs)) =
            tokio::task::block_in_place(|| batches.next(Duration::from_millis(200)))
        else {
            continue;
        };
        for record in logs
            .resource_logs
            .iter()
            .flat_map(|r| &r.scope_logs)
            .flat_map(|s| &s.log_records)
        {
            if attribute(record, "event.name") == Some("mcp_server_connection") {
                match attribute(record, "status") {
                    Some("connected") => connected += 1,
                    Some("failed") => failed += 1,
                    _ => {}
                }
            }
        }
    }
    // The whole group goes, whatever happened.
    child.kill_group().await;
    drain.abort();
    let stats = receiver.stats();
    assert_eq!(stats.refused, 0, "{stats:?}");
    assert!(
        connected >= 1 && failed >= 1,
        "connected {connected}, failed {failed}: {stats:?}"
    );
    running.shutdown().await;
}

/// GIVEN `tether collect --print-env codex --json` WHEN it starts THEN it
/// prints one document (its endpoint, its token and Codex's `[otel]` block
/// naming both), receives a request sent with that token, and exits 0 on
/// Ctrl-C; an unknown harness is a usage error (2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tether_collect_prints_one_document_receives_and_stops_on_ctrl_c() {
    let bin = tether_tests::workspace_bin("tether");
    let unknown = std::process::Command::new(&bin)
        .args(["collect", "--print-env", "vim"])
        .output()
        .expect("run");
    assert_eq!(unknown.status.code(), Some(2));
    // A private home: its default store and kept token, not the runner's.
    let home = tempfile::tempdir().expect("home");
    let mut child = std::process::Command::new(&bin)
        .args([
            "collect",
            "--addr",
            "127.0.0.1:0",
            "--print-env",
            "codex",
            "--json",
        ])
        .env("HOME", home.path())
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_STATE_HOME")
        .env_remove("TETHER_DB")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("tether collect");
    let (doc, line) = tether_tests::first_json_line(&mut child);
    // A sample for the out-of-process schema check (`tests/schema/validate.py`).
    std::fs::write(tether_tests::samples_dir().join("collect.json"), &line).expect("sample");
    let endpoint = doc["endpoint"].as_str().expect("endpoint").to_owned();
    let token = doc["token"].as_str().expect("token").to_owned();
    assert!(endpoint.starts_with("http://127.0.0.1:"), "{doc}");
    assert_eq!(token.len(), 64);
    let snippet = doc["setup"]["snippet"]["text"]
        .as_str()
        .expect("codex block");
    assert!(snippet.contains(&format!("{endpoint}/v1/logs")) && snippet.contains(&token));
    assert_eq!(doc["setup"]["headers_sent"], "verified");
    assert_eq!(doc["schema_version"], 2);

    let status = reqwest::Client::new()
        .post(format!("{endpoint}/v1/logs"))
        .header("content-type", "application/x-protobuf")
        .header("authorization", format!("Bearer {token}"))
        .body(logs_with(1))
        .send()
        .await
        .expect("send")
        .status();
    assert_eq!(status, 200);
    let _ = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(10);
    let code = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status.code();
        }
        assert!(
            Instant::now() < deadline,
            "tether collect did not stop on Ctrl-C"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(code, Some(0));
}

/// GIVEN a receiver whose consumer is slow WHEN batches keep coming THEN the
/// queue is bounded by the bytes they came from, not only by their number: a
/// batch past the budget is told to retry (503), and once the consumer takes
/// one, the next goes in. An empty queue always takes one batch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_queue_is_bounded_by_bytes_as_well_as_batches() {
    let body = logs_with(40);
    let (receiver, batches) = Receiver::new(ReceiverConfig {
        queue: 1024,
        queue_bytes: body.len() + body.len() / 2,
        ..ReceiverConfig::default()
    });
    let running = receiver
        .serve("127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("serve");
    let client = reqwest::Client::new();
    let url = format!("{}/v1/logs", running.endpoint());
    let send = || {
        client
            .post(&url)
            .header("content-type", "application/x-protobuf")
            .header("authorization", receiver.token().bearer())
            .body(body.clone())
            .send()
    };
    assert_eq!(send().await.expect("send").status(), 200);
    let refused = send().await.expect("send");
    assert_eq!(refused.status(), 503, "over the byte budget");
    assert!(refused.headers().get("retry-after").is_some());
    assert!(batches.try_next().is_some(), "the consumer takes one");
    assert_eq!(send().await.expect("send").status(), 200, "room again");
    assert_eq!(receiver.stats().busy, 1);
    running.shutdown().await;
}

/// GIVEN a receiver forwarding to the user's own collector (here another
/// locked receiver, with its own token given as a forward header) WHEN a
/// harness sends a gzip'd protobuf body THEN the user's collector receives
/// that same request, unchanged (same decoded batch), with its own token,
/// never the receiver's; and a forward that names the receiver itself is
/// refused as a loop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_admitted_request_is_forwarded_unchanged_and_a_loop_is_refused() {
    use tether_collect::forward::{ForwardError, ForwardTarget, Forwarder};
    let (theirs, their_batches) = Receiver::new(ReceiverConfig::default());
    let their_running = theirs
        .serve("127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("serve");
    let (ours, our_batches) = Receiver::new(ReceiverConfig::default());
    let running = ours
        .serve("127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("serve");

    let mut target = ForwardTarget::new(their_running.endpoint());
    target
        .headers
        .push(("Authorization".into(), theirs.token().bearer()));
    assert_eq!(
        Forwarder::start(ForwardTarget::new(running.endpoint()), Some(running.addr())).err(),
        Some(ForwardError::Loop)
    );
    assert_eq!(
        Forwarder::start(ForwardTarget::new("ftp://example.invalid"), None).err(),
        Some(ForwardError::NotHttp)
    );
    assert!(ours.set_forward(Forwarder::start(target, Some(running.addr())).expect("forward")));

    let body = logs_with(3);
    let client = reqwest::Client::new();
    let answer = client
        .post(format!("{}/v1/logs", running.endpoint()))
        .header("authorization", ours.token().bearer())
        .header("content-type", "application/x-protobuf")
        .header("content-encoding", "gzip")
        .body(gzip(&body))
        .send()
        .await
        .expect("send");
    assert_eq!(answer.status(), 200);
    let mine = tokio::task::block_in_place(|| our_batches.next(Duration::from_secs(5)))
        .expect("our batch");
    let forwarded = tokio::task::block_in_place(|| their_batches.next(Duration::from_secs(10)))
        .expect("the user's collector got it");
    assert_eq!(mine, forwarded, "forwarded unchanged");
    let want = Batch::Logs(ExportLogsServiceRequest::decode(body.as_slice()).expect("decodes"));
    assert_eq!(forwarded, want);
    // Their collector refused nothing: it got its own token, never ours.
    assert_eq!(theirs.stats().refused, 0);
    // The forward counts the answer once it has read it, which can be just
    // after the collector queued the batch.
    let deadline = Instant::now() + Duration::from_secs(10);
    let stats = loop {
        let stats = ours.forward_stats().expect("a forward is set");
        if stats.forwarded + stats.failed > 0 || Instant::now() > deadline {
            break stats;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!((stats.forwarded, stats.failed, stats.dropped), (1, 0, 0));
    running.shutdown().await;
    their_running.shutdown().await;
}

/// GIVEN a forward to a collector that accepts connections and never
/// answers WHEN a harness sends many requests THEN every one is answered by
/// the receiver all the same (the forward never delays the answer), and
/// what the forward's bounded queue cannot hold is dropped and counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_forward_target_never_delays_the_answer() {
    use tether_collect::forward::{ForwardTarget, Forwarder};
    // Accepts, reads nothing, answers nothing.
    let hang = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let hang_addr = hang.local_addr().expect("addr");
    let held = std::thread::spawn(move || {
        let mut conns = Vec::new();
        for conn in hang.incoming().take(8) {
            conns.push(conn);
        }
        std::thread::sleep(Duration::from_secs(30));
        drop(conns);
    });
    let (ours, batches) = Receiver::new(ReceiverConfig::default());
    let running = ours
        .serve("127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("serve");
    let mut target = ForwardTarget::new(format!("http://{hang_addr}"));
    target.queue = 4;
    target.timeout = Duration::from_secs(20);
    assert!(ours.set_forward(Forwarder::start(target, Some(running.addr())).expect("forward")));
    let client = reqwest::Client::new();
    let body = logs_with(2);
    for _ in 0..32 {
        let answer = client
            .post(format!("{}/v1/logs", running.endpoint()))
            .header("authorization", ours.token().bearer())
            .header("content-type", "application/x-protobuf")
            .body(body.clone())
            .send()
            .await
            .expect("send");
        assert_eq!(answer.status(), 200);
        let _ = batches.try_next();
    }
    let stats = ours.forward_stats().expect("forward");
    // One in flight, at most four waiting: the rest were dropped, counted.
    assert!(stats.dropped >= 32 - 5, "{stats:?}");
    assert_eq!(stats.forwarded, 0, "{stats:?}");
    running.shutdown().await;
    drop(held);
}

/// The recorded Claude session's records.
fn recorded_claude_records() -> Vec<tether_core::telemetry::TelemetryRecord> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/telemetry/claude.jsonl");
    std::fs::read_to_string(path)
        .expect("fixture")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("record"))
        .collect()
}

/// The recorded Claude session's records as one OTLP protobuf logs body.
fn recorded_claude_logs() -> Vec<u8> {
    logs_body(&recorded_claude_records())
}

/// `records`' logs as one OTLP protobuf logs body, under the first one's
/// resource.
fn logs_body(records: &[tether_core::telemetry::TelemetryRecord]) -> Vec<u8> {
    use tether_core::telemetry::{TelemetryRecord, TelemetrySignal, TelemetryValue};
    let value = |v: &TelemetryValue| AnyValue {
        value: Some(match v {
            TelemetryValue::Text(s) => any_value::Value::StringValue(s.clone()),
            TelemetryValue::Int(i) => any_value::Value::IntValue(*i),
            TelemetryValue::Float(f) => any_value::Value::DoubleValue(*f),
            TelemetryValue::Bool(b) => any_value::Value::BoolValue(*b),
            TelemetryValue::List(items) => {
                any_value::Value::ArrayValue(opentelemetry_proto::tonic::common::v1::ArrayValue {
                    values: items
                        .iter()
                        .map(|s| AnyValue {
                            value: Some(any_value::Value::StringValue(s.clone())),
                        })
                        .collect(),
                })
            }
            other => panic!("a value this fixture test does not encode: {other:?}"),
        }),
    };
    let kv = |(k, v): (&String, &TelemetryValue)| KeyValue {
        key: k.clone(),
        value: Some(value(v)),
        ..KeyValue::default()
    };
    let logs: Vec<&TelemetryRecord> = records
        .iter()
        .filter(|r| r.signal == TelemetrySignal::Log)
        .collect();
    ExportLogsServiceRequest {
        resource_logs: vec![ResourceLogs {
            resource: Some(opentelemetry_proto::tonic::resource::v1::Resource {
                attributes: logs[0].resource.iter().map(kv).collect(),
                ..Default::default()
            }),
            scope_logs: vec![ScopeLogs {
                log_records: logs
                    .iter()
                    .map(|r| LogRecord {
                        time_unix_nano: r.at.0 * 1_000_000,
                        attributes: r.attributes.iter().map(kv).collect(),
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

/// GIVEN `tether collect --db FILE --otlp URL` in a HOME with no MCP
/// configuration WHEN a recorded Claude Code session's logs arrive THEN, at
/// Ctrl-C, the store holds that session (rows the telemetry named: time
/// connected, broken failed as a missing command), and the OTLP collector
/// got Tether's own telemetry about it, never a record of the harness's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tether_collect_stores_sessions_and_exports_them_never_the_records() {
    use std::sync::{Arc, Mutex};
    use tether_core::store::Store;
    use tether_core::vocab::{DisplayStatus, ReasonCode};
    // The user's OTLP collector: takes anything, keeps the service names.
    let services: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = Arc::clone(&services);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let otlp = format!("http://{}", listener.local_addr().expect("addr"));
    let app = axum::Router::new().fallback(move |uri: axum::http::Uri, body: axum::body::Bytes| {
        let seen = Arc::clone(&seen);
        async move {
            let signal = match uri.path() {
                "/v1/logs" => tether_collect::Signal::Logs,
                "/v1/traces" => tether_collect::Signal::Traces,
                _ => tether_collect::Signal::Metrics,
            };
            if let Ok(batch) =
                tether_collect::decode::decode(signal, tether_collect::Encoding::Protobuf, &body)
            {
                for record in tether_collect::telemetry_records::records(&batch) {
                    seen.lock().expect("lock").push(record.service().to_owned());
                }
            }
            ""
        }
    });
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let home = tempfile::tempdir().expect("home");
    let db = home.path().join("tether.db");
    let mut child = std::process::Command::new(tether_tests::workspace_bin("tether"))
        .args(["collect", "--addr", "127.0.0.1:0", "--json", "--db"])
        .arg(&db)
        .args(["--otlp", &otlp])
        .env("HOME", home.path())
        .env_remove("XDG_STATE_HOME")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .current_dir(home.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("tether collect");
    let (doc, _) = tether_tests::first_json_line(&mut child);
    let endpoint = doc["endpoint"].as_str().expect("endpoint").to_owned();
    let token = tether_tests::kept_collect_token(home.path());
    let status = reqwest::Client::new()
        .post(format!("{endpoint}/v1/logs"))
        .header("content-type", "application/x-protobuf")
        .header("authorization", format!("Bearer {token}"))
        .body(recorded_claude_logs())
        .send()
        .await
        .expect("send")
        .status();
    assert_eq!(status, 200);
    // The store shows the session once the hub has written it.
    let session = "claude:70f35c17-8743-4738-8d50-c80976c643a9";
    let deadline = Instant::now() + Duration::from_secs(30);
    let stored = loop {
        let found = tether_store::SqliteStore::open_read_only(&db)
            .ok()
            .and_then(|s| s.load(session).ok().flatten());
        if let Some(history) = found
            && history
                .current()
                .and_then(|a| a.server("broken"))
                .is_some_and(|r| r.status == DisplayStatus::Failed)
        {
            break history;
        }
        assert!(
            Instant::now() < deadline,
            "the session never reached the store"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let attempt = stored.current().expect("attempt");
    assert_eq!(attempt.trigger.as_str(), "harness_session");
    let time = attempt.server("time").expect("time");
    assert!(
        matches!(
            time.status,
            DisplayStatus::Active | DisplayStatus::Connected
        ),
        "{time:?}"
    );
    assert_eq!(
        attempt.server("broken").expect("broken").reason_code,
        Some(ReasonCode::CommandNotFound)
    );
    let _ = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(20);
    let code = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status.code();
        }
        assert!(
            Instant::now() < deadline,
            "tether collect did not stop on Ctrl-C"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(code, Some(0));
    let services = services.lock().expect("lock").clone();
    assert!(
        services.iter().any(|s| s == "tether-collect"),
        "Tether's own telemetry was exported: {services:?}"
    );
    assert!(
        services.iter().all(|s| s.starts_with("tether")),
        "a harness's records were re-exported: {services:?}"
    );
    server.abort();
}

/// GIVEN `tether collect --db FILE` and a recorded Claude Code session on
/// disk WHEN Claude Code's `tool_result` logs for that session arrive with
/// `tool_parameters` cut short (as an attribute length limit cuts it) and
/// not JSON (a planted secret), and one more without a session id THEN the
/// store counts the two on the session's attempt (the third has no session
/// to join: never guessed onto this one), and `tether sessions show` says
/// them beside the records' accounting, in text and in `--json`, never the
/// attribute's content (issue 68 §2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unparsed_telemetry_is_counted_on_its_session_and_sessions_show_says_it() {
    use tether_core::model::Unparsed;
    use tether_core::store::Store;
    use tether_core::telemetry::TelemetryValue as V;
    let session_id = "2d8efbcf-e501-440d-89ec-66cb10f9d678";
    let session = format!("claude:{session_id}");
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
        "fixtures/records/claude/.claude/projects/-tmp--tmpf23dO3/{session_id}.jsonl"
    ));
    // Claude Code 2.1.197's own tool_result log (tests/fixtures/telemetry),
    // moved to the session on disk, its tool_parameters broken.
    let recorded = recorded_claude_records();
    let tool_result = recorded
        .iter()
        .find(|r| r.name == "tool_result" && r.text("tool_parameters").is_some())
        .expect("the fixture holds an MCP tool_result");
    let whole = r#"{"mcp_server_name":"time","mcp_tool_name":"get_current_time","input":"sk-PLANTEDSECRET0123456789"}"#;
    let broken = |value: &str, session: Option<&str>| {
        let mut r = tool_result
            .clone()
            .with_attr("tool_parameters", V::Text(value.to_owned()));
        match session {
            Some(s) => r.attributes.insert("session.id".into(), V::Text(s.into())),
            None => r.attributes.remove("session.id"),
        };
        r
    };
    let mut records = vec![recorded[0].clone()];
    records[0]
        .attributes
        .insert("session.id".into(), V::Text(session_id.into()));
    records.extend([
        broken(&whole[..whole.len() - 20], Some(session_id)),
        broken("sk-PLANTEDSECRET0123456789", Some(session_id)),
        broken("sk-PLANTEDSECRET0123456789", None),
    ]);
    let home = tempfile::tempdir().expect("home");
    let db = home.path().join("tether.db");
    let mut child = std::process::Command::new(tether_tests::workspace_bin("tether"))
        .args(["collect", "--addr", "127.0.0.1:0", "--json", "--db"])
        .arg(&db)
        .env("HOME", home.path())
        .env_remove("XDG_STATE_HOME")
        .env_remove("TETHER_DB")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .current_dir(home.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("tether collect");
    let (doc, _) = tether_tests::first_json_line(&mut child);
    let endpoint = doc["endpoint"].as_str().expect("endpoint").to_owned();
    let token = tether_tests::kept_collect_token(home.path());
    let status = reqwest::Client::new()
        .post(format!("{endpoint}/v1/logs"))
        .header("content-type", "application/x-protobuf")
        .header("authorization", format!("Bearer {token}"))
        .body(logs_body(&records))
        .send()
        .await
        .expect("send")
        .status();
    assert_eq!(status, 200);
    // Counted once the collector has read the batch (it writes per batch).
    let deadline = Instant::now() + Duration::from_secs(30);
    let counted = loop {
        let counted = tether_store::SqliteStore::open_read_only(&db)
            .ok()
            .and_then(|s| s.unparsed_telemetry(&session).ok())
            .unwrap_or_default();
        if !counted.is_empty() {
            break counted;
        }
        assert!(
            Instant::now() < deadline,
            "nothing was counted in the store"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let _ = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(20);
    let code = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status.code();
        }
        assert!(
            Instant::now() < deadline,
            "tether collect did not stop on Ctrl-C"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(code, Some(0));
    let stored = tether_store::SqliteStore::open_read_only(&db).expect("store");
    let attempt = stored
        .load(&session)
        .expect("load")
        .and_then(|h| h.current_attempt_id.clone())
        .expect("the session's attempt is stored");
    let whys: Vec<(&str, &str, &str, Unparsed, u64)> = counted
        .iter()
        .map(|c| {
            (
                c.attempt_id.as_str(),
                c.kind.as_str(),
                c.attribute.as_str(),
                c.why,
                c.count,
            )
        })
        .collect();
    assert_eq!(
        whys,
        vec![
            (
                attempt.as_str(),
                "tool_result",
                "tool_parameters",
                Unparsed::CutShort,
                1
            ),
            (
                attempt.as_str(),
                "tool_result",
                "tool_parameters",
                Unparsed::NotJson,
                1
            ),
        ]
    );
    let show = |json: bool| {
        let mut command = std::process::Command::new(tether_tests::workspace_bin("tether"));
        command.args(["sessions", "show"]).arg(&file);
        if json {
            command.arg("--json");
        }
        let out = command
            .env("HOME", home.path())
            .env("TETHER_DB", &db)
            .env_remove("XDG_DATA_HOME")
            .current_dir(home.path())
            .output()
            .expect("tether sessions show");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert!(
            !format!("{stdout}{stderr}").contains("PLANTED"),
            "{stdout}{stderr}"
        );
        stdout
    };
    let text = show(false);
    assert!(
        text.contains(
            "! telemetry: 2 answer(s) for this session could not be parsed: 1 cut short (tool_result tool_parameters), 1 not JSON (tool_result tool_parameters)"
        ),
        "{text}"
    );
    let document: tether_core::records::SessionDocument =
        serde_json::from_str(&show(true)).expect("a SessionDocument");
    assert_eq!(document.session.session_id, session);
    assert_eq!(document.telemetry_unparsed, counted);
}

/// GIVEN a private HOME WHEN `tether collect` starts twice THEN both admit
/// the same token, kept in `~/.local/state/tether/collect-token` (0600, in a
/// 0700 directory), so a harness configured once keeps sending; with
/// `--rotate-token` a new one replaces it; a kept file others can read, or
/// one that holds no token, stops it (exit 1) with what to do, and prints
/// no token.
#[test]
fn the_receiver_s_token_is_kept_across_starts_and_rotated_on_request() {
    use std::io::BufRead;
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().expect("home");
    let start = |extra: &[&str]| -> (Option<String>, String) {
        let mut child = tether_tests::tether_at_home(home.path())
            .args(["collect", "--addr", "127.0.0.1:0", "--json"])
            .args(extra)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("tether collect");
        let mut line = String::new();
        let _ = std::io::BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line);
        let _ = child.kill();
        let out = child.wait_with_output().expect("wait");
        let said = String::from_utf8_lossy(&out.stderr).into_owned();
        // Without --print-env the document names the token's file, never
        // the token.
        let token = serde_json::from_str::<serde_json::Value>(&line)
            .ok()
            .and_then(|doc| {
                assert!(doc.get("token").is_none(), "{doc}");
                doc["token_file"].as_str().map(str::to_owned)
            })
            .map(|file| {
                std::fs::read_to_string(file)
                    .expect("the kept token")
                    .trim()
                    .to_owned()
            });
        (token, said)
    };
    let (first, _) = start(&[]);
    let first = first.expect("a first start keeps its token");
    let file = home.path().join(".local/state/tether/collect-token");
    let mode =
        |p: &std::path::Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(file.parent().expect("dir")), 0o700);
    let (second, _) = start(&[]);
    assert_eq!(
        second.as_deref(),
        Some(first.as_str()),
        "kept across starts"
    );
    let (rotated, _) = start(&["--rotate-token"]);
    let rotated = rotated.expect("rotated");
    assert_ne!(rotated, first);
    assert_eq!(
        std::fs::read_to_string(&file).expect("file").trim(),
        rotated
    );
    let (third, _) = start(&[]);
    assert_eq!(third.as_deref(), Some(rotated.as_str()));
    // The banner names the file, not the token; --print-env's setup holds it.
    let banner = tether_tests::tether_at_home(home.path())
        .args(["collect", "--addr", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("tether collect");
    let mut child = banner;
    let mut lines = std::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
    let first_lines: Vec<String> = lines.by_ref().take(3).map_while(Result::ok).collect();
    let _ = child.kill();
    let _ = child.wait();
    let text = first_lines.join("\n");
    assert!(text.contains("token: kept in"), "{text}");
    assert!(
        !text.contains(&rotated),
        "the banner prints no token: {text}"
    );

    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let (none, said) = start(&[]);
    assert!(none.is_none(), "refused: {said}");
    assert!(
        said.contains("can be read by others") && said.contains("chmod 600"),
        "{said}"
    );
    assert!(!said.contains(&rotated), "the token is not printed: {said}");
    std::fs::write(&file, "not a token\n").expect("write");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let (none, said) = start(&[]);
    assert!(none.is_none(), "refused: {said}");
    assert!(said.contains("--rotate-token"), "{said}");
}

/// GIVEN `--print-env HARNESS --format settings` WHEN the harness has a file
/// of its own that takes the whole setup THEN one block for it, holding the
/// kept token (Claude Code's settings `env` is JSON, Gemini's `.env` is
/// dotenv); WHEN it has none (Copilot) THEN it says so and prints the
/// variables.
#[test]
fn print_env_as_settings_gives_one_block_for_the_harness_s_own_file() {
    use std::io::BufRead;
    let last_note = |harness: &str| -> String {
        let target = tether_core::telemetry::TelemetryTarget {
            endpoint: "http://127.0.0.1:1".into(),
            authorization: String::new(),
        };
        tether_core::registry::Registry::with_static()
            .expect("registry")
            .observer_for(harness, tether_core::DriveMode::Passthrough)
            .and_then(|o| o.roles().telemetry?.telemetry_setup(&target))
            .and_then(|s| s.notes.last().cloned())
            .expect("a note")
    };
    let home = tempfile::tempdir().expect("home");
    let setup = |harness: &str| -> String {
        let mut child = tether_tests::tether_at_home(home.path())
            .args(["collect", "--addr", "127.0.0.1:0", "--print-env", harness])
            .args(["--format", "settings"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("tether collect");
        // The banner and the setup come first, the plugin's last note last;
        // then it serves until killed.
        let last = format!("# {}", last_note(harness));
        let mut text = String::new();
        for line in std::io::BufReader::new(child.stdout.take().expect("stdout")).lines() {
            let Ok(line) = line else { break };
            let done = line == last;
            text.push_str(&line);
            text.push('\n');
            if done {
                break;
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        text
    };
    let claude = setup("claude");
    let token = tether_tests::kept_collect_token(home.path());
    let block: String = claude
        .lines()
        .skip_while(|l| !l.starts_with("# claude: merge into ~/.claude/settings.json"))
        .skip(1)
        .take_while(|l| !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    let settings: serde_json::Value =
        serde_json::from_str(&block).unwrap_or_else(|e| panic!("{e}: {claude}"));
    assert_eq!(
        settings["env"]["OTEL_EXPORTER_OTLP_HEADERS"],
        format!("Authorization=Bearer {token}")
    );
    assert_eq!(settings["env"]["CLAUDE_CODE_ENABLE_TELEMETRY"], "1");
    assert!(!claude.contains("export "), "{claude}");

    let gemini = setup("gemini");
    assert!(
        gemini.contains("# gemini: merge into ~/.gemini/.env"),
        "{gemini}"
    );
    assert!(
        gemini.contains(&format!(
            "OTEL_EXPORTER_OTLP_HEADERS=\"Authorization=Bearer {token}\""
        )),
        "{gemini}"
    );

    let copilot = setup("copilot");
    assert!(
        copilot.contains("copilot has no settings file"),
        "{copilot}"
    );
    assert!(
        copilot.contains("export OTEL_EXPORTER_OTLP_HEADERS="),
        "{copilot}"
    );

    // --format without --print-env is a usage error.
    let out = std::process::Command::new(tether_tests::workspace_bin("tether"))
        .args(["collect", "--format", "settings"])
        .env("HOME", home.path())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
}

/// GIVEN Claude Code set up once from `--print-env claude --format settings`
/// (its own settings file, nothing in its environment) WHEN a real session
/// runs, `tether collect` restarts, and a second real session runs THEN the
/// kept token still admits it, both sessions are in the default store, and
/// `tether history`, `tether serve` and `tether sessions` with no `--db`
/// all see both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configured_once_two_real_sessions_survive_a_restart_in_the_default_store() {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let Some(claude) = tether_tests::peer("node_modules/.bin/claude") else {
        return;
    };
    let Some(time) = tether_tests::peer(".venv/bin/mcp-server-time") else {
        return;
    };
    let (model, _) = tether_tests::fake_model::start_model("get_current_time").await;
    let home = tempfile::tempdir().expect("home");
    let port = tether_tests::free_port().await;
    let addr = format!("127.0.0.1:{port}");
    // A tether command on the private home, and the one document it prints first.
    let first_document = |args: &[&str]| {
        let mut child = tether_tests::tether_at_home(home.path())
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("tether collect");
        let (doc, _) = tether_tests::first_json_line(&mut child);
        (child, doc)
    };
    let start = |extra: &[&str]| {
        let mut args = vec!["collect", "--addr", &addr, "--json"];
        args.extend_from_slice(extra);
        first_document(&args)
    };
    let db = home.path().join(".local/share/tether/tether.db");
    let stored = || -> Vec<String> {
        use tether_core::store::Store as _;
        tether_store::SqliteStore::open_read_only(&db)
            .ok()
            .and_then(|s| s.load_all().ok())
            .map(|all| {
                all.histories
                    .iter()
                    .filter_map(|h| h.current().map(|a| a.session_id.clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let session = |n: usize| {
        let config = home.path().join("mcp.json");
        std::fs::write(
            &config,
            serde_json::json!({"mcpServers": {"time": {"command": time.display().to_string()}}})
                .to_string(),
        )
        .expect("config");
        let mut cmd = std::process::Command::new(&claude);
        cmd.args(["-p", "what time is it", "--mcp-config"])
            .arg(&config)
            .args([
                "--strict-mcp-config",
                "--allowedTools",
                "mcp__time__get_current_time",
            ])
            .env_clear()
            .env("HOME", home.path())
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("ANTHROPIC_API_KEY", "dummy")
            .env("ANTHROPIC_BASE_URL", model.base())
            .env("CLAUDE_CODE_MAX_RETRIES", "0")
            .env("OTEL_LOGS_EXPORT_INTERVAL", "500")
            .env("OTEL_TRACES_EXPORT_INTERVAL", "500")
            .current_dir(home.path())
            .stdin(std::process::Stdio::null());
        let out = tether_tests::output_within(cmd, 180);
        // Evidence, not a wait: the store shows the n-th session, or the
        // deadline says it never did.
        let deadline = Instant::now() + Duration::from_secs(60);
        while stored().len() < n && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(200));
        }
        assert_eq!(
            stored().len(),
            n,
            "session {n} stored: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };

    // Set up once, from the settings block.
    let (mut first, doc) = start(&["--print-env", "claude", "--format", "settings"]);
    let settings = doc["setup"]["settings"].clone();
    let file = home.path().join(
        settings["file"]
            .as_str()
            .expect("a file")
            .trim_start_matches("~/"),
    );
    std::fs::create_dir_all(file.parent().expect("dir")).expect("dir");
    std::fs::write(&file, settings["text"].as_str().expect("text")).expect("settings");
    let token = tether_tests::kept_collect_token(home.path());
    tokio::task::block_in_place(|| session(1));
    let _ = first.kill();
    let _ = first.wait();

    // Restarted: the same token, the same store.
    let (mut second, doc) = start(&[]);
    assert!(doc.get("token").is_none(), "{doc}");
    assert_eq!(tether_tests::kept_collect_token(home.path()), token);
    tokio::task::block_in_place(|| session(2));
    let _ = second.kill();
    let _ = second.wait();
    let sessions = stored();

    // Every reader, with no --db, sees both.
    let run = |args: &[&str]| {
        let mut cmd = tether_tests::tether_at_home(home.path());
        cmd.args(args);
        tether_tests::output_within(cmd, 60)
    };
    let history: serde_json::Value =
        serde_json::from_slice(&run(&["history", "--json"]).stdout).expect("history json");
    let listed: serde_json::Value =
        serde_json::from_slice(&run(&["sessions", "list", "--json"]).stdout).expect("sessions");
    for id in &sessions {
        assert!(history.to_string().contains(id.as_str()), "history: {id}");
        assert!(listed.to_string().contains(id.as_str()), "sessions: {id}");
    }
    let (mut serve, banner) = first_document(&["serve", "--json"]);
    let url = banner["url"].as_str().expect("url").to_owned();
    let served = reqwest::Client::new()
        .get(format!("{url}/api/v1/sessions"))
        .header(
            "authorization",
            format!("Bearer {}", banner["token"].as_str().expect("token")),
        )
        .send()
        .await
        .expect("served")
        .text()
        .await
        .expect("body");
    let _ = serve.kill();
    let _ = serve.wait();
    for id in &sessions {
        assert!(served.contains(id.as_str()), "serve: {id}: {served}");
    }
}
