//! `tether history`: stored attachment histories, rendered through the shared
//! display projection (a table with status colors on a terminal, and each
//! server's checklist), or as a JSON array of `AttachmentHistory` documents.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::Args;
use tether_core::history::AttachmentHistory;
use tether_core::store::Store;
use tether_store::{Followed, StoreFollower};
use tether_words::display::project_row_in;

use crate::host::Opened;
use crate::term::paint;

/// Show stored attachment histories.
#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help("Print a JSON array of AttachmentHistory documents (see `tether schema history`); with --follow, one document per line, as sessions change")))]
pub struct HistoryArgs {
    #[command(flatten)]
    store: crate::host::StoreArgs,
    /// Only this session.
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    #[command(flatten)]
    output: crate::flags::Output,
    /// Keep running and print each session again when any host changes it
    /// (PostgreSQL: announced by NOTIFY; SQLite: checked every 250 ms).
    #[arg(long)]
    follow: bool,
}

/// The store the command was given (`--db`, `TETHER_DB`, or the default),
/// said first, opened to read.
fn open_named(store: &crate::host::StoreArgs, who: &str) -> anyhow::Result<Option<Opened>> {
    let at = store.at()?;
    at.announce(who);
    at.open_read_only(who)
}

fn load(store: &dyn Store, session: Option<&String>) -> anyhow::Result<Vec<AttachmentHistory>> {
    if let Some(id) = session {
        // A keyed read: one session never means reading the fleet.
        return Ok(store.load(id)?.into_iter().collect());
    }
    let loaded = store.load_all()?;
    for skipped in loaded
        .skipped
        .iter()
        .filter(|s| session.is_none_or(|id| *id == s.session_id))
    {
        errln!(
            "tether history: skipped session {}: {}",
            skipped.session_id,
            skipped.reason
        );
    }
    Ok(loaded
        .histories
        .into_iter()
        .filter(|h| session.is_none_or(|s| *s == h.session_id))
        .collect())
}

pub fn run(args: HistoryArgs) -> anyhow::Result<ExitCode> {
    let opened = match open_named(&args.store, "tether history") {
        Ok(Some(opened)) => opened,
        Ok(None) => return Ok(ExitCode::FAILURE),
        Err(err) => {
            errln!("tether history: {err}");
            return Ok(ExitCode::FAILURE);
        }
    };
    if args.follow {
        return follow(opened, &args);
    }
    let histories = crate::term::with_progress("reading the stored sessions…", || {
        load(opened.store(), args.session.as_ref())
    })?;
    let mut out = crate::term::stdout();
    if args.output.json {
        serde_json::to_writer(&mut out, &histories)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if histories.is_empty() {
        writeln!(out, "no stored histories")?;
    }
    render(&mut out, &histories)?;
    Ok(ExitCode::SUCCESS)
}

fn print_each(
    out: &mut impl Write,
    histories: &[AttachmentHistory],
    json: bool,
) -> anyhow::Result<()> {
    if json {
        for history in histories {
            serde_json::to_writer(&mut *out, history)?;
            writeln!(out)?;
        }
    } else {
        render(out, histories)?;
    }
    out.flush()?;
    Ok(())
}

/// Prints what is stored, then every session again whenever its revision
/// changes (or it is removed), until interrupted: the one store follower
/// (`tether_store::StoreFollower`) the live status service uses too.
fn follow(opened: Opened, args: &HistoryArgs) -> anyhow::Result<ExitCode> {
    let (store, hint) = opened.into_followed()?;
    let mut follower = StoreFollower::new(store, hint).only(args.session.clone());
    let loaded = crate::term::with_progress("reading the stored sessions…", || follower.load())?;
    for skipped in &loaded.skipped {
        errln!(
            "tether history: skipped session {}: {}",
            skipped.session_id,
            skipped.reason
        );
    }
    let mut out = crate::term::stdout();
    print_each(&mut out, &loaded.histories, args.output.json)?;
    loop {
        follower.wait();
        // A store that cannot be read ends the follow, as it always has.
        let found = follower.pass()?;
        // Removals first, then changes, each in session order.
        let mut changed = Vec::new();
        for change in found {
            match change {
                Followed::Changed(history) => changed.push(history),
                Followed::Removed(id) if !args.output.json => {
                    writeln!(out, "session {id} · removed")?
                }
                Followed::Removed(_) => {}
            }
        }
        print_each(&mut out, &changed, args.output.json)?;
    }
}

/// The configuration an attempt started with: counts, then a line a row.
fn render_snapshot(
    out: &mut impl Write,
    snapshot: &tether_core::inventory::InventoryDocument,
) -> anyhow::Result<()> {
    let enabled = snapshot.rows.iter().filter(|r| r.is_enabled()).count();
    writeln!(
        out,
        "    configuration at the time: {} server{} ({enabled} enabled), {} unusable file{}",
        snapshot.rows.len(),
        if snapshot.rows.len() == 1 { "" } else { "s" },
        snapshot.errors.len(),
        if snapshot.errors.len() == 1 { "" } else { "s" },
    )?;
    for r in &snapshot.rows {
        writeln!(
            out,
            "      {}/{} {} {} {}: enabled {}{}",
            r.harness,
            r.scope,
            r.name,
            r.transport,
            r.target,
            r.stages.enabled.state.as_str(),
            r.reason_code
                .as_ref()
                .map_or(String::new(), |c| format!(" ({c})"))
        )?;
    }
    Ok(())
}

fn render(out: &mut impl Write, histories: &[AttachmentHistory]) -> anyhow::Result<()> {
    let color = std::io::stdout().is_terminal();
    for history in histories {
        writeln!(
            out,
            "session {} · task {}",
            history.session_id, history.task_id
        )?;
        for attempt in history.attempts.iter().rev() {
            let current =
                history.current_attempt_id.as_deref() == Some(attempt.attempt_id.as_str());
            writeln!(
                out,
                "  attempt {} · {} · {} · started {}{}",
                attempt.attempt_id,
                attempt.trigger,
                attempt.agent_kind,
                attempt.started_at,
                if current {
                    " · current"
                } else {
                    " · history"
                }
            )?;
            if let Some(err) = &attempt.report_error {
                writeln!(
                    out,
                    "    report-level error: {} {}",
                    err.reason_code,
                    err.summary.as_deref().unwrap_or("")
                )?;
            }
            if let Some(snapshot) = &attempt.config_snapshot {
                render_snapshot(out, snapshot)?;
            }
            writeln!(out, "    {:<24} {:<34} TARGET", "SERVER", "STATUS")?;
            for row in &attempt.servers {
                let view = project_row_in(attempt, row);
                let label = format!("{:<34}", view.label);
                writeln!(
                    out,
                    "    {:<24} {} {}",
                    view.name,
                    paint(view.color, &label, color),
                    view.target
                )?;
                let checklist: Vec<String> = view
                    .checklist
                    .iter()
                    .map(|c| format!("{} {}", c.label, c.mark))
                    .collect();
                writeln!(out, "      {}", checklist.join(" · "))?;
                for detail in &view.details {
                    writeln!(out, "      {detail}")?;
                }
            }
        }
    }
    Ok(())
}
