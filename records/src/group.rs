//! The grouped read: with a ledger, a listing of every session
//! ([`Records::summing_up`]) or an import into the ledger's store
//! ([`Records::only_changed`]) reads
//! the files a bounded group at a time, so memory stays flat however many
//! files there are:
//! - the files in path order (a session's file beside the folder of its
//!   sub-agents' files), cut into groups of at most [`GROUP_BYTES`] to read
//!   and [`GROUP_FILES`] files, never between a file `X.ext` and the files
//!   under `X/`;
//! - a group's files read, their rows written, the sessions they feed built
//!   from their facts (and from the rows of earlier files that feed them
//!   too);
//! - those sessions summed up and their summaries kept (a listing), or
//!   imported (an import);
//! - the group's files parked as their rows left them: their facts dropped.
//!
//! A session whose files fall in two groups is built again, whole, with the
//! later group: a listing keeps its summary again; an import writes it again
//! over what the earlier group wrote, from what the store held before this
//! read ([`Prior`]). An import then reads, a group at a time too, the files
//! its ledger holds but never imported (a listing read them). What is
//! listed, imported and kept is what a whole read gives; a test compares
//! them (`tests/tests/records_incremental.rs`).

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Mutex;

use tether_core::history::AttachmentHistory;
use tether_core::records::SessionSummary;
use tether_core::store::{Store, StoreError};

use crate::{Imported, Pass, Records, SessionFacts, Task, facts};

/// Bytes to read per group, at most (a single larger file is a group).
pub const GROUP_BYTES: u64 = 32 << 20;
/// Files per group, at most.
pub const GROUP_FILES: usize = 256;

/// What the store held of a session before this read first imported it.
pub(crate) enum Prior {
    /// Nothing: the session was new.
    New,
    /// What it holds still: the records changed nothing.
    Held,
    /// This history, which the import replaced.
    Replaced(Box<AttachmentHistory>),
}

/// How an import counted a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Counted {
    New,
    Updated,
    Unchanged,
}

/// What the grouped read imported so far, and its groups' bounds.
#[derive(Default)]
pub(crate) struct Run {
    /// Bytes and files per group, where not [`GROUP_BYTES`] and
    /// [`GROUP_FILES`] ([`Records::group_bounds`]).
    pub(crate) bounds: Option<(u64, usize)>,
    /// A listing sums every session up ([`Records::summing_up`]).
    pub(crate) summing: bool,
    /// Each session imported: what the store held before, and how it was
    /// last counted.
    pub(crate) imported: HashMap<String, (Prior, Counted)>,
    /// Sessions the reducer refused.
    pub(crate) refused: BTreeSet<String>,
    /// The first store error, for [`Records::import`] to return.
    pub(crate) error: Mutex<Option<StoreError>>,
}

/// What importing some sessions did, each by id.
#[derive(Default)]
pub(crate) struct Outcome {
    /// Each session imported, how it was counted, and what the store held
    /// before this read (for one this read had not imported yet).
    pub(crate) counted: Vec<(String, Counted, Option<Prior>)>,
    /// Sessions the reducer refused.
    pub(crate) refused: BTreeSet<String>,
}

impl Outcome {
    /// The counts, with what the grouped read `run` imported before.
    pub(crate) fn imported(&self, run: &Run) -> Imported {
        let mut last: HashMap<&str, Counted> = run
            .imported
            .iter()
            .map(|(id, (_, counted))| (id.as_str(), *counted))
            .collect();
        for (id, counted, _) in &self.counted {
            last.insert(id, *counted);
        }
        let mut done = Imported::default();
        for counted in last.values() {
            match counted {
                Counted::New => done.new += 1,
                Counted::Updated => done.updated += 1,
                Counted::Unchanged => done.unchanged += 1,
            }
        }
        done.refused = run
            .refused
            .union(&self.refused)
            .filter(|id| !last.contains_key(id.as_str()))
            .count();
        done
    }
}

/// `tasks` in path order, cut into groups of at most `max_bytes` to read
/// and `max_files` files.
fn groups(mut tasks: Vec<Task>, (max_bytes, max_files): (u64, usize)) -> Vec<Vec<Task>> {
    tasks.sort_by(|a, b| a.path.as_os_str().cmp(b.path.as_os_str()));
    let mut out = Vec::new();
    let mut group: Vec<Task> = Vec::new();
    let mut bytes = 0;
    // The last file not under another's folder, without its extension.
    let mut anchor: Option<PathBuf> = None;
    for task in tasks {
        let under = anchor.as_ref().is_some_and(|a| task.path.starts_with(a));
        if !under {
            anchor = Some(task.path.with_extension(""));
            if !group.is_empty() && (bytes >= max_bytes || group.len() >= max_files) {
                out.push(std::mem::take(&mut group));
                bytes = 0;
            }
        }
        bytes += task.pending();
        group.push(task);
    }
    if !group.is_empty() {
        out.push(group);
    }
    out
}

