//! The HTTP relay: a loopback reverse proxy per observed streamable-HTTP or
//! legacy-SSE server. Real agents reach real servers through it and the rows
//! reach Active from the server's own traffic; the proxy locks its door
//! (token, `Host`, `Origin`, body cap), adds the server's headers itself so
//! the agent never holds them, and streams responses without buffering.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tether_core::registry::Registry;
use tether_core::vocab::{DisplayStatus, ServerSource};
use tether_core::{Endpoint, KeyValue, ServerSpec};
use tether_relay::RelayHost;
use tether_tests::workspace_bin;

fn http(name: &str, url: &str, sse: bool) -> ServerSpec {
    let (url, headers) = (url.to_owned(), vec![]);
    ServerSpec::new(
        name,
        ServerSource::Profile,
        if sse {
            Endpoint::Sse { url, headers }
        } else {
            Endpoint::Http { url, headers }
        },
    )
}

fn target(program: PathBuf, args: &[&str], servers: Vec<ServerSpec>) -> tether_probe::ProbeTarget {
    tether_probe::ProbeTarget {
        grace: Duration::from_secs(20),
        timeout: Duration::from_secs(90),
        extra_servers: servers,
        observe_servers: true,
        ..tether_probe::ProbeTarget::new(program.display().to_string(), args)
    }
}

fn assert_relayed(
    attempt: &tether_core::history::AttachmentAttempt,
    name: &str,
    real_url: &str,
    who: &str,
) {
    let row = attempt
        .server(name)
        .unwrap_or_else(|| panic!("{who}: no row {name}"));
    assert_eq!(row.status, DisplayStatus::Active, "{who}: {name}: {row:#?}");
    assert!(row.tool_count.unwrap_or(0) >= 13, "{who}: {name}: {row:#?}");
    let real = url::Url::parse(real_url).expect("url");
    assert_eq!(
        row.target,
        format!("http://127.0.0.1:{}", real.port().expect("port")),
        "{who}: the row shows the real server, not the proxy"
    );
    assert_eq!(
        row.stages
            .tools_listed
            .provenance
            .map(|p| p.word().as_str().to_owned()),
        Some("relay".to_owned()),
        "{who}: {name}"
    );
    let catalog = row.tool_catalog.as_ref().expect("a catalog from the relay");
    assert_eq!(Some(catalog.tool_count), row.tool_count);
}

/// GIVEN server-everything over streamable HTTP and over legacy SSE WHEN
/// claude-agent-acp gets both through the HTTP relay THEN both rows reach
/// Active with their tool counts, from the relay's own view of the traffic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_agent_acp_reaches_streamable_http_and_sse_servers_through_the_http_relay() {
    workspace_bin("tether-relay");
    let Some(agent) = tether_tests::peer("node_modules/.bin/claude-agent-acp") else {
        return;
    };
    let (Some((_h, http_url)), Some((_s, sse_url))) = (
        tether_tests::everything_over_http("streamableHttp").await,
        tether_tests::everything_over_http("sse").await,
    ) else {
        return;
    };
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let opts = tether_probe::ProbeOptions {
        prompt: None,
        authenticate: None,
        target: target(
            agent,
            &[],
            vec![
                http("every-http", &http_url, false),
                http("every-sse", &sse_url, true),
            ],
        ),
    };
    let report = tether_probe::run_probe(opts, |_| {}).await.report;
    let attempt = report.report.as_ref().expect("attempt");
    assert_relayed(attempt, "every-http", &http_url, "claude-agent-acp");
    assert_relayed(attempt, "every-sse", &sse_url, "claude-agent-acp");
}

