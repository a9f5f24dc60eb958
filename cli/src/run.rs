//! `tether run [--require …] -- COMMAND [ARGS…]`: a harness run headless
//! (CI, scripts) with Tether around it. The command runs as given: it
//! inherits stdin and stderr, its stdout passes byte for byte (and where
//! it is no terminal is read too, as `tether check FILE` reads a saved
//! stream: [`stdout`]), the signals Tether receives are forwarded to it,
//! and its exit code is kept. Around it, in-process on 127.0.0.1 with
//! fresh tokens: the telemetry receiver (the harness's variables from its plugin's
//! `telemetry_setup`) and, with `--tap`, the model tap. When it exits, the
//! session's own records are read and merged with what arrived, the
//! session is stored, its matrix goes to stderr (or `--report`), and the
//! requirements are evaluated ([`crate::check`]).
//!
//! Fail-open: whatever Tether cannot do (listen, open the store, read the
//! records, know the harness) it says on stderr; the command still runs
//! unaffected.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use tether_core::model::Timestamp;
use tether_core::registry::Registry;

use crate::check::{self, RequireArgs};
use crate::exit::Exit;

mod stdout;

/// What `tether run --help` says after the flags.
pub const RUN_AFTER_HELP: &str = "\
The command inherits stdin and stderr; its stdout is passed on byte for byte, and where it is no
terminal also read, as `tether check FILE` reads a saved one. Tether writes only to stderr (or --report).
SIGINT, SIGTERM, SIGHUP and SIGQUIT are forwarded to it (SIGINT only where the terminal did not
already send it to the command's process group).

Exit codes: the command's own when it failed (128+N when signal N ended it, 127 when it could not be
started); else 4 when a requirement is not met; else 0.";

/// Run a harness with Tether around it.
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    require: RequireArgs,
    #[command(flatten)]
    harness: crate::flags::HarnessName,
    /// Also pass the harness's model traffic through the model tap (what
    /// the model was offered and called; the harness's model endpoint
    /// variable is pointed at the tap, and the tap passes on to where it
    /// pointed).
    #[arg(long)]
    tap: bool,
    /// Write the matrix and the requirements' outcomes here instead of
    /// stderr.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    #[command(flatten)]
    store: crate::host::StoreArgs,
    #[command(flatten)]
    plugins: crate::host::PluginArgs,
    /// The command and its arguments.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

/// What `tether run` says of itself, on stderr.
const WHO: &str = "tether run";

/// Launchers a harness is often started through: the harness is the next
/// word.
const LAUNCHERS: [&str; 8] = ["env", "npx", "bunx", "node", "bun", "deno", "pnpx", "exec"];

/// The harness `command` starts: a plugin's agent kind (a harness's name
/// or alias) as the program's file name, or any component of its path
/// (`node_modules/@anthropic-ai/claude-code/cli.js`), past launchers and
/// `VAR=value` words.
pub(crate) fn harness_of(registry: &Registry, command: &[OsString]) -> Option<String> {
    let harnesses = registry.harnesses();
    let kind_of = |word: &str| {
        harnesses
            .iter()
            .find(|h| h.plugin.descriptor.agent_kinds.iter().any(|k| k == word))
            .map(|h| h.id.as_str().to_owned())
    };
    for word in command {
        let word = word.to_string_lossy();
        if word.starts_with('-') || word.contains('=') && !word.contains('/') {
            continue;
        }
        let path = Path::new(word.as_ref());
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stem = name.split('.').next().unwrap_or_default().to_owned();
        if let Some(kind) = kind_of(&name).or_else(|| kind_of(&stem)) {
            return Some(kind);
        }
        if let Some(kind) = path
            .components()
            .rev()
            .find_map(|c| kind_of(&c.as_os_str().to_string_lossy()))
        {
            return Some(kind);
        }
        if !LAUNCHERS.contains(&stem.as_str()) {
            return None;
        }
    }
    None
}

/// The variables Tether sets for the command, and what it says of the
/// ones the user's environment already sets.
#[derive(Debug, Default)]
struct Env {
    set: Vec<(String, String)>,
    kept: Vec<String>,
}

