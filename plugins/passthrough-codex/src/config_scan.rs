//! The Codex configuration scanner for `tether inventory`.
//!
//! Codex reads `[mcp_servers.NAME]` tables from `$CODEX_HOME/config.toml`
//! (default `~/.codex/config.toml`, scope user), `/etc/codex/config.toml`
//! (scope system) and a project's `.codex/config.toml` (scope project), the
//! last only when the project is trusted (`[projects."<abs path>"]
//! trust_level = "trusted"` in the user's config, for the project or a folder
//! above it). Per server: `enabled`, `required`, `enabled_tools`,
//! `disabled_tools`, `startup_timeout_sec`/`_ms`, `tool_timeout_sec`,
//! `bearer_token_env_var`, `env_vars`, `http_headers` and `env_http_headers`.
//! `default_tools_approval_mode`, a tool's `approval_mode` and the
//! effective `approval_policy` give each row its `call_policy` (`policy.rs`).

use crate::policy;

use serde_json::{Map, Value};
use tether_core::inventory::CapabilityLink;
use tether_core::vocab::{CapabilityKind, ConfigScope, ReasonCode, ResolvesAgainst};
use tether_inventory::{
    ConfigRoot, ConfigScanner, Enablement, FoundCapability, FoundCommand, FoundServer, ScanContext,
    ScanOutput, hook_entries, string_list,
};

/// The harness name in inventory rows.
pub const HARNESS: &str = "codex";

/// Scans Codex's configuration.
#[derive(Debug, Default, Clone, Copy)]
pub struct CodexConfigScanner;

tether_inventory::register_scanner!(CodexConfigScanner);

/// How the user's config marks the project: trusted, untrusted, or not at all.
fn project_trust(ctx: &ScanContext, user: Option<&Map<String, Value>>) -> Option<String> {
    let projects = user?.get("projects")?.as_object()?;
    let project = ctx.project.as_ref()?;
    // The most specific entry for the project or a folder above it (paths
    // compared after resolving symlinks).
    projects
        .iter()
        .filter_map(|(key, entry)| {
            let dir = ctx.resolve_written_path(key);
            let level = entry.get("trust_level")?.as_str()?;
            project
                .starts_with(&dir)
                .then(|| (dir.components().count(), level.to_owned()))
        })
        .max_by_key(|(depth, _)| *depth)
        .map(|(_, level)| level)
}

fn details(ctx: &ScanContext, found: &mut FoundServer, entry: &Map<String, Value>) {
    if entry.get("enabled").and_then(Value::as_bool) == Some(false) {
        found.enablement = Enablement::Off(
            ReasonCode::DisabledInConfig,
            format!("enabled = false in {}", found.source),
        );
    }
    if entry.contains_key("enabled_tools") {
        found.include_tools = Some(string_list(entry.get("enabled_tools")));
    }
    found.exclude_tools = string_list(entry.get("disabled_tools"));
    for key in [
        "required",
        "startup_timeout_sec",
        "startup_timeout_ms",
        "tool_timeout_sec",
    ] {
        if let Some(value) = entry.get(key).filter(|v| v.is_boolean() || v.is_number()) {
            found.settings.push(format!("{key}={value}"));
        }
    }
    found.forwarded_env = string_list(entry.get("env_vars"));
    if let Some(var) = entry.get("bearer_token_env_var").and_then(Value::as_str) {
        found.forwarded_env.push(var.to_owned());
        found.env_headers.push("Authorization".to_owned());
    }
    // Codex refuses the server when its bearer token's variable is unset.
    found
        .unset_env
        .extend(tether_inventory::dialect::bearer_env_unset(entry, &|var| {
            ctx.var_str(var)
        }));
    if let Some(headers) = entry.get("env_http_headers").and_then(Value::as_object) {
        for (header, var) in headers {
            found.env_headers.push(header.clone());
            if let Some(var) = var.as_str() {
                found.forwarded_env.push(var.to_owned());
            }
        }
    }
}

