//! Rows beyond servers: plugins, skills, hooks (and tools), and the
//! diagnostics of anything that runs a command. A scanner describes what it
//! found ([`FoundCapability`], with a [`FoundCommand`] for a hook or script);
//! [`ScanOutput::push_capability`] turns it into a sanitized row, with the
//! stages that apply to its kind (`n/a` where one cannot) and a precise
//! reason when it stops.
//!
//! A command's diagnostics keep its basename, whether it resolves here, what
//! it resolves against, and the names of variables it uses that are unset or
//! that nothing expands where it runs. Never the command line, its
//! arguments, or a variable's value.
//!
//! Its reasons: `unresolved_variable`, `relative_command`, `command_not_found`,
//! and `not_installed` for a plugin (with `Installed` saying yes, no and why, or
//! not yet known). Hook entries keep their place (`hook_entries`); skills are
//! named by their front matter (`ScanOutput::skill_files`).

use std::path::{Path, PathBuf};

use serde_json::Value;
use tether_core::inventory::{
    CapabilityLink, InventoryRow, InventoryStages, RowDiagnostics, from_config,
};
use tether_core::model::{ProvenanceCode, StageObservation};
use tether_core::sanitize;
use tether_core::vocab::{
    CapabilityKind, ConfigScope, ReasonCode, ResolvesAgainst, StageState, Transport,
};

use crate::context::ScanContext;
use crate::root::ConfigRoot;
use crate::rows::{Enablement, ScanOutput, summary_keeping_sources};

/// A command a hook (or a plugin script) runs, as its file gives it.
#[derive(Debug, Clone)]
pub struct FoundCommand {
    /// The command line, as written (in memory only).
    pub line: String,
    /// Where its relative parts resolve: the workspace cwd (settings hooks)
    /// or the plugin root (a plugin's own hooks and servers).
    pub base: ResolvesAgainst,
    /// The plugin's directory, for [`ResolvesAgainst::PluginRoot`].
    pub root: Option<PathBuf>,
    /// Variables the harness itself expands where this command runs
    /// (`CLAUDE_PLUGIN_ROOT` in a plugin's hooks), with their values.
    pub expands: Vec<(String, String)>,
}

/// Whether a plugin is installed, as its files show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Installed {
    /// The stage does not apply (a skill, a hook, a tool).
    NotApplicable,
    /// Its files are there.
    Yes,
    /// Its files are not there; why, in one sentence (`None`: "enabled but
    /// not installed").
    No(Option<String>),
    /// Nothing shows either way yet; why.
    Unknown(String),
}

impl From<bool> for Installed {
    fn from(yes: bool) -> Self {
        if yes {
            Installed::Yes
        } else {
            Installed::No(None)
        }
    }
}

/// One plugin, skill, hook or tool as a scanner found it.
#[derive(Debug, Clone)]
pub struct FoundCapability {
    /// What it is.
    pub kind: CapabilityKind,
    /// Harness name.
    pub harness: &'static str,
    /// Scope.
    pub scope: ConfigScope,
    /// Its name (sanitized when it becomes a row).
    pub name: String,
    /// The file it came from (already shown safely).
    pub source: String,
    /// For a plugin: whether it is installed.
    pub installed: Installed,
    /// Whether the configuration lets it run.
    pub enablement: Enablement,
    /// What it runs, for a hook or script.
    pub command: Option<FoundCommand>,
    /// What it bundles.
    pub links: Vec<CapabilityLink>,
    /// A short, non-secret target (`marketplace`, `version`…), shown as is.
    pub target: String,
    /// Other non-secret settings, `key=value`.
    pub settings: Vec<String>,
    /// Notes for the row (a hook matcher that can never match, …).
    pub notes: Vec<tether_core::inventory::RowNote>,
}