impl Env {
    /// Sets `name` unless the user's environment already gives it another
    /// value (kept, and said by name only: a value may be a secret).
    fn offer(&mut self, name: &str, value: &str) {
        match std::env::var_os(name) {
            Some(theirs) if theirs != value => self.kept.push(name.to_owned()),
            _ => self.set.push((name.to_owned(), value.to_owned())),
        }
    }
}

/// What ran around the command, to be stopped when it exits.
struct Around {
    collect: Option<Telemetry>,
    tap: Option<tether_tap::RunningTap>,
}

impl Around {
    /// Nothing around the command (no harness Tether knows, or no runtime).
    fn nothing() -> Self {
        Around {
            collect: None,
            tap: None,
        }
    }
}

/// The telemetry receiver and the thread that reads what it queues into
/// the hub. Its stop ends on evidence: the server is gone and the queue
/// drained (it disconnects once the last receiver is dropped).
struct Telemetry {
    receiver: tether_collect::Receiver,
    running: tether_collect::RunningReceiver,
    pump: std::thread::JoinHandle<()>,
    stopping: Arc<std::sync::atomic::AtomicBool>,
}

impl Telemetry {
    async fn start(hub: Arc<tether_hub::Hub>) -> std::io::Result<Telemetry> {
        use std::sync::atomic::Ordering;
        let (receiver, batches) =
            tether_collect::Receiver::new(tether_collect::ReceiverConfig::default());
        let loopback = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        let running = receiver.serve(loopback).await?;
        let stopping = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop_seen = Arc::clone(&stopping);
        let mut collector = tether_collect::collector::Collector::new(hub, Default::default());
        let pump = std::thread::spawn(move || {
            loop {
                // Wakes at once on a batch, or when the queue disconnects;
                // the timeout only bounds a stop whose queue stays open.
                match batches.next(std::time::Duration::from_secs(1)) {
                    Some(batch) => collector.take(&batch),
                    None if stop_seen.load(Ordering::Acquire) => break,
                    None => {}
                }
            }
        });
        Ok(Telemetry {
            receiver,
            running,
            pump,
            stopping,
        })
    }

    fn target(&self) -> tether_core::telemetry::TelemetryTarget {
        tether_core::telemetry::TelemetryTarget {
            endpoint: self.running.endpoint(),
            authorization: self.receiver.token().bearer(),
        }
    }

    /// Stops serving, then reads everything queued into the hub.
    async fn stop(self) {
        self.running.shutdown().await;
        drop(self.receiver);
        self.stopping
            .store(true, std::sync::atomic::Ordering::Release);
        let pump = self.pump;
        let _ = tokio::task::spawn_blocking(move || pump.join()).await;
    }
}

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let started = tether_hub::now();
    let registry = args.plugins.registry().unwrap_or_else(|err| {
        errln!("{WHO}: {err:#}; the compiled-in plugins only");
        Registry::with_static().unwrap_or_default()
    });
    let harness = harness_for(&args, &registry);
    let runtime = crate::host::runtime()
        .inspect_err(|err| errln!("{WHO}: no runtime ({err}); the command runs without Tether"))
        .ok();
    let hub = harness
        .as_ref()
        .and(runtime.as_ref())
        .map(|_| hub(&args, registry.clone()));
    let (around, env) = match (&harness, &runtime, &hub) {
        (Some(kind), Some(rt), Some((hub, _))) => {
            rt.block_on(start_around(&args, &registry, kind, Arc::clone(hub)))
        }
        _ => (Around::nothing(), Env::default()),
    };
    if !env.kept.is_empty() {
        errln!(
            "{WHO}: your environment already sets {}; kept as you set it, so Tether may not see what it would carry",
            env.kept.join(", ")
        );
    }
    tracing::debug!("around the command: started");
    // What a harness Tether knows prints is read as a saved run's is.
    let observe = harness.is_some() && stdout::observed();
    let status = spawn_and_wait(&args.command, &env.set, runtime.as_ref(), observe);
    tracing::debug!("the command exited");
    let (harness_code, printed) = match status {
        Ok(ended) => ended,
        Err(code) => return Ok(Exit::Harness(code).into()),
    };
    // A requirement is never met on silence: where Tether saw nothing (a
    // harness no plugin knows, Tether failing), a requirement is not met.
    let unseen = if harness_code == 0 && !args.require.all().is_empty() {
        Exit::Unmet.code()
    } else {
        harness_code
    };
    let (Some(kind), Some(rt), Some((hub, store))) = (harness, runtime, hub) else {
        if harness_code != 0 {
            errln!(
                "{WHO}: {} exited {harness_code}",
                shown_program(&args.command)
            );
        }
        if unseen != harness_code {
            let unmet: Vec<_> = args
                .require
                .all()
                .iter()
                .map(check::Requirement::spelled)
                .collect();
            errln!(
                "{WHO}: Tether saw no session, so no requirement is met: {}",
                unmet.join(", ")
            );
        }
        return Ok(Exit::Harness(unseen).into());
    };
    // Whatever goes wrong from here (even a panic) is Tether's: said, and
    // the harness's exit code kept.
    let after = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        after_the_command(
            &args,
            &registry,
            (&kind, harness_code),
            &rt,
            (around, printed.as_ref()),
            (&hub, store.as_deref()),
            started,
        )
    }));
    let checked = match after {
        Ok(Ok(checked)) => checked,
        Ok(Err(err)) => return Ok(said(unseen, &format!("{err:#}"))),
        Err(_) => return Ok(said(unseen, "Tether failed after the harness ended")),
    };
    drop(rt);
    Ok(exit(harness_code, checked.as_ref()))
}

