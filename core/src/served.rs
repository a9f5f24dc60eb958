//! What an observed MCP server served, request by request: the metadata an
//! exporter (OpenTelemetry spans and duration histograms) needs, and nothing
//! a request or response carried as payload.
//!
//! The observed endpoint (and, later, the relay) builds one [`ServedRequest`]
//! per request it answers and one [`ServedSession`] per session it closes,
//! and hands them to a [`ServedObserver`]. The observer must return at once:
//! it is called on the MCP request path, so it queues (bounded) or drops.
//!
//! Its invariants are written once, in ARCHITECTURE.md (`core/`), each
//! with the test that checks it.

use std::borrow::Cow;
use std::sync::Arc;

use crate::owner::{AttemptId, SessionId};
use crate::vocab::Transport;

/// The longest string any field keeps; longer values are dropped, not cut,
/// so a truncated id never masquerades as a real one.
pub const MAX_FIELD: usize = 256;

/// Keeps `value` if it is within [`MAX_FIELD`] bytes.
pub fn bounded(value: impl Into<String>) -> Option<String> {
    let value = value.into();
    (value.len() <= MAX_FIELD).then_some(value)
}

/// MCP protocol versions, as `'static` words (no allocation per request).
pub const KNOWN_PROTOCOL_VERSIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// A protocol version as a `'static` word when it is a known one, else
/// bounded and owned.
pub fn protocol_word(version: &str) -> Option<Cow<'static, str>> {
    match KNOWN_PROTOCOL_VERSIONS.iter().find(|v| **v == version) {
        Some(known) => Some(Cow::Borrowed(known)),
        None => bounded(version).map(Cow::Owned),
    }
}

/// How a served request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServedOutcome {
    /// A result was returned (for tools/call: one without `isError`).
    Ok,
    /// A tools/call result with `isError: true`.
    ToolError,
    /// A JSON-RPC error response with this code.
    Error(i32),
}

/// The W3C trace context a client sent in `params._meta` (unprefixed keys),
/// so the server's span can join the client's trace. Each value is bounded;
/// an exporter validates it before use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceContext {
    /// `traceparent`.
    pub traceparent: Option<String>,
    /// `tracestate`.
    pub tracestate: Option<String>,
    /// `baggage` (propagated into the context, never exported as data).
    pub baggage: Option<String>,
}

impl TraceContext {
    /// True when the client sent none of the three.
    pub fn is_empty(&self) -> bool {
        self.traceparent.is_none() && self.tracestate.is_none() && self.baggage.is_none()
    }
}

/// Which attempt a served request belonged to, when one was bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedOwner {
    /// Backend-owned session.
    pub session_id: SessionId,
    /// The attempt.
    pub attempt_id: AttemptId,
}

/// A JSON-RPC request id as the client sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequestIdent {
    /// A number.
    Number(i64),
    /// A string (bounded by [`MAX_FIELD`]).
    Text(String),
}

impl std::fmt::Display for RequestIdent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestIdent::Number(n) => write!(f, "{n}"),
            RequestIdent::Text(s) => f.write_str(s),
        }
    }
}

/// The MCP server's side of one request. Built on the request path, so the
/// common case allocates little: shared names are `Arc`s and well-known
/// words are `'static`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedRequest {
    /// The server's name in the attempt's plan.
    pub server: Arc<str>,
    /// The JSON-RPC method (`tools/call`, `initialize`, …).
    pub method: Cow<'static, str>,
    /// For tools/call: the tool's name.
    pub tool: Option<String>,
    /// The JSON-RPC id as sent (`None` when absent or null).
    pub request_id: Option<RequestIdent>,
    /// The MCP protocol version in effect for this request, when known.
    pub protocol_version: Option<Cow<'static, str>>,
    /// The legacy-era session (the `Mcp-Session-Id`, or the SSE session).
    /// Always `None` for 2026-07-28 stateless requests, which have no session.
    pub session_id: Option<Arc<str>>,
    /// The transport the client used to reach the server.
    pub transport: Transport,
    /// The peer's address (an IP literal), for socket transports.
    pub client_address: Option<Arc<str>>,
    /// The peer's port, for socket transports.
    pub client_port: Option<u16>,
    /// When the server received it, nanoseconds since the Unix epoch.
    pub start_unix_nanos: u64,
    /// How long the server took to answer, in nanoseconds.
    pub duration_nanos: u64,
    /// How it ended.
    pub outcome: ServedOutcome,
    /// The client's trace context, when it sent one.
    pub trace: TraceContext,
    /// The attempt the request was credited to, when one was bound.
    pub owner: Option<Arc<ServedOwner>>,
}

