//! Subscribers: what exporters are told, after the hub's lock is released.
//!
//! A [`HubSubscriber`] is told every attempt begun, every evidence event accepted and
//! every row status entered, as shared `Arc<HubEvent>`s; [`EventOwner`] is
//! made only by the hub.

use super::*;

/// Who an accepted event belongs to (the sink's stamp). Only the hub makes
/// one; exporters read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventOwner {
    pub(crate) owner: Owner,
    pub(crate) attempt: AttemptId,
    pub(crate) agent_kind: String,
}

impl EventOwner {
    /// Whose the attempt is.
    pub fn owner(&self) -> &Owner {
        &self.owner
    }

    /// The backend's task.
    pub fn task_id(&self) -> &str {
        self.owner.task.as_str()
    }

    /// The backend's session.
    pub fn session_id(&self) -> &str {
        self.owner.session.as_str()
    }

    /// The backend's execution.
    pub fn execution_id(&self) -> &str {
        self.owner.execution.as_str()
    }

    /// The attempt.
    pub fn attempt_id(&self) -> &str {
        self.attempt.as_str()
    }

    /// The agent kind.
    pub fn agent_kind(&self) -> &str {
        &self.agent_kind
    }
}

/// What a [`HubSubscriber`] is told, after the hub accepted it. Every string has
/// passed the attempt's scrubber, as in the stored history.
#[derive(Debug, Clone, PartialEq)]
pub enum HubEvent {
    /// An attempt began.
    AttemptBegun {
        /// Whose.
        owner: Arc<EventOwner>,
        /// What started it.
        trigger: Trigger,
    },
    /// The reducer accepted one evidence event (sanitized).
    Evidence {
        /// Whose.
        owner: Arc<EventOwner>,
        /// What was seen.
        evidence: Box<Evidence>,
    },
    /// A server row entered a display status (at the attempt's start, or
    /// when evidence changed it).
    RowStatus {
        /// Whose.
        owner: Arc<EventOwner>,
        /// The row's sanitized name.
        server: String,
        /// The status it entered.
        status: DisplayStatus,
        /// Its reason code, if it has one.
        reason_code: Option<ReasonCode>,
    },
}

/// Receives what the hub accepted, on the hub's drain thread (and, for
/// [`HubEvent::AttemptBegun`], on the caller of `begin_attempt`), never while
/// the hub's lock is held. It must return at once: queue (bounded) or drop.
pub trait HubSubscriber: Send + Sync {
    /// One accepted event (shared by every subscriber: keep the `Arc`, not a copy).
    fn observe(&self, event: &Arc<HubEvent>);
}

pub(crate) fn owner_of(live: &AttemptLive) -> Arc<EventOwner> {
    Arc::clone(&live.owner)
}

/// The status and reason of each row of one attempt (for change detection).
pub(crate) fn row_states(
    history: &AttachmentHistory,
    attempt_id: &str,
    out: &mut Vec<(DisplayStatus, Option<ReasonCode>)>,
) {
    out.clear();
    if let Some(attempt) = history.attempt(attempt_id) {
        out.extend(
            attempt
                .servers
                .iter()
                .map(|r| (r.status, r.reason_code.clone())),
        );
    }
}

/// Row-status events for every row whose status or reason differs from `before`.
pub(crate) fn row_changes(
    history: &AttachmentHistory,
    live: &AttemptLive,
    before: &[(DisplayStatus, Option<ReasonCode>)],
    out: &mut Vec<HubEvent>,
) {
    let Some(attempt) = history.attempt(live.owner.attempt_id()) else {
        return;
    };
    for (i, row) in attempt.servers.iter().enumerate() {
        let changed = before
            .get(i)
            .is_none_or(|(status, reason)| *status != row.status || *reason != row.reason_code);
        if changed {
            out.push(HubEvent::RowStatus {
                owner: owner_of(live),
                server: row.name.clone(),
                status: row.status,
                reason_code: row.reason_code.clone(),
            });
        }
    }
}

#[derive(Default)]
pub(crate) struct Subscribers {
    pub(crate) list: std::sync::RwLock<Vec<Arc<dyn HubSubscriber>>>,
    pub(crate) any: AtomicBool,
}

impl Subscribers {
    pub(crate) fn active(&self) -> bool {
        self.any.load(Ordering::Acquire)
    }

    pub(crate) fn deliver(&self, events: Vec<HubEvent>) {
        if events.is_empty() {
            return;
        }
        let list = self.list.read().unwrap_or_else(|p| p.into_inner()).clone();
        for event in events {
            let event = Arc::new(event);
            for subscriber in &list {
                subscriber.observe(&event);
            }
        }
    }
}
