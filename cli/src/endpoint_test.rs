//! `tether endpoint-test`: is this one MCP server alive? Bounded
//! initialize + tools/list (and, only when asked with `--call`, one
//! tools/call); progress on a terminal; one JSON document with `--json`.
//! After a listing, each tool's definition is compared with the pins the
//! store keeps for the server (`tether pins`; the first sighting pins).
//! Exit codes: 0 passed, 1 failed (or the asked-for call failed, or, with
//! `--fail-on-change`, a pinned definition changed or the pins could not be
//! checked), 2 usage error.

use crate::exit::Exit;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use tether_core::diagnostics::EndpointTestDocument;
use tether_core::model::EndpointTestResult;
use tether_core::store::Store;
use tether_core::{Endpoint, KeyValue};
use tether_diagnostics::endpoint_check::{
    CheckLimits, ToolCall, check_endpoint_hashing, endpoint_for_url,
};
use tether_inventory::lookup::load_server_spec;

/// Test one MCP server: a bounded initialize + tools/list.
#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help("Print exactly one JSON document (see `tether schema endpoint-test`)")))]
#[command(group(clap::ArgGroup::new("target").required(true).args(["url", "config", "command"])))]
pub struct EndpointTestArgs {
    /// Seconds the whole test may take.
    #[arg(long, default_value = "30", value_name = "SECONDS", value_parser = crate::host::parse_seconds)]
    timeout: Duration,
    #[command(flatten)]
    output: crate::flags::Output,
    /// Also list each tool with its token estimate (in --json: `tools`, the
    /// bounded catalog).
    #[arg(long)]
    tools: bool,
    /// A streamable HTTP (or, with --sse or a path ending in /sse, legacy SSE) server.
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// Speak legacy HTTP+SSE to --url.
    #[arg(long, requires = "url")]
    sse: bool,
    /// A header to send to --url, as 'Name: value' (repeatable).
    #[arg(long = "header", value_name = "'K: V'", requires = "url", value_parser = parse_header)]
    headers: Vec<(String, String)>,
    /// A JSON {"mcpServers": …} file, or a TOML config.toml ([mcp_servers.NAME]).
    #[arg(long, value_name = "FILE", requires = "server")]
    config: Option<PathBuf>,
    /// The server's name in --config.
    #[arg(long, value_name = "NAME", requires = "config")]
    server: Option<String>,
    /// After the listing, call this one tool (by the name the server
    /// lists) and report whether a result came back: its isError and how
    /// many content blocks, never the content. Off unless asked: calling a
    /// tool can do what the tool does.
    #[arg(long, value_name = "TOOL")]
    call: Option<String>,
    /// The --call's arguments, a JSON object (default {}). Sent, never kept
    /// or printed.
    #[arg(long, value_name = "JSON", requires = "call", value_parser = parse_arguments)]
    arguments: Option<serde_json::Map<String, serde_json::Value>>,
    // The store keeps the tool pins (hashes of each tool's definition).
    #[command(flatten)]
    store: crate::host::StoreArgs,
    /// Do not compare the listing with the pins, nor pin it.
    #[arg(long, conflicts_with = "fail_on_change")]
    no_pins: bool,
    /// Fail (exit 1) when a tool's definition differs from its pin, a tool
    /// appeared or disappeared, or the pins could not be checked: for CI.
    #[arg(long)]
    fail_on_change: bool,
    /// A stdio server's command and arguments.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

fn parse_arguments(s: &str) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    match serde_json::from_str(s) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(_) => Err("expected a JSON object, like '{\"a\": 1}'".into()),
        // serde's message quotes no input, only where it stopped.
        Err(err) => Err(format!("not JSON: {err}")),
    }
}

fn parse_header(s: &str) -> Result<(String, String), String> {
    match s.split_once(':') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_owned(), v.trim().to_owned())),
        _ => Err("expected 'Name: value'".into()),
    }
}

/// What to test, and when its configuration needs variables that are not
/// set here, a summary naming them (a test would only report what they
/// lead to: `host_not_found`, a 401).
fn endpoint(args: &EndpointTestArgs) -> anyhow::Result<(Endpoint, Option<String>)> {
    if let Some(url) = &args.url {
        let headers = args
            .headers
            .iter()
            .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
            .collect();
        return Ok((endpoint_for_url(url, headers, args.sse), None));
    }
    if let (Some(path), Some(name)) = (&args.config, &args.server) {
        let mut spec = load_server_spec(path, name)?;
        let unset = (!spec.unset_vars.is_empty()).then(|| {
            tether_core::plan::unset_summary(&tether_core::plan::unset_names(
                &spec.scrubber(),
                &spec.unset_vars,
            ))
        });
        let endpoint = spec.endpoints.remove(0);
        return Ok((endpoint, unset));
    }
    let (command, rest) = args.command.split_first().ok_or_else(|| {
        anyhow::anyhow!("give --url, --config with --server, or a command after --")
    })?;
    Ok((
        Endpoint::Stdio {
            command: command.clone(),
            args: rest.to_vec(),
            env: vec![],
            cwd: None,
        },
        None,
    ))
}

