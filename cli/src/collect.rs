//! `tether collect`: the OTLP/HTTP receiver your harnesses send their own
//! telemetry to. It prints where to send and where its token is kept (the
//! token itself only inside what `--print-env HARNESS` prints: exactly what
//! that harness needs); then, until
//! Ctrl-C, it reads what arrives into Tether sessions (one per harness
//! session; rows from today's configuration, found as `tether inventory`
//! finds it, and from the telemetry), shows each session's servers as they
//! change, and with `--db` writes them to a store `tether serve` shows live.

use crate::exit::Exit;
use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use tether_collect::{Receiver, ReceiverStats};
use tether_core::plan::DriveMode;
use tether_core::registry::Registry;
use tether_core::telemetry::{
    COLLECT_SCHEMA_VERSION, CollectDocument, HeadersSent, TelemetrySetup, TelemetryTarget,
};
use tether_guard::kept::KeptHow;

use crate::host::{PluginArgs, StoreArgs, hub_on_store};
use crate::term::{session_lines, shell_quote};

/// How `--print-env` prints a setup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum SetupFormat {
    /// Variables to export where the harness starts.
    Env,
    /// One block for a file of the harness's own.
    Settings,
}

/// Receive harnesses' own OpenTelemetry (OTLP/HTTP) on 127.0.0.1.
#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help("Print one JSON document (the endpoint, where the token is kept, and with --print-env the setup and the token) instead of the banner")))]
pub struct CollectArgs {
    /// Where to listen (4318 is the OTLP/HTTP default).
    #[arg(long, default_value = "127.0.0.1:4318", value_name = "IP:PORT")]
    addr: SocketAddr,
    /// Print what HARNESS needs to send here (the harnesses are listed from
    /// the plugins), then receive.
    #[arg(long = "print-env", value_name = "HARNESS")]
    print_env: Option<String>,
    /// How --print-env says it: `env`, variables to export (and a block
    /// for a harness that reads its exporter from its configuration), or
    /// `settings`, one block for a file of the harness's own (its settings,
    /// its `.env`, its TOML configuration), so that nothing depends on the
    /// shell profile.
    #[arg(long, value_enum, default_value = "env", requires = "print_env")]
    format: SetupFormat,
    /// Make a new token (the old one stops working) and keep it; every
    /// harness set up with the old one needs the new one (--print-env).
    #[arg(long)]
    rotate_token: bool,
    #[command(flatten)]
    output: crate::flags::Output,
    // The sessions are written to the store, for `tether serve` and
    // `tether history`.
    #[command(flatten)]
    store: StoreArgs,
    /// Also pass every admitted request, unchanged, to your own collector
    /// at this OTLP/HTTP base URL; it never delays the answer.
    #[arg(long, value_name = "URL")]
    forward: Option<String>,
    /// A header your collector wants (`Authorization=Bearer …`), repeatable.
    /// Sent only to it, never printed.
    #[arg(
        long = "forward-header",
        value_name = "NAME=VALUE",
        requires = "forward"
    )]
    forward_headers: Vec<String>,
    /// Export the collected sessions (Tether's own spans, metrics and
    /// evidence logs, never the harnesses' records) over OTLP/HTTP to this
    /// collector base URL. Only this flag turns it on: the OTEL_EXPORTER_*
    /// environment you set for a harness is not read here.
    #[arg(long, value_name = "URL")]
    otlp: Option<String>,
    // A `--load`ed plugin's harness telemetry is read, and `--print-env`
    // knows it, like a compiled-in one's.
    #[command(flatten)]
    plugins: PluginArgs,
}

/// The receiver's token, where it was kept, and how.
type Kept = (tether_guard::Token, std::path::PathBuf, KeptHow);

/// The token kept in the state directory (`None` without one), or a new
/// one kept there (`--rotate-token`: always new).
fn kept_token(rotate: bool) -> Result<Option<Kept>, tether_guard::kept::KeptError> {
    let Some(path) = tether_collect::default_token_file() else {
        return Ok(None);
    };
    let (token, how) = tether_guard::kept::keep_token(&path, rotate)?;
    Ok(Some((token, path, how)))
}

