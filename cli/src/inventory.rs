//! `tether inventory`: every MCP server the user's harnesses are configured
//! with (each harness's scanner, from its plugin), how far the
//! configuration takes each one, and why it stops. `--test` runs the bounded
//! endpoint test on every enabled server; `--record`/`--changes` keep
//! snapshots in the SQLite store.
//!
//! Exit codes: 0 the scan (and every test) went through; 1 some configuration
//! file could not be used (see `errors`), a tested server failed, or the store
//! failed; 2 usage error.

use crate::exit::Exit;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use tether_core::inventory::{InventoryChanges, InventoryDocument, InventoryRow};
use tether_core::vocab::StageState;
use tether_diagnostics::endpoint_check::CheckLimits;
use tether_diagnostics::pins::check_inventory_hashing;
use tether_inventory::endpoint_test::{TestProgress, rows_to_test};
use tether_inventory::{ScanContext, scan_all, scanners};
use tether_store::SqliteStore;
use tether_words::display::{ColorClass, state_color};

use crate::host::StoreAt;
use crate::term::{bold, clear_progress, paint, show_progress};

/// List every MCP server your harnesses are configured with, and why each is on or off.
#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help("Print exactly one JSON document (see `tether schema inventory`, or `tether schema inventory-changes` with --changes)")))]
pub struct InventoryArgs {
    /// The project whose project and local scopes are read (default: the current directory).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    #[command(flatten)]
    harness: crate::flags::HarnessFilter,
    /// Only rows of this kind (repeatable): mcp_server, mcp_tool, plugin, skill, hook.
    #[arg(long = "kind", value_name = "KIND", value_parser = crate::flags::capability_kind)]
    kinds: Vec<String>,
    /// Run the bounded endpoint test (initialize + tools/list) on every enabled server,
    /// and give each listed tool its name as the model sees it and whether the harness's
    /// documented rules keep it out (predicted, never observed; `--kind mcp_tool` lists them).
    #[arg(long)]
    test: bool,
    /// Seconds each endpoint test may take.
    #[arg(long, default_value = "30", value_name = "SECONDS", value_parser = crate::host::parse_seconds)]
    timeout: Duration,
    /// Endpoint tests run at once.
    #[arg(long, default_value = "4", value_name = "N", value_parser = clap::value_parser!(u16).range(1..=32))]
    concurrency: u16,
    #[command(flatten)]
    output: crate::flags::Output,
    /// Store this scan as a timestamped snapshot in --db (a SQLite file:
    /// snapshots are not kept in PostgreSQL).
    #[arg(long)]
    record: bool,
    /// Show what was added, removed or changed between the two newest snapshots in --db
    /// (with --record: between the previous snapshot and this scan; a SQLite
    /// file only).
    #[arg(long)]
    changes: bool,
    // The store for --sessions and the pins (the one `tether collect` and
    // `tether history` use), and for --record and --changes (SQLite only).
    #[command(flatten)]
    store: crate::host::StoreArgs,
    /// Add what sessions showed: the harnesses' own session records (as
    /// `tether sessions` reads them) and the sessions stored in --db, when it
    /// exists (collected live, or imported). Each configured server's tools
    /// come from the newest session that showed them, listed and
    /// model-visible as it did.
    #[arg(long)]
    sessions: bool,
    /// With --sessions: only sessions with records since a duration back
    /// from now (`90m`, `24h`, `7d`) or an RFC 3339 time.
    #[arg(long, value_name = "WHEN", requires = "sessions")]
    since: Option<String>,
    /// With --test: do not compare each tested server's tools with their pins
    /// (`tether pins`), nor pin them. Without it, the pins are kept in --db.
    #[arg(long, requires = "test")]
    no_pins: bool,
    /// Read system-wide files (/etc/…) under DIR instead of / (containers, tests).
    #[arg(long, default_value = "/", value_name = "DIR")]
    system_root: PathBuf,
}

