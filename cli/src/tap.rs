//! `tether tap`: the opt-in model tap. It prints the base URL to point a
//! harness's model endpoint at (the token inside it only with
//! `--print-env HARNESS`, exactly what that harness needs); then, until
//! Ctrl-C, it passes every request on to the model API unchanged and shows
//! one line per request: the tools offered, deferred and called, by name,
//! mapped to their MCP servers. What it proves lands on the harness's
//! session in the store, beside what `tether collect` and `tether
//! sessions` know of it.

use crate::exit::Exit;
use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use tether_core::model_tap::ModelSetup;
use tether_core::registry::Registry;
use tether_guard::kept::KeptHow;
use tether_tap::{TapConfig, TapRecord};

/// What `tether tap --help` says after the flags: what it sees and keeps.
pub const TAP_AFTER_HELP: &str = "\
Privacy: the tap is the one Tether component on the path of your model traffic, and it is off \
unless you point a harness at it. It sees every request and response in full, and passes each \
on unchanged. It keeps, per request: the tools offered to the model (by name, each mapped to its \
MCP server and tool), a hash of each tool's definition, the tools named behind a tool search, the \
tools the model called, the model's name, the time, the status, the byte counts. It never keeps, \
logs or prints a message, prompt, tool description, input schema, argument, result, header value \
or credential: your API key passes through untouched. See the book's privacy chapter.

Exit codes: 0 stopped with Ctrl-C; 1 it cannot listen or open the store; 2 usage.";

/// Pass your harness's model traffic through, and see what the model was offered.
#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help("Print one JSON document (the base URL without its token, where the token is kept, and with --print-env the setup) instead of the banner and the per-request lines")))]
pub struct TapArgs {
    /// Where to listen.
    #[arg(long, default_value = "127.0.0.1:8787", value_name = "IP:PORT")]
    addr: SocketAddr,
    /// Where requests go: the model API's base URL (a gateway you run, or
    /// the provider's). Without it, each API's provider: api.anthropic.com,
    /// api.openai.com, generativelanguage.googleapis.com.
    #[arg(long, value_name = "URL")]
    upstream: Option<url::Url>,
    /// Print what HARNESS needs to send its model requests here (the
    /// harnesses are listed from the plugins), then serve.
    #[arg(long = "print-env", value_name = "HARNESS")]
    print_env: Option<String>,
    /// Make a new token (the old base URL stops working) and keep it.
    #[arg(long)]
    rotate_token: bool,
    #[command(flatten)]
    output: crate::flags::Output,
    // The sessions are written to the store.
    #[command(flatten)]
    store: crate::host::StoreArgs,
    #[command(flatten)]
    plugins: crate::host::PluginArgs,
}

fn setup_for(registry: &Registry, kind: &str, base: &str) -> Option<ModelSetup> {
    registry.harness(kind)?.roles.model_tap?.model_setup(base)
}

/// The token kept beside `tether collect`'s (`tap-token`), or new.
fn kept_token(
    rotate: bool,
) -> Result<Option<(tether_guard::Token, std::path::PathBuf, KeptHow)>, tether_guard::kept::KeptError>
{
    let Some(path) = tether_collect::default_token_file().map(|p| p.with_file_name("tap-token"))
    else {
        return Ok(None);
    };
    let (token, how) = tether_guard::kept::keep_token(&path, rotate)?;
    Ok(Some((token, path, how)))
}

