//! tether-hub: the live host machinery around tether-core's pure reducer.
//! Core holds the contract; this crate holds what runs: sessions, sinks, the
//! drain thread, the write-behind persister, subscribers, counters and the clock.
//!
//! - [`Hub::begin_attempt`] plans through the registry, publishes configured
//!   evidence plus the per-server decisions, and supersedes the current attempt
//!   at once.
//! - Each attempt gets an [`EvidenceSink`] bound to it. Publishing is a
//!   non-blocking `try_send` into one bounded queue; a full queue drops the
//!   event and counts it. The sink stamps ownership; the evidence type has no
//!   ownership fields to forge.
//! - One drain thread reduces queued evidence in batches and publishes one
//!   snapshot per changed session per batch to subscribers (`tokio::sync::watch`:
//!   a slow subscriber simply sees the latest snapshot).
//!
//! Its invariants are written once, in ARCHITECTURE.md (`hub/`), each
//! with the test that checks it.

#![warn(missing_docs)]

use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc::{
    Receiver, RecvTimeoutError, SyncSender, TryRecvError, TrySendError, sync_channel,
};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::{oneshot, watch};

use tether_core::history::AttachmentHistory;
use tether_core::inventory::InventoryDocument;
use tether_core::model::{Evidence, Timestamp, ToolCatalog};
use tether_core::observer::plan;
use tether_core::owner::{AttemptId, Owner};
use tether_core::plan::{AgentCapabilities, DriveMode, Plan, PlanContext};
use tether_core::reducer::{
    AttemptKey, AttemptStart, HistoryEvent, Reduced, Rejection, RowNames, begin_attempt, reduce,
    sanitize_evidence,
};
use tether_core::registry::Registry;
use tether_core::sanitize::Scrubber;
use tether_core::spec::ServerSpec;
use tether_core::store::{Store, StoreError};
use tether_core::vocab::{DisplayStatus, ReasonCode, Transport, Trigger};

mod drain;
mod persist;
mod sink;
mod subscriber;

use drain::*;
use persist::*;
pub use persist::{Counter, StoreCounters};
use sink::{AttemptLive, Command};
pub use sink::{EvidenceSink, PublishError};
use subscriber::*;
pub use subscriber::{EventOwner, HubEvent, HubSubscriber};

/// The wall clock now: the one place host machinery reads it for evidence
/// and attempts (core never reads the clock).
pub fn now() -> Timestamp {
    Timestamp::from_system(std::time::SystemTime::now())
}

/// Tunables for a hub.
#[derive(Debug, Clone, Copy)]
pub struct HubConfig {
    /// Capacity of the evidence queue shared by every sink.
    pub queue_capacity: usize,
    /// Most commands reduced under one lock acquisition.
    pub batch_limit: usize,
    /// With a store: bursts coalesce, and the latest state is written within
    /// this interval (plus the write itself).
    pub persist_interval: Duration,
}

impl Default for HubConfig {
    fn default() -> Self {
        HubConfig {
            queue_capacity: 4096,
            batch_limit: 512,
            persist_interval: Duration::from_millis(250),
        }
    }
}

/// What a host asks for when an agent is about to receive MCP servers.
#[derive(Debug, Clone)]
pub struct AttemptRequest {
    /// Whose the attempt is: the backend's task, session and execution.
    pub owner: Owner,
    /// Agent kind (selects the plugin).
    pub agent_kind: String,
    /// How the agent is driven.
    pub drive_mode: DriveMode,
    /// Host's agent id.
    pub agent_id: Option<String>,
    /// Agent profile.
    pub agent_profile_id: Option<String>,
    /// What starts the attempt.
    pub trigger: Trigger,
    /// What the agent advertised.
    pub capabilities: AgentCapabilities,
    /// Ask for strict MCP configuration.
    pub strict: bool,
    /// The configured servers (with secrets; never stored).
    pub servers: Vec<ServerSpec>,
}

