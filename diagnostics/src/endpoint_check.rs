//! The endpoint check (`tether endpoint-test`): one bounded handshake (MCP
//! 2026-07-28 `server/discover`, or the legacy `initialize`) + `tools/list`
//! against one MCP server, over stdio (in its own process group), streamable
//! HTTP or legacy SSE, with an rmcp client. Its outcome is an
//! [`EndpointTestResult`].
//!
//! Every phase has a timeout and the whole test can be cancelled. Whatever
//! happens (success, error, timeout, cancellation, or the caller dropping the
//! future) everything it started is stopped: the stdio server is killed with
//! every descendant. Hostile answers are capped: one message, all bytes read,
//! and the number of tools; garbage is a clear `protocol_error`.
//!
//! [`check_endpoint`] tries `server/discover` first and the legacy
//! `initialize` as the fallback. Stdio has its own size-capped transport (in
//! a `ChildGroup`), TLS is rustls, network targets get DNS and TCP
//! pre-checks, redirects are never followed, and each way a server can be
//! wrong has a stable reason and a sentence (`display::reason_hint`);
//! `endpoint_for_url` takes a path ending in `/sse` as legacy SSE. The listed tools are catalogued from
//! the server's own bytes (`RawTools`): each stdio line, each server-sent event
//! on its way to rmcp's reqwest client (observed by `tether_mcp_client::resume`'s
//! `Resuming`, which also keeps SSE `retry` on every resumption), each legacy SSE message
//! (`connect_observing`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rmcp::model::{
    ClientCapabilities, ClientConfig, ClientJsonRpcMessage, Implementation, PaginatedRequestParams,
    ProtocolVersion, ServerJsonRpcMessage,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use tether_core::model::{EndpointTestResult, ToolCallCheck, ToolCatalog};
use tether_core::sanitize::Scrubber;
use tether_core::spec::{Endpoint, KeyValue};
use tether_core::vocab::ReasonCode;
use tether_process::{ChildGroup, ChildSpec, OutputTail};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, PollSender};

mod failure;

use failure::{
    Credentials, Failure, classify_handshake, classify_network, credentials, for_exit, for_spawn,
    for_status, is_tls_failure, with_hint,
};

/// How long output that is only garbage may go on before the test gives up.
const GARBAGE_WINDOW: Duration = Duration::from_secs(3);

/// Bounds of one endpoint check.
#[derive(Debug, Clone, Copy)]
pub struct CheckLimits {
    /// The whole test.
    pub timeout: Duration,
    /// The largest single message accepted.
    pub max_message_bytes: usize,
    /// All bytes read from the server, together.
    pub max_total_bytes: u64,
    /// Tools listed, across pages.
    pub max_tools: usize,
    /// tools/list pages followed.
    pub max_pages: usize,
}

impl Default for CheckLimits {
    fn default() -> Self {
        CheckLimits {
            timeout: Duration::from_secs(30),
            max_message_bytes: 8 * 1024 * 1024,
            max_total_bytes: 32 * 1024 * 1024,
            max_tools: 10_000,
            max_pages: 64,
        }
    }
}

/// serverInfo as the server gave it (scrubbed before it leaves).
struct ServerInfo {
    name: String,
    version: Option<String>,
}

struct Success {
    server: ServerInfo,
    protocol_version: String,
    tool_count: u32,
    /// Every listed tool, as the typed client read it (the catalog's
    /// fallback when the bytes the server sent were not seen).
    tools: Vec<rmcp::model::Tool>,
    /// What the check had to do to get there (a fallback), for the summary.
    note: Option<String>,
    /// The tool call asked for, once the listing succeeded.
    call: Option<ToolCallCheck>,
}

/// One tool call an endpoint test makes after the listing, when asked
/// (`tether endpoint-test --call`): never otherwise, since a check must not
/// run a user's tool to test a connection. The arguments are the caller's
/// own; they are sent and never kept.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The tool, by the name the server lists.
    pub tool: String,
    /// Its arguments (a JSON object).
    pub arguments: serde_json::Map<String, serde_json::Value>,
}

