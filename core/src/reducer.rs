//! The pure reducer: (history, event) → new history, or a typed rejection.
//!
//! Its invariants are written once, in ARCHITECTURE.md (`core/`), each
//! with the test that checks it.
//!
//! Every row fact is merged with a commutative, idempotent rule (earliest
//! first-seen, strongest stage state, newest tool count), so the final status
//! does not depend on how two connections' events interleave, and a duplicate
//! event changes nothing.

use crate::history::{
    AttachmentAttempt, AttachmentHistory, MAX_ATTEMPTS, MAX_CONNECTIONS, MAX_EVIDENCE, MAX_SERVERS,
    ReportError, SCHEMA_VERSION, ServerAttachment,
};
use crate::model::{
    ClientInfo, ConnectionRecord, EndpointTestResult, Evidence, ProvenanceCode, StageObservation,
    Stages, Timestamp, ToolCallRecord, ToolCatalog, ToolRow,
};
use crate::owner::{AttemptId, Owner};
use crate::sanitize::{self, Scrubber};
use crate::vocab::{
    DecisionKind, DisplayStatus, EvidenceKind, ReasonCode, ServerSource, Stage, StageState,
    Transport, Trigger,
};

/// One attempt's row names: each configured name (as the host wrote it, in
/// memory only) beside the sanitized name its row shows.
///
/// Evidence names a server the way a plugin or an agent reported it, which is
/// the configured name. It is matched here, before anything is scrubbed, so a
/// row keeps its evidence even when its name is also one of the configured
/// values the scrubber redacts (a server `notes` started as `… notes start`).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct RowNames {
    /// Each distinct configured name with its row's shown name, in plan order.
    by_configured: Vec<(String, String)>,
    /// The shown name of every row, in plan order (a repeated configured
    /// name repeats its first row's name).
    shown: Vec<String>,
}

impl std::fmt::Debug for RowNames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowNames")
            .field("rows", &self.shown)
            .finish_non_exhaustive()
    }
}

impl RowNames {
    /// Names for rows that already carry their shown names (a stored
    /// history's rows): each is matched as itself.
    pub fn shown_as_is<'a>(rows: impl IntoIterator<Item = &'a str>) -> Self {
        let mut names = RowNames::default();
        for row in rows {
            names.shown.push(row.to_owned());
            if !names.by_configured.iter().any(|(c, _)| c == row) {
                names.by_configured.push((row.to_owned(), row.to_owned()));
            }
        }
        names
    }

    /// The shown name of the row a reported server name belongs to: the row
    /// configured under exactly that name, else the row shown under it.
    /// `None` when the name belongs to no row.
    pub fn resolve(&self, reported: &str) -> Option<&str> {
        self.by_configured
            .iter()
            .find(|(configured, _)| configured == reported)
            .or_else(|| {
                self.by_configured
                    .iter()
                    .find(|(_, shown)| shown == reported)
            })
            .map(|(_, shown)| shown.as_str())
    }

    /// The shown names, one per row, in plan order.
    pub fn shown(&self) -> &[String] {
        &self.shown
    }

    /// A row for a new configured name: its shown name is the name
    /// sanitized (patterns only), made unique with a `~2`, `~3` suffix when
    /// an earlier name sanitized alike. Returns the shown name.
    pub fn add_unique(&mut self, configured: &str) -> String {
        let base = sanitize::name(configured);
        let mut shown = base.clone();
        let mut n = 2u32;
        while self.shown.contains(&shown) {
            let suffix = format!("~{n}");
            let keep = sanitize::truncate_utf8(
                &base,
                sanitize::NAME_MAX_BYTES.saturating_sub(suffix.len()),
            );
            shown = format!("{keep}{suffix}");
            n += 1;
        }
        self.by_configured
            .push((configured.to_owned(), shown.clone()));
        self.shown.push(shown.clone());
        shown
    }

    /// A row repeating an earlier configured name (a `duplicate_name` row).
    pub(crate) fn repeat(&mut self, shown: String) {
        self.shown.push(shown);
    }
}

/// The header of a new attempt, with one sanitized row per planned server.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptStart {
    /// The attempt's id.
    pub attempt_id: AttemptId,
    /// Whose the attempt is.
    pub owner: Owner,
    /// Agent kind.
    pub agent_kind: String,
    /// Host's agent id.
    pub agent_id: Option<String>,
    /// Agent profile.
    pub agent_profile_id: Option<String>,
    /// What started it.
    pub trigger: Trigger,
    /// When.
    pub at: Timestamp,
    /// The plan, already sanitized, in plan order.
    pub servers: Vec<PlannedRow>,
}

/// One server of a plan as the history stores it: sanitized, no secrets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedRow {
    /// Configured name.
    pub name: String,
    /// Who configured it.
    pub source: ServerSource,
    /// Transport chosen (or the primary one, when not delivered).
    pub transport: Transport,
    /// Sanitized target.
    pub target: String,
    /// The plugin's (or the core's) decision.
    pub decision: DecisionKind,
    /// Reason for filter and unavailable.
    pub reason_code: Option<ReasonCode>,
    /// Sanitized summary.
    pub summary: Option<String>,
    /// Sanitized host note (how it was delivered, say).
    pub note: Option<String>,
}

/// The receipt of a begun attempt, and the only owner an event can carry.
///
/// It has no public constructor: only [`begin_attempt`] makes one, for the
/// attempt it just began on that history. The hub begins every live attempt
/// and keeps each key inside that attempt's sink, so nothing outside the hub
/// can stamp evidence as a live attempt's (evidence itself has no ownership
/// fields). A key of another history is refused as `UnknownSession`, one of
/// a superseded attempt as `StaleAttempt`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AttemptKey {
    session_id: String,
    attempt_id: String,
}

impl AttemptKey {
    /// The owning session.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The owning attempt.
    pub fn attempt_id(&self) -> &str {
        &self.attempt_id
    }
}

