//! The reference ACP agent, as a library so test fakes can reuse it with
//! deliberate misbehaviour (see [`Behaviour`]).
//!
//! At `session/new` (and `session/load`) it honours `mcpServers`: it connects
//! to each server with an rmcp client over stdio, streamable HTTP or legacy
//! SSE, and lists its tools. A prompt that names a listed tool makes it call
//! that tool with `{"text": <prompt>}` and report the result.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthMethod, AuthMethodAgent, AuthenticateRequest, AuthenticateResponse,
    ContentBlock, ContentChunk, Implementation, InitializeRequest, InitializeResponse,
    LoadSessionRequest, LoadSessionResponse, McpCapabilities, McpServer, NewSessionRequest,
    NewSessionResponse, PromptRequest, PromptResponse, SessionNotification, SessionUpdate,
    StopReason, TextContent,
};
use agent_client_protocol::{Agent, Stdio};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation as McpImplementation,
};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use tokio::sync::Mutex;

/// The agent's name in `initialize` and its MCP clientInfo.
pub const AGENT_NAME: &str = "tether-reference-agent";

/// Sends SIGKILL to this process.
unsafe fn libc_kill_self() {
    unsafe extern "C" {
        fn kill(pid: i32, sig: i32) -> i32;
    }
    const SIGKILL: i32 = 9;
    // SAFETY: kill(2) with our own pid and a valid signal number.
    unsafe {
        kill(std::process::id() as i32, SIGKILL);
    }
}

/// Where to misbehave, for test fakes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Crash {
    /// Exit before answering `initialize`.
    AtStart,
    /// Exit on `session/new`, without answering.
    AtSessionNew,
    /// Answer `session/new`, then exit with status 7 shortly after.
    AfterSessionNew,
    /// Answer `session/new`, then die of SIGKILL shortly after.
    KilledAfterSessionNew,
}

/// How the agent behaves; the default is the honest reference agent.
#[derive(Debug, Clone)]
pub struct Behaviour {
    /// Name in `initialize` and MCP clientInfo.
    pub name: String,
    /// Advertise `mcpCapabilities.http`.
    pub advertise_http: bool,
    /// Advertise `mcpCapabilities.sse`.
    pub advertise_sse: bool,
    /// Connect to the servers in `mcpServers` at all.
    pub connect: bool,
    /// List tools after connecting.
    pub list_tools: bool,
    /// Connect this long after answering `session/new` instead of before.
    pub connect_after: Option<Duration>,
    /// Refuse `session/new` with this message (after connecting, if it connects).
    pub fail_session_new: Option<String>,
    /// Exit abruptly.
    pub crash: Option<Crash>,
    /// Write `{pid, cwd_received, cwd_actual}` here at `session/new` (for tests).
    pub record_to: Option<std::path::PathBuf>,
    /// At each prompt, first ask the client for a write permission, a file
    /// write and a sentinel-tool permission, recording the answers next to
    /// `record_to` (for tests of the client's safety).
    pub ask_client: bool,
    /// Connect without the headers and environment the client gave, as a
    /// process that only found the port would (for tests of the endpoint's
    /// credential).
    pub drop_credentials: bool,
    /// Offer an `authenticate` method and refuse `session/new` with ACP's
    /// "authentication required" (`-32000`).
    pub require_auth: bool,
    /// Never answer `authenticate`.
    pub hang_authenticate: bool,
}

impl Default for Behaviour {
    fn default() -> Self {
        Behaviour {
            name: AGENT_NAME.into(),
            advertise_http: true,
            advertise_sse: true,
            connect: true,
            list_tools: true,
            connect_after: None,
            fail_session_new: None,
            crash: None,
            record_to: None,
            ask_client: false,
            drop_credentials: false,
            require_auth: false,
            hang_authenticate: false,
        }
    }
}

type McpClient = RunningService<RoleClient, ClientConfig>;

struct Connected {
    client: McpClient,
    tools: Vec<String>,
}

#[derive(Default)]
struct State {
    sessions: HashMap<String, Vec<Connected>>,
    counter: u64,
}

