//! What a harness writes to disk about the sessions it runs (transcripts,
//! per-server logs, its own session files), and how its plugin reads them:
//! the optional session-record half of a passthrough plugin's contract.
//!
//! A plugin declares where its files are ([`RecordSource`]) and reads one
//! record (a line, or a whole small document) at a time into a
//! [`RecordAnswer`]: pure, bytes to evidence. Finding the files, opening
//! them read-only within their root, bounding them and importing what was
//! read is host machinery (`tether-records`), as are the documents
//! `tether sessions` prints ([`SessionsDocument`], [`SessionDocument`]).
//!
//! A record holds the user's prompts, code, tool arguments and results. A
//! reader takes names, codes, counts, times and statuses only; the host
//! refuses a reading whose names are not names.
//!
//! A [`RecordAnswer`] is `Unknown` (counted as version drift), `Ignored`, or
//! `Read` with the session, its thread within the file, time, project,
//! version, servers and evidence. [`project_of`] keeps a directory's last
//! component, never the path; [`session_id`] (`KIND:ID`) is shared with the
//! collector.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::history::AttachmentHistory;
use crate::model::{Evidence, Timestamp};
use crate::telemetry::{NamedServer, is_name_like};

/// The records role of a harness's plugin: where the harness writes its
/// own session records (transcripts, logs, session files) and how one
/// reads, for `tether sessions`. Pure: no I/O (it crosses the dynamic
/// plugin boundary as data). Take names, codes, counts, times and outcomes
/// only; never a value, argument, prompt or result.
pub trait RecordReader: Send + Sync {
    /// Where the harness writes its session records.
    fn record_sources(&self) -> Vec<RecordSource>;

    /// Reads one record of a file from one of its
    /// [`record_sources`](Self::record_sources): which session it belongs
    /// to, which servers it names, and what it proves.
    fn read_record(&self, file: &RecordFile<'_>, record: &str) -> RecordAnswer;

    /// The harness versions the reader was verified on (oldest, newest): a
    /// session from a newer version is still read, and `tether sessions`
    /// says so once per harness and version. The default: none named.
    fn records_verified_on(&self) -> Option<VerifiedRange> {
        None
    }

    /// What the records show of skills, hooks and plugins at run time:
    /// where they show a kind, a configured one the session never showed
    /// reads "never fired"; where they do not, it reads that the harness
    /// does not record it. The default: nothing.
    fn records_show(&self) -> crate::capability::RunTimeShown {
        crate::capability::RunTimeShown::none()
    }
}

/// How a source's files are cut into records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RecordFormat {
    /// One record per line (JSON lines, or a text log).
    Lines,
    /// The whole (small) file is one record.
    Document,
    /// A SQLite database the harness keeps: each row of the source's
    /// `query` is one record, a JSON array of the row's values. The host
    /// reads a private snapshot (the database and its write-ahead log,
    /// copied), never the harness's own file, which SQLite would otherwise
    /// lock and write to even when opened read-only.
    Sqlite,
}

/// Where one kind of a harness's session files sits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RecordSource {
    /// What the files are (`transcript`, `mcp_log`, `rollout`, …): the
    /// reader is told which.
    pub role: String,
    /// The variable that moves the harness's directory (`CODEX_HOME`,
    /// `XDG_CACHE_HOME`, …), if any; its value is the root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_var: Option<String>,
    /// Added below the variable's value (`XDG_DATA_HOME` + `opencode`), if
    /// any.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub root_suffix: String,
    /// The root under the user's home when the variable is unset
    /// (`.claude`, `.cache/claude-cli-nodejs`).
    pub root_default: String,
    /// The files below the root: `/`-separated segments, each literal or
    /// with one `*` (`projects/*/*.jsonl`, `*/mcp-logs-*/*.jsonl`).
    pub pattern: String,
    /// How its files are cut into records.
    pub format: RecordFormat,
    /// For [`RecordFormat::Sqlite`]: the one `SELECT` whose rows are the
    /// records. It names the metadata columns only (names, ids, times,
    /// statuses), so nothing else leaves the database.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// Files of this role sit nowhere the harness keeps them (what a
    /// headless run printed, saved by a CI job): read only when a user
    /// names one by path, never looked for under the home.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_path: bool,
    /// Files of this role are the harness's own log of each MCP server,
    /// which it writes for its health checks too (`claude mcp list`
    /// connects to every server and writes them, and no transcript): a
    /// session that only such files show ran no agent
    /// ([`SessionSummary::health_check`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub server_log: bool,
    /// For a [`server_log`](Self::server_log) source: the command with
    /// which a person runs the harness's health check (`claude mcp list`),
    /// said where a health check is shown by its id. Absent when the
    /// harness names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_check_command: Option<String>,
}