impl AttemptRequest {
    /// A request with no agent id, profile or capabilities yet.
    pub fn new(
        owner: Owner,
        agent_kind: impl Into<String>,
        drive_mode: DriveMode,
        trigger: Trigger,
        servers: Vec<ServerSpec>,
    ) -> Self {
        AttemptRequest {
            owner,
            agent_kind: agent_kind.into(),
            drive_mode,
            agent_id: None,
            agent_profile_id: None,
            trigger,
            capabilities: AgentCapabilities::default(),
            strict: false,
            servers,
        }
    }
}

/// A begun attempt: its id, its plan (to deliver) and its sink (to report).
#[derive(Debug)]
pub struct AttemptHandle {
    /// Backend-owned attempt id.
    pub attempt_id: String,
    /// One decision per configured server.
    pub plan: Plan,
    /// The only way to publish evidence for this attempt.
    pub sink: EvidenceSink,
}

/// Why the hub refused a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HubError {
    /// The reducer refused the event.
    #[error(transparent)]
    Rejected(#[from] Rejection),
    /// The session is not known to this hub.
    #[error("session {0} is not known to this hub; begin an attempt first")]
    UnknownSession(String),
}

struct Shared {
    registry: Registry,
    sessions: Mutex<HashMap<String, Slot>>,
    persist: Option<Arc<Persister>>,
    subscribers: Subscribers,
    dropped: Arc<AtomicU64>,
    unattributed: Arc<AtomicU64>,
}

impl Shared {
    fn sessions(&self) -> MutexGuard<'_, HashMap<String, Slot>> {
        // A panic while holding the lock must not take observation down with it.
        self.sessions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Live per-session attachment state for a host.
pub struct Hub {
    shared: Arc<Shared>,
    tx: SyncSender<Command>,
    id_seed: u64,
    id_counter: AtomicU64,
}

impl Drop for Hub {
    fn drop(&mut self) {
        // Everything reduced so far reaches the store before the hub goes.
        self.flush_blocking();
        if let Some(persist) = &self.shared.persist {
            // The flush above marked every change pending; write them (and
            // give failed writes a last try), then stop.
            persist.lock().shutdown = true;
            persist.wake.notify_all();
            persist.wait_stopped();
        }
    }
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub").finish_non_exhaustive()
    }
}

impl Hub {
    /// A hub over the given plugins, with default tunables.
    pub fn new(registry: Registry) -> Self {
        Hub::with_config(registry, HubConfig::default())
    }

    /// A hub with explicit tunables. Starts one drain thread, which ends when
    /// the hub and every sink are dropped.
    pub fn with_config(registry: Registry, config: HubConfig) -> Self {
        Hub::build(registry, config, None)
    }

    /// A hub that writes every session's history through to `store`, at most
    /// once per `config.persist_interval` per session (the bound on how late
    /// the latest state lands). Store failures are logged, never fatal.
    pub fn with_store(registry: Registry, config: HubConfig, store: Arc<dyn Store>) -> Self {
        let persist = Arc::new(Persister {
            store,
            interval: config.persist_interval,
            state: Mutex::new(PersistState::default()),
            wake: Condvar::new(),
            idle: Condvar::new(),
            failures: Arc::default(),
            stale: Arc::default(),
            behind: Arc::default(),
        });
        let writer = Arc::clone(&persist);
        std::thread::Builder::new()
            .name("tether-hub-store".into())
            .spawn(move || writer.run())
            .expect("spawning the hub's store thread");
        Hub::build(registry, config, Some(persist))
    }

    fn build(registry: Registry, config: HubConfig, persist: Option<Arc<Persister>>) -> Self {
        let (tx, rx) = sync_channel(config.queue_capacity.max(1));
        let shared = Arc::new(Shared {
            registry,
            sessions: Mutex::new(HashMap::new()),
            persist,
            subscribers: Subscribers::default(),
            dropped: Arc::new(AtomicU64::new(0)),
            unattributed: Arc::new(AtomicU64::new(0)),
        });
        let drain_shared = Arc::clone(&shared);
        let batch_limit = config.batch_limit.max(1);
        std::thread::Builder::new()
            .name("tether-hub-drain".into())
            .spawn(move || drain(drain_shared, rx, batch_limit))
            .expect("spawning the hub's drain thread");
        Hub {
            shared,
            tx,
            id_seed: RandomState::new().hash_one(now().0),
            id_counter: AtomicU64::new(0),
        }
    }

