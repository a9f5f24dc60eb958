//! `tether tap` under abuse and with secrets planted: bytes pass unchanged
//! and as they come, every hostile peer is bounded and the tap keeps
//! serving, and nothing but names and hashes is kept. The real harnesses
//! through the tap are in `last_mile.rs` (`tapped_*`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::response::Response;
use futures::StreamExt;
use tether_core::registry::Registry;
use tether_tap::{RunningTap, Tap, TapConfig, TapLimits};
use tether_tests::tap_run::{TappedRun, run_through_bare_tap, sent_mcp_tools};

/// An upstream on 127.0.0.1 answering every request with `answer`.
async fn upstream<F, Fut>(answer: F) -> (std::net::SocketAddr, Arc<AtomicU64>)
where
    F: Fn(axum::http::HeaderMap, Bytes) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = Response> + Send + 'static,
{
    let hits = Arc::new(AtomicU64::new(0));
    let counted = Arc::clone(&hits);
    // No body limit of its own (axum's is 2 MB): whatever cuts a large
    // body must be the tap, not an upstream that hangs up first.
    let app = axum::Router::new()
        .fallback(move |headers: axum::http::HeaderMap, body: Bytes| {
            counted.fetch_add(1, Ordering::Relaxed);
            answer(headers, body)
        })
        .layer(axum::extract::DefaultBodyLimit::disable());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (addr, hits)
}

async fn tap_to(upstream: &str, limits: TapLimits) -> RunningTap {
    tether_tests::tap_run::bare_tap_with(upstream, limits, None).await
}

fn client() -> reqwest::Client {
    reqwest::Client::builder().build().expect("client")
}

/// `POST PATH` through `tap` with an empty JSON body: the tap's answer.
async fn post_empty(tap: &RunningTap, path: &str) -> reqwest::Response {
    client()
        .post(format!("{}{path}", tap.base_url()))
        .body("{}")
        .send()
        .await
        .expect("the tap answers")
}

/// A response of `content_type` whose body is `stream`, as it comes.
fn streamed<S>(content_type: &str, stream: S) -> Response
where
    S: futures::Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static,
{
    Response::builder()
        .header("content-type", content_type)
        .body(Body::from_stream(stream))
        .expect("response")
}

fn sse(chunks: Vec<Bytes>) -> Response {
    streamed(
        "text/event-stream",
        futures::stream::iter(chunks.into_iter().map(Ok::<_, std::io::Error>)),
    )
}

