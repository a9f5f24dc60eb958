//! The session-record readers' file access (`tether sessions`).
//!
//! Each passthrough plugin says where its harness writes its own session
//! records ([`RecordReader::record_sources`]) and reads one record at
//! a time ([`RecordReader::read_record`], pure). This crate does the
//! rest:
//! - finds the files, below each source's root under the user's home (or
//!   where the harness's own variable moves it), matching the source's
//!   pattern, with bounds on how many it looks at;
//! - opens each read-only through the inventory's [`ConfigRoot`] (no path
//!   out of the root, no symlink out of it, no special file), never writes,
//!   locks or moves it, and reads it in bounded pieces from where the last
//!   read stopped ([`read`]), in this process or, with a store's ledger,
//!   another ([`ledger`]: a file not changed since is not opened);
//! - refuses, per file and with a sentence, what it cannot read (too large,
//!   not UTF-8, a record past the bound, a link out of the root), and reads
//!   the rest;
//! - adds each reading to its session's facts ([`facts::SessionFacts`]),
//!   once its names are names, and builds each session's attachment history
//!   ([`facts::history_of`]), merged into the one a store already holds;
//! - with a ledger, lists or imports a bounded group of files at a time
//!   ([`GROUP_BYTES`], [`GROUP_FILES`]), so memory stays flat however many
//!   files a home holds.
//!
//! - reads one file a user names by path, whatever harness wrote it ([`by_path`]).
//!
//! [`RecordReader::record_sources`]: tether_core::records::RecordReader::record_sources
//! [`RecordReader::read_record`]: tether_core::records::RecordReader::read_record
//!
//! `Records` (files, sessions, filters) and `import(store)`: each session
//! merged into what the store holds and written only when that changed it, with
//! the next revision.

#![warn(missing_docs)]

pub mod by_path;
pub mod facts;
mod file;
mod group;
mod kept;
pub mod ledger;
pub mod read;
mod stamp;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use tether_core::history::AttachmentHistory;
use tether_core::model::Timestamp;
use tether_core::observer::TransportObserver;
use tether_core::records::{
    FileReport, RecordFormat, RecordSource, SessionSummary, SourceCut, StatusCounts,
};
use tether_core::registry::Registry;
use tether_core::spec::ServerSpec;
use tether_core::store::{Store, StoreError};
use tether_inventory::root::ConfigRoot;

pub use facts::SessionFacts;
pub use group::{GROUP_BYTES, GROUP_FILES};
pub use kept::Known;

/// Files looked at per source, at most (the newest first).
pub const MAX_FILES_PER_SOURCE: usize = 10_000;
/// Directory entries looked at per source, at most.
pub const MAX_ENTRIES_PER_SOURCE: usize = 200_000;
/// Sessions kept in memory, at most.
pub const MAX_SESSIONS: usize = 20_000;

/// Where the harnesses' files are: the user's home, and the variables that
/// move a harness's directory (`CODEX_HOME`, `XDG_DATA_HOME`, …).
#[derive(Debug, Clone)]
pub struct Home {
    dir: PathBuf,
    vars: HashMap<String, String>,
}

impl Home {
    /// This process's home (`$HOME`) and environment.
    pub fn from_env() -> Self {
        Home::new(
            std::env::var_os("HOME").unwrap_or_default(),
            std::env::vars().collect(),
        )
    }

    /// The home at `dir`, with `vars` as the environment.
    pub fn new(dir: impl Into<PathBuf>, vars: HashMap<String, String>) -> Self {
        Home {
            dir: dir.into(),
            vars,
        }
    }