/// Something that happens to a begun attempt (beginning one is
/// [`begin_attempt`], which returns the attempt's key).
#[derive(Debug, Clone, PartialEq)]
pub enum HistoryEvent {
    /// Evidence, with its attempt's key. The reducer sanitizes it (patterns
    /// only, no known secrets): the path for callers that hold no scrubber.
    Observe {
        /// Whose.
        key: AttemptKey,
        /// What was observed.
        evidence: Evidence,
    },
    /// Evidence that already passed [`sanitize_evidence`] (the hub's path,
    /// with the attempt's scrubber): the reducer does not scrub it twice.
    /// Only [`sanitize_evidence`] makes a [`SanitizedEvidence`], so no path
    /// into a history skips the sanitizer.
    ObserveSanitized {
        /// Whose.
        key: AttemptKey,
        /// What was observed, sanitized.
        evidence: SanitizedEvidence,
    },
    /// The tool catalog a host's own server served; replaces the row's catalog.
    Catalog {
        /// Whose.
        key: AttemptKey,
        /// The server's name.
        server: String,
        /// The catalog.
        catalog: Box<ToolCatalog>,
    },
    /// A configuration snapshot (`tether inventory`) attached to the attempt.
    ConfigSnapshot {
        /// Whose.
        key: AttemptKey,
        /// The snapshot (sanitized rows only).
        snapshot: Box<crate::inventory::InventoryDocument>,
    },
    /// A server the harness itself named (in its telemetry) that the
    /// attempt did not plan: a new row, configured by the harness
    /// ([`ServerSource::Harness`]), shown as `name` (already made unique by
    /// [`RowNames::add_unique`]). Bounded like planned rows.
    AddRow {
        /// Whose.
        key: AttemptKey,
        /// The row's shown name.
        name: String,
        /// Its transport, where the harness said.
        transport: Option<Transport>,
        /// When the harness named it.
        at: Timestamp,
        /// What named it (`harness_telemetry` or `harness_record`).
        provenance: ProvenanceCode,
    },
    /// What the harness said about the session itself: the project it ran
    /// in (a directory's last component) and its own version. A value that
    /// is no name is dropped; once set, the smallest value is kept, so
    /// order never matters.
    Describe {
        /// Whose.
        key: AttemptKey,
        /// The project, where said.
        project: Option<String>,
        /// The harness's version, where said.
        agent_version: Option<String>,
    },
    /// The sink for an attempt has dropped `total` events so far (full queue).
    TransitDrops {
        /// Whose.
        key: AttemptKey,
        /// Running total of drops.
        total: u32,
    },
}

/// What an accepted event did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduced {
    /// The history changed.
    Applied,
    /// The history changed, but the timeline was full, so the event was counted as dropped.
    AppliedTimelineFull,
    /// The event was already reflected; nothing changed.
    Duplicate,
    /// The evidence named a server that is no row of its attempt: only
    /// `unattributed_evidence` changed.
    Unattributed,
}

/// Why an event was refused. The history is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    /// The attempt was superseded; its evidence must not touch the current one.
    #[error("attempt {attempt_id} was superseded; its evidence is ignored")]
    StaleAttempt {
        /// The stale attempt.
        attempt_id: String,
    },
    /// The event belongs to another session (or task) than this history.
    #[error("event for session {session_id} does not belong to this history")]
    UnknownSession {
        /// The session the event named.
        session_id: String,
    },
    /// The attempt is not in the history (never begun, or rotated out).
    #[error("attempt {attempt_id} is not in this history")]
    UnknownAttempt {
        /// The attempt the event named.
        attempt_id: String,
    },
    /// The evidence names a server the attempt did not plan.
    #[error("server {server} is not in attempt's plan")]
    UnknownServer {
        /// The server the event named.
        server: String,
    },
    /// A hard bound would be exceeded.
    #[error("bound hit: {what} exceeds {limit}")]
    BoundHit {
        /// What was too large.
        what: &'static str,
        /// The bound.
        limit: usize,
    },
}

/// Rows a configuration snapshot attached to one attempt may hold.
pub const MAX_SNAPSHOT_ROWS: usize = 256;

/// Begins the attempt `start` describes on `history`, superseding the
/// current one at once, and returns the attempt's key: the only way to make
/// one. Beginning an attempt the history already holds changes nothing and
/// returns its key again. On `Err`, `history` is unchanged.
pub fn begin_attempt(
    history: &mut AttachmentHistory,
    start: &AttemptStart,
) -> Result<AttemptKey, Rejection> {
    begin(history, start)?;
    Ok(AttemptKey {
        session_id: start.owner.session.as_str().to_owned(),
        attempt_id: start.attempt_id.as_str().to_owned(),
    })
}

/// Applies `event` to `history` in place. On `Err`, `history` is unchanged.
pub fn reduce(history: &mut AttachmentHistory, event: &HistoryEvent) -> Result<Reduced, Rejection> {
    match event {
        HistoryEvent::Observe { key, evidence } => {
            let attempt = current_attempt_mut(history, key)?;
            let rows = RowNames::shown_as_is(attempt.servers.iter().map(|r| r.name.as_str()));
            observe(
                attempt,
                &sanitize_evidence(evidence, &Scrubber::new(), &rows),
            )
        }
        HistoryEvent::ObserveSanitized { key, evidence } => {
            let attempt = current_attempt_mut(history, key)?;
            observe(attempt, evidence)
        }
        HistoryEvent::Catalog {
            key,
            server,
            catalog,
        } => {
            let attempt = current_attempt_mut(history, key)?;
            let row = attempt
                .servers
                .iter_mut()
                .find(|r| &r.name == server)
                .ok_or_else(|| Rejection::UnknownServer {
                    server: server.clone(),
                })?;
            if row.tool_catalog.as_ref() == Some(catalog) {
                return Ok(Reduced::Duplicate);
            }
            row.tool_catalog = Some((**catalog).clone());
            attempt.updated_at = attempt.updated_at.max(catalog.at);
            Ok(Reduced::Applied)
        }
        HistoryEvent::ConfigSnapshot { key, snapshot } => {
            let attempt = current_attempt_mut(history, key)?;
            if snapshot.rows.len() > MAX_SNAPSHOT_ROWS {
                return Err(Rejection::BoundHit {
                    what: "config snapshot rows",
                    limit: MAX_SNAPSHOT_ROWS,
                });
            }
            if attempt.config_snapshot.as_ref() == Some(snapshot) {
                return Ok(Reduced::Duplicate);
            }
            attempt.config_snapshot = Some(snapshot.clone());
            Ok(Reduced::Applied)
        }
        HistoryEvent::AddRow {
            key,
            name,
            transport,
            at,
            provenance,
        } => {
            let attempt = current_attempt_mut(history, key)?;
            if attempt.servers.iter().any(|r| &r.name == name) {
                return Ok(Reduced::Duplicate);
            }
            if attempt.servers.len() >= MAX_SERVERS {
                return Err(Rejection::BoundHit {
                    what: "servers in one attempt",
                    limit: MAX_SERVERS,
                });
            }
            let planned = PlannedRow {
                name: name.clone(),
                source: ServerSource::Harness,
                transport: transport
                    .clone()
                    .unwrap_or_else(|| Transport::Other("unknown".into())),
                target: String::new(),
                decision: DecisionKind::Deliver,
                reason_code: None,
                summary: None,
                note: None,
            };
            let mut row = planned_row(&planned, *at);
            let said = |state| StageObservation::shown(state, *provenance, *at);
            row.stages.configured = said(StageState::Yes);
            row.stages.enabled = said(StageState::Yes);
            attempt.servers.push(row);
            attempt.updated_at = attempt.updated_at.max(*at);
            let kept = push_timeline(
                attempt,
                Evidence::new(EvidenceKind::Configured, *at)
                    .server(name.clone())
                    .provenance(provenance.word()),
            );
            Ok(if kept {
                Reduced::Applied
            } else {
                Reduced::AppliedTimelineFull
            })
        }
        HistoryEvent::Describe {
            key,
            project,
            agent_version,
        } => {
            let attempt = current_attempt_mut(history, key)?;
            let mut changed = false;
            let project = project
                .as_deref()
                .filter(|v| is_label(v) && sanitize::name(v) == *v);
            let version = agent_version
                .as_deref()
                .and_then(crate::records::version_of);
            for (slot, value) in [
                (&mut attempt.project, project.map(str::to_owned)),
                (&mut attempt.agent_version, version),
            ] {
                let Some(value) = value else {
                    continue;
                };
                if slot.as_deref().is_none_or(|cur| value.as_str() < cur) {
                    *slot = Some(value);
                    changed = true;
                }
            }
            Ok(if changed {
                Reduced::Applied
            } else {
                Reduced::Duplicate
            })
        }
        HistoryEvent::TransitDrops { key, total } => {
            check_session(history, &key.session_id)?;
            let attempt = history
                .attempts
                .iter_mut()
                .find(|a| a.attempt_id == key.attempt_id)
                .ok_or_else(|| Rejection::UnknownAttempt {
                    attempt_id: key.attempt_id.clone(),
                })?;
            // Drops are counted even on a superseded attempt: they are its own history.
            if *total > attempt.dropped_in_transit {
                attempt.dropped_evidence = attempt
                    .dropped_evidence
                    .saturating_add(total - attempt.dropped_in_transit);
                attempt.dropped_in_transit = *total;
                Ok(Reduced::Applied)
            } else {
                Ok(Reduced::Duplicate)
            }
        }
    }
}