impl Records {
    /// The grouped read's bounds: at most `bytes` to read and `files` files
    /// a group (smaller than [`GROUP_BYTES`] and [`GROUP_FILES`] in tests,
    /// so a few files make several groups).
    pub fn group_bounds(&mut self, bytes: u64, files: usize) {
        self.run.bounds = Some((bytes.max(1), files.max(1)));
    }

    /// A listing of every session (`tether sessions list`): with a ledger
    /// ([`listing_only`](Records::listing_only)), the read goes a group at a
    /// time, each session summed up (its history built, its summary kept)
    /// as its group is read. Without it, a listing builds only the sessions
    /// asked for (`tether mcp`, `sessions show`), holding every file's facts.
    pub fn summing_up(&mut self) {
        self.run.summing = true;
    }

    /// Whether [`read`](Records::read) goes a group at a time: at rest,
    /// with a ledger, for a listing of every session or an import into the
    /// ledger's store.
    pub(crate) fn grouped(&self, at_rest: bool) -> bool {
        at_rest
            && self.kept.store.is_some()
            && ((self.kept.lazy && self.run.summing) || self.kept.only_changed)
    }

    /// Reads `tasks` a group at a time, each group's sessions listed or
    /// imported and its files parked; then, for an import, the files the
    /// ledger holds but never imported, a group at a time. Returns the
    /// sessions built.
    pub(crate) fn read_grouped(
        &mut self,
        tasks: Vec<Task>,
        at_rest: bool,
        pass: &mut Pass,
    ) -> BTreeSet<String> {
        let mut changed = BTreeSet::new();
        let (max_bytes, max_files) = self.run.bounds.unwrap_or((GROUP_BYTES, GROUP_FILES));
        for group in groups(tasks, (max_bytes, max_files)) {
            let done = self.run(group, at_rest);
            let touched = self.take_in(done, pass, true);
            let built = self.rebuild(&touched);
            self.commit(built, &mut changed);
        }
        if !self.kept.lazy {
            // Files read before, never imported (a listing read them).
            let mut waiting: Vec<(PathBuf, u64)> = self
                .kept
                .parked
                .iter()
                .filter(|(_, (row, _))| !row.imported)
                .map(|(path, (row, _))| (path.clone(), row.size))
                .collect();
            waiting.sort_by(|a, b| a.0.as_os_str().cmp(b.0.as_os_str()));
            let mut at = 0;
            while at < waiting.len() && self.store_error_free() {
                let mut bytes = 0;
                let mut end = at;
                while end < waiting.len()
                    && end - at < max_files
                    && (end == at || bytes < max_bytes)
                {
                    bytes += waiting[end].1;
                    end += 1;
                }
                let paths: Vec<PathBuf> = waiting[at..end].iter().map(|(p, _)| p.clone()).collect();
                at = end;
                self.unpark(&paths);
                let touched = self.take_in(Vec::new(), pass, true);
                let built = self.rebuild(&touched);
                self.commit(built, &mut changed);
            }
        }
        // What is left: files not found this time, sessions listed from
        // kept summaries, and (an import) what failed.
        changed.extend(self.settle(Vec::new(), pass));
        changed
    }

    /// Whether no store error stopped the grouped read's import.
    fn store_error_free(&self) -> bool {
        self.run.error.lock().map(|e| e.is_none()).unwrap_or(false)
    }

