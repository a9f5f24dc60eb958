//! `tether check`: a saved session file (by path) or a stored session,
//! its requirements (`--require SERVER[:STAGE]`, `--require-tool
//! SERVER/TOOL[:STAGE]`) evaluated against the evidence, printed for a
//! person, a CI system (JUnit, GitHub annotations), Markdown or JSON; and
//! the requirements themselves, which `tether run` shares.
//!
//! A requirement never passes on silence: a stage that nothing showed is
//! `unknown`, and unknown is unmet.

pub(crate) use tether_requirements::document;

use crate::exit::Exit;
use std::io::Write;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use tether_core::records::MatrixRow;

use tether_requirements::{CheckDocument, RequirementOutcome};
pub(crate) use tether_requirements::{Requirement, STAGES_HELP, check_history, check_session};

/// `--require` and `--require-tool`, shared by `run` and `check`.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct RequireArgs {
    /// A server that must reach the session: `SERVER` (its tools reached
    /// the session and it did not fail) or `SERVER:STAGE` (repeatable).
    #[arg(long = "require", value_name = "SERVER[:STAGE]", value_parser = tether_requirements::parse_server)]
    require: Vec<Requirement>,
    /// A tool that must reach the session: `SERVER/TOOL` or
    /// `SERVER/TOOL:STAGE` (repeatable).
    #[arg(long = "require-tool", value_name = "SERVER/TOOL[:STAGE]", value_parser = tether_requirements::parse_tool)]
    require_tool: Vec<Requirement>,
}

impl RequireArgs {
    /// Every requirement, servers first, each in the order given.
    pub(crate) fn all(&self) -> Vec<Requirement> {
        self.require
            .iter()
            .chain(&self.require_tool)
            .cloned()
            .collect()
    }
}

// === Formats ===

/// How `check` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub(crate) enum Format {
    /// A line per requirement.
    #[default]
    Human,
    /// One CheckDocument (`tether schema check`).
    Json,
    /// JUnit XML: a testsuite per session, a testcase per requirement.
    Junit,
    /// GitHub Actions annotations (`::error`, `::warning`); a Markdown
    /// summary appended to `$GITHUB_STEP_SUMMARY` when it is set.
    Github,
    /// A Markdown table per session.
    Markdown,
}

/// The lines a person reads.
pub(crate) fn human(doc: &CheckDocument) -> String {
    human_saying(doc, &[])
}

/// Each session's own error (`errors[i]` for `doc.sessions[i]`: its model
/// API unreachable, say), in `tether run`'s words
/// ([`tether_words::display::records_report_error`]); every format says it
/// in its own idiom, so a requirement unmet reads with its cause.
fn run_error(errors: &[Option<String>], i: usize) -> Option<&str> {
    errors.get(i)?.as_deref()
}

/// Each session's own error, as [`run_error`] takes them.
fn run_errors(registry: &tether_core::registry::Registry, shown: &[Shown]) -> Vec<Option<String>> {
    shown
        .iter()
        .map(|s| {
            let error = tether_words::display::current_report_error(&s.history)
                .map(tether_words::display::records_report_error);
            if !s.summary.health_check {
                return error;
            }
            // A harness's own health check is said as one first, with what
            // it found.
            let said = format!(
                "{}; {}",
                crate::sessions::health_check_said(registry, &s.summary.agent_kind),
                crate::sessions::health_check_found(s.history.current())
            );
            Some(match error {
                Some(error) => format!("{said}; {error}"),
                None => said,
            })
        })
        .collect()
}

/// The lines a person reads, each session's own error under its line.
fn human_saying(doc: &CheckDocument, errors: &[Option<String>]) -> String {
    let mut out = String::new();
    for (i, s) in doc.sessions.iter().enumerate() {
        out.push_str(&format!(
            "{} {}{}: {}\n",
            s.session_id,
            s.agent_kind,
            s.agent_version
                .as_deref()
                .map(|v| format!(" {v}"))
                .unwrap_or_default(),
            if s.requirements.is_empty() {
                "no requirement"
            } else if s.met {
                "every requirement met"
            } else {
                "a requirement is not met"
            }
        ));
        if let Some(said) = run_error(errors, i) {
            out.push_str(&format!("  {said}\n"));
        }
        for o in &s.requirements {
            out.push_str(&format!(
                "  {} {}\n",
                if o.met { "met    " } else { "NOT MET" },
                with_code(o)
            ));
        }
        for o in &s.unrequired_failures {
            out.push_str(&format!("  warning {}\n", with_code(o)));
        }
    }
    if doc.sessions.is_empty() {
        out.push_str("no session to check\n");
    }
    out
}

