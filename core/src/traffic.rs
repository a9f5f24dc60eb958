//! What observed MCP traffic proves, mapped to evidence once. The observed
//! endpoint (`tether-kandev-endpoint`, which serves the agent itself) and the
//! relay (`tether-relay`, which stands between the agent and a third-party
//! server) both see MCP requests and their answers; both say what they saw
//! through [`evidence`], so the same exchange is the same evidence whoever
//! saw it. Names and counts only: never an argument, a result or a payload.

use crate::model::{ClientInfo, Evidence, Timestamp};
use crate::served::ServedOutcome;
use crate::vocab::{EvidenceKind, ReasonCode};

/// One MCP exchange an observer saw answered.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Exchange {
    /// An `initialize` (or a stateless `server/discover`) was answered; the
    /// client, where it named itself.
    Initialized {
        /// The client's name, version and protocol version.
        client: Option<ClientInfo>,
    },
    /// A `tools/list` page was answered with `count` tools; the client,
    /// where the request named it inline (the stateless lifecycle).
    ToolsListed {
        /// Tools on the page.
        count: u32,
        /// The client, where the request named it.
        client: Option<ClientInfo>,
    },
    /// A `tools/call` was answered: `ok` is false for an `isError` result or
    /// a JSON-RPC error.
    ToolCalled {
        /// The tool's name.
        tool: String,
        /// Whether the call succeeded.
        ok: bool,
    },
    /// The server answered `method` with a JSON-RPC error.
    Refused {
        /// The request's method.
        method: String,
        /// The error's code.
        code: i64,
        /// The error's message (sanitized before it is stored).
        message: String,
    },
    /// A message the client sent could not be read as JSON-RPC; `summary`
    /// says how, never with its content.
    Unreadable {
        /// What was wrong.
        summary: String,
    },
    /// The connection closed.
    Closed,
}

/// The evidence an exchange is, at `at` (the observer adds the server, the
/// connection and its provenance).
pub fn evidence(exchange: Exchange, at: Timestamp) -> Evidence {
    match exchange {
        Exchange::Initialized { client } => {
            with_client(Evidence::new(EvidenceKind::InitializeObserved, at), client)
        }
        Exchange::ToolsListed { count, client } => with_client(
            Evidence::new(EvidenceKind::ToolsListObserved, at).tools(count),
            client,
        ),
        Exchange::ToolCalled { tool, ok } => {
            Evidence::new(EvidenceKind::ToolCallObserved, at).tool_call(tool, ok)
        }
        Exchange::Refused {
            method,
            code,
            message,
        } => Evidence::new(EvidenceKind::ExplicitError, at).reason(
            ReasonCode::ProtocolError,
            Some(format!("{method}: {message} ({code})")),
        ),
        Exchange::Unreadable { summary } => Evidence::new(EvidenceKind::ExplicitError, at)
            .reason(ReasonCode::ProtocolError, Some(summary)),
        Exchange::Closed => Evidence::new(EvidenceKind::ConnectionClosed, at),
    }
}

fn with_client(evidence: Evidence, client: Option<ClientInfo>) -> Evidence {
    match client {
        Some(client) => evidence.client(client),
        None => evidence,
    }
}

impl ServedOutcome {
    /// A request's outcome from its answer: a JSON-RPC error's code, else
    /// whether a tools/call result said `isError`.
    pub fn of(error_code: Option<i64>, tool_error: bool) -> Self {
        match (error_code, tool_error) {
            (Some(code), _) => ServedOutcome::Error(i32::try_from(code).unwrap_or(i32::MIN)),
            (None, true) => ServedOutcome::ToolError,
            (None, false) => ServedOutcome::Ok,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_exchange_is_the_evidence_it_proves() {
        let at = Timestamp(7);
        let client = ClientInfo {
            name: "agent".into(),
            version: Some("1".into()),
            protocol_version: None,
        };
        let init = evidence(
            Exchange::Initialized {
                client: Some(client.clone()),
            },
            at,
        );
        assert_eq!(init.kind, EvidenceKind::InitializeObserved);
        assert_eq!(init.client.as_ref(), Some(&client));
        let listed = evidence(
            Exchange::ToolsListed {
                count: 3,
                client: None,
            },
            at,
        );
        assert_eq!(listed.kind, EvidenceKind::ToolsListObserved);
        assert_eq!(listed.tool_count, Some(3));
        let called = evidence(
            Exchange::ToolCalled {
                tool: "t".into(),
                ok: false,
            },
            at,
        );
        assert_eq!(called.kind, EvidenceKind::ToolCallObserved);
        let refused = evidence(
            Exchange::Refused {
                method: "tools/list".into(),
                code: -32603,
                message: "boom".into(),
            },
            at,
        );
        assert_eq!(refused.reason_code, Some(ReasonCode::ProtocolError));
        assert_eq!(
            refused.summary.as_deref(),
            Some("tools/list: boom (-32603)")
        );
        assert_eq!(
            evidence(Exchange::Closed, at).kind,
            EvidenceKind::ConnectionClosed
        );
        assert_eq!(
            ServedOutcome::of(Some(-32601), true),
            ServedOutcome::Error(-32601)
        );
        assert_eq!(ServedOutcome::of(None, true), ServedOutcome::ToolError);
        assert_eq!(ServedOutcome::of(None, false), ServedOutcome::Ok);
        assert_eq!(
            ServedOutcome::of(Some(i64::MAX), false),
            ServedOutcome::Error(i32::MIN)
        );
    }
}