    /// The plugins this hub plans with.
    pub fn registry(&self) -> &Registry {
        &self.shared.registry
    }

    fn next_attempt_id(&self) -> String {
        let n = self.id_counter.fetch_add(1, Ordering::Relaxed);
        let mixed = RandomState::new().hash_one((self.id_seed, n));
        format!("att_{:08x}{:08x}", n as u32, mixed as u32)
    }

    /// Plans and begins a new attempt, superseding the session's current one at once.
    pub fn begin_attempt(&self, request: AttemptRequest) -> Result<AttemptHandle, HubError> {
        self.begin_attempt_at(request, now())
    }

    /// [`begin_attempt`](Self::begin_attempt) with an explicit time (tests, replays).
    pub fn begin_attempt_at(
        &self,
        request: AttemptRequest,
        at: Timestamp,
    ) -> Result<AttemptHandle, HubError> {
        let ctx = PlanContext {
            agent_kind: request.agent_kind.clone(),
            drive_mode: request.drive_mode,
            capabilities: request.capabilities,
            strict: request.strict,
        };
        let observer = self
            .shared
            .registry
            .observer_for(&request.agent_kind, request.drive_mode);
        let plan = plan(observer.map(|o| o.as_ref()), &request.servers, &ctx);
        let attempt_id = self.next_attempt_id();
        let trigger = request.trigger.clone();
        let rows = plan.row_names();
        let session_id = request.owner.session.as_str().to_owned();
        let start = AttemptStart {
            attempt_id: attempt_id.as_str().into(),
            owner: request.owner,
            agent_kind: request.agent_kind,
            agent_id: request.agent_id,
            agent_profile_id: request.agent_profile_id,
            trigger: request.trigger,
            at,
            servers: plan.rows_named(&rows),
        };
        let mut sessions = self.shared.sessions();
        let slot = sessions.entry(session_id).or_insert_with(|| {
            Slot::new(AttachmentHistory::new(
                start.owner.task.as_str(),
                start.owner.session.as_str(),
            ))
        });
        slot.fold_drops();
        let key = begin_attempt(&mut slot.history, &start)?;
        let live = Arc::new(AttemptLive {
            owner: Arc::new(EventOwner {
                owner: start.owner.clone(),
                attempt: start.attempt_id.clone(),
                agent_kind: start.agent_kind.clone(),
            }),
            key,
            hub_dropped: Arc::clone(&self.shared.dropped),
            superseded: AtomicBool::new(false),
            dropped: AtomicU32::new(0),
            folded: AtomicU32::new(0),
            scrubber: plan.scrubber(),
            rows: Mutex::new(rows),
        });

        for old in slot.live.drain(..) {
            old.superseded.store(true, Ordering::Release);
        }
        slot.live.push(Arc::clone(&live));
        slot.dirty = true;
        let mut told = Vec::new();
        if self.shared.subscribers.active() {
            told.push(HubEvent::AttemptBegun {
                owner: owner_of(&live),
                trigger,
            });
            // What the start itself recorded: configured and decision evidence.
            if let Some(attempt) = slot.history.attempt(live.owner.attempt_id()) {
                for evidence in &attempt.evidence {
                    told.push(HubEvent::Evidence {
                        owner: owner_of(&live),
                        evidence: Box::new(evidence.clone()),
                    });
                }
            }
            row_changes(&slot.history, &live, &[], &mut told);
        }
        slot.publish_if_dirty(self.shared.persist.as_deref());
        drop(sessions);
        self.shared.subscribers.deliver(told);

        Ok(AttemptHandle {
            attempt_id,
            plan,
            sink: EvidenceSink {
                live,
                tx: self.tx.clone(),
            },
        })
    }