/// The sentence and its code (`(spawn_failed)`, or the deciding stage's
/// state where no record gives a reason).
fn with_code(o: &RequirementOutcome) -> String {
    match &o.reason_code {
        Some(code) => format!("{} [{}]", o.sentence, code.as_str()),
        None if o.met => o.sentence.clone(),
        None => format!("{} [{}: {}]", o.sentence, o.stage, o.state.as_str()),
    }
}

/// Text safe inside XML (an attribute or element): the five escapes, and
/// characters XML 1.0 does not allow dropped.
pub(crate) fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || matches!(c as u32, 0xFFFE | 0xFFFF) => {}
            c => out.push(c),
        }
    }
    out
}

/// JUnit XML: one testsuite per session, one testcase per requirement; a
/// failure's message is Tether's sentence and the reason code. The
/// session's own error is the first line of its suite's `<system-err>`
/// and follows that sentence in each failure's text (the part CI viewers
/// show under a failed case), so an unmet requirement shows its cause.
pub(crate) fn junit(doc: &CheckDocument, errors: &[Option<String>]) -> String {
    let tests: usize = doc.sessions.iter().map(|s| s.requirements.len()).sum();
    let failures: usize = doc
        .sessions
        .iter()
        .map(|s| s.requirements.iter().filter(|o| !o.met).count())
        .sum();
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"tether check\" tests=\"{tests}\" failures=\"{failures}\">\n"
    );
    for (i, s) in doc.sessions.iter().enumerate() {
        let said = run_error(errors, i);
        let failed = s.requirements.iter().filter(|o| !o.met).count();
        out.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failed}\" errors=\"0\" skipped=\"0\">\n",
            xml_escape(&s.session_id),
            s.requirements.len()
        ));
        out.push_str(&format!(
            "    <properties><property name=\"agent_kind\" value=\"{}\"/>{}</properties>\n",
            xml_escape(&s.agent_kind),
            s.agent_version
                .as_deref()
                .map(|v| format!(
                    "<property name=\"agent_version\" value=\"{}\"/>",
                    xml_escape(v)
                ))
                .unwrap_or_default()
        ));
        for o in &s.requirements {
            let name = xml_escape(&format!("require {}", o.requirement));
            let class = xml_escape(&format!("tether.{}", s.agent_kind));
            if o.met {
                out.push_str(&format!(
                    "    <testcase classname=\"{class}\" name=\"{name}\"/>\n"
                ));
            } else {
                let kind = o.reason_code.as_ref().map_or_else(
                    || format!("{}_{}", o.stage, o.state.as_str()),
                    |c| c.as_str().to_owned(),
                );
                let text = match said {
                    Some(said) => format!("{}\n{said}", with_code(o)),
                    None => with_code(o),
                };
                out.push_str(&format!(
                    "    <testcase classname=\"{class}\" name=\"{name}\">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
                    xml_escape(&with_code(o)),
                    xml_escape(&kind),
                    xml_escape(&text),
                ));
            }
        }
        let lines: Vec<String> = said
            .map(str::to_owned)
            .into_iter()
            .chain(s.unrequired_failures.iter().map(with_code))
            .collect();
        if !lines.is_empty() {
            out.push_str(&format!(
                "    <system-err>{}</system-err>\n",
                xml_escape(&lines.join("\n"))
            ));
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// A GitHub workflow command's message: `%`, CR and LF escaped.
fn gh_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A GitHub workflow command's property: also `:` and `,`.
fn gh_property(text: &str) -> String {
    gh_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// GitHub Actions annotations: `::error` for each requirement not met,
/// `::warning` for each failed server no requirement named; the session's
/// own error first, an `::error` where its check fails (the likely cause),
/// a `::warning` where it passes.
pub(crate) fn github(doc: &CheckDocument, errors: &[Option<String>]) -> String {
    let mut out = String::new();
    for (i, s) in doc.sessions.iter().enumerate() {
        if let Some(said) = run_error(errors, i) {
            out.push_str(&format!(
                "::{} title={}::{}\n",
                if s.met { "warning" } else { "error" },
                gh_property(&format!("tether: session {}", s.session_id)),
                gh_data(said)
            ));
        }
        for o in s.requirements.iter().filter(|o| !o.met) {
            out.push_str(&format!(
                "::error title={}::{}\n",
                gh_property(&format!("tether: {} not met", o.requirement)),
                gh_data(&with_code(o))
            ));
        }
        for o in &s.unrequired_failures {
            out.push_str(&format!(
                "::warning title={}::{}\n",
                gh_property(&format!("tether: {} failed", o.server)),
                gh_data(&with_code(o))
            ));
        }
    }
    out
}

/// A Markdown table cell: pipes and newlines cannot break the table, and
/// nothing renders as markup.
fn md_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' | '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A Markdown table per session; the session's own error quoted under its
/// heading.
pub(crate) fn markdown(doc: &CheckDocument, errors: &[Option<String>]) -> String {
    let mut out = String::from("## Tether: MCP requirements\n\n");
    if doc.sessions.is_empty() {
        out.push_str("No session to check.\n");
    }
    for (i, s) in doc.sessions.iter().enumerate() {
        out.push_str(&format!(
            "### {} {} — {}\n\n",
            md_cell(&s.session_id),
            md_cell(&s.agent_kind),
            if s.met { "met" } else { "**not met**" }
        ));
        if let Some(said) = run_error(errors, i) {
            out.push_str(&format!("> {}\n\n", md_cell(said)));
        }
        out.push_str(
            "| | Requirement | Stage | State | What the evidence shows |\n|---|---|---|---|---|\n",
        );
        for o in s.requirements.iter().chain(&s.unrequired_failures) {
            let mark = if o.met {
                "✅"
            } else if s.requirements.contains(o) {
                "❌"
            } else {
                "⚠️"
            };
            out.push_str(&format!(
                "| {mark} | {} | {} | {} | {} |\n",
                md_cell(&o.requirement),
                md_cell(&o.stage),
                o.state.as_str(),
                md_cell(&with_code(o))
            ));
        }
        out.push('\n');
    }
    out
}

/// `doc` in `format`, each session's own error (`errors[i]`) said in it.
pub(crate) fn render(
    doc: &CheckDocument,
    format: Format,
    errors: &[Option<String>],
) -> anyhow::Result<String> {
    Ok(match format {
        Format::Human => human_saying(doc, errors),
        Format::Json => format!("{}\n", serde_json::to_string_pretty(doc)?),
        Format::Junit => junit(doc, errors),
        Format::Github => github(doc, errors),
        Format::Markdown => markdown(doc, errors),
    })
}

/// With `--format github`: the Markdown summary appended to
/// `$GITHUB_STEP_SUMMARY` (the runner's own file for it), when set.
pub(crate) fn github_summary(doc: &CheckDocument, errors: &[Option<String>], who: &str) {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        return;
    };
    let written = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(markdown(doc, errors).as_bytes()));
    if let Err(err) = written {
        errln!("{who}: cannot append the summary to $GITHUB_STEP_SUMMARY: {err}");
    }
}

