//! `tether probe`: argument handling, progress and rendering. The work itself
//! is `tether_probe::acp::run_probe`.

use crate::exit::Exit;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use tether_core::probe::{ProbeReport, Verdict};
use tether_probe::{
    PassthroughOptions, ProbeOptions, ProbeOutcome, ProbeStep, ProbeTarget, SentinelTransport,
    run_passthrough_probe, run_probe,
};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum TransportArg {
    /// The best the agent advertises: http, then sse, then the stdio bridge.
    Auto,
    /// Streamable HTTP.
    Http,
    /// Legacy HTTP+SSE.
    Sse,
    /// The stdio bridge (`tether-bridge`).
    Stdio,
}

/// How the probe's wait ends, and its exit codes (`tether probe --help`).
pub const PROBE_AFTER_HELP: &str = "\
How the wait ends: on evidence, never on a tuned delay.
  ACP: once the sentinel's tools/list (or, with --prompt, its call) is seen
    and session/new is answered or refused.
  Passthrough: once the sentinel's tools/list is seen and, for a CLI that
    reports its servers (a stream-json system/init line, or its events), its
    report has settled for every delivered server (a tool count, or failed,
    needs-auth, disabled).
  Either way the agent's exit ends the wait at once (before any contact the
  verdict is agent_exited), and --timeout bounds everything. --grace applies
  only once everything else has settled and the agent may still connect
  lazily. The verdict is printed as soon as it is decided; tether exits once
  every child is gone.

Exit codes: 0 a verdict; 3 agent_failed, session_refused or agent_exited (the
JSON is still printed); 2 a usage error; 1 an internal error.";

/// Does this agent really attach to an injected MCP server, and how far does it get?
#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help("Print exactly one JSON document (see `tether schema probe-report`)")))]
pub struct ProbeArgs {
    /// How the sentinel MCP server is offered.
    #[arg(long, value_enum, default_value = "auto")]
    transport: TransportArg,
    /// Once everything else has settled, seconds a lazy agent may still take to connect before "delivered_unverified".
    #[arg(long, default_value = "3", value_name = "SECONDS", value_parser = crate::host::parse_seconds)]
    grace: Duration,
    /// Seconds the whole probe may take.
    #[arg(long, default_value = "60", value_name = "SECONDS", value_parser = crate::host::parse_seconds)]
    timeout: Duration,
    /// Send one prompt asking the agent to call the sentinel tool, and report whether it did.
    #[arg(long, value_name = "TEXT")]
    prompt: Option<String>,
    /// Call ACP `authenticate` with this method id before `session/new`.
    #[arg(long, value_name = "METHOD_ID")]
    authenticate: Option<String>,
    /// Run the agent here instead of in a fresh temporary directory.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Set an environment variable for the agent (repeatable).
    #[arg(long = "env", value_name = "K=V", value_parser = parse_env)]
    env: Vec<(String, String)>,
    /// Pass this shell's whole environment to the agent (HOME stays private).
    #[arg(long)]
    inherit_env: bool,
    /// Give the agent the real HOME instead of a private temporary one.
    #[arg(long)]
    keep_home: bool,
    /// Write raw ACP frames and sentinel lifecycle markers (JSONL) here.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// A JSON {"mcpServers": …} file or a TOML config.toml to take --server entries from.
    #[arg(long, value_name = "FILE", requires = "server")]
    config: Option<PathBuf>,
    /// Also offer this server from --config beside the sentinel (repeatable).
    #[arg(long = "server", value_name = "NAME", requires = "config")]
    server: Vec<String>,
    /// Offer the --server entries through Tether's observing relay, so their
    /// rows show what they really served (stdio servers; others are
    /// delivered directly, and a note says so).
    #[arg(long, requires = "server")]
    observe_servers: bool,
    #[command(flatten)]
    plugins: crate::host::PluginArgs,
    /// Probe a CLI run as a plain process (the kinds are listed from the plugins) instead of an ACP agent.
    #[arg(long, value_name = "KIND")]
    passthrough: Option<String>,
    /// Export the probe's spans, metrics and evidence logs over OTLP/HTTP to
    /// this collector base URL (`/v1/traces`, … are appended). Without it,
    /// the OTEL_EXPORTER_OTLP_* environment decides; OTEL_SDK_DISABLED=true
    /// turns export off.
    #[arg(long, value_name = "URL")]
    otlp: Option<String>,
    #[command(flatten)]
    output: crate::flags::Output,
    /// The agent command and its arguments.
    #[arg(last = true, required = true, value_name = "AGENT_CMD")]
    command: Vec<String>,
}

