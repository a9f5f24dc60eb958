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
use tether_core::sanitize::Scrubber;
use tether_core::store::{Loaded, Store, StoreError, rehydrate_row};
use tokio::sync::Mutex;
use tokio_postgres::config::Host;
use tokio_postgres::{AsyncMessage, Client, Config};

use crate::pg_tls::{PgTls, SslMode, take_tls_settings};

/// The channel every change is announced on.
pub const NOTIFY_CHANNEL: &str = "tether_history";

/// The newest database schema this build knows.
pub const POSTGRES_SCHEMA_VERSION: i32 = 2;

/// Forward-only migrations: (version, SQL). Each runs once, in order.
const MIGRATIONS: &[(i32, &str)] = &[
    (
        1,
        "CREATE TABLE IF NOT EXISTS attachment_history (
             session_id TEXT PRIMARY KEY,
             task_id TEXT NOT NULL,
             schema_version INTEGER NOT NULL,
             document TEXT NOT NULL,
             updated_at BIGINT NOT NULL,
             revision BIGINT NOT NULL DEFAULT 0
         )",
    ),
    // Documents are ≈ 20 KiB of JSON, rewritten whole on every change:
    // lz4 compresses them several times faster than the default pglz. A
    // server without lz4 (before 14, or built without it) keeps pglz.
    (
        2,
        "DO $$
         BEGIN
             EXECUTE 'ALTER TABLE attachment_history ALTER COLUMN document SET COMPRESSION lz4';
         EXCEPTION WHEN OTHERS THEN
             RAISE NOTICE 'lz4 is not available here; documents keep the default compression';
         END $$",
    ),
];

/// Bound on one store call, connecting included.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Where and how to connect, resolved from a connection string and the `PG*`
/// environment. Holds the password; never printed.
#[derive(Clone)]
pub struct PgTarget {
    config: Config,
    tls: PgTls,
    shown: String,
    scrubber: Scrubber,
}

impl std::fmt::Debug for PgTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

impl std::fmt::Display for PgTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

