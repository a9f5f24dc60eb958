//! The observed endpoint: one rmcp server, reachable three ways, bound to
//! 127.0.0.1 only.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, ServiceExt};
use tether_core::hub::EvidenceSink;
use tether_core::spec::{Endpoint, KeyValue, ServerSpec};
use tether_core::vocab::ServerSource;
use tokio::io::BufReader;
use tokio::net::TcpListener;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::{CancellationToken, PollSender};

use crate::bridge::{self, CONNECT_FLAG, TOKEN_ENV};
use crate::observe::{Connection, Observation, Observed};
use crate::sentinel::{SENTINEL_SERVER, Sentinel};
use crate::sse::{self, SseShared};

/// How a connection's bytes reach the rmcp server.
pub(crate) enum Io {
    /// Legacy SSE: messages out to the event stream, messages in from `POST /message`.
    Channel(
        mpsc::Sender<ServerJsonRpcMessage>,
        mpsc::Receiver<ClientJsonRpcMessage>,
    ),
    /// The stdio bridge: a loopback socket after the hello line.
    Tcp(BufReader<OwnedReadHalf>, OwnedWriteHalf),
}

/// Starts serving one connection.
pub(crate) type Spawn = Arc<dyn Fn(Arc<Connection>, Io) + Send + Sync>;

/// 128 bits from the OS's cryptographic random source, as hex: bridge
/// tokens and SSE session ids.
pub(crate) fn random_hex() -> String {
    let mut bytes = [0u8; 16];
    // Without the OS RNG no token can be trusted: refuse to go on.
    getrandom::fill(&mut bytes).expect("the OS random source is unavailable");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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
    bridge_token: Arc<str>,
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
                let handler = Observed::new(factory(), connection);
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
                move || Ok(Observed::new(factory(), observation.connection())),
                Arc::new(LocalSessionManager::default()),
                config,
            )
        };
        let router = Router::new()
            .route("/sse", get(sse::open))
            .route("/message", post(sse::post))
            .with_state(SseShared::new(Arc::clone(&observation), Arc::clone(&spawn)))
            .route_service("/mcp", http);

        let loopback = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
        let http_listener = TcpListener::bind(loopback).await?;
        let http_addr = http_listener.local_addr()?;
        let bridge_listener = TcpListener::bind(loopback).await?;
        let bridge_addr = bridge_listener.local_addr()?;
        let bridge_token: Arc<str> = random_hex().into();

        let serve_cancel = cancel.clone();
        let http_task = tokio::spawn(async move {
            let shutdown = serve_cancel.cancelled_owned();
            if let Err(err) = axum::serve(http_listener, router)
                .with_graceful_shutdown(shutdown)
                .await
            {
                tracing::warn!(%err, "observed endpoint's HTTP server stopped");
            }
        });
        let bridge_task = tokio::spawn(bridge::accept_loop(
            bridge_listener,
            Arc::clone(&bridge_token),
            Arc::clone(&observation),
            spawn,
            cancel.clone(),
        ));

        Ok(ObservedEndpoint {
            observation,
            http_addr,
            bridge_addr,
            bridge_token,
            cancel,
            tasks: vec![http_task, bridge_task],
        })
    }

    /// The probe's sentinel, served as `tether-sentinel`.
    pub async fn sentinel() -> std::io::Result<Self> {
        Self::start(SENTINEL_SERVER, || Sentinel).await
    }

    /// What every connection shares (bind attempts here).
    pub fn observation(&self) -> &Arc<Observation> {
        &self.observation
    }

    /// Binds the current attempt: connections from now on report to `sink`.
    pub fn bind(&self, sink: EvidenceSink) {
        self.observation.bind(sink);
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

    /// A stdio endpoint that runs `bridge_program` against this endpoint.
    pub fn bridge_endpoint(&self, bridge_program: &Path) -> Endpoint {
        Endpoint::Stdio {
            command: bridge_program.display().to_string(),
            args: vec![CONNECT_FLAG.to_owned(), self.bridge_addr.to_string()],
            env: vec![KeyValue::new(TOKEN_ENV, self.bridge_token.to_string())],
            cwd: None,
        }
    }

    /// The server as a plan entry: http, then sse, then (if given) the stdio bridge.
    pub fn server_spec(&self, source: ServerSource, bridge_program: Option<&Path>) -> ServerSpec {
        let mut spec = ServerSpec::new(
            self.server_name(),
            source,
            Endpoint::Http {
                url: self.http_url(),
                headers: vec![],
            },
        )
        .or(Endpoint::Sse {
            url: self.sse_url(),
            headers: vec![],
        });
        if let Some(program) = bridge_program {
            spec = spec.or(self.bridge_endpoint(program));
        }
        spec
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
