//! Attribute, metric and event names, defined here on purpose.
//!
//! The MCP names follow the OpenTelemetry semantic conventions for MCP, which
//! now live in `open-telemetry/semantic-conventions-genai`, `model/mcp/`
//! (`registry.yaml`, `spans.yaml`, `metrics.yaml`; stability: development).
//! The `mcp.*` constants in the Rust `opentelemetry-semantic-conventions`
//! crate are deprecated, so Tether does not depend on them. General names
//! (`network.*`, `client.*`, `error.type`, `jsonrpc.request.id`) come from
//! the main conventions' registry.
//!
//! Tether's own names live under `tether.` and are documented in
//! `docs/OPENTELEMETRY.md`.

// === MCP (semantic-conventions-genai, model/mcp) ===

/// The JSON-RPC method (`tools/call`, `initialize`, …). Required on MCP spans.
pub const MCP_METHOD_NAME: &str = "mcp.method.name";
/// The MCP protocol version of the request.
pub const MCP_PROTOCOL_VERSION: &str = "mcp.protocol.version";
/// The MCP session id; set for legacy-era sessions only (never for 2026-07-28
/// stateless requests, which have no session).
pub const MCP_SESSION_ID: &str = "mcp.session.id";
/// Server operation duration histogram (unit `s`).
pub const MCP_SERVER_OPERATION_DURATION: &str = "mcp.server.operation.duration";
/// Server session duration histogram (unit `s`).
pub const MCP_SERVER_SESSION_DURATION: &str = "mcp.server.session.duration";

// === GenAI (semantic-conventions-genai, model/gen-ai) ===

/// The tool's name, for tools/call.
pub const GEN_AI_TOOL_NAME: &str = "gen_ai.tool.name";
/// The operation; `execute_tool` for tools/call.
pub const GEN_AI_OPERATION_NAME: &str = "gen_ai.operation.name";
/// The value of [`GEN_AI_OPERATION_NAME`] for tool calls.
pub const EXECUTE_TOOL: &str = "execute_tool";

// === General registry ===

/// The JSON-RPC request id (absent when the id is null).
pub const JSONRPC_REQUEST_ID: &str = "jsonrpc.request.id";
/// `pipe` (stdio) or `tcp` (HTTP, SSE).
pub const NETWORK_TRANSPORT: &str = "network.transport";
/// `http` over HTTP and SSE.
pub const NETWORK_PROTOCOL_NAME: &str = "network.protocol.name";
/// The client's address.
pub const CLIENT_ADDRESS: &str = "client.address";
/// The client's port.
pub const CLIENT_PORT: &str = "client.port";
/// The JSON-RPC error code as a string, or `tool_error`.
pub const ERROR_TYPE: &str = "error.type";

/// The conventions' explicit bucket advice for both MCP duration histograms.
pub const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

// === Tether's own (documented in docs/OPENTELEMETRY.md) ===

/// Spans and logs: the server's name in the attempt's plan.
pub const TETHER_SERVER_NAME: &str = "tether.server.name";
/// Spans and logs (never metrics): the backend's task id.
pub const TETHER_TASK_ID: &str = "tether.task.id";
/// Spans and logs (never metrics): the backend's session id.
pub const TETHER_SESSION_ID: &str = "tether.session.id";
/// Logs (never metrics): the backend's execution id.
pub const TETHER_EXECUTION_ID: &str = "tether.execution.id";
/// Spans and logs (never metrics): the attempt id.
pub const TETHER_ATTEMPT_ID: &str = "tether.attempt.id";
/// The agent kind (`claude-agent`, `codex`, …): low cardinality.
pub const TETHER_AGENT_KIND: &str = "tether.agent.kind";
/// A row's display status (`active`, `failed`, …).
pub const TETHER_DISPLAY_STATUS: &str = "tether.display_status";
/// A stable reason code (`none` on metrics when there is none).
pub const TETHER_REASON_CODE: &str = "tether.reason_code";
/// What started an attempt (`session_new`, `probe`, …).
pub const TETHER_TRIGGER: &str = "tether.trigger";
/// Where evidence was dropped: `hub` (an attempt's sink queue was full) or
/// `export` (the exporter's own queue was full).
pub const TETHER_DROP_SITE: &str = "tether.drop.site";
/// A probe verdict (`active`, `failed`, …).
pub const TETHER_PROBE_VERDICT: &str = "tether.probe.verdict";

/// Counter: server rows entering a display status.
pub const TETHER_SERVER_STATUS: &str = "tether.server.status";
/// Counter: attempts started.
pub const TETHER_ATTEMPTS: &str = "tether.attempts";
/// Counter: evidence dropped.
pub const TETHER_EVIDENCE_DROPPED: &str = "tether.evidence.dropped";
/// Counter: evidence that named a server which is no row of its attempt
/// (counted in the attempt's `unattributed_evidence`, never applied).
pub const TETHER_EVIDENCE_UNATTRIBUTED: &str = "tether.evidence.unattributed";
/// Counter: probe verdicts.
pub const TETHER_PROBE_VERDICTS: &str = "tether.probe.verdicts";
/// Counter: store writes that failed (each retried).
pub const TETHER_STORE_WRITE_FAILURES: &str = "tether.store.write.failures";
/// Counter: store writes refused as stale (another writer held a newer revision).
pub const TETHER_STORE_WRITE_STALE: &str = "tether.store.write.stale";
/// Gauge: sessions whose stored row is behind because their latest write failed.
pub const TETHER_STORE_SESSIONS_BEHIND: &str = "tether.store.sessions.behind";

/// The event name of each accepted evidence log record.
pub const TETHER_EVIDENCE_EVENT: &str = "tether.evidence";