/// A normal request through the tap is answered (by the upstream where it
/// answers): the tap still serves.
async fn still_serves(tap: &RunningTap) -> reqwest::StatusCode {
    client()
        .post(format!("{}/v1/models", tap.base_url()))
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .expect("the tap answers")
        .status()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bytes_pass_unchanged_both_ways_and_as_they_come() {
    // The upstream echoes the request body's length and bytes, then sends
    // a stream of odd events: every byte value, CRLF and LF endings.
    let (addr, _) = upstream(|_, body: Bytes| async move {
        let mut chunks = vec![Bytes::from(format!("event: echo\ndata: {}\n\n", body.len()))];
        chunks.push(body);
        chunks.push(Bytes::from((0u8..=255).collect::<Vec<_>>()));
        chunks.push(Bytes::from_static(b"\r\n\r\ndata: {\"type\":\"content_block_start\",\"content_block\":{\"type\":\"tool_use\",\"name\":\"mcp__a__b\"}}\r\n\r\n"));
        sse(chunks)
    })
    .await;
    let base = format!("http://{addr}");
    let tap = tap_to(&base, TapLimits::default()).await;
    let body: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
    let direct = client()
        .post(format!("{base}/v1/messages"))
        .body(body.clone())
        .send()
        .await
        .expect("direct");
    let direct_status = direct.status();
    let direct = direct.bytes().await.expect("direct body");
    let through = client()
        .post(format!("{}/v1/messages", tap.base_url()))
        .body(body.clone())
        .send()
        .await
        .expect("through");
    assert_eq!(through.status(), direct_status);
    assert_eq!(through.headers()["content-type"], "text/event-stream");
    let through = through.bytes().await.expect("through body");
    assert_eq!(through, direct, "the response, byte for byte");
    assert!(direct.len() > body.len(), "the body came back");

    // Chunk by chunk: the upstream holds its second event until the client
    // has the first through the tap; a tap that buffered would never end.
    let (release, held) = tokio::sync::watch::channel(false);
    let (addr, _) = upstream(move |_, _| {
        let mut held = held.clone();
        async move {
            let first = futures::stream::once(async {
                Ok::<_, std::io::Error>(Bytes::from_static(b"data: {\"n\":1}\n\n"))
            });
            let second = futures::stream::once(async move {
                let _ = held.wait_for(|r| *r).await;
                Ok(Bytes::from_static(b"data: {\"n\":2}\n\n"))
            });
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(first.chain(second)))
                .expect("response")
        }
    })
    .await;
    let tap = tap_to(&format!("http://{addr}"), TapLimits::default()).await;
    let response = post_empty(&tap, "/v1/chat/completions").await;
    let mut stream = response.bytes_stream();
    let first = tokio::time::timeout(Duration::from_secs(30), stream.next())
        .await
        .expect("the first event arrives before the upstream sends the second")
        .expect("a chunk")
        .expect("bytes");
    assert_eq!(&first[..], b"data: {\"n\":1}\n\n");
    release.send(true).expect("release");
    let second = stream.next().await.expect("a chunk").expect("bytes");
    assert_eq!(&second[..], b"data: {\"n\":2}\n\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_door_is_locked_before_anything_is_forwarded() {
    let (addr, hits) = upstream(|_, _| async { Response::new(Body::from("ok")) }).await;
    let tap = tap_to(&format!("http://{addr}"), TapLimits::default()).await;
    let origin = format!("http://{}", tap.addr());
    let c = client();
    // No token, a wrong one, the token in a header only.
    for url in [
        format!("{origin}/v1/messages"),
        format!("{origin}/{}/v1/messages", "0".repeat(64)),
    ] {
        let r = c
            .post(&url)
            .header(
                "authorization",
                format!("Bearer {}", tap.tap().token().secret()),
            )
            .send()
            .await
            .expect("answer");
        assert_eq!(r.status(), 401, "{url}");
    }
    let base = tap.base_url();
    let r = c
        .post(format!("{base}/v1/messages"))
        .header("host", "evil.example")
        .send()
        .await
        .expect("answer");
    assert_eq!(r.status(), 421);
    let r = c
        .post(format!("{base}/v1/messages"))
        .header("origin", "http://evil.example")
        .send()
        .await
        .expect("answer");
    assert_eq!(r.status(), 403);
    assert_eq!(
        hits.load(Ordering::Relaxed),
        0,
        "nothing reached the upstream"
    );
    assert_eq!(tap.tap().stats().refused, 4);
    assert!(still_serves(&tap).await.is_success());
    assert_eq!(hits.load(Ordering::Relaxed), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_upstreams_are_bounded_and_the_tap_keeps_serving() {
    // Unreachable: a port nobody listens on is a 502 at once.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = closed.local_addr().expect("addr").port();
    drop(closed);
    let tap = tap_to(&format!("http://127.0.0.1:{port}"), TapLimits::default()).await;
    let r = post_empty(&tap, "/v1/messages").await;
    assert_eq!(r.status(), 502);
    assert_eq!(tap.tap().stats().upstream_errors, 1);

    let limits = TapLimits {
        response_start: Duration::from_secs(1),
        idle: Duration::from_secs(1),
        max_duration: Duration::from_secs(2),
        ..TapLimits::default()
    };
    // Hangs: accepts, never answers: 504 after `response_start`.
    let (hang, _) = upstream(|_, _| async {
        std::future::pending::<()>().await;
        Response::new(Body::empty())
    })
    .await;
    // Resets: half an answer, then the connection is gone.
    let (reset, _) = upstream(|_, _| async {
        let stream = futures::stream::iter([
            Ok(Bytes::from_static(b"data: {}\n\n")),
            Err(std::io::Error::other("reset")),
        ]);
        streamed("text/event-stream", stream)
    })
    .await;
    // Streams forever: an event every 10 ms.
    let (forever, _) = upstream(|_, _| async {
        let stream = futures::stream::unfold((), |()| async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            Some((
                Ok::<_, std::io::Error>(Bytes::from_static(b"data: {}\n\n")),
                (),
            ))
        });
        streamed("text/event-stream", stream)
    })
    .await;
    // Sends 100 MB of one JSON body.
    let (huge, _) = upstream(|_, _| async {
        let chunk = Bytes::from(vec![b' '; 1024 * 1024]);
        let stream =
            futures::stream::iter((0..100).map(move |_| Ok::<_, std::io::Error>(chunk.clone())));
        streamed("application/json", stream)
    })
    .await;

    let tap = tap_to(&format!("http://{hang}"), limits).await;
    let r = post_empty(&tap, "/v1/messages").await;
    assert_eq!(r.status(), 504);

    // A reset before the status line is a 502 (`upstream_error`), after
    // it a cut stream (`upstream_reset`): which one is the upstream's timing.
    for (addr, outcomes, min_bytes) in [
        (reset, &["upstream_reset", "upstream_error"][..], 0usize),
        (forever, &["max_duration"][..], 1),
        (huge, &["completed"][..], 100 * 1024 * 1024),
    ] {
        let outcome = outcomes[0];
        let tap = tap_to(&format!("http://{addr}"), limits).await;
        let r = post_empty(&tap, "/v1/chat/completions").await;
        let mut got = 0usize;
        let mut stream = r.bytes_stream();
        while let Some(Ok(chunk)) = tokio::time::timeout(Duration::from_secs(60), stream.next())
            .await
            .expect("bounded")
        {
            got += chunk.len();
        }
        assert!(got >= min_bytes, "{outcome}: {got} bytes");
        let record = wait_for_record(&tap).await;
        assert!(outcomes.contains(&record.outcome), "{record:?}");
        if outcome == "completed" {
            assert_eq!(record.response_bytes, 100 * 1024 * 1024);
            assert_eq!(record.unread, ["response: too_large"], "{record:?}");
        }
        let status = still_serves(&tap).await;
        // The resetting upstream resets this one too: the tap says so.
        assert!(
            status.is_success() || outcome == "upstream_reset",
            "{status}"
        );
    }
}

async fn wait_for_record(tap: &RunningTap) -> tether_tap::TapRecord {
    for _ in 0..600 {
        if let Some(r) = tap.tap().recent().into_iter().find(|r| r.api.is_some()) {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no record");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_clients_are_bounded_and_the_tap_keeps_serving() {
    let (addr, _) =
        upstream(|_, body: Bytes| async move { Response::new(Body::from(body.len().to_string())) })
            .await;
    let tap = tap_to(
        &format!("http://{addr}"),
        TapLimits {
            response_start: Duration::from_secs(5),
            ..TapLimits::default()
        },
    )
    .await;
    let url = format!("{}/v1/messages", tap.base_url());
    // 100 MB declared: refused before a byte of the body is read.
    {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut socket = tokio::net::TcpStream::connect(tap.addr())
            .await
            .expect("connect");
        let head = format!(
            "POST /{}/v1/messages HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n\r\n",
            tap.tap().token().secret(),
            tap.addr(),
            100u64 << 20
        );
        socket.write_all(head.as_bytes()).await.expect("write");
        let mut answer = vec![0u8; 64];
        let n = tokio::time::timeout(Duration::from_secs(30), socket.read(&mut answer))
            .await
            .expect("answered at once")
            .expect("read");
        let answer = String::from_utf8_lossy(&answer[..n]);
        assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    }
    // 100 MB streamed without a length: cut at the cap.
    let chunk = Bytes::from(vec![b'x'; 1 << 20]);
    let stream =
        futures::stream::iter((0..100).map(move |_| Ok::<_, std::io::Error>(chunk.clone())));
    let r = client()
        .post(&url)
        .body(reqwest::Body::wrap_stream(stream))
        .send()
        .await;
    if let Ok(r) = r {
        assert_eq!(r.status(), 413);
    }
    assert!(tap.tap().stats().too_large >= 1, "{:?}", tap.tap().stats());
    // A body that never finishes: bounded by the upstream's answer wait or
    // the listener's body deadline, whichever comes first.
    let never = futures::stream::once(async {
        Ok::<_, std::io::Error>(Bytes::from_static(b"{\"model\":"))
    })
    .chain(futures::stream::pending());
    let r = tokio::time::timeout(
        Duration::from_secs(60),
        client()
            .post(&url)
            .body(reqwest::Body::wrap_stream(never))
            .send(),
    )
    .await
    .expect("bounded");
    if let Ok(r) = r {
        assert!(
            r.status().is_client_error() || r.status().is_server_error(),
            "{}",
            r.status()
        );
    }
    assert!(still_serves(&tap).await.is_success());
}

/// A tap to the upstream at `addr` whose sessions land in a hub on the
/// SQLite store at `db`, with `server` Claude Code's one configured server.
async fn claude_tap_on_store(
    addr: std::net::SocketAddr,
    db: &std::path::Path,
    server: tether_core::ServerSpec,
) -> (RunningTap, Arc<tether_hub::Hub>) {
    tether_tests::tether_first_party::link();
    let registry = Registry::with_static().expect("registry");
    let store: Arc<dyn tether_core::store::Store> =
        Arc::new(tether_store::SqliteStore::open(db).expect("store"));
    let hub = Arc::new(tether_hub::Hub::with_store(
        registry.clone(),
        Default::default(),
        store,
    ));
    let config = TapConfig {
        upstream: Some(url::Url::parse(&format!("http://{addr}")).expect("url")),
        configured: [("claude".to_owned(), vec![server])].into_iter().collect(),
        ..Default::default()
    };
    let tap = Tap::serve(
        config,
        "127.0.0.1:0".parse().expect("addr"),
        registry,
        Some(Arc::clone(&hub)),
    )
    .await
    .expect("tap");
    (tap, hub)
}

/// Everything Tether's crates log in this test binary, at every level.
fn logs() -> &'static std::sync::Mutex<Vec<u8>> {
    static LOGS: std::sync::OnceLock<&'static std::sync::Mutex<Vec<u8>>> =
        std::sync::OnceLock::new();
    LOGS.get_or_init(|| {
        let buffer: &'static std::sync::Mutex<Vec<u8>> =
            Box::leak(Box::new(std::sync::Mutex::new(Vec::new())));
        struct Into(&'static std::sync::Mutex<Vec<u8>>);
        impl std::io::Write for Into {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                if let Ok(mut v) = self.0.lock() {
                    v.extend_from_slice(b);
                }
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let _ = tracing_subscriber::fmt()
            .with_max_level(tracing_subscriber::filter::LevelFilter::TRACE)
            .with_writer(move || Into(buffer))
            .try_init();
        buffer
    })
}

/// One request and answer of a Claude Code session with `secret` planted
/// in every field a request and a response have: headers, the query, the
/// model, the system prompt, the messages, a tool's description and
/// schema, the metadata, the tool call's arguments, the answer's text.
async fn planted(secret: &str, store: &std::path::Path) -> (Vec<tether_tap::TapRecord>, String) {
    let answer = secret.to_owned();
    let (addr, _) = upstream(move |_, _| {
        let secret = answer.clone();
        async move {
            let events = [
                serde_json::json!({"type": "message_start", "message": {"id": secret, "model": secret, "content": []}}),
                serde_json::json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": secret}}),
                serde_json::json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": secret, "name": "mcp__brk__echo", "input": {}}}),
                serde_json::json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": format!("{{\"text\":\"{secret}\"}}")}}),
                serde_json::json!({"type": "message_stop"}),
            ];
            sse(events.iter().map(|e| Bytes::from(format!("event: x\ndata: {e}\n\n"))).collect())
        }
    })
    .await;
    let spec = tether_core::ServerSpec::new(
        "brk",
        tether_core::ServerSource::Profile,
        tether_core::Endpoint::Stdio {
            command: "brk".into(),
            args: vec![secret.to_owned()],
            env: vec![tether_core::spec::KeyValue::new("TOKEN", secret)],
            cwd: None,
        },
    );
    let (tap, hub) = claude_tap_on_store(addr, store, spec).await;
    let body = serde_json::json!({
        "model": "claude-opus-4-8",
        "system": [{"type": "text", "text": secret}],
        "metadata": {"user_id": secret},
        "messages": [{"role": "user", "content": secret},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "mcp__brk__echo", "input": {"text": secret}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": secret}]}],
        "tools": [{"name": "mcp__brk__echo", "description": secret,
            "input_schema": {"type": "object", "properties": {secret: {"type": "string", "description": secret}}}}],
        "stream": true
    });
    let response = client()
        .post(format!("{}/v1/messages?key={secret}", tap.base_url()))
        .header("user-agent", "claude-cli/2.1.332 (external, sdk-cli)")
        .header(
            "x-claude-code-session-id",
            "0f2ace92-9aec-4c38-8293-fa43595f3223",
        )
        .header("x-api-key", secret)
        .header("authorization", format!("Bearer {secret}"))
        .header("anthropic-beta", secret)
        .json(&body)
        .send()
        .await
        .expect("through");
    let answer = response.bytes().await.expect("body");
    assert!(
        String::from_utf8_lossy(&answer).contains(secret),
        "the answer passes whole"
    );
    let record = wait_for_record(&tap).await;
    hub.flush().await;
    tap.stop().await;
    let records = vec![record];
    let documents = format!(
        "{}{}",
        serde_json::to_string(&records).expect("json"),
        serde_json::to_string(&hub.snapshot("claude:0f2ace92-9aec-4c38-8293-fa43595f3223"))
            .expect("json"),
    );
    (records, documents)
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config { cases: 16, ..Default::default() })]

    /// Secrets, prompts and arguments planted everywhere never reach the
    /// record, the hub's history, the store (its WAL included) or the
    /// logs, while the tool offered and called is read.
    #[test]
    fn planted_secrets_reach_no_record_store_or_log(
        secret in "(sk-ant-api03-|ghp_|tsk)[A-Za-z0-9]{24,40}",
    ) {
        let logs = logs();
        let dir = tempfile::tempdir().expect("dir");
        let db = dir.path().join("tether.db");
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("rt");
        let (records, documents) = runtime.block_on(planted(&secret, &db));
        drop(runtime);
        let record = &records[0];
        proptest::prop_assert_eq!(record.offered.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["mcp__brk__echo"]);
        proptest::prop_assert_eq!(record.called[0].tool.as_deref(), Some("echo"), "{:?}", record);
        proptest::prop_assert_eq!(record.session.as_deref(), Some("claude:0f2ace92-9aec-4c38-8293-fa43595f3223"));
        proptest::prop_assert!(documents.contains("model_tap"), "{}", documents);
        proptest::prop_assert!(!documents.contains(&secret), "{}", documents);
        for entry in std::fs::read_dir(dir.path()).expect("dir") {
            // A WAL the closing store folds back in may be gone by now.
            let Ok(bytes) = std::fs::read(entry.expect("entry").path()) else {
                continue;
            };
            proptest::prop_assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "the store holds the secret"
            );
        }
        let logged = logs.lock().map(|l| String::from_utf8_lossy(&l).into_owned()).unwrap_or_default();
        proptest::prop_assert!(!logged.contains(&secret), "the logs hold the secret");
    }
}

/// `tether tap` itself: `--print-env claude --json` gives the base URL
/// with its token; a request through it reaches the upstream unchanged;
/// the session lands in the store under Claude Code's own session id, its
/// configured server `time` model-visible by `model_tap`; Ctrl-C exits 0;
/// the key the request carried is printed nowhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tap_command_passes_through_and_stores_the_session() {
    use tether_core::store::Store;
    let (addr, hits) = upstream(|_, _| async {
        sse(vec![
            Bytes::from_static(b"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"mcp__time__now\",\"input\":{}}}\n\n"),
            Bytes::from_static(b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"),
        ])
    })
    .await;
    let home = tempfile::tempdir().expect("home");
    std::fs::write(
        home.path().join(".claude.json"),
        r#"{"mcpServers": {"time": {"command": "sh", "args": ["-c", "exit 0"]}}}"#,
    )
    .expect("config");
    let db = home.path().join("tether.db");
    let stderr = home.path().join("stderr");
    let mut child = std::process::Command::new(tether_tests::workspace_bin("tether"))
        .args([
            "tap",
            "--addr",
            "127.0.0.1:0",
            "--json",
            "--print-env",
            "claude",
            "--db",
        ])
        .arg(&db)
        .args(["--upstream", &format!("http://{addr}")])
        .env("HOME", home.path())
        .env_remove("XDG_STATE_HOME")
        .current_dir(home.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&stderr).expect("stderr"))
        .spawn()
        .expect("tether tap");
    let (doc, line) = tether_tests::first_json_line(&mut child);
    assert!(
        doc["base_url"].as_str().expect("base").ends_with("/TOKEN"),
        "{doc}"
    );
    let env = &doc["setup"]["env"][0];
    assert_eq!(env["name"], "ANTHROPIC_BASE_URL", "{doc}");
    let base = env["value"].as_str().expect("value").to_owned();
    let key = "sk-ant-api03-PlantedKeyThatMustNeverBePrinted0000";
    let session = "5b1f4c1e-3c61-4a8e-9d0e-6f0b8a3f2d11";
    let answer = client()
        .post(format!("{base}/v1/messages?beta=true"))
        .header("user-agent", "claude-cli/2.1.332 (external, sdk-cli)")
        .header("x-claude-code-session-id", session)
        .header("x-api-key", key)
        .json(
            &serde_json::json!({"model": "claude-opus-4-8", "stream": true,
            "tools": [{"name": "mcp__time__now", "input_schema": {"type": "object"}}],
            "messages": [{"role": "user", "content": "what time is it"}]}),
        )
        .send()
        .await
        .expect("through the tap");
    assert_eq!(answer.status(), 200);
    assert!(
        String::from_utf8_lossy(&answer.bytes().await.expect("body")).contains("mcp__time__now")
    );
    assert_eq!(hits.load(Ordering::Relaxed), 1);
    let id = format!("claude:{session}");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let stored = loop {
        let found = tether_store::SqliteStore::open_read_only(&db)
            .ok()
            .and_then(|s| s.load(&id).ok().flatten());
        if let Some(history) = found
            && history
                .current()
                .and_then(|a| a.server("time"))
                .is_some_and(|r| {
                    r.stages.model_visible.state == tether_core::vocab::StageState::Yes
                })
        {
            break history;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the session never reached the store"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let row = stored
        .current()
        .and_then(|a| a.server("time"))
        .expect("time");
    assert_eq!(
        row.stages.model_visible.provenance,
        Some(tether_core::model::ProvenanceCode::ModelTap)
    );
    let _ = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let code = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status.code();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "tether tap did not stop on Ctrl-C"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(code, Some(0));
    let printed = std::fs::read_to_string(&stderr).expect("stderr") + &line;
    assert!(!printed.contains(key), "{printed}");
    assert!(!printed.contains("what time is it"), "{printed}");
    for entry in std::fs::read_dir(home.path()).expect("home") {
        let path = entry.expect("entry").path();
        if path.is_file() {
            let bytes = std::fs::read(&path).expect("read");
            assert!(
                !bytes.windows(key.len()).any(|w| w == key.as_bytes()),
                "{}",
                path.display()
            );
        }
    }
}

/// A host mounts the tap on its own router, beside its own routes, for the
/// agents it starts: the token still comes first, and the host's routes
/// are its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_mounts_the_tap_on_its_own_router() {
    let (upstream_addr, hits) =
        upstream(|_, body: Bytes| async move { Response::new(Body::from(body)) }).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let config = TapConfig {
        upstream: Some(url::Url::parse(&format!("http://{upstream_addr}")).expect("url")),
        ..Default::default()
    };
    let tap = Tap::new(
        config,
        addr,
        Registry::with_static().expect("registry"),
        None,
    )
    .expect("tap");
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "host's own" }))
        .nest_service("/model", tap.router());
    tokio::spawn(async move {
        let _ = tether_guard::serve(
            listener,
            app,
            tether_guard::ConnectionLimits::default(),
            std::future::pending(),
        )
        .await;
    });
    let c = client();
    let own = c
        .get(format!("http://{addr}/health"))
        .send()
        .await
        .expect("health");
    assert_eq!(own.text().await.expect("text"), "host's own");
    let base = format!("http://{addr}/model/{}", tap.token().secret());
    let echoed = c
        .post(format!("{base}/v1/messages"))
        .body("{\"model\":\"m\"}")
        .send()
        .await
        .expect("through");
    assert_eq!(echoed.status(), 200);
    assert_eq!(echoed.text().await.expect("text"), "{\"model\":\"m\"}");
    let refused = c
        .post(format!("http://{addr}/model/v1/messages"))
        .send()
        .await
        .expect("answer");
    assert_eq!(refused.status(), 401);
    assert_eq!(hits.load(Ordering::Relaxed), 1);
}