pub fn run(args: TapArgs) -> anyhow::Result<ExitCode> {
    let registry = match args.plugins.registry_or_say("tether tap") {
        Ok(registry) => registry,
        Err(code) => return Ok(code),
    };
    if let Some(kind) = &args.print_env
        && setup_for(&registry, kind, "http://127.0.0.1:1/t").is_none()
    {
        let known: Vec<String> = registry
            .harnesses()
            .into_iter()
            .filter(|h| {
                h.roles
                    .model_tap
                    .is_some_and(|t| t.model_setup("http://127.0.0.1:1/t").is_some())
            })
            .map(|h| String::from(h.id))
            .collect();
        errln!(
            "tether tap: no model setup for {kind:?}; one of: {}",
            known.join(", ")
        );
        return Ok(ExitCode::from(Exit::Usage));
    }
    let Some(hub) = crate::host::hub_on_store("tether tap", &args.store, registry.clone()) else {
        return Ok(ExitCode::FAILURE);
    };
    let kept = match kept_token(args.rotate_token) {
        Ok(kept) => kept,
        Err(err) => {
            errln!("tether tap: {err} (--rotate-token makes a new one)");
            return Ok(ExitCode::FAILURE);
        }
    };
    let configured = crate::term::with_progress(
        "reading today's MCP configuration…",
        crate::host::configured_today,
    );
    let config = TapConfig {
        upstream: args.upstream.clone(),
        token: kept.as_ref().map(|(token, _, _)| token.clone()),
        configured,
        ..TapConfig::default()
    };
    let runtime = crate::host::runtime()?;
    runtime.block_on(serve(
        args,
        registry,
        hub,
        config,
        kept.map(|(_, p, how)| (p, how)),
    ))
}