impl ToolCall {
    /// Every string the arguments hold, as secrets: a server that echoes
    /// one into an error or a name does not get it shown.
    fn secret_values(&self) -> Vec<String> {
        fn strings(value: &serde_json::Value, out: &mut Vec<String>) {
            match value {
                serde_json::Value::String(s) => out.push(s.clone()),
                serde_json::Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
                serde_json::Value::Object(map) => map.values().for_each(|v| strings(v, out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        self.arguments.values().for_each(|v| strings(v, &mut out));
        out
    }
}

/// Every tool of every `tools/list` result, exactly as the server sent it:
/// the typed client drops fields it does not model, which the model still
/// receives. Filled by the stdio reader (each line) and by the HTTP client
/// observer (each server-sent event).
#[derive(Clone, Default)]
struct RawTools(Arc<std::sync::Mutex<Vec<serde_json::Value>>>);

impl RawTools {
    /// Keeps the tools of `message` when it is a `tools/list` result.
    fn keep(&self, message: &str) {
        let Ok(serde_json::Value::Object(mut message)) = serde_json::from_str(message) else {
            return;
        };
        if let Some(serde_json::Value::Array(tools)) = message
            .get_mut("result")
            .and_then(|r| r.as_object_mut())
            .and_then(|r| r.remove("tools"))
        {
            self.0
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend(tools);
        }
    }

    fn take(&self) -> Vec<serde_json::Value> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// What the stdio reader noticed, to explain a failure precisely.
#[derive(Default)]
struct StdioSignals {
    oversized: AtomicBool,
    over_total: AtomicBool,
    garbage_lines: AtomicU64,
    first_garbage: std::sync::Mutex<Option<String>>,
    bytes: AtomicU64,
    /// The server wrote back a request only a client sends (its input
    /// echoed, as `cat` does).
    echoed: AtomicBool,
    /// The server closed its stdout (it has exited, or is about to).
    stdout_closed: AtomicBool,
    /// The listed tools as sent (shared with the check).
    raw_tools: RawTools,
}

type Client = RunningService<RoleClient, ClientConfig>;

/// Speaks both eras: `server/discover` (MCP 2026-07-28) first, and the
/// legacy `initialize` handshake when the server turns out to be legacy or
/// does not answer discovery within rmcp's bound (10 s).
fn both_eras() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: None,
    }
}

/// The era a negotiated protocol version belongs to: `2026-07-28` (no
/// handshake, self-contained requests) or `legacy` (the initialize handshake).
pub fn era_of(protocol_version: &str) -> &'static str {
    // Versions are dates, so they order as strings.
    if protocol_version >= ProtocolVersion::V_2026_07_28.as_str() {
        "2026-07-28"
    } else {
        "legacy"
    }
}

fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("tether-endpoint-test", env!("CARGO_PKG_VERSION")),
    )
}

/// The endpoint a URL names: legacy SSE when `sse` is asked for or the path
/// ends in `/sse` (the convention legacy servers follow), streamable HTTP
/// otherwise.
pub fn endpoint_for_url(url: &str, headers: Vec<KeyValue>, sse: bool) -> Endpoint {
    let url = url.to_owned();
    if sse || url.trim_end_matches('/').ends_with("/sse") {
        Endpoint::Sse { url, headers }
    } else {
        Endpoint::Http { url, headers }
    }
}

/// Runs one endpoint check. `cancel` ends it early (reason `cancelled`).
/// A successful result carries the listed tools' token estimate.
pub async fn check_endpoint(
    endpoint: &Endpoint,
    limits: CheckLimits,
    cancel: CancellationToken,
) -> EndpointTestResult {
    check_endpoint_catalog(endpoint, limits, cancel).await.0
}

/// [`check_endpoint`], plus the bounded catalog of the listed tools (names,
/// descriptions and input schemas with the endpoint's own secret values
/// redacted; per-tool token estimates made before that, over what the server
/// sent), when the listing succeeded.
pub async fn check_endpoint_catalog(
    endpoint: &Endpoint,
    limits: CheckLimits,
    cancel: CancellationToken,
) -> (EndpointTestResult, Option<ToolCatalog>) {
    check_endpoint_calling(endpoint, limits, None, cancel).await
}

