//! A tool's own words: its status, why it stopped short of the model,
//! where it stopped ("used: 3 calls, 1 failed", "the model called it once;
//! the harness refused the call: …"), its calls by how they ended, its pin
//! changes and its last mile in one line.

use super::*;

/// A tool's own status. A tool a rule kept from the model is unavailable
/// (with its reason); a tool that anything showed (listed, shown to the
/// model, called) is active; otherwise it has no state of its own beyond
/// why its server stopped (failed, filtered, unavailable), and nothing
/// else: "connected" and "delivered" are states of a server, not a tool.
pub fn tool_status(server: DisplayStatus, tool: &tether_core::model::ToolRow) -> DisplayStatus {
    // Kept from the model by a rule (dropped, collided, past a limit): it
    // could not be offered, with that reason.
    if tool.is_withheld() {
        return DisplayStatus::Unavailable;
    }
    // Held behind the tool search, its definition never sent: delivered to
    // the harness, not (yet) to the model.
    if tool.is_deferred() && !tool.called.is_yes() {
        return DisplayStatus::Delivered;
    }
    if tool.is_shown() {
        return DisplayStatus::Active;
    }
    match server {
        DisplayStatus::Failed | DisplayStatus::Filtered | DisplayStatus::Unavailable => server,
        _ => DisplayStatus::Unknown,
    }
}

/// Why a tool stopped short of the model: the reason a rule gave (observed
/// or predicted), or its deferral behind the harness's tool search.
pub fn tool_reason(tool: &tether_core::model::ToolRow) -> Option<tether_core::vocab::ReasonCode> {
    if tool.is_withheld() {
        return tool.reason_code.clone();
    }
    if tool.is_refused() && !tool.callable.is_yes() {
        return tool.refusal().cloned();
    }
    tool.is_deferred()
        .then_some(tether_core::vocab::ReasonCode::DeferredUntilSearched)
}

/// How a tool's definition differs from its server's pin, where a source
/// compared this session's listing with it (`definition_changes`): "its
/// definition changed since it was pinned: description, input schema",
/// "new since its server was pinned", "gone since it was pinned". `None`
/// when nothing says so. Hashes were compared: no text is said.
pub fn pin_words(tool: &tether_core::model::ToolRow) -> Option<String> {
    use tether_core::vocab::ReasonCode as R;
    if tool.definition_changes.is_empty() {
        return None;
    }
    let mut said = Vec::new();
    let parts: Vec<&str> = tool
        .definition_changes
        .iter()
        .filter_map(|code| match code {
            R::TitleChanged => Some("title"),
            R::DescriptionChanged => Some("description"),
            R::InputSchemaChanged => Some("input schema"),
            R::OutputSchemaChanged => Some("output schema"),
            R::AnnotationsChanged => Some("annotations"),
            _ => None,
        })
        .collect();
    if !parts.is_empty() {
        said.push(format!(
            "its definition changed since it was pinned: {}",
            parts.join(", ")
        ));
    }
    if tool.definition_changes.contains(&R::ToolAdded) {
        said.push("new since its server was pinned".to_owned());
    }
    if tool.definition_changes.contains(&R::ToolRemoved) {
        said.push("gone from its server's listing since it was pinned".to_owned());
    }
    Some(format!(
        "{} (`tether pins accept` pins it anew)",
        said.join("; ")
    ))
}

/// Where a tool stopped, in words: used (with its calls), sent to the
/// model, deferred, kept from the model by a rule (saying when the rule is
/// a prediction), or only listed.
pub fn tool_stopped(tool: &tether_core::model::ToolRow) -> String {
    match (tool.calls, tool.failed_calls) {
        (0, _) if tool.refused_calls > 0 => CallTally::of_tool(tool).refused_sentence(),
        (0, _) if tool.model_visible.is_yes() => "reached the model; not called".to_owned(),
        (0, _) if tool.is_deferred() => DEFERRED_SENTENCE.to_owned(),
        (0, _) => match tool.reason_code.as_ref().filter(|_| tool.is_withheld()) {
            Some(reason) => format!(
                "kept from the model: {reason}{}",
                if tool.is_predicted() { PREDICTED } else { "" }
            ),
            None => "listed; not called".to_owned(),
        },
        _ => CallTally::of_tool(tool).used(),
    }
}

