//! tether-tap: the opt-in model tap behind `tether tap`.
//!
//! A loopback pass-through between a harness and its model API (Anthropic
//! Messages, OpenAI Chat Completions and Responses, Google
//! `generateContent`/`streamGenerateContent`). The harness is given a base
//! URL whose first path segment is the tap's token
//! (`http://127.0.0.1:PORT/TOKEN`), since its `Authorization` carries its
//! own API key; a request without the token is refused before anything is
//! forwarded. Everything else passes on unchanged to the upstream (the
//! provider, over TLS with the system's roots, or a gateway), streamed
//! chunk by chunk both ways, never buffered whole, never retried; an
//! unreachable upstream is a `502` at once.
//!
//! On the side, one observer thread reads a copy of each request (the
//! tools it offered, by name, with a hash of each definition; the `mcp__…`
//! names it holds behind a tool search) and of each response (the tools
//! the model called), maps each name to its MCP server and tool (through
//! the session's own listing, the servers its history or today's
//! configuration name, or the harness's naming alone where that is
//! unambiguous; an MCP-shaped name no one of these places is kept
//! unresolved, never guessed), keeps a metadata-only [`TapRecord`], and
//! publishes `tool_visible` and `tool_deferred` evidence (provenance
//! `model_tap`) on the harness's session in the hub. The copy is handed
//! over with `try_send`: a full queue drops the copy and counts it, and
//! the traffic never waits. Credentials, messages, prompts, descriptions,
//! schemas, arguments and results are never kept, logged or printed.
//!
//! Its modules: [`api`] (which model API a request speaks, from its path) and
//! [`read`] (what a request offered and its response called, read from a
//! copy of the bytes, pure: names and hashes only).
//!
//! A host mounts [`Tap::router`] on its own server for the agents it
//! starts, or runs [`Tap::serve`].

pub mod api;
mod observe;
mod proxy;
pub mod read;

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::HeaderMap;
use tether_core::model_tap::ModelCaller;
use tether_core::registry::Registry;
use tether_core::spec::ServerSpec;
use tether_guard::{HostPolicy, Token};
use tether_hub::Hub;

pub use observe::{MAX_OPEN, MAX_RECENT, TapRecord, TapTool};

/// The most copies waiting for the observer; past it a copy is dropped
/// (and counted), never waited for.
pub const QUEUE: usize = 8192;

/// How long the tap waits, and how much it takes.
#[derive(Debug, Clone, Copy)]
pub struct TapLimits {
    /// The largest request body passed on (a larger one is `413`).
    pub max_request_bytes: u64,
    /// Connecting to the upstream (then `502`).
    pub connect: Duration,
    /// From sending the request to the upstream's status line (then `504`).
    pub response_start: Duration,
    /// The longest silence within a response (then it is cut).
    pub idle: Duration,
    /// The longest one response may take (then it is cut).
    pub max_duration: Duration,
}

impl Default for TapLimits {
    /// 32 MiB (the largest request a provider documents taking); 10 s to
    /// connect; 10 minutes to the first byte (an unstreamed answer can take
    /// that long) and of silence; an hour for one response.
    fn default() -> Self {
        TapLimits {
            max_request_bytes: 32 * 1024 * 1024,
            connect: Duration::from_secs(10),
            response_start: Duration::from_secs(600),
            idle: Duration::from_secs(600),
            max_duration: Duration::from_secs(3600),
        }
    }
}

/// What a tap is set up with.
#[derive(Debug, Clone, Default)]
pub struct TapConfig {
    /// Where requests go: a base URL the request's path is appended to. By
    /// default each API's provider ([`api::Api::default_upstream`]).
    pub upstream: Option<url::Url>,
    /// Its token (kept or given); a fresh one from the OS RNG by default.
    pub token: Option<Token>,
    /// Its bounds.
    pub limits: TapLimits,
    /// The servers today's configuration gives each harness, which its
    /// sessions' rows are made of and its tool names are read against
    /// (beside the servers each session's own history names; a harness
    /// whose naming says the server needs none).
    pub configured: HashMap<String, Vec<ServerSpec>>,
}

/// What the tap has done (counters, read lock-free).
#[derive(Debug, Default)]
pub struct Stats {
    requests: AtomicU64,
    refused: AtomicU64,
    forwarded: AtomicU64,
    upstream_errors: AtomicU64,
    timeouts: AtomicU64,
    too_large: AtomicU64,
    observed: AtomicU64,
    unread: AtomicU64,
    dropped: AtomicU64,
    evidence: AtomicU64,
}

