//! The embedded default: one SQLite file, WAL, a busy timeout, and an
//! integrity check on open.

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, params};

use tether_core::history::AttachmentHistory;
use tether_core::inventory::{InventoryDocument, SnapshotRef};
use tether_core::model::Timestamp;
use tether_core::pins::ToolPin;
use tether_core::store::{
    Loaded, RecordFileRow, RecordSessionRow, Store, StoreError, pin_hashes_of, pin_hashes_text,
    rehydrate_row,
};
use tether_core::telemetry::UnparsedTelemetry;

fn backend(e: rusqlite::Error) -> StoreError {
    StoreError::Backend(e.to_string())
}

/// Prepares a query; `None` when its table does not exist yet (a database
/// nothing was ever written to, opened read-only).
fn prepare_if_table<'c>(
    conn: &'c Connection,
    sql: &str,
) -> Result<Option<rusqlite::Statement<'c>>, StoreError> {
    match conn.prepare(sql) {
        Ok(stmt) => Ok(Some(stmt)),
        Err(rusqlite::Error::SqliteFailure(_, Some(msg))) if msg.contains("no such table") => {
            Ok(None)
        }
        Err(e) => Err(backend(e)),
    }
}

/// The newest database schema this build knows (`PRAGMA user_version`).
pub const SQLITE_SCHEMA_VERSION: u32 = 6;

/// Forward-only migrations, in one transaction; each step runs once.
/// - 1: the tables (databases from before versioning have them at 0);
/// - 2: `attachment_history.revision`, the conditional-write guard;
/// - 3: `tool_pin`, the tool definition pins (hashes only);
/// - 4: `record_file`, how far each session-record file was read;
/// - 5: `record_file.head` (what a listing reads, apart from the state)
///   and `record_session`, each session's summary beside its files' rows;
/// - 6: `telemetry_unparsed`, per session and attempt the telemetry
///   answers that could not be parsed (counts only).
fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(backend)?;
    let found: u32 = tx
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(backend)?;
    if found > SQLITE_SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            found,
            known: SQLITE_SCHEMA_VERSION,
        });
    }
    if found < 1 {
        tx.execute_batch(
            "CREATE TABLE IF NOT EXISTS attachment_history (
                 session_id TEXT PRIMARY KEY,
                 task_id TEXT NOT NULL,
                 schema_version INTEGER NOT NULL,
                 document TEXT NOT NULL,
                 updated_at INTEGER NOT NULL
             );
             CREATE TABLE IF NOT EXISTS inventory_snapshot (
                 id INTEGER PRIMARY KEY AUTOINCREMENT,
                 taken_at INTEGER NOT NULL,
                 schema_version INTEGER NOT NULL,
                 document TEXT NOT NULL
             );",
        )
        .map_err(backend)?;
    }
    if found < 2 {
        let has_revision = tx
            .prepare(
                "SELECT 1 FROM pragma_table_info('attachment_history') WHERE name = 'revision'",
            )
            .and_then(|mut s| s.exists([]))
            .map_err(backend)?;
        if !has_revision {
            tx.execute_batch(
                "ALTER TABLE attachment_history ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;",
            )
            .map_err(backend)?;
        }
    }
    if found < 3 {
        tx.execute_batch(TOOL_PIN_TABLE).map_err(backend)?;
    }
    if found < 4 {
        tx.execute_batch(RECORD_FILE_TABLE).map_err(backend)?;
    }
    if found < 5 {
        // Rows of schema 4 hold head and state in one blob: a new build
        // reads their files again anyway (another generation).
        tx.execute_batch(
            "DELETE FROM record_file;
             ALTER TABLE record_file ADD COLUMN head BLOB NOT NULL DEFAULT x'';",
        )
        .map_err(backend)?;
        tx.execute_batch(RECORD_SESSION_TABLE).map_err(backend)?;
    }
    if found < 6 {
        tx.execute_batch(TELEMETRY_UNPARSED_TABLE)
            .map_err(backend)?;
    }
    if found < SQLITE_SCHEMA_VERSION {
        tx.execute_batch(&format!("PRAGMA user_version = {SQLITE_SCHEMA_VERSION};"))
            .map_err(backend)?;
    }
    tx.commit().map_err(backend)
}

