//! The row builder: a found server becomes a sanitized inventory row.

use std::ops::Not;
use std::path::Path;

use serde_json::Value;
use tether_core::inventory::{
    CallPolicy, EnvKey, INVENTORY_SCHEMA_VERSION, InventoryDocument, InventoryError, InventoryRow,
    InventoryStages, RowDiagnostics, RowNote, from_config,
};
use tether_core::model::{StageObservation, Timestamp};
use tether_core::sanitize;
use tether_core::spec::Endpoint;
use tether_core::vocab::{ConfigScope, CwdClass, EnvClass, ReasonCode};

use crate::context::ScanContext;
use crate::dialect::{
    EntryDialect, entry_endpoint, expand_references, json_kind, parse_json_object,
    parse_toml_object,
};
use crate::root::ConfigRoot;

/// Whether the configuration lets a server run, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Enablement {
    /// Nothing in the configuration holds it back.
    Enabled,
    /// Held back: a precise reason and a sentence naming the list or file.
    Off(ReasonCode, String),
    /// The configuration cannot tell (for example, a toggle kept elsewhere).
    Unknown(String),
}

/// One server as a scanner found it; [`ScanOutput::push`] turns it into a row.
#[derive(Debug, Clone)]
pub struct FoundServer {
    /// Harness name.
    pub harness: &'static str,
    /// Scope.
    pub scope: ConfigScope,
    /// The server's name.
    pub name: String,
    /// The file it came from (already shown safely).
    pub source: String,
    /// The real endpoint (in memory only).
    pub endpoint: Endpoint,
    /// Whether the configuration lets it run.
    pub enablement: Enablement,
    /// Environment variables forwarded by name (Codex `env_vars`, `bearer_token_env_var`, …).
    pub forwarded_env: Vec<String>,
    /// Header names whose values come from the environment.
    pub env_headers: Vec<String>,
    /// Variables its configuration needs that are not set (names only):
    /// the row says `unresolved_variable`.
    pub unset_env: Vec<String>,
    /// An allow list of tools.
    pub include_tools: Option<Vec<String>>,
    /// A deny list of tools.
    pub exclude_tools: Vec<String>,
    /// Other non-secret settings, `key=value`.
    pub settings: Vec<String>,
    /// What the harness's permission and approval settings predict for a
    /// call to its tools (sanitized when it becomes a row).
    pub call_policy: Option<CallPolicy>,
    /// Notes for the row (sanitized when it becomes a row).
    pub notes: Vec<RowNote>,
}

impl FoundServer {
    /// A server with nothing but its identity and endpoint; enabled.
    pub fn new(
        harness: &'static str,
        scope: ConfigScope,
        name: &str,
        source: String,
        endpoint: Endpoint,
    ) -> Self {
        FoundServer {
            harness,
            scope,
            name: name.to_owned(),
            source,
            endpoint,
            enablement: Enablement::Enabled,
            forwarded_env: Vec::new(),
            env_headers: Vec::new(),
            unset_env: Vec::new(),
            include_tools: None,
            exclude_tools: Vec::new(),
            settings: Vec::new(),
            call_policy: None,
            notes: Vec::new(),
        }
    }
}

/// What scanners add to.
#[derive(Debug)]
pub struct ScanOutput {
    /// When the configuration is read: the time the rows' stages carry.
    pub at: Timestamp,
    /// Rows found so far.
    pub rows: Vec<InventoryRow>,
    /// Errors found so far.
    pub errors: Vec<InventoryError>,
}

impl Default for ScanOutput {
    /// An empty output stamped now.
    fn default() -> Self {
        ScanOutput::at(Timestamp::from_system(std::time::SystemTime::now()))
    }
}