impl ConfigScanner for CodexConfigScanner {
    fn harness(&self) -> &'static str {
        HARNESS
    }

    fn scan(&self, ctx: &ScanContext, out: &mut ScanOutput) {
        let codex_home = ctx.env_dir("CODEX_HOME", ".codex");
        let user = out.read_toml(HARNESS, &codex_home, "config.toml");
        let system = ctx.system_dir("/etc/codex");
        let system_doc = out.read_toml(HARNESS, &system, "config.toml");
        let trust = trust_of(ctx, user.as_ref(), &codex_home.source("config.toml"));
        let rel = ".codex/config.toml";
        let project = ctx.project_root();
        let project_doc = project
            .as_ref()
            .and_then(|project| out.read_toml(HARNESS, project, rel));
        // approval_policy: system, then user, then a trusted project's.
        let mut approval = policy::ApprovalPolicy::default();
        if let Some(doc) = &system_doc {
            approval.absorb(doc, &system.source("config.toml"));
        }
        if let Some(doc) = &user {
            approval.absorb(doc, &codex_home.source("config.toml"));
        }
        if let (Some(doc), Some(project), Enablement::Enabled) = (&project_doc, &project, &trust) {
            approval.absorb(doc, &project.source(rel));
        }
        let add = |out: &mut ScanOutput,
                   doc: &Map<String, Value>,
                   scope,
                   source: String,
                   base: &Enablement| {
            out.add_servers(
                ctx,
                HARNESS,
                scope,
                &source,
                "mcp_servers",
                doc.get("mcp_servers"),
                crate::DIALECT.entry,
                |found, entry| {
                    details(ctx, found, entry);
                    found.call_policy = Some(policy::predict(entry, &found.source, &approval));
                    // An ignored file's servers stop there, whatever they say.
                    if *base != Enablement::Enabled {
                        found.enablement = base.clone();
                    }
                },
            );
        };
        if let Some(doc) = &system_doc {
            add(
                out,
                doc,
                ConfigScope::System,
                system.source("config.toml"),
                &Enablement::Enabled,
            );
        }
        if let Some(doc) = &user {
            add(
                out,
                doc,
                ConfigScope::User,
                codex_home.source("config.toml"),
                &Enablement::Enabled,
            );
        }
        let plugin_hooks = match &user {
            Some(doc) => scan_plugins(ctx, out, &codex_home, doc),
            None => Vec::new(),
        };
        scan_skills(ctx, out, &codex_home, user.as_ref());
        scan_hooks(ctx, out, &codex_home, user.as_ref(), &trust, &plugin_hooks);
        if let (Some(project), Some(doc)) = (&project, &project_doc) {
            add(out, doc, ConfigScope::Project, project.source(rel), &trust);
        }
    }
}

/// Whether Codex reads the project's `.codex/`: only when the user's config
/// trusts it.
fn trust_of(ctx: &ScanContext, user: Option<&Map<String, Value>>, user_source: &str) -> Enablement {
    match project_trust(ctx, user).as_deref() {
        Some("trusted") => Enablement::Enabled,
        Some(level) => Enablement::Off(
            ReasonCode::UntrustedFolder,
            format!(
                "the project's trust_level is {level:?} in {user_source}; Codex ignores {}",
                "$PROJECT/.codex/"
            ),
        ),
        None => Enablement::Off(
            ReasonCode::UntrustedFolder,
            format!(
                "the project is not trusted in {user_source}; Codex ignores {} until it is",
                "$PROJECT/.codex/"
            ),
        ),
    }
}

