//! The plugin registry: compiled-in plugins through `inventory`, plus plugins a
//! host adds at run time (a dynamic loader adds them the same way).
//!
//! A compiled-in plugin registers itself with [`register_plugin!`](crate::register_plugin); the binary
//! that wants it must link its crate (`use my_plugin as _;`).
//!
//! [`Registry::harnesses`] gives each passthrough plugin by its `HarnessId`,
//! with its strategy: the session records, the collector, the CLI's harness
//! lists and `tether mcp` read harnesses from it, never from a list.

use std::collections::BTreeMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::harness::HarnessId;
use crate::observer::TransportObserver;
use crate::plan::{DriveMode, PluginDescriptor};

/// A compiled-in plugin, collected by `inventory`.
pub struct PluginRegistration {
    /// Unique plugin name (must match the descriptor's).
    pub name: &'static str,
    /// Builds the plugin.
    pub build: fn() -> Box<dyn TransportObserver>,
}

inventory::collect!(PluginRegistration);

/// Registers a compiled-in plugin: `register_plugin!("name", || Box::new(MyPlugin))`.
#[macro_export]
macro_rules! register_plugin {
    ($name:expr, $build:expr) => {
        $crate::__private::inventory::submit! {
            $crate::registry::PluginRegistration { name: $name, build: $build }
        }
    };
}

/// Where a registered plugin came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum PluginSource {
    /// Compiled into this binary.
    Static,
    /// Loaded from a shared library at run time.
    Dynamic {
        /// The library's path, as given.
        path: String,
        /// The ABI version it declared.
        abi_version: u32,
    },
}

/// A plugin the registry holds.
#[derive(Clone)]
pub struct RegisteredPlugin {
    /// Its descriptor.
    pub descriptor: PluginDescriptor,
    /// Where it came from.
    pub source: PluginSource,
    /// The plugin itself.
    pub observer: Arc<dyn TransportObserver>,
}

impl std::fmt::Debug for RegisteredPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredPlugin")
            .field("descriptor", &self.descriptor)
            .field("source", &self.source)
            .finish()
    }
}

/// Why a registry could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// A name was asked for that nothing registered.
    #[error("no plugin named {name:?} is registered; known plugins: {known}")]
    UnknownPlugin {
        /// The name asked for.
        name: String,
        /// Comma-separated known names.
        known: String,
    },
    /// Two plugins share a name.
    #[error("a plugin named {name:?} is already registered")]
    DuplicateName {
        /// The name.
        name: String,
    },
    /// Two plugins claim the same agent kind.
    #[error("agent kind {kind:?} is already handled by plugin {by:?}")]
    DuplicateKind {
        /// The kind.
        kind: String,
        /// The plugin that has it.
        by: String,
    },
}

/// The plugins a host selected, indexed by agent kind.
#[derive(Clone, Default, Debug)]
pub struct Registry {
    plugins: Vec<RegisteredPlugin>,
    by_kind: BTreeMap<String, usize>,
    /// Plugins that declared the agent kind [`ANY_KIND`], per drive mode.
    any_kind: BTreeMap<DriveMode, usize>,
}

/// One harness a registry holds ([`Registry::harnesses`]).
#[derive(Clone)]
pub struct Harness<'r> {
    /// Its one name (the plugin's first agent kind).
    pub id: HarnessId,
    /// The plugin.
    pub plugin: &'r RegisteredPlugin,
    /// What starts it (`tether probe --passthrough`), where its plugin can.
    pub strategy: Option<&'r dyn crate::passthrough::PassthroughStrategy>,
    /// The roles its plugin has (records, telemetry, census, last mile,
    /// set-up, model tap), each its own trait.
    pub roles: crate::harness::Roles<'r>,
}

/// An agent kind a plugin may declare to handle every kind of its drive mode
/// that no other plugin names (the ACP plugin does: ACP is one protocol).
pub const ANY_KIND: &str = "*";

impl Registry {
    /// A registry with no plugins: every kind gets `no_observer` / `no_strategy`.
    pub fn empty() -> Self {
        Registry::default()
    }

    /// Every compiled-in plugin linked into this binary, in name order.
    pub fn with_static() -> Result<Self, RegistryError> {
        let mut registrations: Vec<&PluginRegistration> =
            inventory::iter::<PluginRegistration>.into_iter().collect();
        registrations.sort_by_key(|r| r.name);
        let mut registry = Registry::empty();
        for r in registrations {
            registry.add(Arc::from((r.build)()), PluginSource::Static)?;
        }
        Ok(registry)
    }

    /// Only the compiled-in plugins named, in the order given.
    pub fn select(names: &[&str]) -> Result<Self, RegistryError> {
        let all: Vec<&PluginRegistration> =
            inventory::iter::<PluginRegistration>.into_iter().collect();
        let mut registry = Registry::empty();
        for name in names {
            let Some(r) = all.iter().find(|r| r.name == *name) else {
                let mut known: Vec<&str> = all.iter().map(|r| r.name).collect();
                known.sort_unstable();
                return Err(RegistryError::UnknownPlugin {
                    name: (*name).to_owned(),
                    known: known.join(", "),
                });
            };
            registry.add(Arc::from((r.build)()), PluginSource::Static)?;
        }
        Ok(registry)
    }

