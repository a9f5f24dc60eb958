//! Byte-exact copying with a side copy for observation.
//!
//! Architecture invariant: the bytes are written on before anything looks at
//! them, exactly as read; the observer gets a copy through a bounded queue
//! with `try_send`, so a slow or gone observer drops (and counts) copies and
//! never holds the traffic back.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::observe::Direction;

/// One chunk for the observer.
pub type SideCopy = (Direction, Vec<u8>, Instant);

/// Copies `from` to `to` until `from` ends, then shuts `to` down. Returns
/// the bytes copied; a write error ends the copy (the peer is gone).
pub async fn pump<R, W>(
    mut from: R,
    mut to: W,
    direction: Direction,
    side: Option<mpsc::Sender<SideCopy>>,
    dropped: Arc<AtomicU64>,
) -> std::io::Result<u64>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    let mut side = side;
    loop {
        let n = from.read(&mut buf).await?;
        if n == 0 {
            let _ = to.shutdown().await;
            return Ok(total);
        }
        to.write_all(&buf[..n]).await?;
        to.flush().await?;
        total += n as u64;
        if let Some(tx) = &side {
            match tx.try_send((direction, buf[..n].to_vec(), Instant::now())) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(_)) => {
                    dropped.fetch_add(1, Ordering::Relaxed);
                }
                Err(mpsc::error::TrySendError::Closed(_)) => side = None,
            }
        }
    }
}