/// Installed plugins (verified on the pinned Codex 0.171: `codex plugin
/// marketplace add DIR` and `codex plugin add NAME@MARKETPLACE` record each
/// as `[plugins."NAME@MARKETPLACE"] enabled = …` in the user's config and
/// copy it to `plugins/cache/MARKETPLACE/NAME/VERSION/`, whose
/// `.codex-plugin/plugin.json` (or `.claude-plugin/plugin.json`) names its
/// servers (`mcpServers`: a file, or the servers themselves) and its skills
/// folder). Codex has no command to disable one: `enabled = false` in the
/// config is how. Each is a plugin row linked to its servers (rows
/// `plugin:NAME:SERVER`) and skills; one the config names but the cache
/// lacks is `not_installed`. Returns each installed plugin's hooks file
/// (the manifest's `hooks`, or `hooks/hooks.json`), for [`scan_hooks`].
fn scan_plugins(
    ctx: &ScanContext,
    out: &mut ScanOutput,
    home: &ConfigRoot,
    config: &Map<String, Value>,
) -> Vec<PluginHooks> {
    let mut hook_files = Vec::new();
    let Some(plugins) = config.get("plugins").and_then(Value::as_object) else {
        return hook_files;
    };
    let source = home.source("config.toml");
    for (id, entry) in plugins {
        let (name, marketplace) = id.split_once('@').unwrap_or((id.as_str(), ""));
        let enablement = if entry.get("enabled").and_then(Value::as_bool) == Some(false) {
            Enablement::Off(
                ReasonCode::DisabledInConfig,
                format!("plugin {id} has enabled = false in {source}"),
            )
        } else {
            Enablement::Enabled
        };
        // The installed copy: the newest version folder holding a manifest.
        let cache = format!("plugins/cache/{marketplace}/{name}");
        let manifest_rel = home
            .find_files(&cache, &["plugin.json"], 2)
            .into_iter()
            .filter(|p| p.contains("/.codex-plugin/") || p.contains("/.claude-plugin/"))
            .max();
        let manifest = manifest_rel
            .as_deref()
            .and_then(|rel| out.read_json(HARNESS, home, rel, false));
        let mut row = FoundCapability::new(
            CapabilityKind::Plugin,
            HARNESS,
            ConfigScope::Plugin,
            id,
            source.clone(),
        );
        row.installed = manifest.is_some().into();
        row.enablement = enablement.clone();
        if let (Some(rel), Some(manifest)) = (&manifest_rel, &manifest) {
            // `…/VERSION/.codex-plugin/plugin.json` → the plugin root `…/VERSION`.
            let root_rel = rel
                .rsplit_once('/')
                .and_then(|(dir, _)| dir.rsplit_once('/'))
                .map(|(root, _)| root.to_owned())
                .unwrap_or_default();
            if let Some(version) = root_rel.rsplit('/').next() {
                row.settings.push(format!("version={version}"));
            }
            let root = home.join(&root_rel);
            let path = |key: &str, default: &'static str| {
                manifest
                    .get(key)
                    .and_then(Value::as_str)
                    .unwrap_or(default)
                    .to_owned()
            };
            let (servers, servers_source) = match manifest.get("mcpServers") {
                Some(Value::Object(inline)) => (
                    Some(Value::Object(inline.clone())),
                    root.source(".codex-plugin/plugin.json"),
                ),
                _ => {
                    let file = path("mcpServers", ".mcp.json");
                    let file = file.trim_start_matches("./");
                    let doc = out.read_json(HARNESS, &root, file, false);
                    (
                        doc.and_then(|d| d.get("mcpServers").cloned()),
                        root.source(file),
                    )
                }
            };
            if let Some(Value::Object(servers)) = servers {
                let links = out.push_bundled_servers(
                    ctx,
                    HARNESS,
                    &servers_source,
                    &servers,
                    name,
                    &enablement,
                );
                row.links.extend(links);
            }
            let skills = path("skills", "skills");
            let links = out.push_bundled_skills(ctx, HARNESS, &root, &skills, name, &enablement);
            row.links.extend(links);
            let hooks = path("hooks", "hooks/hooks.json");
            hook_files.push(PluginHooks {
                id: id.clone(),
                name: name.to_owned(),
                rel: hooks.trim_start_matches("./").to_owned(),
                root,
                enablement: enablement.clone(),
            });
        }
        out.push_capability(ctx, row);
    }
    hook_files
}

/// An installed plugin's hooks file, found by [`scan_plugins`].
struct PluginHooks {
    /// `NAME@MARKETPLACE`.
    id: String,
    /// `NAME`.
    name: String,
    /// The plugin's root (its version folder in the cache).
    root: ConfigRoot,
    /// The hooks file under it.
    rel: String,
    /// The plugin's own enablement.
    enablement: Enablement,
}

