//! The pass-through: every byte of the request on to the upstream, every
//! byte of its answer back, chunk by chunk as it arrives; a copy of each
//! chunk (shared, not copied) handed to the observer with `try_send`, so
//! the traffic never waits on it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use tether_guard::Refusal;

use crate::Inner;
use crate::api::Api;
use crate::observe::Seen;
use crate::read::{MAX_READ_BYTES, Unread};

use tether_guard::HOP_BY_HOP;

fn text(status: StatusCode, why: &'static str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        why,
    )
        .into_response()
}

/// What a request tells the observer, without ever waiting: a failed
/// `try_send` marks the request lost (its record says its copy was
/// dropped) and sends nothing more for it but its end.
#[derive(Clone)]
struct Line {
    id: u64,
    lost: Arc<AtomicBool>,
    inner: Arc<Inner>,
}

impl Line {
    fn send(&self, seen: Seen) {
        if self.lost.load(Ordering::Relaxed) {
            return;
        }
        if self.inner.seen.try_send(seen).is_err() {
            self.lost.store(true, Ordering::Relaxed);
            self.inner.stats.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn end(&self, outcome: &'static str, bytes: (u64, u64), started: Instant) {
        let _ = self.inner.seen.try_send(Seen::End {
            id: self.id,
            outcome,
            request_bytes: bytes.0,
            response_bytes: bytes.1,
            lost: self.lost.load(Ordering::Relaxed),
            elapsed_ms: started.elapsed().as_millis().min(u128::from(u64::MAX)) as u64,
        });
    }
}

pub(crate) async fn forward(State(inner): State<Arc<Inner>>, request: Request) -> Response {
    let started = Instant::now();
    inner.stats.requests.fetch_add(1, Ordering::Relaxed);
    let (parts, body) = request.into_parts();
    let (rest, url) = match admit(&inner, &parts) {
        Ok(admitted) => admitted,
        Err((status, why)) => return text(status, why),
    };
    let api = (parts.method == axum::http::Method::POST)
        .then(|| Api::of(&rest))
        .flatten();
    let id = inner.next_id.fetch_add(1, Ordering::Relaxed);
    let line = Line {
        id,
        lost: Arc::new(AtomicBool::new(false)),
        inner: Arc::clone(&inner),
    };
    line.send(Seen::Begin {
        id,
        at: tether_hub::now(),
        api,
        caller: inner.caller(&parts.headers),
    });

    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let max = inner.limits.max_request_bytes;
    if declared.is_some_and(|n| n > max) {
        inner.stats.too_large.fetch_add(1, Ordering::Relaxed);
        line.end("too_large", (0, 0), started);
        return too_large();
    }

    let sent = Arc::new(AtomicU64::new(0));
    let over = Arc::new(AtomicBool::new(false));
    let tee = RequestTee {
        line: line.clone(),
        path: rest.split('?').next().unwrap_or("").to_owned(),
        chunks: api.map(|_| Vec::new()),
        unread: None,
        size: 0,
        declared,
        done: false,
        max,
        sent: Arc::clone(&sent),
        over: Arc::clone(&over),
    };
    let send = inner
        .client
        .request(parts.method.clone(), url)
        .headers(end_to_end(&parts.headers))
        .body(reqwest::Body::wrap_stream(request_stream(body, tee)))
        .send();
    let upstream = match tokio::time::timeout(inner.limits.response_start, send).await {
        Ok(Ok(response)) => response,
        Ok(Err(err)) => return unsent(&line, err, &sent, &over, started),
        Err(_) => {
            inner.stats.timeouts.fetch_add(1, Ordering::Relaxed);
            line.end("no_answer", (sent.load(Ordering::Relaxed), 0), started);
            return text(
                StatusCode::GATEWAY_TIMEOUT,
                "the model API did not answer in time\n",
            );
        }
    };
    inner.stats.forwarded.fetch_add(1, Ordering::Relaxed);
    let tee = ResponseTee {
        line,
        declared: upstream.content_length(),
        observe: api.is_some(),
        sent,
        received: 0,
        outcome: "client_gone",
        started,
    };
    respond(&inner, upstream, tee)
}

/// The guard first: this address only, never a browser, then the token in
/// the path (the harness's own credentials ride in its headers); then the
/// upstream for the rest of the path. The path after the token, and its
/// upstream URL; or the refusal's status and words.
fn admit(
    inner: &Inner,
    parts: &axum::http::request::Parts,
) -> Result<(String, reqwest::Url), (StatusCode, &'static str)> {
    let rest = match tether_guard::check_path(
        &inner.policy,
        &inner.token,
        &parts.headers,
        parts.uri.path(),
    ) {
        Ok(rest) => rest.to_owned(),
        Err(refusal) => {
            inner.stats.refused.fetch_add(1, Ordering::Relaxed);
            let why = match refusal {
                Refusal::BadHost => "wrong Host\n",
                Refusal::BadOrigin => "cross-origin requests are refused\n",
                _ => "the tap's token is missing or wrong: use the base URL `tether tap` printed\n",
            };
            return Err((refusal.status(), why));
        }
    };
    let Some(url) = inner.upstream_url(&rest, parts.uri.query()) else {
        inner.stats.upstream_errors.fetch_add(1, Ordering::Relaxed);
        return Err((
            StatusCode::BAD_GATEWAY,
            "no upstream for this path: start the tap with --upstream URL\n",
        ));
    };
    Ok((rest, url))
}

fn too_large() -> Response {
    text(
        StatusCode::PAYLOAD_TOO_LARGE,
        "request body too large for the tap\n",
    )
}

/// The headers that go on to the other side: all but the hop-by-hop ones.
fn end_to_end(from: &HeaderMap) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in from {
        if !HOP_BY_HOP.contains(&name.as_str()) {
            headers.append(name.clone(), value.clone());
        }
    }
    headers
}

/// The request body as the upstream reads it: each chunk through the tee
/// (counted against the cap, its copy kept for the observer); past the
/// cap, or on the client's error, the stream fails and ends.
fn request_stream(
    body: Body,
    tee: RequestTee,
) -> impl futures::Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
    futures::stream::unfold(
        (body.into_data_stream(), Some(tee)),
        |(mut stream, mut tee)| async move {
            let t = tee.as_mut()?;
            match stream.next().await {
                Some(Ok(chunk)) => match t.take(&chunk) {
                    Ok(()) => Some((Ok(chunk), (stream, tee))),
                    Err(err) => Some((Err(err), (stream, None))),
                },
                Some(Err(err)) => Some((Err(std::io::Error::other(err)), (stream, None))),
                None => {
                    if let Some(mut t) = tee.take() {
                        t.finish();
                    }
                    None
                }
            }
        },
    )
}

