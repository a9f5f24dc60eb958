//! GitHub Copilot CLI: `mcpServers` in `$COPILOT_HOME/mcp-config.json`
//! (default `~/.copilot`, scope user) and in the workspace's `.mcp.json` or
//! `.github/mcp.json` (scope project; the latter only when the former does
//! not exist, else its servers are `file_shadowed`). Entries are `{"type": "local" |
//! "stdio", "command", "args", "env", "cwd"}` or `{"type": "http" | "sse",
//! "url", "headers"}`, each with a `tools` filter (`["*"]` is every tool;
//! a list names the tools kept; `[]` keeps none). `copilot mcp disable NAME`
//! records the name in `settings.json`'s `disabledMcpServers`. Workspace
//! servers load only in a trusted folder: one listed (or under one listed) in
//! `config.json`'s `trusted_folders` (or `trustedFolders`, as 1.0.102
//! rewrites it); otherwise they are `untrusted_folder`. Hooks: the user's in
//! `settings.json`, the workspace's in `.github/hooks/*.json` (trusted
//! folders only). Skills: see [`scan_skills`].
//!
//! Calls (`call_policy`, from `copilot --help` and `copilot help config` /
//! `help environment` on 1.0.102): `COPILOT_ALLOW_ALL` (truthy) allows
//! every tool; `settings.json`'s `defaultPermissionMode: "allow-all"` does
//! so for interactive sessions only; otherwise a call asks, and a
//! non-interactive run (`copilot -p`) needs `--allow-all-tools` or
//! `--allow-tool`. Those flags, `--deny-tool` and `--disable-mcp-server`
//! live in no file, so each row's note says Tether cannot see them.

use serde_json::{Map, Value};
use tether_core::inventory::{CallPolicy, CallVerdict, RowNote};
use tether_core::model::ProvenanceCode;
use tether_core::vocab::{CapabilityKind, ConfigScope, ReasonCode, ResolvesAgainst};
use tether_inventory::{
    ConfigRoot, ConfigScanner, Enablement, FoundCapability, FoundCommand, ScanContext, ScanOutput,
    string_list,
};

/// The harness name in inventory rows.
pub const HARNESS: &str = "copilot";

/// Scans the Copilot CLI's configuration.
#[derive(Debug, Default, Clone, Copy)]
pub struct CopilotConfigScanner;

tether_inventory::register_scanner!(CopilotConfigScanner);