fn setup_for(registry: &Registry, kind: &str, target: &TelemetryTarget) -> Option<TelemetrySetup> {
    registry
        .observer_for(kind, DriveMode::Passthrough)?
        .roles()
        .telemetry?
        .telemetry_setup(target)
}

fn print_setup(
    out: &mut impl Write,
    setup: &TelemetrySetup,
    format: SetupFormat,
) -> std::io::Result<()> {
    match (&setup.settings, format) {
        (Some(settings), SetupFormat::Settings) => {
            writeln!(
                out,
                "# {}: merge into {} (then nothing depends on the shell that starts it; Tether writes no file of yours):",
                setup.agent_kind, settings.file
            )?;
            for line in settings.text.lines() {
                writeln!(out, "{line}")?;
            }
        }
        (settings, format) => {
            if settings.is_none() && format == SetupFormat::Settings {
                writeln!(
                    out,
                    "# {} has no settings file that takes all of this: it reads its exporter from the environment only",
                    setup.agent_kind
                )?;
            }
            writeln!(out, "# {}: set this where you start it", setup.agent_kind)?;
            for var in &setup.env {
                writeln!(out, "export {}={}", var.name, shell_quote(&var.value))?;
            }
            if let Some(snippet) = &setup.snippet {
                writeln!(out, "# add to {}:", snippet.file)?;
                for line in snippet.text.lines() {
                    writeln!(out, "{line}")?;
                }
            }
        }
    }
    if setup.headers_sent == HeadersSent::Unverified {
        writeln!(
            out,
            "# not yet seen sending the Authorization header: if nothing arrives, that is why"
        )?;
    }
    for note in &setup.notes {
        writeln!(out, "# {note}")?;
    }
    Ok(())
}

pub fn run(args: CollectArgs) -> anyhow::Result<ExitCode> {
    let registry = match args.plugins.registry_or_say("tether collect") {
        Ok(registry) => registry,
        Err(code) => return Ok(code),
    };
    if let Some(code) = refuse_usage(&args, &registry) {
        return Ok(code);
    }
    // Started before the runtime: its blocking HTTP client must not live on
    // an async worker.
    let otel = match args.otlp.as_ref().map(|url| {
        let mut config = tether_otel::OtelConfig::new("tether-collect").with_endpoint(url.clone());
        config.export_timeout = Duration::from_secs(5);
        tether_otel::TetherOtel::start(config)
    }) {
        None => None,
        Some(Ok(otel)) => otel,
        Some(Err(err)) => {
            errln!("tether collect: {err}");
            return Ok(ExitCode::from(Exit::Usage));
        }
    };
    let Some(hub) = hub(&args, registry.clone(), otel.as_ref()) else {
        return Ok(ExitCode::FAILURE);
    };
    let kept = match kept_token(args.rotate_token) {
        Ok(kept) => kept,
        Err(err) => {
            errln!("tether collect: {err} (--rotate-token makes a new one)");
            return Ok(ExitCode::FAILURE);
        }
    };
    let configured = crate::term::with_progress(
        "reading today's MCP configuration…",
        crate::host::configured_today,
    );
    let runtime = crate::host::runtime()?;
    let code = runtime.block_on(serve(args, registry, hub, kept, configured));
    drop(runtime);
    if let Some(otel) = otel {
        for problem in otel.shutdown() {
            errln!("tether collect: OpenTelemetry export: {problem}");
        }
    }
    code
}