impl RecordSource {
    /// A source of line records under `root_default` (below the home).
    pub fn lines(
        role: impl Into<String>,
        root_default: impl Into<String>,
        pattern: impl Into<String>,
    ) -> Self {
        RecordSource {
            role: role.into(),
            root_var: None,
            root_suffix: String::new(),
            root_default: root_default.into(),
            pattern: pattern.into(),
            format: RecordFormat::Lines,
            query: None,
            by_path: false,
            server_log: false,
            health_check_command: None,
        }
    }

    /// A source of line records read only from a file a user names by
    /// path (`tether sessions show PATH`): what a headless run printed
    /// (`stream_json`), say.
    pub fn by_path(role: impl Into<String>) -> Self {
        let mut source = RecordSource::lines(role, "", "");
        source.by_path = true;
        source
    }

    /// The same source, a SQLite database whose `query`'s rows are the
    /// records.
    pub fn sqlite(mut self, query: impl Into<String>) -> Self {
        self.format = RecordFormat::Sqlite;
        self.query = Some(query.into());
        self
    }

    /// The same source, its root moved by `var` (plus `suffix`) when set.
    pub fn moved_by(mut self, var: impl Into<String>, suffix: impl Into<String>) -> Self {
        self.root_var = Some(var.into());
        self.root_suffix = suffix.into();
        self
    }

    /// The same source, its files the harness's own per-server MCP logs,
    /// which its health checks write too ([`server_log`](Self::server_log)).
    pub fn server_log(mut self) -> Self {
        self.server_log = true;
        self
    }

    /// The same source, its files the harness's own per-server MCP logs
    /// ([`server_log`](Self::server_log)), which `command` (the harness's
    /// health check, `claude mcp list`) writes too.
    pub fn server_log_of(mut self, command: impl Into<String>) -> Self {
        self.server_log = true;
        self.health_check_command = Some(command.into());
        self
    }

    /// The same source, each file one record.
    pub fn document(mut self) -> Self {
        self.format = RecordFormat::Document;
        self
    }

    /// Whether `segments` (a path below the root, cut at `/`) matches the
    /// pattern.
    pub fn matches(&self, segments: &[&str]) -> bool {
        let pattern: Vec<&str> = self.pattern.split('/').collect();
        pattern.len() == segments.len()
            && pattern
                .iter()
                .zip(segments)
                .all(|(p, s)| segment_matches(p, s))
    }
}

/// Whether one path segment matches one pattern segment (literal, or one
/// `*` standing for any run of characters). A segment starting with a dot
/// matches only a pattern that does.
pub fn segment_matches(pattern: &str, segment: &str) -> bool {
    if segment.starts_with('.') && !pattern.starts_with('.') {
        return false;
    }
    match pattern.split_once('*') {
        None => pattern == segment,
        Some((prefix, suffix)) => {
            segment.len() >= prefix.len() + suffix.len()
                && segment.starts_with(prefix)
                && segment.ends_with(suffix)
        }
    }
}

