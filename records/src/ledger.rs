//! How far each session-record file was read, kept in a store between
//! runs (`Store::record_files`), so the next run reads only what was
//! appended.
//!
//! A row names the file (its path, device and inode), what it was when read
//! (its size and modification time), where reading stopped (after the last
//! complete record) and a hash of the bytes just before that. The reader's
//! own state goes with it: its place in the file (the session a record
//! named, threads, readings held, a record being skipped) and what the
//! file's records said so far, per session ([`SessionFacts`]), so a session
//! resumed mid-file is the session a whole read gives. What a row's state
//! holds is this build's: a row another build wrote is read again from the
//! start ([`generation`]).
//!
//! The next run, per file: the same file, the same size and time, read to
//! its end: not opened ([`Verdict::Unchanged`]); the same file, grown, the
//! bytes before the offset unchanged: read from the offset
//! ([`Verdict::Resume`]); otherwise (replaced, cut short, rewritten, or
//! written by another build): read again from the start, said in the debug
//! log ([`Verdict::Again`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tether_core::records::{FileReport, RecordFormat, RecordReading};
use tether_core::store::{RecordFileRow, Store};

pub use crate::stamp::{Identity, generation};
use crate::stamp::{file_stamp, fnv1a};
use crate::{FileState, MAX_SESSIONS, Records, SessionFacts, Source, Task};

/// How many bytes before the offset the tail hash covers.
const TAIL: u64 = 4096;

/// What the next run does with a file the ledger holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// As it was, read to its end: not opened.
    Unchanged,
    /// Grown (or with a last record read to its end only at rest): read on
    /// from the row's offset, if the bytes before it are the same.
    Resume,
    /// Read again from the start, and why.
    Again(&'static str),
}

/// What to do with the file `now` that `row` describes.
pub fn verdict(row: &RecordFileRow, now: &Identity, whole_only: bool) -> Verdict {
    if row.generation != generation() {
        return Verdict::Again("its row was written by another build of Tether");
    }
    if row.device != now.device || row.inode != now.inode {
        return Verdict::Again("replaced (another inode)");
    }
    if now.size < row.size || now.size < row.offset {
        return Verdict::Again("cut short (smaller than when read)");
    }
    if now.size == row.size && now.modified_ns != row.modified_ns {
        // An appending writer changes the size; the same size written
        // again is a rewrite, wherever in the file.
        return Verdict::Again("rewritten in place (same size, modified since)");
    }
    if now.size == row.size && row.offset == row.size {
        return Verdict::Unchanged;
    }
    if whole_only {
        return Verdict::Again("changed (a file read whole)");
    }
    Verdict::Resume
}

/// A hash (FNV-1a, 64 bits) of the up to 4 KiB of `file` just before
/// `offset`.
pub fn tail_hash(file: &mut std::fs::File, offset: u64) -> std::io::Result<u64> {
    let from = offset.saturating_sub(TAIL);
    file.seek(SeekFrom::Start(from))?;
    let mut bytes = Vec::with_capacity(TAIL as usize);
    file.take(offset - from).read_to_end(&mut bytes)?;
    if (bytes.len() as u64) < offset - from {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    Ok(fnv1a(&bytes))
}

/// What separates a database's path from the role of the source that read
/// it, in a file's key (a control character no file name here holds).
const ROLE_SEPARATOR: char = '\u{1f}';

/// The key a file's state and ledger row are kept under: its path; for a
/// database, which several sources read (each with its own query, each
/// with its own facts and place), its path and the source's role, so one
/// source's reading never replaces another's.
pub(crate) fn file_key(path: PathBuf, source: &Source) -> PathBuf {
    if source.source.format == RecordFormat::Sqlite {
        let mut key = path.into_os_string();
        key.push(format!("{ROLE_SEPARATOR}{}", source.source.role));
        PathBuf::from(key)
    } else {
        path
    }
}

/// The file a [`file_key`] names.
fn file_of(key: &Path) -> &Path {
    match key.to_str().and_then(|k| k.rsplit_once(ROLE_SEPARATOR)) {
        Some((path, _)) => Path::new(path),
        None => key,
    }
}

/// What a row's state says without its facts: enough to list the file and
/// its sessions, and to place a file not read this run.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Head {
    /// The source's role.
    pub role: String,
    /// The file within its source's root.
    pub rel: String,
    /// What was read of it.
    pub report: FileReport,
    /// The Tether sessions its records feed.
    pub sessions: Vec<String>,
    /// The configured names it was read with (a change reads it again).
    pub configured: u64,
}

