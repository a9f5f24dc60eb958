//! The attachment history: one session's bounded record of its attempts and,
//! per configured server, what each attempt got. The public document
//! `tether history --json` prints and hosts store.
//!
//! Field names here are a contract. Change them only on purpose, and bump
//! [`SCHEMA_VERSION`] when you do.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::inventory::InventoryDocument;
use crate::model::{
    ClientInfo, ConnectionRecord, EndpointTestResult, Evidence, Stages, Timestamp, ToolCallRecord,
    ToolCatalog, ToolRow,
};
use crate::vocab::{DecisionKind, DisplayStatus, ReasonCode, ServerSource, Transport, Trigger};

/// The version of the history document this build writes.
pub const SCHEMA_VERSION: u32 = 1;
/// History keeps the current attempt plus the two before it.
pub const MAX_ATTEMPTS: usize = 3;
/// Each attempt keeps at most this many evidence events.
pub const MAX_EVIDENCE: usize = 64;
/// An attempt may plan at most this many servers.
pub const MAX_SERVERS: usize = 256;
/// Each row remembers at most this many connections (the newest).
pub const MAX_CONNECTIONS: usize = 8;
/// Each row keeps at most this many tool rows (the first seen).
pub const MAX_TOOL_ROWS: usize = 128;
/// One session's bounded attachment history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "AttachmentHistory")]
#[non_exhaustive]
pub struct AttachmentHistory {
    /// The document's schema version.
    pub schema_version: u32,
    /// The backend-owned task.
    pub task_id: String,
    /// The backend-owned session this history belongs to.
    pub session_id: String,
    /// Monotonic per session: the hub raises it with every change it
    /// publishes, and a store refuses a write whose revision is not newer
    /// than the one it holds, so no stale writer (a second host, or a host
    /// restarted mid-flush) ever replaces a newer history. 0 for documents
    /// written before revisions existed.
    #[serde(default)]
    pub revision: u64,
    /// The attempt that is current, if any.
    pub current_attempt_id: Option<String>,
    /// At most three attempts, oldest first.
    pub attempts: Vec<AttachmentAttempt>,
}

impl AttachmentHistory {
    /// An empty history for one session.
    pub fn new(task_id: impl Into<String>, session_id: impl Into<String>) -> Self {
        AttachmentHistory {
            schema_version: SCHEMA_VERSION,
            task_id: task_id.into(),
            session_id: session_id.into(),
            revision: 0,
            current_attempt_id: None,
            attempts: Vec::new(),
        }
    }

    /// The current attempt, if any.
    pub fn current(&self) -> Option<&AttachmentAttempt> {
        let id = self.current_attempt_id.as_deref()?;
        self.attempts.iter().find(|a| a.attempt_id == id)
    }

    /// Whether the history is a harness's own health check, not an agent
    /// session (its current attempt's trigger is
    /// [`Trigger::HealthCheck`](crate::vocab::Trigger::HealthCheck)): what
    /// lists and counts sessions leaves it out.
    pub fn is_health_check(&self) -> bool {
        self.current()
            .is_some_and(|a| a.trigger == crate::vocab::Trigger::HealthCheck)
    }

    /// The attempt with this id, current or not.
    pub fn attempt(&self, attempt_id: &str) -> Option<&AttachmentAttempt> {
        self.attempts.iter().find(|a| a.attempt_id == attempt_id)
    }
}