pub fn run(args: EndpointTestArgs) -> anyhow::Result<ExitCode> {
    let (endpoint, unset) = match endpoint(&args) {
        Ok(found) => found,
        Err(err) => {
            errln!("tether endpoint-test: {err:#}");
            return Ok(ExitCode::from(Exit::Usage));
        }
    };
    // The store opens while the server is checked (its integrity check
    // and migrations cost time of their own).
    let pins_store = (!args.no_pins).then(|| open_pins_store(args.store.clone()));
    let (report, catalog, listed) = match unset {
        // The cause already: not tested.
        Some(summary) => (
            EndpointTestResult::failed(
                &endpoint,
                tether_hub::now(),
                Some(tether_core::vocab::ReasonCode::UnresolvedVariable),
                Some(summary),
                0,
            ),
            None,
            None,
        ),
        None => {
            let call = args.call.clone().map(|tool| ToolCall {
                tool,
                arguments: args.arguments.clone().unwrap_or_default(),
            });
            test(&endpoint, args.timeout, call.as_ref())?
        }
    };
    let pins = match (pins_store, listed) {
        (Some(store), Some(listed)) => compare_pins(store, &report, &listed),
        (Some(store), None) => {
            // Nothing listed: the store only finishes opening.
            let _ = store.join();
            PinOutcome::NotChecked
        }
        (None, _) => PinOutcome::NotChecked,
    };
    // Asked to call a tool, the test passes only when the call did too.
    let mut passed = report.succeeded && report.call.as_ref().is_none_or(|c| c.succeeded);
    if args.fail_on_change && report.succeeded {
        passed &= matches!(&pins, PinOutcome::Compared(r) if !r.changed());
    }
    let mut out = crate::term::stdout();
    if args.output.json {
        let mut doc = EndpointTestDocument::from(&report);
        if args.tools {
            doc.tools = catalog;
        }
        if let PinOutcome::Compared(pins) = pins {
            doc.pins = Some(pins);
        }
        serde_json::to_writer(&mut out, &doc)?;
        writeln!(out)?;
    } else {
        write_human(&mut out, &report, catalog.as_ref().filter(|_| args.tools))?;
        if let PinOutcome::Compared(pins) = &pins {
            crate::pins::write_report(&mut out, pins)?;
        }
    }
    Ok(if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The store for pins, opening on its own thread.
type PinsStore = std::thread::JoinHandle<anyhow::Result<std::sync::Arc<dyn Store>>>;

fn open_pins_store(store: crate::host::StoreArgs) -> PinsStore {
    std::thread::spawn(move || store.at()?.open_writable())
}

/// What became of the pin comparison.
enum PinOutcome {
    /// Not asked (`--no-pins`), or nothing listed.
    NotChecked,
    /// Compared (and written back).
    Compared(tether_core::pins::PinReport),
    /// The store failed (said on stderr).
    Failed,
}

/// The listing against the server's pins; a store that fails is said on
/// stderr and leaves the test's result as it was.
fn compare_pins(
    store: PinsStore,
    report: &EndpointTestResult,
    listed: &tether_diagnostics::endpoint_check::ListedHashes,
) -> PinOutcome {
    let store = match store.join() {
        Ok(Ok(store)) => store,
        Ok(Err(err)) => {
            errln!("tether endpoint-test: pins not checked: {err:#}");
            return PinOutcome::Failed;
        }
        Err(_) => {
            errln!("tether endpoint-test: pins not checked: the store could not be opened");
            return PinOutcome::Failed;
        }
    };
    match tether_diagnostics::pins::compare_and_pin(store.as_ref(), report, listed) {
        Ok(Some(pins)) => PinOutcome::Compared(pins),
        Ok(None) => PinOutcome::NotChecked,
        Err(err) => {
            errln!("tether endpoint-test: pins not checked: {err}");
            PinOutcome::Failed
        }
    }
}

/// The result in a line (two with a fallback's note), the asked-for
/// call's, and with `catalog` one line per tool.
fn write_human(
    out: &mut impl Write,
    report: &EndpointTestResult,
    catalog: Option<&tether_core::model::ToolCatalog>,
) -> std::io::Result<()> {
    if !report.succeeded {
        return writeln!(
            out,
            "failed  {} {}: {} — {} ({} ms)",
            report.transport,
            report.target,
            report
                .reason_code
                .as_ref()
                .map_or("unknown", |r| r.as_str()),
            report.summary.as_deref().unwrap_or(""),
            report.elapsed_ms
        );
    }
    writeln!(
        out,
        "passed  {} {}: {} {} (protocol {}, {} era), {} tool{}{}, {} ms",
        report.transport,
        report.target,
        report.server_name.as_deref().unwrap_or("?"),
        report.server_version.as_deref().unwrap_or(""),
        report.protocol_version.as_deref().unwrap_or("?"),
        report.era.as_deref().unwrap_or("?"),
        report.tool_count.unwrap_or(0),
        if report.tool_count == Some(1) {
            ""
        } else {
            "s"
        },
        report
            .tool_tokens
            .map(|t| format!(" ≈ {} tokens", crate::term::thousands(t)))
            .unwrap_or_default(),
        report.elapsed_ms
    )?;
    if let Some(summary) = &report.summary {
        writeln!(out, "        {summary}")?;
    }
    if let Some(call) = &report.call {
        write_call(out, call)?;
    }
    match catalog {
        Some(catalog) => write_tools(out, catalog),
        None => Ok(()),
    }
}

/// Runs the bounded initialize + tools/list, with progress on a terminal.
fn test(
    endpoint: &Endpoint,
    timeout: Duration,
    call: Option<&ToolCall>,
) -> anyhow::Result<(
    EndpointTestResult,
    Option<tether_core::model::ToolCatalog>,
    Option<tether_diagnostics::endpoint_check::ListedHashes>,
)> {
    let limits = CheckLimits {
        timeout,
        ..CheckLimits::default()
    };
    let runtime = crate::host::runtime()?;
    let show = std::io::stderr().is_terminal();
    let target = format!("{} {}", endpoint.transport(), endpoint.target());
    let found = runtime.block_on(async {
        let cancel = crate::host::cancel_on_ctrl_c();
        let test = check_endpoint_hashing(endpoint, limits, call, cancel);
        tokio::pin!(test);
        let started = Instant::now();
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        loop {
            tokio::select! {
                report = &mut test => break report,
                _ = tick.tick(), if show => crate::term::show_progress(
                    started,
                    &format!(
                        "testing {target}: initialize + tools/list{}",
                        if call.is_some() { " + tools/call" } else { "" }
                    ),
                ),
            }
        }
    });
    if show {
        crate::term::clear_progress();
    }
    Ok(found)
}

/// The asked-for call, in one line: what came back, never what it said.
fn write_call(
    out: &mut impl Write,
    call: &tether_core::model::ToolCallCheck,
) -> std::io::Result<()> {
    if call.succeeded {
        let items = call.content_items.unwrap_or(0);
        writeln!(
            out,
            "called  {}: a result, {} content block{}{}, {} ms",
            call.tool,
            items,
            if items == 1 { "" } else { "s" },
            if call.structured == Some(true) {
                " and structured content"
            } else {
                ""
            },
            call.elapsed_ms
        )
    } else {
        writeln!(
            out,
            "failed  call {}: {} — {} ({} ms)",
            call.tool,
            call.reason_code.as_ref().map_or("is_error", |r| r.as_str()),
            call.summary.as_deref().unwrap_or(""),
            call.elapsed_ms
        )
    }
}

/// One line per tool: its token estimate and name, largest first.
fn write_tools(
    out: &mut impl Write,
    catalog: &tether_core::model::ToolCatalog,
) -> std::io::Result<()> {
    let mut tools: Vec<_> = catalog.tools.iter().collect();
    tools.sort_by(|a, b| {
        b.token_estimate
            .cmp(&a.token_estimate)
            .then(a.name.cmp(&b.name))
    });
    writeln!(out, "  {:>8}  tool ({})", "tokens", catalog.method)?;
    for tool in tools {
        let cut = if tool.description_truncated || tool.input_schema_truncated {
            "  (description or schema cut in the catalog; the estimate covers all of it)"
        } else {
            ""
        };
        writeln!(
            out,
            "  {:>8}  {}{cut}",
            crate::term::thousands(u64::from(tool.token_estimate)),
            tool.name
        )?;
    }
    if catalog.truncated {
        writeln!(
            out,
            "  … {} more tools not listed (counted in the total)",
            catalog.tool_count as usize - catalog.tools.len()
        )?;
    }
    writeln!(
        out,
        "  {:>8}  total over {} tools",
        crate::term::thousands(catalog.total_tokens),
        catalog.tool_count
    )
}