/// The answer to a request the upstream never answered: the body was over
/// the cap, or the upstream was unreachable (never retried).
fn unsent(
    line: &Line,
    err: reqwest::Error,
    sent: &AtomicU64,
    over: &AtomicBool,
    started: Instant,
) -> Response {
    let stats = &line.inner.stats;
    let request_bytes = sent.load(Ordering::Relaxed);
    if over.load(Ordering::Relaxed) {
        stats.too_large.fetch_add(1, Ordering::Relaxed);
        line.end("too_large", (request_bytes, 0), started);
        return too_large();
    }
    // Without its URL: a query can hold a key.
    let err = err.without_url();
    tracing::debug!(err = %tether_core::sanitize::summary(&err.to_string()), "the upstream is unreachable");
    stats.upstream_errors.fetch_add(1, Ordering::Relaxed);
    line.end("upstream_error", (request_bytes, 0), started);
    text(
        StatusCode::BAD_GATEWAY,
        "the model API is unreachable (the tap never retries)\n",
    )
}

/// The upstream's answer, on to the client: its status and end-to-end
/// headers (told to the observer), then its body chunk by chunk through
/// the tee, each chunk within the idle bound and all within the longest a
/// request may take.
fn respond(inner: &Inner, upstream: reqwest::Response, tee: ResponseTee) -> Response {
    let status = upstream.status();
    let response_headers = end_to_end(upstream.headers());
    let header_text = |name: header::HeaderName| {
        upstream
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    tee.line.send(Seen::Response {
        id: tee.line.id,
        status: status.as_u16(),
        content_type: header_text(header::CONTENT_TYPE),
        encoding: header_text(header::CONTENT_ENCODING),
    });
    let idle = inner.limits.idle;
    let deadline = tokio::time::Instant::now() + inner.limits.max_duration;
    let stream = futures::stream::unfold(
        (upstream.bytes_stream(), Some(tee)),
        move |(mut stream, mut tee)| async move {
            let t = tee.as_mut()?;
            let until = (tokio::time::Instant::now() + idle).min(deadline);
            match tokio::time::timeout_at(until, stream.next()).await {
                Ok(Some(Ok(chunk))) => {
                    t.take(&chunk);
                    Some((Ok(chunk), (stream, tee)))
                }
                Ok(Some(Err(err))) => {
                    t.outcome = "upstream_reset";
                    t.line
                        .inner
                        .stats
                        .upstream_errors
                        .fetch_add(1, Ordering::Relaxed);
                    drop(tee);
                    Some((Err(std::io::Error::other(err)), (stream, None)))
                }
                Ok(None) => {
                    t.outcome = "completed";
                    None
                }
                Err(_) => {
                    t.outcome = if tokio::time::Instant::now() >= deadline {
                        "max_duration"
                    } else {
                        "idle_timeout"
                    };
                    t.line.inner.stats.timeouts.fetch_add(1, Ordering::Relaxed);
                    drop(tee);
                    Some((
                        Err(std::io::Error::new(
                            std::io::ErrorKind::TimedOut,
                            "the model API stalled",
                        )),
                        (stream, None),
                    ))
                }
            }
        },
    );
    let mut response = Response::new(Body::from_stream(stream));
    *response.status_mut() = status;
    *response.headers_mut() = response_headers;
    response
}

/// The request body on its way: counted against the cap, and its chunks
/// (shared) kept for the observer up to [`MAX_READ_BYTES`].
struct RequestTee {
    line: Line,
    path: String,
    chunks: Option<Vec<Bytes>>,
    unread: Option<Unread>,
    size: u64,
    /// Its `Content-Length`: the client (hyper) stops reading there, and
    /// never asks for the end.
    declared: Option<u64>,
    done: bool,
    max: u64,
    sent: Arc<AtomicU64>,
    over: Arc<AtomicBool>,
}

impl RequestTee {
    fn take(&mut self, chunk: &Bytes) -> Result<(), std::io::Error> {
        self.size += chunk.len() as u64;
        self.sent.store(self.size, Ordering::Relaxed);
        if self.size > self.max {
            self.over.store(true, Ordering::Relaxed);
            self.chunks = None;
            return Err(std::io::Error::other("request body over the tap's cap"));
        }
        if let Some(chunks) = &mut self.chunks {
            if self.size > MAX_READ_BYTES as u64 {
                self.chunks = None;
                self.unread = Some(Unread::TooLarge);
            } else {
                chunks.push(chunk.clone());
            }
        }
        if self.declared == Some(self.size) {
            self.finish();
        }
        Ok(())
    }

    /// The body is whole: its chunks (or why not) to the observer, once.
    fn finish(&mut self) {
        if std::mem::replace(&mut self.done, true) || self.over.load(Ordering::Relaxed) {
            return;
        }
        let body = match (self.chunks.take(), self.unread) {
            (Some(chunks), None) => Ok(chunks),
            (_, Some(why)) => Err(why),
            (None, None) => return,
        };
        self.line.send(Seen::Request {
            id: self.line.id,
            path: std::mem::take(&mut self.path),
            body,
        });
    }
}

/// The response on its way: each chunk's copy to the observer, and the
/// end (however it came) when it is dropped.
struct ResponseTee {
    line: Line,
    /// Its `Content-Length`: the server (hyper) stops reading there.
    declared: Option<u64>,
    observe: bool,
    sent: Arc<AtomicU64>,
    received: u64,
    outcome: &'static str,
    started: Instant,
}

impl ResponseTee {
    fn take(&mut self, chunk: &Bytes) {
        self.received += chunk.len() as u64;
        if self.declared == Some(self.received) {
            self.outcome = "completed";
        }
        if self.observe {
            self.line.send(Seen::Chunk {
                id: self.line.id,
                bytes: chunk.clone(),
            });
        }
    }
}

impl Drop for ResponseTee {
    fn drop(&mut self) {
        self.line.end(
            self.outcome,
            (self.sent.load(Ordering::Relaxed), self.received),
            self.started,
        );
    }
}
