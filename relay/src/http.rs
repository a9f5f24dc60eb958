//! The HTTP relay: a loopback reverse proxy per observed streamable-HTTP or
//! legacy-SSE server, run inside the host.
//!
//! The agent is given `http://127.0.0.1:PORT/<the real URL's path>` and a
//! relay token of its own (`Authorization: Bearer …`). The proxy checks the
//! token (constant time), the `Host` (its own address only) and refuses any
//! `Origin` but its own (no browser has business here), drops the token, adds the
//! server's configured headers itself, and forwards to the real server: so
//! **the agent never holds the server's credentials**. Paths map one to one
//! onto the real server's origin, so a legacy SSE `endpoint` event naming a
//! relative message path works unchanged, and one naming the real origin
//! absolutely is pointed at the relay (`EndpointRewrite`); the real URL's
//! query (which can hold a key) is added only on the agent's own path and
//! never shown to it.
//!
//! Requests are read whole (capped at [`MAX_REQUEST_BYTES`]; an MCP request
//! is one JSON message); responses stream through as they arrive, chunk by
//! chunk and so event by event, never buffered whole. Status, headers (but
//! hop-by-hop ones), `Mcp-Session-Id` and the 2026-07-28 stateless requests
//! pass unchanged; redirects are not followed (credentials stay put).
//!
//! On the side, request bodies and response messages (a JSON body, or each
//! SSE event's data) go through the same pure [`FrameReader`] as the stdio
//! relay, and its metadata-only observations become the row's evidence.
//! Observation is bounded and fail-open: a message over
//! [`MAX_OBSERVED_BYTES`] is passed through unobserved, and a gone or full
//! hub only drops evidence. The proxy never retries for the agent: an
//! unreachable server is a `502` the agent sees at once.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use tether_core::spec::KeyValue;
use tether_guard::{BodyCap, HostPolicy, Refusal, Token};
use tether_hub::EvidenceSink;

use crate::frames::{Direction, FrameReader};
use crate::report::Reporter;

/// The largest request body forwarded.
pub const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;
/// Messages larger than this pass through without being observed.
pub const MAX_OBSERVED_BYTES: usize = 4 * 1024 * 1024;

use tether_guard::HOP_BY_HOP;

/// Where one relayed HTTP server really is.
#[derive(Clone)]
pub(crate) struct Upstream {
    pub url: url::Url,
    pub headers: Vec<KeyValue>,
}

struct Proxy {
    upstream: Upstream,
    authority: String,
    policy: HostPolicy,
    token: Token,
    client: reqwest::Client,
    watch: Mutex<Watch>,
}

/// The side reader: frames paired into observations, then reported.
struct Watch {
    frames: FrameReader,
    reporter: Reporter,
}

impl Proxy {
    fn observe(&self, direction: Direction, message: &[u8]) {
        if message.len() > MAX_OBSERVED_BYTES {
            return;
        }
        let mut watch = self.watch.lock().unwrap_or_else(|p| p.into_inner());
        for observation in watch.frames.frame(direction, message, Instant::now()) {
            watch.reporter.report(observation);
        }
    }
}

/// A running proxy; stops when dropped.
pub(crate) struct HttpRelay {
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for HttpRelay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts the proxy for `upstream` on 127.0.0.1 (a fresh port); evidence
/// goes to whatever sink is in `sink` when it is observed.
pub(crate) fn start(
    upstream: Upstream,
    token: Token,
    reporter: Reporter,
    runtime: &tokio::runtime::Handle,
) -> std::io::Result<HttpRelay> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .tcp_nodelay(true)
        .connect_timeout(Duration::from_secs(10))
        .build()
        .map_err(std::io::Error::other)?;
    let proxy = Arc::new(Proxy {
        upstream,
        authority: addr.to_string(),
        policy: HostPolicy::for_addr(addr),
        token,
        client,
        watch: Mutex::new(Watch {
            frames: FrameReader::new(),
            reporter,
        }),
    });
    let app = axum::Router::new()
        .fallback(forward)
        .with_state(Arc::clone(&proxy));
    let task = runtime.spawn(async move {
        let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
            return;
        };
        // The guard's accept loop: bounded connections, and each answer
        // goes out as written (no Nagle wait behind the agent's delayed
        // ACK, 40 ms a round trip otherwise).
        if let Err(err) = tether_guard::serve(
            listener,
            app,
            tether_guard::ConnectionLimits::default(),
            std::future::pending(),
        )
        .await
        {
            tracing::debug!(%err, "the HTTP relay stopped");
        }
    });
    Ok(HttpRelay { addr, task })
}

fn refuse(status: StatusCode, why: &'static str) -> Response {
    (status, why).into_response()
}

