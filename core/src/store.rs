//! Persistence: the `Store` trait (one row per session: its bounded history
//! document and `schema_version`) and typed rehydration. Implementations
//! (SQLite, …) live in `tether-store`; core does no I/O.
//!
//! Its invariants are written once, in ARCHITECTURE.md (`hub/`), each
//! with the test that checks it.
//!
//! `save` writes only a newer `revision`; `save_batch` is one transaction per
//! burst; `rehydrate` migrates older documents and loads newer ones
//! conservatively.

use serde_json::Value;

use crate::history::{AttachmentHistory, SCHEMA_VERSION};
use crate::pins::{DefinitionHashes, ToolPin};

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database refused.
    #[error("store: {0}")]
    Backend(String),
    /// The database failed its integrity check on open.
    #[error("store integrity check failed: {0}")]
    Integrity(String),
    /// The write was refused: the store holds this session at a revision at
    /// least as new (another writer got there first). Nothing was changed.
    #[error(
        "stale write refused: the store holds revision {stored}, this write is revision {attempted}"
    )]
    Stale {
        /// The revision the store holds.
        stored: u64,
        /// The revision that was refused.
        attempted: u64,
    },
    /// The database's own schema is newer than this build knows.
    #[error("the store's schema is version {found}; this build knows up to {known}")]
    NewerSchema {
        /// The schema version found.
        found: u32,
        /// The newest this build knows.
        known: u32,
    },
}

/// A stored row that could not be read back, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedRow {
    /// The row's session.
    pub session_id: String,
    /// What was wrong (no content from the row).
    pub reason: String,
}

/// Everything a store holds, with the rows it had to skip.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Readable histories.
    pub histories: Vec<AttachmentHistory>,
    /// Corrupt rows, reported and skipped.
    pub skipped: Vec<SkippedRow>,
}

impl Loaded {
    /// Adds one row read by [`rehydrate_row`]: a history, or a corrupt row
    /// that is logged (its session id and reason only) and skipped.
    pub fn push_row(&mut self, session_id: String, row: Result<AttachmentHistory, String>) {
        match row {
            Ok(history) => self.histories.push(history),
            Err(reason) => {
                tracing::warn!(%session_id, %reason, "skipping a corrupt stored history");
                self.skipped.push(SkippedRow { session_id, reason });
            }
        }
    }
}

impl StoreError {
    /// A keyed read found the row but could not read it.
    pub fn unreadable(session_id: &str, reason: &str) -> StoreError {
        StoreError::Backend(format!("session {session_id} is unreadable: {reason}"))
    }
}

