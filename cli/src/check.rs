//! `tether check`: a saved session file (by path) or a stored session,
//! its requirements (`--require SERVER[:STAGE]`, `--require-tool
//! SERVER/TOOL[:STAGE]`) evaluated against the evidence, printed for a
//! person, a CI system (JUnit, GitHub annotations), Markdown or JSON; and
//! the requirements themselves, which `tether run` shares.
//!
//! A requirement never passes on silence: a stage that nothing showed is
//! `unknown`, and unknown is unmet.

pub(crate) mod document;

use std::io::Write;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use tether_core::records::MatrixRow;
use tether_core::vocab::{CapabilityKind, DisplayStatus, StageState};

use document::{CHECK_SCHEMA_VERSION, CheckDocument, CheckedSession, RequirementOutcome};

/// Exit code: the harness succeeded (or, for `check`, the session was
/// read) but a requirement is not met. Neither 1 nor 2, so a CI step
/// tells it from a failed harness or a usage error.
pub(crate) const EXIT_UNMET: u8 = 4;

/// What `--require` and `--require-tool` say after the flags.
pub(crate) const STAGES_HELP: &str = "\
Stages (`--require SERVER:STAGE`, `--require-tool SERVER/TOOL:STAGE`):
  reached          the default: its tools reached the session (offered in the
                   thread or sent to the model) and it did not fail
  configured, delivered, authenticated, initialized   (servers only)
  tools_listed     tools/list was served (a tool: it was listed)
  schema_accepted  the harness kept its tools after its own checks
  current_thread   its tools were offered in this session's model requests
                   (also: offered)
  model_visible    the model was sent a tool's definition
  callable         a call reached it and succeeded
  used             a call was made (also: called), whatever its outcome
A stage nothing showed is unknown, and unknown is never met.";

/// `--require` and `--require-tool`, shared by `run` and `check`.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct RequireArgs {
    /// A server that must reach the session: `SERVER` (its tools reached
    /// the session and it did not fail) or `SERVER:STAGE` (repeatable).
    #[arg(long = "require", value_name = "SERVER[:STAGE]", value_parser = parse_server)]
    require: Vec<Requirement>,
    /// A tool that must reach the session: `SERVER/TOOL` or
    /// `SERVER/TOOL:STAGE` (repeatable).
    #[arg(long = "require-tool", value_name = "SERVER/TOOL[:STAGE]", value_parser = parse_tool)]
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

/// One stage a requirement asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Need {
    /// Its tools reached the session, and it did not fail.
    Reached,
    Configured,
    Delivered,
    Authenticated,
    Initialized,
    ToolsListed,
    SchemaAccepted,
    CurrentThread,
    ModelVisible,
    Callable,
    /// A call was made.
    Used,
}

impl Need {
    const ALL: [Need; 11] = [
        Need::Reached,
        Need::Configured,
        Need::Delivered,
        Need::Authenticated,
        Need::Initialized,
        Need::ToolsListed,
        Need::SchemaAccepted,
        Need::CurrentThread,
        Need::ModelVisible,
        Need::Callable,
        Need::Used,
    ];

    /// Its one name.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Need::Reached => "reached",
            Need::Configured => "configured",
            Need::Delivered => "delivered",
            Need::Authenticated => "authenticated",
            Need::Initialized => "initialized",
            Need::ToolsListed => "tools_listed",
            Need::SchemaAccepted => "schema_accepted",
            Need::CurrentThread => "current_thread",
            Need::ModelVisible => "model_visible",
            Need::Callable => "callable",
            Need::Used => "used",
        }
    }

    fn parse(word: &str) -> Option<Need> {
        match word {
            "offered" => Some(Need::CurrentThread),
            "called" => Some(Need::Used),
            "listed" => Some(Need::ToolsListed),
            _ => Need::ALL.into_iter().find(|n| n.word() == word),
        }
    }

    /// Whether a tool row can show it (the server-only stages cannot).
    fn for_tools(self) -> bool {
        !matches!(
            self,
            Need::Configured | Need::Delivered | Need::Authenticated | Need::Initialized
        )
    }

    /// What it means, as a clause (`time: …`).
    fn clause(self, tool: bool) -> &'static str {
        match (self, tool) {
            (Need::Reached, false) => "its tools reached the session and it did not fail",
            (Need::Reached, true) => "it reached the session and its server did not fail",
            (Need::Configured, _) => "it was configured",
            (Need::Delivered, _) => "it was handed to the harness",
            (Need::Authenticated, _) => "it accepted the harness's credentials",
            (Need::Initialized, _) => "it completed initialize",
            (Need::ToolsListed, false) => "it served tools/list",
            (Need::ToolsListed, true) => "its server listed it",
            (Need::SchemaAccepted, _) => "the harness kept its tools",
            (Need::CurrentThread, _) => "it was offered in this session's model requests",
            (Need::ModelVisible, _) => "the model was sent its definition",
            (Need::Callable, _) => "a call reached it and succeeded",
            (Need::Used, _) => "a call was made",
        }
    }
}