/// `what` said (as `tether run`), and the exit code `code`.
fn said(code: u8, what: &str) -> ExitCode {
    errln!("{WHO}: {what}");
    Exit::Harness(code).into()
}

/// The harness `--harness` names, or the one the command is (each said
/// where no plugin knows it: the command then runs without Tether).
fn harness_for(args: &RunArgs, registry: &Registry) -> Option<String> {
    let harness = match &args.harness.harness {
        Some(kind) if registry.harness(kind).is_some() => Some(kind.clone()),
        Some(kind) => {
            errln!("{WHO}: no plugin knows the harness {kind:?}; the command runs without Tether");
            None
        }
        None => harness_of(registry, &args.command),
    };
    if harness.is_none() && args.harness.harness.is_none() {
        errln!(
            "{WHO}: no plugin knows {:?} as a harness; it runs as given, without Tether's observation (--harness KIND names it)",
            shown_program(&args.command)
        );
    }
    harness
}

/// Once the command exited: what ran around it stopped, while its records
/// are read (the receiver drains its queue meanwhile); the session read,
/// merged and stored; the report written and the requirements checked.
fn after_the_command(
    args: &RunArgs,
    registry: &Registry,
    (kind, harness_code): (&str, u8),
    rt: &tokio::runtime::Runtime,
    (around, printed): (Around, Option<&stdout::Printed>),
    (hub, store): (&tether_hub::Hub, Option<&dyn tether_core::store::Store>),
    started: Timestamp,
) -> anyhow::Result<Option<check::document::CheckDocument>> {
    let records = std::thread::scope(|scope| {
        let stopping = scope.spawn(|| {
            rt.block_on(stop_around(around, hub));
            tracing::debug!("around the command: stopped");
        });
        let configured = configured_for(registry, kind, &args.command);
        let records = records_since(registry, kind, configured.clone(), started);
        let printed = printed.and_then(|p| printed_records(registry, kind, p, configured));
        let _ = stopping.join();
        (records, printed)
    });
    let (records, printed) = records;
    let session = session_after(&records, kind, hub, store);
    let mut session = match printed {
        Some(stream) => with_printed(session, &stream, hub, store),
        None => session,
    };
    // A command not found reads as `tether inventory` says it (the near
    // name on PATH meant), where today's files configured the run.
    if let Some(s) = session.as_mut()
        && !strict_run(registry, kind, &args.command)
    {
        crate::sessions::with_config_reasons(&mut s.rows, kind);
    }
    tracing::debug!("the session: read, merged, stored");
    report(args, (kind, harness_code), session.as_ref())
}