/// Where histories live between runs. A host may implement it on its own
/// database; `tether_store::conformance` is the suite it should pass.
pub trait Store: Send + Sync {
    /// Replaces one session's row, atomically, if and only if the stored row
    /// is absent or has a lower `revision` than `history.revision`; otherwise
    /// returns [`StoreError::Stale`] and changes nothing.
    fn save(&self, history: &AttachmentHistory) -> Result<(), StoreError>;
    /// Saves several sessions, each under the same rule as [`save`](Self::save),
    /// and returns one result per history, in order. The default saves them
    /// one by one; a store overrides it to write them in one transaction
    /// (one commit, one fsync), which is what keeps write-through lag bounded
    /// when thousands of sessions change at once.
    fn save_batch(&self, histories: &[&AttachmentHistory]) -> Vec<Result<(), StoreError>> {
        histories.iter().map(|h| self.save(h)).collect()
    }
    /// Removes one session's row.
    fn remove(&self, session_id: &str) -> Result<(), StoreError>;
    /// Every stored session's id and revision, without its document: what a
    /// reader that follows the store (the live status service) polls, so it
    /// reads only the rows that changed. The default reads every document; a
    /// store overrides it with a two-column query.
    fn revisions(&self) -> Result<Vec<(String, u64)>, StoreError> {
        let loaded = self.load_all()?;
        Ok(loaded
            .histories
            .into_iter()
            .map(|h| (h.session_id, h.revision))
            .collect())
    }
    /// Every row, rehydrated; corrupt ones are reported in `skipped`.
    fn load_all(&self) -> Result<Loaded, StoreError>;
    /// The tool pins kept for `server` (every server's when `None`),
    /// ordered by server, then tool: hashes only, never a definition's
    /// text (`crate::pins`). The default keeps none and says so.
    fn tool_pins(&self, server: Option<&str>) -> Result<Vec<ToolPin>, StoreError> {
        let _ = server;
        Err(no_pins())
    }
    /// Replaces every pin of `server` with `pins` (each of which names
    /// `server`), atomically; an empty `pins` forgets the server. The
    /// default keeps none and says so.
    fn replace_tool_pins(&self, server: &str, pins: &[ToolPin]) -> Result<(), StoreError> {
        let _ = (server, pins);
        Err(no_pins())
    }
    /// One session's row, rehydrated (`Ok(None)`: no row). The default
    /// filters [`load_all`](Self::load_all); a store overrides it with a
    /// keyed read, so following one session in a fleet's database does not
    /// read the fleet. A corrupt row is an error naming the reason.
    fn load(&self, session_id: &str) -> Result<Option<AttachmentHistory>, StoreError> {
        let loaded = self.load_all()?;
        if let Some(skipped) = loaded.skipped.iter().find(|s| s.session_id == session_id) {
            return Err(StoreError::unreadable(session_id, &skipped.reason));
        }
        Ok(loaded
            .histories
            .into_iter()
            .find(|h| h.session_id == session_id))
    }
    /// Every session-record file a reader left here (`tether_records`'s
    /// ledger), with its head but without its state (`state` empty: read
    /// with [`record_file_states`](Self::record_file_states) when wanted).
    /// The default keeps none and says so: the reader then reads every file
    /// whole, as before.
    fn record_files(&self) -> Result<Vec<RecordFileRow>, StoreError> {
        Err(no_ledger())
    }
    /// The `state` of each row of `paths` the ledger holds, by path.
    fn record_file_states(&self, paths: &[String]) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let _ = paths;
        Err(no_ledger())
    }
    /// Every session summary a reader kept beside its ledger (what `tether
    /// sessions list` shows of a session whose files did not change).
    fn record_sessions(&self) -> Result<Vec<RecordSessionRow>, StoreError> {
        Err(no_ledger())
    }
    /// Writes `rows` (each replacing the row of its session), atomically.
    fn save_record_sessions(&self, rows: &[RecordSessionRow]) -> Result<(), StoreError> {
        let _ = rows;
        Err(no_ledger())
    }
    /// Writes `rows` (each replacing the row of its path), atomically.
    fn save_record_files(&self, rows: &[RecordFileRow]) -> Result<(), StoreError> {
        let _ = rows;
        Err(no_ledger())
    }
    /// Marks the rows of `paths` imported (their sessions are in this
    /// store as far as each row was read) or gone (the file vanished; its
    /// sessions are kept), where given.
    fn mark_record_files(
        &self,
        paths: &[String],
        imported: Option<bool>,
        gone: Option<bool>,
    ) -> Result<(), StoreError> {
        let _ = (paths, imported, gone);
        Err(no_ledger())
    }
    /// Adds each row's `count` to the count kept for its session, attempt,
    /// record kind, attribute and why (a row absent is added as it is),
    /// keeping the later `last_at`; atomically. Counts only, never what
    /// could not be parsed. The default keeps none and says so.
    fn add_unparsed_telemetry(
        &self,
        rows: &[crate::telemetry::UnparsedTelemetry],
    ) -> Result<(), StoreError> {
        let _ = rows;
        Err(no_telemetry_accounting())
    }
    /// The counts kept for `session_id`, every attempt's, ordered by
    /// attempt, kind, attribute and why. The default keeps none and says
    /// so.
    fn unparsed_telemetry(
        &self,
        session_id: &str,
    ) -> Result<Vec<crate::telemetry::UnparsedTelemetry>, StoreError> {
        let _ = session_id;
        Err(no_telemetry_accounting())
    }
}

/// What a store that keeps no telemetry accounting answers.
fn no_telemetry_accounting() -> StoreError {
    StoreError::Backend("this store keeps no count of unparsed telemetry".into())
}

/// One session-record file as a reader last left it: which file it was
/// (device, inode, size, modification), how far it was read, and a hash of
/// the bytes just before that, so the next run reads only what was
/// appended and reads a replaced, cut or rewritten file again from its
/// start. `state` is the reader's own (its place in the file and what the
/// file's records said so far): opaque to the store. Metadata only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordFileRow {
    /// The file's absolute path on this machine (the row's key).
    pub path: String,
    /// The harness whose file it is.
    pub agent_kind: String,
    /// The file system's device.
    pub device: u64,
    /// The file's inode.
    pub inode: u64,
    /// Its size when read.
    pub size: u64,
    /// Its modification time when read, in nanoseconds since the epoch.
    pub modified_ns: u64,
    /// Where reading stopped (after the last complete record).
    pub offset: u64,
    /// A hash of the bytes just before `offset`.
    pub tail_hash: u64,
    /// The file was not there on a later run; its sessions are kept.
    pub gone: bool,
    /// The sessions it holds are in this store as far as `offset`.
    pub imported: bool,
    /// Which reader wrote the row (a row of another is read again).
    pub generation: String,
    /// What a listing reads of the reader's state (small), opaque to the
    /// store.
    pub head: Vec<u8>,
    /// The rest of the reader's state, opaque to the store.
    pub state: Vec<u8>,
}

