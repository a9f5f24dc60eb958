//! The `tether` command: thin glue over the library crates.
//!
//! Exit codes: 0 success (for `probe`: a verdict was reached; for
//! `endpoint-test`: the server passed), 1 any other failure (for
//! `endpoint-test`: the server failed; for `inventory`: a configuration file
//! could not be used or a tested server failed; for `serve`: the store could
//! not be opened or the address not bound; for `endpoint-test
//! --fail-on-change`: a tool's definition differs from its pin, or the pins
//! could not be checked; for `pins`: the store failed, or no such server or
//! tool), 2 usage error, 3 (`probe`) the agent could not start or
//! initialize, or refused the session. `serve` exits 0 when stopped with
//! Ctrl-C.

#[macro_use]
mod term;
mod check;
mod collect;
mod endpoint_test;
mod exit;
mod flags;
mod generate;
mod history;
mod host;
mod inventory;
mod mcp;
mod pins;
mod plugins;
mod probe;
mod records;
mod run;
mod serve;
mod service;
mod sessions;
mod tap;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

/// What the top of `tether --help` says: what Tether answers, in a user's
/// words (not the crate's description, which is about the code).
const ABOUT: &str = "Which MCP servers did your AI coding agent really get, how far did each get, and why did it stop? \
Tether answers from evidence: your harnesses' configuration, their session records and telemetry, and its own probes.";

/// What follows the command list: where a user starts.
const AFTER_HELP: &str = "Start with `tether inventory` (what is configured, and why a server is held back), then \
`tether sessions list` (what your sessions really got). `tether explain CODE` says what any status or reason means.";

/// `tether --version`: the version and, where the build knew it, the commit
/// it was built from, with that commit's date (`cli/build.rs`).
const VERSION: &str = if env!("TETHER_COMMIT").is_empty() {
    env!("CARGO_PKG_VERSION")
} else {
    concat!(env!("CARGO_PKG_VERSION"), " (", env!("TETHER_COMMIT"), ")")
};