/// Whether `s` can stand as a project's or version's label: 1 to 64 bytes
/// of letters, digits, spaces and `-_.+@`, so a path, a sentence or a
/// payload never becomes one.
fn is_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '+' | '@' | ' '))
}

/// The functional form: returns a new history, leaving the input untouched.
pub fn reduced(
    history: &AttachmentHistory,
    event: &HistoryEvent,
) -> Result<AttachmentHistory, Rejection> {
    let mut next = history.clone();
    reduce(&mut next, event)?;
    Ok(next)
}

fn check_session(history: &AttachmentHistory, session_id: &str) -> Result<(), Rejection> {
    if history.session_id == session_id {
        Ok(())
    } else {
        Err(Rejection::UnknownSession {
            session_id: session_id.to_owned(),
        })
    }
}

fn current_attempt_mut<'h>(
    history: &'h mut AttachmentHistory,
    key: &AttemptKey,
) -> Result<&'h mut AttachmentAttempt, Rejection> {
    check_session(history, &key.session_id)?;
    let attempt_id = key.attempt_id.as_str();
    let is_current = history.current_attempt_id.as_deref() == Some(attempt_id);
    let attempt = history
        .attempts
        .iter_mut()
        .find(|a| a.attempt_id == attempt_id)
        .ok_or_else(|| Rejection::UnknownAttempt {
            attempt_id: attempt_id.to_owned(),
        })?;
    if !is_current || attempt.superseded_at.is_some() {
        return Err(Rejection::StaleAttempt {
            attempt_id: attempt_id.to_owned(),
        });
    }
    Ok(attempt)
}

// === Attempt rotation ===

fn begin(history: &mut AttachmentHistory, start: &AttemptStart) -> Result<Reduced, Rejection> {
    check_session(history, start.owner.session.as_str())?;
    if start.owner.task != history.task_id.as_str() {
        return Err(Rejection::UnknownSession {
            session_id: start.owner.session.as_str().to_owned(),
        });
    }
    if start.servers.len() > MAX_SERVERS {
        return Err(Rejection::BoundHit {
            what: "servers in one attempt",
            limit: MAX_SERVERS,
        });
    }
    if history.attempt(start.attempt_id.as_str()).is_some() {
        return Ok(Reduced::Duplicate);
    }

    if let Some(current_id) = history.current_attempt_id.take()
        && let Some(old) = history
            .attempts
            .iter_mut()
            .find(|a| a.attempt_id == current_id)
    {
        old.superseded_at = Some(start.at);
        old.updated_at = old.updated_at.max(start.at);
        // Superseded attempts keep the tool count and drop the catalog.
        for row in &mut old.servers {
            row.tool_catalog = None;
        }
        push_timeline(
            old,
            Evidence::new(EvidenceKind::AttemptSuperseded, start.at),
        );
    }

    let mut attempt = AttachmentAttempt {
        attempt_id: start.attempt_id.as_str().to_owned(),
        task_id: start.owner.task.as_str().to_owned(),
        session_id: start.owner.session.as_str().to_owned(),
        execution_id: start.owner.execution.as_str().to_owned(),
        agent_kind: start.agent_kind.clone(),
        agent_id: start.agent_id.clone(),
        agent_profile_id: start.agent_profile_id.clone(),
        acp_session_id: None,
        project: None,
        agent_version: None,
        trigger: start.trigger.clone(),
        started_at: start.at,
        updated_at: start.at,
        superseded_at: None,
        accepted_at: None,
        evidence: Vec::new(),
        dropped_evidence: 0,
        dropped_in_transit: 0,
        unattributed_evidence: 0,
        report_error: None,
        servers: Vec::with_capacity(start.servers.len()),
        config_snapshot: None,
    };
    for planned in &start.servers {
        attempt.servers.push(planned_row(planned, start.at));
        push_timeline(
            &mut attempt,
            Evidence::new(EvidenceKind::Configured, start.at)
                .server(planned.name.clone())
                .provenance(crate::vocab::Provenance::CurrentConfig),
        );
    }
    for planned in &start.servers {
        let kind = match planned.decision {
            DecisionKind::Deliver => continue,
            DecisionKind::Filter => EvidenceKind::Filtered,
            DecisionKind::Unavailable => EvidenceKind::Unavailable,
        };
        let mut ev = Evidence::new(kind, start.at).server(planned.name.clone());
        ev.reason_code = planned.reason_code.clone();
        ev.summary = planned.summary.clone();
        push_timeline(&mut attempt, ev);
    }

    history.schema_version = SCHEMA_VERSION;
    history.current_attempt_id = Some(attempt.attempt_id.clone());
    history.attempts.push(attempt);
    while history.attempts.len() > MAX_ATTEMPTS {
        history.attempts.remove(0);
    }
    Ok(Reduced::Applied)
}

fn planned_row(planned: &PlannedRow, at: Timestamp) -> ServerAttachment {
    let config = |state| StageObservation::shown(state, ProvenanceCode::CurrentConfig, at);
    let mut stages = Stages {
        configured: config(StageState::Yes),
        enabled: config(StageState::Yes),
        ..Stages::default()
    };
    if planned.decision != DecisionKind::Deliver {
        stages.delivered =
            StageObservation::shown(StageState::No, ProvenanceCode::SessionEvent, at);
        mark_not_applicable_after_delivery(&mut stages, at);
    }
    let mut row = ServerAttachment {
        name: planned.name.clone(),
        source: planned.source.clone(),
        transport: planned.transport.clone(),
        target: planned.target.clone(),
        decision: planned.decision,
        status: DisplayStatus::Unknown,
        reason_code: planned.reason_code.clone(),
        summary: planned.summary.clone(),
        failed_at: None,
        connection_id: None,
        client: None,
        tool_count: None,
        tool_count_at: None,
        last_tool_call: None,
        connections: Vec::new(),
        stages,
        endpoint_test: None,
        tool_catalog: None,
        note: planned.note.clone(),
        tools: Vec::new(),
    };
    row.status = derive_status(&row);
    row
}

