//! The last mile: what a harness does to a server's tools between the
//! server's `tools/list` and the model's request, as rules a plugin
//! declares ([`Rules`]), and what those rules predict for a list of tools
//! ([`predict`]).
//!
//! Every rule is verified by running the real CLI against the project's
//! fake model with a server built to break it (`tests/tests/last_mile.rs`).
//! A rule that belongs to the model provider's API rather than the harness
//! (a name length, a tool count) names the provider's documentation it
//! comes from. What [`predict`] says is a prediction: where it becomes
//! evidence ([`withheld_evidence`]) its provenance is `documented_rule`,
//! never an observation, and it only ever says a tool did *not* reach the
//! model.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::{Evidence, Timestamp};
use crate::vocab::{EvidenceKind, Provenance, ReasonCode};

mod context;
pub use context::{Context, Deferral, ENV_SETTING, Var};

/// The last-mile role of a harness's plugin: its [`Rules`], given only
/// where each rule was verified against what a model was really sent.
pub trait LastMile: Send + Sync {
    /// What the harness does to a server's tools at `version` (`None`: the
    /// newest verified); `None`: this release's rules are not known.
    fn rules(&self, version: Option<&str>) -> Option<Rules>;

    /// How the harness spells `server`'s `tool` to the model (Claude Code:
    /// `mcp__time__get_current_time`), by its newest verified rules (two
    /// tools that collide can be spelled apart: see [`predict`]).
    fn model_tool_name(&self, server: &str, tool: &str) -> Option<String> {
        self.rules(None).map(|r| (r.naming)(server, tool))
    }
}

/// A documented limit, and the documentation it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// The most allowed.
    pub max: usize,
    /// Where it is documented (the harness's source, or the provider's API
    /// reference).
    pub source: &'static str,
}

/// What a harness does when two tools get the same model-side name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OnCollision {
    /// The tool listed last takes the name; the others are dropped (a
    /// registry keyed by name, overwritten).
    LastWins,
    /// The tool listed first keeps the name; later ones are skipped.
    FirstWins,
    /// Every tool of a collision gets a short hash appended to its name:
    /// both reach the model, under names Tether spells only up to the hash
    /// ([`Prediction::suffixed`]).
    Suffixed,
    /// Of equal names the first is kept and the rest dropped; a name cut
    /// to [`Rules::cut`] characters that meets an earlier cut name instead
    /// ends in a counter (`…2`, `…3`), so both reach the model.
    Numbered,
}

/// The rules one harness release applies between `tools/list` and the
/// model's request. Build with [`Rules::new`] and the `with_` methods.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Rules {
    /// How the harness spells a server's tool to the model.
    pub naming: fn(&str, &str) -> String,
    /// What it does when two names collide.
    pub on_collision: OnCollision,
    /// The length (in UTF-16 code units) the harness cuts every name to,
    /// keeping its start; `None` where it cuts none (or shortens inside
    /// `naming`).
    pub cut: Option<usize>,
    /// The longest model-side name the provider takes: a request with a
    /// longer one is refused.
    pub name_limit: Option<Limit>,
    /// Top-level input-schema keywords that make the harness drop a tool.
    pub dropped_roots: &'static [&'static str],
    /// The most tools the provider takes in one request: past it the
    /// request is refused (the harness itself sends them all).
    pub tool_limit: Option<Limit>,
    /// Whether the harness holds MCP tools behind its tool search by
    /// default (sent to the model only once a search loads them); `None`
    /// where it is not known for this release, or depends on what the host
    /// does not know ([`Rules::tool_search`]).
    pub defers: Option<bool>,
    /// Where the tool search depends on the harness's environment (a
    /// switch, its model URL): the release's rule, which
    /// [`Rules::in_context`] and [`Rules::for_entry`] apply to what the
    /// host knows. `None`: `defers` holds whatever the environment.
    pub tool_search: Option<fn(&Context) -> Deferral>,
    /// The rule behind `defers`, where [`Rules::tool_search`] gave it
    /// (what it depends on, where `defers` is `None`).
    pub deferral_rule: Option<&'static str>,
    /// The setting of a server's own entry (`key=value`, as the harness's
    /// scanner writes it into the row's settings) that sends every tool of
    /// that server to the model up front, never behind the tool search
    /// (Claude Code's `alwaysLoad=true`); [`Rules::for_entry`] applies it.
    pub up_front: Option<&'static str>,
    /// Where these rules come from (the harness's own source), and the
    /// releases they were verified on.
    pub source: &'static str,
    /// What a model-side name says by itself about the MCP server it came
    /// from, with no server's name at hand ([`attribute`]).
    pub shape: Shape,
}