/// The rest of a row's state: the reader's place and the file's facts.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Body {
    /// The session the file's records named last.
    pub session: Option<String>,
    /// Threads and the sessions they named.
    pub threads: HashMap<String, String>,
    /// Readings of threads that named no session yet.
    pub pending: Vec<(String, RecordReading)>,
    /// Reading stopped inside a record past the bound.
    pub skipping: bool,
    /// The file's signature when read (a database: with its log).
    pub signature: u64,
    /// Its latest modification when read, in nanoseconds.
    pub modified_ns: Option<u64>,
    /// What the file's records said, by Tether session id.
    pub facts: BTreeMap<String, SessionFacts>,
}

/// A file's facts as [`Body::facts`] reads them back.
#[derive(Debug)]
pub struct FactsRef<'a>(pub &'a BTreeMap<String, Arc<SessionFacts>>);

impl serde::Serialize for FactsRef<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(id, facts)| (id, &**facts)))
    }
}

/// A [`Body`] to write, borrowed from the reader's state.
#[derive(Debug, serde::Serialize)]
pub struct BodyRef<'a> {
    /// [`Body::session`].
    pub session: &'a Option<String>,
    /// [`Body::threads`].
    pub threads: &'a HashMap<String, String>,
    /// [`Body::pending`].
    pub pending: &'a [(String, RecordReading)],
    /// [`Body::skipping`].
    pub skipping: bool,
    /// [`Body::signature`].
    pub signature: u64,
    /// [`Body::modified_ns`].
    pub modified_ns: Option<u64>,
    /// [`Body::facts`].
    pub facts: FactsRef<'a>,
}

/// A row's head and state: the [`Head`] and the [`Body`], each as JSON
/// (kept apart, so a listing reads the heads alone).
pub fn encode(head: &Head, body: &BodyRef<'_>) -> (Vec<u8>, Vec<u8>) {
    let head = serde_json::to_vec(head).unwrap_or_default();
    let mut out = Vec::with_capacity(4096);
    let _ = serde_json::to_writer(&mut out, body);
    (head, out)
}

/// A row's [`Head`] (`None`: unreadable).
pub fn head(head: &[u8]) -> Option<Head> {
    serde_json::from_slice(head).ok()
}

/// A row's [`Body`] (`None`: unreadable).
pub fn body(state: &[u8]) -> Option<Body> {
    serde_json::from_slice(state).ok()
}

/// A hash of the configured names a file was read with.
pub fn configured_hash(names: &[String]) -> u64 {
    let mut bytes = Vec::new();
    for name in names {
        bytes.extend_from_slice(name.as_bytes());
        bytes.push(0);
    }
    fnv1a(&bytes)
}

/// The ledger a [`Records`] keeps in a store, and the files it left
/// unread because their rows say they did not change.
#[derive(Default)]
pub(crate) struct Kept {
    pub(crate) store: Option<Arc<dyn Store>>,
    loaded: bool,
    pub(crate) only_changed: bool,
    /// Rows not placed yet in this process, by path, with their heads.
    pub(crate) known: HashMap<PathBuf, (RecordFileRow, Head)>,
    /// Files as their rows left them: not read, their facts still in the
    /// row until a session they feed is built.
    pub(crate) parked: BTreeMap<PathBuf, (RecordFileRow, Head)>,
    /// Only sessions that must be built are (a listing): the others are
    /// listed from their kept summaries.
    pub(crate) lazy: bool,
    /// The kept session summaries, by session, as the store holds them.
    pub(crate) summaries: HashMap<String, tether_core::store::RecordSessionRow>,
    /// The sessions listed from their kept summaries on the last pass.
    pub(crate) listed: BTreeMap<String, crate::kept::KeptSession>,
}

