//! Who may see and act on which session: the host's one authorizer, asked
//! by the web service for every session it lists, streams or acts on, and by
//! the diagnostics API inside every action.

use std::sync::Arc;

/// What a caller asks to do with a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Read its status, live or not, and its copy-safe diagnostics.
    View,
    /// Run a bounded endpoint test on one of its servers.
    EndpointTest,
    /// Read its live execution's recent output.
    RecentOutput,
}

/// The host's say over who sees and acts on which session.
pub trait Authorizer: Send + Sync {
    /// `Ok(())` to allow; `Err(reason)` to refuse (the reason is shown).
    fn authorize(&self, principal: &str, session_id: &str, action: Action) -> Result<(), String>;
}

impl<F> Authorizer for F
where
    F: Fn(&str, &str, Action) -> Result<(), String> + Send + Sync,
{
    fn authorize(&self, principal: &str, session_id: &str, action: Action) -> Result<(), String> {
        self(principal, session_id, action)
    }
}

/// An authorizer that allows everything: for a single-user host whose only
/// lock is the listener's token (the CLI, the example host, tests).
pub fn allow_all() -> Arc<dyn Authorizer> {
    Arc::new(|_: &str, _: &str, _: Action| Ok(()))
}
