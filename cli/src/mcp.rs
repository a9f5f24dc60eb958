//! `tether mcp`: Tether as an MCP server over stdio, so that an agent can
//! ask why a capability was or was not there. Built with rmcp. Read-only and
//! metadata-only: it answers from what `tether inventory` and `tether
//! sessions` read (configuration files, the harnesses' session records, the
//! default store), all of it already sanitized, and never starts a server
//! unless it was started with `--allow-test`. Its answers are short text in
//! the words the CLI uses; their reason codes are `tether explain`'s.
//!
//! `--print-config HARNESS` prints what adds it to a harness, and exits.
//! Exit codes: 0 the client hung up (or the config was printed), 1 stdio
//! failed, 2 usage error.

use crate::exit::Exit;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};
use tether_core::history::{AttachmentAttempt, ServerAttachment};
use tether_core::inventory::{InventoryDocument, InventoryRow};
use tether_core::model::Timestamp;
use tether_core::registry::Registry;
use tether_core::vocab::{CapabilityKind, DisplayStatus, StageState, Trigger};

/// Answers are cut here (with a note saying how to narrow the question).
const MAX_ANSWER_BYTES: usize = 12 * 1024;

/// Serve Tether to an agent as an MCP server over stdio: why is a server or
/// tool missing, what is configured, what did sessions show.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Print what adds `tether mcp` to this harness (as `tether inventory`
    /// names it), and exit.
    #[arg(long, value_name = "HARNESS")]
    print_config: Option<String>,
    /// The project whose project-scope configuration is read (default: the
    /// directory the agent starts it in).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    // The store's sessions count too (collected live, or imported).
    #[command(flatten)]
    store: crate::host::StoreArgs,
    /// Let the `inventory` tool run endpoint tests when asked (`test`):
    /// that starts the configured servers. Off unless given.
    #[arg(long)]
    allow_test: bool,
}

pub fn run(args: McpArgs) -> anyhow::Result<ExitCode> {
    if let Some(harness) = &args.print_config {
        return Ok(match print_config(harness) {
            Some(text) => {
                let mut out = crate::term::stdout();
                std::io::Write::write_all(&mut out, text.as_bytes())?;
                std::io::Write::flush(&mut out)?;
                ExitCode::SUCCESS
            }
            None => {
                let known: Vec<String> = server_setups().into_iter().map(|(k, _)| k).collect();
                errln!(
                    "tether mcp: no configuration for {harness:?}{}; known: {}",
                    meant(harness, &known),
                    known.join(", ")
                );
                ExitCode::from(Exit::Usage)
            }
        });
    }
    let project = match &args.project {
        Some(dir) if !dir.is_dir() => {
            errln!("tether mcp: --project {} is not a directory", dir.display());
            return Ok(ExitCode::from(Exit::Usage));
        }
        Some(dir) => Some(std::path::absolute(dir)?),
        None => std::env::current_dir().ok(),
    };
    let db = match args.store.at() {
        // Stdout is the protocol: the store is named on stderr, as always.
        Ok(at) => {
            at.announce("tether mcp");
            at
        }
        Err(err) => {
            errln!("tether mcp: {err}");
            return Ok(ExitCode::from(Exit::Usage));
        }
    };
    let server = TetherMcp(Arc::new(Sources {
        project,
        db,
        allow_test: args.allow_test,
    }));
    let runtime = crate::host::runtime()?;
    runtime.block_on(async {
        match server.serve(rmcp::transport::stdio()).await {
            Ok(running) => {
                let _ = running.waiting().await;
                Ok(ExitCode::SUCCESS)
            }
            Err(err) => {
                errln!("tether mcp: {err}");
                Ok(ExitCode::FAILURE)
            }
        }
    })
}

/// Where the answers come from.
struct Sources {
    project: Option<PathBuf>,
    db: crate::host::StoreAt,
    allow_test: bool,
}

#[derive(Clone)]
struct TetherMcp(Arc<Sources>);