/// A snapshot of [`Stats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct TapStats {
    /// Requests that arrived.
    pub requests: u64,
    /// Refused by the guard (token, `Host`, `Origin`).
    pub refused: u64,
    /// Passed on and answered by the upstream.
    pub forwarded: u64,
    /// The upstream unreachable, or reset mid-answer.
    pub upstream_errors: u64,
    /// The upstream silent past a bound.
    pub timeouts: u64,
    /// Request bodies over the cap.
    pub too_large: u64,
    /// Requests recorded.
    pub observed: u64,
    /// Records with a part not read (too large, an encoding, not JSON).
    pub unread: u64,
    /// Copies dropped rather than delay the traffic.
    pub dropped: u64,
    /// Evidence published.
    pub evidence: u64,
}

impl Stats {
    fn snapshot(&self) -> TapStats {
        let n = |a: &AtomicU64| a.load(Ordering::Relaxed);
        TapStats {
            requests: n(&self.requests),
            refused: n(&self.refused),
            forwarded: n(&self.forwarded),
            upstream_errors: n(&self.upstream_errors),
            timeouts: n(&self.timeouts),
            too_large: n(&self.too_large),
            observed: n(&self.observed),
            unread: n(&self.unread),
            dropped: n(&self.dropped),
            evidence: n(&self.evidence),
        }
    }
}

/// Why a tap could not start.
#[derive(Debug, thiserror::Error)]
pub enum TapError {
    /// The HTTP client could not be built (no TLS roots, say).
    #[error("cannot build the upstream client: {0}")]
    Client(String),
    /// The observer thread could not start.
    #[error("cannot start the observer: {0}")]
    Thread(std::io::Error),
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        /// Where.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

/// The harnesses whose plugins have a model tap or a last mile, by name, taken from the
/// registry once: every request asks them who sent it, and every record
/// asks one for its rules, without rebuilding the registry's list.
pub(crate) struct Harnesses(Vec<(String, Arc<dyn tether_core::observer::TransportObserver>)>);

impl Harnesses {
    fn of(registry: &Registry) -> Self {
        Harnesses(
            registry
                .harnesses()
                .into_iter()
                .filter(|h| h.roles.model_tap.is_some() || h.roles.last_mile.is_some())
                .map(|h| (String::from(h.id), Arc::clone(&h.plugin.observer)))
                .collect(),
        )
    }

    /// The harness whose plugin claims these headers, and what it read
    /// (a plugin's panic is contained: not its request).
    fn caller(&self, headers: &[(&str, &str)]) -> Option<(String, ModelCaller)> {
        self.0.iter().find_map(|(kind, plugin)| {
            let tap = plugin.roles().model_tap?;
            let caller = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                tap.model_caller(headers)
            }))
            .ok()
            .flatten()?;
            Some((kind.clone(), caller))
        })
    }

    /// `kind`'s last-mile rules at `version`, where its plugin gives them.
    pub(crate) fn rules(
        &self,
        kind: &str,
        version: Option<&str>,
    ) -> Option<tether_core::last_mile::Rules> {
        let (_, plugin) = self.0.iter().find(|(k, _)| k == kind)?;
        let last_mile = plugin.roles().last_mile?;
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| last_mile.rules(version)))
            .ok()
            .flatten()
    }
}

pub(crate) struct Inner {
    upstream: Option<url::Url>,
    token: Token,
    policy: HostPolicy,
    limits: TapLimits,
    client: reqwest::Client,
    harnesses: Arc<Harnesses>,
    seen: SyncSender<observe::Seen>,
    next_id: AtomicU64,
    stats: Arc<Stats>,
}

impl Inner {
    /// The upstream URL for a request's path (after the token) and query.
    fn upstream_url(&self, rest: &str, query: Option<&str>) -> Option<url::Url> {
        let base = match &self.upstream {
            Some(url) => url.clone(),
            None => url::Url::parse(api::Api::default_for_path(rest)?).ok()?,
        };
        let mut url = base.clone();
        url.set_path(&format!("{}{rest}", base.path().trim_end_matches('/')));
        url.set_query(query);
        Some(url)
    }

    /// The harness whose plugin claims these headers, and what it read.
    fn caller(&self, headers: &HeaderMap) -> Option<(String, ModelCaller)> {
        let pairs: Vec<(&str, &str)> = headers
            .iter()
            .filter_map(|(n, v)| Some((n.as_str(), v.to_str().ok()?)))
            .collect();
        self.harnesses.caller(&pairs)
    }
}

/// A model tap: a router to mount or serve, its records and its counts.
#[derive(Clone)]
pub struct Tap {
    inner: Arc<Inner>,
    records: tokio::sync::broadcast::Sender<TapRecord>,
    recent: Arc<Mutex<VecDeque<TapRecord>>>,
}

