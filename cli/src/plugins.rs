//! `tether plugins [--load PATH]... [--json]`: the registered plugins, compiled
//! in or loaded from shared libraries.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::json;
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
            eprintln!("tether plugins: {err:#}");
            return Ok(ExitCode::FAILURE);
        }
    };
    let rows: Vec<_> = registry
        .plugins()
        .iter()
        .map(|p| {
            let (source, path, abi) = match &p.source {
                PluginSource::Static => ("static", None, tether_sdk::dynamic::ABI_VERSION),
                PluginSource::Dynamic { path, abi_version } => {
                    ("dynamic", Some(path.clone()), *abi_version)
                }
            };
            json!({
                "name": p.descriptor.name,
                "agent_kinds": p.descriptor.agent_kinds,
                "harness": p.descriptor.harness,
                "version": p.descriptor.version,
                "source": source,
                "path": path,
                "abi_version": abi,
            })
        })
        .collect();
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &json!({"schema_version": 1, "plugins": rows}))?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "{:<22} {:<26} {:<12} {:<8} ABI",
            "PLUGIN", "AGENT KINDS", "HARNESS", "SOURCE"
        )?;
        for r in &rows {
            let kinds: Vec<&str> = r["agent_kinds"]
                .as_array()
                .map(|a| a.iter().filter_map(|k| k.as_str()).collect())
                .unwrap_or_default();
            writeln!(
                out,
                "{:<22} {:<26} {:<12} {:<8} {}",
                r["name"].as_str().unwrap_or(""),
                kinds.join(", "),
                r["harness"].as_str().unwrap_or(""),
                r["source"].as_str().unwrap_or(""),
                r["abi_version"]
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