    /// The session's history as it stands (queued evidence may still be in flight).
    pub fn snapshot(&self, session_id: &str) -> Option<AttachmentHistory> {
        let mut sessions = self.shared.sessions();
        let slot = sessions.get_mut(session_id)?;
        slot.fold_drops();
        slot.publish_if_dirty(self.shared.persist.as_deref());
        Some(slot.history.clone())
    }

    /// A session's latest history, shared: the one snapshot subscribers
    /// hold, cloned from the live history only when it changed since the
    /// last one was taken. Readers of many sessions (a fleet page over
    /// thousands) pay for what changed, not for every session.
    pub fn latest(&self, session_id: &str) -> Option<Arc<AttachmentHistory>> {
        let mut sessions = self.shared.sessions();
        let slot = sessions.get_mut(session_id)?;
        slot.fold_drops();
        slot.publish_if_dirty(self.shared.persist.as_deref());
        // Every published change raises the revision, so an equal revision
        // is the same history.
        if slot.watch.borrow().revision != slot.history.revision {
            slot.watch.send_replace(Arc::new(slot.history.clone()));
        }
        Some(Arc::clone(&slot.watch.borrow()))
    }

    /// Every session this hub knows.
    pub fn sessions(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.shared.sessions().keys().cloned().collect();
        ids.sort();
        ids
    }

    /// Live snapshots of one session; the receiver always holds the latest.
    pub fn subscribe(
        &self,
        session_id: &str,
    ) -> Result<watch::Receiver<Arc<AttachmentHistory>>, HubError> {
        let mut sessions = self.shared.sessions();
        let slot = sessions
            .get_mut(session_id)
            .ok_or_else(|| HubError::UnknownSession(session_id.to_owned()))?;
        slot.fold_drops();
        slot.dirty = false;
        slot.watch.send_replace(Arc::new(slot.history.clone()));
        Ok(slot.watch.subscribe())
    }

    /// Forgets a session: its sinks are rejected from now on and subscribers see the end.
    pub fn remove(&self, session_id: &str) -> Option<AttachmentHistory> {
        let slot = self.shared.sessions().remove(session_id)?;
        if let Some(persist) = &self.shared.persist {
            persist.mark(session_id, None);
        }
        for live in &slot.live {
            live.superseded.store(true, Ordering::Release);
        }
        Some(slot.history)
    }

    /// Lets a session go from memory while keeping what a store holds of it:
    /// unlike [`remove`](Self::remove), nothing is deleted from the store, and
    /// a write already scheduled still lands. Its sinks stop (superseded).
    /// For hosts that bound how many sessions they keep live.
    pub fn release(&self, session_id: &str) -> bool {
        let Some(slot) = self.shared.sessions().remove(session_id) else {
            return false;
        };
        for live in &slot.live {
            live.superseded.store(true, Ordering::Release);
        }
        true
    }

    /// Puts stored histories back (after a restart). Sessions already live are
    /// left alone; restored ones have no live sink until a new attempt begins.
    pub fn restore(&self, histories: Vec<AttachmentHistory>) -> usize {
        let mut sessions = self.shared.sessions();
        let mut restored = 0;
        for history in histories {
            if !sessions.contains_key(&history.session_id) {
                sessions.insert(history.session_id.clone(), Slot::new(history));
                restored += 1;
            }
        }
        restored
    }

    /// The store this hub writes through to (`None` without one): where a
    /// host keeps what is counted beside a session's history, such as the
    /// telemetry answers that could not be parsed.
    pub fn store(&self) -> Option<Arc<dyn Store>> {
        self.shared.persist.as_ref().map(|p| Arc::clone(&p.store))
    }

    /// Puts one session back from this hub's store, when the store holds it
    /// and the hub does not: a harness session seen again (after a restart,
    /// or after `tether sessions import` stored it meanwhile) continues from
    /// what is stored, so its next writes are newer than the stored one
    /// instead of refused as stale. Reads the store on the caller's thread
    /// (never on an agent's path). False without a store, with nothing
    /// stored, or for a live session.
    pub fn restore_from_store(&self, session_id: &str) -> bool {
        let Some(persist) = &self.shared.persist else {
            return false;
        };
        if self.shared.sessions().contains_key(session_id) {
            return false;
        }
        match persist.store.load(session_id) {
            Ok(Some(history)) => self.restore(vec![history]) == 1,
            Ok(None) => false,
            Err(err) => {
                tracing::warn!(%err, "could not read a stored session back");
                false
            }
        }
    }