/// The server as given, or, to imitate an intruder, without its headers and env.
fn without_credentials(server: &McpServer) -> McpServer {
    match server {
        McpServer::Stdio(s) => {
            let mut s = s.clone();
            s.env.clear();
            McpServer::Stdio(s)
        }
        McpServer::Http(h) => {
            let mut h = h.clone();
            h.headers.clear();
            McpServer::Http(h)
        }
        McpServer::Sse(s) => {
            let mut s = s.clone();
            s.headers.clear();
            McpServer::Sse(s)
        }
        other => other.clone(),
    }
}

async fn connect_one(server: &McpServer, me: &str) -> Result<Connected, String> {
    let config = ClientConfig::new(
        ClientCapabilities::default(),
        McpImplementation::new(me, env!("CARGO_PKG_VERSION")),
    );
    let client = match server {
        McpServer::Stdio(s) => {
            let mut cmd = tokio::process::Command::new(&s.command);
            cmd.args(&s.args);
            for var in &s.env {
                cmd.env(&var.name, &var.value);
            }
            let transport = TokioChildProcess::new(cmd).map_err(|e| e.to_string())?;
            config.serve(transport).await.map_err(|e| e.to_string())?
        }
        McpServer::Http(h) => {
            // Every header the client configured goes with every request.
            let mut headers = HashMap::new();
            for header in &h.headers {
                let name = http::HeaderName::from_bytes(header.name.as_bytes())
                    .map_err(|_| format!("header {} is not a valid name", header.name))?;
                let value = http::HeaderValue::from_str(&header.value)
                    .map_err(|_| format!("header {} has an invalid value", header.name))?;
                headers.insert(name, value);
            }
            let transport = StreamableHttpClientTransport::from_config(
                StreamableHttpClientTransportConfig::with_uri(h.url.as_str())
                    .custom_headers(headers),
            );
            config.serve(transport).await.map_err(|e| e.to_string())?
        }
        McpServer::Sse(s) => {
            let headers: Vec<(String, String)> = s
                .headers
                .iter()
                .map(|h| (h.name.clone(), h.value.clone()))
                .collect();
            let transport =
                tether_mcp_client::sse::connect(&s.url, &headers, Duration::from_secs(10))
                    .await
                    .map_err(|e| e.to_string())?;
            config.serve(transport).await.map_err(|e| e.to_string())?
        }
        _ => return Err("unsupported MCP server type".into()),
    };
    Ok(Connected {
        client,
        tools: Vec::new(),
    })
}

async fn connect_all(servers: &[McpServer], behaviour: &Behaviour) -> Vec<Connected> {
    let mut connected = Vec::new();
    for server in servers {
        let server = if behaviour.drop_credentials {
            &without_credentials(server)
        } else {
            server
        };
        match connect_one(server, &behaviour.name).await {
            Ok(mut c) => {
                if behaviour.list_tools {
                    match c.client.list_all_tools().await {
                        Ok(tools) => {
                            c.tools = tools.into_iter().map(|t| t.name.to_string()).collect()
                        }
                        Err(err) => eprintln!("{}: tools/list failed: {err}", behaviour.name),
                    }
                }
                connected.push(c);
            }
            Err(err) => eprintln!("{}: cannot connect an MCP server: {err}", behaviour.name),
        }
    }
    connected
}

/// Opens a session's MCP connections per the behaviour; returns the session id.
async fn open_session(
    state: &Arc<Mutex<State>>,
    behaviour: &Arc<Behaviour>,
    servers: Vec<McpServer>,
    id: Option<String>,
) -> String {
    let id = {
        let mut s = state.lock().await;
        s.counter += 1;
        id.unwrap_or_else(|| format!("ref-session-{}", s.counter))
    };
    if !behaviour.connect {
        return id;
    }
    match behaviour.connect_after {
        None => {
            let connected = connect_all(&servers, behaviour).await;
            state.lock().await.sessions.insert(id.clone(), connected);
        }
        Some(delay) => {
            let (state, behaviour, id) = (Arc::clone(state), Arc::clone(behaviour), id.clone());
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                let connected = connect_all(&servers, &behaviour).await;
                state.lock().await.sessions.insert(id, connected);
            });
        }
    }
    id
}