/// The tool definition pins: one row per server and tool, the pinned and
/// the last-seen definition as JSON of their hashes (never text).
const TOOL_PIN_TABLE: &str = "CREATE TABLE IF NOT EXISTS tool_pin (
         server TEXT NOT NULL,
         tool TEXT NOT NULL,
         pinned TEXT,
         pinned_at INTEGER,
         seen TEXT,
         seen_at INTEGER NOT NULL,
         PRIMARY KEY (server, tool)
     );";

/// The session-record files' ledger (`tether_core::store::RecordFileRow`):
/// one row per file, what identifies it and how far it was read, and the
/// reader's state (metadata only).
const RECORD_FILE_TABLE: &str = "CREATE TABLE IF NOT EXISTS record_file (
         path TEXT PRIMARY KEY,
         agent_kind TEXT NOT NULL,
         device INTEGER NOT NULL,
         inode INTEGER NOT NULL,
         size INTEGER NOT NULL,
         modified_ns INTEGER NOT NULL,
         read_to INTEGER NOT NULL,
         tail_hash INTEGER NOT NULL,
         gone INTEGER NOT NULL DEFAULT 0,
         imported INTEGER NOT NULL DEFAULT 0,
         generation TEXT NOT NULL,
         state BLOB NOT NULL
     );";

/// Each session's summary as a reader kept it beside its files' rows
/// (`tether_core::store::RecordSessionRow`): metadata only.
const RECORD_SESSION_TABLE: &str = "CREATE TABLE IF NOT EXISTS record_session (
         session_id TEXT PRIMARY KEY,
         generation TEXT NOT NULL,
         stamp INTEGER NOT NULL,
         summary BLOB NOT NULL
     );";

/// The telemetry answers that could not be parsed
/// (`tether_core::telemetry::UnparsedTelemetry`): one row per session,
/// attempt, record kind, attribute and why, with how many and when the
/// last was made. Counts only, never what could not be parsed.
const TELEMETRY_UNPARSED_TABLE: &str = "CREATE TABLE IF NOT EXISTS telemetry_unparsed (
         session_id TEXT NOT NULL,
         attempt_id TEXT NOT NULL,
         kind TEXT NOT NULL,
         attribute TEXT NOT NULL,
         why TEXT NOT NULL,
         count INTEGER NOT NULL,
         last_at INTEGER NOT NULL,
         PRIMARY KEY (session_id, attempt_id, kind, attribute, why)
     );";

fn time_of(at: Option<i64>) -> Option<Timestamp> {
    at.map(|t| Timestamp(u64::try_from(t).unwrap_or(0)))
}

fn sql_time(at: Timestamp) -> i64 {
    i64::try_from(at.0).unwrap_or(i64::MAX)
}

/// Refuses a database path, or one of the files SQLite opens beside it
/// (`-wal`, `-shm`, `-journal`), that exists and is not a regular file
/// (after symlinks): opening a FIFO blocks until a writer comes, and a
/// device or a directory is no database. `stat` never blocks.
fn check_file_types(path: &Path) -> Result<(), StoreError> {
    let mut siblings = vec![path.to_path_buf()];
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        siblings.push(name.into());
    }
    for (i, file) in siblings.iter().enumerate() {
        let Ok(meta) = std::fs::metadata(file) else {
            continue;
        };
        if meta.is_file() {
            continue;
        }
        let what = file_kind(&meta.file_type());
        let which = if i == 0 {
            "the store's path".to_owned()
        } else {
            format!("the store's {} file", ["", "-wal", "-shm", "-journal"][i])
        };
        return Err(StoreError::Backend(format!(
            "{which} is {what}, not a database file"
        )));
    }
    Ok(())
}