/// `PreToolUse` → `pre_tool_use`: the event as Codex writes it in a hook's
/// trust key.
fn snake(event: &str) -> String {
    let mut out = String::with_capacity(event.len() + 4);
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Command hooks (verified on the pinned Codex 0.171 with its app server's
/// `hooks/list`, and by running them): the user's `$CODEX_HOME/hooks.json`
/// and the `[hooks]` table of its `config.toml` (both load); the project's
/// `.codex/hooks.json`, only in a trusted project; and each installed
/// plugin's hooks file, where `${PLUGIN_ROOT}` and `${CLAUDE_PLUGIN_ROOT}`
/// expand to the plugin's folder and a relative command still runs from the
/// workspace's working directory (openai/codex#26675). `[features] hooks =
/// false` turns them all off.
///
/// Codex runs a hook only once the user has trusted it: `/hooks` in the TUI
/// records `[hooks.state."KEY"] trusted_hash` (KEY is `FILE:event:GROUP:INDEX`,
/// FILE the absolute path, or `PLUGIN:REL` for a plugin's), and `enabled =
/// false` there turns one off. A hook with no recorded trust waits for it
/// (`not_approved`). One with a recorded hash runs only while it is unchanged
/// since, and the hash is Codex's own: Tether does not claim either way.
fn scan_hooks(
    ctx: &ScanContext,
    out: &mut ScanOutput,
    codex_home: &ConfigRoot,
    user: Option<&Map<String, Value>>,
    project_trust: &Enablement,
    plugins: &[PluginHooks],
) {
    let user_source = codex_home.source("config.toml");
    let features_off = user
        .and_then(|u| u.get("features"))
        .and_then(|f| f.get("hooks"))
        .and_then(Value::as_bool)
        == Some(false);
    let state = user
        .and_then(|u| u.get("hooks"))
        .and_then(|h| h.get("state"))
        .and_then(Value::as_object);
    let project = ctx.project_root();
    let files = hook_files(
        out,
        codex_home,
        user,
        project.as_ref(),
        project_trust,
        plugins,
    );
    let mut links: Vec<(String, CapabilityLink)> = Vec::new();
    for file in &files {
        let source = file.root.source(file.rel);
        let prefix = file
            .plugin
            .map(|p| format!("{}:", p.name))
            .unwrap_or_default();
        for hook in hook_entries(file.hooks.as_ref(), &prefix) {
            let key = format!(
                "{}:{}:{}:{}",
                file.key,
                snake(&hook.event),
                hook.group,
                hook.index
            );
            let entry = state.and_then(|s| s.get(&key));
            let mut found = FoundCapability::new(
                CapabilityKind::Hook,
                HARNESS,
                file.scope.clone(),
                &hook.name,
                source.clone(),
            );
            let root_dir = file.plugin.map(|p| p.root.dir().to_path_buf());
            found.command = Some(FoundCommand {
                line: hook.line,
                base: ResolvesAgainst::WorkspaceCwd,
                expands: root_dir
                    .iter()
                    .flat_map(|dir| {
                        ["PLUGIN_ROOT", "CLAUDE_PLUGIN_ROOT"]
                            .map(|v| (v.to_owned(), dir.display().to_string()))
                    })
                    .collect(),
                root: root_dir,
            });
            found.enablement = hook_enablement(features_off, file, entry, &user_source);
            if let Some(plugin) = file.plugin {
                links.push((
                    plugin.id.clone(),
                    CapabilityLink {
                        kind: CapabilityKind::Hook,
                        name: hook.name.clone(),
                    },
                ));
            }
            out.push_capability(ctx, found);
        }
    }
    link_plugin_hooks(out, links);
}

/// One file of hooks Codex reads.
struct HookFile<'a> {
    scope: ConfigScope,
    root: &'a ConfigRoot,
    rel: &'a str,
    hooks: Option<Value>,
    /// Its part of a `[hooks.state]` key.
    key: String,
    plugin: Option<&'a PluginHooks>,
    /// Why all its hooks are off, if they are.
    off: Option<Enablement>,
}

/// The files of hooks Codex reads: the user's `hooks.json` and
/// `config.toml`, the project's `.codex/hooks.json`, each plugin's.
fn hook_files<'a>(
    out: &mut ScanOutput,
    codex_home: &'a ConfigRoot,
    user: Option<&Map<String, Value>>,
    project: Option<&'a ConfigRoot>,
    project_trust: &Enablement,
    plugins: &'a [PluginHooks],
) -> Vec<HookFile<'a>> {
    let mut files = Vec::new();
    let key_of = |root: &ConfigRoot, rel: &str| root.dir().join(rel).display().to_string();
    if let Some(doc) = out.read_json(HARNESS, codex_home, "hooks.json", false) {
        files.push(HookFile {
            scope: ConfigScope::User,
            root: codex_home,
            rel: "hooks.json",
            hooks: doc.get("hooks").cloned(),
            key: key_of(codex_home, "hooks.json"),
            plugin: None,
            off: None,
        });
    }
    if let Some(hooks) = user.and_then(|u| u.get("hooks")) {
        files.push(HookFile {
            scope: ConfigScope::User,
            root: codex_home,
            rel: "config.toml",
            hooks: Some(hooks.clone()),
            key: key_of(codex_home, "config.toml"),
            plugin: None,
            off: None,
        });
    }
    if let Some(project) = project
        && let Some(doc) = out.read_json(HARNESS, project, ".codex/hooks.json", false)
    {
        files.push(HookFile {
            scope: ConfigScope::Project,
            root: project,
            rel: ".codex/hooks.json",
            hooks: doc.get("hooks").cloned(),
            key: key_of(project, ".codex/hooks.json"),
            plugin: None,
            off: (*project_trust != Enablement::Enabled).then(|| project_trust.clone()),
        });
    }
    for plugin in plugins {
        let Some(doc) = out.read_json(HARNESS, &plugin.root, &plugin.rel, false) else {
            continue;
        };
        files.push(HookFile {
            scope: ConfigScope::Plugin,
            root: &plugin.root,
            rel: &plugin.rel,
            hooks: doc.get("hooks").cloned(),
            key: format!("{}:{}", plugin.id, plugin.rel),
            plugin: Some(plugin),
            off: (plugin.enablement != Enablement::Enabled).then(|| plugin.enablement.clone()),
        });
    }
    files
}

