//! Test peers for real harness sessions, offline: a fake model endpoint and
//! an MCP server that always wants OAuth.
//!
//! The fake model answers in each harness's API shape (Anthropic messages,
//! OpenAI chat completions and responses, Gemini `generateContent`). On a
//! turn whose history has not yet called the target tool, it calls the first
//! offered tool whose name contains the target (or, where the harness
//! defers MCP tools behind a search tool, that search tool first); once the
//! target was called and a tool result is in the history, it answers text.
//! It keeps nothing of what it is sent beyond the tool names it saw and the
//! tool results the harness sent back (what reached the model, for tests
//! of a tool's answer).
//!
//! The OAuth server answers every MCP request with 401 and a
//! `WWW-Authenticate` that points at protected-resource metadata, serves
//! that metadata and an authorization server's, registers any client, and
//! refuses every token request: a server that needs auth, forever.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// What the fake model saw: per request, its path and the tool names offered.
#[derive(Debug, Clone, Default)]
pub struct ModelLog {
    turns: Arc<Mutex<Vec<Turn>>>,
}

/// One request to the fake model.
#[derive(Debug, Clone)]
pub struct Turn {
    /// The request path.
    pub path: String,
    /// The tool names it offered the model.
    pub tools: Vec<String>,
    /// The tool it answered with a call to, if any.
    pub called: Option<String>,
    /// For each offered tool whose description names the tool it came from
    /// (`tether-breaking-mcp`'s do: [`ORIGIN`] then the listed name), the
    /// offered name and that listed name: which of two colliding tools a
    /// harness kept.
    pub origins: Vec<(String, String)>,
    /// Every `mcp__…` name the request's messages and instructions mention
    /// (its tool definitions aside): what a harness that defers tools
    /// behind a search tells the model it can search for.
    pub named: Vec<String>,
    /// The text of every tool result in the request's history, as the
    /// harness sent it to the model.
    pub results: Vec<String>,
    /// The skills a skill listing in the request's text offers the model
    /// (`- NAME: description` lines in a text after a line that says
    /// skills are available), by name.
    pub skills: Vec<String>,
}

impl ModelLog {
    /// Every turn so far.
    pub fn turns(&self) -> Vec<Turn> {
        self.turns.lock().map(|t| t.clone()).unwrap_or_default()
    }
}

#[derive(Clone)]
struct ModelState {
    /// The tool it calls: `TOOL` (of the server `time`) or `SERVER/TOOL`.
    target: String,
    /// The arguments of every call it makes of the target.
    arguments: Value,
    log: ModelLog,
}

/// The text of every tool result in `value` (Anthropic's `tool_result`
/// blocks, OpenAI's `function_call_output` items and `tool` messages,
/// Gemini's `functionResponse` parts).
fn tool_results(value: &Value, out: &mut Vec<String>) {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(|i| i["text"].as_str().or_else(|| i.as_str()))
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    };
    match value {
        Value::Object(map) => {
            match map.get("type").and_then(Value::as_str) {
                Some("tool_result") => out.push(text(&map["content"])),
                Some("function_call_output") => out.push(text(&map["output"])),
                _ => {}
            }
            if map.get("role").and_then(Value::as_str) == Some("tool") {
                out.push(text(&map["content"]));
            }
            if let Some(response) = map.get("functionResponse") {
                out.push(response["response"].to_string());
            }
            map.values().for_each(|v| tool_results(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| tool_results(v, out)),
        _ => {}
    }
}

/// How a test server's tool description names the tool it describes.
pub const ORIGIN: &str = "A tool made to test harnesses: ";

/// Every tool definition a request offers, flat: a namespace's tools as
/// `namespace/name`, with the definition itself.
fn definitions(request: &Value) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    for tool in request["tools"].as_array().into_iter().flatten() {
        if let Some(subs) = tool["tools"].as_array() {
            let ns = tool["name"].as_str().unwrap_or_default();
            for sub in subs {
                out.push((
                    format!("{ns}/{}", sub["name"].as_str().unwrap_or_default()),
                    sub,
                ));
            }
        } else if let Some(name) = tool["name"].as_str() {
            out.push((name.to_owned(), tool));
        } else if let Some(name) = tool["function"]["name"].as_str() {
            out.push((name.to_owned(), &tool["function"]));
        } else if let Some(decls) = tool["functionDeclarations"].as_array() {
            out.extend(
                decls
                    .iter()
                    .filter_map(|d| d["name"].as_str().map(|n| (n.to_owned(), d))),
            );
        }
    }
    out
}

