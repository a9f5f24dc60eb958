//! OpenCode: `opencode.json` or `opencode.jsonc` (JSON with comments) in
//! `~/.config/opencode/` (or `$XDG_CONFIG_HOME/opencode/`, scope user), in the
//! project, and in the project's `.opencode/` (scope project). Servers are
//! `mcp` entries of `type` `local` (`command` array, `environment`) or
//! `remote` (`url`, `headers`), switched by `enabled`; the newer
//! `mcp.servers` shape uses `disabled`. Files merge in that order, so a later
//! file's `{"enabled": false}` for a name turns off a server an earlier file
//! defines; such an override-only entry adds no row of its own.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};
use tether_core::vocab::{CapabilityKind, ConfigScope, ReasonCode};
use tether_inventory::{
    ConfigRoot, ConfigScanner, Enablement, EntryDialect, FoundCapability, ScanContext, ScanOutput,
};

/// The harness name in inventory rows.
pub const HARNESS: &str = "opencode";

/// The file names OpenCode reads in each configuration directory.
const FILES: [&str; 2] = ["opencode.json", "opencode.jsonc"];

/// Scans OpenCode's configuration.
#[derive(Debug, Default, Clone, Copy)]
pub struct OpenCodeConfigScanner;

tether_inventory::register_scanner!(OpenCodeConfigScanner);

/// One file's servers, in the shape it used.
struct Layer {
    scope: ConfigScope,
    source: String,
    servers: Map<String, Value>,
    newer_shape: bool,
}

/// `mcp.servers` (newer, with `disabled`) or `mcp` itself (with `enabled`).
fn servers_of(mcp: &Map<String, Value>) -> (Map<String, Value>, bool) {
    match mcp.get("servers") {
        Some(Value::Object(servers)) if !servers.contains_key("type") => (servers.clone(), true),
        _ => (mcp.clone(), false),
    }
}

/// What an entry says about being on: `Some(true/false)` or nothing.
fn switch(entry: &Value, newer_shape: bool) -> Option<(bool, &'static str)> {
    if let Some(disabled) = entry.get("disabled").and_then(Value::as_bool) {
        return Some((!disabled, "disabled"));
    }
    if !newer_shape || entry.get("enabled").is_some() {
        return entry
            .get("enabled")
            .and_then(Value::as_bool)
            .map(|on| (on, "enabled"));
    }
    None
}

/// An entry that only switches a server defined elsewhere.
fn is_override(entry: &Value) -> bool {
    entry.as_object().is_some_and(|e| {
        !e.contains_key("type") && !e.contains_key("command") && !e.contains_key("url")
    })
}

impl ConfigScanner for OpenCodeConfigScanner {
    fn harness(&self) -> &'static str {
        HARNESS
    }

    fn scan(&self, ctx: &ScanContext, out: &mut ScanOutput) {
        let global = match ctx.var("XDG_CONFIG_HOME") {
            Some(_) => ctx.env_dir("XDG_CONFIG_HOME", ".config").join("opencode"),
            None => ctx.home_root().join(".config/opencode"),
        };
        // In OpenCode's load order: global files, the file OPENCODE_CONFIG
        // names, the project and its .opencode/, then OPENCODE_CONFIG_DIR.
        let files = || FILES.map(String::from).to_vec();
        let mut global_files = vec!["config.json".to_owned()];
        global_files.extend(files());
        let global_plugins = global.clone();
        let mut places: Vec<(ConfigRoot, Vec<String>, ConfigScope)> =
            vec![(global, global_files, ConfigScope::User)];
        if let Some(file) = ctx.var("OPENCODE_CONFIG")
            && let Some((root, rel)) = ConfigRoot::named_file(Path::new(file), "OPENCODE_CONFIG")
        {
            places.push((root, vec![rel], ConfigScope::User));
        }
        let project_off = ctx
            .var_str("OPENCODE_DISABLE_PROJECT_CONFIG")
            .is_some_and(|v| v == "1" || v.eq_ignore_ascii_case("true"));
        if let Some(project) = ctx.project_root() {
            places.push((project.clone(), files(), ConfigScope::Project));
            places.push((project.join(".opencode"), files(), ConfigScope::Project));
        }
        if ctx.var("OPENCODE_CONFIG_DIR").is_some() {
            let dir = ctx.env_dir("OPENCODE_CONFIG_DIR", ".config/opencode");
            places.push((dir, files(), ConfigScope::User));
        }
        // Local plugin files (verified on the pinned OpenCode: it loads every
        // one in the global and the project's plugin/ and plugins/ folders).
        let mut plugin_dirs = vec![(global_plugins.clone(), ConfigScope::User)];
        if let Some(project) = ctx.project_root() {
            plugin_dirs.push((project.join(".opencode"), ConfigScope::Project));
        }
        for (root, scope) in plugin_dirs {
            for dir in ["plugin", "plugins"] {
                let files = root.find_files_where(dir, 0, |n| {
                    [".js", ".ts", ".mjs", ".mts"]
                        .iter()
                        .any(|ext| n.ends_with(ext))
                });
                for rel in files {
                    let file = rel.rsplit('/').next().unwrap_or(&rel);
                    let name = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
                    let mut found = FoundCapability::new(
                        CapabilityKind::Plugin,
                        HARNESS,
                        scope.clone(),
                        name,
                        root.source(&rel),
                    );
                    found.installed = Some(true);
                    out.push_capability(ctx, found);
                }
            }
        }
        let mut layers = Vec::new();
        for (root, names, scope) in places {
            for rel in &names {
                let Some(doc) = out.read_json(HARNESS, &root, rel, true) else {
                    continue;
                };
                let source = root.source(rel);
                match doc.get("mcp") {
                    None | Some(Value::Null) => {}
                    Some(Value::Object(mcp)) => {
                        let (servers, newer_shape) = servers_of(mcp);
                        layers.push(Layer {
                            scope: scope.clone(),
                            source,
                            servers,
                            newer_shape,
                        });
                    }
                    Some(_) => out.error(
                        HARNESS,
                        source,
                        ReasonCode::InvalidConfig,
                        "\"mcp\" should be an object",
                    ),
                }
            }
        }
        // The last word on each name, across every file.
        let mut last: BTreeMap<String, (bool, &'static str, String)> = BTreeMap::new();
        for layer in &layers {
            if project_off && layer.scope == ConfigScope::Project {
                continue;
            }
            for (name, entry) in &layer.servers {
                if let Some((on, key)) = switch(entry, layer.newer_shape) {
                    last.insert(name.clone(), (on, key, layer.source.clone()));
                }
            }
        }
        for layer in &layers {
            let defined: Map<String, Value> = layer
                .servers
                .iter()
                .filter(|(_, entry)| !is_override(entry))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            out.add_servers(
                ctx,
                HARNESS,
                layer.scope.clone(),
                &layer.source,
                "mcp",
                Some(&Value::Object(defined)),
                EntryDialect::OpenCode,
                |found, _| {
                    if project_off && found.scope == ConfigScope::Project {
                        found.enablement = Enablement::Off(
                            ReasonCode::DisabledInConfig,
                            "OPENCODE_DISABLE_PROJECT_CONFIG is set, so project files are ignored"
                                .into(),
                        );
                        return;
                    }
                    if let Some((false, key, source)) = last.get(&found.name) {
                        let said = if *key == "disabled" {
                            "\"disabled\": true"
                        } else {
                            "\"enabled\": false"
                        };
                        found.enablement = Enablement::Off(
                            ReasonCode::DisabledInConfig,
                            format!("{said} in {source}"),
                        );
                    }
                },
            );
        }
    }
}