    /// A source's root, and how it is shown.
    fn root(&self, source: &RecordSource) -> ConfigRoot {
        if let Some(var) = &source.root_var
            && let Some(value) = self.vars.get(var).filter(|v| !v.is_empty())
        {
            let dir = Path::new(value).join(&source.root_suffix);
            let shown = if source.root_suffix.is_empty() {
                format!("${var}")
            } else {
                format!("${var}/{}", source.root_suffix)
            };
            return ConfigRoot::new(dir, shown);
        }
        ConfigRoot::new(
            self.dir.join(&source.root_default),
            format!("~/{}", source.root_default),
        )
    }
}

/// Which sessions to read.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only these harnesses (agent kinds); all when empty.
    pub harnesses: Vec<String>,
    /// Only sessions with a record at or after this time (files last
    /// written before it are not opened).
    pub since: Option<Timestamp>,
    /// Only sessions of this project.
    pub project: Option<String>,
}

struct Source {
    kind: String,
    observer: Arc<dyn TransportObserver>,
    source: RecordSource,
    root: ConfigRoot,
}

#[derive(Default)]
struct FileState {
    offset: u64,
    len: u64,
    modified: Option<SystemTime>,
    session: Option<String>,
    threads: HashMap<String, String>,
    /// Readings of threads that named no session yet, kept until one does.
    pending: Vec<(String, tether_core::records::RecordReading)>,
    /// The last read stopped inside a record past the bound.
    skipping: bool,
    report: FileReport,
    /// What the file's records said so far, by Tether session id (a
    /// session's facts are its files' merged, in path order; a session of
    /// one file shares them).
    facts: BTreeMap<String, Arc<SessionFacts>>,
    /// The file read last (its device and inode).
    identity: Option<ledger::Identity>,
    /// Its ledger row as written (`stamp::file_stamp`; 0: none).
    stamp: u64,
    /// Its ledger row, without its state, and its head, once the row is
    /// written: what a grouped read parks it as.
    parked_as: Option<(tether_core::store::RecordFileRow, ledger::Head)>,
}

/// What a read pass changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pass {
    /// Files read (or read further).
    pub files_read: usize,
    /// Sessions whose facts changed.
    pub changed: Vec<String>,
}

/// Every harness's session records under one home, read so far. Reading
/// again ([`Records::read`]) reads only what was written since.
pub struct Records {
    sources: Vec<Source>,
    configured: HashMap<String, Vec<ServerSpec>>,
    names: HashMap<String, Vec<String>>,
    filter: Filter,
    files: BTreeMap<PathBuf, FileState>,
    sessions: BTreeMap<String, Arc<SessionFacts>>,
    /// What a cap cut from each source on the last pass.
    cuts: BTreeMap<usize, SourceCut>,
    /// The store's ledger of the files, where one is kept.
    kept: ledger::Kept,
    /// How far the pass under way has read.
    progress: Arc<ReadProgress>,
    /// What a grouped read imported.
    run: group::Run,
}

/// How far a read pass has gone, for a progress line: files and bytes read
/// of those it has to read (set when the pass has found its files). Shared
/// with another thread ([`Records::progress`]) while the pass runs.
#[derive(Debug, Default)]
pub struct ReadProgress {
    files_total: std::sync::atomic::AtomicU64,
    files_done: std::sync::atomic::AtomicU64,
    bytes_total: std::sync::atomic::AtomicU64,
    bytes_done: std::sync::atomic::AtomicU64,
}

/// [`ReadProgress`] at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadSoFar {
    /// Files read of this pass.
    pub files_done: u64,
    /// Files this pass reads (none until it has found them).
    pub files_total: u64,
    /// Bytes read of this pass.
    pub bytes_done: u64,
    /// Bytes this pass reads.
    pub bytes_total: u64,
}

impl ReadProgress {
    /// Where the pass stands now.
    pub fn now(&self) -> ReadSoFar {
        use std::sync::atomic::Ordering::Relaxed;
        ReadSoFar {
            files_done: self.files_done.load(Relaxed),
            files_total: self.files_total.load(Relaxed),
            bytes_done: self.bytes_done.load(Relaxed),
            bytes_total: self.bytes_total.load(Relaxed),
        }
    }