/// What a harness's model-side names say by themselves about MCP: whether
/// a name is an MCP tool's, and whether its server can be read off it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Shape {
    /// Nothing in a name marks it as an MCP tool's (`SERVER_TOOL`,
    /// `SERVER-TOOL`: a built-in tool can look the same): a name is read as
    /// MCP only against a known server.
    Unmarked,
    /// An MCP tool's name starts with `prefix`, but where its server's
    /// name ends is not spelled (`mcp_SERVER_TOOL`, both halves free to
    /// hold `_`): such a name is MCP-shaped, its server unresolved until a
    /// known server fits it.
    Prefixed {
        /// What every MCP tool's name starts with.
        prefix: &'static str,
    },
    /// `prefix SERVER separator TOOL`, and the harness itself reads the
    /// server as what lies between `prefix` and the first `separator`
    /// after it (the server's name never holds the separator as the harness
    /// spells it, or the harness's own reading of it does not either): the
    /// name alone says which server.
    Split {
        /// What every MCP tool's name starts with.
        prefix: &'static str,
        /// What ends the server's name.
        separator: &'static str,
    },
}

impl Rules {
    /// Rules that spell names with `naming`, resolve collisions by
    /// `on_collision`, and nothing more.
    pub const fn new(
        naming: fn(&str, &str) -> String,
        on_collision: OnCollision,
        source: &'static str,
    ) -> Self {
        Rules {
            naming,
            on_collision,
            cut: None,
            name_limit: None,
            dropped_roots: &[],
            tool_limit: None,
            defers: Some(false),
            tool_search: None,
            deferral_rule: None,
            up_front: None,
            source,
            shape: Shape::Unmarked,
        }
    }

    /// What the harness's model-side names say by themselves
    /// ([`Shape`]; [`Shape::Unmarked`] unless declared).
    pub const fn with_shape(mut self, shape: Shape) -> Self {
        self.shape = shape;
        self
    }

    /// A provider's documented limit on a name's length.
    pub const fn with_name_limit(mut self, limit: Limit) -> Self {
        self.name_limit = Some(limit);
        self
    }

    /// Top-level input-schema keywords that make the harness drop a tool.
    pub const fn with_dropped_roots(mut self, roots: &'static [&'static str]) -> Self {
        self.dropped_roots = roots;
        self
    }

    /// A provider's documented limit on the tools of one request.
    pub const fn with_tool_limit(mut self, limit: Limit) -> Self {
        self.tool_limit = Some(limit);
        self
    }

    /// The length the harness cuts every name to, keeping its start.
    pub const fn with_cut(mut self, cut: usize) -> Self {
        self.cut = Some(cut);
        self
    }

    /// Whether the harness defers MCP tools behind its search by default
    /// (`None`: not known for this release).
    pub const fn with_deferral(mut self, defers: Option<bool>) -> Self {
        self.defers = defers;
        self
    }

    /// A tool search that depends on the harness's environment: `rule`
    /// decides [`Rules::defers`] from what the host knows of it, nothing
    /// until [`Rules::in_context`] or [`Rules::for_entry`] says more.
    pub fn with_tool_search(mut self, rule: fn(&Context) -> Deferral) -> Self {
        self.tool_search = Some(rule);
        self.in_context(&Context::unknown())
    }

    /// The rules in an environment the host knows (the one `tether run`
    /// starts the harness with, a scanner's reading of the process's
    /// environment and the harness's settings): [`Rules::tool_search`]
    /// decides `defers` from it. Rules without one are unchanged.
    pub fn in_context(mut self, context: &Context) -> Self {
        if let Some(rule) = self.tool_search {
            let d = rule(context);
            self.defers = d.defers;
            self.deferral_rule = Some(d.because);
        }
        self
    }

    /// The entry setting (`key=value`) that keeps a server's tools out of
    /// the tool search ([`Rules::up_front`]).
    pub const fn with_up_front(mut self, setting: &'static str) -> Self {
        self.up_front = Some(setting);
        self
    }

    /// The rules as they apply to one server, given its entry's settings
    /// (a row's `diagnostics.settings`): the environment its scanner read
    /// into them (`env:NAME=MEANING`, [`Context::from_settings`]) decides
    /// the tool search where it depends on it; where the entry holds
    /// [`Rules::up_front`], nothing of it is deferred, whatever the
    /// release does by default (a tool search that is off defers nothing
    /// either).
    pub fn for_entry(mut self, settings: &[String]) -> Self {
        let context = Context::from_settings(settings);
        if !context.is_unknown() {
            self = self.in_context(&context);
        }
        if self
            .up_front
            .is_some_and(|s| settings.iter().any(|have| have == s))
        {
            self.defers = Some(false);
            self.deferral_rule = None;
        }
        self
    }
}

/// One listed tool, as far as the rules need it: its name, and the
/// keywords at the top level of its input schema (never their values).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The name the server lists.
    pub name: String,
    /// The top-level keys of its input schema (`type`, `properties`,
    /// `oneOf`, ...).
    pub schema_keys: Vec<String>,
}

impl Listed {
    /// A tool by name, its schema's top-level keys from `schema` (an
    /// object; anything else has none).
    pub fn new(name: impl Into<String>, schema: Option<&serde_json::Value>) -> Self {
        Listed {
            name: name.into(),
            schema_keys: schema
                .and_then(|s| s.as_object())
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default(),
        }
    }
}