/// What adds `tether mcp` to each harness whose plugin says how, by the
/// name `tether inventory` gives it.
fn server_setups() -> Vec<(String, tether_core::passthrough::ServerSetup)> {
    let exe = std::env::current_exe()
        .ok()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "tether".to_owned());
    let Ok(registry) = Registry::with_static() else {
        return Vec::new();
    };
    let mut out: Vec<(String, tether_core::passthrough::ServerSetup)> = registry
        .harnesses()
        .into_iter()
        .filter_map(|h| {
            let setup = h
                .roles
                .setup?
                .server_setup("tether", &exe, &["mcp".to_owned()])?;
            Some((String::from(h.id), setup))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// What adds `tether mcp` to `harness`: its own command where it has one,
/// and the block for its configuration file. Tether writes none of them.
fn print_config(harness: &str) -> Option<String> {
    let (_, setup) = server_setups().into_iter().find(|(k, _)| k == harness)?;
    let mut text: String = setup.notes.iter().map(|n| format!("# {n}\n")).collect();
    match &setup.command {
        Some(command) => text.push_str(&format!(
            "# {harness}: run\n{command}\n# or merge into {}:\n",
            setup.file.file
        )),
        None => text.push_str(&format!("# {harness}: merge into {}:\n", setup.file.file)),
    }
    text.push_str(&setup.file.text);
    Some(text)
}

/// ` (did you mean "x"?)` where `given` is a slip of one of `known`.
fn meant<S: AsRef<str>>(given: &str, known: &[S]) -> String {
    tether_words::near::nearest(given, known)
        .map(|n| format!(" (did you mean {n:?}?)"))
        .unwrap_or_default()
}

/// The harnesses as `tether inventory` names them (its scanners').
fn known_harnesses() -> Vec<String> {
    tether_inventory::scanners()
        .iter()
        .map(|s| s.harness().to_owned())
        .collect()
}

// === Tools ===

/// One tool: its name, description and properties (all strings but `bools`).
struct Spec {
    name: &'static str,
    description: &'static str,
    properties: &'static [(&'static str, &'static str)],
    required: &'static [&'static str],
}

const HARNESS_ARG: (&str, &str) = ("harness", "as the inventory names it");

const TOOLS: [Spec; 5] = [
    Spec {
        name: "why_missing",
        description: "Why an MCP server or tool is missing or failing: its configuration, then the newest session's evidence, with reason codes and what to do.",
        properties: &[("name", "server or tool name"), HARNESS_ARG],
        required: &["name"],
    },
    Spec {
        name: "inventory",
        description: "The MCP servers, tools, plugins, skills and hooks the user's coding agents are configured with, and why each is on or off.",
        properties: &[
            HARNESS_ARG,
            ("kind", "mcp_server, mcp_tool, plugin, skill or hook"),
            ("sessions", "yes: add the tools sessions listed"),
        ],
        required: &[],
    },
    Spec {
        name: "sessions",
        description: "Recent agent sessions, newest first, with their servers' statuses.",
        properties: &[HARNESS_ARG, ("since", "e.g. 24h, 7d")],
        required: &[],
    },
    Spec {
        name: "session",
        description: "One session's servers and tools: how far each got, and why it stopped.",
        properties: &[("id", "session id, or a unique prefix")],
        required: &["id"],
    },
    Spec {
        name: "explain",
        description: "What a Tether status, verdict, reason code or stage means, and what to check.",
        properties: &[("code", "e.g. auth_required")],
        required: &["code"],
    },
];

impl Spec {
    fn tool(&self, allow_test: bool) -> Tool {
        let mut properties = Map::new();
        for (name, description) in self.properties {
            properties.insert(
                (*name).to_owned(),
                json!({"type": "string", "description": description}),
            );
        }
        if allow_test && self.name == "inventory" {
            properties.insert(
                "test".to_owned(),
                json!({"type": "boolean", "description": "also test each enabled server"}),
            );
        }
        let mut schema = Map::new();
        schema.insert("type".into(), json!("object"));
        schema.insert("properties".into(), Value::Object(properties));
        if !self.required.is_empty() {
            schema.insert("required".into(), json!(self.required));
        }
        // Read-only: harnesses that ask before a tool that could change
        // something need not ask. (One hint: each costs tokens.)
        let annotations = rmcp::model::ToolAnnotations::new().read_only(true);
        Tool::new(self.name, self.description, Arc::new(schema)).annotate(annotations)
    }
}

impl ServerHandler for TetherMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("tether", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Ask why_missing when an MCP server or tool you expected is not there.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(
            TOOLS.iter().map(|t| t.tool(self.0.allow_test)).collect(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        TOOLS
            .iter()
            .find(|t| t.name == name)
            .map(|t| t.tool(self.0.allow_test))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(spec) = TOOLS.iter().find(|t| t.name == request.name) else {
            return Err(McpError::invalid_params(
                format!("unknown tool {}", request.name),
                None,
            ));
        };
        let args = request.arguments.unwrap_or_default();
        let sources = Arc::clone(&self.0);
        let name = spec.name;
        // Reading files and records is blocking work: off the runtime.
        let answer = tokio::task::spawn_blocking(move || answer(&sources, name, &args))
            .await
            .map_err(|e| McpError::internal_error(format!("the answer failed: {e}"), None))?;
        let result = match answer {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(bounded(text))]),
            Err(text) => CallToolResult::error(vec![ContentBlock::text(text)]),
        };
        Ok(CallToolResponse::Complete(result))
    }
}