    fn start(&self, files: u64, bytes: u64) {
        use std::sync::atomic::Ordering::Relaxed;
        self.files_done.store(0, Relaxed);
        self.bytes_done.store(0, Relaxed);
        self.bytes_total.store(bytes, Relaxed);
        self.files_total.store(files, Relaxed);
    }

    fn read(&self, bytes: u64) {
        use std::sync::atomic::Ordering::Relaxed;
        self.bytes_done.fetch_add(bytes, Relaxed);
        self.files_done.fetch_add(1, Relaxed);
    }
}

/// What one source's listing found.
struct Found {
    /// The newest files (within `--since`), at most [`MAX_FILES_PER_SOURCE`].
    files: Vec<(String, PathBuf, std::fs::Metadata)>,
    /// Files that matched (within `--since`), before the cap.
    matched: usize,
    /// The folder had more entries than [`MAX_ENTRIES_PER_SOURCE`].
    entries_exhausted: bool,
}

impl std::fmt::Debug for Records {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Records")
            .field("files", &self.files.len())
            .field("sessions", &self.sessions.len())
            .finish_non_exhaustive()
    }
}

/// What went wrong writing to a store.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The store refused or failed.
    #[error("store: {0}")]
    Store(#[from] StoreError),
}

/// What an import did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Imported {
    /// Sessions the store did not hold.
    pub new: usize,
    /// Sessions it held, that the records changed.
    pub updated: usize,
    /// Sessions it held already as the records say.
    pub unchanged: usize,
    /// Sessions that could not be built (a bound hit).
    pub refused: usize,
}

impl Records {
    /// The records the passthrough plugins of `registry` read, under `home`,
    /// with the servers today's configuration gives each harness
    /// (`configured[kind]`, for rows of sessions a store does not hold yet).
    pub fn new(
        registry: &Registry,
        home: &Home,
        configured: HashMap<String, Vec<ServerSpec>>,
        filter: Filter,
    ) -> Self {
        let mut sources = Vec::new();
        for harness in registry.harnesses() {
            let kind = harness.id.as_str();
            if !filter.harnesses.is_empty() && !filter.harnesses.iter().any(|h| h == kind) {
                continue;
            }
            let Some(reader) = harness.roles.records else {
                continue;
            };
            for source in contained(|| reader.record_sources()).unwrap_or_default() {
                sources.push(Source {
                    kind: kind.to_owned(),
                    observer: Arc::clone(&harness.plugin.observer),
                    root: home.root(&source),
                    source,
                });
            }
        }
        let names = configured
            .iter()
            .map(|(kind, specs)| (kind.clone(), specs.iter().map(|s| s.name.clone()).collect()))
            .collect();
        Records {
            sources,
            configured,
            names,
            filter,
            files: BTreeMap::new(),
            sessions: BTreeMap::new(),
            cuts: BTreeMap::new(),
            kept: ledger::Kept::default(),
            progress: Arc::default(),
            run: group::Run::default(),
        }
    }

    /// How far a read pass under way has gone (for a progress line on
    /// another thread).
    pub fn progress(&self) -> Arc<ReadProgress> {
        Arc::clone(&self.progress)
    }

    /// The harnesses (agent kinds) with a record source.
    pub fn harnesses(&self) -> Vec<String> {
        let mut kinds: Vec<String> = self.sources.iter().map(|s| s.kind.clone()).collect();
        kinds.dedup();
        kinds
    }

