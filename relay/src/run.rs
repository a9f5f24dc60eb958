//! The relay process (`tether-relay`): what an agent starts in place of a
//! third-party stdio server.
//!
//! 1. It presents its one-time ticket to the host (`TETHER_RELAY`) and gets
//!    the real server's launch spec back over the loopback channel.
//! 2. It starts the server as its own child, in its own process group, with
//!    the relay's environment plus the spec's, and the server's stderr
//!    passed straight through.
//! 3. It copies bytes both ways unchanged, and reads copies on the side.
//! 4. It ends as the server would: when the server's stdout ends it exits
//!    with the server's status; when the agent closes stdin it closes the
//!    server's. Every descendant is killed on the way out.
//!
//! Fail-open: once the server runs, nothing about the host can stop the
//! relaying. A host that is gone, slow or full loses observations (counted
//! on stderr at the end), never traffic. The relay never retries anything.
//!
//! Its observer reads side copies in 1 ms batches, so it is not woken for
//! every chunk.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use tether_process::{ChildGroup, ChildSpec};

use crate::frames::{Direction, FrameReader, LineSplitter, Observation};
use crate::protocol::{Hello, HostAnswer, MAX_CHANNEL_LINE, RELAY_ENV};
use crate::pump::{SideCopy, blocking_file, spawn_pump};

/// How long the host has to answer the ticket.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// After the agent closes stdin, how long the server has to exit by itself.
const EXIT_GRACE: Duration = Duration::from_secs(5);

fn fail(message: &str) -> i32 {
    eprintln!("tether-relay: {message}");
    // The agent sees a server that exited at once, as a broken one would.
    1
}

/// Runs the relay; returns the process's exit code.
pub async fn run() -> i32 {
    let Ok(target) = std::env::var(RELAY_ENV) else {
        return fail(&format!(
            "{RELAY_ENV} is not set: tether-relay is started by a host, never by hand"
        ));
    };
    let Some((addr, ticket)) = target.split_once('/') else {
        return fail(&format!("{RELAY_ENV} is malformed"));
    };
    let (answer, host) =
        match tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake(addr, ticket)).await {
            Ok(Ok(pair)) => pair,
            Ok(Err(e)) => return fail(&format!("cannot reach the host: {e}")),
            Err(_) => return fail("the host did not answer in time"),
        };
    let (server, spec) = match answer {
        HostAnswer::Launch {
            server,
            command,
            args,
            env,
            cwd,
        } => (server, launch_spec(command, args, env, cwd)),
        HostAnswer::Refused { reason } => return fail(&format!("the host refused: {reason}")),
    };

    // Observations go to the host through a bounded queue; a gone host drops them.
    let (obs_tx, obs_rx) = mpsc::channel::<Observation>(1024);
    let lost = Arc::new(AtomicU64::new(0));
    let writer = tokio::spawn(write_observations(host, obs_rx));

    let (mut child, child_in, child_out) = match ChildGroup::spawn_passing_stderr(&spec) {
        Ok(triple) => triple,
        Err(err) => {
            let _ = obs_tx.try_send(Observation::SpawnFailed {
                reason_code: err.reason_code().as_str().to_owned(),
                summary: err.to_string(),
            });
            drop(obs_tx);
            let _ = tokio::time::timeout(Duration::from_secs(1), writer).await;
            return fail(&format!("cannot start {server}: {err}"));
        }
    };

    let (side_tx, side_rx) = mpsc::channel::<SideCopy>(256);
    let unobserved = Arc::new(AtomicU64::new(0));
    let observer = tokio::spawn(observe(
        side_rx,
        obs_tx.clone(),
        Arc::clone(&lost),
        Arc::clone(&unobserved),
    ));
    drop(obs_tx);
    let pipes = child_in
        .into_owned_fd()
        .and_then(blocking_file)
        .and_then(|to_server| {
            Ok((
                to_server,
                child_out.into_owned_fd().and_then(blocking_file)?,
            ))
        });
    let (server_in, server_out) = match pipes {
        Ok(pair) => pair,
        Err(err) => {
            child.kill_group().await;
            return fail(&format!("cannot take the server's pipes: {err}"));
        }
    };
    if !relay(server_in, server_out, side_tx, &lost).await {
        child.kill_group().await;
        return fail("cannot start the copying threads");
    }
    let status = server_exit(&mut child).await;
    // Hand the rest of the observations over, bounded; then end. The
    // observer stops by itself once both copy threads are done; the stdin
    // thread may stay parked in a read, so it gets a moment, not a promise.
    let mut observer = observer;
    if tokio::time::timeout(Duration::from_millis(100), &mut observer)
        .await
        .is_err()
    {
        observer.abort();
    }
    let _ = tokio::time::timeout(Duration::from_secs(1), writer).await;
    say_what_was_not_observed(&lost, &unobserved);
    status.and_then(|s| s.code()).unwrap_or(1)
}

/// Presents the ticket to the host at `addr`; its answer, and the channel's
/// write half (where observations go).
async fn handshake(
    addr: &str,
    ticket: &str,
) -> Result<(HostAnswer, tokio::net::tcp::OwnedWriteHalf), String> {
    let stream = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    let (read, mut write) = stream.into_split();
    let mut hello = serde_json::to_vec(&Hello {
        ticket: ticket.to_owned(),
    })
    .map_err(|e| e.to_string())?;
    hello.push(b'\n');
    write.write_all(&hello).await.map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(read);
    let mut line = Vec::new();
    let n = (&mut reader)
        .take(MAX_CHANNEL_LINE as u64)
        .read_until(b'\n', &mut line)
        .await
        .map_err(|e| e.to_string())?;
    if n == 0 {
        return Err("the host closed the channel".to_owned());
    }
    let answer: HostAnswer =
        serde_json::from_slice(&line).map_err(|e| format!("the host's answer: {e}"))?;
    Ok((answer, write))
}

