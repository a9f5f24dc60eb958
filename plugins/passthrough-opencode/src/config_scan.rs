//! OpenCode: `opencode.json` or `opencode.jsonc` (JSON with comments) in
//! `~/.config/opencode/` (or `$XDG_CONFIG_HOME/opencode/`, scope user), in the
//! project, and in the project's `.opencode/` (scope project). Servers are
//! `mcp` entries of `type` `local` (`command` array, `environment`) or
//! `remote` (`url`, `headers`), switched by `enabled`; the newer
//! `mcp.servers` shape uses `disabled`. Files merge in that order, so a later
//! file's `{"enabled": false}` for a name turns off a server an earlier file
//! defines; such an override-only entry adds no row of its own.
//! `permission` rules give each server row its `call_policy` (`policy.rs`).

use std::collections::BTreeMap;

use crate::policy;
use std::path::Path;

use serde_json::{Map, Value};
use tether_core::vocab::{CapabilityKind, ConfigScope, ReasonCode};
use tether_inventory::{
    ConfigRoot, ConfigScanner, Enablement, FoundCapability, Installed, ScanContext, ScanOutput,
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
                    found.installed = Installed::Yes;
                    out.push_capability(ctx, found);
                }
            }
        }
        let mut layers = Vec::new();
        let mut npm_plugins = NpmPlugins::default();
        let mut permissions = policy::Permissions::default();
        for (root, names, scope) in places {
            for rel in &names {
                let Some(doc) = out.read_json(HARNESS, &root, rel, true) else {
                    continue;
                };
                let source = root.source(rel);
                if !(project_off && scope == ConfigScope::Project) {
                    npm_plugins.add(&root, rel, &scope, &source, doc.get("plugin"));
                    permissions.absorb(&doc, &source);
                }
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
        npm_plugins.push(ctx, out);
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
                crate::DIALECT.entry,
                |found, _| {
                    found.call_policy = Some(permissions.predict(&found.name));
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

/// The `plugin` arrays of every file, merged as OpenCode merges them (one
/// entry per plugin, however it is written).
#[derive(Default)]
struct NpmPlugins {
    /// (what it names, scope, source file), in load order.
    specs: Vec<(PluginSpec, ConfigScope, String)>,
}

/// What one `plugin` entry names.
#[derive(Debug, Clone, PartialEq, Eq)]
enum PluginSpec {
    /// A folder or file (an absolute path, `./…` against the config file's
    /// folder, or a `file://` URL).
    Path(std::path::PathBuf),
    /// An npm package, `NAME` or `NAME@VERSION` (`@scope/name` too).
    Npm {
        name: String,
        version: Option<String>,
    },
}

/// Parses one `plugin` entry of the file at `rel` under `root`.
fn plugin_spec(root: &ConfigRoot, rel: &str, spec: &str) -> Option<PluginSpec> {
    let spec = spec.trim();
    if spec.is_empty() {
        return None;
    }
    let file_dir = root
        .dir()
        .join(rel)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| root.dir().to_path_buf());
    if let Some(path) = spec.strip_prefix("file://") {
        return Some(PluginSpec::Path(path.into()));
    }
    if spec.starts_with('/') {
        return Some(PluginSpec::Path(spec.into()));
    }
    if spec.starts_with("./") || spec.starts_with("../") {
        return Some(PluginSpec::Path(file_dir.join(spec)));
    }
    // `@scope/name@1.2.3`: the version follows the last `@` past the first
    // character.
    let first = spec.chars().next().map_or(0, char::len_utf8);
    let (name, version) = match spec[first..].rfind('@') {
        Some(at) => (&spec[..first + at], Some(spec[first + at + 1..].to_owned())),
        None => (spec, None),
    };
    Some(PluginSpec::Npm {
        name: name.to_owned(),
        version: version.filter(|v| !v.is_empty()),
    })
}

impl NpmPlugins {
    fn add(
        &mut self,
        root: &ConfigRoot,
        rel: &str,
        scope: &ConfigScope,
        source: &str,
        plugins: Option<&Value>,
    ) {
        for spec in plugins.and_then(Value::as_array).into_iter().flatten() {
            let Some(spec) = spec.as_str().and_then(|s| plugin_spec(root, rel, s)) else {
                continue;
            };
            let same = |(known, _, _): &(PluginSpec, ConfigScope, String)| match (known, &spec) {
                (PluginSpec::Path(a), PluginSpec::Path(b)) => {
                    a == b || std::fs::canonicalize(a).ok() == std::fs::canonicalize(b).ok()
                }
                (PluginSpec::Npm { name: a, .. }, PluginSpec::Npm { name: b, .. }) => a == b,
                _ => false,
            };
            // A later file's entry for the same package replaces an earlier one.
            self.specs.retain(|known| !same(known));
            self.specs.push((spec, scope.clone(), source.to_owned()));
        }
    }

    /// One plugin row each (verified on the pinned OpenCode 1.18.33): a path
    /// is installed when it exists; an npm package is installed into
    /// `$XDG_CACHE_HOME/opencode/packages/SPEC/node_modules/NAME` (SPEC is
    /// `NAME@VERSION`, or `NAME@latest`) the first time OpenCode starts with
    /// it, so before that nothing shows either way, and a SPEC folder
    /// without the package is an install that failed.
    fn push(self, ctx: &ScanContext, out: &mut ScanOutput) {
        let cache = ctx
            .env_dir("XDG_CACHE_HOME", ".cache")
            .join("opencode/packages");
        for (spec, scope, source) in self.specs {
            let (name, installed, settings) = match &spec {
                PluginSpec::Path(path) => {
                    let name = path
                        .file_name()
                        .and_then(|n| n.to_str())
                        .map(|n| n.rsplit_once('.').map_or(n, |(stem, _)| stem))
                        .unwrap_or("?")
                        .to_owned();
                    let installed = if path.exists() {
                        Installed::Yes
                    } else {
                        Installed::No(Some(format!(
                            "the plugin path {source} names does not exist here"
                        )))
                    };
                    (name, installed, vec!["from=path".to_owned()])
                }
                PluginSpec::Npm { name, version } => {
                    let folder = format!("{name}@{}", version.as_deref().unwrap_or("latest"));
                    let package = format!("{folder}/node_modules/{name}/package.json");
                    let installed = match out.read_json(HARNESS, &cache, &package, false) {
                        Some(manifest) => {
                            let mut settings = vec!["from=npm".to_owned()];
                            if let Some(v) = manifest.get("version").and_then(Value::as_str) {
                                settings.push(format!("version={v}"));
                            }
                            (Installed::Yes, settings)
                        }
                        None if cache.dir().join(&folder).is_dir() => (
                            Installed::No(Some(format!(
                                "OpenCode's install from npm failed: {} holds no {name}",
                                cache.source(&folder)
                            ))),
                            vec!["from=npm".to_owned()],
                        ),
                        None => (
                            Installed::Unknown(format!(
                                "OpenCode installs npm plugins when it starts; {} has no {name} yet",
                                cache.source("")
                            )),
                            vec!["from=npm".to_owned()],
                        ),
                    };
                    (name.clone(), installed.0, installed.1)
                }
            };
            let mut found =
                FoundCapability::new(CapabilityKind::Plugin, HARNESS, scope, &name, source);
            found.installed = installed;
            found.settings = settings;
            out.push_capability(ctx, found);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_entries_name_a_path_or_an_npm_package_and_its_version() {
        let root = ConfigRoot::new("/home/u/.config/opencode".into(), "~/.config/opencode");
        let spec = |s: &str| plugin_spec(&root, "opencode.json", s);
        let npm = |name: &str, version: Option<&str>| {
            Some(PluginSpec::Npm {
                name: name.into(),
                version: version.map(Into::into),
            })
        };
        assert_eq!(spec("is-odd"), npm("is-odd", None));
        assert_eq!(spec("is-odd@3.0.1"), npm("is-odd", Some("3.0.1")));
        assert_eq!(spec("@scope/pkg"), npm("@scope/pkg", None));
        assert_eq!(spec("@scope/pkg@1.2.3"), npm("@scope/pkg", Some("1.2.3")));
        assert_eq!(spec("ünï@1"), npm("ünï", Some("1")));
        assert_eq!(spec("x@"), npm("x", None));
        assert_eq!(
            spec("./mine"),
            Some(PluginSpec::Path("/home/u/.config/opencode/./mine".into()))
        );
        assert_eq!(
            spec("file:///opt/p"),
            Some(PluginSpec::Path("/opt/p".into()))
        );
        assert_eq!(spec("/opt/p"), Some(PluginSpec::Path("/opt/p".into())));
        assert_eq!(spec("  "), None);
    }
}
