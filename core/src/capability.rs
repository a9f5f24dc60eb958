//! Every capability in a session, not only its servers: the skills offered
//! to the model and invoked, the hooks that fired and how each run ended,
//! the plugins that loaded or failed to. A harness's records, output and
//! telemetry say so as evidence carrying a [`CapabilityEvent`]; the reducer
//! folds it into the attempt's [`CapabilityRow`]s, and the session's matrix
//! shows them beside its servers.
//!
//! Names only. A command is its basename, what it resolves against and the
//! names of the variables it uses, never its line, its arguments or a
//! value; a skill is its name, never its description or text; a hook's
//! output, input and the context it injected are never read.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::capability_event::{
    CapabilityEvent, CommandShape, MAX_VARIABLES, command_shape, outcome_of_exit, outcome_of_ok,
};
use crate::model::{Evidence, ProvenanceCode, StageObservation, Timestamp};
use crate::vocab::{
    CapabilityKind, DisplayStatus, EvidenceKind, ReasonCode, ResolvesAgainst, StageState,
    UseOutcome,
};

/// An attempt keeps at most this many capability rows (the first seen).
pub const MAX_CAPABILITY_ROWS: usize = 256;
/// A row keeps at most this many distinct (outcome, exit status) counts.
pub const MAX_OUTCOMES: usize = 16;

/// How many uses ended one way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OutcomeCount {
    /// How they ended.
    pub outcome: UseOutcome,
    /// The exit status, where the harness said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// How many.
    pub count: u32,
}

/// One skill, hook or plugin in one attempt: what the session showed of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct CapabilityRow {
    /// `skill`, `hook` or `plugin`.
    pub kind: CapabilityKind,
    /// Its name.
    pub name: String,
    /// The plugin it came with, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
    /// A hook's event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// A hook's command, basename only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// What that command resolves against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolves_against: Option<ResolvesAgainst>,
    /// Variables it uses, by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<String>,
    /// The strongest status its evidence supports: `active` (invoked,
    /// fired and succeeded, loaded), `delivered` (a skill offered to the
    /// model, never invoked), `failed` (with the reason), `unknown`.
    pub status: DisplayStatus,
    /// Why it failed, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<ReasonCode>,
    /// Sanitized, at most 256 bytes: a plugin's load failure, in a sentence
    /// without its words' values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// A skill offered to the model (in a listing it was sent).
    #[serde(default)]
    pub listed: StageObservation,
    /// A plugin loaded (`no`: it failed to).
    #[serde(default)]
    pub loaded: StageObservation,
    /// A skill invoked, a hook fired.
    #[serde(default)]
    pub used: StageObservation,
    /// Uses by how they ended (at most 16 kinds).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outcomes: Vec<OutcomeCount>,
    /// The first evidence's time.
    pub first_at: Timestamp,
    /// The last evidence's time.
    pub last_at: Timestamp,
    /// A skill the harness bundles ([`CapabilityEvent::built_in`]): said
    /// in one line unless asked. Left out of JSON when `false`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub built_in: bool,
}

impl CapabilityRow {
    fn new(event: &CapabilityEvent, at: Timestamp) -> Self {
        CapabilityRow {
            kind: event.kind.clone(),
            name: event.name.clone(),
            plugin: event.plugin.clone(),
            event: event.event.clone(),
            command: event.command.clone(),
            resolves_against: event.resolves_against.clone(),
            variables: event.variables.clone(),
            status: DisplayStatus::Unknown,
            reason_code: None,
            summary: None,
            listed: StageObservation::default(),
            loaded: StageObservation::default(),
            used: StageObservation::default(),
            outcomes: Vec::new(),
            first_at: at,
            last_at: at,
            built_in: event.built_in,
        }
    }

    /// Uses seen (invocations, runs).
    pub fn uses(&self) -> u32 {
        self.outcomes
            .iter()
            .fold(0u32, |n, o| n.saturating_add(o.count))
    }

    /// Of those, the ones that did not succeed (`blocked` is a hook doing
    /// its job, not a failure).
    pub fn failed_uses(&self) -> u32 {
        self.outcomes
            .iter()
            .filter(|o| is_failure(&o.outcome))
            .fold(0u32, |n, o| n.saturating_add(o.count))
    }