fn mark_not_applicable_after_delivery(stages: &mut Stages, at: Timestamp) {
    for stage in [
        Stage::Authenticated,
        Stage::Initialized,
        Stage::ToolsListed,
        Stage::Callable,
        Stage::ModelVisible,
    ] {
        stages.get_mut(stage).merge(StageObservation::shown(
            StageState::NotApplicable,
            ProvenanceCode::SessionEvent,
            at,
        ));
    }
}

/// Appends to the timeline; returns false (and counts a drop) when it is full.
fn push_timeline(attempt: &mut AttachmentAttempt, evidence: Evidence) -> bool {
    if attempt.evidence.len() < MAX_EVIDENCE {
        attempt.evidence.push(evidence);
        true
    } else {
        attempt.dropped_evidence = attempt.dropped_evidence.saturating_add(1);
        false
    }
}

// === Evidence ===

/// Evidence that passed [`sanitize_evidence`]; nothing else can make one.
#[derive(Debug, Clone, PartialEq)]
pub struct SanitizedEvidence {
    evidence: Evidence,
    /// It named a server that belongs to no row of its attempt: it is then
    /// counted in `unattributed_evidence` (or, for an explicit error, kept as
    /// a report-level error), never applied to a row.
    unattributed: bool,
}

impl SanitizedEvidence {
    /// The sanitized evidence.
    pub fn evidence(&self) -> &Evidence {
        &self.evidence
    }

    /// The sanitized evidence, owned.
    pub fn into_inner(self) -> Evidence {
        self.evidence
    }
}

/// Bounds and scrubs every string evidence carries, and attributes it to its
/// row. Pure. The hub passes a scrubber that knows the attempt's secret
/// values and the attempt's [`RowNames`], and hands the result to the reducer
/// as [`HistoryEvent::ObserveSanitized`]; raw evidence
/// ([`HistoryEvent::Observe`]) is scrubbed here with the patterns, so no path
/// into a history skips the sanitizer.
///
/// The server name is matched against the rows *before* scrubbing: a
/// reported name that belongs to a row becomes that row's shown name, so no
/// configured value the scrubber knows can cut evidence off its row. Any
/// other name is scrubbed and the evidence marked unattributed.
pub fn sanitize_evidence(
    evidence: &Evidence,
    scrubber: &Scrubber,
    rows: &RowNames,
) -> SanitizedEvidence {
    let name = |s: &Option<String>| s.as_deref().map(|v| scrubber.name(v));
    let (server, unattributed) = match evidence.server.as_deref() {
        None => (None, false),
        Some(reported) => match rows.resolve(reported) {
            Some(row) => (Some(row.to_owned()), false),
            None => (Some(scrubber.name(reported)), true),
        },
    };
    // Built field by field: every string is made once, by its sanitizer
    // (a clone first would allocate each string twice).
    let mut ev = Evidence {
        kind: evidence.kind.clone(),
        at: evidence.at,
        server,
        connection_id: evidence
            .connection_id
            .as_deref()
            .map(|c| sanitize::truncate_utf8(&sanitize::identifier(c), 64).to_owned()),
        reason_code: evidence.reason_code.clone(),
        summary: evidence.summary.as_deref().map(|s| scrubber.summary(s)),
        tool_count: evidence.tool_count,
        client: evidence.client.as_ref().map(|c| ClientInfo {
            name: scrubber.name(&c.name),
            version: name(&c.version),
            protocol_version: name(&c.protocol_version),
        }),
        provenance: evidence.provenance.clone(),
        tool: name(&evidence.tool),
        ok: evidence.ok,
        acp_session_id: evidence.acp_session_id.as_deref().map(sanitize::identifier),
        reported_status: evidence
            .reported_status
            .as_deref()
            .map(|s| sanitize::cap_with_ellipsis(&scrubber.name(s), 32)),
        endpoint_test: evidence.endpoint_test.clone(),
        calls: evidence.calls,
        failed_calls: evidence.failed_calls,
    };
    if let Some(test) = ev.endpoint_test.as_mut() {
        test.summary = test.summary.as_deref().map(|s| scrubber.summary(s));
        test.target = scrubber.name(&test.target);
        test.server_name = name(&test.server_name);
        test.server_version = name(&test.server_version);
        test.protocol_version = name(&test.protocol_version);
    }
    SanitizedEvidence {
        evidence: ev,
        unattributed,
    }
}

fn observe(attempt: &mut AttachmentAttempt, ev: &SanitizedEvidence) -> Result<Reduced, Rejection> {
    let unattributed = ev.unattributed;
    let ev = &ev.evidence;
    // The timestamp first: a cheap reject for nearly every entry.
    if attempt.evidence.iter().any(|e| e.at == ev.at && e == ev) {
        return Ok(Reduced::Duplicate);
    }

    // Whether the rows changed matters only when the timeline is full (then
    // an unchanged row makes the event a duplicate); with room, it is applied.
    let room = attempt.evidence.len() < MAX_EVIDENCE;
    let changed = match ev.server.as_deref() {
        Some(server) => {
            let is_error = ev.kind == EvidenceKind::ExplicitError;
            let row = match unattributed {
                true => None,
                false => attempt.servers.iter_mut().find(|r| r.name == server),
            };
            match row {
                // With room the event is applied whatever changed.
                Some(row) => apply_to_row_facts(row, ev) || room,
                // An error naming a server we never planned is still an error: report-level.
                None if is_error => apply_report_error(attempt, ev),
                // Counted, never dropped silently; the timeline keeps only
                // evidence about its rows.
                None => {
                    attempt.unattributed_evidence = attempt.unattributed_evidence.saturating_add(1);
                    attempt.updated_at = attempt.updated_at.max(ev.at);
                    return Ok(Reduced::Unattributed);
                }
            }
        }
        None => apply_to_attempt(attempt, ev),
    };

    if push_timeline_if_room(attempt, ev) {
        attempt.updated_at = attempt.updated_at.max(ev.at);
        Ok(Reduced::Applied)
    } else if changed {
        attempt.dropped_evidence = attempt.dropped_evidence.saturating_add(1);
        attempt.updated_at = attempt.updated_at.max(ev.at);
        Ok(Reduced::AppliedTimelineFull)
    } else {
        // Full timeline and nothing new in the rows: already reflected.
        Ok(Reduced::Duplicate)
    }
}

fn push_timeline_if_room(attempt: &mut AttachmentAttempt, ev: &Evidence) -> bool {
    if attempt.evidence.len() < MAX_EVIDENCE {
        attempt.evidence.push(ev.clone());
        true
    } else {
        false
    }
}