    /// A group's sessions `built` (as the filters leave them) summed up and
    /// their summaries kept (a listing) or imported (an import), then
    /// dropped, and the files held parked as their rows left them.
    fn commit(&mut self, mut built: BTreeSet<String>, changed: &mut BTreeSet<String>) {
        self.filter_read(&mut built);
        if self.kept.lazy {
            let summed = self.each_built(|facts, history| self.summary(facts, &history));
            let pairs: Vec<(&SessionFacts, &SessionSummary)> = summed
                .iter()
                .filter_map(|s| Some((&**self.sessions.get(&s.session_id)?, s)))
                .collect();
            let rows = self.keep_summaries(&pairs);
            for row in rows {
                self.kept.summaries.insert(row.session_id.clone(), row);
            }
        } else if let Some(store) = self.kept.store.clone()
            && self.store_error_free()
        {
            let chosen: Vec<&SessionFacts> = self.selected().collect();
            match self.import_each(store.as_ref(), chosen) {
                Ok((outcome, there)) => {
                    for (id, counted, prior) in outcome.counted {
                        let entry = self.run.imported.entry(id);
                        match (entry, prior) {
                            (std::collections::hash_map::Entry::Occupied(mut e), _) => {
                                e.get_mut().1 = counted;
                            }
                            (std::collections::hash_map::Entry::Vacant(e), Some(prior)) => {
                                e.insert((prior, counted));
                            }
                            (std::collections::hash_map::Entry::Vacant(_), None) => {}
                        }
                    }
                    self.run.refused.extend(outcome.refused);
                    let marked = self.mark_imported(store.as_ref(), &there);
                    for path in marked {
                        if let Some((row, _)) =
                            self.files.get_mut(&path).and_then(|s| s.parked_as.as_mut())
                        {
                            row.imported = true;
                        }
                    }
                }
                Err(error) => {
                    if let Ok(mut first) = self.run.error.lock() {
                        first.get_or_insert(error);
                    }
                }
            }
        }
        changed.extend(built);
        self.sessions.clear();
        self.park_held();
    }

    /// Each file held whose row is written, parked as the row left it: its
    /// facts dropped (the row holds them), its report and sessions kept.
    fn park_held(&mut self) {
        let held = std::mem::take(&mut self.files);
        for (path, mut state) in held {
            match state.parked_as.take() {
                Some((row, mut head)) => {
                    head.sessions = state.facts.keys().cloned().collect();
                    head.report = state.report;
                    self.kept.parked.insert(path, (row, head));
                }
                None => {
                    self.files.insert(path, state);
                }
            }
        }
    }

    /// Imports `chosen` into `store`: each merged into what the store held
    /// before this read (a session this read imported already is written
    /// again over what it wrote), written only when that changed it, with
    /// the next revision; the summaries of sessions new to the store kept.
    /// Returns how each was counted, and the sessions the store now holds
    /// as their records say.
    pub(crate) fn import_each(
        &self,
        store: &dyn Store,
        chosen: Vec<&SessionFacts>,
    ) -> Result<(Outcome, BTreeSet<String>), StoreError> {
        let mut outcome = Outcome::default();
        let mut there = BTreeSet::new();
        let mut first = Vec::new();
        // Written in one transaction (one commit, not one a session).
        let mut writes: Vec<AttachmentHistory> = Vec::new();
        for facts in chosen {
            let id = facts.session_id();
            let prior = self.run.imported.get(&id).map(|(prior, _)| prior);
            // The store holds what this read wrote of it before.
            let rewrite = matches!(prior, Some(Prior::New | Prior::Replaced(_)));
            let existing = match prior {
                Some(Prior::New) => None,
                Some(Prior::Replaced(before)) => Some((**before).clone()),
                Some(Prior::Held) | None => store.load(&id)?,
            };
            let had = existing.clone();
            let Ok(mut merged) = self.history(facts, existing) else {
                outcome.refused.insert(id);
                continue;
            };
            there.insert(id.clone());
            if had.is_none() {
                first.push((facts, self.summary(facts, &merged)));
            }
            let (counted, was) = match had {
                Some(old) if facts::same(&old, &merged) => {
                    if rewrite {
                        store.remove(&id)?;
                        writes.push(old);
                    }
                    (Counted::Unchanged, Prior::Held)
                }
                old => {
                    merged.revision = old.as_ref().map_or(0, |o| o.revision) + 1;
                    if rewrite {
                        store.remove(&id)?;
                    }
                    writes.push(merged);
                    match old {
                        Some(old) => (Counted::Updated, Prior::Replaced(Box::new(old))),
                        None => (Counted::New, Prior::New),
                    }
                }
            };
            let was = prior.is_none().then_some(was);
            outcome.counted.push((id, counted, was));
        }
        let writes: Vec<&AttachmentHistory> = writes.iter().collect();
        if let Some(error) = store.save_batch(&writes).into_iter().find_map(Result::err) {
            return Err(error);
        }
        let first: Vec<(&SessionFacts, &SessionSummary)> =
            first.iter().map(|(f, s)| (*f, s)).collect();
        self.keep_summaries(&first);
        Ok((outcome, there))
    }
}