/// `text`, cut to [`MAX_ANSWER_BYTES`] on a line boundary, saying so.
fn bounded(text: String) -> String {
    if text.len() <= MAX_ANSWER_BYTES {
        return text;
    }
    let mut cut = MAX_ANSWER_BYTES;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let end = text[..cut].rfind('\n').unwrap_or(cut);
    let rest = text[end..].lines().filter(|l| !l.is_empty()).count();
    format!(
        "{}\n… {rest} more lines: narrow the question (harness, kind, since).\n",
        &text[..end]
    )
}

/// A string argument, trimmed; `None` when absent or empty.
fn arg<'a>(args: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    args.get(name)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// The answer to one call, or what was wrong with the question.
fn answer(sources: &Sources, tool: &str, args: &Map<String, Value>) -> Result<String, String> {
    let harness = arg(args, "harness").map(str::to_owned);
    if let Some(h) = &harness {
        let known = known_harnesses();
        if !known.contains(h) {
            return Err(format!(
                "unknown harness {h:?}{}; known: {}",
                meant(h, &known),
                known.join(", ")
            ));
        }
    }
    let harnesses: Vec<String> = harness.iter().cloned().collect();
    match tool {
        "why_missing" => {
            let name = arg(args, "name").ok_or("give the server or tool's name")?;
            Ok(why_missing(sources, name, &harnesses))
        }
        "inventory" => {
            // A misspelt kind is said, never "nothing is configured".
            let kind = arg(args, "kind")
                .map(crate::flags::capability_kind)
                .transpose()?;
            let test = args.get("test").and_then(Value::as_bool) == Some(true);
            if test && !sources.allow_test {
                return Err("testing starts servers: `tether mcp --allow-test` allows it".into());
            }
            let sessions = arg(args, "sessions").is_some_and(|v| v == "yes" || v == "true")
                || args.get("sessions").and_then(Value::as_bool) == Some(true);
            Ok(inventory_text(
                sources,
                &harnesses,
                kind.as_deref(),
                test,
                sessions,
            ))
        }
        "sessions" => {
            let since = match arg(args, "since") {
                None => None,
                Some(word) => Some(crate::records::since(word).ok_or_else(|| {
                    format!("since {word:?}: give a duration (90m, 24h, 7d) or an RFC 3339 time")
                })?),
            };
            Ok(sessions_text(sources, &harnesses, since))
        }
        "session" => {
            let id = arg(args, "id").ok_or("give the session's id")?;
            session_text(sources, id)
        }
        "explain" => {
            let code = arg(args, "code").ok_or("give a code")?;
            let entries = tether_words::explain::lookup(code);
            if entries.is_empty() {
                let codes: Vec<&str> = tether_words::explain::all()
                    .iter()
                    .map(|e| e.code)
                    .collect();
                return Err(format!(
                    "{code:?} is not a Tether code{}",
                    meant(code, &codes)
                ));
            }
            Ok(entries
                .iter()
                .map(|e| {
                    format!(
                        "{} ({}): {} What to check: {}\n",
                        e.code,
                        e.family.noun(),
                        e.meaning,
                        e.check
                    )
                })
                .collect())
        }
        other => Err(format!("unknown tool {other}")),
    }
}

