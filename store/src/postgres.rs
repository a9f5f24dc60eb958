//! A PostgreSQL store shared by many hosts (feature `postgres`).
//!
//! - One row per session, as in SQLite, written only by a newer `revision`
//!   (one statement: the conditional upsert and its `pg_notify`).
//! - Forward-only migrations under an advisory lock, recorded in
//!   `tether_schema_migrations`; a database newer than this build is refused
//!   for writing.
//! - Changes are announced with `NOTIFY tether_history, '<session id>'`: ids
//!   only, never documents. [`PostgresStore::listen`] subscribes.
//! - Credentials: the connection string may carry a password; so may
//!   `PGPASSWORD` or a password file (`PGPASSFILE`, else `~/.pgpass`). None
//!   of them is ever printed: errors are scrubbed of the password and the
//!   connection string, and `Debug` shows `postgres://host:port/db` only.
//!
//! The synchronous `Store` calls run on the store's own small runtime, so
//! they work from a plain thread (the hub's writer) and from async code alike.

use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, sync_channel};
use std::time::Duration;

use tether_core::history::AttachmentHistory;
use tether_core::model::Timestamp;
use tether_core::pins::ToolPin;
use tether_core::sanitize::Scrubber;
use tether_core::store::{
    Loaded, Store, StoreError, pin_hashes_of, pin_hashes_text, rehydrate_row,
};
use tether_core::telemetry::UnparsedTelemetry;
use tokio::sync::Mutex;
use tokio_postgres::config::Host;
use tokio_postgres::{AsyncMessage, Client, Config};

use crate::pg_tls::{PgTls, SslMode, take_tls_settings};

/// The channel every change is announced on.
pub const NOTIFY_CHANNEL: &str = "tether_history";

/// Bound on one store call, connecting included.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

pub(super) struct Inner {
    target: PgTarget,
    client: Mutex<Option<Client>>,
}

impl Inner {
    /// The live client, reconnecting if the last one closed.
    async fn client(&self) -> Result<tokio::sync::MutexGuard<'_, Option<Client>>, StoreError> {
        let mut guard = self.client.lock().await;
        if guard.as_ref().is_none_or(Client::is_closed) {
            let (client, connection) = self
                .target
                .connect()
                .await
                .map_err(|e| self.target.driver_error("cannot connect", &e))?;
            tokio::spawn(async move {
                if let Err(err) = connection.await {
                    tracing::debug!(%err, "PostgreSQL connection ended");
                }
            });
            *guard = Some(client);
        }
        Ok(guard)
    }
}

/// A PostgreSQL store. Cheap to share (`Arc`); safe from any thread.
pub struct PostgresStore {
    inner: Arc<Inner>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PostgresStore({})", self.inner.target)
    }
}

impl Drop for PostgresStore {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            // Never blocks, so a store can be dropped inside async code.
            runtime.shutdown_background();
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, StoreError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("tether-postgres")
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| StoreError::Backend(format!("cannot start the PostgreSQL runtime: {e}")))
}

impl PostgresStore {
    /// Connects to `spec` (see [`PgTarget::resolve`]) and runs the
    /// migrations this build knows.
    pub fn connect(spec: &str) -> Result<Self, StoreError> {
        Self::open(spec, true)
    }

    /// Connects without migrating or writing (for `tether history`).
    pub fn connect_read_only(spec: &str) -> Result<Self, StoreError> {
        Self::open(spec, false)
    }

    fn open(spec: &str, writable: bool) -> Result<Self, StoreError> {
        let target = PgTarget::resolve(spec)?;
        let store = PostgresStore {
            inner: Arc::new(Inner {
                target,
                client: Mutex::new(None),
            }),
            runtime: Some(runtime()?),
        };
        if writable {
            store.call(|inner| async move { migrate(&inner).await })?;
        } else {
            store.call(|inner| async move { inner.client().await.map(|_| ()) })?;
        }
        Ok(store)
    }

    /// The sanitized target (`postgres://host:port/db`).
    pub fn target(&self) -> String {
        self.inner.target.to_string()
    }