fn file_kind(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// A SQLite store.
pub struct SqliteStore {
    conn: Mutex<Connection>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SqliteStore")
    }
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `path`.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        check_file_types(path)?;
        let conn = Connection::open(path).map_err(backend)?;
        Self::prepare(conn, true)
    }

    /// Opens an existing database read-only (for `tether history`).
    pub fn open_read_only(path: &Path) -> Result<Self, StoreError> {
        check_file_types(path)?;
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(backend)?;
        Self::prepare(conn, false)
    }

    fn prepare(mut conn: Connection, writable: bool) -> Result<Self, StoreError> {
        conn.busy_timeout(Duration::from_secs(5)).map_err(backend)?;
        if writable {
            let mode: String = conn
                .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
                .map_err(backend)?;
            if !mode.eq_ignore_ascii_case("wal") {
                return Err(StoreError::Backend(format!(
                    "WAL unavailable (journal_mode={mode})"
                )));
            }
            conn.execute_batch("PRAGMA synchronous=NORMAL;")
                .map_err(backend)?;
            migrate(&mut conn)?;
        }
        let check: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .map_err(backend)?;
        if check != "ok" {
            return Err(StoreError::Integrity(check));
        }
        Ok(SqliteStore {
            conn: Mutex::new(conn),
        })
    }

    /// Stores an inventory snapshot (`tether inventory --record`); returns its id.
    /// The document holds sanitized rows only (the in-memory endpoints are never serialized).
    pub fn record_inventory(
        &self,
        document: &InventoryDocument,
    ) -> Result<SnapshotRef, StoreError> {
        let text =
            serde_json::to_string(document).map_err(|e| StoreError::Backend(e.to_string()))?;
        let taken_at = document.taken_at.unwrap_or_else(tether_hub::now);
        let conn = self.conn();
        conn.execute(
            "INSERT INTO inventory_snapshot (taken_at, schema_version, document) VALUES (?1, ?2, ?3)",
            params![
                i64::try_from(taken_at.0).unwrap_or(i64::MAX),
                document.schema_version,
                text
            ],
        )
        .map_err(backend)?;
        Ok(SnapshotRef {
            id: conn.last_insert_rowid(),
            taken_at,
        })
    }

    /// The newest `limit` inventory snapshots, newest first. Unreadable
    /// rows are skipped with a warning.
    pub fn inventory_snapshots(
        &self,
        limit: usize,
    ) -> Result<Vec<(SnapshotRef, InventoryDocument)>, StoreError> {
        let conn = self.conn();
        let Some(mut stmt) = prepare_if_table(
            &conn,
            "SELECT id, taken_at, document FROM inventory_snapshot ORDER BY id DESC LIMIT ?1",
        )?
        else {
            return Ok(Vec::new());
        };
        let rows = stmt
            .query_map(params![i64::try_from(limit).unwrap_or(i64::MAX)], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2),
                ))
            })
            .map_err(backend)?;
        let mut out = Vec::new();
        for row in rows {
            let (id, taken_at, document) = row.map_err(backend)?;
            match document.map_err(|e| e.to_string()).and_then(|d| {
                serde_json::from_str::<InventoryDocument>(&d).map_err(|e| e.to_string())
            }) {
                Ok(doc) => out.push((
                    SnapshotRef {
                        id,
                        taken_at: Timestamp(u64::try_from(taken_at).unwrap_or(0)),
                    },
                    doc,
                )),
                Err(reason) => {
                    tracing::warn!(id, %reason, "skipping an unreadable inventory snapshot")
                }
            }
        }
        Ok(out)
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One conditional upsert on `conn` (a connection or a transaction).
fn save_on(conn: &Connection, history: &AttachmentHistory) -> Result<(), StoreError> {
    let document =
        serde_json::to_string(history).map_err(|e| StoreError::Backend(e.to_string()))?;
    let updated_at = history
        .attempts
        .iter()
        .map(|a| a.updated_at.0)
        .max()
        .unwrap_or(0);
    let revision = i64::try_from(history.revision).unwrap_or(i64::MAX);
    // One statement: the row is replaced whole, and only by a newer revision.
    let changed = conn
        .prepare(
            "INSERT INTO attachment_history (session_id, task_id, schema_version, document, updated_at, revision)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT(session_id) DO UPDATE SET
                 task_id = excluded.task_id,
                 schema_version = excluded.schema_version,
                 document = excluded.document,
                 updated_at = excluded.updated_at,
                 revision = excluded.revision
             WHERE attachment_history.revision < excluded.revision",
        )
        .and_then(|mut stmt| {
            stmt.execute(params![
                history.session_id,
                history.task_id,
                history.schema_version,
                document,
                i64::try_from(updated_at).unwrap_or(i64::MAX),
                revision
            ])
        })
        .map_err(backend)?;
    if changed == 0 {
        let stored: i64 = conn
            .query_row(
                "SELECT revision FROM attachment_history WHERE session_id = ?1",
                params![history.session_id],
                |r| r.get(0),
            )
            .map_err(backend)?;
        return Err(StoreError::Stale {
            stored: u64::try_from(stored).unwrap_or(0),
            attempted: history.revision,
        });
    }
    Ok(())
}

