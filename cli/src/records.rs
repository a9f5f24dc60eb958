//! The harnesses' session records as several commands read and show them
//! (`sessions`, `inventory --sessions`, `mcp`, `run`, `check`): read with a
//! progress line, each session's current attempt and the tools it showed
//! (with a store's sessions added), `--since` read, and a session's matrix
//! printed as `tether sessions show` prints it.

use std::io::{IsTerminal, Write};

use tether_core::model::Timestamp;
use tether_core::records::{FileReport, SessionDocument, SessionSummary};
use tether_core::registry::Registry;
use tether_records::{Filter, Home, Records};
use tether_words::display::color_class;

use crate::term::visible_field;

/// `--since`: an RFC 3339 time, or a duration back from now (`90m`, `24h`,
/// `7d`, `2w`).
pub(crate) fn since(word: &str) -> Option<Timestamp> {
    if let Some(t) = Timestamp::parse_rfc3339(word) {
        return Some(t);
    }
    let (digits, unit) = word.split_at(word.find(|c: char| !c.is_ascii_digit())?);
    let n: u64 = digits.parse().ok()?;
    let secs = match unit {
        "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        "d" => n * 86_400,
        "w" => n * 7 * 86_400,
        _ => return None,
    };
    let now = tether_hub::now();
    Some(Timestamp(now.0.saturating_sub(secs.saturating_mul(1000))))
}

/// The session records of `filter`, read once, with today's configuration
/// (a progress line on a terminal for each); each file read on from where
/// the default store's ledger left it (`Records::keep_in`).
pub(crate) fn read(registry: &Registry, filter: Filter) -> Records {
    read_kept(registry, filter, default_ledger(), Reading::All)
}

/// What a read builds of the sessions whose files did not change since the
/// ledger's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reading {
    /// Every session.
    All,
    /// None (for an import into the ledger's store).
    OnlyChanged,
    /// None: they are listed from their kept summaries
    /// (`Records::listing_only`), and built when asked for by id.
    Listing,
    /// As `Listing`, every other session summed up a group of files at a
    /// time (`Records::summing_up`: `sessions list`, memory flat in the
    /// number of files).
    List,
}

/// [`read`] for a listing, or to find sessions by id
/// ([`Reading::Listing`]).
pub(crate) fn read_listing(registry: &Registry, filter: Filter) -> Records {
    read_kept(registry, filter, default_ledger(), Reading::Listing)
}

/// [`read`] for `sessions list` ([`Reading::List`]).
pub(crate) fn read_list(registry: &Registry, filter: Filter) -> Records {
    read_kept(registry, filter, default_ledger(), Reading::List)
}

/// [`read`], with `ledger` kept.
pub(crate) fn read_kept(
    registry: &Registry,
    filter: Filter,
    ledger: Option<std::sync::Arc<dyn tether_core::store::Store>>,
    reading: Reading,
) -> Records {
    let configured = crate::term::with_progress(
        "reading today's MCP configuration…",
        crate::host::configured_today,
    );
    let mut records = Records::new(registry, &Home::from_env(), configured, filter);
    if let Some(ledger) = ledger {
        records.keep_in(ledger);
        match reading {
            Reading::All => {}
            Reading::OnlyChanged => records.only_changed(),
            Reading::Listing => records.listing_only(),
            Reading::List => {
                records.listing_only();
                records.summing_up();
            }
        }
    }
    let progress = records.progress();
    crate::term::with_progress_of(
        "reading the harnesses' session records…",
        || {
            let now = progress.now();
            crate::term::read_so_far(
                now.files_done,
                now.files_total,
                now.bytes_done,
                now.bytes_total,
            )
        },
        || {
            records.read(true);
        },
    );
    records
}

/// The store `TETHER_DB` names, or the default store where a command made
/// it already, when it is a SQLite file that opens: where `read` keeps how
/// far each file was read. A command that only reads never makes the
/// default store. Silent otherwise (the files are then read whole).
fn default_ledger() -> Option<std::sync::Arc<dyn tether_core::store::Store>> {
    let at = crate::host::StoreArgs::default().at().ok()?;
    if at.is_postgres() || (at.named == crate::host::Named::Default && !at.exists()) {
        return None;
    }
    match at.open_writable() {
        Ok(store) => Some(store),
        Err(error) => {
            tracing::debug!(%error, "no ledger of record files; every file is read whole");
            None
        }
    }
}

/// The names of `harnesses` the registry has a harness for (all of them,
/// as an empty list, when none is given); `None` where names were given
/// and none has one, so nothing is to be read.
fn with_readers(registry: &Registry, harnesses: &[String]) -> Option<Vec<String>> {
    let known: Vec<String> = registry
        .harnesses()
        .into_iter()
        .map(|h| String::from(h.id))
        .collect();
    let wanted: Vec<String> = harnesses
        .iter()
        .filter(|h| known.contains(h))
        .cloned()
        .collect();
    (harnesses.is_empty() || !wanted.is_empty()).then_some(wanted)
}

