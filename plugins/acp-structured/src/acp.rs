//! The ACP host side: line transport over the agent's stdio (bounded, with an
//! optional raw-frame log), `mcpServers` from a plan, and safe answers to
//! agent-initiated requests.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    EnvVariable, HttpHeader, LoadSessionRequest, McpServer, McpServerHttp, McpServerSse,
    McpServerStdio, NewSessionRequest, PermissionOptionKind, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome,
};
use agent_client_protocol::{Agent, Lines};
use futures::{Sink, Stream};
use tether_core::model::Evidence;
use tether_core::sanitize::Scrubber;
use tether_core::vocab::{EvidenceKind, ReasonCode, Trigger};
use tether_core::{AgentCapabilities, Endpoint, Plan};
use tether_hub::{AttemptHandle, AttemptRequest, Hub, HubError};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};

/// The largest single ACP frame accepted from an agent.
pub const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// What an agent advertised in its `initialize` answer, as the core reads it.
pub fn capabilities_of(
    init: &agent_client_protocol::v1::schema::InitializeResponse,
) -> AgentCapabilities {
    let caps = &init.agent_capabilities;
    AgentCapabilities::new(
        Some(caps.mcp_capabilities.http),
        Some(caps.mcp_capabilities.sse),
        Some(caps.load_session),
    )
}

/// The ACP `mcpServers` entries for every delivered server of a plan.
pub fn mcp_servers(plan: &Plan) -> Vec<McpServer> {
    plan.delivered()
        .map(|(planned, endpoint)| {
            let name = planned.spec.name.clone();
            match endpoint {
                Endpoint::Stdio {
                    command, args, env, ..
                } => McpServer::Stdio(
                    McpServerStdio::new(name, command.clone())
                        .args(args.clone())
                        .env(
                            env.iter()
                                .map(|kv| EnvVariable::new(kv.name.clone(), kv.value.clone()))
                                .collect(),
                        ),
                ),
                Endpoint::Http { url, headers } => McpServer::Http(
                    McpServerHttp::new(name, url.clone()).headers(http_headers(headers)),
                ),
                Endpoint::Sse { url, headers } => McpServer::Sse(
                    McpServerSse::new(name, url.clone()).headers(http_headers(headers)),
                ),
            }
        })
        .collect()
}

fn http_headers(headers: &[tether_core::KeyValue]) -> Vec<HttpHeader> {
    headers
        .iter()
        .map(|kv| HttpHeader::new(kv.name.clone(), kv.value.clone()))
        .collect()
}

/// Writes raw ACP frames as JSONL: an explicit developer choice, never a default.
#[derive(Clone)]
pub struct FrameLog {
    out: Arc<Mutex<BufWriter<File>>>,
    /// The secrets replaced by `[redacted]` before a frame is written.
    redact: Scrubber,
}

impl std::fmt::Debug for FrameLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FrameLog")
    }
}

impl FrameLog {
    /// Creates (truncates) the file.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        Ok(FrameLog {
            out: Arc::new(Mutex::new(BufWriter::new(File::create(path)?))),
            redact: Scrubber::new(),
        })
    }

    /// Replaces each of `secrets` (credentials, header and env values the
    /// frames carry) with `[redacted]` in every frame written.
    pub fn redacting(mut self, secrets: impl IntoIterator<Item = String>) -> Self {
        self.redact = Scrubber::new().with_secrets(secrets);
        self
    }

    /// Records one frame with its direction (`in` from the agent, `out` to it).
    pub fn record(&self, direction: &str, line: &str) {
        let line = self.redact.redact_known(line);
        let frame = serde_json::from_str::<serde_json::Value>(&line)
            .unwrap_or(serde_json::Value::String(line));
        let entry =
            serde_json::json!({"at": tether_hub::now().0, "dir": direction, "frame": frame});
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        let _ = writeln!(out, "{entry}");
    }

    /// Flushes to disk.
    pub fn flush(&self) {
        let _ = self.out.lock().unwrap_or_else(|p| p.into_inner()).flush();
    }
}

/// A bounded line transport over the agent's stdio.
pub fn stdio_lines(
    stdin: ChildStdin,
    stdout: ChildStdout,
    log: Option<FrameLog>,
) -> Lines<
    impl Sink<String, Error = std::io::Error> + Send + 'static,
    impl Stream<Item = std::io::Result<String>> + Send + 'static,
> {
    let out_log = log.clone();
    let outgoing = futures::sink::unfold(stdin, move |mut stdin, line: String| {
        let log = out_log.clone();
        async move {
            if let Some(log) = &log {
                log.record("out", &line);
            }
            stdin.write_all(line.as_bytes()).await?;
            stdin.write_all(b"\n").await?;
            stdin.flush().await?;
            Ok::<_, std::io::Error>(stdin)
        }
    });
    let incoming = futures::stream::unfold(
        (BufReader::new(stdout), log),
        |(mut reader, log)| async move {
            let mut buf = Vec::new();
            loop {
                buf.clear();
                let read = (&mut reader)
                    .take(MAX_FRAME_BYTES as u64 + 1)
                    .read_until(b'\n', &mut buf)
                    .await;
                match read {
                    Ok(0) => return None,
                    Ok(_) if buf.len() > MAX_FRAME_BYTES => {
                        let err = std::io::Error::other(format!(
                            "the agent sent a frame over {MAX_FRAME_BYTES} bytes"
                        ));
                        return Some((Err(err), (reader, log)));
                    }
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&buf).trim_end().to_owned();
                        if line.is_empty() {
                            continue;
                        }
                        if let Some(log) = &log {
                            log.record("in", &line);
                        }
                        return Some((Ok(line), (reader, log)));
                    }
                    Err(err) => return Some((Err(err), (reader, log))),
                }
            }
        },
    );
    Lines::new(outgoing, Box::pin(incoming))
}