pub fn run(args: InventoryArgs) -> anyhow::Result<ExitCode> {
    let all = scanners();
    let known: Vec<&str> = all.iter().map(|s| s.harness()).collect();
    let (project, since) = match usage(&args, &known)? {
        Ok(found) => found,
        Err(code) => return Ok(code),
    };
    let db = match store_for(&args)? {
        Ok(db) => db,
        Err(code) => return Ok(code),
    };
    let mut ctx = ScanContext::from_env(project);
    ctx.system_root = args.system_root.clone();
    let mut document = scan_all(&ctx, &all, &args.harness.harnesses);
    // Tools come from servers: with --kind, servers stay until their tools
    // are known, and the filter applies last.
    let wants = |kind: &str| args.kinds.is_empty() || args.kinds.iter().any(|k| k == kind);
    let tools_wanted = wants("mcp_server") || wants("mcp_tool");
    let mut tests_failed = false;
    let mut pins = Vec::new();
    if args.test && tools_wanted {
        let sightings;
        (tests_failed, sightings) =
            run_tests_hashing(&mut document, &ctx, args.timeout, args.concurrency)?;
        if !args.no_pins {
            pins = compare_pins(&args, &sightings);
        }
    }
    if args.sessions && tools_wanted {
        crate::records::add_sessions(&mut document, &args.harness.harnesses, since, db.as_ref())?;
    }
    if !args.kinds.is_empty() {
        document
            .rows
            .retain(|r| args.kinds.iter().any(|k| k == r.kind.as_str()));
    }
    sort_rows(&mut document);
    let changes = record_and_compare(&args, db.as_ref(), &document)?;
    print_document(&args, &document, changes.as_ref(), &known)?;
    print_pins(&args, &pins)?;
    Ok(if document.errors.is_empty() && !tests_failed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The flags checked: every harness known, the project a directory, the
/// `--since` readable. The project and the time, or the exit code (said).
#[allow(clippy::type_complexity)]
fn usage(
    args: &InventoryArgs,
    known: &[&str],
) -> anyhow::Result<Result<(Option<PathBuf>, Option<tether_core::model::Timestamp>), ExitCode>> {
    if let Some(bad) = args
        .harness
        .harnesses
        .iter()
        .find(|h| !known.contains(&h.as_str()))
    {
        let known: Vec<String> = known.iter().map(|k| (*k).to_owned()).collect();
        let code = crate::flags::unknown_name("tether inventory", "harness", bad, &known);
        return Ok(Err(code));
    }
    let project = match &args.project {
        Some(dir) if !dir.is_dir() => {
            errln!(
                "tether inventory: --project {} is not a directory",
                dir.display()
            );
            return Ok(Err(ExitCode::from(Exit::Usage)));
        }
        Some(dir) => Some(std::path::absolute(dir)?),
        None => std::env::current_dir().ok(),
    };
    let since = match &args.since {
        None => None,
        Some(word) => match crate::records::since(word) {
            Some(t) => Some(t),
            None => {
                errln!(
                    "tether inventory: --since {word:?}: give a duration (90m, 24h, 7d) or an RFC 3339 time"
                );
                return Ok(Err(ExitCode::from(Exit::Usage)));
            }
        },
    };
    Ok(Ok((project, since)))
}

/// The store, when a flag uses one (said first, as every command does);
/// `None` when none does.
fn store_for(args: &InventoryArgs) -> anyhow::Result<Result<Option<StoreAt>, ExitCode>> {
    if !(args.record || args.changes || args.sessions) {
        return Ok(Ok(None));
    }
    let at = match args.store.at() {
        Ok(at) => at,
        Err(err) => {
            errln!("tether inventory: {err}");
            return Ok(Err(ExitCode::from(Exit::Usage)));
        }
    };
    at.announce("tether inventory");
    if (args.record || args.changes) && at.is_postgres() {
        errln!(
            "tether inventory: --record and --changes keep snapshots in a SQLite file only, not in PostgreSQL: give --db PATH"
        );
        return Ok(Err(ExitCode::from(Exit::Usage)));
    }
    if args.record {
        at.prepare()?;
    }
    if args.changes && !args.record && !at.exists() {
        errln!(
            "tether inventory: no store at {} (record snapshots with --record first)",
            at.shown()
        );
        return Ok(Err(ExitCode::FAILURE));
    }
    Ok(Ok(Some(at)))
}

/// `--record` keeps the scan; `--changes` compares the two newest.
fn record_and_compare(
    args: &InventoryArgs,
    db: Option<&StoreAt>,
    document: &InventoryDocument,
) -> anyhow::Result<Option<InventoryChanges>> {
    let Some(db) = db.filter(|_| args.record || args.changes) else {
        return Ok(None);
    };
    // A SQLite file (`store_for` refused PostgreSQL).
    let db = std::path::Path::new(&db.location);
    // --changes alone only reads.
    let store = if args.record {
        SqliteStore::open(db)?
    } else {
        SqliteStore::open_read_only(db)?
    };
    if args.record {
        let recorded = store.record_inventory(document)?;
        if !args.output.json {
            errln!("recorded snapshot {} in {}", recorded.id, db.display());
        }
    }
    Ok(if args.changes {
        Some(changes_between_newest(&store)?)
    } else {
        None
    })
}

/// One JSON document, or the table (servers, and tools only when asked).
fn print_document(
    args: &InventoryArgs,
    document: &InventoryDocument,
    changes: Option<&InventoryChanges>,
    known: &[&str],
) -> anyhow::Result<()> {
    let mut out = crate::term::stdout();
    let color = std::io::stdout().is_terminal();
    match (changes, args.output.json) {
        (Some(changes), true) => serde_json::to_writer(&mut out, changes)?,
        (Some(changes), false) => print_changes(&mut out, changes, color)?,
        (None, true) => serde_json::to_writer(&mut out, document)?,
        (None, false) => {
            let scanned: Vec<&str> = known
                .iter()
                .copied()
                .filter(|h| {
                    args.harness.harnesses.is_empty()
                        || args.harness.harnesses.iter().any(|a| a == h)
                })
                .collect();
            // A server's tools (after --test) are many: the table lists them
            // only when asked (--kind mcp_tool); the JSON always has them.
            let mut shown = document.clone();
            let asked = args.kinds.iter().any(|k| k == "mcp_tool");
            let tools = shown
                .rows
                .iter()
                .filter(|r| r.kind == tether_core::vocab::CapabilityKind::McpTool)
                .count();
            if !asked {
                shown
                    .rows
                    .retain(|r| r.kind != tether_core::vocab::CapabilityKind::McpTool);
            }
            print_table(&mut out, &shown, &scanned, color)?;
            if !asked && tools > 0 {
                writeln!(
                    out,
                    "{tools} tool{} listed by the tests or sessions: --kind mcp_tool shows them.",
                    if tools == 1 { "" } else { "s" }
                )?;
            }
        }
    }
    if args.output.json {
        writeln!(out)?;
    }
    Ok(())
}

/// Grouped by harness, then by what a row belongs to (a plugin's own rows
/// next to it), servers first.
pub(crate) fn sort_rows(document: &mut InventoryDocument) {
    document
        .rows
        .sort_by_key(|r| (r.harness.clone(), group_of(r), kind_rank(&r.kind)));
}

fn changes_between_newest(store: &SqliteStore) -> anyhow::Result<InventoryChanges> {
    let mut newest = store.inventory_snapshots(2)?.into_iter();
    let Some((to, after)) = newest.next() else {
        anyhow::bail!("the database holds no inventory snapshot yet (use --record)");
    };
    let before = newest.next();
    Ok(InventoryChanges::between(
        before.as_ref().map(|(r, d)| (r.clone(), d)),
        (to, &after),
    ))
}

/// Checks every testable row with a progress line on a terminal. Returns
/// whether any check failed.
pub(crate) fn run_tests(
    document: &mut InventoryDocument,
    ctx: &ScanContext,
    timeout: Duration,
    concurrency: u16,
) -> anyhow::Result<bool> {
    run_tests_hashing(document, ctx, timeout, concurrency).map(|(failed, _)| failed)
}

/// Each tested server's listing against its pins in the store (the first
/// sighting pins), once per server; a store that fails is said on stderr.
fn compare_pins(
    args: &InventoryArgs,
    sightings: &[tether_diagnostics::pins::Sighting],
) -> Vec<tether_core::pins::PinReport> {
    if sightings.is_empty() {
        return Vec::new();
    }
    let store = match args.store.at().and_then(|at| at.open_writable()) {
        Ok(store) => store,
        Err(err) => {
            errln!("tether inventory: pins not checked: {err:#}");
            return Vec::new();
        }
    };
    let mut reports: Vec<tether_core::pins::PinReport> = Vec::new();
    for sighting in sightings {
        // One server configured in several harnesses is tested once each: compared once.
        let server = tether_diagnostics::pins::server_of(&sighting.result);
        if reports.iter().any(|r| Some(&r.server) == server.as_ref()) {
            continue;
        }
        match tether_diagnostics::pins::compare_and_pin(
            store.as_ref(),
            &sighting.result,
            &sighting.listed,
        ) {
            Ok(Some(report)) => reports.push(report),
            Ok(None) => {}
            Err(err) => {
                errln!("tether inventory: pins not checked: {err}");
                return reports;
            }
        }
    }
    reports.sort_by(|a, b| a.server.cmp(&b.server));
    reports
}

/// The pins section after the table; with --json (whose document has no
/// place for it), one line on stderr when something changed.
fn print_pins(
    args: &InventoryArgs,
    reports: &[tether_core::pins::PinReport],
) -> std::io::Result<()> {
    let changed = reports.iter().filter(|r| r.changed()).count();
    if args.output.json {
        if changed > 0 {
            errln!(
                "tether inventory: {changed} tested server{} listed tools that differ from their pins: `tether pins list --changed`",
                if changed == 1 { "" } else { "s" }
            );
        }
        return Ok(());
    }
    if reports.is_empty() {
        return Ok(());
    }
    let mut out = crate::term::stdout();
    writeln!(out)?;
    writeln!(
        out,
        "Tool pins ({} server{} tested, {changed} with changes):",
        reports.len(),
        if reports.len() == 1 { "" } else { "s" }
    )?;
    for report in reports {
        crate::pins::write_report(&mut out, report)?;
    }
    Ok(())
}

/// [`run_tests`], keeping each listing's hashes for the pins.
fn run_tests_hashing(
    document: &mut InventoryDocument,
    ctx: &ScanContext,
    timeout: Duration,
    concurrency: u16,
) -> anyhow::Result<(bool, Vec<tether_diagnostics::pins::Sighting>)> {
    if rows_to_test(document, ctx.project.as_deref()).is_empty() {
        return Ok((false, Vec::new()));
    }
    let limits = CheckLimits {
        timeout,
        ..CheckLimits::default()
    };
    let runtime = crate::host::runtime()?;
    let show = std::io::stderr().is_terminal();
    // Each harness's last-mile rules, from its plugin.
    let registry = tether_core::registry::Registry::with_static()?;
    let rules_of = |harness: &str| {
        registry
            .harness(harness)
            .and_then(|h| h.roles.last_mile?.rules(None))
    };
    let failed = runtime.block_on(async {
        let cancel = crate::host::cancel_on_ctrl_c();
        let (tx, rx) = tokio::sync::watch::channel(TestProgress::default());
        let started = Instant::now();
        let ticker = show.then(|| {
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(Duration::from_millis(100));
                loop {
                    tick.tick().await;
                    let p = rx.borrow().clone();
                    show_progress(
                        started,
                        &format!("tested {}/{}  {}", p.done, p.total, p.running.join(", ")),
                    );
                }
            })
        });
        let failed = check_inventory_hashing(
            document,
            ctx.project.as_deref(),
            limits,
            usize::from(concurrency),
            Some(tx),
            &rules_of,
            cancel,
        )
        .await;
        if let Some(ticker) = ticker {
            ticker.abort();
        }
        failed
    });
    if show {
        clear_progress();
    }
    Ok(failed)
}

