//! tether-collect: the OTLP/HTTP receiver harnesses send their own telemetry
//! to (`tether collect`).
//!
//! - It takes logs, traces and metrics at the standard paths (`/v1/logs`,
//!   `/v1/traces`, `/v1/metrics`), in protobuf or JSON, gzip or plain, and
//!   decodes them with the OpenTelemetry project's own types
//!   (`opentelemetry-proto`, [`decode`]).
//! - It answers as the OTLP/HTTP specification says: `200` with the signal's
//!   export response; `400` for a body that is not the request its path
//!   names; `413` past the body or decompression cap, or for a body that
//!   would decode into more than its cap ([`budget`]); `415` for another
//!   content type or encoding; `503` with `Retry-After` when its queue is
//!   full. Error bodies are an OTLP `Status` in the request's encoding. It
//!   never makes a harness wait: decoding is bounded by the caps and the
//!   hand-over is a `try_send`.
//! - It is locked like every listener, by `tether-guard`: a token from the OS
//!   RNG (`Authorization: Bearer …`, which a harness sends through
//!   `OTEL_EXPORTER_OTLP_HEADERS`), the `Host` check, no `Origin`, and the
//!   caps.
//! - It is a library: a host mounts [`Receiver::router`] on its own server,
//!   or feeds [`decode::decode`]'s batches to its own consumer, or runs all
//!   of `tether collect` ([`service::RunningCollect`]: the receiver, the
//!   forward and the collector), as the CLI does.
//!
//! Its modules:
//! - [`budget`]: the caps a body and its decoding stay within;
//! - [`decode`]: OTLP bodies (protobuf or JSON, gzip or plain) into batches;
//! - [`telemetry_records`]: a decoded batch flattened into plugin-readable records;
//! - [`collector`]: harness telemetry into Tether sessions in a hub;
//! - [`live`]: one hub attempt per harness session, its rows from today's configuration;
//! - [`pump`]: a receiver's batches fed to a collector on a thread of its own;
//! - [`forward`]: every admitted request passed on, unchanged, to the user's own collector;
//! - [`service`]: all of `tether collect`: the receiver, the forward and the collector.
//!
//! Its invariants are written once, in ARCHITECTURE.md (`collect/`), each
//! with the test that checks it.

#![warn(missing_docs)]

/// The file `tether collect` keeps its receiver's token in, so a harness
/// set up once keeps sending: `$XDG_STATE_HOME/tether/collect-token`, else
/// `~/.local/state/tether/collect-token`; `None` without either (relative
/// values are ignored). Kept by [`tether_guard::kept::keep_token`].
pub fn default_token_file() -> Option<std::path::PathBuf> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(std::path::PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|home| home.join(".local/state"))
        })?;
    Some(state.join("tether").join("collect-token"))
}

pub mod budget;
pub mod collector;
pub mod decode;
pub mod forward;
pub mod live;
pub mod pump;
pub mod service;
pub mod telemetry_records;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver as QueueReceiver, SyncSender, TrySendError};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceResponse;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceResponse;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceResponse;
use prost::Message;
use tether_guard::{BodyCap, HostPolicy, Refusal, Token};
use tokio_util::sync::CancellationToken;

pub use decode::{Batch, DecodeError, Encoding, Signal};

/// The receiver's bounds.
#[derive(Debug, Clone, Copy)]
pub struct ReceiverConfig {
    /// The most a request body may hold as sent (compressed or not).
    pub body_cap: usize,
    /// The most a body may hold once decompressed.
    pub decompressed_cap: usize,
    /// The most a body may decode into ([`budget::estimate`], known before
    /// decoding); past it, `413`. Bounds what a small body can become.
    pub decoded_cap: usize,
    /// Decoded batches waiting for the consumer; past it, `503`.
    pub queue: usize,
    /// What those batches take decoded (their estimates, reserved before
    /// each decode), at most; past it, `503`. Bounds the queue's memory
    /// whatever the batches hold.
    pub queue_bytes: usize,
    /// Bodies decoded at once; past it, `503` at once (memory stays bounded
    /// under a burst: at most this many decompressed bodies and their
    /// decoded form).
    pub decoders: usize,
}

impl Default for ReceiverConfig {
    fn default() -> Self {
        ReceiverConfig {
            body_cap: 4 * 1024 * 1024,
            decompressed_cap: 8 * 1024 * 1024,
            decoded_cap: 24 * 1024 * 1024,
            queue: 1024,
            queue_bytes: 32 * 1024 * 1024,
            decoders: 2,
        }
    }
}