/// The exit code: the harness's when it failed; else [`Exit::Unmet`]
/// when a requirement is not met; else 0.
fn exit(harness: u8, checked: Option<&check::document::CheckDocument>) -> ExitCode {
    if harness != 0 {
        return Exit::Harness(harness).into();
    }
    match checked {
        Some(doc) => check::exit_code(doc),
        None => ExitCode::SUCCESS,
    }
}

/// The program's file name, as it may be shown (never an argument).
fn shown_program(command: &[OsString]) -> String {
    command
        .first()
        .map(|p| {
            Path::new(p)
                .file_name()
                .unwrap_or(p)
                .to_string_lossy()
                .into_owned()
        })
        .unwrap_or_default()
}

/// The hub the telemetry and the tap land in, and the store it writes
/// (`None`: not kept; said).
fn hub(
    args: &RunArgs,
    registry: Registry,
) -> (
    Arc<tether_hub::Hub>,
    Option<Arc<dyn tether_core::store::Store>>,
) {
    let store = match args.store.at() {
        Ok(at) => match at.open_writable() {
            Ok(store) => Some(store),
            Err(err) => {
                errln!(
                    "{WHO}: cannot open the store {}: {err}; the session is shown, not kept",
                    at.shown()
                );
                None
            }
        },
        Err(err) => {
            errln!("{WHO}: {err}; the session is shown, not kept");
            None
        }
    };
    let hub = match &store {
        Some(store) => tether_hub::Hub::with_store(registry, Default::default(), Arc::clone(store)),
        None => tether_hub::Hub::new(registry),
    };
    (Arc::new(hub), store)
}

/// The telemetry receiver (and with `--tap` the model tap), listening on
/// 127.0.0.1 with fresh tokens, and the variables that point the harness
/// at them. What cannot start is said; the command runs anyway.
async fn start_around(
    args: &RunArgs,
    registry: &Registry,
    kind: &str,
    hub: Arc<tether_hub::Hub>,
) -> (Around, Env) {
    let mut env = Env::default();
    let Some(harness) = registry.harness(kind) else {
        return (Around::nothing(), env);
    };
    let probe_target = tether_core::telemetry::TelemetryTarget {
        endpoint: "http://127.0.0.1:1".into(),
        authorization: String::new(),
    };
    let telemetry = harness.roles.telemetry;
    let collect = if telemetry.is_some_and(|t| t.telemetry_setup(&probe_target).is_some()) {
        match Telemetry::start(Arc::clone(&hub)).await {
            Ok(collect) => Some(collect),
            Err(err) => {
                errln!(
                    "{WHO}: cannot receive {kind}'s telemetry (cannot listen on 127.0.0.1: {err}); reading its records only"
                );
                None
            }
        }
    } else {
        None
    };
    if let Some(collect) = &collect
        && let Some(setup) = telemetry.and_then(|t| t.telemetry_setup(&collect.target()))
    {
        for var in &setup.env {
            env.offer(&var.name, &var.value);
        }
        if setup.env.is_empty() && setup.snippet.is_some() {
            errln!(
                "{WHO}: {kind} reads its telemetry exporter from a file, not the environment; reading its records only"
            );
        }
    }
    let tap = if args.tap {
        start_tap(registry, kind, hub, &mut env).await
    } else {
        None
    };
    (Around { collect, tap }, env)
}

/// The model tap, passing on to where the harness's model endpoint
/// variable pointed (else the provider), and that variable pointed at it.
async fn start_tap(
    registry: &Registry,
    kind: &str,
    hub: Arc<tether_hub::Hub>,
    env: &mut Env,
) -> Option<tether_tap::RunningTap> {
    let harness = registry.harness(kind)?;
    let Some(probe) = harness
        .roles
        .model_tap
        .and_then(|t| t.model_setup("http://127.0.0.1:1/t"))
    else {
        errln!("{WHO}: --tap: {kind}'s plugin gives no model setup; running without the tap");
        return None;
    };
    let upstream = probe
        .env
        .iter()
        .find_map(|v| std::env::var(&v.name).ok())
        .and_then(|u| url::Url::parse(&u).ok());
    let config = tether_tap::TapConfig {
        upstream,
        ..Default::default()
    };
    let loopback = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let running = match tether_tap::Tap::serve(config, loopback, registry.clone(), Some(hub)).await
    {
        Ok(running) => running,
        Err(err) => {
            errln!("{WHO}: --tap: cannot listen ({err}); running without the tap");
            return None;
        }
    };
    let setup = harness.roles.model_tap?.model_setup(&running.base_url())?;
    // The tap's variable is set even where the user set one: the tap
    // passes on to it.
    for var in &setup.env {
        env.set.push((var.name.clone(), var.value.clone()));
    }
    if setup.env.is_empty() {
        errln!(
            "{WHO}: --tap: {kind} takes its model endpoint from a file; running without the tap"
        );
        running.stop().await;
        return None;
    }
    Some(running)
}