impl ConfigScanner for CopilotConfigScanner {
    fn harness(&self) -> &'static str {
        HARNESS
    }

    fn scan(&self, ctx: &ScanContext, out: &mut ScanOutput) {
        let home = ctx.env_dir("COPILOT_HOME", ".copilot");
        // Read once: servers, hooks and skills all use it (and a broken file
        // is one error, not one per use).
        let settings = out.read_json(HARNESS, &home, "settings.json", true);
        let disabled = string_list(
            settings
                .as_ref()
                .and_then(|doc| doc.get("disabledMcpServers")),
        );
        let disabled_source = home.source("settings.json");
        // 1.0.102 rewrites `trusted_folders` as `trustedFolders` (and keeps
        // comments in the file): either key counts.
        let trusted = out
            .read_json(HARNESS, &home, "config.json", true)
            .map(|doc| {
                let mut dirs = string_list(doc.get("trusted_folders"));
                dirs.extend(string_list(doc.get("trustedFolders")));
                dirs
            })
            .unwrap_or_default()
            .iter()
            .any(|dir| {
                ctx.project
                    .as_ref()
                    .is_some_and(|p| p.starts_with(ctx.resolve_written_path(dir)))
            });
        let trust_source = home.source("config.json");
        let calls = call_policy(ctx, settings.as_ref(), &disabled_source);
        scan_hooks(ctx, out, &home, settings.as_ref(), trusted, &trust_source);
        scan_plugins(ctx, out, &home);
        scan_skills(ctx, out, &home, settings.as_ref());
        let mut files = vec![(home, "mcp-config.json", ConfigScope::User, None)];
        if let Some(project) = ctx.project_root() {
            // Copilot reads `.github/mcp.json` only when there is no
            // `.mcp.json` at all: an empty, malformed one (or a directory
            // of that name) still takes its place (verified on 1.0.102).
            let shadowed = std::fs::symlink_metadata(project.dir().join(".mcp.json"))
                .is_ok()
                .then(|| {
                    format!(
                        "Copilot does not read this file: {} exists, and it reads .github/mcp.json only without one",
                        project.source(".mcp.json")
                    )
                });
            files.push((project.clone(), ".mcp.json", ConfigScope::Project, None));
            files.push((project, ".github/mcp.json", ConfigScope::Project, shadowed));
        }
        for (root, rel, scope, shadowed) in files {
            let Some(doc) = out.read_json(HARNESS, &root, rel, true) else {
                continue;
            };
            let scope_is_project = scope == ConfigScope::Project;
            out.add_servers(
                ctx,
                HARNESS,
                scope,
                &root.source(rel),
                "mcpServers",
                doc.get("mcpServers"),
                crate::DIALECT.entry,
                |found, entry| {
                    found.call_policy = Some(calls.clone());
                    found.notes.push(RowNote {
                        provenance: ProvenanceCode::DocumentedRule,
                        reason_code: None,
                        text: FLAGS_NOTE.to_owned(),
                    });
                    match entry.get("tools").and_then(Value::as_array) {
                        Some(tools) if !tools.iter().any(|t| t.as_str() == Some("*")) => {
                            found.include_tools = Some(string_list(entry.get("tools")));
                        }
                        _ => {}
                    }
                    if let Some(why) = &shadowed {
                        found.enablement = Enablement::Off(ReasonCode::FileShadowed, why.clone());
                    } else if scope_is_project && !trusted {
                        found.enablement = Enablement::Off(
                            ReasonCode::UntrustedFolder,
                            format!(
                                "the project is not in trusted_folders in {trust_source}; Copilot loads workspace servers only in a trusted folder"
                            ),
                        );
                    } else if disabled.contains(&found.name) {
                        found.enablement = Enablement::Off(
                            ReasonCode::DisabledInConfig,
                            format!("listed in disabledMcpServers in {disabled_source}"),
                        );
                    }
                },
            );
        }
    }
}

/// Hooks (verified on the pinned Copilot CLI): the user's in
/// What no file holds.
const FLAGS_NOTE: &str = "Copilot CLI also takes --allow-tool, --deny-tool, --allow-all-tools and --disable-mcp-server at launch; flags live in no file, so Tether cannot predict them";

/// What `COPILOT_ALLOW_ALL` and `defaultPermissionMode` predict for every
/// server's calls.
fn call_policy(
    ctx: &ScanContext,
    settings: Option<&Map<String, Value>>,
    settings_source: &str,
) -> CallPolicy {
    let truthy =
        |v: &str| ["true", "1", "yes", "on", "y"].contains(&v.trim().to_ascii_lowercase().as_str());
    let policy =
        |verdict, headless, provenance, rule: Option<&str>, source: Option<&str>, summary: &str| {
            CallPolicy {
                verdict,
                headless_refuses: headless,
                provenance,
                reason_code: (verdict != CallVerdict::Allowed)
                    .then_some(ReasonCode::ApprovalRequired),
                rule: rule.map(str::to_owned),
                source: source.map(str::to_owned),
                summary: summary.to_owned(),
                tools: Vec::new(),
            }
        };
    if ctx.var_str("COPILOT_ALLOW_ALL").is_some_and(|v| truthy(&v)) {
        return policy(
            CallVerdict::Allowed,
            Some(false),
            ProvenanceCode::CurrentConfig,
            Some("COPILOT_ALLOW_ALL"),
            Some("$COPILOT_ALLOW_ALL"),
            "COPILOT_ALLOW_ALL is set here: Copilot runs every tool without asking",
        );
    }
    let mode = settings
        .and_then(|s| s.get("defaultPermissionMode"))
        .and_then(Value::as_str);
    if mode == Some("allow-all") {
        return policy(
            CallVerdict::Allowed,
            Some(true),
            ProvenanceCode::CurrentConfig,
            Some("defaultPermissionMode: allow-all"),
            Some(settings_source),
            &format!(
                "defaultPermissionMode is allow-all in {settings_source}: an interactive session runs every tool without asking; a non-interactive run (copilot -p) ignores it and needs --allow-all-tools"
            ),
        );
    }
    policy(
        CallVerdict::NeedsApproval,
        Some(true),
        ProvenanceCode::DocumentedRule,
        None,
        None,
        "no setting allows it, so Copilot asks before a call it does not judge read-only (manual mode); a non-interactive run (copilot -p) needs --allow-all-tools or --allow-tool",
    )
}