    /// The TLS protocol the server reports for this store's connection
    /// (`pg_stat_ssl`, e.g. `TLSv1.3`), or `None` when it is not encrypted.
    /// Asked of the server, so it is evidence, not the setting.
    pub fn tls_version(&self) -> Result<Option<String>, StoreError> {
        self.call(|inner| async move {
            let guard = inner.client().await?;
            let client = guard.as_ref().ok_or_else(closed)?;
            let row = client
                .query_opt(
                    "SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                    &[],
                )
                .await
                .map_err(|e| inner.target.driver_error("cannot read pg_stat_ssl", &e))?;
            Ok(row.and_then(|r| {
                if r.get::<_, bool>(0) {
                    r.get::<_, Option<String>>(1)
                } else {
                    None
                }
            }))
        })
    }

    /// How the connection is secured, as the server reports it ("TLSv1.3,
    /// certificate and host name checked, sslmode=verify-full", "not
    /// encrypted, sslmode=disable", "Unix socket, not encrypted").
    pub fn security(&self) -> String {
        let target = &self.inner.target;
        let mode = target.ssl_mode();
        match self.tls_version() {
            Ok(Some(version)) => {
                let checked = match mode {
                    SslMode::VerifyFull => "certificate and host name checked",
                    SslMode::VerifyCa => "certificate checked, host name not",
                    _ => "certificate not checked",
                };
                format!("{version}, {checked}, sslmode={}", mode.word())
            }
            Ok(None) if target.only_unix_sockets() => "Unix socket, not encrypted".to_owned(),
            Ok(None) => format!("not encrypted, sslmode={}", mode.word()),
            Err(_) => "encryption unknown".to_owned(),
        }
    }

    /// One line for people: the target, then [`security`](Self::security).
    pub fn describe(&self) -> String {
        format!("{}, {}", self.inner.target, self.security())
    }