fn pad(text: &str, width: usize) -> String {
    let len = text.chars().count();
    if len >= width {
        text.to_owned()
    } else {
        format!("{text}{}", " ".repeat(width - len))
    }
}

fn tested(row: &InventoryRow) -> (String, StageState) {
    match &row.endpoint_test {
        None => ("-".into(), StageState::Unknown),
        Some(t) if t.succeeded => (
            format!("ok {} tools", t.tool_count.unwrap_or(0)),
            StageState::Yes,
        ),
        Some(t) => (
            t.reason_code
                .as_ref()
                .map_or("failed".into(), |r| r.to_string()),
            StageState::No,
        ),
    }
}

/// The plugin a row belongs to (`plugin:NAME:…`, `NAME:…` for its skills
/// and hooks, `NAME@…` for the plugin itself), or "" for the harness's own.
fn group_of(row: &InventoryRow) -> String {
    use tether_core::vocab::{CapabilityKind, ConfigScope};
    if row.scope != ConfigScope::Plugin {
        return String::new();
    }
    let name = row.name.strip_prefix("plugin:").unwrap_or(&row.name);
    match row.kind {
        CapabilityKind::Plugin => name.split('@').next().unwrap_or(name).to_owned(),
        _ => name.split(':').next().unwrap_or(name).to_owned(),
    }
}