/// The offered names whose descriptions name their listed tool.
fn origins(request: &Value) -> Vec<(String, String)> {
    definitions(request)
        .into_iter()
        .filter_map(|(name, d)| {
            let listed = d["description"].as_str()?.strip_prefix(ORIGIN)?;
            Some((name, listed.to_owned()))
        })
        .collect()
}

/// The `mcp__…` names a request mentions outside its tool definitions.
fn named(request: &Value) -> Vec<String> {
    let mut rest = request.clone();
    if let Some(map) = rest.as_object_mut() {
        map.remove("tools");
    }
    let text = rest.to_string();
    let mut names: Vec<String> = text
        .match_indices("mcp__")
        .map(|(i, _)| {
            text[i..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
                .collect::<String>()
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The skills a request's text lists for the model: each `- NAME:` line
/// in a block that opens with a line saying skills are available.
fn skills(request: &Value) -> Vec<String> {
    fn strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
        match v {
            Value::String(s) => out.push(s),
            Value::Array(items) => items.iter().for_each(|i| strings(i, out)),
            Value::Object(map) => map
                .iter()
                .filter(|(k, _)| k.as_str() != "tools")
                .for_each(|(_, v)| strings(v, out)),
            _ => {}
        }
    }
    let mut texts = Vec::new();
    strings(request, &mut texts);
    let mut names = Vec::new();
    for text in texts {
        let mut listing = false;
        for line in text.lines() {
            let lower = line.to_ascii_lowercase();
            if lower.contains("skills") && lower.contains("available") {
                listing = true;
                continue;
            }
            if !listing {
                continue;
            }
            // `- NAME: description`, or `- NAME` alone.
            let name = line
                .strip_prefix("- ")
                .map(|l| l.split_once(": ").map_or(l.trim(), |(n, _)| n));
            match name {
                Some(name) if !name.is_empty() && !name.contains(' ') => {
                    names.push(name.to_owned());
                }
                // A description's own lines, until the text ends.
                _ => {}
            }
        }
    }
    names.sort();
    names.dedup();
    names
}

const SEARCH_TOOLS: [&str; 3] = ["tool_search", "ToolSearch", "search_tools"];

/// The tool names a request offers, in order (a namespace's tools as
/// `namespace/name`).
fn offered(request: &Value) -> Vec<String> {
    let mut names = Vec::new();
    for tool in request["tools"].as_array().into_iter().flatten() {
        if let Some(subs) = tool["tools"].as_array() {
            let ns = tool["name"].as_str().unwrap_or_default();
            for sub in subs {
                names.push(format!("{ns}/{}", sub["name"].as_str().unwrap_or_default()));
            }
        } else if let Some(name) = tool["name"].as_str() {
            names.push(name.to_owned());
        } else if let Some(name) = tool["function"]["name"].as_str() {
            names.push(name.to_owned());
        } else if let Some(decls) = tool["functionDeclarations"].as_array() {
            names.extend(
                decls
                    .iter()
                    .filter_map(|d| d["name"].as_str().map(str::to_owned)),
            );
        }
    }
    names
}

/// The id of a call of `name` (Anthropic's form): the name is in it, so a
/// result alone says which tool was called. Claude Code 2.1.332 sends only
/// the new turns of a conversation after its first request.
fn call_id(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("toolu_fake_{safe}")
}

/// The tool names the history already called.
fn called_in(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(tool) = map
                .get("tool_use_id")
                .and_then(Value::as_str)
                .and_then(|id| id.strip_prefix("toolu_fake_"))
            {
                out.push(tool.to_owned());
            }
            let kind = map.get("type").and_then(Value::as_str);
            if matches!(kind, Some("tool_use" | "function_call"))
                && let Some(name) = map.get("name").and_then(Value::as_str)
            {
                out.push(name.to_owned());
            }
            if let Some(name) = map.get("functionCall").and_then(|c| c["name"].as_str()) {
                out.push(name.to_owned());
            }
            for call in map
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(name) = call["function"]["name"].as_str() {
                    out.push(name.to_owned());
                }
            }
            for v in map.values() {
                called_in(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| called_in(v, out)),
        _ => {}
    }
}

fn history(request: &Value) -> &Value {
    ["messages", "input", "contents"]
        .iter()
        .map(|k| &request[*k])
        .find(|v| !v.is_null())
        .unwrap_or(&Value::Null)
}

/// What to answer: a tool to call (with its arguments), or text.
fn decide(state: &ModelState, request: &Value) -> Option<(String, Value)> {
    let names = offered(request);
    let mut called = Vec::new();
    called_in(history(request), &mut called);
    let (server, target) = state
        .target
        .split_once('/')
        .unwrap_or(("time", &state.target));
    if called.iter().any(|n| n.contains(target)) {
        return None;
    }
    if let Some(name) = names.iter().find(|n| n.contains(target)) {
        return Some((name.clone(), state.arguments.clone()));
    }
    let search = names.iter().find(|n| SEARCH_TOOLS.contains(&n.as_str()))?;
    if called.contains(search) {
        // A search that answered with the tool's schema (Qwen Code 0.24
        // does, and offers the tool only that way): the model calls it by
        // the name the answer gave.
        let full = format!("mcp__{server}__{target}");
        return history(request)
            .to_string()
            .contains(&full)
            .then(|| (full, state.arguments.clone()));
    }
    let query = if search == "tool_search" {
        format!("select:mcp__{server}__{target}")
    } else {
        target.to_owned()
    };
    Some((search.clone(), json!({"query": query})))
}

fn sse(events: Vec<(Option<&str>, Value)>, done: bool) -> Response {
    let mut body = String::new();
    for (name, data) in events {
        if let Some(name) = name {
            body.push_str(&format!("event: {name}\n"));
        }
        body.push_str(&format!("data: {data}\n\n"));
    }
    if done {
        body.push_str("data: [DONE]\n\n");
    }
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

fn anthropic(request: &Value, call: Option<(String, Value)>) -> Response {
    let model = request["model"].as_str().unwrap_or("fake");
    let usage = json!({"input_tokens": 10, "output_tokens": 5});
    let (block, stop) = match &call {
        Some((name, args)) => (
            json!({"type": "tool_use", "id": call_id(name), "name": name, "input": args}),
            "tool_use",
        ),
        None => (json!({"type": "text", "text": "done"}), "end_turn"),
    };
    if request["stream"].as_bool() != Some(true) {
        return axum::Json(
            json!({"id": "msg_fake", "type": "message", "role": "assistant",
            "model": model, "content": [block], "stop_reason": stop, "stop_sequence": null,
            "usage": usage}),
        )
        .into_response();
    }
    let (start, delta) = match &call {
        Some((name, args)) => (
            json!({"type": "tool_use", "id": call_id(name), "name": name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": args.to_string()}),
        ),
        None => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": "done"}),
        ),
    };
    sse(
        vec![
            (
                Some("message_start"),
                json!({"type": "message_start", "message": {"id": "msg_fake",
                "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": null, "stop_sequence": null, "usage": usage}}),
            ),
            (
                Some("content_block_start"),
                json!({"type": "content_block_start", "index": 0, "content_block": start}),
            ),
            (
                Some("content_block_delta"),
                json!({"type": "content_block_delta", "index": 0, "delta": delta}),
            ),
            (
                Some("content_block_stop"),
                json!({"type": "content_block_stop", "index": 0}),
            ),
            (
                Some("message_delta"),
                json!({"type": "message_delta", "delta": {"stop_reason": stop,
                "stop_sequence": null}, "usage": {"output_tokens": 5}}),
            ),
            (Some("message_stop"), json!({"type": "message_stop"})),
        ],
        false,
    )
}

fn chat(request: &Value, call: Option<(String, Value)>) -> Response {
    let model = request["model"].as_str().unwrap_or("gpt-4o");
    let base = json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": model});
    let usage = json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15});
    let with = |extra: Value| {
        let mut v = base.clone();
        if let (Some(v), Some(extra)) = (v.as_object_mut(), extra.as_object()) {
            v.extend(extra.clone());
        }
        v
    };
    let (message, finish) = match &call {
        Some((name, args)) => (
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_fake1",
                "type": "function", "function": {"name": name, "arguments": args.to_string()}}]}),
            "tool_calls",
        ),
        None => (json!({"role": "assistant", "content": "done"}), "stop"),
    };
    if request["stream"].as_bool() != Some(true) {
        return axum::Json(with(json!({"object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage})))
        .into_response();
    }
    let delta = match &call {
        Some((name, args)) => {
            json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_fake1",
            "type": "function", "function": {"name": name, "arguments": args.to_string()}}]})
        }
        None => message,
    };
    sse(
        vec![
            (
                None,
                with(json!({"choices": [{"index": 0, "delta": delta, "finish_reason": null}]})),
            ),
            (
                None,
                with(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})),
            ),
            (None, with(json!({"choices": [], "usage": usage}))),
        ],
        true,
    )
}