#[derive(Debug, Parser)]
#[command(name = "tether", version = VERSION, about = ABOUT, long_about = None, after_help = AFTER_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Every MCP server your harnesses are configured with, how far the configuration takes
    /// each, and why it stops.
    Inventory(inventory::InventoryArgs),
    /// The sessions your harnesses wrote to disk, each as a capability matrix: list, show ID,
    /// import into a store (exit 0 done, 1 store failure or no such session, 2 usage).
    Sessions(sessions::SessionsArgs),
    /// Run a harness headless (CI, scripts) with Tether around it: its stdio passed on byte for
    /// byte (its stdout read, as `check FILE` reads one, where it is no terminal), its
    /// session's matrix on stderr, `--require` evaluated (exit: the harness's when it failed,
    /// 4 a requirement not met, else 0).
    #[command(after_help = format!("{}\n\n{}", run::RUN_AFTER_HELP, check::STAGES_HELP))]
    Run(run::RunArgs),
    /// Check a saved session file or a stored session against requirements, for a person or a
    /// CI system (human, json, junit, github, markdown; exit 0 met, 4 not met, 2 usage).
    #[command(after_help = format!("{}\n\n{}", check::CHECK_AFTER_HELP, check::STAGES_HELP))]
    Check(check::CheckArgs),
    /// Receive your harnesses' own OpenTelemetry (OTLP/HTTP) on 127.0.0.1; `--print-env HARNESS`
    /// says what to set (exit 0 on Ctrl-C, 1 if it cannot listen, 2 usage).
    Collect(collect::CollectArgs),
    /// Pass a harness's model traffic through, unchanged, and see which MCP tools the model was
    /// really offered and called (opt-in; `--print-env HARNESS`; exit 0 on Ctrl-C, 1 cannot listen, 2 usage).
    #[command(after_help = tap::TAP_AFTER_HELP)]
    Tap(tap::TapArgs),
    /// Probe an ACP agent: does it really attach to an injected MCP server, and how far does it get?
    #[command(after_help = probe::PROBE_AFTER_HELP)]
    Probe(probe::ProbeArgs),
    /// Test one MCP server: a bounded initialize + tools/list, its tools compared with their
    /// pins (exit 0 passed, 1 failed, 2 usage).
    EndpointTest(endpoint_test::EndpointTestArgs),
    /// The tool definition pins (hashes of each tool's definition, per server): list, accept
    /// a change, forget a server (exit 0 done, 1 store failure or no such pin, 2 usage).
    Pins(pins::PinsArgs),
    /// Serve the live status view (a local web page and JSON API) over a store.
    Serve(serve::ServeArgs),
    /// Run `tether collect` (and optionally `tether serve`) as a per-user service: install,
    /// uninstall, status (systemd user units, or launchd agents).
    Service(service::ServiceArgs),
    /// Show stored attachment histories (from a store: a SQLite file or a PostgreSQL database).
    History(history::HistoryArgs),
    /// Serve Tether to an agent as an MCP server over stdio: why is a server or tool missing,
    /// what is configured, what did sessions show (read-only; `--print-config HARNESS`).
    Mcp(mcp::McpArgs),
    /// What a status, probe verdict, reason code or stage means, and what to check next
    /// (offline; exit 0 explained, 1 unknown code).
    Explain {
        /// The code (`delivered`, `session_refused`, `auth_required`…); without it, every
        /// code is listed.
        code: Option<String>,
        /// Print every entry as the user guide's reference page (Markdown).
        #[arg(long, conflicts_with = "code")]
        markdown: bool,
        /// Print the command-line reference (every command and flag) as Markdown.
        #[arg(long, hide = true, conflicts_with_all = ["code", "markdown"])]
        cli_markdown: bool,
        /// Print the exit-code page (every command's codes) as Markdown.
        #[arg(long, hide = true, conflicts_with_all = ["code", "markdown", "cli_markdown"])]
        exit_codes: bool,
    },
    /// Print the JSON Schema (draft 2020-12) of a public document.
    Schema {
        /// Which document.
        #[arg(value_enum)]
        document: SchemaDocument,
    },
    /// List the registered plugins (compiled in, or loaded with --load).
    Plugins(plugins::PluginsArgs),
    /// Print a shell's completion script (what the release archive ships).
    #[command(hide = true)]
    Completions(generate::CompletionsArgs),
    /// Print the man page, roff (what the release archive ships).
    #[command(hide = true)]
    Man,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum SchemaDocument {
    /// A session's AttachmentHistory (as stored and as `tether history --json` prints).
    History,
    /// One AttachmentAttempt (the `report` of a probe).
    Attempt,
    /// The document `tether probe --json` prints.
    ProbeReport,
    /// The document `tether endpoint-test --json` prints.
    EndpointTest,
    /// The document `tether inventory --json` prints.
    Inventory,
    /// The document `tether inventory --changes --json` prints.
    InventoryChanges,
    /// The document `tether plugins --json` prints.
    Plugins,
    /// The document `tether collect --json` prints.
    Collect,
    /// The document `tether sessions list --json` prints.
    Sessions,
    /// The document `tether sessions show ID --json` prints.
    Session,
    /// The status API's session list (`GET /api/v1/sessions`, `sessions` events).
    StatusSessions,
    /// The status API's session document (`GET /api/v1/sessions/{id}`, `status` events).
    StatusSession,
    /// The status API's recent-output answer.
    StatusRecentOutput,
    /// The status API's copy-safe diagnostics.
    StatusDiagnostics,
    /// The status API's error body.
    StatusError,
    /// The fleet page's session list (`GET /api/v1/fleet/sessions`).
    StatusFleetSessions,
    /// The fleet page's server view (`GET /api/v1/fleet/servers`).
    StatusFleetServers,
    /// The display vocabulary the status page carries (labels, colors,
    /// sentences: core's, for renderers that are not Rust).
    StatusDisplay,
    /// The document `tether check --format json` prints.
    Check,
}

/// The command line, with every list of harnesses in its help taken from
/// the plugins this binary holds (never written down here).
fn command() -> clap::Command {
    use clap::CommandFactory;
    let registry = tether_core::registry::Registry::with_static().ok();
    let harnesses = |keep: &dyn Fn(&tether_core::registry::Harness) -> bool| -> String {
        let mut kinds: Vec<String> = registry
            .iter()
            .flat_map(|r| r.harnesses())
            .filter(|h| keep(h))
            .map(|h| String::from(h.id))
            .collect();
        kinds.sort();
        kinds.dedup();
        kinds.join(", ")
    };
    let target = tether_core::telemetry::TelemetryTarget {
        endpoint: "http://127.0.0.1:4318".into(),
        authorization: String::new(),
    };
    let telemetry = harnesses(&|h| {
        h.roles
            .telemetry
            .is_some_and(|t| t.telemetry_setup(&target).is_some())
    });
    let clis = harnesses(&|h| h.strategy.is_some());
    Cli::command()
        .mut_subcommand("collect", |c| {
            c.mut_arg("print_env", |a| {
                a.help(format!(
                    "Print what HARNESS needs to send here ({telemetry}), then receive"
                ))
            })
        })
        // `tether pins --db X list` and `tether pins list --db X` alike.
        .mut_subcommand("pins", |c| c.mut_arg("db", |a| a.global(true)))
        .mut_subcommand("probe", |c| {
            c.mut_arg("passthrough", |a| {
                a.help(format!(
                    "Probe a CLI run as a plain process ({clis}) instead of an ACP agent"
                ))
            })
        })
}