fn kind_rank(kind: &tether_core::vocab::CapabilityKind) -> u8 {
    use tether_core::vocab::CapabilityKind as K;
    match kind {
        K::Plugin => 0,
        K::McpServer => 1,
        K::McpTool => 2,
        K::Skill => 3,
        K::Hook => 4,
        _ => 5,
    }
}

/// One table row's cells, measured and padded as they will be shown.
fn row_cells(r: &InventoryRow, kinds: bool, tokens: bool) -> Vec<String> {
    let server = r.kind == tether_core::vocab::CapabilityKind::McpServer;
    let mut cells = vec![r.harness.clone()];
    if kinds {
        cells.push(r.kind.to_string());
    }
    cells.extend([
        r.scope.to_string(),
        r.name.clone(),
        if server {
            r.transport.to_string()
        } else {
            "-".into()
        },
        // A tool's target is its name as the model sees it (predicted).
        if let Some(m) = &r.model {
            format!(
                "model: {}{}{}",
                m.model_name,
                if m.suffixed { "_<hash>" } else { "" },
                if m.deferred { " (deferred)" } else { "" }
            )
        } else if server || !r.target.is_empty() {
            r.target.clone()
        } else {
            r.diagnostics.command.clone().unwrap_or_else(|| "-".into())
        },
        r.stages.enabled.state.as_str().to_owned(),
        tested(r).0,
    ]);
    if tokens {
        cells.push(r.tool_tokens.map_or("-".into(), crate::term::thousands));
    }
    cells.push(r.reason_code.as_ref().map_or("-".into(), |c| c.to_string()));
    cells.push(r.source.clone());
    cells
        .into_iter()
        .map(|c| crate::term::visible_field(&c).into_owned())
        .collect()
}