fn parse_env(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
        _ => Err("expected K=V".into()),
    }
}

/// A live progress line on stderr, only when stderr is a terminal.
struct Progress {
    enabled: bool,
    started: Instant,
    last: Mutex<String>,
}

impl Progress {
    fn new(enabled: bool) -> Self {
        Progress {
            enabled,
            started: Instant::now(),
            last: Mutex::new(String::new()),
        }
    }

    fn show(&self, step: &ProbeStep) {
        if !self.enabled {
            return;
        }
        let text = match step {
            ProbeStep::Spawning => "starting the agent".to_owned(),
            ProbeStep::Initializing => "initialize".to_owned(),
            ProbeStep::SessionRequested => "session/new with the sentinel".to_owned(),
            ProbeStep::SessionAccepted => {
                "session accepted; waiting for the agent to connect".to_owned()
            }
            ProbeStep::Waiting(label) => format!("sentinel: {label}"),
            ProbeStep::Prompting => "prompt sent; waiting for the sentinel call".to_owned(),
            ProbeStep::Finishing => "stopping the agent".to_owned(),
            ProbeStep::Decided(_) => return,
            ProbeStep::Exporting => "exporting telemetry (OTLP)".to_owned(),
        };
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if *last == text {
            return;
        }
        crate::term::show_progress(self.started, &text);
        *last = text;
    }

    fn clear(&self) {
        if self.enabled {
            crate::term::clear_progress();
        }
    }
}

/// Without `--passthrough`: a command that is a harness's own CLI, given
/// without any ACP mode among its words (`acp`, `--acp`,
/// `--experimental-acp`), does not speak ACP; it would sit silent on the
/// probe's `initialize` until `--timeout` (`claude -p hi` waits for its
/// stdin to end). Said at once, naming the passthrough kind; exit 2.
fn not_an_acp_agent(args: &ProbeArgs) -> Option<ExitCode> {
    if args.passthrough.is_some() {
        return None;
    }
    let registry = tether_core::registry::Registry::with_static().ok()?;
    let words: Vec<std::ffi::OsString> = args.command.iter().map(Into::into).collect();
    let kind = crate::run::harness_of(&registry, &words)?;
    registry.harness(&kind)?.strategy?;
    let acp_mode = args
        .command
        .iter()
        .skip(1)
        .any(|w| w.to_ascii_lowercase().contains("acp"));
    if acp_mode {
        return None;
    }
    // The command's words are never repeated: one may be a prompt.
    errln!(
        "tether probe: this command is {kind}'s own CLI, which does not speak ACP (no ACP mode among its arguments): probe it as a plain process, `tether probe --passthrough {kind} -- <the same command>`, or give its ACP mode or its ACP adapter"
    );
    Some(ExitCode::from(Exit::Usage))
}

fn extra_servers(args: &ProbeArgs) -> anyhow::Result<Vec<tether_core::ServerSpec>> {
    let Some(path) = &args.config else {
        return Ok(vec![]);
    };
    args.server
        .iter()
        .map(|name| Ok(tether_inventory::lookup::load_server_spec(path, name)?))
        .collect()
}

