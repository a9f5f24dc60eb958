//! Observation: a `ServerHandler` wrapper that reports what one MCP connection
//! did, by name and count only, through the attempt's `EvidenceSink`.
//!
//! Every transport (streamable HTTP, legacy SSE, the stdio bridge) serves the
//! same wrapped handler, one instance per connection, so all three are
//! observed identically. Ownership never comes from the client: the
//! connection takes the sink bound to the endpoint when it first speaks.
//!
//! `ReportingHandler<H>` wraps any rmcp `ServerHandler`, one instance per
//! connection, and publishes initialize / `server/discover`, tools/list counts,
//! tools/call names and outcomes, protocol errors and one close per connection.
//! A 2026-07-28 request over streamable HTTP is self-contained: its contact
//! belongs to the client `_meta` names (one stable `client_…` identity per
//! client), and it never closes, because nothing disconnected.

use std::borrow::Cow;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use rmcp::model::*;
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use tether_core::model::{ClientInfo, Evidence};
use tether_core::served::{
    RequestIdent, Served, ServedOutcome, ServedOwner, ServedRequest, ServedSession,
    SharedServedObserver, TraceContext, bounded, protocol_word,
};
use tether_core::traffic::Exchange;
use tether_core::vocab::{EvidenceKind, Transport};
use tether_hub::EvidenceSink;

use crate::credential::{Gate, Refusal};

/// What contact evidence says when the host opted out of the credential.
pub const UNAUTHENTICATED_NOTE: &str = "unauthenticated: the host opted out of the endpoint credential, so any local process could have sent this";

/// Tools listed, handed to whoever builds the catalog (off the request path).
pub type ToolsListedHook = Arc<dyn Fn(&EvidenceSink, &str, &[Tool]) + Send + Sync>;

/// What every connection of one endpoint shares: the current attempt's sink
/// and the server's name in the plan.
pub struct Observation {
    binding: RwLock<Option<EvidenceSink>>,
    /// Who may speak: the current attempt's credential (or, by the host's
    /// opt-out, anyone, and then contact evidence says so).
    gate: Gate,
    server_name: String,
    /// The same name, shared by every served-request record.
    served_name: Arc<str>,
    seed: u64,
    /// Fixed per endpoint, so one client maps to one identity.
    identity_keys: RandomState,
    counter: AtomicU64,
    tools_listed: RwLock<Option<ToolsListedHook>>,
    served: RwLock<Option<SharedServedObserver>>,
    /// The host's store, where full listings are compared with the
    /// server's pins ([`Observation::pin_with`]).
    pins: RwLock<Option<Arc<dyn tether_core::store::Store>>>,
}

impl std::fmt::Debug for Observation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observation")
            .field("server_name", &self.server_name)
            .finish_non_exhaustive()
    }
}

impl Observation {
    /// Observation for the server called `server_name` in the attempt's plan.
    pub fn new(server_name: impl Into<String>) -> Arc<Self> {
        let server_name: String = server_name.into();
        Arc::new(Observation {
            binding: RwLock::new(None),
            gate: Gate::default(),
            served_name: Arc::from(server_name.as_str()),
            server_name,
            seed: RandomState::new().hash_one(tether_hub::now().0),
            identity_keys: RandomState::new(),
            counter: AtomicU64::new(0),
            tools_listed: RwLock::new(None),
            served: RwLock::new(None),
            pins: RwLock::new(None),
        })
    }

    /// Binds the current attempt: new connections report to this sink.
    pub fn bind(&self, sink: EvidenceSink) {
        *self.binding.write().unwrap_or_else(|p| p.into_inner()) = Some(sink);
    }