impl FoundCapability {
    /// A capability with nothing but its identity; enabled.
    pub fn new(
        kind: CapabilityKind,
        harness: &'static str,
        scope: ConfigScope,
        name: &str,
        source: String,
    ) -> Self {
        FoundCapability {
            kind,
            harness,
            scope,
            name: name.to_owned(),
            source,
            installed: Installed::NotApplicable,
            enablement: Enablement::Enabled,
            command: None,
            links: Vec::new(),
            target: String::new(),
            settings: Vec::new(),
            notes: Vec::new(),
        }
    }
}

/// What a command's diagnostics came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandCheck {
    /// Its basename (after the harness's own expansions).
    pub basename: String,
    /// Whether it resolves here.
    pub resolves: bool,
    /// What it resolves against.
    pub against: ResolvesAgainst,
    /// Variables it uses that are unset or unexpanded (names).
    pub unresolved: Vec<String>,
    /// Why it would not run, if it would not.
    pub reason: Option<(ReasonCode, String)>,
}

/// The variable names a command line refers to (`$NAME`, `${NAME}`,
/// `${NAME:-default}` as `NAME`), in order, once each.
pub fn variables(line: &str) -> Vec<String> {
    let bytes = line.as_bytes();
    let mut names = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'$' {
            let braced = bytes.get(i + 1) == Some(&b'{');
            let start = if braced { i + 2 } else { i + 1 };
            let mut end = start;
            while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
                end += 1;
            }
            if end > start && !bytes[start].is_ascii_digit() {
                let name = &line[start..end];
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_owned());
                }
            }
            i = end.max(i + 1);
        } else {
            i += 1;
        }
    }
    names
}