fn apply_to_attempt(attempt: &mut AttachmentAttempt, ev: &Evidence) -> bool {
    match ev.kind {
        EvidenceKind::SessionAccepted => {
            let before = (attempt.accepted_at, attempt.acp_session_id.clone());
            attempt.accepted_at = Some(attempt.accepted_at.map_or(ev.at, |t| t.min(ev.at)));
            // One acceptance per attempt in practice; keep the smallest id so order never matters.
            if let Some(id) = &ev.acp_session_id
                && attempt.acp_session_id.as_ref().is_none_or(|cur| id < cur)
            {
                attempt.acp_session_id = Some(id.clone());
            }
            before != (attempt.accepted_at, attempt.acp_session_id.clone())
        }
        EvidenceKind::ExplicitError => apply_report_error(attempt, ev),
        // Other attempt-level evidence (and unknown kinds) only enter the timeline.
        _ => false,
    }
}

fn apply_report_error(attempt: &mut AttachmentAttempt, ev: &Evidence) -> bool {
    let candidate = ReportError {
        at: ev.at,
        reason_code: ev
            .reason_code
            .clone()
            .unwrap_or(ReasonCode::SessionRequestFailed),
        summary: match (&ev.server, &ev.summary) {
            (Some(server), Some(s)) => Some(sanitize::summary(&format!("{server}: {s}"))),
            (Some(server), None) => Some(sanitize::summary(server)),
            (None, s) => s.clone(),
        },
    };
    // The earliest report-level error is kept; ties break on content, so order never matters.
    let key = |e: &ReportError| (e.at, e.reason_code.clone(), e.summary.clone());
    match &attempt.report_error {
        Some(existing) if key(existing) <= key(&candidate) => false,
        _ => {
            attempt.report_error = Some(candidate);
            true
        }
    }
}

/// Applies one evidence event to its row (the row's facts, then its status)
/// and says whether anything in the row changed.
///
/// Every mutation below reports its own change, so no before-image of the
/// row is taken (a clone per event was the reducer's largest cost). The
/// property test `row_change_flag_matches_a_before_image` holds this to the
/// full comparison.
fn apply_to_row_facts(row: &mut ServerAttachment, ev: &Evidence) -> bool {
    let at = ev.at;
    let prov = ProvenanceCode::from_word(&ev.provenance);
    let yes = StageObservation::shown(StageState::Yes, prov, at);
    let no = StageObservation::shown(StageState::No, prov, at);
    let stages_before = row.stages;
    let mut changed = false;

    match &ev.kind {
        EvidenceKind::Configured => {
            row.stages.configured.merge(yes);
        }
        EvidenceKind::Filtered | EvidenceKind::Unavailable => {
            if row.stages.delivered.state != StageState::Yes {
                let decision = if ev.kind == EvidenceKind::Filtered {
                    DecisionKind::Filter
                } else {
                    DecisionKind::Unavailable
                };
                changed |= set(&mut row.decision, decision);
                if row.failed_at.is_none() && ev.reason_code.is_some() {
                    changed |= set_from(&mut row.reason_code, &ev.reason_code);
                    changed |= set_from(&mut row.summary, &ev.summary);
                }
            }
            row.stages.delivered.merge(no);
        }
        EvidenceKind::Delivered => {
            row.stages.delivered.merge(yes);
        }
        // Each event sets the stage it shows; the stages below it on the
        // path follow from the ladder's closure, marked as implied.
        EvidenceKind::InitializeObserved => {
            row.stages.initialized.merge(yes);
            changed |= touch_connection(row, ev);
        }
        EvidenceKind::ToolsListObserved => {
            row.stages.tools_listed.merge(yes);
            if let Some(count) = ev.tool_count {
                changed |= merge_tool_count(row, count, at);
            }
            if let Some(tool) = &ev.tool
                && let Some(t) = tool_row(row, tool)
            {
                t.listed.merge(yes);
            }
            changed |= touch_connection(row, ev);
        }
        EvidenceKind::ToolVisible => {
            row.stages.model_visible.merge(yes);
            if let Some(tool) = &ev.tool
                && let Some(t) = tool_row(row, tool)
            {
                t.model_visible.merge(yes);
            }
        }
        EvidenceKind::ToolCallObserved => {
            // A call proves the agent (its model) could see and pick the tool.
            row.stages.model_visible.merge(yes);
            if ev.ok == Some(true) {
                row.stages.callable.merge(yes);
            }
            if let Some(tool) = &ev.tool {
                changed |= tool_call(row, tool, ev, prov);
                let ok = ev.ok.unwrap_or(false);
                // Strictly newer, so a replacement always changes the row.
                let newer = row.last_tool_call.as_ref().is_none_or(|last| {
                    (last.at, last.tool.as_str(), last.ok) < (at, tool.as_str(), ok)
                });
                if newer {
                    row.last_tool_call = Some(ToolCallRecord {
                        tool: tool.clone(),
                        ok,
                        at,
                    });
                    changed = true;
                }
            }
            changed |= touch_connection(row, ev);
        }
        EvidenceKind::ConnectionClosed => {
            if let Some(id) = &ev.connection_id {
                if let Some((record, new)) = upsert_connection(row, id, at) {
                    let closed = Some(record.closed_at.map_or(at, |t| t.max(at)));
                    changed |= new | set(&mut record.closed_at, closed);
                }
                changed |= finish_connections(row);
            }
        }
        EvidenceKind::ExplicitError => {
            changed |= record_failure(row, ev, ReasonCode::ServerError);
        }
        EvidenceKind::AgentReported => changed |= apply_agent_report(row, ev),
        EvidenceKind::EndpointTested => {
            if let Some(test) = &ev.endpoint_test {
                // The newest test wins; ties break on content, so order never matters.
                let key = |t: &EndpointTestResult| {
                    (
                        t.at,
                        t.elapsed_ms,
                        t.succeeded,
                        t.tool_count,
                        t.reason_code.clone(),
                        t.summary.clone(),
                    )
                };
                // Strictly newer, so a replacement always changes the row.
                let newer = row
                    .endpoint_test
                    .as_ref()
                    .is_none_or(|t| key(t) < key(test));
                if newer {
                    row.endpoint_test = Some((**test).clone());
                    changed = true;
                }
            }
        }
        // Session-level or unknown kinds change no row.
        _ => {}
    }

    // The ladder is monotone, whatever the source: a later stage shown
    // `yes` implies the ones on its path below. Closed after every change,
    // so only what this event changed needs closing again: the row's
    // stages when they moved, and the tool it names.
    if row.stages != stages_before {
        row.stages.close();
    }
    if let Some(name) = &ev.tool
        && let Some(tool) = row.tools.iter_mut().find(|t| t.name == *name)
    {
        changed |= tool.close();
    }
    changed |= row.stages != stages_before;
    let status = derive_status(row);
    changed | set(&mut row.status, status)
}

