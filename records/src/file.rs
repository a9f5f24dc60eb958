//! One file read further: from where its state stopped (its ledger row's
//! checks first), each record through its harness's reader, each reading
//! to its session's facts ([`SessionFacts`]), and the file's state and
//! ledger row as read.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::SystemTime;

use tether_core::model::Timestamp;
use tether_core::records::{FileReport, RecordAnswer, RecordFile, RecordFormat};
use tether_core::telemetry::is_name_like;

use crate::{
    Done, FileState, SessionFacts, Source, Task, contained, database_log, facts, ledger, read,
};

/// Threads remembered per file, at most.
const MAX_THREADS: usize = 4096;
/// Readings held per file for threads that have not yet named their
/// session (a plugin that failed to load before the session began; a
/// headless run's output whose last line names its session), at most;
/// past it they are counted as refused (they held evidence), never as
/// records that said nothing.
const MAX_PENDING: usize = 16 << 10;

/// Reads one file of `source` further, from where its state stopped.
pub(crate) fn read_file(source: &Source, configured: &[String], task: Task, at_rest: bool) -> Done {
    let Task {
        rel,
        path,
        meta,
        mut state,
        mut was,
        check,
        keep,
        ..
    } = task;
    let unread = |path, state| Done {
        path,
        state,
        read_any: false,
        touched: Vec::new(),
        row: None,
    };
    let format = source.source.format;
    let (wal, signature, modified) = database_log(source, &rel, &meta);
    if state.len == signature && state.modified == modified && state.report.bytes > 0 {
        return unread(path, state);
    }
    let (mut file, len) = match source.root.open(&rel) {
        Ok(Some(opened)) => opened,
        Ok(None) => return unread(path, state),
        Err(failure) => {
            state.report.error = Some(failure.summary);
            state.len = signature;
            state.modified = modified;
            return unread(path, state);
        }
    };
    was.extend(state.facts.keys().cloned());
    let opened = file.metadata().ok().map(|m| ledger::Identity::of(&m));
    if let Some(why) = ledger::read_again(&state, opened.as_ref(), len, format, check, &mut file) {
        tracing::debug!(file = %state.report.path, why, "reading the file again from its start");
        ledger::start_again(&mut state);
    }
    state.identity = opened;
    let whole = format == RecordFormat::Document;
    // With a ledger, a last line without its newline is read after the
    // row is taken, so the row resumes before it (the harness may still
    // be writing it).
    let split = keep && at_rest && format == RecordFormat::Lines;
    let part = Part {
        source,
        configured,
        rel: &rel,
        len,
    };
    let (mut outcome, wal) = part.read(&mut state, &mut file, wal, (at_rest && !split) || whole);
    read_to(&mut state, &mut outcome, format, signature, modified);
    let row =
        keep.then(|| ledger::row_of(source, &path, &rel, configured, &state, opened, &mut file));
    if split && (outcome.pending > 0 || outcome.skipping) && outcome.error.is_none() {
        let (mut tail, _) = part.read(&mut state, &mut file, wal, true);
        read_to(&mut state, &mut tail, format, signature, modified);
    }
    was.extend(state.facts.keys().cloned());
    was.sort();
    was.dedup();
    Done {
        path,
        state,
        read_any: true,
        touched: was,
        row,
    }
}

/// One read of one file, from where its state stopped.
struct Part<'a> {
    source: &'a Source,
    configured: &'a [String],
    rel: &'a str,
    len: u64,
}

impl Part<'_> {
    /// Reads on (a last line without its newline too when `at_rest`),
    /// each session's new facts merged into the file's; hands back what
    /// it ran into, and the database log it did not use.
    fn read(
        &self,
        state: &mut FileState,
        file: &mut std::fs::File,
        wal: Option<(std::fs::File, u64)>,
        at_rest: bool,
    ) -> (read::ReadOutcome, Option<(std::fs::File, u64)>) {
        let source = self.source;
        let format = source.source.format;
        let segments: Vec<String> = self.rel.split('/').map(str::to_owned).collect();
        let shown = state.report.path.clone();
        let mut reading = FileReading {
            reader: source.observer.roles().records,
            configured: self.configured,
            segments: &segments,
            role: source.source.role.as_str(),
            kind: source.kind.as_str(),
            shown: &shown,
            report: &mut state.report,
            file_session: &mut state.session,
            threads: &mut state.threads,
            pending: &mut state.pending,
            facts: BTreeMap::new(),
            last_id: (String::new(), String::new()),
            id_like: Default::default(),
        };
        let mut each = |record: &str| reading.record(record);
        let mut wal = wal;
        let outcome = match (format, source.source.query.as_deref()) {
            (RecordFormat::Sqlite, Some(query)) => {
                read::read_sqlite(file, self.len, wal.take(), query, &mut each)
            }
            (RecordFormat::Sqlite, None) => read::ReadOutcome {
                error: Some("a database source with no query".into()),
                ..read::ReadOutcome::default()
            },
            _ => read::read_records(
                file,
                self.len,
                state.offset,
                format,
                at_rest,
                state.skipping,
                &mut each,
            ),
        };
        for (id, facts) in reading.facts {
            match state.facts.get_mut(&id) {
                Some(mine) => Arc::make_mut(mine).merge(facts),
                None => {
                    state.facts.insert(id, Arc::new(facts));
                }
            }
        }
        (outcome, wal)
    }
}

