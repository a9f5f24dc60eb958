//! The Claude Code configuration scanner for `tether inventory`.
//!
//! Where Claude Code keeps MCP servers (Linux paths; `CLAUDE_CONFIG_DIR`
//! moves the user files):
//! - `~/.claude.json`: top-level `mcpServers` (scope user) and
//!   `projects["<abs project>"].mcpServers` (scope local), plus that project's
//!   `disabledMcpServers` (servers turned off with `/mcp`), and its own copy of
//!   the approval lists;
//! - `<project>/.mcp.json` (scope project): a server runs only once approved,
//!   through `enableAllProjectMcpServers`, `enabledMcpjsonServers` or
//!   `disabledMcpjsonServers` in `~/.claude/settings.json`,
//!   `.claude/settings.json`, `.claude/settings.local.json` or the project's
//!   entry in `~/.claude.json`, and only in a folder whose trust dialog was
//!   accepted (`hasTrustDialogAccepted` in that entry; else `untrusted_folder`);
//! - `/etc/claude-code/managed-mcp.json` (scope managed): when it exists, it
//!   takes exclusive control, so every other server is `denied_by_policy`;
//! - `allowedMcpServers` and `deniedMcpServers` (`serverName`,
//!   `serverCommand` or `serverUrl` with `*` wildcards) in managed settings
//!   and every other settings file, merged (`allowManagedMcpServersOnly`
//!   in managed settings keeps only the managed allow list);
//! - permission rules and mode (`permissions.allow`/`ask`/`deny` on
//!   `mcp__…` names, `defaultMode`) from every settings file, managed
//!   settings included (`managed-settings.d/*.json` too, and the folder
//!   `CLAUDE_CODE_MANAGED_SETTINGS_PATH` names instead of
//!   `/etc/claude-code`), give each server row its `call_policy` (see
//!   `policy.rs`);
//! - plugin-bundled servers (scope plugin): `mcpServers` in an installed
//!   plugin's `.claude-plugin/plugin.json` (inline, or a path to a file) or
//!   its `.mcp.json`; installs come from `~/.claude/plugins/installed_plugins.json`
//!   (user installs, and project/local installs for this project), or from
//!   `~/.claude/plugins/cache/` without it; the plugin must be on in
//!   `enabledPlugins`.

use std::collections::BTreeMap;

use crate::policy;

use serde_json::{Map, Value};
use tether_core::Endpoint;
use tether_core::inventory::{CapabilityLink, RowNote};
use tether_core::model::ProvenanceCode;
use tether_core::vocab::{CapabilityKind, ConfigScope, ReasonCode, ResolvesAgainst};
use tether_inventory::{
    ConfigRoot, ConfigScanner, Enablement, FoundCapability, FoundCommand, FoundServer, Installed,
    ScanContext, ScanOutput, hook_entries, skills_under, string_list, substitute,
};

/// The harness name in inventory rows.
pub const HARNESS: &str = "claude";

/// Scans Claude Code's configuration.
#[derive(Debug, Default, Clone, Copy)]
pub struct ClaudeConfigScanner;

tether_inventory::register_scanner!(ClaudeConfigScanner);

/// Approval settings merged from every file that can hold them.
#[derive(Default)]
struct Approvals {
    enable_all: Option<(bool, String)>,
    enabled: BTreeMap<String, String>,
    disabled: BTreeMap<String, String>,
    plugins: BTreeMap<String, (bool, String)>,
}

impl Approvals {
    fn absorb(&mut self, doc: &Map<String, Value>, source: &str) {
        if let Some(all) = doc
            .get("enableAllProjectMcpServers")
            .and_then(Value::as_bool)
        {
            self.enable_all = Some((all, source.to_owned()));
        }
        for name in string_list(doc.get("enabledMcpjsonServers")) {
            self.enabled.insert(name, source.to_owned());
        }
        for name in string_list(doc.get("disabledMcpjsonServers")) {
            self.disabled.insert(name, source.to_owned());
        }
        if let Some(plugins) = doc.get("enabledPlugins").and_then(Value::as_object) {
            for (key, on) in plugins {
                if let Some(on) = on.as_bool() {
                    self.plugins.insert(key.clone(), (on, source.to_owned()));
                }
            }
        }
    }

    /// Each name `enabledMcpjsonServers` or `disabledMcpjsonServers`
    /// gives that no `.mcp.json` server (`defined`) is called: an error
    /// with a "did you mean". A name in the user's settings may be meant
    /// for another project, so it counts only when it is a near miss; one
    /// in this project's own files always does.
    fn unmatched(&self, out: &mut ScanOutput, defined: &[&str], state_source: &str) {
        let lists = [
            ("enabledMcpjsonServers", &self.enabled),
            ("disabledMcpjsonServers", &self.disabled),
        ];
        for (key, names) in lists {
            for (name, source) in names {
                if defined.contains(&name.as_str()) {
                    continue;
                }
                let own = source.starts_with("$PROJECT/") || source == state_source;
                let near = tether_inventory::dialect::nearest(name, defined.iter().copied());
                if own || near.is_some() {
                    out.unmatched_name(HARNESS, source.clone(), key, name, defined.iter().copied());
                }
            }
        }
    }