/// A `--print-env` kind no plugin gives a setup for, or an `--otlp` that
/// names this receiver: a usage error (said), else `None`.
fn refuse_usage(args: &CollectArgs, registry: &Registry) -> Option<ExitCode> {
    // A kind is known when its plugin (compiled in or loaded) gives a setup.
    let probe_target = TelemetryTarget {
        endpoint: "http://127.0.0.1:4318".into(),
        authorization: String::new(),
    };
    if let Some(kind) = &args.print_env
        && setup_for(registry, kind, &probe_target).is_none()
    {
        let known: Vec<String> = registry
            .harnesses()
            .into_iter()
            .filter(|h| {
                h.roles
                    .telemetry
                    .is_some_and(|t| t.telemetry_setup(&probe_target).is_some())
            })
            .map(|h| String::from(h.id))
            .collect();
        errln!(
            "tether collect: no telemetry setup for {kind:?}; one of: {}",
            known.join(", ")
        );
        return Some(ExitCode::from(Exit::Usage));
    }
    if let Some(url) = &args.otlp
        && args.addr.port() != 0
        && tether_collect::forward::names_addr(url, args.addr)
    {
        errln!("tether collect: --otlp names this receiver's own address: that would loop");
        return Some(ExitCode::from(Exit::Usage));
    }
    None
}

/// The hub the sessions land in: on the store (said first), with the
/// OpenTelemetry export subscribed to it. `None` when the store cannot be opened
/// (said).
fn hub(
    args: &CollectArgs,
    registry: Registry,
    otel: Option<&tether_otel::TetherOtel>,
) -> Option<Arc<tether_hub::Hub>> {
    let hub = hub_on_store("tether collect", &args.store, registry);
    if let (Some(hub), Some(otel)) = (&hub, otel) {
        hub.add_subscriber(otel.hub_subscriber());
    }
    hub
}

/// Receives until Ctrl-C: the banner (or document), each session as it
/// changes, then what arrived.
async fn serve(
    args: CollectArgs,
    registry: Registry,
    hub: Arc<tether_hub::Hub>,
    kept: Option<Kept>,
    configured: std::collections::HashMap<String, Vec<tether_core::ServerSpec>>,
) -> anyhow::Result<ExitCode> {
    let mut config = tether_collect::service::CollectConfig::new(args.addr);
    config.token = kept.as_ref().map(|(token, _, _)| token.clone());
    if let Some(url) = &args.forward {
        let mut target = tether_collect::forward::ForwardTarget::new(url.clone());
        for header in &args.forward_headers {
            let Some((name, value)) = header.split_once('=') else {
                errln!("tether collect: --forward-header wants NAME=VALUE");
                return Ok(ExitCode::from(Exit::Usage));
            };
            target
                .headers
                .push((name.trim().to_owned(), value.to_owned()));
        }
        config.forward = Some(target);
    }
    let collect =
        match tether_collect::service::RunningCollect::start(config, Arc::clone(&hub), configured)
            .await
        {
            Ok(collect) => collect,
            Err(err @ tether_collect::service::CollectError::Listen { .. }) => {
                errln!("tether collect: {err}");
                return Ok(ExitCode::FAILURE);
            }
            Err(err) => {
                errln!("tether collect: {err}");
                return Ok(ExitCode::from(Exit::Usage));
            }
        };
    // Ctrl-C is caught before the address is printed (see cancel_on_ctrl_c).
    let cancel = crate::host::cancel_on_ctrl_c();
    let receiver = collect.receiver();
    let target = collect.target();
    let setup = args
        .print_env
        .as_deref()
        .and_then(|kind| setup_for(&registry, kind, &target));
    announce(&args, &target, receiver, kept.as_ref(), setup.as_ref())?;
    if !collect.addr().ip().is_loopback() {
        errln!(
            "tether collect: listening on {}, which is not loopback: anyone who can reach it and holds the token can send here",
            collect.addr()
        );
    }
    if !args.output.json {
        watch(receiver, &hub, &cancel).await;
    } else {
        cancel.cancelled().await;
    }
    let (receiver, read, tally) = collect.stop().await;
    hub.flush().await;
    if !args.output.json {
        summary(&receiver, &hub, &read, &tally)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The banner, or with `--json` the one document; then the setup asked for.
fn announce(
    args: &CollectArgs,
    target: &TelemetryTarget,
    receiver: &Receiver,
    kept: Option<&Kept>,
    setup: Option<&TelemetrySetup>,
) -> anyhow::Result<()> {
    let mut out = crate::term::stdout();
    if args.output.json {
        // The token goes out only inside what --print-env asked for.
        let document = CollectDocument {
            schema_version: COLLECT_SCHEMA_VERSION,
            endpoint: target.endpoint.clone(),
            token: setup.map(|_| receiver.token().secret().to_owned()),
            token_file: kept.map(|(_, path, _)| path.display().to_string()),
            setup: setup.cloned(),
        };
        serde_json::to_writer(&mut out, &document)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "tether collect: receiving OTLP/HTTP at {}",
            target.endpoint
        )?;
        // The token itself only inside the setup --print-env asked for.
        match kept {
            Some((_, path, KeptHow::Kept)) => writeln!(
                out,
                "  token: kept in {}, the same at every start (--print-env HARNESS prints the setup with it; --rotate-token makes a new one)",
                path.display()
            )?,
            Some((_, path, KeptHow::New)) => writeln!(
                out,
                "  token: new, kept in {}: set it in your harnesses once; --print-env HARNESS says how",
                path.display()
            )?,
            Some((_, path, KeptHow::Rotated)) => writeln!(
                out,
                "  token: rotated, kept in {}: the old one no longer works; update every harness set up with it (--print-env HARNESS says how)",
                path.display()
            )?,
            None => writeln!(
                out,
                "  token: new at every start (no state directory here); --print-env HARNESS prints the setup with it"
            )?,
        }
        writeln!(out, "  Ctrl-C stops.")?;
        if let Some(setup) = setup {
            print_setup(&mut out, setup, args.format)?;
        }
    }
    out.flush()?;
    Ok(())
}

/// Until Ctrl-C: the receiver's counts when they change, and each session's
/// rows when its revision does.
async fn watch(
    receiver: &Receiver,
    hub: &tether_hub::Hub,
    cancel: &tokio_util::sync::CancellationToken,
) {
    let mut revisions: std::collections::HashMap<String, u64> = Default::default();
    let mut ticker = tokio::time::interval(Duration::from_secs(2));
    let mut shown = ReceiverStats::default();
    loop {
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = ticker.tick() => {
                let now = receiver.stats();
                if now != shown {
                    errln!("{}", line(&now));
                    shown = now;
                }
                for id in hub.sessions() {
                    let Some(history) = hub.snapshot(&id) else { continue };
                    if revisions.insert(id.clone(), history.revision) != Some(history.revision) {
                        for l in session_lines(&history) {
                            errln!("{l}");
                        }
                    }
                }
            }
        }
    }
}