    /// Reads what was written since the last pass (everything, the first
    /// time). `at_rest`: the files are not being written (a one-off
    /// import), so a last line without its newline is read too; while
    /// following, it waits for its newline. Files are read on as many
    /// threads as the machine has cores (at most 4), each file by one.
    pub fn read(&mut self, at_rest: bool) -> Pass {
        self.load_ledger();
        let mut tasks = Vec::new();
        for index in 0..self.sources.len() {
            if self.sources[index].source.by_path && self.sources[index].source.pattern.is_empty() {
                // Read only from a file a user names (`Records::of_file`).
                continue;
            }
            let found = self.find(index);
            self.note_cut(index, &found);
            for (rel, path, meta) in found.files {
                let key = ledger::file_key(path, &self.sources[index]);
                tasks.extend(self.task_for(index, rel, key, meta));
            }
        }
        self.note_gone();
        let pending: u64 = tasks.iter().map(Task::pending).sum();
        self.progress.start(tasks.len() as u64, pending);
        let mut pass = Pass::default();
        let mut changed = if self.grouped(at_rest) {
            self.read_grouped(tasks, at_rest, &mut pass)
        } else {
            let done = self.run(tasks, at_rest);
            self.settle(done, &mut pass)
        };
        self.filter_read(&mut changed);
        let (project, since) = (&self.filter.project, self.filter.since);
        if project.is_some() || since.is_some() {
            self.kept.listed.retain(|_, k| {
                project
                    .as_ref()
                    .is_none_or(|p| k.project.as_ref().is_none_or(|fp| fp == p))
                    && since
                        .is_none_or(|s| k.summary.updated_at.0 == 0 || k.summary.updated_at >= s)
            });
        }
        pass.changed = changed.into_iter().collect();
        pass
    }