    fn project_server(&self, name: &str) -> Enablement {
        if let Some(source) = self.disabled.get(name) {
            return Enablement::Off(
                ReasonCode::DisabledInConfig,
                format!("rejected: listed in disabledMcpjsonServers in {source}"),
            );
        }
        if self.enabled.contains_key(name) {
            return Enablement::Enabled;
        }
        match &self.enable_all {
            Some((true, _)) => Enablement::Enabled,
            Some((false, source)) => Enablement::Off(
                ReasonCode::NotApproved,
                format!(
                    "waits for approval: enableAllProjectMcpServers is false in {source} and it is not in enabledMcpjsonServers"
                ),
            ),
            None => Enablement::Off(
                ReasonCode::NotApproved,
                "waits for approval: not in enabledMcpjsonServers and enableAllProjectMcpServers is not set".into(),
            ),
        }
    }

    fn plugin(&self, plugin: &str) -> Enablement {
        let prefix = format!("{plugin}@");
        match self
            .plugins
            .iter()
            .find(|(key, _)| key.as_str() == plugin || key.starts_with(&prefix))
        {
            Some((_, (true, _))) => Enablement::Enabled,
            Some((key, (false, source))) => Enablement::Off(
                ReasonCode::DisabledInConfig,
                format!("plugin {key} is off in enabledPlugins in {source}"),
            ),
            None => Enablement::Unknown(format!("plugin {plugin} is not in enabledPlugins")),
        }
    }
}

/// Server policy: `allowedMcpServers` and `deniedMcpServers` merge across
/// every settings source (2.1.197 and 2.1.332 describe them so); with
/// `allowManagedMcpServersOnly: true` in managed settings, only managed
/// settings' allow list counts, while deny lists still merge.
#[derive(Default)]
struct Policy {
    exclusive: Option<String>,
    /// Allow lists, each with its file, and whether managed settings hold it.
    allowed: Vec<(Vec<Rule>, String, bool)>,
    denied: Vec<(Rule, String)>,
    managed_allow_only: bool,
}

impl Policy {
    /// Adds one settings file's lists.
    fn absorb(&mut self, doc: &Map<String, Value>, source: &str, managed: bool) {
        if doc.contains_key("allowedMcpServers") {
            let list = rules(doc.get("allowedMcpServers"));
            self.allowed.push((list, source.to_owned(), managed));
        }
        for rule in rules(doc.get("deniedMcpServers")) {
            self.denied.push((rule, source.to_owned()));
        }
        if managed
            && doc
                .get("allowManagedMcpServersOnly")
                .and_then(Value::as_bool)
                == Some(true)
        {
            self.managed_allow_only = true;
        }
    }
}

/// One `allowedMcpServers`/`deniedMcpServers` entry.
enum Rule {
    /// `{"serverName": …}`.
    Name(String),
    /// `{"serverCommand": [command, args…]}`: the exact command line.
    Command(Vec<String>),
    /// `{"serverUrl": …}`, where `*` matches anything.
    Url(String),
}

impl Rule {
    fn matches(&self, name: &str, endpoint: &Endpoint) -> bool {
        match (self, endpoint) {
            (Rule::Name(n), _) => n == name,
            (Rule::Command(line), Endpoint::Stdio { command, args, .. }) => {
                line.first() == Some(command) && line[1..] == args[..]
            }
            (Rule::Url(pattern), Endpoint::Http { url, .. } | Endpoint::Sse { url, .. }) => {
                wildcard(pattern, url)
            }
            _ => false,
        }
    }
}

/// `*` matches any run of characters; everything else matches itself.
fn wildcard(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, rest) = parts.split_first().unwrap_or((&"", &[]));
    let Some(mut remaining) = text.strip_prefix(first) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return remaining.is_empty();
    };
    for part in middle {
        match remaining.find(part) {
            Some(i) => remaining = &remaining[i + part.len()..],
            None => return false,
        }
    }
    remaining.ends_with(last)
}

fn rules(value: Option<&Value>) -> Vec<Rule> {
    let entries = value.and_then(Value::as_array).into_iter().flatten();
    entries
        .filter_map(|e| {
            if let Some(name) = e.get("serverName").and_then(Value::as_str) {
                return Some(Rule::Name(name.to_owned()));
            }
            if let Some(url) = e.get("serverUrl").and_then(Value::as_str) {
                return Some(Rule::Url(url.to_owned()));
            }
            let line = string_list(e.get("serverCommand"));
            (!line.is_empty()).then_some(Rule::Command(line))
        })
        .collect()
}

impl Policy {
    fn verdict(&self, found: &FoundServer) -> Option<Enablement> {
        let (name, endpoint) = (found.name.as_str(), &found.endpoint);
        if let Some((_, source)) = self.denied.iter().find(|(d, _)| d.matches(name, endpoint)) {
            return Some(Enablement::Off(
                ReasonCode::DeniedByPolicy,
                format!("matched by deniedMcpServers in {source}"),
            ));
        }
        if found.scope == ConfigScope::Managed {
            return None;
        }
        if let Some(source) = &self.exclusive {
            return Some(Enablement::Off(
                ReasonCode::DeniedByPolicy,
                format!("{source} takes exclusive control of MCP servers"),
            ));
        }
        let lists: Vec<&(Vec<Rule>, String, bool)> = self
            .allowed
            .iter()
            .filter(|(_, _, managed)| *managed || !self.managed_allow_only)
            .collect();
        let admitted = lists
            .iter()
            .any(|(rules, _, _)| rules.iter().any(|a| a.matches(name, endpoint)));
        if lists.is_empty() || admitted {
            return None;
        }
        let sources: Vec<&str> = lists.iter().map(|(_, s, _)| s.as_str()).collect();
        Some(Enablement::Off(
            ReasonCode::DeniedByPolicy,
            format!("not matched by allowedMcpServers in {}", sources.join(", ")),
        ))
    }
}

