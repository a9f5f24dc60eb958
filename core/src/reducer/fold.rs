//! The fold: one piece of sanitized evidence applied to its attempt and
//! row, each fact merged by a commutative, idempotent rule, and the status
//! derived from the stages.

use super::*;

pub(super) fn observe(
    attempt: &mut AttachmentAttempt,
    ev: &SanitizedEvidence,
) -> Result<Reduced, Rejection> {
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

pub(super) fn push_timeline_if_room(attempt: &mut AttachmentAttempt, ev: &Evidence) -> bool {
    if attempt.evidence.len() < MAX_EVIDENCE {
        attempt.evidence.push(ev.clone());
        true
    } else {
        false
    }
}

pub(super) fn apply_to_attempt(attempt: &mut AttachmentAttempt, ev: &Evidence) -> bool {
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
        _ if ev.capability.is_some() => {
            match crate::capability::apply(&mut attempt.capabilities, ev) {
                Ok(changed) => changed,
                // Counted, never silently: the attempt is full of rows.
                Err(crate::capability::NotApplied::Full) => {
                    attempt.dropped_evidence = attempt.dropped_evidence.saturating_add(1);
                    false
                }
            }
        }
        // Other attempt-level evidence (and unknown kinds) only enter the timeline.
        _ => false,
    }
}