/// Stops what ran around the command once everything it sent has landed
/// in the hub.
async fn stop_around(around: Around, hub: &tether_hub::Hub) {
    if let Some(tap) = around.tap {
        let observed = tap.tap().clone();
        tap.stop().await;
        observed.settle().await;
    }
    if let Some(collect) = around.collect {
        collect.stop().await;
    }
    hub.flush().await;
}

/// Runs the command with `set` added to the environment, forwarding
/// signals, to its exit: `Ok` its exit code (128+N for signal N) and,
/// when `observe`, what it printed on stdout (passed on as it came);
/// `Err` the code when it could not be started (said).
fn spawn_and_wait(
    command: &[OsString],
    set: &[(String, String)],
    runtime: Option<&tokio::runtime::Runtime>,
    observe: bool,
) -> Result<(u8, Option<stdout::Printed>), u8> {
    let Some((program, rest)) = command.split_first() else {
        return Err(2);
    };
    let mut cmd = std::process::Command::new(program);
    cmd.args(rest);
    cmd.envs(set.iter().map(|(k, v)| (k, v)));
    if observe {
        cmd.stdout(std::process::Stdio::piped());
    }
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(err) => {
            let code = if err.kind() == std::io::ErrorKind::PermissionDenied {
                126
            } else {
                127
            };
            errln!("{WHO}: cannot start {:?}: {err}", shown_program(command));
            return Err(code);
        }
    };
    let pid = child.id();
    let copying = child.stdout.take().and_then(|from| {
        stdout::Copying::start(from)
            .inspect_err(|err| errln!("{WHO}: cannot pass the command's stdout on ({err})"))
            .ok()
    });
    let forwarding = runtime.map(|rt| rt.spawn(forward_signals(pid)));
    let status = child.wait();
    if let Some(task) = forwarding {
        task.abort();
    }
    let printed = copying.and_then(stdout::Copying::finish);
    match status {
        Ok(status) => Ok((code_of(status), printed)),
        Err(err) => {
            errln!("{WHO}: lost the command ({err})");
            Ok((1, printed))
        }
    }
}

/// An exit status as a shell gives it: the code, or 128+N for signal N.
fn code_of(status: std::process::ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => u8::try_from(code & 0xff).unwrap_or(1),
        (None, Some(sig)) => u8::try_from(128 + sig).unwrap_or(1),
        (None, None) => 1,
    }
}

/// Forwards SIGINT, SIGTERM, SIGHUP and SIGQUIT to `pid` until aborted.
/// SIGINT from a terminal already reached the command (it is in our
/// foreground process group), so only a SIGINT sent to Tether alone is
/// forwarded then.
async fn forward_signals(pid: u32) {
    use tokio::signal::unix::{SignalKind, signal};
    let kinds = [
        (SignalKind::interrupt(), libc::SIGINT),
        (SignalKind::terminate(), libc::SIGTERM),
        (SignalKind::hangup(), libc::SIGHUP),
        (SignalKind::quit(), libc::SIGQUIT),
    ];
    let mut streams = Vec::new();
    for (kind, number) in kinds {
        match signal(kind) {
            Ok(stream) => streams.push((stream, number)),
            Err(err) => tracing::debug!(%err, number, "cannot watch a signal"),
        }
    }
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    loop {
        let next = futures_first(&mut streams).await;
        let Some(number) = next else { return };
        if number == libc::SIGINT && terminal_sent_it() {
            continue;
        }
        // SAFETY: kill(2) with a pid we spawned and have not yet reaped.
        unsafe {
            libc::kill(pid, number);
        }
    }
}