/// The tool row for `tool`, added when there is room (none past
/// [`MAX_TOOL_ROWS`](crate::history::MAX_TOOL_ROWS)).
fn tool_row<'r>(row: &'r mut ServerAttachment, tool: &str) -> Option<&'r mut ToolRow> {
    match row.tools.iter().position(|t| t.name == tool) {
        Some(i) => row.tools.get_mut(i),
        None if row.tools.len() < crate::history::MAX_TOOL_ROWS => {
            row.tools.push(ToolRow::new(tool));
            row.tools.last_mut()
        }
        None => None,
    }
}

/// A call (or a source's count of calls) of `tool`: its row is listed,
/// model-visible and called, and its counts rise to the largest seen (a
/// count is a running total, so the merge is a maximum: idempotent, and
/// order never matters). True when the tool's row changed.
fn tool_call(row: &mut ServerAttachment, tool: &str, ev: &Evidence, prov: ProvenanceCode) -> bool {
    let at = ev.at;
    let Some(t) = tool_row(row, tool) else {
        return false;
    };
    let before = t.clone();
    // The tool's model_visible and listed follow from the closure.
    t.called
        .merge(StageObservation::shown(StageState::Yes, prov, at));
    let calls = ev.calls.unwrap_or(1);
    let failed = ev
        .failed_calls
        .unwrap_or(u32::from(ev.ok == Some(false)))
        .min(calls);
    t.calls = t.calls.max(calls);
    t.failed_calls = t.failed_calls.max(failed);
    t.last_call_at = Some(t.last_call_at.map_or(at, |l| l.max(at)));
    *t != before
}

/// Sets `slot` to `value`; true when that changed it.
fn set<T: PartialEq>(slot: &mut T, value: T) -> bool {
    if *slot == value {
        false
    } else {
        *slot = value;
        true
    }
}

/// Sets `slot` to a copy of `value`, cloning only when it differs.
fn set_from<T: PartialEq + Clone>(slot: &mut T, value: &T) -> bool {
    if slot == value {
        false
    } else {
        slot.clone_from(value);
        true
    }
}

/// What an agent's own word for a server's state (`reported_status`) means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportedState {
    /// Connected, ready, running, ok.
    Up,
    /// Failed, error, errored.
    Failed,
    /// Needs authentication (needs-auth, unauthorized, auth-required,
    /// unauthenticated, login-required, needs-client-registration).
    NeedsAuth,
    /// Disabled.
    Disabled,
    /// Pending, or a word this build does not know: nothing shown yet.
    Pending,
}

impl ReportedState {
    /// Whether the agent said the server will not be used.
    pub fn is_final_failure(self) -> bool {
        matches!(
            self,
            ReportedState::Failed | ReportedState::NeedsAuth | ReportedState::Disabled
        )
    }
}

/// Reads an agent's word for a server's state, case- and `_`/`-`-insensitively.
pub fn reported_state(word: &str) -> ReportedState {
    match word.to_ascii_lowercase().replace('_', "-").as_str() {
        "connected" | "ready" | "running" | "ok" => ReportedState::Up,
        "failed" | "error" | "errored" => ReportedState::Failed,
        // However a harness words a wanted login: OpenCode also says
        // `needs_client_registration` (an OAuth server that wants a client
        // id first).
        "needs-auth"
        | "unauthorized"
        | "auth-required"
        | "unauthenticated"
        | "login-required"
        | "needs-client-registration" => ReportedState::NeedsAuth,
        "disabled" => ReportedState::Disabled,
        _ => ReportedState::Pending,
    }
}

/// Applies an agent's own report (on its output, or in its own telemetry:
/// the evidence's provenance says which); true when the row changed (its
/// stages are compared by the caller).
fn apply_agent_report(row: &mut ServerAttachment, ev: &Evidence) -> bool {
    let at = ev.at;
    let said_by = match ProvenanceCode::from_word(&ev.provenance) {
        code @ (ProvenanceCode::HarnessTelemetry | ProvenanceCode::HarnessRecord) => code,
        _ => ProvenanceCode::AgentReport,
    };
    let report = |state| StageObservation::shown(state, said_by, at);
    let mut changed = false;
    match ev.reported_status.as_deref().map(reported_state) {
        Some(ReportedState::Up) => {
            row.stages.initialized.merge(report(StageState::Yes));
        }
        Some(ReportedState::Failed) => {
            row.stages.initialized.merge(report(StageState::No));
            changed |= record_failure(row, ev, ReasonCode::AgentReportedFailed);
        }
        Some(ReportedState::NeedsAuth) => {
            row.stages.authenticated.merge(report(StageState::No));
            let mut auth = ev.clone();
            auth.reason_code = Some(ReasonCode::AuthRequired);
            changed |= record_failure(row, &auth, ReasonCode::AuthRequired);
        }
        Some(ReportedState::Disabled) => {
            row.stages.enabled.merge(report(StageState::No));
        }
        // pending, unknown words: nothing is shown yet.
        Some(ReportedState::Pending) | None => {}
    }
    if let Some(count) = ev.tool_count
        && count > 0
    {
        row.stages.tools_listed.merge(report(StageState::Yes));
        row.stages.model_visible.merge(report(StageState::Yes));
        changed |= merge_tool_count(row, count, at);
    }
    changed
}

/// Keeps the earliest failure; true when it replaced the row's.
fn record_failure(row: &mut ServerAttachment, ev: &Evidence, default: ReasonCode) -> bool {
    // A variable its configuration needs was not set: that is the cause of
    // whatever failure follows (the spawn error, the 401, `host_not_found`
    // it leads to), so the row keeps it and only learns when it failed.
    if row.reason_code == Some(ReasonCode::UnresolvedVariable) {
        let earlier = row.failed_at.is_none_or(|at| ev.at < at);
        if earlier {
            row.failed_at = Some(ev.at);
        }
        return earlier;
    }
    let reason = ev.reason_code.clone().unwrap_or(default);
    // The earliest failure is kept; ties break on content, so order never matters.
    let replace = match row.failed_at {
        None => true,
        Some(at) => {
            (ev.at, Some(&reason), ev.summary.as_ref())
                < (at, row.reason_code.as_ref(), row.summary.as_ref())
        }
    };
    if replace {
        row.failed_at = Some(ev.at);
        row.reason_code = Some(reason);
        row.summary.clone_from(&ev.summary);
    }
    replace
}

/// Keeps the newest tool count; true when it changed.
fn merge_tool_count(row: &mut ServerAttachment, count: u32, at: Timestamp) -> bool {
    let newer = match (row.tool_count_at, row.tool_count) {
        (Some(t), Some(c)) => (at, count) > (t, c),
        _ => true,
    };
    if newer {
        row.tool_count = Some(count);
        row.tool_count_at = Some(at);
    }
    newer
}

