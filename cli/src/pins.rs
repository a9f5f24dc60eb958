//! `tether pins`: the tool definition pins a store keeps (hashes of each
//! tool's title, description, schemas and annotations, per server; never
//! the text): list them, accept a change (pin it anew), forget a server.
//! `tether endpoint-test` and `tether inventory --test` pin and compare.
//!
//! Exit codes: 0 done; 1 the store failed, or no such server or tool;
//! 2 usage error.

use std::io::Write;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use tether_core::pins::{PinReport, ToolPin, accept};
use tether_core::store::Store;

/// List, accept or forget tool definition pins.
#[derive(Debug, Args)]
pub struct PinsArgs {
    #[command(subcommand)]
    command: PinsCommand,
    // `--db` is global here (before or after the subcommand): `main` says so.
    #[command(flatten)]
    store: crate::host::StoreArgs,
}

#[derive(Debug, Subcommand)]
enum PinsCommand {
    /// Every pinned tool, by server, and whether its newest listing agrees with its pin.
    List {
        /// Only this server (`NAME@TARGET`, as listed).
        server: Option<String>,
        /// Only tools whose newest listing differs from their pin.
        #[arg(long)]
        changed: bool,
    },
    /// Pin anew what the newest listing showed: one tool (`SERVER/TOOL`) or every tool of
    /// a server (a changed or added tool is pinned as seen; a removed one is forgotten).
    Accept {
        /// `SERVER` or `SERVER/TOOL` (`SERVER` is `NAME@TARGET`, as `tether pins list` shows it).
        target: String,
    },
    /// Forget every pin of a server: its next listing pins it anew.
    Forget {
        /// `NAME@TARGET`, as `tether pins list` shows it.
        server: String,
    },
}