fn print_table(
    out: &mut impl Write,
    document: &InventoryDocument,
    scanned: &[&str],
    color: bool,
) -> std::io::Result<()> {
    if document.rows.is_empty() {
        writeln!(
            out,
            "No MCP server is configured for {} (user, project and system files read).",
            scanned.join(", ")
        )?;
    } else {
        // TOKENS only once --test has listed tools (the figures come from it).
        let tokens = !document.token_totals.is_empty();
        let kinds = document
            .rows
            .iter()
            .any(|r| r.kind != tether_core::vocab::CapabilityKind::McpServer);
        let mut headers = vec!["HARNESS"];
        if kinds {
            headers.push("KIND");
        }
        headers.extend(["SCOPE", "NAME", "TRANSPORT", "TARGET", "ENABLED", "TESTED"]);
        if tokens {
            headers.push("TOKENS");
        }
        headers.extend(["REASON", "SOURCE"]);
        let cells: Vec<Vec<String>> = document
            .rows
            .iter()
            .map(|r| row_cells(r, kinds, tokens))
            .collect();
        let mut widths: Vec<usize> = headers.iter().map(|h| h.len()).collect();
        for row in &cells {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line: Vec<String> = headers
            .iter()
            .zip(&widths)
            .map(|(h, w)| pad(h, *w))
            .collect();
        writeln!(out, "{}", bold(line.join("  ").trim_end(), color))?;
        for (row, cell) in document.rows.iter().zip(&cells) {
            let mut parts = Vec::new();
            for ((text, w), header) in cell.iter().zip(&widths).zip(&headers) {
                let padded = pad(text, *w);
                parts.push(match *header {
                    "ENABLED" => paint(state_color(row.stages.enabled.state), &padded, color),
                    "TESTED" => paint(state_color(tested(row).1), &padded, color),
                    "REASON" if row.reason_code.is_some() => {
                        paint(ColorClass::Amber, &padded, color)
                    }
                    _ => padded,
                });
            }
            writeln!(out, "{}", parts.join("  ").trim_end())?;
        }
        if tokens {
            print_token_totals(out, document)?;
        }
        print_explained(out, document)?;
        print_calls(out, document)?;
    }
    print_footer(out, document, color)
}

/// Under the table: each row's sentence, and for the capability reasons what
/// to do.
fn print_explained(out: &mut impl Write, document: &InventoryDocument) -> std::io::Result<()> {
    let explained: Vec<&InventoryRow> = document
        .rows
        .iter()
        .filter(|r| r.summary.is_some())
        .collect();
    if !explained.is_empty() {
        writeln!(out)?;
        for r in explained {
            // The capability reasons say what to do in one more sentence.
            use tether_core::vocab::ReasonCode as R;
            let hint = match &r.reason_code {
                Some(code @ (R::NotInstalled | R::UnresolvedVariable | R::RelativeCommand)) => {
                    tether_words::display::reason_hint(code)
                        .map(|h| format!(" ({h})"))
                        .unwrap_or_default()
                }
                _ => String::new(),
            };
            writeln!(
                out,
                "  {}/{} {}: {}{hint}",
                r.harness,
                r.scope,
                r.name,
                r.summary.as_deref().unwrap_or("")
            )?;
        }
    }
    Ok(())
}

/// What each server's permission settings predict for a call to its tools
/// (and to the tools a rule names), then the rows' notes.
fn print_calls(out: &mut impl Write, document: &InventoryDocument) -> std::io::Result<()> {
    let servers: Vec<&InventoryRow> = document
        .rows
        .iter()
        .filter(|r| r.kind == tether_core::vocab::CapabilityKind::McpServer)
        .filter(|r| r.call_policy.is_some())
        .collect();
    if !servers.is_empty() {
        writeln!(out)?;
        writeln!(out, "Calls, as the permission settings predict them:")?;
    }
    for r in servers {
        let Some(policy) = &r.call_policy else {
            continue;
        };
        let (harness, scope, name) = (&r.harness, &r.scope, &r.name);
        let (verdict, why) = (policy.verdict_words(), &policy.summary);
        writeln!(out, "  {harness}/{scope} {name}: {verdict} ({why})")?;
        for tool in &policy.tools {
            let (verdict, why) = (tool.policy.verdict_words(), &tool.policy.summary);
            writeln!(out, "    {}: {verdict} ({why})", tool.tool)?;
        }
    }
    let noted: Vec<&InventoryRow> = document
        .rows
        .iter()
        .filter(|r| !r.notes.is_empty())
        .collect();
    if !noted.is_empty() {
        writeln!(out)?;
        writeln!(out, "Notes:")?;
    }
    for r in noted {
        for note in &r.notes {
            let (harness, scope, name) = (&r.harness, &r.scope, &r.name);
            writeln!(out, "  {harness}/{scope} {name}: {}", note.text)?;
        }
    }
    Ok(())
}

/// The files that could not be used, and the counts.
fn print_footer(
    out: &mut impl Write,
    document: &InventoryDocument,
    color: bool,
) -> std::io::Result<()> {
    if !document.errors.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "{}",
            paint(
                ColorClass::Red,
                "Configuration files that could not be used:",
                color
            )
        )?;
        for e in &document.errors {
            writeln!(
                out,
                "  {} {}: {} — {}",
                e.harness,
                crate::term::visible_field(&e.source),
                e.reason_code,
                e.summary
            )?;
        }
    }
    use tether_core::vocab::CapabilityKind;
    let servers: Vec<&InventoryRow> = document
        .rows
        .iter()
        .filter(|r| r.kind == CapabilityKind::McpServer)
        .collect();
    let enabled = servers.iter().filter(|r| r.is_enabled()).count();
    let harnesses: std::collections::BTreeSet<&str> =
        document.rows.iter().map(|r| r.harness.as_str()).collect();
    // Plugins, skills and hooks, counted beside the servers.
    let mut others = Vec::new();
    for (kind, word) in [
        (CapabilityKind::Plugin, "plugin"),
        (CapabilityKind::Skill, "skill"),
        (CapabilityKind::Hook, "hook"),
        (CapabilityKind::McpTool, "tool"),
    ] {
        let n = document.rows.iter().filter(|r| r.kind == kind).count();
        if n > 0 {
            others.push(format!("{n} {word}{}", if n == 1 { "" } else { "s" }));
        }
    }
    let others = if others.is_empty() {
        String::new()
    } else {
        format!("; {}", others.join(", "))
    };
    writeln!(out)?;
    writeln!(
        out,
        "{} server{} in {} harness{}: {enabled} enabled by configuration, {} held back{others}; {} unusable file{}.",
        servers.len(),
        if servers.len() == 1 { "" } else { "s" },
        harnesses.len(),
        if harnesses.len() == 1 { "" } else { "es" },
        servers.len() - enabled,
        document.errors.len(),
        if document.errors.len() == 1 { "" } else { "s" },
    )
}

