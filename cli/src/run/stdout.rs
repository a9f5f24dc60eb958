//! What a harness prints on stdout, passed on byte for byte as it comes and
//! kept, so that its printed stream (Claude Code's `--output-format
//! stream-json`) is read as `tether check FILE` reads a saved one: the same
//! evidence, the same reader, the same verdict.
//!
//! Only where Tether's own stdout is no terminal (a pipe or a file, as in
//! CI): a harness on a terminal keeps it, since it may act otherwise when
//! it has none. The copy never waits on the reading: each chunk goes to
//! Tether's stdout first, then to a private file. When Tether's stdout is
//! closed, the harness's pipe is closed too, so it meets the closed pipe
//! as it would have.
//!
//! The kept bytes are the harness's output, prompts and answers among
//! them: they live in a folder only this user can open, for as long as
//! the records take to read, and are removed after ([`Printed`]'s drop).

use std::io::{Read as _, Write as _};
use std::os::fd::{AsRawFd as _, OwnedFd};
use std::path::PathBuf;
use std::sync::mpsc;

/// The name the kept output has: a record file's ending, as a saved run's.
const FILE_NAME: &str = "stdout.jsonl";
/// Bytes read from the harness at once.
const CHUNK: usize = 64 << 10;

/// Whether the harness's stdout is to be passed through Tether (and read):
/// not where it is a terminal.
pub(super) fn observed() -> bool {
    use std::io::IsTerminal as _;
    !std::io::stdout().is_terminal()
}

/// The copy of a harness's stdout under way.
pub(super) struct Copying {
    /// Closed when the harness exited: the copy then reads what is left
    /// in the pipe and says so.
    exited: OwnedFd,
    /// Said once everything the harness wrote before it exited is copied.
    drained: mpsc::Receiver<()>,
    printed: Option<Printed>,
}

/// The kept output: a private folder with one file, removed on drop.
pub(super) struct Printed {
    dir: PathBuf,
}

impl Printed {
    /// The file.
    pub(super) fn path(&self) -> PathBuf {
        self.dir.join(FILE_NAME)
    }

    /// A new private folder (mode 0700) and its file, opened to write.
    fn create() -> std::io::Result<(Printed, std::fs::File)> {
        use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir =
            std::env::temp_dir().join(format!("tether-run-{}-{nanos:09}", std::process::id()));
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        let printed = Printed { dir };
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(printed.path())?;
        Ok((printed, file))
    }
}

impl Drop for Printed {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Copying {
    /// Copies `from` (the harness's stdout) to Tether's stdout, and keeps
    /// it where a private file can be made (else passes it on only).
    pub(super) fn start(from: std::process::ChildStdout) -> std::io::Result<Copying> {
        let (exited_seen, exited) = std::io::pipe()?;
        let (printed, file) = match Printed::create() {
            Ok((printed, file)) => (Some(printed), Some(file)),
            Err(err) => {
                tracing::debug!(%err, "the harness's stdout is passed on, not kept");
                (None, None)
            }
        };
        let (said, drained) = mpsc::channel();
        std::thread::Builder::new()
            .name("harness stdout".into())
            .spawn(move || copy(from, &OwnedFd::from(exited_seen), file, &said))?;
        Ok(Copying {
            exited: OwnedFd::from(exited),
            drained,
            printed,
        })
    }

    /// Once the harness exited: waits until what it wrote is copied (a
    /// process it left holding the pipe is still passed on, not waited
    /// for), and gives the kept output.
    pub(super) fn finish(self) -> Option<Printed> {
        drop(self.exited);
        let _ = self.drained.recv();
        self.printed
    }
}

/// What one wait on the pipe gave.
enum Ready {
    Bytes,
    /// The harness exited (the other end of `exited` closed).
    Exited,
    /// Nothing to read now (only when not waiting).
    Empty,
}

/// Waits until `from` has bytes (or its end), or `exited` is closed;
/// without waiting when `now`.
fn ready(from: i32, exited: Option<i32>, now: bool) -> std::io::Result<Ready> {
    let mut fds = [
        libc::pollfd {
            fd: from,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: exited.unwrap_or(-1),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    loop {
        // SAFETY: poll(2) on two pollfds we own for its duration.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, if now { 0 } else { -1 }) };
        if n >= 0 {
            break;
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
    Ok(if fds[0].revents != 0 {
        Ready::Bytes
    } else if fds[1].revents != 0 {
        Ready::Exited
    } else {
        Ready::Empty
    })
}

/// The copy: each chunk to Tether's stdout, then to `file` (while it
/// takes them, within the bound a session file has). `drained` is said
/// once the harness exited and the pipe held nothing more, or at its end.
fn copy(
    mut from: std::process::ChildStdout,
    exited: &OwnedFd,
    mut file: Option<std::fs::File>,
    drained: &mpsc::Sender<()>,
) {
    let fd = from.as_raw_fd();
    let mut buf = vec![0u8; CHUNK];
    let mut kept: u64 = 0;
    // The harness runs; it exited (what is left is read without waiting);
    // what it wrote is all copied (only a process it left still writes).
    let mut exited_fd = Some(exited.as_raw_fd());
    let mut after_exit = false;
    loop {
        if exited_fd.is_some() || after_exit {
            match ready(fd, exited_fd, after_exit) {
                Ok(Ready::Bytes) => {}
                Ok(Ready::Exited) => {
                    exited_fd = None;
                    after_exit = true;
                    continue;
                }
                Ok(Ready::Empty) => {
                    after_exit = false;
                    let _ = drained.send(());
                    continue;
                }
                Err(err) => {
                    tracing::debug!(%err, "cannot wait on the harness's stdout");
                    exited_fd = None;
                    after_exit = false;
                }
            }
        }
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let chunk = &buf[..n];
        let mut out = std::io::stdout().lock();
        if out.write_all(chunk).and_then(|()| out.flush()).is_err() {
            // Tether's stdout is closed: the harness's pipe closes too
            // (`from` dropped), so it meets the closed pipe itself.
            break;
        }
        kept += n as u64;
        if kept > tether_records::read::MAX_FILE_BYTES
            || file.as_mut().is_some_and(|f| f.write_all(chunk).is_err())
        {
            file = None;
        }
    }
    drop(from);
    let _ = drained.send(());
}