/// The real Claude Code and Codex CLIs (passthrough) given server-everything
/// over streamable HTTP through the relay.
async fn passthrough_http_relayed(kind: &str, bin: &str, args: &[&str]) {
    workspace_bin("tether-relay");
    let Some(cli) = tether_tests::peer(&format!("node_modules/.bin/{bin}")) else {
        return;
    };
    let Some((_server, url)) = tether_tests::everything_over_http("streamableHttp").await else {
        return;
    };
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let opts = tether_probe::PassthroughOptions {
        kind: kind.into(),
        target: target(cli, args, vec![http("every-http", &url, false)]),
    };
    let outcome = tether_probe::run_passthrough_probe(
        Registry::with_static().expect("registry"),
        opts,
        |_| {},
    )
    .await;
    let attempt = outcome.report.report.as_ref().expect("attempt");
    assert_relayed(attempt, "every-http", &url, kind);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_reaches_an_http_server_through_the_http_relay() {
    passthrough_http_relayed(
        "claude",
        "claude",
        &["-p", "hi", "--output-format", "stream-json", "--verbose"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_reaches_an_http_server_through_the_http_relay() {
    passthrough_http_relayed("codex", "codex", &["exec", "--skip-git-repo-check", "hi"]).await;
}

/// What a plain upstream saw: the headers of each request.
type Seen = Arc<Mutex<Vec<Vec<(String, String)>>>>;

/// A plain HTTP upstream on 127.0.0.1: records request headers; `/mcp`
/// (and `/messages`) answer JSON, `/stream` two server-sent events 600 ms
/// apart, `/sse` a legacy `endpoint` event naming its own origin absolutely.
async fn upstream() -> (String, Seen) {
    use axum::response::IntoResponse;
    let seen: Seen = Arc::default();
    let record = Arc::clone(&seen);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let app = axum::Router::new()
        .route(
            "/sse",
            axum::routing::get(move || async move {
                (
                    [("content-type", "text/event-stream")],
                    format!("event: endpoint\ndata: http://{addr}/messages?sessionId=abc\n\n"),
                )
                    .into_response()
            }),
        )
        .route(
            "/{path}",
            axum::routing::post(move |headers: axum::http::HeaderMap| {
                let record = Arc::clone(&record);
                async move {
                    record.lock().expect("lock").push(
                        headers
                            .iter()
                            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_owned()))
                            .collect(),
                    );
                    (
                        [
                            ("content-type", "application/json"),
                            ("mcp-session-id", "sess-1"),
                        ],
                        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#,
                    )
                        .into_response()
                }
            }),
        )
        .route(
            "/stream",
            axum::routing::get(|| async {
                let events = futures::stream::unfold(0u8, |n| async move {
                    match n {
                        0 => Some((Ok::<_, std::io::Error>("data: {\"a\":1}\n\n".to_owned()), 1)),
                        1 => {
                            tokio::time::sleep(Duration::from_millis(600)).await;
                            Some((Ok("data: {\"b\":2}\n\n".to_owned()), 2))
                        }
                        _ => None,
                    }
                });
                (
                    [("content-type", "text/event-stream")],
                    axum::body::Body::from_stream(events),
                )
                    .into_response()
            }),
        );
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}/mcp?key=query-secret-5150"), seen)
}

/// GIVEN a server configured with a secret header and a secret query WHEN
/// it is relayed THEN the agent's endpoint holds neither, only a relay token;
/// the proxy refuses a missing token, a foreign `Host`, any `Origin` and an
/// oversized body; with the token it forwards, adding the server's header and
/// query and dropping the token; and a slow event stream arrives event by
/// event, not at the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_relay_locks_its_door_and_injects_the_servers_credentials() {
    let (url, seen) = upstream().await;
    let host = RelayHost::start(workspace_bin("tether-relay"))
        .await
        .expect("relay host");
    let spec = ServerSpec::new(
        "guarded",
        ServerSource::Profile,
        Endpoint::Http {
            url: url.clone(),
            headers: vec![KeyValue::new("X-Api-Key", "header-secret-8080")],
        },
    );
    let (relayed, _ticket) = host.relay(&spec).expect("relayed");
    let Endpoint::Http {
        url: agent_url,
        headers: agent_headers,
    } = &relayed.endpoints[0]
    else {
        panic!("an HTTP endpoint for the agent: {relayed:?}");
    };
    let given = format!("{agent_url} {agent_headers:?}");
    for secret in ["header-secret-8080", "query-secret-5150"] {
        assert!(!given.contains(secret), "the agent holds {secret}: {given}");
    }
    assert!(agent_url.starts_with("http://127.0.0.1:") && agent_url.ends_with("/mcp"));
    let token = agent_headers[0].value.clone();
    let client = reqwest::Client::new();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let post = |auth: Option<&str>| {
        let mut request = client
            .post(agent_url)
            .header("content-type", "application/json")
            .body(body);
        if let Some(auth) = auth {
            request = request.header("authorization", auth);
        }
        request
    };
    assert_eq!(post(None).send().await.expect("send").status(), 401);
    assert_eq!(
        post(Some("Bearer not-the-token"))
            .send()
            .await
            .expect("send")
            .status(),
        401
    );
    assert_eq!(
        post(Some(&token))
            .header("origin", "http://evil.example")
            .send()
            .await
            .expect("send")
            .status(),
        403
    );
    assert_eq!(
        post(Some(&token))
            .header("host", "rebound.example:80")
            .send()
            .await
            .expect("send")
            .status(),
        421
    );
    // A client of its own: the relay refuses mid-body and closes the
    // connection, which must not be pooled for the requests below.
    let huge = reqwest::Client::new()
        .post(agent_url)
        .header("authorization", &token)
        .body(vec![b' '; 17 * 1024 * 1024])
        .send()
        .await
        .map(|r| r.status().as_u16());
    assert!(matches!(huge, Ok(413) | Err(_)), "{huge:?}");
    assert!(seen.lock().expect("lock").is_empty(), "nothing got through");

    // The scheme is case-insensitive (RFC 9110), as at the observed endpoint.
    let bare = token
        .split_once(' ')
        .map(|(_, t)| t)
        .expect("Bearer <token>");
    for spelled in [format!("bearer {bare}"), format!("BEARER {bare}")] {
        assert_eq!(
            post(Some(&spelled)).send().await.expect("send").status(),
            200,
            "{spelled:?} is refused"
        );
    }
    // The relay goes through the guard every listener shares: a loopback
    // address also answers as `localhost`, as the other listeners do.
    let port = url::Url::parse(agent_url)
        .expect("url")
        .port()
        .expect("port");
    assert_eq!(
        post(Some(&token))
            .header("host", format!("LOCALHOST:{port}"))
            .send()
            .await
            .expect("send")
            .status(),
        200
    );
    seen.lock().expect("lock").clear();

    let ok = post(Some(&token)).send().await.expect("send");
    assert_eq!(ok.status(), 200);
    assert_eq!(
        ok.headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok()),
        Some("sess-1")
    );
    assert_eq!(
        ok.text().await.expect("body"),
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#
    );
    let headers = seen.lock().expect("lock")[0].clone();
    assert!(headers.contains(&("x-api-key".into(), "header-secret-8080".into())));
    assert!(
        headers
            .iter()
            .all(|(k, v)| k != "authorization" && !v.contains(&token[7..])),
        "the relay token stays with the relay: {headers:?}"
    );

    // Event by event: the first event arrives long before the second.
    let stream_url = agent_url.replace("/mcp", "/stream");
    let started = Instant::now();
    let mut response = client
        .get(&stream_url)
        .header("authorization", &token)
        .send()
        .await
        .expect("send");
    let first = response.chunk().await.expect("chunk").expect("an event");
    let first_at = started.elapsed();
    assert_eq!(&first[..], b"data: {\"a\":1}\n\n");
    let second = response.chunk().await.expect("chunk").expect("an event");
    assert_eq!(&second[..], b"data: {\"b\":2}\n\n");
    assert!(
        first_at < Duration::from_millis(500) && started.elapsed() >= Duration::from_millis(600),
        "streamed, not buffered: first after {first_at:?}"
    );

    // A legacy SSE endpoint naming the real origin is pointed at the relay,
    // and a message posted there reaches the server with its credentials.
    let sse = client
        .get(agent_url.replace("/mcp", "/sse"))
        .header("authorization", &token)
        .send()
        .await
        .expect("send")
        .text()
        .await
        .expect("body");
    let relay_origin = &agent_url[..agent_url.len() - "/mcp".len()];
    let messages = format!("{relay_origin}/messages?sessionId=abc");
    assert_eq!(sse, format!("event: endpoint\ndata: {messages}\n\n"));
    let before = seen.lock().expect("lock").len();
    let posted = client
        .post(&messages)
        .header("authorization", &token)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("send");
    assert_eq!(posted.status(), 200);
    let headers = seen.lock().expect("lock")[before].clone();
    assert!(headers.contains(&("x-api-key".into(), "header-secret-8080".into())));
}

