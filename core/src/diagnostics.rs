//! Diagnostics documents: the endpoint-test report `tether endpoint-test
//! --json` prints (and what a host stores as a row's `endpoint_test`).
//!
//! Architecture invariant: an endpoint test proves reachability only. It is
//! stored apart from attachment evidence and never promotes a row's status.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::{EndpointTestResult, Timestamp};
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "EndpointTestReport")]
pub struct EndpointTestReport {
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
    /// Tools listed.
    pub tool_count: Option<u32>,
    /// Wall time of the test.
    pub elapsed_ms: u64,
}

impl EndpointTestReport {
    /// The row-level result a host stores, finished at `at`.
    pub fn to_result(&self, at: Timestamp) -> EndpointTestResult {
        EndpointTestResult {
            at,
            succeeded: self.succeeded,
            reason_code: self.reason_code.clone(),
            summary: self.summary.clone(),
            transport: self.transport.clone(),
            target: self.target.clone(),
            server_name: self.server.as_ref().map(|s| s.name.clone()),
            server_version: self.server.as_ref().and_then(|s| s.version.clone()),
            protocol_version: self.protocol_version.clone(),
            tool_count: self.tool_count,
            elapsed_ms: self.elapsed_ms,
        }
    }
}
