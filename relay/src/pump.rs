//! Byte-exact copying with a side copy for observation.
//!
//! Each direction is one thread doing blocking reads and writes on plain
//! file descriptors: no async hand-off in the data path, so the relay adds
//! as little as a copy can.
//!
//! Its invariants are written once, in ARCHITECTURE.md (`relay/`), each
//! with the test that checks it.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use tokio::sync::mpsc;

use crate::frames::Direction;

/// One chunk for the observer.
pub type SideCopy = (Direction, Vec<u8>, Instant);

/// Copies `from` to `to` until `from` ends (or `to` is gone), flushing
/// after every chunk. Returns the bytes copied.
pub fn pump(
    mut from: impl Read,
    mut to: impl Write,
    direction: Direction,
    side: Option<mpsc::Sender<SideCopy>>,
    dropped: &AtomicU64,
) -> std::io::Result<u64> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    let mut side = side;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        // When the bytes were read: the copies of the two directions reach
        // the observer in whatever order their threads get to it.
        let read_at = Instant::now();
        to.write_all(&buf[..n])?;
        to.flush()?;
        total += n as u64;
        if let Some(tx) = &side {
            match tx.try_send((direction, buf[..n].to_vec(), read_at)) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(_)) => {
                    dropped.fetch_add(1, Ordering::Relaxed);
                }
                Err(mpsc::error::TrySendError::Closed(_)) => side = None,
            }
        }
    }
}

/// A pipe end the async runtime set non-blocking, as a blocking file.
pub fn blocking_file(fd: OwnedFd) -> std::io::Result<std::fs::File> {
    let raw = fd.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function owns, with integer
    // arguments only; no memory is passed.
    let flags = unsafe { libc::fcntl(raw, libc::F_GETFL) };
    if flags < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(raw, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(std::fs::File::from(fd))
}

/// Runs [`pump`] on a thread of its own; the receiver fires when it ends.
pub fn spawn_pump(
    name: &str,
    from: impl Read + Send + 'static,
    to: impl Write + Send + 'static,
    direction: Direction,
    side: Option<mpsc::Sender<SideCopy>>,
    dropped: Arc<AtomicU64>,
) -> std::io::Result<tokio::sync::oneshot::Receiver<()>> {
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            let _ = pump(from, to, direction, side, &dropped);
            // `to` is dropped here: the far side sees end of file.
            let _ = done_tx.send(());
        })?;
    Ok(done_rx)
}