/// [`check_endpoint_catalog`], then, when `call` is given and the listing
/// succeeded, that one `tools/call` (its outcome in the result's `call`,
/// metadata only). The call has the time the listing left, minus a tenth
/// of the whole (at most a second), so that a call that never answers is
/// reported as the call's timeout with the listing kept.
pub async fn check_endpoint_calling(
    endpoint: &Endpoint,
    limits: CheckLimits,
    call: Option<&ToolCall>,
    cancel: CancellationToken,
) -> (EndpointTestResult, Option<ToolCatalog>) {
    let (result, catalog, _) = check_endpoint_hashing(endpoint, limits, call, cancel).await;
    (result, catalog)
}

/// Each listed tool's name (scrubbed) and definition hashes
/// (`tether_pins::hash_listing`), in listing order.
pub type ListedHashes = Vec<(String, tether_pins::DefinitionHashes)>;

/// [`check_endpoint_calling`], plus each listed tool's definition hashes
/// (over the definitions as the server sent them, whole), when the listing
/// succeeded: what pinning (`crate::pins`) compares. The text is hashed
/// here and never kept.
pub async fn check_endpoint_hashing(
    endpoint: &Endpoint,
    limits: CheckLimits,
    call: Option<&ToolCall>,
    cancel: CancellationToken,
) -> (
    EndpointTestResult,
    Option<ToolCatalog>,
    Option<ListedHashes>,
) {
    let started = Instant::now();
    warm_tokenizer();
    let mut secrets = endpoint.secret_values();
    secrets.extend(call.map(ToolCall::secret_values).unwrap_or_default());
    let scrubber = Scrubber::new().with_secrets(secrets);
    let deadline = tokio::time::Instant::now() + limits.timeout;
    let call_deadline = deadline - (limits.timeout / 10).min(Duration::from_secs(1));
    let mut stdio: Option<(ChildGroup, Arc<StdioSignals>)> = None;
    let raw = RawTools::default();
    let call = call.map(|c| (c, call_deadline));

    let outcome = tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(Failure::new(ReasonCode::Cancelled, "the endpoint test was cancelled")),
        result = run_either_era(endpoint, &limits, &mut stdio, &raw, call) => result,
        _ = tokio::time::sleep_until(deadline) => Err(Failure::new(
            ReasonCode::Timeout,
            format!("no complete answer within {:?}", limits.timeout),
        )),
    };

    // A 401 that named no OAuth metadata may still be an OAuth login.
    let outcome = match outcome {
        Err(failure) => Err(failure::with_oauth_discovery(failure, endpoint, deadline).await),
        ok => ok,
    };

    // Clean up on every path, grandchildren included.
    let outcome = match stdio {
        Some((mut process, signals)) => {
            let exit = exit_after_close(&mut process, &signals, &outcome, deadline).await;
            process.kill_group().await;
            outcome.map_err(|f| explain_stdio(f, &signals, exit, &process.stderr_tail()))
        }
        None => outcome,
    };

    let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let base = EndpointTestResult::failed(endpoint, tether_hub::now(), None, None, elapsed_ms);
    match outcome {
        Ok(ok) => {
            // The tools as sent when the reader saw them all (stdio); else
            // the typed client's view, which lacks fields it does not model,
            // and says so in its method.
            let raw = Some(raw.take()).filter(|t| t.len() == ok.tools.len());
            let exact = raw.is_some();
            let tools = raw.unwrap_or_else(|| {
                ok.tools
                    .iter()
                    .filter_map(|t| serde_json::to_value(t).ok())
                    .collect()
            });
            // Tokenizing thousands of tools is CPU work: off the runtime.
            let built = tokio::task::spawn_blocking(move || {
                let mut catalog = tether_catalog::build_catalog(&tools, tether_hub::now());
                if !exact && catalog.method == tether_core::model::CATALOG_METHOD {
                    catalog.method = tether_catalog::MODELLED_METHOD.to_owned();
                }
                (catalog, tether_pins::hash_listing(&tools))
            })
            .await
            .ok();
            let (catalog, hashes) = match built {
                Some((catalog, hashes)) => (Some(redacted(catalog, &scrubber)), Some(hashes)),
                None => (None, None),
            };
            let hashes = hashes.map(|listed| {
                listed
                    .into_iter()
                    .map(|(name, h)| (scrubber.name(&name), h))
                    .collect()
            });
            let result = EndpointTestResult {
                succeeded: true,
                summary: ok.note.as_deref().map(|n| scrubber.summary(n)),
                server_name: Some(scrubber.name(&ok.server.name)),
                server_version: ok.server.version.map(|v| scrubber.name(&v)),
                era: Some(era_of(&ok.protocol_version).to_owned()),
                protocol_version: Some(scrubber.name(&ok.protocol_version)),
                tool_count: Some(ok.tool_count),
                tool_tokens: catalog.as_ref().map(|c| c.total_tokens),
                token_method: catalog.as_ref().map(|c| c.method.clone()),
                call: ok.call.map(|c| ToolCallCheck {
                    tool: scrubber.name(&c.tool),
                    summary: c.summary.map(|s| scrubber.summary(&s)),
                    ..c
                }),
                ..base
            };
            (result, catalog, hashes)
        }
        Err(f) => (
            EndpointTestResult {
                reason_code: Some(f.reason),
                summary: Some(scrubber.summary(&f.summary)),
                ..base
            },
            None,
            None,
        ),
    }
}