pub fn run(args: ProbeArgs) -> anyhow::Result<ExitCode> {
    let (program, rest) = args
        .command
        .split_first()
        .ok_or_else(|| anyhow::anyhow!("give the agent command after --"))?;
    if let Some(code) = not_an_acp_agent(&args) {
        return Ok(code);
    }
    let mut otel_config = tether_otel::OtelConfig::from_env("tether-probe");
    otel_config.export_timeout = Duration::from_secs(5);
    if let Some(url) = &args.otlp {
        otel_config = otel_config.with_endpoint(url.clone());
    }
    let otel = match tether_otel::TetherOtel::start(otel_config) {
        Ok(otel) => otel,
        Err(err) => {
            errln!("tether probe: {err}");
            return Ok(ExitCode::from(Exit::Usage));
        }
    };
    let export = tether_probe::ProbeExport {
        served: otel.as_ref().map(|o| o.served_observer()),
        hub: otel.as_ref().map(|o| o.hub_subscriber()),
    };
    let target = match probe_target(&args, program, rest, export) {
        Ok(target) => target,
        Err(err) => {
            errln!("tether probe: {err:#}");
            return Ok(ExitCode::from(Exit::Usage));
        }
    };
    let progress = Progress::new(std::io::stderr().is_terminal());
    // The verdict is printed the moment the probe decides it; stopping the
    // agent and the sentinel comes after, and the process exits only once
    // every child is gone.
    let printed: Mutex<Option<std::io::Result<()>>> = Mutex::new(None);
    let print = |outcome: &ProbeOutcome| {
        let mut printed = printed.lock().unwrap_or_else(|p| p.into_inner());
        if printed.is_none() {
            progress.clear();
            *printed = Some(print_outcome(outcome, &args));
        }
    };
    let step = |step: ProbeStep| match step {
        ProbeStep::Decided(outcome) => print(&outcome),
        other => progress.show(&other),
    };
    let outcome = match drive(&args, target, step)? {
        Ok(outcome) => outcome,
        Err(code) => return Ok(code),
    };
    // Every path hands its outcome over before cleanup; print here if one
    // did not (an early failure).
    print(&outcome);
    if let Some(otel) = otel {
        export_verdict(otel, &outcome, &progress);
    }
    progress.clear();
    if let Some(result) = printed.lock().unwrap_or_else(|p| p.into_inner()).take() {
        result?;
    }
    Ok(match outcome.report.verdict {
        Verdict::AgentFailed | Verdict::SessionRefused | Verdict::AgentExited => Exit::AgentFailed,
        _ => Exit::Success,
    }
    .into())
}

/// Runs the probe (ACP, or a passthrough CLI with `--passthrough`) to its
/// outcome, each step to `step`; a plugin load that fails is an exit code.
fn drive(
    args: &ProbeArgs,
    target: ProbeTarget,
    step: impl Fn(ProbeStep) + Send + Sync,
) -> anyhow::Result<Result<ProbeOutcome, ExitCode>> {
    let runtime = crate::host::runtime()?;
    Ok(Ok(match &args.passthrough {
        None => {
            let opts = ProbeOptions {
                target,
                prompt: args.prompt.clone(),
                authenticate: args.authenticate.clone(),
            };
            runtime.block_on(run_probe(opts, step))
        }
        Some(kind) => {
            let passthrough = PassthroughOptions {
                kind: kind.clone(),
                target,
            };
            let registry = match args.plugins.registry_or_say("tether probe") {
                Ok(registry) => registry,
                Err(code) => return Ok(Err(code)),
            };
            runtime.block_on(run_passthrough_probe(registry, passthrough, step))
        }
    }))
}

/// What to probe, from the flags: the agent, its environment, the sentinel's
/// transport, the bounds, and any extra servers.
fn probe_target(
    args: &ProbeArgs,
    program: &str,
    rest: &[String],
    export: tether_probe::ProbeExport,
) -> anyhow::Result<ProbeTarget> {
    Ok(ProbeTarget {
        program: program.to_owned(),
        args: rest.to_vec(),
        env: args.env.clone(),
        inherit_env: args.inherit_env,
        keep_home: args.keep_home,
        cwd: args.cwd.clone(),
        transport: match args.transport {
            TransportArg::Auto => SentinelTransport::Auto,
            TransportArg::Http => SentinelTransport::Http,
            TransportArg::Sse => SentinelTransport::Sse,
            TransportArg::Stdio => SentinelTransport::Stdio,
        },
        grace: args.grace,
        timeout: args.timeout,
        out_dir: args.out.clone(),
        bridge_program: None,
        extra_servers: extra_servers(args)?,
        observe_servers: args.observe_servers,
        export,
    })
}

/// The verdict recorded, and the export flushed (problems said).
fn export_verdict(otel: tether_otel::TetherOtel, outcome: &ProbeOutcome, progress: &Progress) {
    let agent_kind = outcome
        .report
        .report
        .as_ref()
        .map_or_else(|| "unknown".to_owned(), |a| a.agent_kind.clone());
    otel.record_probe_verdict(outcome.report.verdict, &agent_kind);
    progress.show(&ProbeStep::Exporting);
    for problem in otel.shutdown() {
        progress.clear();
        errln!("tether probe: OpenTelemetry export: {problem}");
    }
}