/// The first of the signal streams to fire: its signal number.
async fn futures_first(streams: &mut [(tokio::signal::unix::Signal, i32)]) -> Option<i32> {
    if streams.is_empty() {
        return None;
    }
    std::future::poll_fn(|cx| {
        for (stream, number) in streams.iter_mut() {
            if let std::task::Poll::Ready(got) = stream.poll_recv(cx) {
                return std::task::Poll::Ready(got.map(|()| *number));
            }
        }
        std::task::Poll::Pending
    })
    .await
}

/// Whether our process group is the terminal's foreground group: then a
/// terminal's Ctrl-C went to the command as well as to us.
fn terminal_sent_it() -> bool {
    // SAFETY: plain queries of this process and its stdin.
    unsafe {
        let foreground = libc::tcgetpgrp(libc::STDIN_FILENO);
        foreground > 0 && foreground == libc::getpgrp()
    }
}

/// The arguments that tell `kind`'s CLI to use only the servers given by
/// flag (Claude Code's `--strict-mcp-config`, and each harness's own), as
/// its plugin writes them: the words its strategy adds when asked for a
/// strict run, and not otherwise. No harness is named here.
fn strict_words(registry: &Registry, kind: &str) -> Vec<String> {
    let Some(strategy) = registry.harness(kind).and_then(|h| h.strategy) else {
        return Vec::new();
    };
    let args = |strict| {
        let ctx = tether_core::plan::PlanContext {
            agent_kind: kind.to_owned(),
            drive_mode: tether_core::plan::DriveMode::Passthrough,
            capabilities: strategy.capabilities(),
            strict,
        };
        let plan = tether_core::plan::Plan::default();
        strategy
            .materialize(&plan, &ctx, Path::new("."))
            .map(|m| m.args)
            .unwrap_or_default()
    };
    let lax = args(false);
    args(true)
        .into_iter()
        .filter(|w| w.starts_with('-') && !lax.contains(w))
        .collect()
}

/// Whether the command asks its harness for only the servers its flags give.
fn strict_run(registry: &Registry, kind: &str, command: &[OsString]) -> bool {
    let words = strict_words(registry, kind);
    !words.is_empty()
        && command
            .iter()
            .any(|w| words.iter().any(|s| w.to_string_lossy() == s.as_str()))
}

/// The servers today's configuration gives each harness, as this run had
/// them.
type Configured = std::collections::HashMap<String, Vec<tether_core::spec::ServerSpec>>;

/// Today's configuration as the run had it: without `kind`'s user files
/// where the command asks for only the servers its flags give.
fn configured_for(registry: &Registry, kind: &str, command: &[OsString]) -> Configured {
    let mut configured = crate::host::configured_today();
    if strict_run(registry, kind, command) {
        // Only the servers the command's own flags give: the user's files
        // configure nothing for this run, so no row of theirs is claimed.
        configured.remove(kind);
    }
    tracing::debug!("today's configuration: read");
    configured
}

/// The harness's session records in this working folder since the start.
fn records_since(
    registry: &Registry,
    kind: &str,
    configured: Configured,
    started: Timestamp,
) -> tether_records::Records {
    let project = std::env::current_dir()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()));
    let filter = tether_records::Filter {
        harnesses: vec![kind.to_owned()],
        // A file's time has a coarser grain than ours: a second's slack.
        since: Some(Timestamp(started.0.saturating_sub(1000))),
        project,
    };
    let mut records = tether_records::Records::new(
        registry,
        &tether_records::Home::from_env(),
        configured,
        filter,
    );
    records.read(true);
    tracing::debug!("the records: read");
    records
}

/// What the harness printed, read by the reader `tether check FILE` uses
/// (its stream-json, as a saved one is). `None` where it printed nothing
/// a reader of `kind` knows (plain text, say): said in the debug log only.
fn printed_records(
    registry: &Registry,
    kind: &str,
    printed: &stdout::Printed,
    configured: Configured,
) -> Option<tether_records::Records> {
    tether_records::Records::of_file(registry, &printed.path(), Some(kind), configured)
        .inspect_err(|err| tracing::debug!(%err, "the command's stdout: not read"))
        .ok()
        .filter(|r| !r.sessions().is_empty())
}

