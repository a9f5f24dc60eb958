//! `tether history`: stored attachment histories, rendered through the shared
//! display projection (a table with status colors on a terminal, and each
//! server's checklist), or as a JSON array of `AttachmentHistory` documents.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use tether_core::display::project_row;

use crate::term::paint;
use tether_core::store::Store;
use tether_store::SqliteStore;

/// Show stored attachment histories.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The SQLite database a host (or `examples/host`) wrote.
    #[arg(long, default_value = "tether.db", value_name = "PATH")]
    db: PathBuf,
    /// Only this session.
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    /// Print a JSON array of AttachmentHistory documents (see `tether schema history`).
    #[arg(long)]
    json: bool,
}

pub fn run(args: HistoryArgs) -> anyhow::Result<ExitCode> {
    if !args.db.exists() {
        eprintln!(
            "tether history: no database at {} (give --db, the file a host writes)",
            args.db.display()
        );
        return Ok(ExitCode::FAILURE);
    }
    let store = SqliteStore::open_read_only(&args.db)?;
    let loaded = store.load_all()?;
    for skipped in &loaded.skipped {
        eprintln!(
            "tether history: skipped session {}: {}",
            skipped.session_id, skipped.reason
        );
    }
    let histories: Vec<_> = loaded
        .histories
        .into_iter()
        .filter(|h| args.session.as_ref().is_none_or(|s| *s == h.session_id))
        .collect();
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &histories)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if histories.is_empty() {
        writeln!(out, "no stored histories")?;
    }
    let color = std::io::stdout().is_terminal();
    for history in &histories {
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
            }
            writeln!(out, "    {:<24} {:<34} TARGET", "SERVER", "STATUS")?;
            for row in &attempt.servers {
                let view = project_row(row);
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
    Ok(ExitCode::SUCCESS)
}