/// Checks a command the way the harness would run it, here.
pub fn check_command(ctx: &ScanContext, command: &FoundCommand) -> CommandCheck {
    let mut unresolved = Vec::new();
    let mut line = command.line.clone();
    for name in variables(&command.line) {
        // The harness's own expansions first, then the environment's (in
        // memory only, to see what the shell would run).
        let value = command
            .expands
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
            .or_else(|| ctx.var_str(&name));
        match value {
            Some(value) => {
                line = line
                    .replace(&format!("${{{name}}}"), &value)
                    .replace(&format!("${name}"), &value);
            }
            None => unresolved.push(name),
        }
    }
    // The first word that is not an assignment (`NAME=value cmd`), quotes
    // trimmed: what the shell runs.
    let is_assignment = |word: &str| {
        word.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        })
    };
    let first = line
        .split_whitespace()
        .find(|w| !is_assignment(w))
        .unwrap_or("")
        .trim_matches(['"', '\''])
        .to_owned();
    let basename = first.rsplit('/').next().unwrap_or("").to_owned();
    let basename = sanitize::name(if basename.is_empty() { "?" } else { &basename });
    let (against, resolves) = if first.is_empty() {
        (ResolvesAgainst::Path, false)
    } else if first.starts_with('/') {
        (
            ResolvesAgainst::Absolute,
            ctx.command_resolves(&first, None),
        )
    } else if first.contains('$') {
        // A variable left in the command word: it cannot resolve as written.
        (command.base.clone(), false)
    } else if first.contains('/') {
        let dir: Option<&Path> = match command.base {
            ResolvesAgainst::PluginRoot => command.root.as_deref(),
            _ => ctx.project.as_deref(),
        };
        (
            command.base.clone(),
            dir.is_some() && ctx.command_resolves(&first, dir),
        )
    } else {
        (ResolvesAgainst::Path, ctx.command_resolves(&first, None))
    };
    let reason = if !unresolved.is_empty() {
        Some((
            ReasonCode::UnresolvedVariable,
            format!(
                "`{basename}` uses {} that is unset here or not expanded where it runs",
                unresolved
                    .iter()
                    .map(|n| format!("${{{}}}", sanitize::name(n)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ))
    } else if against == ResolvesAgainst::WorkspaceCwd {
        Some((
            ReasonCode::RelativeCommand,
            format!(
                "`{basename}` is a relative path, resolved against the workspace's working directory{}",
                if resolves {
                    ""
                } else {
                    ", where it does not exist"
                }
            ),
        ))
    } else if !resolves {
        Some((
            ReasonCode::CommandNotFound,
            format!("`{basename}` does not resolve here"),
        ))
    } else {
        None
    };
    CommandCheck {
        basename,
        resolves,
        against,
        unresolved,
        reason,
    }
}

/// One command hook of a `hooks` object, where it sits in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookEntry {
    /// Its row name: `PREFIX EVENT[:MATCHER][#N]`.
    pub name: String,
    /// The command line, as written (in memory only).
    pub line: String,
    /// The event, as written (`PreToolUse`).
    pub event: String,
    /// The matcher group's index under its event.
    pub group: usize,
    /// The hook's index in its group's `hooks`.
    pub index: usize,
}

/// Every command hook in a `hooks` object (`{EVENT: [{matcher, hooks:
/// [{type: "command", command}]}]}`, the shape Claude Code, Gemini CLI, Qwen
/// Code and Codex share), named `PREFIX EVENT[:MATCHER][#N]`, with its
/// command line (in memory only) and its place. Keys whose value is not a
/// list (Codex keeps `state` beside the events) are not events.
pub fn hook_entries(hooks: Option<&Value>, prefix: &str) -> Vec<HookEntry> {
    let mut found: Vec<HookEntry> = Vec::new();
    let Some(events) = hooks.and_then(Value::as_object) else {
        return found;
    };
    for (event, groups) in events {
        for (group_index, group) in groups.as_array().into_iter().flatten().enumerate() {
            let matcher = group.get("matcher").and_then(Value::as_str).unwrap_or("");
            let base = if matcher.is_empty() || matcher == "*" {
                format!("{prefix}{event}")
            } else {
                format!("{prefix}{event}:{matcher}")
            };
            let hooks = group.get("hooks").and_then(Value::as_array);
            for (index, hook) in hooks.into_iter().flatten().enumerate() {
                if hook
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("command")
                    != "command"
                {
                    continue;
                }
                let Some(line) = hook.get("command").and_then(Value::as_str) else {
                    continue;
                };
                let taken = found.iter().filter(|h| h.name.starts_with(&base)).count();
                let name = if taken == 0 {
                    base.clone()
                } else {
                    format!("{base}#{}", taken + 1)
                };
                found.push(HookEntry {
                    name,
                    line: line.to_owned(),
                    event: event.clone(),
                    group: group_index,
                    index,
                });
            }
        }
    }
    found
}

/// [`hook_entries`] as (name, command line) pairs.
pub fn hook_commands(hooks: Option<&Value>, prefix: &str) -> Vec<(String, String)> {
    hook_entries(hooks, prefix)
        .into_iter()
        .map(|h| (h.name, h.line))
        .collect()
}

/// The `name:` of a `SKILL.md`'s front matter (`---` … `---` at its top),
/// when it has one and a `description:` too; `None` for a file without
/// them, which Codex and Copilot skip.
pub fn skill_front_matter_name(text: &str) -> Option<String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next()?.trim_end() != "---" {
        return None;
    }
    let mut name = None;
    let mut described = false;
    for line in lines {
        if line.trim_end() == "---" {
            return name.filter(|_| described);
        }
        if let Some(value) = line.strip_prefix("name:") {
            let value = value.trim().trim_matches(['"', '\'']).trim();
            if !value.is_empty() {
                name = Some(value.to_owned());
            }
        } else if line.starts_with("description:") {
            described = true;
        }
    }
    None
}

/// Skills under `dir` of `root` (`DIR/NAME/SKILL.md`): (name, shown source).
pub fn skills_under(root: &ConfigRoot, dir: &str) -> Vec<(String, String)> {
    let mut skills: Vec<(String, String)> = root
        .find_files(dir, &["SKILL.md"], 2)
        .into_iter()
        .filter_map(|path| {
            let rel = path.strip_suffix("/SKILL.md")?;
            let name = rel.rsplit('/').next()?.to_owned();
            Some((name, root.source(&path)))
        })
        .collect();
    skills.sort();
    skills.dedup();
    skills
}