// === Reading ===

/// The configuration as `tether inventory` reads it.
fn scan(sources: &Sources, harnesses: &[String]) -> InventoryDocument {
    let ctx = tether_inventory::ScanContext::from_env(sources.project.clone());
    let mut document = tether_inventory::scan_all(&ctx, &tether_inventory::scanners(), harnesses);
    crate::inventory::sort_rows(&mut document);
    document
}

/// Every session, newest first: the harnesses' own records, then the
/// store's sessions the records do not hold. A recorded session's history
/// is built only when an answer asks for its attempt
/// ([`Sessions::attempt`]): a listing reads kept summaries, `why_missing`
/// builds the newest session of each harness concerned, `session` the one
/// its id names.
struct Sessions {
    disk: crate::records::OnDisk,
    all: Vec<Entry>,
    /// The harnesses' own health checks (`claude mcp list`; no agent ran):
    /// never a session here, found only by their ids.
    checks: Vec<Entry>,
}

/// One session of [`Sessions`].
struct Entry {
    session_id: String,
    agent_kind: String,
    updated_at: Timestamp,
    /// Its attempt: the store's come whole; a recorded one is built when
    /// first asked for (`Some(None)`: built, and it has none).
    attempt: Option<Option<AttachmentAttempt>>,
}

impl Sessions {
    fn read(sources: &Sources, harnesses: &[String], since: Option<Timestamp>) -> Self {
        let disk = crate::records::OnDisk::read(harnesses, since).unwrap_or_else(|error| {
            tracing::debug!(%error, "the harnesses' records were not read");
            crate::records::OnDisk::empty()
        });
        // A harness's own health check (it connected to its servers; no
        // agent ran) is no session here, nor its stored copy (imported
        // marked so: its trigger).
        let (mut checks, mut all): (Vec<Entry>, Vec<Entry>) = (Vec::new(), Vec::new());
        for k in &disk.known {
            let entry = Entry {
                session_id: k.session_id.clone(),
                agent_kind: k.agent_kind.clone(),
                updated_at: k.updated_at,
                attempt: None,
            };
            if disk.is_health_check(&k.session_id) {
                checks.push(entry);
            } else {
                all.push(entry);
            }
        }
        for attempt in stored(sources, harnesses, since) {
            let id = &attempt.session_id;
            if all.iter().chain(&checks).any(|e| &e.session_id == id) {
                continue;
            }
            let health_check = attempt.trigger == Trigger::HealthCheck;
            let entry = Entry {
                session_id: id.clone(),
                agent_kind: attempt.agent_kind.clone(),
                updated_at: attempt.updated_at,
                attempt: Some(Some(attempt)),
            };
            if health_check {
                checks.push(entry);
            } else {
                all.push(entry);
            }
        }
        all.sort_by_key(|e| std::cmp::Reverse(e.updated_at));
        Sessions { disk, all, checks }
    }

    /// The current attempt of the `i`th session, built the first time.
    fn attempt(&mut self, i: usize) -> Option<&AttachmentAttempt> {
        Self::built(&mut self.disk, self.all.get_mut(i)?)
    }

    /// `entry`'s current attempt, built the first time.
    fn built<'a>(
        disk: &mut crate::records::OnDisk,
        entry: &'a mut Entry,
    ) -> Option<&'a AttachmentAttempt> {
        if entry.attempt.is_none() {
            entry.attempt = Some(disk.attempt(&entry.session_id));
        }
        entry.attempt.as_ref()?.as_ref()
    }
}

