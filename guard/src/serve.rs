//! Serving connections under bounds: the one accept loop every HTTP
//! listener runs ([`serve`]), so that no socket can hold a listener open
//! for free.
//!
//! - **Headers in time.** A connection must send a request's headers within
//!   [`ConnectionLimits::header_timeout`], the first request and every
//!   later one on a kept-alive connection: a socket that sends nothing, or
//!   one byte a second, is closed.
//! - **Bodies in time.** A request's body must arrive within
//!   [`ConnectionLimits::body_timeout`] of its headers; past it, the
//!   reader gets an error (a 408 or 413 from the listener) and the
//!   connection closes.
//! - **A cap on connections** ([`ConnectionLimits::max_connections`]). At
//!   the cap a new connection is still served: the oldest *idle*
//!   connection makes room (one with no request in flight, those that never
//!   had a request admitted first). Idle sockets can therefore never shut
//!   out a harness; only connections busy with admitted work count against
//!   it, and past the cap with every connection busy the new one is closed.
//! - The peer's address is in each request's extensions
//!   (`axum::extract::ConnectInfo<SocketAddr>`), and Nagle is off on every
//!   socket (an answer goes out as written).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::ConnectInfo;
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{Notify, watch};
use tower_service::Service;

/// How long a connection may take, and how many a listener holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Open connections at most; at the cap the oldest idle one makes room.
    pub max_connections: usize,
    /// From waiting for a request (the first, or the next on a kept-alive
    /// connection) to its last header byte.
    pub header_timeout: Duration,
    /// From a request's headers to its body's last byte.
    pub body_timeout: Duration,
}

impl Default for ConnectionLimits {
    /// 256 connections (a quarter of the common 1,024 open files), 30 s for
    /// headers (generous: a harness's kept-alive connection waits under the
    /// same clock between its requests, and the cap's eviction, not this
    /// clock, is what keeps idle sockets from shutting a harness out), 30 s
    /// for a body.
    fn default() -> Self {
        ConnectionLimits {
            max_connections: 256,
            header_timeout: Duration::from_secs(30),
            body_timeout: Duration::from_secs(30),
        }
    }
}

/// What a listener's connections have done: read-only counters.
#[derive(Debug, Default)]
pub struct ConnectionStats {
    accepted: AtomicU64,
    evicted: AtomicU64,
    refused: AtomicU64,
    open: AtomicUsize,
}

impl ConnectionStats {
    /// Connections accepted.
    pub fn accepted(&self) -> u64 {
        self.accepted.load(Ordering::Relaxed)
    }

    /// Idle connections closed to make room for a new one.
    pub fn evicted(&self) -> u64 {
        self.evicted.load(Ordering::Relaxed)
    }

    /// New connections closed at once: at the cap, with every connection busy.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }
}

/// One open connection, as the accept loop sees it.
struct Slot {
    /// Requests in flight (until their answer's body is done or dropped).
    busy: Arc<AtomicUsize>,
    /// Whether any answer on it was a success (an admitted client).
    admitted: Arc<AtomicBool>,
    /// Closes it.
    evict: Arc<Notify>,
}

#[derive(Default)]
struct Slots {
    next: u64,
    open: BTreeMap<u64, Slot>,
}

impl Slots {
    /// Registers a new connection: its id and the handles its task keeps.
    fn open(&mut self) -> (u64, Arc<AtomicUsize>, Arc<AtomicBool>, Arc<Notify>) {
        let id = self.next;
        self.next += 1;
        let slot = Slot {
            busy: Arc::default(),
            admitted: Arc::default(),
            evict: Arc::default(),
        };
        let handles = (
            id,
            Arc::clone(&slot.busy),
            Arc::clone(&slot.admitted),
            Arc::clone(&slot.evict),
        );
        self.open.insert(id, slot);
        handles
    }

    /// Closes the oldest idle connection (see [`Slots::victim`]); `false`
    /// when every connection is busy.
    fn evict_one(&mut self, stats: &ConnectionStats) -> bool {
        let Some(old) = self.victim().and_then(|id| self.open.remove(&id)) else {
            return false;
        };
        old.evict.notify_one();
        stats.evicted.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// The oldest idle connection, never-admitted ones first.
    fn victim(&self) -> Option<u64> {
        let idle = || {
            self.open
                .iter()
                .filter(|(_, s)| s.busy.load(Ordering::Acquire) == 0)
        };
        idle()
            .find(|(_, s)| !s.admitted.load(Ordering::Acquire))
            .or_else(|| idle().next())
            .map(|(id, _)| *id)
    }
}

/// Serves `router` on `listener` under `limits` until `shutdown` resolves;
/// then stops accepting, lets each connection finish its answers, and
/// returns when every connection has ended.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_counted(listener, router, limits, Arc::default(), shutdown).await
}