/// A file's state once read as far as `outcome` says: its report, where
/// to go on from, and its signature and modification when read.
fn read_to(
    state: &mut FileState,
    outcome: &mut read::ReadOutcome,
    format: RecordFormat,
    signature: u64,
    modified: Option<SystemTime>,
) {
    state.report.bytes = outcome.consumed;
    state.report.refused += outcome.oversized + outcome.not_utf8;
    state.report.error = outcome_problems(outcome);
    state.offset = if format == RecordFormat::Sqlite {
        0
    } else {
        outcome.consumed
    };
    state.len = signature;
    state.modified = modified;
    state.skipping = outcome.skipping;
}

/// What went wrong reading a file, if anything, in words.
fn outcome_problems(outcome: &mut read::ReadOutcome) -> Option<String> {
    let mut problems = Vec::new();
    if let Some(error) = outcome.error.take() {
        problems.push(error);
    }
    if outcome.oversized > 0 {
        problems.push(format!(
            "{} record(s) longer than {} MiB skipped",
            outcome.oversized,
            read::MAX_RECORD_BYTES / (1024 * 1024)
        ));
    }
    if outcome.not_utf8 > 0 {
        problems.push(format!("{} record(s) not UTF-8 skipped", outcome.not_utf8));
    }
    (!problems.is_empty()).then(|| problems.join("; "))
}

/// One pass over one file's records: its reader, what it knows of the
/// file, and what the records said so far.
struct FileReading<'a> {
    reader: Option<&'a dyn tether_core::records::RecordReader>,
    configured: &'a [String],
    segments: &'a [String],
    role: &'a str,
    kind: &'a str,
    /// The file as reports show it.
    shown: &'a str,
    report: &'a mut FileReport,
    file_session: &'a mut Option<String>,
    threads: &'a mut HashMap<String, String>,
    pending: &'a mut Vec<(String, tether_core::records::RecordReading)>,
    /// What the file's new records say, by Tether session id.
    facts: BTreeMap<String, SessionFacts>,
    /// (harness session, Tether session id) of the last record read.
    last_id: (String, String),
    /// The harness session last found to be an id
    /// ([`is_session_id_like`](tether_core::telemetry::is_session_id_like)):
    /// a file's records name the same one again and again, and the check's
    /// credential patterns cost more than the rest of a record's reading.
    id_like: tether_core::telemetry::SessionIdCheck,
}