/// One ACP session request or passthrough process start, with what it showed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "AttachmentAttempt")]
#[non_exhaustive]
pub struct AttachmentAttempt {
    /// Backend-owned attempt id.
    pub attempt_id: String,
    /// Backend-owned task id.
    pub task_id: String,
    /// Backend-owned session id.
    pub session_id: String,
    /// Backend-owned execution id.
    pub execution_id: String,
    /// The agent kind (for example `claude-agent`, `claude`, `codex`).
    pub agent_kind: String,
    /// The host's id for the agent, if it has one.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The agent profile, if any.
    #[serde(default)]
    pub agent_profile_id: Option<String>,
    /// The agent's own ACP session id, once accepted.
    #[serde(default)]
    pub acp_session_id: Option<String>,
    /// The project the session ran in, where its harness said (the last
    /// component of its working directory, never the path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The harness's version, where it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_version: Option<String>,
    /// What started the attempt.
    pub trigger: Trigger,
    /// When it began.
    pub started_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
    /// When a newer attempt superseded it.
    #[serde(default)]
    pub superseded_at: Option<Timestamp>,
    /// When the agent accepted the session (or the process started).
    #[serde(default)]
    pub accepted_at: Option<Timestamp>,
    /// At most 64 evidence events, in arrival order.
    #[serde(default)]
    pub evidence: Vec<Evidence>,
    /// How many evidence events were dropped (bound hit or full sink).
    #[serde(default)]
    pub dropped_evidence: u32,
    /// The part of `dropped_evidence` lost because the sink's queue was full.
    #[serde(default)]
    pub dropped_in_transit: u32,
    /// Evidence events that named a server which is no row of this attempt
    /// (an agent reporting a server Tether did not configure, say): counted,
    /// not applied and not kept. Absent when 0.
    #[serde(default, skip_serializing_if = "crate::model::is_zero")]
    pub unattributed_evidence: u32,
    /// An error that cannot be tied to one server.
    #[serde(default)]
    pub report_error: Option<ReportError>,
    /// One row per configured server, in plan order.
    #[serde(default)]
    pub servers: Vec<ServerAttachment>,
    /// What the harness's configuration files held when the attempt ran (a
    /// `tether inventory` snapshot the host attached; stages from it carry
    /// provenance `current_config`). Absent when the host attached none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_snapshot: Option<Box<InventoryDocument>>,
    /// The skills, hooks and plugins the session showed (at most 256, the
    /// first seen): offered and invoked, fired and how each run ended,
    /// loaded or failed. Absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<crate::capability::CapabilityRow>,
}

impl AttachmentAttempt {
    /// The row for a server name.
    pub fn server(&self, name: &str) -> Option<&ServerAttachment> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// Whether a newer attempt superseded this one.
    pub fn is_superseded(&self) -> bool {
        self.superseded_at.is_some()
    }
}

/// A report-level error: it could not be tied to one server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReportError {
    /// When it happened.
    pub at: Timestamp,
    /// Stable reason.
    pub reason_code: ReasonCode,
    /// Sanitized, at most 256 bytes.
    pub summary: Option<String>,
}

/// What one configured server got in one attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct ServerAttachment {
    /// The server's configured name.
    pub name: String,
    /// Who configured it.
    pub source: ServerSource,
    /// Its transport.
    pub transport: Transport,
    /// Sanitized target: `scheme://host[:port]` or the command's basename.
    pub target: String,
    /// The plugin's decision.
    pub decision: DecisionKind,
    /// Strongest display status the evidence supports.
    pub status: DisplayStatus,
    /// Why it stopped (decision or failure), if it did.
    #[serde(default)]
    pub reason_code: Option<ReasonCode>,
    /// Sanitized, at most 256 bytes.
    #[serde(default)]
    pub summary: Option<String>,
    /// When a server-specific explicit error was recorded.
    #[serde(default)]
    pub failed_at: Option<Timestamp>,
    /// The newest observed connection.
    #[serde(default)]
    pub connection_id: Option<String>,
    /// The newest observed MCP client of this server.
    #[serde(default)]
    pub client: Option<ClientInfo>,
    /// Tools served by the newest tools/list (or reported by the agent).
    #[serde(default)]
    pub tool_count: Option<u32>,
    /// When `tool_count` was observed.
    #[serde(default)]
    pub tool_count_at: Option<Timestamp>,
    /// The newest observed tool call (name and outcome only).
    #[serde(default)]
    pub last_tool_call: Option<ToolCallRecord>,
    /// The newest connections (at most 8).
    #[serde(default)]
    pub connections: Vec<ConnectionRecord>,
    /// The ax-style stage ladder, each with provenance and first time.
    #[serde(default)]
    pub stages: Stages,
    /// The newest endpoint test; never promotes attachment status.
    #[serde(default)]
    pub endpoint_test: Option<EndpointTestResult>,
    /// What the host's own server served in tools/list; dropped once superseded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_catalog: Option<ToolCatalog>,
    /// The host's sentence on how it delivered the server (for example why
    /// it is not observed through the relay). Sanitized, at most 256 bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// One row per tool the session saw of this server (at most 128, the
    /// first seen): listed, offered to the model, called. Absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolRow>,
}