/// Whether the session id `session_id` is the one `id` names: whole, a
/// prefix of it, or a prefix of the harness's own id after `KIND:`.
fn names(id: &str, session_id: &str) -> bool {
    session_id == id
        || session_id.starts_with(id)
        || session_id
            .split_once(':')
            .is_some_and(|(_, own)| own.starts_with(id))
}

/// The current attempts of the sessions stored in the default store.
fn stored(
    sources: &Sources,
    harnesses: &[String],
    since: Option<Timestamp>,
) -> Vec<AttachmentAttempt> {
    if !sources.db.exists() {
        return Vec::new();
    }
    sources
        .db
        .current_attempts(harnesses, since)
        .unwrap_or_default()
}

// === Answers ===

fn inventory_text(
    sources: &Sources,
    harnesses: &[String],
    kind: Option<&str>,
    test: bool,
    sessions: bool,
) -> String {
    let mut document = scan(sources, harnesses);
    if sessions {
        let _ = crate::records::add_sessions(&mut document, harnesses, None, Some(&sources.db));
    }
    if test {
        let ctx = tether_inventory::ScanContext::from_env(sources.project.clone());
        let _ =
            crate::inventory::run_tests(&mut document, &ctx, std::time::Duration::from_secs(30), 4);
    }
    if let Some(kind) = kind {
        document.rows.retain(|r| r.kind.as_str() == kind);
    }
    if document.rows.is_empty() {
        return "Nothing is configured there (user, project and system files read).\n".into();
    }
    let mut out = String::new();
    for row in &document.rows {
        let _ = writeln!(out, "{}", row_line(row));
    }
    for error in &document.errors {
        let _ = writeln!(out, "not read: {} ({})", error.source, error.reason_code);
    }
    out
}

/// One inventory row in a line: where it is, whether it is on, and why not.
fn row_line(row: &InventoryRow) -> String {
    let state = match row.stages.enabled.state {
        StageState::Yes => "on",
        StageState::No => "off",
        _ => "unknown",
    };
    let mut line = format!(
        "{} {} {} {} ({}): {state}",
        row.harness, row.scope, row.kind, row.name, row.source
    );
    if let Some(test) = &row.endpoint_test {
        let _ = write!(
            line,
            ", test {}",
            if test.succeeded { "passed" } else { "failed" }
        );
    }
    if let Some(code) = &row.reason_code {
        let _ = write!(line, "; {code}");
        if let Some(summary) = &row.summary {
            let _ = write!(line, ": {summary}");
        }
    }
    line
}

/// A session in a line: its id, harness, project, last update, and its
/// server rows by status.
type SessionLine = (
    String,
    String,
    Option<String>,
    Timestamp,
    Vec<(String, u32)>,
);

/// The newest sessions, a line each: recorded ones from their summaries
/// (kept, or built where their files changed), then the store's.
fn sessions_text(sources: &Sources, harnesses: &[String], since: Option<Timestamp>) -> String {
    let disk = crate::records::OnDisk::read(harnesses, since).unwrap_or_else(|error| {
        tracing::debug!(%error, "the harnesses' records were not read");
        crate::records::OnDisk::empty()
    });
    // A harness's own health checks are no sessions: counted, not listed.
    let (checks, listed): (Vec<_>, Vec<_>) =
        disk.listing().into_iter().partition(|s| s.health_check);
    let mut hidden = checks.len();
    let mut lines: Vec<SessionLine> = listed
        .into_iter()
        .map(|s| {
            (
                s.session_id,
                s.agent_kind,
                s.project,
                s.updated_at,
                s.counts.into_iter().collect(),
            )
        })
        .collect();
    for a in stored(sources, harnesses, since) {
        if lines.iter().any(|l| l.0 == a.session_id)
            || checks.iter().any(|c| c.session_id == a.session_id)
        {
            continue;
        }
        if a.trigger == Trigger::HealthCheck {
            hidden += 1;
            continue;
        }
        let mut counts = std::collections::BTreeMap::<String, u32>::new();
        for s in &a.servers {
            *counts.entry(s.status.as_str().to_owned()).or_default() += 1;
        }
        lines.push((
            a.session_id,
            a.agent_kind,
            a.project,
            a.updated_at,
            counts.into_iter().collect(),
        ));
    }
    lines.sort_by_key(|l| std::cmp::Reverse(l.3));
    let mut out = String::new();
    if lines.is_empty() {
        out.push_str("No session found (the harnesses' records and the store were read).\n");
    }
    for (id, kind, project, updated, counts) in lines.iter().take(20) {
        let counts: Vec<String> = counts.iter().map(|(s, n)| format!("{n} {s}")).collect();
        let _ = writeln!(
            out,
            "{id} {kind} project {} updated {updated}: {}",
            project.as_deref().unwrap_or("?"),
            if counts.is_empty() {
                "no MCP server".to_owned()
            } else {
                counts.join(", ")
            }
        );
    }
    if lines.len() > 20 {
        let _ = writeln!(out, "… {} older sessions", lines.len() - 20);
    }
    if hidden > 0 {
        let _ = writeln!(
            out,
            "{hidden} health check{} not listed (a harness connecting to its MCP servers to say whether each answers; no agent ran): the session tool shows one by its id.",
            if hidden == 1 { "" } else { "s" }
        );
    }
    out
}

