//! One requirement against one session's matrix rows
//! ([`tether_core::records::MatrixRow`]), one session against its
//! requirements, and the document of several sessions.
//!
//! Each outcome's sentence says what was asked and, when unmet, the
//! furthest stage the evidence shows and what is missing: it never says a
//! stage was reached and then that nothing shows it.

use tether_core::history::AttachmentHistory;
use tether_core::model::ProvenanceCode;
use tether_core::model::StageObservation;
use tether_core::records::{MatrixRow, SessionSummary};
use tether_core::vocab::{CapabilityKind, DisplayStatus, Stage, StageState};

use crate::document::{
    CHECK_SCHEMA_VERSION, CheckDocument, CheckedSession, RequirementOutcome, SessionError,
};
use crate::requirement::{Need, Requirement};

fn observation<'a>(row: &'a MatrixRow, key: &str) -> Option<&'a StageObservation> {
    row.stages.get(key)
}

fn state(row: &MatrixRow, key: &str) -> StageState {
    observation(row, key).map_or(StageState::Unknown, |o| o.state)
}

/// Whether what showed a stage saw the model's side: a request that left
/// for the model, a model turn, the tap. The harness's own report of the
/// tools it holds (an init line), today's configuration, an endpoint test,
/// an assumption or a rule never do.
fn model_side(provenance: Option<ProvenanceCode>) -> bool {
    matches!(
        provenance,
        Some(
            ProvenanceCode::ModelTap
                | ProvenanceCode::HarnessTelemetry
                | ProvenanceCode::HarnessRecord
                | ProvenanceCode::SessionEvent
                | ProvenanceCode::Relay
        )
    )
}

/// `model_visible` as a requirement reads it: `yes` only on a model-side
/// signal; a `yes` shown by the harness's own list is `unknown` here.
fn model_visible(row: &MatrixRow) -> StageState {
    match observation(row, "model_visible") {
        Some(o) if o.state == StageState::Yes && !model_side(o.provenance) => StageState::Unknown,
        Some(o) => o.state,
        None => StageState::Unknown,
    }
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
        Need::ModelVisible => model_visible(row),
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

/// The furthest stage on the ladder ([`Stage::PATH`]) the row shows `yes`;
/// a call made counts as `used` above `current_thread`.
fn furthest(row: &MatrixRow) -> Option<&'static str> {
    let on_ladder = Stage::PATH
        .iter()
        .rev()
        .find(|s| state(row, s.as_str()) == StageState::Yes);
    let used = row.calls > 0 || state(row, "called") == StageState::Yes;
    match on_ladder {
        Some(Stage::Callable) => Some("callable"),
        _ if used => Some("used"),
        Some(stage) => Some(stage.as_str()),
        None => None,
    }
}

/// "the furthest stage shown: X (where it stopped)".
fn furthest_clause(row: &MatrixRow) -> String {
    match furthest(row) {
        Some(stage) => format!("the furthest stage shown: {stage} ({})", row.stopped),
        None => format!("no stage shown ({})", row.stopped),
    }
}

/// The sentence of an unmet requirement whose row exists and did not fail.
fn unmet_sentence(row: &MatrixRow, req: &Requirement, decided: StageState) -> String {
    let tool = req.tool.is_some();
    let missing = req.need.missing(tool);
    let why = match decided {
        StageState::No => format!("missing: {missing} (the evidence shows it did not)"),
        StageState::NotApplicable => format!("missing: {missing} (it was never offered)"),
        _ if req.need == Need::ModelVisible
            && observation(row, "model_visible").is_some_and(|o| o.state == StageState::Yes) =>
        {
            format!("missing: {missing}; only the harness's own list of its tools shows it")
        }
        _ => format!("missing: {missing} (nothing shows it; unknown is never met)"),
    };
    format!(
        "{}: not met (required: {}); {}; {why}",
        req.subject(),
        req.need.clause(tool),
        furthest_clause(row)
    )
}