    /// The credential check every transport runs before any handler.
    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    /// Stops reporting for new connections.
    pub fn unbind(&self) {
        *self.binding.write().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Installs the hook that receives every served tools/list.
    pub fn on_tools_listed(&self, hook: ToolsListedHook) {
        *self.tools_listed.write().unwrap_or_else(|p| p.into_inner()) = Some(hook);
    }

    /// Installs the observer told every request this server answers and
    /// every session it closes (metadata only; see `tether_core::served`).
    /// Without one, requests pay nothing for it.
    pub fn on_served(&self, observer: SharedServedObserver) {
        *self.served.write().unwrap_or_else(|p| p.into_inner()) = Some(observer);
    }

    /// Every full `tools/list` this server answers (one page, no cursor)
    /// is compared with its pins in `store` (`tether_core::pins`: server
    /// `NAME@host`, by its serverInfo name) and written back; what changed
    /// becomes `definition_changed` / `tools_changed` evidence on its row.
    /// Hashes only reach the store. Off the request path.
    pub fn pin_with(&self, store: Arc<dyn tether_core::store::Store>) {
        *self.pins.write().unwrap_or_else(|p| p.into_inner()) = Some(store);
    }

    fn pin_store(&self) -> Option<Arc<dyn tether_core::store::Store>> {
        self.pins.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn served_observer(&self) -> Option<SharedServedObserver> {
        self.served
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The server's name in the plan.
    pub fn server_name(&self) -> &str {
        &self.server_name
    }

    fn current_sink(&self) -> Option<EvidenceSink> {
        self.binding
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn next_connection_id(&self) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let tag = RandomState::new().hash_one((self.seed, n)) as u32;
        format!("conn_{n:04x}{tag:08x}")
    }

    /// Counts a refused, unauthenticated request (`transport`: http, sse or
    /// stdio) and, for the first few per attempt, records it as evidence of
    /// its own kind: a fresh connection id, the reason, and nothing the client
    /// sent. It never counts as contact.
    pub fn refused(&self, transport: &str, refusal: Refusal) {
        if !self.gate.note_refusal() {
            return;
        }
        let Some(sink) = self.current_sink() else {
            return;
        };
        let what = match refusal {
            Refusal::Missing => "without the attempt's credential",
            Refusal::Stale => "with a superseded attempt's credential",
        };
        let evidence = Evidence::new(EvidenceKind::UnauthenticatedContact, tether_hub::now())
            .server(self.server_name.clone())
            .connection(self.next_connection_id())
            .reason(
                refusal.reason_code(),
                Some(format!("a request over {transport} {what} was refused")),
            );
        if let Err(err) = sink.publish(evidence) {
            tracing::trace!(%err, "refusal not queued");
        }
    }

    /// A new opaque connection over the stdio bridge.
    pub fn connection(self: &Arc<Self>) -> Arc<Connection> {
        self.new_connection(Transport::Stdio, None)
    }

    /// A new legacy SSE session (`session_id`: the one its endpoint event
    /// announced), from a peer at `peer`.
    pub fn sse_connection(
        self: &Arc<Self>,
        session_id: &str,
        peer: Option<std::net::SocketAddr>,
    ) -> Arc<Connection> {
        let connection = self.new_connection(Transport::Sse, peer);
        let _ = connection.legacy_session.set(Arc::from(session_id));
        connection
    }

    /// The handler instance for one streamable-HTTP service: a legacy session,
    /// or one self-contained 2026-07-28 request.
    pub fn http_connection(self: &Arc<Self>) -> Arc<Connection> {
        self.new_connection(Transport::Http, None)
    }

    fn new_connection(
        self: &Arc<Self>,
        transport: Transport,
        peer: Option<std::net::SocketAddr>,
    ) -> Arc<Connection> {
        Arc::new(Connection {
            id: self.next_connection_id(),
            identity: OnceLock::new(),
            observation: Arc::clone(self),
            sink: OnceLock::new(),
            closed: AtomicBool::new(false),
            stateless: AtomicBool::new(false),
            transport,
            opened: Instant::now(),
            peer: Mutex::new(peer.map(peer_parts)),
            legacy_session: OnceLock::new(),
            negotiated: OnceLock::new(),
            served_any: AtomicBool::new(false),
            owner: OnceLock::new(),
            tether_check: AtomicBool::new(false),
        })
    }

    /// The identity of a stateless-era client: its self-description in
    /// `_meta` and the transport, stable across its self-contained requests.
    fn client_identity(&self, client: &Implementation) -> String {
        let tag = self
            .identity_keys
            .hash_one(("http", &client.name, &client.version));
        format!("client_{tag:016x}")
    }
}

/// One observed MCP connection. Reports its own close exactly once.
#[derive(Debug)]
pub struct Connection {
    id: String,
    /// For a stateless-era client: its identity across requests.
    identity: OnceLock<String>,
    observation: Arc<Observation>,
    sink: OnceLock<Option<EvidenceSink>>,
    closed: AtomicBool,
    stateless: AtomicBool,
    /// How the client reaches this server.
    transport: Transport,
    /// When the connection (or service instance) began.
    opened: Instant,
    /// The peer's address and port, once known (HTTP, SSE).
    peer: Mutex<Option<(Arc<str>, u16)>>,
    /// The legacy-era session id (`Mcp-Session-Id`, or the SSE session).
    legacy_session: OnceLock<Arc<str>>,
    /// The protocol version initialize negotiated.
    negotiated: OnceLock<Cow<'static, str>>,
    /// Whether a request was served (a session worth reporting on close).
    served_any: AtomicBool,
    /// Who served requests are credited to (see [`Connection::owner`]).
    owner: OnceLock<Option<Arc<ServedOwner>>>,
    /// Tether's own check is on the other end: served, never evidence.
    tether_check: AtomicBool,
}

/// A request's metadata, taken before the handler consumes its context.
pub(crate) struct Started {
    observer: SharedServedObserver,
    method: Cow<'static, str>,
    tool: Option<String>,
    request_id: Option<RequestIdent>,
    protocol_version: Option<Cow<'static, str>>,
    session_id: Option<Arc<str>>,
    trace: TraceContext,
    at: Instant,
    unix_nanos: u64,
}

fn peer_parts(addr: std::net::SocketAddr) -> (Arc<str>, u16) {
    (Arc::from(addr.ip().to_string()), addr.port())
}

fn unix_nanos_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

fn request_id_of(id: &RequestId) -> Option<RequestIdent> {
    match id {
        NumberOrString::Number(n) => Some(RequestIdent::Number(*n)),
        NumberOrString::String(s) => bounded(s.as_ref()).map(RequestIdent::Text),
    }
}

/// The method name of a request outside MCP's own methods: its own, when it
/// looks like a method name (at most 64 bytes of `[A-Za-z0-9/_.-]`), else
/// `custom`, so a client cannot put arbitrary text into span names.
fn custom_method(method: &str) -> Cow<'static, str> {
    let plain = !method.is_empty()
        && method.len() <= 64
        && method
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/_.-".contains(&b));
    if plain {
        Cow::Owned(method.to_owned())
    } else {
        Cow::Borrowed("custom")
    }
}

fn outcome_of<T>(result: &Result<T, McpError>) -> ServedOutcome {
    match result {
        Ok(_) => ServedOutcome::Ok,
        Err(err) => ServedOutcome::Error(err.code.0),
    }
}

impl Connection {
    /// The opaque connection id: the socket's, or, for a stateless-era
    /// client over HTTP, the client's identity.
    pub fn id(&self) -> &str {
        self.identity.get().unwrap_or(&self.id)
    }

    /// The attempt's sink, or `None` when there is none or Tether's own check
    /// is the caller: nothing a check does is agent evidence (no contact, no
    /// catalog, no close), over every transport and in both eras.
    fn sink(&self) -> Option<&EvidenceSink> {
        if self.tether_check.load(Ordering::Relaxed) {
            return None;
        }
        self.sink
            .get_or_init(|| self.observation.current_sink())
            .as_ref()
    }

    /// Records who the gate admitted for this connection; once a check,
    /// always a check.
    pub fn note_caller(&self, caller: crate::credential::Caller) {
        if caller == crate::credential::Caller::TetherCheck {
            self.tether_check.store(true, Ordering::Relaxed);
        }
    }

    /// [`note_caller`](Self::note_caller) from what the gate left on the
    /// request (streamable HTTP).
    fn note_caller_of(&self, context: &RequestContext<RoleServer>) {
        if let Some(caller) = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<crate::credential::Caller>())
        {
            self.note_caller(*caller);
        }
    }

    /// A full listing by the server whose serverInfo name is `name`,
    /// compared with its pins off the request path; its changes become
    /// evidence on this connection. Nothing without a store or a sink.
    fn pin_listing(&self, name: &str, tools: &[Tool]) {
        let (Some(store), Some(sink)) = (self.observation.pin_store(), self.sink().cloned()) else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let key = tether_core::pins::server_key(name, "host");
        let server = self.observation.server_name.clone();
        let connection = self.id().to_owned();
        let tools: Vec<serde_json::Value> = tools
            .iter()
            .filter_map(|t| serde_json::to_value(t).ok())
            .collect();
        let at = tether_hub::now();
        runtime.spawn_blocking(move || {
            let listed = tether_pins::hash_listing(&tools);
            let read = || store.tool_pins(Some(&key));
            let write = |rows: &[tether_core::pins::ToolPin]| store.replace_tool_pins(&key, rows);
            let report = match tether_core::pins::sight_through(read, write, &key, &listed, at) {
                Ok(report) => report,
                Err(err) => {
                    tracing::debug!(%err, "tool pins not compared");
                    return;
                }
            };
            for evidence in tether_core::pins::change_evidence(&report, at) {
                let evidence = evidence
                    .server(server.clone())
                    .connection(connection.clone());
                if let Err(err) = sink.publish(evidence) {
                    tracing::trace!(%err, "pin change not queued");
                }
            }
        });
    }

    /// Publishes evidence about this server on this connection; never blocks.
    pub fn publish(&self, evidence: Evidence) {
        if let Some(sink) = self.sink() {
            let mut evidence = evidence
                .server(self.observation.server_name.clone())
                .connection(self.id().to_owned());
            let contact = matches!(
                evidence.kind,
                EvidenceKind::InitializeObserved
                    | EvidenceKind::ToolsListObserved
                    | EvidenceKind::ToolCallObserved
            );
            if contact && evidence.summary.is_none() && self.observation.gate.is_open() {
                evidence.summary = Some(UNAUTHENTICATED_NOTE.to_owned());
            }
            if let Err(err) = sink.publish(evidence) {
                tracing::trace!(%err, connection = %self.id(), "observation not queued");
            }
        }
    }

    /// Reports a protocol error seen on this connection.
    pub fn protocol_error(&self, what: &str, error: &McpError) {
        self.exchange(Exchange::Refused {
            method: what.to_owned(),
            code: i64::from(error.code.0),
            message: error.message.to_string(),
        });
    }

    /// Reports one exchange, as [`tether_core::traffic::evidence`] maps it.
    pub fn exchange(&self, exchange: Exchange) {
        self.publish(tether_core::traffic::evidence(exchange, tether_hub::now()));
    }

    /// Reports the close once, however many times the transport reports it.
    pub fn close(&self) {
        // A stateless (2026-07-28 inline lifecycle) request is not a connection to close.
        if self.stateless.load(Ordering::Relaxed) {
            return;
        }
        if !self.closed.swap(true, Ordering::AcqRel) {
            if self.sink.get().is_some() {
                self.exchange(Exchange::Closed);
            }
            if self.served_any.load(Ordering::Relaxed)
                && let Some(observer) = self.observation.served_observer()
            {
                observer.served(Served::SessionClosed(ServedSession {
                    server: Arc::clone(&self.observation.served_name),
                    transport: self.transport.clone(),
                    protocol_version: self.negotiated.get().cloned(),
                    duration_nanos: duration_nanos(self.opened.elapsed()),
                    owner: self.owner(),
                }));
            }
        }
    }

    /// The attempt this connection's requests are credited to: the same sink
    /// its evidence goes to, fixed at first use.
    fn owner(&self) -> Option<Arc<ServedOwner>> {
        self.owner
            .get_or_init(|| {
                self.sink().map(|sink| {
                    Arc::new(ServedOwner {
                        session_id: sink.session_id().into(),
                        attempt_id: sink.attempt_id().into(),
                    })
                })
            })
            .clone()
    }

    /// Takes what a request's span needs before the handler runs; `None`
    /// (and no cost) when nobody observes served requests.
    pub(crate) fn start(
        &self,
        method: impl Into<Cow<'static, str>>,
        tool: Option<&str>,
        context: &RequestContext<RoleServer>,
    ) -> Option<Started> {
        let method = method.into();
        let observer = self.observation.served_observer()?;
        let meta = &context.meta.0;
        let parts = context.extensions.get::<axum::http::request::Parts>();
        if let Some(parts) = parts
            && let Some(axum::extract::ConnectInfo(addr)) =
                parts
                    .extensions
                    .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        {
            let mut peer = self.peer.lock().unwrap_or_else(|p| p.into_inner());
            if peer.as_ref().is_none_or(|(_, port)| *port != addr.port()) {
                *peer = Some(peer_parts(*addr));
            }
        }
        let protocol_version = match self.negotiated.get() {
            Some(negotiated) if !self.http() => Some(negotiated.clone()),
            _ => context
                .protocol_version()
                .and_then(|v| protocol_word(v.as_str()))
                .or_else(|| self.negotiated.get().cloned()),
        };
        let stateless = self.is_stateless(context, method == "initialize");
        let session_id = if stateless {
            None
        } else if self.http() {
            // One service instance serves one legacy session: its header is constant.
            match self.legacy_session.get() {
                Some(id) => Some(Arc::clone(id)),
                None => parts
                    .and_then(|p| p.headers.get("mcp-session-id"))
                    .and_then(|v| v.to_str().ok())
                    .and_then(bounded)
                    .map(|id| Arc::clone(self.legacy_session.get_or_init(|| Arc::from(id)))),
            }
        } else {
            self.legacy_session.get().cloned()
        };
        Some(Started {
            observer,
            method,
            tool: tool.and_then(bounded),
            request_id: request_id_of(&context.id),
            protocol_version,
            session_id,
            trace: TraceContext {
                traceparent: meta.get_traceparent().and_then(bounded),
                tracestate: meta.get_tracestate().and_then(bounded),
                baggage: meta.get_baggage().and_then(bounded),
            },
            at: Instant::now(),
            unix_nanos: unix_nanos_now(),
        })
    }

    /// Reports one answered request to the served observer.
    pub(crate) fn finish(&self, started: Option<Started>, outcome: ServedOutcome) {
        let Some(started) = started else {
            return;
        };
        self.served_any.store(true, Ordering::Relaxed);
        let peer = self.peer.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let (client_address, client_port) = match peer {
            Some((address, port)) => (Some(address), Some(port)),
            None => (None, None),
        };
        started.observer.served(Served::Request(ServedRequest {
            server: Arc::clone(&self.observation.served_name),
            method: started.method,
            tool: started.tool,
            request_id: started.request_id,
            protocol_version: started.protocol_version,
            session_id: started.session_id,
            transport: self.transport.clone(),
            client_address,
            client_port,
            start_unix_nanos: started.unix_nanos,
            duration_nanos: duration_nanos(started.at.elapsed()),
            outcome,
            trace: started.trace,
            owner: self.owner(),
        }));
    }

    /// A streamable-HTTP service instance (per session, or per request).
    fn http(&self) -> bool {
        self.transport == Transport::Http
    }

    /// Whether this request is a self-contained 2026-07-28 request over
    /// streamable HTTP: its `_meta` names the new era, or no handshake came
    /// first (`initialize` itself precedes the handshake, so it never counts).
    fn is_stateless(&self, context: &RequestContext<RoleServer>, initialize: bool) -> bool {
        self.http()
            && (context
                .meta
                .protocol_version()
                .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
                || context.peer.peer_info().is_none() && !initialize)
    }

    /// A 2026-07-28 request over streamable HTTP is self-contained: no
    /// handshake, no session, and so nothing to close. Its contact belongs
    /// to the client that `_meta` names, not to a socket.
    fn note_lifecycle(&self, context: &RequestContext<RoleServer>) {
        self.note_caller_of(context);
        if self.is_stateless(context, false) {
            self.stateless.store(true, Ordering::Relaxed);
            if let Some(client) = context.meta.client_info() {
                let _ = self.identity.set(self.observation.client_identity(&client));
            }
        }
    }
}

fn duration_nanos(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.close();
    }
}