    /// Adds a subscriber: from now on it is told every attempt begun, every evidence
    /// event accepted and every row status entered (see [`HubSubscriber`]).
    pub fn add_subscriber(&self, subscriber: Arc<dyn HubSubscriber>) {
        self.shared
            .subscribers
            .list
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .push(subscriber);
        self.shared.subscribers.any.store(true, Ordering::Release);
    }

    /// Evidence events every sink of this hub dropped to a full queue so far.
    pub fn evidence_dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }

    /// A live view of [`evidence_dropped`](Self::evidence_dropped), for an
    /// exporter that reads it later (an observable counter).
    pub fn evidence_dropped_counter(&self) -> Counter {
        Counter(Arc::clone(&self.shared.dropped))
    }

    /// Evidence events that named a server which is no row of their attempt,
    /// so far (each is counted in its attempt's `unattributed_evidence`).
    pub fn evidence_unattributed(&self) -> u64 {
        self.shared.unattributed.load(Ordering::Relaxed)
    }

    /// A live view of [`evidence_unattributed`](Self::evidence_unattributed),
    /// for an exporter that reads it later.
    pub fn evidence_unattributed_counter(&self) -> Counter {
        Counter(Arc::clone(&self.shared.unattributed))
    }

    /// Blocks until every change so far has been written to the store.
    pub fn flush_store(&self) {
        if let Some(persist) = &self.shared.persist {
            persist.wait_idle();
        }
    }

    /// Store writes refused as stale so far (each logged): the store held a
    /// newer revision of the session, written by another writer.
    pub fn store_stale_refusals(&self) -> u64 {
        self.shared
            .persist
            .as_ref()
            .map_or(0, |p| p.stale.load(Ordering::Relaxed))
    }

    /// Sessions whose stored row is behind because their latest write
    /// failed; each is retried (backoff from `persist_interval` doubling to
    /// 10 s) until a write of it lands. Nonzero while the store is down.
    pub fn store_retries_pending(&self) -> usize {
        self.shared.persist.as_ref().map_or(0, |p| {
            usize::try_from(p.behind.load(Ordering::Relaxed)).unwrap_or(usize::MAX)
        })
    }

    /// Live views of the store counters ([`store_failures`](Self::store_failures),
    /// [`store_stale_refusals`](Self::store_stale_refusals),
    /// [`store_retries_pending`](Self::store_retries_pending)), for an
    /// exporter that reads them later; `None` without a store.
    pub fn store_counters(&self) -> Option<StoreCounters> {
        self.shared.persist.as_ref().map(|p| StoreCounters {
            failures: Counter(Arc::clone(&p.failures)),
            stale: Counter(Arc::clone(&p.stale)),
            behind: Counter(Arc::clone(&p.behind)),
        })
    }

    /// Store writes that failed so far (each logged; stale refusals apart).
    pub fn store_failures(&self) -> u64 {
        self.shared
            .persist
            .as_ref()
            .map_or(0, |p| p.failures.load(Ordering::Relaxed))
    }

    /// Waits until everything queued before this call has been reduced.
    pub async fn flush(&self) {
        let (done_tx, done_rx) = oneshot::channel();
        let mut command = Command::FlushAsync(done_tx);
        loop {
            match self.tx.try_send(command) {
                Ok(()) => break,
                Err(TrySendError::Full(back)) => {
                    command = back;
                    tokio::task::yield_now().await;
                }
                Err(TrySendError::Disconnected(_)) => return,
            }
        }
        let _ = done_rx.await;
    }

    /// [`flush`](Self::flush) for synchronous callers (never from async code).
    pub fn flush_blocking(&self) {
        let (done_tx, done_rx) = sync_channel(1);
        if self.tx.send(Command::FlushBlocking(done_tx)).is_ok() {
            let _ = done_rx.recv();
        }
    }
}