/// The outcome where the session has no row for the requirement; a name
/// that is a slip of one the session has says the one meant.
fn no_row(req: &Requirement, server: Option<&MatrixRow>, rows: &[MatrixRow]) -> RequirementOutcome {
    let subject = req.subject();
    let sentence = match (server, &req.tool) {
        (Some(s), Some(tool)) => {
            let prefix = format!("{}/", req.server);
            let tools = rows
                .iter()
                .filter(|r| r.kind == CapabilityKind::McpTool)
                .filter_map(|r| r.name.strip_prefix(&prefix));
            format!(
                "{subject}: not met: the server {} named no tool {tool:?}{}; {}",
                req.server,
                meant(tool, tools),
                furthest_clause(s)
            )
        }
        _ => {
            let servers = rows
                .iter()
                .filter(|r| r.kind == CapabilityKind::McpServer)
                .map(|r| r.name.as_str());
            format!(
                "{subject}: the session never named this server{}, so nothing shows that {}",
                meant(&req.server, servers),
                req.need.clause(false)
            )
        }
    };
    let reason = server
        .filter(|s| state(s, "tools_listed") == StageState::Yes)
        .map(|_| tether_core::vocab::ReasonCode::ToolNotListed);
    outcome(req, false, StageState::Unknown, reason, sentence)
}

/// ` (did you mean "x"?)` where `given` is a slip of one of `names`.
fn meant<'a>(given: &str, names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.collect();
    tether_words::near::nearest(given, &names)
        .map(|n| format!(" (did you mean {n:?}?)"))
        .unwrap_or_default()
}

fn outcome(
    req: &Requirement,
    met: bool,
    state: StageState,
    reason_code: Option<tether_core::vocab::ReasonCode>,
    sentence: String,
) -> RequirementOutcome {
    RequirementOutcome {
        requirement: req.spelled(),
        server: req.server.clone(),
        tool: req.tool.clone(),
        stage: req.need.word().to_owned(),
        met,
        state,
        reason_code,
        sentence,
    }
}

/// The row a tool requirement is about: `SERVER/TOOL`.
fn tool_row<'a>(rows: &'a [MatrixRow], subject: &str) -> Option<&'a MatrixRow> {
    rows.iter()
        .find(|r| r.kind == CapabilityKind::McpTool && r.name == subject)
}

/// One requirement against one session's rows.
pub fn evaluate(rows: &[MatrixRow], req: &Requirement) -> RequirementOutcome {
    let server = rows
        .iter()
        .find(|r| r.kind == CapabilityKind::McpServer && r.name == req.server);
    let row = match &req.tool {
        None => server,
        Some(_) => tool_row(rows, &req.subject()),
    };
    let Some(row) = row else {
        return no_row(req, server, rows);
    };
    let tool = req.tool.is_some();
    let decided = decide(row, req.need, tool);
    let failed = req.need == Need::Reached
        && (row.status == DisplayStatus::Failed
            || server.is_some_and(|s| s.status == DisplayStatus::Failed));
    let met = decided == StageState::Yes && !failed;
    let subject = req.subject();
    let sentence = if met {
        format!("{subject}: {}", req.need.clause(tool))
    } else if failed {
        match server.filter(|s| s.status == DisplayStatus::Failed && tool) {
            Some(s) => format!("{subject}: its server {} failed ({})", s.name, s.stopped),
            None => format!("{subject}: it failed ({})", row.stopped),
        }
    } else {
        unmet_sentence(row, req, decided)
    };
    let reason = if met {
        None
    } else {
        row.reason_code
            .clone()
            .or_else(|| server.and_then(|s| s.reason_code.clone()))
    };
    let state = if failed { StageState::No } else { decided };
    outcome(req, met, state, reason, sentence)
}

/// Whether the session's own evidence names the row: a stage shown by
/// something other than today's configuration (or an assumption). A
/// server only today's files name was never the session's (a run given
/// its servers by flag, `--strict-mcp-config`, had none of the user's).
fn named_by_session(row: &MatrixRow) -> bool {
    row.calls > 0
        || row.stages.values().any(|o| {
            o.state != StageState::Unknown
                && o.provenance.is_some_and(|p| {
                    !matches!(p, ProvenanceCode::CurrentConfig | ProvenanceCode::Assumed)
                })
        })
}