impl ConfigScanner for ClaudeConfigScanner {
    fn harness(&self) -> &'static str {
        HARNESS
    }

    fn scan(&self, ctx: &ScanContext, out: &mut ScanOutput) {
        let (state_root, settings_root, managed) = roots(ctx);
        let project = ctx.project_root();
        let Settings {
            policy,
            approvals,
            permissions,
            managed_mcp,
            state,
            state_source,
            project_entry,
            misplaced,
            environment,
        } = read_settings(
            ctx,
            out,
            &state_root,
            &settings_root,
            &managed,
            project.as_ref(),
        );
        // Whether the folder's trust dialog was accepted (the exact project's
        // entry: a parent folder's does not count).
        let trust_accepted = project_entry
            .as_ref()
            .and_then(|e| e.get("hasTrustDialogAccepted"))
            .and_then(Value::as_bool)
            == Some(true);
        // Servers turned off for this project with /mcp.
        let toggled_off: Vec<String> = project_entry
            .as_ref()
            .map(|e| string_list(e.get("disabledMcpServers")))
            .unwrap_or_default();

        let decide = |found: &mut FoundServer, entry: &Map<String, Value>, base: Enablement| {
            read_loading(found, entry);
            drop_unread_cwd(found, entry);
            found.settings.extend(environment.iter().cloned());
            decide_server(
                &policy,
                &permissions,
                &toggled_off,
                &state_source,
                found,
                base,
            );
        };

        // Managed, user and local servers: enabled unless policy or a toggle says otherwise.
        let managed_source = managed.source("managed-mcp.json");
        let plain = [
            (
                ConfigScope::Managed,
                &managed_source,
                managed_mcp.as_ref().and_then(|m| m.get("mcpServers")),
            ),
            (
                ConfigScope::User,
                &state_source,
                state.as_ref().and_then(|s| s.get("mcpServers")),
            ),
            (
                ConfigScope::Local,
                &state_source,
                project_entry.as_ref().and_then(|e| e.get("mcpServers")),
            ),
        ];
        scan_plain_servers(ctx, out, plain, &decide);
        scan_misplaced(ctx, out, &misplaced, &state_source);
        if let Some(project) = &project {
            scan_project_servers(
                ctx,
                out,
                project,
                &approvals,
                trust_accepted,
                &state_source,
                &decide,
            );
        }
        // Each installed plugin is read once: its servers, and the plugin,
        // skill and hook rows, come from the same reading.
        let plugins = read_plugins(ctx, out, &settings_root);
        scan_plugins(ctx, out, &plugins, &approvals, &decide);
        scan_capabilities(
            ctx,
            out,
            &settings_root,
            &managed,
            project.as_ref(),
            &approvals,
            &plugins,
        );
    }
}

/// What Claude's settings files say: policy, approvals and permissions,
/// with `managed-mcp.json`, `.claude.json` and the project's entry in it.
struct Settings {
    policy: Policy,
    approvals: Approvals,
    permissions: policy::Permissions,
    managed_mcp: Option<Map<String, Value>>,
    state: Option<Map<String, Value>>,
    state_source: String,
    project_entry: Option<Map<String, Value>>,
    /// `mcpServers` found in settings files, which Claude Code does not
    /// read servers from: each with its scope and file.
    misplaced: Vec<(ConfigScope, String, Value)>,
    /// The switches of Claude Code's tool search, as the process's
    /// environment and every settings file's `env` block leave them
    /// (`env:NAME=MEANING`, written into each server's settings for the
    /// last mile's `Rules::for_entry`).
    environment: Vec<String>,
}

