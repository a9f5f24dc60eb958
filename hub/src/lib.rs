//! tether-hub: the live host machinery around tether-core's pure reducer.
//! Core holds the contract; this crate holds what runs: sessions, sinks, the
//! drain thread, the write-behind persister, taps, counters and the clock.
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
//! Its invariants (publishing never blocks; persistence never changes live
//! state; only the hub stamps ownership) are kept in ARCHITECTURE.md, each
//! with the test that checks it.

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
use tether_core::vocab::{DisplayStatus, ReasonCode, Trigger};

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

/// Why one publish did not enter the queue. Publishing never blocks either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PublishError {
    /// A newer attempt superseded this sink's attempt.
    #[error("the attempt was superseded; evidence rejected")]
    Superseded,
    /// The queue was full; the event was dropped and counted.
    #[error("the evidence queue is full; event dropped and counted")]
    Full,
    /// The hub is gone.
    #[error("the hub has shut down")]
    Closed,
    /// The document is over its bound (a configuration snapshot of more than
    /// 256 rows); nothing was queued. Filter it (for example by harness) first.
    #[error("the document is over its bound; filter it first")]
    TooLarge,
}

/// Live state shared by one attempt's sinks and the drain.
#[derive(Debug)]
struct AttemptLive {
    /// Whose this attempt is: its session and attempt ids (and, for taps,
    /// the rest of its ownership), built once and shared by every event.
    owner: Arc<EventOwner>,
    /// The attempt's key from the reducer: the stamp every event carries.
    key: AttemptKey,
    /// The hub's count of every sink's drops (for exporters).
    hub_dropped: Arc<AtomicU64>,
    superseded: AtomicBool,
    dropped: AtomicU32,
    folded: AtomicU32,
    scrubber: Scrubber,
    /// Which row each reported server name belongs to.
    rows: RowNames,
}

// Observe is the hot variant; boxing it would add an allocation per publish
// to save space only in the rare flush commands.
#[allow(clippy::large_enum_variant)]
enum Command {
    Observe {
        live: Arc<AttemptLive>,
        evidence: Evidence,
    },
    Catalog {
        live: Arc<AttemptLive>,
        server: String,
        catalog: Box<ToolCatalog>,
    },
    ConfigSnapshot {
        live: Arc<AttemptLive>,
        snapshot: Box<InventoryDocument>,
    },
    FlushBlocking(SyncSender<()>),
    FlushAsync(oneshot::Sender<()>),
}

/// Publishes evidence for exactly one attempt. Cheap to clone.
#[derive(Clone, Debug)]
pub struct EvidenceSink {
    live: Arc<AttemptLive>,
    tx: SyncSender<Command>,
}

impl EvidenceSink {
    /// Queues evidence without blocking. Ownership is stamped from the sink.
    pub fn publish(&self, evidence: Evidence) -> Result<(), PublishError> {
        let result = self.enqueue(Command::Observe {
            live: Arc::clone(&self.live),
            evidence,
        });
        if result == Err(PublishError::Full) {
            self.live.dropped.fetch_add(1, Ordering::Relaxed);
            self.live.hub_dropped.fetch_add(1, Ordering::Relaxed);
        }
        result
    }

    /// Queues one command for this sink's attempt, without blocking.
    fn enqueue(&self, command: Command) -> Result<(), PublishError> {
        if self.live.superseded.load(Ordering::Acquire) {
            return Err(PublishError::Superseded);
        }
        self.tx.try_send(command).map_err(|e| match e {
            TrySendError::Full(_) => PublishError::Full,
            TrySendError::Disconnected(_) => PublishError::Closed,
        })
    }

    /// Queues the tool catalog a host's own server served, without blocking.
    /// Catalogs are not evidence: they never enter the timeline.
    pub fn publish_catalog(
        &self,
        server: impl Into<String>,
        catalog: ToolCatalog,
    ) -> Result<(), PublishError> {
        self.enqueue(Command::Catalog {
            live: Arc::clone(&self.live),
            server: server.into(),
            catalog: Box::new(catalog),
        })
    }