    fn derive_status(&mut self) {
        let (status, reason) = match self.kind {
            CapabilityKind::Plugin if self.loaded.state == StageState::Yes => {
                (DisplayStatus::Active, None)
            }
            CapabilityKind::Plugin if self.loaded.state == StageState::No => (
                DisplayStatus::Failed,
                Some(
                    self.reason_code
                        .clone()
                        .unwrap_or(ReasonCode::PluginLoadFailed),
                ),
            ),
            _ if self.used.is_yes() => match self.worst_failure() {
                Some(reason) => (DisplayStatus::Failed, Some(reason)),
                None => (DisplayStatus::Active, None),
            },
            _ if self.listed.is_yes() => (DisplayStatus::Delivered, None),
            _ => (DisplayStatus::Unknown, None),
        };
        self.status = status;
        if self.kind != CapabilityKind::Plugin {
            self.reason_code = reason;
        } else if reason.is_none() {
            self.reason_code = None;
            self.summary = None;
        }
    }

    /// The reason of the worst way a use ended: a missing command, then a
    /// timeout, then a failure.
    fn worst_failure(&self) -> Option<ReasonCode> {
        let has = |o: UseOutcome| self.outcomes.iter().any(|c| c.outcome == o && c.count > 0);
        if has(UseOutcome::CommandNotFound) {
            Some(ReasonCode::CommandNotFound)
        } else if has(UseOutcome::TimedOut) {
            Some(ReasonCode::HookTimedOut)
        } else if has(UseOutcome::Failed) || has(UseOutcome::Cancelled) {
            Some(match self.kind {
                CapabilityKind::Skill => ReasonCode::SkillFailed,
                _ => ReasonCode::HookFailed,
            })
        } else {
            None
        }
    }
}

fn is_failure(outcome: &UseOutcome) -> bool {
    !matches!(
        outcome,
        UseOutcome::Succeeded | UseOutcome::Blocked | UseOutcome::Unknown
    )
}

/// Whether `event` is about `row`.
fn same_row(event: &CapabilityEvent, row: &CapabilityRow) -> bool {
    row.kind == event.kind
        && row.name == event.name
        && row.plugin == event.plugin
        && row.event == event.event
        && row.command == event.command
}

/// Why capability evidence was not applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotApplied {
    /// The attempt already holds [`MAX_CAPABILITY_ROWS`] rows, or the row
    /// [`MAX_OUTCOMES`] ways a use ended and this one is another.
    Full,
}