/// The file a record comes from, as its reader sees it.
#[derive(Debug, Clone, Copy)]
pub struct RecordFile<'a> {
    /// The source's role.
    pub role: &'a str,
    /// The file's path below the source's root, cut at `/` (a Claude
    /// server log's directory names its server, a rollout's name its id).
    pub segments: &'a [String],
    /// The harness session an earlier record of this file named, if any
    /// (a rollout names its session once, in its first line).
    pub session: Option<&'a str>,
    /// The server names today's configuration gives the harness: a name
    /// that joins server and tool ambiguously (OpenCode's `SERVER_TOOL`)
    /// is split only where exactly one of them fits.
    pub configured: &'a [String],
}

impl RecordFile<'_> {
    /// The segment `i` from the end (0: the file's name).
    pub fn from_end(&self, i: usize) -> Option<&str> {
        self.segments
            .len()
            .checked_sub(i + 1)
            .and_then(|j| self.segments.get(j))
            .map(String::as_str)
    }
}

/// What a plugin made of one record.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct RecordReading {
    /// The harness's session id, where the record (or its file) names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The run (process, thread) within the file the record belongs to,
    /// where a file interleaves several (OpenCode's log: `run=…`): a record
    /// with a thread but no session joins the session an earlier record of
    /// the same thread named, never the file's last one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<String>,
    /// When the record was written, where it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<Timestamp>,
    /// The latest time the record covers, where it spans a while (a
    /// whole-file document: when it was last updated); it counts toward
    /// its session's last record time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Timestamp>,
    /// The project: the last component of the session's working
    /// directory ([`project_of`]), never the path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The harness's version, where the record says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Servers the record names (each gets a row).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<NamedServer>,
    /// What it proves, as evidence (the host stamps it `harness_record`):
    /// names, codes, counts and outcomes only. A tool call carries the
    /// call's id in `connection_id` where the record has one, so a call
    /// written twice (started, completed) is counted once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Evidence>,
}

impl RecordReading {
    /// A reading for `session`.
    pub fn of(session: Option<String>) -> Self {
        RecordReading {
            session,
            ..RecordReading::default()
        }
    }

    /// Whether every name it gives looks like a name (or is a configured
    /// one) and its session id like an id: see
    /// [`TelemetryReading::names_are_names`](crate::telemetry::TelemetryReading::names_are_names),
    /// the same rule.
    pub fn names_are_names(&self, configured: &[String]) -> bool {
        crate::telemetry::names_are_names(
            self.session.as_deref(),
            &self.servers,
            &self.evidence,
            configured,
        )
    }
}

/// How a plugin answered one record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "read", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RecordAnswer {
    /// A record of a type (or shape) the reader does not know: counted
    /// per file and reported, never fatal (a newer harness version, most
    /// likely).
    Unknown,
    /// A known record that says nothing about MCP servers or tools.
    Ignored,
    /// A known record that says nothing about MCP servers or tools, but
    /// when it was written: it counts toward its session's first and last
    /// record times (a session that ran on after its last tool call).
    Dated {
        /// When.
        at: crate::model::Timestamp,
    },
    /// A known record of a kind that bears on MCP servers, tools, skills,
    /// hooks, permissions or auth, which this reader does not read (yet):
    /// counted, and said once per harness and version, never dropped in
    /// silence.
    NotRead {
        /// The kind as the harness names it (a constant of the reader's,
        /// never the record's own text).
        kind: String,
        /// When the record was written, where it says: it still counts
        /// toward its session's first and last record times.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<crate::model::Timestamp>,
    },
    /// Read.
    Read(RecordReading),
    /// A record that could not be parsed: cut short, not JSON, or a known
    /// kind with a field of the wrong type. Counted apart from a kind the
    /// reader does not know (never version drift), by its line and why,
    /// never its content.
    Unparsed {
        /// Why.
        why: Unparsed,
        /// The kind, where the record named one the reader knows (a
        /// constant of the reader's, never the record's own text).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kind: Option<String>,
    },
}

pub use crate::model::Unparsed;

impl RecordAnswer {
    /// A record that could not be parsed, as `error` says, of `kind`
    /// where the reader knew it.
    pub fn unparsed(error: &serde_json::Error, kind: Option<&str>) -> Self {
        RecordAnswer::Unparsed {
            why: Unparsed::of(error),
            kind: kind.map(str::to_owned),
        }
    }

