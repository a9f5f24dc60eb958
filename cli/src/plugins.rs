//! `tether plugins [--load PATH]... [--json]`: the registered plugins, compiled
//! in or loaded from shared libraries.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use tether_core::registry::{PluginSource, Registry};

/// List the registered plugins.
#[derive(Debug, Args)]
pub struct PluginsArgs {
    /// Load a plugin shared library (repeatable).
    #[arg(long = "load", value_name = "PATH")]
    load: Vec<PathBuf>,
    /// Print one JSON document.
    #[arg(long)]
    json: bool,
}

/// The static plugins plus every `--load`ed library; a library that cannot be
/// loaded is an error that names it (the process stays up).
pub fn registry_with(loads: &[PathBuf]) -> anyhow::Result<Registry> {
    let mut registry = Registry::with_static()?;
    for path in loads {
        let plugin = tether_sdk::dynamic::load(path)?;
        registry.add(
            plugin,
            PluginSource::Dynamic {
                path: path.display().to_string(),
                abi_version: tether_sdk::dynamic::ABI_VERSION,
            },
        )?;
    }
    Ok(registry)
}

pub fn run(args: PluginsArgs) -> anyhow::Result<ExitCode> {
    let registry = match registry_with(&args.load) {
        Ok(registry) => registry,
        Err(err) => {
            errln!("tether plugins: {err:#}");
            return Ok(ExitCode::FAILURE);
        }
    };
    let listing = registry.listing();
    let mut out = crate::term::stdout();
    if args.json {
        serde_json::to_writer(&mut out, &listing)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "{:<22} {:<26} {:<12} {:<8} ABI",
            "PLUGIN", "AGENT KINDS", "HARNESS", "SOURCE"
        )?;
        for p in &listing.plugins {
            writeln!(
                out,
                "{:<22} {:<26} {:<12} {:<8} {}",
                p.name,
                p.agent_kinds.join(", "),
                p.drive_mode.as_str(),
                p.source.as_str(),
                p.abi_version
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