/// GIVEN server-everything over streamable HTTP behind the HTTP relay, its
/// evidence bound to a hub's attempt WHEN that attempt is superseded and the
/// hub goes away mid-session THEN
/// every further call still goes through and answers; the observations
/// that had nowhere to go are counted, nothing else changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_relay_keeps_relaying_when_the_hub_is_gone() {
    let Some((_server, url)) = tether_tests::everything_over_http("streamableHttp").await else {
        return;
    };
    let host = RelayHost::start(workspace_bin("tether-relay"))
        .await
        .expect("relay host");
    let hub = tether_tests::acp_hub();
    let spec = http("every-http", &url, false);
    let (relayed, ticket) = host.relay(&spec).expect("relayed");
    let attempt = hub
        .begin_attempt(tether_hub::AttemptRequest::new(
            tether_core::Owner {
                task: "t".into(),
                session: "s".into(),
                execution: "e".into(),
            },
            "agent",
            tether_core::DriveMode::Acp,
            tether_core::vocab::Trigger::SessionNew,
            vec![relayed.clone()],
        ))
        .expect("attempt");
    ticket.bind(attempt.sink.clone());
    let Endpoint::Http {
        url: agent_url,
        headers,
    } = &relayed.endpoints[0]
    else {
        panic!("an HTTP relay endpoint");
    };
    let client = reqwest::Client::new();
    let post = |body: String, session: Option<String>| {
        let mut request = client
            .post(agent_url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("authorization", &headers[0].value)
            .body(body);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let init = post(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#.into(),
        None,
    )
    .await
    .expect("initialize");
    let session = init
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    init.bytes().await.expect("body");
    post(
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into(),
        session.clone(),
    )
    .await
    .expect("initialized");
    hub.flush().await;
    let seen = hub.snapshot("s").and_then(|h| {
        h.current()
            .and_then(|a| a.server("every-http").map(|r| r.client.clone()))
    });
    assert!(
        seen.flatten().is_some_and(|c| c.name == "t"),
        "the relay reported the handshake before the hub went"
    );
    let before = host.not_published();
    // The attempt is superseded (its sink refuses), then the hub goes away.
    let _next = hub
        .begin_attempt(tether_hub::AttemptRequest::new(
            tether_core::Owner {
                task: "t".into(),
                session: "s".into(),
                execution: "e".into(),
            },
            "agent",
            tether_core::DriveMode::Acp,
            tether_core::vocab::Trigger::SessionNew,
            vec![],
        ))
        .expect("a newer attempt");
    drop(attempt);
    drop(hub);
    for i in 1..=20 {
        let answer = post(
            format!(
                r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"still here {i}"}}}}}}"#
            ),
            session.clone(),
        )
        .await
        .expect("a call after the hub went");
        assert_eq!(answer.status(), 200);
        let text = answer.text().await.expect("body");
        assert!(text.contains(&format!("still here {i}")), "{text}");
    }
    assert!(
        host.not_published() > before,
        "observations with nowhere to go are counted"
    );
}