/// The row's record for connection `id`, made if new; the flag is true when
/// the record was added or its first-seen time moved earlier. `None` when a
/// new record would be the oldest of a full list: [`finish_connections`]
/// would drop it at once, so it is not made.
fn upsert_connection<'r>(
    row: &'r mut ServerAttachment,
    id: &str,
    at: Timestamp,
) -> Option<(&'r mut ConnectionRecord, bool)> {
    match row.connections.iter().position(|c| c.connection_id == id) {
        Some(i) => {
            let record = &mut row.connections[i];
            let earlier = at < record.first_seen_at;
            if earlier {
                record.first_seen_at = at;
            }
            Some((record, earlier))
        }
        None => {
            let oldest = row
                .connections
                .iter()
                .map(|c| (c.first_seen_at, c.connection_id.as_str()))
                .min();
            if row.connections.len() >= MAX_CONNECTIONS && oldest.is_some_and(|o| (at, id) < o) {
                return None;
            }
            row.connections.push(ConnectionRecord {
                connection_id: id.to_owned(),
                first_seen_at: at,
                closed_at: None,
                client: None,
            });
            let last = row.connections.len() - 1;
            Some((&mut row.connections[last], true))
        }
    }
}

/// Records the connection an event came on (and its client); true when the
/// row changed.
fn touch_connection(row: &mut ServerAttachment, ev: &Evidence) -> bool {
    let Some(id) = &ev.connection_id else {
        return false;
    };
    let mut changed = false;
    if let Some((record, new)) = upsert_connection(row, id, ev.at) {
        changed = new;
        if let Some(client) = &ev.client {
            // The client is fixed per connection; keep the smallest for determinism.
            if record
                .client
                .as_ref()
                .is_none_or(|c| client_key(client) < client_key(c))
            {
                record.client = Some(client.clone());
                changed = true;
            }
        }
    }
    finish_connections(row) | changed
}

fn client_key(c: &ClientInfo) -> (&str, Option<&str>, Option<&str>) {
    (
        c.name.as_str(),
        c.version.as_deref(),
        c.protocol_version.as_deref(),
    )
}

/// Sorts connections oldest first, keeps the newest eight, and points the
/// row at the newest; true when any of that changed the row. Clones only
/// what changed.
fn finish_connections(row: &mut ServerAttachment) -> bool {
    let order = |a: &ConnectionRecord, b: &ConnectionRecord| {
        (a.first_seen_at, &a.connection_id).cmp(&(b.first_seen_at, &b.connection_id))
    };
    let mut changed = false;
    if !row.connections.is_sorted_by(|a, b| order(a, b).is_le()) {
        row.connections.sort_by(order);
        changed = true;
    }
    if row.connections.len() > MAX_CONNECTIONS {
        let excess = row.connections.len() - MAX_CONNECTIONS;
        row.connections.drain(..excess);
        changed = true;
    }
    let newest = row.connections.last().map(|c| c.connection_id.as_str());
    if row.connection_id.as_deref() != newest {
        row.connection_id = newest.map(str::to_owned);
        changed = true;
    }
    if let Some(client) = row.connections.iter().rev().find_map(|c| c.client.as_ref())
        && row.client.as_ref() != Some(client)
    {
        row.client = Some(client.clone());
        changed = true;
    }
    changed
}

