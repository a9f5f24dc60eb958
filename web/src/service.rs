//! The router: the versioned JSON API, its two Server-Sent Event streams,
//! the diagnostic actions, and the reference view's three files.
//!
//! Every request passes the guard (`tether_guard::HostPolicy::check`: `Host`,
//! then `Origin`, CORS only if configured; the body cap; security headers),
//! then the token middleware.

use std::collections::HashSet;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Request, State};
use axum::http::header::{
    ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN,
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY, VARY, WWW_AUTHENTICATE,
    X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::stream::{self, Stream, StreamExt};
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use tether_core::diagnostics::EndpointTestDocument;
use tether_core::history::AttachmentHistory;
use tether_diagnostics::api::{
    Diagnostics, DiagnosticsError, EndpointTestRequest, RecentOutput, RecentOutputRequest,
};
use tether_guard::{BodyCap, OriginRule, Refusal as GuardRefusal};

use crate::documents::{
    ApiError, CopyDiagnostics, LoginAnswer, LoginLink, RecentOutputDocument,
    STATUS_API_SCHEMA_VERSION, SessionList, SessionStatus, SessionSummary,
};
use crate::fleet::{FleetIndex, FleetQuery};
use crate::security::{Action, ApiToken, Authorizer, HostPolicy, LoginCodes, TOKEN_PRINCIPAL};
use crate::source::{HubSource, StatusSource, StoreSource};

/// Request bodies larger than this are refused (413) before they are read.
pub const BODY_LIMIT: usize = 4 * 1024;
/// Requirements one check may name (each is evaluated against every row).
pub const MAX_REQUIREMENTS: usize = 256;
/// How often an idle stream sends a heartbeat comment.
pub const HEARTBEAT: Duration = Duration::from_secs(10);
/// Event streams open at once, across every stream route; past it, `429`.
pub const STREAM_CAP: usize = 64;
/// The session list is re-read at least this often (a removed session, say).
const LIST_RECHECK: Duration = Duration::from_secs(1);
/// Changes closer together than this are coalesced into one list event.
const LIST_COALESCE: Duration = Duration::from_millis(100);

const INDEX_HTML: &str = include_str!("../assets/index.html");
const VIEW_JS: &str = include_str!("../assets/view.js");
const VIEW_CSS: &str = include_str!("../assets/view.css");

/// The page's policy: its own three files, its own API, nothing else.
const PAGE_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

struct Inner {
    source: Arc<dyn StatusSource>,
    diagnostics: Option<Arc<Diagnostics>>,
    token: ApiToken,
    authorizer: Option<Arc<dyn Authorizer>>,
    logins: LoginCodes,
    in_flight: Mutex<HashSet<(String, String)>>,
    heartbeat: Duration,
    /// Every session's summary, shared by all list readers.
    summaries: ListCache<Vec<SessionSummary>>,
    /// The fleet page's index, shared the same way.
    fleet: ListCache<FleetIndex>,
    /// The session list as one `sessions` event, encoded once per change
    /// and shared by every list stream (each keeps only its hash).
    list_frame: ListCache<(u64, Bytes)>,
    /// Permits for open event streams ([`STREAM_CAP`] by default).
    streams: Arc<tokio::sync::Semaphore>,
}

/// Something built from every session, shared by all readers: rebuilt when
/// the source's generation moves or it is [`LIST_RECHECK`] old, so many
/// open pages cost one rebuild, not one each.
struct ListCache<T>(Mutex<Option<(u64, std::time::Instant, Arc<T>)>>);

impl<T> Default for ListCache<T> {
    fn default() -> Self {
        ListCache(Mutex::new(None))
    }
}

impl<T> ListCache<T> {
    /// The cached value for `source`'s current generation, or a fresh one
    /// from `build` (which is handed the previous value, to reuse, and the
    /// source, to read only what it needs).
    fn get(
        &self,
        source: &dyn StatusSource,
        build: impl FnOnce(Option<&T>, &dyn StatusSource) -> T,
    ) -> Arc<T> {
        let generation = *source.generation().borrow();
        let mut cache = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((built_for, at, value)) = cache.as_ref()
            && *built_for == generation
            && at.elapsed() < LIST_RECHECK
        {
            return Arc::clone(value);
        }
        let previous = cache.as_ref().map(|(_, _, value)| Arc::clone(value));
        let value = Arc::new(build(previous.as_deref(), source));
        *cache = Some((generation, std::time::Instant::now(), Arc::clone(&value)));
        value
    }
}

/// The live status service: build it over a hub (with its diagnostics) or
/// a store, then mount [`router`](Self::router) or [`serve`](Self::serve) it.
#[derive(Clone)]
pub struct StatusService {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for StatusService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatusService")
            .field("actions", &self.inner.diagnostics.is_some())
            .finish_non_exhaustive()
    }
}

