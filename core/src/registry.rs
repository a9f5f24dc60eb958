//! The plugin registry: compiled-in plugins through `inventory`, plus plugins a
//! host adds at run time (a dynamic loader adds them the same way).
//!
//! A compiled-in plugin registers itself with [`register_plugin!`]; the binary
//! that wants it must link its crate (`use my_plugin as _;`).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use crate::observer::{Harness, PluginDescriptor, TransportObserver};

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
        $crate::inventory::submit! {
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
    /// Plugins that declared the agent kind [`ANY_KIND`], per harness.
    any_kind: BTreeMap<HarnessKey, usize>,
}

/// An agent kind a plugin may declare to handle every kind of its harness
/// that no other plugin names (the ACP plugin does: ACP is one protocol).
pub const ANY_KIND: &str = "*";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum HarnessKey {
    Acp,
    Passthrough,
}

impl From<Harness> for HarnessKey {
    fn from(h: Harness) -> Self {
        match h {
            Harness::Acp => HarnessKey::Acp,
            Harness::Passthrough => HarnessKey::Passthrough,
        }
    }
}

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
        let harness = HarnessKey::from(descriptor.harness);
        for kind in &descriptor.agent_kinds {
            let taken = if kind == ANY_KIND {
                self.any_kind.get(&harness)
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
                self.any_kind.insert(harness, index);
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

    /// The plugin handling an agent kind driven by `harness`: the plugin
    /// naming the kind, else the harness's [`ANY_KIND`] plugin.
    pub fn observer_for(
        &self,
        agent_kind: &str,
        harness: Harness,
    ) -> Option<&Arc<dyn TransportObserver>> {
        let by_name = self
            .by_kind
            .get(agent_kind)
            .filter(|&&i| self.plugins[i].descriptor.harness == harness);
        by_name
            .or_else(|| self.any_kind.get(&HarnessKey::from(harness)))
            .map(|&i| &self.plugins[i].observer)
    }

    /// Every registered plugin, in registration order.
    pub fn plugins(&self) -> &[RegisteredPlugin] {
        &self.plugins
    }
}
