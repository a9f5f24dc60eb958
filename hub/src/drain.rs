//! Session slots and the drain thread: queued evidence reduced in batches,
//! one snapshot per changed session per batch.

use super::*;

pub(crate) struct Slot {
    pub(crate) history: AttachmentHistory,
    pub(crate) watch: watch::Sender<Arc<AttachmentHistory>>,
    pub(crate) live: Vec<Arc<AttemptLive>>,
    pub(crate) dirty: bool,
}

impl Slot {
    pub(crate) fn new(history: AttachmentHistory) -> Self {
        let (watch, _) = watch::channel(Arc::new(history.clone()));
        Slot {
            history,
            watch,
            live: Vec::new(),
            dirty: false,
        }
    }

    /// Folds sink drops into the history; the reducer keeps it idempotent.
    pub(crate) fn fold_drops(&mut self) {
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

    pub(crate) fn publish_if_dirty(&mut self, persist: Option<&Persister>) {
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

/// While busy, the drain polls at this interval instead of blocking, so
/// publishers never pay for waking it (no waiter, no futex wake per event).
pub(crate) const BUSY_POLL: Duration = Duration::from_millis(2);
/// After this many empty polls it blocks again, so an idle hub costs nothing.
pub(crate) const IDLE_POLLS_BEFORE_BLOCKING: u32 = 25;

pub(crate) fn drain(shared: Arc<Shared>, rx: Receiver<Command>, batch_limit: usize) {
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
pub(crate) const FULL_SCAN_EVERY: Duration = Duration::from_millis(250);

/// One batch: each command applied to its session, then the changed
/// sessions published, then subscribers told and flushes answered.
pub(crate) fn process(
    shared: &Shared,
    batch: &mut Vec<Command>,
    last_full_scan: &mut std::time::Instant,
) {
    let mut flushes = Vec::new();
    let mut notices = Notices {
        on: shared.subscribers.active(),
        events: Vec::new(),
        before: Vec::new(),
    };
    let mut touched: Vec<Arc<AttemptLive>> = Vec::new();
    {
        let mut sessions = shared.sessions();
        for command in batch.drain(..) {
            if let Some(live) = command_live(&command)
                && !touched.last().is_some_and(|l| Arc::ptr_eq(l, live))
            {
                touched.push(Arc::clone(live));
            }
            match command {
                Command::Observe { live, evidence } => {
                    if let Some(slot) = sessions.get_mut(live.owner.session_id()) {
                        observe(shared, slot, &live, &evidence, &mut notices);
                    }
                }
                Command::Catalog {
                    live,
                    server,
                    catalog,
                } => {
                    if let Some(slot) = sessions.get_mut(live.owner.session_id()) {
                        take_catalog(slot, &live, &server, catalog);
                    }
                }
                Command::ConfigSnapshot { live, snapshot } => {
                    if let Some(slot) = sessions.get_mut(live.owner.session_id()) {
                        let event = HistoryEvent::ConfigSnapshot {
                            key: live.key.clone(),
                            snapshot,
                        };
                        apply(slot, &event, "config snapshot rejected");
                    }
                }
                Command::AddRow {
                    live,
                    server,
                    transport,
                    at,
                    provenance,
                } => {
                    if let Some(slot) = sessions.get_mut(live.owner.session_id()) {
                        let row = NewRow {
                            server,
                            transport,
                            at,
                            provenance,
                        };
                        add_row(slot, &live, row, &mut notices);
                    }
                }
                Command::FlushBlocking(done) => flushes.push(Flush::Blocking(done)),
                Command::FlushAsync(done) => flushes.push(Flush::Async(done)),
            }
        }
        let everyone = !flushes.is_empty() || last_full_scan.elapsed() >= FULL_SCAN_EVERY;
        if everyone {
            *last_full_scan = std::time::Instant::now();
        }
        publish_changed(shared, &mut sessions, everyone, touched);
    }
    shared.subscribers.deliver(notices.events);
    for flush in flushes {
        flush.answer();
    }
}

/// A server's tool catalog, under the row its name resolves to (or its
/// scrubbed name).
fn take_catalog(slot: &mut Slot, live: &AttemptLive, server: &str, catalog: Box<ToolCatalog>) {
    let event = HistoryEvent::Catalog {
        key: live.key.clone(),
        server: live
            .rows()
            .resolve(server)
            .map_or_else(|| live.scrubber.name(server), str::to_owned),
        catalog,
    };
    apply(slot, &event, "catalog rejected");
}

/// What a batch tells the subscribers: whether any listens, the events so far,
/// and the rows' states before the command at hand.
struct Notices {
    on: bool,
    events: Vec<HubEvent>,
    before: Vec<(DisplayStatus, Option<ReasonCode>)>,
}

/// The attempt a session command is for (none for a flush).
fn command_live(command: &Command) -> Option<&Arc<AttemptLive>> {
    match command {
        Command::Observe { live, .. }
        | Command::Catalog { live, .. }
        | Command::ConfigSnapshot { live, .. }
        | Command::AddRow { live, .. } => Some(live),
        Command::FlushBlocking(_) | Command::FlushAsync(_) => None,
    }
}

/// Reduces `event` into the slot's history (dirty when it took).
fn apply(slot: &mut Slot, event: &HistoryEvent, rejected: &'static str) {
    match reduce(&mut slot.history, event) {
        Ok(_) => slot.dirty = true,
        Err(rejection) => tracing::debug!(%rejection, "{rejected}"),
    }
}

/// One piece of evidence, sanitized against the attempt's rows and
/// reduced; an event (and the rows it changed) for the subscribers.
fn observe(
    shared: &Shared,
    slot: &mut Slot,
    live: &Arc<AttemptLive>,
    evidence: &Evidence,
    notices: &mut Notices,
) {
    let evidence = sanitize_evidence(evidence, &live.scrubber, &live.rows());
    if notices.on {
        row_states(&slot.history, live.owner.attempt_id(), &mut notices.before);
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
            if notices.on
                && let HistoryEvent::ObserveSanitized { evidence, .. } = event
            {
                notices.events.push(HubEvent::Evidence {
                    owner: owner_of(live),
                    evidence: Box::new(evidence.into_inner()),
                });
                row_changes(&slot.history, live, &notices.before, &mut notices.events);
            }
        }
        Err(rejection) => {
            tracing::debug!(%rejection, "evidence rejected");
        }
    }
}

/// A row a command adds to its attempt.
struct NewRow {
    server: String,
    transport: Option<Transport>,
    at: Timestamp,
    provenance: tether_core::model::ProvenanceCode,
}

/// Adds a row the attempt does not have yet (a name it already resolves
/// is no new row); the rows it changed go to the subscribers.
fn add_row(slot: &mut Slot, live: &Arc<AttemptLive>, row: NewRow, notices: &mut Notices) {
    let mut rows = live.rows();
    if rows.resolve(&row.server).is_some() {
        return;
    }
    if notices.on {
        row_states(&slot.history, live.owner.attempt_id(), &mut notices.before);
    }
    let event = HistoryEvent::AddRow {
        key: live.key.clone(),
        name: rows.add_unique(&row.server),
        transport: row.transport,
        at: row.at,
        provenance: row.provenance,
    };
    drop(rows);
    match reduce(&mut slot.history, &event) {
        Ok(_) => {
            slot.dirty = true;
            if notices.on {
                row_changes(&slot.history, live, &notices.before, &mut notices.events);
            }
        }
        Err(rejection) => tracing::debug!(%rejection, "row rejected"),
    }
}

/// Folds drops into and publishes every session (`everyone`), or only the
/// sessions the batch touched.
fn publish_changed(
    shared: &Shared,
    sessions: &mut HashMap<String, Slot>,
    everyone: bool,
    mut touched: Vec<Arc<AttemptLive>>,
) {
    if everyone {
        for slot in sessions.values_mut() {
            slot.fold_drops();
            slot.publish_if_dirty(shared.persist.as_deref());
        }
        return;
    }
    touched.sort_by_key(|l| Arc::as_ptr(l) as usize);
    touched.dedup_by(|a, b| Arc::ptr_eq(a, b));
    for live in &touched {
        if let Some(slot) = sessions.get_mut(live.owner.session_id()) {
            slot.fold_drops();
            slot.publish_if_dirty(shared.persist.as_deref());
        }
    }
}

pub(crate) enum Flush {
    Blocking(SyncSender<()>),
    Async(oneshot::Sender<()>),
}

impl Flush {
    /// Tells the flusher its commands are in (a gone flusher is no error).
    fn answer(self) {
        match self {
            Flush::Blocking(done) => {
                let _ = done.try_send(());
            }
            Flush::Async(done) => {
                let _ = done.send(());
            }
        }
    }
}
