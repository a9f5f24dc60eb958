//! Gemini CLI and Qwen Code (a Gemini CLI fork with `.qwen/` for `.gemini/`,
//! `/etc/qwen-code` for `/etc/gemini-cli` and `qwen-extension.json` beside
//! `gemini-extension.json`).
//!
//! Gemini CLI: `mcpServers` in `~/.gemini/settings.json` (scope user),
//! `<project>/.gemini/settings.json` (scope project) and
//! `/etc/gemini-cli/settings.json` / `system-defaults.json` (scope system).
//! Entries have `command` (stdio), `url` (legacy SSE) or `httpUrl`
//! (streamable HTTP), and `includeTools`, `excludeTools`, `trust`, `timeout`.
//! The global lists `mcp.allowed` and `mcp.excluded` (older:
//! `allowMCPServers`, `excludeMCPServers`) hold servers back. With folder
//! trust on (`security.folderTrust.enabled`, older `folderTrust`), a project
//! that `~/.gemini/trustedFolders.json` does not trust has its settings
//! ignored, servers included. Extensions bring servers too (scope plugin):
//! `mcpServers` in `~/.gemini/extensions/<ext>/gemini-extension.json`, off
//! for a folder when `extension-enablement.json` says so.

use std::path::Path;

use crate::policy;

use serde_json::{Map, Value};
use tether_core::inventory::CapabilityLink;
use tether_core::vocab::{CapabilityKind, ConfigScope, ReasonCode, ResolvesAgainst};
use tether_inventory::{
    ConfigRoot, ConfigScanner, Enablement, EntryDialect, FoundCapability, FoundCommand,
    FoundServer, Installed, ScanContext, ScanOutput, hook_commands, string_list, substitute,
};

/// Where one member of the Gemini CLI family keeps its configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Family {
    /// The harness name in inventory rows.
    pub harness: &'static str,
    /// The configuration directory under the home and the project.
    pub dir: &'static str,
    /// The system settings directory.
    pub system_dir: &'static str,
    /// Extension manifests read, in order.
    pub extension_manifests: &'static [&'static str],
    /// Folder trust's default when no user or system setting names it
    /// (`security.folderTrust.enabled ?? …` in the CLI's own code).
    pub trust_by_default: bool,
    /// The environment variable that trusts (`true`) or distrusts
    /// (`false`) the workspace over every file, if the CLI has one.
    pub trust_env: Option<&'static str>,
    /// A variable that, `true`, distrusts the workspace before `trust_env`
    /// is read, if the CLI has one.
    pub restricted_env: Option<&'static str>,
    /// An untrusted folder disables every MCP server, the user's and the
    /// system's too, not only the project's settings.
    pub untrusted_disables_all: bool,
    /// The project's servers wait for an approval stored in this file under
    /// the home's configuration directory (Qwen Code 0.24:
    /// `mcpApprovals.json`, `{project: {server: {hash, status}}}`).
    pub project_approvals: Option<&'static str>,
    /// A variable that names the approvals file instead, if the CLI has one.
    pub approvals_env: Option<&'static str>,
    /// The project's Claude-style `.mcp.json` adds servers (scope project,
    /// read in any folder, each waiting for its approval), below the
    /// project's own settings and above the user's.
    pub project_mcp_json: bool,
}

/// Gemini CLI.
pub const GEMINI: Family = Family {
    harness: "gemini",
    dir: ".gemini",
    system_dir: "/etc/gemini-cli",
    extension_manifests: &["gemini-extension.json"],
    // Verified on 0.61.0: `folderTrust?.enabled ?? true`, a folder no rule
    // names is untrusted (`isTrusted ?? false`), `GEMINI_CLI_TRUST_WORKSPACE`
    // (and `GEMINI_RESTRICTED_MODE=true`) decide first, and `gemini mcp
    // list` says user-level servers are suppressed in an untrusted folder.
    trust_by_default: true,
    trust_env: Some("GEMINI_CLI_TRUST_WORKSPACE"),
    restricted_env: Some("GEMINI_RESTRICTED_MODE"),
    untrusted_disables_all: true,
    project_approvals: None,
    approvals_env: None,
    project_mcp_json: false,
};