fn print_changes(
    out: &mut impl Write,
    changes: &InventoryChanges,
    color: bool,
) -> std::io::Result<()> {
    let when = |r: &Option<tether_core::inventory::SnapshotRef>| {
        r.as_ref().map_or("(nothing)".to_owned(), |r| {
            format!("snapshot {} ({})", r.id, r.taken_at)
        })
    };
    writeln!(
        out,
        "From {} to {}:",
        when(&changes.from),
        when(&changes.to)
    )?;
    if changes.added.is_empty() && changes.removed.is_empty() && changes.changed.is_empty() {
        writeln!(out, "  no changes")?;
    }
    for r in &changes.added {
        let line = format!(
            "+ {}/{} {} ({} {}, enabled {})",
            r.harness,
            r.scope,
            r.name,
            r.transport,
            r.target,
            r.stages.enabled.state.as_str()
        );
        writeln!(out, "{}", paint(ColorClass::Green, &line, color))?;
    }
    for r in &changes.removed {
        let line = format!(
            "- {}/{} {} ({} {})",
            r.harness, r.scope, r.name, r.transport, r.target
        );
        writeln!(out, "{}", paint(ColorClass::Red, &line, color))?;
    }
    for c in &changes.changed {
        writeln!(
            out,
            "{}",
            paint(
                ColorClass::Amber,
                &format!("~ {}/{} {}", c.harness, c.scope, c.name),
                color
            )
        )?;
        for f in &c.changes {
            writeln!(out, "    {}: {} → {}", f.field, f.before, f.after)?;
        }
    }
    Ok(())
}

/// What each harness's configuration costs the model before the first
/// prompt: per scope, and the harness as a whole.
fn print_token_totals(out: &mut impl Write, document: &InventoryDocument) -> std::io::Result<()> {
    writeln!(out)?;
    writeln!(
        out,
        "What each configuration costs the model before the first prompt (o200k_base estimate of the enabled servers' tool definitions, tool filters applied):"
    )?;
    for total in &document.token_totals {
        let scope = total
            .scope
            .as_ref()
            .map_or("all scopes".to_owned(), |s| s.to_string());
        let unmeasured = match total.unmeasured {
            0 => String::new(),
            n => format!(
                "  (+{n} enabled server{} not measured)",
                if n == 1 { "" } else { "s" }
            ),
        };
        writeln!(
            out,
            "  {:<10} {:<11} {:>9} tokens over {} server{}{unmeasured}",
            total.harness,
            scope,
            crate::term::thousands(total.tokens),
            total.servers,
            if total.servers == 1 { "" } else { "s" },
        )?;
    }
    Ok(())
}