async fn serve(
    args: TapArgs,
    registry: Registry,
    hub: Arc<tether_hub::Hub>,
    config: TapConfig,
    kept: Option<(std::path::PathBuf, KeptHow)>,
) -> anyhow::Result<ExitCode> {
    let running =
        match tether_tap::Tap::serve(config, args.addr, registry.clone(), Some(Arc::clone(&hub)))
            .await
        {
            Ok(running) => running,
            Err(err) => {
                errln!("tether tap: {err}");
                return Ok(ExitCode::FAILURE);
            }
        };
    // Ctrl-C is caught before the address is printed (see cancel_on_ctrl_c).
    let cancel = crate::host::cancel_on_ctrl_c();
    let base = running.base_url();
    let setup = args
        .print_env
        .as_deref()
        .and_then(|kind| setup_for(&registry, kind, &base));
    announce(&args, &running, kept.as_ref(), setup.as_ref())?;
    if !running.addr().ip().is_loopback() {
        errln!(
            "tether tap: listening on {}, which is not loopback: anyone who can reach it and holds the token can send through it",
            running.addr()
        );
    }
    let mut records = running.tap().subscribe();
    loop {
        tokio::select! {
            _ = cancel.cancelled() => break,
            record = records.recv() => match record {
                Ok(record) if !args.output.json => errln!("{}", record_line(&record)),
                Ok(_) => {}
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                    errln!("tether tap: {n} request lines skipped (the terminal fell behind)");
                }
                Err(_) => break,
            },
        }
    }
    let tap = running.tap().clone();
    running.stop().await;
    // What the observer still holds lands before the hub is flushed.
    tap.settle().await;
    let stats = tap.stats();
    hub.flush().await;
    if !args.output.json {
        let mut out = crate::term::stdout();
        writeln!(
            out,
            "tether tap: {} requests, {} passed on, {} refused, {} upstream errors, {} timeouts, {} too large; {} recorded ({} with a part unread), {} copies dropped",
            stats.requests,
            stats.forwarded,
            stats.refused,
            stats.upstream_errors,
            stats.timeouts,
            stats.too_large,
            stats.observed,
            stats.unread,
            stats.dropped
        )?;
        for id in hub.sessions() {
            if let Some(history) = hub.snapshot(&id) {
                for l in crate::term::session_lines(&history) {
                    writeln!(out, "{l}")?;
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One request, on one line: who, which model, what was offered, deferred
/// and called (names only).
fn record_line(r: &TapRecord) -> String {
    let who = match (&r.agent_kind, &r.session) {
        (Some(kind), Some(session)) => format!("{kind} {session}"),
        (Some(kind), None) => kind.clone(),
        _ => "unrecognised client".to_owned(),
    };
    let mapped = r.offered.iter().filter(|t| t.server.is_some()).count();
    let unresolved = r.offered.iter().filter(|t| t.unresolved).count();
    let mcp = if unresolved > 0 {
        format!("{mapped} MCP, {unresolved} MCP-shaped with no server resolved")
    } else {
        format!("{mapped} MCP")
    };
    let called: Vec<String> = r
        .called
        .iter()
        .map(|t| match (&t.server, &t.tool) {
            (Some(s), Some(tool)) => format!("{} ({s}/{tool})", t.name),
            _ => t.name.clone(),
        })
        .collect();
    let mut line = format!(
        "{who}: {} {} → {} {}; offered {} ({mcp}), deferred {}",
        r.api.unwrap_or("other"),
        r.model.as_deref().unwrap_or("?"),
        r.status,
        r.outcome,
        r.offered.len(),
        r.deferred.len(),
    );
    if !called.is_empty() {
        line.push_str(&format!(", called {}", called.join(", ")));
    }
    if !r.changed.is_empty() {
        line.push_str(&format!(", definitions changed: {}", r.changed.join(", ")));
    }
    if !r.unread.is_empty() {
        line.push_str(&format!(" [unread: {}]", r.unread.join(", ")));
    }
    line
}

/// The banner, or with `--json` the one document; then the setup asked for.
fn announce(
    args: &TapArgs,
    running: &tether_tap::RunningTap,
    kept: Option<&(std::path::PathBuf, KeptHow)>,
    setup: Option<&ModelSetup>,
) -> anyhow::Result<()> {
    let mut out = crate::term::stdout();
    let shown = format!("http://{}/TOKEN", running.addr());
    if args.output.json {
        // The token goes out only inside the setup --print-env asked for.
        let document = serde_json::json!({
            "schema_version": 1,
            "base_url": shown,
            "token_file": kept.map(|(p, _)| p.display().to_string()),
            "upstream": args.upstream.as_ref().map(|u| u.origin().ascii_serialization()),
            "setup": setup,
        });
        serde_json::to_writer(&mut out, &document)?;
        writeln!(out)?;
        out.flush()?;
        return Ok(());
    }
    writeln!(out, "tether tap: passing model requests on at {shown}")?;
    let upstream = args.upstream.as_ref().map_or_else(
        || "each API's provider".to_owned(),
        |u| u.origin().ascii_serialization(),
    );
    writeln!(
        out,
        "  upstream: {upstream} (never retried; unreachable is a 502 at once)"
    )?;
    match kept {
        Some((path, KeptHow::Rotated)) => writeln!(
            out,
            "  token: rotated, kept in {}: update every harness set up with the old base URL",
            path.display()
        )?,
        Some((path, _)) => writeln!(
            out,
            "  token: kept in {}, the same at every start (--print-env HARNESS prints the base URL with it)",
            path.display()
        )?,
        None => writeln!(
            out,
            "  token: new at every start (no state directory here); --print-env HARNESS prints the base URL with it"
        )?,
    }
    writeln!(
        out,
        "  It keeps tool names, hashes, the model's name and times; never a message, argument, result or key. Ctrl-C stops."
    )?;
    if let Some(setup) = setup {
        print_setup(&mut out, setup)?;
    }
    out.flush()?;
    Ok(())
}

fn print_setup(out: &mut impl Write, setup: &ModelSetup) -> std::io::Result<()> {
    writeln!(out, "# {}: set this where you start it", setup.agent_kind)?;
    for var in &setup.env {
        writeln!(
            out,
            "export {}={}",
            var.name,
            crate::term::shell_quote(&var.value)
        )?;
    }
    if let Some(snippet) = &setup.snippet {
        writeln!(out, "# add to {}:", snippet.file)?;
        for line in snippet.text.lines() {
            writeln!(out, "{line}")?;
        }
    }
    for note in &setup.notes {
        writeln!(out, "# {note}")?;
    }
    Ok(())
}