/// `$COPILOT_HOME/settings.json`, and the workspace's in
/// `.github/hooks/*.json`, which run only in a trusted folder. Each file is
/// `{"version": 1, "hooks": {EVENT: [{"type": "command", "bash": …}]}}`.
fn scan_hooks(
    ctx: &ScanContext,
    out: &mut ScanOutput,
    home: &ConfigRoot,
    settings: Option<&Map<String, Value>>,
    trusted: bool,
    trust_source: &str,
) {
    let mut files: Vec<(String, ConfigScope, Map<String, Value>)> = settings
        .map(|doc| (home.source("settings.json"), ConfigScope::User, doc.clone()))
        .into_iter()
        .collect();
    if let Some(project) = ctx.project_root() {
        for rel in project.find_files_where(".github/hooks", 0, |n| n.ends_with(".json")) {
            if let Some(doc) = out.read_json(HARNESS, &project, &rel, true) {
                files.push((project.source(&rel), ConfigScope::Project, doc));
            }
        }
    }
    for (source, scope, doc) in files {
        let untrusted = scope == ConfigScope::Project && !trusted;
        let events = doc.get("hooks").and_then(Value::as_object);
        for (event, hooks) in events.into_iter().flatten() {
            let commands: Vec<&str> = hooks
                .as_array()
                .into_iter()
                .flatten()
                .filter(|h| h.get("type").and_then(Value::as_str).unwrap_or("command") == "command")
                .filter_map(|h| h.get("bash").and_then(Value::as_str))
                .collect();
            for (i, line) in commands.iter().enumerate() {
                let name = if i == 0 {
                    event.clone()
                } else {
                    format!("{event}#{}", i + 1)
                };
                let mut found = FoundCapability::new(
                    CapabilityKind::Hook,
                    HARNESS,
                    scope.clone(),
                    &name,
                    source.clone(),
                );
                found.command = Some(FoundCommand {
                    line: (*line).to_owned(),
                    base: ResolvesAgainst::WorkspaceCwd,
                    root: None,
                    expands: Vec::new(),
                });
                if untrusted {
                    found.enablement = Enablement::Off(
                        ReasonCode::UntrustedFolder,
                        format!(
                            "the project is not in trusted_folders in {trust_source}; Copilot runs workspace hooks only in a trusted folder"
                        ),
                    );
                }
                out.push_capability(ctx, found);
            }
        }
    }
}