impl ScanOutput {
    /// A plugin's bundled MCP servers (`servers`, the `mcpServers` object,
    /// in the `.mcp.json` shape, of its manifest or servers file at
    /// `source`): one server row each, named `plugin:PLUGIN:SERVER`, on or
    /// off with the plugin. Returns the links the plugin's own row carries
    /// to them.
    pub fn push_bundled_servers(
        &mut self,
        ctx: &ScanContext,
        harness: &'static str,
        source: &str,
        servers: &serde_json::Map<String, Value>,
        plugin: &str,
        enablement: &Enablement,
    ) -> Vec<CapabilityLink> {
        let named: serde_json::Map<String, Value> = servers
            .iter()
            .map(|(k, v)| (format!("plugin:{plugin}:{k}"), v.clone()))
            .collect();
        let links = named
            .keys()
            .map(|name| CapabilityLink {
                kind: CapabilityKind::McpServer,
                name: name.clone(),
            })
            .collect();
        self.add_servers(
            ctx,
            harness,
            ConfigScope::Plugin,
            source,
            "mcpServers",
            Some(&Value::Object(named)),
            crate::dialect::EntryDialect::McpJson,
            |found, _| found.enablement = enablement.clone(),
        );
        links
    }

    /// A plugin's bundled skills (`DIR/NAME/SKILL.md` under its `root`,
    /// `DIR` as a manifest writes it: `skills`, `./skills/`): one skill row
    /// each, named `PLUGIN:NAME`, on or off with the plugin. Returns the
    /// links the plugin's own row carries to them.
    pub fn push_bundled_skills(
        &mut self,
        ctx: &ScanContext,
        harness: &'static str,
        root: &ConfigRoot,
        dir: &str,
        plugin: &str,
        enablement: &Enablement,
    ) -> Vec<CapabilityLink> {
        let dir = dir.trim_start_matches("./").trim_end_matches('/');
        let mut links = Vec::new();
        for (skill, source) in skills_under(root, dir) {
            let name = format!("{plugin}:{skill}");
            links.push(CapabilityLink {
                kind: CapabilityKind::Skill,
                name: name.clone(),
            });
            let mut found = FoundCapability::new(
                CapabilityKind::Skill,
                harness,
                ConfigScope::Plugin,
                &name,
                source,
            );
            found.enablement = enablement.clone();
            self.push_capability(ctx, found);
        }
        links
    }

    /// Every `SKILL.md` at any depth (up to 6 folders) under `dir` of
    /// `root`, as Codex and Copilot find skills: named by its front matter,
    /// not its folder, and, without front matter (which `who` skips),
    /// `invalid_config` under its folder's name. Returned with the skill's
    /// folder, for the caller to set what else turns it off and push.
    pub fn skill_files(
        &mut self,
        harness: &'static str,
        who: &str,
        root: &ConfigRoot,
        dir: &str,
        scope: ConfigScope,
    ) -> Vec<(FoundCapability, PathBuf)> {
        let mut found = Vec::new();
        for rel in root.find_files(dir, &["SKILL.md"], 6) {
            let Some(text) = self.read(harness, root, &rel) else {
                continue;
            };
            // `dir` may itself be the skill (a folder `copilot skill add` names).
            let folder_rel = rel
                .strip_suffix("SKILL.md")
                .unwrap_or("")
                .trim_end_matches('/');
            let folder = match folder_rel.rsplit('/').next() {
                Some(name) if !name.is_empty() => name,
                _ => root
                    .dir()
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or("?"),
            };
            let named = skill_front_matter_name(&text);
            let mut skill = FoundCapability::new(
                CapabilityKind::Skill,
                harness,
                scope.clone(),
                named.as_deref().unwrap_or(folder),
                root.source(&rel),
            );
            if named.is_none() {
                skill.enablement = Enablement::Off(
                    ReasonCode::InvalidConfig,
                    format!(
                        "its SKILL.md has no front matter with a name and a description; {who} skips it"
                    ),
                );
            }
            found.push((skill, root.dir().join(folder_rel)));
        }
        found
    }