/// Builds the o200k_base tables (a few hundred milliseconds of CPU, once per
/// process) on a thread of their own while the server starts and answers,
/// instead of after the check, where the catalog needs them: the whole
/// process then ends close to the check's own `elapsed_ms`. A detached
/// thread, so a check that fails at once never waits for it (process exit
/// ends it); the catalog's `OnceLock` makes a build still under way the one
/// the catalog waits for, never a second.
fn warm_tokenizer() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let spawned = std::thread::Builder::new()
            .name("tether-o200k".into())
            .spawn(|| {
                let _ = tether_catalog::method();
            });
        if let Err(err) = spawned {
            // The catalog builds the tables itself, later.
            tracing::debug!(%err, "warming the tokenizer");
        }
    });
}

/// The catalog with the endpoint's own secret values taken out of every
/// name, description and schema string (estimates stay as computed).
fn redacted(mut catalog: ToolCatalog, scrubber: &Scrubber) -> ToolCatalog {
    fn strings(value: &mut serde_json::Value, scrubber: &Scrubber) {
        match value {
            serde_json::Value::String(s) => *s = scrubber.redact_known(s),
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| strings(v, scrubber)),
            serde_json::Value::Object(map) => map.values_mut().for_each(|v| strings(v, scrubber)),
            _ => {}
        }
    }
    for tool in &mut catalog.tools {
        tool.name = scrubber.name(&tool.name);
        if let Some(d) = &mut tool.description {
            *d = scrubber.redact_known(d);
        }
        if let Some(schema) = &mut tool.input_schema {
            strings(schema, scrubber);
        }
    }
    catalog
}

/// [`run`] in both eras; when `server/discover` gets an answer that is not
/// a discovery result (the spec's negotiation expects -32601 from a legacy
/// server; some answer `{}`), once more with the legacy handshake alone,
/// saying so in the summary.
async fn run_either_era(
    endpoint: &Endpoint,
    limits: &CheckLimits,
    stdio: &mut Option<(ChildGroup, Arc<StdioSignals>)>,
    raw: &RawTools,
    call: Option<(&ToolCall, tokio::time::Instant)>,
) -> Result<Success, Failure> {
    match run(endpoint, limits, stdio, raw, both_eras(), call).await {
        Err(failure) if failure.discover_misanswered => {
            if let Some((mut process, _)) = stdio.take() {
                process.kill_group().await;
            }
            raw.take();
            let mut success = run(
                endpoint,
                limits,
                stdio,
                raw,
                ClientLifecycleMode::Initialize,
                call,
            )
            .await?;
            success.note = Some(
                "server/discover got a result that is not a discovery result (not the -32601 a legacy server should send); fell back to initialize".to_owned(),
            );
            Ok(success)
        }
        other => other,
    }
}