/// One session as a reader last summarized it from its record files, kept
/// beside their ledger rows: `stamp` says which rows (as read) it was built
/// from, so a summary whose files changed since is not used. Metadata only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordSessionRow {
    /// The Tether session id (the row's key).
    pub session_id: String,
    /// Which reader wrote the row (a row of another is not used).
    pub generation: String,
    /// A hash of the ledger rows it was built from.
    pub stamp: u64,
    /// The reader's summary, opaque to the store.
    pub summary: Vec<u8>,
}

/// What a store that keeps no record-file ledger answers.
fn no_ledger() -> StoreError {
    StoreError::Backend("this store keeps no record-file ledger".into())
}

/// What a store that keeps no tool pins answers.
fn no_pins() -> StoreError {
    StoreError::Backend("this store keeps no tool pins".into())
}

/// A pin row's hashes as a store keeps them: their JSON (hashes only).
pub fn pin_hashes_text(hashes: Option<&DefinitionHashes>) -> Option<String> {
    hashes.and_then(|h| serde_json::to_string(h).ok())
}

/// A pin row's hashes read back; unreadable text reads as absent (the
/// next listing reports the tool and `tether pins accept` repairs it).
pub fn pin_hashes_of(text: Option<&str>) -> Option<DefinitionHashes> {
    text.and_then(|t| serde_json::from_str(t).ok())
}

/// Reads one stored row as a database gives it: its `schema_version` column
/// (any integer type) and its document column, which the driver may have
/// failed to decode. Every store's read goes through here.
pub fn rehydrate_row<V, E>(
    stored_version: V,
    document: Result<String, E>,
) -> Result<AttachmentHistory, String>
where
    V: TryInto<u32>,
    E: std::fmt::Display,
{
    let document = document.map_err(|e| format!("unreadable document: {e}"))?;
    let version = stored_version
        .try_into()
        .map_err(|_| "bad schema_version".to_owned())?;
    rehydrate(version, &document)
}

/// The current attempt of each history of `harnesses` (all when empty)
/// updated since `since`: what `tether inventory --sessions` and `tether
/// mcp` read of the sessions a store holds.
pub fn current_attempts(
    histories: impl IntoIterator<Item = AttachmentHistory>,
    harnesses: &[String],
    since: Option<crate::model::Timestamp>,
) -> Vec<crate::history::AttachmentAttempt> {
    histories
        .into_iter()
        .filter_map(|history| {
            let attempt = history.current()?;
            let wanted = harnesses.is_empty() || harnesses.contains(&attempt.agent_kind);
            let recent = since.is_none_or(|t| attempt.updated_at >= t);
            (wanted && recent).then(|| attempt.clone())
        })
        .collect()
}

/// Reads a stored document: migrates older versions, loads newer ones
/// conservatively (unknown words kept, unknown statuses read as `unknown`).
pub fn rehydrate(stored_version: u32, document: &str) -> Result<AttachmentHistory, String> {
    let mut value: Value = serde_json::from_str(document)
        .map_err(|e| format!("not JSON: line {}, column {}", e.line(), e.column()))?;
    if stored_version < SCHEMA_VERSION {
        value = migrate(value, stored_version);
    }
    let mut history: AttachmentHistory =
        serde_json::from_value(value).map_err(|e| format!("not an attachment history: {e}"))?;
    // Whatever version it was written as, it is now held as this version.
    history.schema_version = SCHEMA_VERSION;
    Ok(history)
}

/// Upgrades a document written before `SCHEMA_VERSION`.
///
/// Version 0 is a document written before versioning: the same shape without
/// `schema_version` and, possibly, without the later optional fields, which
/// serde defaults fill in.
fn migrate(mut value: Value, from: u32) -> Value {
    if from == 0
        && let Value::Object(map) = &mut value
    {
        map.insert("schema_version".into(), Value::from(1));
    }
    value
}
