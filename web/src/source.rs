//! Where the service reads histories: a live [`Hub`], or a [`Store`] it
//! follows read-only (another process writes it).
//!
//! Both give the same three things: the current histories, a `watch` per
//! session that always holds the latest (closed when the session is
//! removed), and a generation counter that moves when the list may have
//! changed. A watch is latest-wins by construction, so a slow reader skips
//! to the newest state instead of queueing every change.
//!
//! `StatusSource` (histories, a `watch` per session, a generation counter).
//! `HubSource` uses the hub's own watches plus a subscriber; `StoreSource` runs the
//! one store follower (`tether_store::StoreFollower`) on a thread of its own
//! and hands each pass's changes to the sessions' watches.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

use tether_core::history::AttachmentHistory;
use tether_core::store::Store;
use tether_hub::{Hub, HubEvent, HubSubscriber};
use tether_store::{Followed, StoreFollower};

/// A session's live history: always the latest; closed when the session is gone.
pub type HistoryWatch = watch::Receiver<Arc<AttachmentHistory>>;

/// What the status service reads.
pub trait StatusSource: Send + Sync + 'static {
    /// Every session's current history, sorted by session id.
    fn histories(&self) -> Vec<Arc<AttachmentHistory>>;
    /// One session's current history.
    fn history(&self, session_id: &str) -> Option<Arc<AttachmentHistory>>;
    /// One session's live history (`None`: no such session).
    fn watch(&self, session_id: &str) -> Option<HistoryWatch>;
    /// Moves whenever the list of sessions, or a session's summary, may have
    /// changed; readers recompute and compare.
    fn generation(&self) -> watch::Receiver<u64>;
}

/// A live hub. The hub's own watches feed the per-session streams; a subscriber
/// moves the generation when an attempt begins or a row's status changes.
pub struct HubSource {
    hub: Arc<Hub>,
    generation: watch::Sender<u64>,
}

struct GenerationSubscriber(watch::Sender<u64>);

impl HubSubscriber for GenerationSubscriber {
    fn observe(&self, event: &Arc<HubEvent>) {
        if matches!(
            **event,
            HubEvent::AttemptBegun { .. } | HubEvent::RowStatus { .. }
        ) {
            self.0.send_modify(|g| *g = g.wrapping_add(1));
        }
    }
}

impl HubSource {
    /// Reads `hub` (and adds one subscriber to it).
    pub fn new(hub: Arc<Hub>) -> Self {
        let (generation, _) = watch::channel(0);
        hub.add_subscriber(Arc::new(GenerationSubscriber(generation.clone())));
        HubSource { hub, generation }
    }
}

impl StatusSource for HubSource {
    fn histories(&self) -> Vec<Arc<AttachmentHistory>> {
        self.hub
            .sessions()
            .iter()
            .filter_map(|id| self.hub.latest(id))
            .collect()
    }

    fn history(&self, session_id: &str) -> Option<Arc<AttachmentHistory>> {
        self.hub.latest(session_id)
    }

    fn watch(&self, session_id: &str) -> Option<HistoryWatch> {
        self.hub.subscribe(session_id).ok()
    }

    fn generation(&self) -> watch::Receiver<u64> {
        self.generation.subscribe()
    }
}

/// Waits for a hint that the store changed (a PostgreSQL `NOTIFY`, say): the
/// follower's own type.
pub use tether_store::ChangeHint;

struct StoreState {
    sessions: BTreeMap<String, watch::Sender<Arc<AttachmentHistory>>>,
}

/// A store another process writes, followed read-only by the one store
/// follower ([`tether_store::StoreFollower`]: the revision index is polled,
/// two columns and no documents, and only changed rows are read).
pub struct StoreSource {
    state: Arc<Mutex<StoreState>>,
    generation: watch::Sender<u64>,
    stop: Arc<AtomicBool>,
}

impl Drop for StoreSource {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}

/// How often a followed store's revision index is read when nothing hints.
pub const STORE_POLL: Duration = tether_store::follow::POLL;

impl StoreSource {
    /// Loads what `store` holds now and follows it on a thread of its own
    /// until this source is dropped. `hint` wakes the follower early.
    pub fn follow(
        store: Arc<dyn Store>,
        hint: Option<ChangeHint>,
    ) -> Result<Self, tether_core::store::StoreError> {
        let mut follower = StoreFollower::new(store, hint);
        let loaded = follower.load()?;
        for skipped in &loaded.skipped {
            tracing::warn!(session = %skipped.session_id, reason = %skipped.reason, "skipped an unreadable stored row");
        }
        let mut sessions = BTreeMap::new();
        for history in loaded.histories {
            let id = history.session_id.clone();
            let (tx, _) = watch::channel(Arc::new(history));
            sessions.insert(id, tx);
        }
        let state = Arc::new(Mutex::new(StoreState { sessions }));
        let (generation, _) = watch::channel(0);
        let stop = Arc::new(AtomicBool::new(false));
        let run = Run {
            follower,
            state: Arc::clone(&state),
            generation: generation.clone(),
            stop: Arc::clone(&stop),
        };
        std::thread::Builder::new()
            .name("tether-web-store".into())
            .spawn(move || run.run())
            .map_err(|e| tether_core::store::StoreError::Backend(e.to_string()))?;
        Ok(StoreSource {
            state,
            generation,
            stop,
        })
    }
}

fn lock(state: &Mutex<StoreState>) -> std::sync::MutexGuard<'_, StoreState> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

/// The follower's thread: each pass's changes go to the sessions' watches.
struct Run {
    follower: StoreFollower,
    state: Arc<Mutex<StoreState>>,
    generation: watch::Sender<u64>,
    stop: Arc<AtomicBool>,
}

impl Run {
    fn run(mut self) {
        while !self.stop.load(Ordering::Acquire) {
            self.follower.wait();
            match self.follower.pass() {
                Ok(found) => self.apply(found),
                Err(err) => {
                    tracing::warn!(%err, "reading the followed store failed; retrying");
                    std::thread::sleep(Duration::from_secs(1));
                }
            }
        }
    }

    fn apply(&self, found: Vec<Followed>) {
        if found.is_empty() {
            return;
        }
        let mut st = lock(&self.state);
        for change in found {
            match change {
                Followed::Changed(history) => match st.sessions.get(&history.session_id) {
                    Some(tx) => {
                        tx.send_replace(Arc::new(history));
                    }
                    None => {
                        let id = history.session_id.clone();
                        let (tx, _) = watch::channel(Arc::new(history));
                        st.sessions.insert(id, tx);
                    }
                },
                // Dropping a sender closes its watches: subscribers see the removal.
                Followed::Removed(id) => {
                    st.sessions.remove(&id);
                }
            }
        }
        drop(st);
        self.generation.send_modify(|g| *g = g.wrapping_add(1));
    }
}

impl StatusSource for StoreSource {
    fn histories(&self) -> Vec<Arc<AttachmentHistory>> {
        lock(&self.state)
            .sessions
            .values()
            .map(|tx| Arc::clone(&tx.borrow()))
            .collect()
    }

    fn history(&self, session_id: &str) -> Option<Arc<AttachmentHistory>> {
        lock(&self.state)
            .sessions
            .get(session_id)
            .map(|tx| Arc::clone(&tx.borrow()))
    }

    fn watch(&self, session_id: &str) -> Option<HistoryWatch> {
        lock(&self.state)
            .sessions
            .get(session_id)
            .map(|tx| tx.subscribe())
    }

    fn generation(&self) -> watch::Receiver<u64> {
        self.generation.subscribe()
    }
}