async fn run(
    endpoint: &Endpoint,
    limits: &CheckLimits,
    stdio: &mut Option<(ChildGroup, Arc<StdioSignals>)>,
    raw: &RawTools,
    lifecycle: ClientLifecycleMode,
    call: Option<(&ToolCall, tokio::time::Instant)>,
) -> Result<Success, Failure> {
    let sent = credentials(endpoint);
    let client = match endpoint {
        Endpoint::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let given = cwd.as_deref().map(std::path::Path::new);
            let cwd = match given {
                Some(dir) => dir.to_path_buf(),
                None => std::env::current_dir().unwrap_or_else(|_| std::env::temp_dir()),
            };
            let cmd = ChildSpec {
                program: command.clone(),
                args: args.clone(),
                env: env
                    .iter()
                    .map(|kv| (kv.name.clone(), kv.value.clone()))
                    .collect(),
                inherit_env: true,
                cwd,
            };
            // The PATH it was started with: its entry's own, else Tether's.
            let path = env
                .iter()
                .find(|kv| kv.name == "PATH")
                .map(|kv| std::ffi::OsString::from(&kv.value))
                .or_else(|| std::env::var_os("PATH"));
            let (process, stdin, stdout) = ChildGroup::spawn(&cmd)
                .map_err(|err| for_spawn(&err, command, given, path.as_deref()))?;
            let signals = Arc::new(StdioSignals {
                raw_tools: raw.clone(),
                ..StdioSignals::default()
            });
            let transport = bounded_stdio(stdin, stdout, limits, Arc::clone(&signals));
            *stdio = Some((process, signals));
            client_config()
                .serve_with_lifecycle(transport, lifecycle.clone())
                .await
                .map_err(|e| classify_handshake(&e, sent))?
        }
        Endpoint::Http { url, headers } => {
            reachable(url, limits.timeout).await?;
            let mut custom = std::collections::HashMap::new();
            for kv in headers {
                let (Ok(name), Ok(value)) = (
                    reqwest::header::HeaderName::from_bytes(kv.name.as_bytes()),
                    reqwest::header::HeaderValue::from_str(&kv.value),
                ) else {
                    return Err(Failure::new(
                        ReasonCode::InvalidConfig,
                        format!("header {} is not a valid HTTP header", kv.name),
                    ));
                };
                custom.insert(name, value);
            }
            // Redirects are not followed: the headers (credentials) would go along.
            let http = reqwest::Client::builder()
                .connect_timeout(limits.timeout)
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| Failure::new(ReasonCode::ProtocolError, e.to_string()))?;
            let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
            config.custom_headers = custom;
            config.max_json_response_size = limits.max_message_bytes;
            config.max_sse_event_size = limits.max_message_bytes;
            // Resumptions wait the server's SSE `retry` and carry
            // `Last-Event-ID`; no standalone GET stream (see `resume`).
            // Every event's data is read on its way to rmcp's typed client
            // ([`RawTools::keep`]): servers that answer POSTs with an event
            // stream (the TypeScript SDK's default) are catalogued from their
            // own bytes; a plain JSON answer reaches us already typed, so
            // those fall back to the modelled fields.
            let keep = raw.clone();
            let http = tether_mcp_client::resume::Resuming::new(http)
                .observing(move |data| keep.keep(data));
            let transport = StreamableHttpClientTransport::with_client(http, config);
            client_config()
                .serve_with_lifecycle(transport, lifecycle.clone())
                .await
                .map_err(|e| classify_handshake(&e, sent))?
        }
        Endpoint::Sse { url, headers } => {
            reachable(url, limits.timeout).await?;
            let headers: Vec<(String, String)> = headers
                .iter()
                .map(|kv| (kv.name.clone(), kv.value.clone()))
                .collect();
            let kept = raw.clone();
            let observe: tether_mcp_client::sse::MessageObserver =
                Arc::new(move |data| kept.keep(data));
            let transport = tether_mcp_client::sse::connect_observing(
                url,
                &headers,
                limits.timeout,
                Some(observe),
            )
            .await
            .map_err(|e| match e {
                tether_mcp_client::sse::SseClientError::Status(code) => for_status(code, sent),
                other if is_tls_failure(&format!("{other:?}")) => {
                    with_hint(ReasonCode::TlsFailed, "the TLS handshake failed".into())
                }
                other => classify_network("connecting", &format!("{other:?}"), sent),
            })?;
            client_config()
                .serve_with_lifecycle(transport, lifecycle.clone())
                .await
                .map_err(|e| classify_handshake(&e, sent))?
        }
    };
    let mut result = list(&client, limits, sent).await;
    if let (Ok(success), Some((call, deadline))) = (&mut result, call) {
        success.call = Some(call_tool(&client, &success.tools, call, deadline, sent).await);
    }
    let _ = client.cancel().await;
    result
}