/// What the receiver has done so far: a read-only snapshot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// Requests that reached the receiver.
    pub requests: u64,
    /// Batches handed to the consumer.
    pub batches: u64,
    /// Log records, spans and metrics in those batches.
    pub items: u64,
    /// Refused by the guard (token, `Host`, `Origin`).
    pub refused: u64,
    /// Bodies that were not the request their path names (`400`).
    pub malformed: u64,
    /// Bodies past a cap (`413`).
    pub too_large: u64,
    /// Content types or encodings OTLP does not have (`415`).
    pub unsupported: u64,
    /// Batches not taken because the queue was full (`503`).
    pub busy: u64,
}

#[derive(Default)]
struct Stats {
    requests: AtomicU64,
    batches: AtomicU64,
    items: AtomicU64,
    refused: AtomicU64,
    malformed: AtomicU64,
    too_large: AtomicU64,
    unsupported: AtomicU64,
    busy: AtomicU64,
}

impl Stats {
    fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    fn snapshot(&self) -> ReceiverStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        ReceiverStats {
            requests: get(&self.requests),
            batches: get(&self.batches),
            items: get(&self.items),
            refused: get(&self.refused),
            malformed: get(&self.malformed),
            too_large: get(&self.too_large),
            unsupported: get(&self.unsupported),
            busy: get(&self.busy),
        }
    }
}

struct Inner {
    forward: std::sync::OnceLock<forward::Forwarder>,
    token: Token,
    config: ReceiverConfig,
    decoders: Arc<tokio::sync::Semaphore>,
    queue: SyncSender<(Batch, usize)>,
    queued_bytes: Arc<AtomicUsize>,
    stats: Stats,
}

/// The receiving side: a token, bounds, and the queue's sending half.
/// Cheap to clone.
#[derive(Clone)]
pub struct Receiver {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

/// The consuming side of the queue: decoded batches, in arrival order.
#[derive(Debug)]
pub struct Batches {
    queue: QueueReceiver<(Batch, usize)>,
    queued_bytes: Arc<AtomicUsize>,
}

impl Batches {
    /// The next batch, waiting at most `timeout`; `None` on timeout or when
    /// every receiver is gone.
    pub fn next(&self, timeout: Duration) -> Option<Batch> {
        self.queue.recv_timeout(timeout).ok().map(|b| self.taken(b))
    }

    /// A batch if one is waiting.
    pub fn try_next(&self) -> Option<Batch> {
        self.queue.try_recv().ok().map(|b| self.taken(b))
    }

    fn taken(&self, (batch, bytes): (Batch, usize)) -> Batch {
        self.queued_bytes.fetch_sub(bytes, Ordering::AcqRel);
        batch
    }
}

impl Receiver {
    /// A receiver with a fresh token and the queue it feeds.
    pub fn new(config: ReceiverConfig) -> (Receiver, Batches) {
        Self::with_token(config, Token::generate())
    }

    /// A receiver that admits `token` (one kept from an earlier start, so a
    /// harness configured once keeps sending), and the queue it feeds.
    pub fn with_token(config: ReceiverConfig, token: Token) -> (Receiver, Batches) {
        let (tx, rx) = std::sync::mpsc::sync_channel(config.queue.max(1));
        let queued_bytes = Arc::new(AtomicUsize::new(0));
        let receiver = Receiver {
            inner: Arc::new(Inner {
                forward: std::sync::OnceLock::new(),
                token,
                decoders: Arc::new(tokio::sync::Semaphore::new(config.decoders.max(1))),
                config,
                queue: tx,
                queued_bytes: Arc::clone(&queued_bytes),
                stats: Stats::default(),
            }),
        };
        let batches = Batches {
            queue: rx,
            queued_bytes,
        };
        (receiver, batches)
    }

    /// The token a harness must send (`Authorization: Bearer …`).
    pub fn token(&self) -> &Token {
        &self.inner.token
    }

    /// What it has done so far.
    pub fn stats(&self) -> ReceiverStats {
        self.inner.stats.snapshot()
    }

    /// From now on, passes every admitted request, unchanged, to `forward`
    /// as well (see [`forward`]); `false` if a forward was already set.
    pub fn set_forward(&self, forward: forward::Forwarder) -> bool {
        self.inner.forward.set(forward).is_ok()
    }

    /// What the forward has done, if one is set.
    pub fn forward_stats(&self) -> Option<forward::ForwardStats> {
        self.inner.forward.get().map(forward::Forwarder::stats)
    }

