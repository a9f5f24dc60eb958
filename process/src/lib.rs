//! tether-process: the child processes Tether starts (agents under a probe,
//! stdio MCP servers under an endpoint check), each in its own process group,
//! with the environment given explicitly, stderr kept as a bounded tail, and
//! the whole group killed at the end (grandchildren included).
//!
//! Its modules: [`materialize`] (a passthrough plugin's files written where its
//! CLI reads them, each created new with mode 0600) and [`sweep`] (finding and
//! killing every descendant of a child, wherever it went).
//!
//! Its invariants are written once, in ARCHITECTURE.md (`process/`), each
//! with the test that checks it.

#![warn(missing_docs)]

pub mod materialize;
pub mod sweep;

pub use materialize::WrittenFiles;
pub use sweep::{GROUP_MARKER_ENV, become_subreaper};

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use process_wrap::tokio::{ChildWrapper, CommandWrap, KillOnDrop, ProcessGroup};
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{ChildStdin, ChildStdout};

/// Recent output keeps the smaller of this many lines…
pub const TAIL_MAX_LINES: usize = 50;
/// …or this many bytes.
pub const TAIL_MAX_BYTES: usize = 16 * 1024;
/// A single line longer than this is cut.
const LINE_MAX_BYTES: usize = 2048;

/// A bounded tail of a stream's recent lines. Never persisted.
#[derive(Debug, Default)]
pub struct OutputTail {
    lines: VecDeque<String>,
    bytes: usize,
    dropped: u64,
}

impl OutputTail {
    /// Appends one line, evicting the oldest beyond the bounds.
    pub fn push(&mut self, line: &str) {
        let line = tether_core::sanitize::cap_with_ellipsis(line.trim_end(), LINE_MAX_BYTES);
        self.bytes += line.len();
        self.lines.push_back(line);
        while self.lines.len() > TAIL_MAX_LINES || self.bytes > TAIL_MAX_BYTES {
            if let Some(old) = self.lines.pop_front() {
                self.bytes -= old.len();
                self.dropped += 1;
            }
        }
    }

    /// The kept lines, oldest first.
    pub fn lines(&self) -> Vec<String> {
        self.lines.iter().cloned().collect()
    }

    /// How many older lines were evicted.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

/// Reads a stream line by line into a shared tail until it ends.
pub fn collect_tail(stream: impl AsyncRead + Unpin + Send + 'static, tail: Arc<Mutex<OutputTail>>) {
    tokio::spawn(async move {
        let mut reader = BufReader::new(stream);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            // Bounded read: a line without a newline is cut at the limit.
            match (&mut reader)
                .take(LINE_MAX_BYTES as u64 * 4)
                .read_until(b'\n', &mut buf)
                .await
            {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    let line = String::from_utf8_lossy(&buf);
                    tail.lock().unwrap_or_else(|p| p.into_inner()).push(&line);
                }
            }
        }
    });
}

use tokio::io::AsyncReadExt as _;

/// What to run, and with what environment.
#[derive(Clone)]
pub struct ChildSpec {
    /// The program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Environment variables set for it.
    pub env: Vec<(String, String)>,
    /// Whether it also inherits this process's environment.
    pub inherit_env: bool,
    /// Its working directory.
    pub cwd: PathBuf,
}

impl std::fmt::Debug for ChildSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Arguments and env values may carry secrets: only their number and names.
        f.debug_struct("ChildSpec")
            .field(
                "program",
                &tether_core::sanitize::command_target(&self.program),
            )
            .field("args", &self.args.len())
            .field(
                "env",
                &self.env.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            )
            .field("inherit_env", &self.inherit_env)
            .finish_non_exhaustive()
    }
}

/// Why a child could not start.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// The program does not exist or is not executable.
    #[error("cannot run {program}: command not found")]
    NotFound {
        /// The program's basename.
        program: String,
    },
    /// Any other spawn failure.
    #[error("cannot run {program}: {source}")]
    Other {
        /// The program's basename.
        program: String,
        /// Why.
        source: std::io::Error,
    },
}

impl SpawnError {
    /// The stable reason a report gives for it.
    pub fn reason_code(&self) -> tether_core::vocab::ReasonCode {
        match self {
            SpawnError::NotFound { .. } => tether_core::vocab::ReasonCode::CommandNotFound,
            SpawnError::Other { .. } => tether_core::vocab::ReasonCode::ProcessStartFailed,
        }
    }
}

/// A running child (an agent or an MCP server) in its own process group.
pub struct ChildGroup {
    child: Box<dyn ChildWrapper>,
    stderr: Arc<Mutex<OutputTail>>,
    exit: Option<ExitStatus>,
    /// The leader's pid, kept after it is reaped (the sweep needs it).
    pid: Option<u32>,
    /// The environment mark every descendant inherits.
    marker: String,
    swept: bool,
}