/// The tool search's switches ([`crate::tool_search::SWITCHES`]) as Claude
/// Code starts with them: the process's environment, then each settings
/// file's `env` block over it in the order Claude Code applies them
/// (`~/.claude.json`, user, project, local, managed: see `tool_search`),
/// each kept as its meaning only.
struct Environment(Vec<(&'static str, Option<String>)>);

impl Environment {
    /// The process's own.
    fn of(ctx: &ScanContext) -> Self {
        Environment(
            crate::tool_search::SWITCHES
                .iter()
                .map(|name| {
                    let value = ctx.var_str(name).unwrap_or_default();
                    (*name, crate::tool_search::meaning(name, &value, false))
                })
                .collect(),
        )
    }

    /// A settings document's `env` block over it (a string, or a number
    /// or boolean as JavaScript writes it into the environment).
    fn absorb(&mut self, doc: &Map<String, Value>, managed: bool) {
        let Some(env) = doc.get("env").and_then(Value::as_object) else {
            return;
        };
        for (name, meaning) in &mut self.0 {
            let value = match env.get(*name) {
                Some(Value::String(v)) => v.clone(),
                Some(v @ (Value::Bool(_) | Value::Number(_))) => v.to_string(),
                _ => continue,
            };
            *meaning = crate::tool_search::meaning(name, &value, managed);
        }
    }
}

/// Reads Claude's settings: administrator policy first (it can deny
/// anything else), then user settings, the project's entry in
/// `.claude.json`, project settings and local settings (later files win).
fn read_settings(
    ctx: &ScanContext,
    out: &mut ScanOutput,
    state_root: &ConfigRoot,
    settings_root: &ConfigRoot,
    managed: &ConfigRoot,
    project: Option<&ConfigRoot>,
) -> Settings {
    let managed_docs = read_managed(out, managed);

    // Administrator policy first: it can deny anything else.
    let mut policy = Policy::default();
    for (settings, source) in &managed_docs {
        policy.absorb(settings, source, true);
    }
    let managed_mcp = out.read_json(HARNESS, managed, "managed-mcp.json", false);
    if managed_mcp.is_some() {
        policy.exclusive = Some(managed.source("managed-mcp.json"));
    }

    // Approvals: user settings, then the project's entry in ~/.claude.json,
    // then project settings, then local settings (later files win).
    let mut approvals = Approvals::default();
    let mut permissions = policy::Permissions::default();
    let mut misplaced = Vec::new();
    let user = out.read_json(HARNESS, settings_root, "settings.json", false);
    if let Some(user) = &user {
        let source = settings_root.source("settings.json");
        if let Some(servers) = user.get("mcpServers") {
            misplaced.push((ConfigScope::User, source.clone(), servers.clone()));
        }
        approvals.absorb(user, &source);
        permissions.absorb(user, &source, false);
        policy.absorb(user, &source, false);
    }
    let mut environment = Environment::of(ctx);
    let state_file = ".claude.json";
    let state = out.read_json(HARNESS, state_root, state_file, false);
    if let Some(state) = &state {
        environment.absorb(state, false);
    }
    if let Some(user) = &user {
        environment.absorb(user, false);
    }
    let state_source = state_root.source(state_file);
    // Claude keys projects by absolute path; match through symlinks too.
    let project_entry = state.as_ref().and_then(|s| project_entry(ctx, s));
    if let Some(entry) = &project_entry {
        approvals.absorb(entry, &state_source);
    }
    if let Some(project) = project {
        for (rel, scope) in [
            (".claude/settings.json", ConfigScope::Project),
            (".claude/settings.local.json", ConfigScope::Local),
        ] {
            if let Some(doc) = out.read_json(HARNESS, project, rel, false) {
                if let Some(servers) = doc.get("mcpServers") {
                    misplaced.push((scope, project.source(rel), servers.clone()));
                }
                environment.absorb(&doc, false);
                approvals.absorb(&doc, &project.source(rel));
                permissions.absorb(&doc, &project.source(rel), false);
                policy.absorb(&doc, &project.source(rel), false);
            }
        }
    }
    for (doc, source) in &managed_docs {
        permissions.absorb(doc, source, true);
        environment.absorb(doc, true);
    }
    Settings {
        policy,
        approvals,
        permissions,
        managed_mcp,
        state,
        state_source,
        project_entry,
        misplaced,
        environment: crate::tool_search::settings(&environment.0),
    }
}

/// `mcpServers` in a settings file: Claude Code reads no server from
/// there, silently. Verified on 2.1.197 and 2.1.332: with servers under
/// `mcpServers` in `~/.claude/settings.json`, `.claude/settings.json` and
/// `.claude/settings.local.json`, `claude mcp list` lists none of them,
/// while it lists `~/.claude.json`'s and `.mcp.json`'s
/// (tests/tests/misplaced_config.rs). Each becomes a row that says where
/// Claude Code reads servers.
fn scan_misplaced(
    ctx: &ScanContext,
    out: &mut ScanOutput,
    misplaced: &[(ConfigScope, String, Value)],
    state_source: &str,
) {
    for (scope, source, servers) in misplaced {
        let why = format!(
            "Claude Code does not read mcpServers from {source} (2.1.197 and 2.1.332: `claude mcp list` shows none of them): it reads servers from {state_source} (`claude mcp add`, scopes user and local) and the project's .mcp.json"
        );
        out.add_servers(
            ctx,
            HARNESS,
            scope.clone(),
            source,
            "mcpServers",
            Some(servers),
            crate::DIALECT.entry,
            |found, _| found.enablement = Enablement::Off(ReasonCode::MisplacedKey, why.clone()),
        );
    }
}

/// What decides each found server: its entry's settings, call policy and
/// whether it runs, from the entry and the scope's base enablement.
type Decide<'a> = dyn Fn(&mut FoundServer, &Map<String, Value>, Enablement) + 'a;

/// A server entry's `alwaysLoad` (a boolean, on every transport's entry
/// in every scope: the shared server schema, 2.1.197
/// `rDt=ve(()=>H.object({type:H.literal("stdio")…alwaysLoad:H.boolean().optional()`
/// at byte 226632445 of its `bin/claude.exe`, 2.1.332 `alwaysLoad:M().optional()`
/// at 329488125) as the setting `alwaysLoad=true|false`. With `true` the
/// server's tools are never deferred (2.1.197 at 232496360:
/// `alwaysLoad:e.config.alwaysLoad===!0||h._meta?.["anthropic/alwaysLoad"]===!0`,
/// and `isDeferredTool` at 230587207 returns false for it first; 2.1.332 at
/// 385064776 and 338735613 the same), which the last mile's
/// `Rules::for_entry` applies. With `false`, 2.1.332 defers every tool of
/// the server even where the server marks one up front (`serverDefersAllTools`
/// at 385070940); the per-tool mark (`_meta["anthropic/alwaysLoad"]`) is not
/// known to the scan, so the release's default stands.
fn read_loading(found: &mut FoundServer, entry: &Map<String, Value>) {
    if let Some(load) = entry.get("alwaysLoad").and_then(Value::as_bool) {
        found.settings.push(format!("alwaysLoad={load}"));
    }
}

/// Said where a stdio entry has a `cwd`, which Claude Code does not read.
const CWD_NOT_READ: &str = "`cwd` in its entry is not a key Claude Code reads for a server (it is left out when the entry is read), so the server starts in the folder Claude runs in; start it elsewhere with a wrapper command, e.g. `sh -c 'cd DIR && exec …'`";

/// A stdio entry's `cwd`, which Claude Code's server schema has no key
/// for (2.1.197 `H.object({type:H.literal("stdio").optional(),command:…,
/// args:…,env:…,timeout:…,alwaysLoad:…,role:…})` at byte 226632256 of its
/// `bin/claude.exe`; 2.1.332 the same keys, plus
/// `bareElicitationCapability`, at 329487976): the object schema drops the
/// key, so the server is spawned in Claude's own working folder (a real
/// 2.1.197 run with `"cwd":"/nope/dir"` connected it). The endpoint keeps
/// no `cwd` (a test spawns it as Claude does, and a missing folder is no
/// `cwd_not_found`), and the row notes it.
fn drop_unread_cwd(found: &mut FoundServer, entry: &Map<String, Value>) {
    if let Endpoint::Stdio { cwd, .. } = &mut found.endpoint
        && cwd.take().is_some()
        && entry.contains_key("cwd")
    {
        found.notes.push(RowNote {
            provenance: ProvenanceCode::DocumentedRule,
            reason_code: None,
            text: CWD_NOT_READ.to_owned(),
        });
    }
}

/// A server's call policy, and whether it runs: as policy says (noting
/// that `claude mcp list` differs), off when turned off for the project
/// with /mcp, else `base`.
fn decide_server(
    policy: &Policy,
    permissions: &policy::Permissions,
    toggled_off: &[String],
    state_source: &str,
    found: &mut FoundServer,
    base: Enablement,
) {
    found.call_policy = Some(permissions.predict(&found.name));
    found.enablement = if let Some(verdict) = policy.verdict(found) {
        if policy.exclusive.is_none() {
            found.notes.push(RowNote {
                provenance: ProvenanceCode::DocumentedRule,
                reason_code: Some(ReasonCode::DeniedByPolicy),
                text: LIST_DIFFERS.to_owned(),
            });
        }
        verdict
    } else if toggled_off.contains(&found.name) {
        Enablement::Off(
            ReasonCode::DisabledInConfig,
            format!("turned off for this project (disabledMcpServers in {state_source})"),
        )
    } else {
        base
    };
}

/// Managed, user and local servers (scope, shown source, `mcpServers`):
/// enabled unless policy or a toggle says otherwise.
fn scan_plain_servers(
    ctx: &ScanContext,
    out: &mut ScanOutput,
    plain: [(ConfigScope, &String, Option<&Value>); 3],
    decide: &Decide<'_>,
) {
    for (scope, source, servers) in plain {
        out.add_servers(
            ctx,
            HARNESS,
            scope,
            source,
            "mcpServers",
            servers,
            crate::DIALECT.entry,
            |found, entry| decide(found, entry, Enablement::Enabled),
        );
    }
}

/// Claude's roots: where `.claude.json` is, where its settings folder is
/// (CLAUDE_CONFIG_DIR moves both), and the managed policy folder.
fn roots(ctx: &ScanContext) -> (ConfigRoot, ConfigRoot, ConfigRoot) {
    let home = ctx.home_root();
    // CLAUDE_CONFIG_DIR moves both ~/.claude.json and ~/.claude/.
    let (state_root, settings_root) = match ctx.var("CLAUDE_CONFIG_DIR") {
        Some(_) => {
            let dir = ctx.env_dir("CLAUDE_CONFIG_DIR", ".claude");
            (dir.clone(), dir)
        }
        None => (home.clone(), home.join(".claude")),
    };
    // CLAUDE_CODE_MANAGED_SETTINGS_PATH names the policy folder instead.
    let managed = match ctx.var(MANAGED_VAR) {
        Some(_) => ctx.env_dir(MANAGED_VAR, ""),
        None => ctx.system_dir("/etc/claude-code"),
    };
    (state_root, settings_root, managed)
}

/// The project's entry in `.claude.json`. Claude keys projects by absolute
/// path; matched through symlinks too.
fn project_entry(ctx: &ScanContext, state: &Map<String, Value>) -> Option<Map<String, Value>> {
    let projects = state.get("projects")?.as_object()?;
    let exact = ctx.project.as_ref()?.to_str()?;
    projects
        .get(exact)
        .or_else(|| {
            projects
                .iter()
                .find(|(key, _)| ctx.is_project(key))
                .map(|(_, v)| v)
        })?
        .as_object()
        .cloned()
}

/// The project's `.mcp.json` servers: each as approved, and waiting while
/// the folder's trust dialog was never accepted.
fn scan_project_servers(
    ctx: &ScanContext,
    out: &mut ScanOutput,
    project: &ConfigRoot,
    approvals: &Approvals,
    trust_accepted: bool,
    state_source: &str,
    decide: &Decide<'_>,
) {
    let Some(doc) = out.read_json(HARNESS, project, ".mcp.json", false) else {
        return;
    };
    let source = project.source(".mcp.json");
    out.add_servers(
        ctx,
        HARNESS,
        ConfigScope::Project,
        &source,
        "mcpServers",
        doc.get("mcpServers"),
        crate::DIALECT.entry,
        |found, entry| {
            let mut base = approvals.project_server(&found.name);
            // Verified on 2.1.197 and 2.1.332 (`claude mcp list`):
            // until the folder's trust dialog is accepted, every
            // .mcp.json server waits, approved or not.
            if matches!(base, Enablement::Enabled) && !trust_accepted {
                base = Enablement::Off(
                    ReasonCode::UntrustedFolder,
                    format!(
                        "waits for approval: the folder's trust dialog was never accepted (hasTrustDialogAccepted in {state_source}), so Claude asks before using any .mcp.json server"
                    ),
                );
            }
            decide(found, entry, base)
        },
    );
    let defined: Vec<&str> = doc
        .get("mcpServers")
        .and_then(Value::as_object)
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    approvals.unmatched(out, &defined, state_source);
}

/// The variable that names the managed settings folder.
const MANAGED_VAR: &str = "CLAUDE_CODE_MANAGED_SETTINGS_PATH";

/// Why `claude mcp list` shows a server policy denies (anthropics/claude-code#95020).
const LIST_DIFFERS: &str = "`claude mcp list` still lists and connects this server: it does not apply allowedMcpServers or deniedMcpServers (anthropics/claude-code#95020), while sessions do; Tether shows what sessions do";

/// Managed settings: `managed-settings.json`, then each
/// `managed-settings.d/*.json` in name order, with their shown sources.
fn read_managed(out: &mut ScanOutput, managed: &ConfigRoot) -> Vec<(Map<String, Value>, String)> {
    let mut docs = Vec::new();
    let drop_ins = managed.find_files_where("managed-settings.d", 0, |n| n.ends_with(".json"));
    for rel in std::iter::once("managed-settings.json".to_owned()).chain(drop_ins) {
        if let Some(doc) = out.read_json(HARNESS, managed, &rel, false) {
            docs.push((doc, managed.source(&rel)));
        }
    }
    docs
}

/// A note for a tool-event hook whose matcher names a server alone.
fn matcher_note(hooks: Option<&Value>, entry: &tether_inventory::HookEntry) -> Option<RowNote> {
    if !policy::TOOL_EVENTS.contains(&entry.event.as_str()) {
        return None;
    }
    let matcher = hooks?
        .get(&entry.event)?
        .get(entry.group)?
        .get("matcher")?
        .as_str()?;
    let bare = policy::bare_server_matcher(matcher)?;
    Some(RowNote {
        provenance: ProvenanceCode::DocumentedRule,
        reason_code: None,
        text: format!(
            "its matcher's {bare} never matches: Claude compares a matcher of plain names as exact tool names, and tools are named {bare}__TOOL (write {bare}__.* for every tool of the server)"
        ),
    })
}

/// Plugins, skills and hooks: one row each, with what a plugin bundles
/// linked to it. Settings hooks run from the workspace's working directory
/// (Claude gives them `$CLAUDE_PROJECT_DIR`); a plugin's hooks, from its
/// root (`${CLAUDE_PLUGIN_ROOT}` expands there, and nowhere else).
fn scan_capabilities(
    ctx: &ScanContext,
    out: &mut ScanOutput,
    settings_root: &ConfigRoot,
    managed: &ConfigRoot,
    project: Option<&ConfigRoot>,
    approvals: &Approvals,
    plugins: &[InstalledPlugin],
) {
    let project_dir = ctx
        .project
        .as_ref()
        .map(|p| ("CLAUDE_PROJECT_DIR".to_owned(), p.display().to_string()));
    scan_settings_hooks(ctx, out, settings_root, managed, project, &project_dir);
    scan_skills(ctx, out, settings_root, project);
    // Installed plugins, with what they bundle.
    let mut installed_keys = Vec::new();
    for installed in plugins {
        installed_keys.push(scan_installed_plugin(
            ctx,
            out,
            installed,
            approvals,
            &project_dir,
        ));
    }
    // Enabled in settings, but not installed.
    for (key, (on, source)) in &approvals.plugins {
        if *on && !installed_keys.iter().any(|k| k == key) {
            let mut row = FoundCapability::new(
                CapabilityKind::Plugin,
                HARNESS,
                ConfigScope::Plugin,
                key,
                source.clone(),
            );
            row.installed = Installed::No(None);
            out.push_capability(ctx, row);
        }
    }
}

/// Settings hooks, in every file Claude reads them from.
fn scan_settings_hooks(
    ctx: &ScanContext,
    out: &mut ScanOutput,
    settings_root: &ConfigRoot,
    managed: &ConfigRoot,
    project: Option<&ConfigRoot>,
    project_dir: &Option<(String, String)>,
) {
    let mut files = vec![
        (
            ConfigScope::Managed,
            managed.clone(),
            "managed-settings.json",
        ),
        (ConfigScope::User, settings_root.clone(), "settings.json"),
    ];
    if let Some(project) = project {
        files.push((
            ConfigScope::Project,
            project.clone(),
            ".claude/settings.json",
        ));
        files.push((
            ConfigScope::Local,
            project.clone(),
            ".claude/settings.local.json",
        ));
    }
    for (scope, root, rel) in files {
        let Some(doc) = out.read_json(HARNESS, &root, rel, false) else {
            continue;
        };
        let source = root.source(rel);
        let off = doc
            .get("disableAllHooks")
            .and_then(Value::as_bool)
            .unwrap_or(false)
            .then(|| format!("disableAllHooks is true in {source}"));
        for entry in hook_entries(doc.get("hooks"), "") {
            let mut found = FoundCapability::new(
                CapabilityKind::Hook,
                HARNESS,
                scope.clone(),
                &entry.name,
                source.clone(),
            );
            found.notes.extend(matcher_note(doc.get("hooks"), &entry));
            found.command = Some(FoundCommand {
                line: entry.line,
                base: ResolvesAgainst::WorkspaceCwd,
                root: None,
                expands: project_dir.iter().cloned().collect(),
            });
            if let Some(why) = &off {
                found.enablement = Enablement::Off(ReasonCode::DisabledInConfig, why.clone());
            }
            out.push_capability(ctx, found);
        }
    }
}

/// User and project skills.
fn scan_skills(
    ctx: &ScanContext,
    out: &mut ScanOutput,
    settings_root: &ConfigRoot,
    project: Option<&ConfigRoot>,
) {
    let mut skill_roots = vec![(
        ConfigScope::User,
        settings_root.clone(),
        "skills".to_owned(),
    )];
    if let Some(project) = project {
        skill_roots.push((
            ConfigScope::Project,
            project.clone(),
            ".claude/skills".to_owned(),
        ));
    }
    for (scope, root, dir) in skill_roots {
        for (name, source) in skills_under(&root, &dir) {
            let found =
                FoundCapability::new(CapabilityKind::Skill, HARNESS, scope.clone(), &name, source);
            out.push_capability(ctx, found);
        }
    }
}

/// One installed plugin's row, with its bundled servers, skills and hooks
/// linked to it; returns its `name@marketplace` key.
fn scan_installed_plugin(
    ctx: &ScanContext,
    out: &mut ScanOutput,
    installed: &InstalledPlugin,
    approvals: &Approvals,
    project_dir: &Option<(String, String)>,
) -> String {
    let (plugin_root, plugin) = (&installed.root, &installed.name);
    let switch = installed.switch().to_owned();
    let enablement = approvals.plugin(&switch);
    let mut row = FoundCapability::new(
        CapabilityKind::Plugin,
        HARNESS,
        ConfigScope::Plugin,
        &switch,
        plugin_root.source(MANIFEST),
    );
    row.installed = Installed::Yes;
    row.enablement = enablement.clone();
    if let Some(version) = installed.doc.get("version").and_then(Value::as_str) {
        row.settings.push(format!("version={version}"));
    }
    // Its servers have rows of their own (scan_plugins), named as Claude shows them.
    let servers = installed.servers.iter().flat_map(|(map, _)| map.keys());
    for server in servers {
        row.links.push(CapabilityLink {
            kind: CapabilityKind::McpServer,
            name: format!("plugin:{plugin}:{server}"),
        });
    }
    let skills = out.push_bundled_skills(ctx, HARNESS, plugin_root, "skills", plugin, &enablement);
    row.links.extend(skills);
    scan_plugin_hooks(
        ctx,
        out,
        installed,
        &enablement,
        project_dir,
        &mut row.links,
    );
    out.push_capability(ctx, row);
    switch
}

/// A plugin's hooks (`hooks/hooks.json`): a row each, run from the plugin's
/// root, each linked in `links`.
fn scan_plugin_hooks(
    ctx: &ScanContext,
    out: &mut ScanOutput,
    installed: &InstalledPlugin,
    enablement: &Enablement,
    project_dir: &Option<(String, String)>,
    links: &mut Vec<CapabilityLink>,
) {
    let (plugin_root, plugin) = (&installed.root, &installed.name);
    let hooks_file = "hooks/hooks.json";
    let Some(hooks) = out.read_json(HARNESS, plugin_root, hooks_file, false) else {
        return;
    };
    let root_dir = plugin_root.dir().to_path_buf();
    for entry in hook_entries(hooks.get("hooks"), &format!("{plugin}:")) {
        let (name, line) = (entry.name.clone(), entry.line.clone());
        links.push(CapabilityLink {
            kind: CapabilityKind::Hook,
            name: name.clone(),
        });
        let mut found = FoundCapability::new(
            CapabilityKind::Hook,
            HARNESS,
            ConfigScope::Plugin,
            &name,
            plugin_root.source(hooks_file),
        );
        found.enablement = enablement.clone();
        found.notes.extend(matcher_note(hooks.get("hooks"), &entry));
        found.command = Some(FoundCommand {
            line,
            base: ResolvesAgainst::PluginRoot,
            root: Some(root_dir.clone()),
            expands: vec![(
                "CLAUDE_PLUGIN_ROOT".to_owned(),
                root_dir.display().to_string(),
            )]
            .into_iter()
            .chain(project_dir.iter().cloned())
            .collect(),
        });
        out.push_capability(ctx, found);
    }
}

/// The installed plugins: from `plugins/installed_plugins.json` (user-scope
/// installs, and project/local installs for this project), or, without it,
/// every plugin under `plugins/cache/`. A marketplace's catalog is not an
/// install, so it is never read. Returns (directory under the settings root,
/// `name@marketplace` key when known).
fn installed_plugins(
    ctx: &ScanContext,
    out: &mut ScanOutput,
    settings_root: &ConfigRoot,
) -> Vec<(String, Option<String>)> {
    let registry = "plugins/installed_plugins.json";
    let Some(doc) = out.read_json(HARNESS, settings_root, registry, false) else {
        return settings_root
            .find_files("plugins/cache", &["plugin.json"], 6)
            .into_iter()
            .filter_map(|m| {
                m.strip_suffix("/.claude-plugin/plugin.json")
                    .map(str::to_owned)
            })
            .map(|dir| (dir, None))
            .collect();
    };
    let root = std::fs::canonicalize(settings_root.dir()).unwrap_or_default();
    let mut dirs = Vec::new();
    let plugins = doc.get("plugins").and_then(Value::as_object);
    for (key, installs) in plugins.into_iter().flatten() {
        let installs = match installs {
            Value::Array(list) => list.clone(),
            single @ Value::Object(_) => vec![single.clone()],
            _ => continue,
        };
        for install in installs {
            let scope = install
                .get("scope")
                .and_then(Value::as_str)
                .unwrap_or("user");
            let here = match install.get("projectPath").and_then(Value::as_str) {
                Some(path) => ctx.is_project(path),
                None => scope == "user",
            };
            let Some(path) = install.get("installPath").and_then(Value::as_str) else {
                continue;
            };
            if !here {
                continue;
            }
            match ctx.resolve_written_path(path).strip_prefix(&root) {
                Ok(rel) => dirs.push((rel.to_string_lossy().into_owned(), Some(key.clone()))),
                Err(_) => out.error(
                    HARNESS,
                    settings_root.source(registry),
                    ReasonCode::SymlinkOutsideRoot,
                    &format!(
                        "plugin {key} is installed outside {}; not read",
                        settings_root.source("")
                    ),
                ),
            }
        }
    }
    dirs
}

/// A plugin's manifest, under its directory.
const MANIFEST: &str = ".claude-plugin/plugin.json";

/// One installed plugin, read once: its manifest, its name, and the servers
/// it bundles with the file they came from.
struct InstalledPlugin {
    root: ConfigRoot,
    key: Option<String>,
    name: String,
    doc: Map<String, Value>,
    servers: Option<(Map<String, Value>, String)>,
}

impl InstalledPlugin {
    /// What `enabledPlugins` keys it by: `name@marketplace`, else its name.
    fn switch(&self) -> &str {
        self.key.as_deref().unwrap_or(&self.name)
    }
}

/// Every installed plugin (see [`installed_plugins`]), its manifest and its
/// servers read once.
fn read_plugins(
    ctx: &ScanContext,
    out: &mut ScanOutput,
    settings_root: &ConfigRoot,
) -> Vec<InstalledPlugin> {
    let mut plugins = Vec::new();
    for (plugin_dir, key) in installed_plugins(ctx, out, settings_root) {
        let root = settings_root.join(&plugin_dir);
        let doc = out
            .read_json(HARNESS, &root, MANIFEST, false)
            .unwrap_or_default();
        let fallback = key
            .as_deref()
            .and_then(|k| k.split('@').next())
            .unwrap_or_else(|| plugin_dir.rsplit('/').next().unwrap_or(&plugin_dir));
        let name = doc
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or(fallback)
            .to_owned();
        // Where its servers are: inline in plugin.json, a file it names, or .mcp.json.
        let (servers, source) = match doc.get("mcpServers") {
            Some(Value::Object(inline)) => {
                (Some(Value::Object(inline.clone())), root.source(MANIFEST))
            }
            Some(Value::String(rel)) => {
                let rel = rel.trim_start_matches("./");
                let file = out.read_json(HARNESS, &root, rel, false);
                (file.map(unwrap_servers), root.source(rel))
            }
            _ => {
                let file = out.read_json(HARNESS, &root, ".mcp.json", false);
                (file.map(unwrap_servers), root.source(".mcp.json"))
            }
        };
        let servers = match servers {
            Some(Value::Object(map)) => Some((map, source)),
            _ => None,
        };
        plugins.push(InstalledPlugin {
            root,
            key,
            name,
            doc,
            servers,
        });
    }
    plugins
}

/// Plugin-bundled servers: one row per (plugin, server), named
/// `plugin:<plugin>:<server>` as Claude shows them.
fn scan_plugins(
    ctx: &ScanContext,
    out: &mut ScanOutput,
    plugins: &[InstalledPlugin],
    approvals: &Approvals,
    decide: &Decide<'_>,
) {
    let mut seen = std::collections::BTreeSet::new();
    for installed in plugins {
        let Some((map, source)) = &installed.servers else {
            continue;
        };
        let plugin = &installed.name;
        let fresh: Map<String, Value> = map
            .iter()
            .filter(|(name, _)| seen.insert(format!("plugin:{plugin}:{name}")))
            .map(|(name, entry)| (format!("plugin:{plugin}:{name}"), entry.clone()))
            .collect();
        // Claude expands ${CLAUDE_PLUGIN_ROOT} to the plugin's directory.
        let root_dir = installed.root.dir().to_string_lossy().into_owned();
        let fresh = substitute(&Value::Object(fresh), "${CLAUDE_PLUGIN_ROOT}", &root_dir);
        let switch = installed.switch();
        out.add_servers(
            ctx,
            HARNESS,
            ConfigScope::Plugin,
            source,
            "mcpServers",
            Some(&fresh),
            crate::DIALECT.entry,
            |found, entry| decide(found, entry, approvals.plugin(switch)),
        );
    }
}

/// `{"mcpServers": {…}}` or the bare `{name: entry}` map.
fn unwrap_servers(doc: Map<String, Value>) -> Value {
    match doc.get("mcpServers") {
        Some(inner @ Value::Object(_)) => inner.clone(),
        _ => Value::Object(doc),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_rules_match_names_command_lines_and_url_patterns() {
        let stdio = Endpoint::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "srv".into()],
            env: vec![],
            cwd: None,
        };
        let http = Endpoint::Http {
            url: "https://mcp.corp.example.com/v1/mcp".into(),
            headers: vec![],
        };
        assert!(Rule::Name("a".into()).matches("a", &stdio));
        assert!(Rule::Command(vec!["npx".into(), "-y".into(), "srv".into()]).matches("x", &stdio));
        assert!(!Rule::Command(vec!["npx".into()]).matches("x", &stdio));
        assert!(Rule::Url("https://*.corp.example.com/*".into()).matches("x", &http));
        assert!(!Rule::Url("https://*.other.com/*".into()).matches("x", &http));
        assert!(!Rule::Url("https://*".into()).matches("x", &stdio));
        assert!(wildcard("a*b*c", "aXXbYYc") && !wildcard("a*b*c", "aXXcYYb"));
        assert!(wildcard("*", "") && wildcard("exact", "exact") && !wildcard("exact", "exactly"));
    }
}