    /// Attaches what the harness's configuration held (a `tether inventory`
    /// snapshot, usually filtered with
    /// [`InventoryDocument::for_harness`](InventoryDocument::for_harness))
    /// to this attempt, without blocking, so the session's history keeps what
    /// was visible at the time. In-memory endpoints are dropped here; only the
    /// sanitized rows are kept.
    pub fn attach_config_snapshot(&self, snapshot: &InventoryDocument) -> Result<(), PublishError> {
        // Refused before the copy when the attempt is over or the snapshot too big.
        if !self.is_current() {
            return Err(PublishError::Superseded);
        }
        if snapshot.rows.len() > tether_core::reducer::MAX_SNAPSHOT_ROWS {
            return Err(PublishError::TooLarge);
        }
        let mut snapshot = snapshot.clone();
        for row in &mut snapshot.rows {
            row.endpoint = None;
        }
        self.enqueue(Command::ConfigSnapshot {
            live: Arc::clone(&self.live),
            snapshot: Box::new(snapshot),
        })
    }

    /// The attempt this sink is bound to.
    pub fn attempt_id(&self) -> &str {
        self.live.owner.attempt_id()
    }

    /// The session this sink is bound to.
    pub fn session_id(&self) -> &str {
        self.live.owner.session_id()
    }

    /// Whether the attempt is still current.
    pub fn is_current(&self) -> bool {
        !self.live.superseded.load(Ordering::Acquire)
    }

    /// Events this sink's attempt lost to a full queue so far.
    pub fn dropped(&self) -> u32 {
        self.live.dropped.load(Ordering::Relaxed)
    }
}

// === Taps: what exporters see ===

/// Who an accepted event belongs to (the sink's stamp). Only the hub makes
/// one; exporters read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventOwner {
    owner: Owner,
    attempt: AttemptId,
    agent_kind: String,
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

/// What a [`HubTap`] is told, after the hub accepted it. Every string has
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
pub trait HubTap: Send + Sync {
    /// One accepted event (shared by every tap: keep the `Arc`, not a copy).
    fn observe(&self, event: &Arc<HubEvent>);
}

fn owner_of(live: &AttemptLive) -> Arc<EventOwner> {
    Arc::clone(&live.owner)
}

