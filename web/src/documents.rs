//! The status API's documents: versioned, with JSON Schemas exported by
//! `tether schema` (and turned into TypeScript for the reference view).
//!
//! Every document is built from the sanitized history alone, plus, for
//! `recent-output`, the scrubbed live tail that is never stored.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use tether_core::history::AttachmentHistory;
use tether_core::model::Timestamp;
use tether_words::display::{RowView, copy_diagnostics, project_row_in};

pub use crate::parts::{CapabilityView, STATUS_API_SCHEMA_VERSION};

/// `GET /api/v1/sessions`, and each `sessions` event of `/api/v1/sessions/events`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionList {
    /// [`STATUS_API_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Whether the diagnostic actions can run here (a live hub with its
    /// diagnostics), or the service only reads a store.
    pub actions: bool,
    /// Every session the caller may see, by id.
    pub sessions: Vec<SessionSummary>,
}

/// One session in the list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionSummary {
    /// The session id.
    pub session_id: String,
    /// The task it belongs to.
    pub task_id: String,
    /// The history's revision (raised by every published change).
    pub revision: u64,
    /// The current attempt, if any.
    #[serde(default)]
    pub current_attempt_id: Option<String>,
    /// The current attempt's agent kind.
    #[serde(default)]
    pub agent_kind: Option<String>,
    /// When the current attempt started.
    #[serde(default)]
    pub started_at: Option<Timestamp>,
    /// Rows of the current attempt per display status word (`active`,
    /// `connected`, `delivered`, `failed`, `filtered`, `unavailable`,
    /// `unknown`); a status with no rows is absent.
    pub counts: BTreeMap<String, u32>,
}

impl SessionSummary {
    /// The summary of one history.
    pub fn of(history: &AttachmentHistory) -> Self {
        let current = history.current();
        let mut counts = BTreeMap::new();
        for row in current.iter().flat_map(|a| a.servers.iter()) {
            *counts.entry(row.status.as_str().to_owned()).or_insert(0) += 1;
        }
        SessionSummary {
            session_id: history.session_id.clone(),
            task_id: history.task_id.clone(),
            revision: history.revision,
            current_attempt_id: history.current_attempt_id.clone(),
            agent_kind: current.map(|a| a.agent_kind.clone()),
            started_at: current.map(|a| a.started_at),
            counts,
        }
    }
}

/// `GET /api/v1/sessions/{id}`, and each `status` event of its stream.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SessionStatus {
    /// [`STATUS_API_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Whether the diagnostic actions can run here.
    pub actions: bool,
    /// The sanitized history, as `tether schema history` describes it.
    pub history: AttachmentHistory,
    /// Each attempt's rows, projected for display (labels, colors,
    /// checklist), newest attempt first.
    pub attempts: Vec<AttemptView>,
}

/// One attempt's rows, ready to render.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AttemptView {
    /// The attempt id.
    pub attempt_id: String,
    /// Whether it is the session's current attempt.
    pub current: bool,
    /// One view per server row, in the attempt's order.
    pub rows: Vec<RowView>,
    /// The skills, hooks and plugins the attempt showed, as `tether
    /// sessions show` prints them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<CapabilityView>,
}

impl SessionStatus {
    /// The document for one history.
    pub fn of(history: AttachmentHistory, actions: bool) -> Self {
        let attempts = history
            .attempts
            .iter()
            .rev()
            .map(|attempt| AttemptView {
                attempt_id: attempt.attempt_id.clone(),
                current: history.current_attempt_id.as_deref() == Some(&attempt.attempt_id),
                rows: attempt
                    .servers
                    .iter()
                    .map(|row| project_row_in(attempt, row))
                    .collect(),
                capabilities: attempt
                    .capabilities
                    .iter()
                    .map(CapabilityView::of)
                    .collect(),
            })
            .collect();
        SessionStatus {
            schema_version: STATUS_API_SCHEMA_VERSION,
            actions,
            history,
            attempts,
        }
    }
}