/// The outcome on stdout: one JSON document, or the summary.
fn print_outcome(outcome: &ProbeOutcome, args: &ProbeArgs) -> std::io::Result<()> {
    let mut out = crate::term::stdout();
    if args.output.json {
        serde_json::to_writer(&mut out, &outcome.report)?;
        writeln!(out)?;
    } else {
        render(&mut out, outcome, args)?;
    }
    out.flush()
}

fn mark(b: bool) -> &'static str {
    if b { "✓" } else { "✗" }
}

fn render(out: &mut impl Write, outcome: &ProbeOutcome, args: &ProbeArgs) -> std::io::Result<()> {
    render_agent(out, outcome, args)?;
    render_sentinel(out, outcome, args)?;
    render_servers(out, outcome)?;
    render_verdict(out, outcome)
}

/// The agent, what it offers, its session, and what it reported.
fn render_agent(
    out: &mut impl Write,
    outcome: &ProbeOutcome,
    args: &ProbeArgs,
) -> std::io::Result<()> {
    let r: &ProbeReport = &outcome.report;

    let agent = match (&r.agent.name, &r.agent.version) {
        (Some(n), Some(v)) => format!("{n} {v}"),
        (Some(n), None) => n.clone(),
        _ => "unknown (no initialize answer)".to_owned(),
    };
    writeln!(out, "Agent     {agent}")?;
    if r.verdict != Verdict::AgentFailed {
        writeln!(
            out,
            "Offers    http {}  sse {}  session/load {}",
            mark(r.advertised.http),
            mark(r.advertised.sse),
            mark(r.advertised.load_session)
        )?;
    }
    if let Some(cwd) = &outcome.cwd_sent {
        writeln!(out, "cwd       {}", cwd.display())?;
    }
    match (&r.session.accepted, &r.session.acp_session_id) {
        (true, Some(id)) => writeln!(out, "Session   accepted ({id})")?,
        (true, None) if args.passthrough.is_some() => writeln!(out, "Process   started")?,
        (true, None) => writeln!(out, "Session   accepted")?,
        (false, _) if args.passthrough.is_some() && r.verdict != Verdict::AgentFailed => {
            writeln!(out, "Process   not started (nothing to deliver)")?
        }
        (false, _) if r.session.error.is_none() && r.verdict != Verdict::AgentFailed => {
            writeln!(out, "Session   not answered yet when the probe ended")?
        }
        (false, _) => writeln!(out, "Session   not accepted")?,
    }
    if let Some(err) = &r.session.error {
        writeln!(
            out,
            "          {}: {}",
            err.reason_code,
            err.summary.as_deref().unwrap_or("")
        )?;
    }
    if let Some(attempt) = &r.report {
        for ev in attempt
            .evidence
            .iter()
            .filter(|e| e.kind == tether_core::EvidenceKind::AgentReported)
        {
            writeln!(
                out,
                "Reported  {}: {}{}",
                ev.server.as_deref().unwrap_or("?"),
                ev.reported_status.as_deref().unwrap_or("?"),
                ev.tool_count
                    .map(|n| format!(", {n} model-visible tools"))
                    .unwrap_or_default()
            )?;
        }
    }
    Ok(())
}

/// The sentinel: its row, and each step it saw.
fn render_sentinel(
    out: &mut impl Write,
    outcome: &ProbeOutcome,
    args: &ProbeArgs,
) -> std::io::Result<()> {
    let r: &ProbeReport = &outcome.report;
    let s = &r.sentinel;
    if r.verdict != Verdict::AgentFailed {
        let row_label = r
            .report
            .as_ref()
            .and_then(|a| a.server(&s.name).map(|row| (a, row)))
            .map(|(a, row)| tether_words::display::status_label_in(a, row))
            .unwrap_or_default();
        let transport = s
            .transport
            .as_ref()
            .map_or_else(|| "nothing".to_owned(), ToString::to_string);
        writeln!(out, "Sentinel  {} over {transport}: {row_label}", s.name)?;
        let client = s
            .client
            .as_ref()
            .map(|c| format!("client {} {}", c.name, c.version.as_deref().unwrap_or("")))
            .unwrap_or_else(|| "no client seen".into());
        let contact = s
            .first_contact_ms
            .map(|ms| format!(", first contact after {ms} ms"))
            .unwrap_or_default();
        writeln!(out, "          delivered {}", mark(s.delivered))?;
        writeln!(
            out,
            "          initialize {} ({client}{contact})",
            mark(s.initialize_observed)
        )?;
        writeln!(
            out,
            "          tools/list {}{}",
            mark(s.tools_list_observed),
            s.tool_count
                .map(|n| format!(" ({n} tool{})", if n == 1 { "" } else { "s" }))
                .unwrap_or_default()
        )?;
        let sentinel_tokens = r
            .report
            .as_ref()
            .and_then(|a| a.server(&s.name))
            .and_then(|row| row.tool_catalog.as_ref());
        if let Some(catalog) = sentinel_tokens {
            writeln!(
                out,
                "          its tools cost the model ≈ {} tokens ({})",
                crate::term::thousands(catalog.total_tokens),
                catalog.method
            )?;
        }
        if args.prompt.is_some() {
            writeln!(out, "          tools/call {}", mark(s.tool_call_observed))?;
        }
    }
    Ok(())
}

