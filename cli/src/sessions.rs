//! `tether sessions`: the sessions your harnesses wrote to disk, each as a
//! capability matrix (list, show), imported into a store (import, with
//! `--follow` as they are written).

use crate::exit::Exit;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use tether_core::records::{
    FileReport, SESSIONS_SCHEMA_VERSION, SessionDocument, SessionsDocument,
};
use tether_core::registry::Registry;
use tether_records::{Filter, Records};
use tether_words::display::matrix;

/// `tether sessions`.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    #[command(subcommand)]
    command: SessionsCommand,
}

#[derive(Debug, Subcommand)]
enum SessionsCommand {
    /// The sessions found on disk: harness, project, times, rows per status.
    ///
    /// A harness's own health checks are not listed (they are counted
    /// under the list): a "session" only the harness's per-server MCP logs
    /// show, as `claude mcp list` writes when it connects to every server
    /// to say whether it answers. No agent ran in one. `--health-checks`
    /// lists them too, each marked (`health_check: true` in JSON).
    #[command(mut_arg("json", |a| a.help("Print one SessionsDocument (see `tether schema sessions`)")))]
    List {
        #[command(flatten)]
        filter: FilterArgs,
        /// List the harnesses' own health checks too, each marked "health
        /// check" (no agent ran in one).
        #[arg(long)]
        health_checks: bool,
        #[command(flatten)]
        output: crate::flags::Output,
    },
    /// One session's matrix: a row per server and per tool it saw, where
    /// each stopped, and what showed it.
    #[command(mut_arg("json", |a| a.help("Print one SessionDocument (see `tether schema session`)")))]
    Show {
        /// The session: `KIND:ID` as `list` shows it, the harness's own id,
        /// a unique prefix of either, or the path of a session file (a
        /// transcript, rollout or chat a colleague sent; what a headless
        /// run printed: `claude -p --output-format stream-json`, `codex
        /// exec --json`, `gemini`/`qwen -p --output-format stream-json`,
        /// `opencode run --format json`; a harness's database), its harness
        /// told from its content.
        id: String,
        #[command(flatten)]
        harness: crate::flags::HarnessName,
        /// A row for each tool, even where all of a server's tools stand at
        /// one state, and for each of the harness's built-in skills (each
        /// said in one line otherwise).
        #[arg(long)]
        tools: bool,
        #[command(flatten)]
        output: crate::flags::Output,
    },
    /// Import the sessions into a store (`tether serve` and `tether history`
    /// read it); a session already there (collected live, or imported
    /// before) is merged, never doubled.
    Import {
        /// Session files to import, by path, in place of those the
        /// harnesses keep (each told from its content, or by `--harness`).
        #[arg(value_name = "PATH")]
        paths: Vec<std::path::PathBuf>,
        #[command(flatten)]
        filter: FilterArgs,
        #[command(flatten)]
        store: crate::host::StoreArgs,
        /// Keep importing as running sessions write (until Ctrl-C).
        #[arg(long)]
        follow: bool,
    },
}

#[derive(Debug, Clone, Args)]
struct FilterArgs {
    #[command(flatten)]
    harness: crate::flags::HarnessFilter,
    /// Only sessions with records since: a duration back from now (`90m`,
    /// `24h`, `7d`) or an RFC 3339 time.
    #[arg(long, value_name = "WHEN")]
    since: Option<String>,
    /// Only sessions of this project (the last component of the directory
    /// it ran in).
    #[arg(long, value_name = "NAME")]
    project: Option<String>,
}

/// The filter the flags give (an unknown harness or an unreadable
/// `--since`: said, exit 2).
fn filter_of(args: &FilterArgs, registry: &Registry) -> Result<Filter, String> {
    let known: Vec<String> = registry
        .harnesses()
        .into_iter()
        .map(|h| String::from(h.id))
        .collect();
    for kind in &args.harness.harnesses {
        if !known.contains(kind) {
            let near = tether_words::near::nearest(kind, &known)
                .map(|n| format!(" (did you mean {n:?}?)"))
                .unwrap_or_default();
            return Err(format!(
                "unknown harness {kind:?}{near}; one of: {}",
                known.join(", ")
            ));
        }
    }
    let since = match &args.since {
        None => None,
        Some(word) => Some(records::since(word).ok_or_else(|| {
            format!("--since {word:?}: give a duration (90m, 24h, 7d) or an RFC 3339 time")
        })?),
    };
    Ok(Filter {
        harnesses: args.harness.harnesses.clone(),
        since,
        project: args.project.clone(),
    })
}