/// One legacy-era session (or stdio connection) of an observed server,
/// reported when it closes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedSession {
    /// The server's name in the attempt's plan.
    pub server: Arc<str>,
    /// The transport.
    pub transport: Transport,
    /// The protocol version negotiated, when known.
    pub protocol_version: Option<Cow<'static, str>>,
    /// How long it was open, in nanoseconds.
    pub duration_nanos: u64,
    /// The attempt it was credited to, when one was bound.
    pub owner: Option<Arc<ServedOwner>>,
}

/// What a served-request observer receives.
// Request is the hot variant; boxing it would cost an allocation per request.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Served {
    /// One request answered.
    Request(ServedRequest),
    /// One session closed.
    SessionClosed(ServedSession),
}

/// Receives served requests. Called on the MCP request path: it must not
/// block, allocate unboundedly or fail; queue with `try_send` or drop.
pub trait ServedObserver: Send + Sync {
    /// One request answered or one session closed.
    fn served(&self, event: Served);
}

/// A shared observer.
pub type SharedServedObserver = Arc<dyn ServedObserver>;

/// JSON-RPC codes that describe the client's request, not a server failure:
/// parse error, invalid request, method not found, invalid params, and MCP's
/// resource not found. An exporter marks these as errors on the request
/// (`error.type`) but not as a failed span.
pub const CLIENT_ERROR_CODES: [i32; 5] = [-32700, -32600, -32601, -32602, -32002];

impl ServedOutcome {
    /// True when the server itself failed (a span status of ERROR).
    pub fn is_server_error(self) -> bool {
        match self {
            ServedOutcome::Ok => false,
            ServedOutcome::ToolError => true,
            ServedOutcome::Error(code) => !CLIENT_ERROR_CODES.contains(&code),
        }
    }

    /// The conventions' `error.type`: the code as a string, or `tool_error`.
    pub fn error_type(self) -> Option<String> {
        match self {
            ServedOutcome::Ok => None,
            ServedOutcome::ToolError => Some("tool_error".to_owned()),
            ServedOutcome::Error(code) => Some(code.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_side_codes_are_not_server_errors() {
        for code in CLIENT_ERROR_CODES {
            assert!(!ServedOutcome::Error(code).is_server_error(), "{code}");
            assert_eq!(
                ServedOutcome::Error(code).error_type(),
                Some(code.to_string())
            );
        }
        assert!(ServedOutcome::Error(-32603).is_server_error());
        assert!(ServedOutcome::Error(-32000).is_server_error());
        assert!(ServedOutcome::ToolError.is_server_error());
        assert_eq!(
            ServedOutcome::ToolError.error_type().as_deref(),
            Some("tool_error")
        );
        assert!(!ServedOutcome::Ok.is_server_error());
        assert_eq!(ServedOutcome::Ok.error_type(), None);
    }

    #[test]
    fn over_long_fields_are_dropped_not_cut() {
        assert_eq!(bounded("abc").as_deref(), Some("abc"));
        assert_eq!(bounded("x".repeat(MAX_FIELD + 1)), None);
        assert!(bounded("x".repeat(MAX_FIELD)).is_some());
    }
}