fn nanos(at: Option<SystemTime>) -> Option<u64> {
    at.and_then(|m| m.duration_since(UNIX_EPOCH).ok())
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

fn time_of(ns: Option<u64>) -> Option<SystemTime> {
    ns.map(|ns| UNIX_EPOCH + Duration::from_nanos(ns))
}

/// A file's state as its row left it (`now`: unchanged since, so it is
/// not read again in this process until it changes; else read on).
fn restore(row: &RecordFileRow, head: &Head, state: &[u8], now: bool) -> Option<FileState> {
    let body = body(state)?;
    Some(FileState {
        offset: row.offset,
        len: if now { body.signature } else { 0 },
        modified: if now { time_of(body.modified_ns) } else { None },
        session: body.session,
        threads: body.threads,
        pending: body.pending,
        skipping: body.skipping,
        report: head.report.clone(),
        facts: body
            .facts
            .into_iter()
            .map(|(id, facts)| (id, Arc::new(facts)))
            .collect(),
        identity: Some(Identity {
            device: row.device,
            inode: row.inode,
            size: row.size,
            modified_ns: row.modified_ns,
        }),
        stamp: file_stamp(row),
        parked_as: None,
    })
}

/// Why a file whose state is `state` is read again from its start, if it
/// is: changed whole (a document, a database), cut short, replaced,
/// rewritten in place, or the bytes before where reading stopped changed.
pub(crate) fn read_again(
    state: &FileState,
    opened: Option<&Identity>,
    len: u64,
    format: RecordFormat,
    check: Option<(u64, u64)>,
    file: &mut std::fs::File,
) -> Option<&'static str> {
    let had = state.offset > 0 || !state.facts.is_empty() || state.report.records > 0;
    if !had {
        return None;
    }
    if format != RecordFormat::Lines {
        return Some("changed (a file read whole)");
    }
    if len < state.offset {
        return Some("cut short (smaller than when read)");
    }
    if let (Some(was), Some(now)) = (state.identity, opened)
        && (was.device, was.inode) != (now.device, now.inode)
    {
        return Some("replaced (another inode)");
    }
    if len == state.offset && state.report.bytes > 0 {
        return Some("rewritten in place (same size, modified since)");
    }
    if let Some((offset, hash)) = check
        && tail_hash(file, offset).ok() != Some(hash)
    {
        return Some("rewritten (the bytes before where reading stopped changed)");
    }
    None
}

/// `state` as a file never read.
pub(crate) fn start_again(state: &mut FileState) {
    state.offset = 0;
    state.session = None;
    state.threads.clear();
    state.pending.clear();
    state.skipping = false;
    state.facts.clear();
    state.report = FileReport {
        agent_kind: std::mem::take(&mut state.report.agent_kind),
        role: std::mem::take(&mut state.report.role),
        path: std::mem::take(&mut state.report.path),
        ..FileReport::default()
    };
}

/// The ledger row of a file read as far as `state` says.
pub(crate) fn row_of(
    source: &Source,
    path: &Path,
    rel: &str,
    configured: &[String],
    state: &FileState,
    opened: Option<Identity>,
    file: &mut std::fs::File,
) -> RecordFileRow {
    let whole = source.source.format != RecordFormat::Lines;
    let id = opened.unwrap_or_default();
    let (size, modified_ns) = if whole {
        (state.len, nanos(state.modified).unwrap_or(0))
    } else {
        (id.size, id.modified_ns)
    };
    let offset = if whole { size } else { state.offset };
    let tail_hash = if whole {
        0
    } else {
        self::tail_hash(file, offset).unwrap_or(0)
    };
    let head = Head {
        role: source.source.role.clone(),
        rel: rel.to_owned(),
        report: state.report.clone(),
        sessions: state.facts.keys().cloned().collect(),
        configured: configured_hash(configured),
    };
    let body = BodyRef {
        session: &state.session,
        threads: &state.threads,
        pending: &state.pending,
        skipping: state.skipping,
        signature: state.len,
        modified_ns: nanos(state.modified),
        facts: FactsRef(&state.facts),
    };
    let (head, state) = encode(&head, &body);
    RecordFileRow {
        path: path.to_string_lossy().into_owned(),
        agent_kind: source.kind.clone(),
        device: id.device,
        inode: id.inode,
        size,
        modified_ns,
        offset,
        tail_hash,
        gone: false,
        imported: false,
        generation: generation().to_owned(),
        head,
        state,
    }
}