    /// A record of `kind` that this reader knows bears on what Tether
    /// tracks and does not read.
    pub fn not_read(kind: &str, at: Option<crate::model::Timestamp>) -> Self {
        RecordAnswer::NotRead {
            kind: kind.to_owned(),
            at,
        }
    }
}

/// One kind of record, event, attachment, field or telemetry a harness
/// writes that bears on MCP servers, tools, skills, hooks, plugins, auth or
/// permissions, as the harness's own shipped code names it: an entry of its
/// census ([`HarnessCensus::census`](crate::harness::HarnessCensus::census)).
/// Either Tether reads it (`read`, with the evidence it gives) or it does
/// not (with why). Data, so a test writes the book's table from it and
/// checks every installed release against it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CensusEntry {
    /// Where the harness writes it: a record source's role (`transcript`,
    /// `rollout`, `events`, `chat`, `debug_log`, …), `stream_json` (what a
    /// headless run prints), `telemetry` or `config`.
    pub source: String,
    /// The kind as the harness's code names it (`system/stop_hook_summary`,
    /// `attachment/deferred_tools_delta`, a field such as
    /// `deferred_tools_delta.needsAuthMcpServers`, an event name).
    pub kind: String,
    /// The releases that write it, as verified (`2.1.197–2.1.332`, `≤
    /// 1.0.88`, `0.142.5 on`).
    pub releases: String,
    /// Whether Tether reads it.
    pub read: bool,
    /// Read: the evidence it gives. Not read: why (its shape is not yet
    /// verified, it holds only payload, it is never written to disk, …).
    pub says: String,
    /// What a missing record of this kind can and cannot mean, where the
    /// harness writes it only sometimes (a hook recorded only when it fails
    /// or prints): the sentence a display says in place of "never".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub silence: Option<String>,
}

impl CensusEntry {
    /// A kind Tether reads, and the evidence it gives.
    pub fn read(source: &str, kind: &str, releases: &str, gives: &str) -> Self {
        CensusEntry {
            source: source.to_owned(),
            kind: kind.to_owned(),
            releases: releases.to_owned(),
            read: true,
            says: gives.to_owned(),
            silence: None,
        }
    }

    /// A kind Tether does not read, and why.
    pub fn not_read(source: &str, kind: &str, releases: &str, why: &str) -> Self {
        CensusEntry {
            read: false,
            ..CensusEntry::read(source, kind, releases, why)
        }
    }

    /// The same entry, with what its absence can and cannot mean.
    pub fn silence(mut self, meaning: &str) -> Self {
        self.silence = Some(meaning.to_owned());
        self
    }
}

/// Kinds named per file or note, at most.
pub const MAX_NOT_READ_KINDS: usize = 16;

/// Adds `kind` to `kinds` (sorted, distinct, at most
/// [`MAX_NOT_READ_KINDS`]).
pub fn note_kind(kinds: &mut Vec<String>, kind: &str) {
    if let Err(i) = kinds.binary_search_by(|k| k.as_str().cmp(kind))
        && kinds.len() < MAX_NOT_READ_KINDS
    {
        kinds.insert(i, kind.to_owned());
    }
}

/// The last component of a working directory (`/home/me/src/tether` →
/// `tether`), where it is a plain name: what a session's project is shown
/// as. Never the path.
pub fn project_of(cwd: &str) -> Option<String> {
    // Every record of a session names the same folder: the last answer
    // (per thread) is given again without the sanitizer's scan.
    thread_local! {
        static LAST: std::cell::RefCell<(String, Option<String>)> =
            const { std::cell::RefCell::new((String::new(), None)) };
    }
    if let Ok(Some(known)) = LAST.try_with(|last| {
        let last = last.try_borrow().ok()?;
        (!last.0.is_empty() && last.0 == cwd).then(|| last.1.clone())
    }) {
        return known;
    }
    let project = project_named(cwd);
    if cwd.len() <= 4096 {
        let _ = LAST.try_with(|last| {
            if let Ok(mut last) = last.try_borrow_mut() {
                last.0.clear();
                last.0.push_str(cwd);
                last.1.clone_from(&project);
            }
        });
    }
    project
}