#[cfg(test)]
mod subscriber_tests {
    use super::*;
    use tether_core::spec::{Endpoint, ServerSpec};
    use tether_core::vocab::{EvidenceKind, ServerSource};

    #[derive(Default)]
    struct Collect(Mutex<Vec<Arc<HubEvent>>>);

    impl HubSubscriber for Collect {
        fn observe(&self, event: &Arc<HubEvent>) {
            self.0
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(Arc::clone(event));
        }
    }

    fn request(session: &str) -> AttemptRequest {
        AttemptRequest::new(
            Owner {
                task: "task".into(),
                session: session.into(),
                execution: "exec".into(),
            },
            "kind",
            DriveMode::Acp,
            Trigger::SessionNew,
            vec![ServerSpec::new(
                "srv",
                ServerSource::Host,
                Endpoint::Http {
                    url: "http://127.0.0.1:1/mcp".into(),
                    headers: vec![],
                },
            )],
        )
    }

    #[test]
    fn subscribers_see_the_start_accepted_evidence_and_status_changes_but_no_stale_evidence() {
        let hub = Hub::new(Registry::empty());
        let subscriber = Arc::new(Collect::default());
        hub.add_subscriber(subscriber.clone());
        let first = hub.begin_attempt(request("s")).expect("begin");
        let second = hub.begin_attempt(request("s")).expect("supersede");
        // The first attempt is superseded: its evidence is refused, so no subscriber sees it.
        assert!(
            first
                .sink
                .publish(Evidence::new(EvidenceKind::Delivered, now()).server("srv"))
                .is_err()
        );
        second
            .sink
            .publish(
                Evidence::new(EvidenceKind::ExplicitError, now())
                    .server("srv")
                    .reason(ReasonCode::ProtocolError, Some("boom".into())),
            )
            .expect("publish");
        hub.flush_blocking();
        let events = subscriber
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let begun = events
            .iter()
            .filter(|e| matches!(***e, HubEvent::AttemptBegun { .. }))
            .count();
        assert_eq!(begun, 2);
        let evidence: Vec<(&str, EvidenceKind)> = events
            .iter()
            .filter_map(|e| match &**e {
                HubEvent::Evidence { owner, evidence } => {
                    Some((owner.attempt_id(), evidence.kind.clone()))
                }
                _ => None,
            })
            .collect();
        assert!(evidence.contains(&(second.attempt_id.as_str(), EvidenceKind::ExplicitError)));
        assert!(
            !evidence
                .iter()
                .any(|(a, k)| *a == first.attempt_id && *k == EvidenceKind::Delivered),
            "{evidence:?}"
        );
        let failed = events.iter().any(|e| {
            matches!(&**e, HubEvent::RowStatus { owner, status: DisplayStatus::Failed, .. }
                if owner.attempt_id() == second.attempt_id)
        });
        assert!(failed, "the row's change to failed is told");
    }

    #[test]
    fn every_sinks_drops_add_up_in_the_hub_counter() {
        let hub = Hub::with_config(
            Registry::empty(),
            HubConfig {
                queue_capacity: 1,
                ..HubConfig::default()
            },
        );
        let counter = hub.evidence_dropped_counter();
        let a = hub.begin_attempt(request("a")).expect("a");
        let b = hub.begin_attempt(request("b")).expect("b");
        for _ in 0..5_000 {
            let _ = a
                .sink
                .publish(Evidence::new(EvidenceKind::Delivered, now()));
            let _ = b
                .sink
                .publish(Evidence::new(EvidenceKind::Delivered, now()));
        }
        let total = u64::from(a.sink.dropped()) + u64::from(b.sink.dropped());
        assert!(total > 0, "a one-slot queue drops under a flood");
        assert_eq!(hub.evidence_dropped(), total);
        assert_eq!(counter.get(), total);
    }
}