    /// Reads each of `tasks` further, on as many threads as the machine
    /// has cores (at most 4), each file by one, the largest first.
    fn run(&self, mut tasks: Vec<Task>, at_rest: bool) -> Vec<Done> {
        let pending: u64 = tasks.iter().map(Task::pending).sum();
        let progress = &*self.progress;
        let threads = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .clamp(1, 4)
            .min(tasks.len().max(1));
        let sources = &self.sources;
        let names = &self.names;
        let run = |task: Task| -> Done {
            let configured = names
                .get(&sources[task.index].kind)
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            let bytes = task.pending();
            let done = file::read_file(&sources[task.index], configured, task, at_rest);
            progress.read(bytes);
            done
        };
        if threads < 2 || pending < 8 << 20 {
            return tasks.into_iter().map(run).collect();
        }
        // The largest first, each to the least loaded thread.
        tasks.sort_by_key(|t| std::cmp::Reverse(t.meta.len()));
        let mut shares: Vec<(u64, Vec<Task>)> = (0..threads).map(|_| (0, Vec::new())).collect();
        for task in tasks {
            if let Some(share) = shares.iter_mut().min_by_key(|(load, _)| *load) {
                share.0 += task.meta.len();
                share.1.push(task);
            }
        }
        std::thread::scope(|scope| {
            let handles: Vec<_> = shares
                .into_iter()
                .map(|(_, share)| {
                    scope.spawn(move || share.into_iter().map(run).collect::<Vec<_>>())
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default())
                .collect()
        })
    }

    /// Drops the sessions held that the filters that need the facts
    /// (`--project`, `--since`) leave out, from `changed` too.
    fn filter_read(&mut self, changed: &mut std::collections::BTreeSet<String>) {
        let (project, since) = (&self.filter.project, self.filter.since);
        if project.is_none() && since.is_none() {
            return;
        }
        self.sessions.retain(|_, f| {
            project
                .as_ref()
                .is_none_or(|p| f.project.as_ref().is_none_or(|fp| fp == p))
                && since.is_none_or(|s| f.last_at.0 == 0 || f.last_at >= s)
        });
        changed.retain(|id| self.sessions.contains_key(id));
    }

    /// Keeps what a cap cut from source `index` (or that nothing was).
    fn note_cut(&mut self, index: usize, found: &Found) {
        let kept = found.files.len();
        if found.matched <= kept && !found.entries_exhausted {
            self.cuts.remove(&index);
            return;
        }
        let source = &self.sources[index];
        let root = source.root.source("");
        let root = root.trim_end_matches('/').to_owned();
        let not_read = found.matched.saturating_sub(kept);
        let summary = if found.entries_exhausted {
            format!(
                "the folder holds more than {MAX_ENTRIES_PER_SOURCE} entries; {} matching files were found among the first {MAX_ENTRIES_PER_SOURCE}, the newest {kept} were read, and the rest of the folder was not looked at",
                found.matched
            )
        } else {
            format!(
                "{} session files; the newest {kept} were read and {not_read} older ones were not",
                found.matched
            )
        };
        self.cuts.insert(
            index,
            SourceCut {
                agent_kind: source.kind.clone(),
                role: source.source.role.clone(),
                root,
                found: u64::try_from(found.matched).unwrap_or(u64::MAX),
                not_read: u64::try_from(not_read).unwrap_or(u64::MAX),
                reason_code: tether_core::vocab::ReasonCode::TooManyEntries,
                summary,
            },
        );
    }

    /// What caps cut on the last pass, per source (empty when every file
    /// was read).
    pub fn not_read(&self) -> Vec<SourceCut> {
        self.cuts.values().cloned().collect()
    }

    /// The versions `kind`'s record reader was verified on, where its
    /// plugin names them.
    pub fn verified_on(&self, kind: &str) -> Option<tether_core::records::VerifiedRange> {
        self.sources
            .iter()
            .find(|s| s.kind == kind)
            .and_then(|s| s.observer.roles().records)
            .and_then(|p| p.records_verified_on())
    }

    /// Once per harness and version: records of a kind its reader does not
    /// know (a file's are its sessions' version's), and versions newer than
    /// the reader was verified on.
    pub fn reader_notes(&self) -> Vec<tether_core::records::ReaderNote> {
        use std::collections::BTreeMap;
        use tether_core::records::ReaderNote;
        let verified = |kind: &str| self.verified_on(kind);
        let mut version_of_file: BTreeMap<(&str, &str), Option<&str>> = BTreeMap::new();
        let mut notes: BTreeMap<(String, Option<String>), ReaderNote> = BTreeMap::new();
        // Each session's harness, version and files, in id order: those
        // built and those listed from kept summaries.
        let mut sessions: BTreeMap<&str, (&str, Option<&str>, Vec<&str>)> = BTreeMap::new();
        for (id, facts) in &self.sessions {
            let files = facts.files.iter().map(String::as_str).collect();
            sessions.insert(id, (&facts.agent_kind, facts.version.as_deref(), files));
        }
        for (id, kept) in self.listed() {
            let files = kept.files.iter().map(String::as_str).collect();
            let said = (
                kept.summary.agent_kind.as_str(),
                kept.version.as_deref(),
                files,
            );
            sessions.entry(id).or_insert(said);
        }
        for (kind, version, files) in sessions.values() {
            for file in files {
                version_of_file.entry((kind, file)).or_insert(*version);
            }
        }
        fn add<'n>(
            notes: &'n mut BTreeMap<(String, Option<String>), ReaderNote>,
            verified: &dyn Fn(&str) -> Option<tether_core::records::VerifiedRange>,
            kind: &str,
            version: Option<&str>,
        ) -> &'n mut ReaderNote {
            notes
                .entry((kind.to_owned(), version.map(str::to_owned)))
                .or_insert_with(|| ReaderNote::new(kind, version, verified(kind)))
        }
        for (kind, version, _) in sessions.values() {
            add(&mut notes, &verified, kind, *version);
        }
        let mut files: Vec<(&PathBuf, &FileReport)> = self
            .files
            .iter()
            .map(|(p, f)| (p, &f.report))
            .chain(self.parked_reports().filter(|_| self.kept.lazy))
            .collect();
        files.sort_by(|a, b| a.0.cmp(b.0));
        for file in files.into_iter().map(|(_, f)| f) {
            if file.unknown > 0 || file.not_read > 0 {
                let version = version_of_file
                    .get(&(file.agent_kind.as_str(), file.path.as_str()))
                    .copied()
                    .flatten();
                add(&mut notes, &verified, &file.agent_kind, version).add_file(file);
            }
        }
        notes
            .into_values()
            .filter(|n| {
                n.newer
                    || n.older()
                    || n.unknown_records > 0
                    || n.not_read_records > 0
                    || n.unparsed_records > 0
            })
            .collect()
    }

    /// The files of source `index` (within `--since`), newest first, bounded.
    fn find(&self, index: usize) -> Found {
        let source = &self.sources[index];
        let pattern: Vec<&str> = source.source.pattern.split('/').collect();
        let depth = pattern.len();
        let mut found = Vec::new();
        let mut budget = MAX_ENTRIES_PER_SOURCE;
        let mut exhausted = false;
        // (relative dir, depth): directories whose names matched so far.
        let mut stack: Vec<(String, usize)> = vec![(String::new(), 0)];
        while let Some((dir, level)) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(source.root.dir().join(&dir)) else {
                continue;
            };
            for entry in entries.flatten() {
                if budget == 0 {
                    exhausted = true;
                    break;
                }
                budget -= 1;
                let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                    continue;
                };
                let Some(segment) = pattern.get(level) else {
                    continue;
                };
                if !tether_core::records::segment_matches(segment, &name) {
                    continue;
                }
                let rel = if dir.is_empty() {
                    name
                } else {
                    format!("{dir}/{name}")
                };
                // Not followed: a link is looked at only as a file, and
                // opening it checks it stays inside the root.
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if level + 1 < depth {
                    if kind.is_dir() {
                        stack.push((rel, level + 1));
                    }
                } else if kind.is_file() || kind.is_symlink() {
                    let meta = match std::fs::metadata(entry.path()) {
                        Ok(meta) => meta,
                        // A dangling link: opening it says why.
                        Err(_) => match entry.metadata() {
                            Ok(meta) => meta,
                            Err(_) => continue,
                        },
                    };
                    found.push((rel, entry.path(), meta));
                }
            }
        }
        found.sort_by_key(|(_, _, m)| std::cmp::Reverse(m.modified().ok()));
        // With --since, files last written before it are not wanted: they
        // are neither opened nor counted as cut.
        if let Some(since) = self.filter.since {
            found.retain(|(_, _, m)| {
                m.modified()
                    .ok()
                    .is_none_or(|m| Timestamp::from_system(m) >= since)
            });
        }
        let matched = found.len();
        found.truncate(MAX_FILES_PER_SOURCE);
        Found {
            files: found,
            matched,
            entries_exhausted: exhausted,
        }
    }

    /// The sessions read so far, by Tether session id.
    pub fn sessions(&self) -> &BTreeMap<String, Arc<SessionFacts>> {
        &self.sessions
    }

    /// The sessions that pass the filter (a session whose project is not
    /// known yet is kept until a record says it).
    pub fn selected(&self) -> impl Iterator<Item = &SessionFacts> {
        self.sessions.values().map(|f| &**f).filter(|f| {
            self.filter
                .project
                .as_ref()
                .is_none_or(|p| f.project.as_ref() == Some(p))
        })
    }

    /// What was read of each file so far (a file left unread, as its
    /// ledger row says), in path order.
    pub fn files(&self) -> Vec<FileReport> {
        let mut all: Vec<(&PathBuf, &FileReport)> = self
            .files
            .iter()
            .map(|(p, f)| (p, &f.report))
            .chain(self.parked_reports())
            .collect();
        all.sort_by(|a, b| a.0.cmp(b.0));
        all.into_iter().map(|(_, r)| r.clone()).collect()
    }

    /// The history of one session, built from its records alone (or merged
    /// into `existing`).
    pub fn history(
        &self,
        facts: &SessionFacts,
        existing: Option<AttachmentHistory>,
    ) -> Result<AttachmentHistory, tether_core::reducer::Rejection> {
        let observer = self
            .sources
            .iter()
            .find(|s| s.kind == facts.agent_kind)
            .map(|s| s.observer.as_ref());
        let configured = self
            .configured
            .get(&facts.agent_kind)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        // Counted by tests: an answer builds only the histories it needs.
        tracing::debug!(session = %facts.session_id(), "a session's history built");
        let mut history = facts::history_of(facts, observer, configured, existing)?;
        // A health check is marked in the history itself (its trigger), so
        // a store's readers (the web fleet, `tether mcp`, a Go host) never
        // count it as a session; a session whose transcript appears later
        // is one again.
        let health_check = self.health_check(facts);
        let current = history.current_attempt_id.clone();
        if let Some(attempt) = history
            .attempts
            .iter_mut()
            .find(|a| Some(&a.attempt_id) == current.as_ref())
        {
            if health_check {
                attempt.trigger = tether_core::vocab::Trigger::HealthCheck;
            } else if attempt.trigger == tether_core::vocab::Trigger::HealthCheck {
                attempt.trigger = tether_core::vocab::Trigger::HarnessSession;
            }
        }
        Ok(history)
    }

    /// Every selected session with its history built from its records
    /// (one whose records the reducer refuses is left out), newest first.
    /// The histories are built on as many threads as reading uses.
    pub fn summaries(&self) -> Vec<(SessionSummary, AttachmentHistory)> {
        let mut out = self.each_built(|facts, history| (self.summary(facts, &history), history));
        out.sort_by_key(|s| std::cmp::Reverse(s.0.updated_at));
        out
    }

    /// `make` of each selected session and its history built from its
    /// records (one the reducer refuses is left out), on as many threads
    /// as reading uses; each history is dropped once `make` is done with
    /// it, so a listing never holds them all.
    pub(crate) fn each_built<T: Send>(
        &self,
        make: impl Fn(&SessionFacts, AttachmentHistory) -> T + Sync,
    ) -> Vec<T> {
        let selected: Vec<&SessionFacts> = self.selected().collect();
        let build = |facts: &&SessionFacts| {
            let history = self.history(facts, None).ok()?;
            Some(make(facts, history))
        };
        let threads = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .clamp(1, 4)
            .min(selected.len().max(1));
        if threads < 2 || selected.len() < 8 {
            selected.iter().filter_map(build).collect()
        } else {
            let chunk = selected.len().div_ceil(threads);
            std::thread::scope(|scope| {
                let handles: Vec<_> = selected
                    .chunks(chunk)
                    .map(|part| {
                        scope.spawn(move || part.iter().filter_map(build).collect::<Vec<_>>())
                    })
                    .collect();
                handles
                    .into_iter()
                    .flat_map(|h| h.join().unwrap_or_default())
                    .collect()
            })
        }
    }

    /// The summary of one session, from its history.
    pub fn summary(&self, facts: &SessionFacts, history: &AttachmentHistory) -> SessionSummary {
        let mut counts = StatusCounts::new();
        let attempt = history.current();
        for row in attempt.map(|a| a.servers.as_slice()).unwrap_or_default() {
            *counts.entry(row.status.as_str().to_owned()).or_default() += 1;
        }
        SessionSummary {
            session_id: facts.session_id(),
            agent_kind: facts.agent_kind.clone(),
            harness_session: facts.harness_session.clone(),
            project: attempt
                .and_then(|a| a.project.clone())
                .or_else(|| facts.project.clone()),
            agent_version: attempt
                .and_then(|a| a.agent_version.clone())
                .or_else(|| facts.version.clone()),
            started_at: facts.first_at,
            updated_at: facts.last_at,
            counts,
            files: u32::try_from(facts.files.len()).unwrap_or(u32::MAX),
            health_check: self.health_check(facts),
        }
    }

    /// Whether only its harness's own per-server MCP logs show the session
    /// ([`RecordSource::server_log`]): a health check, not an agent session.
    fn health_check(&self, facts: &SessionFacts) -> bool {
        let logs: Vec<&str> = self
            .sources
            .iter()
            .filter(|s| s.kind == facts.agent_kind && s.source.server_log)
            .map(|s| s.source.role.as_str())
            .collect();
        !logs.is_empty() && facts.only_in(&logs)
    }

    /// Whether the session `id` (its facts held, or listed from its kept
    /// summary) is a harness's own health check, not an agent session:
    /// never "the newest session".
    pub fn is_health_check(&self, id: &str) -> bool {
        match self.sessions.get(id) {
            Some(facts) => self.health_check(facts),
            None => self
                .kept
                .listed
                .get(id)
                .is_some_and(|kept| kept.summary.health_check),
        }
    }

    /// Imports the sessions `ids` (all selected ones when `None`) into
    /// `store`: each merged into the history the store holds for it (one
    /// session whether it was collected live or read here), written only
    /// when that changed it, with a newer revision.
    pub fn import(
        &self,
        store: &dyn Store,
        ids: Option<&[String]>,
    ) -> Result<Imported, ImportError> {
        if let Some(error) = self.run.error.lock().ok().and_then(|mut e| e.take()) {
            return Err(error.into());
        }
        let chosen: Vec<&SessionFacts> = match ids {
            None => self.selected().collect(),
            Some(ids) => ids
                .iter()
                .filter_map(|id| self.sessions.get(id).map(|f| &**f))
                .collect(),
        };
        let (outcome, there) = self.import_each(store, chosen)?;
        let mut done = outcome.imported(&self.run);
        if ids.is_none() {
            done.unchanged += self.unread_sessions();
        }
        self.mark_imported(store, &there);
        Ok(done)
    }
}