/// [`project_of`], worked out.
fn project_named(cwd: &str) -> Option<String> {
    let last = cwd
        .trim_end_matches(['/', '\\'])
        .rsplit(['/', '\\'])
        .next()?;
    let plain = !last.is_empty()
        && last.len() <= 64
        && last
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '+' | '@' | ' '))
        // A name shaped like a secret (a key, a token) is no project's.
        && crate::sanitize::name(last) == last;
    plain.then(|| last.to_owned())
}

/// A harness's version as a record gives it (`2.1.197`, `0.15.10-beta.1`):
/// a digit first, then letters, digits and `.-+_`, at most 32 bytes.
pub fn version_of(s: &str) -> Option<String> {
    let s = s.trim();
    let ok = s.len() <= 32
        && s.starts_with(|c: char| c.is_ascii_digit())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+' | b'_'));
    ok.then(|| s.to_owned())
}

/// Whether evidence of `kind` is something a harness's own records can
/// prove: what its telemetry can ([`provable`](crate::telemetry::provable)),
/// and the last mile of a tool: offered to the model (`tool_visible`),
/// held behind a search (`tool_deferred`) or dropped (`tool_withheld`). Anything else a
/// reader gives is refused.
pub fn provable(kind: &crate::vocab::EvidenceKind) -> bool {
    crate::telemetry::provable(kind)
        || matches!(
            kind,
            crate::vocab::EvidenceKind::ToolVisible
                | crate::vocab::EvidenceKind::ToolDeferred
                | crate::vocab::EvidenceKind::ToolWithheld
        )
}

/// The Tether session id of a harness session (`KIND:ID`, the id kept to
/// 96 characters of letters, digits and `-_.`): the one id a session has
/// whether Tether saw it live (`tether collect`) or on disk.
pub fn session_id(kind: &str, harness_session: &str) -> String {
    let bounded: String = harness_session
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(96)
        .collect();
    format!("{kind}:{bounded}")
}

/// A server's or tool's name as a reader takes it: trimmed, and only when
/// it looks like a name.
pub fn name(s: &str) -> Option<String> {
    let s = s.trim();
    is_name_like(s).then(|| s.to_owned())
}

/// The version of [`SessionsDocument`] and [`SessionDocument`].
pub const SESSIONS_SCHEMA_VERSION: u32 = 1;

/// What was read of one file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileReport {
    /// The harness.
    pub agent_kind: String,
    /// The source's role.
    pub role: String,
    /// The file, as `~/…` (never an absolute path).
    pub path: String,
    /// Bytes read.
    pub bytes: u64,
    /// Records read.
    pub records: u64,
    /// Records that said something (servers, tools).
    pub read: u64,
    /// Known records that said nothing about servers.
    pub ignored: u64,
    /// Records of a type the reader does not know (version drift).
    pub unknown: u64,
    /// Known records of a kind that bears on MCP servers, tools, skills,
    /// hooks, permissions or auth, which this Tether does not read.
    #[serde(default, skip_serializing_if = "crate::model::is_zero")]
    pub not_read: u64,
    /// Their kinds, as the harness names them (at most
    /// [`MAX_NOT_READ_KINDS`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_read_kinds: Vec<String>,
    /// Records that could not be parsed (cut short, not JSON, a field of
    /// the wrong type): never counted as a kind the reader does not know.
    #[serde(default, skip_serializing_if = "crate::model::is_zero")]
    pub unparsed: u64,
    /// The first of them (at most [`MAX_UNPARSED_LINES`]): where and why,
    /// never their content.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unparsed_lines: Vec<UnparsedLine>,
    /// Records refused: not UTF-8, longer than the line bound, or a
    /// reading whose names were not names.
    pub refused: u64,
    /// Why the file was not read (or not to the end), in one sentence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Unparsed records named per file, at most.