/// Folds one piece of capability evidence into `rows`: whether anything
/// changed. Stages merge; a use carrying `calls` (how many uses of that
/// outcome its source has seen so far: a harness's records) takes the
/// larger count, so records read again change nothing; a use without it
/// (one live event: telemetry) adds one, and the attempt's timeline drops
/// an exact repeat before it gets here.
pub fn apply(rows: &mut Vec<CapabilityRow>, ev: &Evidence) -> Result<bool, NotApplied> {
    let Some(cap) = ev.capability.as_deref() else {
        return Ok(false);
    };
    let index = match rows.iter().position(|r| same_row(cap, r)) {
        Some(i) => i,
        None if rows.len() >= MAX_CAPABILITY_ROWS => return Err(NotApplied::Full),
        None => {
            rows.push(CapabilityRow::new(cap, ev.at));
            rows.len() - 1
        }
    };
    let is_use = matches!(
        ev.kind,
        EvidenceKind::SkillInvoked | EvidenceKind::HookFired
    );
    let outcome = cap
        .outcome
        .clone()
        .unwrap_or(outcome_of_ok(ev.ok != Some(false)));
    let counted = |o: &OutcomeCount| o.outcome == outcome && o.exit_code == cap.exit_code;
    if is_use
        && rows[index].outcomes.len() >= MAX_OUTCOMES
        && !rows[index].outcomes.iter().any(counted)
    {
        // Counted by the caller as dropped, never lost silently.
        return Err(NotApplied::Full);
    }
    let row = &mut rows[index];
    let before = row.clone();
    let prov = ProvenanceCode::from_word(&ev.provenance);
    let yes = StageObservation::shown(StageState::Yes, prov, ev.at);
    let no = StageObservation::shown(StageState::No, prov, ev.at);
    row.first_at = row.first_at.min(ev.at);
    row.last_at = row.last_at.max(ev.at);
    if row.resolves_against.is_none() {
        row.resolves_against = cap.resolves_against.clone();
    }
    if row.variables.is_empty() {
        row.variables = cap.variables.clone();
    }
    row.built_in |= cap.built_in;
    match ev.kind {
        EvidenceKind::SkillListed => row.listed.merge(yes),
        EvidenceKind::PluginLoaded => row.loaded.merge(yes),
        EvidenceKind::PluginFailed => {
            row.loaded.merge(no);
            let candidate = (ev.reason_code.clone(), ev.summary.clone());
            if row.reason_code.is_none()
                || candidate < (row.reason_code.clone(), row.summary.clone())
            {
                row.reason_code = candidate.0.or(Some(ReasonCode::PluginLoadFailed));
                row.summary = candidate.1;
            }
        }
        EvidenceKind::SkillInvoked | EvidenceKind::HookFired => {
            row.used.merge(yes);
            if row.kind == CapabilityKind::Skill {
                // An invoked skill was offered.
                row.listed.merge(yes);
            }
            match row.outcomes.iter_mut().find(|o| counted(o)) {
                // A source's running total takes the larger; one live use
                // (no total) adds one.
                Some(o) => {
                    o.count = match ev.calls {
                        Some(total) => o.count.max(total),
                        None => o.count.saturating_add(1),
                    }
                }
                // There is room: checked above.
                None => {
                    row.outcomes.push(OutcomeCount {
                        outcome: outcome.clone(),
                        exit_code: cap.exit_code,
                        count: ev.calls.unwrap_or(1),
                    });
                    row.outcomes
                        .sort_by(|a, b| (&a.outcome, a.exit_code).cmp(&(&b.outcome, b.exit_code)));
                }
            }
        }
        _ => {}
    }
    row.derive_status();
    Ok(*row != before)
}

/// Which uses of skills, hooks and plugins a harness's records (or its
/// telemetry) show: what lets "never fired in this session" be said, and
/// what makes it "the harness does not record it" instead.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunTimeShown {
    /// The skills offered to the model (a listing it was sent).
    pub skills_listed: bool,
    /// The skills the model invoked.
    pub skills_invoked: bool,
    /// Each run of a hook.
    pub hooks_fired: bool,
    /// Every plugin loaded (or failing to).
    pub plugins_loaded: bool,
    /// Where hooks' runs are shown only sometimes (a harness that records
    /// a hook only when it fails or prints): what a hook with no record
    /// reads instead of "never fired", from the harness's census.
    pub hooks_silence: Option<&'static str>,
}

impl RunTimeShown {
    /// Shows nothing.
    pub fn none() -> Self {
        RunTimeShown::default()
    }

    /// Also the skills offered to the model.
    pub fn skills_listed(mut self) -> Self {
        self.skills_listed = true;
        self
    }

    /// Also the skills invoked.
    pub fn skills_invoked(mut self) -> Self {
        self.skills_invoked = true;
        self
    }

    /// Also each hook's runs.
    pub fn hooks_fired(mut self) -> Self {
        self.hooks_fired = true;
        self
    }

    /// Also hooks' runs, but only some of them (those that failed or
    /// printed, say): a hook with no record reads `silence`, never "never
    /// fired".
    pub fn hooks_fired_sometimes(mut self, silence: &'static str) -> Self {
        self.hooks_fired = true;
        self.hooks_silence = Some(silence);
        self
    }

    /// Also plugins loaded and failed.
    pub fn plugins_loaded(mut self) -> Self {
        self.plugins_loaded = true;
        self
    }