/// A server's or tool's calls by how they ended: three-valued, so a call
/// whose outcome no record gives is never counted as failed; and the calls
/// the harness refused, which are not calls of the server at all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallTally {
    /// Calls seen (that reached, or may have reached, the server).
    pub calls: u32,
    /// Of those, the ones that failed.
    pub failed: u32,
    /// Of those, the ones whose outcome no record gives.
    pub unknown: u32,
    /// Why calls failed, where records say (`tool_error`,
    /// `protocol_error`), in reason order.
    pub failures: Vec<tether_core::vocab::ReasonCode>,
    /// Calls the model made that the harness refused: never in `calls`.
    pub refused: u32,
    /// The refusals by reason, in reason order.
    pub refusals: Vec<tether_core::model::ReasonCount>,
}

impl CallTally {
    /// One tool's calls.
    pub fn of_tool(tool: &tether_core::model::ToolRow) -> Self {
        CallTally {
            calls: tool.calls,
            failed: tool.failed_calls,
            unknown: tool.unknown_calls,
            failures: tool.failures.clone(),
            refused: tool.refused_calls,
            refusals: tool.refusals.clone(),
        }
    }

    /// Adds another tool's calls.
    fn add(mut self, other: CallTally) -> Self {
        self.calls = self.calls.saturating_add(other.calls);
        self.failed = self.failed.saturating_add(other.failed);
        self.unknown = self.unknown.saturating_add(other.unknown);
        self.refused = self.refused.saturating_add(other.refused);
        for code in other.failures {
            if let Err(i) = self.failures.binary_search(&code) {
                self.failures.insert(i, code);
            }
        }
        for r in other.refusals {
            tether_core::model::ReasonCount::count_in(
                &mut self.refusals,
                r.reason_code,
                r.calls,
                u32::saturating_add,
            );
        }
        self
    }

    /// A server row's calls: its tools' counts, and at least its newest
    /// call (a source that names no tool row still shows one).
    pub fn of_row(row: &ServerAttachment) -> Self {
        let mut tally = row.tools.iter().fold(CallTally::default(), |t, tool| {
            t.add(CallTally::of_tool(tool))
        });
        if let Some(last) = &row.last_tool_call
            && tally.calls == 0
        {
            tally.calls = 1;
            match last.outcome() {
                tether_core::vocab::CallOutcome::Succeeded => {}
                tether_core::vocab::CallOutcome::Failed => tally.failed = 1,
                _ => tally.unknown = 1,
            }
        }
        tally.failed = tally.failed.min(tally.calls);
        tally.unknown = tally.unknown.min(tally.calls - tally.failed);
        tally
    }

    /// "used: 3 calls, 1 failed"; where no record gives how some ended,
    /// it says so ("used: 30 calls; outcome not recorded"), never that
    /// they failed.
    pub fn used(&self) -> String {
        let plural = if self.calls == 1 { "call" } else { "calls" };
        let calls = self.calls;
        let unknown = self.unknown.min(calls - self.failed.min(calls));
        let why = if self.failures.is_empty() {
            String::new()
        } else {
            let words: Vec<String> = self.failures.iter().map(reason_words).collect();
            format!(" ({})", words.join(", "))
        };
        let mut said = match (self.failed, unknown) {
            (0, 0) => format!("used: {calls} {plural}"),
            (0, u) if u == calls => format!("used: {calls} {plural}; {UNKNOWN_OUTCOME}"),
            (f, 0) => format!("used: {calls} {plural}, {f} failed{why}"),
            (0, u) => format!("used: {calls} {plural}, {u} with no recorded outcome"),
            (f, u) => {
                format!("used: {calls} {plural}, {f} failed{why}, {u} with no recorded outcome")
            }
        };
        if self.refused > 0 {
            said.push_str(&format!(
                "; {} more refused by the harness ({})",
                self.refused,
                self.refusal_words()
            ));
        }
        said
    }