impl StatusService {
    /// Over any source.
    pub fn new(source: Arc<dyn StatusSource>, diagnostics: Option<Arc<Diagnostics>>) -> Self {
        StatusService {
            inner: Arc::new(Inner {
                source,
                diagnostics,
                token: ApiToken::generate(),
                authorizer: None,
                logins: LoginCodes::default(),
                in_flight: Mutex::new(HashSet::new()),
                heartbeat: HEARTBEAT,
                summaries: ListCache::default(),
                fleet: ListCache::default(),
                list_frame: ListCache::default(),
                streams: Arc::new(tokio::sync::Semaphore::new(STREAM_CAP)),
            }),
        }
    }

    /// Over a live hub; `diagnostics` enables the actions (the host records
    /// each attempt and its live output there).
    pub fn for_hub(hub: Arc<tether_hub::Hub>, diagnostics: Option<Arc<Diagnostics>>) -> Self {
        Self::new(Arc::new(HubSource::new(hub)), diagnostics)
    }

    /// Over a store another process writes, read-only: no actions.
    pub fn for_store(source: StoreSource) -> Self {
        Self::new(Arc::new(source), None)
    }

    fn inner_mut(&mut self) -> &mut Inner {
        Arc::get_mut(&mut self.inner).expect("configure the service before cloning or serving it")
    }

    /// Adds the host's per-session authorizer (see [`Authorizer`]).
    pub fn with_authorizer(mut self, authorizer: Arc<dyn Authorizer>) -> Self {
        self.inner_mut().authorizer = Some(authorizer);
        self
    }

    /// Uses this token instead of a fresh one (a host that hands it out itself).
    pub fn with_token(mut self, token: ApiToken) -> Self {
        self.inner_mut().token = token;
        self
    }

    /// At most `cap` event streams open at once (past it, `429`).
    pub fn with_stream_cap(mut self, cap: usize) -> Self {
        self.inner_mut().streams = Arc::new(tokio::sync::Semaphore::new(cap.max(1)));
        self
    }

    /// Sends heartbeats this often on idle streams.
    pub fn with_heartbeat(mut self, every: Duration) -> Self {
        self.inner_mut().heartbeat = every;
        self
    }

    /// The bearer token every API request needs.
    pub fn token(&self) -> &ApiToken {
        &self.inner.token
    }

    /// A fresh one-time login path for the page (`/#login=CODE`).
    pub fn login_path(&self) -> String {
        format!("/#login={}", self.inner.logins.mint())
    }

    /// The router, answering only the `Host`s in `policy`.
    /// The service's own origin is always admitted (its page posts from it),
    /// whatever `policy.origins` says.
    pub fn router(&self, policy: HostPolicy) -> Router {
        let policy = Arc::new(match policy.origins {
            OriginRule::None => policy.with_origins(Vec::new()),
            OriginRule::SameOrListed(_) => policy,
        });
        let api = Router::new()
            .route("/api/v1/sessions", get(list_sessions))
            .route("/api/v1/events", get(list_events))
            .route("/api/v1/sessions/{id}", get(session_status))
            .route("/api/v1/sessions/{id}/events", get(session_events))
            .route(
                "/api/v1/sessions/{id}/diagnostics",
                get(session_diagnostics),
            )
            .route("/api/v1/sessions/{id}/check", get(session_check))
            .route("/api/v1/fleet/sessions", get(fleet_sessions))
            .route("/api/v1/fleet/servers", get(fleet_servers))
            .route("/api/v1/fleet/events", get(fleet_events))
            .route("/api/v1/endpoint-test", post(endpoint_test))
            .route("/api/v1/recent-output", post(recent_output))
            .route("/api/v1/login-links", post(login_link))
            .route_layer(middleware::from_fn_with_state(self.clone(), require_token));
        Router::new()
            .route("/", get(index))
            .route("/view.js", get(view_js))
            .route("/view.css", get(view_css))
            .route("/api/v1/login", post(login))
            .merge(api)
            .fallback(not_found)
            .layer(middleware::from_fn_with_state(policy, guard))
            .with_state(self.clone())
    }