pub const MAX_UNPARSED_LINES: usize = 16;

/// One record of a file that could not be parsed: where, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UnparsedLine {
    /// Its place in the file: the n-th record (a line; blank lines are
    /// not counted), from 1.
    pub line: u64,
    /// Why it could not be parsed.
    pub why: Unparsed,
    /// The kind, where the record named one its reader knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

impl FileReport {
    /// Counts record `line` as unparsed, for `why` (named while fewer
    /// than [`MAX_UNPARSED_LINES`] are).
    pub fn add_unparsed(&mut self, line: u64, why: Unparsed, kind: Option<String>) {
        self.unparsed += 1;
        if self.unparsed_lines.len() < MAX_UNPARSED_LINES {
            self.unparsed_lines.push(UnparsedLine { line, why, kind });
        }
    }
}

/// The harness versions a reader was verified on, oldest and newest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct VerifiedRange {
    /// The oldest version verified (`2.1.197`).
    pub oldest: String,
    /// The newest version verified (`2.1.332`).
    pub newest: String,
}

impl VerifiedRange {
    /// `oldest`–`newest`.
    pub fn new(oldest: &str, newest: &str) -> Self {
        VerifiedRange {
            oldest: oldest.to_owned(),
            newest: newest.to_owned(),
        }
    }

    /// Whether `version` is newer than the newest verified, comparing
    /// dotted numbers (`2.1.400` > `2.1.332`); a version that is not
    /// dotted numbers is not called newer.
    pub fn is_older_than(&self, version: &str) -> bool {
        match (dotted(version), dotted(&self.newest)) {
            (Some(v), Some(n)) => v > n,
            _ => false,
        }
    }
}

impl std::fmt::Display for VerifiedRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.oldest == self.newest {
            f.write_str(&self.oldest)
        } else {
            write!(f, "{}–{}", self.oldest, self.newest)
        }
    }
}

/// Whether `version` is at least `min`, comparing dotted numbers
/// (`0.24.4` ≥ `0.24`); a version that is not dotted numbers is not.
pub fn version_at_least(version: &str, min: &str) -> bool {
    match (dotted(version), dotted(min)) {
        (Some(v), Some(m)) => v >= m,
        _ => false,
    }
}

fn dotted(version: &str) -> Option<Vec<u64>> {
    let core = version.split(['-', '+', ' ']).next()?;
    core.split('.').map(|p| p.parse().ok()).collect()
}

/// What one harness version's records came to, said once per harness and
/// version (not once per file): records of a kind its reader does not
/// know, and whether the version is newer than the reader was verified on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReaderNote {
    /// The harness.
    pub agent_kind: String,
    /// The version its records said; null where none did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The versions the reader was verified on, where its plugin names them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified_on: Option<VerifiedRange>,
    /// The version is newer than the newest verified.
    pub newer: bool,
    /// Records of a kind the reader does not know.
    pub unknown_records: u64,
    /// Known records of a kind that bears on MCP servers, tools, skills,
    /// hooks, permissions or auth, which this Tether does not read.
    #[serde(default, skip_serializing_if = "crate::model::is_zero")]
    pub not_read_records: u64,
    /// Their kinds (at most [`MAX_NOT_READ_KINDS`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_read_kinds: Vec<String>,
    /// Records that could not be parsed (cut short, not JSON, a field of
    /// the wrong type): no kind, known or not, is claimed for them.
    #[serde(default, skip_serializing_if = "crate::model::is_zero")]
    pub unparsed_records: u64,
    /// Files that held records of any of these sorts.
    pub files: u64,
}

impl ReaderNote {
    /// Nothing counted yet for `agent_kind` at `version`, its reader
    /// verified on `verified_on`: `newer` when the version is past it.
    pub fn new(
        agent_kind: &str,
        version: Option<&str>,
        verified_on: Option<VerifiedRange>,
    ) -> Self {
        ReaderNote {
            agent_kind: agent_kind.to_owned(),
            version: version.map(str::to_owned),
            newer: verified_on
                .as_ref()
                .zip(version)
                .is_some_and(|(r, v)| r.is_older_than(v)),
            verified_on,
            unknown_records: 0,
            not_read_records: 0,
            not_read_kinds: Vec::new(),
            unparsed_records: 0,
            files: 0,
        }
    }