/// `session` with what the harness printed merged in (and stored): the
/// printed session of the same id, or where no other shows one, the one
/// it printed. A printed session of another id is left out.
fn with_printed(
    session: Option<check::Shown>,
    printed: &tether_records::Records,
    hub: &tether_hub::Hub,
    store: Option<&dyn tether_core::store::Store>,
) -> Option<check::Shown> {
    let facts = match &session {
        Some(s) => printed.sessions().get(&s.summary.session_id),
        None => printed.sessions().values().max_by_key(|f| f.last_at),
    };
    let Some(facts) = facts else {
        tracing::debug!("the command printed another session than its records show");
        return session;
    };
    let id = facts.session_id();
    let existing = match &session {
        Some(s) => Some(s.history.clone()),
        None => store
            .and_then(|s| s.load(&id).ok().flatten())
            .or_else(|| hub.snapshot(&id)),
    };
    let merged = match printed.history(facts, existing) {
        Ok(merged) => merged,
        Err(err) => {
            errln!("{WHO}: what the command printed could not be merged ({err})");
            return session;
        }
    };
    if let Some(store) = store
        && let Err(err) = printed.import(store, Some(std::slice::from_ref(&id)))
    {
        errln!("{WHO}: what the command printed could not be stored ({err})");
    }
    let mut shown = check::shown_history(&merged);
    let mut summary = printed.summary(facts, &merged);
    if let Some(before) = session.map(|s| s.summary) {
        // Its times and files are the records'; a printed line has neither.
        summary.started_at = before.started_at;
        summary.updated_at = before.updated_at;
        summary.files = before.files;
    }
    shown.summary = summary;
    Some(shown)
}

/// The session the command ran, merged: the session its telemetry named,
/// else the newest session of the harness in `records`, else what its
/// telemetry alone shows. `None`: nothing shows one.
fn session_after(
    records: &tether_records::Records,
    kind: &str,
    hub: &tether_hub::Hub,
    store: Option<&dyn tether_core::store::Store>,
) -> Option<check::Shown> {
    let prefix = format!("{kind}:");
    let live: Vec<String> = hub
        .sessions()
        .into_iter()
        .filter(|id| id.starts_with(&prefix))
        .collect();
    let on_disk: Vec<&tether_records::SessionFacts> = {
        let mut found: Vec<_> = records.selected().collect();
        found.sort_by_key(|f| std::cmp::Reverse(f.last_at));
        found
    };
    let facts = on_disk
        .iter()
        .find(|f| live.contains(&f.session_id()))
        .or_else(|| on_disk.first())
        .copied();
    let Some(facts) = facts else {
        // Telemetry alone, or nothing.
        let id = live.first()?;
        errln!(
            "{WHO}: no session records of {kind} in this folder since the start; its telemetry only"
        );
        return hub.snapshot(id).map(|h| check::shown_history(&h));
    };
    let id = facts.session_id();
    let existing = match store {
        Some(store) => store.load(&id).ok().flatten(),
        None => None,
    }
    .or_else(|| hub.snapshot(&id));
    let merged = match records.history(facts, existing.clone()) {
        Ok(merged) => merged,
        Err(err) => {
            errln!("{WHO}: the session's records could not be merged ({err})");
            return existing.map(|h| check::shown_history(&h));
        }
    };
    if let Some(store) = store
        && let Err(err) = records.import(store, Some(std::slice::from_ref(&id)))
    {
        errln!("{WHO}: the session could not be stored ({err})");
    }
    let mut shown = check::shown_history(&merged);
    shown.summary = records.summary(facts, &merged);
    Some(shown)
}