/// Qwen Code.
pub const QWEN: Family = Family {
    harness: "qwen",
    dir: ".qwen",
    system_dir: "/etc/qwen-code",
    extension_manifests: &["qwen-extension.json", "gemini-extension.json"],
    // Verified on 0.15.10 and 0.24.4: `folderTrust?.enabled ?? false`, no
    // environment override, and only the project's settings are dropped.
    // Read as 0.24.4 reads it: a folder no rule names is untrusted (0.15
    // trusted it), and a project's servers wait for an approval in
    // `~/.qwen/mcpApprovals.json` (0.15 had none); see tests/tests/agreement.rs.
    trust_by_default: false,
    trust_env: None,
    restricted_env: None,
    untrusted_disables_all: false,
    // 0.24.4: a decision binds the entry's hash (`hashMcpServerConfig`), so
    // an entry edited since reads pending again; `.mcp.json` is read even
    // in an untrusted folder (its servers still wait for approval).
    project_approvals: Some("mcpApprovals.json"),
    approvals_env: Some("QWEN_CODE_MCP_APPROVALS_PATH"),
    project_mcp_json: true,
};

/// Scans one family member's configuration.
#[derive(Debug, Clone, Copy)]
pub struct GeminiConfigScanner(pub Family);

tether_inventory::register_scanner!(GeminiConfigScanner(GEMINI));
tether_inventory::register_scanner!(GeminiConfigScanner(QWEN));

struct Settings {
    scope: ConfigScope,
    source: String,
    doc: Map<String, Value>,
}

fn nested<'a>(doc: &'a Map<String, Value>, path: &[&str]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    rest.iter().try_fold(doc.get(*first)?, |v, key| v.get(*key))
}

fn folder_trust_on(doc: &Map<String, Value>) -> Option<bool> {
    nested(doc, &["security", "folderTrust", "enabled"])
        .or_else(|| doc.get("folderTrust"))
        .or_else(|| doc.get("folderTrustFeature"))
        .and_then(Value::as_bool)
}

/// Whether `trustedFolders.json` trusts the project: the most specific rule wins.
fn trusted(ctx: &ScanContext, rules: &Map<String, Value>, project: &Path) -> Option<bool> {
    let mut best: Option<(usize, bool)> = None;
    for (path, level) in rules {
        let path = ctx.resolve_written_path(path);
        let (dir, trust) = match level.as_str() {
            Some("TRUST_FOLDER") => (path.as_path(), true),
            Some("TRUST_PARENT") => (path.parent().unwrap_or(&path), true),
            Some("DO_NOT_TRUST") => (path.as_path(), false),
            _ => continue,
        };
        if project.starts_with(dir) {
            let depth = dir.components().count();
            if best.is_none_or(|(d, _)| depth >= d) {
                best = Some((depth, trust));
            }
        }
    }
    best.map(|(_, trust)| trust)
}