/// A harness session the tap sees again after a restart (or that `tether
/// sessions import` stored meanwhile) goes on from what the store holds:
/// a second attempt on the same history, written, never refused as older.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_seen_again_after_a_restart_goes_on_from_the_store() {
    use tether_core::store::Store;
    let (addr, _) = upstream(|_, _| async { sse(vec![Bytes::from_static(b"data: {}\n\n")]) }).await;
    let dir = tempfile::tempdir().expect("dir");
    let db = dir.path().join("tether.db");
    let id = "claude:7d1c0b8e-52f4-4a4b-9d7e-1f2a3b4c5d6e";
    let mut revisions = Vec::new();
    for _ in 0..2 {
        let spec = tether_core::ServerSpec::new(
            "time",
            tether_core::ServerSource::Profile,
            tether_core::Endpoint::Stdio {
                command: "sh".into(),
                args: vec![],
                env: vec![],
                cwd: None,
            },
        );
        let (tap, hub) = claude_tap_on_store(addr, &db, spec).await;
        let r = client()
            .post(format!("{}/v1/messages", tap.base_url()))
            .header("user-agent", "claude-cli/2.1.332 (external, sdk-cli)")
            .header(
                "x-claude-code-session-id",
                "7d1c0b8e-52f4-4a4b-9d7e-1f2a3b4c5d6e",
            )
            .json(&serde_json::json!({"model": "m", "tools": [{"name": "mcp__time__now"}]}))
            .send()
            .await
            .expect("through");
        let _ = r.bytes().await;
        let record = wait_for_record(&tap).await;
        assert_eq!(record.session.as_deref(), Some(id));
        hub.flush().await;
        let flushed = Arc::clone(&hub);
        tokio::task::spawn_blocking(move || flushed.flush_store())
            .await
            .expect("flush");
        assert_eq!(
            hub.store_stale_refusals(),
            0,
            "a write was refused as older than the store's"
        );
        let stored = tether_store::SqliteStore::open_read_only(&db)
            .expect("store")
            .load(id)
            .expect("load")
            .expect("stored");
        let row = stored
            .current()
            .and_then(|a| a.server("time"))
            .expect("time");
        assert_eq!(
            row.stages.model_visible.state,
            tether_core::vocab::StageState::Yes
        );
        revisions.push((stored.revision, stored.attempts.len()));
        tap.stop().await;
    }
    assert!(revisions[1].0 > revisions[0].0, "{revisions:?}");
    assert_eq!((revisions[0].1, revisions[1].1), (1, 2), "{revisions:?}");
}