fn session_text(sources: &Sources, id: &str) -> Result<String, String> {
    let mut all = Sessions::read(sources, &[], None);
    let matching: Vec<usize> = (0..all.all.len())
        .filter(|&i| names(id, &all.all[i].session_id))
        .collect();
    let checks: Vec<usize> = (0..all.checks.len())
        .filter(|&i| names(id, &all.checks[i].session_id))
        .collect();
    let attempt = match (matching.as_slice(), checks.as_slice()) {
        ([one], []) => all.attempt(*one),
        // A harness's own health check, by its id: said as one, with what
        // it found (its rows are evidence all the same).
        ([], [one]) => Sessions::built(&mut all.disk, &mut all.checks[*one]),
        ([], []) => return Err(format!("no session {id:?} (the sessions tool lists them)")),
        (many, more) => {
            return Err(format!(
                "{id:?} names {} sessions; give more of it",
                many.len() + more.len()
            ));
        }
    };
    let Some(attempt) = attempt else {
        return Err(format!("no session {id:?} (the sessions tool lists them)"));
    };
    let mut out = format!(
        "{} {} updated {}\n",
        attempt.session_id, attempt.agent_kind, attempt.updated_at
    );
    if attempt.trigger == Trigger::HealthCheck {
        let said = Registry::with_static()
            .map(|r| crate::sessions::health_check_said(&r, &attempt.agent_kind))
            .unwrap_or_else(|_| "a health check, not an agent session".to_owned());
        let _ = writeln!(
            out,
            "{said}; {}.",
            crate::sessions::health_check_found(Some(attempt))
        );
    }
    for row in tether_words::display::matrix(attempt) {
        let _ = writeln!(
            out,
            "{} {}: {}{}",
            row.kind,
            row.name,
            row.stopped,
            row.reason_code
                .map(|c| format!(" [{c}]"))
                .unwrap_or_default()
        );
    }
    Ok(out)
}

/// The walk: configuration → enabled → the newest session's evidence →
/// the last mile, in a few sentences with reason codes and what to do.
fn why_missing(sources: &Sources, name: &str, harnesses: &[String]) -> String {
    // A model-side name (`mcp__server__tool`) names its server.
    let (server_name, tool_name) = split_name(name);
    let document = scan(sources, harnesses);
    let servers: Vec<&InventoryRow> = document
        .rows
        .iter()
        .filter(|r| r.kind == CapabilityKind::McpServer)
        .collect();
    let named: Vec<&InventoryRow> = servers
        .iter()
        .copied()
        .filter(|r| r.name == server_name)
        .collect();
    let mut out: String = named.iter().map(|r| config_sentence(r) + "\n").collect();
    // The newest session of each harness concerned.
    let concerned: Vec<String> = if harnesses.is_empty() {
        let mut h: Vec<String> = named.iter().map(|r| r.harness.clone()).collect();
        h.dedup();
        h
    } else {
        harnesses.to_vec()
    };
    let mut sessions = Sessions::read(sources, &concerned, None);
    let (told, shown) =
        session_sentences(&mut out, &mut sessions, &concerned, server_name, tool_name);
    if !told {
        let _ = writeln!(
            out,
            "No session Tether can read shows {server_name:?} (the harnesses' records and the store were read)."
        );
    }
    if named.is_empty() {
        let mut configured: Vec<&str> = servers.iter().map(|r| r.name.as_str()).collect();
        configured.sort_unstable();
        configured.dedup();
        out.push_str(&not_configured(harnesses, server_name, shown, &configured));
    }
    out
}

