//! The observed endpoint: one rmcp server, reachable three ways, bound to
//! 127.0.0.1 only.
//!
//! `ObservedEndpoint`: streamable HTTP (`/mcp`, rmcp's own service), legacy SSE
//! (`sse.rs`, on axum, through rmcp's sink/stream transport) and the bridge
//! listener, all on 127.0.0.1, behind one credential check
//! (`require_credential`: the guard's `Host`/`Origin` policy and body cap, then
//! the gate). SSE session ids are 128 bits from the OS RNG.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, ServiceExt};
use tether_core::spec::{Endpoint, KeyValue, ServerSpec};
use tether_core::vocab::ServerSource;
use tether_guard::{BodyCap, HostPolicy};
use tether_hub::EvidenceSink;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::{CancellationToken, PollSender};

use crate::bridge::{self, CONNECT_FLAG, TOKEN_ENV};
use crate::credential::AttemptCredential;
use crate::report::{Connection, Observation, ReportingHandler};
use crate::sentinel::{SENTINEL_SERVER, Sentinel};
use crate::sse::{self, SseShared};
use crate::wire::{Io, Spawn};

/// The most a request body may hold (rmcp's own bound on `/mcp`, applied to
/// every route).
pub const MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// What every request to the HTTP listener passes first.
#[derive(Clone)]
struct Entry {
    observation: Arc<Observation>,
    policy: Arc<HostPolicy>,
}

/// The one guard every listener shares ([`tether_guard`]), before any
/// handler runs: the `Host` must be this listener's own address and no
/// `Origin` but its own is admitted (no browser has business here); then the current
/// attempt's credential is required. `POST /message` is the exception to the
/// credential: its session id (128 random bits, handed out only on an
/// authenticated `GET /sse`) is the proof. Bodies are capped at
/// [`MAX_REQUEST_BYTES`].
async fn require_credential(State(entry): State<Entry>, request: Request, next: Next) -> Response {
    if let Err(refusal) = entry.policy.check(request.headers()) {
        return (refusal.status(), format!("refused: {}\n", refusal.code())).into_response();
    }
    let request = BodyCap(MAX_REQUEST_BYTES).limit(request);
    let path = request.uri().path();
    if path == "/message" {
        return next.run(request).await;
    }
    let header = tether_guard::authorization(request.headers());
    match entry.observation.gate().check_header(header) {
        Ok(caller) => {
            // The handlers read who called (rmcp hands them the request's parts).
            let mut request = request;
            request.extensions_mut().insert(caller);
            next.run(request).await
        }
        Err(refusal) => {
            let transport = if path == "/sse" { "sse" } else { "http" };
            entry.observation.refused(transport, refusal);
            (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, "Bearer")],
                "this endpoint needs the attempt's credential\n",
            )
                .into_response()
        }
    }
}

/// The `tether-bridge` binary next to the current executable, if it is there.
pub fn bridge_next_to_current_exe() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let name = format!("tether-bridge{}", std::env::consts::EXE_SUFFIX);
    [dir.join(&name), dir.parent()?.join(&name)]
        .into_iter()
        .find(|p| p.is_file())
}

/// A running observed endpoint. Dropping it stops everything it started.
pub struct ObservedEndpoint {
    observation: Arc<Observation>,
    http_addr: SocketAddr,
    bridge_addr: SocketAddr,
    cancel: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for ObservedEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObservedEndpoint")
            .field("server_name", &self.observation.server_name())
            .field("http_addr", &self.http_addr)
            .field("bridge_addr", &self.bridge_addr)
            .finish_non_exhaustive()
    }
}