impl Kept {
    /// The states of the rows of `paths` (none where the store fails).
    fn states(&self, paths: &[String]) -> Vec<(String, Vec<u8>)> {
        let Some(store) = &self.store else {
            return Vec::new();
        };
        store.record_file_states(paths).unwrap_or_else(|error| {
            tracing::debug!(%error, "the ledger could not give the files' states");
            Vec::new()
        })
    }
}

impl Records {
    /// Keeps how far each file was read in `store` (its record-file
    /// ledger), and reads from it where each file was left: the next
    /// [`read`](Records::read), in this process or another, reads only
    /// what was appended. A store that keeps no ledger is read whole, as
    /// without one.
    pub fn keep_in(&mut self, store: Arc<dyn Store>) {
        self.kept.store = Some(store);
        self.kept.loaded = false;
    }

    /// For an import into the ledger's store: the sessions whose files did
    /// not change since they were imported are left unread (counted
    /// unchanged by [`import`](Records::import), absent from
    /// [`sessions`](Records::sessions)).
    pub fn only_changed(&mut self) {
        self.kept.only_changed = true;
    }

    /// Reads the ledger's rows, once.
    pub(crate) fn load_ledger(&mut self) {
        if self.kept.loaded {
            return;
        }
        self.kept.loaded = true;
        let Some(store) = &self.kept.store else {
            return;
        };
        if self.kept.lazy {
            match store.record_sessions() {
                Ok(rows) => {
                    self.kept.summaries = rows
                        .into_iter()
                        .map(|row| (row.session_id.clone(), row))
                        .collect();
                }
                Err(error) => tracing::debug!(%error, "no kept session summaries"),
            }
        }
        match store.record_files() {
            Ok(rows) => {
                for row in rows {
                    match head(&row.head) {
                        Some(head) => {
                            self.kept
                                .known
                                .insert(PathBuf::from(&row.path), (row, head));
                        }
                        None => {
                            tracing::debug!(file = %row.path, "an unreadable ledger row; the file is read whole")
                        }
                    }
                }
            }
            Err(error) => {
                tracing::debug!(%error, "no ledger of record files; every file is read whole");
                self.kept.store = None;
            }
        }
    }

    /// What to read of the file at `path` (`None`: nothing, it is as its
    /// ledger row left it).
    pub(crate) fn task_for(
        &mut self,
        index: usize,
        rel: String,
        path: PathBuf,
        meta: std::fs::Metadata,
    ) -> Option<Task> {
        let keep = self.kept.store.is_some();
        let source = &self.sources[index];
        let fresh = || FileState {
            report: FileReport {
                agent_kind: source.kind.clone(),
                role: source.source.role.clone(),
                path: source.root.source(&rel),
                ..FileReport::default()
            },
            ..FileState::default()
        };
        let task = |state, was, check| Task {
            index,
            rel: rel.clone(),
            path: path.clone(),
            meta: meta.clone(),
            state,
            was,
            check,
            keep,
        };
        if let Some(state) = self.files.remove(&path) {
            return Some(task(state, Vec::new(), None));
        }
        let placed = self
            .kept
            .parked
            .remove(&path)
            .or_else(|| self.kept.known.remove(&path));
        let Some((row, head)) = placed else {
            return Some(task(fresh(), Vec::new(), None));
        };
        let names = self.names.get(&source.kind).map(Vec::as_slice);
        let verdict = if head.configured != configured_hash(names.unwrap_or(&[])) {
            Verdict::Again("today's configured servers differ from those it was read with")
        } else {
            let whole = source.source.format != RecordFormat::Lines;
            verdict(&row, &now_of(source, &rel, &meta), whole)
        };
        match verdict {
            Verdict::Unchanged => {
                self.kept.parked.insert(path, (row, head));
                None
            }
            Verdict::Resume => match self
                .kept
                .states(std::slice::from_ref(&row.path))
                .pop()
                .and_then(|(_, state)| restore(&row, &head, &state, false))
            {
                Some(state) => Some(task(state, Vec::new(), Some((row.offset, row.tail_hash)))),
                None => Some(task(fresh(), head.sessions, None)),
            },
            Verdict::Again(why) => {
                tracing::debug!(file = %head.report.path, why, "reading the file again from its start");
                Some(task(fresh(), head.sessions, None))
            }
        }
    }