    /// The three routes, answering only the `Host`s in `policy`.
    pub fn router(&self, policy: HostPolicy) -> Router {
        let route = |signal: Signal| {
            let state = (self.clone(), Arc::new(policy.clone()), signal);
            post(move |request: Request| export(state.clone(), request))
        };
        // Every refusal is an OTLP `Status`, the router's own too.
        let elsewhere = |request: Request| async move {
            let encoding = header_text(request.headers(), header::CONTENT_TYPE)
                .and_then(Encoding::from_content_type);
            let known = [Signal::Logs, Signal::Traces, Signal::Metrics]
                .iter()
                .any(|s| s.path() == request.uri().path());
            if known {
                status(
                    StatusCode::METHOD_NOT_ALLOWED,
                    encoding,
                    "OTLP/HTTP takes POST only",
                )
            } else {
                status(
                    StatusCode::NOT_FOUND,
                    encoding,
                    "OTLP/HTTP is at /v1/logs, /v1/traces and /v1/metrics",
                )
            }
        };
        Router::new()
            .route(Signal::Logs.path(), route(Signal::Logs).fallback(elsewhere))
            .route(
                Signal::Traces.path(),
                route(Signal::Traces).fallback(elsewhere),
            )
            .route(
                Signal::Metrics.path(),
                route(Signal::Metrics).fallback(elsewhere),
            )
            .fallback(elsewhere)
    }

    /// Binds `addr` (`127.0.0.1:4318` is the OTLP/HTTP default; use port 0
    /// for a free one) and serves until [`RunningReceiver::shutdown`].
    pub async fn serve(&self, addr: SocketAddr) -> std::io::Result<RunningReceiver> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let router = self.router(HostPolicy::for_addr(addr));
        let cancel = CancellationToken::new();
        let stop = cancel.clone();
        let task = tokio::spawn(async move {
            let served = tether_guard::serve(
                listener,
                router,
                tether_guard::ConnectionLimits::default(),
                async move { stop.cancelled().await },
            )
            .await;
            if let Err(err) = served {
                tracing::warn!(%err, "the OTLP receiver stopped");
            }
        });
        Ok(RunningReceiver {
            addr,
            cancel,
            task: Some(task),
        })
    }
}