impl ConfigScanner for GeminiConfigScanner {
    fn harness(&self) -> &'static str {
        self.0.harness
    }

    fn scan(&self, ctx: &ScanContext, out: &mut ScanOutput) {
        let family = self.0;
        let harness = family.harness;
        let home = ctx.home_root().join(family.dir);
        let project = ctx.project_root();
        let (settings, refused) = read_settings(ctx, out, family, &home, project.as_ref());
        let project_untrusted = untrusted_reason(ctx, out, family, &home, &settings);
        let effective: Vec<&Settings> = settings
            .iter()
            .filter(|s| s.scope != ConfigScope::Project || project_untrusted.is_none())
            .collect();
        let lists = Lists::from_settings(&effective);
        let files: Vec<(&Map<String, Value>, &str)> = effective
            .iter()
            .map(|s| (&s.doc, s.source.as_str()))
            .collect();
        let calls = policy::CallRules::read(harness == QWEN.harness, &files);
        let folder_trusted = project_untrusted.is_none();
        let approvals = ProjectApprovals::read(ctx, out, family, &home);
        for s in &settings {
            let ignored = project_untrusted.is_some()
                && (s.scope == ConfigScope::Project || family.untrusted_disables_all);
            out.add_servers(
                ctx,
                harness,
                s.scope.clone(),
                &s.source,
                "mcpServers",
                s.doc.get("mcpServers"),
                crate::DIALECT.entry,
                |found, entry| {
                    lists.apply(found, entry);
                    found.call_policy = Some(predict(&calls, found, entry, folder_trusted));
                    if let Some(why) = &refused {
                        found.enablement = Enablement::Off(ReasonCode::FileRefused, why.clone());
                    } else if let (true, Some(why)) = (ignored, &project_untrusted) {
                        found.enablement =
                            Enablement::Off(ReasonCode::UntrustedFolder, why.clone());
                    } else if s.scope == ConfigScope::Project
                        && matches!(found.enablement, Enablement::Enabled)
                        && let Some(wait) = approvals.check(&found.name, entry)
                    {
                        found.enablement = wait;
                    }
                },
            );
        }
        if let (true, Some(project)) = (family.project_mcp_json, &project)
            && let Some(doc) = out.read_json(harness, project, ".mcp.json", true)
        {
            out.add_servers(
                ctx,
                harness,
                ConfigScope::Project,
                &project.source(".mcp.json"),
                "mcpServers",
                doc.get("mcpServers"),
                EntryDialect::McpJson,
                |found, entry| {
                    lists.apply(found, entry);
                    found.call_policy = Some(predict(&calls, found, entry, folder_trusted));
                    if let Some(why) = &refused {
                        found.enablement = Enablement::Off(ReasonCode::FileRefused, why.clone());
                    } else if matches!(found.enablement, Enablement::Enabled)
                        && let Some(wait) = approvals.check(&found.name, &qwen_normalized(entry))
                    {
                        found.enablement = wait;
                    }
                },
            );
        }
        let hooks_off = scan_settings_hooks(
            ctx,
            out,
            harness,
            &settings,
            &project_untrusted,
            refused.as_deref(),
        );
        let all_off = project_untrusted
            .as_deref()
            .filter(|_| family.untrusted_disables_all);
        let context = ExtensionContext {
            lists: &lists,
            calls: &calls,
            folder_trusted,
            hooks_off: hooks_off.as_deref(),
            untrusted: all_off,
            refused: refused.as_deref(),
        };
        scan_extensions(ctx, out, family, &home, &context);
    }
}

/// What an extension's servers and hooks are judged by.
struct ExtensionContext<'a> {
    lists: &'a Lists,
    calls: &'a policy::CallRules,
    folder_trusted: bool,
    hooks_off: Option<&'a str>,
    untrusted: Option<&'a str>,
    /// Why the CLI does not start at all (a settings file it refuses):
    /// then no extension loads either (Gemini CLI 0.61.0 exits 52 before
    /// it reads one: `gemini -p`, `gemini extensions list` and `gemini mcp
    /// list` alike, `tests/tests/misplaced_config.rs`).
    refused: Option<&'a str>,
}

/// A server's call policy: the settings' rules, and its entry's `trust`.
fn predict(
    calls: &policy::CallRules,
    found: &FoundServer,
    entry: &Map<String, Value>,
    folder_trusted: bool,
) -> tether_core::inventory::CallPolicy {
    let trust = entry.get("trust").and_then(Value::as_bool) == Some(true);
    calls.predict(&found.name, trust, folder_trusted, &found.source)
}