/// One requirement: a server (or one of its tools) at a stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Requirement {
    pub(crate) server: String,
    pub(crate) tool: Option<String>,
    pub(crate) need: Need,
}

impl Requirement {
    /// The row it is about (`SERVER` or `SERVER/TOOL`).
    fn subject(&self) -> String {
        match &self.tool {
            Some(tool) => format!("{}/{tool}", self.server),
            None => self.server.clone(),
        }
    }

    /// As written back (`time`, `time:callable`).
    pub(crate) fn spelled(&self) -> String {
        match self.need {
            Need::Reached => self.subject(),
            need => format!("{}:{}", self.subject(), need.word()),
        }
    }
}

/// Splits `NAME[:STAGE]`: the suffix is a stage only when it names one (a
/// server's own name may hold a colon).
fn split_stage(text: &str) -> Result<(&str, Need), String> {
    if let Some((name, word)) = text.rsplit_once(':')
        && let Some(need) = Need::parse(word)
    {
        return Ok((name, need));
    }
    if let Some((_, word)) = text.rsplit_once(':')
        && !word.is_empty()
        && word.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
        && word.contains('_')
    {
        let known: Vec<&str> = Need::ALL.iter().map(|n| n.word()).collect();
        return Err(format!(
            "no stage {word:?}; one of: {} (or offered, called)",
            known.join(", ")
        ));
    }
    Ok((text, Need::Reached))
}

pub(crate) fn parse_server(text: &str) -> Result<Requirement, String> {
    let (server, need) = split_stage(text)?;
    if server.trim().is_empty() {
        return Err("give a server's name: SERVER or SERVER:STAGE".into());
    }
    // No harness names a server with a `/`: `SERVER/TOOL` is a tool.
    if server.contains('/') {
        return Err(format!(
            "{server:?} names a tool; require it with --require-tool {text}"
        ));
    }
    Ok(Requirement {
        server: server.to_owned(),
        tool: None,
        need,
    })
}

pub(crate) fn parse_tool(text: &str) -> Result<Requirement, String> {
    let (name, need) = split_stage(text)?;
    let Some((server, tool)) = name
        .split_once('/')
        .filter(|(s, t)| !s.is_empty() && !t.is_empty())
    else {
        return Err("give SERVER/TOOL or SERVER/TOOL:STAGE".into());
    };
    if !need.for_tools() {
        return Err(format!(
            "{} is a server's stage; require the server (--require {server}:{})",
            need.word(),
            need.word()
        ));
    }
    Ok(Requirement {
        server: server.to_owned(),
        tool: Some(tool.to_owned()),
        need,
    })
}

// === Evaluation ===

fn state(row: &MatrixRow, key: &str) -> StageState {
    row.stages.get(key).map_or(StageState::Unknown, |o| o.state)
}

/// The strongest of several states that each would do: yes if any, else no
/// if all are no, else unknown.
fn any_of(states: &[StageState]) -> StageState {
    if states.contains(&StageState::Yes) {
        StageState::Yes
    } else if !states.is_empty() && states.iter().all(|s| *s == StageState::No) {
        StageState::No
    } else if states.contains(&StageState::NotApplicable) {
        StageState::NotApplicable
    } else {
        StageState::Unknown
    }
}

/// The deciding state of `need` on `row`.
fn decide(row: &MatrixRow, need: Need, tool: bool) -> StageState {
    match need {
        Need::Reached => any_of(&[state(row, "current_thread"), state(row, "model_visible")]),
        Need::Used if row.calls > 0 => StageState::Yes,
        Need::Used => state(row, "called"),
        Need::Callable if tool => {
            let settled = row.failed_calls + row.unknown_calls;
            if row.calls > settled {
                StageState::Yes
            } else if row.calls > 0 && row.failed_calls == row.calls {
                StageState::No
            } else {
                state(row, "callable")
            }
        }
        need => state(row, need.word()),
    }
}