/// What the rules predict for one tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Prediction {
    /// The tool's name, as its server lists it.
    pub tool: String,
    /// Its name as the model would see it.
    pub model_name: String,
    /// Whether the harness would offer it to the model.
    pub offered: bool,
    /// Offered behind the harness's tool search: named to the model, its
    /// definition sent only once a search loads it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deferred: bool,
    /// The harness appends a short hash to `model_name` (two names
    /// collided), which Tether does not spell.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub suffixed: bool,
    /// Why not, where it would not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<ReasonCode>,
    /// The rule that says so, with the documentation it comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

impl Prediction {
    /// Not offered, for `reason`, by `rule`.
    fn withhold(&mut self, reason: ReasonCode, rule: String) {
        self.offered = false;
        self.deferred = false;
        self.reason_code = Some(reason);
        self.rule = Some(rule);
    }

    /// Whether the harness sends the tool: offered, or refused only by the
    /// provider (a name past its limit), so a request to the model can
    /// hold it.
    pub fn is_sent(&self) -> bool {
        self.offered || self.reason_code == Some(ReasonCode::NameTooLong)
    }

    /// Whether `name`, as a request to the model holds it, is this tool's:
    /// its model-side name, or that name and the hash the harness adds.
    pub fn spells(&self, name: &str) -> bool {
        if self.suffixed {
            hash_suffixed(name).is_some_and(|base| base == self.model_name)
        } else {
            name == self.model_name
        }
    }
}

/// The name before a harness's hash suffix (`NAME_<hex>`), if `name` has one.
fn hash_suffixed(name: &str) -> Option<&str> {
    let (base, hash) = name.rsplit_once('_')?;
    (!hash.is_empty() && hash.chars().all(|c| c.is_ascii_hexdigit())).then_some(base)
}

/// Whether a tool kept from the model for `reason` was not kept by the
/// harness at all (`schema_accepted` no): dropped for its schema, or lost a
/// name collision. Past a limit or excluded, the harness kept it.
pub fn unaccepted(reason: Option<&ReasonCode>) -> bool {
    matches!(
        reason,
        Some(
            ReasonCode::SchemaUnsupported
                | ReasonCode::NameCollision
                | ReasonCode::DroppedByHarness
        )
    )
}

/// What `rules` predict for `server`'s `tools`, in listed order: each
/// tool's model-side name, and whether it would be offered.
///
/// In order: a tool whose schema the harness drops is withheld
/// (`schema_unsupported`); of the rest, tools whose names collide keep one
/// by the harness's rule (`name_collision`); a name longer than the
/// provider takes is refused (`name_too_long`).
pub fn predict(rules: &Rules, server: &str, tools: &[Listed]) -> Vec<Prediction> {
    let mut out: Vec<Prediction> = tools
        .iter()
        .map(|t| Prediction {
            tool: t.name.clone(),
            model_name: (rules.naming)(server, &t.name),
            offered: true,
            deferred: rules.defers == Some(true),
            suffixed: false,
            reason_code: None,
            // An offered tool whose deferral is not known says on what it
            // depends: silence is never shown as "sent whole".
            rule: rules
                .defers
                .is_none()
                .then_some(rules.deferral_rule)
                .flatten()
                .map(|why| {
                    format!("whether the harness's tool search holds it back is not known: {why}")
                }),
        })
        .collect();
    for (p, t) in out.iter_mut().zip(tools) {
        if let Some(root) = t
            .schema_keys
            .iter()
            .find(|k| rules.dropped_roots.contains(&k.as_str()))
        {
            p.withhold(
                ReasonCode::SchemaUnsupported,
                format!(
                    "the harness drops a tool whose input schema has a top-level {root} ({})",
                    rules.source
                ),
            );
        }
    }
    let mut by_name: std::collections::BTreeMap<String, Vec<usize>> = Default::default();
    for (i, p) in out.iter().enumerate().filter(|(_, p)| p.offered) {
        by_name.entry(p.model_name.clone()).or_default().push(i);
    }
    for at in by_name.into_values().filter(|at| at.len() > 1) {
        let keep = match rules.on_collision {
            OnCollision::FirstWins => at[0],
            OnCollision::LastWins => at[at.len() - 1],
            OnCollision::Suffixed => {
                at.iter().for_each(|i| out[*i].suffixed = true);
                continue;
            }
            // Equal whole names: the first is kept (cut names are
            // numbered below).
            OnCollision::Numbered => at[0],
        };
        let kept = out[keep].tool.clone();
        for lost in at.into_iter().filter(|i| *i != keep) {
            let p = &mut out[lost];
            let rule = format!(
                "its model-side name {} is also {kept}'s, and the harness keeps one tool per name ({})",
                p.model_name, rules.source
            );
            p.withhold(ReasonCode::NameCollision, rule);
        }
    }
    if let Some(cut) = rules.cut {
        cut_and_number(&mut out, cut);
    }
    if let Some(limit) = rules.name_limit {
        for p in out.iter_mut().filter(|p| p.offered) {
            // A namespace's tool is measured without its namespace.
            let own = p.model_name.rsplit('/').next().unwrap_or_default();
            let len = own.encode_utf16().count();
            if len > limit.max {
                p.withhold(
                    ReasonCode::NameTooLong,
                    format!(
                        "its model-side name has {len} characters and the provider takes at most {} ({})",
                        limit.max, limit.source
                    ),
                );
            }
        }
    }
    out
}

