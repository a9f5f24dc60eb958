//! The probe report: the public document `tether probe --json` prints, and the
//! pure function that reads a verdict off an attempt's evidence.
//!
//! Its invariants are written once, in ARCHITECTURE.md (`probe/`), each
//! with the test that checks it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::history::AttachmentAttempt;
use crate::model::Timestamp;
use crate::vocab::{DisplayStatus, EvidenceKind, ReasonCode, Transport};

/// The version of the probe report this build writes. Version 2 added the
/// `session_refused` verdict and a null `sentinel.transport` when nothing was
/// offered; version 3 the `agent_exited` verdict and `agent_exit`.
pub const PROBE_SCHEMA_VERSION: u32 = 3;

/// How far the sentinel got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Verdict {
    /// tools/list was served to the agent.
    Active,
    /// initialize was observed, tools/list was not.
    Connected,
    /// Delivered; no connection was seen within the grace window.
    DeliveredUnverified,
    /// Deliberately not delivered (the agent cannot take the transport).
    Filtered,
    /// Could not be offered.
    Unavailable,
    /// An explicit error named the sentinel.
    Failed,
    /// The agent could not start or initialize.
    AgentFailed,
    /// The agent refused the session (`session/new` or `session/load`) and
    /// never connected: the sentinel reached no live session.
    SessionRefused,
    /// The agent's process exited on its own before any contact with the
    /// sentinel: it was delivered to a process that is gone (`agent_exit`
    /// says how).
    AgentExited,
}

impl Verdict {
    /// The wire form.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Active => "active",
            Verdict::Connected => "connected",
            Verdict::DeliveredUnverified => "delivered_unverified",
            Verdict::Filtered => "filtered",
            Verdict::Unavailable => "unavailable",
            Verdict::Failed => "failed",
            Verdict::AgentFailed => "agent_failed",
            Verdict::SessionRefused => "session_refused",
            Verdict::AgentExited => "agent_exited",
        }
    }
}

/// The agent's self-description from `initialize` (or what is known of it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProbeAgent {
    /// agentInfo.name.
    pub name: Option<String>,
    /// agentInfo.version.
    pub version: Option<String>,
    /// The protocol version it answered.
    pub protocol_version: Option<String>,
}

/// What the agent advertised (or, for passthrough, what the strategy supports).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProbeAdvertised {
    /// Streamable HTTP MCP servers.
    pub http: bool,
    /// Legacy SSE MCP servers.
    pub sse: bool,
    /// `session/load`.
    pub load_session: bool,
}

/// A session-level error: reason and sanitized summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProbeError {
    /// Stable reason.
    pub reason_code: ReasonCode,
    /// Sanitized, at most 256 bytes.
    pub summary: Option<String>,
}

/// The session request's outcome.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProbeSession {
    /// Whether the agent accepted the session (or the process started).
    pub accepted: bool,
    /// The agent's session id.
    pub acp_session_id: Option<String>,
    /// Why it was not accepted, or what failed after.
    pub error: Option<ProbeError>,
}

/// An MCP client's name and version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProbeClient {
    /// clientInfo.name.
    pub name: String,
    /// clientInfo.version.
    pub version: Option<String>,
}

/// What the sentinel saw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProbeSentinel {
    /// The sentinel's server name.
    pub name: String,
    /// The transport it was offered over; null when nothing was offered (the
    /// agent failed before a session was asked for).
    pub transport: Option<Transport>,
    /// Whether it was delivered.
    pub delivered: bool,
    /// Whether initialize (or server/discover) was observed.
    pub initialize_observed: bool,
    /// Whether tools/list was observed.
    pub tools_list_observed: bool,
    /// Tools listed.
    pub tool_count: Option<u32>,
    /// Whether the sentinel tool was called.
    pub tool_call_observed: bool,
    /// The MCP client that connected.
    pub client: Option<ProbeClient>,
    /// Milliseconds from the attempt's start to the first contact.
    pub first_contact_ms: Option<u64>,
}

/// How the agent's process ended on its own while the probe waited.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProbeAgentExit {
    /// Its exit status, when it exited with one.
    pub code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// Milliseconds from its start to the probe seeing it gone.
    pub ran_ms: u64,
    /// Whether it exited before any contact with the sentinel.
    pub before_contact: bool,
    /// Its last stderr lines (at most 8, each scrubbed and capped at 300
    /// bytes). Printed, never stored.
    pub stderr_tail: Vec<String>,
}

impl ProbeAgentExit {
    /// `exit status 41` or `signal 9`, then how long it ran.
    pub fn describe(&self) -> String {
        let how = match (self.code, self.signal) {
            (Some(code), _) => format!("exit status {code}"),
            (None, Some(signal)) => format!("signal {signal}"),
            (None, None) => "an unknown status".to_owned(),
        };
        format!("{how} after {:.1} s", self.ran_ms as f64 / 1000.0)
    }
}

/// `tether probe --json`: exactly one document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "ProbeReport")]
pub struct ProbeReport {
    /// The document's schema version.
    pub schema_version: u32,
    /// How far the sentinel got.
    pub verdict: Verdict,
    /// The agent.
    pub agent: ProbeAgent,
    /// What it advertised.
    pub advertised: ProbeAdvertised,
    /// The session request's outcome.
    pub session: ProbeSession,
    /// What the sentinel saw.
    pub sentinel: ProbeSentinel,
    /// The attempt, as a host would store it.
    pub report: Option<AttachmentAttempt>,
    /// Wall time of the whole probe.
    pub elapsed_ms: u64,
    /// How the agent's process ended, when it exited on its own while the
    /// probe waited (absent when the probe ended it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_exit: Option<ProbeAgentExit>,
}