/// Every other server offered beside the sentinel, and who vouched for it.
fn render_servers(out: &mut impl Write, outcome: &ProbeOutcome) -> std::io::Result<()> {
    let r: &ProbeReport = &outcome.report;
    let s = &r.sentinel;
    if let Some(attempt) = &r.report {
        for row in attempt.servers.iter().filter(|row| row.name != s.name) {
            writeln!(
                out,
                "Server    {} ({} {}): {} [{}]{}",
                row.name,
                row.transport,
                row.target,
                tether_words::display::status_label_in(attempt, row),
                tether_words::display::vouched_by(row),
                row.tool_catalog
                    .as_ref()
                    .map(|c| format!(", ≈ {} tokens", crate::term::thousands(c.total_tokens)))
                    .unwrap_or_default()
            )?;
            // Why it stopped, when something says (a variable that is not
            // set here, a harness's failure).
            if row.reason_code.is_some()
                && !matches!(
                    row.status,
                    tether_core::DisplayStatus::Active | tether_core::DisplayStatus::Connected
                )
            {
                writeln!(out, "          {}", tether_words::display::stopped(row))?;
            }
            if let Some(note) = &row.note {
                writeln!(out, "          note: {note}")?;
            }
        }
    }
    Ok(())
}

/// The verdict and its hint, what was refused or unmatched, and how the
/// agent exited.
fn render_verdict(out: &mut impl Write, outcome: &ProbeOutcome) -> std::io::Result<()> {
    let r: &ProbeReport = &outcome.report;
    writeln!(
        out,
        "Verdict   {}  ({:.2} s)",
        r.verdict.as_str(),
        r.elapsed_ms as f64 / 1000.0
    )?;
    let hint = tether_words::display::verdict_hint(r.verdict);
    writeln!(out, "          {hint}")?;
    let refused = r.report.as_ref().map_or(0, |a| {
        a.evidence
            .iter()
            .filter(|e| e.kind == tether_core::EvidenceKind::UnauthenticatedContact)
            .count()
    });
    if refused > 0 {
        writeln!(
            out,
            "Refused   {refused} request{} that lacked the sentinel's credential; none counts as contact",
            if refused == 1 { "" } else { "s" }
        )?;
    }
    let unattributed = r.report.as_ref().map_or(0, |a| a.unattributed_evidence);
    if unattributed > 0 {
        writeln!(
            out,
            "Unmatched {unattributed} evidence event{} named a server that is no row here (one the agent found in its own configuration, say); counted, not applied",
            if unattributed == 1 { "" } else { "s" }
        )?;
    }
    if let Some(exit) = &r.agent_exit {
        writeln!(
            out,
            "Exited    the agent's process ended by itself: {}{}",
            exit.describe(),
            if exit.before_contact {
                ", before any contact with the sentinel"
            } else {
                ""
            }
        )?;
        if !exit.stderr_tail.is_empty() {
            writeln!(out, "Agent stderr (last lines, scrubbed):")?;
            for line in &exit.stderr_tail {
                writeln!(out, "  | {line}")?;
            }
        }
    } else if r.verdict == Verdict::AgentFailed && !outcome.stderr_tail.is_empty() {
        writeln!(out, "Agent stderr (last lines, scrubbed):")?;
        for line in &outcome.stderr_tail {
            writeln!(out, "  | {line}")?;
        }
    }
    Ok(())
}