/// Where a server is configured, whether it is on, and why not.
fn config_sentence(row: &InventoryRow) -> String {
    let mut sentence = format!(
        "Configured in {} ({} scope, {})",
        row.harness, row.scope, row.source
    );
    let on = row.stages.enabled.state == StageState::Yes;
    sentence.push_str(if on { ": enabled" } else { ": off" });
    if let Some(code) = &row.reason_code {
        let _ = write!(sentence, ", {}reason {code}", if on { "but " } else { "" });
        if let Some(summary) = &row.summary {
            let _ = write!(sentence, " ({summary})");
        }
    }
    with_check(sentence, row.reason_code.as_ref())
}

/// One sentence per harness: what its newest session showed of the server
/// (and the tool); a harness not concerned, its newest session that shows
/// it. Whether any was told, and whether one told shows the server. Only
/// the sessions looked at have their histories built: for a harness
/// concerned, its newest.
fn session_sentences(
    out: &mut String,
    sessions: &mut Sessions,
    concerned: &[String],
    server_name: &str,
    tool_name: Option<&str>,
) -> (bool, bool) {
    let mut told: Vec<String> = Vec::new();
    let mut shown = false;
    for i in 0..sessions.all.len() {
        if told.contains(&sessions.all[i].agent_kind) {
            continue;
        }
        let Some(attempt) = sessions.attempt(i) else {
            continue;
        };
        let server = attempt.servers.iter().find(|s| s.name == server_name);
        if server.is_none() && !concerned.contains(&attempt.agent_kind) {
            continue;
        }
        told.push(attempt.agent_kind.clone());
        shown |= server.is_some();
        let said = format!(
            "Newest {} session ({}, project {}, {})",
            attempt.agent_kind,
            attempt.session_id,
            attempt.project.as_deref().unwrap_or("?"),
            attempt.updated_at
        );
        match server {
            None => {
                let _ = writeln!(
                    out,
                    "{said}: no row for {server_name:?}; nothing in it shows the agent was given the server."
                );
            }
            Some(s) => {
                let sentence = format!("{said}: {}", session_sentence(s));
                let _ = writeln!(out, "{}", with_check(sentence, s.reason_code.as_ref()));
                if let Some(tool) = tool_name {
                    let _ = writeln!(out, "{}", tool_sentence(s, tool));
                }
            }
        }
    }
    (!told.is_empty(), shown)
}

/// No configuration read here names the server: where it came from if a
/// session shows it, else what to do.
fn not_configured(
    harnesses: &[String],
    server_name: &str,
    shown: bool,
    configured: &[&str],
) -> String {
    let scope = if harnesses.is_empty() {
        "any harness".to_owned()
    } else {
        harnesses.join(", ")
    };
    let names = if configured.is_empty() {
        "none".to_owned()
    } else {
        configured.join(", ")
    };
    format!(
        "No configuration of {scope} read here (user and system scope, and this project) names a server {server_name:?}{}. Configured servers: {names}.\n",
        if shown {
            ": the session above got it from a configuration since changed, or another project's"
        } else {
            ", so no agent started here is given it: check the name, or add it to the harness's configuration"
        }
    )
}