/// One real CLI run through a tap that was told of no server: `kind` at
/// `release`, its one server `brk` (`tether-breaking-mcp`) given on its
/// command line only; `None` where the CLI is not installed (a loud skip).
async fn unconfigured_run(kind: &str, release: tether_tests::Release) -> Option<TappedRun> {
    let home = tempfile::tempdir().expect("home");
    let brk = tether_tests::workspace_bin("tether-breaking-mcp")
        .display()
        .to_string();
    // Nothing configured: the tap knows of no server at all.
    run_through_bare_tap("brk/echo", |base| {
        let mut cmd = match kind {
            "claude" => {
                let program = release.peer("node_modules/.bin/claude")?;
                let config = home.path().join("elsewhere/x.json");
                std::fs::create_dir_all(config.parent().expect("dir")).expect("dir");
                std::fs::write(
                    &config,
                    serde_json::json!({"mcpServers": {"brk": {"command": brk, "args": []}}})
                        .to_string(),
                )
                .expect("config");
                let mut cmd = std::process::Command::new(program);
                cmd.args(["-p", "echo something", "--mcp-config"])
                    .arg(&config)
                    .args(["--strict-mcp-config", "--allowedTools", "mcp__brk__echo"])
                    .env("ANTHROPIC_API_KEY", "dummy")
                    .env("ANTHROPIC_BASE_URL", base)
                    .env("CLAUDE_CODE_MAX_RETRIES", "0");
                cmd
            }
            "codex" => {
                let program = release.peer("node_modules/.bin/codex")?;
                let codex_home = home.path().join(".codex");
                std::fs::create_dir_all(&codex_home).expect("dir");
                // The model provider in its file; the server on the command line.
                std::fs::write(
                    codex_home.join("config.toml"),
                    format!(
                        "model = \"gpt-5.1\"\nmodel_provider = \"fake\"\napproval_policy = \"never\"\n\
                         [model_providers.fake]\nname = \"fake\"\nbase_url = \"{base}/v1\"\nwire_api = \"responses\"\nenv_key = \"FAKE_KEY\"\n"
                    ),
                )
                .expect("config");
                let mut cmd = std::process::Command::new(program);
                cmd.args(["exec", "--skip-git-repo-check", "--json", "-c"])
                    .arg(format!(
                        "mcp_servers.brk.command={}",
                        serde_json::json!(brk)
                    ))
                    .args([
                        "-c",
                        "mcp_servers.brk.args=[]",
                        "-c",
                        "mcp_servers.brk.required=true",
                    ])
                    .arg("echo something")
                    .env("CODEX_HOME", &codex_home)
                    .env("FAKE_KEY", "dummy");
                cmd
            }
            other => panic!("no run for {other}"),
        };
        cmd.env("PATH", release.path())
            .env("HOME", home.path())
            .current_dir(home.path());
        Some(cmd)
    })
    .await
}