fn client_of(implementation: &Implementation, protocol: Option<&ProtocolVersion>) -> ClientInfo {
    ClientInfo {
        name: implementation.name.clone(),
        version: Some(implementation.version.clone()),
        protocol_version: protocol.map(|p| p.as_str().to_owned()),
    }
}

/// A host's handler, observed. One instance per connection.
pub struct ReportingHandler<H> {
    inner: H,
    connection: Arc<Connection>,
}

impl<H> ReportingHandler<H> {
    /// Wraps `inner` for one connection.
    pub fn new(inner: H, connection: Arc<Connection>) -> Self {
        ReportingHandler { inner, connection }
    }

    /// The connection this instance serves.
    pub fn connection(&self) -> &Arc<Connection> {
        &self.connection
    }

    fn record_error<T>(&self, what: &str, result: &Result<T, McpError>) {
        if let Err(err) = result
            && err.code != ErrorCode::METHOD_NOT_FOUND
        {
            self.connection.protocol_error(what, err);
        }
    }
}

/// Writes `ServerHandler` methods that pass a request on to the inner
/// server and time it as `"method"`: `name(Params) -> Output = "method";`.
/// Those marked `errors` also record the inner server's error (any but
/// "method not found") as a protocol error.
macro_rules! passed_on {
    () => {};
    (errors $name:ident($params:ty) -> $out:ty = $method:literal; $($rest:tt)*) => {
        passed_on!(@fn $name($params) -> $out = $method, record_error);
        passed_on!($($rest)*);
    };
    ($name:ident($params:ty) -> $out:ty = $method:literal; $($rest:tt)*) => {
        passed_on!(@fn $name($params) -> $out = $method);
        passed_on!($($rest)*);
    };
    (@fn $name:ident($params:ty) -> $out:ty = $method:literal $(, $record:ident)?) => {
        async fn $name(
            &self,
            request: $params,
            context: RequestContext<RoleServer>,
        ) -> Result<$out, McpError> {
            let started = self.connection.start($method, None, &context);
            let r = self.inner.$name(request, context).await;
            $(self.$record($method, &r);)?
            self.connection.finish(started, outcome_of(&r));
            r
        }
    };
}