impl ScanOutput {
    /// An empty output whose rows are stamped `at`.
    pub fn at(at: Timestamp) -> Self {
        ScanOutput {
            at,
            rows: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// The document of these rows and errors (no token totals yet), taken
    /// at `taken_at`.
    pub fn into_document(self, taken_at: Option<Timestamp>) -> InventoryDocument {
        InventoryDocument {
            schema_version: INVENTORY_SCHEMA_VERSION,
            taken_at,
            rows: self.rows,
            errors: self.errors,
            token_totals: vec![],
        }
    }

    /// Reads `rel` under `root`; a failure becomes an error entry and `None`.
    pub fn read(&mut self, harness: &str, root: &ConfigRoot, rel: &str) -> Option<String> {
        match root.read(rel) {
            Ok(text) => text,
            Err(failure) => {
                self.error(harness, root.source(rel), failure.reason, &failure.summary);
                None
            }
        }
    }

    /// Reads and parses a TOML file (Codex) as JSON values; failures become
    /// error entries.
    pub fn read_toml(
        &mut self,
        harness: &str,
        root: &ConfigRoot,
        rel: &str,
    ) -> Option<serde_json::Map<String, Value>> {
        let text = self.read(harness, root, rel)?;
        self.parsed(harness, root, rel, parse_toml_object(&text))
    }

    fn parsed(
        &mut self,
        harness: &str,
        root: &ConfigRoot,
        rel: &str,
        result: Result<serde_json::Map<String, Value>, String>,
    ) -> Option<serde_json::Map<String, Value>> {
        match result {
            Ok(map) => Some(map),
            Err(summary) => {
                self.error(
                    harness,
                    root.source(rel),
                    ReasonCode::InvalidConfig,
                    &summary,
                );
                None
            }
        }
    }

    /// Reads and parses a JSON (or, with `jsonc`, JSON with comments and
    /// trailing commas) object; failures become error entries.
    pub fn read_json(
        &mut self,
        harness: &str,
        root: &ConfigRoot,
        rel: &str,
        jsonc: bool,
    ) -> Option<serde_json::Map<String, Value>> {
        let text = self.read(harness, root, rel)?;
        self.parsed(harness, root, rel, parse_json_object(&text, jsonc))
    }

    /// Reads a JSON object as `JSON.parse(stripJsonComments(…))` reads it
    /// (comments allowed, trailing commas not: Gemini CLI's and Qwen
    /// Code's settings). `Ok(None)` when there is no file, or it could not
    /// be read (an error entry says why); `Err` with where it stops when it
    /// does not parse, for the caller to say how its harness treats that.
    pub fn read_json_commented(
        &mut self,
        harness: &str,
        root: &ConfigRoot,
        rel: &str,
    ) -> Result<Option<serde_json::Map<String, Value>>, String> {
        match self.read(harness, root, rel) {
            Some(text) => crate::dialect::parse_json_commented(&text).map(Some),
            None => Ok(None),
        }
    }

    /// Adds an error entry (the summary is scrubbed and capped).
    pub fn error(&mut self, harness: &str, source: String, reason: ReasonCode, summary: &str) {
        self.errors.push(InventoryError {
            harness: harness.to_owned(),
            source,
            reason_code: reason,
            summary: sanitize::summary(summary),
        });
    }

    /// Adds an entry of the list `key` that names nothing (`name`, none
    /// of `candidates` is called that) as an error, with the closest
    /// candidate as a "did you mean". Names only, sanitized.
    pub fn unmatched_name<'a>(
        &mut self,
        harness: &str,
        source: String,
        key: &str,
        name: &str,
        candidates: impl IntoIterator<Item = &'a str>,
    ) {
        let meant = tether_words::near::nearest(name, candidates)
            .map(|c| format!(": did you mean {:?}?", sanitize::name(c)))
            .unwrap_or_default();
        self.error(
            harness,
            source,
            ReasonCode::UnmatchedName,
            &format!(
                "{key} names {:?}, and no server is called that, so it changes nothing{meant}",
                sanitize::name(name)
            ),
        );
    }

    /// Adds a malformed server entry as an error naming it.
    pub fn invalid_entry(&mut self, harness: &str, source: String, name: &str, problem: &str) {
        self.error(
            harness,
            source,
            ReasonCode::InvalidConfig,
            &format!("server {:?}: {problem}", sanitize::name(name)),
        );
    }

    /// Adds every entry of a `{name: entry}` object (`mcpServers`,
    /// `mcp_servers`, OpenCode's `mcp`): each entry becomes a row, after
    /// `finish` sets its enablement and extras; a malformed entry becomes an
    /// error naming it, and the others still count. `servers` that is not an
    /// object is one error. Variables a dialect forwards by name are resolved
    /// from the context, in memory only.
    #[allow(clippy::too_many_arguments)]
    pub fn add_servers(
        &mut self,
        ctx: &ScanContext,
        harness: &'static str,
        scope: ConfigScope,
        source: &str,
        key: &str,
        servers: Option<&Value>,
        dialect: EntryDialect,
        mut finish: impl FnMut(&mut FoundServer, &serde_json::Map<String, Value>),
    ) {
        let Some(servers) = servers.filter(|v| !v.is_null()) else {
            return;
        };
        let Some(servers) = servers.as_object() else {
            self.error(
                harness,
                source.to_owned(),
                ReasonCode::InvalidConfig,
                &format!("\"{key}\" should be an object, not {}", json_kind(servers)),
            );
            return;
        };
        let lookup = |var: &str| ctx.var_str(var);
        for (name, entry) in servers {
            match entry_endpoint(entry, dialect, &lookup) {
                Ok(mut endpoint) => {
                    let (referenced, unset) = expand_references(&mut endpoint, dialect, &lookup);
                    let mut found =
                        FoundServer::new(harness, scope.clone(), name, source.to_owned(), endpoint);
                    found.forwarded_env = referenced;
                    found.unset_env = unset;
                    if let Some(obj) = entry.as_object() {
                        finish(&mut found, obj);
                    }
                    self.push(ctx, found);
                }
                Err(problem) => self.invalid_entry(harness, source.to_owned(), name, &problem),
            }
        }
    }

    /// Turns a found server into a sanitized row.
    pub fn push(&mut self, ctx: &ScanContext, found: FoundServer) {
        let endpoint = &found.endpoint;
        let scrubber = sanitize::Scrubber::new().with_secrets(endpoint.secret_values());
        let mut diagnostics = RowDiagnostics {
            include_tools: found
                .include_tools
                .as_ref()
                .map(|tools| tools.iter().map(|t| scrubber.name(t)).collect()),
            exclude_tools: found
                .exclude_tools
                .iter()
                .map(|t| scrubber.name(t))
                .collect(),
            settings: found.settings.iter().map(|s| scrubber.summary(s)).collect(),
            ..RowDiagnostics::default()
        };
        let mut env_names: Vec<&str> = found.forwarded_env.iter().map(String::as_str).collect();
        let mut header_names: Vec<&str> = found.env_headers.iter().map(String::as_str).collect();
        match endpoint {
            Endpoint::Stdio {
                command, env, cwd, ..
            } => {
                diagnostics.command = Some(endpoint.target());
                diagnostics.command_resolves =
                    Some(ctx.command_resolves(command, cwd.as_deref().map(Path::new)));
                diagnostics.cwd = Some(ctx.cwd_class(cwd.as_deref()));
                env_names.extend(env.iter().map(|kv| kv.name.as_str()));
            }
            Endpoint::Http { headers, .. } | Endpoint::Sse { headers, .. } => {
                header_names.extend(headers.iter().map(|kv| kv.name.as_str()));
            }
        }
        env_names.sort_unstable();
        env_names.dedup();
        diagnostics.env = env_names
            .into_iter()
            .map(|name| EnvKey {
                name: scrubber.name(name),
                class: env_class(name),
            })
            .collect();
        header_names.sort_unstable_by_key(|h| h.to_ascii_lowercase());
        header_names.dedup_by_key(|h| h.to_ascii_lowercase());
        diagnostics.headers = header_names.into_iter().map(|h| scrubber.name(h)).collect();

        let (enabled, mut reason, mut summary) = match &found.enablement {
            Enablement::Enabled => (from_config(true, self.at), None, None),
            Enablement::Off(reason, why) => (
                from_config(false, self.at),
                Some(reason.clone()),
                Some(summary_keeping_sources(&scrubber, why)),
            ),
            Enablement::Unknown(why) => (
                StageObservation::default(),
                None,
                Some(summary_keeping_sources(&scrubber, why)),
            ),
        };
        if reason.is_none() && !found.unset_env.is_empty() {
            let names = tether_core::plan::unset_names(&scrubber, &found.unset_env);
            reason = Some(ReasonCode::UnresolvedVariable);
            summary = Some(tether_core::plan::unset_summary(&names));
            diagnostics.unresolved = names;
        } else if reason.is_none() && diagnostics.cwd == Some(CwdClass::Missing) {
            reason = Some(ReasonCode::CwdNotFound);
            summary = Some(format!(
                "its working directory (cwd in its entry) does not exist here, so `{}` cannot start there",
                diagnostics.command.as_deref().unwrap_or("?")
            ));
        } else if reason.is_none() && diagnostics.command_resolves == Some(false) {
            reason = Some(ReasonCode::CommandNotFound);
            summary = Some(not_found_summary(
                ctx,
                &found.endpoint,
                diagnostics.command.as_deref().unwrap_or("?"),
            ));
        }
        let bundled = found.scope == ConfigScope::Plugin;
        self.rows.push(InventoryRow {
            kind: tether_core::vocab::CapabilityKind::McpServer,
            links: Vec::new(),
            harness: found.harness.to_owned(),
            scope: found.scope,
            name: scrubber.name(&found.name),
            transport: endpoint.transport(),
            target: endpoint.target(),
            stages: {
                let mut stages = InventoryStages::configured(enabled, self.at);
                // A plugin's servers are installed with it; a server a
                // configuration entry names has nothing to install.
                stages.installed = if bundled {
                    from_config(true, self.at)
                } else {
                    StageObservation::shown(
                        tether_core::vocab::StageState::NotApplicable,
                        tether_core::model::ProvenanceCode::CurrentConfig,
                        self.at,
                    )
                };
                stages
            },
            reason_code: reason,
            summary,
            source: found.source,
            diagnostics,
            endpoint_test: None,
            tool_tokens: None,
            model: None,
            call_policy: found
                .call_policy
                .as_ref()
                .map(|p| sanitized_policy(&scrubber, p)),
            notes: sanitized_notes(&scrubber, &found.notes),
            endpoint: Some(found.endpoint),
        });
    }
}

/// Why a stdio command does not resolve, naming it by `shown` (its
/// basename) only: a bare name on no folder of PATH, or a path where no
/// executable file is.
fn not_found_summary(ctx: &ScanContext, endpoint: &Endpoint, shown: &str) -> String {
    let command = match endpoint {
        Endpoint::Stdio { command, .. } => command.trim(),
        _ => "",
    };
    if !command.contains('/') {
        let meant = ctx
            .near_command(command)
            .map(|n| tether_core::sanitize::name(&n));
        tether_words::near::not_on_path(shown, meant.as_deref())
    } else if !Path::new(command).is_absolute() {
        format!(
            "the relative path given for `{shown}` names no executable file from where it runs (a path is not looked up on PATH)"
        )
    } else if Path::new(command).is_file() {
        format!("the file given for `{shown}` is not executable here")
    } else {
        format!(
            "the path given for `{shown}` does not exist here (a path is not looked up on PATH)"
        )
    }
}

/// A call-policy prediction with every string a scanner put in it scrubbed
/// (the shown file names kept whole, as in summaries).
pub(crate) fn sanitized_policy(scrubber: &sanitize::Scrubber, policy: &CallPolicy) -> CallPolicy {
    CallPolicy {
        verdict: policy.verdict,
        headless_refuses: policy.headless_refuses,
        provenance: policy.provenance,
        reason_code: policy.reason_code.clone(),
        rule: policy
            .rule
            .as_deref()
            .map(|r| scrub_parts(scrubber, &scrubber.summary(r))),
        source: policy
            .source
            .as_deref()
            .map(|s| summary_keeping_sources(scrubber, s)),
        summary: summary_keeping_sources(scrubber, &policy.summary),
        tools: policy
            .tools
            .iter()
            .map(|t| tether_core::inventory::ToolCallPolicy {
                tool: scrub_parts(scrubber, &scrubber.name(&t.tool)),
                policy: sanitized_policy(scrubber, &t.policy),
            })
            .collect(),
    }
}

/// Notes with their sentences scrubbed.
pub(crate) fn sanitized_notes(scrubber: &sanitize::Scrubber, notes: &[RowNote]) -> Vec<RowNote> {
    notes
        .iter()
        .map(|n| RowNote {
            provenance: n.provenance,
            reason_code: n.reason_code.clone(),
            text: summary_keeping_sources(scrubber, &n.text),
        })
        .collect()
}

/// Scrubs a scanner's sentence, but keeps the file names it cites whole:
/// words that start like a shown source (`~/`, `$PROJECT/`, `$CODEX_HOME/`,
/// `/etc/`) were built by [`ConfigRoot::source`] and are safe, while the
/// pattern scrubber would shorten them to `~/…/name`.
pub(crate) fn summary_keeping_sources(scrubber: &sanitize::Scrubber, text: &str) -> String {
    // Each part of the path must pass the scrubber unchanged: a folder
    // named like a token keeps the whole word from being kept.
    let is_source = |word: &str| {
        let clean = |part: &str| {
            let part = part.trim_end_matches([',', ';', ')', ':']);
            scrubber.scrub(part) == part
        };
        (word.starts_with("~/") || word.starts_with("/etc/") || word.starts_with('$'))
            && !word.contains('@')
            && !word.contains("://")
            && scrubber.scrub(word).contains(sanitize::REDACTED).not()
            && word.split('/').skip(1).all(clean)
            // A shown source ends in a file name (or is `$NAME` alone).
            && word
                .rsplit_once('/')
                .is_none_or(|(_, last)| last.contains('.'))
    };
    // The sources stand aside while the whole sentence is scrubbed (so a
    // pattern spanning words, `Bearer …`, still matches), then come back.
    let mut kept: Vec<&str> = Vec::new();
    let masked: Vec<String> = text
        .split(' ')
        .map(|w| {
            if is_source(w) {
                kept.push(w);
                format!("tethersource{}x", kept.len() - 1)
            } else {
                w.to_owned()
            }
        })
        .collect();
    // `__` becomes a mark that is no word character while scrubbing, so a
    // pattern after it (`mcp__srv__Bearer …`) starts at a word boundary.
    const MARK: char = '\u{2063}';
    let joined = masked.join(" ").replace("__", &MARK.to_string());
    let scrubbed = scrubber.scrub(&joined).replace(MARK, "__");
    // A pattern that spans a kept source (`~/Bearer x/…`) is caught only
    // unmasked: then the sentence is scrubbed whole, sources and all.
    let plain = scrubber
        .scrub(&text.replace("__", &MARK.to_string()))
        .replace(MARK, "__");
    let redactions = |t: &str| t.matches(sanitize::REDACTED).count();
    let scrubbed = if redactions(&plain) > redactions(&scrubbed) {
        kept.clear();
        plain
    } else {
        scrubbed
    };
    let words: Vec<String> = scrubbed
        .split(' ')
        .map(|w| {
            let index = w
                .strip_prefix("tethersource")
                .and_then(|rest| rest.strip_suffix('x'))
                .and_then(|n| n.parse::<usize>().ok());
            match index.and_then(|i| kept.get(i)) {
                Some(source) => (*source).to_owned(),
                None => scrub_parts(scrubber, w),
            }
        })
        .collect();
    // Whatever a path or a name hid from the scrubber's `Bearer …` pattern:
    // the word after a `bearer` goes.
    let mut words = words;
    for i in 1..words.len() {
        let before = words[i - 1].to_ascii_lowercase();
        if before.trim_end_matches([':', ',']).ends_with("bearer") {
            words[i] = sanitize::REDACTED.to_owned();
        }
    }
    sanitize::cap_with_ellipsis(words.join(" ").trim(), sanitize::SUMMARY_MAX_BYTES)
}

/// Scrubs each `__`-separated part of a tool name or rule on its own
/// (`mcp__srv__ghp_…`): the scrubber's patterns start at a word boundary,
/// which `_` is not.
pub(crate) fn scrub_parts(scrubber: &sanitize::Scrubber, text: &str) -> String {
    if !text.contains("__") && !text.contains('/') {
        return text.to_owned();
    }
    // Path segments too: the scrubber leaves `$NAME/ghp_…/file` whole.
    text.split('/')
        .map(|segment| {
            segment
                .split("__")
                .map(|part| scrubber.scrub(part))
                .collect::<Vec<_>>()
                .join("__")
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Classes an environment variable's name.
pub fn env_class(name: &str) -> EnvClass {
    const MARKERS: [&str; 13] = [
        "TOKEN",
        "SECRET",
        "KEY",
        "PASSWORD",
        "PASSWD",
        "PASS",
        "AUTH",
        "CREDENTIAL",
        "COOKIE",
        "SESSION",
        "PRIVATE",
        "BEARER",
        "PAT",
    ];
    let upper = name.to_ascii_uppercase();
    let words: Vec<&str> = upper.split(|c: char| !c.is_ascii_alphanumeric()).collect();
    let secret = MARKERS.iter().any(|m| {
        if m.len() <= 4 {
            // Short markers must be whole words (KEY, PASS, PAT, AUTH) to avoid PATH, KEYBOARD…
            words
                .iter()
                .any(|w| w == m || (*m == "KEY" && w.ends_with("KEY")))
        } else {
            upper.contains(m)
        }
    });
    if secret {
        EnvClass::SecretLike
    } else {
        EnvClass::Plain
    }
}