fn main() -> ExitCode {
    // Every first-party plugin in this binary, registered (one list: the
    // first-party crate's).
    tether_first_party::link();
    let cli = {
        use clap::FromArgMatches;
        let matches = command().get_matches();
        Cli::from_arg_matches(&matches).unwrap_or_else(|err| err.exit())
    };
    // Daemons that agents or servers start are handed to us when their parent
    // exits, so every sweep can find and reap them (Linux; a no-op elsewhere).
    if let Err(err) = tether_process::become_subreaper() {
        tracing::debug!(%err, "cannot become a child subreaper");
    }
    // Logs go to stderr, off unless TETHER_LOG asks (for example TETHER_LOG=debug).
    // rmcp logs whole messages from info down (a server's instructions,
    // tool definitions, a call's arguments and results): it stays at warn
    // unless TETHER_LOG names it.
    let mut filter = tracing_subscriber::EnvFilter::try_from_env("TETHER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("off"));
    if std::env::var("TETHER_LOG").is_ok_and(|v| !v.trim().is_empty() && !v.contains("rmcp"))
        && let Ok(quiet) = "rmcp=warn".parse()
    {
        filter = filter.add_directive(quiet);
    }
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
    match run(cli) {
        Ok(code) => code,
        // A reader that stopped reading (`tether explain | head -1`): done.
        Err(err) if exit::is_closed_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            errln!("tether: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// `tether explain`.
fn explain(code: Option<&str>, markdown: bool, cli_markdown: bool) -> anyhow::Result<ExitCode> {
    use tether_words::explain;
    let mut out = crate::term::stdout();
    if cli_markdown {
        out.write_all(cli_reference().as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    if markdown {
        out.write_all(explain::markdown().as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(code) = code else {
        let mut family = None;
        for entry in explain::all() {
            if family != Some(entry.family) {
                family = Some(entry.family);
                writeln!(out, "\n{}:", entry.family.title())?;
            }
            writeln!(out, "  {}", entry.code)?;
        }
        writeln!(
            out,
            "\n`tether explain CODE` says what one means and what to check."
        )?;
        return Ok(ExitCode::SUCCESS);
    };
    let entries = explain::lookup(code);
    if entries.is_empty() {
        let codes: std::collections::BTreeSet<&str> =
            explain::all().iter().map(|e| e.code).collect();
        errln!("tether explain: no status, verdict, reason code or stage is called {code:?}");
        // A slip of one code first; else every code it is part of, or that
        // is part of it.
        if let Some(meant) = tether_words::near::nearest(code, codes.iter().copied()) {
            errln!("  did you mean {meant:?}?");
        } else {
            let near: Vec<&str> = codes
                .into_iter()
                .filter(|c| c.contains(code) || code.contains(c))
                .collect();
            if !near.is_empty() {
                errln!("  codes that hold it: {}", near.join(", "));
            }
        }
        errln!("  `tether explain` lists every code");
        return Ok(ExitCode::from(exit::Exit::Usage));
    }
    for (i, entry) in entries.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        out.write_all(explain::text(entry).as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Every command and flag, from the parser itself, as the user guide's
/// command-line reference: it cannot fall behind the code.
fn cli_reference() -> String {
    use std::fmt::Write as _;
    fn one(out: &mut String, cmd: &clap::Command, path: &str) {
        if cmd.is_hide_set() {
            return;
        }
        let _ = write!(out, "\n## `{path}`\n\n");
        if path == "tether" {
            let _ = write!(
                out,
                "Which MCP servers did an agent really get, how far did each get, and why did it stop?\n\n"
            );
        } else if let Some(about) = cmd.get_long_about().or(cmd.get_about()) {
            let _ = write!(out, "{about}\n\n");
        }
        let args: Vec<&clap::Arg> = cmd
            .get_arguments()
            .filter(|a| !a.is_hide_set() && a.get_id() != "help" && a.get_id() != "version")
            .collect();
        for arg in args {
            let name = match (arg.get_long(), arg.get_short()) {
                (Some(long), Some(short)) => format!("-{short}, --{long}"),
                (Some(long), None) => format!("--{long}"),
                (None, Some(short)) => format!("-{short}"),
                (None, None) => arg.get_id().as_str().to_uppercase(),
            };
            let value = arg
                .get_value_names()
                .map(|v| v.iter().map(|n| format!(" <{n}>")).collect::<String>())
                .filter(|_| arg.get_long().is_some() && arg.get_action().takes_values())
                .unwrap_or_default();
            let mut help = arg
                .get_long_help()
                .or(arg.get_help())
                .map(|h| h.to_string().replace('\n', " "))
                .unwrap_or_default();
            if !help.is_empty() && !help.ends_with(['.', ')', ':']) {
                help.push('.');
            }
            if let Some(default) = arg.get_default_values().first().and_then(|d| d.to_str())
                && arg.get_action().takes_values()
            {
                help.push_str(&format!(" Default: `{default}`."));
            }
            let values: Vec<String> = arg
                .get_possible_values()
                .iter()
                .filter(|v| !v.is_hide_set())
                .map(|v| format!("`{}`", v.get_name()))
                .collect();
            let values = if values.is_empty() || arg.get_long().is_some() && values.len() < 3 {
                String::new()
            } else {
                format!(" One of: {}.", values.join(", "))
            };
            let _ = writeln!(out, "- `{name}{value}`: {help}{values}");
        }
        for sub in cmd.get_subcommands() {
            if sub.get_name() == "help" {
                continue;
            }
            one(out, sub, &format!("{path} {}", sub.get_name()));
        }
    }
    let mut out = String::from(
        "# Command-line reference\n\n<!-- Generated by `tether explain --cli-markdown` from the parser itself. \
         Do not edit: `TETHER_UPDATE_BOOK=1 cargo test -p tether-tests --test book` rewrites it. -->\n\n\
         Every command and flag, as `tether --help` knows them. Exit codes are in the \
         [start chapter](../start.md#exit-codes).\n",
    );
    one(&mut out, &command(), "tether");
    out
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Probe(args) => probe::run(args),
        Command::EndpointTest(args) => endpoint_test::run(args),
        Command::Pins(args) => pins::run(args),
        Command::History(args) => history::run(args),
        Command::Inventory(args) => inventory::run(args),
        Command::Plugins(args) => plugins::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Service(args) => service::run(args),
        Command::Collect(args) => collect::run(args),
        Command::Tap(args) => tap::run(args),
        Command::Sessions(args) => sessions::run(args),
        Command::Run(args) => run::run(args),
        Command::Check(args) => check::run(args),
        Command::Mcp(args) => mcp::run(args),
        Command::Completions(args) => generate::completions(args, command()),
        Command::Man => generate::man(command()),
        Command::Explain {
            exit_codes: true, ..
        } => {
            crate::term::stdout().write_all(exit::markdown().as_bytes())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Explain {
            code,
            markdown,
            cli_markdown,
            ..
        } => explain(code.as_deref(), markdown, cli_markdown),
        Command::Schema { document } => {
            let schema = match document {
                SchemaDocument::History => tether_core::schema::history_schema(),
                SchemaDocument::Attempt => tether_core::schema::attempt_schema(),
                SchemaDocument::ProbeReport => tether_core::schema::probe_report_schema(),
                SchemaDocument::EndpointTest => tether_core::schema::endpoint_test_schema(),
                SchemaDocument::Inventory => tether_core::schema::inventory_schema(),
                SchemaDocument::InventoryChanges => tether_core::schema::inventory_changes_schema(),
                SchemaDocument::Plugins => tether_core::schema::plugins_schema(),
                SchemaDocument::Collect => tether_core::schema::collect_schema(),
                SchemaDocument::Sessions => tether_core::schema::sessions_schema(),
                SchemaDocument::Session => tether_core::schema::session_schema(),
                SchemaDocument::StatusSessions => status_schema("status-sessions"),
                SchemaDocument::StatusSession => status_schema("status-session"),
                SchemaDocument::StatusRecentOutput => status_schema("status-recent-output"),
                SchemaDocument::StatusDiagnostics => status_schema("status-diagnostics"),
                SchemaDocument::StatusError => status_schema("status-error"),
                SchemaDocument::StatusFleetSessions => status_schema("status-fleet-sessions"),
                SchemaDocument::StatusFleetServers => status_schema("status-fleet-servers"),
                SchemaDocument::StatusDisplay => status_schema("status-display"),
                SchemaDocument::Check => {
                    tether_core::schema::schema_of::<check::document::CheckDocument>("check.json")
                }
            };
            let mut out = crate::term::stdout();
            serde_json::to_writer_pretty(&mut out, &schema)?;
            writeln!(out)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn status_schema(name: &str) -> serde_json::Value {
    tether_web::documents::schemas()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, schema)| schema)
        .unwrap_or_default()
}