    /// Where every call the model made was refused: "the model called it
    /// 2 times; the harness refused: permission denied". Never "used".
    pub fn refused_sentence(&self) -> String {
        let times = if self.refused == 1 {
            "once".to_owned()
        } else {
            format!("{} times", self.refused)
        };
        format!(
            "the model called it {times}; the harness refused {}: {}",
            if self.refused == 1 {
                "the call"
            } else {
                "every call"
            },
            self.refusal_words()
        )
    }

    /// The refusals' reasons in words, most first.
    pub(super) fn refusal_words(&self) -> String {
        let mut by_count: Vec<&tether_core::model::ReasonCount> = self.refusals.iter().collect();
        by_count.sort_by_key(|r| std::cmp::Reverse(r.calls));
        let words: Vec<String> = by_count
            .iter()
            .map(|r| reason_words(&r.reason_code))
            .collect();
        if words.is_empty() {
            reason_words(&tether_core::vocab::UNSAID_REFUSAL)
        } else {
            words.join(", ")
        }
    }
}

/// A refusal's or failure's reason in words a user reads: "permission
/// denied", "needs approval, and no one could give it", "blocked by a
/// hook", "denied by policy", "tool error", "protocol error"; any other
/// reason as its code with spaces.
pub fn reason_words(reason: &tether_core::vocab::ReasonCode) -> String {
    use tether_core::vocab::ReasonCode as R;
    match reason {
        R::PermissionDenied => "permission denied".to_owned(),
        R::ApprovalRequired => "needs approval, and no one could give it".to_owned(),
        R::BlockedByHook => "blocked by a hook".to_owned(),
        R::DeniedByPolicy => "denied by policy".to_owned(),
        R::ToolError => "tool error".to_owned(),
        R::ToolNotAvailable => "no such tool: not available to the harness then".to_owned(),
        R::ProtocolError => "protocol error".to_owned(),
        other => other.as_str().replace('_', " "),
    }
}

/// What a call whose outcome no record gives reads as.
pub const UNKNOWN_OUTCOME: &str = "outcome not recorded";

/// One call's outcome in a word: `ok`, `error`, or that no record gives it.
pub fn call_outcome_word(outcome: &tether_core::vocab::CallOutcome) -> &'static str {
    match outcome {
        tether_core::vocab::CallOutcome::Succeeded => "ok",
        tether_core::vocab::CallOutcome::Failed => "error",
        tether_core::vocab::CallOutcome::Refused => "refused by the harness",
        _ => UNKNOWN_OUTCOME,
    }
}

/// A tool's last mile in one line, from its matrix row's stages, in the
/// order a person reads it: listed → accepted → offered (deferred or in
/// context) → called, each with its mark (`✓`, `✗`, `?`).
pub fn tool_path(
    stages: &std::collections::BTreeMap<String, tether_core::model::StageObservation>,
) -> String {
    let state = |key: &str| stages.get(key).map_or(StageState::Unknown, |o| o.state);
    let offered = if state("model_visible") == StageState::Yes {
        "offered ✓ in context".to_owned()
    } else if state("deferred") == StageState::Yes {
        "offered ✓ deferred".to_owned()
    } else {
        format!("offered {}", mark(state("current_thread")))
    };
    // A call the harness refused is no call of the server: said so.
    let called = if state("called") != StageState::Yes && state("callable") == StageState::No {
        "called ✗ refused by the harness".to_owned()
    } else {
        format!("called {}", mark(state("called")))
    };
    format!(
        "listed {} → accepted {} → {offered} → {called}",
        mark(state("tools_listed")),
        mark(state("schema_accepted")),
    )
}