#[allow(deprecated)]
impl<H: ServerHandler> ServerHandler for ReportingHandler<H> {
    // === Observed requests ===

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        self.connection.note_caller_of(&context);
        let client = client_of(&request.client_info, Some(&request.protocol_version));
        let started = self.connection.start("initialize", None, &context);
        let result = self.inner.initialize(request, context).await;
        if let Ok(init) = &result
            && let Some(word) = protocol_word(init.protocol_version.as_str())
        {
            let _ = self.connection.negotiated.set(word);
        }
        let mut started = started;
        if let (Some(started), Ok(init)) = (started.as_mut(), &result) {
            started.protocol_version = protocol_word(init.protocol_version.as_str());
        }
        self.connection.finish(started, outcome_of(&result));
        match &result {
            Ok(_) => self.connection.exchange(Exchange::Initialized {
                client: Some(client),
            }),
            Err(err) => self.connection.protocol_error("initialize", err),
        }
        result
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, McpError> {
        self.connection.note_lifecycle(&context);
        let protocol = context.protocol_version();
        let client = context.client_info();
        let started = self.connection.start("server/discover", None, &context);
        let result = self.inner.discover(context).await;
        self.connection.finish(started, outcome_of(&result));
        match &result {
            Ok(_) => self.connection.exchange(Exchange::Initialized {
                client: client.map(|c| client_of(&c, protocol.as_ref())),
            }),
            Err(err) => self.connection.protocol_error("server/discover", err),
        }
        result
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        self.connection.note_lifecycle(&context);
        let inline_client = context.meta.client_info();
        let protocol = context.protocol_version();
        let started = self.connection.start("tools/list", None, &context);
        let first_page = request.as_ref().is_none_or(|r| r.cursor.is_none());
        let result = self.inner.list_tools(request, context).await;
        self.connection.finish(started, outcome_of(&result));
        match &result {
            Ok(list) => {
                self.connection.exchange(Exchange::ToolsListed {
                    count: u32::try_from(list.tools.len()).unwrap_or(u32::MAX),
                    client: inline_client.map(|c| client_of(&c, protocol.as_ref())),
                });
                let hook = self
                    .connection
                    .observation
                    .tools_listed
                    .read()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone();
                if let (Some(hook), Some(sink)) = (hook, self.connection.sink()) {
                    hook(sink, &self.connection.observation.server_name, &list.tools);
                }
                if first_page && list.next_cursor.is_none() {
                    let name = self.inner.get_info().server_info.name;
                    self.connection.pin_listing(&name, &list.tools);
                }
            }
            Err(err) => self.connection.protocol_error("tools/list", err),
        }
        result
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.connection.note_lifecycle(&context);
        let tool = request.name.to_string();
        let started = self.connection.start("tools/call", Some(&tool), &context);
        let result = self.inner.call_tool(request, context).await;
        let outcome = match &result {
            Ok(CallToolResponse::Complete(r)) if r.is_error == Some(true) => {
                ServedOutcome::ToolError
            }
            other => outcome_of(other),
        };
        self.connection.finish(started, outcome);
        let ok = match &result {
            Ok(CallToolResponse::Complete(r)) => r.is_error != Some(true),
            Ok(_) => true,
            Err(err) => {
                self.connection.protocol_error("tools/call", err);
                false
            }
        };
        self.connection.exchange(Exchange::ToolCalled { tool, ok });
        result
    }