impl Store for SqliteStore {
    fn save(&self, history: &AttachmentHistory) -> Result<(), StoreError> {
        save_on(&self.conn(), history)
    }

    /// One transaction for the whole batch: one commit instead of one per
    /// session. A stale row is refused on its own; a failed commit fails all.
    fn save_batch(&self, histories: &[&AttachmentHistory]) -> Vec<Result<(), StoreError>> {
        let mut conn = self.conn();
        let tx = match conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate) {
            Ok(tx) => tx,
            Err(e) => {
                let err = e.to_string();
                return histories
                    .iter()
                    .map(|_| Err(StoreError::Backend(err.clone())))
                    .collect();
            }
        };
        let results: Vec<_> = histories.iter().map(|h| save_on(&tx, h)).collect();
        match tx.commit() {
            Ok(()) => results,
            Err(e) => {
                let err = e.to_string();
                histories
                    .iter()
                    .map(|_| Err(StoreError::Backend(err.clone())))
                    .collect()
            }
        }
    }

    /// The session's row and its telemetry counts, in one transaction.
    fn remove(&self, session_id: &str) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(backend)?;
        for table in ["attachment_history", "telemetry_unparsed"] {
            tx.execute(
                &format!("DELETE FROM {table} WHERE session_id = ?1"),
                params![session_id],
            )
            .map_err(backend)?;
        }
        tx.commit().map_err(backend)
    }

    /// One transaction for all the rows.
    fn add_unparsed_telemetry(&self, rows: &[UnparsedTelemetry]) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(backend)?;
        {
            let mut add = tx
                .prepare(
                    "INSERT INTO telemetry_unparsed
                         (session_id, attempt_id, kind, attribute, why, count, last_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                     ON CONFLICT (session_id, attempt_id, kind, attribute, why) DO UPDATE SET
                         count = count + excluded.count,
                         last_at = max(last_at, excluded.last_at)",
                )
                .map_err(backend)?;
            for row in rows {
                add.execute(params![
                    row.session_id,
                    row.attempt_id,
                    row.kind,
                    row.attribute,
                    crate::why_word(row.why),
                    i64::try_from(row.count).unwrap_or(i64::MAX),
                    sql_time(row.last_at),
                ])
                .map_err(backend)?;
            }
        }
        tx.commit().map_err(backend)
    }

    fn unparsed_telemetry(&self, session_id: &str) -> Result<Vec<UnparsedTelemetry>, StoreError> {
        let conn = self.conn();
        let Some(mut stmt) = prepare_if_table(
            &conn,
            "SELECT attempt_id, kind, attribute, why, count, last_at FROM telemetry_unparsed
             WHERE session_id = ?1 ORDER BY attempt_id, kind, attribute, why",
        )?
        else {
            return Ok(Vec::new());
        };
        let rows = stmt
            .query_map(params![session_id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, i64>(4)?,
                    r.get::<_, i64>(5)?,
                ))
            })
            .map_err(backend)?;
        let mut out = Vec::new();
        for row in rows {
            let (attempt, kind, attribute, why, count, last_at) = row.map_err(backend)?;
            out.extend(crate::unparsed_row(
                session_id, attempt, kind, attribute, &why, count, last_at,
            ));
        }
        Ok(out)
    }

    fn tool_pins(&self, server: Option<&str>) -> Result<Vec<ToolPin>, StoreError> {
        let conn = self.conn();
        let Some(mut stmt) = prepare_if_table(
            &conn,
            "SELECT server, tool, pinned, pinned_at, seen, seen_at FROM tool_pin
             WHERE ?1 IS NULL OR server = ?1 ORDER BY server, tool",
        )?
        else {
            return Ok(Vec::new());
        };
        let rows = stmt
            .query_map(params![server], |r| {
                Ok(ToolPin {
                    server: r.get(0)?,
                    tool: r.get(1)?,
                    pinned: pin_hashes_of(r.get::<_, Option<String>>(2)?.as_deref()),
                    pinned_at: time_of(r.get(3)?),
                    seen: pin_hashes_of(r.get::<_, Option<String>>(4)?.as_deref()),
                    seen_at: time_of(Some(r.get(5)?)).unwrap_or_default(),
                })
            })
            .map_err(backend)?;
        rows.map(|row| row.map_err(backend)).collect()
    }

    /// One transaction: the server's rows deleted, then `pins` inserted.
    fn replace_tool_pins(&self, server: &str, pins: &[ToolPin]) -> Result<(), StoreError> {
        if let Some(other) = pins.iter().find(|p| p.server != server) {
            return Err(StoreError::Backend(format!(
                "a pin of {} given for {server}",
                other.server
            )));
        }
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(backend)?;
        tx.execute("DELETE FROM tool_pin WHERE server = ?1", params![server])
            .map_err(backend)?;
        {
            let mut insert = tx
                .prepare(
                    "INSERT INTO tool_pin (server, tool, pinned, pinned_at, seen, seen_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(backend)?;
            for pin in pins {
                insert
                    .execute(params![
                        pin.server,
                        pin.tool,
                        pin_hashes_text(pin.pinned.as_ref()),
                        pin.pinned_at.map(sql_time),
                        pin_hashes_text(pin.seen.as_ref()),
                        sql_time(pin.seen_at),
                    ])
                    .map_err(backend)?;
            }
        }
        tx.commit().map_err(backend)
    }

    fn load(&self, session_id: &str) -> Result<Option<AttachmentHistory>, StoreError> {
        let conn = self.conn();
        let Some(mut stmt) = prepare_if_table(
            &conn,
            "SELECT schema_version, document FROM attachment_history WHERE session_id = ?1",
        )?
        else {
            return Ok(None);
        };
        let row = stmt
            .query_row(params![session_id], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)))
            })
            .map(Some)
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                e => Err(backend(e)),
            })?;
        let Some((version, document)) = row else {
            return Ok(None);
        };
        rehydrate_row(version, document)
            .map(Some)
            .map_err(|reason| StoreError::unreadable(session_id, &reason))
    }

    fn revisions(&self) -> Result<Vec<(String, u64)>, StoreError> {
        let conn = self.conn();
        let Some(mut stmt) = prepare_if_table(
            &conn,
            "SELECT session_id, revision FROM attachment_history ORDER BY session_id",
        )?
        else {
            return Ok(Vec::new());
        };
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
            .map_err(backend)?;
        rows.map(|row| {
            row.map(|(id, revision)| (id, u64::try_from(revision).unwrap_or(0)))
                .map_err(backend)
        })
        .collect()
    }

    fn load_all(&self) -> Result<Loaded, StoreError> {
        let conn = self.conn();
        let Some(mut stmt) = prepare_if_table(
            &conn,
            "SELECT session_id, schema_version, document FROM attachment_history ORDER BY session_id",
        )?
        else {
            return Ok(Loaded::default());
        };
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2),
                ))
            })
            .map_err(backend)?;
        let mut loaded = Loaded::default();
        for row in rows {
            let (session_id, version, document) = row.map_err(backend)?;
            loaded.push_row(session_id, rehydrate_row(version, document));
        }
        Ok(loaded)
    }

    fn record_files(&self) -> Result<Vec<RecordFileRow>, StoreError> {
        let conn = self.conn();
        let Some(mut stmt) = prepare_if_table(
            &conn,
            "SELECT path, agent_kind, device, inode, size, modified_ns, read_to, tail_hash,
                    gone, imported, generation, head FROM record_file",
        )?
        else {
            return Ok(Vec::new());
        };
        let rows = stmt
            .query_map([], |r| {
                Ok(RecordFileRow {
                    path: r.get(0)?,
                    agent_kind: r.get(1)?,
                    device: bits(r.get(2)?),
                    inode: bits(r.get(3)?),
                    size: bits(r.get(4)?),
                    modified_ns: bits(r.get(5)?),
                    offset: bits(r.get(6)?),
                    tail_hash: bits(r.get(7)?),
                    gone: r.get(8)?,
                    imported: r.get(9)?,
                    generation: r.get(10)?,
                    head: r.get(11)?,
                    state: Vec::new(),
                })
            })
            .map_err(backend)?;
        rows.map(|row| row.map_err(backend)).collect()
    }

    /// One transaction for all the rows.
    fn save_record_files(&self, rows: &[RecordFileRow]) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(backend)?;
        {
            let mut upsert = tx
                .prepare(
                    "INSERT OR REPLACE INTO record_file (path, agent_kind, device, inode, size,
                         modified_ns, read_to, tail_hash, gone, imported, generation, head, state)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                )
                .map_err(backend)?;
            for row in rows {
                upsert
                    .execute(params![
                        row.path,
                        row.agent_kind,
                        signed(row.device),
                        signed(row.inode),
                        signed(row.size),
                        signed(row.modified_ns),
                        signed(row.offset),
                        signed(row.tail_hash),
                        row.gone,
                        row.imported,
                        row.generation,
                        row.head,
                        row.state,
                    ])
                    .map_err(backend)?;
            }
        }
        tx.commit().map_err(backend)
    }

    fn record_file_states(&self, paths: &[String]) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let conn = self.conn();
        let Some(mut stmt) =
            prepare_if_table(&conn, "SELECT state FROM record_file WHERE path = ?1")?
        else {
            return Ok(Vec::new());
        };
        let mut out = Vec::with_capacity(paths.len());
        for path in paths {
            match stmt.query_row(params![path], |r| r.get::<_, Vec<u8>>(0)) {
                Ok(state) => out.push((path.clone(), state)),
                Err(rusqlite::Error::QueryReturnedNoRows) => {}
                Err(e) => return Err(backend(e)),
            }
        }
        Ok(out)
    }

    fn record_sessions(&self) -> Result<Vec<RecordSessionRow>, StoreError> {
        let conn = self.conn();
        let Some(mut stmt) = prepare_if_table(
            &conn,
            "SELECT session_id, generation, stamp, summary FROM record_session",
        )?
        else {
            return Ok(Vec::new());
        };
        let rows = stmt
            .query_map([], |r| {
                Ok(RecordSessionRow {
                    session_id: r.get(0)?,
                    generation: r.get(1)?,
                    stamp: bits(r.get(2)?),
                    summary: r.get(3)?,
                })
            })
            .map_err(backend)?;
        rows.map(|row| row.map_err(backend)).collect()
    }

    /// One transaction for all the rows.
    fn save_record_sessions(&self, rows: &[RecordSessionRow]) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(backend)?;
        {
            let mut upsert = tx
                .prepare(
                    "INSERT OR REPLACE INTO record_session (session_id, generation, stamp, summary)
                     VALUES (?1, ?2, ?3, ?4)",
                )
                .map_err(backend)?;
            for row in rows {
                upsert
                    .execute(params![
                        row.session_id,
                        row.generation,
                        signed(row.stamp),
                        row.summary
                    ])
                    .map_err(backend)?;
            }
        }
        tx.commit().map_err(backend)
    }

    fn mark_record_files(
        &self,
        paths: &[String],
        imported: Option<bool>,
        gone: Option<bool>,
    ) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(backend)?;
        {
            let mut mark = tx
                .prepare(
                    "UPDATE record_file SET imported = coalesce(?2, imported),
                         gone = coalesce(?3, gone) WHERE path = ?1",
                )
                .map_err(backend)?;
            for path in paths {
                mark.execute(params![path, imported, gone])
                    .map_err(backend)?;
            }
        }
        tx.commit().map_err(backend)
    }
}

/// A `u64` kept in SQLite's signed integer, bit for bit (hashes and
/// inodes use all 64 bits).
fn signed(v: u64) -> i64 {
    i64::from_ne_bytes(v.to_ne_bytes())
}

/// The `u64` [`signed`] kept.
fn bits(v: i64) -> u64 {
    u64::from_ne_bytes(v.to_ne_bytes())
}