/// Calls the first listed tool the prompt names; returns what to say.
async fn answer_prompt(state: &Arc<Mutex<State>>, session: &str, text: &str) -> String {
    let state = state.lock().await;
    let Some(connected) = state.sessions.get(session) else {
        return "No MCP servers are connected in this session.".into();
    };
    for c in connected {
        if let Some(tool) = c.tools.iter().find(|t| text.contains(t.as_str())) {
            let mut args = serde_json::Map::new();
            args.insert("text".into(), text.into());
            let call = CallToolRequestParams::new(tool.clone()).with_arguments(args);
            return match c.client.call_tool(call).await {
                Ok(result) => {
                    let out: Vec<String> = result
                        .content
                        .iter()
                        .filter_map(|block| block.as_text().map(|t| t.text.clone()))
                        .collect();
                    format!("Called {tool}: {}", out.join(" "))
                }
                Err(err) => format!("Calling {tool} failed: {err}"),
            };
        }
    }
    let all: Vec<&str> = connected
        .iter()
        .flat_map(|c| c.tools.iter().map(String::as_str))
        .collect();
    format!("No tool named in the prompt. Tools: {}", all.join(", "))
}

fn prompt_text(request: &PromptRequest) -> String {
    request
        .prompt
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Asks the client for a write permission, a file write and a sentinel-tool
/// permission; returns what it answered.
async fn ask_client(
    cx: &agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Client>,
    request: &PromptRequest,
) -> serde_json::Value {
    use agent_client_protocol::v1::schema::{
        PermissionOption, PermissionOptionKind, RequestPermissionRequest, ToolCallUpdate,
        ToolCallUpdateFields, ToolKind, WriteTextFileRequest,
    };
    let options = || {
        vec![
            PermissionOption::new("allow", "Allow once", PermissionOptionKind::AllowOnce),
            PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
        ]
    };
    let ask = |id: &str, title: &str, kind: ToolKind| {
        RequestPermissionRequest::new(
            request.session_id.clone(),
            ToolCallUpdate::new(
                id.to_owned(),
                ToolCallUpdateFields::new()
                    .title(title.to_owned())
                    .kind(kind),
            ),
            options(),
        )
    };
    let write = cx
        .send_request(ask("tc-write", "Write ~/.bashrc", ToolKind::Edit))
        .block_task()
        .await;
    let fs = cx
        .send_request(WriteTextFileRequest::new(
            request.session_id.clone(),
            std::env::current_dir()
                .unwrap_or_default()
                .join("written-by-agent.txt"),
            "x",
        ))
        .block_task()
        .await;
    let sentinel = cx
        .send_request(ask(
            "tc-sentinel",
            "mcp__tether-sentinel__sentinel_echo",
            ToolKind::Other,
        ))
        .block_task()
        .await;
    serde_json::json!({
        "write_permission": write.map(|r| serde_json::to_value(r.outcome).unwrap_or_default()).map_err(|e| e.message),
        "fs_write": fs.map(|_| "ok").map_err(|e| e.message),
        "sentinel_permission": sentinel.map(|r| serde_json::to_value(r.outcome).unwrap_or_default()).map_err(|e| e.message),
    })
}

/// Serves ACP on stdio until the client goes away.
pub async fn run(behaviour: Behaviour) -> agent_client_protocol::Result<()> {
    if behaviour.crash == Some(Crash::AtStart) {
        eprintln!("{}: crashing at start, as asked", behaviour.name);
        std::process::exit(3);
    }
    let behaviour = Arc::new(behaviour);
    let state: Arc<Mutex<State>> = Arc::default();
    let (b_init, b_new, b_load) = (
        Arc::clone(&behaviour),
        Arc::clone(&behaviour),
        Arc::clone(&behaviour),
    );
    let (s_new, s_load, s_prompt) = (Arc::clone(&state), Arc::clone(&state), Arc::clone(&state));
    let b_prompt = Arc::clone(&behaviour);
    let b_auth = Arc::clone(&behaviour);
    Agent
        .v1()
        .name(AGENT_NAME)
        .on_receive_request(
            async move |request: InitializeRequest, responder, _cx| {
                let caps = AgentCapabilities::new()
                    .load_session(true)
                    .mcp_capabilities(
                        McpCapabilities::new()
                            .http(b_init.advertise_http)
                            .sse(b_init.advertise_sse),
                    );
                let mut response = InitializeResponse::new(request.protocol_version)
                    .agent_capabilities(caps)
                    .agent_info(Implementation::new(
                        b_init.name.clone(),
                        env!("CARGO_PKG_VERSION"),
                    ));
                if b_init.require_auth || b_init.hang_authenticate {
                    response = response.auth_methods(vec![AuthMethod::Agent(
                        AuthMethodAgent::new("login", "Log in"),
                    )]);
                }
                responder.respond(response)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_request: AuthenticateRequest, responder, _cx| {
                if b_auth.hang_authenticate {
                    // Keep the request unanswered (the responder is never used).
                    std::mem::forget(responder);
                    return Ok(());
                }
                responder.respond(AuthenticateResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest, responder, _cx| {
                if let Some(path) = &b_new.record_to {
                    let record = serde_json::json!({
                        "pid": std::process::id(),
                        "cwd_received": request.cwd,
                        "cwd_actual": std::env::current_dir().ok(),
                        "home": std::env::var("HOME").ok(),
                    });
                    let _ = std::fs::write(path, record.to_string());
                }
                if b_new.crash == Some(Crash::AtSessionNew) {
                    eprintln!("{}: crashing at session/new, as asked", b_new.name);
                    std::process::exit(3);
                }
                if b_new.require_auth {
                    return responder
                        .respond_with_error(agent_client_protocol::Error::auth_required());
                }
                let id = open_session(&s_new, &b_new, request.mcp_servers, None).await;
                if let Some(crash @ (Crash::AfterSessionNew | Crash::KilledAfterSessionNew)) =
                    b_new.crash
                {
                    let name = b_new.name.clone();
                    std::thread::spawn(move || {
                        std::thread::sleep(std::time::Duration::from_millis(300));
                        eprintln!("{name}: exiting after session/new, as asked");
                        if crash == Crash::KilledAfterSessionNew {
                            // SAFETY: raising a signal on this process.
                            unsafe { libc_kill_self() };
                        }
                        std::process::exit(7);
                    });
                }
                match &b_new.fail_session_new {
                    Some(message) => responder.respond_with_error(
                        agent_client_protocol::Error::new(-32603, message.clone()),
                    ),
                    None => responder.respond(NewSessionResponse::new(id)),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest, responder, _cx| {
                let id = request.session_id.0.to_string();
                open_session(&s_load, &b_load, request.mcp_servers, Some(id)).await;
                responder.respond(LoadSessionResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, cx| {
                if b_prompt.ask_client {
                    // Requests to the client must not be awaited inside this handler.
                    let (cx2, b, s) = (cx.clone(), Arc::clone(&b_prompt), Arc::clone(&s_prompt));
                    tokio::spawn(async move {
                        let answers = ask_client(&cx2, &request).await;
                        if let Some(path) = &b.record_to {
                            let _ = std::fs::write(
                                path.with_extension("answers.json"),
                                answers.to_string(),
                            );
                        }
                        let session = request.session_id.0.to_string();
                        let text = prompt_text(&request);
                        let answer = answer_prompt(&s, &session, &text).await;
                        let _ = cx2.send_notification(SessionNotification::new(
                            request.session_id.clone(),
                            SessionUpdate::AgentMessageChunk(ContentChunk::new(
                                ContentBlock::Text(TextContent::new(answer)),
                            )),
                        ));
                        let _ = responder.respond(PromptResponse::new(StopReason::EndTurn));
                    });
                    return Ok(());
                }
                let text = prompt_text(&request);
                let session = request.session_id.0.to_string();
                let answer = answer_prompt(&s_prompt, &session, &text).await;
                cx.send_notification(SessionNotification::new(
                    request.session_id.clone(),
                    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(
                        TextContent::new(answer),
                    ))),
                ))?;
                responder.respond(PromptResponse::new(StopReason::EndTurn))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_to(Stdio::new())
        .await
}