impl std::fmt::Debug for ChildGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildGroup")
            .field("pid", &self.child.id())
            .field("exit", &self.exit)
            .finish_non_exhaustive()
    }
}

impl ChildGroup {
    /// Spawns the child with piped stdio; returns its stdin and stdout.
    pub fn spawn(cmd: &ChildSpec) -> Result<(Self, ChildStdin, ChildStdout), SpawnError> {
        Self::spawn_with(cmd, false)
    }

    /// [`spawn`](Self::spawn), but the child writes its stderr straight to
    /// ours (a relay, whose caller must see the server's own stderr); the
    /// tail then stays empty.
    pub fn spawn_passing_stderr(
        cmd: &ChildSpec,
    ) -> Result<(Self, ChildStdin, ChildStdout), SpawnError> {
        Self::spawn_with(cmd, true)
    }

    fn spawn_with(
        cmd: &ChildSpec,
        pass_stderr: bool,
    ) -> Result<(Self, ChildStdin, ChildStdout), SpawnError> {
        let program = tether_core::sanitize::command_target(&cmd.program);
        let marker = sweep::new_marker();
        let mut wrap = CommandWrap::with_new(&cmd.program, |c| {
            c.args(&cmd.args)
                .current_dir(&cmd.cwd)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(if pass_stderr {
                    Stdio::inherit()
                } else {
                    Stdio::piped()
                });
            if !cmd.inherit_env {
                c.env_clear();
            }
            c.envs(cmd.env.iter().map(|(k, v)| (k, v)));
            c.env(GROUP_MARKER_ENV, &marker);
        });
        wrap.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
        let mut child = wrap.spawn().map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => SpawnError::NotFound {
                program: program.clone(),
            },
            _ => SpawnError::Other {
                program: program.clone(),
                source,
            },
        })?;
        let pid = child.id();
        let stdin = child.stdin().take();
        let stdout = child.stdout().take();
        let stderr = child.stderr().take();
        let tail = Arc::new(Mutex::new(OutputTail::default()));
        if let Some(stderr) = stderr {
            collect_tail(stderr, Arc::clone(&tail));
        }
        match (stdin, stdout) {
            (Some(stdin), Some(stdout)) => Ok((
                ChildGroup {
                    child,
                    stderr: tail,
                    exit: None,
                    pid,
                    marker,
                    swept: false,
                },
                stdin,
                stdout,
            )),
            _ => Err(SpawnError::Other {
                program,
                source: std::io::Error::other("stdio was not piped"),
            }),
        }
    }

    /// The process id of the group leader.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// The recent stderr lines (bounded; never persisted).
    pub fn stderr_tail(&self) -> Arc<Mutex<OutputTail>> {
        Arc::clone(&self.stderr)
    }

    /// The exit status, if the child has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        if self.exit.is_none() {
            self.exit = self.child.try_wait().ok().flatten();
        }
        self.exit
    }

    /// Kills the child with every descendant (its process group, and those
    /// that left it) and reaps it, within a bound.
    pub async fn kill_group(&mut self) -> Option<ExitStatus> {
        if let Err(err) = self.child.start_kill() {
            tracing::debug!(%err, "killing the child's process group");
        }
        // The leader's pid names the group only while it is not reaped.
        let root = self.pid.filter(|_| self.exit.is_none());
        let marker = self.marker.clone();
        let killed = tokio::task::spawn_blocking(move || sweep::sweep(root, &marker))
            .await
            .unwrap_or(0);
        tracing::debug!(killed, "swept the child's descendants");
        self.swept = true;
        match tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await {
            Ok(Ok(status)) => {
                self.exit.get_or_insert(status);
            }
            Ok(Err(err)) => tracing::debug!(%err, "reaping the child"),
            Err(_) => {
                tracing::warn!("the child's process group did not exit within 5 s of SIGKILL")
            }
        }
        self.exit
    }
}

impl Drop for ChildGroup {
    /// A dropped group (a cancelled check, a panicking caller) is swept too;
    /// the leader itself goes with the process group (`KillOnDrop`).
    fn drop(&mut self) {
        if !self.swept {
            let root = self.pid.filter(|_| self.exit.is_none());
            sweep::sweep(root, &self.marker);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_smaller_of_50_lines_or_16_kib() {
        let mut tail = OutputTail::default();
        for i in 0..80 {
            tail.push(&format!("line {i}"));
        }
        assert_eq!(tail.lines().len(), 50);
        assert_eq!(tail.lines()[0], "line 30");
        let mut big = OutputTail::default();
        for _ in 0..20 {
            big.push(&"x".repeat(1500));
        }
        let bytes: usize = big.lines().iter().map(String::len).sum();
        assert!(bytes <= TAIL_MAX_BYTES);
        assert!(big.lines().len() < 20);
        assert!(big.dropped() > 0);
    }
}
