//! Which skill, hook or plugin a piece of evidence is about
//! ([`CapabilityEvent`], carried by `Evidence::capability`), and what a
//! hook's command keeps of its line ([`command_shape`]). The rows these
//! fold into are [`crate::capability`]'s.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::vocab::{CapabilityKind, ResolvesAgainst, UseOutcome};

/// Variables named per command, at most.
pub const MAX_VARIABLES: usize = 8;

/// Which skill, hook or plugin a piece of evidence is about, and how its
/// use ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct CapabilityEvent {
    /// `skill`, `hook`, `plugin` (or `native_tool`).
    pub kind: CapabilityKind,
    /// Its name as the harness gives it (`release-notes`, a hook's
    /// `Stop` or `PreToolUse:Bash`, a plugin's name).
    pub name: String,
    /// The plugin it came with, if any (`goodplug` for `goodplug:greet`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
    /// For a hook: the event it runs on (`SessionStart`, `PreToolUse`,
    /// `Stop`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// For a hook: its command's basename (`check.sh`), never its line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// What the command's path resolves against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolves_against: Option<ResolvesAgainst>,
    /// Variables the command's path uses, by name (`CLAUDE_PLUGIN_ROOT`),
    /// never expanded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<String>,
    /// How the use ended (`skill_invoked`, `hook_fired`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<UseOutcome>,
    /// A hook's exit status, where the harness says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// A skill the harness itself bundles (Claude Code's own `simplify`,
    /// `loop`, …), which every session lists whatever its user installed:
    /// a renderer says them in one line unless asked. `false` (the
    /// default, left out of JSON) where the reader does not know it as one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub built_in: bool,
}

impl CapabilityEvent {
    fn of(kind: CapabilityKind, name: &str) -> Self {
        CapabilityEvent {
            kind,
            name: name.to_owned(),
            plugin: None,
            event: None,
            command: None,
            resolves_against: None,
            variables: Vec::new(),
            outcome: None,
            exit_code: None,
            built_in: false,
        }
    }

    /// A skill, by name.
    pub fn skill(name: &str) -> Self {
        Self::of(CapabilityKind::Skill, name)
    }

    /// A hook, by the harness's name for it, running on `event`.
    pub fn hook(name: &str, event: Option<&str>) -> Self {
        let mut hook = Self::of(CapabilityKind::Hook, name);
        hook.event = event.map(str::to_owned);
        hook
    }

    /// A plugin, by name.
    pub fn plugin(name: &str) -> Self {
        Self::of(CapabilityKind::Plugin, name)
    }

    /// The same, one the harness bundles ([`CapabilityEvent::built_in`]).
    pub fn bundled(mut self) -> Self {
        self.built_in = true;
        self
    }

    /// The same, as part of `plugin`.
    pub fn in_plugin(mut self, plugin: &str) -> Self {
        self.plugin = Some(plugin.to_owned());
        self
    }

    /// The same, running `line` (only its shape is kept:
    /// [`command_shape`]). A shape whose program is not a name (`[` of
    /// `[ -n "$X" ] && …`, a Windows path, a letter outside ASCII) is not
    /// kept: the hook stays, its command unknown. The host refuses a
    /// reading that carries a command that is not a name
    /// ([`crate::telemetry::names_are_names`]), so keeping it here would
    /// lose the whole record (issue 68).
    pub fn command(mut self, line: &str) -> Self {
        if let Some(shape) = command_shape(line).filter(|s| {
            crate::sanitize::is_name_like(&s.basename) && s.variables.iter().all(|v| is_variable(v))
        }) {
            self.command = Some(shape.basename);
            self.resolves_against = Some(shape.resolves_against);
            self.variables = shape.variables;
        }
        self
    }

    /// The same, its use ended `outcome` (with an exit status, where known).
    pub fn ended(mut self, outcome: UseOutcome, exit_code: Option<i32>) -> Self {
        self.outcome = Some(outcome);
        self.exit_code = exit_code;
        self
    }
}

/// How a hook's outcome reads from its exit status: 0 succeeded, 127 (the
/// shell's "not found") `command_not_found`, 2 `blocked` where the harness
/// gives 2 that meaning (`blocking_code`), anything else failed.
pub fn outcome_of_exit(code: i32, blocking_code: Option<i32>) -> UseOutcome {
    match code {
        0 => UseOutcome::Succeeded,
        127 => UseOutcome::CommandNotFound,
        c if Some(c) == blocking_code => UseOutcome::Blocked,
        _ => UseOutcome::Failed,
    }
}

/// How a use reads from a harness's yes or no (a call's success, a
/// record's status): succeeded, or failed.
pub fn outcome_of_ok(ok: bool) -> UseOutcome {
    if ok {
        UseOutcome::Succeeded
    } else {
        UseOutcome::Failed
    }
}

