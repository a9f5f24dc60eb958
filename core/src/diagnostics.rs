//! The endpoint-test document `tether endpoint-test --json` prints.
//!
//! An endpoint test has one result type, [`EndpointTestResult`] (what the
//! check returns and what a row stores as `endpoint_test`).
//! [`EndpointTestDocument`] is only its standalone wire form: with a
//! `schema_version`, serverInfo nested, and no finish time.
//!
//! Its invariants are written once, in ARCHITECTURE.md (`diagnostics/`), each
//! with the test that checks it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::{EndpointTestResult, ToolCallCheck, ToolCatalog};
use crate::pins::PinReport;
use crate::vocab::{ReasonCode, Transport};

/// The version of the endpoint-test report this build writes.
pub const ENDPOINT_TEST_SCHEMA_VERSION: u32 = 1;

/// serverInfo of the tested server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ServerIdentity {
    /// serverInfo.name.
    pub name: String,
    /// serverInfo.version.
    pub version: Option<String>,
}

/// `tether endpoint-test --json`: exactly one document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "EndpointTestReport")]
pub struct EndpointTestDocument {
    /// The document's schema version.
    pub schema_version: u32,
    /// Whether initialize and tools/list both succeeded.
    pub succeeded: bool,
    /// Why it failed.
    pub reason_code: Option<ReasonCode>,
    /// Sanitized, at most 256 bytes.
    pub summary: Option<String>,
    /// The transport tested.
    pub transport: Transport,
    /// Sanitized target: `scheme://host[:port]` or the command's basename.
    pub target: String,
    /// serverInfo, once initialize answered.
    pub server: Option<ServerIdentity>,
    /// The negotiated protocol version.
    pub protocol_version: Option<String>,
    /// The era it belongs to: `2026-07-28` (`server/discover`, no handshake)
    /// or `legacy` (the `initialize` handshake).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub era: Option<String>,
    /// Tools listed.
    pub tool_count: Option<u32>,
    /// What the listed tools cost the model, in tokens: the sum of every
    /// tool's estimate (absent when nothing was listed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_tokens: Option<u64>,
    /// How `tool_tokens` was computed: `o200k_base:mcp-tool-json-v1`
    /// (o200k_base over each tool definition's compact JSON as sent), or
    /// `unavailable`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_method: Option<String>,
    /// The listed tools one by one, with their estimates (`--tools` only):
    /// the same bounded catalog as the host's own endpoint records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolCatalog>,
    /// The one tool call asked for with `--call`: whether a result came
    /// back, its `isError` and how many content blocks it held (never the
    /// arguments or the content).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<ToolCallCheck>,
    /// Wall time of the test.
    pub elapsed_ms: u64,
    /// The listing compared with the server's tool pins (`tether pins`):
    /// which tools' definitions changed since they were pinned, which
    /// appeared or disappeared. Hashes compared, never text; absent when
    /// nothing was listed, or pins were not checked (`--no-pins`, or the
    /// store could not be used: said on stderr).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pins: Option<PinReport>,
}

impl From<&EndpointTestResult> for EndpointTestDocument {
    fn from(result: &EndpointTestResult) -> Self {
        EndpointTestDocument {
            schema_version: ENDPOINT_TEST_SCHEMA_VERSION,
            succeeded: result.succeeded,
            reason_code: result.reason_code.clone(),
            summary: result.summary.clone(),
            transport: result.transport.clone(),
            target: result.target.clone(),
            server: result.server_name.as_ref().map(|name| ServerIdentity {
                name: name.clone(),
                version: result.server_version.clone(),
            }),
            protocol_version: result.protocol_version.clone(),
            era: result.era.clone(),
            tool_count: result.tool_count,
            tool_tokens: result.tool_tokens,
            token_method: result.token_method.clone(),
            tools: None,
            call: result.call.clone(),
            elapsed_ms: result.elapsed_ms,
            pins: None,
        }
    }
}