    /// The version is older than the oldest verified (dotted numbers
    /// only: `0.104.0-alpha.1` < `0.118.0`), so what its reader did not
    /// show is no evidence that it did not happen.
    pub fn older(&self) -> bool {
        self.verified_on
            .as_ref()
            .zip(self.version.as_deref())
            .is_some_and(|(r, v)| version_at_least(&r.oldest, v) && !version_at_least(v, &r.oldest))
    }

    /// Counts what `file` held of kinds the reader does not know or does
    /// not read, and what could not be parsed (a file with none adds
    /// nothing).
    pub fn add_file(&mut self, file: &FileReport) {
        if file.unknown == 0 && file.not_read == 0 && file.unparsed == 0 {
            return;
        }
        self.unknown_records += file.unknown;
        self.not_read_records += file.not_read;
        self.unparsed_records += file.unparsed;
        for kind in &file.not_read_kinds {
            note_kind(&mut self.not_read_kinds, kind);
        }
        self.files += 1;
    }
}

/// Counts of a session's rows by display status.
pub type StatusCounts = std::collections::BTreeMap<String, u32>;

/// One session found on disk, in a list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SessionSummary {
    /// The Tether session id (`KIND:ID`), the same one `tether collect`
    /// gives the session when it sees it live.
    pub session_id: String,
    /// The harness.
    pub agent_kind: String,
    /// The harness's own session id.
    pub harness_session: String,
    /// The project, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The harness's version, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_version: Option<String>,
    /// The first record's time.
    pub started_at: Timestamp,
    /// The last record's time.
    pub updated_at: Timestamp,
    /// Server rows by status.
    pub counts: StatusCounts,
    /// Files that held its records.
    pub files: u32,
    /// A harness's own health check, not an agent session: only its
    /// per-server MCP logs show it ([`RecordSource::server_log`]; no
    /// transcript, no stream-json), as `claude mcp list` writes them
    /// when it connects to every server to say whether each answers. No
    /// agent ran, so it is never "the newest session". Absent when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub health_check: bool,
}

/// `tether sessions list --json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "SessionsDocument")]
pub struct SessionsDocument {
    /// [`SESSIONS_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The sessions, newest first.
    pub sessions: Vec<SessionSummary>,
    /// Every file read, and what came of it.
    pub files: Vec<FileReport>,
    /// Files a cap kept Tether from reading, per source: counted, never
    /// silently dropped. Absent when every file was read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_read: Vec<SourceCut>,
    /// Per harness and version: records its reader does not know, and
    /// versions newer than it was verified on. Absent when there is
    /// nothing to say.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readers: Vec<ReaderNote>,
}

/// Files of one record source that a cap kept Tether from reading.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SourceCut {
    /// The harness.
    pub agent_kind: String,
    /// The source's role.
    pub role: String,
    /// The source's folder, as `~/…` (never an absolute path).
    pub root: String,
    /// Files that matched (at least this many, when the folder itself was
    /// too large to list to the end).
    pub found: u64,
    /// Of those, how many were not read.
    pub not_read: u64,
    /// `too_many_entries`.
    pub reason_code: crate::vocab::ReasonCode,
    /// What was cut, in one sentence.
    pub summary: String,
}