/// Attribution without configuration: a real Claude Code or Codex session
/// whose one server is given by flag only, through a tap that knows of no
/// server. Every MCP tool the fake model was sent (offered, named behind a
/// tool search, called) is recorded as `brk`'s, by the harness's naming
/// alone, and nothing else is; the tool is the name's own; the session
/// gets a `brk` row the tap added, model-visible by `model_tap`.
async fn attributed_without_configuration(kind: &str, release: tether_tests::Release) {
    let Some(run) = unconfigured_run(kind, release).await else {
        return;
    };
    let label = format!("{kind} ({})", release.label());
    let turns = run.log.turns();
    assert!(
        !turns.is_empty(),
        "{label} never asked the model (exit {:?}): {}",
        run.out.status.code(),
        String::from_utf8_lossy(&run.out.stderr)
    );
    // The fake model's own log: brk's tools by their descriptions, the
    // `mcp__` names a search offers (a namespace's own name, `mcp__brk`,
    // names no tool), the calls.
    let sent = sent_mcp_tools(&turns, |n| n["mcp__".len()..].contains(['/', '_']));
    assert!(!sent.is_empty(), "{label}: the model was sent no MCP tool");
    run.assert_recorded_as_sent(&label, &sent, "brk");
    for t in run.tools() {
        if let Some(tool) = &t.tool
            && t.server.is_some()
            && !t.name.contains(tether_core::sanitize::REDACTED)
        {
            assert!(t.name.ends_with(tool.as_str()), "{label}: {t:?}");
        }
    }
    let row = run.model_visible_row(&label, "brk");
    assert_eq!(row.source, tether_core::ServerSource::Harness, "{label}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_pinned_by_flag_is_attributed_without_configuration() {
    attributed_without_configuration("claude", tether_tests::Release::Pinned).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_newest_by_flag_is_attributed_without_configuration() {
    attributed_without_configuration("claude", tether_tests::Release::Newest).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_by_flag_is_attributed_without_configuration() {
    attributed_without_configuration("codex", tether_tests::Release::Pinned).await;
}

/// A tap with no configured server on `hub`, to the upstream at `addr`.
async fn bare_tap_on(addr: std::net::SocketAddr, hub: &Arc<tether_hub::Hub>) -> RunningTap {
    tether_tests::tap_run::bare_tap(&format!("http://{addr}"), Some(hub)).await
}

/// The session's own listing (here from its records) maps a model-side
/// name back to the tool as listed, so the tap's row and the listing's name
/// one tool once; a harness's own tool stays no server's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_s_listing_names_the_tool_as_listed() {
    use tether_core::model::{Evidence, Timestamp};
    use tether_core::vocab::{EvidenceKind, Provenance};
    tether_tests::tether_first_party::link();
    let (addr, _) = upstream(|_, _| async { sse(vec![Bytes::from_static(b"data: {}\n\n")]) }).await;
    let hub = Arc::new(tether_hub::Hub::new(
        Registry::with_static().expect("registry"),
    ));
    let harness_session = "3c9e1f4a-8b2d-4e6f-9a1c-5d7b3e2f1a08";
    // What `tether sessions import` lands from the session's records.
    let mut records = tether_collect::live::LiveSessions::new(Arc::clone(&hub), Default::default());
    let sink = records
        .sink(
            "claude",
            harness_session,
            None,
            Timestamp(1),
            Provenance::HarnessRecord,
        )
        .expect("sink");
    sink.add_row("my.srv", None, Timestamp(1)).expect("row");
    for tool in ["dotted.name", "echo"] {
        sink.publish(
            Evidence::new(EvidenceKind::ToolsListObserved, Timestamp(2))
                .server("my.srv")
                .tool(tool)
                .provenance(Provenance::HarnessRecord),
        )
        .expect("listed");
    }
    hub.flush().await;
    let tap = bare_tap_on(addr, &hub).await;
    let r = client()
        .post(format!("{}/v1/messages", tap.base_url()))
        .header("user-agent", "claude-cli/2.1.197 (external, cli)")
        .header("x-claude-code-session-id", harness_session)
        .json(&serde_json::json!({"model": "m", "tools": [
            {"name": "mcp__my_srv__dotted_name"}, {"name": "mcp__my_srv__echo"}, {"name": "Bash"}]}))
        .send()
        .await
        .expect("through");
    let _ = r.bytes().await;
    let record = wait_for_record(&tap).await;
    let read: Vec<_> = record
        .offered
        .iter()
        .map(|t| {
            (
                t.name.as_str(),
                t.server.as_deref(),
                t.tool.as_deref(),
                t.by,
            )
        })
        .collect();
    assert_eq!(
        read,
        [
            (
                "mcp__my_srv__dotted_name",
                Some("my.srv"),
                Some("dotted.name"),
                Some("listing")
            ),
            (
                "mcp__my_srv__echo",
                Some("my.srv"),
                Some("echo"),
                Some("listing")
            ),
            ("Bash", None, None, None),
        ]
    );
    tap.tap().settle().await;
    hub.flush().await;
    let history = hub
        .snapshot(&format!("claude:{harness_session}"))
        .expect("session");
    let attempt = history.current().expect("current");
    let names: Vec<&str> = attempt.servers.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["my.srv"], "no second row for the spelled name");
    let row = attempt.server("my.srv").expect("row");
    let tools: Vec<&str> = row.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["dotted.name", "echo"], "{row:?}");
    assert!(
        row.tools.iter().all(|t| t.model_visible.is_yes()),
        "{row:?}"
    );
    tap.stop().await;
}