    /// Adds a plugin; a name or agent kind may be taken only once.
    pub fn add(
        &mut self,
        observer: Arc<dyn TransportObserver>,
        source: PluginSource,
    ) -> Result<(), RegistryError> {
        let descriptor = observer.descriptor();
        if self
            .plugins
            .iter()
            .any(|p| p.descriptor.name == descriptor.name)
        {
            return Err(RegistryError::DuplicateName {
                name: descriptor.name,
            });
        }
        let mode = descriptor.drive_mode;
        for kind in &descriptor.agent_kinds {
            let taken = if kind == ANY_KIND {
                self.any_kind.get(&mode)
            } else {
                self.by_kind.get(kind)
            };
            if let Some(&i) = taken {
                return Err(RegistryError::DuplicateKind {
                    kind: kind.clone(),
                    by: self.plugins[i].descriptor.name.clone(),
                });
            }
        }
        let index = self.plugins.len();
        for kind in &descriptor.agent_kinds {
            if kind == ANY_KIND {
                self.any_kind.insert(mode, index);
            } else {
                self.by_kind.insert(kind.clone(), index);
            }
        }
        self.plugins.push(RegisteredPlugin {
            descriptor,
            source,
            observer,
        });
        Ok(())
    }

    /// The plugin handling an agent kind driven by `mode`: the plugin
    /// naming the kind, else the mode's [`ANY_KIND`] plugin.
    pub fn observer_for(
        &self,
        agent_kind: &str,
        mode: DriveMode,
    ) -> Option<&Arc<dyn TransportObserver>> {
        let by_name = self
            .by_kind
            .get(agent_kind)
            .filter(|&&i| self.plugins[i].descriptor.drive_mode == mode);
        by_name
            .or_else(|| self.any_kind.get(&mode))
            .map(|&i| &self.plugins[i].observer)
    }

    /// Every registered plugin, in registration order.
    pub fn plugins(&self) -> &[RegisteredPlugin] {
        &self.plugins
    }

    /// Every harness: each passthrough plugin with a strategy or a role,
    /// by the name its first agent kind gives (a plugin whose first kind is
    /// no harness name is left out), in registration order.
    pub fn harnesses(&self) -> Vec<Harness<'_>> {
        self.plugins
            .iter()
            .filter(|p| p.descriptor.drive_mode == DriveMode::Passthrough)
            .filter_map(|plugin| {
                let id = HarnessId::new(plugin.descriptor.agent_kinds.first()?).ok()?;
                let strategy = plugin.observer.passthrough();
                let roles = plugin.observer.roles();
                if strategy.is_none() && roles.is_empty() {
                    return None;
                }
                Some(Harness {
                    id,
                    plugin,
                    strategy,
                    roles,
                })
            })
            .collect()
    }

    /// The harness named `id` (an agent kind a passthrough plugin names
    /// first), if this registry holds it.
    pub fn harness(&self, id: &str) -> Option<Harness<'_>> {
        self.harnesses().into_iter().find(|h| h.id == id)
    }

    /// The plugin listing document (`tether plugins --json`).
    pub fn listing(&self) -> PluginListing {
        PluginListing {
            schema_version: PLUGIN_LISTING_SCHEMA_VERSION,
            plugins: self
                .plugins
                .iter()
                .map(|p| {
                    let (source, path, abi_version) = match &p.source {
                        PluginSource::Static => (PluginOrigin::Static, None, PLUGIN_ABI_VERSION),
                        PluginSource::Dynamic { path, abi_version } => {
                            (PluginOrigin::Dynamic, Some(path.clone()), *abi_version)
                        }
                    };
                    PluginEntry {
                        name: p.descriptor.name.clone(),
                        agent_kinds: p.descriptor.agent_kinds.clone(),
                        drive_mode: p.descriptor.drive_mode,
                        version: p.descriptor.version.clone(),
                        source,
                        path,
                        abi_version,
                    }
                })
                .collect(),
        }
    }
}

/// The version of the dynamic plugin ABI this build speaks (the first field
/// of a plugin library's table; see `tether_sdk::dynamic`).
pub const PLUGIN_ABI_VERSION: u32 = 4;

/// The version of the plugin listing this build writes.
pub const PLUGIN_LISTING_SCHEMA_VERSION: u32 = 1;

/// `tether plugins --json`: exactly one document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "PluginListing")]
#[non_exhaustive]
pub struct PluginListing {
    /// The document's schema version.
    pub schema_version: u32,
    /// Every registered plugin, in registration order.
    pub plugins: Vec<PluginEntry>,
}

/// One registered plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct PluginEntry {
    /// Unique plugin name.
    pub name: String,
    /// The agent kinds it handles (`*`: every kind of its drive mode no other plugin names).
    pub agent_kinds: Vec<String>,
    /// How those agents are driven: acp or passthrough.
    #[serde(rename = "harness")]
    pub drive_mode: DriveMode,
    /// The plugin's own version.
    pub version: String,
    /// Compiled in (`static`) or loaded from a shared library (`dynamic`).
    pub source: PluginOrigin,
    /// The library's path, for a dynamic plugin.
    pub path: Option<String>,
    /// The ABI version it speaks.
    pub abi_version: u32,
}

/// Where a listed plugin came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PluginOrigin {
    /// Compiled into this binary.
    Static,
    /// Loaded from a shared library at run time.
    Dynamic,
}

impl PluginOrigin {
    /// `static` or `dynamic`, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            PluginOrigin::Static => "static",
            PluginOrigin::Dynamic => "dynamic",
        }
    }
}