    /// Rows of this reader's harnesses whose files vanished: marked gone in
    /// the ledger (kept, not deleted). Their sessions stay in the store
    /// they were imported into; what is on disk no longer shows them.
    pub(crate) fn note_gone(&mut self) {
        let Some(store) = self.kept.store.clone() else {
            return;
        };
        let kinds = self.harnesses();
        let gone: Vec<String> = self
            .kept
            .known
            .iter()
            .filter(|(path, (row, _))| {
                !row.gone
                    && kinds.contains(&row.agent_kind)
                    && matches!(std::fs::symlink_metadata(file_of(path)), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
            })
            .map(|(_, (row, head))| {
                tracing::debug!(file = %head.report.path, "gone since it was read; its row is kept, marked gone");
                row.path.clone()
            })
            .collect();
        if gone.is_empty() {
            return;
        }
        match store.mark_record_files(&gone, None, Some(true)) {
            Ok(()) => {
                for (row, _) in self.kept.known.values_mut() {
                    row.gone |= gone.contains(&row.path);
                }
            }
            Err(error) => tracing::debug!(%error, "the ledger could not mark files gone"),
        }
    }

    /// Takes in what each file's read gave: its state, its row written to
    /// the ledger, and every session it touched (and, unless only changed
    /// sessions are wanted, or in a listing, every session) built from its
    /// files' facts. Returns the sessions built.
    pub(crate) fn settle(
        &mut self,
        done: Vec<crate::Done>,
        pass: &mut crate::Pass,
    ) -> BTreeSet<String> {
        let mut touched = self.take_in(done, pass, false);
        if self.kept.lazy {
            self.list_kept(&mut touched);
        } else {
            let only_changed = self.kept.only_changed;
            let wanted: Vec<PathBuf> = self
                .kept
                .parked
                .iter()
                .filter(|(_, (row, _))| !only_changed || !row.imported)
                .map(|(path, _)| path.clone())
                .collect();
            self.unpark(&wanted);
            for state in self.files.values() {
                for id in state.facts.keys() {
                    if !self.sessions.contains_key(id) {
                        touched.insert(id.clone());
                    }
                }
            }
        }
        self.rebuild(&touched)
    }

    /// Takes in each file's read: its state, and its row written to the
    /// ledger (remembered, without its state, where `park`). Returns the
    /// sessions it touched, and those of the files held not built yet.
    pub(crate) fn take_in(
        &mut self,
        done: Vec<crate::Done>,
        pass: &mut crate::Pass,
        park: bool,
    ) -> BTreeSet<String> {
        let mut touched = BTreeSet::new();
        let mut rows = Vec::new();
        let mut keys = Vec::new();
        for mut done in done {
            if done.read_any {
                pass.files_read += 1;
            }
            touched.extend(done.touched);
            if let Some(row) = done.row {
                done.state.stamp = file_stamp(&row);
                rows.push(row);
                keys.push(done.path.clone());
            }
            self.files.insert(done.path, done.state);
        }
        if let Some(store) = &self.kept.store
            && !rows.is_empty()
            && let Err(error) = store.save_record_files(&rows)
        {
            tracing::debug!(%error, "the ledger could not keep how far files were read");
        }
        if park {
            for (key, mut row) in keys.into_iter().zip(rows) {
                let Some(head) = head(&row.head) else {
                    continue;
                };
                row.head = Vec::new();
                row.state = Vec::new();
                if let Some(state) = self.files.get_mut(&key) {
                    state.parked_as = Some((row, head));
                }
            }
        }
        for state in self.files.values() {
            for id in state.facts.keys() {
                if !self.sessions.contains_key(id) {
                    touched.insert(id.clone());
                }
            }
        }
        touched
    }

    /// Reads parked files' states from their rows.
    pub(crate) fn unpark(&mut self, paths: &[PathBuf]) {
        let placed: Vec<(PathBuf, (RecordFileRow, Head))> = paths
            .iter()
            .filter_map(|p| Some((p.clone(), self.kept.parked.remove(p)?)))
            .collect();
        if placed.is_empty() {
            return;
        }
        let wanted: Vec<String> = placed
            .iter()
            .map(|(_, (row, _))| row.path.clone())
            .collect();
        let mut states: HashMap<String, Vec<u8>> = self.kept.states(&wanted).into_iter().collect();
        for (path, (row, head)) in placed {
            match states
                .remove(&row.path)
                .and_then(|state| restore(&row, &head, &state, true))
            {
                Some(mut state) => {
                    // Kept to park it again (a grouped read).
                    state.parked_as = Some((
                        RecordFileRow {
                            head: Vec::new(),
                            ..row
                        },
                        head,
                    ));
                    self.files.insert(path, state);
                }
                None => {
                    tracing::warn!(file = %head.report.path, "an unreadable ledger row; its sessions are left out")
                }
            }
        }
    }

    /// Builds each of `ids` from its files' facts, merged in path order (as
    /// a whole read does), reading parked files that feed one; a session no
    /// file feeds any more is dropped. Returns those built.
    pub(crate) fn rebuild(&mut self, ids: &BTreeSet<String>) -> BTreeSet<String> {
        let wanted: Vec<PathBuf> = self
            .kept
            .parked
            .iter()
            .filter(|(_, (_, head))| head.sessions.iter().any(|s| ids.contains(s)))
            .map(|(path, _)| path.clone())
            .collect();
        self.unpark(&wanted);
        // A session of one file shares that file's facts; one of several
        // is their merge (one copy, never one per file and one merged).
        let mut built: BTreeMap<&str, Arc<SessionFacts>> = BTreeMap::new();
        for state in self.files.values() {
            for (id, facts) in &state.facts {
                if !ids.contains(id) {
                    continue;
                }
                match built.get_mut(id.as_str()) {
                    Some(mine) => Arc::make_mut(mine).merge(SessionFacts::clone(facts)),
                    None => {
                        built.insert(id, Arc::clone(facts));
                    }
                }
            }
        }
        let mut built: BTreeMap<String, Arc<SessionFacts>> =
            built.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        let mut changed = BTreeSet::new();
        let mut refused = BTreeSet::new();
        for id in ids {
            match built.remove(id) {
                None => {
                    self.sessions.remove(id);
                }
                Some(_)
                    if !self.sessions.contains_key(id) && self.sessions.len() >= MAX_SESSIONS =>
                {
                    refused.insert(id.clone());
                }
                Some(facts) => {
                    self.sessions.insert(id.clone(), facts);
                    changed.insert(id.clone());
                }
            }
        }
        for state in self.files.values_mut() {
            let cut = state
                .facts
                .keys()
                .filter(|id| refused.contains(*id))
                .count();
            if cut > 0 {
                // Said, never silent: the file's line names the cap.
                state.report.refused += cut as u64;
                state.report.error.get_or_insert_with(|| {
                    format!(
                        "holds sessions past the {MAX_SESSIONS} Tether keeps in memory; those were not read (too_many_entries)"
                    )
                });
            }
        }
        changed
    }

    /// The reports of the files left unread (their rows' heads).
    pub(crate) fn parked_reports(&self) -> impl Iterator<Item = (&PathBuf, &FileReport)> {
        self.kept.parked.iter().map(|(p, (_, h))| (p, &h.report))
    }

    /// Sessions left unread: their files are as they were when imported.
    pub(crate) fn unread_sessions(&self) -> usize {
        let ids: BTreeSet<&String> = self
            .kept
            .parked
            .values()
            .flat_map(|(_, head)| &head.sessions)
            .filter(|id| {
                !self.sessions.contains_key(*id)
                    && !self.run.imported.contains_key(*id)
                    && !self.run.refused.contains(*id)
            })
            .collect();
        ids.len()
    }

    /// After an import into `store` of the sessions `ok`: the ledger's rows
    /// of files every one of whose sessions is there are marked imported
    /// (when `store` keeps the ledger).
    /// Returns the files marked.
    pub(crate) fn mark_imported(&self, store: &dyn Store, ok: &BTreeSet<String>) -> Vec<PathBuf> {
        let Some(kept) = &self.kept.store else {
            return Vec::new();
        };
        if !std::ptr::addr_eq(Arc::as_ptr(kept), store as *const dyn Store) {
            return Vec::new();
        }
        let marked: Vec<PathBuf> = self
            .files
            .iter()
            .filter(|(_, state)| {
                !state.facts.is_empty() && state.facts.keys().all(|id| ok.contains(id))
            })
            .map(|(path, _)| path.clone())
            .collect();
        let paths: Vec<String> = marked
            .iter()
            .map(|path| path.to_string_lossy().into_owned())
            .collect();
        if let Err(error) = store.mark_record_files(&paths, Some(true), None) {
            tracing::debug!(%error, "the ledger could not mark files imported");
            return Vec::new();
        }
        marked
    }
}

/// The file at `rel` as the ledger compares it: a database with its log.
fn now_of(source: &Source, rel: &str, meta: &std::fs::Metadata) -> Identity {
    let mut now = Identity::of(meta);
    if source.source.format == RecordFormat::Sqlite {
        let (_, signature, modified) = crate::database_log(source, rel, meta);
        now.size = signature;
        now.modified_ns = nanos(modified).unwrap_or(0);
    }
    now
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(now: &Identity, offset: u64) -> RecordFileRow {
        RecordFileRow {
            device: now.device,
            inode: now.inode,
            size: now.size,
            modified_ns: now.modified_ns,
            offset,
            generation: generation().to_owned(),
            ..RecordFileRow::default()
        }
    }

    #[test]
    fn each_change_has_its_verdict() {
        let was = Identity {
            device: 1,
            inode: 2,
            size: 100,
            modified_ns: 5,
        };
        let r = row(&was, 100);
        assert_eq!(verdict(&r, &was, false), Verdict::Unchanged);
        let grown = Identity {
            size: 150,
            modified_ns: 6,
            ..was
        };
        assert_eq!(verdict(&r, &grown, false), Verdict::Resume);
        assert!(matches!(verdict(&r, &grown, true), Verdict::Again(_)));
        let cut = Identity { size: 50, ..was };
        assert!(matches!(verdict(&r, &cut, false), Verdict::Again(_)));
        let other = Identity { inode: 3, ..was };
        assert!(matches!(verdict(&r, &other, false), Verdict::Again(_)));
        let rewritten = Identity {
            modified_ns: 9,
            ..was
        };
        assert!(matches!(verdict(&r, &rewritten, false), Verdict::Again(_)));
        // A last line without its newline, read only at rest: read on.
        assert_eq!(verdict(&row(&was, 90), &was, false), Verdict::Resume);
        let mut old = row(&was, 100);
        old.generation = "0.0.0/1-1".into();
        assert!(matches!(verdict(&old, &was, false), Verdict::Again(_)));
    }

    #[test]
    fn a_state_reads_back() {
        let head = Head {
            rel: "a/b.jsonl".into(),
            sessions: vec!["claude:x".into()],
            ..Head::default()
        };
        let facts = BTreeMap::from([(
            "claude:x".to_owned(),
            Arc::new(SessionFacts::new("claude", "x")),
        )]);
        let body = BodyRef {
            session: &None,
            threads: &HashMap::new(),
            pending: &[],
            skipping: false,
            signature: 3,
            modified_ns: None,
            facts: FactsRef(&facts),
        };
        let (kept_head, state) = encode(&head, &body);
        assert_eq!(
            super::head(&kept_head).map(|h| h.sessions),
            Some(head.sessions)
        );
        let back = super::body(&state).expect("body");
        assert_eq!(back.facts["claude:x"].harness_session, "x");
        assert!(super::head(&kept_head[..3]).is_none());
    }
}
