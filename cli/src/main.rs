//! The `tether` command: thin glue over the library crates.
//!
//! Exit codes: 0 success, 2 usage error (clap's own), 1 any other failure.

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

// Link the first-party plugins so their `inventory` registrations are present.
use tether_acp_structured as _;
use tether_passthrough_claude as _;
use tether_passthrough_codex as _;

/// Which MCP servers did an agent really get, how far did each get, and why did it stop?
#[derive(Debug, Parser)]
#[command(name = "tether", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the JSON Schema (draft 2020-12) of a public document.
    Schema {
        /// Which document.
        #[arg(value_enum)]
        document: SchemaDocument,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum SchemaDocument {
    /// A session's AttachmentHistory (as stored and as `tether history --json` prints).
    History,
    /// One AttachmentAttempt (the `report` of a probe).
    Attempt,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("tether: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Schema { document } => {
            let schema = match document {
                SchemaDocument::History => tether_core::schema::history_schema(),
                SchemaDocument::Attempt => tether_core::schema::attempt_schema(),
            };
            let mut out = std::io::stdout().lock();
            serde_json::to_writer_pretty(&mut out, &schema)?;
            writeln!(out)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