/// One requirement against one session's rows.
pub(crate) fn evaluate(rows: &[MatrixRow], req: &Requirement) -> RequirementOutcome {
    let subject = req.subject();
    let server = rows
        .iter()
        .find(|r| r.kind == CapabilityKind::McpServer && r.name == req.server);
    let row = match &req.tool {
        None => server,
        Some(_) => rows
            .iter()
            .find(|r| r.kind == CapabilityKind::McpTool && r.name == subject),
    };
    let outcome = |met: bool, state: StageState, reason, sentence: String| RequirementOutcome {
        requirement: req.spelled(),
        server: req.server.clone(),
        tool: req.tool.clone(),
        stage: req.need.word().to_owned(),
        met,
        state,
        reason_code: reason,
        sentence,
    };
    let Some(row) = row else {
        let sentence = match (server, &req.tool) {
            (None, _) => format!(
                "{subject}: the session never named this server, so nothing shows that {}",
                req.need.clause(false)
            ),
            (Some(s), Some(tool)) => format!(
                "{subject}: the server {} named no tool {tool:?} ({})",
                req.server, s.stopped
            ),
            (Some(_), None) => unreachable!("a server requirement's row is its server"),
        };
        let reason = server
            .filter(|s| state(s, "tools_listed") == StageState::Yes)
            .map(|_| tether_core::vocab::ReasonCode::ToolNotListed);
        return outcome(false, StageState::Unknown, reason, sentence);
    };
    let tool = req.tool.is_some();
    let decided = decide(row, req.need, tool);
    let failed = req.need == Need::Reached
        && (row.status == DisplayStatus::Failed
            || server.is_some_and(|s| s.status == DisplayStatus::Failed));
    let met = decided == StageState::Yes && !failed;
    let clause = req.need.clause(tool);
    let sentence = if met {
        format!("{subject}: {clause}")
    } else if failed {
        match server.filter(|s| s.status == DisplayStatus::Failed && tool) {
            Some(s) => format!("{subject}: its server {} failed ({})", s.name, s.stopped),
            None => format!("{subject}: it failed ({})", row.stopped),
        }
    } else {
        let shown = match decided {
            StageState::No => "the evidence shows it did not",
            StageState::NotApplicable => "it was never offered",
            _ => "nothing shows it (unknown is never met)",
        };
        format!(
            "{subject}: not met, {clause}: {shown}; where it stopped: {}",
            row.stopped
        )
    };
    let reason = if met {
        None
    } else {
        row.reason_code
            .clone()
            .or_else(|| server.and_then(|s| s.reason_code.clone()))
    };
    let state = if failed { StageState::No } else { decided };
    outcome(met, state, reason, sentence)
}

/// Without requirements, `check` requires each server the session names
/// at the default stage.
fn every_server(rows: &[MatrixRow]) -> Vec<Requirement> {
    rows.iter()
        .filter(|r| r.kind == CapabilityKind::McpServer)
        .map(|r| Requirement {
            server: r.name.clone(),
            tool: None,
            need: Need::Reached,
        })
        .collect()
}

/// One session checked: each requirement's outcome, and a warning for each
/// failed server no requirement named.
pub(crate) fn check_session(
    summary: &tether_core::records::SessionSummary,
    rows: &[MatrixRow],
    requirements: &[Requirement],
) -> CheckedSession {
    let outcomes: Vec<RequirementOutcome> =
        requirements.iter().map(|r| evaluate(rows, r)).collect();
    let unrequired_failures = rows
        .iter()
        .filter(|r| r.kind == CapabilityKind::McpServer && r.status == DisplayStatus::Failed)
        .filter(|r| !requirements.iter().any(|q| q.server == r.name))
        .map(|r| {
            evaluate(
                rows,
                &Requirement {
                    server: r.name.clone(),
                    tool: None,
                    need: Need::Reached,
                },
            )
        })
        .collect();
    CheckedSession {
        session_id: summary.session_id.clone(),
        agent_kind: summary.agent_kind.clone(),
        agent_version: summary.agent_version.clone(),
        met: outcomes.iter().all(|o| o.met),
        requirements: outcomes,
        unrequired_failures,
    }
}