impl ObservedEndpoint {
    /// Serves the host's handler (one instance per connection, from `factory`)
    /// as the server called `server_name` in attempts' plans.
    pub async fn start<H, F>(server_name: &str, factory: F) -> std::io::Result<Self>
    where
        H: ServerHandler,
        F: Fn() -> H + Send + Sync + 'static,
    {
        let observation = Observation::new(server_name);
        observation.on_tools_listed(crate::catalog::catalog_hook());
        let factory = Arc::new(factory);
        let cancel = CancellationToken::new();

        let spawn: Spawn = {
            let factory = Arc::clone(&factory);
            let cancel = cancel.clone();
            Arc::new(move |connection: Arc<Connection>, io: Io| {
                let handler = ReportingHandler::new(factory(), connection);
                let ct = cancel.child_token();
                tokio::spawn(async move {
                    let result = match io {
                        Io::Channel(tx, mut rx) => handler
                            .serve_with_ct(
                                (
                                    PollSender::new(tx),
                                    futures::stream::poll_fn(move |cx| rx.poll_recv(cx)),
                                ),
                                ct,
                            )
                            .await
                            .map_err(|e| e.to_string()),
                        Io::Tcp(r, w) => handler
                            .serve_with_ct((r, w), ct)
                            .await
                            .map_err(|e| e.to_string()),
                    };
                    match result {
                        Ok(running) => {
                            let _ = running.waiting().await;
                        }
                        Err(err) => tracing::debug!(%err, "MCP connection ended before initialize"),
                    }
                });
            })
        };

        let http = {
            let factory = Arc::clone(&factory);
            let observation = Arc::clone(&observation);
            let config =
                StreamableHttpServerConfig::default().with_cancellation_token(cancel.child_token());
            StreamableHttpService::new(
                move || {
                    Ok(ReportingHandler::new(
                        factory(),
                        observation.http_connection(),
                    ))
                },
                Arc::new(LocalSessionManager::default()),
                config,
            )
        };
        let loopback = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
        let http_listener = TcpListener::bind(loopback).await?;
        let http_addr = http_listener.local_addr()?;
        let entry = Entry {
            observation: Arc::clone(&observation),
            policy: Arc::new(HostPolicy::for_addr(http_addr)),
        };
        let router = Router::new()
            .route("/sse", get(sse::open))
            .route("/message", post(sse::post))
            .with_state(SseShared::new(Arc::clone(&observation), Arc::clone(&spawn)))
            .route_service("/mcp", http)
            .layer(middleware::from_fn_with_state(entry, require_credential));

        let bridge_listener = TcpListener::bind(loopback).await?;
        let bridge_addr = bridge_listener.local_addr()?;

        let serve_cancel = cancel.clone();
        let http_task = tokio::spawn(async move {
            let shutdown = serve_cancel.cancelled_owned();
            // The peer's address is in each request (`ConnectInfo`).
            if let Err(err) = tether_guard::serve(
                http_listener,
                router,
                tether_guard::ConnectionLimits::default(),
                shutdown,
            )
            .await
            {
                tracing::warn!(%err, "observed endpoint's HTTP server stopped");
            }
        });
        let bridge_task = tokio::spawn(bridge::accept_loop(
            bridge_listener,
            Arc::clone(&observation),
            spawn,
            cancel.clone(),
        ));

        Ok(ObservedEndpoint {
            observation,
            http_addr,
            bridge_addr,
            cancel,
            tasks: vec![http_task, bridge_task],
        })
    }

    /// Tells `observer` every request this endpoint answers and every
    /// session it closes, over every transport (metadata only; see
    /// `tether_core::served`). An exporter (tether-otel) installs itself here.
    pub fn on_served(&self, observer: tether_core::served::SharedServedObserver) {
        self.observation.on_served(observer);
    }

    /// Compares every full listing this endpoint serves with the server's
    /// pins in `store` ([`Observation::pin_with`]).
    pub fn pin_with(&self, store: Arc<dyn tether_core::store::Store>) {
        self.observation.pin_with(store);
    }

    /// The probe's sentinel, served as `tether-sentinel`.
    pub async fn sentinel() -> std::io::Result<Self> {
        Self::start(SENTINEL_SERVER, || Sentinel).await
    }

    /// What every connection shares (bind attempts here).
    pub fn observation(&self) -> &Arc<Observation> {
        &self.observation
    }

