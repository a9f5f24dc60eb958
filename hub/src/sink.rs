//! Evidence sinks: what an attempt publishes through, without blocking.

use super::*;

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
pub(crate) struct AttemptLive {
    /// Whose this attempt is: its session and attempt ids (and, for subscribers,
    /// the rest of its ownership), built once and shared by every event.
    pub(crate) owner: Arc<EventOwner>,
    /// The attempt's key from the reducer: the stamp every event carries.
    pub(crate) key: AttemptKey,
    /// The hub's count of every sink's drops (for exporters).
    pub(crate) hub_dropped: Arc<AtomicU64>,
    pub(crate) superseded: AtomicBool,
    pub(crate) dropped: AtomicU32,
    pub(crate) folded: AtomicU32,
    pub(crate) scrubber: Scrubber,
    /// Which row each reported server name belongs to. Only the drain
    /// reads or grows it (a row the harness named, [`EvidenceSink::add_row`]),
    /// so the lock is never contended.
    pub(crate) rows: Mutex<RowNames>,
}

impl AttemptLive {
    pub(crate) fn rows(&self) -> MutexGuard<'_, RowNames> {
        self.rows
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

// Observe is the hot variant; boxing it would add an allocation per publish
// to save space only in the rare flush commands.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Command {
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
    AddRow {
        live: Arc<AttemptLive>,
        server: String,
        transport: Option<Transport>,
        at: Timestamp,
        provenance: tether_core::model::ProvenanceCode,
    },
    FlushBlocking(SyncSender<()>),
    FlushAsync(oneshot::Sender<()>),
}

/// Publishes evidence for exactly one attempt. Cheap to clone.
#[derive(Clone, Debug)]
pub struct EvidenceSink {
    pub(crate) live: Arc<AttemptLive>,
    pub(crate) tx: SyncSender<Command>,
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
    pub(crate) fn enqueue(&self, command: Command) -> Result<(), PublishError> {
        if self.live.superseded.load(Ordering::Acquire) {
            return Err(PublishError::Superseded);
        }
        self.tx.try_send(command).map_err(|e| match e {
            TrySendError::Full(_) => PublishError::Full,
            TrySendError::Disconnected(_) => PublishError::Closed,
        })
    }

    /// Queues a row for a server the harness itself named (in its own
    /// telemetry) that this attempt did not plan, without blocking. Evidence
    /// published after it reaches the row; a name that already has a row is
    /// a no-op. The row is configured by the harness
    /// ([`ServerSource::Harness`](tether_core::vocab::ServerSource::Harness)),
    /// with provenance `harness_telemetry`.
    pub fn add_row(
        &self,
        server: impl Into<String>,
        transport: Option<Transport>,
        at: Timestamp,
    ) -> Result<(), PublishError> {
        self.enqueue(Command::AddRow {
            live: Arc::clone(&self.live),
            server: server.into(),
            transport,
            at,
            provenance: tether_core::model::ProvenanceCode::HarnessTelemetry,
        })
    }

    /// [`add_row`](Self::add_row) for a server another source named
    /// (`model_tap`: the model was sent its tools): the row's provenance is
    /// `provenance`'s.
    pub fn add_row_by(
        &self,
        server: impl Into<String>,
        transport: Option<Transport>,
        at: Timestamp,
        provenance: tether_core::model::ProvenanceCode,
    ) -> Result<(), PublishError> {
        self.enqueue(Command::AddRow {
            live: Arc::clone(&self.live),
            server: server.into(),
            transport,
            at,
            provenance,
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