/// The settings files, in precedence order, lowest first (system settings
/// override everything): system defaults, user, project, system.
/// `GEMINI_CLI_SYSTEM_DEFAULTS_PATH` and `GEMINI_CLI_SYSTEM_SETTINGS_PATH`
/// name Gemini CLI's system files instead (verified on 0.61.0). Each is
/// read as the CLI reads it (`JSON.parse(stripJsonComments(…))`): one that
/// does not parse is refused as the CLI refuses it ([`refusal`]), and when
/// that stops the CLI from starting, the second value says why, for every
/// server row.
fn read_settings(
    ctx: &ScanContext,
    out: &mut ScanOutput,
    family: Family,
    home: &ConfigRoot,
    project: Option<&ConfigRoot>,
) -> (Vec<Settings>, Option<String>) {
    let system = ctx.system_dir(family.system_dir);
    let named = |var: &str, file: &str| -> (ConfigRoot, String) {
        let own = (family.harness == GEMINI.harness)
            .then(|| ctx.var_str(var))
            .flatten()
            .and_then(|path| ConfigRoot::named_file(Path::new(&path), var));
        own.unwrap_or_else(|| (system.clone(), file.to_owned()))
    };
    let project_settings = format!("{}/settings.json", family.dir);
    let (defaults_root, defaults_rel) =
        named("GEMINI_CLI_SYSTEM_DEFAULTS_PATH", "system-defaults.json");
    let (system_root, system_rel) = named("GEMINI_CLI_SYSTEM_SETTINGS_PATH", "settings.json");
    let mut files: Vec<(ConfigRoot, String, ConfigScope)> = vec![
        (defaults_root, defaults_rel, ConfigScope::System),
        (home.clone(), "settings.json".to_owned(), ConfigScope::User),
    ];
    if let Some(project) = project {
        files.push((project.clone(), project_settings, ConfigScope::Project));
    }
    files.push((system_root, system_rel, ConfigScope::System));
    let mut settings = Vec::new();
    let mut refused = None;
    for (root, rel, scope) in files {
        match out.read_json_commented(family.harness, &root, &rel) {
            Ok(Some(doc)) => settings.push(Settings {
                scope,
                source: root.source(&rel),
                doc,
            }),
            Ok(None) => {}
            Err(stop) => {
                let (summary, stops_start) = refusal(family, &scope, &stop);
                out.error(
                    family.harness,
                    root.source(&rel),
                    ReasonCode::FileRefused,
                    &summary,
                );
                if stops_start {
                    refused.get_or_insert_with(|| {
                        format!(
                            "{} does not start while {} does not parse (see its error entry)",
                            family.harness,
                            root.source(&rel)
                        )
                    });
                }
            }
        }
    }
    (settings, refused)
}

/// How the CLI treats a settings file that does not parse (`stop`: where
/// its `JSON.parse` stops), in its own words from its shipped code, and
/// whether it then refuses to start. Gemini CLI 0.61.0 (`_doLoadSettings`)
/// throws `FatalConfigError` for any of them and exits 52. Qwen Code
/// 0.24.4 reads the system and user files for its sandbox policy first
/// and throws on them (`readOperatorSandboxSettings`); it copies a
/// project's file to `settings.json.corrupted`, writes `{}` in its place
/// and starts without it; 0.15.10 renames any of them to
/// `settings.json.corrupted.<time>` and starts without it. Seen on a run
/// of each (tests/tests/misplaced_config.rs).
fn refusal(family: Family, scope: &ConfigScope, stop: &str) -> (String, bool) {
    let parse = format!("it strips comments, but its JSON.parse stops at {stop}");
    if family.harness == GEMINI.harness {
        return (
            format!(
                "Gemini CLI refuses to start on this file (0.61.0: \"Error in <this file>: … Please fix the configuration file(s) and try again.\", exit 52): {parse}"
            ),
            true,
        );
    }
    if *scope == ConfigScope::Project {
        return (
            format!(
                "Qwen Code sets this file aside and starts without it (0.24.4: \"Settings file <this file> has invalid JSON. Your settings have been reset.\", and it writes {{}} in its place; 0.15.10 renames it to settings.json.corrupted.<time>): {parse}"
            ),
            false,
        );
    }
    (
        format!(
            "Qwen Code refuses to start on this file (0.24.4: \"Cannot read operator sandbox policy from <this file>: SyntaxError: …\"; 0.15.10 renames it to settings.json.corrupted.<time> and starts without its settings): {parse}"
        ),
        true,
    )
}