    /// Binds `addr` (use `127.0.0.1:0` unless told otherwise) and serves
    /// until [`RunningService::shutdown`].
    pub async fn serve(self, addr: SocketAddr) -> std::io::Result<RunningService> {
        self.serve_with(addr, Vec::new(), Vec::new()).await
    }

    /// [`serve`](Self::serve), also answering `extra_hosts` (exact `Host`
    /// values, for a name the user reaches it by) and allowing
    /// `cors_origins` cross-origin.
    pub async fn serve_with(
        self,
        addr: SocketAddr,
        extra_hosts: Vec<String>,
        cors_origins: Vec<String>,
    ) -> std::io::Result<RunningService> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let policy = HostPolicy::for_addr(addr)
            .with_hosts(extra_hosts)
            .with_origins(cors_origins);
        let router = self.router(policy);
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
                tracing::warn!(%err, "the status service stopped");
            }
        });
        Ok(RunningService {
            addr,
            service: self,
            cancel,
            task,
        })
    }
}

/// A service answering on a socket.
pub struct RunningService {
    addr: SocketAddr,
    service: StatusService,
    cancel: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for RunningService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningService")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl RunningService {
    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR` (no token in it).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A one-time login URL for a browser: the code in it works once.
    pub fn login_url(&self) -> String {
        format!("{}{}", self.url(), self.service.login_path())
    }

    /// The bearer token (print it once).
    pub fn token(&self) -> &ApiToken {
        self.service.token()
    }

    /// What a program prints once at start: a one-time login link, how to
    /// get in afterwards, and the token.
    pub fn banner(&self) -> String {
        format!(
            "  open   {}\n         (a one-time link: it works once, for 10 minutes; afterwards open {} and paste the token)\n  token  {}  (printed once; API clients send `Authorization: Bearer <token>`)",
            self.login_url(),
            self.url(),
            self.token().secret()
        )
    }

    /// Stops accepting, ends the streams, and waits for the server task.
    pub async fn shutdown(self) {
        self.cancel.cancel();
        // Open event streams never end by themselves: bound the wait.
        let _ = tokio::time::timeout(Duration::from_secs(2), self.task).await;
    }
}

// === Responses ===

fn error(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    let body = ApiError {
        error: code.to_owned(),
        message: message.into(),
    };
    let mut response = (status, json_body(&body)).into_response();
    if status == StatusCode::UNAUTHORIZED {
        response
            .headers_mut()
            .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

/// A refusal, cheap to carry until it becomes a response.
struct Refusal(StatusCode, &'static str, String);

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        error(self.0, self.1, self.2)
    }
}

fn json_body<T: serde::Serialize>(value: &T) -> Response {
    match serde_json::to_vec(value) {
        Ok(bytes) => (
            [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            bytes,
        )
            .into_response(),
        Err(err) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            format!("could not encode the answer: {err}"),
        ),
    }
}

/// Parses a JSON request body strictly: the type refuses unknown fields.
fn parse_body<T: for<'de> Deserialize<'de>>(
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<T, Refusal> {
    let is_json = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
        });
    if !is_json {
        return Err(Refusal(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "invalid_request",
            "send the body as application/json".into(),
        ));
    }
    serde_json::from_slice(body).map_err(|e| {
        Refusal(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            format!("{e}; an action names a session and a server name only (no URL, command, header or env)"),
        )
    })
}

// === The guard every request passes ===

/// The one guard every listener shares ([`tether_guard`]): Host first (DNS
/// rebinding), then Origin (cross-site requests; CORS only for configured
/// origins), and the body cap ([`BODY_LIMIT`]); and the security headers on
/// every answer.
async fn guard(State(policy): State<Arc<HostPolicy>>, request: Request, next: Next) -> Response {
    let cors = match policy.check(request.headers()) {
        Ok(cors) => cors,
        Err(GuardRefusal::BadHost) => {
            return error(
                StatusCode::MISDIRECTED_REQUEST,
                GuardRefusal::BadHost.code(),
                "this service answers only its own address (the Host header did not match)",
            );
        }
        Err(refusal) => {
            return error(
                refusal.status(),
                refusal.code(),
                "requests from other origins are refused",
            );
        }
    };
    let origin = HostPolicy::origin(request.headers()).map(str::to_owned);
    if cors && request.method() == Method::OPTIONS {
        let mut response = StatusCode::NO_CONTENT.into_response();
        add_cors(response.headers_mut(), origin.as_deref());
        return response;
    }
    let request = BodyCap(BODY_LIMIT).limit(request);
    let is_page = matches!(request.uri().path(), "/" | "/view.js" | "/view.css");
    let mut response = in_the_error_shape(next.run(request).await);
    let h = response.headers_mut();
    h.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if is_page {
        h.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(PAGE_CSP));
    }
    if cors {
        add_cors(h, origin.as_deref());
    }
    response
}

/// Every refusal is a `status-error` document, whoever made it: the
/// framework's own rejections (a body past the cap while an extractor read
/// it, a wrong method, a path that does not parse) come as plain text, and
/// are rewritten here with a stable code for their status.
fn in_the_error_shape(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (code, message) = match status {
        StatusCode::PAYLOAD_TOO_LARGE => (
            GuardRefusal::TooLarge.code(),
            format!("the request body is over the service's {BODY_LIMIT}-byte cap"),
        ),
        StatusCode::METHOD_NOT_ALLOWED => (
            "method_not_allowed",
            "this resource does not answer that method".to_owned(),
        ),
        StatusCode::NOT_FOUND => ("not_found", "no such resource".to_owned()),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => (
            "invalid_request",
            "send the body as application/json".to_owned(),
        ),
        s if s.is_client_error() => (
            "invalid_request",
            "the request could not be read".to_owned(),
        ),
        _ => ("internal", "the service failed to answer".to_owned()),
    };
    let mut shaped = error(status, code, message);
    // Keep what the framework said about the method (`Allow`).
    if let Some(allow) = response.headers().get(axum::http::header::ALLOW) {
        shaped
            .headers_mut()
            .insert(axum::http::header::ALLOW, allow.clone());
    }
    shaped
}

fn add_cors(h: &mut HeaderMap, origin: Option<&str>) {
    if let Some(value) = origin.and_then(|o| HeaderValue::from_str(o).ok()) {
        h.insert(ACCESS_CONTROL_ALLOW_ORIGIN, value);
        h.insert(VARY, HeaderValue::from_static("Origin"));
        h.insert(
            ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static("authorization, content-type"),
        );
        h.insert(
            ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, POST"),
        );
    }
}

/// Every API route but `login` needs the bearer token.
async fn require_token(
    State(service): State<StatusService>,
    request: Request,
    next: Next,
) -> Response {
    if !service.inner.token.admits(request.headers()) {
        return error(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "send the token the service printed at start as `Authorization: Bearer …`",
        );
    }
    next.run(request).await
}

fn authorize(service: &StatusService, session_id: &str, action: Action) -> Result<(), Refusal> {
    match &service.inner.authorizer {
        Some(a) => a
            .authorize(TOKEN_PRINCIPAL, session_id, action)
            .map_err(|reason| Refusal(StatusCode::FORBIDDEN, "forbidden", reason)),
        None => Ok(()),
    }
}

fn visible(service: &StatusService, session_id: &str) -> bool {
    authorize(service, session_id, Action::View).is_ok()
}

// === The page ===

/// The page, with core's display vocabulary in it
/// (`<script type="application/json" id="display">`, data the page's policy
/// does not run), so the view never spells a label, a color or a sentence
/// itself.
static PAGE: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let vocabulary = serde_json::to_string(&tether_words::display::vocabulary())
        .unwrap_or_else(|_| "{}".to_owned())
        // Inside a script element, `<` could only ever end it early.
        .replace('<', "\\u003c");
    INDEX_HTML.replace(
        "<!--tether:display-->",
        &format!(r#"<script type="application/json" id="display">{vocabulary}</script>"#),
    )
});

async fn index() -> Response {
    (
        [(
            CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        )],
        PAGE.as_str(),
    )
        .into_response()
}

async fn view_js() -> Response {
    (
        [(
            CONTENT_TYPE,
            HeaderValue::from_static("text/javascript; charset=utf-8"),
        )],
        VIEW_JS,
    )
        .into_response()
}

async fn view_css() -> Response {
    (
        [(
            CONTENT_TYPE,
            HeaderValue::from_static("text/css; charset=utf-8"),
        )],
        VIEW_CSS,
    )
        .into_response()
}

async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "not_found", "no such resource")
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LoginRequest {
    code: String,
}

/// A one-time code buys the token; only a page on the service's own origin may ask.
async fn login(State(service): State<StatusService>, headers: HeaderMap, body: Bytes) -> Response {
    if HostPolicy::origin(&headers).is_none() {
        return error(
            StatusCode::FORBIDDEN,
            "bad_origin",
            "a login code is redeemed by the service's own page only",
        );
    }
    let request: LoginRequest = match parse_body(&headers, &body) {
        Ok(r) => r,
        Err(refused) => return refused.into_response(),
    };
    if !service.inner.logins.redeem(&request.code) {
        return error(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "this login code was used already, expired, or never existed; paste the token instead",
        );
    }
    json_body(&LoginAnswer {
        token: service.inner.token.secret().to_owned(),
    })
}

async fn login_link(State(service): State<StatusService>) -> Response {
    json_body(&LoginLink {
        path: service.login_path(),
    })
}

// === Reads ===

fn actions(service: &StatusService) -> bool {
    service.inner.diagnostics.is_some()
}

fn summaries(service: &StatusService) -> Arc<Vec<SessionSummary>> {
    service
        .inner
        .summaries
        .get(service.inner.source.as_ref(), |_, source| {
            source
                .histories()
                .iter()
                // A harness's own health check (imported marked) is no session.
                .filter(|h| !h.is_health_check())
                .map(|h| SessionSummary::of(h))
                .collect()
        })
}

fn session_list(service: &StatusService) -> SessionList {
    SessionList {
        schema_version: STATUS_API_SCHEMA_VERSION,
        actions: actions(service),
        sessions: summaries(service)
            .iter()
            .filter(|s| visible(service, &s.session_id))
            .cloned()
            .collect(),
    }
}

async fn list_sessions(State(service): State<StatusService>) -> Response {
    json_body(&session_list(&service))
}

fn unknown_session(id: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        "not_found",
        format!("no session {id:?} here"),
    )
}

async fn session_status(State(service): State<StatusService>, Path(id): Path<String>) -> Response {
    if let Err(refused) = authorize(&service, &id, Action::View) {
        return refused.into_response();
    }
    match service.inner.source.history(&id) {
        Some(h) => json_body(&SessionStatus::of((*h).clone(), actions(&service))),
        None => unknown_session(&id),
    }
}

async fn session_diagnostics(
    State(service): State<StatusService>,
    Path(id): Path<String>,
) -> Response {
    if let Err(refused) = authorize(&service, &id, Action::View) {
        return refused.into_response();
    }
    match service.inner.source.history(&id) {
        Some(h) => json_body(&CopyDiagnostics::of(&h)),
        None => unknown_session(&id),
    }
}

/// `GET /api/v1/sessions/{id}/check?require=SERVER[:STAGE]&require_tool=
/// SERVER/TOOL[:STAGE]` (each repeatable): the session's requirements
/// evaluated by `tether-requirements`, as `tether check` does, and its
/// CheckDocument (`tether schema check`). Without any, every server the
/// session names is required at `reached`. A requirement that does not
/// parse (an unknown stage) is `400 bad_requirement`, its words saying
/// the stage meant.
async fn session_check(
    State(service): State<StatusService>,
    Path(id): Path<String>,
    uri: axum::http::Uri,
) -> Response {
    if let Err(refused) = authorize(&service, &id, Action::View) {
        return refused.into_response();
    }
    let requirements = match requirements_of(uri.query().unwrap_or_default()) {
        Ok(requirements) => requirements,
        Err(why) => return error(StatusCode::BAD_REQUEST, "bad_requirement", why),
    };
    match service.inner.source.history(&id) {
        Some(h) => json_body(&tether_requirements::document(vec![
            tether_requirements::check_stored(&h, &requirements),
        ])),
        None => unknown_session(&id),
    }
}

/// The requirements a query names: servers first, then tools, each in
/// the order given (as `--require` and `--require-tool` are). One that
/// does not read is said in `tether check`'s words, after its parameter.
fn requirements_of(query: &str) -> Result<Vec<tether_requirements::Requirement>, String> {
    let mut servers = Vec::new();
    let mut tools = Vec::new();
    for (key, value) in form_urlencoded::parse(query.as_bytes()) {
        let (parsed, into) = match key.as_ref() {
            "require" => (tether_requirements::parse_server(&value), &mut servers),
            "require_tool" => (tether_requirements::parse_tool(&value), &mut tools),
            _ => {
                return Err(
                    "a check takes require=SERVER[:STAGE] and require_tool=SERVER/TOOL[:STAGE] only"
                        .to_owned(),
                );
            }
        };
        into.push(parsed.map_err(|e| format!("{key}: {e}"))?);
        if servers.len() + tools.len() > MAX_REQUIREMENTS {
            return Err(format!(
                "a check takes at most {MAX_REQUIREMENTS} requirements"
            ));
        }
    }
    servers.append(&mut tools);
    Ok(servers)
}

/// A stream's permit, if the cap leaves one.
fn stream_permit(service: &StatusService) -> Option<tokio::sync::OwnedSemaphorePermit> {
    Arc::clone(&service.inner.streams).try_acquire_owned().ok()
}

/// The `429` past the stream cap.
fn too_many_streams() -> Response {
    let mut refused = error(
        StatusCode::TOO_MANY_REQUESTS,
        "too_many_streams",
        "too many event streams are open on this service; close one, or retry later",
    );
    refused.headers_mut().insert(
        axum::http::header::RETRY_AFTER,
        HeaderValue::from_static("5"),
    );
    refused
}

fn sse<S>(service: &StatusService, events: S) -> Response
where
    S: Stream<Item = Result<Event, Infallible>> + Send + 'static,
{
    let Some(permit) = stream_permit(service) else {
        return too_many_streams();
    };
    // The permit lives as long as the stream.
    let events = events.map(move |event| {
        let _held = &permit;
        event
    });
    Sse::new(events)
        .keep_alive(
            KeepAlive::new()
                .interval(service.inner.heartbeat)
                .text("heartbeat"),
        )
        .into_response()
}

/// An event stream of frames already encoded (shared, never copied per
/// stream), with the same heartbeat and cap as [`sse`].
fn sse_frames<S>(service: &StatusService, frames: S) -> Response
where
    S: Stream<Item = Bytes> + Send + 'static,
{
    let Some(permit) = stream_permit(service) else {
        return too_many_streams();
    };
    let every = service.inner.heartbeat;
    let heartbeats = stream::unfold((), move |()| async move {
        tokio::time::sleep(every).await;
        Some((Bytes::from_static(b":heartbeat\n\n"), ()))
    });
    let body = stream::select(frames, heartbeats).map(move |frame| {
        let _held = &permit;
        Ok::<_, Infallible>(frame)
    });
    (
        [
            (CONTENT_TYPE, HeaderValue::from_static("text/event-stream")),
            (CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        axum::body::Body::from_stream(body),
    )
        .into_response()
}

/// The session list as one encoded `sessions` event, and its hash.
fn list_frame(service: &StatusService) -> Arc<(u64, Bytes)> {
    service
        .inner
        .list_frame
        .get(service.inner.source.as_ref(), |_, _| {
            use std::hash::{Hash, Hasher};
            let data = serde_json::to_string(&session_list(service)).unwrap_or_default();
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            data.hash(&mut hasher);
            let mut frame = Vec::with_capacity(data.len() + 32);
            frame.extend_from_slice(b"event: sessions\ndata: ");
            frame.extend_from_slice(data.as_bytes());
            frame.extend_from_slice(b"\n\n");
            (hasher.finish(), Bytes::from(frame))
        })
}

fn status_event(history: &AttachmentHistory, actions: bool) -> Event {
    let doc = SessionStatus::of(history.clone(), actions);
    Event::default()
        .event("status")
        .id(history.revision.to_string())
        .data(serde_json::to_string(&doc).unwrap_or_default())
}

/// The session's current state first (a reload hydrates at once), then one
/// event per change. The watch keeps only the latest, so a slow client
/// skips to it; each event is the whole state, so a skipped one is
/// repaired by the next. `removed` ends the stream.
async fn session_events(State(service): State<StatusService>, Path(id): Path<String>) -> Response {
    if let Err(refused) = authorize(&service, &id, Action::View) {
        return refused.into_response();
    }
    let Some(rx) = service.inner.source.watch(&id) else {
        return unknown_session(&id);
    };
    let actions = actions(&service);
    let events = stream::unfold(Some((rx, true)), move |state| {
        let id = id.clone();
        async move {
            let (mut rx, first) = state?;
            if !first && rx.changed().await.is_err() {
                let data = serde_json::json!({ "session_id": id }).to_string();
                return Some((Ok(Event::default().event("removed").data(data)), None));
            }
            let history = Arc::clone(&rx.borrow_and_update());
            Some((Ok(status_event(&history, actions)), Some((rx, false))))
        }
    });
    sse(&service, events)
}

/// The session list first, then again whenever it changed (coalesced).
/// A stream keeps only the hash of what it sent: its cost does not grow
/// with the store, and every stream sends the one shared encoding.
async fn list_events(State(service): State<StatusService>) -> Response {
    let generation = service.inner.source.generation();
    let frames = stream::unfold(
        (service.clone(), generation, None::<u64>),
        |(service, mut generation, last)| async move {
            loop {
                generation.borrow_and_update();
                let shared = list_frame(&service);
                let (hash, frame) = (shared.0, shared.1.clone());
                drop(shared);
                if last != Some(hash) {
                    return Some((frame, (service, generation, Some(hash))));
                }
                tokio::select! {
                    changed = generation.changed() => {
                        if changed.is_err() {
                            tokio::time::sleep(LIST_RECHECK).await;
                        }
                        tokio::time::sleep(LIST_COALESCE).await;
                    }
                    () = tokio::time::sleep(LIST_RECHECK) => {}
                }
            }
        },
    );
    sse_frames(&service, frames)
}

// === The fleet page ===

/// Changes closer together than this are told as one fleet event: short,
/// so a change shows in the list within a tenth of a second.
const FLEET_COALESCE: Duration = Duration::from_millis(20);

fn fleet_index(service: &StatusService) -> Arc<FleetIndex> {
    service
        .inner
        .fleet
        .get(service.inner.source.as_ref(), |previous, source| {
            // A harness's own health check (imported marked) is no session.
            let mut histories = source.histories();
            histories.retain(|h| !h.is_health_check());
            FleetIndex::update(previous, &histories)
        })
}

fn fleet_query(uri: &axum::http::Uri) -> Result<FleetQuery, Refusal> {
    FleetQuery::parse(uri.query().unwrap_or("")).map_err(|why| {
        Refusal(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            format!("a fleet filter is wrong: {why}"),
        )
    })
}

async fn fleet_sessions(State(service): State<StatusService>, uri: axum::http::Uri) -> Response {
    let query = match fleet_query(&uri) {
        Ok(q) => q,
        Err(bad) => return bad.into_response(),
    };
    let index = fleet_index(&service);
    json_body(&crate::fleet::sessions(
        &index,
        &query,
        actions(&service),
        |id| visible(&service, id),
    ))
}

async fn fleet_servers(State(service): State<StatusService>, uri: axum::http::Uri) -> Response {
    let query = match fleet_query(&uri) {
        Ok(q) => q,
        Err(bad) => return bad.into_response(),
    };
    let index = fleet_index(&service);
    json_body(&crate::fleet::servers(&index, &query, |id| {
        visible(&service, id)
    }))
}

/// One small `fleet` event whenever any session changed (coalesced over
/// [`FLEET_COALESCE`]): `{"generation": N}`. The page then asks again for
/// the one page it shows; the list itself is never re-sent.
async fn fleet_events(State(service): State<StatusService>) -> Response {
    let generation = service.inner.source.generation();
    let events = stream::unfold((generation, true), |(mut generation, first)| async move {
        if !first {
            if generation.changed().await.is_err() {
                return None;
            }
            tokio::time::sleep(FLEET_COALESCE).await;
        }
        let now = *generation.borrow_and_update();
        let data = serde_json::json!({ "generation": now }).to_string();
        Some((
            Ok(Event::default().event("fleet").data(data)),
            (generation, false),
        ))
    });
    sse(&service, events)
}

// === Actions ===

fn diagnostics_error(err: DiagnosticsError) -> Response {
    let status = match &err {
        DiagnosticsError::Denied(_) => StatusCode::FORBIDDEN,
        DiagnosticsError::InvalidRequest(_) => StatusCode::BAD_REQUEST,
        DiagnosticsError::UnknownSession(_) | DiagnosticsError::UnknownServer { .. } => {
            StatusCode::NOT_FOUND
        }
    };
    let code = match status {
        StatusCode::FORBIDDEN => "forbidden",
        StatusCode::BAD_REQUEST => "invalid_request",
        _ => "not_found",
    };
    error(status, code, err.to_string())
}

/// Removes an in-flight mark however the test ends (done, failed, or the
/// client went away and the future was dropped).
struct InFlight<'a> {
    set: &'a Mutex<HashSet<(String, String)>>,
    key: (String, String),
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.set
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.key);
    }
}

