//! The write-behind persister: coalesced writes to a `Store` on its own
//! thread, retried with backoff, never in live state's way; and the read-only
//! counters it keeps.
//!
//! Writes go in session order, in chunks of 500 per `save_batch`.

use super::*;

/// A live, read-only view of one of the hub's counters: an exporter reads
/// it when it likes; only the hub moves it.
#[derive(Debug, Clone)]
pub struct Counter(pub(crate) Arc<AtomicU64>);

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
pub(crate) const WRITE_CHUNK: usize = 500;

/// Coalescing write-through to a [`Store`], on its own thread.
pub(crate) struct Persister {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) interval: Duration,
    pub(crate) state: Mutex<PersistState>,
    pub(crate) wake: Condvar,
    pub(crate) idle: Condvar,
    pub(crate) failures: Arc<AtomicU64>,
    pub(crate) stale: Arc<AtomicU64>,
    /// Sessions whose stored row is behind because their latest write failed.
    pub(crate) behind: Arc<AtomicU64>,
}

/// The longest wait between retries of writes that failed.
pub(crate) const RETRY_MAX: Duration = Duration::from_secs(10);

#[derive(Default)]
pub(crate) struct PersistState {
    /// Latest state per session (`None`: remove the row). Latest wins.
    pub(crate) pending: HashMap<String, Option<Arc<AttachmentHistory>>>,
    /// Writes that failed (the store was down, say), retried with backoff
    /// until they land or a newer change of the session replaces them. Kept
    /// apart from `pending`, so a flush never waits on a store that is down.
    pub(crate) retry: HashMap<String, Option<Arc<AttachmentHistory>>>,
    /// The wait before the next retry: `interval`, doubling to [`RETRY_MAX`]
    /// while retries keep failing.
    pub(crate) retry_delay: Option<Duration>,
    /// When the failed writes go again.
    pub(crate) retry_due: Option<Instant>,
    /// The failed writes had their last try at shutdown.
    pub(crate) last_try: bool,
    /// The writer thread has returned.
    pub(crate) stopped: bool,
    /// Sessions whose latest write failed and has not landed since (a
    /// success, or a stale refusal: a newer row is stored, clears it).
    pub(crate) behind: std::collections::HashSet<String>,
    pub(crate) writing: bool,
    pub(crate) shutdown: bool,
}

impl Persister {
    pub(crate) fn lock(&self) -> MutexGuard<'_, PersistState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn mark(&self, session_id: &str, history: Option<Arc<AttachmentHistory>>) {
        let mut state = self.lock();
        // The newer change replaces any failed write waiting for a retry.
        state.retry.remove(session_id);
        state.pending.insert(session_id.to_owned(), history);
        drop(state);
        self.wake.notify_one();
    }

    pub(crate) fn run(&self) {
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
    pub(crate) fn account(&self, session_id: &str, result: Result<(), StoreError>) -> bool {
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

    pub(crate) fn wait_idle(&self) {
        let mut state = self.lock();
        while (!state.pending.is_empty() || state.writing) && !state.stopped {
            state = self.idle.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Waits until the writer thread has stopped (after `shutdown`).
    pub(crate) fn wait_stopped(&self) {
        let mut state = self.lock();
        while !state.stopped {
            state = self.idle.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }
}