/// Whether `spec` names a PostgreSQL database (`postgres://…`, `postgresql://…`).
pub fn is_postgres_url(spec: &str) -> bool {
    spec.starts_with("postgres://") || spec.starts_with("postgresql://")
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

impl PgTarget {
    /// Resolves `spec` (a `postgres://` URL or `key=value` string; empty for
    /// the environment alone). Values the string leaves out come from
    /// `PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE`, `PGPASSWORD`, then the
    /// password file (`PGPASSFILE`, else `~/.pgpass`).
    ///
    /// Also from the environment, as libpq reads them: `PGCONNECT_TIMEOUT`
    /// (else 10 s), `PGAPPNAME` (else `tether`; a string's
    /// `application_name` wins, so each host can name itself in
    /// `pg_stat_activity`), `PGOPTIONS` (say `-c search_path=tether`),
    /// `PGTARGETSESSIONATTRS` (`read-write` to skip a standby), and the TLS
    /// variables (`PGSSLMODE`, `PGSSLROOTCERT`, `PGSSLCERT`, `PGSSLKEY`).
    pub fn resolve(spec: &str) -> Result<PgTarget, StoreError> {
        Self::resolve_with(spec, &env)
    }

    fn resolve_with(
        spec: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<PgTarget, StoreError> {
        let mut secrets: Vec<String> = Vec::new();
        if !spec.is_empty() {
            secrets.push(spec.to_owned());
        }
        // The TLS keys (`sslrootcert`, `verify-full`, …) are ours; the driver would refuse them.
        let (driver_spec, tls_settings) = take_tls_settings(spec)?;
        let tls_settings = tls_settings.with_env(env);
        let mut config = if driver_spec.is_empty() {
            Config::new()
        } else {
            Config::from_str(&driver_spec).map_err(|_| {
                StoreError::Backend(
                    "not a PostgreSQL connection string (postgres://user@host:port/db)".into(),
                )
            })?
        };
        if config.get_hosts().is_empty() {
            let host = env("PGHOST").unwrap_or_else(|| "/var/run/postgresql".into());
            for h in host.split(',') {
                if h.starts_with('/') {
                    config.host_path(h);
                } else {
                    config.host(h);
                }
            }
        }
        if config.get_ports().is_empty()
            && let Some(port) = env("PGPORT").and_then(|p| p.parse::<u16>().ok())
        {
            config.port(port);
        }
        if config.get_user().is_none() {
            let user = env("PGUSER")
                .or_else(|| env("USER"))
                .unwrap_or_else(|| "postgres".into());
            config.user(&user);
        }
        if config.get_dbname().is_none()
            && let Some(db) = env("PGDATABASE")
        {
            config.dbname(&db);
        }
        if config.get_password().is_none() {
            if let Some(password) = env("PGPASSWORD") {
                config.password(&password);
            } else if let Some(password) = password_from_file(&config, env) {
                config.password(&password);
            }
        }
        if let Some(password) = config.get_password() {
            secrets.push(String::from_utf8_lossy(password).into_owned());
        }
        if config.get_connect_timeout().is_none() {
            let seconds = env("PGCONNECT_TIMEOUT")
                .and_then(|t| t.trim().parse::<u64>().ok())
                .filter(|t| *t > 0)
                .unwrap_or(10);
            config.connect_timeout(Duration::from_secs(seconds));
        }
        if config.get_application_name().is_none() {
            config.application_name(env("PGAPPNAME").unwrap_or_else(|| "tether".into()));
        }
        if config.get_options().is_none()
            && let Some(options) = env("PGOPTIONS")
        {
            config.options(&options);
        }
        if let Some(attrs) = env("PGTARGETSESSIONATTRS")
            && !driver_spec.contains("target_session_attrs")
        {
            use tokio_postgres::config::TargetSessionAttrs;
            config.target_session_attrs(match attrs.as_str() {
                "read-write" => TargetSessionAttrs::ReadWrite,
                "read-only" => TargetSessionAttrs::ReadOnly,
                "any" => TargetSessionAttrs::Any,
                _ => {
                    return Err(StoreError::Backend(
                        "PGTARGETSESSIONATTRS must be any, read-write or read-only".into(),
                    ));
                }
            });
        }
        let home = env("HOME").map(std::path::PathBuf::from);
        let tls = PgTls::resolve(&tls_settings, home.as_deref(), only_unix_sockets(&config))?;
        config.ssl_mode(tls.mode().driver());
        let host = match config.get_hosts().first() {
            Some(Host::Tcp(h)) => h.clone(),
            Some(Host::Unix(p)) => format!("[{}]", p.display()),
            None => "?".into(),
        };
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let db = config
            .get_dbname()
            .or(config.get_user())
            .unwrap_or("postgres")
            .to_owned();
        let shown = tether_core::sanitize::cap_with_ellipsis(
            &format!("postgres://{host}:{port}/{db}"),
            200,
        );
        Ok(PgTarget {
            config,
            tls,
            shown,
            scrubber: Scrubber::new().with_secrets(secrets),
        })
    }

    /// Opens one connection. With `sslmode=prefer` (or `allow`) a failed TLS
    /// handshake is followed by a plain attempt, as libpq does; every other
    /// mode fails instead.
    async fn connect(&self) -> Result<(Client, FeedConnection), tokio_postgres::Error> {
        match self.config.connect(self.tls.clone()).await {
            Err(err) if self.tls.mode() == SslMode::Prefer && is_tls_handshake_failure(&err) => {
                tracing::warn!(
                    target = %self.shown,
                    "the TLS handshake failed with sslmode=prefer; connecting without TLS, as libpq does"
                );
                let mut plain = self.config.clone();
                plain.ssl_mode(tokio_postgres::config::SslMode::Disable);
                plain.connect(self.tls.clone()).await
            }
            other => other,
        }
    }

    /// The TLS mode in force (`disable` on a Unix socket, whatever was asked).
    pub fn ssl_mode(&self) -> SslMode {
        self.tls.mode()
    }

    fn only_unix_sockets(&self) -> bool {
        only_unix_sockets(&self.config)
    }

    fn error(&self, what: &str, err: impl std::fmt::Display) -> StoreError {
        StoreError::Backend(format!(
            "{what} ({}): {}",
            self.shown,
            self.scrubber.summary(&err.to_string())
        ))
    }

    /// A driver error with its causes ("error connecting to server: Connection refused").
    fn driver_error(&self, what: &str, err: &tokio_postgres::Error) -> StoreError {
        let mut text = err.to_string();
        let mut source = std::error::Error::source(err);
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        if text.contains("UnknownIssuer") {
            text.push_str(
                " (no root in sslrootcert signed the server's certificate; give the root that did)",
            );
        }
        self.error(what, text)
    }
}

/// Whether the driver failed in the TLS handshake itself (after the server
/// agreed to TLS), as opposed to the network or authentication.
fn is_tls_handshake_failure(err: &tokio_postgres::Error) -> bool {
    err.to_string()
        .starts_with("error performing TLS handshake")
}

/// libpq never uses TLS on a Unix socket.
fn only_unix_sockets(config: &Config) -> bool {
    config
        .get_hosts()
        .iter()
        .all(|h| matches!(h, Host::Unix(_)))
}

/// The password for `config` from a libpq password file
/// (`hostname:port:database:username:password`, `*` matches anything).
fn password_from_file(config: &Config, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let path = env("PGPASSFILE")
        .map(std::path::PathBuf::from)
        .or_else(|| env("HOME").map(|home| std::path::Path::new(&home).join(".pgpass")))?;
    let text = std::fs::read_to_string(path).ok()?;
    let host = match config.get_hosts().first()? {
        Host::Tcp(h) => h.clone(),
        Host::Unix(_) => "localhost".into(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let db = config.get_dbname().unwrap_or("").to_owned();
    let user = config.get_user().unwrap_or("").to_owned();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split_pgpass(line);
        if fields.len() != 5 {
            continue;
        }
        let matches = |field: &str, value: &str| field == "*" || field == value;
        if matches(&fields[0], &host)
            && matches(&fields[1], &port)
            && matches(&fields[2], &db)
            && matches(&fields[3], &user)
        {
            return Some(fields[4].clone());
        }
    }
    None
}

/// Splits a `.pgpass` line on unescaped colons (`\:` and `\\` are escapes).
fn split_pgpass(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next()
                    && let Some(last) = fields.last_mut()
                {
                    last.push(next);
                }
            }
            ':' => fields.push(String::new()),
            c => {
                if let Some(last) = fields.last_mut() {
                    last.push(c);
                }
            }
        }
    }
    fields
}

