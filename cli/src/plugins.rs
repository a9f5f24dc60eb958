//! `tether plugins [--load PATH]... [--json]`: the registered plugins, compiled
//! in or loaded from shared libraries.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;

/// List the registered plugins.
#[derive(Debug, Args)]
pub struct PluginsArgs {
    #[command(flatten)]
    plugins: crate::host::PluginArgs,
    #[command(flatten)]
    output: crate::flags::Output,
}

pub fn run(args: PluginsArgs) -> anyhow::Result<ExitCode> {
    let registry = match args.plugins.registry_or_say("tether plugins") {
        Ok(registry) => registry,
        Err(code) => return Ok(code),
    };
    let listing = registry.listing();
    let mut out = crate::term::stdout();
    if args.output.json {
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