/// The server's launch: the relay's own environment (what the agent gave
/// it), minus the ticket, plus the spec's; in the spec's directory, or the
/// relay's own.
fn launch_spec(
    command: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    cwd: Option<String>,
) -> ChildSpec {
    let mut vars: Vec<(String, String)> =
        std::env::vars().filter(|(k, _)| k != RELAY_ENV).collect();
    for (k, v) in env {
        vars.retain(|(name, _)| *name != k);
        vars.push((k, v));
    }
    ChildSpec {
        program: command,
        args,
        env: vars,
        inherit_env: false,
        cwd: cwd
            .map(Into::into)
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| ".".into()),
    }
}

/// Copies bytes both ways, with plain blocking copies, one thread each way
/// (see pump), a copy of each to the side, until either side ends (when
/// the agent closes stdin, the server's stdin is closed too and it gets a
/// moment to finish its answers and exit). `false`: the threads could not
/// start.
async fn relay(
    server_in: std::fs::File,
    server_out: std::fs::File,
    side_tx: mpsc::Sender<SideCopy>,
    lost: &Arc<AtomicU64>,
) -> bool {
    let to_server = spawn_pump(
        "relay-to-server",
        std::io::stdin(),
        server_in,
        Direction::ToServer,
        Some(side_tx.clone()),
        Arc::clone(lost),
    );
    let to_agent = spawn_pump(
        "relay-to-agent",
        server_out,
        std::io::stdout(),
        Direction::ToAgent,
        Some(side_tx),
        Arc::clone(lost),
    );
    let (mut to_server, mut to_agent) = match (to_server, to_agent) {
        (Ok(a), Ok(b)) => (a, b),
        _ => return false,
    };
    // Either side may end first.
    tokio::select! {
        _ = &mut to_agent => {}
        _ = &mut to_server => {
            // The agent closed stdin (the server's stdin is closed now too):
            // give the server a moment to finish its answers and exit.
            let _ = tokio::time::timeout(EXIT_GRACE, &mut to_agent).await;
        }
    }
    true
}

/// The server's exit: its own, if it comes within half a second; the
/// server, if still up, and every descendant it left behind go then.
async fn server_exit(child: &mut ChildGroup) -> Option<std::process::ExitStatus> {
    let status = tokio::time::timeout(Duration::from_millis(500), async {
        loop {
            if let Some(status) = child.exited() {
                break status;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .ok();
    let killed = child.kill_group().await;
    status.or(killed)
}

/// Says on stderr what was relayed but not observed, if anything.
fn say_what_was_not_observed(lost: &AtomicU64, unobserved: &AtomicU64) {
    let lost = lost.load(Ordering::Relaxed);
    if lost > 0 {
        eprintln!("tether-relay: {lost} observation(s) dropped (the relaying was not affected)");
    }
    let unobserved = unobserved.load(Ordering::Relaxed);
    if unobserved > 0 {
        eprintln!(
            "tether-relay: {unobserved} frame(s) too large or too dense to observe were relayed unchanged, unobserved"
        );
    }
}

async fn observe(
    mut rx: mpsc::Receiver<SideCopy>,
    out: mpsc::Sender<Observation>,
    lost: Arc<AtomicU64>,
    unobserved: Arc<AtomicU64>,
) {
    let mut observer = FrameReader::new();
    let mut to_server = LineSplitter::new();
    let mut to_agent = LineSplitter::new();
    let mut found = Vec::new();
    let mut read = |(direction, bytes, at): SideCopy, found: &mut Vec<Observation>| {
        let splitter = match direction {
            Direction::ToServer => &mut to_server,
            Direction::ToAgent => &mut to_agent,
        };
        splitter.feed(&bytes, |line| {
            found.extend(observer.frame(direction, line, at))
        });
        // Said at exit: a cap that cut is never silent.
        unobserved.store(
            to_server.oversized + to_agent.oversized + observer.too_dense,
            Ordering::Relaxed,
        );
    };
    while let Some(copy) = rx.recv().await {
        read(copy, &mut found);
        // Batch: copies that arrive within the window wake nobody (the
        // receiver is not parked on the channel meanwhile), so the copying
        // threads are not made to share the CPU with an observer woken for
        // every chunk. Their own times (taken when copied) are kept.
        tokio::time::sleep(OBSERVE_BATCH).await;
        while let Ok(copy) = rx.try_recv() {
            read(copy, &mut found);
        }
        for observation in found.drain(..) {
            if out.try_send(observation).is_err() {
                lost.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// How long the observer lets side copies gather before reading them.
const OBSERVE_BATCH: std::time::Duration = std::time::Duration::from_millis(1);

async fn write_observations(
    mut host: tokio::net::tcp::OwnedWriteHalf,
    mut rx: mpsc::Receiver<Observation>,
) {
    let mut lines = Vec::new();
    while let Some(observation) = rx.recv().await {
        // Everything waiting goes out in one write.
        lines.clear();
        for observation in
            std::iter::once(observation).chain(std::iter::from_fn(|| rx.try_recv().ok()))
        {
            if let Ok(line) = serde_json::to_vec(&observation) {
                lines.extend_from_slice(&line);
                lines.push(b'\n');
            }
        }
        if host.write_all(&lines).await.is_err() {
            // The host is gone: keep draining so senders never block.
            while rx.recv().await.is_some() {}
            return;
        }
    }
    let _ = host.shutdown().await;
}
