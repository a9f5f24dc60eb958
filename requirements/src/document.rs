//! The document `tether check --format json` prints (`tether schema
//! check`): each session checked, each requirement's outcome, and the
//! overall answer. Metadata only: names, stages, states, reason codes and
//! Tether's own sentences; never an argument, prompt, result or secret.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tether_core::vocab::{ReasonCode, StageState};

/// The version of [`CheckDocument`].
pub const CHECK_SCHEMA_VERSION: u32 = 1;

/// `tether check --format json`: every session checked, and whether every
/// requirement was met.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "CheckDocument")]
pub struct CheckDocument {
    /// [`CHECK_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Every requirement of every session was met.
    pub met: bool,
    /// One entry per session checked.
    pub sessions: Vec<CheckedSession>,
}

/// One session and its requirements' outcomes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckedSession {
    /// The Tether session id (`KIND:ID`).
    pub session_id: String,
    /// The harness (`claude`, `codex`, …).
    pub agent_kind: String,
    /// The harness's version, where a record gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_version: Option<String>,
    /// Every requirement of this session was met.
    pub met: bool,
    /// One outcome per requirement, in the order given.
    pub requirements: Vec<RequirementOutcome>,
    /// Servers the session shows failed that no requirement named (a
    /// warning, never a failure).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unrequired_failures: Vec<RequirementOutcome>,
    /// The session's own error, where its records report one no server is
    /// tied to (its model API not reached, its credentials refused): often
    /// why a requirement is not met. Absent when none is reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_error: Option<SessionError>,
}

/// A session's own error, as `tether run` and `tether sessions show` say it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionError {
    /// Why (`session_request_failed`, `auth_rejected`, …; `tether explain
    /// CODE`).
    pub reason_code: ReasonCode,
    /// Tether's sentence (sanitized): "its records report an error: …".
    pub sentence: String,
}

/// One requirement, evaluated against one session's evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RequirementOutcome {
    /// The requirement as written (`time`, `time:callable`,
    /// `time/get_current_time:model_visible`).
    pub requirement: String,
    /// The server.
    pub server: String,
    /// The tool, for a `--require-tool`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The stage asked for (`reached`, `tools_listed`, `model_visible`,
    /// `callable`, `used`, …).
    pub stage: String,
    /// Whether the evidence shows it (silence never does).
    pub met: bool,
    /// The deciding stage's state: `yes`, `no`, `unknown` (nothing showed
    /// it either way) or `n/a`.
    pub state: StageState,
    /// Why the server or tool stopped, where a record says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<ReasonCode>,
    /// Tether's sentence: what the evidence shows.
    pub sentence: String,
}