async fn forward(State(proxy): State<Arc<Proxy>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    // The one guard every listener shares: only this address, never a
    // rebinding name; never a browser; then the relay token; the body capped.
    if let Err(refusal) = tether_guard::check(&proxy.policy, &proxy.token, &parts.headers) {
        let why = match refusal {
            Refusal::BadHost => "wrong Host\n",
            Refusal::BadOrigin => "cross-origin requests are refused\n",
            Refusal::Unauthorized => "the relay token is missing or wrong\n",
            Refusal::TooLarge => "request body too large\n",
            Refusal::TimedOut => "request body did not arrive in time\n",
        };
        return refuse(refusal.status(), why);
    }
    let body = match BodyCap(MAX_REQUEST_BYTES).read(body).await {
        Ok(body) => body,
        Err(refusal @ Refusal::TimedOut) => {
            return refuse(refusal.status(), "request body did not arrive in time\n");
        }
        Err(refusal) => return refuse(refusal.status(), "request body too large\n"),
    };
    if !body.is_empty() {
        proxy.observe(Direction::ToServer, &body);
    }

    // The real URL: same path and query; on the agent's own path with no
    // query of its own, the configured URL's query too.
    let mut url = proxy.upstream.url.clone();
    let path = parts.uri.path();
    if path != proxy.upstream.url.path() || parts.uri.query().is_some() {
        url.set_path(path);
        url.set_query(parts.uri.query());
    }
    let mut headers = HeaderMap::new();
    for (name, value) in &parts.headers {
        let lower = name.as_str();
        if HOP_BY_HOP.contains(&lower)
            || name == header::AUTHORIZATION
            || name == header::CONTENT_LENGTH
        {
            continue;
        }
        headers.append(name.clone(), value.clone());
    }
    for kv in &proxy.upstream.headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(kv.name.as_bytes()),
            HeaderValue::from_str(&kv.value),
        ) {
            headers.insert(name, value);
        }
    }
    let upstream = proxy
        .client
        .request(parts.method, url)
        .headers(headers)
        .body(body)
        .send()
        .await;
    let upstream = match upstream {
        Ok(response) => response,
        Err(err) => {
            tracing::debug!(%err, "the relayed server is unreachable");
            return refuse(StatusCode::BAD_GATEWAY, "the MCP server is unreachable\n");
        }
    };

    let status = upstream.status();
    let mut response_headers = HeaderMap::new();
    for (name, value) in upstream.headers() {
        if !HOP_BY_HOP.contains(&name.as_str()) {
            response_headers.append(name.clone(), value.clone());
        }
    }
    let event_stream = upstream
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let mut reader = ResponseReader::new(Arc::clone(&proxy), event_stream);
    let read_through = upstream.bytes_stream().map(move |chunk| {
        if let Ok(bytes) = &chunk {
            reader.feed(bytes);
        }
        chunk
    });
    let body = if event_stream {
        // A legacy SSE `endpoint` event may name the real origin: it is
        // pointed back at this relay, or the agent would leave it.
        let rewrite = EndpointRewrite::new(&proxy.upstream.url, &proxy.authority);
        Body::from_stream(rewrite.over(read_through))
    } else {
        Body::from_stream(read_through)
    };
    let mut response = Response::new(body);
    *response.status_mut() = status;
    *response.headers_mut() = response_headers;
    response
}

/// Reads a response on its way through: the whole JSON body (observed when
/// the stream ends), or each server-sent event's data as it completes.
struct ResponseReader {
    proxy: Arc<Proxy>,
    event_stream: bool,
    buffer: Vec<u8>,
    /// Over the observation bound: passed through, not read.
    overflowed: bool,
}

impl ResponseReader {
    fn new(proxy: Arc<Proxy>, event_stream: bool) -> Self {
        ResponseReader {
            proxy,
            event_stream,
            buffer: Vec::new(),
            overflowed: false,
        }
    }

    fn feed(&mut self, bytes: &Bytes) {
        if self.overflowed {
            if !self.event_stream {
                return;
            }
            // An event stream recovers at the next event boundary.
            match find_boundary(bytes) {
                Some((at, len)) => {
                    self.overflowed = false;
                    self.buffer.clear();
                    self.buffer.extend_from_slice(&bytes[at + len..]);
                }
                None => return,
            }
        } else {
            self.buffer.extend_from_slice(bytes);
        }
        if self.event_stream {
            while let Some((at, len)) = find_boundary(&self.buffer) {
                let event: Vec<u8> = self.buffer.drain(..at + len).collect();
                self.event(&event[..at]);
            }
        }
        if self.buffer.len() > MAX_OBSERVED_BYTES {
            self.buffer = Vec::new();
            self.overflowed = true;
        }
    }