/// Cuts every offered name to `cut` UTF-16 code units; a cut name that
/// meets an earlier one ends in a counter (2, 3, …) in place of its last
/// characters.
fn cut_and_number(out: &mut [Prediction], cut: usize) {
    let shorten = |name: &str, max: usize| -> String {
        let mut units = 0;
        name.chars()
            .take_while(|c| {
                units += c.len_utf16();
                units <= max
            })
            .collect()
    };
    let mut seen: std::collections::BTreeMap<String, usize> = Default::default();
    for p in out.iter_mut().filter(|p| p.offered) {
        let base = shorten(&p.model_name, cut);
        let n = seen.entry(base.clone()).or_insert(0);
        *n += 1;
        p.model_name = if *n == 1 {
            base
        } else {
            let counter = n.to_string();
            format!(
                "{}{counter}",
                shorten(&base, cut.saturating_sub(counter.len()))
            )
        };
    }
}

/// The tool-count rule over every server of one harness: when the tools it
/// would offer (`offered`, its MCP tools alone; its own built-in tools only
/// add to them) pass the provider's limit, the sentence that says so. The
/// provider refuses such a request whole, so every tool fails with it.
pub fn over_tool_limit(rules: &Rules, offered: usize) -> Option<String> {
    let limit = rules.tool_limit?;
    (offered > limit.max).then(|| {
        format!(
            "its servers give the harness {offered} tools to send (its own come on top) and the provider takes at most {} in a request, so it refuses the request ({})",
            limit.max, limit.source
        )
    })
}

/// The way back from a model-side name to the server and tool it came
/// from, for every tool the rules offer: what a request to the model names,
/// read as MCP tools. Built from [`predict`] over each server's listing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelNames {
    /// Exact model-side name → (server, listed tool).
    exact: std::collections::BTreeMap<String, (String, String)>,
    /// Names the harness suffixes with a hash Tether does not spell:
    /// the name before the hash → the tools that share it.
    suffixed: std::collections::BTreeMap<String, Vec<(String, String)>>,
}

impl ModelNames {
    /// The names `rules` give the tools the harness sends of `servers`
    /// (each server with its listing, in listed order).
    pub fn new(rules: &Rules, servers: &[(&str, &[Listed])]) -> Self {
        let mut names = ModelNames::default();
        for (server, tools) in servers {
            for p in predict(rules, server, tools)
                .into_iter()
                .filter(Prediction::is_sent)
            {
                let at = ((*server).to_owned(), p.tool);
                if p.suffixed {
                    names.suffixed.entry(p.model_name).or_default().push(at);
                } else {
                    names.exact.insert(p.model_name, at);
                }
            }
        }
        names
    }

    /// The server and tool a model-side name stands for: exactly, or (for
    /// a hash-suffixed name) only when one tool shares its prefix. `None`
    /// for a name no offered tool has (a harness's own tool, say).
    pub fn resolve(&self, model_name: &str) -> Option<(&str, &str)> {
        if let Some((server, tool)) = self.exact.get(model_name) {
            return Some((server, tool));
        }
        match self
            .suffixed
            .get(hash_suffixed(model_name)?)
            .map(Vec::as_slice)
        {
            Some([(server, tool)]) => Some((server, tool)),
            _ => None,
        }
    }
}

/// The server and tool a model-side name stands for, read against the
/// configured server names alone (no listing at hand: what `tether tap`
/// sees): the one server whose spelled prefix (`rules.naming` of the server
/// and a one-letter tool, without that letter) starts the name; the rest is
/// the tool, as the model got it. `None` when no server fits or two do (the
/// split would be a guess), and for a name whose tool part is
/// hash-suffixed by a harness that suffixes (which tool it was is not
/// spelled there).
pub fn split_by_servers(
    rules: &Rules,
    model_name: &str,
    servers: &[String],
) -> Option<(String, String)> {
    match servers_fitting(rules, model_name, servers) {
        Fit::One(server, tool) => Some((server, tool)),
        _ => None,
    }
}

/// How many known servers' spelled prefixes start a model-side name.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Fit {
    /// None does.
    None,
    /// Exactly one, with the rest of the name as its tool.
    One(String, String),
    /// Two or more (or one whose tool part hides behind a harness's hash):
    /// the name is an MCP tool's of a known server, but which is not said.
    Several,
}

fn servers_fitting(rules: &Rules, model_name: &str, servers: &[String]) -> Fit {
    let mut fits = servers.iter().filter_map(|server| {
        let spelled = (rules.naming)(server, "t");
        let prefix = spelled.strip_suffix('t')?;
        let tool = model_name.strip_prefix(prefix)?;
        (!tool.is_empty()).then(|| (server.clone(), tool.to_owned()))
    });
    let Some(first) = fits.next() else {
        return Fit::None;
    };
    if fits.next().is_some() {
        return Fit::Several;
    }
    if rules.on_collision == OnCollision::Suffixed && hash_suffixed(&first.1).is_some() {
        return Fit::Several;
    }
    Fit::One(first.0, first.1)
}

