//! What the records of one harness session add up to, and the attachment
//! history built from it (or merged into the one a store already holds).
//!
//! Every fact merges idempotently: a record read twice (a file imported
//! again, or reread after it was cut short) changes nothing. Tool calls are
//! counted by their call id, per source, so a call written twice (started,
//! then completed) counts once, and two sources that each saw the same
//! calls (a transcript and a server log) give the larger count, not the sum.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use tether_core::history::AttachmentHistory;
use tether_core::model::{Evidence, ProvenanceCode, Timestamp};
use tether_core::observer::{TransportObserver, plan};
use tether_core::owner::Owner;
use tether_core::plan::{DriveMode, PlanContext};
use tether_core::records::{RecordReading, session_id};
use tether_core::reducer::{
    AttemptStart, HistoryEvent, RowNames, begin_attempt, reduce, sanitize_evidence,
};
use tether_core::spec::ServerSpec;
use tether_core::telemetry::NamedServer;
use tether_core::vocab::{EvidenceKind, Provenance, Trigger};

/// Facts kept per session, at most.
pub const MAX_FACTS: usize = 512;
/// Calls remembered per session (by id), at most; past it calls are still
/// counted, without their ids.
pub const MAX_CALL_IDS: usize = 65_536;

#[derive(Debug, Clone, Default)]
struct Call {
    server: Option<String>,
    tool: Option<String>,
    ok: Option<bool>,
    at: Timestamp,
}

/// What one harness session's records say so far.
#[derive(Debug, Clone)]
pub struct SessionFacts {
    /// The harness.
    pub agent_kind: String,
    /// Its own session id.
    pub harness_session: String,
    /// The project, where a record said.
    pub project: Option<String>,
    /// The harness's version, where a record said.
    pub version: Option<String>,
    /// The first record's time.
    pub first_at: Timestamp,
    /// The last record's time.
    pub last_at: Timestamp,
    /// The files its records came from (as shown, `~/…`).
    pub files: BTreeSet<String>,
    servers: Vec<NamedServer>,
    facts: Vec<Evidence>,
    dropped: u32,
    /// (role, call id) → the call.
    calls: HashMap<(String, String), Call>,
    anonymous: u64,
}

impl SessionFacts {
    /// Nothing yet for `harness_session` of `agent_kind`.
    pub fn new(agent_kind: &str, harness_session: &str) -> Self {
        SessionFacts {
            agent_kind: agent_kind.to_owned(),
            harness_session: harness_session.to_owned(),
            project: None,
            version: None,
            first_at: Timestamp(0),
            last_at: Timestamp(0),
            files: BTreeSet::new(),
            servers: Vec::new(),
            facts: Vec::new(),
            dropped: 0,
            calls: HashMap::new(),
            anonymous: 0,
        }
    }

    /// The Tether session id.
    pub fn session_id(&self) -> String {
        session_id(&self.agent_kind, &self.harness_session)
    }

    /// Adds one reading, from a file of `role` shown as `file`.
    pub fn add(&mut self, role: &str, file: &str, reading: RecordReading) {
        if !self.files.contains(file) {
            self.files.insert(file.to_owned());
        }
        if let Some(at) = reading.at.filter(|t| t.0 > 0) {
            self.first_at = if self.first_at.0 == 0 {
                at
            } else {
                self.first_at.min(at)
            };
            self.last_at = self.last_at.max(at);
        }
        // The smallest value wins, so the order files are read in never matters.
        for (slot, value) in [
            (&mut self.project, reading.project),
            (&mut self.version, reading.version),
        ] {
            if let Some(value) = value
                && slot.as_ref().is_none_or(|cur| &value < cur)
            {
                *slot = Some(value);
            }
        }
        for server in reading.servers {
            if !self.servers.iter().any(|s| s.name == server.name) {
                self.servers.push(server);
            }
        }
        for evidence in reading.evidence {
            if evidence.kind == EvidenceKind::ToolCallObserved {
                self.add_call(role, evidence);
            } else if self.facts.contains(&evidence) {
                continue;
            } else if self.facts.len() < MAX_FACTS {
                self.facts.push(evidence);
            } else {
                self.dropped = self.dropped.saturating_add(1);
            }
        }
    }