/// Every session on disk of `harnesses` (every harness with a reader when
/// empty; names without one are skipped) with records since `since`, newest
/// first: its summary and its current attempt.
pub(crate) fn recorded_attempts(
    harnesses: &[String],
    since: Option<Timestamp>,
) -> anyhow::Result<Vec<(SessionSummary, tether_core::history::AttachmentAttempt)>> {
    let registry = Registry::with_static()?;
    let Some(wanted) = with_readers(&registry, harnesses) else {
        return Ok(Vec::new());
    };
    let records = read(
        &registry,
        Filter {
            harnesses: wanted,
            since,
            project: None,
        },
    );
    Ok(records
        .summaries()
        .into_iter()
        .filter_map(|(summary, history)| Some((summary, history.current()?.clone())))
        .collect())
}

/// The sessions on disk of some harnesses, read as a listing reads them
/// (each file read on from the ledger, the sessions of unchanged files
/// known from their kept summaries): known without their histories, each
/// built only when an answer asks for it (`tether mcp`).
pub(crate) struct OnDisk {
    records: Option<Records>,
    /// Every session, newest first.
    pub(crate) known: Vec<tether_records::Known>,
}

impl OnDisk {
    /// The sessions of `harnesses` (every harness with a reader when
    /// empty; names without one are skipped) with records since `since`.
    pub(crate) fn read(harnesses: &[String], since: Option<Timestamp>) -> anyhow::Result<Self> {
        let registry = Registry::with_static()?;
        let Some(wanted) = with_readers(&registry, harnesses) else {
            return Ok(OnDisk {
                records: None,
                known: Vec::new(),
            });
        };
        let records = read_listing(
            &registry,
            Filter {
                harnesses: wanted,
                since,
                project: None,
            },
        );
        Ok(OnDisk {
            known: records.known(),
            records: Some(records),
        })
    }

    /// No session (the records were not read).
    pub(crate) fn empty() -> Self {
        OnDisk {
            records: None,
            known: Vec::new(),
        }
    }

    /// Every session's summary, newest first: a history is built only for
    /// a session whose files changed since its summary was kept.
    pub(crate) fn listing(&self) -> Vec<SessionSummary> {
        self.records
            .as_ref()
            .map(Records::listing)
            .unwrap_or_default()
    }

    /// Whether the session `id` (a Tether id from [`known`](OnDisk::known))
    /// is a harness's own health check, not an agent session.
    pub(crate) fn is_health_check(&self, id: &str) -> bool {
        self.records
            .as_ref()
            .is_some_and(|records| records.is_health_check(id))
    }

    /// The current attempt of the session `id` (a Tether id from
    /// [`known`](OnDisk::known)), its history built now.
    pub(crate) fn attempt(&mut self, id: &str) -> Option<tether_core::history::AttachmentAttempt> {
        let records = self.records.as_mut()?;
        if !records.sessions().contains_key(id) {
            records.build_where(|tether_id, _| tether_id == id);
        }
        let facts = records.sessions().get(id)?;
        let history = records.history(facts, None).ok()?;
        history.current().cloned()
    }
}

/// What the harnesses' own session records show of each session's servers
/// and tools, for `tether inventory --sessions` ([`recorded_attempts`]).
pub(crate) fn session_tools(
    harnesses: &[String],
    since: Option<Timestamp>,
) -> anyhow::Result<Vec<tether_inventory::SessionTools>> {
    Ok(recorded_attempts(harnesses, since)?
        .into_iter()
        // A harness's own health check ran no agent: never the newest
        // session a server's tools are taken from.
        .filter(|(summary, _)| !summary.health_check)
        .map(|(summary, attempt)| tether_inventory::SessionTools {
            harness: summary.agent_kind,
            session_id: summary.session_id,
            updated_at: summary.updated_at,
            servers: attempt.servers,
            capabilities: attempt.capabilities,
        })
        .collect())
}

/// Each configured server's tools as the newest session of `harnesses`
/// (all when empty) since `since` showed them: the harnesses' own records,
/// and the sessions stored in `db` when it exists (collected live, or
/// imported).
pub(crate) fn add_sessions(
    document: &mut tether_core::inventory::InventoryDocument,
    harnesses: &[String],
    since: Option<tether_core::model::Timestamp>,
    db: Option<&crate::host::StoreAt>,
) -> anyhow::Result<()> {
    let mut sessions = session_tools(harnesses, since)?;
    if let Some(db) = db.filter(|db| db.exists()) {
        sessions.extend(stored_session_tools(db, harnesses, since)?);
    }
    tether_inventory::apply_session_tools(document, &sessions);
    Ok(())
}