/// What arrived, what was read, and every session's rows.
fn summary(
    receiver: &Receiver,
    hub: &tether_hub::Hub,
    read: &tether_collect::collector::CollectorStats,
    tally: &tether_collect::pump::ServiceTally,
) -> anyhow::Result<()> {
    let mut out = crate::term::stdout();
    writeln!(out, "{}", line(&receiver.stats()))?;
    if let Some(f) = receiver.forward_stats() {
        writeln!(
            out,
            "tether collect: forwarded {}, failed {}, dropped (queue full) {}",
            f.forwarded, f.failed, f.dropped
        )?;
    }
    writeln!(
        out,
        "tether collect: {} records, {} read, {} of a kind no mapping reads, {} that could not be parsed, {} from other services, {} without a session; {} sessions",
        read.records,
        read.read,
        read.ignored,
        read.unparsed,
        read.foreign,
        read.unsessioned,
        hub.sessions().len()
    )?;
    for id in hub.sessions() {
        if let Some(history) = hub.snapshot(&id) {
            for l in session_lines(&history) {
                writeln!(out, "{l}")?;
            }
        }
    }
    for ((service, signal), n) in tally {
        writeln!(out, "  {service}: {n} {signal}")?;
    }
    Ok(())
}

fn line(s: &ReceiverStats) -> String {
    format!(
        "tether collect: {} requests, {} batches ({} items); refused {}, malformed {}, too large {}, unsupported {}, busy {}",
        s.requests, s.batches, s.items, s.refused, s.malformed, s.too_large, s.unsupported, s.busy
    )
}