/// Why the project's folder is untrusted, as the CLI decides it: its
/// environment first, then whether trust is on (only user and system
/// settings can say; the family's default otherwise), then
/// trustedFolders.json. `None` when it is trusted (or no project).
fn untrusted_reason(
    ctx: &ScanContext,
    out: &mut ScanOutput,
    family: Family,
    home: &ConfigRoot,
    settings: &[Settings],
) -> Option<String> {
    let env = |name: &str| ctx.var_str(name);
    let trust_setting = settings
        .iter()
        .filter(|s| s.scope != ConfigScope::Project)
        .filter_map(|s| folder_trust_on(&s.doc).map(|on| (on, s.source.clone())))
        .next_back();
    let trust_on = trust_setting
        .as_ref()
        .map_or(family.trust_by_default, |(on, _)| *on);
    let how_on = match &trust_setting {
        Some((_, source)) => format!("folder trust is on in {source}"),
        None => "folder trust is on by default".to_owned(),
    };
    let rules_source = home.source("trustedFolders.json");
    // `Some(Some(why))`: the environment distrusts the folder;
    // `Some(None)`: it trusts it; `None`: it says nothing.
    let restricted = family
        .restricted_env
        .filter(|var| env(var).as_deref() == Some("true"));
    let untrusted_by_env = match restricted {
        Some(var) => Some(Some(format!("{var}=true"))),
        None => family.trust_env.and_then(|var| match env(var).as_deref() {
            Some("false") => Some(Some(format!("{var}=false"))),
            Some("true") => Some(None),
            _ => None,
        }),
    };
    let why = match (&ctx.project, untrusted_by_env, trust_on) {
        (Some(_), Some(verdict), _) => verdict.map(|why| format!("{why} distrusts the folder")),
        (Some(dir), None, true) => {
            let rules = out.read_json(family.harness, home, "trustedFolders.json", true);
            match rules.as_ref().and_then(|r| trusted(ctx, r, dir)) {
                Some(true) => None,
                Some(false) => Some(format!(
                    "{how_on} and {rules_source} marks the project DO_NOT_TRUST"
                )),
                None => Some(format!(
                    "{how_on} and {rules_source} does not trust the project"
                )),
            }
        }
        _ => None,
    }?;
    Some(if family.untrusted_disables_all {
        format!("{why}: in an untrusted folder every MCP server is disabled, the user's too")
    } else {
        format!("{why}: its settings are ignored")
    })
}

/// Qwen 0.24: a project's server runs once approved for this folder, for
/// the entry as it was approved (its hash).
struct ProjectApprovals {
    source: Option<String>,
    decisions: Option<Map<String, Value>>,
}

impl ProjectApprovals {
    fn read(ctx: &ScanContext, out: &mut ScanOutput, family: Family, home: &ConfigRoot) -> Self {
        let file = family.project_approvals.map(|file| {
            family
                .approvals_env
                .and_then(|var| {
                    let path = ctx.var_str(var)?;
                    ConfigRoot::named_file(Path::new(&path), var)
                })
                .unwrap_or_else(|| (home.clone(), file.to_owned()))
        });
        let decisions = file.as_ref().and_then(|(root, rel)| {
            let doc = out.read_json(family.harness, root, rel, true)?;
            let project = ctx.project.as_ref()?;
            doc.iter()
                .find(|(key, _)| ctx.resolve_written_path(key) == *project)
                .and_then(|(_, v)| v.as_object().cloned())
        });
        ProjectApprovals {
            source: file.as_ref().map(|(root, rel)| root.source(rel)),
            decisions,
        }
    }

    /// What holds the server `name` (its entry as hashed) back, if anything.
    fn check(&self, name: &str, hashed: &Map<String, Value>) -> Option<Enablement> {
        let source = self.source.as_ref()?;
        let record = self.decisions.as_ref().and_then(|entry| entry.get(name));
        let status = record.and_then(|r| r.get("status")).and_then(Value::as_str);
        let same_entry = record.and_then(|r| r.get("hash")).and_then(Value::as_str)
            == Some(qwen_entry_hash(hashed).as_str());
        match status {
            Some("approved") if same_entry => None,
            Some("rejected") if same_entry => Some(Enablement::Off(
                ReasonCode::DisabledInConfig,
                format!("rejected for this folder in {source}"),
            )),
            Some(decided) => Some(Enablement::Off(
                ReasonCode::NotApproved,
                format!(
                    "waits for approval: {source} has it {decided} for an earlier version of its entry, which changed since"
                ),
            )),
            None => Some(Enablement::Off(
                ReasonCode::NotApproved,
                format!("waits for approval: {source} has no decision for it in this folder"),
            )),
        }
    }
}