/// One file to read further.
struct Task {
    index: usize,
    rel: String,
    path: PathBuf,
    meta: std::fs::Metadata,
    state: FileState,
    /// The sessions the file fed when its ledger row was written (read
    /// again from the start: they lose what it said).
    was: Vec<String>,
    /// Resuming from a ledger row: its offset and the hash of the bytes
    /// before it, checked before reading on.
    check: Option<(u64, u64)>,
    /// A ledger is kept: the file's row is written once read.
    keep: bool,
}

impl Task {
    /// The bytes left to read.
    fn pending(&self) -> u64 {
        self.meta.len().saturating_sub(self.state.offset)
    }
}

/// What reading one file further gave.
struct Done {
    path: PathBuf,
    state: FileState,
    read_any: bool,
    /// The sessions whose facts this read may have changed (those the
    /// file fed before, and those it feeds now).
    touched: Vec<String>,
    /// The file's ledger row, where a ledger is kept.
    row: Option<tether_core::store::RecordFileRow>,
}

/// A database file's log (its newest rows are part of the file), with the
/// file's signature (its length and the log's) and its latest modification.
fn database_log(
    source: &Source,
    rel: &str,
    meta: &std::fs::Metadata,
) -> (Option<(std::fs::File, u64)>, u64, Option<SystemTime>) {
    let wal = (source.source.format == RecordFormat::Sqlite)
        .then(|| source.root.open(&format!("{rel}-wal")).ok().flatten())
        .flatten();
    let wal_len = wal.as_ref().map_or(0, |(_, len)| *len);
    let wal_modified = wal
        .as_ref()
        .and_then(|(f, _)| f.metadata().ok())
        .and_then(|m| m.modified().ok());
    let modified = meta.modified().ok().max(wal_modified);
    let signature = meta.len() + wal_len;
    (wal, signature, modified)
}

/// A plugin's answer, with a panic contained (`None`).
fn contained<T>(f: impl FnOnce() -> T) -> Option<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).ok()
}