/// One row of a session's capability matrix: a server, or one of its tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MatrixRow {
    /// `mcp_server` or `mcp_tool`.
    pub kind: crate::vocab::CapabilityKind,
    /// The server's name, or `SERVER/TOOL`.
    pub name: String,
    /// The display status (a tool row: its server's, or `active` once
    /// called).
    pub status: crate::vocab::DisplayStatus,
    /// Why it stopped, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<crate::vocab::ReasonCode>,
    /// Where it stopped, in words a user can act on ("needs auth", "used:
    /// 3 calls, 1 failed").
    pub stopped: String,
    /// Each stage that was shown: its state and what showed it.
    pub stages: std::collections::BTreeMap<String, crate::model::StageObservation>,
    /// Calls seen (tool rows, and a server's total).
    #[serde(default)]
    pub calls: u32,
    /// Of those, the failed ones.
    #[serde(default)]
    pub failed_calls: u32,
    /// Of those, the ones whose outcome no record gives (never counted as
    /// failed).
    #[serde(default, skip_serializing_if = "crate::model::is_zero")]
    pub unknown_calls: u32,
    /// Calls the model made that the harness refused (permission,
    /// approval, a hook, policy): never in `calls`.
    #[serde(default, skip_serializing_if = "crate::model::is_zero")]
    pub refused_calls: u32,
    /// A skill's or hook's plugin, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
    /// A hook's event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// A hook's command, basename only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// A hook's runs (a skill's invocations) by how they ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outcomes: Vec<crate::capability::OutcomeCount>,
    /// For a skill, hook or plugin: whether today's configuration has it
    /// (`false`: it shows as history, what the session ran but today's
    /// files no longer name); absent where no configuration was read, or
    /// for servers and tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_config: Option<bool>,
    /// A skill the harness bundles (Claude Code's own): `sessions show`
    /// says them in one line unless asked. Left out of JSON when `false`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub built_in: bool,
}

impl MatrixRow {
    /// The row's name as a table shows it: a plugin's skill or hook with
    /// its plugin (`greet (goodplug)`), a hook with its command
    /// (`Stop · check.sh`).
    pub fn label(&self) -> String {
        let mut label = self.name.clone();
        if let Some(command) = &self.command {
            label = format!("{label} · {command}");
        }
        if let Some(plugin) = &self.plugin {
            label = format!("{label} ({plugin})");
        }
        label
    }
}

/// `tether sessions show ID --json`: one session's matrix and its history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "SessionDocument")]
pub struct SessionDocument {
    /// [`SESSIONS_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The session.
    pub session: SessionSummary,
    /// One row per server and per tool the session saw.
    pub rows: Vec<MatrixRow>,
    /// The files its records came from.
    pub files: Vec<FileReport>,
    /// The session's telemetry answers that could not be parsed, as a
    /// store counted them (`tether collect`): per attempt, record kind,
    /// attribute and why, never their content. Absent when none were
    /// counted, or there is no store.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub telemetry_unparsed: Vec<crate::telemetry::UnparsedTelemetry>,
    /// The session's attachment history, as a store keeps it.
    pub history: AttachmentHistory,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_segment_by_segment() {
        let s = RecordSource::lines(
            "mcp_log",
            ".cache/claude-cli-nodejs",
            "*/mcp-logs-*/*.jsonl",
        );
        assert!(s.matches(&["-home-me", "mcp-logs-time", "2026.jsonl"]));
        assert!(!s.matches(&["-home-me", "logs-time", "2026.jsonl"]));
        assert!(!s.matches(&["-home-me", "mcp-logs-time", "2026.txt"]));
        assert!(!s.matches(&["mcp-logs-time", "2026.jsonl"]));
        // Hidden entries match only a pattern that names them.
        assert!(!s.matches(&[".hidden", "mcp-logs-time", "a.jsonl"]));
        assert!(segment_matches("rollout-*.jsonl", "rollout-1.jsonl"));
        assert!(!segment_matches("rollout-*.jsonl", "rollout.jsonl"));
    }

    #[test]
    fn a_project_is_a_last_component_never_a_path() {
        assert_eq!(project_of("/home/me/src/tether").as_deref(), Some("tether"));
        assert_eq!(
            project_of("/home/me/src/tether/").as_deref(),
            Some("tether")
        );
        assert_eq!(project_of("C:\\src\\app").as_deref(), Some("app"));
        assert_eq!(project_of("/"), None);
        assert_eq!(project_of("/x/a;rm -rf"), None);
    }
}
