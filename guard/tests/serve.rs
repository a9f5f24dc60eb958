//! The guard's accept loop under abuse: idle and slow sockets are closed on
//! their deadlines, a slow body is a 408, and sockets that sit idle can
//! never keep a real client out.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::ConnectInfo;
use axum::extract::Request;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use tether_guard::{BodyCap, ConnectionLimits, ConnectionStats};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn limits(max: usize) -> ConnectionLimits {
    ConnectionLimits {
        max_connections: max,
        header_timeout: Duration::from_millis(800),
        body_timeout: Duration::from_millis(800),
    }
}

async fn start(limits: ConnectionLimits) -> (SocketAddr, Arc<ConnectionStats>) {
    let router = Router::new()
        .route(
            "/peer",
            get(|ConnectInfo(peer): ConnectInfo<SocketAddr>| async move { peer.to_string() }),
        )
        .route(
            "/echo",
            post(|request: Request| async move {
                match BodyCap(1024).read(request.into_body()).await {
                    Ok(body) => (axum::http::StatusCode::OK, body).into_response(),
                    Err(refusal) => (refusal.status(), refusal.code()).into_response(),
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let stats = Arc::new(ConnectionStats::default());
    let counted = Arc::clone(&stats);
    tokio::spawn(async move {
        let _ = tether_guard::serve::serve_counted(
            listener,
            router,
            limits,
            counted,
            std::future::pending(),
        )
        .await;
    });
    (addr, stats)
}

/// Reads until the peer closes (or `bound` passes): what arrived, and
/// whether it closed.
async fn read_until_closed(stream: &mut TcpStream, bound: Duration) -> (Vec<u8>, bool) {
    let mut got = Vec::new();
    let deadline = Instant::now() + bound;
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (got, true),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
            Err(_) => return (got, false),
        }
    }
}

async fn request(addr: SocketAddr, raw: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(raw.as_bytes()).await.expect("write");
    let (got, _) = read_until_closed(&mut stream, Duration::from_secs(10)).await;
    String::from_utf8_lossy(&got).into_owned()
}

/// GIVEN a listener with an 800 ms header deadline WHEN one socket sends
/// nothing and another sends a request's headers one byte at a time THEN
/// both are closed near the deadline, never held open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_slow_header_sockets_are_closed_on_the_deadline() {
    let (addr, _) = start(limits(64)).await;
    let mut idle = TcpStream::connect(addr).await.expect("connect");
    let started = Instant::now();
    let (_, closed) = read_until_closed(&mut idle, Duration::from_secs(10)).await;
    assert!(closed, "an idle socket is closed");
    assert!(started.elapsed() < Duration::from_secs(5));

    let mut slow = TcpStream::connect(addr).await.expect("connect");
    let started = Instant::now();
    let line = b"GET /peer HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let mut closed = false;
    for byte in line {
        if slow.write_all(&[*byte]).await.is_err() {
            closed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        if started.elapsed() > Duration::from_secs(10) {
            break;
        }
    }
    if !closed {
        closed = read_until_closed(&mut slow, Duration::from_secs(5)).await.1;
    }
    assert!(closed, "a socket that sends its headers slowly is closed");
    assert!(started.elapsed() < Duration::from_secs(8));
}

/// GIVEN a listener with an 800 ms body deadline WHEN a request's body
/// trickles in a byte at a time THEN the handler's read is refused as too
/// slow (408), not as too large; a whole body is echoed; and the peer's
/// address reaches the handler.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trickling_body_is_a_408_and_a_whole_one_is_served() {
    let (addr, _) = start(limits(64)).await;
    let answer = request(
        addr,
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("hello"), "{answer}");
    let answer = request(
        addr,
        "GET /peer HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(answer.contains("127.0.0.1:"), "{answer}");

    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream
        .write_all(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
        .await
        .expect("headers");
    let writer = tokio::spawn(async move {
        for _ in 0..100 {
            if stream.write_all(b"x").await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        stream
    });
    let mut stream = writer.await.expect("writer");
    let (got, _) = read_until_closed(&mut stream, Duration::from_secs(5)).await;
    let answer = String::from_utf8_lossy(&got);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("timed_out"), "{answer}");
}

/// GIVEN a listener capped at 16 connections WHEN 64 sockets connect and
/// sit idle (more than the cap, as 1,100 idle sockets pass a 1,024-file
/// limit) THEN a real client still gets its answer at once, every time,
/// because an idle socket makes room; a kept-alive client that was
/// answered is closed only after the never-answered idle ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_sockets_never_keep_a_real_client_out() {
    let (addr, stats) = start(ConnectionLimits {
        max_connections: 16,
        header_timeout: Duration::from_secs(60),
        body_timeout: Duration::from_secs(60),
    })
    .await;
    // A kept-alive client that was answered once.
    let mut kept = TcpStream::connect(addr).await.expect("connect");
    kept.write_all(b"GET /peer HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .expect("write");
    let mut buf = [0u8; 1024];
    let n = kept.read(&mut buf).await.expect("answer");
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"));

    let mut idle = Vec::new();
    for _ in 0..64 {
        idle.push(TcpStream::connect(addr).await.expect("connect"));
    }
    for round in 0..5 {
        let started = Instant::now();
        let answer = tokio::time::timeout(
            Duration::from_secs(5),
            request(
                addr,
                "GET /peer HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            ),
        )
        .await
        .unwrap_or_else(|_| panic!("round {round}: no answer in 5 s"));
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }
    assert!(stats.evicted() >= 49, "evicted {}", stats.evicted());
    assert!(stats.open() <= 16, "open {}", stats.open());
    // The answered client outlived the idle sockets that came after it.
    kept.write_all(b"GET /peer HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .expect("write");
    let n = tokio::time::timeout(Duration::from_secs(5), kept.read(&mut buf))
        .await
        .expect("in time")
        .expect("read");
    assert!(
        buf[..n].starts_with(b"HTTP/1.1 200"),
        "the admitted connection is still served"
    );
    drop(idle);
}