/// GIVEN a server the relay cannot take (its URL does not parse) WHEN a
/// host offers it for observation THEN it is delivered directly, and its row
/// says why in a note (copied diagnostics and the view's details too),
/// without any of its values.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_the_relay_cannot_take_is_delivered_directly_and_its_row_says_why() {
    let host = RelayHost::start(workspace_bin("tether-relay"))
        .await
        .expect("relay host");
    let spec = ServerSpec::new(
        "odd",
        ServerSource::Profile,
        Endpoint::Http {
            url: "not a url, token=planted-secret-4242".into(),
            headers: vec![KeyValue::new("X-Key", "planted-header-1717")],
        },
    );
    let offered = host.offer(std::slice::from_ref(&spec), |_| true);
    assert!(offered.relayed.is_empty());
    assert_eq!(
        offered.specs[0].endpoints, spec.endpoints,
        "delivered as it was"
    );
    let hub = tether_tests::acp_hub();
    let mut request = tether_hub::AttemptRequest::new(
        tether_core::Owner {
            task: "t".into(),
            session: "s".into(),
            execution: "e".into(),
        },
        "agent",
        tether_core::DriveMode::Acp,
        tether_core::vocab::Trigger::SessionNew,
        offered.specs.clone(),
    );
    request.capabilities.http = Some(true);
    hub.begin_attempt(request).expect("attempt");
    hub.flush().await;
    let history = hub.snapshot("s").expect("history");
    let row = history
        .current()
        .and_then(|a| a.server("odd"))
        .expect("row");
    let note = row.note.as_deref().expect("a note");
    assert!(
        note.contains("not observed") && note.contains("does not parse"),
        "{note}"
    );
    let view = tether_words::display::project_row(row);
    assert!(view.details.iter().any(|d| d.starts_with("note: ")));
    let stored = serde_json::to_string(&history).expect("json");
    for secret in ["planted-secret-4242", "planted-header-1717"] {
        assert!(!stored.contains(secret), "{secret} in {stored}");
    }
}