/// The display status the row's facts support, strongest first.
///
/// Precedence is the brief's: active, connected, delivered, failed, filtered /
/// unavailable, unknown; with one refinement the scenarios require: an
/// explicit server-specific error means the agent refused what was delivered,
/// so it outranks bare delivery, but never connection evidence.
pub fn derive_status(row: &ServerAttachment) -> DisplayStatus {
    let s = &row.stages;
    if s.tools_listed.state == StageState::Yes {
        DisplayStatus::Active
    } else if s.initialized.state == StageState::Yes {
        DisplayStatus::Connected
    } else if row.failed_at.is_some() {
        DisplayStatus::Failed
    } else if s.delivered.state == StageState::Yes {
        DisplayStatus::Delivered
    } else {
        match row.decision {
            DecisionKind::Filter => DisplayStatus::Filtered,
            DecisionKind::Unavailable => DisplayStatus::Unavailable,
            DecisionKind::Deliver if s.delivered.state == StageState::No => {
                DisplayStatus::Unavailable
            }
            DecisionKind::Deliver => DisplayStatus::Unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(attempt: &str, servers: usize) -> AttemptStart {
        AttemptStart {
            attempt_id: attempt.into(),
            owner: Owner {
                task: "t".into(),
                session: "s".into(),
                execution: "e".into(),
            },
            agent_kind: "k".into(),
            agent_id: None,
            agent_profile_id: None,
            trigger: Trigger::SessionNew,
            at: Timestamp(1),
            servers: (0..servers)
                .map(|i| PlannedRow {
                    name: format!("srv{i}"),
                    source: ServerSource::Profile,
                    transport: Transport::Stdio,
                    target: "x".into(),
                    decision: DecisionKind::Deliver,
                    reason_code: None,
                    summary: None,
                    note: None,
                })
                .collect(),
        }
    }

    /// Test-only: a key made up here, to prove the reducer checks it.
    fn observe(session: &str, attempt: &str, ev: Evidence) -> HistoryEvent {
        HistoryEvent::Observe {
            key: AttemptKey {
                session_id: session.into(),
                attempt_id: attempt.into(),
            },
            evidence: ev,
        }
    }

    #[test]
    fn rejections_are_typed_and_leave_the_history_unchanged() {
        let mut h = AttachmentHistory::new("t", "s");
        assert_eq!(
            begin(&mut h, &start("a", MAX_SERVERS + 1)),
            Err(Rejection::BoundHit {
                what: "servers in one attempt",
                limit: MAX_SERVERS
            })
        );
        begin(&mut h, &start("a", 1)).expect("begin");
        let before = h.clone();
        let ev = Evidence::new(EvidenceKind::Delivered, Timestamp(2)).server("srv0");
        assert!(matches!(
            reduce(&mut h, &observe("other", "a", ev.clone())),
            Err(Rejection::UnknownSession { .. })
        ));
        assert!(matches!(
            reduce(&mut h, &observe("s", "nope", ev.clone())),
            Err(Rejection::UnknownAttempt { .. })
        ));
        assert!(matches!(
            reduce(
                &mut h,
                &observe(
                    "s",
                    "a",
                    Evidence::new(EvidenceKind::Delivered, Timestamp(2)).server("ghost")
                )
            ),
            Ok(Reduced::Unattributed)
        ));
        // Counted, and nothing else changed.
        let mut counted = before.clone();
        counted.attempts[0].unattributed_evidence = 1;
        counted.attempts[0].updated_at = Timestamp(2).max(counted.attempts[0].updated_at);
        assert_eq!(h, counted);
        h = before.clone();
        assert_eq!(begin(&mut h, &start("a", 1)), Ok(Reduced::Duplicate));
        assert_eq!(
            reduce(&mut h, &observe("s", "a", ev.clone())),
            Ok(Reduced::Applied)
        );
        assert_eq!(
            reduce(&mut h, &observe("s", "a", ev)),
            Ok(Reduced::Duplicate)
        );
    }

    #[test]
    fn a_full_timeline_counts_drops_but_rows_still_change() {
        let mut h = AttachmentHistory::new("t", "s");
        begin(&mut h, &start("a", 1)).expect("begin");
        for i in 0..MAX_EVIDENCE as u64 {
            let ev = Evidence::new(EvidenceKind::ToolCallObserved, Timestamp(10 + i))
                .server("srv0")
                .tool_call("echo", true);
            reduce(&mut h, &observe("s", "a", ev)).expect("observe");
        }
        let attempt = h.current().expect("current");
        assert_eq!(attempt.evidence.len(), MAX_EVIDENCE);
        let dropped = attempt.dropped_evidence;
        assert!(dropped > 0, "configured evidence plus 64 calls overflow");
        let late = Evidence::new(EvidenceKind::ToolsListObserved, Timestamp(999))
            .server("srv0")
            .tools(7);
        assert_eq!(
            reduce(&mut h, &observe("s", "a", late.clone())),
            Ok(Reduced::AppliedTimelineFull)
        );
        assert_eq!(
            reduce(&mut h, &observe("s", "a", late)),
            Ok(Reduced::Duplicate)
        );
        let attempt = h.current().expect("current");
        assert_eq!(attempt.dropped_evidence, dropped + 1);
        let row = attempt.server("srv0").expect("row");
        assert_eq!(row.status, DisplayStatus::Active);
        assert_eq!(row.tool_count, Some(7));
    }

    #[test]
    fn superseded_attempts_keep_the_tool_count_and_drop_the_catalog() {
        let mut h = AttachmentHistory::new("t", "s");
        begin(&mut h, &start("a", 1)).expect("begin");
        let listed = Evidence::new(EvidenceKind::ToolsListObserved, Timestamp(2))
            .server("srv0")
            .tools(3);
        reduce(&mut h, &observe("s", "a", listed)).expect("listed");
        let catalog = ToolCatalog {
            method: crate::model::CATALOG_METHOD.into(),
            at: Timestamp(3),
            tool_count: 3,
            tools: vec![],
            truncated: false,
            total_tokens: 42,
        };
        let event = HistoryEvent::Catalog {
            key: AttemptKey {
                session_id: "s".into(),
                attempt_id: "a".into(),
            },
            server: "srv0".into(),
            catalog: Box::new(catalog),
        };
        assert_eq!(reduce(&mut h, &event), Ok(Reduced::Applied));
        assert_eq!(reduce(&mut h, &event), Ok(Reduced::Duplicate));
        assert!(h.current().expect("a").servers[0].tool_catalog.is_some());

        begin(&mut h, &start("b", 1)).expect("begin b");
        let old = h.attempt("a").expect("kept as history");
        assert!(old.servers[0].tool_catalog.is_none());
        assert_eq!(old.servers[0].tool_count, Some(3));
        assert!(matches!(
            reduce(&mut h, &event),
            Err(Rejection::StaleAttempt { .. })
        ));
    }

    #[test]
    fn every_harness_s_word_for_a_wanted_login_is_needs_auth() {
        for word in [
            "needs-auth",
            "needs_auth",
            "NEEDS_AUTH",
            "unauthorized",
            "auth-required",
            "unauthenticated",
            "login_required",
            "needs_client_registration",
        ] {
            assert_eq!(reported_state(word), ReportedState::NeedsAuth, "{word}");
        }
        assert_eq!(reported_state("connected"), ReportedState::Up);
        assert_eq!(reported_state("registration"), ReportedState::Pending);
    }

    #[test]
    fn agent_reports_move_stages_with_agent_provenance() {
        let mut h = AttachmentHistory::new("t", "s");
        begin(&mut h, &start("a", 3)).expect("begin");
        let report = |server: &str, status: &str| {
            Evidence::new(EvidenceKind::AgentReported, Timestamp(5))
                .server(server)
                .reported(status)
        };
        reduce(
            &mut h,
            &observe("s", "a", report("srv0", "connected").tools(4)),
        )
        .expect("ok");
        reduce(&mut h, &observe("s", "a", report("srv1", "needs-auth"))).expect("ok");
        reduce(&mut h, &observe("s", "a", report("srv2", "pending"))).expect("ok");
        let a = h.current().expect("current");
        let r0 = a.server("srv0").expect("srv0");
        assert_eq!(r0.status, DisplayStatus::Active);
        assert_eq!(r0.stages.model_visible.state, StageState::Yes);
        assert_eq!(
            r0.stages.model_visible.provenance,
            Some(ProvenanceCode::AgentReport)
        );
        let r1 = a.server("srv1").expect("srv1");
        assert_eq!(r1.status, DisplayStatus::Failed);
        assert_eq!(r1.reason_code, Some(ReasonCode::AuthRequired));
        assert_eq!(r1.stages.authenticated.state, StageState::No);
        assert_eq!(
            a.server("srv2").expect("srv2").status,
            DisplayStatus::Unknown
        );
    }

    #[test]
    fn an_unset_variable_stays_the_cause_of_the_failure_it_leads_to() {
        let mut h = AttachmentHistory::new("t", "s");
        let mut planned = start("a", 3);
        for row in &mut planned.servers {
            row.reason_code = Some(ReasonCode::UnresolvedVariable);
            row.summary = Some("not set here: GH_TOKEN".into());
        }
        begin(&mut h, &planned).expect("begin");
        let failed = |at: u64, status: &str| {
            Evidence::new(EvidenceKind::AgentReported, Timestamp(at))
                .server("srv0")
                .reported(status)
        };
        // Two failures, in either order: the earliest time, the unset cause.
        reduce(&mut h, &observe("s", "a", failed(9, "failed"))).expect("ok");
        reduce(&mut h, &observe("s", "a", failed(4, "needs-auth"))).expect("ok");
        reduce(
            &mut h,
            &observe(
                "s",
                "a",
                Evidence::new(EvidenceKind::AgentReported, Timestamp(5))
                    .server("srv1")
                    .reported("connected")
                    .tools(2),
            ),
        )
        .expect("ok");
        let a = h.current().expect("current");
        let r0 = a.server("srv0").expect("srv0");
        assert_eq!(r0.status, DisplayStatus::Failed);
        assert_eq!(r0.reason_code, Some(ReasonCode::UnresolvedVariable));
        assert_eq!(r0.failed_at, Some(Timestamp(4)));
        assert_eq!(
            crate::display::stopped(r0),
            "failed: not set here: GH_TOKEN"
        );
        // Working anyway: the row says what it did, not the variable.
        let r1 = a.server("srv1").expect("srv1");
        assert_eq!(r1.status, DisplayStatus::Active);
        assert!(!crate::display::stopped(r1).contains("GH_TOKEN"));
        // Nothing shown either way: the variable is the lead.
        let r2 = a.server("srv2").expect("srv2");
        assert_eq!(r2.status, DisplayStatus::Unknown);
        assert_eq!(
            crate::display::stopped(r2),
            "configured, but not set here: GH_TOKEN; nothing shows the session used it"
        );
    }
}
