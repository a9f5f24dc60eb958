//! Attempt rotation: a new attempt supersedes the current one, its rows
//! planned from the host's decisions.

use super::*;

pub(super) fn begin(
    history: &mut AttachmentHistory,
    start: &AttemptStart,
) -> Result<Reduced, Rejection> {
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
        capabilities: Vec::new(),
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

pub(super) fn planned_row(planned: &PlannedRow, at: Timestamp) -> ServerAttachment {
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

pub(super) fn mark_not_applicable_after_delivery(stages: &mut Stages, at: Timestamp) {
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
pub(super) fn push_timeline(attempt: &mut AttachmentAttempt, evidence: Evidence) -> bool {
    if attempt.evidence.len() < MAX_EVIDENCE {
        attempt.evidence.push(evidence);
        true
    } else {
        attempt.dropped_evidence = attempt.dropped_evidence.saturating_add(1);
        false
    }
}
