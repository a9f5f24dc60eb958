//! What a harness needs to send its own telemetry to a receiver: the
//! optional telemetry half of a passthrough plugin's contract. It is pure
//! data (environment variables, a configuration snippet, notes), made by
//! the harness's plugin (`PassthroughStrategy::telemetry_setup`) and shown
//! by `tether collect --print-env`. A plugin that gives none reads no
//! telemetry.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where the telemetry goes.
#[derive(Clone, PartialEq, Eq)]
pub struct TelemetryTarget {
    /// The OTLP/HTTP base URL (`http://127.0.0.1:PORT`); the signal paths
    /// (`/v1/logs`, …) follow it.
    pub endpoint: String,
    /// The `Authorization` header value the receiver admits (`Bearer …`): a
    /// secret, hidden from `Debug`.
    pub authorization: String,
}

impl std::fmt::Debug for TelemetryTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TelemetryTarget")
            .field("endpoint", &self.endpoint)
            .field("authorization", &"[redacted]")
            .finish()
    }
}

/// Whether a harness was seen to send the receiver's `Authorization` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HeadersSent {
    /// Seen on every request, with the pinned version.
    Verified,
    /// Not yet seen: the receiver refuses what comes without it.
    Unverified,
}

/// One variable to set in the harness's environment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SetupVar {
    /// Its name.
    pub name: String,
    /// Its value (may hold the receiver's token).
    pub value: String,
}

/// A block to add to one of the harness's own configuration files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SetupSnippet {
    /// Which file (`~/.codex/config.toml`, say), as the harness names it.
    pub file: String,
    /// The text to add (may hold the receiver's token).
    pub text: String,
}

/// Everything one harness needs to send its telemetry to a receiver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TelemetrySetup {
    /// The agent kind (`claude`, `codex`, …).
    pub agent_kind: String,
    /// Variables to set.
    pub env: Vec<SetupVar>,
    /// A configuration block, for a harness that reads its exporter there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<SetupSnippet>,
    /// Whether it was seen to send the receiver's header.
    pub headers_sent: HeadersSent,
    /// What the settings turn on besides metadata, what Tether drops of it,
    /// and anything else a user should know (plain sentences).
    pub notes: Vec<String>,
}

impl TelemetrySetup {
    /// A setup for `agent_kind` with no variables yet.
    pub fn new(agent_kind: impl Into<String>, headers_sent: HeadersSent) -> Self {
        TelemetrySetup {
            agent_kind: agent_kind.into(),
            env: Vec::new(),
            snippet: None,
            headers_sent,
            notes: Vec::new(),
        }
    }

    /// Adds a variable.
    pub fn var(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push(SetupVar {
            name: name.into(),
            value: value.into(),
        });
        self
    }

    /// Adds a note.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// The standard OTLP exporter headers variable
    /// (`OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer …`).
    pub fn otlp_headers(self, target: &TelemetryTarget) -> Self {
        self.var(
            "OTEL_EXPORTER_OTLP_HEADERS",
            format!("Authorization={}", target.authorization),
        )
    }
}

/// The version of [`CollectDocument`].
pub const COLLECT_SCHEMA_VERSION: u32 = 1;

/// The document `tether collect --json` prints when it starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CollectDocument {
    /// [`COLLECT_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The OTLP/HTTP base URL to send to.
    pub endpoint: String,
    /// The receiver's token (`Authorization: Bearer <token>`), shown once.
    pub token: String,
    /// What the harness named by `--print-env` needs, if one was named.
    pub setup: Option<TelemetrySetup>,
}