/// How the harness exited and, where its records say why (a report-level
/// error: the model API unreachable, not logged in), that reason in the
/// harness's own words and its code; one line, before the requirements.
fn exit_line(
    kind: &str,
    code: u8,
    history: Option<&tether_core::history::AttachmentHistory>,
) -> String {
    use tether_words::display::{current_report_error, records_report_error, report_error_why};
    match (code, history.and_then(current_report_error)) {
        (0, None) => format!("{WHO}: {kind} exited 0\n"),
        (0, Some(e)) => format!("{WHO}: {kind} exited 0; {}\n", records_report_error(e)),
        (code, Some(e)) => format!("{WHO}: {kind} exited {code}{}\n", report_error_why(e)),
        (code, None) => {
            format!(
                "{WHO}: {kind} exited {code}; its records say no more of why (its own output does)\n"
            )
        }
    }
}

/// The matrix and the requirements' outcomes, to stderr or `--report`;
/// the checked document when there were requirements.
fn report(
    args: &RunArgs,
    (kind, harness_code): (&str, u8),
    session: Option<&check::Shown>,
) -> anyhow::Result<Option<check::document::CheckDocument>> {
    let requirements = args.require.all();
    let mut text = String::new();
    let history = session.map(|s| &s.history);
    match session {
        Some(s) => {
            let document = tether_core::records::SessionDocument {
                schema_version: tether_core::records::SESSIONS_SCHEMA_VERSION,
                session: s.summary.clone(),
                rows: s.rows.clone(),
                files: Vec::new(),
                telemetry_unparsed: Vec::new(),
                history: s.history.clone(),
            };
            let mut matrix = Vec::new();
            crate::records::print_matrix(&mut matrix, &document, false, false)?;
            text.push_str(&String::from_utf8_lossy(&matrix));
        }
        None => text.push_str(&format!(
            "{WHO}: no session of {kind} was seen (no telemetry arrived, no records in this folder since the start)\n"
        )),
    }
    text.push_str(&exit_line(kind, harness_code, history));
    let checked = if requirements.is_empty() {
        None
    } else {
        let summary = session.map_or_else(
            || tether_core::records::SessionSummary {
                session_id: format!("{kind}:?"),
                agent_kind: kind.to_owned(),
                harness_session: String::new(),
                project: None,
                agent_version: None,
                started_at: Timestamp::default(),
                updated_at: Timestamp::default(),
                counts: Default::default(),
                files: 0,
                health_check: false,
            },
            |s| s.summary.clone(),
        );
        let checked = match session {
            Some(s) => check::check_history(&summary, &s.history, &requirements),
            None => check::check_session(&summary, &[], &requirements),
        };
        let doc = check::document(vec![checked]);
        text.push_str(&check::human(&doc));
        Some(doc)
    };
    match &args.report {
        Some(path) => {
            if let Err(err) = std::fs::write(path, &text) {
                errln!(
                    "{WHO}: cannot write the report to {}: {err}",
                    path.display()
                );
                eprint!("{text}");
            }
        }
        None => {
            let mut err = std::io::stderr().lock();
            err.write_all(text.as_bytes())?;
            err.flush()?;
        }
    }
    Ok(checked)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<OsString> {
        line.split(' ').map(OsString::from).collect()
    }

    #[test]
    fn the_harness_is_told_from_the_command() {
        tether_first_party::link();
        let registry = Registry::with_static().expect("registry");
        let of = |line: &str| harness_of(&registry, &words(line));
        assert_eq!(of("claude -p hi").as_deref(), Some("claude"));
        assert_eq!(
            of("/x/node_modules/.bin/claude -p hi").as_deref(),
            Some("claude")
        );
        assert_eq!(
            of("env FOO=1 node /x/node_modules/@anthropic-ai/claude-code/cli.js -p").as_deref(),
            Some("claude")
        );
        assert_eq!(of("npx codex exec hi").as_deref(), Some("codex"));
        assert_eq!(of("gemini-cli").as_deref(), Some("gemini"));
        assert_eq!(of("make test"), None);
        // An argument is never taken for the harness.
        assert_eq!(of("sh -c claude"), None);
    }

    #[test]
    fn an_exit_status_reads_as_a_shell_gives_it() {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(code_of(std::process::ExitStatus::from_raw(3 << 8)), 3);
        assert_eq!(
            code_of(std::process::ExitStatus::from_raw(libc::SIGTERM)),
            143
        );
        assert_eq!(exit(0, None), ExitCode::SUCCESS);
        assert_eq!(exit(7, None), ExitCode::from(7));
    }
}