impl std::fmt::Debug for Tap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tap")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl Tap {
    /// A tap answering as `addr` (its `Host` check), recognising harnesses
    /// through `registry`, landing sessions in `hub` where one is given.
    pub fn new(
        config: TapConfig,
        addr: SocketAddr,
        registry: Registry,
        hub: Option<Arc<Hub>>,
    ) -> Result<Tap, TapError> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .tcp_nodelay(true)
            .connect_timeout(config.limits.connect)
            .build()
            .map_err(|e| TapError::Client(e.to_string()))?;
        let (seen, rx) = std::sync::mpsc::sync_channel(QUEUE);
        let stats = Arc::new(Stats::default());
        let (records, _) = tokio::sync::broadcast::channel(1024);
        let recent = Arc::new(Mutex::new(VecDeque::new()));
        let configured = config
            .configured
            .iter()
            .map(|(kind, specs)| (kind.clone(), specs.iter().map(|s| s.name.clone()).collect()))
            .collect();
        let live = hub
            .clone()
            .map(|hub| tether_collect::live::LiveSessions::new(hub, config.configured.clone()));
        let harnesses = Arc::new(Harnesses::of(&registry));
        let observer = observe::Observer::new(
            Arc::clone(&harnesses),
            live,
            hub,
            configured,
            tether_guard::random_hex(4),
            Arc::clone(&stats),
            records.clone(),
            Arc::clone(&recent),
        );
        std::thread::Builder::new()
            .name("tether-tap-observer".into())
            .spawn(move || observer.run(rx))
            .map_err(TapError::Thread)?;
        Ok(Tap {
            inner: Arc::new(Inner {
                upstream: config.upstream,
                token: config.token.unwrap_or_else(Token::generate),
                policy: HostPolicy::for_addr(addr),
                limits: config.limits,
                client,
                harnesses,
                seen,
                next_id: AtomicU64::new(1),
                stats,
            }),
            records,
            recent,
        })
    }

    /// Its token (the first path segment of the base URL).
    pub fn token(&self) -> &Token {
        &self.inner.token
    }

    /// The base URL a harness is given when the tap answers at `addr`.
    pub fn base_url(&self, addr: SocketAddr) -> String {
        format!("http://{addr}/{}", self.inner.token.secret())
    }

    /// The tap's routes, to mount on a host's own server (every path: the
    /// token is checked first).
    pub fn router(&self) -> axum::Router {
        axum::Router::new()
            .fallback(proxy::forward)
            .with_state(Arc::clone(&self.inner))
    }

    /// Waits until the observer has read every copy handed to it so far
    /// (and published what they prove): what a host does before it flushes
    /// its hub at shutdown, so the last requests are not lost to a timer.
    pub async fn settle(&self) {
        let (done, settled) = tokio::sync::oneshot::channel();
        let seen = self.inner.seen.clone();
        // A blocking send: this is shutdown, not the traffic's path, and
        // the observer is draining the queue.
        let sent = tokio::task::spawn_blocking(move || seen.send(observe::Seen::Settle(done)));
        if matches!(sent.await, Ok(Ok(()))) {
            let _ = settled.await;
        }
    }

    /// Its counters now.
    pub fn stats(&self) -> TapStats {
        self.inner.stats.snapshot()
    }

    /// Each record as it is made (a slow receiver skips, never blocks).
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<TapRecord> {
        self.records.subscribe()
    }

    /// The most recent records (at most [`MAX_RECENT`]), oldest first.
    pub fn recent(&self) -> Vec<TapRecord> {
        self.recent
            .lock()
            .map(|r| r.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Binds `addr` and serves the tap there through the guard's accept
    /// loop, until the returned handle is stopped or dropped. Port 0 picks
    /// one; the `Host` check follows the address bound.
    pub async fn serve(
        config: TapConfig,
        addr: SocketAddr,
        registry: Registry,
        hub: Option<Arc<Hub>>,
    ) -> Result<RunningTap, TapError> {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| TapError::Listen { addr, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| TapError::Listen { addr, source })?;
        let tap = Tap::new(config, addr, registry, hub)?;
        let app = tap.router();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let _ = tether_guard::serve(
                listener,
                app,
                tether_guard::ConnectionLimits::default(),
                async move {
                    let _ = stopped.await;
                },
            )
            .await;
        });
        Ok(RunningTap {
            addr,
            tap,
            stop: Some(stop),
            task,
        })
    }
}

/// A served tap; dropped, it stops.
#[derive(Debug)]
pub struct RunningTap {
    addr: SocketAddr,
    tap: Tap,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl RunningTap {
    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL a harness is given (`http://127.0.0.1:PORT/TOKEN`).
    pub fn base_url(&self) -> String {
        self.tap.base_url(self.addr)
    }

    /// The tap.
    pub fn tap(&self) -> &Tap {
        &self.tap
    }

    /// Stops accepting and waits for the accept loop to end.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = (&mut self.task).await;
    }
}

impl Drop for RunningTap {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.task.abort();
    }
}