/// An ambiguous naming (`mcp_SERVER_TOOL`, both halves free to hold `_`):
/// with no server known the name is kept MCP-shaped and unresolved, and
/// nothing is published for it; once the session's own telemetry names
/// the server, the next request resolves it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ambiguous_name_stays_unresolved_until_the_session_names_its_server() {
    use tether_core::model::Timestamp;
    use tether_core::vocab::Provenance;
    tether_tests::tether_first_party::link();
    let (addr, _) =
        upstream(|_, _| async { Response::new(Body::from(r#"{"candidates": []}"#)) }).await;
    let hub = Arc::new(tether_hub::Hub::new(
        Registry::with_static().expect("registry"),
    ));
    let tap = bare_tap_on(addr, &hub).await;
    let ask = || async {
        let r = client()
            .post(format!(
                "{}/v1beta/models/gemini-2.5-pro:generateContent",
                tap.base_url()
            ))
            .header("user-agent", "GeminiCLI/0.61.0/gemini-2.5-pro (linux; x64)")
            .json(
                &serde_json::json!({"contents": [], "tools": [{"functionDeclarations": [
                {"name": "mcp_my_server_get_time"}, {"name": "read_file"}]}]}),
            )
            .send()
            .await
            .expect("through");
        let _ = r.bytes().await;
    };
    let mut records = tap.tap().subscribe();
    ask().await;
    let first = tokio::time::timeout(Duration::from_secs(30), records.recv())
        .await
        .expect("a record")
        .expect("record");
    assert_eq!(first.agent_kind.as_deref(), Some("gemini"), "{first:?}");
    let shaped = &first.offered[0];
    assert!(shaped.unresolved && shaped.server.is_none(), "{shaped:?}");
    assert!(!first.offered[1].unresolved && first.offered[1].server.is_none());
    let session = first.session.clone().expect("a tap session");
    tap.tap().settle().await;
    hub.flush().await;
    let history = hub.snapshot(&session).expect("session");
    assert!(
        history.current().expect("current").servers.is_empty(),
        "nothing guessed: {history:?}"
    );
    // The session's telemetry names its server (as the collector lands it).
    let harness_session = session.strip_prefix("gemini:").expect("gemini's");
    let mut telemetry =
        tether_collect::live::LiveSessions::new(Arc::clone(&hub), Default::default());
    telemetry
        .sink(
            "gemini",
            harness_session,
            None,
            Timestamp(5),
            Provenance::HarnessTelemetry,
        )
        .expect("sink")
        .add_row("my_server", None, Timestamp(5))
        .expect("row");
    hub.flush().await;
    ask().await;
    let second = tokio::time::timeout(Duration::from_secs(30), records.recv())
        .await
        .expect("a record")
        .expect("record");
    let t = &second.offered[0];
    assert_eq!(
        (t.server.as_deref(), t.tool.as_deref(), t.by, t.unresolved),
        (
            Some("my_server"),
            Some("get_time"),
            Some("known_server"),
            false
        ),
        "{second:?}"
    );
    tap.stop().await;
}