    fn add_call(&mut self, role: &str, evidence: Evidence) {
        let id = match evidence.connection_id.clone() {
            Some(id) if self.calls.len() < MAX_CALL_IDS => id,
            _ => {
                self.anonymous += 1;
                format!("#{}", self.anonymous)
            }
        };
        let call = self.calls.entry((role.to_owned(), id)).or_default();
        if evidence.server.is_some() {
            call.server = evidence.server;
        }
        if evidence.tool.is_some() {
            call.tool = evidence.tool;
        }
        // A failure said once stays: completed-then-failed is failed.
        call.ok = match (call.ok, evidence.ok) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (Some(true), _) | (_, Some(true)) => Some(true),
            _ => None,
        };
        call.at = call.at.max(evidence.at);
    }

    /// Server rows by whether it is only named (the harness's own rows).
    pub fn servers(&self) -> &[NamedServer] {
        &self.servers
    }

    /// The evidence the session's history is built from: its facts, then
    /// one `tool_call_observed` per source and tool carrying that
    /// source's counts.
    pub fn evidence(&self) -> Vec<Evidence> {
        // (role, server, tool) → (calls, failed, any outcome, last at)
        let mut per_tool: BTreeMap<(&str, &str, &str), (u32, u32, bool, Timestamp)> =
            BTreeMap::new();
        for ((role, _), call) in &self.calls {
            let (Some(server), Some(tool)) = (&call.server, &call.tool) else {
                // A result whose call was never seen names no tool.
                continue;
            };
            let entry = per_tool
                .entry((role.as_str(), server.as_str(), tool.as_str()))
                .or_insert((0, 0, false, Timestamp(0)));
            entry.0 = entry.0.saturating_add(1);
            entry.1 = entry.1.saturating_add(u32::from(call.ok == Some(false)));
            entry.2 |= call.ok.is_some();
            entry.3 = entry.3.max(call.at);
        }
        let mut out = self.facts.clone();
        for ((_, server, tool), (calls, failed, known, at)) in per_tool {
            let mut ev = Evidence::new(EvidenceKind::ToolCallObserved, at).server(server);
            ev.tool = Some(tool.to_owned());
            ev.ok = known.then_some(calls > failed);
            ev.calls = Some(calls);
            ev.failed_calls = Some(failed);
            out.push(ev);
        }
        for ev in &mut out {
            ev.provenance = Provenance::HarnessRecord;
        }
        out
    }
}

/// The attempt id a session built from records alone gets.
pub const RECORDS_ATTEMPT: &str = "records";

/// The session's history: `existing` (what a store holds for it, from
/// `tether collect` or an earlier import) with the records merged into its
/// current attempt, or a new history whose one attempt has a row for each
/// server today's configuration gives the harness (`configured`,
/// provenance `current_config`: best effort) and each server the records
/// name. Every string passes the sanitizer, with `configured`'s secrets.
pub fn history_of(
    facts: &SessionFacts,
    observer: Option<&dyn TransportObserver>,
    configured: &[ServerSpec],
    existing: Option<AttachmentHistory>,
) -> Result<AttachmentHistory, tether_core::reducer::Rejection> {
    let id = facts.session_id();
    let kind = facts.agent_kind.as_str();
    let ctx = PlanContext {
        agent_kind: kind.to_owned(),
        drive_mode: DriveMode::Passthrough,
        capabilities: Default::default(),
        strict: false,
    };
    let plan = plan(observer, configured, &ctx);
    let scrubber = plan.scrubber();
    let at = if facts.first_at.0 > 0 {
        facts.first_at
    } else {
        Timestamp(1)
    };
    let fresh = existing.as_ref().is_none_or(|h| h.current().is_none());
    let mut history = existing.unwrap_or_else(|| AttachmentHistory::new(kind, id.as_str()));
    let attempt_id = history
        .current_attempt_id
        .clone()
        .unwrap_or_else(|| RECORDS_ATTEMPT.to_owned());
    let execution = history
        .current()
        .map(|a| a.execution_id.clone())
        .unwrap_or_else(|| RECORDS_ATTEMPT.to_owned());
    let start = AttemptStart {
        attempt_id: attempt_id.as_str().into(),
        owner: Owner {
            task: history.task_id.as_str().into(),
            session: id.as_str().into(),
            execution: execution.as_str().into(),
        },
        agent_kind: kind.to_owned(),
        agent_id: None,
        agent_profile_id: None,
        trigger: Trigger::HarnessSession,
        at,
        servers: plan.rows_named(&plan.row_names()),
    };
    // The current attempt's key, or a new attempt (a history's current
    // attempt begun again changes nothing).
    let key = begin_attempt(&mut history, &start)?;
    let _ = reduce(
        &mut history,
        &HistoryEvent::Describe {
            key: key.clone(),
            project: facts.project.clone(),
            agent_version: facts.version.clone(),
        },
    );
    let accepted =
        Evidence::new(EvidenceKind::SessionAccepted, at).provenance(Provenance::HarnessRecord);
    let mut events = vec![accepted];
    // How a name in a record finds its row: the plan's names for a new
    // history, a stored history's rows as they are shown.
    let mut rows = if fresh {
        plan.row_names()
    } else {
        RowNames::shown_as_is(
            history
                .current()
                .map(|a| {
                    a.servers
                        .iter()
                        .map(|r| r.name.as_str())
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default(),
        )
    };
    for server in &facts.servers {
        if rows.resolve(&server.name).is_none() {
            // A new row, its name sanitized and made unique.
            let shown = rows.add_unique(&server.name);
            let _ = reduce(
                &mut history,
                &HistoryEvent::AddRow {
                    key: key.clone(),
                    name: shown,
                    transport: server.transport.clone(),
                    at,
                    provenance: ProvenanceCode::HarnessRecord,
                },
            );
        }
    }
    events.extend(facts.evidence());
    for evidence in events {
        let evidence = sanitize_evidence(&evidence, &scrubber, &rows);
        let _ = reduce(
            &mut history,
            &HistoryEvent::ObserveSanitized {
                key: key.clone(),
                evidence,
            },
        );
    }
    Ok(history)
}

/// Whether two histories say the same (their revisions aside).
pub fn same(a: &AttachmentHistory, b: &AttachmentHistory) -> bool {
    a.revision == b.revision && a == b
        || AttachmentHistory {
            revision: 0,
            ..a.clone()
        } == AttachmentHistory {
            revision: 0,
            ..b.clone()
        }
}