/// The current attempt of every session stored in `db` (collected live by
/// `tether collect`, or imported by `tether sessions import`), as
/// `--sessions` uses them.
fn stored_session_tools(
    db: &crate::host::StoreAt,
    harnesses: &[String],
    since: Option<tether_core::model::Timestamp>,
) -> anyhow::Result<Vec<tether_inventory::SessionTools>> {
    Ok(db
        .current_attempts(harnesses, since)?
        .into_iter()
        // A health check imported (marked by its trigger) ran no agent.
        .filter(|attempt| attempt.trigger != tether_core::vocab::Trigger::HealthCheck)
        .map(|attempt| tether_inventory::SessionTools {
            harness: attempt.agent_kind,
            session_id: attempt.session_id,
            updated_at: attempt.updated_at,
            servers: attempt.servers,
            capabilities: attempt.capabilities,
        })
        .collect())
}

/// Each file that could not be read, on a line of its own.
pub(crate) fn print_file_problems(
    out: &mut impl Write,
    files: &[FileReport],
) -> std::io::Result<()> {
    for f in files {
        if let Some(error) = &f.error {
            writeln!(out, "! {}: {error}", visible_field(&f.path))?;
        }
        if f.unparsed > 0 {
            writeln!(
                out,
                "! {}: {} line(s) could not be parsed: {}",
                visible_field(&f.path),
                f.unparsed,
                unparsed_lines(f)
            )?;
        }
    }
    Ok(())
}

/// Where and why a file's lines could not be parsed (`line 3 cut short,
/// line 9 a field of the wrong type (event_msg/mcp_tool_call_end)`), never
/// their content; the kinds are the reader's own constants.
fn unparsed_lines(f: &FileReport) -> String {
    let mut said: Vec<String> = f
        .unparsed_lines
        .iter()
        .map(|u| match &u.kind {
            Some(kind) => format!(
                "line {} {} ({})",
                u.line,
                u.why.words(),
                visible_field(kind)
            ),
            None => format!("line {} {}", u.line, u.why.words()),
        })
        .collect();
    let more = f.unparsed.saturating_sub(f.unparsed_lines.len() as u64);
    if more > 0 {
        said.push(format!("{more} more"));
    }
    said.join(", ")
}

/// Tools a server must have, at least, for `sessions show` to say them in
/// one line where they all stand at one state (`--tools` lists each).
const COLLAPSE_AT: usize = 4;

/// One printed line of a matrix: a row, or a server's tools said at once.
struct Line {
    kind: String,
    label: String,
    status: tether_core::vocab::DisplayStatus,
    stopped: String,
    shown_by: String,
    /// A tool's last mile, on the line below it.
    path: Option<String>,
}

/// The harness's own skills (built in: listed in every session, whatever
/// its user installed) that stand at one state, the state most of them
/// share: the first such row's index and every such row's, where there are
/// two or more. One invoked, or failed, keeps its own line.
fn built_in_skills(rows: &[tether_core::records::MatrixRow]) -> Option<(usize, Vec<usize>)> {
    let state = |i: usize| (rows[i].status, &rows[i].stopped);
    let built_in: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].built_in).collect();
    let alike = |i: usize| -> Vec<usize> {
        built_in
            .iter()
            .copied()
            .filter(|&j| state(j) == state(i))
            .collect()
    };
    let most = built_in
        .iter()
        .map(|&i| alike(i))
        .fold(Vec::new(), |best, group| {
            if group.len() > best.len() {
                group
            } else {
                best
            }
        });
    (most.len() >= 2).then(|| (most[0], most))
}

/// The one line of `n` built-in skills that all stand where `first` does.
fn built_in_line(first: &tether_core::records::MatrixRow, n: usize) -> Line {
    Line {
        kind: "skills".to_owned(),
        label: "(built in)".to_owned(),
        status: first.status,
        stopped: format!("{n} built-in skills: all {}", first.stopped),
        shown_by: shown_by(first),
        path: None,
    }
}