/// How a model-side name was read as an MCP server's tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AttributedBy {
    /// The session's own listing of the server's tools (its records, its
    /// telemetry, an observed `tools/list`): the tool is named as listed.
    Listing,
    /// A server the session or today's configuration names, whose spelled
    /// prefix alone fits the name.
    KnownServer,
    /// The harness's naming alone ([`Shape::Split`]): the server as the
    /// name spells it.
    Naming,
}

impl AttributedBy {
    /// Its word in a record (`listing`, `known_server`, `naming`).
    pub fn word(self) -> &'static str {
        match self {
            AttributedBy::Listing => "listing",
            AttributedBy::KnownServer => "known_server",
            AttributedBy::Naming => "naming",
        }
    }
}

/// What one model-side name is, as far as the harness's rules and the
/// servers known can say (never a guess).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Attribution {
    /// An MCP server's tool.
    Mcp {
        /// The server: its known name, or as the name spells it
        /// ([`AttributedBy::Naming`]).
        server: String,
        /// The tool: as listed ([`AttributedBy::Listing`]), else as the
        /// model got it.
        tool: String,
        /// How it was read.
        by: AttributedBy,
    },
    /// An MCP server's tool whose server the name spells but whose tool it
    /// does not (a hash the harness appended to two names that collided).
    ServerOnly {
        /// The server, as the name spells it.
        server: String,
        /// How it was read.
        by: AttributedBy,
    },
    /// Shaped like an MCP tool's name by the harness's naming, but no known
    /// server fits it and the name alone does not say which (or two fit).
    Unresolved,
    /// Nothing says it is an MCP tool's (a harness's own tool, say).
    NotMcp,
}

/// What the servers a session is known to have give [`attribute`]: their
/// names, and where a listing was seen, the way back from a model-side name
/// to the listed tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Known {
    /// Every known server's name (the session's rows, today's
    /// configuration).
    pub servers: Vec<String>,
    /// The model-side names of the tools the known listings hold.
    pub listed: ModelNames,
}

impl Known {
    /// Known servers `servers`, and of some of them their listed tools.
    pub fn new(rules: &Rules, servers: Vec<String>, listings: &[(&str, &[Listed])]) -> Self {
        Known {
            servers,
            listed: ModelNames::new(rules, listings),
        }
    }
}

/// Reads one model-side name: through a known listing first (the tool as
/// listed), then against the known servers' spelled prefixes (exactly one
/// must fit), then by the harness's naming alone where it is unambiguous
/// ([`Shape::Split`]). A name shaped like an MCP tool's that none of these
/// place is [`Attribution::Unresolved`]: never a guess. So is a name of a
/// harness whose names are unmarked (Copilot's `SERVER-TOOL`, OpenCode's
/// `SERVER_TOOL`) that two known servers' prefixes fit: it is an MCP
/// tool's, of one of them; the session's listing, once its records or
/// telemetry show one, says which.
pub fn attribute(rules: &Rules, model_name: &str, known: &Known) -> Attribution {
    if let Some((server, tool)) = known.listed.resolve(model_name) {
        return Attribution::Mcp {
            server: server.to_owned(),
            tool: tool.to_owned(),
            by: AttributedBy::Listing,
        };
    }
    let fit = servers_fitting(rules, model_name, &known.servers);
    if let Fit::One(server, tool) = fit {
        return Attribution::Mcp {
            server,
            tool,
            by: AttributedBy::KnownServer,
        };
    }
    // Spelled as a known server's tool, but as two servers' (Copilot's
    // `a-b-t` with servers `a` and `a-b`, OpenCode's `a_b_t`): MCP, its
    // server not resolved. A harness whose naming says the server itself
    // reads it below.
    if fit == Fit::Several && !matches!(rules.shape, Shape::Split { .. }) {
        return Attribution::Unresolved;
    }
    match rules.shape {
        Shape::Split { prefix, separator } => {
            let Some(rest) = model_name.strip_prefix(prefix) else {
                return Attribution::NotMcp;
            };
            match rest.split_once(separator) {
                Some((server, tool)) if !server.is_empty() && !tool.is_empty() => {
                    if rules.on_collision == OnCollision::Suffixed && hash_suffixed(tool).is_some()
                    {
                        // Which tool stands behind a hash is not spelled.
                        return Attribution::ServerOnly {
                            server: server.to_owned(),
                            by: AttributedBy::Naming,
                        };
                    }
                    Attribution::Mcp {
                        server: server.to_owned(),
                        tool: tool.to_owned(),
                        by: AttributedBy::Naming,
                    }
                }
                // `mcp__SERVER` alone names a server, not a tool.
                _ => Attribution::NotMcp,
            }
        }
        Shape::Prefixed { prefix }
            if model_name.len() > prefix.len() && model_name.starts_with(prefix) =>
        {
            Attribution::Unresolved
        }
        _ => Attribution::NotMcp,
    }
}

