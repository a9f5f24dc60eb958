//! The pure reducer: (history, event) → new history, or a typed rejection.
//!
//! Its invariants are written once, in ARCHITECTURE.md (`core/`), each
//! with the test that checks it.
//!
//! Every row fact is merged with a commutative, idempotent rule (earliest
//! first-seen, strongest stage state, newest tool count), so the final status
//! does not depend on how two connections' events interleave, and a duplicate
//! event changes nothing.
//!
//! `begin_attempt(history, start)`, which returns the attempt's `AttemptKey`,
//! and `reduce(history, event)`, where every event carries such a key. Every
//! row fact merges with a commutative, idempotent rule. Split by what each part
//! holds: `reducer/attempt.rs` (rotation, rows planned from decisions),
//! `reducer/evidence.rs` (sanitizing: `SanitizedEvidence` is the only way in),
//! `reducer/fold.rs` (evidence onto its row, the status derived).

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
    CallOutcome, DecisionKind, DisplayStatus, EvidenceKind, ReasonCode, ReportedStatus,
    ServerSource, Stage, StageState, Transport, Trigger,
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

mod attempt;
mod evidence;
mod fold;
#[cfg(test)]
mod tests;

use attempt::*;
pub use evidence::{SanitizedEvidence, sanitize_evidence};
pub use fold::derive_status;
use fold::*;