    /// Either's.
    pub fn or(self, other: RunTimeShown) -> Self {
        RunTimeShown {
            skills_listed: self.skills_listed || other.skills_listed,
            skills_invoked: self.skills_invoked || other.skills_invoked,
            hooks_fired: self.hooks_fired || other.hooks_fired,
            plugins_loaded: self.plugins_loaded || other.plugins_loaded,
            // Silence proves absence where either source shows every run.
            hooks_silence: match (self.hooks_fired, other.hooks_fired) {
                (true, true) => self.hooks_silence.and(other.hooks_silence),
                (true, false) => self.hooks_silence,
                (false, _) => other.hooks_silence,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Provenance;

    fn ev(kind: EvidenceKind, at: u64, cap: CapabilityEvent) -> Evidence {
        let mut ev = Evidence::new(kind, Timestamp(at))
            .capability(cap)
            .provenance(Provenance::HarnessRecord);
        ev.calls = Some(1);
        ev
    }

    #[test]
    fn a_live_use_adds_one_and_a_total_takes_the_larger() {
        let hook =
            CapabilityEvent::hook("Stop", Some("Stop")).ended(UseOutcome::Succeeded, Some(0));
        let live =
            |at| Evidence::new(EvidenceKind::HookFired, Timestamp(at)).capability(hook.clone());
        let mut rows = Vec::new();
        apply(&mut rows, &live(1)).expect("room");
        apply(&mut rows, &live(2)).expect("room");
        assert_eq!(rows[0].uses(), 2);
        let mut total = live(3);
        total.calls = Some(5);
        apply(&mut rows, &total).expect("room");
        apply(&mut rows, &total).expect("room");
        assert_eq!(rows[0].uses(), 5);
    }

    #[test]
    fn a_command_keeps_its_basename_and_variable_names_only() {
        let shape = command_shape("TOKEN=s3cret ${CLAUDE_PLUGIN_ROOT}/scripts/check.sh --key abc")
            .expect("a shape");
        assert_eq!(shape.basename, "check.sh");
        assert_eq!(shape.resolves_against, ResolvesAgainst::PluginRoot);
        assert_eq!(shape.variables, vec!["CLAUDE_PLUGIN_ROOT".to_owned()]);
        let abs = command_shape("/nonexistent/hooks/stop.sh").expect("a shape");
        assert_eq!(
            (abs.basename.as_str(), abs.resolves_against),
            ("stop.sh", ResolvesAgainst::Absolute)
        );
        let rel = command_shape("'./hooks/x.sh' a").expect("a shape");
        assert_eq!(rel.resolves_against, ResolvesAgainst::WorkspaceCwd);
        assert_eq!(
            command_shape("npx lint").expect("a shape").resolves_against,
            ResolvesAgainst::Path
        );
        assert_eq!(command_shape("   "), None);
    }

    #[test]
    fn hooks_fold_in_any_order_and_read_their_worst_outcome() {
        let hook = |outcome, code| {
            CapabilityEvent::hook("Stop", Some("Stop"))
                .command("/x/stop.sh")
                .ended(outcome, code)
        };
        let events = [
            ev(
                EvidenceKind::HookFired,
                3,
                hook(UseOutcome::Succeeded, Some(0)),
            ),
            ev(
                EvidenceKind::HookFired,
                5,
                hook(UseOutcome::CommandNotFound, Some(127)),
            ),
            ev(
                EvidenceKind::HookFired,
                4,
                hook(UseOutcome::Failed, Some(3)),
            ),
        ];
        let mut a = Vec::new();
        for e in &events {
            apply(&mut a, e).expect("room");
        }
        let mut b = Vec::new();
        for e in events.iter().rev().chain(events.iter()) {
            apply(&mut b, e).expect("room");
        }
        assert_eq!(a, b);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].status, DisplayStatus::Failed);
        assert_eq!(a[0].reason_code, Some(ReasonCode::CommandNotFound));
        assert_eq!((a[0].uses(), a[0].failed_uses()), (3, 2));
        assert_eq!(a[0].first_at, Timestamp(3));
    }

    #[test]
    fn a_skill_is_offered_then_active_and_a_plugin_failure_keeps_its_reason() {
        let mut rows = Vec::new();
        apply(
            &mut rows,
            &ev(
                EvidenceKind::SkillListed,
                1,
                CapabilityEvent::skill("notes"),
            ),
        )
        .expect("room");
        assert_eq!(rows[0].status, DisplayStatus::Delivered);
        let mut invoked = ev(
            EvidenceKind::SkillInvoked,
            2,
            CapabilityEvent::skill("notes"),
        );
        invoked.ok = Some(true);
        assert_eq!(apply(&mut rows, &invoked), Ok(true));
        assert_eq!(apply(&mut rows, &invoked), Ok(false));
        assert_eq!(rows[0].status, DisplayStatus::Active);
        let failed = ev(
            EvidenceKind::PluginFailed,
            3,
            CapabilityEvent::plugin("bad"),
        )
        .reason(
            ReasonCode::PluginLoadFailed,
            Some("corrupt manifest".into()),
        );
        apply(&mut rows, &failed).expect("room");
        assert_eq!(rows[1].status, DisplayStatus::Failed);
        assert_eq!(rows[1].reason_code, Some(ReasonCode::PluginLoadFailed));
    }

    #[test]
    fn rows_are_bounded() {
        let mut rows = Vec::new();
        for i in 0..MAX_CAPABILITY_ROWS {
            let e = ev(
                EvidenceKind::SkillListed,
                1,
                CapabilityEvent::skill(&format!("s{i}")),
            );
            apply(&mut rows, &e).expect("room");
        }
        let one_more = ev(EvidenceKind::SkillListed, 1, CapabilityEvent::skill("late"));
        assert_eq!(apply(&mut rows, &one_more), Err(NotApplied::Full));
        assert_eq!(rows.len(), MAX_CAPABILITY_ROWS);
        // A row keeps 16 ways a use ended; a 17th is refused (and counted
        // as dropped by the reducer), the row unchanged; a known one still
        // counts.
        let mut rows = Vec::new();
        let run = |code: i32| {
            ev(
                EvidenceKind::HookFired,
                2,
                CapabilityEvent::hook("Stop", Some("Stop")).ended(UseOutcome::Failed, Some(code)),
            )
        };
        for code in 1..=MAX_OUTCOMES as i32 {
            apply(&mut rows, &run(code)).expect("room");
        }
        let before = rows.clone();
        assert_eq!(apply(&mut rows, &run(99)), Err(NotApplied::Full));
        assert_eq!(rows, before);
        let mut again = run(1);
        again.calls = Some(4);
        assert_eq!(apply(&mut rows, &again), Ok(true));
    }
}

#[cfg(test)]
mod planted {
    use proptest::prelude::*;