impl FileReading<'_> {
    /// Reads one record and counts what its reader answered.
    fn record(&mut self, record: &str) {
        self.report.records += 1;
        let Some(reader) = self.reader else {
            self.report.unknown += 1;
            return;
        };
        let file = RecordFile {
            role: self.role,
            segments: self.segments,
            session: self.file_session.as_deref(),
            configured: self.configured,
        };
        match contained(|| reader.read_record(&file, record)) {
            None => self.report.refused += 1,
            Some(RecordAnswer::Unknown) => self.unknown(record),
            Some(RecordAnswer::Ignored) => self.report.ignored += 1,
            Some(RecordAnswer::NotRead { kind, at }) => {
                self.report.not_read += 1;
                tether_core::records::note_kind(&mut self.report.not_read_kinds, &kind);
                self.dated(at);
            }
            Some(RecordAnswer::Dated { at }) => {
                self.report.ignored += 1;
                self.dated(Some(at));
            }
            Some(RecordAnswer::Read(reading)) => self.read(reading),
            Some(RecordAnswer::Unparsed { why, kind }) => {
                self.report.add_unparsed(self.report.records, why, kind);
            }
            // An answer a later SDK adds: counted as one not understood.
            Some(_) => self.report.unknown += 1,
        }
    }

    /// A record its reader did not know: one that starts as JSON and does
    /// not parse is counted as unparsed (cut short, not JSON), never as a
    /// kind the reader does not know; any other is version drift. A text
    /// log's lines do not start with `{` or `[`, so they stay unknown.
    fn unknown(&mut self, record: &str) {
        let json_like = record.trim_start().starts_with(['{', '[']);
        match json_like
            .then(|| tether_core::records::Unparsed::json(record))
            .flatten()
        {
            Some(why) => self.report.add_unparsed(self.report.records, why, None),
            None => self.report.unknown += 1,
        }
    }

    /// A record's time is its file's session's (no thread names one).
    fn dated(&mut self, at: Option<Timestamp>) {
        if let Some(at) = at
            && let Some(harness_session) = self.file_session.as_deref()
        {
            let id = tether_core::records::session_id(self.kind, harness_session);
            self.facts
                .entry(id)
                .or_insert_with(|| SessionFacts::new(self.kind, harness_session))
                .dated(self.role, at);
        }
    }

    /// A record read: its evidence to its session's facts, or held until
    /// its thread names its session.
    fn read(&mut self, mut reading: tether_core::records::RecordReading) {
        let before = reading.evidence.len();
        reading
            .evidence
            .retain(|e| tether_core::records::provable(&e.kind));
        self.report.refused += (before - reading.evidence.len()) as u64;
        if !self.names_are_names(&reading) || !reading.thread.as_deref().is_none_or(is_name_like) {
            self.report.refused += 1;
            return;
        }
        let session = reading.session.take();
        let harness_session = match (session, &reading.thread) {
            (Some(session), Some(thread)) => {
                self.thread_named(thread, &session);
                Some(session)
            }
            (Some(session), None) => {
                if self.file_session.as_deref() != Some(session.as_str()) {
                    *self.file_session = Some(session.clone());
                }
                Some(session)
            }
            (None, Some(thread)) => self.threads.get(thread).cloned(),
            (None, None) => self.file_session.clone(),
        };
        let Some(harness_session) = harness_session else {
            match &reading.thread {
                Some(thread)
                    if self.pending.len() < MAX_PENDING && !reading.evidence.is_empty() =>
                {
                    // Held readings are kept between runs: their ids as
                    // the facts keep them, hashed.
                    for e in &mut reading.evidence {
                        e.connection_id = e.connection_id.as_deref().map(facts::id_key);
                    }
                    self.pending.push((thread.clone(), reading));
                }
                Some(_) if !reading.evidence.is_empty() => self.report.refused += 1,
                _ => self.report.ignored += 1,
            }
            return;
        };
        // Read: evidence (or a server) was taken from it; a record
        // that only names its session, project or version gave
        // nothing Tether tracks of servers, tools or capabilities.
        if reading.evidence.is_empty() && reading.servers.is_empty() {
            self.report.ignored += 1;
        } else {
            self.report.read += 1;
        }
        // Its session's id, worked out once per run of records of
        // one session.
        if self.last_id.0 != harness_session || self.last_id.1.is_empty() {
            self.last_id.1 = tether_core::records::session_id(self.kind, &harness_session);
            self.last_id.0 = harness_session;
        }
        let id = &self.last_id.1;
        match self.facts.get_mut(id) {
            Some(session) => session.add(self.role, self.shown, reading),
            None => self
                .facts
                .entry(id.clone())
                .or_insert_with(|| SessionFacts::new(self.kind, &self.last_id.0))
                .add(self.role, self.shown, reading),
        }
    }

    /// [`RecordReading::names_are_names`], its session id checked once
    /// per run of records that name the same one.
    ///
    /// [`RecordReading::names_are_names`]: tether_core::records::RecordReading::names_are_names
    fn names_are_names(&mut self, reading: &tether_core::records::RecordReading) -> bool {
        if let Some(session) = reading.session.as_deref()
            && !self.id_like.is_id_like(session)
        {
            return false;
        }
        tether_core::telemetry::names_are_names(
            None,
            &reading.servers,
            &reading.evidence,
            self.configured,
        )
    }

    /// `thread` named its `session`: remembered, and what the thread said
    /// before it named its session is that session's.
    fn thread_named(&mut self, thread: &str, session: &str) {
        // A thread that named a session before holds nothing: what it
        // said since joined that session (one scan per thread, not per
        // record).
        let named_before = self.threads.contains_key(thread);
        if self.threads.len() < MAX_THREADS || named_before {
            self.threads.insert(thread.to_owned(), session.to_owned());
        }
        if named_before {
            return;
        }
        let id = tether_core::records::session_id(self.kind, session);
        let mut i = 0;
        while i < self.pending.len() {
            if self.pending[i].0 == *thread {
                let (_, held) = self.pending.swap_remove(i);
                self.report.read += 1;
                self.facts
                    .entry(id.clone())
                    .or_insert_with(|| SessionFacts::new(self.kind, session))
                    .add(self.role, self.shown, held);
            } else {
                i += 1;
            }
        }
    }
}