    // === Delegated requests (served and timed; errors other than "method
    // not found" are also recorded as evidence where they say something) ===

    async fn ping(&self, context: RequestContext<RoleServer>) -> Result<(), McpError> {
        let started = self.connection.start("ping", None, &context);
        let r = self.inner.ping(context).await;
        self.connection.finish(started, outcome_of(&r));
        r
    }

    fn negotiate_initialize(
        &self,
        request: &InitializeRequestParams,
    ) -> Result<InitializeResult, McpError> {
        self.inner.negotiate_initialize(request)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.inner.supported_protocol_versions()
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.inner.accepted_subscription_filter(requested)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        self.inner.listen(context).await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.get_tool(name)
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        let started = self
            .connection
            .start(custom_method(&request.method), None, &context);
        let r = self.inner.on_custom_request(request, context).await;
        self.connection.finish(started, outcome_of(&r));
        r
    }

    passed_on! {
        errors complete(CompleteRequestParams) -> CompleteResult = "completion/complete";
        set_level(SetLevelRequestParams) -> () = "logging/setLevel";
        errors get_prompt(GetPromptRequestParams) -> GetPromptResponse = "prompts/get";
        errors list_prompts(Option<PaginatedRequestParams>) -> ListPromptsResult = "prompts/list";
        errors list_resources(Option<PaginatedRequestParams>) -> ListResourcesResult = "resources/list";
        errors list_resource_templates(Option<PaginatedRequestParams>) -> ListResourceTemplatesResult = "resources/templates/list";
        errors read_resource(ReadResourceRequestParams) -> ReadResourceResponse = "resources/read";
        subscribe(SubscribeRequestParams) -> () = "resources/subscribe";
        unsubscribe(UnsubscribeRequestParams) -> () = "resources/unsubscribe";
        get_task(GetTaskParams) -> GetTaskResult = "tasks/get";
        update_task(UpdateTaskParams) -> () = "tasks/update";
        cancel_task(CancelTaskParams) -> () = "tasks/cancel";
        list_skills(Option<PaginatedRequestParams>) -> ListSkillsResult = "skills/list";
        get_skill(GetSkillRequestParams) -> GetSkillResult = "skills/get";
        read_resource_directory(ReadResourceDirectoryRequestParams) -> ReadResourceDirectoryResult = "resources/directory/read";
    }

    // === Notifications ===

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        context: NotificationContext<RoleServer>,
    ) {
        self.inner.on_cancelled(notification, context).await
    }

    async fn on_progress(
        &self,
        notification: ProgressNotificationParam,
        context: NotificationContext<RoleServer>,
    ) {
        self.inner.on_progress(notification, context).await
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.inner.on_initialized(context).await
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.inner.on_roots_list_changed(context).await
    }

    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        context: NotificationContext<RoleServer>,
    ) {
        self.inner
            .on_custom_notification(notification, context)
            .await
    }

    fn get_info(&self) -> ServerConfig {
        self.inner.get_info()
    }
}