    /// Turns a found plugin, skill, hook or tool into a sanitized row.
    pub fn push_capability(&mut self, ctx: &ScanContext, found: FoundCapability) {
        let at = self.at;
        let na =
            StageObservation::shown(StageState::NotApplicable, ProvenanceCode::CurrentConfig, at);
        let mut diagnostics = RowDiagnostics {
            settings: found
                .settings
                .iter()
                .map(|s| sanitize::summary(s))
                .collect(),
            ..RowDiagnostics::default()
        };
        let (enabled, mut reason, mut summary) = match &found.enablement {
            Enablement::Enabled => (from_config(true, at), None, None),
            Enablement::Off(reason, why) => (
                from_config(false, at),
                Some(reason.clone()),
                Some(summary_keeping_sources(&sanitize::Scrubber::new(), why)),
            ),
            Enablement::Unknown(why) => (
                StageObservation::default(),
                None,
                Some(summary_keeping_sources(&sanitize::Scrubber::new(), why)),
            ),
        };
        if let Some(command) = &found.command {
            let check = check_command(ctx, command);
            diagnostics.command = Some(check.basename.clone());
            diagnostics.command_resolves = Some(check.resolves);
            diagnostics.resolves_against = Some(check.against.clone());
            diagnostics.unresolved = check.unresolved.iter().map(|n| sanitize::name(n)).collect();
            if reason.is_none()
                && let Some((code, why)) = check.reason
            {
                reason = Some(code);
                summary = Some(why);
            }
        }
        let mut stages = InventoryStages::configured(enabled, at);
        stages.installed = match &found.installed {
            Installed::Yes => from_config(true, at),
            Installed::No(_) => from_config(false, at),
            Installed::NotApplicable => na,
            Installed::Unknown(_) => StageObservation::default(),
        };
        match (&found.installed, reason.is_none()) {
            (Installed::No(why), true) => {
                reason = Some(ReasonCode::NotInstalled);
                summary = Some(match why {
                    Some(why) => summary_keeping_sources(&sanitize::Scrubber::new(), why),
                    None => format!(
                        "{} is enabled but not installed",
                        sanitize::name(&found.name)
                    ),
                });
            }
            (Installed::Unknown(why), _) if summary.is_none() => {
                summary = Some(summary_keeping_sources(&sanitize::Scrubber::new(), why));
            }
            _ => {}
        }
        // Only a server speaks MCP: the protocol stages cannot apply to the
        // other kinds (a plugin's servers carry their own rows).
        if found.kind != CapabilityKind::McpServer && found.kind != CapabilityKind::McpTool {
            stages.authenticated = na;
            stages.initialized = na;
            stages.tools_listed = na;
        }
        // Hooks and plugins are never shown to the model; skills and tools
        // can be, which only a session shows.
        if matches!(found.kind, CapabilityKind::Hook | CapabilityKind::Plugin) {
            stages.model_visible = na;
        }
        let mut links = found.links;
        links
            .iter_mut()
            .for_each(|l| l.name = sanitize::name(&l.name));
        links.sort();
        links.dedup();
        self.rows.push(InventoryRow {
            kind: found.kind,
            harness: found.harness.to_owned(),
            scope: found.scope,
            name: sanitize::name(&found.name),
            transport: Transport::Other("none".into()),
            target: sanitize::name(&found.target),
            stages,
            reason_code: reason,
            summary,
            source: found.source,
            diagnostics,
            endpoint_test: None,
            tool_tokens: None,
            model: None,
            links,
            call_policy: None,
            notes: crate::rows::sanitized_notes(&sanitize::Scrubber::new(), &found.notes),
            endpoint: None,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn ctx(vars: &[(&str, &str)]) -> ScanContext {
        let mut map = BTreeMap::new();
        for (k, v) in vars {
            map.insert((*k).to_owned(), std::ffi::OsString::from(*v));
        }
        let mut ctx = ScanContext::from_env(None);
        ctx.vars = map;
        ctx
    }

    fn cmd(line: &str, base: ResolvesAgainst) -> FoundCommand {
        FoundCommand {
            line: line.into(),
            base,
            root: None,
            expands: vec![],
        }
    }

    #[test]
    fn variables_are_found_once_in_every_spelling() {
        assert_eq!(
            variables("${A}/x $B ${A} ${C:-d} $1 $$"),
            vec!["A".to_owned(), "B".to_owned(), "C".to_owned()]
        );
    }

    #[test]
    fn an_unexpanded_plugin_root_is_an_unresolved_variable() {
        let check = check_command(
            &ctx(&[("PATH", "/usr/bin:/bin")]),
            &cmd(
                "${CLAUDE_PLUGIN_ROOT}/scripts/check.sh --token s3cr3t",
                ResolvesAgainst::WorkspaceCwd,
            ),
        );
        assert_eq!(check.unresolved, vec!["CLAUDE_PLUGIN_ROOT".to_owned()]);
        assert_eq!(
            check.reason.map(|r| r.0),
            Some(ReasonCode::UnresolvedVariable)
        );
        assert_eq!(check.basename, "check.sh");
    }

    #[test]
    fn a_relative_command_resolves_against_the_workspace_and_says_so() {
        let check = check_command(
            &ctx(&[("PATH", "/usr/bin")]),
            &cmd("./hooks/lint.sh", ResolvesAgainst::WorkspaceCwd),
        );
        assert_eq!(check.against, ResolvesAgainst::WorkspaceCwd);
        assert_eq!(check.reason.map(|r| r.0), Some(ReasonCode::RelativeCommand));
    }

    #[test]
    fn a_bare_command_is_looked_up_on_path() {
        let here = ctx(&[("PATH", "/usr/bin:/bin")]);
        let ok = check_command(&here, &cmd("sh -c 'true'", ResolvesAgainst::WorkspaceCwd));
        assert_eq!(
            (ok.against, ok.resolves, ok.reason),
            (ResolvesAgainst::Path, true, None)
        );
        let missing = check_command(
            &here,
            &cmd("tether-no-such-tool --x", ResolvesAgainst::WorkspaceCwd),
        );
        assert_eq!(
            missing.reason.map(|r| r.0),
            Some(ReasonCode::CommandNotFound)
        );
    }

    #[test]
    fn hook_entries_know_their_group_and_index_and_skip_what_is_not_an_event() {
        let hooks = serde_json::json!({
            "Stop": [
                {"hooks": [{"type": "prompt", "prompt": "x"}, {"type": "command", "command": "a"}]},
                {"matcher": "Bash", "hooks": [{"command": "b"}, {"type": "command", "command": "c"}]}
            ],
            "state": {"/x/hooks.json:stop:0:1": {"enabled": false}}
        });
        let found: Vec<(String, String, usize, usize)> = hook_entries(Some(&hooks), "p:")
            .into_iter()
            .map(|h| (h.name, h.line, h.group, h.index))
            .collect();
        assert_eq!(
            found,
            vec![
                ("p:Stop".into(), "a".into(), 0, 1),
                ("p:Stop:Bash".into(), "b".into(), 1, 0),
                ("p:Stop:Bash#2".into(), "c".into(), 1, 1),
            ]
        );
    }

    #[test]
    fn a_skill_is_named_by_its_front_matter_only_when_it_has_one() {
        let named = "---\nname: 'deploy'\ndescription: Ships it\n---\nbody\n";
        assert_eq!(skill_front_matter_name(named).as_deref(), Some("deploy"));
        for unnamed in [
            "no front matter\n",
            "---\nname: x\n---\n",
            "---\ndescription: y\n---\n",
            "---\nname: x\ndescription: never closed\n",
            "",
        ] {
            assert_eq!(skill_front_matter_name(unnamed), None, "{unnamed:?}");
        }
    }
}
