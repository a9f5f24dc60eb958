//! Following a store another process writes, read-only: the one follower
//! behind `tether history --follow` and the live status service's
//! `StoreSource`.
//!
//! Each pass reads the revision index (`Store::revisions`: two columns, no
//! documents) and then only the rows whose revision changed; a removed row
//! is reported as removed. Between passes the follower waits on a hint that
//! the store changed (PostgreSQL's `NOTIFY`, see `ChangeFeed::into_wakeups`)
//! or, without one, [`POLL`]. Hints only speed things up: every wait ends in
//! a full read of the index.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tether_core::history::AttachmentHistory;
use tether_core::store::{Loaded, Store, StoreError};

/// Waits for a hint that the store changed, at most the given time; returns
/// whether one came.
pub type ChangeHint = Box<dyn FnMut(Duration) -> bool + Send>;

/// How long a follower waits between passes when nothing hints.
pub const POLL: Duration = Duration::from_millis(250);

/// What one pass found.
#[derive(Debug)]
pub enum Followed {
    /// A session that is new, or whose revision changed.
    Changed(AttachmentHistory),
    /// A session whose row is gone.
    Removed(String),
}

/// A read-only follower of one store.
pub struct StoreFollower {
    store: Arc<dyn Store>,
    hint: Option<ChangeHint>,
    only: Option<String>,
    known: BTreeMap<String, u64>,
}

impl std::fmt::Debug for StoreFollower {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreFollower")
            .field("only", &self.only)
            .field("known", &self.known.len())
            .finish_non_exhaustive()
    }
}

impl StoreFollower {
    /// Follows `store`, woken early by `hint` when there is one.
    pub fn new(store: Arc<dyn Store>, hint: Option<ChangeHint>) -> Self {
        StoreFollower {
            store,
            hint,
            only: None,
            known: BTreeMap::new(),
        }
    }

    /// Follows one session only.
    pub fn only(mut self, session_id: Option<String>) -> Self {
        self.only = session_id;
        self
    }

    /// The store followed.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// What the store holds now (every row, or the one followed), remembered
    /// as seen; corrupt rows are in `skipped`.
    pub fn load(&mut self) -> Result<Loaded, StoreError> {
        let loaded = match &self.only {
            None => self.store.load_all()?,
            Some(id) => Loaded {
                histories: self.store.load(id)?.into_iter().collect(),
                skipped: Vec::new(),
            },
        };
        self.known = loaded
            .histories
            .iter()
            .map(|h| (h.session_id.clone(), h.revision))
            .collect();
        Ok(loaded)
    }

    /// Waits for a hint or [`POLL`], letting a burst of hints coalesce.
    pub fn wait(&mut self) {
        match &mut self.hint {
            Some(hint) => {
                if hint(POLL) {
                    while hint(Duration::from_millis(5)) {}
                }
            }
            None => std::thread::sleep(POLL),
        }
    }

    /// One pass: the revision index, then only the rows that changed.
    /// Removals come first, then changes, each in session order. A row that
    /// cannot be read is logged and tried again on the next pass.
    pub fn pass(&mut self) -> Result<Vec<Followed>, StoreError> {
        let mut revisions: BTreeMap<String, u64> = self.store.revisions()?.into_iter().collect();
        if let Some(only) = &self.only {
            revisions.retain(|id, _| id == only);
        }
        let mut found = Vec::new();
        for (id, revision) in &revisions {
            if self.known.get(id) == Some(revision) {
                continue;
            }
            match self.store.load(id) {
                Ok(Some(history)) => {
                    self.known.insert(id.clone(), history.revision);
                    found.push(Followed::Changed(history));
                }
                Ok(None) => {}
                Err(err) => tracing::warn!(session = %id, %err, "skipped an unreadable stored row"),
            }
        }
        let gone: Vec<String> = self
            .known
            .keys()
            .filter(|id| !revisions.contains_key(*id))
            .cloned()
            .collect();
        // Removals come first, then changes, each in session order.
        let mut removed: Vec<Followed> = gone
            .into_iter()
            .map(|id| {
                self.known.remove(&id);
                Followed::Removed(id)
            })
            .collect();
        removed.append(&mut found);
        Ok(removed)
    }
}
