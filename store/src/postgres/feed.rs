//! The change feed: a connection that said `LISTEN`, reconnected with
//! back-off, turned into [`Change`]s (session ids only).

use super::*;

/// The first reconnect waits this long; each failure doubles it.
pub(super) const FEED_BACKOFF_START: Duration = Duration::from_millis(250);
/// The longest wait between reconnects.
pub(super) const FEED_BACKOFF_MAX: Duration = Duration::from_secs(10);

pub(super) type FeedConnection =
    tokio_postgres::Connection<tokio_postgres::Socket, crate::pg_tls::PgTlsStream>;

/// A connection that has said `LISTEN`: its client (which must live as long
/// as the connection), the connection, its server process id, and any
/// notification that arrived while it was being set up.
pub(super) async fn connect_listening(
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
pub(super) enum Pumped {
    ConnectionLost,
    ReaderGone,
}

/// Hands each notification on until the connection ends or nobody reads.
pub(super) async fn pump(
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
    pub(super) changes: Receiver<Change>,
    pub(super) backend: Arc<AtomicI32>,
    pub(super) task: tokio::task::JoinHandle<()>,
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