/// Without requirements, every server the session names is required at
/// the default stage (one only today's configuration names is not).
pub fn every_server(rows: &[MatrixRow]) -> Vec<Requirement> {
    rows.iter()
        .filter(|r| r.kind == CapabilityKind::McpServer && named_by_session(r))
        .map(|r| Requirement::reached(&r.name))
        .collect()
}

/// One session checked: each requirement's outcome, and a warning for
/// each failed server no requirement named.
pub fn check_session(
    summary: &SessionSummary,
    rows: &[MatrixRow],
    requirements: &[Requirement],
) -> CheckedSession {
    let outcomes: Vec<RequirementOutcome> =
        requirements.iter().map(|r| evaluate(rows, r)).collect();
    let unrequired_failures = rows
        .iter()
        .filter(|r| r.kind == CapabilityKind::McpServer && r.status == DisplayStatus::Failed)
        .filter(|r| !requirements.iter().any(|q| q.server == r.name))
        .map(|r| evaluate(rows, &Requirement::reached(&r.name)))
        .collect();
    CheckedSession {
        session_id: summary.session_id.clone(),
        agent_kind: summary.agent_kind.clone(),
        agent_version: summary.agent_version.clone(),
        met: outcomes.iter().all(|o| o.met),
        requirements: outcomes,
        unrequired_failures,
        session_error: None,
    }
}

/// One session's history checked: its current attempt's matrix
/// ([`tether_words::display::matrix`]) against `requirements` (every
/// server it names where none are given). The one path from evidence to
/// verdict, whatever brought the history: a run, a store, a file.
pub fn check_history(
    summary: &SessionSummary,
    history: &AttachmentHistory,
    requirements: &[Requirement],
) -> CheckedSession {
    let rows = history
        .current()
        .map(tether_words::display::matrix)
        .unwrap_or_default();
    let mut checked = if requirements.is_empty() {
        check_session(summary, &rows, &every_server(&rows))
    } else {
        check_session(summary, &rows, requirements)
    };
    checked.session_error =
        tether_words::display::current_report_error(history).map(|e| SessionError {
            reason_code: e.reason_code.clone(),
            sentence: tether_words::display::records_report_error(e),
        });
    checked
}

/// The summary a stored history gives of its session: its current
/// attempt's harness, version, project and times (no record files, no
/// counts), the harness and its session id else from the id (`KIND:ID`).
pub fn summary_of(history: &AttachmentHistory) -> SessionSummary {
    let attempt = history.current();
    let (kind, harness_session) = history
        .session_id
        .split_once(':')
        .unwrap_or(("", history.session_id.as_str()));
    SessionSummary {
        session_id: history.session_id.clone(),
        agent_kind: attempt.map_or_else(|| kind.to_owned(), |a| a.agent_kind.clone()),
        harness_session: harness_session.to_owned(),
        project: attempt.and_then(|a| a.project.clone()),
        agent_version: attempt.and_then(|a| a.agent_version.clone()),
        started_at: attempt.map(|a| a.started_at).unwrap_or_default(),
        updated_at: attempt.map(|a| a.updated_at).unwrap_or_default(),
        counts: Default::default(),
        files: 0,
        // Marked by its trigger when the records were imported.
        health_check: attempt
            .is_some_and(|a| a.trigger == tether_core::vocab::Trigger::HealthCheck),
    }
}

/// A stored history checked against `requirements`: [`check_history`]
/// with [`summary_of`] (the web service's and a store's way in).
pub fn check_stored(history: &AttachmentHistory, requirements: &[Requirement]) -> CheckedSession {
    check_history(&summary_of(history), history, requirements)
}

/// The document of several checked sessions: met when each is.
pub fn document(sessions: Vec<CheckedSession>) -> CheckDocument {
    CheckDocument {
        schema_version: CHECK_SCHEMA_VERSION,
        met: sessions.iter().all(|s| s.met),
        sessions,
    }
}