/// A command line's shape: what a row keeps of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandShape {
    /// The basename of the word the shell runs (`check.sh`).
    pub basename: String,
    /// What its path resolves against: absolute, a variable's directory
    /// (the plugin root), `PATH`, or the working directory.
    pub resolves_against: ResolvesAgainst,
    /// Variables its path uses, by name.
    pub variables: Vec<String>,
}

/// The shape of `line`: the first word that is not an assignment
/// (`NAME=value cmd`), quotes trimmed; `None` for an empty line.
pub fn command_shape(line: &str) -> Option<CommandShape> {
    // The same few hook commands run on every turn of a session: each
    // line's shape is kept per thread (at most `KEPT` lines, all let go
    // when full), so the sanitizer's scan runs once per line, not once per
    // run. Held in memory only, like the record being read.
    const KEPT: usize = 256;
    thread_local! {
        static SHAPES: std::cell::RefCell<std::collections::HashMap<Box<str>, Option<CommandShape>>> =
            std::cell::RefCell::default();
    }
    if line.len() > 512 {
        return shape_of(line);
    }
    SHAPES.with_borrow_mut(|shapes| {
        if let Some(shape) = shapes.get(line) {
            return shape.clone();
        }
        if shapes.len() >= KEPT {
            shapes.clear();
        }
        let shape = shape_of(line);
        shapes.insert(line.into(), shape.clone());
        shape
    })
}

/// [`command_shape`], worked out.
fn shape_of(line: &str) -> Option<CommandShape> {
    let is_assignment = |word: &str| {
        word.split_once('=')
            .is_some_and(|(name, _)| is_variable(name))
    };
    let word = line
        .split_whitespace()
        .find(|w| !is_assignment(w))?
        .trim_matches(['"', '\'']);
    let base = word.rsplit('/').next().unwrap_or("");
    let basename = crate::sanitize::name(if base.is_empty() { "?" } else { base });
    let variables = variables_in(word);
    let resolves_against = if word.starts_with('/') {
        ResolvesAgainst::Absolute
    } else if word.starts_with('$') {
        ResolvesAgainst::PluginRoot
    } else if word.contains('/') {
        ResolvesAgainst::WorkspaceCwd
    } else {
        ResolvesAgainst::Path
    };
    Some(CommandShape {
        basename,
        resolves_against,
        variables,
    })
}

/// Whether `name` is shaped like a shell variable's name (letters,
/// digits and `_`, not starting with a digit, at most 64 bytes): the one
/// rule for the variables a command names, wherever they are checked.
pub fn is_variable(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

/// `$NAME` and `${NAME}` in `word`, by name, at most [`MAX_VARIABLES`].
fn variables_in(word: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest = word;
    while let Some(i) = rest.find('$') {
        rest = &rest[i + 1..];
        let braced = rest.strip_prefix('{');
        let body = braced.unwrap_or(rest);
        let end = body
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(body.len());
        let name = &body[..end];
        if is_variable(name) && !out.iter().any(|n| n == name) && out.len() < MAX_VARIABLES {
            out.push(name.to_owned());
        }
        rest = &body[end..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GIVEN hook commands whose program is not a name (issue 68: the
    /// compact `[ -n "$X" ] && …` of a real 2.1.223 Stop hook) WHEN shaped
    /// THEN the hook keeps no command, and the host's rule takes it whole;
    /// a named program keeps its shape.
    #[test]
    fn a_command_that_is_not_a_name_leaves_the_hook_and_drops_the_command() {
        for line in [
            "[ -n \"$X\" ] && notify-send done || true",
            "C:\\hooks\\gate.sh",
            "café.sh --quiet",
            "sk-live-PLANTED0123456789abcdefABCDEF",
        ] {
            let hook = CapabilityEvent::hook("Stop", Some("Stop")).command(line);
            assert_eq!(hook.command, None, "{line}");
            assert_eq!(hook.resolves_against, None, "{line}");
            assert!(hook.variables.is_empty(), "{line}");
            assert!(
                crate::telemetry::names_are_names(
                    None,
                    &[],
                    &[crate::model::Evidence::new(
                        crate::vocab::EvidenceKind::HookFired,
                        crate::model::Timestamp(1)
                    )
                    .capability(hook)],
                    &[]
                ),
                "{line}"
            );
        }
        let named = CapabilityEvent::hook("Stop", None).command("$CLAUDE_PLUGIN_ROOT/stop.sh x");
        assert_eq!(named.command.as_deref(), Some("stop.sh"));
        assert_eq!(named.variables, ["CLAUDE_PLUGIN_ROOT"]);
    }
}