pub fn run(args: PinsArgs) -> anyhow::Result<ExitCode> {
    let store = match args.store.open_writable("tether pins") {
        Ok(store) => store,
        Err(code) => return Ok(code),
    };
    let mut out = crate::term::stdout();
    match args.command {
        PinsCommand::List { server, changed } => {
            list(&mut out, store.as_ref(), server.as_deref(), changed)
        }
        PinsCommand::Accept { target } => {
            let Some((server, tool)) = resolve(store.as_ref(), &target)? else {
                errln!(
                    "tether pins: no pins for {target:?}: give SERVER or SERVER/TOOL as `tether pins list` shows them"
                );
                return Ok(ExitCode::FAILURE);
            };
            let rows = store.tool_pins(Some(&server))?;
            let (rows, accepted) = match accept(&rows, tool.as_deref(), tether_hub::now()) {
                Ok(done) => done,
                Err(err) => {
                    errln!("tether pins: {err}");
                    return Ok(ExitCode::FAILURE);
                }
            };
            store.replace_tool_pins(&server, &rows)?;
            let what = tool.map_or_else(|| server.clone(), |t| format!("{server}/{t}"));
            if accepted == 0 {
                writeln!(out, "{what}: already as pinned; nothing to accept")?;
            } else {
                writeln!(
                    out,
                    "{what}: {accepted} change{} accepted and pinned anew",
                    if accepted == 1 { "" } else { "s" }
                )?;
            }
            Ok(ExitCode::SUCCESS)
        }
        PinsCommand::Forget { server } => {
            let rows = store.tool_pins(Some(&server))?;
            if rows.is_empty() {
                errln!("tether pins: no pins for {server:?}");
                return Ok(ExitCode::FAILURE);
            }
            store.replace_tool_pins(&server, &[])?;
            writeln!(
                out,
                "{server}: {} pin{} forgotten; its next listing pins it anew",
                rows.len(),
                if rows.len() == 1 { "" } else { "s" }
            )?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `list`: every pin (of `server`; only the changed ones with `changed`).
fn list(
    out: &mut impl Write,
    store: &dyn Store,
    server: Option<&str>,
    changed: bool,
) -> anyhow::Result<ExitCode> {
    let mut pins = store.tool_pins(server)?;
    if changed {
        pins.retain(|p| p.change().is_some());
    }
    if pins.is_empty() {
        match server {
            Some(server) => errln!("tether pins: no pins for {server}"),
            None if changed => writeln!(out, "every pinned tool is listed as pinned")?,
            None => writeln!(
                out,
                "no pins yet: `tether endpoint-test` or `tether inventory --test` pins a server's tools the first time it lists them"
            )?,
        }
        return Ok(if server.is_some() {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        });
    }
    write_list(out, &pins)?;
    Ok(ExitCode::SUCCESS)
}

/// `SERVER` or `SERVER/TOOL`, read against the servers the store has pins
/// for (a server's name and target may hold `/` themselves): the whole
/// argument when it names a server, else the longest prefix before a `/`
/// that does.
fn resolve(store: &dyn Store, target: &str) -> anyhow::Result<Option<(String, Option<String>)>> {
    if !store.tool_pins(Some(target))?.is_empty() {
        return Ok(Some((target.to_owned(), None)));
    }
    for (i, _) in target.rmatch_indices('/') {
        let (server, tool) = (&target[..i], &target[i + 1..]);
        if !tool.is_empty() && !store.tool_pins(Some(server))?.is_empty() {
            return Ok(Some((server.to_owned(), Some(tool.to_owned()))));
        }
    }
    Ok(None)
}

/// One line per tool, under its server: its state against its pin.
fn write_list(out: &mut impl Write, pins: &[ToolPin]) -> std::io::Result<()> {
    let width = pins
        .iter()
        .map(|p| p.tool.chars().count())
        .max()
        .unwrap_or(0)
        .min(48);
    let mut server = None;
    for pin in pins {
        if server != Some(&pin.server) {
            server = Some(&pin.server);
            let changed = pins
                .iter()
                .filter(|p| p.server == pin.server && p.change().is_some())
                .count();
            writeln!(
                out,
                "{}  (seen {}){}",
                pin.server,
                pin.seen_at,
                if changed > 0 {
                    format!("  {changed} not as pinned")
                } else {
                    String::new()
                }
            )?;
        }
        let state = match pin.change() {
            None => format!(
                "pinned{}",
                pin.pinned_at.map(|t| format!(" {t}")).unwrap_or_default()
            ),
            Some(change) => format!("{}: {}", change.evidence, reasons(&change.reasons)),
        };
        writeln!(out, "  {:width$}  {state}", pin.tool)?;
    }
    Ok(())
}

fn reasons(reasons: &[tether_core::vocab::ReasonCode]) -> String {
    reasons
        .iter()
        .map(|r| r.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A listing against its pins, for `endpoint-test` and `inventory --test`:
/// one line, then a line per change and what to do.
pub(crate) fn write_report(out: &mut impl Write, report: &PinReport) -> std::io::Result<()> {
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    if report.first_sighting {
        return writeln!(
            out,
            "pins    {}: first sighting, {} tool{} pinned",
            report.server,
            report.listed,
            plural(report.listed as usize)
        );
    }
    if report.changes.is_empty() {
        return writeln!(
            out,
            "pins    {}: {} tool{} as pinned",
            report.server,
            report.listed,
            plural(report.listed as usize)
        );
    }
    writeln!(
        out,
        "pins    {}: {} change{} since pinned ({} of {} listed tools as pinned)",
        report.server,
        report.changes.len(),
        plural(report.changes.len()),
        report.unchanged,
        report.listed
    )?;
    for change in &report.changes {
        writeln!(
            out,
            "        {}  {}: {}",
            change.tool,
            change.evidence,
            reasons(&change.reasons)
        )?;
    }
    writeln!(
        out,
        "        `tether pins accept {}[/TOOL]` pins a change anew once you trust it; `tether explain CODE` says what each means",
        report.server
    )
}