    /// Runs `job` on the store's runtime and waits for it, bounded.
    fn call<T, F, Fut>(&self, job: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(Arc<Inner>) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Result<T, StoreError>> + Send + 'static,
    {
        let runtime = self
            .runtime
            .as_ref()
            .ok_or_else(|| StoreError::Backend("the store is shut down".into()))?;
        let (tx, rx) = sync_channel(1);
        let inner = Arc::clone(&self.inner);
        runtime.spawn(async move {
            let result = tokio::time::timeout(CALL_TIMEOUT, job(inner))
                .await
                .unwrap_or_else(|_| {
                    Err(StoreError::Backend(
                        "PostgreSQL did not answer in time".into(),
                    ))
                });
            let _ = tx.send(result);
        });
        match rx.recv_timeout(CALL_TIMEOUT + Duration::from_secs(1)) {
            Ok(result) => result,
            Err(_) => Err(StoreError::Backend(
                "PostgreSQL did not answer in time".into(),
            )),
        }
    }

    /// Subscribes to changes from every process that writes this database:
    /// each `NOTIFY` carries one session id (never a document). A separate
    /// connection; dropping the feed closes it.
    ///
    /// The feed heals itself: when its connection is lost (the server
    /// restarted, the network dropped), it reconnects with backoff (0.25 s,
    /// doubling to 10 s) and then says [`Change::Resync`], because
    /// notifications sent meanwhile were missed. Only the first connection's
    /// failure is an error here.
    pub fn listen(&self) -> Result<ChangeFeed, StoreError> {
        let runtime = self
            .runtime
            .as_ref()
            .ok_or_else(|| StoreError::Backend("the store is shut down".into()))?;
        let target = self.inner.target.clone();
        let (changes_tx, changes_rx) = std::sync::mpsc::channel();
        let (ready_tx, ready_rx) = sync_channel(1);
        let backend = Arc::new(AtomicI32::new(0));
        let backend_pid = Arc::clone(&backend);
        let task = runtime.spawn(async move {
            let (mut _client, mut connection) = match connect_listening(&target).await {
                Ok((client, connection, pid, early)) => {
                    backend_pid.store(pid, Ordering::Relaxed);
                    let _ = ready_tx.send(Ok(()));
                    for id in early {
                        let _ = changes_tx.send(Change::Session(id));
                    }
                    (client, connection)
                }
                Err(err) => {
                    let _ = ready_tx.send(Err(err));
                    return;
                }
            };
            loop {
                if pump(&mut connection, &changes_tx).await == Pumped::ReaderGone {
                    return;
                }
                backend_pid.store(0, Ordering::Relaxed);
                let mut backoff = FEED_BACKOFF_START;
                tracing::warn!(retry_in = ?backoff, "the PostgreSQL change feed lost its connection; reconnecting");
                loop {
                    tokio::time::sleep(backoff).await;
                    match connect_listening(&target).await {
                        // What arrived during set-up is covered by the resync below.
                        Ok((client, fresh, pid, _early)) => {
                            (_client, connection) = (client, fresh);
                            backend_pid.store(pid, Ordering::Relaxed);
                            tracing::info!("the PostgreSQL change feed is back");
                            break;
                        }
                        Err(err) => {
                            backoff = (backoff * 2).min(FEED_BACKOFF_MAX);
                            tracing::warn!(%err, retry_in = ?backoff, "the PostgreSQL change feed cannot reconnect yet");
                        }
                    }
                }
                if changes_tx.send(Change::Resync).is_err() {
                    return;
                }
            }
        });
        match ready_rx.recv_timeout(CALL_TIMEOUT) {
            Ok(Ok(())) => Ok(ChangeFeed {
                changes: changes_rx,
                backend,
                task,
            }),
            Ok(Err(err)) => Err(err),
            Err(_) => {
                task.abort();
                Err(StoreError::Backend(
                    "PostgreSQL did not answer in time".into(),
                ))
            }
        }
    }
}

pub(super) fn closed() -> StoreError {
    StoreError::Backend("the PostgreSQL connection is closed".into())
}

/// A history ready to write: its document and keys, owned (it crosses into
/// the store's runtime).
pub(super) struct Row {
    session_id: String,
    task_id: String,
    schema_version: i32,
    document: String,
    updated_at: i64,
    revision: u64,
}

impl Row {
    fn of(history: &AttachmentHistory) -> Result<Row, StoreError> {
        let document =
            serde_json::to_string(history).map_err(|e| StoreError::Backend(e.to_string()))?;
        let updated_at = history
            .attempts
            .iter()
            .map(|a| a.updated_at.0)
            .max()
            .unwrap_or(0);
        Ok(Row {
            session_id: history.session_id.clone(),
            task_id: history.task_id.clone(),
            schema_version: i32::try_from(history.schema_version).unwrap_or(i32::MAX),
            document,
            updated_at: i64::try_from(updated_at).unwrap_or(i64::MAX),
            revision: history.revision,
        })
    }
}

/// Every row of a batch in one statement (one round trip, one commit): the
/// conditional upsert over `unnest` of the columns, with a NOTIFY per row
/// written. Rows not returned were refused as stale; their stored revisions
/// are read back to say so.
async fn save_rows(
    client: &Client,
    target: &PgTarget,
    rows: Vec<Result<Row, StoreError>>,
) -> Result<Vec<Result<(), StoreError>>, StoreError> {
    let mut ids = Vec::new();
    let mut tasks = Vec::new();
    let mut versions = Vec::new();
    let mut documents = Vec::new();
    let mut updated = Vec::new();
    let mut revisions = Vec::new();
    for row in rows.iter().flatten() {
        ids.push(row.session_id.clone());
        tasks.push(row.task_id.clone());
        versions.push(row.schema_version);
        documents.push(row.document.clone());
        updated.push(row.updated_at);
        revisions.push(i64::try_from(row.revision).unwrap_or(i64::MAX));
    }
    let distinct: std::collections::HashSet<&String> = ids.iter().collect();
    if distinct.len() != ids.len() {
        // One statement cannot upsert a row twice: keep the caller's order, one by one.
        let mut results = Vec::with_capacity(rows.len());
        for row in rows {
            let one = Box::pin(save_rows(client, target, vec![row])).await?;
            results.extend(one);
        }
        return Ok(results);
    }
    let written: std::collections::HashSet<String> = client
        .query(
            "WITH input AS (
                 SELECT * FROM unnest($1::text[], $2::text[], $3::int4[], $4::text[], $5::int8[], $6::int8[])
                     AS t(session_id, task_id, schema_version, document, updated_at, revision)
             ), up AS (
                 INSERT INTO attachment_history
                     (session_id, task_id, schema_version, document, updated_at, revision)
                 SELECT * FROM input
                 ON CONFLICT (session_id) DO UPDATE SET
                     task_id = EXCLUDED.task_id,
                     schema_version = EXCLUDED.schema_version,
                     document = EXCLUDED.document,
                     updated_at = EXCLUDED.updated_at,
                     revision = EXCLUDED.revision
                 WHERE attachment_history.revision < EXCLUDED.revision
                 RETURNING session_id
             )
             SELECT session_id, pg_notify('tether_history', session_id) FROM up",
            &[&ids, &tasks, &versions, &documents, &updated, &revisions],
        )
        .await
        .map_err(|e| target.driver_error("write failed", &e))?
        .into_iter()
        .map(|r| r.get::<_, String>(0))
        .collect();
    let refused: Vec<String> = ids
        .iter()
        .filter(|id| !written.contains(*id))
        .cloned()
        .collect();
    let stored: std::collections::HashMap<String, i64> = if refused.is_empty() {
        std::collections::HashMap::new()
    } else {
        client
            .query(
                "SELECT session_id, revision FROM attachment_history WHERE session_id = ANY($1)",
                &[&refused],
            )
            .await
            .map_err(|e| target.driver_error("read failed", &e))?
            .into_iter()
            .map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1)))
            .collect()
    };
    Ok(rows
        .into_iter()
        .map(|row| {
            let row = row?;
            if written.contains(&row.session_id) {
                Ok(())
            } else {
                Err(StoreError::Stale {
                    stored: stored
                        .get(&row.session_id)
                        .map_or(0, |r| u64::try_from(*r).unwrap_or(0)),
                    attempted: row.revision,
                })
            }
        })
        .collect())
}