async fn endpoint_test(
    State(service): State<StatusService>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let request: EndpointTestRequest = match parse_body(&headers, &body) {
        Ok(r) => r,
        Err(refused) => return refused.into_response(),
    };
    if let Err(refused) = authorize(&service, &request.session_id, Action::EndpointTest) {
        return refused.into_response();
    }
    let Some(diagnostics) = &service.inner.diagnostics else {
        return error(
            StatusCode::CONFLICT,
            "unavailable",
            "this service reads a store; endpoint tests run in the host that runs the session",
        );
    };
    let key = (request.session_id.clone(), request.server_name.clone());
    let _in_flight = {
        let mut set = service
            .inner
            .in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if !set.insert(key.clone()) {
            return error(
                StatusCode::CONFLICT,
                "busy",
                "an endpoint test of this server is already running; wait for its result",
            );
        }
        InFlight {
            set: &service.inner.in_flight,
            key,
        }
    };
    // Dropping the request (the client went away) cancels the test and its processes.
    let cancel = CancellationToken::new();
    let _cancel_on_drop = cancel.clone().drop_guard();
    match diagnostics
        .check_endpoint(TOKEN_PRINCIPAL, request, cancel)
        .await
    {
        Ok(result) => json_body(&EndpointTestDocument::from(&result)),
        Err(err) => diagnostics_error(err),
    }
}

async fn recent_output(
    State(service): State<StatusService>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let request: RecentOutputRequest = match parse_body(&headers, &body) {
        Ok(r) => r,
        Err(refused) => return refused.into_response(),
    };
    if let Err(refused) = authorize(&service, &request.session_id, Action::RecentOutput) {
        return refused.into_response();
    }
    let session_id = request.session_id.clone();
    let output = match &service.inner.diagnostics {
        Some(diagnostics) => match diagnostics.recent_output(TOKEN_PRINCIPAL, request) {
            Ok(output) => output,
            Err(err) => return diagnostics_error(err),
        },
        None => RecentOutput::Unavailable {
            reason: "this service reads a store; recent output exists only while the host runs the session, and is never stored".into(),
        },
    };
    json_body(&RecentOutputDocument::of(&session_id, output))
}