/// A receiver serving on a socket.
#[derive(Debug)]
pub struct RunningReceiver {
    addr: SocketAddr,
    cancel: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl RunningReceiver {
    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL a harness is given (`OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops serving and waits for the server to end.
    pub async fn shutdown(mut self) {
        self.cancel.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for RunningReceiver {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// Why a body did not become a queued batch.
enum Failed {
    /// It is not the request its path names, or past a cap.
    Decode(DecodeError),
    /// What it would decode into is past the cap, too deep, or not
    /// well-formed.
    Estimate(budget::EstimateError),
    /// The queue's byte budget (or the blocking pool) has no room now.
    Busy,
}

/// Bodies up to this size, uncompressed, are decoded on the runtime's worker.
const SMALL_BODY: usize = 256 * 1024;

/// The OTLP `Status` every error answer carries (google.rpc.Status, without
/// details).
#[derive(Clone, PartialEq, prost::Message)]
struct Status {
    #[prost(int32, tag = "1")]
    code: i32,
    #[prost(string, tag = "2")]
    message: String,
}

fn status(code: StatusCode, encoding: Option<Encoding>, message: &str) -> Response {
    // gRPC codes: INVALID_ARGUMENT, UNAUTHENTICATED, RESOURCE_EXHAUSTED,
    // UNAVAILABLE, PERMISSION_DENIED, UNIMPLEMENTED, DEADLINE_EXCEEDED.
    let grpc = match code {
        StatusCode::UNAUTHORIZED => 16,
        StatusCode::FORBIDDEN | StatusCode::MISDIRECTED_REQUEST => 7,
        StatusCode::PAYLOAD_TOO_LARGE => 8,
        StatusCode::SERVICE_UNAVAILABLE => 14,
        StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED => 12,
        StatusCode::REQUEST_TIMEOUT => 4,
        _ => 3,
    };
    let body = Status {
        code: grpc,
        message: message.to_owned(),
    };
    let mut response = match encoding {
        Some(Encoding::Json) => (
            code,
            [(header::CONTENT_TYPE, Encoding::Json.content_type())],
            serde_json::json!({"code": body.code, "message": body.message}).to_string(),
        )
            .into_response(),
        Some(Encoding::Protobuf) => (
            code,
            [(header::CONTENT_TYPE, Encoding::Protobuf.content_type())],
            body.encode_to_vec(),
        )
            .into_response(),
        // No OTLP encoding to answer in: JSON, OTLP's readable one.
        None => (
            code,
            [(header::CONTENT_TYPE, Encoding::Json.content_type())],
            serde_json::json!({"code": body.code, "message": body.message}).to_string(),
        )
            .into_response(),
    };
    if code == StatusCode::SERVICE_UNAVAILABLE {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    response
}

fn accepted(signal: Signal, encoding: Encoding) -> Response {
    let bytes = match (signal, encoding) {
        (Signal::Logs, Encoding::Protobuf) => ExportLogsServiceResponse::default().encode_to_vec(),
        (Signal::Traces, Encoding::Protobuf) => {
            ExportTraceServiceResponse::default().encode_to_vec()
        }
        (Signal::Metrics, Encoding::Protobuf) => {
            ExportMetricsServiceResponse::default().encode_to_vec()
        }
        (Signal::Logs, Encoding::Json) => to_json(&ExportLogsServiceResponse::default()),
        (Signal::Traces, Encoding::Json) => to_json(&ExportTraceServiceResponse::default()),
        (Signal::Metrics, Encoding::Json) => to_json(&ExportMetricsServiceResponse::default()),
    };
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, encoding.content_type())],
        Body::from(bytes),
    )
        .into_response()
}

fn to_json(value: &impl serde::Serialize) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec())
}

fn header_text(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// One OTLP request: the guard's checks, the body under its cap, the
/// forward, then decoded (bounded) and handed to the queue without waiting.
async fn export(
    (receiver, policy, signal): (Receiver, Arc<HostPolicy>, Signal),
    request: Request,
) -> Response {
    let inner = &receiver.inner;
    Stats::bump(&inner.stats.requests);
    let encoding =
        header_text(request.headers(), header::CONTENT_TYPE).and_then(Encoding::from_content_type);
    if let Err(refusal) = tether_guard::check(&policy, &inner.token, request.headers()) {
        return refused(inner, refusal, encoding);
    }
    let Some(encoding) = encoding else {
        Stats::bump(&inner.stats.unsupported);
        return status(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            None,
            "send application/x-protobuf or application/json",
        );
    };
    let content_encoding =
        header_text(request.headers(), header::CONTENT_ENCODING).map(str::to_owned);
    let content_type = header_text(request.headers(), header::CONTENT_TYPE)
        .unwrap_or(encoding.content_type())
        .to_owned();
    let body = match read_body(inner, request.into_body(), encoding).await {
        Ok(body) => body,
        Err(answer) => return answer,
    };
    // Admitted: forwarded as it came (never waited on), whatever becomes of
    // it here.
    if let Some(forward) = inner.forward.get() {
        forward.offer(
            signal,
            &content_type,
            content_encoding.as_deref(),
            body.clone(),
        );
    }
    // A permit per decode, taken without waiting: a burst past it is told to
    // retry instead of holding more bodies in memory.
    let Ok(_permit) = Arc::clone(&inner.decoders).try_acquire_owned() else {
        return failed(inner, Failed::Busy, encoding);
    };
    match decode_body(inner, signal, encoding, content_encoding, body).await {
        Ok((batch, bytes)) => enqueue(inner, signal, encoding, batch, bytes),
        Err(why) => failed(inner, why, encoding),
    }
}

/// The answer to a request the guard refused (counted).
fn refused(inner: &Inner, refusal: Refusal, encoding: Option<Encoding>) -> Response {
    Stats::bump(&inner.stats.refused);
    let why = match refusal {
        Refusal::BadHost => "this receiver answers only its own address",
        Refusal::BadOrigin => "requests from a browser are refused",
        Refusal::Unauthorized => {
            "send the receiver's token as `Authorization: Bearer …` (OTEL_EXPORTER_OTLP_HEADERS)"
        }
        Refusal::TooLarge => "the body is too large",
        Refusal::TimedOut => "the body did not arrive in time",
    };
    status(refusal.status(), encoding, why)
}

/// The body, up to the cap; else the answer (counted).
async fn read_body(
    inner: &Inner,
    body: Body,
    encoding: Encoding,
) -> Result<axum::body::Bytes, Response> {
    match BodyCap(inner.config.body_cap).read(body).await {
        Ok(body) => Ok(body),
        Err(Refusal::TimedOut) => {
            Stats::bump(&inner.stats.malformed);
            Err(status(
                StatusCode::REQUEST_TIMEOUT,
                Some(encoding),
                "the body did not arrive in time",
            ))
        }
        Err(_) => {
            Stats::bump(&inner.stats.too_large);
            Err(status(
                StatusCode::PAYLOAD_TOO_LARGE,
                Some(encoding),
                "the body is over the receiver's cap",
            ))
        }
    }
}

/// Decompresses, estimates what the body decodes into (without allocating
/// it), reserves that in the queue's budget before decoding (a full queue
/// costs no decode), then decodes; the reservation is given back on every
/// path that does not enqueue. Small bodies (the usual batch) decode in
/// place; large ones off the runtime's workers.
async fn decode_body(
    inner: &Inner,
    signal: Signal,
    encoding: Encoding,
    content_encoding: Option<String>,
    body: axum::body::Bytes,
) -> Result<(Batch, usize), Failed> {
    let cap = inner.config.decompressed_cap;
    let decoded_cap = inner.config.decoded_cap;
    let small = body.len() <= SMALL_BODY && content_encoding.is_none();
    let queued_bytes = Arc::clone(&inner.queued_bytes);
    let budget = inner.config.queue_bytes;
    let work = move || -> Result<(Batch, usize), Failed> {
        let plain =
            decode::decompress(content_encoding.as_deref(), &body, cap).map_err(Failed::Decode)?;
        let bytes = budget::estimate(signal, encoding, &plain, decoded_cap)
            .map_err(Failed::Estimate)?
            .bytes;
        queued_bytes
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |queued| {
                (queued == 0 || queued.saturating_add(bytes) <= budget).then(|| queued + bytes)
            })
            .map_err(|_| Failed::Busy)?;
        match decode::decode(signal, encoding, &plain) {
            Ok(batch) => Ok((batch, bytes)),
            Err(err) => {
                queued_bytes.fetch_sub(bytes, Ordering::AcqRel);
                Err(Failed::Decode(err))
            }
        }
    };
    if small {
        work()
    } else {
        tokio::task::spawn_blocking(work)
            .await
            .unwrap_or(Err(Failed::Busy))
    }
}

/// The answer to a body that did not become a queued batch (counted).
fn failed(inner: &Inner, why: Failed, encoding: Encoding) -> Response {
    let (code, message) = match why {
        Failed::Busy => {
            Stats::bump(&inner.stats.busy);
            return status(
                StatusCode::SERVICE_UNAVAILABLE,
                Some(encoding),
                "the receiver is busy; retry",
            );
        }
        Failed::Estimate(err) => {
            let code = match &err {
                budget::EstimateError::OverCap { .. } => {
                    Stats::bump(&inner.stats.too_large);
                    StatusCode::PAYLOAD_TOO_LARGE
                }
                budget::EstimateError::TooDeep | budget::EstimateError::Malformed(_) => {
                    Stats::bump(&inner.stats.malformed);
                    StatusCode::BAD_REQUEST
                }
            };
            (code, err.to_string())
        }
        Failed::Decode(err) => {
            let code = match &err {
                DecodeError::TooLarge(_) => {
                    Stats::bump(&inner.stats.too_large);
                    StatusCode::PAYLOAD_TOO_LARGE
                }
                DecodeError::UnsupportedEncoding(_) => {
                    Stats::bump(&inner.stats.unsupported);
                    StatusCode::UNSUPPORTED_MEDIA_TYPE
                }
                DecodeError::BadGzip | DecodeError::Malformed { .. } => {
                    Stats::bump(&inner.stats.malformed);
                    StatusCode::BAD_REQUEST
                }
            };
            (code, err.to_string())
        }
    };
    status(code, Some(encoding), &message)
}

/// Hands the batch to the consumer's queue without waiting: `200`, or
/// `503` when it is full (the reservation given back).
fn enqueue(
    inner: &Inner,
    signal: Signal,
    encoding: Encoding,
    batch: Batch,
    bytes: usize,
) -> Response {
    let items = batch.items();
    match inner.queue.try_send((batch, bytes)) {
        Ok(()) => {
            Stats::bump(&inner.stats.batches);
            inner.stats.items.fetch_add(items, Ordering::Relaxed);
            accepted(signal, encoding)
        }
        Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
            inner.queued_bytes.fetch_sub(bytes, Ordering::AcqRel);
            failed(inner, Failed::Busy, encoding)
        }
    }
}
