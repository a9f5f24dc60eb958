//! Harness sessions live in a hub: one attempt per harness session (begun
//! again for a new process), its rows the servers today's configuration
//! gives the harness, bounded. The collector and `tether tap` both land
//! what they read here.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use tether_core::model::{Evidence, Timestamp};
use tether_core::owner::Owner;
use tether_core::plan::DriveMode;
use tether_core::spec::ServerSpec;
use tether_core::vocab::{EvidenceKind, Provenance, Trigger};
use tether_hub::{AttemptRequest, EvidenceSink, Hub};

pub use tether_core::records::session_id;

/// The most live harness sessions kept; past it the oldest is let go (its
/// history stays in the hub's store, if it has one).
pub const MAX_LIVE_SESSIONS: usize = 1024;

struct Live {
    process: Option<String>,
    sink: EvidenceSink,
}

/// The live attempts of harness sessions (`KIND:ID`) in one hub.
pub struct LiveSessions {
    hub: Arc<Hub>,
    configured: HashMap<String, Vec<ServerSpec>>,
    names: HashMap<String, Vec<String>>,
    live: HashMap<(String, String), Live>,
    order: VecDeque<(String, String)>,
    evicted_now: Vec<(String, String)>,
    attempts: u64,
    evicted: u64,
}

impl std::fmt::Debug for LiveSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveSessions")
            .field("live", &self.live.len())
            .field("attempts", &self.attempts)
            .finish_non_exhaustive()
    }
}

impl LiveSessions {
    /// Sessions in `hub`, each begun with the servers today's configuration
    /// gives its harness (`configured[kind]`).
    pub fn new(hub: Arc<Hub>, configured: HashMap<String, Vec<ServerSpec>>) -> Self {
        let names = configured
            .iter()
            .map(|(kind, specs)| (kind.clone(), specs.iter().map(|s| s.name.clone()).collect()))
            .collect();
        LiveSessions {
            hub,
            configured,
            names,
            live: HashMap::new(),
            order: VecDeque::new(),
            evicted_now: Vec::new(),
            attempts: 0,
            evicted: 0,
        }
    }

    /// The server names today's configuration gives `kind`.
    pub fn names(&self, kind: &str) -> &[String] {
        self.names.get(kind).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The Tether session ids begun, oldest first.
    pub fn sessions(&self) -> Vec<String> {
        self.order
            .iter()
            .map(|(kind, session)| session_id(kind, session))
            .collect()
    }

    /// Attempts begun.
    pub fn attempts(&self) -> u64 {
        self.attempts
    }

    /// Sessions let go past [`MAX_LIVE_SESSIONS`].
    pub fn evicted(&self) -> u64 {
        self.evicted
    }

    /// The sessions let go since the last call, as (kind, harness session).
    pub fn take_evicted(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.evicted_now)
    }

    /// The live attempt of `kind`'s `session`, begun (again, for a new
    /// process) when needed, at `at`; the harness ran it, as `provenance`
    /// shows (its `session_accepted`).
    pub fn sink(
        &mut self,
        kind: &str,
        session: &str,
        process: Option<String>,
        at: Timestamp,
        provenance: Provenance,
    ) -> Option<EvidenceSink> {
        let key = (kind.to_owned(), session.to_owned());
        if let Some(live) = self.live.get(&key) {
            let same = process.is_none() || live.process.is_none() || live.process == process;
            if same && live.sink.is_current() {
                return Some(live.sink.clone());
            }
        }
        let id = session_id(kind, session);
        // A session the store already holds (imported, or from before a
        // restart) goes on from there: a fresh history's writes would be
        // refused as older than the stored one.
        self.hub.restore_from_store(&id);
        let servers = self.configured.get(kind).cloned().unwrap_or_default();
        let owner = Owner {
            task: kind.into(),
            session: id.as_str().into(),
            execution: process.clone().unwrap_or_else(|| "1".into()).into(),
        };
        let request = AttemptRequest::new(
            owner,
            kind,
            DriveMode::Passthrough,
            Trigger::HarnessSession,
            servers,
        );
        let handle = match self.hub.begin_attempt_at(request, at) {
            Ok(handle) => handle,
            Err(err) => {
                tracing::warn!(%err, "could not begin a harness session");
                return None;
            }
        };
        self.attempts += 1;
        // Accepted: the harness ran this session (what it sent says so).
        let _ = handle
            .sink
            .publish(Evidence::new(EvidenceKind::SessionAccepted, at).provenance(provenance));
        let sink = handle.sink.clone();
        if self
            .live
            .insert(
                key.clone(),
                Live {
                    process,
                    sink: handle.sink,
                },
            )
            .is_none()
        {
            self.order.push_back(key);
            while self.order.len() > MAX_LIVE_SESSIONS {
                if let Some(old) = self.order.pop_front() {
                    self.live.remove(&old);
                    // Memory stays bounded: the oldest session leaves the hub
                    // (a store, if the hub has one, keeps its history).
                    self.hub.flush_blocking();
                    self.hub.release(&session_id(&old.0, &old.1));
                    self.evicted += 1;
                    self.evicted_now.push(old);
                }
            }
        }
        Some(sink)
    }
}