/// The matrix's lines: each row, except that a server's tools that all
/// stand at one state (the same status, sentence and last mile) are one
/// line, and so are the harness's built-in skills, unless `each_tool`.
fn matrix_lines(rows: &[tether_core::records::MatrixRow], each_tool: bool) -> Vec<Line> {
    use tether_core::vocab::CapabilityKind;
    let line = |row: &tether_core::records::MatrixRow| Line {
        kind: row.kind.as_str().to_owned(),
        label: row.label(),
        status: row.status,
        stopped: row.stopped.clone(),
        shown_by: shown_by(row),
        path: (row.kind == CapabilityKind::McpTool)
            .then(|| tether_words::display::tool_path(&row.stages)),
    };
    let mut out = Vec::new();
    let built_in = (!each_tool).then(|| built_in_skills(rows)).flatten();
    let mut i = 0;
    while i < rows.len() {
        let row = &rows[i];
        if let Some((first, ref alike)) = built_in
            && alike.contains(&i)
        {
            if i == first {
                out.push(built_in_line(&rows[first], alike.len()));
            }
            i += 1;
            continue;
        }
        out.push(line(row));
        i += 1;
        if row.kind != CapabilityKind::McpServer {
            continue;
        }
        let prefix = format!("{}/", row.name);
        let tools: Vec<&tether_core::records::MatrixRow> = rows[i..]
            .iter()
            .take_while(|t| t.kind == CapabilityKind::McpTool && t.name.starts_with(&prefix))
            .collect();
        let alike = tools.windows(2).all(|w| {
            (
                w[0].status,
                &w[0].stopped,
                tether_words::display::tool_path(&w[0].stages),
            ) == (
                w[1].status,
                &w[1].stopped,
                tether_words::display::tool_path(&w[1].stages),
            )
        });
        if !each_tool && tools.len() >= COLLAPSE_AT && alike {
            let first = tools[0];
            out.push(Line {
                kind: "mcp_tools".to_owned(),
                label: format!("{prefix}*"),
                status: first.status,
                stopped: format!("{} tools: all {}", tools.len(), first.stopped),
                shown_by: shown_by(first),
                path: Some(tether_words::display::tool_path(&first.stages)),
            });
            i += tools.len();
        }
    }
    out
}

/// A session's matrix as `tether sessions show` prints it: a row per
/// server and tool, where each stopped, and what showed it; with
/// `say_error`, the run's own error (its model API unreachable, say) under
/// its times, in `tether run`'s words (`run` says it on its exit line).
pub(crate) fn print_matrix(
    out: &mut impl Write,
    document: &SessionDocument,
    each_tool: bool,
    say_error: bool,
) -> std::io::Result<()> {
    let color = std::io::stdout().is_terminal();
    let s = &document.session;
    writeln!(
        out,
        "{}  {}{}{}",
        crate::term::bold(&s.session_id, color),
        s.agent_kind,
        s.agent_version
            .as_deref()
            .map(|v| format!(" {v}"))
            .unwrap_or_default(),
        s.project
            .as_deref()
            .map(|p| format!(", project {p}"))
            .unwrap_or_default(),
    )?;
    // A file whose records carry no time (a saved stream-json) says so,
    // never 1970.
    if s.started_at.0 == 0 && s.updated_at.0 == 0 {
        writeln!(out, "records carry no times")?;
    } else {
        writeln!(out, "records {} – {}", s.started_at, s.updated_at)?;
    }
    if say_error && let Some(err) = tether_words::display::current_report_error(&document.history) {
        writeln!(out, "{}", tether_words::display::records_report_error(err))?;
    }
    let lines = matrix_lines(&document.rows, each_tool);
    // Columns as wide as their widest cell, so a long sentence never runs
    // into the next column.
    let width = |cells: &mut dyn Iterator<Item = usize>, header: &str| {
        cells.max().unwrap_or(0).max(header.chars().count())
    };
    let name_w = width(&mut lines.iter().map(|l| l.label.chars().count()), "NAME");
    let stopped_w = width(
        &mut lines.iter().map(|l| l.stopped.chars().count()),
        "WHERE IT STOPPED",
    );
    writeln!(
        out,
        "{:<11} {:<name_w$} {:<12} {:<stopped_w$} SHOWN BY",
        "KIND", "NAME", "STATUS", "WHERE IT STOPPED"
    )?;
    for line in &lines {
        let status = crate::term::paint(
            color_class(line.status),
            &format!("{:<12}", line.status.as_str()),
            color,
        );
        writeln!(
            out,
            "{:<11} {:<name_w$} {status} {:<stopped_w$} {}",
            line.kind, line.label, line.stopped, line.shown_by
        )?;
        if let Some(path) = &line.path {
            writeln!(out, "{:<11} {path}", "")?;
        }
    }
    print_file_problems(out, &document.files)
}

/// What showed a row's highest shown stage (its provenance), or `-`.
fn shown_by(row: &tether_core::records::MatrixRow) -> String {
    [
        "invoked",
        "fired",
        "loaded",
        "listed",
        "callable",
        "called",
        "model_visible",
        "current_thread",
        "schema_accepted",
        "tools_listed",
        "initialized",
        "authenticated",
        "delivered",
        "configured",
    ]
    .iter()
    .find_map(|k| {
        row.stages
            .get(*k)
            .filter(|o| o.state != tether_core::vocab::StageState::Unknown)
    })
    .and_then(|o| o.provenance)
    .map(|p| p.word().to_string())
    .unwrap_or_else(|| "-".into())
}
