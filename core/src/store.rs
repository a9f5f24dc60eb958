//! Persistence: a `Store` trait (one row per session: its bounded history
//! document and `schema_version`), typed rehydration, and the embedded SQLite
//! default behind the `sqlite` feature.
//!
//! Architecture invariant: persistence never changes live state. The hub
//! writes through a separate thread; a failed write is logged and counted.

use serde_json::Value;

use crate::model::{AttachmentHistory, SCHEMA_VERSION};

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database refused.
    #[error("store: {0}")]
    Backend(String),
    /// The database failed its integrity check on open.
    #[error("store integrity check failed: {0}")]
    Integrity(String),
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

/// Where histories live between runs. A host may implement it on its own database.
pub trait Store: Send + Sync {
    /// Replaces one session's row, atomically.
    fn save(&self, history: &AttachmentHistory) -> Result<(), StoreError>;
    /// Removes one session's row.
    fn remove(&self, session_id: &str) -> Result<(), StoreError>;
    /// Every row, rehydrated; corrupt ones are reported in `skipped`.
    fn load_all(&self) -> Result<Loaded, StoreError>;
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

#[cfg(feature = "sqlite")]
pub mod sqlite {
    //! The embedded default: one SQLite file, WAL, a busy timeout, and an
    //! integrity check on open.

    use std::path::Path;
    use std::sync::Mutex;
    use std::time::Duration;

    use rusqlite::{Connection, OpenFlags, params};

    use super::{Loaded, SkippedRow, Store, StoreError, rehydrate};
    use crate::capabilities::{InventoryDocument, SnapshotRef};
    use crate::model::{AttachmentHistory, Timestamp};

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
            let conn = Connection::open(path).map_err(backend)?;
            Self::prepare(conn, true)
        }

        /// Opens an existing database read-only (for `tether history`).
        pub fn open_read_only(path: &Path) -> Result<Self, StoreError> {
            let conn = Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .map_err(backend)?;
            Self::prepare(conn, false)
        }

        fn prepare(conn: Connection, writable: bool) -> Result<Self, StoreError> {
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
                conn.execute_batch(
                    "PRAGMA synchronous=NORMAL;
                     CREATE TABLE IF NOT EXISTS attachment_history (
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
            let taken_at = document.taken_at.unwrap_or_else(Timestamp::now);
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

    impl Store for SqliteStore {
        fn save(&self, history: &AttachmentHistory) -> Result<(), StoreError> {
            let document =
                serde_json::to_string(history).map_err(|e| StoreError::Backend(e.to_string()))?;
            let updated_at = history
                .attempts
                .iter()
                .map(|a| a.updated_at.0)
                .max()
                .unwrap_or(0);
            // One statement: the row is replaced whole or not at all.
            self.conn()
                .execute(
                    "INSERT INTO attachment_history (session_id, task_id, schema_version, document, updated_at)
                     VALUES (?1, ?2, ?3, ?4, ?5)
                     ON CONFLICT(session_id) DO UPDATE SET
                         task_id = excluded.task_id,
                         schema_version = excluded.schema_version,
                         document = excluded.document,
                         updated_at = excluded.updated_at",
                    params![
                        history.session_id,
                        history.task_id,
                        history.schema_version,
                        document,
                        i64::try_from(updated_at).unwrap_or(i64::MAX)
                    ],
                )
                .map_err(backend)?;
            Ok(())
        }

        fn remove(&self, session_id: &str) -> Result<(), StoreError> {
            self.conn()
                .execute(
                    "DELETE FROM attachment_history WHERE session_id = ?1",
                    params![session_id],
                )
                .map_err(backend)?;
            Ok(())
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
                let result = document
                    .map_err(|e| format!("unreadable document: {e}"))
                    .and_then(|doc| {
                        let version =
                            u32::try_from(version).map_err(|_| "bad schema_version".to_owned())?;
                        rehydrate(version, &doc)
                    });
                match result {
                    Ok(history) => loaded.histories.push(history),
                    Err(reason) => {
                        tracing::warn!(%session_id, %reason, "skipping a corrupt stored history");
                        loaded.skipped.push(SkippedRow { session_id, reason });
                    }
                }
            }
            Ok(loaded)
        }
    }
}
