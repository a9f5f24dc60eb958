//! Session-scoped diagnostics for a host: the endpoint check and the agent's
//! recent output, as explicit, authorized, bounded actions.
//!
//! - A caller names a session and a server; nothing else. The server is
//!   resolved from the effective configuration the host delivered in the
//!   session's current attempt. A request carrying a URL, command, headers or
//!   env is rejected before anything runs.
//! - The host's [`Authorizer`] runs before anything else, every time.
//! - The endpoint test's result is published as `endpoint_tested` evidence: it
//!   fills the row's `endpoint_test` and never its status.
//! - Recent output is the live execution's bounded stderr tail, returned on
//!   demand and never stored; when the execution is not live the answer says so.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use tether_core::model::{EndpointTestResult, Evidence};
use tether_core::sanitize::Scrubber;
use tether_core::spec::{Endpoint, ServerSpec};
use tether_core::vocab::EvidenceKind;
use tether_hub::{AttemptHandle, EvidenceSink};
use tokio_util::sync::CancellationToken;

use tether_process::OutputTail;

use crate::endpoint_check::{CheckLimits, check_endpoint};

pub use tether_guard::{Action, Authorizer, allow_all};

/// An endpoint-test request: a session and a server name, nothing else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndpointTestRequest {
    /// The session whose current attempt configured the server.
    pub session_id: String,
    /// The server's name in that configuration.
    pub server_name: String,
}

/// A recent-output request: a session, nothing else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecentOutputRequest {
    /// The session whose live execution to read.
    pub session_id: String,
}

/// The agent's recent output, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum RecentOutput {
    /// The live execution's last lines (at most 50 lines or 16 KiB), scrubbed.
    Live {
        /// Oldest first.
        lines: Vec<String>,
        /// Older lines no longer kept.
        dropped: u64,
    },
    /// There is no live execution to read.
    Unavailable {
        /// Why, in words a user can act on.
        reason: String,
    },
}

/// Why a diagnostic request was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiagnosticsError {
    /// The authorizer said no.
    #[error("not allowed: {0}")]
    Denied(String),
    /// The request is malformed or carries fields it may not (URLs, commands, headers, env).
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// No effective configuration is known for the session.
    #[error("session {0} has no current attempt here")]
    UnknownSession(String),
    /// The session's configuration has no server of that name.
    #[error("session {session_id} has no server named {server_name:?}")]
    UnknownServer {
        /// The session.
        session_id: String,
        /// The name asked for.
        server_name: String,
    },
}

struct SessionState {
    sink: EvidenceSink,
    servers: Vec<(ServerSpec, Option<usize>)>,
    output: Option<Arc<Mutex<OutputTail>>>,
}

/// Diagnostics for the sessions a host runs.
pub struct Diagnostics {
    authorizer: Arc<dyn Authorizer>,
    limits: CheckLimits,
    sessions: Mutex<HashMap<String, SessionState>>,
}

impl std::fmt::Debug for Diagnostics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Diagnostics").finish_non_exhaustive()
    }
}

impl Diagnostics {
    /// Diagnostics gated by `authorizer`, with default test limits.
    pub fn new(authorizer: Arc<dyn Authorizer>) -> Self {
        Diagnostics {
            authorizer,
            limits: CheckLimits::default(),
            sessions: Mutex::new(HashMap::new()),
        }
    }