/// `tether sessions`.
pub fn run(args: SessionsArgs) -> anyhow::Result<ExitCode> {
    let registry = Registry::with_static()?;
    match args.command {
        SessionsCommand::List {
            filter,
            health_checks,
            output,
        } => list(&registry, &filter, health_checks, output.json),
        SessionsCommand::Show {
            id,
            harness,
            tools,
            output,
        } => show(
            &registry,
            &id,
            harness.harness.as_deref(),
            Shown {
                json: output.json,
                tools,
            },
        ),
        SessionsCommand::Import {
            paths,
            filter,
            store,
            follow,
        } => import(&registry, &paths, &filter, &store, follow),
    }
}

/// `list`: the sessions on disk, newest first (a harness's own health
/// checks only with `health_checks`, else counted).
fn list(
    registry: &Registry,
    filter: &FilterArgs,
    health_checks: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let chosen = match filter_of(filter, registry) {
        Ok(f) => f,
        Err(e) => return usage(&e),
    };
    let records = records::read_list(registry, chosen);
    let mut sessions = records.listing();
    let before = sessions.len();
    if !health_checks {
        sessions.retain(|s| !s.health_check);
    }
    let hidden = before - sessions.len();
    let document = SessionsDocument {
        schema_version: SESSIONS_SCHEMA_VERSION,
        sessions,
        files: records.files(),
        not_read: records.not_read(),
        readers: records.reader_notes(),
    };
    let mut out = crate::term::stdout_buffered();
    if json {
        serde_json::to_writer_pretty(&mut out, &document)?;
        writeln!(out)?;
    } else {
        // A filter that matched nothing is said as that, never as "no
        // sessions": a slip of a project's name read like an empty disk.
        let empty = if !document.sessions.is_empty() {
            None
        } else if filtered(filter) {
            let mut all = records::read_list(registry, Filter::default()).listing();
            all.retain(|s| health_checks || !s.health_check);
            Some(nothing_matched(filter, &all))
        } else {
            Some("No harness sessions found on disk.".to_owned())
        };
        print_list(&mut out, &document, empty.as_deref())?;
        if hidden > 0 {
            writeln!(out, "{}", health_checks_not_listed(hidden))?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// What a health check is, said where one is shown by its id (`sessions
/// show`, `check`, `tether mcp`'s `session`): which harness ran it, with
/// the command its plugin names for it (`RecordSource::
/// health_check_command`), and that no agent ran.
pub(crate) fn health_check_said(registry: &Registry, kind: &str) -> String {
    let command = registry
        .harness(kind)
        .and_then(|h| h.roles.records)
        .and_then(|r| {
            r.record_sources()
                .into_iter()
                .find_map(|s| s.health_check_command)
        });
    let ran = match command {
        Some(command) => format!("a health check {kind} ran (`{command}`)"),
        None => format!("a health check {kind} ran"),
    };
    format!(
        "{ran}, not an agent session: it connected to its MCP servers to say whether each answers, and no agent ran"
    )
}

/// `rows` of a session of `harness`, each server whose command was not
/// found told why in today's configuration's words (`tether run`, as
/// `show` does).
pub(crate) fn with_config_reasons(rows: &mut [tether_core::records::MatrixRow], harness: &str) {
    let ctx = tether_inventory::ScanContext::from_env(std::env::current_dir().ok());
    let config =
        tether_inventory::scan_all(&ctx, &tether_inventory::scanners(), &[harness.to_owned()]);
    tether_words::display::with_config_reasons(rows, &config.rows, harness);
}

/// What a health check found, in a clause: each server's status (and
/// reason), its servers' states being evidence all the same.
pub(crate) fn health_check_found(
    attempt: Option<&tether_core::history::AttachmentAttempt>,
) -> String {
    let found: Vec<String> = attempt
        .map(|a| a.servers.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|s| match &s.reason_code {
            Some(code) => format!("{} {} ({code})", s.name, s.status),
            None => format!("{} {}", s.name, s.status),
        })
        .collect();
    if found.is_empty() {
        "it found no server".to_owned()
    } else {
        format!("it found: {}", found.join(", "))
    }
}

/// What a listing says of the health checks it left out.
fn health_checks_not_listed(n: usize) -> String {
    let (noun, them) = if n == 1 {
        ("health check", "it")
    } else {
        ("health checks", "them")
    };
    format!(
        "{n} {noun} not listed (a harness connecting to its MCP servers to say whether each answers; no agent ran): --health-checks lists {them}."
    )
}

/// The projects an empty `--project` listing names, newest first.
const PROJECTS_SAID: usize = 10;

/// Whether any filter flag was given.
fn filtered(filter: &FilterArgs) -> bool {
    !filter.harness.harnesses.is_empty() || filter.since.is_some() || filter.project.is_some()
}

/// What a listing that filters left empty says: the filters, how many
/// sessions there are without them, and for `--project` the projects
/// they ran in (the one meant first, where the name is a slip of one).
fn nothing_matched(filter: &FilterArgs, all: &[tether_core::records::SessionSummary]) -> String {
    let mut given: Vec<String> = filter
        .harness
        .harnesses
        .iter()
        .map(|h| format!("--harness {h}"))
        .collect();
    given.extend(filter.since.iter().map(|s| format!("--since {s}")));
    given.extend(filter.project.iter().map(|p| format!("--project {p:?}")));
    let mut text = format!(
        "No session on disk matches {}; without {}, {} session{}.",
        given.join(" "),
        if given.len() == 1 { "it" } else { "them" },
        all.len(),
        if all.len() == 1 { "" } else { "s" }
    );
    if let (Some(project), false) = (&filter.project, all.is_empty()) {
        // Newest first, each once.
        let mut projects: Vec<&str> = Vec::new();
        for p in all.iter().filter_map(|s| s.project.as_deref()) {
            if !projects.contains(&p) {
                projects.push(p);
            }
        }
        if let Some(meant) = tether_words::near::nearest(project, &projects) {
            text.push_str(&format!(" Did you mean --project {meant:?}?"));
        } else if !projects.is_empty() {
            let more = projects.len().saturating_sub(PROJECTS_SAID);
            projects.truncate(PROJECTS_SAID);
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            text.push_str(&format!(" Their projects: {}{more}.", projects.join(", ")));
        }
    }
    text
}

/// `show ID`: one session's matrix.
/// Whether `id` names a file (or a place one could be), not a session id.
fn is_path(id: &str) -> bool {
    id.contains('/') || std::path::Path::new(id).exists()
}

/// The one file at `path`, read as its harness wrote it; `Err` is the exit
/// code, its error already said.
pub(crate) fn read_path(
    registry: &Registry,
    path: &std::path::Path,
    harness: Option<&str>,
    command: &str,
) -> Result<Records, ExitCode> {
    let configured = crate::term::with_progress(
        "reading today's MCP configuration…",
        crate::host::configured_today,
    );
    crate::term::with_progress("reading the session file…", || {
        Records::of_file(registry, path, harness, configured)
    })
    .map_err(|err| {
        let shown = path.file_name().map_or_else(
            || "that path".to_owned(),
            |n| format!("{:?}", n.to_string_lossy()),
        );
        errln!("tether sessions {command}: {shown}: {err}");
        ExitCode::from(Exit::Usage)
    })
}

/// How `show` prints: one document (`--json`), or the matrix with each
/// tool on its own line (`--tools`).
#[derive(Debug, Clone, Copy)]
struct Shown {
    json: bool,
    tools: bool,
}

fn show(
    registry: &Registry,
    id: &str,
    harness: Option<&str>,
    shown: Shown,
) -> anyhow::Result<ExitCode> {
    let by_path = is_path(id);
    let records = if by_path {
        match read_path(registry, std::path::Path::new(id), harness, "show") {
            Ok(records) => records,
            Err(code) => return Ok(code),
        }
    } else {
        let harness = harness.map(str::to_owned).or_else(|| {
            id.split_once(':')
                .map(|(kind, _)| kind.to_owned())
                .filter(|kind| registry.harnesses().iter().any(|h| h.id == kind.as_str()))
        });
        let filter = Filter {
            harnesses: harness.into_iter().collect(),
            ..Filter::default()
        };
        let mut records = records::read_listing(registry, filter);
        records.build_where(|tether_id, harness_session| {
            tether_id.starts_with(id) || harness_session.starts_with(id)
        });
        records
    };
    let matching: Vec<_> = records
        .sessions()
        .values()
        .filter(|f| {
            let tether_id = f.session_id();
            by_path
                || tether_id == id
                || f.harness_session == id
                || tether_id.starts_with(id)
                || f.harness_session.starts_with(id)
        })
        .collect();
    let facts = match matching.as_slice() {
        [one] => *one,
        [] if by_path => {
            errln!(
                "tether sessions show: the file names no session its harness's reader can place"
            );
            return Ok(ExitCode::from(Exit::Usage));
        }
        [] => {
            errln!("tether sessions show: no session {id:?} on disk (see `tether sessions list`)");
            return Ok(ExitCode::FAILURE);
        }
        many if by_path => {
            let ids: Vec<String> = many.iter().map(|f| f.session_id()).collect();
            errln!(
                "tether sessions show: the file holds {} sessions ({}); `tether sessions import` it, then show one by id",
                many.len(),
                ids.join(", ")
            );
            return Ok(ExitCode::from(Exit::Usage));
        }
        many => {
            errln!(
                "tether sessions show: {id:?} names {} sessions; give more of it",
                many.len()
            );
            return Ok(ExitCode::from(Exit::Usage));
        }
    };
    print_session(registry, &records, facts, shown)
}

/// One session's document, printed (`--json`: the document).
fn print_session(
    registry: &Registry,
    records: &Records,
    facts: &tether_records::SessionFacts,
    how: Shown,
) -> anyhow::Result<ExitCode> {
    let history = records
        .history(facts, None)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let files: Vec<FileReport> = records
        .files()
        .into_iter()
        .filter(|f| facts.files.contains(&f.path))
        .collect();
    let mut rows = history.current().map(matrix).unwrap_or_default();
    // Today's configuration of the same harness, merged in: what it names
    // that never ran reads so, and what ran that it no longer names is
    // history.
    let ctx = tether_inventory::ScanContext::from_env(std::env::current_dir().ok());
    let config = tether_inventory::scan_all(
        &ctx,
        &tether_inventory::scanners(),
        std::slice::from_ref(&facts.agent_kind),
    );
    let shown = registry
        .harness(&facts.agent_kind)
        .and_then(|h| h.roles.records.map(|r| r.records_show()))
        .unwrap_or_default();
    tether_words::display::merge_configured(&mut rows, &config.rows, &facts.agent_kind, &shown);
    tether_words::display::with_config_reasons(&mut rows, &config.rows, &facts.agent_kind);
    let document = SessionDocument {
        schema_version: SESSIONS_SCHEMA_VERSION,
        session: records.summary(facts, &history),
        rows,
        files,
        telemetry_unparsed: stored_unparsed_telemetry(&facts.session_id()),
        history,
    };
    let kind = &document.session.agent_kind;
    let mut note = tether_core::records::ReaderNote::new(
        kind,
        document.session.agent_version.as_deref(),
        records.verified_on(kind),
    );
    for file in &document.files {
        note.add_file(file);
    }
    let mut out = crate::term::stdout_buffered();
    if how.json {
        serde_json::to_writer_pretty(&mut out, &document)?;
        writeln!(out)?;
    } else {
        if document.session.health_check {
            // Said first: no agent ran, yet its rows are evidence.
            writeln!(
                out,
                "{}: {}; {}.",
                document.session.session_id,
                health_check_said(registry, kind),
                health_check_found(document.history.current())
            )?;
        }
        records::print_matrix(&mut out, &document, how.tools, true)?;
        print_unparsed_telemetry(&mut out, &document.telemetry_unparsed)?;
        print_reader_notes(&mut out, std::slice::from_ref(&note))?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `import`: into a store, and with `follow` as the records grow.
fn import(
    registry: &Registry,
    paths: &[std::path::PathBuf],
    filter: &FilterArgs,
    store: &crate::host::StoreArgs,
    follow: bool,
) -> anyhow::Result<ExitCode> {
    if !paths.is_empty() && follow {
        return usage("--follow follows the harnesses' own folders; it takes no PATH");
    }
    let filter = match filter_of(filter, registry) {
        Ok(f) => f,
        Err(e) => return usage(&e),
    };
    let mut files = Vec::new();
    for path in paths {
        let harness = filter.harnesses.first().map(String::as_str);
        match read_path(registry, path, harness, "import") {
            Ok(records) => files.push(records),
            Err(code) => return Ok(code),
        }
    }
    let store = match store.open_writable("tether sessions import") {
        Ok(store) => store,
        Err(code) => return Ok(code),
    };
    if !files.is_empty() {
        return Ok(import_files(&mut files, store.as_ref()));
    }
    let mut records = records::read_kept(
        registry,
        filter,
        Some(store.clone()),
        records::Reading::OnlyChanged,
    );
    let done = match records.import(store.as_ref(), None) {
        Ok(done) => done,
        Err(err) => {
            errln!("tether sessions import: {err}");
            return Ok(ExitCode::FAILURE);
        }
    };
    let problems = records.files().iter().filter(|f| f.error.is_some()).count();
    say_imported(&done, problems);
    if !follow {
        return Ok(ExitCode::SUCCESS);
    }
    follow_records(&mut records, store.as_ref())
}

/// `import PATH…`: each file's sessions, said in one line.
fn import_files(files: &mut [Records], store: &dyn tether_core::store::Store) -> ExitCode {
    let mut done = tether_records::Imported::default();
    for records in files.iter_mut() {
        match records.import(store, None) {
            Ok(one) => {
                done.new += one.new;
                done.updated += one.updated;
                done.unchanged += one.unchanged;
                done.refused += one.refused;
            }
            Err(err) => {
                errln!("tether sessions import: {err}");
                return ExitCode::FAILURE;
            }
        }
    }
    let problems = files
        .iter()
        .flat_map(Records::files)
        .filter(|f| f.error.is_some())
        .count();
    say_imported(&done, problems);
    ExitCode::SUCCESS
}

/// `import --follow`: the sessions that change, as they are written, until
/// Ctrl-C.
fn follow_records(
    records: &mut Records,
    store: &dyn tether_core::store::Store,
) -> anyhow::Result<ExitCode> {
    let runtime = crate::host::runtime()?;
    let cancel = runtime.block_on(async { crate::host::cancel_on_ctrl_c() });
    errln!("following the session records (Ctrl-C to stop)…");
    while !cancel.is_cancelled() {
        std::thread::sleep(Duration::from_millis(500));
        let pass = records.read(false);
        if pass.changed.is_empty() {
            continue;
        }
        match records.import(store, Some(&pass.changed)) {
            Ok(done) => {
                for id in &pass.changed {
                    errln!("  {id}");
                }
                tracing::debug!(?done, "followed");
            }
            Err(err) => {
                errln!("tether sessions import: {err}");
                return Ok(ExitCode::FAILURE);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What an import did, in one line on stderr.
fn say_imported(done: &tether_records::Imported, problems: usize) {
    errln!(
        "imported: {} new, {} updated, {} unchanged{}{}",
        done.new,
        done.updated,
        done.unchanged,
        if done.refused > 0 {
            format!(", {} refused", done.refused)
        } else {
            String::new()
        },
        if problems > 0 {
            format!("; {problems} file(s) not fully read (see `tether sessions list`)")
        } else {
            String::new()
        }
    );
}

fn usage(message: &str) -> anyhow::Result<ExitCode> {
    errln!("tether sessions: {message}");
    Ok(ExitCode::from(Exit::Usage))
}

fn counts_line(counts: &tether_core::records::StatusCounts) -> String {
    counts
        .iter()
        .map(|(status, n)| format!("{n} {status}"))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The listing as text; `empty` is what it says when it lists none.
fn print_list(
    out: &mut impl Write,
    document: &SessionsDocument,
    empty: Option<&str>,
) -> std::io::Result<()> {
    if let Some(empty) = empty {
        writeln!(out, "{empty}")?;
    } else {
        writeln!(
            out,
            "{:<46} {:<9} {:<20} {:<20} SERVERS",
            "SESSION", "HARNESS", "PROJECT", "LAST RECORD"
        )?;
        for s in &document.sessions {
            writeln!(
                out,
                "{:<46} {:<9} {:<20} {:<20} {}",
                s.session_id,
                s.agent_kind,
                s.project.as_deref().unwrap_or("-"),
                s.updated_at
                    .to_string()
                    .get(..19)
                    .unwrap_or("-")
                    .replace('T', " "),
                if s.health_check {
                    format!("health check (no agent): {}", counts_line(&s.counts))
                } else {
                    counts_line(&s.counts)
                }
            )?;
        }
    }
    records::print_file_problems(out, &document.files)?;
    print_reader_notes(out, &document.readers)?;
    for cut in &document.not_read {
        writeln!(
            out,
            "! {}: {} ({}; `tether sessions list --since` reads a narrower window)",
            visible_field(&cut.root),
            cut.summary,
            cut.reason_code
        )?;
    }
    Ok(())
}

use crate::records;
use crate::term::visible_field;

/// Once per harness and version (never once per file): records its reader
/// does not know, and a version newer than the reader was verified on.
fn print_reader_notes(
    out: &mut impl Write,
    notes: &[tether_core::records::ReaderNote],
) -> std::io::Result<()> {
    for n in notes {
        let who = match &n.version {
            Some(v) => format!("{} {}", n.agent_kind, visible_field(v)),
            None => format!("{} (no version recorded)", n.agent_kind),
        };
        let records = n.unknown_records + n.not_read_records;
        let unknown = (records > 0).then(|| {
            let kinds = if n.not_read_kinds.is_empty() {
                String::new()
            } else {
                // The kinds are the reader's own constants, never a record's text.
                format!(
                    " ({} about MCP, tools, skills, hooks, permissions or auth: {})",
                    n.not_read_records,
                    n.not_read_kinds.join(", ")
                )
            };
            format!(
                "{records} record(s) in {} file(s) of a kind this Tether does not read{kinds}",
                n.files
            )
        });
        let line = match (&n.verified_on, n.newer, unknown) {
            // Older than verified: the version is said, so an empty table
            // is not read as a session with no MCP servers.
            (Some(range), false, unknown) if n.older() => {
                let v = n.version.as_deref().map(visible_field).unwrap_or_default();
                let unknown = unknown.map(|u| format!("; {u}")).unwrap_or_default();
                format!(
                    "read with a reader verified on {range}; this file is {v}, older: what it does not show may still have happened{unknown}"
                )
            }
            (Some(range), true, Some(unknown)) => {
                format!("read with a reader verified on {range}; {unknown}")
            }
            (Some(range), true, None) => format!("read with a reader verified on {range}"),
            (Some(range), false, Some(unknown)) => {
                format!("{unknown} (its reader is verified on {range})")
            }
            (None, _, Some(unknown)) => format!("{unknown} (a newer {}?)", n.agent_kind),
            (_, _, None) if n.unparsed_records > 0 => String::new(),
            (_, _, None) => continue,
        };
        // Lines that did not parse are never a kind, known or not.
        let line = match (n.unparsed_records, line.is_empty()) {
            (0, _) => line,
            (u, true) => {
                format!("{u} record(s) could not be parsed (each file says where and why)")
            }
            (u, false) => {
                format!("{line}; {u} record(s) could not be parsed (each file says where and why)")
            }
        };
        writeln!(out, "? {who}: {line}")?;
    }
    Ok(())
}

/// The telemetry answers of `session_id` that could not be parsed, as the
/// store `TETHER_DB` names (or the default store, where a command made
/// it) counted them (`tether collect`); none where there is no store yet,
/// or it cannot be read (said at debug level: the records are shown all
/// the same).
fn stored_unparsed_telemetry(session_id: &str) -> Vec<tether_core::telemetry::UnparsedTelemetry> {
    let read = || -> anyhow::Result<Vec<_>> {
        let at = crate::host::StoreArgs::default().at()?;
        if !at.exists() {
            return Ok(Vec::new());
        }
        let Some(opened) = at.open_read_only("tether sessions show")? else {
            return Ok(Vec::new());
        };
        Ok(opened.store().unparsed_telemetry(session_id)?)
    };
    read().unwrap_or_else(|error| {
        tracing::debug!(%error, "no count of unparsed telemetry read");
        Vec::new()
    })
}

/// The session's telemetry answers that could not be parsed, in one line
/// beside the files' accounting: how many, and per why the record kind and
/// attribute (the reader's constants), never their content.
fn print_unparsed_telemetry(
    out: &mut impl Write,
    counted: &[tether_core::telemetry::UnparsedTelemetry],
) -> std::io::Result<()> {
    let total: u64 = counted.iter().map(|c| c.count).sum();
    if total == 0 {
        return Ok(());
    }
    // Summed over attempts, in the store's order.
    let mut by: Vec<((&str, &str, tether_core::model::Unparsed), u64)> = Vec::new();
    for c in counted {
        let key = (c.kind.as_str(), c.attribute.as_str(), c.why);
        match by.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => *n += c.count,
            None => by.push((key, c.count)),
        }
    }
    let said: Vec<String> = by
        .iter()
        .map(|((kind, attribute, why), n)| {
            format!(
                "{n} {} ({} {})",
                why.words(),
                visible_field(kind),
                visible_field(attribute)
            )
        })
        .collect();
    writeln!(
        out,
        "! telemetry: {total} answer(s) for this session could not be parsed: {}",
        said.join(", ")
    )
}