/// `POST /api/v1/recent-output`: the live execution's scrubbed tail, never stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RecentOutputDocument {
    /// [`STATUS_API_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The session asked about.
    pub session_id: String,
    /// `live` (with lines) or `unavailable` (with the reason).
    pub state: RecentOutputState,
    /// Oldest first; empty when unavailable.
    pub lines: Vec<String>,
    /// Older lines no longer kept.
    pub dropped: u64,
    /// Why there is no output, when there is none.
    #[serde(default)]
    pub reason: Option<String>,
}

/// Whether recent output could be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecentOutputState {
    /// The execution is live; these are its last lines.
    Live,
    /// There is no live execution to read.
    Unavailable,
}

impl RecentOutputDocument {
    /// The document for what the diagnostics API returned.
    pub fn of(session_id: &str, output: tether_diagnostics::api::RecentOutput) -> Self {
        use tether_diagnostics::api::RecentOutput;
        let (state, lines, dropped, reason) = match output {
            RecentOutput::Live { lines, dropped } => {
                (RecentOutputState::Live, lines, dropped, None)
            }
            RecentOutput::Unavailable { reason } => {
                (RecentOutputState::Unavailable, Vec::new(), 0, Some(reason))
            }
        };
        RecentOutputDocument {
            schema_version: STATUS_API_SCHEMA_VERSION,
            session_id: session_id.to_owned(),
            state,
            lines,
            dropped,
            reason,
        }
    }
}

/// `GET /api/v1/sessions/{id}/diagnostics`: copy-safe text, built from the
/// sanitized history (endpoint-test results included) and nothing else.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CopyDiagnostics {
    /// [`STATUS_API_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The session.
    pub session_id: String,
    /// The text a user pastes into a bug report.
    pub text: String,
}

impl CopyDiagnostics {
    /// The document for one history.
    pub fn of(history: &AttachmentHistory) -> Self {
        CopyDiagnostics {
            schema_version: STATUS_API_SCHEMA_VERSION,
            session_id: history.session_id.clone(),
            text: copy_diagnostics(history),
        }
    }
}

/// Every refusal and failure the API returns, with its HTTP status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ApiError {
    /// A stable snake_case code: `unauthorized`, `forbidden`, `bad_host`,
    /// `bad_origin`, `invalid_request`, `not_found`, `busy`, `unavailable`,
    /// `too_large`.
    pub error: String,
    /// What went wrong and what to do, in words (never a secret).
    pub message: String,
}

/// `POST /api/v1/login` answer: the bearer token a one-time login code buys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoginAnswer {
    /// The service's bearer token (keep it in the page's session storage only).
    pub token: String,
}

/// `POST /api/v1/login-links` answer: a fresh one-time login path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoginLink {
    /// `/#login=CODE`: open it on the service's origin; the code works once,
    /// for ten minutes, and only buys the token from the page itself.
    pub path: String,
}

/// The schemas `tether schema` exports for the status API, by document name.
pub fn schemas() -> Vec<(&'static str, serde_json::Value)> {
    use tether_core::schema::schema_of;
    vec![
        (
            "status-sessions",
            schema_of::<SessionList>("status-sessions.json"),
        ),
        (
            "status-session",
            schema_of::<SessionStatus>("status-session.json"),
        ),
        (
            "status-recent-output",
            schema_of::<RecentOutputDocument>("status-recent-output.json"),
        ),
        (
            "status-diagnostics",
            schema_of::<CopyDiagnostics>("status-diagnostics.json"),
        ),
        ("status-error", schema_of::<ApiError>("status-error.json")),
        (
            "status-fleet-sessions",
            schema_of::<crate::fleet::FleetSessions>("status-fleet-sessions.json"),
        ),
        (
            "status-fleet-servers",
            schema_of::<crate::fleet::FleetServers>("status-fleet-servers.json"),
        ),
        (
            "status-display",
            schema_of::<tether_words::display::DisplayVocabulary>("status-display.json"),
        ),
    ]
}