/// The one `tools/call` asked for, bounded by `deadline`: metadata only
/// (whether a result came back, its `isError`, how many content blocks).
/// A tool the server did not list is not called.
async fn call_tool(
    client: &Client,
    listed: &[rmcp::model::Tool],
    call: &ToolCall,
    deadline: tokio::time::Instant,
    sent: Credentials,
) -> ToolCallCheck {
    let started = Instant::now();
    let mut check = ToolCallCheck {
        tool: call.tool.clone(),
        succeeded: false,
        reason_code: None,
        summary: None,
        is_error: None,
        content_items: None,
        structured: None,
        elapsed_ms: 0,
    };
    if !listed.iter().any(|t| t.name == call.tool) {
        check.reason_code = Some(ReasonCode::ToolNotListed);
        check.summary = Some(format!(
            "the server lists no tool of that name ({} listed), so it was not called",
            listed.len()
        ));
        return check;
    }
    let params = rmcp::model::CallToolRequestParams::new(call.tool.clone())
        .with_arguments(call.arguments.clone());
    let answer = tokio::time::timeout_at(deadline, client.call_tool(params)).await;
    check.elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    match answer {
        Ok(Ok(result)) => {
            check.succeeded = result.is_error != Some(true);
            check.is_error = result.is_error;
            check.content_items = Some(u32::try_from(result.content.len()).unwrap_or(u32::MAX));
            check.structured = Some(result.structured_content.is_some());
            if result.is_error == Some(true) {
                check.summary = Some("the tool answered with isError: true".to_owned());
            }
        }
        // The server's own message can echo the arguments: only its code.
        Ok(Err(rmcp::ServiceError::McpError(error))) => {
            check.reason_code = Some(ReasonCode::ServerError);
            check.summary = Some(format!(
                "the server answered tools/call with JSON-RPC error {}",
                error.code.0
            ));
        }
        Ok(Err(error)) => {
            let failure = classify_network("tools/call", &format!("{error:?}"), sent);
            check.reason_code = Some(failure.reason);
            check.summary = Some(failure.summary);
        }
        Err(_) => {
            check.reason_code = Some(ReasonCode::Timeout);
            check.summary = Some("tools/call got no result in the time the test had left".into());
        }
    }
    check
}

async fn list(
    client: &Client,
    limits: &CheckLimits,
    sent: Credentials,
) -> Result<Success, Failure> {
    let info = client
        .peer_info()
        .ok_or_else(|| Failure::new(ReasonCode::ProtocolError, "no initialize result"))?;
    let mut count = 0usize;
    let mut tools = Vec::new();
    let mut cursor = None;
    for _ in 0..limits.max_pages {
        let page = client
            .list_tools(Some(
                PaginatedRequestParams::default().with_cursor(cursor.take()),
            ))
            .await
            .map_err(|e| classify_network("tools/list", &format!("{e:?}"), sent))?;
        count += page.tools.len();
        tools.extend(page.tools);
        if count > limits.max_tools {
            return Err(Failure::new(
                ReasonCode::ProtocolError,
                format!("tools/list returned more than {} tools", limits.max_tools),
            ));
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => {
                return Ok(Success {
                    server: ServerInfo {
                        name: info
                            .server_info
                            .as_ref()
                            .map_or_else(|| "unnamed".to_owned(), |i| i.name.clone()),
                        version: info.server_info.as_ref().map(|i| i.version.clone()),
                    },
                    protocol_version: info.protocol_version.as_str().to_owned(),
                    tool_count: u32::try_from(count).unwrap_or(u32::MAX),
                    tools,
                    note: None,
                    call: None,
                });
            }
        }
    }
    Err(Failure::new(
        ReasonCode::ProtocolError,
        format!("tools/list kept paginating past {} pages", limits.max_pages),
    ))
}