/// Installed plugins (verified on the pinned Copilot CLI: `copilot plugin
/// install` records each in `config.json`'s `installedPlugins`, with
/// `enabled` and its `cache_path` under `installed-plugins/`; `copilot
/// plugin disable` sets `enabled: false`). Each is a plugin row linked to the
/// servers (`plugin:NAME:SERVER`, rows of their own) and skills its
/// `plugin.json` bundles.
fn scan_plugins(ctx: &ScanContext, out: &mut ScanOutput, home: &ConfigRoot) {
    let config = "config.json";
    let Some(doc) = out.read_json(HARNESS, home, config, true) else {
        return;
    };
    let source = home.source(config);
    let home_dir = std::fs::canonicalize(home.dir()).unwrap_or_else(|_| home.dir().to_path_buf());
    let plugins = doc.get("installedPlugins").and_then(Value::as_array);
    for plugin in plugins.into_iter().flatten() {
        let Some(name) = plugin.get("name").and_then(Value::as_str) else {
            continue;
        };
        let marketplace = plugin
            .get("marketplace")
            .and_then(Value::as_str)
            .unwrap_or("");
        let id = if marketplace.is_empty() {
            name.to_owned()
        } else {
            format!("{name}@{marketplace}")
        };
        let enablement = if plugin.get("enabled").and_then(Value::as_bool) == Some(false) {
            Enablement::Off(
                ReasonCode::DisabledInConfig,
                format!("plugin {id} is disabled in installedPlugins in {source}"),
            )
        } else {
            Enablement::Enabled
        };
        // Its files, read only where they live under the Copilot home.
        let cache = plugin
            .get("cache_path")
            .and_then(Value::as_str)
            .map(|p| ctx.resolve_written_path(p))
            .and_then(|p| {
                p.strip_prefix(&home_dir)
                    .ok()
                    .map(|r| r.to_string_lossy().into_owned())
            });
        let root = cache.as_ref().map(|rel| home.join(rel));
        let manifest = root
            .as_ref()
            .and_then(|r| out.read_json(HARNESS, r, "plugin.json", true));
        let mut row = FoundCapability::new(
            CapabilityKind::Plugin,
            HARNESS,
            ConfigScope::Plugin,
            &id,
            source.clone(),
        );
        row.installed = manifest.is_some().into();
        row.enablement = enablement.clone();
        if let Some(version) = plugin.get("version").and_then(Value::as_str) {
            row.settings.push(format!("version={version}"));
        }
        if let (Some(root), Some(manifest)) = (&root, &manifest) {
            let manifest_source = root.source("plugin.json");
            if let Some(servers) = manifest.get("mcpServers").and_then(Value::as_object) {
                let links = out.push_bundled_servers(
                    ctx,
                    HARNESS,
                    &manifest_source,
                    servers,
                    name,
                    &enablement,
                );
                row.links.extend(links);
            }
            let skills_dir = manifest
                .get("skills")
                .and_then(Value::as_str)
                .unwrap_or("skills");
            let skills = out.push_bundled_skills(ctx, HARNESS, root, skills_dir, name, &enablement);
            row.links.extend(skills);
        }
        out.push_capability(ctx, row);
    }
}

/// Skills (verified on the pinned Copilot CLI 1.0.102 against `copilot
/// skill list --json`): `SKILL.md` at any depth under the project's
/// `.github/skills`, `.agents/skills` and `.claude/skills` (trusted folder
/// or not), the user's `$COPILOT_HOME/skills` and `~/.agents/skills`, each
/// of `settings.json`'s `skillDirectories` (as `copilot skill add DIR`
/// writes them). Copilot's own skills, inside its package
/// (`~/.cache/copilot/pkg/…/builtin`), are part of the CLI rather than of
/// anyone's configuration, and some of them are switched by flags Tether
/// cannot see: they are not rows. Each is named by its front matter; `copilot skill disable NAME` lists
/// the name in `disabledSkills`; one without front matter fails to load.
fn scan_skills(
    ctx: &ScanContext,
    out: &mut ScanOutput,
    home: &ConfigRoot,
    settings: Option<&Map<String, Value>>,
) {
    let settings_source = home.source("settings.json");
    let disabled = string_list(settings.and_then(|s| s.get("disabledSkills")));
    let mut places: Vec<(ConfigRoot, String, ConfigScope)> = Vec::new();
    if let Some(project) = ctx.project_root() {
        for dir in [".github/skills", ".agents/skills", ".claude/skills"] {
            places.push((project.clone(), dir.to_owned(), ConfigScope::Project));
        }
    }
    places.push((home.clone(), "skills".to_owned(), ConfigScope::User));
    places.push((
        ctx.home_root(),
        ".agents/skills".to_owned(),
        ConfigScope::User,
    ));
    for (i, dir) in string_list(settings.and_then(|s| s.get("skillDirectories")))
        .iter()
        .enumerate()
    {
        // Shown by its place in the settings, never by its path.
        let root = ConfigRoot::new(
            ctx.resolve_written_path(dir),
            format!("{settings_source}:skillDirectories[{i}]"),
        );
        places.push((root, String::new(), ConfigScope::User));
    }
    for (root, dir, scope) in places {
        for (mut found, _) in out.skill_files(HARNESS, "Copilot", &root, &dir, scope) {
            if found.enablement == Enablement::Enabled && disabled.contains(&found.name) {
                found.enablement = Enablement::Off(
                    ReasonCode::DisabledInConfig,
                    format!("listed in disabledSkills in {settings_source}"),
                );
            }
            out.push_capability(ctx, found);
        }
    }
}