/// The evidence a prediction gives `server`'s row: a `tool_withheld` for
/// each tool the rules keep from the model, its provenance
/// `documented_rule` (a prediction; it never says a tool was offered).
pub fn withheld_evidence(server: &str, predictions: &[Prediction], at: Timestamp) -> Vec<Evidence> {
    predictions
        .iter()
        .filter(|p| !p.offered)
        .map(|p| {
            let mut ev = Evidence::new(EvidenceKind::ToolWithheld, at)
                .server(server)
                .tool(p.tool.as_str())
                .provenance(Provenance::DocumentedRule);
            ev.reason_code = p.reason_code.clone();
            ev
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claude_like(server: &str, tool: &str) -> String {
        let clean = |s: &str| {
            s.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect::<String>()
        };
        format!("mcp__{}__{}", clean(server), clean(tool))
    }

    fn listed(names: &[&str]) -> Vec<Listed> {
        names.iter().map(|n| Listed::new(*n, None)).collect()
    }

    #[test]
    fn collisions_keep_one_tool_by_the_harness_s_rule() {
        let last = Rules::new(claude_like, OnCollision::LastWins, "test");
        let p = predict(&last, "s", &listed(&["a.b", "echo", "a_b"]));
        assert_eq!(p[0].model_name, "mcp__s__a_b");
        assert_eq!(p[0].reason_code, Some(ReasonCode::NameCollision));
        assert!(p[1].offered && p[2].offered);
        let first = Rules::new(claude_like, OnCollision::FirstWins, "test");
        let p = predict(&first, "s", &listed(&["a.b", "echo", "a_b"]));
        assert!(p[0].offered);
        assert_eq!(p[2].reason_code, Some(ReasonCode::NameCollision));
        let suffixed = Rules::new(claude_like, OnCollision::Suffixed, "test");
        let p = predict(&suffixed, "s", &listed(&["a.b", "echo", "a_b"]));
        assert!(p.iter().all(|p| p.offered));
        assert!(p[0].suffixed && !p[1].suffixed && p[2].suffixed);
    }

    #[test]
    fn model_side_names_resolve_back_to_their_tools() {
        let rules = Rules::new(claude_like, OnCollision::FirstWins, "test");
        let tools = listed(&["a.b", "a_b", "echo"]);
        let names = ModelNames::new(&rules, &[("srv", &tools)]);
        assert_eq!(names.resolve("mcp__srv__a_b"), Some(("srv", "a.b")));
        assert_eq!(names.resolve("mcp__srv__echo"), Some(("srv", "echo")));
        assert_eq!(names.resolve("Bash"), None);
        // Two tools behind one hashed prefix stay unresolved: never a guess.
        let suffixed = Rules::new(claude_like, OnCollision::Suffixed, "test");
        let names = ModelNames::new(&suffixed, &[("srv", &tools)]);
        assert_eq!(names.resolve("mcp__srv__a_b_02e48d1cd3a7"), None);
        assert_eq!(names.resolve("mcp__srv__echo"), Some(("srv", "echo")));
    }

    #[test]
    fn an_entry_that_loads_up_front_is_never_deferred() {
        let rules = Rules::new(claude_like, OnCollision::FirstWins, "test")
            .with_deferral(Some(true))
            .with_up_front("alwaysLoad=true");
        let tools = listed(&["echo"]);
        assert!(predict(&rules, "s", &tools)[0].deferred);
        let up = rules.for_entry(&["alwaysLoad=true".to_owned()]);
        let p = predict(&up, "s", &tools);
        assert!(p[0].offered && !p[0].deferred, "{p:?}");
        // Any other setting, or none, leaves the release's default.
        for other in [vec![], vec!["alwaysLoad=false".to_owned()]] {
            assert!(predict(&rules.for_entry(&other), "s", &tools)[0].deferred);
        }
        // An unknown release's deferral becomes known for such an entry.
        let unknown = rules.with_deferral(None);
        assert_eq!(
            unknown.for_entry(&["alwaysLoad=true".to_owned()]).defers,
            Some(false)
        );
        // A harness without the setting ignores it.
        let plain =
            Rules::new(claude_like, OnCollision::FirstWins, "test").with_deferral(Some(true));
        assert!(
            predict(
                &plain.for_entry(&["alwaysLoad=true".to_owned()]),
                "s",
                &tools
            )[0]
            .deferred
        );
    }

    /// A toy tool search: on unless `SEARCH` is `off`, unknown where
    /// `SEARCH` is.
    fn toy_search(context: &Context) -> Deferral {
        match context.var("SEARCH") {
            Var::Unknown => Deferral {
                defers: None,
                because: "depends on SEARCH",
            },
            Var::Set("off") => Deferral {
                defers: Some(false),
                because: "SEARCH=off",
            },
            _ => Deferral {
                defers: Some(true),
                because: "on",
            },
        }
    }

    #[test]
    fn a_tool_search_that_depends_on_the_environment_is_unknown_until_known() {
        let rules = Rules::new(claude_like, OnCollision::FirstWins, "test")
            .with_tool_search(toy_search)
            .with_up_front("alwaysLoad=true");
        let tools = listed(&["echo"]);
        // Nothing known: unknown, and the offered tool says on what.
        assert_eq!(rules.defers, None);
        let p = predict(&rules, "s", &tools);
        assert!(p[0].offered && !p[0].deferred, "{p:?}");
        assert!(
            p[0].rule.as_deref().is_some_and(|r| r.contains("SEARCH")),
            "{p:?}"
        );
        // The environment a run starts the harness with decides it.
        let on = rules.in_context(&Context::of_env([("HOME", "/h")]));
        assert_eq!(on.defers, Some(true));
        assert!(predict(&on, "s", &tools)[0].deferred);
        assert_eq!(predict(&on, "s", &tools)[0].rule, None);
        let off = rules.in_context(&Context::of_env([("SEARCH", "off")]));
        assert_eq!(off.defers, Some(false));
        // A scanner's reading, carried in the entry's settings.
        let read = rules.for_entry(&["env:SEARCH=off".to_owned()]);
        assert_eq!(read.defers, Some(false));
        assert_eq!(rules.for_entry(&[]).defers, None);
        // `alwaysLoad` beats an unknown search.
        let up = rules.for_entry(&["alwaysLoad=true".to_owned()]);
        assert_eq!(up.defers, Some(false));
        assert_eq!(predict(&up, "s", &tools)[0].rule, None);
        // Rules without a tool search keep their deferral in any context.
        let fixed = Rules::new(claude_like, OnCollision::FirstWins, "test")
            .with_deferral(Some(true))
            .in_context(&Context::of_env([("SEARCH", "off")]));
        assert_eq!(fixed.defers, Some(true));
    }

    #[test]
    fn cut_names_that_meet_are_numbered_and_equal_names_keep_the_first() {
        let rules = Rules::new(claude_like, OnCollision::Numbered, "test").with_cut(12);
        let p = predict(
            &rules,
            "s",
            &listed(&["a.b", "a_b", "long_name_1", "long_name_2"]),
        );
        assert!(p[0].offered);
        assert_eq!(p[1].reason_code, Some(ReasonCode::NameCollision));
        assert_eq!(p[2].model_name, "mcp__s__long");
        assert_eq!(p[3].model_name, "mcp__s__lon2");
        assert!(p[3].offered);
    }

    #[test]
    fn a_dropped_schema_never_collides_and_long_names_are_refused() {
        let rules = Rules::new(claude_like, OnCollision::LastWins, "test")
            .with_dropped_roots(&["oneOf"])
            .with_name_limit(Limit {
                max: 12,
                source: "doc",
            });
        let schema = serde_json::json!({"type": "object", "oneOf": []});
        let tools = vec![
            Listed::new("a.b", None),
            Listed::new("a_b", Some(&schema)),
            Listed::new("much_too_long", None),
        ];
        let p = predict(&rules, "s", &tools);
        assert!(p[0].offered, "{p:?}");
        assert_eq!(p[1].reason_code, Some(ReasonCode::SchemaUnsupported));
        assert_eq!(p[2].reason_code, Some(ReasonCode::NameTooLong));
        let evidence = withheld_evidence("s", &p, Timestamp(1));
        assert_eq!(evidence.len(), 2);
        assert!(
            evidence
                .iter()
                .all(|e| e.provenance == Provenance::DocumentedRule)
        );
    }

    /// Every character outside `[a-zA-Z0-9_-]` replaced by `with` (the
    /// plugins spell names with `tether_sdk::names`, which core's tests
    /// cannot reach; these names are ASCII).
    fn replace_outside(name: &str, with: char) -> String {
        name.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    with
                }
            })
            .collect()
    }

    /// Copilot CLI 1.0.102's composition (`plugins/passthrough-copilot`).
    fn copilot_like(server: &str, tool: &str) -> String {
        format!(
            "{}-{}",
            replace_outside(server, '-'),
            replace_outside(tool, '-')
        )
    }

    /// OpenCode 1.18.33's composition (`plugins/passthrough-opencode`).
    fn opencode_like(server: &str, tool: &str) -> String {
        format!(
            "{}_{}",
            replace_outside(server, '_'),
            replace_outside(tool, '_')
        )
    }

    fn gemini_like(server: &str, tool: &str) -> String {
        format!("mcp_{server}_{tool}")
    }

    #[test]
    fn a_name_is_attributed_by_the_harness_s_naming_only_where_it_is_unambiguous() {
        let split =
            Rules::new(claude_like, OnCollision::FirstWins, "test").with_shape(Shape::Split {
                prefix: "mcp__",
                separator: "__",
            });
        let none = Known::default();
        // No server known: the naming alone says which.
        assert_eq!(
            attribute(&split, "mcp__time__get_current_time", &none),
            Attribution::Mcp {
                server: "time".into(),
                tool: "get_current_time".into(),
                by: AttributedBy::Naming
            }
        );
        assert_eq!(attribute(&split, "Bash", &none), Attribution::NotMcp);
        // `mcp__SERVER` alone names a server, not a tool.
        assert_eq!(attribute(&split, "mcp__time", &none), Attribution::NotMcp);
        // A known server that holds the separator is read whole, as known.
        let known = Known::new(&split, vec!["a__b".into()], &[]);
        assert_eq!(
            attribute(&split, "mcp__a__b__t", &known),
            Attribution::Mcp {
                server: "a__b".into(),
                tool: "t".into(),
                by: AttributedBy::KnownServer
            }
        );
        // A listing names the tool as listed, its server as configured.
        let tools = listed(&["dotted.name", "echo"]);
        let known = Known::new(&split, vec!["my.srv".into()], &[("my.srv", &tools)]);
        assert_eq!(
            attribute(&split, "mcp__my_srv__dotted_name", &known),
            Attribution::Mcp {
                server: "my.srv".into(),
                tool: "dotted.name".into(),
                by: AttributedBy::Listing
            }
        );
        // A prefix that says MCP but not where the server ends: unresolved
        // until a known server fits, never guessed.
        let prefixed = Rules::new(gemini_like, OnCollision::LastWins, "test")
            .with_shape(Shape::Prefixed { prefix: "mcp_" });
        assert_eq!(
            attribute(&prefixed, "mcp_my_server_get_time", &none),
            Attribution::Unresolved
        );
        assert_eq!(
            attribute(&prefixed, "read_file", &none),
            Attribution::NotMcp
        );
        let known = Known::new(&prefixed, vec!["my_server".into()], &[]);
        assert_eq!(
            attribute(&prefixed, "mcp_my_server_get_time", &known),
            Attribution::Mcp {
                server: "my_server".into(),
                tool: "get_time".into(),
                by: AttributedBy::KnownServer
            }
        );
        // Two known servers that both fit: unresolved.
        let known = Known::new(&prefixed, vec!["my".into(), "my_server".into()], &[]);
        assert_eq!(
            attribute(&prefixed, "mcp_my_server_get_time", &known),
            Attribution::Unresolved
        );
        // Unmarked names are MCP only against a known server.
        let unmarked = Rules::new(gemini_like, OnCollision::LastWins, "test");
        assert_eq!(attribute(&unmarked, "mcp_x_y", &none), Attribution::NotMcp);
        // Copilot's and OpenCode's unmarked names, as their shipped code
        // composes them (`SERVER-TOOL`, `SERVER_TOOL`, every character
        // outside [a-zA-Z0-9_-] the separator), cut to 64 and numbered
        // for Copilot, the last of a collision kept for OpenCode.
        for (rules, sep) in [
            (
                Rules::new(copilot_like, OnCollision::Numbered, "test").with_cut(64),
                "-",
            ),
            (
                Rules::new(opencode_like, OnCollision::LastWins, "test"),
                "_",
            ),
        ] {
            let name = format!("time{sep}get_current_time");
            // Nothing known: a built-in tool looks the same, so not MCP.
            assert_eq!(attribute(&rules, &name, &none), Attribution::NotMcp);
            assert_eq!(attribute(&rules, "view", &none), Attribution::NotMcp);
            // Today's configuration or the session's rows name the server.
            let known = Known::new(&rules, vec!["time".into(), "memory".into()], &[]);
            assert_eq!(
                attribute(&rules, &name, &known),
                Attribution::Mcp {
                    server: "time".into(),
                    tool: "get_current_time".into(),
                    by: AttributedBy::KnownServer
                }
            );
            assert_eq!(attribute(&rules, "view", &known), Attribution::NotMcp);
            // A server whose name the separator ends another's: two fit,
            // so MCP-shaped, server not resolved, never guessed.
            let my = format!("my{sep}srv");
            let both = Known::new(&rules, vec!["my".into(), my.clone()], &[]);
            let tool_name = format!("my{sep}srv{sep}get");
            assert_eq!(
                attribute(&rules, &tool_name, &both),
                Attribution::Unresolved
            );
            // The session's listing (its records or telemetry) says which.
            let tools = listed(&["get"]);
            let listed_known = Known::new(
                &rules,
                vec!["my".into(), my.clone()],
                &[(my.as_str(), &tools)],
            );
            assert_eq!(
                attribute(&rules, &tool_name, &listed_known),
                Attribution::Mcp {
                    server: my.clone(),
                    tool: "get".into(),
                    by: AttributedBy::Listing
                }
            );
            // A dotted server's name, spelled as the harness spells it.
            let dotted = Known::new(&rules, vec!["my.srv".into()], &[]);
            assert_eq!(
                attribute(&rules, &format!("my{sep}srv{sep}get"), &dotted),
                Attribution::Mcp {
                    server: "my.srv".into(),
                    tool: "get".into(),
                    by: AttributedBy::KnownServer
                }
            );
        }
        // A hash a harness appended hides the tool, not the server.
        let suffixed =
            Rules::new(claude_like, OnCollision::Suffixed, "test").with_shape(Shape::Split {
                prefix: "mcp__",
                separator: "/",
            });
        assert_eq!(
            attribute(&suffixed, "mcp__brk/a_b_02e48d1cd3a7", &none),
            Attribution::ServerOnly {
                server: "brk".into(),
                by: AttributedBy::Naming
            }
        );
    }
}