/// A plain TCP connect first, so "nothing listens there" is named precisely.
async fn reachable(url: &str, timeout: Duration) -> Result<(), Failure> {
    let parsed = url::Url::parse(url)
        .map_err(|_| Failure::new(ReasonCode::InvalidConfig, "the URL does not parse"))?;
    let host = parsed
        .host_str()
        .ok_or_else(|| Failure::new(ReasonCode::InvalidConfig, "the URL has no host"))?
        .trim_matches(['[', ']'])
        .to_owned();
    let port = parsed
        .port_or_known_default()
        .ok_or_else(|| Failure::new(ReasonCode::InvalidConfig, "the URL has no port"))?;
    let shown = tether_core::sanitize::network_target(url);
    match tokio::time::timeout(timeout, tokio::net::lookup_host((host.as_str(), port))).await {
        Ok(Ok(_)) => {}
        Ok(Err(_)) => {
            return Err(Failure::new(
                ReasonCode::HostNotFound,
                format!(
                    "the host name of {shown} does not resolve: check its spelling and this machine's DNS"
                ),
            ));
        }
        Err(_) => {
            return Err(Failure::new(
                ReasonCode::Timeout,
                format!("resolving the host name of {shown} timed out"),
            ));
        }
    }
    match tokio::time::timeout(
        timeout,
        tokio::net::TcpStream::connect((host.as_str(), port)),
    )
    .await
    {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(err)) if err.kind() == std::io::ErrorKind::ConnectionRefused => Err(Failure::new(
            ReasonCode::ConnectionRefused,
            format!(
                "nothing accepts connections at {}",
                tether_core::sanitize::network_target(url)
            ),
        )),
        Ok(Err(err)) => Err(Failure::new(
            ReasonCode::ConnectionRefused,
            format!(
                "cannot connect to {}: {err}",
                tether_core::sanitize::network_target(url)
            ),
        )),
        Err(_) => Err(Failure::new(
            ReasonCode::Timeout,
            format!(
                "connecting to {} timed out",
                tether_core::sanitize::network_target(url)
            ),
        )),
    }
}

/// Turns a generic stdio failure into what the reader actually saw.
fn explain_stdio(
    failure: Failure,
    signals: &StdioSignals,
    exit: Option<std::process::ExitStatus>,
    stderr: &Arc<std::sync::Mutex<OutputTail>>,
) -> Failure {
    // A server that answered and refused both eras said so itself.
    if matches!(
        failure.reason,
        ReasonCode::Cancelled
            | ReasonCode::CommandNotFound
            | ReasonCode::CwdNotFound
            | ReasonCode::ProcessStartFailed
            | ReasonCode::NoCommonProtocol
    ) {
        return failure;
    }
    if signals.echoed.load(Ordering::Relaxed) {
        return Failure::new(
            ReasonCode::ProtocolError,
            "the program wrote back the request it was sent: it echoes its input (as cat does), so it is not an MCP server; check the command",
        );
    }
    if signals.oversized.load(Ordering::Relaxed) {
        return Failure::new(
            ReasonCode::ProtocolError,
            "the server sent a message larger than the limit",
        );
    }
    if signals.over_total.load(Ordering::Relaxed) {
        return Failure::new(
            ReasonCode::ProtocolError,
            "the server sent more bytes than the limit",
        );
    }
    let garbage = signals.garbage_lines.load(Ordering::Relaxed);
    if garbage > 0 {
        let sample = signals
            .first_garbage
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .unwrap_or_default();
        return Failure::new(
            ReasonCode::ProtocolError,
            format!("the server wrote {garbage} line(s) that are not JSON-RPC, first: {sample}"),
        );
    }
    // The deadline's own timeout: the server started and kept running.
    // Whatever it did after its input closed says nothing more.
    if failure.reason == ReasonCode::Timeout {
        return Failure::new(
            ReasonCode::Timeout,
            format!(
                "{}: the server started and kept running, but sent no answer (an MCP server over stdio answers at once; this one may wait for something else, or not speak MCP)",
                failure.summary
            ),
        );
    }
    if let Some(status) = exit {
        let last = stderr
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .lines()
            .last()
            .cloned()
            .unwrap_or_default();
        return for_exit(status, &last);
    }
    failure
}

/// Whether a line the server wrote is a request only a client sends: a
/// program that echoes its input (`cat`) writes back the check's own
/// `server/discover` or `initialize`.
fn is_client_request(line: &str) -> bool {
    let Ok(serde_json::Value::Object(message)) = serde_json::from_str::<serde_json::Value>(line)
    else {
        return false;
    };
    message.contains_key("id")
        && matches!(
            message.get("method").and_then(serde_json::Value::as_str),
            Some("server/discover" | "initialize")
        )
}