/// The document for `sessions`.
pub(crate) fn document(sessions: Vec<CheckedSession>) -> CheckDocument {
    CheckDocument {
        schema_version: CHECK_SCHEMA_VERSION,
        met: sessions.iter().all(|s| s.met),
        sessions,
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
    let mut out = String::new();
    for s in &doc.sessions {
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
/// failure's message is Tether's sentence and the reason code.
pub(crate) fn junit(doc: &CheckDocument) -> String {
    let tests: usize = doc.sessions.iter().map(|s| s.requirements.len()).sum();
    let failures: usize = doc
        .sessions
        .iter()
        .map(|s| s.requirements.iter().filter(|o| !o.met).count())
        .sum();
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"tether check\" tests=\"{tests}\" failures=\"{failures}\">\n"
    );
    for s in &doc.sessions {
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
                out.push_str(&format!(
                    "    <testcase classname=\"{class}\" name=\"{name}\">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
                    xml_escape(&with_code(o)),
                    xml_escape(&kind),
                    xml_escape(&with_code(o)),
                ));
            }
        }
        if !s.unrequired_failures.is_empty() {
            let lines: Vec<String> = s.unrequired_failures.iter().map(with_code).collect();
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
/// `::warning` for each failed server no requirement named.
pub(crate) fn github(doc: &CheckDocument) -> String {
    let mut out = String::new();
    for s in &doc.sessions {
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

/// A Markdown table per session.
pub(crate) fn markdown(doc: &CheckDocument) -> String {
    let mut out = String::from("## Tether: MCP requirements\n\n");
    if doc.sessions.is_empty() {
        out.push_str("No session to check.\n");
    }
    for s in &doc.sessions {
        out.push_str(&format!(
            "### {} {} — {}\n\n",
            md_cell(&s.session_id),
            md_cell(&s.agent_kind),
            if s.met { "met" } else { "**not met**" }
        ));
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

/// `doc` in `format`.
pub(crate) fn render(doc: &CheckDocument, format: Format) -> anyhow::Result<String> {
    Ok(match format {
        Format::Human => human(doc),
        Format::Json => format!("{}\n", serde_json::to_string_pretty(doc)?),
        Format::Junit => junit(doc),
        Format::Github => github(doc),
        Format::Markdown => markdown(doc),
    })
}

/// With `--format github`: the Markdown summary appended to
/// `$GITHUB_STEP_SUMMARY` (the runner's own file for it), when set.
pub(crate) fn github_summary(doc: &CheckDocument, who: &str) {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        return;
    };
    let written = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(markdown(doc).as_bytes()));
    if let Err(err) = written {
        errln!("{who}: cannot append the summary to $GITHUB_STEP_SUMMARY: {err}");
    }
}

/// The exit code for a checked document: 0 met, [`EXIT_UNMET`] else.
pub(crate) fn exit_code(doc: &CheckDocument) -> ExitCode {
    if doc.met {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_UNMET)
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
    /// For a file whose content several harnesses' files share: whose it is.
    #[arg(long, value_name = "KIND")]
    harness: Option<String>,
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
        match sessions_of(&registry, what, args.harness.as_deref(), &args.store) {
            Ok(mut found) => shown.append(&mut found),
            Err(code) => return Ok(code),
        }
    }
    let given = args.require.all();
    let checked = shown
        .iter()
        .map(|s| {
            let requirements = if given.is_empty() {
                every_server(&s.rows)
            } else {
                given.clone()
            };
            check_session(&s.summary, &s.rows, &requirements)
        })
        .collect();
    let doc = document(checked);
    let mut out = crate::term::stdout();
    out.write_all(render(&doc, args.format)?.as_bytes())?;
    out.flush()?;
    if args.format == Format::Github {
        github_summary(&doc, "tether check");
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
    let records = crate::records::read(registry, tether_records::Filter::default());
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
            Err(ExitCode::from(2))
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
            ExitCode::from(2)
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
        return Err(ExitCode::from(2));
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
    let (kind, harness_session) = history
        .session_id
        .split_once(':')
        .unwrap_or(("", history.session_id.as_str()));
    let summary = tether_core::records::SessionSummary {
        session_id: history.session_id.clone(),
        agent_kind: attempt.map_or_else(|| kind.to_owned(), |a| a.agent_kind.clone()),
        harness_session: harness_session.to_owned(),
        project: attempt.and_then(|a| a.project.clone()),
        agent_version: attempt.and_then(|a| a.agent_version.clone()),
        started_at: attempt.map(|a| a.started_at).unwrap_or_default(),
        updated_at: attempt.map(|a| a.updated_at).unwrap_or_default(),
        counts: Default::default(),
        files: 0,
    };
    Shown {
        summary,
        rows,
        history: history.clone(),
    }
}

#[cfg(test)]
mod tests;