struct Inner {
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

/// The first reconnect waits this long; each failure doubles it.
const FEED_BACKOFF_START: Duration = Duration::from_millis(250);
/// The longest wait between reconnects.
const FEED_BACKOFF_MAX: Duration = Duration::from_secs(10);

type FeedConnection =
    tokio_postgres::Connection<tokio_postgres::Socket, crate::pg_tls::PgTlsStream>;

/// A connection that has said `LISTEN`: its client (which must live as long
/// as the connection), the connection, its server process id, and any
/// notification that arrived while it was being set up.
async fn connect_listening(
    target: &PgTarget,
) -> Result<(Client, FeedConnection, i32, Vec<String>), StoreError> {
    let (client, mut connection) = target
        .connect()
        .await
        .map_err(|e| target.driver_error("cannot connect", &e))?;
    // The connection must be polled for LISTEN to complete; the borrow of
    // `client` ends with this block.
    let mut early = Vec::new();
    let pid = {
        let listen = async {
            client
                .batch_execute(&format!("LISTEN {NOTIFY_CHANNEL}"))
                .await
                .map_err(|e| target.driver_error("LISTEN failed", &e))?;
            client
                .query_one("SELECT pg_backend_pid()", &[])
                .await
                .map(|row| row.get::<_, i32>(0))
                .map_err(|e| target.driver_error("LISTEN failed", &e))
        };
        let mut listen = std::pin::pin!(listen);
        loop {
            tokio::select! {
                result = &mut listen => break result?,
                message = std::future::poll_fn(|cx| connection.poll_message(cx)) => match message {
                    None => return Err(target.error("connection closed", "before LISTEN")),
                    Some(Ok(AsyncMessage::Notification(n))) if n.channel() == NOTIFY_CHANNEL => {
                        early.push(n.payload().to_owned());
                    }
                    Some(_) => {}
                }
            }
        }
    };
    Ok((client, connection, pid, early))
}

#[derive(Debug, PartialEq, Eq)]
enum Pumped {
    ConnectionLost,
    ReaderGone,
}

/// Hands each notification on until the connection ends or nobody reads.
async fn pump(
    connection: &mut FeedConnection,
    changes: &std::sync::mpsc::Sender<Change>,
) -> Pumped {
    while let Some(message) = std::future::poll_fn(|cx| connection.poll_message(cx)).await {
        match message {
            Ok(AsyncMessage::Notification(n)) if n.channel() == NOTIFY_CHANNEL => {
                if changes
                    .send(Change::Session(n.payload().to_owned()))
                    .is_err()
                {
                    return Pumped::ReaderGone;
                }
            }
            Ok(_) => {}
            Err(err) => {
                tracing::debug!(%err, "the PostgreSQL change feed's connection ended");
                break;
            }
        }
    }
    Pumped::ConnectionLost
}

/// What the change feed says (see [`PostgresStore::listen`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Some process wrote or removed this session.
    Session(String),
    /// The feed's connection was lost and is back: notifications may have
    /// been missed meanwhile, so a reader reads again what it shows.
    Resync,
}