/// The exit code for a checked document: 0 met, [`EXIT_UNMET`] else.
pub(crate) fn exit_code(doc: &CheckDocument) -> ExitCode {
    if doc.met {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(Exit::Unmet)
    }
}

// === `tether check` ===

/// `tether check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// What to check: a session file by path (a transcript, rollout, or the
    /// stream-json a headless run printed), or a stored session's id
    /// (`KIND:ID`, or a unique prefix of one on disk).
    #[arg(value_name = "PATH|SESSION", required = true)]
    what: Vec<String>,
    #[command(flatten)]
    require: RequireArgs,
    #[command(flatten)]
    harness: crate::flags::HarnessName,
    /// How to print.
    #[arg(long, value_enum, default_value = "human")]
    format: Format,
    #[command(flatten)]
    store: crate::host::StoreArgs,
    #[command(flatten)]
    plugins: crate::host::PluginArgs,
}

/// What `tether check --help` says after the flags.
pub const CHECK_AFTER_HELP: &str = "\
Without --require or --require-tool, every server the session names is required at `reached`.

Exit codes: 0 every requirement met; 4 a requirement not met; 2 usage (a path that is no session
file, an unknown stage); 1 no such session, or the store could not be read.";

/// One session to check: its summary and its matrix.
pub(crate) struct Shown {
    pub(crate) summary: tether_core::records::SessionSummary,
    pub(crate) rows: Vec<MatrixRow>,
    pub(crate) history: tether_core::history::AttachmentHistory,
}