/// Settings hooks (verified on the pinned Gemini CLI: they run unless the
/// strongest file that sets it has `hooksConfig.enabled: false`). Returns
/// why hooks are off, when they are.
fn scan_settings_hooks(
    ctx: &ScanContext,
    out: &mut ScanOutput,
    harness: &'static str,
    settings: &[Settings],
    project_untrusted: &Option<String>,
    refused: Option<&str>,
) -> Option<String> {
    let hooks_off = settings
        .iter()
        .filter(|s| s.scope != ConfigScope::Project || project_untrusted.is_none())
        .filter_map(|s| {
            nested(&s.doc, &["hooksConfig", "enabled"])
                .and_then(Value::as_bool)
                .map(|on| (on, s.source.clone()))
        })
        .next_back()
        .and_then(|(on, source)| {
            (!on).then(|| format!("hooksConfig.enabled is false in {source}"))
        });
    for s in settings {
        let ignored = s.scope == ConfigScope::Project && project_untrusted.is_some();
        for (name, line) in hook_commands(s.doc.get("hooks"), "") {
            let mut found = FoundCapability::new(
                CapabilityKind::Hook,
                harness,
                s.scope.clone(),
                &name,
                s.source.clone(),
            );
            found.command = Some(FoundCommand {
                line,
                base: ResolvesAgainst::WorkspaceCwd,
                root: None,
                expands: Vec::new(),
            });
            if let Some(why) = refused {
                found.enablement = Enablement::Off(ReasonCode::FileRefused, why.to_owned());
            } else if let (true, Some(why)) = (ignored, project_untrusted) {
                found.enablement = Enablement::Off(ReasonCode::UntrustedFolder, why.clone());
            } else if let Some(why) = &hooks_off {
                found.enablement = Enablement::Off(ReasonCode::DisabledInConfig, why.clone());
            }
            out.push_capability(ctx, found);
        }
    }
    hooks_off
}

/// The global allow and exclude lists, and what they say of one entry.
struct Lists {
    excluded: Vec<(String, String)>,
    allowed: Option<(Vec<String>, String)>,
}

impl Lists {
    /// `mcp.excluded` from any file; `mcp.allowed` from the strongest file
    /// that sets it (older: `excludeMCPServers`, `allowMCPServers`).
    fn from_settings(effective: &[&Settings]) -> Self {
        let mut excluded: Vec<(String, String)> = Vec::new();
        let mut allowed: Option<(Vec<String>, String)> = None;
        for s in effective {
            if let Some(list) =
                nested(&s.doc, &["mcp", "excluded"]).or_else(|| s.doc.get("excludeMCPServers"))
            {
                for name in string_list(Some(list)) {
                    excluded.push((name, s.source.clone()));
                }
            }
            if let Some(list) =
                nested(&s.doc, &["mcp", "allowed"]).or_else(|| s.doc.get("allowMCPServers"))
            {
                allowed = Some((string_list(Some(list)), s.source.clone()));
            }
        }
        Lists { excluded, allowed }
    }

    fn apply(&self, found: &mut FoundServer, entry: &Map<String, Value>) {
        if entry.contains_key("includeTools") {
            found.include_tools = Some(string_list(entry.get("includeTools")));
        }
        found.exclude_tools = string_list(entry.get("excludeTools"));
        for key in ["trust", "timeout"] {
            if let Some(v) = entry.get(key).filter(|v| v.is_boolean() || v.is_number()) {
                found.settings.push(format!("{key}={v}"));
            }
        }
        found.enablement =
            if let Some((_, source)) = self.excluded.iter().find(|(name, _)| *name == found.name) {
                Enablement::Off(
                    ReasonCode::Excluded,
                    format!("listed in mcp.excluded in {source}"),
                )
            } else if let Some((list, source)) = &self.allowed
                && !list.contains(&found.name)
            {
                Enablement::Off(
                    ReasonCode::Excluded,
                    format!("not in mcp.allowed in {source}"),
                )
            } else {
                Enablement::Enabled
            };
    }
}