    /// One server-sent event: its `data` lines joined are one message (an
    /// `endpoint` event names a URL, not a message).
    fn event(&self, event: &[u8]) {
        let text = String::from_utf8_lossy(event);
        let mut name = "message";
        let mut data: Vec<&str> = Vec::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("event:") {
                name = rest.trim();
            } else if let Some(rest) = line.strip_prefix("data:") {
                data.push(rest.strip_prefix(' ').unwrap_or(rest));
            }
        }
        if name == "message" && !data.is_empty() {
            self.proxy
                .observe(Direction::ToAgent, data.join("\n").as_bytes());
        }
    }
}

impl Drop for ResponseReader {
    fn drop(&mut self) {
        if !self.event_stream && !self.overflowed && !self.buffer.is_empty() {
            self.proxy.observe(Direction::ToAgent, &self.buffer);
        }
    }
}

/// The first event of a stream may be at most this long before it is passed on unread.
const MAX_FIRST_EVENT: usize = 64 * 1024;

/// Points a legacy SSE `endpoint` event that names the real server's origin
/// (`http://real:port/messages?sessionId=…`) at this relay instead
/// (`http://127.0.0.1:PORT/messages?sessionId=…`). Only the first event is
/// read (keep-alive comments before it pass at once), and it is held only
/// until it is complete; everything after it, and every stream whose first
/// event is not such an endpoint, passes unchanged.
/// A relative endpoint (what servers usually send) needs nothing: paths map
/// one to one. An endpoint on another origin is left as it is.
struct EndpointRewrite {
    origin: url::Origin,
    relay: String,
    buffer: Vec<u8>,
    /// Bytes of keep-alive comments already passed on before the first event.
    passed: usize,
    done: bool,
}

impl EndpointRewrite {
    fn new(upstream: &url::Url, authority: &str) -> Self {
        EndpointRewrite {
            origin: upstream.origin(),
            relay: format!("http://{authority}"),
            buffer: Vec::new(),
            passed: 0,
            done: false,
        }
    }

    /// The stream with its first event rewritten, if it needs to be.
    fn over<S, E>(self, stream: S) -> impl futures::Stream<Item = Result<Bytes, E>> + Send
    where
        S: futures::Stream<Item = Result<Bytes, E>> + Send + Unpin,
        E: Send,
    {
        futures::stream::unfold(
            (stream, Some(self)),
            |(mut stream, mut rewrite)| async move {
                loop {
                    match stream.next().await {
                        Some(Ok(bytes)) => match rewrite.as_mut() {
                            Some(r) => {
                                let out = r.push(&bytes);
                                if r.done {
                                    rewrite = None;
                                }
                                if !out.is_empty() {
                                    return Some((Ok(out), (stream, rewrite)));
                                }
                            }
                            None => return Some((Ok(bytes), (stream, rewrite))),
                        },
                        Some(Err(err)) => return Some((Err(err), (stream, rewrite))),
                        None => {
                            let rest = rewrite.take().map(|r| r.buffer).unwrap_or_default();
                            return (!rest.is_empty())
                                .then(|| (Ok(Bytes::from(rest)), (stream, None)));
                        }
                    }
                }
            },
        )
    }

    /// Takes a chunk; returns what may go to the agent now (maybe nothing yet).
    fn push(&mut self, bytes: &Bytes) -> Bytes {
        self.buffer.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some((at, len)) = find_boundary(&self.buffer) {
            let rest = self.buffer.split_off(at + len);
            let event = std::mem::replace(&mut self.buffer, rest);
            let keep_alive = event[..at]
                .split(|b| *b == b'\n')
                .all(|line| line.is_empty() || line == b"\r" || line.starts_with(b":"));
            if keep_alive {
                // Comments before the first real event pass as they are.
                self.passed += event.len();
                out.extend_from_slice(&event);
                continue;
            }
            match rewrite_endpoint(&event[..at], &self.origin, &self.relay) {
                Some(mut rewritten) => {
                    rewritten.extend_from_slice(&event[at..]);
                    out.extend_from_slice(&rewritten);
                }
                None => out.extend_from_slice(&event),
            }
            self.done = true;
            out.append(&mut self.buffer);
            return Bytes::from(out);
        }
        if self.passed + self.buffer.len() > MAX_FIRST_EVENT {
            self.done = true;
            out.append(&mut self.buffer);
        }
        Bytes::from(out)
    }
}

