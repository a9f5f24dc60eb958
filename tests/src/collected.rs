//! One real harness session with its own telemetry collected: a receiver
//! locked by its token, the harness's telemetry setup from its plugin, and
//! the collector's hub followed until the session shows what a test waits
//! for (or the CLI's exit, or the bound).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_collect::collector::Collector;
use tether_collect::{Receiver, ReceiverConfig};
use tether_core::history::AttachmentAttempt;
use tether_core::plan::DriveMode;
use tether_core::registry::Registry;
use tether_core::spec::ServerSpec;
use tether_core::telemetry::{TelemetrySetup, TelemetryTarget};
use tether_hub::{Hub, HubConfig};

/// A receiver on 127.0.0.1, its batches, and `kind`'s telemetry setup
/// pointed at it.
pub async fn receiver_and_setup(
    kind: &str,
) -> (
    Receiver,
    tether_collect::Batches,
    tether_collect::RunningReceiver,
    TelemetrySetup,
) {
    let (receiver, batches) = Receiver::new(ReceiverConfig::default());
    let running = receiver
        .serve("127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("serve");
    let target = TelemetryTarget {
        endpoint: running.endpoint(),
        authorization: receiver.token().bearer(),
    };
    let setup = Registry::with_static()
        .expect("registry")
        .observer_for(kind, DriveMode::Passthrough)
        .and_then(|o| o.roles().telemetry?.telemetry_setup(&target))
        .expect("a telemetry setup");
    (receiver, batches, running, setup)
}

/// The setup's variables, as a process environment.
pub fn setup_env(setup: &TelemetrySetup) -> Vec<(String, String)> {
    setup
        .env
        .iter()
        .map(|v| (v.name.clone(), v.value.clone()))
        .collect()
}

/// Runs `program args` with `env` (plus PATH and HOME=`home`) in its own
/// process group, its telemetry collected for `kind` with `configured` as
/// today's configuration, until `done` holds for the session (or the bound);
/// returns the session's attempt.
#[allow(clippy::too_many_arguments)]
pub async fn collect_session(
    kind: &str,
    program: &std::path::Path,
    args: Vec<String>,
    env: Vec<(String, String)>,
    home: &std::path::Path,
    cwd: &std::path::Path,
    configured: Vec<ServerSpec>,
    receiver: Receiver,
    batches: tether_collect::Batches,
    done: impl Fn(&AttachmentAttempt) -> bool,
) -> Option<AttachmentAttempt> {
    let registry = Registry::with_static().expect("registry");
    let hub = Arc::new(Hub::with_config(registry, HubConfig::default()));
    let mut collector = Collector::new(
        Arc::clone(&hub),
        HashMap::from([(kind.to_owned(), configured)]),
    );
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopping = Arc::clone(&stop);
    let sessions: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let seen = Arc::clone(&sessions);
    // Batches the collector has read (each into the hub).
    let taken = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counted = Arc::clone(&taken);
    let consumer = std::thread::spawn(move || {
        while !stopping.load(std::sync::atomic::Ordering::Acquire) {
            if let Some(batch) = batches.next(Duration::from_millis(100)) {
                collector.take(&batch);
                *seen.lock().expect("lock") = collector.sessions();
                counted.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
            }
        }
        collector.stats()
    });
    // Every request the receiver took is answered, and every batch it
    // queued is read: after the CLI exited, nothing more can come.
    let drained = |receiver: &Receiver| {
        let r = receiver.stats();
        let answered = r.batches + r.refused + r.malformed + r.too_large + r.unsupported + r.busy;
        answered >= r.requests && taken.load(std::sync::atomic::Ordering::Acquire) >= r.batches
    };
    // A PATH the caller gives (a release's own Node first) wins.
    let mut full_env = vec![("HOME".into(), home.display().to_string())];
    if !env.iter().any(|(k, _)| k == "PATH") {
        full_env.push(("PATH".into(), std::env::var("PATH").unwrap_or_default()));
    }
    full_env.extend(env);
    let spec = tether_process::ChildSpec {
        program: program.display().to_string(),
        args,
        env: full_env,
        inherit_env: false,
        cwd: cwd.to_path_buf(),
    };
    let (mut child, stdin, mut stdout) =
        tether_process::ChildGroup::spawn(&spec).expect("the CLI starts");
    // Closed at once: a CLI that reads a prompt from a piped stdin (Codex
    // `exec`) would otherwise wait for it.
    drop(stdin);
    let drain = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut stdout, &mut tokio::io::sink()).await;
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut exited = false;
    let mut last = None;
    loop {
        // Judged before this turn's look, so the look sees all of it.
        let all_read = exited && drained(&receiver);
        hub.flush().await;
        let current = sessions
            .lock()
            .expect("lock")
            .first()
            .and_then(|id| hub.snapshot(id))
            .and_then(|h| h.current().cloned());
        if current.as_ref().is_some_and(&done) {
            last = current;
            break;
        }
        last = current.or(last);
        exited = exited || child.exited().is_some();
        // Ended on evidence: the CLI exited and all it sent was read (a
        // request still in flight keeps the wait going, to the deadline).
        if all_read || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The CLI finishes on its own (it writes its session files on the way
    // out), bounded by the test's deadline.
    while child.exited().is_none() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    child.kill_group().await;
    drain.abort();
    stop.store(true, std::sync::atomic::Ordering::Release);
    let stats = consumer.join().expect("consumer");
    let received = receiver.stats();
    assert_eq!(
        received.refused, 0,
        "{kind}: every request carried the token: {received:?}"
    );
    eprintln!("{kind}: {stats:?} {received:?}");
    last
}