/// [`serve`], counting into `stats`.
pub async fn serve_counted(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    stats: Arc<ConnectionStats>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let slots = Arc::new(Mutex::new(Slots::default()));
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut tasks = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => continue,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of file descriptors, say: make room, and do not spin.
                    tracing::debug!(%err, "accept failed");
                    slots
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .evict_one(&stats);
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        stats.accepted.fetch_add(1, Ordering::Relaxed);
        let _ = stream.set_nodelay(true);
        let slot = {
            let mut slots = slots.lock().unwrap_or_else(|p| p.into_inner());
            if slots.open.len() >= limits.max_connections.max(1) && !slots.evict_one(&stats) {
                stats.refused.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            slots.open()
        };
        stats.open.fetch_add(1, Ordering::Relaxed);
        let (id, busy, admitted, evict) = slot;
        let connection = Connection {
            router: router.clone(),
            peer,
            busy,
            admitted,
            body_timeout: limits.body_timeout,
        };
        let mut stop = stop_rx.clone();
        let slots = Arc::clone(&slots);
        let stats = Arc::clone(&stats);
        let header_timeout = limits.header_timeout;
        tasks.spawn(async move {
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), connection);
            tokio::pin!(conn);
            let mut stopping = false;
            loop {
                tokio::select! {
                    _ = conn.as_mut() => break,
                    () = evict.notified() => break,
                    changed = stop.changed(), if !stopping => {
                        stopping = true;
                        if changed.is_ok() {
                            conn.as_mut().graceful_shutdown();
                        }
                    }
                }
            }
            slots
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .open
                .remove(&id);
            stats.open.fetch_sub(1, Ordering::Relaxed);
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    while tasks.join_next().await.is_some() {}
    Ok(())
}

/// The next connection on a listener that is not HTTP (the bridge's and the
/// relay host's line protocols). An accept error (out of file descriptors,
/// say) is waited out: never spun on, and never the end of the listener.
pub async fn accept(listener: &TcpListener) -> (tokio::net::TcpStream, SocketAddr) {
    loop {
        match listener.accept().await {
            Ok(accepted) => return accepted,
            Err(err) => {
                tracing::debug!(%err, "accept failed");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
}

/// The per-connection service: the router, with the peer's address, a
/// deadline on each request's body, and the connection marked busy until
/// each answer is done.
#[derive(Clone)]
struct Connection {
    router: Router,
    peer: SocketAddr,
    busy: Arc<AtomicUsize>,
    admitted: Arc<AtomicBool>,
    body_timeout: Duration,
}

impl hyper::service::Service<hyper::Request<Incoming>> for Connection {
    type Response = axum::response::Response;
    type Error = Infallible;
    type Future =
        Pin<Box<dyn Future<Output = Result<axum::response::Response, Infallible>> + Send>>;

    fn call(&self, request: hyper::Request<Incoming>) -> Self::Future {
        let busy = Busy::new(Arc::clone(&self.busy));
        let mut request = request.map(|body| Body::new(Deadline::new(body, self.body_timeout)));
        request.extensions_mut().insert(ConnectInfo(self.peer));
        let mut router = self.router.clone();
        let admitted = Arc::clone(&self.admitted);
        Box::pin(async move {
            let response = match router.call(request).await {
                Ok(response) => response,
                Err(never) => match never {},
            };
            if response.status().is_success() {
                admitted.store(true, Ordering::Release);
            }
            Ok(response.map(|body| Body::new(Tracked { body, _busy: busy })))
        })
    }
}

/// Counts a request in flight while it lives.
struct Busy(Arc<AtomicUsize>);

impl Busy {
    fn new(count: Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::AcqRel);
        Busy(count)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An answer's body that keeps its request counted until it is done.
struct Tracked {
    body: Body,
    _busy: Busy,
}

impl HttpBody for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Why a request body stopped.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {0:?}")]
pub struct BodyTimeout(Duration);

/// A request body that must end by a deadline.
struct Deadline {
    body: Incoming,
    limit: Duration,
    sleep: Pin<Box<tokio::time::Sleep>>,
}

impl Deadline {
    fn new(body: Incoming, limit: Duration) -> Self {
        Deadline {
            body,
            limit,
            sleep: Box::pin(tokio::time::sleep(limit)),
        }
    }
}

impl HttpBody for Deadline {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.body).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        if self.sleep.as_mut().poll(cx).is_ready() {
            let limit = self.limit;
            return Poll::Ready(Some(Err(Box::new(BodyTimeout(limit)))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