/// Whether `extension-enablement.json` turns an extension off for the
/// project: its `overrides` are path globs (`/dir/*`), `!` negates, the last
/// matching rule wins, and no match means enabled.
fn extension_disabled(
    ctx: &ScanContext,
    rules: Option<&Map<String, Value>>,
    extension: &str,
) -> bool {
    let Some(overrides) = rules
        .and_then(|r| r.get(extension))
        .and_then(|e| e.get("overrides"))
    else {
        return false;
    };
    let project = ctx.project.clone().unwrap_or_else(|| ctx.home.clone());
    let mut disabled = false;
    for rule in string_list(Some(overrides)) {
        let (negated, pattern) = match rule.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, rule.as_str()),
        };
        let dir = pattern.trim_end_matches('*').trim_end_matches('/');
        if dir.is_empty() || project.starts_with(ctx.resolve_written_path(dir)) {
            disabled = negated;
        }
    }
    disabled
}

/// Extension-bundled servers: `mcpServers` in
/// `~/.gemini/extensions/<ext>/gemini-extension.json` (scope plugin), with
/// `${extensionPath}` expanded as Gemini does; and extension hooks, in the
/// extension's `hooks/hooks.json` (verified on the pinned Gemini CLI: read
/// only while `hooksConfig.enabled` holds, `${extensionPath}` and
/// `${workspacePath}` expanded in them), each a hook row linked to its
/// extension, resolving against the extension's directory.
fn scan_extensions(
    ctx: &ScanContext,
    out: &mut ScanOutput,
    family: Family,
    home: &ConfigRoot,
    judged: &ExtensionContext,
) {
    let (lists, hooks_off, untrusted) = (judged.lists, judged.hooks_off, judged.untrusted);
    let harness = family.harness;
    let root = home.join("extensions");
    let rules = out.read_json(harness, &root, "extension-enablement.json", true);
    let rules_source = root.source("extension-enablement.json");
    // One manifest per extension: the first name in the family's order.
    let mut manifests: std::collections::BTreeMap<String, (usize, String)> = Default::default();
    for manifest in root.find_files("", family.extension_manifests, 1) {
        let (dir, file) = manifest.rsplit_once('/').unwrap_or(("", manifest.as_str()));
        let rank = family
            .extension_manifests
            .iter()
            .position(|m| *m == file)
            .unwrap_or(usize::MAX);
        let slot = manifests
            .entry(dir.to_owned())
            .or_insert((rank, manifest.clone()));
        if rank < slot.0 {
            *slot = (rank, manifest.clone());
        }
    }
    for (dir, (_, manifest)) in manifests {
        let Some(doc) = out.read_json(harness, &root, &manifest, true) else {
            continue;
        };
        let name = doc
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or(&dir)
            .to_owned();
        let path = root.dir().join(&dir).to_string_lossy().into_owned();
        // Why its rows are off: the CLI does not start at all, or this
        // folder turns the extension off.
        let off = match judged.refused {
            Some(why) => Some(Enablement::Off(ReasonCode::FileRefused, why.to_owned())),
            None => extension_disabled(ctx, rules.as_ref(), &name).then(|| {
                Enablement::Off(
                    ReasonCode::DisabledInConfig,
                    format!("extension {name} is disabled for this folder in {rules_source}"),
                )
            }),
        };
        // The extension itself: installed (it is in the extensions directory),
        // enabled unless extension-enablement.json turns it off here, linked
        // to the servers it bundles.
        let mut row = FoundCapability::new(
            CapabilityKind::Plugin,
            harness,
            ConfigScope::Plugin,
            &name,
            root.source(&manifest),
        );
        row.installed = Installed::Yes;
        if let Some(off) = &off {
            row.enablement = off.clone();
        }
        if let Some(version) = doc.get("version").and_then(Value::as_str) {
            row.settings.push(format!("version={version}"));
        }
        for server in doc
            .get("mcpServers")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|m| m.keys())
        {
            row.links.push(CapabilityLink {
                kind: CapabilityKind::McpServer,
                name: server.clone(),
            });
        }
        let hooks_file = format!("{dir}/hooks/hooks.json");
        if let Some(hooks) = out.read_json(harness, &root, &hooks_file, false) {
            let ext_dir = root.dir().join(&dir);
            let mut expands = vec![("extensionPath".to_owned(), path.clone())];
            if let Some(project) = &ctx.project {
                expands.push(("workspacePath".to_owned(), project.display().to_string()));
            }
            for (hook, line) in hook_commands(hooks.get("hooks"), &format!("{name}:")) {
                row.links.push(CapabilityLink {
                    kind: CapabilityKind::Hook,
                    name: hook.clone(),
                });
                let mut found = FoundCapability::new(
                    CapabilityKind::Hook,
                    harness,
                    ConfigScope::Plugin,
                    &hook,
                    root.source(&hooks_file),
                );
                found.command = Some(FoundCommand {
                    line,
                    base: ResolvesAgainst::PluginRoot,
                    root: Some(ext_dir.clone()),
                    expands: expands.clone(),
                });
                if let Some(off) = &off {
                    found.enablement = off.clone();
                } else if let Some(why) = hooks_off {
                    found.enablement =
                        Enablement::Off(ReasonCode::DisabledInConfig, why.to_owned());
                }
                out.push_capability(ctx, found);
            }
        }
        out.push_capability(ctx, row);
        let Some(servers) = doc.get("mcpServers") else {
            continue;
        };
        let servers = substitute(servers, "${extensionPath}", &path);
        out.add_servers(
            ctx,
            harness,
            ConfigScope::Plugin,
            &root.source(&manifest),
            "mcpServers",
            Some(&servers),
            crate::DIALECT.entry,
            |found, entry| {
                lists.apply(found, entry);
                found.call_policy =
                    Some(predict(judged.calls, found, entry, judged.folder_trusted));
                if let Some(off) = &off {
                    found.enablement = off.clone();
                } else if let Some(why) = untrusted {
                    found.enablement = Enablement::Off(ReasonCode::UntrustedFolder, why.to_owned());
                }
            },
        );
    }
}