/// `sentence`, a full stop, and what to check for `code` (from `tether
/// explain`), when there is a code.
fn with_check(sentence: String, code: Option<&tether_core::vocab::ReasonCode>) -> String {
    match code.and_then(tether_words::explain::reason) {
        Some(entry) => format!(
            "{sentence}. What to check: {}{}",
            entry.check,
            if entry.check.ends_with('.') { "" } else { "." }
        ),
        None => format!("{sentence}."),
    }
}

/// `server` and `tool` of a name: `server/tool`, `mcp__server__tool`, or a
/// server's own name.
fn split_name(name: &str) -> (&str, Option<&str>) {
    if let Some(rest) = name.strip_prefix("mcp__")
        && let Some((server, tool)) = rest.split_once("__")
    {
        return (server, Some(tool));
    }
    match name.split_once('/') {
        Some((server, tool)) => (server, Some(tool)),
        None => (name, None),
    }
}

/// Where a session's server row stopped, and why.
fn session_sentence(server: &ServerAttachment) -> String {
    let mut text = format!(
        "{} ({})",
        tether_words::display::status_label(server),
        tether_words::display::stopped(server)
    );
    if let Some(code) = &server.reason_code {
        let _ = write!(text, "; reason {code}");
    }
    if server.status == DisplayStatus::Active {
        let n = server.tools.len();
        let _ = write!(text, ", {n} tool{} listed", if n == 1 { "" } else { "s" });
    }
    // Tools whose definition differs from the server's pin, by name.
    let changed: Vec<&str> = server
        .tools
        .iter()
        .filter(|t| !t.definition_changes.is_empty())
        .map(|t| t.name.as_str())
        .collect();
    if !changed.is_empty() {
        let _ = write!(
            text,
            "; changed since pinned: {} (definition_changed/tools_changed; `tether pins list`)",
            changed.join(", ")
        );
    }
    text
}

/// What the session showed of one tool: listed, reached the model, called.
fn tool_sentence(server: &ServerAttachment, tool: &str) -> String {
    match server.tools.iter().find(|t| t.name == tool) {
        None => format!(
            "Tool {tool:?}: the server's listing in that session did not include it ({} listed).",
            server.tools.len()
        ),
        Some(t) => {
            let mut text = format!(
                "Tool {tool:?}: listed; model_visible {}; {} call(s), {} failed",
                t.model_visible.state.as_str(),
                t.calls,
                t.failed_calls
            );
            if t.unknown_calls > 0 {
                let _ = write!(text, ", {} whose outcome no record gives", t.unknown_calls);
            }
            // A refused call is not among the calls: said apart, with why.
            if t.refused_calls > 0 {
                let _ = write!(
                    text,
                    "; {}; reason {}",
                    tether_words::display::tool_stopped(t),
                    t.refusal().map_or_else(String::new, ToString::to_string)
                );
            }
            // Compared with its server's pin in that session.
            if let Some(pin) = tether_words::display::pin_words(t) {
                let _ = write!(text, "; {pin}");
            }
            text.push('.');
            text
        }
    }
}

#[cfg(test)]
mod pin_tests {
    use super::*;

    /// GIVEN a session's row whose `add` changed from its pin THEN the
    /// server's sentence names the tool and the tool's says which parts.
    #[test]
    fn a_changed_definition_is_said_for_the_server_and_the_tool() {
        let mut row: ServerAttachment = serde_json::from_value(serde_json::json!({
            "name": "calc", "source": "profile", "transport": "stdio",
            "target": "calc-mcp", "decision": "deliver", "status": "active",
        }))
        .expect("a literal row parses");
        let mut add = tether_core::model::ToolRow::new("add");
        add.definition_changes = vec![
            tether_core::vocab::ReasonCode::DescriptionChanged,
            tether_core::vocab::ReasonCode::InputSchemaChanged,
        ];
        row.tools = vec![add, tether_core::model::ToolRow::new("echo")];
        let server = session_sentence(&row);
        assert!(server.contains("changed since pinned: add ("), "{server}");
        let tool = tool_sentence(&row, "add");
        assert!(
            tool.contains("its definition changed since it was pinned: description, input schema"),
            "{tool}"
        );
        assert!(!tool_sentence(&row, "echo").contains("pinned"));
    }
}