fn responses(call: Option<(String, Value)>) -> Response {
    let usage = json!({"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15});
    let item = match &call {
        Some((full, args)) => {
            let (namespace, name) = match full.split_once('/') {
                Some((ns, name)) => (Some(ns), name),
                None => (None, full.as_str()),
            };
            let mut item = json!({"type": "function_call", "id": "fc_fake1", "call_id": "call_fake1",
                "name": name, "arguments": args.to_string(), "status": "completed"});
            if let Some(ns) = namespace {
                item["namespace"] = json!(ns);
            }
            item
        }
        None => {
            json!({"type": "message", "id": "msg_fake1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "done", "annotations": []}]})
        }
    };
    sse(
        vec![
            (
                Some("response.created"),
                json!({"type": "response.created", "response": {"id": "resp_fake",
                "object": "response", "status": "in_progress", "output": []}}),
            ),
            (
                Some("response.output_item.added"),
                json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
            ),
            (
                Some("response.output_item.done"),
                json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
            ),
            (
                Some("response.completed"),
                json!({"type": "response.completed", "response": {"id": "resp_fake",
                "object": "response", "status": "completed", "output": [item], "usage": usage}}),
            ),
        ],
        false,
    )
}

fn gemini(call: Option<(String, Value)>, stream: bool) -> Response {
    let parts = match call {
        Some((name, args)) => json!([{"functionCall": {"name": name, "args": args}}]),
        None => json!([{"text": "done"}]),
    };
    let body = json!({"candidates": [{"content": {"role": "model", "parts": parts},
        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "gemini-2.5-pro"});
    if stream {
        sse(vec![(None, body)], false)
    } else {
        axum::Json(body).into_response()
    }
}

async fn model_get(uri: Uri) -> Response {
    if uri.path().contains("models") {
        return axum::Json(
            json!({"object": "list", "data": [{"id": "gpt-4o", "object": "model"},
            {"id": "fake-model", "object": "model"}], "models": []}),
        )
        .into_response();
    }
    StatusCode::NOT_FOUND.into_response()
}

async fn model_post(State(state): State<ModelState>, uri: Uri, body: Bytes) -> Response {
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let path = uri.path().to_owned();
    if path.contains("count_tokens") {
        return axum::Json(json!({"input_tokens": 10})).into_response();
    }
    if path.contains("countTokens") {
        return axum::Json(json!({"totalTokens": 10})).into_response();
    }
    let call = decide(&state, &request);
    if let Ok(mut turns) = state.log.turns.lock() {
        turns.push(Turn {
            path: path.clone(),
            tools: offered(&request),
            called: call.as_ref().map(|(n, _)| n.clone()),
            origins: origins(&request),
            named: named(&request),
            skills: skills(&request),
            results: {
                let mut results = Vec::new();
                tool_results(history(&request), &mut results);
                results
            },
        });
    }
    if path.ends_with("/messages") {
        anthropic(&request, call)
    } else if path.ends_with("/chat/completions") {
        chat(&request, call)
    } else if path.ends_with("/responses") {
        responses(call)
    } else if path.contains("generateContent") || path.contains("GenerateContent") {
        gemini(call, path.to_ascii_lowercase().contains("stream"))
    } else {
        StatusCode::NOT_FOUND.into_response()
    }
}

/// The fake model's routes, calling tools whose names contain `target`.
pub fn model_router(target: &str, log: ModelLog) -> Router {
    model_router_calling(target, json!({"timezone": "UTC"}), log)
}

/// [`model_router`], calling the target with `arguments`.
pub fn model_router_calling(target: &str, arguments: Value, log: ModelLog) -> Router {
    Router::new()
        .fallback(
            |state: State<ModelState>, method: axum::http::Method, uri: Uri, body: Bytes| async move {
                if method == axum::http::Method::POST {
                    model_post(state, uri, body).await
                } else {
                    model_get(uri).await
                }
            },
        )
        .with_state(ModelState {
            target: target.to_owned(),
            arguments,
            log,
        })
}

/// How many requests the OAuth server refused (or answered with metadata).
#[derive(Debug, Clone, Default)]
pub struct AuthLog {
    requests: Arc<std::sync::atomic::AtomicU64>,
}

impl AuthLog {
    /// Requests so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(std::sync::atomic::Ordering::Relaxed)
    }
}

async fn auth_any(
    State((base, log)): State<(String, AuthLog)>,
    method: axum::http::Method,
    uri: Uri,
    _headers: HeaderMap,
    body: Bytes,
) -> Response {
    log.requests
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = uri.path();
    if path.starts_with("/.well-known/oauth-protected-resource") {
        return axum::Json(
            json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}),
        )
        .into_response();
    }
    if path.starts_with("/.well-known/oauth-authorization-server")
        || path.starts_with("/.well-known/openid-configuration")
    {
        return axum::Json(json!({"issuer": base, "authorization_endpoint": format!("{base}/authorize"),
            "token_endpoint": format!("{base}/token"), "registration_endpoint": format!("{base}/register"),
            "response_types_supported": ["code"], "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"], "token_endpoint_auth_methods_supported": ["none"]}))
        .into_response();
    }
    if path == "/register" && method == axum::http::Method::POST {
        let mut client: Value = serde_json::from_slice(&body).unwrap_or_else(|_| json!({}));
        if let Some(map) = client.as_object_mut() {
            map.insert("client_id".into(), json!("fake-client-id"));
            map.insert("token_endpoint_auth_method".into(), json!("none"));
        } else {
            client = json!({"client_id": "fake-client-id", "token_endpoint_auth_method": "none"});
        }
        return (StatusCode::CREATED, axum::Json(client)).into_response();
    }
    if path == "/token" {
        return (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({"error": "invalid_grant"})),
        )
            .into_response();
    }
    (
        StatusCode::UNAUTHORIZED,
        [(
            header::WWW_AUTHENTICATE,
            format!("Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource\""),
        )],
        axum::Json(json!({"error": "invalid_token"})),
    )
        .into_response()
}

/// The OAuth server's routes, for a server reached at `base`
/// (`http://127.0.0.1:PORT`).
pub fn auth_router(base: &str, log: AuthLog) -> Router {
    Router::new()
        .fallback(auth_any)
        .with_state((base.to_owned(), log))
}

/// A running fake: its address; dropped, it stops.
#[derive(Debug)]
pub struct Running {
    /// Where it listens.
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Running {
    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn serve(listener: tokio::net::TcpListener, router: Router) -> Running {
    let addr = listener
        .local_addr()
        .expect("a bound listener has an address");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await;
    });
    Running {
        addr,
        stop: Some(stop),
    }
}

/// Starts the fake model on 127.0.0.1 (a free port).
pub async fn start_model(target: &str) -> (Running, ModelLog) {
    start_model_calling(target, json!({"timezone": "UTC"})).await
}

/// Starts the fake model on 127.0.0.1 (a free port), calling the target
/// with `arguments`.
pub async fn start_model_calling(target: &str, arguments: Value) -> (Running, ModelLog) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binding the fake model on 127.0.0.1");
    let log = ModelLog::default();
    (
        serve(
            listener,
            model_router_calling(target, arguments, log.clone()),
        )
        .await,
        log,
    )
}

/// Starts the OAuth server on 127.0.0.1 (a free port).
pub async fn start_auth() -> (Running, AuthLog) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binding the OAuth server on 127.0.0.1");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    let log = AuthLog::default();
    (serve(listener, auth_router(&base, log.clone())).await, log)
}