impl ProbeSentinel {
    /// A sentinel nothing was seen of (the run ended before delivery).
    pub fn unseen(name: &str, transport: Option<Transport>) -> Self {
        ProbeSentinel {
            name: name.to_owned(),
            transport,
            delivered: false,
            initialize_observed: false,
            tools_list_observed: false,
            tool_count: None,
            tool_call_observed: false,
            client: None,
            first_contact_ms: None,
        }
    }
}

impl ProbeReport {
    /// The report of an agent that could not start or initialize: nothing was
    /// offered, nothing of the sentinel was seen, and the session error says
    /// why (sanitized).
    pub fn agent_failed(
        agent: ProbeAgent,
        sentinel: &str,
        reason: ReasonCode,
        summary: &str,
        elapsed_ms: u64,
    ) -> Self {
        ProbeReport {
            schema_version: PROBE_SCHEMA_VERSION,
            verdict: Verdict::AgentFailed,
            agent,
            advertised: ProbeAdvertised::default(),
            session: ProbeSession {
                accepted: false,
                acp_session_id: None,
                error: Some(ProbeError {
                    reason_code: reason,
                    summary: Some(crate::sanitize::summary(summary)),
                }),
            },
            sentinel: ProbeSentinel::unseen(sentinel, None),
            report: None,
            elapsed_ms,
            agent_exit: None,
        }
    }
}

/// Reads the sentinel's facts off an attempt.
pub fn sentinel_facts(
    attempt: &AttachmentAttempt,
    name: &str,
    transport: Transport,
) -> ProbeSentinel {
    let row = attempt.server(name);
    let on_sentinel = |kind: EvidenceKind| {
        attempt
            .evidence
            .iter()
            .filter(move |e| e.kind == kind && e.server.as_deref() == Some(name))
    };
    let yes = |stage: crate::model::StageObservation| stage.state == crate::vocab::StageState::Yes;
    let first_contact = on_sentinel(EvidenceKind::InitializeObserved)
        .chain(on_sentinel(EvidenceKind::ToolsListObserved))
        .map(|e| e.at)
        .min()
        .or_else(|| row.and_then(|r| r.connections.iter().map(|c| c.first_seen_at).min()));
    ProbeSentinel {
        name: name.to_owned(),
        transport: Some(row.map_or(transport, |r| r.transport.clone())),
        delivered: row.is_some_and(|r| yes(r.stages.delivered)),
        initialize_observed: row.is_some_and(|r| yes(r.stages.initialized)),
        tools_list_observed: row.is_some_and(|r| yes(r.stages.tools_listed)),
        tool_count: row.and_then(|r| r.tool_count),
        tool_call_observed: row.is_some_and(|r| r.last_tool_call.is_some()),
        client: row.and_then(|r| r.client.as_ref()).map(|c| ProbeClient {
            name: c.name.clone(),
            version: c.version.clone(),
        }),
        first_contact_ms: first_contact.map(|t: Timestamp| t.since(attempt.started_at)),
    }
}

/// The verdict once the agent's process is known to have exited on its own:
/// a sentinel delivered and silent was delivered to a process that exited
/// before any contact (`agent_exited`); every other verdict stands.
pub fn verdict_with_exit(verdict: Verdict, exit: Option<&ProbeAgentExit>) -> Verdict {
    match (verdict, exit) {
        (Verdict::DeliveredUnverified, Some(exit)) if exit.before_contact => Verdict::AgentExited,
        (verdict, _) => verdict,
    }
}

/// Whether the attempt shows any contact with `name` (initialize, tools/list,
/// a tool call, or the agent's own report about it).
pub fn had_contact(attempt: &AttachmentAttempt, name: &str) -> bool {
    attempt.evidence.iter().any(|e| {
        e.server.as_deref() == Some(name)
            && matches!(
                e.kind,
                EvidenceKind::InitializeObserved
                    | EvidenceKind::ToolsListObserved
                    | EvidenceKind::ToolCallObserved
                    | EvidenceKind::AgentReported
            )
    }) || attempt
        .server(name)
        .is_some_and(|r| !r.connections.is_empty() || r.tool_count.is_some())
}

/// The verdict the sentinel's row supports.
pub fn verdict_of(attempt: &AttachmentAttempt, name: &str) -> Verdict {
    let row = attempt.server(name);
    // A session the agent refused, with no contact: nothing received the server.
    let refused = row.is_some_and(|r| {
        r.status == DisplayStatus::Unavailable
            && matches!(
                r.reason_code,
                Some(ReasonCode::SessionNewFailed)
                    | Some(ReasonCode::SessionLoadFailed)
                    | Some(ReasonCode::AuthRequired)
            )
    });
    if refused && attempt.accepted_at.is_none() {
        return Verdict::SessionRefused;
    }
    match row.map(|r| r.status) {
        Some(DisplayStatus::Active) => Verdict::Active,
        Some(DisplayStatus::Connected) => Verdict::Connected,
        Some(DisplayStatus::Failed) => Verdict::Failed,
        Some(DisplayStatus::Filtered) => Verdict::Filtered,
        Some(DisplayStatus::Unavailable) => Verdict::Unavailable,
        // Delivered and silent: unverified, never failed.
        Some(DisplayStatus::Delivered) => Verdict::DeliveredUnverified,
        // Never handed over (the run ended before delivery).
        Some(DisplayStatus::Unknown) | None => Verdict::Unavailable,
    }
}