impl Store for PostgresStore {
    fn save(&self, history: &AttachmentHistory) -> Result<(), StoreError> {
        let row = Row::of(history)?;
        self.call(move |inner| async move {
            let guard = inner.client().await?;
            let client = guard.as_ref().ok_or_else(closed)?;
            // The batch statement with one row: one upsert path for both.
            let mut results = save_rows(client, &inner.target, vec![Ok(row)]).await?;
            results.pop().unwrap_or_else(|| Err(closed()))
        })
    }

    /// One statement for the batch: one round trip and one commit (one WAL
    /// flush) instead of one per session. A stale row is refused on its own;
    /// a failed statement fails the whole batch, and the next change retries it.
    fn save_batch(&self, histories: &[&AttachmentHistory]) -> Vec<Result<(), StoreError>> {
        let rows: Vec<Result<Row, StoreError>> = histories.iter().map(|h| Row::of(h)).collect();
        let count = rows.len();
        let outcome = self.call(move |inner| async move {
            let guard = inner.client().await?;
            let client = guard.as_ref().ok_or_else(closed)?;
            save_rows(client, &inner.target, rows).await
        });
        match outcome {
            Ok(results) => results,
            Err(err) => {
                let text = err.to_string();
                (0..count)
                    .map(|_| Err(StoreError::Backend(text.clone())))
                    .collect()
            }
        }
    }