/// The status and reason of each row of one attempt (for change detection).
fn row_states(
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
fn row_changes(
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
struct Taps {
    list: std::sync::RwLock<Vec<Arc<dyn HubTap>>>,
    any: AtomicBool,
}

impl Taps {
    fn active(&self) -> bool {
        self.any.load(Ordering::Acquire)
    }

    fn deliver(&self, events: Vec<HubEvent>) {
        if events.is_empty() {
            return;
        }
        let list = self.list.read().unwrap_or_else(|p| p.into_inner()).clone();
        for event in events {
            let event = Arc::new(event);
            for tap in &list {
                tap.observe(&event);
            }
        }
    }
}

struct Slot {
    history: AttachmentHistory,
    watch: watch::Sender<Arc<AttachmentHistory>>,
    live: Vec<Arc<AttemptLive>>,
    dirty: bool,
}

impl Slot {
    fn new(history: AttachmentHistory) -> Self {
        let (watch, _) = watch::channel(Arc::new(history.clone()));
        Slot {
            history,
            watch,
            live: Vec::new(),
            dirty: false,
        }
    }

    /// Folds sink drops into the history; the reducer keeps it idempotent.
    fn fold_drops(&mut self) {
        for live in &self.live {
            let total = live.dropped.load(Ordering::Relaxed);
            if total > live.folded.load(Ordering::Relaxed) {
                let event = HistoryEvent::TransitDrops {
                    key: live.key.clone(),
                    total,
                };
                if reduce(&mut self.history, &event).is_ok() {
                    self.dirty = true;
                }
                live.folded.store(total, Ordering::Relaxed);
            }
        }
    }

    fn publish_if_dirty(&mut self, persist: Option<&Persister>) {
        if self.dirty {
            self.dirty = false;
            // Every published change is a new revision (see `AttachmentHistory::revision`).
            self.history.revision = self.history.revision.saturating_add(1);
            let wanted = self.watch.receiver_count() > 0 || persist.is_some();
            if wanted {
                let snapshot = Arc::new(self.history.clone());
                if let Some(persist) = persist {
                    persist.mark(&self.history.session_id, Some(Arc::clone(&snapshot)));
                }
                if self.watch.receiver_count() > 0 {
                    self.watch.send_replace(snapshot);
                }
            }
        }
    }
}

// === Write-through persistence ===

/// A live, read-only view of one of the hub's counters: an exporter reads
/// it when it likes; only the hub moves it.
#[derive(Debug, Clone)]
pub struct Counter(Arc<AtomicU64>);

impl Counter {
    /// The count now.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Live, read-only views of a hub's store counters (see [`Hub::store_counters`]).
#[derive(Debug, Clone)]
pub struct StoreCounters {
    /// Writes that failed so far (each retried).
    pub failures: Counter,
    /// Writes refused because the store held a newer revision.
    pub stale: Counter,
    /// Sessions whose stored row is behind, waiting for a retry to land.
    pub behind: Counter,
}

/// Sessions written per store transaction.
const WRITE_CHUNK: usize = 500;

/// Coalescing write-through to a [`Store`], on its own thread.
struct Persister {
    store: Arc<dyn Store>,
    interval: Duration,
    state: Mutex<PersistState>,
    wake: Condvar,
    idle: Condvar,
    failures: Arc<AtomicU64>,
    stale: Arc<AtomicU64>,
    /// Sessions whose stored row is behind because their latest write failed.
    behind: Arc<AtomicU64>,
}

/// The longest wait between retries of writes that failed.
const RETRY_MAX: Duration = Duration::from_secs(10);

#[derive(Default)]
struct PersistState {
    /// Latest state per session (`None`: remove the row). Latest wins.
    pending: HashMap<String, Option<Arc<AttachmentHistory>>>,
    /// Writes that failed (the store was down, say), retried with backoff
    /// until they land or a newer change of the session replaces them. Kept
    /// apart from `pending`, so a flush never waits on a store that is down.
    retry: HashMap<String, Option<Arc<AttachmentHistory>>>,
    /// The wait before the next retry: `interval`, doubling to [`RETRY_MAX`]
    /// while retries keep failing.
    retry_delay: Option<Duration>,
    /// When the failed writes go again.
    retry_due: Option<Instant>,
    /// The failed writes had their last try at shutdown.
    last_try: bool,
    /// The writer thread has returned.
    stopped: bool,
    /// Sessions whose latest write failed and has not landed since (a
    /// success, or a stale refusal: a newer row is stored, clears it).
    behind: std::collections::HashSet<String>,
    writing: bool,
    shutdown: bool,
}

impl Persister {
    fn lock(&self) -> MutexGuard<'_, PersistState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn mark(&self, session_id: &str, history: Option<Arc<AttachmentHistory>>) {
        let mut state = self.lock();
        // The newer change replaces any failed write waiting for a retry.
        state.retry.remove(session_id);
        state.pending.insert(session_id.to_owned(), history);
        drop(state);
        self.wake.notify_one();
    }

    fn run(&self) {
        /// Says the writer stopped, on every way out (a panicking store included).
        struct Stopped<'p>(&'p Persister);
        impl Drop for Stopped<'_> {
            fn drop(&mut self) {
                let mut state = self.0.lock();
                state.stopped = true;
                state.writing = false;
                drop(state);
                self.0.idle.notify_all();
            }
        }
        let _stopped = Stopped(self);
        loop {
            let mut state = self.lock();
            loop {
                // Failed writes whose backoff has passed join the next batch
                // (even while other sessions keep changing), unless a newer
                // change of the same session is already pending.
                // At shutdown, failed writes get one last try, whatever their backoff.
                let last_try = state.shutdown && !state.last_try;
                if last_try || state.retry_due.is_some_and(|due| Instant::now() >= due) {
                    state.last_try |= state.shutdown;
                    state.retry_due = None;
                    let retry = std::mem::take(&mut state.retry);
                    for (session_id, history) in retry {
                        state.pending.entry(session_id).or_insert(history);
                    }
                }
                if !state.pending.is_empty() || state.shutdown {
                    break;
                }
                state = match state.retry_due {
                    Some(due) if !state.retry.is_empty() => {
                        let wait = due.saturating_duration_since(Instant::now());
                        self.wake
                            .wait_timeout(state, wait)
                            .unwrap_or_else(|p| p.into_inner())
                            .0
                    }
                    _ => self.wake.wait(state).unwrap_or_else(|p| p.into_inner()),
                };
            }
            if state.pending.is_empty() && state.shutdown {
                if !state.retry.is_empty() {
                    tracing::warn!(
                        sessions = state.retry.len(),
                        "the hub stops with writes the store refused; those sessions keep their older stored rows"
                    );
                }
                return;
            }
            let shutting_down = state.shutdown;
            drop(state);
            // Let a burst gather: one write per session per interval, at most.
            if !shutting_down {
                std::thread::sleep(self.interval);
            }
            let mut state = self.lock();
            let batch = std::mem::take(&mut state.pending);
            state.writing = true;
            drop(state);
            let (saves, removes): (Vec<_>, Vec<_>) = batch
                .into_iter()
                .partition(|(_, history)| history.is_some());
            let mut saves: Vec<(String, Arc<AttachmentHistory>)> = saves
                .into_iter()
                .filter_map(|(id, history)| history.map(|h| (id, h)))
                .collect();
            // One order for every writer, so two hosts' transactions on the
            // same sessions lock their rows in the same order and never deadlock.
            saves.sort_by(|a, b| a.0.cmp(&b.0));
            // Bounded transactions: a burst of thousands of sessions is written
            // in chunks, each one commit.
            let mut failed: Vec<(String, Option<Arc<AttachmentHistory>>)> = Vec::new();
            let mut landed: Vec<String> = Vec::new();
            for chunk in saves.chunks(WRITE_CHUNK) {
                let histories: Vec<&AttachmentHistory> = chunk.iter().map(|(_, h)| &**h).collect();
                let results = self.store.save_batch(&histories);
                for ((session_id, history), result) in chunk.iter().zip(results) {
                    if self.account(session_id, result) {
                        failed.push((session_id.clone(), Some(Arc::clone(history))));
                    } else {
                        landed.push(session_id.clone());
                    }
                }
            }
            for (session_id, _) in removes {
                let result = self.store.remove(&session_id);
                if self.account(&session_id, result) {
                    failed.push((session_id, None));
                } else {
                    landed.push(session_id);
                }
            }
            let mut state = self.lock();
            // Backoff grows while any write keeps failing (a store that is
            // down, or one row it always refuses: retried every 10 s, logged).
            if failed.is_empty() {
                state.retry_delay = None;
            } else {
                let delay = state
                    .retry_delay
                    .map_or(self.interval, |last| (last * 2).min(RETRY_MAX));
                state.retry_delay = Some(delay);
                state.retry_due = Some(Instant::now() + delay);
            }
            for session_id in &landed {
                state.behind.remove(session_id);
            }
            for (session_id, history) in failed {
                state.behind.insert(session_id.clone());
                // A newer change already pending supersedes the failed one.
                if !state.pending.contains_key(&session_id) {
                    state.retry.insert(session_id, history);
                }
            }
            self.behind
                .store(state.behind.len() as u64, Ordering::Relaxed);
            state.writing = false;
            if state.pending.is_empty() {
                self.idle.notify_all();
            }
        }
    }

    /// Counts and logs one write's outcome; true when it failed in a way a
    /// retry can mend (not a stale refusal: a newer row is already stored).
    fn account(&self, session_id: &str, result: Result<(), StoreError>) -> bool {
        match result {
            Ok(()) => false,
            Err(StoreError::Stale { stored, attempted }) => {
                // Another writer holds a newer revision: ours is refused,
                // and live state is untouched.
                self.stale.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(
                    %session_id,
                    stored,
                    attempted,
                    "stale write refused: the store holds a newer revision of this session"
                );
                false
            }
            Err(err) => {
                // Live state is untouched; the write is retried with backoff
                // (or replaced by the session's next change).
                self.failures.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(%session_id, %err, "persisting attachment history failed; will retry");
                true
            }
        }
    }

    fn wait_idle(&self) {
        let mut state = self.lock();
        while (!state.pending.is_empty() || state.writing) && !state.stopped {
            state = self.idle.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Waits until the writer thread has stopped (after `shutdown`).
    fn wait_stopped(&self) {
        let mut state = self.lock();
        while !state.stopped {
            state = self.idle.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }
}

struct Shared {
    registry: Registry,
    sessions: Mutex<HashMap<String, Slot>>,
    persist: Option<Arc<Persister>>,
    taps: Taps,
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
            taps: Taps::default(),
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
            rows,
        });

        for old in slot.live.drain(..) {
            old.superseded.store(true, Ordering::Release);
        }
        slot.live.push(Arc::clone(&live));
        slot.dirty = true;
        let mut tapped = Vec::new();
        if self.shared.taps.active() {
            tapped.push(HubEvent::AttemptBegun {
                owner: owner_of(&live),
                trigger,
            });
            // What the start itself recorded: configured and decision evidence.
            if let Some(attempt) = slot.history.attempt(live.owner.attempt_id()) {
                for evidence in &attempt.evidence {
                    tapped.push(HubEvent::Evidence {
                        owner: owner_of(&live),
                        evidence: Box::new(evidence.clone()),
                    });
                }
            }
            row_changes(&slot.history, &live, &[], &mut tapped);
        }
        slot.publish_if_dirty(self.shared.persist.as_deref());
        drop(sessions);
        self.shared.taps.deliver(tapped);

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

    /// Adds a tap: from now on it is told every attempt begun, every evidence
    /// event accepted and every row status entered (see [`HubTap`]).
    pub fn add_tap(&self, tap: Arc<dyn HubTap>) {
        self.shared
            .taps
            .list
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .push(tap);
        self.shared.taps.any.store(true, Ordering::Release);
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

/// While busy, the drain polls at this interval instead of blocking, so
/// publishers never pay for waking it (no waiter, no futex wake per event).
const BUSY_POLL: Duration = Duration::from_millis(2);
/// After this many empty polls it blocks again, so an idle hub costs nothing.
const IDLE_POLLS_BEFORE_BLOCKING: u32 = 25;

fn drain(shared: Arc<Shared>, rx: Receiver<Command>, batch_limit: usize) {
    let mut batch = Vec::with_capacity(batch_limit);
    let mut last_full_scan = std::time::Instant::now();
    let mut idle_polls = IDLE_POLLS_BEFORE_BLOCKING;
    loop {
        let first = if idle_polls >= IDLE_POLLS_BEFORE_BLOCKING {
            match rx.recv_timeout(Duration::from_millis(200)) {
                Ok(command) => Some(command),
                Err(RecvTimeoutError::Timeout) => {
                    // Repair displays after drops even when nothing else arrives.
                    let mut sessions = shared.sessions();
                    for slot in sessions.values_mut() {
                        slot.fold_drops();
                        slot.publish_if_dirty(shared.persist.as_deref());
                    }
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => return,
            }
        } else {
            match rx.try_recv() {
                Ok(command) => Some(command),
                Err(TryRecvError::Empty) => None,
                Err(TryRecvError::Disconnected) => return,
            }
        };
        let Some(first) = first else {
            idle_polls += 1;
            std::thread::sleep(BUSY_POLL);
            continue;
        };
        idle_polls = 0;
        batch.push(first);
        while batch.len() < batch_limit {
            match rx.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        let full_batch = batch.len() == batch_limit;
        process(&shared, &mut batch, &mut last_full_scan);
        if !full_batch {
            // Let more evidence gather before the next batch.
            std::thread::sleep(BUSY_POLL);
        }
    }
}

/// While busy, every session is folded (drops) and published at least this
/// often; in between, a batch touches only the sessions its commands named,
/// so its cost does not grow with the number of sessions held.
const FULL_SCAN_EVERY: Duration = Duration::from_millis(250);

fn process(shared: &Shared, batch: &mut Vec<Command>, last_full_scan: &mut std::time::Instant) {
    let mut flushes = Vec::new();
    let tapping = shared.taps.active();
    let mut tapped = Vec::new();
    let mut before = Vec::new();
    let mut touched: Vec<Arc<AttemptLive>> = Vec::new();
    let mut touch = |live: &Arc<AttemptLive>| {
        if !touched.last().is_some_and(|l| Arc::ptr_eq(l, live)) {
            touched.push(Arc::clone(live));
        }
    };
    {
        let mut sessions = shared.sessions();
        for command in batch.drain(..) {
            match &command {
                Command::Observe { live, .. }
                | Command::Catalog { live, .. }
                | Command::ConfigSnapshot { live, .. } => touch(live),
                _ => {}
            }
            match command {
                Command::Observe { live, evidence } => {
                    let Some(slot) = sessions.get_mut(live.owner.session_id()) else {
                        continue;
                    };
                    let evidence = sanitize_evidence(&evidence, &live.scrubber, &live.rows);
                    if tapping {
                        row_states(&slot.history, live.owner.attempt_id(), &mut before);
                    }
                    let event = HistoryEvent::ObserveSanitized {
                        key: live.key.clone(),
                        evidence,
                    };
                    match reduce(&mut slot.history, &event) {
                        Ok(Reduced::Unattributed) => {
                            slot.dirty = true;
                            shared.unattributed.fetch_add(1, Ordering::Relaxed);
                            // Ids only: the name it gave may be anything.
                            tracing::warn!(
                                session_id = %live.owner.session_id(),
                                attempt_id = %live.owner.attempt_id(),
                                "evidence names a server that is no row of its attempt; counted as unattributed"
                            );
                        }
                        Ok(_) => {
                            slot.dirty = true;
                            if tapping
                                && let HistoryEvent::ObserveSanitized { evidence, .. } = event
                            {
                                tapped.push(HubEvent::Evidence {
                                    owner: owner_of(&live),
                                    evidence: Box::new(evidence.into_inner()),
                                });
                                row_changes(&slot.history, &live, &before, &mut tapped);
                            }
                        }
                        Err(rejection) => {
                            tracing::debug!(%rejection, "evidence rejected");
                        }
                    }
                }
                Command::Catalog {
                    live,
                    server,
                    catalog,
                } => {
                    let Some(slot) = sessions.get_mut(live.owner.session_id()) else {
                        continue;
                    };
                    let event = HistoryEvent::Catalog {
                        key: live.key.clone(),
                        server: live
                            .rows
                            .resolve(&server)
                            .map_or_else(|| live.scrubber.name(&server), str::to_owned),
                        catalog,
                    };
                    match reduce(&mut slot.history, &event) {
                        Ok(_) => slot.dirty = true,
                        Err(rejection) => tracing::debug!(%rejection, "catalog rejected"),
                    }
                }
                Command::ConfigSnapshot { live, snapshot } => {
                    let Some(slot) = sessions.get_mut(live.owner.session_id()) else {
                        continue;
                    };
                    let event = HistoryEvent::ConfigSnapshot {
                        key: live.key.clone(),
                        snapshot,
                    };
                    match reduce(&mut slot.history, &event) {
                        Ok(_) => slot.dirty = true,
                        Err(rejection) => tracing::debug!(%rejection, "config snapshot rejected"),
                    }
                }
                Command::FlushBlocking(done) => flushes.push(Flush::Blocking(done)),
                Command::FlushAsync(done) => flushes.push(Flush::Async(done)),
            }
        }
        if !flushes.is_empty() || last_full_scan.elapsed() >= FULL_SCAN_EVERY {
            for slot in sessions.values_mut() {
                slot.fold_drops();
                slot.publish_if_dirty(shared.persist.as_deref());
            }
            *last_full_scan = std::time::Instant::now();
        } else {
            touched.sort_by_key(|l| Arc::as_ptr(l) as usize);
            touched.dedup_by(|a, b| Arc::ptr_eq(a, b));
            for live in &touched {
                if let Some(slot) = sessions.get_mut(live.owner.session_id()) {
                    slot.fold_drops();
                    slot.publish_if_dirty(shared.persist.as_deref());
                }
            }
        }
    }
    shared.taps.deliver(tapped);
    for flush in flushes {
        match flush {
            Flush::Blocking(done) => {
                let _ = done.try_send(());
            }
            Flush::Async(done) => {
                let _ = done.send(());
            }
        }
    }
}

enum Flush {
    Blocking(SyncSender<()>),
    Async(oneshot::Sender<()>),
}

#[cfg(test)]
mod tap_tests {
    use super::*;
    use tether_core::spec::{Endpoint, ServerSpec};
    use tether_core::vocab::{EvidenceKind, ServerSource};

    #[derive(Default)]
    struct Collect(Mutex<Vec<Arc<HubEvent>>>);

    impl HubTap for Collect {
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
    fn taps_see_the_start_accepted_evidence_and_status_changes_but_no_stale_evidence() {
        let hub = Hub::new(Registry::empty());
        let tap = Arc::new(Collect::default());
        hub.add_tap(tap.clone());
        let first = hub.begin_attempt(request("s")).expect("begin");
        let second = hub.begin_attempt(request("s")).expect("supersede");
        // The first attempt is superseded: its evidence is refused, so no tap sees it.
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
        let events = tap.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
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