/// The server's exit status, once a failed check saw it close its
/// stdout: waited for until it comes or the check's deadline (never a
/// guessed pause), so a server that exited is told from one that broke
/// the protocol. `None` when it is still running, or the check did not
/// fail on a closed output.
async fn exit_after_close(
    process: &mut ChildGroup,
    signals: &StdioSignals,
    outcome: &Result<Success, Failure>,
    deadline: tokio::time::Instant,
) -> Option<std::process::ExitStatus> {
    let waiting = matches!(outcome, Err(f) if !matches!(f.reason, ReasonCode::Timeout | ReasonCode::Cancelled))
        && signals.stdout_closed.load(Ordering::Relaxed);
    let mut exit = process.exited();
    while waiting && exit.is_none() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
        exit = process.exited();
    }
    exit
}

/// A bounded rmcp transport over a child's stdio.
fn bounded_stdio(
    stdin: tokio::process::ChildStdin,
    stdout: tokio::process::ChildStdout,
    limits: &CheckLimits,
    signals: Arc<StdioSignals>,
) -> impl rmcp::transport::IntoTransport<
    RoleClient,
    tokio_util::sync::PollSendError<ClientJsonRpcMessage>,
    rmcp::transport::sink_stream::TransportAdapterSinkStream,
> {
    let (to_client, mut from_server) = mpsc::channel::<ServerJsonRpcMessage>(16);
    let (to_server, mut from_client) = mpsc::channel::<ClientJsonRpcMessage>(16);
    let (max_message, max_total) = (limits.max_message_bytes, limits.max_total_bytes);
    tokio::spawn(async move {
        let mut reader = BufReader::new(stdout);
        let mut buf = Vec::new();
        let mut valid_seen = false;
        let mut garbage_since: Option<tokio::time::Instant> = None;
        loop {
            buf.clear();
            let mut limited = (&mut reader).take(max_message as u64 + 1);
            let read_line = limited.read_until(b'\n', &mut buf);
            // Output that is only garbage gets a short window to turn into JSON-RPC.
            let read = match (valid_seen, garbage_since) {
                (false, Some(since)) => {
                    match tokio::time::timeout_at(since + GARBAGE_WINDOW, read_line).await {
                        Ok(read) => read,
                        Err(_) => return,
                    }
                }
                _ => read_line.await,
            };
            let n = match read {
                Ok(0) | Err(_) => {
                    signals.stdout_closed.store(true, Ordering::Relaxed);
                    return;
                }
                Ok(n) => n,
            };
            let total = signals.bytes.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
            if total > max_total {
                signals.over_total.store(true, Ordering::Relaxed);
                return;
            }
            if buf.len() > max_message {
                signals.oversized.store(true, Ordering::Relaxed);
                return;
            }
            let line = String::from_utf8_lossy(&buf);
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            if is_client_request(line) {
                signals.echoed.store(true, Ordering::Relaxed);
                return;
            }
            match serde_json::from_str::<ServerJsonRpcMessage>(line) {
                Ok(message) => {
                    valid_seen = true;
                    if line.contains("\"tools\"") {
                        signals.raw_tools.keep(line);
                    }
                    if to_client.send(message).await.is_err() {
                        return;
                    }
                }
                Err(_) => {
                    garbage_since.get_or_insert_with(tokio::time::Instant::now);
                    let count = signals.garbage_lines.fetch_add(1, Ordering::Relaxed) + 1;
                    let mut first = signals
                        .first_garbage
                        .lock()
                        .unwrap_or_else(|p| p.into_inner());
                    if first.is_none() {
                        *first = Some(tether_core::sanitize::cap_with_ellipsis(line, 120));
                    }
                    drop(first);
                    // A server that only writes garbage is not going to answer.
                    if count >= 64 {
                        return;
                    }
                }
            }
        }
    });
    tokio::spawn(async move {
        let mut stdin = stdin;
        while let Some(message) = from_client.recv().await {
            let Ok(mut line) = serde_json::to_vec(&message) else {
                continue;
            };
            line.push(b'\n');
            if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
                return;
            }
        }
    });
    (
        PollSender::new(to_server),
        futures::stream::poll_fn(move |cx| from_server.poll_recv(cx)),
    )
}