/// Whether a hook of `file` runs: off with `[features] hooks = false`, with
/// its file, or by its `[hooks.state]` `entry`; trusted once; or waiting.
fn hook_enablement(
    features_off: bool,
    file: &HookFile<'_>,
    entry: Option<&Value>,
    user_source: &str,
) -> Enablement {
    if features_off {
        Enablement::Off(
            ReasonCode::DisabledInConfig,
            format!("[features] hooks = false in {user_source}"),
        )
    } else if let Some(off) = &file.off {
        off.clone()
    } else if entry
        .and_then(|e| e.get("enabled"))
        .and_then(Value::as_bool)
        == Some(false)
    {
        Enablement::Off(
            ReasonCode::DisabledInConfig,
            format!("the hook's [hooks.state] entry has enabled = false in {user_source}"),
        )
    } else if entry.and_then(|e| e.get("trusted_hash")).is_some() {
        Enablement::Unknown(format!(
            "trusted once ([hooks.state] in {user_source} records its hash); Codex runs it only while it is unchanged since, which /hooks in Codex shows"
        ))
    } else {
        Enablement::Off(
            ReasonCode::NotApproved,
            "Codex has not been told to trust this hook: review it with /hooks in Codex, or run with --dangerously-bypass-hook-trust".to_owned(),
        )
    }
}

/// The plugin rows (pushed before their hooks were read) link them too.
fn link_plugin_hooks(out: &mut ScanOutput, links: Vec<(String, CapabilityLink)>) {
    for (id, link) in links {
        let name = tether_core::sanitize::name(&id);
        if let Some(row) = out
            .rows
            .iter_mut()
            .find(|r| r.kind == CapabilityKind::Plugin && r.harness == HARNESS && r.name == name)
        {
            let mut link = link;
            link.name = tether_core::sanitize::name(&link.name);
            if !row.links.contains(&link) {
                row.links.push(link);
                row.links.sort();
            }
        }
    }
}

/// Skills (verified on the pinned Codex 0.171 with its app server's
/// `skills/list`): `SKILL.md` files at any depth under `$CODEX_HOME/skills`
/// (its `.system` folder holds Codex's own, scope system) and
/// `~/.agents/skills`, and under the project's `.codex/skills` and
/// `.agents/skills` (trusted or not). A skill is named by its front matter,
/// not its folder; one without front matter is skipped; `[[skills.config]]
/// path = "…/SKILL.md" enabled = false` turns one off.
fn scan_skills(
    ctx: &ScanContext,
    out: &mut ScanOutput,
    codex_home: &ConfigRoot,
    user: Option<&Map<String, Value>>,
) {
    let user_source = codex_home.source("config.toml");
    let disabled: Vec<std::path::PathBuf> = user
        .and_then(|u| u.get("skills"))
        .and_then(|s| s.get("config"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| c.get("enabled").and_then(Value::as_bool) == Some(false))
        .filter_map(|c| c.get("path").and_then(Value::as_str))
        .map(|p| ctx.resolve_written_path(p))
        .collect();
    let home = ctx.home_root();
    let project = ctx.project_root();
    let mut places = vec![
        (codex_home.clone(), "skills", ConfigScope::User),
        (home, ".agents/skills", ConfigScope::User),
    ];
    if let Some(project) = project {
        places.push((project.clone(), ".codex/skills", ConfigScope::Project));
        places.push((project, ".agents/skills", ConfigScope::Project));
    }
    for (root, dir, scope) in places {
        for (mut found, folder) in out.skill_files(HARNESS, "Codex", &root, dir, scope) {
            if found.source.contains("/skills/.system/") && found.scope == ConfigScope::User {
                found.scope = ConfigScope::System;
            }
            // Compared as written and as resolved (one lookup per skill, and
            // none when nothing is turned off).
            let turned_off = !disabled.is_empty() && {
                let path = folder.join("SKILL.md");
                let resolved = std::fs::canonicalize(&path).ok();
                disabled
                    .iter()
                    .any(|d| *d == path || resolved.as_ref() == Some(d))
            };
            if found.enablement == Enablement::Enabled && turned_off {
                found.enablement = Enablement::Off(
                    ReasonCode::DisabledInConfig,
                    format!("[[skills.config]] has enabled = false for it in {user_source}"),
                );
            }
            out.push_capability(ctx, found);
        }
    }
}
