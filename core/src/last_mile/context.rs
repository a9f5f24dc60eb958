//! What the host knows of the environment a harness runs in, where a
//! harness's last mile depends on it (Claude Code's `ENABLE_TOOL_SEARCH`,
//! its model URL), and what a harness's tool search decides from it
//! ([`Deferral`]).
//!
//! A value is held in memory only while a plugin reads it as the switch it
//! is: `Debug` prints names, never values, and nothing here is stored.

use std::collections::BTreeMap;

/// The prefix of a row's setting that carries one variable of the
/// harness's environment as its scanner read it (`env:NAME=MEANING`): the
/// scanner writes only a switch's meaning, never a value that can hold a
/// secret ([`Context::from_settings`]).
pub const ENV_SETTING: &str = "env:";

/// One variable, as far as the host knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Var<'a> {
    /// Set, to this (non-empty) value.
    Set(&'a str),
    /// Known to be unset (or empty).
    Unset,
    /// Not known: the host does not know the harness's environment.
    Unknown,
}

impl<'a> Var<'a> {
    /// `Some(value)` where set, `Some(None)` where unset, `None` where
    /// unknown.
    pub fn known(self) -> Option<Option<&'a str>> {
        match self {
            Var::Set(v) => Some(Some(v)),
            Var::Unset => Some(None),
            Var::Unknown => None,
        }
    }
}

/// The environment a harness runs in, as far as the host knows it: each
/// variable known set, known unset, or not known. The default knows
/// nothing.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Context {
    /// Variables known by name, each with its value (`None`: unset).
    known: BTreeMap<String, Option<String>>,
    /// Whether a variable not in `known` is known to be unset (the host
    /// knows the whole environment: the one `tether run` starts the
    /// harness with).
    whole: bool,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("known", &self.known.keys().collect::<Vec<_>>())
            .field("whole", &self.whole)
            .finish()
    }
}

impl Context {
    /// Nothing known.
    pub fn unknown() -> Self {
        Context::default()
    }

    /// The whole environment the harness starts with: a variable not in
    /// `vars` is unset.
    pub fn of_env<I, K, V>(vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let mut context = Context {
            known: BTreeMap::new(),
            whole: true,
        };
        for (name, value) in vars {
            let value: String = value.into();
            context
                .known
                .insert(name.into(), (!value.is_empty()).then_some(value));
        }
        context
    }

    /// The same, with `name` known to be `value` (`None`: unset), over
    /// whatever was known of it (a settings file's `env` block over the
    /// process's environment).
    pub fn with_var(mut self, name: &str, value: Option<&str>) -> Self {
        self.known.insert(
            name.to_owned(),
            value.filter(|v| !v.is_empty()).map(str::to_owned),
        );
        self
    }

    /// The environment a row's settings carry (`env:NAME=MEANING`,
    /// [`ENV_SETTING`]): where it holds any, its scanner read the whole
    /// environment and wrote every switch it reads, so a variable it did
    /// not write is unset; where it holds none, nothing is known.
    pub fn from_settings(settings: &[String]) -> Self {
        let vars: Vec<(&str, &str)> = settings
            .iter()
            .filter_map(|s| s.strip_prefix(ENV_SETTING)?.split_once('='))
            .collect();
        if vars.is_empty() {
            return Context::unknown();
        }
        Context::of_env(vars)
    }

    /// Whether anything is known.
    pub fn is_unknown(&self) -> bool {
        !self.whole && self.known.is_empty()
    }

    /// The variable `name`, as far as known.
    pub fn var(&self, name: &str) -> Var<'_> {
        match self.known.get(name) {
            Some(Some(value)) => Var::Set(value),
            Some(None) => Var::Unset,
            None if self.whole => Var::Unset,
            None => Var::Unknown,
        }
    }
}

/// What a harness's tool search does with MCP tools in one environment:
/// whether it holds them back by default (`None`: it depends on what the
/// host does not know), and the rule that says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deferral {
    /// Whether MCP tools are held behind the tool search; `None`: not known.
    pub defers: Option<bool>,
    /// The rule, with what it depends on where `defers` is `None`, and the
    /// harness's source it comes from.
    pub because: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variable_is_set_unset_or_unknown_and_debug_names_no_value() {
        let none = Context::unknown();
        assert!(none.is_unknown());
        assert_eq!(none.var("A"), Var::Unknown);
        let run = Context::of_env([("A", "secret-value"), ("E", "")]);
        assert_eq!(run.var("A"), Var::Set("secret-value"));
        assert_eq!(run.var("E"), Var::Unset);
        assert_eq!(run.var("B"), Var::Unset);
        assert!(!format!("{run:?}").contains("secret-value"));
        let over = run.with_var("A", None).with_var("C", Some("1"));
        assert_eq!(over.var("A"), Var::Unset);
        assert_eq!(over.var("C"), Var::Set("1"));
        let partial = Context::unknown().with_var("A", Some("x"));
        assert_eq!(partial.var("B"), Var::Unknown);
        assert_eq!(Var::Unknown.known(), None);
        assert_eq!(Var::Unset.known(), Some(None));
    }

    #[test]
    fn settings_carry_the_environment_only_where_a_scanner_wrote_it() {
        let none = Context::from_settings(&["alwaysLoad=true".to_owned()]);
        assert!(none.is_unknown());
        let read = Context::from_settings(&[
            "alwaysLoad=false".to_owned(),
            "env:ENABLE_TOOL_SEARCH=false".to_owned(),
        ]);
        assert_eq!(read.var("ENABLE_TOOL_SEARCH"), Var::Set("false"));
        assert_eq!(read.var("ANTHROPIC_BASE_URL"), Var::Unset);
    }
}