    /// Binds the current attempt: from now on only `credential` (the one in
    /// this attempt's plan, see [`server_spec`](Self::server_spec)) is
    /// admitted, the previous attempt's is refused, and connections report to
    /// `sink`.
    pub fn bind(&self, sink: EvidenceSink, credential: AttemptCredential) {
        // Retire the old credential before the new sink takes effect, so no
        // request holding it can be credited to the new attempt.
        self.observation.gate().admit(credential);
        self.observation.bind(sink);
    }

    /// Binds the current attempt with no credential at all: any local process
    /// may connect. Only for a host's explicit opt-out (a debugging session);
    /// every contact it records then says that it is unauthenticated.
    pub fn bind_unauthenticated(&self, sink: EvidenceSink) {
        self.observation.gate().open();
        self.observation.bind(sink);
    }

    /// Requests refused for want of the current credential, since the start.
    pub fn refused_count(&self) -> u64 {
        self.observation.gate().refused()
    }

    /// The server's name in the plan.
    pub fn server_name(&self) -> &str {
        self.observation.server_name()
    }

    /// Streamable HTTP: `http://127.0.0.1:PORT/mcp`.
    pub fn http_url(&self) -> String {
        format!("http://{}/mcp", self.http_addr)
    }

    /// Legacy SSE: `http://127.0.0.1:PORT/sse`.
    pub fn sse_url(&self) -> String {
        format!("http://{}/sse", self.http_addr)
    }

    /// The bridge's loopback address.
    pub fn bridge_addr(&self) -> SocketAddr {
        self.bridge_addr
    }

    /// A stdio endpoint that runs `bridge_program` against this endpoint,
    /// with `credential` as the bridge's token.
    pub fn bridge_endpoint(
        &self,
        bridge_program: &Path,
        credential: &AttemptCredential,
    ) -> Endpoint {
        Endpoint::Stdio {
            command: bridge_program.display().to_string(),
            args: vec![CONNECT_FLAG.to_owned(), self.bridge_addr.to_string()],
            env: vec![KeyValue::new(TOKEN_ENV, credential.secret())],
            cwd: None,
        }
    }

    /// Streamable HTTP, carrying `credential`.
    pub fn http_endpoint(&self, credential: &AttemptCredential) -> Endpoint {
        Endpoint::Http {
            url: self.http_url(),
            headers: vec![KeyValue::new("Authorization", credential.bearer())],
        }
    }

    /// Legacy SSE, carrying `credential`.
    pub fn sse_endpoint(&self, credential: &AttemptCredential) -> Endpoint {
        Endpoint::Sse {
            url: self.sse_url(),
            headers: vec![KeyValue::new("Authorization", credential.bearer())],
        }
    }

    /// The server as a plan entry carrying the attempt's `credential`: http,
    /// then sse, then (if given) the stdio bridge. Bind the attempt with the
    /// same credential. Its `check_endpoints` carry the gate's check
    /// credential instead, so an endpoint test of it is never taken for the
    /// agent.
    pub fn server_spec(
        &self,
        source: ServerSource,
        bridge_program: Option<&Path>,
        credential: &AttemptCredential,
    ) -> ServerSpec {
        let ways = |credential: &AttemptCredential| {
            let mut ways = vec![
                self.http_endpoint(credential),
                self.sse_endpoint(credential),
            ];
            if let Some(program) = bridge_program {
                ways.push(self.bridge_endpoint(program, credential));
            }
            ways
        };
        let mut agent = ways(credential).into_iter();
        // `ways` always starts with streamable HTTP.
        let first = agent
            .next()
            .unwrap_or_else(|| self.http_endpoint(credential));
        agent
            .fold(
                ServerSpec::new(self.server_name(), source, first),
                ServerSpec::or,
            )
            .checked_through(ways(self.observation.gate().check_credential()))
    }

    /// Stops serving: open connections end, listeners close.
    pub async fn shutdown(mut self) {
        self.cancel.cancel();
        for task in self.tasks.drain(..) {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), task).await;
        }
    }
}

impl Drop for ObservedEndpoint {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}