use tokio::io::AsyncReadExt as _;

/// Answers a permission request: allow once only for a tool named in
/// `allowed_tools` (the probe's sentinel), reject everything else.
pub fn answer_permission(
    request: &RequestPermissionRequest,
    allowed_tools: &[&str],
) -> RequestPermissionResponse {
    let described = serde_json::to_string(&request.tool_call).unwrap_or_default();
    let harmless = allowed_tools.iter().any(|tool| described.contains(tool));
    let wanted: &[PermissionOptionKind] = if harmless {
        &[PermissionOptionKind::AllowOnce]
    } else {
        &[
            PermissionOptionKind::RejectOnce,
            PermissionOptionKind::RejectAlways,
        ]
    };
    let choice = wanted.iter().find_map(|kind| {
        request
            .options
            .iter()
            .find(|o| o.kind == *kind)
            .map(|o| o.option_id.clone())
    });
    match choice {
        Some(id) => RequestPermissionResponse::new(RequestPermissionOutcome::Selected(
            SelectedPermissionOutcome::new(id),
        )),
        None => RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_core::observer::plan;
    use tether_core::vocab::ServerSource;
    use tether_core::{
        AgentCapabilities, DriveMode, KeyValue, PlanContext, ServerSpec, TransportObserver,
    };

    #[test]
    fn mcp_servers_follow_the_plan_and_skip_filtered_ones() {
        let servers = vec![
            ServerSpec::new(
                "local",
                ServerSource::Profile,
                Endpoint::Stdio {
                    command: "/bin/srv".into(),
                    args: vec!["-v".into()],
                    env: vec![KeyValue::new("K", "V")],
                    cwd: None,
                },
            ),
            ServerSpec::new(
                "remote",
                ServerSource::Profile,
                Endpoint::Http {
                    url: "http://127.0.0.1:1/mcp".into(),
                    headers: vec![KeyValue::new("Authorization", "Bearer t")],
                },
            ),
            ServerSpec::new(
                "legacy",
                ServerSource::Profile,
                Endpoint::Sse {
                    url: "http://127.0.0.1:1/sse".into(),
                    headers: vec![],
                },
            ),
        ];
        let ctx = PlanContext {
            agent_kind: "any".into(),
            drive_mode: DriveMode::Acp,
            capabilities: AgentCapabilities::new(Some(true), Some(false), None),
            strict: false,
        };
        let plugin: &dyn TransportObserver = &crate::AcpStructured;
        let p = plan(Some(plugin), &servers, &ctx);
        let entries = mcp_servers(&p);
        assert_eq!(entries.len(), 2);
        let json = serde_json::to_value(&entries).expect("json");
        assert_eq!(json[0]["name"], "local");
        assert_eq!(json[0]["command"], "/bin/srv");
        assert_eq!(json[0]["env"][0]["name"], "K");
        assert_eq!(json[1]["type"], "http");
        assert_eq!(json[1]["headers"][0]["value"], "Bearer t");
    }
}

// === Session delivery (session/new, session/load, reset) ===

/// Which ACP session request delivers the servers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionRequestKind {
    /// `session/new`.
    New,
    /// `session/load` of the agent's session `acp_session_id`.
    Load {
        /// The agent's session id to load.
        acp_session_id: String,
    },
    /// A reset: a fresh `session/new` that supersedes the session's attempt.
    Reset,
}

/// The agent's answer to a session request, as published to the attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionOutcome {
    /// Whether the agent accepted the session.
    pub accepted: bool,
    /// The agent's session id (new, or the one loaded).
    pub acp_session_id: Option<String>,
    /// Why not, when it refused: reason and unsanitized message.
    pub error: Option<(ReasonCode, String)>,
}

/// ACP's "authentication required" error code.
const ACP_AUTH_REQUIRED: i32 = -32000;

/// The agent's refusal: whether it asked for authentication (ACP `-32000`),
/// and its message.
#[derive(Debug, Clone)]
struct Refusal {
    auth_required: bool,
    message: String,
}

impl From<agent_client_protocol::Error> for Refusal {
    fn from(e: agent_client_protocol::Error) -> Self {
        Refusal {
            auth_required: i32::from(e.code) == ACP_AUTH_REQUIRED,
            message: e.message,
        }
    }
}

type SessionResponse =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Option<String>, Refusal>> + Send>>;

