//! A session's skills, hooks and plugins, in words: each one's matrix row
//! and sentence, and today's configuration merged in (what it names that
//! the session never showed, what ran that it no longer names).

use super::*;

/// One skill's, hook's or plugin's matrix row.
pub fn capability_row(
    row: &tether_core::capability::CapabilityRow,
) -> tether_core::records::MatrixRow {
    use tether_core::vocab::CapabilityKind as K;
    let stages = match row.kind {
        K::Skill => shown_stages(&[("listed", &row.listed), ("invoked", &row.used)]),
        K::Plugin => shown_stages(&[("loaded", &row.loaded)]),
        _ => shown_stages(&[("fired", &row.used)]),
    };
    tether_core::records::MatrixRow {
        kind: row.kind.clone(),
        name: row.name.clone(),
        status: row.status,
        reason_code: row.reason_code.clone(),
        stopped: capability_stopped(row),
        stages,
        calls: row.uses(),
        failed_calls: row.failed_uses(),
        unknown_calls: 0,
        refused_calls: 0,
        plugin: row.plugin.clone(),
        event: row.event.clone(),
        command: row.command.clone(),
        outcomes: row.outcomes.clone(),
        in_config: None,
        built_in: row.built_in,
    }
}

/// Where a skill, hook or plugin got, in words: "fired 3 times: 1
/// succeeded, 1 failed (exit 3), 1 command not found (exit 127)".
pub fn capability_stopped(row: &tether_core::capability::CapabilityRow) -> String {
    use tether_core::vocab::CapabilityKind as K;
    let times = |n: u32| {
        if n == 1 {
            "once".to_owned()
        } else {
            format!("{n} times")
        }
    };
    let outcomes = || {
        row.outcomes
            .iter()
            .map(|o| {
                let word = o.outcome.as_str().replace('_', " ");
                match o.exit_code {
                    Some(code) if code != 0 => format!("{} {word} (exit {code})", o.count),
                    _ => format!("{} {word}", o.count),
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    match row.kind {
        K::Plugin => match row.loaded.state {
            StageState::Yes => "loaded".to_owned(),
            StageState::No => match &row.summary {
                Some(s) => format!("failed to load: {s}"),
                None => "failed to load".to_owned(),
            },
            _ => NEVER_SEEN.to_owned(),
        },
        K::Skill if row.used.is_yes() => format!("invoked {}: {}", times(row.uses()), outcomes()),
        K::Skill if row.listed.is_yes() => "offered to the model".to_owned(),
        _ if row.used.is_yes() => format!("fired {}: {}", times(row.uses()), outcomes()),
        _ => NEVER_SEEN.to_owned(),
    }
}

/// What a configured skill, hook or plugin that the session never showed
/// says: that it never ran, where the harness's records (or telemetry)
/// would have shown it, or that the harness does not record it.
fn never_in_session(
    config: &tether_core::inventory::InventoryRow,
    shown: &tether_core::harness::RunTimeShown,
) -> String {
    use tether_core::vocab::CapabilityKind as K;
    let tail = match config.kind {
        K::Hook if shown.hooks_fired => {
            shown.hooks_silence.unwrap_or("never fired in this session")
        }
        K::Hook => "the harness does not record its hooks' runs",
        K::Skill if shown.skills_listed => "never offered in this session",
        K::Skill if shown.skills_invoked => "never invoked in this session",
        K::Skill => "the harness does not record its skills' use",
        _ if shown.plugins_loaded => "never loaded in this session",
        _ => "the harness does not record its plugins' loads",
    };
    match (config.is_enabled(), &config.reason_code) {
        (true, _) => format!("configured; {tail}"),
        (false, Some(reason)) => format!("configured, off ({reason}); {tail}"),
        (false, None) => format!("configured, off; {tail}"),
    }
}

/// Whether the configuration row `config` is the session's row `row`: the
/// same kind and name (a plugin's skill as `PLUGIN:SKILL` or its own
/// name; a plugin as `NAME` or `NAME@MARKETPLACE`), or for a hook the same
/// event (one of the configured name's `:`-parts) and command (any of the
/// event's commands, where the session's row names none).
pub fn configured_as(
    config: &tether_core::inventory::InventoryRow,
    row: &tether_core::records::MatrixRow,
) -> bool {
    if config.kind != row.kind {
        return false;
    }
    let name = config.name.split('#').next().unwrap_or(&config.name);
    match row.kind {
        tether_core::vocab::CapabilityKind::Hook => {
            let event = row.event.as_deref().unwrap_or(row.name.as_str());
            // A harness that records an event's hooks as one run (no
            // command) matches each of that event's configured hooks.
            name.split(':').any(|part| part == event)
                && (row.command.is_none()
                    || (config.diagnostics.command.is_some()
                        && config.diagnostics.command == row.command))
        }
        tether_core::vocab::CapabilityKind::Plugin => {
            name.split('@').next() == Some(row.name.as_str())
        }
        _ => {
            name == row.name
                || row
                    .plugin
                    .as_ref()
                    .is_some_and(|p| name == format!("{p}:{}", row.name))
        }
    }
}

/// Merges today's configuration (`config`: an inventory's rows) into a
/// session's matrix for `harness`: a skill, hook or plugin the session
/// showed reads `in_config` true when the configuration has it, false
/// (history: the session ran it, today's files no longer name it) when
/// not; one the configuration names and the session never showed is
/// added, `unknown` (with the configuration's reason when it is off),
/// saying so ("configured; never fired in this
/// session", where `shown` says the harness would have recorded it; "the
/// harness does not record its hooks' runs" where not). Servers and tools
/// are left as they are.
pub fn merge_configured(
    rows: &mut Vec<tether_core::records::MatrixRow>,
    config: &[tether_core::inventory::InventoryRow],
    harness: &str,
    shown: &tether_core::harness::RunTimeShown,
) {
    let is_capability = |k: &tether_core::vocab::CapabilityKind| {
        matches!(
            k,
            tether_core::vocab::CapabilityKind::Skill
                | tether_core::vocab::CapabilityKind::Hook
                | tether_core::vocab::CapabilityKind::Plugin
        )
    };
    let config: Vec<&tether_core::inventory::InventoryRow> = config
        .iter()
        .filter(|c| c.harness == harness && is_capability(&c.kind))
        .collect();
    let mut matched = vec![false; config.len()];
    for row in rows.iter_mut().filter(|r| is_capability(&r.kind)) {
        let mut found = false;
        for (i, c) in config.iter().enumerate() {
            if configured_as(c, row) {
                matched[i] = true;
                found = true;
            }
        }
        row.in_config = Some(found);
        if row.kind == tether_core::vocab::CapabilityKind::Skill
            && shown.skills_invoked
            && row.status == tether_core::vocab::DisplayStatus::Delivered
        {
            row.stopped = format!("{}; never invoked in this session", row.stopped);
        }
        // A skill the harness bundles is in no configuration file.
        if !found && !row.built_in {
            row.stopped = format!("{}; today's configuration does not name it", row.stopped);
        }
    }
    for (c, _) in config
        .iter()
        .zip(&matched)
        .filter(|(_, m)| !**m)
        .take(tether_core::capability::MAX_CAPABILITY_ROWS)
    {
        let mut stages = std::collections::BTreeMap::new();
        stages.insert("configured".to_owned(), c.stages.configured);
        rows.push(tether_core::records::MatrixRow {
            kind: c.kind.clone(),
            name: c.name.clone(),
            status: tether_core::vocab::DisplayStatus::Unknown,
            reason_code: c.reason_code.clone(),
            stopped: never_in_session(c, shown),
            stages,
            calls: 0,
            failed_calls: 0,
            unknown_calls: 0,
            refused_calls: 0,
            plugin: None,
            event: None,
            command: c.diagnostics.command.clone(),
            outcomes: Vec::new(),
            in_config: Some(true),
            built_in: false,
        });
    }
}

/// A capability row nothing in the session showed.
pub const NEVER_SEEN: &str = "nothing in the session showed it";

#[cfg(test)]
mod merge_tests {
    use super::*;
    use tether_core::capability::{CapabilityEvent, apply};
    use tether_core::model::{Evidence, Timestamp};
    use tether_core::vocab::{EvidenceKind, UseOutcome};

    fn config_hook(name: &str, command: &str) -> tether_core::inventory::InventoryRow {
        serde_json::from_value(serde_json::json!({
            "kind": "hook", "harness": "claude", "scope": "user", "name": name,
            "transport": "stdio", "target": command, "source": "~/.claude/settings.json",
            "stages": {
                "configured": {"state": "yes", "provenance": "current_config"},
                "enabled": {"state": "yes", "provenance": "current_config"},
                "authenticated": {"state": "n/a"}, "initialized": {"state": "n/a"},
                "tools_listed": {"state": "n/a"}, "model_visible": {"state": "n/a"}
            },
            "reason_code": null,
            "diagnostics": {"command": command}
        }))
        .expect("an inventory row")
    }

    #[test]
    fn configuration_merges_into_a_session_s_capability_rows() {
        let mut caps = Vec::new();
        for (command, at) in [("ok.sh", 1), ("gone.sh", 2)] {
            let ev = Evidence::new(EvidenceKind::HookFired, Timestamp(at)).capability(
                CapabilityEvent::hook("PreToolUse:Bash", Some("PreToolUse"))
                    .command(&format!("/h/{command}"))
                    .ended(UseOutcome::Succeeded, Some(0)),
            );
            apply(&mut caps, &ev).expect("room");
        }
        let mut rows: Vec<_> = caps.iter().map(capability_row).collect();
        let config = [
            config_hook("PreToolUse", "ok.sh"),
            config_hook("Stop", "never.sh"),
            config_hook("Stop", "other-harness.sh"),
        ];
        let mut config = config.to_vec();
        config[2].harness = "codex".into();
        let shown = tether_core::harness::RunTimeShown::none().hooks_fired();
        merge_configured(&mut rows, &config, "claude", &shown);
        let by = |command: &str| {
            rows.iter()
                .find(|r| r.command.as_deref() == Some(command))
                .unwrap_or_else(|| panic!("no {command} in {rows:#?}"))
        };
        assert_eq!(by("ok.sh").in_config, Some(true));
        assert_eq!(by("gone.sh").in_config, Some(false));
        assert!(
            by("gone.sh")
                .stopped
                .contains("today's configuration does not name it")
        );
        let never = by("never.sh");
        assert_eq!(never.stopped, "configured; never fired in this session");
        assert_eq!(never.status, tether_core::vocab::DisplayStatus::Unknown);
        assert!(
            rows.iter()
                .all(|r| r.command.as_deref() != Some("other-harness.sh"))
        );
        // Where the harness records a hook only sometimes, its silence is
        // said as the harness's census says it, never "never fired".
        let sometimes = tether_core::harness::RunTimeShown::none()
            .hooks_fired_sometimes("no record shows whether it ran");
        let mut rows: Vec<_> = caps.iter().map(capability_row).collect();
        merge_configured(&mut rows, &config, "claude", &sometimes);
        let quiet = rows
            .iter()
            .find(|r| r.command.as_deref() == Some("never.sh"))
            .expect("never.sh");
        assert_eq!(quiet.stopped, "configured; no record shows whether it ran");
        // A source that shows every run (telemetry, say) makes silence
        // absence again.
        let both = sometimes.or(tether_core::harness::RunTimeShown::none().hooks_fired());
        assert_eq!(both.hooks_silence, None);
    }
}