    fn remove(&self, session_id: &str) -> Result<(), StoreError> {
        let session_id = session_id.to_owned();
        self.call(move |inner| async move {
            let guard = inner.client().await?;
            let client = guard.as_ref().ok_or_else(closed)?;
            client
                .query(
                    "WITH counts AS (
                         DELETE FROM telemetry_unparsed WHERE session_id = $1
                     ), gone AS (
                         DELETE FROM attachment_history WHERE session_id = $1 RETURNING session_id
                     )
                     SELECT pg_notify('tether_history', session_id) FROM gone",
                    &[&session_id],
                )
                .await
                .map_err(|e| inner.target.driver_error("delete failed", &e))?;
            Ok(())
        })
    }

    /// One statement: the rows summed by key, then added to what is kept.
    fn add_unparsed_telemetry(&self, rows: &[UnparsedTelemetry]) -> Result<(), StoreError> {
        let column = |f: fn(&UnparsedTelemetry) -> String| rows.iter().map(f).collect::<Vec<_>>();
        let sessions = column(|r| r.session_id.clone());
        let attempts = column(|r| r.attempt_id.clone());
        let kinds = column(|r| r.kind.clone());
        let attributes = column(|r| r.attribute.clone());
        let whys = column(|r| crate::why_word(r.why));
        let counts: Vec<i64> = rows
            .iter()
            .map(|r| i64::try_from(r.count).unwrap_or(i64::MAX))
            .collect();
        let last: Vec<i64> = rows
            .iter()
            .map(|r| i64::try_from(r.last_at.0).unwrap_or(i64::MAX))
            .collect();
        self.call(move |inner| async move {
            let guard = inner.client().await?;
            let client = guard.as_ref().ok_or_else(closed)?;
            client
                .execute(
                    "INSERT INTO telemetry_unparsed
                         (session_id, attempt_id, kind, attribute, why, count, last_at)
                     SELECT s, a, k, t, w, sum(c)::int8, max(l) FROM unnest(
                         $1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
                         $6::int8[], $7::int8[]) AS u(s, a, k, t, w, c, l)
                     GROUP BY s, a, k, t, w
                     ON CONFLICT (session_id, attempt_id, kind, attribute, why) DO UPDATE SET
                         count = telemetry_unparsed.count + EXCLUDED.count,
                         last_at = greatest(telemetry_unparsed.last_at, EXCLUDED.last_at)",
                    &[
                        &sessions,
                        &attempts,
                        &kinds,
                        &attributes,
                        &whys,
                        &counts,
                        &last,
                    ],
                )
                .await
                .map_err(|e| inner.target.driver_error("write failed", &e))?;
            Ok(())
        })
    }

    fn unparsed_telemetry(&self, session_id: &str) -> Result<Vec<UnparsedTelemetry>, StoreError> {
        let session_id = session_id.to_owned();
        self.call(move |inner| async move {
            let guard = inner.client().await?;
            let client = guard.as_ref().ok_or_else(closed)?;
            let rows = match client
                .query(
                    "SELECT attempt_id, kind, attribute, why, count, last_at
                     FROM telemetry_unparsed WHERE session_id = $1
                     ORDER BY attempt_id, kind, attribute, why",
                    &[&session_id],
                )
                .await
            {
                Ok(rows) => rows,
                Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) => {
                    return Ok(Vec::new());
                }
                Err(e) => return Err(inner.target.driver_error("read failed", &e)),
            };
            Ok(rows
                .iter()
                .filter_map(|row| {
                    crate::unparsed_row(
                        &session_id,
                        row.get(0),
                        row.get(1),
                        row.get(2),
                        row.get::<_, String>(3).as_str(),
                        row.get(4),
                        row.get(5),
                    )
                })
                .collect())
        })
    }

    fn tool_pins(&self, server: Option<&str>) -> Result<Vec<ToolPin>, StoreError> {
        let server = server.map(str::to_owned);
        self.call(move |inner| async move {
            let guard = inner.client().await?;
            let client = guard.as_ref().ok_or_else(closed)?;
            let rows = match client
                .query(
                    "SELECT server, tool, pinned, pinned_at, seen, seen_at FROM tool_pin
                     WHERE $1::text IS NULL OR server = $1 ORDER BY server, tool",
                    &[&server],
                )
                .await
            {
                Ok(rows) => rows,
                Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) => {
                    return Ok(Vec::new());
                }
                Err(e) => return Err(inner.target.driver_error("read failed", &e)),
            };
            let time = |t: Option<i64>| t.map(|t| Timestamp(u64::try_from(t).unwrap_or(0)));
            Ok(rows
                .iter()
                .map(|row| ToolPin {
                    server: row.get(0),
                    tool: row.get(1),
                    pinned: pin_hashes_of(row.get::<_, Option<String>>(2).as_deref()),
                    pinned_at: time(row.get(3)),
                    seen: pin_hashes_of(row.get::<_, Option<String>>(4).as_deref()),
                    seen_at: time(Some(row.get(5))).unwrap_or_default(),
                })
                .collect())
        })
    }

    /// One transaction: the server's rows deleted, then `pins` inserted in
    /// one statement.
    fn replace_tool_pins(&self, server: &str, pins: &[ToolPin]) -> Result<(), StoreError> {
        if let Some(other) = pins.iter().find(|p| p.server != server) {
            return Err(StoreError::Backend(format!(
                "a pin of {} given for {server}",
                other.server
            )));
        }
        let server = server.to_owned();
        let time = |t: Timestamp| i64::try_from(t.0).unwrap_or(i64::MAX);
        let tools: Vec<String> = pins.iter().map(|p| p.tool.clone()).collect();
        let pinned: Vec<Option<String>> = pins
            .iter()
            .map(|p| pin_hashes_text(p.pinned.as_ref()))
            .collect();
        let pinned_at: Vec<Option<i64>> = pins.iter().map(|p| p.pinned_at.map(time)).collect();
        let seen: Vec<Option<String>> = pins
            .iter()
            .map(|p| pin_hashes_text(p.seen.as_ref()))
            .collect();
        let seen_at: Vec<i64> = pins.iter().map(|p| time(p.seen_at)).collect();
        self.call(move |inner| async move {
            let mut guard = inner.client().await?;
            let client = guard.as_mut().ok_or_else(closed)?;
            let fail = |e| inner.target.driver_error("pin write failed", &e);
            let tx = client.transaction().await.map_err(fail)?;
            tx.execute("DELETE FROM tool_pin WHERE server = $1", &[&server])
                .await
                .map_err(fail)?;
            tx.execute(
                "INSERT INTO tool_pin (server, tool, pinned, pinned_at, seen, seen_at)
                 SELECT $1, * FROM unnest($2::text[], $3::text[], $4::int8[], $5::text[], $6::int8[])",
                &[&server, &tools, &pinned, &pinned_at, &seen, &seen_at],
            )
            .await
            .map_err(fail)?;
            tx.commit().await.map_err(fail)
        })
    }

    fn load(&self, session_id: &str) -> Result<Option<AttachmentHistory>, StoreError> {
        let session_id = session_id.to_owned();
        self.call(move |inner| async move {
            let guard = inner.client().await?;
            let client = guard.as_ref().ok_or_else(closed)?;
            let row = match client
                .query_opt(
                    "SELECT schema_version, document FROM attachment_history WHERE session_id = $1",
                    &[&session_id],
                )
                .await
            {
                Ok(row) => row,
                Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) => {
                    return Ok(None);
                }
                Err(e) => return Err(inner.target.driver_error("read failed", &e)),
            };
            let Some(row) = row else {
                return Ok(None);
            };
            let version: i32 = row.get(0);
            rehydrate_row(version, row.try_get::<_, String>(1))
                .map(Some)
                .map_err(|reason| StoreError::unreadable(&session_id, &reason))
        })
    }

    fn revisions(&self) -> Result<Vec<(String, u64)>, StoreError> {
        self.call(|inner| async move {
            let guard = inner.client().await?;
            let client = guard.as_ref().ok_or_else(closed)?;
            let rows = match client
                .query(
                    "SELECT session_id, revision FROM attachment_history ORDER BY session_id",
                    &[],
                )
                .await
            {
                Ok(rows) => rows,
                Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) => {
                    return Ok(Vec::new());
                }
                Err(e) => return Err(inner.target.driver_error("read failed", &e)),
            };
            Ok(rows
                .iter()
                .map(|row| {
                    let revision: i64 = row.get(1);
                    (row.get(0), u64::try_from(revision).unwrap_or(0))
                })
                .collect())
        })
    }

    fn load_all(&self) -> Result<Loaded, StoreError> {
        self.call(|inner| async move {
            let guard = inner.client().await?;
            let client = guard.as_ref().ok_or_else(closed)?;
            let rows = match client
                .query(
                    "SELECT session_id, schema_version, document FROM attachment_history ORDER BY session_id",
                    &[],
                )
                .await
            {
                Ok(rows) => rows,
                // A database nothing was ever written to.
                Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) => {
                    return Ok(Loaded::default());
                }
                Err(e) => return Err(inner.target.driver_error("read failed", &e)),
            };
            let mut loaded = Loaded::default();
            for row in rows {
                let version: i32 = row.get(1);
                loaded.push_row(row.get(0), rehydrate_row(version, row.try_get::<_, String>(2)));
            }
            Ok(loaded)
        })
    }
}

mod feed;
mod migrations;
mod target;
#[cfg(test)]
mod tests;

use feed::*;
pub use feed::{Change, ChangeFeed};
pub use migrations::POSTGRES_SCHEMA_VERSION;
use migrations::*;
#[cfg(test)]
use target::*;
pub use target::{PgTarget, is_postgres_url};