/// A session request in flight, bound to the attempt begun for it.
pub struct SessionDelivery {
    /// The attempt (plan and sink).
    pub handle: AttemptHandle,
    response: SessionResponse,
    kind: SessionRequestKind,
    delivered: Vec<String>,
}

impl std::fmt::Debug for SessionDelivery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionDelivery")
            .field("attempt_id", &self.handle.attempt_id)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// Begins a new attempt (superseding the session's current one), lets
/// `before_send` bind observers to the new sink, and sends the session request
/// with the plan's `mcpServers`. What the plan delivers is recorded as
/// `delivered` only once the agent accepts the session ([`SessionDelivery::settle`]):
/// a server offered to a session that never existed reached nothing.
///
/// The trigger comes from `kind` unless the request already says `probe`.
pub fn deliver_session(
    cx: &ConnectionTo<Agent>,
    hub: &Hub,
    mut request: AttemptRequest,
    kind: SessionRequestKind,
    cwd: &Path,
    before_send: impl FnOnce(&AttemptHandle),
) -> Result<SessionDelivery, HubError> {
    if request.trigger != Trigger::Probe {
        request.trigger = match kind {
            SessionRequestKind::New => Trigger::SessionNew,
            SessionRequestKind::Load { .. } => Trigger::SessionLoad,
            SessionRequestKind::Reset => Trigger::SessionReset,
        };
    }
    let handle = hub.begin_attempt(request)?;
    let servers = mcp_servers(&handle.plan);
    let delivered: Vec<String> = handle
        .plan
        .delivered()
        .map(|(p, _)| p.spec.name.clone())
        .collect();
    before_send(&handle);
    let response: SessionResponse = match &kind {
        SessionRequestKind::New | SessionRequestKind::Reset => {
            let sent = cx
                .send_request(NewSessionRequest::new(cwd.to_path_buf()).mcp_servers(servers))
                .block_task();
            Box::pin(async move {
                sent.await
                    .map(|r| Some(r.session_id.0.to_string()))
                    .map_err(Refusal::from)
            })
        }
        SessionRequestKind::Load { acp_session_id } => {
            let id = acp_session_id.clone();
            let sent = cx
                .send_request(
                    LoadSessionRequest::new(id.clone(), cwd.to_path_buf()).mcp_servers(servers),
                )
                .block_task();
            Box::pin(async move { sent.await.map(|_| Some(id)).map_err(Refusal::from) })
        }
    };
    Ok(SessionDelivery {
        handle,
        response,
        kind,
        delivered,
    })
}

impl SessionDelivery {
    /// Awaits the agent's answer. Accepted: publishes `delivered` for what the
    /// plan delivers, then `session_accepted`. Refused: an explicit error
    /// (report-level, unless the message names a delivered server; reason
    /// `auth_required` for ACP's `-32000`), and every delivered server is
    /// recorded `unavailable` for that reason: it reached no session. Contact
    /// evidence the agent produced before refusing still stands.
    pub async fn settle(&mut self) -> SessionOutcome {
        let result = (&mut self.response).await;
        let sink = &self.handle.sink;
        match result {
            Ok(id) => {
                for name in &self.delivered {
                    let _ = sink.publish(
                        Evidence::new(EvidenceKind::Delivered, tether_hub::now())
                            .server(name.clone()),
                    );
                }
                let mut ev = Evidence::new(EvidenceKind::SessionAccepted, tether_hub::now());
                if let Some(id) = &id {
                    ev = ev.acp_session(id.clone());
                }
                let _ = sink.publish(ev);
                SessionOutcome {
                    accepted: true,
                    acp_session_id: id,
                    error: None,
                }
            }
            Err(refusal) => {
                let what = match self.kind {
                    SessionRequestKind::Load { .. } => "session/load",
                    _ => "session/new",
                };
                let (reason, summary) = if refusal.auth_required {
                    (
                        ReasonCode::AuthRequired,
                        format!(
                            "the agent requires authentication before {what} (ACP -32000): {}",
                            refusal.message
                        ),
                    )
                } else {
                    let reason = match self.kind {
                        SessionRequestKind::Load { .. } => ReasonCode::SessionLoadFailed,
                        _ => ReasonCode::SessionNewFailed,
                    };
                    (reason, format!("{what} failed: {}", refusal.message))
                };
                let named = self
                    .delivered
                    .iter()
                    .find(|n| refusal.message.contains(n.as_str()))
                    .cloned();
                let mut ev = Evidence::new(EvidenceKind::ExplicitError, tether_hub::now())
                    .reason(reason.clone(), Some(summary.clone()));
                if let Some(name) = &named {
                    ev = ev.server(name.clone());
                }
                let _ = sink.publish(ev);
                for name in self.delivered.iter().filter(|n| Some(*n) != named.as_ref()) {
                    let _ = sink.publish(
                        Evidence::new(EvidenceKind::Unavailable, tether_hub::now())
                            .server(name.clone())
                            .reason(
                                reason.clone(),
                                Some(format!(
                                    "the agent refused {what}; the server reached no session"
                                )),
                            ),
                    );
                }
                SessionOutcome {
                    accepted: false,
                    acp_session_id: None,
                    error: Some((reason, summary)),
                }
            }
        }
    }
}