pub fn run(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let registry = match args.plugins.registry_or_say("tether check") {
        Ok(r) => r,
        Err(code) => return Ok(code),
    };
    let mut shown = Vec::new();
    for what in &args.what {
        match sessions_of(
            &registry,
            what,
            args.harness.harness.as_deref(),
            &args.store,
        ) {
            Ok(mut found) => shown.append(&mut found),
            Err(code) => return Ok(code),
        }
    }
    let given = args.require.all();
    let checked = shown
        .iter()
        .map(|s| check_history(&s.summary, &s.history, &given))
        .collect();
    let doc = document(checked);
    let errors = run_errors(&registry, &shown);
    let mut out = crate::term::stdout();
    out.write_all(render(&doc, args.format, &errors)?.as_bytes())?;
    out.flush()?;
    if args.format == Format::Github {
        github_summary(&doc, &errors, "tether check");
    }
    Ok(exit_code(&doc))
}

/// Whether `what` names a file (or a place one could be), not a session.
fn is_path(what: &str) -> bool {
    what.contains('/') || std::path::Path::new(what).exists()
}

/// The sessions `what` names: every session of a file, or one stored (or
/// on disk) session. `Err` is the exit code, its error said.
fn sessions_of(
    registry: &tether_core::registry::Registry,
    what: &str,
    harness: Option<&str>,
    store: &crate::host::StoreArgs,
) -> Result<Vec<Shown>, ExitCode> {
    if is_path(what) {
        return sessions_of_file(registry, std::path::Path::new(what), harness);
    }
    // A stored session, by its exact id.
    if let Ok(at) = store.at()
        && at.exists()
        && let Ok(Some(opened)) = at.open_read_only("tether check")
    {
        match opened.store().load(what) {
            Ok(Some(history)) => return Ok(vec![shown_history(&history)]),
            Ok(None) => {}
            Err(err) => {
                errln!("tether check: the store {}: {err}", at.shown());
                return Err(ExitCode::FAILURE);
            }
        }
    }
    // Else a session on disk, by id or a unique prefix.
    let mut records = crate::records::read_listing(registry, tether_records::Filter::default());
    records.build_where(|id, harness_session| {
        id.starts_with(what) || harness_session.starts_with(what)
    });
    let matching: Vec<_> = records
        .sessions()
        .values()
        .filter(|f| f.session_id().starts_with(what) || f.harness_session.starts_with(what))
        .collect();
    match matching.as_slice() {
        [facts] => {
            let history = records.history(facts, None).map_err(|e| {
                errln!("tether check: {e}");
                ExitCode::FAILURE
            })?;
            Ok(vec![shown_session(&records, facts, history)])
        }
        [] => {
            errln!(
                "tether check: no session {what:?} in the store or on disk (see `tether sessions list`)"
            );
            Err(ExitCode::FAILURE)
        }
        many => {
            errln!(
                "tether check: {what:?} names {} sessions; give more of it",
                many.len()
            );
            Err(ExitCode::from(Exit::Usage))
        }
    }
}

/// Every session of the file at `path` (exit 2 where it holds none, or is
/// no session file).
fn sessions_of_file(
    registry: &tether_core::registry::Registry,
    path: &std::path::Path,
    harness: Option<&str>,
) -> Result<Vec<Shown>, ExitCode> {
    let records = tether_records::Records::of_file(registry, path, harness, Default::default())
        .map_err(|err| {
            let shown = path.file_name().map_or_else(
                || "that path".to_owned(),
                |n| format!("{:?}", n.to_string_lossy()),
            );
            errln!("tether check: {shown}: {err}");
            ExitCode::from(Exit::Usage)
        })?;
    let found: Vec<Shown> = records
        .sessions()
        .values()
        .filter_map(|facts| {
            let history = records.history(facts, None).ok()?;
            Some(shown_session(&records, facts, history))
        })
        .collect();
    if found.is_empty() {
        errln!("tether check: the file names no session its harness's reader can place");
        return Err(ExitCode::from(Exit::Usage));
    }
    Ok(found)
}

/// One session read from records, as a session to check.
fn shown_session(
    records: &tether_records::Records,
    facts: &tether_records::SessionFacts,
    history: tether_core::history::AttachmentHistory,
) -> Shown {
    let rows = history
        .current()
        .map(tether_words::display::matrix)
        .unwrap_or_default();
    Shown {
        summary: records.summary(facts, &history),
        rows,
        history,
    }
}

/// A stored history as a session to check.
pub(crate) fn shown_history(history: &tether_core::history::AttachmentHistory) -> Shown {
    let attempt = history.current();
    let rows = attempt
        .map(tether_words::display::matrix)
        .unwrap_or_default();
    Shown {
        summary: tether_requirements::summary_of(history),
        rows,
        history: history.clone(),
    }
}

#[cfg(test)]
mod tests;