pub(super) fn apply_report_error(attempt: &mut AttachmentAttempt, ev: &Evidence) -> bool {
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
pub(super) fn apply_to_row_facts(row: &mut ServerAttachment, ev: &Evidence) -> bool {
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
                changed |= merged(&mut t.listed, yes);
            }
            changed |= touch_connection(row, ev);
        }
        EvidenceKind::ToolDeferred => {
            // The harness names the tool in the thread, which only the
            // server's listing gave it: listed, kept, offered, and its
            // definition held back from the model.
            row.stages.current_thread.merge(yes);
            if let Some(tool) = &ev.tool
                && let Some(t) = tool_row(row, tool)
            {
                changed |= merged(&mut t.current_thread, yes) | merged(&mut t.deferred, yes);
            }
        }
        EvidenceKind::ToolWithheld => changed |= tool_withheld(row, ev, prov, yes, no),
        EvidenceKind::ToolVisible => {
            row.stages.model_visible.merge(yes);
            if let Some(tool) = &ev.tool
                && let Some(t) = tool_row(row, tool)
            {
                changed |= merged(&mut t.model_visible, yes);
            }
        }
        EvidenceKind::ToolCallObserved => changed |= call_observed(row, ev, prov, yes),
        EvidenceKind::ToolCallRefused if ev.reason_code == Some(ReasonCode::ToolNotAvailable) => {
            // The harness had no such tool: the call proves no listing and
            // no offer, only that the tool was not in the harness's thread
            // then (a later `yes` wins).
            if let Some(tool) = &ev.tool {
                changed |= tool_not_available(row, tool, ev, prov);
            }
        }
        EvidenceKind::ToolCallRefused => {
            // The model picked the tool, so it saw it; the harness kept the
            // call from the server, so it is no use: the server's
            // `callable` is `no` until some call succeeds (`yes` wins).
            row.stages.model_visible.merge(yes);
            row.stages.callable.merge(no);
            if let Some(tool) = &ev.tool {
                changed |= tool_refused(row, tool, ev, prov);
            }
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
        EvidenceKind::EndpointTested => changed |= endpoint_tested(row, ev),
        EvidenceKind::DefinitionChanged | EvidenceKind::ToolsChanged => {
            if let Some(tool) = &ev.tool {
                changed |= definition_change(row, tool, ev.reason_code.as_ref());
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

/// A rule kept `ev.tool` from the model (observed, or a documented rule's
/// prediction): true when the row changed.
fn tool_withheld(
    row: &mut ServerAttachment,
    ev: &Evidence,
    prov: ProvenanceCode,
    yes: StageObservation,
    no: StageObservation,
) -> bool {
    let mut changed = false;
    // A rule kept the tool from the model: it never reached the
    // thread, and a dropped one was not kept at all. Only the tool
    // says no; its server's other tools may have gone through.
    // The harness saying so itself proves it had the tool's
    // listing; a documented rule's prediction proves nothing.
    let observed = prov != ProvenanceCode::DocumentedRule;
    if observed {
        row.stages.tools_listed.merge(yes);
    }
    if let Some(tool) = &ev.tool
        && let Some(t) = tool_row(row, tool)
    {
        if observed {
            changed |= merged(&mut t.listed, yes);
        }
        changed |= merged(&mut t.current_thread, no);
        if crate::last_mile::unaccepted(ev.reason_code.as_ref()) {
            changed |= merged(&mut t.schema_accepted, no);
        }
        // The first reason by content wins, so order never matters.
        if let Some(code) = &ev.reason_code
            && t.reason_code
                .as_ref()
                .is_none_or(|c| c.as_str() > code.as_str())
        {
            changed |= set(&mut t.reason_code, Some(code.clone()));
        }
    }
    changed
}

/// A call of `ev.tool` (or a source's count of its calls), with its
/// outcome: true when the row changed.
fn call_observed(
    row: &mut ServerAttachment,
    ev: &Evidence,
    prov: ProvenanceCode,
    yes: StageObservation,
) -> bool {
    let at = ev.at;
    let mut changed = false;
    // A call proves the agent (its model) could see and pick the tool.
    row.stages.model_visible.merge(yes);
    if ev.ok == Some(true) {
        row.stages.callable.merge(yes);
    }
    if let Some(tool) = &ev.tool {
        changed |= tool_call(row, tool, ev, prov);
        // Three-valued: a call whose outcome nothing gives is
        // `unknown`, never failed.
        let outcome = CallOutcome::of(ev.ok);
        // Strictly newer, so a replacement always changes the row.
        let newer = row.last_tool_call.as_ref().is_none_or(|last| {
            (last.at, last.tool.as_str(), last.outcome().as_str())
                < (at, tool.as_str(), outcome.as_str())
        });
        if newer {
            row.last_tool_call = Some(ToolCallRecord::new(tool.clone(), outcome, at));
            changed = true;
        }
    }
    changed |= touch_connection(row, ev);
    changed
}

/// An endpoint test's result: the newest wins. True when the row changed.
fn endpoint_tested(row: &mut ServerAttachment, ev: &Evidence) -> bool {
    let mut changed = false;
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
    changed
}

/// Merges `new` into `slot` and says whether it changed.
fn merged(slot: &mut StageObservation, new: StageObservation) -> bool {
    let before = *slot;
    slot.merge(new);
    *slot != before
}

/// The tool row for `tool`, added when there is room (none past
/// [`MAX_TOOL_ROWS`](crate::history::MAX_TOOL_ROWS)).
pub(super) fn tool_row<'r>(row: &'r mut ServerAttachment, tool: &str) -> Option<&'r mut ToolRow> {
    // Kept in name order, so the order evidence arrives in never shows
    // (a row stored by an older build, unordered, is still found).
    let found = row
        .tools
        .binary_search_by(|t| t.name.as_str().cmp(tool))
        .map_err(|at| row.tools.iter().position(|t| t.name == tool).ok_or(at));
    match found {
        Ok(i) | Err(Ok(i)) => row.tools.get_mut(i),
        Err(Err(i)) if row.tools.len() < crate::history::MAX_TOOL_ROWS => {
            row.tools.insert(i, ToolRow::new(tool));
            row.tools.get_mut(i)
        }
        Err(Err(_)) => None,
    }
}

/// A source compared `tool`'s listing with its server's pin and found it
/// changed (`definition_changed`: the part; `tools_changed`: added or
/// removed): the reason joins the tool's set, in reason order (a set, so
/// idempotent and order never matters). Only the pin reasons count; a
/// change without one says nothing. True when the tool's row changed.
fn definition_change(row: &mut ServerAttachment, tool: &str, code: Option<&ReasonCode>) -> bool {
    let Some(code) = code.filter(|c| {
        matches!(
            c,
            ReasonCode::TitleChanged
                | ReasonCode::DescriptionChanged
                | ReasonCode::InputSchemaChanged
                | ReasonCode::OutputSchemaChanged
                | ReasonCode::AnnotationsChanged
                | ReasonCode::ToolAdded
                | ReasonCode::ToolRemoved
        )
    }) else {
        return false;
    };
    let Some(t) = tool_row(row, tool) else {
        return false;
    };
    match t
        .definition_changes
        .binary_search_by(|c| c.as_str().cmp(code.as_str()))
    {
        Err(i) if t.definition_changes.len() < crate::model::MAX_TOOL_REASONS => {
            t.definition_changes.insert(i, code.clone());
            true
        }
        _ => false,
    }
}

/// A call (or a source's count of calls) of `tool`: its row is listed,
/// model-visible and called, and its counts rise to the largest seen (a
/// count is a running total, so the merge is a maximum: idempotent, and
/// order never matters). True when the tool's row changed.
pub(super) fn tool_call(
    row: &mut ServerAttachment,
    tool: &str,
    ev: &Evidence,
    prov: ProvenanceCode,
) -> bool {
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
    let unknown = ev
        .unknown_calls
        .unwrap_or(u32::from(ev.ok.is_none()))
        .min(calls - failed);
    // Sources count the same calls: the one that saw the most calls says
    // how many ended unknown, and of two that saw as many, the one that
    // knows more outcomes (so order never matters).
    if (calls, std::cmp::Reverse(unknown)) > (t.calls, std::cmp::Reverse(t.unknown_calls)) {
        t.unknown_calls = unknown;
    }
    t.calls = t.calls.max(calls);
    t.failed_calls = t.failed_calls.max(failed);
    t.last_call_at = Some(t.last_call_at.map_or(at, |l| l.max(at)));
    if ev.ok == Some(true) {
        t.callable
            .merge(StageObservation::shown(StageState::Yes, prov, at));
    }
    // Why calls failed, where the source says: a set, in reason order.
    if failed > 0
        && let Some(code) = ev.reason_code.as_ref().filter(|c| {
            matches!(
                c,
                ReasonCode::ToolError
                    | ReasonCode::ProtocolError
                    | ReasonCode::Timeout
                    | ReasonCode::ConnectionClosed
            )
        })
        && let Err(i) = t
            .failures
            .binary_search_by(|c| c.as_str().cmp(code.as_str()))
        && t.failures.len() < crate::model::MAX_TOOL_REASONS
    {
        t.failures.insert(i, code.clone());
    }
    *t != before
}

/// A call of `tool` the harness refused (or a source's count of them, in
/// `calls`): the tool reached the model, its `callable` is `no` until a
/// call succeeds, and its refusals per reason rise to the largest count
/// seen (a running total: a maximum, so order never matters). Never a
/// call: `calls` and `called` stay as they were. True when the row changed.
fn tool_refused(
    row: &mut ServerAttachment,
    tool: &str,
    ev: &Evidence,
    prov: ProvenanceCode,
) -> bool {
    let Some(t) = tool_row(row, tool) else {
        return false;
    };
    let before = t.clone();
    t.model_visible
        .merge(StageObservation::shown(StageState::Yes, prov, ev.at));
    t.callable
        .merge(StageObservation::shown(StageState::No, prov, ev.at));
    // A refusal whose reason no record gives is still a refusal.
    let code = ev
        .reason_code
        .clone()
        .unwrap_or(crate::vocab::UNSAID_REFUSAL);
    let count = ev.calls.unwrap_or(1);
    crate::model::ReasonCount::count_in(&mut t.refusals, code, count, u32::max);
    t.refused_calls = t
        .refusals
        .iter()
        .fold(0u32, |n, r| n.saturating_add(r.calls));
    *t != before
}

/// The harness answered a call of `tool` with "no such tool": counted
/// among the tool's refusals (never its calls), and the tool shown not in
/// the harness's thread then; nothing else follows from it.
fn tool_not_available(
    row: &mut ServerAttachment,
    tool: &str,
    ev: &Evidence,
    prov: ProvenanceCode,
) -> bool {
    let Some(t) = tool_row(row, tool) else {
        return false;
    };
    let before = t.clone();
    t.current_thread
        .merge(StageObservation::shown(StageState::No, prov, ev.at));
    let count = ev.calls.unwrap_or(1);
    crate::model::ReasonCount::count_in(
        &mut t.refusals,
        ReasonCode::ToolNotAvailable,
        count,
        u32::max,
    );
    t.refused_calls = t
        .refusals
        .iter()
        .fold(0u32, |n, r| n.saturating_add(r.calls));
    *t != before
}

/// Sets `slot` to `value`; true when that changed it.
pub(super) fn set<T: PartialEq>(slot: &mut T, value: T) -> bool {
    if *slot == value {
        false
    } else {
        *slot = value;
        true
    }
}

/// Sets `slot` to a copy of `value`, cloning only when it differs.
pub(super) fn set_from<T: PartialEq + Clone>(slot: &mut T, value: &T) -> bool {
    if slot == value {
        false
    } else {
        slot.clone_from(value);
        true
    }
}

/// Applies an agent's own report (on its output, or in its own telemetry:
/// the evidence's provenance says which); true when the row changed (its
/// stages are compared by the caller).
pub(super) fn apply_agent_report(row: &mut ServerAttachment, ev: &Evidence) -> bool {
    let at = ev.at;
    let said_by = match ProvenanceCode::from_word(&ev.provenance) {
        code @ (ProvenanceCode::HarnessTelemetry | ProvenanceCode::HarnessRecord) => code,
        _ => ProvenanceCode::AgentReport,
    };
    let report = |state| StageObservation::shown(state, said_by, at);
    let mut changed = false;
    match ev.reported_state() {
        Some(ReportedStatus::Connected) => {
            row.stages.initialized.merge(report(StageState::Yes));
            // A reader's fixed sentence saying what showed it (Codex's
            // resource listing named the server) is the row's note; of
            // two, the first by content, so order never matters.
            if let Some(summary) = &ev.summary
                && row.note.as_ref().is_none_or(|n| summary < n)
            {
                row.note = Some(summary.clone());
                changed = true;
            }
        }
        Some(ReportedStatus::Failed) => {
            row.stages.initialized.merge(report(StageState::No));
            changed |= record_failure(row, ev, ReasonCode::AgentReportedFailed);
        }
        Some(ReportedStatus::NeedsAuth) => {
            row.stages.authenticated.merge(report(StageState::No));
            // A reader that knows which auth failure it was (a login
            // wanted: `oauth_required`; a token refused: `auth_rejected`)
            // keeps its reason; a bare "needs auth" is `auth_required`.
            let mut auth = ev.clone();
            auth.reason_code.get_or_insert(ReasonCode::AuthRequired);
            changed |= record_failure(row, &auth, ReasonCode::AuthRequired);
        }
        Some(ReportedStatus::Disabled) => {
            row.stages.enabled.merge(report(StageState::No));
        }
        // Pending: no stage is shown yet. A pending report with a summary
        // (a reader's fixed sentence: the harness warned that the server
        // was slow to connect) is the row's note; of two, the first by
        // content, so order never matters.
        Some(ReportedStatus::Pending) => {
            if let Some(summary) = &ev.summary
                && row.note.as_ref().is_none_or(|n| summary < n)
            {
                row.note = Some(summary.clone());
                changed = true;
            }
        }
        // `unknown`, or a word its plugin could not type: shown as a
        // reported `unknown` (the stage says the agent reported it; the
        // evidence keeps the word where it is a name), never read as
        // pending, and never as a failure.
        Some(ReportedStatus::Unknown | ReportedStatus::Other(_)) => {
            row.stages.initialized.merge(report(StageState::Unknown));
        }
        None => {}
    }
    // A count in a harness's own report (an init line, a status event) is
    // the harness's list of the tools it holds in the session: it shows
    // `current_thread`, never `model_visible`, which only a model-side
    // signal shows (a run whose model API never answered prints the same
    // list).
    if let Some(count) = ev.tool_count
        && count > 0
    {
        row.stages.tools_listed.merge(report(StageState::Yes));
        row.stages.current_thread.merge(report(StageState::Yes));
        changed |= merge_tool_count(row, count, at);
    }
    changed
}

/// Keeps the earliest failure; true when it replaced the row's.
pub(super) fn record_failure(
    row: &mut ServerAttachment,
    ev: &Evidence,
    default: ReasonCode,
) -> bool {
    // A variable its configuration needs was not set, or the working
    // directory it starts in does not exist: that is the cause of
    // whatever failure follows (the spawn error, the 401, `host_not_found`
    // it leads to), so the row keeps it and only learns when it failed.
    if matches!(
        row.reason_code,
        Some(ReasonCode::UnresolvedVariable | ReasonCode::CwdNotFound)
    ) {
        let earlier = row.failed_at.is_none_or(|at| ev.at < at);
        if earlier {
            row.failed_at = Some(ev.at);
        }
        return earlier;
    }
    // Its command does not resolve where its configuration was read: the
    // likely cause of a failure the harness says only happened (OpenCode's
    // `status=failed`), so the row keeps it. A harness's own reason wins
    // (it may start its servers with another PATH).
    if row.failed_at.is_none()
        && row.reason_code == Some(ReasonCode::CommandNotFound)
        && ev.reason_code.as_ref().unwrap_or(&default) == &ReasonCode::AgentReportedFailed
    {
        row.failed_at = Some(ev.at);
        return true;
    }

    let reason = ev.reason_code.clone().unwrap_or(default);
    // A reason that says which failure it was beats a bare one, whenever
    // each was seen: a harness's own status word ("failed", "needs auth")
    // says only that it failed, and the line that says why (its server
    // log's "command not found", the challenge that says a token was
    // refused) may come before or after it (a printed init line has no
    // time of its own). Then one said with a sentence (what to do) beats
    // one without, whenever each was seen: Copilot logs its bare "needing
    // auth" a millisecond before or at the same one as the challenge that
    // words it, and the row of a reason always carries its sentence. Of
    // two alike, the earliest is kept; then ties break on content, so
    // order never matters.
    let vague = |r: Option<&ReasonCode>| {
        matches!(
            r,
            Some(ReasonCode::AuthRequired | ReasonCode::AgentReportedFailed)
        )
    };
    let replace = match row.failed_at {
        None => true,
        Some(at) => {
            (
                vague(Some(&reason)),
                ev.summary.is_none(),
                ev.at,
                Some(&reason),
                ev.summary.as_ref(),
            ) < (
                vague(row.reason_code.as_ref()),
                row.summary.is_none(),
                at,
                row.reason_code.as_ref(),
                row.summary.as_ref(),
            )
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
pub(super) fn merge_tool_count(row: &mut ServerAttachment, count: u32, at: Timestamp) -> bool {
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
pub(super) fn upsert_connection<'r>(
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
pub(super) fn touch_connection(row: &mut ServerAttachment, ev: &Evidence) -> bool {
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

pub(super) fn client_key(c: &ClientInfo) -> (&str, Option<&str>, Option<&str>) {
    (
        c.name.as_str(),
        c.version.as_deref(),
        c.protocol_version.as_deref(),
    )
}

/// Sorts connections oldest first, keeps the newest eight, and points the
/// row at the newest; true when any of that changed the row. Clones only
/// what changed.
pub(super) fn finish_connections(row: &mut ServerAttachment) -> bool {
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