/// Changes as other processes make them (see [`PostgresStore::listen`]).
pub struct ChangeFeed {
    changes: Receiver<Change>,
    backend: Arc<AtomicI32>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for ChangeFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ChangeFeed")
    }
}

impl ChangeFeed {
    /// The next change, waiting at most `timeout`; `Ok(None)` on timeout
    /// (also while the feed reconnects). `Err` only once the feed has
    /// stopped for good (its store was shut down).
    pub fn next(&self, timeout: Duration) -> Result<Option<Change>, StoreError> {
        match self.changes.recv_timeout(timeout) {
            Ok(change) => Ok(Some(change)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(StoreError::Backend(
                "the PostgreSQL change feed stopped".into(),
            )),
        }
    }

    /// The feed as a wake-up for a reader that follows the store (the
    /// shape of `tether_store::ChangeHint`): waits at most the given time and
    /// says whether anything changed (a session, or a resync). A feed that
    /// stopped for good sleeps out the wait and says no, so the reader
    /// falls back to its own polling, never a busy loop.
    ///
    /// A host's own view of the whole fleet:
    /// `StatusService::for_store(StoreSource::follow(Arc::new(reader), Some(Box::new(feed.into_wakeups())))?)`.
    pub fn into_wakeups(self) -> impl FnMut(Duration) -> bool + Send + 'static {
        move |timeout| match self.next(timeout) {
            Ok(Some(_)) => true,
            Ok(None) => false,
            Err(_) => {
                std::thread::sleep(timeout);
                false
            }
        }
    }

    /// The server process of the feed's `LISTEN` connection
    /// (`pg_stat_activity.pid`); `None` while it reconnects.
    pub fn backend_pid(&self) -> Option<i32> {
        Some(self.backend.load(Ordering::Relaxed)).filter(|pid| *pid != 0)
    }
}

impl Drop for ChangeFeed {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn closed() -> StoreError {
    StoreError::Backend("the PostgreSQL connection is closed".into())
}

async fn migrate(inner: &Inner) -> Result<(), StoreError> {
    let mut guard = inner.client().await?;
    let client = guard.as_mut().ok_or_else(closed)?;
    let fail = |e| inner.target.driver_error("migration failed", &e);
    let tx = client.transaction().await.map_err(fail)?;
    // One migrator at a time across every host sharing the database.
    tx.batch_execute(
        "SELECT pg_advisory_xact_lock(7421596302);
         CREATE TABLE IF NOT EXISTS tether_schema_migrations (
             version INTEGER PRIMARY KEY,
             applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
         );",
    )
    .await
    .map_err(fail)?;
    let found: i32 = tx
        .query_one(
            "SELECT COALESCE(MAX(version), 0) FROM tether_schema_migrations",
            &[],
        )
        .await
        .map_err(fail)?
        .get(0);
    if found > POSTGRES_SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            found: u32::try_from(found).unwrap_or(u32::MAX),
            known: POSTGRES_SCHEMA_VERSION as u32,
        });
    }
    for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > found) {
        tx.batch_execute(sql).await.map_err(fail)?;
        tx.execute(
            "INSERT INTO tether_schema_migrations (version) VALUES ($1)",
            &[version],
        )
        .await
        .map_err(fail)?;
    }
    tx.commit().await.map_err(fail)
}