    use super::*;
    use crate::reducer::{RowNames, sanitize_evidence};
    use crate::sanitize::Scrubber;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Whatever a hook's command line carries (a token as an argument,
        /// an assignment, a path with a user's name), the row keeps its
        /// basename and variable names only; a secret planted in a name is
        /// scrubbed by the reducer's sanitizer like any other name.
        #[test]
        fn no_planted_secret_survives_a_hook_run(
            secret in "[A-Za-z0-9]{16,24}",
            user in "[a-z]{3,8}",
            script in "[a-z]{2,8}",
        ) {
            let token = format!("sk-ant-{secret}");
            let line = format!(
                "API_KEY={token} /home/planted-{user}/hooks/{script}.sh --token {token} ${{CLAUDE_PLUGIN_ROOT}}/x"
            );
            let hook = CapabilityEvent::hook("Stop", Some("Stop"))
                .command(&line)
                .ended(UseOutcome::Failed, Some(3));
            let raw = Evidence::new(EvidenceKind::HookFired, Timestamp(1)).capability(hook);
            let clean = sanitize_evidence(&raw, &Scrubber::new(), &RowNames::shown_as_is([]));
            let mut rows = Vec::new();
            apply(&mut rows, clean.evidence()).expect("room");
            let text = format!("{:?}{:?}", clean.evidence(), rows);
            prop_assert!(!text.contains(&secret), "{}", text);
            // The home directory, marked so that no field's own name (a
            // short user name can be part of one) passes for it.
            prop_assert!(!text.contains(&format!("planted-{user}")), "{}", text);
            prop_assert!(!text.contains("/home"), "{}", text);
            let basename = format!("{script}.sh");
            prop_assert_eq!(rows[0].command.as_deref(), Some(basename.as_str()));
            // A secret given as a skill's name is scrubbed, not kept.
            let skill = CapabilityEvent::skill(&token);
            let raw = Evidence::new(EvidenceKind::SkillListed, Timestamp(1)).capability(skill);
            let clean = sanitize_evidence(&raw, &Scrubber::new(), &RowNames::shown_as_is([]));
            let shown = format!("{:?}", clean.evidence());
            prop_assert!(!shown.contains(&secret), "{}", shown);
        }
    }
}