/// A Claude-style `.mcp.json` entry as Qwen Code 0.24 holds it
/// (`normalizeClaudeMcpServer`): `type` dropped (kept as `sdk`), and a `url`
/// of `type: "http"` moved to `httpUrl`.
fn qwen_normalized(raw: &Map<String, Value>) -> Map<String, Value> {
    let truthy = |key: &str| {
        raw.get(key).is_some_and(|v| match v {
            Value::Null | Value::Bool(false) => false,
            Value::String(s) => !s.is_empty(),
            Value::Number(n) => n.as_f64() != Some(0.0),
            _ => true,
        })
    };
    let kind = raw.get("type");
    let sdk = kind.and_then(Value::as_str) == Some("sdk");
    let mut out = raw.clone();
    if truthy("command") || truthy("httpUrl") || truthy("tcp") {
        if kind.is_some() && !sdk {
            out.remove("type");
        }
    } else if let Some(url) = raw.get("url").and_then(Value::as_str) {
        out.remove("url");
        if !sdk {
            out.remove("type");
        }
        let key = if kind.and_then(Value::as_str) == Some("http") {
            "httpUrl"
        } else {
            "url"
        };
        out.insert(key.to_owned(), Value::String(url.to_owned()));
    }
    out
}

/// Qwen Code 0.24's `hashMcpServerConfig`: the SHA-256 (hex) of the entry's
/// `JSON.stringify` with every object's keys sorted, leaving out what does
/// not change behaviour (`scope`, `extensionName`, `description`).
pub fn qwen_entry_hash(entry: &Map<String, Value>) -> String {
    let behavioral: Map<String, Value> = entry
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "scope" | "extensionName" | "description"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut text = String::new();
    js_stable_json(&Value::Object(behavioral), &mut text);
    tether_sdk::telemetry::sha256_hex(&text)
}

/// `JSON.stringify` of `value` with object keys sorted, as JavaScript writes
/// it: integral numbers without a fraction.
fn js_stable_json(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                js_stable_json(&Value::String(key.clone()), out);
                out.push(':');
                js_stable_json(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                js_stable_json(item, out);
            }
            out.push(']');
        }
        Value::Number(n) if n.is_f64() => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 1e21 => out.push_str(&format!("{f:.0}")),
            Some(f) => out.push_str(&f.to_string()),
            None => out.push_str("null"),
        },
        other => out.push_str(&other.to_string()),
    }
}