    /// With explicit endpoint-test limits.
    pub fn with_limits(mut self, limits: CheckLimits) -> Self {
        self.limits = limits;
        self
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, SessionState>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records the effective configuration of a session's new current attempt
    /// (kept in memory only; it holds secrets).
    pub fn remember_attempt(&self, session_id: &str, handle: &AttemptHandle) {
        let servers = handle
            .plan
            .servers
            .iter()
            .map(|p| (p.spec.clone(), p.chosen))
            .collect();
        let mut sessions = self.sessions();
        let output = sessions.remove(session_id).and_then(|s| s.output);
        sessions.insert(
            session_id.to_owned(),
            SessionState {
                sink: handle.sink.clone(),
                servers,
                output,
            },
        );
    }

    /// The session's execution is live; its stderr tail can be read.
    pub fn attach_output(&self, session_id: &str, tail: Arc<Mutex<OutputTail>>) {
        if let Some(state) = self.sessions().get_mut(session_id) {
            state.output = Some(tail);
        }
    }

    /// The session's execution ended; its output is gone.
    pub fn detach_output(&self, session_id: &str) {
        if let Some(state) = self.sessions().get_mut(session_id) {
            state.output = None;
        }
    }

    /// Forgets a session entirely.
    pub fn forget(&self, session_id: &str) {
        self.sessions().remove(session_id);
    }

    /// [`check_endpoint`](Self::check_endpoint) from a JSON request, as a
    /// frontend would send it; unknown fields (a URL, a command…) are refused.
    pub async fn check_endpoint_json(
        &self,
        principal: &str,
        request: &str,
    ) -> Result<EndpointTestResult, DiagnosticsError> {
        let request: EndpointTestRequest = serde_json::from_str(request)
            .map_err(|e| DiagnosticsError::InvalidRequest(e.to_string()))?;
        self.check_endpoint(principal, request, CancellationToken::new())
            .await
    }

    /// Runs a bounded endpoint check on a server of the session's effective
    /// configuration and stores the result as that row's `endpoint_test`.
    pub async fn check_endpoint(
        &self,
        principal: &str,
        request: EndpointTestRequest,
        cancel: CancellationToken,
    ) -> Result<EndpointTestResult, DiagnosticsError> {
        self.authorizer
            .authorize(principal, &request.session_id, Action::EndpointTest)
            .map_err(DiagnosticsError::Denied)?;
        let (endpoint, sink, name): (Endpoint, EvidenceSink, String) = {
            let sessions = self.sessions();
            let state = sessions
                .get(&request.session_id)
                .ok_or_else(|| DiagnosticsError::UnknownSession(request.session_id.clone()))?;
            let (spec, chosen) = state
                .servers
                .iter()
                .find(|(spec, _)| spec.name == request.server_name)
                .ok_or_else(|| DiagnosticsError::UnknownServer {
                    session_id: request.session_id.clone(),
                    server_name: request.server_name.clone(),
                })?;
            // Tether's own check goes the check's way where the server has
            // one (the host's observed endpoint), so it is never taken for
            // the agent.
            let endpoint = chosen
                .and_then(|i| spec.endpoint_for_checks(i))
                .or_else(|| spec.endpoint_for_checks(0))
                .cloned()
                .ok_or_else(|| {
                    DiagnosticsError::InvalidRequest("the server has no endpoint".into())
                })?;
            (endpoint, state.sink.clone(), spec.name.clone())
        };
        let result = check_endpoint(&endpoint, self.limits, cancel).await;
        let evidence = Evidence::new(EvidenceKind::EndpointTested, result.at)
            .server(name)
            .endpoint_test(result.clone());
        if let Err(err) = sink.publish(evidence) {
            tracing::debug!(%err, "endpoint test result not stored");
        }
        Ok(result)
    }

    /// The live execution's recent output, scrubbed; never stored.
    pub fn recent_output(
        &self,
        principal: &str,
        request: RecentOutputRequest,
    ) -> Result<RecentOutput, DiagnosticsError> {
        self.authorizer
            .authorize(principal, &request.session_id, Action::RecentOutput)
            .map_err(DiagnosticsError::Denied)?;
        let sessions = self.sessions();
        let Some(state) = sessions.get(&request.session_id) else {
            return Ok(RecentOutput::Unavailable {
                reason: "no execution of this session is known here".into(),
            });
        };
        let Some(tail) = &state.output else {
            return Ok(RecentOutput::Unavailable {
                reason: "the session's execution is not live, so there is no recent output".into(),
            });
        };
        let scrubber = state
            .servers
            .iter()
            .fold(Scrubber::new(), |acc, (spec, _)| {
                acc.merge(&spec.scrubber())
            });
        let tail = tail.lock().unwrap_or_else(|p| p.into_inner());
        Ok(RecentOutput::Live {
            lines: tail.lines().iter().map(|l| scrubber.scrub(l)).collect(),
            dropped: tail.dropped(),
        })
    }
}