/// A history ready to write: its document and keys, owned (it crosses into
/// the store's runtime).
struct Row {
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
                    "WITH gone AS (
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake server on 127.0.0.1: the first connection agrees to TLS
    /// (`S`) and then hangs up mid-handshake; any later one answers the
    /// plain startup message with a FATAL error naming itself. Returns the
    /// port and how many connections it saw.
    fn tls_breaking_server() -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let seen = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming().take(4) {
                let Ok(mut stream) = stream else { return };
                let n = counter.fetch_add(1, Ordering::SeqCst);
                let mut length = [0u8; 4];
                if stream.read_exact(&mut length).is_err() {
                    continue;
                }
                let mut rest = vec![0u8; (u32::from_be_bytes(length) as usize).saturating_sub(4)];
                let _ = stream.read_exact(&mut rest);
                if n == 0 {
                    // SSLRequest: yes, then no TLS at all.
                    let _ = stream.write_all(b"S");
                } else {
                    let mut fields = Vec::new();
                    for (code, text) in [
                        (b'S', "FATAL"),
                        (b'C', "28000"),
                        (b'M', "plain attempt reached"),
                    ] {
                        fields.push(code);
                        fields.extend_from_slice(text.as_bytes());
                        fields.push(0);
                    }
                    fields.push(0);
                    let mut message = vec![b'E'];
                    message.extend_from_slice(&(fields.len() as u32 + 4).to_be_bytes());
                    message.extend_from_slice(&fields);
                    let _ = stream.write_all(&message);
                }
            }
        });
        (port, seen)
    }

    #[test]
    fn libpq_environment_variables_fill_what_the_string_leaves_out() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        let env = vars(&[
            ("PGCONNECT_TIMEOUT", "3"),
            ("PGAPPNAME", "host-42"),
            ("PGOPTIONS", "-c search_path=tether"),
            ("PGTARGETSESSIONATTRS", "read-write"),
        ]);
        let t = PgTarget::resolve_with("postgres://u@db/fleet", &env).expect("resolve");
        assert_eq!(
            t.config.get_connect_timeout(),
            Some(&Duration::from_secs(3))
        );
        assert_eq!(t.config.get_application_name(), Some("host-42"));
        assert_eq!(t.config.get_options(), Some("-c search_path=tether"));
        assert_eq!(
            t.config.get_target_session_attrs(),
            tokio_postgres::config::TargetSessionAttrs::ReadWrite
        );
        // The string wins over the environment.
        let t = PgTarget::resolve_with(
            "postgres://u@db/fleet?application_name=mine&connect_timeout=7",
            &env,
        )
        .expect("resolve");
        assert_eq!(t.config.get_application_name(), Some("mine"));
        assert_eq!(
            t.config.get_connect_timeout(),
            Some(&Duration::from_secs(7))
        );
        // Nothing set: tether, 10 s.
        let none = |_: &str| None;
        let t = PgTarget::resolve_with("postgres://u@db/fleet", &none).expect("resolve");
        assert_eq!(t.config.get_application_name(), Some("tether"));
        assert_eq!(
            t.config.get_connect_timeout(),
            Some(&Duration::from_secs(10))
        );
        let bad = vars(&[("PGTARGETSESSIONATTRS", "primary-ish")]);
        assert!(PgTarget::resolve_with("postgres://u@db/fleet", &bad).is_err());
    }

    #[test]
    fn prefer_falls_back_to_plain_when_the_tls_handshake_fails_and_require_does_not() {
        let (port, seen) = tls_breaking_server();
        let spec = format!("postgres://u:pw@127.0.0.1:{port}/db?sslmode=prefer&connect_timeout=5");
        let err = PostgresStore::connect(&spec).expect_err("the fake refuses everyone");
        assert!(
            err.to_string().contains("plain attempt reached"),
            "a plain attempt followed the failed handshake: {err}"
        );
        assert_eq!(seen.load(Ordering::SeqCst), 2);

        let (port, seen) = tls_breaking_server();
        let spec = format!("postgres://u:pw@127.0.0.1:{port}/db?sslmode=require&connect_timeout=5");
        let err = PostgresStore::connect(&spec).expect_err("TLS is required");
        assert!(err.to_string().contains("TLS handshake"), "{err}");
        assert_eq!(seen.load(Ordering::SeqCst), 1, "no plain attempt");
        assert!(!format!("{err:?}").contains(":pw@"));
    }

    #[test]
    fn pgpass_lines_split_on_unescaped_colons() {
        assert_eq!(
            split_pgpass(r"host:5432:db:user:pa\:ss\\word"),
            vec!["host", "5432", "db", "user", r"pa:ss\word"]
        );
    }

    #[test]
    fn a_resolved_target_never_shows_its_password() {
        let target = PgTarget::resolve(
            "postgres://alice:sk-pg-planted@db.internal:6543/fleet?sslmode=disable",
        )
        .expect("resolve");
        let shown = format!("{target} {target:?}");
        assert_eq!(target.to_string(), "postgres://db.internal:6543/fleet");
        assert!(!shown.contains("sk-pg-planted"), "{shown}");
        assert!(!shown.contains("alice"), "{shown}");
        let err = target.error(
            "cannot connect",
            "password authentication failed: sk-pg-planted",
        );
        assert!(!err.to_string().contains("sk-pg-planted"), "{err}");
    }

    #[test]
    fn a_malformed_string_is_refused_without_echoing_it() {
        let err =
            PgTarget::resolve("postgres://u:sk-pg-bad@host:notaport/db").expect_err("malformed");
        assert!(!err.to_string().contains("sk-pg-bad"), "{err}");
    }
}