/// An `endpoint` event (without its blank line) with every `data` line that
/// names `origin` absolutely re-pointed at `relay`; `None` when nothing changes.
fn rewrite_endpoint(event: &[u8], origin: &url::Origin, relay: &str) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(event).ok()?;
    if !text
        .lines()
        .any(|l| l.strip_prefix("event:").map(str::trim) == Some("endpoint"))
    {
        return None;
    }
    let mut out = String::with_capacity(text.len() + relay.len());
    let mut changed = false;
    for line in text.split_inclusive('\n') {
        let content = line.trim_end_matches(['\r', '\n']);
        let ending = &line[content.len()..];
        let value = content
            .strip_prefix("data:")
            .map(|v| v.strip_prefix(' ').unwrap_or(v));
        match value.and_then(|v| url::Url::parse(v).ok()) {
            Some(url) if url.origin() == *origin => {
                let query = url.query().map(|q| format!("?{q}")).unwrap_or_default();
                out.push_str(&format!("data: {relay}{}{query}{ending}", url.path()));
                changed = true;
            }
            _ => out.push_str(line),
        }
    }
    changed.then(|| out.into_bytes())
}

/// Where the first event ends: a blank line (`\n\n` or `\r\n\r\n`).
fn find_boundary(bytes: &[u8]) -> Option<(usize, usize)> {
    let lf = bytes.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2));
    let crlf = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4));
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

/// The agent-facing URL for `upstream`: this proxy's origin, the real path.
pub(crate) fn agent_url(addr: SocketAddr, upstream: &url::Url) -> String {
    format!("http://{addr}{}", upstream.path())
}

/// The sink slot a relay reports into until its ticket is bound.
pub(crate) type SinkSlot = Arc<Mutex<Option<EvidenceSink>>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_absolute_endpoint_on_the_real_origin_is_pointed_at_the_relay() {
        let upstream = url::Url::parse("http://10.0.0.7:8931/sse?key=k").expect("url");
        let mut rewrite = EndpointRewrite::new(&upstream, "127.0.0.1:4100");
        // Split mid-event: nothing goes out until the event is complete.
        assert!(
            rewrite
                .push(&Bytes::from_static(
                    b"event: endpoint\r\ndata: http://10.0.0.7:8931/mess"
                ))
                .is_empty()
        );
        let out = rewrite.push(&Bytes::from_static(
            b"ages?sessionId=abc\r\n\r\nevent: message\r\ndata: {}\r\n\r\n",
        ));
        assert_eq!(
            &out[..],
            b"event: endpoint\r\ndata: http://127.0.0.1:4100/messages?sessionId=abc\r\n\r\nevent: message\r\ndata: {}\r\n\r\n"
        );
        assert!(rewrite.done);

        // A keep-alive comment first: it passes, and the endpoint after it is still read.
        let mut rewrite = EndpointRewrite::new(&upstream, "127.0.0.1:4100");
        let out = rewrite.push(&Bytes::from_static(
            b": ping\n\nevent: endpoint\ndata: http://10.0.0.7:8931/messages?sessionId=x\n\n",
        ));
        assert_eq!(
            &out[..],
            b": ping\n\nevent: endpoint\ndata: http://127.0.0.1:4100/messages?sessionId=x\n\n"
        );

        let origin = upstream.origin();
        let relay = "http://127.0.0.1:4100";
        // Relative (the usual), another origin, another event: unchanged.
        for event in [
            "event: endpoint\ndata: /messages?sessionId=abc",
            "event: endpoint\ndata: http://elsewhere:1/messages",
            "event: message\ndata: http://10.0.0.7:8931/messages",
            "data: http://10.0.0.7:8931/messages",
        ] {
            assert_eq!(
                rewrite_endpoint(event.as_bytes(), &origin, relay),
                None,
                "{event}"
            );
        }
        assert_eq!(
            rewrite_endpoint(
                b"event:endpoint\ndata:http://10.0.0.7:8931/m",
                &origin,
                relay
            ),
            Some(b"event:endpoint\ndata: http://127.0.0.1:4100/m".to_vec())
        );
    }

    #[test]
    fn a_first_event_that_never_ends_is_passed_on_once_it_is_too_long() {
        let upstream = url::Url::parse("http://10.0.0.7:8931/sse").expect("url");
        let mut rewrite = EndpointRewrite::new(&upstream, "127.0.0.1:4100");
        let chunk = Bytes::from(vec![b'x'; 40 * 1024]);
        assert!(rewrite.push(&chunk).is_empty());
        assert_eq!(rewrite.push(&chunk).len(), 80 * 1024);
        assert!(rewrite.done);
    }

    #[test]
    fn event_boundaries_are_found_for_both_line_endings() {
        assert_eq!(find_boundary(b"data: a\n\ndata: b"), Some((7, 2)));
        assert_eq!(find_boundary(b"data: a\r\n\r\ndata: b"), Some((7, 4)));
        assert_eq!(find_boundary(b"data: a\n"), None);
    }
}
