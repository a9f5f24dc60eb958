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

use serde_json::{Map, Value};
use tether_core::vocab::{ConfigScope, ReasonCode};
use tether_inventory::{
    ConfigScanner, Enablement, EntryDialect, FoundServer, ScanContext, ScanOutput, string_list,
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

fn details(found: &mut FoundServer, entry: &Map<String, Value>) {
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
                EntryDialect::Codex,
                |found, entry| {
                    details(found, entry);
                    // An ignored file's servers stop there, whatever they say.
                    if *base != Enablement::Enabled {
                        found.enablement = base.clone();
                    }
                },
            );
        };
        if let Some(doc) = out.read_toml(HARNESS, &system, "config.toml") {
            add(
                out,
                &doc,
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
            scan_plugins(ctx, out, &codex_home, doc);
        }
        let Some(project) = ctx.project_root() else {
            return;
        };
        let rel = ".codex/config.toml";
        let Some(doc) = out.read_toml(HARNESS, &project, rel) else {
            return;
        };
        let user_source = codex_home.source("config.toml");
        let trust = match project_trust(ctx, user.as_ref()).as_deref() {
            Some("trusted") => Enablement::Enabled,
            Some(level) => Enablement::Off(
                ReasonCode::UntrustedFolder,
                format!(
                    "the project's trust_level is {level:?} in {user_source}; Codex ignores {}",
                    project.source(rel)
                ),
            ),
            None => Enablement::Off(
                ReasonCode::UntrustedFolder,
                format!(
                    "the project is not trusted in {user_source}; Codex ignores {} until it is",
                    project.source(rel)
                ),
            ),
        };
        add(out, &doc, ConfigScope::Project, project.source(rel), &trust);
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
/// lacks is `not_installed`.
fn scan_plugins(
    ctx: &ScanContext,
    out: &mut ScanOutput,
    home: &tether_inventory::root::ConfigRoot,
    config: &Map<String, Value>,
) {
    use tether_core::vocab::CapabilityKind;
    use tether_inventory::FoundCapability;
    let Some(plugins) = config.get("plugins").and_then(Value::as_object) else {
        return;
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
        row.installed = Some(manifest.is_some());
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
        }
        out.push_capability(ctx, row);
    }
}
